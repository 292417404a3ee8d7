/* The register tape of src/expr: its opcodes, instructions and layout, shared by the compiler
 * (tape.c), the sharing of common parts (tape_share.c), the scheduler (tape_schedule.c) and the
 * evaluator (tape_eval.c). Not a public header. */
#ifndef MBLIN_EXPR_TAPE_INTERNAL_H
#define MBLIN_EXPR_TAPE_INTERNAL_H

#include "expr/expr_internal.h"

/* Initial capacity of the arrays that grow (and mblx_eval's registers on the stack). */
enum { INIT_CAP = 64 };

/* Sub-DAGs of fewer nodes than this compile without a load's progress reports between their steps
 * (core/progress.h: a report reads the clock, about 800 instructions; the nonlinear bicycle
 * compiles 34 tapes, most of a few nodes, and such a compilation takes well under a millisecond). */
enum { TICK_MIN_NODES = 4096 };

/* Tape opcodes. */
enum {
    TI_LDC, TI_LDS, TI_ADD, TI_ADDC, TI_MUL, TI_MULC, TI_SQR, TI_CUBE, TI_RECIP, TI_RSQR,
    TI_SQRTP, TI_POWC, TI_POW, TI_SQRT, TI_SIN, TI_COS, TI_TAN, TI_ASIN, TI_ACOS, TI_ATAN,
    TI_ATAN2, TI_SINH, TI_COSH, TI_TANH, TI_EXP, TI_LOG, TI_ABS, TI_SIGN, TI_MIN, TI_MAX,
    TI_STEP, TI_DATA, TI_ADD2C, TI_MUL2C, TI_USER,
    TI_NOP /* the number of opcodes */
};
_Static_assert(TI_NOP <= 64, "the opcode sets below are 64-bit masks");

/* The registers an opcode reads, said once here for the scheduler (tape_schedule.c), the forward
 * sweep's lane masks (tape_forward.c) and the rows view (tape_eval.c): TI_READS_A register a,
 * TI_READS_B register b, TI_READS_EXT the registers ext[a .. a + mblx__ext_count) (TI_STEP: five;
 * TI_USER: the routine's nin, its b). TI_LDC and TI_LDS read none (a is a constant's or a
 * symbol's index). */
enum { TI_READS_A = 1, TI_READS_B = 2, TI_READS_EXT = 4 };
#define TI_SET(op_) (1ull << (op_))
#define TI_READ_NO_REGISTER (TI_SET(TI_LDC) | TI_SET(TI_LDS) | TI_SET(TI_STEP) | TI_SET(TI_USER))
#define TI_READ_TWO_REGISTERS                                                                      \
    (TI_SET(TI_ADD) | TI_SET(TI_ADD2C) | TI_SET(TI_MUL) | TI_SET(TI_MUL2C) | TI_SET(TI_POW) |      \
     TI_SET(TI_ATAN2) | TI_SET(TI_MIN) | TI_SET(TI_MAX) | TI_SET(TI_DATA))
#define TI_READS_OF(op_)                                                                           \
    ((unsigned)(~TI_READ_NO_REGISTER >> (op_) & 1) * TI_READS_A |                                  \
     (unsigned)(TI_READ_TWO_REGISTERS >> (op_) & 1) * TI_READS_B | (unsigned)((op_) == TI_STEP || (op_) == TI_USER) * TI_READS_EXT)
/* (one load from a table of the above, not its eight operations: the scheduler's register pass
 * asks it of every instruction) */
static inline unsigned mblx__ti_reads(uint32_t op)
{
#define R4(o_) TI_READS_OF(o_), TI_READS_OF(o_ + 1), TI_READS_OF(o_ + 2), TI_READS_OF(o_ + 3)
    static const unsigned char reads[36] = {R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32)};
#undef R4
    _Static_assert(TI_NOP <= 36, "the table covers every opcode");
    return reads[op];
}

/* An instruction: 16 bytes (its constant in the tape's pool, not a double of its own: the
 * N = 10^4 four-bar's residual tape, 890,066 instructions of which 300,023 have one, went from
 * 21.4 to 14.2 + 2.4 MB, live from its compilation to the end). ci: the constant's index in t->cst
 * for the opcodes of TI_CONST_OPS, 0 (t->cst[0] = 0.0) for the others. */
typedef struct tins {
    uint32_t op : 6;
    uint32_t ci : 26;
    uint32_t dst, a, b;
} tins;
_Static_assert(sizeof(tins) == 16, "an instruction is 16 bytes");
/* The registers ext[a ..] of an instruction of TI_READS_EXT: a step's five, a routine's nin (b). */
static inline uint32_t mblx__ext_count(const tins *q) { return q->op == TI_STEP ? 5u : q->b; }
/* The opcodes whose constant is read (TI_LDC: its value; ADDC, MULC, ADD2C, MUL2C: the constant
 * added or multiplied; POWC: the exponent; DATA, USER: the node's code); the pool's size limit. */
#define TI_CONST_OPS                                                                               \
    (TI_SET(TI_LDC) | TI_SET(TI_ADDC) | TI_SET(TI_MULC) | TI_SET(TI_ADD2C) | TI_SET(TI_MUL2C) |    \
     TI_SET(TI_POWC) | TI_SET(TI_DATA) | TI_SET(TI_USER))
#define TI_CONST_MAX ((size_t)1 << 26)

struct mblx_tape {
    size_t nins, nreg, nout, nsymreq;
    tins *ins;
    double *cst; /* the instructions' constants (tins.ci; cst[0] = 0.0; each value once), ncst */
    size_t ncst;
    uint32_t *outreg;
    uint32_t *ext; /* step operands, 5 registers each; a routine's inputs, nin each */
    mblx__dataset *data; /* the graph's data sets, copied (TI_DATA: a = x, b = y, c = the node's code) */
    uint32_t ndata;
    /* the graph's routines, copied when the tape has user instructions (TI_USER: a = the offset
     * of its inputs in ext, b = nin, c = the node's code; tape_user.c), nuser of them; nuins
     * such instructions; the caches of the routines' calls in the work array after the registers
     * (or after the tangents, forward mode): routine r's at uoff[r], ucache doubles in all;
     * uwantp[r] 1: an order-1 node reads routine r's own partials (its values are asked with them) */
    mblx__user *user;
    uint32_t nuser;
    size_t nuins, ucache;
    size_t *uoff;
    unsigned char *uwantp;
    /* diagnostics: each instruction's node, in a private copy of the compiled sub-DAG (local node
     * numbering), or in the graph g itself for a tape of mblx_compile_bound (lnd, largs and names
     * then NULL) */
    uint32_t *ins_node;
    size_t nl;
    mblx__node *lnd; /* val, op, na, aoff used; doff: offset of a SYMBOL's name in names */
    uint32_t *largs;
    char *names;
    const mblx_graph *g;                /* mblx_compile_bound: the graph the messages print from */
    void (*lock)(void *ctx, int on);    /* held around reading g, when not NULL */
    void *lock_ctx;
    /* runs of one opcode (schedule_runs): instructions run_start[r] .. run_start[r + 1] - 1 all
     * have the opcode run_op[r], so evaluation switches once per run, not per instruction */
    size_t nrun;
    uint32_t *run_start; /* nrun + 1 */
    uint8_t *run_op;     /* nrun */
    struct mblx_fwdjac *fwdjac; /* owned: the coloring of its outputs' Jacobian (mblx_tape_set_fwdjac), or NULL */
};

/* The constants' pool while a tape is emitted (tape_consts.c): cst[0] = 0.0 and each distinct
 * constant once (by its bits: the N = 10^4 four-bar's residual reads 300,023 constants of 10,006
 * values), found through slot (open addressing, 0 empty). */
typedef struct mblx__cpool {
    double *cst;
    uint32_t *slot;
    size_t n, cap, scap;
    unsigned shift; /* scap = 2^(64 - shift) */
} mblx__cpool;
int mblx__cpool_init(mblx__cpool *p); /* -1 when out of memory */
void mblx__cpool_free(mblx__cpool *p);
/* Constant c, not in the pool, added; its index, or UINT32_MAX when out of memory or past
 * TI_CONST_MAX constants. */
uint32_t mblx__cpool_add(mblx__cpool *p, double c);
static inline uint64_t mblx__cpool_bits(double c)
{
    uint64_t b;
    memcpy(&b, &c, sizeof b);
    return b;
}
/* The slot of bits b: the one holding it, or the empty one where it goes (the high bits of the
 * product: a short decimal's low mantissa bits are all zero). */
static inline size_t mblx__cpool_slot(const mblx__cpool *p, uint64_t b)
{
    size_t i = (size_t)(((b ^ b >> 29) * 0x9e3779b97f4a7c15ull) >> p->shift);
    while (p->slot[i] && mblx__cpool_bits(p->cst[p->slot[i]]) != b) i = (i + 1) & (p->scap - 1);
    return i;
}
/* The index of constant c (the same bits) in the pool, added if new; UINT32_MAX when out of memory
 * or past TI_CONST_MAX constants. (inline: the emission asks it of 300,023 instructions at
 * N = 10^4, 10,006 of them new) */
static inline uint32_t mblx__cpool_put(mblx__cpool *p, double c)
{
    uint64_t b = mblx__cpool_bits(c);
    if (!b) return 0; /* +0.0: cst[0] */
    uint32_t k = p->slot[mblx__cpool_slot(p, b)];
    return k ? k : mblx__cpool_add(p, c);
}
/* The pool's constants (*n of them, the array at its size) for the tape; p freed. */
double *mblx__cpool_take(mblx__cpool *p, size_t *n);

/* Instruction p's constant (0.0 for an opcode without one). */
static inline double mblx__ins_c(const mblx_tape *t, const tins *p) { return t->cst[p->ci]; }

/* A frame of the explicit depth-first traversal stacks (graph node v, local index l, next operand). */
typedef struct dfs_frame {
    uint32_t v, l, next;
} dfs_frame;

/* A sum or product of at least two operands (compiled as a chain of binary operations). */
static inline int mblx__nary_local(const mblx__node *nd)
{
    return (nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na >= 2;
}

/* The pairs of operands the pairs' search (tape_share.c, share_pairs) counts in a node: those of a
 * sum or product of 3 to MBLX__PAIR_MAX_ARGS operands. */
enum { MBLX__PAIR_MAX_ARGS = 32 };
static inline size_t mblx__pairs_local(const mblx__node *nd)
{
    return (nd->op == MBLX_OP_ADD || nd->op == MBLX_OP_MUL) && nd->na >= 3 && nd->na <= MBLX__PAIR_MAX_ARGS
               ? (size_t)nd->na * (nd->na - 1) / 2
               : 0;
}

/* The shared forms mblx__share makes (its form):
 * - MBLX__SHARE_ALL: common pairs of operands, then the chains (mblx_compile, mblx_compile_bound);
 * - MBLX__SHARE_CHAINS: the chains alone (mblx_compile_few);
 * - MBLX__SHARE_NONE: the sub-DAG as written, scheduled (mblx__compile_written; mblx__share is
 *   not called). */
enum { MBLX__SHARE_ALL, MBLX__SHARE_CHAINS, MBLX__SHARE_NONE };

/* The shared form of the local sub-DAG (lnd, largs: nl0 nodes, ka0 operands) that the compiler
 * schedules (tape_share.c); *pcl NULL: the sub-DAG as it is. form: MBLX__SHARE_*. lcap, acap: 0, or the capacities of
 * lnd and largs, which may then be rewritten and hold the shared form (*pcl == lnd). *powner: the
 * node of the sub-DAG each node computes or is made for, mapped through base (nl0 entries) when not
 * NULL (a bound tape: its graph nodes). post: the sub-DAG's post-order from outl, as
 * mblx__local_postorder makes it (nl0 entries: the compiler's numbering traversal records it), or
 * NULL. nnary0: the sums and products of at least two operands among the nl0 nodes (the compiler
 * counts them as it numbers the sub-DAG), or SIZE_MAX: counted where needed; npairs0 likewise the
 * nodes' pairs (mblx__pairs_local), by which the pairs' search may decline at once. *pfuse 1: the shared
 * form is given with its sums and
 * products n-ary, as the chains would have made them but for their constants, which the emission
 * then fuses into their last operation (TI_ADD2C, TI_MUL2C) as the chains' last links do. Returns
 * 0, or -1 when out of memory. */
int mblx__share(mblx__node *lnd, uint32_t *largs, size_t nl0, size_t ka0, size_t lcap, size_t acap, uint32_t *outl,
                size_t nout, int form, const uint32_t *base, const uint32_t *post, size_t nnary0, size_t npairs0,
                mblx__node **pcl, uint32_t **pca, size_t *pnl, size_t *pka, uint32_t **powner, int *pfuse);

/* Post-order (operands first) of the local nodes reachable from outl[0..nout), into order[];
 * returns the count, or SIZE_MAX when out of memory. mark: nl bytes of scratch (tape.c). */
size_t mblx__local_postorder(const mblx__node *lnd, const uint32_t *largs, size_t nl, const uint32_t *outl, size_t nout,
                             unsigned char *mark, uint32_t *order);

/* Tests only: 0 (the default) skips the chains where they would share nothing, after the pairs or
 * where no pair is shared (tape_share.c, chains_may_share), 1 always builds them, 2 fails a compilation (as out of memory)
 * that would build them, 3 fails one whose post-order recorded by the compiler (mblx__share's post)
 * is not mblx__local_postorder's, or whose count of sums and products (nnary0) or of pairs
 * (npairs0) is not the sub-DAG's. Not for use while another thread compiles. */
void mblx__share_chains_mode(int mode);

/* Reorder the instructions of t, in SSA form (an operand, an output, a step's operand: the index
 * of the instruction that computed it), into runs of one opcode and allocate its registers
 * (tape_schedule.c). Returns 0, or -1 when out of memory. */
int mblx__schedule_runs(mblx_tape *t);

/* The scheduler fed window by window (tape_schedule.c): the instructions of a window of
 * SCHED_WINDOW, in SSA form, are written into wins and wnode (instruction i at i - w0) and noted
 * (mblx__sched_note: its level in the window, the reads of its operands, its opcode); a full window
 * (and the last) is sorted into t->ins and t->ins_node by mblx__sched_window; mblx__sched_finish
 * then allocates the registers and sets the runs. The compiler's emission feeds it as it emits
 * (tape.c: the tape is never written in SSA order), mblx__schedule_runs from an SSA tape. */
enum { SCHED_WINDOW = 16384 };
typedef struct mblx__sched {
    mblx_tape *t;
    tins *wins;       /* the window being filled */
    uint32_t *wnode;  /* its instructions' nodes */
    uint32_t *lev;    /* n: an instruction's level within its window (then its key); n more: order */
    uint32_t *order;  /* n: the instruction (SSA index) placed at each position */
    uint32_t *uses;   /* n: the reads of each value */
    uint32_t *rstart; /* the runs so far: their first positions and opcodes (rcap of each) */
    uint8_t *rop;
    size_t nrun, rcap;
    uint64_t present; /* the opcodes of the window being filled */
    uint32_t maxlev;  /* its largest level */
} mblx__sched;

/* Tests only: nonzero makes mblx_compile and mblx_compile_bound emit their tapes in SSA order and
 * schedule them after (mblx__schedule_runs), as before the emission fed the scheduler (tape.c); the
 * same tapes. Not for use while another thread compiles. */
void mblx__schedule_after_mode(int on);

/* Tests only: nonzero makes every compilation order its events by its own traversal of the shared
 * form, not take those its numbering recorded where the shared form is the sub-DAG as it is
 * (tape.c number_sub_dag); the same tapes. Returns the compilations that took the numbering's
 * since the last call. Not for use while another thread compiles. */
size_t mblx__events_mode(int traverse);

/* s for up to n instructions of t (n > 0); -1 when out of memory (s then freed). */
int mblx__sched_begin(mblx__sched *s, mblx_tape *t, size_t n);
/* Sort the window of instructions w0 .. w1 - 1 (noted, in s->wins) into t->ins; -1 when out of memory. */
int mblx__sched_window(mblx__sched *s, size_t w0, size_t w1);
/* The registers of t's t->nins instructions, every window sorted, its runs (t takes them); frees s.
 * -1 when out of memory. */
int mblx__sched_finish(mblx__sched *s);
void mblx__sched_free(mblx__sched *s);

/* The read of value src by an instruction of the window from w0 whose level is at least L so far:
 * its count of reads, and the instruction's level at least one more than src's in the window. */
static inline uint32_t mblx__sched_read(mblx__sched *s, size_t w0, uint32_t src, uint32_t L)
{
    s->uses[src]++;
    uint32_t L1 = src >= w0 ? s->lev[src] + 1 : 0;
    return L1 > L ? L1 : L;
}

/* Instruction i of level L and opcode op noted (its reads already, mblx__sched_read). */
static inline void mblx__sched_put(mblx__sched *s, size_t i, uint32_t L, uint32_t op)
{
    s->lev[i] = L;
    if (L > s->maxlev) s->maxlev = L;
    s->present |= (uint64_t)1 << op;
}

/* Note instruction i (q, in SSA form) of the window from w0: the reads of its operands, its level
 * (one more than its operands' in the window), its opcode. */
static inline void mblx__sched_note(mblx__sched *s, size_t w0, size_t i, const tins *q)
{
    unsigned rd = mblx__ti_reads(q->op);
    uint32_t L = 0;
    if (rd & TI_READS_A) L = mblx__sched_read(s, w0, q->a, L);
    if (rd & TI_READS_B) L = mblx__sched_read(s, w0, q->b, L);
    if (rd & TI_READS_EXT)
        for (uint32_t k = 0, ne = mblx__ext_count(q); k < ne; k++) L = mblx__sched_read(s, w0, s->t->ext[q->a + k], L);
    mblx__sched_put(s, i, L, q->op);
}

/* The first non-finite value of an evaluation of t at x, named as mblx_tape_eval names it (w: t's
 * work array); MBL_EDOMAIN (tape_eval.c). */
int mblx__tape_diagnose(const mblx_tape *t, const double *x, double *w, mbl_status *st);
/* MBL_EDOMAIN with "<what> in <the expression of instruction i>" (a bound tape reads its graph
 * under its lock; tape_eval.c). */
int mblx__tape_report_ins(const mblx_tape *t, size_t i, const char *what, mbl_status *st);

/* ---- user instructions (tape_user.c) ---- */
/* t's routines, their caches' places (uoff, ucache, uwantp), after its compilation from g; 0, or -1
 * when out of memory. Nothing for a tape without user instructions. */
int mblx__tape_user_setup(mblx_tape *t, const mblx_graph *g);
void mblx__tape_user_free(mblx_tape *t);
/* The caches marked empty (an evaluation's start; cache: the work array's after the registers). */
static inline void mblx__tape_user_reset(const mblx_tape *t, double *cache)
{
    for (uint32_t r = 0; r < t->nuser; r++) cache[t->uoff[r]] = 0.0;
}
/* The value of user instruction p at registers w (NaN when the routine fails: msg, when not
 * NULL, says why); cache: the tape's caches, or NULL (the routine called here, into scratch
 * allocated for it). deriv: the node's partials are needed too (forward mode). */
double mblx__tape_user(const mblx_tape *t, const tins *p, const double *w, double *cache, int deriv, char *msg,
                       size_t size);
/* Its tangents Td[0 .. np) from the inputs' T (np per register), after mblx__tape_user with deriv
 * set on the same cache (NaN for an order-2 node whose inputs move, or when a routine fails). */
void mblx__tape_user_tangents(const mblx_tape *t, const tins *p, double *cache, const double *T, double *Td, size_t np);

/* Free a Jacobian coloring (fwdjac.c; the tape's owned one). */
void mblx__fwdjac_free(struct mblx_fwdjac *J);
/* Tests only: nonzero makes the forward sweep take its baseline (SSE2) code on a CPU with AVX too,
 * so that both paths can be compared bit for bit on one machine (tape_forward.c). Not for use
 * while another thread evaluates. */
void mblx__fwd_force_baseline(int on);

#endif
