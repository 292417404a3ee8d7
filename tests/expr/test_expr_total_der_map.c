/* The total derivative under a map of the seeds by symbol (mblx__total_der_map, gradient_terms.h;
 * the constraint and EOM rows of src/model/formulate.c): two graphs built alike, one
 * differentiated as src/model/resolve.c's model_total_der does (mblx_total_der or
 * mblx__total_der_terms with the root's own seeds, a symbol's seed without a traversal), the other
 * through one map; after each call the results, the term counts and the node counts must agree,
 * and at the end every node (op, value, operands): the same nodes made in the same order. The
 * expressions: a four-bar constraint and its d/dt (Phi_dot, Phi_ddot), a trigonometric one, a
 * time-dependent one, a non-holonomic row (linear in v), a kinetic momentum taken as terms, a
 * symbol, t, a parameter-only root, a root of one seed with a wide sum (the single-seed path), and
 * a call under other seeds in between (the memo cleared and started again); and the sums the map's
 * entry differentiates without the traversal (monomials_der, diff_memo.c): dT/dv rows of a constant
 * mass matrix (products of one velocity and parameters, a bare velocity, a parameter-only term,
 * t), sharing terms with an earlier row (the memo), of one term, of 70 terms (too many: the
 * traversal), and a constraint linear in q. Mutations caught: the products' derivatives made first
 * to last (the traversal makes them last to first), the root's terms not held, no memo. */
#include <stdio.h>

#include "mblin/expr.h"
#include "expr/gradient_terms.h"
#include "expr_pool.h"
#include "test.h"

enum { NQ = 4, NG = 2 };

typedef struct side {
    mblx_graph *g;
    mblx_id q[NQ], v[NQ], a[NQ], t, l, p;
} side;

static side S[NG];

static void side_make(side *s)
{
    s->g = mblx_graph_new();
    if (!s->g) return;
    pool_symbols(s->g, "q", NQ, s->q);
    pool_symbols(s->g, "v", NQ, s->v);
    pool_symbols(s->g, "a", NQ, s->a);
    s->t = mblx_symbol(s->g, "t"), s->l = mblx_symbol(s->g, "l"), s->p = mblx_symbol(s->g, "p");
}

/* the seed of symbol node x (resolve.c's seed_of): its node, MBLX_NONE constant in time */
static mblx_id seed_of(const side *s, mblx_id x)
{
    for (int i = 0; i < NQ; i++) {
        if (x == s->q[i]) return s->v[i];
        if (x == s->v[i]) return s->a[i];
    }
    return x == s->t ? mblx_const(s->g, 1.0) : MBLX_NONE;
}

/* model_total_der's way (resolve.c total_der): the root's own seeds; terms (not NULL): as terms */
static mblx_id der_old(side *s, mblx_id e, mblx_id *terms, size_t *nt)
{
    mblx_graph *g = s->g;
    size_t k = 1;
    mblx_id r;
    if (mblx_node_op(g, e) == MBLX_OP_SYMBOL) {
        mblx_id d = seed_of(s, e);
        r = d != MBLX_NONE ? d : mblx_const(g, 0.0);
        if (terms) terms[0] = r;
    } else {
        size_t nd = 0, ns = 0;
        const uint32_t *deps = mblx_node_deps(g, e, &nd);
        mblx_id syms[3 * NQ], d[3 * NQ], time = MBLX_NONE;
        for (size_t i = 0; i < nd; i++) {
            mblx_id x = MBLX_NONE;
            for (int j = 0; j < NQ; j++) {
                if (mblx_symbol_index(g, s->q[j]) == (long)deps[i]) x = s->q[j];
                if (mblx_symbol_index(g, s->v[j]) == (long)deps[i]) x = s->v[j];
            }
            if (mblx_symbol_index(g, s->t) == (long)deps[i]) time = s->t;
            if (x != MBLX_NONE) syms[ns] = x, d[ns++] = seed_of(s, x);
        }
        if (terms) k = mblx__total_der_terms(g, e, ns, syms, d, time, terms), r = k ? terms[0] : MBLX_NONE;
        else r = mblx_total_der(g, e, ns, syms, d, time);
    }
    if (nt) *nt = k;
    return r;
}

/* the map of side s's seeds by symbol (model_total_der_seeds' layout) */
static size_t map_make(const side *s, uint32_t *map, size_t cap)
{
    size_t n = 0;
    for (mblx_id x = 0; x < (mblx_id)mblx_node_count(s->g); x++) {
        if (mblx_node_op(s->g, x) != MBLX_OP_SYMBOL) continue;
        size_t y = (size_t)mblx_symbol_index(s->g, x);
        if (y >= cap) continue;
        mblx_id d = seed_of(s, x);
        map[y] = d != MBLX_NONE ? d + 2 : 1;
        n = y + 1 > n ? y + 1 : n;
    }
    return n;
}

static uint32_t MAP[64];
static size_t NMAP;

/* d/dt of e (its handle the same in both graphs) by both ways; the result */
static mblx_id der_both(mblx_id e, int as_terms, const char *what)
{
    mblx_id t0[MBLX_FLATTEN_MAX + 2], t1[MBLX_FLATTEN_MAX + 2];
    size_t n0 = 0;
    mblx_id r0 = der_old(&S[0], e, as_terms ? t0 : NULL, &n0);
    size_t n1 = mblx__total_der_map(S[1].g, e, MAP, NMAP, as_terms, t1);
    CHECK_MSG(r0 != MBLX_NONE && n1 > 0, "%s: derivatives made", what);
    CHECK_MSG(n1 == n0, "%s: %zu terms, not %zu", what, n1, n0);
    for (size_t i = 0; i < n0 && i < n1; i++) CHECK_MSG(t1[i] == (as_terms ? t0[i] : r0), "%s: term %zu differs", what, i);
    CHECK_MSG(mblx_node_count(S[0].g) == mblx_node_count(S[1].g), "%s: %zu nodes, not %zu", what,
              mblx_node_count(S[1].g), mblx_node_count(S[0].g));
    return r0;
}

/* e = build(side) in both graphs (the same handle), then d/dt e and d/dt d/dt e both ways; first
 * (terms_first) or last d/dt e as terms (the EOM rows': a fresh root's sum held as its terms) */
typedef mblx_id (*build_fn)(side *s);
static void check(build_fn build, int terms_first, const char *what)
{
    char w[96];
    mblx_id e0 = build(&S[0]), e1 = build(&S[1]);
    CHECK_MSG(e0 == e1 && e0 != MBLX_NONE, "%s: built alike", what);
    snprintf(w, sizeof w, "%s, d/dt as terms", what);
    if (terms_first) der_both(e0, 1, w);
    snprintf(w, sizeof w, "%s, d/dt", what);
    mblx_id d1 = der_both(e0, 0, w);
    snprintf(w, sizeof w, "%s, d2/dt2", what);
    der_both(d1, 0, w);
    snprintf(w, sizeof w, "%s, d/dt as terms", what);
    if (!terms_first) der_both(e0, 1, w);
}

static mblx_id fourbar(side *s)
{
    mblx_graph *g = s->g;
    mblx_id dx = mblx_sub(g, s->q[1], s->q[0]), dy = mblx_sub(g, s->q[3], s->q[2]);
    return mblx_sub(g, mblx_add(g, mblx_powc(g, dx, 2.0), mblx_powc(g, dy, 2.0)), mblx_powc(g, s->l, 2.0));
}
static mblx_id ground(side *s) /* shares -q0's d/dt with the first (the memo) */
{
    mblx_graph *g = s->g;
    return mblx_add(g, mblx_powc(g, mblx_sub(g, s->q[2], s->q[0]), 2.0), mblx_powc(g, s->q[1], 2.0));
}
static mblx_id trig(side *s) { return mblx_sub(s->g, s->q[3], mblx_mul(s->g, s->l, mblx_sin(s->g, s->q[0]))); }
static mblx_id timed(side *s)
{
    mblx_graph *g = s->g;
    return mblx_sub(g, mblx_mul(g, mblx_cos(g, mblx_add(g, s->q[0], s->q[1])), s->q[2]), mblx_mul(g, s->p, s->t));
}
static mblx_id nonholonomic(side *s)
{
    mblx_graph *g = s->g;
    return mblx_add(g, mblx_mul(g, s->v[0], mblx_cos(g, s->q[2])), mblx_mul(g, s->v[1], mblx_sin(g, s->q[2])));
}
static mblx_id momentum(side *s) /* dT/dv_0 of a two-link T: m l^2 v0 + m l r cos(q0 - q1) v1 */
{
    mblx_graph *g = s->g;
    mblx_id f[3] = {s->p, mblx_powc(g, s->l, 2.0), s->v[0]};
    mblx_id h[4] = {s->p, s->l, mblx_cos(g, mblx_sub(g, s->q[0], s->q[1])), s->v[1]};
    return mblx_add(g, mblx_product(g, 3, f), mblx_product(g, 4, h));
}
/* dT/dv of a kinetic energy with a constant mass matrix: products of one velocity (or t) and
 * parameters, a bare velocity, a parameter-only term (the derivative without the traversal) */
static mblx_id mass_row(side *s, int i)
{
    mblx_graph *g = s->g;
    mblx_id c6 = mblx_const(g, 1.0 / 6.0), t[5];
    t[0] = mblx_mul(g, mblx_mul(g, c6, s->p), s->v[(i + 1) % NQ]);
    t[1] = mblx_mul(g, mblx_mul(g, mblx_const(g, 2.0 / 3.0), s->p), s->v[i]);
    t[2] = s->v[(i + 3) % NQ];
    t[3] = mblx_mul(g, s->l, s->p);
    t[4] = mblx_product(g, 3, (mblx_id[]){c6, s->l, s->t});
    return mblx_sum(g, 5, t);
}
static mblx_id mass_row0(side *s) { return mass_row(s, 0); }
static mblx_id mass_row1(side *s) { return mass_row(s, 1); } /* shares 1/6 p v1 ... with row 0: the memo */
static mblx_id mass_one(side *s) { return mblx_add(s->g, mblx_mul(s->g, s->p, s->v[2]), s->l); } /* one term */
static mblx_id linear(side *s) /* a constraint linear in q: its d/dt and d2/dt2 without the traversal */
{
    mblx_graph *g = s->g;
    return mblx_add(g, mblx_sub(g, s->q[0], s->q[1]), mblx_mul(g, mblx_const(g, 2.0), s->q[2]));
}
static mblx_id mass_wide(side *s) /* 70 such terms: more than a sum held as terms takes */
{
    mblx_id t[70];
    for (int k = 0; k < 70; k++)
        t[k] = mblx_product(s->g, 3, (mblx_id[]){mblx_powc(s->g, s->l, k + 1.0), s->p, s->v[k % NQ]});
    return mblx_sum(s->g, 70, t);
}
static mblx_id symbol_q(side *s) { return s->q[2]; }
static mblx_id symbol_t(side *s) { return s->t; }
static mblx_id params(side *s) { return mblx_mul(s->g, s->p, mblx_sin(s->g, s->l)); }
static mblx_id one_seed_wide(side *s) /* a sum of 80 powers of q3: one seed, a wide node */
{
    mblx_id t[80];
    for (int k = 0; k < 80; k++) t[k] = mblx_mul(s->g, mblx_const(s->g, k + 1.0), mblx_powc(s->g, s->q[3], k + 1.0));
    return mblx_sin(s->g, mblx_sum(s->g, 80, t));
}

TEST(total_der_map_against_own_seeds)
{
    for (int k = 0; k < NG; k++) {
        side_make(&S[k]);
        CHECK(S[k].g != NULL);
        if (!S[k].g) return;
    }
    NMAP = map_make(&S[1], MAP, 64);
    CHECK(NMAP > 3 * NQ);
    check(fourbar, 0, "four-bar constraint");
    check(ground, 0, "ground constraint");
    check(trig, 0, "trigonometric");
    check(timed, 1, "time");
    check(nonholonomic, 0, "non-holonomic");
    check(momentum, 1, "momentum");
    check(mass_row0, 1, "constant mass, row 0");
    check(mass_row1, 0, "constant mass, row 1");
    check(mass_one, 1, "constant mass, one term");
    check(linear, 0, "linear constraint");
    check(mass_wide, 1, "constant mass, 70 terms");
    check(symbol_q, 1, "symbol q2");
    check(symbol_t, 0, "symbol t");
    check(params, 1, "parameters only");
    check(one_seed_wide, 0, "one seed, wide sum");
    /* other seeds in between (q0 -> a0): the memo's seeds clash, it starts again in both */
    for (int k = 0; k < NG; k++) {
        mblx_id e = trig(&S[k]);
        mblx_total_der(S[k].g, e, 1, &S[k].q[0], &S[k].a[0], MBLX_NONE);
    }
    check(trig, 1, "trigonometric after other seeds");
    check(fourbar, 0, "four-bar after other seeds");
    /* every node alike: made in the same order */
    size_t n = mblx_node_count(S[0].g), bad = 0;
    CHECK(n == mblx_node_count(S[1].g));
    for (mblx_id x = 0; x < (mblx_id)n && n == mblx_node_count(S[1].g); x++) {
        size_t na0 = 0, na1 = 0;
        const mblx_id *a0 = mblx_node_args(S[0].g, x, &na0), *a1 = mblx_node_args(S[1].g, x, &na1);
        int same = mblx_node_op(S[0].g, x) == mblx_node_op(S[1].g, x) && na0 == na1;
        double v0 = mblx_node_value(S[0].g, x), v1 = mblx_node_value(S[1].g, x);
        same = same && (v0 == v1 || (v0 != v0 && v1 != v1));
        for (size_t i = 0; same && i < na0; i++) same = a0[i] == a1[i];
        bad += !same;
    }
    CHECK_MSG(bad == 0, "%zu nodes differ", bad);
    for (int k = 0; k < NG; k++) mblx_graph_free(S[k].g);
}

int main(void)
{
    RUN(total_der_map_against_own_seeds);
    return test_summary("expr_total_der_map");
}
