/* Time simulation of the canonical DAE (include/mblin/sim.h, docs/simulation.md).
 *
 * SUNDIALS IDA integrates the stabilized index-2 form of Gear, Gupta and Leimkuhler (1985):
 *
 *   q' - v + Phi_q^T eta = 0                         (n)   eta: the stabilizing multiplier
 *   M v' + Phi_q^T lambda + A^T mu - Q = 0           (n)   the model's equations of motion R
 *   d(X', X, ...) = 0, zeq(Z, ...) = 0               (nX, nZ) user ODEs, implicit variables
 *   Phi_q v + Phi_t = 0                              (m)   velocity constraints
 *   A v + b = 0                                      (k)   non-holonomic constraints
 *   Phi(q, t) = 0                                    (m)   position constraints
 *
 * in y = [q v X | lambda mu eta Z] (differential | algebraic). Both the position constraints and
 * their derivative hold along the solution, so neither drifts; eta is 0 in exact arithmetic. The
 * residual rows are the model's own (mbl_dae_eval: the model's tapes at x = [v' lambda mu v q X'
 * Z X r(t)]); the Newton matrix dF/dy + cj dF/dy' is assembled from the model's exact sparse
 * Jacobian plus Phi_q^T and the Hessian d(eta^T Phi)/dq dq, and handed to IDA's KLU solver.
 * Algebraic variables are excluded from the error test (IDASetSuppressAlg), as usual for index 2.
 * The start is consistent: q, v on the constraints (mbl_sim_start), eta = 0, q' = v, and v',
 * lambda, mu, X', Z from the acceleration-level equations [R; d; zeq; Phi''; c'] = 0 by Newton
 * with the inputs at the start time. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "core/numfmt.h"
#include "core/progress.h"
#include "mblin/expr.h"
#include "mblin/la.h"
#include "mblin/sim.h"
#include "sim_internal.h"

void mbl_sim_options_default(mbl_sim_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->rtol = 1e-8;
    opt->atol = 1e-10;
    opt->max_steps = 1000000L;
    opt->mem_budget = 2e9;
    opt->newton_tol = SIM_SSODE_NEWTON_TOL;
    opt->repartition_cond = SIM_SSODE_REPARTITION_COND;
}

void mbl_sim_result_free(mbl_sim_result *r)
{
    if (!r) return;
    mbl_free(r->t), mbl_free(r->q), mbl_free(r->v), mbl_free(r->vdot), mbl_free(r->lambda), mbl_free(r->mu);
    mbl_free(r->X), mbl_free(r->Z), mbl_free(r->r), mbl_free(r->y);
    mbl_free(r);
}

enum { T_J = 0, T_JCJ, T_CJ, T_MINUS1, T_PHIQ, T_HESS };

static int inputs_at(sim *s, double t, double *r, mbl_status *st)
{
    if (!s->nr) return 0;
    if (!s->itape) {
        memcpy(r, s->rconst, (size_t)s->nr * sizeof *r);
        return 0;
    }
    s->isyms[s->it_sym] = t;
    int rc = mblx_tape_eval(s->itape, s->isyms, r, s->iwork, st);
    if (rc) mbl_error_prefix(st, "the inputs at t = %.17g", t);
    for (int j = 0; j < s->nrnd; j++) r[s->rnd[j].input] = sim_random_eval(&s->rnd[j], t);
    return rc;
}

/* x = [v' lambda mu v q X' Z X r(t)] from (t, y, y') */
int sim_make_x(sim *s, double t, const double *y, const double *yp, mbl_status *st)
{
    const int *c0 = s->L.col0;
    double *x = s->x;
    memcpy(x + c0[MBL_DAE_VDOT], yp + s->ov, (size_t)s->n * sizeof *x);
    memcpy(x + c0[MBL_DAE_LAMBDA], y + s->ol, (size_t)s->m * sizeof *x);
    memcpy(x + c0[MBL_DAE_MU], y + s->omu, (size_t)s->k * sizeof *x);
    memcpy(x + c0[MBL_DAE_V], y + s->ov, (size_t)s->n * sizeof *x);
    memcpy(x + c0[MBL_DAE_Q], y + s->oq, (size_t)s->n * sizeof *x);
    memcpy(x + c0[MBL_DAE_XDOT], yp + s->oX, (size_t)s->nX * sizeof *x);
    memcpy(x + c0[MBL_DAE_Z], y + s->oZ, (size_t)s->nZ * sizeof *x);
    memcpy(x + c0[MBL_DAE_X], y + s->oX, (size_t)s->nX * sizeof *x);
    int rc = inputs_at(s, t, x + c0[MBL_DAE_R], st);
    /* the same with eta in the multiplier block, for Phi_q^T eta and its Hessian */
    memcpy(s->xe, x, (size_t)s->L.nunk * sizeof *x);
    memcpy(s->xe + c0[MBL_DAE_LAMBDA], y + s->oeta, (size_t)s->m * sizeof *x);
    return rc;
}

static void note_error(sim *s, const mbl_status *st)
{
    s->nfail++;
    s->last = *st;
    if (s->failed) return;
    s->failed = 1;
    s->err = *st;
}

/* the residual of the stabilized system at (t, y, y') into r (N) */
static int residual(sim *s, double t, const double *y, const double *yp, double *r, mbl_status *st)
{
    if (sim_make_x(s, t, y, yp, st) || mbl_dae_eval_residual(s->ev, t, s->x, s->F, st) ||
        (s->m && mbl_dae_eval_phi_t(s->ev, t, s->xe, s->g, st)))
        return st->code ? st->code : MBL_EDOMAIN;
    for (int i = 0; i < s->n; i++) r[i] = yp[s->oq + i] - y[s->ov + i] + (s->m ? s->g[i] : 0.0);
    for (int i = s->n; i < s->N; i++) r[i] = s->F[s->frow[i - s->n]];
    return 0;
}

/* the Newton matrix dF/dy + cj dF/dy' at (t, y, y') into s->A */
static int newton_matrix(sim *s, double t, double cj, const double *y, const double *yp, mbl_status *st)
{
    if (sim_make_x(s, t, y, yp, st) || mbl_dae_eval_jacobian(s->ev, t, s->x, s->J, st) ||
        (s->m && mbl_dae_eval_hessian(s->ev, t, s->xe, s->H, st)))
        return st->code ? st->code : MBL_EDOMAIN;
    for (int p = 0; p < s->ntrip; p++) {
        int src = s->tsrc[p];
        switch (s->tkind[p]) {
        case T_J: s->tx[p] = s->J[src]; break;
        case T_JCJ: s->tx[p] = cj * s->J[src]; break;
        case T_CJ: s->tx[p] = cj; break;
        case T_MINUS1: s->tx[p] = -1.0; break;
        case T_PHIQ: s->tx[p] = s->J[src]; break;
        default: s->tx[p] = s->H[src]; break;
        }
    }
    mbla_csc_refill(s->A, s->ntrip, s->tmap, s->tx);
    return 0;
}

/* The watch between two residuals (res_fn): 0, or nonzero after it stopped the run (s->stop). The
 * time reported is the latest of the residuals' (a trial step's, which IDA may reject and retry
 * shorter: the reports never go back). */
static int watch_tick(sim *s, double t)
{
    if (!s->watch || ++s->nres % SIM_REPORT_EVERY) return 0;
    long nst = 0;
    if (!s->mem || IDAGetNumSteps(s->mem, &nst)) return 0;
    if (t < s->t_seen) t = s->t_seen;
    s->t_seen = t;
    mbl_status st = {0};
    if (!s->watch->report(s->watch->ud, t, nst, &st)) return 0;
    s->stopped = 1;
    s->stop = st;
    return 1;
}

static int res_fn(realtype t, N_Vector yy, N_Vector yyp, N_Vector rr, void *ud)
{
    sim *s = ud;
    if (s->stopped || watch_tick(s, t)) return -1; /* unrecoverable: IDASolve returns at once */
    mbl_status st = {0};
    if (residual(s, t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yyp), N_VGetArrayPointer(rr), &st)) {
        note_error(s, &st);
        if (st.code == MBL_ESINGULAR) s->stopped = 1, s->stop = st; /* the coordinates' singularity (a body's
                                                                       3-1-3 angles): no smaller step helps */
        return st.code == MBL_ESINGULAR ? -1 : 1; /* recoverable: IDA tries a smaller step */
    }
    s->failed = 0;
    return 0;
}

static int jac_fn(realtype t, realtype cj, N_Vector yy, N_Vector yyp, N_Vector rr, SUNMatrix Jm, void *ud,
                  N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)rr, (void)t1, (void)t2, (void)t3;
    sim *s = ud;
    mbl_status st = {0};
    if (newton_matrix(s, t, cj, N_VGetArrayPointer(yy), N_VGetArrayPointer(yyp), &st)) {
        note_error(s, &st);
        return 1;
    }
    sunindextype *ip = SUNSparseMatrix_IndexPointers(Jm), *ii = SUNSparseMatrix_IndexValues(Jm);
    double *jx = SUNSparseMatrix_Data(Jm);
    int nnz = s->A->p[s->N];
    for (int c = 0; c <= s->N; c++) ip[c] = s->A->p[c];
    for (int p = 0; p < nnz; p++) ii[p] = s->A->i[p], jx[p] = s->A->x[p];
    return 0;
}

void sim_free(sim *s)
{
    mbl_dae_eval_free(s->ev);
    mbl_free(s->frow), mbl_free(s->idarow);
    mbl_free(s->x), mbl_free(s->xe), mbl_free(s->F), mbl_free(s->J), mbl_free(s->g), mbl_free(s->H);
    mblx_tape_free(s->itape);
    mblx_graph_free(s->ig);
    mbl_free(s->isyms), mbl_free(s->iwork), mbl_free(s->rconst);
    for (int j = 0; j < s->nrnd; j++) sim_random_free(&s->rnd[j]);
    mbl_free(s->rnd);
    mbl_free(s->tsrc), mbl_free(s->tkind), mbl_free(s->tx), mbl_free(s->tmap);
    mbla_csc_free(s->A);
}

/* The inputs' resolver: t, and the model's parameters as their values. */
typedef struct iresolve {
    const mbl_model *md;
    mblx_id t;
} iresolve;

static int input_name(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                      mblx_id *out, char *why, size_t whylen)
{
    (void)args, (void)why, (void)whylen;
    iresolve *R = ud;
    if (nargs >= 0) return 1;
    if (len == 1 && name[0] == 't') {
        *out = R->t;
        return 0;
    }
    mbl_model_info info;
    mbl_model_get_info(R->md, &info);
    for (int i = 0; i < info.nparam; i++) {
        const char *p = mbl_model_param_name(R->md, i);
        if (strlen(p) == len && !strncmp(p, name, len)) {
            *out = mblx_const(g, mbl_model_param_value(R->md, i));
            return 0;
        }
    }
    return 1;
}

static int setup_inputs(sim *s, const mbl_point *start, const mbl_sim_options *opt, mbl_status *st)
{
    s->rconst = mbl_alloc_array((size_t)s->nr + 1, sizeof *s->rconst);
    s->rnd = mbl_calloc((size_t)opt->ninputs + 1, sizeof *s->rnd);
    if (!s->rconst || !s->rnd) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(s->rconst, start->r, (size_t)s->nr * sizeof *s->rconst);
    if (!opt->ninputs) return 0;
    s->ig = mblx_graph_new();
    mblx_id *outs = mbl_alloc_array((size_t)s->nr + 1, sizeof *outs);
    if (!s->ig || !outs) {
        mbl_free(outs);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    int drc = mbl_model_copy_data(s->md, s->ig, st); /* inputs may use the model's data sets (spline(road, t)) */
    if (drc) {
        mbl_free(outs);
        return drc;
    }
    iresolve R = {s->md, mblx_symbol(s->ig, "t")};
    for (int i = 0; i < s->nr; i++) outs[i] = mblx_const(s->ig, s->rconst[i]);
    int rc = 0;
    for (int j = 1; j < opt->ninputs && !rc; j++) /* one definition per input: no silent "the last wins" */
        for (int k = 0; k < j && !rc; k++)
            if (!strcmp(opt->inputs[k].name, opt->inputs[j].name))
                rc = mbl_error(st, MBL_EARG, "input '%s' is given twice ('%s' and '%s'); give each input once",
                               opt->inputs[j].name, opt->inputs[k].expr, opt->inputs[j].expr);
    for (int j = 0; j < opt->ninputs && !rc; j++) {
        int i = -1;
        for (int c = 0; c < s->nr && i < 0; c++)
            if (!strcmp(mbl_model_input_name(s->md, c), opt->inputs[j].name)) i = c;
        if (i < 0) {
            rc = mbl_error(st, MBL_EARG, "input '%s': the model has no such input", opt->inputs[j].name);
            break;
        }
        if (sim_random_is(opt->inputs[j].expr)) { /* evaluated after the tape (inputs_at) */
            rc = sim_random_new(opt->inputs[j].name, opt->inputs[j].expr, i, opt->t_end - start->t, opt->dt_out,
                                &s->rnd[s->nrnd], st);
            s->nrnd += !rc;
            continue;
        }
        mblx_parse_opts po = {0};
        po.resolve = input_name;
        po.ud = &R;
        rc = mblx_parse(s->ig, opt->inputs[j].expr, strlen(opt->inputs[j].expr), &po, &outs[i], st);
        if (rc) mbl_error_prefix(st, "input '%s' = '%s'", opt->inputs[j].name, opt->inputs[j].expr);
    }
    if (!rc) {
        s->itape = mblx_compile(s->ig, (size_t)s->nr, outs, st);
        if (!s->itape) rc = st ? st->code : MBL_ENOMEM;
    }
    mbl_free(outs);
    if (rc) return rc;
    size_t ns = mblx_tape_nsymbols(s->itape);
    s->it_sym = (int)mblx_symbol_index(s->ig, R.t);
    if (ns < (size_t)s->it_sym + 1) ns = (size_t)s->it_sym + 1;
    s->isyms = mbl_calloc(ns + 1, sizeof *s->isyms);
    s->iwork = mbl_alloc_array(mblx_tape_work_size(s->itape) + 1, sizeof *s->iwork);
    if (!s->isyms || !s->iwork) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

static int push(sim *s, int *ti, int *tj, int r, int c, int src, int kind)
{
    ti[s->ntrip] = r, tj[s->ntrip] = c, s->tsrc[s->ntrip] = src, s->tkind[s->ntrip] = kind;
    return s->ntrip++;
}

int sim_setup(sim *s, const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, mbl_status *st)
{
    memset(s, 0, sizeof *s);
    s->md = md;
    int rc = mbl_dae_eval_new(md, &s->ev, st);
    if (rc) return rc;
    mbl_dae_eval_layout(s->ev, &s->L);
    const mbl_dae_layout *L = &s->L;
    s->n = L->n, s->m = L->m, s->k = L->k, s->nr = L->nr;
    s->nX = L->col0[MBL_DAE_XDOT + 1] - L->col0[MBL_DAE_XDOT];
    s->nZ = L->col0[MBL_DAE_Z + 1] - L->col0[MBL_DAE_Z];
    int n = s->n, m = s->m, k = s->k;
    s->oq = 0, s->ov = n, s->oX = 2 * n, s->ol = 2 * n + s->nX, s->omu = s->ol + m, s->oeta = s->omu + k;
    s->oZ = s->oeta + m, s->N = s->oZ + s->nZ;
    int hnz;
    const int *hrow, *hcol;
    mbl_dae_eval_hessian_pattern(s->ev, &hnz, &hrow, &hcol);
    int maxtrip = L->jnz + 2 * n + L->jnz + hnz;
    s->frow = mbl_alloc_array((size_t)s->N + 1, sizeof *s->frow);
    s->idarow = mbl_alloc_array((size_t)L->nF + 1, sizeof *s->idarow);
    s->x = mbl_calloc((size_t)L->nunk + 1, sizeof *s->x);
    s->xe = mbl_calloc((size_t)L->nunk + 1, sizeof *s->xe);
    s->F = mbl_alloc_array((size_t)L->nF + 1, sizeof *s->F);
    s->J = mbl_alloc_array((size_t)L->jnz + 1, sizeof *s->J);
    s->g = mbl_alloc_array((size_t)n + 1, sizeof *s->g);
    s->H = mbl_alloc_array((size_t)hnz + 1, sizeof *s->H);
    s->tsrc = mbl_alloc_array((size_t)maxtrip + 1, sizeof *s->tsrc);
    s->tkind = mbl_alloc_array((size_t)maxtrip + 1, sizeof *s->tkind);
    s->tx = mbl_calloc((size_t)maxtrip + 1, sizeof *s->tx);
    s->tmap = mbl_alloc_array((size_t)maxtrip + 1, sizeof *s->tmap);
    int *ti = mbl_alloc_array((size_t)maxtrip + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)maxtrip + 1, sizeof *tj);
    if (!s->frow || !s->idarow || !s->x || !s->xe || !s->F || !s->J || !s->g || !s->H || !s->tsrc || !s->tkind ||
        !s->tx || !s->tmap || !ti || !tj) {
        mbl_free(ti), mbl_free(tj);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    /* IDA rows n.. : the model's rows of these groups, in order */
    static const int groups[] = {MBL_DAE_EOM, MBL_DAE_ODE, MBL_DAE_VAR, MBL_DAE_PHID, MBL_DAE_NH, MBL_DAE_PHI};
    for (int r = 0; r < L->nF; r++) s->idarow[r] = -1;
    int row = n;
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++)
        for (int r = L->row0[groups[gi]]; r < L->row0[groups[gi] + 1]; r++) s->frow[row - n] = r, s->idarow[r] = row++;
    if (row != s->N) {
        mbl_free(ti), mbl_free(tj);
        return mbl_error(st, MBL_EDIM, "mbl_simulate: %d equations for %d unknowns", row, s->N);
    }
    /* the Newton matrix' entries */
    for (int i = 0; i < n; i++) {
        push(s, ti, tj, i, s->oq + i, 0, T_CJ);
        push(s, ti, tj, i, s->ov + i, 0, T_MINUS1);
    }
    for (int p = 0; p < hnz; p++) push(s, ti, tj, hrow[p], s->oq + hcol[p], p, T_HESS);
    for (int p = 0; p < L->jnz; p++) {
        int r = L->jrow[p], c = L->jcol[p], b = 0;
        while (c >= L->col0[b + 1]) b++;
        int j = c - L->col0[b];
        if (b == MBL_DAE_Q && r >= L->row0[MBL_DAE_PHI] && r < L->row0[MBL_DAE_PHI + 1])
            push(s, ti, tj, j, s->oeta + (r - L->row0[MBL_DAE_PHI]), p, T_PHIQ); /* (Phi_q^T eta)_j */
        int ir = s->idarow[r];
        if (ir < 0) continue;
        switch (b) {
        case MBL_DAE_VDOT: push(s, ti, tj, ir, s->ov + j, p, T_JCJ); break;
        case MBL_DAE_LAMBDA: push(s, ti, tj, ir, s->ol + j, p, T_J); break;
        case MBL_DAE_MU: push(s, ti, tj, ir, s->omu + j, p, T_J); break;
        case MBL_DAE_V: push(s, ti, tj, ir, s->ov + j, p, T_J); break;
        case MBL_DAE_Q: push(s, ti, tj, ir, s->oq + j, p, T_J); break;
        case MBL_DAE_XDOT: push(s, ti, tj, ir, s->oX + j, p, T_JCJ); break;
        case MBL_DAE_Z: push(s, ti, tj, ir, s->oZ + j, p, T_J); break;
        case MBL_DAE_X: push(s, ti, tj, ir, s->oX + j, p, T_J); break;
        default: break; /* inputs: given functions of t */
        }
    }
    rc = mbla_csc_from_triplets(s->N, s->N, s->ntrip, ti, tj, NULL, s->tmap, &s->A, st);
    mbl_free(ti), mbl_free(tj);
    if (!rc) rc = setup_inputs(s, start, opt, st);
    return rc;
}

int sim_start_consistent(const mbl_model *md, mbl_point *p, mbl_status *st)
{
    mbl_sim_options opt;
    mbl_sim_options_default(&opt);
    sim s;
    int rc = sim_setup(&s, md, p, &opt, st);
    if (!rc && (p->n != s.n || p->nX != s.nX || p->nZ != s.nZ))
        rc = mbl_error(st, MBL_EDIM, "the start does not belong to the model");
    double *y = rc ? NULL : mbl_calloc((size_t)2 * s.N + 1, sizeof *y), *yp = y ? y + s.N : NULL;
    if (!rc && !y) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        memcpy(y + s.oq, p->q, (size_t)s.n * sizeof *y);
        memcpy(y + s.ov, p->v, (size_t)s.n * sizeof *y);
        memcpy(yp + s.oq, p->v, (size_t)s.n * sizeof *y);
        memcpy(yp + s.ov, p->vdot, (size_t)s.n * sizeof *y);
        memcpy(y + s.ol, p->lambda, (size_t)s.m * sizeof *y);
        memcpy(y + s.omu, p->mu, (size_t)s.k * sizeof *y);
        memcpy(y + s.oX, p->X, (size_t)s.nX * sizeof *y);
        memcpy(yp + s.oX, p->Xdot, (size_t)s.nX * sizeof *y);
        memcpy(y + s.oZ, p->Z, (size_t)s.nZ * sizeof *y);
        rc = sim_consistent_start(&s, p->t, y, yp, st);
    }
    if (!rc) {
        memcpy(p->vdot, yp + s.ov, (size_t)s.n * sizeof *y);
        memcpy(p->lambda, y + s.ol, (size_t)s.m * sizeof *y);
        memcpy(p->mu, y + s.omu, (size_t)s.k * sizeof *y);
        memcpy(p->Xdot, yp + s.oX, (size_t)s.nX * sizeof *y);
        memcpy(p->Z, y + s.oZ, (size_t)s.nZ * sizeof *y);
    }
    mbl_free(y);
    sim_free(&s);
    return rc;
}

/* The integration's work limit (mbl_sim_options.max_steps): IDA is called for at most
 * SIM_STEP_CHUNK steps at a time; after SIM_PROJECT_MIN steps, a run whose steps so far, scaled to
 * the whole interval, exceed SIM_PROJECT_FACTOR times the limit is refused at once with that
 * estimate (docs/simulation.md, "Work limits"). */
#define SIM_STEP_CHUNK 500
#define SIM_PROJECT_MIN 2000
#define SIM_PROJECT_FACTOR 10.0

/* The trajectory's size, before any work: samples x (q, v, v', lambda, mu, X, Z, r, y) within
 * opt->mem_budget; the number of whole output intervals into *nsamp. */
int sim_trajectory_size(const mbl_point *start, const mbl_sim_options *opt, int ny, double *nsamp, mbl_status *st)
{
    *nsamp = floor((opt->t_end - start->t) / opt->dt_out * (1 + 1e-12) + 1e-9);
    double width = 3.0 * start->n + start->m + start->k + start->nX + start->nZ + start->nr + ny + 1;
    double bytes = (*nsamp + 2) * width * sizeof(double);
    if (!(*nsamp < 1e9) || !(bytes <= opt->mem_budget))
        return mbl_error(st, MBL_ENOMEM,
                         "the trajectory would hold %.4g samples of %.0f values (%.3g bytes), more than the memory "
                         "budget of %.3g bytes (--mem-budget): raise the output interval (--dt-out) or the budget",
                         *nsamp + 1, width, bytes, opt->mem_budget);
    return 0;
}

/* The step budget after a call of IDASolve that reached tret: the total, and early the projected
 * total at the rate so far (refused when SIM_PROJECT_FACTOR times over the budget). */
static int step_limit(void *mem, const mbl_sim_options *opt, double t0, double tret, mbl_status *st)
{
    long nst = 0;
    IDAGetNumSteps(mem, &nst);
    if (!(tret < opt->t_end)) return 0;
    double projected = tret > t0 ? (double)nst * (opt->t_end - t0) / (tret - t0) : INFINITY;
    if (nst >= opt->max_steps)
        return mbl_error(st, MBL_ENOCONV,
                         "the integration stopped at t = %.10g after %ld steps, the limit (--max-steps %ld): at that "
                         "rate t = %.6g takes about %.3g steps; raise the limit or shorten --t-end",
                         tret, nst, opt->max_steps, opt->t_end, projected);
    if (nst >= SIM_PROJECT_MIN && projected > SIM_PROJECT_FACTOR * (double)opt->max_steps)
        return mbl_error(st, MBL_ENOCONV,
                         "the integration to t = %.6g would take about %.3g steps (%ld steps reached t = %.6g), more "
                         "than --max-steps %ld allows: raise the limit or shorten --t-end",
                         opt->t_end, projected, nst, tret, opt->max_steps);
    return 0;
}

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct errbuf {
    char msg[400];
} errbuf;

static void ida_err(int code, const char *module, const char *function, char *msg, void *ud)
{
    (void)module;
    errbuf *e = ud;
    if (code < 0 && !e->msg[0]) snprintf(e->msg, sizeof e->msg, "%s: %s", function, msg);
}

int sim_record(sim *s, mbl_sim_result *R, int si, double t, const double *y, const double *yp, mbl_status *st)
{
    int n = s->n, m = s->m, k = s->k;
    int rc = sim_make_x(s, t, y, yp, st);
    if (!rc) rc = mbl_dae_eval_residual(s->ev, t, s->x, s->F, st);
    if (!rc && R->ny) rc = mbl_dae_eval_outputs(s->ev, t, s->x, R->y + (size_t)si * R->ny, st);
    if (rc) return rc;
    R->t[si] = t;
    memcpy(R->q + (size_t)si * n, y + s->oq, (size_t)n * sizeof(double));
    memcpy(R->v + (size_t)si * n, y + s->ov, (size_t)n * sizeof(double));
    memcpy(R->vdot + (size_t)si * n, yp + s->ov, (size_t)n * sizeof(double));
    memcpy(R->lambda + (size_t)si * m, y + s->ol, (size_t)m * sizeof(double));
    memcpy(R->mu + (size_t)si * k, y + s->omu, (size_t)k * sizeof(double));
    memcpy(R->X + (size_t)si * s->nX, y + s->oX, (size_t)s->nX * sizeof(double));
    memcpy(R->Z + (size_t)si * s->nZ, y + s->oZ, (size_t)s->nZ * sizeof(double));
    memcpy(R->r + (size_t)si * s->nr, s->x + s->L.col0[MBL_DAE_R], (size_t)s->nr * sizeof(double));
    const int *r0 = s->L.row0;
    for (int j = r0[MBL_DAE_PHI]; j < r0[MBL_DAE_PHI + 1]; j++) R->phi_max = fmax(R->phi_max, fabs(s->F[j]));
    for (int j = r0[MBL_DAE_PHID]; j < r0[MBL_DAE_PHID + 1]; j++) R->phid_max = fmax(R->phid_max, fabs(s->F[j]));
    for (int j = r0[MBL_DAE_NH]; j < r0[MBL_DAE_NH + 1]; j++) R->nh_max = fmax(R->nh_max, fabs(s->F[j]));
    for (int j = 0; j < m; j++) R->eta_max = fmax(R->eta_max, fabs(y[s->oeta + j]));
    return 0;
}

/* The trajectory's arrays: nt samples of every variable and ny outputs. Errors: MBL_ENOMEM. */
int sim_result_alloc(mbl_sim_result *R, const sim *s, int nt, int ny, mbl_status *st)
{
    int n = s->n;
    R->n = n, R->m = s->m, R->k = s->k, R->nX = s->nX, R->nZ = s->nZ, R->nr = s->nr;
    R->ny = ny;
    R->nt = nt;
    R->t = mbl_alloc_array((size_t)nt + 1, sizeof *R->t);
    R->q = mbl_alloc_array((size_t)nt * n + 1, sizeof *R->q);
    R->v = mbl_alloc_array((size_t)nt * n + 1, sizeof *R->v);
    R->vdot = mbl_alloc_array((size_t)nt * n + 1, sizeof *R->vdot);
    R->lambda = mbl_alloc_array((size_t)nt * s->m + 1, sizeof *R->lambda);
    R->mu = mbl_alloc_array((size_t)nt * s->k + 1, sizeof *R->mu);
    R->X = mbl_alloc_array((size_t)nt * s->nX + 1, sizeof *R->X);
    R->Z = mbl_alloc_array((size_t)nt * s->nZ + 1, sizeof *R->Z);
    R->r = mbl_alloc_array((size_t)nt * s->nr + 1, sizeof *R->r);
    R->y = mbl_alloc_array((size_t)nt * R->ny + 1, sizeof *R->y);
    if (!R->t || !R->q || !R->v || !R->vdot || !R->lambda || !R->mu || !R->X || !R->Z || !R->r || !R->y)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

/* mbl_simulate's watch: the stage "simulate", the model time done of the whole */
typedef struct sim_span {
    double t0, t_end;
} sim_span;

static int report_simulate(void *ud, double t, long nsteps, mbl_status *st)
{
    (void)nsteps;
    const sim_span *sp = ud;
    return core_progress(st, "simulate", fmin(t, sp->t_end) - sp->t0, sp->t_end - sp->t0);
}

int mbl_simulate(const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, mbl_sim_result **out,
                 mbl_status *st)
{
    sim_span sp = {start ? start->t : 0, opt ? opt->t_end : 0};
    sim_watch w = {report_simulate, &sp};
    return sim_run(md, start, opt, &w, out, st);
}

/* opt's defaults filled in and checked against the start; *nt: the samples */
static int run_options(const mbl_model *md, const mbl_point *start, mbl_sim_options *o, int *nt_out, mbl_status *st)
{
    mbl_sim_options opt = *o;
    double t0 = start->t;
    if (!(opt.t_end > t0) || !isfinite(opt.t_end))
        return mbl_error(st, MBL_EARG, "the end time %g must be after the start time %g", opt.t_end, t0);
    if (opt.dt_out <= 0) opt.dt_out = (opt.t_end - t0) / 1000;
    if (!(opt.rtol > 0) || !(opt.atol > 0)) return mbl_error(st, MBL_EARG, "the tolerances must be positive");
    if (!opt.max_steps) opt.max_steps = 1000000L;
    if (opt.mem_budget == 0) opt.mem_budget = 2e9;
    if (opt.max_steps < 0 || !(opt.mem_budget > 0) || !isfinite(opt.mem_budget))
        return mbl_error(st, MBL_EARG, "max_steps and mem_budget must be positive (0: the defaults)");
    if (opt.integrator != MBL_SIM_IDA && opt.integrator != MBL_SIM_SSODE)
        return mbl_error(st, MBL_EARG, "integrator %d: expected MBL_SIM_IDA or MBL_SIM_SSODE", opt.integrator);
    double nsamp = 0;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    if (sim_trajectory_size(start, &opt, info.noutput, &nsamp, st)) return st ? st->code : MBL_EARG;
    int nt = (int)nsamp + 1;
    int last_extra = t0 + (nt - 1) * opt.dt_out < opt.t_end - 1e-12 * fmax(fabs(opt.t_end), opt.dt_out);
    nt += last_extra;
    *o = opt;
    *nt_out = nt;
    return 0;
}

int sim_run(const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt_in, const sim_watch *w,
            mbl_sim_result **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_simulate: out is NULL");
    *out = NULL;
    if (!md || !start) return mbl_error(st, MBL_EARG, "mbl_simulate: NULL argument");
    mbl_sim_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_sim_options_default(&opt);
    double t0 = start->t;
    int nt = 0;
    if (run_options(md, start, &opt, &nt, st)) return st ? st->code : MBL_EARG;
    if (opt.integrator == MBL_SIM_SSODE) return sim_ssode_run(md, start, &opt, nt, w, out, st);
    mbl_model_info info;
    mbl_model_get_info(md, &info);

    sim s;
    int rc = sim_setup(&s, md, start, &opt, st);
    mbl_sim_result *R = rc ? NULL : mbl_calloc(1, sizeof *R);
    SUNContext ctx = NULL;
    N_Vector yy = NULL, yyp = NULL, id = NULL, av = NULL;
    SUNMatrix Jm = NULL;
    SUNLinearSolver LS = NULL;
    void *mem = NULL;
    errbuf eb = {{0}};
    if (!rc && !R) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) goto done;
    int n = s.n, N = s.N;
    if ((rc = sim_result_alloc(R, &s, nt, info.noutput, st))) goto done;
    if (SUNContext_Create(NULL, &ctx)) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: cannot create a context");
        goto done;
    }
    yy = N_VNew_Serial(N, ctx), yyp = N_VNew_Serial(N, ctx), id = N_VNew_Serial(N, ctx), av = N_VNew_Serial(N, ctx);
    if (!yy || !yyp || !id || !av) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory (SUNDIALS vectors)");
        goto done;
    }
    double *y = N_VGetArrayPointer(yy), *yp = N_VGetArrayPointer(yyp), *idv = N_VGetArrayPointer(id);
    double *avv = N_VGetArrayPointer(av);
    memset(y, 0, (size_t)N * sizeof *y);
    memset(yp, 0, (size_t)N * sizeof *yp);
    memcpy(y + s.oq, start->q, (size_t)n * sizeof *y);
    memcpy(y + s.ov, start->v, (size_t)n * sizeof *y);
    memcpy(yp + s.oq, start->v, (size_t)n * sizeof *y);
    memcpy(yp + s.ov, start->vdot, (size_t)n * sizeof *y);
    memcpy(y + s.ol, start->lambda, (size_t)s.m * sizeof *y);
    memcpy(y + s.omu, start->mu, (size_t)s.k * sizeof *y);
    if (start->nX == s.nX && start->nZ == s.nZ) {
        memcpy(y + s.oX, start->X, (size_t)s.nX * sizeof *y);
        memcpy(yp + s.oX, start->Xdot, (size_t)s.nX * sizeof *y);
        memcpy(y + s.oZ, start->Z, (size_t)s.nZ * sizeof *y);
    }
    rc = sim_consistent_start(&s, t0, y, yp, st);
    if (!rc) rc = sim_start_in_range(&s, t0, y, yp, opt.rtol, opt.atol, st);
    if (rc) goto done;
    for (int i = 0; i < N; i++) {
        int diff = i < s.ol;
        idv[i] = diff ? 1.0 : 0.0;
        avv[i] = diff ? opt.atol : 1e10; /* algebraic variables: suppressed from the error test */
    }
    mem = IDACreate(ctx);
    if (!mem) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: IDACreate failed");
        goto done;
    }
    IDASetErrHandlerFn(mem, ida_err, &eb);
    int nnz = s.A->p[N];
    Jm = SUNSparseMatrix(N, N, nnz > 0 ? nnz : 1, CSC_MAT, ctx);
    LS = Jm ? SUNLinSol_KLU(yy, Jm, ctx) : NULL;
    if (!Jm || !LS || IDAInit(mem, res_fn, t0, yy, yyp) || IDASVtolerances(mem, opt.rtol, av) ||
        IDASetUserData(mem, &s) || IDASetId(mem, id) || IDASetSuppressAlg(mem, SUNTRUE) ||
        IDASetLinearSolver(mem, LS, Jm) || IDASetJacFn(mem, jac_fn) || IDASetMaxNumSteps(mem, SIM_STEP_CHUNK) ||
        IDASetStopTime(mem, opt.t_end) || (opt.h_max > 0 && IDASetMaxStep(mem, opt.h_max))) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: setting up IDA failed%s%s", eb.msg[0] ? ": " : "", eb.msg);
        goto done;
    }
    double tic = sim_now();
    s.watch = w, s.mem = mem, s.t_seen = t0;
    if (w && (rc = w->report(w->ud, t0, 0, st))) goto done; /* the stage named before the first step */
    rc = sim_record(&s, R, 0, t0, y, yp, st);
    for (int si = 1; !rc && si < nt; si++) {
        double tout = si == nt - 1 ? opt.t_end : t0 + si * opt.dt_out, tret = t0;
        long done = 0;
        IDAGetNumSteps(mem, &done);
        IDASetMaxNumSteps(mem, opt.max_steps - done < SIM_STEP_CHUNK ? (opt.max_steps - done > 0 ? opt.max_steps - done : 1)
                                                                     : SIM_STEP_CHUNK);
        int flag = IDASolve(mem, tout, &tret, yy, yyp, IDA_NORMAL);
        if ((flag >= 0 || flag == IDA_TOO_MUCH_WORK) && (rc = step_limit(mem, &opt, t0, tret, st))) {
            /* steps that shrink towards where the model cannot be evaluated (a data set's end, a
             * sqrt of a negative): the cause, rather than only the count */
            if (s.nfail) {
                mbl_status why = *st;
                mbl_error(st, why.code, "%s; the model could not be evaluated %ld times on the way, the last: %s",
                          why.msg, s.nfail, s.last.msg);
            }
            break;
        }
        if (flag == IDA_TOO_MUCH_WORK) { /* a chunk done: go on towards the same sample */
            si--;
            continue;
        }
        if (flag < 0 && s.stopped) { /* the watch's stop (Ctrl-C, a budget), as it said */
            rc = mbl_error(st, s.stop.code ? s.stop.code : MBL_ECANCELLED, "%s", s.stop.msg);
            break;
        }
        if (flag < 0) {
            if (s.failed)
                rc = mbl_error(st, s.err.code ? s.err.code : MBL_ENOCONV, "at t = %.10g: %s", tret, s.err.msg);
            else
                rc = mbl_error(st, MBL_ENOCONV, "the integration stopped at t = %.10g: %s", tret,
                               eb.msg[0] ? eb.msg : "IDA failed");
            break;
        }
        rc = sim_record(&s, R, si, tout, y, yp, st);
    }
    R->seconds = sim_now() - tic;
    if (!rc) {
        IDAGetNumSteps(mem, &R->nsteps);
        IDAGetNumResEvals(mem, &R->nres);
        IDAGetNumJacEvals(mem, &R->njac);
        IDAGetNumLinSolvSetups(mem, &R->nlinsetups);
        IDAGetNumErrTestFails(mem, &R->netf);
        IDAGetNumNonlinSolvConvFails(mem, &R->nncf);
    }
done:
    if (mem) IDAFree(&mem);
    if (LS) SUNLinSolFree(LS);
    if (Jm) SUNMatDestroy(Jm);
    if (yy) N_VDestroy(yy);
    if (yyp) N_VDestroy(yyp);
    if (id) N_VDestroy(id);
    if (av) N_VDestroy(av);
    if (ctx) SUNContext_Free(&ctx);
    sim_free(&s);
    if (rc) {
        mbl_sim_result_free(R);
        return rc;
    }
    *out = R;
    return 0;
}

/* ---- a check of the Newton matrix ------------------------------------------------------------ */

int mbl_sim_check_jacobian(const mbl_model *md, const mbl_point *start, double cj, double eta, double *max_err,
                           mbl_status *st)
{
    if (!md || !start || !max_err) return mbl_error(st, MBL_EARG, "mbl_sim_check_jacobian: NULL argument");
    mbl_sim_options opt;
    mbl_sim_options_default(&opt);
    sim s;
    int rc = sim_setup(&s, md, start, &opt, st), N = s.N;
    double *y = rc ? NULL : mbl_calloc((size_t)4 * N + 1, sizeof *y), *yp = y ? y + N : NULL;
    double *r1 = y ? y + 2 * N : NULL, *r2 = y ? y + 3 * N : NULL;
    if (!rc && !y) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        memcpy(y + s.oq, start->q, (size_t)s.n * sizeof *y);
        memcpy(y + s.ov, start->v, (size_t)s.n * sizeof *y);
        memcpy(yp + s.oq, start->v, (size_t)s.n * sizeof *y);
        rc = sim_consistent_start(&s, start->t, y, yp, st);
    }
    for (int j = 0; !rc && j < s.m; j++) y[s.oeta + j] = eta * (1 + 0.37 * j); /* the Hessian term counts */
    if (!rc) rc = newton_matrix(&s, start->t, cj, y, yp, st);
    double worst = 0;
    for (int c = 0; !rc && c < N; c++) {
        double h = 1e-6 * (1 + fabs(y[c])), y0 = y[c], yp0 = yp[c];
        y[c] = y0 + h, yp[c] = yp0 + cj * h;
        rc = residual(&s, start->t, y, yp, r1, st);
        y[c] = y0 - h, yp[c] = yp0 - cj * h;
        if (!rc) rc = residual(&s, start->t, y, yp, r2, st);
        y[c] = y0, yp[c] = yp0;
        double amax = 0;
        for (int p = s.A->p[c]; p < s.A->p[c + 1]; p++) amax = fmax(amax, fabs(s.A->x[p]));
        for (int r = 0, p = s.A->p[c]; !rc && r < N; r++) {
            double an = 0;
            if (p < s.A->p[c + 1] && s.A->i[p] == r) an = s.A->x[p++];
            worst = fmax(worst, fabs((r1[r] - r2[r]) / (2 * h) - an) / (1 + amax));
        }
    }
    mbl_free(y);
    sim_free(&s);
    if (!rc) *max_err = worst;
    return rc;
}

/* ---- output ------------------------------------------------------------------------------------ */

int mbl_sim_write_csv(FILE *f, const mbl_model *md, const mbl_sim_result *R)
{
    if (!f || !md || !R) return MBL_EARG;
    fprintf(f, "t");
    for (int i = 0; i < R->n; i++) fprintf(f, ",%s", mbl_model_coord_name(md, i));
    for (int i = 0; i < R->n; i++) fprintf(f, ",der(%s)", mbl_model_coord_name(md, i));
    for (int i = 0; i < R->nX; i++) fprintf(f, ",%s", mbl_model_ode_state_name(md, i));
    for (int i = 0; i < R->nr; i++) fprintf(f, ",%s", mbl_model_input_name(md, i));
    for (int i = 0; i < R->ny; i++) fprintf(f, ",%s", mbl_model_output_name(md, i));
    fprintf(f, "\n");
    /* printf's "%.17g" characters by core_put_g (glibc's printf is the slow part of a long run's output) */
    for (int s = 0; s < R->nt; s++) {
        core_put_g(f, R->t[s], 17);
        const double *col[5] = {R->q, R->v, R->X, R->r, R->y}; /* NULL where the count is 0 */
        int cnt[5] = {R->n, R->n, R->nX, R->nr, R->ny};
        for (int k = 0; k < 5; k++)
            for (int i = 0; i < cnt[k]; i++) {
                putc(',', f);
                core_put_g(f, col[k][(size_t)s * (size_t)cnt[k] + (size_t)i], 17);
            }
        putc('\n', f);
    }
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sim_point(const mbl_model *md, const mbl_sim_result *R, int s, mbl_point **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_sim_point: out is NULL");
    *out = NULL;
    if (!md || !R || s < 0 || s >= R->nt) return mbl_error(st, MBL_EARG, "mbl_sim_point: no sample %d", s);
    /* a `given` point at the sample's q, v and inputs makes the point object (and re-solves v',
     * lambda, mu); then the simulated values replace them */
    mbl_opoint_options oo;
    mbl_opoint_options_default(&oo);
    oo.at = MBL_AT_GIVEN;
    oo.q = R->q + (size_t)s * R->n;
    oo.v = R->v + (size_t)s * R->n;
    oo.r = R->r + (size_t)s * R->nr;
    oo.t = R->t[s];
    oo.has_t = 1;
    oo.move_note = 0;
    mbl_point *p = NULL;
    int rc = mbl_operating_point(md, &oo, &p, st);
    if (rc) return rc;
    memcpy(p->q, R->q + (size_t)s * R->n, (size_t)R->n * sizeof(double));
    memcpy(p->v, R->v + (size_t)s * R->n, (size_t)R->n * sizeof(double));
    memcpy(p->vdot, R->vdot + (size_t)s * R->n, (size_t)R->n * sizeof(double));
    memcpy(p->lambda, R->lambda + (size_t)s * R->m, (size_t)R->m * sizeof(double));
    memcpy(p->mu, R->mu + (size_t)s * R->k, (size_t)R->k * sizeof(double));
    memcpy(p->r, R->r + (size_t)s * R->nr, (size_t)R->nr * sizeof(double));
    if (p->nX == R->nX && p->nZ == R->nZ) {
        memcpy(p->X, R->X + (size_t)s * R->nX, (size_t)R->nX * sizeof(double));
        memcpy(p->Z, R->Z + (size_t)s * R->nZ, (size_t)R->nZ * sizeof(double));
    }
    *out = p;
    return 0;
}
