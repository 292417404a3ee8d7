/* Stability boundaries: the parameter value where a mode's real part crosses zero, or where its
 * damped frequency meets an order line omega = order * p (a critical speed), by Newton's method
 * with the exact sensitivities of src/study/sensitivity.c (docs/study.md).
 *
 * At every iterate the caller's model's file is loaded again with the parameter set (so every
 * parameter computed from it follows, exactly as `--set` does), the operating point found, and the eigenvalues and
 * their derivatives computed. The mode is tracked from one iterate to the next by the
 * sensitivity predictor: the eigenvalue nearest s + ds/dp (p_new - p). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/sensitivity.h"

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

/* Eigenvalues and their derivatives with respect to parameter `name` at value p. */
static int evaluate(const char *path, mbl_setting *sets, int nsets, const char *name, double p,
                    const mbl_boundary_options *opt, mbl_sensitivity **out, mbl_status *st)
{
    *out = NULL;
    sets[nsets - 1].name = name;
    sets[nsets - 1].value = p;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    int rc = mbl_model_load_file(path, sets, nsets, &md, st);
    if (rc) return rc;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int idx = -1;
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), name)) idx = i;
    rc = mbl_operating_point(md, &opt->opoint, &pt, st);
    if (!rc) rc = mbl_dae_deriv_new(md, &dd, st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, &idx, 1, &opt->sens, out, st);
    if (rc) mbl_error_prefix(st, "at %s = %.17g", name, p);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
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

/* ---- collisions: a conservative (Hamiltonian) spectrum ------------------------------------------
 * Undamped gyroscopic and conservative models have spectra symmetric about the imaginary axis
 * (with s also -conj(s)): no real part moves off zero alone, so the Newton iteration on Re s above
 * has nothing to follow. Stability is lost where two imaginary eigenvalues i w1, i w2 meet and
 * leave the axis as sigma + i w, -sigma + i w (flutter; w = 0: divergence, i w and -i w meeting at
 * zero). The discriminant of the pair, D = (s1 - s2)^2, is analytic through the collision (a
 * symmetric function of the two eigenvalues), -(w1 - w2)^2 on the stable side and 4 sigma^2 on the
 * unstable one: its root is the boundary, by Newton with dD/dp = 2 (s1 - s2)(s1' - s2'), finite
 * though s1' and s2' grow like 1/sqrt(D). The pair is tracked through the collision by its centre
 * (s1 + s2) / 2, analytic too, predicted by its derivative. */

/* Tolerances of the pair picker, relative to each eigenvalue's own magnitude (never to the largest
 * in the spectrum: one far eigenvalue must not blur the others): a real part within PAIR_TOL of
 * |s| is on the axis, two eigenvalues within PAIR_TOL of the larger magnitude are one. */
#define PAIR_TOL 1e-8

static double own_tol(const mbl_sens_mode *a, const mbl_sens_mode *b)
{
    double ma = hypot(a->re, a->im), mb = b ? hypot(b->re, b->im) : 0.0;
    return PAIR_TOL * fmax(ma, mb);
}

/* Spectrum symmetric about the imaginary axis: every eigenvalue's mirror -conj(s) is in it. */
static int hamiltonian(const mbl_sensitivity *S)
{
    int any = 0;
    for (int i = 0; i < S->nmode; i++) any |= hypot(S->modes[i].re, S->modes[i].im) > 0;
    if (!any) return 0;
    for (int i = 0; i < S->nmode; i++) {
        const mbl_sens_mode *a = &S->modes[i];
        if (a->kind == MBL_MODE_ZERO || fabs(a->re) <= own_tol(a, NULL)) continue; /* on the axis: its own mirror */
        int found = 0;
        for (int j = 0; j < S->nmode && !found; j++)
            found = j != i && hypot(S->modes[j].re + a->re, S->modes[j].im - a->im) <= own_tol(a, &S->modes[j]);
        if (!found) return 0;
    }
    return 1;
}

typedef struct pair_fn {
    int i, j;             /* the two modes */
    double D, dD;         /* Re (s_i - s_j)^2 and its derivative */
    double cre, cim, dcre, dcim; /* the centre and its derivative */
} pair_fn;

static void pair_eval(const mbl_sensitivity *S, int i, int j, pair_fn *f)
{
    const mbl_sens_mode *a = &S->modes[i], *b = &S->modes[j];
    double dr = a->re - b->re, di = a->im - b->im, ddr = a->dre[0] - b->dre[0], ddi = a->dim[0] - b->dim[0];
    f->i = i, f->j = j;
    f->D = dr * dr - di * di;
    f->dD = 2 * (dr * ddr - di * ddi);
    f->cre = 0.5 * (a->re + b->re), f->cim = 0.5 * (a->im + b->im);
    f->dcre = 0.5 * (a->dre[0] + b->dre[0]), f->dcim = 0.5 * (a->dim[0] + b->dim[0]);
}

/* The candidate pairs of a Hamiltonian spectrum, upper half plane: neighbouring frequencies on the
 * axis (i w1, i w2), a mode with its negative (i w, -i w: divergence), a mode off the axis with its
 * mirror (sigma + i w, -sigma + i w). Picks the one whose centre is nearest (pre, pim) when
 * track, else the one with the shortest Newton step, or the pair of mode `want` (0-based) when
 * want >= 0. -1 when there is none. */
static int pick_pair(const mbl_sensitivity *S, int track, double pre, double pim, int want, pair_fn *out)
{
    double best = HUGE_VAL;
    int found = 0;
    for (int i = 0; i < S->nmode; i++) {
        const mbl_sens_mode *a = &S->modes[i];
        if (!a->defined || a->kind == MBL_MODE_ZERO || a->im < -own_tol(a, NULL)) continue;
        for (int j = 0; j < S->nmode; j++) {
            const mbl_sens_mode *b = &S->modes[j];
            if (j == i || !b->defined || b->kind == MBL_MODE_ZERO) continue;
            double tol = own_tol(a, b);
            int on_axis = fabs(a->re) <= own_tol(a, NULL) && fabs(b->re) <= own_tol(b, NULL);
            int ok;
            if (on_axis) /* neighbours above (j higher), or the negative of i for a divergence */
                ok = (b->im > a->im + tol) || (fabs(b->im + a->im) <= tol && a->im > tol);
            else /* the mirror: -conj(s_i), with s_i in the right half plane */
                ok = a->re > tol && hypot(b->re + a->re, b->im - a->im) <= tol;
            if (!ok) continue;
            if (on_axis && b->im > a->im + tol) { /* only the next frequency up */
                int between = 0;
                for (int k = 0; k < S->nmode && !between; k++)
                    between = k != i && k != j && S->modes[k].im > a->im + tol && S->modes[k].im < b->im - tol &&
                              fabs(S->modes[k].re) <= own_tol(&S->modes[k], NULL) && S->modes[k].kind != MBL_MODE_ZERO;
                if (between) continue;
            }
            pair_fn f;
            pair_eval(S, i, j, &f);
            if (!isfinite(f.D) || !isfinite(f.dD) || !isfinite(f.dcim)) continue;
            double score;
            if (want >= 0) score = (i == want || j == want) ? fabs(f.D / f.dD) : HUGE_VAL;
            else if (track) score = hypot(f.cre - pre, f.cim - pim);
            else score = f.dD != 0 ? fabs(f.D / f.dD) : HUGE_VAL;
            if (score < best) best = score, *out = f, found = 1;
        }
    }
    return found ? 0 : -1;
}

static int collision(const char *path, mbl_setting *sets, int nsets, const char *param, double near,
                     const mbl_boundary_options *opt, mbl_sensitivity *S, mbl_boundary_result *res, mbl_status *st)
{
    pair_fn f;
    if (pick_pair(S, 0, 0, 0, opt->mode.index > 0 ? opt->mode.index - 1 : -1, &f)) {
        mbl_sensitivity_free(S);
        return mbl_error(st, MBL_EMODEL,
                         "boundary: the spectrum at %s = %g is conservative (symmetric about the imaginary axis) and no "
                         "two eigenvalues%s can meet: no collision to follow", param, near,
                         opt->mode.index > 0 ? " with the given mode" : "");
    }
    res->collision = 1;
    res->mode_near = f.i + 1;
    res->f_near = f.D;
    double p = near, reach = fmax(1.0, fabs(near));
    int rc = 0;
    for (int it = 0;; it++) {
        if (!(f.dD != 0) || !isfinite(f.dD)) {
            rc = mbl_error(st, MBL_EMODEL, "boundary: the two frequencies do not approach each other as %s changes at %s = "
                           "%.12g: no collision to find", param, param, p);
            break;
        }
        double step = -f.D / f.dD;
        res->value = p + step;
        res->re = f.cre + f.dcre * step, res->im = f.cim + f.dcim * step;
        res->slope = f.dD;
        res->iterations = it + 1;
        res->last_step = fabs(step);
        if (fabs(step) <= opt->tol * fmax(1.0, fabs(p))) break;
        if (it + 1 >= opt->max_iter) {
            rc = mbl_error(st, MBL_ENOCONV, "boundary: Newton did not converge in %d iterations (%s = %.12g, last step %.3g)",
                           opt->max_iter, param, p, step);
            break;
        }
        double pn = p + step;
        if (fabs(pn - near) > reach) {
            rc = mbl_error(st, MBL_EMODEL,
                           "boundary: no collision near %s = %g (Newton went to %.6g, farther than %g from it: the two "
                           "frequencies do not meet nearby)", param, near, pn, reach);
            break;
        }
        double pre = f.cre + f.dcre * step, pim = f.cim + f.dcim * step;
        mbl_sensitivity *S2 = NULL;
        rc = evaluate(path, sets, nsets, param, pn, opt, &S2, st);
        if (rc) break;
        mbl_sensitivity_free(S);
        S = S2;
        if (pick_pair(S, 1, pre, pim, -1, &f)) {
            /* the pair is no longer two simple eigenvalues: it met (a double eigenvalue, flutter)
             * or reached zero (a divergence); a step already in Newton's quadratic phase (the next
             * one below tol) landed on the boundary. Whether the landing point is exactly double
             * or a hair off is the BLAS kernel's rounding: both are the boundary. */
            if (fabs(step) <= sqrt(opt->tol) * fmax(1.0, fabs(p))) break;
            rc = mbl_error(st, MBL_EMODEL, "boundary: the colliding pair is lost at %s = %.12g (an eigenvalue became zero "
                           "or repeated)", param, pn);
            break;
        }
        p = pn;
    }
    mbl_sensitivity_free(S);
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
    /* the user's settings without `param`, then param = p last */
    mbl_setting *sets = mbl_alloc_array((size_t)nsets_in + 1, sizeof *sets);
    if (!sets) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int nsets = 0;
    for (int i = 0; i < nsets_in; i++)
        if (strcmp(sets_in[i].name, param)) sets[nsets++] = sets_in[i];
    nsets++;
    /* is it a parameter of the model? */
    int rc = 0;
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    const char *path = info.file;
    int found = 0;
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(model, i), param)) found = 1;
    if (!found) {
        rc = mbl_error(st, MBL_EARG, "%s: the model has no parameter '%s'", path, param);
        goto done;
    }
    mbl_sensitivity *S = NULL;
    rc = evaluate(path, sets, nsets, param, near, &opt, &S, st);
    if (rc) goto done;
    if (opt.order == 0 && hamiltonian(S)) {
        rc = collision(path, sets, nsets, param, near, &opt, S, res, st);
        goto done;
    }
    /* the mode: given, or the simple one with the crossing function nearest zero */
    int t = -1;
    if (opt.mode.index > 0) {
        if (opt.mode.index > S->nmode) {
            rc = mbl_error(st, MBL_EARG, "boundary: mode %d asked for, the model has %d at %s = %g", opt.mode.index, S->nmode,
                           param, near);
            mbl_sensitivity_free(S);
            goto done;
        }
        t = opt.mode.index - 1;
        if (!S->modes[t].defined) {
            rc = mbl_error(st, MBL_EMODEL, "boundary: mode %d is zero or repeated at %s = %g: no derivative to follow",
                           opt.mode.index, param, near);
            mbl_sensitivity_free(S);
            goto done;
        }
    } else {
        double best = HUGE_VAL;
        for (int i = 0; i < S->nmode; i++) {
            const mbl_sens_mode *m = &S->modes[i];
            if (!m->defined || m->kind == MBL_MODE_ZERO || m->im < 0) continue;
            if (opt.order != 0 && m->im == 0) continue;
            double f, df;
            crossing(m, opt.order, near, &f, &df);
            if (!(df != 0) || !isfinite(df)) continue;
            if (fabs(f) < best) best = fabs(f), t = i;
        }
        if (t < 0) {
            rc = mbl_error(st, MBL_EMODEL, "boundary: no simple mode %s at %s = %g",
                           opt.order != 0 ? "with a frequency that moves relative to the order line" : "whose real part moves",
                           param, near);
            mbl_sensitivity_free(S);
            goto done;
        }
    }
    res->mode_near = t + 1;
    double p = near, f, df;
    crossing(&S->modes[t], opt.order, p, &f, &df);
    res->f_near = f;
    double reach = fmax(1.0, fabs(near)); /* how far from `near` the crossing may be */
    for (int it = 0;; it++) {
        const mbl_sens_mode *m = &S->modes[t];
        crossing(m, opt.order, p, &f, &df);
        if (!(df != 0) || !isfinite(df)) {
            rc = mbl_error(st, MBL_EMODEL, "boundary: the mode's %s does not move with %s at %s = %.12g: no crossing to find",
                           opt.order != 0 ? "frequency relative to the order line" : "real part", param, param, p);
            break;
        }
        double step = -f / df;
        res->value = p + step;
        res->re = m->re;
        res->im = m->im;
        res->slope = df;
        res->iterations = it + 1;
        res->last_step = fabs(step);
        if (fabs(step) <= opt.tol * fmax(1.0, fabs(p))) break;
        if (it + 1 >= opt.max_iter) {
            rc = mbl_error(st, MBL_ENOCONV, "boundary: Newton did not converge in %d iterations (%s = %.12g, last step %.3g)",
                           opt.max_iter, param, p, step);
            break;
        }
        double pn = p + step;
        if (fabs(pn - near) > reach) {
            rc = mbl_error(st, MBL_EMODEL,
                           "boundary: no crossing near %s = %g (Newton went to %.6g, farther than %g from it: the mode %s)",
                           param, near, pn, reach,
                           opt.order != 0 ? "does not meet the order line nearby" : "does not change stability nearby");
            break;
        }
        double pre = m->re + m->dre[0] * step, pim = m->im + m->dim[0] * step;
        mbl_sensitivity *S2 = NULL;
        rc = evaluate(path, sets, nsets, param, pn, &opt, &S2, st);
        if (rc) break;
        int best = -1;
        double dbest = HUGE_VAL;
        for (int i = 0; i < S2->nmode; i++) {
            double dd = hypot(S2->modes[i].re - pre, S2->modes[i].im - pim);
            if (dd < dbest) dbest = dd, best = i;
        }
        mbl_sensitivity_free(S);
        S = S2;
        if (best < 0 || !S->modes[best].defined) {
            rc = mbl_error(st, MBL_EMODEL, "boundary: the tracked mode became zero or repeated at %s = %.12g", param, pn);
            break;
        }
        t = best;
        p = pn;
    }
    mbl_sensitivity_free(S);
done:
    mbl_free(sets);
    return rc;
}
