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
 * mbl_reduce with dR/dq taken at lambda = 0. Refuses singular configurations (no regular
 * partition). */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

int mbl_lin_projection(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                       mbl_status *st)
{
    int n = md->n, m = md->m, r = 0, rc;
    mbl_blocks B;
    mbl_linear *lin = NULL;
    int *rows = NULL, *indep = NULL;
    int *uidx = NULL;
    double *y = NULL;
    double *Pd = NULL, *Pddv = NULL, *Pddq = NULL, *S0 = NULL, *Si = NULL, *usv = NULL;
    double *P = NULL, *jac = NULL, *Rq0 = NULL, *g = NULL, *Fv = NULL, *zero = NULL, *vv = NULL, *Pd0 = NULL,
           *Pdi = NULL, *dR = NULL, *Kx = NULL, *dA = NULL;
    char **names = NULL;
    mbla_dlu *lu = NULL, *mlu = NULL;
    *out = NULL;
    rc = mbl_require_holonomic(md, opt, "projection", st);
    if (rc) return rc;
    if (mbl_outputs_use(md, MBL_BLK_LAMBDA))
        return mbl_error(st, MBL_EMODEL,
                         "projection: outputs of multipliers (lambda) are not supported (projection never forms "
                         "the multipliers); use augmented");
    rc = mbl_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    rows = mbl_calloc((size_t)m + 1, sizeof *rows);
    indep = mbl_calloc((size_t)n + 1, sizeof *indep);
    if (!rows || !indep) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_require_full_rank(&B, opt->rank_tol, rows, &r, "projection",
                               "no velocity transformation R of fixed size exists", st);
    if (rc) goto done;
    int z = n - r;
    size_t nn = (size_t)n * n, mn = (size_t)m * n, zn = (size_t)z * n + 1;
    size_t nusv = (size_t)(3 * md->nus + 2 * md->nuvs) + (size_t)md->usjac.nz + 1;
    P = mbl_calloc(zn, sizeof *P), Pd = mbl_calloc(zn, sizeof *Pd), Pddv = mbl_calloc(zn, sizeof *Pddv);
    Pddq = mbl_calloc(zn, sizeof *Pddq), S0 = mbl_calloc(zn, sizeof *S0), Si = mbl_calloc(zn, sizeof *Si);
    usv = mbl_calloc(nusv, sizeof *usv);
    uidx = mbl_calloc((size_t)n + 1, sizeof *uidx);
    names = mbl_calloc((size_t)z + 1, sizeof *names);
    jac = mbl_calloc((size_t)md->jac.nz + 1, sizeof *jac);
    Rq0 = mbl_calloc(nn + 1, sizeof *Rq0);
    Fv = mbl_calloc((size_t)md->nF + 1, sizeof *Fv);
    zero = mbl_calloc((size_t)(n > m ? n : m) + 1, sizeof *zero);
    vv = mbl_calloc((size_t)n + 1, sizeof *vv);
    Pd0 = mbl_calloc(mn + 1, sizeof *Pd0);
    Pdi = mbl_calloc(mn + 1, sizeof *Pdi);
    dR = mbl_calloc((size_t)n + 1, sizeof *dR);
    Kx = mbl_calloc((size_t)z * z + 1, sizeof *Kx);
    lin = mbl_linear_alloc(n, z, z, md->nr, md->ny);
    if (!P || !Pd || !Pddv || !Pddq || !S0 || !Si || !usv || !uidx || !names || !jac || !Rq0 || !Fv || !zero || !vv ||
        !Pd0 || !Pdi || !dR || !Kx || !lin) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_lin_states(md, &B, opt, z, uidx, indep, names, lin->selection, sizeof lin->selection, st);
    if (rc) goto done;
    int usoff = 3 * md->nus + 2 * md->nuvs;
    const double *usjac = B.ev.us + usoff;
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 0, P);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 1, Pd);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 2, Pddv);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 3, Pddq);
    snprintf(lin->method, sizeof lin->method, "projection");
    /* equations of motion without multipliers: dR/dq at lambda = 0 and g = M q'' - f */
    rc = mbl_blocks_eval_jac(md, pt, pt->v, zero, jac, &B.ev, st);
    if (rc) goto done;
    int e0 = md->row0[MBL_ROW_EOM], e1 = md->row0[MBL_ROW_EOM + 1];
    int v0 = md->row0[MBL_ROW_PHID], v1 = md->row0[MBL_ROW_PHID + 1];
    mbl_sjac_dense(md, &md->jac, jac, e0, e1, MBL_BLK_Q, Rq0);
    rc = mblx_tape_eval(md->tape_F, B.ev.syms, Fv, B.ev.work, st);
    if (rc) goto done;
    g = Fv + e0;
    rc = mbl_reduce(&B, rows, r, P, Pd, Pddv, Pddq, z, Rq0, opt->rcond_min, lin, &lu, st);
    if (rc) goto done;
    const double *R = lin->q_S;
    /* Phi_qq(u, .) = d(Phi')/dq (v = u) - d(Phi')/dq (v = 0) */
    rc = mbl_blocks_eval_jac(md, pt, zero, pt->lambda, jac, &B.ev, st);
    if (rc) goto done;
    mbl_sjac_dense(md, &md->jac, jac, v0, v1, MBL_BLK_Q, Pd0);
    rc = mblx_tape_eval(md->tape_us, B.ev.syms, usv, B.ev.work, st);
    if (rc) goto done;
    mbl_lin_state_rows(md, uidx, indep, z, usv + usoff, 1, S0);
    y = mbl_calloc((size_t)n + 1, sizeof *y);
    if (!y) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(y, g, (size_t)n * sizeof *y);
    if (n) rc = mbla_dlu_solve(lu, 'T', 1, y, n, st);
    if (rc) goto done;
    for (int i = 0; i < z; i++) {
        for (int c = 0; c < n; c++) vv[c] = R[c + (size_t)i * n];
        rc = mbl_blocks_eval_jac(md, pt, vv, pt->lambda, jac, &B.ev, st);
        if (!rc) rc = mblx_tape_eval(md->tape_us, B.ev.syms, usv, B.ev.work, st);
        if (rc) goto done;
        mbl_sjac_dense(md, &md->jac, jac, v0, v1, MBL_BLK_Q, Pdi);
        for (size_t p = 0; p < mn; p++) Pdi[p] -= Pd0[p];
        mbl_lin_state_rows(md, uidx, indep, z, usv + usoff, 1, Si);
        for (size_t p = 0; p + 1 < zn; p++) Si[p] -= S0[p];
        /* dR/dz_i = -Jc^-1 [Phi_qq(R e_i, R); s_qq(R e_i, R)] (s_qq = 0 for coordinate states), and
         * K column i += (dR/dz_i)^T g = -R^T [Phi_qq(R e_i, .); s_qq(R e_i, .)]^T y, y = Jc^-T g:
         * one transposed solve instead of z solves per column */
        for (int c = 0; c < n; c++) {
            double u = 0;
            for (int a = 0; a < r; a++) u += Pdi[rows[a] + (size_t)c * m] * y[a];
            for (int a = 0; a < z; a++) u += Si[a + (size_t)c * z] * y[r + a];
            dR[c] = u;
        }
        for (int j = 0; j < z; j++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += dR[c] * R[c + (size_t)j * n];
            Kx[j + (size_t)i * z] = -s;
        }
    }
    /* K-hat += Kx; A21 -= M-hat^-1 Kx; outputs through the accelerations */
    int nx = 2 * z;
    if (z) {
        for (size_t p = 0; p < (size_t)z * z; p++) lin->K[p] += Kx[p];
        rc = mbla_dlu_new(z, lin->M, z, &mlu, st);
        if (!rc) rc = mbla_dlu_solve(mlu, 'N', z, Kx, z, st);
        if (rc) goto done;
        for (int j = 0; j < z; j++)
            for (int i = 0; i < z; i++) lin->A[z + i + (size_t)j * nx] -= Kx[i + (size_t)j * z];
        if (md->ny) {
            dA = mbl_calloc((size_t)n * z + 1, sizeof *dA);
            if (!dA) {
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                goto done;
            }
            mbla_gemm('N', 'N', n, z, z, -1.0, R, n, Kx, z, 0.0, dA, n, NULL);
            mbla_gemm('N', 'N', md->ny, z, n, 1.0, B.Ya, md->ny, dA, n, 1.0, lin->C, md->ny, NULL);
        }
    }
    if (mbl_lin_set_names(md, lin, names)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->notes, sizeof lin->notes, "velocity transformation R (%d x %d) and dR/dz from the constraint Hessian",
             n, z);
    *out = lin;
    lin = NULL;
done:
    mbl_blocks_free(&B);
    mbl_free(rows), mbl_free(indep), mbl_free(P), mbl_free(names), mbl_free(jac), mbl_free(Rq0), mbl_free(Fv);
    mbl_free(zero), mbl_free(vv), mbl_free(Pd0), mbl_free(Pdi), mbl_free(dR), mbl_free(Kx), mbl_free(dA);
    mbl_free(y), mbl_free(uidx), mbl_free(Pd), mbl_free(Pddv), mbl_free(Pddq);
    mbl_free(S0), mbl_free(Si), mbl_free(usv);
    mbla_dlu_free(lu);
    mbla_dlu_free(mlu);
    mbl_linear_free(lin);
    return rc;
}
