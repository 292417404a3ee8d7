/* The dense Newton step of the operating point's solves (opoint_dense_step, opoint_solve.h):
 * minimum-norm least squares by a rank-revealing SVD (LAPACK's dgelsd, mbla_lstsq: singular values
 * below rank_tol times the largest count as zero; it forms neither singular-vector set: the first
 * step of a 96-link chain's equilibrium, the least-squares multipliers, spent half the run in
 * dgesvd's vectors), with a rank-deficient raw matrix of more rows than unknowns taken again
 * equilibrated. */
#include "la/la_equilibrate.h"
#include "mblin/la.h"
#include "opoint_solve.h"

/* The subproblem's Jacobian dense (m x n, column-major, zeroed on entry) and -F in b (m). */
static void dense_fill(const opoint_subproblem *sp, double *J, double *b)
{
    const model_view *mv = &sp->mv;
    int m = sp->nrow;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) J[r + (size_t)c * m] = sp->jac[p];
    }
    for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]];
}

/* The least-squares step of a rank-deficient raw matrix again, equilibrated (power-of-2 row and
 * column factors, mbla_csc_equilibrate: dx = diag(c) y, diag(r) J diag(c) y = -diag(r) F), its rank
 * decided at the same rank_tol on the scaled matrix. Taken only when that has full column rank (a
 * unique least-squares solution, which the raw one would be at full rank): the rank test of the
 * raw matrix is not unit-free, and a stiff blade's EA / h beside its frame's multipliers puts
 * regular directions below rank_tol times its largest singular value (steel, 20 elements on a hub
 * at 38 and 50 rad/s: 5.7e-4 and 9.9e-4 beside 5e9, Newton stalled at a scaled residual of 1.8e-6).
 * 1 when taken (dx set), 0 when not, negative on an error. */
static int dense_step_equilibrated(opoint_subproblem *sp, double *dx, mbl_status *st)
{
    int m = sp->nrow, n = sp->ncol, mx = m > n ? m : n, rank = 0;
    double *J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J), *b = mbl_alloc_array((size_t)mx + 1, sizeof *b);
    double *f = mbl_alloc_array((size_t)m + (size_t)n + LA_EQUILIBRATE_WS(m, n) + 1, sizeof *f);
    mbla_csc *A = NULL;
    int rc = !J || !b || !f ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) dense_fill(sp, J, b), rc = mbla_csc_from_dense(m, n, J, m, 0.0, &A, st);
    double *r = f, *c = f + m;
    if (!rc) la_csc_equilibrate_ws(A, MBLA_EQUILIBRATE_MAXITER_DEFAULT, 0, r, c, f + m + n);
    if (!rc) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) J[i + (size_t)j * m] *= r[i] * c[j];
        for (int i = 0; i < m; i++) b[i] *= r[i];
        rc = mbla_lstsq(m, n, 1, J, m, b, mx, sp->opt->rank_tol, &rank, st);
    }
    int taken = !rc && rank == n;
    if (taken) {
        sp->rank_last = rank;
        for (int j = 0; j < n; j++) dx[j] = c[j] * b[j];
    }
    mbla_csc_free(A), mbl_free(J), mbl_free(b), mbl_free(f);
    return rc ? rc : taken;
}

int opoint_dense_step(opoint_subproblem *sp, double *dx, mbl_status *st)
{
    int m = sp->nrow, n = sp->ncol, mx = m > n ? m : n, rank = 0;
    double *J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J);
    double *b = mbl_alloc_array((size_t)mx + 1, sizeof *b);
    if (!J || !b) {
        mbl_free(J), mbl_free(b);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    dense_fill(sp, J, b);
    int rc = mbla_lstsq(m, n, 1, J, m > 0 ? m : 1, b, mx > 0 ? mx : 1, sp->opt->rank_tol, &rank, st);
    if (!rc) {
        sp->rank_last = rank;
        for (int c = 0; c < n; c++) dx[c] = b[c];
    }
    mbl_free(J), mbl_free(b);
    /* rank deficient with more rows than unknowns: the equilibrated matrix decides (a matrix of
     * full rank raw is solved raw: the iterates of the models that converged before are the same) */
    if (!rc && rank < n && m >= n && n > 0) {
        int e = dense_step_equilibrated(sp, dx, st);
        if (e < 0) rc = e;
    }
    return rc;
}
