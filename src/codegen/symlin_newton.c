/* Symbolic linear models (symlin.c): the Newton iteration for the operating point, as
 * expressions for the generated code (mbl_symlin_newton). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "codegen/symlin_internal.h"

int mbl_symlin_newton(mbl_symlin *sl, mbl_status *st)
{
    if (sl->at != MBL_AT_EQUILIBRIUM && sl->at != MBL_AT_STEADY)
        return mbl_error(st, MBL_EARG,
                         "the Newton iteration solves an equilibrium or a steady motion; this point is %s",
                         sl->at == MBL_AT_TRIM ? "a trim (linearize.at: trim)" : "given (linearize.at: given)");
    if (sl->nq > sl->n)
        return mbl_error(st, MBL_EARG,
                         "the Newton iteration solves for the coordinates and multipliers only; the model has user "
                         "ODE states or implicit variables (%s): not supported with --newton", sl->qname[sl->n]);
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m, N = n + m, nrow = n + 3 * m, rc = 0;
    sl->nn = 0;
    mbl_free(sl->nunk), mbl_free(sl->nres), mbl_free(sl->njac), mbl_free(sl->nstep);
    sl->nunk = NULL, sl->nres = sl->njac = sl->nstep = NULL;
    mblx_id *rows = codegen_new_ids((size_t)nrow), *unk = codegen_new_ids((size_t)N), *al = codegen_new_ids(2 * (size_t)n);
    mblx_id *sub = codegen_new_ids(2 * (size_t)n), *terms = codegen_new_ids(2 * (size_t)n), *J = NULL;
    int *cols = mbl_alloc_array((size_t)N + 1, sizeof *cols), *jpvt = NULL;
    size_t ns = mblx_symbol_count(g) + 1;
    double *sv = mbl_calloc(ns, sizeof *sv), *Jv = NULL, *tau = NULL, *vals = NULL;
    if (!rows || !unk || !al || !sub || !terms || !cols || !sv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    /* residuals at vdot = 0 (and v = 0 at rest) */
    for (int i = 0; i < n; i++) al[i] = sl->asym[i], sub[i] = mblx_const(g, 0.0);
    size_t nsub = (size_t)n;
    if (!sl->moving) {
        for (int i = 0; i < n; i++) al[n + i] = sl->v[i], sub[n + i] = sub[0];
        nsub = 2 * (size_t)n;
    }
    int nr = 0;
    for (int i = 0; i < n; i++) rows[nr++] = mblx_subst(g, sl->R[i], nsub, al, sub);
    for (int j = 0; j < m; j++) rows[nr++] = sl->Phi[j];
    if (sl->moving)
        for (int j = 0; j < m; j++) {
            size_t nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id d = mblx_diff(g, sl->Phi[j], sl->q[i]);
                if (!codegen_is_zero(g, d)) terms[nt++] = mblx_mul(g, d, sl->v[i]);
            }
            mblx_id pv = mblx_sum(g, nt, terms);
            rows[nr++] = pv;
            nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id d = mblx_diff(g, pv, sl->q[i]);
                if (!codegen_is_zero(g, d)) terms[nt++] = mblx_mul(g, d, sl->v[i]);
            }
            rows[nr++] = mblx_sum(g, nt, terms);
        }
    int keep = 0;
    for (int i = 0; i < nr; i++)
        if (!codegen_is_zero(g, rows[i])) rows[keep++] = rows[i];
    nr = keep;
    for (int i = 0; i < n; i++) unk[i] = sl->q[i];
    for (int j = 0; j < m; j++) unk[n + j] = sl->lsym[j];
    /* the Jacobian's values at the point */
    J = codegen_new_ids((size_t)nr * N);
    Jv = mbl_alloc_array((size_t)nr * N + 1, sizeof *Jv);
    if (!J || !Jv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < nr; i++) J[i + (size_t)j * nr] = mblx_diff(g, rows[i], unk[j]);
    for (int i = 0; i < sl->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = sl->pval[i];
    for (int i = 0; i < n; i++) {
        sv[mblx_symbol_index(g, sl->q[i])] = sl->qval[i];
        sv[mblx_symbol_index(g, sl->v[i])] = sl->moving ? sl->vval[i] : 0.0;
    }
    for (int j = 0; j < sl->nr; j++) sv[mblx_symbol_index(g, sl->r[j])] = sl->rval[j];
    {
        /* the multipliers at the point: the linear model's lambda (moving: exact; at rest lambda(q)) */
        double *lv = mbl_alloc_array((size_t)m + 1, sizeof *lv);
        if (!lv) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        rc = codegen_eval_nodes(g, (size_t)m, sl->lam, sv, lv, st);
        for (int j = 0; !rc && j < m; j++) sv[mblx_symbol_index(g, sl->lsym[j])] = lv[j];
        mbl_free(lv);
    }
    if (!rc) rc = codegen_eval_nodes(g, (size_t)nr * N, J, sv, Jv, st);
    if (rc) goto out;
    /* unknowns whose column vanishes at the point (cyclic coordinates, a spin angle): kept */
    double scale = 0.0;
    for (size_t i = 0; i < (size_t)nr * N; i++) scale = fmax(scale, fabs(Jv[i]));
    int nc = 0;
    for (int j = 0; j < N; j++) {
        double cm = 0.0;
        for (int i = 0; i < nr; i++) cm = fmax(cm, fabs(Jv[i + (size_t)j * nr]));
        if (cm > 1e-13 * scale) cols[nc++] = j;
    }
    if (nc > nr || nc == 0) {
        rc = mbl_error(st, MBL_ESINGULAR, "the Newton iteration: %d unknowns and %d equations at the point", nc, nr);
        goto out;
    }
    /* rows: QR with column pivoting of the transpose of the kept columns */
    tau = mbl_alloc_array((size_t)nr + 1, sizeof *tau);
    jpvt = mbl_calloc((size_t)nr + 1, sizeof *jpvt);
    double *JT = mbl_alloc_array((size_t)nc * nr + 1, sizeof *JT);
    if (!tau || !jpvt || !JT) {
        mbl_free(JT);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int a = 0; a < nc; a++)
        for (int i = 0; i < nr; i++) JT[a + (size_t)i * nc] = Jv[i + (size_t)cols[a] * nr];
    lapack_int info = LAPACKE_dgeqp3(LAPACK_COL_MAJOR, nc, nr, JT, nc, jpvt, tau);
    double r0 = info == 0 ? fabs(JT[0]) : 0.0, rlast = info == 0 ? fabs(JT[(nc - 1) + (size_t)(nc - 1) * nc]) : 0.0;
    mbl_free(JT);
    if (info != 0 || !(rlast > 1e-10 * r0)) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the Newton iteration: the operating point's equations are singular at the point (%d unknowns)",
                       nc);
        goto out;
    }
    sl->nn = nc;
    sl->nunk = mbl_alloc_array((size_t)nc + 1, sizeof *sl->nunk);
    sl->nres = codegen_new_ids((size_t)nc), sl->njac = codegen_new_ids((size_t)nc * nc), sl->nstep = codegen_new_ids((size_t)nc);
    vals = mbl_alloc_array((size_t)nc * nc + 1, sizeof *vals);
    if (!sl->nunk || !sl->nres || !sl->njac || !sl->nstep || !vals) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int a = 0; a < nc; a++) {
        int i = jpvt[a] - 1;
        sl->nunk[a] = cols[a];
        sl->nres[a] = rows[i];
        sl->nstep[a] = mblx_neg(g, rows[i]);
        for (int b = 0; b < nc; b++) {
            sl->njac[a + (size_t)b * nc] = J[i + (size_t)cols[b] * nr];
            vals[a + (size_t)b * nc] = Jv[i + (size_t)cols[b] * nr];
        }
    }
    rc = codegen_solve_copy(g, nc, sl->njac, vals, 1, sl->nstep, "the Newton iteration's Jacobian", st);
    if (!rc) rc = mblx_graph_status(g, st);
out:
    if (rc) sl->nn = 0;
    mbl_free(rows), mbl_free(unk), mbl_free(al), mbl_free(sub), mbl_free(terms), mbl_free(J), mbl_free(cols);
    mbl_free(jpvt), mbl_free(sv), mbl_free(Jv), mbl_free(tau), mbl_free(vals);
    return rc;
}
