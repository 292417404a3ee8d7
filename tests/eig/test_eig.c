/* Tests of src/eig: every strategy against a closed form, the strategy picked from the structure,
 * backward errors at the rounding level, and the full pipeline (model -> mbl_modal) picking the
 * solver and reporting it. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eig/eig.h"
#include "mblin/la.h"
#include "mblin/model.h"
#include "test.h"

#define PI 3.14159265358979323846

/* A = [0 I; -M^-1 K  -M^-1 C] from Minv_K, Minv_C given (z x z each) */
static double *first_order(int z, const double *MiK, const double *MiC)
{
    int nx = 2 * z;
    double *A = calloc((size_t)nx * nx, sizeof *A);
    for (int i = 0; i < z; i++) A[i + (size_t)(z + i) * nx] = 1.0;
    for (int j = 0; j < z; j++)
        for (int i = 0; i < z; i++) {
            A[z + i + (size_t)j * nx] = -MiK[i + (size_t)j * z];
            A[z + i + (size_t)(z + j) * nx] = MiC ? -MiC[i + (size_t)j * z] : 0.0;
        }
    return A;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double max_berr(const mbl_eig_result *r)
{
    double b = 0;
    for (int i = 0; i < r->neig; i++) b = fmax(b, r->berr[i]);
    return b;
}

/* n masses m, n springs k, fixed-free: w_j = 2 sqrt(k/m) sin((2j-1) pi / (2(2n+1))). Units mixed
 * by M = D M0 D, K = D K0 D with D geometric from 1e-6 to 1e6 (mixed) or D = I. */
static void chain_case(int n, double k, double m, int mixed)
{
    double *M = calloc((size_t)n * n, sizeof *M), *K = calloc((size_t)n * n, sizeof *K);
    double *C = calloc((size_t)n * n, sizeof *C), *MiK = calloc((size_t)n * n, sizeof *MiK);
    double *d = malloc((size_t)n * sizeof *d);
    for (int i = 0; i < n; i++) d[i] = mixed ? pow(10.0, -6.0 + 12.0 * i / (n - 1)) : 1.0;
    for (int i = 0; i < n; i++) {
        double kd = i < n - 1 ? 2 * k : k; /* the last mass has one spring */
        M[i + (size_t)i * n] = d[i] * m * d[i];
        K[i + (size_t)i * n] = d[i] * kd * d[i];
        MiK[i + (size_t)i * n] = kd / m;
        if (i + 1 < n) {
            K[i + (size_t)(i + 1) * n] = K[i + 1 + (size_t)i * n] = -d[i] * k * d[i + 1];
            MiK[i + (size_t)(i + 1) * n] = -k / m * d[i + 1] / d[i];
            MiK[i + 1 + (size_t)i * n] = -k / m * d[i] / d[i + 1];
        }
    }
    double *A = first_order(n, MiK, NULL);
    mbl_eig_problem p = {n, n, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    if (!r) goto out;
    CHECK_MSG(strcmp(r->solver, "sygvd") == 0, "solver %s", r->solver);
    CHECK_EQ_INT(r->neig, 2 * n);
    double *w = malloc((size_t)n * sizeof *w);
    int nw = 0;
    for (int i = 0; i < r->neig; i++) {
        CHECK(r->re[i] == 0.0);
        if (r->im[i] > 0 && nw < n) w[nw++] = r->im[i];
    }
    CHECK_EQ_INT(nw, n);
    qsort(w, (size_t)nw, sizeof *w, cmp_dbl);
    double worst = 0;
    for (int j = 1; j <= nw; j++) {
        double want = 2 * sqrt(k / m) * sin((2 * j - 1) * PI / (2 * (2 * n + 1)));
        worst = fmax(worst, fabs(w[j - 1] - want) / want);
    }
    fprintf(stderr, "chain n = %d, k/m = %g, mixed units %d: worst relative frequency error %.3g, backward error %.3g\n", n, k / m, mixed, worst, max_berr(r));
    CHECK_MSG(worst <= 1e-12, "k/m = %g: worst relative frequency error %.3g", k / m, worst);
    CHECK_MSG(max_berr(r) <= 1e-14, "k/m = %g: backward error %.3g", k / m, max_berr(r));
    /* mode shapes M-orthonormal: X^T M X = I */
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y), orth = 0;
    for (int a = 0; a < r->neig; a += 2)
        for (int b = 0; b < r->neig; b += 2) {
            eig_vector(r, a, x, NULL);
            eig_vector(r, b, y, NULL);
            double s = 0;
            for (int i = 0; i < n; i++)
                for (int jj = 0; jj < n; jj++) s += x[i] * M[i + (size_t)jj * n] * y[jj];
            orth = fmax(orth, fabs(s - (a == b ? 1.0 : 0.0)));
        }
    CHECK_MSG(orth <= 1e-12, "X^T M X - I: %.3g", orth);
    free(x), free(y), free(w);
out:
    eig_result_free(r);
    free(M), free(K), free(C), free(MiK), free(d), free(A);
}

/* The same chain with Rayleigh damping C = a M + b K (quadratic-qz): per mode
 * s^2 + (a + b w_j^2) s + w_j^2 = 0, closed form. */
static void damped_chain_case(int n, double k, double m)
{
    double *M = calloc((size_t)n * n, sizeof *M), *K = calloc((size_t)n * n, sizeof *K);
    double *C = calloc((size_t)n * n, sizeof *C), *MiK = calloc((size_t)n * n, sizeof *MiK);
    double *MiC = calloc((size_t)n * n, sizeof *MiC), *d = malloc((size_t)n * sizeof *d);
    double w0 = sqrt(k / m), a = 0.02 * w0, b = 0.01 / w0;
    for (int i = 0; i < n; i++) d[i] = pow(10.0, -6.0 + 12.0 * i / (n - 1));
    for (int i = 0; i < n; i++) {
        double kd = i < n - 1 ? 2 * k : k;
        M[i + (size_t)i * n] = d[i] * m * d[i];
        K[i + (size_t)i * n] = d[i] * kd * d[i];
        MiK[i + (size_t)i * n] = kd / m;
        if (i + 1 < n) {
            K[i + (size_t)(i + 1) * n] = K[i + 1 + (size_t)i * n] = -d[i] * k * d[i + 1];
            MiK[i + (size_t)(i + 1) * n] = -k / m * d[i + 1] / d[i];
            MiK[i + 1 + (size_t)i * n] = -k / m * d[i] / d[i + 1];
        }
    }
    for (size_t q = 0; q < (size_t)n * n; q++) {
        C[q] = a * M[q] + b * K[q];
        MiC[q] = b * MiK[q] + (q % (size_t)(n + 1) == 0 ? a : 0.0);
    }
    double *A = first_order(n, MiK, MiC);
    mbl_eig_problem p = {n, n, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    if (r) {
        CHECK_MSG(strcmp(r->solver, "quadratic-qz") == 0, "solver %s", r->solver);
        double worst = 0;
        for (int j = 1; j <= n; j++) {
            double w = 2 * w0 * sin((2 * j - 1) * PI / (2 * (2 * n + 1))), c = a + b * w * w;
            double sr = -c / 2, si = sqrt(w * w - c * c / 4), best = HUGE_VAL;
            for (int i = 0; i < r->neig; i++) best = fmin(best, hypot(r->re[i] - sr, r->im[i] - si) / w);
            worst = fmax(worst, best);
        }
        fprintf(stderr, "damped chain n = %d, k/m = %g: worst relative eigenvalue error %.3g, backward error %.3g\n", n,
                k / m, worst, max_berr(r));
        CHECK_MSG(worst <= 1e-12, "damped chain k/m = %g: worst relative error %.3g", k / m, worst);
        CHECK_MSG(max_berr(r) <= 1e-14, "damped chain k/m = %g: backward error %.3g", k / m, max_berr(r));
    }
    eig_result_free(r);
    free(M), free(K), free(C), free(MiK), free(MiC), free(d), free(A);
}

TEST(damped_chain_qz_mixed_units)
{
    damped_chain_case(12, 1.0, 1.0);
    damped_chain_case(12, 1e12, 1.0);
    damped_chain_case(30, 1e12, 1e-3);
}

TEST(chain_sygvd_mixed_units)
{
    chain_case(12, 1.0, 1.0, 0);
    chain_case(12, 1e12, 1.0, 0);
    chain_case(12, 1.0, 1.0, 1);
    chain_case(12, 1e6, 1.0, 1);
    chain_case(12, 1e12, 1.0, 1);
    chain_case(30, 1e12, 1e-3, 1);
}

/* Slow modes of a stiff model: masses 1, springs ground-k-m1-K-m2-k-m3 with k = 1, K = 1e12, in
 * sheared coordinates x = T y (T unit upper bidiagonal; M = T^T T, K = T^T K0 T are exact in
 * double). As K -> infinity m1 and m2 lock: M = diag(2, 1), K = [[2, -1], [-1, 1]], w^2 = 1 +- 1/sqrt 2,
 * off by O(k/K) = 1e-12 at K = 1e12. dsygvd alone gives the slow w^2 with an absolute error of
 * about eps K (4e-4 relative here); the compensated Rayleigh quotient refinement brings them to
 * 4e-8: its error is quadratic in the eigenvector's, and the two slow eigenvectors are mixed by
 * about eps K / (their gap) = 3e-4 (the flexible pendulum's slow modes are far better separated
 * relative to that: 1e-10 there). */
TEST(stiff_slow_modes_refined)
{
    double k1 = 1, k2 = 1e12, K0[9] = {0}, M[9], K[9], T[9] = {0}, C[9] = {0}, A[36] = {0};
    double ks[3] = {k1, k2, k1};
    for (int sp = 0; sp < 3; sp++) {
        int a = sp - 1, b = sp;
        if (a >= 0) K0[a + 3 * a] += ks[sp], K0[a + 3 * b] -= ks[sp], K0[b + 3 * a] -= ks[sp];
        K0[b + 3 * b] += ks[sp];
    }
    for (int i = 0; i < 3; i++) T[i + 3 * i] = 1, T[i + 3 * (i + 1 < 3 ? i + 1 : i)] = 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double km = 0, mm = 0;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) km += T[a + 3 * i] * K0[a + 3 * b] * T[b + 3 * j], mm += a == b ? T[a + 3 * i] * T[b + 3 * j] : 0;
            K[i + 3 * j] = km, M[i + 3 * j] = mm;
        }
    for (int i = 0; i < 3; i++) A[i + 6 * (3 + i)] = 1; /* only the top block [0 I] matters here */
    double want[2] = {1 - sqrt(0.5), 1 + sqrt(0.5)};
    for (int refine = 0; refine < 2; refine++) {
        mbl_eig_options o;
        eig_options_default(&o);
        if (!refine) o.refine_max = 0;
        mbl_eig_problem p = {3, 3, A, M, C, K};
        mbl_eig_result *r = NULL;
        mbl_status st;
        CHECK(eig_solve(&p, &o, 1, &r, &st) == 0);
        if (!r) continue;
        CHECK_MSG(strcmp(r->solver, "sygvd") == 0, "solver %s", r->solver);
        double w2[3];
        for (int i = 0; i < 3; i++) w2[i] = r->im[2 * i] * r->im[2 * i];
        qsort(w2, 3, sizeof *w2, cmp_dbl);
        double err = fmax(fabs(w2[0] - want[0]) / want[0], fabs(w2[1] - want[1]) / want[1]);
        fprintf(stderr, "stiff slow modes, refinement %s: relative error %.3g\n", refine ? "on" : "off", err);
        if (refine) CHECK_MSG(err <= 1e-7, "refined slow modes: relative error %.3g", err);
        eig_result_free(r);
    }
}

/* M = diag(1, 2), K = [[3, -1], [-1, 1]], Rayleigh damping C = a M + b K: per mode
 * s^2 + (a + b w^2) s + w^2 = 0 with 2 w^4 - 7 w^2 + 2 = 0. Mode 1 underdamped, mode 2
 * overdamped (two real roots). */
TEST(damped_two_dof_quadratic_qz)
{
    double a = 0.3, b = 1.2;
    double M[4] = {1, 0, 0, 2}, K[4] = {3, -1, -1, 1}, C[4];
    for (int i = 0; i < 4; i++) C[i] = a * M[i] + b * K[i];
    double MiK[4] = {3, -0.5, -1, 0.5}, MiC[4];
    for (int i = 0; i < 4; i++) MiC[i] = a * (i == 0 || i == 3) + b * MiK[i];
    double *A = first_order(2, MiK, MiC);
    mbl_eig_problem p = {2, 2, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    free(A);
    if (!r) return;
    CHECK_MSG(strcmp(r->solver, "quadratic-qz") == 0, "solver %s", r->solver);
    double want_re[4], want_im[4];
    int nw = 0;
    for (int j = 0; j < 2; j++) {
        double w2 = (7 + (j ? 1 : -1) * sqrt(33.0)) / 4, c = a + b * w2, disc = c * c - 4 * w2;
        if (disc < 0) {
            want_re[nw] = -c / 2, want_im[nw++] = sqrt(-disc) / 2;
            want_re[nw] = -c / 2, want_im[nw++] = -sqrt(-disc) / 2;
        } else { /* stable forms of the two real roots */
            double q = -(c + sqrt(disc)) / 2;
            want_re[nw] = q, want_im[nw++] = 0;
            want_re[nw] = w2 / q, want_im[nw++] = 0;
        }
    }
    CHECK_EQ_INT(nw, 4);
    for (int j = 0; j < 4; j++) {
        double best = HUGE_VAL;
        for (int i = 0; i < r->neig; i++)
            best = fmin(best, hypot(r->re[i] - want_re[j], r->im[i] - want_im[j]) / hypot(want_re[j], want_im[j]));
        CHECK_MSG(best <= 1e-12, "root %d (%g%+gi): relative distance %.3g", j, want_re[j], want_im[j], best);
    }
    CHECK_MSG(max_berr(r) <= 1e-15, "backward error %.3g", max_berr(r));
    eig_result_free(r);
}

/* Rigid rotor: Id x'' + Ip W y' + k x = 0, Id y'' - Ip W x' + k y = 0 (M = Id I, C = G
 * gyroscopic, K = k I): eigenvalues +-i w with Id w^2 -+ Ip W w - k = 0, forward and backward
 * whirl. */
TEST(gyroscopic_rotor_whirl)
{
    double Id = 0.1, Ip = 0.2, k = 1e3;
    double Om[] = {0.0, 1.0, 100.0, 1e4};
    for (int t = 0; t < 4; t++) {
        double g = Ip * Om[t];
        double M[4] = {Id, 0, 0, Id}, C[4] = {0, -g, g, 0}, K[4] = {k, 0, 0, k};
        double MiK[4] = {k / Id, 0, 0, k / Id}, MiC[4] = {0, -g / Id, g / Id, 0};
        double *A = first_order(2, MiK, MiC);
        mbl_eig_problem p = {2, 2, A, M, C, K};
        mbl_eig_result *r = NULL;
        mbl_status st;
        CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
        free(A);
        if (!r) continue;
        CHECK_MSG(strcmp(r->solver, Om[t] == 0 ? "sygvd" : "quadratic-qz") == 0, "Omega %g: solver %s", Om[t],
                  r->solver);
        double root = sqrt(g * g + 4 * Id * k);
        double wf = (g + root) / (2 * Id), wb = 2 * k / (g + root); /* backward: no cancellation */
        double want[2] = {wf, wb};
        for (int j = 0; j < 2; j++)
            for (int sg = -1; sg <= 1; sg += 2) {
                double best = HUGE_VAL;
                for (int i = 0; i < r->neig; i++) best = fmin(best, hypot(r->re[i], r->im[i] - sg * want[j]) / want[j]);
                CHECK_MSG(best <= 1e-12, "Omega %g: whirl %g: relative distance %.3g", Om[t], sg * want[j], best);
            }
        CHECK_MSG(max_berr(r) <= 1e-15, "Omega %g: backward error %.3g", Om[t], max_berr(r));
        eig_result_free(r);
    }
}

/* M indefinite (diag(1, -1)) with K = diag(4, -9): not symmetric-definite, so sygvd refuses
 * and the quadratic QZ takes it: s = +-2i, +-3i. */
TEST(indefinite_mass_goes_to_qz)
{
    double M[4] = {1, 0, 0, -1}, C[4] = {0}, K[4] = {4, 0, 0, -9}, MiK[4] = {4, 0, 0, 9};
    double *A = first_order(2, MiK, NULL);
    mbl_eig_problem p = {2, 2, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    free(A);
    if (!r) return;
    CHECK_MSG(strcmp(r->solver, "quadratic-qz") == 0, "solver %s", r->solver);
    double im[4];
    for (int i = 0; i < 4; i++) {
        CHECK(fabs(r->re[i]) <= 1e-14);
        im[i] = r->im[i];
    }
    qsort(im, 4, sizeof *im, cmp_dbl);
    CHECK_REL(im[0], -3.0, 1e-14);
    CHECK_REL(im[1], -2.0, 1e-14);
    CHECK_REL(im[2], 2.0, 1e-14);
    CHECK_REL(im[3], 3.0, 1e-14);
    eig_result_free(r);
}

/* dgeev's scaling balancer spoils the eigenvectors of an A with rounding-level entries (the core of
 * the mechanism single-track car's A: 1e-32 and 1e-29 where exact zeros' terms cancel; dgeev alone
 * gives backward errors of 0.16, tests/la): the pairs above DGEEV_BERR_RETRY take their vectors
 * from the permutation-only solve. The eigenvalues stay dgeev's bit for bit (0 three times, -6);
 * every pair's backward error at the rounding level; the retry's allocations fail cleanly. */
TEST(dgeev_scaling_retry)
{
    enum { nx = 4 };
    double A[nx * nx] = {0}, wr[nx], wi[nx];
    A[0 + 3 * nx] = 1, A[1 + 3 * nx] = -1e-32, A[2 + 1 * nx] = 1, A[2 + 2 * nx] = -6, A[3 + 2 * nx] = -1e-29;
    mbl_eig_problem p = {3, 1, A, NULL, NULL, NULL};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(mbla_eig(nx, A, nx, wr, wi, NULL, 1, NULL, 1, &st) == 0);
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    if (!r) return;
    CHECK_MSG(strcmp(r->solver, "dgeev") == 0, "solver %s", r->solver);
    for (int i = 0; i < nx; i++) CHECK(r->re[i] == wr[i] && r->im[i] == wi[i]);
    CHECK_MSG(max_berr(r) <= 1e-15, "backward error %.3g", max_berr(r));
    eig_result_free(r);
    int first = 1;
    for (long k = 0; k < 1000; k++) {
        mbl_alloc_fail_after(k);
        r = NULL;
        int rc = eig_solve(&p, NULL, 1, &r, &st);
        mbl_alloc_fail_after(-1);
        eig_result_free(r);
        if (first) CHECK_EQ_INT(rc, MBL_ENOMEM);
        first = 0;
        if (rc == MBL_ENOMEM) continue;
        CHECK_EQ_INT(rc, 0);
        break;
    }
}

/* eig_dgeev, the retry on its own (also the Floquet monodromy's path, src/study/floquet.c): on the
 * A above the spoiled pairs take vectors of backward error <= 1e-15 and the eigenvalues stay
 * dgeev's bits; on a matrix with no rounding-level entries (no retry) the vectors are dgeev's
 * (mbla_eig's) bits, and berr is ||A v - s v|| / (||A||_F ||v||) computed here in long double. */
TEST(eig_dgeev_shared_retry)
{
    enum { nx = 4 };
    double A[nx * nx] = {0}, B[nx * nx], wr[nx], wi[nx], wr0[nx], wi0[nx], VR[nx * nx], VR0[nx * nx], berr[nx];
    A[0 + 3 * nx] = 1, A[1 + 3 * nx] = -1e-32, A[2 + 1 * nx] = 1, A[2 + 2 * nx] = -6, A[3 + 2 * nx] = -1e-29;
    for (int i = 0; i < nx * nx; i++) B[i] = sin(1.0 + 3.0 * i); /* dense, no tiny entries */
    mbl_status st;
    for (int m = 0; m < 2; m++) {
        const double *X = m ? B : A;
        int retried = -1;
        CHECK(mbla_eig(nx, X, nx, wr0, wi0, NULL, 1, VR0, nx, &st) == 0);
        CHECK(eig_dgeev(nx, X, 1, wr, wi, VR, berr, &retried, &st) == 0);
        CHECK_EQ_INT(retried, m ? 0 : 1);
        for (int i = 0; i < nx; i++) CHECK(wr[i] == wr0[i] && wi[i] == wi0[i]);
        if (m) CHECK(memcmp(VR, VR0, sizeof VR) == 0);
        long double nX = 0;
        for (int i = 0; i < nx * nx; i++) nX += (long double)X[i] * X[i];
        nX = sqrtl(nX);
        for (int i = 0; i < nx; i++) { /* the pair's x = u + i sg v */
            int c = wi[i] < 0 ? i - 1 : i;
            long double sg = wi[i] < 0 ? -1 : 1, rn = 0, xn = 0;
            const double *u = VR + c * nx, *v = wi[i] != 0 ? VR + (c + 1) * nx : NULL;
            for (int k = 0; k < nx; k++) {
                long double ar = 0, ai = 0, xr = u[k], xi = v ? sg * v[k] : 0;
                for (int j = 0; j < nx; j++) ar += (long double)X[k + j * nx] * u[j], ai += v ? (long double)X[k + j * nx] * sg * v[j] : 0;
                ar -= (long double)wr[i] * xr - (long double)wi[i] * xi, ai -= (long double)wr[i] * xi + (long double)wi[i] * xr;
                rn += ar * ar + ai * ai, xn += xr * xr + xi * xi;
            }
            double b = (double)(sqrtl(rn) / (nX * sqrtl(xn)));
            CHECK_MSG(b <= 1e-15, "matrix %d, eigenvalue %d: backward error %.3g", m, i, b);
            CHECK_MSG(fabs(berr[i] - b) <= 1e-16, "matrix %d, eigenvalue %d: berr %.3g, here %.3g", m, i, berr[i], b);
        }
    }
    /* out of memory: an error, never a leak (the retry's allocations) */
    int first = 1;
    for (long k = 0; k < 100; k++) {
        mbl_alloc_fail_after(k);
        int rc = eig_dgeev(nx, A, 1, wr, wi, VR, berr, NULL, &st);
        mbl_alloc_fail_after(-1);
        if (first) CHECK_EQ_INT(rc, MBL_ENOMEM);
        first = 0;
        if (rc == MBL_ENOMEM) continue;
        CHECK_EQ_INT(rc, 0);
        break;
    }
}

/* The scaling balancer can cost an eigenvalue digits, not only its vector: A of the single-track
 * car with a front tire of 1e14 N/rad (examples/mech/single_track_car.yaml --set Cf=1e14, the
 * augmented method's A under the Prescott kernels at a build whose residual tape was compiled as
 * written: ||A||_1 = 1.1e11, entries down to 1e-50). dgeev ('B') gave its unstable eigenvalue as
 * 0.855 there (Prescott, Nehalem), backward error 6.8e-14. The reference is independent of the
 * solver: 0.88936750693921668 and the eigenvalue's condition number 248.28, both from mpmath in
 * 60 digits on these entries; a backward stable solve misses it by at most about
 * kappa eps ||A||_F = 0.0044 (the closed form of the 2-dof model is 0.889365). eig_dgeev takes
 * that pair's value and vector from the permutation-only solve: within that bound under every
 * kernel, its backward error at the rounding level, the five zeros still below zero_floor. */
TEST(dgeev_balancing_value)
{
    enum { nx = 8 };
    static const double A[nx * nx] = {
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        1.3662131034502707e-30, 0.0, 0.0, -1.3684555315672042e-47, 4.018260235969528e-30, 65117236302.35342,
        46757302812.37925, -1.3302939072578133e-13, 1.3234339962704262e-33, 0.0, 0.0, 0.0, 4.411446654234754e-33,
        -1.6963349307717555e-50, -4.353926322314114e-48, 0.0, 0.0, 0.0, 0.0, 0.0, 2.2210698091288046e-33, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -3255861815.1176715, -2337865140.618963, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
        -3907034170.2791014, -2805438175.802654, -4.9303806576313194e-32, 0.3, 0.0, 0.0, 1.0, 1.0,
        -2.8894748636037586e-23, -2.0747817101300857e-23, -1.9230769230769227};
    const double exact = 0.88936750693921668, kappa = 248.28;
    double wr[nx], wi[nx], VR[nx * nx], berr[nx], nF = 0;
    for (int i = 0; i < nx * nx; i++) nF += A[i] * A[i];
    nF = sqrt(nF);
    mbl_status st;
    for (int vectors = 0; vectors < 2; vectors++) { /* the values do not depend on the vectors' retry */
        CHECK(eig_dgeev(nx, A, vectors, wr, wi, VR, berr, NULL, &st) == 0);
        int near = -1, nzero = 0, fast = 0;
        double floor_tol = 10.0 * sqrt(DBL_EPSILON * mbla_norm1(nx, nx, A, nx));
        for (int i = 0; i < nx; i++) {
            if (wi[i] == 0 && fabs(wr[i] - exact) < 0.5) near = i;
            nzero += hypot(wr[i], wi[i]) < floor_tol;
            fast += fabs(wr[i] + 6.0613e9) < 1e-4 * 6.0613e9;
        }
        CHECK_MSG(near >= 0, "no real eigenvalue near %.6f", exact);
        if (near < 0) continue;
        CHECK_MSG(fabs(wr[near] - exact) <= kappa * DBL_EPSILON * nF, "%.9f against %.9f: off by %.3g, more than %.3g",
                  wr[near], exact, fabs(wr[near] - exact), kappa * DBL_EPSILON * nF);
        CHECK_MSG(berr[near] <= 10.0 * nx * DBL_EPSILON, "its backward error %.3g", berr[near]);
        CHECK_EQ_INT(nzero, 5);
        CHECK_EQ_INT(fast, 1);
    }
}

/* z0 != z1 (a non-holonomic system): dgeev on A. A upper triangular, eigenvalues its diagonal. */
TEST(nonsquare_goes_to_dgeev)
{
    double A[9] = {-1, 0, 0, 2, -3, 0, 5, 7, 4}; /* diag -1, -3, 4 */
    double M[1] = {1}, C[1] = {0}, K[2] = {1, 1};
    mbl_eig_problem p = {2, 1, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    if (!r) return;
    CHECK_MSG(strcmp(r->solver, "dgeev") == 0, "solver %s", r->solver);
    double re[3] = {r->re[0], r->re[1], r->re[2]};
    qsort(re, 3, sizeof *re, cmp_dbl);
    CHECK_REL(re[0], -3.0, 1e-14);
    CHECK_REL(re[1], -1.0, 1e-14);
    CHECK_REL(re[2], 4.0, 1e-14);
    CHECK(max_berr(r) <= 1e-15);
    CHECK_EQ_INT(r->nrow, 2);
    eig_result_free(r);
}

/* z0 == z1 but the top block of A is not [0 I] (user velocity states W != S'): the second-order
 * data do not describe A, so dgeev. A = [0 2; -8 0]: s = +-4i. */
TEST(top_block_not_identity_goes_to_dgeev)
{
    double A[4] = {0, -8, 2, 0}, M[1] = {1}, C[1] = {0}, K[1] = {16};
    mbl_eig_problem p = {1, 1, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    if (!r) return;
    CHECK_MSG(strcmp(r->solver, "dgeev") == 0, "solver %s", r->solver);
    CHECK_REL(fabs(r->im[0]), 4.0, 1e-14);
    eig_result_free(r);
}

/* Three uncoupled blocks (a 2-mass chain, a single oscillator, a damped 1-DOF) in an interleaved
 * order: the blocks are found, each eigenvector lives on its block's rows; with damping in one
 * block the whole problem is quadratic-qz. */
TEST(independent_blocks)
{
    int z = 4;
    /* rows 0 and 2: chain m = 1, k = 1 fixed-free; row 1: k = 9 (w = 3); row 3: k = 4 (w = 2) */
    double M[16] = {0}, C[16] = {0}, K[16] = {0}, MiK[16] = {0};
    for (int i = 0; i < 4; i++) M[i + 4 * i] = 1;
    K[0] = 2, K[0 + 4 * 2] = K[2 + 4 * 0] = -1, K[2 + 4 * 2] = 1, K[1 + 4 * 1] = 9, K[3 + 4 * 3] = 4;
    memcpy(MiK, K, sizeof K);
    for (int damped = 0; damped < 2; damped++) {
        C[3 + 4 * 3] = damped ? 0.5 : 0.0;
        double *A = first_order(z, MiK, C);
        mbl_eig_problem p = {z, z, A, M, C, K};
        mbl_eig_result *r = NULL;
        mbl_status st;
        CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
        free(A);
        if (!r) continue;
        CHECK_MSG(strcmp(r->solver, damped ? "quadratic-qz" : "sygvd") == 0, "solver %s", r->solver);
        CHECK_EQ_INT(r->ncomp, 3);
        double x[4], y[4];
        for (int i = 0; i < r->neig; i++) {
            double s2 = hypot(r->re[i], r->im[i]);
            eig_vector(r, i, x, y);
            /* the single oscillator (w = 3) lives on row 1 only */
            if (fabs(s2 - 3.0) < 1e-12) CHECK(x[0] == 0 && x[2] == 0 && x[3] == 0 && y[0] == 0 && y[2] == 0 && y[3] == 0);
            /* residual of the eigenpair in the whole problem */
            double rr = 0;
            for (int row = 0; row < z; row++) {
                double sr = r->re[i], si = r->im[i], pr = sr * sr - si * si, pi = 2 * sr * si;
                double ar = 0, ai = 0;
                for (int c = 0; c < z; c++) {
                    double m = M[row + 4 * c], cc = C[row + 4 * c], k = K[row + 4 * c];
                    double qr = pr * m + sr * cc + k, qi = pi * m + si * cc;
                    ar += qr * x[c] - qi * y[c];
                    ai += qr * y[c] + qi * x[c];
                }
                rr = fmax(rr, hypot(ar, ai));
            }
            double xn = 0;
            for (int c = 0; c < z; c++) xn = fmax(xn, hypot(x[c], y[c]));
            CHECK_MSG(rr <= 1e-13 * xn * (1 + s2 * s2), "eigenvalue %d: residual %.3g", i, rr);
        }
        eig_result_free(r);
    }
}

/* Through the pipeline: a model file of a fixed-free 3-mass chain (undamped: sygvd), the same
 * with a damper (quadratic-qz), and a non-holonomic model (dgeev); backward errors reported. */
static mbl_modes *pipeline(const char *text, mbl_linear **lin_out)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(text, strlen(text), "test.yaml", NULL, 0, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    mbl_model_free(md);
    mbl_point_free(pt);
    *lin_out = lin;
    return modes;
}

TEST(pipeline_picks_solver)
{
    const char *chain = "model: dae\n"
                        "parameters: {m: 2, k: 50}\n"
                        "coordinates: {x1: 0, x2: 0, x3: 0}\n"
                        "kinetic_energy: \"0.5*m*(der(x1)^2 + der(x2)^2 + der(x3)^2)\"\n"
                        "potential_energy: \"0.5*k*(x1^2 + (x2 - x1)^2 + (x3 - x2)^2)\"\n";
    mbl_linear *lin = NULL;
    mbl_modes *modes = pipeline(chain, &lin);
    if (modes) {
        CHECK_MSG(strcmp(modes->solver, "sygvd") == 0, "solver %s", modes->solver);
        CHECK_EQ_INT(modes->nx, 6);
        for (int i = 0; i < 6; i++) {
            int j = i / 2 + 1; /* sorted by frequency, +im first */
            double want = 2 * sqrt(50.0 / 2.0) * sin((2 * j - 1) * PI / 14);
            CHECK_REL(fabs(modes->modes[i].im), want, 1e-13);
            CHECK(modes->modes[i].im * (i % 2 ? -1 : 1) > 0);
            CHECK(modes->modes[i].backward_error <= 1e-15);
            /* mode shape: largest component 1, real; the fixed-free chain's shape j is
             * sin((2j-1) i pi / (2n+1)), i = 1..n, the free end largest for j = 1 */
            double amax = 0;
            for (int c = 0; c < 3; c++) amax = fmax(amax, hypot(modes->shape_re[c + 3 * i], modes->shape_im[c + 3 * i]));
            CHECK_CLOSE(amax, 1.0, 1e-14);
            if (j == 1)
                for (int c = 0; c < 3; c++)
                    CHECK_CLOSE(modes->shape_re[c + 3 * i], sin((c + 1) * PI / 7) / sin(3 * PI / 7), 1e-13);
        }
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);

    const char *damped = "model: dae\n"
                         "parameters: {m: 2, k: 50, c: 3}\n"
                         "coordinates: {x1: 0, x2: 0}\n"
                         "kinetic_energy: \"0.5*m*(der(x1)^2 + der(x2)^2)\"\n"
                         "potential_energy: \"0.5*k*(x1^2 + (x2 - x1)^2)\"\n"
                         "dissipation: \"0.5*c*der(x2)^2\"\n";
    modes = pipeline(damped, &lin);
    if (modes) {
        CHECK_MSG(strcmp(modes->solver, "quadratic-qz") == 0, "solver %s", modes->solver);
        for (int i = 0; i < modes->nx; i++) CHECK(modes->modes[i].backward_error <= 1e-15);
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);

    const char *nonhol = "model: dae\n"
                         "parameters: {m: 3, k: 12, a: 0.7}\n"
                         "coordinates: {x: 0.2, y: 0.1}\n"
                         "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                         "potential_energy: \"0.5*k*(x^2 + y^2)\"\n"
                         "nonholonomic: [\"der(y) - a*der(x)\"]\n";
    modes = pipeline(nonhol, &lin);
    if (modes) {
        CHECK_MSG(strcmp(modes->solver, "dgeev") == 0, "solver %s", modes->solver);
        for (int i = 0; i < modes->nx; i++) CHECK(modes->modes[i].backward_error <= 1e-15);
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
}

/* Blocks {0, 1}, {2, 4}, {3}: each row in exactly one block, every block's rows coupled (a
 * regression: the row lists were built from a union-find array overwritten while still read, which
 * put row 4 into the first block when a block's number differs from its first row) */
TEST(block_rows_partition)
{
    int z = 5;
    double M[25] = {0}, C[25] = {0}, K[25] = {0}, MiK[25] = {0};
    for (int i = 0; i < z; i++) M[i + 5 * i] = 1, K[i + 5 * i] = 2 + i;
    K[0 + 5 * 1] = K[1 + 5 * 0] = -1;
    K[2 + 5 * 4] = K[4 + 5 * 2] = -1;
    memcpy(MiK, K, sizeof K);
    double *A = first_order(z, MiK, NULL);
    mbl_eig_problem p = {z, z, A, M, C, K};
    mbl_eig_result *r = NULL;
    mbl_status st;
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == 0);
    free(A);
    if (!r) return;
    CHECK_EQ_INT(r->ncomp, 3);
    int seen[5] = {0};
    for (int c = 0; c < r->ncomp; c++) {
        int nb = r->rptr[c + 1] - r->rptr[c];
        const int *rows = r->rows + r->rptr[c];
        for (int k = 0; k < nb; k++) {
            CHECK(rows[k] >= 0 && rows[k] < z);
            if (rows[k] >= 0 && rows[k] < z) seen[rows[k]]++;
        }
    }
    for (int i = 0; i < z; i++) CHECK_EQ_INT(seen[i], 1);
    CHECK(r->rptr[1] == 2 && r->rows[0] == 0 && r->rows[1] == 1);
    CHECK(r->rptr[2] == 4 && r->rows[2] == 2 && r->rows[3] == 4);
    CHECK(r->rptr[3] == 5 && r->rows[4] == 3);
    eig_result_free(r);
}

/* the la wrapper used by quadratic-qz: A x = lambda B x with A = T diag(1, 2, 3) T^-1 scaled
 * badly by S, B = 2 S S' (eigenvalues 0.5, 1, 1.5); every balancing choice, and a bad one */
TEST(ggevx_wrapper)
{
    /* T = [[1, 1, 0], [0, 1, 1], [0, 0, 1]], T^-1 = [[1, -1, 1], [0, 1, -1], [0, 0, 1]] */
    double T[9] = {1, 0, 0, 1, 1, 0, 0, 1, 1}, Ti[9] = {1, 0, 0, -1, 1, 0, 1, -1, 1}, D[3] = {1, 2, 3};
    double sc[3] = {1e-4, 1, 1e4}, A[9], B[9] = {0};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            double a = 0;
            for (int k = 0; k < 3; k++) a += T[i + 3 * k] * D[k] * Ti[k + 3 * j];
            A[i + 3 * j] = sc[i] * a / sc[j];
        }
    for (int i = 0; i < 3; i++) B[i + 3 * i] = 2.0;
    const char *bal = "NPSB";
    for (int b = 0; b < 4; b++) {
        double ar[3], ai[3], be[3], VR[9], an = -1, bn = -1;
        mbl_status st;
        CHECK(mbla_ggevx(bal[b], 3, A, 3, B, 3, ar, ai, be, NULL, 1, VR, 3, &an, &bn, &st) == 0);
        double ev[3];
        for (int i = 0; i < 3; i++) {
            CHECK(ai[i] == 0.0 && be[i] > 0);
            ev[i] = ar[i] / be[i];
        }
        qsort(ev, 3, sizeof *ev, cmp_dbl);
        CHECK_REL(ev[0], 0.5, 1e-12);
        CHECK_REL(ev[1], 1.0, 1e-12);
        CHECK_REL(ev[2], 1.5, 1e-12);
        CHECK(an > 0 && bn > 0);
        /* eigenvectors of the original pencil: A v = lambda B v */
        for (int j = 0; j < 3; j++) {
            double lam = ar[j] / be[j], res = 0, vn = 0;
            for (int i = 0; i < 3; i++) {
                double r = 0;
                for (int k = 0; k < 3; k++) r += (A[i + 3 * k] - lam * B[i + 3 * k]) * VR[k + 3 * j];
                res = fmax(res, fabs(r)), vn = fmax(vn, fabs(VR[i + 3 * j]));
            }
            CHECK_MSG(res <= 1e-10 * vn, "balanc %c: residual %.3g", bal[b], res);
        }
    }
    double ar[3], ai[3], be[3];
    mbl_status st;
    CHECK(mbla_ggevx('X', 3, A, 3, B, 3, ar, ai, be, NULL, 1, NULL, 1, NULL, NULL, &st) == MBL_EARG);
    A[4] = NAN;
    CHECK(mbla_ggevx('B', 3, A, 3, B, 3, ar, ai, be, NULL, 1, NULL, 1, NULL, NULL, &st) == MBL_EARG);
}

TEST(bad_arguments)
{
    mbl_eig_result *r = (mbl_eig_result *)&r;
    mbl_status st;
    CHECK(eig_solve(NULL, NULL, 1, &r, &st) == MBL_EARG);
    CHECK(r == NULL);
    mbl_eig_problem p = {1, 1, NULL, NULL, NULL, NULL};
    CHECK(eig_solve(&p, NULL, 1, &r, &st) == MBL_EARG);
    mbl_eig_problem e = {0, 0, NULL, NULL, NULL, NULL};
    CHECK(eig_solve(&e, NULL, 1, &r, &st) == 0);
    if (r) CHECK_EQ_INT(r->neig, 0);
    eig_result_free(r);
}

int main(void)
{
    RUN(chain_sygvd_mixed_units);
    RUN(stiff_slow_modes_refined);
    RUN(damped_chain_qz_mixed_units);
    RUN(damped_two_dof_quadratic_qz);
    RUN(gyroscopic_rotor_whirl);
    RUN(indefinite_mass_goes_to_qz);
    RUN(nonsquare_goes_to_dgeev);
    RUN(dgeev_scaling_retry);
    RUN(eig_dgeev_shared_retry);
    RUN(dgeev_balancing_value);
    RUN(top_block_not_identity_goes_to_dgeev);
    RUN(independent_blocks);
    RUN(pipeline_picks_solver);
    RUN(block_rows_partition);
    RUN(ggevx_wrapper);
    RUN(bad_arguments);
    return test_summary("eig");
}
