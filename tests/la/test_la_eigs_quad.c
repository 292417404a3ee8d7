/* mbla_eigs_refine_quad: Newton refinement on the quadratic Q(lambda) = K + lambda C + lambda^2 M
 * (issue 31, item 4), against closed forms and against mbla_eigs_refine on the first-order pencil. */
#include "la_test_util.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>

static const double PI = 3.14159265358979323846;

static mbla_csc *from_trip(int n, int nz, const int *ti, const int *tj, const double *tx)
{
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(n, n, nz, ti, tj, tx, NULL, &A, NULL);
    return A;
}

/* the 2-norm of Q(lambda) x / |x| in plain double (a check only) */
static double qresid(const mbla_csc *K, const mbla_csc *C, const mbla_csc *M, double complex l, const double *xr,
                     const double *xi)
{
    int n = K->n;
    double complex *r = calloc((size_t)n, sizeof *r);
    const mbla_csc *A[3] = {K, C, M};
    double complex f[3] = {1.0, l, l * l};
    double s = 0, nx = 0;
    for (int h = 0; h < 3; h++)
        for (int j = 0; j < n; j++)
            for (int q = A[h]->p[j]; q < A[h]->p[j + 1]; q++) r[A[h]->i[q]] += f[h] * A[h]->x[q] * (xr[j] + I * xi[j]);
    for (int i = 0; i < n; i++) s += creal(r[i] * conj(r[i])), nx += xr[i] * xr[i] + xi[i] * xi[i];
    free(r);
    return sqrt(s / nx);
}

/* N uncoupled oscillators m x'' + c x' + k x = 0 (diagonal K, C, M: the test is the Newton step,
 * the normalization and the doubled-precision residual): lambda = (-c +- sqrt(c^2 - 4 m k)) / (2 m), complex
 * (underdamped) and real (overdamped) ones; starts 1e-3 off in the value and the vector. */
TEST(refine_quad_oscillators_closed_form)
{
    enum { N = 40, K2 = 2 * N };
    int ti[N], tj[N];
    double km[N], cm[N], mm[N];
    for (int i = 0; i < N; i++) {
        ti[i] = tj[i] = i;
        mm[i] = 1.0 + 0.25 * i;
        km[i] = 1e4 * (1.0 + i * i);
        cm[i] = i % 5 == 4 ? 3.0 * sqrt(km[i] * mm[i]) : 0.02 * sqrt(km[i] * mm[i]); /* every fifth overdamped */
    }
    mbla_csc *K = from_trip(N, N, ti, tj, km), *C = from_trip(N, N, ti, tj, cm), *M = from_trip(N, N, ti, tj, mm);
    double lr[K2], li[K2], be[K2], ex_r[K2], ex_i[K2];
    int it[K2];
    double *Xr = calloc((size_t)N * K2, sizeof *Xr), *Xi = calloc((size_t)N * K2, sizeof *Xi);
    unsigned seed = 7;
    mbl_status st;
    for (int i = 0; i < N; i++)
        for (int s = 0; s < 2; s++) {
            int t = 2 * i + s;
            double complex disc = csqrt((double complex)(cm[i] * cm[i] - 4 * mm[i] * km[i]));
            double complex l = (-cm[i] + (s ? -disc : disc)) / (2 * mm[i]);
            ex_r[t] = creal(l), ex_i[t] = cimag(l);
            lr[t] = ex_r[t] * (1 + 1e-3), li[t] = ex_i[t] * (1 - 1e-3);
            for (int r = 0; r < N; r++) Xr[r + (size_t)t * N] = (r == i) + 1e-3 * trand(&seed);
        }
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, K2, lr, li, Xr, Xi, N, 0, be, it, &st), 0);
    for (int t = 0; t < K2; t++) {
        double al = hypot(ex_r[t], ex_i[t]);
        CHECK_MSG(hypot(lr[t] - ex_r[t], li[t] - ex_i[t]) <= 1e-14 * al, "t %d: %.17g%+.17gi, closed form %.17g%+.17gi",
                  t, lr[t], li[t], ex_r[t], ex_i[t]);
        CHECK_MSG(be[t] < 1e-16, "t %d: backward error %g", t, be[t]);
        CHECK_MSG(it[t] >= 1 && it[t] < 16, "t %d: %d steps, berr %g", t, it[t], be[t]);
        CHECK(fabs(hypot(Xr[t / 2 + (size_t)t * N], Xi[t / 2 + (size_t)t * N]) - 1.0) < 1e-14);
        CHECK(qresid(K, C, M, lr[t] + I * li[t], Xr + (size_t)t * N, Xi + (size_t)t * N) < 1e-10 * km[t / 2]);
    }
    /* errors */
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, 1, lr, li, Xr, NULL, N, 0, NULL, NULL, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, 1, lr, li, Xr, Xi, N - 1, 0, NULL, NULL, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, NULL, M, 1, lr, li, Xr, Xi, N, 0, NULL, NULL, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, &st), 0);
    memset(Xr, 0, sizeof(double) * N), memset(Xi, 0, sizeof(double) * N);
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, 1, lr, li, Xr, Xi, N, 0, NULL, NULL, &st), MBL_EARG);
    CHECK(strstr(st.msg, "zero") != NULL);
    free(Xr), free(Xi);
    mbla_csc_free(K), mbla_csc_free(C), mbla_csc_free(M);
}

/* A fixed-fixed chain of N masses m and springs k (stiff: k / m = 5e11) with Rayleigh damping
 * C = a M + b K: the modes of (K, M), w_j^2 = (4 k / m) sin^2(j pi / (2 (N + 1))), give
 * lambda_j = -z_j +- i sqrt(w_j^2 - z_j^2), z_j = (a + b w_j^2) / 2. The 6 lowest pairs, started 1e-4
 * off with perturbed sine vectors; then the same starts refined by mbla_eigs_refine on the first-order
 * pencil A = [0 I; -K -C], E = [I 0; 0 M] (order 2N) agree. Conjugate starts get conjugate results. */
TEST(refine_quad_damped_chain)
{
    enum { N = 300, P = 6, K2 = 2 * P, ND = 2 * N };
    double kk = 1e12, mm = 2.0, a = 0.3, b = 1e-9;
    int *ti = malloc(sizeof(int) * 8 * N), *tj = malloc(sizeof(int) * 8 * N);
    double *tk = malloc(sizeof(double) * 8 * N), *tc = malloc(sizeof(double) * 8 * N), *tm = malloc(sizeof(double) * N);
    int nz = 0;
    for (int i = 0; i < N; i++) {
        ti[nz] = tj[nz] = i, tk[nz] = 2 * kk, tc[nz] = a * mm + b * 2 * kk, tm[i] = mm, nz++;
        if (i > 0) ti[nz] = i, tj[nz] = i - 1, tk[nz] = -kk, tc[nz] = -b * kk, nz++;
        if (i + 1 < N) ti[nz] = i, tj[nz] = i + 1, tk[nz] = -kk, tc[nz] = -b * kk, nz++;
    }
    int *td = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++) td[i] = i;
    mbla_csc *K = from_trip(N, nz, ti, tj, tk), *C = from_trip(N, nz, ti, tj, tc), *M = from_trip(N, N, td, td, tm);
    double lr[K2], li[K2], be[K2], ex_r[K2], ex_i[K2], fr[K2], fi[K2], fbe[K2];
    int it[K2];
    double *Xr = calloc((size_t)N * K2, sizeof *Xr), *Xi = calloc((size_t)N * K2, sizeof *Xi);
    double *Vr = calloc((size_t)ND * K2, sizeof *Vr), *Vi = calloc((size_t)ND * K2, sizeof *Vi);
    unsigned seed = 11;
    for (int j = 1; j <= P; j++) {
        double s = sin(j * PI / (2.0 * (N + 1))), w2 = 4 * kk / mm * s * s, z = 0.5 * (a + b * w2);
        for (int h = 0; h < 2; h++) {
            int t = 2 * (j - 1) + h;
            ex_r[t] = -z, ex_i[t] = (h ? -1 : 1) * sqrt(w2 - z * z);
            fr[t] = lr[t] = ex_r[t] * (1 + 1e-4), fi[t] = li[t] = ex_i[t] * (1 + 1e-4);
            for (int r = 0; r < N; r++) {
                double v = sin((r + 1) * j * PI / (N + 1)) + (h ? 0 : 1e-4 * trand(&seed));
                if (h) v = Xr[r + (size_t)(t - 1) * N]; /* the conjugate start */
                Xr[r + (size_t)t * N] = v;
                /* first order: [x; lambda x] */
                Vr[r + (size_t)t * ND] = v, Vr[N + r + (size_t)t * ND] = fr[t] * v;
                Vi[N + r + (size_t)t * ND] = fi[t] * v;
            }
        }
    }
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_refine_quad(K, C, M, K2, lr, li, Xr, Xi, N, 0, be, it, &st), 0);
    for (int t = 0; t < K2; t++) {
        double al = hypot(ex_r[t], ex_i[t]);
        /* the chain's eigenvalues are conditioned by w_max^2 / w_j^2 ~ 1e5: 1e-10 relative */
        CHECK_MSG(hypot(lr[t] - ex_r[t], li[t] - ex_i[t]) <= 1e-10 * al, "t %d: %.17g%+.17gi, closed form %.17g%+.17gi",
                  t, lr[t], li[t], ex_r[t], ex_i[t]);
        CHECK_MSG(be[t] < 1e-16, "t %d: backward error %g", t, be[t]);
        CHECK(it[t] >= 1);
        if (t % 2) {
            CHECK(lr[t] == lr[t - 1] && li[t] == -li[t - 1]);
            for (int r = 0; r < N; r++)
                CHECK(Xr[r + (size_t)t * N] == Xr[r + (size_t)(t - 1) * N] &&
                      Xi[r + (size_t)t * N] == -Xi[r + (size_t)(t - 1) * N]);
        }
    }
    /* the first-order refinement of the same starts */
    int *ai = malloc(sizeof(int) * (4 * nz + 2 * N)), *aj = malloc(sizeof(int) * (4 * nz + 2 * N));
    double *ax = malloc(sizeof(double) * (4 * nz + 2 * N));
    int na = 0;
    for (int i = 0; i < N; i++) ai[na] = i, aj[na] = N + i, ax[na++] = 1.0;
    for (int q = 0; q < nz; q++) ai[na] = N + ti[q], aj[na] = tj[q], ax[na++] = -tk[q];
    for (int q = 0; q < nz; q++) ai[na] = N + ti[q], aj[na] = N + tj[q], ax[na++] = -tc[q];
    mbla_csc *A = NULL, *E = NULL;
    mbla_csc_from_triplets(ND, ND, na, ai, aj, ax, NULL, &A, NULL);
    na = 0;
    for (int i = 0; i < N; i++) ai[na] = i, aj[na] = i, ax[na++] = 1.0;
    for (int i = 0; i < N; i++) ai[na] = N + i, aj[na] = N + i, ax[na++] = mm;
    mbla_csc_from_triplets(ND, ND, na, ai, aj, ax, NULL, &E, NULL);
    CHECK_EQ_INT(mbla_eigs_refine(A, E, K2, fr, fi, Vr, Vi, ND, 0, fbe, NULL, &st), 0);
    for (int t = 0; t < K2; t++)
        CHECK_MSG(hypot(lr[t] - fr[t], li[t] - fi[t]) <= 1e-10 * hypot(fr[t], fi[t]),
                  "t %d: quadratic %.17g%+.17gi, first order %.17g%+.17gi", t, lr[t], li[t], fr[t], fi[t]);
    /* allocation failures: every one reported, nothing leaked */
    ALLOC_FAIL_LOOP(mbla_eigs_refine_quad(K, C, M, 2, lr, li, Xr, Xi, N, 0, NULL, NULL, NULL), (void)0);
    free(ai), free(aj), free(ax), free(ti), free(tj), free(tk), free(tc), free(tm), free(td);
    free(Xr), free(Xi), free(Vr), free(Vi);
    mbla_csc_free(K), mbla_csc_free(C), mbla_csc_free(M), mbla_csc_free(A), mbla_csc_free(E);
}

int main(void)
{
    RUN(refine_quad_oscillators_closed_form);
    RUN(refine_quad_damped_chain);
    return test_summary("la_eigs_quad");
}
