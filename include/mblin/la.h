/* mblin linear algebra (prefix mbla_): thin, tested wrappers over LAPACK(E)/OpenBLAS,
 * SuiteSparse (KLU, AMD, COLAMD, BTF; CHOLMOD and SPQR behind MBLIN_WITH_GPL) and ARPACK-ng.
 * Nothing here hand-writes a factorization or an eigensolver.
 *
 * Conventions (all functions)
 * - Status: every fallible function returns 0 (MBL_OK) or a negative MBL_E* code and fills
 *   `st` (may be NULL) with a one-line message. Codes used here:
 *     MBL_EDIM      bad dimension / leading dimension / index out of range / pattern mismatch
 *     MBL_EARG      NULL where an array is required, invalid option or flag, NaN/Inf in
 *                   the input of an iterative dense routine (eig, ggev, sygvd, svd, qrcp)
 *     MBL_ENOMEM    an allocation failed (or size arithmetic overflowed)
 *     MBL_ESINGULAR a matrix that must be regular (or positive definite) is not
 *     MBL_ENOCONV   an iteration (QR algorithm, QZ, SVD, ARPACK) did not converge
 *     MBL_ELIB      the underlying library reported an unexpected error, or the function needs
 *                   a GPL component and the library was built with MBLIN_WITH_GPL=OFF
 *   On failure, output arguments are unspecified unless documented, nothing is leaked and no
 *   object is returned (`*out` is set to NULL).
 * - Dense matrices are column-major with an explicit leading dimension (ld >= max(1, rows)).
 *   Entry (i, j) of A is A[i + j*lda]. Sizes are `int` (>= 0).
 * - Sparse matrices are CSC (mbla_csc): 0-based, row indices sorted within each column, no
 *   duplicates, p[0] = 0, p[n] = nnz.
 * - Tolerances: every tolerance is an argument; passing MBLA_DEFAULT (any negative value)
 *   selects the documented default.
 * - Memory: wrapper allocations go through mbl_malloc & co. (so mbl_alloc_fail_after works);
 *   the libraries' own internal allocations (LAPACKE work arrays, SuiteSparse, ARPACK) do not.
 *   Destructors accept NULL.
 * - Thread safety: functions are reentrant on distinct objects, except the ARPACK-based
 *   mbla_eigs_sinv (ARPACK keeps SAVEd state: do not call it from two threads at once).
 */
#ifndef MBLIN_LA_H
#define MBLIN_LA_H

#include "mblin/export.h"

#include "mblin/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pass as a tolerance (or any negative value) to select the documented default. */
#define MBLA_DEFAULT (-1.0)

/* The BLAS this process runs, in one line: OpenBLAS's version, the kernels it chose for this CPU
 * (or the ones the environment variable OPENBLAS_CORETYPE names) and its build options, e.g.
 * "OpenBLAS 0.3.21, Haswell kernels (NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64)".
 * Writes at most len bytes, NUL-terminated (buf may be NULL when len is 0), and returns the length
 * of the whole text, as snprintf does. */
MBL_API int mbla_blas_describe(char *buf, size_t len);

/* ============================================================================================
 * Dense: small utilities
 * ========================================================================================== */

/* C = alpha*op(A)*op(B) + beta*C (cblas_dgemm). transa/transb: 'N' or 'T'. op(A) is m x k,
 * op(B) is k x n, C is m x n. beta == 0 means C is not read (may hold NaN).
 * Errors: MBL_EARG (bad trans flag, NULL array), MBL_EDIM (negative size, ld too small). */
MBL_API int mbla_gemm(char transa, char transb, int m, int n, int k, double alpha, const double *A,
              int lda, const double *B, int ldb, double beta, double *C, int ldc,
              mbl_status *st);

/* y = alpha*op(A)*x + beta*y (cblas_dgemv), A is m x n, trans 'N' (x has n, y has m entries)
 * or 'T' (x has m, y has n). Unit strides. beta == 0 means y is not read.
 * Errors: MBL_EARG, MBL_EDIM. */
MBL_API int mbla_gemv(char trans, int m, int n, double alpha, const double *A, int lda,
              const double *x, double beta, double *y, mbl_status *st);

/* 1-norm (maximum absolute column sum) of the m x n matrix A. Returns 0 for empty matrices
 * and -1.0 when A is NULL or lda < max(1, m). */
MBL_API double mbla_norm1(int m, int n, const double *A, int lda);
/* Frobenius norm of the m x n matrix A (LAPACK's dlange, safe against overflow); 0 when empty. */
MBL_API double mbla_norm_fro(int m, int n, const double *A, int lda);

/* ============================================================================================
 * Dense: LU (partial pivoting), one-shot and factor-once/solve-many
 * ========================================================================================== */

/* Solve T X = B for a tridiagonal T (dgtsv: LU with partial pivoting): dl (n-1) the
 * subdiagonal, d (n) the diagonal, du (n-1) the superdiagonal, all overwritten; B (n x nrhs)
 * by X. Errors: MBL_EDIM; MBL_ESINGULAR (an exactly zero pivot). */
MBL_API int mbla_tridiag_solve(int n, int nrhs, double *dl, double *d, double *du, double *B, int ldb, mbl_status *st);

/* Solve A X = B (dgesv). A (n x n) is overwritten by its LU factors, B (n x nrhs) by X.
 * Errors: MBL_EDIM; MBL_ESINGULAR "matrix is singular: U(k,k) is exactly zero (pivot k)" with
 * k 0-based (only an exactly zero pivot is detected; use mbla_dlu_rcond for near-singularity);
 * MBL_ENOMEM (pivot array). */
MBL_API int mbla_lu_solve(int n, int nrhs, double *A, int lda, double *B, int ldb, mbl_status *st);

/* A dense LU factorization P A = L U (dgetrf) kept for repeated solves. */
typedef struct mbla_dlu mbla_dlu;

/* Factor a copy of the n x n matrix A (A itself is not modified). Also records ||A||_1 for
 * mbla_dlu_rcond. Errors: MBL_EDIM, MBL_ENOMEM, MBL_ESINGULAR (exactly zero pivot, named). */
MBL_API int mbla_dlu_new(int n, const double *A, int lda, mbla_dlu **out, mbl_status *st);

/* Solve op(A) X = B in place (dgetrs); trans 'N' (A X = B) or 'T' (A^T X = B). B is
 * n x nrhs. Errors: MBL_EARG, MBL_EDIM. */
MBL_API int mbla_dlu_solve(const mbla_dlu *lu, char trans, int nrhs, double *B, int ldb,
                   mbl_status *st);

/* Reciprocal 1-norm condition number estimate 1/(||A||_1 ||A^-1||_1) (dgecon; within a small
 * factor of the true value, usually exact). Errors: MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_dlu_rcond(const mbla_dlu *lu, double *rcond, mbl_status *st);

/* Reciprocal 1-norm condition number estimate of the n x n matrix A, factored in place
 * (dgetrf, then dgecon: 1/(||A||_1 ||A^-1||_1) within a small factor, usually exact), and,
 * when that is nonzero and nrhs > 0, the solution of A X = B in B (n x nrhs, dgetrs). A is
 * overwritten by its LU factors. An exactly zero pivot (or a zero or non-finite A) gives
 * *rcond = 0 without an error and leaves B as it was: a test, not a solve that must succeed.
 * n = 0 gives 1. Errors: MBL_EDIM, MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_lu_rcond(int n, double *A, int lda, int nrhs, double *B, int ldb, double *rcond, mbl_status *st);
/* The inverse X = A^-1 of the n x n matrix A (LAPACK dgetrf, then dgetrs on the identity; A
 * is overwritten by its LU factors) and its exact reciprocal 1-norm condition number
 * *rcond = 1 / (||A||_1 ||X||_1) (no estimate: the inverse is at hand). An exactly zero pivot,
 * or a zero or non-finite A or X, gives *rcond = 0 without an error (X then undefined): a
 * test, not a solve that must succeed. n = 0 gives 1. Errors: MBL_EDIM, MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_inv_rcond(int n, double *A, int lda, double *X, int ldx, double *rcond, mbl_status *st);

/* Factor a new n x n matrix A (the order lu was made with) in place of the old one, without
 * allocating (a loop over points). On MBL_ESINGULAR lu holds no valid factorization until the
 * next successful refactorization. Errors: MBL_EARG, MBL_EDIM, MBL_ESINGULAR. */
MBL_API int mbla_dlu_refactor(mbla_dlu *lu, const double *A, int lda, mbl_status *st);

/* Order of the factored matrix (0 for NULL). */
MBL_API int mbla_dlu_n(const mbla_dlu *lu);

MBL_API void mbla_dlu_free(mbla_dlu *lu);

/* Cholesky factorization A = L L^T in place (dpotrf) of the symmetric n x n matrix A, of which only
 * the lower triangle is read; on return the lower triangle holds L (the strict upper triangle is
 * untouched). Errors: MBL_EDIM, MBL_EARG; MBL_ESINGULAR "matrix is not positive definite: the
 * leading minor of order k is not positive" (k 1-based), A then partly overwritten. */
MBL_API int mbla_dchol(int n, double *A, int lda, mbl_status *st);

/* The inverse of A from its factor L (mbla_dchol) in place of L, both triangles (dpotri; the
 * upper one copied from the lower). Errors: MBL_EDIM, MBL_EARG; MBL_ESINGULAR (a zero on L's
 * diagonal). */
MBL_API int mbla_dchol_inverse(int n, double *L, int ldl, mbl_status *st);

/* ============================================================================================
 * Dense: rank-revealing factorizations
 * ========================================================================================== */

/* Numerical rank from a non-increasing sequence d[0..k-1] of magnitudes (singular values or
 * |R(i,i)| of a QRCP): the number of leading entries with |d[i]| > tol * |d[0]|.
 * tol < 0 selects the default max(m, n) * DBL_EPSILON (m, n: the matrix dimensions).
 * Returns 0 when k == 0 or d[0] == 0. */
MBL_API int mbla_rank_from_diag(int m, int n, int k, const double *d, int incd, double tol);

/* Rank-revealing QR with column pivoting, A P = Q R (dgeqp3, then dorgqr for Q).
 *   A (m x n, lda)  in: the matrix; out: overwritten by dgeqp3's output (R in the upper
 *                   triangle, Householder vectors below).
 *   tol             relative rank tolerance, see mbla_rank_from_diag (default max(m,n)*eps,
 *                   i.e. rank = #{i : |R(i,i)| > max(m,n) * eps * |R(0,0)|}).
 *   jpvt (n)        out: 0-based permutation, column j of A P is column jpvt[j] of A.
 *   rank            out (may be NULL): numerical rank.
 *   Q (m x qcols)   out (may be NULL): the first qcols columns of the orthogonal factor Q,
 *                   min(m,n) <= qcols <= m (qcols = m gives the full square Q, whose columns
 *                   rank..m-1 span the orthogonal complement of range(A)). Ignored if NULL.
 *   R (k x n, ldr)  out (may be NULL): the upper trapezoidal factor, k = min(m, n).
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM. */
MBL_API int mbla_qrcp(int m, int n, double *A, int lda, double tol, int *jpvt, int *rank, double *Q,
              int ldq, int qcols, double *R, int ldr, mbl_status *st);

/* Minimum-norm least-squares solution of A X = B by LAPACK dgelsd (SVD by divide and conquer
 * without forming the singular vectors: several times cheaper than mbla_svd with U and V^T).
 * Singular values s_i <= rcond * s_1 count as zero (rcond < 0: machine precision).
 *   A (m x n)        destroyed on output.
 *   B (ldb x nrhs)   in: the m x nrhs right-hand sides; out: the n x nrhs solution; ldb >= max(1, m, n).
 *   rank             (may be NULL) out: the effective rank.
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV. */
MBL_API int mbla_lstsq(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
               mbl_status *st);

/* The same minimum-norm least-squares solution by a complete orthogonal factorization (LAPACK
 * dgelsy: QR with column pivoting, then RZ of its leading rank rows): about a third of dgelsd's
 * work on the small systems of a point's velocities (27 x 28: 0.25 M instructions against
 * 0.74 M). The effective rank is the order of the largest leading triangle R11 of the pivoted QR
 * whose estimated condition number is below 1 / rcond (rcond < 0: machine precision); for a
 * matrix of exact rank r with well-separated singular values, r, as mbla_lstsq finds it.
 * Arguments, output and errors as mbla_lstsq (no MBL_ENOCONV: nothing iterates). */
MBL_API int mbla_lstsq_qr(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
                  mbl_status *st);

/* mbla_lstsq_qr in two steps, for several right-hand sides of one matrix given one after the other
 * (a refinement step): mbla_cod_new factors A (m x n, read only; rcond as mbla_lstsq_qr's), then
 * mbla_cod_solve overwrites B (ldb x nrhs, ldb >= max(1, m, n)) with the minimum-norm solutions, the
 * same numbers bit for bit as LAPACK's dgelsy on the same A and B (dgelsy's own steps and workspace;
 * mbla_lstsq_qr is these two steps at once).
 * mbla_cod_rank: the effective rank (0 for NULL). Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, and a
 * non-finite entry of A or B refused (MBL_EARG). */
typedef struct mbla_cod mbla_cod;
MBL_API int mbla_cod_new(int m, int n, const double *A, int lda, double rcond, mbla_cod **out, mbl_status *st);
MBL_API int mbla_cod_solve(const mbla_cod *f, int nrhs, double *B, int ldb, mbl_status *st);
MBL_API int mbla_cod_rank(const mbla_cod *f);
MBL_API void mbla_cod_free(mbla_cod *f);

/* Singular value decomposition A = U S V^T (dgesvd).
 *   A (m x n)  destroyed on output.
 *   job        'S': thin U (m x k) and V^T (k x n), k = min(m, n);
 *              'A': full U (m x m) and V^T (n x n). U and/or VT may be NULL (not computed).
 *   s (k)      out: singular values in decreasing order.
 * Use mbla_rank_from_diag(m, n, k, s, 1, tol) for the numerical rank.
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV (bidiagonal QR did not converge). */
MBL_API int mbla_svd(int m, int n, double *A, int lda, char job, double *s, double *U, int ldu,
             double *VT, int ldvt, mbl_status *st);

/* LU with complete pivoting P A Q = L U (dgetc2) of the n x n matrix A, in place.
 *   ipiv, jpiv (n)  out: 0-based interchange sequences: for k = 0..n-1 in order, row k was
 *                   swapped with row ipiv[k] and column k with column jpiv[k].
 *   nsmall          out (may be NULL): 0-based index of the first pivot that dgetc2 found
 *                   smaller than max(eps * max|A|, safe minimum) and replaced by that value
 *                   (the matrix is numerically singular from there on), or -1 if none.
 * Never fails on singular input (that is the point of complete pivoting: the small pivots
 * come last). Errors: MBL_EARG, MBL_EDIM. */
MBL_API int mbla_lu_complete(int n, double *A, int lda, int *ipiv, int *jpiv, int *nsmall,
                     mbl_status *st);

/* Column (state) selection by Gaussian elimination with complete pivoting, as in source 000
 * Eq. 20-22: the m x n matrix J (m <= n; A is not modified) has column j scaled by weights[j]
 * (NULL: all 1), is padded with n - m zero rows to a square matrix and factored with dgetc2.
 * The columns pivoted first form the best-conditioned nonsingular block (dependent
 * coordinates); the remaining n - rank columns are the independent coordinates (states).
 * A larger weight makes a column more likely to be pivoted (dependent); give user-preferred
 * states a small weight (e.g. 1e-3) to keep them independent.
 *   tol        rank tolerance relative to the first (largest) pivot: pivot k counts when
 *              |U(k,k)| > tol * |U(0,0)|. Default max(m, n) * eps.
 *   perm (n)   out: perm[0..rank-1] are the pivot (dependent) columns in pivot order;
 *              perm[rank..n-1] the others (independent) in increasing index order.
 *   rank       out: number of pivots found (<= m).
 * Cost O(n^3) time and n^2 doubles of workspace: meant for moderate n.
 * Errors: MBL_EARG, MBL_EDIM (m > n, bad ld, negative or non-finite weight), MBL_ENOMEM. */
MBL_API int mbla_select_columns(int m, int n, const double *A, int lda, const double *weights,
                        double tol, int *perm, int *rank, mbl_status *st);

/* ============================================================================================
 * Dense: eigenproblems
 * ========================================================================================== */

/* Eigenvalues and optionally eigenvectors of a general real n x n matrix (dgeev).
 * A is not modified. wr, wi (n): real and imaginary parts; complex conjugate pairs appear
 * consecutively, positive imaginary part first. VL/VR (n x n, may be NULL): left/right
 * eigenvectors in LAPACK's packed form (for a pair j, j+1: v_j = V(:,j) + i V(:,j+1)), each of
 * unit 2-norm with largest component real.
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV (QR algorithm failed). */
MBL_API int mbla_eig(int n, const double *A, int lda, double *wr, double *wi, double *VL, int ldvl,
             double *VR, int ldvr, mbl_status *st);

/* The same (right eigenvectors only) by dgeevx with the balancing chosen: balanc 'B' (dgeev's:
 * permute and scale), 'P' (permute only), 'S' (scale only), 'N' (none). Scaling makes the
 * eigenvalues of a badly scaled A more accurate, but where A has entries at the rounding level
 * of zero ones its factors can reach 1e23, and the eigenvectors, computed in the scaled basis,
 * come back with rounding errors that large in the original one; a permutation is exact
 * (src/eig takes 'P' where 'B' gave such vectors). Errors as mbla_eig. */
MBL_API int mbla_eig_balance(char balanc, int n, const double *A, int lda, double *wr, double *wi, double *VR,
                             int ldvr, mbl_status *st);

/* Generalized eigenproblem A x = lambda B x by QZ (dggev). A, B (n x n) are not modified.
 * Eigenvalue j is (alphar[j] + i alphai[j]) / beta[j]; beta[j] >= 0. Infinite eigenvalues
 * (singular B, descriptor pencils) come out with beta[j] == 0 exactly (LAPACK's QZ deflates
 * them by zeroing the negligible diagonal entry of the triangular factor); a singular pencil
 * (det(A - lambda B) == 0 for all lambda) shows alpha == beta == 0 (approximately).
 * VL/VR as in mbla_eig (may be NULL). Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV. */
MBL_API int mbla_ggev(int n, const double *A, int lda, const double *B, int ldb, double *alphar,
              double *alphai, double *beta, double *VL, int ldvl, double *VR, int ldvr,
              mbl_status *st);

/* Generalized eigenproblem A x = lambda B x by QZ with balancing (dggevx, sense 'N').
 *   balanc     'N' none, 'P' permute, 'S' scale, 'B' both (LAPACK's dggbal: permutations that
 *              isolate eigenvalues, then diagonal scalings of rows and columns that make the
 *              entries of A and B as close to 1 in magnitude as possible).
 * A, B (n x n) are not modified. alphar, alphai, beta (n), VL, VR (may be NULL) as in
 * mbla_ggev; the eigenvectors are those of the original pencil (the balancing is undone), each
 * scaled so that its largest component has |re| + |im| = 1. abnrm, bbnrm (may be NULL): the
 * 1-norms of the balanced A and B.
 * Errors: MBL_EARG (also a bad balanc), MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV. */
MBL_API int mbla_ggevx(char balanc, int n, const double *A, int lda, const double *B, int ldb,
               double *alphar, double *alphai, double *beta, double *VL, int ldvl, double *VR,
               int ldvr, double *abnrm, double *bbnrm, mbl_status *st);

/* Kinds of the eigenvalues of a pencil (mbla_gev_classify). */
enum { MBLA_EIG_FINITE = 0, MBLA_EIG_INFINITE = 1, MBLA_EIG_UNDETERMINED = 2 };

/* The eigenvalues of the real pencil (A, B) from QZ's alpha = alphar + i alphai and beta
 * (mbla_ggev, mbla_ggevx on the same A and B), classified from the pencil itself, never from the
 * eigenvalue's magnitude (docs/linearization.md, "Infinite eigenvalues"). With tol = n eps
 * (MBLA_GEV_TOL_FACTOR n eps) and Frobenius norms:
 *   - undetermined: |alpha| <= tol ||A|| and |beta| <= tol ||B||: (A, B) is singular or within
 *     rounding of a singular pencil, alpha / beta is any number rounding made (1e37, 1e-6 i);
 *   - infinite: |beta| <= tol ||B||, a change of B within rounding makes it infinite; and at
 *     least n - rank(B) of them (rank within tol ||B||, by SVD): when fewer are found so, the
 *     ones nearest infinity on the pencil's own scale (smallest (|beta| / ||B||) / (|alpha| /
 *     ||A||)) are added;
 *   - finite: s = alpha / beta; the second of a conjugate pair is the exact conjugate of the
 *     first (LAPACK's two betas of a pair differ by rounding, so would the ratios).
 * re, im (n): the finite eigenvalues (INFINITY, 0 for the others); kind (n): MBLA_EIG_*;
 * nfinite (may be NULL): how many are finite; rank_b (may be NULL): the rank of B.
 * Errors: MBL_ESINGULAR when any is undetermined (the outputs are filled all the same), MBL_EARG,
 * MBL_ENOMEM, MBL_ENOCONV (the SVD). */
#define MBLA_GEV_TOL_FACTOR 4.0
MBL_API int mbla_gev_classify(int n, const double *A, int lda, const double *B, int ldb, const double *alphar,
                      const double *alphai, const double *beta, double *re, double *im, int *kind, int *nfinite,
                      int *rank_b, mbl_status *st);

/* Normwise backward errors of the eigenpairs of the real pencil (A, B) from QZ (mbla_ggev):
 * berr[j] = ||(A - s_j B) x_j|| / ((||A|| + |s_j| ||B||) ||x_j||), Frobenius norms, 2-norm of the
 * residual; re, im (n) the eigenvalues (mbla_gev_classify's), VR (n x n, ld ldvr) QZ's packed right
 * eigenvectors with its alphai; INFINITY for an eigenvalue that is not finite. */
MBL_API int mbla_gev_berr(int n, const double *A, int lda, const double *B, int ldb, const double *re, const double *im,
                  const double *alphai, const double *VR, int ldvr, double *berr, mbl_status *st);

/* The rounding error of QZ on each finite eigenvalue of the real pencil (A, B), measured: QZ on the
 * transposed pencil, on the pencil with rows and columns in reverse order and on both has the same
 * eigenvalues but rounds differently; err[j] is the largest distance of eigenvalue j (re, im: from
 * mbla_gev_classify, kind its kinds) to the nearest finite eigenvalue of each sample. A measured
 * sample of QZ's rounding on these data, not a bound (callers multiply by a safety factor), and
 * blind to the rounding the data carry from their own computation. INFINITY for the eigenvalues
 * that are not finite. Three more QZ runs of order n. */
MBL_API int mbla_gev_rounding(int n, const double *A, int lda, const double *B, int ldb, const double *re, const double *im,
                      const int *kind, double *err, mbl_status *st);

/* Symmetric-definite generalized problem A z = lambda B z (dsygvd, itype 1): A symmetric, B
 * symmetric positive definite; only the upper triangles are read; A, B are not modified.
 * w (n): eigenvalues ascending. Z (n x n, may be NULL): B-orthonormal eigenvectors
 * (Z^T B Z = I). Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ESINGULAR "B is not positive
 * definite (leading minor of order k)", MBL_ENOCONV. */
MBL_API int mbla_sygvd(int n, const double *A, int lda, const double *B, int ldb, double *w,
               double *Z, int ldz, mbl_status *st);

/* Is the n x n matrix A symmetric (|A_ij - A_ji| <= sym_tol max|A|) and positive definite (semi = 0:
 * its smallest symmetric eigenvalue > 0) or semidefinite (semi = 1: >= -sym_tol times the largest
 * magnitude)? 0 when it is; MBL_EARG "not symmetric: ..." or a non-finite entry, MBL_ESINGULAR "not
 * positive definite: ..." (one line, for the caller to prefix with the matrix's name); MBL_EDIM,
 * MBL_ENOMEM. A is not modified. */
MBL_API int mbla_sym_check(int n, const double *A, int lda, double sym_tol, int semi, mbl_status *st);

/* ============================================================================================
 * Sparse: CSC matrices
 * ========================================================================================== */

typedef struct mbla_csc {
    int m, n;  /* rows, columns */
    int *p;    /* n + 1 column pointers, p[0] = 0, p[n] = nnz */
    int *i;    /* nnz row indices, sorted within each column, no duplicates */
    double *x; /* nnz values */
} mbla_csc;

/* Allocate an m x n matrix with room for nzmax entries; p is zeroed (an all-zero matrix).
 * Errors: MBL_EDIM (negative size), MBL_ENOMEM. */
MBL_API int mbla_csc_new(int m, int n, int nzmax, mbla_csc **out, mbl_status *st);
MBL_API void mbla_csc_free(mbla_csc *A);

/* Number of stored entries p[n] (0 for NULL). */
MBL_API int mbla_csc_nnz(const mbla_csc *A);
/* 1-norm of A (the largest sum of absolute values in a column); 0 when empty. */
MBL_API double mbla_csc_norm1(const mbla_csc *A);

/* Validate the invariants (sizes, p monotone, indices in range, sorted, no duplicates).
 * Errors: MBL_EARG (NULL), MBL_EDIM naming the first offending column/entry. */
MBL_API int mbla_csc_check(const mbla_csc *A, mbl_status *st);

/* Deep copy. Errors: MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_csc_copy(const mbla_csc *A, mbla_csc **out, mbl_status *st);

/* Assemble from nz triplets (ti[k], tj[k], tx[k]) (0-based); duplicates are summed, explicit
 * zeros kept (the pattern is structural). map (nz, may be NULL) receives for each triplet k
 * the position in x where its value went, for mbla_csc_refill. tx may be NULL (values 0).
 * Errors: MBL_EDIM "triplet k: index (i, j) out of range for m x n", MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_csc_from_triplets(int m, int n, int nz, const int *ti, const int *tj,
                           const double *tx, int *map, mbla_csc **out, mbl_status *st);

/* Refill the values of a matrix assembled by mbla_csc_from_triplets with the same triplet
 * pattern: x = 0, then x[map[k]] += tx[k] for k < nz. No allocation, no checks. */
MBL_API void mbla_csc_refill(mbla_csc *A, int nz, const int *map, const double *tx);

/* B = A^T. Errors: MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_csc_transpose(const mbla_csc *A, mbla_csc **out, mbl_status *st);

/* y = alpha*A*x + beta*y (x has n, y has m entries). beta == 0: y is not read. */
MBL_API int mbla_csc_gemv(const mbla_csc *A, double alpha, const double *x, double beta, double *y,
                  mbl_status *st);
/* y = alpha*A^T*x + beta*y (x has m, y has n entries). */
MBL_API int mbla_csc_gemv_t(const mbla_csc *A, double alpha, const double *x, double beta, double *y,
                    mbl_status *st);

/* C = A*B (sparse-sparse; structural pattern, no cancellation dropped).
 * Errors: MBL_EARG, MBL_EDIM (A->n != B->m), MBL_ENOMEM (also when nnz(C) overflows int). */
MBL_API int mbla_csc_matmul(const mbla_csc *A, const mbla_csc *B, mbla_csc **out, mbl_status *st);

/* C = alpha*A + beta*B on the union pattern (entries of the union are kept even when the sum
 * cancels). Errors: MBL_EARG, MBL_EDIM (sizes differ), MBL_ENOMEM. */
MBL_API int mbla_csc_add(double alpha, const mbla_csc *A, double beta, const mbla_csc *B,
                 mbla_csc **out, mbl_status *st);

/* Block of A: rows r0 <= i < r1 and columns c0 <= j < c1 (half-open ranges), re-indexed from 0.
 * Errors: MBL_EARG, MBL_EDIM (range outside A or r1 < r0, c1 < c0), MBL_ENOMEM. */
MBL_API int mbla_csc_block(const mbla_csc *A, int r0, int r1, int c0, int c1, mbla_csc **out,
                   mbl_status *st);

/* C = A(rows, cols): C(a, b) = A(rows[a], cols[b]). rows must not repeat (cols may).
 * rows == NULL with nr == A->m means all rows; cols == NULL with nc == A->n all columns.
 * Errors: MBL_EARG, MBL_EDIM (index out of range or repeated row), MBL_ENOMEM. */
MBL_API int mbla_csc_select(const mbla_csc *A, int nr, const int *rows, int nc, const int *cols,
                    mbla_csc **out, mbl_status *st);

/* Dense copy D (m x n, ldd) of A (all entries written). Errors: MBL_EARG, MBL_EDIM. */
MBL_API int mbla_csc_to_dense(const mbla_csc *A, double *D, int ldd, mbl_status *st);

/* Sparse copy of the dense m x n matrix D keeping entries with |d| > droptol (droptol < 0
 * means 0: keep all nonzeros). Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM. */
MBL_API int mbla_csc_from_dense(int m, int n, const double *D, int ldd, double droptol,
                        mbla_csc **out, mbl_status *st);

/* Remove stored entries with |x| <= tol in place (tol < 0 means 0: drop explicit zeros).
 * Returns the new nnz (the arrays keep their capacity). Any triplet map becomes invalid. */
MBL_API int mbla_csc_drop(mbla_csc *A, double tol);

/* Equilibrate A in place (Ruiz's iteration with power-of-2 factors, in the spirit of LAPACK
 * dgeequb): each sweep divides every row and every column at once by the power of 2 nearest the
 * square root of its max-norm, so that on return A_out = diag(r) A_in diag(c) exactly (no
 * rounding) and every nonzero row and column of A_out has max-norm in [1/2, 2) (unless maxiter
 * sweeps did not suffice). Zero rows and columns keep their factor. Solve A_in x = b as
 * x = diag(c) y with A_out y = diag(r) b.
 *   warm: 0: start from r = c = 1; 1: r (m) and c (n) hold powers of 2 on entry (e.g. the
 *     factors of a previous, similar matrix), applied first and refined (fewer sweeps).
 *   r (m), c (n): out, the accumulated factors; work: m + n doubles of scratch (no allocation).
 *   maxiter < 0: MBLA_EQUILIBRATE_MAXITER_DEFAULT (each sweep halves the spread of the norms'
 *     exponents, so 32 sweeps cover any double range).
 * Returns the number of sweeps that changed A (>= 0), or MBL_EARG. */
#define MBLA_EQUILIBRATE_MAXITER_DEFAULT 32
MBL_API int mbla_csc_equilibrate(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work,
                         mbl_status *st);

/* Maximum transversal (Hopcroft-Karp): rowmatch (m) receives for each row its matched column or
 * -1; nmatch (may be NULL) the size of the matching (= n when A has a zero-free diagonal after a
 * column permutation). O(nnz sqrt(n)) whatever the column order. Errors: MBL_EARG, MBL_ENOMEM. */
MBL_API int mbla_csc_maxmatch(const mbla_csc *A, int *rowmatch, int *nmatch, mbl_status *st);

/* ============================================================================================
 * Sparse LU: KLU (real and complex)
 * ========================================================================================== */

enum { MBLA_ORDER_AMD = 0, MBLA_ORDER_COLAMD = 1 };

typedef struct mbla_klu_opts {
    int ordering;        /* MBLA_ORDER_AMD (default) or MBLA_ORDER_COLAMD (fill-reducing) */
    int btf;             /* 1 (default): block triangular form pre-ordering; 0: none */
    double pivot_tol;    /* KLU partial-pivoting threshold in (0, 1]; default 0.001 (KLU's) */
    double refactor_drop;/* mbla_klu_refactor does a fresh pivoting factorization when the
                          * crude rcond after klu_refactor falls below refactor_drop times the
                          * rcond of the last pivoting factorization; default 1e-3 */
    double pivot_tol_try;/* in [0, 1]; default 0 (off). When below pivot_tol, every fresh
                          * factorization first uses this small threshold (keeps the
                          * fill-reducing order: large FE meshes, saddle points) and keeps it
                          * only when the pivot growth is at most 1e6 (klu_rgrowth >= 1e-6);
                          * otherwise it factors again with pivot_tol. 0: pivot_tol only. */
    int equilibrate;     /* 0 (default): KLU factors A (with its own row scaling); 1: KLU factors
                          * diag(r) A diag(c), r and c the power-of-2 factors of
                          * mbla_csc_equilibrate on |A| (recomputed, warm, at every refactor),
                          * and the solves apply them (exact: no rounding). A symmetric A stays
                          * symmetric (r = c), so the threshold test compares a diagonal with its
                          * column on a common scale: on the flexible pendulum's shift-invert
                          * saddle-point matrix this keeps KLU's pivots on the fill-reducing
                          * order (the raw matrix at n = 6e4 filled 250x, see
                          * docs/linear-algebra.md). rcond and condest are then those of the
                          * scaled matrix. */
    int saddle;          /* 0 (default): KLU's own order (a maximum transversal, BTF, AMD). 1: a
                          * saddle-point order when some columns have no diagonal entry
                          * ([K G^T; G 0]): each such column is grouped with the coordinate
                          * columns it couples to (both off-diagonal entries present; the one of
                          * largest |A(c, z)| always, the others while the group has at most 64
                          * columns), AMD orders the graph of the groups, and KLU factors in that
                          * order (no BTF), each group as one block, so the fill stays near AMD's
                          * estimate (spatial beam bodies: 10-50x less; docs/linear-algebra.md).
                          * ordering and btf are then ignored; no such column, or an order that
                          * predicts nnz(L) above 4 nnz(A) (the four-bar's chains of
                          * constraints): the default. */
    const int *saddle_cols; /* NULL (default), or with saddle, n column indices: the order is
                          * found on B = A Q, B(:, j) = A(:, saddle_cols[j]), for a matrix whose
                          * rows and columns are in different orders (rows [K; G] against
                          * columns [multipliers, coordinates]): B must be the saddle-point one.
                          * Read by mbla_klu_new only. */
} mbla_klu_opts;

/* Fill opts with the defaults above. */
MBL_API void mbla_klu_opts_default(mbla_klu_opts *opts);

/* A KLU factorization (symbolic analysis once, numeric factorization per value set). It keeps
 * a copy of the sparsity pattern to check later refactorizations. Real or complex. */
typedef struct mbla_klu mbla_klu;

/* Analyze and factor the square matrix A (opts may be NULL: defaults).
 * Errors: MBL_EARG, MBL_EDIM (not square), MBL_ENOMEM, MBL_ESINGULAR "matrix is singular
 * (KLU: zero pivot in column k)", MBL_ELIB (other KLU failure). */
MBL_API int mbla_klu_new(const mbla_csc *A, const mbla_klu_opts *opts, mbla_klu **out, mbl_status *st);

/* Refactor at new values of A with the same pattern (klu_refactor: same pivot sequence). If
 * that fails or the pivots went bad (rcond dropped, see refactor_drop), a fresh pivoting
 * factorization (klu_factor) is done instead; mbla_klu_stats tells how often.
 * Errors: MBL_EDIM (pattern differs from the analysed one), MBL_ESINGULAR, MBL_ENOMEM, MBL_ELIB.
 * After an error the object can only be freed or refactored again. */
MBL_API int mbla_klu_refactor(mbla_klu *k, const mbla_csc *A, mbl_status *st);
/* A fresh pivoting factorization (klu_factor) of A, of the analysed pattern, keeping the analysis:
 * the factors mbla_klu_new gives for A where the analysis does not depend on the values (every
 * option but saddle), without the analysis. Errors as mbla_klu_refactor. */
MBL_API int mbla_klu_factor(mbla_klu *k, const mbla_csc *A, mbl_status *st);

/* Solve A X = B (mbla_klu_solve) or A^T X = B (mbla_klu_solve_t) in place; B is n x nrhs.
 * Errors: MBL_EARG (also when k is complex or has no valid factorization), MBL_EDIM. */
MBL_API int mbla_klu_solve(mbla_klu *k, int nrhs, double *B, int ldb, mbl_status *st);
MBL_API int mbla_klu_solve_t(mbla_klu *k, int nrhs, double *B, int ldb, mbl_status *st);

/* KLU's own row scaling in the following (re)factorizations of k: on (1, the default) divides
 * each row by its largest magnitude; off (0) neither scales nor checks the matrix, for a matrix
 * the caller has equilibrated already (mbla_csc_equilibrate: there KLU's pass only repeats that
 * work; the refactorizations of a sweep). Takes effect at the next refactorization. */
MBL_API int mbla_klu_set_row_scale(mbla_klu *k, int on, mbl_status *st);

/* Crude reciprocal condition min|U(i,i)| / max|U(i,i)| (klu_rcond): cheap, pivot quality. */
MBL_API int mbla_klu_rcond(mbla_klu *k, double *rcond, mbl_status *st);

/* 1-norm condition number estimate ||A||_1 ||A^-1||_1 (klu_condest, Hager/Higham): A must be
 * the matrix of the current factorization (same values). Real factorizations only. */
MBL_API int mbla_klu_condest(mbla_klu *k, const mbla_csc *A, double *condest, mbl_status *st);

/* Statistics: number of numeric factorizations with pivoting and of klu_refactor calls
 * accepted (either may be NULL). */
MBL_API void mbla_klu_stats(const mbla_klu *k, int *nfactor, int *nrefactor);

/* Number of fresh factorizations whose first attempt with pivot_tol_try failed the growth
 * check (or hit a zero pivot) and were redone with pivot_tol. */
MBL_API int mbla_klu_nfallback(const mbla_klu *k);

/* The entries of the current numeric factors L + U (KLU's lnz + unz, off-diagonal blocks of the
 * block triangular form not counted) and the number of pivots the last pivoting factorization
 * took off the diagonal of the analysed order (KLU's noffdiag); 0 when there are none. */
MBL_API void mbla_klu_factor_stats(const mbla_klu *k, double *lu_nnz, int *noffdiag);

/* The entries of the analysed matrix that lie in the off-diagonal blocks of its block triangular
 * form (KLU's nzoff): KLU keeps them as they are and factors only the diagonal blocks, whose
 * entries are nnz(A) minus this count; 0 without BTF. */
MBL_API int mbla_klu_offdiag_nnz(const mbla_klu *k);

/* Complex KLU (klu_z_*): the pattern is A->p, A->i (A->x is ignored, may be NULL) and the
 * values az are interleaved (re, im) pairs, 2*nnz doubles.
 * Errors as mbla_klu_new. */
MBL_API int mbla_kluz_new(const mbla_csc *A, const double *az, const mbla_klu_opts *opts,
                  mbla_klu **out, mbl_status *st);
MBL_API int mbla_kluz_refactor(mbla_klu *k, const mbla_csc *A, const double *az, mbl_status *st);
/* Solve in place; B holds interleaved complex values, n x nrhs with leading dimension ldb
 * counted in complex entries. trans: 'N' A X = B, 'T' A^T X = B, 'C' A^H X = B. */
MBL_API int mbla_kluz_solve(mbla_klu *k, char trans, int nrhs, double *B, int ldb, mbl_status *st);

MBL_API void mbla_klu_free(mbla_klu *k);

/* Keep only what the solves need (the factors, the column permutation, the equilibration factors):
 * the copies of the analysed pattern and the values' scratch are freed (about 20 bytes per nonzero),
 * after which mbla_klu_refactor and mbla_klu_condest refuse (MBL_EARG). For a one-shot caller
 * before its next large allocation. */
MBL_API void mbla_klu_solve_only(mbla_klu *k);

/* mbla_klu_new with the default options, mbla_klu_condest (condest NULL: none) and
 * mbla_klu_solve_only in one, taking A over: A is freed in every case, before the factors are
 * made when KLU factors a column permutation of it (its maximum transversal), so that the
 * factorization's peak holds one copy of the matrix instead of three (about 20 bytes per nonzero
 * less). The same factors, solves and estimate as the three calls, bit for bit. On an error of the
 * factorization *out is NULL (errors as mbla_klu_new); when only the estimate failed *out holds
 * the factorization and its error is returned. */
MBL_API int mbla_klu_new_taken(mbla_csc *A, double *condest, mbla_klu **out, mbl_status *st);

/* ============================================================================================
 * Sparse Cholesky: CHOLMOD (needs MBLIN_WITH_GPL; otherwise every function returns MBL_ELIB
 * "built without GPL components (MBLIN_WITH_GPL=OFF)")
 * ========================================================================================== */

typedef struct mbla_chol mbla_chol;

/* Factor the symmetric positive definite matrix A = L L^T (CHOLMOD's default: AMD/METIS
 * ordering, supernodal or simplicial chosen automatically). uplo 'U': only the upper triangle
 * (i <= j) of A is used, 'L': only the lower triangle. Errors: MBL_EARG, MBL_EDIM (not
 * square), MBL_ENOMEM, MBL_ESINGULAR "matrix not positive definite (column k)", MBL_ELIB. */
MBL_API int mbla_chol_new(const mbla_csc *A, char uplo, mbla_chol **out, mbl_status *st);

/* Refactor at new values, same pattern (the analysis is reused). Errors as mbla_chol_new. */
MBL_API int mbla_chol_refactor(mbla_chol *c, const mbla_csc *A, mbl_status *st);

/* Solve A X = B in place, B n x nrhs. Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM. */
MBL_API int mbla_chol_solve(mbla_chol *c, int nrhs, double *B, int ldb, mbl_status *st);

MBL_API void mbla_chol_free(mbla_chol *c);

/* The entries of the Cholesky factor L of the symmetric A (its diagonal included) as CHOLMOD's
 * symbolic analysis reports them (cholmod_analyze, Common->lnz) under the ordering that
 * mbla_chol_new would use, without the numeric factorization: the fill-in is structural, so A
 * need not be positive definite (a massless coordinate's empty column counts its diagonal).
 * uplo as mbla_chol_new. Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ELIB. */
MBL_API int mbla_chol_lnz(const mbla_csc *A, char uplo, double *lnz, mbl_status *st);

/* ============================================================================================
 * Sparse rank-revealing QR: SPQR (needs MBLIN_WITH_GPL, as above)
 * tol: columns of 2-norm <= tol are treated as zero during the factorization (Heath's
 * method). Default (tol < 0): SPQR's default 20 * (m + n) * eps * (largest column 2-norm).
 * ========================================================================================== */

/* Numerical rank of the sparse m x n matrix A. tol_used (may be NULL) receives the tolerance
 * actually used. Errors: MBL_EARG, MBL_ENOMEM, MBL_ELIB. */
MBL_API int mbla_spqr_rank(const mbla_csc *A, double tol, int *rank, double *tol_used,
                   mbl_status *st);

/* Orthonormal basis of the null space of the m x n matrix A (e.g. a constraint Jacobian):
 * from the QR factorization of A^T, N = the last n - rank columns of its Q. *N receives a
 * newly allocated n x (n - rank) column-major array (ld n; free with mbl_free; NULL when the
 * null space is trivial), *nnull = n - rank, rank (may be NULL) the rank.
 * Errors: MBL_EARG, MBL_ENOMEM, MBL_ELIB. */
MBL_API int mbla_spqr_nullspace(const mbla_csc *A, double tol, double **N, int *nnull, int *rank,
                        mbl_status *st);

/* Solve A X = B for the m x n matrix A, B m x nrhs (ldb), X n x nrhs (ldx):
 * m >= n: least-squares solution (SPQR backslash, basic solution if A is rank deficient);
 * m < n: minimum 2-norm solution of the underdetermined system (QR of A^T).
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ELIB. */
MBL_API int mbla_spqr_solve(const mbla_csc *A, double tol, int nrhs, const double *B, int ldb,
                    double *X, int ldx, mbl_status *st);

/* ============================================================================================
 * Sparse eigenvalues: ARPACK shift-invert with KLU
 * ========================================================================================== */

typedef struct mbla_eigs_opts {
    int ncv;        /* Krylov subspace dimension; 0 (default): min(n, max(2k + 1, 20)) */
    int maxiter;    /* maximum Arnoldi restarts; default 300 */
    double tol;     /* ARPACK relative accuracy of the Ritz values; default 0 (= eps) */
    mbla_klu_opts klu; /* options of the factorization of A - sigma E; default mbla_klu_opts_default
                        * with equilibrate = 1 and saddle = 1 */
} mbla_eigs_opts;

/* Fill opts with the defaults above. */
MBL_API void mbla_eigs_opts_default(mbla_eigs_opts *opts);

/* The k eigenvalues of the pencil A x = lambda E x nearest the shift sigma = sigma_re +
 * i sigma_im, by ARPACK (dnaupd/dneupd for a real shift, znaupd/zneupd for a complex one) in
 * regular mode applied to OP = (A - sigma E)^{-1} E, whose eigenvalues are
 * mu = 1/(lambda - sigma); A - sigma E is factored by KLU (real or complex). E may be singular
 * (descriptor pencils): infinite eigenvalues map to mu = 0 and are never returned; the start
 * vector is OP applied to a fixed pseudo-random vector (deterministic results). E == NULL
 * means the identity. A symmetric (K, M) pair can use the same call.
 *   k            number of eigenvalues wanted, 1 <= k <= n - 2 (k + 2 <= ncv <= n).
 *   opts         may be NULL (defaults).
 *   lre, lim (k) out: eigenvalues sorted by increasing distance |lambda - sigma|.
 *   Vre, Vim     out (each may be NULL): n x k real and imaginary parts of the unit-2-norm
 *                eigenvectors (ld ldv); for a real shift complex-conjugate pairs are split.
 *   nconv        out (may be NULL): number of converged Ritz values (set also on
 *                MBL_ENOCONV).
 * Errors: MBL_EARG, MBL_EDIM (sizes, k out of range), MBL_ENOMEM, MBL_ESINGULAR (A - sigma E
 * singular: sigma is an eigenvalue; move the shift), MBL_ENOCONV "ARPACK converged j of k
 * eigenvalues in maxiter iterations", MBL_ELIB (ARPACK error code). */
MBL_API int mbla_eigs_sinv(const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im,
                   int k, const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre,
                   double *Vim, int ldv, int *nconv, mbl_status *st);

/* The k eigenvalues w nearest the real shift sigma of the symmetric pencil K x = w B x (K symmetric,
 * possibly indefinite, e.g. a constraint-augmented saddle-point matrix; B symmetric positive
 * semi-definite), by ARPACK's Lanczos driver dsaupd/dseupd in shift-invert mode 3 (bmat "G",
 * OP = (K - sigma B)^{-1} B, factored once by the real KLU; the B-semi-inner product). Only the
 * upper and lower triangles together are read (pass both); symmetry is the caller's promise. The
 * start vector is OP applied to a fixed pseudo-random vector (no component in the null space of
 * B that OP does not produce; deterministic results).
 *   k        1 <= k <= n - 1 (k + 1 <= ncv <= n).
 *   opts     may be NULL (defaults of mbla_eigs_opts).
 *   w (k)    out: the real eigenvalues sorted by increasing |w - sigma|.
 *   V        out (may be NULL): n x k eigenvectors (ld ldv), B-orthonormal where B is definite.
 *   nconv    out (may be NULL): number of converged Ritz values.
 * Errors: as mbla_eigs_sinv (MBL_ESINGULAR: K - sigma B singular, move the shift). */
MBL_API int mbla_eigs_sym_sinv(const mbla_csc *K, const mbla_csc *B, double sigma, int k, const mbla_eigs_opts *opts,
                       double *w, double *V, int ldv, int *nconv, mbl_status *st);

/* mbla_eigs_sym_sinv for a positive definite K - sigma B (sigma below the lowest eigenvalue, e.g. 0
 * for a positive definite K and B semi-definite), factored by CHOLMOD (supernodal L L^T) instead of
 * KLU: the same Lanczos iteration, start vector and results. On a 3-D lattice of 1.0e5 rows (the
 * 27-point pattern of hexahedra, bench/bench_fe_reduce.c) the solves with KLU's LU took most of
 * the time of 20 modes (docs/benchmarks.md). F: the caller's factor of the n x n matrix
 * K - sigma B (mbla_chol_new; reused, K then not read and may be NULL), or NULL: K - sigma B is
 * formed and factored here. opts->klu is not used. Needs MBLIN_WITH_GPL (MBL_ELIB otherwise).
 * Errors: as mbla_eigs_sym_sinv; MBL_ESINGULAR: K - sigma B is not positive definite. */
MBL_API int mbla_eigs_sym_chol(const mbla_csc *K, const mbla_csc *B, double sigma, mbla_chol *F, int k,
                       const mbla_eigs_opts *opts, double *w, double *V, int ldv, int *nconv, mbl_status *st);

/* Refine k computed eigenpairs (lambda_t, x_t) of the pencil A x = lambda E x in place by Newton's
 * method on (A - lambda E) x = 0, x^H x = 1 (a Rayleigh-quotient-like iteration: A - lambda E is
 * factored by the complex KLU at the starting lambda and the bordered system solved by two solves;
 * further steps reuse those factors (chord steps, linear convergence) and factor anew at the
 * current lambda only when a correction shrank by less than a factor 10), with the residual A x - lambda E x accumulated in doubled precision (Dot2): the limiting
 * accuracy is that of the eigenvalue of the stored A, E, not eps times its condition number times
 * ||(A, E)||. Each pair stops when the correction of lambda is below 4 eps |lambda| or stops
 * shrinking after a fresh factorization, or after maxit steps (maxit <= 0: 16); the pair with the smallest backward error seen
 * (the starting one included) is returned, so refinement never makes a pair worse by that measure.
 * A pair whose refined eigenvalue moved more than half the distance from its starting value to the
 * nearest other starting value is returned as given (normalized): it may have converged to that
 * one's eigenpair, and two pairs must not collapse onto one.
 * A pair whose starting value is the exact conjugate of an earlier one is set to the conjugate of
 * that one's result (real pencils keep their symmetry).
 *   lre, lim (k)  in/out: the eigenvalues.
 *   Vre, Vim      in/out: n x k real and imaginary parts of the eigenvectors (ld ldv, both
 *                 required); returned with unit 2-norm.
 *   berr (k)      out (may be NULL): backward error ||A x - lambda E x||_2 / ((||A||_1 +
 *                 |lambda| ||E||_1) ||x||_2) of the returned pair (residual in doubled precision).
 *   iters (k)     out (may be NULL): Newton steps taken (0: returned as given).
 * Errors: MBL_EARG (NULL, zero eigenvector), MBL_EDIM, MBL_ENOMEM, MBL_ELIB (KLU). */
MBL_API int mbla_eigs_refine(const mbla_csc *A, const mbla_csc *E, int k, double *lre, double *lim, double *Vre,
                     double *Vim, int ldv, int maxit, double *berr, int *iters, mbl_status *st);

/* mbla_eigs_refine for the quadratic eigenproblem Q(lambda) x = (K + lambda C + lambda^2 M) x = 0
 * (n x n, real), without forming the first-order pencil of order 2n: Newton's method on Q(lambda) x
 * = 0, x^H x = 1 (x the current vector), i.e. the bordered system [Q(lambda), Q'(lambda) x; x^H, 0]
 * [dx; dlambda] = -[Q(lambda) x; 0] with Q'(lambda) = C + 2 lambda M, solved by two solves with one
 * complex KLU factorization of Q(lambda) (equilibrated, pivot threshold 1e-8); chord steps, fresh
 * factorizations, the choice of the returned pair, the guard against two pairs collapsing onto one
 * and conjugate partners as mbla_eigs_refine. A pair stops when the correction of lambda relative
 * to |lambda| and the largest entry of the unit vector's correction are at most 4 eps, when that
 * correction stops shrinking after a fresh factorization, or after maxit steps (maxit <= 0: 16).
 * The residual Q(lambda) x =
 * K x + lambda (C x + lambda M x) is accumulated in doubled precision (Dot2). The eigenvector of the
 * first-order form (v = lambda x the velocity) is (x, lambda x). Use it where the LU of the 2n
 * first-order pencil fills: on the penalty pencil of a stiff beam model at n = 10^5 (element
 * stiffness 3e15 beside |lambda| ~ 1), that LU left the diagonal and ran out of memory (10.7 GB)
 * where Q(lambda) factors as the shift-invert Q(sigma) does.
 *   lre, lim (k)  in/out: the eigenvalues.
 *   Xre, Xim      in/out: n x k real and imaginary parts of x (ld ldx, both required); returned
 *                 with unit 2-norm.
 *   berr (k)      out (may be NULL): backward error ||Q(lambda) x||_2 / ((||K||_1 + |lambda|
 *                 ||C||_1 + |lambda|^2 ||M||_1) ||x||_2) of the returned pair (the normwise backward
 *                 error of the quadratic, Tisseur 2000, with 1-norms of the coefficients as
 *                 mbla_eigs_refine's (||A||_1 + |lambda| ||E||_1)).
 *   iters (k)     out (may be NULL): Newton steps taken (0: returned as given).
 * Errors: MBL_EARG (NULL, zero eigenvector), MBL_EDIM, MBL_ENOMEM, MBL_ELIB (KLU). */
MBL_API int mbla_eigs_refine_quad(const mbla_csc *K, const mbla_csc *C, const mbla_csc *M, int k, double *lre,
                          double *lim, double *Xre, double *Xim, int ldx, int maxit, double *berr, int *iters,
                          mbl_status *st);

/* mbla_eigs_refine for a real symmetric pencil (K, B) (B may be singular, e.g. a saddle-point
 * pencil [K Phi^T; Phi 0], [M 0; 0 0]) and real eigenvalues w: the same Newton steps, but each
 * step's eigenvalue is the Rayleigh quotient of the new vector, lambda + x^T r / x^T B x with the
 * residual r in doubled precision. Its error is quadratic in the vector's, where the Newton
 * correction inherits the error of the solve with A - lambda E: on pencils conditioned near 1/eps
 * (the flexible pendulum at n_p = 10^4 per link, stiffness 7e15 against masses of order 1) Newton
 * alone converged linearly and stopped 6.6e-4 away, with a normwise backward error of 1e-17 at
 * both values. The last iterate is returned (the backward error cannot rank them).
 *   w (k), V (n x k, ld ldv)  in/out: the eigenvalues and eigenvectors (unit 2-norm on return).
 *   conv (k)  out (may be NULL): 1 when the pair's last correction was at most 64 eps |w|, 0 when
 *             the refinement stopped without converging (maxit steps, the correction stopped
 *             shrinking, or the pair was returned as given): report such a pair, never trust it.
 * berr, iters, errors: as mbla_eigs_refine. */
MBL_API int mbla_eigs_refine_sym(const mbla_csc *K, const mbla_csc *B, int k, double *w, double *V, int ldv, int maxit,
                         double *berr, int *iters, int *conv, mbl_status *st);

/* Refine p eigenpairs (w_t, x_t) of a real symmetric pencil K x = w B x (as mbla_eigs_refine_sym:
 * B positive semi-definite, e.g. a saddle-point pencil) together, for pencils whose solves are too
 * inaccurate for Newton's method on each pair: the flexible pendulum at n_p = 10^4 per link, where
 * the LU factors of K - sigma B (stiffness 12 EI/h^3 = 7.5e15 against masses of order 1) are those
 * of a matrix perturbed by eps |K|, which moves the lowest bending eigenvalue by 1e-3 relative, so
 * that every correction computed with them carries errors along the other low modes of that size
 * (per-pair Newton diverged there). Each step: the residuals R = K X - B X Theta with K X in
 * doubled precision (Dot2), the corrections Z = (K - sigma B)^-1 R (one KLU factorization,
 * equilibrated, for all steps), and the Rayleigh-Ritz projection of (K, B) on span [X Z] (2p
 * directions, K Z in doubled precision, the small problem by LAPACK dsyev; directions whose B-Gram
 * eigenvalue is below 1e-12 of the largest dropped): the p Ritz pairs nearest sigma are the new X.
 * The corrections are B-orthonormalized, and on the algebraic rows (where B is zero: the
 * constraints of a saddle-point pencil) their violation is removed by one more solve, so that the
 * projected pencil stays definite on the search space. A converged pair gets no further
 * correction. The errors the inexact solves leave along other low modes lie in the span of the
 * block, and the projection removes them; the Ritz values converge to those of the stored K, B.
 *   p        the number of pairs, 2p <= n; the first k (0 <= k <= p, sorted by |w - sigma|) must
 *            converge, the others guard them (their errors would feed the wanted ones).
 *   w (p), V (n x p, ld ldv)  in/out: eigenvalues and eigenvectors (unit 2-norm on return), the
 *            pairs sorted by |w - sigma| on return.
 *   maxit    steps (<= 0: 30); the refinement stops when the first k converged.
 *   conv (p) out (may be NULL): 1 when the pair's Ritz value changed by at most 1e-12 |w| in a
 *            step (the floor of the projection's rounding), 0 otherwise: report such a pair, never
 *            trust it.
 *   berr, iters: as mbla_eigs_refine (iters: the steps of the block, the same for every pair).
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ESINGULAR (K - sigma B singular), MBL_ENOCONV (the
 * search space lost its rank, dsyev failed), MBL_ELIB. */
MBL_API int mbla_eigs_refine_sym_block(const mbla_csc *K, const mbla_csc *B, double sigma, int p, int k, double *w,
                               double *V, int ldv, int maxit, double *berr, int *iters, int *conv,
                               mbl_status *st);
/* ============================================================================================
 * Another engine for the sparse eigenvalues (docs/parallel.md "SLEPc eigensolver")
 * ========================================================================================== */

/* A backend that answers the two shift-invert problems above instead of ARPACK + KLU, e.g. SLEPc
 * over MPI in the plugin libmblin_par.so (src/par/slepc.c). Both calls have the arguments,
 * results and errors of mbla_eigs_sinv and mbla_eigs_sym_sinv. A distributed backend is
 * collective: every rank passes the same whole pencil (each inserts only its own rows) and gets
 * the eigenvalues; the eigenvectors are written on the root rank only (root = 1 there), and a
 * caller on another rank must not use them (the sparse path then skips their refinement). */
typedef struct mbla_eigs_backend {
    const char *name; /* short, for the results ("slepc": mbl_modes solver) */
    const char *what; /* for the notes ("SLEPc (Krylov-Schur, MUMPS)") */
    void *ctx;
    int root;         /* 1 on the rank that receives the eigenvectors and writes the results */
    int (*sinv)(void *ctx, const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im, int k,
                const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre, double *Vim, int ldv,
                int *nconv, mbl_status *st);
    int (*sym_sinv)(void *ctx, const mbla_csc *K, const mbla_csc *B, double sigma, int k, const mbla_eigs_opts *opts,
                    double *w, double *V, int ldv, int *nconv, mbl_status *st);
} mbla_eigs_backend;

#ifdef __cplusplus
}
#endif
#endif
