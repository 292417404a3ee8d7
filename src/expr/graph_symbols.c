/* Expression graph: the symbols, their names and the table that finds them by name (the nodes
 * they are: graph.c). */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "expr/symbol_reserve.h"

/* Initial capacities (grown geometrically). */
enum { INIT_SYMS = 16, INIT_NAMES = 256 };

/* ---- symbols ------------------------------------------------------------------------------ */

/* The hash of name[0..len), eight bytes at a time (the last eight overlap the word before them
 * when len is no multiple of 8); *nul (nul not NULL): whether a NUL byte is among them. Only the
 * table's probe order depends on it. */
static uint32_t hash_name_nul(const char *s, size_t len, int *nul)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t h = 0xcbf29ce484222325ull ^ len, z = 0, w;
    if (len < 8) {
        for (size_t i = 0; i < len; i++) {
            z |= s[i] == '\0';
            h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
        }
    } else {
        size_t i = 0;
        for (; i + 8 < len; i += 8) {
            memcpy(&w, s + i, sizeof w);
            z |= (w - ones) & ~w & highs; /* nonzero iff a byte of w is zero */
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
        }
        memcpy(&w, s + len - 8, sizeof w);
        z |= (w - ones) & ~w & highs;
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    }
    if (nul) *nul = z != 0;
    return (uint32_t)(mblx__mix64(h) & 0xffffffffu);
}

static uint32_t hash_name(const char *s, size_t len) { return hash_name_nul(s, len, NULL); }

static const char *sym_name_of(const mblx_graph *g, uint32_t idx)
{
    return g->names + g->sym_name[idx];
}

/* The symbol named name[0..len) whose name hashes to h, or XNONE. */
static mblx_id symbol_find_hashed(const mblx_graph *g, const char *name, size_t len, uint32_t h)
{
    if (!g->symtab_cap) return XNONE;
    size_t k = h & (g->symtab_cap - 1);
    for (uint32_t s; (s = g->symtab[k].sym) != XNONE; k = (k + 1) & (g->symtab_cap - 1)) {
        if (g->symtab[k].hash != h) continue;
        const char *nm = sym_name_of(g, s);
        if (strncmp(nm, name, len) == 0 && nm[len] == '\0') return g->sym_node[s];
    }
    return XNONE;
}

mblx_id mblx_symbol_find_n(const mblx_graph *g, const char *name, size_t len)
{
    if (!g || !name || !g->symtab_cap) return XNONE;
    return symbol_find_hashed(g, name, len, hash_name(name, len));
}

mblx_id mblx_symbol_find(const mblx_graph *g, const char *name)
{
    return name ? mblx_symbol_find_n(g, name, strlen(name)) : XNONE;
}

static int symtab_rehash(mblx_graph *g, size_t ncap)
{
    struct mblx_symslot *t = mbl_alloc_array(ncap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < ncap; i++) t[i].sym = XNONE;
    for (uint32_t s = 0; s < g->nsym; s++) {
        const char *nm = sym_name_of(g, s);
        uint32_t h = hash_name(nm, strlen(nm));
        size_t k = h & (ncap - 1);
        while (t[k].sym != XNONE) k = (k + 1) & (ncap - 1);
        t[k].sym = s, t[k].hash = h;
    }
    mbl_free(g->symtab);
    g->symtab = t;
    g->symtab_cap = ncap;
    return 0;
}

/* Room for need symbols in the two arrays of the symbols (one capacity, symcap). */
static int grow_syms(mblx_graph *g, size_t need)
{
    size_t cap = g->symcap;
    if (mblx__grow((void **)&g->sym_node, &cap, need, sizeof *g->sym_node, INIT_SYMS)) return -1;
    cap = g->symcap;
    if (mblx__grow((void **)&g->sym_name, &cap, need, sizeof *g->sym_name, INIT_SYMS)) return -1;
    g->symcap = (uint32_t)cap;
    return 0;
}

int mblx__symbol_reserve(mblx_graph *g, size_t nsym)
{
    if (!g) return MBL_EARG;
    if (nsym > (size_t)XPENDING / 4) nsym = (size_t)XPENDING / 4;
    size_t tc = g->symtab_cap ? g->symtab_cap : INIT_SYMS; /* at most half full, as it grows */
    while (tc < 2 * nsym) tc *= 2;
    if (grow_syms(g, nsym) || (tc > g->symtab_cap && symtab_rehash(g, tc))) return MBL_ENOMEM;
    return 0;
}

mblx_id mblx_symbol_n(mblx_graph *g, const char *name, size_t len)
{
    if (!g) return XNONE;
    if (!name || len == 0) return mblx__fail(g, MBL_EARG, "empty symbol name");
    int nul;
    uint32_t h = hash_name_nul(name, len, &nul); /* once, for the lookup and the insertion */
    if (nul) return mblx__fail(g, MBL_EARG, "symbol name contains a NUL byte");
    mblx_id e = symbol_find_hashed(g, name, len, h);
    if (e != XNONE) return e;
    if (g->nsym >= XPENDING - 1) return mblx__oom(g);
    /* each array grown only when full (a reserved graph takes none of the calls) */
    if (g->nsym >= g->symcap && grow_syms(g, (size_t)g->nsym + 1)) return mblx__oom(g);
    if (len > SIZE_MAX - 1 - g->names_used ||
        (g->names_used + len + 1 > g->names_cap &&
         mblx__grow((void **)&g->names, &g->names_cap, g->names_used + len + 1, 1, INIT_NAMES)))
        return mblx__oom(g);
    if (((size_t)g->nsym + 1) * 2 > g->symtab_cap &&
        symtab_rehash(g, g->symtab_cap ? g->symtab_cap * 2 : INIT_SYMS))
        return mblx__oom(g);
    if ((g->n >= g->cap && mblx__grow_nodes(g, (size_t)g->n + 1)) ||
        (g->ndeps_used >= g->deps_cap &&
         mblx__grow((void **)&g->deps, &g->deps_cap, g->ndeps_used + 1, sizeof *g->deps, MBLX__INIT_POOL)) ||
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
    if (g->stamp) g->stamp[e] = 0;
    g->ndeps_used++;
    g->n++;
    g->nsym++;
    size_t k = h & (g->symtab_cap - 1);
    while (g->symtab[k].sym != XNONE) k = (k + 1) & (g->symtab_cap - 1);
    g->symtab[k].sym = s, g->symtab[k].hash = h;
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
