/* Stability boundaries: the parameter value where a mode's real part crosses zero, or where its
 * damped frequency meets an order line omega = order * p (a critical speed), bracketed first and
 * then refined with the exact sensitivities of src/study/sensitivity.c (docs/study.md).
 *
 * At every point the caller's model is copied with the parameter set (mbl_model_copy: its text
 * loaded again, so every parameter computed from it follows, exactly as `--set` does; a model from a
 * string as one from a file), the operating point found, and the eigenvalues and their derivatives
 * computed.
 *
 * 1. The search: a grid walked outward from `near`, alternately up and down, each point's modes
 *    tracked from its neighbour nearer `near` (mbl_track_modes_pred: predictor and shapes), until
 *    a mode's crossing function changes sign between two neighbours (the bracket).
 * 2. The refinement inside the bracket: Newton steps with the exact derivative while they stay
 *    inside and shrink it, else the Illinois method (regula falsi that halves the stale end's
 *    value), else bisection; the bracket always holds the sign change, so it cannot wander off.
 *    Where the ends differ in the number of modes on the unstable side (count_plus(), no tracking),
 *    that number tells each new point's side, and the branch's value there is taken on it.
 *    Two eigenvalues meeting on the imaginary axis (a collision) are refined on their
 *    discriminant; a point that lands exactly on the boundary, where the eigenvalue is zero or the
 *    pair double, is the answer.
 *    A pair whose members are not simple at a point (a divergence inside the model's zero
 *    cluster) is refined from two points outside it (refine_outside_pair).
 * 3. The answer verified: that number must differ just below and just above it (verify()), else
 *    the call refuses. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/sensitivity.h"
#include "mblin/sweep.h"
#include "study/floquet_internal.h"
#include "study/interp_root.h"

void mbl_boundary_options_default(mbl_boundary_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->tol = 1e-10;
    opt->from = opt->to = NAN;
    opt->max_iter = 50;
    mbl_opoint_options_default(&opt->opoint);
    mbl_sens_options_default(&opt->sens);
    opt->sens.shapes = 0;
}

/* ---- evaluation ------------------------------------------------------------------------------- */

typedef struct search {
    const mbl_model *model; /* the caller's: each point is a copy of it (mbl_model_copy) */
    mbl_setting *sets;
    int nsets;
    const char *param;
    const mbl_boundary_options *opt;
    int points; /* evaluated */
    double from, to; /* the search range (boundary_run) */
} search;

/* Eigenvalues and their derivatives with respect to the parameter at value p. */
static int evaluate(search *sc, double p, mbl_sensitivity **out, mbl_status *st)
{
    *out = NULL;
    sc->sets[sc->nsets - 1].name = sc->param;
    sc->sets[sc->nsets - 1].value = p;
    sc->points++;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    int rc = mbl_model_copy(sc->model, sc->sets, sc->nsets, &md, st);
    if (rc) return rc;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int idx = -1;
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), sc->param)) idx = i;
    rc = mbl_operating_point(md, &sc->opt->opoint, &pt, st);
    if (!rc) rc = mbl_dae_deriv_new(md, &dd, st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, &idx, 1, &sc->opt->sens, out, st);
    if (rc) mbl_error_prefix(st, "at %s = %.17g", sc->param, p);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

/* Tolerances relative to each eigenvalue's own magnitude (never to the largest in the spectrum:
 * one far eigenvalue must not blur the others): a real part within AXIS_TOL of |s| is on the
 * axis (the rounding of an undamped mode), a mode within MIRROR_TOL of another's mirror -conj(s)
 * is its partner in a spectrum symmetric about the axis. */
#define AXIS_TOL 1e-8
#define MIRROR_TOL 1e-6

static double mag(const mbl_sens_mode *m) { return hypot(m->re, m->im); }

/* The band about the imaginary axis where a mode's real part is rounding: AXIS_ERR times the
 * eigenvalue's estimated error (mbl_sens_mode.error_estimate: its condition times its backward
 * error), never wider than AXIS_TOL |s| nor narrower than AXIS_TOL_MIN |s|. AXIS_TOL |s| alone was
 * 1.4e-4 for the 14142 rad/s mode of a stiff two-mass system whose real part -c/4 is known to 2.5e-11:
 * the boundary c = 0 was reported at c = -0.0004 (session 40; tests/study/test_boundary.c
 * stiff_two_mass, with K = 1e6). */
#define AXIS_ERR 100.0
#define AXIS_TOL_MIN 1e-13
static double axis_band(const mbl_sens_mode *m)
{
    double s = mag(m), e = m->error_estimate;
    return isfinite(e) ? fmin(AXIS_TOL * s, fmax(AXIS_TOL_MIN * s, AXIS_ERR * e)) : AXIS_TOL * s;
}

/* A zero mode here: classified so by the sensitivities, or below ZERO_REL of the scale of the
 * points compared (the largest |s| of both). The sensitivities' own threshold is relative to the
 * point's spectrum, which near a divergence may be all small (the rolling disc at its critical
 * speed: the lean pair at 2.5e-4, the split of a cyclic double zero at 1.9e-7, nothing larger;
 * exactly there a defective triple zero, split by eps^(1/3) of the scale into 3e-5). */
#define ZERO_REL 1e-4

static int is_zero(const mbl_sens_mode *m, double zlev) { return m->kind == MBL_MODE_ZERO || mag(m) <= zlev; }

static double spectrum_scale(const mbl_sensitivity *S)
{
    double big = 0;
    for (int j = 0; j < S->nmode; j++) big = fmax(big, mag(&S->modes[j]));
    return big;
}

/* the crossing function of a mode and its derivative */
static void crossing(const mbl_sens_mode *m, double order, double p, double *f, double *df)
{
    if (order == 0) {
        *f = m->re;
        *df = m->dre[0];
    } else {
        double sg = m->im < 0 ? -1.0 : 1.0;
        *f = fabs(m->im) - order * p;
        *df = sg * m->dim[0] - order;
    }
}

/* The side of the boundary mode k is on: -1, 0 (on it, to AXIS_TOL) or +1; 2 when the mode has no
 * crossing function (a zero mode; with an order line, a mode that does not oscillate). */
static int side(const mbl_sens_mode *m, double order, double p, double zlev)
{
    if (is_zero(m, zlev)) return 2;
    double f, df, tol = axis_band(m);
    if (order != 0) {
        if (fabs(m->im) <= tol) return 2;
        tol = AXIS_TOL * fmax(fabs(m->im), fabs(order * p));
    }
    crossing(m, order, p, &f, &df);
    return f > tol ? 1 : f < -tol ? -1 : 0;
}

/* the modes the sensitivities classify as zero (within their zero threshold of the origin: the
 * model's zero eigenvalues, cyclic coordinates and rigid-body motions) */
static int zero_kind(const mbl_sensitivity *S)
{
    int nz = 0;
    for (int i = 0; i < S->nmode; i++) nz += S->modes[i].kind == MBL_MODE_ZERO;
    return nz;
}

static int zero_modes(const mbl_sensitivity *S, double zlev)
{
    int nz = 0;
    for (int i = 0; i < S->nmode; i++) nz += is_zero(&S->modes[i], zlev);
    return nz;
}

/* the mode of S nearest -conj(s_k) other than k, or -1: within MIRROR_TOL of |s_k|, or the zero
 * level for a small s_k (a pair near the origin splits in rounding by about sqrt(eps) of the
 * spectrum's scale, far more than its own magnitude allows) */
static int mirror_of(const mbl_sensitivity *S, int k, double zlev)
{
    const mbl_sens_mode *a = &S->modes[k];
    int best = -1;
    double dbest = fmax(MIRROR_TOL * mag(a), zlev);
    for (int j = 0; j < S->nmode; j++) {
        if (j == k || is_zero(&S->modes[j], zlev)) continue;
        double d = hypot(S->modes[j].re + a->re, S->modes[j].im - a->im);
        if (d <= dbest) dbest = d, best = j;
    }
    return best;
}

/* The modes on the unstable side (side() +1: Re s > 0, or above the order line), the model's own
 * zeros (the sensitivities' zero modes) left out: a count that needs no tracking. Between two points
 * it changes exactly where some eigenvalue changes side, so it tells which end of a bracket a point
 * is on where the tracked branch is ambiguous (two real eigenvalues born at a coalescence just
 * before one of them crosses zero), and it verifies the answer (verify()). */
static int count_plus(const mbl_sensitivity *S, double order, double p)
{
    int c = 0;
    for (int j = 0; j < S->nmode; j++) c += side(&S->modes[j], order, p, 0) == 1;
    return c;
}

/* ---- the search: a grid walked outward from `near` ---------------------------------------------- */

typedef struct gpoint {
    double p;
    mbl_sensitivity *S;
    int *mode; /* branch b (the mode b of the point `near`) -> its mode index here */
} gpoint;

static void gpoint_free(gpoint *g)
{
    mbl_sensitivity_free(g->S);
    mbl_free(g->mode);
    memset(g, 0, sizeof *g);
}

/* y's branches from x's by a minimum-cost assignment of predicted eigenvalue and shape (MAC). */
static int link(const gpoint *x, gpoint *y, mbl_status *st)
{
    const mbl_sensitivity *A = x->S, *B = y->S;
    int nm = A->nmode, n = A->n;
    if (B->nmode != nm || B->n != n)
        return mbl_error(st, MBL_EMODEL, "boundary: the model has %d modes at %.12g and %d at %.12g: the linear model "
                         "changes size (a singular configuration between them)", nm, x->p, B->nmode, y->p);
    double *lre = mbl_alloc_array(2 * (size_t)nm + 1, sizeof *lre), *lim = mbl_alloc_array(2 * (size_t)nm + 1, sizeof *lim);
    double *dre = mbl_alloc_array(2 * (size_t)nm + 1, sizeof *dre), *dim = mbl_alloc_array(2 * (size_t)nm + 1, sizeof *dim);
    double *sre = mbl_alloc_array(2 * (size_t)nm * n + 1, sizeof *sre), *sim = mbl_alloc_array(2 * (size_t)nm * n + 1, sizeof *sim);
    int *perm = mbl_alloc_array(2 * (size_t)nm + 1, sizeof *perm);
    y->mode = mbl_alloc_array((size_t)nm + 1, sizeof *y->mode);
    int rc = 0;
    if (!lre || !lim || !dre || !dim || !sre || !sim || !perm || !y->mode) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        const mbl_sensitivity *P[2] = {A, B};
        for (int q = 0; q < 2; q++)
            for (int j = 0; j < nm; j++) {
                const mbl_sens_mode *m = &P[q]->modes[j];
                size_t o = (size_t)q * nm + j;
                lre[o] = m->re, lim[o] = m->im, dre[o] = m->dre[0], dim[o] = m->dim[0];
            }
        memcpy(sre, A->shape_re, (size_t)nm * n * sizeof *sre);
        memcpy(sim, A->shape_im, (size_t)nm * n * sizeof *sim);
        memcpy(sre + (size_t)nm * n, B->shape_re, (size_t)nm * n * sizeof *sre);
        memcpy(sim + (size_t)nm * n, B->shape_im, (size_t)nm * n * sizeof *sim);
        double xs[2] = {x->p, y->p};
        rc = mbl_track_modes_pred(2, nm, n, lre, lim, dre, dim, sre, sim, NULL, NULL, xs, NULL, 1.0, perm, NULL, st);
    }
    if (!rc)
        for (int b = 0; b < nm; b++) y->mode[b] = perm[nm + x->mode[b]];
    mbl_free(lre), mbl_free(lim), mbl_free(dre), mbl_free(dim), mbl_free(sre), mbl_free(sim), mbl_free(perm);
    return rc;
}

/* The sides of branch b at x and y (side()). A branch that is zero at one end only takes there
 * the side of its crossing function (a simple real eigenvalue within the zero level still has a
 * real part whose sign counts); one zero at both ends (a cyclic coordinate) has no side. */
static void sides(const gpoint *x, const gpoint *y, int b, double order, double zlev, int *sx, int *sy)
{
    const mbl_sens_mode *m[2] = {&x->S->modes[x->mode[b]], &y->S->modes[y->mode[b]]};
    double p[2] = {x->p, y->p};
    int sd[2];
    for (int e = 0; e < 2; e++) sd[e] = side(m[e], order, p[e], zlev);
    for (int e = 0; e < 2 && (sd[0] == 2) != (sd[1] == 2); e++) {
        if (sd[e] != 2 || (order != 0 && fabs(m[e]->im) == 0)) continue;
        /* on the axis to AXIS_TOL as in side(): a small undamped pair's real part is rounding
         * (3e-14 beside 1.96i took the sign of noise and bracketed a cantilever's buckling load
         * 2 % short of it) */
        double f, df, tol = order != 0 ? AXIS_TOL * fmax(fabs(m[e]->im), fabs(order * p[e])) : axis_band(m[e]);
        crossing(m[e], order, p[e], &f, &df);
        sd[e] = f > tol ? 1 : f < -tol ? -1 : 0;
    }
    *sx = sd[0], *sy = sd[1];
}

/* A sign change of branch b between x (nearer `near`) and y: the root of the crossing function's
 * chord (the distance from `near` ranks the branches), or NaN when there is none. A boundary is a
 * change to or from +1 (unstable, or above the order line), or for a collision from the axis
 * (0) to -1 where b's mirror goes to +1. */
static double sign_change(const gpoint *x, const gpoint *y, int b, double order)
{
    double zlev = ZERO_REL * fmax(spectrum_scale(x->S), spectrum_scale(y->S));
    int sx, sy;
    sides(x, y, b, order, zlev, &sx, &sy);
    if (sx == 2 || sy == 2 || sx == sy) return NAN;
    int ok = sx == 1 || sy == 1 || order != 0;
    if (!ok) { /* 0 <-> -1: the partner of a collision */
        const gpoint *off = sx == -1 ? x : y;
        ok = mirror_of(off->S, off->mode[b], zlev) >= 0;
    }
    if (!ok) return NAN;
    const mbl_sens_mode *mx = &x->S->modes[x->mode[b]], *my = &y->S->modes[y->mode[b]];
    double fx, fy, d;
    crossing(mx, order, x->p, &fx, &d);
    crossing(my, order, y->p, &fy, &d);
    double t = fx != fy ? fx / (fx - fy) : 0.5;
    if (!(t >= 0 && t <= 1)) t = 0.5;
    return x->p + t * (y->p - x->p);
}

/* The grid of one side: point k (1-based) from `near` toward `end`, k = 1 .. count. Geometric
 * (3 % steps) when the side does not reach zero, else even steps. */
typedef struct side_grid {
    double near, end, ratio, step;
    int count;
} side_grid;

#define GRID_STEP 0.03
#define GRID_MAX 400

static void grid_init(side_grid *g, double near, double end)
{
    memset(g, 0, sizeof *g);
    g->near = near, g->end = end;
    if (end == near) return;
    if (near != 0 && end / near > 0) {
        double r = fabs(log(end / near));
        g->count = (int)ceil(r / log1p(GRID_STEP));
        if (g->count > GRID_MAX) g->count = GRID_MAX;
        g->ratio = exp(log(end / near) / g->count);
    } else {
        double h = near != 0 ? GRID_STEP * fabs(near) : fabs(end - near) / 33;
        g->count = (int)ceil(fabs(end - near) / h);
        if (g->count > GRID_MAX) g->count = GRID_MAX;
        g->step = (end - near) / g->count;
    }
}

static double grid_point(const side_grid *g, int k)
{
    if (k >= g->count) return g->end;
    return g->ratio != 0 ? g->near * pow(g->ratio, k) : g->near + k * g->step;
}

/* ---- the refinement inside a bracket ------------------------------------------------------------- */

/* What is refined: one mode's crossing function, or the discriminant of a pair (collision). */
typedef struct target {
    int pair;
    double order;
    int nzero;          /* zero modes at the bracket's ends (the fewer): more at a point = landed */
    int nzkind;         /* modes the sensitivities call zero at the ends (the fewer): the model's own */
    double zlev;        /* the zero level of the bracket's ends (is_zero) */
    /* the last point evaluated nearest the new one: the eigenvalue (or the pair's centre) there and
     * its derivative, for the prediction */
    double re, im, dre, dim;
} target;

typedef struct tval {
    double p, f, df;
    double re, im, dre, dim; /* the mode (or the centre of the pair) */
    int landed;               /* exactly on the boundary: the eigenvalue zero or the pair double */
    double inside;            /* > 0: the crossing eigenvalue is among the model's own zeros here (within
                                 the sensitivities' zero threshold): its sign is rounding; the
                                 spectrum's scale there (the largest |s|) */
    int i, j;                 /* the mode(s) */
    int count;                /* count_plus() here */
    double scale;             /* the spectrum's scale here (the largest |s|) */
    double band;              /* one mode without an order line: its axis_band(), else 0 */
    int defective;            /* a pair whose members are not simple here (the sensitivities' `defined`
                                 0: inside a multiple eigenvalue, their values and derivatives rounding) */
} tval;

/* Re (s_i - s_j)^2 and its derivative, the centre and its derivative */
static void pair_value(const mbl_sensitivity *S, int i, int j, tval *v)
{
    const mbl_sens_mode *a = &S->modes[i], *b = &S->modes[j];
    double dr = a->re - b->re, di = a->im - b->im, ddr = a->dre[0] - b->dre[0], ddi = a->dim[0] - b->dim[0];
    v->i = i, v->j = j;
    v->defective = !a->defined || !b->defined;
    v->f = dr * dr - di * di;
    v->df = 2 * (dr * ddr - di * ddi);
    v->re = 0.5 * (a->re + b->re), v->im = 0.5 * (a->im + b->im);
    v->dre = 0.5 * (a->dre[0] + b->dre[0]), v->dim = 0.5 * (a->dim[0] + b->dim[0]);
}

static void mode_value(const mbl_sensitivity *S, int k, double order, double p, tval *v)
{
    const mbl_sens_mode *m = &S->modes[k];
    double sg = m->im < 0 ? -1.0 : 1.0; /* the upper half plane's member of a pair */
    v->i = v->j = k;
    crossing(m, order, p, &v->f, &v->df);
    v->re = m->re, v->im = sg * m->im, v->dre = m->dre[0], v->dim = sg * m->dim[0];
    v->band = order == 0 ? axis_band(m) : 0;
}

/* The target's value in S at p: the mode (pair) nearest the prediction from the target's last
 * point. Zero modes are candidates only when S has more of them than the bracket's ends: then the
 * crossing eigenvalue is one of them (a simple real eigenvalue within the zero threshold of the
 * origin still has a real part whose sign counts; a pair that is zero is the boundary itself).
 * want -1 or +1 (one mode, not inside the zero cluster): no mode on the other side (side(), a mode
 * on the axis to AXIS_TOL is on neither), when there is one (count_plus() told the side of p). */
static void target_value(const target *tg, const mbl_sensitivity *S, double p, double pref, int want, tval *v)
{
    memset(v, 0, sizeof *v);
    v->p = p;
    v->count = count_plus(S, tg->order, p);
    v->scale = spectrum_scale(S);
    double h = p - pref, pr = tg->re + (isfinite(tg->dre) ? tg->dre * h : 0);
    double pi = tg->im + (isfinite(tg->dim) ? tg->dim * h : 0);
    int nz = zero_modes(S, tg->zlev), zeros_in = !tg->pair && nz > tg->nzero;
    /* the model's own zeros (as many as at the ends) are not the crossing eigenvalue: near the
     * boundary a Newton point's prediction is zero, and an exact zero (a cyclic coordinate's) would
     * be nearer it than the crossing eigenvalue itself (the bicycle's capsize speed was found at
     * 6.0239534 instead of 6.0242620 so) */
    int skip_own = zeros_in && zero_kind(S) <= tg->nzkind;
    if (zeros_in && !skip_own) v->inside = fmax(v->scale, DBL_MIN);
    if (tg->pair || v->inside > 0) want = 0;
    int best[2] = {-1, -1};
    for (int pass = want != 0 ? 0 : 1; pass < 2 && best[0] < 0; pass++) {
        double d0 = HUGE_VAL, d1 = HUGE_VAL;
        for (int k = 0; k < S->nmode; k++) {
            const mbl_sens_mode *m = &S->modes[k];
            if ((is_zero(m, tg->zlev) && !zeros_in) || (!tg->pair && m->im < -AXIS_TOL * mag(m))) continue;
            if (skip_own && m->kind == MBL_MODE_ZERO) continue;
            if (pass == 0 && side(m, tg->order, p, 0) == -want) continue; /* the other side than count_plus() gave */
            double d = hypot(m->re - pr, m->im - pi);
            if (d < d0) d1 = d0, best[1] = best[0], d0 = d, best[0] = k;
            else if (d < d1) d1 = d, best[1] = k;
        }
    }
    if ((tg->pair && nz >= tg->nzero + 2) || best[0] < 0 || (tg->pair && best[1] < 0)) {
        v->landed = 1; /* the pair became zero here */
        v->f = 0, v->df = NAN, v->re = v->im = 0, v->dre = v->dim = NAN;
        return;
    }
    if (tg->pair) pair_value(S, best[0], best[1], v);
    else mode_value(S, best[0], tg->order, p, v);
    if (v->inside > 0 || (!tg->pair && S->modes[best[0]].kind == MBL_MODE_ZERO)) v->count = -1;
}

/* the next point inside (a, b): Newton's from the last point when it stays well inside and at
 * most halves the bracket, else the Illinois point */
static double next_point(const tval *a, const tval *b, const tval *last, double fa_w, double fb_w, int *newton)
{
    double w = fabs(b->p - a->p), lo = fmin(a->p, b->p), hi = fmax(a->p, b->p);
    *newton = 0;
    if (isfinite(last->df) && last->df != 0) {
        double pn = last->p - last->f / last->df;
        if (pn > lo && pn < hi && fabs(pn - last->p) <= 0.5 * w) {
            *newton = 1;
            return pn;
        }
    }
    double p = (a->p * fb_w - b->p * fa_w) / (fb_w - fa_w);
    if (!(p > lo && p < hi)) p = 0.5 * (lo + hi);
    return p;
}

/* the roots of interpolants through two points' values and derivatives (study/interp_root.c) */
static double hermite_root(const tval *x, const tval *y)
{
    return study_hermite_root(x->p, x->f, x->df, y->p, y->f, y->df);
}

static double quadratic_root(const tval *x, const tval *y, int at_y)
{
    return study_quadratic_root(x->p, x->f, x->df, y->p, y->f, y->df, at_y);
}

/* At a point inside the zero cluster (last->inside > 0): the points p -+ h, h = BOUNDARY_OUTSIDE z
 * / |slope| with z the sensitivities' zero threshold (max(zero_tol, 10 sqrt(eps)) of the largest
 * |s|, as src/study/sensitivity.c) and the slope of the nearer bracket end, inside the bracket;
 * when both are outside the cluster on either side, the boundary is the root of their cubic
 * Hermite interpolant (exact derivatives) and 0 is returned; 1 when they are not (the caller goes
 * on as before: the point counts as landed). */
#define BOUNDARY_OUTSIDE 10.0
static int refine_outside(search *sc, target *tg, tval *a, tval *b, const tval *last, mbl_boundary_result *res,
                          mbl_status *st)
{
    const tval *ref = fabs(last->p - a->p) <= fabs(last->p - b->p) ? a : b;
    double slope = isfinite(ref->df) && ref->df != 0 ? fabs(ref->df) : fabs((b->f - a->f) / (b->p - a->p));
    double z = fmax(sc->opt->sens.zero_tol, 10 * sqrt(DBL_EPSILON)) * last->inside;
    double h = BOUNDARY_OUTSIDE * z / slope, lo = fmin(a->p, b->p), hi = fmax(a->p, b->p);
    double pp[2] = {last->p - h, last->p + h};
    tval q[2];
    for (int k = 0; k < 2; k++) {
        if (!(pp[k] > lo && pp[k] < hi)) return 1;
        mbl_sensitivity *S = NULL;
        int rc = evaluate(sc, pp[k], &S, st);
        if (rc) return rc;
        tg->re = ref->re, tg->im = ref->im, tg->dre = ref->dre, tg->dim = ref->dim;
        target_value(tg, S, pp[k], ref->p, 0, &q[k]);
        mbl_sensitivity_free(S);
        if (q[k].inside > 0 || q[k].landed || q[k].f == 0) return 1;
    }
    if ((q[0].f < 0) == (q[1].f < 0)) return 1;
    res->value = hermite_root(&q[0], &q[1]);
    res->last_step = q[1].p - q[0].p;
    /* its error estimated by the distance to the chord's root (an error of w^2 f'' / (8 f'), far
     * above the interpolant's w^4) */
    double chord = q[0].p + q[0].f / (q[0].f - q[1].f) * (q[1].p - q[0].p);
    res->accuracy = fmax(sc->opt->tol * fmax(1.0, fabs(res->value)), fabs(chord - res->value));
    res->iterations += 2;
    *a = q[0], *b = q[1];
    return 0;
}

/* ---- the answer verified ---------------------------------------------------------------------------- */

/* The answer is checked where the refinement ended: count_plus() must differ on the two sides of
 * it, value -+ d, d = the larger of --tol max(1, |value|) and the distance at which the crossing
 * eigenvalue (the pair) leaves the band where its side is not told (BOUNDARY_OUTSIDE times the
 * zero threshold for an eigenvalue within BOUNDARY_OUTSIDE of it, else AXIS_TOL |s|) at the slope
 * found; d grown VERIFY_GROW times up to VERIFY_TRIES times while the counts agree. The bracket's
 * last ends are used when they are that close. A refinement that followed one branch to one end and another to the other (two real
 * eigenvalues born at a coalescence just before one crosses zero) ends between them, where no
 * eigenvalue changes side: refused. */
#define VERIFY_GROW 10.0
#define VERIFY_TRIES 3


/* A pair at a point where its members are not simple (last->defective: a divergence inside the
 * model's zero cluster, where the pair meets the cyclic coordinates' zeros and rounding splits the
 * multiple zero by far more than the pair's own separation near the boundary: the mechanism rolling
 * disc's four eigenvalues near zero at W = 3.3015148 are +-2.6e-4 +-2.6e-4i, whose discriminant's
 * derivative came out -3613 against the closed form's -63 and ended a Newton step 3.2e-8 short
 * of the boundary with an accuracy of 3.3e-10). The discriminant there, |D|, is of the size of
 * that rounding squared: the points p -+ h with h = PAIR_OUTSIDE^2 |D| / k (k the slope of the
 * chord of the bracket as the search found it, a0 b0: D ten times the rounding's separation; at
 * least --tol, for a point where the pair landed on zero) are evaluated, h grown VERIFY_GROW times
 * while both stay inside the search range (the pair may be simple only beyond the bracket: D is
 * smooth there), until the pair is simple at both and D changes sign between them; the boundary
 * is then their cubic Hermite root, its accuracy the distance to the roots of the quadratics
 * through their values and one derivative each, and 0 is returned (a, b: the two points). 1: not
 * found (the caller goes on as before, and does not ask again: each try costs up to two points
 * per power of ten of the search range). */
#define PAIR_OUTSIDE 10.0
static int refine_outside_pair(search *sc, target *tg, const tval *a0, const tval *b0, tval *a, tval *b,
                               const tval *last, mbl_boundary_result *res, mbl_status *st)
{
    double k = fabs((b0->f - a0->f) / (b0->p - a0->p)), lo = sc->from, hi = sc->to;
    if (!(k > 0) || !isfinite(k)) return 1;
    double h = fmax(PAIR_OUTSIDE * PAIR_OUTSIDE * fabs(last->f) / k, sc->opt->tol * fmax(1.0, fabs(last->p)));
    for (;; h *= VERIFY_GROW) {
        double pp[2] = {last->p - h, last->p + h};
        tval q[2];
        int ok = 1;
        for (int e = 0; e < 2 && ok; e++) {
            if (!(pp[e] > lo && pp[e] < hi)) return 1;
            mbl_sensitivity *S = NULL;
            mbl_status st2; /* beyond the bracket a point may have no solution: not found */
            int rc = evaluate(sc, pp[e], &S, &st2);
            if (rc == MBL_ENOMEM) return mbl_error(st, rc, "%s", st2.msg);
            if (rc) return 1;
            const tval *ref = fabs(pp[e] - a0->p) <= fabs(pp[e] - b0->p) ? a0 : b0;
            tg->re = last->re, tg->im = last->im, tg->dre = ref->dre, tg->dim = ref->dim;
            if (!isfinite(tg->dre) || !isfinite(tg->dim)) tg->dre = tg->dim = NAN;
            target_value(tg, S, pp[e], last->p, 0, &q[e]);
            mbl_sensitivity_free(S);
            ok = !q[e].landed && !q[e].defective && q[e].f != 0;
        }
        res->iterations += 2;
        if (!ok || (q[0].f < 0) == (q[1].f < 0)) continue;
        res->value = hermite_root(&q[0], &q[1]);
        res->last_step = q[1].p - q[0].p;
        /* the accuracy: the distance to the roots of the two quadratics through both values and one
         * end's derivative each (the cubic's error is of higher order than theirs) */
        double dq = fmax(fabs(quadratic_root(&q[0], &q[1], 0) - res->value), fabs(quadratic_root(&q[0], &q[1], 1) - res->value));
        res->accuracy = fmax(sc->opt->tol * fmax(1.0, fabs(res->value)), isfinite(dq) ? dq : fabs(res->last_step));
        if ((q[0].f < 0) == (a0->f < 0)) *a = q[0], *b = q[1];
        else *a = q[1], *b = q[0];
        return 0;
    }
}

static double verify_step(const search *sc, const target *tg, const tval *last, const mbl_boundary_result *res)
{
    const mbl_boundary_options *opt = sc->opt;
    double d = opt->tol * fmax(1.0, fabs(res->value));
    double z = fmax(opt->sens.zero_tol, 10 * sqrt(DBL_EPSILON)) * last->scale;
    double s = hypot(last->re, last->im); /* the zero threshold only for an eigenvalue near it */
    double band = last->band > 0 ? last->band : AXIS_TOL * s;
    double thr = tg->order != 0 ? AXIS_TOL * fmax(fabs(last->im), tg->order * fabs(res->value))
                 : s > BOUNDARY_OUTSIDE * z ? band : fmax(z, band);
    thr *= BOUNDARY_OUTSIDE;
    double k = fabs(res->slope); /* of the pair's discriminant (sigma^2 / 4) for a collision */
    if (isfinite(k) && k > 0) d = fmax(d, tg->pair ? 4 * thr * thr / k : thr / k);
    return d;
}

static int verify(search *sc, const target *tg, const tval *a, const tval *b, const tval *last, int ends_outside,
                  mbl_boundary_result *res, mbl_status *st)
{
    double d = verify_step(sc, tg, last, res), v = res->value;
    /* ends_outside: a and b are refine_outside_pair's points, where the pair is simple and its
     * discriminant has opposite signs: on the axis on one side, off it on the other. That is the
     * change of side (between them, within the multiple zero, the counts are rounding, and a zero
     * split by rounding to +1e-6 may count as unstable on both sides) */
    if (ends_outside && fmin(a->p, b->p) <= v && v <= fmax(a->p, b->p) && (a->f < 0) != (b->f < 0)) {
        res->verified = fmax(fabs(a->p - v), fabs(b->p - v));
        return 0;
    }
    if (a->count >= 0 && b->count >= 0 && a->count != b->count && fmin(a->p, b->p) <= v && v <= fmax(a->p, b->p) &&
        fabs(b->p - a->p) <= 2 * d) {
        res->verified = fmax(fabs(a->p - v), fabs(b->p - v));
        return 0;
    }
    int c[2] = {0, 0};
    for (int t = 0; t < VERIFY_TRIES; t++, d *= VERIFY_GROW) {
        for (int e = 0; e < 2; e++) {
            double p = v + (e ? d : -d);
            mbl_sensitivity *S = NULL;
            int rc = evaluate(sc, p, &S, st);
            if (rc) return rc;
            c[e] = count_plus(S, tg->order, p);
            mbl_sensitivity_free(S);
        }
        if (c[0] != c[1]) {
            res->verified = d;
            return 0;
        }
    }
    d /= VERIFY_GROW;
    return mbl_error(st, MBL_ENOCONV, "boundary: the refinement ended at %s = %.12g, but no eigenvalue changes side "
                     "within %.2g of it (%d %s on both sides): the mode followed changed branches, not sides; "
                     "another --near, or --mode, may find the boundary", sc->param, v, d, c[0],
                     tg->order != 0 ? "above the order line" : "with Re > 0");
}

static int refine(search *sc, target *tg, tval a, tval b, mbl_boundary_result *res, mbl_status *st)
{
    const mbl_boundary_options *opt = sc->opt;
    double wa = a.f, wb = b.f; /* the ends' values as the Illinois method weighs them */
    int stale = 0;             /* which end stayed the last time: -1 a, +1 b */
    tval last = fabs(a.f) <= fabs(b.f) ? a : b, v;
    const tval a0 = a, b0 = b; /* the bracket as found */
    double w_prev = fabs(b.p - a.p);
    int slow = 0, outside = 0, outside_pair = 0, pair_tried = 0;
    for (int it = 0;; it++) {
        double scale = fmax(1.0, fmax(fabs(a.p), fabs(b.p)));
        if ((last.defective || last.landed) && tg->pair && tg->order == 0 && tg->nzkind > 0 && it > 0 && !pair_tried) {
            /* the pair is not simple here: its value and derivative are the multiple zero's rounding
             * (refine_outside_pair; tried once) */
            pair_tried = 1;
            int rc = refine_outside_pair(sc, tg, &a0, &b0, &a, &b, &last, res, st);
            if (rc < 0) return rc;
            if (rc == 0) {
                outside = outside_pair = 1;
                break;
            }
        }
        if (last.landed || last.f == 0) {
            res->value = last.p, res->last_step = 0;
            break;
        }
        if (isfinite(last.df) && last.df != 0 && fabs(last.f / last.df) <= opt->tol * scale &&
            fabs(last.f / last.df) <= fabs(b.p - a.p)) {
            double step = -last.f / last.df;
            res->value = last.p + step, res->last_step = fabs(step);
            last.re += isfinite(last.dre) ? last.dre * step : 0;
            last.im += isfinite(last.dim) ? last.dim * step : 0;
            break;
        }
        if (fabs(b.p - a.p) <= opt->tol * scale) {
            res->value = (a.p * b.f - b.p * a.f) / (b.f - a.f);
            if (!(res->value >= fmin(a.p, b.p) && res->value <= fmax(a.p, b.p))) res->value = 0.5 * (a.p + b.p);
            res->last_step = fabs(b.p - a.p);
            break;
        }
        if (it >= opt->max_iter)
            return mbl_error(st, MBL_ENOCONV, "boundary: did not converge in %d iterations (the bracket of %s is "
                             "[%.12g, %.12g])", opt->max_iter, sc->param, fmin(a.p, b.p), fmax(a.p, b.p));
        int newton = 0;
        double p = slow >= 2 ? 0.5 * (a.p + b.p) : next_point(&a, &b, &last, wa, wb, &newton);
        if (slow >= 2) slow = 0;
        mbl_sensitivity *S = NULL;
        int rc = evaluate(sc, p, &S, st);
        if (rc) return rc;
        const tval *ref = fabs(p - a.p) <= fabs(p - b.p) ? &a : &b;
        if (fabs(p - last.p) < fabs(p - ref->p)) ref = &last;
        double pref = ref->p;
        tg->re = ref->re, tg->im = ref->im, tg->dre = ref->dre, tg->dim = ref->dim;
        if (!isfinite(tg->dre) || !isfinite(tg->dim)) { /* no derivative: the chord of the ends */
            double t = (p - a.p) / (b.p - a.p);
            tg->re = a.re + t * (b.re - a.re), tg->im = a.im + t * (b.im - a.im), tg->dre = tg->dim = NAN;
            pref = p;
        }
        /* the side of p by count_plus() where the ends' counts differ: the value there is the
         * crossing eigenvalue with that sign (a bracket around a coalescence holds two real
         * eigenvalues, one on either side, just past it) */
        int cnt = count_plus(S, tg->order, p), want = 0;
        if (a.count >= 0 && b.count >= 0 && a.count != b.count)
            want = cnt == a.count ? (a.f < 0 ? -1 : 1) : cnt == b.count ? (b.f < 0 ? -1 : 1) : 0;
        target_value(tg, S, p, pref, want, &v);
        mbl_sensitivity_free(S);
        res->iterations = it + 1;
        last = v;
        if (v.inside > 0 && !tg->pair && tg->order == 0 && tg->nzkind > 0) {
            /* the crossing eigenvalue is within the model's zero cluster here (a real eigenvalue
             * through zero beside cyclic coordinates' zeros): its value there is rounding, so the
             * boundary comes from two points just outside the cluster on either side */
            rc = refine_outside(sc, tg, &a, &b, &last, res, st);
            if (rc < 0) return rc;
            if (rc == 0) {
                outside = 1;
                break;
            }
        }
        if (v.landed || v.f == 0) continue;
        /* the Illinois update: the end that keeps its place twice in a row has its weight halved */
        if ((v.f < 0) == (a.f < 0)) {
            a = v, wa = v.f;
            if (stale == 1) wb *= 0.5;
            stale = 1;
        } else {
            b = v, wb = v.f;
            if (stale == -1) wa *= 0.5;
            stale = -1;
        }
        double w = fabs(b.p - a.p);
        slow = w > 0.5 * w_prev ? slow + 1 : 0;
        w_prev = w;
    }
    res->re = outside ? 0 : last.re, res->im = outside ? 0 : last.im;
    /* a double eigenvalue reached exactly has no derivative: the final bracket's chord then */
    res->slope = isfinite(last.df) && !outside ? last.df : b.p != a.p ? (b.f - a.f) / (b.p - a.p) : NAN;
    double big = fmax(hypot(a.re, a.im), hypot(b.re, b.im));
    /* (a pair that lands on the axis away from zero is a flutter boundary, not a divergence) */
    res->divergence = tg->order == 0 && fabs(last.im) <= AXIS_TOL * big;
    if (!(res->accuracy > 0)) res->accuracy = opt->tol * fmax(1.0, fabs(res->value));
    int rc = verify(sc, tg, &a, &b, &last, outside_pair, res, st);
    /* a point taken as on the boundary (its eigenvalue zero, within a zero level, or the pair
     * double) has no step below --tol behind it: its accuracy is the verified one (the
     * equation-level bicycle's capsize 6.02426201895, 3.6e-9 off, took 6e-10 so) */
    if (!rc && res->last_step == 0 && !outside) res->accuracy = fmax(res->accuracy, res->verified);
    return rc;
}

/* ---- the boundary ---------------------------------------------------------------------------------- */

/* The target of branch b between the bracket's ends x and y and its values there: a collision
 * when b goes from the axis to off it and its mirror there is another branch q, else b alone. */
static void target_init(const gpoint *x, const gpoint *y, int b, double order, target *tg, tval *vx, tval *vy,
                        int *q_out)
{
    memset(tg, 0, sizeof *tg);
    tg->order = order;
    tg->zlev = ZERO_REL * fmax(spectrum_scale(x->S), spectrum_scale(y->S));
    int nz = zero_modes(x->S, tg->zlev), nzy = zero_modes(y->S, tg->zlev);
    tg->nzero = nz < nzy ? nz : nzy;
    nz = zero_kind(x->S), nzy = zero_kind(y->S);
    tg->nzkind = nz < nzy ? nz : nzy;
    int q = -1;
    if (order == 0) {
        int sx, sy;
        sides(x, y, b, 0, tg->zlev, &sx, &sy);
        const gpoint *off = sx == 0 || sx == 2 ? y : sy == 0 || sy == 2 ? x : NULL;
        int k = off ? mirror_of(off->S, off->mode[b], tg->zlev) : -1;
        for (int j = 0; k >= 0 && j < off->S->nmode; j++)
            if (off->mode[j] == k) q = j;
    }
    *q_out = q;
    memset(vx, 0, sizeof *vx);
    memset(vy, 0, sizeof *vy);
    vx->p = x->p, vy->p = y->p;
    if (q >= 0) {
        tg->pair = 1;
        pair_value(x->S, x->mode[b], x->mode[q], vx);
        pair_value(y->S, y->mode[b], y->mode[q], vy);
    } else {
        mode_value(x->S, x->mode[b], order, x->p, vx);
        mode_value(y->S, y->mode[b], order, y->p, vy);
    }
    const gpoint *g[2] = {x, y};
    tval *v[2] = {vx, vy};
    for (int e = 0; e < 2; e++) {
        v[e]->scale = spectrum_scale(g[e]->S);
        v[e]->count = q < 0 && g[e]->S->modes[g[e]->mode[b]].kind == MBL_MODE_ZERO ? -1 : count_plus(g[e]->S, order, g[e]->p);
    }
}

typedef struct walk {
    side_grid grid[2];  /* up, down */
    gpoint last[2];     /* the farthest point of each side so far */
    int alive[2];
    double reached[2];  /* the farthest value evaluated */
    char why[2][1024];  /* why a side stopped early */
} walk;

/* Walks the grid outward from g0 until a branch (b >= 0: only b) changes side. On success x and y
 * are the bracket's ends (x nearer near) and *branch the branch; y belongs to the caller, and so
 * does x unless it is g0 itself (x.S == g0->S). */
static int find_bracket(search *sc, const gpoint *g0, walk *w, int b, gpoint *x, gpoint *y, int *branch, mbl_status *st)
{
    const mbl_boundary_options *opt = sc->opt;
    double near = g0->p, best = HUGE_VAL;
    int found_side = -1;
    for (int k = 1; found_side < 0 && (w->alive[0] || w->alive[1]); k++) {
        gpoint cur[2];
        memset(cur, 0, sizeof cur);
        for (int s = 0; s < 2; s++) {
            if (!w->alive[s]) continue;
            if (k > w->grid[s].count) {
                w->alive[s] = 0;
                continue;
            }
            const gpoint *prev = k == 1 ? g0 : &w->last[s];
            cur[s].p = grid_point(&w->grid[s], k);
            mbl_status st2;
            int rc = evaluate(sc, cur[s].p, &cur[s].S, &st2);
            if (!rc) rc = link(prev, &cur[s], &st2);
            if (rc == MBL_ENOMEM) return mbl_error(st, rc, "%s", st2.msg);
            if (rc) {
                w->alive[s] = 0;
                snprintf(w->why[s], sizeof w->why[s], "%s", st2.msg);
                gpoint_free(&cur[s]);
                continue;
            }
            w->reached[s] = cur[s].p;
            for (int j = 0; j < g0->S->nmode; j++) {
                if (b >= 0 && j != b) continue;
                double r = sign_change(prev, &cur[s], j, opt->order);
                if (isfinite(r) && fabs(r - near) < best) best = fabs(r - near), found_side = s, *branch = j;
            }
        }
        /* `near` itself on the boundary (its crossing eigenvalue within the zero level): the
         * change shows between the first points of the two sides */
        for (int j = 0; k == 1 && found_side < 0 && cur[0].S && cur[1].S && j < g0->S->nmode; j++)
            if ((b < 0 || j == b) && isfinite(sign_change(&cur[1], &cur[0], j, opt->order))) found_side = 2, *branch = j;
        if (found_side == 2) {
            *x = cur[1], *y = cur[0];
            break;
        }
        for (int s = 0; s < 2; s++) {
            if (!cur[s].S) continue;
            if (s == found_side) {
                *x = k == 1 ? *g0 : w->last[s];
                *y = cur[s];
                if (k > 1) memset(&w->last[s], 0, sizeof w->last[s]);
            } else {
                gpoint_free(&w->last[s]);
                w->last[s] = cur[s];
            }
        }
    }
    return found_side >= 0 ? 0 : 1;
}

/* the one-line reason no boundary was found */
static int no_boundary(const search *sc, const walk *w, double near, int b, mbl_status *st)
{
    const mbl_boundary_options *opt = sc->opt;
    char mode[48] = "", stop[1200] = "";
    if (b >= 0) snprintf(mode, sizeof mode, " of mode %d", b + 1);
    for (int s = 0; s < 2; s++)
        if (w->why[s][0] && !stop[0])
            snprintf(stop, sizeof stop, "; the search stopped at %s = %.6g: %s", sc->param, w->reached[s], w->why[s]);
    double lo = fmin(w->reached[0], w->reached[1]), hi = fmax(w->reached[0], w->reached[1]);
    lo = fmin(lo, near), hi = fmax(hi, near);
    return mbl_error(st, MBL_EMODEL,
                     "boundary: no boundary%s for %s in [%.6g, %.6g] (%s; %d points)%s; another search range may find one",
                     mode, sc->param, lo, hi,
                     opt->order != 0 ? "no frequency meets the order line"
                                     : "no real part changes sign, no two eigenvalues leave the imaginary axis",
                     sc->points, stop);
}

/* the search range: the user's, or near / 3 .. 3 near (-1 .. 1 about zero) */
static int search_range(const mbl_boundary_options *opt, double near, double *from, double *to, mbl_status *st)
{
    *from = opt->from, *to = opt->to;
    if (isnan(*from)) *from = near > 0 ? near / 3 : near < 0 ? 3 * near : -1;
    if (isnan(*to)) *to = near > 0 ? 3 * near : near < 0 ? near / 3 : 1;
    if (!isfinite(*from) || !isfinite(*to) || !(*from < *to))
        return mbl_error(st, MBL_EARG, "boundary: the range [%g, %g] is empty or not finite", *from, *to);
    if (!(near >= *from && near <= *to))
        return mbl_error(st, MBL_EARG, "boundary: --near %g is outside the range [%g, %g]", near, *from, *to);
    return 0;
}

/* the named mode's index at near (0-based) into *b, or -1 when none is named */
static int named_mode(const mbl_model *model, const mbl_sensitivity *S, const mbl_boundary_options *opt,
                      const char *param, double near, int *b, mbl_status *st)
{
    const mbl_mode_spec *sp = &opt->mode;
    *b = -1;
    if (sp->index <= 0 && !sp->shape && sp->branch <= 0) return 0;
    int rc = mbl_mode_pick(model, S, sp, param, near, b, st);
    if (rc) return rc;
    /* (a zero mode may be crossing right at `near`: the walk tells) */
    if (opt->order != 0 && side(&S->modes[*b], opt->order, near, 0) == 2)
        return mbl_error(st, MBL_EMODEL, "boundary: mode %d at %s = %g does not oscillate: it meets no order line",
                         *b + 1, param, near);
    return 0;
}

/* 1: S has a mode that is neither simple nor zero (mbl_sens_mode.defined 0, kind not zero) */
static int clustered(const mbl_sensitivity *S)
{
    for (int k = 0; k < S->nmode; k++)
        if (!S->modes[k].defined && S->modes[k].kind != MBL_MODE_ZERO && isfinite(S->modes[k].re)) return 1;
    return 0;
}

static int boundary_run(const mbl_model *model, search *sc, double near, mbl_boundary_result *res, mbl_status *st)
{
    const mbl_boundary_options *opt = sc->opt;
    double from, to;
    int rc = search_range(opt, near, &from, &to, st);
    if (rc) return rc;
    sc->from = fmin(from, to), sc->to = fmax(from, to);
    gpoint g0 = {near, NULL, NULL}, x = {0, NULL, NULL}, y = {0, NULL, NULL};
    walk w;
    memset(&w, 0, sizeof w);
    rc = evaluate(sc, near, &g0.S, st);
    /* `near` inside a multiple eigenvalue (a mode neither simple nor zero: the mechanism rolling disc
     * at its critical speed, where the wobble pair meets four zeros and rounding splits them by
     * 2.6e-4): its eigenvalues are that rounding, no start to track the modes from (the walk
     * bracketed a false flutter 2.9 % away); the walk starts half a grid step above instead, so a
     * boundary at `near` lies between that start and its first neighbour below */
    double shifted = near + 0.5 * GRID_STEP * (near != 0 ? fabs(near) : (to - from) / 33);
    if (!rc && clustered(g0.S) && shifted < to) {
        gpoint_free(&g0);
        g0.p = near = shifted;
        rc = evaluate(sc, near, &g0.S, st);
    }
    int b = -1, branch = -1;
    if (!rc) rc = named_mode(model, g0.S, opt, sc->param, near, &b, st);
    if (!rc && !(g0.mode = mbl_alloc_array((size_t)g0.S->nmode + 1, sizeof *g0.mode)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) {
        gpoint_free(&g0);
        return rc;
    }
    for (int j = 0; j < g0.S->nmode; j++) g0.mode[j] = j;
    grid_init(&w.grid[0], near, to);
    grid_init(&w.grid[1], near, from);
    w.alive[0] = w.alive[1] = 1;
    w.reached[0] = w.reached[1] = near;
    rc = find_bracket(sc, &g0, &w, b, &x, &y, &branch, st);
    if (rc > 0) rc = no_boundary(sc, &w, near, b, st);
    if (!rc) {
        target tg;
        tval vx, vy;
        int q;
        target_init(&x, &y, branch, opt->order, &tg, &vx, &vy, &q);
        res->collision = tg.pair;
        res->mode_near = (q >= 0 && q < branch ? q : branch) + 1;
        tval vn;
        if (tg.pair) pair_value(g0.S, branch, q, &vn);
        else mode_value(g0.S, branch, opt->order, near, &vn);
        res->f_near = vn.f;
        /* an end on the axis with no sign change against the other: the boundary is that end */
        if ((vx.f > 0) == (vy.f > 0) && vx.f != 0 && vy.f != 0) {
            tval *on = fabs(vx.f) <= fabs(vy.f) ? &vx : &vy;
            on->landed = 1;
        }
        rc = refine(sc, &tg, vx, vy, res, st);
        res->lo = fmin(x.p, y.p), res->hi = fmax(x.p, y.p);
    }
    if (x.S != g0.S) gpoint_free(&x);
    gpoint_free(&y), gpoint_free(&g0);
    for (int s = 0; s < 2; s++) gpoint_free(&w.last[s]);
    res->points = sc->points;
    return rc;
}

int mbl_boundary(const mbl_model *model, const mbl_setting *sets_in, int nsets_in, const char *param, double near,
                 const mbl_boundary_options *opt_in, mbl_boundary_result *res, mbl_status *st)
{
    if (!model || !param || !res || (nsets_in > 0 && !sets_in) || nsets_in < 0)
        return mbl_error(st, MBL_EARG, "mbl_boundary: NULL or invalid argument");
    memset(res, 0, sizeof *res);
    if (!isfinite(near)) return mbl_error(st, MBL_EARG, "boundary: --near must be a finite number");
    mbl_boundary_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_boundary_options_default(&opt);
    if (!(opt.tol > 0)) opt.tol = 1e-10;
    if (opt.max_iter <= 0) opt.max_iter = 50;
    if (!(opt.order >= 0) || !isfinite(opt.order))
        return mbl_error(st, MBL_EARG, "boundary: the order %g is not a number >= 0 (0: the real part crosses zero)",
                         opt.order);
    /* the user's settings without `param`, then param = p last */
    mbl_setting *sets = mbl_alloc_array((size_t)nsets_in + 1, sizeof *sets);
    if (!sets) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int nsets = 0;
    for (int i = 0; i < nsets_in; i++)
        if (strcmp(sets_in[i].name, param)) sets[nsets++] = sets_in[i];
    nsets++;
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    int found = 0, rc;
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(model, i), param)) found = 1;
    if (!found) {
        rc = mbl_error(st, MBL_EARG, "%s: the model has no parameter '%s'", info.file, param);
    } else {
        double from, to;
        search sc = {model, sets, nsets, param, &opt, 0, 0, 0};
        if (opt.floquet) rc = search_range(&opt, near, &from, &to, st);
        if (opt.floquet && !rc) rc = study_floquet_boundary(model, sets, nsets, param, near, from, to, &opt, res, st);
        else if (!opt.floquet) rc = boundary_run(model, &sc, near, res, st);
        if (!rc && opt.floquet) res->accuracy = res->verified = 0.5 * res->last_step; /* bisection's bracket */
    }
    mbl_free(sets);
    return rc;
}
