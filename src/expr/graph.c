/* Expression graph: node storage, hash-consing, dependence sets, symbols and the simplifying
 * builders. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Initial capacities (grown geometrically). */
enum { INIT_NODES = 64, INIT_POOL = 256, INIT_TABLE = 128, INIT_SYMS = 16, INIT_NAMES = 256 };
/* Small operand lists are collected in fixed local arrays; longer ones on the heap. */
enum { LOCAL_ARGS = 16, LOCAL_TERMS = 16, LOCAL_KEYS = 64 };

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

static int grow_nodes(mblx_graph *g, size_t need)
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
    GROW_ARR(stamp);
    GROW_ARR(memo);
#undef GROW_ARR
    for (size_t i = g->cap; i < nc; i++) g->stamp[i] = 0;
    g->cap = (uint32_t)nc;
    return 0;
}

void mblx__new_epoch(mblx_graph *g)
{
    g->epoch++;
    if (g->epoch == 0 || g->epoch == XPENDING) {
        memset(g->stamp, 0, (size_t)g->cap * sizeof *g->stamp);
        g->epoch = 1;
    }
}

/* ---- hashing ------------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint32_t hash_key(unsigned op, double v, size_t n, const uint32_t *a)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t h = mix64(0x9e3779b97f4a7c15ull ^ op ^ ((uint64_t)n << 8));
    h = mix64(h ^ bits);
    for (size_t i = 0; i < n; i++) h = (h ^ a[i]) * 0x100000001b3ull + (h >> 29);
    return (uint32_t)(mix64(h) & 0xffffffffu);
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

/* Table entries are (hash << 32) | (node id + 1), so that a zeroed table is empty. */
#define TABLE_EMPTY 0

static int table_rehash(mblx_graph *g, size_t ncap)
{
    uint64_t *t = mbl_alloc_array(ncap, sizeof *t);
    if (!t) return -1;
    mblx__hugepages(t, ncap * sizeof *t);
    memset(t, 0, ncap * sizeof *t);
    for (size_t i = 0; i < g->tcap; i++) {
        uint64_t en = g->table[i];
        if (en == TABLE_EMPTY) continue;
        size_t k = (size_t)(en >> 32) & (ncap - 1);
        while (t[k] != TABLE_EMPTY) k = (k + 1) & (ncap - 1);
        t[k] = en;
    }
    mbl_free(g->table);
    g->table = t;
    g->tcap = ncap;
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

/* Sorted union without duplicates of the sorted sets a[0..na) and b[0..nb) into out. */
static size_t merge_u32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out)
{
    size_t i = 0, j = 0, k = 0;
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

/* Operand counts up to this are united by successive merges, longer lists by sorting. */
enum { DEPS_MERGE_MAX = 8 };

/* Compute the dependence set of a new node with operands a[0..n-1] into (*off, *cnt): shared
 * with the largest operand's set when that contains all others, else a new union in the pool. */
static int compute_deps(mblx_graph *g, size_t n, const uint32_t *a, uint32_t *off, uint32_t *cnt)
{
    *off = 0;
    *cnt = 0;
    if (n == 0) return 0;
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (g->nd[a[i]].dcnt > g->nd[a[best]].dcnt) best = i;
    uint32_t b = a[best];
    int subset = 1;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = a[i];
        total += g->nd[c].dcnt;
        if (!subset || c == b || g->nd[c].dcnt == 0 || g->nd[c].doff == g->nd[b].doff) continue;
        const uint32_t *d = g->deps + g->nd[c].doff;
        for (uint32_t k = 0; k < g->nd[c].dcnt; k++)
            if (!mblx__dep_has(g, b, d[k])) {
                subset = 0;
                break;
            }
    }
    if (subset) {
        *off = g->nd[b].doff;
        *cnt = g->nd[b].dcnt;
        return 0;
    }
    if (total > SIZE_MAX / 2 ||
        grow((void **)&g->tmp, &g->tmp_cap, 2 * total, sizeof *g->tmp, INIT_POOL))
        return -1;
    uint32_t *cur = g->tmp, *nxt = g->tmp + total;
    size_t u = 0;
    if (n <= DEPS_MERGE_MAX) {
        for (size_t i = 0; i < n; i++) {
            const mblx__node *c = &g->nd[a[i]];
            if (c->dcnt == 0) continue;
            u = merge_u32(cur, u, g->deps + c->doff, c->dcnt, nxt);
            uint32_t *sw = cur;
            cur = nxt;
            nxt = sw;
        }
    } else {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            memcpy(cur + m, g->deps + g->nd[a[i]].doff, (size_t)g->nd[a[i]].dcnt * sizeof *cur);
            m += g->nd[a[i]].dcnt;
        }
        sort_u32(cur, m, nxt);
        for (size_t i = 0; i < m; i++)
            if (u == 0 || cur[u - 1] != cur[i]) cur[u++] = cur[i];
    }
    if (g->ndeps_used + u > (size_t)UINT32_MAX) return -1;
    if (grow((void **)&g->deps, &g->deps_cap, g->ndeps_used + u, sizeof *g->deps, INIT_POOL))
        return -1;
    memcpy(g->deps + g->ndeps_used, cur, u * sizeof *g->deps);
    *off = (uint32_t)g->ndeps_used;
    *cnt = (uint32_t)u;
    g->ndeps_used += u;
    return 0;
}

/* ---- interning ---------------------------------------------------------------------------- */

/* The node (op, v, a[0..n-1]) (operands already canonical), found or created. */
static mblx_id intern(mblx_graph *g, unsigned op, double v, size_t n, const uint32_t *a)
{
    if (v == 0.0) v = 0.0; /* -0 -> +0 */
    uint32_t h = hash_key(op, v, n, a);
    if (g->tcap) {
        size_t k = h & (g->tcap - 1);
        for (uint64_t en; (en = g->table[k]) != TABLE_EMPTY; k = (k + 1) & (g->tcap - 1))
            if ((uint32_t)(en >> 32) == h && same_key(g, (uint32_t)en - 1, op, v, n, a))
                return (uint32_t)en - 1;
    }
    if (grow_nodes(g, (size_t)g->n + 1)) return mblx__oom(g);
    if ((g->tcount + 1) * 2 > g->tcap &&
        table_rehash(g, g->tcap ? g->tcap * 2 : INIT_TABLE))
        return mblx__oom(g);
    if (g->nargs_used + n > (size_t)UINT32_MAX) return mblx__oom(g);
    if (grow((void **)&g->args, &g->args_cap, g->nargs_used + n, sizeof *g->args, INIT_POOL))
        return mblx__oom(g);
    uint32_t doff, dcnt;
    if (compute_deps(g, n, a, &doff, &dcnt)) return mblx__oom(g);
    mblx_id e = g->n;
    if (n) memcpy(g->args + g->nargs_used, a, n * sizeof *a);
    g->nd[e].op = (uint8_t)op;
    g->nd[e].na = (uint32_t)n;
    g->nd[e].aoff = (uint32_t)g->nargs_used;
    g->nd[e].val = v;
    g->nd[e].doff = doff;
    g->nd[e].dcnt = dcnt;
    g->stamp[e] = 0;
    g->memo[e] = XNONE;
    g->nargs_used += n;
    g->n++;
    size_t k = h & (g->tcap - 1);
    while (g->table[k] != TABLE_EMPTY) k = (k + 1) & (g->tcap - 1);
    g->table[k] = ((uint64_t)h << 32) | ((uint64_t)e + 1);
    g->tcount++;
    return e;
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
    g->zero = intern(g, MBLX_OP_CONST, 0.0, 0, NULL);
    g->one = intern(g, MBLX_OP_CONST, 1.0, 0, NULL);
    g->minus_one = intern(g, MBLX_OP_CONST, -1.0, 0, NULL);
    if (g->err) {
        mblx_graph_free(g);
        return NULL;
    }
    return g;
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
    mbl_free(g->table);
    mbl_free(g->sym_node);
    mbl_free(g->sym_name);
    mbl_free(g->names);
    mbl_free(g->symtab);
    mbl_free(g);
}

/* ---- inspection --------------------------------------------------------------------------- */

size_t mblx_node_count(const mblx_graph *g) { return g ? g->n : 0; }

mblx_op mblx_node_op(const mblx_graph *g, mblx_id e)
{
    return (g && mblx__valid(g, e)) ? (mblx_op)g->nd[e].op : MBLX_OP_COUNT_;
}

int mblx_node_nargs(const mblx_graph *g, mblx_id e)
{
    return (g && mblx__valid(g, e)) ? (int)g->nd[e].na : 0;
}

mblx_id mblx_node_arg(const mblx_graph *g, mblx_id e, int i)
{
    if (!g || !mblx__valid(g, e) || i < 0 || (uint32_t)i >= g->nd[e].na) return XNONE;
    return mblx__args(g, e)[i];
}

double mblx_node_value(const mblx_graph *g, mblx_id e)
{
    if (!g || !mblx__valid(g, e)) return NAN;
    unsigned op = g->nd[e].op;
    return (op == MBLX_OP_CONST || op == MBLX_OP_ADD || op == MBLX_OP_MUL) ? g->nd[e].val : 0.0;
}

int mblx_is_const(const mblx_graph *g, mblx_id e, double *value)
{
    if (!g || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_CONST) return 0;
    if (value) *value = g->nd[e].val;
    return 1;
}

const uint32_t *mblx_node_deps(const mblx_graph *g, mblx_id e, size_t *count)
{
    if (!g || !mblx__valid(g, e)) {
        if (count) *count = 0;
        return NULL;
    }
    if (count) *count = g->nd[e].dcnt;
    return g->deps + g->nd[e].doff;
}

int mblx_depends(const mblx_graph *g, mblx_id e, mblx_id sym)
{
    if (!g || !mblx__valid(g, e) || !mblx__valid(g, sym) || g->nd[sym].op != MBLX_OP_SYMBOL)
        return 0;
    return mblx__dep_has(g, e, (uint32_t)g->nd[sym].val);
}

/* ---- symbols ------------------------------------------------------------------------------ */

static uint32_t hash_name(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return (uint32_t)(mix64(h) & 0xffffffffu);
}

static const char *sym_name_of(const mblx_graph *g, uint32_t idx)
{
    return g->names + g->sym_name[idx];
}

mblx_id mblx_symbol_find_n(const mblx_graph *g, const char *name, size_t len)
{
    if (!g || !name || !g->symtab_cap) return XNONE;
    size_t k = hash_name(name, len) & (g->symtab_cap - 1);
    for (uint32_t s; (s = g->symtab[k]) != XNONE; k = (k + 1) & (g->symtab_cap - 1)) {
        const char *nm = sym_name_of(g, s);
        if (strncmp(nm, name, len) == 0 && nm[len] == '\0') return g->sym_node[s];
    }
    return XNONE;
}

mblx_id mblx_symbol_find(const mblx_graph *g, const char *name)
{
    return name ? mblx_symbol_find_n(g, name, strlen(name)) : XNONE;
}

static int symtab_rehash(mblx_graph *g, size_t ncap)
{
    uint32_t *t = mbl_alloc_array(ncap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < ncap; i++) t[i] = XNONE;
    for (uint32_t s = 0; s < g->nsym; s++) {
        const char *nm = sym_name_of(g, s);
        size_t k = hash_name(nm, strlen(nm)) & (ncap - 1);
        while (t[k] != XNONE) k = (k + 1) & (ncap - 1);
        t[k] = s;
    }
    mbl_free(g->symtab);
    g->symtab = t;
    g->symtab_cap = ncap;
    return 0;
}

mblx_id mblx_symbol_n(mblx_graph *g, const char *name, size_t len)
{
    if (!g) return XNONE;
    if (!name || len == 0) return mblx__fail(g, MBL_EARG, "empty symbol name");
    if (memchr(name, '\0', len)) return mblx__fail(g, MBL_EARG, "symbol name contains a NUL byte");
    mblx_id e = mblx_symbol_find_n(g, name, len);
    if (e != XNONE) return e;
    if (g->nsym >= XPENDING - 1) return mblx__oom(g);
    size_t cap;
    cap = g->symcap;
    if (grow((void **)&g->sym_node, &cap, (size_t)g->nsym + 1, sizeof *g->sym_node, INIT_SYMS))
        return mblx__oom(g);
    cap = g->symcap;
    if (grow((void **)&g->sym_name, &cap, (size_t)g->nsym + 1, sizeof *g->sym_name, INIT_SYMS))
        return mblx__oom(g);
    g->symcap = (uint32_t)cap;
    if (len > SIZE_MAX - 1 - g->names_used ||
        grow((void **)&g->names, &g->names_cap, g->names_used + len + 1, 1, INIT_NAMES))
        return mblx__oom(g);
    if (((size_t)g->nsym + 1) * 2 > g->symtab_cap &&
        symtab_rehash(g, g->symtab_cap ? g->symtab_cap * 2 : INIT_SYMS))
        return mblx__oom(g);
    if (grow_nodes(g, (size_t)g->n + 1) ||
        grow((void **)&g->deps, &g->deps_cap, g->ndeps_used + 1, sizeof *g->deps, INIT_POOL) ||
        g->ndeps_used + 1 > (size_t)UINT32_MAX)
        return mblx__oom(g);
    uint32_t s = g->nsym;
    memcpy(g->names + g->names_used, name, len);
    g->names[g->names_used + len] = '\0';
    g->sym_name[s] = g->names_used;
    g->names_used += len + 1;
    e = g->n;
    g->sym_node[s] = e;
    g->deps[g->ndeps_used] = s;
    g->nd[e].op = MBLX_OP_SYMBOL;
    g->nd[e].na = 0;
    g->nd[e].aoff = (uint32_t)g->nargs_used;
    g->nd[e].val = (double)s;
    g->nd[e].doff = (uint32_t)g->ndeps_used;
    g->nd[e].dcnt = 1;
    g->stamp[e] = 0;
    g->memo[e] = XNONE;
    g->ndeps_used++;
    g->n++;
    g->nsym++;
    size_t k = hash_name(name, len) & (g->symtab_cap - 1);
    while (g->symtab[k] != XNONE) k = (k + 1) & (g->symtab_cap - 1);
    g->symtab[k] = s;
    return e;
}

mblx_id mblx_symbol(mblx_graph *g, const char *name)
{
    if (!g) return XNONE;
    if (!name) return mblx__fail(g, MBL_EARG, "empty symbol name");
    return mblx_symbol_n(g, name, strlen(name));
}

long mblx_symbol_index(const mblx_graph *g, mblx_id e)
{
    if (!g || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_SYMBOL) return -1;
    return (long)g->nd[e].val;
}

size_t mblx_symbol_count(const mblx_graph *g) { return g ? g->nsym : 0; }

mblx_id mblx_symbol_node(const mblx_graph *g, size_t idx)
{
    return (g && idx < g->nsym) ? g->sym_node[idx] : XNONE;
}

const char *mblx_symbol_name(const mblx_graph *g, mblx_id e)
{
    long s = mblx_symbol_index(g, e);
    return s < 0 ? NULL : sym_name_of(g, (uint32_t)s);
}

/* ---- constants ---------------------------------------------------------------------------- */

mblx_id mblx_const(mblx_graph *g, double v)
{
    if (!g) return XNONE;
    if (!isfinite(v)) return mblx__fail(g, MBL_EARG, "non-finite constant %g", v);
    if (v == 0.0) return g->zero;
    if (v == 1.0) return g->one;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t slot = (size_t)(mix64(bits) & (MBLX__CONST_CACHE - 1));
    mblx_id c = g->const_cache[slot];
    if (c < g->n && g->nd[c].op == MBLX_OP_CONST && memcmp(&g->nd[c].val, &v, sizeof v) == 0)
        return c; /* the node intern would find */
    c = intern(g, MBLX_OP_CONST, v, 0, NULL);
    if (c != XNONE) g->const_cache[slot] = c;
    return c;
}

static int is_const(const mblx_graph *g, mblx_id e, double *v)
{
    if (g->nd[e].op != MBLX_OP_CONST) return 0;
    if (v) *v = g->nd[e].val;
    return 1;
}

static int is_integer(double v) { return isfinite(v) && v == floor(v); }

/* An undefined constant: an expression of constants only that did not fold to a constant
 * because its value is not finite or not defined (0^-1, log(0), sqrt(-1)). Whatever contains
 * one is undefined too, so identities such as 0*x = 0, x - x = 0 or x^0 = 1 must not remove
 * it: the operations below return the first undefined operand instead, and evaluating the
 * result reports the domain error (1/0 - 1/0 and 0/0 are errors, not 0). */
static int is_undefined(const mblx_graph *g, mblx_id e) { return g->nd[e].op != MBLX_OP_CONST && g->nd[e].dcnt == 0; }

static mblx_id first_undefined(const mblx_graph *g, size_t n, const mblx_id *a)
{
    for (size_t i = 0; i < n; i++)
        if (is_undefined(g, a[i])) return a[i];
    return XNONE;
}

/* ---- sums --------------------------------------------------------------------------------- */

typedef struct term_rec {
    double coef;
    size_t koff; /* key: operand list of the term without its coefficient */
    uint32_t klen;
    uint32_t mul; /* the product node the key was taken from (its operands), or XNONE */
    const uint32_t *key;
} term_rec;

/* A growable array that starts in caller-provided (stack) storage `local`. */
typedef struct vec {
    void *p;
    size_t n, cap;
    void *local;
} vec;

static int vec_reserve(vec *v, size_t extra, size_t sz)
{
    if (extra > SIZE_MAX - v->n) return -1;
    size_t need = v->n + extra;
    if (need <= v->cap) return 0;
    size_t nc = v->cap * 2;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return -1;
        nc *= 2;
    }
    void *q = v->p == v->local ? mbl_alloc_array(nc, sz) : mbl_realloc_array(v->p, nc, sz);
    if (!q) return -1;
    if (v->p == v->local) memcpy(q, v->local, v->n * sz);
    v->p = q;
    v->cap = nc;
    return 0;
}

static void vec_free(vec *v)
{
    if (v->p != v->local) mbl_free(v->p);
}

static int cmp_terms(const void *pa, const void *pb)
{
    const term_rec *a = pa, *b = pb;
    uint32_t n = a->klen < b->klen ? a->klen : b->klen;
    for (uint32_t i = 0; i < n; i++)
        if (a->key[i] != b->key[i]) return a->key[i] < b->key[i] ? -1 : 1;
    return (a->klen > b->klen) - (a->klen < b->klen);
}

static int less_terms(const term_rec *a, const term_rec *b)
{
    if (a->key[0] != b->key[0]) return a->key[0] < b->key[0];
    return cmp_terms(a, b) < 0;
}
#define LESS_TERMS(x, y) less_terms((x), (y))
MBLX__STABLE_SORT(sort_terms, term_rec, LESS_TERMS)

typedef struct sum_acc {
    vec recs, keys;
    double k;
    mblx_graph *g;
    int failed;
} sum_acc;

/* Add the term c * t (t not a sum). */
static void sum_add_term(sum_acc *s, mblx_id t, double c)
{
    mblx_graph *g = s->g;
    double v;
    if (is_const(g, t, &v)) {
        double nk = s->k + c * v;
        if (isfinite(nk)) {
            s->k = nk;
            return;
        }
    }
    const uint32_t *key = &t;
    uint32_t klen = 1, mul = XNONE;
    double coef = c;
    if (g->nd[t].op == MBLX_OP_MUL) {
        double cc = c * g->nd[t].val;
        if (isfinite(cc)) {
            coef = cc;
            key = mblx__args(g, t);
            klen = g->nd[t].na;
            mul = t;
        }
    }
    if (vec_reserve(&s->recs, 1, sizeof(term_rec)) || vec_reserve(&s->keys, klen, sizeof(uint32_t))) {
        s->failed = 1;
        return;
    }
    term_rec *r = (term_rec *)s->recs.p + s->recs.n++;
    r->coef = coef;
    r->mul = mul;
    r->koff = s->keys.n;
    r->klen = klen;
    memcpy((uint32_t *)s->keys.p + s->keys.n, key, klen * sizeof(uint32_t));
    s->keys.n += klen;
}

static void sum_add(sum_acc *s, mblx_id t, double c)
{
    mblx_graph *g = s->g;
    if (g->nd[t].op == MBLX_OP_ADD && g->nd[t].na <= MBLX_FLATTEN_MAX && isfinite(s->k + c * g->nd[t].val)) {
        s->k += c * g->nd[t].val;
        const uint32_t *a = mblx__args(g, t);
        for (uint32_t i = 0; i < g->nd[t].na; i++) {
            sum_add_term(s, a[i], c);
            a = mblx__args(g, t);
        }
        return;
    }
    if (g->nd[t].op == MBLX_OP_MUL && g->nd[t].na == 1 && g->nd[mblx__args(g, t)[0]].op == MBLX_OP_ADD &&
        g->nd[mblx__args(g, t)[0]].na <= MBLX_FLATTEN_MAX && isfinite(c * g->nd[t].val)) {
        /* c * (a + b) inside a sum: distribute */
        sum_add(s, mblx__args(g, t)[0], c * g->nd[t].val);
        return;
    }
    sum_add_term(s, t, c);
}

static mblx_id sum_build(sum_acc *s)
{
    mblx_graph *g = s->g;
    mblx_id res = XNONE;
    term_rec *r = s->recs.p;
    size_t n = s->recs.n;
    uint32_t local[LOCAL_ARGS], *out = local;
    if (s->failed) {
        mblx__oom(g);
        goto done;
    }
    for (size_t i = 0; i < n; i++) r[i].key = (const uint32_t *)s->keys.p + r[i].koff;
    if (sort_terms(r, n, NULL)) {
        mblx__oom(g);
        goto done;
    }
    /* merge like terms */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && cmp_terms(&r[m - 1], &r[i]) == 0 && isfinite(r[m - 1].coef + r[i].coef)) {
            r[m - 1].coef += r[i].coef;
            continue;
        }
        r[m++] = r[i];
    }
    if (m > LOCAL_ARGS && !(out = mbl_alloc_array(m, sizeof *out))) {
        mblx__oom(g);
        goto done;
    }
    size_t nt = 0;
    for (size_t i = 0; i < m; i++) {
        if (r[i].coef == 0.0) continue;
        mblx_id t;
        if (r[i].coef == 1.0 && r[i].klen == 1)
            t = r[i].key[0];
        else if (r[i].mul != XNONE && r[i].coef == g->nd[r[i].mul].val)
            t = r[i].mul; /* the product the key came from: what intern would find */
        else
            t = intern(g, MBLX_OP_MUL, r[i].coef, r[i].klen, r[i].key);
        if (t == XNONE) goto done;
        out[nt++] = t;
    }
    if (nt == 0)
        res = mblx_const(g, s->k);
    else if (nt == 1 && s->k == 0.0)
        res = out[0];
    else
        res = intern(g, MBLX_OP_ADD, s->k, nt, out);
done:
    if (out != local) mbl_free(out);
    vec_free(&s->recs);
    vec_free(&s->keys);
    return res;
}

mblx_id mblx_sum(mblx_graph *g, size_t n, const mblx_id *terms)
{
    if (!g) return XNONE;
    if (n && !terms) return mblx__fail(g, MBL_EARG, "mblx_sum: NULL terms");
    for (size_t i = 0; i < n; i++)
        if (!mblx__valid(g, terms[i])) return XNONE;
    if (n == 0) return g->zero;
    if (n == 1) return terms[0]; /* already canonical */
    mblx_id u = first_undefined(g, n, terms);
    if (u != XNONE) return u;
    if (n == 2 && terms[0] == g->zero) return terms[1];
    if (n == 2 && terms[1] == g->zero) return terms[0];
    term_rec rl[LOCAL_TERMS];
    uint32_t kl[LOCAL_KEYS];
    sum_acc s = {{rl, 0, LOCAL_TERMS, rl}, {kl, 0, LOCAL_KEYS, kl}, 0.0, g, 0};
    for (size_t i = 0; i < n && !s.failed; i++) sum_add(&s, terms[i], 1.0);
    return sum_build(&s);
}

/* ---- products ----------------------------------------------------------------------------- */

typedef struct fac_rec {
    uint32_t base;
    uint32_t node; /* the factor base^e itself when it is an operand as it stands, else XNONE */
    double e;
} fac_rec;

#define LESS_FACS(x, y) ((x)->base < (y)->base)
MBLX__STABLE_SORT(sort_facs, fac_rec, LESS_FACS)

static mblx_id pow_num(mblx_graph *g, mblx_id b, double e);

/* Number of product re-normalization passes (a merged power can simplify into something that
 * must itself be merged, e.g. sqrt(x)*sqrt(x)*x). */
enum { PRODUCT_PASSES = 3 };

static mblx_id product_core(mblx_graph *g, double coef, size_t n, const mblx_id *f, int pass)
{
    fac_rec local[LOCAL_ARGS], *r = local;
    uint32_t olocal[LOCAL_ARGS], *out = olocal;
    size_t cap = LOCAL_ARGS, m = 0;
    mblx_id res = XNONE;
#define PUSH_FAC(b_, e_, n_)                                                                    \
    do {                                                                                      \
        if (m == cap) {                                                                       \
            size_t nc_ = cap * 2;                                                             \
            fac_rec *q_ = r == local ? mbl_alloc_array(nc_, sizeof *q_)                       \
                                     : mbl_realloc_array(r, nc_, sizeof *q_);                 \
            if (!q_) {                                                                        \
                mblx__oom(g);                                                                 \
                goto done;                                                                    \
            }                                                                                 \
            if (r == local) memcpy(q_, local, sizeof local);                                  \
            r = q_;                                                                           \
            cap = nc_;                                                                        \
        }                                                                                     \
        r[m].base = (b_);                                                                     \
        r[m].node = (n_);                                                                     \
        r[m].e = (e_);                                                                        \
        m++;                                                                                  \
    } while (0)
    for (size_t i = 0; i < n; i++) {
        mblx_id t = f[i];
        double v;
        if (is_const(g, t, &v)) {
            if (isfinite(coef * v))
                coef *= v;
            else
                PUSH_FAC(t, 1.0, XNONE);
            continue;
        }
        size_t cnt = 1;
        const uint32_t *list = &f[i];
        if (g->nd[t].op == MBLX_OP_MUL && g->nd[t].na <= MBLX_FLATTEN_MAX) {
            if (isfinite(coef * g->nd[t].val)) {
                coef *= g->nd[t].val;
            } else {
                mblx_id kc = mblx_const(g, g->nd[t].val);
                if (kc == XNONE) goto done;
                PUSH_FAC(kc, 1.0, XNONE);
            }
            cnt = g->nd[t].na;
            list = mblx__args(g, t);
        }
        for (size_t k = 0; k < cnt; k++) {
            mblx_id x = list[k];
            double ev;
            if (g->nd[x].op == MBLX_OP_POW && is_const(g, mblx__args(g, x)[1], &ev))
                PUSH_FAC(mblx__args(g, x)[0], ev, x);
            else
                PUSH_FAC(x, 1.0, XNONE);
        }
    }
#undef PUSH_FAC
    if (coef == 0.0) {
        res = g->zero;
        goto done;
    }
    if (sort_facs(r, m, NULL)) {
        mblx__oom(g);
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && r[k - 1].base == r[i].base && isfinite(r[k - 1].e + r[i].e)) {
            r[k - 1].e += r[i].e;
            r[k - 1].node = XNONE;
            continue;
        }
        r[k++] = r[i];
    }
    m = k;
    if (m > LOCAL_ARGS && !(out = mbl_alloc_array(m, sizeof *out))) {
        mblx__oom(g);
        goto done;
    }
    size_t nf = 0;
    int renorm = 0;
    for (size_t i = 0; i < m; i++) {
        if (r[i].e == 0.0) continue;
        /* a power operand x = base^e that was not merged is what pow_num(base, e) returns: every
         * POW node with a constant exponent is created by pow_num, a pure function of (base, e) */
        mblx_id t = r[i].e == 1.0        ? r[i].base
                    : r[i].node != XNONE ? r[i].node
                                         : pow_num(g, r[i].base, r[i].e);
        if (t == XNONE) goto done;
        if (r[i].e != 1.0 &&
            !(g->nd[t].op == MBLX_OP_POW && mblx__args(g, t)[0] == r[i].base))
            renorm = 1;
        out[nf++] = t;
    }
    if (renorm && pass < PRODUCT_PASSES) {
        res = product_core(g, coef, nf, out, pass + 1);
    } else if (nf == 0) {
        res = mblx_const(g, coef);
    } else if (nf == 1 && coef == 1.0) {
        res = out[0];
    } else {
        /* canonical order: by base */
        if (renorm) {
            for (size_t i = 1; i < nf; i++) { /* insertion sort by base (rare path) */
                uint32_t x = out[i];
                size_t j = i;
                while (j > 0) {
                    uint32_t y = out[j - 1];
                    uint32_t bx = g->nd[x].op == MBLX_OP_POW ? mblx__args(g, x)[0] : x;
                    uint32_t by = g->nd[y].op == MBLX_OP_POW ? mblx__args(g, y)[0] : y;
                    if (by <= bx) break;
                    out[j] = y;
                    j--;
                }
                out[j] = x;
            }
        }
        res = intern(g, MBLX_OP_MUL, coef, nf, out);
    }
done:
    if (r != local) mbl_free(r);
    if (out != olocal) mbl_free(out);
    return res;
}

mblx_id mblx_product(mblx_graph *g, size_t n, const mblx_id *factors)
{
    if (!g) return XNONE;
    if (n && !factors) return mblx__fail(g, MBL_EARG, "mblx_product: NULL factors");
    for (size_t i = 0; i < n; i++)
        if (!mblx__valid(g, factors[i])) return XNONE;
    if (n == 0) return g->one;
    if (n == 1) return factors[0]; /* already canonical */
    mblx_id u = first_undefined(g, n, factors);
    if (u != XNONE) return u;
    if (n == 2) {
        if (factors[0] == g->one) return factors[1];
        if (factors[1] == g->one) return factors[0];
        if (factors[0] == g->zero || factors[1] == g->zero) return g->zero;
    }
    return product_core(g, 1.0, n, factors, 0);
}

/* ---- powers ------------------------------------------------------------------------------- */

static mblx_id pow_num(mblx_graph *g, mblx_id b, double e)
{
    if (is_undefined(g, b)) return b;
    if (e == 0.0) return g->one;
    if (e == 1.0) return b;
    double bv;
    if (is_const(g, b, &bv)) {
        double r = pow(bv, e);
        if (isfinite(r)) return mblx_const(g, r);
        mblx_id ec = mblx_const(g, e);
        if (ec == XNONE) return XNONE;
        uint32_t a[2] = {b, ec};
        return intern(g, MBLX_OP_POW, 0.0, 2, a);
    }
    if (is_integer(e)) {
        double be;
        if (g->nd[b].op == MBLX_OP_POW && is_const(g, mblx__args(g, b)[1], &be) &&
            isfinite(be * e))
            return pow_num(g, mblx__args(g, b)[0], be * e);
        if (g->nd[b].op == MBLX_OP_SQRT && fmod(e, 2.0) == 0.0)
            return pow_num(g, mblx__args(g, b)[0], e / 2.0);
        if (g->nd[b].op == MBLX_OP_MUL && isfinite(pow(g->nd[b].val, e)) && pow(g->nd[b].val, e) != 0.0) {
            /* (c * x * y)^n = c^n * x^n * y^n */
            size_t n = g->nd[b].na;
            uint32_t local[LOCAL_ARGS], *fs = local;
            if (n > LOCAL_ARGS && !(fs = mbl_alloc_array(n, sizeof *fs))) return mblx__oom(g);
            mblx_id res = XNONE;
            size_t i;
            for (i = 0; i < n; i++) {
                fs[i] = pow_num(g, mblx__args(g, b)[i], e);
                if (fs[i] == XNONE) break;
            }
            if (i == n) res = product_core(g, pow(g->nd[b].val, e), n, fs, 0);
            if (fs != local) mbl_free(fs);
            return res;
        }
    }
    mblx_id ec = mblx_const(g, e);
    if (ec == XNONE) return XNONE;
    uint32_t a[2] = {b, ec};
    return intern(g, MBLX_OP_POW, 0.0, 2, a);
}

mblx_id mblx_pow(mblx_graph *g, mblx_id base, mblx_id exponent)
{
    if (!g || !mblx__valid(g, base) || !mblx__valid(g, exponent)) return XNONE;
    if (is_undefined(g, base)) return base;
    if (is_undefined(g, exponent)) return exponent;
    double e, b;
    if (is_const(g, exponent, &e)) return pow_num(g, base, e);
    if (is_const(g, base, &b) && b == 1.0) return g->one;
    uint32_t a[2] = {base, exponent};
    return intern(g, MBLX_OP_POW, 0.0, 2, a);
}

mblx_id mblx_powc(mblx_graph *g, mblx_id base, double k)
{
    if (!g || !mblx__valid(g, base)) return XNONE;
    if (!isfinite(k)) return mblx__fail(g, MBL_EARG, "non-finite exponent %g", k);
    return pow_num(g, base, k);
}

/* ---- binary arithmetic -------------------------------------------------------------------- */

mblx_id mblx_add(mblx_graph *g, mblx_id a, mblx_id b)
{
    mblx_id t[2] = {a, b};
    return mblx_sum(g, 2, t);
}

mblx_id mblx_scale(mblx_graph *g, double c, mblx_id a)
{
    if (!g || !mblx__valid(g, a)) return XNONE;
    if (!isfinite(c)) return mblx__fail(g, MBL_EARG, "non-finite scale factor %g", c);
    if (c == 1.0 || is_undefined(g, a)) return a;
    return product_core(g, c, 1, &a, 0);
}

mblx_id mblx_neg(mblx_graph *g, mblx_id a) { return mblx_scale(g, -1.0, a); }

mblx_id mblx_sub(mblx_graph *g, mblx_id a, mblx_id b)
{
    if (!g || !mblx__valid(g, a) || !mblx__valid(g, b)) return XNONE;
    if (is_undefined(g, a)) return a;
    if (is_undefined(g, b)) return b;
    if (a == b) return g->zero;
    mblx_id t[2] = {a, mblx_neg(g, b)};
    if (t[1] == XNONE) return XNONE;
    return mblx_sum(g, 2, t);
}

mblx_id mblx_mul(mblx_graph *g, mblx_id a, mblx_id b)
{
    mblx_id t[2] = {a, b};
    return mblx_product(g, 2, t);
}

mblx_id mblx_div(mblx_graph *g, mblx_id a, mblx_id b)
{
    if (!g || !mblx__valid(g, a) || !mblx__valid(g, b)) return XNONE;
    mblx_id t[2] = {a, pow_num(g, b, -1.0)};
    if (t[1] == XNONE) return XNONE;
    return mblx_product(g, 2, t);
}

/* ---- functions ---------------------------------------------------------------------------- */

static double fold1(unsigned op, double x)
{
    switch (op) {
    case MBLX_OP_SIN: return sin(x);
    case MBLX_OP_COS: return cos(x);
    case MBLX_OP_TAN: return tan(x);
    case MBLX_OP_ASIN: return (x >= -1.0 && x <= 1.0) ? asin(x) : NAN;
    case MBLX_OP_ACOS: return (x >= -1.0 && x <= 1.0) ? acos(x) : NAN;
    case MBLX_OP_ATAN: return atan(x);
    case MBLX_OP_SINH: return sinh(x);
    case MBLX_OP_COSH: return cosh(x);
    case MBLX_OP_TANH: return tanh(x);
    case MBLX_OP_EXP: return exp(x);
    case MBLX_OP_LOG: return x > 0.0 ? log(x) : NAN;
    case MBLX_OP_SQRT: return x >= 0.0 ? sqrt(x) : NAN;
    case MBLX_OP_ABS: return fabs(x);
    case MBLX_OP_SIGN: return (x > 0.0) - (x < 0.0);
    default: return NAN;
    }
}

static mblx_id fun1(mblx_graph *g, unsigned op, mblx_id a)
{
    if (!g || !mblx__valid(g, a)) return XNONE;
    if (is_undefined(g, a)) return a;
    double v;
    if (is_const(g, a, &v)) {
        double r = fold1(op, v);
        if (isfinite(r)) return mblx_const(g, r);
    }
    unsigned aop = g->nd[a].op;
    if (op == MBLX_OP_LOG && aop == MBLX_OP_EXP) return mblx__args(g, a)[0];
    if ((op == MBLX_OP_ABS || op == MBLX_OP_SIGN) && aop == op) return a;
    uint32_t arg = a;
    return intern(g, op, 0.0, 1, &arg);
}

mblx_id mblx_sin(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_SIN, a); }
mblx_id mblx_cos(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_COS, a); }
mblx_id mblx_tan(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_TAN, a); }
mblx_id mblx_asin(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_ASIN, a); }
mblx_id mblx_acos(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_ACOS, a); }
mblx_id mblx_atan(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_ATAN, a); }
mblx_id mblx_sinh(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_SINH, a); }
mblx_id mblx_cosh(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_COSH, a); }
mblx_id mblx_tanh(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_TANH, a); }
mblx_id mblx_exp(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_EXP, a); }
mblx_id mblx_log(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_LOG, a); }
mblx_id mblx_sqrt(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_SQRT, a); }
mblx_id mblx_abs(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_ABS, a); }
mblx_id mblx_sign(mblx_graph *g, mblx_id a) { return fun1(g, MBLX_OP_SIGN, a); }

mblx_id mblx_atan2(mblx_graph *g, mblx_id y, mblx_id x)
{
    if (!g || !mblx__valid(g, y) || !mblx__valid(g, x)) return XNONE;
    if (is_undefined(g, y)) return y;
    if (is_undefined(g, x)) return x;
    double a, b;
    if (is_const(g, y, &a) && is_const(g, x, &b)) return mblx_const(g, atan2(a, b));
    uint32_t args[2] = {y, x};
    return intern(g, MBLX_OP_ATAN2, 0.0, 2, args);
}

static mblx_id minmax(mblx_graph *g, unsigned op, mblx_id a, mblx_id b)
{
    if (!g || !mblx__valid(g, a) || !mblx__valid(g, b)) return XNONE;
    if (is_undefined(g, a)) return a;
    if (is_undefined(g, b)) return b;
    if (a == b) return a;
    double x, y;
    if (is_const(g, a, &x) && is_const(g, b, &y))
        return mblx_const(g, op == MBLX_OP_MIN ? (x < y ? x : y) : (x > y ? x : y));
    uint32_t args[2] = {a < b ? a : b, a < b ? b : a};
    return intern(g, op, 0.0, 2, args);
}

mblx_id mblx_min(mblx_graph *g, mblx_id a, mblx_id b) { return minmax(g, MBLX_OP_MIN, a, b); }
mblx_id mblx_max(mblx_graph *g, mblx_id a, mblx_id b) { return minmax(g, MBLX_OP_MAX, a, b); }

double mblx__step_value(double x, double x0, double h0, double x1, double h1)
{
    if (x <= x0) return h0;
    if (x >= x1) return h1;
    double s = (x - x0) / (x1 - x0);
    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s);
}

mblx_id mblx_step(mblx_graph *g, mblx_id x, mblx_id x0, mblx_id h0, mblx_id x1, mblx_id h1)
{
    if (!g) return XNONE;
    uint32_t a[5] = {x, x0, h0, x1, h1};
    for (int i = 0; i < 5; i++)
        if (!mblx__valid(g, a[i])) return XNONE;
    mblx_id u = first_undefined(g, 5, a);
    if (u != XNONE) return u;
    double xv, x0v, x1v;
    if (is_const(g, x, &xv) && is_const(g, x0, &x0v) && is_const(g, x1, &x1v)) {
        if (xv <= x0v) return h0;
        if (xv >= x1v) return h1;
        double h0v, h1v;
        if (is_const(g, h0, &h0v) && is_const(g, h1, &h1v)) {
            double r = mblx__step_value(xv, x0v, h0v, x1v, h1v);
            if (isfinite(r)) return mblx_const(g, r);
        }
    }
    if (h0 == h1) return h0;
    return intern(g, MBLX_OP_STEP, 0.0, 5, a);
}

mblx_id mblx_let(mblx_graph *g, mblx_id x)
{
    if (!g || !mblx__valid(g, x)) return XNONE;
    if (is_undefined(g, x)) return x;
    unsigned op = g->nd[x].op;
    if (op != MBLX_OP_ADD && op != MBLX_OP_MUL && op != MBLX_OP_POW) return x; /* atoms already */
    if (op == MBLX_OP_MUL && g->nd[x].val != 1.0) { /* c*y: c*let(y), so that -let(y) + let(y) = 0 */
        double c = g->nd[x].val;
        size_t na = g->nd[x].na;
        uint32_t local[16], *f = na <= 16 ? local : mbl_alloc_array(na, sizeof *f);
        if (!f) return mblx__oom(g);
        memcpy(f, mblx__args(g, x), na * sizeof *f); /* the pool moves when nodes are made */
        mblx_id y = mblx_product(g, na, f);
        if (f != local) mbl_free(f);
        return mblx_scale(g, c, mblx_let(g, y));
    }
    if (op == MBLX_OP_MUL && g->nd[x].na == 1) return x; /* 1*y is y, not a node */
    uint32_t arg = x;
    g->nlet = 1;
    return intern(g, MBLX_OP_LET, 0.0, 1, &arg);
}

/* ---- generic ------------------------------------------------------------------------------ */

mblx_id mblx_apply(mblx_graph *g, mblx_op op, double value, size_t n, const mblx_id *args)
{
    if (!g) return XNONE;
    if (n && !args) return mblx__fail(g, MBL_EARG, "mblx_apply: NULL operands");
    for (size_t i = 0; i < n; i++)
        if (!mblx__valid(g, args[i])) return XNONE;
#define ARITY(k)                                                                              \
    do {                                                                                      \
        if (n != (k))                                                                         \
            return mblx__fail(g, MBL_EARG, "mblx_apply: %s takes %d operands, got %zu",       \
                              mblx_op_name(op), (k), n);                                      \
    } while (0)
    switch (op) {
    case MBLX_OP_CONST: ARITY(0); return mblx_const(g, value);
    case MBLX_OP_ADD: {
        if (!isfinite(value)) return mblx__fail(g, MBL_EARG, "non-finite constant %g", value);
        if (first_undefined(g, n, args) != XNONE) return first_undefined(g, n, args);
        term_rec rl[LOCAL_TERMS];
        uint32_t kl[LOCAL_KEYS];
        sum_acc s = {{rl, 0, LOCAL_TERMS, rl}, {kl, 0, LOCAL_KEYS, kl}, value, g, 0};
        for (size_t i = 0; i < n && !s.failed; i++) sum_add(&s, args[i], 1.0);
        return sum_build(&s);
    }
    case MBLX_OP_MUL:
        if (!isfinite(value)) return mblx__fail(g, MBL_EARG, "non-finite constant %g", value);
        if (first_undefined(g, n, args) != XNONE) return first_undefined(g, n, args);
        return product_core(g, value, n, args, 0);
    case MBLX_OP_POW: ARITY(2); return mblx_pow(g, args[0], args[1]);
    case MBLX_OP_SIN: case MBLX_OP_COS: case MBLX_OP_TAN: case MBLX_OP_ASIN: case MBLX_OP_ACOS:
    case MBLX_OP_ATAN: case MBLX_OP_SINH: case MBLX_OP_COSH: case MBLX_OP_TANH:
    case MBLX_OP_EXP: case MBLX_OP_LOG: case MBLX_OP_SQRT: case MBLX_OP_ABS: case MBLX_OP_SIGN:
        ARITY(1);
        return fun1(g, op, args[0]);
    case MBLX_OP_ATAN2: ARITY(2); return mblx_atan2(g, args[0], args[1]);
    case MBLX_OP_MIN: ARITY(2); return mblx_min(g, args[0], args[1]);
    case MBLX_OP_MAX: ARITY(2); return mblx_max(g, args[0], args[1]);
    case MBLX_OP_STEP: ARITY(5); return mblx_step(g, args[0], args[1], args[2], args[3], args[4]);
    case MBLX_OP_LET: ARITY(1); return mblx_let(g, args[0]);
    default: return mblx__fail(g, MBL_EARG, "mblx_apply: invalid operation %d", (int)op);
    }
#undef ARITY
}

const char *mblx_op_name(mblx_op op)
{
    static const char *const names[MBLX_OP_COUNT_] = {
        [MBLX_OP_CONST] = "const", [MBLX_OP_SYMBOL] = "symbol", [MBLX_OP_ADD] = "+",
        [MBLX_OP_MUL] = "*",       [MBLX_OP_POW] = "^",         [MBLX_OP_SIN] = "sin",
        [MBLX_OP_COS] = "cos",     [MBLX_OP_TAN] = "tan",       [MBLX_OP_ASIN] = "asin",
        [MBLX_OP_ACOS] = "acos",   [MBLX_OP_ATAN] = "atan",     [MBLX_OP_ATAN2] = "atan2",
        [MBLX_OP_SINH] = "sinh",   [MBLX_OP_COSH] = "cosh",     [MBLX_OP_TANH] = "tanh",
        [MBLX_OP_EXP] = "exp",     [MBLX_OP_LOG] = "log",       [MBLX_OP_SQRT] = "sqrt",
        [MBLX_OP_ABS] = "abs",     [MBLX_OP_SIGN] = "sign",     [MBLX_OP_MIN] = "min",
        [MBLX_OP_MAX] = "max",     [MBLX_OP_STEP] = "step",     [MBLX_OP_LET] = "let",
    };
    return ((unsigned)op < MBLX_OP_COUNT_) ? names[op] : "?";
}
