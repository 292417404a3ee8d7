/* A plain number's node without the parser's frames (src/expr/parse.c mblx__number_node, which
 * src/model/resolve.c calls for a value's text) against the parser it shortcuts: on generated literals (signs, leading zeros, up to 25 digits before and
 * after the point, exponents with and without signs and digits, trailing text, blanks), two graphs
 * fed the same texts, one through the short path where it applies and one through mblx_parse
 * always, give the same node for every text, the same node count after each (the graph node for
 * node) and the same value, bit for bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "expr/number_node.h"
#include "test.h"

static uint64_t rng = 88172645463325252ull;

static unsigned next(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void digits(char **o, unsigned n)
{
    int zeros = next(4) == 0; /* leading zeros now and then */
    for (unsigned i = 0; i < n; i++) *(*o)++ = (char)('0' + (zeros && i < 3 ? 0 : next(10)));
}

static void literal(char *buf)
{
    static const char *signs[] = {"", "", "", "-", "-", "+", "--", " -", "- "};
    static const char *tails[] = {"", "", "", "", "", "", " ", "x", ".", "e", "e+", "*2", "^2", ")"};
    char *o = buf;
    o += sprintf(o, "%s", signs[next(9)]);
    unsigned ni = next(4) ? next(8) : next(26), nf = next(3) ? next(18) : next(26);
    digits(&o, ni);
    if (next(4)) *o++ = '.';
    digits(&o, nf);
    if (next(3) == 0) {
        *o++ = next(2) ? 'e' : 'E';
        unsigned s = next(4);
        if (s == 1) *o++ = '-';
        if (s == 2) *o++ = '+';
        digits(&o, next(8) ? next(3) : next(6));
    }
    o += sprintf(o, "%s", tails[next(14)]);
    *o = '\0';
}

TEST(numbers_as_the_parser)
{
    mblx_graph *ga = mblx_graph_new(), *gb = mblx_graph_new();
    CHECK(ga && gb);
    if (!ga || !gb) return;
    int shortcut = 0, general = 0, bad = 0;
    char text[128];
    for (int k = 0; k < 200000 && !bad; k++) {
        literal(text);
        mblx_id a = MBLX_NONE, b = MBLX_NONE;
        mbl_status st;
        int used = mblx__number_node(ga, text, &a);
        int rca = used ? 0 : mblx_parse(ga, text, strlen(text), NULL, &a, &st);
        int rcb = mblx_parse(gb, text, strlen(text), NULL, &b, &st);
        shortcut += used, general += !used;
        double va = 0, vb = 1;
        int same = rca == rcb && a == b && mblx_node_count(ga) == mblx_node_count(gb);
        if (same && !rca) {
            int ca = mblx_is_const(ga, a, &va), cb = mblx_is_const(gb, b, &vb);
            same = ca == cb && (!ca || !memcmp(&va, &vb, sizeof va)) && (!used || ca);
        }
        if (used && rcb) same = 0; /* the short path takes no text the parser refuses */
        if (!same) {
            bad = 1;
            fprintf(stderr, "'%s': short path %d, node %u / %u, rc %d / %d, nodes %zu / %zu, %.17g / %.17g\n", text,
                    used, (unsigned)a, (unsigned)b, rca, rcb, mblx_node_count(ga), mblx_node_count(gb), va, vb);
        }
        CHECK(same);
    }
    /* both ways taken often */
    CHECK_MSG(shortcut > 20000 && general > 20000, "short path %d, general %d", shortcut, general);
    mblx_graph_free(ga);
    mblx_graph_free(gb);
}

/* the texts a model's values have, and their edges */
TEST(fixed_numbers)
{
    static const char *yes[] = {"0", "-0", "25", "-9.81", "-0.41614683654714241", "0.90929742682568171", ".5", "5.",
                                "-.5", "1e5", "1E-5", "2.5e+3", "007", "0.000", "1234567890123456789", "1e19", "1e-20"};
    static const char *no[] = {"", "-", ".", "+1", "--1", " 1", "1 ", "1e", "1e+", "1x", "1..2", "12345678901234567890",
                               "1e400", "1e-400", "e5", "-e5", "1.5.", "pi", "(1)"};
    mblx_graph *g = mblx_graph_new(), *h = mblx_graph_new();
    CHECK(g && h);
    if (!g || !h) return;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        mblx_id a = MBLX_NONE, b = MBLX_NONE;
        mbl_status st;
        CHECK_MSG(mblx__number_node(g, yes[i], &a) == 1, "'%s'", yes[i]);
        CHECK_MSG(mblx_parse(h, yes[i], strlen(yes[i]), NULL, &b, &st) == 0 && a == b, "'%s'", yes[i]);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        mblx_id a = 7;
        size_t n = mblx_node_count(g);
        CHECK_MSG(mblx__number_node(g, no[i], &a) == 0 && a == 7 && mblx_node_count(g) == n, "'%s'", no[i]);
    }
    mblx_graph_free(g);
    mblx_graph_free(h);
}

int main(void)
{
    RUN(numbers_as_the_parser);
    RUN(fixed_numbers);
    return test_summary("number_node");
}
