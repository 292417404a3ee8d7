/* The parser's memo across the parses of one owner (expr/parse.c, mblx__parse_lasting): a name the
 * resolver answers with the symbol of that very name is asked once over all of the owner's parses
 * while the memo lives; any other answer once a parse, as mblx__parse_memo. Two graphs parse the
 * same texts in the same order, one with mblx_parse (every name to the resolver), one with the
 * owner's memo: the same node and node count after each text, the same messages; the resolver's
 * calls counted against the names this test knows were asked before. The resolver: a name is its
 * symbol, but v (the symbol v0, or v1 from the fourth text on: not its own, asked in each parse)
 * and u (unknown); d(e) is e^3. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "expr/expr_internal.h"
#include "expr/parse_memo.h"
#include "test.h"

static long calls_own, calls_v;
static int v_phase;

static int res(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args, mblx_id *out,
               char *why, size_t whylen)
{
    (void)ud;
    if (nargs >= 0) {
        if (len != 1 || name[0] != 'd' || nargs != 1) return 1;
        *out = mblx_powc(g, args[0], 3.0);
        return 0;
    }
    if (len == 1 && name[0] == 'u') {
        snprintf(why, whylen, "u is not known here");
        return 1;
    }
    if (len == 1 && name[0] == 'v') {
        calls_v++;
        *out = mblx_symbol(g, v_phase ? "v1" : "v0");
        return 0;
    }
    calls_own++;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

/* s parsed in a (mblx_parse) and in b (mblx__parse_lasting for owner, or mblx__parse_memo when
 * NULL): the same outcome; b's calls of the resolver in *cn (own symbols) and *cv (v) */
static int both(mblx_graph *a, mblx_graph *b, const char *s, const void *owner, long *cn, long *cv)
{
    mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
    mblx_id xa, xb;
    mbl_status sa, sb;
    int ra = mblx_parse(a, s, strlen(s), &o, &xa, &sa);
    calls_own = calls_v = 0;
    int rb = owner ? mblx__parse_lasting(b, s, strlen(s), &o, owner, &xb, &sb)
                   : mblx__parse_memo(b, s, strlen(s), &o, &xb, &sb);
    *cn = calls_own, *cv = calls_v;
    int ok = ra == rb && xa == xb && mblx_node_count(a) == mblx_node_count(b);
    if (ra || rb) ok = ok && !strcmp(sa.msg, sb.msg);
    if (!ok) fprintf(stderr, "'%.60s': rc %d %d, node %u %u (%s | %s)\n", s, ra, rb, xa, xb, ra ? sa.msg : "", rb ? sb.msg : "");
    return ok;
}

TEST(names_kept_for_the_owner)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    static int owner1, owner2;
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
        long cn, cv;
        v_phase = t[i].phase;
        CHECK(both(a, b, t[i].s, t[i].owner, &cn, &cv));
        CHECK_MSG(cn == t[i].own && cv == t[i].v, "'%s': %ld own names, %ld v asked", t[i].s, cn, cv);
    }
    /* a text that needs a larger memo: made anew, the owner's entries gone with the old one */
    char *s = malloc(200000);
    CHECK(s != NULL);
    if (s) {
        size_t o = 0;
        for (int i = 0; i < 9000; i++) o += (size_t)sprintf(s + o, "%sw%d^2*w%d", i ? " + " : "", i % 5000, i % 4000);
        long cn, cv;
        const void *memo0 = b->name_memo;
        CHECK(both(a, b, s, &owner1, &cn, &cv) && cn >= 5000 && b->name_memo != memo0);
        /* its names in a later parse: most from the memo (5,000 names and 4,000 powers in 2^14 entries) */
        o = 0;
        for (int i = 0; i < 200; i++) o += (size_t)sprintf(s + o, "%sw%d", i ? " + " : "", i * 25);
        CHECK(both(a, b, s, &owner1, &cn, &cv));
        CHECK_MSG(cn < 100, "%ld of 200 names asked after the long text", cn);
        /* the generations start again: the owner's entries go with the others */
        b->name_memo_gen = UINT32_MAX;
        CHECK(both(a, b, "x + w7", &owner1, &cn, &cv) && cn == 2);
        CHECK(both(a, b, "x + w7 + x", &owner1, &cn, &cv) && cn == 0);
        free(s);
    }
    /* the memo freed with the table: made again, no owner's entry kept */
    CHECK(mblx_graph_drop_table(a) == 0 && mblx_graph_drop_table(b) == 0 && b->name_memo == NULL);
    long cn, cv;
    CHECK(both(a, b, "x + y", &owner1, &cn, &cv) && cn == 2);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* 5,000 short texts of five names, two of them the next's too, and l in each (the four-bar's
 * constraints): about 10,003 names asked in all instead of 25,000 (the few more: entries of one text
 * taken by the next one's in a slot of 4,096), the same nodes */
TEST(chain_of_short_texts)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
    static int owner;
    long asked = 0, cn, cv;
    int ok = 1;
    for (int i = 0; i < 5000; i++) {
        char s[96];
        snprintf(s, sizeof s, "(x%d - x%d)^2 + (y%d - y%d)^2 - l^2", i + 1, i, i + 1, i);
        ok = ok && both(a, b, s, &owner, &cn, &cv);
        asked += cn;
    }
    CHECK(ok);
    CHECK_MSG(asked >= 2 * 5000 + 3 && asked < 2 * 5000 + 100, "%ld names asked", asked);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* a term's negation (mblx_neg of the term) and integer powers taken from the memo, in the parse and
 * in the owner's later ones: the same node as made each time, never that of another term; the
 * graph's node count the same after each text */
TEST(negations_and_powers_kept)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    if (!a || !b) return;
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
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            long cn, cv;
            CHECK(both(a, b, t[i], &owner, &cn, &cv));
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
            long cn, cv;
            ok = ok && both(a, b, s, &owner, &cn, &cv);
        }
    CHECK(ok);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* A name whose resolver parses a long text of its own for the same owner (a model's variable at
 * its first use): the memo made anew, larger; the outer parse goes on without one, the same nodes,
 * and the next parse of the owner takes the nested text's names from the new memo */
static char *nested_text;
static int nested_owner;

static int res_nested(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                      mblx_id *out, char *why, size_t whylen)
{
    if (nargs < 0 && len == 3 && !memcmp(name, "big", 3)) {
        mblx_parse_opts o = {res, NULL, 0, 0, 0, NULL};
        mbl_status st;
        size_t n = strlen(nested_text);
        return (ud ? mblx__parse_lasting(g, nested_text, n, &o, &nested_owner, out, &st)
                   : mblx_parse(g, nested_text, n, &o, out, &st)) != 0;
    }
    return res(ud, g, name, len, nargs, args, out, why, whylen);
}

TEST(nested_long_text)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    nested_text = malloc(200000);
    CHECK(a && b && nested_text);
    if (!a || !b || !nested_text) return;
    size_t o = 0;
    for (int i = 0; i < 9000; i++) o += (size_t)sprintf(nested_text + o, "%sw%d*w%d", i ? " + " : "", i % 3000, i % 700);
    const char *outer = "x + y + x*y + big + x^2 + y^2 - x*y*z - x^2";
    mblx_parse_opts pa = {res_nested, NULL, 0, 0, 0, NULL}, pb = {res_nested, b, 0, 0, 0, NULL};
    mblx_id xa = 0, xb = 0;
    mbl_status sa, sb;
    CHECK(mblx__parse_lasting(b, "x + y", 5, &pb, &nested_owner, &xb, &sb) == 0 && b->name_memo);
    CHECK(mblx_parse(a, "x + y", 5, &pa, &xa, &sa) == 0 && xa == xb);
    const void *memo0 = b->name_memo;
    int ra = mblx_parse(a, outer, strlen(outer), &pa, &xa, &sa);
    calls_own = 0;
    int rb = mblx__parse_lasting(b, outer, strlen(outer), &pb, &nested_owner, &xb, &sb);
    CHECK(ra == 0 && rb == 0 && xa == xb && mblx_node_count(a) == mblx_node_count(b));
    CHECK(b->name_memo && b->name_memo != memo0);
    /* the nested text's 3,000 names of its 18,000 (again when their entry of the 2^13 was taken),
     * then x, y, x, y, z after big without a memo */
    CHECK_MSG(calls_own >= 3000 + 5 && calls_own < 18000, "%ld names asked", calls_own);
    long cn, cv;
    CHECK(both(a, b, "w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8 + w9 + w10 + x", &nested_owner, &cn, &cv));
    CHECK_MSG(cn <= 6, "%ld of 11 names asked", cn); /* (w1, w4, w5, w9, w10: their entries taken by others) */
    free(nested_text);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

int main(void)
{
    RUN(names_kept_for_the_owner);
    RUN(chain_of_short_texts);
    RUN(negations_and_powers_kept);
    RUN(nested_long_text);
    return test_summary("expr_parse_lasting");
}
