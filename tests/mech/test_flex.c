/* Beam bodies in `model: mechanism` through the whole pipeline (reader, structured term, operating
 * point, every exact method, modes):
 *  - a cantilever (node 1 welded to the ground) and a pinned-pinned beam against the continuous
 *    Euler-Bernoulli closed forms (beta L = 1.8751, 4.6941, 7.8548 and k pi) with the mesh
 *    tolerance of tests/mech/test_beam.c, against the axial closed form, and against the project's
 *    own finite element reference at the same mesh (the element matrices assembled and solved
 *    dense with the same boundary conditions) to 1e-9;
 *  - the mesh convergence of the cantilever (printed);
 *  - the flexible double pendulum of source 001 (examples/flexible_pendulum_beams.yaml) against
 *    Table 3 with every exact method, all methods agreeing to 1e-9;
 *  - forces at a node (a tip load) enter the elastic coordinates: the static tip deflection of a
 *    cantilever P L^3 / (3 EI) (exact for cubic elements) in the output of a measure. */
#include <lapacke.h>
#undef I
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/model.h"
#include "mech/beam.h"
#include "test.h"
#include "fixture.h"

static const double PI = 3.14159265358979323846;
/* the section of test_beam.c */
static const double E_ = 2.1e11, RHO = 7850, AREA = 3e-4, INERTIA = 5e-8, LEN = 2.0;

/* the non-spurious oscillatory modes' frequencies (fixture_omegas) by the method given, the output out into yv */
static int omegas(const mbl_model *md, const char *method, double *w, int cap, const char *out, double *yv)
{
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = method;
    return fixture_omegas(md, &lo, w, cap, out ? yv : NULL);
}

static char *beam_model(int ne, const char *joints, const char *extra)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "model: mechanism\nspace: planar\nparameters: {L: %.17g, E: %.17g, rho: %.17g, A: %.17g, I: %.17g}\n"
             "ground:\n  markers:\n    o: {position: [0, 0]}\n    e: {position: [L, 0]}\n"
             "bodies:\n  b:\n    type: beam\n    length: L\n    elements: %d\n    E: E\n    rho: rho\n    A: A\n"
             "    I: I\n    markers:\n      n1: {node: 1}\n      tip: {s: L}\n"
             "joints:\n%s%s",
             LEN, E_, RHO, AREA, INERTIA, ne, joints, extra ? extra : "");
    return buf;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the project's own FE reference: lowest nw omegas of the beam with the dofs `drop` removed. As in
 * tests/mech/test_beam3.c, dsygvd's eigenvalues alone carry an absolute error of about eps
 * lambda_max that depends on the OpenBLAS kernel (omega_1 of the cantilever at ne = 20: 9.1e-10
 * low under Prescott and Core2, 7.2e-10 high under Nehalem, against the 1e-9 checked); each
 * eigenvalue is instead the Rayleigh quotient of dsygvd's eigenvector, its sums to about eps^2
 * (test_quad2; stationary: an eigenvector error delta costs about delta^2 lambda_max). Measured: every
 * omega the same under the eight x86-64 kernels Prescott ... Cooperlake to 2.2e-16, the library's
 * within 1e-13 of it. */
static void fe_reference(int ne, int ndrop, const int *drop, int nw, double *w)
{
    mbl_beam_section s = {E_, 0, RHO, AREA, 0, INERTIA, 0};
    mbla_csc *K, *M;
    mbl_status st;
    CHECK(mech_beam_assemble(2, &s, LEN, ne, &K, &M, &st) == 0);
    int n = K->n, nk = 0;
    double *Kd = calloc((size_t)n * n, sizeof *Kd), *Md = calloc((size_t)n * n, sizeof *Md);
    mbla_csc_to_dense(K, Kd, n, &st);
    mbla_csc_to_dense(M, Md, n, &st);
    int *keep = malloc(sizeof *keep * n);
    for (int i = 0; i < n; i++) {
        int d = 0;
        for (int k = 0; k < ndrop; k++) d |= drop[k] == i;
        if (!d) keep[nk++] = i;
    }
    double *Kr = calloc((size_t)nk * nk, sizeof *Kr), *Mr = calloc((size_t)nk * nk, sizeof *Mr), *ev = calloc((size_t)nk, sizeof *ev);
    double *Z = calloc((size_t)nk * nk, sizeof *Z);
    for (int j = 0; j < nk; j++)
        for (int i = 0; i < nk; i++) Kr[i + nk * j] = Kd[keep[i] + n * keep[j]], Mr[i + nk * j] = Md[keep[i] + n * keep[j]];
    CHECK(mbla_sygvd(nk, Kr, nk, Mr, nk, ev, Z, nk, &st) == 0);
    for (int k = 0; k < nk; k++) {
        const double *x = Z + (size_t)nk * k;
        ev[k] = sqrt(test_quad2(nk, Kr, x) / test_quad2(nk, Mr, x));
    }
    qsort(ev, (size_t)nk, sizeof *ev, cmp_d);
    for (int k = 0; k < nw; k++) w[k] = k < nk ? ev[k] : NAN;
    free(Kd), free(Md), free(keep), free(Kr), free(Mr), free(ev), free(Z);
    mbla_csc_free(K), mbla_csc_free(M);
}

TEST(cantilever)
{
    static const double exact[3] = {1.87510406871196, 4.69409113297418, 7.85475743823761};
    double c = sqrt(E_ * INERTIA / (RHO * AREA)), ax = PI / (2 * LEN) * sqrt(E_ / RHO);
    double prev[3] = {0};
    for (int ne = 5; ne <= 20; ne *= 2) {
        mbl_model *md =
            FIXTURE_LOAD(NULL, beam_model(ne, "  clamp: {type: fixed, i: n1, j: o}\n", NULL), "flex.yaml");
        if (!md) return;
        double w[16], ref[16];
        int n = omegas(md, "augmented", w, 16, NULL, NULL);
        int drop[3] = {0, 1, 2};
        fe_reference(ne, 3, drop, 16, ref);
        CHECK(n >= 4);
        for (int k = 0; k < n && k < 8; k++)
            CHECK_MSG(fabs(w[k] - ref[k]) <= 1e-9 * ref[k], "ne %d mode %d: %.15g vs own FE %.15g", ne, k + 1, w[k], ref[k]);
        for (int k = 0; k < 3; k++) {
            double bl = sqrt(w[k] / c) * LEN, bh = exact[k] / ne, err = (bl - exact[k]) / exact[k];
            CHECK_MSG(err >= -2e-8 && err <= 2 * pow(bh, 4) / 1440 + 2e-8, "ne %d: beta L %.10f exact %.10f", ne, bl, exact[k]);
            if (ne > 10 && err > 1e-8) CHECK_MSG(prev[k] / err > 14.4 && prev[k] / err < 17.6, "rate %.3g", prev[k] / err);
            prev[k] = err;
        }
        /* the first axial mode: the eigenvalue nearest the closed form, within its mesh bound */
        int best = 0;
        for (int k = 1; k < n; k++)
            if (fabs(w[k] - ax) < fabs(w[best] - ax)) best = k;
        double kh = PI / 2 / ne;
        CHECK_MSG(fabs(w[best] - ax) / ax <= 1.1 * kh * kh / 24, "ne %d: axial %.10g exact %.10g", ne, w[best], ax);
        printf("  cantilever ne %2d: beta L = %.8f %.8f %.8f, first axial %.6f rad/s (exact %.6f)\n", ne,
               sqrt(w[0] / c) * LEN, sqrt(w[1] / c) * LEN, sqrt(w[2] / c) * LEN, w[best], ax);
        mbl_model_free(md);
    }
}

TEST(pinned_pinned)
{
    int ne = 12;
    mbl_model *md = FIXTURE_LOAD(
        NULL, beam_model(ne, "  p0: {type: revolute, i: n1, j: o}\n  p1: {type: revolute, i: tip, j: e}\n", NULL),
        "flex.yaml");
    if (!md) return;
    double w[8], ref[8], c = sqrt(E_ * INERTIA / (RHO * AREA));
    int n = omegas(md, "augmented", w, 8, NULL, NULL);
    int last = 3 * ne;
    int drop[4] = {0, 1, last, last + 1};
    fe_reference(ne, 4, drop, 8, ref);
    CHECK(n >= 3);
    for (int k = 0; k < 3 && k < n; k++) {
        double ex = (k + 1) * PI, bl = sqrt(w[k] / c) * LEN;
        CHECK_MSG(fabs(w[k] - ref[k]) <= 1e-9 * ref[k], "mode %d: %.15g vs own FE %.15g", k + 1, w[k], ref[k]);
        CHECK_MSG(fabs(bl - ex) / ex <= 2 * pow(ex / ne, 4) / 1440 + 2e-8, "beta L %.10f exact %.10f", bl, ex);
    }
    mbl_model_free(md);
}

TEST(tip_load)
{
    /* a transverse tip force P: deflection P L^3 / (3 EI), exact for cubic Hermite elements */
    double P = -150.0;
    char extra[256];
    snprintf(extra, sizeof extra, "forces:\n  load: {type: force, i: tip, force: [0, %.17g]}\noutputs:\n  dy: DY(tip, e)\n", P);
    mbl_model *md = FIXTURE_LOAD(NULL, beam_model(4, "  clamp: {type: fixed, i: n1, j: o}\n", extra), "flex.yaml");
    if (!md) return;
    double w[4], y = 0;
    omegas(md, "augmented", w, 4, "dy", &y);
    double ex = P * LEN * LEN * LEN / (3 * E_ * INERTIA);
    /* the linear theory: small load, the load's work on the axial shortening is second order */
    CHECK_MSG(fabs(y - ex) <= 1e-6 * fabs(ex), "tip deflection %.12g, P L^3/(3 EI) = %.12g", y, ex);
    mbl_model_free(md);
}

TEST(pendulum_table3)
{
    static const double table3[4] = {1.3357, 3.5244, 9.4175, 22.4054};
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_file("examples/flexible_pendulum_beams.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) return;
    const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor"};
    double ref[4];
    for (int k = 0; k < 5; k++) {
        double w[4];
        CHECK_EQ_INT(omegas(md, methods[k], w, 4, NULL, NULL), 4);
        for (int i = 0; i < 4; i++) {
            CHECK_MSG(fabs(w[i] - table3[i]) <= 0.5e-4, "%s s%d %.6f vs %.4f", methods[k], i + 1, w[i], table3[i]);
            if (!k) ref[i] = w[i];
            else CHECK_MSG(fabs(w[i] - ref[i]) <= 1e-9 * ref[i], "%s s%d %.15g vs %.15g", methods[k], i + 1, w[i], ref[i]);
        }
    }
    mbl_model_free(md);
}

/* the nodes and nodal mode shapes of the outputs (mbl_model_flex_*): a pendulum link hanging along
 * -y has its nodes at (v, -(X + u)) and a mode's nodal displacement is the frame's rigid motion
 * plus the rotated elastic one */
TEST(nodal_shapes)
{
    mbl_model *md = NULL;
    mbl_status st;
    if (mbl_model_load_file("examples/flexible_pendulum_beams.yaml", NULL, 0, &md, &st)) {
        CHECK_MSG(0, "%s", st.msg);
        return;
    }
    CHECK_EQ_INT(mbl_model_flex_count(md), 2);
    CHECK(strcmp(mbl_model_flex_name(md, 1), "link2") == 0);
    CHECK_EQ_INT(mbl_model_flex_nodes(md, 0), 51);
    mbl_point *pt = NULL;
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    double pos[102], d[153];
    CHECK(mbl_model_flex_shape(md, 0, pt->q, NULL, pos, NULL) == 0);
    CHECK(fabs(pos[0]) < 1e-12 && fabs(pos[1]) < 1e-12);
    CHECK(fabs(pos[100]) < 1e-9 && pos[101] < -4.001 && pos[101] > -4.01); /* stretched by the weights (strain ~ rho g l / E) */
    /* a unit elastic transverse displacement of the last node: dx = +1 (A e_y = (1, 0) at th = -pi/2) */
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    double *dq = calloc((size_t)info.ncoord, sizeof *dq);
    for (int i = 0; i < info.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(md, i), "link1_v51")) dq[i] = 1;
    CHECK(mbl_model_flex_shape(md, 0, pt->q, dq, NULL, d) == 0);
    CHECK(fabs(d[3 * 50] - 1) < 1e-12 && fabs(d[3 * 50 + 1]) < 1e-12 && d[3 * 50 + 2] == 0);
    CHECK(fabs(d[0]) == 0 && fabs(d[1]) == 0);
    free(dq);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* The pendulum of modal bodies exported from the 10-element beams (examples/beam_to_modal.py, all 30
 * fixed-interface modes) against the pendulum of the beam bodies themselves: the same model in
 * other coordinates, so the same eigenvalues to 1e-9 (the 20 lowest); the modal bodies have no
 * geometric stiffness, so the beams leave theirs out (geometric_stiffness: false) */
TEST(modal_pendulum)
{
    static const char *beams =
        "model: mechanism\nspace: planar\nparameters: {l: 4, E: 1e8, rho: 1500, r: 0.15, g: 9.81}\n"
        "ground:\n  markers:\n    o: {position: [0, 0]}\n"
        "bodies:\n"
        "  link1:\n    type: beam\n    length: l\n    elements: 10\n    E: E\n    rho: rho\n    radius: r\n"
        "    geometric_stiffness: false\n    position: [0, 0]\n    angle: -pi/2\n    markers: {a1: {node: 1}, p1: {s: l}}\n"
        "  link2:\n    type: beam\n    length: l\n    elements: 10\n    E: E\n    rho: rho\n    radius: r\n"
        "    geometric_stiffness: false\n    position: [0, -l]\n    angle: -pi/2\n    markers: {a2: {node: 1}}\n"
        "joints:\n  pin_o: {type: revolute, i: a1, j: o}\n  pin_p1: {type: revolute, i: a2, j: p1}\n"
        "forces:\n  weight: {type: gravity, g: [0, -g]}\n";
    mbl_model *mb = FIXTURE_LOAD(NULL, beams, "flex.yaml"), *mm = NULL;
    mbl_status st;
    int rc = mbl_model_load_file("examples/flexible_pendulum_modal.yaml", NULL, 0, &mm, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!mb || rc) {
        mbl_model_free(mb);
        mbl_model_free(mm);
        return;
    }
    double wb[20], wm[20];
    int nb = omegas(mb, "augmented", wb, 20, NULL, NULL), nm = omegas(mm, "augmented", wm, 20, NULL, NULL);
    CHECK_EQ_INT(nb, 20);
    CHECK_EQ_INT(nm, 20);
    for (int k = 0; k < nb && k < nm; k++)
        CHECK_MSG(fabs(wb[k] - wm[k]) <= 1e-9 * wb[k], "mode %d: modal %.15g, beam %.15g", k + 1, wm[k], wb[k]);
    printf("  modal pendulum: %.10f %.10f %.10f %.10f (beam bodies %.10f %.10f %.10f %.10f)\n", wm[0], wm[1], wm[2],
           wm[3], wb[0], wb[1], wb[2], wb[3]);
    /* every exact method on the modal bodies */
    const char *methods[] = {"partition", "nullspace", "projection", "descriptor"};
    for (int k = 0; k < 4; k++) {
        double w[4];
        CHECK_EQ_INT(omegas(mm, methods[k], w, 4, NULL, NULL), 4);
        for (int i = 0; i < 4; i++) CHECK_MSG(fabs(w[i] - wb[i]) <= 1e-9 * wb[i], "%s s%d %.15g vs %.15g", methods[k], i + 1, w[i], wb[i]);
    }
    mbl_model_free(mb);
    mbl_model_free(mm);
}

/* bad input to a modal body: a missing file, a non-square mass matrix */
TEST(modal_errors)
{
    static const char *t =
        "model: mechanism\nspace: planar\nbodies:\n  b:\n    type: modal\n    mass: 1\n    s0: [1, 0]\n    J0: 1\n"
        "    mass_matrix: %s\n    stiffness: examples/modal/link10_K.mtx\n    Sb: examples/modal/link10_Sb.mtx\n"
        "    c1: examples/modal/link10_c1.mtx\n    c2: examples/modal/link10_c2.mtx\n    P: examples/modal/link10_P.mtx\n";
    char buf[1024];
    mbl_model *md = NULL;
    mbl_status st;
    snprintf(buf, sizeof buf, t, "examples/modal/nonexistent.mtx");
    CHECK(mbl_model_load_string(buf, strlen(buf), "modal.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
    CHECK_MSG(strstr(st.msg, "modal.yaml:9:") && strstr(st.msg, "cannot open"), "%s", st.msg);
    snprintf(buf, sizeof buf, t, "examples/modal/link10_Sb.mtx");
    CHECK(mbl_model_load_string(buf, strlen(buf), "modal.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
    CHECK_MSG(strstr(st.msg, "not square"), "%s", st.msg);
    /* beams: a fractional element count, a marker between nodes, a spatial beam without G, a missing key */
    static const char *bad[][2] = {
        {"space: planar\nbodies:\n  b: {type: beam, length: 1, elements: 2.5, E: 1, rho: 1, radius: 1}\n", "whole number"},
        {"space: planar\nbodies:\n  b: {type: beam, length: 1, elements: 2, E: 1, rho: 1, radius: 1, markers: {m: {s: 0.3}}}\n",
         "not at a node"},
        {"space: planar\nbodies:\n  b: {type: beam, length: 1, elements: 2, E: 1, rho: 1, radius: 1, markers: {m: {node: 4}}}\n",
         "not a node of the beam"},
        {"bodies:\n  b: {type: beam, length: 1, elements: 2, E: 1, rho: 1, radius: 1}\n", "missing 'G'"},
        {"space: planar\nbodies:\n  b: {type: beam, length: 1, elements: 2, rho: 1, radius: 1}\n", "missing 'E'"},
        {"space: planar\nbodies:\n  b: {type: beam, length: 1, elements: 2, E: 1, rho: 1, radius: 1, A: 2}\n", "not both"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(buf, sizeof buf, "model: mechanism\n%s", bad[k][0]);
        CHECK(mbl_model_load_string(buf, strlen(buf), "beam.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
        CHECK_MSG(strstr(st.msg, bad[k][1]) && strstr(st.msg, "beam.yaml:"), "%zu: %s", k, st.msg);
    }
}

/* every allocation failure while loading a beam body and a modal body is a clean "out of memory"
 * (no leak, no crash: run under ASan) */
TEST(allocation_failures)
{
    const char *files[2] = {NULL, "examples/flexible_pendulum_modal.yaml"};
    for (int f = 0; f < 2; f++) {
        char *text = f ? NULL : beam_model(2, "  clamp: {type: fixed, i: n1, j: o}\n", NULL);
        int fails = 0, done = 0;
        for (long n = 0; n < 200000 && !done; n += (n < 2000 ? 1 : 97)) {
            mbl_model *md = NULL;
            mbl_status st;
            mbl_alloc_fail_after(n);
            int rc = text ? mbl_model_load_string(text, strlen(text), "flex.yaml", NULL, 0, &md, &st)
                          : mbl_model_load_file(files[f], NULL, 0, &md, &st);
            mbl_alloc_fail_after(-1);
            if (rc == 0) done = 1;
            else {
                fails++;
                /* as in test_mechanism: MBL_ENOMEM, or the loader's "out of memory" while parsing */
                CHECK_MSG(rc == MBL_ENOMEM || strstr(st.msg, "out of memory"), "fail after %ld: %d %s", n, rc, st.msg);
            }
            mbl_model_free(md);
        }
        CHECK(done && fails > 100);
    }
}

int main(void)
{
    RUN(cantilever);
    RUN(pinned_pinned);
    RUN(tip_load);
    RUN(pendulum_table3);
    RUN(nodal_shapes);
    RUN(modal_pendulum);
    RUN(modal_errors);
    RUN(allocation_failures);
    return test_summary("flex");
}
