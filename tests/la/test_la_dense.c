/* Tests of the dense wrappers of src/la against closed forms and independent routes. */
#include "la_test_util.h"

#include <float.h>

static const double PI = 3.14159265358979323846;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* tridiagonal Toeplitz (sub b, diag a, super c): lambda_k = a + 2 sqrt(bc) cos(k pi/(n+1)) */
TEST(eig_tridiagonal_toeplitz)
{
    enum { n = 20 };
    double a = 2.0, b = 1.5, c = 0.6, A[n * n] = {0}, wr[n], wi[n], ex[n];
    for (int i = 0; i < n; i++) {
        A[i + i * n] = a;
        if (i + 1 < n) {
            A[i + 1 + i * n] = b;
            A[i + (i + 1) * n] = c;
        }
    }
    mbl_status st;
    CHECK_EQ_INT(mbla_eig(n, A, n, wr, wi, NULL, 1, NULL, 1, &st), 0);
    for (int k = 1; k <= n; k++) ex[k - 1] = a + 2.0 * sqrt(b * c) * cos(k * PI / (n + 1));
    qsort(wr, n, sizeof *wr, cmp_double);
    qsort(ex, n, sizeof *ex, cmp_double);
    for (int k = 0; k < n; k++) {
        CHECK_CLOSE(wr[k], ex[k], 1e-10);
        CHECK_CLOSE(wi[k], 0.0, 1e-10);
    }
}

/* companion matrix of (x^2 + 1)(x^2 + 2x + 5)(x - 3): roots +-i, -1 +- 2i, 3 */
TEST(eig_companion_complex_roots)
{
    enum { n = 5 };
    /* multiply out: p = x^5 + c4 x^4 + ... + c0 */
    double p[n + 1] = {1}; /* coefficients of increasing degree, start with 1 */
    int deg = 0;
    double f[3][3] = {{1, 0, 1}, {5, 2, 1}, {-3, 1, 0}}; /* c0 + c1 x + c2 x^2 */
    int fd[3] = {2, 2, 1};
    for (int t = 0; t < 3; t++) {
        double q[n + 1] = {0};
        for (int i = 0; i <= deg; i++)
            for (int j = 0; j <= fd[t]; j++) q[i + j] += p[i] * f[t][j];
        deg += fd[t];
        memcpy(p, q, sizeof q);
    }
    CHECK_EQ_INT(deg, 5);
    CHECK_CLOSE(p[5], 1.0, 0);
    double A[n * n] = {0}, wr[n], wi[n], VR[n * n];
    for (int i = 1; i < n; i++) A[i + (i - 1) * n] = 1.0;   /* subdiagonal ones */
    for (int i = 0; i < n; i++) A[i + (n - 1) * n] = -p[i]; /* last column */
    mbl_status st;
    CHECK_EQ_INT(mbla_eig(n, A, n, wr, wi, NULL, 1, VR, n, &st), 0);
    double ere[n] = {0, 0, -1, -1, 3}, eim[n] = {1, -1, 2, -2, 0};
    for (int e = 0; e < n; e++) {
        int found = 0;
        for (int k = 0; k < n; k++)
            if (fabs(wr[k] - ere[e]) < 1e-10 && fabs(wi[k] - eim[e]) < 1e-10) found++;
        CHECK_MSG(found == 1, "root %g%+gi found %d times", ere[e], eim[e], found);
    }
    /* conjugate pairs: positive imaginary part first; residual of A v = lambda v */
    for (int k = 0; k < n; k++) {
        if (wi[k] > 0) CHECK(k + 1 < n && wi[k + 1] == -wi[k]);
        if (wi[k] < 0) continue;
        for (int i = 0; i < n; i++) {
            double vr = VR[i + k * n], vi = wi[k] != 0 ? VR[i + (k + 1) * n] : 0.0;
            double avr = 0, avi = 0;
            for (int j = 0; j < n; j++) {
                double xr = VR[j + k * n], xi = wi[k] != 0 ? VR[j + (k + 1) * n] : 0.0;
                avr += A[i + j * n] * xr;
                avi += A[i + j * n] * xi;
            }
            CHECK_CLOSE(avr, wr[k] * vr - wi[k] * vi, 1e-9);
            CHECK_CLOSE(avi, wr[k] * vi + wi[k] * vr, 1e-9);
        }
    }
}

TEST(eig_rotation)
{
    double t = 0.7, A[4] = {cos(t), sin(t), -sin(t), cos(t)}, wr[2], wi[2];
    CHECK_EQ_INT(mbla_eig(2, A, 2, wr, wi, NULL, 1, NULL, 1, NULL), 0);
    CHECK_CLOSE(wr[0], cos(t), 1e-14);
    CHECK_CLOSE(wr[1], cos(t), 1e-14);
    CHECK_CLOSE(wi[0], sin(t), 1e-14);
    CHECK_CLOSE(wi[1], -sin(t), 1e-14);
}

/* largest ||A v - s v|| / (||A||_F ||v||) over the eigenpairs of mbla_eig's packed form */
static double eig_worst_berr(int n, const double *A, const double *wr, const double *wi, const double *VR)
{
    double nA = 0, worst = 0;
    for (int i = 0; i < n * n; i++) nA += A[i] * A[i];
    nA = sqrt(nA);
    for (int k = 0; k < n; k++) {
        int kr = wi[k] < 0 ? k - 1 : k, ki = wi[k] > 0 ? k + 1 : wi[k] < 0 ? k : -1;
        double sg = wi[k] < 0 ? -1 : 1, r2 = 0, x2 = 0;
        for (int i = 0; i < n; i++) {
            double avr = 0, avi = 0, xr = VR[i + kr * n], xi = ki >= 0 ? sg * VR[i + ki * n] : 0;
            for (int j = 0; j < n; j++) {
                avr += A[i + j * n] * VR[j + kr * n];
                avi += ki >= 0 ? A[i + j * n] * sg * VR[j + ki * n] : 0;
            }
            double er = avr - (wr[k] * xr - wi[k] * xi), ei = avi - (wr[k] * xi + wi[k] * xr);
            r2 += er * er + ei * ei;
            x2 += xr * xr + xi * xi;
        }
        worst = fmax(worst, sqrt(r2) / (nA * sqrt(x2)));
    }
    return worst;
}

/* dgeevx with the balancing chosen. The matrix is the core of the mechanism single-track car's A
 * (its wheel angle, a lateral velocity, the yaw rate, the wheel speed; the 1e-32 and 1e-29 are
 * rounding-level entries of exact zeros): dgeev's scaling balancer gives it factors of ~1e23 and
 * eigenvectors with backward errors of 0.16; the permutation alone keeps them at rounding level.
 * The eigenvalues are 0 (three times, to 1e-20) and -6. */
TEST(eig_balance_permutation_only)
{
    enum { n = 4 };
    double A[n * n] = {0}, wr[n], wi[n], VR[n * n];
    A[0 + 3 * n] = 1, A[1 + 3 * n] = -1e-32, A[2 + 1 * n] = 1, A[2 + 2 * n] = -6, A[3 + 2 * n] = -1e-29;
    mbl_status st;
    const char modes[] = "PNSB";
    for (int m = 0; m < 4; m++) {
        CHECK_EQ_INT(mbla_eig_balance(modes[m], n, A, n, wr, wi, VR, n, &st), 0);
        int six = 0, zeros = 0;
        for (int k = 0; k < n; k++) {
            if (fabs(wr[k] + 6) <= 1e-14 && wi[k] == 0) six++;
            if (hypot(wr[k], wi[k]) <= 1e-20) zeros++;
        }
        CHECK_EQ_INT(six, 1);
        CHECK_EQ_INT(zeros, 3);
        if (modes[m] == 'P' || modes[m] == 'N') {
            double b = eig_worst_berr(n, A, wr, wi, VR);
            CHECK_MSG(b <= 1e-15, "balanc %c: backward error %.3g", modes[m], b);
        }
    }
    CHECK_EQ_INT(mbla_eig_balance('P', n, A, n, wr, wi, NULL, 1, &st), 0); /* eigenvalues only */
    CHECK_EQ_INT(mbla_eig_balance('X', n, A, n, wr, wi, VR, n, &st), MBL_EARG);
    CHECK(strstr(st.msg, "balanc") != NULL);
    CHECK_EQ_INT(mbla_eig_balance('P', n, A, 1, wr, wi, VR, n, &st), MBL_EDIM);
    A[5] = NAN;
    CHECK_EQ_INT(mbla_eig_balance('P', n, A, n, wr, wi, VR, n, &st), MBL_EARG);
}

/* K = k tridiag(-1, 2, -1), M = m/6 tridiag(1, 4, 1) (linear finite elements of a fixed-fixed
 * bar): lambda_j = 6 k (1 - cos t_j) / (m (2 + cos t_j)), t_j = j pi/(n+1). */
static void fe_bar(int n, double k, double m, double *K, double *M)
{
    for (int i = 0; i < n * n; i++) K[i] = M[i] = 0.0;
    for (int i = 0; i < n; i++) {
        K[i + i * n] = 2 * k;
        M[i + i * n] = 4 * m / 6;
        if (i + 1 < n) {
            K[i + 1 + i * n] = K[i + (i + 1) * n] = -k;
            M[i + 1 + i * n] = M[i + (i + 1) * n] = m / 6;
        }
    }
}

TEST(sygvd_fe_bar_closed_form)
{
    enum { n = 40 };
    static double K[n * n], M[n * n], Z[n * n];
    double w[n], k = 3.0, m = 0.5;
    fe_bar(n, k, m, K, M);
    mbl_status st;
    CHECK_EQ_INT(mbla_sygvd(n, K, n, M, n, w, Z, n, &st), 0);
    for (int j = 1; j <= n; j++) {
        double t = j * PI / (n + 1);
        CHECK_REL(w[j - 1], 6 * k * (1 - cos(t)) / (m * (2 + cos(t))), 1e-11);
    }
    /* Z^T M Z = I */
    double maxerr = 0;
    for (int a = 0; a < n; a += 7)
        for (int b = 0; b < n; b += 5) {
            double s = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) s += Z[i + a * n] * M[i + j * n] * Z[j + b * n];
            double e = fabs(s - (a == b));
            if (e > maxerr) maxerr = e;
        }
    CHECK(maxerr < 1e-12);
    /* the same pencil by QZ (dggev): an independent route */
    double ar[n], ai[n], be[n], lam[n];
    CHECK_EQ_INT(mbla_ggev(n, K, n, M, n, ar, ai, be, NULL, 1, NULL, 1, &st), 0);
    for (int j = 0; j < n; j++) {
        CHECK(be[j] > 0);
        CHECK_CLOSE(ai[j], 0.0, 1e-12);
        lam[j] = ar[j] / be[j];
    }
    qsort(lam, n, sizeof *lam, cmp_double);
    for (int j = 0; j < n; j++) CHECK_REL(lam[j], w[j], 1e-10);
}

TEST(sygvd_not_positive_definite)
{
    double A[4] = {1, 0, 0, 1}, B[4] = {1, 2, 2, 1}, w[2]; /* B eigenvalues 3, -1 */
    mbl_status st;
    CHECK_EQ_INT(mbla_sygvd(2, A, 2, B, 2, w, NULL, 1, &st), MBL_ESINGULAR);
    CHECK(strstr(st.msg, "not positive definite") != NULL);
    CHECK(strstr(st.msg, "order 2") != NULL);
}

/* E = diag(1, 1, 0): one infinite eigenvalue (beta == 0 exactly); the finite ones are those of
 * the Schur complement A11 - A12 A22^-1 A21 = [[1, 7/4], [0, 3]]: 1 and 3. */
TEST(ggev_singular_pencil_infinite)
{
    double A[9] = {1, 0, 0, 2, 3, 1, 1, 0, 4}; /* rows [1 2 1; 0 3 0; 0 1 4] */
    double E[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    double ar[3], ai[3], be[3], VR[9];
    mbl_status st;
    CHECK_EQ_INT(mbla_ggev(3, A, 3, E, 3, ar, ai, be, NULL, 1, VR, 3, &st), 0);
    int ninf = 0, f1 = 0, f3 = 0;
    for (int j = 0; j < 3; j++) {
        CHECK(ai[j] == 0.0);
        if (be[j] == 0.0) {
            ninf++;
            CHECK(fabs(ar[j]) > 0.1);
            continue;
        }
        double l = ar[j] / be[j];
        if (fabs(l - 1) < 1e-12) f1++;
        if (fabs(l - 3) < 1e-12) f3++;
        /* residual (A - l E) v = 0 */
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int c = 0; c < 3; c++) s += (A[i + 3 * c] - l * E[i + 3 * c]) * VR[c + 3 * j];
            CHECK_CLOSE(s, 0.0, 1e-12);
        }
    }
    CHECK_EQ_INT(ninf, 1);
    CHECK_EQ_INT(f1, 1);
    CHECK_EQ_INT(f3, 1);
}

/* (Q A Z, Q B Z) with Q, Z products of plane rotations: the same eigenvalues, no structure left
 * on the diagonal for QZ to find */
static void rotate_pencil(int n, double *A, double *B, unsigned seed)
{
    for (int k = 0; k < 3 * n; k++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)(seed >> 8) % n, j = (i + 1 + (int)((seed >> 20) % (unsigned)(n - 1))) % n;
        double th = 0.3 + 0.1 * k, c = cos(th), s = sin(th);
        double *M[2] = {A, B};
        for (int t = 0; t < 2; t++) {
            double *X = M[t];
            for (int col = 0; col < n; col++) { /* rows i, j from the left */
                double a = X[i + n * col], b = X[j + n * col];
                X[i + n * col] = c * a - s * b, X[j + n * col] = s * a + c * b;
            }
            for (int row = 0; row < n; row++) { /* columns i, j from the right */
                double a = X[row + n * i], b = X[row + n * j];
                X[row + n * i] = c * a + s * b, X[row + n * j] = -s * a + c * b;
            }
        }
    }
}

static void classify_counts(int n, const double *A, const double *B, int *nf, int *ninf, int *nund, double *re,
                            double *im)
{
    double ar[8], ai[8], be[8];
    int kind[8], nfin = -1;
    mbl_status st;
    *nf = *ninf = *nund = -1;
    CHECK_EQ_INT(mbla_ggev(n, A, n, B, n, ar, ai, be, NULL, 1, NULL, 1, &st), 0);
    int rc = mbla_gev_classify(n, A, n, B, n, ar, ai, be, re, im, kind, &nfin, NULL, &st);
    CHECK(rc == 0 || rc == MBL_ESINGULAR);
    *nf = *ninf = *nund = 0;
    for (int j = 0; j < n; j++) {
        *nf += kind[j] == MBLA_EIG_FINITE;
        *ninf += kind[j] == MBLA_EIG_INFINITE;
        *nund += kind[j] == MBLA_EIG_UNDETERMINED;
        if (kind[j] != MBLA_EIG_FINITE) CHECK(re[j] == INFINITY);
    }
    CHECK_EQ_INT(nfin, *nf);
    CHECK((rc == MBL_ESINGULAR) == (*nund > 0)); /* a singular pencil is refused, its outputs filled */
    if (rc) CHECK(strstr(st.msg, "singular") != NULL);
}

/* Infinite and undetermined eigenvalues told from the pencil, never from |s|, whatever the basis:
 * closed forms of diagonal pencils, then the same pencils rotated. */
TEST(gev_classify_from_the_pencil)
{
    double re[8], im[8];
    int nf, ninf, nund;
    for (int rot = 0; rot < 2; rot++) {
        /* B = diag(1, 0): eigenvalue 2 and one infinite */
        double A1[4] = {2, 0, 0, 3}, B1[4] = {1, 0, 0, 0};
        if (rot) rotate_pencil(2, A1, B1, 7);
        classify_counts(2, A1, B1, &nf, &ninf, &nund, re, im);
        CHECK(nf == 1 && ninf == 1 && nund == 0);
        for (int j = 0; j < 2; j++)
            if (isfinite(re[j])) CHECK_REL(re[j], 2.0, 1e-14);
        /* B = diag(1, 1e-30): the second is infinite within rounding of B (QZ says 3e30) */
        double A2[4] = {2, 0, 0, 3}, B2[4] = {1, 0, 0, 1e-30};
        if (rot) rotate_pencil(2, A2, B2, 11);
        classify_counts(2, A2, B2, &nf, &ninf, &nund, re, im);
        CHECK(nf == 1 && ninf == 1 && nund == 0);
        /* a large finite eigenvalue is finite: diag(1e8, 1) against I */
        double A3[4] = {1e8, 0, 0, 1}, B3[4] = {1, 0, 0, 1};
        if (rot) rotate_pencil(2, A3, B3, 13);
        classify_counts(2, A3, B3, &nf, &ninf, &nund, re, im);
        CHECK(nf == 2 && ninf == 0 && nund == 0);
        /* a singular pencil: det(A - s B) = 0 for every s; one eigenvalue 1, one undetermined */
        double A4[9] = {1, 0, 0, 0, 2, 0, 0, 0, 0}, B4[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
        if (rot) rotate_pencil(3, A4, B4, 17);
        classify_counts(3, A4, B4, &nf, &ninf, &nund, re, im);
        CHECK_MSG(nund >= 1 && nf + ninf + nund == 3, "singular pencil: %d finite, %d infinite, %d undetermined", nf,
                  ninf, nund);
        /* a Jordan block of size 2 at infinity (B nilpotent there) and the eigenvalue 1: rank B = 2
         * leaves one infinite at least, the classification finds both */
        double A5[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, B5[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
        if (rot) rotate_pencil(3, A5, B5, 19);
        classify_counts(3, A5, B5, &nf, &ninf, &nund, re, im);
        CHECK_MSG(nf == 1 && ninf == 2 && nund == 0, "Jordan block at infinity: %d finite, %d infinite, %d undetermined",
                  nf, ninf, nund);
        for (int j = 0; j < 3; j++)
            if (isfinite(re[j])) CHECK_REL(re[j], 1.0, 1e-12);
    }
}

/* Conjugate pairs come out exactly conjugate (LAPACK's two betas of a pair differ by rounding), and
 * the backward errors of QZ's eigenpairs are at rounding level: rotations by 1 and 2 rad scaled
 * by 3 and 0.5 (eigenvalues 3 e^(+-i), 0.5 e^(+-2i)) against a rotated identity */
TEST(gev_conjugates_and_backward_errors)
{
    double A[16] = {0}, B[16] = {0}, ar[4], ai[4], be[4], re[4], im[4], berr[4], VR[16];
    int kind[4];
    mbl_status st;
    A[0] = 3 * cos(1.0), A[1] = 3 * sin(1.0), A[4] = -3 * sin(1.0), A[5] = 3 * cos(1.0);
    A[10] = 0.5 * cos(2.0), A[11] = 0.5 * sin(2.0), A[14] = -0.5 * sin(2.0), A[15] = 0.5 * cos(2.0);
    for (int i = 0; i < 4; i++) B[i + 4 * i] = 1;
    rotate_pencil(4, A, B, 23);
    CHECK_EQ_INT(mbla_ggev(4, A, 4, B, 4, ar, ai, be, NULL, 1, VR, 4, &st), 0);
    CHECK_EQ_INT(mbla_gev_classify(4, A, 4, B, 4, ar, ai, be, re, im, kind, NULL, NULL, &st), 0);
    CHECK_EQ_INT(mbla_gev_berr(4, A, 4, B, 4, re, im, ai, VR, 4, berr, &st), 0);
    int found1 = 0, found2 = 0;
    for (int j = 0; j < 4; j++) {
        CHECK(kind[j] == MBLA_EIG_FINITE);
        CHECK_MSG(berr[j] < 10 * DBL_EPSILON, "backward error %g", berr[j]);
        if (ai[j] > 0 && j + 1 < 4) CHECK(re[j + 1] == re[j] && im[j + 1] == -im[j]);
        double m = hypot(re[j], im[j]), a = fabs(atan2(im[j], re[j]));
        found1 += fabs(m - 3) < 1e-13 && fabs(a - 1) < 1e-13;
        found2 += fabs(m - 0.5) < 1e-14 && fabs(a - 2) < 1e-13;
    }
    CHECK(found1 == 2 && found2 == 2);
}

TEST(lu_solve_and_singular)
{
    double A[9] = {4, 2, 1, -1, 5, 2, 0.5, 1, 6}, x[3] = {1, -2, 3}, b[3];
    for (int i = 0; i < 3; i++) b[i] = A[i] * x[0] + A[i + 3] * x[1] + A[i + 6] * x[2];
    double Ac[9];
    memcpy(Ac, A, sizeof A);
    mbl_status st;
    CHECK_EQ_INT(mbla_lu_solve(3, 1, Ac, 3, b, 3, &st), 0);
    for (int i = 0; i < 3; i++) CHECK_CLOSE(b[i], x[i], 1e-14);
    /* factor once, solve A x = b and A^T x = b */
    mbla_dlu *lu = NULL;
    CHECK_EQ_INT(mbla_dlu_new(3, A, 3, &lu, &st), 0);
    CHECK_EQ_INT(mbla_dlu_n(lu), 3);
    for (int i = 0; i < 3; i++) b[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
    CHECK_EQ_INT(mbla_dlu_solve(lu, 'T', 1, b, 3, &st), 0);
    for (int i = 0; i < 3; i++) CHECK_CLOSE(b[i], x[i], 1e-14);
    CHECK_EQ_INT(mbla_dlu_solve(lu, 'X', 1, b, 3, &st), MBL_EARG);
    mbla_dlu_free(lu);
    /* exactly singular: second row twice the first */
    double S[4] = {1, 2, 2, 4}, bs[2] = {1, 1};
    CHECK_EQ_INT(mbla_lu_solve(2, 1, S, 2, bs, 2, &st), MBL_ESINGULAR);
    CHECK(strstr(st.msg, "pivot 1") != NULL);
    double S2[4] = {1, 2, 2, 4};
    lu = (mbla_dlu *)&st; /* must be reset to NULL on failure */
    CHECK_EQ_INT(mbla_dlu_new(2, S2, 2, &lu, &st), MBL_ESINGULAR);
    CHECK(lu == NULL);
    mbla_dlu_free(NULL);
}

/* Cholesky of the Hilbert matrix of order 4 (SPD), its integer inverse known in closed form:
 * (H^-1)_ij = (-1)^(i+j) (i+j-1) C(n+i-1, n-j) C(n+j-1, n-i) C(i+j-2, i-1)^2 (1-based), which
 * mbla_dchol_inverse gives in both triangles. Only the lower triangle is read: the
 * strict upper one is spoiled first. Not positive definite: [[1, 2], [2, 1]] (minor of order 2). */
TEST(chol_hilbert_inverse)
{
    double H[16];
    static const double Hinv[16] = {16, -120, 240, -140, -120, 1200, -2700, 1680,
                                    240, -2700, 6480, -4200, -140, 1680, -4200, 2800};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) H[i + 4 * j] = j > i ? 99.0 : 1.0 / (i + j + 1);
    mbl_status st;
    CHECK_EQ_INT(mbla_dchol(4, H, 4, &st), 0);
    CHECK_CLOSE(H[0], 1.0, 1e-15);          /* L_11 = sqrt(H_11) */
    CHECK_CLOSE(H[1], 0.5, 1e-15);          /* L_21 = H_21 / L_11 */
    CHECK_CLOSE(H[4], 99.0, 0.0);           /* the upper triangle untouched */
    CHECK_EQ_INT(mbla_dchol_inverse(4, H, 4, &st), 0); /* both triangles: the integer inverse */
    for (int e = 0; e < 16; e++) CHECK_CLOSE(H[e], Hinv[e], 1e-10);
    double N2[4] = {1, 2, 2, 1};
    CHECK_EQ_INT(mbla_dchol(2, N2, 2, &st), MBL_ESINGULAR);
    CHECK(strstr(st.msg, "order 2") != NULL);
    CHECK_EQ_INT(mbla_dchol(2, N2, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_dchol_inverse(2, NULL, 2, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_dchol(0, N2, 1, &st), 0);
}

/* Hilbert matrix of order 4: ||H||_1 = 25/12, ||H^-1||_1 = 13620 (integer inverse), so
 * cond_1 = 28375. */
TEST(dlu_rcond_hilbert)
{
    double H[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) H[i + 4 * j] = 1.0 / (i + j + 1);
    CHECK_CLOSE(mbla_norm1(4, 4, H, 4), 25.0 / 12.0, 1e-15);
    mbla_dlu *lu;
    double rc = 0;
    CHECK_EQ_INT(mbla_dlu_new(4, H, 4, &lu, NULL), 0);
    CHECK_EQ_INT(mbla_dlu_rcond(lu, &rc, NULL), 0);
    double cond = 25.0 / 12.0 * 13620.0;
    CHECK(1.0 / rc <= cond * (1 + 1e-8));
    CHECK(1.0 / rc >= cond / 3.0);
    mbla_dlu_free(lu);
}

/* rank 5 Jacobian-like matrix: product of an 8 x 5 and a 5 x 12 random matrix */
TEST(rank_qrcp_svd)
{
    enum { m = 8, n = 12, r = 5 };
    double X[m * r], Y[r * n], A[m * n], A0[m * n], As[m * n];
    unsigned s = 7;
    for (int i = 0; i < m * r; i++) X[i] = trand(&s);
    for (int i = 0; i < r * n; i++) Y[i] = trand(&s);
    mbl_status st;
    CHECK_EQ_INT(mbla_gemm('N', 'N', m, n, r, 1.0, X, m, Y, r, 0.0, A, m, &st), 0);
    memcpy(A0, A, sizeof A);
    memcpy(As, A, sizeof A);
    int jpvt[n], rank = -1;
    double Q[m * m], R[m * n];
    CHECK_EQ_INT(mbla_qrcp(m, n, A, m, MBLA_DEFAULT, jpvt, &rank, Q, m, m, R, m, &st), 0);
    CHECK_EQ_INT(rank, r);
    /* A P = Q R and Q^T Q = I */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double v = 0;
            for (int k = 0; k < m; k++) v += Q[i + k * m] * R[k + j * m];
            CHECK_CLOSE(v, A0[i + jpvt[j] * m], 1e-13);
        }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double v = 0;
            for (int i = 0; i < m; i++) v += Q[i + a * m] * Q[i + b * m];
            CHECK_CLOSE(v, a == b, 1e-14);
        }
    /* columns rank.. of Q span the orthogonal complement of range(A) */
    for (int c = r; c < m; c++)
        for (int j = 0; j < n; j++) {
            double v = 0;
            for (int i = 0; i < m; i++) v += Q[i + c * m] * A0[i + j * m];
            CHECK_CLOSE(v, 0.0, 1e-13);
        }
    /* SVD: same rank, and singular values of the full-rank X Y agree with QRCP's rank */
    double sv[m], VT[n * n], U[m * m];
    CHECK_EQ_INT(mbla_svd(m, n, As, m, 'A', sv, U, m, VT, n, &st), 0);
    CHECK_EQ_INT(mbla_rank_from_diag(m, n, m, sv, 1, MBLA_DEFAULT), r);
    CHECK(sv[r] < 1e-14 * sv[0]);
    CHECK(sv[r - 1] > 1e-3 * sv[0]);
    /* rows rank.. of V^T span the null space */
    for (int c = r; c < n; c++)
        for (int i = 0; i < m; i++) {
            double v = 0;
            for (int j = 0; j < n; j++) v += A0[i + j * m] * VT[c + j * n];
            CHECK_CLOSE(v, 0.0, 1e-13);
        }
    /* known singular values: [[3, 0], [0, 4], [0, 0]] -> 4, 3 */
    double B[6] = {3, 0, 0, 0, 4, 0}, s2[2];
    CHECK_EQ_INT(mbla_svd(3, 2, B, 3, 'S', s2, NULL, 1, NULL, 1, &st), 0);
    CHECK_CLOSE(s2[0], 4.0, 1e-15);
    CHECK_CLOSE(s2[1], 3.0, 1e-15);
}

TEST(lu_complete_pivots)
{
    double A[4] = {1, 3, 2, 4}; /* [[1, 2], [3, 4]]: largest entry 4 at (1, 1) */
    int ip[2], jp[2], small;
    CHECK_EQ_INT(mbla_lu_complete(2, A, 2, ip, jp, &small, NULL), 0);
    CHECK_EQ_INT(ip[0], 1);
    CHECK_EQ_INT(jp[0], 1);
    CHECK_EQ_INT(small, -1);
    CHECK_CLOSE(A[0], 4.0, 0);
    double S[4] = {1, 2, 2, 4}; /* rank 1 */
    CHECK_EQ_INT(mbla_lu_complete(2, S, 2, ip, jp, &small, NULL), 0);
    CHECK_EQ_INT(small, 1);
}

/* Source 000 Eq. 22 style column selection */
TEST(select_columns_hand)
{
    /* J = [[1, 0, 2, 0], [0, 1, 0, 3]]: complete pivoting takes 3 (col 3), then 2 (col 2) */
    double J[8] = {1, 0, 0, 1, 2, 0, 0, 3};
    int perm[4], rank = -1;
    mbl_status st;
    CHECK_EQ_INT(mbla_select_columns(2, 4, J, 2, NULL, MBLA_DEFAULT, perm, &rank, &st), 0);
    CHECK_EQ_INT(rank, 2);
    CHECK_EQ_INT(perm[0], 3);
    CHECK_EQ_INT(perm[1], 2);
    CHECK_EQ_INT(perm[2], 0);
    CHECK_EQ_INT(perm[3], 1);
    /* weights favour columns 1 then 0 as pivots: columns 2, 3 become the independent ones */
    double w[4] = {10, 20, 1, 1};
    CHECK_EQ_INT(mbla_select_columns(2, 4, J, 2, w, MBLA_DEFAULT, perm, &rank, &st), 0);
    CHECK_EQ_INT(rank, 2);
    CHECK_EQ_INT(perm[0], 1);
    CHECK_EQ_INT(perm[1], 0);
    CHECK_EQ_INT(perm[2], 2);
    CHECK_EQ_INT(perm[3], 3);
    /* small weights keep user-preferred columns (here 2 and 3) out of the pivots even when
     * their entries are the largest */
    double w2[4] = {1, 1, 1e-3, 1e-3};
    CHECK_EQ_INT(mbla_select_columns(2, 4, J, 2, w2, MBLA_DEFAULT, perm, &rank, &st), 0);
    CHECK_EQ_INT(perm[0] + perm[1], 1);
    /* redundant constraints: rows proportional, rank 1; pivot is the largest entry (col 2) */
    double R[6] = {1, 2, 2, 4, 3, 6};
    CHECK_EQ_INT(mbla_select_columns(2, 3, R, 2, NULL, MBLA_DEFAULT, perm, &rank, &st), 0);
    CHECK_EQ_INT(rank, 1);
    CHECK_EQ_INT(perm[0], 2);
    CHECK_EQ_INT(perm[1], 0);
    CHECK_EQ_INT(perm[2], 1);
    /* errors */
    CHECK_EQ_INT(mbla_select_columns(3, 2, R, 3, NULL, MBLA_DEFAULT, perm, &rank, &st), MBL_EDIM);
    double wneg[3] = {1, -1, 1};
    CHECK_EQ_INT(mbla_select_columns(2, 3, R, 2, wneg, MBLA_DEFAULT, perm, &rank, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "weight 1") != NULL);
}

TEST(blas_utilities)
{
    double A[6] = {1, 2, 3, 4, 5, 6}; /* 2 x 3: [[1 3 5], [2 4 6]] */
    double B[6] = {1, 0, 0, 1, 1, 1}; /* 3 x 2: [[1 1], [0 1], [0 1]] */
    double C[4] = {NAN, NAN, NAN, NAN};
    CHECK_EQ_INT(mbla_gemm('N', 'N', 2, 2, 3, 1.0, A, 2, B, 3, 0.0, C, 2, NULL), 0);
    CHECK_CLOSE(C[0], 1, 0);
    CHECK_CLOSE(C[1], 2, 0);
    CHECK_CLOSE(C[2], 9, 0);
    CHECK_CLOSE(C[3], 12, 0);
    double D[9];
    CHECK_EQ_INT(mbla_gemm('T', 'N', 3, 3, 2, 2.0, A, 2, A, 2, 0.0, D, 3, NULL), 0); /* 2 A^T A */
    CHECK_CLOSE(D[0], 10, 0);
    CHECK_CLOSE(D[4], 50, 0);
    CHECK_CLOSE(D[7], 2 * (3 * 5 + 4 * 6), 0);
    double x[3] = {1, 1, 1}, y[2] = {NAN, NAN}, z[3] = {1, 1, 1};
    CHECK_EQ_INT(mbla_gemv('N', 2, 3, 1.0, A, 2, x, 0.0, y, NULL), 0);
    CHECK_CLOSE(y[0], 9, 0);
    CHECK_CLOSE(y[1], 12, 0);
    CHECK_EQ_INT(mbla_gemv('T', 2, 3, 1.0, A, 2, y, 1.0, z, NULL), 0);
    CHECK_CLOSE(z[2], 1 + 5 * 9 + 6 * 12, 0);
    CHECK_CLOSE(mbla_norm1(2, 3, A, 2), 11.0, 0);
    mbl_status st;
    CHECK_EQ_INT(mbla_gemm('N', 'N', 2, 2, 3, 1.0, A, 1, B, 3, 0.0, C, 2, &st), MBL_EDIM);
    CHECK(strstr(st.msg, "leading dimension of A") != NULL);
    CHECK_EQ_INT(mbla_gemm('Q', 'N', 2, 2, 3, 1.0, A, 2, B, 3, 0.0, C, 2, &st), MBL_EARG);
}

TEST(dimension_errors)
{
    double A[4] = {1, 0, 0, 1}, w[2], wi[2];
    int ip[2], jp[2], perm[2], rank;
    mbl_status st;
    CHECK_EQ_INT(mbla_eig(2, A, 1, w, wi, NULL, 1, NULL, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_eig(-1, A, 1, w, wi, NULL, 1, NULL, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_ggev(2, A, 2, A, 1, w, wi, w, NULL, 1, NULL, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_sygvd(2, A, 2, A, 2, w, A, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_lu_solve(2, 1, A, 2, w, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_lu_complete(2, A, 1, ip, jp, NULL, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_qrcp(2, 2, A, 2, MBLA_DEFAULT, perm, &rank, A, 2, 1, NULL, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_svd(2, 2, A, 2, 'S', w, A, 1, NULL, 1, &st), MBL_EDIM);
    CHECK_EQ_INT(mbla_svd(2, 2, A, 2, 'X', w, NULL, 1, NULL, 1, &st), MBL_EARG);
    CHECK_EQ_INT(mbla_eig(2, NULL, 2, w, wi, NULL, 1, NULL, 1, &st), MBL_EARG);
    /* non-finite input is rejected before LAPACK's iterations see it */
    double N[4] = {1, 0, NAN, 1};
    CHECK_EQ_INT(mbla_eig(2, N, 2, w, wi, NULL, 1, NULL, 1, &st), MBL_EARG);
    CHECK(strstr(st.msg, "A(0,1) is not finite") != NULL);
}

TEST(allocation_failures)
{
    enum { n = 6 };
    double A[n * n], B[n * n], W[n * n], w[n], wi[n], be[n], V[n * n];
    unsigned s = 3;
    for (int i = 0; i < n * n; i++) A[i] = trand(&s);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) B[i + j * n] = (i == j) * 2.0 + 0.1 * (i + j == n - 1);
    int jpvt[n], rank, perm[n];
    mbla_dlu *lu = NULL;
    double rc;
    ALLOC_FAIL_LOOP(mbla_eig(n, A, n, w, wi, V, n, V, n, NULL), (void)0);
    ALLOC_FAIL_LOOP(mbla_eig_balance('P', n, A, n, w, wi, V, n, NULL), (void)0);
    ALLOC_FAIL_LOOP(mbla_ggev(n, A, n, B, n, w, wi, be, NULL, 1, V, n, NULL), (void)0);
    ALLOC_FAIL_LOOP(mbla_sygvd(n, B, n, B, n, w, V, n, NULL), (void)0);
    ALLOC_FAIL_LOOP((memcpy(W, A, sizeof A), mbla_qrcp(n, n, W, n, MBLA_DEFAULT, jpvt, &rank, V, n, n, NULL, 1, NULL)), (void)0);
    ALLOC_FAIL_LOOP((memcpy(W, A, sizeof A), mbla_svd(n, n, W, n, 'S', w, V, n, NULL, 1, NULL)), (void)0);
    ALLOC_FAIL_LOOP(mbla_select_columns(3, n, A, n, NULL, MBLA_DEFAULT, perm, &rank, NULL), (void)0);
    ALLOC_FAIL_LOOP((memcpy(W, A, sizeof A), memcpy(V, A, sizeof A), mbla_lu_solve(n, n, W, n, V, n, NULL)), (void)0);
    ALLOC_FAIL_LOOP(mbla_dlu_new(n, A, n, &lu, NULL), (mbla_dlu_free(lu), lu = NULL));
    CHECK_EQ_INT(mbla_dlu_new(n, A, n, &lu, NULL), 0);
    ALLOC_FAIL_LOOP(mbla_dlu_rcond(lu, &rc, NULL), (void)0);
    mbla_dlu_free(lu);
}

/* mbla_lstsq: the least-squares solution of a full-rank overdetermined system (normal equations
 * by hand) and the minimum-norm solution of a rank-deficient one. */
TEST(lstsq_closed_forms)
{
    mbl_status st;
    double A[6] = {1, 0, 1, 0, 1, 1}; /* [1 0; 0 1; 1 1] */
    double b[3] = {1, 2, 4};
    int rank = -1;
    CHECK_EQ_INT(mbla_lstsq(3, 2, 1, A, 3, b, 3, 1e-9, &rank, &st), 0);
    CHECK_EQ_INT(rank, 2);
    CHECK_CLOSE(b[0], 4.0 / 3.0, 1e-14); /* A^T A x = A^T b: [2 1; 1 2] x = [5; 6] */
    CHECK_CLOSE(b[1], 7.0 / 3.0, 1e-14);
    double D[6] = {1, 1, 0, 1, 1, 0}; /* [1 1; 1 1; 0 0]: rank 1 */
    double c[3] = {2, 2, 0};
    CHECK_EQ_INT(mbla_lstsq(3, 2, 1, D, 3, c, 3, 1e-9, &rank, &st), 0);
    CHECK_EQ_INT(rank, 1);
    CHECK_CLOSE(c[0], 1.0, 1e-14); /* minimum norm among x0 + x1 = 2 */
    CHECK_CLOSE(c[1], 1.0, 1e-14);
    double E[2] = {3, 4}; /* underdetermined 1 x 2: [3 4] x = 5 -> x = [0.6, 0.8] */
    double e[2] = {5, 0};
    CHECK_EQ_INT(mbla_lstsq(1, 2, 1, E, 1, e, 2, 1e-9, &rank, &st), 0);
    CHECK_CLOSE(e[0], 0.6, 1e-14);
    CHECK_CLOSE(e[1], 0.8, 1e-14);
    CHECK_EQ_INT(mbla_lstsq(3, 2, 1, A, 3, b, 2, 1e-9, &rank, &st), MBL_EDIM); /* ldb < max(m, n) */
}

/* mbla_lstsq_qr (dgelsy): the closed forms above, and on a 4 x 5 matrix of rank 2 (the product of
 * a 4 x 2 and a 2 x 5 factor) the same rank and minimum-norm solution as mbla_lstsq's SVD. */
TEST(lstsq_qr_against_svd)
{
    mbl_status st;
    double A[6] = {1, 0, 1, 0, 1, 1}, b[3] = {1, 2, 4};
    int rank = -1;
    CHECK_EQ_INT(mbla_lstsq_qr(3, 2, 1, A, 3, b, 3, 1e-9, &rank, &st), 0);
    CHECK_EQ_INT(rank, 2);
    CHECK_CLOSE(b[0], 4.0 / 3.0, 1e-14);
    CHECK_CLOSE(b[1], 7.0 / 3.0, 1e-14);
    double D[6] = {1, 1, 0, 1, 1, 0}, c[3] = {2, 2, 0};
    CHECK_EQ_INT(mbla_lstsq_qr(3, 2, 1, D, 3, c, 3, 1e-9, &rank, &st), 0);
    CHECK_EQ_INT(rank, 1);
    CHECK_CLOSE(c[0], 1.0, 1e-14);
    CHECK_CLOSE(c[1], 1.0, 1e-14);
    double E[2] = {3, 4}, e[2] = {5, 0};
    CHECK_EQ_INT(mbla_lstsq_qr(1, 2, 1, E, 1, e, 2, -1.0, &rank, &st), 0);
    CHECK_EQ_INT(rank, 1);
    CHECK_CLOSE(e[0], 0.6, 1e-14);
    CHECK_CLOSE(e[1], 0.8, 1e-14);
    const double L[8] = {1, -2, 0.5, 3, 2, 1, -1, 0.25}, R[10] = {1, 0.5, -1, 2, 0.3, 1, 2, -0.7, 1.5, 1};
    double M1[20], M2[20], r1[5] = {1, -1, 2, 0.5, 0}, r2[5];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) M1[i + 4 * j] = L[i] * R[2 * j] + L[i + 4] * R[2 * j + 1];
    memcpy(M2, M1, sizeof M1), memcpy(r2, r1, sizeof r1);
    int rq = -1, rs = -1;
    CHECK_EQ_INT(mbla_lstsq_qr(4, 5, 1, M1, 4, r1, 5, 1e-9, &rq, &st), 0);
    CHECK_EQ_INT(mbla_lstsq(4, 5, 1, M2, 4, r2, 5, 1e-9, &rs, &st), 0);
    CHECK_EQ_INT(rq, 2);
    CHECK_EQ_INT(rs, 2);
    for (int j = 0; j < 5; j++) CHECK_CLOSE(r1[j], r2[j], 1e-12);
    CHECK_EQ_INT(mbla_lstsq_qr(3, 2, 1, A, 3, b, 2, 1e-9, &rank, &st), MBL_EDIM); /* ldb < max(m, n) */
    double bad[2] = {NAN, 1}, z[2] = {1, 1};
    CHECK_EQ_INT(mbla_lstsq_qr(1, 2, 1, bad, 1, z, 2, 1e-9, &rank, &st), MBL_EARG);
}

int main(void)
{
    RUN(lstsq_closed_forms);
    RUN(lstsq_qr_against_svd);
    RUN(eig_tridiagonal_toeplitz);
    RUN(eig_companion_complex_roots);
    RUN(eig_rotation);
    RUN(eig_balance_permutation_only);
    RUN(sygvd_fe_bar_closed_form);
    RUN(sygvd_not_positive_definite);
    RUN(ggev_singular_pencil_infinite);
    RUN(gev_classify_from_the_pencil);
    RUN(gev_conjugates_and_backward_errors);
    RUN(lu_solve_and_singular);
    RUN(dlu_rcond_hilbert);
    RUN(chol_hilbert_inverse);
    RUN(rank_qrcp_svd);
    RUN(lu_complete_pivots);
    RUN(select_columns_hand);
    RUN(blas_utilities);
    RUN(dimension_errors);
    RUN(allocation_failures);
    return test_summary("la_dense");
}
