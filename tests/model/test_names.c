/* Name lookup of the model loader (src/model/names.c model_find_name): names that are prefixes of one
 * another or differ in one character resolve to themselves, in lists short enough to be scanned
 * (< 8 items) and long enough to be hashed (the lookup compares text and terminator, no length
 * table). A mass-spring model whose parameters all collide: omega^2 = kk/mm exactly when every
 * name resolved to its own value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

static double omega2(const char *text, mbl_status *st, int *ok)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    double w2 = NAN;
    int rc = mbl_model_load_string(text, strlen(text), "names.yaml", NULL, 0, &md, st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, st);
    if (!rc)
        for (int i = 0; i < modes->nx; i++)
            if (modes->modes[i].im > 0) w2 = modes->modes[i].im * modes->modes[i].im;
    *ok = rc == 0;
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return w2;
}

/* parameters k, kk, kkk, k1, k_1, kk1, m, mm, mmm, m1 (10: hashed) and coordinates x, xx (2:
 * scanned), the spring and mass chosen by the longer names */
static const char *hashed = "model: dae\n"
                            "parameters: {k: 1, kk: 36, kkk: 7, k1: 11, k_1: 13, kk1: 17, m: 3, mm: 4, mmm: 5, m1: 6}\n"
                            "coordinates: {x: 0, xx: 0}\n"
                            "kinetic_energy: \"0.5*mm*der(xx)^2 + 0.5*mmm*der(x)^2\"\n"
                            "potential_energy: \"0.5*kk*xx^2 + 0.5*kk1*(x - xx)^2\"\n"
                            "constraints: [\"x - 0\"]\n";

/* the same with a short parameter list (scanned) */
static const char *scanned = "model: dae\n"
                             "parameters: {k: 1, kk: 36, kkk: 7, mm: 4, m: 3}\n"
                             "coordinates: {xx: 0, x: 0}\n"
                             "kinetic_energy: \"0.5*mm*der(xx)^2 + 0.5*m*der(x)^2\"\n"
                             "potential_energy: \"0.5*kk*xx^2 + 0.5*kkk*(x - xx)^2\"\n"
                             "constraints: [\"x\"]\n";

TEST(colliding_names)
{
    mbl_status st;
    int ok;
    /* x held at 0 by the constraint: xx is a mass mm on springs kk (to ground) and the coupling */
    double w2 = omega2(hashed, &st, &ok);
    CHECK_MSG(ok, "%s", st.msg);
    printf("  hashed lists: omega^2 %.15g (closed form (36 + 17)/4 = %.15g)\n", w2, 53.0 / 4.0);
    CHECK_CLOSE(w2, 53.0 / 4.0, 1e-12);
    w2 = omega2(scanned, &st, &ok);
    CHECK_MSG(ok, "%s", st.msg);
    printf("  scanned lists: omega^2 %.15g (closed form (36 + 7)/4 = %.15g)\n", w2, 43.0 / 4.0);
    CHECK_CLOSE(w2, 43.0 / 4.0, 1e-12);
}

/* The resolver's one index over every kind of name (names.c model_find_symbol): names that are
 * prefixes of one another across the kinds (parameters k, kkk, m; variable kk; coordinates x, xx;
 * a named constraint xc) each resolve to their own kind. kk = 2 k kkk = 36: omega^2 = 36/4. */
static const char *kinds = "model: dae\n"
                           "parameters: {k: 2, kkk: 9, m: 4}\n"
                           "variables: {kk: \"2*k*kkk\"}\n"
                           "coordinates: {x: 0, xx: 0}\n"
                           "kinetic_energy: \"0.5*m*der(xx)^2 + 0.5*m*der(x)^2\"\n"
                           "potential_energy: \"0.5*kk*xx^2 + 0.5*kkk*(x - xx)^2\"\n"
                           "constraints: {xc: \"x\"}\n";

/* a parameter that uses a coordinate is refused with the reason; one that uses a constraint's name
 * is refused as an unknown name (the constraint's force is not a parameter's to use) */
static const char *param_uses_coord = "model: dae\n"
                                      "parameters: {k: 2, m: \"xx + 1\"}\n"
                                      "coordinates: {x: 0, xx: 0}\n"
                                      "kinetic_energy: \"0.5*m*der(xx)^2\"\n"
                                      "potential_energy: \"0.5*k*xx^2\"\n"
                                      "constraints: {xc: \"x\"}\n";
static const char *param_uses_constraint = "model: dae\n"
                                           "parameters: {k: 2, m: \"xc + 1\"}\n"
                                           "coordinates: {x: 0, xx: 0}\n"
                                           "kinetic_energy: \"0.5*m*der(xx)^2\"\n"
                                           "potential_energy: \"0.5*k*xx^2\"\n"
                                           "constraints: {xc: \"x\"}\n";

TEST(names_of_every_kind)
{
    mbl_status st;
    int ok;
    double w2 = omega2(kinds, &st, &ok);
    CHECK_MSG(ok, "%s", st.msg);
    printf("  kinds: omega^2 %.15g (closed form (36 + 9)/4 = %.15g)\n", w2, 45.0 / 4.0);
    CHECK_CLOSE(w2, 45.0 / 4.0, 1e-12);
    (void)omega2(param_uses_coord, &st, &ok);
    CHECK(!ok);
    printf("  parameter using a coordinate: %s\n", st.msg);
    CHECK(strstr(st.msg, "'xx' cannot be used in") && strstr(st.msg, "only parameters can"));
    (void)omega2(param_uses_constraint, &st, &ok);
    CHECK(!ok);
    printf("  parameter using a constraint's name: %s\n", st.msg);
    CHECK(strstr(st.msg, "xc") && !strstr(st.msg, "only parameters can"));
}

/* lambda and mu name parameters (a length, a mass) beside the multiplier lambda(c) of a named
 * constraint: a pendulum of length lambda, point mass mu, in Cartesian coordinates, its tension
 * lambda(c) an output. omega^2 = g / lambda; the point needs lambda(c) = mu g / (2 lambda) (or its
 * negative, by the sign convention) to hold the mass: the output must be finite and nonzero. */
static const char *multiplier_names = "model: dae\n"
                                      "parameters: {mu: 3, lambda: 2, g: 9.81}\n"
                                      "coordinates: {x: 0, y: -2}\n"
                                      "kinetic_energy: \"0.5*mu*(der(x)^2 + der(y)^2)\"\n"
                                      "potential_energy: \"mu*g*y\"\n"
                                      "constraints: {c: \"x^2 + y^2 - lambda^2\"}\n"
                                      "outputs: {tension: \"lambda(c)\"}\n";

TEST(multiplier_function_names)
{
    mbl_status st;
    int ok;
    double w2 = omega2(multiplier_names, &st, &ok);
    CHECK_MSG(ok, "%s", st.msg);
    printf("  parameters mu and lambda beside lambda(c): omega^2 %.15g (closed form g/lambda = %.15g)\n", w2,
           9.81 / 2.0);
    CHECK_CLOSE(w2, 9.81 / 2.0, 1e-12);
    /* a symbol named mu used as a call is still the multiplier call, and c is not a
     * non-holonomic constraint */
    (void)omega2("model: dae\nparameters: {mu: 3, k: 2}\ncoordinates: {x: 0}\n"
                 "kinetic_energy: \"0.5*mu*der(x)^2\"\npotential_energy: \"0.5*k*x^2\"\n"
                 "outputs: {f: \"mu(x)\"}\n",
                 &st, &ok);
    CHECK(!ok);
    printf("  mu(x) with a parameter mu: %s\n", st.msg);
    CHECK(strstr(st.msg, "names.yaml:6:") && strstr(st.msg, "mu() is the force of a non-holonomic constraint") &&
          strstr(st.msg, "has none"));
}

/* The resolver's guesses (names.c model_find_symbol, taken from 16,384 names on): the neighbours of
 * the last item found in each list, and a small cache of names used often. 8,500 parameters p<j> = j
 * and 8,500 variables w<j> = j, named in the stiffness as (p<j> - j)^2 + (w<j> - j)^2 in ascending,
 * descending and strided orders, the two lists alternating (p1 beside p10 and p100: a neighbour
 * whose name is a prefix): the sum is 0, and omega^2 = k/m, only when every name resolved to its
 * own item. */
TEST(many_names_in_any_order)
{
    enum { N = 8500 };
    size_t cap = (size_t)4 << 20, len = 0;
    char *t = malloc(cap);
    CHECK(t != NULL);
    if (!t) return;
#define ADD(...) (len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__))
    ADD("model: dae\nparameters:\n  k: 36\n  m: 4\n");
    for (int j = 0; j < N; j++) ADD("  p%d: %d\n", j, j);
    ADD("variables:\n");
    for (int j = 0; j < N; j++) ADD("  w%d: \"%d\"\n", j, j);
    ADD("coordinates: {x: 0}\nkinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: \"0.5*(k");
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < N; i++) {
            int j = pass == 0 ? i : pass == 1 ? N - 1 - i : (int)(((long)i * 7919) % N);
            ADD(" + (p%d - %d)^2 + (w%d - %d)^2", j, j, j, j);
        }
    ADD(")*x^2\"\n");
#undef ADD
    CHECK(len < cap);
    mbl_status st;
    int ok;
    double w2 = omega2(t, &st, &ok);
    free(t);
    CHECK_MSG(ok, "%s", st.msg);
    printf("  %d parameters and %d variables named in three orders: omega^2 %.15g (closed form 36/4)\n", N, N, w2);
    CHECK(w2 == 9.0);
}

int main(void)
{
    RUN(colliding_names);
    RUN(names_of_every_kind);
    RUN(multiplier_function_names);
    RUN(many_names_in_any_order);
    return test_summary("names");
}
