/* mbla_select_columns on an m x n matrix (m < n) runs LAPACK dgetc2's complete pivoting without the
 * search over the zero rows it pads with and without the steps on the zero block
 * (src/la/dense.c, lu_complete_zero_rows). The columns it selects and the rank must be those of
 * dgetc2 on the padded n x n matrix (mbla_lu_complete, the previous path) exactly: here on random
 * matrices, matrices of small integers (ties of the largest modulus, which dgetc2 breaks by the
 * last entry in column-major order), rank-deficient ones (repeated and zero columns, zero rows), a
 * zero matrix, weights of zero, and tolerances below and above the pivots' floor smin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "test.h"

static unsigned long long rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* the previous path: dgetc2 on the zero-padded n x n weighted matrix, perm and rank from it */
static void reference(int m, int n, const double *A, const double *w, double tol, int *perm, int *rank)
{
    double *W = calloc((size_t)n * n, sizeof *W), amax = 0;
    int *ip = malloc(sizeof *ip * (size_t)n), *jp = malloc(sizeof *jp * (size_t)n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            W[i + (size_t)j * n] = (w ? w[j] : 1.0) * A[i + (size_t)j * m];
            amax = fmax(amax, fabs(W[i + (size_t)j * n]));
        }
    CHECK_EQ_INT(mbla_lu_complete(n, W, n, ip, jp, NULL, NULL), 0);
    for (int j = 0; j < n; j++) perm[j] = j;
    for (int k = 0; k < n; k++) {
        int t = perm[k];
        perm[k] = perm[jp[k]], perm[jp[k]] = t;
    }
    int rk = 0;
    if (tol < 0) tol = n * 2.220446049250313e-16;
    if (amax > 0)
        while (rk < m && fabs(W[rk + (size_t)rk * n]) > tol * fabs(W[0])) rk++;
    for (int i = rk + 1; i < n; i++) /* the others in increasing order */
        for (int j = i; j > rk && perm[j - 1] > perm[j]; j--) {
            int t = perm[j];
            perm[j] = perm[j - 1], perm[j - 1] = t;
        }
    *rank = rk;
    free(W), free(ip), free(jp);
}

static int ncases, nfail;

static void compare(int m, int n, const double *A, const double *w, double tol, const char *what)
{
    int *p0 = malloc(sizeof *p0 * (size_t)n), *p1 = malloc(sizeof *p1 * (size_t)n), r0 = -1, r1 = -2;
    reference(m, n, A, w, tol, p0, &r0);
    mbl_status st;
    int rc = mbla_select_columns(m, n, A, m, w, tol, p1, &r1, &st);
    CHECK_EQ_INT(rc, 0);
    int same = r0 == r1 && !memcmp(p0, p1, sizeof *p0 * (size_t)n);
    if (!same) {
        fprintf(stderr, "%s (%d x %d, tol %g): rank %d against %d; perm", what, m, n, tol, r1, r0);
        for (int j = 0; j < n; j++) fprintf(stderr, " %d/%d", p1[j], p0[j]);
        fprintf(stderr, "\n");
        nfail++;
    }
    CHECK(same);
    ncases++;
    free(p0), free(p1);
}

TEST(select_matches_dgetc2)
{
    for (int trial = 0; trial < 400; trial++) {
        int n = 2 + (int)(urand() * 40), m = 1 + (int)(urand() * (n - 1)), kind = trial % 5;
        double *A = calloc((size_t)m * n, sizeof *A), *w = malloc(sizeof *w * (size_t)n);
        for (int j = 0; j < n; j++) w[j] = kind == 3 && urand() < 0.3 ? 0.0 : 0.5 + urand();
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double v = kind == 1 || kind == 3 ? (double)((int)(urand() * 5) - 2) : urand() - 0.5;
                if (kind == 2 && urand() < 0.7) v = 0; /* sparse: many zeros, zero columns */
                A[i + (size_t)j * m] = v;
            }
        if (kind == 4 && n > 2) { /* repeated columns and a zero row: rank deficient */
            for (int j = n / 2; j < n; j++) memcpy(A + (size_t)j * m, A + (size_t)(j - n / 2) * m, sizeof *A * (size_t)m);
            for (int j = 0; j < n; j++) A[(size_t)j * m] = 0.0;
        }
        const double tols[] = {-1.0, 1e-9, 1e-20, 0.0};
        for (int t = 0; t < 4; t++) {
            compare(m, n, A, kind == 3 ? w : NULL, tols[t], "random");
            compare(m, n, A, w, tols[t], "weighted");
        }
        free(A), free(w);
    }
    double Z[6] = {0};
    compare(2, 3, Z, NULL, -1.0, "zero");
    compare(2, 3, Z, NULL, 0.0, "zero, tol 0");
}

int main(void)
{
    RUN(select_matches_dgetc2);
    fprintf(stderr, "%d cases, %d differ\n", ncases, nfail);
    return test_summary("la_select");
}
