/* The traversals' shared helpers (diff.c, diff_grad.c): small growable stacks, operand copies,
 * seed sets and the relevance test. */
#ifndef MBLIN_EXPR_DIFF_SWEEP_H
#define MBLIN_EXPR_DIFF_SWEEP_H

#include <string.h>

#include "expr/expr_internal.h"
#include "expr/diff_memo.h"

enum { INIT_STACK = 64, LOCAL_ARGS = 16 };

/* ---- small growable arrays ---------------------------------------------------------------- */

typedef struct u32vec {
    uint32_t *p;
    size_t n, cap;
    int borrowed; /* p is the caller's storage (a stack array): copied out when it grows */
} u32vec;

/* The traversals' small helpers below are inlined (GCC kept them as calls: ~400,000 calls on the
 * N = 1000 four-bar's formulation); a stack's growth stays a call. */
static __attribute__((noinline, unused)) int u32_grow(u32vec *v)
{
    size_t nc = v->cap ? v->cap * 2 : INIT_STACK;
    if (nc < v->cap) return -1;
    uint32_t *q = v->borrowed ? mbl_alloc_array(nc, sizeof *q) : mbl_realloc_array(v->p, nc, sizeof *q);
    if (!q) return -1;
    if (v->borrowed) memcpy(q, v->p, v->n * sizeof *q);
    v->p = q, v->cap = nc, v->borrowed = 0;
    return 0;
}

static inline __attribute__((always_inline)) int u32_push(u32vec *v, uint32_t x)
{
    if (v->n == v->cap && u32_grow(v)) return -1;
    v->p[v->n++] = x;
    return 0;
}

/* Operands of node v copied out of the pool (the pool moves when nodes are created). */
typedef struct argcopy {
    uint32_t local[LOCAL_ARGS];
    uint32_t *a;
    size_t n;
} argcopy;

static inline __attribute__((always_inline)) int args_copy(const mblx_graph *g, mblx_id v, argcopy *c)
{
    c->n = g->nd[v].na;
    c->a = c->local;
    if (c->n > LOCAL_ARGS && !(c->a = mbl_alloc_array(c->n, sizeof *c->a))) return -1;
    const uint32_t *src = mblx__args(g, v);
    for (size_t i = 0; i < c->n; i++) c->a[i] = src[i];
    return 0;
}

static inline void args_free(argcopy *c)
{
    if (c->a != c->local) mbl_free(c->a);
}

typedef mblx__seed seed;
typedef mblx__seedset seedset; /* diff_memo.h */

static inline __attribute__((always_inline)) long seed_find(const seedset *S, uint32_t sym)
{
    if (S->pos) return sym < S->npos ? (long)S->pos[sym] - 1 : -1;
    size_t lo = 0, hi = S->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (S->s[mid].sym < sym)
            lo = mid + 1;
        else if (S->s[mid].sym > sym)
            hi = mid;
        else
            return (long)mid;
    }
    return -1;
}

void mblx__seeds_index(const mblx_graph *g, seedset *S);
void mblx__seeds_free(seedset *S);

/* Does node v depend on any symbol of S? */
static inline __attribute__((always_inline)) int relevant(const mblx_graph *g, mblx_id v, const seedset *S)
{
    uint32_t cnt = g->nd[v].dcnt;
    if (cnt == 0 || S->n == 0) return 0;
    if (S->n == 1) return mblx__dep_has(g, v, S->s[0].sym);
    const uint32_t *d = g->deps + g->nd[v].doff;
    if (S->tds) return mblx__tds_any(S->tds, d, cnt); /* v is below the root: its symbols are there */
    if (cnt + S->n <= 64) { /* both sorted and short: merge */
        size_t i = 0, j = 0;
        while (i < cnt && j < S->n) {
            uint32_t x = d[i], y = S->s[j].sym;
            if (x == y) return 1;
            i += x < y;
            j += y < x;
        }
        return 0;
    }
    if (cnt <= S->n) {
        for (uint32_t k = 0; k < cnt; k++)
            if (seed_find(S, d[k]) >= 0) return 1;
        return 0;
    }
    for (size_t k = 0; k < S->n; k++)
        if (mblx__dep_has(g, v, S->s[k].sym)) return 1;
    return 0;
}

/* Product of coef and all operands of a MUL except operand `skip`, times `extra`. */
static inline mblx_id mul_others(mblx_graph *g, double coef, const argcopy *a, size_t skip, mblx_id extra)
{
    mblx_id c = mblx__const(g, coef);
    return c == XNONE ? XNONE : mblx__product_others(g, c, a->a, a->n, skip, extra);
}

#endif
