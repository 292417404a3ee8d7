/* Parser and printer: syntax and precedence, resolver protocol, every error class with its
 * line:col, excerpts, print formats, print-then-parse identity on random expressions, deep
 * nesting and long sums. */
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

static mblx_graph *G;

/* Resolver: bare names are symbols, except "bad" (rejected with a reason) and "nothing"
 * (unknown); der(s) of a symbol s is the symbol "s_dot"; twice(e) = 2*e. */
static int resolver(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                    const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    int *calls = ud;
    if (calls) (*calls)++;
    if (nargs < 0) {
        if (len == 3 && memcmp(name, "bad", 3) == 0) {
            snprintf(why, whylen, "'bad' is not allowed here");
            return 1;
        }
        if (len == 7 && memcmp(name, "nothing", 7) == 0) return 1;
        *out = mblx_symbol_n(g, name, len);
        return 0;
    }
    if (len == 3 && memcmp(name, "der", 3) == 0) {
        if (nargs != 1 || mblx_symbol_index(g, args[0]) < 0) {
            snprintf(why, whylen, "der() takes one coordinate");
            return 1;
        }
        char buf[128];
        snprintf(buf, sizeof buf, "%s_dot", mblx_symbol_name(g, args[0]));
        *out = mblx_symbol(g, buf);
        return 0;
    }
    if (len == 5 && memcmp(name, "twice", 5) == 0 && nargs == 1) {
        *out = mblx_scale(g, 2.0, args[0]);
        return 0;
    }
    return 1;
}

static mblx_parse_opts OPTS = {resolver, NULL, 0, 0, 0, NULL};

static mblx_id P(const char *s)
{
    mblx_id e;
    mbl_status st;
    int rc = mblx_parse(G, s, strlen(s), &OPTS, &e, &st);
    if (rc) fprintf(stderr, "parse of '%s' failed: %s\n", s, st.msg);
    return rc ? MBLX_NONE : e;
}

static mblx_id S(const char *n) { return mblx_symbol(G, n); }
static mblx_id K(double v) { return mblx_const(G, v); }

static double EV(const char *s)
{
    double v = NAN;
    mbl_status st;
    mblx_eval(G, P(s), NULL, &v, &st);
    return v;
}

TEST(numbers_and_precedence)
{
    CHECK(EV("1e-3") == 1e-3);
    CHECK(EV(".5") == 0.5);
    CHECK(EV("5.") == 5.0);
    CHECK(EV("1E+2") == 100.0);
    CHECK(EV("2.5e1") == 25.0);
    CHECK(EV("0.1") == 0.1);
    CHECK(EV("pi") == 3.14159265358979323846);
    CHECK(EV("2^3^2") == 512.0);
    CHECK(EV("-2^2") == -4.0);
    CHECK(EV("(-2)^2") == 4.0);
    CHECK(EV("2^-1") == 0.5);
    CHECK(EV("2^-1^2") == 0.5); /* 2^(-(1^2)) */
    CHECK(EV("- -3") == 3.0);
    CHECK(EV("+-+3") == -3.0);
    CHECK(EV("7-2-1") == 4.0);
    CHECK(EV("8/2/2") == 2.0);
    CHECK(EV("2*3+4*5") == 26.0);
    CHECK(EV("2*(3+4)*5") == 70.0);
    CHECK(EV("1 - 2 * -3") == 7.0);
    CHECK(EV(" \t\n 1 +\r\n 2 ") == 3.0);
    CHECK(EV("sqrt(16) + abs(-2) + sign(-3) + exp(0) + log(1)") == 6.0);
    CHECK(EV("min(3, 1, 2) + max(3, 1, 2)") == 4.0);
    CHECK(EV("atan2(0, -1)") == atan2(0.0, -1.0));
    CHECK(EV("step(0.5, 0, 1, 1, 2)") == 1.5);
    CHECK(EV("sin(0)+cos(0)+tan(0)+asin(0)+acos(1)+atan(0)+sinh(0)+cosh(0)+tanh(0)") == 2.0);
    mblx_id x = S("x"), y = S("y");
    CHECK(P("-x^2") == mblx_neg(G, mblx_powc(G, x, 2)));
    CHECK(P("x*y") == P("y * x"));
    CHECK(P("x - y") == mblx_sub(G, x, y));
    CHECK(P("x / y") == mblx_div(G, x, y));
    CHECK(P("((x))") == x);
    CHECK(P("x^y^2") == mblx_pow(G, x, mblx_powc(G, y, 2)));
    CHECK(P("a*-b") == mblx_neg(G, mblx_mul(G, S("a"), S("b"))));
}

TEST(resolver_protocol)
{
    int calls = 0;
    mblx_parse_opts o = OPTS;
    o.ud = &calls;
    mblx_id e;
    mbl_status st;
    CHECK_EQ_INT(mblx_parse(G, "q*der(q) + twice(r)", 19, &o, &e, &st), 0);
    CHECK_EQ_INT(calls, 5); /* q, q, der(q), r, twice(r) */
    mblx_id q = S("q"), qd = S("q_dot"), r = S("r");
    CHECK(e == mblx_add(G, mblx_mul(G, q, qd), mblx_scale(G, 2, r)));
    /* built-in names do not reach the resolver */
    calls = 0;
    CHECK_EQ_INT(mblx_parse(G, "sin(pi)", 7, &o, &e, &st), 0);
    CHECK_EQ_INT(calls, 0);
    /* no resolver: every name is unknown */
    CHECK_EQ_INT(mblx_parse(G, "1 + x", 5, NULL, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "1:5: unknown name 'x'") == 0);
    CHECK(e == MBLX_NONE);
    CHECK_EQ_INT(mblx_parse(G, "2*3", 3, NULL, &e, &st), 0);
    CHECK(e == K(6));
    /* text need not be NUL-terminated */
    CHECK_EQ_INT(mblx_parse(G, "x+1garbage", 3, &OPTS, &e, &st), 0);
    CHECK(e == mblx_add(G, S("x"), K(1)));
}

typedef struct errcase {
    const char *text;
    const char *msg; /* expected message (exact) */
    size_t offset;   /* expected error offset */
} errcase;

/* each text fails to parse with exactly its message and offset, one line, and no node */
static void check_errcases(const errcase *ec, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t off = 12345;
        mblx_parse_opts o = OPTS;
        o.error_offset = &off;
        mblx_id e;
        mbl_status st;
        int rc = mblx_parse(G, ec[i].text, strlen(ec[i].text), &o, &e, &st);
        CHECK_MSG(rc == MBL_EPARSE, "'%s': rc %d", ec[i].text, rc);
        CHECK_MSG(strcmp(st.msg, ec[i].msg) == 0, "'%s': got \"%s\", want \"%s\"", ec[i].text, st.msg, ec[i].msg);
        CHECK_MSG(off == ec[i].offset, "'%s': offset %zu, want %zu", ec[i].text, off, ec[i].offset);
        CHECK(e == MBLX_NONE);
        CHECK(strchr(st.msg, '\n') == NULL);
    }
}

TEST(error_classes)
{
    static const errcase ec[] = {
        {"", "1:1: empty expression", 0},
        {"   ", "1:4: empty expression", 3},
        {"(x + 1", "1:7: missing ')' for the '(' at 1:1", 6},
        {"x + 1)", "1:6: unexpected ')'", 5},
        {"sin(x", "1:6: missing ')' for the call of 'sin' at 1:1", 5},
        {"(x, y)", "1:3: expected ')' for the '(' at 1:1, found ','", 2},
        {"x + nothing", "1:5: unknown name 'nothing'", 4},
        {"foo(x)", "1:1: unknown function 'foo'", 0},
        {"2 * bad", "1:5: 'bad' is not allowed here", 4},
        {"der(x + 1)", "1:1: der() takes one coordinate", 0},
        {"sin(x, y)", "1:1: function 'sin' takes 1 argument, got 2", 0},
        {"atan2(x)", "1:1: function 'atan2' takes 2 arguments, got 1", 0},
        {"min(x)", "1:1: function 'min' takes at least 2 arguments, got 1", 0},
        {"step(x, 0, 1, 2)", "1:1: function 'step' takes 5 arguments, got 4", 0},
        {"cos()", "1:1: function 'cos' takes 1 argument, got 0", 0},
        {"x +", "1:4: expected an operand, found end of text", 3},
        {"x * / y", "1:5: expected an operand, found '/'", 4},
        {"x ^", "1:4: expected an operand, found end of text", 3},
        {"-", "1:2: expected an operand, found end of text", 1},
        {"x $ y", "1:3: unexpected '$'", 2},
        {"x # y", "1:3: unexpected '#'", 2},
        {"x y", "1:3: expected an operator, found 'y'", 2},
        {"2 3", "1:3: expected an operator, found '3'", 2},
        {"x(", "1:3: expected an operand, found end of text", 2},
        {"1e999", "1:1: number out of range '1e999'", 0},
        {"1e", "1:1: malformed number", 0},
        {"1.2.3", "1:1: malformed number", 0},
        {"3x", "1:1: malformed number", 0},
        {"x,", "1:2: unexpected ','", 1},
        {"\x01", "1:1: unexpected character 0x01", 0},
        {"x + \xc3\xa9", "1:5: unexpected character 0xc3", 4},
        {"a +\n  b *\n   ) ", "3:4: expected an operand, found ')'", 13},
    };
    check_errcases(ec, sizeof ec / sizeof ec[0]);
    /* embedded NUL */
    mblx_id e;
    mbl_status st;
    CHECK_EQ_INT(mblx_parse(G, "x\0y", 3, &OPTS, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "1:2: unexpected character 0x00") == 0);
    /* position offsets of the caller's file: line 10, column 7; second line starts at col 1 */
    mblx_parse_opts o = OPTS;
    o.line = 10;
    o.col = 7;
    CHECK_EQ_INT(mblx_parse(G, "x + )", 5, &o, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "10:11: expected an operand, found ')'") == 0);
    CHECK_EQ_INT(mblx_parse(G, "x +\n  y $", 9, &o, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "11:5: unexpected '$'") == 0);
    /* nesting depth */
    o = OPTS;
    o.max_depth = 3;
    CHECK_EQ_INT(mblx_parse(G, "(((x)))", 7, &o, &e, &st), 0);
    CHECK_EQ_INT(mblx_parse(G, "((((x))))", 9, &o, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "1:4: nesting deeper than 3 levels") == 0);
    CHECK_EQ_INT(mblx_parse(G, "sin(sin(sin(sin(x))))", 21, &o, &e, &st), MBL_EPARSE);
    CHECK(strcmp(st.msg, "1:13: nesting deeper than 3 levels") == 0);
    CHECK_EQ_INT(mblx_parse(G, "x^x^x^x^x", 9, &o, &e, &st), MBL_EPARSE);
    char deep[2 * MBLX_PARSE_DEFAULT_MAX_DEPTH + 8];
    memset(deep, '(', MBLX_PARSE_DEFAULT_MAX_DEPTH + 1);
    deep[MBLX_PARSE_DEFAULT_MAX_DEPTH + 1] = 'x';
    memset(deep + MBLX_PARSE_DEFAULT_MAX_DEPTH + 2, ')', MBLX_PARSE_DEFAULT_MAX_DEPTH + 1);
    CHECK_EQ_INT(mblx_parse(G, deep, 2 * MBLX_PARSE_DEFAULT_MAX_DEPTH + 3, &OPTS, &e, &st), MBL_EPARSE);
    CHECK(strstr(st.msg, "nesting deeper than 256 levels") != NULL);
    CHECK_EQ_INT(mblx_parse(G, deep + 1, 2 * MBLX_PARSE_DEFAULT_MAX_DEPTH + 1, &OPTS, &e, &st), 0);
    CHECK(e == S("x"));
    /* bad arguments */
    CHECK_EQ_INT(mblx_parse(NULL, "x", 1, NULL, &e, &st), MBL_EARG);
    CHECK_EQ_INT(mblx_parse(G, NULL, 1, NULL, &e, &st), MBL_EARG);
}

/* The character classes of the scanner (a table since session 26): letters, digits and '_' in
 * names, the blanks, a builtin's first letter (names that start like one), bytes above 0x7f. */
TEST(character_classes)
{
    CHECK(P("x_1a") == S("x_1a"));
    CHECK(P("_a9_") == S("_a9_"));
    CHECK(P("Z0 + z9") == mblx_add(G, S("Z0"), S("z9")));
    CHECK(P("sinh2 * cosx") == mblx_mul(G, S("sinh2"), S("cosx")));
    CHECK(P("s + t + a + e + l + m + c") ==
          mblx_sum(G, 7, (mblx_id[]){S("s"), S("t"), S("a"), S("e"), S("l"), S("m"), S("c")}));
    CHECK(P("table_x + spline2y + splines") == mblx_sum(G, 3, (mblx_id[]){S("table_x"), S("spline2y"), S("splines")}));
    CHECK(P("\t x\r\n*\n y ") == mblx_mul(G, S("x"), S("y")));
    CHECK(P("sinh(x)") == mblx_apply(G, MBLX_OP_SINH, 0.0, 1, (mblx_id[]){S("x")}));
    CHECK(P("twice(x9)") == mblx_scale(G, 2.0, S("x9")));
    CHECK(EV("2.e1 + .25 + 1e-3") == 20.251);
    static const errcase ec[] = {
        {"Sin(x)", "1:1: unknown function 'Sin'", 0},
        {"sinx(x)", "1:1: unknown function 'sinx'", 0},
        {"l(x)", "1:1: unknown function 'l'", 0},
        {"x\v+ y", "1:2: unexpected character 0x0b", 1},
        {"x +\f y", "1:4: unexpected character 0x0c", 3},
        {"x\xc3\xa9", "1:2: unexpected character 0xc3", 1},
        {"1_0", "1:1: malformed number", 0},
        {"2.e", "1:1: malformed number", 0},
        {"a9 b_", "1:4: expected an operator, found 'b_'", 3},
    };
    check_errcases(ec, sizeof ec / sizeof ec[0]);
}

TEST(excerpt)
{
    char buf[128];
    const char *t = "a +\n  b * $\nc";
    size_t n = mblx_excerpt(t, strlen(t), 10, buf, sizeof buf);
    CHECK(strcmp(buf, "    b * $\n        ^") == 0);
    CHECK_EQ_INT(n, strlen(buf));
    n = mblx_excerpt("\tx + $", 6, 5, buf, sizeof buf);
    CHECK(strcmp(buf, "  \tx + $\n  \t    ^") == 0);
    /* end of text */
    mblx_excerpt("x +", 3, 3, buf, sizeof buf);
    CHECK(strcmp(buf, "  x +\n     ^") == 0);
    /* truncation: snprintf semantics */
    char small[6];
    n = mblx_excerpt("abcdefgh", 8, 2, small, sizeof small);
    CHECK_EQ_INT(n, 2 + 8 + 1 + 2 + 2 + 1);
    CHECK(strcmp(small, "  abc") == 0);
    CHECK_EQ_INT(mblx_excerpt("abc", 3, 0, NULL, 0), 2 + 3 + 1 + 2 + 1);
}

static void CHECK_PRINT_(mblx_id e, const char *want, int line)
{
    char buf[256];
    size_t n = mblx_print(G, e, buf, sizeof buf);
    if (strcmp(buf, want) != 0 || n != strlen(want)) {
        test_checks_failed_++;
        fprintf(stderr, "%s:%d: printed \"%s\", want \"%s\"\n", __FILE__, line, buf, want);
    }
}
#define CHECK_PRINT(e, want) CHECK_PRINT_((e), (want), __LINE__)

TEST(print_formats)
{
    mblx_id x = S("x"), y = S("y"), z = S("z");
    CHECK_PRINT(mblx_diff(G, mblx_powc(G, x, 2), x), "2*x");
    CHECK_PRINT(mblx_sub(G, x, y), "x - y");
    CHECK_PRINT(mblx_sub(G, K(1), x), "1 - x");
    CHECK_PRINT(mblx_neg(G, x), "-x");
    CHECK_PRINT(mblx_sub(G, mblx_neg(G, x), K(1)), "-x - 1");
    CHECK_PRINT(mblx_sub(G, x, mblx_scale(G, 2, y)), "x - 2*y");
    CHECK_PRINT(mblx_add(G, x, K(-2)), "x - 2");
    CHECK_PRINT(mblx_div(G, x, y), "x/y");
    CHECK_PRINT(mblx_div(G, K(1), mblx_powc(G, x, 2)), "1/x^2");
    CHECK_PRINT(mblx_div(G, K(-3), x), "-3/x");
    CHECK_PRINT(mblx_div(G, x, mblx_add(G, y, z)), "x/(y + z)");
    CHECK_PRINT(mblx_mul(G, mblx_add(G, x, y), z), "z*(x + y)"); /* canonical order: handles */
    CHECK_PRINT(mblx_powc(G, mblx_add(G, x, y), 2), "(x + y)^2");
    CHECK_PRINT(mblx_pow(G, x, mblx_pow(G, y, z)), "x^y^z");
    CHECK_PRINT(mblx_pow(G, mblx_pow(G, x, y), z), "(x^y)^z");
    CHECK_PRINT(mblx_pow(G, x, mblx_neg(G, y)), "x^(-y)");
    CHECK_PRINT(mblx_pow(G, K(-2), x), "(-2)^x");
    CHECK_PRINT(mblx_neg(G, mblx_pow(G, K(2), x)), "-2^x");
    CHECK_PRINT(mblx_neg(G, mblx_add(G, x, y)), "-(x + y)");
    CHECK_PRINT(mblx_scale(G, 0.1, x), "0.1*x");
    CHECK_PRINT(K(0.1 + 0.2), "0.30000000000000004");
    CHECK_PRINT(K(1e-20), "1e-20");
    CHECK_PRINT(K(-1.5e300), "-1.5e+300");
    CHECK_PRINT(K(1.0 / 3.0), "0.3333333333333333");
    CHECK_PRINT(mblx_atan2(G, y, x), "atan2(y, x)");
    CHECK_PRINT(mblx_step(G, x, K(0), K(1), K(2), y), "step(x, 0, 1, 2, y)");
    CHECK_PRINT(mblx_sqrt(G, mblx_sub(G, x, K(2))), "sqrt(x - 2)");
    CHECK_PRINT(mblx_powc(G, x, 0.5), "x^0.5");
    CHECK_PRINT(mblx_mul(G, mblx_sin(G, x), mblx_powc(G, mblx_cos(G, y), -1)), "sin(x)/cos(y)");
    /* snprintf semantics */
    char small[4];
    size_t n = mblx_print(G, mblx_sub(G, x, y), small, sizeof small);
    CHECK_EQ_INT(n, 5);
    CHECK(strcmp(small, "x -") == 0);
    CHECK_EQ_INT(mblx_print(G, mblx_sub(G, x, y), NULL, 0), 5);
    CHECK(mblx_print(G, MBLX_NONE, small, sizeof small) == SIZE_MAX);
    CHECK(small[0] == '\0');
    mbl_status st;
    char *s = mblx_print_alloc(G, mblx_sub(G, x, y), &st);
    CHECK(s && strcmp(s, "x - y") == 0);
    mbl_free(s);
    CHECK(mblx_print_alloc(G, MBLX_NONE, &st) == NULL);
    CHECK_EQ_INT(st.code, MBL_EARG);
}

/* deterministic random numbers */
static unsigned long long rs = 0x2545F4914F6CDD1Dull;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)((rs >> 33) % n);
}

static mblx_id rand_leaf(void)
{
    static const char *names[] = {"a", "b", "c", "x1", "y_2", "theta"};
    static const double nums[] = {0.1, -2.5, 3, 1e-20, 1e20, 0.5, -1, 2, 7.25, 3.14159265358979};
    if (rnd(2)) return S(names[rnd(6)]);
    return K(nums[rnd(10)]);
}

static mblx_id rand_expr(int depth)
{
    if (depth <= 0) return rand_leaf();
    mblx_id a = rand_expr(depth - 1 - (int)rnd(2)), b = rand_expr(depth - 1 - (int)rnd(2));
    switch (rnd(30)) {
    case 0: case 1: case 2: return mblx_add(G, a, b);
    case 3: case 4: case 5: return mblx_sub(G, a, b);
    case 6: case 7: case 8: return mblx_mul(G, a, b);
    case 9: case 10: return mblx_div(G, a, b);
    case 11: return mblx_pow(G, a, b);
    case 12: return mblx_powc(G, a, (double)rnd(7) - 3.0);
    case 13: return mblx_powc(G, a, 0.5 * rnd(5) - 1.25);
    case 14: return mblx_neg(G, a);
    case 15: return mblx_scale(G, -0.5 * (1 + rnd(4)), a);
    case 16: return mblx_sin(G, a);
    case 17: return mblx_cos(G, a);
    case 18: return mblx_exp(G, a);
    case 19: return mblx_log(G, a);
    case 20: return mblx_sqrt(G, a);
    case 21: return mblx_atan2(G, a, b);
    case 22: return mblx_min(G, a, b);
    case 23: return mblx_max(G, a, b);
    case 24: return mblx_abs(G, a);
    case 25: return mblx_step(G, a, K(0), b, K(1), rand_leaf());
    case 26: return mblx_tanh(G, mblx_sign(G, a));
    case 27: return mblx_asin(G, mblx_acos(G, a));
    case 28: return mblx_diff(G, mblx_mul(G, a, b), S("a"));
    default: return mblx_sum(G, 3, (mblx_id[]){a, mblx_scale(G, -1, b), rand_leaf()});
    }
}

TEST(print_parse_roundtrip)
{
    int failures = 0;
    for (int i = 0; i < 3000; i++) {
        mblx_id e = rand_expr(1 + i % 7);
        CHECK(e != MBLX_NONE);
        mbl_status st;
        char *s = mblx_print_alloc(G, e, &st);
        CHECK(s != NULL);
        if (!s) continue;
        mblx_id back;
        int rc = mblx_parse(G, s, strlen(s), &OPTS, &back, &st);
        if ((rc != 0 || back != e) && failures++ < 5) {
            char *s2 = rc ? NULL : mblx_print_alloc(G, back, &st);
            fprintf(stderr, "roundtrip: \"%s\" -> %s \"%s\"\n", s, rc ? st.msg : "", s2 ? s2 : "");
            mbl_free(s2);
        }
        mbl_free(s);
    }
    CHECK_EQ_INT(failures, 0);
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

TEST(deep_and_long_texts)
{
    enum { N = 100000 };
    /* 1e5 nested parentheses and calls, with the depth limit raised */
    size_t cap = (size_t)N * 12 + 64, n = 0;
    char *t = malloc(cap);
    for (int i = 0; i < N; i++) t[n++] = '(';
    t[n++] = 'x';
    for (int i = 0; i < N; i++) t[n++] = ')';
    mblx_parse_opts o = OPTS;
    o.max_depth = 2 * N;
    mblx_id e;
    mbl_status st;
    CHECK_EQ_INT(mblx_parse(G, t, n, &o, &e, &st), 0);
    CHECK(e == S("x"));
    n = 0;
    for (int i = 0; i < N; i++) memcpy(t + n, "sin(", 4), n += 4;
    t[n++] = 'x';
    for (int i = 0; i < N; i++) t[n++] = ')';
    CHECK_EQ_INT(mblx_parse(G, t, n, &o, &e, &st), 0);
    mblx_id want = S("x");
    for (int i = 0; i < N; i++) want = mblx_sin(G, want);
    CHECK(e == want);
    /* print it back (1e5-deep print) and parse again */
    char *p = mblx_print_alloc(G, e, &st);
    CHECK(p && strlen(p) == n);
    mblx_id back;
    CHECK_EQ_INT(mblx_parse(G, p, strlen(p), &o, &back, &st), 0);
    CHECK(back == e);
    mbl_free(p);
    /* a right-nested power chain x^x^...^x */
    n = 0;
    for (int i = 0; i < N; i++) memcpy(t + n, "x^", 2), n += 2;
    t[n++] = '2';
    CHECK_EQ_INT(mblx_parse(G, t, n, &o, &e, &st), 0);
    /* a sum of 1e5 terms: linear time (one n-ary sum) */
    n = 0;
    for (int i = 0; i < N; i++) n += (size_t)snprintf(t + n, cap - n, "%sv%d", i ? (i % 3 ? " + " : " - ") : "", i % 50000);
    CHECK_EQ_INT(mblx_parse(G, t, n, &OPTS, &e, &st), 0);
    CHECK_EQ_INT(mblx_node_op(G, e), MBLX_OP_ADD);
    int nz = 0; /* coefficient of v_j is sign(j) + sign(j + 50000) */
    for (int j = 0; j < 50000; j++) {
        int s1 = (j == 0 || j % 3) ? 1 : -1, s2 = ((j + 50000) % 3) ? 1 : -1;
        nz += s1 + s2 != 0;
    }
    CHECK_EQ_INT(mblx_node_nargs(G, e), nz);
    free(t);
}

/* mblx_eval_text: a constant expression's value (the CLI's --set, Python's set={'k': 'pi'}) */
TEST(constant_text)
{
    mbl_status st;
    double x = -1;
    CHECK_EQ_INT(mblx_eval_text("pi/2", 4, &x, &st), 0);
    CHECK_EQ_INT(x == 1.57079632679489661923, 1); /* M_PI / 2 rounds to the same double */
    CHECK_EQ_INT(mblx_eval_text("sqrt(2)*2^-0.5", 14, &x, &st), 0);
    CHECK_CLOSE(x, 1.0, 1e-15);
    x = 7;
    CHECK_EQ_INT(mblx_eval_text("2*k", 3, &x, &st), MBL_EPARSE); /* no names */
    CHECK(strncmp(st.msg, "1:3: ", 5) == 0);
    CHECK_EQ_INT(x == 7, 1);
    CHECK_EQ_INT(mblx_eval_text("log(0)", 6, &x, &st), MBL_EDOMAIN);
    CHECK_EQ_INT(mblx_eval_text("1e308*10", 8, &x, &st), MBL_EDOMAIN);
    CHECK_EQ_INT(mblx_eval_text("", 0, &x, &st), MBL_EPARSE);
    CHECK_EQ_INT(x == 7, 1);
}

/* mblx_print_alloc_rational (issue 70, item 8): non-terminating decimals that are p/q with
 * q <= 1000 print as p/q, in parentheses as an exponent; the text parses back to the same node */
static void CHECK_PRINT_R_(mblx_id e, const char *want, int line)
{
    mbl_status st;
    char *s = mblx_print_alloc_rational(G, e, &st);
    mblx_id back = MBLX_NONE;
    int rc = s ? mblx_parse(G, s, strlen(s), &OPTS, &back, &st) : -1;
    if (!s || strcmp(s, want) != 0 || rc != 0 || back != e) {
        test_checks_failed_++;
        fprintf(stderr, "%s:%d: printed \"%s\" (parsed back: %s), want \"%s\"\n", __FILE__, line, s ? s : "(null)",
                rc ? "error" : back == e ? "same node" : "another node", want);
    }
    mbl_free(s);
}
#define CHECK_PRINT_R(e, want) CHECK_PRINT_R_((e), (want), __LINE__)

TEST(print_rational)
{
    mblx_id x = S("x"), y = S("y");
    CHECK_PRINT_R(mblx_scale(G, 1.0 / 3, x), "1/3*x");
    CHECK_PRINT(mblx_scale(G, 1.0 / 3, x), "0.3333333333333333*x"); /* mblx_print: unchanged */
    CHECK_PRINT_R(mblx_powc(G, x, 1.0 / 3), "x^(1/3)");
    CHECK_PRINT_R(mblx_powc(G, x, -2.0 / 3), "1/x^(2/3)");
    CHECK_PRINT_R(mblx_scale(G, 0.5, x), "0.5*x");                  /* a short decimal stays */
    CHECK_PRINT_R(mblx_add(G, x, K(2.0 / 3)), "x + 2/3");
    CHECK_PRINT_R(mblx_sub(G, y, mblx_scale(G, 5 * (1.0 / 7), x)), "y - 5/7*x");  /* the parser's 5/7 */
    CHECK_PRINT_R(mblx_scale(G, 5.0 / 7, x), "0.7142857142857143*x"); /* 25/35 only: not in lowest terms */
    CHECK_PRINT_R(mblx_div(G, mblx_scale(G, -1.0 / 6, x), y), "-1/6*x/y");
    CHECK_PRINT_R(K(0.1 + 0.2), "3/10");              /* the parser's 3/10 is 0.30000000000000004 */
    CHECK_PRINT_R(K(1.4142135623730951), "1.4142135623730951"); /* sqrt 2: no p/q */
    CHECK_PRINT_R(K(1.0 / 1009), "0.0009910802775024777");        /* q > 1000: decimals */
    /* random expressions with rational factors and exponents read back to the same node */
    static const double rats[] = {1.0 / 3, -2.0 / 3, 1.0 / 6, 5.0 / 7, -1.0 / 36, 22.0 / 7, 1.0 / 999};
    int failures = 0;
    for (int i = 0; i < 1000; i++) {
        mblx_id e = rand_expr(1 + i % 5);
        e = mblx_add(G, mblx_scale(G, rats[rnd(7)], e), mblx_powc(G, S("x1"), rats[rnd(7)]));
        mbl_status st;
        char *s = mblx_print_alloc_rational(G, e, &st);
        mblx_id back = MBLX_NONE;
        if (!s || mblx_parse(G, s, strlen(s), &OPTS, &back, &st) || back != e)
            if (failures++ < 5) {
                char *d1 = mblx_print_alloc(G, e, &st), *d2 = back != MBLX_NONE ? mblx_print_alloc(G, back, &st) : NULL;
                fprintf(stderr, "rational roundtrip: \"%s\" e=\"%s\" back=\"%s\"\n", s ? s : "(null)", d1, d2 ? d2 : "");
                mbl_free(d1), mbl_free(d2);
            }
        mbl_free(s);
    }
    CHECK_EQ_INT(failures, 0);
}

int main(void)
{
    G = mblx_graph_new();
    RUN(numbers_and_precedence);
    RUN(resolver_protocol);
    RUN(error_classes);
    RUN(character_classes);
    RUN(excerpt);
    RUN(print_formats);
    RUN(print_parse_roundtrip);
    RUN(print_rational);
    RUN(deep_and_long_texts);
    RUN(constant_text);
    mblx_graph_free(G);
    return test_summary("expr_parse");
}
