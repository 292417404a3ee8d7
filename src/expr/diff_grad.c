/* Reverse mode: the gradient of one expression by a sweep over its relevant sub-DAG (mblx_gradient,
 * mblx__gradient_terms, mblx__rate_gradient_terms). */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "expr/diff_memo.h"
#include "expr/diff_sweep.h"
#include "expr/gradient_terms.h"

#define LESS_SEED(x, y) ((x)->sym < (y)->sym)
MBLX__STABLE_SORT(sort_seeds, seed, LESS_SEED)

/* ---- reverse mode ---------------------------------------------------------------------------- */

typedef struct contrib {
    mblx_id node;
    uint32_t next;
} contrib;

/* The adjoints of the relevant sub-DAG by local index: each node's list of contributions
 * (head, linked through cp), the adjoint once summed (adj), and scratch for the sums (tmp). */
typedef struct adjoints {
    u32vec head, adj;
    contrib *cp;
    size_t ncp, capcp;
    mblx_id *tmp;
    size_t tmpcap;
    mblx__pmemo *pm; /* the products' memo (NULL: none, out of memory; diff_memo.h) */
    mblx__smemo *sm; /* the sums' memo (likewise) */
    mblx__nmemo *nm; /* the negations' memo (likewise) */
    int neg_sym;     /* the contributions to symbols negated (mblx__gradient_terms) */
    const uint32_t *amap; /* their time derivatives in their place, the map's (mblx__rate_gradient_terms) */
    size_t nmap;
} adjoints;

/* An oom (out of memory, to record) or a failure (the graph's error already set). */
enum { GRAD_OOM = 1, GRAD_FAIL = 2 };

/* seed set of the distinct symbols; 0, or -1 with the graph's error set */
static int gradient_seeds(mblx_graph *g, size_t n, const mblx_id *syms, seedset *S)
{
    mblx_id *u = mbl_alloc_array(n ? n : 1, sizeof *u);
    if (!u) {
        mblx__oom(g);
        return -1;
    }
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mblx__valid(g, syms[i]) || g->nd[syms[i]].op != MBLX_OP_SYMBOL) {
            mbl_free(u);
            mblx__fail(g, MBL_EARG, "mblx_gradient: argument %zu is not a symbol", i);
            return -1;
        }
        u[nu++] = syms[i];
    }
    /* drop duplicates: sort by symbol index */
    S->s = mbl_alloc_array(nu ? nu : 1, sizeof *S->s);
    if (!S->s) {
        mbl_free(u);
        mblx__oom(g);
        return -1;
    }
    for (size_t i = 0; i < nu; i++) {
        S->s[i].sym = (uint32_t)g->nd[u[i]].val;
        S->s[i].node = u[i];
    }
    mbl_free(u);
    if (sort_seeds(S->s, nu, NULL)) {
        mblx__oom(g);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < nu; i++)
        if (m == 0 || S->s[m - 1].sym != S->s[i].sym) S->s[m++] = S->s[i];
    S->n = m;
    mblx__seeds_index(g, S);
    return 0;
}

/* The depth-first walk of relevant_postorder over what the stack holds above base: each node's
 * relevant operands not yet stamped pushed, a node put into ord (memo = its local index) once they
 * are done. 0, or -1 when out of memory. */
static inline __attribute__((always_inline)) int postorder_run(mblx_graph *g, const seedset *S, u32vec *ord, u32vec *st,
                                                               size_t base)
{
    uint32_t epoch = g->epoch;
    while (st->n > base) {
        mblx_id v = st->p[st->n - 1];
        if (g->stamp[v] == epoch) {
            if (g->memo[v] == XPENDING) {
                g->memo[v] = (uint32_t)ord->n;
                if (u32_push(ord, v)) return -1;
            }
            st->n--;
            continue;
        }
        g->stamp[v] = epoch;
        g->memo[v] = XPENDING;
        for (uint32_t i = 0; i < g->nd[v].na; i++) {
            mblx_id c = mblx__args(g, v)[i];
            if (g->stamp[c] != epoch && relevant(g, c, S) && u32_push(st, c)) return -1;
        }
    }
    return 0;
}

/* post-order of the relevant sub-DAG (topological) into ord; memo = local index. A new epoch
 * stamps its nodes. 0, or -1 when out of memory. */
static int relevant_postorder(mblx_graph *g, mblx_id e, const seedset *S, u32vec *ord, u32vec *st)
{
    if (mblx__new_epoch(g)) return -1;
    return u32_push(st, e) || postorder_run(g, S, ord, st, 0) ? -1 : 0;
}

/* Contribution node to the adjoint of local node lc; -1 when out of memory. */
static __attribute__((noinline)) int contrib_grow(adjoints *A)
{
    size_t nc = A->capcp ? A->capcp * 2 : INIT_STACK;
    contrib *q = mbl_realloc_array(A->cp, nc, sizeof *q);
    if (!q) return -1;
    A->cp = q;
    A->capcp = nc;
    return 0;
}

static inline __attribute__((always_inline)) int add_contrib(adjoints *A, uint32_t lc, mblx_id node)
{
    if (A->ncp == A->capcp && contrib_grow(A)) return -1;
    A->cp[A->ncp].node = node;
    A->cp[A->ncp].next = A->head.p[lc];
    A->head.p[lc] = (uint32_t)A->ncp++;
    return 0;
}

static __attribute__((noinline)) int tmp_grow(adjoints *A)
{
    size_t nc = A->tmpcap ? A->tmpcap * 2 : 16;
    mblx_id *q = mbl_realloc_array(A->tmp, nc, sizeof *q);
    if (!q) return -1;
    A->tmp = q;
    A->tmpcap = nc;
    return 0;
}

/* The adjoint of local node k: the sum of its contributions, into *pa and adj.p[k] (where kept:
 * mblx_gradient reads its symbols' there; the callers of their terms read none). */
static int sum_adjoint(mblx_graph *g, adjoints *A, size_t k, mblx_id *pa)
{
    uint32_t c = A->head.p[k];
    mblx_id a;
    if (c != XNONE && A->cp[c].next == XNONE) { /* one contribution (most nodes): the adjoint itself */
        a = A->cp[c].node;
    } else { /* the list walked once, into tmp (grown as it fills) */
        size_t cnt = 0;
        for (; c != XNONE; c = A->cp[c].next) {
            if (cnt == A->tmpcap && tmp_grow(A)) return GRAD_OOM;
            A->tmp[cnt++] = A->cp[c].node;
        }
        a = cnt >= 2 && cnt <= MBLX__SMEMO_TERMS && A->sm ? mblx__sum_kept(g, A->sm, cnt, A->tmp) : mblx_sum(g, cnt, A->tmp);
    }
    if (a == XNONE) return GRAD_FAIL;
    if (A->adj.p) A->adj.p[k] = a;
    *pa = a;
    return 0;
}

/* mblx_neg(g, a) through the memo A->nm (where there is one) */
static mblx_id neg_kept(mblx_graph *g, adjoints *A, mblx_id a)
{
    mblx__nmemo *e = A->nm ? &A->nm[mblx__mix64(a) & (MBLX__NMEMO_SLOTS - 1)] : NULL;
    if (e && e->res && e->a == a) return e->res - 1;
    mblx_id r = mblx_neg(g, a);
    if (e && r != XNONE) e->a = a, e->res = r + 1;
    return r;
}

/* A sum's contribution a to its operand c where c is relevant (stamped with epoch): -a (*na, made
 * once per sum, and kept for the sweep: neg_kept) to a symbol where A->neg_sym, none to a symbol
 * where A->amap. */
static inline __attribute__((always_inline)) int sum_operand(mblx_graph *g, adjoints *A, mblx_id c, mblx_id a, mblx_id *na,
                                                             uint32_t epoch)
{
    mblx_id t = a;
    if (g->stamp[c] != epoch || (A->amap && g->nd[c].op == MBLX_OP_SYMBOL)) return 0; /* a: constant */
    if (A->neg_sym && g->nd[c].op == MBLX_OP_SYMBOL && (t = *na != XNONE ? *na : (*na = neg_kept(g, A, a))) == XNONE)
        return GRAD_FAIL;
    return add_contrib(A, g->memo[c], t) ? GRAD_OOM : 0;
}

/* The contributions of node v (adjoint a) to its relevant operands (stamped with epoch); with
 * A->neg_sym, those to a symbol negated: a product's and a partial's made with their coefficient
 * negated (the builders' node for -c x: a coefficient's sign is exact), a sum's and a let's by
 * mblx_neg. */
static int propagate(mblx_graph *g, adjoints *A, mblx_id v, mblx_id a, uint32_t epoch)
{
    if (g->nd[v].op == MBLX_OP_ADD) { /* a to each relevant operand: no node made, none copied */
        if (a == g->zero) return 0;
        mblx_id na = XNONE; /* -a, made when a symbol asks */
        for (uint32_t i = 0; i < g->nd[v].na; i++) {
            int r = sum_operand(g, A, mblx__args(g, v)[i], a, &na, epoch);
            if (r) return r;
        }
        return 0;
    }
    argcopy ac;
    if (args_copy(g, v, &ac)) return GRAD_OOM;
    unsigned op = g->nd[v].op;
    for (size_t i = 0; i < ac.n; i++) {
        mblx_id c = ac.a[i];
        if (g->stamp[c] != epoch) continue; /* not relevant */
        mblx_id t;
        int neg = A->neg_sym && g->nd[c].op == MBLX_OP_SYMBOL;
        double coef = neg ? -g->nd[v].val : g->nd[v].val;
        if (A->amap && g->nd[c].op == MBLX_OP_SYMBOL)
            t = mblx__rate_contrib(g, A->amap, A->nmap, v, ac.a, ac.n, i, coef, a, A->pm);
        else if (op == MBLX_OP_ADD)
            t = a;
        else if (op == MBLX_OP_MUL)
            t = ac.n == 2 && A->pm ? mblx__mul_other_kept(g, A->pm, coef, ac.a, i, a) : mul_others(g, coef, &ac, i, a);
        else if (op == MBLX_OP_LET)
            t = mblx_let(g, a); /* the adjoint of a let is shared too */
        else {
            double pc;
            mblx_id p = mblx__partial_parts(g, v, ac.a, i, &pc);
            t = mblx__scaled_product(g, neg ? -pc : pc, p, a, 1); /* mblx_mul(g, a, partial(...)) */
        }
        if (neg && op == MBLX_OP_LET) t = mblx_neg(g, t);
        if (t == XNONE) {
            args_free(&ac);
            return GRAD_FAIL;
        }
        if (t == g->zero) continue;
        if (add_contrib(A, g->memo[c], t)) {
            args_free(&ac);
            return GRAD_OOM;
        }
    }
    args_free(&ac);
    return 0;
}

/* ---- e - sum_j lambda_j Phi_j without the sum (mblx__lagrangian_terms) ---------------------------
 * The sweep of that root goes through nodes no result keeps: P_j = lambda_j Phi_j, their sum, its
 * negation and the root. Where their form is known from the parts (below), the sweep takes them as
 * virtual entries of its order (VIRT | i: P_j at i = j, the P_j in the sum's operand order, the sum
 * at m, its negation at m + 1, the root at m + 2) and gives each its contributions as propagate
 * would, so the order and every node made are the same. */
#define VIRT 0x80000000u

typedef struct lagr {
    size_t m;
    mblx_id *pair; /* P_j's operands (2 m), in the product's order */
    uint8_t *ph;   /* the one of them that is Phi_j */
    uint32_t *at;  /* local index of each virtual entry (m + 3; XNONE: not relevant) */
} lagr;

static int virt_put(u32vec *ord, lagr *L, uint32_t i)
{
    L->at[i] = (uint32_t)ord->n;
    return u32_push(ord, VIRT | i);
}

/* relevant_postorder of the root: e pushed, the negated sum on top; the sum's operands P_j from the
 * last, each after its Phi_j's walk; then e's. (Where e is narrow, the root's operands are e's, not
 * e: the same walk but for e's own entry, and e's adjoint is the root's, 1, given to its operands in
 * the same order before any other contribution.) */
static int lagr_postorder(mblx_graph *g, mblx_id e, const seedset *S, lagr *L, u32vec *ord, u32vec *st)
{
    if (mblx__new_epoch(g)) return -1;
    uint32_t epoch = g->epoch;
    size_t m = L->m;
    if (relevant(g, e, S) && u32_push(st, e)) return -1;
    int any = 0;
    for (size_t i = 0; i < m + 3; i++) L->at[i] = XNONE;
    for (size_t j = m; j-- > 0;) {
        mblx_id phi = L->pair[2 * j + L->ph[j]];
        if (!relevant(g, phi, S)) continue;
        if (g->stamp[phi] != epoch && (u32_push(st, phi) || postorder_run(g, S, ord, st, st->n - 1))) return -1;
        if (virt_put(ord, L, (uint32_t)j)) return -1;
        any = 1;
    }
    if (any && (virt_put(ord, L, (uint32_t)m) || virt_put(ord, L, (uint32_t)m + 1))) return -1;
    return postorder_run(g, S, ord, st, 0) || virt_put(ord, L, (uint32_t)m + 2) ? -1 : 0;
}

/* propagate's contributions of virtual entry i (adjoint a): P_j's to Phi_j (a product's, coefficient
 * 1), the sum's to each P_j, the negation's (coefficient -1) to the sum, the root's to e and the
 * negated sum. */
static int lagr_propagate(mblx_graph *g, adjoints *A, const lagr *L, mblx_id e, uint32_t i, mblx_id a,
                          uint32_t epoch)
{
    size_t m = L->m;
    if (i == m) {
        for (size_t j = 0; j < m; j++)
            if (L->at[j] != XNONE && add_contrib(A, L->at[j], a)) return GRAD_OOM;
        return 0;
    }
    if (i == m + 2) {
        mblx_id na = XNONE;
        int r = sum_operand(g, A, e, a, &na, epoch);
        return r ? r : L->at[m + 1] != XNONE && add_contrib(A, L->at[m + 1], a) ? GRAD_OOM : 0;
    }
    argcopy ac = {{0}, NULL, 1};
    ac.a = ac.local;
    size_t skip = 0;
    if (i < m) ac.n = 2, ac.a[0] = L->pair[2 * i], ac.a[1] = L->pair[2 * i + 1], skip = L->ph[i];
    double coef = i < m ? 1.0 : -1.0;
    mblx_id t = ac.n == 2 && A->pm ? mblx__mul_other_kept(g, A->pm, coef, ac.a, skip, a)
                                   : mul_others(g, coef, &ac, skip, a);
    if (t == XNONE) return GRAD_FAIL;
    if (t == g->zero) return 0;
    return add_contrib(A, i < m ? g->memo[ac.a[skip]] : L->at[m], t) ? GRAD_OOM : 0;
}

/* The symbols' adjoints left as their contributions, negated (mblx__gradient_terms): ptr (n + 1,
 * the caller's) and the terms t (allocated here). */
typedef struct grad_terms {
    size_t *ptr;
    mblx_id *t;
    const uint32_t *amap; /* mblx__rate_gradient_terms' map (NULL: negated) */
    size_t nmap;
    lagr *L; /* mblx__lagrangian_terms' (NULL: none) */
} grad_terms;

/* The contributions to each symbol's adjoint (syms[i]: P->t[P->ptr[i] .. P->ptr[i + 1])), in the
 * order sum_adjoint sums them; -1 out of memory. */
static int symbol_terms(const mblx_graph *g, const adjoints *A, size_t n, const mblx_id *syms, uint32_t epoch,
                        grad_terms *P)
{
    for (int pass = 0; pass < 2; pass++) { /* counted, then copied */
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++) {
            P->ptr[i] = cnt;
            if (g->stamp[syms[i]] != epoch) continue;
            for (uint32_t c = A->head.p[g->memo[syms[i]]]; c != XNONE; c = A->cp[c].next, cnt++)
                if (pass) P->t[cnt] = A->cp[c].node;
        }
        P->ptr[n] = cnt;
        if (!pass && !(P->t = mbl_alloc_array(cnt ? cnt : 1, sizeof *P->t))) return -1;
    }
    return 0;
}

/* mblx_gradient into out, or (P not NULL, out unused) its symbols' adjoints as their contributions,
 * negated */
static int gradient_sweep(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, mblx_id *out, grad_terms *P)
{
    if (!g) return MBL_EARG;
    if (n && (!syms || (!out && !P))) {
        mblx__fail(g, MBL_EARG, "mblx_gradient: NULL arrays");
        return MBL_EARG;
    }
    for (size_t i = 0; i < n && out; i++) out[i] = XNONE;
    if (!mblx__valid(g, e)) {
        if (!g->err) mblx__fail(g, MBL_EARG, "mblx_gradient: invalid expression");
        return g->err;
    }
    seedset S = {NULL, 0, NULL, NULL, 0, 0};
    u32vec ord = {NULL, 0, 0, 0}, st = {NULL, 0, 0, 0};
    adjoints A = {{NULL, 0, 0, 0}, {NULL, 0, 0, 0}, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, P && !P->amap,
                  P ? P->amap : NULL, P ? P->nmap : 0};
    int rc = 0;
    if (gradient_seeds(g, n, syms, &S)) goto fail;
    if (!(P && P->L) && !relevant(g, e, &S)) {
        for (size_t i = 0; i < n && out; i++) out[i] = g->zero;
        for (size_t i = 0; i <= n && P; i++) P->ptr[i] = 0;
        if (P && !(P->t = mbl_alloc_array(1, sizeof *P->t))) goto oom;
        goto done;
    }
    if (P && P->L ? lagr_postorder(g, e, &S, P->L, &ord, &st) : relevant_postorder(g, e, &S, &ord, &st)) goto oom;
    uint32_t epoch = g->epoch;
    if (P && P->amap && !mblx__rate_nodes(g, ord.p, ord.n, epoch, P->amap, P->nmap) && (rc = -1)) goto done;
    size_t nl = ord.n;
    A.head.p = mbl_alloc_array(nl, sizeof *A.head.p);
    A.adj.p = out ? mbl_alloc_array(nl, sizeof *A.adj.p) : NULL; /* each written before it is read */
    if (!A.head.p || (out && !A.adj.p)) goto oom;
    if (nl >= MBLX__PMEMO_SLOTS / 4) { /* a small sweep: without */
        A.pm = mbl_calloc(MBLX__PMEMO_SLOTS, sizeof *A.pm);
        A.sm = mbl_calloc(MBLX__SMEMO_SLOTS, sizeof *A.sm);
        if (A.neg_sym) A.nm = mbl_calloc(MBLX__NMEMO_SLOTS, sizeof *A.nm);
    }
    _Static_assert(XNONE == 0xffffffffu, "XNONE is all bits set");
    memset(A.head.p, 0xff, nl * sizeof *A.head.p); /* no contribution yet: XNONE each */
    mblx_id seed = P && g->nd[e].op == MBLX_OP_SYMBOL ? g->minus_one : g->one; /* a symbol's negated (P) */
    if (add_contrib(&A, (uint32_t)(nl - 1), seed)) goto oom;
    for (size_t k = nl; k-- > 0;) {
        mblx_id v = ord.p[k], a;
        int virt = (v & VIRT) != 0, sym = !virt && g->nd[v].op == MBLX_OP_SYMBOL; /* virt: lagr_postorder's */
        if (sym && P) continue; /* its contributions are the caller's, unsummed */
        int r = sum_adjoint(g, &A, k, &a);
        if (!r && !(sym || a == g->zero))
            r = virt ? lagr_propagate(g, &A, P->L, e, v & ~VIRT, a, epoch) : propagate(g, &A, v, a, epoch);
        if (r == GRAD_OOM) goto oom;
        if (r) goto fail;
    }
    if (P && symbol_terms(g, &A, n, syms, epoch, P)) goto oom;
    for (size_t i = 0; i < n && out; i++) {
        mblx_id s = syms[i];
        out[i] = g->stamp[s] == epoch ? A.adj.p[g->memo[s]] : g->zero;
    }
    goto done;
oom:
    mblx__oom(g);
fail:
    for (size_t i = 0; i < n && out; i++) out[i] = XNONE;
    rc = g->err ? g->err : MBL_ENOMEM;
done:
    mblx__seeds_free(&S);
    mbl_free(ord.p);
    mbl_free(st.p);
    mbl_free(A.head.p);
    mbl_free(A.adj.p);
    mbl_free(A.cp);
    mbl_free(A.tmp);
    mbl_free(A.pm);
    mbl_free(A.sm);
    mbl_free(A.nm);
    return rc;
}

int mblx_gradient(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, mblx_id *out)
{
    return gradient_sweep(g, e, n, syms, out, NULL);
}

int mblx__rate_gradient_terms(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const uint32_t *map, size_t nmap,
                               size_t *ptr, mblx_id **terms)
{
    grad_terms P = {ptr, NULL, map, nmap, NULL};
    *terms = NULL;
    if (!ptr) return g ? (mblx__fail(g, MBL_EARG, "mblx_gradient: NULL arrays"), MBL_EARG) : MBL_EARG;
    int rc = gradient_sweep(g, e, n, syms, NULL, &P);
    if (rc) mbl_free(P.t), P.t = NULL;
    *terms = P.t;
    return rc;
}


typedef struct lagr_key {
    uint32_t k0, k1, j;
} lagr_key;
#define LESS_LKEY(x, y) ((x)->k0 < (y)->k0 || ((x)->k0 == (y)->k0 && (x)->k1 < (y)->k1))
MBLX__STABLE_SORT(sort_lkeys, lagr_key, LESS_LKEY)

/* Is the sweep of e - sum_j lam_j Phi_j one lagr_postorder can take: the sum wide (not flattened
 * into the root: its negation the root's last operand, the newest node), each lam_j a distinct
 * symbol not among syms and each Phi_j a sum (P_j = 1 * (lam_j, Phi_j) by id, the sum's operands
 * in that order: distinct keys), e a sum (flattened into the root or not)? Then L filled. */
static int lagr_form(mblx_graph *g, mblx_id e, size_t m, const mblx_id *lam, const mblx_id *Phi, size_t n,
                     const mblx_id *syms, lagr *L)
{
    if (m <= MBLX_FLATTEN_MAX || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_ADD || !g->nd[e].dcnt) return 0;
    uint8_t *mark = mbl_calloc(g->nsym ? g->nsym : 1, 1);
    lagr_key *k = mbl_alloc_array(m, sizeof *k);
    int ok = mark && k;
    for (size_t i = 0; i < n && ok; i++)
        if (mblx__valid(g, syms[i]) && g->nd[syms[i]].op == MBLX_OP_SYMBOL) mark[(uint32_t)g->nd[syms[i]].val] = 1;
    for (size_t j = 0; j < m && ok; j++) {
        ok = mblx__valid(g, lam[j]) && g->nd[lam[j]].op == MBLX_OP_SYMBOL && !mark[(uint32_t)g->nd[lam[j]].val]++ &&
             mblx__valid(g, Phi[j]) && g->nd[Phi[j]].op == MBLX_OP_ADD && g->nd[Phi[j]].dcnt;
        if (ok) k[j] = (lagr_key){lam[j] < Phi[j] ? lam[j] : Phi[j], lam[j] < Phi[j] ? Phi[j] : lam[j], (uint32_t)j};
    }
    ok = ok && !sort_lkeys(k, m, NULL);
    L->m = m;
    ok = ok && (L->pair = mbl_alloc_array(2 * m, sizeof *L->pair)) && (L->ph = mbl_alloc_array(m, 1)) &&
         (L->at = mbl_alloc_array(m + 3, sizeof *L->at));
    for (size_t j = 0; j < m && ok; j++)
        L->pair[2 * j] = k[j].k0, L->pair[2 * j + 1] = k[j].k1, L->ph[j] = k[j].k1 == Phi[k[j].j];
    mbl_free(mark), mbl_free(k);
    return ok;
}

int mblx__lagrangian_terms(mblx_graph *g, mblx_id e, size_t m, const mblx_id *lam, const mblx_id *Phi, size_t n,
                           const mblx_id *syms, size_t *ptr, mblx_id **terms)
{
    lagr L = {0, NULL, NULL, NULL};
    int rc;
    *terms = NULL;
    if (!g || !ptr) return g ? (mblx__fail(g, MBL_EARG, "mblx_gradient: NULL arrays"), MBL_EARG) : MBL_EARG;
    if (lagr_form(g, e, m, lam, Phi, n, syms, &L)) {
        grad_terms P = {ptr, NULL, NULL, 0, &L};
        rc = gradient_sweep(g, e, n, syms, NULL, &P);
        if (rc) mbl_free(P.t), P.t = NULL;
        *terms = P.t;
    } else { /* the nodes made: the general sweep */
        mblx_id *t = mbl_alloc_array(m ? m : 1, sizeof *t);
        if (!t) return mblx__oom(g), g->err;
        for (size_t j = 0; j < m; j++) t[j] = mblx_mul(g, lam[j], Phi[j]);
        mblx_id s = mblx_sum(g, m, t);
        mbl_free(t);
        rc = mblx__gradient_terms(g, mblx_sub(g, e, s), n, syms, ptr, terms);
    }
    mbl_free(L.pair), mbl_free(L.ph), mbl_free(L.at);
    return rc;
}
