/* Internal: a view of a compiled tape that computes some of its outputs alone (tape_eval.c). */
#ifndef MBLIN_EXPR_TAPE_SUBSET_H
#define MBLIN_EXPR_TAPE_SUBSET_H

#include <stddef.h>
#include <stdint.h>

#include "mblin/expr.h"

/* (tape_internal.h's mblx_tape; the view's fields are read by tape_eval.c and tape_forward.c) */
/* A view's run of t's instructions that it leaves out (run_op, no opcode): evaluations skip it. */
enum { MBLX__RUN_GAP = 0xff };

typedef struct mblx__subtape {
    /* t's fields, its instructions and their nodes t's own (not copied), but for its nins (the
     * instructions kept), outputs and runs (owned): t's runs cut where the kept instructions begin
     * and end, the stretches between them runs of MBLX__RUN_GAP (every instruction of t in one run, in
     * t's order) */
    struct mblx_tape *view;
    /* mblx__fwdjac_eval_rows's entries (made at its first call): vals[jent[k]] = T[jsrc[k]] */
    const struct mblx_fwdjac *jac_of;
    size_t njac;
    uint32_t *jent, *jsrc;
} mblx__subtape;

/* The outputs sel[0 .. nsel - 1] of tape t (in that order) alone: t's instructions they need (a
 * register's value read later, from the outputs back), in t's order, read from t's (runs over
 * them), with t's registers, so that
 * each output's value is t's bit for bit and a work array of t's serves. A view: valid while t
 * lives, unchanged. NULL when every instruction is needed (nothing to gain), an output is out of
 * range, or out of memory. */
mblx__subtape *mblx__subtape_new(const mblx_tape *t, size_t nsel, const uint32_t *sel);
void mblx__subtape_free(mblx__subtape *s);
/* The tape to evaluate (mblx_tape_eval; a non-finite value is named among its instructions). */
const mblx_tape *mblx__subtape_tape(const mblx__subtape *s);

/* mblx_fwdjac_eval of the entries of the rows r with outpos[r] >= 0 (J's m rows), from s, a view of
 * J's tape computing those rows alone (row r its output outpos[r]; the same outpos at every call):
 * their values mblx_fwdjac_eval's bit for bit, the other entries of vals left as they are. work: as
 * mblx_fwdjac_work_size gives it for J's tape. */
int mblx__fwdjac_eval_rows(const mblx_fwdjac *J, mblx__subtape *s, const int *outpos, const double *symvals,
                           double *vals, double *work, mbl_status *st);

#endif
