/* Sharing the common parts of the sums and products of a compiled sub-DAG (chains of operands in
 * the graph's order, common pairs of operands) before it is scheduled into a tape. */
#include <string.h>

#include "core/progress.h"
#include "expr/tape_internal.h"

/* ---- sharing common parts of sums and products ----------------------------------------------
 *
 * The graph keeps sums and products n-ary and flat (its canonical form), so a product used as a
 * factor of larger products, or a pair of factors common to many products (sin(psi) sin(phi) in
 * the rotation entries of a spatial model and in all their derivatives), is no value of its own:
 * compiled as written, every product recomputes it. Before scheduling, the compiler rewrites
 * every sum and product of the compiled sub-DAG as a left-deep chain of binary operations over
 * its operands in the graph's order (the order of node handles: symbols and their sines and
 * cosines, made first, come first), and interns the chain links: a link (op, prefix, operand) is
 * computed once, whichever sums or products start with it. A sum or product whose chain equals
 * another node becomes an alias of it; its constant is fused into its last link. The number of
 * operations of a node never grows (k operands: k - 1 binary operations plus its constant), so
 * the tape can only shrink, and every operation happens in the same order as without sharing:
 * values are bit-identical. (Ordering the operands by how many sums or products use them shares
 * 5 % more on the nonlinear bicycle but changes the rounding, which the penalty method's
 * rounding-dominated deviation at alpha = 1e8 noticed.) */

/* Interned chain links: an open-addressing table of node ids + 1 (0: empty), keyed by the
 * node's operation and its two operands, read from the compile arrays (4 bytes a slot: the table
 * is written once, and fresh pages are what it costs). */
typedef struct link_table {
    uint32_t *s;
    size_t cap, n;
    const mblx__node *nd;
    const uint32_t *args;
} link_table;

static size_t link_hash(const link_table *T, uint32_t op, uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full) ^ op;
    h ^= h >> 29;
    return (size_t)(h * 0xbf58476d1ce4e5b9ull >> 17) & (T->cap - 1);
}

/* share_chains fetches a link's slot ahead of its lookup from 2^20 slots (4 MB) on */
enum { CHAIN_AHEAD = 8, CHAIN_PREFETCH_MIN = 1 << 20 };

/* Slot of the link (op, a, b): holding its id + 1, or 0 where it would go. */
static inline __attribute__((always_inline)) uint32_t *link_find(const link_table *T, uint32_t op, uint32_t a, uint32_t b)
{
    size_t i = link_hash(T, op, a, b);
    for (uint32_t e; (e = T->s[i]) != 0; i = (i + 1) & (T->cap - 1)) {
        const mblx__node *x = &T->nd[e - 1];
        if (x->op == op && T->args[x->aoff] == a && T->args[x->aoff + 1] == b) break;
    }
    return &T->s[i];
}

/* Make room for one more link (the table at most half full); -1 when out of memory. */
static int link_reserve(link_table *T)
{
    if (2 * (T->n + 1) <= T->cap) return 0;
    link_table N = *T;
    N.cap = T->cap * 2;
    if (!(N.s = mbl_calloc(N.cap, sizeof *N.s))) return -1;
    mblx__hugepages(N.s, N.cap * sizeof *N.s);
    for (size_t i = 0; i < T->cap; i++)
        if (T->s[i]) {
            const mblx__node *x = &T->nd[T->s[i] - 1];
            *link_find(&N, x->op, T->args[x->aoff], T->args[x->aoff + 1]) = T->s[i];
        }
    mbl_free(T->s);
    *T = N;
    return 0;
}

/* The owners of nl0 nodes (base[l], or l when base is NULL), in an array of nmax entries (a
 * link's is set where it is made); NULL when out of memory. */
static uint32_t *owners(const uint32_t *base, size_t nl0, size_t nmax)
{
    uint32_t *owner = mbl_alloc_array(nmax ? nmax : 1, sizeof *owner);
    if (!owner) return NULL;
    mblx__hugepages(owner, nmax * sizeof *owner);
    if (base) memcpy(owner, base, nl0 * sizeof *owner);
    for (size_t l = 0; !base && l < nl0; l++) owner[l] = (uint32_t)l;
    return owner;
}

/* Rewrite the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands) with its sums and products
 * as interned chains (see above), into new compile arrays *pcl, *pca (*pnl nodes, *pka operands;
 * NULL when there is nothing to share). outl: the outputs' local nodes (replaced by their
 * aliases); *powner (allocated here, *pnl entries): the node of the original sub-DAG that a node
 * computes or is a link of (the one error messages show), mapped through base[] when not NULL. post:
 * the post-order of lnd from outl (mblx__share), or NULL: made here. lcap, acap: the capacities of lnd and
 * largs when they may be rewritten; if they hold the chains' upper bounds, the chains are made in
 * them (*pcl == lnd, *pca == largs), else (and with 0, 0) in a copy and lnd, largs are only read.
 * *pops: the operations of the result that dag_ops would count, SIZE_MAX when nothing is shared
 * (dag_ops must count them).
 * Returns 0, or -1 when out of memory (lnd, largs then rewritten in part: not to be used).
 *
 * The operations are counted as the chains are made: every node of the post-order stays reachable
 * from the outputs unless it becomes an alias (the chain it is aliased to has its operands as
 * operands of its links), and every link made is reachable from the node it was made for, which is
 * no alias. So the count is one per link made (a new node, or the node itself as its last link:
 * two operands, its constant fused), one per node left with one operand (its constant applied to
 * the chain) and one per node that is no sum or product; an alias counts nothing. */
static int share_chains(mblx__node *lnd, uint32_t *largs, size_t nl0, size_t ka0, size_t lcap, size_t acap,
                        uint32_t *outl, size_t nout, const uint32_t *base, const uint32_t *post, mblx__node **pcl,
                        uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner, size_t *pops)
{
    size_t extra = 0, nnary = 0;
    *pcl = NULL;
    *pca = NULL;
    *pnl = nl0;
    *pka = ka0;
    *pops = SIZE_MAX;
    for (size_t l = 0; l < nl0; l++)
        if (mblx__nary_local(&lnd[l])) {
            extra += lnd[l].na - 1;
            nnary++;
        }
    int rc = -1;
    size_t nmax = nl0 + extra, nl = nl0, ka = ka0;
    uint32_t *owner = *powner = owners(base, nl0, nmax);
    if (!owner) return -1;
    if (!extra) return 0;
    /* compile arrays at their upper bounds (pages never written cost nothing), or lnd and largs
     * themselves when they have room (no copy: the N = 10^4 four-bar's residual, 22 MB) */
    int inplace = lcap >= nmax && acap >= ka0 + 2 * extra;
    mblx__node *cl = inplace ? lnd : mbl_alloc_array(nmax, sizeof *cl);
    uint32_t *ca = inplace ? largs : mbl_alloc_array(ka0 + 2 * extra, sizeof *ca);
    uint32_t *alias = mbl_alloc_array(nl0, sizeof *alias); /* read for the original nodes alone */
    uint32_t *order = post ? NULL : mbl_alloc_array(nl0, sizeof *order);
    unsigned char *mark = post ? NULL : mbl_alloc_array(nl0, 1);
    link_table T = {NULL, 64, 0, NULL, NULL};
    while (T.cap < 4 * nnary) T.cap *= 2;
    T.s = mbl_calloc(T.cap, sizeof *T.s);
    if (!cl || !ca || !alias || (!post && (!order || !mark)) || !T.s) goto out;
    if (!inplace) {
        mblx__hugepages(cl, nmax * sizeof *cl);
        mblx__hugepages(ca, (ka0 + 2 * extra) * sizeof *ca);
        memcpy(cl, lnd, nl0 * sizeof *cl);
        memcpy(ca, largs, ka0 * sizeof *ca);
    }
    mblx__hugepages(alias, nl0 * sizeof *alias);
    if (order) mblx__hugepages(order, nl0 * sizeof *order);
    mblx__hugepages(T.s, T.cap * sizeof *T.s);
    T.nd = cl;
    T.args = ca;
    for (size_t l = 0; l < nl0; l++) alias[l] = (uint32_t)l;
    size_t no = post ? nl0 : mblx__local_postorder(cl, ca, nl0, outl, nout, mark, order), ops = 0;
    if (no == SIZE_MAX) goto out;
    const uint32_t *ord = post ? post : order;
    int pf = T.cap >= CHAIN_PREFETCH_MIN; /* (the table only grows) */
    for (size_t p = 0; p < no; p++) {
        uint32_t l = ord[p];
        mblx__node *nd = &cl[l];
        uint32_t *a = ca + nd->aoff;
        if (p && !(p & 0xffff) && core_progress_tick((double)p)) goto out; /* a load's report */
#if defined(__GNUC__)
        /* A large table's slot is a cache miss, most of this loop's time at N = 10^4 (perf): the
         * slot of the first link of the node CHAIN_AHEAD places on is fetched now (its operands'
         * aliases may still change before it is reached: then a slot is fetched for nothing). */
        if (pf && p + CHAIN_AHEAD < no) {
            const mblx__node *nx = &cl[ord[p + CHAIN_AHEAD]];
            if (mblx__nary_local(nx))
                __builtin_prefetch(&T.s[link_hash(&T, nx->op, alias[ca[nx->aoff]], alias[ca[nx->aoff + 1]])], 1);
        }
#endif
        int nary = mblx__nary_local(nd);
        if (!nary) ops++; /* one instruction (na 1: the constant applied) */
        if (!nd->na) continue;
        for (uint32_t i = 0; i < nd->na; i++) a[i] = alias[a[i]]; /* operands come first */
        if (!nary) continue;
        /* the operands in the graph's order: every sum and product is computed in the same
         * order as without sharing, so values are bit-identical (a[0], a[1] are rewritten only
         * at the last link, after every operand was read) */
        uint32_t op = nd->op, k = nd->na;
        int ident = nd->val == (op == MBLX_OP_ADD ? 0.0 : 1.0);
        uint32_t pre = a[0];
        for (uint32_t i = 1; i < k; i++) {
            uint32_t x = a[i], *s = link_find(&T, op, pre, x);
            if (*s) {
                pre = *s - 1;
                continue;
            }
            uint32_t id;
            ops++; /* a link made */
            if (i == k - 1) { /* the node itself is the last link (with its constant) */
                id = l;
                a[0] = pre;
                a[1] = x;
                nd->na = 2;
                if (!ident) { /* not the value of the link: not shared */
                    pre = l;
                    break;
                }
            } else {
                id = (uint32_t)nl++;
                owner[id] = owner[l];
                cl[id] = (mblx__node){.val = op == MBLX_OP_ADD ? 0.0 : 1.0, .aoff = (uint32_t)ka, .na = 2, .op = op};
                ca[ka++] = pre;
                ca[ka++] = x;
            }
            if (2 * (T.n + 1) > T.cap) { /* the table grows: the slot moves */
                if (link_reserve(&T)) goto out;
                s = link_find(&T, op, pre, x);
            }
            *s = id + 1;
            T.n++;
            pre = id;
        }
        if (pre == l) continue;
        if (ident) {
            alias[l] = pre; /* equal to an earlier chain */
        } else {
            a[0] = pre; /* constant term or coefficient applied to the chain */
            nd->na = 1;
            ops++;
        }
    }
    for (size_t o = 0; o < nout; o++) outl[o] = alias[outl[o]];
    *pcl = cl;
    *pca = ca;
    cl = NULL;
    ca = NULL;
    *pnl = nl;
    *pka = ka;
    *pops = ops;
    rc = 0;
out:
    if (!inplace) {
        mbl_free(cl);
        mbl_free(ca);
    }
    mbl_free(alias);
    mbl_free(order);
    mbl_free(mark);
    mbl_free(T.s);
    return rc;
}

/* ---- sharing common pairs of operands ------------------------------------------------------
 *
 * Chains share only prefixes in the graph's order. Symbolic derivatives of products of rotation
 * entries are sums of products that have pairs of factors in common at any position (sin(psi)
 * sin(phi) multiplies terms that begin with der(psi) in one product and with cos(theta) in
 * another), and sums that have pairs of terms in common. Before the chains, the compiler runs
 * the classic greedy pair extraction: in rounds, it counts how many sums (products) of the
 * compiled sub-DAG contain each pair of operands, and every sum (product) replaces its pairs
 * with the largest counts (each operand used once, counts of at least 2) by one binary node
 * (op, x, y), interned across the whole sub-DAG (an existing x*y or x + y is reused). A node of
 * k operands keeps k - 1 operations however its operands are grouped, and every shared pair is
 * one operation fewer for each further node that has it. The grouping changes the order of the
 * additions and multiplications: results agree with the ungrouped ones to rounding. Only sums
 * and products of at most PAIR_MAX_ARGS operands take part (the pairs of a node are counted,
 * k (k - 1) / 2 of them), for at most PAIR_ROUNDS rounds. */
enum { PAIR_MAX_ARGS = MBLX__PAIR_MAX_ARGS, PAIR_BUDGET = 6, PAIR_MAX = 1 << 18 };

/* Open-addressing table of pairs (op, x, y), x < y: key and a count or a node id + 1. The
 * operation is a sum or a product, one bit of the key (x < 2^31). */
typedef struct pair_table {
    uint64_t *key; /* (mul << 63 | x << 32 | y); 0 = empty (x < y, so y > 0 in a used key) */
    uint32_t *val;
    size_t cap, n;
} pair_table;

static uint64_t pair_key(uint32_t op, uint32_t x, uint32_t y)
{
    return (uint64_t)(op == MBLX_OP_MUL) << 63 | (uint64_t)x << 32 | y;
}

static size_t pair_slot(const pair_table *P, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    size_t i = (size_t)(h * 0xbf58476d1ce4e5b9ull >> 17) & (P->cap - 1);
    while (P->key[i] && P->key[i] != k) i = (i + 1) & (P->cap - 1);
    return i;
}

static int pair_init(pair_table *P, size_t want)
{
    size_t cap = 64;
    while (cap < 2 * want + 2) cap *= 2;
    P->key = mblx__zeroed_alloc(cap, sizeof *P->key); /* (zeroed: empty slots) */
    P->val = mbl_alloc_array(cap, sizeof *P->val);
    P->cap = cap;
    P->n = 0;
    if (!P->key || !P->val) return -1;
    return 0;
}

static void pair_free(pair_table *P)
{
    mblx__zeroed_free(P->key, P->cap, sizeof *P->key);
    mbl_free(P->val);
    P->key = NULL, P->val = NULL;
}

/* Pointer to the value of (op, x, y) (x < y), inserted with 0 when absent; NULL when out of
 * memory. */
static inline __attribute__((always_inline)) uint32_t *pair_get(pair_table *P, uint32_t op, uint32_t x, uint32_t y, int insert)
{
    uint64_t k = pair_key(op, x, y);
    size_t i = pair_slot(P, k);
    if (P->key[i]) return &P->val[i];
    if (!insert) return NULL;
    if (2 * (P->n + 1) > P->cap) {
        pair_table N;
        if (pair_init(&N, P->cap)) {
            pair_free(&N);
            return NULL;
        }
        for (size_t j = 0; j < P->cap; j++)
            if (P->key[j]) {
                size_t s = pair_slot(&N, P->key[j]);
                N.key[s] = P->key[j], N.val[s] = P->val[j];
            }
        N.n = P->n;
        pair_free(P);
        *P = N;
        i = pair_slot(P, k);
    }
    P->key[i] = k;
    P->val[i] = 0;
    P->n++;
    return &P->val[i];
}

/* A pair's record: its count of containers, its list of containers (occurrences, possibly
 * stale), its operation and operands, and its age (seq: the order in which the search as
 * written would have made the records; see count_pairs). */
typedef struct pair_rec {
    uint32_t cnt, head, x, y, seq;
    uint8_t op;
} pair_rec;

/* A heap entry: key (count << 32) | ~seq, the largest count first, then the oldest record; r the
 * record. */
typedef struct heap_ent {
    uint64_t key;
    uint32_t r;
} heap_ent;

typedef struct pair_heap {
    heap_ent *h;
    size_t n, cap;
} pair_heap;

static int heap_push(pair_heap *H, uint32_t cnt, uint32_t seq, uint32_t r)
{
    if (H->n == H->cap) {
        size_t nc = H->cap ? 2 * H->cap : INIT_CAP;
        heap_ent *q = mbl_realloc_array(H->h, nc, sizeof *q);
        if (!q) return -1;
        H->h = q, H->cap = nc;
    }
    heap_ent e = {(uint64_t)cnt << 32 | (uint32_t)~seq, r};
    size_t i = H->n++;
    while (i > 0 && H->h[(i - 1) / 2].key < e.key) {
        H->h[i] = H->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    H->h[i] = e;
    return 0;
}

static heap_ent heap_pop(pair_heap *H)
{
    heap_ent top = H->h[0], e = H->h[--H->n];
    size_t i = 0, n = H->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && H->h[c + 1].key > H->h[c].key) c++;
        if (H->h[c].key <= e.key) break;
        H->h[i] = H->h[c];
        i = c;
    }
    if (n) H->h[i] = e;
    return top;
}

static int pair_container(const mblx__node *nd)
{
    return (nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na >= 3 && nd->na <= PAIR_MAX_ARGS;
}

/* Position of operand x in a[0..k), or -1. */
static int find_operand(const uint32_t *a, uint32_t k, uint32_t x)
{
    for (uint32_t i = 0; i < k; i++)
        if (a[i] == x) return (int)i;
    return -1;
}

/* The state of one share_pairs call: the rewritten copy (cl, ca: nl nodes, ka operands) with its
 * owners and aliases, the pairs' records with their occurrence lists, the heap of counts, the
 * pairs counted (C) and the binary nodes there are (L); the sub-DAG as given (lnd, largs: nl0
 * nodes) and, for the pairs left uncounted (count_pairs), the operands' occurrences (fq: 2 per
 * node, sums then products; home: the container of an operand that occurs once) and each
 * container's first enumeration position (epos, EPOS_DUP: a container with an operand twice). */
typedef struct pairing {
    mblx__node *cl;
    uint32_t *ca, *owner, *alias;
    size_t nl, ka, npairs, nl0;
    const mblx__node *lnd;
    const uint32_t *largs;
    uint32_t *fq, *home, *epos;
    uint32_t *list; /* the containers (ncont, in order), then the binary sums and products (nbin) */
    size_t ncont, nbin;
    uint32_t seq_next; /* the age of the next record the extraction makes */
    pair_rec *R;
    size_t nr, rcap;
    uint32_t *occ_c, *occ_next; /* occurrence o: container occ_c[o], next occ_next[o] */
    size_t no, ocap;
    uint32_t *touched, *live;
    size_t lcap;
    pair_heap H;
    pair_table C, L;
} pairing;

static void pairing_free(pairing *s)
{
    mbl_free(s->cl);
    mbl_free(s->ca);
    mbl_free(s->owner);
    mbl_free(s->alias);
    mbl_free(s->R);
    mbl_free(s->occ_c);
    mbl_free(s->occ_next);
    mbl_free(s->touched);
    mbl_free(s->live);
    mbl_free(s->H.h);
    mbl_free(s->fq);
    pair_free(&s->C);
    pair_free(&s->L);
}

/* One more occurrence of the pair (op, x, y) in container c (its record made at the first, of age
 * seq); *pr: the record. */
static inline __attribute__((always_inline)) int add_occ(pairing *s, uint32_t op, uint32_t x, uint32_t y, uint32_t c, uint32_t seq, uint32_t *pr)
{
    uint32_t x_ = x < y ? x : y, y_ = x < y ? y : x;
    uint32_t *v = pair_get(&s->C, op, x_, y_, 1);
    if (!v) return -1;
    if (!*v) {
        if (s->nr == s->rcap) {
            size_t nc = s->rcap ? 2 * s->rcap : INIT_CAP;
            pair_rec *q = mbl_realloc_array(s->R, nc, sizeof *q);
            if (!q) return -1;
            s->R = q, s->rcap = nc;
        }
        s->R[s->nr] = (pair_rec){0, XNONE, x_, y_, seq, (uint8_t)op};
        *v = (uint32_t)++s->nr;
    }
    *pr = *v - 1;
    pair_rec *r = &s->R[*v - 1];
    if (s->no == s->ocap) {
        size_t nc = s->ocap ? 2 * s->ocap : s->npairs + INIT_CAP;
        uint32_t *q1 = mbl_realloc_array(s->occ_c, nc, sizeof *q1);
        if (!q1) return -1;
        s->occ_c = q1;
        uint32_t *q2 = mbl_realloc_array(s->occ_next, nc, sizeof *q2);
        if (!q2) return -1;
        s->occ_next = q2;
        s->ocap = nc;
    }
    s->occ_c[s->no] = c;
    s->occ_next[s->no] = r->head;
    r->head = (uint32_t)s->no++;
    r->cnt++;
    return 0;
}

/* A container's flag in epos: it has an operand twice (all its pairs are counted). */
#define EPOS_DUP 0x80000000u

/* Position of the pair (i, j), i < j, among the pairs of a container of k operands in the order
 * count_pairs enumerates them. */
static uint32_t tri_pos(uint32_t i, uint32_t j, uint32_t k) { return i * (2 * k - i - 1) / 2 + (j - i - 1); }

/* The operands' occurrences in the containers (s->fq, s->home; s->epos' flags) and the lists of
 * containers and binary sums and products (s->list); returns the number of pairs count_pairs will
 * count, or SIZE_MAX when out of memory. */
static size_t operand_counts(pairing *s, size_t nl0)
{
    if (!(s->fq = mbl_alloc_array(7 * nl0, sizeof *s->fq))) return SIZE_MAX;
    mblx__hugepages(s->fq, 7 * nl0 * sizeof *s->fq);
    uint32_t *fq = s->fq, *stamp = fq + 4 * nl0;
    s->home = fq + 2 * nl0;
    s->epos = fq + 5 * nl0;
    s->list = fq + 6 * nl0;
    s->ncont = s->nbin = 0;
    memset(fq, 0, 2 * nl0 * sizeof *fq);
    for (size_t l = 0; l < nl0; l++) stamp[l] = XNONE;
    for (size_t l = 0; l < nl0; l++) {
        const mblx__node *nd = &s->cl[l];
        if (!pair_container(nd)) {
            if ((nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na == 2) s->list[nl0 - ++s->nbin] = (uint32_t)l;
            continue;
        }
        s->list[s->ncont++] = (uint32_t)l;
        const uint32_t *a = s->ca + nd->aoff;
        uint32_t m = nd->op == MBLX_OP_MUL, dup = 0;
        for (uint32_t i = 0; i < nd->na; i++) {
            size_t v = a[i];
            if (stamp[v] == (uint32_t)l) dup = EPOS_DUP;
            stamp[v] = (uint32_t)l;
            if (fq[2 * v + m]++ == 0) s->home[2 * v + m] = (uint32_t)l;
        }
        s->epos[l] = dup;
    }
    size_t want = 0;
    for (size_t q = 0; q < s->ncont; q++) {
        uint32_t l = s->list[q];
        const mblx__node *nd = &s->cl[l];
        const uint32_t *a = s->ca + nd->aoff;
        uint32_t m = nd->op == MBLX_OP_MUL, k = 0;
        if (s->epos[l] & EPOS_DUP) k = nd->na;
        else
            for (uint32_t i = 0; i < nd->na; i++) k += fq[2 * (size_t)a[i] + m] > 1;
        want += (size_t)k * (k - 1) / 2;
    }
    return want;
}

/* The binary sums and products there are, and the pairs of every container: those of an operand
 * that occurs once in the containers of its operation (sums or products) are not counted. Such a
 * pair is in one container, its count stays 1 unless the extraction makes the pair again (a pair
 * node that already existed, t = x y, when it comes into a container beside z where the pair
 * (z, t) is in the sub-DAG as given: apply_pair then makes its record first, uncount_make). A
 * record's age (seq) is the position of its first occurrence in the enumeration of every pair of
 * every container, in order, as the search made its records when it counted them all, so the heap
 * takes the pairs in the same order and the result is the same. A container with an operand twice
 * has all its pairs counted (its pairs' counts can be 2 there alone). */
static int count_pairs(pairing *s, size_t nl0)
{
    const uint32_t *fq = s->fq;
    uint32_t e = 0, rr;
    for (size_t q = 1; q <= s->nbin; q++) { /* (the first of equal binary nodes is kept) */
        uint32_t l = s->list[nl0 - q];
        const mblx__node *nd = &s->cl[l];
        const uint32_t *a = s->ca + nd->aoff;
        if (nd->val == (nd->op == MBLX_OP_ADD ? 0.0 : 1.0) && a[0] != a[1]) {
            uint32_t *v = pair_get(&s->L, nd->op, a[0] < a[1] ? a[0] : a[1], a[0] < a[1] ? a[1] : a[0], 1);
            if (!v) return -1;
            if (!*v) *v = l + 1;
        }
    }
    for (size_t q = 0; q < s->ncont; q++) {
        uint32_t l = s->list[q];
        const mblx__node *nd = &s->cl[l];
        const uint32_t *a = s->ca + nd->aoff;
        uint32_t k = nd->na, m = nd->op == MBLX_OP_MUL, all = s->epos[l] & EPOS_DUP, pos[PAIR_MAX_ARGS], np = 0;
        s->epos[l] |= e;
        for (uint32_t i = 0; i < k; i++) /* the operands whose pairs are counted */
            if (all || fq[2 * (size_t)a[i] + m] > 1) pos[np++] = i;
        for (uint32_t x = 0; x < np; x++) {
            uint32_t i = pos[x], ei = e + tri_pos(i, i + 1, k);
            for (uint32_t y = x + 1; y < np; y++) {
                uint32_t j = pos[y];
                if (a[i] != a[j] && add_occ(s, nd->op, a[i], a[j], l, ei + (j - i - 1), &rr)) return -1;
            }
        }
        e += k * (k - 1) / 2;
    }
    s->seq_next = e;
    for (size_t r = 0; r < s->nr; r++)
        if (s->R[r].cnt >= 2 && heap_push(&s->H, s->R[r].cnt, s->R[r].seq, (uint32_t)r)) return -1;
    return 0;
}

/* The record of the pair (op, z, t) that count_pairs left uncounted, made with its one
 * occurrence (as counting it would have made it), when there is one and no record yet: z and t
 * nodes of the sub-DAG as given, one of them in one container, which has both (and no operand
 * twice). Returns 0, or -1 when out of memory. */
static int uncount_make(pairing *s, uint32_t op, uint32_t z, uint32_t t)
{
    size_t nl0 = s->nl0;
    if (z >= nl0 || t >= nl0) return 0;
    uint32_t m = op == MBLX_OP_MUL, fz = s->fq[2 * (size_t)z + m], ft = s->fq[2 * (size_t)t + m];
    if (fz != 1 && ft != 1) return 0;
    uint32_t c = fz == 1 ? s->home[2 * (size_t)z + m] : s->home[2 * (size_t)t + m];
    if (s->epos[c] & EPOS_DUP || s->lnd[c].op != op) return 0;
    const uint32_t *a = s->largs + s->lnd[c].aoff;
    uint32_t k = s->lnd[c].na, iz = k, it = k, rr;
    for (uint32_t i = 0; i < k; i++) {
        if (a[i] == z) iz = i;
        if (a[i] == t) it = i;
    }
    if (iz == k || it == k) return 0;
    uint32_t lo = z < t ? z : t, hi = z < t ? t : z;
    if (pair_get(&s->C, op, lo, hi, 0)) return 0;
    uint32_t i = iz < it ? iz : it, j = iz < it ? it : iz;
    return add_occ(s, op, a[i], a[j], c, (s->epos[c] & ~EPOS_DUP) + tri_pos(i, j, k), &rr);
}

/* the containers of record r that still have both operands into live[0..*nlive) (dropping the
 * others from its list) */
static int live_containers(pairing *s, uint32_t r, uint32_t *nlive)
{
    uint32_t x = s->R[r].x, y = s->R[r].y;
    *nlive = 0;
    uint32_t *link = &s->R[r].head;
    for (uint32_t p = *link; p != XNONE; p = *link) {
        const mblx__node *nd = &s->cl[s->occ_c[p]];
        const uint32_t *a = s->ca + nd->aoff;
        if (find_operand(a, nd->na, x) >= 0 && find_operand(a, nd->na, y) >= 0) {
            if (*nlive == s->lcap) {
                size_t nc = s->lcap ? 2 * s->lcap : INIT_CAP;
                uint32_t *q = mbl_realloc_array(s->live, nc, sizeof *q);
                if (!q) return -1;
                s->live = q, s->lcap = nc;
            }
            s->live[(*nlive)++] = s->occ_c[p];
            link = &s->occ_next[p];
        } else {
            *link = s->occ_next[p];
        }
    }
    return 0;
}

/* Record r's pair (op, x, y) as a node t of its own (an existing x + y or x * y reused), which
 * replaces x and y in each of the nlive containers live[]; their new pairs (z, t) are counted. */
static int apply_pair(pairing *s, uint32_t r, uint32_t nlive)
{
    uint32_t op = s->R[r].op, x = s->R[r].x, y = s->R[r].y;
    s->R[r].cnt = 0;
    s->R[r].head = XNONE;
    uint32_t *v = pair_get(&s->L, op, x, y, 1);
    if (!v) return -1;
    if (!*v) {
        uint32_t id = (uint32_t)s->nl++;
        s->cl[id] = (mblx__node){.val = op == MBLX_OP_ADD ? 0.0 : 1.0, .aoff = (uint32_t)s->ka, .na = 2, .op = op};
        s->ca[s->ka++] = x;
        s->ca[s->ka++] = y;
        s->owner[id] = s->owner[s->live[0]];
        s->alias[id] = id;
        *v = id + 1;
    }
    uint32_t t = *v - 1;
    for (uint32_t q = 0; q < nlive; q++) {
        uint32_t c = s->live[q];
        mblx__node *nd = &s->cl[c];
        uint32_t *a = s->ca + nd->aoff, m = 0, nt = 0;
        /* one x and one y replaced by t: an operand can be there twice (the pair's node, reused,
         * beside its own operands: x*y*(x*y) becomes t*t), and a container twice in live[] (its
         * pair counted once per such occurrence), so it takes the pair only while it has both */
        if (find_operand(a, nd->na, x) < 0 || find_operand(a, nd->na, y) < 0) continue;
        int hx = 0, hy = 0;
        for (uint32_t i = 0; i < nd->na; i++) {
            if (!hx && a[i] == x) hx = 1;
            else if (!hy && a[i] == y) hy = 1;
            else a[m++] = a[i];
        }
        /* the new pairs (z, t) of this container */
        for (uint32_t i = 0; i < m; i++) {
            if (a[i] == t) continue;
            if (uncount_make(s, op, a[i], t)) return -1;
            size_t nr0 = s->nr;
            if (add_occ(s, op, a[i], t, c, s->seq_next, &s->touched[nt++])) return -1;
            s->seq_next += s->nr > nr0; /* a record made */
        }
        a[m++] = t;
        nd->na = m;
        for (uint32_t i = 0; i < nt; i++) {
            const pair_rec *R = &s->R[s->touched[i]];
            if (R->cnt >= 2 && heap_push(&s->H, R->cnt, R->seq, s->touched[i])) return -1;
        }
    }
    return 0;
}

/* the most frequent pair first: every container that still has both operands gets it; returns
 * 1 when a pair was shared, 0 when none, -1 when out of memory */
static int extract_pairs(pairing *s)
{
    int changed = 0;
    while (s->H.n) {
        heap_ent e = heap_pop(&s->H);
        uint32_t r = e.r, cnt = (uint32_t)(e.key >> 32), nlive = 0;
        if (s->R[r].cnt != cnt) continue; /* a stale entry: the record was pushed again */
        if (live_containers(s, r, &nlive)) return -1;
        if (nlive < cnt) {
            s->R[r].cnt = nlive;
            if (nlive >= 2 && heap_push(&s->H, nlive, s->R[r].seq, r)) return -1;
            continue;
        }
        if (apply_pair(s, r, nlive)) return -1;
        changed = 1;
    }
    return changed;
}

/* Rewrite the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands) with common pairs of operands
 * as nodes of their own (see above) into new arrays *pcl, *pca (*pnl nodes, *pka operands; NULL
 * when no pair is shared). outl: the outputs (replaced by their aliases); *powner (*pnl
 * entries): the node of the sub-DAG a node computes or was made for (through base[] when not
 * NULL). Returns 0, or -1 when out
 * of memory. */
/* A sub-DAG with more than PAIR_MAX pairs, or PAIR_BUDGET times more pairs than operands (long
 * chains of nested sums), is left to the chains, which share its prefixes anyway. */
static int pairs_declined(size_t npairs, size_t ka0)
{
    return !npairs || npairs > PAIR_MAX || npairs > PAIR_BUDGET * ka0 + 4096;
}

/* npairs0: the sub-DAG's pairs (mblx__pairs_local) as the compiler counted them, or SIZE_MAX; a
 * count that declines skips the pass over the nodes (the N = 10^4 four-bar's residual: 690,057
 * nodes, 10 M instructions). */
static int share_pairs(const mblx__node *lnd, const uint32_t *largs, size_t nl0, size_t ka0, size_t npairs0,
                       uint32_t *outl, size_t nout, const uint32_t *base, mblx__node **pcl, uint32_t **pca, size_t *pnl,
                       size_t *pka, uint32_t **powner, size_t *plcap, size_t *pacap)
{
    *pcl = NULL;
    *pca = NULL;
    *pnl = nl0;
    *pka = ka0;
    *powner = NULL;
    if (npairs0 != SIZE_MAX && pairs_declined(npairs0, ka0)) return 0;
    size_t npairs = 0, extra = 0, nbin = 0, chain = 0;
    for (size_t l = 0; l < nl0; l++) {
        if (mblx__nary_local(&lnd[l])) chain += lnd[l].na - 1;
        if (pair_container(&lnd[l])) {
            npairs += mblx__pairs_local(&lnd[l]);
            extra += lnd[l].na - 1;
        } else {
            nbin += (lnd[l].op == MBLX_OP_ADD || lnd[l].op == MBLX_OP_MUL) && lnd[l].na == 2;
        }
    }
    if (pairs_declined(npairs, ka0)) return 0;
    int rc = -1;
    size_t nmax = nl0 + extra; /* a pair node removes an operand from at least two sums or products */
    if (nmax >= 0x80000000u) return 0; /* node ids below 2^31 (pair_key) */
    pairing s = {.npairs = npairs, .H = {NULL, 0, 0}, .nl0 = nl0, .lnd = lnd, .largs = largs};
    /* room for the chains that follow (share_chains makes them in place: no copy): the pairs
     * remove operands, so the sub-DAG's own chain links bound the shared form's (extra pages are
     * never touched) */
    size_t lcap = nmax + chain, acap = ka0 + 2 * extra + 2 * chain;
    s.cl = mbl_alloc_array(lcap, sizeof *s.cl);
    s.ca = mbl_alloc_array(acap, sizeof *s.ca);
    mblx__hugepages(s.cl, lcap * sizeof *s.cl);
    mblx__hugepages(s.ca, acap * sizeof *s.ca);
    s.owner = mbl_alloc_array(nmax, sizeof *s.owner);
    s.alias = mbl_alloc_array(nmax, sizeof *s.alias);
    if (!s.cl || !s.ca || !s.owner || !s.alias) goto out;
    memcpy(s.cl, lnd, nl0 * sizeof *s.cl);
    memcpy(s.ca, largs, ka0 * sizeof *s.ca);
    size_t want = operand_counts(&s, nl0); /* the pairs counted */
    s.npairs = want;
    if (want == SIZE_MAX || pair_init(&s.C, want + extra / 4) ||
        pair_init(&s.L, nbin + extra / 4)) /* the binary nodes there are, then it grows */
        goto out;
    s.nl = nl0, s.ka = ka0;
    /* (a pair node's, from nl0 on, are set where it is made: apply_pair) */
    if (base) memcpy(s.owner, base, nl0 * sizeof *s.owner);
    else
        for (size_t l = 0; l < nl0; l++) s.owner[l] = (uint32_t)l;
    for (size_t l = 0; l < nl0; l++) s.alias[l] = (uint32_t)l;
    if (count_pairs(&s, nl0)) goto out;
    if (!(s.touched = mbl_alloc_array(PAIR_MAX_ARGS, sizeof *s.touched))) goto out;
    int changed = extract_pairs(&s);
    if (changed < 0) goto out;
    if (!changed) {
        rc = 0;
        goto out;
    }
    /* a sum or product left with one operand and no constant is that operand (the operands of the
     * nodes before the first such one stay as they are) */
    size_t l0 = 0;
    while (l0 < s.nl && !(s.cl[l0].na == 1 && (s.cl[l0].op == MBLX_OP_ADD || s.cl[l0].op == MBLX_OP_MUL) &&
                          s.cl[l0].val == (s.cl[l0].op == MBLX_OP_ADD ? 0.0 : 1.0)))
        l0++;
    for (size_t l = l0; l < s.nl; l++) {
        mblx__node *nd = &s.cl[l];
        uint32_t *a = s.ca + nd->aoff;
        for (uint32_t i = 0; i < nd->na; i++) a[i] = s.alias[a[i]];
        if ((nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na == 1 &&
            nd->val == (nd->op == MBLX_OP_ADD ? 0.0 : 1.0))
            s.alias[l] = a[0];
    }
    for (size_t o = 0; o < nout; o++) outl[o] = s.alias[outl[o]];
    *pcl = s.cl;
    *pca = s.ca;
    *powner = s.owner;
    s.cl = NULL;
    s.ca = NULL;
    s.owner = NULL;
    *pnl = s.nl;
    *pka = s.ka;
    *plcap = lcap;
    *pacap = acap;
    rc = 0;
out:
    pairing_free(&s);
    return rc;
}

/* Operations of the local sub-DAG (nd, args: nl nodes) reachable from outl[0..nout), as the
 * emitter will count them (a sum or product of k >= 2 operands: k - 1, plus its constant when
 * k > 2; everything else one); SIZE_MAX when out of memory. */
static size_t dag_ops(const mblx__node *nd, const uint32_t *args, size_t nl, const uint32_t *outl, size_t nout)
{
    unsigned char *mark = mbl_alloc_array(nl ? nl : 1, 1);
    uint32_t *order = mbl_alloc_array(nl ? nl : 1, sizeof *order);
    size_t no = mark && order ? mblx__local_postorder(nd, args, nl, outl, nout, mark, order) : SIZE_MAX, ops = 0;
    for (size_t p = 0; no != SIZE_MAX && p < no; p++) {
        const mblx__node *x = &nd[order[p]];
        if (mblx__nary_local(x))
            ops += x->na - 1 + (x->na > 2 && x->val != (x->op == MBLX_OP_ADD ? 0.0 : 1.0));
        else
            ops++;
    }
    mbl_free(mark);
    mbl_free(order);
    return no == SIZE_MAX ? SIZE_MAX : ops;
}

/* Would share_chains share anything in the local sub-DAG (nd, args: nl nodes; outputs outl)? It
 * finds a link in its table only if some chain's first link (op, a[0], a[1]) is one it registered
 * before, in its post-order, as another node's first link (a later link's prefix is a link made for
 * its own chain alone, and aliases come only from found links; a first link is registered unless
 * it is a node's last, with a constant: two operands, not the identity). When none is found, the
 * shared form is the sub-DAG as it is with each sum and product a chain of binary operations over
 * its operands in order, its constant fused into the last one: what the compiler emits with fuse
 * set (tape.c), the same instructions in the same order. The same post-order and one lookup a sum
 * or product, against share_chains' one lookup a link, its link nodes and aliases (the N = 1000
 * four-bar's residual finds no link there). 1: the chains may share (or out of memory: they are
 * then built, as before); 0: they cannot. */
/* The sums and products of at least two operands among nodes nd[0 .. nl). */
static size_t nary_count(const mblx__node *nd, size_t nl)
{
    size_t k = 0;
    for (size_t l = 0; l < nl; l++) k += mblx__nary_local(&nd[l]);
    return k;
}

/* Their pairs of operands (mblx__pairs_local; tests: chains_mode 3). */
static size_t pair_count(const mblx__node *nd, size_t nl)
{
    size_t k = 0;
    for (size_t l = 0; l < nl; l++) k += mblx__pairs_local(&nd[l]);
    return k;
}

static int chains_may_share(const mblx__node *nd, const uint32_t *args, size_t nl, const uint32_t *outl, size_t nout,
                            const uint32_t *post, size_t nnary)
{
    if (nnary == SIZE_MAX) nnary = nary_count(nd, nl); /* (the table's size: not given by the compiler) */
    if (nl >= 0x80000000u) return 1; /* (the keys' first operand below 2^31) */
    pair_table P = {NULL, NULL, 0, 0};
    unsigned char *mark = post ? NULL : mbl_alloc_array(nl ? nl : 1, 1);
    uint32_t *order = post ? NULL : mbl_alloc_array(nl ? nl : 1, sizeof *order);
    int found = 1;
    size_t no = post ? nl : mark && order ? mblx__local_postorder(nd, args, nl, outl, nout, mark, order) : SIZE_MAX;
    const uint32_t *ord = post ? post : order;
    mbl_free(mark);
    if (no != SIZE_MAX && !pair_init(&P, nnary)) {
        found = 0;
        for (size_t p = 0; p < no && !found; p++) {
            const mblx__node *x = &nd[ord[p]];
            if (!mblx__nary_local(x)) continue;
            const uint32_t *a = args + x->aoff;
            uint64_t k = pair_key(x->op, a[0], a[1] + 1); /* (never 0, the empty slot's key) */
            size_t i = pair_slot(&P, k);
            if (P.key[i]) found = 1; /* (only registered links are inserted) */
            else if (x->na > 2 || x->val == (x->op == MBLX_OP_ADD ? 0.0 : 1.0)) P.key[i] = k;
        }
    }
    pair_free(&P);
    mbl_free(order);
    return found;
}

/* The check of chains_may_share costs the chains' post-order and a lookup a sum or product: taken
 * from this many nodes on, where the chains' own work it saves is large (the N = 1000 four-bar's
 * residual: 69,000 nodes); below, where the chains often share something (the nonlinear bicycle's
 * residual, 1,790 nodes: the check found a link, and cost its one-shot 159 k instructions, 1.7 %),
 * the chains are built as before. */
enum { CHAINS_CHECK_MIN = 1 << 14 };

static int chains_mode; /* mblx__share_chains_mode */

void mblx__share_chains_mode(int mode) { chains_mode = mode >= 0 && mode <= 3 ? mode : 0; }

/* Is post (mblx__share's) the post-order mblx__local_postorder makes? (tests: chains_mode 3) */
static int post_as_made(const mblx__node *lnd, const uint32_t *largs, size_t nl0, const uint32_t *outl, size_t nout,
                        const uint32_t *post)
{
    unsigned char *mark = mbl_alloc_array(nl0 ? nl0 : 1, 1);
    uint32_t *order = mbl_alloc_array(nl0 ? nl0 : 1, sizeof *order);
    int same = mark && order && mblx__local_postorder(lnd, largs, nl0, outl, nout, mark, order) == nl0 &&
               !memcmp(order, post, nl0 * sizeof *order);
    mbl_free(mark), mbl_free(order);
    return same;
}

/* Sub-DAGs of at least this many nodes where a pair is shared take the pairs form without building
 * the chains alone too. Over the 136 model files of examples/ and tests/, the pairs form was the
 * shorter in 85 of the 96 sub-DAGs of more than 100 nodes (up to 21 % shorter, 2-8 % in most),
 * as short in 3 and at most 3 % longer in 8; building both forms was a quarter of the nonlinear
 * bicycle's sharing (its residual: 1,790 nodes). Below, both are built as before: a different form
 * changes the rounding of the results, and there the outputs most sensitive to it (fd's backward
 * error, the penalty method's digits, an integrator's step count) moved beyond it (docs/benchmarks.md,
 * branch s22-bike). */
enum { SHARE_ONE_FORM_MIN = 1024 };

/* The shared form of the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands): chains alone (the
 * same operations in the same order as written: bit-identical values), or common pairs and then
 * chains, whichever has fewer operations (the pairs can break prefixes the chains would have
 * shared); from SHARE_ONE_FORM_MIN nodes, the pairs form whenever a pair is shared. With form
 * MBLX__SHARE_CHAINS the chains alone. Outputs as share_chains (*pcl NULL: the sub-DAG as it is; *pcl == lnd: the chains made
 * in lnd and largs, which lcap, acap, when not 0, allow as share_chains says); *powner always
 * allocated. Returns 0, or -1 when out of memory. */
int mblx__share(mblx__node *lnd, uint32_t *largs, size_t nl0, size_t ka0, size_t lcap, size_t acap, uint32_t *outl,
                size_t nout, int form, const uint32_t *base, const uint32_t *post, size_t nnary0, size_t npairs0,
                mblx__node **pcl, uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner, int *pfuse)
{
    int no_pairs = form == MBLX__SHARE_CHAINS;
    *pfuse = 0;
    mblx__node *clA = NULL, *clB = NULL, *pl = NULL;
    uint32_t *caA = NULL, *caB = NULL, *pa = NULL, *ownA = NULL, *ownB = NULL, *ownP = NULL;
    uint32_t *outA = mbl_alloc_array(nout ? nout : 1, sizeof *outA), *outB = mbl_alloc_array(nout ? nout : 1, sizeof *outB);
    size_t nlA, kaA, nlB, kaB, nlP = 0, kaP = 0, lcapP = 0, acapP = 0, opsA = SIZE_MAX, opsB = SIZE_MAX;
    int rc = -1;
    if (!outA || !outB) goto out;
    memcpy(outA, outl, nout * sizeof *outA);
    memcpy(outB, outl, nout * sizeof *outB);
    /* a load's progress report between the steps (core/progress.h): a stop fails as out of memory
     * does, and the compiler tells them apart. The pairs first: they read lnd and largs, which the
     * chains may rewrite */
    int ticks = nl0 >= TICK_MIN_NODES; /* (a small sub-DAG: none) */
    if (chains_mode == 3 && ((post && !post_as_made(lnd, largs, nl0, outl, nout, post)) ||
                             (nnary0 != SIZE_MAX && nnary0 != nary_count(lnd, nl0)) ||
                             (npairs0 != SIZE_MAX && npairs0 != pair_count(lnd, nl0))))
        goto out;
    if ((!no_pairs && share_pairs(lnd, largs, nl0, ka0, npairs0, outB, nout, base, &pl, &pa, &nlP, &kaP, &ownP, &lcapP, &acapP)) ||
        (ticks && core_progress_tick(1)))
        goto out;
    /* no pair nor chain link shared: as it is, fused (the N = 10^4 four-bar's residual: chains 170 M) */
    int alone = !pl && nl0 >= CHAINS_CHECK_MIN && chains_mode != 1;
    if (alone && !chains_may_share(lnd, largs, nl0, outl, nout, post, nnary0)) {
        if (!(*powner = owners(base, nl0, nl0))) goto out;
        *pcl = NULL, *pca = NULL, *pnl = nl0, *pka = ka0, *pfuse = 1;
        rc = 0;
        goto out;
    }
    if (alone && chains_mode == 2) goto out; /* (tests: the chains were to be skipped) */
    if (!pl || nl0 < SHARE_ONE_FORM_MIN) {
        if (share_chains(lnd, largs, nl0, ka0, lcap, acap, outA, nout, base, post, &clA, &caA, &nlA, &kaA, &ownA, &opsA) ||
            (ticks && core_progress_tick(2)))
            goto out;
    }
    if (pl) {
        /* the chains made in the pairs' arrays, which have room for them (share_chains fails
         * with clB NULL: pl still owns them) */
        int skip = nl0 >= CHAINS_CHECK_MIN && chains_mode != 1 && !chains_may_share(pl, pa, nlP, outB, nout, NULL, SIZE_MAX);
        if (chains_mode == 2 && !skip) goto out; /* (tests: the chains were to be skipped) */
        if (skip) { /* the pairs form as it is, fused */
            ownB = ownP, ownP = NULL, nlB = nlP, kaB = kaP;
            *pfuse = 1;
        } else if (share_chains(pl, pa, nlP, kaP, lcapP, acapP, outB, nout, ownP, NULL, &clB, &caB, &nlB, &kaB, &ownB, &opsB)) {
            goto out;
        }
        if (clB == pl) pl = NULL, pa = NULL; /* made in place: owned as clB, caB */
        if (ticks && core_progress_tick(3)) goto out;
        if (!clB) clB = pl, caB = pa, pl = NULL, pa = NULL;
        /* counted by the chains, but where there was nothing to chain */
        int one = nl0 >= SHARE_ONE_FORM_MIN; /* no chains alone to compare with */
        if (!one && opsA == SIZE_MAX) opsA = dag_ops(clA ? clA : lnd, clA ? caA : largs, nlA, outA, nout);
        if (!one && opsB == SIZE_MAX) opsB = dag_ops(clB, caB, nlB, outB, nout);
        if (!one && (opsA == SIZE_MAX || opsB == SIZE_MAX)) goto out;
        if (one || opsB < opsA) {
            memcpy(outl, outB, nout * sizeof *outl);
            *pcl = clB, *pca = caB, *pnl = nlB, *pka = kaB, *powner = ownB;
            clB = NULL, caB = NULL, ownB = NULL;
            rc = 0;
            goto out;
        }
    }
    memcpy(outl, outA, nout * sizeof *outl);
    *pcl = clA, *pca = caA, *pnl = nlA, *pka = kaA, *powner = ownA;
    clA = NULL, caA = NULL, ownA = NULL;
    rc = 0;
out:
    if (clA != lnd) { /* made in lnd and largs: the caller's */
        mbl_free(clA);
        mbl_free(caA);
    }
    mbl_free(ownA);
    mbl_free(clB), mbl_free(caB), mbl_free(ownB);
    mbl_free(pl), mbl_free(pa), mbl_free(ownP);
    mbl_free(outA), mbl_free(outB);
    return rc;
}
