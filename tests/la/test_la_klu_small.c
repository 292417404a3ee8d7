/* The short KLU analysis for matrices whose block triangular form has blocks of at most 3 rows
 * (la_klu_new_small, la_klu_new_taken_small in src/la/la_equilibrate.h: the kinematic system and
 * the given states' test of the linearization) against the general path it shortcuts. */
#include "la/la_equilibrate.h"
#include "la_test_util.h"

#include <math.h>
#include <stdlib.h>

/* A block lower triangular matrix of order n whose diagonal blocks have 1, 2, 3 rows in turn
 * (big4: one block of 4 rows at the start), entries below them, its rows and columns scrambled
 * (so that the matching and BTF have work to do); sing: row n / 2 left empty (structurally
 * singular). */
static mbla_csc *small_blocks_matrix(int n, int big4, int sing)
{
    int cap = 40 * n, nt = 0;
    int *ti = malloc(cap * sizeof *ti), *tj = malloc(cap * sizeof *tj), *rp = malloc(n * sizeof *rp),
        *cp = malloc(n * sizeof *cp);
    double *tx = malloc(cap * sizeof *tx);
    unsigned seed = 7u + (unsigned)big4;
    for (int i = 0; i < n; i++) rp[i] = cp[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates, rows and columns apart */
        int a = (int)((trand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1), b = (int)((trand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1);
        int t = rp[i];
        rp[i] = rp[a], rp[a] = t;
        t = cp[i], cp[i] = cp[b], cp[b] = t;
    }
    for (int k1 = 0, s = big4 ? 4 : 1; k1 < n; k1 += s, s = s % 3 + 1) {
        if (k1 + s > n) s = n - k1;
        for (int j = k1; j < k1 + s; j++) {
            for (int i = k1; i < k1 + s; i++) /* the dense diagonal block, its diagonal dominant */
                if (!(sing && i == n / 2)) ti[nt] = rp[i], tj[nt] = cp[j], tx[nt++] = i == j ? 4.0 + trand(&seed) : trand(&seed);
            for (int e = 0; e < 2 && k1 + s < n; e++) { /* two entries below */
                int i = k1 + s + (int)((trand(&seed) + 1.0) * 0.5 * (n - k1 - s)) % (n - k1 - s);
                if (!(sing && i == n / 2)) ti[nt] = rp[i], tj[nt] = cp[j], tx[nt++] = trand(&seed);
            }
        }
    }
    CHECK(nt <= cap);
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(n, n, nt, ti, tj, tx, NULL, &A, NULL), 0);
    free(ti), free(tj), free(tx), free(rp), free(cp);
    return A;
}

/* the factorizations k0 and k1 of A: rcond, condest and a solve and a transposed solve bit for bit */
static void same_factors(mbla_klu *k0, mbla_klu *k1, const mbla_csc *A)
{
    int n = A->n;
    double r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    double *x0 = malloc(2 * n * sizeof *x0), *x1 = malloc(2 * n * sizeof *x1);
    CHECK_EQ_INT(mbla_klu_rcond(k0, &r0, NULL), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k1, &r1, NULL), 0);
    CHECK_EQ_INT(mbla_klu_condest(k0, A, &c0, NULL), 0);
    CHECK_EQ_INT(mbla_klu_condest(k1, A, &c1, NULL), 0);
    CHECK(r0 == r1 && c0 == c1 && c0 > 1);
    for (int i = 0; i < 2 * n; i++) x0[i] = x1[i] = sin(0.3 + i);
    CHECK_EQ_INT(mbla_klu_solve(k0, 2, x0, n, NULL), 0);
    CHECK_EQ_INT(mbla_klu_solve(k1, 2, x1, n, NULL), 0);
    CHECK(!memcmp(x0, x1, 2 * n * sizeof *x0));
    CHECK_EQ_INT(mbla_klu_solve_t(k0, 1, x0, n, NULL), 0);
    CHECK_EQ_INT(mbla_klu_solve_t(k1, 1, x1, n, NULL), 0);
    CHECK(!memcmp(x0, x1, n * sizeof *x0));
    free(x0), free(x1);
}

/* la_klu_new_small and la_klu_new_taken_small against the general path (la_klu_new_unscaled,
 * mbla_klu_new, mbla_klu_new_taken) on blocks of at most 3 rows: the short analysis taken, the
 * same rcond, condest and solutions bit for bit; with a block of 4 rows (AMD orders it) the
 * short analysis declined and again the same; a structurally singular matrix refused as by the
 * general path. */
TEST(klu_small_blocks_analysis)
{
    for (int big4 = 0; big4 < 2; big4++) {
        mbla_csc *A = small_blocks_matrix(301, big4, 0);
        mbla_klu *k0 = NULL, *k1 = NULL;
        CHECK_EQ_INT(la_klu_new_unscaled(A, NULL, &k0, NULL), 0);
        CHECK_EQ_INT(la_klu_new_small(A, LA_KLU_UNSCALED, &k1, NULL), 0);
        CHECK_EQ_INT(la_klu_small_blocks(k1), !big4);
        CHECK_EQ_INT(la_klu_small_blocks(k0), 0);
        same_factors(k0, k1, A);
        mbla_klu_free(k0), mbla_klu_free(k1), k0 = k1 = NULL;
        CHECK_EQ_INT(mbla_klu_new(A, NULL, &k0, NULL), 0);
        CHECK_EQ_INT(la_klu_new_small(A, 0, &k1, NULL), 0);
        same_factors(k0, k1, A);
        mbla_klu_free(k0), mbla_klu_free(k1), k0 = k1 = NULL;
        mbla_csc *B0 = NULL, *B1 = NULL;
        double c0 = 0, c1 = 0;
        CHECK_EQ_INT(mbla_csc_copy(A, &B0, NULL), 0);
        CHECK_EQ_INT(mbla_csc_copy(A, &B1, NULL), 0);
        CHECK_EQ_INT(mbla_klu_new_taken(B0, &c0, &k0, NULL), 0);
        CHECK_EQ_INT(la_klu_new_taken_small(B1, &c1, &k1, NULL), 0);
        CHECK_EQ_INT(la_klu_small_blocks(k1), !big4);
        CHECK(c0 == c1 && c0 > 1);
        double *x0 = malloc(A->n * sizeof *x0), *x1 = malloc(A->n * sizeof *x1);
        for (int i = 0; i < A->n; i++) x0[i] = x1[i] = cos(0.7 * i);
        CHECK_EQ_INT(mbla_klu_solve(k0, 1, x0, A->n, NULL), 0);
        CHECK_EQ_INT(mbla_klu_solve(k1, 1, x1, A->n, NULL), 0);
        CHECK(!memcmp(x0, x1, A->n * sizeof *x0));
        free(x0), free(x1);
        mbla_klu_free(k0), mbla_klu_free(k1), mbla_csc_free(A);
    }
    mbla_csc *A = small_blocks_matrix(31, 0, 0);
    mbla_klu *k = NULL;
    ALLOC_FAIL_LOOP(la_klu_new_small(A, LA_KLU_UNSCALED, &k, NULL), (mbla_klu_free(k), k = NULL));
    mbla_csc_free(A);
    mbla_csc *S = small_blocks_matrix(31, 0, 1);
    mbla_klu *k0 = NULL, *k1 = NULL;
    int r0 = la_klu_new_unscaled(S, NULL, &k0, NULL), r1 = la_klu_new_small(S, LA_KLU_UNSCALED, &k1, NULL);
    CHECK(r0 != 0 && r1 == r0 && !k0 && !k1);
    mbla_csc_free(S);
}

int main(void)
{
    RUN(klu_small_blocks_analysis);
    return test_summary("la_klu_small");
}
