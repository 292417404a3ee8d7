/* `projection`: the MCS velocity projection of source 001 Sec. 3.1 (Eq. 2-6).
 *
 * q' = R z' with R = dq/dz = [Phi_q; z_q]^-1 [0; I] for the independent coordinates z of
 * `partition` (the selection shared with `augmented`, user states preferred). The projected
 * equations H1 = R^T (M R z'' + M R' z' - f) = 0 are linearized with R and dR/dz explicit:
 * dR/dz_i = -[Phi_q; z_q]^-1 [Phi_qq(R e_i, R); z_qq(R e_i, R)], where the Hessian contractions
 * Phi_qq(u, .) and z_qq(u, .) are the exact d(Phi')/dq and d(z')/dq evaluated at velocity u minus
 * their values at zero velocity (Phi' = Phi_q v + Phi_t is linear in v). The term
 * dR^T/dz (M q'' - f) of Eq. 5 is assembled from these with one transposed solve
 * y = [Phi_q; z_q]^-T (M q'' - f), the equations of motion evaluated without multipliers: the
 * multipliers are never used (the geometric stiffness comes from dR/dz). The remaining terms (M,
 * dR z'/dz through the velocity and acceleration constraints, df/dq, df/dz') are those of
 * lin_reduce with dR/dq taken at lambda = 0. Refuses singular configurations (no regular
 * partition).
 *
 * Non-holonomic constraints (source 001's R for q' = R w): w are the velocity states W of
 * `augmented` and R = dv/dW = [Phi_q; A_nh; W_v]^-1 [0; 0; I] (n x z1), the positions S keep
 * dq/dS = Qs. Then dR/dq is no longer a symmetric Hessian contraction, and the term is taken
 * directly: K-hat(j, i) += -y^T (d(Jv R e_j)/dq) Qs e_i with y = Jv^-T (M q'' - f), Jv = [Phi_q;
 * A_nh; W_v], d(Jv u)/dq being the exact d(Phi', c, W)/dq at velocity u minus their values at zero
 * velocity (all three are linear in v; user velocity states must be too). With W = S' (holonomic)
 * this is the formula above.
 * Outputs of the multipliers: lambda and mu recovered from the rows R^T removes (Jv^T y = M q'' - f at
 * the point, then the linearized rows with projection's own accelerations; proj_multiplier_outputs). */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* rows of d(Jv u)/dq at the velocity in the last evaluation: [Phi' rows; c; W] (n x n) */
static void vel_rows(const mbl_blocks *B, const int *rows, int r, const double *jac, const mbl_rstates *rsu, double *Pm,
                     double *out)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k, z1 = rsu->z1;
    int v0 = mv->row0[MBL_ROW_PHID], c0 = mv->row0[MBL_ROW_NH];
    (void)B;
    lin_sjac_dense(mv, &mv->jac, jac, v0, v0 + m, MBL_BLK_Q, Pm);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < r; i++) out[i + (size_t)j * n] = Pm[rows[i] + (size_t)j * m];
    lin_sjac_dense(mv, &mv->jac, jac, c0, c0 + k, MBL_BLK_Q, Pm);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < k; i++) out[r + i + (size_t)j * n] = Pm[i + (size_t)j * k];
        for (int i = 0; i < z1; i++) out[r + k + i + (size_t)j * n] = rsu->Wq[i + (size_t)j * z1];
    }
}

/* K-hat += Kx; A21 -= M-hat^-1 Kx (Kx, z1 x z0, overwritten); the outputs through the accelerations
 * (R: the velocity transformation, n x z1). */
static int proj_add_kx(const mbl_blocks *B, const double *R, double *Kx, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, z0 = lin->z0, z1 = lin->z1, nx = z0 + z1;
    for (size_t p = 0; p < (size_t)z1 * z0; p++) lin->K[p] += Kx[p];
    mbla_dlu *mlu = NULL;
    int rc = mbla_dlu_new(z1, lin->M, z1, &mlu, st);
    if (!rc) rc = mbla_dlu_solve(mlu, 'N', z0, Kx, z1, st);
    mbla_dlu_free(mlu);
    if (rc) return rc;
    for (int j = 0; j < z0; j++)
        for (int i = 0; i < z1; i++) lin->A[z0 + i + (size_t)j * nx] -= Kx[i + (size_t)j * z1];
    if (mv->ny) {
        double *dA = mbl_calloc((size_t)n * z0 + 1, sizeof *dA);
        if (!dA) return mbl_error(st, MBL_ENOMEM, "out of memory");
        mbla_gemm('N', 'N', n, z0, z1, -1.0, R, n, Kx, z1, 0.0, dA, n, NULL);
        mbla_gemm('N', 'N', mv->ny, z0, n, 1.0, B->Ya, mv->ny, dA, n, 1.0, lin->C, mv->ny, NULL);
        mbl_free(dA);
    }
    return 0;
}

/* Outputs of the multipliers: projection recovers them from the rows R^T removes. At the point,
 * Jv^T y = M q'' - f (y, the solve above) gives lambda(rows) = -y[0..r), mu = -y[r..r+k); the
 * linearized rows Phi_q^T dlambda + A_nh^T dmu = -(M da + Rv dv + Rq dq + Rr dr) with the
 * accelerations of projection's own A, B and Rq at those multipliers give (dlambda, dmu)
 * (lin_reduce_multipliers). jac, Rq: work (Jacobian values; n x n). */
static int proj_multiplier_outputs(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, const int *rows, int r,
                                   const mbl_rkin *kin, const mbla_dlu *lu, const double *y, double *jac, double *Rq,
                                   mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k;
    if (!lin_outputs_use(mv, MBL_BLK_LAMBDA) && !lin_outputs_use(mv, MBL_BLK_MU)) return 0;
    double *lam = mbl_calloc((size_t)(m + k) + 1, sizeof *lam);
    if (!lam) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < r; i++) lam[rows[i]] = -y[i];
    for (int i = 0; i < k; i++) lam[m + i] = -y[r + i];
    int rc = lin_blocks_eval_jac(md, pt, pt->v, lam, lam + m, jac, &B->ev, st);
    if (!rc) {
        int e0 = mv->row0[MBL_ROW_EOM];
        lin_sjac_dense(mv, &mv->jac, jac, e0, e0 + n, MBL_BLK_Q, Rq);
        rc = lin_reduce_multipliers(B, rows, r, kin, lu, Rq, lin, st);
    }
    mbl_free(lam);
    return rc;
}

int lin_projection(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                   mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, k = mv->k, r = 0, rc;
    mbl_blocks B;
    mbl_rstates rs, ru, us;
    mbl_rkin kin;
    mbl_linear *lin = NULL;
    int *rows = NULL;
    double *y = NULL, *usv = NULL, *jac = NULL, *Rq0 = NULL, *Fv = NULL, *zero = NULL, *vv = NULL, *J0 = NULL,
           *Ji = NULL, *Pm = NULL, *u = NULL, *Kx = NULL;
    mbla_dlu *lu = NULL;
    char sel[sizeof lin->selection];
    memset(&rs, 0, sizeof rs), memset(&ru, 0, sizeof ru), memset(&kin, 0, sizeof kin), memset(&us, 0, sizeof us);
    *out = NULL;
    rc = lin_require_dense(md, opt, "projection", st);
    if (rc) return rc;
    rc = lin_dense_open(md, pt, &B, &rows, st);
    if (rc) return rc;
    int frozen = 0;
    rc = lin_dense_states(md, pt, opt, &B, "projection", "no velocity transformation R of fixed size exists", rows, &r,
                          &rs, &us, &frozen, sel, sizeof sel, st);
    if (rc) goto done;
    int z0 = rs.z0, z1 = rs.z1;
    size_t nn = (size_t)n * n;
    size_t nusv = (size_t)(3 * mv->nus + 2 * mv->nuvs) + (size_t)mv->usjac.nz + 1;
    int mk = m > k ? m : k;
    usv = mbl_calloc(nusv, sizeof *usv);
    jac = mbl_calloc((size_t)mv->jac.nz + 1, sizeof *jac);
    Rq0 = mbl_calloc(nn + 1, sizeof *Rq0);
    Fv = mbl_calloc((size_t)mv->nF + 1, sizeof *Fv);
    zero = mbl_calloc((size_t)(n > mk ? n : mk) + 1, sizeof *zero);
    vv = mbl_calloc((size_t)n + 1, sizeof *vv);
    J0 = mbl_calloc(nn + 1, sizeof *J0), Ji = mbl_calloc(nn + 1, sizeof *Ji);
    Pm = mbl_calloc((size_t)mk * n + 1, sizeof *Pm);
    u = mbl_calloc((size_t)n + 1, sizeof *u);
    y = mbl_calloc((size_t)n + 1, sizeof *y);
    Kx = mbl_calloc((size_t)z1 * z0 + 1, sizeof *Kx);
    lin = lin_linear_alloc_x(n, z0, z1, mv->nX, mv->nr, mv->ny);
    if (!usv || !jac || !Rq0 || !Fv || !zero || !vv || !J0 || !Ji || !Pm || !u || !y || !Kx || !lin ||
        lin_rstates_alloc(&ru, n, z0, z1)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    ru.S = rs.S, ru.W = rs.W; /* borrowed: set back to NULL before ru is freed */
    memcpy(lin->selection, sel, sizeof sel);
    int usoff = 3 * mv->nus + 2 * mv->nuvs;
    snprintf(lin->method, sizeof lin->method, "projection");
    if (mv->ext && !lin_multipliers_reactions_only(md)) {
        /* forces (or ode rows) of the multipliers: the multipliers are part of the physics and R^T
         * cannot remove them; their perturbations are solved with the full linearized rows */
        rc = lin_reduce(&B, rows, r, &rs, NULL, opt->rcond_min, lin, NULL, NULL, st);
        if (!rc && frozen) rc = lin_frozen_change(&B, rows, r, &us, &rs, opt->rcond_min, lin, st);
        if (!rc && lin_state_names(md, lin, frozen ? &us : &rs)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (rc) goto done;
        snprintf(lin->notes, sizeof lin->notes,
                 "velocity transformation R (%d x %d); the model's forces or ode rows use the multipliers, so R^T does "
                 "not eliminate them: their perturbations are solved from the full linearized equations (source 000 "
                 "Eq. 10c), dR/dq enters through the multipliers' geometric stiffness",
                 n, z1);
        *out = lin;
        lin = NULL;
        goto done;
    }
    /* equations of motion without multipliers: dR/dq at lambda = mu = 0 and g = M q'' - f */
    rc = lin_blocks_eval_jac(md, pt, pt->v, zero, zero, jac, &B.ev, st);
    if (rc) goto done;
    int e0 = mv->row0[MBL_ROW_EOM], e1 = mv->row0[MBL_ROW_EOM + 1];
    lin_sjac_dense(mv, &mv->jac, jac, e0, e1, MBL_BLK_Q, Rq0);
    rc = model_eval_F(md, B.ev.syms, Fv, B.ev.work, st);
    if (rc) goto done;
    memcpy(y, Fv + e0, (size_t)n * sizeof *y);
    rc = lin_reduce(&B, rows, r, &rs, Rq0, opt->rcond_min, lin, &kin, &lu, st);
    if (rc) goto done;
    const double *R = kin.Qw, *Qs = kin.Qs;
    /* d(Jv u)/dq = rows at velocity u minus rows at zero velocity */
    rc = lin_blocks_eval_jac(md, pt, zero, pt->lambda, pt->mu, jac, &B.ev, st);
    if (!rc) rc = model_eval_user_states(md, B.ev.syms, usv, B.ev.work, st);
    if (rc) goto done;
    lin_rstates_rows(mv, &ru, usv + usoff);
    vel_rows(&B, rows, r, jac, &ru, Pm, J0);
    if (n) rc = mbla_dlu_solve(lu, 'T', 1, y, n, st); /* y = Jv^-T g */
    if (rc) goto done;
    for (int j = 0; j < z1; j++) {
        for (int c = 0; c < n; c++) vv[c] = R[c + (size_t)j * n];
        rc = lin_blocks_eval_jac(md, pt, vv, pt->lambda, pt->mu, jac, &B.ev, st);
        if (!rc) rc = model_eval_user_states(md, B.ev.syms, usv, B.ev.work, st);
        if (rc) goto done;
        lin_rstates_rows(mv, &ru, usv + usoff);
        vel_rows(&B, rows, r, jac, &ru, Pm, Ji);
        /* u^T = y^T (d(Jv R e_j)/dq); K-hat(j, :) += -u^T Qs */
        for (int c = 0; c < n; c++) {
            double s = 0;
            for (int a = 0; a < n; a++) s += y[a] * (Ji[a + (size_t)c * n] - J0[a + (size_t)c * n]);
            u[c] = s;
        }
        for (int i = 0; i < z0; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += u[c] * Qs[c + (size_t)i * n];
            Kx[j + (size_t)i * z1] = -s;
        }
    }
    /* K-hat += Kx; A21 -= M-hat^-1 Kx; outputs through the accelerations (an Eq. 10 model: its
     * projected rows solved again with Kx, the ode and implicit-variable rows coupled) */
    if (B.ext) {
        rc = lin_reduce_finish_ext(&B, r, &rs, &kin, Rq0, Kx, rows, lu, opt->rcond_min, lin, st);
        if (rc) goto done;
    } else {
        if (z1 && z0) rc = proj_add_kx(&B, R, Kx, lin, st);
        if (!rc) rc = proj_multiplier_outputs(md, pt, &B, rows, r, &kin, lu, y, jac, Rq0, lin, st);
        if (rc) goto done;
    }
    if (frozen) rc = lin_frozen_change(&B, rows, r, &us, &rs, opt->rcond_min, lin, st);
    if (rc) goto done;
    if (lin_state_names(md, lin, frozen ? &us : &rs)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->notes, sizeof lin->notes, "velocity transformation R (%d x %d) and dR/dq from the constraint Hessian%s%s%s",
             n, z1, k ? " and the non-holonomic rows" : "",
             mv->nX + mv->nZ ? "; ode and implicit-variable rows solved with the projected equations" : "",
             frozen ? "; point with motion: computed in the position states and their rates, changed to the speeds by the constant map at the point" : "");
    *out = lin;
    lin = NULL;
done:
    ru.S = ru.W = NULL;
    lin_blocks_free(&B);
    lin_rstates_free(&rs), lin_rstates_free(&ru), lin_rkin_free(&kin), lin_rstates_free(&us);
    mbl_free(rows), mbl_free(usv), mbl_free(jac), mbl_free(Rq0), mbl_free(Fv), mbl_free(zero), mbl_free(vv);
    mbl_free(J0), mbl_free(Ji), mbl_free(Pm), mbl_free(u), mbl_free(y), mbl_free(Kx);
    mbla_dlu_free(lu);
    mbl_linear_free(lin);
    return rc;
}
