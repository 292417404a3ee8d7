/* `penalty` at the penalty system's own equilibrium (opt->pen_equilibrium; source 001 Sec. 3.3:
 * "a certain violation of the kinematic constraints Phi = 0 will be required to balance the
 * applied forces"; issue 70, item 6).
 *
 * By default the penalty method linearizes at the constrained point, whose multipliers stand for
 * the penalty forces. Here the point is moved first to where the penalty system itself is at
 * rest: R(q, lambda(q)) = 0 with lambda(q) = alpha omega^2 Phi(q) (Eq. 11 at rest: Phi' = Phi'' = 0),
 * R = M vdot + Phi_q^T lambda - Q the equations of motion. Newton from the constrained point, with
 * the Jacobian dR/dq + alpha omega^2 Phi_q^T Phi_q (K_p at rest); the first step's Jacobian takes
 * the point's multipliers (at lambda(q0) = 0 the geometric stiffness that holds a pendulum would
 * be missing), the following ones lambda(q). The step shrinks quadratically; it stops when a step
 * is below PEN_EQ_STEP_TOL times the first (the O(1/alpha) offset itself, so the test has no
 * units). The blocks are then those of that point, lambda = alpha omega^2 Phi included: the rest of
 * the method is unchanged. Points at rest of models with holonomic constraints only (no
 * non-holonomic constraints, no Eq. 10 features); elsewhere it is refused in one line. With general
 * penalty matrices (opt->pen_Xi, pen_Omega; src/lin/penalty_mats.c) lambda(q) = Xi Omega Phi(q) and
 * the Jacobian dR/dq + Phi_q^T Xi Omega Phi_q. */
#include <math.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* Newton steps at most, and the step (relative to the first) below which the point has converged */
#define PEN_EQ_MAX_ITER 20
#define PEN_EQ_STEP_TOL 1e-10

typedef struct pen_eq_work {
    double *q, *lam, *lam0, *F, *syms, *work, *K, *dq;
    double *XO, *T, *ph; /* general matrices: Xi Omega (m x m), Xi Omega Phi_q (m x n), Phi (m); NULL: the
                          * scalar form alpha omega^2 I */
} pen_eq_work;

static void pen_eq_free(pen_eq_work *w)
{
    mbl_free(w->q), mbl_free(w->lam), mbl_free(w->lam0), mbl_free(w->F), mbl_free(w->syms), mbl_free(w->work);
    mbl_free(w->K), mbl_free(w->dq), mbl_free(w->XO), mbl_free(w->T), mbl_free(w->ph);
}

/* w->XO = Xi Omega = alpha Xh Omega of the general matrices (lin_pen_dense) */
static int pen_eq_matrices(const mbl_lin_options *opt, int m, int n, pen_eq_work *w, mbl_status *st)
{
    int rc = lin_pen_check(opt, m, st);
    if (rc) return rc;
    double *X = mbl_calloc((size_t)3 * m * m + 1, sizeof *X);
    w->XO = mbl_calloc((size_t)m * m + 1, sizeof *w->XO), w->T = mbl_calloc((size_t)m * n + 1, sizeof *w->T);
    w->ph = mbl_calloc((size_t)m + 1, sizeof *w->ph);
    if (!X || !w->XO || !w->T || !w->ph) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) lin_pen_dense(opt, m, X, X + (size_t)m * m, X + (size_t)2 * m * m);
    if (!rc && m) mbla_gemm('N', 'N', m, m, m, opt->pen_alpha, X, m, X + (size_t)2 * m * m, m, 0.0, w->XO, m, NULL);
    mbl_free(X);
    return rc;
}

/* lambda(q) = alpha omega^2 Phi(q) (general matrices: Xi Omega Phi(q)) into w->lam, and the residual
 * R(q, lambda(q)) into w->dq (negated: the right-hand side of the Newton step); tp's q is w->q */
static int pen_eq_residual(const mbl_model *md, const model_view *mv, mbl_point *tp, double aw2, pen_eq_work *w,
                           mbl_status *st)
{
    int n = mv->n, m = mv->m;
    memset(w->lam, 0, (size_t)(m + 1) * sizeof *w->lam);
    tp->lambda = w->lam;
    model_fill_syms_pt(md, tp, w->syms);
    int rc = model_eval_F(md, w->syms, w->F, w->work, st);
    if (rc) return rc;
    const double *phi = w->F + mv->row0[MBL_ROW_PHI];
    if (w->XO && m) mbla_gemm('N', 'N', m, 1, m, 1.0, w->XO, m, phi, m, 0.0, w->lam, m, NULL);
    else
        for (int i = 0; i < m; i++) w->lam[i] = aw2 * phi[i];
    if (w->ph) memcpy(w->ph, phi, (size_t)m * sizeof *w->ph); /* the violation, for the notes */
    model_fill_syms_pt(md, tp, w->syms);
    rc = model_eval_F(md, w->syms, w->F, w->work, st);
    for (int j = 0; !rc && j < n; j++) w->dq[j] = -w->F[mv->row0[MBL_ROW_EOM] + j];
    return rc;
}

int lin_penalty_equilibrium(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_blocks *B,
                            double *moved, double *viol, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, rc = 0, done = 0;
    memset(B, 0, sizeof *B);
    *moved = *viol = 0;
    if (mv->k > 0 || mv->ext || lin_point_moving(pt))
        return mbl_error(st, MBL_EARG, "penalty: the penalty equilibrium (pen_equilibrium) is for points at rest of "
                         "models with holonomic constraints only (here: %s)",
                         mv->k > 0 ? "non-holonomic constraints" : mv->ext ? "ode states, implicit variables or forces "
                         "of multipliers" : "a point with motion");
    double aw2 = opt->pen_alpha * opt->pen_omega * opt->pen_omega, first = 0;
    pen_eq_work w = {mbl_alloc_array((size_t)n + 1, sizeof *w.q), mbl_calloc((size_t)m + 1, sizeof *w.lam),
                     mbl_calloc((size_t)m + 1, sizeof *w.lam0), mbl_calloc((size_t)mv->nF + 1, sizeof *w.F),
                     mbl_calloc((size_t)mv->nsym + 1, sizeof *w.syms), mbl_calloc(mv->work_size + 1, sizeof *w.work),
                     mbl_calloc((size_t)n * n + 1, sizeof *w.K), mbl_calloc((size_t)n + 1, sizeof *w.dq),
                     NULL, NULL, NULL};
    if (!w.q || !w.lam || !w.lam0 || !w.F || !w.syms || !w.work || !w.K || !w.dq) {
        pen_eq_free(&w);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (lin_pen_general(opt) && (rc = pen_eq_matrices(opt, m, n, &w, st))) {
        pen_eq_free(&w);
        return rc;
    }
    memcpy(w.q, pt->q, (size_t)n * sizeof *w.q);
    mbl_point tp = *pt;
    tp.q = w.q;
    tp.jac_memo = NULL;
    for (int it = 0; !rc; it++) {
        rc = pen_eq_residual(md, mv, &tp, aw2, &w, st);
        if (rc) break;
        /* the Jacobian's multipliers: the point's on the first step, then lambda(q) */
        if (!it && m) memcpy(w.lam0, pt->lambda, (size_t)m * sizeof *w.lam0);
        tp.lambda = it || done ? w.lam : w.lam0;
        lin_blocks_free(B);
        rc = lin_blocks_init(md, &tp, B, st);
        if (rc || done) break;
        if (it >= PEN_EQ_MAX_ITER) {
            rc = mbl_error(st, MBL_ENOCONV, "penalty: the penalty equilibrium (pen_equilibrium) was not found in %d "
                           "Newton steps from the constrained point", PEN_EQ_MAX_ITER);
            break;
        }
        /* Phi_q^T (alpha omega^2 or Xi Omega) Phi_q: the right factor T = Xi Omega Phi_q with matrices */
        const double *Rt = B->Pq;
        double f = aw2;
        if (w.XO && m) {
            mbla_gemm('N', 'N', m, n, m, 1.0, w.XO, m, B->Pq, m, 0.0, w.T, m, NULL);
            Rt = w.T, f = 1.0;
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int a = 0; a < m; a++) s += B->Pq[a + (size_t)i * m] * Rt[a + (size_t)j * m];
                w.K[i + (size_t)j * n] = B->Rq[i + (size_t)j * n] + f * s;
            }
        rc = mbla_lu_solve(n, 1, w.K, n, w.dq, n, st);
        if (rc == MBL_ESINGULAR)
            rc = mbl_error(st, MBL_ESINGULAR, "penalty: the penalty equilibrium (pen_equilibrium): dR/dq + alpha "
                           "omega^2 Phi_q^T Phi_q is singular at the point (no isolated rest point of the penalty system)");
        double step = 0;
        for (int j = 0; !rc && j < n; j++) {
            w.q[j] += w.dq[j];
            step = fmax(step, fabs(w.dq[j]));
        }
        if (!rc && !isfinite(step))
            rc = mbl_error(st, MBL_ENOCONV, "penalty: the penalty equilibrium (pen_equilibrium): Newton diverged");
        if (!it) first = step;
        done = step <= PEN_EQ_STEP_TOL * first;
    }
    if (!rc) {
        for (int j = 0; j < n; j++) *moved = fmax(*moved, fabs(w.q[j] - pt->q[j]));
        for (int i = 0; i < m; i++) *viol = fmax(*viol, w.ph ? fabs(w.ph[i]) : fabs(w.lam[i]) / aw2);
    } else {
        lin_blocks_free(B);
    }
    pen_eq_free(&w);
    return rc;
}

/* The error estimate's run at alpha / ratio (pen_equilibrium) at its own rest point, so that the
 * point's O(1/alpha) shift is in the extrapolated difference (at alpha's point it was left out:
 * tests/mech/rod_disc_natural.yaml at alpha 1e3 was estimated at 9.3e-4 with an actual error of 0.0158).
 * A given Xi is scaled by 1 / ratio as pen_eigs scales it; the rows keep Xh = Xi / alpha. */
int lin_penalty_equilibrium_ratio(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt,
                                  lin_pen_second *S, mbl_status *st)
{
    mbl_lin_options o2 = *opt;
    double moved = 0, viol = 0, *X2 = NULL;
    size_t mm = opt->pen_Xi ? (size_t)opt->pen_m * opt->pen_m : 0;
    int rc = 0;
    o2.pen_alpha = opt->pen_alpha / opt->pen_ratio;
    if (mm && !(X2 = mbl_alloc_array(mm, sizeof *X2))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (size_t p = 0; p < mm; p++) X2[p] = opt->pen_Xi[p] / opt->pen_ratio;
    if (X2) o2.pen_Xi = X2;
    rc = lin_penalty_equilibrium(md, pt, &o2, &S->B, &moved, &viol, st);
    mbl_free(X2);
    if (!rc) rc = lin_pen_rows_init(&S->B, opt, &S->PR, st);
    return rc;
}

void lin_pen_second_free(lin_pen_second *S)
{
    lin_blocks_free(&S->B);
    lin_pen_rows_free(&S->PR);
}
