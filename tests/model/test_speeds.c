/* Issue 13, source 000 Eq. 14-17: generalized speeds u = T(q) q' (velocities: u: expr) give the
 * same eigenvalues as the coordinate rates: the rolling disc upright (closed form) and in a
 * steady turn (where T != I and [T q']_q != 0); one-line errors for a singular T. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/model.h"
#include "test.h"

#ifndef MBLIN_SOURCE_DIR
#define MBLIN_SOURCE_DIR "."
#endif

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
} run;

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
    memset(r, 0, sizeof *r);
}

/* load a file, find the point (opt: NULL for the file's), linearize (augmented) and modes */
static int run_file(const char *rel, const mbl_opoint_options *opt, run *r, mbl_status *st)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", MBLIN_SOURCE_DIR, rel);
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_file(path, NULL, 0, &r->md, st);
    if (!rc) rc = mbl_operating_point(r->md, opt, &r->pt, st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, st);
    return rc;
}

/* largest distance of an eigenvalue of a from its nearest unused one in b, relative to the largest |s| */
static double spectrum_dev(const mbl_modes *a, const mbl_modes *b)
{
    if (a->nx != b->nx) return INFINITY;
    int used[64] = {0};
    double big = 1e-300, dev = 0;
    for (int i = 0; i < a->nx; i++) big = fmax(big, hypot(a->modes[i].re, a->modes[i].im));
    for (int i = 0; i < a->nx && i < 64; i++) {
        int best = -1;
        double bd = INFINITY;
        for (int j = 0; j < b->nx && j < 64; j++) {
            double d = hypot(a->modes[i].re - b->modes[j].re, a->modes[i].im - b->modes[j].im);
            if (!used[j] && d < bd) bd = d, best = j;
        }
        if (best >= 0) used[best] = 1;
        dev = fmax(dev, bd / big);
    }
    return dev;
}

static const char *qdot_file = "tests/model/rolling_disc_qdot.yaml";
static const char *speed_file = "examples/rolling_disc_speeds.yaml";

TEST(disc_upright)
{
    double a = 0.3, g = 9.81, W = 8, w = sqrt((12 * a * W * W - 4 * g) / (5 * a));
    run rq, ru;
    mbl_status st;
    int rc = run_file(qdot_file, NULL, &rq, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    int rc2 = run_file(speed_file, NULL, &ru, &st);
    CHECK_MSG(rc2 == 0, "%s", st.msg);
    if (!rc && !rc2) {
        const mbl_modes *ms[2] = {rq.modes, ru.modes};
        for (int f = 0; f < 2; f++) {
            int found = 0;
            for (int i = 0; i < ms[f]->nx; i++)
                if (fabs(ms[f]->modes[i].im - w) <= 1e-10 * w && fabs(ms[f]->modes[i].re) <= 1e-10 * w) found++;
            CHECK_MSG(found == 1, "file %d: +i w = %.15g not found", f, w);
        }
        double dev = spectrum_dev(rq.modes, ru.modes);
        CHECK_MSG(dev <= 1e-10, "speeds vs der(q): deviation %.3g", dev);
        printf("rolling disc upright: speeds vs der(q), largest relative eigenvalue deviation %.3g\n", dev);
        CHECK(ru.lin->z1 == 3 && !strcmp(ru.lin->state_names[5], "u1") && !strcmp(ru.lin->state_names[7], "u3"));
    }
    run_free(&rq), run_free(&ru);
}

/* The steady turn at lean th0 and turning rate psi' = p: th'' is affine in the spin rate phi' (the
 * heading and spin accelerations vanish with th' = 0), so one secant step finds phi'. */
TEST(disc_steady_turn)
{
    double a = 0.3, th0 = 0.25, p = 1.5;
    double q[5] = {0, 0, th0, 0, 0}, v[5] = {0, 0, 0, p, 0};
    mbl_opoint_options o;
    mbl_opoint_options_default(&o);
    o.at = MBL_AT_GIVEN;
    o.q = q;
    o.v = v;
    double f[2], s[2] = {5, 9};
    run r;
    mbl_status st;
    for (int k = 0; k < 2; k++) {
        v[4] = s[k], v[0] = a * s[k];
        int rc = run_file(qdot_file, &o, &r, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        f[k] = rc ? NAN : r.pt->vdot[2];
        run_free(&r);
    }
    double phid = s[0] - f[0] * (s[1] - s[0]) / (f[1] - f[0]);
    v[4] = phid, v[0] = a * phid;
    run rq, ru;
    int rc = run_file(qdot_file, &o, &rq, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    int rc2 = run_file(speed_file, &o, &ru, &st);
    CHECK_MSG(rc2 == 0, "%s", st.msg);
    if (!rc && !rc2) {
        /* steady: th'' = psi'' = phi'' = 0 */
        for (int i = 2; i < 5; i++) CHECK_MSG(fabs(rq.pt->vdot[i]) < 1e-10, "vdot[%d] = %g", i, rq.pt->vdot[i]);
        double dev = spectrum_dev(rq.modes, ru.modes);
        CHECK_MSG(dev <= 1e-10, "speeds vs der(q) in the steady turn: deviation %.3g", dev);
        printf("rolling disc steady turn (phi' = %.6f): speeds vs der(q), largest relative eigenvalue deviation %.3g\n",
               phid, dev);
        int osc = 0;
        for (int i = 0; i < rq.modes->nx; i++) osc += fabs(rq.modes->modes[i].im) > 1e-3;
        CHECK(osc >= 2); /* a non-trivial spectrum */
    }
    run_free(&rq), run_free(&ru);
}

/* ---- a bicycle-like vehicle (tests/model/bicycle_like_*.yaml) running straight: speeds whose T
 * depends on the heading (stationary there) vs coordinate rates ---- */
TEST(bicycle_like)
{
    run rq, ru;
    mbl_status st;
    int rc = run_file("tests/model/bicycle_like_qdot.yaml", NULL, &rq, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    int rc2 = run_file("tests/model/bicycle_like_speeds.yaml", NULL, &ru, &st);
    CHECK_MSG(rc2 == 0, "%s", st.msg);
    if (!rc && !rc2) {
        for (int i = 0; i < 5; i++) CHECK(fabs(rq.pt->vdot[i]) < 1e-12); /* a steady motion */
        double dev = spectrum_dev(rq.modes, ru.modes);
        CHECK_MSG(dev <= 1e-10, "bicycle-like: speeds vs der(q): deviation %.3g", dev);
        printf("bicycle-like: speeds vs der(q), largest relative eigenvalue deviation %.3g\n", dev);
        int nonzero = 0;
        for (int i = 0; i < rq.modes->nx; i++) nonzero += hypot(rq.modes->modes[i].re, rq.modes->modes[i].im) > 1e-3;
        CHECK_EQ_INT(nonzero, 4);
        CHECK(ru.lin->z1 == 3 && !strcmp(ru.lin->state_names[ru.lin->z0], "u1"));
    }
    run_free(&rq), run_free(&ru);
}

TEST(speed_errors)
{
    const char *text = "model: dae\n"
                       "parameters: {m: 2, l: 0.5, g: 9.81}\n"
                       "coordinates: {th: 0, ph: 0}\n"
                       "velocities: {u1: \"der(th)\", u2: \"sin(th)*der(ph)\"}\n"
                       "kinetic_energy: \"0.5*m*l^2*(der(th)^2 + sin(th)^2*der(ph)^2)\"\n"
                       "potential_energy: \"-m*g*l*cos(th)\"\n"
                       "linearize: {at: given}\n";
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(text, strlen(text), "sp.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        rc = mbl_operating_point(md, NULL, &pt, &st);
        CHECK(rc == MBL_ESINGULAR);
        CHECK_MSG(rc && strstr(st.msg, "sp.yaml:4:29: speed 'u2': T = du/dq' of the generalized speeds is singular") &&
                      !strchr(st.msg, '\n'),
                  "%s", st.msg);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
    md = NULL;
    const char *bad = "model: dae\ncoordinates: {th: 0}\nvelocities: {tht: 1}\nkinetic_energy: \"0.5*der(th)^2\"\n";
    rc = mbl_model_load_string(bad, strlen(bad), "sp.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc && strstr(st.msg, "sp.yaml:3:14: 'tht' in velocities is not a coordinate"), "%s", rc ? st.msg : "(loaded)");
    mbl_model_free(md);
    md = NULL;
    const char *dup = "model: dae\ncoordinates: {th: 0}\nvariables: {u: th}\nvelocities: {u: \"2*der(th)\"}\n"
                      "kinetic_energy: \"0.5*der(th)^2\"\n";
    rc = mbl_model_load_string(dup, strlen(dup), "sp.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc && strstr(st.msg, "sp.yaml:4:14: duplicate name 'u'"), "%s", rc ? st.msg : "(loaded)");
    mbl_model_free(md);
}

/* ---- spatial bodies: body angular velocities (speeds: body_angular_velocity) vs Euler-parameter
 * rates, at rest: the same eigenvalues (at a point with motion the two linearizations differ when
 * the speeds' T depends on coordinates that move, e.g. a spinning rotor's Euler parameters:
 * docs/linearization.md) ---- */

/* the example's text with "speeds: body_angular_velocity" after every "inertia:" line */
static char *with_body_speeds(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", MBLIN_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char in[65536];
    size_t n = fread(in, 1, sizeof in - 1, f);
    fclose(f);
    in[n] = '\0';
    char *out = malloc(2 * n + 4096), *o = out;
    if (!out) return NULL;
    for (const char *line = in; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        memcpy(o, line, len);
        o += len;
        const char *t = line;
        while (*t == ' ') t++;
        if (!strncmp(t, "inertia:", 8)) {
            int ind = (int)(t - line);
            o += sprintf(o, "%*sspeeds: body_angular_velocity\n", ind, "");
        }
        line += len;
    }
    *o = '\0';
    return out;
}

TEST(spatial_body_speeds)
{
    const char *files[2] = {"examples/mech/spatial_fourbar.yaml", "examples/mech/slider_pendulum_spatial.yaml"};
    for (int k = 0; k < 2; k++) {
        run re, rw;
        mbl_status st;
        int rc = run_file(files[k], NULL, &re, &st);
        CHECK_MSG(rc == 0, "%s: %s", files[k], st.msg);
        char *text = with_body_speeds(files[k]);
        CHECK(text != NULL);
        memset(&rw, 0, sizeof rw);
        int rc2 = text ? mbl_model_load_string(text, strlen(text), files[k], NULL, 0, &rw.md, &st) : -1;
        if (!rc2) rc2 = mbl_operating_point(rw.md, NULL, &rw.pt, &st);
        if (!rc2) rc2 = mbl_linearize(rw.md, rw.pt, NULL, &rw.lin, &st);
        if (!rc2) rc2 = mbl_modal(rw.lin, NULL, &rw.modes, &st);
        CHECK_MSG(rc2 == 0, "%s with body speeds: %s", files[k], st.msg);
        free(text);
        if (!rc && !rc2) {
            double dev = spectrum_dev(re.modes, rw.modes);
            CHECK_MSG(dev <= 1e-10, "%s: body angular velocities vs Euler-parameter rates: deviation %.3g", files[k], dev);
            printf("%s: body angular velocities vs Euler-parameter rates, largest relative eigenvalue deviation "
                   "%.3g; states %d and %d\n",
                   files[k], dev, re.lin->nx, rw.lin->nx);
            CHECK_EQ_INT(re.lin->nx, rw.lin->nx);
            int named = 0; /* the velocity states are the bodies' angular velocities */
            for (int i = rw.lin->z0; i < rw.lin->nx; i++) named += strstr(rw.lin->state_names[i], "_w") != NULL;
            CHECK(named >= 1);
        }
        run_free(&re), run_free(&rw);
    }
}

int main(void)
{
    RUN(disc_upright);
    RUN(disc_steady_turn);
    RUN(bicycle_like);
    RUN(speed_errors);
    RUN(spatial_body_speeds);
    return test_summary("speeds");
}
