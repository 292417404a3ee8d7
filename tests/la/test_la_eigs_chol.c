/* mbla_eigs_sym_chol: ARPACK's shift-invert Lanczos on a CHOLMOD factor (issue 67). A fixed-fixed
 * chain of n unit masses and unit springs, K = tridiag(-1, 2, -1), B = diag(m): with m = 1 its
 * eigenvalues are 4 sin^2(j pi / (2 (n + 1))) in closed form; with varied masses the KLU-based
 * mbla_eigs_sym_sinv is the reference. In a build without GPL components the call reports MBL_ELIB. */
#include "la_test_util.h"

#include <math.h>

static mbla_csc *chain_k(int n)
{
    int *ti = malloc(sizeof(int) * 3 * n), *tj = malloc(sizeof(int) * 3 * n), nz = 0;
    double *tx = malloc(sizeof(double) * 3 * n);
    for (int j = 0; j < n; j++) {
        ti[nz] = j, tj[nz] = j, tx[nz++] = 2;
        if (j + 1 < n) ti[nz] = j + 1, tj[nz] = j, tx[nz++] = -1, ti[nz] = j, tj[nz] = j + 1, tx[nz++] = -1;
    }
    mbla_csc *K = NULL;
    mbla_csc_from_triplets(n, n, nz, ti, tj, tx, NULL, &K, NULL);
    free(ti), free(tj), free(tx);
    return K;
}

static mbla_csc *masses(int n, int varied)
{
    int *ti = malloc(sizeof(int) * n);
    double *tx = malloc(sizeof(double) * n);
    for (int j = 0; j < n; j++) ti[j] = j, tx[j] = varied ? 1 + 0.5 * ((j * 7) % 5) : 1;
    mbla_csc *M = NULL;
    mbla_csc_from_triplets(n, n, n, ti, ti, tx, NULL, &M, NULL);
    free(ti), free(tx);
    return M;
}

static int gpl_available(void)
{
    int p[2] = {0, 1}, i[1] = {0};
    double x[1] = {1};
    mbla_csc A = {1, 1, p, i, x};
    mbla_chol *c = NULL;
    int r = mbla_chol_new(&A, 'L', &c, NULL);
    mbla_chol_free(c);
    return r == 0;
}

TEST(closed_form)
{
    const int n = 300, k = 6;
    mbla_csc *K = chain_k(n), *M = masses(n, 0);
    double w[6], V[300 * 6];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_chol(K, M, 0.0, NULL, k, NULL, w, V, n, NULL, &st), 0);
    for (int j = 0; j < k; j++) {
        double s = sin((j + 1) * 3.14159265358979323846 / (2.0 * (n + 1)));
        CHECK_REL(w[j], 4 * s * s, 1e-10);
    }
    double err = 0;
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            double d = 0;
            for (int i = 0; i < n; i++) d += V[i + n * a] * V[i + n * b];
            err = fmax(err, fabs(d - (a == b)));
        }
    CHECK_MSG(err < 1e-10, "V^T B V - I: %g", err);
    mbla_csc_free(K), mbla_csc_free(M);
}

TEST(factor_given)
{
    const int n = 200, k = 5;
    const double sigma = -1e-3;
    mbla_csc *K = chain_k(n), *M = masses(n, 1), *C = NULL;
    double w[5], w0[5];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, M, sigma, k, NULL, w0, NULL, 0, NULL, &st), 0);
    CHECK_EQ_INT(mbla_csc_add(1.0, K, -sigma, M, &C, NULL), 0);
    mbla_chol *F = NULL;
    CHECK_EQ_INT(mbla_chol_new(C, 'L', &F, &st), 0);
    CHECK_EQ_INT(mbla_eigs_sym_chol(NULL, M, sigma, F, k, NULL, w, NULL, 0, NULL, &st), 0); /* K not read */
    for (int j = 0; j < k; j++) CHECK_REL(w[j], w0[j], 1e-11);
    /* the factor is kept: a second call with it */
    CHECK_EQ_INT(mbla_eigs_sym_chol(NULL, M, sigma, F, 2, NULL, w, NULL, 0, NULL, &st), 0);
    CHECK_REL(w[1], w0[1], 1e-11);
    mbla_chol_free(F);
    mbla_csc_free(K), mbla_csc_free(M), mbla_csc_free(C);
}

TEST(errors)
{
    const int n = 50;
    mbla_csc *K = chain_k(n), *M = masses(n, 0);
    double w[50];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_chol(K, M, 0.01, NULL, 3, NULL, w, NULL, 0, NULL, &st), MBL_ESINGULAR);
    CHECK(strstr(st.msg, "not positive definite") != NULL);
    CHECK_EQ_INT(mbla_eigs_sym_chol(K, M, 0.0, NULL, n, NULL, w, NULL, 0, NULL, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_eigs_sym_chol(NULL, M, 0.0, NULL, 3, NULL, w, NULL, 0, NULL, &st), MBL_EARG);
    ALLOC_FAIL_LOOP(mbla_eigs_sym_chol(K, M, 0.0, NULL, 3, NULL, w, NULL, 0, NULL, NULL), (void)0);
    mbla_csc_free(K), mbla_csc_free(M);
}
TEST(without_gpl)
{
    mbla_csc *K = chain_k(10), *M = masses(10, 0);
    double w[3];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_chol(K, M, 0.0, NULL, 3, NULL, w, NULL, 0, NULL, &st), MBL_ELIB);
    mbla_csc_free(K), mbla_csc_free(M);
}

int main(void)
{
    if (!gpl_available()) {
        RUN(without_gpl);
        return test_summary("la_eigs_chol (MBLIN_WITH_GPL=OFF)");
    }
    RUN(closed_form);
    RUN(factor_given);
    RUN(errors);
    return test_summary("la_eigs_chol");
}
