/* Expression graph: node storage, hash-consing, dependence sets and symbols. The simplifying
 * builders that make its nodes: builders.c; reading a node: inspect.c. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "expr/expr_internal.h"
#include "expr/parse_memo.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Initial capacities (grown geometrically). */
enum { INIT_NODES = 64, INIT_POOL = MBLX__INIT_POOL, INIT_TABLE = 128 };

/* ---- errors ------------------------------------------------------------------------------- */

mblx_id mblx__fail(mblx_graph *g, int code, const char *fmt, ...)
{
    if (g && !g->err) {
        g->err = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->errmsg, sizeof g->errmsg, fmt, ap);
        va_end(ap);
        for (char *p = g->errmsg; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
    }
    return XNONE;
}

mblx_id mblx__oom(mblx_graph *g)
{
    return mblx__fail(g, MBL_ENOMEM, "out of memory in the expression graph");
}

int mblx_graph_status(const mblx_graph *g, mbl_status *st)
{
    if (!g) return mbl_error(st, MBL_EARG, "no expression graph");
    if (!g->err) {
        mbl_status_clear(st);
        return 0;
    }
    return mbl_error(st, g->err, "%s", g->errmsg);
}

void mblx_graph_clear_status(mblx_graph *g)
{
    if (!g) return;
    g->err = 0;
    g->errmsg[0] = '\0';
}

/* ---- memory ------------------------------------------------------------------------------- */

void mblx__hugepages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* Large arrays are written once, front to back, as the graph or a tape grows: on a system
     * with transparent huge pages in "madvise" mode, 2 MB pages make that 512 times fewer page
     * faults. Advice only: failure is ignored and nothing else changes. */
    enum { HUGE = 2u << 20, MIN_BYTES = 4u << 20 };
    if (!p || bytes < MIN_BYTES) return;
    uintptr_t a = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
    uintptr_t b = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

/* A zeroed block from the heap (calloc). From 1 MB up such blocks (the graph's hash table, the
 * parser's memo of names, the tape sharing's pair table) were mapped from the system, to skip
 * calloc's clearing (glibc clears a block from the heap's top in full: cli/startup.c reserves it),
 * but then their pages, first read as the shared zero page and then written, were faulted in
 * 4 KiB pages (1,580 of the N = 10^4 four-bar's 1,830 faults, 10-15 us each on the machines
 * measured), and unmapped when freed, so that the blocks allocated after them (the model's
 * compilation) cleared pages of their own again. In the heap they are on its huge pages and
 * their pages are used again after them: 101 -> 80 huge pages touched at N = 10^4, for the
 * clearing (28 M instructions). Blocks from glibc's mmap threshold up it maps itself, and
 * does not clear. */
void *mblx__zeroed_alloc(size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / sz) return NULL;
    void *p = mbl_calloc(n ? n : 1, sz ? sz : 1);
    mblx__hugepages(p, n * sz);
    return p;
}

void mblx__zeroed_free(void *p, size_t n, size_t sz)
{
    (void)n, (void)sz;
    mbl_free(p);
}

/* Reallocate p (old_bytes long) to n elements of size sz. Large arrays move to a new block that
 * is advised for huge pages before the copy touches it (realloc would copy first). */
void *mblx__grow_block(void *p, size_t old_bytes, size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / sz) return NULL;
    if (n * sz < ((size_t)4 << 20)) return mbl_realloc_array(p, n, sz);
    void *q = mbl_alloc_array(n, sz);
    if (!q) return NULL;
    mblx__hugepages(q, n * sz);
    if (p && old_bytes) memcpy(q, p, old_bytes < n * sz ? old_bytes : n * sz);
    mbl_free(p);
    return q;
}

/* ---- growth helpers ----------------------------------------------------------------------- */

/* Grow *p (elements of size sz, capacity *cap) to hold at least need elements. */
static int grow(void **p, size_t *cap, size_t need, size_t sz, size_t init)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : init;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return -1;
        nc *= 2;
    }
    void *q = mblx__grow_block(*p, *cap * sz, nc, sz);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

int mblx__grow(void **p, size_t *cap, size_t need, size_t sz, size_t init) { return grow(p, cap, need, sz, init); }

static void defer_cover(mblx_graph *g);
static void table_widen_ids(mblx_graph *g);

int mblx__grow_nodes(mblx_graph *g, size_t need)
{
    if (need <= g->cap) return 0;
    if (need > (size_t)XPENDING - 1) return -1; /* ids must stay below the reserved values */
    size_t nc = g->cap ? g->cap : INIT_NODES;
    while (nc < need) nc *= 2;
    if (nc > (size_t)XPENDING - 1) nc = (size_t)XPENDING - 1;
#define GROW_ARR(field)                                                                       \
    do {                                                                                      \
        void *q_ = mblx__grow_block(g->field, (size_t)g->cap * sizeof *g->field, nc,          \
                                    sizeof *g->field);                                        \
        if (!q_) return -1;                                                                   \
        g->field = q_;                                                                        \
    } while (0)
    GROW_ARR(nd);
    if (g->stamp) { /* none while dropped (mblx_graph_drop_table) */
        GROW_ARR(stamp);
        GROW_ARR(memo);
    }
#undef GROW_ARR
    /* stamp[] is not cleared here: a node's stamp is set when the node is made (intern,
     * mblx_symbol_n), and nothing reads the stamp of a node that does not exist yet, so the
     * reserve beyond n stays untouched; memo[] is read only where the stamp is current */
    g->cap = (uint32_t)nc;
    table_widen_ids(g);
    defer_cover(g);
    return 0;
}

/* The traversal scratch of a graph whose scratch was dropped: stamps cleared for the nodes that
 * exist (the capacity beyond stays untouched, as in mblx__grow_nodes). */
static int scratch_make(mblx_graph *g)
{
    size_t cap = g->cap ? g->cap : INIT_NODES;
    uint32_t *s = mblx__grow_block(NULL, 0, cap, sizeof *s), *m = mblx__grow_block(NULL, 0, cap, sizeof *m);
    if (!s || !m) {
        mbl_free(s), mbl_free(m);
        return -1;
    }
    memset(s, 0, (size_t)g->n * sizeof *s);
    g->stamp = s;
    g->memo = m;
    g->epoch = 0;
    return 0;
}

int mblx__new_epoch(mblx_graph *g)
{
    if (!g->stamp && scratch_make(g)) return -1;
    g->epoch++;
    if (g->epoch == 0 || g->epoch == XPENDING) {
        memset(g->stamp, 0, (size_t)g->cap * sizeof *g->stamp);
        g->epoch = 1;
    }
    return 0;
}

/* ---- hashing ------------------------------------------------------------------------------ */

static inline uint32_t hash_key(unsigned op, double v, size_t n, const uint32_t *a)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    /* one finalizer for the whole key (three cost 4 % of loading a small model's graph) */
    uint64_t h = ((0x9e3779b97f4a7c15ull ^ op ^ ((uint64_t)n << 8)) ^ bits) * 0xff51afd7ed558ccdull;
    for (size_t i = 0; i < n; i++) h = (h ^ a[i]) * 0x100000001b3ull + (h >> 29);
    return (uint32_t)(mblx__mix64(h) & 0xffffffffu);
}

static int same_key(const mblx_graph *g, mblx_id e, unsigned op, double v, size_t n,
                    const uint32_t *a)
{
    if (g->nd[e].op != op || g->nd[e].na != n) return 0;
    if (memcmp(&g->nd[e].val, &v, sizeof v) != 0) return 0;
    const uint32_t *b = mblx__args(g, e);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Table entries are 32 bits: the node id + 1 in the low bits of g->tid_mask (enough for every id
 * below the node capacity: mblx__grow_nodes widens them as it grows) and the key's hash bits above
 * them, a tag compared before the node is read; 0 is an empty slot, so that a zeroed table is
 * empty. A key's slot is found from its hash's low bits. Half the 8 bytes of (hash << 32) | (id +
 * 1): the N = 10^4 four-bar's table is 16 MB, below glibc's mmap threshold (32 MB, cli/startup.c),
 * so it is taken from the heap and its pages, freed at mblx_graph_drop_table, serve the model's
 * compilation after it (mapped and unmapped, they were cleared twice: 21 of the run's 101 huge
 * pages). */
#define TABLE_EMPTY 0

/* the bits of an entry that hold the id + 1 of the nodes below the capacity cap (all: no tag) */
static uint32_t table_id_mask(size_t cap)
{
    uint32_t m = 1;
    while (m != UINT32_MAX && m < cap) m = m << 1 | 1;
    return m;
}

/* the entry of node e + 1 of hash h */
static inline uint32_t table_entry(uint32_t h, uint32_t e1, uint32_t mask) { return (h & ~mask) | e1; }

/* the node of a table entry */
static inline mblx_id table_node(uint32_t en, uint32_t mask) { return (en & mask) - 1; }

/* ---- deferred insertion into a large table --------------------------------------------------
 * A large graph's table is far larger than the caches: the slot a lookup reads was a miss to
 * memory that stalled mblx__intern, a fifth of the N = 10^4 four-bar's whole process (perf). Two
 * things avoid most of those reads. A node one of whose operands is no operand of a node of the
 * same hash bits cannot exist yet (sig_bit): its lookup is skipped. A new node's entry waits in a small batch
 * (looked up there too) and the batch goes into the table at once, each slot fetched ahead of
 * its insertion. Which nodes exist and their handles do not change: only when the table learns
 * of them. From 2^20 slots (8 MB of 8-byte slots then, 4 MB now; the L2 cache of the machine
 * measured is 2 MB): the N = 1000 four-bar's 2 MB table gained nothing and took 3 % more
 * instructions. */
enum { DEFER_MIN_TCAP = 1 << 20, DEFER_BATCH = 2048, DEFER_AHEAD = 16 };
/* The batch's lookup table holds positions in the batch tagged with the batch's generation:
 * slots of an older batch count as empty, so a flush need not clear the table (a memset of its
 * 32 KB at each of the N = 10^4 four-bar's 463 flushes: 15.2 M instructions), only once every
 * DEFER_GENS - 1 batches, when the generations start again from 1. */
enum { PEND_BITS = 11, PEND_MASK = (1 << PEND_BITS) - 1, DEFER_GENS = 64 };
_Static_assert(DEFER_BATCH <= (1 << PEND_BITS), "a position in the batch fits in its bits");
_Static_assert(DEFER_GENS <= (1u << (32 - PEND_BITS)), "a generation fits in its bits");

typedef struct mblx__defer {
    uint8_t *used; /* byte per node: bit sig_bit(h) set for each node of hash h it is an operand of */
    size_t used_cap; /* nodes covered */
    uint32_t npend;
    uint32_t gen;               /* the batch's generation, 1 .. DEFER_GENS - 1 */
    uint64_t pend[DEFER_BATCH]; /* entries not yet in the table, in the order made */
    uint32_t ptab[2 * DEFER_BATCH]; /* (generation << PEND_BITS) | position in pend, by hash (open
                                       addressing), for lookups: the batch's when of gen */
} mblx__defer;

/* is slot k of the batch's lookup table taken by the batch? */
static inline int ptab_taken(const mblx__defer *D, size_t k) { return D->ptab[k] >> PEND_BITS == D->gen; }

/* entry en put in the batch (which has room) and in its lookup table */
static inline void pend_add(mblx__defer *D, uint64_t en)
{
    size_t k = (size_t)(en >> 32) & (2 * DEFER_BATCH - 1);
    while (ptab_taken(D, k)) k = (k + 1) & (2 * DEFER_BATCH - 1);
    D->ptab[k] = D->gen << PEND_BITS | D->npend;
    D->pend[D->npend++] = en;
}

static int used_grow(mblx__defer *D, size_t nodes)
{
    if (nodes <= D->used_cap) return 0;
    size_t nc = nodes; /* the node capacity + 1 (geometric): doubled, it was 4 MB at N = 10^4 */
    uint8_t *u = mbl_realloc(D->used, nc);
    if (!u) return -1;
    memset(u + D->used_cap, 0, nc - D->used_cap);
    D->used = u;
    D->used_cap = nc;
    return 0;
}

/* Each operand of a node of hash h has bit sig_bit(h) set (a filter of its parents, read where
 * the new node's operands were just read or made). At N = 10^4 it leaves 0.28 of 1.42 M lookups
 * to the table, 0.27 of which find their node; a filter of the table's hashes (1 bit per slot,
 * 512 KB: its reads and writes were cache misses) is not needed any more. */
static inline uint8_t sig_bit(uint32_t h) { return (uint8_t)(1u << (h >> 29)); }

/* g->defer, made when first needed from the operands of every node; NULL when out of memory
 * (then entries go into the table directly, and every lookup reads it, as before) */
static mblx__defer *defer_get(mblx_graph *g)
{
    if (g->defer) return g->defer;
    mblx__defer *D = mbl_calloc(1, sizeof *D);
    if (!D || used_grow(D, (size_t)g->cap + 1)) {
        if (D) mbl_free(D->used);
        mbl_free(D);
        return NULL;
    }
    D->gen = 1; /* (the zeroed slots: of generation 0, empty) */
    for (uint32_t e = 0; e < g->n; e++) {
        if (g->nd[e].op == MBLX_OP_SYMBOL) continue; /* (no operands) */
        uint32_t h = hash_key(g->nd[e].op, g->nd[e].val, g->nd[e].na, mblx__args(g, e));
        for (uint32_t i = 0; i < g->nd[e].na; i++) D->used[mblx__args(g, e)[i]] |= sig_bit(h);
    }
    return g->defer = D;
}

static void defer_flush(mblx_graph *g);

/* the batch into the table, the marks freed: out of memory, or dropped (remade by defer_get) */
static void defer_free(mblx_graph *g)
{
    if (!g->defer) return;
    if (g->tcap) defer_flush(g);
    mbl_free(g->defer->used);
    mbl_free(g->defer);
    g->defer = NULL;
}

/* The marks grown with the node arrays (mblx__grow_nodes), so that every node that can be made
 * has one and a lookup need not check; out of memory: no more deferring (marks missing for some
 * nodes would skip lookups of nodes that exist). */
static void defer_cover(mblx_graph *g)
{
    if (g->defer && used_grow(g->defer, (size_t)g->cap + 1)) defer_free(g);
}

/* entry en of hash h into table t (which has an empty slot) */
static void table_put(uint32_t *t, size_t cap, uint32_t h, uint32_t en)
{
    size_t k = h & (cap - 1);
    while (t[k] != TABLE_EMPTY) k = (k + 1) & (cap - 1);
    t[k] = en;
}

/* the batch into the table (which has room: its count includes the batch) */
static void defer_flush(mblx_graph *g)
{
    mblx__defer *D = g->defer;
    if (!D || !D->npend) return;
    for (uint32_t i = 0; i < D->npend; i++) {
        if (i + DEFER_AHEAD < D->npend)
            MBLX__PREFETCH(&g->table[(size_t)(D->pend[i + DEFER_AHEAD] >> 32) & (g->tcap - 1)], 0);
        uint32_t h = (uint32_t)(D->pend[i] >> 32);
        table_put(g->table, g->tcap, h, table_entry(h, (uint32_t)D->pend[i], g->tid_mask));
    }
    D->npend = 0;
    if (++D->gen == DEFER_GENS) { /* the slots of generation 1 made empty before it comes again */
        memset(D->ptab, 0, sizeof D->ptab);
        D->gen = 1;
    }
}

/* A table of ncap empty slots (TABLE_EMPTY is 0); NULL when out of memory. Freed by mbl_free. */
static uint32_t *table_new(size_t ncap) { return mblx__zeroed_alloc(ncap, sizeof(uint32_t)); }

/* The table made at ncap slots (at least twice the entries) from the graph's nodes: every node
 * but the symbols (which are made without it) in handle order, the deferral's batch among them
 * (put into the old table first). An entry's tag holds fewer bits of the hash than the slot's
 * position needs at a larger capacity, so the hashes are computed again from the nodes. */
static __attribute__((noinline)) int table_make(mblx_graph *g, size_t ncap)
{
    uint32_t *t = table_new(ncap);
    if (!t) return -1;
    defer_flush(g);
    uint32_t mask = table_id_mask(g->cap);
    size_t cnt = 0;
    for (uint32_t e = 0; e < g->n; e++) {
        const mblx__node *nd = &g->nd[e];
        if (nd->op == MBLX_OP_SYMBOL) continue;
        uint32_t h = hash_key(nd->op, nd->val, nd->na, mblx__args(g, e));
        table_put(t, ncap, h, table_entry(h, e + 1, mask));
        cnt++;
    }
    mbl_free(g->table);
    g->table = t;
    g->tcap = ncap;
    g->tcount = cnt;
    g->tid_mask = mask;
    g->tcap_dropped = 0;
    return 0;
}

/* The table of a graph whose table was dropped (mblx_graph_drop_table), rebuilt from its nodes at
 * the capacity it had. */
static __attribute__((noinline)) int table_rebuild(mblx_graph *g)
{
    size_t ncap = g->tcap_dropped ? g->tcap_dropped : INIT_TABLE;
    while (ncap < 2 * ((size_t)g->n + 1)) ncap *= 2;
    return table_make(g, ncap);
}

/* The entries' ids widened to the node capacity (mblx__grow_nodes): the tag's bits below the new
 * width cleared (the ids have zeros there), each entry in its slot. */
static void table_widen_ids(mblx_graph *g)
{
    uint32_t mask = table_id_mask(g->cap);
    if (!g->table || mask == g->tid_mask) return;
    uint32_t clear = mask & ~g->tid_mask;
    for (size_t k = 0; k < g->tcap; k++) g->table[k] &= ~clear;
    g->tid_mask = mask;
}

int mblx_graph_drop_table(mblx_graph *g)
{
    if (!g) return MBL_EARG;
    mbl_free(g->stamp), mbl_free(g->memo); /* the traversals' scratch: made again by the next one */
    g->stamp = g->memo = NULL;
    mblx__tdmemo_free(g); /* the total derivatives' memo too: made again by the next one */
    mblx__name_memo_free(g); /* the parser's memo of names: made again by the next parse */
    if (g->defer) g->defer->npend = 0, defer_free(g); /* the table, its parents' bits: remade from every node */
    mbl_free(g->tmp), g->tmp = NULL, g->tmp_cap = 0; /* the unions' scratch: grown by the next (compute_deps) */
    g->make_room = 0; /* (the table's count and capacity change) */
    if (!g->tcap) return 0;
    g->tcap_dropped = g->tcap;
    mbl_free(g->table);
    g->table = NULL;
    g->tcap = 0;
    g->tcount = 0;
    return 0;
}

/* ---- dependence sets ---------------------------------------------------------------------- */

int mblx__dep_has(const mblx_graph *g, mblx_id e, uint32_t s)
{
    const uint32_t *d = g->deps + g->nd[e].doff;
    size_t lo = 0, hi = g->nd[e].dcnt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d[mid] < s)
            lo = mid + 1;
        else if (d[mid] > s)
            hi = mid;
        else
            return 1;
    }
    return 0;
}

#define LESS_U32(x, y) (*(x) < *(y))
MBLX__STABLE_SORT(sort_u32, uint32_t, LESS_U32)

/* Sorted union without duplicates of the sorted sets a[0..na) and b[0..nb) into out; na, with out
 * not written, when b is within a. The operands of a sum mostly depend on symbols the others
 * depend on too: a scan without writes finds b within a (or the first of b's symbols that is not,
 * from where the merge goes on), cheaper than the merge that wrote a again. (The scan reads b[j]
 * where it compares, not through a local: that compiles shorter.) */
static inline size_t merge_u32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out)
{
    size_t i = 0, j = 0, k = 0;
    for (; j < nb; i++, j++) {
        while (i < na && a[i] < b[j]) i++;
        if (i == na || a[i] != b[j]) break;
    }
    if (j == nb) return na;
    for (; k < i; k++) out[k] = a[k];
    while (i < na && j < nb) {
        uint32_t x = a[i], y = b[j];
        out[k++] = x < y ? x : y;
        i += x <= y;
        j += y <= x;
    }
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
    return k;
}

/* Is the dependence set of c contained in that of b? Nodes never change, so the answer for a
 * pair of large sets is kept in a small direct-mapped cache: the derivatives of a wide row
 * (cos(r0) * S2 * dr0/dx_k, column after column) make new products over the same wide operands
 * again and again, and testing |S2| symbols in r0's set each time made a Jacobian of width w cost
 * w^2 log w here (tests/expr/test_expr_wide.c). */
static int deps_subset(mblx_graph *g, uint32_t c, uint32_t b)
{
    uint32_t cnt = g->nd[c].dcnt;
    uint64_t key = ((uint64_t)c << 32 | b) + 1; /* + 1: 0 marks an empty slot */
    size_t slot = 0;
    struct mblx__subset_cache *sc = NULL;
    if (cnt >= MBLX__SUBSET_CACHE_MIN) { /* (36 KB: not made, nor cleared, for graphs without such sets) */
        sc = g->subset ? g->subset : (g->subset = mbl_calloc(1, sizeof *g->subset));
        slot = (size_t)(mblx__mix64(key) & (MBLX__SUBSET_CACHE - 1));
        if (sc && sc->key[slot] == key) return sc->val[slot];
    }
    /* both sorted without repeats: one walk through b's set (a binary search per symbol of c,
     * restarted from the left each time, was a fifth of interning the bicycle's nodes) */
    const uint32_t *d = g->deps + g->nd[c].doff, *e = g->deps + g->nd[b].doff;
    uint32_t nb = g->nd[b].dcnt;
    int r = cnt <= nb;
    size_t lo = 0;
    for (uint32_t k = 0; k < cnt && r; k++) {
        uint32_t x = d[k];
        if (nb - lo > 16) { /* far: gallop from lo (steps 1, 2, 4, ..), then halve down to the
                             * first entry >= x: log of the distance moved, not of what is left
                             * (halving all of the rest was most of loading a spatial chain in
                             * relative coordinates) */
            size_t step = 1;
            while (lo + step < nb && e[lo + step] < x) step <<= 1;
            size_t hi = lo + step < nb ? lo + step + 1 : nb;
            if (step > 1) lo += (step >> 1) + 1; /* e[lo + step / 2] < x: seen */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (e[mid] < x)
                    lo = mid + 1;
                else
                    hi = mid;
            }
        } else {
            while (lo < nb && e[lo] < x) lo++;
        }
        r = lo < nb && e[lo] == x;
        lo++;
    }
    if (sc) sc->key[slot] = key, sc->val[slot] = (uint8_t)r;
    return r;
}

/* The sorted union without duplicates of the dependence sets of a[0..n) into cur (*u of them;
 * nxt: scratch as long): each symbol is taken once by its mark (depmark), then the few distinct
 * ones are sorted, or read off the marks in order when they fill much of their range. Sorting the
 * concatenated sets instead (n sets of d symbols: n d log(n d)) was 13 % of the instructions of
 * loading the nonlinear Whipple bicycle (wide sums of terms over the same few symbols). */
/* A new stamp for the symbols' marks (depmark, one per symbol: == the stamp when marked); -1 when
 * out of memory. */
static int depmark_next(mblx_graph *g, uint32_t *stamp)
{
    if (g->depmark_cap < g->nsym) {
        size_t nc = g->depmark_cap ? g->depmark_cap : 64;
        while (nc < g->nsym) nc *= 2;
        uint32_t *q = mbl_realloc_array(g->depmark, nc, sizeof *q);
        if (!q) return -1;
        memset(q + g->depmark_cap, 0, (nc - g->depmark_cap) * sizeof *q);
        g->depmark = q;
        g->depmark_cap = (uint32_t)nc;
    }
    if (++g->depstamp == 0) {
        memset(g->depmark, 0, (size_t)g->depmark_cap * sizeof *g->depmark);
        g->depstamp = 1;
    }
    *stamp = g->depstamp;
    return 0;
}

/* Are the dependence sets of a[0..n) all within that of b (one of them)? b's symbols marked, then
 * each other set's read against the marks: |b| + the others' sizes, where deps_subset pays a
 * binary search in b's set per symbol. 1 within, 0 not, -1 out of memory. */
static __attribute__((noinline)) int deps_within_marked(mblx_graph *g, size_t n, const uint32_t *a, uint32_t b)
{
    uint32_t st;
    if (depmark_next(g, &st)) return -1;
    uint32_t *mk = g->depmark, nb = g->nd[b].dcnt, boff = g->nd[b].doff;
    const uint32_t *e = g->deps + boff;
    for (uint32_t j = 0; j < nb; j++) mk[e[j]] = st;
    for (size_t i = 0; i < n; i++) {
        const mblx__node *c = &g->nd[a[i]];
        if (a[i] == b || c->dcnt == 0 || c->doff == boff) continue;
        if (c->dcnt > nb) return 0;
        const uint32_t *d = g->deps + c->doff;
        for (uint32_t j = 0; j < c->dcnt; j++)
            if (mk[d[j]] != st) return 0;
    }
    return 1;
}

static int union_marked(mblx_graph *g, size_t n, const uint32_t *a, uint32_t *cur, uint32_t *nxt, size_t *u)
{
    uint32_t st;
    if (depmark_next(g, &st)) return -1;
    uint32_t lo = UINT32_MAX, hi = 0, *mk = g->depmark;
    size_t k = 0;
    uint64_t read = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *d = g->deps + g->nd[a[i]].doff;
        read += g->nd[a[i]].dcnt;
        for (uint32_t j = 0, c = g->nd[a[i]].dcnt; j < c; j++) {
            uint32_t s = d[j];
            if (mk[s] == st) continue;
            mk[s] = st;
            cur[k++] = s;
            if (s < lo) lo = s;
            if (s > hi) hi = s;
        }
    }
    if (k > 1 && (size_t)(hi - lo) < 4 * k) { /* dense in [lo, hi]: read the marks in order */
        size_t w = 0;
        for (uint32_t s = lo; s <= hi; s++)
            if (mk[s] == st) cur[w++] = s;
        g->dep_union_steps += (uint64_t)(hi - lo) + 1;
    } else if (k > 1) {
        sort_u32(cur, k, nxt);
        g->dep_union_steps += (uint64_t)k * (uint64_t)ceil(log2((double)k));
    }
    g->dep_union_steps += read;
    *u = k;
    return 0;
}

/* dst[0..n) = src[0..n): most operand lists and dependence sets are a few entries long, where a
 * call of memcpy cost more than the copy (184,000 calls while loading the N = 1000 four-bar). */
static inline void copy_u32(uint32_t *restrict dst, const uint32_t *restrict src, size_t n)
{
    if (n > 4) {
        memcpy(dst, src, n * sizeof *src);
        return;
    }
    switch (n) {
    case 4: dst[3] = src[3]; /* fall through */
    case 3: dst[2] = src[2]; /* fall through */
    case 2: dst[1] = src[1]; /* fall through */
    case 1: dst[0] = src[0]; /* fall through */
    default: break;
    }
}

/* Operand counts up to this are united by successive merges, longer lists by the marks; a long
 * list's sets are tested within the largest by the marks when that has at least DEPS_MARK_MIN
 * symbols (smaller ones: a walk through both sorted sets costs less than marking). */
enum { DEPS_MERGE_MAX = 8, DEPS_MARK_MIN = 8 };

/* The sorted set src[0..u) with the symbol x put in its place, into out; returns u + 1, or u when
 * x is in src already (out then partly written and not to be read). */
static inline size_t insert_u32(const uint32_t *src, size_t u, uint32_t x, uint32_t *out)
{
    size_t k = 0;
    while (k < u && src[k] < x) out[k] = src[k], k++;
    if (k < u && src[k] == x) return u;
    out[k] = x;
    for (; k < u; k++) out[k + 1] = src[k];
    return u + 1;
}

/* A new dependence set set[0..u) appended to the pool: its place (*off, *cnt); -1 when out of
 * memory. */
static inline int deps_append(mblx_graph *g, const uint32_t *set, size_t u, uint32_t *off, uint32_t *cnt)
{
    if (g->ndeps_used + u > (size_t)UINT32_MAX ||
        grow((void **)&g->deps, &g->deps_cap, g->ndeps_used + u, sizeof *g->deps, INIT_POOL))
        return -1;
    copy_u32(g->deps + g->ndeps_used, set, u);
    *off = (uint32_t)g->ndeps_used;
    *cnt = (uint32_t)u;
    g->ndeps_used += u;
    return 0;
}

/* Compute the dependence set of a new node with operands a[0..n-1] into (*off, *cnt): shared
 * with the largest operand's set when that contains all others, else a new union in the pool. */
static inline __attribute__((always_inline)) int compute_deps(mblx_graph *g, size_t n, const uint32_t *a, uint32_t *off,
                                                             uint32_t *cnt)
{
    *off = 0;
    *cnt = 0;
    if (n == 0) return 0;
    if (n == 1) { /* the operand's set */
        *off = g->nd[a[0]].doff;
        *cnt = g->nd[a[0]].dcnt;
        return 0;
    }
    if (n == 2) { /* most nodes: the same as below, without its loops over the operands */
        const mblx__node *x = &g->nd[a[0]], *y = &g->nd[a[1]];
        if (y->dcnt > x->dcnt) {
            const mblx__node *t = x;
            x = y, y = t;
        }
        uint32_t u = x->dcnt;
        if (u < MBLX__SUBSET_CACHE_MIN) {
            if (y->dcnt == 0 || y->doff == x->doff) {
                *off = x->doff;
                *cnt = u;
                return 0;
            }
            /* the union made where it goes, at the pool's end (kept unless within x's set) */
            size_t room = (size_t)u + y->dcnt;
            if (g->ndeps_used + room > (size_t)UINT32_MAX ||
                grow((void **)&g->deps, &g->deps_cap, g->ndeps_used + room, sizeof *g->deps, INIT_POOL))
                return -1;
            const uint32_t *src = g->deps + x->doff; /* (after the pool moved) */
            uint32_t *out = g->deps + g->ndeps_used;
            size_t w = y->dcnt == 1 ? insert_u32(src, u, g->deps[y->doff], out)
                                    : merge_u32(src, u, g->deps + y->doff, y->dcnt, out);
            if (w == u) { /* within x's set */
                *off = x->doff;
                *cnt = u;
                return 0;
            }
            *off = (uint32_t)g->ndeps_used;
            *cnt = (uint32_t)w;
            g->ndeps_used += w;
            return 0;
        }
    }
    size_t best = 0, total = g->nd[a[0]].dcnt;
    for (size_t i = 1; i < n; i++) {
        total += g->nd[a[i]].dcnt;
        if (g->nd[a[i]].dcnt > g->nd[a[best]].dcnt) best = i;
    }
    uint32_t b = a[best], bcnt = g->nd[b].dcnt, boff = g->nd[b].doff;
    /* Small sets (all of them below the containment cache's size) are merged at once: the union
     * holds b's set, so one of b's size is b's set, shared as when each set was tested within
     * b's first (a test that cost about a merge and, failing, was followed by the merges). */
    int merge_now = n <= DEPS_MERGE_MAX && bcnt < MBLX__SUBSET_CACHE_MIN;
    int subset = !merge_now;
    /* many operands whose sets together outweigh b's: by b's marks (the relative planar chain's
     * sums of N terms of N symbols each: a binary search per symbol was 60 % of its loading) */
    int marks = subset && n > DEPS_MERGE_MAX && bcnt >= DEPS_MARK_MIN && total - bcnt >= bcnt / 4;
    if (marks) {
        int r = deps_within_marked(g, n, a, b);
        if (r < 0) return -1;
        subset = r;
    }
    for (size_t i = 0; i < n && subset && !marks; i++) {
        uint32_t c = a[i];
        if (c == b || g->nd[c].dcnt == 0 || g->nd[c].doff == boff) continue;
        subset = deps_subset(g, c, b);
    }
    if (subset) {
        *off = boff;
        *cnt = bcnt;
        return 0;
    }
    if (total > SIZE_MAX / 2 ||
        grow((void **)&g->tmp, &g->tmp_cap, 2 * total, sizeof *g->tmp, INIT_POOL))
        return -1;
    uint32_t *cur = g->tmp, *nxt = g->tmp + total;
    size_t u = 0;
    if (n <= DEPS_MERGE_MAX) {
        /* from the largest set, read where it is, merged with each other set not the same as it
         * (the same sorted union as merging all of them from nothing, without copying it first) */
        const uint32_t *src = g->deps + g->nd[b].doff;
        u = g->nd[b].dcnt;
        for (size_t i = 0; i < n; i++) {
            const mblx__node *c = &g->nd[a[i]];
            if (c->dcnt == 0 || a[i] == b || c->doff == g->nd[b].doff) continue;
            /* one symbol (most often): placed; more: merged; either found within, nothing to do */
            size_t w = c->dcnt == 1 ? insert_u32(src, u, g->deps[c->doff], cur)
                                    : merge_u32(src, u, g->deps + c->doff, c->dcnt, cur);
            if (w == u) continue;
            u = w;
            src = cur;
            uint32_t *sw = cur;
            cur = nxt;
            nxt = sw;
        }
        cur = nxt; /* the last merge's output (when not within b's set, one merge at least) */
        if (u == bcnt) { /* within b's set */
            *off = boff;
            *cnt = bcnt;
            return 0;
        }
    } else if (union_marked(g, n, a, cur, nxt, &u)) {
        return -1;
    }
    return deps_append(g, cur, u, off, cnt);
}

/* ---- interning ---------------------------------------------------------------------------- */

/* make_node's checks before the node g->n is made: a load's progress report every 4096 nodes
 * (core/progress.h), room in the node arrays, the table at most half full with the new entry; then
 * g->make_room set to the next node at which one of them can be due (the next multiple of 4096,
 * the capacity, the table's half: a node made adds at most one entry), so that make_node skips
 * them until then (three tests of each of 0.95 M nodes made at N = 10^4). 0, or -1 with the
 * graph's error. */
static __attribute__((noinline)) int make_room_renew(mblx_graph *g)
{
    if (!(g->n & 0xfff) && core_progress_tick((double)g->n)) return mblx__fail(g, MBL_ECANCELLED, "cancelled"), -1;
    if (g->n >= g->cap && mblx__grow_nodes(g, (size_t)g->n + 1)) return mblx__oom(g), -1;
    if ((g->tcount + 1) * 2 > g->tcap && table_make(g, g->tcap ? g->tcap * 2 : INIT_TABLE))
        return mblx__oom(g), -1;
    size_t room = ((size_t)g->n | 0xfff) + 1, half = (size_t)g->n + g->tcap / 2 - g->tcount;
    if (room > g->cap) room = g->cap;
    if (room > half) room = half;
    g->make_room = (uint32_t)room;
    return 0;
}

/* The node (op, v, a[0..n-1]) made: its operands, dependence set and record (the caller puts
 * it in the table); XNONE with the graph's error. */
static inline __attribute__((always_inline)) mblx_id make_node(mblx_graph *g, unsigned op, double v, size_t n,
                                                              const uint32_t *a)
{
    if (g->n >= g->make_room && make_room_renew(g)) return XNONE;
    if (n > MBLX__NA_MAX)
        return mblx__fail(g, MBL_ENOMEM, "a node of %zu operands: more than the %u of one sum, product or function", n,
                          MBLX__NA_MAX);
    if (g->nargs_used + n > (size_t)UINT32_MAX) return mblx__oom(g);
    if (grow((void **)&g->args, &g->args_cap, g->nargs_used + n, sizeof *g->args, INIT_POOL))
        return mblx__oom(g);
    uint32_t doff, dcnt;
    if (compute_deps(g, n, a, &doff, &dcnt)) return mblx__oom(g);
    mblx_id e = g->n;
    copy_u32(g->args + g->nargs_used, a, n);
    g->nd[e].op = (uint8_t)op;
    g->nd[e].na = (uint32_t)n;
    g->nd[e].aoff = (uint32_t)g->nargs_used;
    g->nd[e].val = v;
    g->nd[e].doff = doff;
    g->nd[e].dcnt = dcnt;
    if (g->stamp) g->stamp[e] = 0;
    g->nargs_used += n;
    g->n++;
    return e;
}

/* The node (op, v, a[0..n-1]) of hash h in the table (tcap > 0), or XNONE. */
static inline __attribute__((always_inline)) mblx_id table_find(const mblx_graph *g, uint32_t h, unsigned op, double v,
                                                                size_t n, const uint32_t *a)
{
    size_t k = h & (g->tcap - 1);
    uint32_t mask = g->tid_mask;
    for (uint32_t en; (en = g->table[k]) != TABLE_EMPTY; k = (k + 1) & (g->tcap - 1))
        if (!((en ^ h) & ~mask) && same_key(g, table_node(en, mask), op, v, n, a)) return table_node(en, mask);
    return XNONE;
}

/* mblx__intern with a large table (or its deferral's marks): the parents' bits, the batch */
static __attribute__((noinline)) mblx_id intern_large(mblx_graph *g, unsigned op, double v, size_t n, const uint32_t *a,
                                                      uint32_t h)
{
    mblx__defer *D = g->tcap >= DEFER_MIN_TCAP ? defer_get(g) : NULL; /* (its marks cover g->cap) */
    int fresh = 0; /* an operand of no node of hash h: no such node exists */
    for (size_t i = 0; D && i < n && !fresh; i++) fresh = !(D->used[a[i]] & sig_bit(h));
    if (g->tcap && !fresh) {
        for (size_t k = h & (2 * DEFER_BATCH - 1); D && D->npend && ptab_taken(D, k); k = (k + 1) & (2 * DEFER_BATCH - 1)) {
            uint64_t en = D->pend[D->ptab[k] & PEND_MASK];
            if ((uint32_t)(en >> 32) == h && same_key(g, (uint32_t)en - 1, op, v, n, a)) return (uint32_t)en - 1;
        }
        mblx_id f = table_find(g, h, op, v, n, a);
        if (f != XNONE) return f;
    }
    mblx_id e = make_node(g, op, v, n, a);
    if (e == XNONE) return e;
    uint64_t en = ((uint64_t)h << 32) | ((uint64_t)e + 1);
    D = g->defer; /* NULL when the marks could not grow with the nodes (make_node) */
    if (D) {
        for (size_t i = 0; i < n; i++) D->used[a[i]] |= sig_bit(h);
        pend_add(D, en);
        if (D->npend == DEFER_BATCH) defer_flush(g);
    } else {
        table_put(g->table, g->tcap, h, table_entry(h, e + 1, g->tid_mask));
    }
    g->tcount++;
    return e;
}

/* mblx__intern with a small table (none, or below DEFER_MIN_TCAP without the deferral's marks) */
static __attribute__((noinline)) mblx_id intern_small(mblx_graph *g, unsigned op, double v, size_t n, const uint32_t *a,
                                                      uint32_t h)
{
    if (g->tcap) {
        mblx_id f = table_find(g, h, op, v, n, a);
        if (f != XNONE) return f;
    }
    mblx_id e = make_node(g, op, v, n, a);
    if (e == XNONE) return e;
    table_put(g->table, g->tcap, h, table_entry(h, e + 1, g->tid_mask));
    g->tcount++;
    return e;
}

/* The node (op, v, a[0..n-1]) (operands already canonical), found or created: the key's hash,
 * then either table's path, each a tail call (with a path inline, the registers it needs were
 * saved and restored on every call: 19 instructions of 1.29 M calls at N = 10^4) */
mblx_id mblx__intern(mblx_graph *g, unsigned op, double v, size_t n, const uint32_t *a)
{
    if (v == 0.0) v = 0.0; /* -0 -> +0 */
    uint32_t h = hash_key(op, v, n, a);
    if (!g->tcap && g->tcap_dropped && table_rebuild(g)) return mblx__oom(g);
    if (g->tcap >= DEFER_MIN_TCAP || g->defer) return intern_large(g, op, v, n, a, h);
    return intern_small(g, op, v, n, a, h);
}

/* ---- graph lifetime ----------------------------------------------------------------------- */

mblx_graph *mblx_graph_new(void)
{
    mblx_graph *g = mbl_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->epoch = 1;
    /* the pools are never NULL (pointer arithmetic on them must be defined) */
    if (grow((void **)&g->args, &g->args_cap, 1, sizeof *g->args, INIT_POOL) ||
        grow((void **)&g->deps, &g->deps_cap, 1, sizeof *g->deps, INIT_POOL)) {
        mblx_graph_free(g);
        return NULL;
    }
    g->zero = mblx__intern(g, MBLX_OP_CONST, 0.0, 0, NULL);
    g->one = mblx__intern(g, MBLX_OP_CONST, 1.0, 0, NULL);
    g->minus_one = mblx__intern(g, MBLX_OP_CONST, -1.0, 0, NULL);
    if (g->err) {
        mblx_graph_free(g);
        return NULL;
    }
    return g;
}

int mblx_graph_reserve(mblx_graph *g, size_t nodes)
{
    if (!g) return MBL_EARG;
    if (nodes > (size_t)XPENDING / 4) nodes = (size_t)XPENDING / 4;
    if (!g->tcap && g->tcap_dropped && table_rebuild(g)) return MBL_ENOMEM;
    /* operands and dependence sets: about two per node in expression graphs of models; the
     * table at most half full; the scratch of small dependence-set unions */
    size_t tc = g->tcap ? g->tcap : INIT_TABLE;
    while (tc < 2 * nodes) tc *= 2;
    if (mblx__grow_nodes(g, nodes) ||
        grow((void **)&g->args, &g->args_cap, 2 * nodes, sizeof *g->args, INIT_POOL) ||
        grow((void **)&g->deps, &g->deps_cap, 2 * nodes, sizeof *g->deps, INIT_POOL) ||
        grow((void **)&g->tmp, &g->tmp_cap, INIT_POOL, sizeof *g->tmp, INIT_POOL) ||
        (tc > g->tcap && table_make(g, tc)))
        return MBL_ENOMEM;
    return 0;
}

void mblx_graph_free(mblx_graph *g)
{
    if (!g) return;
    mbl_free(g->nd);
    mbl_free(g->stamp);
    mbl_free(g->memo);
    mbl_free(g->args);
    mbl_free(g->deps);
    mbl_free(g->tmp);
    mbl_free(g->depmark);
    mbl_free(g->table);
    mbl_free(g->sym_node);
    mbl_free(g->sym_name);
    mbl_free(g->names);
    mbl_free(g->symtab);
    mbl_free(g->subset);
    mblx__name_memo_free(g);
    mblx__wide_free(g->wide);
    mblx__tdmemo_free(g); /* the derivatives kept from call to call */
    if (g->defer) g->defer->npend = 0; /* the table goes too: nothing to put in it */
    defer_free(g);
    mblx__data_free(g->data, g->ndata);
    mblx__user_free(g->user, g->nuser);
    mbl_free(g);
}
