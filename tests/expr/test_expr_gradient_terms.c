/* The gradient left as its symbols' negated contributions (mblx__gradient_terms) and the sum that
 * takes them (mblx__sum_minus_terms), against the general path they shortcut: mblx_gradient's
 * node, and mblx_sum of the other terms with mblx_neg of that node (the EOM rows' old
 * construction, src/model/formulate.c), compared as nodes in the same graph (hash-consing gives
 * the very node when the structure agrees). */
#include <stdio.h>
#include <stdlib.h>

#include "expr/gradient_terms.h"
#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NX = 6, NWIDE = 70 };

/* Check the shortcut on e over the symbols x[0..n): each symbol's terms negated back and summed
 * give mblx_gradient's node; the row sum from the terms is the old row's node. */
static void check_expr(mblx_graph *g, mblx_id e, size_t n, const mblx_id *x, mblx_id other, const char *what)
{
    mblx_id *out = malloc(n * sizeof *out), *w = NULL;
    size_t *ptr = malloc((n + 1) * sizeof *ptr);
    CHECK(out && ptr);
    if (!out || !ptr) goto done;
    /* the shortcut first: the nodes it makes do not hide a difference (the old path finds or makes
     * the nodes it needs either way) */
    CHECK_MSG(mblx__gradient_terms(g, e, n, x, ptr, &w) == 0, "%s: gradient_terms", what);
    CHECK_MSG(mblx_gradient(g, e, n, x, out) == 0, "%s: gradient", what);
    if (!w) goto done;
    for (size_t i = 0; i < n; i++) {
        size_t m = ptr[i + 1] - ptr[i];
        mblx_id *u = malloc((m ? m : 1) * sizeof *u);
        for (size_t j = 0; j < m; j++) u[j] = mblx_neg(g, w[ptr[i] + j]);
        CHECK_MSG(mblx_sum(g, m, u) == out[i], "%s: symbol %zu: the terms' sum is not the gradient's", what, i);
        free(u);
        /* the row: dp - g1_i + g2 - F with g2 = other, F = x[0] * other */
        mblx_id dp = mblx_mul(g, mblx_const(g, 3.0), x[(i + 1) % n]);
        mblx_id F = mblx_mul(g, x[0], other);
        mblx_id old4[4] = {dp, mblx_neg(g, out[i]), other, mblx_neg(g, F)};
        mblx_id t3[3] = {dp, other, mblx_neg(g, F)};
        mblx_id now = mblx__sum_minus_terms(g, 3, t3, 1, m, w + ptr[i]);
        CHECK_MSG(now == mblx_sum(g, 4, old4), "%s: symbol %zu: the row differs", what, i);
    }
done:
    free(out), free(ptr), free(w);
}

TEST(gradient_terms_against_gradient)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[NX], lam[NX], y[NWIDE];
    pool_symbols(g, "x", NX, x);
    pool_symbols(g, "l", NX, lam);
    pool_symbols(g, "y", NWIDE, y);
    mblx_id c2 = mblx_const(g, 2.0), one = mblx_const(g, 1.0);
    /* a four-bar's Lagrangian: T - V - lambda.Phi, Phi_j = (x_j+1 - x_j)^2 + x_j^2 - 1, springs
     * k/2 (sqrt(x_j^2 + x_j+1^2) - 1.4)^2, gravity terms linear in x */
    mblx_id terms[4 * NX];
    size_t nt = 0;
    for (int j = 0; j + 1 < NX; j++) {
        mblx_id d = mblx_sub(g, x[j + 1], x[j]);
        mblx_id phi = mblx_sub(g, mblx_add(g, mblx_powc(g, d, 2.0), mblx_powc(g, x[j], 2.0)), one);
        terms[nt++] = mblx_neg(g, mblx_mul(g, lam[j], phi));
        mblx_id s = mblx_sqrt(g, mblx_add(g, mblx_powc(g, x[j], 2.0), mblx_powc(g, x[j + 1], 2.0)));
        terms[nt++] = mblx_neg(g, mblx_mul(g, mblx_const(g, 12.5), mblx_powc(g, mblx_sub(g, s, mblx_const(g, 1.4)), 2.0)));
        terms[nt++] = mblx_mul(g, mblx_const(g, 9.81 / 2), mblx_add(g, x[j], x[j + 1]));
    }
    mblx_id L = mblx_sum(g, nt, terms);
    check_expr(g, L, NX, x, lam[1], "four-bar");
    /* lets, functions, a product of sums, constants in the gradient, the root a symbol */
    mblx_id a = mblx_let(g, mblx_mul(g, x[0], mblx_sin(g, x[1])));
    mblx_id pr = mblx_mul(g, mblx_add(g, x[2], x[3]), mblx_add(g, x[3], c2));
    mblx_id mix[4] = {mblx_mul(g, a, a), pr, mblx_mul(g, mblx_const(g, -4.0), x[4]), mblx_exp(g, mblx_mul(g, x[4], x[5]))};
    check_expr(g, mblx_sum(g, 4, mix), NX, x, x[5], "mixed");
    check_expr(g, x[3], NX, x, lam[0], "symbol");
    check_expr(g, mblx_const(g, 7.0), NX, x, lam[0], "constant");
    /* a symbol with more contributions than a sum flattens (the row keeps the gradient's sum), a
     * contribution that is a sum (the adjoint of a wide sum's term), a wide product */
    mblx_id wide[NWIDE], wp[NWIDE];
    for (int i = 0; i < NWIDE; i++) wide[i] = mblx_mul(g, mblx_sin(g, y[i]), x[0]);
    for (int i = 0; i < NWIDE; i++) wp[i] = mblx_sin(g, y[i]);
    mblx_id ws = mblx_sum(g, NWIDE, wide);
    check_expr(g, ws, NX, x, lam[2], "wide");
    mblx_id sq = mblx_mul(g, mblx_add(g, x[1], mblx_sum(g, NWIDE, wp)), x[1]);
    check_expr(g, sq, NX, x, lam[2], "sum adjoint");
    mblx_id prod = mblx_mul(g, mblx_product(g, NWIDE, wp), x[2]);
    check_expr(g, mblx_add(g, prod, mblx_mul(g, prod, x[3])), NX, x, lam[3], "wide product");
    mblx_graph_free(g);
}

/* Gravity terms c (gx (x_i + x_i+1) + gy (y_i + y_i+1)) of many bodies: every inner sum gets the
 * same adjoint (c gx or c gy, alternating), whose negation each sum gives its symbols. A sweep this
 * large keeps the negations made (diff_grad.c neg_kept): each symbol's terms must still be the
 * gradient's (a negation kept under the wrong adjoint gives gy's to an x), and each contribution
 * the node the builder makes for -(c gx) or -(c gy), and no more than the two negations are made
 * (no node differs from the path without the memo, hash-consing finding them again). */
TEST(shared_adjoints_negated)
{
    enum { NB = 200 };
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id q[2 * NB], par[3];
    pool_symbols(g, "q", 2 * NB, q);
    pool_symbols(g, "p", 3, par); /* gx, gy, c */
    mblx_id *x = q, *y = q + NB, terms[NB];
    for (int i = 0; i < NB; i++) {
        int k = (i + 1) % NB;
        mblx_id gxs = mblx_mul(g, par[0], mblx_add(g, x[i], x[k]));
        mblx_id gys = mblx_mul(g, par[1], mblx_add(g, y[i], y[k]));
        terms[i] = mblx_mul(g, mblx_mul(g, mblx_const(g, -0.5), par[2]), mblx_add(g, gxs, gys));
    }
    mblx_id V = mblx_sum(g, NB, terms);
    size_t *ptr = malloc((2 * NB + 1) * sizeof *ptr);
    mblx_id *w = NULL;
    CHECK(ptr != NULL);
    if (ptr && mblx__gradient_terms(g, V, 2 * NB, q, ptr, &w) == 0 && w) {
        size_t n1 = mblx_node_count(g);
        mblx_id c = mblx_scale(g, -0.5, par[2]);
        mblx_id want[2] = {mblx_neg(g, mblx_mul(g, c, par[0])), mblx_neg(g, mblx_mul(g, c, par[1]))};
        CHECK(mblx_node_count(g) == n1); /* made by the sweep already */
        int bad = 0;
        for (int i = 0; i < 2 * NB; i++) {
            bad += ptr[i + 1] - ptr[i] != 2;
            for (size_t j = ptr[i]; j < ptr[i + 1]; j++) bad += w[j] != want[i >= NB];
        }
        CHECK_MSG(bad == 0, "%d terms differ", bad);
    }
    free(ptr), free(w);
    check_expr(g, V, 2 * NB, q, par[2], "gravity");
    mblx_graph_free(g);
}

int main(void)
{
    RUN(gradient_terms_against_gradient);
    RUN(shared_adjoints_negated);
    return test_summary("expr_gradient_terms");
}
