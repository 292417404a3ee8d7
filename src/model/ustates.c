/* The user's states s(q, t) (linearize.states) evaluated at a point, for clients that measure a
 * motion in them (src/sim/validate.c): values and exact gradients with respect to q. */
#include <string.h>

#include "mblin/la.h"
#include "model/formulate.h"
#include "model/model_internal.h"

void model_user_state_rows(mbl_model *md, mblx_id *e)
{
    int nus = md->nus, nuvs = md->nuvs;
    for (int j = 0; j < nus; j++) {
        e[j] = md->us[j];
        e[nus + j] = model_total_der(md, e[j]);
        e[2 * nus + j] = model_total_der(md, e[nus + j]);
    }
    for (int j = 0; j < nuvs; j++) {
        e[3 * nus + j] = md->uvs[j];
        e[3 * nus + nuvs + j] = model_total_der(md, md->uvs[j]);
    }
}

const char *mbl_model_user_state_text(const mbl_model *md, int i)
{
    return md && i >= 0 && i < md->nus ? md->us_text[i] : NULL;
}

int mbl_model_user_states(const mbl_model *md, const mbl_point *pt, double *s, double *ds_dq, mbl_status *st)
{
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_model_user_states: NULL argument");
    if (pt->n != md->n) return mbl_error(st, MBL_EARG, "mbl_model_user_states: the point has %d coordinates, the model %d",
                                         pt->n, md->n);
    int n = md->n, nus = md->nus;
    if (nus == 0) return 0;
    size_t nout = (size_t)(3 * nus + 2 * md->nuvs) + (size_t)md->usjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(md->work_size + 1, sizeof *work);
    double *us = mbl_alloc_array(nout + 1, sizeof *us);
    int rc = 0;
    if (!syms || !work || !us) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        model_fill_syms_pt(md, pt, syms);
        rc = model_eval_user_states(md, syms, us, work, st);
        if (rc) rc = model_eval_error(md, syms, "at the point", st);
    }
    if (!rc && s) memcpy(s, us, (size_t)nus * sizeof *s);
    if (!rc && ds_dq) {
        /* the rows 0..nus-1 of usjac (d s / d[a lam mu v q r]) in the q block */
        memset(ds_dq, 0, (size_t)nus * (size_t)n * sizeof *ds_dq);
        const double *jv = us + 3 * nus + 2 * md->nuvs;
        int c0 = model_blk0(md, MBL_BLK_Q);
        for (int p = 0; p < md->usjac.nz; p++) {
            int r = md->usjac.row[p], c = md->usjac.col[p] - c0;
            if (r < nus && c >= 0 && c < n) ds_dq[r + (size_t)c * nus] += jv[p];
        }
    }
    mbl_free(syms), mbl_free(work), mbl_free(us);
    return rc;
}

int mbl_model_user_states_dv(const mbl_model *md, const mbl_point *pt, const double *dq, double *dv, mbl_status *st)
{
    if (!md || !pt || !dq || !dv) return mbl_error(st, MBL_EARG, "mbl_model_user_states_dv: NULL argument");
    int n = md->n, m = md->m, nus = md->nus;
    if (md->k || md->nuvs || md->nX || md->nZ || nus + m != n)
        return mbl_error(st, MBL_EARG,
                         "mbl_model_user_states_dv: needs n = %d user states plus holonomic constraints and nothing "
                         "else (the model has %d and %d)", n, nus, m);
    if (pt->n != n) return mbl_error(st, MBL_EARG, "mbl_model_user_states_dv: the point has %d coordinates, the model %d",
                                     pt->n, n);
    size_t nout = (size_t)(3 * nus + 2 * md->nuvs) + (size_t)md->usjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(md->work_size + 1, sizeof *work);
    double *us = mbl_alloc_array(nout + 1, sizeof *us);
    double *jac = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *jac);
    double *A = mbl_calloc((size_t)n * (size_t)n + 1, sizeof *A), *D = mbl_calloc((size_t)n * (size_t)n + 1, sizeof *D);
    int rc = 0;
    if (!syms || !work || !us || !jac || !A || !D) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        model_fill_syms_pt(md, pt, syms);
        rc = model_eval_user_states(md, syms, us, work, st);
        if (!rc) rc = model_eval_jac(md, syms, jac, work, st);
        if (rc) rc = model_eval_error(md, syms, "at the point", st);
    }
    if (!rc) {
        /* A = [ds/dq; Phi_q], D = [d(ds/dt)/dq; d(Phi_q v)/dq] */
        int cq = model_blk0(md, MBL_BLK_Q);
        const double *uj = us + 3 * nus + 2 * md->nuvs;
        for (int p = 0; p < md->usjac.nz; p++) {
            int r = md->usjac.row[p], c = md->usjac.col[p] - cq;
            if (c < 0 || c >= n) continue;
            if (r < nus) A[r + (size_t)c * n] += uj[p];
            else if (r < 2 * nus) D[(r - nus) + (size_t)c * n] += uj[p];
        }
        int p0 = md->row0[MBL_ROW_PHI], d0 = md->row0[MBL_ROW_PHID];
        for (int p = 0; p < md->jac.nz; p++) {
            int r = md->jac.row[p], c = md->jac.col[p] - cq;
            if (c < 0 || c >= n) continue;
            if (r >= p0 && r < p0 + m) A[nus + (r - p0) + (size_t)c * n] += jac[p];
            else if (r >= d0 && r < d0 + m) D[nus + (r - d0) + (size_t)c * n] += jac[p];
        }
        /* dv = -A^{-1} D dq */
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += D[i + (size_t)c * n] * dq[c];
            dv[i] = -s;
        }
        rc = mbla_lu_solve(n, 1, A, n, dv, n, st);
        if (rc) mbl_error_prefix(st, "the user states and the constraints do not determine the coordinates at the point");
    }
    mbl_free(syms), mbl_free(work), mbl_free(us), mbl_free(jac), mbl_free(A), mbl_free(D);
    return rc;
}
