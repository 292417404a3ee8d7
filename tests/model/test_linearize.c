/* Linearization features against closed forms: user states (chosen, completed, dropped),
 * inputs and outputs, non-holonomic constraints, nonzero velocities with constraints (third
 * derivatives of Phi), and agreement of different coordinates for the same physics. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
} run;

static int run_text(const char *text, run *r, mbl_status *st)
{
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_string(text, strlen(text), "test.yaml", NULL, 0, &r->md, st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, st);
    return rc;
}

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
}

static double max_im(const mbl_modes *m)
{
    double x = 0;
    for (int i = 0; i < m->nx; i++) x = fmax(x, m->modes[i].im);
    return x;
}

static const char *cart_pendulum =
    "model: dae\n"
    "parameters: {m: 2, l: 1.5, g: 9.81}\n"
    "coordinates: {x: 0.1, y: -1.4}\n"
    "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
    "potential_energy: \"m*g*y\"\n"
    "constraints: [\"x^2 + y^2 - l^2\"]\n"
    "linearize: {at: equilibrium, states: [\"atan2(x, -y)\"]}\n";

TEST(user_state_angle)
{
    run r;
    mbl_status st;
    CHECK(run_text(cart_pendulum, &r, &st) == 0);
    if (!r.modes) return;
    CHECK_EQ_INT(r.lin->z0, 1);
    CHECK(!strcmp(r.lin->state_names[0], "atan2(x, -y)"));
    /* in the angle: M = m l^2, K = m g l (closed form) */
    CHECK_REL(r.lin->M[0], 2 * 1.5 * 1.5, 1e-12);
    CHECK_REL(r.lin->K[0], 2 * 9.81 * 1.5, 1e-12);
    CHECK_REL(max_im(r.modes), sqrt(9.81 / 1.5), 1e-12);
    /* q_S: dx/dtheta = l, dy/dtheta = 0 at the bottom */
    CHECK_CLOSE(r.lin->q_S[0], 1.5, 1e-12);
    CHECK_CLOSE(r.lin->q_S[1], 0.0, 1e-12);
    run_free(&r);
}

TEST(states_completed_and_dropped)
{
    /* no user state: an internal coordinate is chosen (x: the one that moves), same frequency */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", cart_pendulum);
    char *p = strstr(buf, ", states:");
    strcpy(p, "}\n");
    run r;
    mbl_status st;
    CHECK(run_text(buf, &r, &st) == 0);
    if (r.modes) {
        CHECK(!strcmp(r.lin->state_names[0], "x"));
        CHECK_REL(r.lin->M[0], 2.0, 1e-12); /* in x at the bottom: M = m */
        CHECK_REL(max_im(r.modes), sqrt(9.81 / 1.5), 1e-12);
    }
    run_free(&r);
    /* two user states for one degree of freedom: one dropped, reported */
    snprintf(buf, sizeof buf, "%s", cart_pendulum);
    p = strstr(buf, "states: [");
    strcpy(p, "states: [\"atan2(x, -y)\", \"x + 0.5*y\"]}\n");
    CHECK(run_text(buf, &r, &st) == 0);
    if (r.modes) {
        CHECK_EQ_INT(r.lin->z0, 1);
        CHECK_EQ_INT(r.lin->nsel_dropped, 1);
        CHECK(strstr(r.lin->selection, "dropped") != NULL);
        CHECK_REL(max_im(r.modes), sqrt(9.81 / 1.5), 1e-12);
    }
    run_free(&r);
    /* a user state that the constraints fix (y at the bottom is stationary): dropped, x chosen */
    snprintf(buf, sizeof buf, "%s", cart_pendulum);
    p = strstr(buf, "states: [");
    strcpy(p, "states: [y]}\n");
    CHECK(run_text(buf, &r, &st) == 0);
    if (r.modes) {
        CHECK_EQ_INT(r.lin->nsel_dropped, 1);
        CHECK(!strcmp(r.lin->state_names[0], "x"));
    }
    run_free(&r);
}

TEST(inputs_outputs)
{
    /* slider-pendulum: B = [0; 0; M^-1 e1], C of the tip output, D = 0 + the direct term */
    const char *text =
        "model: dae\n"
        "parameters: {m2: 10, m3: 20, l: 2, j3: 15, k: 20, g: 9.81}\n"
        "coordinates: {y: 0, theta: 0.1}\n"
        "kinetic_energy: \"0.5*(m2 + m3)*der(y)^2 + m3*l/2*cos(theta)*der(y)*der(theta) + 0.5*(m3*l^2/4 + j3)*der(theta)^2\"\n"
        "potential_energy: \"0.5*k*y^2 - m3*g*l/2*cos(theta)\"\n"
        "forces: {y: F, theta: \"T\"}\n"
        "inputs: {F: 0, T: 0}\n"
        "outputs: {tip: \"y + l*sin(theta)\", tipvel: \"der(y + l*sin(theta))\", load: \"k*y + 3*F\"}\n";
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    /* M = [[30, 20], [20, 35]], M^-1 = [[35, -20], [-20, 30]] / 650 */
    double Mi[4] = {35.0 / 650, -20.0 / 650, -20.0 / 650, 30.0 / 650};
    int nx = r.lin->nx, ny = r.lin->ny;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            CHECK_CLOSE(r.lin->B[2 + i + j * nx], Mi[i + 2 * j], 1e-14);
            CHECK_CLOSE(r.lin->B[i + j * nx], 0.0, 1e-14);
        }
    /* tip = y + l theta: C row [1, 2, 0, 0]; tipvel: [0, 0, 1, 2]; load: [20, 0, 0, 0], D = [3, 0] */
    double C[3][4] = {{1, 2, 0, 0}, {0, 0, 1, 2}, {20, 0, 0, 0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) CHECK_CLOSE(r.lin->C[i + j * ny], C[i][j], 1e-13);
    CHECK_CLOSE(r.lin->D[2], 3.0, 1e-14);
    CHECK_CLOSE(r.lin->D[2 + ny], 0.0, 1e-14);
    /* MCK input matrix F = I */
    CHECK_CLOSE(r.lin->F[0], 1.0, 1e-12);
    CHECK_CLOSE(r.lin->F[3], 1.0, 1e-12);
    CHECK_CLOSE(r.lin->F[1], 0.0, 1e-12);
    run_free(&r);
}

TEST(nonholonomic)
{
    /* der(y) = a der(x): motion along (1, a); eigenvalues 0 and +-i sqrt(k/m) (closed form) */
    const char *text =
        "model: dae\n"
        "parameters: {m: 3, k: 12, a: 0.7}\n"
        "coordinates: {x: 0.2, y: 0.1}\n"
        "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
        "potential_energy: \"0.5*k*(x^2 + y^2)\"\n"
        "nonholonomic: [\"der(y) - a*der(x)\"]\n";
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    CHECK_EQ_INT(r.lin->z0, 2);
    CHECK_EQ_INT(r.lin->z1, 1);
    CHECK_EQ_INT(r.modes->nx, 3);
    int zeros = 0;
    for (int i = 0; i < 3; i++) zeros += r.modes->modes[i].kind == MBL_MODE_ZERO;
    CHECK_EQ_INT(zeros, 1);
    CHECK_REL(max_im(r.modes), 2.0, 1e-12);
    /* M-hat = v_W^T M v_W with v_W = (1, a) or (1/a, 1) scaled: M-hat = m |v_W|^2 */
    double vw2 = r.lin->v_W[0] * r.lin->v_W[0] + r.lin->v_W[1] * r.lin->v_W[1];
    CHECK_REL(r.lin->M[0], 3.0 * vw2, 1e-12);
    CHECK_REL(r.lin->v_W[1], 0.7 * r.lin->v_W[0], 1e-12);
    run_free(&r);
}

/* The rotating pendulum written in Cartesian coordinates with a holonomic constraint, at a
 * point with nonzero velocities and accelerations, linearized in the user states theta, phi:
 * the result must be the one of the (theta, phi) model exactly (0, 0, +-8.58076i). This needs
 * every term of source 000 Table 1 including the third derivatives of the constraint. */
TEST(conical_motion_in_cartesian_coordinates)
{
    const char *text =
        "model: dae\n"
        "parameters: {m: 10, l: 0.5, g: 9.81, th0: 30*pi/180, w: 4.75975}\n"
        "coordinates: {x: l*sin(th0), y: 0, z: -l*cos(th0)}\n"
        "velocities: {x: 0, y: l*sin(th0)*w, z: 0}\n"
        "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2 + der(z)^2)\"\n"
        "potential_energy: \"m*g*z\"\n"
        "constraints: [\"x^2 + y^2 + z^2 = l^2\"]\n"
        "linearize: {at: given, states: [\"atan2(sqrt(x^2 + y^2), -z)\", \"atan2(y, x)\"]}\n";
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    CHECK_EQ_INT(r.lin->nx, 4);
    CHECK_EQ_INT(r.lin->nsel_dropped, 0);
    double s = sin(3.14159265358979323846 / 6), c = cos(3.14159265358979323846 / 6), w = 4.75975, g = 9.81, l = 0.5;
    double expect = sqrt(w * w * (s * s - c * c) + g * c / l + 4 * c * c * w * w);
    CHECK_REL(max_im(r.modes), expect, 1e-10);
    int zeros = 0;
    for (int i = 0; i < 4; i++) zeros += r.modes->modes[i].kind == MBL_MODE_ZERO;
    CHECK_EQ_INT(zeros, 2);
    /* M-hat, C-hat, K-hat of Eq. 5.28 */
    double ml2 = 10 * l * l;
    CHECK_REL(r.lin->M[0], ml2, 1e-10);
    CHECK_REL(r.lin->M[3], ml2 * s * s, 1e-10);
    CHECK_REL(r.lin->Cd[1], 2 * ml2 * s * c * w, 1e-10);
    CHECK_REL(r.lin->Cd[2], -2 * ml2 * s * c * w, 1e-10);
    CHECK_REL(r.lin->K[0], ml2 * w * w * (s * s - c * c) + 10 * g * l * c, 1e-9);
    run_free(&r);
}

/* A sweep: the rotating pendulum of source 003 at spins from 3 to 7 rad/s, re-linearized with
 * one workspace, against a fresh linearization at each point and the closed form of Eq. 5.28. */
TEST(sweep_workspace)
{
    mbl_status st;
    mbl_model *md = NULL;
    CHECK(mbl_model_load_file("examples/rotating_pendulum_given.yaml", NULL, 0, &md, &st) == 0);
    if (!md) return;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    double q[2] = {0.6, 0.0}, v[2] = {0.0, 3.0};
    po.q = q;
    po.v = v;
    mbl_point *pt = NULL;
    CHECK(mbl_operating_point(md, &po, &pt, &st) == 0);
    mbl_lin_work *w = NULL;
    mbl_linear *lin = NULL;
    CHECK(mbl_lin_work_new(md, pt, NULL, &w, &lin, &st) == 0);
    mbl_point_free(pt);
    for (int k = 0; k < 5 && lin; k++) {
        v[1] = 3.0 + k;
        CHECK(mbl_operating_point(md, &po, &pt, &st) == 0);
        CHECK(mbl_relinearize(w, pt, lin, &st) == 0);
        mbl_linear *fresh = NULL;
        CHECK(mbl_linearize(md, pt, NULL, &fresh, &st) == 0);
        for (int i = 0; fresh && i < 16; i++) CHECK_CLOSE(lin->A[i], fresh->A[i], 1e-13);
        for (int i = 0; fresh && i < 4; i++) CHECK_CLOSE(lin->K[i], fresh->K[i], 1e-12);
        mbl_modes *modes = NULL;
        CHECK(mbl_modal(lin, NULL, &modes, &st) == 0);
        double s = sin(0.6), c = cos(0.6), g = 9.81, l = 0.5, wv = v[1];
        if (modes) CHECK_REL(max_im(modes), sqrt(wv * wv * (s * s - c * c) + g * c / l + 4 * c * c * wv * wv), 1e-12);
        mbl_modes_free(modes);
        mbl_linear_free(fresh);
        mbl_point_free(pt);
        pt = NULL;
    }
    /* a result of another shape is refused */
    mbl_linear *other = NULL;
    mbl_model *md2 = NULL;
    CHECK(mbl_model_load_file("examples/slider_pendulum.yaml", NULL, 0, &md2, &st) == 0);
    CHECK(md2 && mbl_operating_point(md2, NULL, &pt, &st) == 0 && mbl_linearize(md2, pt, NULL, &other, &st) == 0);
    if (other) {
        other->nx = 3;
        CHECK(mbl_relinearize(w, pt, other, &st) == MBL_EDIM);
        other->nx = 4;
    }
    mbl_linear_free(other);
    mbl_point_free(pt);
    mbl_model_free(md2);
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    mbl_lin_work_free(NULL);
    mbl_model_free(md);
}

/* A pendulum whose pivot moves as h(t) = A cos(w t): at t = 0 the frozen-time linearization in
 * the (time-dependent) angle has omega^2 = (g + h'')/l = (g - A w^2)/l, M = m l^2,
 * K = m l (g - A w^2), and the mass accelerates with the pivot (closed form). */
TEST(time_dependent_constraint)
{
    const char *text =
        "model: dae\n"
        "parameters: {m: 2, l: 1.5, g: 9.81, A: 0.1, w: 3}\n"
        "variables: {h: \"A*cos(w*t)\"}\n"
        "coordinates: {x: 0, y: -1.4}\n"
        "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
        "potential_energy: \"m*g*y\"\n"
        "constraints: [\"x^2 + (y - h)^2 = l^2\"]\n"
        "linearize: {at: given, time: 0, states: [\"atan2(x, h - y)\"]}\n";
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    double geff = 9.81 - 0.1 * 9.0;
    CHECK_REL(max_im(r.modes), sqrt(geff / 1.5), 1e-12);
    CHECK_REL(r.lin->M[0], 2 * 1.5 * 1.5, 1e-12);
    CHECK_REL(r.lin->K[0], 2 * 1.5 * geff, 1e-12);
    CHECK_CLOSE(r.pt->vdot[1], -0.9, 1e-12);
    run_free(&r);
}

/* The slider-pendulum of source 003 with its mass matrix written as mm (text: the mass_matrix key
 * and its value, before or after the coordinates): omega^2 are the roots of 650 w^4 - 6586 w^2 +
 * 3924 = 0, and M(theta, y) = m3 l / 2 cos(0) = 20 at the point. */
static void slider_pendulum_by_mass_matrix(const char *mm, int coordinates_first)
{
    const char *params = "model: dae\nparameters: {m2: 10, m3: 20, l: 2, j3: 15, k: 20, g: 9.81}\n";
    const char *coords = "coordinates: {y: 0, theta: 0.1}\n";
    char text[600];
    snprintf(text, sizeof text, "%s%s%s%spotential_energy: \"0.5*k*y^2 - m3*g*l/2*cos(theta)\"\n", params,
             coordinates_first ? coords : "", mm, coordinates_first ? "" : coords);
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    double a = 650, b = -(20.0 * 35.0 + 196.2 * 30.0), c = 20.0 * 196.2;
    CHECK_REL(max_im(r.modes) * max_im(r.modes), (-b + sqrt(b * b - 4 * a * c)) / (2 * a), 1e-12);
    CHECK_CLOSE(r.lin->M[1], 20.0, 1e-12);
    run_free(&r);
}

/* mass_matrix instead of kinetic_energy (an off-diagonal entry given once) */
TEST(mass_matrix_key)
{
    slider_pendulum_by_mass_matrix("mass_matrix:\n"
                                   "  y: {y: \"m2 + m3\", theta: \"m3*l/2*cos(theta)\"}\n"
                                   "  theta: {theta: \"m3*l^2/4 + j3\"}\n",
                                   1);
    mbl_status st;
    /* both triangles given and different: an error */
    const char *bad = "model: dae\ncoordinates: {x: 0, y: 0}\nmass_matrix: {x: {x: 1, y: 0.5}, y: {y: 1, x: 0.25}}\n";
    mbl_model *md = NULL;
    CHECK(mbl_model_load_string(bad, strlen(bad), "mm.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
    CHECK(strstr(st.msg, "not symmetric") != NULL);
    mbl_model_free(md);
}

/* mass_matrix as a list of rows in the coordinates' order, as MATLAB writes a matrix: the same
 * slider-pendulum (both triangles given, the same expression written two ways), the same roots;
 * the keys may come in any order (coordinates after the matrix) */
TEST(mass_matrix_rows)
{
    slider_pendulum_by_mass_matrix(
        "mass_matrix: [[\"m2 + m3\", \"m3*l/2*cos(theta)\"], [\"cos(theta)*l*m3/2\", \"m3*l^2/4 + j3\"]]\n", 0);
    mbl_status st;
    /* refusals, each at the offending node: different triangles, the rows' count, a row's length */
    static const struct {
        const char *mm, *msg, *at;
    } bad[] = {
        {"[[1, 0.5], [0.25, 1]]", "not symmetric", "mm.yaml:3:26:"},
        {"[[1, 0], [0, 1], [0, 0]]", "one row per coordinate (2, in the order of 'coordinates'), found 3", "mm.yaml:3:14:"},
        {"[[1, 0], [0]]", "row 2 (coordinate 'y') must be a list of 2 expressions, found 1", "mm.yaml:3:23:"},
        {"[[1, 0], 1]", "row 2 (coordinate 'y') must be a list of 2 expressions, found a scalar", "mm.yaml:3:23:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[200];
        snprintf(buf, sizeof buf, "model: dae\ncoordinates: {x: 0, y: 0}\nmass_matrix: %s\n", bad[i].mm);
        mbl_model *md = NULL;
        CHECK(mbl_model_load_string(buf, strlen(buf), "mm.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
        CHECK(strstr(st.msg, bad[i].msg) != NULL && strstr(st.msg, bad[i].at) != NULL);
        if (!strstr(st.msg, bad[i].msg) || !strstr(st.msg, bad[i].at)) fprintf(stderr, "  got: %s\n", st.msg);
        mbl_model_free(md);
    }
}

/* forces as a list in the coordinates' order (Q = [...] as MATLAB writes it), "0" entries left out:
 * a damped oscillator beside an undamped one, s = (-c +- sqrt(c^2 - 4 m k)) / (2 m) and +-i sqrt(k2
 * / m); a wrong count refused at the list */
TEST(forces_list)
{
    const char *text = "model: dae\n"
                       "parameters: {m: 1, c: 0.4, k: 4, k2: 9}\n"
                       "forces: [\"-c*der(x)\", 0]\n"
                       "coordinates: {x: 0.1, y: 0}\n"
                       "mass_matrix: [[m, 0], [0, m]]\n"
                       "potential_energy: \"k*x^2/2 + k2*y^2/2\"\n";
    run r;
    mbl_status st;
    CHECK(run_text(text, &r, &st) == 0);
    if (!r.modes) return;
    double m = 1, c = 0.4, k = 4, k2 = 9, re = -c / (2 * m), im = sqrt(4 * m * k - c * c) / (2 * m);
    int found = 0, found2 = 0;
    for (int i = 0; i < r.modes->nx; i++) {
        double sr = r.modes->modes[i].re, si = fabs(r.modes->modes[i].im);
        found += fabs(sr - re) < 1e-12 && fabs(si - im) < 1e-12;
        found2 += fabs(sr) < 1e-12 && fabs(si - sqrt(k2 / m)) < 1e-12;
    }
    CHECK_EQ_INT(found, 2);
    CHECK_EQ_INT(found2, 2);
    run_free(&r);
    const char *bad = "model: dae\ncoordinates: {x: 0}\nkinetic_energy: \"der(x)^2/2\"\nforces: [0, 1]\n";
    mbl_model *md = NULL;
    CHECK(mbl_model_load_string(bad, strlen(bad), "f.yaml", NULL, 0, &md, &st) == MBL_EMODEL);
    CHECK(strstr(st.msg, "f.yaml:4:9: 'forces' as a list must have one expression per coordinate (1") != NULL);
    mbl_model_free(md);
}

int main(void)
{
    RUN(time_dependent_constraint);
    RUN(mass_matrix_key);
    RUN(mass_matrix_rows);
    RUN(forces_list);
    RUN(sweep_workspace);
    RUN(user_state_angle);
    RUN(states_completed_and_dropped);
    RUN(inputs_outputs);
    RUN(nonholonomic);
    RUN(conical_motion_in_cartesian_coordinates);
    return test_summary("linearize");
}
