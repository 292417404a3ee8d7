/* One evaluation of a design (docs/optimize.md): the model copied with the design's values, its
 * operating point, the modes with their exact derivatives (the point's shift included,
 * mbl_sensitivity_compute), the modes tracked from the previous evaluation, and the objective and
 * constraints with their gradients in the scaled variables. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/sweep.h"
#include "opt/opt_internal.h"

/* the design in words for messages: "k2=0.0453, c2=0.0208" */
static void design_text(const opt_ctx *c, const double *p, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (int j = 0; j < c->np && o < len; j++) {
        int w = snprintf(buf + o, len - o, "%s%s=%.10g", j ? ", " : "", c->o->params[j].name, p[j]);
        if (w < 0) break;
        o += (size_t)w;
    }
}

/* the model at design p: its operating point and the modes' sensitivities */
static int compute_point(opt_ctx *c, const double *p, mbl_sensitivity **out, mbl_status *st)
{
    *out = NULL;
    for (int j = 0; j < c->np; j++) c->sets[c->nsets - c->np + j].value = p[j];
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    so.shapes = c->shapes;
    int rc = mbl_model_copy(c->model, c->sets, c->nsets, &md, st);
    if (!rc && (rc = mbl_operating_point(md, &c->o->opoint, &pt, st)))
        mbl_error_prefix(st, "the operating point was lost");
    int yout = 0; /* a peak to an output of the file's outputs: their derivatives too */
    for (int g = 0; !rc && g <= c->o->nconstraints; g++) {
        const mbl_opt_goal *gl = g ? &c->o->constraints[g - 1] : &c->o->objective;
        yout |= gl->kind == MBL_OPT_PEAK && opt_frf_output(md, gl) >= 0;
    }
    if (!rc) rc = yout ? mbl_dae_deriv_new_outputs(md, &dd, st) : mbl_dae_deriv_new(md, &dd, st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, c->idx, c->np, &so, out, st);
    for (int w = 0; !rc && w < c->np; w++)
        if (!(*out)->point_defined[w])
            rc = mbl_error(st, MBL_EMODEL, "the operating point does not persist as %s changes (a singular configuration)",
                           c->o->params[w].name);
    if (!rc && c->nmode >= 0 && (*out)->nmode != c->nmode)
        rc = mbl_error(st, MBL_EMODEL, "the model has %d modes here, %d at the start", (*out)->nmode, c->nmode);
    for (int g = 0; !rc && g <= c->o->nconstraints; g++) { /* the frequency-response peaks, critical speeds */
        const mbl_opt_goal *gl = g ? &c->o->constraints[g - 1] : &c->o->objective;
        size_t o = (size_t)g * OPT_FRF_PEAKS;
        if (gl->kind == MBL_OPT_CRITICAL) rc = opt_critical(c, gl, &c->crit_near[g], c->pk_val + o, c->pk_grad + o * c->np, st);
        if (!rc && c->ex[g]) rc = opt_expr_point(c, c->ex[g], md, dd, pt, st); /* its derived parameters */
        if (gl->kind != MBL_OPT_PEAK) continue;
        rc = opt_frf_peaks(c, md, dd, pt, *out, gl, c->pk_val + o, c->pk_grad + o * c->np, c->pk_hz + o, st);
        for (int k = 0; k < OPT_FRF_PEAKS; k++) c->pk_hz[o + k] /= 2 * 3.14159265358979323846;
    }
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    if (rc) {
        mbl_sensitivity_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Follow every branch from the previous evaluation (c->S at c->p) to S at p: the tracking of
 * the sweeps with the eigenvalues and shapes predicted along the step from their exact
 * derivatives. A goal's mode whose best match falls below min_mac is lost. */
static int track(opt_ctx *c, const mbl_sensitivity *S, const double *p, mbl_status *st)
{
    const mbl_sensitivity *A = c->S;
    const double *pa = c->p;
    int nm = c->nmode, n = S->n, sh = c->shapes, rc = 0;
    size_t nn = (size_t)2 * nm, ns = sh ? nn * (size_t)n : 1;
    double *lre = mbl_alloc_array(6 * nn + 1, sizeof *lre);
    double *shp = mbl_alloc_array(4 * ns, sizeof *shp);
    int *perm = mbl_alloc_array(nn + 1, sizeof *perm);
    if (!lre || !shp || !perm) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    double *lim = lre + nn, *dre = lim + nn, *dim = dre + nn, *mac = dim + nn, *x = mac + nn;
    double *sre = shp, *sim = sre + ns, *dsre = sim + ns, *dsim = dsre + ns;
    x[0] = 0, x[1] = 1;
    for (int k = 0; k < 2; k++) {
        const mbl_sensitivity *B = k ? S : A;
        for (int j = 0; j < nm; j++) {
            const mbl_sens_mode *m = &B->modes[j];
            size_t o = (size_t)k * nm + j;
            double dr = 0, di = 0;
            for (int w = 0; w < c->np; w++) dr += m->dre[w] * (p[w] - pa[w]), di += m->dim[w] * (p[w] - pa[w]);
            lre[o] = m->re, lim[o] = m->im, dre[o] = k ? NAN : dr, dim[o] = k ? NAN : di;
            for (int i = 0; sh && i < n; i++) {
                size_t q = o * n + i, q0 = i + (size_t)n * j;
                double ar = 0, ai = 0;
                for (int w = 0; !k && B->dshape_re && w < c->np; w++) {
                    size_t qd = i + (size_t)n * (j + (size_t)nm * w);
                    ar += B->dshape_re[qd] * (p[w] - pa[w]), ai += B->dshape_im[qd] * (p[w] - pa[w]);
                }
                sre[q] = B->shape_re[q0], sim[q] = B->shape_im[q0], dsre[q] = k ? NAN : ar, dsim[q] = k ? NAN : ai;
            }
        }
    }
    rc = mbl_track_modes_pred(2, nm, n, lre, lim, dre, dim, sh ? sre : NULL, sh ? sim : NULL, sh ? dsre : NULL,
                              sh ? dsim : NULL, x, NULL, 1.0, perm, mac, st);
    if (rc) goto done;
    int ngoal = 1 + c->o->nconstraints;
    for (int b = 0; b < nm; b++) {
        int bb = 0;
        while (bb < nm && perm[bb] != c->branch[b]) bb++;
        int was = c->branch[b];
        c->branch[b] = perm[nm + bb];
        for (int g = 0; g < ngoal && !rc; g++) {
            if (c->goal_branch[g] != b) continue;
            int start = (g ? c->o->constraints[g - 1].mode : c->o->objective.mode);
            if (sh && mac[nm + bb] < c->o->min_mac) {
                char d[256];
                design_text(c, p, d, sizeof d);
                rc = mbl_error(st, MBL_EMODEL,
                               "mode %d of the start is lost at %s: its best match has MAC %.3g with the shape predicted "
                               "from the previous design (below min_mac %g)",
                               start, d, mac[nm + bb], c->o->min_mac);
            } else if (c->branch[b] != was) {
                c->crossings++;
                snprintf(c->note, sizeof c->note, "mode %d of the start is now listed as mode %d (followed by its shape)",
                         start, c->branch[b] + 1);
            }
        }
    }
done:
    mbl_free(lre);
    mbl_free(shp);
    mbl_free(perm);
    return rc;
}

int opt_goal_check(const mbl_opt_goal *g, int objective, int nmode, mbl_status *st)
{
    const char *what = objective ? "the objective" : "a constraint";
    int named = g->kind == MBL_OPT_FREQ || g->kind == MBL_OPT_DAMPING || g->kind == MBL_OPT_REAL || g->kind == MBL_OPT_ORDER;
    if (g->kind < MBL_OPT_FREQ || g->kind > MBL_OPT_MAX_REAL) return mbl_error(st, MBL_EARG, "%s: unknown kind %d", what, g->kind);
    if (objective ? (g->sense < MBL_OPT_MINIMIZE || g->sense > MBL_OPT_TARGET)
                  : (g->sense < MBL_OPT_GE || g->sense > MBL_OPT_OUTSIDE))
        return mbl_error(st, MBL_EARG, "%s: sense %d is not one of an %s", what, g->sense,
                         objective ? "objective (minimize, maximize, target)" : "constraint (>=, <=, outside a band)");
    if (g->kind == MBL_OPT_MIN_DAMPING && g->sense != (objective ? MBL_OPT_MAXIMIZE : MBL_OPT_GE))
        return mbl_error(st, MBL_EARG, "%s: the least damping ratio can only be %s", what,
                         objective ? "maximized" : "bounded from below (>=)");
    if (g->kind == MBL_OPT_MAX_REAL && g->sense != (objective ? MBL_OPT_MINIMIZE : MBL_OPT_LE))
        return mbl_error(st, MBL_EARG, "%s: the largest real part can only be %s", what,
                         objective ? "minimized" : "bounded from above (<=)");
    if (g->kind == MBL_OPT_PEAK && g->sense != (objective ? MBL_OPT_MINIMIZE : MBL_OPT_LE))
        return mbl_error(st, MBL_EARG, "%s: a frequency-response peak can only be %s", what,
                         objective ? "minimized" : "bounded from above (<=)");
    if (g->kind == MBL_OPT_PEAK && !(g->input && g->output && g->band[0] > 0 && g->band[0] < g->band[1] && isfinite(g->band[1])))
        return mbl_error(st, MBL_EARG, "%s: a peak needs an input, a coordinate and a band 0 < f1 < f2 (Hz)", what);
    if (g->kind == MBL_OPT_PEAK && !objective && !(g->a > 0))
        return mbl_error(st, MBL_EARG, "%s: a peak's bound must be positive", what);
    if (g->kind == MBL_OPT_EXPR && !g->expr) return mbl_error(st, MBL_EARG, "%s: an expression goal needs the expression", what);
    if (g->kind == MBL_OPT_CRITICAL && !(g->speed && g->mode >= 1 && g->order > 0 && isfinite(g->order) && g->near > 0 &&
                                         isfinite(g->near)))
        return mbl_error(st, MBL_EARG, "%s: a critical speed needs a speed parameter, a mode >= 1, an order > 0 and "
                                       "where to start (> 0)", what);
    if (g->kind == MBL_OPT_CRITICAL && g->sense != MBL_OPT_OUTSIDE && g->sense >= MBL_OPT_TARGET && !(g->a != 0))
        return mbl_error(st, MBL_EARG, "%s: a critical speed's bound or target must be nonzero", what);
    if (g->kind == MBL_OPT_ORDER && !(g->speed && g->order > 0 && isfinite(g->order)))
        return mbl_error(st, MBL_EARG, "%s: an order line needs a speed parameter and an order > 0", what);
    if (g->kind == MBL_OPT_ORDER && g->sense == MBL_OPT_TARGET)
        return mbl_error(st, MBL_EARG, "%s: a distance from an order line can be minimized, maximized or bounded, "
                                       "not targeted", what);
    if (named && (g->mode < 1 || (nmode >= 0 && g->mode > nmode)))
        return mbl_error(st, MBL_EARG, "%s: mode %d is not one of the model's modes 1..%d", what, g->mode, nmode);
    if ((g->sense == MBL_OPT_TARGET || (g->kind == MBL_OPT_FREQ && g->sense >= MBL_OPT_GE)) && !(g->a != 0 && isfinite(g->a)))
        return mbl_error(st, MBL_EARG, "%s: a frequency bound or target must be a nonzero number", what);
    if (g->sense == MBL_OPT_OUTSIDE && !(g->a < g->b && isfinite(g->b)))
        return mbl_error(st, MBL_EARG, "%s: the band [%g, %g] needs a < b", what, g->a, g->b);
    return 0;
}

int opt_constraint_count(const opt_ctx *c)
{
    int n = 0;
    for (int i = 0; i < c->o->nconstraints; i++) {
        int k = c->o->constraints[i].kind;
        n += k == MBL_OPT_MIN_DAMPING || k == MBL_OPT_MAX_REAL ? c->nmode : 1;
    }
    for (int i = 0; i < c->o->nconstraints; i++) n += c->o->constraints[i].kind == MBL_OPT_PEAK ? OPT_FRF_PEAKS - 1 : 0;
    return n + c->nbound;
}

/* a mode's frequency (which = MBL_OPT_FREQ), real part (MBL_OPT_REAL) or damping ratio and its
 * derivatives in p (np); `who` names it in the errors: a repeated eigenvalue (no derivative), a
 * derivative not defined */
static int mode_value(const opt_ctx *c, const mbl_sens_mode *m, int which, const char *who, double *q, double *dq,
                      mbl_status *st)
{
    char d[256];
    int bad = -1;
    const double *dv = which == MBL_OPT_FREQ ? m->dfreq_hz : which == MBL_OPT_REAL ? m->dre : m->ddamping;
    *q = which == MBL_OPT_FREQ ? m->freq_hz : which == MBL_OPT_REAL ? m->re : m->damping_ratio;
    for (int w = 0; w < c->np && m->defined && bad < 0; w++)
        if (!isfinite(dq[w] = dv[w])) bad = w;
    if (m->defined && bad < 0) return 0;
    design_text(c, c->p, d, sizeof d); /* the errors name the design */
    if (!m->defined)
        return mbl_error(st, MBL_EMODEL,
                         "%s meets another mode at %s (a repeated eigenvalue %.6g%+.6gi: its derivatives are not "
                         "defined; start elsewhere or bound the parameters away from it)",
                         who, d, m->re, m->im);
    return mbl_error(st, MBL_EMODEL, "%s has no derivative with respect to %s at %s", who, c->o->params[bad].name, d);
}

/* the quantity of goal gi (0: the objective) and its derivative in p (np) */
static int quantity(const opt_ctx *c, const mbl_opt_goal *g, int gi, double *q, double *dq, mbl_status *st)
{
    if (g->kind == MBL_OPT_CHANGE) {
        *q = 0;
        for (int j = 0; j < c->np; j++) {
            double s = fabs(c->p0[j]) > OPT_CHANGE_TINY ? c->p0[j] : 1.0, r = (c->p[j] - c->p0[j]) / s;
            *q += r * r;
            dq[j] = 2 * r / s;
        }
        return 0;
    }
    if (g->kind == MBL_OPT_EXPR) return opt_expr_eval(c, c->ex[gi], c->p, q, dq, st);
    if (g->kind == MBL_OPT_CRITICAL) {
        *q = c->pk_val[(size_t)gi * OPT_FRF_PEAKS];
        memcpy(dq, c->pk_grad + (size_t)gi * OPT_FRF_PEAKS * c->np, (size_t)c->np * sizeof *dq);
        return 0;
    }
    if (g->kind == MBL_OPT_PEAK) { /* the largest local peak */
        size_t o = (size_t)gi * OPT_FRF_PEAKS, big = o;
        for (size_t k = o + 1; k < o + OPT_FRF_PEAKS; k++)
            if (c->pk_val[k] > c->pk_val[big]) big = k;
        *q = c->pk_val[big];
        memcpy(dq, c->pk_grad + big * c->np, (size_t)c->np * sizeof *dq);
        return 0;
    }
    int j = c->branch[c->goal_branch[gi]];
    const mbl_sens_mode *m = &c->S->modes[j];
    char who[64];
    snprintf(who, sizeof who, "mode %d of the start (mode %d here)", g->mode, j + 1);
    if (m->defined && m->kind != MBL_MODE_OSCILLATORY && (g->kind != MBL_OPT_REAL || m->kind == MBL_MODE_ZERO)) {
        char d[256];
        design_text(c, c->p, d, sizeof d);
        return mbl_error(st, MBL_EMODEL, "%s no longer oscillates at %s (%s)", who, d,
                         m->kind == MBL_MODE_ZERO ? "a zero eigenvalue" : "a real eigenvalue: overdamped");
    }
    if (g->kind != MBL_OPT_ORDER) return mode_value(c, m, g->kind, who, q, dq, st);
    /* the order line: the frequency minus order speed / (2 pi), the speed an expression of the
     * parameters (c->ex[gi]: varied or not, refused where the file computes it from a varied one) */
    double w, dwl[64 + 1], *dw = c->np <= 64 ? dwl : mbl_alloc_array((size_t)c->np + 1, sizeof *dw);
    if (!dw) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = mode_value(c, m, MBL_OPT_FREQ, who, q, dq, st);
    if (!rc) rc = opt_expr_eval(c, c->ex[gi], c->p, &w, dw, st);
    if (!rc) {
        double s = g->order / (2 * 3.14159265358979323846);
        *q -= s * w;
        for (int j = 0; j < c->np; j++) dq[j] -= s * dw[j];
    }
    if (dw != dwl) mbl_free(dw);
    return rc;
}

/* The least-damping and largest-real-part slots: one per mode, value zeta (which = MBL_OPT_DAMPING)
 * or Re lambda (MBL_OPT_REAL) and its derivative (np), or *use = 0 for a zero mode and the second
 * member of a conjugate pair (not counted). */
static int mode_slot(const opt_ctx *c, int k, int which, int *use, double *z, double *dz, mbl_status *st)
{
    const mbl_sens_mode *m = &c->S->modes[c->branch[k]];
    *use = m->kind != MBL_MODE_ZERO && m->im >= 0;
    if (!*use) return 0;
    char who[32];
    snprintf(who, sizeof who, "mode %d", c->branch[k] + 1);
    return mode_value(c, m, which, who, z, dz, st);
}

/* g(q) <= 0 of a constraint and dg/dq */
static void constraint_of(const mbl_opt_goal *g, double q, double *val, double *slope)
{
    double rel = g->kind == MBL_OPT_FREQ || g->kind == MBL_OPT_PEAK || g->kind == MBL_OPT_CRITICAL ? 1.0 / g->a : 1.0;
    if (g->kind == MBL_OPT_ORDER) rel = 1.0; /* Hz from the line: 0 is a bound like any other */
    if (g->sense == MBL_OPT_GE) *val = (g->a - q) * rel, *slope = -rel;
    else if (g->sense == MBL_OPT_LE) *val = (q - g->a) * rel, *slope = rel;
    else {
        double ctr = 0.5 * (g->a + g->b), h = 0.5 * (g->b - g->a), u = (q - ctr) / h;
        *val = 1 - u * u, *slope = -2 * u / h;
    }
}

/* the objective and the constraints at c->p from c->S, gradients in x */
static int goals(opt_ctx *c, mbl_status *st)
{
    int np = c->np, nx = c->nx, rc = 0, r = 0;
    double dq[64 + 1], *d = np <= 64 ? dq : mbl_alloc_array((size_t)np, sizeof *d), q = 0;
    if (!d) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memset(c->fgrad, 0, (size_t)nx * sizeof *c->fgrad);
    memset(c->cgrad, 0, (size_t)c->ncon * nx * sizeof *c->cgrad);
    const mbl_opt_goal *ob = &c->o->objective;
    if (c->bound) { /* the bound formulation: its value from its rows, below */
        c->f = c->bound == 1 ? -c->x[np] : c->x[np], c->fgrad[np] = c->bound == 1 ? -1 : 1;
        c->value = c->bound == 1 ? INFINITY : -INFINITY;
    } else if (!(rc = quantity(c, ob, 0, &q, d, st))) {
        double sc = ob->sense == MBL_OPT_TARGET ? 2 * (q - ob->a) / (ob->a * ob->a) : ob->sense == MBL_OPT_MAXIMIZE ? -1 : 1;
        c->value = q;
        c->f = ob->sense == MBL_OPT_TARGET ? (q - ob->a) * (q - ob->a) / (ob->a * ob->a) : sc * q;
        for (int j = 0; j < np; j++) c->fgrad[j] = sc * d[j] * (c->hi[j] - c->lo[j]);
    }
    for (int i = 0; !rc && i < c->o->nconstraints; i++) {
        const mbl_opt_goal *g = &c->o->constraints[i];
        int per_mode = g->kind == MBL_OPT_MIN_DAMPING || g->kind == MBL_OPT_MAX_REAL;
        double sg = g->kind == MBL_OPT_MIN_DAMPING ? -1 : 1; /* zeta_k >= a, Re lambda_k <= a */
        for (int k = 0; per_mode && k < c->nmode && !rc; k++, r++) {
            int use;
            double *row = c->cgrad + (size_t)r * nx;
            if ((rc = mode_slot(c, k, sg < 0 ? MBL_OPT_DAMPING : MBL_OPT_REAL, &use, &q, d, st))) break;
            c->cval[r] = use ? sg * (q - g->a) : -1;
            for (int j = 0; use && j < np; j++) row[j] = sg * d[j] * (c->hi[j] - c->lo[j]);
        }
        for (int k = 0; g->kind == MBL_OPT_PEAK && k < OPT_FRF_PEAKS; k++, r++) { /* each local peak <= a */
            size_t o = (size_t)(i + 1) * OPT_FRF_PEAKS + k;
            c->cval[r] = (c->pk_val[o] - g->a) / g->a;
            for (int j = 0; j < np; j++) c->cgrad[(size_t)r * nx + j] = c->pk_grad[o * np + j] / g->a * (c->hi[j] - c->lo[j]);
        }
        if (rc || per_mode || g->kind == MBL_OPT_PEAK || (rc = quantity(c, g, i + 1, &q, d, st)))
            continue;
        double slope;
        constraint_of(g, q, &c->cval[r], &slope);
        for (int j = 0; j < np; j++) c->cgrad[(size_t)r * nx + j] = slope * d[j] * (c->hi[j] - c->lo[j]);
        r++;
    }
    for (int k = 0; !rc && c->bound == 2 && k < OPT_FRF_PEAKS; k++, r++) { /* |H|_k / pscale - t <= 0 */
        double *row = c->cgrad + (size_t)r * nx;
        c->cval[r] = c->pk_val[k] / c->pscale - c->x[np];
        c->value = fmax(c->value, c->pk_val[k]);
        for (int j = 0; j < np; j++) row[j] = c->pk_grad[(size_t)k * np + j] / c->pscale * (c->hi[j] - c->lo[j]);
        row[np] = -1;
    }
    for (int k = 0; !rc && c->bound == 1 && k < c->nmode; k++, r++) { /* t - zeta_k <= 0 */
        int use;
        double *row = c->cgrad + (size_t)r * nx;
        if ((rc = mode_slot(c, k, MBL_OPT_DAMPING, &use, &q, d, st))) break;
        c->cval[r] = use ? c->x[np] - q : c->x[np] - 2;
        if (use) c->value = fmin(c->value, q);
        for (int j = 0; use && j < np; j++) row[j] = -d[j] * (c->hi[j] - c->lo[j]);
        row[np] = 1;
    }
    for (int k = 0; !rc && c->bound == 3 && k < c->nmode; k++, r++) { /* Re lambda_k / pscale - t <= 0 */
        int use;
        double *row = c->cgrad + (size_t)r * nx;
        if ((rc = mode_slot(c, k, MBL_OPT_REAL, &use, &q, d, st))) break;
        c->cval[r] = use ? q / c->pscale - c->x[np] : -1; /* a zero mode, a pair's second: a row never active */
        if (use) c->value = fmax(c->value, q);
        for (int j = 0; use && j < np; j++) row[j] = d[j] / c->pscale * (c->hi[j] - c->lo[j]);
        row[np] = use ? -1 : 0;
    }
    /* the violation of the design's constraints (the bound formulation's rows are the optimizer's) */
    int nreal = c->ncon - c->nbound;
    c->violation = 0;
    for (int k = 0; !rc && k < nreal; k++) c->violation = fmax(c->violation, c->cval[k]);
    if (d != dq) mbl_free(d);
    return rc;
}

/* after the first point: the modes' count fixes the constraints' */
static int first_point(opt_ctx *c, const mbl_sensitivity *S, mbl_status *st)
{
    c->nmode = S->nmode;
    int rc = opt_goal_check(&c->o->objective, 1, c->nmode, st);
    for (int i = 0; !rc && i < c->o->nconstraints; i++) rc = opt_goal_check(&c->o->constraints[i], 0, c->nmode, st);
    if (rc) return rc;
    c->nbound = c->bound == 1 || c->bound == 3 ? c->nmode : c->bound == 2 ? OPT_FRF_PEAKS : 0;
    c->ncon = opt_constraint_count(c);
    c->pscale = c->bound == 3 ? 0 : 1;
    for (int k = 0; c->bound == 2 && k < OPT_FRF_PEAKS; k++) c->pscale = k ? fmax(c->pscale, c->pk_val[k]) : c->pk_val[k];
    for (int k = 0; c->bound == 3 && k < c->nmode; k++) /* t: the real parts over the start's largest |lambda| */
        if (S->modes[k].kind != MBL_MODE_ZERO) c->pscale = fmax(c->pscale, hypot(S->modes[k].re, S->modes[k].im));
    if (!(c->pscale > 0))
        return mbl_error(st, MBL_EARG, "the objective: the largest real part needs a nonzero mode (every mode is a zero "
                                       "eigenvalue at the start)");
    c->branch = mbl_alloc_array((size_t)c->nmode + 1, sizeof *c->branch);
    c->cval = mbl_alloc_array((size_t)c->ncon + 1, sizeof *c->cval);
    c->cgrad = mbl_alloc_array((size_t)c->ncon * c->nx + 1, sizeof *c->cgrad);
    if (!c->branch || !c->cval || !c->cgrad) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int b = 0; b < c->nmode; b++) c->branch[b] = b;
    for (int g = 0; g <= c->o->nconstraints; g++) {
        const mbl_opt_goal *gl = g ? &c->o->constraints[g - 1] : &c->o->objective;
        int named = gl->kind == MBL_OPT_FREQ || gl->kind == MBL_OPT_DAMPING || gl->kind == MBL_OPT_REAL ||
                    gl->kind == MBL_OPT_ORDER;
        int kind = named ? S->modes[gl->mode - 1].kind : MBL_MODE_OSCILLATORY;
        c->goal_branch[g] = named ? gl->mode - 1 : -1;
        if (kind != MBL_MODE_OSCILLATORY && (gl->kind != MBL_OPT_REAL || kind == MBL_MODE_ZERO))
            return mbl_error(st, MBL_EARG, "%s: mode %d is not oscillatory at the start (%s)",
                             g ? "a constraint" : "the objective", gl->mode,
                             S->modes[gl->mode - 1].kind == MBL_MODE_ZERO ? "a zero eigenvalue" : "a real eigenvalue");
    }
    return 0;
}

int opt_eval(opt_ctx *c, const double *x, mbl_status *st)
{
    if (c->have && !memcmp(x, c->x, (size_t)c->np * sizeof *x)) { /* the same design: only t moved */
        if (c->bound && x[c->np] != c->x[c->np]) {
            c->x[c->np] = x[c->np];
            return goals(c, st);
        }
        return 0;
    }
    double p[64 + 1], *pp = c->np <= 64 ? p : mbl_alloc_array((size_t)c->np, sizeof *pp);
    if (!pp) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < c->np; j++) pp[j] = fmin(c->hi[j], fmax(c->lo[j], c->lo[j] + x[j] * (c->hi[j] - c->lo[j])));
    mbl_sensitivity *S = NULL;
    c->note[0] = 0;
    int rc = compute_point(c, pp, &S, st);
    if (rc) {
        char d[256];
        design_text(c, pp, d, sizeof d);
        mbl_error_prefix(st, "at %s", d);
    }
    if (!rc && c->have) rc = track(c, S, pp, st);
    else if (!rc) rc = first_point(c, S, st);
    if (rc) {
        mbl_sensitivity_free(S);
        if (pp != p) mbl_free(pp);
        return rc;
    }
    mbl_sensitivity_free(c->S);
    c->S = S;
    for (int g = 0; g <= c->o->nconstraints; g++) opt_expr_commit(c->ex[g]);
    memcpy(c->p, pp, (size_t)c->np * sizeof *pp);
    memcpy(c->x, x, (size_t)c->nx * sizeof *x);
    c->have = 1;
    for (int j = 0; j < c->np; j++) {
        double tol = OPT_AT_BOUND_TOL * (c->hi[j] - c->lo[j]);
        c->at_bound[j] = pp[j] <= c->lo[j] + tol ? -1 : pp[j] >= c->hi[j] - tol ? 1 : 0;
    }
    if (pp != p) mbl_free(pp);
    return goals(c, st);
}
