/* The report's output block (src/report/obuf.c). */
#ifndef MBLIN_REPORT_OBUF_H
#define MBLIN_REPORT_OBUF_H

#include <stdio.h>
#include <string.h>

/* Output gathered in a block, written by one fwrite each time it fills (three stdio calls a number
 * before: the N = 1000 four-bar's JSON writes 10^4 of them): the JSON lists and the text report's
 * number lines. Numbers by core_fmt_g (printf's "%.*g", the same text, without its
 * multi-precision conversion). */
typedef struct obuf {
    FILE *f;
    size_t n;
    char b[4096];
} obuf;

/* (no initializer: it would clear the 4 KiB block at every line) */
void report_ob_init(obuf *o, FILE *f);
void report_ob_flush(obuf *o);
/* report_ob_put where the block is full */
void report_ob_put_flushing(obuf *o, const char *s, size_t len);
/* spaces up to width for a text of len characters */
void report_ob_pad(obuf *o, int width, size_t len);
/* "%*.*g" (right-aligned in width; 0: no padding) */
void report_ob_g(obuf *o, double x, int width, int prec);
/* mbl_json_number(f, x, 17, 1)'s text */
void report_ob_json(obuf *o, double x);

/* (inline: most texts are a separator or a bracket of constant length, a store or two once
 * inlined; the call and memcpy's were 37 instructions a text, 18 M at N = 10^4) */
static inline void report_ob_put(obuf *o, const char *s, size_t len)
{
    if (o->n + len > sizeof o->b) {
        report_ob_put_flushing(o, s, len);
        return;
    }
    memcpy(o->b + o->n, s, len);
    o->n += len;
}

#endif
