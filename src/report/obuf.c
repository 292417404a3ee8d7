/* The report's output block: texts and numbers gathered, one fwrite a block (report/obuf.h). */
#include <math.h>

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

void report_ob_g(obuf *o, double x, int width, int prec)
{
    char t[64];
    if (x == 0.0) x = 0.0; /* a zero prints "0", never printf's "-0" (rounding's sign, no information) */
    if (!width && sizeof o->b - o->n >= CORE_NUMFMT_MAX) { /* unpadded: into the block itself */
        int n = core_fmt_g(o->b + o->n, x, prec);
        if (n >= 0) {
            o->n += (size_t)n;
            return;
        }
    }
    int len = core_fmt_g(t, x, prec);
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

