/* Internal helpers shared by the src/la sources. Not part of the public API. */
#ifndef MBLIN_LA_INTERNAL_H
#define MBLIN_LA_INTERNAL_H

#include "mblin/la.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* LAPACKE returns these when its own work allocation fails. */
#define LA_LAPACKE_NOMEM_WORK (-1010)
#define LA_LAPACKE_NOMEM_TRANSPOSE (-1011)

/* An m x n array of doubles (m, n >= 0), NULL on failure or size overflow. */
static inline double *la_alloc_dmat(int m, int n)
{
    size_t mm = (size_t)(m > 0 ? m : 0), nn = (size_t)(n > 0 ? n : 0);
    if (nn && mm > SIZE_MAX / nn) return NULL;
    return (double *)mbl_alloc_array(mm * nn, sizeof(double));
}

static inline int la_max1(int a) { return a > 1 ? a : 1; }

/* Copy an m x n column-major matrix between leading dimensions. */
static inline void la_copy_dmat(int m, int n, const double *A, int lda, double *B, int ldb)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) B[i + (size_t)j * ldb] = A[i + (size_t)j * lda];
}

/* Map a LAPACKE return value (info) to a status for function `fn`: info < 0 (illegal
 * argument, NaN input) -> MBL_ELIB, work allocation failure -> MBL_ENOMEM. Only for info < 0. */
int la_lapacke_error(mbl_status *st, const char *fn, int info);

/* Common checks of a dense argument (dense.c, dense_eig.c, dense_rcond.c): size >= 0, array
 * non-NULL when the matrix is nonempty, ld >= max(1, rows). */
int la_check_mat(mbl_status *st, const char *fn, const char *name, int m, int n, const void *A, int lda);

/* Iterative LAPACK routines (QR algorithm, QZ, SVD) may loop or return garbage on NaN/Inf:
 * reject non-finite input up front (O(mn), negligible next to the O(n^3) work). */
int la_check_finite(mbl_status *st, const char *fn, const char *name, int m, int n, const double *A, int lda);

/* The optimal lwork returned in a one-element work array by a workspace query, at least minimum
 * and at most INT32_MAX (guarded against garbage). */
int la_query_lwork(double w, int minimum);

/* Validate a CSC argument cheaply (non-NULL, sizes, arrays present). */
int la_csc_arg(const mbla_csc *A, const char *fn, const char *name, mbl_status *st);

/* The saddle-point order of klu_saddle.c for B = A Q, A the n x n pattern p, i (rows sorted) with
 * values x (real, or interleaved complex when cplx; NULL: pattern only), column j of B column
 * q[j] of A (q NULL: B = A; B is not formed): perm (n, of B's columns) and KLU's estimate of
 * nnz(L) (lnz); npairs the multiplier columns paired with a coordinate (0: perm is plain AMD on
 * B + B^T). lnz_max > 0: an order whose estimate would exceed it is not made where its groups'
 * dense blocks exceed it already (lnz then a lower bound above lnz_max, perm not written).
 * Errors: MBL_ENOMEM, MBL_ELIB. */
int la_klu_saddle_order(int n, const int *p, const int *i, const double *x, int cplx, const int *q, double lnz_max,
                        int *perm, double *lnz, int *npairs, mbl_status *st);

/* s + c += a b in doubled precision (Ogita, Rump and Oishi 2005, Dot2: the rounding errors of the
 * product (fma) and of the sum (TwoSum) are accumulated in c) */
static inline void la_dot2_add(double a, double b, double *s, double *c)
{
    double p = a * b, e = fma(a, b, -p);
    double t = *s + p, v = t - *s, q = (*s - (t - v)) + (p - v);
    *s = t;
    *c += q + e;
}

/* the 2-norm of the complex vector xr + i xi (scaled: no overflow) */
static inline double la_nrm2c(int n, const double *xr, const double *xi)
{
    double amax = 0, s = 0;
    for (int i = 0; i < n; i++) amax = fmax(amax, fmax(fabs(xr[i]), fabs(xi[i])));
    if (amax == 0) return 0;
    for (int i = 0; i < n; i++) s += (xr[i] / amax) * (xr[i] / amax) + (xi[i] / amax) * (xi[i] / amax);
    return amax * sqrt(s);
}

/* The Newton correction of an eigenpair from its bordered system, shared by the first-order
 * (eigs_refine.c) and the quadratic (eigs_refine_quad.c) refinements: with y1 = C^-1 r and
 * y2 = C^-1 (dC/dlambda-side vector) (interleaved complex, n entries each) for the current unit
 * vector x = xr + i xi, dlambda = x^H y1 / x^H y2 and x += -y1 + dlambda y2. Returns 1 (nothing
 * changed) when x^H y2 is zero or not finite, else 0 with *dr + i *di = dlambda and *dxmax the
 * largest real or imaginary part of the vector's correction. */
static inline int la_bordered_update(int n, double *xr, double *xi, const double *y1, const double *y2,
                                     double *dr, double *di, double *dxmax)
{
    double ar = 0, ai = 0, br = 0, bi = 0;
    for (int i = 0; i < n; i++) {
        ar += xr[i] * y1[2 * i] + xi[i] * y1[2 * i + 1];
        ai += xr[i] * y1[2 * i + 1] - xi[i] * y1[2 * i];
        br += xr[i] * y2[2 * i] + xi[i] * y2[2 * i + 1];
        bi += xr[i] * y2[2 * i + 1] - xi[i] * y2[2 * i];
    }
    double bb = br * br + bi * bi;
    if (!(bb > 0) || !isfinite(bb)) return 1;
    *dr = (ar * br + ai * bi) / bb, *di = (ai * br - ar * bi) / bb;
    double m = 0;
    for (int i = 0; i < n; i++) {
        double ur = -y1[2 * i] + *dr * y2[2 * i] - *di * y2[2 * i + 1];
        double ui = -y1[2 * i + 1] + *dr * y2[2 * i + 1] + *di * y2[2 * i];
        xr[i] += ur, xi[i] += ui;
        m = fmax(m, fmax(fabs(ur), fabs(ui)));
    }
    *dxmax = m;
    return 0;
}

#endif
