/* A gradient whose symbols' adjoints are left unsummed and negated (diff.c), for a caller that
 * subtracts them in a larger sum (src/model/formulate.c: the EOM rows take -dL/dq_i's terms, so
 * the sum dL/dq_i, which the row's sum flattens, its negation and its terms before their negation
 * are not made). */
#ifndef MBLIN_EXPR_GRADIENT_TERMS_H
#define MBLIN_EXPR_GRADIENT_TERMS_H

#include <stddef.h>
#include <stdint.h>

#include "mblin/expr.h"

/* mblx_gradient of e over the n symbols syms, negated and unsummed: -d e / d syms[i] is the sum of
 * the terms (*terms)[ptr[i] .. ptr[i + 1]) (no term: 0), mblx_neg of each term of mblx_gradient's
 * sum in that order (made as the builders make -c x directly); ptr holds n + 1 entries (the
 * caller's), *terms is allocated (mbl_free; NULL on failure). 0, or an error code as
 * mblx_gradient's. */
int mblx__gradient_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, size_t *ptr, mblx_id **terms);

/* The time derivatives of the gradient of e over the velocities syms without that gradient made
 * (diff_rate.c): map as mblx__total_der_map's (seed node + 2 by symbol index, 1 constant in time).
 * Where e is a sum of constant-in-time multiples of v_j^2 and v_j v_k through sums and products (a
 * kinetic energy of a constant mass matrix), d/dt(d e / d syms[i]) is the sum of the terms
 * (*terms)[ptr[i] .. ptr[i + 1]) (no term: 0), the time derivatives of the contributions that
 * mblx_gradient's sum of them adds, in the same order, each the node mblx_total_der gives for
 * its contribution (those constant in time left out), unsummed: a sum that takes them merges
 * their like terms as the gradient's sum did, in the same order, where the sum of the gradient's
 * total derivative has them merged already. ptr and *terms as mblx__gradient_terms'; 0, -1 where
 * e has not that form (checked before any node is made), or an error code. */
int mblx__rate_gradient_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const uint32_t *map, size_t nmap,
                              size_t *ptr, mblx_id **terms);

/* mblx__gradient_terms of e - sum_j lam[j] Phi[j] (m terms) over syms, the same terms, without the
 * nodes lam_j Phi_j, their sum and the difference where their form allows (diff_grad.c's
 * lagr_form: m > MBLX_FLATTEN_MAX, the lam_j distinct symbols not in syms, the Phi_j and e sums);
 * else those nodes are made, as mblx_sub(e, mblx_sum(mblx_mul(lam_j, Phi_j))). */
int mblx__lagrangian_terms(mblx_graph *g, mblx_id e, size_t m, const mblx_id *lam, const mblx_id *Phi, size_t n,
                           const mblx_id *syms, size_t *ptr, mblx_id **terms);

/* mblx_sum of the n terms t with -(mblx_sum of the m terms u) after t[0 .. at), given w, the
 * negations of the u (mblx__gradient_terms' terms): where the sum of u is narrow and made of no sum
 * nor wide product, the sum of the t flattens it into its terms with the negation distributed, so
 * the w are added as they are: the node mblx_sum(t, mblx_neg(mblx_sum(u))) gives (up to the
 * rounding of coefficients of like terms added in another order), without the sum of u and its
 * negation made; else made so, u as mblx_neg of w (gradient_terms.c). MBLX_NONE out of memory. */
mblx_id mblx__sum_minus_terms(mblx_graph *g, size_t n, const mblx_id *t, size_t at, size_t m, const mblx_id *w);

/* mblx_total_der of e as terms (diff_memo.c): its derivative is the sum of terms[0 .. count), the
 * terms its sum was made of where the root's derivative is a sum of a product's or a sum's terms
 * (2 to MBLX_FLATTEN_MAX; so a caller that adds the derivative in a larger sum that flattens it
 * need not make it), else the one node mblx_total_der gives. terms holds MBLX_FLATTEN_MAX; the
 * count, 0 on failure. */
size_t mblx__total_der_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *dsyms,
                             mblx_id time_sym, mblx_id *terms);

/* mblx_total_der (as_terms: mblx__total_der_terms) of e under the seeds given by symbol index,
 * map[s] = the node symbol s's derivative is + 2, 1 for a symbol constant in time (s < nmap; any
 * other symbol is constant): the seeds of e's own symbols, found without a seed set of its own
 * (a caller that differentiates many expressions under the same seeds makes map once). A symbol
 * gives its seed (0 where it is constant) without a traversal. The same nodes, made in the same
 * order, as mblx_total_der (mblx__total_der_terms) with e's seeds; the count into out (1: the
 * node), 0 on failure. */
size_t mblx__total_der_map(mblx_graph *g, mblx_id e, const uint32_t *map, size_t nmap, int as_terms, mblx_id *out);

/* Would mblx_sum add each of the n terms t as itself, so that the sum of a larger sum with the sum
 * of the t in it flattened and with the t in its place are the same node (up to the rounding of
 * like terms' coefficients added in another order)? n at most MBLX_FLATTEN_MAX, none a sum, a
 * coefficient times a sum or a wide product. */
int mblx__terms_by_themselves(const mblx_graph *g, size_t n, const mblx_id *t);

#endif
