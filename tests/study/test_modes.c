/* One mode numbering across `linearize` (mbl_modal), `sensitivity` (mbl_sensitivity_compute), a
 * sweep's first point and boundary's mode index, for repeated eigenvalues too (docs/linearization.md
 * "Mode numbers"), and the naming of a mode by mbl_mode_pick (docs/study.md "Naming a mode").
 *
 * Independent facts: closed-form eigenvalues and eigenspaces (three masses on a ring, twin
 * pendulums, the rigid rotor's whirls Id w^2 -+ Ip Omega w - kc = 0), the canonical basis the rule
 * gives for a closed-form eigenspace (worked out by hand in each model's comment), and sweeps run
 * here. Meant to pass under every OpenBLAS kernel (OPENBLAS_CORETYPE=Haswell, SkylakeX, Prescott):
 * the two listings come from different solvers (sygvd or QZ on the reduced model; QZ on the
 * companion form of the constrained pencil) whose bases of a repeated eigenspace differ. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "mblin/sweep.h"
#include "eig/eig.h"
#include "mblin/la.h"
#include "test.h"

typedef struct both {
    mbl_model *md;
    mbl_modes *M;
    mbl_sensitivity *S;
    mbl_status st;
} both;

static void both_free(both *b)
{
    mbl_modes_free(b->M);
    mbl_sensitivity_free(b->S);
    mbl_model_free(b->md);
    memset(b, 0, sizeof *b);
}

/* `linearize`'s modes (default method) and `sensitivity`'s of one model */
static int both_compute(const char *path, const mbl_setting *sets, int nsets, both *b)
{
    memset(b, 0, sizeof *b);
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_dae_deriv *dd = NULL;
    int rc = mbl_model_load_file(path, sets, nsets, &b->md, &b->st);
    if (!rc) rc = mbl_operating_point(b->md, NULL, &pt, &b->st);
    if (!rc) rc = mbl_linearize(b->md, pt, NULL, &lin, &b->st);
    if (!rc) rc = mbl_modal(lin, NULL, &b->M, &b->st);
    if (!rc) rc = mbl_dae_deriv_new(b->md, &dd, &b->st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, NULL, 0, NULL, &b->S, &b->st);
    if (rc) fprintf(stderr, "  %s: %s\n", path, b->st.msg);
    mbl_dae_deriv_free(dd);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return rc;
}

/* mode by mode: the same eigenvalue and the same shape (both with their largest component 1) */
static void check_agree(const char *what, const both *b)
{
    const mbl_modes *M = b->M;
    const mbl_sensitivity *S = b->S;
    CHECK_EQ_INT(M->nx, S->nmode);
    CHECK_EQ_INT(M->n, S->n);
    double big = 0;
    for (int i = 0; i < M->nx; i++) big = fmax(big, hypot(M->modes[i].re, M->modes[i].im));
    for (int i = 0; i < M->nx && i < S->nmode && M->n == S->n; i++) {
        const mbl_mode *a = &M->modes[i];
        const mbl_sens_mode *s = &S->modes[i];
        int zero = a->kind == MBL_MODE_ZERO;
        CHECK_EQ_INT(zero, s->kind == MBL_MODE_ZERO);
        double tol = zero ? 1e-6 * big : 1e-9 * hypot(a->re, a->im);
        CHECK_MSG(hypot(a->re - s->re, a->im - s->im) <= tol, "%s mode %d: %.12g%+.12gi vs %.12g%+.12gi", what, i + 1,
                  a->re, a->im, s->re, s->im);
        double d = 0;
        for (int c = 0; c < M->n; c++)
            d = fmax(d, hypot(M->shape_re[c + (size_t)i * M->n] - S->shape_re[c + (size_t)i * S->n],
                              M->shape_im[c + (size_t)i * M->n] - S->shape_im[c + (size_t)i * S->n]));
        CHECK_MSG(d <= (zero ? 1e-5 : 1e-7), "%s mode %d: shapes differ by %.3g", what, i + 1, d);
    }
}

/* mode i's shape (both listings) against a closed form (largest component 1) */
static void check_shape(const both *b, int i, const double *want)
{
    for (int c = 0; c < b->M->n; c++) {
        CHECK_MSG(hypot(b->M->shape_re[c + (size_t)i * b->M->n] - want[c], b->M->shape_im[c + (size_t)i * b->M->n]) <
                      1e-9,
                  "linearize mode %d coordinate %d: %.12g%+.12gi, closed form %g", i + 1, c + 1,
                  b->M->shape_re[c + (size_t)i * b->M->n], b->M->shape_im[c + (size_t)i * b->M->n], want[c]);
        CHECK_MSG(hypot(b->S->shape_re[c + (size_t)i * b->S->n] - want[c], b->S->shape_im[c + (size_t)i * b->S->n]) <
                      1e-7,
                  "sensitivity mode %d coordinate %d: %.12g%+.12gi, closed form %g", i + 1, c + 1,
                  b->S->shape_re[c + (size_t)i * b->S->n], b->S->shape_im[c + (size_t)i * b->S->n], want[c]);
    }
}

static void check_eig(const both *b, int i, double re, double im)
{
    const mbl_mode *a = &b->M->modes[i];
    CHECK_MSG(hypot(a->re - re, a->im - im) <= 1e-9 * hypot(re, im), "mode %d: %.12g%+.12gi, closed form %.12g%+.12gi",
              i + 1, a->re, a->im, re, im);
}

/* a sweep's first point: branch b there is mode b of `linearize` */
static void check_sweep_first(const char *path, const mbl_setting *sets, int nsets, const char *param, double v0,
                              const both *b)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){param, v0, v0 * 1.25 + 1, 3};
    so.sets = sets, so.nsets = nsets;
    mbl_sweep *sw = NULL;
    mbl_status st;
    int rc = mbl_sweep_run(b->md, &so, &sw, &st);
    if (rc) fprintf(stderr, "  sweep of %s: %s\n", path, st.msg);
    CHECK(rc == 0);
    if (rc) return;
    CHECK_EQ_INT(sw->nmodes, b->M->nx);
    for (int j = 0; j < sw->nmodes && j < b->M->nx; j++) {
        const mbl_mode *a = &b->M->modes[j];
        double tol = a->kind == MBL_MODE_ZERO ? 1e-6 : 1e-12 * hypot(a->re, a->im);
        CHECK_MSG(hypot(sw->re[j] - a->re, sw->im[j] - a->im) <= tol, "%s: branch %d at the first point %.12g%+.12gi, "
                  "mode %d of linearize %.12g%+.12gi", path, j + 1, sw->re[j], sw->im[j], j + 1, a->re, a->im);
    }
    mbl_sweep_free(sw);
}

/* ---- exactly repeated eigenvalues ------------------------------------------------------------- */

TEST(ring_of_three)
{
    const char *path = "tests/study/modes_ring3.yaml";
    both b;
    if (both_compute(path, NULL, 0, &b)) {
        CHECK(0);
        both_free(&b);
        return;
    }
    check_agree("ring", &b);
    double w1 = 10.0, w2 = sqrt(100.0 + 150.0); /* k0/m, (k0 + 3k)/m */
    const double s1[3] = {1, 1, 1}, s2[3] = {1, -0.5, -0.5}, s3[3] = {0, 1, -1};
    if (b.M->nx == 6 && b.S->nmode == 6) {
        check_eig(&b, 0, 0, w1), check_eig(&b, 1, 0, -w1);
        check_eig(&b, 2, 0, w2), check_eig(&b, 3, 0, -w2), check_eig(&b, 4, 0, w2), check_eig(&b, 5, 0, -w2);
        check_shape(&b, 0, s1), check_shape(&b, 1, s1);
        check_shape(&b, 2, s2), check_shape(&b, 3, s2), check_shape(&b, 4, s3), check_shape(&b, 5, s3);
        for (int i = 2; i < 6; i++) CHECK(!b.S->modes[i].defined);
        CHECK(b.S->modes[0].defined);
    }
    check_sweep_first(path, NULL, 0, "k0", 100, &b);
    both_free(&b);
}

TEST(twin_pendulums)
{
    const char *path = "tests/study/modes_twin_pendulums.yaml";
    double g = 9.81, l = 0.5, m = 2, w0 = sqrt(g / l);
    const double e1[2] = {1, 0}, e2[2] = {0, 1}, inph[2] = {1, 1}, anti[2] = {1, -1};
    both b;
    /* uncoupled: one repeated eigenvalue, the canonical basis [1, 0], [0, 1] */
    if (!both_compute(path, NULL, 0, &b) && b.M->nx == 4) {
        check_agree("twin pendulums", &b);
        for (int i = 0; i < 4; i++) check_eig(&b, i, 0, i % 2 ? -w0 : w0);
        check_shape(&b, 0, e1), check_shape(&b, 1, e1), check_shape(&b, 2, e2), check_shape(&b, 3, e2);
        check_sweep_first(path, NULL, 0, "g", g, &b);
    } else {
        CHECK(0);
    }
    both_free(&b);
    /* near-repeated (split 4e-6 relative): two simple modes, in phase first; damped */
    mbl_setting sets[2] = {{"kc", 1e-4}, {"c", 0.01}};
    if (!both_compute(path, sets, 2, &b) && b.M->nx == 4) {
        check_agree("coupled twin pendulums", &b);
        double sig = -0.01 / (2 * m * l * l), wa2 = w0 * w0 + 2 * 1e-4 / (m * l * l);
        check_eig(&b, 0, sig, sqrt(w0 * w0 - sig * sig)), check_eig(&b, 1, sig, -sqrt(w0 * w0 - sig * sig));
        check_eig(&b, 2, sig, sqrt(wa2 - sig * sig)), check_eig(&b, 3, sig, -sqrt(wa2 - sig * sig));
        check_shape(&b, 0, inph), check_shape(&b, 2, anti);
        for (int i = 0; i < 4; i++) CHECK(b.S->modes[i].defined);
        check_sweep_first(path, sets, 2, "g", g, &b);
    } else {
        CHECK(0);
    }
    both_free(&b);
}

TEST(isotropic_rotor)
{
    /* the rigid rotor: bounce x, y and axial z all at sqrt(2k/m) (a triple pair, canonical basis
     * x, y, z), a cyclic spin angle (a double zero); at Omega = 0 also the conical whirl is a
     * double pair at sqrt(kc/Id), its canonical basis the tilts e1, e2 */
    const char *path = "examples/mech/rigid_rotor.yaml";
    double m = 20, Id = 1.5, Ip = 0.6, a = 0.25, k = 1e5, kc = 2 * k * a * a;
    for (int pass = 0; pass < 2; pass++) {
        double Om = pass ? 0.0 : 50.0;
        mbl_setting sets[1] = {{"Omega", Om}};
        both b;
        if (both_compute(path, sets, 1, &b) || b.M->nx != 12) {
            CHECK(0);
            both_free(&b);
            continue;
        }
        check_agree(pass ? "rotor at rest" : "spinning rotor", &b);
        double wb = (-Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc)) / (2 * Id);
        double wf = (Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc)) / (2 * Id);
        double wt = sqrt(2 * k / m);
        /* 1, 2 zero; 3, 4 backward; then (at rest) 5, 6 forward, 7..12 the triple; (spinning) 5..10
         * the triple, 11, 12 forward */
        check_eig(&b, 2, 0, wb);
        int t0 = pass ? 6 : 4, f0 = pass ? 4 : 10;
        check_eig(&b, f0, 0, wf);
        for (int j = 0; j < 3; j++) {
            double want[7] = {0};
            want[j] = 1;
            check_eig(&b, t0 + 2 * j, 0, wt), check_eig(&b, t0 + 2 * j + 1, 0, -wt);
            check_shape(&b, t0 + 2 * j, want), check_shape(&b, t0 + 2 * j + 1, want);
        }
        if (pass) {
            double e1[7] = {0, 0, 0, 0, 1, 0, 0}, e2[7] = {0, 0, 0, 0, 0, 1, 0};
            check_shape(&b, 2, e1), check_shape(&b, 4, e2);
        }
        check_sweep_first(path, sets, 1, "k", k, &b);
        both_free(&b);
    }
}

TEST(symmetric_mount)
{
    /* a quarter-turn symmetric structure in space (Euler parameters and their constraint): two
     * double pairs (sway x + roll about y, sway y + roll about x) and the simple bounce and yaw;
     * canonical bases: pivots on x then y (lower pair), e1 then e2 (upper pair) */
    const char *path = "tests/study/modes_symmetric_mount.yaml";
    both b;
    if (both_compute(path, NULL, 0, &b) || b.M->nx != 12) {
        CHECK(0);
        both_free(&b);
        return;
    }
    check_agree("symmetric mount", &b);
    double m = 10, J = 0.6, a = 0.2, k = 2e4, kz = 5e4;
    check_eig(&b, 6, 0, sqrt(4 * kz / m));             /* bounce */
    check_eig(&b, 4, 0, sqrt(4 * k * 2 * a * a / J));  /* yaw: 4 k (sqrt 2 a)^2 / J */
    for (int i = 0; i < 12; i += 8) /* the pairs: equal eigenvalues, x/y and e2/e1 swapped */
        CHECK_MSG(fabs(b.M->modes[i].im - b.M->modes[i + 2].im) < 1e-9 * b.M->modes[i].im, "%g vs %g",
                  b.M->modes[i].im, b.M->modes[i + 2].im);
    const int x = 0, y = 1, e1 = 4, e2 = 5;
    int n = b.M->n;
    CHECK(b.M->shape_re[x + (size_t)0 * n] == 1.0 && b.M->shape_re[y + (size_t)2 * n] == 1.0);
    CHECK(b.M->shape_re[e1 + (size_t)8 * n] == 1.0 && b.M->shape_re[e2 + (size_t)10 * n] == 1.0);
    CHECK_CLOSE(b.M->shape_re[e2 + (size_t)0 * n], -b.M->shape_re[e1 + (size_t)2 * n], 1e-9); /* the quarter turn */
    check_sweep_first(path, NULL, 0, "kz", 5e4, &b);
    both_free(&b);
}

/* ---- boundary's mode index -------------------------------------------------------------------- */

TEST(boundary_mode_index)
{
    /* coupled twin pendulums, damping c: both pairs cross at c = 0, at their undamped
     * frequencies; mode 1 (in phase) and mode 3 (antiphase) as linearize lists them */
    const char *path = "tests/study/modes_twin_pendulums.yaml";
    double m = 2, l = 0.5, g = 9.81, kc = 0.5;
    mbl_setting sets[2] = {{"kc", kc}, {"c", 0.1}};
    double want[2] = {sqrt(g / l), sqrt(g / l + 2 * kc / (m * l * l))};
    both b;
    if (both_compute(path, sets, 2, &b)) {
        CHECK(0);
        both_free(&b);
        return;
    }
    for (int j = 0; j < 2; j++) {
        mbl_boundary_options bo;
        mbl_boundary_options_default(&bo);
        bo.mode.index = 1 + 2 * j;
        bo.from = -0.1, bo.to = 0.3; /* the boundary c = 0 lies below the default range c/3 .. 3c */
        mbl_boundary_result r;
        mbl_status st;
        int rc = mbl_boundary(b.md, sets, 2, "c", 0.1, &bo, &r, &st);
        if (rc) fprintf(stderr, "  boundary: %s\n", st.msg);
        CHECK(rc == 0);
        if (rc) continue;
        CHECK_EQ_INT(r.mode_near, 1 + 2 * j);
        CHECK_CLOSE(r.f_near, b.M->modes[2 * j].re, 1e-10); /* linearize's mode there */
        CHECK(fabs(r.value) < 1e-9);
        CHECK_REL(fabs(r.im), want[j], 1e-9);
    }
    both_free(&b);
}

/* ---- naming a mode ----------------------------------------------------------------------------- */

static int pick(const both *b, const char *shape, int branch, const char *sweep, const char *param, double value,
                int *mode, mbl_status *st)
{
    mbl_mode_spec spec = {0, shape, branch, sweep};
    return mbl_mode_pick(b->md, b->S, &spec, param, value, mode, st);
}

TEST(pick_by_shape)
{
    /* the rotor: k = 9e4 puts the bounce and axial modes at sqrt(2k/m) = 94.87 rad/s; at
     * Omega = 50/3 the forward conical whirl is at 90 (Id w^2 - Ip Omega w - kc = 0): proximity to
     * 90 names it too, but a shape names each mode wherever it is */
    double m = 20, Id = 1.5, Ip = 0.6, a = 0.25, k = 9e4, kc = 2 * k * a * a, Om = 50.0 / 3.0;
    mbl_setting sets[2] = {{"k", k}, {"Omega", Om}};
    both b;
    if (both_compute("examples/mech/rigid_rotor.yaml", sets, 2, &b)) {
        CHECK(0);
        both_free(&b);
        return;
    }
    double wf = (Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc)) / (2 * Id);
    double wb = (-Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc)) / (2 * Id);
    CHECK_REL(wf, 90.0, 1e-12);
    mbl_status st;
    int md = -1;
    /* forward: the tilt turns from about x (e1) towards about y (e2) as the spin, e2 = -i e1 */
    CHECK(pick(&b, "rotor_e1=1, rotor_e2=-i", 0, NULL, NULL, 0, &md, &st) == 0);
    if (md >= 0) CHECK_REL(b.S->modes[md].im, wf, 1e-9);
    CHECK(pick(&b, "rotor_e1=1,rotor_e2=+1i", 0, NULL, NULL, 0, &md, &st) == 0);
    if (md >= 0) CHECK_REL(b.S->modes[md].im, wb, 1e-9);
    CHECK(pick(&b, "rotor_e1=-2.5i,rotor_e2=-2.5", 0, NULL, NULL, 0, &md, &st) == 0); /* -2.5i (1, -i) */
    if (md >= 0) CHECK_REL(b.S->modes[md].im, wf, 1e-9);
    CHECK(pick(&b, "rotor_z", 0, NULL, NULL, 0, &md, &st) == 0); /* axial */
    if (md >= 0) {
        CHECK_REL(b.S->modes[md].im, sqrt(2 * k / m), 1e-9);
        CHECK(b.S->shape_re[2 + (size_t)md * b.S->n] == 1.0);
    }
    /* refusals: one line each */
    CHECK(pick(&b, "rotor_q=1", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(strstr(st.msg, "rotor_q") && strstr(st.msg, "rotor_x") && !strchr(st.msg, '\n'));
    CHECK(pick(&b, "rotor_x=1+", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(pick(&b, "rotor_x=abc", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(pick(&b, "rotor_x=1,rotor_x=2", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(pick(&b, "rotor_x=0", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(pick(&b, "rotor_x=nan", 0, NULL, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(pick(&b, "rotor_e0", 0, NULL, NULL, 0, &md, &st) == MBL_EMODEL); /* no mode moves e0 */
    CHECK(pick(&b, "rotor_x=1,rotor_y=1", 0, NULL, NULL, 0, &md, &st) == MBL_EMODEL); /* x and y bounce equally */
    CHECK(strstr(st.msg, "modes 7 and 9") != NULL);
    mbl_mode_spec two = {3, "rotor_z", 0, NULL}, none = {0, NULL, 0, NULL}, idx = {12, NULL, 0, NULL};
    CHECK(mbl_mode_pick(b.md, b.S, &two, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(mbl_mode_pick(b.md, b.S, &none, NULL, 0, &md, &st) == MBL_EARG);
    CHECK(mbl_mode_pick(b.md, b.S, &idx, NULL, 0, &md, &st) == 0 && md == 11);
    idx.index = 13;
    CHECK(mbl_mode_pick(b.md, b.S, &idx, NULL, 0, &md, &st) == MBL_EARG);
    both_free(&b);
    /* the ring: the mode [0, 1, -1] of the double eigenvalue (its canonical second vector) */
    if (both_compute("tests/study/modes_ring3.yaml", NULL, 0, &b)) {
        CHECK(0);
    } else {
        CHECK(pick(&b, "x2=1,x3=-1", 0, NULL, NULL, 0, &md, &st) == 0 && md == 4);
        CHECK(pick(&b, "x1, x2, x3", 0, NULL, NULL, 0, &md, &st) == 0 && md == 0);
    }
    both_free(&b);
}

TEST(pick_by_branch)
{
    /* the rotor at Omega = 20 swept in k from 1.2e4 to 3.6e4: the forward whirl crosses the
     * bounce/axial triple sqrt(2k/m) (at k = 23040, where w = 2.4 Omega); the branch that starts as
     * the forward whirl names it on the other side of the crossing */
    const char *path = "examples/mech/rigid_rotor.yaml", *json = "test_modes_sweep.json";
    double m = 20, Id = 1.5, Ip = 0.6, a = 0.25, Om = 20.0;
    mbl_setting base[1] = {{"Omega", Om}};
    mbl_model *md0 = NULL;
    mbl_status st;
    CHECK(mbl_model_load_file(path, base, 1, &md0, &st) == 0);
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"k", 1.2e4, 3.6e4, 13};
    so.sets = base, so.nsets = 1;
    mbl_sweep *sw = NULL;
    int rc = mbl_sweep_run(md0, &so, &sw, &st);
    mbl_model_free(md0);
    CHECK(rc == 0);
    if (rc) return;
    /* the forward whirl's branch: at the first point the mode of the closed form */
    double kc0 = 2 * 1.2e4 * a * a, wf0 = (Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc0)) / (2 * Id);
    int bf = -1;
    for (int j = 0; j < sw->nmodes; j++)
        if (fabs(sw->im[j] - wf0) < 1e-8 * wf0) bf = j;
    CHECK(bf >= 0);
    FILE *f = fopen(json, "w");
    CHECK(f != NULL);
    if (f) mbl_sweep_write_json(f, sw, NULL, 0), fclose(f);
    mbl_sweep_free(sw);
    if (bf < 0 || !f) return;
    double k = 3.3e4, kc = 2 * k * a * a; /* between two points */
    mbl_setting sets[2] = {{"Omega", Om}, {"k", k}};
    both b;
    if (both_compute(path, sets, 2, &b)) {
        CHECK(0);
        both_free(&b);
        remove(json);
        return;
    }
    double wf = (Ip * Om + sqrt(Ip * Ip * Om * Om + 4 * Id * kc)) / (2 * Id);
    CHECK(wf < sqrt(2 * k / m) && wf0 > sqrt(2 * 1.2e4 / m)); /* the branch crossed the triple */
    int mode = -1;
    CHECK(pick(&b, NULL, bf + 1, json, "k", k, &mode, &st) == 0);
    if (mode >= 0) CHECK_REL(b.S->modes[mode].im, wf, 1e-9);
    /* refusals naming the file */
    CHECK(pick(&b, NULL, bf + 1, json, "k", 4e4, &mode, &st) == MBL_EARG);
    CHECK(strstr(st.msg, json) && strstr(st.msg, "12000") && strstr(st.msg, "36000"));
    CHECK(pick(&b, NULL, bf + 1, json, "m", k, &mode, &st) == MBL_EARG);
    CHECK(pick(&b, NULL, 99, json, "k", k, &mode, &st) == MBL_EARG);
    CHECK(pick(&b, NULL, bf + 1, "no_such_sweep.json", "k", k, &mode, &st) == MBL_EIO);
    CHECK(strstr(st.msg, "no_such_sweep.json") != NULL);
    CHECK(pick(&b, NULL, bf + 1, path, "k", k, &mode, &st) == MBL_EARG); /* a model, not a sweep */
    CHECK(pick(&b, NULL, bf + 1, NULL, "k", k, &mode, &st) == MBL_EARG);
    both_free(&b);
    /* a sweep of other settings: no mode near the branch */
    mbl_setting other[2] = {{"Omega", 200}, {"k", k}};
    if (!both_compute(path, other, 2, &b)) CHECK(pick(&b, NULL, bf + 1, json, "k", k, &mode, &st) == MBL_EMODEL);
    both_free(&b);
    remove(json);
}

/* eig_solve's 1 x 1 block (sygvd_one in eig.c, the sweep's one-degree-of-freedom points) against
 * LAPACK's dsygvd (mbla_sygvd) on the same scaled block, bit for bit: k x = w m x with m of every
 * exponent (scaled by eig.c's power of 2, 1 / sqrt(m) rounded) and k of either sign. */
TEST(sygvd_one_block)
{
    unsigned long long s = 88172645463325252ULL;
    int bad = 0, n = 0;
    for (int t = 0; t < 20000; t++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double f = (double)(s >> 11) / 9007199254740992.0, g = (double)(s & 0xfffff) / 1048576.0;
        double m = ldexp(0.5 + f, (int)(s % 1000) - 500), k = ldexp(g - 0.5, (int)((s >> 20) % 1000) - 500);
        if (t % 101 == 0) k = 0.0;
        double A[4] = {0, 0, 1, 0}, C = 0;
        mbl_eig_problem P = {1, 1, A, &m, &C, &k};
        mbl_eig_result *r = NULL;
        mbl_status st;
        CHECK(eig_solve(&P, NULL, 1, &r, &st) == 0);
        if (!r) continue;
        int e;
        frexp(m, &e);
        double d = ldexp(1.0, -(e / 2)), mb = m * (d * d), kb = k * (d * d), w = 0, z = 0;
        CHECK(mbla_sygvd(1, &kb, 1, &mb, 1, &w, &z, 1, &st) == 0);
        double x = d * z, re = w < 0 ? sqrt(-w) : 0.0, im = w > 0 ? sqrt(w) : 0.0;
        if (!strcmp(r->solver, "sygvd") && !r->zero[0]) {
            n++;
            if (memcmp(&r->re[0], &re, sizeof re) || memcmp(&r->im[0], &im, sizeof im) || memcmp(&r->V[0], &x, sizeof x))
                bad++;
        }
        eig_result_free(r);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(n > 19000);
}

/* A fleet of identical uncoupled parts (issue 65, item 10): 100 oscillators x_i (m = 1, k = 4,
 * s = +-2i) and 100 two-mass parts (y_i, z_i) with M = I, K = [8 -2; -2 5] (eigenvalues 4 and 9,
 * vectors [1 2] and [2 -1]), the coordinates interleaved x_0 y_0 z_0 x_1 ... Both listings: the
 * 200-fold +-2i first, then the 100-fold +-3i. The canonical basis by hand (order.c's rule): at
 * s = 2i the projector's diagonal is 1 at every x_i and 1/5, 4/5 at (y_i, z_i), so the pivots are
 * the x_i in coordinate order (shape e_x), then the z_i (shape P e_z / P_zz: 1/2 at y_i, 1 at z_i);
 * at s = 3i the y_i (diagonal 4/5; shape 1 at y_i, -1/2 at z_i). Each conjugate pair together. */
TEST(identical_fleet)
{
    char path[4096];
    int fd = test_tmp_template(path, sizeof path, "mblin_fleet_") ? -1 : mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f) return;
    enum { NP = 100 };
    fprintf(f, "model: dae\nname: fleet\ncoordinates: {");
    for (int i = 0; i < NP; i++) fprintf(f, "%sx%d: 0, y%d: 0, z%d: 0", i ? ", " : "", i, i, i);
    fprintf(f, "}\nkinetic_energy: \"0");
    for (int i = 0; i < NP; i++) fprintf(f, " + 0.5*der(x%d)^2 + 0.5*der(y%d)^2 + 0.5*der(z%d)^2", i, i, i);
    fprintf(f, "\"\npotential_energy: \"0");
    for (int i = 0; i < NP; i++) fprintf(f, " + 2*x%d^2 + 4*y%d^2 - 2*y%d*z%d + 2.5*z%d^2", i, i, i, i, i);
    fprintf(f, "\"\nlinearize: {at: given}\n");
    fclose(f);
    both b;
    int rc = both_compute(path, NULL, 0, &b);
    remove(path);
    CHECK(rc == 0);
    int n = 3 * NP;
    if (!rc && b.M->nx == 2 * n) {
        check_agree("fleet", &b);
        double *want = calloc((size_t)n, sizeof *want);
        for (int k = 0; k < 2 * NP + NP && want; k++) { /* the k-th conjugate pair */
            int i = k % NP;
            memset(want, 0, (size_t)n * sizeof *want);
            double w = k < 2 * NP ? 2 : 3;
            if (k < NP) want[3 * i] = 1;
            else if (k < 2 * NP) want[3 * i + 1] = 0.5, want[3 * i + 2] = 1;
            else want[3 * i + 1] = 1, want[3 * i + 2] = -0.5;
            for (int t = 0; t < 2; t++) {
                check_eig(&b, 2 * k + t, 0, t ? -w : w);
                check_shape(&b, 2 * k + t, want);
            }
        }
        free(want);
    } else {
        CHECK(0);
    }
    both_free(&b);
}

int main(void)
{
    RUN(identical_fleet);
    RUN(ring_of_three);
    RUN(sygvd_one_block);
    RUN(twin_pendulums);
    RUN(isotropic_rotor);
    RUN(symmetric_mount);
    RUN(boundary_mode_index);
    RUN(pick_by_shape);
    RUN(pick_by_branch);
    return test_summary("modes");
}
