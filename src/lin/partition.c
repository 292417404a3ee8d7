/* `partition`: generalized coordinate partitioning (source 004; source 000 Eq. 2-9).
 *
 * Gauss elimination with full pivoting on Phi_q (with the user states' rows, weighted as in
 * source 000 Eq. 22: the selection shared with `augmented`) splits q into dependent coordinates u
 * (the pivot columns) and independent ones S (user states first, completed by coordinates). For
 * S = P q, dq/dS = [Phi_q; P]^-1 [0; I] = [-Phi_u^-1 Phi_S; I] (Eq. 4-5); user states S = s(q) add
 * their curvature terms,
 * and the state-space ODE of Eq. 6, M-hat S'' = Q-hat(S, S'), is differentiated exactly through
 * the linearized velocity and acceleration constraints (lin_reduce): K = dQ-hat/dS and
 * C = dQ-hat/dS' of Eq. 9. A singular configuration (rank of Phi_q below m) has no partition:
 * the method refuses. */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"

int lin_partition(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, r = 0, rc;
    mbl_blocks B;
    mbl_rstates rs, us;
    mbl_linear *lin = NULL;
    int *rows = NULL;
    char sel[sizeof lin->selection];
    memset(&rs, 0, sizeof rs), memset(&us, 0, sizeof us);
    *out = NULL;
    rc = lin_require_dense(md, opt, "partition", st);
    if (rc) return rc;
    rc = lin_dense_open(md, pt, &B, &rows, st);
    if (rc) return rc;
    int frozen = 0;
    rc = lin_dense_states(md, pt, opt, &B, "partition", "no coordinate partition exists", rows, &r, &rs, &us,
                          &frozen, sel, sizeof sel, st);
    if (rc) goto done;
    lin = lin_linear_alloc_x(n, rs.z0, rs.z1, mv->nX, mv->nr, mv->ny);
    if (!lin) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(lin->selection, sel, sizeof sel);
    snprintf(lin->method, sizeof lin->method, "partition");
    rc = lin_reduce(&B, rows, r, &rs, NULL, opt->rcond_min, lin, NULL, NULL, st);
    if (!rc && frozen) rc = lin_frozen_change(&B, rows, r, &us, &rs, opt->rcond_min, lin, st);
    if (rc) goto done;
    if (lin_state_names(md, lin, frozen ? &us : &rs)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->notes, sizeof lin->notes, "rank(Phi_q) = %d, %d non-holonomic; condition of [Phi_q; dS/dq] and "
             "[Phi_q; A_nh; dW/dv] %.3g%s", r, mv->k, lin->cond, frozen ? "; point with motion: computed in the position states and their rates, changed to the speeds by the constant map at the point" : "");
    *out = lin;
    lin = NULL;
done:
    lin_blocks_free(&B);
    lin_rstates_free(&rs), lin_rstates_free(&us);
    mbl_free(rows);
    mbl_linear_free(lin);
    return rc;
}
