/* The scheduler's order and runs (issue 31, item 2: src/expr/tape_schedule.c sorts each window of
 * SCHED_WINDOW = 16384 instructions by one counting sort on the key (level, opcode) and takes each
 * nonempty key as a run; it sorted by opcode, then stably by level, and found the runs by a scan of
 * the new order). Checked on synthetic tapes in SSA form (one window: the swap of the arrays; four
 * windows, the last partial, with steps, constants and chains deep enough for many levels):
 * - the new order is the instructions sorted by (level within the window, opcode, index), the
 *   levels computed here, and the runs are its maximal groups of one level and opcode;
 * - the registers: replaying the new order, every operand (a step's five too) reads the register
 *   holding its producer's value, no register is overwritten while its value has reads left, and
 *   the outputs' registers hold the outputs' values at the end. */
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "test.h"

enum { WINDOW = 16384, NODE0 = 7 };

static unsigned long long rng = 88172645463325252ull;
static uint32_t rnd(uint32_t m)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % m);
}

static unsigned reads_of(uint32_t op)
{
    switch (op) {
    case TI_LDC:
    case TI_LDS:
    case TI_STEP: return 0;
    case TI_ADD:
    case TI_MUL:
    case TI_MUL2C: return 3;
    default: return 1;
    }
}

/* An operand of instruction i: mostly a recent one (levels within the window), sometimes any. */
static uint32_t operand(size_t i, int deep)
{
    if (deep && rnd(4)) return (uint32_t)(i - 1 - rnd(i < 3 ? (uint32_t)i : 3));
    if (rnd(3)) return (uint32_t)(i - 1 - rnd(i < 200 ? (uint32_t)i : 200));
    return rnd((uint32_t)i);
}

static mblx_tape *make_tape(size_t n, int nstep)
{
    static const uint32_t ops[] = {TI_ADD, TI_MUL, TI_SIN, TI_COS, TI_ADDC, TI_MUL2C, TI_SQR, TI_EXP};
    mblx_tape *t = calloc(1, sizeof *t);
    t->nins = n;
    t->ins = malloc(n * sizeof *t->ins);
    t->ins_node = malloc(n * sizeof *t->ins_node);
    t->ext = malloc(5 * (size_t)(nstep ? nstep : 1) * sizeof *t->ext);
    size_t nst = 0;
    for (size_t i = 0; i < n; i++) {
        tins q = {0, 0, 0, 0, 0.5};
        int deep = (i / 5000) % 2; /* alternate stretches of long chains and of wide levels */
        if (i < 8 || rnd(16) == 0) q.op = rnd(2) ? TI_LDS : TI_LDC, q.a = rnd(5);
        else if (nst < (size_t)nstep && rnd(64) == 0) {
            q.op = TI_STEP, q.a = (uint32_t)(5 * nst);
            for (int j = 0; j < 5; j++) t->ext[5 * nst + (size_t)j] = operand(i, deep);
            nst++;
        } else {
            q.op = ops[rnd(sizeof ops / sizeof *ops)];
            unsigned rd = reads_of(q.op);
            if (rd & 1) q.a = operand(i, deep);
            if (rd & 2) q.b = operand(i, deep);
        }
        t->ins[i] = q;
        t->ins_node[i] = (uint32_t)i + NODE0;
    }
    /* the outputs: every value read by no instruction, and a few read ones */
    unsigned char *read = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        const tins *q = &t->ins[i];
        unsigned rd = reads_of(q->op);
        if (rd & 1) read[q->a] = 1;
        if (rd & 2) read[q->b] = 1;
        if (q->op == TI_STEP)
            for (int j = 0; j < 5; j++) read[t->ext[q->a + (uint32_t)j]] = 1;
    }
    t->outreg = malloc(n * sizeof *t->outreg);
    for (size_t i = 0; i < n; i++)
        if (!read[i] || rnd(50) == 0) t->outreg[t->nout++] = (uint32_t)i;
    free(read);
    return t;
}

static const uint32_t *KEY;
static int by_key(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (KEY[2 * a] != KEY[2 * b]) return KEY[2 * a] < KEY[2 * b] ? -1 : 1;
    if (KEY[2 * a + 1] != KEY[2 * b + 1]) return KEY[2 * a + 1] < KEY[2 * b + 1] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The producers of original instruction i's operands, in the order a, b, the step's five. */
static int producers(const tins *ins, const uint32_t *ext, size_t i, uint32_t *p)
{
    unsigned rd = reads_of(ins[i].op);
    int k = 0;
    if (rd & 1) p[k++] = ins[i].a;
    if (rd & 2) p[k++] = ins[i].b;
    if (ins[i].op == TI_STEP)
        for (int j = 0; j < 5; j++) p[k++] = ext[ins[i].a + (uint32_t)j];
    return k;
}

static void check_schedule(size_t n, int nstep)
{
    mblx_tape *t = make_tape(n, nstep);
    tins *ins0 = malloc(n * sizeof *ins0);
    memcpy(ins0, t->ins, n * sizeof *ins0);
    uint32_t *ext0 = malloc(5 * (size_t)(nstep ? nstep : 1) * sizeof *ext0), *out0 = malloc(t->nout * sizeof *out0);
    memcpy(ext0, t->ext, 5 * (size_t)(nstep ? nstep : 1) * sizeof *ext0);
    memcpy(out0, t->outreg, t->nout * sizeof *out0);
    /* the expected order and runs: the levels within each window, sorted by (level, opcode, index) */
    uint32_t *key = malloc(2 * n * sizeof *key), *ref = malloc(n * sizeof *ref), pr[7];
    size_t nrun = 0;
    for (size_t w0 = 0; w0 < n; w0 += WINDOW) {
        size_t w1 = w0 + WINDOW < n ? w0 + WINDOW : n;
        for (size_t i = w0; i < w1; i++) {
            uint32_t L = 0;
            for (int k = 0, np = producers(ins0, ext0, i, pr); k < np; k++)
                if (pr[k] >= w0 && key[2 * pr[k]] + 1 > L) L = key[2 * pr[k]] + 1;
            key[2 * i] = L, key[2 * i + 1] = ins0[i].op;
            ref[i] = (uint32_t)i;
        }
        KEY = key;
        qsort(ref + w0, w1 - w0, sizeof *ref, by_key);
        for (size_t k = w0; k < w1; k++) {
            uint32_t a = ref[k], b = k > w0 ? ref[k - 1] : 0;
            nrun += k == w0 || key[2 * a] != key[2 * b] || key[2 * a + 1] != key[2 * b + 1];
        }
    }
    CHECK_EQ_INT(mblx__schedule_runs(t), 0);
    CHECK_EQ_INT((int)t->nrun, (int)nrun);
    /* the order */
    int order_ok = 1;
    for (size_t k = 0; k < n; k++) order_ok &= t->ins_node[k] == ref[k] + NODE0 && t->ins[k].op == ins0[ref[k]].op;
    CHECK(order_ok);
    /* the runs: starts where (level, opcode) changes or a window begins, each of its opcode */
    size_t r = 0;
    int runs_ok = t->run_start[0] == 0 && t->run_start[t->nrun] == n;
    for (size_t k = 0; k < n && runs_ok; k++) {
        uint32_t a = ref[k], b = k ? ref[k - 1] : 0;
        int starts = k % WINDOW == 0 || key[2 * a] != key[2 * b] || key[2 * a + 1] != key[2 * b + 1];
        if (starts) runs_ok = r < t->nrun && t->run_start[r] == k, r++;
        runs_ok = runs_ok && t->run_op[r - 1] == ins0[a].op;
    }
    CHECK(runs_ok && r == t->nrun);
    /* the registers, replayed */
    uint32_t *left = calloc(n, sizeof *left), *held = malloc(t->nreg * sizeof *held);
    for (size_t i = 0; i < n; i++)
        for (int k = 0, np = producers(ins0, ext0, i, pr); k < np; k++) left[pr[k]]++;
    for (size_t o = 0; o < t->nout; o++) left[out0[o]]++;
    for (size_t g = 0; g < t->nreg; g++) held[g] = UINT32_MAX;
    int regs_ok = t->nreg <= n;
    for (size_t k = 0; k < n && regs_ok; k++) {
        uint32_t i = ref[k], got[7];
        const tins *q = &t->ins[k];
        int np = producers(ins0, ext0, i, pr), ng = 0;
        unsigned rd = reads_of(q->op);
        if (rd & 1) got[ng++] = q->a;
        if (rd & 2) got[ng++] = q->b;
        if (q->op == TI_STEP) {
            regs_ok &= q->a == ins0[i].a; /* (its operands' registers are in ext) */
            for (int j = 0; j < 5; j++) got[ng++] = t->ext[q->a + (uint32_t)j];
        }
        regs_ok &= ng == np;
        for (int j = 0; j < np && regs_ok; j++) regs_ok = got[j] < t->nreg && held[got[j]] == pr[j];
        for (int j = 0; j < np && regs_ok; j++) left[pr[j]]--;
        regs_ok = regs_ok && q->dst < t->nreg && (held[q->dst] == UINT32_MAX || left[held[q->dst]] == 0);
        if (regs_ok) held[q->dst] = i;
    }
    for (size_t o = 0; o < t->nout && regs_ok; o++) regs_ok = t->outreg[o] < t->nreg && held[t->outreg[o]] == out0[o];
    CHECK(regs_ok);
    free(left), free(held), free(key), free(ref), free(ins0), free(ext0), free(out0);
    mblx_tape_free(t);
}

static void one_window(void) { check_schedule(3000, 20); } /* the arrays swapped */
static void four_windows(void) { check_schedule(3 * WINDOW + 5000, 300); } /* the last partial */

int main(void)
{
    RUN(one_window);
    RUN(four_windows);
    return test_summary("expr_schedule_keys");
}
