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

/* Below this times the largest modulus an eigenvalue is in the zero cluster: the rolling disc's
 * zero eigenvalue in a steady turn is defective (+-5.4e-8 and +-5.6e-8 by the two formulations:
 * the split of a Jordan block, delta^(1/2) of rounding), held to ZERO_CLUSTER, not to 1e-10 */
#define ZERO_CLUSTER 1e-6

/* largest distance of an eigenvalue of a from its nearest unused one in b, relative to the largest
 * |s| (INFINITY where one of the zero cluster is farther than ZERO_CLUSTER) */

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
        if (hypot(a->modes[i].re, a->modes[i].im) > ZERO_CLUSTER * big) dev = fmax(dev, bd / big);
        else if (!(bd <= ZERO_CLUSTER * big)) dev = INFINITY; /* a zero cluster apart */
    }
    return dev;
}

static void check_body_speed_counts(const mbl_linear *lin, int nbodies, const char *what);

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
            check_body_speed_counts(rw.lin, -1, files[k]); 
            int named = 0; /* the velocity states are the bodies' angular velocities */
            for (int i = rw.lin->z0; i < rw.lin->nx; i++) named += strstr(rw.lin->state_names[i], "_w") != NULL;
            CHECK(named >= 1);
        }
        run_free(&re), run_free(&rw);
    }
}

/* Three velocity states per spatial body: with body angular velocities the linear model's
 * velocity states of a free body are its three speeds <body>_wx, _wy, _wz (the DAE keeps the four
 * Euler parameters and their normalization; the reduction leaves three rotational velocity states
 * per body either way), z1 == z0, the same count as with Euler-parameter rates; with joints
 * (nbodies < 0) some of the velocity states are body speeds. */
static void check_body_speed_counts(const mbl_linear *lin, int nbodies, const char *what)
{
    int named = 0;
    for (int i = lin->z0; i < lin->z0 + lin->z1; i++) {
        const char *s = lin->state_names[i];
        size_t l = strlen(s);
        named += l > 3 && s[l - 3] == '_' && s[l - 2] == 'w' && strchr("xyz", s[l - 1]) != NULL;
    }
    if (nbodies >= 0)
        CHECK_MSG(named == 3 * nbodies, "%s: %d body angular velocity states, expected %d", what, named, 3 * nbodies);
    else /* jointed bodies: some of the velocity states are body speeds */
        CHECK_MSG(named >= 1 && named <= lin->z1, "%s: %d body angular velocity states of %d", what, named, lin->z1);
    CHECK_EQ_INT(lin->z0, lin->z1);
}

/* ---- the rigid rotor (examples/mech/rigid_rotor.yaml) spinning at Omega: its body-frame
 * transverse angular velocities turn with the spin, so the linearized equations are time-varying
 * in (S, w) and their instantaneous Jacobian had the whirl at 77.51 and 107.51 rad/s; every method
 * now computes in (S, S') and changes to the speeds by the constant map at the point: the closed
 * forms Id w^2 -+ Ip Omega w - 2 k a^2 = 0 (81.833, 101.833) and sqrt(2 k / m) = 100 (bounce, axial),
 * the Euler-rate model's spectrum to 1e-10, and a different A (other velocity states). ---- */
TEST(spinning_rotor_body_speeds)
{
    const char *file = "examples/mech/rigid_rotor.yaml";
    double m = 20, Id = 1.5, Ip = 0.6, a = 0.25, k = 1e5, W = 50, kc = 2 * k * a * a;
    double wf = (Ip * W + sqrt(Ip * Ip * W * W + 4 * Id * kc)) / (2 * Id), wb = wf - Ip * W / Id;
    double closed[5] = {0, wb, sqrt(2 * k / m), wf, 0};
    run re;
    mbl_status st;
    int rc = run_file(file, NULL, &re, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    char *text = with_body_speeds(file);
    CHECK(text != NULL);
    const char *methods[6] = {"augmented", "partition", "nullspace", "projection", "fd", "penalty"};
    for (int k2 = 0; k2 < 6 && !rc && text; k2++) {
        run rw;
        memset(&rw, 0, sizeof rw);
        mbl_lin_options o;
        mbl_lin_options_default(&o);
        o.method = methods[k2];
        int rc2 = mbl_model_load_string(text, strlen(text), file, NULL, 0, &rw.md, &st);
        if (!rc2) rc2 = mbl_operating_point(rw.md, NULL, &rw.pt, &st);
        if (!rc2) rc2 = mbl_linearize(rw.md, rw.pt, &o, &rw.lin, &st);
        if (!rc2) rc2 = mbl_modal(rw.lin, NULL, &rw.modes, &st);
        CHECK_MSG(rc2 == 0, "%s with body speeds: %s", methods[k2], st.msg);
        if (!rc2) {
            /* every physical eigenvalue is one of the closed forms (in modulus) */
            double big = wf, worst = 0;
            int nphys = 0;
            for (int i = 0; i < rw.modes->nx; i++) {
                if (rw.modes->modes[i].spurious) continue;
                nphys++;
                double s = hypot(rw.modes->modes[i].re, rw.modes->modes[i].im), best = INFINITY;
                for (int j = 0; j < 5; j++) best = fmin(best, fabs(s - closed[j]));
                worst = fmax(worst, best / big);
            }
            CHECK_EQ_INT(nphys, re.modes->nx);
            double tol = k2 == 5 ? fmax(1e-10, rw.lin->err_est / big) : k2 == 4 ? 1e-7 : 1e-10;
            CHECK_MSG(worst <= tol, "%s: whirl with body speeds off the closed form by %.3g", methods[k2], worst);
            if (k2 < 5) {
                /* the cyclic spin's double zero is a Jordan block: QR resolves it to +-sqrt(eps) |A|,
                 * so the comparison is over the nonzero eigenvalues */
                double dev = 0;
                for (int i = 0; i < rw.modes->nx; i++) {
                    double si = hypot(rw.modes->modes[i].re, rw.modes->modes[i].im), best = INFINITY;
                    if (si < 1e-6 * big) continue;
                    for (int j = 0; j < re.modes->nx; j++)
                        best = fmin(best, hypot(rw.modes->modes[i].re - re.modes->modes[j].re,
                                                rw.modes->modes[i].im - re.modes->modes[j].im));
                    dev = fmax(dev, best / big);
                }
                CHECK_MSG(dev <= (k2 == 4 ? 1e-7 : 1e-10), "%s: body speeds vs Euler rates at the spin: %.3g",
                          methods[k2], dev);
                check_body_speed_counts(rw.lin, 1, methods[k2]);
                CHECK_EQ_INT(rw.lin->nx, re.lin->nx);
                double dA = 0; /* other velocity states: another A */
                for (int i = 0; i < re.lin->nx * re.lin->nx && rw.lin->nx == re.lin->nx; i++)
                    dA = fmax(dA, fabs(rw.lin->A[i] - re.lin->A[i]));
                CHECK(dA > 1.0);
                printf("rigid rotor at Omega = 50 with body speeds, %s: closed form %.3g, vs Euler rates %.3g\n",
                       methods[k2], worst, dev);
            }
        }
        run_free(&rw);
    }
    free(text);
    run_free(&re);
}

int main(void)
{
    RUN(disc_upright);
    RUN(disc_steady_turn);
    RUN(bicycle_like);
    RUN(speed_errors);
    RUN(spatial_body_speeds);
    RUN(spinning_rotor_body_speeds);
    return test_summary("speeds");
}
