/* Internal: mbl_modal with or without its progress report (src/modal/modal.c). */
#ifndef MBLIN_MODAL_INTERNAL_H
#define MBLIN_MODAL_INTERNAL_H

#include "mblin/model.h"

/* mbl_modal(lin, opt, out, st); report 0: without its "eigen" progress report at the start (a
 * caller that reports and checks for a stop itself around many small eigenproblems: a sweep's
 * points, src/study/sweep_point.c). */
int modal_compute(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes **out, int report, mbl_status *st);

#endif
