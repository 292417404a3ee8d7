/* Every error class of a model file gives one line naming the file, line and column (where
 * there is one) and a negative status; nothing crashes or passes a NaN on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"
#include "test.h"

/* Load text (and optionally compute the point and the linear model); expect failure with a
 * message containing `expect`. */
static void expect_error(const char *text, int stage, int code, const char *expect)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mbl_model_load_string(text, strlen(text), "bad.yaml", NULL, 0, &md, &st);
    if (!rc && stage >= 1) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc && stage >= 2) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    CHECK_MSG(rc != 0, "expected an error containing '%s'", expect);
    if (code) CHECK_MSG(rc == code, "code %d, expected %d (%s)", rc, code, st.msg);
    CHECK_MSG(strstr(st.msg, expect) != NULL, "message '%s' lacks '%s'", st.msg, expect);
    CHECK(strchr(st.msg, '\n') == NULL);
    CHECK(strstr(st.msg, "bad.yaml") != NULL);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

#define HEAD "model: dae\nparameters: {m: 1, k: 4}\ncoordinates: {x: 0.1}\n"

TEST(yaml_and_keys)
{
    expect_error("model: dae\ncoordinates: {x: 0\n", 0, MBL_EPARSE, "bad.yaml:");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nmass: 3\n", 0, MBL_EMODEL, "bad.yaml:5:1: unknown key 'mass'");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nlinearize: {at: somewhere}\n", 0, MBL_EMODEL,
                 "bad.yaml:5:17: linearize.at must be equilibrium, given, steady or trim");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nlinearize: {when: 1}\n", 0, MBL_EMODEL, "unknown key 'when'");
    expect_error("coordinates: {x: 0}\n", 0, MBL_EMODEL, "missing key 'model'");
    expect_error("model: mbd\n", 0, MBL_EMODEL, "bad.yaml:1:8: unknown model kind");
    expect_error(HEAD, 0, MBL_EMODEL, "missing 'kinetic_energy'");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nkinetic_energy: 1\n", 0, MBL_EMODEL, "duplicate key");
}

TEST(wrong_types)
{
    expect_error(HEAD "kinetic_energy: [1, 2]\n", 0, MBL_EMODEL, "bad.yaml:4:17: 'kinetic_energy' must be an expression");
    expect_error("model: dae\ncoordinates: [x, y]\n", 0, MBL_EMODEL, "bad.yaml:2:14: 'coordinates' must be a mapping");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nconstraints: x\n", 0, MBL_EMODEL, "must be a list");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nforces: {x: [1]}\n", 0, MBL_EMODEL,
                 "bad.yaml:5:13: expected an expression");
}

TEST(names)
{
    expect_error(HEAD "kinetic_energy: \"0.5*mass*der(x)^2\"\n", 0, MBL_EPARSE, "bad.yaml:4:22: unknown name 'mass'");
    expect_error("model: dae\nparameters: {m: 1, x: 2}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n", 0,
                 MBL_EMODEL, "bad.yaml:3:15: duplicate name 'x'");
    expect_error("model: dae\nparameters: {m: 1, m: 2}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n", 0,
                 MBL_EMODEL, "duplicate name 'm'");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nforces: {z: 1}\n", 0, MBL_EMODEL,
                 "bad.yaml:5:10: 'z' in forces is not a coordinate");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2 +\"\n", 0, MBL_EPARSE, "bad.yaml:4:");
    expect_error(HEAD "kinetic_energy: \"0.5*m*sin(x, x)*der(x)^2\"\n", 0, MBL_EPARSE, "bad.yaml:4:");
    expect_error("model: dae\nparameters: {t: 1}\ncoordinates: {x: 0}\nkinetic_energy: \"der(x)^2\"\n", 0, MBL_EMODEL,
                 "'t' is reserved");
}

/* Every reserved name refused as a parameter's, a coordinate's and a variable's (names.c checks only
 * the names of a reserved first letter and length, the longest atan2's); names beside them (longer,
 * another case, another first letter) are not reserved. */
TEST(reserved_names)
{
    static const char *reserved[] = {"t",    "pi",    "der",  "sin",  "cos",  "tan", "asin", "acos", "atan", "atan2", "sinh",
                                     "cosh", "tanh",  "exp",  "log",  "sqrt", "abs", "sign", "min",  "max",  "step"};
    char text[512], expect[64];
    for (size_t r = 0; r < sizeof reserved / sizeof *reserved; r++) {
        const char *nm = reserved[r];
        snprintf(expect, sizeof expect, "'%s' is reserved and cannot name a parameter", nm);
        snprintf(text, sizeof text, "model: dae\nparameters: {m: 1, %s: 2}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n",
                 nm);
        expect_error(text, 0, MBL_EMODEL, expect);
        snprintf(expect, sizeof expect, "'%s' is reserved and cannot name a coordinate", nm);
        snprintf(text, sizeof text, "model: dae\nparameters: {m: 1}\ncoordinates: {x: 0, %s: 0}\nkinetic_energy: \"m*der(x)^2\"\n",
                 nm);
        expect_error(text, 0, MBL_EMODEL, expect);
        snprintf(expect, sizeof expect, "'%s' is reserved and cannot name a variable", nm);
        snprintf(text, sizeof text,
                 "model: dae\nparameters: {m: 1}\nvariables: {%s: \"2*m\"}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n", nm);
        expect_error(text, 0, MBL_EMODEL, expect);
    }
    static const char *free_names[] = {"atan22", "Sin", "sinx", "steps", "tt", "xsin", "der_x", "pi2", "mn"};
    for (size_t r = 0; r < sizeof free_names / sizeof *free_names; r++) {
        snprintf(text, sizeof text, "model: dae\nparameters: {m: 1, %s: 2}\ncoordinates: {x: 0}\nkinetic_energy: \"%s*m*der(x)^2\"\n",
                 free_names[r], free_names[r]);
        mbl_model *md = NULL;
        mbl_status st;
        int rc = mbl_model_load_string(text, strlen(text), "ok.yaml", NULL, 0, &md, &st);
        CHECK_MSG(rc == 0, "'%s': %s", free_names[r], st.msg);
        mbl_model_free(md);
    }
}

TEST(cycles)
{
    expect_error(HEAD "variables: {a: \"b + x\", b: \"2*a\"}\nkinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: a\n", 0,
                 MBL_EPARSE, "cycle among variables: a -> b -> a");
    expect_error("model: dae\nparameters: {m: 2*n, n: 1}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n", 0,
                 MBL_EPARSE, "bad.yaml:2:19: parameter 'n' is defined after 'm'");
    expect_error("model: dae\nparameters: {m: m + 1}\ncoordinates: {x: 0}\nkinetic_energy: \"m*der(x)^2\"\n", 0,
                 MBL_EPARSE, "parameter 'm' refers to itself");
}

TEST(physics)
{
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^4\"\n", 0, MBL_EMODEL,
                 "bad.yaml:4:18: the kinetic energy is not quadratic in the velocities");
    expect_error("model: dae\ncoordinates: {x: 0, y: 0}\nkinetic_energy: \"der(x)^2 + der(y)^2\"\n"
                 "nonholonomic: [\"der(x)*der(y)\"]\n",
                 0, MBL_EMODEL, "bad.yaml:4:17: non-holonomic constraint 1 is not linear in the velocities");
    expect_error("model: dae\ncoordinates: {x: 0, y: 0}\nkinetic_energy: \"der(x)^2 + der(y)^2\"\n"
                 "constraints: [x, y, x + y]\n",
                 0, MBL_EMODEL, "more constraints than coordinates");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: \"der(x)\"\n", 0, MBL_EMODEL,
                 "potential_energy must not depend on velocities");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nconstraints: [\"der(x)\"]\n", 0, MBL_EMODEL,
                 "constraint 1 must not depend on velocities");
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(der(x))^2\"\n", 0, MBL_EMODEL,
                 "kinetic_energy must not depend on accelerations");
}

TEST(numerics)
{
    /* no equilibrium: a constant force and no spring */
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nforces: {x: 1}\n", 1, MBL_ENOCONV, "the equilibrium");
    /* ... and the equation that nothing moves is named */
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nforces: {x: 1}\n", 1, MBL_ENOCONV,
                 "at the guess the equation of motion of coordinate 'x' is unbalanced (residual -1) and depends on no "
                 "unknown");
    /* a quarter car without its suspension spring: the body's equation (its weight) */
    expect_error("model: dae\nparameters: {ms: 300, mw: 40, ks: 0}\ncoordinates: {zs: 0, zu: 0}\n"
                 "kinetic_energy: \"ms/2*der(zs)^2 + mw/2*der(zu)^2\"\n"
                 "potential_energy: \"ks/2*(zs - zu)^2 + 100000*zu^2 + 9.81*(ms*zs + mw*zu)\"\n",
                 1, MBL_ENOCONV, "the equation of motion of coordinate 'zs' is unbalanced (residual 2943)");
    /* domain error at the initial guess: named with the subexpression */
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: \"sqrt(x - 2)\"\n", 1, MBL_EDOMAIN,
                 "sqrt");
    /* singular mass-constraint matrix: y has no mass and nothing removes it */
    expect_error("model: dae\ncoordinates: {x: 0, y: 0}\nkinetic_energy: \"der(x)^2\"\npotential_energy: \"x^2 + y^2\"\n",
                 2, MBL_ESINGULAR, "singular at this point: coordinate 'y' has no mass here (M(y, y) = 0)");
    /* the same by a mass parameter set to 0 (the quarter car's sprung mass) */
    expect_error("model: dae\nparameters: {ms: 0, mw: 40}\ncoordinates: {zs: 0, zu: 0}\n"
                 "kinetic_energy: \"ms/2*der(zs)^2 + mw/2*der(zu)^2\"\n"
                 "potential_energy: \"8000*(zs - zu)^2 + 80000*zu^2\"\n",
                 2, MBL_ESINGULAR, "coordinate 'zs' has no mass here (M(zs, zs) = 0) and no constraint holds it");
    /* every method names it, the others after their own words (M-hat, the penalty's matrix); when
     * the mass came from --set, the message says so (the file's own 0: it does not) */
    static const char *quarter_car[] = {"model: dae\nparameters: {ms: 0, mw: 40}\ncoordinates: {zs: 0, zu: 0}\n"
                                        "kinetic_energy: \"ms/2*der(zs)^2 + mw/2*der(zu)^2\"\n"
                                        "potential_energy: \"8000*(zs - zu)^2 + 80000*zu^2\"\n",
                                        "model: dae\nparameters: {ms: 300, mw: 40}\ncoordinates: {zs: 0, zu: 0}\n"
                                        "kinetic_energy: \"ms/2*der(zs)^2 + mw/2*der(zu)^2\"\n"
                                        "potential_energy: \"8000*(zs - zu)^2 + 80000*zu^2\"\n"};
    static const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor", "penalty", "fd"};
    const mbl_setting ms0 = {"ms", 0.0};
    for (int set = 0; set < 2; set++)
        for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
            mbl_model *md = NULL;
            mbl_point *pt = NULL;
            mbl_linear *lin = NULL;
            mbl_status st;
            mbl_status_clear(&st);
            mbl_lin_options opt;
            mbl_lin_options_default(&opt);
            opt.method = methods[i];
            int rc = mbl_model_load_string(quarter_car[set], strlen(quarter_car[set]), "bad.yaml", set ? &ms0 : NULL,
                                           set, &md, &st);
            if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
            if (!rc) rc = mbl_linearize(md, pt, &opt, &lin, &st);
            CHECK_MSG(rc == MBL_ESINGULAR, "%s: code %d (%s)", methods[i], rc, st.msg);
            CHECK_MSG(strstr(st.msg, "singular: coordinate 'zs' has no mass here (M(zs, zs) = 0)") != NULL ||
                          (i == 0 && strstr(st.msg, "singular at this point: coordinate 'zs' has no mass here") != NULL),
                      "%s: '%s'", methods[i], st.msg);
            const char *note = strstr(st.msg, "without inertia");
            CHECK_MSG(note && !strcmp(note, set ? "without inertia (the value comes from --set ms=0)" : "without inertia"),
                      "%s, %s: '%s'", methods[i], set ? "--set ms=0" : "ms: 0 in the file", st.msg);
            CHECK(strchr(st.msg, '\n') == NULL);
            mbl_linear_free(lin);
            mbl_point_free(pt);
            mbl_model_free(md);
        }
    /* the same where the tree's numeric structured term holds the bodies (relative coordinates,
     * planar and spatial: the entries are numbers, the subtree's masses and inertias texts) */
    static const char *tree[] = {
        "model: mechanism\nspace: planar\ncoordinates: relative\nparameters: {m1: 1, mt: 1, l: 0.5}\n"
        "ground: {markers: {top: {}}}\nbodies:\n"
        "  a: {mass: m1, inertia: m1*l^2/12, position: [0, -0.25], markers: {ua: {position: [0, 0.25]}, da: {position: [0, -0.25]}}}\n"
        "  b: {mass: mt, inertia: mt*l^2/12, position: [0, -0.75], markers: {ub: {position: [0, 0.25]}}}\n"
        "joints:\n  p1: {type: revolute, i: ua, j: top}\n  p2: {type: revolute, i: ub, j: da}\n"
        "forces:\n  w: {type: gravity, g: [0, -9.81]}\n",
        "model: mechanism\nspace: spatial\ncoordinates: relative\nparameters: {m1: 1, mt: 1, l: 0.5}\n"
        "ground: {markers: {top: {}}}\nbodies:\n"
        "  a: {mass: m1, inertia: [0.02, 0.02, 0.001], position: [0, 0, -0.25], markers: {ua: {position: [0, 0, 0.25]}, "
        "da: {position: [0, 0, -0.25]}}}\n"
        "  b: {mass: mt, inertia: [\"mt*l^2/12\", \"mt*l^2/12\", \"mt/1000\"], position: [0, 0, -0.75], "
        "markers: {ub: {position: [0, 0, 0.25]}}}\n"
        "joints:\n  p1: {type: revolute, i: ua, j: top}\n  p2: {type: revolute, i: ub, j: da}\n"
        "forces:\n  w: {type: gravity, g: [0, 0, -9.81]}\n"};
    const mbl_setting mt0 = {"mt", 0.0};
    for (int k = 0; k < 2; k++) {
        mbl_model *md = NULL;
        mbl_point *pt = NULL;
        mbl_linear *lin = NULL;
        mbl_status st;
        mbl_status_clear(&st);
        int rc = mbl_model_load_string(tree[k], strlen(tree[k]), "tree.yaml", &mt0, 1, &md, &st);
        if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
        if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
        CHECK_MSG(rc == MBL_ESINGULAR && strstr(st.msg, "coordinate 'p2_q' has no mass here") &&
                      strstr(st.msg, "without inertia (the value comes from --set mt=0)"),
                  "%s tree: code %d '%s'", k ? "spatial" : "planar", rc, st.msg);
        mbl_linear_free(lin);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    /* a two-coordinate system with two independent constraints has no motion */
    expect_error("model: dae\ncoordinates: {x: 0.1, y: 0.2}\nkinetic_energy: \"der(x)^2 + der(y)^2\"\n"
                 "constraints: [\"x - 0.1\", \"y - 0.2\"]\n",
                 2, MBL_EMODEL, "no degrees of freedom");
}

/* issue 10 item 4: undefined constants are errors where they are written, never 0 */
TEST(undefined_values)
{
    static const char *undef[] = {"0/0", "(1/0)-(1/0)", "log(0)-log(0)", "sqrt(-1)*0", "1/0", "0*exp(1000)"};
    static const char *reason[] = {"division by zero", "division by zero", "log of non-positive value 0",
                                   "sqrt of negative value -1", "division by zero", "non-finite result inf"};
    char text[512], want[160];
    for (int i = 0; i < 6; i++) {
        snprintf(text, sizeof text, "model: dae\nparameters: {m: 1, p: \"%s\"}\ncoordinates: {x: 0.1}\n"
                 "kinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: \"p*x^2\"\n", undef[i]);
        snprintf(want, sizeof want, "bad.yaml:2:24: parameter 'p' = %s is undefined (%s)", undef[i], reason[i]);
        expect_error(text, 0, MBL_EDOMAIN, want);
        snprintf(text, sizeof text, HEAD "velocities: {x: \"%s\"}\nkinetic_energy: \"0.5*m*der(x)^2\"\n", undef[i]);
        snprintf(want, sizeof want, "bad.yaml:4:18: the velocity of 'x' = %s is undefined", undef[i]);
        expect_error(text, 0, MBL_EDOMAIN, want);
        snprintf(text, sizeof text, HEAD "inputs: {u: \"%s\"}\nkinetic_energy: \"0.5*m*der(x)^2\"\n", undef[i]);
        snprintf(want, sizeof want, "bad.yaml:4:14: the value of input 'u' = %s is undefined", undef[i]);
        expect_error(text, 0, MBL_EDOMAIN, want);
        snprintf(text, sizeof text, "model: dae\ncoordinates: {x: \"%s\"}\nkinetic_energy: \"der(x)^2\"\n", undef[i]);
        snprintf(want, sizeof want, "bad.yaml:2:19: the initial value of coordinate 'x' = %s", undef[i]);
        expect_error(text, 0, MBL_EDOMAIN, want);
        /* inside an equation: the undefined part is not dropped from x^2 + ... */
        snprintf(text, sizeof text, HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\npotential_energy: \"x^2 + %s\"\n", undef[i]);
        snprintf(want, sizeof want, "bad.yaml:5:20: potential_energy = x^2 + %s is undefined", undef[i]);
        expect_error(text, 0, MBL_EDOMAIN, want);
    }
    expect_error(HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\nforces: {x: \"x/0\"}\n", 0, MBL_EDOMAIN,
                 "bad.yaml:5:14: the force on 'x' = x/0 is undefined (division by zero)");
}

/* issue 10 item 11: evaluation errors name the user's expression, its position and the
 * derivative that fails, not an expression the user never wrote */
TEST(evaluation_errors_named)
{
#define GIVEN "model: dae\nparameters: {m: 1}\ncoordinates: {x: 0, y: 0}\n" \
              "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\nlinearize: {at: given}\n"
    expect_error(GIVEN "potential_energy: \"0.001/(x^2+0) + y^2\"\n", 2, MBL_EDOMAIN,
                 "bad.yaml:6:20: division by zero in potential_energy = 0.001/(x^2+0) + y^2, while looking for the "
                 "operating point");
    expect_error(GIVEN "potential_energy: \"x^2 + y^2\"\nforces: {y: \"step(x, 0, 0, 0, 1)\"}\n", 2, MBL_EDOMAIN,
                 "bad.yaml:7:14: division by zero in the first derivative with respect to x of the force on 'y' = step(x, "
                 "0, 0, 0, 1)");
    expect_error(GIVEN "potential_energy: \"x^2 + y^2 + atan2(x, y)\"\n", 2, MBL_EDOMAIN,
                 "bad.yaml:6:20: division by zero in the first derivative with respect to x of potential_energy");
    /* only the Jacobian fails: the second derivative, named with both coordinates */
    expect_error(GIVEN "potential_energy: \"x^2 + y^2 + abs(x)^1.5\"\n", 2, MBL_EDOMAIN,
                 "division by zero in the second derivative with respect to x, x of potential_energy = x^2 + y^2 + "
                 "abs(x)^1.5");
#undef GIVEN
    /* a mechanism element: its position, not mblin's generated text */
    expect_error("model: mechanism\nspace: planar\nparameters: {m: 1}\nground:\n  markers:\n    O: {}\n"
                 "bodies:\n  b:\n    type: point\n    mass: m\n    position: [0, 0]\n    markers:\n      P: {}\n"
                 "forces:\n  push: {type: force, i: P, force: [\"1/DX(P, O)\", 0]}\n"
                 "  pull: {type: spring, i: P, j: O, stiffness: 1, length: 0}\nlinearize: {at: given}\n",
                 2, MBL_EDOMAIN, "bad.yaml:15:3: division by zero in the expression of force 'push' here (mblin's");
    /* an unknown name in a force element names the element, not mblin's variable for it */
    expect_error("model: mechanism\nspace: planar\nparameters: {m: 1}\nground:\n  markers:\n    O: {}\n"
                 "bodies:\n  b:\n    type: point\n    mass: m\n    position: [0, 0]\n    markers:\n      P: {}\n"
                 "forces:\n  pull: {type: spring, i: P, j: O, stiffness: 20*s, length: 0}\nlinearize: {at: given}\n",
                 0, MBL_EPARSE, "bad.yaml:15:8: unknown name 's' (in force 'pull')");
    expect_error("model: mechanism\nspace: planar\nparameters: {m: 1}\nground:\n  markers:\n    O: {}\n"
                 "bodies:\n  b:\n    type: point\n    mass: m\n    position: [0, 0]\n    markers:\n      P: {}\n"
                 "forces:\n  push: {type: force, i: P, force: [F*qq, 0]}\ninputs: {F: 0}\nlinearize: {at: given}\n",
                 0, MBL_EPARSE, "bad.yaml:15:6: unknown name 'qq' (in force 'push')");
}

/* issue 10 items 10 and 12: bounded readers, precise positions */
TEST(reader_limits)
{
    /* a Latin-1 byte on line 3: its own line and column, not 1:1 */
    expect_error("model: dae\ncoordinates: {x: 0.1}\nname: caf\xe9\nkinetic_energy: \"der(x)^2\"\n", 0, MBL_EPARSE,
                 "bad.yaml:3:10: the file is not valid UTF-8 (byte 0xe9");
    /* a 100,000-character name: what is wrong, where it starts */
    size_t n = 100000;
    char *text = malloc(n + 200);
    CHECK(text != NULL);
    strcpy(text, "model: dae\ncoordinates: {");
    size_t k = strlen(text);
    memset(text + k, 'a', n);
    strcpy(text + k + n, ": 0.1}\nkinetic_energy: \"der(x)^2\"\n");
    expect_error(text, 0, MBL_EPARSE, "bad.yaml:2:15: a name of 100000 characters: YAML keys are limited to 1024");
    /* 10^5 nested lists: refused at once (libyaml alone took 20 s) */
    strcpy(text, "model: dae\nname: ");
    k = strlen(text);
    memset(text + k, '[', n);
    text[k + n] = '\0';
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_error(text, 0, MBL_EPARSE, "bad.yaml:2:70: lists and mappings nested deeper than 64 levels");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_MSG(sec < 1.0, "deep nesting took %.2f s", sec);
    free(text);
    expect_error("model: dae\nname: &a x\ncoordinates: {x: *a}\n", 0, MBL_EPARSE,
                 "bad.yaml:3:18: YAML aliases (*name) are not supported");
    /* the nesting and size limits are options */
    const char *ok = "model: dae\ncoordinates: {x: 0.1}\nkinetic_energy: \"der(x)^2\"\npotential_energy: \"x^2\"\n";
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    CHECK(lo.max_file_size == MBL_MAX_FILE_SIZE && MBL_MAX_FILE_SIZE == (size_t)256 * 1024 * 1024);
    CHECK(lo.max_nesting == 64);
    mbl_model *md = NULL;
    mbl_status st;
    CHECK_EQ_INT(mbl_model_load_string_opt(ok, strlen(ok), "ok.yaml", NULL, 0, &lo, &md, &st), 0);
    mbl_model_free(md);
    lo.max_nesting = 1;
    CHECK_EQ_INT(mbl_model_load_string_opt(ok, strlen(ok), "ok.yaml", NULL, 0, &lo, &md, &st), MBL_EPARSE);
    CHECK(strstr(st.msg, "ok.yaml:2:14: lists and mappings nested deeper than 1 levels") != NULL);
    lo.max_nesting = 64;
    lo.max_file_size = 20;
    CHECK_EQ_INT(mbl_model_load_string_opt(ok, strlen(ok), "ok.yaml", NULL, 0, &lo, &md, &st), MBL_EIO);
    CHECK(strstr(st.msg, "ok.yaml: the model is larger than the limit of 20 bytes") != NULL);
    CHECK_EQ_INT(mbl_model_load_file_opt("examples/spring_pendulum.yaml", NULL, 0, &lo, &md, &st), MBL_EIO);
    CHECK(strstr(st.msg, "examples/spring_pendulum.yaml: the file has ") != NULL);
    CHECK(strstr(st.msg, "bytes, more than the limit of 20 bytes") != NULL);
    /* not regular files: at once, with what they are */
    CHECK_EQ_INT(mbl_model_load_file("examples", NULL, 0, &md, &st), MBL_EIO);
    CHECK(strstr(st.msg, "examples: is a directory, not a model file") != NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(mbl_model_load_file("/dev/zero", NULL, 0, &md, &st), MBL_EIO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(strstr(st.msg, "/dev/zero: is not a regular file") != NULL);
    sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK(sec < 1.0);
    CHECK(md == NULL);
}

TEST(settings)
{
    mbl_model *md = NULL;
    mbl_status st;
    const char *text = HEAD "kinetic_energy: \"0.5*m*der(x)^2\"\n";
    mbl_setting bad = {"mass", 3.0};
    CHECK(mbl_model_load_string(text, strlen(text), "bad.yaml", &bad, 1, &md, &st) == MBL_EARG);
    CHECK(strstr(st.msg, "no parameter 'mass'") != NULL);
    mbl_setting good = {"k", 9.0};
    CHECK(mbl_model_load_string(text, strlen(text), "bad.yaml", &good, 1, &md, &st) == 0);
    CHECK_CLOSE(mbl_model_param_value(md, 1), 9.0, 0);
    mbl_model_free(md);
    CHECK(mbl_model_load_file("no/such/file.yaml", NULL, 0, &md, &st) == MBL_EIO);
    CHECK(strstr(st.msg, "no/such/file.yaml") != NULL);
}

TEST(allocation_failures)
{
    /* every allocation of load + point + linearize failing in turn: a clean error, no leak */
    const char *text = "model: dae\nparameters: {m: 2, l: 1.5, g: 9.81}\ncoordinates: {x: 0.1, y: -1.4}\n"
                       "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
                       "constraints: [\"x^2 + y^2 - l^2\"]\nlinearize: {states: [\"atan2(x, -y)\"]}\n";
    int failures = 0, successes = 0;
    for (long n = 0; n < 100000; n++) {
        mbl_model *md = NULL;
        mbl_point *pt = NULL;
        mbl_linear *lin = NULL;
        mbl_modes *modes = NULL;
        mbl_status st;
        mbl_alloc_fail_after(n);
        int rc = mbl_model_load_string(text, strlen(text), "m.yaml", NULL, 0, &md, &st);
        if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
        if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
        if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
        mbl_alloc_fail_after(-1);
        mbl_modes_free(modes);
        mbl_linear_free(lin);
        mbl_point_free(pt);
        mbl_model_free(md);
        if (rc == 0) {
            successes++;
            break;
        }
        CHECK_MSG(rc == MBL_ENOMEM, "allocation %ld: code %d (%s)", n, rc, st.msg);
        failures++;
    }
    CHECK(successes == 1);
    CHECK(failures > 50);
}

int main(void)
{
    RUN(yaml_and_keys);
    RUN(wrong_types);
    RUN(names);
    RUN(reserved_names);
    RUN(cycles);
    RUN(physics);
    RUN(numerics);
    RUN(undefined_values);
    RUN(evaluation_errors_named);
    RUN(reader_limits);
    RUN(settings);
    RUN(allocation_failures);
    return test_summary("model errors");
}
