/* mbl_open_tree_stiffness: the stiffness of the equations of motion before the constraint forces
 * are applied, K_l of source 003 Sec. 3.2.2 (Eq. 3.9-3.10; Eq. 4.7 adds d(Phi_q^T lambda)/dq to it
 * for a closed loop). The residual R = M(q) v' + Phi_q^T lambda + A_nh^T mu - Q(q, v) is linear in
 * the multipliers, so dR/dq at the point's q, v, v' with every multiplier 0 is K_l exactly: for a
 * mechanism in relative coordinates, the open tree's stiffness -(dB^T/dq f + B^T df/dq) at rest (a
 * cut joint's constraints are the only ones of such a model). */
#include <string.h>

#include "lin/methods_internal.h"

int mbl_open_tree_stiffness(const mbl_model *md, const mbl_point *pt, double *K, mbl_status *st)
{
    if (!md || !pt || !K) return mbl_error(st, MBL_EARG, "mbl_open_tree_stiffness: NULL argument");
    model_view view;
    model_view_get(md, &view);
    int n = view.n, m = view.m, k = view.k;
    double *zero = mbl_calloc((size_t)(m + k) + 1, sizeof *zero);
    if (!zero) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_point tp = *pt; /* the point without its constraint forces; its Jacobian values are not ours */
    tp.lambda = zero, tp.mu = zero + m, tp.jac_memo = NULL;
    mbl_blocks B;
    int rc = lin_blocks_init(md, &tp, &B, st);
    if (!rc) memcpy(K, B.Rq, (size_t)n * n * sizeof *K);
    if (!rc) lin_blocks_free(&B);
    mbl_free(zero);
    return rc;
}
