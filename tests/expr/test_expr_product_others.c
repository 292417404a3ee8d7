/* mblx__product_others (builders.c), the derivatives' "c * the other operands of a product * d"
 * made without sorting the operands again (issue 34, item 5): it must return the very node
 * mblx_product(g, [c, the other operands, d]) returns, whether it takes its shortcut (nothing to
 * merge) or not (a base in common, constants, flattened products, coefficients that overflow or
 * vanish, undefined operands, powers of exponent 1 or 0).
 *
 * For every product v of a pool, every operand skipped, every factor d of the pool and several
 * constants c, the node is made first by mblx__product_others and then by mblx_product: the two
 * handles must agree, and the second call must make no node (the graph is hash-consed, so a node
 * the shortcut made wrongly would differ in its operands or coefficient from the one
 * mblx_product makes). The pool's products are made by mblx_product from chosen factors, so the
 * test also counts the calls where the factor has a base in common with the others (merging
 * powers, where the shortcut must not be taken) to make sure both kinds were met. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NX = 6, MAXPOOL = 96 };

TEST(same_node_as_product)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[NX], pool[MAXPOOL];
    pool_symbols(g, "x", NX, x);
    size_t np = 0;
    for (int i = 0; i < NX; i++) {
        np = pool_push(pool, np, MAXPOOL, x[i]);
        np = pool_push(pool, np, MAXPOOL, mblx_sin(g, x[i]));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], 2.0));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], -1.0));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], 0.5));
    }
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 2.5));
    np = pool_push(pool, np, MAXPOOL, mblx_add(g, x[0], x[1]));
    np = pool_push(pool, np, MAXPOOL, mblx_exp(g, mblx_mul(g, x[2], x[3])));
    np = pool_push(pool, np, MAXPOOL, mblx_div(g, mblx_const(g, 1.0), mblx_const(g, 0.0))); /* undefined */
    /* products of one operand (vn = 1), constants that vanish or overflow with c (x constant) */
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, 3.0, x[0]));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, -2.0, mblx_sin(g, x[1])));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, 0.5, mblx_powc(g, x[2], -1.0)));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 0.0));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 1.0));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, -1e300));
    size_t nbase = np;
    /* products of two to five factors of the pool, with coefficients */
    unsigned s = 12345u;
    for (int k = 0; k < 40; k++) {
        mblx_id f[6];
        int nf = 2 + (int)(k % 4);
        for (int j = 0; j < nf; j++) {
            s = s * 1103515245u + 12345u;
            f[j] = pool[(s >> 8) % nbase];
        }
        f[nf] = mblx_const(g, k % 5 == 0 ? 1e300 : k % 3 == 0 ? -3.0 : 0.5);
        np = pool_push(pool, np, MAXPOOL, mblx_product(g, (size_t)nf + 1, f));
    }
    const double coefs[] = {1.0, -1.0, 2.5, 1e300, 1e-300};
    int calls = 0, common = 0, disjoint = 0;
    for (size_t v = 0; v < np; v++) {
        if (mblx_node_op(g, pool[v]) != MBLX_OP_MUL) continue;
        int na = mblx_node_nargs(g, pool[v]);
        uint32_t va[64];
        for (int i = 0; i < na && i < 64; i++) va[i] = (uint32_t)mblx_node_arg(g, pool[v], i);
        for (int skip = 0; skip < na && na <= 64; skip++)
            for (size_t d = 0; d < np; d++)
                for (size_t ci = 0; ci < sizeof coefs / sizeof *coefs; ci++) {
                    mblx_id c = mblx_const(g, coefs[ci]);
                    mblx_id r1 = mblx__product_others(g, c, va, (size_t)na, (size_t)skip, pool[d]);
                    size_t n1 = mblx_node_count(g);
                    mblx_id f[66];
                    size_t k = 0;
                    f[k++] = c;
                    for (int i = 0; i < na; i++)
                        if (i != skip) f[k++] = va[i];
                    f[k++] = pool[d];
                    mblx_id r2 = mblx_product(g, k, f);
                    CHECK(r1 == r2);
                    CHECK(mblx_node_count(g) == n1);
                    calls++;
                    int shared = 0;
                    for (int i = 0; i < na; i++)
                        if (i != skip && factor_base(g, va[i]) == factor_base(g, pool[d])) shared = 1;
                    if (shared) common++;
                    else disjoint++;
                }
    }
    CHECK(calls > 10000);
    CHECK(common > 100);
    CHECK(disjoint > 1000);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

/* mblx_scale's shortcut (one factor that flattens into nothing): the node mblx_product of the
 * constant and the operand makes, for leaves, functions, powers, sums, products and constants. */
TEST(scale_same_node_as_product)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y");
    mblx_id pool[] = {x, mblx_sin(g, x), mblx_powc(g, x, 2.0), mblx_powc(g, x, -0.5), mblx_pow(g, x, y),
                      mblx_add(g, x, y), mblx_mul(g, x, y), mblx_scale(g, 3.0, y), mblx_const(g, 2.0),
                      mblx_div(g, mblx_const(g, 1.0), mblx_const(g, 0.0))};
    const double coefs[] = {1.0, -1.0, 0.0, 2.5, 1e300, 1e-300};
    for (size_t i = 0; i < sizeof pool / sizeof *pool; i++)
        for (size_t k = 0; k < sizeof coefs / sizeof *coefs; k++) {
            mblx_id r1 = mblx_scale(g, coefs[k], pool[i]);
            size_t n1 = mblx_node_count(g);
            mblx_id f[2] = {mblx_const(g, coefs[k]), pool[i]};
            mblx_id r2 = mblx_product(g, 2, f);
            CHECK(r1 == r2);
            CHECK(mblx_node_count(g) == n1 || f[0] >= n1); /* only the constant may be new */
        }
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(same_node_as_product);
    RUN(scale_same_node_as_product);
    return test_summary("expr_product_others");
}
