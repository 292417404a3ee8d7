/* The simplifying builders of the expression graph: constants, sums, products, powers, binary
 * arithmetic, functions and the generic constructor, each returning the canonical node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr/builders_sorted.h"
#include "expr/expr_internal.h"

/* Small operand lists are collected in fixed local arrays; longer ones on the heap. */
enum { LOCAL_ARGS = 16, LOCAL_TERMS = 16, LOCAL_KEYS = 64 };

/* ---- constants ---------------------------------------------------------------------------- */

mblx_id mblx_const(mblx_graph *g, double v) { return g ? mblx__const(g, v) : XNONE; }

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

static __attribute__((noinline)) int vec_reserve(vec *v, size_t extra, size_t sz)
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
static inline __attribute__((always_inline)) void sum_add_term(sum_acc *s, mblx_id t, double c)
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
    if ((s->recs.n == s->recs.cap && vec_reserve(&s->recs, 1, sizeof(term_rec))) ||
        (s->keys.cap - s->keys.n < klen && vec_reserve(&s->keys, klen, sizeof(uint32_t)))) {
        s->failed = 1;
        return;
    }
    term_rec *r = (term_rec *)s->recs.p + s->recs.n++;
    r->coef = coef;
    r->mul = mul;
    r->koff = s->keys.n;
    r->klen = klen;
    uint32_t *kd = (uint32_t *)s->keys.p + s->keys.n;
    if (klen <= 2) { /* most keys: a call of memcpy cost more than the copy */
        if (klen) kd[0] = key[0];
        if (klen == 2) kd[1] = key[1];
    } else {
        memcpy(kd, key, klen * sizeof(uint32_t));
    }
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
            t = mblx__intern(g, MBLX_OP_MUL, r[i].coef, r[i].klen, r[i].key);
        if (t == XNONE) goto done;
        out[nt++] = t;
    }
    if (nt == 0)
        res = mblx__const(g, s->k);
    else if (nt == 1 && s->k == 0.0)
        res = out[0];
    else
        res = mblx__intern(g, MBLX_OP_ADD, s->k, nt, out);
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
    /* 0 + x and x + 0: x, undefined or not (the first undefined term is the sum) */
    if (n == 2 && terms[0] == g->zero) return terms[1];
    if (n == 2 && terms[1] == g->zero) return terms[0];
    {
        uint32_t sorted[MBLX__SUM_SORT_MAX];
        if (mblx__sum_canonical(g, n, terms, sorted))
            return mblx__intern(g, MBLX_OP_ADD, 0.0, n, n > MBLX__SUM_SORT_MAX ? terms : sorted);
    }
    term_rec rl[LOCAL_TERMS];
    uint32_t kl[LOCAL_KEYS];
    sum_acc s = {{rl, 0, LOCAL_TERMS, rl}, {kl, 0, LOCAL_KEYS, kl}, 0.0, g, 0};
    size_t i = 0;
    mblx_id u = XNONE;
    for (; i < n && !s.failed; i++) { /* the first undefined term looked for in the same pass */
        const mblx__node *nd = &g->nd[terms[i]];
        if (nd->op != MBLX_OP_CONST && nd->dcnt == 0) {
            u = terms[i];
            break;
        }
        if (nd->op != MBLX_OP_ADD && !(nd->op == MBLX_OP_MUL && nd->na == 1))
            sum_add_term(&s, terms[i], 1.0); /* what sum_add does with it, without the call */
        else
            sum_add(&s, terms[i], 1.0);
    }
    if (u == XNONE && i < n) u = first_undefined(g, n - i, terms + i); /* out of memory before the end */
    if (u != XNONE) {
        vec_free(&s.recs);
        vec_free(&s.keys);
        return u;
    }
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
    {
        mblx_id res;
        if (!pass && mblx__product_sorted(g, coef, n, f, &res)) return res;
    }
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
                mblx_id kc = mblx__const(g, g->nd[t].val);
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
        res = mblx__const(g, coef);
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
        res = mblx__intern(g, MBLX_OP_MUL, coef, nf, out);
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

/* mblx_mul(g, mblx_scale(g, c, p), x), or with x_first mblx_mul(g, x, mblx_scale(g, c, p)), without
 * making the scaled node s = c * p where that gives the same node: product_core of (c, [p, x])
 * flattens p as product_core of (1, [s, x]) flattens s, whose coefficient c * p's is the first
 * product either way, and then multiplies by x's. With x first, x's coefficient xk comes first:
 * taken where (c xk) pk, the fused product's coefficient, is the very number xk (c pk) (always
 * for xk = 1, and for c a power of two away from overflow and subnormals). Anything else (p a
 * constant or undefined; a coefficient not finite; x one, zero, undefined or invalid): made as
 * written. */
mblx_id mblx__scaled_product(mblx_graph *g, double c, mblx_id p, mblx_id x, int x_first)
{
    int fuse = c != 1.0 && isfinite(c) && p != XNONE && x != XNONE && mblx__valid(g, p) && mblx__valid(g, x) &&
               !is_const(g, p, NULL) && !is_undefined(g, p) && !is_undefined(g, x) && x != g->one && x != g->zero;
    double pk = fuse && g->nd[p].op == MBLX_OP_MUL && g->nd[p].na <= MBLX_FLATTEN_MAX ? g->nd[p].val : 1.0;
    if (fuse) fuse = isfinite(c * pk);
    if (fuse && x_first) { /* x's coefficient xk first: (c xk) pk must be xk (c pk), both finite */
        double xk = is_const(g, x, NULL) || (g->nd[x].op == MBLX_OP_MUL && g->nd[x].na <= MBLX_FLATTEN_MAX)
                        ? g->nd[x].val
                        : 1.0;
        double fused = (c * xk) * pk, asis = xk * (c * pk);
        fuse = isfinite(c * xk) && isfinite(asis) && fused == asis;
    }
    if (!fuse) {
        mblx_id s = p == XNONE ? XNONE : mblx_scale(g, c, p);
        return x_first ? mblx_mul(g, x, s) : mblx_mul(g, s, x);
    }
    mblx_id f[2] = {x_first ? x : p, x_first ? p : x};
    return product_core(g, c, 2, f, 0);
}

/* One factor of a product as product_core reads it: a power of a constant exponent by its base. */
static inline __attribute__((always_inline)) fac_rec fac_of(const mblx_graph *g, mblx_id x)
{
    double ev;
    if (g->nd[x].op == MBLX_OP_POW && is_const(g, mblx__args(g, x)[1], &ev)) return (fac_rec){mblx__args(g, x)[0], x, ev};
    return (fac_rec){x, XNONE, 1.0};
}

/* The derivatives of products (diff.c: c * the other operands * d, column after column) made the
 * factors of a product again and again sorted, merged and checked, though they are the operands of
 * a product: already sorted by base, without constants. Where they are (strictly increasing bases,
 * no constant, no flattenable product, no undefined operand) and nothing multiplies beyond the
 * finite, product_core's stable sort is the merge of the two lists by base (x's operands, when x is
 * a product product_core flattens, or x itself): made here at once. A constant x only multiplies
 * the coefficient (0: zero); a single other operand (vn = 1) is mblx_product's c * x (x itself for
 * c = 1); a base in both lists merges as product_core merges it (exponents added, pow_num of the
 * sum, in the same order), unless the power needs product_core's renormalization pass. Anything
 * else: mblx_product. */
mblx_id mblx__product_others(mblx_graph *g, mblx_id c, const uint32_t *va, size_t vn, size_t skip, mblx_id x)
{
    enum { FAST_MAX = 32 };
    fac_rec A[FAST_MAX], B[FAST_MAX];
    uint32_t out[2 * FAST_MAX];
    size_t na = 0, nb = 0;
    double coef = g->nd[c].val; /* product_core's 1.0 * c */
    int fast = g->nd[c].op == MBLX_OP_CONST && vn >= 1 && vn - 1 <= FAST_MAX && isfinite(coef) && coef != 0.0 &&
               x != XNONE && mblx__valid(g, x) && !is_undefined(g, x);
    int xconst = fast && g->nd[x].op == MBLX_OP_CONST;
    if (vn == 1 && xconst) fast = 0;                  /* two constants: as written */
    if (fast && vn == 1 && c == g->one) return x;     /* mblx_product's 1 * x */
    for (size_t j = 0; j < vn && fast; j++) {
        if (j == skip) continue;
        mblx_id t = va[j];
        if (g->nd[t].op == MBLX_OP_CONST || is_undefined(g, t) ||
            (g->nd[t].op == MBLX_OP_MUL && g->nd[t].na <= MBLX_FLATTEN_MAX)) {
            fast = 0;
            break;
        }
        A[na] = fac_of(g, t);
        fast = A[na].e != 0.0 && (!na || A[na - 1].base < A[na].base);
        na++;
    }
    if (fast && xconst) {
        coef *= g->nd[x].val;
        fast = isfinite(coef);
        if (fast && coef == 0.0) return g->zero;
    } else if (fast && g->nd[x].op == MBLX_OP_MUL && g->nd[x].na <= MBLX_FLATTEN_MAX) {
        coef *= g->nd[x].val;
        fast = isfinite(coef) && coef != 0.0 && g->nd[x].na <= FAST_MAX;
        for (uint32_t k = 0; k < g->nd[x].na && fast; k++) {
            B[nb] = fac_of(g, mblx__args(g, x)[k]);
            fast = B[nb].e != 0.0 && (!nb || B[nb - 1].base < B[nb].base);
            nb++;
        }
    } else if (fast) {
        B[nb++] = fac_of(g, x);
        fast = B[0].e != 0.0;
    }
    size_t i = 0, j = 0, nf = 0;
    while (fast && (i < na || j < nb)) {
        mblx_id t;
        if (j == nb || (i < na && A[i].base < B[j].base)) {
            t = A[i].e == 1.0 ? A[i].base : A[i].node;
            i++;
        } else if (i == na || B[j].base < A[i].base) {
            t = B[j].e == 1.0 ? B[j].base : B[j].node;
            j++;
        } else { /* a base in both: the powers merge */
            double e = A[i].e + B[j].e;
            mblx_id b = A[i].base;
            if (!isfinite(e)) break;
            i++, j++;
            if (e == 0.0) continue;
            if (e == 1.0) {
                t = b;
            } else {
                t = pow_num(g, b, e);
                if (t == XNONE) return XNONE;
                if (!(g->nd[t].op == MBLX_OP_POW && mblx__args(g, t)[0] == b)) { /* renormalized */
                    fast = 0;
                    break;
                }
            }
        }
        out[nf++] = t;
    }
    if (fast && i == na && j == nb) {
        if (nf == 0) return mblx__const(g, coef);
        if (nf == 1 && coef == 1.0) return out[0];
        return mblx__intern(g, MBLX_OP_MUL, coef, nf, out);
    }
    /* as written: mblx_product of c, the other operands and x */
    uint32_t local[FAST_MAX + 2], *f = vn + 1 <= FAST_MAX + 2 ? local : mbl_alloc_array(vn + 1, sizeof *f);
    if (!f) return mblx__oom(g);
    size_t k = 0;
    f[k++] = c;
    for (size_t t = 0; t < vn; t++)
        if (t != skip) f[k++] = va[t];
    if (x != XNONE) f[k++] = x;
    mblx_id r = mblx_product(g, k, f);
    if (f != local) mbl_free(f);
    return r;
}

/* -(f[0] * ... * f[n-1]), the node mblx_neg(g, mblx_product(g, n, f)) returns, without making the
 * product first (the parser's negated terms, "- m*g*y/2": that product is used nowhere else). The
 * same node: product_core starting from the coefficient -1 instead of 1 negates every partial
 * coefficient exactly, and mblx_neg of a flattened MUL is the MUL with the coefficient negated;
 * a product that would not be flattened (more than MBLX_FLATTEN_MAX operands) is made as before. */
mblx_id mblx__neg_product(mblx_graph *g, size_t n, const mblx_id *f)
{
    if (!g) return XNONE;
    if (n < 2 || !f) return mblx_neg(g, mblx_product(g, n, f));
    size_t bound = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mblx__valid(g, f[i])) return XNONE;
        bound += g->nd[f[i]].op == MBLX_OP_MUL && g->nd[f[i]].na <= MBLX_FLATTEN_MAX ? g->nd[f[i]].na : 1;
    }
    if (bound <= MBLX_FLATTEN_MAX && first_undefined(g, n, f) == XNONE) {
        mblx_id r = product_core(g, -1.0, n, f, 0);
        if (r == XNONE || g->nd[r].op != MBLX_OP_MUL || g->nd[r].na <= MBLX_FLATTEN_MAX) return r;
    }
    return mblx_neg(g, mblx_product(g, n, f));
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
        if (isfinite(r)) return mblx__const(g, r);
        mblx_id ec = mblx__const(g, e);
        if (ec == XNONE) return XNONE;
        uint32_t a[2] = {b, ec};
        return mblx__intern(g, MBLX_OP_POW, 0.0, 2, a);
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
    mblx_id ec = mblx__const(g, e);
    if (ec == XNONE) return XNONE;
    uint32_t a[2] = {b, ec};
    return mblx__intern(g, MBLX_OP_POW, 0.0, 2, a);
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
    return mblx__intern(g, MBLX_OP_POW, 0.0, 2, a);
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
    unsigned op = g->nd[a].op;
    if (op != MBLX_OP_CONST && !(op == MBLX_OP_MUL && g->nd[a].na <= MBLX_FLATTEN_MAX)) {
        /* one factor that flattens into nothing: product_core's c * a, unless a is a power of
         * exponent 0 or 1 (made as written) */
        fac_rec fr = fac_of(g, a);
        if (fr.base == a || (fr.e != 0.0 && fr.e != 1.0))
            return c == 0.0 ? g->zero : mblx__intern(g, MBLX_OP_MUL, c, 1, &a);
    }
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
        if (isfinite(r)) return mblx__const(g, r);
    }
    unsigned aop = g->nd[a].op;
    if (op == MBLX_OP_LOG && aop == MBLX_OP_EXP) return mblx__args(g, a)[0];
    if ((op == MBLX_OP_ABS || op == MBLX_OP_SIGN) && aop == op) return a;
    uint32_t arg = a;
    return mblx__intern(g, op, 0.0, 1, &arg);
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
    if (is_const(g, y, &a) && is_const(g, x, &b)) return mblx__const(g, atan2(a, b));
    uint32_t args[2] = {y, x};
    return mblx__intern(g, MBLX_OP_ATAN2, 0.0, 2, args);
}

static mblx_id minmax(mblx_graph *g, unsigned op, mblx_id a, mblx_id b)
{
    if (!g || !mblx__valid(g, a) || !mblx__valid(g, b)) return XNONE;
    if (is_undefined(g, a)) return a;
    if (is_undefined(g, b)) return b;
    if (a == b) return a;
    double x, y;
    if (is_const(g, a, &x) && is_const(g, b, &y))
        return mblx__const(g, op == MBLX_OP_MIN ? (x < y ? x : y) : (x > y ? x : y));
    uint32_t args[2] = {a < b ? a : b, a < b ? b : a};
    return mblx__intern(g, op, 0.0, 2, args);
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
            if (isfinite(r)) return mblx__const(g, r);
        }
    }
    if (h0 == h1) return h0;
    return mblx__intern(g, MBLX_OP_STEP, 0.0, 5, a);
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
    return mblx__intern(g, MBLX_OP_LET, 0.0, 1, &arg);
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
    case MBLX_OP_CONST: ARITY(0); return mblx__const(g, value);
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
    case MBLX_OP_DATA: return mblx__data_apply(g, value, n, args);
    case MBLX_OP_USER: return mblx__user_apply(g, value, n, args);
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
        [MBLX_OP_DATA] = "data",   [MBLX_OP_USER] = "user",
    };
    return ((unsigned)op < MBLX_OP_COUNT_) ? names[op] : "?";
}
