/* Scheduling a compiled tape into runs of one opcode (the evaluator switches once per run). */
#include <string.h>

#include "expr/tape_internal.h"

/* ---- scheduling into runs of one opcode ----------------------------------------------------- */

/* Evaluating a tape one instruction at a time through a switch mispredicts the branch on most
 * instructions (the opcodes alternate unpredictably): about 5.7 ns per instruction on the
 * bicycle's Jacobian. The scheduler reorders the instructions, window by window (SCHED_WINDOW
 * instructions of the compiled order, so that large tapes keep their locality and register
 * count), by dependence level and then by opcode, and allocates the registers for the new
 * order (the compiler emits the instructions in SSA form: an operand is the index of the
 * instruction that computed it, tape.c emit_instructions). Instructions of one level are independent, so each window becomes a few runs of one
 * opcode each, evaluated by a tight loop. The values are the same bits: every instruction
 * computes the same operation on the same operands. */
enum { SCHED_NOP = TI_NOP };

void mblx__sched_free(mblx__sched *s)
{
    mbl_free(s->wins), mbl_free(s->wnode), mbl_free(s->lev), mbl_free(s->uses);
    mbl_free(s->rstart), mbl_free(s->rop);
    memset(s, 0, sizeof *s);
}

/* (scratch of uint32 in blocks of at most 2 n words, not one block of 5 n: after a compilation,
 * tape.c, the heap has holes of a few n words that blocks of this size fill) */
int mblx__sched_begin(mblx__sched *s, mblx_tape *t, size_t n)
{
    size_t win = n < SCHED_WINDOW ? n : SCHED_WINDOW;
    memset(s, 0, sizeof *s);
    s->t = t;
    s->wins = mbl_alloc_array(win, sizeof *s->wins);
    s->wnode = mbl_alloc_array(win, sizeof *s->wnode);
    s->lev = mbl_alloc_array(2 * n, sizeof *s->lev);
    s->uses = mbl_calloc(n, sizeof *s->uses);
    if (!s->wins || !s->wnode || !s->lev || !s->uses) {
        mblx__sched_free(s);
        return -1;
    }
    s->order = s->lev + n;
    return 0;
}

/* One stable counting sort of the window's instructions by the key (level, opcode), the opcodes
 * ranked among those present; a nonempty key is a run: level by level, its opcodes in increasing
 * order. The instructions are placed into t->ins at their new positions (order: the SSA index of
 * each). */
int mblx__sched_window(mblx__sched *s, size_t w0, size_t w1)
{
    mblx_tape *t = s->t;
    uint32_t *lev = s->lev, *order = s->order;
    /* rank[op]: its place among the opcodes present, opof the inverse */
    uint32_t rank[SCHED_NOP], nop = 0;
    uint8_t opof[SCHED_NOP];
    for (unsigned op = 0; op < SCHED_NOP; op++)
        if (s->present >> op & 1) opof[nop] = (uint8_t)op, rank[op] = nop++;
    size_t nlev = (size_t)s->maxlev + 1, nkey = nlev * nop;
    uint32_t *cnt = mbl_calloc(nkey + 1, sizeof *cnt);
    if (!cnt) return -1;
    const tins *wins = s->wins;
    /* (a window's levels are read by its own instructions only: lev[i] becomes its key) */
    for (size_t i = w0; i < w1; i++) cnt[(lev[i] = lev[i] * nop + rank[wins[i - w0].op]) + 1]++;
    for (size_t k = 0; k < nkey; k++) cnt[k + 1] += cnt[k];
    for (size_t L = 0, key = 0; L < nlev; L++)
        for (uint32_t r = 0; r < nop; r++, key++)
            if (cnt[key + 1] > cnt[key]) {
                if (s->nrun + 1 >= s->rcap) { /* (room for the end's entry too) */
                    size_t nc = s->rcap ? 2 * s->rcap : INIT_CAP;
                    uint32_t *qs = mbl_realloc_array(s->rstart, nc, sizeof *qs);
                    if (qs) s->rstart = qs;
                    uint8_t *qo = mbl_realloc_array(s->rop, nc, sizeof *qo);
                    if (qo) s->rop = qo;
                    if (!qs || !qo) {
                        mbl_free(cnt);
                        return -1;
                    }
                    s->rcap = nc;
                }
                s->rstart[s->nrun] = (uint32_t)(w0 + cnt[key]);
                s->rop[s->nrun++] = opof[r];
            }
    for (size_t i = w0; i < w1; i++) {
        size_t k = w0 + cnt[lev[i]]++;
        order[k] = (uint32_t)i;
        t->ins[k] = wins[i - w0];
        t->ins_node[k] = s->wnode[i - w0];
    }
    mbl_free(cnt);
    s->present = 0;
    s->maxlev = 0;
    return 0;
}

/* Registers for the new order, in place: operands dead here are freed before the result is
 * placed (a value's register is freed at the read that takes its count to 0, its last in the new
 * order). */
int mblx__sched_finish(mblx__sched *s)
{
    mblx_tape *t = s->t;
    size_t n = t->nins;
    uint32_t *uses = s->uses, *order = s->order;
    uint32_t *nreg_of = s->lev; /* (the levels are not read any more) */
    uint32_t *outsrc = mbl_alloc_array(t->nout ? t->nout : 1, sizeof *outsrc);
    uint32_t *freel = mbl_alloc_array(n ? n : 1, sizeof *freel);
    int rc = -1;
    if (!outsrc || !freel) goto out;
    for (size_t o = 0; o < t->nout; o++) { /* an output is read once more, at the end: never freed */
        outsrc[o] = t->outreg[o];
        uses[outsrc[o]]++;
    }
    size_t nfree = 0, nreg = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        tins q = t->ins[k]; /* (in SSA form: its operands are the producers' indices) */
        unsigned rd = mblx__ti_reads(q.op);
        uint32_t sa = q.a, sb = q.b;
        /* the operands' registers; those whose last use this is freed, in the order a, b, the
         * step's five or the routine's inputs (ext) */
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
            uint32_t *e = t->ext + sa;
            for (uint32_t j = 0, ne = mblx__ext_count(&q); j < ne; j++) { /* (remapping reads no freed list) */
                uint32_t s_ = e[j];
                e[j] = nreg_of[s_];
                FREE_AT(s_);
            }
        }
#undef FREE_AT
        uint32_t d = nfree ? freel[--nfree] : (uint32_t)nreg++;
        nreg_of[i] = d;
        q.dst = d;
        /* (every value is read or an output: the compiler emits no other, tape.c) */
        t->ins[k] = q;
    }
    for (size_t o = 0; o < t->nout; o++) t->outreg[o] = nreg_of[outsrc[o]];
    if (n) {
        s->rstart[s->nrun] = (uint32_t)n;
        t->nreg = nreg;
        t->nrun = s->nrun;
        t->run_start = s->rstart, t->run_op = s->rop;
        s->rstart = NULL, s->rop = NULL;
    }
    rc = 0;
out:
    mbl_free(outsrc), mbl_free(freel);
    mblx__sched_free(s);
    return rc;
}

int mblx__schedule_runs(mblx_tape *t)
{
    size_t n = t->nins;
    if (n == 0) return 0;
    mblx__sched s;
    if (mblx__sched_begin(&s, t, n)) return -1;
    for (size_t w0 = 0; w0 < n; w0 += SCHED_WINDOW) {
        size_t w1 = w0 + SCHED_WINDOW < n ? w0 + SCHED_WINDOW : n;
        memcpy(s.wins, t->ins + w0, (w1 - w0) * sizeof *s.wins);
        memcpy(s.wnode, t->ins_node + w0, (w1 - w0) * sizeof *s.wnode);
        for (size_t i = w0; i < w1; i++) mblx__sched_note(&s, w0, i, &s.wins[i - w0]);
        if (mblx__sched_window(&s, w0, w1)) {
            mblx__sched_free(&s);
            return -1;
        }
    }
    return mblx__sched_finish(&s);
}
