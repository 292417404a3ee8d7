/* The parser's memo of resolved names (expr/parse.c, mblx__parse_memo): within one parse a name of
 * at most 8 characters, a longer one answered with its own symbol, and a call of one symbol, goes
 * to the resolver once; later ones take its node from the memo. Two graphs parse the same texts in
 * the same order, one with mblx_parse (every name to the resolver), one with the memo: the same
 * node and node count after each text, the same messages and offsets; the resolver's calls with
 * the memo counted against the distinct names and calls of each text (computed here from the
 * text). The resolver: a name is its symbol, d(e) is e^3 (a node made at the first call, found
 * after), u is unknown, v and the names of more than 8 characters starting alias_ are the symbol
 * v0 or v1 (not their own: the memo across one owner's parses, mblx__parse_lasting, asks them in
 * each parse; a longer name, in each use). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "expr/expr_internal.h"
#include "expr/parse_memo.h"
#include "expr/parse_memo_table.h"
#include "test.h"

static long calls_name, calls_d, calls_v;
static int v_phase;

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
    if ((len == 1 && name[0] == 'v') || (len > 8 && !strncmp(name, "alias_", 6))) {
        calls_v++;
        *out = mblx_symbol(g, v_phase ? "v1" : "v0");
        return 0;
    }
    calls_name++;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

/* parse s in a (mblx_parse) and b (the memo; for owner, mblx__parse_lasting, when not NULL): same
 * outcome; the resolver's calls of b's parse in *cn, *cd (and calls_v) */
static int both(mblx_graph *a, mblx_graph *b, const char *s, const void *owner, long *cn, long *cd)
{
    mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
    size_t ea = 0, eb = 0;
    mblx_id xa, xb;
    mbl_status sa, sb;
    o.error_offset = &ea;
    int ra = mblx_parse(a, s, strlen(s), &o, &xa, &sa);
    calls_name = calls_d = calls_v = 0;
    o.error_offset = &eb;
    int rb = owner ? mblx__parse_lasting(b, s, strlen(s), &o, owner, &xb, &sb)
                   : mblx__parse_memo(b, s, strlen(s), &o, &xb, &sb);
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
        {"abcdefgh + abcdefgh + abcdefghi + abcdefghi + abcdefgj", 3, 0}, /* 9 characters: its own symbol */
        {"a + ab + abc + abcd + a + ab + abc + abcd + b_1 + b_1", 5, 0},
        {"x*(y + (x - y)^2) + sin(x) + sin(y)", 2, 0},
        {"x + y + u", 2, 0}, /* the same message at the same offset */
        {"x + d(x, y)", 2, 0}, /* d of two arguments: refused by the resolver (x, y resolved) */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        long cn, cd;
        CHECK(both(a, b, t[i].s, NULL, &cn, &cd));
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
    CHECK(both(a, b, s, NULL, &cn, &cd));
    CHECK(cn >= N && cn < 6 * N && cd >= N && cd < 3 * N); /* fewer than without the memo (6 N, 3 N) */
    CHECK(both(a, b, s, NULL, &cn, &cd)); /* the same text again: the nodes found */
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
        CHECK(both(a, b, t[i], NULL, &cn, &cd));
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
    CHECK(both(a, b, s, NULL, &cn, &cd));
    /* 400 names each to the powers 2 to 17, twice, in a memo of 2^13 entries: pairs of one base and
     * two exponents, and of two bases and one exponent, meet in a slot */
    enum { M = 400 };
    o = 0;
    for (int k = 0; k < 2; k++)
        for (int e = 2; e < 18; e++)
            for (int i = 0; i < M; i++) o += (size_t)sprintf(s + o, "%sy%d^%d", o ? " + " : "", (i * 37 + k) % M, e);
    CHECK(o < 3 * N * 48 && o >> 4 > 1u << 12 && o >> 4 <= 1u << 13);
    CHECK(both(a, b, s, NULL, &cn, &cd));
    /* one base to the powers 2 to 1601, twice, in a memo of 2^12 entries: exponents of one base meet */
    o = 0;
    for (int k = 0; k < 2; k++)
        for (int e = 2; e < 1602; e++) o += (size_t)sprintf(s + o, "%sz^%d", o ? " + " : "", e);
    CHECK(o >> 4 <= 1u << 12);
    CHECK(both(a, b, s, NULL, &cn, &cd));
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
    CHECK(both(a, b, "x + y", NULL, &cn, &cd));
    b->name_memo_gen = UINT32_MAX - 1;
    CHECK(both(a, b, "x + z", NULL, &cn, &cd) && cn == 2); /* generation UINT32_MAX */
    CHECK(both(a, b, "x + y", NULL, &cn, &cd) && cn == 2); /* 1 again: x not found from generation 1 of before */
    CHECK(b->name_memo_gen == 1);
    CHECK(both(a, b, "x + y + x", NULL, &cn, &cd) && cn == 2);
    /* the memo freed with the table (mblx_graph_drop_table) and made again, larger, by a long text */
    CHECK(mblx_graph_drop_table(a) == 0 && mblx_graph_drop_table(b) == 0 && b->name_memo == NULL);
    CHECK(both(a, b, "x + y + x^2 + x^2", NULL, &cn, &cd) && cn == 2 && b->name_memo != NULL);
    char *s = malloc(200000);
    CHECK(s != NULL);
    if (s) {
        size_t o = 0;
        for (int i = 0; i < 9000; i++) o += (size_t)sprintf(s + o, "%sw%d^2*w%d", i ? " + " : "", i % 5000, i % 4000);
        CHECK(both(a, b, s, NULL, &cn, &cd));
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
static const void *nested_owner; /* the nested parse's owner (mblx__parse_lasting), or NULL (mblx__parse_memo) */

static int res_nested(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                      mblx_id *out, char *why, size_t whylen)
{
    if (nargs < 0 && len == 3 && !memcmp(name, "big", 3)) {
        mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
        mbl_status st;
        size_t n = strlen(nested_text);
        return (!ud            ? mblx_parse(g, nested_text, n, &o, out, &st)
                : nested_owner ? mblx__parse_lasting(g, nested_text, n, &o, nested_owner, out, &st)
                               : mblx__parse_memo(g, nested_text, n, &o, out, &st)) != 0;
    }
    if (nargs < 0) outer_names++;
    return res(ud, g, name, len, nargs, args, out, why, whylen);
}

/* the nested text: 9,000 products of 3,000 names (117 KB: a memo of 2^13 entries); 0 when not made */
static int nested_text_make(void)
{
    nested_text = malloc(200000);
    CHECK(nested_text != NULL);
    if (!nested_text) return 0;
    size_t o = 0;
    for (int i = 0; i < 9000; i++) o += (size_t)sprintf(nested_text + o, "%sw%d*w%d", i ? " + " : "", i % 3000, i % 700);
    return 1;
}

TEST(nested_parse_makes_the_memo_anew)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b || !nested_text_make()) return;
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

/* two new graphs (0 when not: a check failed), freed by two_graphs_free */
static int two_graphs(mblx_graph **a, mblx_graph **b)
{
    *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(*a && *b);
    if (*a && *b) return 1;
    mblx_graph_free(*a), mblx_graph_free(*b);
    return 0;
}

static void two_graphs_free(mblx_graph *a, mblx_graph *b) { mblx_graph_free(a), mblx_graph_free(b); }

/* The memo across the parses of one owner (mblx__parse_lasting): a name the resolver answers with
 * the symbol of that very name is asked once over all of the owner's parses while the memo lives;
 * any other answer once a parse, as mblx__parse_memo. */
/* the memo made by a text of the owner of 128 bytes or more (k0 + k1 + ... + k29): 1 when made */
static int memo_made(mblx_graph *a, mblx_graph *b, const void *owner)
{
    char s[256];
    size_t o = 0;
    for (int i = 0; i < 30; i++) o += (size_t)snprintf(s + o, sizeof s - o, "%sk%d", i ? " + " : "", i);
    long cn, cd;
    return o >= 128 && both(a, b, s, owner, &cn, &cd) && b->name_memo != NULL;
}

TEST(names_kept_for_the_owner)
{
    mblx_graph *a, *b;
    if (!two_graphs(&a, &b)) return;
    static int owner1, owner2;
    /* a short text makes no memo (the model's first ones, on the heap: 2 MB more peak RSS) */
    long cn, cd;
    CHECK(both(a, b, "x + y + x*y + x", &owner1, &cn, &cd) && cn == 5 && b->name_memo == NULL);
    CHECK(both(a, b, "x + y + x*y + x", &owner1, &cn, &cd) && cn == 5 && b->name_memo == NULL);
    CHECK(memo_made(a, b, &owner1));
    static const struct {
        const char *s;
        const int *owner;
        int phase;
        long own, v; /* the resolver's calls in b */
    } t[] = {
        {"x + y + x*y", &owner1, 0, 2, 0},
        {"y + z + y^2 + x^2", &owner1, 0, 1, 0},    /* z only */
        {"x + y + z + v + v*x", &owner1, 0, 0, 1},  /* v once a parse: not its own symbol */
        {"v + x + d(x)^2", &owner1, 1, 0, 1},       /* v asked again: now v1 */
        {"x + u", &owner1, 1, 0, 0},                /* the same message */
        {"p + q + p", NULL, 1, 2, 0},               /* a parse of no owner asks its names once */
        {"x + y + z + q", &owner1, 1, 1, 0},        /* q: another parse's; x, y, z still the owner's */
        {"x + y + v", &owner2, 1, 2, 1},            /* another owner: its own entries */
        {"x + y + z", &owner1, 1, 3, 0},            /* the memo's owner is owner2: owner1's entries gone */
        {"z + y^2 + x^3 + d(y)^2", &owner1, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        v_phase = t[i].phase;
        CHECK(both(a, b, t[i].s, t[i].owner, &cn, &cd));
        CHECK_MSG(cn == t[i].own && calls_v == t[i].v, "'%s': %ld own names, %ld v asked", t[i].s, cn, calls_v);
    }
    /* a text that needs a larger memo: made anew, the owner's entries gone with the old one */
    char *s = malloc(200000);
    CHECK(s != NULL);
    if (s) {
        size_t o = 0;
        for (int i = 0; i < 9000; i++) o += (size_t)sprintf(s + o, "%sw%d^2*w%d", i ? " + " : "", i % 5000, i % 4000);
        const void *memo0 = b->name_memo;
        CHECK(both(a, b, s, &owner1, &cn, &cd) && cn >= 5000 && b->name_memo != memo0);
        /* its names in a later parse: most from the memo (5,000 names and 4,000 powers in 2^14 entries) */
        o = 0;
        for (int i = 0; i < 200; i++) o += (size_t)sprintf(s + o, "%sw%d", i ? " + " : "", i * 25);
        CHECK(both(a, b, s, &owner1, &cn, &cd));
        CHECK_MSG(cn < 100, "%ld of 200 names asked after the long text", cn);
        /* the generations start again: the owner's entries go with the others */
        b->name_memo_gen = UINT32_MAX;
        CHECK(both(a, b, "x + w7", &owner1, &cn, &cd) && cn == 2);
        CHECK(both(a, b, "x + w7 + x", &owner1, &cn, &cd) && cn == 0);
        free(s);
    }
    /* the memo freed with the table: made again, no owner's entry kept */
    CHECK(mblx_graph_drop_table(a) == 0 && mblx_graph_drop_table(b) == 0 && b->name_memo == NULL);
    CHECK(memo_made(a, b, &owner1));
    CHECK(both(a, b, "x + y + x", &owner1, &cn, &cd) && cn == 2);
    two_graphs_free(a, b);
}

/* 5,000 short texts of five names, two of them the next's too, and l in each (the four-bar's
 * constraints): about 10,003 names asked in all instead of 25,000 (the few more: entries of one text
 * taken by the next one's in a slot of 4,096), the same nodes */
TEST(chain_of_short_texts)
{
    mblx_graph *a, *b;
    if (!two_graphs(&a, &b)) return;
    static int owner;
    long asked = 0, cn, cd;
    int ok = memo_made(a, b, &owner);
    for (int i = 0; i < 5000; i++) {
        char s[96];
        snprintf(s, sizeof s, "(x%d - x%d)^2 + (y%d - y%d)^2 - l^2", i + 1, i, i + 1, i);
        ok = ok && both(a, b, s, &owner, &cn, &cd);
        asked += cn;
    }
    CHECK(ok);
    CHECK_MSG(asked >= 2 * 5000 + 3 && asked < 2 * 5000 + 100, "%ld names asked", asked);
    two_graphs_free(a, b);
}

/* a term's negation (mblx_neg of the term) and integer powers taken from the memo, in the parse and
 * in the owner's later ones: the same node as made each time, never that of another term; the
 * graph's node count the same after each text */
TEST(negations_and_powers_kept)
{
    mblx_graph *a, *b;
    if (!two_graphs(&a, &b)) return;
    static int owner;
    static const char *const t[] = {
        "a - x^2 - y^2 - x^2 - (x + y) - (x + y) - 2 - 3 - 2 - x - y - x",
        "b - x^2 - 3 - (y + x) - y^3 - y^2 + x^2",
        "-x - -x - (-x) - x*y - x*y - y*x - x/y - x/y",
        "c - x^2^2 - (x^2)^2 - x^4 - 0 - 1 - -1 - x^0 - x^1",
        "d - x^2 - y^2 - u", /* the same message */
        "e - v - v^2 - v^2 + v", /* v's symbol (v1) is not its own: asked once a parse */
    };
    v_phase = 1;
    CHECK(memo_made(a, b, &owner));
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            long cn, cd;
            CHECK(both(a, b, t[i], &owner, &cn, &cd));
        }
    /* 3,000 bases, each negated, squared and its square negated three times over the texts of 20 */
    enum { N = 3000 };
    int ok = 1;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i += 20) {
            char s[1024];
            size_t o = 0;
            for (int j = i; j < i + 20; j++)
                o += (size_t)snprintf(s + o, sizeof s - o, "%s- w%d - w%d^2", j > i ? " " : "", (j * 7 + k) % N,
                                      (j * 11 + k) % N);
            long cn, cd;
            ok = ok && both(a, b, s, &owner, &cn, &cd);
        }
    CHECK(ok);
    two_graphs_free(a, b);
}

/* A name whose resolver parses a long text of its own for the same owner (a model's variable at
 * its first use): the memo made anew, larger; the outer parse goes on without one, the same nodes,
 * and the next parse of the owner takes the nested text's names from the new memo */
TEST(nested_long_text)
{
    static int owner;
    mblx_graph *a, *b;
    if (!two_graphs(&a, &b)) return;
    nested_owner = &owner;
    if (!nested_text_make()) return;
    const char *outer = "x + y + x*y + big + x^2 + y^2 - x*y*z - x^2";
    mblx_parse_opts pa = {res_nested, NULL, 0, 0, 0, NULL}, pb = {res_nested, b, 0, 0, 0, NULL};
    mblx_id xa = 0, xb = 0;
    mbl_status sa, sb;
    CHECK(memo_made(a, b, &owner) && mblx__parse_lasting(b, "x + y", 5, &pb, &owner, &xb, &sb) == 0);
    CHECK(mblx_parse(a, "x + y", 5, &pa, &xa, &sa) == 0 && xa == xb);
    const void *memo0 = b->name_memo;
    int ra = mblx_parse(a, outer, strlen(outer), &pa, &xa, &sa);
    calls_name = 0;
    int rb = mblx__parse_lasting(b, outer, strlen(outer), &pb, &owner, &xb, &sb);
    CHECK(ra == 0 && rb == 0 && xa == xb && mblx_node_count(a) == mblx_node_count(b));
    CHECK(b->name_memo && b->name_memo != memo0);
    /* the nested text's 3,000 names of its 18,000 (again when their entry of the 2^13 was taken),
     * then x, y, x, y, z after big without a memo */
    CHECK_MSG(calls_name >= 3000 + 5 && calls_name < 18000, "%ld names asked", calls_name);
    long cn, cd;
    CHECK(both(a, b, "w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8 + w9 + w10 + x", &owner, &cn, &cd));
    CHECK_MSG(cn <= 6, "%ld of 11 names asked", cn); /* (w1, w4, w5, w9, w10: their entries taken by others) */
    free(nested_text);
    nested_owner = NULL;
    two_graphs_free(a, b);
}

/* Names longer than 8 characters (a mechanism's coordinates, rear_frame_e0): kept only when the
 * resolver answers with the symbol of that very name, taken only when the name is that symbol's in
 * full: names alike in their first and last 8 bytes, in their length, or in all three, are told apart;
 * another answer (alias_...) is asked at each use; across one owner's parses as the short names */
TEST(long_names_own_symbols)
{
    mblx_graph *a, *b;
    if (!two_graphs(&a, &b)) return;
    static int owner;
    static const struct {
        const char *s;
        const int *owner;
        long own, v; /* the resolver's calls in b */
    } t[] = {
        {"rear_frame_e0 + rear_frame_e1*rear_frame_e0 - rear_frame_e2*rear_frame_e1 + rear_frame_e0^2", NULL, 3, 0},
        /* alike in their first and last 8 bytes and length: one slot, each asked when the other holds it */
        {"abcdefgh_middle1_12345678 + abcdefgh_middle2_12345678 + abcdefgh_middle1_12345678", NULL, 3, 0},
        {"abcdefgh_12345678 + abcdefgh_x12345678 + abcdefgh_12345678 + abcdefgh_x12345678", NULL, 2, 0},
        {"alias_name_1 + alias_name_1 + x + alias_name_1*alias_name_2", NULL, 1, 4},
        {"rear_frame_e0 + rear_frame_e1 + rear_frame_e3", NULL, 3, 0}, /* a new parse: asked again */
    };
    long cn, cd;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        CHECK(both(a, b, t[i].s, t[i].owner, &cn, &cd));
        CHECK_MSG(cn == t[i].own && calls_v == t[i].v, "'%s': %ld own names, %ld aliases asked", t[i].s, cn, calls_v);
    }
    /* the owner's parses: its own long names asked once over all of them, an alias at each use */
    CHECK(memo_made(a, b, &owner));
    static const struct {
        const char *s;
        long own, v;
    } u[] = {
        {"front_wheel_e0*front_wheel_e1 + front_wheel_e0 + alias_name_1", 2, 1},
        {"front_wheel_e1 + front_wheel_e0^2 + front_wheel_e2 + alias_name_1 + alias_name_1", 1, 2},
        {"front_wheel_e2 + front_wheel_e1 + front_wheel_e0 + abcdefgh_middle1_12345678", 1, 0},
        {"abcdefgh_middle2_12345678 + abcdefgh_middle1_12345678 + front_wheel_e3", 3, 0}, /* (one slot) */
    };
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        CHECK(both(a, b, u[i].s, &owner, &cn, &cd));
        CHECK_MSG(cn == u[i].own && calls_v == u[i].v, "'%s': %ld own names, %ld aliases asked", u[i].s, cn, calls_v);
    }
    two_graphs_free(a, b);
}

/* the memo's size: 2^10 entries for a graph of fewer than 512 symbols, 2^12 from 512 on, larger for a
 * long text (one entry per 16 bytes) */
TEST(memo_size_by_symbols)
{
    static const struct {
        int nsym;
        size_t len;
        unsigned bits;
    } t[] = {{0, 10, 10}, {511, 10, 10}, {512, 10, 12}, {5000, 100, 12}, {10, 16 * 1025, 11}, {10, 16 * 4097, 13}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        mblx_graph *g = mblx_graph_new();
        CHECK(g != NULL);
        if (!g) return;
        char nm[16];
        for (int k = 0; k < t[i].nsym; k++) snprintf(nm, sizeof nm, "s%d", k), mblx_symbol(g, nm);
        uint32_t gen, lasting;
        struct mblx__name_memo *m = mblx__name_memo_for(g, t[i].len, NULL, &gen, &lasting);
        CHECK(m != NULL);
        CHECK_MSG(m && m->bits == t[i].bits, "%d symbols, %zu bytes: 2^%u entries", t[i].nsym, t[i].len,
                  m ? m->bits : 0);
        mblx_graph_free(g);
    }
}

int main(void)
{
    RUN(names_and_calls_once_a_parse);
    RUN(many_names_one_text);
    RUN(integer_powers_once_a_parse);
    RUN(generations_restart);
    RUN(nested_parse_makes_the_memo_anew);
    RUN(names_kept_for_the_owner);
    RUN(chain_of_short_texts);
    RUN(negations_and_powers_kept);
    RUN(nested_long_text);
    RUN(long_names_own_symbols);
    RUN(memo_size_by_symbols);
    return test_summary("expr_parse_memo");
}
