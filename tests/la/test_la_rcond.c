/* mbla_inv_rcond (inverse and exact reciprocal 1-norm condition) and mbla_lu_rcond (dgecon's
 * estimate and a solve), against closed forms:
 *   - M = [[1, x], [x, 1]]: rcond = (1 - |x|) / (1 + |x|), M^-1 = [[1, -x], [-x, 1]] / (1 - x^2);
 *   - T = tridiag(-1, 2, -1) of order n: (T^-1)_ij = min(i, j) (n + 1 - max(i, j)) / (n + 1)
 *     (1-based), ||T||_1 = 4 (n >= 3), ||T^-1||_1 = the largest column sum, at the middle column;
 *   - an exactly singular matrix (a zero pivot) and a zero matrix give rcond 0 without an error;
 *   - n = 0 gives 1; bad arguments are refused (a NULL matrix even at n = 0, as everywhere in la). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "test.h"

static double tinv(int n, int i, int j) /* 0-based */
{
    int a = (i < j ? i : j) + 1, b = (i > j ? i : j) + 1;
    return (double)a * (double)(n + 1 - b) / (double)(n + 1);
}

TEST(two_by_two)
{
    double xs[] = {0, 0.3, -0.7, 0.999, 0.5};
    for (size_t k = 0; k < sizeof xs / sizeof *xs; k++) {
        double x = xs[k], A[4] = {1, x, x, 1}, X[4], r1 = -1, r2 = -1;
        mbl_status st;
        CHECK_EQ_INT(mbla_inv_rcond(2, A, 2, X, 2, &r1, &st), 0);
        double want = (1 - fabs(x)) / (1 + fabs(x));
        CHECK_CLOSE(r1, want, 1e-12);
        double d = 1 - x * x;
        CHECK_CLOSE(X[0], 1 / d, 1e-12);
        CHECK(fabs(X[1] + x / d) <= 1e-12 * fabs(1 / d));
        double B[4] = {1, 0, 0, 1}, A2[4] = {1, x, x, 1};
        CHECK_EQ_INT(mbla_lu_rcond(2, A2, 2, 2, B, 2, &r2, &st), 0);
        CHECK_CLOSE(r2, want, 1e-12); /* dgecon is exact at order 2 */
        CHECK_CLOSE(B[3], 1 / d, 1e-12);
    }
}

TEST(laplacian)
{
    int ns[] = {3, 10, 40, 61};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        int n = ns[k];
        double *A = calloc((size_t)n * n, sizeof *A), *A2 = calloc((size_t)n * n, sizeof *A2);
        double *X = malloc(sizeof *X * (size_t)n * n), *B = calloc((size_t)n * 2, sizeof *B);
        for (int i = 0; i < n; i++) {
            A[i + (size_t)i * n] = 2;
            if (i) A[i + (size_t)(i - 1) * n] = A[i - 1 + (size_t)i * n] = -1;
        }
        memcpy(A2, A, sizeof *A * (size_t)n * n);
        double xnorm = 0;
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += tinv(n, i, j);
            xnorm = fmax(xnorm, s);
        }
        double want = 1 / (4 * xnorm), r1 = -1, r2 = -1;
        mbl_status st;
        CHECK_EQ_INT(mbla_inv_rcond(n, A, n, X, n, &r1, &st), 0);
        CHECK_CLOSE(r1, want, 1e-10);
        double err = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) err = fmax(err, fabs(X[i + (size_t)j * n] - tinv(n, i, j)));
        CHECK_MSG(err <= 1e-12 * n, "n = %d: max error of the inverse %g", n, err);
        /* the estimate: within a factor 3 of the true value, never above it by more than rounding */
        B[0] = 1, B[n + n - 1] = 1; /* e_1, e_n */
        CHECK_EQ_INT(mbla_lu_rcond(n, A2, n, 2, B, n, &r2, &st), 0);
        CHECK_MSG(r2 >= want * (1 - 1e-12) && r2 <= 3 * want, "n = %d: estimate %g, exact %g", n, r2, want);
        err = 0;
        for (int i = 0; i < n; i++)
            err = fmax(err, fmax(fabs(B[i] - tinv(n, i, 0)), fabs(B[n + i] - tinv(n, i, n - 1))));
        CHECK_MSG(err <= 1e-12 * n, "n = %d: max error of the solve %g", n, err);
        free(A), free(A2), free(X), free(B);
    }
}

TEST(singular_and_edges)
{
    mbl_status st;
    double A[9] = {1, 2, 3, 2, 4, 6, 0, 1, 5}, X[9], r = -1; /* second column = 2 x first */
    CHECK_EQ_INT(mbla_inv_rcond(3, A, 3, X, 3, &r, &st), 0);
    CHECK(r == 0);
    double Z[4] = {0, 0, 0, 0}, B[2] = {1, 2};
    r = -1;
    CHECK_EQ_INT(mbla_lu_rcond(2, Z, 2, 1, B, 2, &r, &st), 0);
    CHECK(r == 0 && B[0] == 1 && B[1] == 2); /* B untouched */
    double S[4] = {1, 1, 1, 1};
    r = -1;
    CHECK_EQ_INT(mbla_lu_rcond(2, S, 2, 1, B, 2, &r, &st), 0);
    CHECK(r == 0 && B[0] == 1 && B[1] == 2);
    r = -1;
    double e[1] = {0};
    CHECK_EQ_INT(mbla_inv_rcond(0, e, 1, e, 1, &r, &st), 0);
    CHECK(r == 1);
    r = -1;
    CHECK_EQ_INT(mbla_lu_rcond(0, e, 1, 0, NULL, 1, &r, &st), 0);
    CHECK(r == 1);
    double I[4] = {1, 0, 0, 1};
    CHECK(mbla_inv_rcond(2, I, 1, X, 2, &r, &st) == MBL_EDIM);
    CHECK(mbla_inv_rcond(2, I, 2, X, 2, NULL, &st) == MBL_EARG);
    CHECK(mbla_lu_rcond(2, I, 2, -1, B, 2, &r, &st) == MBL_EDIM);
}

int main(void)
{
    RUN(two_by_two);
    RUN(laplacian);
    RUN(singular_and_edges);
    return test_summary("la_rcond");
}
