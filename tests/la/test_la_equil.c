/* mbla_csc_equilibrate: exact power-of-2 scaling, unit max-norm rows and columns within a
 * factor 2, the solution of the scaled system unscaled equals the original one, and the
 * condition estimate of a badly scaled but regular matrix drops to that of its well-scaled
 * core while a singular one stays singular. */
#include "la_test_util.h"

#include <math.h>
#include <stdlib.h>

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

int main(void)
{
    RUN(equilibrate_exact_and_balanced);
    RUN(equilibrate_keeps_singularity);
    RUN(equilibrate_edge_cases);
    return test_summary("la_equil");
}
