/* mblx_graph_drop_table (issue 31, item 2): a graph whose hash-consing table was freed finds every
 * node it had (the same handles, no new node), makes new nodes with the handles a graph that never
 * dropped its table gives, rebuilds the table only when a node is looked up (an allocation that
 * fails then is the graph's out-of-memory error), and mblx_graph_reserve rebuilds it too. The drop
 * frees the derivatives' per-node scratch as well: derivatives taken after it (which make that
 * scratch again) are the nodes, with the handles, of a graph that never dropped anything. */
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

/* d out[i] / d x[j] for j = i, i + 1, i + 2 (the last: structurally 0) into d[3 * i + k]. */
static void derivatives(mblx_graph *g, const mblx_id *x, const mblx_id *out, mblx_id *d)
{
    for (int i = 0; i < NSYM; i++)
        for (int k = 0; k < 3; k++) d[3 * i + k] = mblx_diff(g, out[i], x[(i + k) % NSYM]);
}

TEST(derivatives_after_a_drop)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    mblx_id xa[NSYM], xb[NSYM], ra[NSYM], rb[NSYM], da[3 * NSYM], db[3 * NSYM], ea[3 * NSYM];
    symbols(a, xa);
    symbols(b, xb);
    rows(a, xa, 2.0, ra);
    rows(b, xb, 2.0, rb);
    derivatives(a, xa, ra, da);
    derivatives(b, xb, rb, db);
    size_t n = mblx_node_count(a);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    derivatives(a, xa, ra, ea); /* found again: the same nodes, none made */
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n);
    for (int i = 0; i < 3 * NSYM; i++) CHECK_EQ_INT((int)ea[i], (int)da[i]);
    /* new rows and their derivatives, dropped between the two: as in b, which never dropped */
    rows(a, xa, 3.0, ra);
    rows(b, xb, 3.0, rb);
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    derivatives(a, xa, ra, da);
    derivatives(b, xb, rb, db);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
    CHECK(mblx_node_count(a) > n);
    for (int i = 0; i < 3 * NSYM; i++) CHECK_EQ_INT((int)da[i], (int)db[i]);
    /* a Jacobian after a drop (its column traversals share one epoch) equals b's */
    mblx_sparse Ja, Jb;
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);
    CHECK_EQ_INT(mblx_jacobian(a, NSYM, ra, NSYM, xa, &Ja), 0);
    CHECK_EQ_INT(mblx_jacobian(b, NSYM, rb, NSYM, xb, &Jb), 0);
    CHECK_EQ_INT(Ja.colptr[NSYM], Jb.colptr[NSYM]);
    CHECK_EQ_INT(Ja.colptr[NSYM], 3 * NSYM - NSYM); /* two entries a row */
    for (int p = 0; p < Ja.colptr[NSYM]; p++) {
        CHECK_EQ_INT(Ja.rowidx[p], Jb.rowidx[p]);
        CHECK_EQ_INT((int)Ja.node[p], (int)Jb.node[p]);
    }
    mblx_sparse_free(&Ja);
    mblx_sparse_free(&Jb);
    CHECK_EQ_INT(mblx_graph_status(a, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

int main(void)
{
    RUN(derivatives_after_a_drop);
    RUN(dropped_table_finds_every_node);
    RUN(dropped_table_is_freed_and_rebuilt_on_demand);
    return test_summary("expr_drop_table");
}
