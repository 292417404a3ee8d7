/* Condition tests by LAPACK: mbla_lu_rcond (dgetrf + dgecon's estimate, and a solve) and
 * mbla_inv_rcond (dgetrf + dgetrs on the identity: the inverse and the exact reciprocal 1-norm
 * condition). Tests, not solves that must succeed: an exactly zero pivot gives rcond 0. */
#include "la/la_internal.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

int mbla_lu_rcond(int n, double *A, int lda, int nrhs, double *B, int ldb, double *rcond, mbl_status *st)
{
    const char *fn = "mbla_lu_rcond";
    if (!rcond) return mbl_error(st, MBL_EARG, "%s: rcond is NULL", fn);
    *rcond = 0.0;
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    if (nrhs < 0) return mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs);
    if (nrhs > 0 && (r = la_check_mat(st, fn, "B", n, nrhs, B, ldb))) return r;
    if (n == 0) {
        *rcond = 1.0;
        return 0;
    }
    double anorm = mbla_norm1(n, n, A, lda);
    if (!(anorm > 0.0) || !isfinite(anorm)) return 0;
    /* dgecon's work (4n); its iwork (n) and the pivots (n) in one block */
    double *work = mbl_alloc_array((size_t)4 * (size_t)n, sizeof *work);
    int *iwork = mbl_alloc_array((size_t)2 * (size_t)n, sizeof *iwork);
    if (!work || !iwork) {
        mbl_free(work);
        mbl_free(iwork);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    int *ipiv = iwork + n;
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A, lda, ipiv);
    if (info == 0)
        info = LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', n, A, lda, anorm, rcond, work, iwork);
    if (info == 0 && nrhs > 0 && *rcond > 0.0)
        info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, nrhs, A, lda, ipiv, B, ldb);
    else if (info > 0)
        info = 0; /* an exactly zero pivot: rcond stays 0 */
    mbl_free(work);
    mbl_free(iwork);
    if (info < 0) return la_lapacke_error(st, "mbla_lu_rcond (dgetrf, dgecon, dgetrs)", info);
    return 0;
}

int mbla_inv_rcond(int n, double *A, int lda, double *X, int ldx, double *rcond, mbl_status *st)
{
    const char *fn = "mbla_inv_rcond";
    if (!rcond) return mbl_error(st, MBL_EARG, "%s: rcond is NULL", fn);
    *rcond = 0.0;
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (!r) r = la_check_mat(st, fn, "X", n, n, X, ldx);
    if (r) return r;
    if (n == 0) {
        *rcond = 1.0;
        return 0;
    }
    double anorm = mbla_norm1(n, n, A, lda);
    if (!(anorm > 0.0) || !isfinite(anorm)) return 0;
    int *ipiv = mbl_alloc_array((size_t)n, sizeof *ipiv);
    if (!ipiv) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A, lda, ipiv);
    if (info == 0) {
        for (int j = 0; j < n; j++) {
            memset(X + (size_t)j * ldx, 0, (size_t)n * sizeof *X);
            X[j + (size_t)j * ldx] = 1.0;
        }
        info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, n, A, lda, ipiv, X, ldx);
        double xnorm = mbla_norm1(n, n, X, ldx);
        if (info == 0 && xnorm > 0.0 && isfinite(xnorm)) *rcond = 1.0 / (anorm * xnorm);
    } else if (info > 0) {
        info = 0; /* an exactly zero pivot: rcond stays 0 */
    }
    mbl_free(ipiv);
    if (info < 0) return la_lapacke_error(st, "mbla_inv_rcond (dgetrf, dgetrs)", info);
    return 0;
}
