/* mblx_graph_drop_table (issue 31, item 2): a graph whose hash-consing table was freed finds every
 * node it had (the same handles, no new node), makes new nodes with the handles a graph that never
 * dropped its table gives, rebuilds the table only when a node is looked up (an allocation that
 * fails then is the graph's out-of-memory error), and mblx_graph_reserve rebuilds it too. */
#include <stdio.h>

#include "mblin/expr.h"
#include "test.h"

enum { NSYM = 300 };

static void symbols(mblx_graph *g, mblx_id *x)
{
    for (int i = 0; i < NSYM; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        x[i] = mblx_symbol(g, nm);
    }
}

/* Rows out[i] = (i + c)*x_i*x_(i+1) + sin(x_i) - i/2. */
static void rows(mblx_graph *g, const mblx_id *x, double c, mblx_id *out)
{
    for (int i = 0; i < NSYM; i++) {
        mblx_id p = mblx_product(g, 3, (mblx_id[]){mblx_const(g, i + c), x[i], x[(i + 1) % NSYM]});
        out[i] = mblx_sub(g, mblx_add(g, p, mblx_sin(g, x[i])), mblx_const(g, 0.5 * i));
    }
}

TEST(dropped_table_finds_every_node)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    mblx_id xa[NSYM], xb[NSYM], ra[NSYM], rb[NSYM], sa[NSYM], sb[NSYM];
    symbols(a, xa);
    symbols(b, xb);
    rows(a, xa, 2.0, ra);
    rows(b, xb, 2.0, rb);
    size_t n = mblx_node_count(a);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0); /* twice: nothing more to free */
    rows(a, xa, 2.0, sa); /* every node exists: found, none made */
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n);
    for (int i = 0; i < NSYM; i++) CHECK_EQ_INT((int)sa[i], (int)ra[i]);
    CHECK_EQ_INT((int)mblx_symbol(a, "x7"), (int)xa[7]); /* symbols are found by name */
    /* new nodes: the same handles as in a graph that kept its table */
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    rows(a, xa, 3.0, sa);
    rows(b, xb, 3.0, sb);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
    CHECK(mblx_node_count(a) > n);
    for (int i = 0; i < NSYM; i++) CHECK_EQ_INT((int)sa[i], (int)sb[i]);
    CHECK_EQ_INT(mblx_graph_status(a, NULL), 0);
    CHECK_EQ_INT(mblx_graph_drop_table(NULL), MBL_EARG);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

TEST(dropped_table_is_freed_and_rebuilt_on_demand)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x[NSYM], r[NSYM], s[NSYM];
    symbols(g, x);
    rows(g, x, 2.0, r);
    CHECK_EQ_INT(mblx_graph_drop_table(g), 0);
    /* without a table, looking up even an existing node needs one: it is gone */
    mbl_alloc_fail_after(0);
    mblx_id e = mblx_sin(g, x[3]);
    mbl_alloc_fail_after(-1);
    CHECK_EQ_INT((int)e, (int)MBLX_NONE);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), MBL_ENOMEM);
    mblx_graph_free(g);

    /* mblx_graph_reserve rebuilds it: then the rows are found and made without allocating */
    g = mblx_graph_new();
    symbols(g, x);
    rows(g, x, 2.0, r);
    CHECK_EQ_INT(mblx_graph_drop_table(g), 0);
    CHECK_EQ_INT(mblx_graph_reserve(g, mblx_node_count(g) + 10 * NSYM), 0);
    mbl_alloc_fail_after(0);
    rows(g, x, 2.0, s);
    rows(g, x, 5.0, s);
    mbl_alloc_fail_after(-1);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(dropped_table_finds_every_node);
    RUN(dropped_table_is_freed_and_rebuilt_on_demand);
    return test_summary("expr_drop_table");
}
