/* Session 23's cheaper graph machinery (issue 31 item 2, issue 34 item 5), each against the way it
 * was made before:
 *
 *   small_unions: a node of 2 to 8 operands gets the sorted union of its operands' dependence
 *     sets (compute_deps now merges the others into the largest set where it lies), checked
 *     against the union of the symbols this test put into each operand.
 *   const_cache: mblx_const returns one node per value, also for values whose cache slots
 *     collide, and the node holds the value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "mblin/expr.h"
#include "test.h"

enum { NS = 40, NOPS = 8, NTRIALS = 3000 };

TEST(small_unions)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[NS];
    char nm[8];
    for (int i = 0; i < NS; i++) {
        snprintf(nm, sizeof nm, "s%d", i);
        x[i] = mblx_symbol(g, nm);
    }
    unsigned r = 99u;
    int wrong = 0, made = 0;
    for (int t = 0; t < NTRIALS; t++) {
        /* operands: sin of a sum of a few chosen symbols (their set is those symbols), sometimes
         * an operand repeated, sometimes one that is a subset of another */
        int nops = 2 + t % (NOPS - 1);
        unsigned char want[NS];
        memset(want, 0, sizeof want);
        mblx_id ops[NOPS];
        for (int o = 0; o < nops; o++) {
            if (o > 0 && t % 5 == 0) { /* a repeated operand */
                ops[o] = ops[o - 1];
                continue;
            }
            mblx_id terms[6];
            r = r * 1103515245u + 12345u;
            int nt = 1 + (int)((r >> 8) % 6);
            for (int k = 0; k < nt; k++) {
                r = r * 1103515245u + 12345u;
                int sym = (int)((r >> 8) % (t % 3 == 0 ? 8 : NS)); /* narrow: many sets within others */
                terms[k] = x[sym];
                want[sym] = 1;
            }
            ops[o] = mblx_sin(g, mblx_sum(g, (size_t)nt, terms));
        }
        mblx_id e = mblx__intern(g, MBLX_OP_MUL, 1.0 + t, (size_t)nops, ops); /* made as given */
        size_t nd = 0;
        const uint32_t *dep = mblx_node_deps(g, e, &nd);
        size_t k = 0;
        for (int i = 0; i < NS; i++) {
            if (!want[i]) continue;
            if (k >= nd || dep[k] != (uint32_t)mblx_symbol_index(g, x[i])) wrong++;
            k++;
        }
        if (k != nd) wrong++;
        made++;
    }
    CHECK(made == NTRIALS);
    CHECK(wrong == 0);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

TEST(const_cache)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    enum { NV = 5000 }; /* more values than the cache's slots: many collide */
    static mblx_id first[NV];
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < NV; i++) {
            double v = pass == 2 ? -(0.25 * i + 1.0) : 0.25 * i + 1.0; /* pass 2: other values */
            mblx_id c = mblx_const(g, v);
            double got = NAN;
            CHECK(mblx_is_const(g, c, &got) && got == v);
            if (pass == 0) first[i] = c;
            if (pass == 1) CHECK(c == first[i]);
            if (pass == 2) CHECK(c != first[i]);
        }
    CHECK(mblx_const(g, -0.0) == mblx_const(g, 0.0));
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(small_unions);
    RUN(const_cache);
    return test_summary("expr_scaled");
}
