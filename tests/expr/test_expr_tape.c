/* Compiled tapes: values, common subexpressions computed once, register reuse, domain errors
 * with messages, independence from the graph, long sums and deep chains. */
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

static mblx_graph *G;
static mblx_id X, Y;

static int resolver(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                    const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    (void)ud, (void)args, (void)why, (void)whylen;
    if (nargs >= 0) return 1;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

static mblx_id P(const char *s)
{
    mblx_parse_opts o = {resolver, NULL, 0, 0, 0, NULL};
    mblx_id e;
    mbl_status st;
    if (mblx_parse(G, s, strlen(s), &o, &e, &st)) {
        fprintf(stderr, "parse failed: %s\n", st.msg);
        return MBLX_NONE;
    }
    return e;
}

TEST(values)
{
    double x = 0.7, y = -1.3;
    double s[2] = {x, y}, v[6], w[64];
    mblx_id out[6] = {P("x*y + sin(x)^2/y"), P("exp(-x^2)*atan2(y, x)"), P("sqrt(x)*log(1 + x^2)"),
                      P("step(x, 0, 1, 1, y) - min(x, y) + max(x, y)"), P("(x + y)^3 - x^-2 + 2^x"),
                      P("abs(y)*sign(y) + tanh(x)*cosh(y) - sinh(x)*acos(x)*asin(x/2)")};
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 6, out, &st);
    CHECK(t != NULL);
    CHECK(mblx_tape_work_size(t) <= 64);
    CHECK_EQ_INT(mblx_tape_noutputs(t), 6);
    CHECK_EQ_INT(mblx_tape_nsymbols(t), 2);
    CHECK_EQ_INT(mblx_tape_eval(t, s, v, w, &st), 0);
    double u = x;
    CHECK_REL(v[0], x * y + sin(x) * sin(x) / y, 1e-15);
    CHECK_REL(v[1], exp(-x * x) * atan2(y, x), 1e-15);
    CHECK_REL(v[2], sqrt(x) * log(1 + x * x), 1e-15);
    CHECK_REL(v[3], 1 + (y - 1) * u * u * (3 - 2 * u) - y + x, 1e-15);
    CHECK_REL(v[4], pow(x + y, 3) - 1 / (x * x) + pow(2, x), 1e-14);
    CHECK_REL(v[5], fabs(y) * -1 + tanh(x) * cosh(y) - sinh(x) * acos(x) * asin(x / 2), 1e-15);
    mblx_tape_free(t);
    mblx_tape_free(NULL);
    /* constant and symbol outputs, zero outputs */
    mblx_id o2[3] = {mblx_const(G, 2.5), Y, X};
    t = mblx_compile(G, 3, o2, &st);
    CHECK_EQ_INT(mblx_tape_eval(t, s, v, w, &st), 0);
    CHECK(v[0] == 2.5 && v[1] == y && v[2] == x);
    mblx_tape_free(t);
    t = mblx_compile(G, 0, NULL, &st);
    CHECK(t != NULL);
    CHECK_EQ_INT(mblx_tape_eval(t, NULL, NULL, w, &st), 0);
    mblx_tape_free(t);
    /* invalid output handle */
    mblx_id bad = MBLX_NONE;
    CHECK(mblx_compile(G, 1, &bad, &st) == NULL);
    CHECK_EQ_INT(st.code, MBL_EARG);
}

TEST(common_subexpressions_once)
{
    /* a costly shared subexpression used by 200 outputs is computed once */
    mblx_id s = P("sqrt(sin(x)*cos(y) + exp(x*y) + sqrt(1 + x^2)*atan(y))");
    mbl_status st;
    mblx_tape *t1 = mblx_compile(G, 1, &s, &st);
    size_t n1 = mblx_tape_ninstr(t1);
    enum { NO = 200 };
    mblx_id out[NO];
    for (int i = 0; i < NO; i++) out[i] = mblx_add(G, s, mblx_const(G, i + 1.0));
    mblx_tape *t = mblx_compile(G, NO, out, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t), n1 + NO); /* one "add constant" per output */
    double sv[2] = {0.3, 0.9}, v[NO], base, w[256];
    CHECK(mblx_tape_work_size(t) <= 256);
    CHECK_EQ_INT(mblx_tape_eval(t1, sv, &base, w, &st), 0);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    for (int i = 0; i < NO; i++) CHECK(v[i] == base + (i + 1.0));
    /* the same output listed twice is one computation */
    mblx_id twice[2] = {s, s};
    mblx_tape *t2 = mblx_compile(G, 2, twice, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t2), n1);
    mblx_tape_free(t1);
    mblx_tape_free(t2);
    mblx_tape_free(t);
    /* instruction count of a known expression: x*y + sin(x): LDS x, LDS y, MUL, SIN, ADD */
    mblx_id e = P("x*y + sin(x)");
    t = mblx_compile(G, 1, &e, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t), 5);
    mblx_tape_free(t);
}

TEST(domain_errors)
{
    static const struct {
        const char *text;
        double x;
        const char *msg;
    } cases[] = {
        {"sqrt(x - 2)", 1.75, "sqrt of negative value -0.25 in sqrt(x - 2)"},
        {"1 + log(x)", 0.0, "log of non-positive value 0 in log(x)"},
        {"log(x - 1)", 0.5, "log of non-positive value -0.5 in log(x - 1)"},
        {"asin(x)", 1.5, "asin of value 1.5 outside [-1, 1] in asin(x)"},
        {"acos(2*x)", -1, "acos of value -2 outside [-1, 1] in acos(2*x)"},
        {"y/x", 0.0, "division by zero in 1/x"},
        {"1/x^2", 0.0, "division by zero in 1/x^2"},
        {"(x - 1)^0.5", 0.5, "pow of negative base -0.5 to non-integer exponent 0.5 in (x - 1)^0.5"},
        {"x^y", -2, "pow of negative base -2 to non-integer exponent 0.5 in x^y"},
        {"exp(1000*x)", 1.0, "non-finite result inf in exp(1000*x)"},
        {"x*1e300*y*1e300", 1.0, "non-finite result inf in 1e+300*x*y*1e+300"},
    };
    mbl_status st;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mblx_id e = P(cases[i].text);
        double s[2] = {cases[i].x, 0.5}, v = 12345;
        int rc = mblx_eval(G, e, s, &v, &st);
        CHECK_MSG(rc == MBL_EDOMAIN, "%s: rc %d", cases[i].text, rc);
        CHECK_MSG(strcmp(st.msg, cases[i].msg) == 0, "%s: \"%s\"", cases[i].text, st.msg);
        CHECK(v == 12345); /* no NaN passed on */
    }
    /* a NaN hidden by a later operation is still reported: sign(sqrt(x)) */
    double s[2] = {-1, 0}, v;
    CHECK_EQ_INT(mblx_eval(G, P("sign(sqrt(x)) + 1"), s, &v, &st), MBL_EDOMAIN);
    CHECK(strstr(st.msg, "sqrt of negative value -1") != NULL);
    /* non-finite input */
    s[0] = NAN;
    CHECK_EQ_INT(mblx_eval(G, P("x + 1"), s, &v, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "non-finite value nan of symbol 'x' in x") == 0);
    /* a constant division by zero is kept by the builder and reported here */
    CHECK_EQ_INT(mblx_eval(G, P("1/0"), NULL, &v, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "division by zero in 0^-1") == 0);
    /* the tape works after its graph is gone (messages included) */
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "xx"), e = mblx_sqrt(g, x);
    mblx_tape *t = mblx_compile(g, 1, &e, &st);
    mblx_graph_free(g);
    double w[4], sv = 4;
    CHECK_EQ_INT(mblx_tape_eval(t, &sv, &v, w, &st), 0);
    CHECK(v == 2);
    sv = -4;
    CHECK_EQ_INT(mblx_tape_eval(t, &sv, &v, w, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "sqrt of negative value -4 in sqrt(xx)") == 0);
    mblx_tape_free(t);
}

TEST(long_sum_and_deep_chain)
{
    enum { N = 100000 };
    mblx_graph *g = mblx_graph_new();
    mblx_id *terms = malloc(N * sizeof *terms), *syms = malloc(N * sizeof *syms);
    double *sv = malloc(N * sizeof *sv), want = 0;
    char nm[32];
    for (int i = 0; i < N; i++) {
        snprintf(nm, sizeof nm, "q%d", i);
        syms[i] = mblx_symbol(g, nm);
        sv[i] = 0.001 * (i % 1000);
        terms[i] = mblx_mul(g, mblx_const(g, 0.5 + i % 3), mblx_cos(g, syms[i]));
        want += (0.5 + i % 3) * cos(sv[i]);
    }
    mblx_id s = mblx_sum(g, N, terms);
    mbl_status st;
    mblx_tape *t = mblx_compile(g, 1, &s, &st);
    CHECK(t != NULL);
    double *w = malloc(mblx_tape_work_size(t) * sizeof *w), v;
    CHECK(mblx_tape_work_size(t) <= 4); /* registers are reused */
    CHECK_EQ_INT(mblx_tape_eval(t, sv, &v, w, &st), 0);
    CHECK_REL(v, want, 1e-12);
    free(w);
    mblx_tape_free(t);
    /* gradient of the long sum: O(size) */
    mblx_id *gr = malloc(N * sizeof *gr);
    CHECK_EQ_INT(mblx_gradient(g, s, N, syms, gr), 0);
    CHECK(gr[7] == mblx_scale(g, -(0.5 + 7 % 3), mblx_sin(g, syms[7])));
    free(gr);
    /* deep chain: x_{k+1} = x_k + sin(x_k) * 1e-5 */
    mblx_id e = syms[0];
    for (int i = 0; i < N; i++) e = mblx_add(g, e, mblx_scale(g, 1e-5, mblx_sin(g, e)));
    t = mblx_compile(g, 1, &e, &st);
    CHECK(t != NULL);
    w = malloc(mblx_tape_work_size(t) * sizeof *w);
    CHECK(mblx_tape_work_size(t) <= 4 * MBLX_FLATTEN_MAX); /* not O(N) */
    double x = 0.5;
    for (int i = 0; i < N; i++) x = x + 1e-5 * sin(x);
    sv[0] = 0.5;
    CHECK_EQ_INT(mblx_tape_eval(t, sv, &v, w, &st), 0);
    CHECK_REL(v, x, 1e-12);
    free(w);
    mblx_tape_free(t);
    free(terms);
    free(syms);
    free(sv);
    mblx_graph_free(g);
}

int main(void)
{
    G = mblx_graph_new();
    X = mblx_symbol(G, "x");
    Y = mblx_symbol(G, "y");
    RUN(values);
    RUN(common_subexpressions_once);
    RUN(domain_errors);
    RUN(long_sum_and_deep_chain);
    mblx_graph_free(G);
    return test_summary("expr_tape");
}
