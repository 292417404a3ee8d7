/* Expanded canonical form of an expression (include/mblin/codegen.h, docs/symbolic.md): products
 * distributed over sums, integer powers of sums multiplied out, and the engine's own canonical
 * form (flat sums with like terms collected, products with equal bases collecting their
 * exponents, (a*b)^n = a^n b^n) applied to the result. So a rational function whose denominators
 * are monomials becomes one sum of monomials with rational exponents: g*(m1*L2 + m2*(2*L2 +
 * L1))/(2*L1*L2) and 0.5*m2*g/L2 - (-0.5*m1*g - m2*g)/L1 are the same node. Denominators that are
 * sums stay as powers of their expanded sums (no common denominators, no factoring).
 *
 * Iterative (an explicit stack, no recursion whose depth grows with the expression); a subterm
 * whose expansion would exceed max_terms terms is kept as it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/codegen.h"

#define EXPAND_MAX_POW 8

/* the terms of e as a sum: its constant (returned in *c) and its operands; a non-sum is one term */
static size_t terms_of(const mblx_graph *g, mblx_id e, double *c, const mblx_id **args, mblx_id *one)
{
    if (mblx_node_op(g, e) == MBLX_OP_ADD) {
        *c = mblx_node_value(g, e);
        *args = NULL;
        return (size_t)mblx_node_nargs(g, e);
    }
    *c = 0.0;
    *one = e;
    *args = one;
    return 1;
}

static mblx_id term_i(const mblx_graph *g, mblx_id e, const mblx_id *args, size_t i)
{
    return args ? args[i] : mblx_node_arg(g, e, (int)i);
}

/* product of a list of expanded factors, distributed over their sums; MBLX_NONE when more than
 * max_terms terms would result */
static mblx_id distribute(mblx_graph *g, double coef, size_t nf, const mblx_id *f, size_t max_terms)
{
    /* count */
    double count = 1.0;
    for (size_t k = 0; k < nf; k++) {
        double c;
        const mblx_id *a;
        mblx_id one;
        size_t nt = terms_of(g, f[k], &c, &a, &one);
        count *= (double)nt + (c != 0.0 ? 1.0 : 0.0);
    }
    if (count > (double)max_terms) return MBLX_NONE;
    /* accumulate: acc holds the expanded product of the first k factors as a list of terms */
    size_t cap = (size_t)count + 1, nacc = 1;
    mblx_id *acc = mbl_alloc_array(cap, sizeof *acc), *nxt = mbl_alloc_array(cap, sizeof *nxt);
    if (!acc || !nxt) {
        mbl_free(acc), mbl_free(nxt);
        return MBLX_NONE;
    }
    acc[0] = mblx_const(g, coef);
    for (size_t k = 0; k < nf; k++) {
        double c;
        const mblx_id *a;
        mblx_id one;
        size_t nt = terms_of(g, f[k], &c, &a, &one), nn = 0;
        for (size_t i = 0; i < nacc; i++) {
            for (size_t j = 0; j < nt; j++) nxt[nn++] = mblx_mul(g, acc[i], term_i(g, f[k], a, j));
            if (c != 0.0) nxt[nn++] = mblx_scale(g, c, acc[i]);
        }
        mblx_id *t = acc;
        acc = nxt, nxt = t, nacc = nn;
    }
    mblx_id r = mblx_sum(g, nacc, acc);
    mbl_free(acc), mbl_free(nxt);
    return r;
}

mblx_id mbl_symlin_expand(mblx_graph *g, mblx_id root, size_t max_terms)
{
    if (root == MBLX_NONE) return MBLX_NONE;
    size_t nn = mblx_node_count(g);
    mblx_id *map = mbl_alloc_array(nn + 1, sizeof *map);
    size_t cap = 64, top = 0;
    mblx_id *stack = mbl_alloc_array(cap, sizeof *stack);
    mblx_id *args = NULL;
    size_t acap = 0;
    if (!map || !stack) {
        mbl_free(map), mbl_free(stack);
        return MBLX_NONE;
    }
    for (size_t i = 0; i < nn; i++) map[i] = MBLX_NONE;
    stack[top++] = root;
    while (top) {
        mblx_id e = stack[top - 1];
        if (map[e] != MBLX_NONE) {
            top--;
            continue;
        }
        int na = mblx_node_nargs(g, e), pending = 0;
        for (int i = 0; i < na; i++) {
            mblx_id a = mblx_node_arg(g, e, i);
            if (map[a] != MBLX_NONE) continue;
            if (top == cap) {
                mblx_id *ns = mbl_realloc(stack, 2 * cap * sizeof *stack);
                if (!ns) goto fail;
                stack = ns, cap *= 2;
            }
            stack[top++] = a, pending = 1;
        }
        if (pending) continue;
        top--;
        if ((size_t)na > acap) {
            mblx_id *nb = mbl_realloc(args, ((size_t)na + 8) * sizeof *nb);
            if (!nb) goto fail;
            args = nb, acap = (size_t)na + 8;
        }
        for (int i = 0; i < na; i++) args[i] = map[mblx_node_arg(g, e, i)];
        mblx_op op = mblx_node_op(g, e);
        mblx_id r = MBLX_NONE;
        double k;
        if (op == MBLX_OP_CONST || op == MBLX_OP_SYMBOL) {
            r = e;
        } else if (op == MBLX_OP_ADD) {
            r = mblx_add(g, mblx_const(g, mblx_node_value(g, e)), mblx_sum(g, (size_t)na, args));
        } else if (op == MBLX_OP_MUL) {
            r = distribute(g, mblx_node_value(g, e), (size_t)na, args, max_terms);
        } else if (op == MBLX_OP_POW && mblx_is_const(g, args[1], &k) && k == floor(k) && k >= 2 &&
                   k <= EXPAND_MAX_POW && mblx_node_op(g, args[0]) == MBLX_OP_ADD) {
            mblx_id f[EXPAND_MAX_POW];
            for (int i = 0; i < (int)k; i++) f[i] = args[0];
            r = distribute(g, 1.0, (size_t)k, f, max_terms);
        } else if (op == MBLX_OP_POW && mblx_is_const(g, args[1], &k) && k == floor(k) && k < 0 &&
                   mblx_node_op(g, args[0]) == MBLX_OP_MUL) {
            /* (c a b)^-n = c^-n a^-n b^-n: the engine distributes an integer power over a product */
            r = mblx_pow(g, args[0], args[1]);
        }
        if (r == MBLX_NONE) {
            /* other operations (and expansions over the limit): the operation of the expanded
             * operands, which the engine puts in its canonical form */
            r = mblx_apply(g, op, mblx_node_value(g, e), (size_t)na, args);
        }
        if (r == MBLX_NONE) goto fail;
        /* the graph grew: the map covers only the original nodes, which is all the walk visits */
        map[e] = r;
    }
    mblx_id out = map[root];
    mbl_free(map), mbl_free(stack), mbl_free(args);
    return out;
fail:
    mbl_free(map), mbl_free(stack), mbl_free(args);
    return MBLX_NONE;
}
