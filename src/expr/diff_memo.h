/* The derivatives kept from call to call (diff_memo.c), internal to src/expr: mblx_total_der's by
 * node under the seeds their symbols had, mblx_diff's by (node, symbol). */
#ifndef MBLIN_EXPR_DIFF_MEMO_H
#define MBLIN_EXPR_DIFF_MEMO_H

#include "expr/expr_internal.h"

enum { TD_LOCAL = 32 }; /* seeds of a total derivative kept on the stack (diff.c) */

/* a seed of a traversal: symbol index -> the node its derivative is */
typedef struct mblx__seed {
    uint32_t sym;
    mblx_id node;
} mblx__seed;

/* The n seeds s sorted by symbol index through a map of the graph's symbols (the order the stable
 * sort gives distinct symbols: diff.c's seed sets of many symbols out of order); 1 when a symbol is
 * there twice or out of memory (s unchanged: the caller sorts). */
int mblx__seeds_by_symbol(const mblx_graph *g, mblx__seed *s, size_t n);
/* d v / d operand i (operands a) of a node v that is not a sum or product, as mblx_scale(g, *c, P),
 * P returned (diff_rules.c) */
mblx_id mblx__partial_parts(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i, double *c);

/* A traversal's seed set (diff.c): the seeds s[0 .. n) sorted by symbol index; pos (optional):
 * symbol index -> position in s + 1 (0: not a seed), npos long; tds (optional): symbol index ->
 * seed node + 2, 1 not a seed, for each symbol the root has (with tds, a traversal of two or more
 * seeds reads no seed from s: the relevance test and a symbol's seed come from tds). */
typedef struct mblx__seedset {
    mblx__seed *s;
    size_t n;
    uint32_t *pos, *tds;
    uint32_t npos;
    int borrowed; /* s is the caller's storage (seeds_make_buf's buf): not freed */
} mblx__seedset;

/* where a traversal keeps and finds derivatives: by node in arr (derivative + 1, 0 not known),
 * or, arr NULL, in the graph's map of (node, symbol sym) */
typedef struct mblx__memo_ref {
    uint32_t *arr;
    uint32_t sym;
} mblx__memo_ref;

/* The memo (node -> derivative + 1) for a total derivative of e under the seeds S[0..nS) (sorted
 * by symbol), or NULL (out of memory: the call goes without it). *seeds (when not NULL returned):
 * the memo's seeds by symbol index (seed node + 2, 1 not a seed), set for every symbol e depends
 * on, and so for those of every node below e. */
uint32_t *mblx__tdmemo_for(mblx_graph *g, mblx_id e, const mblx__seed *S, size_t nS, uint32_t **seeds);
/* mblx__tdmemo_for with the seeds given by symbol: map[s] (s < nmap) as in *seeds, any other
 * symbol not a seed (mblx__total_der_map) */
uint32_t *mblx__tdmemo_map(mblx_graph *g, mblx_id e, const uint32_t *map, size_t nmap, uint32_t **seeds);
/* Does a node whose symbols are d[0..cnt) (all set in seeds, as above) depend on a seed? One load
 * a symbol, where the seed set's merge walked both lists (the traversals' relevance test). */
static inline int mblx__tds_any(const uint32_t *seeds, const uint32_t *d, uint32_t cnt)
{
    for (uint32_t k = 0; k < cnt; k++)
        if (seeds[d[k]] > 1) return 1;
    return 0;
}
/* 1 when mblx_diff's map exists and has room for the derivatives of one more call */
int mblx__dmap_ready(mblx_graph *g);
/* the same in the graph's map of (node, symbol) */
uint32_t mblx__keep_map_get(mblx_graph *g, const mblx__memo_ref *k, mblx_id v);
void mblx__keep_map_put(mblx_graph *g, const mblx__memo_ref *k, mblx_id v, mblx_id d);
/* the kept derivative of v + 1 (0: not known), and keeping d as v's: the by-node memo inline (a
 * traversal's every node reads it; a call cost about 1 % of a large model's formulation) */
static inline uint32_t mblx__keep_get(mblx_graph *g, const mblx__memo_ref *k, mblx_id v)
{
    return k->arr ? k->arr[v] : mblx__keep_map_get(g, k, v);
}
static inline void mblx__keep_put(mblx_graph *g, const mblx__memo_ref *k, mblx_id v, mblx_id d)
{
    if (k->arr) k->arr[v] = d + 1;
    else mblx__keep_map_put(g, k, v, d);
}

/* The reverse sweep's products c * other * a of two-operand products, kept for the call: a sum of
 * many like terms (k * m * (gx * (x_i + i) + gy * y_i), m / 6 * (vx_i^2 + vy_i^2)) passes the same
 * adjoint to each term, and each term's product gives the same contribution to its other operand
 * (k * m * a, then gx * that), which the builder found in the graph again each time (about 11,000
 * of the 33,000 products of the N = 1000 four-bar's gradients). The builder is a function of its
 * operands that makes no node for a product it has made (hash-consing), so the node kept is the
 * one the call would return, and the graph's nodes and their order are those of the calls made. A
 * direct-mapped cache: a slot's older entry is replaced. */
enum { MBLX__PMEMO_SLOTS = 4096 };
typedef struct mblx__pmemo {
    uint32_t c, other, a, res; /* res + 1; 0: empty */
} mblx__pmemo;
/* the adjoints' sums of a few contributions, likewise */
enum { MBLX__SMEMO_SLOTS = 4096, MBLX__SMEMO_TERMS = 4 };
typedef struct mblx__smemo {
    uint32_t n, t[MBLX__SMEMO_TERMS], res; /* res + 1; 0: empty */
} mblx__smemo;

/* the negations -a that the sweep's sums give their symbol operands (mblx__gradient_terms): a
 * gravity term's inner sum gets the same adjoint as every other body's (m gx / 2), whose negation
 * the builder found in the graph again each time (30,000 of 70,000 at N = 10^4); likewise */
enum { MBLX__NMEMO_SLOTS = 256 };
typedef struct mblx__nmemo {
    uint32_t a, res; /* res + 1; 0: empty */
} mblx__nmemo;

/* mblx_sum(g, n, t) for 2 to MBLX__SMEMO_TERMS terms through the memo sm */
mblx_id mblx__sum_kept(mblx_graph *g, mblx__smemo *sm, size_t n, const mblx_id *t);
/* c * (the product of the two operands a but operand i) * d, c the constant coef, through the
 * memo pm (mblx__product_others' node) */
mblx_id mblx__mul_other_kept(mblx_graph *g, mblx__pmemo *pm, double coef, const uint32_t *a, size_t i, mblx_id d);

/* A traversal's derivatives held as their terms (diff.c, mblx_total_der): the derivative of a
 * product of several operands that depend on the seeds is the sum of its product-rule terms; where
 * the product's parent in the traversal is a sum, whose derivative's builder flattens that sum into
 * its own terms anyway, the terms wait here and the parent's sum takes them in its place (the sum
 * node no row uses is not made: two per constraint in d2Phi/dt2). The product's memo is then
 * MBLX__DEFERRED | entry; any other reader makes the sum (mblx_sum of the terms) when it asks. */
#define MBLX__DEFERRED 0x80000000u
enum { DEFER_LOCAL = 64 };
typedef struct mblx__deferred {
    uint32_t *t;   /* the entries' terms */
    uint32_t *ent; /* entry i: its terms t[ent[2i] .. ent[2i] + ent[2i + 1]) */
    size_t nt, capt, ne, cape;
    uint32_t lt[DEFER_LOCAL], le[DEFER_LOCAL]; /* t and ent of a small traversal */
    int root;                                  /* the root's derivative held too (mblx__total_der_terms) */
} mblx__deferred;

/* an empty store: its arrays the local ones, the root's derivative made */
void mblx__defer_init(mblx__deferred *D);
/* memo value m held as terms? (node handles stay below MBLX__DEFERRED: mblx__defer_put refuses
 * from MBLX__DEFERRED / 2 nodes on) */
static inline int mblx__is_deferred(uint32_t m) { return m >= MBLX__DEFERRED && m < XPENDING; }
/* hold the n terms t: the memo value, or XNONE (out of memory or a graph too large: the caller
 * makes the sum) */
uint32_t mblx__defer_put(const mblx_graph *g, mblx__deferred *D, size_t n, const uint32_t *t);
/* the terms of memo value m (mblx__is_deferred), *n of them */
static inline const uint32_t *mblx__defer_terms(const mblx__deferred *D, uint32_t m, size_t *n)
{
    size_t i = m & ~MBLX__DEFERRED;
    *n = D->ent[2 * i + 1];
    return D->t + D->ent[2 * i];
}
void mblx__defer_free(mblx__deferred *D);
/* mblx_total_der with its products' derivatives held in D (diff.c): with D->root set, the root's
 * derivative too where it is a sum of 2 to MBLX_FLATTEN_MAX terms (a memo value held as terms) */
mblx_id mblx__total_der_held(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *dsyms,
                             mblx_id time_sym, mblx__deferred *D);

/* the time derivative of the sweep's contribution to the seed a[i] of node v (operands a[0..na),
 * coefficient coef) of adjoint adj, under map (diff_rate.c; mblx__rate_gradient_terms): the
 * contribution with the other seed, or a power's base, by its image; 0 where it is constant */
/* may the sweep over the relevant nodes ord[0 .. n) (stamped with epoch) take them (diff_rate.c)? */
int mblx__rate_nodes(const mblx_graph *g, const uint32_t *ord, size_t n, uint32_t epoch, const uint32_t *map,
                     size_t nmap);
mblx_id mblx__rate_contrib(mblx_graph *g, const uint32_t *map, size_t nmap, mblx_id v, const uint32_t *a, size_t na,
                           size_t i, double coef, mblx_id adj, mblx__pmemo *pm);

/* mblx_total_der's traversal of e under the seed set S (its tds set) with the memo k (diff.c) */
mblx_id mblx__total_der_walk(mblx_graph *g, mblx_id e, const mblx__seedset *S, const mblx__memo_ref *k,
                             mblx__deferred *D);

#endif
