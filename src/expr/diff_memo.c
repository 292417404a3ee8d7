/* The derivatives kept from call to call (diff_memo.h): the memo of mblx_total_der by node and
 * mblx_diff's map by (node, symbol), dropped with the graph's table (mblx__tdmemo_free); the store
 * of the derivatives held as terms, and mblx_total_der's entries over it (the root's terms:
 * mblx__total_der_terms). */
#include <stdlib.h>
#include <string.h>

#include "expr/diff_memo.h"
#include "expr/gradient_terms.h"

/* mblx_total_der's derivatives kept from call to call. A node's derivative depends only on the
 * seeds of the symbols it depends on (the traversal visits the operands that depend on a seed,
 * and the builders are pure functions of their operands), so it holds for a later call whose
 * seeds agree with the kept ones on those symbols. A model takes the total derivative of many
 * expressions that share their parts (the rows through lets, d/dt of d/dt Phi, the rates of the
 * body momenta): each part is now differentiated once. seed[s] records what symbol s was: 0 not
 * yet met, 1 not a seed, its seed node + 2; a call that disagrees on a symbol its expression
 * depends on clears the memo and starts it again with its own seeds. */
typedef struct mblx__tdmemo {
    uint32_t *seed, nseed;
    uint32_t *d; /* per node: derivative + 1, 0 not known */
    size_t nd;
    /* mblx_diff's: open addressing, key (node + 1) << 32 | symbol index (0: empty), its value */
    uint64_t *mkey;
    uint32_t *mval;
    size_t mcap, mcount;
} mblx__tdmemo;

void mblx__tdmemo_free(mblx_graph *g)
{
    if (!g || !g->tdmemo) return;
    mbl_free(g->tdmemo->seed), mbl_free(g->tdmemo->d), mbl_free(g->tdmemo->mkey), mbl_free(g->tdmemo->mval);
    mbl_free(g->tdmemo);
    g->tdmemo = NULL;
}

/* mblx_diff's map holds at most this many derivatives per node of the graph (then it stops
 * growing: later derivatives are made as before, only not kept) */
enum { DMAP_PER_NODE = 4, DMAP_MIN = 1024 };

static size_t dmap_slot(uint64_t key, size_t cap) { return (size_t)(mblx__mix64(key) & (cap - 1)); }

int mblx__dmap_ready(mblx_graph *g)
{
    mblx__tdmemo *m = g->tdmemo;
    if (!m && !(m = g->tdmemo = mbl_calloc(1, sizeof *m))) return 0;
    if (m->mcount >= DMAP_PER_NODE * (size_t)g->n + DMAP_MIN) return 0;
    return 1;
}

static uint32_t dmap_get(const mblx__tdmemo *m, uint64_t key)
{
    if (!m->mcap) return 0;
    for (size_t k = dmap_slot(key, m->mcap); m->mkey[k]; k = (k + 1) & (m->mcap - 1))
        if (m->mkey[k] == key) return m->mval[k];
    return 0;
}

/* keep (key -> val); out of memory: not kept */
static void dmap_put(mblx__tdmemo *m, uint64_t key, uint32_t val)
{
    if ((m->mcount + 1) * 2 > m->mcap) {
        size_t nc = m->mcap ? 2 * m->mcap : DMAP_MIN;
        uint64_t *nk = mbl_calloc(nc, sizeof *nk);
        uint32_t *nv = nk ? mbl_alloc_array(nc, sizeof *nv) : NULL;
        if (!nk || !nv) {
            mbl_free(nk), mbl_free(nv);
            return;
        }
        for (size_t i = 0; i < m->mcap; i++) {
            if (!m->mkey[i]) continue;
            size_t k = dmap_slot(m->mkey[i], nc);
            while (nk[k]) k = (k + 1) & (nc - 1);
            nk[k] = m->mkey[i], nv[k] = m->mval[i];
        }
        mbl_free(m->mkey), mbl_free(m->mval);
        m->mkey = nk, m->mval = nv, m->mcap = nc;
    }
    size_t k = dmap_slot(key, m->mcap);
    while (m->mkey[k] && m->mkey[k] != key) k = (k + 1) & (m->mcap - 1);
    if (!m->mkey[k]) m->mcount++;
    m->mkey[k] = key, m->mval[k] = val;
}

uint32_t mblx__keep_map_get(mblx_graph *g, const mblx__memo_ref *k, mblx_id v)
{
    return dmap_get(g->tdmemo, ((uint64_t)v + 1) << 32 | k->sym);
}

void mblx__keep_map_put(mblx_graph *g, const mblx__memo_ref *k, mblx_id v, mblx_id d)
{
    dmap_put(g->tdmemo, ((uint64_t)v + 1) << 32 | k->sym, d + 1);
}

/* grow a zero-filled array of uint32_t from *n to at least need entries */
static int grow_zero(uint32_t **p, size_t *n, size_t need)
{
    if (need <= *n) return 0;
    size_t nc = *n ? *n : 1024;
    while (nc < need) nc *= 2;
    uint32_t *q = mbl_realloc_array(*p, nc, sizeof *q);
    if (!q) return -1;
    memset(q + *n, 0, (nc - *n) * sizeof *q);
    *p = q, *n = nc;
    return 0;
}

/* mblx__tdmemo_for's and mblx__tdmemo_map's: the seeds S (sorted by symbol, merged with e's), or
 * map (nmap long) where it is not NULL */
static uint32_t *tdmemo_seeds(mblx_graph *g, mblx_id e, const mblx__seed *S, size_t nS, const uint32_t *map,
                              size_t nmap, uint32_t **seeds)
{
    mblx__tdmemo *m = g->tdmemo;
    if (!m && !(m = g->tdmemo = mbl_calloc(1, sizeof *m))) return NULL;
    size_t ns = m->nseed;
    if (grow_zero(&m->d, &m->nd, g->n) || grow_zero(&m->seed, &ns, g->nsym)) return NULL;
    m->nseed = (uint32_t)ns;
    const uint32_t *d = g->deps + g->nd[e].doff;
    for (int pass = 0; pass < 2; pass++) {
        int clash = 0;
        size_t i = 0; /* both sorted by symbol: merged */
        for (uint32_t k = 0; k < g->nd[e].dcnt && !clash; k++) {
            uint32_t want;
            if (map) {
                want = d[k] < nmap ? map[d[k]] : 1;
            } else {
                while (i < nS && S[i].sym < d[k]) i++;
                want = i < nS && S[i].sym == d[k] ? S[i].node + 2 : 1;
            }
            if (!m->seed[d[k]]) m->seed[d[k]] = want;
            clash = m->seed[d[k]] != want;
        }
        if (!clash) return *seeds = m->seed, m->d;
        memset(m->d, 0, m->nd * sizeof *m->d);
        memset(m->seed, 0, (size_t)m->nseed * sizeof *m->seed);
    }
    return NULL; /* not reached: a cleared memo takes any seeds */
}

uint32_t *mblx__tdmemo_for(mblx_graph *g, mblx_id e, const mblx__seed *S, size_t nS, uint32_t **seeds)
{
    return tdmemo_seeds(g, e, S, nS, NULL, 0, seeds);
}

uint32_t *mblx__tdmemo_map(mblx_graph *g, mblx_id e, const uint32_t *map, size_t nmap, uint32_t **seeds)
{
    return tdmemo_seeds(g, e, NULL, 0, map, nmap, seeds);
}

/* The n seeds s sorted by symbol through a map of the graph's symbols (the order sort_seeds gives
 * distinct symbols); 1 when a symbol is there twice or out of memory (s unchanged: the sort then). */
int mblx__seeds_by_symbol(const mblx_graph *g, mblx__seed *s, size_t n)
{
    uint32_t *at = mbl_calloc(g->nsym ? g->nsym : 1, sizeof *at);
    mblx__seed *t = at ? mbl_alloc_array(n, sizeof *t) : NULL;
    int rc = !t;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = s[i].sym >= g->nsym || at[s[i].sym];
        if (!rc) at[s[i].sym] = (uint32_t)i + 1;
    }
    if (!rc) {
        size_t k = 0;
        for (uint32_t y = 0; y < g->nsym; y++)
            if (at[y]) t[k++] = s[at[y] - 1];
        memcpy(s, t, n * sizeof *s);
    }
    mbl_free(at), mbl_free(t);
    return rc;
}

mblx_id mblx__sum_kept(mblx_graph *g, mblx__smemo *sm, size_t n, const mblx_id *t)
{
    uint64_t h = n;
    for (size_t i = 0; i < n; i++) h = h * 0x100000001b3ull ^ t[i];
    mblx__smemo *e = &sm[mblx__mix64(h) & (MBLX__SMEMO_SLOTS - 1)];
    if (e->res && e->n == n) {
        size_t i = 0;
        while (i < n && e->t[i] == t[i]) i++;
        if (i == n) return e->res - 1;
    }
    mblx_id r = mblx_sum(g, n, t);
    if (r != XNONE) {
        e->n = (uint32_t)n, e->res = r + 1;
        for (size_t i = 0; i < n; i++) e->t[i] = t[i];
    }
    return r;
}

mblx_id mblx__mul_other_kept(mblx_graph *g, mblx__pmemo *pm, double coef, const uint32_t *a, size_t i, mblx_id d)
{
    mblx_id c = mblx__const(g, coef), other = a[1 - i];
    if (c == XNONE) return XNONE;
    uint64_t key = ((uint64_t)c << 42) ^ ((uint64_t)other << 21) ^ (uint64_t)d;
    mblx__pmemo *e = &pm[mblx__mix64(key) & (MBLX__PMEMO_SLOTS - 1)];
    if (e->res && e->c == c && e->other == other && e->a == d) return e->res - 1;
    mblx_id r = mblx__product_others(g, c, a, 2, i, d);
    if (r != XNONE) e->c = c, e->other = other, e->a = d, e->res = r + 1;
    return r;
}

void mblx__defer_init(mblx__deferred *D)
{
    D->t = D->lt, D->ent = D->le;
    D->nt = D->ne = 0;
    D->root = 0;
    D->capt = D->cape = DEFER_LOCAL;
}

/* grow *p (cap entries, local storage when it is loc) to hold need entries; -1 out of memory */
static int grow_to(uint32_t **p, size_t *cap, size_t need, const uint32_t *loc)
{
    if (need <= *cap) return 0;
    size_t nc = 2 * *cap;
    while (nc < need) nc *= 2;
    uint32_t *q = *p == loc ? mbl_alloc_array(nc, sizeof *q) : mbl_realloc_array(*p, nc, sizeof *q);
    if (!q) return -1;
    if (*p == loc) memcpy(q, loc, *cap * sizeof *q);
    *p = q, *cap = nc;
    return 0;
}

uint32_t mblx__defer_put(const mblx_graph *g, mblx__deferred *D, size_t n, const uint32_t *t)
{
    if (g->n >= MBLX__DEFERRED / 2 || D->ne >= MBLX__DEFERRED / 2 || D->nt + n > UINT32_MAX) return XNONE;
    if (grow_to(&D->t, &D->capt, D->nt + n, D->lt) || grow_to(&D->ent, &D->cape, 2 * D->ne + 2, D->le)) return XNONE;
    for (size_t i = 0; i < n; i++) D->t[D->nt + i] = t[i];
    D->ent[2 * D->ne] = (uint32_t)D->nt, D->ent[2 * D->ne + 1] = (uint32_t)n;
    D->nt += n;
    return MBLX__DEFERRED | (uint32_t)D->ne++;
}

void mblx__defer_free(mblx__deferred *D)
{
    if (D->t != D->lt) mbl_free(D->t);
    if (D->ent != D->le) mbl_free(D->ent);
    mblx__defer_init(D);
}

mblx_id mblx_total_der(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *dsyms, mblx_id time_sym)
{
    mblx__deferred D;
    mblx__defer_init(&D);
    mblx_id r = mblx__total_der_held(g, e, n, syms, dsyms, time_sym, &D);
    mblx__defer_free(&D);
    return r;
}

/* the root's derivative r (held in D where it is held as terms) into out: its terms, or the node
 * (count 1); the count, 0 when r failed */
static size_t held_out(mblx__deferred *D, mblx_id r, mblx_id *out)
{
    size_t k = 1;
    const uint32_t *t = &r;
    if (r != XNONE && mblx__is_deferred(r)) t = mblx__defer_terms(D, r, &k);
    memcpy(out, t, k * sizeof *t);
    mblx__defer_free(D);
    return r == XNONE ? 0 : k;
}

/* (gradient_terms.h) */
size_t mblx__total_der_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *dsyms,
                             mblx_id time_sym, mblx_id *terms)
{
    mblx__deferred D;
    mblx__defer_init(&D);
    D.root = 1;
    return held_out(&D, mblx__total_der_held(g, e, n, syms, dsyms, time_sym, &D), terms);
}

enum { MONO_MAX = 64, MONO_ARGS = 16 };

/* Is o, an operand of a root whose seeds are tds, known to the memo k, a seed symbol, or a product
 * whose one operand with a seed is a seed symbol (c x v_j, x free of seeds: dT/dv_i's terms where
 * the mass matrix is constant)? 0 for any other form. */
static int mono_form(mblx_graph *g, mblx_id o, const uint32_t *tds, const mblx__memo_ref *k)
{
    if (mblx__keep_get(g, k, o) || g->nd[o].op == MBLX_OP_SYMBOL) return 1;
    if (g->nd[o].op != MBLX_OP_MUL || g->nd[o].na > MONO_ARGS) return 0;
    int nrel = 0;
    for (uint32_t i = 0; i < g->nd[o].na; i++) {
        mblx_id c = mblx__args(g, o)[i];
        if (!mblx__tds_any(tds, g->deps + g->nd[c].doff, g->nd[c].dcnt)) continue;
        if (g->nd[c].op != MBLX_OP_SYMBOL || nrel++) return 0;
    }
    return nrel == 1;
}

/* The total derivative of a sum e of such operands (mono_form) without the traversal: each
 * operand's derivative, the last operand's first, as the traversal makes it (a product's: compute's
 * one term, mul_others, kept in the memo; a symbol's: its seed), then e's (compute_linear: held as
 * terms where D->root and 2 to MBLX_FLATTEN_MAX of them, else their sum, kept). XPENDING where e
 * is not of that form (the traversal then), XNONE out of memory. */
static mblx_id monomials_der(mblx_graph *g, mblx_id e, const uint32_t *tds, const mblx__memo_ref *k, mblx__deferred *D)
{
    uint32_t kv = mblx__keep_get(g, k, e);
    if (kv) return kv - 1;
    size_t n = g->nd[e].na, nt = 0;
    if (g->nd[e].op != MBLX_OP_ADD || n > MONO_MAX) return XPENDING;
    mblx_id a[MONO_MAX], d[MONO_MAX], t[MONO_MAX];
    for (size_t i = 0; i < n; i++) {
        mblx_id o = a[i] = mblx__args(g, e)[i];
        d[i] = mblx__tds_any(tds, g->deps + g->nd[o].doff, g->nd[o].dcnt) ? XPENDING : g->zero;
        if (d[i] == XPENDING && !mono_form(g, o, tds, k)) return XPENDING;
    }
    for (size_t i = n; i-- > 0;) {
        mblx_id o = a[i];
        if (d[i] != XPENDING) continue;
        if ((kv = mblx__keep_get(g, k, o))) {
            d[i] = kv - 1;
        } else if (g->nd[o].op == MBLX_OP_SYMBOL) {
            d[i] = tds[(uint32_t)g->nd[o].val] - 2;
        } else {
            uint32_t f[MONO_ARGS];
            size_t nf = g->nd[o].na, j = 0;
            memcpy(f, mblx__args(g, o), nf * sizeof *f);
            while (g->nd[f[j]].op != MBLX_OP_SYMBOL || tds[(uint32_t)g->nd[f[j]].val] < 2) j++;
            mblx_id c = mblx__const(g, g->nd[o].val);
            d[i] = c == XNONE ? XNONE : mblx__product_others(g, c, f, nf, j, tds[(uint32_t)g->nd[f[j]].val] - 2);
            if (d[i] == XNONE) return XNONE;
            mblx__keep_put(g, k, o, d[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (d[i] != g->zero) t[nt++] = d[i];
    mblx_id r = D->root && nt >= 2 && nt <= MBLX_FLATTEN_MAX ? mblx__defer_put(g, D, nt, t) : XNONE;
    if (r == XNONE && (r = mblx_sum(g, nt, t)) != XNONE) mblx__keep_put(g, k, e, r);
    return r;
}

/* (gradient_terms.h) The seed set of e's seeds from map: the traversal reads them from the memo's
 * map (tds), which agrees with map on every symbol below e, so s holds one of them, the one a
 * traversal of a single seed reads (the wide nodes' index). */
size_t mblx__total_der_map(mblx_graph *g, mblx_id e, const uint32_t *map, size_t nmap, int as_terms, mblx_id *out)
{
    if (!g || !mblx__valid(g, e) || !map) return 0;
    mblx__seed one = {0, XNONE};
    mblx__seedset S = {&one, 0, NULL, NULL, 0, 1};
    const uint32_t *dep = g->deps + g->nd[e].doff;
    for (uint32_t k = 0; k < g->nd[e].dcnt; k++)
        if (dep[k] < nmap && map[dep[k]] > 1) one = (mblx__seed){dep[k], map[dep[k]] - 2}, S.n++;
    if (!S.n || g->nd[e].op == MBLX_OP_SYMBOL) /* constant in time, or a symbol: its seed, no memo */
        return *out = S.n ? one.node : g->zero, 1;
    mblx__deferred D;
    mblx__defer_init(&D);
    D.root = as_terms;
    mblx__memo_ref k = {mblx__tdmemo_map(g, e, map, nmap, &S.tds), 0};
    mblx_id r = !k.arr ? mblx__oom(g) : S.n > 1 ? monomials_der(g, e, S.tds, &k, &D) : XPENDING;
    return held_out(&D, r == XPENDING ? mblx__total_der_walk(g, e, &S, &k, &D) : r, out);
}
