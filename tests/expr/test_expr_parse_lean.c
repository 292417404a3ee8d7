/* The parser makes no node that it does not return (issue 31, item 2): a negated term "- a*b" is
 * made as the negated product at once (not the product, then its negation), and plain integer
 * literals are read without strtod. The nodes returned are those of the builders, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "parse_fixture.h"
#include "test.h"

static mblx_graph *G;

/* Resolver: every bare name is a symbol. */
static mblx_id P(const char *s) { return fixture_parse(G, s); }

static mblx_id S(const char *n) { return mblx_symbol(G, n); }

/* Is there a node (op, value, operands) in G already? Building it again with the builders must
 * then return it without a new node. */
static int made_before(mblx_id (*build)(void))
{
    size_t n0 = mblx_node_count(G);
    (void)build();
    return mblx_node_count(G) == n0;
}

static mblx_id positive_xyz3(void) { return mblx_product(G, 3, (mblx_id[]){mblx_const(G, 3.0), S("y"), S("z")}); }

TEST(negated_term_without_its_positive)
{
    G = mblx_graph_new();
    mblx_id x = S("x"), y = S("y"), z = S("z");
    mblx_id e = P("x - 3*y*z");
    CHECK(e != MBLX_NONE);
    /* the same node as the builders' x - (3 y z) ... */
    CHECK(e == mblx_sub(G, x, mblx_scale(G, 3.0, mblx_mul(G, y, z))));
    mblx_graph_free(G);

    /* ... and the product 3 y z itself was not made by the parse */
    G = mblx_graph_new();
    (void)S("x"), (void)S("y"), (void)S("z");
    CHECK(P("x - 3*y*z") != MBLX_NONE);
    CHECK(!made_before(positive_xyz3));
    mblx_graph_free(G);

    /* a product written positively is still there */
    G = mblx_graph_new();
    (void)S("x"), (void)S("y"), (void)S("z");
    CHECK(P("x + 3*y*z") != MBLX_NONE);
    CHECK(made_before(positive_xyz3));
    mblx_graph_free(G);
}

TEST(negated_coefficients_bit_for_bit)
{
    G = mblx_graph_new();
    mblx_id x = S("x"), y = S("y"), m = S("m");
    /* -x*y/3: coefficient -(1/3), the value of the builders' neg(x*y*(1/3)) */
    mblx_id e = P("-x*y/3");
    CHECK(mblx_node_op(G, e) == MBLX_OP_MUL);
    double want = -(1.0 / 3.0);
    CHECK(memcmp(&(double){mblx_node_value(G, e)}, &want, sizeof want) == 0);
    CHECK(e == mblx_neg(G, mblx_product(G, 3, (mblx_id[]){x, y, mblx_const(G, 1.0 / 3.0)})));
    /* a sum of negated terms with constants and a nested product (a potential energy's shape) */
    mblx_id v = P("-m*(0.7*x + 9.81*y)/2 - 0.1*x*y*m/7 + 3");
    mblx_id inner = mblx_add(G, mblx_scale(G, 0.7, x), mblx_scale(G, 9.81, y));
    mblx_id t1 = mblx_neg(G, mblx_product(G, 3, (mblx_id[]){m, inner, mblx_const(G, 0.5)}));
    mblx_id t2 = mblx_neg(G, mblx_product(G, 5, (mblx_id[]){mblx_const(G, 0.1), x, y, m, mblx_const(G, 1.0 / 7.0)}));
    CHECK(v == mblx_sum(G, 3, (mblx_id[]){t1, t2, mblx_const(G, 3.0)}));
    /* "- 0*x": zero; "- 2*3": a constant */
    CHECK(P("y - 0*x") == y);
    CHECK(P("y - 2*3") == mblx_add(G, y, mblx_const(G, -6.0)));
    mblx_graph_free(G);
}

TEST(negated_wide_product_as_before)
{
    /* a product of more than MBLX_FLATTEN_MAX factors is not flattened into a negation: made as
     * the product, then -1 times it */
    enum { NF = MBLX_FLATTEN_MAX + 6 };
    char text[NF * 8 + 16];
    size_t k = 0;
    k += (size_t)snprintf(text + k, sizeof text - k, "w - 2");
    G = mblx_graph_new();
    mblx_id f[NF + 1];
    f[0] = mblx_const(G, 2.0);
    for (int i = 0; i < NF; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "a%d", i);
        f[i + 1] = S(nm);
        k += (size_t)snprintf(text + k, sizeof text - k, "*a%d", i);
    }
    mblx_id e = P(text);
    CHECK(e != MBLX_NONE);
    mblx_id prod = mblx_product(G, NF + 1, f);
    CHECK(mblx_node_nargs(G, prod) == NF);
    CHECK(e == mblx_sub(G, S("w"), prod));
    mblx_graph_free(G);
}

TEST(integer_literals_as_strtod_reads_them)
{
    G = mblx_graph_new();
    const char *lits[] = {"0", "7", "007", "42", "1000", "123456789012345", "999999999999999",
                          "1234567890123456", "12345678901234567890", "9007199254740993", "2.5", "1e3"};
    for (size_t i = 0; i < sizeof lits / sizeof *lits; i++) {
        mblx_id e = P(lits[i]);
        double want = strtod(lits[i], NULL), got = mblx_node_value(G, e);
        CHECK_MSG(mblx_node_op(G, e) == MBLX_OP_CONST && memcmp(&got, &want, sizeof got) == 0, "literal %s: %.17g, want %.17g",
                  lits[i], got, want);
    }
    /* a literal in an expression: "(x - 12)^2" */
    mblx_id x = S("x");
    CHECK(P("(x - 12)^2") == mblx_powc(G, mblx_sub(G, x, mblx_const(G, 12.0)), 2.0));
    /* malformed numbers are still refused */
    mblx_parse_opts opts = {fixture_symbols, NULL, 0, 0, 0, NULL};
    mblx_id e;
    mbl_status st;
    CHECK(mblx_parse(G, "12a", 3, &opts, &e, &st) != 0);
    CHECK(mblx_parse(G, "1.2.3", 5, &opts, &e, &st) != 0);
    mblx_graph_free(G);
}

/* text parsed in a graph of its own whose symbols x, y, z, a, b were made first: the node and
 * the graph's node count in *n */
static mblx_id parse_fresh(const char *text, size_t *n, int max_depth, mbl_status *st)
{
    G = mblx_graph_new();
    (void)S("x"), (void)S("y"), (void)S("z"), (void)S("a"), (void)S("b");
    mblx_parse_opts o = {fixture_symbols, NULL, 0, 0, max_depth, NULL};
    mblx_id e = MBLX_NONE;
    if (mblx_parse(G, text, strlen(text), &o, &e, st)) e = MBLX_NONE;
    *n = mblx_node_count(G);
    mblx_graph_free(G);
    return e;
}

/* each text pairs[i][0] (a shortcut's) gives the node and node count of pairs[i][1] (the general path's) */
static void same_as_general(const char *(*pairs)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t n0, n1;
        mbl_status st;
        mblx_id e0 = parse_fresh(pairs[i][0], &n0, 0, &st), e1 = parse_fresh(pairs[i][1], &n1, 0, &st);
        CHECK_MSG(e0 != MBLX_NONE && e0 == e1 && n0 == n1, "'%s': node %u of %zu, '%s': node %u of %zu", pairs[i][0],
                  (unsigned)e0, n0, pairs[i][1], (unsigned)e1, n1);
    }
}

/* A power of a plain integer ("x^2") is made at once, without the power's frame: the same nodes,
 * made in the same order, as the general path gives the same exponent in parentheses ("x^(2)"),
 * negated, nested to the right, divided by, and refused at the same depth. */
TEST(integer_powers_as_the_general_path)
{
    static const char *pairs[][2] = {
        {"x^2", "x^(2)"},
        {"-x^2 + y", "-x^(2) + y"},
        {"(x - y)^2 + (a - b)^2 - z^2", "(x - y)^(2) + (a - b)^(2) - z^(2)"},
        {"a^b^2", "a^b^(2)"},
        {"x^2^3", "x^(2)^(3)"},
        {"x / y^ 3 * z", "x / y^(3) * z"},
        {"x^10 * 3^2 - y^0 + z^1", "x^(10) * 3^(2) - y^(0) + z^(1)"},
        {"-(a + b)^123456789012345 / x^4", "-(a + b)^(123456789012345) / x^(4)"},
        {"x^2.5 + y^1e1 + z^1234567890123456", "x^(2.5) + y^(1e1) + z^(1234567890123456)"},
        {"x^-2 - y^+3", "x^(-2) - y^(+3)"},
    };
    same_as_general(pairs, sizeof pairs / sizeof *pairs);
    /* one level of nesting less than the power needs: refused at the '^' as before */
    size_t n;
    mbl_status st;
    CHECK(parse_fresh("((x^2))", &n, 3, &st) != MBLX_NONE);
    CHECK(parse_fresh("((x^2))", &n, 2, &st) == MBLX_NONE);
    printf("  ((x^2)) at depth 2: %s\n", st.msg);
    CHECK(strstr(st.msg, "1:4:") && strstr(st.msg, "nesting deeper than 2 levels"));
    /* malformed exponents are still refused where they were */
    CHECK(parse_fresh("x^2a", &n, 0, &st) == MBLX_NONE);
    CHECK(strstr(st.msg, "1:3:") && strstr(st.msg, "malformed number"));
    CHECK(parse_fresh("x^2.3.4", &n, 0, &st) == MBLX_NONE);
    CHECK(strstr(st.msg, "malformed number"));
}

/* The reciprocal of the last divisor is kept for the parse ("m/6*(...)" in every term of the
 * four-bar's kinetic energy): a text against its terms parsed each on its own (without what the
 * parse kept) and summed by mblx_sum, as the parse sums them: the same node, node for node, when
 * the divisor repeats, changes and comes back (fails when the kept divisor is not compared). */
TEST(divisions_by_a_repeated_divisor)
{
    static const char *terms[] = {"x/2", "y/2", "z/3", "w/2", "x/y", "z/y", "1/y", "x/(y)", "2/3/3", "y/2/2", "w/x^2"};
    enum { NT = sizeof terms / sizeof *terms };
    char text[256] = "";
    for (size_t i = 0; i < NT; i++) strcat(strcat(text, i ? " + " : ""), terms[i]);
    size_t n0;
    mbl_status st;
    mblx_id whole = parse_fresh(text, &n0, 0, &st);
    G = mblx_graph_new();
    (void)S("x"), (void)S("y"), (void)S("z"), (void)S("a"), (void)S("b"); /* as parse_fresh */
    mblx_id t[NT];
    for (size_t i = 0; i < NT; i++) t[i] = P(terms[i]);
    mblx_id sum = mblx_sum(G, NT, t);
    CHECK_MSG(whole != MBLX_NONE && whole == sum && n0 == mblx_node_count(G), "'%s': node %u of %zu, the terms' %u of %zu",
              text, (unsigned)whole, n0, (unsigned)sum, mblx_node_count(G));
    mblx_graph_free(G);
}

/* Terms of one factor as written ("a + b") are closed without close_term's general path: each is its
 * factor, in place. Every text against the builders called as the general path calls them, each in a
 * graph of its own: the same node and node count (fails when the next term's factors join the last). */
static mblx_id built_sum_abz(void) { return mblx_sum(G, 3, (mblx_id[]){S("a"), S("b"), S("z")}); }
static mblx_id built_mixed(void)
{
    mblx_id ab = mblx_product(G, 2, (mblx_id[]){S("a"), S("b")});
    mblx_id nx = mblx_neg(G, S("x"));
    mblx_id yz = mblx_product(G, 2, (mblx_id[]){S("y"), mblx_powc(G, S("z"), -1.0)});
    return mblx_sum(G, 4, (mblx_id[]){ab, nx, S("a"), yz});
}
static mblx_id built_nested(void)
{
    mblx_id in = mblx_sum(G, 2, (mblx_id[]){S("x"), S("y")});
    mblx_id sq = mblx_pow(G, mblx_sum(G, 2, (mblx_id[]){S("a"), mblx_neg(G, S("b"))}), mblx_const(G, 2.0));
    return mblx_sum(G, 3, (mblx_id[]){in, sq, S("z")});
}

static mblx_id built_fresh(mblx_id (*build)(void), size_t *n)
{
    G = mblx_graph_new();
    (void)S("x"), (void)S("y"), (void)S("z"), (void)S("a"), (void)S("b");
    mblx_id e = build();
    *n = mblx_node_count(G);
    mblx_graph_free(G);
    return e;
}

TEST(single_factor_terms_as_the_builders)
{
    static const struct {
        const char *text;
        mblx_id (*build)(void);
    } cases[] = {
        {"a + b + z", built_sum_abz},
        {"a*b - x + a + y/z", built_mixed},
        {"(x + y) + (a - b)^2 + z", built_nested},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n0, n1;
        mbl_status st;
        mblx_id e0 = parse_fresh(cases[i].text, &n0, 0, &st), e1 = built_fresh(cases[i].build, &n1);
        CHECK_MSG(e0 != MBLX_NONE && e0 == e1 && n0 == n1, "'%s': node %u of %zu, the builders: node %u of %zu",
                  cases[i].text, (unsigned)e0, n0, (unsigned)e1, n1);
    }
}

/* A call of one name ("sin(x)", the four-bar's der(xB7)) is finished at once, without its two
 * frames: the same nodes, made in the same order, as the general path gives the name in parentheses
 * ("sin((x))"); a name made by the resolver first, an unknown function refused after its argument
 * is resolved, as before, and the call's depth checked as before. */
TEST(calls_of_one_name_as_the_general_path)
{
    static const char *pairs[][2] = {
        {"sin(x)", "sin((x))"},
        {"-cos( y )^2 + sqrt(z)/a", "-cos(( y ))^2 + sqrt((z))/a"},
        {"atan(q) * exp( w ) - tanh(q)", "atan((q)) * exp(( w )) - tanh((q))"},
        {"sin(pi) + tan(b)", "sin((pi)) + tan((b))"},
        {"abs(x)^3^2 / log(longer_name_7)", "abs((x))^3^2 / log((longer_name_7))"},
    };
    same_as_general(pairs, sizeof pairs / sizeof *pairs);
    size_t n0, n1;
    mbl_status st0, st1;
    CHECK(parse_fresh("2 + f(v)", &n0, 0, &st0) == MBLX_NONE && parse_fresh("2 + f((v))", &n1, 0, &st1) == MBLX_NONE);
    printf("  f(v): %s\n", st0.msg);
    CHECK(!strcmp(st0.msg, st1.msg) && strstr(st0.msg, "1:5: unknown function 'f'") && n0 == n1);
    CHECK(parse_fresh("sin(x)", &n0, 1, &st0) != MBLX_NONE);
    CHECK(parse_fresh("(sin(x))", &n0, 1, &st0) == MBLX_NONE);
    printf("  (sin(x)) at depth 1: %s\n", st0.msg);
    CHECK(strstr(st0.msg, "1:2:") && strstr(st0.msg, "nesting deeper than 1 levels"));
}

int main(void)
{
    RUN(negated_term_without_its_positive);
    RUN(negated_coefficients_bit_for_bit);
    RUN(negated_wide_product_as_before);
    RUN(integer_literals_as_strtod_reads_them);
    RUN(integer_powers_as_the_general_path);
    RUN(divisions_by_a_repeated_divisor);
    RUN(single_factor_terms_as_the_builders);
    RUN(calls_of_one_name_as_the_general_path);
    return test_summary("expr_parse_lean");
}
