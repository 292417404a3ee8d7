/* The one-shot augmented linearization of a small model by dense LU (mbl_lin_options.dense_small;
 * docs/linearization.md "Small models: the dense one-shot path").
 *
 * A one-shot linearization factors two small sparse matrices once each (the kinematic system and
 * the augmented matrix of augmented.c). At a few links KLU's symbolic analysis (BTF, AMD), its
 * allocations and its condition estimate cost more than the factorization itself: on the 2-link
 * chain (orders 18 and 22) about 120 k of the one-shot's 225 k instructions. Here each matrix is
 * assembled densely from its triplets (summed in their order), equilibrated by the same
 * power-of-2 factors (mbla_csc_equilibrate, on a full view of the dense array: the same factors),
 * factored by Gaussian elimination with partial pivoting and solved column by column. The
 * condition figure is Hager's 1-norm estimate of the inverse (with Higham's alternating vector)
 * from the factors just made, times the 1-norm of the scaled matrix: the quantity KLU's condest
 * estimates, by another estimator on another factorization, so equal to it only roughly. A zero
 * pivot is the same refusal as KLU's singular factorization. The results equal KLU's to rounding
 * (different pivots, different order of the sums): docs/benchmarks.md gives the differences. */
#include <math.h>
#include <string.h>

#include "lin/augmented_internal.h"

size_t lin_sd_doubles(int n)
{
    return (size_t)n * (size_t)n + 4 * (size_t)n;
}

size_t lin_sd_ints(int n)
{
    return (size_t)n * (size_t)n + 2 * (size_t)n + 1;
}

/* x = A^-1 x with the factors (a, piv) */
static void sd_solve1(int n, const double *a, const int *piv, double *x)
{
    for (int k = 0; k < n; k++) {
        double t = x[piv[k]];
        x[piv[k]] = x[k], x[k] = t;
    }
    for (int k = 0; k < n; k++) {
        double xk = x[k];
        const double *l = a + (size_t)k * n;
        if (xk != 0)
            for (int i = k + 1; i < n; i++) x[i] -= l[i] * xk;
    }
    for (int k = n - 1; k >= 0; k--) {
        const double *u = a + (size_t)k * n;
        double xk = x[k] /= u[k];
        if (xk != 0)
            for (int i = 0; i < k; i++) x[i] -= u[i] * xk;
    }
}

/* x = A^-T x with the factors (a, piv) */
static void sd_solve1_t(int n, const double *a, const int *piv, double *x)
{
    for (int k = 0; k < n; k++) { /* U^T */
        const double *u = a + (size_t)k * n;
        double s = x[k];
        for (int i = 0; i < k; i++) s -= u[i] * x[i];
        x[k] = s / u[k];
    }
    for (int k = n - 1; k >= 0; k--) { /* L^T */
        const double *l = a + (size_t)k * n;
        double s = x[k];
        for (int i = k + 1; i < n; i++) s -= l[i] * x[i];
        x[k] = s;
    }
    for (int k = n - 1; k >= 0; k--) {
        double t = x[piv[k]];
        x[piv[k]] = x[k], x[k] = t;
    }
}

void lin_sd_solve(int n, const double *a, const int *piv, int nrhs, double *B, int ldb)
{
    for (int j = 0; j < nrhs; j++) sd_solve1(n, a, piv, B + (size_t)j * ldb);
}

/* Hager's estimate of the 1-norm of A^-1 (at most five steps), with Higham's alternating vector as
 * a second lower bound; x: n scratch values */
static double inv_norm1_est(int n, const double *a, const int *piv, double *x)
{
    double est = 0;
    int jlast = -1;
    for (int i = 0; i < n; i++) x[i] = 1.0 / n;
    for (int it = 0; it < 5; it++) {
        sd_solve1(n, a, piv, x);
        double s = 0;
        for (int i = 0; i < n; i++) s += fabs(x[i]);
        if (it > 0 && s <= est) break;
        est = s;
        for (int i = 0; i < n; i++) x[i] = x[i] >= 0 ? 1.0 : -1.0;
        sd_solve1_t(n, a, piv, x);
        int j = 0;
        for (int i = 1; i < n; i++)
            if (fabs(x[i]) > fabs(x[j])) j = i;
        if (j == jlast) break;
        jlast = j;
        for (int i = 0; i < n; i++) x[i] = i == j;
    }
    for (int i = 0; i < n; i++) x[i] = (i & 1 ? -1.0 : 1.0) * (1.0 + (n > 1 ? (double)i / (n - 1) : 0.0));
    sd_solve1(n, a, piv, x);
    double alt = 0;
    for (int i = 0; i < n; i++) alt += fabs(x[i]);
    alt = 2.0 * alt / (3.0 * n);
    return alt > est ? alt : est;
}

int lin_sd_factor(int n, int nz, const int *ti, const int *tj, const double *tx, double *r, double *c, double *dbuf,
                  int *ibuf, int **piv, double *cond)
{
    double *a = dbuf, *work = dbuf + (size_t)n * n; /* work: 2 n (equilibration), then n (estimate) */
    int *vp = ibuf, *vi = ibuf + n + 1;
    *piv = ibuf + n + 1 + (size_t)n * n;
    int *pv = *piv;
    memset(a, 0, (size_t)n * (size_t)n * sizeof *a);
    for (int t = 0; t < nz; t++) a[ti[t] + (size_t)tj[t] * n] += tx[t];
    /* the same power-of-2 factors as the sparse path's (zeros change no max-norm) */
    for (int j = 0; j <= n; j++) vp[j] = j * n;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) vi[i + (size_t)j * n] = i;
    mbla_csc view = {n, n, vp, vi, a};
    mbla_csc_equilibrate(&view, MBLA_DEFAULT, 0, r, c, work, NULL);
    double anorm = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += fabs(a[i + (size_t)j * n]);
        anorm = s > anorm ? s : anorm;
    }
    for (int k = 0; k < n; k++) { /* a = P^T L U in place (rows swapped whole, as LAPACK's dgetrf) */
        double *ak = a + (size_t)k * n;
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(ak[i]) > fabs(ak[p])) p = i;
        pv[k] = p;
        if (ak[p] == 0.0 || !isfinite(ak[p])) return MBL_ESINGULAR;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = a[k + (size_t)j * n];
                a[k + (size_t)j * n] = a[p + (size_t)j * n], a[p + (size_t)j * n] = t;
            }
        double d = 1.0 / ak[k];
        for (int i = k + 1; i < n; i++) ak[i] *= d;
        for (int j = k + 1; j < n; j++) {
            double *aj = a + (size_t)j * n, u = aj[k];
            if (u != 0)
                for (int i = k + 1; i < n; i++) aj[i] -= ak[i] * u;
        }
    }
    *cond = anorm * inv_norm1_est(n, a, pv, work);
    return 0;
}
