/* mbl_optimize (include/mblin/optimize.h, docs/optimize.md): the design's parameters scaled to
 * [0, 1] by their bounds, NLopt's local optimizers on the objective and constraints that
 * opt_eval.c evaluates with their exact gradients, the history and the progress reports, and the
 * final design checked (feasible, its modes still tracked) before it is returned. */
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <string.h>

#include "opt/opt_internal.h"

void mbl_optimize_options_default(mbl_optimize_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->algorithm = MBL_OPT_AUTO;
    opt->xtol_rel = 1e-7;
    opt->ftol_rel = 1e-10;
    opt->ctol = 1e-8;
    opt->feas_tol = 1e-6;
    opt->kkt_tol = 1e-3;
    opt->max_eval = 200;
    opt->min_mac = 0.5;
    mbl_opoint_options_default(&opt->opoint);
}

static const struct {
    const char *name;
    nlopt_algorithm alg;
} algorithms[] = {{"slsqp", NLOPT_LD_SLSQP}, {"mma", NLOPT_LD_MMA}, {"ccsaq", NLOPT_LD_CCSAQ}, {"cobyla", NLOPT_LN_COBYLA}};

const char *mbl_opt_algorithm_name(int algorithm)
{
    return algorithm >= 0 && algorithm < (int)(sizeof algorithms / sizeof algorithms[0]) ? algorithms[algorithm].name
                                                                                         : NULL;
}

void mbl_opt_result_free(mbl_opt_result *r)
{
    if (!r) return;
    mbl_free(r->p);
    mbl_free(r->at_bound);
    mbl_free(r->history);
    mbl_free(r->history_violation);
    mbl_free(r->tracked);
    mbl_sensitivity_free(r->S);
    mbl_free(r);
}

void opt_t_bounds(const opt_ctx *c, double *lo, double *hi)
{
    *lo = c->bound == 1 ? -1 : c->bound == 2 ? 0 : -HUGE_VAL;
    *hi = c->bound == 1 ? 1 : c->bound == 2 ? OPT_PEAK_TMAX : HUGE_VAL;
}

void opt_ctx_free(opt_ctx *c)
{
    mbl_free(c->idx);
    mbl_free(c->lo);
    mbl_free(c->sets);
    mbl_free(c->x);
    mbl_free(c->branch);
    mbl_free(c->goal_branch);
    mbl_free(c->fgrad);
    mbl_free(c->cval);
    mbl_free(c->cgrad);
    mbl_free(c->at_bound);
    mbl_free(c->hist);
    mbl_free(c->pk_val);
    mbl_free(c->crit_near);
    for (int g = 0; c->ex && c->o && g <= c->o->nconstraints; g++) opt_expr_free(c->ex[g]);
    mbl_free(c->ex);
    mbl_sensitivity_free(c->S);
}

int opt_ctx_init(opt_ctx *c, const mbl_model *model, const mbl_optimize_options *o, double *x0, mbl_status *st)
{
    memset(c, 0, sizeof *c);
    c->model = model, c->o = o, c->np = o->nparams, c->nmode = -1;
    if (o->nparams < 1 || !o->params) return mbl_error(st, MBL_EARG, "no parameter to vary");
    if (o->algorithm != MBL_OPT_AUTO && !mbl_opt_algorithm_name(o->algorithm)) return mbl_error(st, MBL_EARG, "unknown algorithm %d", o->algorithm);
    if (o->nconstraints < 0 || (o->nconstraints && !o->constraints)) return mbl_error(st, MBL_EARG, "bad constraints");
    if (!(o->max_eval > 0) || !(o->xtol_rel > 0) || !(o->ftol_rel >= 0) || !(o->ctol > 0) || !(o->feas_tol > 0) || !(o->kkt_tol > 0) ||
        !(o->min_mac >= 0 && o->min_mac < 1))
        return mbl_error(st, MBL_EARG, "a tolerance is out of range (max_eval > 0, xtol_rel > 0, ftol_rel >= 0, "
                                       "ctol > 0, feas_tol > 0, kkt_tol > 0, 0 <= min_mac < 1)");
    int rc = opt_goal_check(&o->objective, 1, -1, st);
    for (int i = 0; !rc && i < o->nconstraints; i++) rc = opt_goal_check(&o->constraints[i], 0, -1, st);
    if (rc) return rc;
    int ok = o->objective.kind;
    c->bound = ok == MBL_OPT_MIN_DAMPING ? 1 : ok == MBL_OPT_PEAK ? 2 : ok == MBL_OPT_MAX_REAL ? 3 : 0;
    c->algorithm = o->algorithm != MBL_OPT_AUTO ? o->algorithm : c->bound == 1 || c->bound == 3 ? MBL_OPT_MMA : MBL_OPT_SLSQP;
    c->nx = c->np + (c->bound != 0);
    c->shapes = o->objective.kind == MBL_OPT_FREQ || o->objective.kind == MBL_OPT_DAMPING || o->objective.kind == MBL_OPT_REAL;
    for (int i = 0; i < o->nconstraints; i++)
        c->shapes |= o->constraints[i].kind == MBL_OPT_FREQ || o->constraints[i].kind == MBL_OPT_DAMPING ||
                     o->constraints[i].kind == MBL_OPT_REAL;
    size_t np = (size_t)c->np, nx = (size_t)c->nx;
    c->nsets = (o->nsets > 0 ? o->nsets : 0) + c->np;
    c->idx = mbl_alloc_array(np, sizeof *c->idx);
    c->lo = mbl_alloc_array(4 * np, sizeof *c->lo);
    c->sets = mbl_alloc_array((size_t)c->nsets, sizeof *c->sets);
    c->x = mbl_alloc_array(2 * nx, sizeof *c->x);
    c->goal_branch = mbl_alloc_array((size_t)o->nconstraints + 1, sizeof *c->goal_branch);
    c->fgrad = mbl_alloc_array(nx, sizeof *c->fgrad);
    c->at_bound = mbl_alloc_array(np, sizeof *c->at_bound);
    c->cap = o->max_eval + 8;
    c->hist = mbl_alloc_array(2 * (size_t)c->cap, sizeof *c->hist);
    c->pk_val = mbl_alloc_array(((size_t)o->nconstraints + 1) * OPT_FRF_PEAKS * (np + 2), sizeof *c->pk_val);
    c->crit_near = mbl_alloc_array((size_t)o->nconstraints + 1, sizeof *c->crit_near);
    if (!c->idx || !c->lo || !c->sets || !c->x || !c->goal_branch || !c->fgrad || !c->at_bound || !c->hist ||
        !c->pk_val || !c->crit_near)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    c->pk_hz = c->pk_val + ((size_t)o->nconstraints + 1) * OPT_FRF_PEAKS;
    c->pk_grad = c->pk_hz + ((size_t)o->nconstraints + 1) * OPT_FRF_PEAKS;
    for (int g = 0; g <= o->nconstraints; g++) c->crit_near[g] = g ? o->constraints[g - 1].near : o->objective.near;
    c->best_x = c->x + nx;
    c->hi = c->lo + np, c->p0 = c->hi + np, c->p = c->p0 + np, c->hist_viol = c->hist + c->cap;
    if (o->nsets > 0) memcpy(c->sets, o->sets, (size_t)o->nsets * sizeof *c->sets);
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    for (int j = 0; j < c->np; j++) {
        const mbl_opt_param *q = &o->params[j];
        c->idx[j] = -1;
        for (int i = 0; q->name && i < info.nparam; i++)
            if (!strcmp(mbl_model_param_name(model, i), q->name)) c->idx[j] = i;
        if (c->idx[j] < 0)
            return mbl_error(st, MBL_EARG, "the model %s has no parameter '%s'", info.file, q->name ? q->name : "(null)");
        for (int k = 0; k < j; k++)
            if (c->idx[k] == c->idx[j]) return mbl_error(st, MBL_EARG, "parameter '%s' is varied twice", q->name);
        if (!(isfinite(q->lo) && isfinite(q->hi) && q->lo < q->hi))
            return mbl_error(st, MBL_EARG, "parameter '%s': the bounds %g:%g need lo < hi, both finite", q->name, q->lo,
                             q->hi);
        c->lo[j] = q->lo, c->hi[j] = q->hi;
        c->p0[j] = mbl_model_param_value(model, c->idx[j]);
        double s = isnan(q->start) ? c->p0[j] : q->start;
        if (!(s >= q->lo && s <= q->hi))
            return mbl_error(st, MBL_EARG, "parameter '%s': the start %g is outside its bounds %g:%g%s", q->name, s, q->lo,
                             q->hi, isnan(q->start) ? " (the model's value)" : "");
        x0[j] = (s - q->lo) / (q->hi - q->lo);
        c->sets[c->nsets - c->np + j].name = q->name;
    }
    c->ex = mbl_alloc_array((size_t)o->nconstraints + 1, sizeof *c->ex);
    if (!c->ex) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memset(c->ex, 0, ((size_t)o->nconstraints + 1) * sizeof *c->ex);
    int rc2 = 0;
    for (int g = 0; g <= o->nconstraints && !rc2; g++) {
        const mbl_opt_goal *gl = g ? &o->constraints[g - 1] : &o->objective;
        if (gl->kind == MBL_OPT_EXPR) rc2 = opt_expr_new(c, gl->expr, &c->ex[g], st);
        if (gl->kind == MBL_OPT_ORDER) rc2 = opt_expr_new(c, gl->speed, &c->ex[g], st); /* the line's speed */
    }
    return rc2;
}

/* evaluate x; a new design goes into the history and to the progress callback. On failure the
 * run is stopped (the error kept in c) */
static int evaluate(opt_ctx *c, const double *x)
{
    if (c->fail) return c->fail;
    int fresh = !c->have || memcmp(x, c->x, (size_t)c->np * sizeof *x);
    int rc = opt_eval(c, x, &c->err);
    if (!rc && fresh) {
        if (c->evals < c->cap) c->hist[c->evals] = c->value, c->hist_viol[c->evals] = c->violation;
        c->evals++;
        int nact = 0;
        for (int j = 0; j < c->np; j++) nact += c->at_bound[j] != 0;
        double merit = c->bound == 1 ? -c->value : c->bound ? c->value : c->f;
        if (c->violation <= c->o->feas_tol && (!c->has_best || merit < c->best_merit)) {
            memcpy(c->best_x, x, (size_t)c->nx * sizeof *x);
            c->best_merit = merit, c->has_best = 1;
        }
        mbl_opt_step s = {c->evals, c->np, c->p, c->value, c->bound == 1 ? -c->value : c->bound ? c->value / c->pscale : c->f, c->violation, nact, c->at_bound, c->note};
        if (c->o->progress && c->o->progress(c->o->progress_ud, &s))
            rc = mbl_error(&c->err, MBL_ECANCELLED, "cancelled after %d evaluations", c->evals);
    }
    if (rc) {
        c->fail = rc;
        if (c->nl) nlopt_force_stop(c->nl);
    }
    return rc;
}

static double nl_objective(unsigned n, const double *x, double *grad, void *data)
{
    opt_ctx *c = data;
    if (evaluate(c, x)) return HUGE_VAL;
    if (grad) memcpy(grad, c->fgrad, n * sizeof *grad);
    return c->f;
}

static void nl_constraints(unsigned m, double *result, unsigned n, const double *x, double *grad, void *data)
{
    opt_ctx *c = data;
    if (evaluate(c, x)) {
        for (unsigned i = 0; i < m; i++) result[i] = HUGE_VAL;
        if (grad) memset(grad, 0, (size_t)m * n * sizeof *grad);
        return;
    }
    memcpy(result, c->cval, m * sizeof *result);
    if (grad) memcpy(grad, c->cgrad, (size_t)m * n * sizeof *grad);
}

static const char *stop_text(nlopt_result r)
{
    switch (r) {
    case NLOPT_SUCCESS: return "converged";
    case NLOPT_STOPVAL_REACHED: return "stop value reached";
    case NLOPT_FTOL_REACHED: return "the objective's change below ftol_rel";
    case NLOPT_XTOL_REACHED: return "the step below xtol_rel";
    case NLOPT_MAXEVAL_REACHED: return "max evaluations reached";
    case NLOPT_MAXTIME_REACHED: return "max time reached";
    case NLOPT_ROUNDOFF_LIMITED: return "rounding limited the progress";
    case NLOPT_FORCED_STOP: return "stopped";
    case NLOPT_OUT_OF_MEMORY: return "out of memory";
    case NLOPT_INVALID_ARGS: return "invalid arguments";
    default: return "the optimizer failed";
    }
}

/* the largest violated constraint in words, for the infeasible design's message */
static void worst_constraint(const opt_ctx *c, char *buf, size_t len)
{
    int r = 0, wi = 0;
    double worst = -INFINITY;
    for (int i = 0; i < c->o->nconstraints; i++) {
        int kind = c->o->constraints[i].kind;
        int rows = kind == MBL_OPT_MIN_DAMPING || kind == MBL_OPT_MAX_REAL ? c->nmode : kind == MBL_OPT_PEAK ? OPT_FRF_PEAKS : 1;
        for (int k = 0; k < rows; k++, r++)
            if (c->cval[r] > worst) worst = c->cval[r], wi = i;
    }
    snprintf(buf, len, "constraint %d", wi + 1);
}

/* the result from the context at the final design */
static int result_make(opt_ctx *c, nlopt_result nr, mbl_opt_result **out, mbl_status *st)
{
    mbl_opt_result *r = mbl_malloc(sizeof *r);
    if (!r) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memset(r, 0, sizeof *r);
    size_t np = (size_t)c->np, nh = (size_t)(c->evals < c->cap ? c->evals : c->cap);
    r->p = mbl_alloc_array(np, sizeof *r->p);
    r->at_bound = mbl_alloc_array(np, sizeof *r->at_bound);
    r->history = mbl_alloc_array(nh + 1, sizeof *r->history);
    r->history_violation = mbl_alloc_array(nh + 1, sizeof *r->history_violation);
    r->tracked = mbl_alloc_array((size_t)c->o->nconstraints + 1, sizeof *r->tracked);
    if (!r->p || !r->at_bound || !r->history || !r->history_violation || !r->tracked) {
        mbl_opt_result_free(r);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    r->nparams = c->np;
    memcpy(r->p, c->p, np * sizeof *r->p);
    memcpy(r->at_bound, c->at_bound, np * sizeof *r->at_bound);
    memcpy(r->history, c->hist, nh * sizeof *r->history);
    memcpy(r->history_violation, c->hist_viol, nh * sizeof *r->history_violation);
    r->nhistory = (int)nh;
    r->peak_hz = NAN;
    for (int k = 0; c->bound == 2 && k < OPT_FRF_PEAKS; k++)
        if (c->pk_val[k] == c->value) r->peak_hz = c->pk_hz[k];
    r->value = c->value, r->objective = c->f, r->violation = c->violation;
    r->evaluations = c->evals, r->algorithm = c->algorithm, r->stop = (int)nr, r->crossings = c->crossings;
    snprintf(r->stop_reason, sizeof r->stop_reason, "%s", stop_text(nr));
    r->tracked_objective = c->goal_branch[0] >= 0 ? c->branch[c->goal_branch[0]] : -1;
    for (int i = 0; i < c->o->nconstraints; i++)
        r->tracked[i] = c->goal_branch[i + 1] >= 0 ? c->branch[c->goal_branch[i + 1]] : -1;
    r->S = c->S;
    c->S = NULL;
    *out = r;
    return 0;
}

int mbl_optimize(const mbl_model *model, const mbl_optimize_options *opt, mbl_opt_result **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_optimize: out is NULL");
    *out = NULL;
    if (!model || !opt) return mbl_error(st, MBL_EARG, "mbl_optimize: model or options NULL");
    opt_ctx c;
    double x0[64 + 2], *x = opt->nparams >= 0 && opt->nparams <= 64 ? x0 : mbl_alloc_array((size_t)opt->nparams + 2, sizeof *x);
    if (!x) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = opt_ctx_init(&c, model, opt, x, st);
    if (!rc && c.bound) x[c.np] = 0;
    if (!rc && evaluate(&c, x)) rc = mbl_error(st, c.err.code, "%s", c.err.msg);
    if (!rc && c.bound) { /* t starts at the least damping ratio, the peak (1) or the largest real part */
        x[c.np] = c.bound == 1 ? c.value : c.value / c.pscale;
        if (evaluate(&c, x)) rc = mbl_error(st, c.err.code, "%s", c.err.msg);
    }
    for (int j = 0; !rc && j < c.nx; j++) c.g0 += c.fgrad[j] * c.fgrad[j];
    c.g0 = sqrt(c.g0);
    nlopt_opt nl = NULL;
    nlopt_result nr = NLOPT_FAILURE;
    if (!rc) {
        nl = nlopt_create(algorithms[c.algorithm].alg, (unsigned)c.nx);
        if (!nl) /* the static tool loads NLopt at this call (cmake/static_cli/nlopt_lazy.c) */
            rc = mbl_error(st, MBL_ELIB, "NLopt could not make the optimizer (out of memory, or libnlopt.so.0 could not "
                                         "be loaded: install libnlopt0)");
    }
    if (!rc) {
        double lb[64 + 2], ub[64 + 2], *l = c.nx <= 64 ? lb : mbl_alloc_array(2 * (size_t)c.nx, sizeof *l);
        double tol[1] = {opt->ctol}, *ct = c.ncon <= 1 ? tol : mbl_alloc_array((size_t)c.ncon, sizeof *ct);
        double *u = l == lb ? ub : l + c.nx;
        if (!l || !ct) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; !rc && j < c.nx; j++) {
            l[j] = 0, u[j] = 1;
            if (j >= c.np) opt_t_bounds(&c, &l[j], &u[j]);
        }
        for (int k = 0; !rc && k < c.ncon; k++) ct[k] = opt->ctol;
        c.nl = nl;
        if (!rc && (nlopt_set_lower_bounds(nl, l) < 0 || nlopt_set_upper_bounds(nl, u) < 0 ||
                    nlopt_set_min_objective(nl, nl_objective, &c) < 0 ||
                    (c.ncon && nlopt_add_inequality_mconstraint(nl, (unsigned)c.ncon, nl_constraints, &c, ct) < 0) ||
                    nlopt_set_xtol_abs1(nl, opt->xtol_rel) < 0 || nlopt_set_ftol_rel(nl, opt->ftol_rel) < 0 ||
                    nlopt_set_maxeval(nl, opt->max_eval) < 0))
            rc = mbl_error(st, MBL_ELIB, "NLopt refused the problem (%s)", nlopt_get_errmsg(nl) ? nlopt_get_errmsg(nl) : "");
        if (l != lb) mbl_free(l);
        if (ct != tol) mbl_free(ct);
    }
    if (!rc) {
        double fmin;
        nr = nlopt_optimize(nl, x, &fmin);
        if (c.fail) rc = mbl_error(st, c.err.code, "%s", c.err.msg);
        else if (nr < 0 && nr != NLOPT_ROUNDOFF_LIMITED)
            rc = mbl_error(st, nr == NLOPT_OUT_OF_MEMORY ? MBL_ENOMEM : MBL_ENOCONV, "NLopt %s: %s after %d evaluations%s%s",
                           algorithms[c.algorithm].name, stop_text(nr), c.evals, nlopt_get_errmsg(nl) ? ": " : "",
                           nlopt_get_errmsg(nl) ? nlopt_get_errmsg(nl) : "");
    }
    if (!rc && c.has_best) memcpy(x, c.best_x, (size_t)c.nx * sizeof *x); /* the best feasible design */
    if (!rc && evaluate(&c, x)) rc = mbl_error(st, c.err.code, "%s", c.err.msg); /* the final design's modes */
    if (!rc && c.violation > opt->feas_tol) {
        char w[64];
        worst_constraint(&c, w, sizeof w);
        rc = mbl_error(st, MBL_EMODEL,
                       "infeasible: %s is violated by %.3g (scaled; feas_tol %g) at the best design found after %d "
                       "evaluations (%s)",
                       w, c.violation, opt->feas_tol, c.evals, stop_text(nr));
    }
    double kkt = 0;
    double tv = c.bound == 1 ? c.value : c.value / c.pscale;
    if (!rc && c.bound && x[c.np] != tv) { /* t at the least damping ratio, peak, largest real part: its rows active */
        x[c.np] = tv;
        if (evaluate(&c, x)) rc = mbl_error(st, c.err.code, "%s", c.err.msg);
    }
    if (!rc) rc = opt_kkt_residual(&c, OPT_KKT_ACTIVE, &kkt, st);
    int ci = 0, cj = 0, better = 0, newton = 0, valley = 0;
    if (!rc && !(kkt <= opt->kkt_tol) && opt_coalesced(&c, &ci, &cj)) { /* a double eigenvalue: probed */
        if (c.bound == 3 && !(rc = opt_polish(&c, x, 1, &newton, st))) { /* the largest real part: moved onto it first */
            rc = opt_kkt_residual(&c, OPT_KKT_ACTIVE, &kkt, st);
            if (!opt_coalesced(&c, &ci, &cj)) ci = cj = 0;
        }
        double vres = 0; /* then checked, and followed, along the valley of equal real parts (opt_valley.c) */
        if (!rc && c.bound == 3 && ci && !(kkt <= opt->kkt_tol)) {
            rc = opt_valley_descend(&c, x, &ci, &cj, &valley, &vres, st);
            if (!rc) rc = opt_kkt_residual(&c, OPT_KKT_ACTIVE, &kkt, st);
            if (!rc && !(kkt <= opt->kkt_tol) && !opt_coalesced(&c, &ci, &cj)) ci = cj = 0;
            else if (!rc && ci && !(kkt <= opt->kkt_tol) && !(rc = opt_valley_kkt(&c, ci, cj, 0, &vres, NULL, st))) {
                if (!(vres <= opt->kkt_tol))
                    rc = mbl_error(st, MBL_ENOCONV,
                                   "not a local optimum: the optimizer stopped (%s) after %d evaluations next to a double "
                                   "eigenvalue (modes %d and %d) whose real part still decreases along the designs "
                                   "that keep it double (first-order residual %.3g there; kkt_tol %g); try another "
                                   "start or algorithm",
                                   stop_text(nr), c.evals, ci, cj, vres, opt->kkt_tol);
                else
                    kkt = vres;
            }
        }
        if (!rc && ci) rc = opt_probe(&c, x, &better, st);
        if (!rc && better)
            rc = mbl_error(st, MBL_ENOCONV,
                           "not a local optimum: the optimizer stopped (%s) after %d evaluations next to a double "
                           "eigenvalue (modes %d and %d) where a nearby design %s; try another start or algorithm",
                           stop_text(nr), c.evals, ci, cj, c.bound == 3 ? "decays faster" : "damps better");
    }
    if (!rc && !ci && !(kkt <= opt->kkt_tol))
        rc = mbl_error(st, MBL_ENOCONV,
                       "not a local optimum: the optimizer stopped (%s) after %d evaluations where the first-order "
                       "optimality residual is %.3g (kkt_tol %g); try another start or algorithm",
                       stop_text(nr), c.evals, kkt, opt->kkt_tol);
    if (!rc) rc = result_make(&c, nr, out, st);
    if (!rc) (*out)->kkt = kkt, (*out)->coalesced[0] = ci, (*out)->coalesced[1] = cj, (*out)->newton_steps = newton, (*out)->valley_steps = valley;
    if (nl) nlopt_destroy(nl);
    if (x != x0) mbl_free(x);
    opt_ctx_free(&c);
    return rc;
}
