/* Tests of the CSC utilities and of the KLU wrapper of src/la. */
#include "la/la_equilibrate.h"
#include "la/la_internal.h"
#include "la_test_util.h"

/* random sparse n x n matrix with a dominant diagonal (well conditioned) */
static mbla_csc *random_sparse(int n, int per_col, unsigned seed, double diag)
{
    int nz = n * (per_col + 1);
    int *ti = malloc(sizeof(int) * nz), *tj = malloc(sizeof(int) * nz);
    double *tx = malloc(sizeof(double) * nz);
    int q = 0;
    for (int j = 0; j < n; j++) {
        ti[q] = j;
        tj[q] = j;
        tx[q++] = diag + trand(&seed);
        for (int t = 0; t < per_col; t++) {
            double u = 0.5 * (trand(&seed) + 1.0);
            ti[q] = (int)(u * n) % n;
            tj[q] = j;
            tx[q++] = trand(&seed);
        }
    }
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(n, n, nz, ti, tj, tx, NULL, &A, NULL);
    free(ti);
    free(tj);
    free(tx);
    return A;
}

TEST(triplets_duplicates_map_refill)
{
    /* 3 x 3, with a duplicate (1,1) and triplets out of order */
    int ti[] = {2, 0, 1, 1, 0, 2};
    int tj[] = {0, 0, 1, 1, 2, 2};
    double tx[] = {3, 1, 4, 5, 7, 0};
    int map[6];
    mbla_csc *A = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 6, ti, tj, tx, map, &A, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(A, &st), 0);
    CHECK_EQ_INT(mbla_csc_nnz(A), 5); /* explicit zero (2,2) kept */
    double D[9];
    CHECK_EQ_INT(mbla_csc_to_dense(A, D, 3, &st), 0);
    double ex[9] = {1, 0, 3, 0, 9, 0, 7, 0, 0};
    for (int k = 0; k < 9; k++) CHECK_CLOSE(D[k], ex[k], 0);
    CHECK_EQ_INT(map[2], map[3]);
    /* refill with new values on the same triplet pattern */
    double tx2[] = {1, 2, 3, 4, 5, 6};
    mbla_csc_refill(A, 6, map, tx2);
    CHECK_EQ_INT(mbla_csc_to_dense(A, D, 3, &st), 0);
    CHECK_CLOSE(D[0], 2, 0);
    CHECK_CLOSE(D[2], 1, 0);
    CHECK_CLOSE(D[4], 7, 0);
    CHECK_CLOSE(D[6], 5, 0);
    CHECK_CLOSE(D[8], 6, 0);
    /* drop explicit zeros */
    tx2[5] = 0;
    mbla_csc_refill(A, 6, map, tx2);
    CHECK_EQ_INT(mbla_csc_drop(A, MBLA_DEFAULT), 4);
    CHECK_EQ_INT(mbla_csc_check(A, &st), 0);
    mbla_csc_free(A);
    /* out of range names the triplet */
    int bi[] = {0, 3};
    int bj[] = {0, 1};
    A = (mbla_csc *)&st;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 2, bi, bj, tx, NULL, &A, &st), MBL_EDIM);
    CHECK(A == NULL);
    CHECK(strstr(st.msg, "triplet 1") != NULL);
    CHECK(strstr(st.msg, "(3, 1)") != NULL);
    mbla_csc_free(NULL);
}

/* The triplets assembled against sums made independently (a dense array, the triplets added in
 * their order, as mbla_csc_from_triplets documents): bit for bit, with the pattern, the sorted rows
 * and the map. */
static void check_triplets_against_dense(int m, int n, int nz, const int *ti, const int *tj, const double *tx)
{
    double *D = calloc((size_t)m * n, sizeof *D);
    char *has = calloc((size_t)m * n, 1);
    int *map = malloc(sizeof(int) * (size_t)(nz + 1)), entries = 0;
    for (int k = 0; k < nz; k++) {
        size_t t = (size_t)ti[k] + (size_t)tj[k] * m;
        entries += !has[t];
        has[t] = 1;
        D[t] += tx[k];
    }
    mbla_csc *A = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_triplets(m, n, nz, ti, tj, tx, map, &A, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(A, &st), 0);
    CHECK_EQ_INT(mbla_csc_nnz(A), entries);
    for (int j = 0; j < n; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) {
            size_t t = (size_t)A->i[p] + (size_t)j * m;
            CHECK(has[t]);
            CHECK(memcmp(&A->x[p], &D[t], sizeof(double)) == 0); /* the same bits, +0.0 for a lone -0.0 */
        }
    for (int k = 0; k < nz; k++) {
        int p = map[k];
        CHECK(p >= A->p[tj[k]] && p < A->p[tj[k] + 1] && A->i[p] == ti[k]);
    }
    mbla_csc_free(A);
    free(D), free(has), free(map);
}

TEST(triplets_four_orders)
{
    enum { M = 37, N = 29, NZ = 400 };
    mbl_status st;
    int ti[NZ], tj[NZ];
    double tx[NZ];
    unsigned seed = 7;
    /* 1. compressed-column order already (each entry once; a -0.0 among them) */
    int nz = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M && nz < NZ; i++)
            if (trand(&seed) > 0.6) ti[nz] = i, tj[nz] = j, tx[nz++] = trand(&seed);
    tx[nz / 2] = -0.0;
    check_triplets_against_dense(M, N, nz, ti, tj, tx);
    /* 2. columns interleaved, the rows of each column nondecreasing in the triplets' order, with
     * repeated entries (summed in order) */
    int last[N];
    for (int j = 0; j < N; j++) last[j] = 0;
    for (nz = 0; nz < NZ; nz++) {
        int j = (int)(0.5 * (trand(&seed) + 1.0) * N) % N;
        if (trand(&seed) > 0.3 && last[j] < M - 1) last[j]++;
        ti[nz] = last[j], tj[nz] = j, tx[nz] = trand(&seed) * 1e3;
    }
    check_triplets_against_dense(M, N, nz, ti, tj, tx);
    /* 3. in no order (rows decreasing within columns too), with repeated entries */
    for (nz = 0; nz < NZ; nz++) {
        ti[nz] = (int)(0.5 * (trand(&seed) + 1.0) * 8) % 8;
        tj[nz] = (int)(0.5 * (trand(&seed) + 1.0) * N) % N;
        tx[nz] = trand(&seed) * 1e3;
    }
    check_triplets_against_dense(M, N, nz, ti, tj, tx);
    /* 4. compressed-column order but for a short tail (at most nz / 8): repeats of the ordered
     * entries, new entries before and after them, repeats within the tail, an entry alone in its
     * column (column 0 left empty by the ordered part) */
    nz = 0;
    for (int j = 1; j < N - 1; j++)
        for (int i = 0; i < M && nz < 300; i++)
            if (trand(&seed) > 0.5) ti[nz] = i, tj[nz] = j, tx[nz++] = trand(&seed);
    int np = nz;
    for (int u = 0; u < 12; u++) /* repeats of ordered entries, out of order */
        ti[nz] = ti[(u * 97) % np], tj[nz] = tj[(u * 97) % np], tx[nz++] = trand(&seed);
    ti[nz] = 3, tj[nz] = N - 1, tx[nz++] = 2.5;   /* after them (the last column) */
    ti[nz] = 5, tj[nz] = 0, tx[nz++] = -1.5;      /* before them, alone in column 0 */
    ti[nz] = 3, tj[nz] = N - 1, tx[nz++] = 1e-17; /* a repeat within the tail */
    ti[nz] = M - 1, tj[nz] = 1, tx[nz++] = 0.25;  /* a new entry inside the ordered part's columns */
    CHECK(nz - np <= nz / 8);
    check_triplets_against_dense(M, N, nz, ti, tj, tx);
    /* 5. rows unsorted in a column longer than 32 (the transpose trick) and in short ones (sorted
     * each on its own), with repeated entries; an index out of range after the first descent */
    for (nz = 0; nz < NZ; nz++)
        ti[nz] = (nz * 17) % M, tj[nz] = nz % 3 ? 4 : (nz / 3) % N, tx[nz] = trand(&seed) * 1e3;
    check_triplets_against_dense(M, N, nz, ti, tj, tx);
    check_triplets_against_dense(M, N, 45, ti + 300, tj + 300, tx + 300); /* columns of at most 32 */
    int si[] = {5, 2, 5, 5}, sj[] = {1, 1, 1, 1}; /* a repeat summed in order: 0, not 1.1e-16 */
    double sx[] = {1.0, 3.0, 1e-16, -1.0};
    check_triplets_against_dense(M, N, 4, si, sj, sx);
    int ci[] = {2, 1, 0, 3, M}, cj[] = {0, 0, 1, 2, 0};
    mbla_csc *C = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(M, N, 5, ci, cj, tx, NULL, &C, &st), MBL_EDIM);
    CHECK(C == NULL && strstr(st.msg, "triplet 4") != NULL);
    /* an empty matrix, and a row index out of range found in the ordered triplets too */
    check_triplets_against_dense(M, N, 0, ti, tj, tx);
    int bi[] = {0, 1, 37}, bj[] = {0, 0, 1};
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(M, N, 3, bi, bj, tx, NULL, &A, &st), MBL_EDIM);
    CHECK(A == NULL && strstr(st.msg, "triplet 2") != NULL);
}

TEST(csc_operations_against_dense)
{
    int m = 7, n = 5;
    unsigned s = 11;
    double D[35], E[35];
    for (int k = 0; k < 35; k++) D[k] = trand(&s) > 0.3 ? trand(&s) : 0.0;
    mbla_csc *A = NULL, *T = NULL, *C = NULL, *S = NULL, *B = NULL, *P = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_dense(m, n, D, m, MBLA_DEFAULT, &A, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(A, &st), 0);
    CHECK_EQ_INT(mbla_csc_to_dense(A, E, m, &st), 0);
    for (int k = 0; k < 35; k++) CHECK_CLOSE(E[k], D[k], 0);
    /* the 1-norm against the dense one (LAPACK), with signs mixed */
    for (int k = 0; k < 35; k += 2) E[k] = -E[k];
    mbla_csc *An = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(m, n, E, m, MBLA_DEFAULT, &An, &st), 0);
    CHECK(mbla_norm1(m, n, E, m) > 0);
    CHECK_CLOSE(mbla_csc_norm1(An), mbla_norm1(m, n, E, m), 1e-15);
    mbla_csc_free(An);
    /* y = A x, z = A^T w */
    double x[5], w[7], y[7], z[5];
    for (int j = 0; j < n; j++) x[j] = trand(&s);
    for (int i = 0; i < m; i++) w[i] = trand(&s);
    CHECK_EQ_INT(mbla_csc_gemv(A, 2.0, x, 0.0, y, &st), 0);
    CHECK_EQ_INT(mbla_csc_gemv_t(A, 1.0, w, 0.0, z, &st), 0);
    for (int i = 0; i < m; i++) {
        double v = 0;
        for (int j = 0; j < n; j++) v += D[i + j * m] * x[j];
        CHECK_CLOSE(y[i], 2 * v, 1e-14);
    }
    for (int j = 0; j < n; j++) {
        double v = 0;
        for (int i = 0; i < m; i++) v += D[i + j * m] * w[i];
        CHECK_CLOSE(z[j], v, 1e-14);
    }
    /* transpose, product A^T A against dense gemm */
    CHECK_EQ_INT(mbla_csc_transpose(A, &T, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(T, &st), 0);
    CHECK_EQ_INT(mbla_csc_matmul(T, A, &C, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(C, &st), 0);
    double G[25], Gs[25];
    CHECK_EQ_INT(mbla_gemm('T', 'N', n, n, m, 1.0, D, m, D, m, 0.0, G, n, &st), 0);
    CHECK_EQ_INT(mbla_csc_to_dense(C, Gs, n, &st), 0);
    for (int k = 0; k < 25; k++) CHECK_CLOSE(Gs[k], G[k], 1e-14);
    CHECK_EQ_INT(mbla_csc_matmul(A, A, &P, &st), MBL_EDIM);
    /* block rows [2, 6), cols [1, 4) */
    CHECK_EQ_INT(mbla_csc_block(A, 2, 6, 1, 4, &B, &st), 0);
    CHECK_EQ_INT(B->m, 4);
    CHECK_EQ_INT(B->n, 3);
    double Bd[12];
    CHECK_EQ_INT(mbla_csc_to_dense(B, Bd, 4, &st), 0);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 4; i++) CHECK_CLOSE(Bd[i + 4 * j], D[(i + 2) + (j + 1) * m], 0);
    CHECK_EQ_INT(mbla_csc_block(A, 2, 8, 0, 1, &P, &st), MBL_EDIM);
    /* selection with unsorted rows and repeated columns */
    int rows[3] = {5, 0, 3}, cols[4] = {4, 0, 4, 2};
    CHECK_EQ_INT(mbla_csc_select(A, 3, rows, 4, cols, &S, &st), 0);
    CHECK_EQ_INT(mbla_csc_check(S, &st), 0);
    double Sd[12];
    CHECK_EQ_INT(mbla_csc_to_dense(S, Sd, 3, &st), 0);
    for (int b = 0; b < 4; b++)
        for (int a = 0; a < 3; a++) CHECK_CLOSE(Sd[a + 3 * b], D[rows[a] + cols[b] * m], 0);
    int badrows[2] = {1, 1};
    CHECK_EQ_INT(mbla_csc_select(A, 2, badrows, 4, cols, &P, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "repeated") != NULL);
    /* sum alpha A + beta A on the union pattern */
    mbla_csc *Q = NULL;
    CHECK_EQ_INT(mbla_csc_add(2.0, A, -0.5, A, &Q, &st), 0);
    CHECK_EQ_INT(mbla_csc_nnz(Q), mbla_csc_nnz(A));
    for (int k = 0; k < mbla_csc_nnz(Q); k++) CHECK_CLOSE(Q->x[k], 1.5 * A->x[k], 1e-15);
    CHECK_EQ_INT(mbla_csc_add(1.0, A, 1.0, T, &P, &st), MBL_EDIM);
    mbla_csc_free(Q);
    mbla_csc_free(A);
    mbla_csc_free(T);
    mbla_csc_free(C);
    mbla_csc_free(S);
    mbla_csc_free(B);
}

TEST(csc_check_rejects)
{
    int p[3] = {0, 2, 3}, i[3] = {1, 0, 1};
    double x[3] = {1, 2, 3};
    mbla_csc A = {2, 2, p, i, x};
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_check(&A, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "column 0") != NULL);
    i[0] = 0;
    i[1] = 1;
    i[2] = 2;
    CHECK_EQ_INT(mbla_csc_check(&A, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "row 2 out of range") != NULL);
}

TEST(klu_against_dense)
{
    int n = 300;
    mbla_csc *A = random_sparse(n, 4, 5, 4.0);
    CHECK(A != NULL);
    double *D = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * 2);
    double *bd = malloc(sizeof(double) * n * 2);
    unsigned s = 99;
    for (int k = 0; k < 2 * n; k++) b[k] = bd[k] = trand(&s);
    mbl_status st;
    mbla_klu *k = NULL;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(k, 2, b, n, &st), 0);
    mbla_csc_to_dense(A, D, n, NULL);
    CHECK_EQ_INT(mbla_lu_solve(n, 2, D, n, bd, n, &st), 0);
    for (int q = 0; q < 2 * n; q++) CHECK_CLOSE(b[q], bd[q], 1e-12);
    /* transposed solve: A^T x = A^T e gives e */
    double *e = malloc(sizeof(double) * n), *r = malloc(sizeof(double) * n);
    for (int q = 0; q < n; q++) e[q] = 1.0 + q % 3;
    mbla_csc_gemv_t(A, 1.0, e, 0.0, r, NULL);
    CHECK_EQ_INT(mbla_klu_solve_t(k, 1, r, n, &st), 0);
    for (int q = 0; q < n; q++) CHECK_CLOSE(r[q], e[q], 1e-12);
    /* condition estimate against the dense 1-norm condition ||A||_1 ||A^-1||_1 */
    double cest = 0;
    CHECK_EQ_INT(mbla_klu_condest(k, A, &cest, &st), 0);
    mbla_csc_to_dense(A, D, n, NULL);
    double anorm = mbla_norm1(n, n, D, n);
    double *Inv = calloc((size_t)n * n, sizeof(double));
    for (int q = 0; q < n; q++) Inv[q + q * n] = 1.0;
    CHECK_EQ_INT(mbla_lu_solve(n, n, D, n, Inv, n, &st), 0);
    double cond = anorm * mbla_norm1(n, n, Inv, n);
    CHECK_MSG(cest <= cond * (1 + 1e-8) && cest >= cond / 3, "condest %g, cond %g", cest, cond);
    double rc = 0;
    CHECK_EQ_INT(mbla_klu_rcond(k, &rc, &st), 0);
    CHECK(rc > 0 && rc <= 1);
    /* refactor at new values, same pattern: the new solution */
    for (int q = 0; q < mbla_csc_nnz(A); q++) A->x[q] *= 1.0 + 0.1 * trand(&s);
    CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), 0);
    mbla_csc_gemv(A, 1.0, e, 0.0, r, NULL);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, r, n, &st), 0);
    for (int q = 0; q < n; q++) CHECK_CLOSE(r[q], e[q], 1e-12);
    int nf, nr;
    mbla_klu_stats(k, &nf, &nr);
    CHECK_EQ_INT(nf, 1);
    CHECK_EQ_INT(nr, 1);
    /* a different pattern is refused */
    mbla_csc *A2 = random_sparse(n, 4, 6, 4.0);
    CHECK_EQ_INT(mbla_klu_refactor(k, A2, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "pattern") != NULL);
    mbla_csc_free(A2);
    mbla_klu_free(k);
    mbla_klu_free(NULL);
    mbla_csc_free(A);
    free(D);
    free(b);
    free(bd);
    free(e);
    free(r);
    free(Inv);
}

/* The pivot sequence of the first factorization becomes terrible at new values: refactor
 * must notice (rcond) and factor afresh with pivoting. */
TEST(klu_refactor_fallback)
{
    double D1[4] = {10, 1, 1, 1}, D2[4] = {1e-14, 1, 1, 1};
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(2, 2, D1, 2, MBLA_DEFAULT, &A, NULL), 0);
    mbla_klu_opts o;
    mbla_klu_opts_default(&o);
    o.btf = 0;
    mbla_klu *k = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_klu_new(A, &o, &k, &st), 0);
    A->x[0] = D2[0];
    CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), 0);
    int nf = 0, nr = 0;
    mbla_klu_stats(k, &nf, &nr);
    CHECK_EQ_INT(nf, 2);
    CHECK_EQ_INT(nr, 0);
    /* x = (1, 2): b = (1e-14 + 2, 3) */
    double b[2] = {1e-14 + 2, 3};
    CHECK_EQ_INT(mbla_klu_solve(k, 1, b, 2, &st), 0);
    CHECK_CLOSE(b[0], 1.0, 1e-13);
    CHECK_CLOSE(b[1], 2.0, 1e-13);
    mbla_klu_free(k);
    mbla_csc_free(A);
}

/* mbla_klu_factor: new values of the analysed pattern factored afresh (pivoting) give the factors,
 * hence the solves, of a new factorization of those values, bit for bit; a refactorization keeps
 * the first values' pivots (another rounding) */
TEST(klu_factor_fresh)
{
    double D1[16] = {4, 1, 0, 2, 1, 5, 1, 0, 0, 1, 6, 1, 2, 0, 1, 7};
    double D2[16] = {0.1, 3, 0, 2, 3, 0.2, 1, 0, 0, 1, 0.3, 4, 2, 0, 4, 0.4};
    mbla_csc *A = NULL, *B = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(4, 4, D1, 4, MBLA_DEFAULT, &A, NULL), 0);
    CHECK_EQ_INT(mbla_csc_from_dense(4, 4, D2, 4, MBLA_DEFAULT, &B, NULL), 0);
    mbla_klu *k = NULL, *kb = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), 0);
    CHECK_EQ_INT(mbla_klu_new(B, NULL, &kb, &st), 0);
    if (k && kb) {
        CHECK_EQ_INT(mbla_klu_factor(k, B, &st), 0);
        int nf = 0, nr = 0;
        mbla_klu_stats(k, &nf, &nr);
        CHECK_EQ_INT(nf, 2);
        double x[4] = {1, -2, 3, 0.5}, y[4] = {1, -2, 3, 0.5};
        CHECK_EQ_INT(mbla_klu_solve(k, 1, x, 4, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve(kb, 1, y, 4, &st), 0);
        CHECK(!memcmp(x, y, sizeof x));
        /* the same again after a refactorization in between */
        CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), 0);
        CHECK_EQ_INT(mbla_klu_factor(k, B, &st), 0);
        double z[4] = {1, -2, 3, 0.5};
        CHECK_EQ_INT(mbla_klu_solve(k, 1, z, 4, &st), 0);
        CHECK(!memcmp(z, y, sizeof z));
    }
    /* another pattern is refused */
    mbla_csc *C = NULL;
    double D3[4] = {1, 0, 0, 1};
    CHECK_EQ_INT(mbla_csc_from_dense(2, 2, D3, 2, MBLA_DEFAULT, &C, NULL), 0);
    if (k) CHECK_EQ_INT(mbla_klu_factor(k, C, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_klu_factor(NULL, B, &st), MBL_EARG);
    mbla_klu_free(k), mbla_klu_free(kb);
    mbla_csc_free(A), mbla_csc_free(B), mbla_csc_free(C);
}

TEST(klu_singular)
{
    /* columns 0 and 2 equal: numerically singular with a full structural rank */
    double D[9] = {1, 2, 0, 0, 1, 1, 1, 2, 0};
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_dense(3, 3, D, 3, MBLA_DEFAULT, &A, NULL), 0);
    mbla_klu *k = (mbla_klu *)&D;
    mbl_status st;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), MBL_ESINGULAR);
    CHECK(k == NULL);
    CHECK(strstr(st.msg, "singular") != NULL);
    mbla_csc_free(A);
    /* structurally singular (empty column) */
    double Z[4] = {1, 1, 0, 0};
    CHECK_EQ_INT(mbla_csc_from_dense(2, 2, Z, 2, MBLA_DEFAULT, &A, NULL), 0);
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), MBL_ESINGULAR);
    mbla_csc_free(A);
    /* not square */
    CHECK_EQ_INT(mbla_csc_from_dense(3, 2, D, 3, MBLA_DEFAULT, &A, NULL), 0);
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), MBL_EDIM);
    mbla_csc_free(A);
}

TEST(klu_complex)
{
    int n = 120;
    mbla_csc *A = random_sparse(n, 3, 21, 3.0);
    int nz = mbla_csc_nnz(A);
    double *az = malloc(sizeof(double) * 2 * nz);
    unsigned s = 5;
    for (int q = 0; q < nz; q++) {
        az[2 * q] = A->x[q];
        az[2 * q + 1] = 0.7 * trand(&s);
    }
    double *xe = malloc(sizeof(double) * 2 * n), *b = malloc(sizeof(double) * 2 * n);
    for (int q = 0; q < 2 * n; q++) xe[q] = trand(&s);
    mbla_klu *k = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_kluz_new(A, az, NULL, &k, &st), 0);
    const char tr[3] = {'N', 'T', 'C'};
    for (int t = 0; t < 3; t++) {
        /* b = op(A) xe computed by hand */
        for (int q = 0; q < 2 * n; q++) b[q] = 0;
        for (int j = 0; j < n; j++)
            for (int q = A->p[j]; q < A->p[j + 1]; q++) {
                int i = A->i[q];
                double ar = az[2 * q], ai = tr[t] == 'C' ? -az[2 * q + 1] : az[2 * q + 1];
                int row = tr[t] == 'N' ? i : j, col = tr[t] == 'N' ? j : i;
                b[2 * row] += ar * xe[2 * col] - ai * xe[2 * col + 1];
                b[2 * row + 1] += ar * xe[2 * col + 1] + ai * xe[2 * col];
            }
        CHECK_EQ_INT(mbla_kluz_solve(k, tr[t], 1, b, n, &st), 0);
        for (int q = 0; q < 2 * n; q++) CHECK_CLOSE(b[q], xe[q], 1e-12);
    }
    /* refactor at new complex values */
    for (int q = 0; q < nz; q++) az[2 * q + 1] *= -1.5;
    CHECK_EQ_INT(mbla_kluz_refactor(k, A, az, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, b, n, &st), MBL_EARG); /* real solve on complex */
    CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), MBL_EARG);
    double rc;
    CHECK_EQ_INT(mbla_klu_rcond(k, &rc, &st), 0);
    CHECK(rc > 0);
    mbla_klu_free(k);
    mbla_csc_free(A);
    free(az);
    free(xe);
    free(b);
}

TEST(klu_empty_matrix)
{
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_new(0, 0, 0, &A, NULL), 0);
    mbla_klu *k = NULL;
    double b[1] = {42}, rc = 0, ce = 0;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, NULL), 0);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, b, 1, NULL), 0);
    CHECK_EQ_INT(mbla_klu_refactor(k, A, NULL), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k, &rc, NULL), 0);
    CHECK_EQ_INT(mbla_klu_condest(k, A, &ce, NULL), 0);
    CHECK_CLOSE(rc, 1.0, 0);
    CHECK_CLOSE(b[0], 42.0, 0);
    mbla_klu_free(k);
    mbla_csc_free(A);
}

/* The saddle-point order (mbla_klu_opts.saddle) on a small [K G^T; G 0]: a chain of 12 springs
 * (tridiagonal K) whose first four coordinates are coupled by a dense 4 x 4 block (an "Euler
 * quadruple") tied by the constraint p . x = 0, plus a constraint x_11 = 0.
 * The solution against the dense LU (LAPACK), also with the columns given in the order
 * [multipliers, coordinates] (saddle_cols), a column order that is not a permutation refused, and
 * the allocation failures. */
static mbla_csc *saddle_matrix(int permuted, double *dense)
{
    enum { N = 12, M = 2, NA = N + M };
    const double p[4] = {0.5, -0.5, 0.7, 0.1};
    double A[NA * NA] = {0};
    for (int i = 0; i < N; i++) { /* springs 3 between neighbours, 1 to the ground */
        A[i + i * NA] += 1 + (i > 0 ? 3 : 0) + (i < N - 1 ? 3 : 0);
        if (i + 1 < N) A[i + (i + 1) * NA] = A[i + 1 + i * NA] = -3;
    }
    for (int i = 0; i < 4; i++) /* the quadruple's block 1.5 I + 0.5 J - 2.5 p p^T / 0.99 */
        for (int j = 0; j < 4; j++) A[i + j * NA] = (i == j ? 2.0 : 0.5) - 2.5 * p[i] * p[j] / 0.99;
    for (int i = 0; i < 4; i++) A[N + i * NA] = A[i + N * NA] = p[i];
    A[N + 1 + (N - 1) * NA] = A[N - 1 + (N + 1) * NA] = 1.0;
    int ti[NA * NA], tj[NA * NA], nz = 0;
    double tx[NA * NA];
    for (int j = 0; j < NA; j++)
        for (int i = 0; i < NA; i++)
            if (A[i + j * NA] != 0) {
                /* permuted: columns [multipliers, coordinates] */
                ti[nz] = i, tj[nz] = permuted ? (j < N ? j + M : j - N) : j, tx[nz++] = A[i + j * NA];
            }
    if (dense) memcpy(dense, A, sizeof A);
    mbla_csc *C = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(NA, NA, nz, ti, tj, tx, NULL, &C, NULL), 0);
    return C;
}

TEST(klu_saddle_order)
{
    enum { N = 12, M = 2, NA = N + M };
    double D[NA * NA], b[NA], x[NA], xd[NA];
    mbla_csc *C = saddle_matrix(0, D), *P = saddle_matrix(1, NULL);
    for (int i = 0; i < NA; i++) b[i] = xd[i] = sin(1.0 + i);
    CHECK_EQ_INT(mbla_lu_solve(NA, 1, D, NA, xd, NA, NULL), 0);
    mbla_klu_opts o;
    mbla_klu_opts_default(&o);
    o.saddle = 1;
    mbla_klu *k = NULL;
    CHECK_EQ_INT(mbla_klu_new(C, &o, &k, NULL), 0);
    memcpy(x, b, sizeof x);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, x, NA, NULL), 0);
    for (int i = 0; i < NA; i++) CHECK_CLOSE(x[i], xd[i], 1e-12);
    mbla_klu_free(k);
    /* the same matrix with its columns [multipliers, coordinates]: x comes back permuted */
    int cols[NA];
    for (int j = 0; j < NA; j++) cols[j] = j < N ? j + M : j - N;
    o.saddle_cols = cols;
    k = NULL;
    CHECK_EQ_INT(mbla_klu_new(P, &o, &k, NULL), 0);
    memcpy(x, b, sizeof x);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, x, NA, NULL), 0);
    for (int j = 0; j < NA; j++) CHECK_CLOSE(x[cols[j]], xd[j], 1e-12);
    mbla_klu_free(k);
    ALLOC_FAIL_LOOP(mbla_klu_new(P, &o, &k, NULL), (mbla_klu_free(k), k = NULL));
    o.saddle_cols = NULL;
    ALLOC_FAIL_LOOP(mbla_klu_new(C, &o, &k, NULL), (mbla_klu_free(k), k = NULL));
    cols[1] = cols[0];
    o.saddle_cols = cols;
    mbl_status st;
    k = NULL;
    CHECK_EQ_INT(mbla_klu_new(P, &o, &k, &st), MBL_EARG);
    CHECK(k == NULL && strstr(st.msg, "saddle_cols is not a permutation") != NULL);
    mbla_csc_free(C), mbla_csc_free(P);
}

/* The N-loop four-bar's Newton matrix in shape: points (x_i, y_i) in a chain, each with a
 * constraint to the ground (its own two coordinates) and one to the next point (four); the
 * stiffness couples each point with its neighbours. The saddle order's groups merge these chains
 * into coarse blocks (it predicts 19 times nnz(A) on the four-bar itself), where KLU's own order
 * fills little: mbla_klu_new keeps its own order then (MBLA_KLU_SADDLE_FILL_MAX), and the factor
 * is no larger with saddle asked than without. */
static mbla_csc *chain_saddle_matrix(void)
{
    enum { NP = 1500, NC = 2 * NP, NM = 2 * NP - 1, NA = NC + NM, CAP = 40 * NA };
    int *ti = malloc(CAP * sizeof *ti), *tj = malloc(CAP * sizeof *tj), nt = 0;
    double *tx = malloc(CAP * sizeof *tx);
#define PUT(r, c, v) (ti[nt] = (r), tj[nt] = (c), tx[nt++] = (v))
    for (int i = 0; i < NP; i++)
        for (int a = 0; a < 2; a++) {
            int r = 2 * i + a;
            PUT(r, r, 4.0 + 0.01 * i);
            PUT(r, 2 * i + 1 - a, 0.5);
            if (i + 1 < NP) PUT(r, 2 * (i + 1) + a, -1.0), PUT(2 * (i + 1) + a, r, -1.0);
        }
    for (int i = 0; i < NP; i++) { /* ground constraint of point i: row/column NC + 2 i */
        int g = NC + 2 * i;
        for (int a = 0; a < 2; a++) PUT(g, 2 * i + a, 1.0 + a + 0.001 * i), PUT(2 * i + a, g, 1.0 + a + 0.001 * i);
        if (i + 1 < NP) /* link to the next point: row/column NC + 2 i + 1 */
            for (int a = 0; a < 2; a++) {
                double c = 0.7 + 0.3 * a;
                PUT(g + 1, 2 * i + a, c), PUT(2 * i + a, g + 1, c);
                PUT(g + 1, 2 * (i + 1) + a, -c), PUT(2 * (i + 1) + a, g + 1, -c);
            }
    }
#undef PUT
    CHECK(nt <= CAP);
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(NA, NA, nt, ti, tj, tx, NULL, &A, NULL), 0);
    free(ti), free(tj), free(tx);
    return A;
}

TEST(klu_saddle_declined_on_chains)
{
    mbla_csc *A = chain_saddle_matrix();
    int NA = A->n, NP = (NA + 1) / 4;
    mbla_klu_opts o;
    mbla_klu_opts_default(&o);
    mbla_klu *k0 = NULL, *k1 = NULL;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k0, NULL), 0);
    o.saddle = 1;
    CHECK_EQ_INT(mbla_klu_new(A, &o, &k1, NULL), 0);
    double f0 = 0, f1 = 0;
    int off0 = 0, off1 = 0;
    mbla_klu_factor_stats(k0, &f0, &off0);
    mbla_klu_factor_stats(k1, &f1, &off1);
    printf("  chain of %d points: factor %.0f entries (KLU's order), %.0f (saddle asked), nnz(A) %d\n", NP, f0,
           f1, A->p[NA]);
    CHECK(f1 <= 1.01 * f0);
    /* and the solve is backward stable: A x = b for b = A 1 */
    double *b = calloc(NA, sizeof *b), *x = calloc(NA, sizeof *x), *r = calloc(NA, sizeof *r);
    for (int j = 0; j < NA; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) b[A->i[p]] += A->x[p];
    memcpy(x, b, NA * sizeof *x);
    CHECK_EQ_INT(mbla_klu_solve(k1, 1, x, NA, NULL), 0);
    double rn = 0, xn = 0, an = mbla_csc_norm1(A);
    for (int j = 0; j < NA; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) r[A->i[p]] += A->x[p] * x[j];
    for (int j = 0; j < NA; j++) rn = fmax(rn, fabs(r[j] - b[j])), xn = fmax(xn, fabs(x[j]));
    CHECK_MSG(rn <= 1e-13 * an * xn, "backward error %g", rn / (an * xn));
    free(x), free(r);
    mbla_klu_free(k0), mbla_klu_free(k1), mbla_csc_free(A);
    free(b);
}

/* la_klu_new_unscaled where the saddle order is declined (the chain above): KLU's COLAMD instead of
 * AMD, so the factors and the solution of mbla_klu_new with ordering COLAMD, its row scaling off and
 * factored again, bit for bit, which differ from those of KLU's default order (AMD); a solve
 * backward stable. */
TEST(klu_unscaled_colamd_where_saddle_declined)
{
    mbla_csc *A = chain_saddle_matrix();
    int n = A->n;
    mbla_klu_opts o, oc;
    mbla_klu_opts_default(&o);
    mbla_klu_opts_default(&oc);
    o.saddle = 1;
    oc.ordering = MBLA_ORDER_COLAMD;
    mbla_klu *k[3] = {NULL, NULL, NULL}; /* la_klu_new_unscaled saddle, COLAMD reference, AMD */
    CHECK_EQ_INT(la_klu_new_unscaled(A, &o, &k[0], NULL), 0);
    CHECK_EQ_INT(mbla_klu_new(A, &oc, &k[1], NULL), 0);
    CHECK_EQ_INT(mbla_klu_set_row_scale(k[1], 0, NULL), 0);
    CHECK_EQ_INT(mbla_klu_factor(k[1], A, NULL), 0);
    CHECK_EQ_INT(la_klu_new_unscaled(A, NULL, &k[2], NULL), 0);
    double *x[3], f[3], an = mbla_csc_norm1(A), rn = 0, xn = 0;
    for (int v = 0; v < 3; v++) {
        x[v] = calloc(n, sizeof *x[v]);
        for (int j = 0; j < n; j++) /* b = A 1 */
            for (int p = A->p[j]; p < A->p[j + 1]; p++) x[v][A->i[p]] += A->x[p];
        CHECK_EQ_INT(mbla_klu_solve(k[v], 1, x[v], n, NULL), 0);
        mbla_klu_factor_stats(k[v], &f[v], NULL);
    }
    printf("  chain: nnz(L + U) %.0f (saddle declined), %.0f (COLAMD), %.0f (AMD)\n", f[0], f[1], f[2]);
    CHECK(f[0] == f[1] && !memcmp(x[0], x[1], n * sizeof *x[0]));
    CHECK(f[0] != f[2] || memcmp(x[0], x[2], n * sizeof *x[0]));
    double *r = calloc(n, sizeof *r); /* A x - A 1 */
    for (int j = 0; j < n; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) r[A->i[p]] += A->x[p] * (x[0][j] - 1.0);
    for (int j = 0; j < n; j++) rn = fmax(rn, fabs(r[j])), xn = fmax(xn, fabs(x[0][j]));
    CHECK_MSG(rn <= 1e-13 * an * xn, "backward error %g", rn / (an * xn));
    free(r);
    for (int v = 0; v < 3; v++) mbla_klu_free(k[v]), free(x[v]);
    mbla_csc_free(A);
}

/* la_klu_saddle_order's early decline (lnz_max): on the chain above the groups' dense blocks alone
 * pass 4 nnz(A), so the grouping stops there with a lower bound of the full estimate that is above
 * the limit already (the same decision, made earlier); a limit above the full estimate, and the
 * small saddle matrix whose order is taken, give the full order's perm and estimate unchanged,
 * also where its columns are read through a column map (q). */
TEST(klu_saddle_order_declined_early)
{
    mbla_csc *A = chain_saddle_matrix();
    int n = A->n, np0 = 0, np1 = 0, np2 = 0;
    double lim = 4.0 * A->p[n], full = 0, early = 0, loose = 0;
    int *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1);
    CHECK_EQ_INT(la_klu_saddle_order(n, A->p, A->i, A->x, 0, NULL, 0.0, p0, &full, &np0, NULL), 0);
    CHECK_EQ_INT(la_klu_saddle_order(n, A->p, A->i, A->x, 0, NULL, lim, p1, &early, &np1, NULL), 0);
    printf("  chain: nnz(L) estimate %.0f, stopped at %.0f, limit %.0f\n", full, early, lim);
    CHECK(full > lim && early > lim && early < full);
    CHECK_EQ_INT(la_klu_saddle_order(n, A->p, A->i, A->x, 0, NULL, 2.0 * full, p1, &loose, &np2, NULL), 0);
    CHECK(loose == full && np2 == np0 && !memcmp(p0, p1, n * sizeof *p0));
    mbla_csc_free(A);
    A = saddle_matrix(0, NULL);
    n = A->n;
    lim = 4.0 * A->p[n];
    CHECK_EQ_INT(la_klu_saddle_order(n, A->p, A->i, A->x, 0, NULL, 0.0, p0, &full, &np0, NULL), 0);
    CHECK_EQ_INT(la_klu_saddle_order(n, A->p, A->i, A->x, 0, NULL, lim, p1, &early, &np1, NULL), 0);
    CHECK(full <= lim && early == full && np0 == 2 && np1 == 2 && !memcmp(p0, p1, n * sizeof *p0));
    /* the same matrix stored with its columns [multipliers, coordinates] and read through the
     * column map (B = P Q is A, not formed): the same order */
    enum { NQ = 12, MQ = 2 };
    mbla_csc *P = saddle_matrix(1, NULL);
    int cols[NQ + MQ];
    for (int j = 0; j < NQ + MQ; j++) cols[j] = j < NQ ? j + MQ : j - NQ;
    CHECK_EQ_INT(la_klu_saddle_order(n, P->p, P->i, P->x, 0, cols, lim, p1, &early, &np1, NULL), 0);
    CHECK(early == full && np1 == np0 && !memcmp(p0, p1, n * sizeof *p0));
    mbla_csc_free(P);
    mbla_csc_free(A);
    free(p0), free(p1);
}

TEST(sparse_allocation_failures)
{
    int ti[] = {2, 0, 1, 1, 0, 2}, tj[] = {0, 0, 1, 1, 2, 2}, map[6];
    double tx[] = {3, 1, 4, 5, 7, 2};
    mbla_csc *A = NULL, *B = NULL, *C = NULL;
    ALLOC_FAIL_LOOP(mbla_csc_from_triplets(3, 3, 6, ti, tj, tx, map, &A, NULL),
                    (mbla_csc_free(A), A = NULL));
    /* in compressed-column order but for a short tail (the merge's own allocation) */
    int oi[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 1}, oj[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 0}, omap[10];
    double ox[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ALLOC_FAIL_LOOP(mbla_csc_from_triplets(3, 3, 10, oi, oj, ox, omap, &A, NULL),
                    (mbla_csc_free(A), A = NULL));
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 10, oi, oj, ox, omap, &A, NULL), 0);
    CHECK(A->x[1] == 12 && omap[9] == 1);
    mbla_csc_free(A), A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 6, ti, tj, tx, map, &A, NULL), 0);
    ALLOC_FAIL_LOOP(mbla_csc_transpose(A, &B, NULL), (mbla_csc_free(B), B = NULL));
    ALLOC_FAIL_LOOP(mbla_csc_matmul(A, A, &C, NULL), (mbla_csc_free(C), C = NULL));
    int rows[2] = {2, 0}, cols[2] = {2, 0};
    ALLOC_FAIL_LOOP(mbla_csc_select(A, 2, rows, 2, cols, &C, NULL), (mbla_csc_free(C), C = NULL));
    ALLOC_FAIL_LOOP(mbla_csc_add(1, A, 2, A, &C, NULL), (mbla_csc_free(C), C = NULL));
    ALLOC_FAIL_LOOP(mbla_csc_copy(A, &C, NULL), (mbla_csc_free(C), C = NULL));
    mbla_klu *k = NULL;
    ALLOC_FAIL_LOOP(mbla_klu_new(A, NULL, &k, NULL), (mbla_klu_free(k), k = NULL));
    mbla_klu_opts eo;
    mbla_klu_opts_default(&eo);
    eo.equilibrate = 1;
    ALLOC_FAIL_LOOP(mbla_klu_new(A, &eo, &k, NULL), (mbla_klu_free(k), k = NULL));
    mbla_csc_free(A);
}

/* A chain of cells (x_k, y_k) with a stiff partner y_k on every other cell (x_k y_k = H, y_k y_k
 * = f) and moderate couplings c between neighbouring x, plus a variable z coupled to every x:
 * after KLU's row scaling the diagonal of a stiff cell's x column (d / H) is below 1e-3 times the
 * neighbour's coupling (c / max(d, c)), so raw KLU pivots off the diagonal there; the symmetric
 * power-of-2 equilibration puts both on one scale (the flexible pendulum's slope columns). yscale
 * multiplies the y rows (a non-symmetric matrix: row and column factors differ). */
static mbla_csc *stiff_chain(int N, double yscale)
{
    double d = 1, H = 1e4, f = 1e9, c = 0.3, g = 0.1;
    int n = 2 * N + 1, cap = 8 * N + 8, q = 0, z = 2 * N;
    int *ti = malloc(sizeof(int) * cap), *tj = malloc(sizeof(int) * cap);
    double *tx = malloc(sizeof(double) * cap);
#define PUT(a, b, v) (ti[q] = (a), tj[q] = (b), tx[q++] = (v))
    for (int k = 0; k < N; k++) {
        int x = 2 * k, y = 2 * k + 1;
        PUT(x, x, d);
        if (k % 2 == 0) PUT(x, y, H), PUT(y, x, yscale * H);
        PUT(y, y, yscale * f);
        if (k + 1 < N) PUT(x, x + 2, c), PUT(x + 2, x, c);
        PUT(z, x, g), PUT(x, z, g);
    }
    PUT(z, z, 1.0 * N);
#undef PUT
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(n, n, q, ti, tj, tx, NULL, &A, NULL);
    free(ti), free(tj), free(tx);
    return A;
}

TEST(klu_equilibrate)
{
    int N = 400;
    mbl_status st;
    for (int nonsym = 0; nonsym < 2; nonsym++) {
        mbla_csc *A = stiff_chain(N, nonsym ? 8.0 : 1.0);
        int n = A->n, nz = mbla_csc_nnz(A);
        double *xe = malloc(sizeof(double) * 2 * n), *b = malloc(sizeof(double) * 2 * n);
        unsigned s = 17;
        for (int i = 0; i < 2 * n; i++) xe[i] = trand(&s);
        for (int eq = 0; eq < 2; eq++) {
            mbla_klu_opts o;
            mbla_klu_opts_default(&o);
            CHECK_EQ_INT(o.equilibrate, 0);
            o.equilibrate = eq;
            mbla_klu *k = NULL;
            CHECK_EQ_INT(mbla_klu_new(A, &o, &k, &st), 0);
            double lu;
            int off;
            mbla_klu_factor_stats(k, &lu, &off);
            if (eq) { /* every pivot on the fill-reducing order, no fill beyond the pattern */
                CHECK_EQ_INT(off, 0);
                CHECK(lu <= nz + n);
            } else {
                CHECK(off >= N / 4); /* raw: one off-diagonal pivot per stiff cell */
            }
            /* A x = b and A^T y = b against x chosen first (both scalings and the permutation) */
            for (int tr = 0; tr < 2; tr++) {
                for (int i = 0; i < n; i++) b[i] = 0;
                for (int j = 0; j < n; j++)
                    for (int p = A->p[j]; p < A->p[j + 1]; p++) {
                        if (tr) b[j] += A->x[p] * xe[A->i[p]];
                        else b[A->i[p]] += A->x[p] * xe[j];
                    }
                CHECK_EQ_INT(tr ? mbla_klu_solve_t(k, 1, b, n, &st) : mbla_klu_solve(k, 1, b, n, &st), 0);
                for (int i = 0; i < n; i++) CHECK_CLOSE(b[i], xe[i], 1e-9);
            }
            /* refactor at new values (the factors are recomputed, warm) */
            for (int p = 0; p < nz; p++) A->x[p] *= 1.0 + 0.01 * (p % 3);
            CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), 0);
            for (int i = 0; i < n; i++) b[i] = 0;
            for (int j = 0; j < n; j++)
                for (int p = A->p[j]; p < A->p[j + 1]; p++) b[A->i[p]] += A->x[p] * xe[j];
            CHECK_EQ_INT(mbla_klu_solve(k, 1, b, n, &st), 0);
            for (int i = 0; i < n; i++) CHECK_CLOSE(b[i], xe[i], 1e-9);
            for (int p = 0; p < nz; p++) A->x[p] /= 1.0 + 0.01 * (p % 3);
            mbla_klu_free(k);
            /* complex values A (1 + 0.2 i): op(A) x = b for N, T, C */
            double *az = malloc(sizeof(double) * 2 * nz);
            for (int p = 0; p < nz; p++) az[2 * p] = A->x[p], az[2 * p + 1] = 0.2 * A->x[p];
            CHECK_EQ_INT(mbla_kluz_new(A, az, &o, &k, &st), 0);
            const char trs[3] = {'N', 'T', 'C'};
            for (int t = 0; t < 3; t++) {
                for (int i = 0; i < 2 * n; i++) b[i] = 0;
                for (int j = 0; j < n; j++)
                    for (int p = A->p[j]; p < A->p[j + 1]; p++) {
                        double ar = az[2 * p], ai = trs[t] == 'C' ? -az[2 * p + 1] : az[2 * p + 1];
                        int row = trs[t] == 'N' ? A->i[p] : j, col = trs[t] == 'N' ? j : A->i[p];
                        b[2 * row] += ar * xe[2 * col] - ai * xe[2 * col + 1];
                        b[2 * row + 1] += ar * xe[2 * col + 1] + ai * xe[2 * col];
                    }
                CHECK_EQ_INT(mbla_kluz_solve(k, trs[t], 1, b, n, &st), 0);
                for (int i = 0; i < 2 * n; i++) CHECK_CLOSE(b[i], xe[i], 1e-9);
            }
            mbla_klu_free(k);
            free(az);
        }
        free(xe), free(b);
        mbla_csc_free(A);
    }
}

/* mbla_klu_solve_only: the solves after it equal those before, bit for bit (a row-permuted matrix, so
 * the column permutation to the matching is in use, and with equilibration), against a dense LU;
 * refactorizations and condition estimates refuse; the pivot-quality estimate still works. */
TEST(klu_solve_only)
{
    int n = 40;
    mbla_csc *A0 = random_sparse(n, 4, 11, 4.0);
    CHECK(A0 != NULL);
    double *D0 = malloc(sizeof(double) * n * n), *D = malloc(sizeof(double) * n * n);
    mbla_csc_to_dense(A0, D0, n, NULL);
    int *ti = malloc(sizeof(int) * n * n), *tj = malloc(sizeof(int) * n * n), nz = 0;
    double *tx = malloc(sizeof(double) * n * n);
    for (int j = 0; j < n; j++) /* rows shifted by 3: the diagonal moves off, q != identity */
        for (int i = 0; i < n; i++)
            if (D0[i + j * n] != 0) ti[nz] = (i + 3) % n, tj[nz] = j, tx[nz++] = D0[i + j * n];
    mbla_csc *A = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_triplets(n, n, nz, ti, tj, tx, NULL, &A, &st), 0);
    for (int eq = 0; eq < 2; eq++) {
        mbla_klu_opts o;
        mbla_klu_opts_default(&o);
        o.equilibrate = eq;
        mbla_klu *k1 = NULL, *k2 = NULL;
        CHECK_EQ_INT(mbla_klu_new(A, &o, &k1, &st), 0);
        CHECK_EQ_INT(mbla_klu_new(A, &o, &k2, &st), 0);
        double rc1 = 0, rc2 = 0, cest = 0;
        CHECK_EQ_INT(mbla_klu_rcond(k1, &rc1, &st), 0);
        mbla_klu_solve_only(k2);
        CHECK_EQ_INT(mbla_klu_rcond(k2, &rc2, &st), 0);
        CHECK(rc1 == rc2 && rc2 > 0);
        double *b1 = malloc(sizeof(double) * n * 3), *b2 = malloc(sizeof(double) * n * 3);
        double *bd = malloc(sizeof(double) * n * 3);
        unsigned s = 7 + eq;
        for (int q = 0; q < 3 * n; q++) b1[q] = b2[q] = bd[q] = trand(&s);
        CHECK_EQ_INT(mbla_klu_solve(k1, 2, b1, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve(k2, 2, b2, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve_t(k1, 1, b1 + 2 * n, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve_t(k2, 1, b2 + 2 * n, n, &st), 0);
        CHECK(!memcmp(b1, b2, sizeof(double) * n * 3));
        mbla_csc_to_dense(A, D, n, NULL);
        CHECK_EQ_INT(mbla_lu_solve(n, 2, D, n, bd, n, &st), 0);
        for (int q = 0; q < 2 * n; q++) CHECK_CLOSE(b2[q], bd[q], 1e-9); /* cond(A) ~ 1e3 */
        CHECK_EQ_INT(mbla_klu_refactor(k2, A, &st), MBL_EARG);
        CHECK(strstr(st.msg, "solves only") != NULL);
        CHECK_EQ_INT(mbla_klu_condest(k2, A, &cest, &st), MBL_EARG);
        CHECK_EQ_INT(mbla_klu_condest(k1, A, &cest, &st), 0);
        mbla_klu_free(k1), mbla_klu_free(k2);
        free(b1), free(b2), free(bd);
    }
    mbla_klu_solve_only(NULL);
    mbla_csc_free(A), mbla_csc_free(A0);
    free(D0), free(D), free(ti), free(tj), free(tx);
}

/* A copy of the n x n matrix D (dense, column-major) with its rows shifted by `shift`. */
static mbla_csc *shifted_csc(int n, const double *D, int shift)
{
    double *S = malloc(sizeof(double) * n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) S[(i + shift) % n + j * n] = D[i + j * n];
    mbla_csc *A = NULL;
    mbla_csc_from_dense(n, n, S, n, MBLA_DEFAULT, &A, NULL);
    free(S);
    return A;
}

/* mbla_klu_new_taken: the same factors as mbla_klu_new + mbla_klu_condest + mbla_klu_solve_only
 * (solves and estimate bit for bit) with the matrix taken over, whether KLU factors A itself
 * (shift 0: a zero-free diagonal) or a column permutation of it (shift 3); the errors. */
TEST(klu_new_taken)
{
    int n = 40;
    mbla_csc *A0 = random_sparse(n, 4, 13, 4.0);
    CHECK(A0 != NULL);
    double *D0 = malloc(sizeof(double) * n * n);
    mbla_csc_to_dense(A0, D0, n, NULL);
    mbl_status st;
    for (int shift = 0; shift <= 3; shift += 3) {
        mbla_csc *A = shifted_csc(n, D0, shift), *At = shifted_csc(n, D0, shift);
        mbla_klu *k1 = NULL, *k2 = NULL;
        double c1 = 0, c2 = -1, r1 = 0, r2 = -1;
        CHECK_EQ_INT(mbla_klu_new(A, NULL, &k1, &st), 0);
        CHECK_EQ_INT(mbla_klu_condest(k1, A, &c1, &st), 0);
        CHECK_EQ_INT(mbla_klu_new_taken(At, &c2, &k2, &st), 0); /* At is freed */
        CHECK(k2 != NULL && c1 == c2 && c1 > 1.0);
        CHECK_EQ_INT(mbla_klu_rcond(k1, &r1, &st), 0);
        CHECK_EQ_INT(mbla_klu_rcond(k2, &r2, &st), 0);
        CHECK(r1 == r2);
        double *b1 = malloc(sizeof(double) * n * 3), *b2 = malloc(sizeof(double) * n * 3);
        unsigned s = 5 + shift;
        for (int q = 0; q < 3 * n; q++) b1[q] = b2[q] = trand(&s);
        CHECK_EQ_INT(mbla_klu_solve(k1, 2, b1, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve(k2, 2, b2, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve_t(k1, 1, b1 + 2 * n, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve_t(k2, 1, b2 + 2 * n, n, &st), 0);
        CHECK(!memcmp(b1, b2, sizeof(double) * n * 3));
        /* the solution of A x = A xe is xe */
        double *xe = malloc(sizeof(double) * n), *bx = calloc((size_t)n, sizeof(double));
        for (int j = 0; j < n; j++) xe[j] = 1.0 + j;
        for (int j = 0; j < n; j++)
            for (int p = A->p[j]; p < A->p[j + 1]; p++) bx[A->i[p]] += A->x[p] * xe[j];
        CHECK_EQ_INT(mbla_klu_solve(k2, 1, bx, n, &st), 0);
        for (int j = 0; j < n; j++) CHECK_CLOSE(bx[j], xe[j], 1e-9);
        CHECK_EQ_INT(mbla_klu_refactor(k2, A, &st), MBL_EARG); /* kept for solves only */
        /* without an estimate */
        mbla_klu *k3 = NULL;
        CHECK_EQ_INT(mbla_klu_new_taken(shifted_csc(n, D0, shift), NULL, &k3, &st), 0);
        for (int q = 0; q < n; q++) b2[q] = bx[q] = trand(&s);
        CHECK_EQ_INT(mbla_klu_solve(k1, 1, b2, n, &st), 0);
        CHECK_EQ_INT(mbla_klu_solve(k3, 1, bx, n, &st), 0);
        CHECK(!memcmp(b2, bx, sizeof(double) * n));
        mbla_klu_free(k1), mbla_klu_free(k2), mbla_klu_free(k3);
        mbla_csc_free(A);
        free(b1), free(b2), free(xe), free(bx);
    }
    /* a zero column: singular, nothing returned, the matrix freed all the same */
    for (int i = 0; i < n; i++) D0[i + 5 * n] = 0;
    mbla_klu *k = (mbla_klu *)&st; /* not NULL before the call */
    CHECK_EQ_INT(mbla_klu_new_taken(shifted_csc(n, D0, 3), NULL, &k, &st), MBL_ESINGULAR);
    CHECK(k == NULL);
    /* the empty matrix, non-square, NULL */
    mbla_csc *E = NULL, *R = NULL;
    int ti0 = 0, tj0 = 0;
    double tx0 = 1.0, ce = 0;
    CHECK_EQ_INT(mbla_csc_from_triplets(0, 0, 0, &ti0, &tj0, &tx0, NULL, &E, &st), 0);
    CHECK_EQ_INT(mbla_klu_new_taken(E, &ce, &k, &st), 0);
    CHECK(k != NULL && ce == 1.0);
    mbla_klu_free(k);
    CHECK_EQ_INT(mbla_csc_from_triplets(2, 1, 1, &ti0, &tj0, &tx0, NULL, &R, &st), 0);
    CHECK_EQ_INT(mbla_klu_new_taken(R, NULL, &k, &st), MBL_EDIM);
    CHECK(k == NULL);
    CHECK_EQ_INT(mbla_klu_new_taken(NULL, NULL, &k, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_klu_new_taken(shifted_csc(n, D0, 0), NULL, NULL, &st), MBL_EARG);
    mbla_csc_free(A0);
    free(D0);
}

int main(void)
{
    RUN(triplets_duplicates_map_refill);
    RUN(triplets_four_orders);
    RUN(csc_operations_against_dense);
    RUN(csc_check_rejects);
    RUN(klu_against_dense);
    RUN(klu_refactor_fallback);
    RUN(klu_factor_fresh);
    RUN(klu_singular);
    RUN(klu_complex);
    RUN(klu_equilibrate);
    RUN(klu_empty_matrix);
    RUN(klu_saddle_order);
    RUN(klu_saddle_declined_on_chains);
    RUN(klu_saddle_order_declined_early);
    RUN(klu_unscaled_colamd_where_saddle_declined);
    RUN(sparse_allocation_failures);
    RUN(klu_solve_only);
    RUN(klu_new_taken);
    return test_summary("la_sparse");
}
