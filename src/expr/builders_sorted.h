/* The canonical forms of sums and products made without the builders' records where the
 * operands already are in that form (internal to builders.c, which calls them first; inline
 * there: out of line, in a file of their own, the N = 1000 four-bar took 0.7 M instructions
 * more). Each gives the very node the general path of mblx_sum (sum_build) or product_core
 * would make, and declines wherever that path would do anything but keep the operands as they
 * are (a constant to fold, a sum to flatten, a key or base twice, an undefined operand). The
 * N = 1000 four-bar's formulation: 27,015 of 38,026 sums and nearly all products from the
 * parser and mblx_product. */
#ifndef MBLIN_EXPR_BUILDERS_SORTED_H
#define MBLIN_EXPR_BUILDERS_SORTED_H

#include <math.h>

#include "expr/expr_internal.h"

enum { MBLX__SUM_SORT_MAX = 16 }; /* terms of a sum sorted here at most */

/* A term of a sum as sum_build orders it: its key (a product's operands, any other term itself). */
typedef struct sum_key {
    const uint32_t *k;
    uint32_t kn, t;
} sum_key;

/* cmp_terms(a, b): < 0, 0 or > 0 */
static inline int sum_key_cmp(const sum_key *a, const sum_key *b)
{
    uint32_t m = a->kn < b->kn ? a->kn : b->kn, j = 0;
    while (j < m && a->k[j] == b->k[j]) j++;
    if (j < m) return a->k[j] < b->k[j] ? -1 : 1;
    return (a->kn > b->kn) - (a->kn < b->kn);
}

/* Is the sum of terms[0..n) (valid, n >= 2) its terms in the order of their
 * keys: none a constant, a sum, an undefined term, a product of coefficient 0, 1 * x or c * (a
 * sum), and no two keys equal? Then sum_build's records would be the terms themselves (each its
 * own record's node, nothing merged, the constant 0) in the order its stable sort gives them: the
 * sum is ADD(0; those terms), without the records, their keys' copies and the merge. Up to
 * MBLX__SUM_SORT_MAX terms are sorted here into out (an insertion sort, as sort_terms sorts short
 * arrays: a key equal to one sorted before stops its insertion there, where the comparison that
 * stops it tells, so no pass after looks for equal neighbours); more are taken only when already
 * in order (out then unused: the terms as given). */
static inline int mblx__sum_canonical(const mblx_graph *g, size_t n, const mblx_id *terms, uint32_t *out)
{
    sum_key r[MBLX__SUM_SORT_MAX], prev = {NULL, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const mblx__node *nd = &g->nd[terms[i]];
        unsigned op = nd->op;
        if (op == MBLX_OP_CONST || op == MBLX_OP_ADD || nd->dcnt == 0) return 0;
        sum_key x = {&terms[i], 1, terms[i]};
        if (op == MBLX_OP_MUL) {
            x.k = g->args + nd->aoff;
            if (nd->val == 0.0 || (nd->na == 1 && (nd->val == 1.0 || g->nd[x.k[0]].op == MBLX_OP_ADD))) return 0;
            x.kn = nd->na;
        }
        if (n > MBLX__SUM_SORT_MAX) { /* in order, or not taken */
            if (i && sum_key_cmp(&prev, &x) >= 0) return 0;
            prev = x;
            continue;
        }
        size_t j = i;
        int c = -1;
        while (j > 0 && (c = sum_key_cmp(&x, &r[j - 1])) < 0) r[j] = r[j - 1], j--;
        if (c == 0) return 0; /* two keys equal: they merge */
        r[j] = x;
    }
    if (n > MBLX__SUM_SORT_MAX) return 1;
    for (size_t i = 0; i < n; i++) out[i] = r[i].t;
    return 1;
}

/* product_core's node where nothing in f[0..n) needs its records: constants
 * and flattened products only multiply the coefficient (finite, in the same order), and the other
 * factors (with a flattened product's operands in place) have distinct bases (a power of a
 * constant exponent other than 0 and 1 by its base, any other factor itself), so nothing merges,
 * each is its own record's node, and the stable sort's order is the one order by base: each
 * factor is inserted at its place as it comes (a factor and its adjoint, or a partial and its
 * operand's derivative, come in either order: the reverse sweep's c a P, the traversals' c P d). 1
 * with the node in *res (XNONE when interning failed), 0 where product_core must make it. */
static inline int mblx__product_sorted(mblx_graph *g, double coef, size_t n, const mblx_id *f, mblx_id *res)
{
    enum { FAST_MAX = 16 };
    uint32_t out[FAST_MAX], bases[FAST_MAX];
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        const mblx__node *nd = &g->nd[f[i]];
        const uint32_t *list = &f[i];
        size_t cnt = 1;
        if (nd->op == MBLX_OP_CONST || (nd->op == MBLX_OP_MUL && nd->na <= MBLX_FLATTEN_MAX)) {
            if (!isfinite(coef * nd->val)) return 0;
            coef *= nd->val;
            if (nd->op == MBLX_OP_CONST) continue;
            list = g->args + nd->aoff;
            cnt = nd->na;
        }
        for (size_t k = 0; k < cnt; k++) {
            uint32_t x = list[k], base = x;
            const mblx__node *xn = &g->nd[x];
            if (xn->op == MBLX_OP_POW) {
                const mblx__node *en = &g->nd[g->args[xn->aoff + 1]];
                if (en->op == MBLX_OP_CONST) {
                    if (en->val == 0.0 || en->val == 1.0) return 0;
                    base = g->args[xn->aoff];
                }
            }
            size_t j = nf;
            if (nf == FAST_MAX) return 0;
            if (j && base <= bases[j - 1]) { /* out of order: moved to its place */
                for (; j > 0 && base < bases[j - 1]; j--) out[j] = out[j - 1], bases[j] = bases[j - 1];
                if (j > 0 && base == bases[j - 1]) return 0; /* a base twice: they merge */
            }
            out[j] = x, bases[j] = base, nf++;
        }
    }
    if (coef == 0.0)
        *res = g->zero;
    else if (nf == 0)
        *res = mblx__const(g, coef);
    else if (nf == 1 && coef == 1.0)
        *res = out[0];
    else
        *res = mblx__intern(g, MBLX_OP_MUL, coef, nf, out);
    return 1;
}

#endif
