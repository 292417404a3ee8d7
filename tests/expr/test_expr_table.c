/* The hash-consing table's memory and the deferral's batch (src/expr/graph.c). The table is made
 * anew from the nodes when it grows, is dropped and rebuilt: a graph growing from nothing must find
 * every node it made (none made twice) and give the handles of a graph reserved large from the
 * start, also after a drop and rebuild (it was mapped from the system from 1 MB up; now calloc'd).
 * Its entries' ids widened with the node arrays: ids_widened_under_a_live_table. The batch of
 * a large table's new entries is looked up through slots tagged with the batch's generation (slots
 * of older batches are empty, the slots cleared once the generations start again): a node made and
 * made again at once, while its entry waits in the batch, must be found there across many batches
 * and several restarts of the generations, the count of nodes unchanged. The dependence sets of
 * nodes of one and two operands: see one_and_two_operand_sets. The zeroed blocks the table and the
 * sharing's pair table come from (mblx__zeroed_alloc): zeroed_blocks_either_side. */
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "expr/expr_internal.h"
#include "mblin/expr.h"
#include "mblin/progress.h"
#include "test.h"

enum { NS = 500, NROW = 40000 };

/* row i: new products and sums over the symbols and an older row */
static mblx_id row(mblx_graph *g, const mblx_id *x, const mblx_id *r, int i)
{
    mblx_id a = x[i % NS], b = x[(11 * i + 5) % NS];
    mblx_id p = mblx_mul(g, mblx_add(g, a, mblx_const(g, 0.5 * (i % 89))), b);
    mblx_id s = mblx_cos(g, mblx_sub(g, p, a));
    return i > 3 ? mblx_add(g, mblx_mul(g, s, r[i / 3]), p) : s;
}

/* the symbols y0 .. y(NS-1), then the rows */
static void build(mblx_graph *g, mblx_id *x, mblx_id *r)
{
    char nm[16] = "y";
    for (int i = 0; i < NS; i++) x[i] = (snprintf(nm + 1, sizeof nm - 1, "%d", i), mblx_symbol(g, nm));
    for (int i = 0; i < NROW; i++) r[i] = row(g, x, r, i);
}

static mblx_id xa[NS], xb[NS], ra[NROW], rb[NROW];

TEST(table_through_the_mapped_size)
{
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new();
    CHECK(a && b);
    CHECK_EQ_INT(mblx_graph_reserve(b, 300000), 0); /* 2^20 slots at once */
    build(a, xa, ra); /* 128 slots, grown past 2^17 */
    build(b, xb, rb);
    size_t n = mblx_node_count(a);
    CHECK(n > 100000); /* past 2^17 slots (1 MB) at half load */
    CHECK_EQ_INT((int)n, (int)mblx_node_count(b));
    int same = 1;
    for (int i = 0; i < NROW; i++) same &= ra[i] == rb[i];
    CHECK(same);
    for (int i = 0; i < NROW; i += 5) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n); /* every node found: none made */
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);     /* the table freed */
    for (int i = 0; i < NROW; i += 3) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n); /* the rebuilt table finds them all */
    CHECK_EQ_INT(mblx_graph_reserve(a, 1000000), 0); /* grown: made anew from the nodes */
    CHECK_EQ_INT((int)mblx_mul(a, ra[NROW - 1], ra[NROW - 2]), (int)mblx_mul(b, rb[NROW - 1], rb[NROW - 2]));
    CHECK_EQ_INT(mblx_graph_status(a, NULL), 0);
    CHECK_EQ_INT(mblx_graph_status(b, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
}

TEST(batch_found_across_generations)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g);
    /* deferring from the first node (2^20 slots), the node arrays (2^19) grown on the way: the
     * marks grow with them */
    CHECK_EQ_INT(mblx_graph_reserve(g, 300000), 0);
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y");
    mblx_id prev = mblx_add(g, x, y);
    /* 2048 entries a batch, the generations restarted every 63 batches: 300,000 nodes make 146
     * batches, two restarts */
    int found = 1;
    for (int k = 0; k < 300000; k++) {
        mblx_id c = mblx_const(g, (double)(k % 1000) + 0.25);
        mblx_id e = mblx_mul(g, prev, c); /* new (its operand prev is new) */
        size_t n = mblx_node_count(g);
        found &= mblx_mul(g, prev, c) == e && mblx_node_count(g) == n; /* in the batch */
        prev = mblx_add(g, e, k % 2 ? x : y);
    }
    CHECK(found);
    CHECK(mblx_node_count(g) > 600000);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    mblx_graph_free(g);
}

/* The dependence set of a node of one operand is the operand's, of two operands the sorted union
 * of theirs (made at the pool's end, kept unless within the larger set, read after the pool
 * grows): each checked against the union of the symbols' indices the test chose, in a graph whose
 * pool starts small and grows many times. */
enum { NX = 40, RING = 512 };
static unsigned char want[RING][NX];

static int deps_are(const mblx_graph *g, mblx_id e, const unsigned char *set)
{
    size_t cnt, k = 0;
    const uint32_t *d = mblx_node_deps(g, e, &cnt);
    for (uint32_t s = 0; s < NX; s++)
        if (set[s] && (k >= cnt || d[k++] != s)) return 0;
    return k == cnt;
}

TEST(one_and_two_operand_sets)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g);
    mblx_id x[NX], ring[RING];
    char nm[8] = "z";
    for (int i = 0; i < NX; i++) x[i] = (snprintf(nm + 1, sizeof nm - 1, "%d", i), mblx_symbol(g, nm));
    for (int i = 0; i < RING; i++) {
        ring[i] = x[i % NX];
        memset(want[i], 0, NX);
        want[i][i % NX] = 1;
    }
    unsigned r = 12345u;
    int ok = 1;
    for (int step = 0; step < 30000; step++) {
        r = r * 1103515245u + 12345u;
        int i = (int)((r >> 8) % RING), j = (int)((r >> 18) % RING), k = (int)((i + j + step) % RING);
        mblx_id s = mblx_sin(g, ring[i]); /* one operand */
        ok &= deps_are(g, s, want[i]);
        mblx_id e = mblx_mul(g, s, mblx_cos(g, ring[j])); /* two (sin and cos: no flattening) */
        unsigned char u[NX];
        for (int q = 0; q < NX; q++) u[q] = want[i][q] | want[j][q];
        ok &= deps_are(g, e, u);
        ring[k] = e;
        memcpy(want[k], u, NX);
    }
    CHECK(ok);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    mblx_graph_free(g);
}

/* make_node's checks (a load's progress tick at every node whose handle is a multiple of 4096, the
 * node arrays' room, the table's half) are made only at the node the last ones named: the ticks
 * must come at the same nodes as when checked at every node (each multiple of 4096 made by
 * interning, none at a symbol's), through the growth of the arrays and of the table, and a stop
 * asked at a tick must refuse that node. */
enum { MAXT = 64 };
static double tick_at[MAXT];
static int nticks, stop_at = -1;

static int on_tick(void *user, const char *stage, double done, double total)
{
    (void)user, (void)stage, (void)total;
    if (nticks < MAXT) tick_at[nticks] = done;
    nticks++;
    return stop_at >= 0 && done == (double)stop_at;
}

/* nodes until the graph has n: new sums, and a symbol at every other multiple of 4096 */
static void grow_to(mblx_graph *g, size_t n)
{
    mblx_id x = mblx_symbol(g, "x"), prev = x;
    char nm[16] = "w";
    for (int k = 0; mblx_node_count(g) < n && mblx_graph_status(g, NULL) == 0; k++) {
        size_t c = mblx_node_count(g);
        if (c % 4096 == 0 && (c / 4096) % 2) {
            (void)(snprintf(nm + 1, sizeof nm - 1, "%d", k), mblx_symbol(g, nm));
            continue;
        }
        prev = mblx_add(g, mblx_mul(g, prev, x), mblx_const(g, k + 0.5));
    }
}

TEST(progress_ticks_where_due)
{
    core_progress_stage("graph"); /* (no callback yet: not reported) */
    mbl_progress_set(on_tick, NULL);
    mblx_graph *g = mblx_graph_new();
    CHECK(g);
    grow_to(g, 60000);
    size_t n = mblx_node_count(g), w = 0;
    int same = 1;
    for (size_t m = 0; m < n; m += 4096) {
        if (mblx_node_op(g, (mblx_id)m) == MBLX_OP_SYMBOL) continue;
        same &= w < MAXT && tick_at[w] == (double)m;
        w++;
    }
    CHECK(same);
    CHECK_EQ_INT(nticks, (int)w);
    CHECK(w >= 8);
    mblx_graph_free(g);
    /* a stop asked at the tick of node 8192: that node not made */
    nticks = 0, stop_at = 8192;
    mbl_progress_set(on_tick, NULL);
    g = mblx_graph_new();
    CHECK(g);
    grow_to(g, 60000);
    CHECK_EQ_INT((int)mblx_node_count(g), 8192);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), MBL_ECANCELLED);
    mblx_graph_free(g);
    mbl_progress_set(NULL, NULL);
    core_progress_stage(NULL);
}

/* A table entry holds the node id + 1 in as many low bits as the node arrays' capacity needs and
 * the hash's bits above them (graph.c): when the node arrays grow under a table that does not grow
 * (symbols are made without it), every entry's id is widened in place. The graphs make symbols in
 * rounds four times larger each, then sums and products of the round's symbols (few: the table
 * stays small), so that the node ids outgrow the bits of the table's last making; graph b is
 * reserved large from the start (its entries' bits never change), c under the deferral's large
 * table. Every product made again is found (none made twice) with the handles b gives. Without the
 * widening the new ids run into the tag and are not found; with the width but the entries not
 * cleared, the old entries' tag bits read as part of their ids. */
enum { NW = 1 << 16, NW_STEP = 64 };

static void widen_symbol(mblx_graph *g, mblx_id *s, int i)
{
    char nm[16];
    snprintf(nm, sizeof nm, "w%d", i);
    s[i] = mblx_symbol(g, nm);
}

static mblx_id widen_product(mblx_graph *g, const mblx_id *s, int i)
{
    return mblx_mul(g, mblx_add(g, s[i], s[i / 2]), mblx_const(g, 1.0 + i));
}

/* the rounds of symbols and products, up to nw symbols, after each round every product made
 * again (before the table is next made anew): 1 if all were found */
static int widen_build(mblx_graph *g, mblx_id *s, mblx_id *p, int nw)
{
    int found = 1;
    for (int lo = 0, hi = 64; lo < nw; lo = hi, hi *= 4) {
        for (int i = lo; i < hi && i < nw; i++) widen_symbol(g, s, i);
        for (int i = lo; i < hi && i < nw; i += NW_STEP) p[i] = widen_product(g, s, i);
        size_t n = mblx_node_count(g);
        for (int i = 0; i < hi && i < nw; i += NW_STEP) found &= widen_product(g, s, i) == p[i] && p[i] != MBLX_NONE;
        found &= mblx_node_count(g) == n;
    }
    return found && mblx_graph_status(g, NULL) == 0;
}

TEST(ids_widened_under_a_live_table)
{
    static mblx_id sa[NW], sb[NW], pa[NW], pb[NW];
    mblx_graph *a = mblx_graph_new(), *b = mblx_graph_new(), *c = mblx_graph_new();
    CHECK(a && b && c);
    CHECK_EQ_INT(mblx_graph_reserve(a, 100), 0); /* 128 nodes, 256 slots: 8 bits of id */
    CHECK_EQ_INT(mblx_graph_reserve(b, 200000), 0);
    CHECK(widen_build(a, sa, pa, NW));
    CHECK(widen_build(b, sb, pb, NW));
    CHECK_EQ_INT((int)mblx_node_count(a), (int)mblx_node_count(b));
    int same = 1;
    for (int i = 0; i < NW; i += NW_STEP) same &= pa[i] == pb[i];
    CHECK(same);
    /* c: 2^20 slots (deferring), node arrays of 2^19, grown to 2^21 by the symbols (ids past the
     * 20 bits of the table's making); the products of b's graph again, entries waiting in the
     * batch when the ids are widened */
    CHECK_EQ_INT(mblx_graph_reserve(c, 300000), 0);
    static mblx_id sc[1 << 20 | 1 << 16], pc[1 << 20 | 1 << 16];
    CHECK(widen_build(c, sc, pc, NW));
    same = 1;
    for (int i = 0; i < NW; i += NW_STEP) same &= pc[i] == pb[i];
    CHECK(same);
    for (int i = NW; i < (1 << 20 | 1 << 16); i++) widen_symbol(c, sc, i);
    CHECK(mblx_node_count(c) > (1u << 20));
    size_t n = mblx_node_count(c);
    for (int i = NW; i < (1 << 20 | 1 << 16); i += 4096) pc[i] = widen_product(c, sc, i);
    int found = 1;
    for (int i = 0; i < NW; i += NW_STEP) found &= widen_product(c, sc, i) == pb[i];
    for (int i = NW; i < (1 << 20 | 1 << 16); i += 4096) found &= widen_product(c, sc, i) == pc[i];
    CHECK(found);
    CHECK_EQ_INT((int)mblx_node_count(c), (int)(n + 3 * 256)); /* the new products only */
    CHECK_EQ_INT(mblx_graph_status(c, NULL), 0);
    mblx_graph_free(a);
    mblx_graph_free(b);
    mblx_graph_free(c);
}

/* mblx__zeroed_alloc's blocks of every size (from 1 MB up they were mapped) come zeroed, take
 * writes over their whole length and are freed by mblx__zeroed_free; a size that overflows is
 * refused. */
TEST(zeroed_blocks_either_side)
{
    static const size_t counts[] = {0, 1, 1000, (1u << 20) / 8 - 1, (1u << 20) / 8, 3u << 20};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        size_t n = counts[c];
        uint64_t *p = mblx__zeroed_alloc(n, sizeof *p);
        CHECK(p != NULL);
        if (!p) continue;
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++) nonzero += p[i] != 0;
        CHECK_EQ_INT((int)nonzero, 0);
        for (size_t i = 0; i < n; i++) p[i] = i + 1;
        CHECK(n == 0 || p[n - 1] == n);
        mblx__zeroed_free(p, n, sizeof *p);
    }
    CHECK(mblx__zeroed_alloc(SIZE_MAX / 2, 4) == NULL);
    mblx__zeroed_free(NULL, 5, 8);
}

int main(void)
{
    RUN(table_through_the_mapped_size);
    RUN(batch_found_across_generations);
    RUN(one_and_two_operand_sets);
    RUN(progress_ticks_where_due);
    RUN(ids_widened_under_a_live_table);
    RUN(zeroed_blocks_either_side);
    return test_summary("expr_table");
}
