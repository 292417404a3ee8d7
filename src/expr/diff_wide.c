/* The index of wide nodes' operands by the symbols they depend on (issue 31): the part of the
 * one-symbol forward traversals of diff.c (Jacobian columns, mblx_diff) that makes a row of width w
 * cost its nonzeros instead of w per column. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"

enum { INIT_STACK = 64 };

/* ---- wide nodes: which operands depend on a symbol ------------------------------------------- */

/* A sum or product of many operands (the frame-coordinate rows of a floating-frame model, FE
 * matrices written out) is visited once per column it depends on. Scanning its operands for the
 * relevant ones on each visit would make a row of width w cost w^2; this index lists, for each
 * such node, its (symbol, operand position) pairs sorted, so that a traversal with one symbol
 * (a Jacobian's column, mblx_diff) goes straight to the operands that depend on it. Built once
 * per node for the graph's life (on the node's first such visit); the operands come out in the
 * order the scan would have found them, so the derivative graph (node ids and all) is the same
 * as the scan's. */
enum { WIDE_MIN_ARGS = 32 };

typedef struct mblx__wide {
    uint32_t *key, *rec; /* open addressing: node id -> record (key XNONE: empty) */
    size_t cap, cnt;
    size_t *off; /* record r: pairs[off[r] .. off[r + 1]) */
    size_t nrec, caprec;
    uint64_t *pairs; /* (symbol << 32) | operand position, sorted */
    size_t npairs, cappairs;
    uint64_t *scratch;
    size_t capscratch;
    uint64_t steps; /* operand visits made by the one-symbol traversals (a cost count) */
} wideidx;

void mblx__wide_free(wideidx *W)
{
    if (!W) return;
    mbl_free(W->key);
    mbl_free(W->rec);
    mbl_free(W->off);
    mbl_free(W->pairs);
    mbl_free(W->scratch);
    mbl_free(W);
}

uint64_t mblx__diff_steps(const mblx_graph *g) { return g && g->wide ? g->wide->steps : 0; }

int mblx__wide_is(const mblx_graph *g, mblx_id v)
{
    unsigned op = g->nd[v].op;
    return g->nd[v].na >= WIDE_MIN_ARGS && (op == MBLX_OP_ADD || op == MBLX_OP_MUL);
}

#define LESS_U64(x, y) (*(x) < *(y))
MBLX__STABLE_SORT(sort_u64, uint64_t, LESS_U64)

static int grow_u64(uint64_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : INIT_STACK;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / sizeof **p) return -1;
        nc *= 2;
    }
    uint64_t *q = mbl_realloc_array(*p, nc, sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int wide_rehash(wideidx *W, size_t ncap)
{
    uint32_t *k = mbl_alloc_array(ncap, sizeof *k), *r = mbl_alloc_array(ncap, sizeof *r);
    if (!k || !r) {
        mbl_free(k), mbl_free(r);
        return -1;
    }
    for (size_t i = 0; i < ncap; i++) k[i] = XNONE;
    for (size_t i = 0; i < W->cap; i++) {
        if (W->key[i] == XNONE) continue;
        size_t h = (size_t)mblx__mix64(W->key[i]) & (ncap - 1);
        while (k[h] != XNONE) h = (h + 1) & (ncap - 1);
        k[h] = W->key[i];
        r[h] = W->rec[i];
    }
    mbl_free(W->key), mbl_free(W->rec);
    W->key = k;
    W->rec = r;
    W->cap = ncap;
    return 0;
}

/* The pairs of wide node v: [*lo, *hi) of W->pairs, built on first use. 0, or -1 (oom). */
static int wide_pairs(const mblx_graph *g, wideidx *W, mblx_id v, size_t *lo, size_t *hi)
{
    if ((W->cnt + 1) * 2 > W->cap && wide_rehash(W, W->cap ? W->cap * 2 : INIT_STACK)) return -1;
    size_t h = (size_t)mblx__mix64(v) & (W->cap - 1);
    for (; W->key[h] != XNONE; h = (h + 1) & (W->cap - 1))
        if (W->key[h] == v) {
            *lo = W->off[W->rec[h]];
            *hi = W->off[W->rec[h] + 1];
            return 0;
        }
    if (W->nrec + 2 > W->caprec) {
        size_t nc = W->caprec ? W->caprec * 2 : INIT_STACK;
        size_t *q = mbl_realloc_array(W->off, nc, sizeof *q);
        if (!q) return -1;
        W->off = q;
        W->caprec = nc;
    }
    if (W->nrec == 0) W->off[0] = 0;
    size_t base = W->npairs, total = 0;
    const uint32_t *a = mblx__args(g, v);
    for (uint32_t i = 0; i < g->nd[v].na; i++) total += g->nd[a[i]].dcnt;
    if (grow_u64(&W->pairs, &W->cappairs, base + total) ||
        grow_u64(&W->scratch, &W->capscratch, total))
        return -1;
    uint64_t *p = W->pairs + base;
    size_t k = 0;
    for (uint32_t i = 0; i < g->nd[v].na; i++) {
        const uint32_t *d = g->deps + g->nd[a[i]].doff;
        for (uint32_t j = 0; j < g->nd[a[i]].dcnt; j++) p[k++] = ((uint64_t)d[j] << 32) | i;
    }
    if (sort_u64(p, k, W->scratch)) return -1;
    W->npairs = base + k;
    W->off[W->nrec + 1] = W->npairs;
    W->key[h] = v;
    W->rec[h] = (uint32_t)W->nrec++;
    W->cnt++;
    *lo = base;
    *hi = W->npairs;
    return 0;
}

/* Within pairs [lo, hi) of a wide node, the run of symbol s: [*first, *last). */
static void wide_run(const wideidx *W, size_t lo, size_t hi, uint32_t s, size_t *first, size_t *last)
{
    uint64_t key = (uint64_t)s << 32;
    size_t end = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (W->pairs[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    while (lo < end && (W->pairs[lo] >> 32) == s) lo++;
    *last = lo;
}

int mblx__wide_ensure(mblx_graph *g)
{
    if (!g->wide && !(g->wide = mbl_calloc(1, sizeof *g->wide))) return -1;
    return 0;
}

long mblx__wide_run(mblx_graph *g, mblx_id v, uint32_t s, const uint64_t **run)
{
    wideidx *W = g->wide;
    size_t lo, hi, f, l;
    if (wide_pairs(g, W, v, &lo, &hi)) return -1;
    wide_run(W, lo, hi, s, &f, &l);
    W->steps += l - f;
    *run = W->pairs + f;
    return (long)(l - f);
}

void mblx__wide_step(mblx_graph *g, size_t n) { g->wide->steps += n; }
