/* Tests of the maximum transversal (mbla_csc_maxmatch) and of KLU on matrices whose columns it
 * permutes (a zero diagonal): the matching size against BTF's own btf_maxtrans, the solves
 * against dense LU. */
#include "la_test_util.h"

#include <btf.h>
#include <stdlib.h>

/* n x n with `per_col` random entries per column and, when full, the entries (perm[j], j) of a
 * random permutation but an empty diagonal: structurally regular, the identity no transversal */
static mbla_csc *random_pattern(int n, int per_col, unsigned seed, int full)
{
    int nz = n * (per_col + 1), q = 0;
    int *ti = malloc(sizeof(int) * nz), *tj = malloc(sizeof(int) * nz), *perm = malloc(sizeof(int) * n);
    double *tx = malloc(sizeof(double) * nz);
    int *sig = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) sig[i] = i;
    for (int i = n - 1; i > 0; i--) { /* a random order sig, then the cycle sig[0] -> sig[1] -> ... */
        int r = (int)((trand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1), t = sig[i];
        sig[i] = sig[r], sig[r] = t;
    }
    for (int i = 0; i < n; i++) perm[sig[i]] = sig[(i + 1) % n]; /* never perm[j] = j */
    free(sig);
    for (int j = 0; j < n; j++) {
        if (full && perm[j] != j) ti[q] = perm[j], tj[q] = j, tx[q++] = 20.0 + trand(&seed); /* dominant: well conditioned */
        for (int t = 0; t < per_col; t++) {
            int i = (int)((trand(&seed) + 1.0) * 0.5 * n) % n;
            if (i == j) continue;
            ti[q] = i, tj[q] = j, tx[q++] = 0.5 * trand(&seed);
        }
    }
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(n, n, q, ti, tj, tx, NULL, &A, NULL);
    free(ti), free(tj), free(tx), free(perm);
    return A;
}

static void check_matching(const mbla_csc *A, const int *rm, int nm)
{
    int *used = calloc((size_t)A->n + 1, sizeof(int)), cnt = 0;
    for (int i = 0; i < A->m; i++) {
        if (rm[i] < 0) continue;
        int j = rm[i], hit = 0;
        CHECK(j < A->n);
        CHECK(!used[j]);
        used[j] = 1;
        for (int p = A->p[j]; p < A->p[j + 1]; p++) hit |= A->i[p] == i;
        CHECK_MSG(hit, "row %d matched to column %d without an entry", i, j);
        cnt++;
    }
    CHECK_EQ_INT(cnt, nm);
    free(used);
}

TEST(maxmatch_against_btf)
{
    for (int trial = 0; trial < 40; trial++) {
        int n = 5 + 37 * trial, full = trial % 3 != 2, per = trial % 4;
        mbla_csc *A = random_pattern(n, per, 1000u + (unsigned)trial, full);
        CHECK(A != NULL);
        int *rm = malloc(sizeof(int) * n), nm = -1;
        mbl_status st;
        CHECK_EQ_INT(mbla_csc_maxmatch(A, rm, &nm, &st), 0);
        check_matching(A, rm, nm);
        /* BTF's maximum transversal (an independent implementation) finds as many */
        int *Match = malloc(sizeof(int) * n), *Work = malloc(sizeof(int) * 5 * n);
        double work = 0;
        int nb = btf_maxtrans(n, n, A->p, A->i, 0, &work, Match, Work);
        CHECK_EQ_INT(nm, nb);
        if (full) CHECK_EQ_INT(nm, n);
        free(rm), free(Match), free(Work);
        mbla_csc_free(A);
    }
    mbl_status st;
    int rm[1];
    CHECK_EQ_INT(mbla_csc_maxmatch(NULL, rm, NULL, &st), MBL_EARG);
}

/* KLU on a matrix with an empty diagonal (its columns are permuted inside mbla_klu): real and
 * complex solves, plain and transposed, against dense LU / the product. */
TEST(klu_zero_diagonal)
{
    int n = 200;
    mbla_csc *A = random_pattern(n, 2, 77, 1);
    CHECK(A != NULL);
    double *D = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * 2);
    double *bd = malloc(sizeof(double) * n * 2), *r = malloc(sizeof(double) * n);
    unsigned s = 3;
    for (int k = 0; k < 2 * n; k++) b[k] = bd[k] = trand(&s);
    mbl_status st;
    mbla_klu *k = NULL;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(k, 2, b, n, &st), 0);
    mbla_csc_to_dense(A, D, n, NULL);
    CHECK_EQ_INT(mbla_lu_solve(n, 2, D, n, bd, n, &st), 0);
    for (int q = 0; q < 2 * n; q++) CHECK_CLOSE(b[q], bd[q], 1e-10 * (1 + fabs(bd[q])));
    for (int q = 0; q < n; q++) b[q] = 1.0 + q % 5;
    mbla_csc_gemv_t(A, 1.0, b, 0.0, r, NULL);
    CHECK_EQ_INT(mbla_klu_solve_t(k, 1, r, n, &st), 0);
    for (int q = 0; q < n; q++) CHECK_CLOSE(r[q], 1.0 + q % 5, 1e-10);
    /* refactor at new values and the condition estimate (a column permutation keeps it) */
    for (int q = 0; q < mbla_csc_nnz(A); q++) A->x[q] *= 1.0 + 0.2 * trand(&s);
    CHECK_EQ_INT(mbla_klu_refactor(k, A, &st), 0);
    for (int q = 0; q < n; q++) b[q] = trand(&s);
    mbla_csc_gemv(A, 1.0, b, 0.0, r, NULL);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, r, n, &st), 0);
    for (int q = 0; q < n; q++) CHECK_CLOSE(r[q], b[q], 1e-10);
    double cest = 0;
    CHECK_EQ_INT(mbla_klu_condest(k, A, &cest, &st), 0);
    CHECK(cest >= 1.0);
    mbla_klu_free(k);
    /* complex */
    int nz = mbla_csc_nnz(A);
    double *az = malloc(sizeof(double) * 2 * nz), *xe = malloc(sizeof(double) * 2 * n);
    for (int q = 0; q < nz; q++) az[2 * q] = A->x[q], az[2 * q + 1] = 0.5 * trand(&s);
    for (int q = 0; q < 2 * n; q++) xe[q] = trand(&s);
    CHECK_EQ_INT(mbla_kluz_new(A, az, NULL, &k, &st), 0);
    const char tr[3] = {'N', 'T', 'C'};
    for (int t = 0; t < 3; t++) {
        for (int q = 0; q < 2 * n; q++) b[q] = 0;
        for (int j = 0; j < n; j++)
            for (int q = A->p[j]; q < A->p[j + 1]; q++) {
                int i = A->i[q], row = tr[t] == 'N' ? i : j, col = tr[t] == 'N' ? j : i;
                double ar = az[2 * q], ai = tr[t] == 'C' ? -az[2 * q + 1] : az[2 * q + 1];
                b[2 * row] += ar * xe[2 * col] - ai * xe[2 * col + 1];
                b[2 * row + 1] += ar * xe[2 * col + 1] + ai * xe[2 * col];
            }
        CHECK_EQ_INT(mbla_kluz_solve(k, tr[t], 1, b, n, &st), 0);
        for (int q = 0; q < 2 * n; q++) CHECK_CLOSE(b[q], xe[q], 1e-10);
    }
    mbla_klu_free(k);
    free(D), free(b), free(bd), free(r), free(az), free(xe);
    mbla_csc_free(A);
}

/* A singular matrix with a zero-free transversal after permutation: the zero pivot is reported
 * in A's own column numbering (column 1, a copy of column 0, on a cycle pattern). */
TEST(klu_singular_column_numbering)
{
    /* A = [0 0 1; 1 1 0; 1 1 1]: rows 1, 2 of columns 0 and 1 equal -> singular. */
    int ti[] = {1, 2, 1, 2, 0, 2}, tj[] = {0, 0, 1, 1, 2, 2};
    double tx[] = {1, 1, 1, 1, 1, 1};
    mbla_csc *A = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 6, ti, tj, tx, NULL, &A, &st), 0);
    mbla_klu *k = NULL;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, &st), MBL_ESINGULAR);
    CHECK_MSG(strstr(st.msg, "column 0") || strstr(st.msg, "column 1"), "%s", st.msg);
    mbla_klu_free(k);
    mbla_csc_free(A);
}

/* Allocation failures inside the matching and the permuted analysis are MBL_ENOMEM. */
TEST(klu_permuted_alloc_failures)
{
    mbla_csc *A = random_pattern(30, 2, 5, 1);
    mbla_klu *k = NULL;
    mbl_status st;
    ALLOC_FAIL_LOOP(mbla_klu_new(A, NULL, &k, &st), (mbla_klu_free(k), k = NULL));
    mbla_csc_free(A);
}

int main(void)
{
    RUN(maxmatch_against_btf);
    RUN(klu_zero_diagonal);
    RUN(klu_singular_column_numbering);
    RUN(klu_permuted_alloc_failures);
    return test_summary("la_match");
}
