/* Operating points that must never be silently wrong (issue 10): convergence on a scaled
 * residual, not one relative to the starting residual; the multipliers' start keeping Newton on
 * the branch of the guess; the user's choice of the guess by name; notes when the point moved
 * far. References are closed forms (stated with each model). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "fixture.h"

/* V = k1 x^2/2 + k3 x^4/4, k3 = 1e10, guess x = 1: the only equilibrium is x = 0 with K = k1.
 * The residual at the guess is 1e10, so a test relative to it stopped at x = 8.9e-5, K = 237.6. */
static const char *quartic =
    "model: dae\n"
    "parameters: {m: 1, k1: 1, k3: 1e10}\n"
    "coordinates: {x: 1}\n"
    "kinetic_energy: \"0.5*m*der(x)^2\"\n"
    "potential_energy: \"0.5*k1*x^2 + 0.25*k3*x^4\"\n"
    "linearize: {at: equilibrium}\n";

TEST(quartic_far_guess)
{
    mbl_status st;
    mbl_model *md = fixture_model(NULL, quartic, "test.yaml", &st);
    CHECK(md != NULL);
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
    if (pt) {
        CHECK_MSG(fabs(pt->q[0]) < 1e-8, "x* = %g", pt->q[0]);
        CHECK(pt->residual <= 1e-12);
        CHECK(pt->scaled_residual <= 1e-12);
        /* the guess moved by 1 = 1 x max(1, |guess|) > 0.5: said */
        CHECK_MSG(strstr(pt->notes, "moved far from the initial guess: x (1 -> ") != NULL, "notes: %s", pt->notes);
        CHECK(mbl_linearize(md, pt, NULL, &lin, &st) == 0);
        if (lin) {
            CHECK_CLOSE(lin->M[0], 1.0, 1e-12);
            CHECK_CLOSE(lin->K[0], 1.0, 1e-9); /* K = k1 + 3 k3 x*^2 = 1 */
        }
    }
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* V = 1e300 x^4: the equilibrium x = 0 is degenerate (K = 0), Newton converges linearly (x ->
 * 2x/3) and the residual 4e300 x^3 stays astronomically large for hundreds of iterations. It
 * must fail, not report "converged" (it did, with residual 2.8e285). */
TEST(huge_degenerate_fails)
{
    mbl_status st;
    mbl_model *md = fixture_model(NULL, "model: dae\n"
                                        "coordinates: {x: 1}\n"
                                        "kinetic_energy: \"0.5*der(x)^2\"\n"
                                        "potential_energy: \"1e300*x^4\"\n"
                                        "linearize: {at: equilibrium}\n",
                                        "test.yaml", &st);
    CHECK(md != NULL);
    if (!md) return;
    mbl_point *pt = NULL;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    CHECK_EQ_INT(rc, MBL_ENOCONV);
    CHECK(pt == NULL);
    CHECK_MSG(strstr(st.msg, "did not converge") && strstr(st.msg, "degenerate") && !strchr(st.msg, '\n'), "%s",
              st.msg);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* The same physics in other units must converge as well: the scaled test is unit-free. A stiff
 * spring under gravity, k = 1e9 N/m, m g = 9.81e6 N: x* = -m g / k = -9.81e-3 exactly. */
TEST(stiff_spring_units)
{
    mbl_status st;
    mbl_model *md = fixture_model(NULL, "model: dae\n"
                                        "parameters: {m: 1e6, g: 9.81, k: 1e9}\n"
                                        "coordinates: {x: 3}\n"
                                        "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                                        "potential_energy: \"0.5*k*x^2 + m*g*x\"\n"
                                        "linearize: {at: equilibrium}\n",
                                        "test.yaml", &st);
    CHECK(md != NULL);
    if (!md) return;
    mbl_point *pt = NULL;
    CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
    if (pt) CHECK_REL(pt->q[0], -9.81e-3, 1e-13);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* tests/opoint/slider_crank.yaml: closed-form equilibria in its header. */
static const double c_r = 0.3, c_L = 1.0, c_k = 50, c_th0 = 0.0923, c_a = 1.29, c_Jc = 0.02, c_Jr = 0.1, c_ms = 2;

static double crank_s(double u) { return c_r * cos(u) + sqrt(c_L * c_L - c_r * c_r * sin(u) * sin(u)); }

static int crank_run(const mbl_setting *guess, int nguess, mbl_model **md, mbl_point **pt, mbl_linear **lin,
                     mbl_status *st)
{
    *md = NULL, *pt = NULL, *lin = NULL;
    int rc = mbl_model_load_file("tests/opoint/slider_crank.yaml", NULL, 0, md, st);
    mbl_opoint_options opt;
    mbl_opoint_options_default(&opt);
    opt.guess = guess;
    opt.nguess = nguess;
    if (!rc) rc = mbl_operating_point(*md, &opt, pt, st);
    if (!rc) rc = mbl_linearize(*md, *pt, NULL, lin, st);
    return rc;
}

TEST(slider_crank_stays_on_branch)
{
    /* guess th = 0.09, 0.0023 rad from the unstable equilibrium th0 = 0.0923: Newton from zero
     * multipliers went to th = -287.64 (the stable point 1.3823 - 46 x 2 pi) without a word */
    mbl_status st;
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    int rc = crank_run(NULL, 0, &md, &pt, &lin, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        double s0 = crank_s(c_a);
        CHECK_CLOSE(pt->q[0], c_th0, 1e-12);
        CHECK_CLOSE(pt->q[1], 0.0, 1e-12);
        CHECK_CLOSE(pt->q[2], c_r + c_L, 1e-12);
        CHECK_REL(pt->lambda[0], c_k * (c_r + c_L - s0), 1e-10);
        CHECK(pt->notes[0] == '\0' || !strstr(pt->notes, "moved far"));
        CHECK_REL(lin->M[0], c_Jc + c_Jr * (c_r / c_L) * (c_r / c_L), 1e-10);
        CHECK_REL(lin->K[0], -c_k * (c_r + c_L - s0) * c_r * (1 + c_r / c_L), 1e-9);
    }
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(slider_crank_guess_by_name)
{
    /* the user picks the stable branch th0 + a by naming the coordinate */
    mbl_status st;
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_setting g[1] = {{"th", 1.2}};
    int rc = crank_run(g, 1, &md, &pt, &lin, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        double u = c_a, w = sqrt(c_L * c_L - c_r * c_r * sin(u) * sin(u));
        double ds = -c_r * sin(u) - c_r * c_r * sin(u) * cos(u) / w; /* s'(a) */
        double dphi = c_r * cos(u) / w;                            /* phi'(a), L cos phi = w */
        CHECK_CLOSE(pt->q[0], c_th0 + c_a, 1e-12);
        CHECK_CLOSE(pt->q[2], crank_s(c_a), 1e-12);
        CHECK_REL(lin->K[0], c_k * ds * ds, 1e-9);
        CHECK_REL(lin->M[0], c_Jc + c_Jr * dphi * dphi + c_ms * ds * ds, 1e-9);
    }
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    /* th = 3 (phi and s of the file, for th = 0.09): Newton used to land far away (named in the
       notes); the guess is now projected onto the constraints first and the equilibrium nearest
       it is the unstable u = pi, th = th0 + pi = 3.2339 (issue 29) */
    mbl_setting g3[1] = {{"th", 3.0}};
    rc = crank_run(g3, 1, &md, &pt, &lin, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_CLOSE(pt->q[0], c_th0 + 3.14159265358979323846, 1e-12);
        CHECK_MSG(strstr(pt->notes, "moved far") == NULL, "%s", pt->notes);
    }
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    /* an unknown name is an argument error naming it */
    mbl_setting bad[1] = {{"theta", 1.0}};
    rc = crank_run(bad, 1, &md, &pt, &lin, &st);
    CHECK_EQ_INT(rc, MBL_EARG);
    CHECK(strstr(st.msg, "no coordinate named 'theta'") != NULL);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* Only derivatives of V are compiled for the equations, so log(x - 1) at x = 0 (dV/dx = x +
 * 1/(x - 1) = -1 is finite) was accepted. At `given` x = 0, and at the equilibrium of
 * V = x^2/2 - 2 log(x - 1) reached from x = 0 (x - 2/(x - 1) = 0: x = -1, where x - 1 = -2),
 * the point must be refused, naming the expression and its position. */
TEST(domain_error_in_source_expression)
{
    static const char *texts[2] = {"model: dae\n"
                                   "parameters: {m: 1, k: 1}\n"
                                   "coordinates: {x: 0}\n"
                                   "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                                   "potential_energy: \"0.5*k*x^2 + log(x - 1)\"\n"
                                   "linearize: {at: given}\n",
                                   "model: dae\n"
                                   "parameters: {m: 1, k: 1}\n"
                                   "coordinates: {x: 0}\n"
                                   "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                                   "potential_energy: \"0.5*k*x^2 - 2*log(x - 1)\"\n"
                                   "linearize: {at: equilibrium}\n"};
    for (int c = 0; c < 2; c++) {
        mbl_status st;
        mbl_model *md = fixture_model(NULL, texts[c], "test.yaml", &st);
        CHECK(md != NULL);
        if (!md) continue;
        mbl_point *pt = NULL;
        int rc = mbl_operating_point(md, NULL, &pt, &st);
        CHECK_EQ_INT(rc, MBL_EDOMAIN);
        CHECK(pt == NULL);
        CHECK_MSG(strstr(st.msg, "test.yaml:5:20: potential_energy is not defined at the operating point") == st.msg &&
                      strstr(st.msg, "log of non-positive value") && !strchr(st.msg, '\n'),
                  "%s", st.msg);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    /* an output and a variable are the user's expressions too; a safe sqrt (of a sum of squares) is
     * not a problem, a valid log is not either */
    mbl_status st;
    mbl_model *md = fixture_model(NULL, "model: dae\n"
                                        "parameters: {m: 1, k: 1}\n"
                                        "coordinates: {x: 0.5}\n"
                                        "variables: {r: \"sqrt(x^2 + 1)\", w: \"log(x)\"}\n"
                                        "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                                        "potential_energy: \"0.5*k*r^2\"\n"
                                        "outputs: {y: \"sqrt(x)\", z: \"log(2 + x)\"}\n"
                                        "linearize: {at: equilibrium}\n",
                                        "test.yaml", &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (md) {
        mbl_point *pt = NULL;
        int rc = mbl_operating_point(md, NULL, &pt, &st);
        /* equilibrium x = 0: log(x) (the unused variable w) is undefined there, sqrt(x) (output
         * y) is defined (0) */
        CHECK_EQ_INT(rc, MBL_EDOMAIN);
        CHECK_MSG(strstr(st.msg, "test.yaml:4:") == st.msg && strstr(st.msg, "variable 'w'"), "%s", st.msg);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
}

static double coord(const mbl_model *md, const mbl_point *pt, const char *name)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    for (int i = 0; i < info.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(md, i), name)) return pt->q[i];
    CHECK_MSG(0, "no coordinate %s", name);
    return NAN;
}

/* a - b wrapped into (-pi, pi] */
static double wrap(double a, double b) { return atan2(sin(a - b), cos(a - b)); }

/* A 3:1 gear (JQ(j1) + 3 JQ(j2) = 0, continuous twist angles) whose torsion spring holds the gear
 * at 1.2 rad: the equilibrium has the gear at 1.2, the pinion at -3.6 and every multiplier 0 (the
 * spring is at rest, nothing is loaded). From the least-squares multipliers at the guess (the
 * coupler's 3.6 takes up part of the spring's unbalanced torque) the Newton iterates were drawn
 * to a point where the Jacobian is singular (smallest singular value 3e-2 to 2e-7 in eight steps)
 * while the residual 5.9 and the gradient of its norm (about 111) are not small: the Newton steps
 * grew to 3e6 along the nearly null direction and the line search stalled ("no solution found
 * near the initial guess"). A Levenberg-Marquardt step leaves that point, Newton then converges. */
TEST(gear_newton_stall_levenberg_marquardt)
{
    mbl_status st;
    mbl_model *md = fixture_model(NULL, "model: mechanism\n"
                                        "parameters: {k: 10, I1: 0.5, I2: 4}\n"
                                        "ground: {markers: {O1: {}, O2: {position: [3, 0, 0]}}}\n"
                                        "bodies:\n"
                                        "  pinion: {mass: 1, inertia: [0.3, 0.3, I1], markers: {h1: {}}}\n"
                                        "  gear: {mass: 1, inertia: [2.5, 2.5, I2], position: [3, 0, 0], markers: {h2: {}}}\n"
                                        "joints:\n"
                                        "  j1: {type: revolute, i: h1, j: O1}\n"
                                        "  j2: {type: revolute, i: h2, j: O2}\n"
                                        "  mesh: {type: coupler, joints: [j1, j2], ratios: [1, 3], offset: 0}\n"
                                        "forces: {hold: {type: torsion, i: h2, j: O2, stiffness: k, angle: 1.2}}\n",
                                        "test.yaml", &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_point *pt = NULL;
    CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
    if (pt) {
        double pin = 2 * atan2(coord(md, pt, "pinion_e3"), coord(md, pt, "pinion_e0"));
        double gear = 2 * atan2(coord(md, pt, "gear_e3"), coord(md, pt, "gear_e0"));
        printf("  3:1 gear: pinion %.15g (closed form -3.6 mod 2 pi), gear %.15g (1.2), %d iterations\n", pin, gear,
               pt->iterations);
        CHECK_MSG(fabs(wrap(pin, -3.6)) < 1e-10, "pinion %.17g", pin);
        CHECK_MSG(fabs(wrap(gear, 1.2)) < 1e-10, "gear %.17g", gear);
        for (int i = 0; i < pt->m; i++) CHECK_MSG(fabs(pt->lambda[i]) < 1e-10, "lambda[%d] = %g", i, pt->lambda[i]);
        CHECK(pt->residual <= 1e-12);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* Unit spread in a large square Newton system (KLU path, more than 600 unknowns): 350 pairs of a
 * coordinate x_i and a coordinate z_i in a unit 1e-13 of x's, V = sum (x_i - 1)^2 / 2 +
 * (x_i + 1e-13 z_i - 3)^2 / 2 from x = z = 0; the equilibrium is x_i = 1, z_i = 2e13. Even after
 * KLU's row scaling the pivot ratio of the raw Jacobian is 5e-14, which read as rank deficiency
 * sent the step to SPQR's rank-revealing solve, whose tolerance dropped the z columns: the line
 * search stalled (as the flexible double pendulum at n_p >= 400 did). The Newton matrix is now
 * equilibrated (rows and columns) before the pivot ratio is read. */
#define APPEND(...) (len += len < cap ? (size_t)snprintf(text + len, cap - len, __VA_ARGS__) : 0)
TEST(sparse_unit_spread)
{
    enum { N = 350 };
    size_t cap = 256 * (size_t)N + 256, len = 0; /* about 110 characters a pair */
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) return;
    APPEND("model: dae\ncoordinates: {");
    for (int i = 0; i < N; i++) APPEND("%sx%d: 0, z%d: 0", i ? ", " : "", i, i);
    APPEND("}\nkinetic_energy: \"");
    for (int i = 0; i < N; i++)
        APPEND("%s0.5*der(x%d)^2 + 0.5*der(z%d)^2", i ? " + " : "", i, i);
    APPEND("\"\npotential_energy: \"");
    for (int i = 0; i < N; i++)
        APPEND("%s0.5*(x%d - 1)^2 + 0.5*(x%d + 1e-13*z%d - 3)^2", i ? " + " : "",
                                i, i, i);
    APPEND("\"\nlinearize: {at: equilibrium}\n");
    CHECK(len < cap);
    mbl_status st;
    mbl_model *md = fixture_model(NULL, text, "test.yaml", &st);
    free(text);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_point *pt = NULL;
    CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
    if (pt) {
        double ex = 0, ez = 0;
        for (int i = 0; i < N; i++) {
            char name[32];
            snprintf(name, sizeof name, "x%d", i);
            ex = fmax(ex, fabs(coord(md, pt, name) - 1));
            snprintf(name, sizeof name, "z%d", i);
            ez = fmax(ez, fabs(coord(md, pt, name) / 2e13 - 1));
        }
        printf("  350 pairs, units 1 and 1e-13: max |x_i - 1| = %.3g, max |z_i / 2e13 - 1| = %.3g, %d iterations\n",
               ex, ez, pt->iterations);
        CHECK_MSG(ex < 1e-12 && ez < 1e-12, "max |x_i - 1| = %g, max |z_i / 2e13 - 1| = %g", ex, ez);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}


/* A pendulum given a swing rate in the file but linearized at an equilibrium: the point is at rest
 * (hanging, omega^2 = g/l = 9.81 exactly) and the notes say the file's velocity was not used; the
 * same file at rest has no such note. */
TEST(equilibrium_notes_unused_velocities)
{
    const char *swing = "model: dae\nparameters: {m: 1, l: 1, g: 9.81}\n"
                        "coordinates: {th: 0.1}\nvelocities: {th: 2.5}\n"
                        "kinetic_energy: \"0.5*m*l^2*der(th)^2\"\npotential_energy: \"-m*g*l*cos(th)\"\n"
                        "linearize: {at: equilibrium}\n";
    const char *rest = "model: dae\nparameters: {m: 1, l: 1, g: 9.81}\ncoordinates: {th: 0.1}\n"
                       "kinetic_energy: \"0.5*m*l^2*der(th)^2\"\npotential_energy: \"-m*g*l*cos(th)\"\n"
                       "linearize: {at: equilibrium}\n";
    for (int c = 0; c < 2; c++) {
        mbl_status st;
        mbl_model *md = fixture_model(NULL, c ? rest : swing, "test.yaml", &st);
        CHECK_MSG(md != NULL, "%s", st.msg);
        if (!md) continue;
        mbl_point *pt = NULL;
        CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
        if (pt) {
            CHECK(fabs(pt->q[0]) < 1e-12 && pt->v[0] == 0.0);
            const char *want = "velocities of the initial state are not used at an equilibrium (1 nonzero, largest "
                               "der(th) = 2.5)";
            CHECK_MSG(c ? strstr(pt->notes, "not used at an equilibrium") == NULL : strstr(pt->notes, want) != NULL,
                      "notes: %s", pt->notes);
        }
        mbl_point_free(pt);
        mbl_model_free(md);
    }
}

/* min_norm_multipliers says the constraint Jacobian lost rank (redundant constraints): a guess that
 * is the equilibrium already (no Newton step taken) must not set it from another subproblem's rank
 * (the initial multipliers' 1 of the 3 unknowns here set it before), and a redundant pair sets it
 * whether or not a step is taken. */
TEST(min_norm_multipliers_without_steps)
{
    const char *one = "model: dae\nparameters: {m: 1, l: 1, g: 9.81}\ncoordinates: {x: 0, y: -1}\n"
                      "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
                      "constraints: {rod: \"x^2 + y^2 - l^2\"}\nlinearize: {at: equilibrium}\n";
    const char *two = "model: dae\nparameters: {m: 1, l: 1, g: 9.81}\ncoordinates: {x: 0, y: -1}\n"
                      "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
                      "constraints: {rod: \"x^2 + y^2 - l^2\", again: \"2*(x^2 + y^2 - l^2)\"}\n"
                      "linearize: {at: equilibrium}\n";
    for (int c = 0; c < 2; c++) {
        mbl_status st;
        mbl_model *md = fixture_model(NULL, c ? two : one, "test.yaml", &st);
        CHECK_MSG(md != NULL, "%s", st.msg);
        if (!md) continue;
        mbl_point *pt = NULL;
        CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
        if (pt) {
            CHECK_EQ_INT(pt->iterations, 0); /* the guess is the equilibrium */
            CHECK_MSG(pt->min_norm_multipliers == c, "%s constraint: min_norm_multipliers = %d", c ? "redundant" : "one",
                      pt->min_norm_multipliers);
            if (!c) CHECK_CLOSE(pt->lambda[0], 9.81 / 2, 1e-12); /* m g = -2 y lambda */
        }
        mbl_point_free(pt);
        mbl_model_free(md);
    }
}

int main(void)
{
    RUN(domain_error_in_source_expression);
    RUN(quartic_far_guess);
    RUN(huge_degenerate_fails);
    RUN(stiff_spring_units);
    RUN(slider_crank_stays_on_branch);
    RUN(slider_crank_guess_by_name);
    RUN(gear_newton_stall_levenberg_marquardt);
    RUN(sparse_unit_spread);
    RUN(equilibrium_notes_unused_velocities);
    RUN(min_norm_multipliers_without_steps);
    return test_summary("opoint");
}
