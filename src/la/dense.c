/* Dense linear algebra: wrappers over LAPACKE (the *_work variants, so that every work array
 * is allocated here through mbl_malloc) and CBLAS (OpenBLAS): products, linear systems and
 * factorizations (LU, Cholesky, QR with column pivoting, SVD, least squares, complete-pivoting LU,
 * column selection). The eigenproblems are dense_eig.c's, the condition tests dense_rcond.c's. */
#include "la/la_internal.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's complete-pivoting LU has no LAPACKE wrapper: declare the Fortran symbol. */
extern void dgetc2_(const int *n, double *a, const int *lda, int *ipiv, int *jpiv, int *info);

int la_lapacke_error(mbl_status *st, const char *fn, int info)
{
    if (info == LA_LAPACKE_NOMEM_WORK || info == LA_LAPACKE_NOMEM_TRANSPOSE)
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory in LAPACKE", fn);
    return mbl_error(st, MBL_ELIB, "%s: LAPACK rejected argument %d (illegal value or NaN)", fn,
                     -info);
}

/* Common checks: size >= 0, array non-NULL when the matrix is nonempty, ld >= max(1, rows). */
int la_check_mat(mbl_status *st, const char *fn, const char *name, int m, int n, const void *A, int lda)
{
    if (m < 0 || n < 0)
        return mbl_error(st, MBL_EDIM, "%s: %s has negative size %d x %d", fn, name, m, n);
    if (!A) return mbl_error(st, MBL_EARG, "%s: %s is NULL", fn, name);
    if (lda < la_max1(m))
        return mbl_error(st, MBL_EDIM, "%s: leading dimension of %s is %d < max(1, %d)", fn,
                         name, lda, m);
    return 0;
}

/* Iterative LAPACK routines (QR algorithm, QZ, SVD) may loop or return garbage on NaN/Inf:
 * reject non-finite input up front (O(mn), negligible next to the O(n^3) work). */
int la_check_finite(mbl_status *st, const char *fn, const char *name, int m, int n, const double *A, int lda)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (!isfinite(A[i + (size_t)j * lda]))
                return mbl_error(st, MBL_EARG, "%s: %s(%d,%d) is not finite", fn, name, i, j);
    return 0;
}

/* Query the optimal lwork returned in a one-element work array; guard against garbage. */
int la_query_lwork(double w, int minimum)
{
    double v = w;
    if (!(v >= (double)minimum)) v = (double)minimum;
    if (v > (double)INT32_MAX) v = (double)INT32_MAX;
    return (int)v;
}

/* ---- small utilities ------------------------------------------------------------------- */

int mbla_gemm(char transa, char transb, int m, int n, int k, double alpha, const double *A,
              int lda, const double *B, int ldb, double beta, double *C, int ldc,
              mbl_status *st)
{
    const char *fn = "mbla_gemm";
    if ((transa != 'N' && transa != 'T') || (transb != 'N' && transb != 'T'))
        return mbl_error(st, MBL_EARG, "%s: trans flags must be 'N' or 'T'", fn);
    int ra = transa == 'N' ? m : k, ca = transa == 'N' ? k : m;
    int rb = transb == 'N' ? k : n, cb = transb == 'N' ? n : k;
    int r;
    if ((r = la_check_mat(st, fn, "A", ra, ca, A, lda)) || (r = la_check_mat(st, fn, "B", rb, cb, B, ldb)) ||
        (r = la_check_mat(st, fn, "C", m, n, C, ldc)))
        return r;
    if (m == 0 || n == 0) return 0;
    if (k == 0 || alpha == 0.0) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++)
                C[i + (size_t)j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + (size_t)j * ldc];
        return 0;
    }
    cblas_dgemm(CblasColMajor, transa == 'N' ? CblasNoTrans : CblasTrans,
                transb == 'N' ? CblasNoTrans : CblasTrans, m, n, k, alpha, A, lda, B, ldb, beta,
                C, ldc);
    return 0;
}

int mbla_gemv(char trans, int m, int n, double alpha, const double *A, int lda,
              const double *x, double beta, double *y, mbl_status *st)
{
    const char *fn = "mbla_gemv";
    if (trans != 'N' && trans != 'T')
        return mbl_error(st, MBL_EARG, "%s: trans must be 'N' or 'T'", fn);
    int r = la_check_mat(st, fn, "A", m, n, A, lda);
    if (r) return r;
    if (!x || !y) return mbl_error(st, MBL_EARG, "%s: x or y is NULL", fn);
    int ny = trans == 'N' ? m : n, nx = trans == 'N' ? n : m;
    if (ny == 0) return 0;
    if (nx == 0 || alpha == 0.0) {
        for (int i = 0; i < ny; i++) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
        return 0;
    }
    if (beta == 0.0)
        for (int i = 0; i < ny; i++) y[i] = 0.0; /* BLAS may read y; clear possible NaN */
    cblas_dgemv(CblasColMajor, trans == 'N' ? CblasNoTrans : CblasTrans, m, n, alpha, A, lda, x,
                1, beta, y, 1);
    return 0;
}

double mbla_norm1(int m, int n, const double *A, int lda)
{
    if (m < 0 || n < 0 || lda < la_max1(m)) return -1.0;
    if (m == 0 || n == 0) return 0.0;
    if (!A) return -1.0;
    double best = 0.0;
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < m; i++) s += fabs(A[i + (size_t)j * lda]);
        if (s > best || isnan(s)) best = s;
    }
    return best;
}

/* ---- LU with partial pivoting ------------------------------------------------------------ */

int mbla_tridiag_solve(int n, int nrhs, double *dl, double *d, double *du, double *B, int ldb, mbl_status *st)
{
    const char *fn = "mbla_tridiag_solve";
    if (n < 0 || nrhs < 0 || ldb < (n > 1 ? n : 1) || (n && (!d || !B)) || (n > 1 && (!dl || !du)))
        return mbl_error(st, MBL_EDIM, "%s: bad sizes or NULL arrays (n = %d, nrhs = %d, ldb = %d)", fn, n, nrhs, ldb);
    if (n == 0 || nrhs == 0) return 0;
    int info = LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, n, nrhs, dl, d, du, B, ldb);
    if (info < 0) return la_lapacke_error(st, "mbla_tridiag_solve (dgtsv)", info);
    if (info > 0)
        return mbl_error(st, MBL_ESINGULAR, "%s: matrix is singular: U(%d,%d) is exactly zero (pivot %d)", fn, info - 1,
                         info - 1, info - 1);
    return 0;
}

int mbla_lu_solve(int n, int nrhs, double *A, int lda, double *B, int ldb, mbl_status *st)
{
    const char *fn = "mbla_lu_solve";
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, nrhs, B, ldb)))
        return r;
    if (n == 0) return 0;
    int *ipiv = mbl_alloc_array((size_t)n, sizeof *ipiv);
    if (!ipiv) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    int info = LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n, nrhs, A, lda, ipiv, B, ldb);
    mbl_free(ipiv);
    if (info < 0) return la_lapacke_error(st, "mbla_lu_solve (dgesv)", info);
    if (info > 0)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: matrix is singular: U(%d,%d) is exactly zero (pivot %d)", fn,
                         info - 1, info - 1, info - 1);
    return 0;
}

int mbla_dchol(int n, double *A, int lda, mbl_status *st)
{
    int r = la_check_mat(st, "mbla_chol", "A", n, n, A, lda);
    if (r || n == 0) return r;
    int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, lda);
    if (info < 0) return la_lapacke_error(st, "mbla_dchol (dpotrf)", info);
    if (info > 0)
        return mbl_error(st, MBL_ESINGULAR,
                         "mbla_dchol: matrix is not positive definite: the leading minor of order %d is not positive", info);
    return 0;
}

int mbla_dchol_inverse(int n, double *L, int ldl, mbl_status *st)
{
    int r = la_check_mat(st, "mbla_dchol_inverse", "L", n, n, L, ldl);
    if (r || n == 0) return r;
    int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', n, L, ldl);
    if (info < 0) return la_lapacke_error(st, "mbla_dchol_inverse (dpotri)", info);
    if (info > 0) return mbl_error(st, MBL_ESINGULAR, "mbla_dchol_inverse: L(%d,%d) is exactly zero", info - 1, info - 1);
    for (int j = 1; j < n; j++)
        for (int i = 0; i < j; i++) L[i + (size_t)j * ldl] = L[j + (size_t)i * ldl];
    return 0;
}

struct mbla_dlu {
    int n;
    double *lu;  /* n x n, ld n */
    int *ipiv;
    double anorm; /* ||A||_1 */
};

int mbla_dlu_n(const mbla_dlu *lu) { return lu ? lu->n : 0; }

void mbla_dlu_free(mbla_dlu *lu)
{
    mbl_free(lu); /* the factors and pivots in the same block (mbla_dlu_new) */
}

int mbla_dlu_new(int n, const double *A, int lda, mbla_dlu **out, mbl_status *st)
{
    const char *fn = "mbla_dlu_new";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    /* one allocation: the struct, the factors (n x n, at least 1), the pivots (n, at least 1) */
    size_t nn = (size_t)la_max1(n) * (size_t)la_max1(n), hd = (sizeof(mbla_dlu) + 15) & ~(size_t)15;
    mbla_dlu *lu = nn > (SIZE_MAX - hd) / sizeof(double) - (size_t)la_max1(n)
                       ? NULL
                       : mbl_malloc(hd + nn * sizeof(double) + (size_t)la_max1(n) * sizeof(int));
    if (!lu) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    lu->n = n;
    lu->lu = (double *)((char *)lu + hd);
    lu->ipiv = (int *)(lu->lu + nn);
    lu->anorm = 0;
    la_copy_dmat(n, n, A, lda, lu->lu, la_max1(n));
    lu->anorm = mbla_norm1(n, n, lu->lu, la_max1(n));
    if (n > 0) {
        int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, lu->lu, n, lu->ipiv);
        if (info) {
            mbla_dlu_free(lu);
            if (info < 0) return la_lapacke_error(st, "mbla_dlu_new (dgetrf)", info);
            return mbl_error(st, MBL_ESINGULAR,
                             "%s: matrix is singular: U(%d,%d) is exactly zero (pivot %d)", fn,
                             info - 1, info - 1, info - 1);
        }
    }
    *out = lu;
    return 0;
}

int mbla_dlu_refactor(mbla_dlu *lu, const double *A, int lda, mbl_status *st)
{
    const char *fn = "mbla_dlu_refactor";
    if (!lu) return mbl_error(st, MBL_EARG, "%s: lu is NULL", fn);
    int n = lu->n, r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    la_copy_dmat(n, n, A, lda, lu->lu, la_max1(n));
    lu->anorm = mbla_norm1(n, n, lu->lu, la_max1(n));
    if (n == 0) return 0;
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, lu->lu, n, lu->ipiv);
    if (info < 0) return la_lapacke_error(st, "mbla_dlu_refactor (dgetrf)", info);
    if (info > 0)
        return mbl_error(st, MBL_ESINGULAR, "%s: matrix is singular: U(%d,%d) is exactly zero (pivot %d)", fn,
                         info - 1, info - 1, info - 1);
    return 0;
}

int mbla_dlu_solve(const mbla_dlu *lu, char trans, int nrhs, double *B, int ldb,
                   mbl_status *st)
{
    const char *fn = "mbla_dlu_solve";
    if (!lu) return mbl_error(st, MBL_EARG, "%s: lu is NULL", fn);
    if (trans != 'N' && trans != 'T')
        return mbl_error(st, MBL_EARG, "%s: trans must be 'N' or 'T'", fn);
    int r = la_check_mat(st, fn, "B", lu->n, nrhs, B, ldb);
    if (r) return r;
    if (lu->n == 0 || nrhs == 0) return 0;
    int info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, lu->n, nrhs, lu->lu, lu->n,
                                   lu->ipiv, B, ldb);
    if (info < 0) return la_lapacke_error(st, "mbla_dlu_solve (dgetrs)", info);
    return 0;
}

int mbla_dlu_rcond(const mbla_dlu *lu, double *rcond, mbl_status *st)
{
    const char *fn = "mbla_dlu_rcond";
    if (!lu || !rcond) return mbl_error(st, MBL_EARG, "%s: NULL argument", fn);
    if (lu->n == 0) {
        *rcond = 1.0;
        return 0;
    }
    int n = lu->n;
    double *work = mbl_alloc_array((size_t)4 * (size_t)n, sizeof *work);
    int *iwork = mbl_alloc_array((size_t)n, sizeof *iwork);
    if (!work || !iwork) {
        mbl_free(work);
        mbl_free(iwork);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    int info = LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', n, lu->lu, n, lu->anorm, rcond, work,
                                   iwork);
    mbl_free(work);
    mbl_free(iwork);
    if (info < 0) return la_lapacke_error(st, "mbla_dlu_rcond (dgecon)", info);
    return 0;
}

/* ---- rank-revealing factorizations --------------------------------------------------------- */

int mbla_rank_from_diag(int m, int n, int k, const double *d, int incd, double tol)
{
    if (k <= 0 || !d || incd < 1) return 0;
    if (tol < 0) tol = (double)(m > n ? m : n) * DBL_EPSILON;
    double d0 = fabs(d[0]);
    if (!(d0 > 0.0)) return 0;
    int r = 0;
    while (r < k && fabs(d[(size_t)r * incd]) > tol * d0) r++;
    return r;
}

int mbla_qrcp(int m, int n, double *A, int lda, double tol, int *jpvt, int *rank, double *Q,
              int ldq, int qcols, double *R, int ldr, mbl_status *st)
{
    const char *fn = "mbla_qrcp";
    int r = la_check_mat(st, fn, "A", m, n, A, lda);
    if (r) return r;
    if (!jpvt && n > 0) return mbl_error(st, MBL_EARG, "%s: jpvt is NULL", fn);
    if ((r = la_check_finite(st, fn, "A", m, n, A, lda))) return r;
    int k = m < n ? m : n;
    if (Q) {
        if (qcols < k || qcols > m)
            return mbl_error(st, MBL_EDIM, "%s: qcols = %d outside [min(m,n), m] = [%d, %d]", fn,
                             qcols, k, m);
        if ((r = la_check_mat(st, fn, "Q", m, qcols, Q, ldq))) return r;
    }
    if (R && (r = la_check_mat(st, fn, "R", k, n, R, ldr))) return r;
    if (m == 0 || n == 0) {
        for (int j = 0; j < n; j++) jpvt[j] = j;
        if (rank) *rank = 0;
        if (Q)
            for (int j = 0; j < qcols; j++)
                for (int i = 0; i < m; i++) Q[i + (size_t)j * ldq] = i == j ? 1.0 : 0.0;
        return 0;
    }
    double *tau = mbl_alloc_array((size_t)k, sizeof *tau);
    if (!tau) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    for (int j = 0; j < n; j++) jpvt[j] = 0; /* all columns free */
    double wq = 0.0;
    int info = LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, m, n, A, lda, jpvt, tau, &wq, -1);
    int lwork = la_query_lwork(wq, 3 * n + 1);
    if (Q && info == 0) {
        /* dorgqr's need (m x qcols) for the workspace shared with dgeqp3 */
        double wq2 = 0.0;
        int info2 = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, qcols, k, Q, ldq, tau, &wq2, -1);
        if (info2 == 0) {
            int l2 = la_query_lwork(wq2, qcols);
            if (l2 > lwork) lwork = l2;
        }
    }
    double *work = info == 0 ? mbl_alloc_array((size_t)lwork, sizeof *work) : NULL;
    if (info == 0 && !work) {
        mbl_free(tau);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
    }
    if (info == 0) info = LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, m, n, A, lda, jpvt, tau, work, lwork);
    if (info < 0) {
        mbl_free(tau);
        mbl_free(work);
        return la_lapacke_error(st, "mbla_qrcp (dgeqp3)", info);
    }
    for (int j = 0; j < n; j++) jpvt[j] -= 1; /* to 0-based */
    if (rank) *rank = mbla_rank_from_diag(m, n, k, A, lda + 1, tol);
    if (R) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < k; i++)
                R[i + (size_t)j * ldr] = i <= j ? A[i + (size_t)j * lda] : 0.0;
    }
    if (Q) {
        la_copy_dmat(m, k, A, lda, Q, ldq);
        for (int j = k; j < qcols; j++)
            for (int i = 0; i < m; i++) Q[i + (size_t)j * ldq] = 0.0;
        info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, qcols, k, Q, ldq, tau, work, lwork);
        if (info < 0) {
            mbl_free(tau);
            mbl_free(work);
            return la_lapacke_error(st, "mbla_qrcp (dorgqr)", info);
        }
    }
    mbl_free(tau);
    mbl_free(work);
    return 0;
}

int mbla_svd(int m, int n, double *A, int lda, char job, double *s, double *U, int ldu,
             double *VT, int ldvt, mbl_status *st)
{
    const char *fn = "mbla_svd";
    int r = la_check_mat(st, fn, "A", m, n, A, lda);
    if (r) return r;
    if (job != 'S' && job != 'A') return mbl_error(st, MBL_EARG, "%s: job must be 'S' or 'A'", fn);
    if ((r = la_check_finite(st, fn, "A", m, n, A, lda))) return r;
    int k = m < n ? m : n;
    if (!s && k > 0) return mbl_error(st, MBL_EARG, "%s: s is NULL", fn);
    int ucols = job == 'A' ? m : k, vrows = job == 'A' ? n : k;
    if (U && (r = la_check_mat(st, fn, "U", m, ucols, U, ldu))) return r;
    if (VT && (r = la_check_mat(st, fn, "VT", vrows, n, VT, ldvt))) return r;
    if (k == 0) {
        if (U)
            for (int j = 0; j < ucols; j++)
                for (int i = 0; i < m; i++) U[i + (size_t)j * ldu] = i == j;
        if (VT)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < vrows; i++) VT[i + (size_t)j * ldvt] = i == j;
        return 0;
    }
    char ju = U ? job : 'N', jv = VT ? job : 'N';
    double dummy = 0.0;
    double *u = U ? U : &dummy, *vt = VT ? VT : &dummy;
    int lu = U ? ldu : 1, lv = VT ? ldvt : 1;
    double wq = 0.0;
    int info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, s, u, lu, vt, lv, &wq, -1);
    if (info < 0) return la_lapacke_error(st, "mbla_svd (dgesvd)", info);
    int lwork = la_query_lwork(wq, 5 * k + (m > n ? m : n));
    double *work = mbl_alloc_array((size_t)lwork, sizeof *work);
    if (!work) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, s, u, lu, vt, lv, work, lwork);
    mbl_free(work);
    if (info < 0) return la_lapacke_error(st, "mbla_svd (dgesvd)", info);
    if (info > 0)
        return mbl_error(st, MBL_ENOCONV,
                         "%s: dgesvd did not converge (%d superdiagonals not converged)", fn, info);
    return 0;
}

/* mbla_lstsq's and mbla_lstsq_qr's arguments checked, and the cases without a factorization (no
 * right-hand side, an empty system: the solution 0) done: 1 when the call is complete (*r its
 * result), 0 when it should factor. */
static int lstsq_start(const char *fn, int m, int n, int nrhs, double *A, int lda, double *B, int ldb, int *rank,
                       mbl_status *st, int *r)
{
    int mx = m > n ? m : n, k = m < n ? m : n;
    if ((*r = la_check_mat(st, fn, "A", m, n, A, lda))) return 1;
    if (nrhs < 0) return *r = mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs), 1;
    if (ldb < la_max1(mx)) return *r = mbl_error(st, MBL_EDIM, "%s: ldb %d < max(1, %d, %d)", fn, ldb, m, n), 1;
    if (!B && nrhs && mx) return *r = mbl_error(st, MBL_EARG, "%s: B is NULL", fn), 1;
    if ((*r = la_check_finite(st, fn, "A", m, n, A, lda))) return 1;
    if (rank) *rank = 0;
    if (nrhs == 0) return 1;
    if (k == 0) { /* the minimum-norm solution of an empty system is 0 */
        for (int c = 0; c < nrhs; c++)
            for (int i = 0; i < n; i++) B[i + (size_t)c * ldb] = 0.0;
        return 1;
    }
    return 0;
}

int mbla_lstsq(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
               mbl_status *st)
{
    const char *fn = "mbla_lstsq";
    int r = 0, k = m < n ? m : n;
    if (lstsq_start(fn, m, n, nrhs, A, lda, B, ldb, rank, st, &r)) return r;
    double *s = mbl_alloc_array((size_t)k, sizeof *s);
    if (!s) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    double wq = 0.0;
    int iwq = 0, rk = 0;
    int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, A, lda, B, ldb, s, rcond, &rk, &wq, -1, &iwq);
    if (info < 0) {
        mbl_free(s);
        return la_lapacke_error(st, "mbla_lstsq (dgelsd)", info);
    }
    int lwork = la_query_lwork(wq, 1), liwork = iwq > 1 ? iwq : 1;
    double *work = mbl_alloc_array((size_t)lwork, sizeof *work);
    lapack_int *iwork = mbl_alloc_array((size_t)liwork, sizeof *iwork);
    if (!work || !iwork) {
        mbl_free(s), mbl_free(work), mbl_free(iwork);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
    }
    info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, A, lda, B, ldb, s, rcond, &rk, work, lwork, iwork);
    mbl_free(s), mbl_free(work), mbl_free(iwork);
    if (info < 0) return la_lapacke_error(st, "mbla_lstsq (dgelsd)", info);
    if (info > 0) return mbl_error(st, MBL_ENOCONV, "%s: dgelsd did not converge (%d off-diagonals)", fn, info);
    if (rank) *rank = rk;
    return 0;
}

int mbla_lstsq_qr(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
                  mbl_status *st)
{
    int r = 0;
    if (lstsq_start("mbla_lstsq_qr", m, n, nrhs, A, lda, B, ldb, rank, st, &r)) return r;
    /* dgelsy's steps, its factorization made and used once (src/la/dense_cod.c) */
    mbla_cod *f = NULL;
    r = mbla_cod_new(m, n, A, lda, rcond, &f, st);
    if (!r) r = mbla_cod_solve(f, nrhs, B, ldb, st);
    if (!r && rank) *rank = mbla_cod_rank(f);
    mbla_cod_free(f);
    return r;
}

int mbla_lu_complete(int n, double *A, int lda, int *ipiv, int *jpiv, int *nsmall,
                     mbl_status *st)
{
    const char *fn = "mbla_lu_complete";
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    if (n > 0 && (!ipiv || !jpiv)) return mbl_error(st, MBL_EARG, "%s: ipiv or jpiv is NULL", fn);
    if (nsmall) *nsmall = -1;
    if (n == 0) return 0;
    int info = 0;
    dgetc2_(&n, A, &lda, ipiv, jpiv, &info);
    if (info < 0) return mbl_error(st, MBL_ELIB, "%s: dgetc2 rejected argument %d", fn, -info);
    for (int k = 0; k < n; k++) {
        ipiv[k] -= 1;
        jpiv[k] -= 1;
    }
    if (nsmall) *nsmall = info > 0 ? info - 1 : -1;
    return 0;
}

static void sort_ints(int *a, int n)
{
    for (int i = 1; i < n; i++) { /* insertion sort on the (short) tail of a permutation */
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

int mbla_select_columns(int m, int n, const double *A, int lda, const double *weights,
                        double tol, int *perm, int *rank, mbl_status *st)
{
    const char *fn = "mbla_select_columns";
    int r = la_check_mat(st, fn, "A", m, n, A, lda);
    if (r) return r;
    if (m > n) return mbl_error(st, MBL_EDIM, "%s: needs m <= n, got %d x %d", fn, m, n);
    if (!rank || (n > 0 && !perm)) return mbl_error(st, MBL_EARG, "%s: perm or rank is NULL", fn);
    if (weights)
        for (int j = 0; j < n; j++)
            if (!(weights[j] >= 0.0) || isinf(weights[j]))
                return mbl_error(st, MBL_EDIM, "%s: weight %d is %g (must be finite, >= 0)", fn, j,
                                 weights[j]);
    if (tol < 0) tol = (double)n * DBL_EPSILON; /* n = max(m, n) here */
    *rank = 0;
    if (n == 0) return 0;
    double *W = la_alloc_dmat(n, n);
    int *ipiv = mbl_alloc_array((size_t)n, sizeof *ipiv);
    int *jpiv = mbl_alloc_array((size_t)n, sizeof *jpiv);
    if (!W || !ipiv || !jpiv) {
        mbl_free(W);
        mbl_free(ipiv);
        mbl_free(jpiv);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    double amax = 0.0;
    for (int j = 0; j < n; j++) {
        double w = weights ? weights[j] : 1.0;
        for (int i = 0; i < n; i++) {
            double v = i < m ? w * A[i + (size_t)j * lda] : 0.0;
            W[i + (size_t)j * n] = v;
            if (fabs(v) > amax) amax = fabs(v);
        }
    }
    r = mbla_lu_complete(n, W, n, ipiv, jpiv, NULL, st);
    if (r) goto done;
    /* column order: apply the interchange sequence to the identity permutation */
    for (int j = 0; j < n; j++) perm[j] = j;
    for (int k = 0; k < n; k++) {
        int t = perm[k];
        perm[k] = perm[jpiv[k]];
        perm[jpiv[k]] = t;
    }
    int rk = 0;
    if (amax > 0.0) {
        double u0 = fabs(W[0]);
        while (rk < m && fabs(W[rk + (size_t)rk * n]) > tol * u0) rk++;
    }
    sort_ints(perm + rk, n - rk);
    *rank = rk;
done:
    mbl_free(W);
    mbl_free(ipiv);
    mbl_free(jpiv);
    return r;
}
