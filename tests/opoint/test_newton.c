/* The equilibrium Newton iteration's ways of ending (src/opoint/solve.c, opoint_newton).
 *
 * chord_steps_at_the_end: where Newton converges fast, its last steps are chord steps (chord_due,
 * try_chord: an earlier step's factorization, no Jacobian at those iterates). Observed through the
 * Jacobian evaluations (model_set_jac_observer) of mbl_operating_point: one per Newton iteration and
 * one more (the initial multipliers' at the guess, the mass check's values, is not an evaluation;
 * the solution's is), less one per chord step; the N-loop four-bars' equilibrium (every crank at the
 * angle th) is checked against the root of the derivative of their potential,
 * 9.81 (1.5 N + 0.5) cos th = N k (2 cos(th/2) - L0) sin(th/2) (k = 25, L0 = sqrt 2,
 * tests/opoint/test_converge.c), found here by bisection on (1.6, 3). The four-bars of N = 500 and
 * 1000 (2005 and 4005 unknowns, examples/fourbar.py's text written here) contract the scaled
 * residual 2e-3 -> 2e-6 in their fourth step and finish with three chord steps of the fourth
 * step's factorization (4e-9, 7e-12, 1.2e-14: 7 iterations, 5 evaluations); N = 300 (1205 unknowns,
 * below OPOINT_CHORD_MIN) keeps its Newton steps (iterates bit for bit as before: 6 iterations).
 *
 * linear_note: at a degenerate equilibrium (V = k x^4: the Jacobian 12 k x^2 vanishes at the root
 * x = 0) Newton contracts each step by 2/3 exactly, and the point says so in its notes, with the
 * error that rate leaves (x / 3 of the last step, times 2: the next iterate's |x| exactly), checked
 * against the point's own |x| (the root is 0); regular equilibria (V = k (x^2 / 2 + x^4), the
 * four-bars above) get no such note.
 *
 * vanishing_row: a cart (M = 2) with a pendulum bob (m = 1) in Cartesian coordinates, one
 * constraint (xp - x)^2 + yp^2 = l^2. At l = 0 its only real solution xp = x, yp = 0 is where its
 * gradient 2 (x - xp, xp - x, yp) is exactly zero: Newton converges linearly there, the rank test
 * must count the row out (rank 0, mbl_point.singular_row 1, the note naming constraint 1) and
 * mbl_linearize must refuse with MBL_ESINGULAR under every method, where before it reported a
 * 464 kHz "mode" from a multiplier of 2.8e12. At l = 0.5 the same model is regular: rank 1, no
 * such note, and its one oscillation is sqrt(g (M + m) / (M l)) = 5.42494240 rad/s (the closed
 * form). A degenerate equilibrium of the potential under a regular constraint (V = k x^4, y = x)
 * converges linearly too but keeps its row: rank 1, singular_row 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_view.h"
#include "fixture.h"
#include "fourbar_text.h"

#define LINEAR_HEAD "Newton converged only linearly ("

static void count(void *ctx, const mbl_model *md, const double *syms)
{
    (void)md, (void)syms;
    ++*(int *)ctx;
}

/* g(th) = 9.81 (1.5 N + 0.5) cos th - N k (2 cos(th/2) - L0) sin(th/2) */
static double fourbar_g(int N, double th)
{
    return 9.81 * (1.5 * N + 0.5) * cos(th) - N * 25.0 * (2 * cos(th / 2) - sqrt(2.0)) * sin(th / 2);
}

static double fourbar_root(int N)
{
    double a = 1.6, b = 3.0, ga = fourbar_g(N, a);
    for (int i = 0; i < 200 && b - a > 1e-15; i++) {
        double c = 0.5 * (a + b), gc = fourbar_g(N, c);
        if ((gc < 0) == (ga < 0)) a = c, ga = gc;
        else b = c;
    }
    return 0.5 * (a + b);
}

TEST(chord_steps_at_the_end)
{
    /* N = 500 and 1000: 2005 and 4005 unknowns (OPOINT_CHORD_MIN 2000); N = 300 (1205) none */
    static const struct {
        int N, chords;
    } cases[] = {{500, 3}, {1000, 3}, {300, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char name[32], *text = fourbar_text(cases[k].N, 0, 0);
        snprintf(name, sizeof name, "fourbar_N%d", cases[k].N);
        CHECK(text != NULL);
        mbl_model *md = text ? fixture_model_fwd(NULL, text, name, 0) : NULL;
        free(text);
        if (!md) continue;
        int nev = 0;
        model_set_jac_observer(count, &nev);
        mbl_point *pt = NULL;
        mbl_status st;
        int rc = mbl_operating_point(md, NULL, &pt, &st);
        model_set_jac_observer(NULL, NULL);
        CHECK_MSG(rc == 0, "%s: %s", name, st.msg);
        if (!rc) {
            /* one evaluation per iteration and one more, less the chord steps' iterates */
            CHECK_MSG(nev == pt->iterations + 1 - cases[k].chords, "%s: %d Jacobian evaluations in %d Newton iterations "
                      "(%d chord steps expected)", name, nev, pt->iterations, cases[k].chords);
            /* the first crank's end (xB0, yB0): the files' first coordinates */
            CHECK(!strcmp(mbl_model_coord_name(md, 0), "xB0") && !strcmp(mbl_model_coord_name(md, 1), "yB0"));
            double th = atan2(pt->q[1], pt->q[0]), ref = fourbar_root(cases[k].N);
            CHECK_MSG(fabs(th - ref) <= 1e-13, "%s: th %.17g, the root %.17g", name, th, ref);
            CHECK_MSG(pt->scaled_residual <= 1e-12, "%s: scaled residual %g", name, pt->scaled_residual);
            CHECK_MSG(!strstr(pt->notes, LINEAR_HEAD), "%s: %s", name, pt->notes);
            printf("%s: %d iterations, %d Jacobian evaluations, th - root %.2g\n", name, pt->iterations, nev,
                   th - ref);
        }
        mbl_point_free(pt);
        mbl_model_free(md);
    }
}

static const char *const quartic = "model: dae\n"
                                   "name: quartic spring\n"
                                   "parameters: {m: 1, k: 3}\n"
                                   "coordinates: {x: 0.7}\n"
                                   "kinetic_energy: \"m/2*der(x)^2\"\n"
                                   "potential_energy: \"k*x^4\"\n";
static const char *const regular = "model: dae\n"
                                   "name: hardening spring\n"
                                   "parameters: {m: 1, k: 3}\n"
                                   "coordinates: {x: 0.7}\n"
                                   "kinetic_energy: \"m/2*der(x)^2\"\n"
                                   "potential_energy: \"k*(x^2/2 + x^4)\"\n";

TEST(linear_note)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    int rc = fixture_model_point(NULL, quartic, "quartic.yaml", &md, &pt, &st);
    CHECK_MSG(rc == 0, "quartic: %s", st.msg);
    if (!rc) {
        const char *n = strstr(pt->notes, LINEAR_HEAD);
        CHECK_MSG(n != NULL, "quartic: no note of the linear rate (notes: %s)", pt->notes);
        int it = 0;
        double ratio = 0, acc = 0;
        const char *a = n ? strstr(n, "accurate to about ") : NULL;
        CHECK(n && sscanf(n + strlen(LINEAR_HEAD), "%d iterations in its last solve, each step %lf", &it, &ratio) == 2);
        CHECK(a && sscanf(a + strlen("accurate to about "), "%lf", &acc) == 1);
        CHECK_MSG(strstr(pt->notes, "a degenerate equilibrium") != NULL, "quartic: %s", pt->notes);
        CHECK_MSG(fabs(ratio - 2.0 / 3) < 0.01, "quartic: each step %g of the last (2/3 exactly)", ratio);
        CHECK_MSG(it == pt->iterations, "quartic: %d iterations in the note, %d the point's", it, pt->iterations);
        /* the estimate (printed to one digit, half a unit of it) within 5 % of the true error |x - 0| */
        double x = fabs(pt->q[0]), digit = x > 0 ? pow(10, floor(log10(x))) : 0;
        CHECK_MSG(x > 0 && fabs(acc - x) <= 0.5 * digit + 0.05 * x, "quartic: accurate to about %g, the error %g", acc, x);
        printf("quartic: x = %.3g after %d iterations; notes: %s\n", pt->q[0], pt->iterations, pt->notes);
    }
    mbl_point_free(pt), pt = NULL;
    mbl_model_free(md), md = NULL;
    rc = fixture_model_point(NULL, regular, "regular.yaml", &md, &pt, &st);
    CHECK_MSG(rc == 0, "regular: %s", st.msg);
    if (!rc) {
        CHECK_MSG(!strstr(pt->notes, LINEAR_HEAD), "regular: %s", pt->notes);
        CHECK_MSG(fabs(pt->q[0]) <= 1e-15, "regular: x = %g", pt->q[0]);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

static const char *const cart_l0 = "model: dae\n"
                                   "name: cart with a zero-length pendulum\n"
                                   "parameters: {M: 2, m: 1, l: 0, g: 9.81}\n"
                                   "coordinates: {x: 0.3, xp: 0.5, yp: -0.4}\n"
                                   "kinetic_energy: \"M/2*der(x)^2 + m/2*(der(xp)^2 + der(yp)^2)\"\n"
                                   "potential_energy: \"m*g*yp\"\n"
                                   "constraints: [\"(xp - x)^2 + yp^2 - l^2\"]\n";
static const char *const quartic_tied = "model: dae\n"
                                        "name: quartic spring, tied\n"
                                        "parameters: {m: 1, k: 3}\n"
                                        "coordinates: {x: 0.7, y: 0.7}\n"
                                        "kinetic_energy: \"m/2*(der(x)^2 + der(y)^2)\"\n"
                                        "potential_energy: \"k*x^4\"\n"
                                        "constraints: [\"y - x\"]\n";

TEST(vanishing_row)
{
    static const char *const methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor",
                                          "penalty", "fd"};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    int rc = fixture_model_point(NULL, cart_l0, "cart_l0.yaml", &md, &pt, &st);
    CHECK_MSG(rc == 0, "zero length: %s", st.msg);
    if (!rc) {
        CHECK_MSG(strstr(pt->notes, LINEAR_HEAD) != NULL, "zero length: %s", pt->notes);
        CHECK_MSG(strstr(pt->notes, "the Jacobian row of constraint 1 vanishes at the point") != NULL, "zero length: %s",
                  pt->notes);
        CHECK_EQ_INT(pt->rank_phi_q, 0);
        CHECK_EQ_INT(pt->singular_row, 1);
        for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
            mbl_lin_options lo;
            mbl_lin_options_default(&lo);
            lo.method = methods[i];
            mbl_linear *lin = NULL;
            int lrc = mbl_linearize(md, pt, &lo, &lin, &st);
            CHECK_MSG(lrc == MBL_ESINGULAR && !lin && strstr(st.msg, "constraint 1 vanishes at the operating point"),
                      "zero length, %s: rc %d, %s", methods[i], lrc, lrc ? st.msg : "answered");
            mbl_linear_free(lin);
        }
    }
    mbl_point_free(pt), pt = NULL;
    /* the same model at l = 0.5: regular, its closed-form frequency */
    int il = fixture_param_index(md, "l");
    CHECK(il >= 0 && mbl_model_set_param(md, il, 0.5, &st) == 0);
    rc = mbl_operating_point(md, NULL, &pt, &st);
    CHECK_MSG(rc == 0, "l = 0.5: %s", st.msg);
    if (!rc) {
        CHECK_EQ_INT(pt->rank_phi_q, 1);
        CHECK_EQ_INT(pt->singular_row, 0);
        CHECK_MSG(!strstr(pt->notes, "vanishes"), "l = 0.5: %s", pt->notes);
    }
    double w[4];
    int nw = fixture_omegas(md, NULL, w, 4, NULL);
    CHECK_MSG(nw == 1 && fabs(w[0] - sqrt(9.81 * 3 / (2 * 0.5))) < 1e-9 * w[0], "l = 0.5: %d modes, %g rad/s", nw,
              nw ? w[0] : 0);
    mbl_point_free(pt), pt = NULL;
    mbl_model_free(md), md = NULL;
    /* a degenerate potential under a regular constraint: linear, but no row vanishes */
    rc = fixture_model_point(NULL, quartic_tied, "quartic_tied.yaml", &md, &pt, &st);
    CHECK_MSG(rc == 0, "quartic, tied: %s", st.msg);
    if (!rc) {
        CHECK_MSG(strstr(pt->notes, LINEAR_HEAD) != NULL, "quartic, tied: %s", pt->notes);
        CHECK_EQ_INT(pt->rank_phi_q, 1);
        CHECK_EQ_INT(pt->singular_row, 0);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(chord_steps_at_the_end);
    RUN(linear_note);
    RUN(vanishing_row);
    return test_summary("newton");
}
