/* The state selection's test of the given states first (src/lin/select.c, given_states_pass; issue
 * 34 item 4): when the user's states complete Phi_q to a square matrix that is far from singular and
 * no exchange of one of them for a coordinate would enlarge the weighted pivot block's determinant,
 * they are used as given without the complete-pivoting selection of source 000 Eq. 22. Checked
 * against that full selection (lin_select_states_how with given_first 0, the path before):
 *   - the models with a full set of given states (chains of 2 to 32 links: both the exact and the
 *     estimated condition; four-bars; natural coordinates; a nonholonomic disc): the same states,
 *     counts and report text;
 *   - a pendulum in Cartesian coordinates (x, y; x^2 + y^2 = 1) with the state x at angle t from the
 *     vertical: the scaled [Phi_q; s_q] = [[x, y] / max(|x|, |y|); [-1, 0]] has the candidate column
 *     of its inverse (-1, x / y), so the rule keeps x while |tan t| <= 1 / state_weight (closed form);
 *     the full selection agrees away from that bound, and both refuse or exchange beyond it;
 *   - the same pendulum swinging: at a point with motion x is kept while A's condition allows
 *     (closed form), beyond the weight's bound too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/lin_internal.h"
#include "mblin/mblin.h"
#include "fixture.h"
#include "test.h"

/* the selection both ways at pt: 1 when they agree (states, counts, report), 0 otherwise; *kept_out
 * (if not NULL): 1 when the fast way kept every user state */
static int compare_at(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *lo, const char *what,
                      int *kept_out, int verbose)
{
    mbl_status st;
    mbl_eval ev;
    memset(&ev, 0, sizeof ev);
    int ok = lin_eval_init(md, &ev, &st) == 0 && lin_eval_at(md, pt, &ev, &st) == 0;
    CHECK_MSG(ok, "%s: %s", what, st.msg);
    if (!ok) {
        lin_eval_free(&ev);
        return 0;
    }
    mbl_linear la, lb;
    memset(&la, 0, sizeof la), memset(&lb, 0, sizeof lb);
    mbl_state_ref *Sa = NULL, *Wa = NULL, *Sb = NULL, *Wb = NULL;
    int z0a = -1, z1a = -1, z0b = -1, z1b = -1;
    char ma[sizeof st.msg] = "", mb[sizeof st.msg] = "";
    int rca = lin_select_states_how(md, &ev, lo, 1, &la, &Sa, &z0a, &Wa, &z1a, &st);
    if (rca) snprintf(ma, sizeof ma, "%s", st.msg);
    int rcb = lin_select_states_how(md, &ev, lo, 0, &lb, &Sb, &z0b, &Wb, &z1b, &st);
    if (rcb) snprintf(mb, sizeof mb, "%s", st.msg);
    int same = rca == rcb && !strcmp(ma, mb);
    if (same && !rca) {
        same = z0a == z0b && z1a == z1b && !strcmp(la.selection, lb.selection) && la.nsel_added == lb.nsel_added &&
               la.nsel_dropped == lb.nsel_dropped;
        for (int i = 0; same && i < z0a; i++) same = Sa[i].kind == Sb[i].kind && Sa[i].index == Sb[i].index;
        for (int i = 0; same && i < z1a; i++) same = Wa[i].kind == Wb[i].kind && Wa[i].index == Wb[i].index;
    }
    if (kept_out) {
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        *kept_out = !rca && la.nsel_added == 0 && la.nsel_dropped == 0;
    }
    if (!same && verbose)
        fprintf(stderr, "%s: given first rc %d '%s' z0 %d z1 %d '%s'; full rc %d '%s' z0 %d z1 %d '%s'\n", what, rca,
                ma, z0a, z1a, rca ? "" : la.selection, rcb, mb, z0b, z1b, rcb ? "" : lb.selection);
    mbl_free(Sa), mbl_free(Wa), mbl_free(Sb), mbl_free(Wb);
    lin_eval_free(&ev);
    return same;
}

static void check_file_or_text(const char *path, const char *text)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    int ok = (text ? mbl_model_load_string(text, strlen(text), path, NULL, 0, &md, &st)
                   : mbl_model_load_file(path, NULL, 0, &md, &st)) == 0 &&
             mbl_operating_point(md, NULL, &pt, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (ok) {
        mbl_lin_options lo;
        mbl_lin_options_default(&lo);
        int kept = 0;
        CHECK_MSG(compare_at(md, pt, &lo, path, &kept, 1), "%s: the two selections differ", path);
        CHECK_MSG(kept, "%s: the given states were not kept", path);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}


TEST(chains)
{
    static char text[1 << 16];
    int Ns[] = {2, 8, 16, 32};
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "chain%d", Ns[k]);
        fixture_chain_text(Ns[k], text, sizeof text);
        check_file_or_text(name, text);
    }
}

TEST(models)
{
    const char *paths[] = {"examples/fourbar_N1.yaml", "examples/fourbar_N20.yaml", "examples/fourbar_N300.yaml",
                           "examples/double_pendulum_natural.yaml",
                           "examples/spring_pendulum.yaml", "tests/lin/stiff_chain.yaml", "tests/lin/fourbar_relative.yaml",
                           "examples/rolling_disc_speeds.yaml"};
    for (size_t k = 0; k < sizeof paths / sizeof *paths; k++) check_file_or_text(paths[k], NULL);
}

/* The pendulum in Cartesian coordinates, with `extra` further coordinates z_k each held by its own
 * constraint z_k = 0.5 (they leave A's 1-norm condition and the candidate column's entries as
 * they are): extra = 300 takes the selection above SELECT_GIVEN_MAX coordinates (the sparse test). */
static void pendulum_text(int extra, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "model: dae\ncoordinates: {x: 0.5, y: -0.8");
    for (int k = 0; k < extra; k++) len += (size_t)snprintf(buf + len, size - len, ", z%d: 0.5", k);
    len += (size_t)snprintf(buf + len, size - len, "}\nkinetic_energy: \"0.5*(der(x)^2 + der(y)^2");
    for (int k = 0; k < extra; k++) len += (size_t)snprintf(buf + len, size - len, " + der(z%d)^2", k);
    len += (size_t)snprintf(buf + len, size - len, ")\"\npotential_energy: \"9.81*y\"\nconstraints: [\"x^2 + y^2 - 1\"");
    for (int k = 0; k < extra; k++) len += (size_t)snprintf(buf + len, size - len, ", \"z%d - 0.5\"", k);
    snprintf(buf + len, size - len, "]\nlinearize: {at: given, states: [x]}\n");
}

static char ptext[1 << 16];
static double pq[512], pv[512];

static mbl_model *pendulum_load(int extra)
{
    mbl_status st;
    mbl_model *md = NULL;
    pendulum_text(extra, ptext, sizeof ptext);
    int ok = mbl_model_load_string(ptext, strlen(ptext), "pendulum_xy.yaml", NULL, 0, &md, &st) == 0;
    CHECK_MSG(ok, "%s", st.msg);
    for (int k = 0; k < extra; k++) pq[2 + k] = 0.5, pv[2 + k] = 0;
    return ok ? md : NULL;
}

static void pendulum_bound_n(int extra)
{
    mbl_status st;
    mbl_model *md = pendulum_load(extra);
    if (!md) return;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    double bound = atan(1.0 / lo.state_weight); /* |tan t| <= 1 / state_weight keeps x */
    int ndiff = 0;
    for (int k = 0; k <= 400; k++) {
        /* angles from 0 to 90 degrees, dense near the bound */
        double t = k <= 200 ? k * (bound * 0.999) / 200 : bound * 0.999 + (k - 200) * ((2 * atan(1.0)) - bound * 0.999) / 200;
        if (k == 400) t = (2 * atan(1.0)) - 1e-12;
        pq[0] = sin(t), pq[1] = -cos(t), pv[0] = pv[1] = 0;
        mbl_point *pt = NULL;
        if (fixture_point_given(md, pq, pv, &pt, &st)) {
            CHECK_MSG(0, "point at t = %.17g: %s", t, st.msg);
            continue;
        }
        char what[80];
        snprintf(what, sizeof what, "pendulum (+%d) at t = %.9g", extra, t);
        int kept = 0, same = compare_at(md, pt, &lo, what, &kept, 1);
        double r = fabs(tan(t)) * lo.state_weight; /* the rule's ratio, closed form */
        if (r <= 1 - 1e-9) CHECK_MSG(kept, "%s: x not kept (ratio %g)", what, r);
        if (r >= 1 + 1e-9) CHECK_MSG(!kept, "%s: x kept (ratio %g)", what, r);
        CHECK_MSG(same, "%s: the two selections differ", what);
        if (!same) ndiff++;
        mbl_point_free(pt);
    }
    CHECK_EQ_INT(ndiff, 0);
    mbl_model_free(md);
}

TEST(pendulum_bound)
{
    pendulum_bound_n(0);
    pendulum_bound_n(300);
}

/* The same pendulum swinging (v tangent, |v| = 2): at a point with motion the given state is tested
 * by A's condition alone (the eigenvalues depend on the states there). With t beyond 45 degrees the
 * scaled A = [[1, -cot t]; [-1, 0]] has ||A||_1 = 2 and ||A^-1||_1 = 1 + |tan t|, so x is kept while
 * 1 / (2 (1 + |tan t|)) >= pivot_tol (closed form), also where the weight's preference (at rest)
 * exchanges it; nearer the horizontal the full selection decides, as at rest. With 300 further
 * coordinates (n = 302: the sparse test, whose condition is KLU's estimate) the same, to the
 * estimate's accuracy at the condition's bound. */
static void pendulum_moving_n(int extra)
{
    mbl_status st;
    mbl_model *md = pendulum_load(extra);
    if (!md) return;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    double tmax = atan(1.0 / (2 * lo.pivot_tol) - 1); /* rcond = pivot_tol */
    int nkept = 0, nbeyond = 0;
    for (int k = 0; k <= 200; k++) {
        /* |tan t| from 1 to 1e11, logarithmically: through the weight's bound (1e3) and rcond's (5e8) */
        double t = atan(pow(10.0, 11.0 * k / 200));
        pq[0] = sin(t), pq[1] = -cos(t), pv[0] = 2 * cos(t), pv[1] = 2 * sin(t);
        mbl_point *pt = NULL;
        if (fixture_point_given(md, pq, pv, &pt, &st)) {
            CHECK_MSG(0, "point at t = %.17g: %s", t, st.msg);
            continue;
        }
        char what[80];
        snprintf(what, sizeof what, "swinging pendulum (+%d) at tan t = %.6g", extra, tan(t));
        int kept = 0;
        int same = compare_at(md, pt, &lo, what, &kept, 0);
        double rel = fabs(t - tmax) / tmax;
        if (t < tmax && rel > 1e-6) CHECK_MSG(kept, "%s: x not kept", what);
        if (t > tmax && rel > 1e-6) CHECK_MSG(!kept && same, "%s: x kept near the singular horizontal", what);
        if (fabs(tan(t)) * lo.state_weight <= 1 - 1e-9) CHECK_MSG(same, "%s: the two selections differ", what);
        nkept += kept;
        nbeyond += kept && !same;
        mbl_point_free(pt);
    }
    CHECK_MSG(nbeyond > 50, "(+%d) only %d points kept x where the weight's preference exchanges it", extra, nbeyond);
    CHECK_MSG(nkept > 100 && nkept < 200, "(+%d) x kept at %d of 201 angles", extra, nkept);
    mbl_model_free(md);
}

TEST(pendulum_moving)
{
    pendulum_moving_n(0);
    pendulum_moving_n(300);
}

int main(void)
{
    RUN(chains);
    RUN(models);
    RUN(pendulum_bound);
    RUN(pendulum_moving);
    return test_summary("select_given");
}
