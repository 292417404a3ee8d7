/* SVG plots of sweeps and frequency responses (plain text, no library): Campbell diagram, root
 * locus, damping ratio vs parameter, Bode plot. A plot is a frame with "nice" ticks (1, 2, 5 x
 * 10^k; decades on a logarithmic axis), polylines broken at non-finite values, markers and a
 * legend. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/sweep.h"

#define TWO_PI 6.283185307179586476925286766559
#define W 760.0
#define H 500.0

static const char *palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NPAL 10

typedef struct frame {
    double x0, y0, w, h;       /* pixel box */
    double xmin, xmax, ymin, ymax;
    int xlog;
} frame;

static double px(const frame *fr, double x)
{
    double t = fr->xlog ? (log10(x) - log10(fr->xmin)) / (log10(fr->xmax) - log10(fr->xmin))
                        : (x - fr->xmin) / (fr->xmax - fr->xmin);
    return fr->x0 + t * fr->w;
}

static double py(const frame *fr, double y) { return fr->y0 + fr->h - (y - fr->ymin) / (fr->ymax - fr->ymin) * fr->h; }

static int inside(const frame *fr, double x, double y)
{
    return isfinite(x) && isfinite(y) && (!fr->xlog || x > 0) && x >= fr->xmin && x <= fr->xmax && y >= fr->ymin &&
           y <= fr->ymax;
}

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

static void svg_begin(FILE *f, double w, double h, const char *title)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", w, h, w, h);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.1f\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">", w / 2);
    esc(f, title);
    fputs("</text>\n", f);
}

/* A range with some room, never empty. */
static void pad_range(double *lo, double *hi)
{
    if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
    if (*hi <= *lo) {
        double c = *lo, d = fabs(c) > 0 ? 0.1 * fabs(c) : 1;
        *lo = c - d, *hi = c + d;
    } else {
        double d = 0.04 * (*hi - *lo);
        *lo -= d, *hi += d;
    }
}

static double nice_step(double range, int target)
{
    double raw = range / target, p = pow(10.0, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void axes(FILE *f, const frame *fr, const char *xlabel, const char *ylabel)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", fr->x0,
            fr->y0, fr->w, fr->h);
    if (fr->xlog) {
        for (double e = floor(log10(fr->xmin)); e <= ceil(log10(fr->xmax)); e++) {
            double x = pow(10.0, e);
            if (x < fr->xmin || x > fr->xmax) continue;
            double X = px(fr, x);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", X, fr->y0, X,
                    fr->y0 + fr->h);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X, fr->y0 + fr->h + 15, x);
        }
    } else {
        double s = nice_step(fr->xmax - fr->xmin, 8);
        for (double x = ceil(fr->xmin / s) * s; x <= fr->xmax + 1e-9 * s; x += s) {
            double X = px(fr, x), xv = fabs(x) < 1e-9 * s ? 0 : x;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", X, fr->y0, X,
                    fr->y0 + fr->h);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X, fr->y0 + fr->h + 15, xv);
        }
    }
    double s = nice_step(fr->ymax - fr->ymin, 6);
    for (double y = ceil(fr->ymin / s) * s; y <= fr->ymax + 1e-9 * s; y += s) {
        double Y = py(fr, y), yv = fabs(y) < 1e-9 * s ? 0 : y;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", fr->x0, Y, fr->x0 + fr->w, Y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", fr->x0 - 5, Y + 4, yv);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", fr->x0 + fr->w / 2, fr->y0 + fr->h + 34);
    esc(f, xlabel);
    fputs("</text>\n", f);
    fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">", fr->x0 - 48,
            fr->y0 + fr->h / 2);
    esc(f, ylabel);
    fputs("</text>\n", f);
}

/* A polyline through (x[i*sx], y[i*sy]), broken where a point is missing or outside. */
static void line(FILE *f, const frame *fr, int n, const double *x, size_t sx, const double *y, size_t sy,
                 const char *color, const char *dash, double width)
{
    int open = 0;
    for (int i = 0; i < n; i++) {
        double xv = x[(size_t)i * sx], yv = y[(size_t)i * sy];
        if (!inside(fr, xv, yv)) {
            if (open) fputs("\"/>\n", f);
            open = 0;
            continue;
        }
        if (!open)
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s points=\"", color, width,
                    dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
        fprintf(f, "%s%.2f,%.2f", open ? " " : "", px(fr, xv), py(fr, yv));
        open = 1;
    }
    if (open) fputs("\"/>\n", f);
}

static void legend(FILE *f, const frame *fr, int k, const char *color, const char *text, const char *dash)
{
    double x = fr->x0 + fr->w + 10, y = fr->y0 + 10 + 16 * k;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n", x, y,
            x + 18, y, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 22, y + 4);
    esc(f, text);
    fputs("</text>\n", f);
}

/* Is branch b oscillatory at point p: Im above the zero threshold of the sweep (a rigid-body or
 * cyclic double zero split by rounding is not a mode to draw)? */
static int osc(const mbl_sweep *sw, int p, int b)
{
    return sw->im[(size_t)p * sw->nmodes + b] > mbl_sweep_zero_level(sw);
}

/* The first row of the grid: points 0 .. count[0]-1. */
static double *row_values(const mbl_sweep *sw, int which, double scale)
{
    int n = sw->count[0], nm = sw->nmodes;
    double *v = mbl_alloc_array((size_t)n * (size_t)(nm ? nm : 1) + 1, sizeof *v);
    if (!v) return NULL;
    for (int p = 0; p < n; p++)
        for (int b = 0; b < nm; b++) {
            size_t o = (size_t)p * nm + b;
            double x = which == 0 ? sw->im[o] / TWO_PI : which == 1 ? sw->damping[o] : NAN;
            v[(size_t)b * n + p] = osc(sw, p, b) ? x * scale : NAN;
        }
    return v;
}

static double *axis_x(const mbl_sweep *sw)
{
    int n = sw->count[0];
    double *x = mbl_alloc_array((size_t)n + 1, sizeof *x);
    if (x)
        for (int p = 0; p < n; p++) x[p] = sw->value[(size_t)p * sw->naxes];
    return x;
}

int mbl_sweep_svg_campbell(FILE *f, const mbl_sweep *sw, const double *orders, int norders, double hz_per_unit,
                           double fmax, const mbl_critical *crit, int ncrit)
{
    if (!f || !sw) return MBL_EARG;
    int n = sw->count[0], nm = sw->nmodes;
    double *x = axis_x(sw), *y = row_values(sw, 0, 1.0);
    if (!x || !y) {
        mbl_free(x), mbl_free(y);
        return MBL_ENOMEM;
    }
    double ymax = 0;
    for (size_t i = 0; i < (size_t)n * nm; i++)
        if (isfinite(y[i]) && y[i] > ymax) ymax = y[i];
    if (!(ymax > 0)) ymax = 1;
    if (fmax > 0) ymax = fmax / 1.08;
    frame fr = {80, 40, W - 240, H - 100, x[0], x[n - 1], 0, 1.08 * ymax, 0};
    char title[600];
    snprintf(title, sizeof title, "Campbell diagram: %s", sw->model_name);
    svg_begin(f, W, H, title);
    char xl[200];
    snprintf(xl, sizeof xl, "%s", sw->axis_name[0]);
    axes(f, &fr, xl, "frequency |Im s| / 2 pi [Hz]");
    int k = 0;
    for (int o = 0; o < norders && hz_per_unit > 0; o++) {
        double lx[2] = {fr.xmin, fr.xmax}, ly[2] = {orders[o] * fr.xmin * hz_per_unit, orders[o] * fr.xmax * hz_per_unit};
        /* clip the line to the frame's top */
        if (ly[1] > fr.ymax) lx[1] = fr.ymax / (orders[o] * hz_per_unit), ly[1] = fr.ymax;
        if (ly[0] < fr.ymin) lx[0] = fr.ymin / (orders[o] * hz_per_unit), ly[0] = fr.ymin;
        line(f, &fr, 2, lx, 1, ly, 1, "#444", "6,4", 1.2);
        char lab[64];
        snprintf(lab, sizeof lab, "%gx", orders[o]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444\">%s</text>\n", px(&fr, lx[1]) - 22, py(&fr, ly[1]) + 14, lab);
        legend(f, &fr, k++, "#444", lab, "6,4");
    }
    for (int b = 0; b < nm; b++) {
        int any = 0; /* a branch above --fmax all along is neither drawn nor listed */
        for (int p = 0; p < n; p++) any |= inside(&fr, x[p], y[(size_t)b * n + p]);
        if (!any) continue;
        line(f, &fr, n, x, 1, y + (size_t)b * n, 1, palette[b % NPAL], NULL, 2);
        char lab[64];
        snprintf(lab, sizeof lab, "branch %d", b + 1);
        if (k < 26) legend(f, &fr, k++, palette[b % NPAL], lab, NULL);
    }
    int drawn = 0;
    for (int i = 0; i < ncrit && crit; i++) {
        if (!inside(&fr, crit[i].speed, crit[i].freq_hz)) continue;
        drawn++;
        double X = px(&fr, crit[i].speed), Y = py(&fr, crit[i].freq_hz);
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"5\" fill=\"none\" stroke=\"red\" stroke-width=\"2\"/>\n", X, Y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"red\" font-size=\"11\">%.5g</text>\n", X + 6, Y - 6, crit[i].speed);
    }
    if (drawn) legend(f, &fr, k++, "red", "critical speed", NULL);
    fputs("</svg>\n", f);
    mbl_free(x), mbl_free(y);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sweep_svg_damping(FILE *f, const mbl_sweep *sw)
{
    if (!f || !sw) return MBL_EARG;
    int n = sw->count[0], nm = sw->nmodes;
    double *x = axis_x(sw), *y = row_values(sw, 1, 1.0);
    if (!x || !y) {
        mbl_free(x), mbl_free(y);
        return MBL_ENOMEM;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < (size_t)n * nm; i++)
        if (isfinite(y[i])) lo = fmin(lo, y[i]), hi = fmax(hi, y[i]);
    if (!isfinite(lo)) lo = 0, hi = 1;
    lo = fmin(lo, 0), hi = fmax(hi, 0);
    pad_range(&lo, &hi);
    frame fr = {80, 40, W - 240, H - 100, x[0], x[n - 1], lo, hi, 0};
    char title[600];
    snprintf(title, sizeof title, "Damping ratio: %s", sw->model_name);
    svg_begin(f, W, H, title);
    axes(f, &fr, sw->axis_name[0], "damping ratio -Re s / |s| (oscillatory modes)");
    double zx[2] = {fr.xmin, fr.xmax}, zy[2] = {0, 0};
    line(f, &fr, 2, zx, 1, zy, 1, "black", NULL, 1);
    int k = 0;
    for (int b = 0; b < nm; b++) {
        int any = 0; /* a branch above --fmax all along is neither drawn nor listed */
        for (int p = 0; p < n; p++) any |= inside(&fr, x[p], y[(size_t)b * n + p]);
        if (!any) continue;
        line(f, &fr, n, x, 1, y + (size_t)b * n, 1, palette[b % NPAL], NULL, 2);
        char lab[64];
        snprintf(lab, sizeof lab, "branch %d", b + 1);
        if (k < 26) legend(f, &fr, k++, palette[b % NPAL], lab, NULL);
    }
    fputs("</svg>\n", f);
    mbl_free(x), mbl_free(y);
    return ferror(f) ? MBL_EIO : 0;
}

/* the largest real part over the branches at point p (NAN when the point failed) */
static double max_re(const mbl_sweep *sw, int p)
{
    double m = -INFINITY;
    if (!sw->ok[p]) return NAN;
    for (int b = 0; b < sw->nmodes; b++) m = fmax(m, sw->re[(size_t)p * sw->nmodes + b]);
    return m;
}

/* one axis: the largest real part vs the parameter, unstable stretches marked */
static void stability_line(FILE *f, const mbl_sweep *sw, double tol)
{
    int n = sw->count[0];
    double lo = INFINITY, hi = -INFINITY, *x = axis_x(sw), y[2];
    for (int p = 0; x && p < n; p++)
        if (isfinite(max_re(sw, p))) lo = fmin(lo, max_re(sw, p)), hi = fmax(hi, max_re(sw, p));
    lo = fmin(isfinite(lo) ? lo : 0, 0), hi = fmax(isfinite(hi) ? hi : 1, 0);
    pad_range(&lo, &hi);
    frame fr = {80, 40, W - 240, H - 100, x ? x[0] : 0, x ? x[n - 1] : 1, lo, hi, 0};
    axes(f, &fr, sw->axis_name[0], "largest Re s (growth rate)");
    for (int p = 0; x && p < n; p++) {
        double v = max_re(sw, p), X0 = px(&fr, p ? 0.5 * (x[p - 1] + x[p]) : x[0]), X1 = px(&fr, p < n - 1 ? 0.5 * (x[p] + x[p + 1]) : x[n - 1]);
        if (v > tol)
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4c7c3\"/>\n", X0, fr.y0, X1 - X0, fr.h);
    }
    y[0] = y[1] = 0;
    double zx[2] = {fr.xmin, fr.xmax};
    line(f, &fr, 2, zx, 1, y, 1, "black", NULL, 1);
    double *v = mbl_alloc_array((size_t)n + 1, sizeof *v);
    for (int p = 0; v && p < n; p++) v[p] = max_re(sw, p);
    if (v && x) line(f, &fr, n, x, 1, v, 1, palette[3], NULL, 2);
    legend(f, &fr, 0, "#f4c7c3", "unstable", NULL);
    mbl_free(v), mbl_free(x);
}

/* two axes: the grid's cells, unstable ones red (darker for faster growth), stable ones blue */
static void stability_grid(FILE *f, const mbl_sweep *sw, double tol)
{
    int n0 = sw->count[0], n1 = sw->count[1];
    const double *v0 = sw->value, *vl = sw->value + (size_t)(sw->npoints - 1) * 2;
    double x0 = v0[0], x1 = vl[0], y0 = v0[1], y1 = vl[1], dx = (x1 - x0) / (n0 - 1), dy = (y1 - y0) / (n1 - 1), big = 0;
    for (int p = 0; p < sw->npoints; p++)
        if (max_re(sw, p) > big) big = max_re(sw, p);
    frame fr = {80, 40, W - 240, H - 100, x0 - dx / 2, x1 + dx / 2, y0 - dy / 2, y1 + dy / 2, 0};
    for (int p = 0; p < sw->npoints; p++) {
        double v = max_re(sw, p), x = sw->value[(size_t)p * 2], y = sw->value[(size_t)p * 2 + 1];
        double X0 = px(&fr, x - dx / 2), X1 = px(&fr, x + dx / 2), Y0 = py(&fr, y + dy / 2), Y1 = py(&fr, y - dy / 2);
        int shade = v > tol && big > 0 ? (int)(200 - 160 * fmin(1, v / big)) : 0;
        if (!isfinite(v)) fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#bbbbbb\"/>\n", X0, Y0, X1 - X0, Y1 - Y0);
        else if (v > tol)
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(230,%d,%d)\"/>\n", X0, Y0, X1 - X0,
                    Y1 - Y0, shade, shade);
        else fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#dce9f5\"/>\n", X0, Y0, X1 - X0, Y1 - Y0);
    }
    axes(f, &fr, sw->axis_name[0], sw->axis_name[1]);
    legend(f, &fr, 0, "rgb(230,40,40)", "unstable", NULL);
    legend(f, &fr, 1, "#dce9f5", "stable", NULL);
    legend(f, &fr, 2, "#bbbbbb", "failed", NULL);
}

int mbl_sweep_svg_stability(FILE *f, const mbl_sweep *sw, double tol)
{
    if (!f || !sw || !(tol >= 0)) return MBL_EARG;
    char title[600];
    snprintf(title, sizeof title, "Stability chart: %s", sw->model_name);
    svg_begin(f, W, H, title);
    if (sw->naxes == 2) stability_grid(f, sw, tol);
    else stability_line(f, sw, tol);
    fputs("</svg>\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sweep_svg_locus(FILE *f, const mbl_sweep *sw)
{
    if (!f || !sw) return MBL_EARG;
    int n = sw->count[0], nm = sw->nmodes;
    double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
    for (int p = 0; p < n; p++)
        for (int b = 0; b < nm; b++) {
            size_t o = (size_t)p * nm + b;
            if (!isfinite(sw->re[o]) || !isfinite(sw->im[o])) continue;
            xl = fmin(xl, sw->re[o]), xh = fmax(xh, sw->re[o]), yl = fmin(yl, sw->im[o]), yh = fmax(yh, sw->im[o]);
        }
    if (!isfinite(xl)) xl = -1, xh = 1, yl = -1, yh = 1;
    xl = fmin(xl, 0), xh = fmax(xh, 0);
    pad_range(&xl, &xh);
    pad_range(&yl, &yh);
    frame fr = {80, 40, W - 240, H - 100, xl, xh, yl, yh, 0};
    char title[600];
    snprintf(title, sizeof title, "Root locus over %s: %s", sw->axis_name[0], sw->model_name);
    svg_begin(f, W, H, title);
    axes(f, &fr, "Re s [1/s]", "Im s [rad/s]");
    double ax[2] = {0, 0}, ay[2] = {fr.ymin, fr.ymax};
    line(f, &fr, 2, ax, 1, ay, 1, "black", NULL, 1);
    int k = 0;
    for (int b = 0; b < nm; b++) {
        const char *col = palette[b % NPAL];
        line(f, &fr, n, sw->re + b, (size_t)nm, sw->im + b, (size_t)nm, col, NULL, 2);
        size_t s0 = (size_t)b, s1 = (size_t)(n - 1) * nm + b;
        if (inside(&fr, sw->re[s0], sw->im[s0]))
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"white\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                    px(&fr, sw->re[s0]), py(&fr, sw->im[s0]), col);
        if (inside(&fr, sw->re[s1], sw->im[s1]))
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"7\" height=\"7\" fill=\"%s\"/>\n", px(&fr, sw->re[s1]) - 3.5,
                    py(&fr, sw->im[s1]) - 3.5, col);
        char lab[64];
        snprintf(lab, sizeof lab, "branch %d", b + 1);
        if (k < 24) legend(f, &fr, k++, col, lab, NULL);
    }
    char lab[200];
    snprintf(lab, sizeof lab, "o %s = %g", sw->axis_name[0], sw->value[0]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", fr.x0 + fr.w + 10, fr.y0 + 10 + 16 * (k + 1));
    esc(f, lab);
    fputs("</text>\n", f);
    snprintf(lab, sizeof lab, "\xe2\x96\xa0 %s = %g", sw->axis_name[0], sw->value[(size_t)(n - 1) * sw->naxes]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", fr.x0 + fr.w + 10, fr.y0 + 10 + 16 * (k + 2));
    esc(f, lab);
    fputs("</text>\n</svg>\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

/* Bode plot of np pairs overlaid (magnitude in dB above, phase below, a legend per pair when np > 1). */
static int bode_pairs(FILE *f, mbl_freqresp_result *const *r, int np, const char *title)
{
    int n = r[0]->nw;
    double *hz = mbl_alloc_array((size_t)n, sizeof *hz);
    if (!hz) return MBL_ENOMEM;
    double xl = INFINITY, xh = -INFINITY, ml = INFINITY, mh = -INFINITY, pl = INFINITY, ph = -INFINITY;
    for (int k = 0; k < n; k++) {
        hz[k] = r[0]->w[k] / TWO_PI;
        if (hz[k] > 0) xl = fmin(xl, hz[k]), xh = fmax(xh, hz[k]);
        for (int j = 0; j < np; j++) {
            if (isfinite(r[j]->mag_db[k])) ml = fmin(ml, r[j]->mag_db[k]), mh = fmax(mh, r[j]->mag_db[k]);
            if (isfinite(r[j]->phase_deg[k])) pl = fmin(pl, r[j]->phase_deg[k]), ph = fmax(ph, r[j]->phase_deg[k]);
        }
    }
    if (!isfinite(xl) || xh <= xl) xl = 0.1, xh = 10;
    pad_range(&ml, &mh);
    pad_range(&pl, &ph);
    double right = np > 1 ? 200 : 120; /* room for the legend */
    frame fm = {80, 40, W - right, (H - 130) / 2, xl, xh, ml, mh, 1};
    frame fp = {80, 40 + (H - 130) / 2 + 45, W - right, (H - 130) / 2, xl, xh, pl, ph, 1};
    char t[600];
    if (np == 1) snprintf(t, sizeof t, "Bode: %s -> %s%s%s", r[0]->input, r[0]->output, title ? ", " : "", title ? title : "");
    else snprintf(t, sizeof t, "Bode, every input to every output%s%s", title ? ": " : "", title ? title : "");
    svg_begin(f, W, H + 20, t);
    axes(f, &fm, "", "|G| [dB]");
    for (int j = 0; j < np; j++) line(f, &fm, n, hz, 1, r[j]->mag_db, 1, palette[np > 1 ? j % NPAL : 0], NULL, 2);
    axes(f, &fp, "frequency [Hz]", "phase [deg]");
    for (int j = 0; j < np; j++) line(f, &fp, n, hz, 1, r[j]->phase_deg, 1, palette[np > 1 ? j % NPAL : 3], NULL, 2);
    for (int j = 0; j < np && np > 1 && j < 24; j++) {
        char lab[2 * MBL_SWEEP_NAME_MAX + 8];
        snprintf(lab, sizeof lab, "%s -> %s", r[j]->input, r[j]->output);
        legend(f, &fm, j, palette[j % NPAL], lab, NULL);
    }
    fputs("</svg>\n", f);
    mbl_free(hz);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_freqresp_svg_bode(FILE *f, const mbl_freqresp_result *r, const char *title)
{
    if (!f || !r || r->nw < 1) return MBL_EARG;
    mbl_freqresp_result *one[1] = {(mbl_freqresp_result *)r};
    return bode_pairs(f, one, 1, title);
}

int mbl_freqresp_mimo_svg_bode(FILE *f, const mbl_freqresp_mimo *r, const char *title)
{
    if (!f || !r || r->nw < 1 || r->nu * r->ny < 1 || !r->pair) return MBL_EARG;
    return bode_pairs(f, r->pair, r->nu * r->ny, title);
}

int mbl_freqresp_mimo_svg_sigma(FILE *f, const mbl_freqresp_mimo *r, const char *title)
{
    if (!f || !r || r->nw < 1 || r->nsv < 1 || !r->pair) return MBL_EARG;
    int n = r->nw, ns = r->nsv;
    double *hz = mbl_alloc_array((size_t)n, sizeof *hz), *db = mbl_alloc_array((size_t)n * ns, sizeof *db);
    if (!hz || !db) {
        mbl_free(hz), mbl_free(db);
        return MBL_ENOMEM;
    }
    double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
    for (int k = 0; k < n; k++) {
        hz[k] = r->pair[0]->w[k] / TWO_PI;
        if (hz[k] > 0) xl = fmin(xl, hz[k]), xh = fmax(xh, hz[k]);
        for (int j = 0; j < ns; j++) {
            double v = 20.0 * log10(r->sv[(size_t)k * ns + j]);
            db[(size_t)j * n + k] = v;
            if (isfinite(v)) yl = fmin(yl, v), yh = fmax(yh, v);
        }
    }
    if (!isfinite(xl) || xh <= xl) xl = 0.1, xh = 10;
    pad_range(&yl, &yh);
    frame fr = {80, 40, W - 200, H - 100, xl, xh, yl, yh, 1};
    char t[600];
    snprintf(t, sizeof t, "Singular values of G(i w)%s%s", title ? ": " : "", title ? title : "");
    svg_begin(f, W, H, t);
    axes(f, &fr, "frequency [Hz]", "singular value [dB]");
    for (int j = 0; j < ns; j++) {
        line(f, &fr, n, hz, 1, db + (size_t)j * n, 1, palette[j % NPAL], NULL, 2);
        char lab[32];
        snprintf(lab, sizeof lab, "sigma %d", j + 1);
        if (j < 24) legend(f, &fr, j, palette[j % NPAL], lab, NULL);
    }
    fputs("</svg>\n", f);
    mbl_free(hz), mbl_free(db);
    return ferror(f) ? MBL_EIO : 0;
}

/* A generic x-y plot (mbl_svg_plot, sweep.h): lines or dots per series, one legend entry per
 * distinct label. Used by mblin simulate --linearize-every (src/sim, the CLI). */
int mbl_svg_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel, const mbl_svg_series *s, int ns)
{
    if (!f || (ns && !s)) return MBL_EARG;
    frame fr = {70, 40, W - 70 - 170, H - 40 - 60, INFINITY, -INFINITY, INFINITY, -INFINITY, 0};
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++)
            if (isfinite(s[k].x[i]) && isfinite(s[k].y[i])) {
                fr.xmin = fmin(fr.xmin, s[k].x[i]), fr.xmax = fmax(fr.xmax, s[k].x[i]);
                fr.ymin = fmin(fr.ymin, s[k].y[i]), fr.ymax = fmax(fr.ymax, s[k].y[i]);
            }
    pad_range(&fr.xmin, &fr.xmax);
    pad_range(&fr.ymin, &fr.ymax);
    svg_begin(f, W, H, title ? title : "");
    axes(f, &fr, xlabel ? xlabel : "", ylabel ? ylabel : "");
    int nleg = 0;
    for (int k = 0; k < ns; k++) {
        const char *color = palette[(s[k].color >= 0 ? s[k].color : k) % NPAL];
        if (s[k].markers) {
            for (int i = 0; i < s[k].n; i++)
                if (inside(&fr, s[k].x[i], s[k].y[i]))
                    fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n", px(&fr, s[k].x[i]),
                            py(&fr, s[k].y[i]), color);
        } else {
            line(f, &fr, s[k].n, s[k].x, 1, s[k].y, 1, color, NULL, 1.5);
        }
        int seen = 0;
        for (int j = 0; j < k && s[k].label; j++) seen |= s[j].label && !strcmp(s[j].label, s[k].label);
        if (s[k].label && !seen) legend(f, &fr, nleg++, color, s[k].label, s[k].markers ? "2,3" : NULL);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? MBL_EIO : 0;
}
