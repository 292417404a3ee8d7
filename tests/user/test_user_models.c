/* User routines in models (issue 68, items C1 and C4; docs/user-routines.md,
 * docs/mechanism-reference.md "User routines"), end to end through the library's API with the
 * example routines of examples/user (built into MBLIN_USER_LIB_DIR; the files' library paths are
 * replaced by that folder's):
 * - examples/user/single_track_car_user.yaml (a mechanism whose tires' lateral forces are the C
 *   routine mf_lateral, inputs SLIP(joint) and B C D E, with partials) against the built-in
 *   `tire: {model: magic_formula}` with the same B C D E: A to USER_RTOL of its largest entry and
 *   the eigenvalues to USER_RTOL, going straight and at a slip angle (every body moving sideways
 *   at 1.5 m/s, where C and E matter); the trimmed turn of examples/vehicle/
 *   mech_single_track_turn.yaml with the routine's tires: steer, slip and eigenvalues;
 * - examples/user/motor_pendulum.yaml (model: dae, the DC motor a routine) against
 *   motor_pendulum_expr.yaml (the same in the expression language): eigenvalues to USER_RTOL;
 * - the same without partials (central differences): within the error the result states;
 * - a mechanism's routines refused in its words: an output named as a parameter, an input with a
 *   bad measure, and the whole model without --allow-user-code (MBL_EPERM);
 * - the test libraries of tests/user in a two-coordinate model: plain's partials give A (against
 *   its partials written out here), wrong_partials (1 % off in d f1/dy) is refused by the operating
 *   point's check naming the entry, plain_nopartials asked for partials, err_routine, nan_routine,
 *   bad_abi, no_abi and a missing library each refused in one line naming it. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "model_text.h"

#ifndef MBLIN_USER_LIB_DIR
#error "MBLIN_USER_LIB_DIR: the folder of the routines' libraries (tests/user/tests.cmake)"
#endif

#define USER_RTOL 1e-12 /* the routine computes what the built-in's expression does, to rounding */
/* a file of examples/user with its libraries in MBLIN_USER_LIB_DIR */
static char *user_file(const char *path)
{
    return text_replace_all(text_slurp(path), "../../build/examples/user/", MBLIN_USER_LIB_DIR "/");
}

/* the model text loaded with user code allowed (allow) or not, run by text_run */
static int run(const char *name, const char *text, int allow, text_result *r, char *msg)
{
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    lo.allow_user_code = allow;
    return text_run(name, text, &lo, r, msg);
}

/* the built-in Magic Formula with the example's coefficients (single_track_car_user.yaml) */
static const char *mf_f = "{model: magic_formula, B: 10, C: 1.3, D: \"Cf/13\", E: 0.97}";
static const char *mf_r = "{model: magic_formula, B: 8, C: 1.5, D: \"Cr/12\", E: -0.5}";

TEST(car_routine_against_builtin)
{
    for (int sideways = 0; sideways < 2; sideways++) {
        char *u = user_file("examples/user/single_track_car_user.yaml");
        char *b = text_replace_all(text_slurp("examples/mech/single_track_car.yaml"), "{model: linear, cornering_stiffness: Cf}", mf_f);
        b = text_replace_all(b, "{model: linear, cornering_stiffness: Cr}", mf_r);
        if (sideways) {
            u = text_replace_all(u, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
            b = text_replace_all(b, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
        }
        static text_result ru, rb;
        CHECK(u && b);
        if (u && b && !run("car_user.yaml", u, 1, &ru, NULL) && !run("car_builtin.yaml", b, 0, &rb, NULL)) {
            double de, dA = text_compare(&rb, &ru, &de, NULL);
            CHECK_MSG(dA <= USER_RTOL && de <= USER_RTOL, "A differs by %.3g, eigenvalues by %.3g", dA, de);
            printf("  car %s, mf_lateral against magic_formula: A (%d x %d) %.2g, %d eigenvalues %.2g\n",
                   sideways ? "sideways at 1.5 m/s" : "straight", ru.nx, ru.nx, dA, ru.nev, de);
            /* without partials: central differences, within the error the result states */
            static text_result rn;
            char *n = text_replace_all(u, "partials: yes", "partials: no"); /* u freed */
            u = NULL;
            double wn;
            if (n && !run("car_nopartials.yaml", n, 1, &rn, NULL)) {
                double dAn = text_compare(&rb, &rn, NULL, &wn);
                CHECK_MSG(rn.err_est > 0 && wn <= rn.err_est, "without partials: eigenvalues off by %.3g, stated %.3g", wn,
                          rn.err_est);
                printf("    without partials: A %.2g, eigenvalues off by %.2g (absolute), stated error %.2g\n", dAn, wn,
                       rn.err_est);
            } else {
                CHECK(0);
            }
            free(n);
        } else {
            CHECK(0);
        }
        free(u);
        free(b);
    }
}

/* the steady turn of examples/vehicle/mech_single_track_turn.yaml with Magic Formula tires: the
 * routine's (with or without partials) and the built-in's */
static char *turn_text(int routine, const char *partials)
{
    char *t = text_slurp("examples/vehicle/mech_single_track_turn.yaml");
    const char *lin_f = "{model: linear, cornering_stiffness: Cf}", *lin_r = "{model: linear, cornering_stiffness: Cr}";
    if (!routine) return text_replace_all(text_replace_all(t, lin_f, mf_f), lin_r, mf_r);
    t = text_replace_all(text_replace_all(t, lin_f, "{model: force, lateral: Ff}"), lin_r, "{model: force, lateral: Fr}");
    char block[1024];
    snprintf(block, sizeof block,
             "\nroutines:\n"
             "  front_mf: {library: %s/libtire_mf.so, routine: mf_lateral, partials: %s,\n"
             "             inputs: [\"SLIP(front_tire)\", 10, 1.3, \"Cf/13\", 0.97], outputs: [Ff]}\n"
             "  rear_mf: {library: %s/libtire_mf.so, routine: mf_lateral, partials: %s,\n"
             "            inputs: [\"SLIP(rear_tire)\", 8, 1.5, \"Cr/12\", -0.5], outputs: [Fr]}\n"
             "forces:\n",
             MBLIN_USER_LIB_DIR, partials, MBLIN_USER_LIB_DIR, partials);
    return text_replace_all(t, "\nforces:\n", block);
}

TEST(turn_trim_routine_against_builtin)
{
    char *u = turn_text(1, "yes"), *b = turn_text(0, NULL);
    static text_result ru, rb;
    CHECK(u && b);
    if (u && b && !run("turn_user.yaml", u, 1, &ru, NULL) && !run("turn_builtin.yaml", b, 0, &rb, NULL)) {
        double de, dA = text_compare(&rb, &ru, &de, NULL), dy = text_outputs_diff(&rb, &ru);
        /* the trim's Newton stops below 1e-10 of the targets: the two solves agree far below it */
        CHECK_MSG(dy <= 1e-10 && de <= 1e-10, "outputs differ by %.3g, eigenvalues by %.3g", dy, de);
        printf("  trimmed turn with mf_lateral: steer %.10f, slip %.10f; outputs %.2g, A %.2g, %d eigenvalues %.2g\n",
               ru.y[1], ru.y[2], dy, dA, ru.nev, de);
    } else {
        CHECK(0);
    }
    free(u);
    free(b);
}

TEST(motor_routine_against_expressions)
{
    static text_result ru, rn, re;
    char *u = user_file("examples/user/motor_pendulum.yaml"), *e = text_slurp("examples/user/motor_pendulum_expr.yaml");
    char *n = text_replace_all(user_file("examples/user/motor_pendulum.yaml"), "partials: yes", "partials: no");
    CHECK(u && e && n);
    if (u && e && n && !run("motor_user.yaml", u, 1, &ru, NULL) && !run("motor_expr.yaml", e, 0, &re, NULL) &&
        !run("motor_nopartials.yaml", n, 1, &rn, NULL)) {
        double de, dA = text_compare(&re, &ru, &de, NULL);
        CHECK_MSG(dA <= USER_RTOL && de <= USER_RTOL, "A differs by %.3g, eigenvalues by %.3g", dA, de);
        printf("  motor pendulum, dc_motor with partials against expressions: A %.2g, %d eigenvalues %.2g\n", dA, ru.nev, de);
        /* without partials: central differences, the error stated */
        double worst, dAn = text_compare(&re, &rn, NULL, &worst);
        CHECK_MSG(rn.err_est > 0 && worst <= rn.err_est, "without partials: eigenvalues off by %.3g, stated %.3g", worst,
                  rn.err_est);
        printf("  without partials: A %.2g, eigenvalues off by %.2g (absolute), stated error %.2g\n", dAn, worst, rn.err_est);
    } else {
        CHECK(0);
    }
    free(u);
    free(e);
    free(n);
}

/* a bad mechanism routine: one line naming the routine or the joint, at the file's position */
static void bad(const char *text, int allow, int want_rc, const char *want1, const char *want2)
{
    static text_result r;
    char msg[512] = "";
    CHECK(text != NULL);
    if (!text) return;
    int rc = run("bad.yaml", text, allow, &r, msg);
    CHECK_MSG(rc != 0 && (!want_rc || rc == want_rc), "rc %d: %s", rc, msg);
    CHECK_MSG(strstr(msg, want1) && strstr(msg, want2) && !strchr(msg, '\n') && strstr(msg, "bad.yaml"), "'%s'", msg);
    printf("  %s\n", msg);
}

TEST(mechanism_refusals)
{
    const char *path = "examples/user/single_track_car_user.yaml";
    char *t = text_replace_all(user_file(path), "outputs: [Ff]", "outputs: [u]");
    bad(t, 1, MBL_EMODEL, "routine 'front_mf': output 'u'", "name of a parameter");
    free(t);
    t = text_replace_all(user_file(path), "\"SLIP(front_tire)\"", "\"SLIP(front_axle)\"");
    bad(t, 1, MBL_EMODEL, "joint 'front_axle'", "not a rolling wheel");
    free(t);
    t = text_replace_all(user_file(path), "\"SLIP(front_tire)\"", "\"DX(nowhere)\"");
    bad(t, 1, MBL_EMODEL, "bad.yaml:", "no marker named 'nowhere'");
    free(t);
    t = user_file(path);
    bad(t, 0, MBL_EPERM, "bad.yaml:", "libtire_mf.so");
    free(t);
}

/* a two-coordinate model whose forces are routine w of library lib: x'' = -10 x + f0(x, y),
 * y'' = -10 y + f1(x, y), at the given point x = 0.7, y = -0.3 */
static char *two_dof(const char *lib, const char *routine, const char *partials)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "model: dae\nname: two springs and a routine\ncoordinates: {x: 0.7, y: -0.3}\n"
             "routines:\n  w: {library: %s/lib%s.so, routine: %s, inputs: [x, y], outputs: [f0, f1], partials: %s}\n"
             "kinetic_energy: \"0.5*der(x)^2 + 0.5*der(y)^2\"\npotential_energy: \"5*x^2 + 5*y^2\"\n"
             "forces: {x: f0, y: f1}\nlinearize: {at: given}\n",
             MBLIN_USER_LIB_DIR, lib, routine, partials);
    return text;
}

/* the test libraries of tests/user in a model: plain's A against its partials written here, and
 * each bad library or routine refused in one line naming it */
TEST(test_libraries_in_a_model)
{
    static text_result r;
    char msg[512] = "";
    int rc = run("plain.yaml", two_dof("plain", "plain", "yes"), 1, &r, msg);
    CHECK_MSG(rc == 0 && r.nx == 4, "plain: %s", msg);
    if (!rc && r.nx == 4) {
        /* A = [0 I; K 0] with K = -10 I + d f / d (x, y) (states x, y, der(x), der(y); column-major) */
        double x = 0.7, y = -0.3, K[2][2] = {{-10 + cos(x) * y, sin(x)}, {2 * x, -10 + exp(y)}}, worst = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) worst = fmax(worst, fabs(r.A[(size_t)j * 4 + 2 + i] - K[i][j]) / 10);
        CHECK_MSG(worst <= USER_RTOL, "plain: A's stiffness block off by %.3g", worst);
        printf("  plain (partials): A's stiffness block against the partials written out: %.2g\n", worst);
    }
    struct {
        const char *lib, *routine, *partials, *want1, *want2;
    } bad_cases[] = {
        {"wrong_partials", "wrong_partials", "yes", "routine 'w'", "d out2 / d in2"},
        {"plain", "plain_nopartials", "yes", "routine 'w'", "partials: no"},
        {"err_routine", "err_routine", "no", "routine 'w'", "table lookup outside 0..10"},
        {"nan_routine", "nan_routine", "no", "routine 'w'", "nan"},
        {"bad_abi", "bad_abi", "no", "libbad_abi.so", "version"},
        {"no_abi", "no_abi", "no", "libno_abi.so", "mblin_user_abi"},
        {"no_such_library", "f", "no", "libno_such_library.so", "routine 'w'"},
    };
    for (size_t k = 0; k < sizeof bad_cases / sizeof *bad_cases; k++) {
        msg[0] = '\0';
        rc = run("bad.yaml", two_dof(bad_cases[k].lib, bad_cases[k].routine, bad_cases[k].partials), 1, &r, msg);
        CHECK_MSG(rc != 0 && strstr(msg, bad_cases[k].want1) && strstr(msg, bad_cases[k].want2) && !strchr(msg, '\n'),
                  "%s: rc %d '%s'", bad_cases[k].routine, rc, msg);
        printf("  %s\n", msg);
    }
}

int main(void)
{
    RUN(car_routine_against_builtin);
    RUN(turn_trim_routine_against_builtin);
    RUN(motor_routine_against_expressions);
    RUN(mechanism_refusals);
    RUN(test_libraries_in_a_model);
    return test_summary("user routines in models");
}
