/* KLU's analysis with the AMD orders of small blocks remembered by pattern (src/la/klu_amd_memo.c)
 * against KLU's own klu_analyze, called here directly on the same column-permuted matrix: the
 * solutions and the factors' sizes bit for bit, on many blocks of few patterns (the memo's hits),
 * more distinct patterns than the memo keeps, and a block larger than it remembers. */
#include "la/la_equilibrate.h"
#include "la_test_util.h"

#include <klu.h>
#include <math.h>
#include <stdlib.h>

/* A block lower triangular matrix: nb diagonal blocks of base to base + 2 rows (a cycle through the block's
 * rows and its diagonal make it one strongly connected component; two more entries of the block
 * placed by its variant b % nvar), then one block of `big` rows, two entries below each column,
 * rows and columns scrambled. */
static mbla_csc *blocks_matrix(int nb, int base, int nvar, int big, int *n_out)
{
    int n = big;
    for (int b = 0; b < nb; b++) n += base + b % 3;
    int cap = 12 * n, nt = 0;
    int *ti = malloc(cap * sizeof *ti), *tj = malloc(cap * sizeof *tj), *rp = malloc(n * sizeof *rp),
        *cp = malloc(n * sizeof *cp);
    double *tx = malloc(cap * sizeof *tx);
    unsigned seed = 11u;
    for (int i = 0; i < n; i++) rp[i] = cp[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int a = (int)((trand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1), c = (int)((trand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1);
        int t = rp[i];
        rp[i] = rp[a], rp[a] = t;
        t = cp[i], cp[i] = cp[c], cp[c] = t;
    }
    for (int b = 0, k1 = 0; b <= nb; b++) {
        int nk = b < nb ? base + b % 3 : big, v = b % nvar;
        for (int j = 0; j < nk; j++) {
            ti[nt] = rp[k1 + j], tj[nt] = cp[k1 + j], tx[nt++] = 5.0 + trand(&seed);
            ti[nt] = rp[k1 + (j + 1) % nk], tj[nt] = cp[k1 + j], tx[nt++] = trand(&seed);
            for (int e = 0; e < 2 && k1 + nk < n; e++) { /* below the block */
                int i = k1 + nk + (int)((trand(&seed) + 1.0) * 0.5 * (n - k1 - nk)) % (n - k1 - nk);
                ti[nt] = rp[i], tj[nt] = cp[k1 + j], tx[nt++] = trand(&seed);
            }
        }
        for (int e = 0; e < 2; e++) { /* the variant's entries: (r, c) with r > c + 1 or r < c */
            int r = (v / (e ? 5 : 1)) % nk, c = (v / (e ? 25 : 3) + 2 * e) % nk;
            if (r == c || r == (c + 1) % nk) continue;
            ti[nt] = rp[k1 + r], tj[nt] = cp[k1 + c], tx[nt++] = trand(&seed);
        }
        k1 += nk;
    }
    CHECK(nt <= cap);
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(n, n, nt, ti, tj, tx, NULL, &A, NULL), 0);
    free(ti), free(tj), free(tx), free(rp), free(cp);
    *n_out = n;
    return A;
}

/* KLU alone (its defaults, as mbla_klu's: AMD, BTF, threshold 0.001, row scaling) on B = A Q with
 * Q the Hopcroft-Karp matching mbla_klu puts on the diagonal: the solution x of A x = b and nnz(L)
 * + nnz(U) */
static void klu_reference(const mbla_csc *A, const double *b, double *x, double *lu_nnz)
{
    int n = A->n, nz = A->p[n], nm = 0;
    int *q = malloc(n * sizeof *q), *bp = malloc((n + 1) * sizeof *bp), *bi = malloc(nz * sizeof *bi);
    double *bx = malloc(nz * sizeof *bx), *y = malloc(n * sizeof *y);
    CHECK_EQ_INT(mbla_csc_maxmatch(A, q, &nm, NULL), 0);
    CHECK_EQ_INT(nm, n);
    bp[0] = 0;
    for (int j = 0, t = 0; j < n; j++) {
        for (int p = A->p[q[j]]; p < A->p[q[j] + 1]; p++) bi[t] = A->i[p], bx[t++] = A->x[p];
        bp[j + 1] = t;
    }
    klu_common c;
    klu_defaults(&c);
    c.halt_if_singular = 1;
    klu_symbolic *s = klu_analyze(n, bp, bi, &c);
    CHECK(s != NULL);
    klu_numeric *num = klu_factor(bp, bi, bx, s, &c);
    CHECK(num != NULL);
    memcpy(y, b, n * sizeof *y);
    CHECK(klu_solve(s, num, n, 1, y, &c));
    for (int i = 0; i < n; i++) x[q[i]] = y[i];
    *lu_nnz = (double)num->lnz + (double)num->unz;
    klu_free_numeric(&num, &c);
    klu_free_symbolic(&s, &c);
    free(q), free(bp), free(bi), free(bx), free(y);
}

/* k's solution of A x = b and the factors' size equal the reference's, bit for bit */
static void same_as_reference(mbla_klu *k, const double *b, const double *xr, double lur, int n)
{
    double *x = malloc(n * sizeof *x), lu = 0;
    memcpy(x, b, n * sizeof *x);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, x, n, NULL), 0);
    CHECK(!memcmp(x, xr, n * sizeof *x));
    mbla_klu_factor_stats(k, &lu, NULL);
    CHECK(lu == lur && lu > 0);
    free(x);
}

/* the general path (mbla_klu_new, mbla_klu_new_taken) and the small path (la_klu_new_small,
 * la_klu_new_taken_small): on the matching's zero-free diagonal both take BTF's blocks
 * (klu_analyze_given) ordered by la_amd_memo_blocks, against klu_analyze's own analysis, with 7
 * patterns (hits), 400 (past the memo's 256), blocks of 1 to 3 rows among them (the natural order
 * klu_analyze keeps there: fails when such a block is ordered by AMD) and a block of 40 rows (past
 * the 32 it remembers) */
TEST(klu_memo_against_klu_analyze)
{
    const int nvars[3] = {7, 400, 7}, bases[3] = {4, 4, 1};
    for (int t = 0; t < 3; t++) {
        int n = 0;
        mbla_csc *A = blocks_matrix(700, bases[t], nvars[t], 40, &n);
        double *b = malloc(n * sizeof *b), *xr = malloc(n * sizeof *xr), lur = 0;
        for (int i = 0; i < n; i++) b[i] = sin(0.3 + i);
        klu_reference(A, b, xr, &lur);
        mbla_klu *k = NULL;
        CHECK_EQ_INT(mbla_klu_new(A, NULL, &k, NULL), 0);
        same_as_reference(k, b, xr, lur, n);
        mbla_klu_free(k), k = NULL;
        CHECK_EQ_INT(la_klu_new_small(A, 0, &k, NULL), 0);
        CHECK_EQ_INT(la_klu_small_blocks(k), 0); /* a block of more than 3 rows: AMD's orders */
        same_as_reference(k, b, xr, lur, n);
        mbla_klu_free(k), k = NULL;
        for (int small = 0; small < 2; small++) {
            mbla_csc *B = NULL;
            double cond = 0;
            CHECK_EQ_INT(mbla_csc_copy(A, &B, NULL), 0);
            CHECK_EQ_INT(small ? la_klu_new_taken_small(B, &cond, &k, NULL) : mbla_klu_new_taken(B, &cond, &k, NULL), 0);
            CHECK(cond > 1);
            same_as_reference(k, b, xr, lur, n);
            mbla_klu_free(k), k = NULL;
        }
        free(b), free(xr);
        mbla_csc_free(A);
    }
    int n = 0;
    mbla_csc *A = blocks_matrix(20, 4, 3, 5, &n);
    mbla_klu *k = NULL;
    ALLOC_FAIL_LOOP(mbla_klu_new(A, NULL, &k, NULL), (mbla_klu_free(k), k = NULL));
    ALLOC_FAIL_LOOP(la_klu_new_small(A, 0, &k, NULL), (mbla_klu_free(k), k = NULL));
    mbla_csc_free(A);
}

int main(void)
{
    RUN(klu_memo_against_klu_analyze);
    return test_summary("la_klu_memo");
}
