/* The one JSON writer: strings escaped, numbers to 17 digits or null (include/mblin/json.h). */
#include <math.h>

#include "core/json_plain.h"
#include "core/numfmt.h"
#include "mblin/json.h"

size_t core_json_plain_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p >= 0x20 && *p != '"' && *p != '\\') p++;
    return (size_t)(p - (const unsigned char *)s);
}

void mbl_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        size_t run = core_json_plain_len((const char *)p); /* the characters as they are: one fwrite */
        if (run) fwrite(p, 1, run, f), p += run;
        if (!*p) break;
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else fprintf(f, "\\u%04x", *p); /* the other control characters */
    }
    fputc('"', f);
}

void mbl_json_number(FILE *f, double x, int digits, int zero_unsigned)
{
    if (!isfinite(x)) fputs("null", f);
    else if (zero_unsigned && x == 0.0) fputs("0", f);
    else core_put_g(f, x, digits); /* printf's "%.*g", without its multi-precision conversion */
}
