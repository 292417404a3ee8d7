/* Sensitivities (sensitivity.c): the shift of the operating point with the parameters, by the
 * implicit function theorem on the equations that define the point, stage by stage as
 * mbl_operating_point solves them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/sens_internal.h"

#define RB(g) (1u << (g))

/* One stage of the point's definition: rows `rowmask` solved for the columns `colmask` (cyclic
 * coordinates skipped when skip_cyclic). dx holds the current derivative (the file's data where
 * the stage starts from them); the stage's columns get dx_C += pinv(J_RC) r, r = -(Fp_R + J_R dx):
 * for a regular J_RC the implicit function theorem, for a minimum-norm projection its derivative
 * when the file's point already satisfies the rows. */
static int point_stage(const ctx *c, unsigned rowmask, unsigned colmask, int skip_cyclic, int nw, const int *wrt,
                       double *dxs, int *persist, mbl_status *st)
{
    /* at a given point, the held velocities (mbl_point.v_held) are data, not solved for */
    const int *held = c->pt->at == MBL_AT_GIVEN ? c->pt->v_held : NULL;
    const mbl_dae_layout *L = &c->L;
    int nF = L->nF, nunk = L->nunk, nr = 0, nc = 0, rc = 0;
    int *rows = mbl_alloc_array((size_t)nF + 1, sizeof *rows), *cols = mbl_alloc_array((size_t)nunk + 1, sizeof *cols);
    double *A = NULL, *r = NULL, *s = NULL, *U = NULL, *VT = NULL, *rs = NULL, *y = NULL;
    if (!rows || !cols) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int g = 0; g < MBL_DAE_NROWG; g++)
        if ((rowmask >> g) & 1u)
            for (int i = L->row0[g]; i < L->row0[g + 1]; i++) rows[nr++] = i;
    for (int b = 0; b < MBL_DAE_NBLK; b++)
        if ((colmask >> b) & 1u)
            for (int q = L->col0[b]; q < L->col0[b + 1]; q++) {
                if (b == MBL_DAE_Q && skip_cyclic && c->cyclic[q - L->col0[b]]) continue;
                if (b == MBL_DAE_V && held && held[q - L->col0[b]]) continue;
                cols[nc++] = q;
            }
    if (!nr || !nc || !nw) goto done;
    int kk = nr < nc ? nr : nc;
    A = mbl_alloc_array((size_t)nr * nc + 1, sizeof *A);
    r = mbl_alloc_array((size_t)nr + 1, sizeof *r);
    rs = mbl_alloc_array((size_t)nr + 1, sizeof *rs);
    y = mbl_alloc_array((size_t)kk + 1, sizeof *y);
    s = mbl_alloc_array((size_t)kk + 1, sizeof *s);
    U = mbl_alloc_array((size_t)nr * kk + 1, sizeof *U);
    VT = mbl_alloc_array((size_t)kk * nc + 1, sizeof *VT);
    if (!A || !r || !rs || !y || !s || !U || !VT) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int a = 0; a < nr; a++) {
        int i = rows[a];
        double nrm = 0;
        for (int b = 0; b < nc; b++) {
            double v = c->Jd[i + (size_t)cols[b] * nF];
            A[a + (size_t)b * nr] = v;
            nrm += v * v;
        }
        rs[a] = nrm = nrm > 0 ? 1.0 / sqrt(nrm) : 1.0; /* rows to unit 2-norm: the rank is unit-free */
        for (int b = 0; b < nc; b++) A[a + (size_t)b * nr] *= nrm;
    }
    rc = mbla_svd(nr, nc, A, nr, 'S', s, U, nr, VT, kk, st); /* once for every parameter */
    if (rc) goto done;
    int rank = mbla_rank_from_diag(nr, nc, kk, s, 1, c->rank_tol);
    for (int w = 0; w < nw; w++) {
        double *dx = dxs + (size_t)w * nunk;
        int j = wrt[w];
        for (int a = 0; a < nr; a++) {
            int i = rows[a];
            double ri = -c->Fp[i + (size_t)j * nF];
            for (int q = 0; q < nunk; q++)
                if (dx[q] != 0) ri -= c->Jd[i + (size_t)q * nF] * dx[q];
            r[a] = ri * rs[a];
        }
        for (int t = 0; t < rank; t++) {
            double v = 0;
            for (int a = 0; a < nr; a++) v += U[a + (size_t)t * nr] * r[a];
            y[t] = v / s[t];
        }
        /* the part of r outside the range of J_RC: nonzero when the rows cannot follow the
         * parameter (a singular configuration whose geometry it changes): no derivative */
        double rn = 0, out = 0;
        for (int a = 0; a < nr; a++) {
            double u = r[a];
            for (int t = 0; t < rank; t++) u -= U[a + (size_t)t * nr] * (y[t] * s[t]);
            out += u * u;
            rn += r[a] * r[a];
        }
        if (out > 1e-12 * fmax(rn, 1e-300) && sqrt(out) > 1e-10) persist[w] = 0;
        for (int b = 0; b < nc; b++) {
            double v = 0;
            for (int t = 0; t < rank; t++) v += VT[t + (size_t)b * kk] * y[t];
            dx[cols[b]] += v;
        }
    }
done:
    mbl_free(rows);
    mbl_free(cols);
    mbl_free(A);
    mbl_free(r);
    mbl_free(rs);
    mbl_free(y);
    mbl_free(s);
    mbl_free(U);
    mbl_free(VT);
    return rc;
}

/* dx/dp for every parameter in wrt (dxs: nunk x nw): the same stages as mbl_operating_point for
 * the point's kind. */
int study_sens_point_derivative(const ctx *c, int nw, const int *wrt, double *dxs, int *persist, mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int nunk = L->nunk, rc = 0;
    for (int w = 0; w < nw; w++) {
        double *dx = dxs + (size_t)w * nunk;
        for (int q = 0; q < nunk; q++) dx[q] = c->x0p[q + (size_t)wrt[w] * nunk];
        for (int q = L->col0[MBL_DAE_VDOT]; q < L->col0[MBL_DAE_VDOT + 1]; q++) dx[q] = 0;
        for (int q = L->col0[MBL_DAE_LAMBDA]; q < L->col0[MBL_DAE_MU + 1]; q++) dx[q] = 0;
        if (c->pt->at == MBL_AT_EQUILIBRIUM)
            for (int q = L->col0[MBL_DAE_V]; q < L->col0[MBL_DAE_V + 1]; q++) dx[q] = 0;
        /* a velocity held at a value of the options is a constant */
        for (int i = 0; c->pt->at == MBL_AT_GIVEN && c->pt->v_held && i < L->n; i++)
            if (c->pt->v_held[i] == 2) dx[L->col0[MBL_DAE_V] + i] = 0;
        persist[w] = 1;
    }
    /* user ODE states X and implicit variables Z (source 000 Eq. 10) as mbl_operating_point solves
     * them: the ODEs and the variables' equations with the accelerations (Xdot, Z) and, at an
     * equilibrium or a steady motion, with q (X, Z) */
    unsigned ext_rows = RB(MBL_DAE_ODE) | RB(MBL_DAE_VAR);
    unsigned acc_rows = RB(MBL_DAE_EOM) | RB(MBL_DAE_PHIDD) | RB(MBL_DAE_NHD) | ext_rows;
    unsigned acc_cols = RB(MBL_DAE_VDOT) | RB(MBL_DAE_LAMBDA) | RB(MBL_DAE_MU) | RB(MBL_DAE_XDOT) | RB(MBL_DAE_Z);
    unsigned pos_cols = RB(MBL_DAE_Q) | RB(MBL_DAE_LAMBDA) | RB(MBL_DAE_MU) | RB(MBL_DAE_X) | RB(MBL_DAE_Z);
    for (int w = 0; w < nw; w++) /* solved for, not data */
        for (int q = L->col0[MBL_DAE_XDOT]; q < L->col0[MBL_DAE_Z + 1]; q++) dxs[(size_t)w * nunk + q] = 0;
    switch (c->pt->at) {
    case MBL_AT_EQUILIBRIUM:
        rc = point_stage(c, RB(MBL_DAE_EOM) | RB(MBL_DAE_PHI) | RB(MBL_DAE_NH) | ext_rows, pos_cols, 0, nw, wrt, dxs,
                         persist, st);
        break;
    case MBL_AT_GIVEN:
        if (L->m) rc = point_stage(c, RB(MBL_DAE_PHI), RB(MBL_DAE_Q), 0, nw, wrt, dxs, persist, st);
        if (!rc && L->m + L->k)
            rc = point_stage(c, RB(MBL_DAE_PHID) | RB(MBL_DAE_NH), RB(MBL_DAE_V), 0, nw, wrt, dxs, persist, st);
        if (!rc) rc = point_stage(c, acc_rows, acc_cols, 0, nw, wrt, dxs, persist, st);
        break;
    case MBL_AT_STEADY:
        rc = point_stage(c, acc_rows | RB(MBL_DAE_PHID) | RB(MBL_DAE_NH) | RB(MBL_DAE_PHI), pos_cols, 1, nw, wrt, dxs,
                         persist, st);
        if (!rc) rc = point_stage(c, acc_rows, acc_cols, 0, nw, wrt, dxs, persist, st);
        break;
    default:
        rc = mbl_error(st, MBL_EARG, "unknown operating point kind %d", (int)c->pt->at);
    }
    return rc;
}
