/* mbla_csc_equilibrate: exact power-of-2 scaling, unit max-norm rows and columns within a
 * factor 2, the solution of the scaled system unscaled equals the original one, and the
 * condition estimate of a badly scaled but regular matrix drops to that of its well-scaled
 * core while a singular one stays singular. */
#include "la/la_equilibrate.h"
#include "la_test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* B (n x n, every entry of magnitude in [1/2, 1), random signs: regular, moderately
 * conditioned) with rows and columns multiplied by random powers of ten between 1e-8 and 1e8
 * (not powers of 2: the scaling cannot be undone by reading the exponents); dr, dc receive the
 * multipliers, *core the unscaled B. With every entry of B within a factor 2 of the others,
 * any scaling whose rows and columns have max-norm in [1/2, 2) is diag(a) B diag(b) with a and b
 * spread by at most a factor 8: its condition is within a constant factor of B's. */
static mbla_csc *badly_scaled(int n, unsigned seed, double *dr, double *dc, mbla_csc **core)
{
    int nz = n * n, q = 0;
    int *ti = malloc(sizeof(int) * nz), *tj = malloc(sizeof(int) * nz);
    double *tx = malloc(sizeof(double) * nz);
    for (int i = 0; i < n; i++) {
        dr[i] = pow(10.0, round(8 * trand(&seed)));
        dc[i] = pow(10.0, round(8 * trand(&seed)));
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double u = trand(&seed);
            ti[q] = i, tj[q] = j, tx[q++] = (u < 0 ? -1 : 1) * (0.5 + 0.25 * (fabs(u) + 0.5 * (i == j)));
        }
    mbla_csc_from_triplets(n, n, q, ti, tj, tx, NULL, core, NULL);
    for (int k = 0; k < q; k++) tx[k] *= dr[ti[k]] * dc[tj[k]];
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(n, n, q, ti, tj, tx, NULL, &A, NULL);
    free(ti), free(tj), free(tx);
    return A;
}

static int is_pow2(double x)
{
    int e;
    return x > 0 && frexp(x, &e) == 0.5;
}

TEST(equilibrate_exact_and_balanced)
{
    const int n = 60;
    double dr[60], dc[60], r[60], c[60], work[120];
    mbla_csc *B = NULL, *A = badly_scaled(n, 7u, dr, dc, &B), *A0 = NULL;
    mbl_status st;
    CHECK(A != NULL);
    if (!A) return;
    CHECK_EQ_INT(mbla_csc_copy(A, &A0, &st), 0);
    int it = mbla_csc_equilibrate(A, MBLA_DEFAULT, 0, r, c, work, &st);
    printf("  %d sweeps\n", it);
    CHECK(it > 0 && it < MBLA_EQUILIBRATE_MAXITER_DEFAULT);
    /* exact: A == diag(r) A0 diag(c) bit for bit, with power-of-2 factors */
    int exact = 1;
    for (int j = 0; j < n; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) exact &= A->x[p] == r[A->i[p]] * A0->x[p] * c[j];
    CHECK(exact);
    for (int i = 0; i < n; i++) CHECK(is_pow2(r[i]) && is_pow2(c[i]));
    /* unit max-norm rows and columns within a factor 2 */
    double rmax[60] = {0};
    for (int j = 0; j < n; j++) {
        double cm = 0;
        for (int p = A->p[j]; p < A->p[j + 1]; p++) {
            cm = fmax(cm, fabs(A->x[p]));
            rmax[A->i[p]] = fmax(rmax[A->i[p]], fabs(A->x[p]));
        }
        CHECK_MSG(cm >= 0.5 && cm < 2.0, "column %d max-norm %g", j, cm);
    }
    for (int i = 0; i < n; i++) CHECK_MSG(rmax[i] >= 0.5 && rmax[i] < 2.0, "row %d max-norm %g", i, rmax[i]);

    /* warm start from these factors on a fresh copy: nothing left to do, the same matrix */
    mbla_csc *A2 = NULL;
    CHECK_EQ_INT(mbla_csc_copy(A0, &A2, &st), 0);
    double r2[60], c2[60];
    memcpy(r2, r, sizeof r2);
    memcpy(c2, c, sizeof c2);
    if (A2) {
        CHECK_EQ_INT(mbla_csc_equilibrate(A2, MBLA_DEFAULT, 1, r2, c2, work, &st), 0);
        CHECK(!memcmp(A2->x, A->x, sizeof(double) * (size_t)A->p[n]));
        /* and from factors off by up to 2^10: refined back to balanced norms, still exact */
        memcpy(A2->x, A0->x, sizeof(double) * (size_t)A0->p[n]);
        for (int i = 0; i < n; i++) r2[i] = ldexp(1.0, (i % 21) - 10), c2[i] = ldexp(1.0, 10 - (i % 17));
        CHECK(mbla_csc_equilibrate(A2, MBLA_DEFAULT, 1, r2, c2, work, &st) > 0);
        int ok = 1;
        for (int j = 0; j < n; j++)
            for (int p = A2->p[j]; p < A2->p[j + 1]; p++) {
                ok &= A2->x[p] == r2[A2->i[p]] * A0->x[p] * c2[j];
                ok &= fabs(A2->x[p]) < 2.0;
            }
        CHECK(ok);
    }
    mbla_csc_free(A2);

    /* the condition: huge before, that of the well-scaled core after */
    mbla_klu *k0 = NULL, *k1 = NULL, *kb = NULL;
    double c0 = 0, c1 = 0, cb = 0;
    CHECK_EQ_INT(mbla_klu_new(B, NULL, &kb, &st), 0);
    if (kb) CHECK_EQ_INT(mbla_klu_condest(kb, B, &cb, &st), 0);
    CHECK_EQ_INT(mbla_klu_new(A0, NULL, &k0, &st), 0);
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k1, &st), 0);
    if (k0 && k1) {
        CHECK_EQ_INT(mbla_klu_condest(k0, A0, &c0, &st), 0);
        CHECK_EQ_INT(mbla_klu_condest(k1, A, &c1, &st), 0);
        printf("  condition estimate %.3g unscaled, %.3g equilibrated, %.3g of the well-scaled core\n", c0, c1, cb);
        CHECK(c0 > 1e12);
        CHECK(cb > 0 && c1 < 64 * 64 * cb);
        /* solution unchanged: A0 x = b as x = diag(c) A^-1 diag(r) b, x known */
        double x[60], b[60], y[60];
        unsigned s = 3u;
        for (int i = 0; i < n; i++) x[i] = trand(&s) / dc[i]; /* of the size the units give */
        mbla_csc_gemv(A0, 1.0, x, 0.0, b, &st);
        for (int i = 0; i < n; i++) y[i] = r[i] * b[i];
        CHECK_EQ_INT(mbla_klu_solve(k1, 1, y, n, &st), 0);
        double err = 0;
        for (int i = 0; i < n; i++) err = fmax(err, fabs(c[i] * y[i] - x[i]) / fabs(x[i]));
        printf("  largest relative error of a component of the solution %.3g\n", err);
        CHECK(err < 1e-10); /* cond 1.8e3: about 1e-13 expected; unscaled (1.9e30) anything */
    }
    mbla_klu_free(k0);
    mbla_klu_free(k1);
    mbla_klu_free(kb);
    mbla_csc_free(A);
    mbla_csc_free(A0);
    mbla_csc_free(B);
}

/* a singular matrix stays singular: two rows proportional, in wildly different units */
TEST(equilibrate_keeps_singularity)
{
    /* [1 2 0; 3 1 1; 1e9 2e9 0] (row 3 = 1e9 row 1): rank 2 */
    int ti[] = {0, 1, 2, 0, 1, 2, 1};
    int tj[] = {0, 0, 0, 1, 1, 1, 2};
    double tx[] = {1, 3, 1e9, 2, 1, 2e9 * (1 + 1e-15), 1};
    mbla_csc *A = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 7, ti, tj, tx, NULL, &A, &st), 0);
    double r[3], c[3], w[6];
    CHECK(mbla_csc_equilibrate(A, MBLA_DEFAULT, 0, r, c, w, &st) >= 0);
    mbla_klu *k = NULL;
    int rc = mbla_klu_new(A, NULL, &k, &st);
    double cond = INFINITY;
    if (!rc) CHECK_EQ_INT(mbla_klu_condest(k, A, &cond, &st), 0);
    printf("  nearly singular after equilibration: rc %d, condition estimate %.3g\n", rc, cond);
    CHECK(rc == MBL_ESINGULAR || cond > 1e13);
    mbla_klu_free(k);
    mbla_csc_free(A);
}

TEST(equilibrate_edge_cases)
{
    mbl_status st;
    /* zero row and column keep factor 1; a scalar goes to [1/2, 2) */
    int ti[] = {0, 2}, tj[] = {0, 2};
    double tx[] = {3e-20, 5e30};
    mbla_csc *A = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(3, 3, 2, ti, tj, tx, NULL, &A, &st), 0);
    double r[3], c[3], w[6];
    CHECK(mbla_csc_equilibrate(A, MBLA_DEFAULT, 0, r, c, w, &st) > 0);
    CHECK(r[1] == 1.0 && c[1] == 1.0);
    CHECK(fabs(A->x[0]) >= 0.5 && fabs(A->x[0]) < 2.0);
    CHECK(fabs(A->x[1]) >= 0.5 && fabs(A->x[1]) < 2.0);
    CHECK(A->x[0] == r[0] * 3e-20 * c[0] && A->x[1] == r[2] * 5e30 * c[2]);
    /* maxiter 0: nothing changes */
    double before = A->x[1];
    A->x[1] = 1e10;
    CHECK_EQ_INT(mbla_csc_equilibrate(A, 0, 0, r, c, w, &st), 0);
    CHECK(A->x[1] == 1e10 && r[2] == 1.0 && c[2] == 1.0);
    (void)before;
    /* bad arguments */
    CHECK_EQ_INT(mbla_csc_equilibrate(NULL, -1, 0, r, c, w, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_csc_equilibrate(A, -1, 0, NULL, c, w, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_csc_equilibrate(A, -1, 0, r, c, NULL, &st), MBL_EARG);
    mbla_csc_free(A);
    /* the empty matrix */
    mbla_csc *E = NULL;
    CHECK_EQ_INT(mbla_csc_new(0, 0, 0, &E, &st), 0);
    CHECK_EQ_INT(mbla_csc_equilibrate(E, -1, 0, NULL, NULL, NULL, &st), 0);
    mbla_csc_free(E);
}

/* The sweeps as first written (session 25): the max-norms in one pass, the factors from frexp
 * (the power of 2 nearest 1 / sqrt), then one pass to apply them. The reference for the
 * library's, which takes the factors from the exponent's bits, applies a warm start in the
 * first pass of norms and (la_csc_equilibrate_ws) the next sweep's norms in the pass that applies
 * the factors: the same factors and matrix, bit for bit. */
static double ref_factor(double x)
{
    if (!(x > 0 && isfinite(x))) return 1.0;
    int e = 0;
    frexp(x, &e); /* x = f 2^e, f in [1/2, 1): floor(log2 x) = e - 1 */
    int t = e - 1, s = t >= 0 ? (t + 1) / 2 : -((-t) / 2);
    return ldexp(1.0, -s);
}

static int ref_equilibrate(mbla_csc *A, int maxiter, int warm, double *r, double *c)
{
    int m = A->m, n = A->n, it = 0;
    double *fr = calloc((size_t)m + 1, sizeof *fr), *fc = calloc((size_t)n + 1, sizeof *fc);
    if (warm) {
        for (int j = 0; j < n; j++)
            for (int p = A->p[j]; p < A->p[j + 1]; p++) A->x[p] *= r[A->i[p]] * c[j];
    } else {
        for (int i = 0; i < m; i++) r[i] = 1.0;
        for (int j = 0; j < n; j++) c[j] = 1.0;
    }
    for (; it < maxiter; it++) {
        for (int i = 0; i < m; i++) fr[i] = 0.0;
        for (int j = 0; j < n; j++) {
            fc[j] = 0.0;
            for (int p = A->p[j]; p < A->p[j + 1]; p++) {
                double a = fabs(A->x[p]);
                if (a > fc[j]) fc[j] = a;
                if (a > fr[A->i[p]]) fr[A->i[p]] = a;
            }
        }
        int changed = 0;
        for (int i = 0; i < m; i++) fr[i] = ref_factor(fr[i]), changed |= fr[i] != 1.0;
        for (int j = 0; j < n; j++) fc[j] = ref_factor(fc[j]), changed |= fc[j] != 1.0;
        if (!changed) break;
        for (int i = 0; i < m; i++) r[i] *= fr[i];
        for (int j = 0; j < n; j++) {
            c[j] *= fc[j];
            for (int p = A->p[j]; p < A->p[j + 1]; p++) A->x[p] *= fr[A->i[p]] * fc[j];
        }
    }
    free(fr), free(fc);
    return it;
}

/* bitwise equality of n doubles (NaN payloads and signed zeros included) */
static int same_bits(const double *a, const double *b, int n)
{
    return n <= 0 || !memcmp(a, b, (size_t)n * sizeof *a);
}

TEST(equilibrate_matches_reference)
{
    mbl_status st;
    unsigned seed = 11u;
    int cases = 0, bad = 0;
    for (int trial = 0; trial < 60; trial++) {
        int m = 1 + trial % 9, n = 1 + (trial * 7) % 11, nz = 0;
        int *ti = malloc(sizeof(int) * (size_t)(m * n)), *tj = malloc(sizeof(int) * (size_t)(m * n));
        double *tx = malloc(sizeof(double) * (size_t)(m * n));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double u = trand(&seed);
                if (fabs(u) < 0.3) continue; /* sparse, with empty rows and columns now and then */
                double v = (u < 0 ? -1 : 1) * ldexp(0.5 + fabs(trand(&seed)), (int)round(60 * trand(&seed)));
                /* the special values: norms exactly 1/2, 1, 2, subnormal, zero, -0, inf, NaN, huge */
                switch ((int)(fabs(trand(&seed)) * 40)) {
                case 0: v = 0.5; break;
                case 1: v = -1.0; break;
                case 2: v = 2.0; break;
                case 3: v = 1e-310; break;
                case 4: v = 0.0; break;
                case 5: v = -0.0; break;
                case 6: v = trial % 3 == 0 ? INFINITY : 3.0; break;
                case 7: v = trial % 4 == 0 ? NAN : 5.0; break;
                case 8: v = 1e300; break;
                case 9: v = ldexp(1.0, -1022); break;
                default: break;
                }
                ti[nz] = i, tj[nz] = j, tx[nz++] = v;
            }
        mbla_csc *A0 = NULL;
        CHECK_EQ_INT(mbla_csc_from_triplets(m, n, nz, ti, tj, tx, NULL, &A0, &st), 0);
        free(ti), free(tj), free(tx);
        if (!A0) continue;
        for (int warm = 0; warm < 2; warm++)
            for (int maxiter = 0; maxiter < 5; maxiter++) {
                int mi = maxiter == 4 ? MBLA_EQUILIBRATE_MAXITER_DEFAULT : maxiter;
                mbla_csc *A[3] = {NULL, NULL, NULL};
                double r[3][10], c[3][12], w[2 * 10 + 12], it[3];
                for (int v = 0; v < 3; v++) {
                    mbla_csc_copy(A0, &A[v], &st);
                    for (int i = 0; i < m; i++) r[v][i] = warm ? ldexp(1.0, (i * 5 + trial) % 13 - 6) : 7.0;
                    for (int j = 0; j < n; j++) c[v][j] = warm ? ldexp(1.0, 4 - (j * 3 + trial) % 9) : 7.0;
                }
                if (!A[0] || !A[1] || !A[2]) {
                    bad++;
                    for (int v = 0; v < 3; v++) mbla_csc_free(A[v]);
                    continue;
                }
                it[0] = ref_equilibrate(A[0], mi, warm, r[0], c[0]);
                it[1] = mbla_csc_equilibrate(A[1], maxiter == 4 ? -1 : mi, warm, r[1], c[1], w, &st);
                it[2] = la_csc_equilibrate_ws(A[2], maxiter == 4 ? -1 : mi, warm, r[2], c[2], w);
                int nnz = A0->p[n];
                for (int v = 1; v < 3; v++) {
                    int ok = it[v] == it[0] && same_bits(A[v]->x, A[0]->x, nnz) && same_bits(r[v], r[0], m) &&
                             same_bits(c[v], c[0], n);
                    if (!ok) bad++;
                    CHECK_MSG(ok, "trial %d (%d x %d), warm %d, maxiter %d, %s: differs from the reference", trial, m,
                              n, warm, mi, v == 1 ? "mbla_csc_equilibrate" : "la_csc_equilibrate_ws");
                }
                cases++;
                for (int v = 0; v < 3; v++) mbla_csc_free(A[v]);
            }
        mbla_csc_free(A0);
    }
    printf("  %d cases against the reference, %d differ\n", cases, bad);
    CHECK(cases >= 500 && bad == 0);
}

/* la_klu_new_unscaled on an equilibrated matrix: the factors of the general path it shortcuts
 * (mbla_klu_new, then KLU's row scaling off and a fresh factorization: rcond and solves bit for
 * bit), which differ from the row-scaled ones (rows not equilibrated exactly to max 1: KLU's
 * scaling would move the pivots' ratio). */
TEST(klu_unscaled_matches_scaling_off)
{
    mbl_status st;
    int n = 12;
    double dr[12], dc[12], r[12], c[12], work[3 * 12];
    mbla_csc *B = NULL, *A = badly_scaled(n, 29u, dr, dc, &B);
    mbla_csc_free(B);
    la_csc_equilibrate_ws(A, MBLA_EQUILIBRATE_MAXITER_DEFAULT, 0, r, c, work);
    mbla_klu *ks = NULL, *k0 = NULL, *k1 = NULL;
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &ks, &st), 0); /* with KLU's scaling */
    CHECK_EQ_INT(mbla_klu_new(A, NULL, &k0, &st), 0);
    CHECK_EQ_INT(mbla_klu_set_row_scale(k0, 0, &st), 0);
    CHECK_EQ_INT(mbla_klu_factor(k0, A, &st), 0); /* the general path: scaling off, factored again */
    CHECK_EQ_INT(la_klu_new_unscaled(A, NULL, &k1, &st), 0);
    double rs = 0, r0 = -1, r1 = -2;
    CHECK_EQ_INT(mbla_klu_rcond(ks, &rs, &st), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k0, &r0, &st), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k1, &r1, &st), 0);
    CHECK(r0 == r1 && r0 > 0 && r0 != rs);
    double b0[12], b1[12], bs[12];
    unsigned s = 3u;
    for (int i = 0; i < n; i++) b0[i] = b1[i] = bs[i] = trand(&s);
    CHECK_EQ_INT(mbla_klu_solve(k0, 1, b0, n, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(k1, 1, b1, n, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(ks, 1, bs, n, &st), 0);
    CHECK(same_bits(b0, b1, n));
    for (int i = 0; i < n; i++) CHECK_CLOSE(b0[i], bs[i], 1e-10 * (1.0 + fabs(bs[i])));
    /* a refactorization keeps the scaling off: the same as a fresh one */
    CHECK_EQ_INT(mbla_klu_refactor(k1, A, &st), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k1, &r1, &st), 0);
    CHECK(r1 == r0);
    /* the scaling back on (opoint's raw steps after opoint_sub_restart): mbla_klu_new's factors again,
     * by a fresh factorization and by a refactorization */
    CHECK_EQ_INT(mbla_klu_set_row_scale(k1, 1, &st), 0);
    CHECK_EQ_INT(mbla_klu_factor(k1, A, &st), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k1, &r1, &st), 0);
    CHECK(r1 == rs);
    CHECK_EQ_INT(mbla_klu_set_row_scale(k0, 1, &st), 0);
    CHECK_EQ_INT(mbla_klu_refactor(k0, A, &st), 0);
    CHECK_EQ_INT(mbla_klu_rcond(k0, &r0, &st), 0);
    CHECK(r0 == rs);
    for (int i = 0; i < n; i++) b0[i] = b1[i] = trand(&s);
    CHECK_EQ_INT(mbla_klu_solve(k0, 1, b0, n, &st), 0);
    CHECK_EQ_INT(mbla_klu_solve(ks, 1, b1, n, &st), 0);
    CHECK(same_bits(b0, b1, n));
    mbla_klu_free(ks), mbla_klu_free(k0), mbla_klu_free(k1);
    mbla_csc_free(A);
}

int main(void)
{
    RUN(equilibrate_exact_and_balanced);
    RUN(equilibrate_keeps_singularity);
    RUN(equilibrate_edge_cases);
    RUN(equilibrate_matches_reference);
    RUN(klu_unscaled_matches_scaling_off);
    return test_summary("la_equil");
}
