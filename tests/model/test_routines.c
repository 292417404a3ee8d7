/* User routines in `model: dae` files (issue 68; src/model/routines.c, routines_check.c;
 * docs/user-routines.md), with routines the program gives (mbl_load_options.user_routines): no
 * library is opened here (tests/user and tests/cli open libraries).
 *
 * The model: a pendulum (mass m on a massless rod l) with a torsional spring and a damper at its
 * pivot, T = -k sin(theta) - c der(theta) (1 + theta^2), and a constant torque tau. Its
 * equilibrium has sin(theta*) = tau / (k + m g l); about it M = m l^2, C = c (1 + theta*^2), K = (k +
 * m g l) cos(theta*): the eigenvalues (-C +- sqrt(C^2 - 4 M K)) / (2 M), closed form.
 *   closed_form      the routine with its partials, and the same torque written as an expression:
 *                    both equal the closed form to 1e-12 by every exact method (augmented,
 *                    partition, nullspace, projection, descriptor; penalty and fd to 1e-6), the
 *                    point's note says the partials were checked;
 *   differences      the routine without partials: within the accuracy the note states, and that
 *                    accuracy below 1e-8;
 *   wrong_partials   a routine whose partial is 1 % off is refused at the operating point, naming
 *                    the routine and the entry;
 *   sensitivity      d s / d k by mbl_sensitivity_compute (k is an input of the routine: the chain
 *                    rule through its partials and their differences) against the closed form's
 *                    derivative by central differences of the closed form;
 *   outputs_copy     an output of the routine's output; mbl_model_copy keeps the routine;
 *   simulation_floquet  a simulation from theta = 0.3 and the Floquet multipliers over T = 1 at
 *                    the equilibrium: the routine's model and the expression's agree (1e-9);
 *   symbolic_refused mbl_symlin_new (mblin symbolic, codegen) refuses the model naming the routine;
 *   errors           the reader's and the loader's refusals, each one line naming the file's
 *                    position: no permission (MBL_EPERM), no such routine, a bad key, an output
 *                    that is not a name, an output named twice, a cycle through the routine's
 *                    own output, a routine that fails, a routine that returns NaN. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "mblin/dae.h"
#include "mblin/sensitivity.h"
#include "mblin/sim.h"
#include "mblin/floquet.h"
#include "mblin/codegen.h"
#include "test.h"

static const double M_ = 2, L_ = 1.5, G_ = 9.81, K_ = 30, C_ = 0.4, TAU = 5;

/* T(theta, w, k, c) = -k sin(theta) - c w (1 + theta^2); skew: a factor on d T / d theta */
static int torque_impl(mbl_user_call *c, double skew)
{
    double th = c->in[0], w = c->in[1], k = c->in[2], cc = c->in[3];
    c->out[0] = -k * sin(th) - cc * w * (1 + th * th);
    if (c->partials) {
        c->partials[0] = skew * (-k * cos(th) - 2 * cc * w * th);
        c->partials[1] = -cc * (1 + th * th);
        c->partials[2] = -sin(th);
        c->partials[3] = -w * (1 + th * th);
    }
    return 0;
}
static int torque(mbl_user_call *c) { return torque_impl(c, 1.0); }
static int torque_skewed(mbl_user_call *c) { return torque_impl(c, 1.01); }
static int failing(mbl_user_call *c)
{
    snprintf(c->message, c->message_size, "table lookup outside 0..10");
    return 3;
}
static int nan_out(mbl_user_call *c)
{
    c->out[0] = NAN;
    return 0;
}

static const mbl_user_routine_def host[] = {
    {"torque", torque, NULL}, {"torque_skewed", torque_skewed, NULL}, {"failing", failing, NULL}, {"nan_out", nan_out, NULL}};

/* the model with the torque by routine `fn` (partials yes/no), or written out when fn is NULL */
static void model_text(char *buf, size_t cap, const char *fn, int partials)
{
    int off = snprintf(buf, cap,
                       "model: dae\n"
                       "parameters: {m: %g, l: %g, g: %g, k: %g, c: %g, tau: %g}\n"
                       "coordinates: {theta: 0.1}\n"
                       "kinetic_energy: \"m*l^2*der(theta)^2/2\"\n"
                       "potential_energy: \"-m*g*l*cos(theta)\"\n",
                       M_, L_, G_, K_, C_, TAU);
    if (fn)
        snprintf(buf + off, cap - (size_t)off,
                 "routines:\n"
                 "  spring:\n"
                 "    routine: %s\n"
                 "    inputs: [theta, der(theta), k, c]\n"
                 "    outputs: [T]\n"
                 "    partials: %s\n"
                 "forces: {theta: \"T + tau\"}\n"
                 "outputs: {torque: \"2*T\"}\n",
                 fn, partials ? "yes" : "no");
    else
        snprintf(buf + off, cap - (size_t)off,
                 "forces: {theta: \"-k*sin(theta) - c*der(theta)*(1 + theta^2) + tau\"}\n"
                 "outputs: {torque: \"2*(-k*sin(theta) - c*der(theta)*(1 + theta^2))\"}\n");
}

static int load(const char *text, mbl_model **md, mbl_status *st)
{
    mbl_load_options o;
    mbl_load_options_default(&o);
    o.user_routines = host;
    o.nuser_routines = (int)(sizeof host / sizeof *host);
    return mbl_model_load_string_opt(text, strlen(text), "pend.yaml", NULL, 0, &o, md, st);
}

/* the closed form's eigenvalues at stiffness k: s[0] + i s[1], s[2] + i s[3] */
static void closed_form(double k, double s[4])
{
    double th = asin(TAU / (k + M_ * G_ * L_)), M = M_ * L_ * L_, C = C_ * (1 + th * th), K = (k + M_ * G_ * L_) * cos(th);
    double disc = C * C - 4 * M * K;
    s[0] = s[2] = -C / (2 * M);
    s[1] = sqrt(-disc) / (2 * M), s[3] = -s[1];
}

/* the eigenvalue with positive imaginary part by `method` (NULL: the default) and the point's notes */
static int eig_of(mbl_model *md, const char *method, double *re, double *im, char *notes, size_t cap)
{
    mbl_status st;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = method;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, &lo, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
    if (rc) printf("  %s: %s\n", method ? method : "default", st.msg);
    for (int i = 0; !rc && i < modes->nx; i++)
        if (modes->modes[i].im > 0) *re = modes->modes[i].re, *im = modes->modes[i].im;
    if (!rc && notes) snprintf(notes, cap, "%s", pt->notes);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return rc;
}

TEST(closed_form_eigenvalues)
{
    double s[4];
    closed_form(K_, s);
    /* the exact methods to 1e-12; penalty and fd (approximations of their own) to 1e-6 */
    const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor", "penalty", "fd"};
    for (int v = 0; v < 2; v++) {
        char text[2048], notes[1024] = "";
        model_text(text, sizeof text, v ? "torque" : NULL, 1);
        mbl_model *md = NULL;
        mbl_status st;
        CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
        for (int k = 0; md && k < 7; k++) {
            double re = NAN, im = NAN, tol = (k < 5 ? 1e-12 : 1e-6) * fabs(s[1]);
            CHECK(eig_of(md, methods[k], &re, &im, notes, sizeof notes) == 0);
            CHECK_MSG(fabs(re - s[0]) <= tol && fabs(im - s[1]) <= tol, "%s: %.15g%+.15gi, closed form %.15g%+.15gi",
                      methods[k], re, im, s[0], s[1]);
        }
        if (v) CHECK_MSG(strstr(notes, "routine 'spring': its partials agree") != NULL, "notes: %s", notes);
        mbl_model_free(md);
    }
}

TEST(differences_within_their_stated_error)
{
    double s[4];
    closed_form(K_, s);
    char text[2048], notes[1024] = "";
    model_text(text, sizeof text, "torque", 0);
    mbl_model *md = NULL;
    mbl_status st;
    CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
    double re = NAN, im = NAN;
    if (md) CHECK(eig_of(md, NULL, &re, &im, notes, sizeof notes) == 0);
    const char *p = strstr(notes, "estimated error ");
    CHECK_MSG(p != NULL, "notes: %s", notes);
    double err = p ? strtod(p + strlen("estimated error "), NULL) : NAN;
    CHECK(err > 0 && err < 1e-8);
    /* the eigenvalue's relative error is of the partials' relative error (a 1-DOF system: s moves
     * with K and C, each within err of itself) */
    double dev = hypot(re - s[0], im - s[1]) / hypot(s[0], s[1]);
    CHECK_MSG(dev <= 4 * err + 1e-14, "deviation %.3g, stated %.3g", dev, err);
    mbl_model_free(md);
}

TEST(wrong_partials_refused)
{
    char text[2048];
    model_text(text, sizeof text, "torque_skewed", 1);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
    if (md) {
        CHECK(mbl_operating_point(md, NULL, &pt, &st) != 0);
        CHECK_MSG(strstr(st.msg, "routine 'spring'") && strstr(st.msg, "d out1 / d in1") &&
                      strstr(st.msg, "central difference"),
                  "%s", st.msg);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(sensitivity_through_the_routine)
{
    char text[2048];
    model_text(text, sizeof text, "torque", 1);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *d = NULL;
    mbl_sensitivity *sens = NULL;
    mbl_status st;
    CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
    if (!md) return;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_dae_deriv_new(md, &d, &st);
    int wrt = 3; /* k */
    if (!rc) rc = mbl_sensitivity_compute(d, pt, &wrt, 1, NULL, &sens, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    /* the second derivatives through the routine are differences: said */
    if (sens) CHECK_MSG(!sens->exact && strstr(sens->notes, "not exact") && strstr(sens->notes, "'spring'"), "%s", sens->notes);
    double h = 1e-4, sp[4], sm[4];
    closed_form(K_ + h, sp);
    closed_form(K_ - h, sm);
    double dre = (sp[0] - sm[0]) / (2 * h), dim = (sp[1] - sm[1]) / (2 * h);
    for (int i = 0; !rc && i < sens->nmode; i++)
        if (sens->modes[i].im > 0) {
            CHECK_CLOSE(sens->modes[i].dre[0], dre, 1e-6 * fabs(dim));
            CHECK_CLOSE(sens->modes[i].dim[0], dim, 1e-6 * fabs(dim));
        }
    mbl_sensitivity_free(sens);
    mbl_dae_deriv_free(d);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(outputs_and_copy)
{
    char text[2048];
    model_text(text, sizeof text, "torque", 1);
    mbl_model *md = NULL, *cp = NULL;
    mbl_status st;
    CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
    if (!md) return;
    CHECK_MSG(mbl_model_copy(md, NULL, 0, &cp, &st) == 0, "%s", st.msg);
    for (int v = 0; cp && v < 2; v++) {
        mbl_model *x = v ? cp : md;
        mbl_point *pt = NULL;
        mbl_linear *lin = NULL;
        CHECK(mbl_operating_point(x, NULL, &pt, &st) == 0);
        if (pt) CHECK(mbl_linearize(x, pt, NULL, &lin, &st) == 0);
        if (lin) {
            /* y = 2 T, T = -tau at the equilibrium; dy/dtheta = 2 dT/dtheta = -2 k cos(theta*) */
            double th = asin(TAU / (K_ + M_ * G_ * L_));
            CHECK_EQ_INT(lin->ny, 1);
            CHECK_CLOSE(lin->C[0] * lin->q_S[0], -2 * K_ * cos(th), 1e-10 * K_);
        }
        mbl_linear_free(lin);
        mbl_point_free(pt);
    }
    mbl_model_free(cp);
    mbl_model_free(md);
}

TEST(simulation_floquet)
{
    double qend[2] = {NAN, NAN}, mu[2] = {NAN, NAN};
    for (int v = 0; v < 2; v++) {
        char text[2048];
        model_text(text, sizeof text, v ? "torque" : NULL, 1);
        mbl_model *md = NULL;
        mbl_point *start = NULL, *eq = NULL;
        mbl_sim_result *r = NULL;
        mbl_floquet *f = NULL;
        mbl_status st;
        CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
        if (!md) continue;
        double q0 = 0.3, v0 = 0;
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        po.at = MBL_AT_GIVEN, po.q = &q0, po.v = &v0;
        mbl_sim_options so;
        mbl_sim_options_default(&so);
        so.t_end = 2;
        int rc = mbl_operating_point(md, &po, &start, &st);
        if (!rc) rc = mbl_simulate(md, start, &so, &r, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) qend[v] = r->q[(size_t)(r->nt - 1) * r->n];
        mbl_floquet_options fo;
        mbl_floquet_options_default(&fo);
        fo.period = 1;
        rc = mbl_operating_point(md, NULL, &eq, &st);
        if (!rc) rc = mbl_floquet_run(md, eq, &fo, &f, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) mu[v] = f->mult_abs[0];
        mbl_floquet_free(f);
        mbl_sim_result_free(r);
        mbl_point_free(eq);
        mbl_point_free(start);
        mbl_model_free(md);
    }
    CHECK_MSG(fabs(qend[0] - qend[1]) <= 1e-9, "theta(2) %.15g and %.15g", qend[0], qend[1]);
    CHECK_MSG(fabs(mu[0] - mu[1]) <= 1e-9 * mu[0], "|mu| %.15g and %.15g", mu[0], mu[1]);
}

/* mblin symbolic and codegen need closed forms: refused naming the routine */
TEST(symbolic_refused)
{
    char text[2048];
    model_text(text, sizeof text, "torque", 1);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    mbl_status st;
    CHECK_MSG(load(text, &md, &st) == 0, "%s", st.msg);
    if (md) CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    if (pt) {
        CHECK_EQ_INT(mbl_symlin_new(md, pt, 0, &sl, &st), MBL_EMODEL);
        CHECK_MSG(strstr(st.msg, "user routine 'spring'") && strstr(st.msg, "closed form"), "%s", st.msg);
    }
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* the model text with `routines:` replaced by `entry` (the lines after "routines:\n") */
static void refused(const char *entry, const char *force, const char *want1, const char *want2, int want_code)
{
    char text[2048];
    snprintf(text, sizeof text,
             "model: dae\nparameters: {k: 3}\ncoordinates: {x: 0.1}\nkinetic_energy: \"der(x)^2/2\"\n"
             "forces: {x: \"%s\"}\nroutines:\n%s",
             force, entry);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    int rc = load(text, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    CHECK_MSG(rc != 0, "accepted: %s", entry);
    if (want_code) CHECK_EQ_INT(rc, want_code);
    CHECK_MSG(strstr(st.msg, want1) && (!want2 || strstr(st.msg, want2)), "'%s' / '%s' not in: %s", want1,
              want2 ? want2 : "", st.msg);
    CHECK(!strchr(st.msg, '\n'));
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(errors)
{
    refused("  f: {library: ./nothere.so, inputs: [x], outputs: [F]}\n", "F", "pend.yaml:7:16:", "--allow-user-code",
            MBL_EPERM);
    refused("  f: {routine: missing, inputs: [x], outputs: [F]}\n", "F", "pend.yaml:7:3:", "no routine 'missing'", 0);
    refused("  f: {routine: torque, input: [x], outputs: [F]}\n", "F", "pend.yaml:7:24:", "unknown key 'input'", 0);
    refused("  f: {routine: torque, inputs: [x, x, k, k], outputs: [2F]}\n", "x", "pend.yaml:7:56:",
            "an output must be a name", 0);
    refused("  f: {routine: torque, inputs: [x, x, k, k], outputs: [F, F]}\n", "F", "output 'F' named twice", NULL, 0);
    refused("  f: {routine: torque, inputs: [F, x, k, k], outputs: [F]}\n", "F", "cycle", "F", 0);
    refused("  f: {routine: failing, inputs: [x], outputs: [F]}\n", "F", "routine 'f'", "table lookup outside 0..10", 0);
    refused("  f: {routine: nan_out, inputs: [x], outputs: [F]}\n", "F", "routine 'f'", "nan", 0);
    refused("  f: {routine: torque, inputs: [x, x, k, k], outputs: [x]}\n", "x", "'x'", NULL, 0);
    refused("  f: {routine: torque, inputs: [x, x, k, k], outputs: [F], partials: maybe}\n", "F",
            "'partials' must be yes or no", NULL, 0);
}

int main(void)
{
    RUN(closed_form_eigenvalues);
    RUN(differences_within_their_stated_error);
    RUN(wrong_partials_refused);
    RUN(sensitivity_through_the_routine);
    RUN(outputs_and_copy);
    RUN(simulation_floquet);
    RUN(symbolic_refused);
    RUN(errors);
    return test_summary("routines");
}
