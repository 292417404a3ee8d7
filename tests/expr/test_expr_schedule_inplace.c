/* The scheduler's rewrite in place (issue 31, item 2: src/expr/tape_schedule.c reorders the
 * instructions of each window of SCHED_WINDOW = 16384 within the window, and now writes them back
 * into the tape's own arrays a window at a time instead of into second arrays of the whole tape).
 * Checked on tapes of several windows, the last one partial, compiled unbound (mblx_compile: a
 * private copy of the sub-DAG) and bound (mblx_compile_bound: the graph's nodes):
 * - the values, against the same recursion evaluated in C (no tape);
 * - the runs of one opcode, found before the rewrite, hold instructions of their opcode after it;
 * - every instruction's node (ins_node, permuted with the instructions) is a node whose operation
 *   the instruction computes (a sine's instruction names a sine node, and so on), and each of the
 *   expressions' sines, cosines, exponentials and square roots is named by exactly one instruction;
 * - every allocation failure of a compilation fails cleanly, and the one that succeeds gives the
 *   same instructions, registers and outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "tape_compare.h"
#include "test.h"

enum { K = 24000, NS = 5, WINDOW = 16384 };

static mblx_graph *G;
static mblx_id E[K], S[NS];
static double REF[K], SV[NS];

/* x_k from earlier values: a chain (each depends on the one before, so values cross windows) with
 * a sine, a cosine, an exponential or a square root each, and sums and products between them. */
static void make_graph(void)
{
    G = mblx_graph_new();
    char nm[8];
    for (int j = 0; j < NS; j++) {
        snprintf(nm, sizeof nm, "s%d", j);
        S[j] = mblx_symbol(G, nm);
        SV[j] = 0.2 + 0.13 * j;
    }
    for (int k = 0; k < K; k++) {
        int j = k % NS, h = k / 2;
        mblx_id a = k ? E[k - 1] : S[0], b = k > 1 ? E[h - 1] : S[1];
        double ra = k ? REF[k - 1] : SV[0], rb = k > 1 ? REF[h - 1] : SV[1];
        switch (k % 4) {
        case 0: E[k] = mblx_sin(G, mblx_add(G, a, S[j])), REF[k] = sin(ra + SV[j]); break;
        case 1: E[k] = mblx_mul(G, b, mblx_cos(G, mblx_mul(G, a, S[j]))), REF[k] = rb * cos(ra * SV[j]); break;
        case 2:
            E[k] = mblx_exp(G, mblx_scale(G, -0.5, mblx_powc(G, mblx_add(G, a, b), 2)));
            REF[k] = exp(-0.5 * ((ra + rb) * (ra + rb)));
            break;
        default:
            E[k] = mblx_sqrt(G, mblx_add(G, mblx_const(G, 1), mblx_mul(G, a, a)));
            REF[k] = sqrt(1 + ra * ra);
            break;
        }
    }
}

/* The graph operation an instruction computes (-1: none of these expressions'). */
static int op_of(unsigned ti)
{
    switch (ti) {
    case TI_LDC: return MBLX_OP_CONST;
    case TI_LDS: return MBLX_OP_SYMBOL;
    case TI_ADD:
    case TI_ADDC:
    case TI_ADD2C: return MBLX_OP_ADD;
    case TI_MUL:
    case TI_MULC:
    case TI_MUL2C: return MBLX_OP_MUL;
    case TI_SQR:
    case TI_CUBE:
    case TI_RECIP:
    case TI_RSQR:
    case TI_SQRTP:
    case TI_POWC: return MBLX_OP_POW;
    case TI_SIN: return MBLX_OP_SIN;
    case TI_COS: return MBLX_OP_COS;
    case TI_EXP: return MBLX_OP_EXP;
    case TI_SQRT: return MBLX_OP_SQRT;
    default: return -1;
    }
}

static int is_unary_fn(int op) { return op == MBLX_OP_SIN || op == MBLX_OP_COS || op == MBLX_OP_EXP || op == MBLX_OP_SQRT; }

/* The operation of instruction i's node: the private copy's (unbound) or the graph's (bound). */
static int node_op(const mblx_tape *t, size_t i)
{
    return t->g ? (int)mblx_node_op(G, t->ins_node[i]) : (int)t->lnd[t->ins_node[i]].op;
}

/* Values against REF; nodes against the instructions; each function node named once. */
static void check_tape(const mblx_tape *t)
{
    CHECK(t->nins > 2 * WINDOW && t->nins % WINDOW != 0); /* three windows or more, the last partial */
    /* the runs (found in the new order before the rewrite) cover the rewritten instructions, each
     * run's instructions of its opcode */
    int runs_ok = t->nrun > 0 && t->run_start[0] == 0 && t->run_start[t->nrun] == t->nins;
    for (size_t r = 0; r < t->nrun && runs_ok; r++) {
        runs_ok = t->run_start[r] < t->run_start[r + 1];
        for (size_t i = t->run_start[r]; i < t->run_start[r + 1] && runs_ok; i++) runs_ok = t->ins[i].op == t->run_op[r];
    }
    CHECK(runs_ok);
    double *v = malloc(K * sizeof *v), *w = malloc(mblx_tape_work_size(t) * sizeof *w);
    mbl_status st;
    CHECK_EQ_INT(mblx_tape_eval(t, SV, v, w, &st), 0);
    double worst = 0;
    for (int k = 0; k < K; k++) worst = fmax(worst, fabs(v[k] - REF[k]) / fmax(1, fabs(REF[k])));
    CHECK(worst < 1e-12);
    int bad = 0;
    size_t nfn = 0, maxnode = t->g ? mblx_node_count(G) : t->nl;
    unsigned char *named = calloc(maxnode, 1);
    for (size_t i = 0; i < t->nins; i++) {
        int want = op_of(t->ins[i].op);
        if (t->ins_node[i] >= maxnode || want < 0 || node_op(t, i) != want) {
            bad++;
            continue;
        }
        if (is_unary_fn(want)) bad += named[t->ins_node[i]]++ != 0, nfn++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT((int)nfn, K); /* one function node per expression, each computed once */
    free(named), free(v), free(w);
}

/* same_tape, and the same instruction-to-node map and runs */
static int same_tape_runs(const mblx_tape *a, const mblx_tape *b)
{
    if (!same_tape(a, b)) return 0;
    for (size_t i = 0; i < a->nins; i++)
        if (a->ins_node[i] != b->ins_node[i]) return 0;
    return !memcmp(a->run_start, b->run_start, (a->nrun + 1) * sizeof *a->run_start) &&
           !memcmp(a->run_op, b->run_op, a->nrun * sizeof *a->run_op);
}

TEST(unbound_tape)
{
    mbl_status st;
    mblx_tape *t = mblx_compile(G, K, E, &st);
    CHECK(t != NULL);
    if (t) check_tape(t);
    mblx_tape_free(t);
}

TEST(bound_tape)
{
    mbl_status st;
    mblx_tape *t = mblx_compile_bound(G, K, E, NULL, NULL, &st);
    CHECK(t != NULL);
    if (t) check_tape(t);
    mblx_tape_free(t);
}

/* Every allocation failure, in both compilers: a clean failure, or the reference tape. */
TEST(allocation_failures)
{
    mbl_status st;
    for (int bound = 0; bound < 2; bound++) {
        mblx_tape *ref = bound ? mblx_compile_bound(G, K, E, NULL, NULL, &st) : mblx_compile(G, K, E, &st);
        CHECK(ref != NULL);
        if (!ref) return;
        int ok = 0;
        for (long k = 0; k < 4000 && !ok; k++) {
            mbl_alloc_fail_after(k);
            mblx_tape *t = bound ? mblx_compile_bound(G, K, E, NULL, NULL, &st) : mblx_compile(G, K, E, &st);
            mbl_alloc_fail_after(-1);
            if (!t) {
                CHECK(st.code == MBL_ENOMEM);
                continue;
            }
            ok = 1;
            CHECK(k > 10); /* the loop did fail allocations */
            CHECK(same_tape_runs(ref, t));
            mblx_tape_free(t);
        }
        CHECK(ok);
        mblx_tape_free(ref);
    }
}

int main(void)
{
    make_graph();
    RUN(unbound_tape);
    RUN(bound_tape);
    RUN(allocation_failures);
    mblx_graph_free(G);
    return test_summary("expr_schedule_inplace");
}
