/* Sweeps, mode tracking, critical speeds, frequency response (src/study, docs/study.md).
 * Every value is checked against an independent result: closed forms (rigid rotor whirl, two-mass
 * chain, pumped oscillator), the published Table 2 of Meijaard et al. (2007) for the Whipple
 * bicycle, and the same sweep computed another way (one thread vs several, in place vs reload). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "test.h"

#define TWO_PI 6.283185307179586476925286766559
/* the warm corrector's step limit (src/opoint/opoint_warm.h, OPOINT_WARM_MAX_STEPS, documented in
 * docs/study.md): a point that took more steps was solved cold */
#define OPOINT_WARM_STEPS_TEST 2
/* its factorization's age limit at points without a tangent (OPOINT_WARM_SKIP_AGE, the same file) */
#define OPOINT_WARM_SKIP_AGE_TEST 16

/* Meijaard, Papadopoulos, Ruina, Schwab (2007), Table 2, v = 0, 1, ..., 10 m/s: the capsize
 * eigenvalue, the weave pair (re +- i im; at v = 0 two real ones, +3.13164324790656 and
 * +5.53094371765393) and the castering eigenvalue (v = 0: -5.53094371765393). */
static const double cap[11] = {-3.13164324790656, -3.13423125066578, -3.07158645641514, -2.63366137253667,
                               -1.42944427361326, -0.32286642900409, -0.00406690076970, 0.10268170574766,
                               0.14327879765713,  0.15790184030917,  0.16105338653172};
static const double weave_re[11] = {NAN,
                                    3.52696170990070,
                                    2.68234517512745,
                                    1.70675605663975,
                                    0.41325331521125,
                                    -0.77534188219585,
                                    -1.52644486584142,
                                    -2.13875644258362,
                                    -2.69348683581097,
                                    -3.21675402252485,
                                    -3.72016840437287};
static const double weave_im[11] = {NAN,
                                    0.80774027519930,
                                    1.68066296590675,
                                    2.31582447384325,
                                    3.07910818603206,
                                    4.46486771378823,
                                    5.87673060598709,
                                    7.19525913329805,
                                    8.46037971396931,
                                    9.69377351531791,
                                    10.90681139476287};
static const double cast[11] = {-5.53094371765393,  -7.11008014637442,  -8.67387984831735,  -10.35101467245920,
                                -12.15861426576450, -14.07838969279820, -16.08537123098030, -18.15788466125262,
                                -20.27940894394569, -22.43788559040858, -24.62459635017404};

/* The sweep of a model file: the model loaded with the sweep's overrides, as the CLI does. */
static int run_sweep(const char *path, const mbl_sweep_options *so, mbl_sweep **sw, mbl_status *st)
{
    mbl_model *md = NULL;
    int rc = mbl_model_load_file(path, so->sets, so->nsets, &md, st);
    if (!rc) rc = mbl_sweep_run(md, so, sw, st);
    mbl_model_free(md);
    return rc;
}

static mbl_sweep *bicycle_sweep(int threads, int reload, int count)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"v", 0, 10, count};
    so.threads = threads;
    so.force_reload = reload;
    mbl_status st;
    mbl_sweep *sw = NULL;
    int rc = run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    return sw;
}

static int branch_near(const mbl_sweep *sw, int p, double re, double im)
{
    int best = -1;
    double d = INFINITY;
    for (int b = 0; b < sw->nmodes; b++) {
        size_t o = (size_t)p * sw->nmodes + b;
        double e = hypot(sw->re[o] - re, sw->im[o] - im);
        if (e < d) d = e, best = b;
    }
    return best;
}

/* v = 0..10 in steps of 0.1: the four lean/steer eigenvalues tracked through the weave merge
 * (v_d = 0.684 m/s), at every integer speed equal to Table 2. */
TEST(bicycle_table2)
{
    mbl_sweep *sw = bicycle_sweep(1, 0, 101);
    if (!sw) return;
    CHECK_EQ_INT(sw->nmodes, 4);
    CHECK_EQ_INT(sw->fast, 1);
    CHECK_EQ_INT(sw->nfailed, 0);
    int bc = branch_near(sw, 0, cap[0], 0), bk = branch_near(sw, 0, cast[0], 0);
    int w1 = branch_near(sw, 0, 3.13164324790656, 0), w2 = branch_near(sw, 0, 5.53094371765393, 0);
    CHECK(bc >= 0 && bk >= 0 && w1 >= 0 && w2 >= 0 && bc != bk && w1 != w2 && bc != w1 && bc != w2 && bk != w1 &&
          bk != w2);
    double sign1 = 0;
    for (int k = 0; k <= 10; k++) {
        int p = 10 * k;
        size_t o = (size_t)p * 4;
        CHECK_CLOSE(sw->value[p], (double)k, 1e-14);
        CHECK_CLOSE(sw->re[o + bc], cap[k], 1e-11);
        CHECK_CLOSE(sw->im[o + bc], 0.0, 1e-11);
        CHECK_CLOSE(sw->re[o + bk], cast[k], 1e-11);
        if (k == 0) continue;
        CHECK_CLOSE(sw->re[o + w1], weave_re[k], 1e-11);
        CHECK_CLOSE(sw->re[o + w2], weave_re[k], 1e-11);
        CHECK_CLOSE(fabs(sw->im[o + w1]), weave_im[k], 1e-11);
        CHECK_CLOSE(sw->im[o + w2], -sw->im[o + w1], 1e-13);
        /* each weave branch keeps its sign of Im after the merge (no hopping between conjugates) */
        if (k == 1) sign1 = copysign(1.0, sw->im[o + w1]);
        CHECK(copysign(1.0, sw->im[o + w1]) == sign1);
    }
    /* the merge: real below v_d = 0.68428307889246, a complex pair above */
    CHECK(sw->im[6 * 4 + w1] == 0 && sw->im[6 * 4 + w2] == 0);
    CHECK(fabs(sw->im[7 * 4 + w1]) > 0 && fabs(sw->im[7 * 4 + w2]) > 0);
    for (int p = 11; p <= 100; p++) CHECK(copysign(1.0, sw->im[(size_t)p * 4 + w1]) == sign1);
    mbl_sweep_free(sw);
}

/* The same sweep on 1, 2 and 3 threads is bit for bit the same; reloading the model at every
 * point (the path of parameters that cannot change in place) agrees to rounding. */
TEST(threads_identical)
{
    mbl_sweep *a = bicycle_sweep(1, 0, 201), *b = bicycle_sweep(2, 0, 201), *c = bicycle_sweep(3, 0, 201);
    mbl_sweep *r = bicycle_sweep(2, 1, 201);
    if (!a || !b || !c || !r) goto out;
    CHECK_EQ_INT(b->threads, 2);
    CHECK_EQ_INT(r->fast, 0);
    size_t len = (size_t)a->npoints * a->nmodes * sizeof(double);
    CHECK(!memcmp(a->re, b->re, len) && !memcmp(a->im, b->im, len) && !memcmp(a->mac, b->mac, len));
    CHECK(!memcmp(a->re, c->re, len) && !memcmp(a->im, c->im, len) && !memcmp(a->damping, c->damping, len));
    double dev = 0;
    for (size_t i = 0; i < (size_t)a->npoints * a->nmodes; i++)
        dev = fmax(dev, hypot(a->re[i] - r->re[i], a->im[i] - r->im[i]) / fmax(1, hypot(a->re[i], a->im[i])));
    CHECK_MSG(dev < 1e-12, "in place vs reload: %g", dev);
out:
    mbl_sweep_free(a), mbl_sweep_free(b), mbl_sweep_free(c), mbl_sweep_free(r);
}

/* The phases' CPU times only when asked for (mbl_sweep_options.phase_times): without, the four stay
 * 0; with, the operating points' and the linear models' are positive and the results the same bits */
TEST(phase_times_on_request)
{
    mbl_sweep *sw[2] = {NULL, NULL};
    for (int timed = 0; timed < 2; timed++) {
        mbl_sweep_options so;
        mbl_sweep_options_default(&so);
        CHECK_EQ_INT(so.phase_times, 0);
        so.naxes = 1;
        so.axis[0] = (mbl_sweep_axis){"v", 0, 10, 101};
        so.phase_times = timed;
        mbl_status st;
        if (run_sweep("examples/whipple_bicycle.yaml", &so, &sw[timed], &st)) {
            CHECK_MSG(0, "sweep: %s", st.msg);
            goto out;
        }
    }
    CHECK(sw[0]->seconds_point == 0 && sw[0]->seconds_lin == 0 && sw[0]->seconds_load == 0 && sw[0]->seconds_sens == 0);
    CHECK(sw[1]->seconds_point > 0 && sw[1]->seconds_lin > 0);
    CHECK(sw[0]->seconds > 0 && sw[1]->seconds > 0);
    size_t len = (size_t)sw[0]->npoints * sw[0]->nmodes * sizeof(double);
    CHECK(!memcmp(sw[0]->re, sw[1]->re, len) && !memcmp(sw[0]->im, sw[1]->im, len));
out:
    mbl_sweep_free(sw[0]), mbl_sweep_free(sw[1]);
}

/* A parameter other parameters use (the trail c) is swept by reloading, with --set v = 5:
 * at c = 0.08 the eigenvalues of Table 2 at v = 5. */
TEST(reload_path_with_sets)
{
    mbl_setting set = {"v", 5};
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"c", 0.06, 0.08, 3};
    so.sets = &set;
    so.nsets = 1;
    so.threads = 2;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    if (!sw) return;
    CHECK_EQ_INT(sw->fast, 0);
    CHECK(branch_near(sw, 2, cap[5], 0) >= 0);
    int b = branch_near(sw, 2, cap[5], 0);
    CHECK_CLOSE(sw->re[2 * 4 + b], cap[5], 1e-11);
    b = branch_near(sw, 2, weave_re[5], weave_im[5]);
    CHECK_CLOSE(sw->im[2 * 4 + b], weave_im[5], 1e-11);
    b = branch_near(sw, 2, cast[5], 0);
    CHECK_CLOSE(sw->re[2 * 4 + b], cast[5], 1e-11);
    mbl_sweep_free(sw);
}

/* Rigid rotor on two bushings (examples/mech/rigid_rotor.yaml): conical whirl
 * Id w^2 -+ Ip Omega w - 2 k a^2 = 0 meets w = Omega at Omega = sqrt(2 k a^2 / (Id -+ Ip))
 * (forward, backward); the lateral and axial bounce sqrt(2 k / m) = 100 rad/s at Omega = 100. */
TEST(rigid_rotor_campbell)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"Omega", 0, 200, 21};
    so.threads = 2;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep("examples/mech/rigid_rotor.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    if (!sw) return;
    CHECK_EQ_INT(sw->fast, 0); /* a mechanism: reloaded */
    double order = 1;
    mbl_critical *cr = NULL;
    int nc = 0;
    CHECK_MSG(mbl_sweep_critical(sw, &order, 1, 1.0 / TWO_PI, 1e-12, &cr, &nc, &st) == 0, "%s", st.msg);
    double kc = 2 * 1e5 * 0.25 * 0.25, Id = 1.5, Ip = 0.6;
    double fwd = sqrt(kc / (Id - Ip)), bwd = sqrt(kc / (Id + Ip)), bounce = sqrt(2 * 1e5 / 20);
    int nf = 0, nb = 0, nbounce = 0;
    for (int i = 0; i < nc; i++) {
        CHECK(cr[i].refined);
        if (fabs(cr[i].speed - fwd) < 1e-3 * fwd) {
            nf++;
            CHECK_REL(cr[i].speed, fwd, 1e-9);
            CHECK_REL(cr[i].freq_hz, fwd / TWO_PI, 1e-9);
            CHECK_EQ_INT(cr[i].whirl, 1);
        } else if (fabs(cr[i].speed - bwd) < 1e-3 * bwd) {
            nb++;
            CHECK_REL(cr[i].speed, bwd, 1e-9);
            CHECK_EQ_INT(cr[i].whirl, -1);
        } else {
            nbounce++;
            CHECK_REL(cr[i].speed, bounce, 1e-9);
            CHECK_EQ_INT(cr[i].whirl, 0);
        }
    }
    CHECK_EQ_INT(nf, 1);
    CHECK_EQ_INT(nb, 1);
    CHECK_EQ_INT(nbounce, 3);
    /* the diagram, with the critical speeds marked */
    char path[128];
    int fd = test_tmp_template(path, sizeof path, "mblin_campbell_") ? -1 : mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w+");
        CHECK(mbl_sweep_svg_campbell(f, sw, &order, 1, 1.0 / TWO_PI, 0, cr, nc) == 0);
        rewind(f);
        char buf[4096];
        int circles = 0, lines = 0, end = 0;
        while (fgets(buf, sizeof buf, f)) {
            circles += strstr(buf, "<circle") != NULL;
            lines += strstr(buf, "<polyline") != NULL;
            end |= strstr(buf, "</svg>") != NULL;
        }
        CHECK_EQ_INT(circles, nc);
        CHECK(lines >= 5 && end);
        fclose(f);
        unlink(path);
    }
    mbl_free(cr);
    mbl_sweep_free(sw);
}

/* Source 000 Fig. 7a: the rotor-stator over spin 0-1 Hz, drawn (Campbell, locus, damping); the
 * rocking pair splits into a rising forward and a falling backward mode that meets the 1x line. */
TEST(rotor_stator_fig7)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"f", 0, 1, 11};
    so.threads = 2;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep("examples/mech/rotor_stator.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    if (!sw) return;
    double order = 1;
    mbl_critical *cr = NULL;
    int nc = 0;
    CHECK(mbl_sweep_critical(sw, &order, 1, 1.0, 0, &cr, &nc, &st) == 0);
    /* the rocking pair at rest (0.6391 Hz) */
    int rising = -1, falling = -1;
    for (int b = 0; b < sw->nmodes; b++) {
        double f0 = sw->im[b] / TWO_PI, f1 = sw->im[(size_t)10 * sw->nmodes + b] / TWO_PI;
        if (fabs(f0 - 0.6391) < 1e-3 && f1 > 1.5) rising = b;
        if (fabs(f0 - 0.6391) < 1e-3 && f1 > 0 && f1 < 0.3) falling = b;
    }
    CHECK(rising >= 0 && falling >= 0);
    int met = 0;
    for (int i = 0; i < nc; i++) met |= cr[i].branch == falling && cr[i].speed > 0.3 && cr[i].speed < 0.5;
    CHECK(met);
    FILE *f = tmpfile();
    CHECK(f && !mbl_sweep_svg_campbell(f, sw, &order, 1, 1.0, 2.0, cr, nc) && !mbl_sweep_svg_locus(f, sw) &&
          !mbl_sweep_svg_damping(f, sw) && !mbl_sweep_write_csv(f, sw) && !mbl_sweep_write_json(f, sw, cr, nc));
    if (f) fclose(f);
    mbl_free(cr);
    mbl_sweep_free(sw);
}

/* Time sweep along a driver: omega(t) = sqrt(k (1 + a sin(w t)) / m). */
TEST(time_sweep)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"t", 0, 2, 9};
    so.threads = 2;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep("tests/study/pumped_oscillator.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    if (!sw) return;
    CHECK_EQ_INT(sw->fast, 1);
    for (int p = 0; p < 9; p++) {
        double t = 2.0 * p / 8, om = sqrt(50 * (1 + 0.5 * sin(3 * t)) / 2);
        double hi = fmax(sw->im[2 * p], sw->im[2 * p + 1]);
        CHECK_REL(hi, om, 1e-12);
    }
    mbl_sweep_free(sw);
}

/* A grid over v and g: M s^2 + v C1 s + g K0 + v^2 K2 is unchanged by s -> sqrt(2) s, v -> sqrt(2) v,
 * g -> 2 g, so at (v, g) = (5 sqrt 2, 2 x 9.81) the eigenvalues are sqrt(2) times Table 2's at v = 5;
 * at (2.5 sqrt 2, 9.81) the first row is an ordinary point. */
TEST(two_parameter_grid)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 2;
    so.axis[0] = (mbl_sweep_axis){"v", 0, 5 * sqrt(2.0), 3};
    so.axis[1] = (mbl_sweep_axis){"g", 9.81, 19.62, 2};
    so.threads = 2;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    if (!sw) return;
    CHECK_EQ_INT(sw->npoints, 6);
    int p = 2 + 3 * 1; /* i0 = 2, i1 = 1 */
    CHECK_CLOSE(sw->value[(size_t)p * 2 + 0], 5 * sqrt(2.0), 1e-15);
    CHECK_CLOSE(sw->value[(size_t)p * 2 + 1], 19.62, 1e-15);
    double r2 = sqrt(2.0);
    double want[4][2] = {{cap[5] * r2, 0}, {cast[5] * r2, 0}, {weave_re[5] * r2, weave_im[5] * r2},
                         {weave_re[5] * r2, -weave_im[5] * r2}};
    for (int k = 0; k < 4; k++) {
        int b = branch_near(sw, p, want[k][0], want[k][1]);
        CHECK_CLOSE(hypot(sw->re[(size_t)p * 4 + b] - want[k][0], sw->im[(size_t)p * 4 + b] - want[k][1]), 0, 1e-11);
    }
    /* the second row is tracked from the first: branch b at (0, 19.62) is branch b at (0, 9.81)
     * scaled by sqrt 2 (real eigenvalues at v = 0) */
    for (int b = 0; b < 4; b++) CHECK_CLOSE(sw->re[(size_t)3 * 4 + b], r2 * sw->re[b], 1e-12);
    mbl_sweep_free(sw);
}

TEST(bad_input)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    mbl_status st;
    mbl_sweep *sw = NULL;
    so.axis[0] = (mbl_sweep_axis){"nope", 0, 1, 5};
    CHECK(run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st) == MBL_EARG && !sw);
    CHECK(strstr(st.msg, "no parameter 'nope'") != NULL);
    so.axis[0] = (mbl_sweep_axis){"v", 0, 1, 1};
    CHECK(run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st) == MBL_EARG && strstr(st.msg, "COUNT"));
    so.axis[0] = (mbl_sweep_axis){"v", 1, 1, 5};
    CHECK(run_sweep("examples/whipple_bicycle.yaml", &so, &sw, &st) == MBL_EARG && strstr(st.msg, "FROM"));
    /* set_param: refused where the value is baked in, allowed for a leaf parameter */
    mbl_model *md = NULL;
    CHECK(mbl_model_load_file("examples/whipple_bicycle.yaml", NULL, 0, &md, &st) == 0);
    if (md) {
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        for (int i = 0; i < info.nparam; i++) {
            const char *nm = mbl_model_param_name(md, i);
            if (!strcmp(nm, "v")) CHECK(mbl_model_set_param(md, i, 3.0, &st) == 0 && mbl_model_param_value(md, i) == 3.0);
            if (!strcmp(nm, "w")) CHECK(mbl_model_set_param(md, i, 1.1, &st) == MBL_EARG && strstr(st.msg, "'w'"));
        }
        CHECK(mbl_model_set_param(md, info.nparam, 1.0, &st) == MBL_EARG);
        mbl_model_free(md);
    }
    /* a parameter used by an initial value or by linearize.time is refused, a leaf one is not */
    const char *txt = "model: dae\nparameters: {x0: 0.1, k: 2, t0: 1}\ncoordinates: {x: x0}\n"
                      "kinetic_energy: \"0.5*der(x)^2\"\npotential_energy: \"0.5*k*x^2\"\n"
                      "linearize: {at: given, time: t0}\n";
    CHECK(mbl_model_load_string(txt, strlen(txt), "inline.yaml", NULL, 0, &md, &st) == 0);
    if (md) {
        CHECK(mbl_model_set_param(md, 0, 0.2, &st) == MBL_EARG && strstr(st.msg, "'x0'"));
        CHECK(mbl_model_set_param(md, 1, 3.0, &st) == 0);
        CHECK(mbl_model_set_param(md, 2, 2.0, &st) == MBL_EARG && strstr(st.msg, "'t0'"));
        CHECK(mbl_model_set_param(md, 1, NAN, &st) == MBL_EARG);
        mbl_model_free(md);
        md = NULL;
    }
    CHECK(mbl_model_load_file("examples/mech/rigid_rotor.yaml", NULL, 0, &md, &st) == 0);
    if (md) {
        CHECK(mbl_model_set_param(md, 0, 21.0, &st) == MBL_EARG && strstr(st.msg, "mechanism"));
        mbl_model_free(md);
    }
}

/* Tracking alone: a crossing (distinct shapes, eigenvalues listed sorted so that they swap) and a
 * veering (a 2 x 2 symmetric pencil with coupling d: the branches never cross). */
TEST(track_crossing_and_veering)
{
    enum { NP = 41 };
    double lre[NP * 2], lim[NP * 2], sre[NP * 4], sim[NP * 4], x[NP];
    int perm[NP * 2];
    mbl_status st;
    for (int p = 0; p < NP; p++) {
        x[p] = (double)p / (NP - 1);
        double a = 1 + x[p], b = 2 - x[p]; /* cross at x = 0.5 */
        int sw = a > b;                    /* listed sorted */
        lre[2 * p] = lre[2 * p + 1] = 0;
        lim[2 * p + sw] = a, lim[2 * p + 1 - sw] = b;
        memset(sre + 4 * p, 0, 4 * sizeof(double));
        memset(sim + 4 * p, 0, 4 * sizeof(double));
        sre[4 * p + 2 * sw + 0] = 1;     /* shape of a: (1, 0) */
        sre[4 * p + 2 * (1 - sw) + 1] = 1; /* shape of b: (0, 1) */
    }
    CHECK(mbl_track_modes(NP, 2, 2, lre, lim, NULL, NULL, sre, sim, x, NULL, 1.0, perm, NULL, &st) == 0);
    for (int p = 0; p < NP; p++) {
        double a = 1 + x[p];
        CHECK_CLOSE(lim[2 * p + perm[2 * p]], a, 1e-15); /* branch 0 is the rising one throughout */
    }
    /* veering: eigenvalues of [[1 + x, d], [d, 2 - x]] */
    double d = 0.05;
    for (int p = 0; p < NP; p++) {
        double a = 1 + x[p], b = 2 - x[p], m = 0.5 * (a + b), r = sqrt(0.25 * (a - b) * (a - b) + d * d);
        double l[2] = {m - r, m + r};
        int swp = p % 2; /* list them in alternating order */
        for (int j = 0; j < 2; j++) {
            int k = j ^ swp;
            lre[2 * p + k] = 0, lim[2 * p + k] = l[j];
            /* eigenvector of l[j]: (d, l - a) */
            double vx = d, vy = l[j] - a, nn = hypot(vx, vy);
            sre[4 * p + 2 * k] = vx / nn, sre[4 * p + 2 * k + 1] = vy / nn;
            sim[4 * p + 2 * k] = sim[4 * p + 2 * k + 1] = 0;
        }
    }
    CHECK(mbl_track_modes(NP, 2, 2, lre, lim, NULL, NULL, sre, sim, x, NULL, 1.0, perm, NULL, &st) == 0);
    int b0 = perm[0] == (0 ^ 0) ? 0 : 1; /* the branch that starts on the lower curve */
    for (int p = 0; p < NP; p++) {
        double a = 1 + x[p], b = 2 - x[p], m = 0.5 * (a + b), r = sqrt(0.25 * (a - b) * (a - b) + d * d);
        CHECK_CLOSE(lim[2 * p + perm[2 * p + b0]], m - r, 1e-15);
    }
}

/* Two-mass chain: G(s) from the force on m2 to x1, x2 and der(x2), closed form, s = i w. */
static double complex g_closed(double w, int out, double m1, double m2, double k1, double k2, double c1, double c2)
{
    double complex s = I * w;
    double complex a11 = m1 * s * s + (c1 + c2) * s + k1 + k2, a12 = -(c2 * s + k2), a22 = m2 * s * s + c2 * s + k2;
    double complex det = a11 * a22 - a12 * a12;
    double complex x1 = -a12 / det, x2 = a11 / det;
    return out == 0 ? x1 : out == 1 ? x2 : s * x2;
}

TEST(two_mass_freqresp)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL, *desc = NULL;
    CHECK_MSG(mbl_model_load_file("tests/study/two_mass.yaml", NULL, 0, &md, &st) == 0 &&
                  mbl_operating_point(md, NULL, &pt, &st) == 0 && mbl_linearize(md, pt, NULL, &lin, &st) == 0,
              "%s", st.msg);
    if (!lin) goto out;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = "descriptor";
    CHECK_MSG(mbl_linearize(md, pt, &lo, &desc, &st) == 0, "%s", st.msg);
    enum { NW = 300 };
    double w[NW];
    for (int k = 0; k < NW; k++) w[k] = exp(log(0.5) + (log(200.0) - log(0.5)) * k / (NW - 1));
    for (int out = 0; out < 3; out++)
        for (int with_desc = 0; with_desc < 2; with_desc++) {
            mbl_freqresp_result *r = NULL;
            CHECK_MSG(mbl_freqresp(lin, with_desc ? desc : NULL, 0, out, w, NW, &r, &st) == 0, "%s", st.msg);
            if (!r) continue;
            double dev = 0;
            int ndesc = 0;
            for (int k = 0; k < NW; k++) {
                double complex g = g_closed(w[k], out, 2, 0.5, 800, 300, 0.4, 0.1);
                dev = fmax(dev, cabs(r->re[k] + I * r->im[k] - g) / cabs(g));
                CHECK_REL(r->mag[k], cabs(g), 1e-12);
                ndesc += r->form[k] == MBL_FR_DESCRIPTOR;
            }
            CHECK_MSG(dev < 1e-12, "output %d, desc %d: %g", out, with_desc, dev);
            printf("two-mass chain, output %d%s: largest relative deviation from the closed form %.2e\n", out,
                   with_desc ? " (descriptor offered)" : "", dev);
            if (!with_desc) CHECK_EQ_INT(ndesc, 0);
            mbl_freqresp_free(r);
        }
out:
    mbl_linear_free(desc), mbl_linear_free(lin), mbl_point_free(pt), mbl_model_free(md);
}

/* Light damping: the peak of |G| sits at the undamped natural frequency, the root of
 * m1 m2 w^4 - (m1 k2 + m2 (k1 + k2)) w^2 + k1 k2 = 0. */
TEST(resonance_peak)
{
    mbl_setting sets[2] = {{"c1", 1e-4}, {"c2", 1e-4}};
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    CHECK_MSG(mbl_model_load_file("tests/study/two_mass.yaml", sets, 2, &md, &st) == 0 &&
                  mbl_operating_point(md, NULL, &pt, &st) == 0 && mbl_linearize(md, pt, NULL, &lin, &st) == 0,
              "%s", st.msg);
    if (!lin) goto out;
    double m1 = 2, m2 = 0.5, k1 = 800, k2 = 300, bq = m1 * k2 + m2 * (k1 + k2);
    double w2[2] = {(bq - sqrt(bq * bq - 4 * m1 * m2 * k1 * k2)) / (2 * m1 * m2),
                    (bq + sqrt(bq * bq - 4 * m1 * m2 * k1 * k2)) / (2 * m1 * m2)};
    for (int j = 0; j < 2; j++) {
        double wn = sqrt(w2[j]);
        enum { NW = 4001 };
        static double w[NW];
        for (int k = 0; k < NW; k++) w[k] = wn * (0.99 + 0.02 * k / (NW - 1));
        mbl_freqresp_result *r = NULL;
        CHECK(mbl_freqresp(lin, NULL, 0, 1, w, NW, &r, &st) == 0);
        if (!r) continue;
        int kmax = 0;
        for (int k = 1; k < NW; k++)
            if (r->mag[k] > r->mag[kmax]) kmax = k;
        CHECK_MSG(fabs(r->w[kmax] - wn) <= 1e-5 * wn, "peak at %.10g, undamped %.10g", r->w[kmax], wn);
        CHECK(r->mag[kmax] > 100 * r->mag[0]);
        mbl_freqresp_free(r);
    }
out:
    mbl_linear_free(lin), mbl_point_free(pt), mbl_model_free(md);
}

/* With exact derivatives the first step is predicted too: lambda_1 = i (1 + x) and lambda_2 =
 * i (1.1 - x) with equal shapes cross within the first step (x = 0 -> 0.1); extrapolation has no
 * history there and follows the nearest value (the wrong branch), the derivative does not. */
TEST(track_derivative_predictor)
{
    double lre[4] = {0, 0, 0, 0}, lim[4] = {1.0, 1.1, 1.0, 1.1}; /* listed sorted at both points */
    double dre[4] = {0, 0, 0, 0}, dim[4] = {1, -1, -1, 1};      /* d/dx of each listed eigenvalue */
    double sre[8] = {1, 0, 1, 0, 1, 0, 1, 0}, sim[8] = {0}, x[2] = {0, 0.1};
    int perm[4];
    mbl_status st;
    CHECK(mbl_track_modes(2, 2, 2, lre, lim, dre, dim, sre, sim, x, NULL, 1.0, perm, NULL, &st) == 0);
    CHECK_CLOSE(lim[2 + perm[2]], 1.1, 1e-15); /* the branch from 1.0 rises to 1.1 */
    CHECK_CLOSE(lim[2 + perm[3]], 1.0, 1e-15);
    CHECK(mbl_track_modes(2, 2, 2, lre, lim, NULL, NULL, sre, sim, x, NULL, 1.0, perm, NULL, &st) == 0);
    CHECK_CLOSE(lim[2 + perm[2]], 1.0, 1e-15); /* without: the nearest value */
}

/* The sensitivity predictor in a sweep (docs/study.md, "Tracking"): tests/study/crossing_2dof.yaml
 * has the eigenvalues +-i (1 + p) and +-i (1.2 + 0.8 sin 2 pi p) exactly, with shapes whose MAC is
 * 0.9996 (the MAC cannot tell them apart). Over p = 0..1 in 7 points the second pair dips to
 * 0.507 and climbs back: extrapolating the branch from +1.2i linearly through 1.89i, 1.2i, 0.507i
 * predicts -0.186i at p = 5/6 and hops to the conjugate -0.507i there; the exact derivative
 * (slope -2.51 at p = 2/3) predicts 0.507 - 0.42 = 0.09i and stays on +0.507i. */
TEST(sweep_sensitivity_predictor)
{
    const double two_pi = 6.283185307179586;
    int predictors[3] = {MBL_PREDICT_DEFAULT, MBL_PREDICT_SENSITIVITY, MBL_PREDICT_LINEAR};
    for (int k = 0; k < 3; k++) {
        mbl_sweep_options so;
        mbl_sweep_options_default(&so);
        so.naxes = 1;
        so.axis[0] = (mbl_sweep_axis){"p", 0, 1, 7};
        so.predictor = predictors[k];
        so.threads = 1 + k % 2;
        mbl_status st;
        mbl_sweep *sw = NULL;
        CHECK_MSG(run_sweep("tests/study/crossing_2dof.yaml", &so, &sw, &st) == 0, "%s", st.msg);
        if (!sw) continue;
        CHECK_EQ_INT(sw->nmodes, 4);
        CHECK_EQ_INT(sw->predictor, k < 2 ? MBL_PREDICT_SENSITIVITY : MBL_PREDICT_LINEAR);
        CHECK_EQ_INT(sw->npredicted, k < 2 ? 7 : 0);
        int b1 = branch_near(sw, 0, 0, 1.0), b2 = branch_near(sw, 0, 0, 1.2);
        int hops = 0;
        for (int p = 0; p < 7; p++) {
            double x = sw->value[p], w1 = 1 + x, w2 = 1.2 + 0.8 * sin(two_pi * x);
            size_t o = (size_t)p * 4;
            if (k < 2) {
                CHECK_CLOSE(sw->im[o + b1], w1, 1e-12);
                CHECK_CLOSE(sw->im[o + b2], w2, 1e-12);
            } else {
                hops += fabs(sw->im[o + b2] - w2) > 1e-6;
            }
        }
        if (k == 2) { /* linear: on the conjugate from p = 5/6 on */
            CHECK_EQ_INT(hops, 2);
            CHECK_CLOSE(sw->im[5 * 4 + b2], -(1.2 + 0.8 * sin(two_pi * 5.0 / 6.0)), 1e-12);
        }
        mbl_sweep_free(sw);
    }
}

/* Warm starts (docs/study.md, "How a point is computed"): an equilibrium started from its own
 * q and multipliers takes no Newton step and gives them back; a sweep of the N = 20 four-bar
 * starts all but the first point of each block from the previous points and agrees with
 * operating points found from the file's guess (the same point to 1e-10). */
TEST(warm_start)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *a = NULL, *b = NULL;
    CHECK_MSG(mbl_model_load_file("examples/fourbar_N20.yaml", NULL, 0, &md, &st) == 0, "%s", st.msg);
    if (!md) return;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    CHECK_MSG(mbl_operating_point(md, &po, &a, &st) == 0, "%s", st.msg);
    if (!a) goto out;
    CHECK(a->iterations > 0 && a->m > 0);
    po.q = a->q, po.lambda = a->lambda, po.mu = a->mu;
    CHECK_MSG(mbl_operating_point(md, &po, &b, &st) == 0, "%s", st.msg);
    if (!b) goto out;
    CHECK_EQ_INT(b->iterations, 0);
    for (int i = 0; i < a->m; i++) CHECK(a->lambda[i] == b->lambda[i]);
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"k", 20, 28, 64};
    mbl_sweep *sw = NULL, *cold = NULL;
    CHECK_MSG(run_sweep("examples/fourbar_N20.yaml", &so, &sw, &st) == 0, "%s", st.msg);
    so.axis[0].count = 2; /* blocks of one point: every point from the file's guess */
    so.axis[0].to = 20 + 8.0 / 63;
    CHECK_MSG(run_sweep("examples/fourbar_N20.yaml", &so, &cold, &st) == 0, "%s", st.msg);
    if (sw && cold) {
        CHECK_EQ_INT(sw->nwarm, 64 - 16); /* blocks of 4 */
        CHECK_EQ_INT(cold->nwarm, 0);
        for (int b2 = 0; b2 < sw->nmodes; b2++) {
            CHECK_CLOSE(sw->im[b2], cold->im[b2], 1e-10 * fmax(1, fabs(cold->im[b2])));
            CHECK_CLOSE(sw->im[sw->nmodes + b2], cold->im[cold->nmodes + b2], 1e-10 * fmax(1, fabs(cold->im[b2])));
        }
    }
    mbl_sweep_free(sw), mbl_sweep_free(cold);
out:
    mbl_point_free(a), mbl_point_free(b), mbl_model_free(md);
}

/* Warm-started equilibria (docs/study.md, "Warm start"): every point but a block's first starts from
 * the previous point plus its exact tangent dq/dp (from the block's third point the quadratic through
 * the point before) and is accepted after one step (a chord step from the third point) on a
 * smooth sweep (the N = 5 four-bar in steps of 0.008; at most two on the quartic well's lower
 * branch in steps of 0.01, where q'' h^2 leaves 1e-5 for the first step); on the quartic well the
 * sweep crosses the fold at p = 2/(3 sqrt 3), where the prediction from the ended lower branch is
 * rejected and the point recovered on the upper branch. Every eigenvalue against the closed form
 * lambda^2 = 1 - 3 q^2 at the roots of q^3 - q - p = 0 (trigonometric / hyperbolic form), and the
 * results of 1 and 2 threads bit for bit the same. */
static int cubic_roots(double p, double *r)
{
    double a = 3.0 * sqrt(3.0) * p / 2.0, s = 2.0 / sqrt(3.0);
    if (fabs(a) <= 1) {
        for (int k = 0; k < 3; k++) r[k] = s * cos(acos(a) / 3.0 - TWO_PI * k / 3.0);
        return 3;
    }
    r[0] = copysign(s * cosh(acosh(fabs(a)) / 3.0), p);
    return 1;
}

static mbl_sweep *warm_sweep(const char *path, const char *param, double from, double to, int count, int threads)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){param, from, to, count};
    so.threads = threads;
    mbl_status st;
    mbl_sweep *sw = NULL;
    CHECK_MSG(run_sweep(path, &so, &sw, &st) == 0, "%s", st.msg);
    return sw;
}

static int same_bits(const mbl_sweep *a, const mbl_sweep *b)
{
    size_t len = (size_t)a->npoints * (size_t)a->nmodes * sizeof(double);
    return a->npoints == b->npoints && a->nmodes == b->nmodes && !memcmp(a->re, b->re, len) && !memcmp(a->im, b->im, len);
}

TEST(warm_newton_steps)
{
    /* the quartic well: 200 points, blocks of 12 (200 / 16); the fold between points 137 and 138 */
    mbl_sweep *sw = warm_sweep("tests/study/fold_cubic.yaml", "p", -1, 1, 200, 1);
    mbl_sweep *sw2 = warm_sweep("tests/study/fold_cubic.yaml", "p", -1, 1, 200, 2);
    if (sw && sw2) {
        CHECK_EQ_INT(sw->nfailed, 0);
        CHECK(sw->nwarm_rejected >= 1);
        CHECK(same_bits(sw, sw2));
        int chunk = 200 / 16, rejected_past_fold = 0;
        for (int p = 0; p < sw->npoints; p++) {
            double x = sw->value[p], r[3];
            int nr = cubic_roots(x, r);
            /* before the fold: the lower branch (the smallest root), after it the only root */
            double q = r[0];
            for (int k = 1; k < nr; k++) q = fmin(q, r[k]);
            for (int b = 0; b < sw->nmodes; b++) {
                double re = sw->re[(size_t)p * sw->nmodes + b], im = sw->im[(size_t)p * sw->nmodes + b];
                CHECK_CLOSE(re * re - im * im, 1 - 3 * q * q, 1e-9 * fmax(1, fabs(1 - 3 * q * q)));
            }
            if (p % chunk && x < 0.3) CHECK_MSG(sw->steps[p] >= 1 && sw->steps[p] <= OPOINT_WARM_STEPS_TEST, "p = %g: %d Newton steps", x, sw->steps[p]);
            if (x > 0.385 && x < 0.39) rejected_past_fold = sw->steps[p] > OPOINT_WARM_STEPS_TEST;
        }
        CHECK(rejected_past_fold); /* the first point past the fold: solved cold (more steps) */
        /* chord steps (issue 34, item 2): with the tangent's factorization at the previous point,
         * J = 3 q^2 - 1 changing by 2-5 % a step near the fold, the chord contracts only 20-50 times
         * and is not kept: those points are corrected by full Newton from the prediction (and still
         * agree with the closed form above) */
        CHECK(sw->warm_nchord >= 1);
        CHECK_MSG(sw->warm_nchord_fallback >= 1, "%lld chord steps, %lld not kept", sw->warm_nchord,
                  sw->warm_nchord_fallback);
    }
    mbl_sweep_free(sw), mbl_sweep_free(sw2);
    /* the N = 5 four-bar, k = 20..28 in 1024 points (16 blocks of 64): 1008 warm points of 1 step */
    sw = warm_sweep("examples/fourbar_N5.yaml", "k", 20, 28, 1024, 1);
    sw2 = warm_sweep("examples/fourbar_N5.yaml", "k", 20, 28, 1024, 2);
    if (sw && sw2) {
        CHECK_EQ_INT(sw->nfailed, 0);
        CHECK_EQ_INT(sw->nwarm_ok, 1024 - 16);
        CHECK_EQ_INT(sw->nwarm_rejected, 0);
        CHECK(same_bits(sw, sw2));
        /* a chord step with the held factorization (J some points back, opoint_warm_tangent) that
         * contracts too little for the test (below 1e-2) is followed by one full Newton step: rare */
        int two = 0;
        for (int p = 0; p < sw->npoints; p++)
            if (p % 64) {
                CHECK_MSG(sw->steps[p] == 1 || sw->steps[p] == 2, "k = %g: %d Newton steps", sw->value[p], sw->steps[p]);
                two += sw->steps[p] == 2;
            }
        CHECK_MSG(two <= 10, "%d warm points of 2 steps", two);
        /* the work per warm point (issue 34, item 2, third pass): F at the predicted point and
         * after one chord step solved with the previous point's tangent factorization (no Jacobian
         * at the prediction, no factorization for the step), the Jacobian only at the accepted
         * point (the same values then serve the re-linearization and the tangent), one
         * factorization (the tangent's), dF/dp once per tangent. The exception is each block's
         * first warm point (16), predicted linearly from one point (error O(h^2)): one full Newton
         * step there, as before (a Jacobian and a factorization more), and the points of two steps
         * above (an F, a Jacobian and a factorization more). Since session 23 most tangents are
         * solved with the held factorization (one refinement step, no factorization): the
         * factorizations are the blocks' first tangents and steps, the renewals (every
         * OPOINT_WARM_HELD_AGE tangents at most, or after a chord step that contracted little)
         * and the extra steps. The scaled residual: at the accepted point, and at the prediction
         * from the step's matrix (the chord's contraction). Since session 26 a block's last point
         * takes no tangent (only the block's next point would read it); each block's first point
         * evaluates its tangent's Jacobian (no warm step evaluated it there). Since session 27 a
         * block's points take a tangent only until the block has three (its points j = 0, 1, 2:
         * 3 per block); from j = 3 on the next point is predicted by the cubic through the last
         * four (no tangent, no dF/dp; the chord step with the factorization held), and the held
         * factorization is renewed at the point (J factored, no tangent: no Jacobian more) when
         * it is OPOINT_WARM_SKIP_AGE points old. Its age: 0 after j = 1's full Newton step, 1
         * and 2 after the tangents at j = 1 and 2, j after the point j without a tangent, so
         * the renewals fall at j = 17, 34, 51 of j <= 62 (j = 63, the last, takes nothing):
         * (64 - 2) / (OPOINT_WARM_SKIP_AGE + 1) a block; a point of two steps renews it there
         * (one more at most each). Since session 28 a block's first point takes the tangent the
         * chain of block starts made there (opoint_warm_adopt_tangent: no Jacobian, dF/dp or
         * factorization there; j = 1's full Newton step makes the block's first factorization):
         * 2 tangents a block, one Jacobian and one factorization fewer; and the held factorization
         * lives up to OPOINT_WARM_SKIP_AGE_MAX points while the cubic's chord steps leave less than
         * half abs_tol, so the renewals below are an upper bound. */
        long long ok = sw->nwarm_ok, tangents = sw->warm_ndfdp, blocks = 16;
        long long renew = blocks * ((64 - 2) / (OPOINT_WARM_SKIP_AGE_TEST + 1));
        CHECK_EQ_INT((int)tangents, (int)(2 * blocks));
        CHECK_EQ_INT((int)sw->warm_nchord, (int)(ok - blocks));
        CHECK_EQ_INT((int)sw->warm_nchord_fallback, 0);
        CHECK_EQ_INT((int)sw->warm_nF, (int)(2 * ok + two));
        CHECK_EQ_INT((int)sw->warm_njac, (int)(ok + blocks + two));
        CHECK_MSG(sw->warm_nfactor >= blocks + two && sw->warm_nfactor <= blocks + renew + 2 * two,
                  "%lld factorizations, %lld tangents", sw->warm_nfactor, tangents);
        CHECK_MSG(sw->warm_nscaled <= 2 * ok, "%lld scaled residuals for %lld warm points", sw->warm_nscaled, ok);
    }
    mbl_sweep_free(sw), mbl_sweep_free(sw2);
}

/* Block starts (docs/study.md, "Warm start"): each block's first point is continued from the
 * previous block's first point (the warm corrector's tangent, a few full Newton steps), not solved
 * from the file's guess: fewer Newton steps than the file's guess takes at the same k, and the same
 * eigenvalues as that cold point (the first of a two-point sweep: blocks of one point, from the
 * file's guess) to the Newton tolerance. */
TEST(block_starts)
{
    mbl_sweep *sw = warm_sweep("examples/fourbar_N5.yaml", "k", 20, 28, 1024, 1);
    mbl_model *md = NULL;
    mbl_status st;
    CHECK_MSG(mbl_model_load_file("examples/fourbar_N5.yaml", NULL, 0, &md, &st) == 0, "%s", st.msg);
    int ik = -1;
    mbl_model_info info;
    if (md) mbl_model_get_info(md, &info);
    for (int i = 0; md && i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), "k")) ik = i;
    CHECK(ik >= 0);
    for (int b = 1; sw && ik >= 0 && b < 16; b += 5) {
        int p = 64 * b;
        double k = sw->value[p];
        mbl_point *cold = NULL;
        CHECK_MSG(mbl_model_set_param(md, ik, k, &st) == 0, "%s", st.msg);
        CHECK_MSG(mbl_operating_point(md, NULL, &cold, &st) == 0, "%s", st.msg);
        if (cold) CHECK_MSG(sw->steps[p] >= 1 && sw->steps[p] < cold->iterations, "k = %g: %d steps, %d from the file's guess", k, sw->steps[p], cold->iterations);
        mbl_point_free(cold);
        mbl_sweep *one = warm_sweep("examples/fourbar_N5.yaml", "k", k, k + 1, 2, 1); /* blocks of one point */
        for (int j = 0; one && j < sw->nmodes; j++) {
            double a = sw->im[(size_t)p * sw->nmodes + j], c = one->im[j];
            CHECK_CLOSE(a, c, 1e-10 * fmax(1, fabs(c)));
            CHECK_CLOSE(sw->re[(size_t)p * sw->nmodes + j], one->re[j], 1e-10 * fmax(1, fabs(c)));
        }
        mbl_sweep_free(one);
    }
    mbl_sweep_free(sw);
    mbl_model_free(md);
}

/* Warm points (chord step, the swept parameter's dR/dp column, the equilibrium's rows alone, the
 * block's previous point reused) against the same points solved cold: the N = 20 four-bar in 240
 * points (blocks of 15: 13 warm points each), every eigenvalue at points inside the blocks equal
 * to a one-point sweep's at that k (the operating point from the file's guess) to 1e-10. */
TEST(warm_points_cold)
{
    mbl_sweep *sw = warm_sweep("examples/fourbar_N20.yaml", "k", 20, 28, 240, 1);
    if (!sw) return;
    CHECK_EQ_INT(sw->nfailed, 0);
    CHECK_MSG(sw->nwarm_ok >= 200 && sw->nwarm_rejected == 0, "%d warm points accepted, %d rejected", sw->nwarm_ok,
              sw->nwarm_rejected);
    CHECK_MSG(sw->warm_nchord >= sw->nwarm_ok - 40 && sw->warm_nchord_fallback == 0, "%lld chord steps, %lld not kept",
              sw->warm_nchord, sw->warm_nchord_fallback);
    /* tangents at each block's points j = 1, 2 only (blocks of 15; j = 0's the chain of block
     * starts made, opoint_warm_adopt_tangent; the later ones predicted by the cubic through the last
     * four points, opoint_warm_skip_tangent) */
    CHECK_EQ_INT((int)sw->warm_ndfdp, 2 * 16);
    /* here (h = 0.033) many points take a full Newton step after their chord step (133 of 224
     * since session 27, every one before): at most 1.5 factorizations a warm point (2.14 when
     * every tangent was factored, 1.21 with the held tangents of session 23, 0.88 now) */
    CHECK_MSG(sw->warm_nfactor <= sw->nwarm_ok * 3 / 2, "%lld factorizations, %d warm points", sw->warm_nfactor,
              sw->nwarm_ok);
    for (int p = 7; p < sw->npoints; p += 29) {
        double k = sw->value[p];
        mbl_sweep *one = warm_sweep("examples/fourbar_N20.yaml", "k", k, k + 1, 2, 1); /* its first point: cold */
        CHECK(one && one->nmodes == sw->nmodes && one->steps[0] > 1);
        for (int j = 0; one && j < sw->nmodes; j++) {
            double c = hypot(one->re[j], one->im[j]);
            CHECK_CLOSE(sw->re[(size_t)p * sw->nmodes + j], one->re[j], 1e-10 * fmax(1, c));
            CHECK_CLOSE(sw->im[(size_t)p * sw->nmodes + j], one->im[j], 1e-10 * fmax(1, c));
        }
        mbl_sweep_free(one);
    }
    mbl_sweep_free(sw);
}

int main(void)
{
    RUN(track_crossing_and_veering);
    RUN(track_derivative_predictor);
    RUN(sweep_sensitivity_predictor);
    RUN(warm_start);
    RUN(warm_newton_steps);
    RUN(block_starts);
    RUN(warm_points_cold);
    RUN(bad_input);
    RUN(bicycle_table2);
    RUN(threads_identical);
    RUN(phase_times_on_request);
    RUN(reload_path_with_sets);
    RUN(time_sweep);
    RUN(two_parameter_grid);
    RUN(rigid_rotor_campbell);
    RUN(rotor_stator_fig7);
    RUN(two_mass_freqresp);
    RUN(resonance_peak);
    return test_summary("study");
}
