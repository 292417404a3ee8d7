/* Coordinate partitioning: the constrained equations of motion as an ODE in the independent
 * coordinates (mbl_sim_options.integrator = MBL_SIM_SSODE; docs/simulation.md, "Coordinate
 * partitioning (SSODE)"). Wehage and Haug's method, source 004 and source 000's SSR.
 *
 * The n coordinates are split by Gaussian elimination with complete pivoting of Phi_q
 * (mbla_select_columns, source 000 Eq. 20-22): the m columns pivoted first are the dependent
 * coordinates q_D (their block B = Phi_qD the best conditioned), the other p = n - m the
 * independent ones q_I. SUNDIALS CVODE (BDF, dense difference-quotient Jacobian) integrates
 *
 *   y = [q_I; v_I; X],   y' = [v_I; v'_I; X']
 *
 * and every right-hand side completes the state: q_D by Newton on Phi(q, t) = 0 with B factored
 * (LAPACK dgetrf, modified Newton from the latest evaluation's B, refreshed when the iteration
 * contracts slowly), v_D from Phi_q v + Phi_t = 0 (exact: one solve with B at the converged q),
 * then v', lambda and X' from the acceleration-level equations [R; d; Phi''] = 0, the augmented
 * system [M Phi_q^T; Phi_q 0] of the simulation's consistent start (accel.c, KLU).
 *
 * After every step the state at the step's end is completed and B's condition ||Phi_q||_1
 * ||B^-1||_1 (dgecon) compared with its value when the partition was chosen: beyond
 * mbl_sim_options.repartition_cond times it, the integration stops there, the partition is chosen
 * anew from Phi_q at that state and CVODE restarts (CVodeReInit) from it. A step CVODE cannot take
 * (Newton diverging on a partition that degenerated within the step) does the same once at the
 * last step's end; a step that jumped over a singular configuration (SSODE_BOUNCE below) is undone.
 * The samples are CVODE's interpolant of y at the output times, completed the same
 * way. Refused: non-holonomic constraints, implicit variables, redundant constraints (rank Phi_q < m). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "sim_internal.h"

/* Newton's iterations on Phi = 0 per state; after the first, a correction that has not shrunk the
 * residual by SSODE_CONTRACT refreshes B at the current q */
#define SSODE_NEWTON_MAX 20
#define SSODE_CONTRACT 0.01
/* A step over a singular configuration of the partition (between two checks): the independent
 * coordinates' ODE is smooth through it, but q_D stays on its branch, so the motion continues as its
 * mirror image, and the dependent velocities reverse. Seen as a jump of the whole velocity over the
 * step: |v(t1) - v(t0) - h/2 (v'(t0) + v'(t1))| beyond SSODE_BOUNCE times |v(t1) - v(t0)| (and beyond
 * 1e3 (atol + rtol |v|)), the step is undone: the integration restarts at t0 with the partition chosen
 * anew there, or, when that is the same, with steps at most a quarter of the undone one; at most
 * SSODE_MAX_UNDO times in a run */
#define SSODE_BOUNCE 0.5
#define SSODE_MAX_UNDO 1000

typedef struct ssode {
    sim s;
    sim_accel acc;
    int n, m, p, nX, ns;      /* ns = 2 p + nX: CVODE's states */
    int *dep, *ind, *perm;    /* m dependent, p independent coordinates; perm: n, the selection's */
    int nphiq, *phiq_src, *phiq_pos; /* Phi_q's entries in J, their places in Pq */
    double *Pq, *B, *w;       /* m x n, m x m, m */
    mbla_dlu *lu;             /* of B */
    int lu_ok;                /* lu holds a factorization (not after a singular B) */
    double *y, *yp;           /* the stabilized system's layout (sim.c): N each */
    double tol, cond, cond_ref;
    long nrhs;
    int failed, stopped;
    mbl_status err, stop;
    const sim_watch *watch;
    long steps;               /* taken before the current CVODE run */
    double t_seen;
    char cvmsg[400];
} ssode;

static void ssode_free(ssode *o)
{
    sim_accel_free(&o->acc);
    sim_free(&o->s);
    mbla_dlu_free(o->lu);
    mbl_free(o->dep), mbl_free(o->ind), mbl_free(o->perm), mbl_free(o->phiq_src), mbl_free(o->phiq_pos);
    mbl_free(o->Pq), mbl_free(o->B), mbl_free(o->w), mbl_free(o->y);
}

/* B's condition relative to Phi_q: ||Phi_q||_1 ||B^-1||_1 (dgecon's estimate of ||B^-1||_1; B
 * factored). A 1 x 1 block's own condition number is 1 at any value: Phi_q's norm in place of
 * B's makes the measure grow as the block vanishes beside the other columns. */
static int block_cond(const ssode *o, double *cond, mbl_status *st)
{
    double rcond = 0;
    int rc = mbla_dlu_rcond(o->lu, &rcond, st);
    double nb = mbla_norm1(o->m, o->m, o->B, o->m), nq = mbla_norm1(o->m, o->n, o->Pq, o->m);
    *cond = !rc && rcond > 0 && nb > 0 ? nq / (rcond * nb) : INFINITY;
    return rc;
}

/* Phi_q from s->J into Pq, its dependent block into B, factored; o->cond its condition number */
static int factor_block(ssode *o, mbl_status *st)
{
    int m = o->m;
    const double *J = o->s.J;
    for (int e = 0; e < o->nphiq; e++) o->Pq[o->phiq_pos[e]] = J[o->phiq_src[e]];
    for (int k = 0; k < m; k++) memcpy(o->B + (size_t)k * m, o->Pq + (size_t)o->dep[k] * m, (size_t)m * sizeof *o->B);
    int rc = o->lu ? mbla_dlu_refactor(o->lu, o->B, m, st) : mbla_dlu_new(m, o->B, m, &o->lu, st);
    o->lu_ok = !rc;
    if (rc == MBL_ESINGULAR) { /* (a numerical failure a smaller step or a new partition mends: not the
                                    model's MBL_ESINGULAR, which ends the run) */
        o->cond = INFINITY;
        return mbl_error(st, MBL_ENOCONV, "the dependent coordinates' block of Phi_q is singular");
    }
    return rc ? rc : block_cond(o, &o->cond, st);
}

static int jacobian_at(ssode *o, double t, mbl_status *st)
{
    int rc = sim_make_x(&o->s, t, o->y, o->yp, st);
    if (!rc) rc = mbl_dae_eval_jacobian(o->s.ev, t, o->s.x, o->s.J, st);
    return rc;
}

/* q_D by Newton on Phi(q, t) = 0 from its current value */
static int position_newton(ssode *o, double t, mbl_status *st)
{
    sim *s = &o->s;
    int m = o->m, r0 = s->L.row0[MBL_DAE_PHI], rc = 0;
    double prev = INFINITY, nrm = 0;
    if (!o->lu_ok && ((rc = jacobian_at(o, t, st)) || (rc = factor_block(o, st)))) return rc;
    for (int it = 0; it < SSODE_NEWTON_MAX; it++) {
        if ((rc = sim_make_x(s, t, o->y, o->yp, st)) || (rc = mbl_dae_eval_residual(s->ev, t, s->x, s->F, st))) return rc;
        nrm = 0;
        for (int i = 0; i < m; i++) o->w[i] = -s->F[r0 + i], nrm = fmax(nrm, fabs(o->w[i]));
        if (!isfinite(nrm)) break;
        if (nrm <= o->tol) return 0;
        if (it > 0 && nrm > SSODE_CONTRACT * prev && ((rc = jacobian_at(o, t, st)) || (rc = factor_block(o, st))))
            return rc;
        prev = nrm;
        if ((rc = mbla_dlu_solve(o->lu, 'N', 1, o->w, m, st))) return rc;
        double dmax = 0, qmax = 0;
        for (int k = 0; k < m; k++) {
            double *q = o->y + s->oq + o->dep[k];
            *q += o->w[k];
            dmax = fmax(dmax, fabs(o->w[k]));
            qmax = fmax(qmax, fabs(*q));
        }
        if (dmax <= 4 * DBL_EPSILON * (1 + qmax)) return 0; /* at rounding */
    }
    return mbl_error(st, MBL_ENOCONV, "the dependent coordinates at t = %.10g: Newton on Phi = 0 stopped at |Phi| = %.3g",
                     t, nrm);
}

/* the whole state (q, v, v', lambda, X') in y, y' from CVODE's yc at t; o->cond: B's condition */
static int complete(ssode *o, double t, const double *yc, mbl_status *st)
{
    sim *s = &o->s;
    int p = o->p, m = o->m;
    for (int j = 0; j < p; j++) o->y[s->oq + o->ind[j]] = yc[j], o->y[s->ov + o->ind[j]] = yc[p + j];
    memcpy(o->y + s->oX, yc + 2 * p, (size_t)o->nX * sizeof *o->y);
    int rc = m ? position_newton(o, t, st) : 0;
    if (!rc) rc = jacobian_at(o, t, st); /* at the converged q: B, and the accelerations' matrix */
    if (!rc && m) rc = factor_block(o, st);
    if (!rc && m) { /* v_D: Phi_qD dv_D = -(Phi_q v + Phi_t) */
        int r0 = s->L.row0[MBL_DAE_PHID];
        if (!(rc = sim_make_x(s, t, o->y, o->yp, st)) && !(rc = mbl_dae_eval_residual(s->ev, t, s->x, s->F, st))) {
            for (int i = 0; i < m; i++) o->w[i] = -s->F[r0 + i];
            rc = mbla_dlu_solve(o->lu, 'N', 1, o->w, m, st);
            for (int k = 0; !rc && k < m; k++) o->y[s->ov + o->dep[k]] += o->w[k];
        }
    }
    if (!rc) memcpy(o->yp + s->oq, o->y + s->ov, (size_t)o->n * sizeof *o->yp);
    if (!rc) rc = sim_accel_solve(s, &o->acc, t, o->y, o->yp, 1, st);
    return rc;
}

static int rhs(realtype t, N_Vector yv, N_Vector ydv, void *ud)
{
    ssode *o = ud;
    if (o->stopped) return -1;
    if (o->watch && !(++o->nrhs % SIM_REPORT_EVERY)) {
        mbl_status wst = {0};
        o->t_seen = fmax(o->t_seen, t);
        if (o->watch->report(o->watch->ud, o->t_seen, o->steps, &wst)) {
            o->stopped = 1, o->stop = wst;
            return -1;
        }
    }
    mbl_status st = {0};
    if (complete(o, t, N_VGetArrayPointer(yv), &st)) {
        if (!o->failed) o->err = st;
        o->failed = 1;
        if (st.code == MBL_ESINGULAR) o->stopped = 1, o->stop = st; /* the model's coordinates' singularity
                                                                       (a body's 3-1-3 angles): no smaller step helps */
        return st.code == MBL_ESINGULAR ? -1 : 1; /* recoverable: CVODE tries a smaller step */
    }
    o->failed = 0;
    const sim *s = &o->s;
    double *yd = N_VGetArrayPointer(ydv);
    yd[0] = 0; /* no independent coordinates nor X: CVODE's one state stays 0 */
    for (int j = 0; j < o->p; j++) yd[j] = o->y[s->ov + o->ind[j]], yd[o->p + j] = o->yp[s->ov + o->ind[j]];
    memcpy(yd + 2 * o->p, o->yp + s->oX, (size_t)o->nX * sizeof *yd);
    return 0;
}

/* the partition from Pq (filled at the current state): dep, ind, B factored, cond_ref; changed: 1
 * when the dependent set differs from the one before */
static int partition(ssode *o, double t, int *changed, mbl_status *st)
{
    int m = o->m, n = o->n, rank = 0;
    int rc = mbla_select_columns(m, n, o->Pq, m, NULL, -1, o->perm, &rank, st);
    if (rc) return rc;
    if (rank < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "--integrator ssode: Phi_q has rank %d < m = %d at t = %.10g (redundant constraints, or a "
                         "singular configuration): the IDA integrator takes them", rank, m, t);
    int same = 1;
    for (int k = 0; k < m; k++) {
        int in = 0;
        for (int l = 0; l < m; l++) in |= o->dep[l] == o->perm[k];
        same &= in;
    }
    for (int k = 0; k < m; k++) o->dep[k] = o->perm[k];
    for (int j = 0; j < o->p; j++) o->ind[j] = o->perm[m + j];
    *changed = !same;
    for (int k = 0; k < m; k++) memcpy(o->B + (size_t)k * m, o->Pq + (size_t)o->dep[k] * m, (size_t)m * sizeof *o->B);
    rc = o->lu ? mbla_dlu_refactor(o->lu, o->B, m, st) : mbla_dlu_new(m, o->B, m, &o->lu, st);
    o->lu_ok = !rc;
    if (!rc) rc = block_cond(o, &o->cond, st);
    o->cond_ref = o->cond;
    return rc;
}

static void cv_err(int code, const char *module, const char *function, char *msg, void *ud)
{
    (void)module;
    ssode *o = ud;
    if (code < 0 && !o->cvmsg[0]) snprintf(o->cvmsg, sizeof o->cvmsg, "%s: %s", function, msg);
}

static int setup(ssode *o, const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, mbl_status *st)
{
    sim *s = &o->s;
    int rc = sim_setup(s, md, start, opt, st);
    if (rc) return rc;
    if (s->k) return mbl_error(st, MBL_EARG, "--integrator ssode takes holonomic constraints only: the model has %d non-holonomic constraint(s) (the IDA integrator takes them)", s->k);
    if (s->nZ) return mbl_error(st, MBL_EARG, "--integrator ssode: the model has %d implicit variables (the IDA integrator takes them)", s->nZ);
    if (start->n != s->n || start->nX != s->nX) return mbl_error(st, MBL_EDIM, "the start does not belong to the model");
    int n = s->n, m = s->m;
    if ((rc = sim_accel_new(s, &o->acc, st))) return rc;
    o->n = n, o->m = m, o->p = n - m, o->nX = s->nX, o->ns = 2 * o->p + s->nX;
    o->tol = opt->newton_tol > 0 ? opt->newton_tol : SIM_SSODE_NEWTON_TOL;
    o->dep = mbl_alloc_array((size_t)m + 1, sizeof *o->dep);
    o->ind = mbl_alloc_array((size_t)n + 1, sizeof *o->ind);
    o->perm = mbl_alloc_array((size_t)n + 1, sizeof *o->perm);
    o->phiq_src = mbl_alloc_array((size_t)s->L.jnz + 1, sizeof *o->phiq_src);
    o->phiq_pos = mbl_alloc_array((size_t)s->L.jnz + 1, sizeof *o->phiq_pos);
    o->Pq = mbl_calloc((size_t)m * n + 1, sizeof *o->Pq);
    o->B = mbl_calloc((size_t)m * m + 1, sizeof *o->B);
    o->w = mbl_calloc((size_t)m + 1, sizeof *o->w);
    o->y = mbl_calloc((size_t)2 * s->N + 1, sizeof *o->y);
    if (!o->dep || !o->ind || !o->perm || !o->phiq_src || !o->phiq_pos || !o->Pq || !o->B || !o->w || !o->y)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    o->yp = o->y + s->N;
    const mbl_dae_layout *L = &s->L;
    for (int e = 0; e < L->jnz; e++) {
        int r = L->jrow[e], c = L->jcol[e];
        if (r < L->row0[MBL_DAE_PHI] || r >= L->row0[MBL_DAE_PHI + 1] || c < L->col0[MBL_DAE_Q] || c >= L->col0[MBL_DAE_Q + 1])
            continue;
        o->phiq_src[o->nphiq] = e;
        o->phiq_pos[o->nphiq++] = (r - L->row0[MBL_DAE_PHI]) + m * (c - L->col0[MBL_DAE_Q]);
    }
    for (int j = 0; j < n; j++) o->ind[j] = j; /* no constraints: every coordinate independent */
    memcpy(o->y + s->oq, start->q, (size_t)n * sizeof *o->y);
    memcpy(o->y + s->ov, start->v, (size_t)n * sizeof *o->y);
    memcpy(o->yp + s->ov, start->vdot, (size_t)n * sizeof *o->y);
    memcpy(o->y + s->ol, start->lambda, (size_t)m * sizeof *o->y);
    memcpy(o->y + s->oX, start->X, (size_t)s->nX * sizeof *o->y);
    memcpy(o->yp + s->oX, start->Xdot, (size_t)s->nX * sizeof *o->y);
    int changed = 0;
    if (m && !(rc = jacobian_at(o, start->t, st))) {
        for (int e = 0; e < o->nphiq; e++) o->Pq[o->phiq_pos[e]] = s->J[o->phiq_src[e]];
        rc = partition(o, start->t, &changed, st);
    }
    return rc;
}

/* CVODE's state from the whole one */
static void gather(const ssode *o, double *yc)
{
    const sim *s = &o->s;
    for (int j = 0; j < o->p; j++) yc[j] = o->y[s->oq + o->ind[j]], yc[o->p + j] = o->y[s->ov + o->ind[j]];
    memcpy(yc + 2 * o->p, o->y + s->oX, (size_t)o->nX * sizeof *yc);
}

typedef struct cv_counts {
    long nsteps, nres, njac, nlinsetups, netf, nncf;
} cv_counts;

static void add_counts(void *mem, cv_counts *c)
{
    long v[6] = {0}, v2 = 0;
    CVodeGetNumSteps(mem, &v[0]);
    CVodeGetNumRhsEvals(mem, &v[1]);
    CVodeGetNumLinRhsEvals(mem, &v2);
    CVodeGetNumJacEvals(mem, &v[2]);
    CVodeGetNumLinSolvSetups(mem, &v[3]);
    CVodeGetNumErrTestFails(mem, &v[4]);
    CVodeGetNumNonlinSolvConvFails(mem, &v[5]);
    c->nsteps += v[0], c->nres += v[1] + v2, c->njac += v[2], c->nlinsetups += v[3], c->netf += v[4], c->nncf += v[5];
}

/* the partition chosen anew at t (the state completed there: Pq at it); when it differs, CVODE
 * restarts from the state in it (counted) */
static int repartition(ssode *o, void *mem, N_Vector yv, double t, cv_counts *cnt, long *nrepart, mbl_status *st)
{
    int changed = 0, rc = partition(o, t, &changed, st);
    if (rc) return rc;
    if (!changed) return 0;
    add_counts(mem, cnt);
    o->steps = cnt->nsteps;
    gather(o, N_VGetArrayPointer(yv));
    if (CVodeReInit(mem, t, yv)) return mbl_error(st, MBL_ENOCONV, "CVODE: restarting at t = %.10g failed: %s", t, o->cvmsg);
    ++*nrepart;
    return 0;
}

/* the last checked step's end, for undoing a step over a singular configuration */
typedef struct undo_state {
    double t, *yc, *q, *v, *a; /* t, CVODE's state, the whole coordinates, velocity and acceleration */
    long nundo;
    int h_limited;         /* the step is bounded after an undo that kept the partition */
} undo_state;

static void step_save(const ssode *o, undo_state *u, double t, const double *yc)
{
    u->t = t;
    memcpy(u->yc, yc, (size_t)o->ns * sizeof *yc);
    memcpy(u->q, o->y + o->s.oq, (size_t)o->n * sizeof *u->q);
    memcpy(u->v, o->y + o->s.ov, (size_t)o->n * sizeof *u->v);
    memcpy(u->a, o->yp + o->s.ov, (size_t)o->n * sizeof *u->a);
}

/* the step from u->t to t (its end completed) jumps in the whole velocity (SSODE_BOUNCE) */
static int bounced(const ssode *o, const undo_state *u, double t, const mbl_sim_options *opt)
{
    const double *v = o->y + o->s.ov, *a = o->yp + o->s.ov;
    double h = t - u->t, jump = 0, dv = 0, vmax = 0;
    for (int i = 0; i < o->n; i++) {
        double d = v[i] - u->v[i];
        jump = fmax(jump, fabs(d - 0.5 * h * (u->a[i] + a[i])));
        dv = fmax(dv, fabs(d));
        vmax = fmax(vmax, fabs(v[i]));
    }
    return jump > SSODE_BOUNCE * dv && jump > 1e3 * (opt->atol + opt->rtol * vmax);
}

/* the step to t undone: CVODE restarts at u->t, in the partition chosen anew there or, when that is the
 * same, with steps of at most a quarter of the undone one */
static int undo(ssode *o, undo_state *u, void *mem, N_Vector yv, double t, cv_counts *cnt, long *nrepart, mbl_status *st)
{
    if (++u->nundo > SSODE_MAX_UNDO)
        return mbl_error(st, MBL_ENOCONV, "at t = %.10g: the partition degenerated within a step %d times (--repartition-cond "
                         "lower, or h_max)", t, SSODE_MAX_UNDO);
    double *yc = N_VGetArrayPointer(yv);
    memcpy(yc, u->yc, (size_t)o->ns * sizeof *yc);
    memcpy(o->y + o->s.oq, u->q, (size_t)o->n * sizeof *u->q); /* q_D's Newton from its value there */
    int changed = 0, rc = complete(o, u->t, yc, st);
    if (!rc) rc = partition(o, u->t, &changed, st);
    if (rc) return rc;
    if (!changed) {
        u->h_limited = 1;
        CVodeSetMaxStep(mem, 0.25 * (t - u->t));
    }
    add_counts(mem, cnt);
    o->steps = cnt->nsteps;
    gather(o, yc);
    if (CVodeReInit(mem, u->t, yv)) return mbl_error(st, MBL_ENOCONV, "CVODE: restarting at t = %.10g failed: %s", u->t, o->cvmsg);
    *nrepart += changed;
    return 0;
}

/* the run's end: the counters, the partitions */
static void finish(ssode *o, void *mem, cv_counts *cnt, long nrepart, mbl_sim_result *R)
{
    add_counts(mem, cnt);
    R->nsteps = cnt->nsteps, R->nres = cnt->nres, R->njac = cnt->njac, R->nlinsetups = cnt->nlinsetups;
    R->netf = cnt->netf, R->nncf = cnt->nncf;
    R->integrator = MBL_SIM_SSODE, R->nrepart = nrepart, R->nindep = o->p;
}

/* a failure of CVode (flag < 0) as the run's error */
static int cv_failure(ssode *o, int flag, double t, mbl_status *st)
{
    if (o->stopped) return mbl_error(st, o->stop.code ? o->stop.code : MBL_ECANCELLED, "%s", o->stop.msg);
    if (o->failed) return mbl_error(st, o->err.code ? o->err.code : MBL_ENOCONV, "at t = %.10g: %s", t, o->err.msg);
    return mbl_error(st, MBL_ENOCONV, "the integration (SUNDIALS CVODE) stopped at t = %.10g (flag %d): %s", t, flag,
                     o->cvmsg[0] ? o->cvmsg : "CVODE failed");
}

int sim_ssode_run(const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, int nt, const sim_watch *w,
                  mbl_sim_result **out, mbl_status *st)
{
    if (!(opt->newton_tol >= 0) || !(opt->repartition_cond == 0 || opt->repartition_cond > 1))
        return mbl_error(st, MBL_EARG, "newton_tol must be >= 0 and repartition_cond above 1 (0: the defaults)");
    double ratio = opt->repartition_cond > 0 ? opt->repartition_cond : SIM_SSODE_REPARTITION_COND;
    ssode o;
    memset(&o, 0, sizeof o);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int rc = setup(&o, md, start, opt, st);
    mbl_sim_result *R = rc ? NULL : mbl_calloc(1, sizeof *R);
    SUNContext ctx = NULL;
    N_Vector yv = NULL, yi = NULL;
    SUNMatrix Jm = NULL;
    SUNLinearSolver LS = NULL;
    void *mem = NULL;
    cv_counts cnt = {0};
    long nrepart = 0;
    undo_state u = {0};
    double t0 = start->t, tic = sim_now();
    if (!rc && !R) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = sim_result_alloc(R, &o.s, nt, info.noutput, st);
    u.yc = rc ? NULL : mbl_calloc((size_t)o.ns + 3 * (size_t)o.n + 1, sizeof *u.yc);
    if (!rc && !u.yc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) u.q = u.yc + o.ns, u.v = u.q + o.n, u.a = u.v + o.n;
    if (!rc && SUNContext_Create(NULL, &ctx)) rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: cannot create a context");
    if (rc) goto done;
    int ns = o.ns > 0 ? o.ns : 1;
    yv = N_VNew_Serial(ns, ctx), yi = N_VNew_Serial(ns, ctx);
    Jm = SUNDenseMatrix(ns, ns, ctx);
    LS = yv && Jm ? SUNLinSol_Dense(yv, Jm, ctx) : NULL;
    mem = CVodeCreate(CV_BDF, ctx);
    if (!yv || !yi || !Jm || !LS || !mem) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: setting up CVODE failed (out of memory)");
        goto done;
    }
    N_VConst(0.0, yv);
    gather(&o, N_VGetArrayPointer(yv));
    if ((rc = complete(&o, t0, N_VGetArrayPointer(yv), st))) goto done; /* v', lambda at the start */
    if ((rc = sim_start_in_range(&o.s, t0, o.y, o.yp, opt->rtol, opt->atol, st))) goto done;
    CVodeSetErrHandlerFn(mem, cv_err, &o);
    if (CVodeInit(mem, rhs, t0, yv) || CVodeSStolerances(mem, opt->rtol, opt->atol) || CVodeSetUserData(mem, &o) ||
        CVodeSetLinearSolver(mem, LS, Jm) || CVodeSetStopTime(mem, opt->t_end) ||
        (opt->h_max > 0 && CVodeSetMaxStep(mem, opt->h_max))) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: setting up CVODE failed: %s", o.cvmsg);
        goto done;
    }
    o.watch = w, o.t_seen = t0;
    if (w && (rc = w->report(w->ud, t0, 0, st))) goto done;
    rc = sim_record(&o.s, R, 0, t0, o.y, o.yp, st);
    int si = 1, retried = 0;
    double tret = t0;
    step_save(&o, &u, t0, N_VGetArrayPointer(yv));
    while (!rc && si < nt) {
        long nst = 0;
        CVodeGetNumSteps(mem, &nst);
        if (cnt.nsteps + nst >= opt->max_steps) {
            rc = mbl_error(st, MBL_ENOCONV, "the integration stopped at t = %.10g after %ld steps, the limit (--max-steps %ld)",
                           tret, cnt.nsteps + nst, opt->max_steps);
            break;
        }
        o.steps = cnt.nsteps + nst;
        int flag = CVode(mem, opt->t_end, yv, &tret, CV_ONE_STEP);
        if (flag < 0) {
            /* the partition degenerated within the step: once, a new one at the last step's end */
            if (o.stopped || retried || complete(&o, tret, N_VGetArrayPointer(yv), st)) {
                rc = cv_failure(&o, flag, tret, st);
                break;
            }
            long before = nrepart;
            rc = repartition(&o, mem, yv, tret, &cnt, &nrepart, st);
            if (!rc && nrepart == before) rc = cv_failure(&o, flag, tret, st);
            retried = 1;
            continue;
        }
        retried = 0;
        rc = complete(&o, tret, N_VGetArrayPointer(yv), st); /* the step's end */
        if (!rc && o.m && bounced(&o, &u, tret, opt)) {
            rc = undo(&o, &u, mem, yv, tret, &cnt, &nrepart, st);
            continue;
        }
        int ns0 = si;
        for (; !rc && si < nt; si++) { /* the samples within the step: CVODE's interpolant, completed */
            double tout = si == nt - 1 ? opt->t_end : t0 + si * opt->dt_out;
            if (tout > tret) break;
            if (CVodeGetDky(mem, tout, 0, yi)) {
                rc = mbl_error(st, MBL_ENOCONV, "CVODE: no interpolant at t = %.10g: %s", tout, o.cvmsg);
                break;
            }
            rc = complete(&o, tout, N_VGetArrayPointer(yi), st);
            if (!rc) rc = sim_record(&o.s, R, si, tout, o.y, o.yp, st);
        }
        if (rc || si >= nt) break;
        if (si > ns0) rc = complete(&o, tret, N_VGetArrayPointer(yv), st); /* the step's end again */
        if (!rc && o.m && o.cond > ratio * o.cond_ref) {
            rc = repartition(&o, mem, yv, tret, &cnt, &nrepart, st);
            if (!rc && u.h_limited) u.h_limited = 0, CVodeSetMaxStep(mem, opt->h_max > 0 ? opt->h_max : 0.0);
        }
        if (!rc) step_save(&o, &u, tret, N_VGetArrayPointer(yv));
    }
    if (!rc) finish(&o, mem, &cnt, nrepart, R);
done:
    if (R) R->seconds = sim_now() - tic;
    if (mem) CVodeFree(&mem);
    if (LS) SUNLinSolFree(LS);
    if (Jm) SUNMatDestroy(Jm);
    if (yv) N_VDestroy(yv);
    if (yi) N_VDestroy(yi);
    if (ctx) SUNContext_Free(&ctx);
    ssode_free(&o);
    mbl_free(u.yc);
    if (rc) {
        mbl_sim_result_free(R);
        return rc;
    }
    *out = R;
    return 0;
}
