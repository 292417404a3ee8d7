/* Compilation of expression sets into flat register tapes (the traversal of the sub-DAG, the
 * last uses and the emission of instructions), and the tapes' lifetime. */
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"

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


/* The node a let stands for (let(x) compiles as x: no instruction). */
static uint32_t unlet(const mblx_graph *g, uint32_t v)
{
    if (!g->nlet) return v; /* no let in the graph: no lookup */
    while (g->nd[v].op == MBLX_OP_LET) v = mblx__args(g, v)[0];
    return v;
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
        if (mblx__share(t->lnd, t->largs, nl0, ka, outl, n, &cl, &ca, &nl, &ka, &owner)) goto oom;
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
                if (mblx__nary_local(nd)) ev[nev++] = (event){f->l, f->next};
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
    if (mblx__schedule_runs(t)) {
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
