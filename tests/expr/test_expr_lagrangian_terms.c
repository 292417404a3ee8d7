/* The gradient terms of e - sum_j lam_j Phi_j without lam_j Phi_j, their sum and the difference
 * made (mblx__lagrangian_terms, gradient_terms.h; the EOM rows' -dL/dq of src/model/formulate.c):
 * two graphs built alike; in one the former way (mblx_mul, mblx_sum, mblx_sub, then
 * mblx__gradient_terms), in the other mblx__lagrangian_terms. Each coordinate's terms must be the
 * same expressions node for node (op, value, operands in order), in the same order; the new path
 * makes m + 3 nodes fewer where it is taken (more than MBLX_FLATTEN_MAX constraints, each a sum; e a
 * sum of few terms flattened into the root, or a wide one), and the same nodes where it is not
 * (64 constraints or fewer, a constraint that is a product or a symbol, a multiplier among the
 * coordinates). The constraints share subexpressions with e's springs (q_j^2), so the sweep sums
 * adjoints from both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "expr/gradient_terms.h"
#include "expr_pool.h"
#include "test.h"

enum { NQ = 90, MMAX = 90, TEXT = 16384 };

static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                   mblx_id *out, char *why, size_t whylen)
{
    (void)ud, (void)args, (void)why, (void)whylen;
    if (nargs >= 0) return 1;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

static mblx_id parse(mblx_graph *g, const char *text)
{
    mblx_parse_opts o = {resolve, NULL, 0, 0, 0, NULL};
    mblx_id e = MBLX_NONE;
    return mblx_parse(g, text, strlen(text), &o, &e, NULL) ? MBLX_NONE : e;
}

/* the symbols q0.., lam0.. and e's and the constraints' parsed, as a model's load makes them */
static int build(mblx_graph *g, const char *e_text, int m, const char *phi_fmt, mblx_id *q, mblx_id *lam, mblx_id *phi,
                 mblx_id *e)
{
    char nm[32], txt[256];
    for (int i = 0; i < NQ; i++) snprintf(nm, sizeof nm, "q%d", i), q[i] = mblx_symbol(g, nm);
    for (int j = 0; j < m; j++) snprintf(nm, sizeof nm, "lam%d", j), lam[j] = mblx_symbol(g, nm);
    *e = parse(g, e_text);
    for (int j = 0; j < m; j++) {
        snprintf(txt, sizeof txt, phi_fmt, j, (j + 1) % NQ, j, (j + 1) % NQ);
        if ((phi[j] = parse(g, txt)) == MBLX_NONE) return -1;
    }
    return *e == MBLX_NONE ? -1 : 0;
}

/* taken: the new path expected (m + 3 nodes fewer); qs: the coordinates seeded (lam0 among them
 * where 1) */
static void check(const char *what, const char *e_text, int m, const char *phi_fmt, int taken, int lam_seed)
{
    mblx_graph *g[2] = {mblx_graph_new(), mblx_graph_new()};
    CHECK_MSG(g[0] && g[1], "%s: graphs", what);
    if (!g[0] || !g[1]) return;
    mblx_id q[2][NQ + 1], lam[2][MMAX], phi[2][MMAX], e[2];
    size_t ptr[2][NQ + 2], nq = NQ + (lam_seed ? 1 : 0);
    mblx_id *t[2] = {NULL, NULL};
    for (int s = 0; s < 2; s++) {
        CHECK_MSG(!build(g[s], e_text, m, phi_fmt, q[s], lam[s], phi[s], &e[s]), "%s: parsed", what);
        q[s][NQ] = lam[s][0];
    }
    size_t n0 = mblx_node_count(g[0]);
    CHECK_MSG(n0 == mblx_node_count(g[1]), "%s: built alike", what);
    mblx_id P[MMAX];
    for (int j = 0; j < m; j++) P[j] = mblx_mul(g[0], lam[0][j], phi[0][j]);
    mblx_id L1 = mblx_sub(g[0], e[0], mblx_sum(g[0], (size_t)m, P));
    CHECK_MSG(!mblx__gradient_terms(g[0], L1, nq, q[0], ptr[0], &t[0]), "%s: the former way", what);
    CHECK_MSG(!mblx__lagrangian_terms(g[1], e[1], (size_t)m, lam[1], phi[1], nq, q[1], ptr[1], &t[1]), "%s: new", what);
    CHECK_MSG(mblx_node_count(g[1]) == mblx_node_count(g[0]) - (taken ? (size_t)m + 3 : 0),
              "%s: %zu nodes against %zu (%s)", what, mblx_node_count(g[1]), mblx_node_count(g[0]),
              taken ? "taken" : "not taken");
    for (size_t i = 0; i <= nq && t[0] && t[1]; i++) CHECK_MSG(ptr[0][i] == ptr[1][i], "%s: ptr[%zu]", what, i);
    size_t nt = t[0] && t[1] ? ptr[0][nq] : 0, bad = 0;
    for (size_t k = 0; k < nt; k++) bad += !pool_same(g[0], t[0][k], g[1], t[1][k]);
    CHECK_MSG(bad == 0, "%s: %zu of %zu terms differ", what, bad, nt);
    CHECK_MSG(nt > (size_t)m, "%s: %zu terms", what, nt);
    free(t[0]), free(t[1]);
    mblx_graph_free(g[0]), mblx_graph_free(g[1]);
}

/* e's text: springs k/2*(sqrt(q_j^2 + q_j+1^2) - L)^2 over w of the coordinates, gravity on each */
static const char *e_text(int w, char *buf)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, TEXT - n, "0");
    for (int j = 0; j < w; j++)
        n += (size_t)snprintf(buf + n, TEXT - n, " - 9.81*q%d + 25/2*(sqrt(q%d^2 + q%d^2) - 1.4)^2", j, j, (j + 1) % NQ);
    return buf;
}

TEST(lagrangian_terms_as_before)
{
    static char buf[TEXT];
    const char *four = "(q%d - q%d)^2 + q%d^2 - q%d*q%d";
    check("e narrow, 90 constraints", "q0^2 + 2*q1*q2 - 9.81*q3", 90, four, 1, 0);
    check("e wide, 90 constraints", e_text(NQ, buf), 90, four, 1, 0);
    check("e of springs, 70 constraints", e_text(30, buf), 70, "q%d^2 + q%d^2 - 1 + 0*q%d*q%d", 1, 0);
    check("65 constraints with sin", e_text(10, buf), 65, "sin(q%d) - q%d + q%d^2*q%d", 1, 0);
    check("64 constraints", e_text(NQ, buf), 64, four, 0, 0);
    check("a constraint a product", e_text(NQ, buf), 90, "q%d*q%d*(q%d + q%d)", 0, 0);
    check("a multiplier seeded", e_text(NQ, buf), 90, four, 0, 1);
    check("e a product", "q0*q1", 90, four, 0, 0);
}

int main(void)
{
    RUN(lagrangian_terms_as_before);
    return test_summary("expr_lagrangian_terms");
}
