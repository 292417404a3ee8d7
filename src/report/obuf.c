/* The report's output block: texts and numbers gathered, one fwrite a block (report/obuf.h). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "core/numfmt.h"
#include "report/obuf.h"

void report_ob_init(obuf *o, FILE *f)
{
    o->f = f;
    o->n = 0;
}

void report_ob_flush(obuf *o)
{
    if (o->n) fwrite(o->b, 1, o->n, o->f);
    o->n = 0;
}

void report_ob_put_flushing(obuf *o, const char *s, size_t len)
{
    report_ob_flush(o);
    if (len > sizeof o->b) fwrite(s, 1, len, o->f);
    else memcpy(o->b, s, len), o->n = len;
}

void report_ob_pad(obuf *o, int width, size_t len)
{
    for (; len < (size_t)width; len++) report_ob_put(o, " ", 1);
}

/* The texts of the values formatted last, by their bits and precision (a direct-mapped table of
 * FMT_MEMO entries, per thread): a report's matrices repeat their values (the N = 10^4 four-bar's
 * JSON formats 100,014 nonzero numbers, 20,065 of them distinct: its 60,009 mode-shape and q_S
 * entries take 54 values), and core_fmt_g costs about 350 instructions a 17-digit number. */
#define FMT_MEMO 256
typedef struct fmt_memo {
    uint64_t bits;
    int prec; /* 0: empty */
    int len;
    char text[CORE_NUMFMT_MAX];
} fmt_memo;
static _Thread_local fmt_memo memo[FMT_MEMO];

/* core_fmt_g(d, x, prec), or printf's "%.*g" beyond its range (d: room for CORE_NUMFMT_MAX
 * characters), through the memo */
static int fmt_g(char *d, double x, int prec)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    fmt_memo *e = &memo[((bits * 0x9E3779B97F4A7C15ull) >> 56) % FMT_MEMO];
    if (e->prec == prec && e->bits == bits) {
        memcpy(d, e->text, (size_t)e->len + 1);
        return e->len;
    }
    int n = core_fmt_g(d, x, prec);
    /* beyond core_fmt_g's exact range (at 17 digits |x| beyond about 1e38 or below about 1e-63;
     * the rounding noise of a point's zero coordinates, 3,603 of the N = 2000 mechanism's JSON
     * numbers, is within it since session 47), printf's text, remembered too */
    if (n < 0 && isfinite(x) && prec >= 1 && prec <= 17) {
        n = snprintf(d, CORE_NUMFMT_MAX, "%.*g", prec, x);
        if (n >= CORE_NUMFMT_MAX) n = -1; /* cut short (never at 17 digits): the caller's own path */
    }
    if (n >= 0 && n < CORE_NUMFMT_MAX) {
        e->bits = bits, e->prec = prec, e->len = n;
        memcpy(e->text, d, (size_t)n + 1);
    }
    return n;
}

void report_ob_g(obuf *o, double x, int width, int prec)
{
    char t[64];
    if (x == 0.0) x = 0.0; /* a zero prints "0", never printf's "-0" (rounding's sign, no information) */
    if (!width && sizeof o->b - o->n >= CORE_NUMFMT_MAX) { /* unpadded: into the block itself */
        int n = fmt_g(o->b + o->n, x, prec);
        if (n >= 0) {
            o->n += (size_t)n;
            return;
        }
    }
    int len = fmt_g(t, x, prec);
    if (len < 0) len = snprintf(t, sizeof t, "%.*g", prec, x);
    if (len < 0) len = 0;
    report_ob_pad(o, width, (size_t)len);
    report_ob_put(o, t, (size_t)len);
}

void report_ob_json(obuf *o, double x)
{
    if (!isfinite(x)) report_ob_put(o, "null", 4);
    else if (x == 0.0) report_ob_put(o, "0", 1);
    else report_ob_g(o, x, 0, 17);
}

