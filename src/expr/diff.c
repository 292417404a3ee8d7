/* Symbolic differentiation (forward, directional; reverse in diff_grad.c), sparse Jacobians and Hessians,
 * substitution. Every traversal uses an explicit stack and the graph's stamp/memo scratch. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "expr/expr_internal.h"
#include "expr/diff_memo.h"
#include "expr/diff_sweep.h"

/* ---- seed sets: sorted (symbol index -> node; diff_sweep.h) ---------------------------------- */

#define LESS_SEED(x, y) ((x)->sym < (y)->sym)
MBLX__STABLE_SORT(sort_seeds, seed, LESS_SEED)

/* A seed set of SEED_MAP_MIN symbols or more, and at least 1 / SEED_MAP_RATIO of the graph's, gets
 * a map from symbol index to seed (seeds_index): the relevance tests of a gradient or Jacobian
 * over all unknowns look up every symbol a node depends on, and a binary search over the seeds
 * each time was 3-5 % of the Jacobian's and the formulation's time on the 60,000-coordinate
 * pendulum (docs/benchmarks.md, issue 31 item 1). Smaller sets keep the binary search (a map
 * per call would cost the graph's symbol count each time). */
enum { SEED_MAP_MIN = 64, SEED_MAP_RATIO = 16 };

void mblx__seeds_index(const mblx_graph *g, seedset *S)
{
    S->pos = NULL;
    S->npos = 0;
    if (S->n < SEED_MAP_MIN || S->n * SEED_MAP_RATIO < g->nsym) return;
    /* out of memory: no map, the binary search gives the same answers */
    if (!(S->pos = mbl_calloc(g->nsym ? g->nsym : 1, sizeof *S->pos))) return;
    S->npos = g->nsym;
    for (size_t i = 0; i < S->n; i++) S->pos[S->s[i].sym] = (uint32_t)i + 1;
}

void mblx__seeds_free(seedset *S)
{
    if (!S->borrowed) mbl_free(S->s);
    mbl_free(S->pos);
    S->s = NULL;
    S->pos = NULL;
    S->n = 0;
}

/* Build a seed set from symbol nodes syms[i] -> nodes[i] (nodes may be NULL: then `fill`), in
 * buf when it holds nbuf >= n seeds (else allocated). Fails (sticky error) on a non-symbol or,
 * when unique, on a repeated symbol. */
static int seeds_make_buf(mblx_graph *g, const char *who, size_t n, const mblx_id *syms, const mblx_id *nodes,
                          mblx_id fill, seedset *S, seed *buf, size_t nbuf)
{
    *S = (seedset){NULL, 0, NULL, NULL, 0, buf && n <= nbuf};
    if (n && !syms) {
        mblx__fail(g, MBL_EARG, "%s: NULL symbol array", who);
        return -1;
    }
    if (!(S->s = S->borrowed ? buf : mbl_alloc_array(n ? n : 1, sizeof *S->s))) {
        mblx__oom(g);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!mblx__valid(g, syms[i]) || g->nd[syms[i]].op != MBLX_OP_SYMBOL) {
            if (mblx__valid(g, syms[i]) || syms[i] != XNONE)
                mblx__fail(g, MBL_EARG, "%s: argument %zu is not a symbol", who, i);
            goto fail;
        }
        mblx_id nd = nodes ? nodes[i] : fill;
        if (!mblx__valid(g, nd)) goto fail;
        S->s[i].sym = (uint32_t)g->nd[syms[i]].val;
        S->s[i].node = nd;
    }
    /* the callers' symbols mostly come in ascending order already (a dependence set's, the unknowns'
     * in block order): then neither the sort nor the duplicate scan has anything to do */
    size_t asc = 1;
    while (asc < n && S->s[asc - 1].sym < S->s[asc].sym) asc++;
    S->n = n;
    if (asc < n && n >= SEED_MAP_MIN && n * SEED_MAP_RATIO >= g->nsym && mblx__seeds_by_symbol(g, S->s, n) == 0)
        asc = n; /* many distinct seeds: placed by symbol index (a Jacobian's over all unknowns) */
    if (asc < n) {
        if (sort_seeds(S->s, n, NULL)) {
            mblx__oom(g);
            goto fail;
        }
        for (size_t i = 1; i < n; i++)
            if (S->s[i].sym == S->s[i - 1].sym) {
                mblx__fail(g, MBL_EARG, "%s: symbol listed twice", who);
                goto fail;
            }
    }
    mblx__seeds_index(g, S);
    return 0;
fail:
    if (!S->borrowed) mbl_free(S->s);
    S->s = NULL;
    S->n = 0;
    return -1;
}

/* ---- forward traversals -------------------------------------------------------------------- */

enum { MODE_DIFF, MODE_SUBST };

/* Value of operand c in the current traversal: its memo if visited, else 0 (diff) or c. */
static mblx_id child_val(const mblx_graph *g, mblx_id c, int mode)
{
    if (g->stamp[c] == g->epoch) return g->memo[c];
    return mode == MODE_DIFF ? g->zero : c;
}

/* The derivative of operand c as a node: one held as terms (D, diff_memo.h) made into their sum
 * now, and kept as c's. */
static __attribute__((noinline)) mblx_id child_sum(mblx_graph *g, mblx_id c, mblx_id d, mblx__deferred *D)
{
    size_t n;
    const uint32_t *t = mblx__defer_terms(D, d, &n);
    d = mblx_sum(g, n, t);
    if (d != XNONE) g->memo[c] = d;
    return d;
}
static inline __attribute__((always_inline)) mblx_id child_der(mblx_graph *g, mblx_id c, mblx__deferred *D)
{
    mblx_id d = child_val(g, c, MODE_DIFF);
    return D && mblx__is_deferred(d) ? child_sum(g, c, d, D) : d;
}

/* The derivative of wide node v along symbol s (diff_wide.c): the terms of the operands that
 * depend on s, in operand order, as compute() below would find them by scanning. */
static mblx_id compute_wide(mblx_graph *g, mblx_id v, uint32_t s, mblx__deferred *D)
{
    const uint64_t *run;
    long nr = mblx__wide_run(g, v, s, &run);
    if (nr < 0) return mblx__oom(g);
    uint32_t local[LOCAL_ARGS], *t = local;
    if (nr > LOCAL_ARGS && !(t = mbl_alloc_array((size_t)nr, sizeof *t))) return mblx__oom(g);
    argcopy ac = {{0}, NULL, 0};
    mblx_id res = XNONE;
    int mul = g->nd[v].op == MBLX_OP_MUL;
    double val = g->nd[v].val;
    if (mul && args_copy(g, v, &ac)) {
        mblx__oom(g);
        goto done;
    }
    size_t k = 0;
    for (long p = 0; p < nr; p++) { /* run stays valid: making nodes does not touch the index */
        uint32_t i = (uint32_t)run[p];
        mblx_id d = child_der(g, mblx__args(g, v)[i], D);
        if (d == g->zero) continue;
        mblx_id term = mul ? mul_others(g, val, &ac, i, d) : d;
        if (term == XNONE) goto done;
        t[k++] = term;
    }
    res = mblx_sum(g, k, t);
done:
    if (t != local) mbl_free(t);
    if (mul) args_free(&ac);
    return res;
}

/* compute() of a substitution, or of the derivative of a sum: no node is made before the last
 * builder call, so v's operands are read where they are, not copied out of the pool first. An
 * operand's derivative held as terms (D) gives its terms, which the sum would flatten it into;
 * defer: the sum's own terms held (the root's, D->root). */
static mblx_id compute_linear(mblx_graph *g, mblx_id v, int mode, mblx__deferred *D, int defer)
{
    size_t n = g->nd[v].na, nt = n, k = 0, nh; /* nt: the terms, held ones counted */
    const uint32_t *a = mblx__args(g, v);
    for (size_t i = 0; D && D->ne && i < n; i++) {
        mblx_id d = child_val(g, a[i], mode);
        if (mblx__is_deferred(d)) nt += (mblx__defer_terms(D, d, &nh), nh - 1);
    }
    uint32_t local[LOCAL_ARGS], *t = local;
    if (nt > LOCAL_ARGS && !(t = mbl_alloc_array(nt, sizeof *t))) return mblx__oom(g);
    mblx_id res;
    if (mode == MODE_SUBST) {
        for (size_t i = 0; i < n; i++) t[i] = child_val(g, a[i], mode);
        res = mblx_apply(g, (mblx_op)g->nd[v].op, g->nd[v].val, n, t);
    } else {
        for (size_t i = 0; i < n; i++) {
            mblx_id d = child_val(g, a[i], mode);
            if (D && D->ne && mblx__is_deferred(d)) {
                const uint32_t *h = mblx__defer_terms(D, d, &nh);
                for (size_t j = 0; j < nh; j++) t[k++] = h[j];
            } else if (d != g->zero) {
                t[k++] = d;
            }
        }
        res = defer && k >= 2 && k <= MBLX_FLATTEN_MAX ? mblx__defer_put(g, D, k, t) : XNONE;
        if (res == XNONE) res = mblx_sum(g, k, t);
    }
    if (t != local) mbl_free(t);
    return res;
}

/* v's derivative or substitution; defer (D not NULL): a product's sum of several terms may be held
 * as its terms (diff_memo.h) */
static mblx_id compute(mblx_graph *g, mblx_id v, int mode, mblx__deferred *D, int defer)
{
    if (mode == MODE_SUBST || g->nd[v].op == MBLX_OP_ADD) return compute_linear(g, v, mode, D, defer);
    argcopy ac;
    if (args_copy(g, v, &ac)) return mblx__oom(g);
    unsigned op = g->nd[v].op;
    double val = g->nd[v].val;
    mblx_id res = XNONE;
    uint32_t local[LOCAL_ARGS], *t = local;
    if (ac.n > LOCAL_ARGS && !(t = mbl_alloc_array(ac.n, sizeof *t))) {
        mblx__oom(g);
        goto done;
    }
    if (mode == MODE_SUBST) {
        for (size_t i = 0; i < ac.n; i++) t[i] = child_val(g, ac.a[i], mode);
        res = mblx_apply(g, (mblx_op)op, val, ac.n, t);
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < ac.n; i++) {
        mblx_id d = child_der(g, ac.a[i], D);
        if (d == XNONE) goto done;
        if (d == g->zero) continue;
        mblx_id term;
        if (op == MBLX_OP_ADD)
            term = d;
        else if (op == MBLX_OP_MUL)
            term = mul_others(g, val, &ac, i, d);
        else {
            double c;
            mblx_id p = mblx__partial_parts(g, v, ac.a, i, &c);
            term = mblx__scaled_product(g, c, p, d, 0); /* mblx_mul(g, partial(...), d) */
        }
        if (term == XNONE) goto done;
        t[k++] = term;
    }
    if (defer && op == MBLX_OP_MUL && k >= 2 && k <= MBLX_FLATTEN_MAX && (res = mblx__defer_put(g, D, k, t)) != XNONE)
        goto done;
    res = mblx_sum(g, k, t);
    if (op == MBLX_OP_LET) res = mblx_let(g, res); /* the derivative of a let is shared too */
done:
    if (t != local) mbl_free(t);
    args_free(&ac);
    return res;
}

/* Forward traversal of the part of root that depends on S: MODE_DIFF gives the directional
 * derivative with seeds S (symbol -> its derivative), MODE_SUBST the substitution. stk (may be
 * NULL) is a reusable stack. */

static mblx_id traverse_memo(mblx_graph *g, mblx_id root, const seedset *S, int mode, u32vec *stk,
                             int fresh, const mblx__memo_ref *keep, mblx__deferred *D);

static mblx_id traverse(mblx_graph *g, mblx_id root, const seedset *S, int mode, u32vec *stk)
{
    return traverse_memo(g, root, S, mode, stk, 1, NULL, NULL);
}

/* Is the node on top of the stack a product whose parent in the traversal (the nearest node below
 * it still pending) is a sum that compute_linear differentiates, or the root with root set? */
static int parent_flattens(const mblx_graph *g, const u32vec *stp, int wide, int root)
{
    if (stp->n == 1) return root;
    if (g->nd[stp->p[stp->n - 1]].op != MBLX_OP_MUL) return 0;
    for (size_t i = stp->n - 1; i-- > 0;) {
        mblx_id w = stp->p[i];
        if (g->stamp[w] == g->epoch && g->memo[w] == XPENDING)
            return g->nd[w].op == MBLX_OP_ADD && !(wide && mblx__wide_is(g, w));
    }
    return 0;
}

/* Push the operands of v that depend on S and are not yet visited, in operand order: through
 * the wide-node index when v is wide and `wide` is set (one seed), else by scanning. */
static int push_relevant(mblx_graph *g, mblx_id v, const seedset *S, u32vec *stp, int wide)
{
    uint32_t epoch = g->epoch;
    if (wide && mblx__wide_is(g, v)) {
        const uint64_t *run;
        long nr = mblx__wide_run(g, v, S->s[0].sym, &run);
        if (nr < 0) return -1;
        for (long p = 0; p < nr; p++) {
            mblx_id c = mblx__args(g, v)[(uint32_t)run[p]];
            if (g->stamp[c] != epoch && u32_push(stp, c)) return -1;
        }
        return 0;
    }
    if (wide) mblx__wide_step(g, g->nd[v].na);
    for (uint32_t i = 0; i < g->nd[v].na; i++) {
        mblx_id c = mblx__args(g, v)[i];
        if (g->stamp[c] != epoch && relevant(g, c, S) && u32_push(stp, c)) return -1;
    }
    return 0;
}

/* fresh = 0: keep the memo of the traversals since the last mblx__new_epoch (same seeds S), so
 * that the nodes several roots share are differentiated once (mblx_jacobian, by column).
 * keep (MODE_DIFF, may be NULL): derivatives kept across calls, node -> derivative + 1 (0: not
 * known), covering every node that exists when the call starts (mblx_total_der's memo): a node
 * found there is not visited, and each node differentiated here is written there.
 * D (MODE_DIFF, may be NULL): where products' derivatives are held as terms (diff_memo.h). */
static mblx_id traverse_memo(mblx_graph *g, mblx_id root, const seedset *S, int mode, u32vec *stk,
                             int fresh, const mblx__memo_ref *keep, mblx__deferred *D)
{
    if (!relevant(g, root, S)) return mode == MODE_DIFF ? g->zero : root;
    /* one symbol: wide nodes through the index (several: scanned, see relevant()) */
    int wide = S->n == 1;
    if (wide && mblx__wide_ensure(g)) return mblx__oom(g);
    if ((fresh || !g->stamp) && mblx__new_epoch(g)) return mblx__oom(g);
    uint32_t epoch = g->epoch;
    uint32_t own_local[INIT_STACK]; /* a call's own stack starts here (a small graph: no allocation) */
    u32vec own = {own_local, 0, INIT_STACK, 1}, *stp = stk ? stk : &own;
    mblx_id res = XNONE;
    stp->n = 0;
    if (u32_push(stp, root)) goto oom;
    while (stp->n) {
        mblx_id v = stp->p[stp->n - 1];
        if (g->stamp[v] == epoch) {
            if (g->memo[v] == XPENDING) {
                mblx_id r = wide && mode == MODE_DIFF && mblx__wide_is(g, v)
                                ? compute_wide(g, v, S->s[0].sym, D)
                                : compute(g, v, mode, D, D && parent_flattens(g, stp, wide, D->root));
                if (r == XNONE) goto out;
                g->memo[v] = r;
                if (keep && !(D && mblx__is_deferred(r))) mblx__keep_put(g, keep, v, r);
            }
            stp->n--;
            continue;
        }
        g->stamp[v] = epoch;
        uint32_t kv = keep ? mblx__keep_get(g, keep, v) : 0;
        if (kv) { /* differentiated by an earlier call under the same seeds */
            g->memo[v] = kv - 1;
            stp->n--;
            continue;
        }
        if (g->nd[v].op == MBLX_OP_SYMBOL) {
            uint32_t y = (uint32_t)g->nd[v].val, *m = S->tds; /* a seed (relevant): its node */
            g->memo[v] = m ? m[y] - 2 : S->s[seed_find(S, y)].node, stp->n--;
            continue;
        }
        g->memo[v] = XPENDING;
        if (push_relevant(g, v, S, stp, wide)) goto oom;
    }
    res = g->memo[root];
    goto out;
oom:
    mblx__oom(g);
out:
    if (!own.borrowed) mbl_free(own.p);
    return res;
}

mblx_id mblx_diff(mblx_graph *g, mblx_id e, mblx_id sym)
{
    if (!g || !mblx__valid(g, e) || !mblx__valid(g, sym)) return XNONE;
    if (g->nd[sym].op != MBLX_OP_SYMBOL) return mblx__fail(g, MBL_EARG, "mblx_diff: not a symbol");
    seed s1 = {(uint32_t)g->nd[sym].val, g->one};
    seedset S = {&s1, 1, NULL, NULL, 0, 0};
    mblx__memo_ref k = {NULL, s1.sym};
    int keep = relevant(g, e, &S) && mblx__dmap_ready(g);
    return traverse_memo(g, e, &S, MODE_DIFF, NULL, 1, keep ? &k : NULL, NULL);
}

mblx_id mblx_dir_deriv(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms,
                       const mblx_id *dirs)
{
    if (!g || !mblx__valid(g, e)) return XNONE;
    if (n && !dirs) return mblx__fail(g, MBL_EARG, "mblx_dir_deriv: NULL directions");
    seedset S;
    if (seeds_make_buf(g, "mblx_dir_deriv", n, syms, dirs, XNONE, &S, NULL, 0)) return XNONE;
    mblx_id r = traverse(g, e, &S, MODE_DIFF, NULL);
    mblx__seeds_free(&S);
    return r;
}

mblx_id mblx__total_der_held(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *dsyms,
                             mblx_id time_sym, mblx__deferred *D)
{
    if (!g || !mblx__valid(g, e)) return XNONE;
    if (n && (!syms || !dsyms)) return mblx__fail(g, MBL_EARG, "mblx_total_der: NULL arrays");
    if (n == SIZE_MAX) return mblx__oom(g);
    size_t nt = n + (time_sym != XNONE);
    mblx_id ls[TD_LOCAL], ld[TD_LOCAL];
    seed lseed[TD_LOCAL];
    /* the caller's arrays as they are without a time symbol; else copied with it appended */
    mblx_id *s = time_sym == XNONE ? (mblx_id *)syms : nt <= TD_LOCAL ? ls : mbl_alloc_array(nt, sizeof *s);
    mblx_id *d = time_sym == XNONE ? (mblx_id *)dsyms : nt <= TD_LOCAL ? ld : mbl_alloc_array(nt, sizeof *d);
    mblx_id r = XNONE;
    seedset S;
    if ((nt && !s) || (nt && !d)) {
        mblx__oom(g);
    } else {
        if (time_sym != XNONE) {
            if (n) {
                memcpy(s, syms, n * sizeof *s);
                memcpy(d, dsyms, n * sizeof *d);
            }
            s[n] = time_sym, d[n] = g->one;
        }
        if (!seeds_make_buf(g, "mblx_dir_deriv", nt, s, d, XNONE, &S, lseed, TD_LOCAL)) {
            mblx__memo_ref k = {relevant(g, e, &S) ? mblx__tdmemo_for(g, e, S.s, S.n, &S.tds) : NULL, 0};
            r = traverse_memo(g, e, &S, MODE_DIFF, NULL, 1, k.arr ? &k : NULL, D);
            mblx__seeds_free(&S);
        }
    }
    if (s != ls && s != syms) mbl_free(s);
    if (d != ld && d != dsyms) mbl_free(d);
    return r;
}

mblx_id mblx__total_der_walk(mblx_graph *g, mblx_id e, const seedset *S, const mblx__memo_ref *k, mblx__deferred *D)
{
    return traverse_memo(g, e, S, MODE_DIFF, NULL, 1, k, D);
}

mblx_id mblx_subst(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, const mblx_id *repl)
{
    if (!g || !mblx__valid(g, e)) return XNONE;
    if (n && !repl) return mblx__fail(g, MBL_EARG, "mblx_subst: NULL replacements");
    seedset S;
    if (seeds_make_buf(g, "mblx_subst", n, syms, repl, XNONE, &S, NULL, 0)) return XNONE;
    mblx_id r = traverse(g, e, &S, MODE_SUBST, NULL);
    mblx__seeds_free(&S);
    return r;
}

int mblx_subst_many(mblx_graph *g, size_t m, const mblx_id *e, size_t n, const mblx_id *syms,
                    const mblx_id *repl, mblx_id *out)
{
    if (!g) return MBL_EARG;
    for (size_t i = 0; i < m; i++)
        if (!mblx__valid(g, e[i])) return MBL_EARG;
    if (n && !repl) return mblx__fail(g, MBL_EARG, "mblx_subst_many: NULL replacements"), MBL_EARG;
    seedset S;
    if (seeds_make_buf(g, "mblx_subst_many", n, syms, repl, XNONE, &S, NULL, 0)) return mblx_graph_status(g, NULL);
    int rc = mblx__new_epoch(g) ? (mblx__oom(g), MBL_ENOMEM) : 0;
    for (size_t i = 0; i < m && !rc; i++) { /* one memo: the nodes the roots share rebuilt once */
        out[i] = traverse_memo(g, e[i], &S, MODE_SUBST, NULL, 0, NULL, NULL);
        if (out[i] == XNONE) rc = mblx_graph_status(g, NULL) ? mblx_graph_status(g, NULL) : MBL_ENOMEM;
    }
    mblx__seeds_free(&S);
    return rc;
}

/* ---- sparse Jacobian (diff_sparse.c: the Hessian) --------------------------------------------------------------- */

typedef struct trip {
    int row, col;
    mblx_id node;
} trip;

int mblx_jacobian(mblx_graph *g, size_t m, const mblx_id *exprs, size_t n, const mblx_id *syms,
                  mblx_sparse *out)
{
    if (!g || !out) return MBL_EARG;
    memset(out, 0, sizeof *out);
    if ((m && !exprs) || m > INT_MAX || n > INT_MAX - 1) {
        mblx__fail(g, MBL_EARG, "mblx_jacobian: invalid dimensions or NULL arrays");
        return MBL_EARG;
    }
    for (size_t i = 0; i < m; i++)
        if (!mblx__valid(g, exprs[i])) {
            if (!g->err) mblx__fail(g, MBL_EARG, "mblx_jacobian: invalid expression %zu", i);
            return g->err;
        }
    /* seed set: symbol index -> column (stored in node) */
    seedset S;
    if (seeds_make_buf(g, "mblx_jacobian", n, syms, NULL, g->zero, &S, NULL, 0)) return g->err;
    for (size_t j = 0; j < n; j++) S.s[seed_find(&S, (uint32_t)g->nd[syms[j]].val)].node = (mblx_id)j;
    trip *T = NULL;
    size_t nt = 0, capt = 0;
    u32vec cols = {NULL, 0, 0, 0}, stk = {NULL, 0, 0, 0};
    /* the structural pattern, row by row */
    for (size_t i = 0; i < m; i++) {
        mblx_id e = exprs[i];
        cols.n = 0;
        if (!(i & 1023) && core_progress_tick((double)i)) { /* a load's report (core/progress.h) */
            mblx__fail(g, MBL_ECANCELLED, "cancelled");
            goto fail;
        }
        uint32_t cnt = g->nd[e].dcnt;
        if (cnt <= S.n) {
            for (uint32_t k = 0; k < cnt; k++) {
                long p = seed_find(&S, g->deps[g->nd[e].doff + k]);
                if (p >= 0 && u32_push(&cols, S.s[p].node)) goto oom;
            }
        } else {
            for (size_t k = 0; k < S.n; k++)
                if (mblx__dep_has(g, e, S.s[k].sym) && u32_push(&cols, S.s[k].node)) goto oom;
        }
        for (size_t k = 0; k < cols.n; k++) {
            if (nt == capt) {
                trip *q = mbl_realloc_array(T, capt ? capt * 2 : INIT_STACK, sizeof *q);
                if (!q) goto oom;
                T = q, capt = capt ? capt * 2 : INIT_STACK;
            }
            T[nt++] = (trip){(int)i, (int)cols.p[k], g->zero};
        }
    }
    /* then column by column, one memo per column: a node that several rows share (the subtree
     * loads of a mechanism tree in joint coordinates) is differentiated once per column, so the
     * cost is the size of the derivative graph, not rows x depth */
    {
        size_t *cp = mbl_calloc(n + 1, sizeof *cp), *at = mbl_alloc_array(nt ? nt : 1, sizeof *at);
        if (!cp || !at) {
            mbl_free(cp), mbl_free(at);
            goto oom;
        }
        for (size_t k = 0; k < nt; k++) cp[T[k].col + 1]++;
        for (size_t j = 0; j < n; j++) cp[j + 1] += cp[j];
        for (size_t k = 0; k < nt; k++) at[cp[T[k].col]++] = k; /* rows in increasing order per column */
        for (size_t j = n; j > 0; j--) cp[j] = cp[j - 1];
        cp[0] = 0;
        for (size_t j = 0; j < n; j++) {
            if (cp[j] == cp[j + 1]) continue;
            if (!(j & 63) && core_progress_tick((double)j)) { /* a load's report (core/progress.h) */
                mbl_free(cp), mbl_free(at);
                mblx__fail(g, MBL_ECANCELLED, "cancelled");
                goto fail;
            }
            seed s1 = {(uint32_t)g->nd[syms[j]].val, g->one};
            seedset S1 = {&s1, 1, NULL, NULL, 0, 0};
            if (mblx__new_epoch(g)) {
                mbl_free(cp), mbl_free(at);
                mblx__oom(g);
                goto fail;
            }
            for (size_t p = cp[j]; p < cp[j + 1]; p++) {
                mblx_id d = traverse_memo(g, exprs[T[at[p]].row], &S1, MODE_DIFF, &stk, 0, NULL, NULL);
                if (d == XNONE) {
                    mbl_free(cp), mbl_free(at);
                    goto fail;
                }
                T[at[p]].node = d;
            }
        }
        mbl_free(cp), mbl_free(at);
        size_t w = 0; /* drop the entries that came out zero */
        for (size_t k = 0; k < nt; k++)
            if (T[k].node != g->zero) T[w++] = T[k];
        nt = w;
    }
    if (nt > INT_MAX) goto oom;
    out->colptr = mbl_calloc(n + 1, sizeof *out->colptr);
    out->rowidx = mbl_alloc_array(nt ? nt : 1, sizeof *out->rowidx);
    out->node = mbl_alloc_array(nt ? nt : 1, sizeof *out->node);
    if (!out->colptr || !out->rowidx || !out->node) goto oom;
    for (size_t k = 0; k < nt; k++) out->colptr[T[k].col + 1]++;
    for (size_t j = 0; j < n; j++) out->colptr[j + 1] += out->colptr[j];
    {
        int *next = mbl_alloc_array(n ? n : 1, sizeof *next);
        if (!next) goto oom;
        for (size_t j = 0; j < n; j++) next[j] = out->colptr[j];
        for (size_t k = 0; k < nt; k++) { /* rows arrive in increasing order */
            int p = next[T[k].col]++;
            out->rowidx[p] = T[k].row;
            out->node[p] = T[k].node;
        }
        mbl_free(next);
    }
    out->nrows = (int)m;
    out->ncols = (int)n;
    mbl_free(T);
    mbl_free(cols.p);
    mbl_free(stk.p);
    mblx__seeds_free(&S);
    return 0;
oom:
    mblx__oom(g);
fail:
    mbl_free(T);
    mbl_free(cols.p);
    mbl_free(stk.p);
    mblx__seeds_free(&S);
    mblx_sparse_free(out);
    return g->err ? g->err : MBL_ENOMEM;
}
