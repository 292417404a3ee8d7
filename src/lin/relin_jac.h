/* Internal: re-linearization (mbl_relinearize, src/lin/relin.c) with the model's Jacobian values at
 * the point handed in by a caller that has just evaluated them there (a sweep's warm corrector,
 * src/study/sweep_point.c): the same result, bit for bit, without evaluating them again. */
#ifndef MBLIN_LIN_RELIN_JAC_H
#define MBLIN_LIN_RELIN_JAC_H

#include "mblin/model.h"

/* mbl_relinearize at pt with jac (NULL: evaluated here) the values of the model's Jacobian at pt in
 * the model's own pattern, as its tape gives them from pt's values (model_eval_jac on
 * model_fill_syms_pt), and the model's parameters unchanged since; syms (NULL: filled here) the
 * model's symbols at pt as model_fill_syms_pt gives them (those jac was evaluated at). */
int lin_relinearize_jac(mbl_lin_work *w, const mbl_point *pt, const double *jac, const double *syms, mbl_linear *lin,
                        mbl_status *st);

/* lin_eval_at_given (lin_internal.h) with the symbols at pt given (syms, nsym of them: copied
 * instead of filled from pt), or NULL (filled) */
struct mbl_eval;
int lin_eval_at_given_syms(const mbl_model *md, const mbl_point *pt, struct mbl_eval *ev, int outputs,
                           const double *jac, const double *syms, mbl_status *st);

#endif
