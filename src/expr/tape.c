/* Compilation of expression sets into flat register tapes (the traversal of the sub-DAG, the
 * events and the emission of instructions), and the tapes' lifetime. */
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "expr/compile_once.h"
#include "expr/tape_internal.h"

/* mblx_compile_few's tapes are evaluated once a point (a load's domain check), for whether a value
 * is not finite. Below FEW_SHARE_MIN nodes they are compiled as written, without the chains'
 * sharing (whose operations are those of the sub-DAG as written, in the same order: the same
 * values; its tables and traversal cost more than the few instructions they save there), and below
 * FEW_SCHED_MIN instructions not scheduled either: evaluated in the emission's order and SSA form,
 * one register an instruction, by runs of consecutive equal opcodes (the nonlinear bicycle's 202
 * nodes, 238 instructions: 0.20 -> 0.11 M instructions to compile; its one evaluation costs 4.6 k
 * more). (mblx__compile_written's are scheduled: the SSA form took 0.18 M instructions fewer to compile
 * the mechanism bicycle's user states but 4 % more CPU for the whole run, interleaved: one
 * evaluation of 2,925 instructions in runs of one or two, and 4 more pages.) */
enum { FEW_SHARE_MIN = 1024, FEW_SCHED_MIN = 4096 };

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

/* map_get with m->dense given (dense: a hot loop's local, not reloaded after its stores) */
static inline uint32_t *map_at(u32map *m, uint32_t *dense, uint32_t k, int insert)
{
    if (dense) {
        if (dense[k] == XNONE && !insert) return NULL;
        return &dense[k];
    }
    return map_get_hashed(m, k, insert);
}

static inline uint32_t *map_get(u32map *m, uint32_t k, int insert) { return map_at(m, m->dense, k, insert); }

/* ---- tape lifetime -------------------------------------------------------------------------- */

void mblx_tape_free(mblx_tape *t)
{
    if (!t) return;
    mbl_free(t->ins);
    mbl_free(t->cst);
    mbl_free(t->outreg);
    mbl_free(t->ext);
    mblx__data_free(t->data, t->ndata);
    mblx__tape_user_free(t);
    mbl_free(t->ins_node);
    mbl_free(t->lnd);
    mbl_free(t->largs);
    mbl_free(t->names);
    mbl_free(t->run_start);
    mbl_free(t->run_op);
    mblx__fwdjac_free(t->fwdjac);
    mbl_free(t);
}

size_t mblx_tape_work_size(const mblx_tape *t) { return t ? (t->nreg ? t->nreg : 1) + t->ucache : 0; }
size_t mblx_tape_ninstr(const mblx_tape *t) { return t ? t->nins : 0; }
size_t mblx_tape_noutputs(const mblx_tape *t) { return t ? t->nout : 0; }
size_t mblx_tape_nsymbols(const mblx_tape *t) { return t ? t->nsymreq : 0; }

/* (tape_internal.h; the compiler records it as it numbers a sub-DAG, tape_share.c makes it otherwise) */
size_t mblx__local_postorder(const mblx__node *lnd, const uint32_t *largs, size_t nl, const uint32_t *outl, size_t nout,
                             unsigned char *mark, uint32_t *order)
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
            const uint32_t *a = largs + nd->aoff;
            uint32_t i = f->next, na = nd->na;
            while (i < na && mark[a[i]]) i++; /* the operands already seen, in one loop */
            if (i < na) {
                uint32_t c = a[i];
                f->next = i + 1;
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

/* The operands of local node nd (a: its operands) read from registers: all but a constant
 * exponent (a power's second, read as an immediate), which comes last. */
static uint32_t reg_operands(const mblx__node *lnd, const mblx__node *nd, const uint32_t *a)
{
    return nd->op == MBLX_OP_POW && lnd[a[1]].op == MBLX_OP_CONST ? 1 : nd->na;
}

/* Compilation runs in two passes over an event list. Pass 1 is a depth-first traversal from
 * the outputs (explicit stack) that records events: NODE(l) when node l is complete, and, for a
 * sum or product of k >= 2 operands, ACC(l, i) as soon as operand i is available, so that the
 * partial sum is accumulated at once and operand values die early (a sum of 10^5 terms then
 * needs O(1) registers); it also marks the values that are read (the scheduler finds their last
 * uses). Pass 2 emits the instructions (in SSA form: the scheduler allocates the registers).
 *
 * An event is 4 bytes: the node, with EV_ACC set for an ACC. Its operand i is not stored: the
 * ACC events of a node come in the order of its operands, so the emission counts them in the
 * node's dcnt (0 in the compile arrays). The events that neither
 * use a value nor emit an instruction are not recorded: ACC(l, 0) (the first operand is read at
 * ACC(l, 1)) and the NODE of a sum or product without a constant to apply. Every other event
 * keeps its relative order, so the registers and instructions are the same as with
 * every event recorded (8 bytes each: the N = 10^4 four-bar's list was 20.4 MB, now 3.6 MB). */
#define EV_ACC 0x80000000u

/* The events traversal's marks of a local node (compiler.seen): seen, and its value read (as a
 * register operand, or an output; a constant only read as an immediate exponent emits nothing). */
enum { SEEN = 1, READ = 2 };

/* Has the sum or product nd (at least two operands) a constant to apply after its chain? Its NODE
 * event then emits it; the NODE event of any other node is recorded too (see above). */
static int applies_const(const mblx__node *nd)
{
    return nd->na > 2 && nd->val != (nd->op == MBLX_OP_ADD ? 0.0 : 1.0);
}

/* The node a let stands for (let(x) compiles as x: no instruction). */
static uint32_t unlet(const mblx_graph *g, uint32_t v)
{
    if (!g->nlet) return v; /* no let in the graph: no lookup */
    while (g->nd[v].op == MBLX_OP_LET) v = mblx__args(g, v)[0];
    return v;
}

/* The state of one compilation: the node -> local index map, the traversal stack, the event list,
 * and per local node its register and whether the event traversal has seen it and its value is
 * read (SEEN, READ). */
typedef struct compiler {
    const mblx_graph *g;
    mblx_tape *t;
    u32map map;
    dfs_frame *stack;
    struct num_frame *nstk; /* number_sub_dag's traversal stack, nsn of nscap */
    uint32_t *ev;
    uint32_t *reg, *outl, *owner, *dlargs;
    uint32_t *post;   /* the numbered sub-DAG's post-order (as mblx__local_postorder makes it), npost of pcap */
    mblx__node *dlnd; /* the private copy as the graph has it, while the compiler works on the shared form */
    uint32_t *gid;    /* the graph node of each local node of the copy (bound tapes: until shared) */
    unsigned char *seen;
    size_t sn, scap, nl, nev, evcap, lcap, nsn, nscap;
    size_t ka, ncap, kn, nstep;
    size_t nl0, npost, pcap;
    size_t extra, lres, ares; /* the chains' extra links (tape_share.c); lnd, largs' capacities */
    size_t nnary;             /* the numbered sums and products of at least two operands (mblx__share) */
    size_t npairs;            /* their pairs of operands the pairs' search counts (mblx__pairs_local) */
    int form;                 /* MBLX__SHARE_* (mblx_compile_few: the chains alone; mblx__compile_written) */
    int fuse;                 /* a sum's or product's constant fused into its last operation (mblx__share) */
    mblx__cpool cp;           /* the instructions' constants (emit_instructions) */
} compiler;

static void compiler_free(compiler *c)
{
    mbl_free(c->map.key);
    mbl_free(c->map.val);
    mbl_free(c->map.dense);
    mbl_free(c->stack);
    mbl_free(c->nstk);
    mbl_free(c->ev);
    mbl_free(c->reg);
    mbl_free(c->outl);
    mbl_free(c->seen);
    mbl_free(c->owner);
    mbl_free(c->dlnd);
    mbl_free(c->dlargs);
    mbl_free(c->gid);
    mbl_free(c->post);
    mblx__cpool_free(&c->cp);
}

/* Grow arr_ (cnt_ elements used of cap_) by doubling when full; returns -1 from the calling
 * function when out of memory. */
#define GROWV(arr_, cnt_, cap_)                                                               \
    do {                                                                                      \
        if ((cnt_) == (cap_)) {                                                               \
            size_t nc_ = (cap_) ? (cap_) * 2 : INIT_CAP;                                      \
            void *q_ = mblx__grow_block((arr_), (cap_) * sizeof *(arr_), nc_, sizeof *(arr_)); \
            if (!q_) return -1;                                                               \
            (arr_) = q_;                                                                      \
            (cap_) = nc_;                                                                     \
        }                                                                                     \
    } while (0)

/* A direct node -> local index map when the outputs' largest handle is small enough (see
 * DENSE_FACTOR). */
static int reserve_dense(compiler *c, size_t n, const mblx_id *outputs)
{
    size_t maxid = 0;
    for (size_t o = 0; o < n; o++)
        if (outputs[o] > maxid) maxid = outputs[o];
    if (n && maxid < (SIZE_MAX - DENSE_SLACK) / DENSE_FACTOR &&
        maxid + 1 <= DENSE_FACTOR * n + DENSE_SLACK) {
        /* (and the post-order's and the graph nodes' room: the sub-DAG's nodes, operands made
         * before their users, are at most maxid + 1; their pages past the nodes' are never
         * touched, and the nodes' array is not grown by copies: 2.3 M instructions at N = 10^4) */
        if (!(c->map.dense = mbl_alloc_array(maxid + 1, sizeof *c->map.dense)) ||
            !(c->post = mbl_alloc_array(maxid + 1, sizeof *c->post)) ||
            !(c->gid = mbl_alloc_array(maxid + 1, sizeof *c->gid)))
            return -1;
        c->pcap = c->lcap = maxid + 1;
        /* the events the numbering records (number_sub_dag): at most one a node and one an operand
         * (see EV_ACC), the graph's operands bounding the sub-DAG's (pages past those written are
         * never touched, and returned after) */
        if (c->g->nargs_used <= (SIZE_MAX / sizeof *c->ev) - maxid - 1 &&
            (c->ev = mbl_alloc_array(maxid + 1 + c->g->nargs_used, sizeof *c->ev)) &&
            !(c->seen = mbl_calloc(maxid + 1, 1))) {
            mbl_free(c->ev);
            c->ev = NULL;
        }
        mblx__hugepages(c->map.dense, (maxid + 1) * sizeof *c->map.dense);
        memset(c->map.dense, 0xff, (maxid + 1) * sizeof *c->map.dense);
    }
    return 0;
}

/* The private copy of the numbered sub-DAG (lnd, largs, names: for error messages; a bound tape:
 * no names), at its exact size: local node l is graph node gid[l], its operands the local
 * indices of the graph's. Sized after the traversal, not reserved at a bound and shrunk: the
 * unused part of a reserve, freed, was untouched heap that later allocations had to fault in.
 * A bound tape keeps no copy: its arrays are reserved for the shared form's chains, which are
 * then made in them (mblx__share), not in a second copy. -1 when out of memory. */
static int copy_sub_dag(compiler *c)
{
    const mblx_graph *g = c->g;
    mblx_tape *t = c->t;
    size_t nl = c->nl, ka = 0;
    c->lres = nl, c->ares = c->ka;
    if (t->g && c->form != MBLX__SHARE_NONE && c->extra <= (SIZE_MAX - c->ka) / 2 - 1) /* (no chains written) */
        c->lres += c->extra, c->ares += 2 * c->extra;
    if (!(t->lnd = mbl_alloc_array(c->lres ? c->lres : 1, sizeof *t->lnd)) ||
        !(t->largs = mbl_alloc_array(c->ares ? c->ares : 1, sizeof *t->largs)))
        return -1;
    mblx__hugepages(t->lnd, c->lres * sizeof *t->lnd);
    mblx__hugepages(t->largs, c->ares * sizeof *t->largs);
    const uint32_t *dense = c->map.dense;
    int pf = nl >= ((size_t)1 << 18); /* (below: fewer misses than the prefetches cost) */
    (void)pf;
    for (size_t l = 0; l < nl; l++) {
        uint32_t v = c->gid[l];
        const mblx__node *gn = &g->nd[v];
        mblx__node *ln = &t->lnd[l];
#if defined(__GNUC__)
        /* the graph's nodes in the traversal's order are cache misses in a large sub-DAG (the
         * N = 10^4 four-bar's residual: compile's perf samples 195-279 before, 167-189 after):
         * each node fetched 16 places ahead, its operands 8 places ahead (values untouched) */
        if (pf && l + 16 < nl) {
            __builtin_prefetch(&g->nd[c->gid[l + 16]]);
            __builtin_prefetch(mblx__args(g, c->gid[l + 8]));
        }
#endif
        mblx__node nd = *gn; /* (whole: op and na, bit fields, copied as they are, not one by one) */
        nd.aoff = (uint32_t)ka;
        nd.doff = 0;
        nd.dcnt = 0;
        *ln = nd;
        const uint32_t *a = mblx__args(g, v);
        uint32_t na = nd.na, *la = t->largs + ka;
        if (dense) /* (every operand is mapped, its lets too) */
            for (uint32_t i = 0; i < na; i++) la[i] = dense[a[i]];
        else
            for (uint32_t i = 0; i < na; i++) la[i] = *map_get_hashed(&c->map, a[i], 0);
        ka += na;
        if (gn->op != MBLX_OP_SYMBOL) continue;
        if ((size_t)gn->val + 1 > t->nsymreq) t->nsymreq = (size_t)gn->val + 1;
        if (t->g) continue;
        const char *nm = mblx_symbol_name(g, v);
        size_t len = strlen(nm) + 1;
        if (c->kn > UINT32_MAX - len) return -1;
        if (len > c->ncap - c->kn) {
            size_t nc = c->ncap ? c->ncap : 256;
            while (nc - c->kn < len) nc *= 2;
            void *q = mbl_realloc_array(t->names, nc, 1);
            if (!q) return -1;
            t->names = q;
            c->ncap = nc;
        }
        memcpy(t->names + c->kn, nm, len);
        ln->doff = (uint32_t)c->kn; /* symbol nodes: name offset */
        c->kn += len;
    }
    if (!t->g && !t->names && !(t->names = mbl_malloc(1))) return -1;
    if (!t->g) { /* a bound tape keeps gid for the owners (share_and_order) */
        mbl_free(c->gid);
        c->gid = NULL;
    }
    return 0;
}

/* Is operand i of graph node v read from a register (all but a power's constant exponent, as
 * reg_operands says of the local copy)? */
static inline int reads_operand(const mblx_graph *g, uint32_t v, uint32_t i)
{
    return !(i == 1 && g->nd[v].op == MBLX_OP_POW && g->nd[unlet(g, mblx__args(g, v)[1])].op == MBLX_OP_CONST);
}

/* 1. traversal: map value = local index, in pre-order from the outputs; then the private copy
 * of the sub-DAG (copy_sub_dag). With the events' room reserved (reserve_dense), it records the
 * events and marks of share_and_order's traversal of the sub-DAG as it is (fused: no NODE event
 * of a sum or product): that traversal is this one (operands in order, those seen skipped, lets
 * mapped to their nodes), so the events are those it would record, in its order, for the
 * compilations whose shared form is the sub-DAG as it is (the N = 10^4 four-bar's residual). A
 * descent's ACC event is recorded when its user resumes, the operand complete, as that traversal
 * records it. */
/* A frame of number_sub_dag's traversal: what its visits read of graph node v, read once when it
 * is pushed (a node is visited again after each operand it descends to). */
typedef struct num_frame {
    const uint32_t *args;  /* v's operands */
    uint32_t v, l, next;   /* graph node, local index, next operand */
    uint32_t na : 31;      /* v's operand count */
    uint32_t nary : 1;     /* recorded as a sum or product (events recorded, mblx__nary_local) */
} num_frame;

/* Number graph node v as the next local node (its graph node in gid, its operands and a sum's or
 * product's counted) and push it on number_sub_dag's stack; with pfd, its operands' map entries
 * and nodes fetched (a large graph's misses: compile's perf samples at N = 10^4 244 -> 195), as
 * its first visit, next, reads them. -1 when out of memory. */
static inline __attribute__((always_inline)) int number_push(compiler *c, uint32_t v, int rec, int pfd)
{
    const mblx_graph *g = c->g;
    const mblx__node *nd = &g->nd[v];
    const uint32_t *args = g->args + nd->aoff;
    uint32_t na = nd->na, l = (uint32_t)c->nl;
    int nary = mblx__nary_local(nd);
    GROWV(c->gid, c->nl, c->lcap);
    c->gid[c->nl++] = v;
    c->ka += na;
    if (nary) c->extra += na - 1, c->nnary++, c->npairs += mblx__pairs_local(nd);
    c->nstep += nd->op == MBLX_OP_STEP;
    GROWV(c->nstk, c->nsn, c->nscap);
    c->nstk[c->nsn++] = (num_frame){args, v, l, 0, na, rec && nary};
    if (pfd && na > 1)
        for (uint32_t j = 1; j < na; j++) MBLX__PREFETCH(&c->map.dense[args[j]], 0), MBLX__PREFETCH(&g->nd[args[j]], 0);
    return 0;
}

static int number_sub_dag(compiler *c, size_t n, const mblx_id *outputs)
{
    const mblx_graph *g = c->g;
    mblx_tape *t = c->t;
    const int pfd = c->map.dense && g->n >= (1u << 18); /* (number_push) */
    const int rec = c->ev != NULL;
    uint32_t *ev = c->ev;
    unsigned char *seen = c->seen;
    uint32_t *const dense = c->map.dense; /* (map_at) */
    size_t nev = 0;
    c->nstep = 0;
    for (size_t o = 0; o < n; o++) {
        uint32_t out_o = unlet(g, outputs[o]);
        if (o && !(o & 1023) && core_progress_tick((double)o)) return -1; /* a load's report */
        if (map_get(&c->map, out_o, 0)) continue;
        c->nsn = 0;
        {
            uint32_t *val = map_get(&c->map, out_o, 1);
            if (!val) return -1;
            *val = (uint32_t)c->nl;
            if (number_push(c, out_o, rec, pfd)) return -1;
        }
        while (c->nsn) {
            num_frame *f = &c->nstk[c->nsn - 1];
            uint32_t v = f->v, na = f->na, i = f->next, ch = 0;
            const uint32_t *args = f->args;
            /* the operands already numbered, in one loop; then the first new one. A let operand is
             * mapped too, to its node's local index (copy_sub_dag reads every operand's without
             * following the lets again) */
            const int nary = f->nary;
            if (nary && i > 1) ev[nev++] = f->l | EV_ACC; /* back from operand i - 1: complete */
            for (; i < na; i++) {
                uint32_t x = args[i], *cv, lx;
                if ((cv = map_at(&c->map, dense, x, 0))) {
                    lx = *cv;
                } else {
                    if ((ch = unlet(g, x)) == x || !(cv = map_at(&c->map, dense, ch, 0))) break;
                    uint32_t *xv = map_at(&c->map, dense, x, 1);
                    if (!xv) return -1;
                    *xv = lx = *cv;
                }
                if (rec) { /* seen: read (but an immediate exponent), and a sum's ACC */
                    if (nary || reads_operand(g, v, i)) seen[lx] = SEEN | READ;
                    if (nary && i) ev[nev++] = f->l | EV_ACC;
                }
            }
            if (i < na) { /* first visit: descend */
                f->next = i + 1;
                uint32_t l = (uint32_t)c->nl, *cv = map_at(&c->map, dense, ch, 1);
                if (!cv) return -1;
                *cv = l;
                if (args[i] != ch) { /* a let: mapped too */
                    uint32_t *xv = map_at(&c->map, dense, args[i], 1);
                    if (!xv) return -1;
                    *xv = l;
                }
                if (rec && (nary || reads_operand(g, v, i))) seen[l] = SEEN | READ;
                if (number_push(c, ch, rec, pfd)) return -1;
                continue;
            }
            GROWV(c->post, c->npost, c->pcap);
            c->post[c->npost++] = f->l; /* (complete: its operands numbered) */
            if (rec && !nary) ev[nev++] = f->l; /* (a sum's: none, fused) */
            c->nsn--;
        }
    }
    mbl_free(c->nstk); /* the traversal's scratch, before the copy allocates */
    c->nstk = NULL;
    c->nsn = c->nscap = 0;
    c->nev = nev, c->nstep = rec ? c->nstep : 0; /* (number_push counts the steps) */
    if (rec) { /* the tail returned (in place; a failed shrink keeps it) */
        void *q = mbl_realloc_array(ev, nev ? nev : 1, sizeof *ev);
        if (q) c->ev = q;
    }
    t->nl = c->nl;
    if (c->ka > UINT32_MAX) return -1;
    return copy_sub_dag(c);
}

/* The shared form's arrays cut to what the chains used (c->nl nodes, c->ka operands) from their
 * upper bounds (one link per operand of every sum and product, few of which are made where
 * chains share prefixes: the N = 10^4 four-bar's residual used 0.89 M of 1.26 M nodes). The tails
 * were never written; returned to the heap in place (a shrinking realloc splits the block), they
 * are room for the events' and the instructions' arrays, which otherwise extended the heap. A
 * failed shrink keeps the larger block. */
static void shrink_shared(compiler *c)
{
    mblx_tape *t = c->t;
    void *q = mbl_realloc_array(t->lnd, c->nl ? c->nl : 1, sizeof *t->lnd);
    if (q) t->lnd = q;
    q = mbl_realloc_array(t->largs, c->ka ? c->ka : 1, sizeof *t->largs);
    if (q) t->largs = q;
}

/* Tests only (tape_internal.h): the events always by share_and_order's own traversal; the
 * compilations that took the numbering's since the last call. */
static int events_traverse;
static size_t events_taken;
size_t mblx__events_mode(int traverse)
{
    size_t k = events_taken;
    events_traverse = traverse, events_taken = 0;
    return k;
}

/* 2. share the common parts of sums and products, then order the events: a depth-first
 * traversal of the local DAG from the outputs records NODE(l) when node l is complete,
 * and, for a sum or product of k >= 2 operands, ACC(l, i) as soon as operand i is
 * available, so that the partial sum is accumulated at once and operand values die early
 * (a sum of 10^5 terms then needs O(1) registers) */
static int share_and_order(compiler *c, size_t n, const mblx_id *outputs)
{
    const mblx_graph *g = c->g;
    mblx_tape *t = c->t;
    if (!(c->outl = mbl_alloc_array(n ? n : 1, sizeof *c->outl))) return -1;
    uint32_t *outl = c->outl;
    for (size_t o = 0; o < n; o++) outl[o] = *map_get(&c->map, unlet(g, outputs[o]), 0);
    /* the node map is not needed any more: freed before the next allocations can use its memory */
    mbl_free(c->map.key), mbl_free(c->map.val), mbl_free(c->map.dense);
    c->map = (u32map){NULL, NULL, 0, 0, NULL};
    /* the private copy keeps the sub-DAG as the graph has it (error messages print it); the
     * compiler works on the shared form */
    c->nl0 = c->nl;
    mbl_free(c->stack); /* the traversal's scratch, before the sharing allocates */
    c->stack = NULL;
    c->sn = c->scap = 0;
    int as_is = 0; /* the shared form is the sub-DAG as it is */
    /* a small tape of mblx_compile_few, or mblx__compile_written's: as written. The written form
     * is the sub-DAG as it is with each sum's or product's constant fused into its last operation
     * (the values of the operations in the order written, as mblx__share's form where nothing is
     * shared): its events are the numbering's (below), not a second traversal's (the mechanism
     * bicycle's outputs' and user states' tapes: 0.08 M instructions less, the same bits; as its
     * residual's tape it took the N = 10^4 four-bar's from 443 to 356 M) */
    if ((c->form == MBLX__SHARE_CHAINS && c->nl0 < FEW_SHARE_MIN) || c->form == MBLX__SHARE_NONE) {
        if (!(c->owner = mbl_alloc_array(c->nl0 ? c->nl0 : 1, sizeof *c->owner))) return -1;
        for (size_t l = 0; l < c->nl0; l++) c->owner[l] = t->g ? c->gid[l] : (uint32_t)l;
        mbl_free(c->gid);
        c->gid = NULL;
        if (c->form == MBLX__SHARE_NONE) as_is = 1, c->fuse = 1;
    } else {
        mblx__node *cl;
        uint32_t *ca;
        /* a bound tape's lnd and largs may hold the chains (copy_sub_dag) */
        size_t lres = t->g ? c->lres : 0, ares = t->g ? c->ares : 0;
        /* a bound tape: owner in graph nodes at once (gid freed) */
        const uint32_t *post = c->npost == c->nl0 ? c->post : NULL; /* (every node numbered is in it) */
        if (mblx__share(t->lnd, t->largs, c->nl0, c->ka, lres, ares, outl, n, c->form, t->g ? c->gid : NULL, post,
                        c->nnary, c->npairs, &cl, &ca, &c->nl, &c->ka, &c->owner, &c->fuse))
            return -1;
        mbl_free(c->gid), mbl_free(c->post);
        c->gid = NULL, c->post = NULL;
        if (cl && t->g) { /* a bound tape keeps no copy: the original form is not needed any more */
            if (cl != t->lnd) {
                mbl_free(t->lnd);
                mbl_free(t->largs);
            }
            t->lnd = cl;
            t->largs = ca;
        } else if (cl) {
            c->dlnd = t->lnd;
            c->dlargs = t->largs;
            t->lnd = cl;
            t->largs = ca;
        }
        /* (a bound tape's copy, reserved for the chains, is cut too where the shared form is the
         * sub-DAG as it is: the N = 10^4 four-bar's residual used 0.69 M of 1.26 M nodes; the
         * instructions then take the tail's place, not the heap's top: 2 MB less peak RSS) */
        if (cl || t->g) shrink_shared(c);
        as_is = !cl;
    }
    size_t nl = c->nl;
    if (nl >= EV_ACC) return -1; /* the events' node field */
    if (c->ev && as_is && c->fuse && !events_traverse) { /* the numbering's (number_sub_dag) */
        events_taken++;
        for (size_t o = 0; o < n; o++) c->seen[outl[o]] = SEEN | READ;
        return 0;
    }
    mbl_free(c->ev), mbl_free(c->seen);
    c->ev = NULL, c->seen = NULL;
    c->nev = 0;
    /* one event per operand after the first of a sum or product (and its NODE with a constant to
     * apply), one per other node (see EV_ACC): at most a node's operands or 1, so nl + ka bounds
     * them without a pass over the nodes (7 M instructions at N = 10^4); the unused tail is
     * returned after the traversal */
    c->evcap = nl + c->ka;
    if (!(c->ev = mbl_alloc_array(c->evcap ? c->evcap : 1, sizeof *c->ev)) || !(c->seen = mbl_calloc(nl ? nl : 1, 1)))
        return -1;
    mblx__hugepages(c->ev, c->evcap * sizeof *c->ev);
    unsigned char *seen = c->seen;
    uint32_t *ev = c->ev;
    size_t nev = 0, nstep = 0;
    for (size_t o = 0; o < n; o++) {
        if (seen[outl[o]]) continue;
        seen[outl[o]] = SEEN;
        GROWV(c->stack, c->sn, c->scap);
        c->stack[c->sn++] = (dfs_frame){outl[o], outl[o], 0};
        while (c->sn) {
            dfs_frame *f = &c->stack[c->sn - 1];
            const mblx__node *nd = &t->lnd[f->l];
            const uint32_t *a = t->largs + nd->aoff;
            uint32_t i = f->next, na = nd->na, l = f->l;
            /* the operands already seen, in one loop (their ACC events, each reading its operand,
             * and operand 0 at the first: each marked read as it is passed); then the first new
             * one */
            int nary = mblx__nary_local(nd);
            if (nary) {
                for (; i < na && seen[a[i]]; i++) {
                    seen[a[i]] = SEEN | READ;
                    if (i) ev[nev++] = l | EV_ACC;
                }
            } else {
                while (i < na && seen[a[i]]) i++;
            }
            if (i < na) { /* first visit: descend (the operand's ACC event when it is complete) */
                uint32_t ch = a[i];
                f->next = i;
                seen[ch] = SEEN;
                GROWV(c->stack, c->sn, c->scap);
                c->stack[c->sn++] = (dfs_frame){ch, ch, 0};
                continue;
            }
            if (!nary) { /* its NODE event: reads its operands (but an immediate exponent) */
                for (uint32_t k = 0, nr = reg_operands(t->lnd, nd, a); k < nr; k++)
                    seen[a[k]] = SEEN | READ; /* (seen: complete) */
                ev[nev++] = l;
                nstep += nd->op == MBLX_OP_STEP;
            } else if (applies_const(nd) && !c->fuse) {
                ev[nev++] = l; /* its constant applied (fuse: with its last operand) */
            }
            c->sn--;
        }
    }
    c->nev = nev;
    void *q = mbl_realloc_array(ev, nev ? nev : 1, sizeof *ev); /* (in place; a failed shrink keeps it) */
    if (q) c->ev = q;
    for (size_t o = 0; o < n; o++) seen[outl[o]] = SEEN | READ;
    c->nstep = nstep;
    return 0;
}

/* 3. the tape's arrays, the instructions' at one per event (each emits one, but the NODE event of a
 * constant only read as an immediate: a few entries more than used; an upper bound of one per node
 * and operand of a sum or product was 2.4 times too large on the four-bars, and the unused part
 * of the heap block became pages later allocations touched) */
static int tape_arrays(compiler *c, size_t n)
{
    mblx_tape *t = c->t;
    size_t nl = c->nl, nins = c->nev;
    c->reg = mbl_alloc_array(nl ? nl : 1, sizeof *c->reg);
    t->outreg = mbl_alloc_array(n ? n : 1, sizeof *t->outreg);
    if (!c->reg || !t->outreg) return -1;
    mblx__hugepages(c->reg, nl * sizeof *c->reg); /* (not filled: only emitted values are read) */
    if (nl >= TICK_MIN_NODES && core_progress_tick((double)nl)) return -1; /* a load's report */
    /* the smaller array first: it may fit a hole the larger would not */
    t->ins_node = mbl_alloc_array(nins ? nins : 1, sizeof *t->ins_node);
    t->ins = mbl_alloc_array(nins ? nins : 1, sizeof *t->ins);
    if (!t->ins || !t->ins_node || mblx__cpool_init(&c->cp)) return -1;
    mblx__hugepages(t->ins, nins * sizeof *t->ins);
    mblx__hugepages(t->ins_node, nins * sizeof *t->ins_node);
    size_t next = 5 * c->nstep; /* the registers the steps read from ext, and the routines' inputs: */
    for (size_t p = 0; c->g->nuser && p < c->nev; p++) /* (their NODE events; a graph without routines: none) */
        if (!(c->ev[p] & EV_ACC) && t->lnd[c->ev[p]].op == MBLX_OP_USER) next += t->lnd[c->ev[p]].na;
    if (next && !(t->ext = mbl_alloc_array(next, sizeof *t->ext))) return -1;
    return 0;
}

/* 4. emit: the instructions in event order, in SSA form: an operand read from a register is the
 * index of the instruction that computed it (reg[l]: the instruction of node l's value, the last
 * of a sum's or product's chain so far), and so are the outputs (outreg) and a step's operands
 * (ext). The scheduler (tape_schedule.c) reorders them and allocates the registers; the tape it
 * makes depends on the instructions' order and operands only, so registers allocated here would
 * be dropped there. s not NULL: the instructions go to the scheduler a window at a time (noted as
 * they are emitted, each window sorted into the tape when full: the tape is never written in SSA
 * order, nor read again for its levels); NULL: into the tape in SSA order. -1 when out of memory. */
static int emit_instructions(compiler *c, mblx__sched *s)
{
    mblx_tape *t = c->t;
    const uint32_t *ev = c->ev;
    const unsigned char *seen = c->seen;
    uint32_t *reg = c->reg, *owner = c->owner;
    uint32_t *ins_node = s ? s->wnode : t->ins_node;
    const uint32_t *largs = t->largs;
    mblx__node *lnd = t->lnd;
    tins *ins = s ? s->wins : t->ins; /* instruction ni at ni - w0 */
    size_t ni = 0, kext = 0, nev = c->nev, w0 = 0;
    const size_t wend = s ? SCHED_WINDOW : SIZE_MAX;
    const int fuse = c->fuse;
    mblx__cpool *cp = &c->cp;
/* nr_: the registers it reads, a_ and b_ (2), a_ (1), none (0), a step's five or a routine's b_ at
 * ext[a_] (5), or as its opcode says (-1) */
#define EMIT(nr_, op_, a_, b_, c_)                                                        \
    do {                                                                                  \
        tins *q_ = &ins[ni - w0];                                                         \
        uint32_t ci_ = 0;                                                                 \
        if (TI_CONST_OPS >> (op_) & 1 && (ci_ = mblx__cpool_put(cp, (c_))) == UINT32_MAX) \
            return -1; /* its constant in the pool */                                     \
        q_->op = (op_);                                                                   \
        q_->ci = ci_;                                                                     \
        q_->dst = (uint32_t)ni;                                                           \
        q_->a = (a_);                                                                     \
        q_->b = (b_);                                                                     \
        ins_node[ni - w0] = owner[l];                                                     \
        if (s && (nr_) < 0) {                                                             \
            mblx__sched_note(s, w0, ni, q_);                                              \
        } else if (s) {                                                                   \
            uint32_t L_ = 0;                                                              \
            if ((nr_) == 1 || (nr_) == 2) L_ = mblx__sched_read(s, w0, q_->a, L_);        \
            if ((nr_) == 2) L_ = mblx__sched_read(s, w0, q_->b, L_);                      \
            for (uint32_t k_ = 0, ne_ = (nr_) == 5 ? mblx__ext_count(q_) : 0; k_ < ne_; k_++) \
                L_ = mblx__sched_read(s, w0, t->ext[q_->a + k_], L_);                     \
            mblx__sched_put(s, ni, L_, q_->op);                                           \
        }                                                                                 \
        reg[l] = (uint32_t)ni++;                                                          \
        if (ni - w0 == wend) {                                                            \
            if (mblx__sched_window(s, w0, ni)) return -1;                                 \
            w0 = ni;                                                                      \
        }                                                                                 \
    } while (0)
    for (size_t p = 0; p < nev; p++) {
        uint32_t l = ev[p] & ~EV_ACC;
        const uint32_t *a = largs + lnd[l].aoff;
        uint32_t na = lnd[l].na;
        unsigned op = lnd[l].op;
        double val = lnd[l].val;
        int add = op == MBLX_OP_ADD;
        if (ev[p] & EV_ACC) {
            uint32_t i = ++lnd[l].dcnt; /* (0 in the compile arrays) */
            if (i == 1) {
                if (na == 2 && val != (add ? 0.0 : 1.0)) /* the node's constant, fused */
                    EMIT(2, add ? TI_ADD2C : TI_MUL2C, reg[a[0]], reg[a[1]], val);
                else
                    EMIT(2, add ? TI_ADD : TI_MUL, reg[a[0]], reg[a[1]], 0.0);
            } else if (fuse && i == na - 1 && val != (add ? 0.0 : 1.0)) { /* as the chains' last link */
                EMIT(2, add ? TI_ADD2C : TI_MUL2C, reg[l], reg[a[i]], val);
            } else {
                EMIT(2, add ? TI_ADD : TI_MUL, reg[l], reg[a[i]], 0.0);
            }
            continue;
        }
        if (!(seen[l] & READ)) continue; /* only used as an immediate */
        if ((op == MBLX_OP_ADD || op == MBLX_OP_MUL) && na >= 2) {
            if (na > 2 && val != (add ? 0.0 : 1.0)) EMIT(1, add ? TI_ADDC : TI_MULC, reg[l], 0, val);
            continue;
        }
        switch (op) {
        case MBLX_OP_CONST: EMIT(0, TI_LDC, 0, 0, val); break;
        case MBLX_OP_SYMBOL: EMIT(0, TI_LDS, (uint32_t)val, 0, 0.0); break;
        case MBLX_OP_ADD: EMIT(1, TI_ADDC, reg[a[0]], 0, val); break;
        case MBLX_OP_MUL: EMIT(1, TI_MULC, reg[a[0]], 0, val); break;
        case MBLX_OP_POW:
            if (lnd[a[1]].op == MBLX_OP_CONST) {
                double e = lnd[a[1]].val;
                unsigned pop = e == 2.0 ? TI_SQR : e == 3.0 ? TI_CUBE : e == -1.0 ? TI_RECIP : e == -2.0 ? TI_RSQR
                               : e == 0.5 ? TI_SQRTP : TI_POWC;
                EMIT(1, pop, reg[a[0]], 0, e);
            } else {
                EMIT(2, TI_POW, reg[a[0]], reg[a[1]], 0.0);
            }
            break;
        case MBLX_OP_STEP:
            for (int i = 0; i < 5; i++) t->ext[kext + (size_t)i] = reg[a[i]]; /* (before EMIT sets reg[l]) */
            EMIT(5, TI_STEP, (uint32_t)kext, 0, 0.0);
            kext += 5;
            break;
        case MBLX_OP_USER: /* the routine's nin inputs at ext[kext ..] */
            for (uint32_t i = 0; i < na; i++) t->ext[kext + i] = reg[a[i]];
            EMIT(5, TI_USER, (uint32_t)kext, na, val);
            kext += na;
            break;
        case MBLX_OP_DATA: EMIT(2, TI_DATA, reg[a[0]], reg[a[na > 1 ? 1 : 0]], val); break;
        default: {
            static const unsigned map1[MBLX_OP_COUNT_] = {
                [MBLX_OP_SIN] = TI_SIN,   [MBLX_OP_COS] = TI_COS,   [MBLX_OP_TAN] = TI_TAN,
                [MBLX_OP_ASIN] = TI_ASIN, [MBLX_OP_ACOS] = TI_ACOS, [MBLX_OP_ATAN] = TI_ATAN,
                [MBLX_OP_ATAN2] = TI_ATAN2, [MBLX_OP_SINH] = TI_SINH, [MBLX_OP_COSH] = TI_COSH,
                [MBLX_OP_TANH] = TI_TANH, [MBLX_OP_EXP] = TI_EXP,   [MBLX_OP_LOG] = TI_LOG,
                [MBLX_OP_SQRT] = TI_SQRT, [MBLX_OP_ABS] = TI_ABS,   [MBLX_OP_SIGN] = TI_SIGN,
                [MBLX_OP_MIN] = TI_MIN,   [MBLX_OP_MAX] = TI_MAX,
            };
            EMIT(-1, map1[op], reg[a[0]], na > 1 ? reg[a[1]] : 0, 0.0);
            break;
        }
        }
    }
#undef EMIT
    if (s && ni > w0 && mblx__sched_window(s, w0, ni)) return -1; /* the last window */
    t->cst = mblx__cpool_take(cp, &t->ncst);
    t->nins = ni; /* (c->nev, less the constants only read as immediates) */
    t->nreg = 0;  /* (the scheduler's) */
    return 0;
}

/* The outputs' registers; the private copy, which the tape keeps as the graph has it (the
 * instructions' nodes, written by the emission, are its nodes; a bound tape: the graph's, and no
 * copy). */
static void finish_tape(compiler *c, size_t n)
{
    mblx_tape *t = c->t;
    for (size_t o = 0; o < n; o++) t->outreg[o] = c->reg[c->outl[o]];
    if (t->g) {
        mbl_free(t->lnd);
        mbl_free(t->largs);
        t->lnd = NULL;
        t->largs = NULL;
        t->nl = 0;
        return;
    }
    if (c->dlnd) {
        mbl_free(t->lnd);
        mbl_free(t->largs);
        t->lnd = c->dlnd;
        t->largs = c->dlargs;
        c->dlnd = NULL;
        c->dlargs = NULL;
    }
    t->nl = c->nl0;
}
#undef GROWV


/* The runs of t's instructions as emitted (SSA form: instruction i writes register i). -1 when out
 * of memory. */
static int ssa_runs(mblx_tape *t)
{
    size_t n = t->nins, nrun = 0;
    for (size_t i = 0; i < n; i++) nrun += !i || t->ins[i].op != t->ins[i - 1].op;
    t->run_start = mbl_alloc_array(nrun + 1, sizeof *t->run_start);
    t->run_op = mbl_alloc_array(nrun ? nrun : 1, sizeof *t->run_op);
    if (!t->run_start || !t->run_op) return -1;
    nrun = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || t->ins[i].op != t->ins[i - 1].op) {
            t->run_start[nrun] = (uint32_t)i;
            t->run_op[nrun++] = (uint8_t)t->ins[i].op;
        }
    t->run_start[nrun] = (uint32_t)n;
    t->nrun = nrun;
    t->nreg = n;
    return 0;
}

/* Tests only (tape_internal.h): the tapes of mblx_compile and mblx_compile_bound emitted in SSA order
 * and scheduled after (mblx__schedule_runs), not fed to the scheduler as they are emitted. */
static int sched_after;
void mblx__schedule_after_mode(int on) { sched_after = on; }

/* mblx_compile (bound 0) and mblx_compile_bound (bound 1: the tape refers to g, lock/ctx). */
static mblx_tape *compile(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                          void (*lock)(void *ctx, int on), void *ctx, int form, mbl_status *st)
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
    compiler c = {.g = g, .map = {NULL, NULL, 0, 0, NULL}, .form = form};
    mblx__sched s = {0};
    int cancel = 0;
    mblx_tape *t = c.t = mbl_calloc(1, sizeof *t);
    if (!t) goto oom;
    t->nout = n;
    if (g->ndata) { /* the data sets, so that the tape stays independent of the graph */
        if (!(t->data = mblx__data_copy_all(g->data, g->ndata))) goto oom;
        t->ndata = g->ndata;
    }
    if (bound) {
        t->g = g;
        t->lock = lock;
        t->lock_ctx = ctx;
    }
    /* a load's progress report between the steps (core/progress.h; a small sub-DAG: none) */
    int ticks = n >= TICK_MIN_NODES;
#define TICK_OR(x) ((cancel = ticks && core_progress_tick((double)n)) || (x))
    if (TICK_OR(reserve_dense(&c, n, outputs)) || TICK_OR(number_sub_dag(&c, n, outputs))) goto oom;
    ticks = ticks || c.nl >= TICK_MIN_NODES;
    if (TICK_OR(share_and_order(&c, n, outputs)) || TICK_OR(tape_arrays(&c, n))) goto oom;
    /* mblx_compile_few's tapes are emitted in SSA order (most are not scheduled); the others
     * scheduled as they are emitted */
    int fed = form != MBLX__SHARE_CHAINS && !sched_after && c.nev;
    if ((fed && mblx__sched_begin(&s, t, c.nev)) || emit_instructions(&c, fed ? &s : NULL)) goto oom;
    if (TICK_OR(0)) goto oom;
    finish_tape(&c, n);
    compiler_free(&c);
    if (TICK_OR(fed                                      ? mblx__sched_finish(&s)
                : form == MBLX__SHARE_CHAINS && t->nins < FEW_SCHED_MIN ? ssa_runs(t)
                                                      : mblx__schedule_runs(t))) {
        mblx__sched_free(&s); /* (when not finished) */
        mblx_tape_free(t);
        if (cancel) mbl_error(st, MBL_ECANCELLED, "cancelled");
        else mbl_error(st, MBL_ENOMEM, "out of memory while compiling expressions");
        return NULL;
    }
    if (g->nuser && mblx__tape_user_setup(t, g)) {
        mblx_tape_free(t);
        mbl_error(st, MBL_ENOMEM, "out of memory while compiling expressions");
        return NULL;
    }
    mbl_status_clear(st);
    return t;
oom:
    compiler_free(&c);
    mblx__sched_free(&s);
    mblx_tape_free(t);
    if (cancel || core_progress_stopped()) mbl_error(st, MBL_ECANCELLED, "cancelled");
    else mbl_error(st, MBL_ENOMEM, "out of memory while compiling expressions");
    return NULL;
#undef TICK_OR
}

mblx_tape *mblx_compile(const mblx_graph *g, size_t n, const mblx_id *outputs, mbl_status *st)
{
    return compile(g, n, outputs, 0, NULL, NULL, MBLX__SHARE_ALL, st);
}

mblx_tape *mblx_compile_bound(const mblx_graph *g, size_t n, const mblx_id *outputs,
                              void (*lock)(void *ctx, int on), void *ctx, mbl_status *st)
{
    return compile(g, n, outputs, 1, lock, ctx, MBLX__SHARE_ALL, st);
}

mblx_tape *mblx_compile_few(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                            void (*lock)(void *ctx, int on), void *ctx, mbl_status *st)
{
    return compile(g, n, outputs, bound != 0, bound ? lock : NULL, bound ? ctx : NULL, MBLX__SHARE_CHAINS, st);
}

mblx_tape *mblx__compile_written(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                                 void (*lock)(void *ctx, int on), void *ctx, mbl_status *st)
{
    return compile(g, n, outputs, bound != 0, bound ? lock : NULL, bound ? ctx : NULL, MBLX__SHARE_NONE, st);
}
