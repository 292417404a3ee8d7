/* Outputs of accelerations (der(der(x))) and of constraint forces (lambda(c), mu(c); the reaction
 * measures FX .. TZ of mechanisms) against closed forms, every method either agreeing with
 * `augmented` or refusing with a one-line reason, and the loader's refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "mblin/mblin.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    double y[16];
} run;

/* Load, operating point, outputs at the point and linearization with `method` (NULL: augmented). */
static int run_text(const char *text, const char *method, run *r, mbl_status *st)
{
    memset(r, 0, sizeof *r);
    mbl_lin_options o;
    mbl_lin_options_default(&o);
    o.method = method;
    int rc = mbl_model_load_string(text, strlen(text), "test.yaml", NULL, 0, &r->md, st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, st);
    if (!rc) rc = mbl_model_outputs(r->md, r->pt, r->y, st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, &o, &r->lin, st);
    return rc;
}

static void run_free(run *r)
{
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
}

/* ---- mass-spring-damper: y = der(der(x)) = (F - k x - c der(x)) / m ---------------------------- */

static const char *msd = "model: dae\n"
                         "parameters: {m: 2, k: 50, c: 3}\n"
                         "coordinates: {x: 0}\n"
                         "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                         "potential_energy: \"0.5*k*x^2\"\n"
                         "dissipation: \"0.5*c*der(x)^2\"\n"
                         "inputs: {F: 4}\n"
                         "forces: {x: \"F\"}\n"
                         "outputs: {acc: \"der(der(x))\", pos: \"x\"}\n";

TEST(msd_acceleration_output)
{
    const char *methods[] = {"augmented", "partition", "nullspace", "projection", "penalty", "fd"};
    for (int i = 0; i < 6; i++) {
        run r;
        mbl_status st;
        int rc = run_text(msd, methods[i], &r, &st);
        CHECK_MSG(rc == 0, "%s: %s", methods[i], st.msg);
        if (!rc) {
            double tol = strcmp(methods[i], "fd") ? 1e-12 : 1e-6;
            CHECK_EQ_INT(r.lin->ny, 2);
            CHECK_CLOSE(r.y[0], 0.0, 1e-12);       /* equilibrium */
            CHECK_CLOSE(r.y[1], 4.0 / 50.0, 1e-12); /* x = F / k */
            /* C = [-k/m, -c/m], D = 1/m (the state is x or +-x: the sign follows C of "pos") */
            double sgn = r.lin->C[1] < 0 ? -1.0 : 1.0;
            CHECK_CLOSE(sgn * r.lin->C[1], 1.0, 1e-12);
            CHECK_CLOSE(sgn * r.lin->C[0], -25.0, tol);
            CHECK_CLOSE(sgn * r.lin->C[2], -1.5, tol);
            CHECK_CLOSE(r.lin->D[0], 0.5, tol);
            CHECK_CLOSE(r.lin->D[1], 0.0, tol);
        }
        run_free(&r);
    }
    /* descriptor: y = Cdd [x; v] + Dd F with the acceleration from the pencil's EOM row:
     * Cdd = [-k/m, -c/m; 1, 0], Dd = [1/m; 0] (no multipliers: the same as C, D) */
    run r;
    mbl_status st;
    int rc = run_text(msd, "descriptor", &r, &st);
    CHECK_MSG(rc == 0, "descriptor: %s", st.msg);
    if (!rc) {
        const mbl_lin_descriptor *ds = r.lin->descriptor;
        CHECK(ds && ds->nd == 2 && ds->Dd);
        if (ds && ds->nd == 2 && ds->Dd) {
            CHECK_CLOSE(ds->Cdd[0], -25.0, 1e-12);
            CHECK_CLOSE(ds->Cdd[2], -1.5, 1e-12);
            CHECK_CLOSE(ds->Cdd[1], 1.0, 1e-12);
            CHECK_CLOSE(ds->Dd[0], 0.5, 1e-12);
            CHECK_CLOSE(ds->Dd[1], 0.0, 1e-12);
        }
    }
    run_free(&r);
}

/* ---- Cartesian pendulum: tension = 2 l lambda for Phi = x^2 + y^2 - l^2 (M a + Phi_q^T lambda = Q) -- */

static const char *pend_rest = "model: dae\n"
                               "parameters: {m: 2, l: 1.5, g: 9.81}\n"
                               "coordinates: {x: 0.1, y: -1.4}\n"
                               "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                               "potential_energy: \"m*g*y\"\n"
                               "constraints: {rod: \"x^2 + y^2 = l^2\"}\n"
                               "outputs: {tension: \"2*l*lambda(rod)\", by_number: \"2*l*lambda(1)\"}\n";

TEST(pendulum_tension_at_rest)
{
    run r;
    mbl_status st;
    int rc = run_text(pend_rest, NULL, &r, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_CLOSE(r.y[0], 2 * 9.81, 1e-12); /* m g */
        CHECK_CLOSE(r.y[1], 2 * 9.81, 1e-12);
        /* at the bottom the tension is stationary in the angle and the rate */
        for (int j = 0; j < 2; j++) CHECK_CLOSE(r.lin->C[2 * j], 0.0, 1e-12);
    }
    run_free(&r);
}

/* Swinging: th0 = 0.4 from the vertical, rate w0 = 1.3; state x, der(x). T = m g cos th + m l th'^2,
 * in x: T(x, x') = m g sqrt(l^2 - x^2) / l + m l x'^2 / (l^2 - x^2). A horizontal force F on the bob
 * gives D: its component along the rod is zero at... not zero here: T changes by F sin th at once. */
static const char *pend_moving = "model: dae\n"
                                 "parameters: {m: 2, l: 1.5, g: 9.81, th0: 0.4, w0: 1.3}\n"
                                 "coordinates: {x: \"l*sin(th0)\", y: \"-l*cos(th0)\"}\n"
                                 "velocities: {x: \"l*cos(th0)*w0\", y: \"l*sin(th0)*w0\"}\n"
                                 "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                                 "potential_energy: \"m*g*y\"\n"
                                 "inputs: {F: 0}\n"
                                 "forces: {x: \"F\"}\n"
                                 "constraints: {rod: \"x^2 + y^2 - l^2\"}\n"
                                 "outputs: {tension: \"2*l*lambda(rod)\", ay: \"der(der(y))\"}\n"
                                 "linearize: {at: given, states: [x]}\n";

TEST(pendulum_tension_moving)
{
    const double m = 2, l = 1.5, g = 9.81, th = 0.4, w = 1.3;
    double x = l * sin(th), xd = l * cos(th) * w, c2 = l * l - x * x;
    double T = m * g * cos(th) + m * l * w * w;
    double dTdx = -m * g * x / (l * sqrt(c2)) + 2 * m * l * x * xd * xd / (c2 * c2);
    double dTdxd = 2 * m * l * xd / c2;
    /* D: the bob's radial equation T - m g cos th - F sin th = m l th'^2 with the tangential one
     * unchanged at the instant: dT/dF = sin th */
    double dTdF = sin(th);
    const char *methods[] = {"augmented", "partition", "projection", "fd"};
    for (int i = 0; i < 4; i++) {
        run r;
        mbl_status st;
        int rc = run_text(pend_moving, methods[i], &r, &st);
        CHECK_MSG(rc == 0, "%s: %s", methods[i], st.msg);
        if (!rc) {
            double tol = i == 3 ? 1e-6 : 1e-11;
            CHECK(!strcmp(r.lin->state_names[0], "x"));
            CHECK_CLOSE(r.y[0], T, 1e-12);
            CHECK_CLOSE(r.lin->C[0], dTdx, tol);
            CHECK_CLOSE(r.lin->C[2], dTdxd, tol);
            CHECK_CLOSE(r.lin->D[0], dTdF, tol);
        }
        run_free(&r);
    }
}

/* A non-holonomic constraint der(y) = a der(x) on a mass on a spring: M a + A^T mu = Q with
 * A = [-a 1] gives x'' = (F - k x) / (m (1 + a^2)) and mu = -a (F - k x) / (1 + a^2). */
TEST(nonholonomic_multiplier)
{
    const char *text = "model: dae\n"
                       "parameters: {m: 2, k: 50, a: 0.5}\n"
                       "coordinates: {x: 0, y: 0}\n"
                       "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                       "potential_energy: \"0.5*k*x^2\"\n"
                       "inputs: {F: 5}\n"
                       "forces: {x: \"F\"}\n"
                       "nonholonomic: {slip: \"der(y) = a*der(x)\"}\n"
                       "outputs: {side: \"mu(slip)\", acc: \"der(der(x))\"}\n"
                       "linearize: {at: equilibrium}\n";
    run r;
    mbl_status st;
    int rc = run_text(text, NULL, &r, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        const double m = 2, k = 50, a = 0.5;
        CHECK_CLOSE(r.y[0], 0.0, 1e-12);
        int ix = -1;
        for (int j = 0; j < r.lin->z0; j++)
            if (!strcmp(r.lin->state_names[j], "x")) ix = j;
        CHECK(ix >= 0);
        if (ix >= 0) {
            CHECK_CLOSE(r.lin->C[0 + (size_t)ix * 2], a * k / (1 + a * a), 1e-12);
            CHECK_CLOSE(r.lin->C[1 + (size_t)ix * 2], -k / (m * (1 + a * a)), 1e-12);
        }
        CHECK_CLOSE(r.lin->D[0], -a / (1 + a * a), 1e-12);
        CHECK_CLOSE(r.lin->D[1], 1 / (m * (1 + a * a)), 1e-12);
    }
    run_free(&r);
}

/* Accelerations at a point with motion: partition, projection and fd give augmented's C and D (same
 * states); the bob's vertical acceleration y'' = l sin th th'' + l cos th th'^2 with
 * m l th'' = -m g sin th + F cos th gives D = sin th cos th / m. */
TEST(accelerations_moving_agree)
{
    char text[2048];
    snprintf(text, sizeof text, "%s", pend_moving);
    char *o = strstr(text, "outputs:");
    snprintf(o, sizeof text - (size_t)(o - text),
             "outputs: {ax: \"der(der(x))\", ay: \"der(der(y))\"}\nlinearize: {at: given, states: [x]}\n");
    run ra;
    mbl_status st;
    int rc = run_text(text, NULL, &ra, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_CLOSE(ra.lin->D[1], sin(0.4) * cos(0.4) / 2, 1e-12);
        const char *methods[] = {"partition", "projection", "fd"};
        for (int i = 0; i < 3; i++) {
            run r;
            int rc2 = run_text(text, methods[i], &r, &st);
            CHECK_MSG(rc2 == 0, "%s: %s", methods[i], st.msg);
            double tol = i == 2 ? 1e-6 : 1e-11;
            for (int p = 0; !rc2 && p < 4; p++) CHECK_CLOSE(r.lin->C[p], ra.lin->C[p], tol);
            for (int p = 0; !rc2 && p < 2; p++) CHECK_CLOSE(r.lin->D[p], ra.lin->D[p], tol);
            run_free(&r);
        }
    }
    run_free(&ra);
}

/* G(s) = C (s I - A)^-1 B + D of a 2-state, 1-input system at a real s, output i */
static double tf(const mbl_linear *L, int i, double s)
{
    double a = s - L->A[0], b = -L->A[2], c = -L->A[1], d = s - L->A[3], det = a * d - b * c;
    double x0 = (d * L->B[0] - b * L->B[1]) / det, x1 = (-c * L->B[0] + a * L->B[1]) / det;
    return L->C[i] * x0 + L->C[i + L->ny] * x1 + L->D[i];
}

/* Held at an angle by a constant horizontal force F0: tan th = F0 / (m g), tension sqrt((m g)^2 + F0^2). */
static const char *pend_pushed = "model: dae\n"
                                 "parameters: {m: 2, l: 1.5, g: 9.81}\n"
                                 "coordinates: {x: 0.5, y: -1.4}\n"
                                 "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                                 "potential_energy: \"m*g*y\"\n"
                                 "inputs: {F: 8}\n"
                                 "forces: {x: \"F\"}\n"
                                 "constraints: {rod: \"x^2 + y^2 - l^2\"}\n"
                                 "outputs: {tension: \"2*l*lambda(rod)\", ay: \"der(der(y))\"}\n"
                                 "linearize: {at: equilibrium, states: [x]}\n";

/* pend_pushed with an ode state (source 000 Eq. 10: the Eq. 10 paths of projection, descriptor and
 * penalty) and outputs of the tension, an acceleration and der(i) */
static const char *pend_ode = "model: dae\n"
                              "parameters: {m: 2, l: 1.5, g: 9.81}\n"
                              "coordinates: {x: 0.5, y: -1.4}\n"
                              "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                              "potential_energy: \"m*g*y\"\n"
                              "inputs: {F: 8}\n"
                              "forces: {x: \"F + 0.3*i\"}\n"
                              "ode_states: {i: 0}\n"
                              "ode: {i: \"-2*i + F - x\"}\n"
                              "constraints: {rod: \"x^2 + y^2 - l^2\"}\n"
                              "outputs: {tension: \"2*l*lambda(rod)\", ay: \"der(der(y))\", di: \"der(i)\"}\n"
                              "linearize: {at: equilibrium, states: [x]}\n";

/* the skidding mass of nonholonomic_multiplier, damped, with the multiplier, an acceleration and x */
static const char *nh_damped = "model: dae\n"
                               "parameters: {m: 2, k: 50, a: 0.5, c: 0.7}\n"
                               "coordinates: {x: 0, y: 0}\n"
                               "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                               "potential_energy: \"0.5*k*x^2\"\n"
                               "dissipation: \"0.5*c*der(x)^2\"\n"
                               "inputs: {F: 5}\n"
                               "forces: {x: \"F\"}\n"
                               "nonholonomic: {slip: \"der(y) = a*der(x)\"}\n"
                               "outputs: {side: \"mu(slip)\", acc: \"der(der(x))\", pos: \"x\"}\n"
                               "linearize: {at: equilibrium}\n";

TEST(transfer_functions_agree)
{
    /* nullspace has its own states (tangent coordinates): at an equilibrium the transfer function
     * G(s) = C (sI - A)^-1 B + D does not depend on the states (away from one it does: the states'
     * transformation moves with the point) */
    run ra, rn, rp;
    mbl_status st;
    int rc = run_text(pend_pushed, "augmented", &ra, &st);
    if (!rc) rc = run_text(pend_pushed, "nullspace", &rn, &st);
    if (!rc) rc = run_text(pend_pushed, "partition", &rp, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        double T = hypot(2 * 9.81, 8);
        CHECK_CLOSE(ra.y[0], T, 1e-10);
        CHECK_CLOSE(ra.y[1], 0.0, 1e-10);
        /* T = m g cos th + F sin th + m l th'^2 is stationary in th and th' here, dT/dF = sin th */
        CHECK_CLOSE(ra.lin->C[0], 0.0, 1e-10);
        CHECK_CLOSE(ra.lin->D[0], 8 / T, 1e-10);
        CHECK(fabs(ra.lin->C[1]) > 1); /* der(der(y)) moves with x: the comparison is not trivial */
        for (int i = 0; i < 2; i++)
            for (double s = 0.7; s < 5; s += 2.1) {
                double ga = tf(ra.lin, i, s);
                CHECK_CLOSE(tf(rn.lin, i, s), ga, 1e-10);
                CHECK_CLOSE(tf(rp.lin, i, s), ga, 1e-10);
            }
    }
    run_free(&ra), run_free(&rn), run_free(&rp);
}

/* Dependent constraints: nullspace works there, but the multipliers are not unique: it refuses the
 * multiplier output (and still gives the acceleration output). */
TEST(nullspace_dependent_constraints)
{
    const char *base = "model: dae\n"
                       "parameters: {m: 2, l: 1.5, g: 9.81}\n"
                       "coordinates: {x: 0.1, y: -1.4}\n"
                       "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                       "potential_energy: \"m*g*y\"\n"
                       "constraints: {rod: \"x^2 + y^2 - l^2\", rod2: \"2*(x^2 + y^2 - l^2)\"}\n";
    char text[1024];
    snprintf(text, sizeof text, "%soutputs: {T: \"lambda(rod)\"}\n", base);
    run r;
    mbl_status st;
    CHECK(run_text(text, "nullspace", &r, &st) == MBL_ESINGULAR);
    CHECK_MSG(strstr(st.msg, "nullspace: outputs of multipliers") && strstr(st.msg, "not unique"), "%s", st.msg);
    run_free(&r);
    snprintf(text, sizeof text, "%soutputs: {ay: \"der(der(y))\"}\n", base);
    CHECK(run_text(text, "nullspace", &r, &st) == 0);
    run_free(&r);
}

/* ---- the loader's refusals ----------------------------------------------------------------------- */

static void expect_error(const char *text, const char *what)
{
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(text, strlen(text), "bad.yaml", NULL, 0, &md, &st);
    CHECK(rc != 0);
    CHECK_MSG(rc != 0 && strstr(st.msg, what) && strstr(st.msg, "bad.yaml:"), "%s", rc ? st.msg : "(loaded)");
    mbl_model_free(md);
}

static void expect_ok(const char *text)
{
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(text, strlen(text), "ok.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    mbl_model_free(md);
}

TEST(refusals)
{
    const char *head = "model: dae\n"
                       "parameters: {m: 2, l: 1.5, g: 9.81}\n"
                       "coordinates: {x: 0.1, y: -1.4}\n"
                       "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                       "potential_energy: \"m*g*y\"\n"
                       "constraints: {rod: \"x^2 + y^2 - l^2\"}\n";
    char buf[2048];
    /* forces may use multipliers (issue 13, tests/model/test_ode.c); energies and dissipation not */
    snprintf(buf, sizeof buf, "%sdissipation: \"lambda(rod)*der(x)^2\"\n", head);
    expect_error(buf, "bad.yaml:7:22: 'rod' names a constraint: its force lambda(rod) can be used in forces, ode,");
    snprintf(buf, sizeof buf, "%sdissipation: \"lambda(1)*der(x)^2\"\n", head);
    expect_error(buf, "bad.yaml:7:15: lambda() (a constraint force) can be used in forces, ode, implicit_variables,");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"rod\"}\n", head);
    expect_error(buf, "outside lambda(name)");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"lambda(2)\"}\n", head);
    expect_error(buf, "number (1 to 1)");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"der(lambda(rod))\"}\n", head);
    expect_error(buf, "der() of a multiplier");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"der(der(der(x)))\"}\n", head);
    expect_error(buf, "third");
    /* an argument with both accelerations and a multiplier: the accelerations' reason, given first */
    snprintf(buf, sizeof buf, "%soutputs: {T: \"der(der(der(y)) + lambda(rod))\"}\n", head);
    expect_error(buf, "third");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"der(x*lambda(rod))\"}\n", head);
    expect_error(buf, "der() of a multiplier");
    /* the non-holonomic multiplier mu(c) too; der() of velocities is an acceleration, accepted */
    snprintf(buf, sizeof buf, "%snonholonomic: {slip: \"der(y) = 0.5*der(x)\"}\noutputs: {T: \"der(mu(slip))\"}\n", head);
    expect_error(buf, "der() of a multiplier");
    snprintf(buf, sizeof buf, "%soutputs: {T: \"der(x*der(y))\"}\n", head);
    expect_ok(buf);
    snprintf(buf, sizeof buf, "%sforces: {x: \"rod\"}\n", head);
    expect_error(buf, "bad.yaml:7:14: the force on 'x' uses a constraint name outside lambda(name)");
    snprintf(buf, sizeof buf, "%svariables: {x: 1}\n", head);
    expect_error(buf, "duplicate name");
    const char *dup = "model: dae\n"
                      "coordinates: {x: 0.1, y: -1.4}\n"
                      "kinetic_energy: \"0.5*(der(x)^2 + der(y)^2)\"\n"
                      "constraints: {x: \"x^2 + y^2 - 1\"}\n";
    expect_error(dup, "duplicate name 'x'");
}

/* ---- mechanisms: reaction measures ----------------------------------------------------------------- */

static const char *planar_pend = "model: mechanism\n"
                                 "space: planar\n"
                                 "parameters: {m: 2, L: 1.2, g: 9.81, ma: 3, a: 0.4}\n"
                                 "ground:\n"
                                 "  markers: {pivot: {}, wall: {position: [2, 0]}}\n"
                                 "bodies:\n"
                                 "  rod:\n"
                                 "    mass: m\n"
                                 "    inertia: m*L^2/12\n"
                                 "    position: [0, \"-L/2\"]\n"
                                 "    angle: 0.2\n"
                                 "    markers: {top: {position: [0, \"L/2\"]}}\n"
                                 "  arm:\n"
                                 "    mass: ma\n"
                                 "    inertia: 0.1\n"
                                 "    cm: [a, 0]\n"
                                 "    position: [2, 0]\n"
                                 "    markers: {root: {}}\n"
                                 "joints:\n"
                                 "  hinge: {type: revolute, i: top, j: pivot}\n"
                                 "  weld: {type: fixed, i: root, j: wall}\n"
                                 "forces:\n"
                                 "  weight: {type: gravity, g: [0, \"-g\"]}\n"
                                 "outputs: {FX: \"FX(hinge)\", FY: \"FY(hinge)\", Fa: \"FY(hinge, top)\",\n"
                                 "          WY: \"FY(weld)\", WT: \"TZ(weld)\", WX: \"FX(weld)\"}\n"
                                 "linearize: {at: equilibrium, states: [\"JQ(hinge)\"]}\n";

TEST(mechanism_reactions_planar)
{
    run r;
    mbl_status st;
    int rc = run_text(planar_pend, NULL, &r, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_CLOSE(r.y[0], 0.0, 1e-12);
        CHECK_CLOSE(r.y[1], 2 * 9.81, 1e-12);        /* the pin holds the rod up: m g */
        CHECK_CLOSE(r.y[2], 2 * 9.81, 1e-12);        /* the rod hangs: its y axis is vertical */
        CHECK_CLOSE(r.y[3], 3 * 9.81, 1e-12);        /* the weld carries the arm's weight */
        CHECK_CLOSE(r.y[4], 3 * 9.81 * 0.4, 1e-12);  /* and its moment about the weld point */
        CHECK_CLOSE(r.y[5], 0.0, 1e-12);
        /* swinging by dth: FX = -m (L/2) th'' = (m L / 2) (3 g / (2 L)) dth = 3 m g / 4 dth; the
         * rod pulls the pin along -x on the +x side: the reaction on the rod is -3 m g / 4 dth */
        CHECK_CLOSE(r.lin->C[0], -0.75 * 2 * 9.81, 1e-11);
    }
    run_free(&r);
    /* a reaction measure in a force (source 000 Eq. 10c) is taken by augmented and by the reducing
     * methods, which solve for the multipliers' perturbations: the same A; FZ does not exist in the
     * plane */
    const char *bad = "model: mechanism\nspace: planar\nground: {markers: {p: {}}}\n"
                      "bodies: {b: {mass: 1, inertia: 1, markers: {t: {}}}}\n"
                      "joints: {h: {type: revolute, i: t, j: p}}\n"
                      "forces: {w: {type: gravity, g: [0, \"-9.81\"]}, f: {type: force, i: t, force: [\"FY(h)\", 0]}}\n";
    {
        run rb, ra;
        mbl_status stb;
        CHECK_MSG(run_text(bad, "partition", &rb, &stb) == 0, "%s", stb.msg);
        CHECK_MSG(run_text(bad, "augmented", &ra, &stb) == 0, "%s", stb.msg);
        if (rb.lin && ra.lin && rb.lin->nx == ra.lin->nx)
            for (int i = 0; i < ra.lin->nx * ra.lin->nx; i++) CHECK_CLOSE(rb.lin->A[i], ra.lin->A[i], 1e-12);
        CHECK(rb.lin && ra.lin && rb.lin->nx == ra.lin->nx);
        run_free(&rb), run_free(&ra);
    }
    const char *bad2 = "model: mechanism\nspace: planar\nground: {markers: {p: {}}}\n"
                       "bodies: {b: {mass: 1, inertia: 1, markers: {t: {}}}}\n"
                       "joints: {h: {type: revolute, i: t, j: p}}\n"
                       "outputs: {z: \"FZ(h)\"}\n";
    expect_error(bad2, "FZ is zero in a planar mechanism");
}

/* the file with room for the outputs written over its own (the tests edit it in place) */
static char *slurp_room(const char *path)
{
    char *s = test_slurp(path);
    char *r = s ? realloc(s, strlen(s) + 4096) : NULL;
    if (!r) free(s);
    return r;
}

TEST(slider_pendulum_reactions)
{
    char *text = slurp_room("examples/mech/slider_pendulum.yaml");
    CHECK(text != NULL);
    if (!text) return;
    char *o = strstr(text, "outputs:");
    CHECK(o != NULL);
    if (o) {
        char *eol = strchr(o, '\n');
        const char *rest = eol ? eol + 1 : "";
        char *tail = strdup(rest);
        sprintf(o, "outputs: {slide: \"FY(slide)\", pin: \"FY(pin)\", pinx: \"FX(pin)\", torque: \"TZ(slide)\"}\n%s",
                tail);
        free(tail);
        run r;
        mbl_status st;
        int rc = run_text(text, NULL, &r, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) {
            CHECK_CLOSE(r.y[0], (10 + 20) * 9.81, 1e-12); /* the rail carries slider and pendulum */
            CHECK_CLOSE(r.y[1], 20 * 9.81, 1e-12);        /* the pin carries the pendulum */
            CHECK_CLOSE(r.y[2], 0.0, 1e-12);
            /* the slider's pin and rail markers coincide: the rail's torque balances nothing */
            CHECK_CLOSE(r.y[3], 0.0, 1e-12);
        }
        /* partition and fd agree with augmented on C and D (same states) */
        const char *methods[] = {"partition", "fd"};
        for (int i = 0; i < 2 && !rc; i++) {
            run q;
            int rc2 = run_text(text, methods[i], &q, &st);
            CHECK_MSG(rc2 == 0, "%s: %s", methods[i], st.msg);
            double tol = i ? 1e-6 : 1e-10;
            for (int p = 0; !rc2 && p < r.lin->ny * r.lin->nx; p++) CHECK_CLOSE(q.lin->C[p], r.lin->C[p], tol * 100);
            for (int p = 0; !rc2 && p < r.lin->ny * r.lin->nu; p++) CHECK_CLOSE(q.lin->D[p], r.lin->D[p], tol * 100);
            run_free(&q);
        }
        run_free(&r);
    }
    free(text);
}

/* Replace the `outputs:` line of an example file by `outputs` (the caller frees the text). */
static char *example_with_outputs(const char *path, const char *outputs)
{
    char *text = slurp_room(path);
    char *o = text ? strstr(text, "outputs:") : NULL;
    if (!o) {
        free(text);
        return NULL;
    }
    char *eol = strchr(o, '\n');
    char *tail = strdup(eol ? eol + 1 : "");
    sprintf(o, "%s\n%s", outputs, tail);
    free(tail);
    return text;
}

TEST(spatial_reactions)
{
    /* the spatial slider-pendulum: the same reactions as the planar one, value and C, D */
    const char *outs = "outputs: {slide: \"FY(slide)\", pin: \"FY(pin)\", pinx: \"FX(pin)\", ts: \"TZ(slide)\", "
                       "tp: \"TX(pin)\"}";
    char *sp = example_with_outputs("examples/mech/slider_pendulum_spatial.yaml", outs);
    char *pl = example_with_outputs("examples/mech/slider_pendulum.yaml",
                                    "outputs: {slide: \"FY(slide)\", pin: \"FY(pin)\", pinx: \"FX(pin)\"}");
    CHECK(sp && pl);
    run rs, rp;
    memset(&rs, 0, sizeof rs), memset(&rp, 0, sizeof rp);
    mbl_status st;
    int rc = sp && pl ? run_text(sp, NULL, &rs, &st) : -1;
    if (!rc) rc = run_text(pl, NULL, &rp, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_CLOSE(rs.y[0], 30 * 9.81, 1e-10);
        CHECK_CLOSE(rs.y[1], 20 * 9.81, 1e-10);
        CHECK_CLOSE(rs.y[2], 0.0, 1e-10);
        CHECK_CLOSE(rs.y[3], 0.0, 1e-10);
        CHECK_CLOSE(rs.y[4], 0.0, 1e-10);
        CHECK_EQ_INT(rs.lin->nx, rp.lin->nx);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < rp.lin->nx; j++)
                CHECK_CLOSE(rs.lin->C[i + (size_t)j * rs.lin->ny], rp.lin->C[i + (size_t)j * rp.lin->ny], 1e-9);
            CHECK_CLOSE(rs.lin->D[i], rp.lin->D[i], 1e-9);
        }
        CHECK(fabs(rp.lin->C[2]) > 1); /* FX(pin) moves with the states: not a trivial comparison */
    }
    run_free(&rs), run_free(&rp);
    free(sp), free(pl);

    /* the spherical pendulum (a point mass on a distance joint) at a given swinging point: the rod's
     * pull T = m g cos th + m v^2 / l along the rod, v = l sin th phid */
    char *sph = example_with_outputs("examples/mech/spherical_pendulum.yaml",
                                     "outputs: {fx: \"FX(rod)\", fy: \"FY(rod)\", fz: \"FZ(rod)\", tx: \"TX(rod)\"}");
    CHECK(sph != NULL);
    if (sph) {
        run r;
        rc = run_text(sph, NULL, &r, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) {
            double m = 10, l = 0.5, g = 9.81, th = 30 * acos(-1.0) / 180, phid = 4.75975, v = l * sin(th) * phid;
            double T = m * g * cos(th) + m * v * v / l;
            CHECK_CLOSE(r.y[0], -T * sin(th), 1e-10);
            CHECK_CLOSE(r.y[1], 0.0, 1e-10);
            CHECK_CLOSE(r.y[2], T * cos(th), 1e-10);
            CHECK_CLOSE(r.y[3], 0.0, 1e-10);
        }
        run_free(&r);
        free(sph);
    }
}

/* G(s) = C (s I - A)^-1 B + D at a real s into G (ny x nu); 0 or an error */
static int tf_ss(const mbl_linear *L, double s, double *G)
{
    int nx = L->nx, nu = L->nu, ny = L->ny;
    double *T = calloc((size_t)nx * nx + 1, sizeof *T), *X = calloc((size_t)nx * nu + 1, sizeof *X);
    mbla_dlu *lu = NULL;
    mbl_status st;
    int rc = !T || !X;
    for (int j = 0; !rc && j < nx; j++)
        for (int i = 0; i < nx; i++) T[i + (size_t)j * nx] = (i == j ? s : 0.0) - L->A[i + (size_t)j * nx];
    if (!rc) memcpy(X, L->B, (size_t)nx * nu * sizeof *X);
    if (!rc) rc = mbla_dlu_new(nx, T, nx, &lu, &st);
    if (!rc) rc = mbla_dlu_solve(lu, 'N', nu, X, nx, &st);
    for (int j = 0; !rc && j < nu; j++)
        for (int i = 0; i < ny; i++) {
            double g = L->D[i + (size_t)j * ny];
            for (int c = 0; c < nx; c++) g += L->C[i + (size_t)c * ny] * X[c + (size_t)j * nx];
            G[i + (size_t)j * ny] = g;
        }
    mbla_dlu_free(lu);
    free(T), free(X);
    return rc;
}

/* G(s) = Cdd (s E - Ad)^-1 Bd + Dd of the descriptor form at a real s into G (ny x nu) */
static int tf_desc(const mbl_linear *L, double s, double *G)
{
    const mbl_lin_descriptor *ds = L->descriptor;
    if (!ds || !ds->E || !ds->Ad || !ds->Bd || !ds->Cdd || !ds->Dd) return -1;
    int nd = ds->nd, nu = L->nu, ny = L->ny;
    double *T = calloc((size_t)nd * nd + 1, sizeof *T), *X = calloc((size_t)nd * nu + 1, sizeof *X);
    mbla_dlu *lu = NULL;
    mbl_status st;
    int rc = !T || !X;
    for (size_t p = 0; !rc && p < (size_t)nd * nd; p++) T[p] = s * ds->E[p] - ds->Ad[p];
    if (!rc) memcpy(X, ds->Bd, (size_t)nd * nu * sizeof *X);
    if (!rc) rc = mbla_dlu_new(nd, T, nd, &lu, &st);
    if (!rc) rc = mbla_dlu_solve(lu, 'N', nu, X, nd, &st);
    for (int j = 0; !rc && j < nu; j++)
        for (int i = 0; i < ny; i++) {
            double g = ds->Dd[i + (size_t)j * ny];
            for (int c = 0; c < nd; c++) g += ds->Cdd[i + (size_t)c * ny] * X[c + (size_t)j * nd];
            G[i + (size_t)j * ny] = g;
        }
    mbla_dlu_free(lu);
    free(T), free(X);
    return rc;
}

/* The slider-pendulum (damped) with reactions, an acceleration and a position output: projection's
 * transfer functions equal augmented's at a few s (the same states: C and D equal too). */
static char *slider_reactions_text(void)
{
    char *t = example_with_outputs("examples/mech/slider_pendulum.yaml",
                                   "outputs: {slide: \"FY(slide)\", pin: \"FY(pin)\", pinx: \"FX(pin)\", "
                                   "acc: \"der(der(DX(s_rail, rail)))\", tip: \"DX(tip, rail)\"}");
    char *c = t ? strstr(t, "c: 0,") : NULL;
    if (c) memcpy(c, "c: 9,", 5); /* damped: C-hat enters */
    return t;
}

/* L's transfer function (its descriptor form's when desc) against ref's state-space one */
static void check_tf_agree(const mbl_linear *ref, const mbl_linear *L, int desc, double tol, const char *what)
{
    CHECK_EQ_INT(L->ny, ref->ny);
    CHECK_EQ_INT(L->nu, ref->nu);
    if (L->ny != ref->ny || L->nu != ref->nu || L->ny * L->nu > 64) return;
    for (double s = 0.7; s < 6; s += 2.1) {
        double Ga[64], Gm[64], scale = 0;
        CHECK(tf_ss(ref, s, Ga) == 0 && (desc ? tf_desc(L, s, Gm) : tf_ss(L, s, Gm)) == 0);
        for (int i = 0; i < L->ny * L->nu; i++) scale = fmax(scale, fabs(Ga[i]));
        for (int i = 0; i < L->ny * L->nu; i++)
            CHECK_MSG(fabs(Gm[i] - Ga[i]) <= tol * scale, "%s: G(%g)[%d] = %.15g, augmented %.15g", what, s, i, Gm[i],
                      Ga[i]);
    }
}

static void methods_agree(const char *text, int slider);

TEST(reactions_methods_agree)
{
    char *text = slider_reactions_text();
    CHECK(text != NULL);
    if (text) methods_agree(text, 1);
    free(text);
    methods_agree(pend_pushed, 0); /* the tension 2 l lambda(rod) and der(der(y)) of a dae model */
    methods_agree(pend_ode, 0);    /* the same with an ode state driven by F and its der() as an output */
    methods_agree(nh_damped, 0);   /* a non-holonomic multiplier mu(slip) (a column of Cdd too) */
}

static void methods_agree(const char *text, int slider)
{
    run ra;
    mbl_status st;
    int rc = run_text(text, "augmented", &ra, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        if (slider) CHECK(fabs(ra.lin->C[2]) > 1 && fabs(ra.lin->D[2]) > 0.1); /* FX(pin) moves with the states and F */
        run r;
        rc = run_text(text, "projection", &r, &st);
        CHECK_MSG(rc == 0, "projection: %s", st.msg);
        if (!rc) {
            check_tf_agree(ra.lin, r.lin, 0, 1e-11, "projection");
            for (int p = 0; p < ra.lin->ny * ra.lin->nx; p++) CHECK_CLOSE(r.lin->C[p], ra.lin->C[p], 1e-9);
            for (int p = 0; p < ra.lin->ny * ra.lin->nu; p++) CHECK_CLOSE(r.lin->D[p], ra.lin->D[p], 1e-11);
        }
        run_free(&r);
        /* descriptor: Cdd (sE - Ad)^-1 Bd + Dd, the pencil's own transfer function; its Dd differs
         * from D (FX(pin) and the acceleration answer F through the pencil) */
        rc = run_text(text, "descriptor", &r, &st);
        CHECK_MSG(rc == 0, "descriptor: %s", st.msg);
        if (!rc) {
            check_tf_agree(ra.lin, r.lin, 1, 1e-11, "descriptor");
            CHECK(fabs(r.lin->descriptor->Dd[slider ? 2 : 0] - ra.lin->D[slider ? 2 : 0]) > 0.1);
        }
        run_free(&r);
        /* penalty: its own states (q, v), the penalty forces as the multipliers: O(1/alpha) (1e-6) */
        rc = run_text(text, "penalty", &r, &st);
        CHECK_MSG(rc == 0, "penalty: %s", st.msg);
        if (!rc) check_tf_agree(ra.lin, r.lin, 0, 1e-4, "penalty");
        run_free(&r);
    }
    run_free(&ra);
}

int main(void)
{
    RUN(msd_acceleration_output);
    RUN(pendulum_tension_at_rest);
    RUN(pendulum_tension_moving);
    RUN(transfer_functions_agree);
    RUN(accelerations_moving_agree);
    RUN(nonholonomic_multiplier);
    RUN(refusals);
    RUN(nullspace_dependent_constraints);
    RUN(mechanism_reactions_planar);
    RUN(slider_pendulum_reactions);
    RUN(spatial_reactions);
    RUN(reactions_methods_agree);
    return test_summary("outputs");
}
