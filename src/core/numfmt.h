/* printf's "%.*g" of a double without printf, and a decimal literal's double without strtod
 * (src/core/numfmt.c). */
#ifndef MBLIN_CORE_NUMFMT_H
#define MBLIN_CORE_NUMFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The text printf("%.*g", prec, x) gives, the same characters, into buf (at least
 * CORE_NUMFMT_MAX bytes, NUL-terminated): its length, or -1 when x is not finite, prec is not
 * 1..17 or the exact arithmetic would need more than 128 bits (very large or very small |x|):
 * the caller then prints with printf. Digits correctly rounded from x's exact binary value, ties
 * to even, as glibc's printf rounds in the default rounding mode. */
#define CORE_NUMFMT_MAX 32
int core_fmt_g(char *buf, double x, int prec);

/* printf("%d", v)'s text into buf (at least 12 bytes, NUL-terminated); returns its length. */
size_t core_fmt_int(char *buf, int v);

/* fprintf(f, "%.*g", prec, x) through core_fmt_g where it applies. */
void core_put_g(FILE *f, double x, int prec);

/* The double nearest d 10^e, ties to even (strtod's value in the default rounding mode), by exact
 * 128-bit arithmetic: 0, or -1 when it would not fit (e above 19 or below -20): the caller then
 * converts with strtod. */
int core_decimal_value(uint64_t d, int e, double *out);

#endif
