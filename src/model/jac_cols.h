/* The model's Jacobian entries of a range of columns, without a scan of the whole pattern. */
#ifndef MBLIN_MODEL_JAC_COLS_H
#define MBLIN_MODEL_JAC_COLS_H

#include "mblin/model.h"

/* [*p0, *p1): indices into md->jac (or a model_view's jac, the same arrays) that hold every entry
 * of the columns c0 .. c1 - 1, in their order. Where md->jac is sorted by column (each column's
 * entries together, columns ascending: the forward pattern and jacobian_unknowns store it so),
 * found by binary search and exactly those entries; otherwise the whole range 0 .. nz. Callers
 * keep their column tests, so they see the same entries in the same order either way. Whether it
 * is sorted is found by one pass the first time (model_jac_by_col) and kept on the model. */
void model_jac_col_range(const mbl_model *md, int c0, int c1, int *p0, int *p1);
int model_jac_by_col(const mbl_model *md);

#endif
