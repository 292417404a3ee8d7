/* The model's Jacobian entries of a range of columns (model/jac_cols.h). */
#include "model/jac_cols.h"
#include "model/model_internal.h"

int model_jac_by_col(const mbl_model *md)
{
    int known = atomic_load(&md->jac_by_col);
    if (known) return known == 1;
    const int *col = md->jac.col;
    int nz = md->jac.nz, p = 1, down = 0;
    for (; p + 3 < nz && !down; p += 4) /* four compares a test */
        down = (col[p - 1] > col[p]) | (col[p] > col[p + 1]) | (col[p + 1] > col[p + 2]) | (col[p + 2] > col[p + 3]);
    for (; p < nz && !down; p++) down = col[p - 1] > col[p];
    int sorted = !down;
    atomic_store(&((mbl_model *)md)->jac_by_col, sorted ? 1 : 2);
    return sorted;
}

/* the first entry of a column >= c (col sorted) */
static int first_col_at(const int *col, int nz, int c)
{
    int lo = 0, hi = nz;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (col[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void model_jac_col_range(const mbl_model *md, int c0, int c1, int *p0, int *p1)
{
    *p0 = 0, *p1 = md->jac.nz;
    if (!model_jac_by_col(md)) return;
    *p0 = first_col_at(md->jac.col, md->jac.nz, c0);
    *p1 = c1 <= c0 ? *p0 : first_col_at(md->jac.col, md->jac.nz, c1);
}
