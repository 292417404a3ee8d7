/* The derivatives kept from call to call (src/expr/diff.c): mblx_total_der keeps each node's
 * total derivative under the seeds its symbols had, mblx_diff each (node, symbol). A later call
 * finds the shared parts there instead of differentiating them again; the result must be the
 * very nodes (same handles, same node count) a graph that differentiated every call afresh makes.
 * The fresh graph here drops its memo before every call (mblx_graph_drop_table frees it), so the
 * two graphs run the same sequence of calls, one with and one without the memo. A call whose
 * seeds disagree with the kept ones (another derivative for a symbol, or a symbol that was a seed
 * no longer one) must clear the memo and still give the fresh nodes. */
#include <math.h>
#include <stdio.h>

#include "mblin/expr.h"
#include "test.h"

enum { N = 12 };

typedef struct sys {
    mblx_graph *g;
    mblx_id q[N], v[N], a[N], w[N], t, p;
} sys;

static void sys_make(sys *s)
{
    s->g = mblx_graph_new();
    for (int i = 0; i < N; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "q%d", i);
        s->q[i] = mblx_symbol(s->g, nm);
        snprintf(nm, sizeof nm, "v%d", i);
        s->v[i] = mblx_symbol(s->g, nm);
        snprintf(nm, sizeof nm, "a%d", i);
        s->a[i] = mblx_symbol(s->g, nm);
        snprintf(nm, sizeof nm, "w%d", i);
        s->w[i] = mblx_symbol(s->g, nm);
    }
    s->t = mblx_symbol(s->g, "t");
    s->p = mblx_symbol(s->g, "p");
}

/* Expression k: shares sin(q_k) * cos(q_(k+1)), the let L = let(p*q_k^2 + v_k*q_(k+1)) and a
 * product with its neighbours, so that successive total derivatives meet the same parts. */
static mblx_id expr(sys *s, int k)
{
    mblx_graph *g = s->g;
    int j = (k + 1) % N, h = (k + 2) % N;
    mblx_id sc = mblx_mul(g, mblx_sin(g, s->q[k]), mblx_cos(g, s->q[j]));
    mblx_id L = mblx_let(g, mblx_add(g, mblx_mul(g, s->p, mblx_powc(g, s->q[k], 2.0)), mblx_mul(g, s->v[k], s->q[j])));
    mblx_id pr = mblx_product(g, 4, (mblx_id[]){sc, s->v[j], s->q[h], L});
    mblx_id tt = mblx_mul(g, s->t, mblx_exp(g, s->q[h]));
    return mblx_sum(g, 4, (mblx_id[]){sc, pr, tt, mblx_sqrt(g, mblx_add(g, mblx_const(g, 2.0), mblx_powc(g, L, 2.0)))});
}

/* d/dt with q' = v, v' = a (seeds only for the symbols e depends on, as the model passes them),
 * or with q' = w when other_seed (a different operator for the same symbols) */
static mblx_id tder(sys *s, mblx_id e, int other_seed, int with_t)
{
    mblx_id syms[2 * N], d[2 * N];
    size_t n = 0;
    for (int i = 0; i < N; i++) {
        if (mblx_depends(s->g, e, s->q[i])) syms[n] = s->q[i], d[n++] = other_seed ? s->w[i] : s->v[i];
        if (mblx_depends(s->g, e, s->v[i])) syms[n] = s->v[i], d[n++] = s->a[i];
    }
    return mblx_total_der(s->g, e, n, syms, d, with_t ? s->t : MBLX_NONE);
}

/* the same sequence of calls on both graphs; fresh drops the memo before each call */
static void run(sys *s, int fresh, mblx_id *out, size_t *nout)
{
    size_t k = 0;
    for (int r = 0; r < N; r++) {
        mblx_id e = expr(s, r);
        if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
        mblx_id d1 = tder(s, e, 0, 1);
        out[k++] = d1;
        if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
        out[k++] = tder(s, d1, 0, 1); /* the second derivative: d1's parts met again */
        if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
        out[k++] = mblx_diff(s->g, e, s->q[(r + 1) % N]);
        if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
        out[k++] = mblx_diff(s->g, e, s->v[r]);
        if (r % 4 == 3) { /* seeds that disagree: q' = w, then no time seed (t then a constant) */
            if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
            out[k++] = tder(s, e, 1, 1);
            if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
            out[k++] = tder(s, e, 0, 0);
            if (fresh) CHECK_EQ_INT(mblx_graph_drop_table(s->g), 0);
            out[k++] = tder(s, e, 0, 1); /* back to the first operator */
        }
    }
    *nout = k;
}

TEST(kept_derivatives_are_the_fresh_nodes)
{
    sys a, b;
    sys_make(&a);
    sys_make(&b);
    CHECK(a.g && b.g);
    mblx_id ra[8 * N], rb[8 * N];
    size_t na = 0, nb = 0;
    run(&a, 0, ra, &na);
    run(&b, 1, rb, &nb);
    CHECK_EQ_INT((int)na, (int)nb);
    CHECK_EQ_INT(mblx_graph_status(a.g, NULL), 0);
    CHECK_EQ_INT(mblx_graph_status(b.g, NULL), 0);
    CHECK_EQ_INT((int)mblx_node_count(a.g), (int)mblx_node_count(b.g));
    int nonzero = 0;
    for (size_t i = 0; i < na; i++) {
        CHECK_EQ_INT((int)ra[i], (int)rb[i]);
        nonzero += mblx_node_op(a.g, ra[i]) != MBLX_OP_CONST;
    }
    CHECK(nonzero >= (int)na - 2); /* real derivatives, not zeros */
    /* the repeated calls find what they made: no node is made a second time */
    size_t n0 = mblx_node_count(a.g);
    mblx_id e = expr(&a, 5);
    CHECK_EQ_INT((int)tder(&a, e, 0, 1), (int)ra[4 * 5 + 1 * 3]); /* r = 5: after r = 3's three extra calls */
    CHECK_EQ_INT((int)mblx_node_count(a.g), (int)n0);
    mblx_graph_free(a.g);
    mblx_graph_free(b.g);
}

/* The values: the kept total derivative of e agrees with the central difference of e along the
 * path q(t) = q0 + v0 t, v constant (a = 0). */
static double eval_at(sys *s, mblx_id e, double tv, double dt)
{
    double vals[4 * N + 2] = {0}, out = 0;
    for (int i = 0; i < N; i++) {
        vals[mblx_symbol_index(s->g, s->v[i])] = 0.05 * i - 0.2;
        vals[mblx_symbol_index(s->g, s->q[i])] = 0.1 * i + 0.3 + (0.05 * i - 0.2) * dt;
    }
    vals[mblx_symbol_index(s->g, s->p)] = 1.7;
    vals[mblx_symbol_index(s->g, s->t)] = tv + dt;
    CHECK_EQ_INT(mblx_eval(s->g, e, vals, &out, NULL), 0);
    return out;
}

TEST(kept_total_derivative_value)
{
    sys s;
    sys_make(&s);
    CHECK(s.g != NULL);
    mblx_id e = expr(&s, 2), d = MBLX_NONE;
    for (int rep = 0; rep < 3; rep++) d = tder(&s, e, 0, 1); /* the second and third from the memo */
    CHECK(mblx_node_op(s.g, d) != MBLX_OP_CONST);
    double h = 1e-5, fd = (eval_at(&s, e, 0.4, h) - eval_at(&s, e, 0.4, -h)) / (2 * h);
    double dv = eval_at(&s, d, 0.4, 0.0);
    CHECK_MSG(fabs(dv - fd) <= 1e-6 * (1 + fabs(fd)), "d/dt %.15g, central difference %.15g", dv, fd);
    mblx_graph_free(s.g);
}

int main(void)
{
    RUN(kept_derivatives_are_the_fresh_nodes);
    RUN(kept_total_derivative_value);
    return test_summary("expr_der_memo");
}
