/* Deferred insertion into a large hash-consing table (src/expr/graph.c): once the table has
 * 2^20 slots (8 MB), a lookup is skipped for a node with an operand that is an operand of no node (it
 * cannot exist), and new entries wait in a batch before they go into the table. Which nodes exist
 * and their handles must not change: a graph reserved large from the start (deferring from its
 * first node) makes the same handles as one that grows into it (its operand marks then made from
 * every node), making the same expressions again finds every node (in the table or still in the
 * batch) and makes none, and so does it after the table was grown or dropped with entries in the
 * batch. A lookup is also skipped when the filter of the table's hashes has no entry with the
 * node's hash: a filter that missed an entry (not made again when the table grows or is rebuilt,
 * or an entry not added) would make a node twice, and the counts below would differ. */
#include <stdio.h>

#include "mblin/expr.h"
#include "test.h"

enum { NS = 2000, NROW = 60000 };

/* row i: a chain of new nodes over shared symbols, ending in a sum with an older row */
static mblx_id row(mblx_graph *g, const mblx_id *x, const mblx_id *r, int i)
{
    mblx_id a = x[i % NS], b = x[(7 * i + 3) % NS];
    mblx_id p = mblx_mul(g, mblx_sub(g, a, b), mblx_add(g, a, mblx_const(g, 0.25 * (i % 97))));
    mblx_id s = mblx_sin(g, mblx_mul(g, p, b));
    mblx_id t = mblx_powc(g, mblx_add(g, s, p), 2.0);
    return i > 10 ? mblx_add(g, t, r[i / 2]) : t;
}

static void build(mblx_graph *g, mblx_id *x, mblx_id *r)
{
    for (int i = 0; i < NS; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        x[i] = mblx_symbol(g, nm);
    }
    for (int i = 0; i < NROW; i++) r[i] = row(g, x, r, i);
}

static mblx_id xa[NS], xb[NS], ra[NROW], rb[NROW], rc_[NROW];

TEST(deferred_table_same_handles)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    CHECK_EQ_INT(mblx_graph_reserve(a, 400000), 0); /* a table of 2^20 slots: deferring at once */
    build(a, xa, ra);
    build(b, xb, rb); /* grows into it */
    CHECK(mblx_node_count(a) > 300000); /* past 2^19 slots at half load: b grows to 2^20 */
    CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
    int same = 1;
    for (int i = 0; i < NROW; i++) same &= ra[i] == rb[i];
    CHECK(same);
    /* every node found again, the last ones still in the batch: none made */
    size_t n = mblx_node_count(a);
    for (int i = 0; i < NROW; i++) rc_[i] = row(a, xa, ra, i);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n);
    same = 1;
    for (int i = 0; i < NROW; i++) same &= rc_[i] == ra[i];
    CHECK(same);
    /* the table grown to 2^22 slots with entries in the batch: the filter of its hashes is made
     * again from the entries moved, and every node is still found (none made) */
    (void)mblx_mul(a, ra[NROW - 3], ra[NROW - 4]);
    n = mblx_node_count(a);
    CHECK_EQ_INT(mblx_graph_reserve(a, 2000000), 0);
    for (int i = 0; i < NROW; i++) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n);
    /* a few new nodes (in the batch), then the table dropped and looked up again */
    mblx_id extra = mblx_mul(a, ra[NROW - 1], ra[NROW - 2]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n + 1);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    CHECK_EQ_INT((int)mblx_mul(a, ra[NROW - 1], ra[NROW - 2]), (int)extra);
    for (int i = 0; i < NROW; i += 7) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n + 1);
    /* and b makes the same new nodes with the same handles */
    (void)mblx_mul(b, rb[NROW - 3], rb[NROW - 4]);
    CHECK_EQ_INT((int)mblx_mul(b, rb[NROW - 1], rb[NROW - 2]), (int)extra);
    CHECK_EQ_INT(mblx_graph_status(a, NULL), 0);
    CHECK_EQ_INT(mblx_graph_status(b, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

/* 1 when node e of a and node f of b depend on the same symbols (the same handles in both) */
static int same_deps(const mblx_graph *a, mblx_id e, const mblx_graph *b, mblx_id f)
{
    size_t na, nb;
    const uint32_t *da = mblx_node_deps(a, e, &na), *db = mblx_node_deps(b, f, &nb);
    if (na != nb) return 0;
    for (size_t k = 0; k < na; k++)
        if (da[k] != db[k]) return 0;
    return 1;
}

/* mblx_graph_drop_table frees the operands' marks and the dependence unions' scratch with the
 * table: the marks are made again from every node by the next lookup, the scratch by the next
 * union. Marks made from fewer nodes would skip lookups of nodes that exist (made twice: the
 * counts differ); a scratch not grown again would be written through NULL. */
TEST(dropped_marks_made_again)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    CHECK_EQ_INT(mblx_graph_reserve(a, 400000), 0);
    CHECK_EQ_INT(mblx_graph_reserve(b, 400000), 0);
    build(a, xa, ra);
    build(b, xb, rb);
    size_t n = mblx_node_count(a);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0); /* twice: nothing more to free */
    for (int i = 0; i < NROW; i += 3) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n); /* every node found through the remade marks */
    /* new nodes over old ones (their unions need the scratch), dropped between: as b makes them */
    int same = 1;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 200; i++) {
            int j = NROW - 1 - 5 * i - round;
            mblx_id e = mblx_add(a, mblx_mul(a, ra[j], xa[(i + round) % NS]), ra[i + 11]);
            mblx_id f = mblx_add(b, mblx_mul(b, rb[j], xb[(i + round) % NS]), rb[i + 11]);
            same &= e == f && same_deps(a, e, b, f);
        }
        CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
        CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    }
    CHECK(same);
    CHECK(mblx_node_count(a) > n);
    CHECK_EQ_INT(mblx_graph_status(a, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

int main(void)
{
    RUN(deferred_table_same_handles);
    RUN(dropped_marks_made_again);
    return test_summary("expr_defer");
}
