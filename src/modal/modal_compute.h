/* mbl_modal with or without its progress report, and with a caller's memory (src/modal/modal.c), for
 * the callers that solve many small eigenproblems (a sweep's points, src/study/sweep_point.c): not
 * internal to src/modal, so not named *_internal.h (tests/layering/check.py). */
#ifndef MBLIN_MODAL_COMPUTE_H
#define MBLIN_MODAL_COMPUTE_H

#include "mblin/model.h"

/* mbl_modal(lin, opt, out, st); report 0: without its "eigen" progress report at the start (a
 * caller that reports and checks for a stop itself around many small eigenproblems: a sweep's
 * points, src/study/sweep_point.c). */
int modal_compute(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes **out, int report, mbl_status *st);

/* A caller's memory for modal_compute_reuse across many small eigenproblems (a sweep's worker):
 * modes given back (mbl_modes of the last point, its arrays reused where the sizes are the same)
 * and the scratch. Zero-initialized; modal_reuse_free frees it. */
typedef struct modal_reuse {
    mbl_modes *spare;
    double *scratch;
    size_t nscratch;
} modal_reuse;

/* modal_compute(lin, opt, out, report, st) with the memory of `ru` (NULL: as modal_compute): the
 * same values, fewer allocations (the modes' arrays, written whole, and the scratch) */
int modal_compute_reuse(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes **out, int report,
                        modal_reuse *ru, mbl_status *st);
/* modes m handed back for the next modal_compute_reuse (freed where ru keeps another or is NULL) */
void modal_reuse_give(modal_reuse *ru, mbl_modes *m);
void modal_reuse_free(modal_reuse *ru);

#endif
