/* Spatial beam bodies in `model: mechanism` (src/mech/beam3.c) through the whole pipeline:
 *  - a cantilever (node 1 welded to the ground) with different bending stiffnesses in its two
 *    planes: every eigenvalue equal to the project's own finite element model at the same mesh (the
 *    spatial element matrices assembled and solved dense with node 1 held) to 1e-9, and the lowest
 *    bending modes of both planes, the first torsion and the first axial mode against the
 *    continuous closed forms within the mesh's error bound;
 *  - the flexible double pendulum of source 001 built from spatial beams hanging in the x-y plane
 *    with revolute joints about z: every eigenvalue of the planar beam pendulum (n_p = 5) is one of
 *    its eigenvalues to 1e-9, the rest are the out-of-plane modes;
 *  - tip forces in both planes: the static deflections P L^3 / (3 E Iz) and P L^3 / (3 E Iy);
 *  - the nodal mode shapes against the closed form of a cantilever's first bending mode;
 *  - sensitivities against closed forms (cantilever) and central differences (pendulum);
 *  - the closed-form Jacobian against the expression engine's derivatives at a moving point;
 *  - bad input. */
#include <lapacke.h>
#undef I
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "mech/beam.h"
#include "model/ffr.h"
#include "model/model_internal.h"
#include "test.h"
#include "fixture.h"

static const double PI = 3.14159265358979323846;
static const double E_ = 2.1e11, G_ = 8.1e10, RHO = 7850, AREA = 3e-4, IY = 8e-8, IZ = 2e-8, JT = 6e-8, LEN = 2.0;

static char *cantilever_text(int ne, const char *extra)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "model: mechanism\nparameters: {L: %.17g, E: %.17g, G: %.17g, rho: %.17g}\n"
             "ground:\n  markers:\n    o: {position: [0, 0, 0]}\n    e: {position: [L, 0, 0]}\n"
             "bodies:\n  b:\n    type: beam\n    length: L\n    elements: %d\n    E: E\n    G: G\n    rho: rho\n"
             "    A: %.17g\n    Iy: %.17g\n    Iz: %.17g\n    J: %.17g\n"
             "    markers:\n      n1: {node: 1}\n      tip: {s: L}\n"
             "joints:\n  clamp: {type: fixed, i: n1, j: o}\n%s",
             LEN, E_, G_, RHO, ne, AREA, IY, IZ, JT, extra ? extra : "");
    return buf;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the project's own FE model: the 6 ne lowest omegas of the clamped beam. dsygvd's eigenvalues
 * alone are less accurate than the library tested: the smallest carries an absolute error of about
 * eps lambda_max, and its value depends on the OpenBLAS kernel (omega_1 at ne = 16 from
 * 37.1210290747 under Nehalem to 37.1210291727 under SkylakeX, 2.6e-9 relative, over the x86-64
 * kernels Prescott ... Cooperlake; 3e-10 at ne = 8). Each eigenvalue is instead the Rayleigh
 * quotient x^T K x / x^T M x of dsygvd's eigenvector x, its sums to about eps^2 (test_quad2): the
 * quotient is stationary, so an eigenvector error delta (about eps lambda_max / gap) costs about
 * delta^2 lambda_max, and the sums' rounding eps^2 lambda_max. Measured: every omega the same
 * under all eight kernels to 1.8e-16 (one ulp; omega_1 at ne = 16: 37.121029075247129 under
 * each), and the library's within 4e-14 of it. */
static int fe_reference(int ne, double *w)
{
    mbl_beam_section s = {E_, G_, RHO, AREA, IY, IZ, JT};
    mbla_csc *K, *M;
    mbl_status st;
    CHECK(mech_beam_assemble(3, &s, LEN, ne, &K, &M, &st) == 0);
    int n = K->n, nk = n - 6;
    double *Kd = calloc((size_t)n * n, sizeof *Kd), *Md = calloc((size_t)n * n, sizeof *Md);
    mbla_csc_to_dense(K, Kd, n, &st);
    mbla_csc_to_dense(M, Md, n, &st);
    double *Kr = calloc((size_t)nk * nk, sizeof *Kr), *Mr = calloc((size_t)nk * nk, sizeof *Mr);
    double *Z = calloc((size_t)nk * nk, sizeof *Z);
    for (int j = 0; j < nk; j++)
        for (int i = 0; i < nk; i++) Kr[i + nk * j] = Kd[6 + i + n * (6 + j)], Mr[i + nk * j] = Md[6 + i + n * (6 + j)];
    CHECK(mbla_sygvd(nk, Kr, nk, Mr, nk, w, Z, nk, &st) == 0);
    for (int k = 0; k < nk; k++) {
        const double *x = Z + (size_t)nk * k;
        w[k] = sqrt(test_quad2(nk, Kr, x) / test_quad2(nk, Mr, x));
    }
    qsort(w, (size_t)nk, sizeof *w, cmp_d);
    free(Kd), free(Md), free(Kr), free(Mr), free(Z);
    mbla_csc_free(K), mbla_csc_free(M);
    return nk;
}

static double nearest(const double *w, int n, double x)
{
    double b = w[0];
    for (int i = 1; i < n; i++)
        if (fabs(w[i] - x) < fabs(b - x)) b = w[i];
    return b;
}

TEST(cantilever)
{
    static const double bl[3] = {1.87510406871196, 4.69409113297418, 7.85475743823761};
    for (int ne = 4; ne <= 16; ne *= 2) {
        mbl_model *md = FIXTURE_LOAD(NULL, cantilever_text(ne, NULL), "beam3.yaml");
        if (!md) return;
        double w[128], ref[128];
        int n = fixture_omegas(md, NULL, w, 128, NULL), nr = fe_reference(ne, ref);
        CHECK_EQ_INT(n, nr);
        double worst = 0;
        for (int k = 0; k < n && k < nr; k++) {
            double e = fabs(w[k] - ref[k]) / ref[k];
            CHECK_MSG(e <= 1e-9, "ne %d mode %d: %.15g vs own FE %.15g", ne, k + 1, w[k], ref[k]);
            if (e > worst) worst = e;
        }
        /* bending in the x-y plane (E Iz) and in the x-z plane (E Iy): beta L within the mesh bound */
        double out[2][3];
        for (int p = 0; p < 2; p++) {
            double c = sqrt(E_ * (p ? IY : IZ) / (RHO * AREA));
            for (int k = 0; k < 3; k++) {
                double want = pow(bl[k] / LEN, 2) * c, got = nearest(w, n, want);
                double b = sqrt(got / c) * LEN, err = (b - bl[k]) / bl[k], bh = bl[k] / ne;
                /* (at ne = 4 the nearest eigenvalue to the third may belong to the other plane) */
                if (ne >= 8 || k < 2)
                    CHECK_MSG(err >= -2e-8 && err <= 2 * pow(bh, 4) / 1440 + 2e-8,
                              "ne %d plane %d: beta L %.10f exact %.10f", ne, p, b, bl[k]);
                out[p][k] = b;
            }
        }
        /* the first torsion and axial modes: (pi / 2L) sqrt(GJ / (rho Ip)), (pi / 2L) sqrt(E / rho) */
        double tor = PI / (2 * LEN) * sqrt(G_ * JT / (RHO * (IY + IZ))), ax = PI / (2 * LEN) * sqrt(E_ / RHO);
        double kh = PI / 2 / ne, wt = nearest(w, n, tor), wa = nearest(w, n, ax);
        CHECK_MSG(fabs(wt - tor) / tor <= 1.1 * kh * kh / 24, "ne %d: torsion %.10g exact %.10g", ne, wt, tor);
        CHECK_MSG(fabs(wa - ax) / ax <= 1.1 * kh * kh / 24, "ne %d: axial %.10g exact %.10g", ne, wa, ax);
        printf("  spatial cantilever ne %2d: %d modes = own FE to %.1e; beta L (Iz) %.7f %.7f %.7f, (Iy) %.7f %.7f %.7f; "
               "torsion %.4f (exact %.4f), axial %.3f (exact %.3f) rad/s\n",
               ne, n, worst, out[0][0], out[0][1], out[0][2], out[1][0], out[1][1], out[1][2], wt, tor, wa, ax);
        mbl_model_free(md);
    }
}

TEST(tip_loads)
{
    /* transverse tip forces in y and z: P L^3 / (3 E Iz) and P L^3 / (3 E Iy) (exact for cubic
     * elements; the linear theory: a small load) */
    double P = -40.0;
    char extra[512];
    snprintf(extra, sizeof extra,
             "forces:\n  fy: {type: force, i: tip, force: [0, %.17g, 0]}\n  fz: {type: force, i: tip, force: [0, 0, %.17g]}\n"
             "outputs:\n  dy: DY(tip, e)\n  dz: DZ(tip, e)\n",
             P, 2 * P);
    mbl_model *md = FIXTURE_LOAD(NULL, cantilever_text(4, extra), "beam3.yaml");
    if (!md) return;
    double w[4], y[2] = {0, 0};
    fixture_omegas(md, NULL, w, 4, y);
    double ey = P * pow(LEN, 3) / (3 * E_ * IZ), ez = 2 * P * pow(LEN, 3) / (3 * E_ * IY);
    CHECK_MSG(fabs(y[0] - ey) <= 1e-5 * fabs(ey), "tip deflection y %.12g, P L^3/(3 E Iz) = %.12g", y[0], ey);
    CHECK_MSG(fabs(y[1] - ez) <= 1e-5 * fabs(ez), "tip deflection z %.12g, P L^3/(3 E Iy) = %.12g", y[1], ez);
    printf("  tip deflections %.10g (y, exact %.10g), %.10g (z, exact %.10g)\n", y[0], ey, y[1], ez);
    mbl_model_free(md);
}

/* the spatial example at n_p = 5 and the planar beam pendulum at n_p = 5 (both the library's:
 * each solve's slow modes refined by the Rayleigh quotient, the others' a-priori error eps
 * omega_max^2 / omega^2 below 1e-12; measured under the eight x86-64 OpenBLAS kernels Prescott
 * ... Cooperlake: every pair within 7e-13, each model's omegas the same to 2e-13); geo: both with
 * the geometric stiffness (the examples' `geometric_stiffness: false` turned on: link 1 carries
 * link 2's weight at its tip marker, which enters through the marker's foreshortening, issue 32) */
static void pendulum_in_plane_geo(int geo)
{
    char *sp = test_slurp("examples/mech/spatial_beam_pendulum.yaml"), *pl = test_slurp("examples/flexible_pendulum_beams.yaml");
    CHECK(sp && pl);
    if (!sp || !pl) {
        free(sp), free(pl);
        return;
    }
    char *p;
    while ((p = strstr(sp, "elements: 10"))) memcpy(p + 10, "5 ", 2);
    while ((p = strstr(pl, "elements: 50"))) memcpy(p + 10, "5 ", 2);
    while (geo && (p = strstr(sp, "geometric_stiffness: false"))) memcpy(p + 21, "true ", 5);
    while (geo && (p = strstr(pl, "geometric_stiffness: false"))) memcpy(p + 21, "true ", 5);
    mbl_model *a = FIXTURE_LOAD(NULL, sp, "beam3.yaml"), *b = FIXTURE_LOAD(NULL, pl, "beam3.yaml");
    free(sp), free(pl);
    if (a && b) {
        double wa[256], wb[256];
        int na = fixture_omegas(a, NULL, wa, 256, NULL), nb = fixture_omegas(b, NULL, wb, 256, NULL);
        CHECK_EQ_INT(nb, 32);
        CHECK(na > nb);
        double worst = 0;
        for (int k = 0; k < nb; k++) {
            double e = fabs(nearest(wa, na, wb[k]) - wb[k]) / wb[k];
            CHECK_MSG(e <= 1e-9, "planar omega %.12g: nearest spatial %.12g", wb[k], nearest(wa, na, wb[k]));
            if (e > worst) worst = e;
        }
        qsort(wa, (size_t)na, sizeof *wa, cmp_d);
        printf("  spatial beam pendulum n_p = 5%s: %d modes, the planar pendulum's %d among them to %.1e; lowest %.6f "
               "%.6f %.6f %.6f\n",
               geo ? " (geometric stiffness)" : "", na, nb, worst, wa[0], wa[1], wa[2], wa[3]);
    }
    mbl_model_free(a);
    mbl_model_free(b);
}

TEST(pendulum_in_plane) { pendulum_in_plane_geo(0); }
TEST(pendulum_in_plane_geometric) { pendulum_in_plane_geo(1); }

/* the nodal mode shapes (mbl_model_flex_shape, the JSON's and the exports' "flexible_bodies"): a
 * cantilever's first bending mode (in the x-y plane, E Iz the smaller) at the nodes equals the
 * closed form cosh(b x) - cos(b x) - sigma (sinh(b x) - sin(b x)), sigma = (cosh bL + cos bL) /
 * (sinh bL + sin bL), b L = 1.87510407, to the mesh's error (cubic elements: O(h^4)) */
TEST(mode_shape)
{
    int ne = 20;
    mbl_status st;
    mbl_model *md = FIXTURE_LOAD(NULL, cantilever_text(ne, NULL), "beam3.yaml");
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *mo = NULL;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &mo, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    CHECK_EQ_INT(mbl_model_flex_count(md), 1);
    CHECK_EQ_INT(mbl_model_flex_dim(md, 0), 3);
    CHECK_EQ_INT(mbl_model_flex_nodes(md, 0), ne + 1);
    if (rc || mbl_model_flex_nodes(md, 0) != ne + 1) goto done;
    double pos[3 * 21], d[6 * 21];
    CHECK(mbl_model_flex_shape(md, 0, pt->q, NULL, pos, NULL) == 0);
    for (int i = 0; i <= ne; i++)
        CHECK_MSG(fabs(pos[3 * i] - LEN * i / ne) < 1e-12 && fabs(pos[3 * i + 1]) < 1e-12 && fabs(pos[3 * i + 2]) < 1e-12,
                  "node %d at (%g, %g, %g)", i + 1, pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    double bL = 1.87510406871196, w1 = pow(bL / LEN, 2) * sqrt(E_ * IZ / (RHO * AREA));
    int k1 = -1;
    for (int k = 0; k < mo->nx; k++)
        if (mo->modes[k].im > 0 && (k1 < 0 || fabs(mo->modes[k].im - w1) < fabs(mo->modes[k1].im - w1))) k1 = k;
    CHECK(k1 >= 0);
    if (k1 < 0) goto done;
    /* re or im part (an undamped mode: both proportional to the real shape), the larger at the tip */
    double dr[6 * 21], di[6 * 21];
    mbl_model_flex_shape(md, 0, pt->q, mo->shape_re + (size_t)k1 * mo->n, NULL, dr);
    mbl_model_flex_shape(md, 0, pt->q, mo->shape_im + (size_t)k1 * mo->n, NULL, di);
    memcpy(d, fabs(dr[6 * ne + 1]) >= fabs(di[6 * ne + 1]) ? dr : di, sizeof d);
    CHECK_MSG(fabs(d[6 * ne + 1]) > 0 && isfinite(d[6 * ne + 1]), "tip displacement %g", d[6 * ne + 1]);
    double sg = (cosh(bL) + cos(bL)) / (sinh(bL) + sin(bL)), b = bL / LEN;
    double tipc = cosh(bL) - cos(bL) - sg * (sinh(bL) - sin(bL)), worst = 0, other = 0, h = 1.0 / ne;
    for (int i = 0; i <= ne; i++) {
        double x = LEN * i / ne, want = (cosh(b * x) - cos(b * x) - sg * (sinh(b * x) - sin(b * x))) / tipc;
        double got = d[6 * i + 1] / d[6 * ne + 1];
        /* the slope: the rotation about z is d uy / dx */
        double wslope = b * (sinh(b * x) + sin(b * x) - sg * (cosh(b * x) - cos(b * x))) / tipc, gslope = d[6 * i + 5] / d[6 * ne + 1];
        worst = fmax(worst, fmax(fabs(got - want), fabs(gslope - wslope) * LEN / 4));
        for (int c = 0; c < 6; c++)
            if (c != 1 && c != 5) other = fmax(other, fabs(d[6 * i + c] / d[6 * ne + 1]));
    }
    /* nodal values of cubic elements: error O(h^4) (about 4e-6 at h = L/20); out of plane, axial
     * and twist: nothing */
    CHECK_MSG(isfinite(worst) && worst <= 3 * pow(h, 4), "first bending mode shape off the closed form by %.3g", worst);
    CHECK_MSG(other <= 1e-9, "first bending mode: %.3g out of its plane", other);
    printf("  cantilever ne %d, first bending mode (%.6f rad/s, closed form %.6f): nodal shape = closed form to %.1e "
           "(bound 3 h^4 = %.1e), out of plane %.1e\n",
           ne, mo->modes[k1].im, w1, worst, 3 * pow(h, 4), other);
done:
    mbl_modes_free(mo);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* sensitivities (the structured term's parameter derivatives, ffr3.c model_ffr3_dinv) against the
 * closed forms of a cantilever at a fixed mesh: bending and axial omega ~ sqrt(E / rho), torsion
 * ~ sqrt(G / rho); bending ~ 1 / L^2, axial and torsion ~ 1 / L: d omega/dE = omega/(2E) or 0,
 * d omega/dG = 0 or omega/(2G), d omega/d rho = -omega/(2 rho), d omega/dL = -2 omega/L or
 * -omega/L, to 1e-9 of omega/p */
TEST(sensitivity_closed_form)
{
    mbl_status st;
    mbl_model *md = FIXTURE_LOAD(NULL, cantilever_text(8, NULL), "beam3.yaml");
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    mbl_sensitivity *S = NULL;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_dae_deriv_new(md, &dd, &st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, NULL, 0, NULL, &S, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        int iE = fixture_param_index(md, "E"), iG = fixture_param_index(md, "G"), ir = fixture_param_index(md, "rho"), iL = fixture_param_index(md, "L");
        int nb = 0, na = 0, nt = 0;
        double worst = 0;
        for (int i = 0; i < S->nmode; i++) {
            const mbl_sens_mode *m = &S->modes[i];
            if (!m->defined || m->im <= 0) continue;
            double w = m->im;
            int tors = fabs(m->dim[iG]) > 0.25 * w / G_;
            /* bending or axial: by d omega/dL, the nearer of -2 omega/L and -omega/L */
            int bend = !tors && fabs(m->dim[iL] + 2 * w / LEN) < fabs(m->dim[iL] + w / LEN);
            double ee[4] = {m->dim[iE] - (tors ? 0 : w / (2 * E_)), m->dim[iG] - (tors ? w / (2 * G_) : 0),
                            m->dim[ir] + w / (2 * RHO), m->dim[iL] + (bend ? 2 : 1) * w / LEN};
            double sc[4] = {w / E_, w / G_, w / RHO, w / LEN};
            for (int k = 0; k < 4; k++) {
                double e = fabs(ee[k]) / sc[k];
                CHECK_MSG(e <= 1e-9, "mode %.8g (%s) parameter %d: error %.3g of omega/p", w,
                          tors ? "torsion" : bend ? "bending" : "axial", k, e);
                worst = fmax(worst, e);
            }
            tors ? nt++ : bend ? nb++ : na++;
        }
        CHECK_MSG(nb == 32 && na == 8 && nt == 8, "%d bending, %d axial, %d torsion modes", nb, na, nt);
        printf("  spatial cantilever ne 8 sensitivities: %d bending, %d axial, %d torsion modes; d omega/d(E, G, rho, L) = "
               "closed forms to %.1e of omega/p\n",
               nb, na, nt, worst);
    }
    mbl_sensitivity_free(S);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* sensitivities of the spatial beam pendulum (n_p = 5, gravity, Euler parameters, with the
 * geometric stiffness: the example's `geometric_stiffness: false` turned on, so that the derivatives
 * of its invariants H1, Hx by l, rho, r and of its load by g are in) against central differences of
 * fresh linearizations, every parameter (l, E, G, rho, r, g) */
static int fresh_omegas(const char *text, const char *name, double value, double *w, int cap)
{
    mbl_setting set = {name, value};
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(text, strlen(text), "p.yaml", &set, 1, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    int n = rc ? 0 : fixture_omegas(md, NULL, w, cap, NULL);
    mbl_model_free(md);
    return n;
}

TEST(sensitivity_pendulum_fd)
{
    char *sp = test_slurp("examples/mech/spatial_beam_pendulum.yaml");
    CHECK(sp != NULL);
    if (!sp) return;
    char *p;
    while ((p = strstr(sp, "elements: 10"))) memcpy(p + 10, "5 ", 2);
    while ((p = strstr(sp, "geometric_stiffness: false"))) memcpy(p + 21, "true ", 5);
    mbl_status st;
    mbl_model *md = FIXTURE_LOAD(NULL, sp, "beam3.yaml");
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    mbl_sensitivity *S = NULL;
    int rc = md ? mbl_operating_point(md, NULL, &pt, &st) : -1;
    if (!rc) rc = mbl_dae_deriv_new(md, &dd, &st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, NULL, 0, NULL, &S, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    static const char *names[6] = {"l", "E", "G", "rho", "r", "g"};
    double worst = 0, worst_rel = 0;
    int ncmp = 0, nrel = 0;
    for (int k = 0; !rc && k < 6; k++) {
        int ip = fixture_param_index(md, names[k]);
        double p0 = mbl_model_param_value(md, ip), h = 1e-4 * p0, wp[256], wm[256], wp2[256], wm2[256];
        int np = fresh_omegas(sp, names[k], p0 + h, wp, 256), nm = fresh_omegas(sp, names[k], p0 - h, wm, 256);
        int np2 = fresh_omegas(sp, names[k], p0 + 2 * h, wp2, 256), nm2 = fresh_omegas(sp, names[k], p0 - 2 * h, wm2, 256);
        CHECK(np == nm && np == np2 && np == nm2);
        double wmax = 0; /* the largest omega (the noise floor below) */
        for (int q = 0; q < np; q++) wmax = fmax(wmax, fmax(fmax(wp[q], wm[q]), fmax(wp2[q], wm2[q])));
        /* the 20 lowest distinct modes: omega_i (sorted) at p +- h, +- 2h, Richardson-extrapolated */
        int j = 0;
        for (int i = 0; i < S->nmode && j < 20; i++) {
            const mbl_sens_mode *m = &S->modes[i];
            if (!m->defined || m->im <= 0) continue;
            int idx = -1;
            double bd = HUGE_VAL;
            for (int q = 0; q < np; q++)
                if (fabs(wp[q] - m->im) < bd) bd = fabs(wp[q] - m->im), idx = q;
            if (idx < 0) continue;
            double d1 = (wp[idx] - wm[idx]) / (2 * h), d2 = (wp2[idx] - wm2[idx]) / (4 * h), fd = (4 * d1 - d2) / 3;
            /* 1e-6 relative plus the differences' own noise floor: each omega of a fresh
             * linearization is the root of an eigenvalue lambda = omega^2 with an absolute rounding
             * error of a few eps lambda_max (the symmetric-definite solver's normwise bound, as in
             * fe_reference), so omega carries dw = eps omega_max^2 / (2 omega) times that factor, and
             * fd = (8 (w(h) - w(-h)) - (w(2h) - w(-2h))) / (12 h) up to 18 / 12 dw / h. Measured (17
             * points at steps h / 4 per parameter, the 22 lowest modes, the eight x86-64 kernels
             * Prescott ... Cooperlake): dw up to 2.65 eps omega_max^2 / omega (1000 eps omega at
             * omega = 49, so not a few eps omega; the slow modes, which the solver refines by a
             * Rayleigh quotient, stay near eps omega: the bound is loose for them); |dim - fd| up to
             * 2.2 eps omega_max^2 / (omega h). Allowed: dw = 4 eps omega_max^2 / omega. A derivative
             * that vanishes (d/dG of an in-plane mode: 1e-67, the differences up to 1.6e-15 under
             * Prescott) is checked against the floor alone. */
            double dw = 4 * DBL_EPSILON * wmax * wmax / m->im, noise = 1.5 * dw / h;
            double err = fabs(m->dim[ip] - fd), tol = 1e-6 * fabs(fd) + noise;
            CHECK_MSG(err <= tol, "omega %.8g d/d%s: %.12g vs central differences %.12g (allowed %.3g, of it noise %.3g)",
                      m->im, names[k], m->dim[ip], fd, tol, noise);
            worst = fmax(worst, err / tol);
            if (noise < 1e-6 * fabs(fd)) worst_rel = fmax(worst_rel, err / fabs(fd)), nrel++;
            ncmp++, j++;
        }
    }
    CHECK(rc || ncmp >= 6 * 20);
    printf("  spatial beam pendulum n_p = 5: %d frequency derivatives = central differences of fresh linearizations, "
           "at most %.2f of the allowance; the %d above the differences' noise to %.1e relative\n",
           ncmp, worst, nrel, worst_rel);
    mbl_sensitivity_free(S);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    free(sp);
}

/* the structured term's closed-form Jacobian (model/terms/ffr3.c, its expression form: loaded with
 * model_ffr_set_numeric(0), else md->F and the tape lack the term) against the expression engine's
 * exact derivatives of the same rows (md->F), at a point with nonzero coordinates, velocities,
 * accelerations and multipliers (Coriolis, centrifugal and damping terms included): the spatial
 * pendulum at 2 elements per link, Rayleigh damping on link 1 */
TEST(jacobian_exact)
{
    char *sp = test_slurp("examples/mech/spatial_beam_pendulum.yaml");
    CHECK(sp != NULL);
    if (!sp) return;
    char *p;
    while ((p = strstr(sp, "elements: 10"))) memcpy(p + 10, "2 ", 2);
    const char *at = strstr(sp, "    markers:\n      a1:");
    CHECK(at != NULL);
    char *text = malloc(strlen(sp) + 128);
    if (!at || !text) {
        free(sp), free(text);
        return;
    }
    sprintf(text, "%.*s    damping: {alpha: 0.05, beta: 2e-4}\n%s", (int)(at - sp), sp, at);
    free(sp);
    mbl_model *md = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 0, NULL, text, "beam3.yaml");
    free(text);
    if (!md) return;
    CHECK(md->nffr3n == 0);
    int n = md->n, nunk = md->nunk;
    mblx_id *syms = malloc((size_t)nunk * sizeof *syms);
    for (int j = 0; j < nunk; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    mblx_sparse S;
    memset(&S, 0, sizeof S);
    CHECK(mblx_jacobian(md->g, (size_t)n, md->F, (size_t)nunk, syms, &S) == 0);
    int nz = S.colptr[nunk];
    mbl_status st2;
    mblx_tape *tS = mblx_compile(md->g, (size_t)nz, S.node, &st2);
    CHECK(tS != NULL);
    double *sv = calloc((size_t)md->nsym + 1, sizeof *sv), *jac = calloc((size_t)md->jac.nz + 1, sizeof *jac);
    double *ref = calloc((size_t)nz + 1, sizeof *ref), *dense = calloc((size_t)n * nunk, sizeof *dense);
    double *mag = calloc((size_t)n * nunk, sizeof *mag);
    size_t wsz = md->work_size > mblx_tape_work_size(tS) ? md->work_size : mblx_tape_work_size(tS);
    double *work = calloc(wsz + 1, sizeof *work);
    double *q = calloc((size_t)n, sizeof *q), *v = calloc((size_t)n, sizeof *v), *a = calloc((size_t)n, sizeof *a);
    double *lam = calloc((size_t)md->m + 1, sizeof *lam);
    for (int i = 0; i < n; i++) q[i] = 0.1 * sin(1.3 * i + 0.2), v[i] = 0.3 * cos(0.7 * i), a[i] = 0.2 * sin(2.1 * i + 1);
    for (int j = 0; j < md->m; j++) lam[j] = 0.1 * (j + 1);
    model_fill_syms(md, 0, q, v, a, lam, NULL, NULL, sv);
    CHECK(tS && mblx_tape_eval(tS, sv, ref, work, &st2) == 0);
    CHECK(mblx_tape_eval(md->tape_jac, sv, jac, work, &st2) == 0);
    for (int pz = 0; pz < md->jac.nz; pz++)
        if (md->jac.row[pz] < n) dense[(size_t)md->jac.row[pz] * nunk + md->jac.col[pz]] += jac[pz];
    double maxerr = 0, maxref = 0;
    for (int c = 0; c < nunk; c++)
        for (int e = S.colptr[c]; e < S.colptr[c + 1]; e++) {
            double *d = &dense[(size_t)S.rowidx[e] * nunk + c];
            maxref = fmax(maxref, fabs(ref[e]));
            mag[(size_t)S.rowidx[e] * nunk + c] = fabs(ref[e]);
            *d -= ref[e];
        }
    /* relative to each entry (to 1 for entries below 1) */
    for (size_t k = 0; k < (size_t)n * nunk; k++) maxerr = fmax(maxerr, fabs(dense[k]) / fmax(1.0, mag[k]));
    CHECK_MSG(maxerr <= 1e-12, "closed-form Jacobian off the engine's by %.3g (max entry %.3g)", maxerr, maxref);
    printf("  spatial pendulum n_p = 2, damped, moving: closed-form Jacobian = the engine's derivatives of the rows to "
           "%.1e relative (max entry %.1e, %d entries)\n",
           maxerr, maxref, nz);
    mblx_tape_free(tS);
    mblx_sparse_free(&S);
    free(syms), free(sv), free(jac), free(ref), free(dense), free(mag), free(work), free(q), free(v), free(a), free(lam);
    mbl_model_free(md);
}

TEST(refusals)
{
    mbl_status st;
    mbl_model *md = NULL;
    const char *bad[][2] = {
        {"    axis: [0, 0, 1]\n", "give 'axis' and 'angle' together"},
        {"    radius: 0.01\n", "not both"},
        {"    colour: red\n", "colour"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char text[4096];
        const char *base = cantilever_text(2, NULL);
        const char *at = strstr(base, "    markers:");
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, bad[k][0], at);
        md = NULL;
        int rc = mbl_model_load_string(text, strlen(text), "beam3.yaml", NULL, 0, &md, &st);
        CHECK_MSG(rc == MBL_EMODEL && strstr(st.msg, bad[k][1]) && strstr(st.msg, "beam3.yaml:"), "case %zu: %s", k,
                  st.msg);
        mbl_model_free(md);
    }
}

int main(void)
{
    RUN(cantilever);
    RUN(tip_loads);
    RUN(pendulum_in_plane);
    RUN(pendulum_in_plane_geometric);
    RUN(mode_shape);
    RUN(sensitivity_closed_form);
    RUN(sensitivity_pendulum_fd);
    RUN(jacobian_exact);
    RUN(refusals);
    return test_summary("beam3");
}
