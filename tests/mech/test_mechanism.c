/* `model: mechanism`: every example against its source's printed numbers, against its
 * equation-level twin (every eigenvalue to 1e-9), against closed forms; invariance of the
 * eigenvalues under the orientation parametrization and the choice of joint markers; and one
 * test per class of bad mechanism (clear one-line message naming the element). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
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
    run r;
    CHECK(run_model("examples/mech/slider_pendulum.yaml", NULL, 0, &r) == 0);
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
    /* duplicate marker */
    expect_error(PEND_HEAD "bodies: {bob: {mass: m, inertia: [1, 1, 1], markers: {O: {}}}}\n", "bad.yaml:5:",
                 "duplicate marker name 'O'");
}

int main(void)
{
    RUN(slider_pendulum);
    RUN(fourbar_twins);
    RUN(bad_mechanisms);
    return test_summary("mechanism");
}
