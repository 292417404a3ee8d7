/* Internal: the residual's rows evaluated alone (model/eval.c). */
#ifndef MBLIN_MODEL_EVAL_ROWS_H
#define MBLIN_MODEL_EVAL_ROWS_H

#include "expr/tape_subset.h"
#include "mblin/model.h"

/* The residual rows rows[0 .. nrow - 1] alone, in that order, as a view of tape_F
 * (mblx__subtape_new): their values are model_eval_F's bit for bit, with a work array of its size.
 * NULL where a term is evaluated numerically beside tape_F, where every instruction is needed, or
 * out of memory. Valid while md lives. */
mblx__subtape *model_F_rows_view(const mbl_model *md, int nrow, const int *rows);

/* model_eval_jac's values of the entries in the rows of view (a model_F_rows_view; row r its output
 * outpos[r], -1 where not in it) alone, bit for bit, the other entries of jac left as they are: one
 * forward sweep of the view (outpos the same at every call with it). Where the model has a Jacobian tape (not loaded forward), or view is
 * NULL, model_eval_jac itself (every entry). */
int model_eval_jac_rows(const mbl_model *md, mblx__subtape *view, const int *outpos, const double *syms, double *jac,
                        double *work, mbl_status *st);

#endif
