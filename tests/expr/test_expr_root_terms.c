/* mblx__total_der_terms: the total derivative's root sum left as its terms (the EOM rows take
 * d/dt(dT/dv_i) so, src/model/formulate.c), against the general path it shortcuts: the terms' sum
 * is mblx_total_der's very node, and a row's sum with the terms in place of that node is the old
 * row's node (hash-consing gives the very node when the structure agrees). */
#include <stdio.h>

#include "expr/gradient_terms.h"
#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NQ = 4, NWIDE = 70 };

static mblx_graph *G;
static mblx_id Q[NQ], V[NQ], A[NQ];

/* e's derivative as terms against mblx_total_der's node; the count of terms */
static size_t check(mblx_id e, const char *what)
{
    mblx_id syms[2 * NQ], dirs[2 * NQ], t[MBLX_FLATTEN_MAX + 2];
    for (int i = 0; i < NQ; i++) syms[i] = Q[i], dirs[i] = V[i], syms[NQ + i] = V[i], dirs[NQ + i] = A[i];
    size_t nt = mblx__total_der_terms(G, e, 2 * NQ, syms, dirs, MBLX_NONE, t);
    mblx_id d = mblx_total_der(G, e, 2 * NQ, syms, dirs, MBLX_NONE);
    CHECK_MSG(nt >= 1 && nt <= MBLX_FLATTEN_MAX && d != MBLX_NONE, "%s: derivatives", what);
    if (nt < 1 || nt > MBLX_FLATTEN_MAX || d == MBLX_NONE) return 0;
    CHECK_MSG(mblx_sum(G, nt, t) == d, "%s: the terms' sum is not the derivative", what);
    /* a row: the derivative, a product, a negated sum, a constant (the old construction) */
    mblx_id o[3] = {mblx_mul(G, Q[0], A[1]), mblx_neg(G, mblx_add(G, V[2], mblx_mul(G, Q[3], V[0]))),
                    mblx_const(G, 2.5)};
    mblx_id old[4] = {d, o[0], o[1], o[2]};
    mblx_id row_old = mblx_sum(G, 4, old);
    if (mblx__terms_by_themselves(G, nt, t)) {
        for (int j = 0; j < 3; j++) t[nt + (size_t)j] = o[j];
        mblx_id row = mblx_sum(G, nt + 3, t);
        CHECK_MSG(row == row_old, "%s: the row from the terms is not the old row", what);
    }
    return nt;
}

TEST(root_terms_against_total_der)
{
    const char *names[3] = {"q", "v", "a"};
    mblx_id *sets[3] = {Q, V, A};
    CHECK((G = mblx_graph_new()) != NULL);
    for (int k = 0; G && k < 3; k++) pool_symbols(G, names[k], NQ, sets[k]);
    if (!G) return;
    /* dT/dv_0 of a two-link chain: m l^2 v0 + m l r cos(q0 - q1) v1: a sum of products */
    mblx_id c01 = mblx_cos(G, mblx_sub(G, Q[0], Q[1]));
    mblx_id p2[2] = {mblx_mul(G, mblx_const(G, 3.0), V[0]), mblx_mul(G, mblx_const(G, 1.5), mblx_mul(G, c01, V[1]))};
    mblx_id pv = mblx_sum(G, 2, p2);
    CHECK_MSG(check(pv, "momentum") > 1, "momentum: the root's terms not held");
    /* a product root (its product-rule terms), with v-dependence on both sides */
    CHECK_MSG(check(mblx_mul(G, V[0], mblx_sin(G, Q[1])), "product") == 2, "product: the root's terms not held");
    /* a sum whose terms' derivatives are sums themselves (held products) and like terms */
    mblx_id s4[4] = {mblx_mul(G, Q[0], Q[1]), mblx_mul(G, Q[1], Q[0]), mblx_mul(G, Q[2], V[3]),
                     mblx_exp(G, mblx_add(G, Q[0], Q[2]))};
    CHECK(check(mblx_sum(G, 4, s4), "nested") > 1);
    /* the same momentum again: the kept memo gives the node, one term */
    check(pv, "kept");
    /* one symbol, a constant, a function root, a let root: one node */
    CHECK_EQ_INT((int)check(V[2], "symbol"), 1);
    CHECK_EQ_INT((int)check(mblx_const(G, 4.0), "constant"), 1);
    CHECK_EQ_INT((int)check(mblx_sin(G, mblx_mul(G, Q[0], V[1])), "function"), 1);
    CHECK_EQ_INT((int)check(mblx_let(G, mblx_mul(G, Q[0], V[1])), "let"), 1);
    /* a sum of more than MBLX_FLATTEN_MAX products: made (the row would not flatten it) */
    mblx_id w[NWIDE], ws[NWIDE];
    pool_symbols(G, "w", NWIDE, w);
    for (int i = 0; i < NWIDE; i++) ws[i] = mblx_mul(G, w[i], Q[i % NQ]);
    CHECK_EQ_INT((int)check(mblx_sum(G, NWIDE, ws), "wide"), 1);
    /* a term that is a sum: the product's derivative kept by an earlier call (under a function,
     * not held), then met under a sum root: the terms are not by themselves */
    mblx_id p01 = mblx_mul(G, Q[0], Q[1]), sp[2] = {p01, mblx_mul(G, Q[2], V[3])};
    check(mblx_sin(G, p01), "function of the product");
    mblx_id syms[2 * NQ], dirs[2 * NQ], t[MBLX_FLATTEN_MAX];
    for (int i = 0; i < NQ; i++) syms[i] = Q[i], dirs[i] = V[i], syms[NQ + i] = V[i], dirs[NQ + i] = A[i];
    size_t nt = mblx__total_der_terms(G, mblx_sum(G, 2, sp), 2 * NQ, syms, dirs, MBLX_NONE, t);
    CHECK_MSG(nt > 1 && !mblx__terms_by_themselves(G, nt, t), "kept sum: a term that is a sum taken by itself");
    check(mblx_sum(G, 2, sp), "kept sum");
    /* a row left with one term once its constants 0 are dropped (src/model/formulate.c): the
     * old row's sum of {c (x + y z), 0, 0} distributes the coefficient; the row's sum must too */
    mblx_id cs = mblx_mul(G, mblx_const(G, 2.0), mblx_add(G, V[0], mblx_mul(G, V[1], V[2])));
    mblx_id zero = mblx_const(G, 0.0), three[3] = {cs, zero, mblx_neg(G, zero)};
    mblx_id row_old = mblx_sum(G, 3, three);
    CHECK_MSG(row_old != cs, "c (x + y z): not distributed, the check below cannot fail");
    CHECK_MSG(mblx__sum_minus_terms(G, 1, &cs, 1, 0, NULL) == row_old, "one-term row: not the old row's node");
    mblx_graph_free(G);
    /* the root's sum is not made: a fresh graph's node count against mblx_total_der's */
    for (int pass = 0; pass < 2; pass++) {
        mblx_graph *g = mblx_graph_new();
        mblx_id q[NQ], v[NQ], t[MBLX_FLATTEN_MAX];
        pool_symbols(g, "q", NQ, q);
        pool_symbols(g, "v", NQ, v);
        mblx_id s2[2] = {mblx_mul(g, q[0], q[1]), mblx_mul(g, q[2], q[3])};
        mblx_id e = mblx_sum(g, 2, s2);
        size_t n0 = mblx_node_count(g);
        size_t nt = pass ? mblx__total_der_terms(g, e, NQ, q, v, MBLX_NONE, t) : 1;
        if (!pass) t[0] = mblx_total_der(g, e, NQ, q, v, MBLX_NONE);
        /* q0 v1 + v0 q1 + q2 v3 + v2 q3: four products, and the sum only by mblx_total_der */
        CHECK_EQ_INT((int)(mblx_node_count(g) - n0), pass ? 4 : 5);
        CHECK_EQ_INT((int)nt, pass ? 4 : 1);
        mblx_graph_free(g);
    }
}

int main(void)
{
    RUN(root_terms_against_total_der);
    return test_summary("expr_root_terms");
}
