/* Operating points that must never be silently wrong (issue 10): convergence on a scaled
 * residual, not one relative to the starting residual; the multipliers' start keeping Newton on
 * the branch of the guess; the user's choice of the guess by name; notes when the point moved
 * far. References are closed forms (stated with each model). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

static mbl_model *load(const char *text, mbl_status *st)
{
    mbl_model *md = NULL;
    if (mbl_model_load_string(text, strlen(text), "test.yaml", NULL, 0, &md, st)) return NULL;
    return md;
}

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
    mbl_model *md = load(quartic, &st);
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
    mbl_model *md = load("model: dae\n"
                         "coordinates: {x: 1}\n"
                         "kinetic_energy: \"0.5*der(x)^2\"\n"
                         "potential_energy: \"1e300*x^4\"\n"
                         "linearize: {at: equilibrium}\n",
                         &st);
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
    mbl_model *md = load("model: dae\n"
                         "parameters: {m: 1e6, g: 9.81, k: 1e9}\n"
                         "coordinates: {x: 3}\n"
                         "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                         "potential_energy: \"0.5*k*x^2 + m*g*x\"\n"
                         "linearize: {at: equilibrium}\n",
                         &st);
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
    /* a guess that lands far away is named in the notes */
    mbl_setting g3[1] = {{"th", 3.0}};
    rc = crank_run(g3, 1, &md, &pt, &lin, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) CHECK_MSG(strstr(pt->notes, "moved far from the initial guess: th (3 -> ") != NULL, "%s", pt->notes);
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
        mbl_model *md = load(texts[c], &st);
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
    mbl_model *md = load("model: dae\n"
                         "parameters: {m: 1, k: 1}\n"
                         "coordinates: {x: 0.5}\n"
                         "variables: {r: \"sqrt(x^2 + 1)\", w: \"log(x)\"}\n"
                         "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                         "potential_energy: \"0.5*k*r^2\"\n"
                         "outputs: {y: \"sqrt(x)\", z: \"log(2 + x)\"}\n"
                         "linearize: {at: equilibrium}\n",
                         &st);
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

int main(void)
{
    RUN(domain_error_in_source_expression);
    RUN(quartic_far_guess);
    RUN(huge_degenerate_fails);
    RUN(stiff_spring_units);
    RUN(slider_crank_stays_on_branch);
    RUN(slider_crank_guess_by_name);
    return test_summary("opoint");
}
