/* `model: mechanism`: every example against its source's printed numbers, against its
 * equation-level twin (every eigenvalue to 1e-9), against closed forms; invariance of the
 * eigenvalues under the orientation parametrization and the choice of joint markers; and one
 * test per class of bad mechanism (clear one-line message naming the element). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "mblin/report.h"
#include "test.h"

#define TWIN_TOL 1e-9

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
    mbl_status st;
} run;

static int run_text(const char *text, const char *name, const mbl_setting *sets, int nsets, run *r)
{
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_string(text, strlen(text), name, sets, nsets, &r->md, &r->st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &r->st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, &r->st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, &r->st);
    return rc;
}

static int run_model(const char *path, const mbl_setting *sets, int nsets, run *r)
{
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_file(path, sets, nsets, &r->md, &r->st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &r->st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, &r->st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, &r->st);
    if (rc) fprintf(stderr, "%s: %s\n", path, r->st.msg);
    return rc;
}

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
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

/* the non-zero eigenvalues, sorted */
static int nonzero(const mbl_modes *m, cplx *out, int cap)
{
    int n = 0;
    for (int i = 0; i < m->nx && n < cap; i++)
        if (m->modes[i].kind != MBL_MODE_ZERO) out[n++] = (cplx){m->modes[i].re, m->modes[i].im};
    qsort(out, (size_t)n, sizeof *out, cmp_cplx);
    return n;
}

/* largest relative difference of the non-zero eigenvalues of a and b (1 if counts differ) */
static double eig_diff(const mbl_modes *a, const mbl_modes *b)
{
    cplx ea[256], eb[256];
    int na = nonzero(a, ea, 256), nb = nonzero(b, eb, 256);
    if (na != nb) {
        fprintf(stderr, "  eigenvalue counts differ: %d vs %d\n", na, nb);
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < na; i++) {
        double d = hypot(ea[i].re - eb[i].re, ea[i].im - eb[i].im) / hypot(eb[i].re, eb[i].im);
        if (d > worst) worst = d;
    }
    return worst;
}

static double twin(const char *mech, const char *dae, const mbl_setting *sets, int nsets)
{
    run a, b;
    double d = 1;
    if (run_model(mech, sets, nsets, &a) == 0 && run_model(dae, sets, nsets, &b) == 0) d = eig_diff(a.modes, b.modes);
    printf("  %s vs %s: max relative eigenvalue difference %.3g\n", mech, dae, d);
    run_free(&a);
    run_free(&b);
    return d;
}

/* the eigenvalue with positive imaginary part of pair k (in frequency order) */
static const mbl_mode *osc(const mbl_modes *m, int k)
{
    int seen = 0;
    for (int i = 0; i < m->nx; i++) {
        if (m->modes[i].kind == MBL_MODE_ZERO || m->modes[i].im <= 0) continue;
        if (seen++ == k) return &m->modes[i];
    }
    return NULL;
}

static double round_to(double x, int digits)
{
    double s = pow(10.0, digits);
    return round(x * s) / s;
}

/* ---- source 003 slider-pendulum (Tables 3.5, 3.7) ---- */
TEST(slider_pendulum)
{
    CHECK(twin("examples/mech/slider_pendulum.yaml", "examples/slider_pendulum.yaml", NULL, 0) < TWIN_TOL);
    mbl_setting c20 = {"c", 20};
    CHECK(twin("examples/mech/slider_pendulum.yaml", "examples/slider_pendulum.yaml", &c20, 1) < TWIN_TOL);
    /* the same from spatial bodies (Euler parameters): orientation parametrization does not matter */
    CHECK(twin("examples/mech/slider_pendulum_spatial.yaml", "examples/slider_pendulum.yaml", NULL, 0) < TWIN_TOL);
    CHECK(twin("examples/mech/slider_pendulum_spatial.yaml", "examples/slider_pendulum.yaml", &c20, 1) < TWIN_TOL);
    run r;
    CHECK(run_model("examples/mech/slider_pendulum.yaml", NULL, 0, &r) == 0);
    if (r.lin) {
        /* Table 3.5 in the states (slider position, pendulum angle): M = [30 20; 20 35],
           K = diag(20, 196.2) */
        CHECK_CLOSE(r.lin->M[0], 30.0, 1e-12);
        CHECK_CLOSE(r.lin->M[1], 20.0, 1e-12);
        CHECK_CLOSE(r.lin->M[2], 20.0, 1e-12);
        CHECK_CLOSE(r.lin->M[3], 35.0, 1e-12);
        CHECK_CLOSE(r.lin->K[0], 20.0, 1e-12);
        CHECK_CLOSE(r.lin->K[3], 196.2, 1e-12);
        CHECK(fabs(r.lin->K[1]) < 1e-10 && fabs(r.lin->K[2]) < 1e-10);
        /* the input F on the slider and the tip output y + l sin(theta) */
        CHECK_EQ_INT(r.lin->nu, 1);
        CHECK_EQ_INT(r.lin->ny, 1);
        CHECK_CLOSE(r.lin->C[0], 1.0, 1e-12);
        CHECK_CLOSE(r.lin->C[1], 2.0, 1e-12);
    }
    if (r.modes) {
        const mbl_mode *m1 = osc(r.modes, 0), *m2 = osc(r.modes, 1);
        CHECK(m1 && m2);
        if (m1 && m2) {
            CHECK(round_to(m1->im * m1->im, 8) == 0.63569205);
            CHECK(round_to(m2->im * m2->im, 8) == 9.49661564);
            CHECK(round_to(m1->im, 6) == 0.797303);
            CHECK(round_to(m2->im, 6) == 3.081658);
        }
    }
    run_free(&r);
    CHECK(run_model("examples/mech/slider_pendulum.yaml", &c20, 1, &r) == 0);
    if (r.modes) {
        const mbl_mode *m1 = osc(r.modes, 0), *m2 = osc(r.modes, 1);
        CHECK(m1 && m2);
        if (m1 && m2) {
            CHECK(round_to(m1->re, 6) == -0.312177 && round_to(m1->im, 6) == 0.747815);
            CHECK(round_to(m2->re, 6) == -0.226284 && round_to(m2->im, 6) == 3.023550);
        }
    }
    run_free(&r);
}

/* ---- source 001 N-loop four-bar from bodies and revolute joints ---- */
/* the planar four-bar with every revolute defined from the other marker: same eigenvalue */
static char *swap_ij(const char *text)
{
    size_t n = strlen(text);
    char *o = malloc(n + 1);
    memcpy(o, text, n + 1);
    for (char *p = strstr(o, "{type: revolute, i: "); p; p = strstr(p + 1, "{type: revolute, i: ")) {
        char *a = p + strlen("{type: revolute, i: ");
        char *ae = strchr(a, ',');
        char *b = strstr(ae, "j: ");
        if (!ae || !b) break;
        b += 3;
        char *be = strchr(b, '}');
        if (!be) break;
        char ia[64], jb[64];
        snprintf(ia, sizeof ia, "%.*s", (int)(ae - a), a);
        snprintf(jb, sizeof jb, "%.*s", (int)(be - b), b);
        /* rewrite "i: A, j: B}" as "i: B, j: A}" in place (same length) */
        char buf[160];
        int len = snprintf(buf, sizeof buf, "%s, j: %s", jb, ia);
        memcpy(a, buf, (size_t)len);
    }
    return o;
}

TEST(fourbar_twins)
{
    static const int Ns[] = {1, 5, 10, 15, 20};
    for (size_t i = 0; i < sizeof Ns / sizeof *Ns; i++)
        for (int damped = 0; damped < 2; damped++) {
            char a[128], b[128];
            snprintf(a, sizeof a, "examples/mech/fourbar_N%d%s.yaml", Ns[i], damped ? "_damped" : "");
            snprintf(b, sizeof b, "examples/fourbar_N%d%s.yaml", Ns[i], damped ? "_damped" : "");
            CHECK(twin(a, b, NULL, 0) < TWIN_TOL);
        }
    char *base = test_slurp("examples/mech/fourbar_N5.yaml");
    if (base) {
        char *sw = swap_ij(base);
        run r0, r1;
        int ok = run_text(base, "fourbar_N5.yaml", NULL, 0, &r0) == 0 && run_text(sw, "swapped.yaml", NULL, 0, &r1) == 0;
        CHECK(ok && strcmp(sw, base) != 0);
        if (ok) {
            double d = eig_diff(r0.modes, r1.modes);
            printf("  N = 5 four-bar, every revolute from the other marker: eigenvalue difference %.3g\n", d);
            CHECK(d < TWIN_TOL);
            run_free(&r1);
        }
        run_free(&r0);
        free(sw);
        free(base);
    }
}


/* text with the first occurrence of `from` replaced by `to` (malloc'd), NULL if absent */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) return NULL;
    size_t a = (size_t)(at - text), lf = strlen(from), lt = strlen(to), n = strlen(text);
    char *o = malloc(n - lf + lt + 1);
    memcpy(o, text, a);
    memcpy(o + a, to, lt);
    memcpy(o + a + lt, at + lf, n - a - lf + 1);
    return o;
}

/* ---- source 003 Sec. 4.4 spatial four-bar: omega^2 = 196.2 / 25 = 7.848 ---- */
TEST(spatial_fourbar)
{
    run r;
    CHECK(run_model("examples/mech/spatial_fourbar.yaml", NULL, 0, &r) == 0);
    if (r.modes) {
        const mbl_mode *m = osc(r.modes, 0);
        CHECK(m != NULL);
        if (m) {
            printf("  spatial four-bar: omega^2 = %.12f (closed form 7.848)\n", m->im * m->im);
            CHECK_CLOSE(m->im * m->im, 196.2 / 25.0, 1e-10);
            CHECK(round_to(m->im * m->im, 8) == 7.848);
        }
        CHECK_EQ_INT(r.lin->z0, 1);
    }
    run_free(&r);
}

/* The same four-bar with rocker2's body frame given by axis-angle, Euler angles and a rotation
 * matrix (rotated 90 deg about x, markers and inertia expressed accordingly), and with every
 * joint defined from the other marker: the same eigenvalue. */
TEST(spatial_invariance)
{
    char *base = test_slurp("examples/mech/spatial_fourbar.yaml");
    CHECK(base != NULL);
    if (!base) return;
    const char *rocker =
        "  rocker2:\n    mass: m\n    inertia: [I, I, I]\n    position: [0, 0, \"-d/2\"]\n    markers:\n"
        "      R2_top: {position: [0, 0, \"d/2\"], zaxis: [0, 1, 0]}\n"
        "      R2_bottom: {position: [0, 0, \"-d/2\"], zaxis: [0, 1, 0]}";
    static const char *orient[] = {"axis: [1, 0, 0]\n    angle: pi/2", "euler: [0, pi/2, 0]",
                                   "rotation: [[1, 0, 0], [0, 0, -1], [0, 1, 0]]",
                                   "zaxis: [0, -1, 0]\n    xaxis: [1, 0, 0]"};
    run r0;
    CHECK(run_text(base, "spatial_fourbar.yaml", NULL, 0, &r0) == 0);
    for (size_t k = 0; k < sizeof orient / sizeof *orient && r0.modes; k++) {
        char rot[1024];
        snprintf(rot, sizeof rot,
                 "  rocker2:\n    mass: m\n    inertia: [I, I, I]\n    position: [0, 0, \"-d/2\"]\n    %s\n"
                 "    markers:\n"
                 "      R2_top: {position: [0, \"d/2\", 0], zaxis: [0, 0, -1]}\n"
                 "      R2_bottom: {position: [0, \"-d/2\", 0], zaxis: [0, 0, -1]}",
                 orient[k]);
        char *t = replace(base, rocker, rot);
        CHECK(t != NULL);
        if (!t) continue;
        run r;
        int rc = run_text(t, "variant.yaml", NULL, 0, &r);
        if (rc) fprintf(stderr, "  %s\n", r.st.msg);
        CHECK(rc == 0);
        if (!rc) {
            double d = eig_diff(r.modes, r0.modes);
            printf("  rocker frame by '%.20s...': eigenvalue difference %.3g\n", orient[k], d);
            CHECK(d < TWIN_TOL);
        }
        run_free(&r);
        free(t);
    }
    /* every joint from the other marker */
    char *t1 = replace(base, "hinge2: {type: revolute, i: R2_top, j: O2}", "hinge2: {type: revolute, i: O2, j: R2_top}");
    char *t2 = t1 ? replace(t1, "hinge4: {type: revolute, i: R4_top, j: O4}", "hinge4: {type: revolute, i: O4, j: R4_top}") : NULL;
    char *t3 = t2 ? replace(t2, "cross: {type: universal, i: C_left, j: R2_bottom}",
                            "cross: {type: universal, i: R2_bottom, j: C_left}")
                  : NULL;
    char *t4 = t3 ? replace(t3, "ball: {type: spherical, i: C_right, j: R4_bottom}",
                            "ball: {type: spherical, i: R4_bottom, j: C_right}")
                  : NULL;
    CHECK(t4 != NULL);
    if (t4 && r0.modes) {
        run r;
        int rc = run_text(t4, "swapped.yaml", NULL, 0, &r);
        if (rc) fprintf(stderr, "  %s\n", r.st.msg);
        CHECK(rc == 0);
        if (!rc) {
            double d = eig_diff(r.modes, r0.modes);
            printf("  joints from the other marker: eigenvalue difference %.3g\n", d);
            CHECK(d < TWIN_TOL);
        }
        run_free(&r);
    }
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    run_free(&r0);
    free(base);
}

/* ---- the rotating pendulum (source 003 Sec. 5.3) as a spherical pendulum: +-8.58076i ---- */
TEST(spherical_pendulum)
{
    CHECK(twin("examples/mech/spherical_pendulum.yaml", "examples/rotating_pendulum_given.yaml", NULL, 0) < TWIN_TOL);
    run r;
    CHECK(run_model("examples/mech/spherical_pendulum.yaml", NULL, 0, &r) == 0);
    if (r.modes) {
        const mbl_mode *m = osc(r.modes, 0);
        CHECK(m && round_to(m->im, 5) == 8.58076);
    }
    run_free(&r);
    /* a rigid bob on a spherical joint hanging at rest: two compound-pendulum modes
       omega^2 = m g c / (I + m c^2) and a free spin about the rod */
    const char *text = "model: mechanism\n"
                       "parameters: {m: 3, c: 0.8, It: 0.2, Ia: 0.05, g: 9.81}\n"
                       "ground: {markers: {pivot: {}}}\n"
                       "bodies:\n"
                       "  bob:\n"
                       "    mass: m\n"
                       "    inertia: [It, It, Ia]\n"
                       "    position: [0.1, 0, \"-c\"]\n"
                       "    markers: {top: {position: [0, 0, c]}}\n"
                       "joints: {ball: {type: spherical, i: top, j: pivot}}\n"
                       "forces: {weight: {type: gravity, g: [0, 0, \"-g\"]}}\n";
    CHECK(run_text(text, "ball.yaml", NULL, 0, &r) == 0);
    if (r.modes) {
        double w2 = 3 * 9.81 * 0.8 / (0.2 + 3 * 0.64);
        const mbl_mode *a = osc(r.modes, 0), *b = osc(r.modes, 1);
        CHECK(a && b);
        if (a && b) {
            CHECK_CLOSE(a->im * a->im, w2, 1e-10);
            CHECK_CLOSE(b->im * b->im, w2, 1e-10);
        }
        int zeros = 0;
        for (int i = 0; i < r.modes->nx; i++) zeros += r.modes->modes[i].kind == MBL_MODE_ZERO;
        CHECK_EQ_INT(zeros, 2);
    } else {
        fprintf(stderr, "  %s\n", r.st.msg);
    }
    run_free(&r);
}

/* ---- rigid rotor on two isotropic bushings: bounce and conical whirl at several spins ---- */
TEST(rigid_rotor_whirl)
{
    const double m = 20, Id = 1.5, Ip = 0.6, a = 0.25, k = 1e5, kc = 2 * k * a * a;
    static const double spins[] = {0, 10, 50, 200, 1000};
    for (size_t s = 0; s < sizeof spins / sizeof *spins; s++) {
        double W = spins[s];
        mbl_setting set = {"Omega", W};
        run r;
        CHECK(run_model("examples/mech/rigid_rotor.yaml", &set, 1, &r) == 0);
        if (!r.modes) continue;
        double wf = (Ip * W + sqrt(Ip * Ip * W * W + 4 * Id * kc)) / (2 * Id);
        double wb = (-Ip * W + sqrt(Ip * Ip * W * W + 4 * Id * kc)) / (2 * Id);
        double wbounce = sqrt(2 * k / m);
        /* expected positive frequencies: bounce x, y, axial; forward and backward whirl */
        double want[5] = {wbounce, wbounce, wbounce, wf, wb};
        int used[5] = {0};
        int nzero = 0, nok = 0;
        double worst = 0;
        for (int i = 0; i < r.modes->nx; i++) {
            const mbl_mode *md = &r.modes->modes[i];
            if (md->kind == MBL_MODE_ZERO) {
                nzero++;
                continue;
            }
            if (md->im < 0) continue;
            int best = -1;
            double bd = 1e300;
            for (int j = 0; j < 5; j++)
                if (!used[j] && fabs(md->im - want[j]) < bd) {
                    bd = fabs(md->im - want[j]);
                    best = j;
                }
            if (best >= 0) {
                used[best] = 1;
                nok++;
                double rel = hypot(md->re, md->im - want[best]) / want[best];
                if (rel > worst) worst = rel;
            }
        }
        printf("  Omega = %g: forward %.10g, backward %.10g, bounce %.10g; worst relative error %.3g\n", W, wf, wb,
               wbounce, worst);
        CHECK_EQ_INT(nok, 5);
        CHECK_EQ_INT(nzero, 2);
        CHECK(worst < 1e-9);
        run_free(&r);
    }
}

/* ---- source 000 rotor-stator: base-frame vs rotor-frame states ---- */
TEST(rotor_stator_frames)
{
    static const double fs[] = {0, 0.25, 0.5, 0.75, 1.0};
    for (size_t s = 0; s < sizeof fs / sizeof *fs; s++) {
        mbl_setting set = {"f", fs[s]};
        run b, r;
        CHECK(run_model("examples/mech/rotor_stator.yaml", &set, 1, &b) == 0);
        CHECK(run_model("examples/mech/rotor_stator_rotor_frame.yaml", &set, 1, &r) == 0);
        if (b.modes && r.modes) {
            CHECK_EQ_INT(b.lin->z0, 7);
            CHECK_EQ_INT(r.lin->z0, 7);
            double W = 2 * acos(-1.0) * fs[s];
            /* every rotor-frame eigenvalue is a base-frame one, or one shifted by +-i Omega
               (the whirling modes seen from the spinning rotor) */
            double worst = 0;
            int shifted = 0;
            for (int i = 0; i < r.modes->nx; i++) {
                const mbl_mode *mu = &r.modes->modes[i];
                double best = 1e300;
                int bs = 0;
                for (int j = 0; j < b.modes->nx; j++)
                    for (int sh = -1; sh <= 1; sh++)
                        for (int cj = -1; cj <= 1; cj += 2) {
                            const mbl_mode *la = &b.modes->modes[j];
                            double d = hypot(mu->re - la->re, mu->im - (cj * la->im + sh * W));
                            if (d < best) {
                                best = d;
                                bs = sh;
                            }
                        }
                double rel = best / (1 + hypot(mu->re, mu->im));
                if (rel > worst) worst = rel;
                shifted += bs != 0;
            }
            printf("  f = %.2f Hz: rotor-frame eigenvalues = base-frame ones shifted by 0 or +-i Omega, worst %.3g, "
                   "%d shifted\n",
                   fs[s], worst, shifted);
            CHECK(worst < 1e-9);
            if (fs[s] == 0) CHECK(eig_diff(b.modes, r.modes) < TWIN_TOL);
            else CHECK(shifted >= 4);
            /* the base-frame rocking pair (4.0155 rad/s at rest) splits with spin: forward
               rises, backward falls */
            if (fs[s] > 0) {
                int above = 0, below = 0;
                for (int i = 0; i < b.modes->nx; i++) {
                    double w = b.modes->modes[i].im;
                    if (w > 4.2 && w < 20) above++;
                    if (w > 1.0 && w < 3.9) below++;
                }
                CHECK_EQ_INT(above, 1);
                CHECK_EQ_INT(below, 1);
            }
        }
        run_free(&b);
        run_free(&r);
    }
}

/* ---- bad mechanisms: one clear line naming the element ---- */
static void expect_error(const char *text, const char *must1, const char *must2)
{
    run r;
    int rc = run_text(text, "bad.yaml", NULL, 0, &r);
    CHECK(rc != 0);
    CHECK_MSG(strstr(r.st.msg, must1) != NULL, "message '%s' lacks '%s'", r.st.msg, must1);
    if (must2) CHECK_MSG(strstr(r.st.msg, must2) != NULL, "message '%s' lacks '%s'", r.st.msg, must2);
    CHECK(strchr(r.st.msg, '\n') == NULL);
    printf("  %s\n", r.st.msg);
    run_free(&r);
}

#define PEND_HEAD                                                                                            \
    "model: mechanism\n"                                                                                       \
    "space: spatial\n"                                                                                         \
    "parameters: {m: 1, l: 1}\n"                                                                               \
    "ground: {markers: {O: {}}}\n"

TEST(bad_mechanisms)
{
    /* a joint on a missing marker */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {pin: {type: revolute, i: top, j: nowhere}}\n",
                 "bad.yaml:6:", "joint 'pin': no marker named 'nowhere'");
    /* body.marker references: a missing body, a marker of another body */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {pin: {type: revolute, i: wheel.top, j: ground.O}}\n",
                 "bad.yaml:6:35:", "joint 'pin': no body named 'wheel'");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {pin: {type: revolute, i: bob.top, j: bob.O}}\n",
                 "joint 'pin'", "marker 'O' is on body 'ground', not on 'bob'");
    {
        run r;
        const char *ok = PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], position: [0, 0, -1], markers: "
                                   "{top: {position: [0, 0, 1]}}}}\n"
                                   "joints: {pin: {type: spherical, i: bob.top, j: ground.O}}\n"
                                   "forces: {w: {type: gravity, g: [0, 0, -1]}}\n";
        int rc = run_text(ok, "dotted.yaml", NULL, 0, &r);
        if (rc) fprintf(stderr, "  %s\n", r.st.msg);
        CHECK(rc == 0);
        run_free(&r);
    }
    /* a body named where a marker is expected */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {pin: {type: revolute, i: bob, j: O}}\n",
                 "joint 'pin'", "'bob' is a body, not a marker");
    /* a measure on a missing marker */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {pin: {type: spherical, i: top, j: O}}\n"
                           "outputs: {x: \"DX(top, ghost)\"}\n",
                 "bad.yaml:7:", "no marker named 'ghost'");
    /* a non-orthonormal marker frame */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {zaxis: [0, 0, 1], "
                           "xaxis: [1, 0, 0.5]}}}}\n",
                 "marker 'top' of body 'bob'", "not perpendicular");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {rotation: [[1, 0, 0], "
                           "[0, 1, 0], [0, 0, -1]]}}}}\n",
                 "marker 'top' of body 'bob'", "left-handed");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {rotation: [[1, 0, 0], "
                           "[0, 2, 0], [0, 0, 1]]}}}}\n",
                 "marker 'top' of body 'bob'", "not orthonormal");
    /* zero and indefinite spatial inertia, zero mass */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [0, 0, 0]}}\n", "body 'bob'", "inertia tensor is zero");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1, 2, 0, 0]}}\n", "body 'bob'",
                 "singular or indefinite");
    expect_error(PEND_HEAD "bodies: {bob: {mass: 0, inertia: [1, 1, 1]}}\n", "body 'bob'", "mass must be positive");
    /* unknown joint type, joint of one body with itself */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}, b2: {}}}}\n"
                           "joints: {pin: {type: hinge, i: top, j: O}}\n",
                 "joint 'pin'", "unknown type 'hinge'");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}, b2: {}}}}\n"
                           "joints: {pin: {type: revolute, i: top, j: b2}}\n",
                 "joint 'pin'", "same body 'bob'");
    /* duplicate force name */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "forces:\n  w: {type: gravity, g: [0, 0, -1]}\n  w: {type: gravity, g: [0, 0, -1]}\n",
                 "bad.yaml:8:3:", "duplicate force name 'w'");
    /* duplicate force and driver names among others, found by the name index of the earlier keys
     * (src/mech/util.c mech_dup_key): the second one is named with the first one's line */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "forces:\n  a: {type: gravity, g: [0, 0, -1]}\n  w: {type: gravity, g: [0, 0, -1]}\n"
                           "  b: {type: gravity, g: [0, 0, -1]}\n  w: {type: gravity, g: [0, 0, -1]}\n",
                 "bad.yaml:10:3:", "duplicate force name 'w' (first at line 8)");
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {top: {}}}}\n"
                           "joints: {s: {type: spherical, i: top, j: O}}\n"
                           "drivers:\n  d1: {i: top, j: O, measure: AX, motion: \"0\"}\n"
                           "  d2: {i: top, j: O, measure: AY, motion: \"0\"}\n"
                           "  d1: {i: top, j: O, measure: AZ, motion: \"0\"}\n",
                 "bad.yaml:10:3:", "duplicate driver name 'd1' (first at line 8)");
    /* duplicate marker */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {O: {}}}}\n", "bad.yaml:5:",
                 "duplicate marker name 'O'");
}


/* `mblin check` text for a model given as text (point best effort, as the CLI does) */
static char *check_text(const char *text, int *loaded)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    *loaded = mbl_model_load_string(text, strlen(text), "check.yaml", NULL, 0, &md, &st) == 0;
    if (!*loaded) {
        fprintf(stderr, "  %s\n", st.msg);
        return NULL;
    }
    if (mbl_operating_point(md, NULL, &pt, &st)) pt = NULL;
    /* the public diagnosis behind the text: every flagged equation has a name, residuals only
       without a point, the rank only with one */
    mbl_constraint_diag *d = NULL;
    CHECK(mbl_constraint_diagnose(md, pt, &d, &st) == 0 && d);
    if (d) {
        for (int j = 0; j < d->m; j++) CHECK(!d->flag || !d->flag[j] || mbl_model_constraint_name(md, j));
        CHECK(d->kind != MBL_DIAG_VIOLATED || (!pt && d->residual));
        CHECK(d->kind != MBL_DIAG_REDUNDANT || (d->rank < d->m && (pt || !d->residual)));
        if (d->kind == MBL_DIAG_REDUNDANT) printf("  diagnosis: rank %d of %d\n", d->rank, d->m);
    }
    mbl_constraint_diag_free(d);
    FILE *f = tmpfile();
    mbl_report_check(f, md, pt);
    long n = ftell(f);
    rewind(f);
    char *out = calloc((size_t)n + 1, 1);
    if (fread(out, 1, (size_t)n, f) != (size_t)n) out[0] = '\0';
    fclose(f);
    mbl_point_free(pt);
    mbl_model_free(md);
    return out;
}

/* ---- check: Gruebler count, rank, redundant constraints named, parts that do not assemble ---- */
TEST(check_mechanisms)
{
    /* a parallelogram with a third rocker: Gruebler count 0, mobility 1, one dependent equation
       among the six revolutes of the loop */
    const char *par =
        "model: mechanism\nspace: planar\nparameters: {m: 1}\n"
        "ground: {markers: {A0: {position: [0, 0]}, A1: {position: [1, 0]}, A2: {position: [2, 0]}}}\n"
        "bodies:\n"
        "  r0: {mass: m, inertia: 0.1, position: [0, -0.5], angle: -pi/2, markers: {r0t: {position: [-0.5, 0]}, "
        "r0b: {position: [0.5, 0]}}}\n"
        "  r1: {mass: m, inertia: 0.1, position: [1, -0.5], angle: -pi/2, markers: {r1t: {position: [-0.5, 0]}, "
        "r1b: {position: [0.5, 0]}}}\n"
        "  r2: {mass: m, inertia: 0.1, position: [2, -0.5], angle: -pi/2, markers: {r2t: {position: [-0.5, 0]}, "
        "r2b: {position: [0.5, 0]}}}\n"
        "  bar: {mass: m, inertia: 0.3, position: [1, -1], markers: {b0: {position: [-1, 0]}, b1: {}, b2: {position: "
        "[1, 0]}}}\n"
        "joints:\n"
        "  p0: {type: revolute, i: r0t, j: A0}\n  p1: {type: revolute, i: r1t, j: A1}\n"
        "  p2: {type: revolute, i: r2t, j: A2}\n  q0: {type: revolute, i: b0, j: r0b}\n"
        "  q1: {type: revolute, i: b1, j: r1b}\n  q2: {type: revolute, i: b2, j: r2b}\n"
        "forces: {w: {type: gravity, g: [0, -9.81]}}\n";
    int loaded;
    char *out = check_text(par, &loaded);
    CHECK(loaded && out);
    if (out) {
        printf("%s", out);
        CHECK(strstr(out, "degrees of freedom by counting: 0") != NULL);
        CHECK(strstr(out, "constraint rank 11, degrees of freedom 1") != NULL);
        CHECK(strstr(out, "redundant constraints: 1 of 12 equations are dependent") != NULL);
        CHECK(strstr(out, "joint p0 (revolute)") != NULL && strstr(out, "joint q2 (revolute)") != NULL);
    }
    free(out);
    /* the spatial four-bar with the second pivot 4 m away: the coupler cannot reach */
    char *base = test_slurp("examples/mech/spatial_fourbar.yaml");
    char *t1 = base ? replace(base, "O4: {position: [d, 0, 0]", "O4: {position: [4, 0, 0]") : NULL;
    char *t2 = t1 ? replace(t1, "position: [d, 0, \"-d/2\"]", "position: [4, 0, \"-d/2\"]") : NULL;
    CHECK(t2 != NULL);
    if (t2) {
        out = check_text(t2, &loaded);
        CHECK(loaded && out);
        if (out) {
            printf("%s", out);
            CHECK(strstr(out, "the parts did not assemble") != NULL);
            CHECK(strstr(out, "joint ball (spherical)") != NULL);
        }
        free(out);
    }
    /* the assembled four-bar: no problem line */
    out = base ? check_text(base, &loaded) : NULL;
    CHECK(out && !strstr(out, "problem") && !strstr(out, "redundant constraints:"));
    CHECK(out && strstr(out, "constraint rank 20, degrees of freedom 1"));
    free(out);
    free(t1);
    free(t2);
    /* a bar hung by two strings from the same point to the same marker: the two distance equations
       are one, and the bar swings 90 degrees from the file's configuration to hang below the pivot,
       which the point's search refuses as far from the guess; the redundancy is named all the same,
       at the initial configuration */
    const char *twice =
        "model: mechanism\nspace: spatial\nparameters: {m: 2, L: 1.5}\n"
        "ground: {markers: {top: {position: [-0.4, 0, L]}, top2: {position: [-0.4, 0, L]}}}\n"
        "bodies:\n  bar: {mass: m, inertia: [0.0001, 0.1667, 0.1667], markers: {end: {position: [-0.4, 0, 0]}, "
        "end2: {position: [-0.4, 0, 0]}}}\n"
        "joints:\n  s1: {type: distance, i: end, j: top, distance: L}\n"
        "  s2: {type: distance, i: end2, j: top2, distance: L}\n"
        "forces: {w: {type: gravity, g: [0, 0, -9.81]}}\n";
    out = check_text(twice, &loaded);
    CHECK(loaded && out);
    if (out) {
        printf("%s", out);
        CHECK(strstr(out, "redundant constraints at the initial configuration: 1 of 3 equations are dependent") !=
              NULL);
        CHECK(strstr(out, "joint s1 (distance)") != NULL && strstr(out, "joint s2 (distance)") != NULL);
        CHECK(!strstr(out, "[residual"));
    }
    free(out);
    /* over-constrained beyond the coordinates: rejected when read, with the Gruebler count */
    char *r1 = base ? replace(base, "  cross: {type: universal, i: C_left, j: R2_bottom}",
                              "  cross: {type: revolute, i: C_left, j: R2_bottom}\n"
                              "  cross2: {type: revolute, i: C_right, j: R4_bottom}")
                    : NULL;
    char *r2 = r1 ? replace(r1, "  ball: {type: spherical, i: C_right, j: R4_bottom}\n", "") : NULL;
    if (r2) expect_error(r2, "over-constrain the mechanism", "Gruebler count -2");
    free(r1);
    free(r2);
    free(base);
}


/* the squared frequencies of the oscillatory modes, ascending */
static int omegas2(const mbl_modes *m, double *w2, int cap)
{
    int n = 0;
    for (int i = 0; i < m->nx && n < cap; i++)
        if (m->modes[i].kind != MBL_MODE_ZERO && m->modes[i].im > 0) w2[n++] = m->modes[i].im * m->modes[i].im;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && w2[j] < w2[j - 1]; j--) {
            double t = w2[j];
            w2[j] = w2[j - 1];
            w2[j - 1] = t;
        }
    return n;
}

static void expect_w2(const char *what, const char *text, const double *want, int nwant, run *keep)
{
    run r;
    int rc = run_text(text, what, NULL, 0, &r);
    if (rc) fprintf(stderr, "  %s: %s\n", what, r.st.msg);
    CHECK(rc == 0);
    if (!rc) {
        double w2[16];
        int n = omegas2(r.modes, w2, 16);
        CHECK_EQ_INT(n, nwant);
        printf("  %s:", what);
        for (int i = 0; i < n && i < nwant; i++) {
            printf(" omega^2 %.12g (closed form %.12g)", w2[i], want[i]);
            CHECK_CLOSE(w2[i], want[i], 1e-10);
        }
        printf("\n");
    }
    if (keep && !rc) *keep = r;
    else run_free(&r);
}

#define SLIDER_HEAD                                                                                           \
    "model: mechanism\n"                                                                                        \
    "parameters: {m: 4, k: 100, L0: 1}\n"                                                                       \
    "ground:\n"                                                                                                 \
    "  markers:\n"                                                                                              \
    "    G: {zaxis: [1, 0, 0]}\n"                                                                               \
    "    anchor: {position: [-1, 0, 0]}\n"                                                                      \
    "    fr: {axis: [0, 0, 1], angle: pi/2}\n"                                                                  \
    "bodies:\n"                                                                                                 \
    "  slider: {mass: m, inertia: [1, 2, 3], position: [0.3, 0.01, 0], markers: {S: {zaxis: [1, 0, 0]}}}\n"

/* ---- every joint, primitive, driver and force element against a closed form ---- */
TEST(elements_closed_forms)
{
    /* spatial prismatic, spring by an expression of length and rate, point force in a rotated
       frame driven by an input: omega^2 = k/m and B = 1/m */
    double w_sl[1] = {25};
    run r;
    memset(&r, 0, sizeof r);
    expect_w2("prismatic + spring expression + force input",
              SLIDER_HEAD "joints: {slide: {type: prismatic, i: S, j: G}}\n"
                          "forces:\n"
                          "  spring: {type: spring, i: S, j: anchor, force: \"-k*(length - L0) - 0*rate\"}\n"
                          "  push: {type: force, i: S, frame: fr, force: [0, \"-F\", 0]}\n"
                          "inputs: {F: 0}\n"
                          "outputs: {x: \"JQ(slide)\", v: \"JV(slide)\", dx: \"DX(S, G)\", dxf: \"DY(S, G, fr)\"}\n"
                          "linearize: {states: [\"JQ(slide)\"]}\n",
              w_sl, 1, &r);
    if (r.lin) {
        CHECK_EQ_INT(r.lin->nx, 2);
        CHECK_CLOSE(r.lin->B[1], 0.25, 1e-12);
        CHECK(fabs(r.lin->B[0]) < 1e-14);
        /* outputs: x, v, DX and DY in frame fr (= -x) */
        CHECK_CLOSE(r.lin->C[0], 1, 1e-12);
        CHECK_CLOSE(r.lin->C[1 + 4], 1, 1e-12);
        CHECK_CLOSE(r.lin->C[2], 1, 1e-12);
        CHECK_CLOSE(r.lin->C[3], -1, 1e-12);
    }
    run_free(&r);
    /* the spring as an actuator: preload = input F pushes the slider away from the anchor (+x) */
    memset(&r, 0, sizeof r);
    expect_w2("spring actuator driven by an input",
              SLIDER_HEAD "joints: {slide: {type: prismatic, i: S, j: G}}\n"
                          "forces: {spring: {type: spring, i: S, j: anchor, stiffness: k, length: L0, preload: F}}\n"
                          "inputs: {F: 0}\n"
                          "linearize: {states: [\"JQ(slide)\"]}\n",
              w_sl, 1, &r);
    if (r.lin) CHECK_CLOSE(r.lin->B[1], 0.25, 1e-12);
    run_free(&r);
    /* the same slider from primitives: inline + orientation */
    expect_w2("inline + orientation",
              SLIDER_HEAD "joints: {line: {type: inline, i: S, j: G}, lock: {type: orientation, i: S, j: G}}\n"
                          "forces: {spring: {type: spring, i: S, j: anchor, stiffness: k, length: L0}}\n",
              w_sl, 1, NULL);
    /* cylindrical: axial spring k and torsion kt about the axis: k/m and kt/Ixx */
    double w_cyl[2] = {9, 25};
    expect_w2("cylindrical + torsion",
              SLIDER_HEAD "joints: {cyl: {type: cylindrical, i: S, j: G}}\n"
                          "forces:\n"
                          "  spring: {type: spring, i: S, j: anchor, stiffness: k, length: L0}\n"
                          "  twist: {type: torsion, i: S, j: G, stiffness: 9}\n",
              w_cyl, 2, NULL);
    /* planar joint (x-y plane) on a bushing: kx/m, ky/m, ktz/Izz (Izz = 3) */
    double w_pl[3] = {9.0 / 3.0, 100.0 / 4.0, 400.0 / 4.0};
    const char *planar_tail = "forces: {mount: {type: bushing, i: P, j: H, stiffness: [100, 400, 0, 0, 0, 9]}}\n";
    char buf[4096];
    snprintf(buf, sizeof buf,
             "model: mechanism\nparameters: {m: 4}\nground: {markers: {H: {}}}\n"
             "bodies: {plate: {mass: m, inertia: [1, 2, 3], position: [0.1, 0.2, 0], markers: {P: {}}}}\n"
             "joints: {slide: {type: planar, i: P, j: H}}\n%s",
             planar_tail);
    expect_w2("planar joint + bushing", buf, w_pl, 3, NULL);
    snprintf(buf, sizeof buf,
             "model: mechanism\nparameters: {m: 4}\nground: {markers: {H: {}}}\n"
             "bodies: {plate: {mass: m, inertia: [1, 2, 3], position: [0.1, 0.2, 0], markers: {P: {}}}}\n"
             "joints: {a: {type: inplane, i: P, j: H}, b: {type: parallel_axes, i: P, j: H}}\n%s",
             planar_tail);
    expect_w2("inplane + parallel_axes + bushing", buf, w_pl, 3, NULL);
    /* fixed joint: two bodies welded on a hinge with a torsion spring: kt / (Ia + Ib + mb d^2) */
    double w_fx[1] = {20.0 / (1.0 + 0.5 + 2.0 * 0.25)};
    expect_w2("fixed joint",
              "model: mechanism\nground: {markers: {O: {}}}\n"
              "bodies:\n"
              "  a: {mass: 1, inertia: [1, 1, 1], markers: {ah: {}, aw: {position: [0.5, 0, 0]}}}\n"
              "  b: {mass: 2, inertia: [0.5, 0.5, 0.5], position: [0.5, 0, 0], markers: {bw: {}}}\n"
              "joints: {hinge: {type: revolute, i: ah, j: O}, weld: {type: fixed, i: bw, j: aw}}\n"
              "forces: {twist: {type: torsion, i: ah, j: O, torque: \"-20*angle\"}}\n",
              w_fx, 1, NULL);
    /* coupler (gear pair 1:2): kt / (I1 + I2/4) */
    double w_cp[1] = {8.0 / (2.0 + 4.0 / 4.0)};
    expect_w2("coupler",
              "model: mechanism\nground: {markers: {O1: {}, O2: {position: [3, 0, 0]}}}\n"
              "bodies:\n"
              "  g1: {mass: 1, inertia: [1, 1, 2], markers: {h1: {}}}\n"
              "  g2: {mass: 1, inertia: [2, 2, 4], position: [3, 0, 0], markers: {h2: {}}}\n"
              "joints:\n"
              "  j1: {type: revolute, i: h1, j: O1}\n"
              "  j2: {type: revolute, i: h2, j: O2}\n"
              "  gear: {type: coupler, joints: [j1, j2], ratios: [1, 2]}\n"
              "forces: {twist: {type: torsion, i: h1, j: O1, stiffness: 8}}\n",
              w_cp, 1, NULL);
    /* universal = spherical + perpendicular axes: the four-bar's 7.848 */
    char *base = test_slurp("examples/mech/spatial_fourbar.yaml");
    char *t = base ? replace(base, "  cross: {type: universal, i: C_left, j: R2_bottom}",
                             "  cross: {type: spherical, i: C_left, j: R2_bottom}\n"
                             "  cross_perp: {type: perpendicular_axes, i: C_left, j: R2_bottom}")
                   : NULL;
    double w_4b[1] = {7.848};
    if (t) expect_w2("spherical + perpendicular_axes four-bar", t, w_4b, 1, NULL);
    CHECK(t != NULL);
    free(t);
    free(base);
    /* drivers: the slider-pendulum with the slider held by a joint driver, then by a marker
       driver: the pendulum alone, omega^2 = m3 g l/2 / (j3 + m3 l^2/4) = 196.2/35 */
    base = test_slurp("examples/mech/slider_pendulum.yaml");
    double w_dr[1] = {196.2 / 35.0};
    char *d1 = base ? replace(base, "forces:\n", "drivers: {hold: {joint: slide, motion: \"0.1*sin(t)^2\"}}\nforces:\n")
                    : NULL;
    char *d1s = d1 ? replace(d1, "  states: [\"DX(s_rail, rail)\", \"JQ(pin)\"]", "  states: [\"JQ(pin)\"]") : NULL;
    char *d2 = base ? replace(base, "forces:\n",
                              "drivers: {hold: {i: s_rail, j: rail, measure: DX, motion: \"0.1*sin(t)^2\"}}\nforces:\n")
                    : NULL;
    char *d2s = d2 ? replace(d2, "  states: [\"DX(s_rail, rail)\", \"JQ(pin)\"]", "  states: [\"JQ(pin)\"]") : NULL;
    CHECK(d1s && d2s);
    if (d1s) expect_w2("joint driver", d1s, w_dr, 1, NULL);
    if (d2s) expect_w2("marker driver", d2s, w_dr, 1, NULL);
    free(d1);
    free(d1s);
    free(d2);
    free(d2s);
    free(base);
}


/* ---- every YAML example of docs/mechanism-reference.md loads, linearizes and gives its expected omega^2 ---- */
TEST(docs_examples)
{
    char *doc = test_slurp("docs/mechanism-reference.md");
    CHECK(doc != NULL);
    if (!doc) return;
    int nblocks = 0;
    for (char *p = strstr(doc, "```yaml\n"); p; p = strstr(p, "```yaml\n")) {
        p += 8;
        char *end = strstr(p, "```");
        if (!end) break;
        *end = '\0';
        if (strstr(p, "model: mechanism")) {
            nblocks++;
            const char *nm = strstr(p, "name: ");
            char title[80] = "docs example";
            if (nm) sscanf(nm + 6, "%79[^\n]", title);
            const char *ex = strstr(p, "# expect omega^2:");
            double want[16];
            int nw = 0;
            if (ex) {
                const char *q = ex + strlen("# expect omega^2:");
                char *e;
                while (nw < 16) {
                    double v = strtod(q, &e);
                    if (e == q) break;
                    want[nw++] = v;
                    q = e;
                    while (*q == ',' || *q == ' ') q++;
                }
            }
            CHECK_MSG(nw > 0, "docs example '%s' has no '# expect omega^2:' line", title);
            expect_w2(title, p, want, nw, NULL);
        }
        p = end + 3;
    }
    printf("  %d examples in docs/mechanism-reference.md\n", nblocks);
    CHECK(nblocks >= 15);
    free(doc);
}


/* ---- measures: their linearizations against hand derivatives ---- */
TEST(measures)
{
    /* a body hanging on a spherical joint, states = its small rotations about ground x, y, z;
       the marker 'foot' is c below the pivot: DX = -c AY, DY = c AX, VX = -c WY, VY = c WX */
    const char *text = "model: mechanism\n"
                       "parameters: {c: 0.8}\n"
                       "ground: {markers: {pivot: {}, sky: {axis: [0, 0, 1], angle: pi/2}}}\n"
                       "bodies:\n"
                       "  bob:\n"
                       "    mass: 3\n"
                       "    inertia: [0.2, 0.3, 0.15]\n"
                       "    position: [0, 0, \"-c\"]\n"
                       "    markers: {top: {position: [0, 0, c]}, foot: {}}\n"
                       "joints: {ball: {type: spherical, i: top, j: pivot}}\n"
                       "forces: {weight: {type: gravity, g: [0, 0, -9.81]}}\n"
                       "outputs:\n"
                       "  ax: \"AX(top, pivot)\"\n"
                       "  dx: \"DX(foot, pivot)\"\n"
                       "  dy: \"DY(foot, pivot)\"\n"
                       "  dxs: \"DX(foot, pivot, sky)\"\n"
                       "  vx: \"VX(foot, pivot)\"\n"
                       "  vy: \"VY(foot)\"\n"
                       "  wx: \"WX(top, pivot)\"\n"
                       "  wz: \"WZ(foot, pivot, sky)\"\n"
                       "  dm: \"DM(foot, pivot)\"\n"
                       "linearize: {states: [\"AX(top, pivot)\", \"AY(top, pivot)\", \"AZ(top, pivot)\"]}\n";
    run r;
    int rc = run_text(text, "measures.yaml", NULL, 0, &r);
    if (rc) fprintf(stderr, "  %s\n", r.st.msg);
    CHECK(rc == 0);
    if (!rc) {
        const double c = 0.8;
        int ny = r.lin->ny, nx = r.lin->nx;
        CHECK_EQ_INT(nx, 6);
        /* C is ny x nx column-major; states [AX AY AZ der(AX) der(AY) der(AZ)] */
        double want[9][6] = {
            {1, 0, 0, 0, 0, 0},  /* AX */
            {0, -c, 0, 0, 0, 0}, /* DX */
            {c, 0, 0, 0, 0, 0},  /* DY */
            {0, 0, 0, 0, 0, 0},  /* DX in sky (x_sky = global y, y_sky = -x): DX_sky = DY */
            {0, 0, 0, 0, -c, 0}, /* VX */
            {0, 0, 0, c, 0, 0},  /* VY */
            {0, 0, 0, 1, 0, 0},  /* WX */
            {0, 0, 0, 0, 0, 1},  /* WZ in sky (z_sky = z) */
            {0, 0, 0, 0, 0, 0}}; /* DM constant */
        want[3][0] = c;
        double worst = 0;
        for (int i = 0; i < ny && i < 9; i++)
            for (int j = 0; j < nx; j++) {
                double d = fabs(r.lin->C[i + (size_t)j * ny] - want[i][j]);
                if (d > worst) worst = d;
            }
        printf("  measures: largest error in C %.3g\n", worst);
        CHECK(worst < 1e-12);
    }
    run_free(&r);
}


/* ---- planar point mass, a point force with a reaction, a planar torque ---- */
TEST(planar_point_and_reaction)
{
    /* two carts on a rail (one rigid on a prismatic joint, one point mass on an inline joint)
       coupled by a point force -k (x_b - x_a - L0) acting on b with its reaction on a:
       a free mode and omega^2 = k (m1 + m2) / (m1 m2) */
    const char *text = "model: mechanism\nspace: planar\n"
                       "parameters: {m1: 2, m2: 3, k: 60, L0: 1}\n"
                       "ground: {markers: {rail: {}}}\n"
                       "bodies:\n"
                       "  a: {mass: m1, inertia: 1, markers: {pa: {}}}\n"
                       "  b: {type: point, mass: m2, position: [1.2, 0.1], markers: {pb: {}}}\n"
                       "joints:\n"
                       "  ra: {type: prismatic, i: pa, j: rail}\n"
                       "  rb: {type: inline, i: pb, j: rail}\n"
                       "forces:\n"
                       "  link: {type: force, i: pb, reaction: pa, force: [\"-k*(DX(pb, pa) - L0)\", 0]}\n";
    double want[1] = {60.0 * 5.0 / 6.0};
    expect_w2("point force with reaction", text, want, 1, NULL);
    /* a planar bar on a hinge with a torque -kt*JQ given as a point torque: kt / (I + m c^2) */
    const char *t2 = "model: mechanism\nspace: planar\n"
                     "ground: {markers: {O: {}}}\n"
                     "bodies: {bar: {mass: 2, inertia: 0.5, position: [0.5, 0], markers: {h: {position: [-0.5, 0]}}}}\n"
                     "joints: {hinge: {type: revolute, i: h, j: O}}\n"
                     "forces: {motor: {type: force, i: h, torque: \"-10*JQ(hinge) + T\"}}\n"
                     "inputs: {T: 0}\n";
    double want2[1] = {10.0 / (0.5 + 2 * 0.25)};
    run r;
    memset(&r, 0, sizeof r);
    expect_w2("planar torque with an input", t2, want2, 1, &r);
    if (r.lin) CHECK_CLOSE(fabs(r.lin->B[1]), 1.0, 1e-12); /* 1/(I + m c^2) = 1 */
    run_free(&r);
    /* a point mass cannot take a prismatic joint */
    expect_error("model: mechanism\nspace: planar\nground: {markers: {rail: {}}}\n"
                 "bodies: {b: {type: point, mass: 1, markers: {pb: {}}}}\n"
                 "joints: {rb: {type: prismatic, i: pb, j: rail}}\n",
                 "joint 'rb'", "point mass");
}


/* ---- every allocation of reading + formulating + linearizing a mechanism failing in turn ---- */
TEST(allocation_failures)
{
    const char *text = "model: mechanism\n"
                       "parameters: {m: 3, c: 0.8, g: 9.81}\n"
                       "ground: {markers: {pivot: {zaxis: [1, 0, 0]}, anchor: {position: [1, 0, -1]}, base: {euler: [0.1, 0.2, "
                       "0.3]}}}\n"
                       "bodies:\n"
                       "  bob:\n"
                       "    mass: m\n"
                       "    inertia: [0.2, 0.3, 0.15, 0.01, 0, 0]\n"
                       "    position: [0, 0, \"-c\"]\n"
                       "    markers: {top: {position: [0, 0, c], zaxis: [0, 1, 0]}, foot: {euler: [0.1, 0.2, 0.3]}}\n"
                       "joints: {cross: {type: universal, i: top, j: pivot}}\n"
                       "forces:\n"
                       "  weight: {type: gravity, g: [0, 0, \"-g\"]}\n"
                       "  spring: {type: spring, i: foot, j: anchor, stiffness: 10, damping: 0.1, length: 1}\n"
                       "  mount: {type: bushing, i: foot, j: base, stiffness: [1, 1, 1, 1, 1, 1], damping: [0.1, 0.1, "
                       "0.1, 0.1, 0.1, 0.1]}\n"
                       "  push: {type: force, i: foot, frame: foot, force: [F, 0, 0], torque: [0, 0, \"0.1*F\"]}\n"
                       "inputs: {F: 0}\n"
                       "outputs: {x: \"DX(foot, pivot, foot)\"}\n"
                       "linearize: {states: [\"AX(top, pivot)\", \"AY(top, pivot)\"]}\n";
    int failures = 0, successes = 0;
    for (long n = 0; n < 1000000; n++) {
        run r;
        mbl_alloc_fail_after(n);
        int rc = run_text(text, "alloc.yaml", NULL, 0, &r);
        mbl_alloc_fail_after(-1);
        run_free(&r);
        if (rc == 0) {
            successes++;
            break;
        }
        /* a failure inside a nested variable reaches the caller as a parse error whose message
           says "out of memory" (equation-level behaviour, model.c): accepted as long as the
           message says so */
        int clean = rc == MBL_ENOMEM || strstr(r.st.msg, "out of memory") != NULL;
        CHECK_MSG(clean, "allocation %ld: code %d (%s)", n, rc, r.st.msg);
        if (!clean) break;
        failures++;
    }
    printf("  %d allocation failures, each a clean MBL_ENOMEM\n", failures);
    CHECK(successes == 1);
    CHECK(failures > 100);
}


/* ---- a spatial compound pendulum with a full inertia tensor, an offset centre of mass and a
   hinge axis oblique in the body frame: omega^2 = m g d / (n^T (J + m (|c|^2 I - c c^T)) n) ---- */
TEST(compound_pendulum_full_inertia)
{
    const double m = 2.5, g = 9.81;
    const double J[3][3] = {{0.30, 0.02, -0.01}, {0.02, 0.25, 0.03}, {-0.01, 0.03, 0.20}};
    double nb[3] = {0.3, 0.9, 0.3}; /* hinge axis in body axes */
    double nn = sqrt(nb[0] * nb[0] + nb[1] * nb[1] + nb[2] * nb[2]);
    for (int i = 0; i < 3; i++) nb[i] /= nn;
    /* body orientation: the rotation taking nb to global y (axis nb x ey, angle acos(nb . ey)) */
    double ax[3] = {-nb[2], 0, nb[0]};
    double ang = acos(nb[1]);
    double an = sqrt(ax[0] * ax[0] + ax[2] * ax[2]);
    double k[3] = {ax[0] / an, 0, ax[2] / an}, c0 = cos(ang), s0 = sin(ang), C0 = 1 - c0;
    double R[3][3] = {{c0 + k[0] * k[0] * C0, k[0] * k[1] * C0 - k[2] * s0, k[0] * k[2] * C0 + k[1] * s0},
                      {k[1] * k[0] * C0 + k[2] * s0, c0 + k[1] * k[1] * C0, k[1] * k[2] * C0 - k[0] * s0},
                      {k[2] * k[0] * C0 - k[1] * s0, k[2] * k[1] * C0 + k[0] * s0, c0 + k[2] * k[2] * C0}};
    /* centre of mass: nearly below the hinge in global, expressed in body axes */
    double cg[3] = {0.05, 0.1, -0.5}, cb[3];
    for (int i = 0; i < 3; i++) cb[i] = R[0][i] * cg[0] + R[1][i] * cg[1] + R[2][i] * cg[2];
    char text[2048];
    snprintf(text, sizeof text,
             "model: mechanism\n"
             "ground: {markers: {G: {zaxis: [0, 1, 0]}}}\n"
             "bodies:\n"
             "  body:\n"
             "    mass: %.17g\n"
             "    inertia: [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]\n"
             "    cm: [%.17g, %.17g, %.17g]\n"
             "    axis: [%.17g, 0, %.17g]\n"
             "    angle: %.17g\n"
             "    markers: {H: {zaxis: [%.17g, %.17g, %.17g]}}\n"
             "joints: {hinge: {type: revolute, i: H, j: G}}\n"
             "forces: {weight: {type: gravity, g: [0, 0, %.17g]}}\n",
             m, J[0][0], J[1][1], J[2][2], J[0][1], J[0][2], J[1][2], cb[0], cb[1], cb[2], k[0], k[2], ang, nb[0],
             nb[1], nb[2], -g);
    double c2 = cb[0] * cb[0] + cb[1] * cb[1] + cb[2] * cb[2], cn = cb[0] * nb[0] + cb[1] * nb[1] + cb[2] * nb[2];
    double Iax = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Iax += nb[i] * (J[i][j] + m * ((i == j) * c2 - cb[i] * cb[j])) * nb[j];
    double d = sqrt(c2 - cn * cn);
    double want[1] = {m * g * d / Iax};
    expect_w2("compound pendulum, full inertia tensor, oblique hinge", text, want, 1, NULL);
}


/* ---- the sleeping top: a spinning body on a spherical joint, upright; base-frame tilt states.
   It w^2 - Ip Omega w + m g l = 0 (It about the pivot): nutation and precession ---- */
TEST(sleeping_top)
{
    const double m = 1.5, l = 0.1, Ic = 0.004, Ip = 0.006, g = 9.81, W = 150;
    char text[2048];
    snprintf(text, sizeof text,
             "model: mechanism\n"
             "ground: {markers: {pivot: {}}}\n"
             "bodies:\n"
             "  top:\n"
             "    mass: %g\n"
             "    inertia: [%g, %g, %g]\n"
             "    position: [0, 0, %g]\n"
             "    angular_velocity: [0, 0, %g]\n"
             "    markers: {tip: {position: [0, 0, %g]}, crown: {position: [0, 0, %g]}, east: {position: [1, 0, 0]},\n"
             "              centre: {}}\n"
             "joints: {ball: {type: spherical, i: tip, j: pivot}}\n"
             "forces: {weight: {type: gravity, g: [0, 0, %g]}}\n"
             "linearize:\n"
             "  at: given\n"
             "  states: [\"DX(crown, tip)\", \"DY(crown, tip)\", \"atan2(DY(east, centre), DX(east, centre))\"]\n",
             m, Ic, Ic, Ip, l, W, -l, 1 - l, -g);
    const double It = Ic + m * l * l, disc = Ip * Ip * W * W - 4 * It * m * g * l;
    CHECK(disc > 0);
    double w1 = (Ip * W - sqrt(disc)) / (2 * It), w2 = (Ip * W + sqrt(disc)) / (2 * It);
    double want[2] = {w1 * w1, w2 * w2};
    expect_w2("sleeping top (precession, nutation)", text, want, 2, NULL);
}

/* ---- joint angles beyond half a turn (issue 29): a 3:1 gear pair (coupler JQ(j1) + 3 JQ(j2) = 0)
 * with a torsion spring holding the wheel at 1.2 rad has its pinion at -3.6 rad (closed form). A
 * user who writes the pinion at angle -3.55 (and the wheel at 1.0) means -3.55, not its principal
 * value 2.73: the joint angle counts the file's whole turns, so the equilibrium is found from
 * there (before: refused, the coupler violated by 2 pi), and the outputs JQ read -3.6 and 1.2. The
 * same with the turns on the markers instead of the bodies, and with the axes along -z. ---- */
TEST(joint_angle_turns)
{
    const char *forms[3][2] = {
        {"axis: [0, 0, 1], angle: -3.55, markers: {h1: {}}", "axis: [0, 0, 1], angle: 1.0, markers: {h2: {}}"},
        {"markers: {h1: {axis: [0, 0, 1], angle: -3.55}}", "markers: {h2: {axis: [0, 0, 1], angle: 1.0}}"},
        {"axis: [0, 0, -1], angle: 3.55, markers: {h1: {}}", "axis: [0, 0, -1], angle: -1.0, markers: {h2: {}}"}};
    for (int f = 0; f < 3; f++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "model: mechanism\n"
                 "ground: {markers: {O1: {}, O2: {position: [3, 0, 0]}}}\n"
                 "bodies:\n"
                 "  pinion: {mass: 1, inertia: [0.3, 0.3, 0.5], %s}\n"
                 "  gear: {mass: 1, inertia: [2.5, 2.5, 4], position: [3, 0, 0], %s}\n"
                 "joints:\n"
                 "  j1: {type: revolute, i: h1, j: O1}\n"
                 "  j2: {type: revolute, i: h2, j: O2}\n"
                 "  mesh: {type: coupler, joints: [j1, j2], ratios: [1, 3], offset: 0}\n"
                 "forces: {hold: {type: torsion, i: h2, j: O2, stiffness: 10, angle: 1.2}}\n"
                 "outputs: {pinion: \"JQ(j1)\", wheel: \"JQ(j2)\"}\n",
                 forms[f][0], forms[f][1]);
        mbl_status st;
        mbl_model *md = NULL;
        mbl_point *pt = NULL;
        int rc = mbl_model_load_string(text, strlen(text), "gear.yaml", NULL, 0, &md, &st);
        if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
        CHECK_MSG(rc == 0, "form %d: %s", f, st.msg);
        double y[2] = {0, 0};
        if (!rc) rc = mbl_model_outputs(md, pt, y, &st);
        CHECK(rc == 0);
        CHECK_MSG(fabs(y[0] + 3.6) < 1e-12 && fabs(y[1] - 1.2) < 1e-12, "form %d: JQ %.15g, %.15g (closed form -3.6, 1.2)",
                  f, y[0], y[1]);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
}

/* ---- spare marker variables: a marker's axes are dropped when unused, kept when a measure uses
 * them (src/mech/util.c mech_drop_spare_vars). A planar pendulum (rod of length L hanging from
 * pivot, angle th) with a marker K at its centre turned by a, a ground marker G turned by b:
 * u = DX(far, K, K) = cos(th + a) + L/2 sin a, v = DY(far, K, K) = -sin(th + a) + L/2 cos a,
 * w = DX(K, pivot, G) = L/2 sin(th - b); at th = 0 their values and d/dth (-sin a, -cos a,
 * L/2 cos b) are the closed forms. ---- */
TEST(spare_marker_variables)
{
    const char *text = "model: mechanism\n"
                       "space: planar\n"
                       "parameters: {m: 1, L: 2, g: 9.81, a: 0.3, b: 0.4}\n"
                       "ground:\n"
                       "  markers:\n"
                       "    pivot: {position: [0, 0]}\n"
                       "    far: {position: [1, 0]}\n"
                       "    G: {position: [0, 0], angle: b}\n"
                       "bodies:\n"
                       "  rod:\n"
                       "    mass: m\n"
                       "    inertia: m*L^2/12\n"
                       "    position: [0, \"-L/2\"]\n"
                       "    angle: 0.1\n"
                       "    markers:\n"
                       "      top: {position: [0, \"L/2\"]}\n"
                       "      K: {position: [0, 0], angle: a}\n"
                       "joints:\n"
                       "  hinge: {type: revolute, i: top, j: pivot}\n"
                       "forces:\n"
                       "  weight: {type: gravity, g: [0, \"-g\"]}\n"
                       "outputs: {u: \"DX(far, K, K)\", v: \"DY(far, K, K)\", w: \"DX(K, pivot, G)\"}\n"
                       "linearize:\n"
                       "  at: equilibrium\n"
                       "  states: [\"JQ(hinge)\"]\n";
    run r;
    int rc = run_text(text, "spare.yaml", NULL, 0, &r);
    CHECK_MSG(rc == 0, "%s", r.st.msg);
    if (!rc) {
        const double a = 0.3, b = 0.4, L = 2;
        double y[3];
        CHECK(mbl_model_outputs(r.md, r.pt, y, &r.st) == 0);
        CHECK_EQ_INT(r.lin->ny, 3);
        CHECK_EQ_INT(r.lin->nx, 2);
        const double want_y[3] = {cos(a) + L / 2 * sin(a), -sin(a) + L / 2 * cos(a), -L / 2 * sin(b)};
        const double want_c[3] = {-sin(a), -cos(a), L / 2 * cos(b)};
        for (int i = 0; i < 3; i++) {
            printf("  output %d: %.15g (closed form %.15g), dy/dth %.15g (closed form %.15g)\n", i, y[i], want_y[i],
                   r.lin->C[i], want_c[i]);
            CHECK_CLOSE(y[i], want_y[i], 1e-12);
            CHECK_CLOSE(r.lin->C[i], want_c[i], 1e-12);
            CHECK_CLOSE(r.lin->C[3 + i], 0.0, 1e-12);
        }
    }
    run_free(&r);
}

int main(void)
{
    RUN(slider_pendulum);
    RUN(fourbar_twins);
    RUN(spatial_fourbar);
    RUN(spatial_invariance);
    RUN(spherical_pendulum);
    RUN(rigid_rotor_whirl);
    RUN(rotor_stator_frames);
    RUN(bad_mechanisms);
    RUN(check_mechanisms);
    RUN(elements_closed_forms);
    RUN(docs_examples);
    RUN(measures);
    RUN(planar_point_and_reaction);
    RUN(compound_pendulum_full_inertia);
    RUN(sleeping_top);
    RUN(joint_angle_turns);
    RUN(allocation_failures);
    RUN(spare_marker_variables);
    return test_summary("mechanism");
}
