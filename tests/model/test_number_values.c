/* The coordinates' initial values written as plain numbers taken without the general load
 * (src/model/symbols.c number_value): the values and nodes the general path gives (an expression
 * of parameters, a number beside it), and a number out of range still refused with its message. */
#include <math.h>
#include <string.h>

#include "fixture.h"
#include "model/formulate.h"

TEST(plain_numbers_and_expressions)
{
    mbl_status st;
    mbl_model *md = fixture_model(NULL,
                                  "model: dae\n"
                                  "parameters: {m: 2}\n"
                                  "coordinates: {a: 1.5, b: -2, c: 1e3, d: 2*m, e: .25, f: 0, g: \"(3)\", h: 4}\n"
                                  "kinetic_energy: \"0.5*m*(der(a)^2 + der(b)^2 + der(c)^2 + der(d)^2 + der(e)^2 + "
                                  "der(f)^2 + der(g)^2 + der(h)^2)\"\n"
                                  "potential_energy: \"a^2 + b^2 + c^2 + d^2 + e^2 + f^2 + g^2 + h^2\"\n",
                                  "test.yaml", &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    if (!md) return;
    static const double want[8] = {1.5, -2.0, 1000.0, 4.0, 0.25, 0.0, 3.0, 4.0};
    CHECK_EQ_INT(md->n, 8);
    for (int i = 0; i < 8 && i < md->n; i++) {
        double v = NAN;
        CHECK_MSG(md->q0[i] == want[i], "%d: %g", i, md->q0[i]);
        /* the node of the value: the constant itself, or 2*m kept as the expression of m */
        int is_const = mblx_is_const(md->g, md->q0x[i], &v);
        CHECK_MSG(i == 3 ? !is_const : is_const && v == want[i], "%d: node %u", i, md->q0x[i]);
    }
    CHECK(md->q0x[3] != md->q0x[7]); /* 2*m (m = 2) is not the constant 4 */
    mbl_model_free(md);
    md = fixture_model(NULL,
                       "model: dae\n"
                       "parameters: {m: 1}\n"
                       "coordinates: {x: 1e999}\n"
                       "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                       "potential_energy: \"x^2\"\n",
                       "test.yaml", &st);
    CHECK(md == NULL);
    CHECK_MSG(strstr(st.msg, "test.yaml:3:") == st.msg && strstr(st.msg, "initial value of coordinate 'x'"), "%s", st.msg);
    mbl_model_free(md);
}

int main(void)
{
    RUN(plain_numbers_and_expressions);
    return test_summary("number_values");
}
