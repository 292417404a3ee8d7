/* Dependence sets of wide nodes (issue 34, item 5): the set of a sum of many terms is the sorted
 * union without duplicates of its terms' sets, and making it costs about one step per element of
 * the terms' sets (marks), not a sort of their concatenation (n d log(n d) for n terms of d
 * symbols: 13 % of the instructions of loading the nonlinear Whipple bicycle).
 *
 * Two families of sums of K products of three distinct symbols each:
 *   dense:  the symbols of term k are x_{(k + 0, k + 1 + q, k + 3 + 2 q) mod W}, q = floor(k / W),
 *           among the first W of NS symbols (the union fills a short range: read off the marks);
 *   sparse: the symbols of term k are x_{STRIDE (k + 0, 1, 3) mod NS} (a union spread over a long
 *           range: its few distinct symbols are sorted).
 * The expected set is built here from the indices the test chose, independently of the graph.
 * wide_within: a sum whose terms' sets lie within its largest term's shares that set (tested by the
 * large set's marks, not a binary search per symbol: the relative planar chain's loading). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "mblin/expr.h"
#include "test.h"

enum { NS = 4000, K = 64, W = 24, STRIDE = 53 };

/* the sum of term k = x_a x_b x_c for k < K, its symbols from pick(); returns the node, and in
 * want[NS] the expected set (1 = member) and *read the total size of the terms' sets */
static mblx_id wide_sum(mblx_graph *g, const mblx_id *x, int dense, unsigned char *want, uint64_t *read)
{
    mblx_id t[K];
    memset(want, 0, NS);
    *read = 0;
    for (int k = 0; k < K; k++) {
        int q = k / W, off[3] = {0, 1 + q, 3 + 2 * q}, ix[3]; /* gaps 1 2 21, 2 3 19, 3 4 17: distinct triples */
        for (int j = 0; j < 3; j++) ix[j] = dense ? (k + off[j]) % W : (int)(((long)STRIDE * (k + off[j])) % NS);
        mblx_id f[3] = {x[ix[0]], x[ix[1]], x[ix[2]]};
        t[k] = mblx_product(g, 3, f);
        for (int j = 0; j < 3; j++) want[ix[j]] = 1;
        *read += 3;
    }
    return mblx_sum(g, K, t);
}

/* the node's set against want: sorted strictly, every member wanted, every wanted one a member */
static int set_matches(const mblx_graph *g, mblx_id e, const unsigned char *want)
{
    const uint32_t *d = g->deps + g->nd[e].doff;
    uint32_t cnt = g->nd[e].dcnt, nwant = 0;
    for (int s = 0; s < NS; s++) nwant += want[s];
    if (cnt != nwant) return 0;
    for (uint32_t i = 0; i < cnt; i++) {
        if (d[i] >= NS || !want[d[i]]) return 0;
        if (i && d[i] <= d[i - 1]) return 0;
    }
    return 1;
}

TEST(wide_union)
{
    mblx_graph *g = mblx_graph_new();
    static mblx_id x[NS];
    static unsigned char want[NS];
    char name[32];
    for (int s = 0; s < NS; s++) {
        snprintf(name, sizeof name, "x%d", s);
        x[s] = mblx_symbol(g, name);
    }
    for (int dense = 1; dense >= 0; dense--) {
        uint64_t read = 0, before = g->dep_union_steps;
        mblx_id e = wide_sum(g, x, dense, want, &read);
        CHECK(e != MBLX_NONE && mblx_node_op(g, e) == MBLX_OP_ADD && mblx_node_nargs(g, e) == K);
        CHECK(set_matches(g, e, want));
        uint64_t steps = g->dep_union_steps - before;
        /* marks: one step per element read, plus the range read off (dense: W) or a sort of the
         * distinct ones (sparse: about K of them); sorting the concatenation took read log2(read)
         * = 192 * 8 = 1536 here */
        int nwant = 0;
        for (int s = 0; s < NS; s++) nwant += want[s];
        double bound = dense ? (double)read + W : (double)read + nwant * ceil(log2((double)nwant));
        printf("%s: %llu union steps for %llu elements read (bound %.0f)\n", dense ? "dense" : "sparse",
               (unsigned long long)steps, (unsigned long long)read, bound);
        CHECK(steps > 0 && (double)steps <= bound);
        /* the set answers membership as the expected one does */
        int ok = 1;
        for (int s = 0; s < NS && ok; s++) ok = mblx__dep_has(g, e, (uint32_t)s) == want[s];
        CHECK(ok);
    }
    mblx_graph_free(g);
}

/* A sum of many terms, one of D symbols and the others of three of those: its set is the large
 * term's, shared (the same place in the pool), found by the large term's marks; one term more with
 * a symbol outside it makes a new union of D + 1. The members are checked from the indices chosen
 * here. */
TEST(wide_within)
{
    enum { D = 40, T = 30 };
    mblx_graph *g = mblx_graph_new();
    mblx_id x[D + 1], f[D], t[T + 1];
    char name[32];
    for (int s = 0; s <= D; s++) {
        snprintf(name, sizeof name, "y%d", s);
        x[s] = mblx_symbol(g, name);
    }
    for (int s = 0; s < D; s++) f[s] = mblx_sin(g, x[s]);
    t[0] = mblx_product(g, D, f); /* depends on y0 .. y(D-1) */
    for (int k = 1; k < T; k++) {
        mblx_id h[3] = {x[(7 * k) % D], x[(7 * k + 3) % D], x[(7 * k + 11) % D]};
        t[k] = mblx_product(g, 3, h);
    }
    mblx_id e = mblx_sum(g, T, t);
    CHECK(e != MBLX_NONE && mblx_node_nargs(g, e) == T);
    CHECK(g->nd[e].dcnt == D && g->nd[e].doff == g->nd[t[0]].doff);
    int ok = 1;
    for (int s = 0; s <= D; s++) ok = ok && mblx_depends(g, e, x[s]) == (s < D);
    CHECK(ok);
    /* one symbol outside: a union of D + 1 */
    mblx_id h[2] = {x[D], x[5]};
    t[T] = mblx_product(g, 2, h);
    mblx_id u = mblx_sum(g, T + 1, t);
    CHECK(u != MBLX_NONE && g->nd[u].dcnt == D + 1 && g->nd[u].doff != g->nd[t[0]].doff);
    ok = 1;
    for (int s = 0; s <= D; s++) ok = ok && mblx_depends(g, u, x[s]) == 1;
    const uint32_t *d = g->deps + g->nd[u].doff;
    for (uint32_t i = 1; i < g->nd[u].dcnt; i++) ok = ok && d[i] > d[i - 1];
    CHECK(ok);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(wide_union);
    RUN(wide_within);
    return test_summary("expr_deps");
}
