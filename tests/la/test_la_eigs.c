/* Tests of the ARPACK shift-invert wrapper: closed forms and dense QZ on the same pencil. */
#include "la_test_util.h"

static const double PI = 3.14159265358979323846;

typedef struct {
    int n, nz;
    int *ti, *tj;
    double *tx;
} trip;

static void trip_init(trip *t, int n, int cap)
{
    t->n = n;
    t->nz = 0;
    t->ti = malloc(sizeof(int) * cap);
    t->tj = malloc(sizeof(int) * cap);
    t->tx = malloc(sizeof(double) * cap);
}
static void trip_add(trip *t, int i, int j, double v)
{
    t->ti[t->nz] = i;
    t->tj[t->nz] = j;
    t->tx[t->nz++] = v;
}
static mbla_csc *trip_done(trip *t)
{
    mbla_csc *A = NULL;
    mbla_csc_from_triplets(t->n, t->n, t->nz, t->ti, t->tj, t->tx, NULL, &A, NULL);
    free(t->ti);
    free(t->tj);
    free(t->tx);
    return A;
}

static mbla_csc *tridiag(int n, double sub, double diag, double sup)
{
    trip t;
    trip_init(&t, n, 3 * n);
    for (int j = 0; j < n; j++) {
        if (j > 0) trip_add(&t, j - 1, j, sup);
        trip_add(&t, j, j, diag);
        if (j + 1 < n) trip_add(&t, j + 1, j, sub);
    }
    return trip_done(&t);
}

/* residual max_i |(A - lambda E) v|_i for a complex eigenpair (E NULL = identity) */
static double residual(const mbla_csc *A, const mbla_csc *E, double lr, double li,
                       const double *vr, const double *vi)
{
    int n = A->n;
    double *ar = calloc(n, sizeof(double)), *ai = calloc(n, sizeof(double));
    double *er = calloc(n, sizeof(double)), *ei = calloc(n, sizeof(double));
    mbla_csc_gemv(A, 1.0, vr, 0.0, ar, NULL);
    mbla_csc_gemv(A, 1.0, vi, 0.0, ai, NULL);
    if (E) {
        mbla_csc_gemv(E, 1.0, vr, 0.0, er, NULL);
        mbla_csc_gemv(E, 1.0, vi, 0.0, ei, NULL);
    } else {
        memcpy(er, vr, sizeof(double) * n);
        memcpy(ei, vi, sizeof(double) * n);
    }
    double m = 0;
    for (int i = 0; i < n; i++) {
        double rr = ar[i] - (lr * er[i] - li * ei[i]);
        double ri = ai[i] - (lr * ei[i] + li * er[i]);
        m = fmax(m, hypot(rr, ri));
    }
    free(ar);
    free(ai);
    free(er);
    free(ei);
    return m;
}

/* 1-D Laplacian tridiag(-1, 2, -1), n = 2000: lambda_j = 2 - 2 cos(j pi/(n+1)). */
TEST(eigs_laplacian_closed_form)
{
    int n = 2000, k = 6;
    mbla_csc *A = tridiag(n, -1, 2, -1);
    double sigma = 1.0007, lr[6], li[6];
    double *Vr = malloc(sizeof(double) * n * k), *Vi = malloc(sizeof(double) * n * k);
    int nconv = -1;
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sinv(A, NULL, sigma, 0.0, k, NULL, lr, li, Vr, Vi, n, &nconv, &st), 0);
    CHECK(nconv >= k);
    /* the k closed-form eigenvalues nearest sigma */
    double ex[6];
    int used[2001] = {0};
    for (int t = 0; t < k; t++) {
        int best = 0;
        double bd = 1e300;
        for (int j = 1; j <= n; j++) {
            double l = 2 - 2 * cos(j * PI / (n + 1)), d = fabs(l - sigma);
            if (!used[j] && d < bd) bd = d, best = j;
        }
        used[best] = 1;
        ex[t] = 2 - 2 * cos(best * PI / (n + 1));
    }
    for (int t = 0; t < k; t++) {
        CHECK_REL(lr[t], ex[t], 1e-11);
        CHECK_CLOSE(li[t], 0.0, 1e-12);
        CHECK(residual(A, NULL, lr[t], li[t], Vr + (size_t)t * n, Vi + (size_t)t * n) < 1e-10);
    }
    free(Vr);
    free(Vi);
    mbla_csc_free(A);
}

/* (K, M) of linear finite elements of a fixed-fixed bar, n = 2000, sigma = 0: the lowest
 * eigenvalues 6 k (1 - cos t)/(m (2 + cos t)), t = j pi/(n+1), by the nonsymmetric path. */
TEST(eigs_generalized_symmetric_closed_form)
{
    int n = 2000, k = 5;
    double kk = 4.0, mm = 0.25;
    mbla_csc *K = tridiag(n, -kk, 2 * kk, -kk), *M = tridiag(n, mm / 6, 4 * mm / 6, mm / 6);
    double lr[5], li[5];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sinv(K, M, 0.0, 0.0, k, NULL, lr, li, NULL, NULL, 0, NULL, &st), 0);
    for (int j = 1; j <= k; j++) {
        double t = j * PI / (n + 1);
        CHECK_REL(lr[j - 1], 6 * kk * (1 - cos(t)) / (mm * (2 + cos(t))), 1e-9);
        CHECK_CLOSE(li[j - 1], 0.0, 1e-12);
    }
    mbla_csc_free(K);
    mbla_csc_free(M);
}

/* A 2000 x 2000 descriptor pencil (A, E): block upper triangular with 1 x 1 blocks
 * A_ii / E_ii = -(0.5 + 0.01 i) (E_ii = 0, i.e. infinite eigenvalues, every tenth row), weak
 * upper couplings, and a 200 x 200 block at [900, 1100) that is -0.1 I + skew tridiag(1, -1)
 * with E = I (eigenvalues -0.1 +- 2i cos(k pi/201)). LAPACK's QZ isolates the 1 x 1 blocks,
 * so dggev on the dense pencil takes well under a second. */
enum { PN = 2000, PB0 = 900, PNB = 200 };

static void build_pencil(mbla_csc **A, mbla_csc **E)
{
    trip ta, te;
    trip_init(&ta, PN, 4 * PN);
    trip_init(&te, PN, 2 * PN);
    for (int i = 0; i < PN; i++) {
        int inblock = i >= PB0 && i < PB0 + PNB;
        if (inblock) {
            trip_add(&ta, i, i, -0.1);
            if (i > PB0) trip_add(&ta, i, i - 1, 1.0);
            if (i + 1 < PB0 + PNB) trip_add(&ta, i, i + 1, -1.0);
            trip_add(&te, i, i, 1.0);
            continue;
        }
        trip_add(&ta, i, i, -(0.5 + 0.01 * i));
        if (i % 10 != 3) trip_add(&te, i, i, 1.0);
        if (i + 1 < PN) trip_add(&ta, i, i + 1, 0.002);
        if (i + 7 < PN) trip_add(&ta, i, i + 7, 0.001);
        if (i + 3 < PN) trip_add(&te, i, i + 3, 0.001);
    }
    *A = trip_done(&ta);
    *E = trip_done(&te);
}

typedef struct {
    double re, im, d;
} cval;

static int cmp_cval(const void *a, const void *b)
{
    double x = ((const cval *)a)->d, y = ((const cval *)b)->d;
    return (x > y) - (x < y);
}

TEST(eigs_pencil_against_dggev)
{
    mbla_csc *A, *E;
    build_pencil(&A, &E);
    int n = PN, k = 6;
    double *DA = malloc(sizeof(double) * n * n), *DE = malloc(sizeof(double) * n * n);
    double *ar = malloc(sizeof(double) * n), *ai = malloc(sizeof(double) * n);
    double *be = malloc(sizeof(double) * n);
    mbla_csc_to_dense(A, DA, n, NULL);
    mbla_csc_to_dense(E, DE, n, NULL);
    mbl_status st;
    CHECK_EQ_INT(mbla_ggev(n, DA, n, DE, n, ar, ai, be, NULL, 1, NULL, 1, &st), 0);
    int ninf = 0;
    for (int j = 0; j < n; j++) ninf += be[j] == 0.0;
    CHECK_EQ_INT(ninf, (PN - PNB) / 10);
    /* the block's eigenvalues are in closed form as well */
    int nblock = 0;
    for (int j = 0; j < n; j++) {
        if (be[j] == 0.0 || ai[j] == 0.0) continue;
        double im = fabs(ai[j] / be[j]);
        double kk = acos(im / 2) * 201 / PI;
        CHECK_CLOSE(ar[j] / be[j], -0.1, 1e-12);
        CHECK_CLOSE(kk, round(kk), 1e-8);
        nblock++;
    }
    CHECK_EQ_INT(nblock, PNB);
    /* real shift among real eigenvalues; complex shift; real shift among complex pairs */
    double shifts[3][2] = {{-5.004, 0.0}, {-0.1, 1.003}, {-0.1, 0.0}};
    for (int s = 0; s < 3; s++) {
        double sr = shifts[s][0], si = shifts[s][1];
        cval *ref = malloc(sizeof(cval) * n);
        int nf = 0;
        for (int j = 0; j < n; j++) {
            if (be[j] == 0.0) continue;
            ref[nf].re = ar[j] / be[j];
            ref[nf].im = ai[j] / be[j];
            ref[nf].d = hypot(ref[nf].re - sr, ref[nf].im - si);
            nf++;
        }
        qsort(ref, nf, sizeof *ref, cmp_cval);
        double lr[6], li[6];
        double *Vr = malloc(sizeof(double) * n * k), *Vi = malloc(sizeof(double) * n * k);
        int nconv = -1;
        CHECK_EQ_INT(mbla_eigs_sinv(A, E, sr, si, k, NULL, lr, li, Vr, Vi, n, &nconv, &st), 0);
        for (int t = 0; t < k; t++) {
            /* same distance order; conjugate pairs tie, so match the value within the k */
            CHECK_CLOSE(hypot(lr[t] - sr, li[t] - si), ref[t].d, 1e-10);
            int match = 0;
            for (int u = 0; u < k; u++)
                match += fabs(lr[t] - ref[u].re) < 1e-10 && fabs(li[t] - ref[u].im) < 1e-10;
            CHECK_MSG(match == 1, "shift %d: eig %d: arpack %.15g%+.15gi, dggev %.15g%+.15gi", s,
                      t, lr[t], li[t], ref[t].re, ref[t].im);
            double res = residual(A, E, lr[t], li[t], Vr + (size_t)t * n, Vi + (size_t)t * n);
            CHECK_MSG(res < 1e-10, "residual %g", res);
        }
        if (s == 0) {
            /* real shift in the real part of the spectrum: -5.0, -5.01, -4.99, ... */
            CHECK_CLOSE(lr[0], -5.0, 1e-12);
            CHECK_CLOSE(lr[1], -5.01, 1e-12);
        } else if (s == 1) {
            /* complex shift near the block's eigenvalue -0.1 + 1.0i (k = 67) */
            CHECK_CLOSE(lr[0], -0.1, 1e-12);
            CHECK_CLOSE(li[0], 1.0, 1e-12);
        } else {
            /* three conjugate pairs -0.1 +- 2i cos(k pi/201), k = 100, 99, 98 */
            for (int t = 0; t < k; t++) {
                CHECK_CLOSE(lr[t], -0.1, 1e-12);
                CHECK_CLOSE(fabs(li[t]), 2 * cos((100 - t / 2) * PI / 201), 1e-12);
            }
            CHECK_CLOSE(li[0] + li[1], 0.0, 1e-12);
        }
        free(ref);
        free(Vr);
        free(Vi);
    }
    free(DA);
    free(DE);
    free(ar);
    free(ai);
    free(be);
    mbla_csc_free(A);
    mbla_csc_free(E);
}

/* The descriptor pencil (source 001 Eq. 8) of a stiff chain: N masses m between a wall and an
 * (N+1)-th mass held at 0 by a constraint, springs k, constraint rows and multiplier column scaled
 * by s = 2^33 (as the sparse pencil of a stiff model is):
 *   E = [I 0 0; 0 m I 0; 0 0 0],  A = [0 I 0; -K 0 -s G^T; -s G 0 0],  G = e_N^T.
 * The finite eigenvalues are +-i 2 sqrt(k/m) sin(j pi/(2(N+1))), j = 1..N, spanning 3 to 2000
 * rad/s (an index-3 pencil, as the flexible pendulum's). */
enum { RN = 1000 };

static void chain_pencil(mbla_csc **A, mbla_csc **E, double kk, double mm, double s)
{
    int n = RN + 1, nd = 2 * n + 1;
    trip ta, te;
    trip_init(&ta, nd, 6 * n + 4);
    trip_init(&te, nd, 2 * n);
    for (int i = 0; i < n; i++) {
        trip_add(&te, i, i, 1.0);
        trip_add(&te, n + i, n + i, mm);
        trip_add(&ta, i, n + i, 1.0);
        trip_add(&ta, n + i, i, -(i < RN ? 2 * kk : kk));
        if (i > 0) trip_add(&ta, n + i, i - 1, kk);
        if (i + 1 < n) trip_add(&ta, n + i, i + 1, kk);
    }
    trip_add(&ta, 2 * n, RN, -s);
    trip_add(&ta, n + RN, 2 * n, -s);
    *A = trip_done(&ta);
    *E = trip_done(&te);
}

/* mbla_eigs_refine: the ARPACK pairs nearest 0, their eigenvalues then spoiled by a relative 1e-5,
 * come back to the closed form to 1e-13 relative (a backward-stable eigensolver is limited to
 * about eps (omega_max / omega_1)^2 = 1e-10 on the lowest), conjugate pairs exactly conjugate,
 * backward errors at the rounding level. */
TEST(eigs_refine_stiff_descriptor_pencil)
{
    int n = RN + 1, nd = 2 * n + 1, k = 10;
    double kk = 1e6, mm = 1.0;
    mbla_csc *A = NULL, *E = NULL;
    chain_pencil(&A, &E, kk, mm, ldexp(1.0, 33));
    double lr[10], li[10], be[10], l0r[10], l0i[10];
    int it[10];
    double *Vr = malloc(sizeof(double) * nd * k), *Vi = malloc(sizeof(double) * nd * k);
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sinv(A, E, -1e-3, 0.0, k, NULL, lr, li, Vr, Vi, nd, NULL, &st), 0);
    /* the closed form of each: the nearest +-omega_j */
    double ex[10], err0 = 0;
    for (int t = 0; t < k; t++) {
        int j = (int)floor(fabs(li[t]) / (2 * sqrt(kk / mm)) * 2 * (RN + 1) / PI * (1 + 1e-9)); /* asin ~ x */
        double best = 1e300;
        for (int jj = j > 2 ? j - 2 : 1; jj <= j + 2; jj++) {
            double w = 2 * sqrt(kk / mm) * sin(jj * PI / (2.0 * (RN + 1)));
            if (fabs(fabs(li[t]) - w) < fabs(fabs(li[t]) - best)) best = w;
        }
        ex[t] = li[t] > 0 ? best : -best;
        lr[t] *= 1 + 1e-5, li[t] *= 1 + 1e-5; /* spoil, keeping conjugates exact */
        err0 = fmax(err0, hypot(lr[t], li[t] - ex[t]) / fabs(ex[t]));
        l0r[t] = lr[t], l0i[t] = li[t];
    }
    CHECK(err0 > 5e-6);
    CHECK(fabs(fabs(ex[0]) - 2 * sqrt(kk / mm) * sin(PI / (2.0 * (RN + 1)))) == 0.0);
    CHECK_EQ_INT(mbla_eigs_refine(A, E, k, lr, li, Vr, Vi, nd, 0, be, it, &st), 0);
    for (int t = 0; t < k; t++) {
        CHECK_MSG(hypot(lr[t], li[t] - ex[t]) <= 1e-13 * fabs(ex[t]), "t %d: %.17g%+.17gi, closed form %.17gi", t,
                  lr[t], li[t], ex[t]);
        CHECK_MSG(be[t] < 1e-15, "t %d: backward error %g", t, be[t]);
        CHECK(it[t] >= 1 && it[t] <= 8);
        CHECK(residual(A, E, lr[t], li[t], Vr + (size_t)t * nd, Vi + (size_t)t * nd) < 1e-6);
        for (int u = 0; u < t; u++)
            if (l0r[u] == l0r[t] && l0i[u] == -l0i[t]) {
                CHECK(lr[u] == lr[t] && li[u] == -li[t]);
                for (int i = 0; i < nd; i++)
                    CHECK(Vr[i + (size_t)u * nd] == Vr[i + (size_t)t * nd] &&
                          Vi[i + (size_t)u * nd] == -Vi[i + (size_t)t * nd]);
            }
    }
    /* an exact eigenpair stays (the best pair seen is returned) */
    double lr1 = lr[0], li1 = li[0];
    CHECK_EQ_INT(mbla_eigs_refine(A, E, 1, lr, li, Vr, Vi, nd, 3, be, it, &st), 0);
    CHECK(hypot(lr[0] - lr1, li[0] - li1) <= 4e-16 * fabs(li1));
    /* two starts near the same eigenpair: the nearer converges, the other (it would move more
     * than half way to the first start) is returned as given */
    for (int i = 0; i < nd; i++) Vr[i + nd] = Vr[i] * (1 + 1e-3 * sin(i)), Vi[i + nd] = Vi[i];
    lr[1] = lr[0], li[0] = li1 * (1 + 1e-6), li[1] = li1 * (1 + 5e-6);
    double g1r = lr[1], g1i = li[1];
    CHECK_EQ_INT(mbla_eigs_refine(A, E, 2, lr, li, Vr, Vi, nd, 0, be, it, &st), 0);
    CHECK(hypot(lr[0] - lr1, li[0] - li1) <= 1e-13 * fabs(li1) && it[0] >= 1);
    CHECK_MSG(lr[1] == g1r && li[1] == g1i && it[1] == 0, "%.17g%+.17gi, %d steps", lr[1], li[1], it[1]);
    /* errors */
    CHECK_EQ_INT(mbla_eigs_refine(A, E, 1, lr, li, Vr, NULL, nd, 0, NULL, NULL, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_eigs_refine(A, E, 1, lr, li, Vr, Vi, nd - 1, 0, NULL, NULL, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_eigs_refine(A, NULL, 1, lr, li, Vr, Vi, nd, 0, NULL, NULL, &st), MBL_EARG);
    memset(Vr, 0, sizeof(double) * nd), memset(Vi, 0, sizeof(double) * nd);
    CHECK_EQ_INT(mbla_eigs_refine(A, E, 1, lr, li, Vr, Vi, nd, 0, NULL, NULL, &st), MBL_EARG);
    CHECK(strstr(st.msg, "zero") != NULL);
    free(Vr);
    free(Vi);
    mbla_csc_free(A);
    mbla_csc_free(E);
}

/* mbla_eigs_sym_sinv on a constraint-augmented (saddle-point) pencil: a free-free chain of N + 1
 * masses m joined by springs k, coordinate 0 held by the constraint q_0 = 0 (scaled by 2^20: the
 * stiff, ill-conditioned case), is the fixed-free chain of N masses, closed form
 * w_j = (4 k / m) sin^2((2j - 1) pi / (2 (2N + 1))). K_aug = [K c e_0; c e_0^T 0], B = [M 0; 0 0]
 * (singular). The lowest 6 from sigma = -1e-6 to 1e-10 relative (the limit of a backward-stable
 * solver: eps w_max / w_1 = 1e-10); the eigenvectors satisfy the
 * pencil and the constraint; 4 eigenvalues nearest an interior shift likewise. */
TEST(eigs_sym_saddle_chain_closed_form)
{
    int N = 400, n = N + 1, na = n + 1, k = 6;
    double kk = 1e6, mm = 2.0, c = ldexp(1.0, 20);
    trip tk, tb;
    trip_init(&tk, na, 3 * n + 2);
    trip_init(&tb, na, n);
    for (int i = 0; i < n; i++) {
        trip_add(&tb, i, i, mm);
        trip_add(&tk, i, i, (i == 0 || i == N) ? kk : 2 * kk);
        if (i > 0) trip_add(&tk, i, i - 1, -kk);
        if (i + 1 < n) trip_add(&tk, i, i + 1, -kk);
    }
    trip_add(&tk, n, 0, c);
    trip_add(&tk, 0, n, c);
    mbla_csc *K = trip_done(&tk), *B = trip_done(&tb);
    double w[6], *V = malloc(sizeof(double) * na * k);
    int nconv = -1;
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, -1e-6, k, NULL, w, V, na, &nconv, &st), 0);
    CHECK(nconv >= k);
    double *r = malloc(sizeof(double) * na), *bv = malloc(sizeof(double) * na);
    for (int j = 0; j < k; j++) {
        double sj = sin((2 * j + 1) * PI / (2.0 * (2 * N + 1))), ex = 4 * kk / mm * sj * sj;
        CHECK_REL(w[j], ex, 1e-10);
        const double *v = V + (size_t)j * na;
        mbla_csc_gemv(K, 1.0, v, 0.0, r, NULL);
        mbla_csc_gemv(B, 1.0, v, 0.0, bv, NULL);
        double rn = 0, vn = 0;
        for (int i = 0; i < na; i++) rn = fmax(rn, fabs(r[i] - w[j] * bv[i])), vn = fmax(vn, fabs(v[i]));
        CHECK_MSG(rn <= 1e-9 * 4 * kk * vn, "pair %d residual %g", j, rn);
        CHECK(fabs(v[0]) <= 1e-12 * vn);
    }
    /* an interior shift: the 4 nearest, sorted by distance */
    double sig = 4 * kk / mm * 0.5, w4[4];
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, sig, 4, NULL, w4, NULL, 0, NULL, &st), 0);
    double ex4[4];
    int ne = 0;
    for (int j = 0; j < N; j++) {
        double sj = sin((2 * j + 1) * PI / (2.0 * (2 * N + 1))), ex = 4 * kk / mm * sj * sj;
        /* insert ex into the 4 nearest sig (insertion by distance) */
        int p = ne < 4 ? ne++ : 4;
        while (p > 0 && fabs(ex4[p - 1] - sig) > fabs(ex - sig)) {
            if (p < 4) ex4[p] = ex4[p - 1];
            p--;
        }
        if (p < 4) ex4[p] = ex;
    }
    for (int j = 0; j < 4; j++) CHECK_REL(w4[j], ex4[j], 1e-10);
    /* errors: k out of range, B of another order */
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, -1e-6, na, NULL, w, NULL, 0, NULL, &st), MBL_EDIM);
    mbla_csc *B2 = tridiag(n, 0, 1, 0);
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B2, -1e-6, 2, NULL, w, NULL, 0, NULL, &st), MBL_EDIM);
    ALLOC_FAIL_LOOP(mbla_eigs_sym_sinv(K, B, -1e-6, 3, NULL, w, V, na, NULL, NULL), (void)0);
    CHECK_REL(w[0], 4 * kk / mm * pow(sin(PI / (2.0 * (2 * N + 1))), 2), 1e-10);
    free(r), free(bv), free(V);
    mbla_csc_free(K), mbla_csc_free(B), mbla_csc_free(B2);
}

/* mbla_eigs_refine_sym on the stiff saddle-point chain above (N = 400, constraint scale 2^20): the
 * Lanczos pairs, their eigenvalues spoiled by a relative 1e-3, come back to the closed form to
 * 1e-12 relative with every pair flagged converged; with one step allowed each pair stops 1e-6 or
 * more away and is flagged not converged (conv = 0), never returned as converged. */
TEST(eigs_refine_sym_conv_flag)
{
    int N = 400, n = N + 1, na = n + 1, k = 4;
    double kk = 1e6, mm = 2.0, c = ldexp(1.0, 20);
    trip tk, tb;
    trip_init(&tk, na, 3 * n + 2);
    trip_init(&tb, na, n);
    for (int i = 0; i < n; i++) {
        trip_add(&tb, i, i, mm);
        trip_add(&tk, i, i, (i == 0 || i == N) ? kk : 2 * kk);
        if (i > 0) trip_add(&tk, i, i - 1, -kk);
        if (i + 1 < n) trip_add(&tk, i, i + 1, -kk);
    }
    trip_add(&tk, n, 0, c);
    trip_add(&tk, 0, n, c);
    mbla_csc *K = trip_done(&tk), *B = trip_done(&tb);
    double w[4], w0[4], ex[4], be[4], *V = malloc(sizeof(double) * na * k), *V0 = malloc(sizeof(double) * na * k);
    int it[4], cv[4];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, -1e-6, k, NULL, w0, V0, na, NULL, &st), 0);
    for (int j = 0; j < k; j++) {
        double sj = sin((2 * j + 1) * PI / (2.0 * (2 * N + 1)));
        ex[j] = 4 * kk / mm * sj * sj;
        w0[j] *= 1 + 1e-3;
        /* the vector spoiled too: a component of the neighbouring mode */
        for (int i = 0; i < na; i++) V0[i + (size_t)j * na] += 1e-2 * V0[i + (size_t)((j + 1) % k) * na];
    }
    memcpy(w, w0, sizeof w), memcpy(V, V0, sizeof(double) * na * k);
    CHECK_EQ_INT(mbla_eigs_refine_sym(K, B, k, w, V, na, 0, be, it, cv, &st), 0);
    for (int j = 0; j < k; j++) {
        CHECK_MSG(fabs(w[j] - ex[j]) <= 1e-12 * ex[j], "pair %d: %.17g, closed form %.17g", j, w[j], ex[j]);
        CHECK_MSG(cv[j] == 1, "pair %d not flagged converged (%d steps)", j, it[j]);
        CHECK(it[j] >= 1 && be[j] < 1e-14);
    }
    memcpy(w, w0, sizeof w), memcpy(V, V0, sizeof(double) * na * k);
    CHECK_EQ_INT(mbla_eigs_refine_sym(K, B, k, w, V, na, 1, be, it, cv, &st), 0);
    for (int j = 0; j < k; j++) {
        CHECK_MSG(cv[j] == 0, "pair %d flagged converged after 1 step: %.17g, closed form %.17g", j, w[j], ex[j]);
        CHECK(it[j] <= 1);
    }
    CHECK_EQ_INT(mbla_eigs_refine_sym(K, B, k, NULL, V, na, 0, be, it, cv, &st), MBL_EARG);
    ALLOC_FAIL_LOOP(mbla_eigs_refine_sym(K, B, k, w, V, na, 0, NULL, NULL, NULL, NULL), (void)0);
    free(V), free(V0);
    mbla_csc_free(K), mbla_csc_free(B);
}

/* mbla_eigs_refine_sym_block on the stiff saddle-point chain above (N = 400, constraint scale 2^20):
 * the Lanczos pairs of the 4 lowest and 2 guards, eigenvalues spoiled by a relative 1e-3 and each
 * vector by 1e-2 of its neighbour, come back to the closed form to 1e-12 relative, sorted, with the
 * wanted pairs flagged converged and the vectors satisfying the pencil (backward error below 1e-11:
 * Ritz vectors, not Newton-polished ones) and the constraint; with one
 * step allowed none is flagged converged. Also two identical chains coupled by springs eps k
 * between corresponding masses (closed form: w_j and w_j + 2 eps k / m, a cluster of relative width
 * 4e-8 for the lowest pair): every pair of the cluster separately to 1e-12. */
static void saddle_chain_pencil(int N, int twins, double eps_k, mbla_csc **Kp, mbla_csc **Bp)
{
    int n = N + 1, nc = twins ? 2 : 1, na = nc * n + nc;
    double kk = 1e6, mm = 2.0, c = ldexp(1.0, 20);
    trip tk, tb;
    trip_init(&tk, na, nc * (4 * n + 4));
    trip_init(&tb, na, nc * n);
    for (int h = 0; h < nc; h++) {
        int o = h * n;
        for (int i = 0; i < n; i++) {
            trip_add(&tb, o + i, o + i, mm);
            double d = (i == 0 || i == N) ? kk : 2 * kk;
            trip_add(&tk, o + i, o + i, d + (twins ? eps_k * kk : 0));
            if (i > 0) trip_add(&tk, o + i, o + i - 1, -kk);
            if (i + 1 < n) trip_add(&tk, o + i, o + i + 1, -kk);
            if (twins) trip_add(&tk, o + i, (o + n + i) % (2 * n), -eps_k * kk);
        }
        trip_add(&tk, nc * n + h, o, c);
        trip_add(&tk, o, nc * n + h, c);
    }
    *Kp = trip_done(&tk), *Bp = trip_done(&tb);
}

TEST(eigs_refine_sym_block)
{
    int N = 400, na = N + 2, p = 6, k = 4;
    double kk = 1e6, mm = 2.0;
    mbla_csc *K, *B;
    saddle_chain_pencil(N, 0, 0, &K, &B);
    double w[6], w0[6], ex[6], be[6], *V = malloc(sizeof(double) * na * p), *V0 = malloc(sizeof(double) * na * p);
    int it[6], cv[6];
    mbl_status st;
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, -1e-6, p, NULL, w0, V0, na, NULL, &st), 0);
    for (int j = 0; j < p; j++) {
        double sj = sin((2 * j + 1) * PI / (2.0 * (2 * N + 1)));
        ex[j] = 4 * kk / mm * sj * sj;
        w0[j] *= 1 + 1e-3;
        for (int i = 0; i < na; i++) V0[i + (size_t)j * na] += 1e-2 * V0[i + (size_t)((j + 1) % p) * na];
    }
    memcpy(w, w0, sizeof w), memcpy(V, V0, sizeof(double) * na * p);
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, w, V, na, 0, be, it, cv, &st), 0);
    double *r = malloc(sizeof(double) * na), *bv = malloc(sizeof(double) * na);
    for (int j = 0; j < p; j++) {
        CHECK_MSG(fabs(w[j] - ex[j]) <= 1e-12 * ex[j], "pair %d: %.17g, closed form %.17g", j, w[j], ex[j]);
        if (j < k) CHECK_MSG(cv[j] == 1, "pair %d not flagged converged (%d steps)", j, it[j]);
        CHECK_MSG(it[j] >= 1 && be[j] < 1e-11, "pair %d: %d steps, backward error %.3g", j, it[j], be[j]);
        const double *v = V + (size_t)j * na;
        mbla_csc_gemv(K, 1.0, v, 0.0, r, NULL);
        mbla_csc_gemv(B, 1.0, v, 0.0, bv, NULL);
        double rn = 0, vn = 0;
        for (int i = 0; i < na; i++) rn = fmax(rn, fabs(r[i] - w[j] * bv[i])), vn = fmax(vn, fabs(v[i]));
        CHECK_MSG(rn <= 1e-9 * 4 * kk * vn, "pair %d residual %g", j, rn);
        CHECK(fabs(v[0]) <= 1e-12 * vn);
    }
    memcpy(w, w0, sizeof w), memcpy(V, V0, sizeof(double) * na * p);
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, w, V, na, 1, be, it, cv, &st), 0);
    for (int j = 0; j < k; j++) CHECK_MSG(cv[j] == 0, "pair %d flagged converged after 1 step", j);
    /* errors */
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, NULL, V, na, 0, be, it, cv, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, p + 1, w, V, na, 0, be, it, cv, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, w, V, na - 1, 0, be, it, cv, &st), MBL_EDIM);
    ALLOC_FAIL_LOOP(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, w, V, na, 0, NULL, NULL, NULL, NULL), (void)0);
    mbla_csc_free(K), mbla_csc_free(B);
    free(V), free(V0);

    /* the twin chains: a cluster per mode */
    double ek = 1e-8;
    int nb = 2 * (N + 1) + 2;
    saddle_chain_pencil(N, 1, ek, &K, &B);
    V = malloc(sizeof(double) * nb * p);
    CHECK_EQ_INT(mbla_eigs_sym_sinv(K, B, -1e-6, p, NULL, w, V, nb, NULL, &st), 0);
    for (int j = 0; j < p; j++) w[j] *= 1 + 1e-4;
    CHECK_EQ_INT(mbla_eigs_refine_sym_block(K, B, -1e-6, p, k, w, V, nb, 0, be, it, cv, &st), 0);
    for (int j = 0; j < k; j++) {
        double sj = sin((2 * (j / 2) + 1) * PI / (2.0 * (2 * N + 1)));
        double e = 4 * kk / mm * sj * sj + (j % 2 ? 2 * ek * kk / mm : 0);
        CHECK_MSG(fabs(w[j] - e) <= 1e-12 * e, "twin pair %d: %.17g, closed form %.17g", j, w[j], e);
        CHECK(cv[j] == 1);
    }
    free(V), free(r), free(bv);
    mbla_csc_free(K), mbla_csc_free(B);
}

TEST(eigs_errors)
{
    int n = 300;
    mbla_csc *A = tridiag(n, -1, 2, -1);
    double lr[20], li[20];
    int nconv = -1;
    mbl_status st;
    /* no convergence: one Arnoldi iteration, tight tolerance, crowded spectrum */
    mbla_eigs_opts o;
    mbla_eigs_opts_default(&o);
    o.maxiter = 1;
    o.ncv = 22;
    CHECK_EQ_INT(mbla_eigs_sinv(A, NULL, 1.0003, 0.0, 20, &o, lr, li, NULL, NULL, 0, &nconv, &st),
                 MBL_ENOCONV);
    CHECK(nconv >= 0 && nconv < 20);
    CHECK_MSG(strstr(st.msg, "of 20 eigenvalues") != NULL, "%s", st.msg);
    /* k out of range, E of the wrong size, bad ncv */
    CHECK_EQ_INT(mbla_eigs_sinv(A, NULL, 1.0, 0.0, n - 1, NULL, lr, li, NULL, NULL, 0, NULL, &st),
                 MBL_EDIM);
    mbla_csc *E = tridiag(n - 1, 0, 1, 0);
    CHECK_EQ_INT(mbla_eigs_sinv(A, E, 1.0, 0.0, 2, NULL, lr, li, NULL, NULL, 0, NULL, &st), MBL_EDIM);
    o.maxiter = 100;
    o.ncv = 3;
    CHECK_EQ_INT(mbla_eigs_sinv(A, NULL, 1.0, 0.0, 2, &o, lr, li, NULL, NULL, 0, NULL, &st), MBL_EDIM);
    /* shift exactly at an eigenvalue of a diagonal matrix: A - sigma E singular */
    mbla_csc *D = tridiag(n, 0, 1, 0);
    for (int j = 0; j < n; j++)
        for (int q = D->p[j]; q < D->p[j + 1]; q++)
            if (D->i[q] == j) D->x[q] = j + 1.0;
    CHECK_EQ_INT(mbla_eigs_sinv(D, NULL, 7.0, 0.0, 2, NULL, lr, li, NULL, NULL, 0, NULL, &st),
                 MBL_ESINGULAR);
    CHECK(strstr(st.msg, "singular") != NULL);
    mbla_csc_free(A);
    mbla_csc_free(E);
    mbla_csc_free(D);
}

TEST(eigs_allocation_failures)
{
    int n = 60;
    mbla_csc *A = tridiag(n, -1, 2, -1), *E = tridiag(n, 0, 1, 0);
    double lr[3], li[3], Vr[180], Vi[180];
    ALLOC_FAIL_LOOP(mbla_eigs_sinv(A, E, 0.5, 0.0, 3, NULL, lr, li, Vr, Vi, n, NULL, NULL), (void)0);
    ALLOC_FAIL_LOOP(mbla_eigs_sinv(A, NULL, 0.5, 0.2, 3, NULL, lr, li, Vr, Vi, n, NULL, NULL), (void)0);
    for (int t = 0; t < 3; t++) CHECK(residual(A, NULL, lr[t], li[t], Vr + t * n, Vi + t * n) < 1e-10);
    ALLOC_FAIL_LOOP(mbla_eigs_refine(A, E, 3, lr, li, Vr, Vi, n, 0, NULL, NULL, NULL), (void)0);
    for (int t = 0; t < 3; t++) CHECK(residual(A, E, lr[t], li[t], Vr + t * n, Vi + t * n) < 1e-10);
    mbla_csc_free(A);
    mbla_csc_free(E);
}

int main(void)
{
    RUN(eigs_laplacian_closed_form);
    RUN(eigs_generalized_symmetric_closed_form);
    RUN(eigs_pencil_against_dggev);
    RUN(eigs_refine_stiff_descriptor_pencil);
    RUN(eigs_sym_saddle_chain_closed_form);
    RUN(eigs_refine_sym_conv_flag);
    RUN(eigs_refine_sym_block);
    RUN(eigs_errors);
    RUN(eigs_allocation_failures);
    return test_summary("la_eigs");
}
