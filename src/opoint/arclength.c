/* The Newton homotopy followed in arc length (homotopy.c says why the Newton homotopy): the path
 * {(x, t): H(x, t) = F(x) - (1 - t) F(xs) = 0} from (xs, 0), through its turning points, to t = 1.
 *
 * Following t alone (opoint_homotopy's natural parameter) stops where the path turns back in t, a
 * point where the Jacobian J is singular; for a double pendulum on a stiffening spring (the guess
 * in a region where the potential is not convex) the path turns twice before it reaches t = 1.
 * In arc length it goes on: Smale's global Newton method, in the form of Allgower and Georg's
 * Moore-Penrose continuation. With z = x / d (d_c = max(1, |xs_c|), unit-free unknowns), y = (z,
 * t) and A = [J diag(d), F(xs)] (nrow x (ncol + 1)):
 *   - the tangent is the null vector of A oriented along the previous one (at the start: t
 *     increasing): the minimum-norm solution of [A; prev^T] tau = [0; 1], which is the previous
 *     tangent projected onto the null space also where A loses rank (redundant constraints:
 *     minimum-norm multipliers);
 *   - the predictor is y + h tangent, the corrector Newton's minimum-norm steps y -= A^+ H(y)
 *     (orthogonal to the path's tangent in the limit), to a scaled residual of 1e-8;
 *   - h (arc length in the scaled unknowns) is halved when the corrector fails, its first step is
 *     longer than h / 2, or it does not contract, and grows by 1.5 after an easy step (up to 1);
 *   - where a predictor would cross t = 1 the point at t = 1 on the line is corrected with t
 *     fixed (Newton on F), which ends the path.
 * The solution reached is the first one on the path from the guess: the branch connected to it.
 * Past a turning point t may fall below 0 (the residual grows along F(xs) before it turns again):
 * the path goes on. It fails when it closes on the guess, leaves every bound (|z| > 1e4), cannot be followed
 * (h below 1e-9: a bifurcation, or F not smooth there), or takes more than 500 steps; the reason
 * names where. Dense (LAPACK's minimum-norm least squares), for subproblems of at most
 * OPOINT_DENSE_MAX unknowns. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opoint_solve.h"

#define ARC_H_FIRST 0.1
#define ARC_H_MAX 1.0
#define ARC_H_MIN 1e-9
#define ARC_MAX_STEPS 500
#define ARC_CORR_ITER 8
#define ARC_CORR_TOL 1e-8
#define ARC_FAR 1e4
/* the spring to the start relative to the equations' scale (arc_springs) */
#define ARC_SPRING 2.0

typedef struct arc {
    opoint_subproblem *sp;
    int m, n;         /* rows; unknowns (the path has n + 1) */
    const double *d;  /* scales of the unknowns */
    const double *F0; /* F(xs) on the subproblem's rows */
    double *C;        /* per row: the spring to the start on its coordinate (hom_C), or 0 */
    int *pc;          /* per row: that coordinate's column, or -1 (hom_pc) */
    double *A, *VT, *b, *y, *rowscale, *colscale, *xs; /* VT: (m + 1) x (n + 1) scratch */
} arc;

static void arc_set(arc *a, const double *y)
{
    for (int c = 0; c < a->n; c++) *opoint_unknown_ptr(a->sp->md, a->sp->pt, a->sp->cols[c]) = a->d[c] * y[c];
    a->sp->hom_t = y[a->n];
}

/* H and J at y (point set), A assembled (column-major, m x (n + 1)); *rs the scaled residual of H */
static int arc_eval(arc *a, const double *y, double *rs, mbl_status *st)
{
    opoint_subproblem *sp = a->sp;
    int m = a->m, n = a->n;
    double f2, finf;
    arc_set(a, y);
    int rc = opoint_eval_F(sp, &f2, &finf, st);
    if (!rc) rc = opoint_eval_jac(sp, st);
    if (rc) return rc;
    if (!isfinite(f2)) return mbl_error(st, MBL_ENOCONV, "the residual is not finite");
    for (int c = 0; c < a->n; c++) a->xs[c] = a->d[c]; /* scaled residual: scales of the start */
    *rs = opoint_scaled_residual(sp, a->xs, a->rowscale, a->colscale);
    memset(a->A, 0, (size_t)m * (size_t)(n + 1) * sizeof *a->A);
    const model_view *mv = &sp->mv;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) a->A[r + (size_t)c * m] += sp->jac[p] * a->d[c];
    }
    for (int r = 0; r < m; r++) a->A[r + (size_t)n * m] = a->F0[r];
    double w = 1.0 - y[n];
    for (int r = 0; r < m; r++) {
        int c = a->pc[r];
        if (c < 0) continue;
        a->A[r + (size_t)c * m] += w * a->C[r] * a->d[c];
        a->A[r + (size_t)n * m] -= a->C[r] * a->d[c] * (y[c] - sp->hom_x0[c] / a->d[c]);
    }
    return 0;
}

/* the tangent at the last arc_eval's point (A consumed), oriented along prev: the minimum-norm
 * solution of [A; prev^T] tau = [0; 1] (prev projected onto the null space of A, where A loses
 * rank too), normalized */
static int arc_tangent(arc *a, const double *prev, double *tau, mbl_status *st)
{
    int m = a->m, N = a->n + 1, M = m + 1, mx = M > N ? M : N;
    double *B = a->VT; /* (m + 1) x N scratch */
    for (int j = 0; j < N; j++) {
        memcpy(B + (size_t)j * M, a->A + (size_t)j * m, (size_t)m * sizeof *B);
        B[m + (size_t)j * M] = prev[j];
    }
    memset(a->b, 0, (size_t)mx * sizeof *a->b);
    a->b[m] = 1;
    int rc = mbla_lstsq(M, N, 1, B, M, a->b, mx, a->sp->opt->rank_tol, NULL, st);
    if (rc) return rc;
    double nt = 0;
    for (int j = 0; j < N; j++) nt += a->b[j] * a->b[j];
    nt = sqrt(nt);
    if (!(nt > 0) || !isfinite(nt)) return mbl_error(st, MBL_ENOCONV, "no tangent");
    for (int j = 0; j < N; j++) tau[j] = a->b[j] / nt;
    return 0;
}

/* Moore-Penrose corrector from y (in place); t_fixed: keep t (the landing at t = 1). *ok on
 * convergence; h bounds the first correction (h <= 0: no bound). */
static int arc_correct(arc *a, double *y, int t_fixed, double h, int *ok, mbl_status *st)
{
    int m = a->m, n = a->n, N = t_fixed ? n : n + 1, mx = m > N ? m : N;
    double prev = INFINITY, rs;
    *ok = 0;
    for (int it = 0; it <= ARC_CORR_ITER; it++) {
        mbl_status st2;
        int rc = arc_eval(a, y, &rs, &st2);
        if (rc == MBL_ENOMEM) return mbl_error(st, MBL_ENOMEM, "out of memory");
        if (rc) return 0;
        a->sp->pt->iterations += it > 0;
        if (rs <= ARC_CORR_TOL) {
            *ok = 1;
            return 0;
        }
        if (it == ARC_CORR_ITER) return 0;
        for (int r = 0; r < m; r++) a->b[r] = -a->sp->F[a->sp->rows[r]];
        rc = mbla_lstsq(m, N, 1, a->A, m, a->b, mx, a->sp->opt->rank_tol, NULL, &st2);
        if (rc == MBL_ENOMEM) return mbl_error(st, MBL_ENOMEM, "out of memory");
        if (rc) return 0;
        double nd = 0;
        for (int j = 0; j < N; j++) nd += a->b[j] * a->b[j];
        nd = sqrt(nd);
        if (!isfinite(nd) || (it == 0 && h > 0 && nd > 0.5 * h) || (it > 0 && nd > 0.5 * prev)) return 0;
        prev = nd;
        for (int j = 0; j < N; j++) y[j] += a->b[j];
    }
    return 0;
}

/* the name of unknown column c (a coordinate's name, or its block's) */
static void arc_name(const opoint_subproblem *sp, int c, char *buf, size_t size)
{
    int jq = model_blk0(sp->md, MBL_BLK_Q), jl = model_blk0(sp->md, MBL_BLK_LAMBDA);
    int col = sp->cols[c];
    if (col >= jq && col < jq + sp->mv.n) snprintf(buf, size, "%.60s", sp->mv.qname[col - jq]);
    else if (col >= jl && col < jl + sp->mv.m) snprintf(buf, size, "lambda[%d]", col - jl + 1);
    else snprintf(buf, size, "unknown %d", col);
}

/* the coordinate that moves most along tau, for the messages */
static void arc_where(const arc *a, const double *y, const double *tau, char *buf, size_t size)
{
    int big = 0, jq = model_blk0(a->sp->md, MBL_BLK_Q);
    double best = -1;
    for (int c = 0; c < a->n; c++) {
        int isq = a->sp->cols[c] >= jq && a->sp->cols[c] < jq + a->sp->mv.n;
        double w = fabs(tau[c]) + (isq ? 1e3 : 0); /* a coordinate rather than a multiplier */
        if (w > best) best = w, big = c;
    }
    char name[80];
    arc_name(a->sp, big, name, sizeof name);
    snprintf(buf, size, "%s = %.4g", name, a->d[big] * y[big]);
}

/* The spring to the start: equation of motion row i (of coordinate q_i, when q_i is an unknown of
 * the subproblem) gets + (1 - t) C_i (q_i - q_i(xs)), C_i the row's scale (the 1-norm of its
 * Jacobian row at the start, the unknowns weighted by d) times ARC_SPRING = 2 over d of q_i: at
 * t = 0 those rows of the Jacobian are diagonally dominant with a positive diagonal (the start a
 * regular point even where the model's stiffness is negative there: a guess on a potential's
 * hump), and near the start the path is that of a proximal point, x minimizing the potential
 * plus the spring, which keeps it on the guess's branch. */
static void arc_springs(arc *a, const double *xs)
{
    opoint_subproblem *sp = a->sp;
    const model_view *mv = &sp->mv;
    int e0 = mv->row0[MBL_ROW_EOM], e1 = mv->row0[MBL_ROW_EOM + 1], jq = model_blk0(sp->md, MBL_BLK_Q);
    for (int r = 0; r < a->m; r++) a->pc[r] = -1, a->C[r] = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) a->C[r] += fabs(sp->jac[p]) * a->d[c];
    }
    for (int r = 0; r < a->m; r++) {
        int row = sp->rows[r], c = row >= e0 && row < e1 ? sp->col_pos[jq + row - e0] : -1;
        if (c >= 0 && isfinite(a->C[r]) && a->C[r] > 0) a->pc[r] = c, a->C[r] *= ARC_SPRING / a->d[c];
        else a->C[r] = 0;
    }
    sp->hom_C = a->C;
    sp->hom_pc = a->pc;
    sp->hom_x0 = xs;
}

static int arc_follow(arc *a, double *y, char *reason, size_t rsize, mbl_status *st)
{
    int n = a->n, N = n + 1, rc = 0, folds = 0;
    double *tau = mbl_calloc((size_t)N + 1, sizeof *tau), *prev = mbl_calloc((size_t)N + 1, sizeof *prev);
    double *yp = mbl_alloc_array((size_t)N + 1, sizeof *yp), *y0 = mbl_alloc_array((size_t)N + 1, sizeof *y0);
    if (y0) memcpy(y0, y, (size_t)N * sizeof *y0);
    if (!tau || !prev || !yp || !y0) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double h = ARC_H_FIRST, rs, arcl = 0;
    char where[160];
    if (!rc) prev[n] = 1; /* t increasing */
    for (int step = 0; !rc; step++) {
        if (step >= ARC_MAX_STEPS) {
            arc_where(a, y, prev, where, sizeof where);
            snprintf(reason, rsize, "the continuation from the guess took %d steps and reached only t = %.3g, near %s",
                     step, y[n], where);
            rc = MBL_ENOCONV;
            break;
        }
        rc = arc_eval(a, y, &rs, st);
        if (!rc) rc = arc_tangent(a, prev, tau, st);
        if (rc == MBL_ENOCONV) {
            snprintf(reason, rsize, "the continuation F(x) = (1 - t) F(guess) has no tangent at t = %.3g", y[n]);
            break;
        }
        if (rc) break;
        if (step > 0 && (tau[n] > 0) != (prev[n] > 0)) folds++;
        int ok = 0;
        while (!rc && !ok) {
            if (h < ARC_H_MIN) {
                arc_where(a, y, tau, where, sizeof where);
                snprintf(reason, rsize,
                         "the continuation F(x) = (1 - t) F(guess) cannot be followed beyond t = %.3g (a bifurcation "
                         "or a point where F is not smooth), near %s",
                         y[n], where);
                rc = MBL_ENOCONV;
                break;
            }
            /* landing: the predictor would cross t = 1 */
            if (tau[n] > 0 && y[n] + h * tau[n] >= 1.0) {
                double hl = (1.0 - y[n]) / tau[n];
                for (int j = 0; j < N; j++) yp[j] = y[j] + hl * tau[j];
                yp[n] = 1.0;
                rc = arc_correct(a, yp, 1, -1, &ok, st);
                if (!rc && ok) {
                    memcpy(y, yp, (size_t)N * sizeof *y);
                    break;
                }
                ok = 0;
                h = 0.5 * hl;
                continue;
            }
            for (int j = 0; j < N; j++) yp[j] = y[j] + h * tau[j];
            rc = arc_correct(a, yp, 0, h, &ok, st);
            if (!rc && !ok) h *= 0.5;
        }
        if (rc) break;
        int landed = yp[n] == 1.0;
        memcpy(y, yp, (size_t)N * sizeof *y);
        memcpy(prev, tau, (size_t)N * sizeof *prev);
        if (landed) break;
        double h_used = h;
        h = fmin(1.5 * h, ARC_H_MAX);
        double nz = 0, back = fabs(y[n]);
        for (int c = 0; c < n; c++) nz = fmax(nz, fabs(y[c])), back = fmax(back, fabs(y[c] - y0[c]));
        arcl += h_used;
        int closed = folds > 0 && arcl > 4 * h && back < 0.5 * h;
        if (closed || !(nz < ARC_FAR)) {
            arc_where(a, y, tau, where, sizeof where);
            snprintf(reason, rsize,
                     closed ? "the continuation F(x) = (1 - t) F(guess) is a closed loop through the guess (%d turning "
                              "points, no solution on it), near %s"
                            : "the continuation F(x) = (1 - t) F(guess) goes to infinity after %d turning points, "
                              "near %s",
                     folds, where);
            rc = MBL_ENOCONV;
        }
    }
    mbl_free(tau), mbl_free(prev), mbl_free(yp), mbl_free(y0);
    return rc;
}

int opoint_arclength(opoint_subproblem *sp, const double *xs, char *reason, size_t reason_size, mbl_status *st)
{
    arc a;
    memset(&a, 0, sizeof a);
    a.sp = sp;
    a.m = sp->nrow;
    a.n = sp->ncol;
    int m = a.m, N = a.n + 1, mx = (m + 1 > N ? m + 1 : N), rc = 0;
    double *d = mbl_alloc_array((size_t)N + 1, sizeof *d), *F0 = mbl_alloc_array((size_t)m + 1, sizeof *F0);
    a.A = mbl_alloc_array((size_t)m * (size_t)N + 1, sizeof *a.A);
    a.VT = mbl_alloc_array((size_t)(m + 1) * (size_t)N + 1, sizeof *a.VT);
    a.b = mbl_alloc_array((size_t)mx + 1, sizeof *a.b);
    a.y = mbl_alloc_array((size_t)N + 1, sizeof *a.y);
    a.rowscale = mbl_alloc_array((size_t)m + 1, sizeof *a.rowscale);
    a.colscale = mbl_alloc_array((size_t)N + 1, sizeof *a.colscale);
    a.xs = mbl_alloc_array((size_t)N + 1, sizeof *a.xs);
    a.C = mbl_calloc((size_t)m + 1, sizeof *a.C);
    a.pc = mbl_alloc_array((size_t)m + 1, sizeof *a.pc);
    if (!a.C || !a.pc || !d || !F0 || !a.A || !a.VT || !a.b || !a.y || !a.rowscale || !a.colscale || !a.xs)
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    reason[0] = '\0';
    if (!rc) {
        for (int c = 0; c < a.n; c++) d[c] = fmax(1.0, fabs(xs[c])), a.y[c] = xs[c] / d[c];
        a.y[a.n] = 0;
        a.d = d;
        sp->hom_F0 = NULL;
        for (int c = 0; c < a.n; c++) *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]) = xs[c];
        double f2, finf;
        rc = opoint_eval_F(sp, &f2, &finf, st);
    }
    if (!rc) rc = opoint_eval_jac(sp, st);
    if (!rc) {
        for (int r = 0; r < m; r++) F0[r] = sp->F[sp->rows[r]];
        a.F0 = F0;
        sp->hom_F0 = F0;
        arc_springs(&a, xs);
        rc = arc_follow(&a, a.y, reason, reason_size, st);
    }
    sp->hom_F0 = NULL;
    sp->hom_C = NULL;
    sp->hom_pc = NULL;
    sp->hom_x0 = NULL;
    sp->hom_t = 0;
    if (rc == MBL_ENOCONV) rc = mbl_error(st, MBL_ENOCONV, "%s", reason);
    mbl_free(a.C), mbl_free(a.pc);
    mbl_free(d), mbl_free(F0), mbl_free(a.A), mbl_free(a.VT), mbl_free(a.b), mbl_free(a.y);
    mbl_free(a.rowscale), mbl_free(a.colscale), mbl_free(a.xs);
    return rc;
}
