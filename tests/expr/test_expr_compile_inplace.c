/* The compiler's memory-lean paths (issue 31, item 2): a bound tape (mblx_compile_bound) makes the
 * shared form's chains in its sub-DAG's own arrays instead of a copy, and the event list keeps 4
 * bytes per event and only the events that use a value or emit. Checked here: a bound tape's
 * instructions, registers and outputs are those of mblx_compile's tape of the same expressions
 * (whose sharing works on a copy), instruction for instruction; both evaluate to the values of
 * a recursive interpreter of the graph written here (no tape); a sum of 2 10^4 products is
 * accumulated as its terms come (registers far fewer than terms); the pairs' form, chosen over
 * the chains when it has fewer operations, is taken after the chains were made in place
 * (instruction count by hand); and every allocation failure of a bound compilation fails
 * cleanly, the one that succeeds giving the same tape. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "parse_fixture.h"
#include "tape_compare.h"
#include "test.h"

static mblx_graph *G;

static mblx_id P(const char *s) { return fixture_parse(G, s); }

/* The value of e at the symbol values x, by recursion over the graph's nodes (no tape). */
static double interp(mblx_id e, const double *x)
{
    int na = mblx_node_nargs(G, e);
    double v = mblx_node_value(G, e), a0 = na > 0 ? interp(mblx_node_arg(G, e, 0), x) : 0;
    switch (mblx_node_op(G, e)) {
    case MBLX_OP_CONST: return v;
    case MBLX_OP_SYMBOL: return x[mblx_symbol_index(G, e)];
    case MBLX_OP_ADD:
        for (int i = 0; i < na; i++) v += interp(mblx_node_arg(G, e, i), x);
        return v;
    case MBLX_OP_MUL:
        for (int i = 0; i < na; i++) v *= interp(mblx_node_arg(G, e, i), x);
        return v;
    case MBLX_OP_POW: return pow(a0, interp(mblx_node_arg(G, e, 1), x));
    case MBLX_OP_SIN: return sin(a0);
    case MBLX_OP_COS: return cos(a0);
    case MBLX_OP_EXP: return exp(a0);
    case MBLX_OP_LOG: return log(a0);
    case MBLX_OP_SQRT: return sqrt(a0);
    default: return NAN; /* no other operation in these expressions */
    }
}

/* The largest relative difference of t's outputs at x from interp's. */
static double max_rel_err(const mblx_tape *t, size_t n, const mblx_id *out, const double *x)
{
    double y[64], w[4096], e = 0;
    if (n > 64 || mblx_tape_work_size(t) > 4096 || mblx_tape_eval(t, x, y, w, NULL)) return INFINITY;
    for (size_t o = 0; o < n; o++) {
        double v = interp(out[o], x), d = fabs(y[o] - v) / (fabs(v) > 1 ? fabs(v) : 1);
        if (!(d <= e)) e = d;
    }
    return e;
}

static mblx_id OUT[16], O3[3];
static size_t NOUT;
static const double X[5] = {0.3, -1.1, 0.7, 1.9, -0.4}; /* symbols in order x y z a b */

static void make_graph(void)
{
    G = mblx_graph_new();
    const char *names[5] = {"x", "y", "z", "a", "b"};
    for (int k = 0; k < 5; k++) mblx_symbol(G, names[k]);
    /* x, y, z made before a, b: the products x*a*b, y*a*b, z*a*b share no prefix in the graph's
     * order, but the pair a*b */
    O3[0] = P("x*a*b"), O3[1] = P("y*a*b"), O3[2] = P("z*a*b");
    /* sums and products with common prefixes, constants (a sum of more than two terms with a
     * constant term: its NODE event emits), powers, functions, a let */
    const char *src[] = {
        "2 + x + y + z + a",
        "3*x*y*z*a*b",
        "x*y*z + x*y*a + x*y*b + 1.5",
        "sin(x)*cos(y)*a + sin(x)*cos(y)*b - sin(x)*z",
        "(x + y)^2 + (x + y)^3 + sqrt(a^2 + b^2 + 1)",
        "exp(x*y) / (1 + z^2) - log(2 + a*a)",
        "x*y + y*z + z*x + a*b + x*a*b*y",
        "7 - x - y*y*y + a*(b + x + 2)",
    };
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++) OUT[NOUT++] = P(src[i]);
    for (size_t i = 0; i < 3; i++) OUT[NOUT++] = O3[i];
}

/* bound (chains in place) against copied: the same tape, the interpreter's values */
TEST(bound_equals_copied)
{
    CHECK(mblx_symbol_count(G) == 5);
    for (size_t i = 0; i < NOUT; i++) CHECK(OUT[i] != MBLX_NONE);
    mbl_status st;
    mblx_tape *tc = mblx_compile(G, NOUT, OUT, &st), *tb = mblx_compile_bound(G, NOUT, OUT, NULL, NULL, &st);
    CHECK(tc && tb);
    if (!tc || !tb) return;
    CHECK(same_tape(tc, tb));
    CHECK(max_rel_err(tb, NOUT, OUT, X) < 1e-14);
    CHECK(max_rel_err(tc, NOUT, OUT, X) < 1e-14);
    mblx_tape_free(tc), mblx_tape_free(tb);
}

TEST(pairs_after_chains_in_place)
{
    /* the pairs' form: 5 loads, a*b once, then x*, y*, z* (9, against 11 for the chains) */
    mbl_status st;
    mblx_tape *tb = mblx_compile_bound(G, 3, O3, NULL, NULL, &st), *tc = mblx_compile(G, 3, O3, &st);
    CHECK(tb && tc);
    if (!tc || !tb) return;
    CHECK_EQ_INT((int)mblx_tape_ninstr(tb), 9);
    CHECK(same_tape(tc, tb));
    CHECK(max_rel_err(tb, 3, O3, X) < 1e-14);
    mblx_tape_free(tc), mblx_tape_free(tb);
}

/* a sum of 2 10^4 products: accumulated as its terms come; bound = copied */
TEST(wide_sum_accumulated)
{
    mbl_status st;
    {
        enum { NT = 20000 };
        mblx_id *terms = mbl_alloc_array(NT, sizeof *terms);
        CHECK(terms != NULL);
        mblx_id s[5];
        for (int k = 0; k < 5; k++) s[k] = mblx_symbol_node(G, (size_t)k);
        for (int i = 0; i < NT; i++) {
            mblx_id f[3] = {mblx_const(G, 1.0 + i), s[i % 5], mblx_sin(G, mblx_scale(G, (double)(i + 1), s[(i + 2) % 5]))};
            terms[i] = mblx_product(G, 3, f);
        }
        mblx_id sum = mblx_sum(G, NT, terms);
        mbl_free(terms);
        CHECK(sum != MBLX_NONE);
        mblx_tape *tb = mblx_compile_bound(G, 1, &sum, NULL, NULL, &st), *tc = mblx_compile(G, 1, &sum, &st);
        CHECK(tb && tc);
        if (!tc || !tb) return;
        /* the terms are accumulated as they come: the registers are the scheduler's window of
         * sines (tape_schedule.c), not one per term */
        CHECK(mblx_tape_work_size(tb) < NT / 4);
        CHECK(same_tape(tc, tb));
        double y = 0, *w = mbl_alloc_array(mblx_tape_work_size(tb), sizeof *w);
        CHECK(w && mblx_tape_eval(tb, X, &y, w, NULL) == 0);
        mbl_free(w);
        CHECK_REL(y, interp(sum, X), 1e-12);
        mblx_tape_free(tc), mblx_tape_free(tb);
    }
}

/* every allocation failure of a bound compilation (with the pairs' form) fails cleanly, and the
 * compilation that succeeds is the same tape */
TEST(allocation_failures)
{
    mbl_status st;
    mblx_tape *tc = mblx_compile(G, NOUT, OUT, &st), *tb;
    CHECK(tc != NULL);
    if (!tc) return;
    int ok = 0;
    for (long k = 0; k < 2000 && !ok; k++) {
        mbl_alloc_fail_after(k);
        tb = mblx_compile_bound(G, NOUT, OUT, NULL, NULL, &st);
        mbl_alloc_fail_after(-1);
        if (!tb) {
            CHECK(st.code == MBL_ENOMEM);
            continue;
        }
        ok = 1;
        CHECK(k > 5); /* the compilation allocates: the loop did fail it */
        CHECK(same_tape(tc, tb));
        mblx_tape_free(tb);
    }
    CHECK(ok);
    mblx_tape_free(tc);
}

int main(void)
{
    make_graph();
    RUN(bound_equals_copied);
    RUN(pairs_after_chains_in_place);
    RUN(allocation_failures);
    RUN(wide_sum_accumulated); /* last: it adds 2 10^4 terms to the graph */
    mblx_graph_free(G);
    return test_summary("expr_compile_inplace");
}
