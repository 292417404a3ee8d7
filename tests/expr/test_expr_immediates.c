/* The tape compiler's marks of the values read (src/expr/tape.c, session 33: a bit per node in the
 * events traversal instead of a last use per node, and the instruction arrays sized by the events
 * instead of a count less the constants only read as immediates). A constant read only as an
 * immediate exponent emits no instruction; one read as a register operand too, or an output,
 * emits its load. Checked by the instruction counts written by hand (a tape of mblx_compile_few
 * below FEW_SCHED_MIN instructions is in emission order, one instruction an event) and by the
 * values of every tape (mblx_compile_few, mblx_compile, mblx_compile_bound) against the
 * expressions computed here; and a sum with a constant of three operands (as many events as
 * operands: the events' bound, nodes plus operands, at its tightest for a node). */
#include <math.h>

#include "mblin/expr.h"
#include "parse_fixture.h"
#include "test.h"

static const double X = 0.7, Y = 1.3; /* symbols x, y */

static double eval1(const mblx_tape *t, size_t k)
{
    double x[2] = {X, Y}, y[8], w[256];
    if (mblx_tape_noutputs(t) > 8 || mblx_tape_work_size(t) > 256 || mblx_tape_eval(t, x, y, w, NULL)) return NAN;
    return y[k];
}

static const struct {
    const char *out[3];
    size_t nout;
    size_t nins; /* by hand: the loads, the operations */
    double val[3];
} CASES[] = {
    /* LDS x, CUBE (3 only an exponent: no load) */
    {{"x^3"}, 1, 2, {0.343}},
    /* LDS x, CUBE, LDC 3, LDS y, POW (3 an exponent and a base) */
    {{"x^3", "3^y"}, 2, 5, {0.343, 0}},
    /* LDS x, CUBE, LDC 3 (3 an exponent and an output) */
    {{"x^3", "3"}, 2, 3, {0.343, 3.0}},
    /* LDS x, POWC, LDS y, POWC, ADD (2.5 twice an exponent) */
    {{"x^2.5 + y^2.5"}, 1, 5, {0}},
    /* LDS x, LDS y, ADD, MUL, ADD, ADDC (the constant's NODE event: three events for three
     * operands); the shared forms fuse the constant into the last addition (ADD2C): one fewer */
    {{"1 + x + y + x*y"}, 1, 6, {0}},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

TEST(constants_read_as_immediates)
{
    for (int c = 0; c < NCASES; c++) {
        mblx_graph *g = mblx_graph_new();
        mblx_symbol(g, "x"), mblx_symbol(g, "y");
        mblx_id o[3];
        double want[3];
        for (size_t k = 0; k < CASES[c].nout; k++) o[k] = fixture_parse(g, CASES[c].out[k]);
        want[0] = CASES[c].val[0];
        if (c == 1) want[1] = pow(3.0, Y);
        if (c == 2) want[1] = 3.0;
        if (c == 3) want[0] = pow(X, 2.5) + pow(Y, 2.5);
        if (c == 4) want[0] = 1 + X + Y + X * Y;
        mblx_tape *t[3] = {mblx_compile_few(g, CASES[c].nout, o, 0, NULL, NULL, NULL),
                           mblx_compile(g, CASES[c].nout, o, NULL),
                           mblx_compile_bound(g, CASES[c].nout, o, NULL, NULL, NULL)};
        for (int m = 0; m < 3; m++) {
            CHECK(t[m] != NULL);
            if (!t[m]) continue;
            size_t nins = CASES[c].nins - (c == 4 && m > 0);
            CHECK_MSG(mblx_tape_ninstr(t[m]) == nins, "%s (%d): %zu instructions, %zu by hand", CASES[c].out[0], m,
                      mblx_tape_ninstr(t[m]), nins);
            for (size_t k = 0; k < CASES[c].nout; k++)
                CHECK_MSG(fabs(eval1(t[m], k) - want[k]) <= 1e-14 * fabs(want[k]), "%s output %zu", CASES[c].out[0], k);
            mblx_tape_free(t[m]);
        }
        mblx_graph_free(g);
    }
}

int main(void)
{
    RUN(constants_read_as_immediates);
    return test_summary("expr_immediates");
}
