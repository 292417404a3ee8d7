/* Roots of two-point interpolants (study/interp_root.h). */
#include "study/interp_root.h"

#include <float.h>
#include <math.h>

/* One Newton step on g with g' = dg from *t, kept in [0, 1]; 1 when it is the last (no derivative,
 * or a step within 4 eps) */
static int newton_step01(double *t, double g, double dg)
{
    if (!(dg != 0)) return 1;
    double tn = fmin(1.0, fmax(0.0, *t - g / dg));
    int last = fabs(tn - *t) <= 4 * DBL_EPSILON;
    *t = tn;
    return last;
}

double study_hermite_root(double p0, double f0, double d0, double p1, double f1, double d1)
{
    double w = p1 - p0, t = f0 / (f0 - f1);
    if (!isfinite(d0) || !isfinite(d1)) return p0 + t * w;
    for (int it = 0; it < 30; it++) {
        double t2 = t * t, t3 = t2 * t;
        double h = (2 * t3 - 3 * t2 + 1) * f0 + (t3 - 2 * t2 + t) * w * d0 + (-2 * t3 + 3 * t2) * f1 + (t3 - t2) * w * d1;
        double dh = (6 * t2 - 6 * t) * f0 + (3 * t2 - 4 * t + 1) * w * d0 + (-6 * t2 + 6 * t) * f1 + (3 * t2 - 2 * t) * w * d1;
        if (newton_step01(&t, h, dh)) break;
    }
    return p0 + t * w;
}

double study_quadratic_root(double p0, double f0, double d0, double p1, double f1, double d1, int at_p1)
{
    double w = p1 - p0, d = at_p1 ? d1 : d0;
    if (!isfinite(d) || w == 0) return NAN;
    /* in u = (p - p0) / w: g(u) = f0 + (f1 - f0) u + c u (u - 1), g'(0) = f1 - f0 - c, g'(1) = f1 - f0 + c */
    double c = at_p1 ? d * w - (f1 - f0) : (f1 - f0) - d * w;
    double t = f0 / (f0 - f1); /* the chord's root: Newton from it on g, kept inside */
    for (int it = 0; it < 30 && c != 0; it++) {
        double g = f0 + (f1 - f0) * t + c * t * (t - 1), dg = (f1 - f0) + c * (2 * t - 1);
        if (newton_step01(&t, g, dg)) break;
    }
    return p0 + t * w;
}
