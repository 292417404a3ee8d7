/* Internals of the expression engine shared by the sources in src/expr. Not a public header. */
#ifndef MBLIN_EXPR_INTERNAL_H
#define MBLIN_EXPR_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mblin/expr.h"

/* One node (24 bytes: the opcode shares a word with the operand count, so that a node has no
 * padding; comparing a candidate while interning reads val, na and op, its first 16 bytes). */
#define MBLX__NA_BITS 26
#define MBLX__NA_MAX ((1u << MBLX__NA_BITS) - 1u) /* operands of one node at most */
typedef struct mblx__node {
    double val;      /* CONST value, ADD constant term, MUL coefficient, SYMBOL index */
    uint32_t aoff;   /* operands: args[aoff .. aoff+na) */
    uint32_t na : MBLX__NA_BITS;
    uint32_t op : 32 - MBLX__NA_BITS;
    uint32_t doff;   /* dependence set: deps[doff .. doff+dcnt) */
    uint32_t dcnt;
} mblx__node;
_Static_assert(MBLX_OP_COUNT_ <= (1 << (32 - MBLX__NA_BITS)), "the opcodes fit in a node's op bits");
_Static_assert(sizeof(mblx__node) == 24, "a node is 24 bytes");

/* A data set of the functions of data (data.c): breakpoints and piecewise cubic coefficients
 * (1-D: 4 per interval; 2-D: 16 per cell), and for 1-D sets the linear pieces of table(). */
typedef struct mblx__dataset {
    char *name;
    uint32_t dim, nx, ny; /* ny = 0 for 1-D */
    int extrap;           /* 1: linear extrapolation, 0: refused */
    double *x, *y, *coef, *lin;
} mblx__dataset;

/* A user routine registered in a graph (user.c; mblx_user_def, its name copied). */
typedef struct mblx__user {
    char *name;
    int nin, nout;
    mbl_user_fn fn;
    void *user_data;
    int partials;
} mblx__user;

/* Nodes are indexed by id; args/deps are pools addressed by (offset, count). stamp/memo are
 * per-node scratch for traversals (memo[v] valid when stamp[v] == epoch), grown with the nodes;
 * both NULL after mblx_graph_drop_table until the next traversal (mblx__new_epoch). */
struct mblx_graph {
    uint32_t n, cap;
    mblx__node *nd;
    uint32_t *stamp, *memo;
    uint32_t epoch;

    uint32_t *args;
    size_t nargs_used, args_cap;
    uint32_t *deps;
    size_t ndeps_used, deps_cap;
    uint32_t *tmp; /* scratch for dependence-set unions */
    size_t tmp_cap;
    uint32_t *depmark; /* per symbol: == depstamp when already in the union being made (graph.c) */
    uint32_t depmark_cap, depstamp;
    uint64_t dep_union_steps; /* elements read and marks scanned by those unions (a cost count) */

    uint32_t *table; /* open-addressing hash table: the hash's high bits | node id + 1 (graph.c) */
    size_t tcap, tcount;
    size_t tcap_dropped; /* mblx_graph_drop_table: the capacity the table is rebuilt with */
    uint32_t tid_mask;   /* the low bits of a table entry that hold the node id + 1 */
    uint32_t make_room; /* graph.c: nodes below it are made without the checks of make_room_renew */

    /* symbols */
    uint32_t nsym, symcap;
    uint32_t *sym_node;
    size_t *sym_name; /* offset into names */
    char *names;
    size_t names_used, names_cap;
    /* hash table of symbol indices by name, each with its name's hash: a probe compares the hash
     * before it reads the name (two dependent loads, misses in a large table) */
    struct mblx_symslot {
        uint32_t sym, hash;
    } *symtab;
    size_t symtab_cap;

    mblx_id zero, one, minus_one;
    /* direct-mapped cache of constant nodes by value bits (entries checked before use) */
#define MBLX__CONST_CACHE 1024
    mblx_id const_cache[MBLX__CONST_CACHE];
    uint64_t const_bits[MBLX__CONST_CACHE]; /* the value bits of each entry: checked without
                                               reading the node (a cache miss in a large graph) */

    /* the operands of wide nodes by the symbols they depend on (diff.c; nodes never change, so
     * it stays valid for the graph's life); NULL until a traversal needs it */
    struct mblx__wide *wide;
    /* the memo of mblx_total_der across calls (diff.c): each node's total derivative under the
     * seeds its symbols had; NULL until the first call, dropped with the table */
    struct mblx__tdmemo *tdmemo;
    /* graph.c: a large table's insertions in batches, and which nodes are operands (NULL while
     * the table is small) */
    struct mblx__defer *defer;
    /* cache of "deps(c) within deps(b)" for sets of MBLX__SUBSET_CACHE_MIN symbols or more
     * (graph.c, compute_deps): key (c << 32 | b) + 1 (0: empty), value the answer; made when
     * first needed (NULL before, or when out of memory: then nothing is cached) */
#define MBLX__SUBSET_CACHE 4096
#define MBLX__SUBSET_CACHE_MIN 64
    struct mblx__subset_cache {
        uint64_t key[MBLX__SUBSET_CACHE];
        uint8_t val[MBLX__SUBSET_CACHE];
    } *subset;
    /* parse.c: the names and the calls of one symbol a parse with the memo resolved
     * (mblx__parse_memo), each tagged with its parse's generation; NULL until such a parse */
    struct mblx__name_memo *name_memo;
    uint32_t name_memo_gen;
    mblx__dataset *data; /* the data sets (data.c), ndata of them */
    uint32_t ndata;
    mblx__user *user; /* the user routines (user.c), nuser of them */
    uint32_t nuser;
    uint32_t nlet; /* 1 once a let node was made (0: the compiler need not look for them) */
    int err;
    char errmsg[MBL_MSG_MAX];
};

#define XNONE MBLX_NONE
#define XPENDING ((uint32_t)0xfffffffeu)

/* Record the sticky error (first wins); returns MBLX_NONE. */
mblx_id mblx__fail(mblx_graph *g, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
mblx_id mblx__oom(mblx_graph *g);

/* Advise the system to back the large array p (bytes long) with huge pages (a no-op for small
 * arrays and where unsupported). */
void mblx__hugepages(void *p, size_t bytes);
/* n zeroed elements of size sz from the heap (calloc), advised for huge pages when large; NULL
 * when out of memory. Freed by mblx__zeroed_free (with the same n and sz) or mbl_free. */
void *mblx__zeroed_alloc(size_t n, size_t sz);
void mblx__zeroed_free(void *p, size_t n, size_t sz);
/* Reallocate p (old_bytes long) to n elements of size sz (huge-page advice for large arrays);
 * NULL when out of memory (p is then unchanged). */
void *mblx__grow_block(void *p, size_t old_bytes, size_t n, size_t sz);

/* Grow *p (elements of size sz, capacity *cap; doubled from init) to hold at least need elements;
 * 0, or -1 when out of memory (*p then unchanged). */
int mblx__grow(void **p, size_t *cap, size_t need, size_t sz, size_t init);
/* The operand and dependence pools' first capacity. */
#define MBLX__INIT_POOL 256
/* Room for need nodes in the node arrays (and the traversals' scratch); 0, or -1 when out of
 * memory. */
int mblx__grow_nodes(mblx_graph *g, size_t need);

/* Start a new traversal epoch (stamps older than it are stale), making the stamps and memos if
 * mblx_graph_drop_table freed them. 0, or -1 when out of memory. */
int mblx__new_epoch(mblx_graph *g);

/* The node (op, v, a[0..n-1]) (operands already canonical), found or created (graph.c, for the
 * builders of builders.c); MBLX_NONE with the sticky error when out of memory. */
mblx_id mblx__intern(mblx_graph *g, unsigned op, double v, size_t n, const uint32_t *a);

/* The node mblx_mul(g, mblx_scale(g, c, p), x) returns (x_first: mblx_mul(g, x, mblx_scale(g, c,
 * p))), made without the scaled node mblx_scale(g, c, p) where the product comes out the same
 * (builders.c): the derivatives' partials times the operands' derivatives (diff.c). */
mblx_id mblx__scaled_product(mblx_graph *g, double c, mblx_id p, mblx_id x, int x_first);
/* -(f[0] * ... * f[n-1]): mblx_neg of mblx_product, without making the product (builders.c). */
mblx_id mblx__neg_product(mblx_graph *g, size_t n, const mblx_id *f);
/* c * (va[0..vn) but va[skip]) * x, for the operands va of a product and the constant node c: the
 * node mblx_product(g, [c, those operands, x]) returns, made without sorting them again where
 * nothing merges (builders.c). */
mblx_id mblx__product_others(mblx_graph *g, mblx_id c, const uint32_t *va, size_t vn, size_t skip, mblx_id x);

/* A 64-bit finalizer (MurmurHash3's fmix64): the hash of node keys and of constants' bits. */
static inline uint64_t mblx__mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static inline int mblx__valid(const mblx_graph *g, mblx_id e) { return e < g->n; }

/* mblx_const for a graph that is not NULL, inline for the builders and the traversals (they made
 * about 100,000 calls of it on the N = 1000 four-bar's formulation, most found in the cache). */
static inline mblx_id mblx__const(mblx_graph *g, double v)
{
    if (!isfinite(v)) return mblx__fail(g, MBL_EARG, "non-finite constant %g", v);
    if (v == 0.0) return g->zero;
    if (v == 1.0) return g->one;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t slot = (size_t)(mblx__mix64(bits) & (MBLX__CONST_CACHE - 1));
    mblx_id c = g->const_cache[slot];
    if (c < g->n && g->const_bits[slot] == bits) /* v is not 0: a zeroed entry never matches */
        return c; /* the node intern would find */
    c = mblx__intern(g, MBLX_OP_CONST, v, 0, NULL);
    if (c != XNONE) g->const_cache[slot] = c, g->const_bits[slot] = bits;
    return c;
}
static inline const uint32_t *mblx__args(const mblx_graph *g, mblx_id e)
{
    return g->args + g->nd[e].aoff;
}
/* The wide-node index (diff_wide.c), used by the one-symbol traversals of diff.c: */
/* free it */
void mblx__wide_free(struct mblx__wide *w);
/* free g->tdmemo (diff.c) */
void mblx__tdmemo_free(mblx_graph *g);
/* 1 if node v is wide (a sum or product of many operands: the index serves it) */
int mblx__wide_is(const mblx_graph *g, mblx_id v);
/* make g->wide exist; 0, or -1 when out of memory */
int mblx__wide_ensure(mblx_graph *g);
/* the operands of wide node v that depend on symbol index s: *run[0 .. count) hold their positions
 * in the low 32 bits, in operand order (valid until the next call); the count, or -1 (oom) */
long mblx__wide_run(mblx_graph *g, mblx_id v, uint32_t s, const uint64_t **run);
/* count n operand visits of a traversal that scanned a node */
void mblx__wide_step(mblx_graph *g, size_t n);
/* Operand visits made by the one-symbol forward traversals so far (diff_wide.c): the cost count of
 * derivatives and Jacobians, tested to stay proportional to the entries made. */
uint64_t mblx__diff_steps(const mblx_graph *g);

/* 1 if node e depends on symbol index s (binary search). */
int mblx__dep_has(const mblx_graph *g, mblx_id e, uint32_t s);

/* A read-only view of a node store, so that one printer serves the graph and the tapes. */
typedef struct mblx__view {
    const mblx__node *nd;
    const uint32_t *args;
    const char *(*symname)(const void *ctx, uint32_t node);
    const void *ctx;
    const mblx__dataset *data; /* the data sets the MBLX_OP_DATA nodes name */
    uint32_t ndata;
    const mblx__user *user; /* the routines the MBLX_OP_USER nodes name */
    uint32_t nuser;
    int rational;           /* numbers that are exactly p/q print as p/q (mblx_print_alloc_rational) */
} mblx__view;

/* ---- functions of data (data.c) ---- */
void mblx__data_decode(double code, long *k, int *lin, int *dx, int *dy);
void mblx__data_free(mblx__dataset *d, uint32_t n);
/* A deep copy of n sets; NULL when out of memory. */
mblx__dataset *mblx__data_copy_all(const mblx__dataset *s, uint32_t n);
/* The value of a data node (its code) at (x, y); NaN outside a refused range. */
double mblx__data_value(const mblx__dataset *sets, uint32_t nsets, double code, double x, double y);
/* The value of a data node's derivative in its operand i (0: x, 1: y; 0 for y of a 1-D set),
 * the forward-mode rule of mblx__data_partial; NaN where mblx__data_value is. */
double mblx__data_partial_value(const mblx__dataset *sets, uint32_t nsets, double code, int i, double x, double y);
/* Why the value was NaN, one line into buf. */
void mblx__data_why(const mblx__dataset *sets, uint32_t nsets, double code, double x, double y, char *buf,
                    size_t size);
/* "spline", "table" or "spline2": the function that names set d in expressions. */
const char *mblx__data_fn(const mblx__dataset *d, int lin);
/* mblx_apply of MBLX_OP_DATA; the derivative of data node v in operand i (a its operands). */
mblx_id mblx__data_apply(mblx_graph *g, double code, size_t n, const mblx_id *args);
mblx_id mblx__data_partial(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i);

/* ---- user routines (user.c) ---- */
/* A node's code: routine r, output k, the inputs j1, j2 of its partial (-1: none). */
void mblx__user_decode(double code, long *r, int *k, int *j1, int *j2);
void mblx__user_free(mblx__user *u, uint32_t n);
/* A deep copy of n routines; NULL when out of memory. */
mblx__user *mblx__user_copy_all(const mblx__user *s, uint32_t n);
/* mblx_apply of MBLX_OP_USER; the derivative of user node v in operand i (a its operands). */
mblx_id mblx__user_apply(mblx_graph *g, double code, size_t n, const mblx_id *args);
mblx_id mblx__user_partial(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i);
/* The doubles of scratch the evaluations below need for routine u. */
size_t mblx__user_scratch(const mblx__user *u);
/* Routine u at in: its outputs into out and, when partials is not NULL, its partials (its own, or
 * central differences); scratch: mblx__user_scratch doubles. have_out: out already holds the
 * values at in (only the differences are made). 0, or nonzero with "routine 'name': ..." in msg. */
int mblx__user_fill(const mblx__user *u, const double *in, double *out, double *partials, int have_out,
                    double *scratch, char *msg, size_t size);
/* d^2 out_k / d in_j1 d in_j2 at in by central differences of the order-1 partials (the routine's,
 * or of the values: second differences) into *val; as mblx__user_fill. */
int mblx__user_second(const mblx__user *u, const double *in, int k, int j1, int j2, double *scratch, double *val,
                      char *msg, size_t size);

/* Print node root of a view (see mblx_print); SIZE_MAX when out of memory. */
size_t mblx__print_view(const mblx__view *v, uint32_t root, char *buf, size_t size);

/* Shortest "%.Ng" text of a finite double that reads back exactly, with '.' as the decimal
 * point whatever the locale. buf must hold MBLX__NUM_BUF bytes. Returns the length. */
/* A cache line fetched ahead of its use (w 1: to be written); a hint, no effect on values. */
#if defined(__GNUC__)
#define MBLX__PREFETCH(p, w) __builtin_prefetch((p), (w))
#else
#define MBLX__PREFETCH(p, w) ((void)(p))
#endif

#define MBLX__NUM_BUF 40
size_t mblx__format_number(double v, char *buf);

/* Value of the smooth step (shared by constant folding and the tape). */
double mblx__step_value(double x, double x0, double h0, double x1, double h1);

/* MBLX__STABLE_SORT(name, T, LESS) defines `static int name(T *a, size_t n, T *scratch)`: a
 * stable sort of a[0..n) by LESS(const T *x, const T *y) (a strict weak order). Input that is
 * already sorted costs one comparison per element, short arrays are insertion-sorted, longer
 * ones merge-sorted bottom-up in scratch (n elements; NULL: allocated here). Returns 0, or -1
 * when scratch could not be allocated (a is then unchanged). */
#define MBLX__SORT_RUN 16
#define MBLX__STABLE_SORT(name, T, LESS)                                                      \
    static void name##_ins(T *a, size_t n)                                                    \
    {                                                                                         \
        for (size_t i = 1; i < n; i++) {                                                      \
            if (!LESS(&a[i], &a[i - 1])) continue;                                            \
            T x_ = a[i];                                                                      \
            size_t j = i;                                                                     \
            do {                                                                              \
                a[j] = a[j - 1];                                                              \
                j--;                                                                          \
            } while (j > 0 && LESS(&x_, &a[j - 1]));                                          \
            a[j] = x_;                                                                        \
        }                                                                                     \
    }                                                                                         \
    static int name(T *a, size_t n, T *scratch)                                               \
    {                                                                                         \
        size_t i = 1;                                                                         \
        while (i < n && !LESS(&a[i], &a[i - 1])) i++;                                         \
        if (i >= n) return 0;                                                                 \
        if (n <= 2 * MBLX__SORT_RUN) {                                                        \
            name##_ins(a, n);                                                                 \
            return 0;                                                                         \
        }                                                                                     \
        T *tmp_ = scratch ? scratch : (T *)mbl_alloc_array(n, sizeof(T));                     \
        if (!tmp_) return -1;                                                                 \
        for (size_t s = 0; s < n; s += MBLX__SORT_RUN)                                        \
            name##_ins(a + s, n - s < MBLX__SORT_RUN ? n - s : MBLX__SORT_RUN);               \
        T *src = a, *dst = tmp_;                                                              \
        for (size_t w = MBLX__SORT_RUN; w < n; w *= 2) {                                      \
            for (size_t lo = 0; lo < n; lo += 2 * w) {                                        \
                size_t mid = n - lo < w ? n : lo + w;                                         \
                size_t hi = n - mid < w ? n : mid + w;                                        \
                size_t p = lo, q = mid, k = lo;                                               \
                while (p < mid && q < hi) dst[k++] = LESS(&src[q], &src[p]) ? src[q++] : src[p++]; \
                while (p < mid) dst[k++] = src[p++];                                          \
                while (q < hi) dst[k++] = src[q++];                                           \
            }                                                                                 \
            T *sw_ = src;                                                                     \
            src = dst;                                                                        \
            dst = sw_;                                                                        \
        }                                                                                     \
        if (src != a) memcpy(a, src, n * sizeof(T));                                          \
        if (tmp_ != scratch) mbl_free(tmp_);                                                  \
        return 0;                                                                             \
    }

#endif
