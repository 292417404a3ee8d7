/* Equilibrium and steady motion from the guesses a user would write (issue 29): every example
 * model with an equilibrium or steady operating point and the textbook models of
 * tests/opoint/textbook/, each started from its solution perturbed by up to 0.5 rad in each angle
 * and 20 % in each length coordinate (a rotation of up to 0.5 rad for Euler parameters), eight
 * deterministic perturbations per model: all coordinates at +max, all at -max, alternating, and
 * five from a fixed pseudo-random sequence. Each run must reach the right branch (every coordinate
 * within 1e-6 of the solution; Euler parameters up to sign) or be refused with a one-line reason.
 *
 * The right branch: for the textbook models the solution from the file's guess is checked first
 * against an independent value (the closed form or the scipy solution of reference.py, given in
 * each model's header comment); for the examples it is the solution from the file's guess, which
 * the example tests check against published tables and closed forms; the N-loop four-bars (every
 * crank at the angle th) are checked here against the root of their potential's derivative,
 * 9.81 (1.5 N + 0.5) cos th = N k (2 cos(th/2) - L0) sin(th/2) (k = 25, L0 = sqrt 2; scipy brentq
 * in (1.6, 3)), the other equilibrium of the same equation, th = pi/2, being 0.3 rad away. The
 * four-bars' phi (yB_N = l sin(phi)) takes two values for one configuration: not compared. The counts per family are printed (docs/convergence.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"
#include "test.h"

#define NPERT 8
#define HALF_PI 1.57079632679489661923
#define MAXREF 4

typedef struct {
    const char *name;
    double value;
} cref;

typedef struct {
    const char *file;
    const char *family;
    const char *lengths; /* equation-level models: the length coordinates (names; "p*" a prefix) */
    const char *skip;    /* coordinates not compared: nothing fixes them (held or free) */
    double lscale;       /* a length coordinate at 0 is perturbed by 20 % of this (0: not at all) */
    cref ref[MAXREF];    /* independent values at the solution from the file's guess */
    cref alt[2];         /* another equilibrium within reach of the perturbations (closed form) */
} cmodel;

#define TB "tests/opoint/textbook/"
/* the members left out (alt, most of ref) are zero: no entry */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const cmodel models[] = {
    /* textbook: pendulums */
    {TB "pendulum_torque.yaml", "pendulums", NULL, NULL, 0, {{"th", 0.324202041}}},
    {TB "pendulum_torsion_preload.yaml", "pendulums", NULL, NULL, 0.4, {{"rod_th", 0.477990520}}},
    {TB "double_pendulum_tip_force.yaml", "pendulums", NULL, NULL, 0, {{"th1", 0.201117384}, {"th2", 0.548920414}}},
    {TB "double_pendulum_torsion.yaml", "pendulums", NULL, NULL, 0, {{"th1", 0.258406773}, {"th2", 0.773228165}}},
    {TB "double_pendulum_nonlinear.yaml", "pendulums", NULL, NULL, 0.4,
     {{"link1_th", 0.385963000}, {"link2_th", -0.547922730}}},
    {TB "triple_pendulum.yaml", "pendulums", NULL, NULL, 0.4,
     {{"l1_th", 0.097124287}, {"l2_th", 0.196103422}, {"l3_th", 0.334532411}}},
    {TB "inverted_pendulum_buckled.yaml", "pendulums", NULL, NULL, 0, {{"th", 1.660034813}}},
    {TB "elastic_pendulum_force.yaml", "pendulums", "r", NULL, 0, {{"r", 0.700235961}, {"th", 0.201117384}}},
    {TB "cart_pendulum.yaml", "pendulums", NULL, NULL, 1, {{"pendulum_th", 0.296778873}, {"slider_x", 1.5}}},
    {TB "spherical_pendulum_spring.yaml", "spatial", NULL, NULL, 0.6,
     {{"bob_x", 0.198214479}, {"bob_y", 0.158571583}, {"bob_z", -0.543659887}}},
    /* textbook: linkages, springs */
    {TB "fourbar_spring.yaml", "linkages", NULL, NULL, 0.5,
     {{"crank_th", 0.221942130}, {"coupler_th", 0.659611585}, {"rocker_th", 1.186712746}},
     {{"crank_th", -0.431433499}}},
    {TB "slider_crank.yaml", "linkages", NULL, NULL, 0.5, {{"crank_th", 1.111020255}}},
    {TB "gear_pair.yaml", "linkages", NULL, NULL, 1,
     {{"pinion_e0", -0.227202094693087}, {"pinion_e3", -0.973847630878195}, {"gear_e3", 0.564642473395035}}},
    {TB "crank_offset_spring.yaml", "springs", NULL, NULL, 0, {{"th", 1.271179521}}},
    {TB "spring_supported_bar.yaml", "springs", NULL, NULL, 0, {{"th", 0.554467127}}},
    {TB "von_mises_truss.yaml", "springs", "y", NULL, 0, {{"y", 0.433516287}}},
    {TB "hanging_chain_nonlinear.yaml", "springs", "y1 y2", NULL, 0, {{"y1", 0.454763252}, {"y2", 0.740332379}}},
    {TB "tripod_platform.yaml", "spatial", "x y z", NULL, 0.5,
     {{"x", 0.025919923}, {"y", 0.0}, {"z", -0.646260908}}},
    /* textbook: steady motion */
    {TB "bead_on_hoop.yaml", "steady motion", NULL, "phi", 0, {{"th", 0.994407212}}},
    {TB "governor.yaml", "steady motion", NULL, "phi", 0, {{"th", 0.869321720}}},
    /* examples: four-bars (closed form: every crank at pi/2, phi = pi/2) */
    {"examples/fourbar_N1.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 2.234331019018}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N1_damped.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 2.234331019018}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N5.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.892203654411}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N5_damped.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.892203654411}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N10.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.845411236695}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N10_damped.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.845411236695}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N15.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.829610223375}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N15_damped.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.829610223375}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N20.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.821671472782}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N20_damped.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.821671472782}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_N300.yaml", "examples: four-bars", "x* y*", "phi", 1, {{"phi", 1.799307184051}}, {{"xB0", 0}, {"yB0", 1}}},
    {"examples/fourbar_singular.yaml", "examples: four-bars", "x* y*", "phi", 1, {{NULL, 0}}},
    {"examples/mech/fourbar_N1.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 2.234331019018}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N1_damped.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 2.234331019018}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N5.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.892203654411}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N5_damped.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.892203654411}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N10.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.845411236695}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N10_damped.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.845411236695}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N15.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.829610223375}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N15_damped.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.829610223375}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N20.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.821671472782}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/fourbar_N20_damped.yaml", "examples: four-bars", NULL, NULL, 1, {{"rocker0_th", 1.821671472782}}, {{"rocker0_th", HALF_PI}}},
    {"examples/mech/spatial_fourbar.yaml", "examples: other", NULL, NULL, 1, {{NULL, 0}}},
    {"examples/mech/spatial_fourbar_relative.yaml", "examples: other", NULL, NULL, 1, {{NULL, 0}}},
    /* examples: other */
    {"examples/double_pendulum_natural.yaml", "examples: other", "x* y*", NULL, 1, {{"y2", -1.2}, {"y3", -2.0}}},
    {"examples/slider_pendulum.yaml", "examples: other", "x*", NULL, 1, {{NULL, 0}}},
    {"examples/spring_pendulum.yaml", "examples: other", "x* y*", NULL, 1, {{NULL, 0}}},
    {"examples/mech/slider_pendulum.yaml", "examples: other", NULL, NULL, 1, {{"pendulum_th", 0}}},
    {"examples/mech/slider_pendulum_relative.yaml", "examples: other", "s*", NULL, 1, {{NULL, 0}}},
    {"examples/mech/slider_pendulum_spatial.yaml", "examples: other", NULL, NULL, 1, {{NULL, 0}}},
    {"examples/rotating_pendulum_steady.yaml", "examples: other", NULL, "phi", 0, {{"theta", 0.523598431523}}},
    {"examples/rolling_disc_speeds.yaml", "examples: other", "x y", "x y psi phi", 0, {{NULL, 0}}},
    {"examples/whipple_bicycle.yaml", "examples: other", NULL, NULL, 0, {{"phi", 0}, {"delta", 0}}},
    {"examples/ode/dc_motor_pendulum.yaml", "examples: other", NULL, NULL, 0, {{NULL, 0}}},
    {"examples/ode/cart_pd_controller.yaml", "examples: other", "x", "x", 0, {{NULL, 0}}},
    {"examples/ode/arm_friction_of_reaction.yaml", "examples: other", "r", NULL, 0, {{NULL, 0}}},
    {"examples/flexible_pendulum_np5.yaml", "examples: flexible", "x* y* qfx* qfy*", NULL, 0, {{NULL, 0}}},
    {"examples/flexible_pendulum_beams.yaml", "examples: flexible", "link1_u* link1_v* link2_u* link2_v*", NULL, 0,
     {{NULL, 0}}},
    {"examples/flexible_pendulum_modal.yaml", "examples: flexible", "link1_eta* link2_eta*", NULL, 0, {{NULL, 0}}},
    {"examples/mech/spatial_beam_pendulum.yaml", "examples: flexible", "link1_u* link2_u*", NULL, 0, {{NULL, 0}}},
};
#pragma GCC diagnostic pop
#define NMODELS ((int)(sizeof models / sizeof *models))

/* name matches a space-separated list of names and prefixes ("p*") */
static int in_list(const char *list, const char *name)
{
    if (!list) return 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        if (p[len - 1] == '*' ? !strncmp(name, p, len - 1) : (strlen(name) == len && !strncmp(name, p, len)))
            return 1;
        p += len;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* coordinate kinds: 0 angle, 1 length, 2 the first of four Euler parameters (e0), 3 e1..e3 */
static int coord_kind(const mbl_model *md, const cmodel *c, int i, int n)
{
    const char *name = mbl_model_coord_name(md, i);
    if (ends_with(name, "_e0") && i + 3 < n && ends_with(mbl_model_coord_name(md, i + 3), "_e3")) return 2;
    if (ends_with(name, "_e1") || ends_with(name, "_e2") || ends_with(name, "_e3")) return 3;
    if (ends_with(name, "_x") || ends_with(name, "_y") || ends_with(name, "_z")) return 1;
    return in_list(c->lengths, name) ? 1 : 0;
}

/* a fixed pseudo-random sequence in [-1, 1] */
static double lcg(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 53) * 2.0 - 1.0;
}

/* perturbation k of the solution qs into q */
static void perturb(const mbl_model *md, const cmodel *c, const double *qs, int n, int k, unsigned long long *seed,
                    double *q)
{
    for (int i = 0; i < n; i++) {
        int kind = coord_kind(md, c, i, n);
        double u = k == 0 ? 1.0 : k == 1 ? -1.0 : k == 2 ? (i % 2 ? -1.0 : 1.0) : lcg(seed);
        if (kind == 0) q[i] = qs[i] + 0.5 * u;
        else if (kind == 1) q[i] = qs[i] + 0.2 * u * (qs[i] != 0 ? fabs(qs[i]) : c->lscale);
        else if (kind == 2) {
            /* rotate by alpha = 0.5 u about a unit axis from the sequence: e (x) (cos a/2, w sin a/2) */
            double w[3] = {lcg(seed), lcg(seed), lcg(seed)}, nw = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            if (!(nw > 1e-3)) w[0] = 0, w[1] = 0, w[2] = 1, nw = 1;
            double ca = cos(0.25 * u), sa = sin(0.25 * u), r[4] = {ca, sa * w[0] / nw, sa * w[1] / nw, sa * w[2] / nw};
            const double *e = qs + i;
            q[i] = e[0] * r[0] - e[1] * r[1] - e[2] * r[2] - e[3] * r[3];
            q[i + 1] = e[0] * r[1] + e[1] * r[0] + e[2] * r[3] - e[3] * r[2];
            q[i + 2] = e[0] * r[2] - e[1] * r[3] + e[2] * r[0] + e[3] * r[1];
            q[i + 3] = e[0] * r[3] + e[1] * r[2] - e[2] * r[1] + e[3] * r[0];
            i += 3;
        }
    }
}

/* the first coordinate where q differs from the solution qs (-1: none; Euler parameters up to sign) */
static int differs(const mbl_model *md, const cmodel *c, const double *qs, const double *q, int n)
{
    for (int i = 0; i < n; i++) {
        if (coord_kind(md, c, i, n) == 2) {
            double dp = 0, dm = 0;
            for (int j = 0; j < 4; j++) dp = fmax(dp, fabs(q[i + j] - qs[i + j])), dm = fmax(dm, fabs(q[i + j] + qs[i + j]));
            if (fmin(dp, dm) > 1e-6) return i;
            i += 3;
            continue;
        }
        if (in_list(c->skip, mbl_model_coord_name(md, i))) continue;
        if (!(fabs(q[i] - qs[i]) <= 1e-6 * fmax(1.0, fabs(qs[i])))) return i;
    }
    return -1;
}

/* distance of q from the guess g, each coordinate in units of its perturbation amplitude (2-norm;
 * Euler parameters up to sign, in units of 0.25), over the compared coordinates */
static double guess_dist(const mbl_model *md, const cmodel *c, const double *qs, const double *g, const double *q, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        int kind = coord_kind(md, c, i, n);
        if (kind == 2) {
            double dp = 0, dm = 0;
            for (int j = 0; j < 4; j++) dp += pow(q[i + j] - g[i + j], 2), dm += pow(q[i + j] + g[i + j], 2);
            s += fmin(dp, dm) / (0.25 * 0.25);
            i += 3;
            continue;
        }
        if (in_list(c->skip, mbl_model_coord_name(md, i))) continue;
        double amp = kind == 0 ? 0.5 : 0.2 * (qs[i] != 0 ? fabs(qs[i]) : c->lscale);
        if (!(amp > 0)) amp = 1e-6;
        s += pow((q[i] - g[i]) / amp, 2);
    }
    return sqrt(s);
}

/* q is the model's other listed equilibrium (every listed coordinate within 1e-6) */
static int is_alt(const mbl_model *md, const cmodel *c, const double *q, int n)
{
    if (!c->alt[0].name) return 0;
    for (int r = 0; r < 2 && c->alt[r].name; r++) {
        int i = 0;
        while (i < n && strcmp(mbl_model_coord_name(md, i), c->alt[r].name)) i++;
        if (i == n || !(fabs(q[i] - c->alt[r].value) <= 1e-6 * fmax(1.0, fabs(c->alt[r].value)))) return 0;
    }
    return 1;
}

typedef struct {
    const char *family;
    int right, nearer, other, refused, wrong;
} tally;

TEST(converge_from_perturbed_guesses)
{
    tally fam[16];
    int nfam = 0, nruns = 0, total_right = 0, total_nearer = 0, total_other = 0, total_refused = 0, total_wrong = 0;
    for (int mi = 0; mi < NMODELS; mi++) {
        const cmodel *c = &models[mi];
        clock_t t0 = clock();
        mbl_status st;
        mbl_model *md = NULL;
        int rc = mbl_model_load_file(c->file, NULL, 0, &md, &st);
        CHECK_MSG(rc == 0, "%s: %s", c->file, st.msg);
        if (rc) continue;
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        int n = info.ncoord;
        mbl_point *pt = NULL;
        rc = mbl_operating_point(md, NULL, &pt, &st);
        CHECK_MSG(rc == 0, "%s: from the file's guess: %s", c->file, st.msg);
        if (rc) {
            mbl_model_free(md);
            continue;
        }
        for (int r = 0; r < MAXREF && c->ref[r].name; r++) {
            int i = 0;
            while (i < n && strcmp(mbl_model_coord_name(md, i), c->ref[r].name)) i++;
            CHECK_MSG(i < n, "%s: no coordinate %s", c->file, c->ref[r].name);
            if (i < n)
                CHECK_MSG(fabs(pt->q[i] - c->ref[r].value) <= 2e-9 * fmax(1.0, fabs(c->ref[r].value)),
                          "%s: %s = %.12g, reference %.12g", c->file, c->ref[r].name, pt->q[i], c->ref[r].value);
        }
        double *qs = malloc((size_t)n * sizeof *qs), *q = malloc((size_t)n * sizeof *q);
        memcpy(qs, pt->q, (size_t)n * sizeof *qs);
        mbl_point_free(pt);
        int f = 0;
        while (f < nfam && strcmp(fam[f].family, c->family)) f++;
        if (f == nfam) fam[nfam++] = (tally){c->family, 0, 0, 0, 0, 0};
        unsigned long long seed = 12345u + 977u * (unsigned)mi;
        int right = 0, refused = 0;
        for (int k = 0; k < NPERT; k++) {
            perturb(md, c, qs, n, k, &seed, q);
            /* the sanitized build solves from perturbations 0, 3 and 6 only (the same guesses as the
             * plain build's: every perturbation is still drawn) */
            if (test_sanitized() && k % 3) continue;
            nruns++;
            mbl_opoint_options opt;
            mbl_opoint_options_default(&opt);
            opt.q = q;
            pt = NULL;
            rc = mbl_operating_point(md, &opt, &pt, &st);
            if (rc) {
                refused++;
                CHECK_MSG(st.msg[0] && !strchr(st.msg, '\n'), "%s, perturbation %d: a refusal in more than one line",
                          c->file, k);
                printf("    %s, perturbation %d refused: %.300s\n", c->file, k, st.msg);
                continue;
            }
            /* the solution, or another one at least as near the guess (the branch nearest the guess) */
            int d = differs(md, c, qs, pt->q, n);
            double dsol = guess_dist(md, c, qs, q, qs, n), dgot = d < 0 ? dsol : guess_dist(md, c, qs, q, pt->q, n);
            int textbook = !strncmp(c->file, TB, strlen(TB));
            CHECK_MSG(!textbook || d < 0 || dgot <= dsol * (1 + 1e-9) || is_alt(md, c, pt->q, n),
                      "%s, perturbation %d: another solution farther from the guess (%.3g against %.3g), %s = %.9g "
                      "instead of %.9g",
                      c->file, k, dgot, dsol, mbl_model_coord_name(md, d < 0 ? 0 : d), pt->q[d < 0 ? 0 : d],
                      qs[d < 0 ? 0 : d]);
            if (d < 0) right++;
            else if (dgot <= dsol * (1 + 1e-9)) fam[f].nearer++;
            else if (is_alt(md, c, pt->q, n)) fam[f].other++;
            else {
                fam[f].wrong++;
                printf("    %s, perturbation %d: another solution farther from the guess (%.3g against %.3g), "
                       "%s = %.9g instead of %.9g\n",
                       c->file, k, dgot, dsol, mbl_model_coord_name(md, d), pt->q[d], qs[d]);
            }
            mbl_point_free(pt);
        }
        fam[f].right += right;
        fam[f].refused += refused;
        printf("  %-50s %d right, %d refused (%.2f s)\n", c->file, right, refused,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
        free(qs), free(q);
        mbl_model_free(md);
    }
    printf("  %-22s %8s %7s %6s %8s %6s\n", "family", "solution", "nearer", "other", "refused", "wrong");
    for (int f = 0; f < nfam; f++) {
        printf("  %-22s %8d %7d %6d %8d %6d\n", fam[f].family, fam[f].right, fam[f].nearer, fam[f].other,
               fam[f].refused, fam[f].wrong);
        total_right += fam[f].right, total_nearer += fam[f].nearer, total_other += fam[f].other,
            total_refused += fam[f].refused, total_wrong += fam[f].wrong;
    }
    printf("  %-22s %8d %7d %6d %8d %6d  (%d models, %d runs)\n", "total", total_right, total_nearer, total_other,
           total_refused, total_wrong, NMODELS, nruns);
    /* the textbook models are checked run by run above; no example run may end on a solution
     * farther from the guess either: a search that went far after damped steps is refused
     * (docs/convergence.md) */
    CHECK_MSG(total_wrong == 0, "%d runs ended on a solution farther from the guess", total_wrong);
}

int main(void)
{
    RUN(converge_from_perturbed_guesses);
    return test_summary("opoint_converge");
}
