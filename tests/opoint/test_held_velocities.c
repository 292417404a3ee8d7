/* Held velocities at a given point (issue 33, item 1; docs/model-files.md, "Held velocities"): the
 * velocities the file writes (a body's angular_velocity, `velocities:` by coordinate, by a measure
 * such as JV(crank), by an expression) and those of mbl_opoint_options.velocities are kept exactly,
 * the others solved from the velocity constraints; held velocities that disagree are an error
 * naming them. References: the slider-crank's closed forms (tests/opoint/slider_crank_given.yaml):
 * x' = -r w sin th - r^2 w sin th cos th / sqrt(l^2 - r^2 sin^2 th), phi' = -r w cos th / (l cos phi).
 * Before, the crank given 12 rad/s was linearized at 11.391 rad/s (all velocities projected by
 * minimum norm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "fixture.h"

#define FILE_SC "tests/opoint/slider_crank_given.yaml"
static const double R = 0.1, L = 0.4, TH = 0.7;

static double slider_v(double w)
{
    return -R * w * sin(TH) - R * R * w * sin(TH) * cos(TH) / sqrt(L * L - R * R * sin(TH) * sin(TH));
}

static double rod_rate(double w)
{
    double phi = -asin(R * sin(TH) / L);
    return -R * w * cos(TH) / (L * cos(phi));
}

static int coord(const mbl_model *md, const char *name)
{
    mbl_model_info in;
    mbl_model_get_info(md, &in);
    for (int i = 0; i < in.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(md, i), name)) return i;
    return -1;
}

/* the file's text with `from` replaced by `to` (once), loaded */
static mbl_model *variant(const char *from, const char *to, mbl_status *st)
{
    char *t = test_slurp(FILE_SC);
    if (!t) return NULL;
    char *at = from ? strstr(t, from) : NULL;
    size_t n = strlen(t) + (to ? strlen(to) : 0) + 1;
    char *u = malloc(n);
    if (!u) {
        free(t);
        return NULL;
    }
    if (at) snprintf(u, n, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
    else snprintf(u, n, "%s", t);
    mbl_model *md = fixture_model(NULL, u, "slider_crank_given.yaml", st);
    free(t), free(u);
    return md;
}

/* the point of md with the held velocities hv (nh), its outputs into y (3) */
static int point(const mbl_model *md, const mbl_setting *hv, int nh, mbl_point **pt, double *y, mbl_status *st)
{
    mbl_opoint_options o;
    mbl_opoint_options_default(&o);
    o.velocities = hv;
    o.nvelocities = nh;
    *pt = NULL;
    int rc = mbl_operating_point(md, &o, pt, st);
    if (!rc && y) rc = mbl_model_outputs(md, *pt, y, st);
    return rc;
}

TEST(crank_rate_held)
{
    mbl_status st;
    mbl_model *md = fixture_model(FILE_SC, NULL, NULL, &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_point *pt = NULL;
    double y[3] = {0, 0, 0};
    int rc = point(md, NULL, 0, &pt, y, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        int th = coord(md, "crank_th"), sx = coord(md, "slider_x"), rt = coord(md, "rod_th");
        CHECK(pt->v[th] == 12.0); /* exactly the value written */
        CHECK(y[0] == 12.0);
        CHECK_REL(pt->v[sx], slider_v(12), 1e-12);
        CHECK_REL(y[2], slider_v(12), 1e-12);
        CHECK_REL(pt->v[rt], rod_rate(12), 1e-12);
        CHECK(pt->v_held && pt->v_held[th] == 1 && pt->v_held[sx] == 0);
        /* the note names what was held and what was solved */
        CHECK_MSG(strstr(pt->notes, "velocities held: der(crank_th) = 12") &&
                      strstr(pt->notes, "solved from the velocity constraints:") &&
                      strstr(pt->notes, "der(slider_x) = -0.922834") && !strstr(pt->notes, "changed by"),
                  "%s", pt->notes);
    }
    mbl_point_free(pt);
    /* the option holds another rate: 10 rad/s */
    mbl_setting hv[1] = {{"crank_th", 10}};
    rc = point(md, hv, 1, &pt, y, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK(y[0] == 10.0);
        CHECK_REL(y[2], slider_v(10), 1e-12);
        CHECK(pt->v_held[coord(md, "crank_th")] == 2);
    }
    mbl_point_free(pt);
    /* an unknown name: MBL_EARG naming it */
    mbl_setting bad[1] = {{"crank_angle", 10}};
    rc = point(md, bad, 1, &pt, y, &st);
    CHECK_MSG(rc == MBL_EARG && strstr(st.msg, "'crank_angle'"), "%d %s", rc, st.msg);
    CHECK(mbl_model_velocity_find(md, "crank_th") == 1 && mbl_model_velocity_find(md, "der(slider_x)") == 1);
    CHECK(mbl_model_velocity_find(md, "crank_angle") == 0);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(joint_rate_keys)
{
    /* velocities: {"JV(pivot)": 12} instead of the body's angular velocity; then the rod's rate
     * relative to the crank, JV(crankpin) = phi' - w, which involves two moving bodies */
    mbl_status st;
    mbl_model *md = NULL;
    const char *drop = "    angular_velocity: w\n";
    char *t = test_slurp(FILE_SC);
    CHECK(t != NULL);
    if (!t) return;
    char buf[4096];
    char *at = strstr(t, drop);
    snprintf(buf, sizeof buf, "%.*s%s", (int)(at - t), t, at + strlen(drop));
    for (int c = 0; c < 2; c++) {
        char text[4200];
        double held = c == 0 ? 12.0 : rod_rate(12) - 12.0;
        snprintf(text, sizeof text, "%svelocities: {\"%s\": %.17g}\n", buf, c == 0 ? "JV(pivot)" : "JV(crankpin)", held);
        md = fixture_model(NULL, text, "held.yaml", &st);
        CHECK_MSG(md != NULL, "%s", st.msg);
        if (!md) continue;
        mbl_point *pt = NULL;
        double y[3];
        int rc = point(md, NULL, 0, &pt, y, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) {
            CHECK_REL(y[0], 12.0, c == 0 ? 0.0 : 1e-12);
            CHECK_REL(y[2], slider_v(12), 1e-12);
            CHECK_MSG(strstr(pt->notes, c == 0 ? "velocities held: JV(pivot) = 12" : "velocities held: JV(crankpin)"),
                      "%s", pt->notes);
            CHECK(pt->nheld_expr == 1);
        }
        mbl_point_free(pt);
        /* the key as written is what the options name */
        mbl_setting hv[1] = {{c == 0 ? "JV(pivot)" : "JV(crankpin)", c == 0 ? 10.0 : rod_rate(10) - 10.0}};
        rc = point(md, hv, 1, &pt, y, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) CHECK_REL(y[2], slider_v(10), 1e-12);
        mbl_point_free(pt);
        /* at: steady keeps velocities by coordinate: a held expression is refused, one line */
        mbl_opoint_options o;
        mbl_opoint_options_default(&o);
        o.at = MBL_AT_STEADY;
        rc = mbl_operating_point(md, &o, &pt, &st);
        CHECK_MSG(rc == MBL_EARG && strstr(st.msg, "applies to at: given only"), "%d %s", rc, st.msg);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    free(t);
}

TEST(relative_coordinates)
{
    /* joint coordinates: the crank's angular velocity is held as der(crank_th), not as the joint rates
     * derived from it with the rod at rest (which would disagree) */
    mbl_status st;
    mbl_model *md = variant("space: planar\n", "space: planar\ncoordinates: relative\n", &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_point *pt = NULL;
    double y[3];
    int rc = point(md, NULL, 0, &pt, y, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        CHECK_REL(y[0], 12.0, 1e-14);
        CHECK_REL(y[2], slider_v(12), 1e-12);
        CHECK_REL(pt->v[coord(md, "crankpin_q")], rod_rate(12) - 12.0, 1e-12);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(over_determined)
{
    /* two held rates of the one-degree-of-freedom mechanism that disagree: one line naming both */
    mbl_status st;
    mbl_model *md = fixture_model(FILE_SC, NULL, NULL, &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_setting hv[1] = {{"slider_x", 3}};
    int rc = point(md, hv, 1, &pt, NULL, &st);
    CHECK_MSG(rc == MBL_ESINGULAR && strstr(st.msg, "der(crank_th) = 12") && strstr(st.msg, "der(slider_x) = 3") &&
                  strstr(st.msg, "over-determine") && !strchr(st.msg, '\n'),
              "%d %s", rc, st.msg);
    CHECK(pt == NULL);
    /* the same two, consistent (the closed form): accepted */
    mbl_setting ok[1] = {{"slider_x", slider_v(12)}};
    double y[3];
    rc = point(md, ok, 1, &pt, y, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) CHECK_REL(y[2], slider_v(12), 1e-12);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* The equation level: coordinates theta, phi, x with the loop closure; velocities by coordinate
 * and by an expression (whose rate is held). */
static const char *dae_text =
    "model: dae\n"
    "parameters: {r: 0.1, l: 0.4, th0: 0.7, m: 1}\n"
    "coordinates: {theta: th0, phi: \"-asin(r*sin(th0)/l)\", x: \"r*cos(th0) + sqrt(l^2 - r^2*sin(th0)^2)\"}\n"
    "velocities: {%s}\n"
    "kinetic_energy: \"0.5*m*der(theta)^2 + 0.5*m*der(phi)^2 + 0.5*m*der(x)^2\"\n"
    "potential_energy: 0\n"
    "constraints: [\"r*sin(theta) + l*sin(phi)\", \"x - r*cos(theta) - l*cos(phi)\"]\n"
    "linearize: {at: given}\n";

TEST(equation_level)
{
    const char *vel[3] = {"theta: 12", "\"2*theta\": 24", "theta: 12, x: 1"};
    for (int c = 0; c < 3; c++) {
        char text[1024];
        snprintf(text, sizeof text, dae_text, vel[c]);
        mbl_status st;
        mbl_model *md = fixture_model(NULL, text, "dae.yaml", &st);
        CHECK_MSG(md != NULL, "%s", st.msg);
        if (!md) continue;
        mbl_point *pt = NULL;
        int rc = point(md, NULL, 0, &pt, NULL, &st);
        if (c < 2) {
            CHECK_MSG(rc == 0, "%s", st.msg);
            if (!rc) {
                CHECK_REL(pt->v[0], 12.0, c == 0 ? 0.0 : 1e-14);
                CHECK_REL(pt->v[1], rod_rate(12), 1e-12);
                CHECK_REL(pt->v[2], slider_v(12), 1e-12);
            }
        } else {
            CHECK_MSG(rc == MBL_ESINGULAR && strstr(st.msg, "der(theta) = 12, der(x) = 1"), "%d %s", rc, st.msg);
        }
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    /* a key that does not change with the velocities, or is not linear in them: refused at its position */
    const char *bad[2] = {"\"r + l\": 1", "\"der(theta)^2\": 1"};
    const char *why[2] = {"does not change with the velocities", "is not linear in the velocities"};
    for (int c = 0; c < 2; c++) {
        char text[1024];
        snprintf(text, sizeof text, dae_text, bad[c]);
        mbl_status st;
        mbl_model *md = fixture_model(NULL, text, "dae.yaml", &st);
        CHECK_MSG(md == NULL && strstr(st.msg, "dae.yaml:4:") && strstr(st.msg, why[c]), "%s", st.msg);
        mbl_model_free(md);
    }
}

TEST(large_sparse)
{
    /* the 300-loop four-bar (n = 603 > OPOINT_DENSE_MAX: SPQR's minimum-norm solve): holding
     * der(xB0) = 1 moves every point B_i alike, x' = 1, y' = -cot(2) (B_i at angle 2 on its crank) */
    mbl_status st;
    mbl_model *md = fixture_model("examples/fourbar_N300.yaml", NULL, NULL, &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    mbl_opoint_options o;
    mbl_opoint_options_default(&o);
    mbl_setting hv[1] = {{"xB0", 1.0}};
    o.at = MBL_AT_GIVEN;
    o.velocities = hv;
    o.nvelocities = 1;
    mbl_point *pt = NULL;
    int rc = mbl_operating_point(md, &o, &pt, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) {
        double ex = 0, ey = 0;
        for (int i = 0; i < pt->n; i++) {
            const char *nm = mbl_model_coord_name(md, i);
            if (!strncmp(nm, "xB", 2)) ex = fmax(ex, fabs(pt->v[i] - 1.0));
            if (!strncmp(nm, "yB", 2)) ey = fmax(ey, fabs(pt->v[i] + 1.0 / tan(2.0)));
        }
        CHECK(pt->v[coord(md, "xB0")] == 1.0);
        CHECK_MSG(ex <= 1e-12 && ey <= 1e-12, "max errors %g %g", ex, ey);
        CHECK(strstr(pt->notes, "more") != NULL); /* the note lists the first solved ones */
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(crank_rate_held);
    RUN(joint_rate_keys);
    RUN(relative_coordinates);
    RUN(over_determined);
    RUN(equation_level);
    RUN(large_sparse);
    return test_summary("held_velocities");
}
