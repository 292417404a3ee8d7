/* Floquet boundaries (mbl_boundary with opt->floquet; docs/floquet.md, "Boundaries").
 *
 * The parameter value where a time-periodic model turns unstable: where the spectral radius of
 * the monodromy matrix (the largest |Floquet multiplier|) leaves the unit circle. The crossing
 * function is g(p) = log(spectral radius): at or below zero on the stable side (exactly zero, to
 * the integration's accuracy, for an undamped model whose multipliers lie on the circle) and
 * positive beyond, where it grows like sqrt(p - p*) as two multipliers meet on the real axis and
 * split (the tongues of Mathieu's chart) or linearly where a damped model's multiplier crosses. A
 * point counts as unstable when g > log(1 + stab_tol) (mbl_floquet_options.stab_tol, the `floquet`
 * command's verdict). The eigenvalue boundary's exact sensitivities do not exist for the
 * exponents here, so the boundary is bracketed on the grid of the eigenvalue boundary (3 % steps
 * from `near`, alternately up and down, within the range) and refined to opt->tol: where the
 * stable end is inside the circle by more than that margin (a damped model), on g = 0 itself by
 * the Illinois method (g is smooth there; the margin would bias the answer by stab_tol over its
 * slope); where it sits on the circle (undamped), by bisection of the verdict (each halving one
 * Floquet analysis; about 30 for 1e-10; the margin moves the answer by about stab_tol^2).
 *
 * The multiplier that leaves the circle says how: through +1 (a solution of period T grows: the
 * harmonic tongues), through -1 (period 2T: subharmonic, a flip; Mathieu's first tongue, the
 * Kapitza pendulum's loss of the inverted position), or a complex pair (a secondary frequency:
 * Neimark-Sacker, combination resonance). */
#include <math.h>
#include <string.h>

#include "study/floquet_internal.h"

#define FB_GRID_STEP 0.03 /* the bracketing grid: 3 % of |near| (as the eigenvalue boundary's) */
#define FB_GRID_MAX 400   /* points per side at most */
#define FB_REAL_TOL 1e-8  /* a multiplier with |Im mu| below this times |mu| is real */

typedef struct fb_search {
    const mbl_model *model; /* the caller's: each point is a copy of it (mbl_model_copy) */
    mbl_setting *sets; /* the user's settings, param = p last */
    int nsets;
    const char *param;
    const mbl_boundary_options *opt;
    int points;
} fb_search;

typedef struct fb_value {
    double p, g;      /* the parameter, log(spectral radius) */
    double mre, mim;  /* the multiplier of largest modulus */
    double period;
    int unstable;
} fb_value;

static int fb_eval(fb_search *sc, double p, fb_value *v, mbl_status *st)
{
    memset(v, 0, sizeof *v);
    v->p = p;
    sc->sets[sc->nsets - 1].name = sc->param;
    sc->sets[sc->nsets - 1].value = p;
    sc->points++;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_floquet *f = NULL;
    mbl_floquet_options o = *sc->opt->floquet;
    o.samples = 1, o.mbc = NULL;
    int rc = mbl_model_copy(sc->model, sc->sets, sc->nsets, &md, st);
    if (!rc && sc->opt->floquet_spin) {
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        int idx = -1;
        for (int i = 0; i < info.nparam; i++)
            if (!strcmp(mbl_model_param_name(md, i), sc->opt->floquet_spin)) idx = i;
        double rps = idx >= 0 ? mbl_model_param_spin(md, idx) * mbl_model_param_value(md, idx) : 0;
        if (idx < 0 || !(fabs(rps) > 0) || !isfinite(rps))
            rc = mbl_error(st, MBL_EARG, "boundary: '%s' is not a spin speed that gives a period here (spin_speeds:)",
                           sc->opt->floquet_spin);
        else o.period = 1.0 / fabs(rps);
    }
    if (!rc) rc = mbl_operating_point(md, &sc->opt->opoint, &pt, st);
    if (!rc) rc = mbl_floquet_run(md, pt, &o, &f, st);
    if (!rc) {
        v->g = log(f->spectral_radius);
        v->mre = f->nx ? f->mult_re[0] : 0, v->mim = f->nx ? f->mult_im[0] : 0;
        v->period = f->period;
        v->unstable = v->g > log1p(o.stab_tol);
    }
    if (rc) mbl_error_prefix(st, "at %s = %.17g", sc->param, p);
    mbl_floquet_free(f);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

/* point k (1-based) of the grid from near toward end: geometric when the side does not reach
 * zero, else even steps; *count the side's points */
static double fb_grid(double near, double end, int k, int *count)
{
    if (end == near) {
        *count = 0;
        return end;
    }
    if (near != 0 && end / near > 0) {
        double r = fabs(log(end / near));
        int c = (int)ceil(r / log1p(FB_GRID_STEP));
        *count = c > FB_GRID_MAX ? FB_GRID_MAX : c;
        return k >= *count ? end : near * exp(log(end / near) * k / *count);
    }
    double h = near != 0 ? FB_GRID_STEP * fabs(near) : fabs(end - near) / 33;
    int c = (int)ceil(fabs(end - near) / h);
    *count = c > FB_GRID_MAX ? FB_GRID_MAX : c;
    return k >= *count ? end : near + k * (end - near) / *count;
}

int study_floquet_boundary(const mbl_model *model, mbl_setting *sets, int nsets, const char *param, double near, double from,
                           double to, const mbl_boundary_options *opt, mbl_boundary_result *res, mbl_status *st)
{
    fb_search sc = {model, sets, nsets, param, opt, 0};
    fb_value v0, a, b;
    int rc = fb_eval(&sc, near, &v0, st);
    if (rc) return rc;
    /* the bracket: the nearest grid point, walking alternately up and down, whose verdict differs
     * from near's; a its neighbour on near's side */
    double end[2] = {to, from};
    int count[2], k[2] = {0, 0}, found = 0;
    fb_value last[2] = {v0, v0};
    fb_grid(near, to, 1, &count[0]), fb_grid(near, from, 1, &count[1]);
    while (!found && (k[0] < count[0] || k[1] < count[1])) {
        for (int s = 0; s < 2 && !found; s++) {
            if (k[s] >= count[s]) continue;
            int c;
            double p = fb_grid(near, end[s], ++k[s], &c);
            fb_value v;
            if ((rc = fb_eval(&sc, p, &v, st))) return rc;
            if (v.unstable != v0.unstable) a = last[s], b = v, found = 1;
            last[s] = v;
        }
    }
    if (!found)
        return mbl_error(st, MBL_EMODEL,
                         "boundary: the Floquet multipliers stay %s the unit circle for %s in [%.6g, %.6g] (%d points; "
                         "spectral radius %.9g at %s = %g); --range FROM:TO searches elsewhere",
                         v0.unstable ? "outside" : "on or inside", param, from, to, sc.points, exp(v0.g), param, near);
    int it = 0, stuck = 0;
    double lo = fmin(a.p, b.p), hi = fmax(a.p, b.p), lev = log1p(opt->floquet->stab_tol), fa = a.g, fb = b.g;
    /* a damped model's radius crosses 1 with a slope: its stable end is inside the circle by more
     * than the verdict's margin, and g = 0 is refined itself (Illinois), so that the margin does not
     * bias the answer (by stab_tol / slope); an undamped one's sits on the circle: the verdict is
     * bisected */
    int root = (a.unstable ? b.g : a.g) < -lev;
    while (fabs(b.p - a.p) > opt->tol * fmax(1.0, fabs(b.p)) && it < 4 * opt->max_iter) {
        double p = 0.5 * (a.p + b.p);
        if (root && fa != fb) {
            double t = fa / (fa - fb);
            if (t > 0 && t < 1) p = a.p + t * (b.p - a.p);
        }
        fb_value m;
        if ((rc = fb_eval(&sc, p, &m, st))) return rc;
        it++;
        int same_as_a = root ? (m.g > 0) == (a.g > 0) : m.unstable == a.unstable;
        if (root && m.g == 0) { /* landed */
            a = b = m;
            break;
        }
        if (same_as_a) a = m, fa = m.g, stuck = stuck < 0 ? stuck - 1 : -1;
        else b = m, fb = m.g, stuck = stuck > 0 ? stuck + 1 : 1;
        if (stuck <= -2) fb *= 0.5; /* Illinois: the end that keeps its place is halved */
        if (stuck >= 2) fa *= 0.5;
    }
    if (fabs(b.p - a.p) > opt->tol * fmax(1.0, fabs(b.p)))
        return mbl_error(st, MBL_ENOCONV, "boundary: the refinement did not reach %g in %d steps (bracket [%.17g, %.17g])",
                         opt->tol, it, fmin(a.p, b.p), fmax(a.p, b.p));
    if (root) a.unstable = a.g > 0, b.unstable = b.g > 0;
    const fb_value *u = a.unstable ? &a : &b; /* the unstable end names the multiplier */
    double mag = hypot(u->mre, u->mim);
    memset(res, 0, sizeof *res);
    res->value = 0.5 * (a.p + b.p);
    res->floquet = 1;
    res->mult_re = u->mre, res->mult_im = u->mim;
    res->floquet_kind = fabs(u->mim) > FB_REAL_TOL * mag ? MBL_FLOQUET_CROSS_PAIR
                        : u->mre > 0                     ? MBL_FLOQUET_CROSS_PLUS1
                                                         : MBL_FLOQUET_CROSS_MINUS1;
    res->re = u->g / u->period;
    res->im = atan2(u->mim, u->mre) / u->period;
    res->f_near = v0.g;
    res->slope = NAN;
    res->iterations = it;
    res->points = sc.points;
    res->last_step = fabs(b.p - a.p);
    res->lo = lo, res->hi = hi;
    res->divergence = res->floquet_kind == MBL_FLOQUET_CROSS_PLUS1;
    return 0;
}
