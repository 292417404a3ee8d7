/* A sum minus the terms of another, without that other sum made (gradient_terms.h). */
#include <stdlib.h>

#include "expr/expr_internal.h"
#include "expr/gradient_terms.h"

/* Is w, the negation of a term u, one that mblx_sum does not take as it takes u's negation in a
 * sum: a sum or a coefficient times a sum (flattened into their terms), or a product wider than
 * MBLX_FLATTEN_MAX or of one (a wide product u is added by its operands, its negation by u)? */
static int not_by_itself(const mblx_graph *g, mblx_id w)
{
    const mblx__node *nd = &g->nd[w];
    if (nd->op == MBLX_OP_ADD) return 1;
    if (nd->op != MBLX_OP_MUL) return 0;
    if (nd->na > MBLX_FLATTEN_MAX) return 1;
    const mblx__node *a = &g->nd[mblx__args(g, w)[0]];
    return nd->na == 1 && (a->op == MBLX_OP_ADD || (a->op == MBLX_OP_MUL && a->na > MBLX_FLATTEN_MAX));
}

int mblx__terms_by_themselves(const mblx_graph *g, size_t n, const mblx_id *t)
{
    int by = n <= MBLX_FLATTEN_MAX;
    for (size_t j = 0; j < n && by; j++) by = !not_by_itself(g, t[j]);
    return by;
}

int mblx__gradient_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, size_t *ptr, mblx_id **terms)
{
    return mblx__rate_gradient_terms(g, e, n, syms, NULL, 0, ptr, terms);
}

/* -(the sum of the u), u = -w */
static mblx_id minus_sum(mblx_graph *g, size_t m, const mblx_id *w)
{
    mblx_id local[16], *u = m <= 16 ? local : mbl_alloc_array(m, sizeof *u);
    if (!u) return mblx__oom(g);
    size_t j = 0;
    while (j < m && (u[j] = mblx_neg(g, w[j])) != XNONE) j++;
    mblx_id r = j == m ? mblx_neg(g, mblx_sum(g, m, u)) : XNONE;
    if (u != local) mbl_free(u);
    return r;
}

mblx_id mblx__sum_minus_terms(mblx_graph *g, size_t n, const mblx_id *t, size_t at, size_t m, const mblx_id *w)
{
    if (!g || at > n) return XNONE;
    for (size_t j = 0; j < m; j++)
        if (!mblx__valid(g, w[j])) return XNONE;
    int split = mblx__terms_by_themselves(g, m, w);
    size_t nu = split ? m : 1, nt = n + nu;
    mblx_id local[16], *all = nt <= 16 ? local : mbl_alloc_array(nt, sizeof *all);
    if (!all) return mblx__oom(g);
    for (size_t i = 0; i < n; i++) all[i < at ? i : i + nu] = t[i];
    mblx_id r = XNONE;
    for (size_t j = 0; j < m && split; j++) all[at + j] = w[j];
    /* the general path of mblx_sum at once (mblx_apply: the node mblx_sum makes of 3 terms or more,
     * which an EOM row had before its constants 0 were left out; one or two terms it would take as
     * they are, where the general path distributes a coefficient times a sum): an EOM row's terms
     * have like ones (dL/dq_i's contributions from several potential terms), at which mblx_sum's
     * path for terms in canonical form declines, after sorting them */
    if (split || (all[at] = minus_sum(g, m, w)) != XNONE) r = mblx_apply(g, MBLX_OP_ADD, 0.0, nt, all);
    if (all != local) mbl_free(all);
    return r;
}
