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

#define TIRE_A_RTOL 1e-12    /* the two texts differ by rounding only */
#define TIRE_TRIM_RTOL 1e-10 /* the trim's Newton tolerance is far below it */
enum { NMAX = 64, NA = 64 * 64 };

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* s with every occurrence of a replaced by b (a new string; s freed), NULL when a is not in s */
static char *replace_all(char *s, const char *a, const char *b)
{
    if (!s || !strstr(s, a)) {
        free(s);
        return NULL;
    }
    size_t la = strlen(a), lb = strlen(b), n = 0;
    for (const char *p = strstr(s, a); p; p = strstr(p + la, a)) n++;
    char *o = malloc(strlen(s) + n * lb + 1), *w = o;
    if (!o) {
        free(s);
        return NULL;
    }
    const char *r = s;
    for (const char *p = strstr(r, a); p; r = p + la, p = strstr(r, a)) {
        memcpy(w, r, (size_t)(p - r));
        w += p - r;
        memcpy(w, b, lb);
        w += lb;
    }
    strcpy(w, r);
    free(s);
    return o;
}

/* the results of a model text at its point */
typedef struct result {
    int nx, ny, nev;
    double A[NA], y[16];
    double complex ev[NMAX];
} result;

static int run(const char *name, const char *text, result *r, char *msg)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    memset(r, 0, sizeof *r);
    int rc = mbl_model_load_string(text, strlen(text), name, NULL, 0, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_model_outputs(md, pt, r->y, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
    if (!rc && (lin->nx * lin->nx > NA || lin->ny > 16)) rc = mbl_error(&st, MBL_EARG, "too large for the test");
    if (rc) {
        if (msg) snprintf(msg, 512, "%.500s", st.msg);
        else fprintf(stderr, "%s: %s\n", name, st.msg);
    } else {
        r->nx = lin->nx;
        r->ny = lin->ny;
        memcpy(r->A, lin->A, sizeof(double) * (size_t)(lin->nx * lin->nx));
        for (int i = 0; i < modes->nx && r->nev < NMAX; i++)
            if (!modes->modes[i].spurious) r->ev[r->nev++] = modes->modes[i].re + I * modes->modes[i].im;
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

/* the largest difference of two A matrices relative to the largest entry */
static double a_diff(const result *a, const result *b)
{
    double big = 0, d = 0;
    for (int i = 0; i < a->nx * a->nx; i++) big = fmax(big, fabs(a->A[i]));
    for (int i = 0; i < a->nx * a->nx; i++) d = fmax(d, fabs(a->A[i] - b->A[i]));
    return d / big;
}

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
    char *t = replace_all(slurp(path), lin_f, f);
    return replace_all(t, lin_r, r);
}

TEST(car_magic_formula_written_out)
{
    const char *path = "examples/mech/single_track_car.yaml";
    for (int sideways = 0; sideways < 2; sideways++) {
        char *b = with_tires(path, mf_f, mf_r), *e = with_tires(path, ex_f, ex_r);
        if (sideways) { /* every body moving at (u, 1.5, 0): the slip angle atan(1.5 / u) at both wheels */
            b = replace_all(b, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
            e = replace_all(e, "velocity: [u, 0, 0]", "velocity: [u, 1.5, 0]");
            e = replace_all(e, "outputs: {yaw_rate: \"WZ(cg)\"}", "outputs: {Ff: \"_wheel_front_tire_Fy\", a: \"SLIP(front_tire)\"}");
            b = replace_all(b, "outputs: {yaw_rate: \"WZ(cg)\"}", "outputs: {Ff: \"_wheel_front_tire_Fy\", a: \"SLIP(front_tire)\"}");
        }
        CHECK(b && e);
        static result rb, re;
        if (b && e && !run("car_builtin.yaml", b, &rb, NULL) && !run("car_written.yaml", e, &re, NULL)) {
            CHECK_EQ_INT(rb.nx, re.nx);
            double d = a_diff(&rb, &re);
            CHECK_MSG(d <= TIRE_A_RTOL, "A differs by %.3g of its largest entry", d);
            printf("  %s: A (%d x %d) of the written-out Magic Formula against the built-in: %.2g\n",
                   sideways ? "sideways at 1.5 m/s" : "straight", re.nx, re.nx, d);
            if (!sideways) continue;
            /* the force at the slip angle against the formula evaluated here (vmin = 1e-4) */
            double B = 10, C = 1.3, D = 80000.0 / 13, E = 0.97, al = atan(1.5 / sqrt(20.0 * 20.0 + 1e-8)), x = B * al;
            double F = -D * sin(C * atan(x - E * (x - atan(x))));
            CHECK_MSG(fabs(re.y[1] - al) <= 1e-14, "SLIP %.17g, want %.17g", re.y[1], al);
            CHECK_MSG(fabs(re.y[0] - F) <= 1e-12 * fabs(F) && fabs(rb.y[0] - F) <= 1e-12 * fabs(F),
                      "lateral force %.15g (built-in %.15g), the formula's %.15g", re.y[0], rb.y[0], F);
            printf("  SLIP(front_tire) = %.10f, lateral force %.10g N (formula %.10g)\n", re.y[1], re.y[0], F);
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
    static result rb, re;
    if (b && e && !run("turn_builtin.yaml", b, &rb, NULL) && !run("turn_written.yaml", e, &re, NULL)) {
        /* outputs: yaw_rate, steer, slip, front_spin, rear_spin, lateral_acceleration */
        double worst = 0;
        for (int k = 0; k < rb.ny; k++) {
            double d = fabs(rb.y[k] - re.y[k]) / fmax(fabs(rb.y[k]), 1e-300);
            CHECK_MSG(d <= TIRE_TRIM_RTOL, "output %d: %.15g, built-in %.15g", k, re.y[k], rb.y[k]);
            worst = fmax(worst, d);
        }
        CHECK_EQ_INT(rb.nev, re.nev);
        double ew = 0;
        for (int i = 0; i < rb.nev && rb.nev == re.nev; i++) {
            double bd = INFINITY;
            for (int j = 0; j < re.nev; j++) bd = fmin(bd, cabs(re.ev[j] - rb.ev[i]) / fmax(1.0, cabs(rb.ev[i])));
            CHECK_MSG(bd <= TIRE_TRIM_RTOL, "eigenvalue %.12g%+.12gi: nearest off by %.3g", creal(rb.ev[i]), cimag(rb.ev[i]), bd);
            ew = fmax(ew, bd);
        }
        printf("  trimmed turn: steer %.10f, slip %.10f; outputs differ by %.2g, %d eigenvalues by %.2g\n", re.y[1], re.y[2],
               worst, re.nev, ew);
    } else {
        CHECK(0);
    }
    free(b);
    free(e);
}

/* a bad tire or SLIP: one line naming the joint */
static void bad(const char *text, const char *want1, const char *want2)
{
    static result r;
    char msg[512] = "";
    CHECK(text != NULL);
    if (!text) return;
    int rc = run("bad.yaml", text, &r, msg);
    CHECK_MSG(rc != 0, "accepted: %s", want2);
    CHECK_MSG(strstr(msg, want1) && strstr(msg, want2) && !strchr(msg, '\n') && strstr(msg, "bad.yaml:"), "'%s'", msg);
    printf("  %s\n", msg);
}

TEST(bad_input)
{
    const char *path = "examples/mech/single_track_car.yaml", *out = "outputs: {yaw_rate: \"WZ(cg)\"}";
    char *t = replace_all(slurp(path), out, "outputs: {s: \"SLIP(front_axle)\"}");
    bad(t, "joint 'front_axle'", "not a rolling wheel");
    free(t);
    t = replace_all(slurp(path), lin_r, "{model: force, lateral: \"-Cr*SLIP(front_axle)\"}");
    bad(t, "joint 'front_axle'", "not a rolling wheel");
    free(t);
    t = replace_all(slurp("examples/mech/rolling_disc.yaml"), "outputs: {lean: \"asin(az)\"}",
                    "outputs: {lean: \"asin(az)\", s: \"SLIP(roll)\"}");
    bad(t, "rolling wheel 'roll'", "has no tire");
    free(t);
    t = replace_all(slurp(path), lin_f, "{model: force}");
    bad(t, "joint 'front_tire'", "missing 'lateral'");
    free(t);
    t = replace_all(slurp(path), lin_f, "{model: force, lateral: \"-Cf*SLIP(front_tire, rear_tire)\"}");
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
