/* Column (state) selection by complete pivoting (mbla_select_columns, mblin/la.h): LAPACK's dgetc2
 * on the weighted matrix padded with zero rows, without the work the zero rows cost it. */
#include "la/la_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern void dger_(const int *m, const int *n, const double *alpha, const double *x, const int *incx, const double *y,
                  const int *incy, double *a, const int *lda);

/* LAPACK's dgetc2 (complete pivoting, reference LAPACK 3.x: the last entry of largest modulus in
 * column-major order, pivots below smin = max(eps xmax_1, smlnum) raised to smin, the multipliers
 * by division, the update by dger) on an n x n matrix whose rows m..n-1 (m < n) are zero, its
 * interchanges jpiv (0-based) and the diagonal of U as far as mbla_select_columns reads them
 * (the first m entries), bit for bit: the same operations in the same order, with dger called as
 * dgetc2 calls it (tests/la/test_la_select.c compares with dgetc2, ties included). What it leaves out: the search over the zero rows (they never hold the largest
 * modulus while a nonzero one remains) and the steps once the remaining block is zero (step m on:
 * dgetc2 then takes its last entry, jpiv[k] = n - 1, and sets the pivot to smin). At a 16-link
 * chain's selection about half of dgetc2's work. ipiv is not formed. */
static void lu_complete_zero_rows(int n, int m, double *A, int lda, int *jpiv)
{
    const double eps = DBL_EPSILON, smlnum = DBL_MIN / DBL_EPSILON, mone = -1.0;
    double smin = smlnum;
    int k = 0;
    for (; k < m && k < n - 1; k++) {
        double xmax = 0.0;
        int ipv = -1, jpv = -1;
        /* dgetc2 scans row by row (IP outer) and keeps the last entry >= the running maximum: the
         * largest modulus, ties to the largest row, then the largest column. Here column by column. */
        for (int jp = k; jp < n; jp++) {
            const double *a = A + (size_t)jp * lda;
            for (int ip = k; ip < m; ip++) {
                double v = fabs(a[ip]);
                if (v >= xmax && (v > xmax || ip > ipv || (ip == ipv && jp > jpv))) xmax = v, ipv = ip, jpv = jp;
            }
        }
        if (k == 0) smin = fmax(eps * xmax, smlnum);
        if (!(xmax > 0.0)) break; /* the remaining block is zero (or NaN): dgetc2 takes its last entry */
        if (ipv != k)
            for (int j = 0; j < n; j++) {
                double t = A[ipv + (size_t)j * lda];
                A[ipv + (size_t)j * lda] = A[k + (size_t)j * lda], A[k + (size_t)j * lda] = t;
            }
        if (jpv != k)
            for (int i = 0; i < n; i++) {
                double t = A[i + (size_t)jpv * lda];
                A[i + (size_t)jpv * lda] = A[i + (size_t)k * lda], A[i + (size_t)k * lda] = t;
            }
        jpiv[k] = jpv;
        double *akk = A + k + (size_t)k * lda;
        if (fabs(*akk) < smin) *akk = smin;
        for (int j = k + 1; j < n; j++) A[j + (size_t)k * lda] = A[j + (size_t)k * lda] / *akk;
        int nr = n - k - 1, one = 1;
        dger_(&nr, &nr, &mone, A + (k + 1) + (size_t)k * lda, &one, A + k + (size_t)(k + 1) * lda, &lda,
              A + (k + 1) + (size_t)(k + 1) * lda, &lda);
    }
    for (int i = k; i < n; i++) { /* the zero block: dgetc2's pivots from here on */
        jpiv[i] = n - 1;
        if (i < m) A[i + (size_t)i * lda] = smin;
    }
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
    if (m < n) lu_complete_zero_rows(n, m, W, n, jpiv); /* rows m.. of W are zero */
    else r = mbla_lu_complete(n, W, n, ipiv, jpiv, NULL, st);
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
