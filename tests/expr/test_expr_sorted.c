/* Sums and products whose operands are already in canonical form (builders_sorted.c): mblx_sum
 * and mblx_product make them without the builders' records, sort and merge, and must return the
 * very node the general path makes. For lists of terms (factors) drawn from a pool of symbols,
 * functions, powers, products with coefficients, constants, sums, products of one operand and an
 * undefined node, in the order drawn and reversed:
 *
 * - sums: mblx_sum first (its shortcut where it applies), then mblx_apply(ADD, 0, ...), which
 *   always takes the general path (sum_add, sum_build): the handles must agree and the second
 *   call must make no node (a node the shortcut made wrongly differs in its operands or order);
 * - products: mblx_product of the factors sorted by base (the shortcut where nothing merges),
 *   then of the same factors reversed (out of order: the shortcut's insertion where the bases are
 *   distinct, product_core's sort where one is there twice): the same handle, no node made by the
 *   second; and where the bases are distinct, the node is the canonical form worked out here (the
 *   constants' and flattened products' coefficients multiplied, the factors sorted by base). The
 *   constants are small integers and powers of two, so the coefficient is exact in either order.
 *
 * Both kinds are counted, to make sure the lists the shortcut takes and those it declines (a
 * constant, a sum to flatten, a key or base twice, more than 16 terms out of order) were met. */
#include <stdio.h>
#include <string.h>

#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NX = 6, MAXPOOL = 64, MAXLIST = 24 };

/* the pool; *nplain: the first entries, none a constant, a sum, undefined or 1 * (a sum) */
static size_t make_pool(mblx_graph *g, mblx_id *pool, size_t *nplain)
{
    mblx_id x[NX];
    pool_symbols(g, "x", NX, x);
    size_t np = 0;
    for (int i = 0; i < NX; i++) {
        np = pool_push(pool, np, MAXPOOL, x[i]);
        np = pool_push(pool, np, MAXPOOL, mblx_sin(g, x[i]));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], 2.0));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], -1.0));
    }
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, 3.0, mblx_mul(g, x[0], x[1])));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, -2.0, mblx_mul(g, x[2], mblx_sin(g, x[3]))));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, -1.0, x[4]));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, 0.5, mblx_powc(g, x[5], 2.0)));
    np = pool_push(pool, np, MAXPOOL, mblx_mul(g, x[1], x[2]));
    np = pool_push(pool, np, MAXPOOL, mblx_pow(g, x[0], x[1]));
    *nplain = np;
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 2.0));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, -1.0));
    np = pool_push(pool, np, MAXPOOL, mblx_add(g, x[0], x[1]));
    np = pool_push(pool, np, MAXPOOL, mblx_scale(g, 3.0, mblx_add(g, x[2], x[3]))); /* c * (a sum): distributed */
    np = pool_push(pool, np, MAXPOOL, mblx_div(g, mblx_const(g, 1.0), mblx_const(g, 0.0))); /* undefined */
    return np;
}

TEST(sums_same_node)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id pool[MAXPOOL];
    size_t nplain, np = make_pool(g, pool, &nplain);
    unsigned s = 2024u;
    int calls = 0, plain = 0, other = 0, long_lists = 0;
    for (int k = 0; k < 4000; k++) {
        mblx_id t[MAXLIST];
        size_t n = 2 + (size_t)(k % 7 == 0 ? 18 : k % 5), from = k % 3 ? nplain : np;
        int all_plain = from == nplain;
        for (size_t j = 0; j < n; j++) {
            s = s * 1103515245u + 12345u;
            t[j] = pool[(s >> 8) % from];
        }
        for (int rev = 0; rev < 2; rev++) {
            if (rev)
                for (size_t j = 0; j < n / 2; j++) {
                    mblx_id y = t[j];
                    t[j] = t[n - 1 - j];
                    t[n - 1 - j] = y;
                }
            mblx_id r1 = mblx_sum(g, n, t);
            size_t n1 = mblx_node_count(g);
            mblx_id r2 = mblx_apply(g, MBLX_OP_ADD, 0.0, n, t);
            CHECK(r1 == r2);
            CHECK(mblx_node_count(g) == n1);
            calls++;
            if (all_plain) plain++;
            else other++;
            if (n > 16) long_lists++;
        }
    }
    CHECK(calls == 8000);
    CHECK(plain > 2000 && other > 2000 && long_lists > 500);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

/* The canonical product of f[0..n) where its factors (flattened products' operands in place) have
 * distinct bases: the constants' and the products' coefficients multiplied, the factors sorted by
 * base; is r that node? -1 where a base is there twice (not worked out here). */
static int canonical_product(mblx_graph *g, size_t n, const mblx_id *f, mblx_id r)
{
    mblx_id x[4 * MAXLIST];
    size_t nx = 0;
    double coef = 1.0;
    for (size_t i = 0; i < n; i++) {
        mblx_op op = mblx_node_op(g, f[i]);
        if (op == MBLX_OP_CONST || op == MBLX_OP_MUL) coef *= mblx_node_value(g, f[i]);
        if (op == MBLX_OP_CONST) continue;
        int na = op == MBLX_OP_MUL ? mblx_node_nargs(g, f[i]) : 1;
        for (int a = 0; a < na; a++) {
            mblx_id y = op == MBLX_OP_MUL ? mblx_node_arg(g, f[i], a) : f[i];
            size_t j = nx++;
            for (; j > 0 && factor_base(g, y) < factor_base(g, x[j - 1]); j--) x[j] = x[j - 1];
            if (j > 0 && factor_base(g, y) == factor_base(g, x[j - 1])) return -1;
            x[j] = y;
        }
    }
    if (nx == 0) return mblx_node_op(g, r) == MBLX_OP_CONST && mblx_node_value(g, r) == coef;
    if (nx == 1 && coef == 1.0) return r == x[0];
    if (mblx_node_op(g, r) != MBLX_OP_MUL || mblx_node_value(g, r) != coef || (size_t)mblx_node_nargs(g, r) != nx) return 0;
    for (size_t j = 0; j < nx; j++)
        if (mblx_node_arg(g, r, (int)j) != x[j]) return 0;
    return 1;
}

TEST(products_same_node)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id pool[MAXPOOL];
    size_t nplain, np = make_pool(g, pool, &nplain);
    unsigned s = 777u;
    int calls = 0, distinct = 0, shared = 0, worked = 0;
    for (int k = 0; k < 4000; k++) {
        mblx_id f[MAXLIST];
        size_t n = 2 + (size_t)(k % 4), from = k % 3 ? nplain : np - 1; /* (without the undefined node) */
        for (size_t j = 0; j < n; j++) {
            s = s * 1103515245u + 12345u;
            f[j] = pool[(s >> 8) % from];
        }
        for (size_t i = 1; i < n; i++) /* sorted by base (stable) */
            for (size_t j = i; j > 0 && factor_base(g, f[j]) < factor_base(g, f[j - 1]); j--) {
                mblx_id y = f[j];
                f[j] = f[j - 1];
                f[j - 1] = y;
            }
        int twice = 0;
        for (size_t j = 1; j < n; j++) twice |= factor_base(g, f[j]) == factor_base(g, f[j - 1]);
        mblx_id r1 = mblx_product(g, n, f);
        size_t n1 = mblx_node_count(g);
        for (size_t j = 0; j < n / 2; j++) {
            mblx_id y = f[j];
            f[j] = f[n - 1 - j];
            f[n - 1 - j] = y;
        }
        mblx_id r2 = mblx_product(g, n, f);
        CHECK(r1 == r2);
        CHECK(mblx_node_count(g) == n1);
        int canon = canonical_product(g, n, f, r2);
        CHECK(canon != 0);
        if (mblx_node_op(g, r2) == MBLX_OP_MUL) /* a base twice merged: the bases increase */
            for (int j = 1; j < mblx_node_nargs(g, r2); j++)
                CHECK(factor_base(g, mblx_node_arg(g, r2, j - 1)) < factor_base(g, mblx_node_arg(g, r2, j)));
        worked += canon == 1;
        calls++;
        if (twice) shared++;
        else distinct++;
    }
    CHECK(calls == 4000);
    CHECK(distinct > 1000 && shared > 300 && worked > 1000);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(sums_same_node);
    RUN(products_same_node);
    return test_summary("expr_sorted");
}
