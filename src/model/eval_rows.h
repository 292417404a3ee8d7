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

/* Where the model's terms are evaluated numerically beside tape_F (model_F_rows_view refuses such
 * models), the same selection by row groups: 1 when a term is present and every present term
 * evaluates its rows and entries selectively (model/terms/term.h, eval_sel). Then
 * model_eval_F_sel gives model_eval_F's values bit for bit in the rows of the groups of rowmask
 * (bits 1 << MBL_ROW_*; the other rows may be left partial), and model_eval_jac_sel
 * model_eval_jac's in those rows and the blocks of colmask (bits 1 << MBL_BLK_*; the other
 * entries may be left zero or partial). */
int model_eval_sel_ok(const mbl_model *md);
int model_eval_F_sel(const mbl_model *md, unsigned rowmask, const double *syms, double *F, double *work,
                     mbl_status *st);
int model_eval_jac_sel(const mbl_model *md, unsigned rowmask, unsigned colmask, const double *syms, double *jac,
                       double *work, mbl_status *st);

#endif
