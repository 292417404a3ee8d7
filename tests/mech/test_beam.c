/* Beam elements (src/mech/beam.c) against closed forms: element matrices, the continuous
 * Euler-Bernoulli frequencies of clamped-free, free-free and pinned-pinned beams, axial and
 * torsional modes, and the floating-frame invariants of a planar beam.
 *
 * Discretization error (stated in docs/mechanism-reference.md, "Flexible bodies"): with cubic Hermite
 * elements and consistent mass the bending eigenvalue omega^2 converges as h^4, and omega's
 * relative error is below (beta h)^4 / 1440 * 2 (beta the continuous wavenumber, h the element
 * length; the leading term of the error expansion is (beta h)^4 / 1440 for omega); linear axial
 * and torsion elements with consistent mass converge as h^2, omega's relative error below
 * (k h)^2 / 24 * 1.1, k = omega / wave speed. Each test asserts the value against the continuous
 * closed form with that bound, and that halving h divides the error by 16 (bending) or 4
 * (axial) to within 10 % while the error is above 1e-8 (rounding of the eigensolver below). */
#include <lapacke.h>
#undef I
#include <float.h>
#include <math.h>
#include <string.h>

#include "mech/beam.h"
#include "test.h"

static const double PI = 3.14159265358979323846;

/* lowest nw eigenvalues of K x = w M x restricted to the dofs keep[0..nk) of CSC K, M */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void restricted_eigs(const mbla_csc *K, const mbla_csc *M, int nk, const int *keep, int nw, double *w)
{
    double *Kd = calloc((size_t)K->m * K->n, sizeof *Kd), *Md = calloc((size_t)K->m * K->n, sizeof *Md);
    double *Kr = calloc((size_t)nk * nk, sizeof *Kr), *Mr = calloc((size_t)nk * nk, sizeof *Mr);
    double *ww = calloc((size_t)nk, sizeof *ww);
    mbl_status st;
    CHECK(mbla_csc_to_dense(K, Kd, K->m, &st) == 0);
    CHECK(mbla_csc_to_dense(M, Md, M->m, &st) == 0);
    for (int j = 0; j < nk; j++)
        for (int i = 0; i < nk; i++) {
            Kr[i + (size_t)nk * j] = Kd[keep[i] + (size_t)K->m * keep[j]];
            Mr[i + (size_t)nk * j] = Md[keep[i] + (size_t)K->m * keep[j]];
        }
    /* dsygvd's eigenvalues carry eps lambda_max absolute (3e-8 relative on the fundamental at 40
     * elements, either sign, as the BLAS kernel rounds): each is recomputed as the Rayleigh quotient
     * of its eigenvector with sums to eps^2 (test_quad2), which leaves delta^2 for an eigenvector
     * error delta */
    double *Z = calloc((size_t)nk * nk, sizeof *Z);
    CHECK(mbla_sygvd(nk, Kr, nk, Mr, nk, ww, Z, nk, &st) == 0);
    for (int k = 0; k < nk; k++) ww[k] = test_quad2(nk, Kr, Z + (size_t)nk * k) / test_quad2(nk, Mr, Z + (size_t)nk * k);
    qsort(ww, (size_t)nk, sizeof *ww, cmp_dbl);
    for (int k = 0; k < nw; k++) w[k] = ww[k];
    free(Kd), free(Md), free(Kr), free(Mr), free(ww), free(Z);
}

static mbl_beam_section section(void)
{
    mbl_beam_section s = {2.1e11, 8.1e10, 7850, 3e-4, 2e-8, 5e-8, 7e-8};
    return s;
}

/* the dofs (within 3 or 6 per node) listed in comp, of nodes [n0, n1) */
static int dofs(int nd, int n0, int n1, int nc, const int *comp, int *keep)
{
    int k = 0;
    for (int nn = n0; nn < n1; nn++)
        for (int c = 0; c < nc; c++) keep[k++] = nd * nn + comp[c];
    return k;
}

TEST(element_matrices)
{
    mbl_beam_section s = section();
    double le = 0.3, Ke[36], Me[36];
    mech_beam2_element(&s, le, Ke, Me);
    double EI = s.E * s.Iz, EA = s.E * s.A, rA = s.rho * s.A;
    /* bending block (uy_a, phi_a, uy_b, phi_b) = dofs 1, 2, 4, 5 */
    int b[4] = {1, 2, 4, 5};
    double Kb[4][4] = {{12, 6 * le, -12, 6 * le}, {6 * le, 4 * le * le, -6 * le, 2 * le * le},
                       {-12, -6 * le, 12, -6 * le}, {6 * le, 2 * le * le, -6 * le, 4 * le * le}};
    double Mb[4][4] = {{156, 22 * le, 54, -13 * le}, {22 * le, 4 * le * le, 13 * le, -3 * le * le},
                       {54, 13 * le, 156, -22 * le}, {-13 * le, -3 * le * le, -22 * le, 4 * le * le}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            CHECK_CLOSE(Ke[b[i] + 6 * b[j]], EI / (le * le * le) * Kb[i][j] + 0.0, 1e-13);
            CHECK_CLOSE(Me[b[i] + 6 * b[j]], rA * le / 420 * Mb[i][j], 1e-13);
        }
    CHECK_CLOSE(Ke[0], EA / le, 1e-14);
    CHECK_CLOSE(Ke[0 + 6 * 3], -EA / le, 1e-14);
    CHECK_CLOSE(Me[0], rA * le / 3, 1e-14);
    CHECK_CLOSE(Me[0 + 6 * 3], rA * le / 6, 1e-14);
    CHECK(Ke[0 + 6 * 1] == 0 && Me[0 + 6 * 1] == 0); /* axial and bending uncoupled */
    /* spatial: torsion GJ/le, rho Ip le/3; xz bending with ry = -duz/dX: K(uz_a, ry_a) = -6 EIy/le^2 */
    double K3[144], M3[144];
    mech_beam3_element(&s, le, K3, M3);
    CHECK_CLOSE(K3[3 + 12 * 3], s.G * s.J / le, 1e-14);
    CHECK_CLOSE(K3[3 + 12 * 9], -s.G * s.J / le, 1e-14);
    CHECK_CLOSE(M3[3 + 12 * 3], s.rho * (s.Iy + s.Iz) * le / 3, 1e-14);
    CHECK_CLOSE(K3[2 + 12 * 4], -6 * s.E * s.Iy / (le * le), 1e-13);
    CHECK_CLOSE(K3[1 + 12 * 5], 6 * s.E * s.Iz / (le * le), 1e-13);
    CHECK_CLOSE(K3[2 + 12 * 2], 12 * s.E * s.Iy / (le * le * le), 1e-13);
}

/* The planar element's rigid motions on fine meshes (regression: a bias of the lowest eigenvalues
 * growing as n_e^2, flexible pendulum n_p = 10^4 per link: omega_3 1e-7 high). The bending entries
 * annihilate the rigid translation (1, 0, 1, 0) exactly, and the rigid rotation R = (0, 1, h, 1)
 * (which involves the element length h in slope coordinates) costs a strain energy R^T Ke R below
 * 0.01 eps of 12 EI/h, evaluated exactly from the stored entries: the 4-point rule's entries left
 * several eps, and rounding each closed-form entry once 0.3 eps at n_e = 10^4, L = 4 m. Each entry
 * stays within 1e-14 of the closed form. */
TEST(element_rigid_motions)
{
    const double PI = 3.14159265358979323846;
    double r = 0.15;
    mbl_beam_section sp = {1e8, 0, 1500, PI * r * r, 0, PI * r * r * r * r / 4, 0}; /* source 001's links */
    mbl_beam_section sc = section();
    const struct { const mbl_beam_section *s; double L; int ne; } cs[] = {
        {&sp, 4.0, 50}, {&sp, 4.0, 1000}, {&sp, 4.0, 6000}, {&sp, 4.0, 10000}, {&sp, 4.0, 12345},
        {&sc, 2.0, 3}, {&sc, 2.0, 777}, {&sc, 1.0, 30000}};
    double worst = 0;
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        double h = cs[c].L / cs[c].ne, Ke[36], Me[36], EI = cs[c].s->E * cs[c].s->Iz;
        mech_beam2_element(cs[c].s, h, Ke, Me);
        int b[4] = {1, 2, 4, 5};
        double Kb[16];
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++) Kb[i + 4 * j] = Ke[b[i] + 6 * b[j]];
        double T[4] = {1, 0, 1, 0}, R[4] = {0, 1, h, 1};
        for (int i = 0; i < 4; i++) {
            double s = 0, t = 0;
            for (int j = 0; j < 4; j++) test_acc2(Kb[i + 4 * j], T[j], &s, &t);
            CHECK_MSG(s + t == 0, "n_e = %d: row %d of Ke T = %g", cs[c].ne, i, s + t);
        }
        /* R^T Ke R = sum_ij R_i K_ij R_j, every product and sum exact to about eps^2 */
        double s = 0, t = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double p = R[i] * R[j], pe = fma(R[i], R[j], -p);
                test_acc2(Kb[i + 4 * j], p, &s, &t);
                test_acc2(Kb[i + 4 * j], pe, &s, &t);
            }
        double rel = fabs(s + t) / (12 * EI / h) / DBL_EPSILON;
        worst = fmax(worst, rel);
        CHECK_MSG(rel < 0.01, "n_e = %d, L = %g: R^T Ke R = %.3g eps of 12 EI/h", cs[c].ne, cs[c].L, rel);
        double ex[4] = {12 * EI / (h * h * h), 6 * EI / (h * h), 4 * EI / h, 2 * EI / h};
        CHECK_REL(Kb[0], ex[0], 1e-14);
        CHECK_REL(Kb[1], ex[1], 1e-14);
        CHECK_REL(Kb[5], ex[2], 1e-14);
        CHECK_REL(Kb[1 + 4 * 3], ex[3], 1e-14);
    }
    printf("  rigid rotation energy of the planar element: at most %.2g eps of 12 EI/h\n", worst);
}

/* bending: beta_k L for the nw lowest modes of a beam with the given end conditions;
 * dim 2: plane (uy, phi), dim 3: the xz plane (uz, ry) */
static void bending_betas(int dim, int ne, int bc, int nw, double *betaL)
{
    mbl_beam_section s = section();
    double L = 2.0;
    mbla_csc *K, *M;
    mbl_status st;
    CHECK(mech_beam_assemble(dim, &s, L, ne, &K, &M, &st) == 0);
    int nd = dim == 2 ? 3 : 6;
    int comp2[2] = {1, 2}, comp3[2] = {2, 4};
    int *keep = malloc(sizeof *keep * 2 * (ne + 1)), nk = 0;
    int all = dofs(nd, 0, ne + 1, 2, dim == 2 ? comp2 : comp3, keep);
    for (int k = 0; k < all; k++) {
        int node = keep[k] / nd, isv = k % 2 == 0;
        if (bc == 0 && node == 0) continue;                        /* clamped-free */
        if (bc == 2 && isv && (node == 0 || node == ne)) continue; /* pinned-pinned */
        keep[nk++] = keep[k];
    }
    double w[8];
    int skip = bc == 1 ? 2 : 0; /* free-free: rigid translation and rotation */
    restricted_eigs(K, M, nk, keep, nw + skip, w);
    double EI = s.E * (dim == 2 ? s.Iz : s.Iy), rA = s.rho * s.A;
    for (int k = 0; k < nw; k++) betaL[k] = pow(w[k + skip] * rA / EI, 0.25) * L; /* beta^4 = omega^2 rho A / EI */
    if (bc == 1) CHECK(fabs(w[0]) < 1e-6 * w[2] && fabs(w[1]) < 1e-6 * w[2]);
    free(keep);
    mbla_csc_free(K), mbla_csc_free(M);
}

/* The rounding level of beta L from the reference eigensolve (relative) */
#define ROUND_LEVEL 1e-11

static void check_bending(int dim, int bc, const double *exact, int nw)
{
    double prev[3] = {0};
    for (int ne = 10; ne <= 40; ne *= 2) {
        double b[3];
        bending_betas(dim, ne, bc, nw, b);
        for (int k = 0; k < nw; k++) {
            double bh = exact[k] / ne, err = fabs(b[k] - exact[k]) / exact[k];
            /* plus the rounding left by the reference eigensolve (restricted_eigs: Rayleigh quotients
             * to eps^2; dsygvd alone left 3e-8 here) and the entries' own rounding */
            double bound = 2.0 * pow(bh, 4) / 1440.0 + ROUND_LEVEL;
            CHECK_MSG(err <= bound && b[k] >= exact[k] * (1 - ROUND_LEVEL), "dim %d bc %d ne %d mode %d: beta L %.12g exact %.12g err %.3g bound %.3g",
                      dim, bc, ne, k + 1, b[k], exact[k], err, bound);
            if (ne > 10 && err > 100 * ROUND_LEVEL) { /* well above the rounding level */
                double ratio = prev[k] / err;
                CHECK_MSG(ratio > 14.4 && ratio < 17.6, "dim %d bc %d mode %d: h^4 rate %.3g", dim, bc, k + 1, ratio);
            }
            prev[k] = err;
        }
        if (ne == 40)
            printf("  dim %d bc %d ne 40: beta L %.10f %.10f %.10f\n", dim, bc, b[0], b[1], nw > 2 ? b[2] : 0.0);
    }
}

TEST(cantilever)
{
    /* 1 + cos(b) cosh(b) = 0 */
    double exact[3] = {1.87510406871196, 4.69409113297418, 7.85475743823761};
    check_bending(2, 0, exact, 3);
    check_bending(3, 0, exact, 3);
}

TEST(free_free)
{
    /* 1 - cos(b) cosh(b) = 0 */
    double exact[3] = {4.73004074486270, 7.85320462409584, 10.9956078380017};
    check_bending(2, 1, exact, 3);
}

TEST(pinned_pinned)
{
    double exact[3] = {PI, 2 * PI, 3 * PI};
    check_bending(2, 2, exact, 3);
}

/* axial (comp 0, E, rho A) or torsion (spatial comp 3, G J, rho Ip), clamped-free:
 * omega_k = (2k - 1) pi / (2 L) c */
static void check_rod(int dim, int comp, double c)
{
    mbl_beam_section s = section();
    double L = 2.0, prev[3] = {0};
    for (int ne = 10; ne <= 40; ne *= 2) {
        mbla_csc *K, *M;
        mbl_status st;
        CHECK(mech_beam_assemble(dim, &s, L, ne, &K, &M, &st) == 0);
        int nd = dim == 2 ? 3 : 6, *keep = malloc(sizeof *keep * (ne + 1));
        int nk = dofs(nd, 1, ne + 1, 1, &comp, keep);
        double w[3];
        restricted_eigs(K, M, nk, keep, 3, w);
        for (int k = 0; k < 3; k++) {
            double ex = (2 * k + 1) * PI / (2 * L) * c, om = sqrt(w[k]);
            double kh = ex / c * L / ne, err = fabs(om - ex) / ex, bound = 1.1 * kh * kh / 24;
            CHECK_MSG(err <= bound, "rod comp %d ne %d mode %d: omega %.12g exact %.12g err %.3g bound %.3g", comp, ne,
                      k + 1, om, ex, err, bound);
            if (ne > 10) CHECK_MSG(prev[k] / err > 3.6 && prev[k] / err < 4.4, "rod comp %d mode %d: h^2 rate %.3g", comp, k + 1, prev[k] / err);
            prev[k] = err;
        }
        free(keep);
        mbla_csc_free(K), mbla_csc_free(M);
    }
}

TEST(axial_and_torsion)
{
    mbl_beam_section s = section();
    check_rod(2, 0, sqrt(s.E / s.rho));
    check_rod(3, 0, sqrt(s.E / s.rho));
    check_rod(3, 3, sqrt(s.G * s.J / (s.rho * (s.Iy + s.Iz))));
}

TEST(invariants)
{
    mbl_beam_section s = section();
    double L = 2.0;
    int ne = 7;
    mbl_ffr_invariants inv;
    mbl_status st;
    CHECK(mech_beam2_invariants(&s, L, ne, &inv, &st) == 0);
    int nf = inv.nf;
    double m = s.rho * s.A * L;
    CHECK_EQ_INT(nf, 3 * (ne + 1));
    CHECK_CLOSE(inv.m, m, 1e-15);
    CHECK_CLOSE(inv.s0[0], m * L / 2, 1e-15);
    CHECK_CLOSE(inv.J0, m * L * L / 3, 1e-15);
    /* a rigid motion as elastic coordinates: ux = a, uy = b + X phi, slope phi at every node */
    double a = 0.3, b = -0.2, phi = 0.7;
    double *qf = calloc((size_t)nf, sizeof *qf), *Mq = calloc((size_t)nf, sizeof *Mq), *Pq = calloc((size_t)nf, sizeof *Pq);
    for (int i = 0; i <= ne; i++) qf[3 * i] = a, qf[3 * i + 1] = b + i * L / ne * phi, qf[3 * i + 2] = phi;
    double sx = 0, sy = 0, c1q = 0, c2q = 0, qMq = 0, qPq = 0;
    CHECK(mbla_csc_gemv(inv.Mff, 1.0, qf, 0.0, Mq, &st) == 0);
    CHECK(mbla_csc_gemv(inv.P, 1.0, qf, 0.0, Pq, &st) == 0);
    for (int j = 0; j < nf; j++) {
        sx += inv.Sb[j] * qf[j], sy += inv.Sb[nf + j] * qf[j];
        c1q += inv.c1[j] * qf[j], c2q += inv.c2[j] * qf[j];
        qMq += qf[j] * Mq[j], qPq += qf[j] * Pq[j];
    }
    /* u - u0 = (a, b + X phi): int rho = m (a, b + phi L/2); int rho u0.(.) = m a L/2; int rho Jt u0.(.) = int rho X (b + X phi) */
    CHECK_CLOSE(sx, m * a, 1e-14);
    CHECK_CLOSE(sy, m * (b + phi * L / 2), 1e-14);
    CHECK_CLOSE(c1q, m * a * L / 2, 1e-14);
    CHECK_CLOSE(c2q, m * (b * L / 2 + phi * L * L / 3), 1e-14);
    CHECK_CLOSE(qMq, m * (a * a + b * b + b * phi * L + phi * phi * L * L / 3), 1e-14);
    CHECK(fabs(qPq) < 1e-14 * m); /* antisymmetric */
    /* P^T = -P, Mff = the assembled consistent mass */
    mbla_csc *K, *M, *Pt;
    CHECK(mech_beam_assemble(2, &s, L, ne, &K, &M, &st) == 0);
    CHECK(mbla_csc_transpose(inv.P, &Pt, &st) == 0);
    double *D1 = calloc((size_t)nf * nf, sizeof *D1), *D2 = calloc((size_t)nf * nf, sizeof *D2);
    mbla_csc_to_dense(inv.P, D1, nf, &st);
    mbla_csc_to_dense(Pt, D2, nf, &st);
    double maxd = 0, maxp = 0;
    for (size_t k = 0; k < (size_t)nf * nf; k++) maxd = fmax(maxd, fabs(D1[k] + D2[k])), maxp = fmax(maxp, fabs(D1[k]));
    CHECK(maxd <= 1e-15 * maxp && maxp > 0);
    mbla_csc_to_dense(inv.Mff, D1, nf, &st);
    mbla_csc_to_dense(M, D2, nf, &st);
    maxd = 0;
    for (size_t k = 0; k < (size_t)nf * nf; k++) maxd = fmax(maxd, fabs(D1[k] - D2[k]));
    CHECK(maxd <= 1e-15 * m);
    free(qf), free(Mq), free(Pq), free(D1), free(D2);
    mbla_csc_free(K), mbla_csc_free(M), mbla_csc_free(Pt);
    model_ffr_invariants_free(&inv);
}

TEST(bad_input)
{
    mbl_beam_section s = section();
    mbla_csc *K, *M;
    mbl_status st;
    CHECK(mech_beam_assemble(2, &s, 1.0, 0, &K, &M, &st) == MBL_EARG);
    s.E = -1;
    CHECK(mech_beam_assemble(2, &s, 1.0, 3, &K, &M, &st) == MBL_EARG);
    CHECK(strstr(st.msg, "positive") != NULL);
}

int main(void)
{
    RUN(element_matrices);
    RUN(element_rigid_motions);
    RUN(cantilever);
    RUN(free_free);
    RUN(pinned_pinned);
    RUN(axial_and_torsion);
    RUN(invariants);
    RUN(bad_input);
    return test_summary("beam");
}
