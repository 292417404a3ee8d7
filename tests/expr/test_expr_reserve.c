/* mblx_graph_reserve (issue 31, item 2): a graph reserved once builds the nodes it was reserved
 * for without allocating (no growth of the node arrays, operand pools or hash-consing table on
 * the way), hands out the same handles as a graph grown step by step, and grows as usual past the
 * reserve. */
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "expr/symbol_reserve.h"
#include "mblin/expr.h"
#include "test.h"

enum { NSYM = 500 };

/* NSYM symbols x0, x1, ... (x[i]). */

static void symbols(mblx_graph *g, mblx_id *x)
{
    for (int i = 0; i < NSYM; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        x[i] = mblx_symbol(g, nm);
    }
}

/* Rows out[i] = (i + 2)*x_i*x_(i+1) + sin(x_i) - i/2 (about 5 new nodes each). */
static void rows(mblx_graph *g, const mblx_id *x, mblx_id *out)
{
    for (int i = 0; i < NSYM; i++) {
        mblx_id p = mblx_product(g, 3, (mblx_id[]){mblx_const(g, i + 2.0), x[i], x[(i + 1) % NSYM]});
        out[i] = mblx_sub(g, mblx_add(g, p, mblx_sin(g, x[i])), mblx_const(g, 0.5 * i));
    }
}

TEST(reserved_graph_builds_without_allocating)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    mblx_id x[NSYM], r[NSYM];
    symbols(g, x);
    size_t n0 = mblx_node_count(g);
    CHECK_EQ_INT(mblx_graph_reserve(g, n0 + 10 * NSYM), 0);
    mbl_alloc_fail_after(0); /* from here on, every allocation fails */
    rows(g, x, r);
    mbl_alloc_fail_after(-1);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    CHECK(mblx_node_count(g) > n0 + 4 * NSYM); /* the rows did make new nodes */
    mblx_graph_free(g);

    /* the same without the reserve: the graph must grow, so the first failing allocation stops it */
    g = mblx_graph_new();
    symbols(g, x);
    mbl_alloc_fail_after(0);
    rows(g, x, r);
    mbl_alloc_fail_after(-1);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), MBL_ENOMEM);
    mblx_graph_free(g);
}

TEST(reserve_changes_no_handle)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    CHECK_EQ_INT(mblx_graph_reserve(b, 100000), 0);
    mblx_id xa[NSYM], xb[NSYM], ra[NSYM], rb[NSYM];
    symbols(a, xa);
    symbols(b, xb);
    rows(a, xa, ra);
    rows(b, xb, rb);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
    int same = 1;
    for (int i = 0; i < NSYM; i++) same &= ra[i] == rb[i] && xa[i] == xb[i];
    CHECK(same);
    char pa[256], pb[256];
    CHECK(mblx_print(a, ra[7], pa, sizeof pa) < sizeof pa);
    CHECK(mblx_print(b, rb[7], pb, sizeof pb) < sizeof pb);
    CHECK(strcmp(pa, pb) == 0);
    CHECK(strcmp(pa, "9*x7*x8 + sin(x7) - 3.5") == 0); /* k_7 = 9, c_7 = 3.5 */
    mblx_graph_free(a);
    mblx_graph_free(b);
}

TEST(grows_past_the_reserve)
{
    mblx_graph *g = mblx_graph_new();
    CHECK_EQ_INT(mblx_graph_reserve(g, 10), 0);
    mblx_id x[NSYM], r[NSYM];
    symbols(g, x);
    rows(g, x, r);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    CHECK(mblx_node_count(g) > 5 * NSYM);
    /* a reserve below the current size changes nothing */
    size_t n = mblx_node_count(g);
    CHECK_EQ_INT(mblx_graph_reserve(g, 1), 0);
    CHECK_EQ_INT((int)mblx_node_count(g), (int)n);
    CHECK(mblx_symbol_find(g, "x3") == x[3]);
    mblx_graph_free(g);
    CHECK_EQ_INT(mblx_graph_reserve(NULL, 10), MBL_EARG);
}

/* mblx__symbol_reserve: the symbols it has room for are made without rehashing the table of names
 * or moving the symbols' arrays, with the handles of a graph grown step by step; past it the
 * table grows as usual and finds every name. */
TEST(symbols_reserved_without_rehash)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    CHECK_EQ_INT(mblx__symbol_reserve(b, NSYM), 0);
    const struct mblx_symslot *tab = b->symtab;
    const uint32_t *nodes = b->sym_node;
    size_t cap = b->symtab_cap;
    CHECK(cap >= 2 * NSYM && (cap & (cap - 1)) == 0);
    mblx_id xa[NSYM], xb[NSYM];
    symbols(a, xa);
    symbols(b, xb);
    CHECK(b->symtab == tab && b->symtab_cap == cap && b->sym_node == nodes);
    int same = 1;
    for (int i = 0; i < NSYM; i++) same &= xa[i] == xb[i];
    CHECK(same);
    /* NSYM more, past the reserve: the table grows and every name is found, none made twice */
    CHECK_EQ_INT(mblx__symbol_reserve(b, 1), 0); /* below the count: nothing changes */
    CHECK(b->symtab == tab);
    for (int i = 0; i < NSYM; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "y%d", i);
        CHECK(mblx_symbol(b, nm) != MBLX_NONE);
    }
    CHECK(b->symtab_cap > cap);
    int found = 1;
    for (int i = 0; i < NSYM; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        found &= mblx_symbol_find(b, nm) == xb[i] && mblx_symbol(b, nm) == xb[i];
    }
    CHECK(found);
    CHECK_EQ_INT((int)mblx_symbol_count(b), 2 * NSYM);
    CHECK_EQ_INT(mblx_graph_status(b, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
    CHECK_EQ_INT(mblx__symbol_reserve(NULL, 10), MBL_EARG);
}

int main(void)
{
    RUN(reserved_graph_builds_without_allocating);
    RUN(reserve_changes_no_handle);
    RUN(grows_past_the_reserve);
    RUN(symbols_reserved_without_rehash);
    return test_summary("expr_reserve");
}
