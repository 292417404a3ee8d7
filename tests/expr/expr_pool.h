/* Helpers the expression engine's builder tests share: named symbols, a pool of operands, and a
 * factor's base as product_core reads it. */
#ifndef MBLIN_TEST_EXPR_POOL_H
#define MBLIN_TEST_EXPR_POOL_H

#include <stdio.h>

#include "mblin/expr.h"

/* x[0..n) = the symbols prefix0, prefix1, ... (prefix of one letter) */
static inline void pool_symbols(mblx_graph *g, const char *prefix, int n, mblx_id *x)
{
    char nm[16];
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "%s%d", prefix, i);
        x[i] = mblx_symbol(g, nm);
    }
}

/* pool[n] = e, unless e is MBLX_NONE or the pool (of cap entries) is full; the new count */
static inline size_t pool_push(mblx_id *pool, size_t n, size_t cap, mblx_id e)
{
    if (n < cap && e != MBLX_NONE) pool[n++] = e;
    return n;
}

/* the base of a factor as product_core reads it: b for b^c with c a constant, else the factor */
static inline mblx_id factor_base(mblx_graph *g, mblx_id e)
{
    if (mblx_node_op(g, e) == MBLX_OP_POW && mblx_node_op(g, mblx_node_arg(g, e, 1)) == MBLX_OP_CONST)
        return mblx_node_arg(g, e, 0);
    return e;
}

/* x of g and y of h the same expression: op, value and operands in order */
static inline int pool_same(mblx_graph *g, mblx_id x, mblx_graph *h, mblx_id y)
{
    if (mblx_node_op(g, x) != mblx_node_op(h, y) || mblx_node_nargs(g, x) != mblx_node_nargs(h, y)) return 0;
    if (mblx_node_op(g, x) != MBLX_OP_SYMBOL && mblx_node_value(g, x) != mblx_node_value(h, y)) return 0;
    if (mblx_node_op(g, x) == MBLX_OP_SYMBOL) return mblx_symbol_index(g, x) == mblx_symbol_index(h, y);
    for (int i = 0; i < mblx_node_nargs(g, x); i++)
        if (!pool_same(g, mblx_node_arg(g, x, i), h, mblx_node_arg(h, y, i))) return 0;
    return 1;
}

#endif
