/* Campbell diagrams: where tracked frequencies meet excitation orders (mbl_sweep_critical),
 * refined by the secant method on new points of the sweep. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/sweep_internal.h"

/* ---- Campbell diagram: critical speeds ------------------------------------------------------ */

/* The oscillatory eigenvalue (Im > 0) of a new point nearest `target`. */
static int nearest_at(worker *w, double x, double tr, double ti, double zero, double *re, double *im, mbl_status *st)
{
    double xv[2] = {x, w->x0[1]};
    mbl_modes *m = NULL;
    int rc = study_sweep_eval_modes(w, xv, 0, &m, NULL, NULL, st);
    if (rc) return rc;
    double best = INFINITY;
    for (int j = 0; j < m->nx; j++) {
        double d = hypot(m->modes[j].re - tr, m->modes[j].im - ti);
        if (m->modes[j].im > zero && d < best) best = d, *re = m->modes[j].re, *im = m->modes[j].im;
    }
    mbl_modes_free(m);
    if (!isfinite(best)) return mbl_error(st, MBL_ENOCONV, "no oscillatory mode at %g", x);
    return 0;
}

int mbl_sweep_critical(mbl_sweep *sw, const double *orders, int norders, double hz_per_unit, double tol,
                       mbl_critical **out, int *ncrit, mbl_status *st)
{
    if (!sw || !out || !ncrit || (norders && !orders)) return mbl_error(st, MBL_EARG, "mbl_sweep_critical: NULL argument");
    *out = NULL;
    *ncrit = 0;
    if (sw->naxes != 1) return mbl_error(st, MBL_EARG, "critical speeds need a sweep over one parameter");
    if (!(hz_per_unit > 0) || !isfinite(hz_per_unit)) return mbl_error(st, MBL_EARG, "hz_per_unit must be positive");
    if (!(tol > 0)) tol = 1e-10;
    worker *w = sw->ctx;
    int nm = sw->nmodes, cap = 0, nc = 0;
    double zero = mbl_sweep_zero_level(sw);
    mbl_critical *cr = NULL;
    for (int o = 0; o < norders; o++) {
        double k = orders[o];
        if (!(k > 0) || !isfinite(k)) {
            mbl_free(cr);
            return mbl_error(st, MBL_EARG, "excitation orders must be positive (got %g)", k);
        }
        for (int b = 0; b < nm; b++)
            for (int p = 0; p + 1 < sw->npoints; p++) {
                size_t i0 = (size_t)p * nm + b, i1 = (size_t)(p + 1) * nm + b;
                if (!sw->ok[p] || !sw->ok[p + 1] || !(sw->im[i0] > zero) || !(sw->im[i1] > zero)) continue;
                double xa = sw->value[p], xb = sw->value[p + 1];
                double ga = sw->im[i0] / TWO_PI - k * xa * hz_per_unit, gb = sw->im[i1] / TWO_PI - k * xb * hz_per_unit;
                if (!(ga == 0 || (ga < 0) != (gb < 0))) continue;
                if (gb == 0) continue; /* counted at the next interval */
                /* regula falsi (Illinois) on the bracket [xa, xb], the branch followed by the
                 * eigenvalue nearest the interpolation between the bracket's ends */
                double ra = sw->re[i0], ia = sw->im[i0], rb = sw->re[i1], ib = sw->im[i1];
                double x = xa, fr = ra, fi = ia;
                int refined = 0, side = 0;
                if (ga != 0 && w && w->c) {
                    double xprev = INFINITY;
                    for (int it = 0; it < 30; it++) {
                        x = xa - ga * (xb - xa) / (gb - ga);
                        if (!(x > xa && x < xb)) x = 0.5 * (xa + xb);
                        double s = (x - xa) / (xb - xa);
                        double re = 0, im = 0;
                        mbl_status st2;
                        if (nearest_at(w, x, ra + s * (rb - ra), ia + s * (ib - ia), zero, &re, &im, &st2)) break;
                        fr = re, fi = im;
                        double g = im / TWO_PI - k * x * hz_per_unit;
                        if (fabs(x - xprev) <= tol * fmax(fabs(x), 1e-300) || g == 0) {
                            refined = 1;
                            break;
                        }
                        xprev = x;
                        if ((g < 0) == (ga < 0)) {
                            xa = x, ga = g, ra = re, ia = im;
                            if (side == -1) gb *= 0.5;
                            side = -1;
                        } else {
                            xb = x, gb = g, rb = re, ib = im;
                            if (side == 1) ga *= 0.5;
                            side = 1;
                        }
                    }
                }
                if (!refined && ga != 0) {
                    /* linear interpolation between the sweep's points */
                    x = xa - ga * (xb - xa) / (gb - ga);
                    double s = (x - xa) / (xb - xa);
                    fr = ra + s * (rb - ra), fi = ia + s * (ib - ia);
                }
                if (nc == cap) {
                    cap = cap ? 2 * cap : 16;
                    mbl_critical *t = mbl_realloc_array(cr, (size_t)cap, sizeof *cr);
                    if (!t) {
                        mbl_free(cr);
                        return mbl_error(st, MBL_ENOMEM, "out of memory");
                    }
                    cr = t;
                }
                double slope = (sw->im[i1] - sw->im[i0]) / TWO_PI / (sw->value[p + 1] - sw->value[p]);
                double rel = 1e-6 * fabs(sw->im[i0]) / TWO_PI / (sw->value[p + 1] - sw->value[p] + 1e-300);
                cr[nc].branch = b;
                cr[nc].order = k;
                cr[nc].speed = x;
                cr[nc].freq_hz = fi / TWO_PI;
                (void)fr;
                cr[nc].refined = refined;
                cr[nc].whirl = slope > rel ? 1 : slope < -rel ? -1 : 0;
                nc++;
            }
    }
    *out = cr;
    *ncrit = nc;
    return 0;
}
