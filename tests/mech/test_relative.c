/* `coordinates: relative` (src/mech/relative.c) and URDF robots (src/mech/urdf.c): source 003 in
 * joint coordinates (Eq. 3.37 and Table 3.7, Table 4.1 with Q2 and Eq. 4.18, Table 5.1 and
 * Eq. 5.28), every examples/mech model equal in absolute and relative coordinates, the general
 * four-bar with every method, the 2-link URDF arm against its closed form and the 7-joint arm
 * against its absolute-coordinate twin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_status st;
} run;

/* the text with its `coordinates:` line set (or inserted after `model: mechanism`) */
static char *with_coords(const char *text, const char *mode)
{
    size_t n = strlen(text);
    char *o = malloc(n + 64);
    if (!o) return NULL;
    const char *c = strstr(text, "\ncoordinates: ");
    if (c) {
        const char *e = strchr(c + 1, '\n');
        size_t head = (size_t)(c + 1 - text);
        memcpy(o, text, head);
        size_t k = head + (size_t)sprintf(o + head, "coordinates: %s", mode);
        strcpy(o + k, e ? e : "");
        return o;
    }
    const char *m = strstr(text, "model: mechanism\n");
    if (!m) {
        strcpy(o, text);
        return o;
    }
    size_t head = (size_t)(m - text) + strlen("model: mechanism\n");
    memcpy(o, text, head);
    size_t k = head + (size_t)sprintf(o + head, "coordinates: %s\n", mode);
    strcpy(o + k, text + head);
    return o;
}

static int run_text(const char *text, const char *name, const char *method, const mbl_setting *sets, int nsets,
                    run *r)
{
    memset(r, 0, sizeof *r);
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = method;
    int rc = mbl_model_load_string(text, strlen(text), name, sets, nsets, &r->md, &r->st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &r->st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, &lo, &r->lin, &r->st);
    if (rc) fprintf(stderr, "%s (%s): %s\n", name, method ? method : "augmented", r->st.msg);
    return rc;
}

static int run_file(const char *path, const char *mode, const char *method, const mbl_setting *sets, int nsets,
                    run *r)
{
    memset(r, 0, sizeof *r);
    char *t = test_slurp(path);
    char *x = t && mode ? with_coords(t, mode) : t;
    int rc = x ? run_text(x, path, method, sets, nsets, r) : -1;
    if (x != t) free(x);
    free(t);
    return rc;
}

static void run_free(run *r)
{
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
    memset(r, 0, sizeof *r);
}

typedef struct cplx {
    double re, im;
} cplx;

static int cmp_cplx(const void *a, const void *b)
{
    const cplx *x = a, *y = b;
    if (fabs(x->im - y->im) > 1e-7 * (1 + fabs(x->im))) return x->im < y->im ? -1 : 1;
    if (x->re != y->re) return x->re < y->re ? -1 : 1;
    return 0;
}

/* eigenvalues of A (the non-spurious ones a method lists, else eig(A)) through mbl_modal */
static int eigs(const mbl_linear *lin, cplx *out, int cap)
{
    mbl_modes *m = NULL;
    if (mbl_modal(lin, NULL, &m, NULL)) return -1;
    int n = 0;
    for (int i = 0; i < m->nx && n < cap; i++)
        if (m->modes[i].kind != MBL_MODE_ZERO && !m->modes[i].spurious)
            out[n++] = (cplx){m->modes[i].re, m->modes[i].im};
    mbl_modes_free(m);
    qsort(out, (size_t)n, sizeof *out, cmp_cplx);
    return n;
}

static double eig_diff(const mbl_linear *a, const mbl_linear *b)
{
    cplx ea[512], eb[512];
    int na = eigs(a, ea, 512), nb = eigs(b, eb, 512);
    if (na != nb || na < 0) {
        fprintf(stderr, "  eigenvalue counts differ: %d vs %d\n", na, nb);
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < na; i++) {
        double d = hypot(ea[i].re - eb[i].re, ea[i].im - eb[i].im) / fmax(1, hypot(eb[i].re, eb[i].im));
        if (d > worst) worst = d;
    }
    return worst;
}

static double mat_diff(const double *a, const double *b, int n)
{
    double worst = 0, scale = 1;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs(a[i] - b[i]) / scale);
    return worst;
}

/* ---- every examples/mech model: the same eigenvalues and the same M, C, K ---- */
TEST(examples_absolute_equals_relative)
{
    static const char *files[] = {
        "examples/mech/slider_pendulum.yaml",   "examples/mech/slider_pendulum_spatial.yaml",
        "examples/mech/spatial_fourbar.yaml",   "examples/mech/spherical_pendulum.yaml",
        "examples/mech/rigid_rotor.yaml",       "examples/mech/rotor_stator.yaml",
        "examples/mech/rotor_stator_rotor_frame.yaml", "examples/mech/fourbar_N1.yaml",
        "examples/mech/fourbar_N5.yaml",        "examples/mech/fourbar_N10.yaml",
        "examples/mech/fourbar_N15.yaml",       "examples/mech/fourbar_N20.yaml",
        "examples/mech/fourbar_N1_damped.yaml", "examples/mech/fourbar_N5_damped.yaml",
        "examples/mech/fourbar_N10_damped.yaml", "examples/mech/fourbar_N15_damped.yaml",
        "examples/mech/fourbar_N20_damped.yaml", "tests/mech/fourbar_general.yaml",
        "examples/mech/spatial_fourbar_relative.yaml", "examples/mech/slider_pendulum_relative.yaml"};
    /* (rotating_pendulum_relative.yaml has a massless yoke: it exists in joint coordinates only) */
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        run a, r;
        int ra = run_file(files[f], "absolute", NULL, NULL, 0, &a);
        int rr = run_file(files[f], "relative", NULL, NULL, 0, &r);
        CHECK_MSG(ra == 0 && rr == 0, "%s", files[f]);
        if (!ra && !rr) {
            double d = eig_diff(a.lin, r.lin);
            printf("  %-48s eigenvalues %.2e", files[f], d);
            CHECK_MSG(d < 1e-10, "%s: eigenvalues differ by %g", files[f], d);
            /* the same user states: the same M, C, K */
            int same = a.lin->z0 == r.lin->z0 && a.lin->z1 == r.lin->z1;
            for (int i = 0; same && i < a.lin->z0; i++) same = !strcmp(a.lin->state_names[i], r.lin->state_names[i]);
            mbl_model_info inf;
            mbl_model_get_info(a.md, &inf);
            if (same && inf.nuser_states > 0) {
                int z0 = a.lin->z0, z1 = a.lin->z1;
                double dm = mat_diff(r.lin->M, a.lin->M, z1 * z1), dc = mat_diff(r.lin->Cd, a.lin->Cd, z1 * z1),
                       dk = mat_diff(r.lin->K, a.lin->K, z1 * z0);
                printf("  M %.1e C %.1e K %.1e", dm, dc, dk);
                CHECK_MSG(dm < 1e-10 && dc < 1e-10 && dk < 1e-10, "%s: M %g C %g K %g", files[f], dm, dc, dk);
            }
            printf("\n");
        }
        run_free(&a);
        run_free(&r);
    }
}

/* ---- source 003 Sec. 3.2.4: Eq. 3.37 and Table 3.7 in the joint coordinates ---- */
TEST(slider_pendulum_eq_3_37)
{
    run r;
    if (run_file("examples/mech/slider_pendulum_relative.yaml", NULL, NULL, NULL, 0, &r)) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(r.lin->z0, 2);
    CHECK(!strcmp(r.lin->state_names[0], "slide_q") && !strcmp(r.lin->state_names[1], "pin_q"));
    const double M[4] = {30, 20, 20, 35}, K[4] = {20, 0, 0, 196.2};
    for (int i = 0; i < 4; i++) {
        CHECK_CLOSE(r.lin->M[i], M[i], 1e-12);
        CHECK_CLOSE(r.lin->K[i], K[i], 1e-12);
    }
    run_free(&r);
    /* Table 3.7 with c = 20 (real parts negative: the erratum) */
    mbl_setting c20 = {"c", 20};
    if (run_file("examples/mech/slider_pendulum_relative.yaml", NULL, NULL, &c20, 1, &r)) {
        CHECK(0);
        return;
    }
    cplx e[8];
    int n = eigs(r.lin, e, 8);
    CHECK_EQ_INT(n, 4);
    const cplx want[4] = {{-0.226284, -3.023550}, {-0.312177, -0.747815}, {-0.312177, 0.747815}, {-0.226284, 3.023550}};
    for (int i = 0; i < 4 && n == 4; i++) {
        CHECK(fabs(e[i].re - want[i].re) < 5e-7);
        CHECK(fabs(e[i].im - want[i].im) < 5e-7);
    }
    CHECK_CLOSE(r.lin->Cd[0], 20, 1e-12);
    run_free(&r);
}

/* ---- source 003 Sec. 4.4: Table 4.1, Q2 (Eq. 4.19), M_I (Eq. 4.18), every method ---- */
TEST(spatial_fourbar_table_4_1)
{
    static const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor", "fd"};
    for (size_t k = 0; k < sizeof methods / sizeof *methods; k++) {
        run r;
        if (run_file("examples/mech/spatial_fourbar_relative.yaml", NULL, methods[k], NULL, 0, &r)) {
            CHECK(0);
            continue;
        }
        cplx e[8];
        int n = eigs(r.lin, e, 8);
        CHECK_EQ_INT(n, 2);
        if (n == 2) CHECK_CLOSE(e[1].im * e[1].im, 7.848, strcmp(methods[k], "fd") ? 1e-10 : 1e-6);
        if (!strcmp(methods[k], "nullspace")) {
            /* Table 4.1 analytical column and Eq. 4.19. nullspace computes in Q2's coordinate z and
             * reports in the user's state u (q = q_S u, docs/methods.md), so Q2 = q_S / |q_S| (its
             * sign is the QR's), z = |q_S| u and M_l = M_u / |q_S|^2, K_l = K_u / |q_S|^2 */
            CHECK_EQ_INT(r.lin->z0, 1);
            CHECK_EQ_INT(r.lin->n, 4);
            double nq = 0;
            for (int i = 0; i < 4; i++) nq += r.lin->q_S[i] * r.lin->q_S[i];
            CHECK_CLOSE(r.lin->M[0] / nq, 8.3333333, 1e-8);
            CHECK_CLOSE(r.lin->K[0] / nq, 65.4, 1e-10);
            const double Q2[4] = {0.57735027, -0.57735027, 0, 0.57735027};
            double s = (r.lin->q_S[0] < 0 ? -1 : 1) / sqrt(nq);
            for (int i = 0; i < 4; i++) CHECK(fabs(s * r.lin->q_S[i] - Q2[i]) < 5e-9);
        }
        run_free(&r);
    }
    /* Eq. 4.18 M_I: the open tree (the ball joint removed), its mass matrix in (q1 .. q4) */
    char *t = test_slurp("examples/mech/spatial_fourbar_relative.yaml");
    CHECK(t != NULL);
    if (!t) return;
    char *b = strstr(t, "  ball:");
    if (b) memcpy(b, "# ba", 4);
    char *l = strstr(t, "  at: equilibrium");
    if (l) memcpy(l, "  at: given      ", 17);
    run r;
    if (!run_text(t, "open tree", NULL, NULL, 0, &r)) {
        CHECK_EQ_INT(r.lin->z1, 4);
        const double MI[16] = {25, 7.5, 0, 0, 7.5, 7.5, 0, 0, 0, 0, 7.5, 0, 0, 0, 0, 7.5};
        for (int i = 0; i < 16 && r.lin->z1 == 4; i++) CHECK_CLOSE(r.lin->M[i], MI[i], 1e-12);
    } else {
        CHECK(0);
    }
    run_free(&r);
    free(t);
}

/* ---- source 003 Sec. 5.3: Table 5.1 and Eq. 5.28 at steady motion ---- */
TEST(rotating_pendulum_table_5_1)
{
    run r;
    if (run_file("tests/mech/rotating_pendulum_relative.yaml", NULL, NULL, NULL, 0, &r)) {
        CHECK(0);
        return;
    }
    const double m = 10, l = 0.5, g = 9.81, pd = 4.75975;
    double th = r.pt->q[1]; /* coordinates: spin_q, swing_q */
    CHECK_CLOSE(cos(th), g / (l * pd * pd), 1e-12);
    cplx e[8];
    int n = eigs(r.lin, e, 8);
    CHECK_EQ_INT(n, 2);
    if (n == 2) CHECK(fabs(e[1].im - 8.58076) < 5e-6);
    /* states (theta, phi): M = diag(m l^2, m l^2 sin^2), C = [0 -c; c 0], c = 2 m l^2 sin cos phid */
    double s = sin(th), c = cos(th);
    CHECK_CLOSE(r.lin->M[0], m * l * l, 1e-12);
    CHECK_CLOSE(r.lin->M[3], m * l * l * s * s, 1e-12);
    CHECK_CLOSE(r.lin->Cd[2], -2 * m * l * l * s * c * pd, 1e-12);
    CHECK_CLOSE(r.lin->Cd[1], 2 * m * l * l * s * c * pd, 1e-12);
    CHECK_CLOSE(r.lin->K[0], m * l * l * pd * pd * (s * s - c * c) + m * g * l * c, 1e-10);
    run_free(&r);
}

/* Regression: the steady solver moved the cyclic spin angle (its column is zero only numerically:
 * sin^2 + cos^2) to 2.8e14 rad, where fd gave +-8.24413i; it is now held at its given value. With
 * the tree's structured term (model/rtree.h) the spin angle is cyclic in structure (no residual
 * depends on it); with `tree_dynamics: symbolic` its column is zero only numerically and the
 * steady solver holds it with a note. */
TEST(rotating_pendulum_steady_holds_spin_fd)
{
    for (int sym = 0; sym < 2; sym++) {
        run r;
        if (run_file("tests/mech/rotating_pendulum_relative.yaml", sym ? "relative\ntree_dynamics: symbolic" : NULL,
                     "fd", NULL, 0, &r)) {
            CHECK(0);
            return;
        }
        CHECK(r.pt->q[0] == 0.0); /* spin_q keeps the file's value */
        if (sym) CHECK(strstr(r.pt->notes, "spin_q held at its given value") != NULL);
        else CHECK(r.md->cyclic && r.md->cyclic[0] == 1);
        cplx e[8];
        int n = eigs(r.lin, e, 8);
        CHECK(n >= 2);
        double best = 0;
        for (int i = 0; i < n; i++) best = fmax(best, fabs(e[i].im));
        printf("  rotating pendulum (%s), fd at steady motion: +-%.6fi\n", sym ? "symbolic" : "recursive", best);
        CHECK(fabs(best - 8.58076) < 5e-5);
        run_free(&r);
    }
}

/* ---- a general four-bar: Eq. 4.12's term kept, every method, both formulations ---- */
TEST(general_fourbar_every_method)
{
    static const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor", "fd"};
    run ref;
    if (run_file("tests/mech/fourbar_general.yaml", "absolute", NULL, NULL, 0, &ref)) {
        CHECK(0);
        return;
    }
    for (size_t k = 0; k < sizeof methods / sizeof *methods; k++) {
        run r;
        if (run_file("tests/mech/fourbar_general.yaml", "relative", methods[k], NULL, 0, &r)) {
            CHECK(0);
            continue;
        }
        double d = eig_diff(r.lin, ref.lin);
        printf("  general four-bar, %-10s relative vs absolute: %.2e\n", methods[k], d);
        CHECK(d < (strcmp(methods[k], "fd") ? 1e-9 : 1e-6));
        run_free(&r);
    }
    run_free(&ref);
}

/* ---- URDF: the 2-link arm against its closed form ---- */
TEST(urdf_two_link_closed_form)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = mbl_model_load_file("examples/urdf/two_link_arm.urdf", NULL, 0, &r.md, &r.st);
    if (!rc) rc = mbl_operating_point(r.md, NULL, &r.pt, &r.st);
    if (!rc) rc = mbl_linearize(r.md, r.pt, NULL, &r.lin, &r.st);
    if (rc) fprintf(stderr, "two_link_arm.urdf: %s\n", r.st.msg);
    CHECK(rc == 0);
    if (rc) return;
    const double m1 = 2, a1 = 0.5, I1 = 2.0 / 12, m2 = 1.5, L1 = 1, a2 = 0.4, I2 = 1.5 * 0.64 / 12, g = 9.81;
    double M[4] = {I1 + m1 * a1 * a1 + I2 + m2 * (L1 + a2) * (L1 + a2), I2 + m2 * a2 * (L1 + a2), 0,
                   I2 + m2 * a2 * a2};
    M[2] = M[1];
    double K[4] = {(m1 * a1 + m2 * (L1 + a2)) * g, m2 * a2 * g, m2 * a2 * g, m2 * a2 * g};
    CHECK_EQ_INT(r.lin->z0, 2);
    CHECK(!strcmp(r.lin->state_names[0], "shoulder_q") && !strcmp(r.lin->state_names[1], "elbow_q"));
    for (int i = 0; i < 4 && r.lin->z0 == 2; i++) {
        CHECK_CLOSE(r.lin->M[i], M[i], 1e-12);
        CHECK_CLOSE(r.lin->K[i], K[i], 1e-12);
    }
    CHECK_CLOSE(r.lin->Cd[0], 0.1, 1e-12);
    CHECK_CLOSE(r.lin->Cd[3], 0.05, 1e-12);
    CHECK_CLOSE(r.lin->Cd[1], 0, 1e-12);
    /* inputs: the joint efforts; F = identity in the joint coordinates */
    CHECK_EQ_INT(r.lin->nu, 2);
    if (r.lin->nu == 2) {
        CHECK_CLOSE(r.lin->F[0], 1, 1e-12);
        CHECK_CLOSE(r.lin->F[3], 1, 1e-12);
        CHECK_CLOSE(r.lin->F[1], 0, 1e-12);
    }
    /* eigenvalues: det(K + s C + s^2 M) = 0 solved independently (companion of the quartic) */
    double detM = M[0] * M[3] - M[1] * M[2];
    double c4 = detM, c3 = M[0] * 0.05 + 0.1 * M[3], c2 = M[0] * K[3] + K[0] * M[3] - 2 * M[1] * K[1] + 0.1 * 0.05,
           c1 = 0.1 * K[3] + K[0] * 0.05, c0 = K[0] * K[3] - K[1] * K[2];
    cplx e[8];
    int n = eigs(r.lin, e, 8);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < n; i++) {
        /* |p(s)| relative to the size of its terms */
        double sr = e[i].re, si = e[i].im;
        double pr = c0, pi = 0, zr = 1, zi = 0;
        const double cc[4] = {c1, c2, c3, c4};
        double mag = fabs(c0);
        for (int k = 0; k < 4; k++) {
            double t = zr * sr - zi * si;
            zi = zr * si + zi * sr;
            zr = t;
            pr += cc[k] * zr;
            pi += cc[k] * zi;
            mag += fabs(cc[k]) * hypot(zr, zi);
        }
        CHECK_MSG(hypot(pr, pi) < 1e-12 * mag, "eigenvalue %g%+gi: residual %g", sr, si, hypot(pr, pi) / mag);
    }
    /* the end effector hangs 1.8 m below the shoulder */
    double y[16];
    CHECK(mbl_model_outputs(r.md, r.pt, y, NULL) == 0);
    CHECK_CLOSE(y[4], -1.8, 1e-12); /* q_shoulder, q_elbow, ee_x, ee_y, ee_z */
    run_free(&r);
}


/* ---- URDF: joints held by their efforts (gravity compensation), equilibrium at a configuration ---- */
TEST(urdf_hold_closed_form)
{
    static const char *text = "model: urdf\nfile: two_link_arm.urdf\nhold: all\nlinearize: {at: equilibrium}\n";
    const double q1 = 0.6, q2 = 0.4;
    const mbl_setting q[2] = {{"shoulder", q1}, {"elbow", q2}};
    run r;
    if (run_text(text, "examples/urdf/hold.yaml", NULL, q, 2, &r)) {
        CHECK(0);
        return;
    }
    const double m1 = 2, a1 = 0.5, I1 = 2.0 / 12, m2 = 1.5, L1 = 1, a2 = 0.4, I2 = 1.5 * 0.64 / 12, g = 9.81;
    CHECK_CLOSE(r.pt->q[0], q1, 1e-12);
    CHECK_CLOSE(r.pt->q[1], q2, 1e-12);
    /* the holding efforts */
    CHECK_CLOSE(r.pt->r[0], (m1 * a1 + m2 * L1) * g * sin(q1) + m2 * a2 * g * sin(q1 + q2), 1e-12);
    CHECK_CLOSE(r.pt->r[1], m2 * a2 * g * sin(q1 + q2), 1e-12);
    /* M(q2) and the gravity stiffness there */
    double c2 = cos(q2), k12 = m2 * a2 * g * cos(q1 + q2);
    const double M[4] = {I1 + m1 * a1 * a1 + I2 + m2 * (L1 * L1 + a2 * a2 + 2 * L1 * a2 * c2), I2 + m2 * (a2 * a2 + L1 * a2 * c2),
                         I2 + m2 * (a2 * a2 + L1 * a2 * c2), I2 + m2 * a2 * a2};
    const double K[4] = {(m1 * a1 + m2 * L1) * g * cos(q1) + k12, k12, k12, k12};
    for (int i = 0; i < 4 && r.lin->z0 == 2; i++) {
        CHECK_CLOSE(r.lin->M[i], M[i], 1e-12);
        CHECK_CLOSE(r.lin->K[i], K[i], 1e-12);
    }
    run_free(&r);
}

/* ---- speed: the N-link chain of bench/chain_urdf.py in joint coordinates ----
 * The tree's velocities, accelerations and d'Alembert loads are written recursively in the bodies'
 * own axes (relative.c, tree_motion), so the Jacobian tape has a constant size per entry: 135
 * instructions at N = 10 and at N = 20 (2,086 and 2,340 when the chain's kinetic energy was
 * differentiated symbolically). The same chain in absolute coordinates gives the same linear
 * model at a configuration. */
static int write_chain(char *path, int n)
{
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) return -1;
    double L = 0.2, m = 1.0, I = m * L * L / 12;
    fprintf(f, "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n  <link name=\"base\"/>\n", n);
    for (int k = 1; k <= n; k++)
        fprintf(f, "  <link name=\"l%d\"><inertial><origin xyz=\"0 0 %g\"/><mass value=\"%g\"/><inertia ixx=\"%.17g\" "
                   "iyy=\"%.17g\" izz=\"0.001\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n",
                k, -L / 2, m, I, I);
    for (int k = 1; k <= n; k++) {
        char parent[16];
        if (k == 1) snprintf(parent, sizeof parent, "base");
        else snprintf(parent, sizeof parent, "l%d", k - 1);
        fprintf(f, "  <joint name=\"j%d\" type=\"continuous\"><parent link=\"%s\"/><child link=\"l%d\"/><origin xyz=\"0 0 %g\"/>"
                   "<axis xyz=\"%s\"/><dynamics damping=\"0.01\"/></joint>\n",
                k, parent, k, k == 1 ? 0.0 : -L, k % 2 ? "0 1 0" : "1 0 0");
    }
    fprintf(f, "</robot>\n");
    return fclose(f) ? -1 : 0;
}

TEST(urdf_chain_tape_and_twin)
{
    char path[128];
    CHECK(test_tmp_template(path, sizeof path, "mblin_chain10_") == 0 && write_chain(path, 10) == 0);
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_file(path, NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        size_t nj = mblx_tape_ninstr(md->tape_jac);
        double per = (double)nj / md->jac.nz;
        printf("  chain N = 10 in joint coordinates: %d Jacobian entries, %zu instructions (%.0f per entry)\n", md->jac.nz,
               nj, per);
        CHECK(md->jac.nz >= 310 && md->jac.nz <= 400); /* dense in a, v, q; the efforts u_k */
        CHECK(per < 300);
    }
    mbl_model_free(md);
    /* the same chain at a configuration, in both formulations */
    mbl_setting q[10];
    char names[10][8];
    for (int k = 0; k < 10; k++) {
        snprintf(names[k], sizeof names[k], "j%d", k + 1);
        q[k].name = names[k];
        q[k].value = 0.1 * (k + 1) * (k % 3 == 1 ? -1 : 1);
    }
    char ta[1024], tr[1024];
    static const char *fmt = "model: urdf\nfile: %s\ncoordinates: %s\nlinearize: {at: given, states: [\"JQ(j1)\", "
                             "\"JQ(j2)\", \"JQ(j3)\", \"JQ(j4)\", \"JQ(j5)\", \"JQ(j6)\", \"JQ(j7)\", \"JQ(j8)\", "
                             "\"JQ(j9)\", \"JQ(j10)\"]}\n";
    snprintf(ta, sizeof ta, fmt, path, "absolute");
    snprintf(tr, sizeof tr, fmt, path, "relative");
    run a, r;
    int ra = run_text(ta, "chain10_abs.yaml", NULL, q, 10, &a);
    int rr = run_text(tr, "chain10_rel.yaml", NULL, q, 10, &r);
    CHECK(ra == 0 && rr == 0);
    if (!ra && !rr) {
        int nx = a.lin->nx;
        double d = eig_diff(a.lin, r.lin);
        double dA = nx == r.lin->nx ? mat_diff(r.lin->A, a.lin->A, nx * nx) : 1;
        printf("  chain N = 10 at a configuration, relative vs absolute: eigenvalues %.2e, A %.2e\n", d, dA);
        CHECK(d < 1e-10);
        CHECK(dA < 1e-10);
    }
    run_free(&a);
    run_free(&r);
    remove(path);
}

/* The compiled chain grows linearly in N: the tree's structured term is evaluated numerically beside
 * the tapes (model/rtree.h), the end-effector pose is differentiated by reverse mode and the drawing
 * is compiled on first use. Regression: with the term's 3 N^2 Jacobian entries as expression nodes
 * (and the pose's Jacobian by forward mode) the graph grew like N^2 in nodes and N^3 in their
 * dependence sets (681,000 nodes, 28.5 million dependence indices at N = 100). */
static void chain_sizes(int n, size_t *nodes, size_t *instr, size_t *yinstr, int *nz)
{
    char path[128];
    *nodes = *instr = *yinstr = 0, *nz = 0;
    if (test_tmp_template(path, sizeof path, "mblin_chainN_") || write_chain(path, n)) {
        CHECK(0);
        return;
    }
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_file(path, NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        *nodes = mblx_node_count(md->g);
        *instr = mblx_tape_ninstr(md->tape_F) + mblx_tape_ninstr(md->tape_jac);
        *yinstr = mblx_tape_ninstr(md->tape_y);
        *nz = md->jac.nz;
    }
    mbl_model_free(md);
    remove(path);
}

TEST(urdf_chain_compiles_linearly)
{
    size_t n1, n2, i1, i2, y1, y2;
    int z1, z2;
    chain_sizes(40, &n1, &i1, &y1, &z1);
    chain_sizes(80, &n2, &i2, &y2, &z2);
    printf("  chain N = 40 / 80: %zu / %zu nodes; tapes: residual and Jacobian %zu / %zu instructions, outputs %zu / "
           "%zu; %d / %d Jacobian entries\n", n1, n2, i1, i2, y1, y2, z1, z2);
    CHECK(n1 > 0 && i1 > 0 && z1 > 0 && y1 > 0);
    CHECK((double)n2 < 2.3 * (double)n1); /* linear: 2; quadratic: 4 */
    CHECK((double)i2 < 2.3 * (double)i1);
    /* the end-effector pose's gradient by reverse mode: the engine's flattening of nested sums (up to
     * 64 terms) makes it grow faster than N at these sizes, not like N^2 as forward mode did */
    CHECK((double)y2 < 3.0 * (double)y1);
    CHECK((double)z2 > 3.5 * (double)z1); /* the Jacobian itself stays dense (numbers) */
}

/* ---- URDF: the 7-joint arm in joint coordinates against its absolute-coordinate twin ---- */
TEST(urdf_arm7_relative_vs_absolute)
{
    const mbl_setting q[7] = {{"j1", 0.3}, {"j2", 0.7}, {"j3", -0.4}, {"j4", 1.1}, {"j5", 0.2}, {"j6", -0.8}, {"j7", 0.5}};
    static const char *fmt = "model: urdf\nfile: arm7.urdf\ncoordinates: %s\nend_effector: tool\n"
                             "linearize: {at: given, states: [\"JQ(j1)\", \"JQ(j2)\", \"JQ(j3)\", \"JQ(j4)\", "
                             "\"JQ(j5)\", \"JQ(j6)\", \"JQ(j7)\"]}\n";
    char ta[512], tr[512];
    snprintf(ta, sizeof ta, fmt, "absolute");
    snprintf(tr, sizeof tr, fmt, "relative");
    run a, r;
    int ra = run_text(ta, "examples/urdf/arm7_abs.yaml", NULL, q, 7, &a);
    int rr = run_text(tr, "examples/urdf/arm7_rel.yaml", NULL, q, 7, &r);
    CHECK(ra == 0 && rr == 0);
    if (!ra && !rr) {
        mbl_model_info ia, ir;
        mbl_model_get_info(a.md, &ia);
        mbl_model_get_info(r.md, &ir);
        CHECK_EQ_INT(ir.ncoord, 7);
        CHECK_EQ_INT(ir.nhol, 0);
        CHECK_EQ_INT(ia.ncoord, 49);
        double d = eig_diff(a.lin, r.lin);
        int nx = a.lin->nx;
        double dA = nx == r.lin->nx ? mat_diff(r.lin->A, a.lin->A, nx * nx) : 1;
        double dB = nx == r.lin->nx ? mat_diff(r.lin->B, a.lin->B, nx * a.lin->nu) : 1;
        double dC = mat_diff(r.lin->C, a.lin->C, a.lin->ny * nx);
        printf("  arm7 at a configuration: eigenvalues %.2e, A %.2e, B %.2e, C %.2e\n", d, dA, dB, dC);
        CHECK(d < 1e-10);
        CHECK(dA < 1e-10);
        CHECK(dB < 1e-10);
        CHECK(dC < 1e-10);
    }
    run_free(&a);
    run_free(&r);
}


/* ---- reaction forces of tree joints: the subtree's Newton-Euler balance equals the multipliers'
 * reaction of the absolute formulation (values at the point, C and D) ---- */
static char *with_outputs(const char *text, const char *outputs)
{
    const char *o = strstr(text, "\noutputs:"), *l = strstr(text, "\nlinearize:");
    size_t n = strlen(text);
    char *r = malloc(n + strlen(outputs) + 64);
    if (!r || !l) {
        free(r);
        return NULL;
    }
    size_t k = 0;
    const char *cut = o && o < l ? o : l;
    memcpy(r, text, (size_t)(cut - text));
    k = (size_t)(cut - text);
    k += (size_t)sprintf(r + k, "\noutputs: {%s}", outputs);
    strcpy(r + k, l);
    return r;
}

TEST(tree_joint_reactions)
{
    static const char *cases[][2] = {
        {"examples/mech/slider_pendulum.yaml", "a: \"FY(slide)\", b: \"FY(pin)\", c: \"FX(pin)\", d: \"TZ(pin)\""},
        {"examples/mech/spatial_fourbar.yaml",
         "a: \"FX(hinge2)\", b: \"FZ(hinge2)\", c: \"TX(hinge2)\", d: \"FZ(cross)\", e: \"TY(cross)\", f: \"FX(hinge4, R4_top)\""},
        {"examples/mech/rotor_stator.yaml", "a: \"FX(spin)\", c: \"TX(spin)\", d: \"TY(spin, rotor_cm)\", e: \"TZ(spin)\""},
        {"tests/mech/fourbar_general.yaml", "a: \"FX(A_pin)\", b: \"FY(B_pin)\", c: \"FY(D_pin)\", d: \"TZ(B_pin)\""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char *t = test_slurp(cases[c][0]), *x = t ? with_outputs(t, cases[c][1]) : NULL;
        char *ta = x ? with_coords(x, "absolute") : NULL, *tr = x ? with_coords(x, "relative") : NULL;
        run a, r;
        memset(&a, 0, sizeof a);
        memset(&r, 0, sizeof r);
        int ra = ta ? run_text(ta, cases[c][0], NULL, NULL, 0, &a) : -1;
        int rr = tr ? run_text(tr, cases[c][0], NULL, NULL, 0, &r) : -1;
        CHECK_MSG(ra == 0 && rr == 0, "%s", cases[c][0]);
        if (!ra && !rr) {
            int ny = a.lin->ny;
            double ya[16], yr[16], scale = 1;
            CHECK(mbl_model_outputs(a.md, a.pt, ya, NULL) == 0 && mbl_model_outputs(r.md, r.pt, yr, NULL) == 0);
            for (int i = 0; i < ny; i++) scale = fmax(scale, fabs(ya[i]));
            double dy = 0;
            for (int i = 0; i < ny; i++) dy = fmax(dy, fabs(ya[i] - yr[i]) / scale);
            double dC = mat_diff(r.lin->C, a.lin->C, ny * a.lin->nx), dD = mat_diff(r.lin->D, a.lin->D, ny * a.lin->nu);
            printf("  reactions %-40s values %.1e C %.1e D %.1e\n", cases[c][0], dy, dC, dD);
            CHECK(dy < 1e-10 && dC < 1e-10 && dD < 1e-10);
        }
        run_free(&a);
        run_free(&r);
        free(t);
        free(x);
        free(ta);
        free(tr);
    }
}

/* ---- errors ---- */
TEST(relative_errors)
{
    static const char *bad[][2] = {
        {"model: mechanism\ncoordinates: joint\nbodies: {b: {mass: 1, inertia: [1, 1, 1]}}\n", "absolute or relative"},
        {"model: mechanism\nground: {markers: {O: {}}}\nbodies: {b: {mass: 1, inertia: [1, 1, 1], markers: {P: {}}}}\n"
         "joints: {h: {type: revolute, i: P, j: O, q0: 0.1}}\n",
         "'q0' needs 'coordinates: relative'"},
        {"model: mechanism\ncoordinates: relative\nground: {markers: {O: {}}}\n"
         "bodies: {b: {mass: 1, inertia: [1, 1, 1], markers: {P: {}}}}\n"
         "joints: {h: {type: revolute, i: P, j: O}}\noutputs: {a: \"JQ(h, 2)\"}\n",
         "has 1 joint coordinate"},
        {"model: mechanism\ncoordinates: relative\nground: {markers: {O: {}}}\n"
         "bodies: {b: {mass: 1, inertia: [1, 1, 1], markers: {P: {}}}}\n"
         "joints: {h: {type: revolute, i: P, j: O}}\ndrivers: {d: {joint: h, motion: \"0\"}}\noutputs: {f: \"FX(h)\"}\n",
         "not available in relative coordinates with drivers"},
        {"<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"revolute\"><parent link=\"a\"/>"
         "<child link=\"b\"/></joint></robot>",
         "link 'b' has no mass"},
        {"<robot name=\"r\"><link name=\"a\"/><joint name=\"j\" type=\"revolute\"><parent link=\"a\"/>"
         "<child link=\"zz\"/></joint></robot>",
         "no link named 'zz'"},
        {"<robot name=\"r\"><link name=\"a\"></robot>", "not well-formed XML"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        mbl_model *md = NULL;
        mbl_status st;
        memset(&st, 0, sizeof st);
        int rc = mbl_model_load_string(bad[k][0], strlen(bad[k][0]), "bad", NULL, 0, &md, &st);
        CHECK_MSG(rc != 0 && strstr(st.msg, bad[k][1]), "case %zu: rc %d, message '%s'", k, rc, st.msg);
        mbl_model_free(md);
    }
}

int main(void)
{
    RUN(examples_absolute_equals_relative);
    RUN(slider_pendulum_eq_3_37);
    RUN(spatial_fourbar_table_4_1);
    RUN(rotating_pendulum_table_5_1);
    RUN(rotating_pendulum_steady_holds_spin_fd);
    RUN(general_fourbar_every_method);
    RUN(urdf_two_link_closed_form);
    RUN(urdf_hold_closed_form);
    RUN(urdf_arm7_relative_vs_absolute);
    RUN(urdf_chain_tape_and_twin);
    RUN(urdf_chain_compiles_linearly);
    RUN(tree_joint_reactions);
    RUN(relative_errors);
    return test_summary("mech relative");
}
