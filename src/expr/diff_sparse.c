/* The sparse results of diff.c: freeing one, and the Hessian (the Jacobian of the gradient). */
#include <string.h>

#include "expr/expr_internal.h"

void mblx_sparse_free(mblx_sparse *s)
{
    if (!s) return;
    mbl_free(s->colptr);
    mbl_free(s->rowidx);
    mbl_free(s->node);
    memset(s, 0, sizeof *s);
}

int mblx_hessian(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, mblx_sparse *out)
{
    if (!g || !out) return MBL_EARG;
    memset(out, 0, sizeof *out);
    mblx_id *grad = mbl_alloc_array(n ? n : 1, sizeof *grad);
    if (!grad) {
        mblx__oom(g);
        return MBL_ENOMEM;
    }
    int rc = mblx_gradient(g, e, n, syms, grad);
    if (rc == 0) rc = mblx_jacobian(g, n, grad, n, syms, out);
    mbl_free(grad);
    return rc;
}
