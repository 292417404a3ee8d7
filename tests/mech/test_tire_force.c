/* A rolling wheel's tire as an expression (issue 68, item C2; docs/mechanism-reference.md,
 * "Rolling wheels and tires"): `tire: {model: force, lateral: EXPR}` and the measure SLIP(joint),
 * the slip angle of the built-in tire laws.
 * - examples/mech/single_track_car.yaml with Magic Formula tires: the built-in `magic_formula` and
 *   the same formula written out with SLIP give the same A to TIRE_A_RTOL of A's largest entry,
 *   going straight (where B C D = Ca gives the closed-form single-track eigenvalues of
 *   test_rolling_wheel) and at a slip angle of 0.075 rad (every body moving sideways at 1.5 m/s,
 *   where C and E shape the force), and the written-out force there equals the formula evaluated
 *   here;
 * - the trimmed turn of examples/vehicle/mech_single_track_turn.yaml with Magic Formula tires, the
 *   built-in against the written-out: the same steer, body slip and eigenvalues to TIRE_TRIM_RTOL;
 * - bad input: SLIP of a joint that is no rolling wheel, of a rolling wheel without a tire, a
 *   `model: force` without `lateral`: one line naming the joint. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "model_text.h"

#define TIRE_A_RTOL 1e-12    /* the two texts differ by rounding only */
#define TIRE_TRIM_RTOL 1e-10 /* the trim's Newton tolerance is far below it */

/* the Magic Formula tires of test_rolling_wheel (B C D = Ca) as the built-in and written out */
static const char *lin_f = "{model: linear, cornering_stiffness: Cf}", *lin_r = "{model: linear, cornering_stiffness: Cr}";
static const char *mf_f = "{model: magic_formula, B: 10, C: 1.3, D: \"Cf/13\", E: 0.97}";
static const char *mf_r = "{model: magic_formula, B: 8, C: 1.5, D: \"Cr/12\", E: -0.5}";
static const char *ex_f = "{model: force, lateral: \"-Cf/13*sin(1.3*atan(10*SLIP(front_tire) - 0.97*(10*SLIP(front_tire) - "
                          "atan(10*SLIP(front_tire)))))\"}";
static const char *ex_r = "{model: force, lateral: \"-Cr/12*sin(1.5*atan(8*SLIP(rear_tire) + 0.5*(8*SLIP(rear_tire) - "
                          "atan(8*SLIP(rear_tire)))))\"}";

/* a file's text with its tires replaced (NULL on failure) */
static char *with_tires(const char *path, const char *f, const char *r)
{
    char *t = text_replace_all(text_slurp(path), lin_f, f);
    return text_replace_all(t, lin_r, r);
}

TEST(car_magic_formula_written_out)
{
    const char *path = "examples/mech/single_track_car.yaml";
    for (int sideways = 0; sideways < 2; sideways++) {
        char *b = with_tires(path, mf_f, mf_r), *e = with_tires(path, ex_f, ex_r);
        if (sideways) { /* every body moving at (u, 1.5, 0): the slip angle atan(1.5 / u) at both wheels */
            b = text_replace_all(b, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
            e = text_replace_all(e, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
            e = text_replace_all(e, "outputs: {yaw_rate: \"WZ(cg)\"}", "outputs: {Ff: \"_wheel_front_tire_Fy\", a: \"SLIP(front_tire)\"}");
            b = text_replace_all(b, "outputs: {yaw_rate: \"WZ(cg)\"}", "outputs: {Ff: \"_wheel_front_tire_Fy\", a: \"SLIP(front_tire)\"}");
        }
        CHECK(b && e);
        static text_result rb, re;
        if (b && e && !text_run("car_builtin.yaml", b, NULL, &rb, NULL) && !text_run("car_written.yaml", e, NULL, &re, NULL)) {
            CHECK_EQ_INT(rb.nx, re.nx);
            double d = text_compare(&rb, &re, NULL, NULL);
            CHECK_MSG(d <= TIRE_A_RTOL, "A differs by %.3g of its largest entry", d);
            printf("  %s: A (%d x %d) of the written-out Magic Formula against the built-in: %.2g\n",
                   sideways ? "sideways at 1.5 m/s" : "straight", re.nx, re.nx, d);
            if (sideways) {
                /* the force at the slip angle against the formula evaluated here (vmin = 1e-4) */
                double B = 10, C = 1.3, D = 80000.0 / 13, E = 0.97, al = atan(1.5 / sqrt(20.0 * 20.0 + 1e-8)), x = B * al;
                double F = -D * sin(C * atan(x - E * (x - atan(x))));
                CHECK_MSG(fabs(re.y[1] - al) <= 1e-14, "SLIP %.17g, want %.17g", re.y[1], al);
                CHECK_MSG(fabs(re.y[0] - F) <= 1e-12 * fabs(F) && fabs(rb.y[0] - F) <= 1e-12 * fabs(F),
                          "lateral force %.15g (built-in %.15g), the formula's %.15g", re.y[0], rb.y[0], F);
                printf("  SLIP(front_tire) = %.10f, lateral force %.10g N (formula %.10g)\n", re.y[1], re.y[0], F);
            }
        } else {
            CHECK(0);
        }
        free(b);
        free(e);
    }
}

TEST(turn_trim_written_out)
{
    const char *path = "examples/vehicle/mech_single_track_turn.yaml";
    char *b = with_tires(path, mf_f, mf_r), *e = with_tires(path, ex_f, ex_r);
    CHECK(b && e);
    static text_result rb, re;
    if (b && e && !text_run("turn_builtin.yaml", b, NULL, &rb, NULL) && !text_run("turn_written.yaml", e, NULL, &re, NULL)) {
        /* outputs: yaw_rate, steer, slip, front_spin, rear_spin, lateral_acceleration */
        double worst = text_outputs_diff(&rb, &re);
        CHECK_MSG(worst <= TIRE_TRIM_RTOL, "outputs differ by %.3g (steer %.15g, built-in %.15g)", worst, re.y[1], rb.y[1]);
        CHECK_EQ_INT(rb.nev, re.nev);
        double ew, dA = text_compare(&rb, &re, &ew, NULL);
        CHECK_MSG(ew <= TIRE_TRIM_RTOL, "eigenvalues differ by %.3g (A by %.3g)", ew, dA);
        printf("  trimmed turn: steer %.10f, slip %.10f; outputs differ by %.2g, A by %.2g, %d eigenvalues by %.2g\n",
               re.y[1], re.y[2], worst, dA, re.nev, ew);
    } else {
        CHECK(0);
    }
    free(b);
    free(e);
}

/* a bad tire or SLIP: one line naming the joint */
static void bad(const char *text, const char *want1, const char *want2)
{
    static text_result r;
    char msg[512] = "";
    CHECK(text != NULL);
    if (!text) return;
    int rc = text_run("bad.yaml", text, NULL, &r, msg);
    CHECK_MSG(rc != 0, "accepted: %s", want2);
    CHECK_MSG(strstr(msg, want1) && strstr(msg, want2) && !strchr(msg, '\n') && strstr(msg, "bad.yaml:"), "'%s'", msg);
    printf("  %s\n", msg);
}

TEST(bad_input)
{
    const char *path = "examples/mech/single_track_car.yaml", *out = "outputs: {yaw_rate: \"WZ(cg)\"}";
    char *t = text_replace_all(text_slurp(path), out, "outputs: {s: \"SLIP(front_axle)\"}");
    bad(t, "joint 'front_axle'", "not a rolling wheel");
    free(t);
    t = text_replace_all(text_slurp(path), lin_r, "{model: force, lateral: \"-Cr*SLIP(front_axle)\"}");
    bad(t, "joint 'front_axle'", "not a rolling wheel");
    free(t);
    t = text_replace_all(text_slurp("examples/mech/rolling_disc.yaml"), "outputs: {lean: \"asin(az)\"}",
                    "outputs: {lean: \"asin(az)\", s: \"SLIP(roll)\"}");
    bad(t, "rolling wheel 'roll'", "has no tire");
    free(t);
    t = text_replace_all(text_slurp(path), lin_f, "{model: force}");
    bad(t, "joint 'front_tire'", "missing 'lateral'");
    free(t);
    t = text_replace_all(text_slurp(path), lin_f, "{model: force, lateral: \"-Cf*SLIP(front_tire, rear_tire)\"}");
    bad(t, "SLIP takes the name of a rolling wheel", "front_tire");
    free(t);
}

int main(void)
{
    RUN(car_magic_formula_written_out);
    RUN(turn_trim_written_out);
    RUN(bad_input);
    return test_summary("tire as an expression");
}
