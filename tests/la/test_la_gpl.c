/* Tests of the CHOLMOD and SPQR wrappers. In a build with MBLIN_WITH_GPL=OFF they only check
 * that every such function reports MBL_ELIB with the documented message. */
#include "la_test_util.h"

static int gpl_available(void)
{
    int p[2] = {0, 1}, i[1] = {0}, rank = -1;
    double x[1] = {1};
    mbla_csc A = {1, 1, p, i, x};
    return mbla_spqr_rank(&A, MBLA_DEFAULT, &rank, NULL, NULL) == 0;
}

TEST(gpl_off_messages)
{
    int p[2] = {0, 1}, i[1] = {0}, rank, nn;
    double x[1] = {1}, b[1] = {1}, *N = NULL;
    mbla_csc A = {1, 1, p, i, x};
    mbla_chol *c = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_chol_new(&A, 'U', &c, &st), MBL_ELIB);
    CHECK(strstr(st.msg, "built without GPL components (MBLIN_WITH_GPL=OFF)") != NULL);
    CHECK(c == NULL);
    CHECK_EQ_INT(mbla_chol_solve(c, 1, b, 1, &st), MBL_ELIB);
    CHECK_EQ_INT(mbla_chol_refactor(c, &A, &st), MBL_ELIB);
    CHECK_EQ_INT(mbla_spqr_rank(&A, MBLA_DEFAULT, &rank, NULL, &st), MBL_ELIB);
    CHECK_EQ_INT(mbla_spqr_nullspace(&A, MBLA_DEFAULT, &N, &nn, &rank, &st), MBL_ELIB);
    CHECK_EQ_INT(mbla_spqr_solve(&A, MBLA_DEFAULT, 1, b, 1, b, 1, &st), MBL_ELIB);
    mbla_chol_free(c);
}

/* K = tridiag(-1, 2, -1) (SPD), solve against a known solution, upper and lower triangle */
TEST(cholmod_solve)
{
    int n = 500;
    int *ti = malloc(sizeof(int) * 3 * n), *tj = malloc(sizeof(int) * 3 * n);
    double *tx = malloc(sizeof(double) * 3 * n);
    for (char uplo = 'L'; uplo <= 'U'; uplo = (char)(uplo + ('U' - 'L'))) {
        int q = 0;
        for (int j = 0; j < n; j++) {
            ti[q] = j, tj[q] = j, tx[q++] = 2.0;
            if (uplo == 'U' && j > 0) ti[q] = j - 1, tj[q] = j, tx[q++] = -1.0;
            if (uplo == 'L' && j + 1 < n) ti[q] = j + 1, tj[q] = j, tx[q++] = -1.0;
        }
        mbla_csc *K = NULL;
        CHECK_EQ_INT(mbla_csc_from_triplets(n, n, q, ti, tj, tx, NULL, &K, NULL), 0);
        mbla_chol *c = NULL;
        mbl_status st;
        CHECK_EQ_INT(mbla_chol_new(K, uplo, &c, &st), 0);
        /* x_i = i + 1: b = K x = (0, ..., 0, n + 1) */
        double *b = calloc((size_t)n * 2, sizeof(double));
        b[n - 1] = n + 1;
        b[n] = 1.0; /* second rhs: e_0 -> x_i = (n - i)/(n + 1) */
        CHECK_EQ_INT(mbla_chol_solve(c, 2, b, n, &st), 0);
        for (int i = 0; i < n; i++) {
            CHECK_CLOSE(b[i], i + 1.0, 1e-10);
            CHECK_CLOSE(b[n + i], (double)(n - i) / (n + 1), 1e-12);
        }
        /* refactor at 2 K: solution halves */
        for (int k = 0; k < mbla_csc_nnz(K); k++) K->x[k] *= 2;
        CHECK_EQ_INT(mbla_chol_refactor(c, K, &st), 0);
        for (int i = 0; i < n; i++) b[i] = (i == n - 1) * (n + 1.0);
        CHECK_EQ_INT(mbla_chol_solve(c, 1, b, n, &st), 0);
        CHECK_CLOSE(b[0], 0.5, 1e-12);
        free(b);
        mbla_chol_free(c);
        mbla_csc_free(K);
    }
    free(ti);
    free(tj);
    free(tx);
}

TEST(cholmod_not_positive_definite)
{
    /* [[1, 2], [2, 1]] has eigenvalues 3 and -1: fails in column 1 */
    double D[4] = {1, 2, 2, 1};
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(2, 2, D, 2, MBLA_DEFAULT, &A, NULL), 0);
    mbla_chol *c = (mbla_chol *)&D;
    mbl_status st;
    CHECK_EQ_INT(mbla_chol_new(A, 'U', &c, &st), MBL_ESINGULAR);
    CHECK(c == NULL);
    CHECK_MSG(strstr(st.msg, "matrix not positive definite (column 1)") != NULL, "%s", st.msg);
    CHECK_EQ_INT(mbla_chol_new(A, 'X', &c, &st), MBL_EARG);
    mbla_csc_free(A);
}

/* rank 5 product of random 8 x 5 and 5 x 12 factors, the same as the dense QRCP/SVD test */
TEST(spqr_rank_dense_product)
{
    enum { m = 8, n = 12, r = 5 };
    double X[m * r], Y[r * n], A[m * n], Ac[m * n], sv[m];
    unsigned s = 7;
    for (int i = 0; i < m * r; i++) X[i] = trand(&s);
    for (int i = 0; i < r * n; i++) Y[i] = trand(&s);
    mbla_gemm('N', 'N', m, n, r, 1.0, X, m, Y, r, 0.0, A, m, NULL);
    mbla_csc *S = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(m, n, A, m, MBLA_DEFAULT, &S, NULL), 0);
    int rank = -1, rq = -1, jpvt[n];
    double tol = -1;
    mbl_status st;
    CHECK_EQ_INT(mbla_spqr_rank(S, MBLA_DEFAULT, &rank, &tol, &st), 0);
    CHECK_EQ_INT(rank, r);
    CHECK(tol > 0 && tol < 1e-10);
    /* three independent routes agree: SPQR, QRCP, SVD */
    memcpy(Ac, A, sizeof A);
    CHECK_EQ_INT(mbla_qrcp(m, n, Ac, m, MBLA_DEFAULT, jpvt, &rq, NULL, 1, 0, NULL, 1, &st), 0);
    CHECK_EQ_INT(rq, r);
    memcpy(Ac, A, sizeof A);
    CHECK_EQ_INT(mbla_svd(m, n, Ac, m, 'S', sv, NULL, 1, NULL, 1, &st), 0);
    CHECK_EQ_INT(mbla_rank_from_diag(m, n, m, sv, 1, MBLA_DEFAULT), r);
    mbla_csc_free(S);
}

/* A sparse "constraint Jacobian" 40 x 60 whose rows 30..39 repeat combinations of rows
 * 0..29 (redundant constraints): rank 30, null space of dimension 30. */
static mbla_csc *redundant_jacobian(double **dense)
{
    int m = 40, n = 60;
    double *D = calloc((size_t)m * n, sizeof(double));
    unsigned s = 17;
    for (int i = 0; i < 30; i++) {
        D[i + i * m] = 2.0 + trand(&s); /* a diagonal keeps the first 30 rows independent */
        for (int t = 0; t < 3; t++) {
            int j = (int)((trand(&s) + 1.0) * 0.5 * n) % n;
            D[i + j * m] += trand(&s);
        }
    }
    for (int i = 30; i < 40; i++) {
        int a = (i - 30) * 3, b = a + 1;
        for (int j = 0; j < n; j++) D[i + j * m] = D[a + j * m] - 0.5 * D[b + j * m];
    }
    mbla_csc *A = NULL;
    mbla_csc_from_dense(m, n, D, m, MBLA_DEFAULT, &A, NULL);
    *dense = D;
    return A;
}

TEST(spqr_nullspace_redundant)
{
    double *D;
    mbla_csc *A = redundant_jacobian(&D);
    int m = 40, n = 60, rank = -1, nn = -1;
    double *N = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_spqr_nullspace(A, MBLA_DEFAULT, &N, &nn, &rank, &st), 0);
    CHECK_EQ_INT(rank, 30);
    CHECK_EQ_INT(nn, 30);
    CHECK(N != NULL);
    /* A N = 0 and N^T N = I */
    double *AN = malloc(sizeof(double) * m * nn), *NN = malloc(sizeof(double) * nn * nn);
    mbla_gemm('N', 'N', m, nn, n, 1.0, D, m, N, n, 0.0, AN, m, NULL);
    mbla_gemm('T', 'N', nn, nn, n, 1.0, N, n, N, n, 0.0, NN, nn, NULL);
    double e1 = 0, e2 = 0;
    for (int k = 0; k < m * nn; k++) e1 = fmax(e1, fabs(AN[k]));
    for (int a = 0; a < nn; a++)
        for (int b = 0; b < nn; b++) e2 = fmax(e2, fabs(NN[a + b * nn] - (a == b)));
    CHECK_MSG(e1 < 1e-12, "max |A N| = %g", e1);
    CHECK_MSG(e2 < 1e-12, "max |N^T N - I| = %g", e2);
    /* the dense routes agree on the rank */
    double *Dc = malloc(sizeof(double) * m * n), sv[40];
    memcpy(Dc, D, sizeof(double) * m * n);
    CHECK_EQ_INT(mbla_svd(m, n, Dc, m, 'S', sv, NULL, 1, NULL, 1, &st), 0);
    CHECK_EQ_INT(mbla_rank_from_diag(m, n, m, sv, 1, MBLA_DEFAULT), 30);
    int r2 = -1;
    CHECK_EQ_INT(mbla_spqr_rank(A, MBLA_DEFAULT, &r2, NULL, &st), 0);
    CHECK_EQ_INT(r2, 30);
    mbl_free(N);
    free(AN);
    free(NN);
    free(Dc);
    free(D);
    mbla_csc_free(A);
}

TEST(spqr_solve_min_norm_and_least_squares)
{
    /* underdetermined 2 x 3, full row rank: x = A^T (A A^T)^-1 b */
    double D[6] = {1, 0, 2, 1, 0, 3}; /* [[1 2 0], [0 1 3]] */
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(2, 3, D, 2, MBLA_DEFAULT, &A, NULL), 0);
    double b[2] = {1, 2}, x[3];
    mbl_status st;
    CHECK_EQ_INT(mbla_spqr_solve(A, MBLA_DEFAULT, 1, b, 2, x, 3, &st), 0);
    /* A A^T = [[5, 2], [2, 10]], y = (A A^T)^-1 b = (6/46, 8/46) */
    double y0 = 6.0 / 46, y1 = 8.0 / 46;
    CHECK_CLOSE(x[0], y0, 1e-14);
    CHECK_CLOSE(x[1], 2 * y0 + y1, 1e-14);
    CHECK_CLOSE(x[2], 3 * y1, 1e-14);
    /* overdetermined 3 x 2 (A^T): least squares via the normal equations */
    mbla_csc *T = NULL;
    CHECK_EQ_INT(mbla_csc_transpose(A, &T, NULL), 0);
    double c[3] = {1, -1, 2}, z[2];
    CHECK_EQ_INT(mbla_spqr_solve(T, MBLA_DEFAULT, 1, c, 3, z, 2, &st), 0);
    /* (A A^T) z = A c = (1 - 2, -1 + 6) = (-1, 5) -> z = (-20, 27)/46 */
    CHECK_CLOSE(z[0], -20.0 / 46, 1e-14);
    CHECK_CLOSE(z[1], 27.0 / 46, 1e-14);
    CHECK_EQ_INT(mbla_spqr_solve(T, MBLA_DEFAULT, 1, c, 2, z, 2, &st), MBL_EDIM);
    mbla_csc_free(A);
    mbla_csc_free(T);
}

TEST(gpl_allocation_failures)
{
    double *D;
    mbla_csc *A = redundant_jacobian(&D);
    double *N = NULL;
    int nn, rank;
    ALLOC_FAIL_LOOP(mbla_spqr_nullspace(A, MBLA_DEFAULT, &N, &nn, &rank, NULL), (mbl_free(N), N = NULL));
    ALLOC_FAIL_LOOP(mbla_spqr_rank(A, MBLA_DEFAULT, &rank, NULL, NULL), (void)0);
    double K[4] = {2, -1, -1, 2};
    mbla_csc *S = NULL;
    mbla_csc_from_dense(2, 2, K, 2, MBLA_DEFAULT, &S, NULL);
    mbla_chol *c = NULL;
    ALLOC_FAIL_LOOP(mbla_chol_new(S, 'U', &c, NULL), (mbla_chol_free(c), c = NULL));
    mbla_csc_free(S);
    mbla_csc_free(A);
    free(D);
}

int main(void)
{
    if (!gpl_available()) {
        RUN(gpl_off_messages);
        return test_summary("la_gpl (MBLIN_WITH_GPL=OFF)");
    }
    RUN(cholmod_solve);
    RUN(cholmod_not_positive_definite);
    RUN(spqr_rank_dense_product);
    RUN(spqr_nullspace_redundant);
    RUN(spqr_solve_min_norm_and_least_squares);
    RUN(gpl_allocation_failures);
    return test_summary("la_gpl");
}
