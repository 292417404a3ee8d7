/* mblx_total_der's products' derivatives held as their terms where the parent is a sum
 * (diff_memo.h, MBLX__DEFERRED): the total derivative against mblx_dir_deriv of the same seeds,
 * which holds nothing back, compared as nodes in one graph (hash-consing gives the very node when
 * the structure agrees), and the sums held back not made. */
#include <stdio.h>

#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NQ = 4 };

static mblx_graph *G;
static mblx_id Q[NQ], V[NQ], A[NQ];

/* d/dt e with q -> v, v -> a, once by each path; the node count the total derivative made */
static void check(mblx_id e, const char *what)
{
    mblx_id syms[2 * NQ], dirs[2 * NQ];
    for (int i = 0; i < NQ; i++) syms[i] = Q[i], dirs[i] = V[i], syms[NQ + i] = V[i], dirs[NQ + i] = A[i];
    mblx_id d1 = mblx_total_der(G, e, 2 * NQ, syms, dirs, MBLX_NONE);
    mblx_id d2 = mblx_total_der(G, d1, 2 * NQ, syms, dirs, MBLX_NONE);
    CHECK_MSG(d1 != MBLX_NONE && d2 != MBLX_NONE, "%s: total derivatives", what);
    CHECK_MSG(mblx_dir_deriv(G, e, 2 * NQ, syms, dirs) == d1, "%s: first derivative differs", what);
    CHECK_MSG(mblx_dir_deriv(G, d1, 2 * NQ, syms, dirs) == d2, "%s: second derivative differs", what);
}

TEST(total_der_terms_against_dir_deriv)
{
    G = mblx_graph_new();
    CHECK(G != NULL);
    if (!G) return;
    pool_symbols(G, "q", NQ, Q);
    pool_symbols(G, "v", NQ, V);
    pool_symbols(G, "a", NQ, A);
    mblx_id one = mblx_const(G, 1.0);
    /* a four-bar's constraint: its d/dt is a sum of products of two factors that depend on q */
    mblx_id dx = mblx_sub(G, Q[1], Q[0]), dy = mblx_sub(G, Q[3], Q[2]);
    mblx_id phi = mblx_sub(G, mblx_add(G, mblx_powc(G, dx, 2.0), mblx_powc(G, dy, 2.0)), one);
    check(phi, "constraint");
    /* a product shared by a sum and a product (the latter asks for the node), a product under a
     * product under a sum, a sum of one product, a let, a function of a sum of products */
    mblx_id p = mblx_mul(G, Q[0], mblx_sin(G, Q[1]));
    mblx_id t4[4] = {p, mblx_mul(G, p, Q[2]), mblx_mul(G, Q[3], mblx_mul(G, Q[0], mblx_cos(G, Q[2]))),
                     mblx_let(G, mblx_mul(G, Q[1], Q[2]))};
    check(mblx_sum(G, 4, t4), "shared");
    check(mblx_mul(G, mblx_const(G, 3.0), mblx_product(G, 3, Q)), "product");
    check(mblx_exp(G, mblx_add(G, mblx_mul(G, Q[0], Q[1]), mblx_mul(G, Q[2], Q[3]))), "function");
    /* symbols that are no seed (parameters) beside seeded ones: the relevance test by the memo's
     * seed map (mblx__tds_any) must skip the parts in p alone, as the seed set's merge does */
    mblx_id p0 = mblx_symbol(G, "p0"), p1 = mblx_symbol(G, "p1");
    mblx_id t3[3] = {mblx_mul(G, p0, Q[0]), mblx_sin(G, mblx_mul(G, p0, p1)),
                     mblx_mul(G, mblx_powc(G, p1, 2.0), mblx_cos(G, mblx_add(G, Q[1], p0)))};
    mblx_id ep = mblx_sum(G, 3, t3);
    check(ep, "parameters");
    /* the same expression under other seeds (q -> a): the memo starts again, and its map with it */
    mblx_id sq[NQ], da[NQ];
    for (int i = 0; i < NQ; i++) sq[i] = Q[i], da[i] = A[i];
    CHECK_MSG(mblx_total_der(G, ep, NQ, sq, da, MBLX_NONE) == mblx_dir_deriv(G, ep, NQ, sq, da),
              "parameters, other seeds: derivative differs");
    /* the held-back sums are not made: a fresh graph's node count against dir_deriv's */
    mblx_graph *g2 = mblx_graph_new();
    mblx_id q2[NQ], v2[NQ];
    pool_symbols(g2, "q", NQ, q2);
    pool_symbols(g2, "v", NQ, v2);
    mblx_id s2[2] = {mblx_mul(g2, q2[0], q2[1]), mblx_mul(g2, q2[2], q2[3])};
    mblx_id e2 = mblx_sum(g2, 2, s2);
    size_t n0 = mblx_node_count(g2);
    mblx_id d = mblx_total_der(g2, e2, NQ, q2, v2, MBLX_NONE);
    size_t made = mblx_node_count(g2) - n0;
    CHECK(d != MBLX_NONE);
    /* q0 v1 + v0 q1 + q2 v3 + v2 q3: four products and the sum; dir_deriv's two product-rule sums
     * (q0 v1 + v0 q1 and the like) would be two more */
    CHECK_EQ_INT((int)made, 5);
    mblx_graph_free(g2);
    mblx_graph_free(G);
}

int main(void)
{
    RUN(total_der_terms_against_dir_deriv);
    return test_summary("expr_total_der_terms");
}
