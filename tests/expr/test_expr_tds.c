/* The total derivative's seed map (diff_memo.h): mblx__tdmemo_for gives, with its memo, the
 * memo's seeds by symbol index (seed node + 2, 1 not a seed) for every symbol of the root, and
 * the traversal's relevance test reads them (mblx__tds_any) in place of merging the node's
 * symbols with the seed set. Checked against the seeds given and against a brute-force test of
 * each node below the root (does one of its symbols have a seed?), under two seed sets in turn
 * (the second clears the memo and its map). */
#include <stdio.h>

#include "mblin/expr.h"
#include "expr/expr_internal.h"
#include "expr/diff_memo.h"
#include "test.h"

/* the map against the seeds S[0..nS) for every node from 0 to the root e */
static void check_map(mblx_graph *g, mblx_id e, const mblx__seed *S, size_t nS, const char *what)
{
    uint32_t *tds = NULL;
    uint32_t *memo = mblx__tdmemo_for(g, e, S, nS, &tds);
    CHECK_MSG(memo != NULL && tds != NULL, "%s: memo and map", what);
    if (!memo || !tds) return;
    size_t nd = 0;
    const uint32_t *d = mblx_node_deps(g, e, &nd);
    for (size_t k = 0; k < nd; k++) {
        uint32_t want = 1;
        for (size_t i = 0; i < nS; i++)
            if (S[i].sym == d[k]) want = S[i].node + 2;
        CHECK_MSG(tds[d[k]] == want, "%s: symbol %u maps to %u, not %u", what, d[k], tds[d[k]], want);
    }
    for (mblx_id v = 0; v <= e; v++) {
        size_t cnt = 0;
        const uint32_t *dv = mblx_node_deps(g, v, &cnt);
        int brute = 0, below = 1; /* the map is set for e's symbols: nodes of others skipped */
        for (size_t k = 0; k < cnt; k++) {
            int in_e = 0;
            for (size_t j = 0; j < nd; j++) in_e |= d[j] == dv[k];
            below &= in_e;
            for (size_t i = 0; i < nS; i++) brute |= S[i].sym == dv[k];
        }
        if (!below) continue;
        CHECK_MSG(mblx__tds_any(tds, dv, (uint32_t)cnt) == brute, "%s: node %u's relevance", what, v);
    }
}

TEST(tds_against_seeds)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id q0 = mblx_symbol(g, "q0"), q1 = mblx_symbol(g, "q1"), p = mblx_symbol(g, "p");
    mblx_id v0 = mblx_symbol(g, "v0"), v1 = mblx_symbol(g, "v1"), a0 = mblx_symbol(g, "a0");
    /* parts in q only, in p alone (no seed: not relevant), and mixed */
    mblx_id t[4] = {mblx_mul(g, p, q0), mblx_sin(g, mblx_mul(g, p, p)), mblx_cos(g, mblx_add(g, q1, p)), q1};
    mblx_id e = mblx_sum(g, 4, t);
    CHECK(e != MBLX_NONE);
    uint32_t s0 = (uint32_t)mblx_symbol_index(g, q0), s1 = (uint32_t)mblx_symbol_index(g, q1);
    mblx__seed S2[2] = {{s0, v0}, {s1, v1}}, S1[1] = {{s0, a0}};
    check_map(g, e, S2, 2, "q -> v");
    check_map(g, e, S1, 1, "q0 -> a0 alone"); /* q1 no seed any more: the memo starts again */
    check_map(g, e, S2, 2, "q -> v again");
    mblx_graph_free(g);
}

int main(void)
{
    RUN(tds_against_seeds);
    return test_summary("expr_tds");
}
