/* la_spqr (src/la/la_spqr.h), the SPQR factorization the operating point shares between its
 * initial multipliers (least squares on Phi_q^T at the guess) and its constraint rank test
 * (Phi_q, rows scaled to unit norm, at the point): against the separate paths it replaces,
 * mbla_spqr_solve (SPQR's backslash) and mbla_spqr_rank of the wide Phi_q, on a constraint
 * Jacobian with redundant rows and on one without. */
#include "la/la_spqr.h"
#include "la_test_util.h"

#include <math.h>
#include <stdlib.h>

enum { M = 40, N = 60 };

/* A constraint-like M x N Jacobian (a diagonal, three more entries per row); redundant: its last
 * `dep` rows combinations of earlier ones (rank M - dep). Column-major dense D. */
static void jacobian(double *D, int dep, unsigned seed)
{
    unsigned s = seed;
    for (int k = 0; k < M * N; k++) D[k] = 0;
    for (int i = 0; i < M - dep; i++) {
        D[i + i * M] = 2.0 + trand(&s);
        for (int t = 0; t < 3; t++) {
            int j = (int)((trand(&s) + 1.0) * 0.5 * N) % N;
            D[i + j * M] += trand(&s);
        }
    }
    for (int i = M - dep; i < M; i++) {
        int a = (i - (M - dep)) * 3, b = a + 1;
        for (int j = 0; j < N; j++) D[i + j * M] = D[a + j * M] - 0.5 * D[b + j * M];
    }
}

/* Rows to unit 2-norm (the rank test's scaling), as the wide m x n CSC and its transpose. */
static void scaled(const double *D, mbla_csc **A, mbla_csc **T)
{
    double S[M * N];
    for (int i = 0; i < M; i++) {
        double r = 0;
        for (int j = 0; j < N; j++) r = hypot(r, D[i + j * M]);
        for (int j = 0; j < N; j++) S[i + j * M] = r > 0 ? D[i + j * M] / r : 0;
    }
    *A = NULL, *T = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(M, N, S, M, MBLA_DEFAULT, A, NULL), 0);
    CHECK_EQ_INT(mbla_csc_transpose(*A, T, NULL), 0);
}

static double norm2(int n, const double *x)
{
    double s = 0;
    for (int i = 0; i < n; i++) s = hypot(s, x[i]);
    return s;
}

/* r = b - T x (N entries), g = T^T r (M entries): the least-squares optimality residual. */
static void ls_residual(const mbla_csc *T, const double *b, const double *x, double *r, double *g)
{
    for (int i = 0; i < N; i++) r[i] = b[i];
    CHECK_EQ_INT(mbla_csc_gemv(T, -1.0, x, 1.0, r, NULL), 0);
    CHECK_EQ_INT(mbla_csc_gemv_t(T, 1.0, r, 0.0, g, NULL), 0);
}

/* The rank of the scaled transpose from la_spqr (fresh, and refactored from the unscaled
 * transpose's analysis) equals mbla_spqr_rank's of the scaled wide matrix and the known rank; the
 * least squares on the unscaled transpose equals SPQR's backslash (full rank), or is a
 * least-squares solution as good as backslash's with as many zero entries (redundant). */
TEST(shared_qr_matches_separate_paths)
{
    for (int dep = 0; dep <= 10; dep += 10) {
        double D[M * N], b[N], x[M], xo[M], r[N], ro[N], g[M];
        jacobian(D, dep, 17);
        mbla_csc *A = NULL, *T = NULL, *Tu = NULL, *Au = NULL;
        scaled(D, &A, &T);
        CHECK_EQ_INT(mbla_csc_from_dense(M, N, D, M, MBLA_DEFAULT, &Au, NULL), 0);
        CHECK_EQ_INT(mbla_csc_transpose(Au, &Tu, NULL), 0);
        unsigned s = 5;
        for (int i = 0; i < N; i++) b[i] = trand(&s);
        int rank_old = -1;
        mbl_status st;
        CHECK_EQ_INT(mbla_spqr_rank(A, MBLA_DEFAULT, &rank_old, NULL, &st), 0);
        CHECK_EQ_INT(rank_old, M - dep);
        /* the multipliers: least squares on the unscaled transpose */
        la_spqr *qr = NULL;
        CHECK_EQ_INT(la_spqr_new(Tu, &qr, &st), 0);
        CHECK_EQ_INT(la_spqr_rank_of(qr), M - dep);
        CHECK_EQ_INT(la_spqr_lstsq(qr, Tu, b, x, &st), 0);
        CHECK_EQ_INT(mbla_spqr_solve(Tu, MBLA_DEFAULT, 1, b, N, xo, M, &st), 0);
        ls_residual(Tu, b, x, r, g);
        CHECK(norm2(M, g) <= 1e-12 * norm2(N, b));
        ls_residual(Tu, b, xo, ro, g);
        CHECK_CLOSE(norm2(N, r), norm2(N, ro), 1e-12);
        int zeros = 0;
        for (int j = 0; j < M; j++) zeros += x[j] == 0.0;
        if (dep == 0) {
            for (int j = 0; j < M; j++) CHECK_CLOSE(x[j], xo[j], 1e-12 * (1 + fabs(xo[j])));
            CHECK_EQ_INT(zeros, 0);
        } else {
            CHECK_EQ_INT(zeros, dep); /* the basic solution: the dead columns' entries 0 */
        }
        /* the rank test: the scaled transpose refactored from that analysis, and afresh */
        CHECK(la_spqr_same_pattern(qr, T));
        CHECK_EQ_INT(la_spqr_refactor(qr, T, &st), 0);
        CHECK_EQ_INT(la_spqr_rank_of(qr), rank_old);
        la_spqr *fresh = NULL;
        CHECK_EQ_INT(la_spqr_new(T, &fresh, &st), 0);
        CHECK_EQ_INT(la_spqr_rank_of(fresh), rank_old);
        la_spqr_free(fresh);
        /* another pattern is refused */
        CHECK(!la_spqr_same_pattern(qr, A));
        CHECK_EQ_INT(la_spqr_refactor(qr, A, &st), MBL_EDIM);
        la_spqr_free(qr);
        mbla_csc_free(A), mbla_csc_free(T), mbla_csc_free(Au), mbla_csc_free(Tu);
    }
}

/* One pattern at two values: full rank at the first (the guess), a row the double of another at
 * the second (the point reached a configuration where two constraints coincide): the refactored
 * rank follows the values, as mbla_spqr_rank says. */
/* An ill-conditioned least squares (two constraints 1e-6 from coinciding: condition about 1e6,
 * full rank at SPQR's tolerance) with a known solution (b = A x, no residual): the semi-normal
 * equations alone lose about cond^2 eps; with their correction the solution is found
 * to about cond eps, as well as backslash finds it. */
TEST(lstsq_corrected_when_ill_conditioned)
{
    double D[M * N], b[N], x[M], xo[M], xt[M];
    jacobian(D, 0, 23);
    unsigned r = 3;
    for (int j = 0; j < N; j++) D[M - 1 + j * M] = D[M - 2 + j * M] * (1.0 + 1e-6 * trand(&r));
    mbla_csc *Au = NULL, *Tu = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(M, N, D, M, MBLA_DEFAULT, &Au, NULL), 0);
    CHECK_EQ_INT(mbla_csc_transpose(Au, &Tu, NULL), 0);
    for (int j = 0; j < M; j++) xt[j] = 1.0 + 0.5 * trand(&r);
    CHECK_EQ_INT(mbla_csc_gemv(Tu, 1.0, xt, 0.0, b, NULL), 0);
    la_spqr *qr = NULL;
    mbl_status st;
    CHECK_EQ_INT(la_spqr_new(Tu, &qr, &st), 0);
    CHECK_EQ_INT(la_spqr_rank_of(qr), M);
    CHECK_EQ_INT(la_spqr_lstsq(qr, Tu, b, x, &st), 0);
    CHECK_EQ_INT(mbla_spqr_solve(Tu, MBLA_DEFAULT, 1, b, N, xo, M, &st), 0);
    double worst = 0, worst_o = 0;
    for (int j = 0; j < M; j++)
        worst = fmax(worst, fabs(x[j] - xt[j]) / fabs(xt[j])), worst_o = fmax(worst_o, fabs(xo[j] - xt[j]) / fabs(xt[j]));
    CHECK(worst_o <= 1e-7); /* 3e-9 */
    CHECK(worst <= 1e-9);   /* 5e-11; above 1e-8 without the correction */
    la_spqr_free(qr);
    mbla_csc_free(Au), mbla_csc_free(Tu);
}

TEST(refactored_rank_follows_values)
{
    double D[M * N];
    jacobian(D, 0, 29);
    for (int j = 0; j < N; j++) /* row M - 1 on row M - 2's pattern (and its own) */
        if (D[M - 2 + j * M] != 0 && D[M - 1 + j * M] == 0) D[M - 1 + j * M] = 0.25;
    mbla_csc *A = NULL, *T = NULL;
    scaled(D, &A, &T);
    la_spqr *qr = NULL;
    mbl_status st;
    CHECK_EQ_INT(la_spqr_new(T, &qr, &st), 0);
    CHECK_EQ_INT(la_spqr_rank_of(qr), M);
    /* the same pattern, row M - 1 = 2 row M - 2 where row M - 2 has entries, 0 elsewhere */
    for (int j = 0; j < N; j++) D[M - 1 + j * M] = 2.0 * D[M - 2 + j * M];
    for (int k = 0; k < mbla_csc_nnz(T); k++) T->x[k] = 0;
    double S[M * N];
    for (int i = 0; i < M; i++) {
        double rn = 0;
        for (int j = 0; j < N; j++) rn = hypot(rn, D[i + j * M]);
        for (int j = 0; j < N; j++) S[i + j * M] = D[i + j * M] / rn;
    }
    for (int j = 0; j < M; j++) /* T is N x M: column j = row j of S */
        for (int p = T->p[j]; p < T->p[j + 1]; p++) T->x[p] = S[j + T->i[p] * M];
    mbla_csc *A2 = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(M, N, S, M, MBLA_DEFAULT, &A2, NULL), 0);
    int rank_old = -1;
    CHECK_EQ_INT(mbla_spqr_rank(A2, MBLA_DEFAULT, &rank_old, NULL, &st), 0);
    CHECK_EQ_INT(rank_old, M - 1);
    CHECK_EQ_INT(la_spqr_refactor(qr, T, &st), 0);
    CHECK_EQ_INT(la_spqr_rank_of(qr), rank_old);
    la_spqr_free(qr);
    mbla_csc_free(A), mbla_csc_free(T), mbla_csc_free(A2);
}

TEST(shared_qr_allocation_failures)
{
    double D[M * N], b[N], x[M];
    jacobian(D, 10, 17);
    mbla_csc *A = NULL, *T = NULL;
    scaled(D, &A, &T);
    for (int i = 0; i < N; i++) b[i] = 1.0 / (i + 1);
    la_spqr *qr = NULL;
    ALLOC_FAIL_LOOP(la_spqr_new(T, &qr, NULL), (la_spqr_free(qr), qr = NULL));
    CHECK_EQ_INT(la_spqr_new(T, &qr, NULL), 0);
    ALLOC_FAIL_LOOP(la_spqr_lstsq(qr, T, b, x, NULL), (void)0);
    la_spqr_free(qr);
    mbla_csc_free(A), mbla_csc_free(T);
}

/* Without MBLIN_WITH_GPL: MBL_ELIB from every function, nothing made. */
TEST(gpl_off)
{
    double D[M * N], b[N] = {0}, x[M];
    jacobian(D, 0, 17);
    mbla_csc *A = NULL, *T = NULL;
    scaled(D, &A, &T);
    la_spqr *qr = NULL;
    CHECK_EQ_INT(la_spqr_new(T, &qr, NULL), MBL_ELIB);
    CHECK(qr == NULL);
    CHECK_EQ_INT(la_spqr_refactor(qr, T, NULL), MBL_ELIB);
    CHECK_EQ_INT(la_spqr_lstsq(qr, T, b, x, NULL), MBL_ELIB);
    CHECK(!la_spqr_same_pattern(qr, T));
    mbla_csc_free(A), mbla_csc_free(T);
}

int main(void)
{
    int p[2] = {0, 1}, i[1] = {0};
    double one[1] = {1};
    mbla_csc unit = {1, 1, p, i, one};
    la_spqr *probe = NULL;
    int gpl = la_spqr_new(&unit, &probe, NULL) == 0;
    la_spqr_free(probe);
    if (!gpl) {
        RUN(gpl_off);
        return test_summary("la_spqr_keep (MBLIN_WITH_GPL=OFF)");
    }
    RUN(shared_qr_matches_separate_paths);
    RUN(lstsq_corrected_when_ill_conditioned);
    RUN(refactored_rank_follows_values);
    RUN(shared_qr_allocation_failures);
    return test_summary("la_spqr_keep");
}
