/* mbla_cod_new / mbla_cod_solve (src/la/dense_cod.c): dgelsy's minimum-norm least squares in two
 * steps. The reference is LAPACK's own driver, LAPACKE_dgelsy_work, called here: the same numbers bit
 * for bit (the same calls in the same order) on square, tall and wide matrices of full and deficient
 * rank, matrices and right-hand sides scaled beyond dgelsy's safe range (its scalings), a zero
 * matrix, several right-hand sides at once and one after the other from one factorization, and
 * through mbla_lstsq_qr (the two steps at once); and a closed form. */
#include "la_test_util.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>

/* LAPACK's dgelsy on A (m x n, overwritten) and B (ld x nrhs); its rank, or -1 when it fails */
static int dgelsy_ref(int m, int n, int nrhs, double *A, double *B, int ld, double rcond)
{
    lapack_int *jpvt = calloc((size_t)n + 1, sizeof *jpvt), rk = 0;
    double wq = 0;
    if (rcond < 0) rcond = DBL_EPSILON; /* (mbla_lstsq_qr's default) */
    int info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, nrhs, A, m, B, ld, jpvt, rcond, &rk, &wq, -1);
    int lwork = (int)wq;
    double *work = malloc((size_t)(lwork > 1 ? lwork : 1) * sizeof *work);
    if (!info) info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, nrhs, A, m, B, ld, jpvt, rcond, &rk, work, lwork);
    free(jpvt), free(work);
    return info ? -1 : rk;
}

/* A (m x n) of rank r (r <= min(m, n); r = min: generic) times scale, from the seed */
static void make(int m, int n, int r, double scale, unsigned seed, double *A)
{
    double L[64 * 64], R[64 * 64];
    for (int i = 0; i < m * r; i++) L[i] = trand(&seed);
    for (int i = 0; i < r * n; i++) R[i] = trand(&seed);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < r; k++) s += L[i + k * m] * R[k + j * r];
            A[i + (size_t)j * m] = scale * s;
        }
}

/* mbla_cod (and mbla_lstsq_qr) against dgelsy on A (m x n) and B (m x nrhs, scaled by bscale);
 * 1 when every entry and the rank agree bit for bit */
static int same_as_dgelsy(int m, int n, int r, double scale, double bscale, int nrhs, unsigned seed, double rcond)
{
    enum { MX = 40 };
    double A[MX * MX], A2[MX * MX], A3[MX * MX], B[MX * 4], B2[MX * 4], B3[MX * 4];
    int ld = m > n ? m : n;
    make(m, n, r, scale, seed, A);
    memcpy(A2, A, sizeof(double) * (size_t)(m * n));
    memcpy(A3, A, sizeof(double) * (size_t)(m * n));
    unsigned s = seed * 7u + 1u;
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < ld; i++) B[i + c * ld] = i < m ? bscale * trand(&s) : 0.0;
    memcpy(B2, B, sizeof(double) * (size_t)(ld * nrhs));
    memcpy(B3, B, sizeof(double) * (size_t)(ld * nrhs));
    mbl_status st;
    int rank = dgelsy_ref(m, n, nrhs, A2, B2, ld, rcond), rank3 = -1, ok = rank >= 0;
    if (!ok || mbla_lstsq_qr(m, n, nrhs, A3, m, B3, ld, rcond, &rank3, &st) || rank3 != rank) return 0;
    mbla_cod *f = NULL;
    if (mbla_cod_new(m, n, A, m, rcond, &f, &st)) return 0;
    if (mbla_cod_rank(f) != rank) ok = 0;
    if (mbla_cod_solve(f, nrhs, B, ld, &st)) ok = 0;
    for (int i = 0; ok && i < n * nrhs; i++) {
        int c = i / n, k = i % n;
        if (memcmp(&B[k + c * ld], &B2[k + c * ld], sizeof(double)) || memcmp(&B3[k + c * ld], &B2[k + c * ld], sizeof(double))) {
            printf("  %d x %d rank %d scale %g: x[%d,%d] %.17g against dgelsy's %.17g\n", m, n, r, scale, k, c,
                   B[k + c * ld], B2[k + c * ld]);
            ok = 0;
        }
    }
    mbla_cod_free(f);
    return ok;
}

TEST(cod_against_dgelsy)
{
    static const int shapes[][3] = {{28, 28, 28}, {28, 28, 25}, {30, 20, 20}, {30, 20, 12}, {12, 30, 12},
                                    {12, 30, 7},   {1, 1, 1},   {5, 1, 1},    {1, 5, 1},    {40, 40, 39}};
    int nfail = 0, ncase = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (int nrhs = 1; nrhs <= 3; nrhs += 2)
            for (unsigned seed = 1; seed <= 3; seed++) {
                ncase++;
                nfail += !same_as_dgelsy(shapes[k][0], shapes[k][1], shapes[k][2], 1.0, 1.0, nrhs, seed, 1e-9);
            }
    /* beyond dgelsy's safe range: A tiny and huge, B tiny and huge; the default rcond */
    const double scales[][2] = {{1e-300, 1.0}, {1e300, 1.0}, {1.0, 1e-300}, {1.0, 1e300}, {1e-300, 1e300}};
    for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
        ncase += 2;
        nfail += !same_as_dgelsy(20, 15, 15, scales[k][0], scales[k][1], 2, 11, -1.0);
        nfail += !same_as_dgelsy(15, 20, 9, scales[k][0], scales[k][1], 1, 12, 1e-9);
    }
    printf("  %d cases, %d differ from dgelsy\n", ncase, nfail);
    CHECK_EQ_INT(nfail, 0);
}

/* one factorization, right-hand sides one after the other: each dgelsy's numbers */
TEST(cod_solves_in_turn)
{
    enum { m = 27, n = 28 };
    double A[m * n], A2[m * n], b[n], b2[n];
    make(m, n, 24, 1.0, 5, A);
    mbl_status st;
    mbla_cod *f = NULL;
    CHECK_EQ_INT(mbla_cod_new(m, n, A, m, 1e-10, &f, &st), 0);
    CHECK_EQ_INT(mbla_cod_rank(f), 24);
    unsigned s = 99;
    for (int turn = 0; turn < 3; turn++) {
        for (int i = 0; i < n; i++) b[i] = i < m ? trand(&s) : 0.0;
        memcpy(b2, b, sizeof b);
        memcpy(A2, A, sizeof A);
        CHECK_EQ_INT(dgelsy_ref(m, n, 1, A2, b2, n, 1e-10), 24);
        CHECK_EQ_INT(mbla_cod_solve(f, 1, b, n, &st), 0);
        CHECK(!memcmp(b, b2, sizeof b));
    }
    mbla_cod_free(f);
}

/* closed forms: [3 4] x = 5 has the minimum-norm solution (0.6, 0.8); a zero matrix gives 0 (rank 0);
 * errors */
TEST(cod_closed_forms_and_errors)
{
    mbl_status st;
    double E[2] = {3, 4}, e[2] = {5, 7};
    mbla_cod *f = NULL;
    CHECK_EQ_INT(mbla_cod_new(1, 2, E, 1, -1.0, &f, &st), 0);
    CHECK_EQ_INT(mbla_cod_rank(f), 1);
    CHECK_EQ_INT(mbla_cod_solve(f, 1, e, 2, &st), 0);
    CHECK_CLOSE(e[0], 0.6, 1e-15);
    CHECK_CLOSE(e[1], 0.8, 1e-15);
    CHECK_EQ_INT(mbla_cod_solve(f, 1, e, 1, &st), MBL_EDIM); /* ldb < max(m, n) */
    double nan_b[2] = {NAN, 0};
    CHECK_EQ_INT(mbla_cod_solve(f, 1, nan_b, 2, &st), MBL_EARG);
    mbla_cod_free(f);
    double Z[6] = {0}, z[3] = {1, 2, 3};
    CHECK_EQ_INT(mbla_cod_new(3, 2, Z, 3, 1e-9, &f, &st), 0);
    CHECK_EQ_INT(mbla_cod_rank(f), 0);
    CHECK_EQ_INT(mbla_cod_solve(f, 1, z, 3, &st), 0);
    CHECK(z[0] == 0 && z[1] == 0 && z[2] == 0);
    mbla_cod_free(f);
    CHECK_EQ_INT(mbla_cod_rank(NULL), 0);
    double bad[2] = {INFINITY, 1};
    f = (mbla_cod *)&st; /* set to NULL on failure */
    CHECK_EQ_INT(mbla_cod_new(1, 2, bad, 1, 1e-9, &f, &st), MBL_EARG);
    CHECK(f == NULL);
    CHECK_EQ_INT(mbla_cod_new(1, 2, E, 1, 1e-9, NULL, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_cod_solve(NULL, 1, e, 2, &st), MBL_EARG);
    mbla_cod_free(NULL);
}

TEST(cod_allocation_failures)
{
    double A[12], b[4];
    make(4, 3, 3, 1.0, 3, A);
    mbla_cod *f = NULL;
    mbl_status st;
    ALLOC_FAIL_LOOP(mbla_cod_new(4, 3, A, 4, 1e-9, &f, &st), if (f) { mbla_cod_free(f); f = NULL; });
    CHECK_EQ_INT(mbla_cod_new(4, 3, A, 4, 1e-9, &f, &st), 0);
    unsigned s = 4;
    for (int i = 0; i < 4; i++) b[i] = trand(&s);
    ALLOC_FAIL_LOOP(mbla_cod_solve(f, 1, b, 4, &st), (void)0);
    mbla_cod_free(f);
}

int main(void)
{
    RUN(cod_against_dgelsy);
    RUN(cod_solves_in_turn);
    RUN(cod_closed_forms_and_errors);
    RUN(cod_allocation_failures);
    return test_summary("la_cod");
}
