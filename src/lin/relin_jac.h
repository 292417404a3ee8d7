/* Internal: re-linearization (mbl_relinearize, src/lin/relin.c) with the model's Jacobian values at
 * the point handed in by a caller that has just evaluated them there (a sweep's warm corrector,
 * src/study/sweep_point.c): the same result, bit for bit, without evaluating them again. */
#ifndef MBLIN_LIN_RELIN_JAC_H
#define MBLIN_LIN_RELIN_JAC_H

#include "mblin/model.h"

/* mbl_relinearize at pt with jac (NULL: evaluated here) the values of the model's Jacobian at pt in
 * the model's own pattern, as its tape gives them from pt's values (model_eval_jac on
 * model_fill_syms_pt), and the model's parameters unchanged since. */
int lin_relinearize_jac(mbl_lin_work *w, const mbl_point *pt, const double *jac, mbl_linear *lin, mbl_status *st);

#endif
