/* Which expressions can leave a function's domain (src/expr/domain.c, mblx__domain_restricted:
 * the model's domain-check tape keeps those alone). It reads the graph's nodes directly; checked
 * here against the answers written by hand for expressions of every case (sums and products of
 * terms provably >= 0 or not, sqrt of them, powers with even, odd, fractional, negative and
 * variable exponents, the functions that restrict their argument and those that do not), and
 * against the classification through the public accessors it replaced (reference() below, the
 * code compile.c had), for every node of the graph as an expression and for all of them at
 * once. */
#include <math.h>
#include <stdlib.h>

#include "expr/domain.h"
#include "mblin/expr.h"
#include "mblin/status.h"
#include "parse_fixture.h"
#include "test.h"

/* The classification as src/model/compile.c made it before (public accessors): 1 per expression
 * that can leave a domain. */
static void reference(const mblx_graph *g, size_t n, const mblx_id *x, unsigned char *out)
{
    mblx_id top = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > top) top = x[i];
    unsigned char *bad = calloc((size_t)top + 1, 1);
    for (mblx_id e = 0; e <= top; e++) {
        mblx_op op = mblx_node_op(g, e);
        size_t na;
        const mblx_id *args = mblx_node_args(g, e, &na);
        int b = 0, nonneg = 0, allnn = 1;
        mblx_id x0 = na ? args[0] : MBLX_NONE;
        for (size_t a = 0; a < na; a++) {
            if (args[a] > top || (bad[args[a]] & 1)) b = 1;
            if (args[a] > top || !(bad[args[a]] & 2)) allnn = 0;
        }
        int nn0 = x0 <= top && (bad[x0] & 2);
        double c = 0;
        switch (op) {
        case MBLX_OP_CONST: nonneg = mblx_node_value(g, e) >= 0; break;
        case MBLX_OP_ADD:
        case MBLX_OP_MUL: nonneg = allnn && mblx_node_value(g, e) >= 0; break;
        case MBLX_OP_POW:
            if (!mblx_is_const(g, args[1], &c) || c < 0 || (c != floor(c) && !nn0)) b = 1;
            nonneg = nn0 || (c == floor(c) && fmod(c, 2.0) == 0);
            break;
        case MBLX_OP_SQRT:
            if (!nn0) b = 1;
            nonneg = 1;
            break;
        case MBLX_OP_LOG:
        case MBLX_OP_ASIN:
        case MBLX_OP_ACOS:
        case MBLX_OP_TAN:
        case MBLX_OP_DATA: b = 1; break;
        case MBLX_OP_ABS:
        case MBLX_OP_EXP:
        case MBLX_OP_COSH: nonneg = 1; break;
        default: break;
        }
        bad[e] = (unsigned char)((b ? 1 : 0) | (nonneg ? 2 : 0));
    }
    for (size_t i = 0; i < n; i++) out[i] = bad[x[i]] & 1;
    free(bad);
}

static const struct {
    const char *text;
    int restricted;
} CASES[] = {
    {"x + y", 0},
    {"sin(x)*cos(y) + atan(x) + sinh(y) + tanh(x)", 0},
    {"exp(x)*x^3 - 2*y", 0},
    {"log(x)", 1},
    {"sin(log(x)) + 1", 1}, /* (an operand's restriction propagates) */
    {"asin(x)", 1},
    {"acos(y)", 1},
    {"tan(x)", 1},
    {"sqrt(x)", 1},
    {"sqrt(x^2 + y^2)", 0},
    {"sqrt(x^2 + y^4 + 1)", 0},
    {"sqrt(x^2 - y^2)", 1},
    {"sqrt(x^2 + y^2 - 1)", 1},
    {"sqrt(x^3 + 1)", 1},
    {"sqrt(2*x^2*y^2)", 0},
    {"sqrt(exp(x) + cosh(y))", 0},
    {"sqrt(abs(x))", 0},
    {"sqrt(cosh(x) - 1)", 1},
    {"1/x", 1},
    {"x/(y^2 + 1)", 1},
    {"x^-2", 1},
    {"x^0.5", 1},
    {"(x^2 + 1)^1.5", 0},
    {"abs(y)^2.5", 0},
    {"x^y", 1},
    {"2^x", 1},
    {"sqrt(sqrt(x^2 + 1))", 0},
    {"sqrt(x^2)^3", 0},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

TEST(hand_answers_and_reference)
{
    mblx_graph *g = mblx_graph_new();
    mblx_symbol(g, "x"), mblx_symbol(g, "y");
    mblx_id e[NCASES];
    unsigned char got[NCASES], ref[NCASES];
    for (int i = 0; i < NCASES; i++) CHECK((e[i] = fixture_parse(g, CASES[i].text)) != MBLX_NONE);
    CHECK(mblx__domain_restricted(g, NCASES, e, got) == 0);
    reference(g, NCASES, e, ref);
    for (int i = 0; i < NCASES; i++) {
        CHECK_MSG(got[i] == CASES[i].restricted, CASES[i].text);
        CHECK_MSG(ref[i] == CASES[i].restricted, CASES[i].text);
    }
    /* one at a time (the walk stops at the largest expression's node) */
    for (int i = 0; i < NCASES; i++) {
        unsigned char one = 9;
        CHECK(mblx__domain_restricted(g, 1, &e[i], &one) == 0);
        CHECK_MSG(one == CASES[i].restricted, CASES[i].text);
    }
    /* every node of the graph as an expression, against the accessors' classification */
    size_t n = mblx_node_count(g);
    mblx_id *all = malloc(n * sizeof *all);
    unsigned char *a = malloc(n), *b = malloc(n);
    for (size_t v = 0; v < n; v++) all[n - 1 - v] = (mblx_id)v;
    CHECK(mblx__domain_restricted(g, n, all, a) == 0);
    reference(g, n, all, b);
    size_t nbad = 0;
    for (size_t v = 0; v < n; v++) {
        CHECK(a[v] == b[v]);
        nbad += a[v];
    }
    CHECK(nbad > 10 && nbad < n); /* (both kinds among them) */
    /* not a node: refused */
    mblx_id none = (mblx_id)n;
    CHECK(mblx__domain_restricted(g, 1, &none, a) == -1);
    CHECK(mblx__domain_restricted(g, 0, NULL, NULL) == 0);
    free(all), free(a), free(b);
    mblx_graph_free(g);
}

/* Each case alone in a graph of its own (session 34: without a node where a restriction starts,
 * nothing is restricted and the pass over every node is skipped): the hand answer, and the pass
 * taken exactly for the restricted ones (in a graph where only a sqrt of what is provably >= 0 or a
 * fractional power of such a base could start one, the NONNEG bit computed on demand decides); then
 * the unrestricted cases together, without the pass, against the accessors' classification. */
TEST(alone_without_the_pass)
{
    mblx_graph *u = mblx_graph_new();
    mblx_symbol(u, "x"), mblx_symbol(u, "y");
    mblx_id e[NCASES];
    size_t nu = 0;
    for (int i = 0; i < NCASES; i++) {
        mblx_graph *g = mblx_graph_new();
        mblx_symbol(g, "x"), mblx_symbol(g, "y");
        mblx_id x = fixture_parse(g, CASES[i].text);
        unsigned char got = 9;
        size_t w0 = mblx__domain_walks();
        CHECK(x != MBLX_NONE && mblx__domain_restricted(g, 1, &x, &got) == 0);
        CHECK_MSG(got == CASES[i].restricted, CASES[i].text);
        CHECK_MSG(mblx__domain_walks() - w0 == (size_t)CASES[i].restricted, CASES[i].text);
        mblx_graph_free(g);
        if (!CASES[i].restricted) CHECK((e[nu++] = fixture_parse(u, CASES[i].text)) != MBLX_NONE);
    }
    unsigned char got[NCASES], ref[NCASES];
    size_t w0 = mblx__domain_walks();
    CHECK(nu > 10 && mblx__domain_restricted(u, nu, e, got) == 0 && mblx__domain_walks() == w0);
    reference(u, nu, e, ref);
    for (size_t i = 0; i < nu; i++) CHECK(got[i] == 0 && ref[i] == 0);
    mblx_graph_free(u);
}

int main(void)
{
    RUN(hand_answers_and_reference);
    RUN(alone_without_the_pass);
    return test_summary("expr_domain");
}
