/* Checks of `model: mechanism` (and the equation level) that must never be silently wrong:
 * --set values pass the same checks as file values and re-orient markers; robust axis
 * normalization; the inertia triangle inequality; bushing markers aligned in the file's
 * configuration; a negative or indefinite mass matrix at the equation level; spatial joint angles
 * continuous past half a turn (driver, gear coupler, torsion spring: closed forms); a driver that
 * depends on an input named in mechanism terms. docs/mechanism-reference.md, "Checking a mechanism". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
    mbl_status st;
} run;

/* load and find the operating point; with lin, linearize and take the modes too */
static int run_text(const char *text, const mbl_setting *sets, int nsets, int lin, run *r)
{
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_string(text, strlen(text), "bad.yaml", sets, nsets, &r->md, &r->st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &r->st);
    if (!rc && lin) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, &r->st);
    if (!rc && lin) rc = mbl_modal(r->lin, NULL, &r->modes, &r->st);
    if (rc) fprintf(stderr, "  (%s)\n", r->st.msg);
    return rc;
}

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
}

/* value of a coordinate at the point */
static double qval(const run *r, const char *name)
{
    mbl_model_info info;
    mbl_model_get_info(r->md, &info);
    for (int i = 0; i < info.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(r->md, i), name)) return r->pt->q[i];
    CHECK_MSG(0, "no coordinate %s", name);
    return NAN;
}

/* a - b wrapped into (-pi, pi] */
static double wrap(double a, double b)
{
    double d = a - b;
    return atan2(sin(d), cos(d));
}

/* the rotation angle of a body about a global axis k (1, 2, 3) from its Euler parameters */
static double body_angle(const run *r, const char *body, int k)
{
    char e0[64], ek[64];
    snprintf(e0, sizeof e0, "%s_e0", body);
    snprintf(ek, sizeof ek, "%s_e%d", body, k);
    return 2 * atan2(qval(r, ek), qval(r, e0));
}

/* the squared frequency of the only oscillatory mode */
static double omega2(const run *r)
{
    double w = -1;
    int n = 0;
    for (int i = 0; i < r->modes->nx; i++)
        if (r->modes->modes[i].kind != MBL_MODE_ZERO && r->modes->modes[i].im > 0) {
            w = r->modes->modes[i].im;
            n++;
        }
    CHECK_EQ_INT(n, 1);
    return w * w;
}

/* refused with one line holding all of must[] */
static void expect_error(const char *text, const mbl_setting *sets, int nsets, const char *const *must)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = mbl_model_load_string(text, strlen(text), "bad.yaml", sets, nsets, &r.md, &r.st);
    CHECK(rc != 0);
    for (const char *const *m = must; *m; m++)
        CHECK_MSG(strstr(r.st.msg, *m) != NULL, "message '%s' lacks '%s'", r.st.msg, *m);
    CHECK(strchr(r.st.msg, '\n') == NULL);
    printf("  %s\n", r.st.msg);
    run_free(&r);
}

/* loads without complaint */
static void expect_ok(const char *text, const mbl_setting *sets, int nsets)
{
    run r;
    int rc = run_text(text, sets, nsets, 0, &r);
    CHECK_MSG(rc == 0, "refused: %s", r.st.msg);
    run_free(&r);
}

#define PLANAR_PEND                                                                                          \
    "model: mechanism\n"                                                                                       \
    "space: planar\n"                                                                                          \
    "parameters: {m: 2, L: 1.2, g: 9.81}\n"                                                                    \
    "ground: {markers: {pivot: {}}}\n"                                                                         \
    "bodies:\n"                                                                                                \
    "  rod:\n"                                                                                                 \
    "    mass: m\n"                                                                                            \
    "    inertia: m*L^2/12\n"                                                                                  \
    "    position: [0, \"-L/2\"]\n"                                                                            \
    "    markers: {top: {position: [0, \"L/2\"]}}\n"                                                           \
    "joints: {hinge: {type: revolute, i: top, j: pivot}}\n"                                                    \
    "forces: {weight: {type: gravity, g: [0, \"-g\"]}}\n"

/* a disc on a revolute joint about global z with a torsion spring (stiffness k, free angle a0)
   between its marker H (rotated by phi0 about z relative to the disc) and ground O (rotated by
   the axis/angle text `gax`), plus a constant torque T about z */
static void disc_text(char *buf, size_t cap, const char *params, const char *hmark, const char *gmark, const char *extra)
{
    snprintf(buf, cap,
             "model: mechanism\n"
             "parameters: {%s}\n"
             "ground: {markers: {O: {%s}}}\n"
             "bodies:\n"
             "  disc: {mass: 1, inertia: [1.5, 1.5, 2], markers: {H: {%s}}}\n"
             "joints: {hinge: {type: revolute, i: H, j: O}}\n"
             "forces:\n"
             "  spring: {type: torsion, i: H, j: O, stiffness: k, angle: a0}\n"
             "%s",
             params, gmark, hmark, extra);
}

/* ---- item: --set values pass the file's checks and re-orient markers ---- */
TEST(set_checks)
{
    mbl_setting neg_m = {"m", -2};
    /* the file value and the --set value: same message, the latter says where it came from */
    expect_error(PLANAR_PEND, &neg_m, 1,
                 (const char *[]){"bad.yaml:7:11:", "body 'rod'", "mass must be positive", "--set m=-2", NULL});
    char file_neg[2048];
    const char *p = strstr(PLANAR_PEND, "m: 2");
    snprintf(file_neg, sizeof file_neg, "%.*sm: -2%s", (int)(p - PLANAR_PEND), PLANAR_PEND, p + 4);
    expect_error(file_neg, NULL, 0, (const char *[]){"bad.yaml:7:11:", "body 'rod'", "mass must be positive", NULL});
    CHECK(strstr(file_neg, "m: -2, L") != NULL);
    /* a text evaluated again (body b's mass "mt" after body a's angle "mt": mech_eval_text keeps
     * the value by text): the second evaluation still says which --set its value came from */
    const char *two = "model: mechanism\nparameters: {mt: 1}\nground: {markers: {O: {}}}\nbodies:\n"
                      "  a: {mass: 1, inertia: [1, 1, 1], axis: [0, 0, 1], angle: mt, markers: {A: {}}}\n"
                      "  b: {mass: mt, inertia: [1, 1, 1], markers: {B: {}}}\n"
                      "joints: {hinge: {type: revolute, i: A, j: O}, h2: {type: revolute, i: B, j: A}}\n";
    mbl_setting neg_mt = {"mt", -2};
    expect_error(two, &neg_mt, 1,
                 (const char *[]){"bad.yaml:6:13:", "body 'b'", "mass must be positive (it is -2)", "--set mt=-2", NULL});
    expect_ok(two, NULL, 0);
    /* the same text first as a mass, then as an orientation's angle (a number of the equations): its
     * parameter is flagged numeric (no derivative by it) though the mass's evaluation was kept */
    const char *flag = "model: mechanism\nparameters: {mt: 1, m2: 1}\nground: {markers: {O: {}}}\nbodies:\n"
                       "  a: {mass: mt, inertia: [1, 1, 1], markers: {A: {}}}\n"
                       "  b: {mass: m2, inertia: [1, 1, 1], axis: [0, 0, 1], angle: mt, markers: {B: {}}}\n"
                       "joints: {hinge: {type: revolute, i: A, j: O}, h2: {type: revolute, i: B, j: A}}\n";
    run rf;
    CHECK(run_text(flag, NULL, 0, 0, &rf) == 0);
    CHECK(rf.md && mbl_model_param_numeric(rf.md, 0) == 1 && mbl_model_param_numeric(rf.md, 1) == 0);
    run_free(&rf);
    /* a derived parameter: the planar inertia m*L^2/12 with --set L=0 */
    mbl_setting zero_L = {"L", 0};
    expect_error(PLANAR_PEND, &zero_L, 1,
                 (const char *[]){"bad.yaml:8:14:", "body 'rod'", "moment of inertia must be positive", "--set L=0",
                                  NULL});
    /* spatial inertia through a parameter */
    const char *sp = "model: mechanism\n"
                     "parameters: {It: 0.5, Ia: 0.2}\n"
                     "ground: {markers: {O: {}}}\n"
                     "bodies: {bob: {mass: 1, inertia: [It, It, Ia], markers: {B: {}}}}\n"
                     "joints: {pin: {type: revolute, i: B, j: O}}\n";
    mbl_setting neg_I = {"It", -1};
    expect_error(sp, &neg_I, 1,
                 (const char *[]){"bad.yaml:4:34:", "body 'bob'", "inertia tensor is singular or indefinite",
                                  "--set It=-1", NULL});
    mbl_setting tri_I = {"Ia", 3};
    expect_error(sp, &tri_I, 1, (const char *[]){"bad.yaml:4:34:", "body 'bob'", "triangle", "--set Ia=3", NULL});
    /* a marker orientation follows --set: the torsion spring holds H on O, so the disc turns by
       -phi0 (file 0.2, --set 0.5) */
    char text[2048];
    disc_text(text, sizeof text, "k: 8, a0: 0, phi0: 0.2", "axis: [0, 0, 1], angle: phi0", "", "");
    run r;
    int rc = run_text(text, NULL, 0, 0, &r);
    CHECK(rc == 0);
    if (!rc) CHECK_CLOSE(body_angle(&r, "disc", 3), -0.2, 1e-10);
    run_free(&r);
    mbl_setting phi = {"phi0", 0.5};
    rc = run_text(text, &phi, 1, 0, &r);
    CHECK(rc == 0);
    if (!rc) {
        printf("  --set phi0=0.5: the disc turns to %.15g (closed form -0.5)\n", body_angle(&r, "disc", 3));
        CHECK_CLOSE(body_angle(&r, "disc", 3), -0.5, 1e-10);
    }
    run_free(&r);
    /* a --set orientation that is not orthonormal is refused like the file's */
    disc_text(text, sizeof text, "k: 8, a0: 0, c: 0", "zaxis: [0, 0, 1], xaxis: [1, 0, c]", "", "");
    expect_ok(text, NULL, 0);
    mbl_setting cset = {"c", 0.5};
    expect_error(text, &cset, 1, (const char *[]){"bad.yaml:5:", "marker 'H' of body 'disc'", "not perpendicular",
                                                   "--set c=0.5", NULL});
}

/* ---- item: axis normalization does not overflow or underflow ---- */
TEST(axis_normalization)
{
    const char *axes[] = {"axis: [0, 0, 1e200], angle: 0.3", "axis: [0, 0, 1e-200], angle: 0.3",
                          "axis: [1e300, 1e300, 1e300], angle: 0.3", "zaxis: [1e200, 0, 0], xaxis: [0, 1e-200, 0]"};
    /* ground marker O rotated; the spring holds H (disc frame) on O: the disc turns to O's
       orientation: 0.3 about z; 0.3 about (1,1,1)/sqrt(3) (angle from e0); the zaxis/xaxis frame
       is a rotation of 2 pi/3 about (1, 1, 1) */
    for (int c = 0; c < 4; c++) {
        char text[2048];
        if (c < 2) {
            disc_text(text, sizeof text, "k: 8, a0: 0", "", axes[c], "");
        } else {
            /* an oblique frame: the disc on a spherical joint held by a rotational bushing, started
               at the frame's orientation (a bushing's markers are aligned in the file) */
            snprintf(text, sizeof text,
                     "model: mechanism\n"
                     "ground: {markers: {O: {%s}}}\n"
                     "bodies: {disc: {mass: 1, inertia: [1.5, 1.5, 2], %s, markers: {H: {}}}}\n"
                     "joints: {ball: {type: spherical, i: H, j: O}}\n"
                     "forces: {mount: {type: bushing, i: H, j: O, stiffness: [0, 0, 0, 8, 8, 8]}}\n",
                     axes[c], axes[c]);
        }
        run r;
        int rc = run_text(text, NULL, 0, 0, &r);
        CHECK_MSG(rc == 0, "%s: %s", axes[c], r.st.msg);
        if (!rc) {
            double e0 = qval(&r, "disc_e0"), e1 = qval(&r, "disc_e1"), e2 = qval(&r, "disc_e2"), e3 = qval(&r, "disc_e3");
            double s = e0 < 0 ? -1 : 1;
            double want[4] = {cos(0.15), 0, 0, sin(0.15)};
            if (c == 2) want[1] = want[2] = want[3] = sin(0.15) / sqrt(3);
            if (c == 3) want[0] = want[1] = want[2] = want[3] = 0.5; /* z->x, x->y: 2 pi/3 about (1,1,1) */
            printf("  %s: Euler parameters %.12g %.12g %.12g %.12g\n", axes[c], s * e0, s * e1, s * e2, s * e3);
            CHECK(fabs(s * e0 - want[0]) < 1e-9 && fabs(s * e1 - want[1]) < 1e-9 && fabs(s * e2 - want[2]) < 1e-9 &&
                  fabs(s * e3 - want[3]) < 1e-9);
        }
        run_free(&r);
    }
    char text[2048];
    disc_text(text, sizeof text, "k: 8, a0: 0", "", "axis: [0, 0, 0], angle: 0.3", "");
    expect_error(text, NULL, 0, (const char *[]){"bad.yaml:3:", "marker 'O' of body 'ground'", "axis is zero", NULL});
}

/* ---- item: the inertia triangle inequality, bushing alignment, equation-level mass ---- */
TEST(physical_checks)
{
    const char *head = "model: mechanism\n"
                       "ground: {markers: {O: {}}}\n";
    char text[2048];
    snprintf(text, sizeof text, "%sbodies: {bob: {mass: 1, inertia: [1, 1, 4], markers: {B: {}}}}\n", head);
    expect_error(text, NULL, 0,
                 (const char *[]){"bad.yaml:3:34:", "body 'bob'", "triangle inequality", "1 + 1 < 4", NULL});
    /* a full tensor: principal moments 0.9, 1.1, 3 */
    snprintf(text, sizeof text, "%sbodies: {bob: {mass: 1, inertia: [1, 1, 3, 0.1, 0, 0], markers: {B: {}}}}\n", head);
    expect_error(text, NULL, 0, (const char *[]){"bad.yaml:3:34:", "body 'bob'", "triangle inequality", NULL});
    /* the limit (a thin disc, I1 + I2 = I3) is a body */
    snprintf(text, sizeof text,
             "%sbodies: {bob: {mass: 1, inertia: [0.25, 0.25, 0.5], markers: {B: {}}}}\n"
             "joints: {pin: {type: revolute, i: B, j: O}}\n",
             head);
    expect_ok(text, NULL, 0);
    /* a bushing between markers rotated 0.1 rad relative to each other in the file: accepted (issue
       30, item 12: the rotation is checked at the operating point, bushing_at_point below) */
    snprintf(text, sizeof text,
             "%sbodies: {bob: {mass: 1, inertia: [1, 1, 1], markers: {B: {axis: [1, 0, 0], angle: 0.1}}}}\n"
             "forces: {mount: {type: bushing, i: B, j: O, stiffness: [1, 1, 1, 1, 1, 1]}}\n",
             head);
    expect_ok(text, NULL, 0);
    /* the same through --set of the marker's angle */
    snprintf(text, sizeof text,
             "model: mechanism\nparameters: {tilt: 0}\n"
             "ground: {markers: {O: {}}}\n"
             "bodies: {bob: {mass: 1, inertia: [1, 1, 1], markers: {B: {axis: [1, 0, 0], angle: tilt}}}}\n"
             "forces: {mount: {type: bushing, i: B, j: O, stiffness: [1, 1, 1, 1, 1, 1]}}\n");
    expect_ok(text, NULL, 0);
    mbl_setting tilt = {"tilt", 0.1};
    expect_ok(text, &tilt, 1);
    /* a translational offset is a preload, accepted: equilibrium deflection 0 for the spring force */
    snprintf(text, sizeof text,
             "%sbodies: {bob: {mass: 1, inertia: [1, 1, 1], position: [0.2, 0, 0], markers: {B: {}}}}\n"
             "forces: {mount: {type: bushing, i: B, j: O, stiffness: [1, 1, 1, 1, 1, 1]}}\n",
             head);
    expect_ok(text, NULL, 0);
    /* equation level: a negative diagonal mass, and an indefinite 2x2 block */
    const char *dae = "model: dae\n"
                      "parameters: {m: 2, k: 8}\n"
                      "coordinates: {x: 0.1, y: 0}\n"
                      "mass_matrix:\n"
                      "  x: {x: m, y: 1}\n"
                      "  y: {y: 1}\n"
                      "potential_energy: \"k*x^2/2 + k*y^2/2\"\n";
    expect_ok(dae, NULL, 0);
    mbl_setting neg = {"m", -2};
    expect_error(dae, &neg, 1, (const char *[]){"bad.yaml:5:10:", "coordinate 'x'", "negative", "--set m=-2", NULL});
    mbl_setting small = {"m", 0.5}; /* M = [[0.5, 1], [1, 1]]: det -0.5 */
    expect_error(dae, &small, 1, (const char *[]){"bad.yaml:5:16:", "not positive semi-definite", "'x'", NULL});
    /* every 2x2 block semi-definite, the whole 3x3 not: eigenvalue 1 - 2a along (1, -1, -1) */
    const char *m3 = "model: dae\n"
                     "parameters: {a: 0.4}\n"
                     "coordinates: {x: 0, y: 0, z: 0}\n"
                     "mass_matrix:\n"
                     "  x: {x: 1, y: a, z: a}\n"
                     "  y: {y: 1, z: -a}\n"
                     "  z: {z: 1}\n"
                     "potential_energy: \"x^2 + y^2 + z^2\"\n";
    expect_ok(m3, NULL, 0);
    mbl_setting big_a = {"a", 0.9};
    expect_error(m3, &big_a, 1,
                 (const char *[]){"bad.yaml:", "not positive semi-definite", "smallest eigenvalue -0.8", NULL});
    const char *ke = "model: dae\n"
                     "parameters: {m: -1}\n"
                     "coordinates: {th: 0.1}\n"
                     "kinetic_energy: \"m*der(th)^2/2*(2 + cos(th))\"\n"
                     "potential_energy: \"th^2\"\n";
    expect_error(ke, NULL, 0, (const char *[]){"bad.yaml:4:18:", "coordinate 'th'", "negative", NULL});
}

/* ---- issue 30, item 12: a bushing's rotation is checked at the operating point ---- */
TEST(bushing_at_point)
{
    /* a body (mass 2, inertia 0.1, 0.2, 0.3 about its centre) on a bushing at its centre with
       stiffness k = 1000 in every direction, gravity along -z; the file's guess turns it 0.078 rad
       about x. Before, refused ("not aligned in the file's configuration"); the equilibrium is
       aligned, so no note, and the modes are sqrt(k/m) (three) and sqrt(k/I) (closed form). */
    const char *guess = "model: mechanism\n"
                        "ground: {markers: {O: {}}}\n"
                        "bodies: {bob: {mass: 2, inertia: [0.1, 0.2, 0.3], axis: [1, 0, 0], angle: 0.078, markers: {B: {}}}}\n"
                        "forces:\n"
                        "  mount: {type: bushing, i: B, j: O, stiffness: [1000, 1000, 1000, 1000, 1000, 1000]}\n"
                        "  weight: {type: gravity, g: [0, 0, -9.81]}\n"
                        "linearize: {at: equilibrium}\n";
    run r;
    int rc = run_text(guess, NULL, 0, 1, &r);
    CHECK(rc == 0);
    if (!rc) {
        CHECK_MSG(!strstr(r.pt->notes, "bushing"), "notes: %s", r.pt->notes);
        double want[6] = {sqrt(1000 / 0.3), sqrt(1000 / 0.2), sqrt(1000 / 0.1), sqrt(500), sqrt(500), sqrt(500)};
        int found = 0;
        for (int w = 0; w < 6; w++)
            for (int i = 0; i < r.modes->nx; i++)
                if (r.modes->modes[i].im > 0 && fabs(r.modes->modes[i].im - want[w]) < 1e-8 * want[w]) {
                    found++;
                    break;
                }
        CHECK_MSG(found == 6 && r.modes->nx == 12, "%d of 6 frequencies, %d eigenvalues", found, r.modes->nx);
    }
    run_free(&r);
    /* loaded beyond small angles: the centre 0.1 from the bushing along x, kr = 4.905 = m g l / 0.2
       about y: tan(theta) = m g l / kr = 0.2 at equilibrium (kr sin theta = m g l cos theta, AY = sin
       theta), theta = 0.197 rad > MBL_MECH_BUSHING_SMALL_ANGLE: a note with the angle, no refusal */
    const char *loaded = "model: mechanism\n"
                         "ground: {markers: {O: {}}}\n"
                         "bodies: {bob: {mass: 1, inertia: [0.01, 0.01, 0.01], position: [0.1, 0, 0],\n"
                         "               markers: {B: {position: [-0.1, 0, 0]}}}}\n"
                         "forces:\n"
                         "  mount: {type: bushing, i: B, j: O, stiffness: [1e6, 1e6, 1e6, 1e3, 4.905, 1e3]}\n"
                         "  weight: {type: gravity, g: [0, 0, -9.81]}\n"
                         "linearize: {at: equilibrium}\n";
    rc = run_text(loaded, NULL, 0, 0, &r);
    CHECK(rc == 0);
    if (!rc) {
        char want[200];
        snprintf(want, sizeof want, "markers 'B' and 'O' are rotated relative to each other by (rad) %.3g at the point, beyond 0.05 rad",
                 atan(0.2));
        CHECK_MSG(strstr(r.pt->notes, "force 'mount' (bushing)") && strstr(r.pt->notes, want), "'%s' not in notes: %s", want,
                  r.pt->notes);
    }
    run_free(&r);
}

/* ---- item: spatial joint angles do not wrap at +-pi ---- */
TEST(angles_continuous)
{
    /* a spatial pendulum on a hinge about global y, driven by JQ = w t; at t = 3, w = 1.5 the
       driven angle is 4.5 rad: the rod's centre at (-c sin 4.5, 0, -c cos 4.5) */
    const double c = 0.8, th = 4.5;
    const char *drv = "model: mechanism\n"
                      "parameters: {c: 0.8, w: 1.5}\n"
                      "ground: {markers: {pivot: {zaxis: [0, 1, 0]}}}\n"
                      "bodies:\n"
                      "  rod:\n"
                      "    mass: 2\n"
                      "    inertia: [0.2, 0.2, 0.05]\n"
                      "    position: [0, 0, \"-c\"]\n"
                      "    markers: {top: {position: [0, 0, c], zaxis: [0, 1, 0]}}\n"
                      "joints: {hinge: {type: revolute, i: top, j: pivot}}\n"
                      "drivers: {spin: {joint: hinge, motion: w*t}}\n"
                      "forces: {weight: {type: gravity, g: [0, 0, -9.81]}}\n"
                      "linearize: {time: 3}\n";
    run r;
    int rc = run_text(drv, NULL, 0, 0, &r);
    CHECK(rc == 0);
    if (!rc) {
        printf("  driver at 4.5 rad: centre (%.15g, %.15g), closed form (%.15g, %.15g)\n", qval(&r, "rod_x"),
               qval(&r, "rod_z"), -c * sin(th), -c * cos(th));
        CHECK(fabs(qval(&r, "rod_x") + c * sin(th)) < 1e-10);
        CHECK(fabs(qval(&r, "rod_z") + c * cos(th)) < 1e-10);
        CHECK(fabs(wrap(body_angle(&r, "rod", 2), th)) < 1e-10);
    }
    run_free(&r);

    /* a torsion spring twisted by 3.5 rad by a constant torque T = 3.5 k: equilibrium at 3.5 rad
       (the wrapped angle has no equilibrium there), omega^2 = k / Izz; the disc starts at 2.5 rad
       (Newton does not take a 3.5 rad rotation in one go from 0, wrapped or not) */
    const char *text = "model: mechanism\n"
                       "parameters: {k: 8}\n"
                       "ground: {markers: {O: {}}}\n"
                       "bodies: {disc: {mass: 1, inertia: [1.5, 1.5, 2], axis: [0, 0, 1], angle: 2.5, markers: {H: {}}}}\n"
                       "joints: {hinge: {type: revolute, i: H, j: O}}\n"
                       "forces:\n"
                       "  spring: {type: torsion, i: H, j: O, stiffness: k}\n"
                       "  twist: {type: force, i: H, torque: [0, 0, \"3.5*k\"]}\n";
    rc = run_text(text, NULL, 0, 1, &r);
    CHECK(rc == 0);
    if (!rc) {
        printf("  torsion twisted to %.15g rad (closed form 3.5), omega^2 %.15g (closed form 4)\n",
               body_angle(&r, "disc", 3), omega2(&r));
        CHECK(fabs(wrap(body_angle(&r, "disc", 3), 3.5)) < 1e-10);
        CHECK_CLOSE(omega2(&r), 8.0 / 2.0, 1e-10);
    }
    run_free(&r);

    /* a 3:1 gear: JQ(j1) + 3 JQ(j2) = 0, a torsion spring holds the gear at 1.2 rad, so the pinion
       sits at -3.6 rad; omega^2 = k / (I2 + 9 I1) */
    const char *gear = "model: mechanism\n"
                       "parameters: {k: 10, I1: 0.5, I2: 4}\n"
                       "ground: {markers: {O1: {}, O2: {position: [3, 0, 0]}}}\n"
                       "bodies:\n"
                       "  pinion: {mass: 1, inertia: [0.3, 0.3, I1], markers: {h1: {}}}\n"
                       "  gear: {mass: 1, inertia: [2.5, 2.5, I2], position: [3, 0, 0], markers: {h2: {}}}\n"
                       "joints:\n"
                       "  j1: {type: revolute, i: h1, j: O1}\n"
                       "  j2: {type: revolute, i: h2, j: O2}\n"
                       "  mesh: {type: coupler, joints: [j1, j2], ratios: [1, 3], offset: 0}\n"
                       "forces: {hold: {type: torsion, i: h2, j: O2, stiffness: k, angle: 1.2}}\n";
    rc = run_text(gear, NULL, 0, 1, &r);
    CHECK(rc == 0);
    if (!rc) {
        double want = 10.0 / (4 + 9 * 0.5);
        printf("  3:1 gear: pinion at %.15g rad (closed form -3.6), omega^2 %.15g (closed form %.15g)\n",
               body_angle(&r, "pinion", 3), omega2(&r), want);
        CHECK(fabs(wrap(body_angle(&r, "pinion", 3), -3.6)) < 1e-10);
        CHECK(fabs(wrap(body_angle(&r, "gear", 3), 1.2)) < 1e-10);
        CHECK_CLOSE(omega2(&r), want, 1e-10);
    }
    run_free(&r);
}

/* ---- item: a driver that depends on an input, in mechanism terms ---- */
TEST(driver_inputs)
{
    const char *base = "model: mechanism\n"
                       "space: planar\n"
                       "ground: {markers: {rail: {}}}\n"
                       "bodies: {cart: {mass: 5, inertia: 1, markers: {c: {}}}}\n"
                       "joints: {slide: {type: prismatic, i: c, j: rail}}\n"
                       "inputs: {u: 0}\n";
    char text[1024];
    snprintf(text, sizeof text, "%sdrivers: {stroke: {joint: slide, motion: \"0.1*t + u\"}}\n", base);
    expect_error(text, NULL, 0,
                 (const char *[]){"bad.yaml:7:42:", "driver 'stroke'", "input 'u'", "drivers cannot depend on inputs",
                                  NULL});
    snprintf(text, sizeof text,
             "%sdrivers: {stroke: {joint: slide, motion: \"x\"}}\nvariables: {x: \"2*u\"}\n", base);
    expect_error(text, NULL, 0,
                 (const char *[]){"bad.yaml:7:42:", "driver 'stroke'", "input 'u'", "through variable 'x'", NULL});
    snprintf(text, sizeof text, "%sdrivers: {stroke: {joint: slide, motion: \"JV(slide)\"}}\n", base);
    expect_error(text, NULL, 0, (const char *[]){"bad.yaml:7:42:", "driver 'stroke'", "der(.)", NULL});
    /* the other user texts inside constraints: a coupler's offset, a distance */
    const char *cp = "model: mechanism\n"
                     "ground: {markers: {O1: {}, O2: {position: [3, 0, 0]}}}\n"
                     "bodies:\n"
                     "  g1: {mass: 1, inertia: [1, 1, 2], markers: {h1: {}}}\n"
                     "  g2: {mass: 1, inertia: [2, 2, 4], position: [3, 0, 0], markers: {h2: {}}}\n"
                     "joints:\n"
                     "  j1: {type: revolute, i: h1, j: O1}\n"
                     "  j2: {type: revolute, i: h2, j: O2}\n"
                     "  gear: {type: coupler, joints: [j1, j2], ratios: [1, 2], offset: u}\n"
                     "inputs: {u: 0}\n";
    expect_error(cp, NULL, 0, (const char *[]){"bad.yaml:9:67:", "coupler 'gear'", "offset depends on input 'u'", NULL});
    const char *ds = "model: mechanism\n"
                     "ground: {markers: {O: {}}}\n"
                     "bodies: {bob: {type: point, mass: 1, position: [0, 0, -1], markers: {P: {}}}}\n"
                     "joints: {rod: {type: distance, i: P, j: O, distance: \"1 + u\"}}\n"
                     "inputs: {u: 0}\n";
    expect_error(ds, NULL, 0, (const char *[]){"bad.yaml:4:54:", "joint 'rod'", "distance depends on input 'u'", NULL});
}

int main(void)
{
    RUN(set_checks);
    RUN(axis_normalization);
    RUN(physical_checks);
    RUN(bushing_at_point);
    RUN(angles_continuous);
    RUN(driver_inputs);
    return test_summary("mech_checks");
}
