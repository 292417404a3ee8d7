/* Euler-Bernoulli beam elements and the floating-frame invariants of a planar beam (beam.h).
 *
 * Every element integral is a 4-point Gauss-Legendre rule on the element, exact up to degree 7:
 * the integrands are at most of degree 6 (cubic times cubic in the mass), 4 (the first moments
 * with the linear undeformed position) and 2 (the curvatures in the stiffness). */
#include "mech/beam.h"

#include <math.h>
#include <string.h>

/* Gauss-Legendre points and weights on [0, 1] */
static void gauss4(double *x, double *w)
{
    double a = sqrt(6.0 / 5.0), t1 = sqrt((3.0 - 2.0 * a) / 7.0), t2 = sqrt((3.0 + 2.0 * a) / 7.0);
    double w1 = (18.0 + sqrt(30.0)) / 36.0, w2 = (18.0 - sqrt(30.0)) / 36.0;
    double tt[4] = {-t2, -t1, t1, t2}, ww[4] = {w2, w1, w1, w2};
    for (int k = 0; k < 4; k++) x[k] = 0.5 * (1.0 + tt[k]), w[k] = 0.5 * ww[k];
}

/* Hermite cubics on xi in [0, 1] for (v_a, slope_a, v_b, slope_b), element length le: values,
 * and second derivatives with respect to X = xi le. */
static void hermite(double xi, double le, double N[4], double N2[4])
{
    N[0] = 1 - 3 * xi * xi + 2 * xi * xi * xi;
    N[1] = (xi - 2 * xi * xi + xi * xi * xi) * le;
    N[2] = 3 * xi * xi - 2 * xi * xi * xi;
    N[3] = (-xi * xi + xi * xi * xi) * le;
    N2[0] = (-6 + 12 * xi) / (le * le);
    N2[1] = (-4 + 6 * xi) / le;
    N2[2] = (6 - 12 * xi) / (le * le);
    N2[3] = (-2 + 6 * xi) / le;
}

/* Planar element at xi: S (2 x 6, row-major), d ux/dX (6), d2 uy/dX2 (6). */
static void shape2(double xi, double le, double S[12], double dux[6], double d2y[6])
{
    double N[4], N2[4];
    hermite(xi, le, N, N2);
    memset(S, 0, 12 * sizeof *S);
    memset(dux, 0, 6 * sizeof *dux);
    memset(d2y, 0, 6 * sizeof *d2y);
    S[0] = 1 - xi, S[3] = xi;
    S[6 + 1] = N[0], S[6 + 2] = N[1], S[6 + 4] = N[2], S[6 + 5] = N[3];
    dux[0] = -1 / le, dux[3] = 1 / le;
    d2y[1] = N2[0], d2y[2] = N2[1], d2y[4] = N2[2], d2y[5] = N2[3];
}

/* The planar bending stiffness EI/le^3 [12 6le -12 6le; 6le 4le^2 -6le 2le^2; ...] in closed form,
 * its three numbers a ~ 12 EI/le^3, b ~ 6 EI/le^2, c ~ EI/le chosen so that the element's rigid
 * rotation R = (v, phi) = (0, 1, le, 1) costs as little strain energy R^T K R = 12 c - 4 b le + a le^2
 * as doubles allow. In slope coordinates that energy is not zero after rounding (the rotation
 * involves le), it is the same in every element, and the pencil amplifies it as n_e^2: with the
 * 4-point rule's entries (several ulps of 12 EI/le) the flexible pendulum's omega_3 was 1e-7 too high
 * at 10^4 elements per link, with each number rounded once 0.3 eps still gave 5e-8 (docs/benchmarks.md).
 * So a is taken within 4 ulps of 12 EI/le^3, b within 16 of a le / 2 and c the double nearest
 * (4 b le - a le^2) / 12, and of those 297 candidates the one of least |R^T K R| (evaluated exactly:
 * fma products, TwoSum) is kept: below 0.002 eps of 12 EI/le for every mesh tried; each number
 * stays within 1e-14 of its exact value. The rigid translation (1, 0, 1, 0) is
 * annihilated exactly by construction (entries of equal magnitude). */
static void two_sum(double x, double y, double *s, double *t)
{
    *s = x + y;
    double z = *s - x;
    *t = (x - (*s - z)) + (y - z);
}

/* 4 b le - a le^2 as hi + lo (exact to about eps^2) */
static void bend_target(double a, double b, double le, double *hi, double *lo)
{
    double p1 = b * le, e1 = fma(b, le, -p1);
    double q = a * le, eq = fma(a, le, -q);
    double p2 = q * le, e2 = fma(q, le, -p2) + eq * le;
    double t;
    two_sum(4.0 * p1, -p2, hi, &t);
    *lo = t + 4.0 * e1 - e2;
}

#define BEND_SCAN_B 16 /* b is scanned over +-BEND_SCAN_B ulps of a le / 2 */
#define BEND_SCAN_A 4  /* a over +-BEND_SCAN_A ulps of 12 EI / le^3 */

static void bending2(double EI, double le, double *a, double *b, double *c)
{
    double A0 = 12.0 * EI / (le * le * le), best = INFINITY;
    *a = A0, *b = 0.5 * (A0 * le), *c = EI / le;
    double A = A0;
    for (int j = 0; j < BEND_SCAN_A; j++) A = nextafter(A, 0.0);
    for (int j = -BEND_SCAN_A; j <= BEND_SCAN_A; j++, A = nextafter(A, INFINITY)) {
        double Bk = 0.5 * (A * le);
        for (int k = 0; k < BEND_SCAN_B; k++) Bk = nextafter(Bk, 0.0);
        for (int k = -BEND_SCAN_B; k <= BEND_SCAN_B; k++, Bk = nextafter(Bk, INFINITY)) {
            double hi, lo;
            bend_target(A, Bk, le, &hi, &lo);
            double C = (hi + lo) / 12.0;
            /* R^T K R = 12 C - (hi + lo), exactly enough */
            double c12 = 12.0 * C, ec = fma(12.0, C, -c12), s, t;
            two_sum(c12, -hi, &s, &t);
            double r = fabs(s + (t + ec - lo));
            if (r < best) best = r, *a = A, *b = Bk, *c = C;
        }
    }
}

void mech_beam2_element(const mbl_beam_section *s, double le, double *Ke, double *Me)
{
    double gx[4], gw[4];
    gauss4(gx, gw);
    memset(Ke, 0, 36 * sizeof *Ke);
    memset(Me, 0, 36 * sizeof *Me);
    double EA = s->E * s->A, EI = s->E * s->Iz, rA = s->rho * s->A;
    for (int k = 0; k < 4; k++) {
        double S[12], dux[6], d2y[6], w = gw[k] * le;
        shape2(gx[k], le, S, dux, d2y);
        for (int j = 0; j < 6; j++)
            for (int i = 0; i < 6; i++) {
                Ke[i + 6 * j] += w * EA * dux[i] * dux[j];
                Me[i + 6 * j] += w * rA * (S[i] * S[j] + S[6 + i] * S[6 + j]);
            }
    }
    /* bending: dofs (v_a, phi_a, v_b, phi_b) = 1, 2, 4, 5 */
    double a, b, c;
    bending2(EI, le, &a, &b, &c);
    static const int d[4] = {1, 2, 4, 5};
    const double kb[16] = {a, b, -a, b, b, 4 * c, -b, 2 * c, -a, -b, a, -b, b, 2 * c, -b, 4 * c};
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) Ke[d[i] + 6 * d[j]] += kb[i + 4 * j];
}

/* Spatial element at xi, dofs per node (ux, uy, uz, rx, ry, rz): S (3 x 12 row-major), twist
 * value (12), and the derivatives: ux' (12), uy'' (12), uz'' (12), rx' (12). */
static void shape3(double xi, double le, double S[36], double tw[12], double dux[12], double d2y[12], double d2z[12],
                   double drx[12])
{
    double N[4], N2[4];
    hermite(xi, le, N, N2);
    memset(S, 0, 36 * sizeof *S);
    memset(tw, 0, 12 * sizeof *tw);
    memset(dux, 0, 12 * sizeof *dux);
    memset(d2y, 0, 12 * sizeof *d2y);
    memset(d2z, 0, 12 * sizeof *d2z);
    memset(drx, 0, 12 * sizeof *drx);
    for (int nd = 0; nd < 2; nd++) {
        int o = 6 * nd;
        double lin = nd ? xi : 1 - xi, dlin = (nd ? 1 : -1) / le;
        S[0 + o] = lin;                         /* ux */
        dux[o] = dlin;
        tw[o + 3] = lin;                        /* rx */
        drx[o + 3] = dlin;
        S[12 + o + 1] = N[2 * nd];              /* uy with rz = duy/dX */
        S[12 + o + 5] = N[2 * nd + 1];
        d2y[o + 1] = N2[2 * nd], d2y[o + 5] = N2[2 * nd + 1];
        S[24 + o + 2] = N[2 * nd];              /* uz with ry = -duz/dX */
        S[24 + o + 4] = -N[2 * nd + 1];
        d2z[o + 2] = N2[2 * nd], d2z[o + 4] = -N2[2 * nd + 1];
    }
}

void mech_beam3_shape(double xi, double le, double S[36], double tw[12])
{
    double dux[12], d2y[12], d2z[12], drx[12];
    shape3(xi, le, S, tw, dux, d2y, d2z, drx);
}

void mech_beam3_gauss(double x[4], double w[4]) { gauss4(x, w); }
 
 void mech_beam3_element(const mbl_beam_section *s, double le, double *Ke, double *Me)
{
    double gx[4], gw[4];
    gauss4(gx, gw);
    memset(Ke, 0, 144 * sizeof *Ke);
    memset(Me, 0, 144 * sizeof *Me);
    double EA = s->E * s->A, EIz = s->E * s->Iz, EIy = s->E * s->Iy, GJ = s->G * s->J;
    double rA = s->rho * s->A, rIp = s->rho * (s->Iy + s->Iz);
    for (int k = 0; k < 4; k++) {
        double S[36], tw[12], dux[12], d2y[12], d2z[12], drx[12], w = gw[k] * le;
        shape3(gx[k], le, S, tw, dux, d2y, d2z, drx);
        for (int j = 0; j < 12; j++)
            for (int i = 0; i < 12; i++) {
                Ke[i + 12 * j] += w * (EA * dux[i] * dux[j] + EIz * d2y[i] * d2y[j] + EIy * d2z[i] * d2z[j] +
                                       GJ * drx[i] * drx[j]);
                Me[i + 12 * j] += w * (rA * (S[i] * S[j] + S[12 + i] * S[12 + j] + S[24 + i] * S[24 + j]) +
                                       rIp * tw[i] * tw[j]);
            }
    }
}

static int check_section(int dim, const mbl_beam_section *s, double L, int ne, mbl_status *st)
{
    if (dim != 2 && dim != 3) return mbl_error(st, MBL_EARG, "beam: dimension %d (2 or 3)", dim);
    if (ne < 1) return mbl_error(st, MBL_EARG, "beam: %d elements (at least 1)", ne);
    if (!(L > 0) || !isfinite(L)) return mbl_error(st, MBL_EARG, "beam: length %g (positive)", L);
    if (!(s->E > 0) || !(s->rho > 0) || !(s->A > 0) || !(s->Iz > 0) || !isfinite(s->E) || !isfinite(s->rho) ||
        !isfinite(s->A) || !isfinite(s->Iz))
        return mbl_error(st, MBL_EARG, "beam: E, rho, A and I must be positive and finite");
    if (dim == 3 && (!(s->G > 0) || !(s->Iy > 0) || !(s->J > 0) || !isfinite(s->G) || !isfinite(s->Iy) ||
                     !isfinite(s->J)))
        return mbl_error(st, MBL_EARG, "beam: G, Iy, Iz and J must be positive and finite");
    return 0;
}

/* Assemble equal element matrices (ed x ed, nd dofs per node) of ne elements into CSC. */
static int assemble(int ne, int nd, const double *Ee, double scale, mbla_csc **out, mbl_status *st)
{
    int ed = 2 * nd, ndof = nd * (ne + 1);
    size_t nz = (size_t)ne * ed * ed;
    if (nz > (size_t)2147483647) return mbl_error(st, MBL_EDIM, "beam: too many elements (%d)", ne);
    int *ti = mbl_alloc_array(nz, sizeof *ti), *tj = mbl_alloc_array(nz, sizeof *tj);
    double *tx = mbl_alloc_array(nz, sizeof *tx);
    int rc = 0;
    if (!ti || !tj || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    size_t k = 0;
    for (int e = 0; e < ne && !rc; e++)
        for (int j = 0; j < ed; j++)
            for (int i = 0; i < ed; i++) {
                double v = Ee[i + (size_t)ed * j];
                if (v == 0) continue;
                ti[k] = e * nd + i, tj[k] = e * nd + j, tx[k++] = scale * v;
            }
    if (!rc) rc = mbla_csc_from_triplets(ndof, ndof, (int)k, ti, tj, tx, NULL, out, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

int mech_beam_assemble(int dim, const mbl_beam_section *s, double L, int ne, mbla_csc **K, mbla_csc **M,
                       mbl_status *st)
{
    *K = *M = NULL;
    int rc = check_section(dim, s, L, ne, st);
    if (rc) return rc;
    int nd = dim == 2 ? 3 : 6, ed = 2 * nd;
    double Ke[144], Me[144];
    if (dim == 2) mech_beam2_element(s, L / ne, Ke, Me);
    else mech_beam3_element(s, L / ne, Ke, Me);
    (void)ed;
    rc = assemble(ne, nd, Ke, 1.0, K, st);
    if (!rc) rc = assemble(ne, nd, Me, 1.0, M, st);
    if (rc) {
        mbla_csc_free(*K), mbla_csc_free(*M);
        *K = *M = NULL;
    }
    return rc;
}

/* The geometric-stiffness invariants (model/ffr.h) of a planar beam: H1 = int rho A (L - X) S'^T S' dX
 * and Hx = int rho A (L^2 - X^2) / 2 S'^T S' dX, S' the slopes d uy / dX of the shape functions
 * (the foreshortening of the point at X is -1/2 qf^T H(X) qf, H(X) = int_0^X S'^T S', and
 * int rho A H(X) dX, int rho A X H(X) dX are these after the order of integration is swapped).
 * Per element with local x = X - X0: (L - X) = (L - X0) - x, (L^2 - X^2) / 2 = (L^2 - X0^2) / 2
 * - X0 x - x^2 / 2, so three element matrices G_p = int x^p S'^T S' dx (degree <= 6: exact). */
static int beam2_geometric(double rA, double L, int ne, mbl_ffr_invariants *inv, mbl_status *st)
{
    double le = L / ne, gx[4], gw[4], G[3][16] = {{0}};
    gauss4(gx, gw);
    for (int k = 0; k < 4; k++) {
        double xi = gx[k], x = xi * le, w = gw[k] * le;
        /* d/dX of the Hermite cubics for (v_a, phi_a, v_b, phi_b) */
        double d[4] = {(-6 * xi + 6 * xi * xi) / le, 1 - 4 * xi + 3 * xi * xi, (6 * xi - 6 * xi * xi) / le,
                       -2 * xi + 3 * xi * xi};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                for (int p = 0; p < 3; p++) G[p][i + 4 * j] += w * (p ? (p == 1 ? x : x * x) : 1.0) * d[i] * d[j];
    }
    size_t nz = (size_t)ne * 16;
    int *ti = mbl_alloc_array(nz + 1, sizeof *ti), *tj = mbl_alloc_array(nz + 1, sizeof *tj);
    double *t1 = mbl_alloc_array(nz + 1, sizeof *t1), *tx = mbl_alloc_array(nz + 1, sizeof *tx);
    int rc = 0, nf = 3 * (ne + 1);
    if (!ti || !tj || !t1 || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    static const int dof[4] = {1, 2, 4, 5}; /* v_a, phi_a, v_b, phi_b among the element's 6 */
    size_t k = 0;
    for (int e = 0; e < ne && !rc; e++) {
        double X0 = e * le, a1 = rA * (L - X0), ax = rA * (L * L - X0 * X0) / 2;
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++, k++) {
                int m = i + 4 * j;
                ti[k] = 3 * e + dof[i], tj[k] = 3 * e + dof[j];
                t1[k] = a1 * G[0][m] - rA * G[1][m];
                tx[k] = ax * G[0][m] - rA * X0 * G[1][m] - rA * G[2][m] / 2;
            }
    }
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, (int)k, ti, tj, t1, NULL, &inv->H1, st);
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, (int)k, ti, tj, tx, NULL, &inv->Hx, st);
    mbl_free(ti), mbl_free(tj), mbl_free(t1), mbl_free(tx);
    return rc;
}

int mech_beam2_invariants(const mbl_beam_section *s, double L, int ne, mbl_ffr_invariants *inv, mbl_status *st)
{
    memset(inv, 0, sizeof *inv);
    int rc = check_section(2, s, L, ne, st);
    if (rc) return rc;
    double le = L / ne, rA = s->rho * s->A, gx[4], gw[4];
    gauss4(gx, gw);
    int nf = 3 * (ne + 1);
    /* per element: Sb (2 x 6), c1, c2 (6), Me (Mff), Pe (6 x 6) at offset 3 e */
    double Sbe[2][6] = {{0}}, c1e[6] = {0}, c2e[6] = {0}, Pe[36] = {0}, Me[36], Ke[36];
    double Sbx[2][6] = {{0}}, c1x[6] = {0}, c2x[6] = {0}; /* parts proportional to the element's start X0 */
    for (int k = 0; k < 4; k++) {
        double S[12], dux[6], d2y[6], w = gw[k] * le * rA, X = gx[k] * le;
        shape2(gx[k], le, S, dux, d2y);
        for (int i = 0; i < 6; i++) {
            for (int c = 0; c < 2; c++) Sbe[c][i] += w * S[6 * c + i];
            /* u0 = (X0 + X, 0), Jt u0 = (0, X0 + X): the X0 parts are X0 Sb */
            c1e[i] += w * S[i] * X;
            c2e[i] += w * S[6 + i] * X;
            c1x[i] += w * S[i];
            c2x[i] += w * S[6 + i];
            for (int j = 0; j < 6; j++) /* S^T Jt S: Jt S = (-S_y, S_x) */
                Pe[i + 6 * j] += w * (S[i] * -S[6 + j] + S[6 + i] * S[j]);
        }
    }
    (void)Sbx;
    mech_beam2_element(s, le, Ke, Me);
    inv->nf = nf;
    inv->m = rA * L;
    inv->s0[0] = rA * L * L / 2, inv->s0[1] = 0;
    inv->J0 = rA * L * L * L / 3;
    inv->Sb = mbl_calloc((size_t)2 * nf, sizeof *inv->Sb);
    inv->c1 = mbl_calloc((size_t)nf, sizeof *inv->c1);
    inv->c2 = mbl_calloc((size_t)nf, sizeof *inv->c2);
    if (!inv->Sb || !inv->c1 || !inv->c2) {
        model_ffr_invariants_free(inv);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int e = 0; e < ne; e++) {
        double X0 = e * le;
        for (int i = 0; i < 6; i++) {
            int d = 3 * e + i;
            inv->Sb[d] += Sbe[0][i];
            inv->Sb[nf + d] += Sbe[1][i];
            inv->c1[d] += c1e[i] + X0 * c1x[i];
            inv->c2[d] += c2e[i] + X0 * c2x[i];
        }
    }
    rc = assemble(ne, 3, Me, 1.0, &inv->Mff, st);
    if (!rc) rc = assemble(ne, 3, Pe, 1.0, &inv->P, st);
    if (!rc) rc = assemble(ne, 3, Ke, 1.0, &inv->K, st);
    if (!rc) rc = beam2_geometric(rA, L, ne, inv, st);
    if (rc) model_ffr_invariants_free(inv);
    return rc;
}
