/* Scheduling a compiled tape into runs of one opcode (the evaluator switches once per run). */
#include <string.h>

#include "expr/tape_internal.h"

/* ---- scheduling into runs of one opcode ----------------------------------------------------- */

/* Evaluating a tape one instruction at a time through a switch mispredicts the branch on most
 * instructions (the opcodes alternate unpredictably): about 5.7 ns per instruction on the
 * bicycle's Jacobian. schedule_runs reorders the instructions, window by window (SCHED_WINDOW
 * instructions of the compiled order, so that large tapes keep their locality and register
 * count), by dependence level and then by opcode, and allocates the registers for the new
 * order (the compiler emits the instructions in SSA form: an operand is the index of the
 * instruction that computed it, tape.c emit_instructions). Instructions of one level are independent, so each window becomes a few runs of one
 * opcode each, evaluated by a tight loop. The values are the same bits: every instruction
 * computes the same operation on the same operands. */
enum { SCHED_WINDOW = 16384, SCHED_NOP = TI_NOP };


int mblx__schedule_runs(mblx_tape *t)
{
    size_t n = t->nins;
    if (n == 0) return 0;
    /* scratch of uint32: levels, the new order, the reads of each value, registers. In blocks of
     * at most 2 n words, not one block of 9 n: after a compilation (tape.c) the heap has holes of
     * a few n words that blocks of this size fill (one block of 9 n words grew the heap by its
     * size). The operands' producers are read from the instructions themselves (SSA form). */
    size_t win = n < SCHED_WINDOW ? n : SCHED_WINDOW;
    uint32_t *outsrc = mbl_alloc_array(t->nout ? t->nout : 1, sizeof *outsrc);
    uint32_t *lev = mbl_alloc_array(2 * n, sizeof *lev), *uses = mbl_alloc_array(n, sizeof *uses);
    uint32_t *nreg_of = mbl_alloc_array(2 * n, sizeof *nreg_of), *wnode = mbl_alloc_array(win, sizeof *wnode);
    tins *wins = mbl_alloc_array(win, sizeof *wins);
    uint32_t *rstart = mbl_alloc_array(n + 1, sizeof *rstart);
    uint8_t *rop = mbl_alloc_array(n, sizeof *rop);
    int rc = -1;
    if (!outsrc || !lev || !uses || !nreg_of || !wnode || !wins || !rstart || !rop) goto out;
    uint32_t *order = lev + n, *freel = nreg_of + n;
    /* window by window: in one pass the producers of each instruction's operands (the compiler's
     * instructions are in SSA form, tape.c), its level within its window, the reads of each value
     * (a value's register is freed at the read that takes its count to 0, its last in the new
     * order) and the opcodes present; then one stable counting sort by the key (level, opcode),
     * the opcodes ranked among those present. A nonempty key is a run: level by level, its
     * opcodes in increasing order. */
    memset(uses, 0, n * sizeof *uses);
    size_t nrun = 0;
    for (size_t w0 = 0; w0 < n; w0 += SCHED_WINDOW) {
        size_t w1 = w0 + SCHED_WINDOW < n ? w0 + SCHED_WINDOW : n;
        uint32_t maxlev = 0;
        uint64_t present = 0;
        for (size_t i = w0; i < w1; i++) {
            const tins *p = &t->ins[i];
            unsigned rd = mblx__ti_reads(p->op);
            uint32_t L = 0;
#define LEVEL_OF(s_)                                                                          \
    do {                                                                                      \
        uint32_t s__ = (s_);                                                                  \
        uses[s__]++;                                                                          \
        if (s__ >= w0 && lev[s__] + 1 > L) L = lev[s__] + 1;                                  \
    } while (0)
            if (rd & TI_READS_A) LEVEL_OF(p->a);
            if (rd & TI_READS_B) LEVEL_OF(p->b);
            if (rd & TI_READS_EXT)
                for (int k = 0; k < 5; k++) LEVEL_OF(t->ext[p->a + (uint32_t)k]);
#undef LEVEL_OF
            lev[i] = L;
            if (L > maxlev) maxlev = L;
            present |= (uint64_t)1 << p->op;
        }
        /* rank[op]: its place among the opcodes present, opof the inverse */
        uint32_t rank[SCHED_NOP], nop = 0;
        uint8_t opof[SCHED_NOP];
        for (unsigned op = 0; op < SCHED_NOP; op++)
            if (present >> op & 1) opof[nop] = (uint8_t)op, rank[op] = nop++;
        size_t nlev = (size_t)maxlev + 1, nkey = nlev * nop;
        uint32_t *cnt = mbl_alloc_array(nkey + 1, sizeof *cnt);
        if (!cnt) goto out;
        memset(cnt, 0, (nkey + 1) * sizeof *cnt);
        /* (a window's levels are read by its own instructions only: lev[i] becomes its key) */
        for (size_t i = w0; i < w1; i++) cnt[(lev[i] = lev[i] * nop + rank[t->ins[i].op]) + 1]++;
        for (size_t k = 0; k < nkey; k++) cnt[k + 1] += cnt[k];
        for (size_t L = 0, key = 0; L < nlev; L++)
            for (uint32_t r = 0; r < nop; r++, key++)
                if (cnt[key + 1] > cnt[key]) {
                    rstart[nrun] = (uint32_t)(w0 + cnt[key]);
                    rop[nrun++] = opof[r];
                }
        for (size_t i = w0; i < w1; i++) order[w0 + cnt[lev[i]]++] = (uint32_t)i;
        mbl_free(cnt);
    }
    rstart[nrun] = (uint32_t)n;
    for (size_t o = 0; o < t->nout; o++) { /* an output is read once more, at the end: never freed */
        outsrc[o] = t->outreg[o];
        uses[outsrc[o]]++;
    }
    /* registers for the new order: operands dead here are freed before the result is placed. The
     * order permutes each window within itself, so the instructions are rewritten in place, a
     * window at a time from a copy of it (not into a second array of n: the N = 10^4 four-bar's
     * residual tape is 21 MB of instructions, which the heap held twice, and its high-water mark
     * with them); a tape of one window is written into the window's arrays, which replace its
     * own (no copy). */
    size_t nfree = 0, nreg = 0;
    for (size_t k = 0; k < n; k++) {
        size_t w0 = k - k % SCHED_WINDOW;
        if (k == w0 && n <= SCHED_WINDOW) { /* one window: written into the copy's arrays, which the tape takes */
            tins *qi = t->ins;
            uint32_t *qn = t->ins_node;
            t->ins = wins, t->ins_node = wnode;
            wins = qi, wnode = qn; /* (freed below) */
        } else if (k == w0) {
            size_t m = n - w0 < SCHED_WINDOW ? n - w0 : SCHED_WINDOW;
            memcpy(wins, t->ins + w0, m * sizeof *wins);
            memcpy(wnode, t->ins_node + w0, m * sizeof *wnode);
        }
        uint32_t i = order[k];
        tins q = wins[i - w0]; /* (in SSA form: its operands are the producers' indices) */
        unsigned rd = mblx__ti_reads(q.op);
        uint32_t sa = q.a, sb = q.b;
        /* the operands' registers; those whose last use this is freed, in the order a, b, the
         * step's five */
#define FREE_AT(s_)                                                                           \
    do {                                                                                      \
        uint32_t s__ = (s_);                                                                  \
        if (--uses[s__] == 0) freel[nfree++] = nreg_of[s__];                                  \
    } while (0)
        if (rd & TI_READS_A) q.a = nreg_of[sa];
        if (rd & TI_READS_B) q.b = nreg_of[sb];
        if (rd & TI_READS_A) FREE_AT(sa);
        if (rd & TI_READS_B) FREE_AT(sb);
        if (rd & TI_READS_EXT) {
            uint32_t *e = t->ext + sa, es[5];
            for (int j = 0; j < 5; j++) es[j] = e[j];
            for (int j = 0; j < 5; j++) e[j] = nreg_of[es[j]];
            for (int j = 0; j < 5; j++) FREE_AT(es[j]);
        }
#undef FREE_AT
        uint32_t d = nfree ? freel[--nfree] : (uint32_t)nreg++;
        nreg_of[i] = d;
        q.dst = d;
        /* (every value is read or an output: the compiler emits no other, tape.c) */
        t->ins[k] = q;
        t->ins_node[k] = wnode[i - w0];
    }
    for (size_t o = 0; o < t->nout; o++) t->outreg[o] = nreg_of[outsrc[o]];
    t->nreg = nreg;
    t->nrun = nrun;
    t->run_start = rstart, t->run_op = rop;
    rstart = NULL, rop = NULL;
    rc = 0;
out:
    mbl_free(outsrc), mbl_free(lev), mbl_free(uses), mbl_free(nreg_of);
    mbl_free(wnode), mbl_free(wins), mbl_free(rstart), mbl_free(rop);
    return rc;
}
