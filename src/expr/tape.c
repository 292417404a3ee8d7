/* Compilation of expression sets into flat register tapes, and their evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"

enum { INIT_CAP = 64 };

/* Tape opcodes. */
enum {
    TI_LDC, TI_LDS, TI_ADD, TI_ADDC, TI_MUL, TI_MULC, TI_SQR, TI_CUBE, TI_RECIP, TI_RSQR,
    TI_SQRTP, TI_POWC, TI_POW, TI_SQRT, TI_SIN, TI_COS, TI_TAN, TI_ASIN, TI_ACOS, TI_ATAN,
    TI_ATAN2, TI_SINH, TI_COSH, TI_TANH, TI_EXP, TI_LOG, TI_ABS, TI_SIGN, TI_MIN, TI_MAX,
    TI_STEP, TI_ADD2C, TI_MUL2C
};

typedef struct tins {
    uint32_t op, dst, a, b;
    double c;
} tins;

struct mblx_tape {
    size_t nins, nreg, nout, nsymreq;
    tins *ins;
    uint32_t *outreg;
    uint32_t *ext; /* step operands, 5 registers each */
    /* diagnostics: a private copy of the compiled sub-DAG (local node numbering) */
    uint32_t *ins_node;
    size_t nl;
    mblx__node *lnd; /* val, op, na, aoff used; doff: offset of a SYMBOL's name in names */
    uint32_t *largs;
    char *names;
    /* runs of one opcode (schedule_runs): instructions run_start[r] .. run_start[r + 1] - 1 all
     * have the opcode run_op[r], so evaluation switches once per run, not per instruction */
    size_t nrun;
    uint32_t *run_start; /* nrun + 1 */
    uint8_t *run_op;     /* nrun */
};

/* ---- node -> local index map (open addressing) ------------------------------------------- */

typedef struct u32map {
    uint32_t *key, *val;
    size_t cap, n;
    uint32_t *dense; /* when not NULL: a direct array indexed by node id (XNONE = absent) */
} u32map;

/* The compiler maps node ids to local indices with a direct array when the outputs' largest
 * handle is at most this many times the number of outputs plus DENSE_SLACK (compiling a large
 * part of a graph), and with a hash map otherwise (a small expression in a large graph). */
enum { DENSE_FACTOR = 16, DENSE_SLACK = 4096 };

static size_t map_slot(const u32map *m, uint32_t k)
{
    uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->key[i] != XNONE && m->key[i] != k) i = (i + 1) & (m->cap - 1);
    return i;
}

static int map_grow(u32map *m)
{
    size_t nc = m->cap ? m->cap * 2 : INIT_CAP;
    u32map q = {mbl_alloc_array(nc, sizeof(uint32_t)), mbl_alloc_array(nc, sizeof(uint32_t)), nc, 0, NULL};
    if (!q.key || !q.val || nc < m->cap) {
        mbl_free(q.key);
        mbl_free(q.val);
        return -1;
    }
    for (size_t i = 0; i < nc; i++) q.key[i] = XNONE;
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] != XNONE) {
            size_t s = map_slot(&q, m->key[i]);
            q.key[s] = m->key[i];
            q.val[s] = m->val[i];
            q.n++;
        }
    mbl_free(m->key);
    mbl_free(m->val);
    *m = q;
    return 0;
}

/* Pointer to the value of key k, inserting it (value XNONE) if absent; NULL when out of memory. */
static uint32_t *map_get_hashed(u32map *m, uint32_t k, int insert)
{
    if (m->cap) {
        size_t s = map_slot(m, k);
        if (m->key[s] == k) return &m->val[s];
        if (!insert) return NULL;
    } else if (!insert) {
        return NULL;
    }
    if ((m->n + 1) * 2 > m->cap && map_grow(m)) return NULL;
    size_t s = map_slot(m, k);
    m->key[s] = k;
    m->val[s] = XNONE;
    m->n++;
    return &m->val[s];
}

static inline uint32_t *map_get(u32map *m, uint32_t k, int insert)
{
    if (m->dense) {
        if (m->dense[k] == XNONE && !insert) return NULL;
        return &m->dense[k];
    }
    return map_get_hashed(m, k, insert);
}

/* ---- tape lifetime -------------------------------------------------------------------------- */

void mblx_tape_free(mblx_tape *t)
{
    if (!t) return;
    mbl_free(t->ins);
    mbl_free(t->outreg);
    mbl_free(t->ext);
    mbl_free(t->ins_node);
    mbl_free(t->lnd);
    mbl_free(t->largs);
    mbl_free(t->names);
    mbl_free(t->run_start);
    mbl_free(t->run_op);
    mbl_free(t);
}

size_t mblx_tape_work_size(const mblx_tape *t) { return t ? (t->nreg ? t->nreg : 1) : 0; }
size_t mblx_tape_ninstr(const mblx_tape *t) { return t ? t->nins : 0; }
size_t mblx_tape_noutputs(const mblx_tape *t) { return t ? t->nout : 0; }
size_t mblx_tape_nsymbols(const mblx_tape *t) { return t ? t->nsymreq : 0; }

/* Is operand i of local node l read from a register (not an immediate)? */
static int reg_operand(const mblx_tape *t, uint32_t l, uint32_t i)
{
    if (t->lnd[l].op == MBLX_OP_POW && i == 1 && t->lnd[t->largs[t->lnd[l].aoff + 1]].op == MBLX_OP_CONST)
        return 0;
    return 1;
}

/* Compilation runs in two passes over an event list. Pass 1 is a depth-first traversal from
 * the outputs (explicit stack) that numbers nodes in pre-order and records events: NODE(l) when
 * node l is complete, and, for a sum or product of k >= 2 operands, ACC(l, i) as soon as operand
 * i is available, so that the partial sum is accumulated at once and operand values die early
 * (a sum of 10^5 terms then needs O(1) registers). Pass 2 computes the last use of every value
 * (in event positions) and emits instructions, recycling registers. */
typedef struct event {
    uint32_t l, i; /* i == XNONE: NODE(l); else ACC(l, i) */
} event;

typedef struct dfs_frame {
    uint32_t v, l, next;
} dfs_frame;

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

/* Slot of the link (op, a, b): holding its id + 1, or 0 where it would go. */
static uint32_t *link_find(const link_table *T, uint32_t op, uint32_t a, uint32_t b)
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

static int nary_local(const mblx__node *nd) { return (nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na >= 2; }

/* Post-order (operands first) of the local nodes reachable from outl[0..nout), into order[];
 * returns the count, or SIZE_MAX when out of memory. mark: nl bytes of scratch. */
static size_t local_postorder(const mblx__node *lnd, const uint32_t *largs, size_t nl, const uint32_t *outl,
                              size_t nout, unsigned char *mark, uint32_t *order)
{
    dfs_frame *stk = NULL;
    size_t sn = 0, scap = 0, no = 0;
    memset(mark, 0, nl);
    for (size_t o = 0; o < nout; o++) {
        if (mark[outl[o]]) continue;
        if (sn == scap) {
            size_t nc = scap ? 2 * scap : INIT_CAP;
            dfs_frame *q = mbl_realloc_array(stk, nc, sizeof *q);
            if (!q) goto oom;
            stk = q, scap = nc;
        }
        mark[outl[o]] = 1;
        stk[sn++] = (dfs_frame){outl[o], outl[o], 0};
        while (sn) {
            dfs_frame *f = &stk[sn - 1];
            const mblx__node *nd = &lnd[f->l];
            if (f->next < nd->na) {
                uint32_t c = largs[nd->aoff + f->next++];
                if (mark[c]) continue;
                mark[c] = 1;
                if (sn == scap) {
                    size_t nc = 2 * scap;
                    dfs_frame *q = mbl_realloc_array(stk, nc, sizeof *q);
                    if (!q) goto oom;
                    stk = q, scap = nc;
                }
                stk[sn++] = (dfs_frame){c, c, 0};
                continue;
            }
            order[no++] = f->l;
            sn--;
        }
    }
    mbl_free(stk);
    return no;
oom:
    mbl_free(stk);
    return SIZE_MAX;
}

/* Rewrite the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands) with its sums and products
 * as interned chains (see above), into new compile arrays *pcl, *pca (*pnl nodes, *pka operands;
 * NULL when there is nothing to share). outl: the outputs' local nodes (replaced by their
 * aliases); *powner (allocated here, *pnl entries): the node of the original sub-DAG that a node
 * computes or is a link of (the one error messages show). Returns 0, or -1 when out of memory. */
static int share_chains(const mblx__node *lnd, const uint32_t *largs, size_t nl0, size_t ka0, uint32_t *outl,
                        size_t nout, mblx__node **pcl, uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner)
{
    size_t extra = 0, nnary = 0;
    *pcl = NULL;
    *pca = NULL;
    *pnl = nl0;
    *pka = ka0;
    for (size_t l = 0; l < nl0; l++)
        if (nary_local(&lnd[l])) {
            extra += lnd[l].na - 1;
            nnary++;
        }
    int rc = -1;
    size_t nmax = nl0 + extra, nl = nl0, ka = ka0;
    uint32_t *owner = *powner = mbl_alloc_array(nmax ? nmax : 1, sizeof *owner);
    if (!owner) return -1;
    mblx__hugepages(owner, nmax * sizeof *owner);
    for (size_t l = 0; l < nmax; l++) owner[l] = (uint32_t)l;
    if (!extra) return 0;
    /* compile arrays at their upper bounds (pages never written cost nothing) */
    mblx__node *cl = mbl_alloc_array(nmax, sizeof *cl);
    uint32_t *ca = mbl_alloc_array(ka0 + 2 * extra, sizeof *ca);
    uint32_t *alias = mbl_alloc_array(nmax, sizeof *alias);
    uint32_t *order = mbl_alloc_array(nl0, sizeof *order);
    unsigned char *mark = mbl_alloc_array(nl0, 1);
    link_table T = {NULL, 64, 0, NULL, NULL};
    while (T.cap < 4 * nnary) T.cap *= 2;
    T.s = mbl_calloc(T.cap, sizeof *T.s);
    if (!cl || !ca || !alias || !order || !mark || !T.s) goto out;
    mblx__hugepages(cl, nmax * sizeof *cl);
    mblx__hugepages(ca, (ka0 + 2 * extra) * sizeof *ca);
    mblx__hugepages(alias, nmax * sizeof *alias);
    mblx__hugepages(order, nl0 * sizeof *order);
    mblx__hugepages(T.s, T.cap * sizeof *T.s);
    T.nd = cl;
    T.args = ca;
    memcpy(cl, lnd, nl0 * sizeof *cl);
    memcpy(ca, largs, ka0 * sizeof *ca);
    for (size_t l = 0; l < nmax; l++) alias[l] = (uint32_t)l;
    size_t no = local_postorder(cl, ca, nl0, outl, nout, mark, order);
    if (no == SIZE_MAX) goto out;
    for (size_t p = 0; p < no; p++) {
        uint32_t l = order[p];
        mblx__node *nd = &cl[l];
        uint32_t *a = ca + nd->aoff;
        if (!nd->na) continue;
        for (uint32_t i = 0; i < nd->na; i++) a[i] = alias[a[i]]; /* operands come first */
        if (!nary_local(nd)) continue;
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
                owner[id] = l;
                cl[id] = (mblx__node){op == MBLX_OP_ADD ? 0.0 : 1.0, (uint32_t)ka, 2, 0, 0, (uint8_t)op};
                ca[ka++] = pre;
                ca[ka++] = x;
            }
            if (link_reserve(&T)) goto out;
            *link_find(&T, op, pre, x) = id + 1;
            T.n++;
            pre = id;
        }
        if (pre == l) continue;
        if (ident) {
            alias[l] = pre; /* equal to an earlier chain */
        } else {
            a[0] = pre; /* constant term or coefficient applied to the chain */
            nd->na = 1;
        }
    }
    for (size_t o = 0; o < nout; o++) outl[o] = alias[outl[o]];
    *pcl = cl;
    *pca = ca;
    cl = NULL;
    ca = NULL;
    *pnl = nl;
    *pka = ka;
    rc = 0;
out:
    mbl_free(cl);
    mbl_free(ca);
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
enum { PAIR_MAX_ARGS = 32, PAIR_BUDGET = 6, PAIR_MAX = 1 << 18 };

/* Open-addressing table of pairs (op, x, y), x < y: key and a count or a node id + 1. */
typedef struct pair_table {
    uint64_t *key; /* (x << 32 | y); 0 = empty (x < y, so y > 0 in a used key) */
    uint32_t *val;
    uint8_t *op;
    size_t cap, n;
} pair_table;

static size_t pair_slot(const pair_table *P, uint32_t op, uint64_t k)
{
    uint64_t h = (k ^ ((uint64_t)op << 61)) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    size_t i = (size_t)(h * 0xbf58476d1ce4e5b9ull >> 17) & (P->cap - 1);
    while (P->key[i] && !(P->key[i] == k && P->op[i] == op)) i = (i + 1) & (P->cap - 1);
    return i;
}

static int pair_init(pair_table *P, size_t want)
{
    size_t cap = 64;
    while (cap < 2 * want + 2) cap *= 2;
    P->key = mbl_calloc(cap, sizeof *P->key);
    P->val = mbl_alloc_array(cap, sizeof *P->val);
    P->op = mbl_alloc_array(cap, sizeof *P->op);
    P->cap = cap;
    P->n = 0;
    if (!P->key || !P->val || !P->op) return -1;
    mblx__hugepages(P->key, cap * sizeof *P->key);
    return 0;
}

static void pair_free(pair_table *P)
{
    mbl_free(P->key);
    mbl_free(P->val);
    mbl_free(P->op);
    P->key = NULL, P->val = NULL, P->op = NULL;
}

/* Pointer to the value of (op, x, y) (x < y), inserted with 0 when absent; NULL when out of
 * memory. */
static uint32_t *pair_get(pair_table *P, uint32_t op, uint32_t x, uint32_t y, int insert)
{
    uint64_t k = (uint64_t)x << 32 | y;
    size_t i = pair_slot(P, op, k);
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
                size_t s = pair_slot(&N, P->op[j], P->key[j]);
                N.key[s] = P->key[j], N.val[s] = P->val[j], N.op[s] = P->op[j];
            }
        N.n = P->n;
        pair_free(P);
        *P = N;
        i = pair_slot(P, op, k);
    }
    P->key[i] = k;
    P->val[i] = 0;
    P->op[i] = (uint8_t)op;
    P->n++;
    return &P->val[i];
}

/* A pair's record: its count of containers, its list of containers (occurrences, possibly
 * stale), its operation and operands. */
typedef struct pair_rec {
    uint32_t cnt, head, x, y;
    uint8_t op;
} pair_rec;

typedef struct pair_heap {
    uint64_t *h; /* (count << 32) | ~record: the largest count first, then the oldest record */
    size_t n, cap;
} pair_heap;

static int heap_push(pair_heap *H, uint32_t cnt, uint32_t r)
{
    if (H->n == H->cap) {
        size_t nc = H->cap ? 2 * H->cap : INIT_CAP;
        uint64_t *q = mbl_realloc_array(H->h, nc, sizeof *q);
        if (!q) return -1;
        H->h = q, H->cap = nc;
    }
    uint64_t e = (uint64_t)cnt << 32 | (uint32_t)~r;
    size_t i = H->n++;
    while (i > 0 && H->h[(i - 1) / 2] < e) {
        H->h[i] = H->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    H->h[i] = e;
    return 0;
}

static uint64_t heap_pop(pair_heap *H)
{
    uint64_t top = H->h[0], e = H->h[--H->n];
    size_t i = 0, n = H->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && H->h[c + 1] > H->h[c]) c++;
        if (H->h[c] <= e) break;
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

/* Rewrite the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands) with common pairs of operands
 * as nodes of their own (see above) into new arrays *pcl, *pca (*pnl nodes, *pka operands; NULL
 * when no pair is shared). outl: the outputs (replaced by their aliases); *powner (*pnl
 * entries): the node of the sub-DAG a node computes or was made for. Returns 0, or -1 when out
 * of memory. */
static int share_pairs(const mblx__node *lnd, const uint32_t *largs, size_t nl0, size_t ka0, uint32_t *outl,
                       size_t nout, mblx__node **pcl, uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner)
{
    *pcl = NULL;
    *pca = NULL;
    *pnl = nl0;
    *pka = ka0;
    *powner = NULL;
    size_t npairs = 0, extra = 0;
    for (size_t l = 0; l < nl0; l++)
        if (pair_container(&lnd[l])) {
            npairs += (size_t)lnd[l].na * (lnd[l].na - 1) / 2;
            extra += lnd[l].na - 1;
        }
    /* a sub-DAG with more than PAIR_MAX pairs, or PAIR_BUDGET times more pairs than operands
     * (long chains of nested sums), is left to the chains, which share its prefixes anyway */
    if (!npairs || npairs > PAIR_MAX || npairs > PAIR_BUDGET * ka0 + 4096) return 0;
    int rc = -1;
    size_t nmax = nl0 + extra; /* a pair node removes an operand from at least two sums or products */
    mblx__node *cl = mbl_alloc_array(nmax, sizeof *cl);
    uint32_t *ca = mbl_alloc_array(ka0 + 2 * extra, sizeof *ca);
    uint32_t *owner = mbl_alloc_array(nmax, sizeof *owner);
    uint32_t *alias = mbl_alloc_array(nmax, sizeof *alias);
    pair_rec *R = NULL;
    uint32_t *occ_c = NULL, *occ_next = NULL, *touched = NULL, *live = NULL;
    size_t nr = 0, rcap = 0, no = 0, ocap = 0;
    pair_heap H = {NULL, 0, 0};
    pair_table C = {0}, L = {0};
    if (!cl || !ca || !owner || !alias || pair_init(&C, npairs) || pair_init(&L, nl0 / 2 + extra)) goto out;
    memcpy(cl, lnd, nl0 * sizeof *cl);
    memcpy(ca, largs, ka0 * sizeof *ca);
    size_t nl = nl0, ka = ka0;
    for (size_t l = 0; l < nmax; l++) owner[l] = (uint32_t)l, alias[l] = (uint32_t)l;
#define ADD_OCC(op_, x_, y_, c_)                                                              \
    do {                                                                                      \
        uint32_t x__ = (x_) < (y_) ? (x_) : (y_), y__ = (x_) < (y_) ? (y_) : (x_);            \
        uint32_t *v__ = pair_get(&C, (op_), x__, y__, 1);                                     \
        if (!v__) goto out;                                                                   \
        if (!*v__) {                                                                          \
            if (nr == rcap) {                                                                 \
                size_t nc__ = rcap ? 2 * rcap : INIT_CAP;                                     \
                pair_rec *q__ = mbl_realloc_array(R, nc__, sizeof *q__);                      \
                if (!q__) goto out;                                                           \
                R = q__, rcap = nc__;                                                         \
            }                                                                                 \
            R[nr] = (pair_rec){0, XNONE, x__, y__, (uint8_t)(op_)};                           \
            *v__ = (uint32_t)++nr;                                                            \
        }                                                                                     \
        pair_rec *r__ = &R[*v__ - 1];                                                         \
        if (no == ocap) {                                                                     \
            size_t nc__ = ocap ? 2 * ocap : npairs + INIT_CAP;                                \
            uint32_t *q1__ = mbl_realloc_array(occ_c, nc__, sizeof *q1__);                    \
            if (!q1__) goto out;                                                              \
            occ_c = q1__;                                                                     \
            uint32_t *q2__ = mbl_realloc_array(occ_next, nc__, sizeof *q2__);                 \
            if (!q2__) goto out;                                                              \
            occ_next = q2__;                                                                  \
            ocap = nc__;                                                                      \
        }                                                                                     \
        occ_c[no] = (c_);                                                                     \
        occ_next[no] = r__->head;                                                             \
        r__->head = (uint32_t)no++;                                                           \
        r__->cnt++;                                                                           \
    } while (0)
    /* the binary sums and products there are, and the pairs of every container */
    for (size_t l = 0; l < nl0; l++) {
        const mblx__node *nd = &cl[l];
        const uint32_t *a = ca + nd->aoff;
        if ((nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na == 2 &&
            nd->val == (nd->op == MBLX_OP_ADD ? 0.0 : 1.0) && a[0] != a[1]) {
            uint32_t *v = pair_get(&L, nd->op, a[0] < a[1] ? a[0] : a[1], a[0] < a[1] ? a[1] : a[0], 1);
            if (!v) goto out;
            if (!*v) *v = (uint32_t)l + 1;
            continue;
        }
        if (!pair_container(nd)) continue;
        for (uint32_t i = 0; i < nd->na; i++)
            for (uint32_t j = i + 1; j < nd->na; j++)
                if (a[i] != a[j]) ADD_OCC(nd->op, a[i], a[j], (uint32_t)l);
    }
    for (size_t r = 0; r < nr; r++)
        if (R[r].cnt >= 2 && heap_push(&H, R[r].cnt, (uint32_t)r)) goto out;
    if (!(touched = mbl_alloc_array(PAIR_MAX_ARGS, sizeof *touched))) goto out;
    size_t lcap = 0;
    int changed = 0;
    /* the most frequent pair first: every container that still has both operands gets it */
    while (H.n) {
        uint64_t e = heap_pop(&H);
        uint32_t r = ~(uint32_t)e, cnt = (uint32_t)(e >> 32);
        if (R[r].cnt != cnt) continue; /* a stale entry: the record was pushed again */
        uint32_t op = R[r].op, x = R[r].x, y = R[r].y, nlive = 0;
        /* the containers that still have both (dropping the others from the list) */
        uint32_t *link = &R[r].head;
        for (uint32_t p = *link; p != XNONE; p = *link) {
            const mblx__node *nd = &cl[occ_c[p]];
            const uint32_t *a = ca + nd->aoff;
            if (find_operand(a, nd->na, x) >= 0 && find_operand(a, nd->na, y) >= 0) {
                if (nlive == lcap) {
                    size_t nc = lcap ? 2 * lcap : INIT_CAP;
                    uint32_t *q = mbl_realloc_array(live, nc, sizeof *q);
                    if (!q) goto out;
                    live = q, lcap = nc;
                }
                live[nlive++] = occ_c[p];
                link = &occ_next[p];
            } else {
                *link = occ_next[p];
            }
        }
        if (nlive < cnt) {
            R[r].cnt = nlive;
            if (nlive >= 2 && heap_push(&H, nlive, r)) goto out;
            continue;
        }
        R[r].cnt = 0;
        R[r].head = XNONE;
        uint32_t *v = pair_get(&L, op, x, y, 1);
        if (!v) goto out;
        if (!*v) {
            uint32_t id = (uint32_t)nl++;
            cl[id] = (mblx__node){op == MBLX_OP_ADD ? 0.0 : 1.0, (uint32_t)ka, 2, 0, 0, (uint8_t)op};
            ca[ka++] = x;
            ca[ka++] = y;
            owner[id] = owner[live[0]];
            *v = id + 1;
        }
        uint32_t t = *v - 1;
        for (uint32_t q = 0; q < nlive; q++) {
            uint32_t c = live[q];
            mblx__node *nd = &cl[c];
            uint32_t *a = ca + nd->aoff, m = 0, nt = 0;
            for (uint32_t i = 0; i < nd->na; i++)
                if (a[i] != x && a[i] != y) a[m++] = a[i];
            /* the new pairs (z, t) of this container */
            for (uint32_t i = 0; i < m; i++) {
                if (a[i] == t) continue;
                ADD_OCC(op, a[i], t, c);
                touched[nt++] = *pair_get(&C, op, a[i] < t ? a[i] : t, a[i] < t ? t : a[i], 0) - 1;
            }
            a[m++] = t;
            nd->na = m;
            for (uint32_t i = 0; i < nt; i++)
                if (R[touched[i]].cnt >= 2 && heap_push(&H, R[touched[i]].cnt, touched[i])) goto out;
        }
        changed = 1;
    }
#undef ADD_OCC
    if (!changed) {
        rc = 0;
        goto out;
    }
    /* a sum or product left with one operand and no constant is that operand */
    for (size_t l = 0; l < nl; l++) {
        mblx__node *nd = &cl[l];
        uint32_t *a = ca + nd->aoff;
        for (uint32_t i = 0; i < nd->na; i++) a[i] = alias[a[i]];
        if ((nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na == 1 &&
            nd->val == (nd->op == MBLX_OP_ADD ? 0.0 : 1.0))
            alias[l] = a[0];
    }
    for (size_t o = 0; o < nout; o++) outl[o] = alias[outl[o]];
    *pcl = cl;
    *pca = ca;
    *powner = owner;
    cl = NULL;
    ca = NULL;
    owner = NULL;
    *pnl = nl;
    *pka = ka;
    rc = 0;
out:
    mbl_free(cl);
    mbl_free(ca);
    mbl_free(owner);
    mbl_free(alias);
    mbl_free(R);
    mbl_free(occ_c);
    mbl_free(occ_next);
    mbl_free(touched);
    mbl_free(live);
    mbl_free(H.h);
    pair_free(&C);
    pair_free(&L);
    return rc;
}

/* Operations of the local sub-DAG (nd, args: nl nodes) reachable from outl[0..nout), as the
 * emitter will count them (a sum or product of k >= 2 operands: k - 1, plus its constant when
 * k > 2; everything else one); SIZE_MAX when out of memory. */
static size_t dag_ops(const mblx__node *nd, const uint32_t *args, size_t nl, const uint32_t *outl, size_t nout)
{
    unsigned char *mark = mbl_alloc_array(nl ? nl : 1, 1);
    uint32_t *order = mbl_alloc_array(nl ? nl : 1, sizeof *order);
    size_t no = mark && order ? local_postorder(nd, args, nl, outl, nout, mark, order) : SIZE_MAX, ops = 0;
    for (size_t p = 0; no != SIZE_MAX && p < no; p++) {
        const mblx__node *x = &nd[order[p]];
        if (nary_local(x))
            ops += x->na - 1 + (x->na > 2 && x->val != (x->op == MBLX_OP_ADD ? 0.0 : 1.0));
        else
            ops++;
    }
    mbl_free(mark);
    mbl_free(order);
    return no == SIZE_MAX ? SIZE_MAX : ops;
}

/* The shared form of the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands): chains alone (the
 * same operations in the same order as written: bit-identical values), or common pairs and then
 * chains, whichever has fewer operations (the pairs can break prefixes the chains would have
 * shared). Outputs as share_chains (*pcl NULL: the sub-DAG as it is); *powner always allocated.
 * Returns 0, or -1 when out of memory. */
static int share(const mblx__node *lnd, const uint32_t *largs, size_t nl0, size_t ka0, uint32_t *outl, size_t nout,
                 mblx__node **pcl, uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner)
{
    mblx__node *clA = NULL, *clB = NULL, *pl = NULL;
    uint32_t *caA = NULL, *caB = NULL, *pa = NULL, *ownA = NULL, *ownB = NULL, *ownP = NULL;
    uint32_t *outA = mbl_alloc_array(nout ? nout : 1, sizeof *outA), *outB = mbl_alloc_array(nout ? nout : 1, sizeof *outB);
    size_t nlA, kaA, nlB, kaB, nlP, kaP;
    int rc = -1;
    if (!outA || !outB) goto out;
    memcpy(outA, outl, nout * sizeof *outA);
    memcpy(outB, outl, nout * sizeof *outB);
    if (share_chains(lnd, largs, nl0, ka0, outA, nout, &clA, &caA, &nlA, &kaA, &ownA)) goto out;
    if (share_pairs(lnd, largs, nl0, ka0, outB, nout, &pl, &pa, &nlP, &kaP, &ownP)) goto out;
    if (pl) {
        if (share_chains(pl, pa, nlP, kaP, outB, nout, &clB, &caB, &nlB, &kaB, &ownB)) goto out;
        for (size_t l = 0; l < nlB; l++) ownB[l] = ownP[ownB[l]];
        if (!clB) clB = pl, caB = pa, pl = NULL, pa = NULL;
        size_t opsA = dag_ops(clA ? clA : lnd, clA ? caA : largs, nlA, outA, nout);
        size_t opsB = dag_ops(clB, caB, nlB, outB, nout);
        if (opsA == SIZE_MAX || opsB == SIZE_MAX) goto out;
        if (opsB < opsA) {
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
    mbl_free(clA), mbl_free(caA), mbl_free(ownA);
    mbl_free(clB), mbl_free(caB), mbl_free(ownB);
    mbl_free(pl), mbl_free(pa), mbl_free(ownP);
    mbl_free(outA), mbl_free(outB);
    return rc;
}

/* The node a let stands for (let(x) compiles as x: no instruction). */
static uint32_t unlet(const mblx_graph *g, uint32_t v)
{
    if (!g->nlet) return v; /* no let in the graph: no lookup */
    while (g->nd[v].op == MBLX_OP_LET) v = mblx__args(g, v)[0];
    return v;
}

/* ---- scheduling into runs of one opcode ----------------------------------------------------- */

/* Evaluating a tape one instruction at a time through a switch mispredicts the branch on most
 * instructions (the opcodes alternate unpredictably): about 5.7 ns per instruction on the
 * bicycle's Jacobian. schedule_runs reorders the instructions, window by window (SCHED_WINDOW
 * instructions of the compiled order, so that large tapes keep their locality and register
 * count), by dependence level and then by opcode, and reallocates the registers for the new
 * order. Instructions of one level are independent, so each window becomes a few runs of one
 * opcode each, evaluated by a tight loop. The values are the same bits: every instruction
 * computes the same operation on the same operands. */
enum { SCHED_WINDOW = 16384, SCHED_NOP = TI_MUL2C + 1 };

static int reads_a(uint32_t op) { return op != TI_LDC && op != TI_LDS && op != TI_STEP; }
static int reads_b(uint32_t op)
{
    return op == TI_ADD || op == TI_MUL || op == TI_ADD2C || op == TI_MUL2C || op == TI_POW || op == TI_ATAN2 ||
           op == TI_MIN || op == TI_MAX;
}

static int schedule_runs(mblx_tape *t)
{
    size_t n = t->nins, nr = t->nreg;
    if (n == 0) return 0;
    size_t next = 0;
    for (size_t i = 0; i < n; i++) next += t->ins[i].op == TI_STEP;
    /* one scratch block of uint32: the producers of each operand in SSA form (src: a and b;
     * extsrc: a step's five), levels, the new order, positions, last uses, registers */
    size_t win = n < SCHED_WINDOW ? n : SCHED_WINDOW;
    size_t nu = (nr ? nr : 1) + 2 * n + 5 * next + 1 + 7 * n + win + (t->nout ? t->nout : 1);
    uint32_t *scratch = mbl_alloc_array(nu, sizeof *scratch);
    tins *nins = mbl_alloc_array(n, sizeof *nins);
    uint32_t *rstart = mbl_alloc_array(n + 1, sizeof *rstart);
    uint8_t *rop = mbl_alloc_array(n, sizeof *rop);
    int rc = -1;
    if (!scratch || !nins || !rstart || !rop) goto out;
    mblx__hugepages(scratch, nu * sizeof *scratch);
    mblx__hugepages(nins, n * sizeof *nins);
    uint32_t *ver = scratch, *src = ver + (nr ? nr : 1), *extsrc = src + 2 * n, *lev = extsrc + 5 * next + 1;
    uint32_t *order = lev + n, *pos = order + n, *last = pos + n, *nreg_of = last + n, *freel = nreg_of + n;
    uint32_t *nnode = freel + n, *tmp = nnode + n, *outsrc = tmp + win;
    for (size_t r = 0; r < nr; r++) ver[r] = XNONE;
    for (size_t i = 0; i < n; i++) {
        const tins *p = &t->ins[i];
        src[2 * i] = reads_a(p->op) ? ver[p->a] : XNONE;
        src[2 * i + 1] = reads_b(p->op) ? ver[p->b] : XNONE;
        if (p->op == TI_STEP)
            for (int k = 0; k < 5; k++) extsrc[p->a + (uint32_t)k] = ver[t->ext[p->a + (uint32_t)k]];
        ver[p->dst] = (uint32_t)i;
    }
    for (size_t o = 0; o < t->nout; o++) outsrc[o] = ver[t->outreg[o]];
    /* levels within each window, then a stable counting sort by opcode and by level */
    size_t nrun = 0, np = 0;
    for (size_t w0 = 0; w0 < n; w0 += SCHED_WINDOW) {
        size_t w1 = w0 + SCHED_WINDOW < n ? w0 + SCHED_WINDOW : n;
        uint32_t maxlev = 0;
        for (size_t i = w0; i < w1; i++) {
            uint32_t L = 0;
            const tins *p = &t->ins[i];
            uint32_t s3[7];
            int ns = 0;
            s3[ns++] = src[2 * i];
            s3[ns++] = src[2 * i + 1];
            if (p->op == TI_STEP)
                for (int k = 0; k < 5; k++) s3[ns++] = extsrc[p->a + (uint32_t)k];
            for (int k = 0; k < ns; k++)
                if (s3[k] != XNONE && s3[k] >= w0 && lev[s3[k]] + 1 > L) L = lev[s3[k]] + 1;
            lev[i] = L;
            if (L > maxlev) maxlev = L;
        }
        size_t nlev = (size_t)maxlev + 1, m = w1 - w0;
        size_t *cnt = mbl_alloc_array((nlev > SCHED_NOP ? nlev : SCHED_NOP) + 1, sizeof *cnt);
        if (!cnt) goto out;
        memset(cnt, 0, (SCHED_NOP + 1) * sizeof *cnt);
        for (size_t i = w0; i < w1; i++) cnt[t->ins[i].op + 1]++;
        for (size_t k = 0; k < SCHED_NOP; k++) cnt[k + 1] += cnt[k];
        for (size_t i = w0; i < w1; i++) tmp[cnt[t->ins[i].op]++] = (uint32_t)i;
        memset(cnt, 0, (nlev + 1) * sizeof *cnt);
        for (size_t i = w0; i < w1; i++) cnt[lev[i] + 1]++;
        for (size_t k = 0; k < nlev; k++) cnt[k + 1] += cnt[k];
        for (size_t k = 0; k < m; k++) order[w0 + cnt[lev[tmp[k]]]++] = tmp[k];
        mbl_free(cnt);
        for (size_t k = w0; k < w1; k++) {
            uint32_t i = order[k], op = t->ins[i].op;
            if (np == 0 || k == w0 || op != rop[nrun - 1] || lev[i] != lev[order[k - 1]]) {
                rstart[nrun] = (uint32_t)k;
                rop[nrun++] = (uint8_t)op;
            }
            np++;
        }
    }
    rstart[nrun] = (uint32_t)n;
    for (size_t k = 0; k < n; k++) pos[order[k]] = (uint32_t)k;
    /* last use (new positions); outputs live to the end */
    for (size_t i = 0; i < n; i++) last[i] = XNONE;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            uint32_t s = src[2 * i + (size_t)k];
            if (s != XNONE && (last[s] == XNONE || pos[i] > last[s])) last[s] = pos[i];
        }
        if (t->ins[i].op == TI_STEP)
            for (int k = 0; k < 5; k++) {
                uint32_t s = extsrc[t->ins[i].a + (uint32_t)k];
                if (last[s] == XNONE || pos[i] > last[s]) last[s] = pos[i];
            }
    }
    for (size_t o = 0; o < t->nout; o++) last[outsrc[o]] = XPENDING;
    /* registers for the new order: operands dead here are freed before the result is placed */
    size_t nfree = 0, nreg = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        const tins *p = &t->ins[i];
        tins q = *p;
        if (reads_a(p->op)) q.a = nreg_of[src[2 * i]];
        if (reads_b(p->op)) q.b = nreg_of[src[2 * i + 1]];
        if (p->op == TI_STEP)
            for (int j = 0; j < 5; j++) t->ext[p->a + (uint32_t)j] = nreg_of[extsrc[p->a + (uint32_t)j]];
        uint32_t s3[7];
        int ns = 0;
        if (reads_a(p->op)) s3[ns++] = src[2 * i];
        if (reads_b(p->op)) s3[ns++] = src[2 * i + 1];
        if (p->op == TI_STEP)
            for (int j = 0; j < 5; j++) s3[ns++] = extsrc[p->a + (uint32_t)j];
        for (int j = 0; j < ns; j++)
            if (last[s3[j]] == (uint32_t)k) {
                freel[nfree++] = nreg_of[s3[j]];
                last[s3[j]] = XNONE; /* freed once */
            }
        uint32_t d = nfree ? freel[--nfree] : (uint32_t)nreg++;
        nreg_of[i] = d;
        q.dst = d;
        if (last[i] == XNONE) freel[nfree++] = d; /* never read (cannot happen; kept safe) */
        nins[k] = q;
        nnode[k] = t->ins_node[i];
    }
    for (size_t o = 0; o < t->nout; o++) t->outreg[o] = nreg_of[outsrc[o]];
    mbl_free(t->ins);
    t->ins = nins;
    nins = NULL;
    memcpy(t->ins_node, nnode, n * sizeof *nnode);
    t->nreg = nreg;
    t->nrun = nrun;
    t->run_start = rstart, t->run_op = rop;
    rstart = NULL, rop = NULL;
    rc = 0;
out:
    mbl_free(scratch), mbl_free(nins), mbl_free(rstart), mbl_free(rop);
    return rc;
}

mblx_tape *mblx_compile(const mblx_graph *g, size_t n, const mblx_id *outputs, mbl_status *st)
{
    if (!g || (n && !outputs)) {
        mbl_error(st, MBL_EARG, "mblx_compile: NULL graph or outputs");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!mblx__valid(g, outputs[i])) {
            mbl_error(st, MBL_EARG, "mblx_compile: output %zu is not a valid node", i);
            return NULL;
        }
    mblx_tape *t = mbl_calloc(1, sizeof *t);
    u32map map = {NULL, NULL, 0, 0, NULL};
    dfs_frame *stack = NULL;
    event *ev = NULL;
    uint32_t *lastuse = NULL, *reg = NULL, *freel = NULL, *outl = NULL, *owner = NULL, *dlargs = NULL;
    mblx__node *dlnd = NULL;
    size_t nl0 = 0;
    unsigned char *seen = NULL;
    size_t sn = 0, scap = 0, nl = 0, nev = 0, evcap = 0, lcap = 0, acap = 0;
    if (!t) goto oom;
    t->nout = n;
    {
        size_t maxid = 0;
        for (size_t o = 0; o < n; o++)
            if (outputs[o] > maxid) maxid = outputs[o];
        if (n && maxid < (SIZE_MAX - DENSE_SLACK) / DENSE_FACTOR &&
            maxid + 1 <= DENSE_FACTOR * n + DENSE_SLACK) {
            if (!(map.dense = mbl_alloc_array(maxid + 1, sizeof *map.dense))) goto oom;
            mblx__hugepages(map.dense, (maxid + 1) * sizeof *map.dense);
            memset(map.dense, 0xff, (maxid + 1) * sizeof *map.dense);
            /* Reserve the arrays that grow during the traversal at their upper bounds: at most
             * maxid + 1 nodes, whose operands all lie in the graph's operand pool below the end
             * of maxid's (the pool is in creation order), and one event per node and operand.
             * Pages that are never written cost nothing, and nothing is copied while growing. */
            size_t abound = (size_t)g->nd[maxid].aoff + g->nd[maxid].na + 1;
            lcap = maxid + 1;
            acap = abound;
            evcap = lcap + abound;
            if (!(t->lnd = mbl_alloc_array(lcap, sizeof *t->lnd)) ||
                !(t->largs = mbl_alloc_array(acap, sizeof *t->largs)) ||
                !(ev = mbl_alloc_array(evcap, sizeof *ev)))
                goto oom;
            mblx__hugepages(t->lnd, lcap * sizeof *t->lnd);
            mblx__hugepages(t->largs, acap * sizeof *t->largs);
            mblx__hugepages(ev, evcap * sizeof *ev);
        }
    }
#define GROWV(arr_, cnt_, cap_)                                                               \
    do {                                                                                      \
        if ((cnt_) == (cap_)) {                                                               \
            size_t nc_ = (cap_) ? (cap_) * 2 : INIT_CAP;                                      \
            void *q_ = mblx__grow_block((arr_), (cap_) * sizeof *(arr_), nc_, sizeof *(arr_)); \
            if (!q_) goto oom;                                                                \
            (arr_) = q_;                                                                      \
            (cap_) = nc_;                                                                     \
        }                                                                                     \
    } while (0)
    /* 1. traversal: map value = local index; the private copy of the sub-DAG (lnd, largs,
     * names: for error messages) is filled as nodes are numbered and operands completed */
    size_t ka = 0, ncap = 0, kn = 0, ninsmax = 0;
#define NUMBER(v_)                                                                            \
    do {                                                                                      \
        uint32_t v__ = (v_);                                                                  \
        const mblx__node *gn_ = &g->nd[v__];                                                  \
        GROWV(t->lnd, nl, lcap);                                                              \
        mblx__node *ln_ = &t->lnd[nl];                                                        \
        ln_->op = gn_->op;                                                                    \
        ln_->val = gn_->val;                                                                  \
        ln_->na = gn_->na;                                                                    \
        ln_->aoff = (uint32_t)ka;                                                             \
        ln_->doff = 0;                                                                        \
        ln_->dcnt = 0;                                                                        \
        if (gn_->na > acap - ka) {                                                            \
            size_t nc_ = acap ? acap : INIT_CAP;                                              \
            while (nc_ - ka < gn_->na) nc_ *= 2;                                              \
            void *q_ = mbl_realloc_array(t->largs, nc_, sizeof *t->largs);                    \
            if (!q_) goto oom;                                                                \
            t->largs = q_;                                                                    \
            acap = nc_;                                                                       \
        }                                                                                     \
        ka += gn_->na;                                                                        \
        ninsmax += (gn_->op == MBLX_OP_ADD || gn_->op == MBLX_OP_MUL) ? gn_->na + 1 : 1;      \
        if (gn_->op == MBLX_OP_SYMBOL) {                                                      \
            const char *nm_ = mblx_symbol_name(g, v__);                                       \
            size_t len_ = strlen(nm_) + 1;                                                    \
            if (kn > UINT32_MAX - len_) goto oom;                                             \
            if (len_ > ncap - kn) {                                                           \
                size_t nc_ = ncap ? ncap : 256;                                               \
                while (nc_ - kn < len_) nc_ *= 2;                                             \
                void *q_ = mbl_realloc_array(t->names, nc_, 1);                               \
                if (!q_) goto oom;                                                            \
                t->names = q_;                                                                \
                ncap = nc_;                                                                   \
            }                                                                                 \
            memcpy(t->names + kn, nm_, len_);                                                 \
            ln_->doff = (uint32_t)kn; /* symbol nodes: name offset */                         \
            kn += len_;                                                                       \
            if ((size_t)gn_->val + 1 > t->nsymreq) t->nsymreq = (size_t)gn_->val + 1;         \
        }                                                                                     \
        nl++;                                                                                 \
    } while (0)
    for (size_t o = 0; o < n; o++) {
        uint32_t out_o = unlet(g, outputs[o]);
        if (map_get(&map, out_o, 0)) continue;
        sn = 0;
        {
            uint32_t *val = map_get(&map, out_o, 1);
            if (!val) goto oom;
            *val = (uint32_t)nl;
            NUMBER(out_o);
            GROWV(stack, sn, scap);
            stack[sn++] = (dfs_frame){out_o, (uint32_t)(nl - 1), 0};
        }
        while (sn) {
            dfs_frame *f = &stack[sn - 1];
            uint32_t v = f->v;
            if (f->next < g->nd[v].na) {
                uint32_t c = unlet(g, mblx__args(g, v)[f->next]);
                uint32_t *cv = map_get(&map, c, 0);
                if (!cv) { /* first visit: descend */
                    uint32_t l = (uint32_t)nl;
                    cv = map_get(&map, c, 1);
                    if (!cv) goto oom;
                    *cv = l;
                    NUMBER(c);
                    GROWV(stack, sn, scap);
                    stack[sn++] = (dfs_frame){c, l, 0};
                    continue;
                }
                /* operand available (a DAG has no cycles, so it is complete) */
                t->largs[t->lnd[f->l].aoff + f->next] = *cv;
                f->next++;
                continue;
            }
            sn--;
        }
    }
#undef NUMBER
    t->nl = nl;
    if (nl && nl < lcap) { /* give back the unused reserve */
        void *q = mbl_realloc_array(t->lnd, nl, sizeof *t->lnd);
        if (q) t->lnd = q;
    }
    if (ka && ka < acap) {
        void *q = mbl_realloc_array(t->largs, ka, sizeof *t->largs);
        if (q) t->largs = q;
    }
    if (!t->lnd && !(t->lnd = mbl_calloc(1, sizeof *t->lnd))) goto oom;
    if (!t->largs && !(t->largs = mbl_alloc_array(1, sizeof *t->largs))) goto oom;
    if (!t->names && !(t->names = mbl_malloc(1))) goto oom;
    /* 2. share the common parts of sums and products, then order the events: a depth-first
     * traversal of the local DAG from the outputs records NODE(l) when node l is complete,
     * and, for a sum or product of k >= 2 operands, ACC(l, i) as soon as operand i is
     * available, so that the partial sum is accumulated at once and operand values die early
     * (a sum of 10^5 terms then needs O(1) registers) */
    if (!(outl = mbl_alloc_array(n ? n : 1, sizeof *outl))) goto oom;
    for (size_t o = 0; o < n; o++) outl[o] = *map_get(&map, unlet(g, outputs[o]), 0);
    /* the private copy keeps the sub-DAG as the graph has it (error messages print it); the
     * compiler works on the shared form */
    nl0 = nl;
    {
        mblx__node *cl;
        uint32_t *ca;
        if (share(t->lnd, t->largs, nl0, ka, outl, n, &cl, &ca, &nl, &ka, &owner)) goto oom;
        if (cl) {
            dlnd = t->lnd;
            dlargs = t->largs;
            t->lnd = cl;
            t->largs = ca;
        }
    }
    mbl_free(ev);
    mbl_free(stack);
    stack = NULL;
    sn = scap = 0;
    nev = 0;
    evcap = nl + ka;
    if (!(ev = mbl_alloc_array(evcap ? evcap : 1, sizeof *ev)) || !(seen = mbl_calloc(nl ? nl : 1, 1))) goto oom;
    mblx__hugepages(ev, evcap * sizeof *ev);
    ninsmax = 0;
    for (size_t l = 0; l < nl; l++)
        ninsmax += (t->lnd[l].op == MBLX_OP_ADD || t->lnd[l].op == MBLX_OP_MUL) ? t->lnd[l].na + 1 : 1;
    for (size_t o = 0; o < n; o++) {
        if (seen[outl[o]]) continue;
        seen[outl[o]] = 1;
        GROWV(stack, sn, scap);
        stack[sn++] = (dfs_frame){outl[o], outl[o], 0};
        while (sn) {
            dfs_frame *f = &stack[sn - 1];
            const mblx__node *nd = &t->lnd[f->l];
            if (f->next < nd->na) {
                uint32_t c = t->largs[nd->aoff + f->next];
                if (!seen[c]) { /* first visit: descend */
                    seen[c] = 1;
                    GROWV(stack, sn, scap);
                    stack[sn++] = (dfs_frame){c, c, 0};
                    continue;
                }
                if (nary_local(nd)) ev[nev++] = (event){f->l, f->next};
                f->next++;
                continue;
            }
            ev[nev++] = (event){f->l, XNONE};
            sn--;
        }
    }
    /* 3. last use (event position) of every value that lives in a register */
    lastuse = mbl_alloc_array(nl ? nl : 1, sizeof *lastuse);
    reg = mbl_alloc_array(nl ? nl : 1, sizeof *reg);
    freel = mbl_alloc_array(nl ? nl : 1, sizeof *freel);
    t->ins = mbl_alloc_array(ninsmax ? ninsmax : 1, sizeof *t->ins);
    t->ins_node = mbl_alloc_array(ninsmax ? ninsmax : 1, sizeof *t->ins_node);
    t->outreg = mbl_alloc_array(n ? n : 1, sizeof *t->outreg);
    if (!lastuse || !reg || !freel || !t->ins || !t->ins_node || !t->outreg) goto oom;
    mblx__hugepages(lastuse, nl * sizeof *lastuse);
    mblx__hugepages(reg, nl * sizeof *reg);
    mblx__hugepages(t->ins, ninsmax * sizeof *t->ins);
    mblx__hugepages(t->ins_node, ninsmax * sizeof *t->ins_node);
    for (size_t l = 0; l < nl; l++) lastuse[l] = XNONE, reg[l] = XNONE;
    for (size_t p = 0; p < nev; p++) {
        uint32_t l = ev[p].l;
        const uint32_t *a = t->largs + t->lnd[l].aoff;
        if (ev[p].i != XNONE) { /* ACC(l, i): uses operand i (and operand 0 at i == 1) */
            if (ev[p].i >= 1) lastuse[a[ev[p].i]] = (uint32_t)p;
            if (ev[p].i == 1) lastuse[a[0]] = (uint32_t)p;
            continue;
        }
        if ((t->lnd[l].op == MBLX_OP_ADD || t->lnd[l].op == MBLX_OP_MUL) && t->lnd[l].na >= 2) continue;
        for (uint32_t i = 0; i < t->lnd[l].na; i++)
            if (reg_operand(t, l, i)) lastuse[a[i]] = (uint32_t)p;
    }
    for (size_t o = 0; o < n; o++) lastuse[outl[o]] = XPENDING; /* never */
    size_t nstep = 0;
    for (size_t l = 0; l < nl; l++) nstep += t->lnd[l].op == MBLX_OP_STEP;
    if (nstep && !(t->ext = mbl_alloc_array(nstep, 5 * sizeof *t->ext))) goto oom;
    /* 4. emit */
    size_t ni = 0, nfree = 0, nreg = 0, kext = 0;
#define EMIT(op_, a_, b_, c_)                                                                 \
    do {                                                                                      \
        t->ins[ni].op = (op_);                                                                \
        t->ins[ni].dst = dst;                                                                 \
        t->ins[ni].a = (a_);                                                                  \
        t->ins[ni].b = (b_);                                                                  \
        t->ins[ni].c = (c_);                                                                  \
        t->ins_node[ni] = l;                                                                  \
        ni++;                                                                                 \
    } while (0)
#define FREE_IF_DEAD(c_)                                                                      \
    do {                                                                                      \
        uint32_t c__ = (c_);                                                                  \
        if (lastuse[c__] == (uint32_t)p && reg[c__] != XNONE) {                               \
            freel[nfree++] = reg[c__];                                                        \
            reg[c__] = XNONE; /* guards against freeing twice */                              \
        }                                                                                     \
    } while (0)
    for (size_t p = 0; p < nev; p++) {
        uint32_t l = ev[p].l;
        const uint32_t *a = t->largs + t->lnd[l].aoff;
        uint32_t na = t->lnd[l].na;
        unsigned op = t->lnd[l].op;
        double val = t->lnd[l].val;
        int add = op == MBLX_OP_ADD;
        if (ev[p].i != XNONE) {
            uint32_t i = ev[p].i, dst;
            if (i == 0) continue;
            if (i == 1) {
                dst = nfree ? freel[--nfree] : (uint32_t)nreg++;
                reg[l] = dst;
                if (na == 2 && val != (add ? 0.0 : 1.0)) /* the node's constant, fused */
                    EMIT(add ? TI_ADD2C : TI_MUL2C, reg[a[0]], reg[a[1]], val);
                else
                    EMIT(add ? TI_ADD : TI_MUL, reg[a[0]], reg[a[1]], 0.0);
                FREE_IF_DEAD(a[0]);
            } else {
                dst = reg[l];
                EMIT(add ? TI_ADD : TI_MUL, dst, reg[a[i]], 0.0);
            }
            FREE_IF_DEAD(a[i]);
            continue;
        }
        if (lastuse[l] == XNONE) continue; /* only used as an immediate */
        if ((op == MBLX_OP_ADD || op == MBLX_OP_MUL) && na >= 2) {
            uint32_t dst = reg[l];
            if (na > 2 && val != (add ? 0.0 : 1.0)) EMIT(add ? TI_ADDC : TI_MULC, dst, 0, val);
            continue;
        }
        uint32_t dst = nfree ? freel[--nfree] : (uint32_t)nreg++;
        reg[l] = dst;
        switch (op) {
        case MBLX_OP_CONST: EMIT(TI_LDC, 0, 0, val); break;
        case MBLX_OP_SYMBOL: EMIT(TI_LDS, (uint32_t)val, 0, 0.0); break;
        case MBLX_OP_ADD: EMIT(TI_ADDC, reg[a[0]], 0, val); break;
        case MBLX_OP_MUL: EMIT(TI_MULC, reg[a[0]], 0, val); break;
        case MBLX_OP_POW:
            if (t->lnd[a[1]].op == MBLX_OP_CONST) {
                double e = t->lnd[a[1]].val;
                uint32_t b = reg[a[0]];
                if (e == 2.0) EMIT(TI_SQR, b, 0, e);
                else if (e == 3.0) EMIT(TI_CUBE, b, 0, e);
                else if (e == -1.0) EMIT(TI_RECIP, b, 0, e);
                else if (e == -2.0) EMIT(TI_RSQR, b, 0, e);
                else if (e == 0.5) EMIT(TI_SQRTP, b, 0, e);
                else EMIT(TI_POWC, b, 0, e);
            } else {
                EMIT(TI_POW, reg[a[0]], reg[a[1]], 0.0);
            }
            break;
        case MBLX_OP_STEP:
            for (int i = 0; i < 5; i++) t->ext[5 * kext + (size_t)i] = reg[a[i]];
            EMIT(TI_STEP, (uint32_t)(5 * kext), 0, 0.0);
            kext++;
            break;
        default: {
            static const unsigned map1[MBLX_OP_COUNT_] = {
                [MBLX_OP_SIN] = TI_SIN,   [MBLX_OP_COS] = TI_COS,   [MBLX_OP_TAN] = TI_TAN,
                [MBLX_OP_ASIN] = TI_ASIN, [MBLX_OP_ACOS] = TI_ACOS, [MBLX_OP_ATAN] = TI_ATAN,
                [MBLX_OP_ATAN2] = TI_ATAN2, [MBLX_OP_SINH] = TI_SINH, [MBLX_OP_COSH] = TI_COSH,
                [MBLX_OP_TANH] = TI_TANH, [MBLX_OP_EXP] = TI_EXP,   [MBLX_OP_LOG] = TI_LOG,
                [MBLX_OP_SQRT] = TI_SQRT, [MBLX_OP_ABS] = TI_ABS,   [MBLX_OP_SIGN] = TI_SIGN,
                [MBLX_OP_MIN] = TI_MIN,   [MBLX_OP_MAX] = TI_MAX,
            };
            EMIT(map1[op], reg[a[0]], na > 1 ? reg[a[1]] : 0, 0.0);
            break;
        }
        }
        for (uint32_t i = 0; i < na; i++)
            if (reg_operand(t, l, i)) FREE_IF_DEAD(a[i]);
    }
#undef EMIT
#undef FREE_IF_DEAD
#undef GROWV
    for (size_t o = 0; o < n; o++) t->outreg[o] = reg[outl[o]];
    t->nins = ni;
    t->nreg = nreg;
    for (size_t i = 0; i < ni; i++) t->ins_node[i] = owner[t->ins_node[i]];
    if (dlnd) {
        mbl_free(t->lnd);
        mbl_free(t->largs);
        t->lnd = dlnd;
        t->largs = dlargs;
        dlnd = NULL;
        dlargs = NULL;
    }
    t->nl = nl0;
    mbl_free(map.key);
    mbl_free(map.val);
    mbl_free(map.dense);
    mbl_free(stack);
    mbl_free(ev);
    mbl_free(lastuse);
    mbl_free(reg);
    mbl_free(freel);
    mbl_free(outl);
    mbl_free(seen);
    mbl_free(owner);
    if (schedule_runs(t)) {
        mblx_tape_free(t);
        mbl_error(st, MBL_ENOMEM, "out of memory while compiling expressions");
        return NULL;
    }
    mbl_status_clear(st);
    return t;
oom:
    mbl_free(map.key);
    mbl_free(map.val);
    mbl_free(map.dense);
    mbl_free(stack);
    mbl_free(ev);
    mbl_free(lastuse);
    mbl_free(reg);
    mbl_free(freel);
    mbl_free(outl);
    mbl_free(seen);
    mbl_free(owner);
    mbl_free(dlnd);
    mbl_free(dlargs);
    mblx_tape_free(t);
    mbl_error(st, MBL_ENOMEM, "out of memory while compiling expressions");
    return NULL;
}

/* ---- evaluation ----------------------------------------------------------------------------- */

static inline double exec1(const tins *p, const double *x, const double *w, const uint32_t *ext)
{
    switch (p->op) {
    case TI_LDC: return p->c;
    case TI_LDS: return x[p->a];
    case TI_ADD: return w[p->a] + w[p->b];
    case TI_ADDC: return w[p->a] + p->c;
    case TI_MUL: return w[p->a] * w[p->b];
    case TI_MULC: return w[p->a] * p->c;
    case TI_ADD2C: return w[p->a] + w[p->b] + p->c;
    case TI_MUL2C: return w[p->a] * w[p->b] * p->c;
    case TI_SQR: return w[p->a] * w[p->a];
    case TI_CUBE: return w[p->a] * w[p->a] * w[p->a];
    case TI_RECIP: return 1.0 / w[p->a];
    case TI_RSQR: return 1.0 / (w[p->a] * w[p->a]);
    case TI_SQRTP: return sqrt(w[p->a]);
    case TI_POWC: return pow(w[p->a], p->c);
    case TI_POW: return pow(w[p->a], w[p->b]);
    case TI_SQRT: return sqrt(w[p->a]);
    case TI_SIN: return sin(w[p->a]);
    case TI_COS: return cos(w[p->a]);
    case TI_TAN: return tan(w[p->a]);
    case TI_ASIN: return asin(w[p->a]);
    case TI_ACOS: return acos(w[p->a]);
    case TI_ATAN: return atan(w[p->a]);
    case TI_ATAN2: return atan2(w[p->a], w[p->b]);
    case TI_SINH: return sinh(w[p->a]);
    case TI_COSH: return cosh(w[p->a]);
    case TI_TANH: return tanh(w[p->a]);
    case TI_EXP: return exp(w[p->a]);
    case TI_LOG: return log(w[p->a]);
    case TI_ABS: return fabs(w[p->a]);
    case TI_SIGN: return (double)((w[p->a] > 0.0) - (w[p->a] < 0.0));
    case TI_MIN: return w[p->a] < w[p->b] ? w[p->a] : w[p->b];
    case TI_MAX: return w[p->a] > w[p->b] ? w[p->a] : w[p->b];
    case TI_STEP: {
        const uint32_t *r = ext + p->a;
        return mblx__step_value(w[r[0]], w[r[1]], w[r[2]], w[r[3]], w[r[4]]);
    }
    default: return NAN;
    }
}

static inline int not_finite(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
}

static const char *tape_symname(const void *ctx, uint32_t node)
{
    const mblx_tape *t = ctx;
    return t->names + t->lnd[node].doff;
}

/* Length of the expression excerpt in an error message. */
enum { DIAG_EXPR_MAX = MBL_MSG_MAX / 2 };

static int diagnose(const mblx_tape *t, const double *x, double *w, mbl_status *st)
{
    for (size_t i = 0; i < t->nins; i++) {
        const tins *p = &t->ins[i];
        double v = exec1(p, x, w, t->ext);
        if (!not_finite(v)) {
            w[p->dst] = v;
            continue;
        }
        uint32_t l = t->ins_node[i];
        double a = p->op == TI_LDS ? x[p->a] : (p->op == TI_LDC ? p->c : w[p->a]);
        double b = (p->op == TI_POW || p->op == TI_ATAN2) ? w[p->b] : p->c;
        char what[MBL_MSG_MAX / 4];
        switch (t->lnd[l].op) {
        case MBLX_OP_SYMBOL:
            snprintf(what, sizeof what, "non-finite value %g of symbol '%s'", a, tape_symname(t, l));
            break;
        case MBLX_OP_SQRT: snprintf(what, sizeof what, "sqrt of negative value %.17g", a); break;
        case MBLX_OP_LOG: snprintf(what, sizeof what, "log of non-positive value %.17g", a); break;
        case MBLX_OP_ASIN:
        case MBLX_OP_ACOS:
            snprintf(what, sizeof what, "%s of value %.17g outside [-1, 1]",
                     mblx_op_name((mblx_op)t->lnd[l].op), a);
            break;
        case MBLX_OP_POW:
            if (p->op == TI_POW || p->op == TI_POWC || p->op == TI_RECIP || p->op == TI_RSQR ||
                p->op == TI_SQRTP) {
                if (p->op != TI_POW && p->op != TI_POWC) b = p->c;
                if (a == 0.0 && b < 0.0) {
                    snprintf(what, sizeof what, "division by zero");
                    break;
                }
                if (a < 0.0 && b != floor(b)) {
                    snprintf(what, sizeof what, "pow of negative base %.17g to non-integer exponent %.17g", a, b);
                    break;
                }
            }
            snprintf(what, sizeof what, "non-finite result %g", v);
            break;
        default: snprintf(what, sizeof what, "non-finite result %g", v); break;
        }
        char ex[DIAG_EXPR_MAX];
        mblx__view view = {t->lnd, t->largs, tape_symname, t};
        size_t len = mblx__print_view(&view, l, ex, sizeof ex);
        if (len == SIZE_MAX) return mbl_error(st, MBL_EDOMAIN, "%s", what);
        if (len >= sizeof ex) memcpy(ex + sizeof ex - 4, "...", 4);
        return mbl_error(st, MBL_EDOMAIN, "%s in %s", what, ex);
    }
    return mbl_error(st, MBL_EDOMAIN, "non-finite result");
}

int mblx_tape_eval(const mblx_tape *t, const double *symvals, double *out, double *work,
                   mbl_status *st)
{
    if (!t || (t->nout && !out) || (t->nreg && !work) || (t->nsymreq && !symvals))
        return mbl_error(st, MBL_EARG, "mblx_tape_eval: NULL argument");
    const tins *ins = t->ins;
    const uint32_t *ext = t->ext;
    double *w = work;
    uint64_t bad = 0;
#define RUN(expr)                                                                             \
    for (; p < e; p++) {                                                                      \
        double v = (expr);                                                                    \
        w[p->dst] = v;                                                                        \
        uint64_t u;                                                                           \
        memcpy(&u, &v, sizeof u);                                                             \
        bad |= (~u & 0x7ff0000000000000ull) == 0;                                             \
    }                                                                                         \
    break
    for (size_t r = 0; r < t->nrun; r++) {
        const tins *p = ins + t->run_start[r], *e = ins + t->run_start[r + 1];
        switch (t->run_op[r]) {
        case TI_LDC: RUN(p->c);
        case TI_LDS: RUN(symvals[p->a]);
        case TI_ADD: RUN(w[p->a] + w[p->b]);
        case TI_ADDC: RUN(w[p->a] + p->c);
        case TI_MUL: RUN(w[p->a] * w[p->b]);
        case TI_MULC: RUN(w[p->a] * p->c);
        case TI_ADD2C: RUN(w[p->a] + w[p->b] + p->c);
        case TI_MUL2C: RUN(w[p->a] * w[p->b] * p->c);
        case TI_SQR: RUN(w[p->a] * w[p->a]);
        default: RUN(exec1(p, symvals, w, ext));
        }
    }
#undef RUN
    if (bad) return diagnose(t, symvals, work, st);
    for (size_t o = 0; o < t->nout; o++) out[o] = w[t->outreg[o]];
    mbl_status_clear(st);
    return 0;
}

int mblx_eval(const mblx_graph *g, mblx_id e, const double *symvals, double *value,
              mbl_status *st)
{
    mblx_tape *t = mblx_compile(g, 1, &e, st);
    if (!t) return st ? st->code : MBL_ENOMEM;
    double local[INIT_CAP];
    double *w = t->nreg <= INIT_CAP ? local : mbl_alloc_array(t->nreg, sizeof *w);
    int rc;
    if (!w) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory while evaluating an expression");
    } else {
        double v = 0.0;
        rc = mblx_tape_eval(t, symvals, &v, w, st);
        if (rc == 0 && value) *value = v;
    }
    if (w != local) mbl_free(w);
    mblx_tape_free(t);
    return rc;
}
