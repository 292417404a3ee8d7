/* The hash-consing table's memory and the deferral's batch (src/expr/graph.c). A table of 1 MB or
 * more is mapped from the system (its pages come zeroed) and unmapped when it grows, is dropped
 * or the graph is freed; a smaller one is calloc'd and freed: a graph growing through that size
 * from nothing must find every node it made (none made twice) and give the handles of a graph
 * reserved large from the start (whose table is mapped from its first node), also after a drop and
 * rebuild (freeing a mapped table with free(), or unmapping a calloc'd one, crashes). The batch of
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
    CHECK_EQ_INT(mblx_graph_reserve(b, 300000), 0); /* 2^20 slots (8 MB): mapped at once */
    build(a, xa, ra); /* 128 slots, calloc'd, grown past 1 MB: mapped */
    build(b, xb, rb);
    size_t n = mblx_node_count(a);
    CHECK(n > 100000); /* past 2^17 slots (1 MB) at half load */
    CHECK_EQ_INT((int)n, (int)mblx_node_count(b));
    int same = 1;
    for (int i = 0; i < NROW; i++) same &= ra[i] == rb[i];
    CHECK(same);
    for (int i = 0; i < NROW; i += 5) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n); /* every node found: none made */
    CHECK_EQ_INT(mblx_graph_drop_table(a), 0);     /* the mapped table unmapped */
    for (int i = 0; i < NROW; i += 3) CHECK_EQ_INT((int)row(a, xa, ra, i), (int)ra[i]);
    CHECK_EQ_INT((int)mblx_node_count(a), (int)n); /* the rebuilt (mapped) table finds them all */
    CHECK_EQ_INT(mblx_graph_reserve(a, 1000000), 0); /* grown: the old mapped table unmapped */
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

/* mblx__zeroed_alloc's blocks below and above its 1 MB mapping size come zeroed, take writes over
 * their whole length and are freed by mblx__zeroed_free by their size (a mapped block given to
 * free(), or a calloc'd one unmapped, crashes); a size that overflows is refused. */
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
    RUN(zeroed_blocks_either_side);
    return test_summary("expr_table");
}
