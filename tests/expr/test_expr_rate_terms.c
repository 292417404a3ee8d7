/* d/dt(dT/dv) without dT/dv made (mblx__rate_gradient_terms, gradient_terms.h; the EOM rows of
 * src/model/formulate.c, rate_rows): two graphs built alike; in one the former way, dT/dv by
 * mblx_gradient, then each row's d/dt by mblx__total_der_map as terms and the row's sum with a
 * term of its own (as eom_rows adds -dL/dq's), in the other the row's sum of the rate terms and
 * the same term. The rows must be the same expressions node for node (op, value, operands in
 * order), for kinetic energies of a constant mass matrix: the four-bar's (body and bar terms with
 * like terms, v_j v_k products), coefficients that are sums of parameters, linear terms (constant
 * in time: left out), negative coefficients, a power at the root, a velocity not in T (the row's
 * 0). Forms that refuse (-1, no node made): a mass matrix in q, in t (rheonomic), v^3, sin(v),
 * three velocities in a product, a velocity times a sum of them, (v0 + v1)^2, a velocity as the root. */
#include <string.h>

#include "mblin/expr.h"
#include "expr/gradient_terms.h"
#include "expr_pool.h"
#include "test.h"

enum { NQ = 4 };

typedef struct side {
    mblx_graph *g;
    mblx_id q[NQ], v[NQ], a[NQ], t;
} side;

static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                   mblx_id *out, char *why, size_t whylen)
{
    (void)ud, (void)args, (void)why, (void)whylen;
    if (nargs >= 0) return 1;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

/* q0.., v0.., a0.., t, then the parameters m, p, l */
static void side_make(side *s)
{
    if (!(s->g = mblx_graph_new())) return;
    mblx_id *blk[3] = {s->q, s->v, s->a};
    const char *pre[3] = {"q", "v", "a"}, *par[3] = {"m", "p", "l"};
    for (int b = 0; b < 3; b++) pool_symbols(s->g, pre[b], NQ, blk[b]);
    s->t = mblx_symbol(s->g, "t");
    for (int i = 0; i < 3; i++) mblx_symbol(s->g, par[i]);
}

static mblx_id parse(side *s, const char *text)
{
    mblx_parse_opts o = {resolve, NULL, 0, 0, 0, NULL};
    mblx_id e = MBLX_NONE;
    return mblx_parse(s->g, text, strlen(text), &o, &e, NULL) ? MBLX_NONE : e;
}

/* the seeds by symbol index (model_total_der_seeds' layout): q -> v, v -> a, t -> 1 */
static size_t map_make(const side *s, uint32_t *map, size_t cap)
{
    size_t n = 0;
    for (size_t y = 0; y < cap; y++) map[y] = 1;
    for (int i = 0; i < NQ; i++) {
        map[mblx_symbol_index(s->g, s->q[i])] = s->v[i] + 2;
        map[mblx_symbol_index(s->g, s->v[i])] = s->a[i] + 2;
    }
    map[mblx_symbol_index(s->g, s->t)] = mblx_const(s->g, 1.0) + 2;
    for (mblx_id x = 0; x < (mblx_id)mblx_node_count(s->g); x++)
        if (mblx_node_op(s->g, x) == MBLX_OP_SYMBOL) n = (size_t)mblx_symbol_index(s->g, x) + 1;
    return n;
}

/* row i from d/dt terms t[0 .. nd) and the term p q_i, as eom_rows makes it */
static mblx_id row(side *s, int i, mblx_id *t, size_t nd)
{
    if (!nd) t[0] = mblx_const(s->g, 0.0), nd = 1;
    if (nd > 1 && !mblx__terms_by_themselves(s->g, nd, t)) t[0] = mblx_sum(s->g, nd, t), nd = 1;
    t[nd] = mblx_mul(s->g, mblx_symbol(s->g, "p"), s->q[i]);
    return mblx_apply(s->g, MBLX_OP_ADD, 0.0, nd + 1, t);
}

static void check_form(const char *T)
{
    side S[2];
    side_make(&S[0]), side_make(&S[1]);
    CHECK_MSG(S[0].g && S[1].g, "%s: graphs", T);
    if (!S[0].g || !S[1].g) return;
    mblx_id e0 = parse(&S[0], T), e1 = parse(&S[1], T);
    CHECK_MSG(e0 != MBLX_NONE && e0 == e1, "%s: parsed alike", T);
    uint32_t map[64];
    size_t nmap = map_make(&S[0], map, 64), ptr[NQ + 1];
    mblx_id pv[NQ], *rt = NULL;
    CHECK_MSG(!mblx_gradient(S[0].g, e0, NQ, S[0].v, pv), "%s: dT/dv", T);
    CHECK_MSG(!mblx__rate_gradient_terms(S[1].g, e1, NQ, S[1].v, map, nmap, ptr, &rt), "%s: rate terms", T);
    for (int i = 0; i < NQ && rt; i++) {
        mblx_id t0[MBLX_FLATTEN_MAX + 2], t1[MBLX_FLATTEN_MAX + 2];
        size_t n0 = mblx__total_der_map(S[0].g, pv[i], map, nmap, 1, t0), n1 = ptr[i + 1] - ptr[i];
        CHECK_MSG(n0 > 0 && n1 <= MBLX_FLATTEN_MAX, "%s: row %d's terms", T, i);
        memcpy(t1, rt + ptr[i], n1 * sizeof *t1);
        CHECK_MSG(mblx__terms_by_themselves(S[1].g, n1, t1), "%s: row %d's terms by themselves", T, i);
        mblx_id r0 = row(&S[0], i, t0, n0), r1 = row(&S[1], i, t1, n1);
        CHECK_MSG(r0 != MBLX_NONE && r1 != MBLX_NONE && pool_same(S[0].g, r0, S[1].g, r1), "%s: row %d differs", T, i);
    }
    free(rt);
    mblx_graph_free(S[0].g), mblx_graph_free(S[1].g);
}

TEST(rate_rows_as_before)
{
    check_form("m/6*(v0^2 + v1^2) + m/6*(v2^2 + v3^2) + m/6*(v0^2 + v1^2 + v0*v2 + v1*v3 + v2^2 + v3^2)");
    check_form("(p + l)*v0^2 + p*v0 + 3*v1*v2 - 0.5*l*v2^2 + m*l");
    check_form("v0^2");
    check_form("p*v0*v1 - v1*v2/4");
    check_form("m*(v0^2 + 2*(v1^2 + v0*v1))");
}

static void check_refused(const char *T)
{
    side s;
    side_make(&s);
    CHECK_MSG(s.g != NULL, "%s: graph", T);
    if (!s.g) return;
    mblx_id e = parse(&s, T);
    uint32_t map[64];
    size_t nmap = map_make(&s, map, 64), ptr[NQ + 1], n = mblx_node_count(s.g);
    mblx_id *rt = NULL;
    CHECK_MSG(e != MBLX_NONE && mblx__rate_gradient_terms(s.g, e, NQ, s.v, map, nmap, ptr, &rt) == -1 && !rt,
              "%s: refused", T);
    CHECK_MSG(mblx_node_count(s.g) == n, "%s: no node made", T);
    free(rt);
    mblx_graph_free(s.g);
}

TEST(rate_forms_refused)
{
    check_refused("m*cos(q0)*v0^2 + v1^2");
    check_refused("t*v0^2");
    check_refused("q1*v0*v1");
    check_refused("v0^3");
    check_refused("sin(v0) + v1^2");
    check_refused("v0*v1*v2");
    check_refused("p*v0*(v1 + v2)");
    check_refused("(v0 + v1)^2");
    check_refused("v0");
}

int main(void)
{
    RUN(rate_rows_as_before);
    RUN(rate_forms_refused);
    return test_summary("expr_rate_terms");
}
