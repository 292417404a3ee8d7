/* Outputs of accelerations and multipliers in a symbolic linear model at rest (issue 33, item 2;
 * symlin.c calls it after A, B, C = [y_q H  y_v H], D = y_r).
 *
 * At rest (v = 0, vdot = 0) with coordinate states, dq = H dS, dv = H dS' and dvdot = H dS'': the
 * accelerations follow from the rows of A and B that give S'',
 *     dvdot = H [A21 A22 B2] [dS; dS'; dr].
 * The multipliers from the dependent rows y of the linearized equations of motion (the rows whose
 * multiplier block R_lambda,y = Phi_y^T is regular, as for lambda(q, p, r) itself):
 *     R_lambda,y dlambda = -(R_vdot dvdot + R_v dv + R_q dq + R_r dr)_y,
 * every Jacobian at rest with lambda(q, p, r) substituted. Then
 *     C += y_vdot dvdot/dx + y_lambda dlambda/dx,   D += y_vdot dvdot/dr + y_lambda dlambda/dr,
 * and lambda(q, p, r) is substituted in the outputs' own derivatives. The same numbers as the numeric
 * linearization (`augmented`), checked by mbl_symlin_verify. */
#include <string.h>

#include "codegen/symlin_internal.h"

/* sum_t a[t] b[t] over the nonzero products (n terms; work tt) */
static mblx_id dot(mblx_graph *g, int n, const mblx_id *a, size_t sa, const mblx_id *b, size_t sb, mblx_id *tt)
{
    size_t nt = 0;
    for (int t = 0; t < n; t++) {
        mblx_id x = a[(size_t)t * sa], y = b[(size_t)t * sb];
        if (codegen_is_zero(g, x) || codegen_is_zero(g, y)) continue;
        tt[nt++] = mblx_mul(g, x, y);
    }
    return mblx_sum(g, nt, tt);
}

int codegen_rest_outputs_dyn(mbl_symlin *sl, const codegen_rest_in *in, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m, z = sl->z, nx = 2 * z, nr = sl->nr, ny = sl->ny, nc = nx + nr, rc = 0;
    const mblx_id *H = sl->H;
    size_t w = (size_t)(n > m ? n : m) + (size_t)nc + 1;
    mblx_id *tt = codegen_new_ids(w), *Hd = codegen_new_ids((size_t)n * nc), *G = codegen_new_ids((size_t)m * nc);
    mblx_id *Ly = codegen_new_ids((size_t)m * m), *Yd = codegen_new_ids((size_t)n), *Yl = codegen_new_ids((size_t)m);
    mblx_id *col = codegen_new_ids((size_t)nc);
    double *lv = mbl_alloc_array((size_t)m * m + 1, sizeof *lv);
    if (!tt || !Hd || !G || !Ly || !Yd || !Yl || !col || !lv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
#define LAM(e) mblx_subst(g, mblx_subst(g, (e), 2 * (size_t)n, in->rest_syms, in->rest_zero), (size_t)m, in->ls, sl->lam)
    /* dvdot = H [A21 A22 B2]: column c of the S'' rows (A's rows z.., then B's) */
    for (int c = 0; c < nc; c++) {
        for (int t = 0; t < z; t++) col[t] = c < nx ? sl->A[z + t + (size_t)c * nx] : sl->B[z + t + (size_t)(c - nx) * nx];
        for (int i = 0; i < n; i++) Hd[i + (size_t)c * n] = dot(g, z, H + i, (size_t)n, col, 1, tt);
    }
    /* the dependent rows: R_lambda,y dlambda = -G */
    if (m) {
        for (int a = 0; a < m; a++) {
            int i = in->dep[a];
            for (int j = 0; j < m; j++) Ly[a + (size_t)j * m] = mblx_subst(g, in->Rl[i + (size_t)j * n], (size_t)m, in->ls, sl->lam);
            for (int c = 0; c < nc; c++) {
                mblx_id s = dot(g, n, in->Ma + i, (size_t)n, Hd + (size_t)c * n, 1, tt), e;
                if (c < z) e = dot(g, n, in->Rq + i, (size_t)n, H + (size_t)c * n, 1, tt);
                else if (c < nx) e = dot(g, n, in->Rv + i, (size_t)n, H + (size_t)(c - z) * n, 1, tt);
                else e = in->Rr[i + (size_t)(c - nx) * n];
                G[a + (size_t)c * m] = mblx_neg(g, mblx_add(g, s, e));
            }
        }
        rc = codegen_eval_nodes(g, (size_t)m * m, Ly, in->sv, lv, st);
        if (!rc) rc = codegen_solve_copy(g, m, Ly, lv, nc, G, "the multiplier block of the dependent equations", st);
        if (rc) goto done;
    }
    for (int k = 0; k < ny; k++) {
        for (int i = 0; i < n; i++) Yd[i] = LAM(mblx_diff(g, in->Y[k], in->as[i]));
        for (int j = 0; j < m; j++) Yl[j] = LAM(mblx_diff(g, in->Y[k], in->ls[j]));
        for (int c = 0; c < nc; c++) {
            mblx_id *dst = c < nx ? &sl->C[k + (size_t)c * ny] : &sl->D[k + (size_t)(c - nx) * ny];
            mblx_id e = mblx_add(g, dot(g, n, Yd, 1, Hd + (size_t)c * n, 1, tt), dot(g, m, Yl, 1, G + (size_t)c * m, 1, tt));
            *dst = mblx_add(g, mblx_subst(g, *dst, (size_t)m, in->ls, sl->lam), e);
        }
    }
#undef LAM
    rc = mblx_graph_status(g, st);
done:
    mbl_free(tt), mbl_free(Hd), mbl_free(G), mbl_free(Ly), mbl_free(Yd), mbl_free(Yl), mbl_free(col), mbl_free(lv);
    return rc;
}
