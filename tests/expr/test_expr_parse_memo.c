/* The parser's memo of resolved names (expr/parse.c, mblx__parse_memo): within one parse a name of
 * at most 8 characters, and a call of one symbol, goes to the resolver once; later ones take its
 * node from the memo. Two graphs parse the same texts in the same order, one with mblx_parse (every
 * name to the resolver), one with the memo: the same node and node count after each text, the
 * same messages and offsets; the resolver's calls with the memo counted against the distinct
 * names and calls of each text (computed here from the text). The resolver: a name is its symbol,
 * d(e) is e^3 (a node made at the first call, found after), u is unknown. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "expr/expr_internal.h"
#include "expr/parse_memo.h"
#include "test.h"

static long calls_name, calls_d;

static int res(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args, mblx_id *out,
               char *why, size_t whylen)
{
    (void)ud;
    if (nargs >= 0) {
        if (len != 1 || name[0] != 'd' || nargs != 1) return 1;
        calls_d++;
        *out = mblx_powc(g, args[0], 3.0);
        return 0;
    }
    if (len == 1 && name[0] == 'u') {
        snprintf(why, whylen, "u is not known here");
        return 1;
    }
    calls_name++;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

/* parse s in a (mblx_parse) and b (the memo): same outcome; the resolver's calls of b's parse in *cn, *cd */
static int both(mblx_graph *a, mblx_graph *b, const char *s, long *cn, long *cd)
{
    mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
    size_t ea = 0, eb = 0;
    mblx_id xa, xb;
    mbl_status sa, sb;
    o.error_offset = &ea;
    int ra = mblx_parse(a, s, strlen(s), &o, &xa, &sa);
    calls_name = calls_d = 0;
    o.error_offset = &eb;
    int rb = mblx__parse_memo(b, s, strlen(s), &o, &xb, &sb);
    *cn = calls_name, *cd = calls_d;
    int ok = ra == rb && xa == xb && mblx_node_count(a) == mblx_node_count(b);
    if (ra || rb) ok = ok && ea == eb && !strcmp(sa.msg, sb.msg);
    if (!ok) fprintf(stderr, "'%.60s': rc %d %d, node %u %u (%s | %s)\n", s, ra, rb, xa, xb, ra ? sa.msg : "", rb ? sb.msg : "");
    return ok;
}

TEST(names_and_calls_once_a_parse)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    static const struct {
        const char *s;
        long names, calls; /* the resolver's calls with the memo */
    } t[] = {
        {"x + x*y - x^2 + y/x", 2, 0},
        {"x + x*y - x^2 + y/x", 2, 0},        /* a new parse: asked again */
        {"d(x)^2 + d(y)*d(x) + d(x)", 2, 2},  /* d's arguments x, y; d(x), d(y) (d itself is no name) */
        {"d(x) + d(y) + x + y + d( x )", 2, 2}, /* the call of x and of y apart, the names apart */
        {"d(x + y) + d(x + y) + d(x)", 2, 3}, /* d of a sum: asked each time */
        {"abcd1 + abcd2 + abcd1 + abcde1 + abcd2", 3, 0},
        {"abcdefgh + abcdefgh + abcdefghi + abcdefghi + abcdefgj", 4, 0}, /* 9 characters: each time */
        {"a + ab + abc + abcd + a + ab + abc + abcd + b_1 + b_1", 5, 0},
        {"x*(y + (x - y)^2) + sin(x) + sin(y)", 2, 0},
        {"x + y + u", 2, 0}, /* the same message at the same offset */
        {"x + d(x, y)", 2, 0}, /* d of two arguments: refused by the resolver (x, y resolved) */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        long cn, cd;
        CHECK(both(a, b, t[i].s, &cn, &cd));
        CHECK_MSG(cn == t[i].names && cd == t[i].calls, "'%s': %ld names, %ld calls", t[i].s, cn, cd);
    }
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* 3000 names x0 .. x2999 each written three times (and d of each twice) in one text: entries
 * evicted from the memo's 4096 slots by others are asked again, never taken for another name */
TEST(many_names_one_text)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    enum { N = 3000 };
    char *s = malloc((size_t)3 * N * 24); /* 3 N terms " + x2999*d(x2999)": 17 characters at most */
    CHECK(s != NULL);
    if (!s) return;
    size_t o = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++) o += (size_t)sprintf(s + o, "%sx%d*d(x%d)", o ? " + " : "", (i * 7 + k * 11) % N, i);
    long cn, cd;
    CHECK(both(a, b, s, &cn, &cd));
    CHECK(cn >= N && cn < 6 * N && cd >= N && cd < 3 * N); /* fewer than without the memo (6 N, 3 N) */
    CHECK(both(a, b, s, &cn, &cd)); /* the same text again: the nodes found */
    free(s);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* integer powers of an atom (mblx_pow of the exponent's constant) taken from the memo when the same
 * base and exponent come again in the parse: the same node as made each time, never that of another
 * exponent or base, nor of an entry of a name in the same slot */
TEST(integer_powers_once_a_parse)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    static const char *const t[] = {
        "x^2 + x^2 + x^3 + y^2 + x^2*y^2 - x^3",
        "d(x)^2 + d(y)^2 + d(x)^2 + d(x)*d(y) + d(y)^3 + d(x)^2",
        "-x^2 + (-x)^2 + -(x^2) + x^-2 + x^ 2 + (x + y)^2 + (y + x)^2 + (x + y)^3",
        "2^2 + 2^3 + x^0 + x^1 + x^0 + 0^2 + (x - x)^2 + x^2^2 + x^2",
        "x^2 + x2^2 + x^2 + x2^3 + d(x2)^2 + x^2 + x^3^2 + (x^3)^2",
        "x^2 + y^2 + u^2", /* the same message at the same offset */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        long cn, cd;
        CHECK(both(a, b, t[i], &cn, &cd));
    }
    enum { N = 3000 }; /* 3 N names, each squared, cubed and d(.)^2 three times: entries evicted, slots shared */
    char *s = malloc((size_t)3 * N * 48);
    CHECK(s != NULL);
    if (!s) return;
    size_t o = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++)
            o += (size_t)sprintf(s + o, "%sx%d^2*x%d^3 + d(x%d)^2", o ? " + " : "", (i * 7 + k * 11) % N, i,
                                 (i * 13 + k) % N);
    long cn, cd;
    CHECK(both(a, b, s, &cn, &cd));
    /* 400 names each to the powers 2 to 17, twice, in a memo of 2^13 entries: pairs of one base and
     * two exponents, and of two bases and one exponent, meet in a slot */
    enum { M = 400 };
    o = 0;
    for (int k = 0; k < 2; k++)
        for (int e = 2; e < 18; e++)
            for (int i = 0; i < M; i++) o += (size_t)sprintf(s + o, "%sy%d^%d", o ? " + " : "", (i * 37 + k) % M, e);
    CHECK(o < 3 * N * 48 && o >> 4 > 1u << 12 && o >> 4 <= 1u << 13);
    CHECK(both(a, b, s, &cn, &cd));
    /* one base to the powers 2 to 1601, twice, in a memo of 2^12 entries: exponents of one base meet */
    o = 0;
    for (int k = 0; k < 2; k++)
        for (int e = 2; e < 1602; e++) o += (size_t)sprintf(s + o, "%sz^%d", o ? " + " : "", e);
    CHECK(o >> 4 <= 1u << 12);
    CHECK(both(a, b, s, &cn, &cd));
    free(s);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* the generations start again from 1 after the last: the memo cleared, nothing of the old ones taken */
TEST(generations_restart)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    long cn, cd;
    CHECK(both(a, b, "x + y", &cn, &cd));
    b->name_memo_gen = UINT32_MAX - 1;
    CHECK(both(a, b, "x + z", &cn, &cd) && cn == 2); /* generation UINT32_MAX */
    CHECK(both(a, b, "x + y", &cn, &cd) && cn == 2); /* 1 again: x not found from generation 1 of before */
    CHECK(b->name_memo_gen == 1);
    CHECK(both(a, b, "x + y + x", &cn, &cd) && cn == 2);
    /* the memo freed with the table (mblx_graph_drop_table) and made again, larger, by a long text */
    CHECK(mblx_graph_drop_table(a) == 0 && mblx_graph_drop_table(b) == 0 && b->name_memo == NULL);
    CHECK(both(a, b, "x + y + x^2 + x^2", &cn, &cd) && cn == 2 && b->name_memo != NULL);
    char *s = malloc(200000);
    CHECK(s != NULL);
    if (s) {
        size_t o = 0;
        for (int i = 0; i < 9000; i++) o += (size_t)sprintf(s + o, "%sw%d^2*w%d", i ? " + " : "", i % 5000, i % 4000);
        CHECK(both(a, b, s, &cn, &cd));
        /* 18,000 names, 5,000 of them distinct: 7,584 asked in 2^14 entries, 11,381 in the 2^12
         * of the short text before */
        CHECK_MSG(cn >= 5000 && cn < 8000, "%ld names asked", cn);
        free(s);
    }
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* A name whose resolver parses a text of its own with the memo (a model's variable, parsed at its
 * first use): a nested text long enough to need a larger memo makes it anew (the old one freed);
 * the outer parse then goes on without one (each name asked), never through the freed memo (it
 * did: AddressSanitizer's heap-use-after-free, and natively x and y answered from freed memory). */
static char *nested_text;
static long outer_names;

static int res_nested(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                      mblx_id *out, char *why, size_t whylen)
{
    if (nargs < 0 && len == 3 && !memcmp(name, "big", 3)) {
        mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
        mbl_status st;
        size_t n = strlen(nested_text);
        return (ud ? mblx__parse_memo(g, nested_text, n, &o, out, &st) : mblx_parse(g, nested_text, n, &o, out, &st)) != 0;
    }
    if (nargs < 0) outer_names++;
    return res(ud, g, name, len, nargs, args, out, why, whylen);
}

TEST(nested_parse_makes_the_memo_anew)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    nested_text = malloc(200000);
    CHECK(a && b && nested_text);
    if (!a || !b || !nested_text) return;
    size_t o = 0;
    for (int i = 0; i < 9000; i++) o += (size_t)sprintf(nested_text + o, "%sw%d*w%d", i ? " + " : "", i % 3000, i % 700);
    const char *outer = "x + y + x*y + big + x^2 + y^2 + x*y*z";
    mblx_parse_opts pa = {res_nested, NULL, 0, 0, 0, NULL}, pb = {res_nested, b, 0, 0, 0, NULL};
    mblx_id xa = 0, xb = 0;
    mbl_status sa, sb;
    CHECK(mblx__parse_memo(b, "x + y", 5, &pb, &xb, &sb) == 0 && b->name_memo);
    const void *memo0 = b->name_memo; /* of the fewest entries */
    CHECK(mblx_parse(a, "x + y", 5, &pa, &xa, &sa) == 0 && xa == xb);
    outer_names = 0;
    int ra = mblx_parse(a, outer, strlen(outer), &pa, &xa, &sa);
    CHECK_EQ_INT((int)outer_names, 9); /* every name but big asked (x 4, y 4, z 1) */
    outer_names = 0;
    int rb = mblx__parse_memo(b, outer, strlen(outer), &pb, &xb, &sb);
    CHECK(ra == 0 && rb == 0 && xa == xb && mblx_node_count(a) == mblx_node_count(b));
    CHECK(b->name_memo && b->name_memo != memo0); /* made anew by the nested text */
    /* x, y before big; x, y, x, y, z after it, without a memo (through the freed one: 2 + 3) */
    CHECK_EQ_INT((int)outer_names, 2 + 5);
    free(nested_text);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

int main(void)
{
    RUN(names_and_calls_once_a_parse);
    RUN(many_names_one_text);
    RUN(integer_powers_once_a_parse);
    RUN(generations_restart);
    RUN(nested_parse_makes_the_memo_anew);
    return test_summary("expr_parse_memo");
}
