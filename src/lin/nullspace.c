/* `nullspace`: orthonormal tangent basis (source 003 Ch. 4, Eq. 4.7-4.13).
 *
 * A rank-revealing QR of Phi_q^T (LAPACK dgeqp3 for up to opt->dense_max coordinates, SPQR above
 * when built with the GPL components) gives Phi_q^T Pi = [Q1 Q2] [R; 0]: Q1 spans the constrained
 * directions, T = Q2 (n x (n - r)) is an orthonormal basis of the tangent space, and the pivoted
 * columns are the r independent constraints. The states are the tangent coordinates S = T^T q
 * (named t1, t2, ...), dq/dS = T, and the projected M = T^T M T, C, K follow exactly from the
 * linearized velocity and acceleration constraints (lin_reduce). K includes the multiplier
 * (geometric stiffness) term T^T (Phi_q^T lambda)_q T through dR/dq. At a singular
 * configuration the basis has the larger dimension n - rank and the multipliers are the
 * minimum-norm ones of the operating point. */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* The user's states cannot be used at a configuration the QRCP calls regular (the selection's
 * full-pivot LU finds the states, or the constraints, dependent: st2 says why): refused as by every
 * method that takes them (issue 30, item 1), except inside descriptor, whose pencil needs no states
 * (its state-space form is then in the tangent coordinates); 0 to go on in tangent coordinates. */
static int refuse_user_states(const mbl_model *md, const mbl_lin_options *opt, const mbl_status *st2, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (mv->nus == 0 || (opt->method && !strcmp(opt->method, "descriptor"))) return 0;
    if (st2->code && st2->code != MBL_ESINGULAR) return mbl_error(st, st2->code, "nullspace: %s", st2->msg);
    return st2->msg[0] ? mbl_error(st, MBL_ESINGULAR, "nullspace: the user's states cannot be used here: %s", st2->msg)
                       : mbl_error(st, MBL_ESINGULAR, "nullspace: the user's states do not parametrize the motion here");
}

int lin_nullspace(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, k = mv->k, r = 0, rc, sparse = 0;
    mbl_blocks B;
    mbl_linear *lin = NULL;
    mbl_rstates ts, us, ref;
    int *rows = NULL, *piv = NULL;
    double *Q = NULL, *Qv = NULL, *Nsp = NULL, *X = NULL;
    char **names = NULL, *nbuf = NULL;
    mbla_csc *Pc = NULL;
    memset(&ts, 0, sizeof ts), memset(&us, 0, sizeof us), memset(&ref, 0, sizeof ref);
    *out = NULL;
    rc = lin_require_dense(md, opt, "nullspace", st);
    if (rc) return rc;
    rc = lin_dense_open(md, pt, &B, &rows, st);
    if (rc) return rc;
    piv = mbl_calloc((size_t)(m + k) + 1, sizeof *piv);
    Q = mbl_calloc((size_t)n * (size_t)n + 1, sizeof *Q);
    Qv = mbl_calloc((size_t)n * (size_t)n + 1, sizeof *Qv);
    X = mbl_calloc((size_t)(m + k) * (size_t)n + 1, sizeof *X);
    if (!piv || !Q || !Qv || !X) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if (m > 0 && n > opt->dense_max) {
        /* large sparse: SPQR null space of Phi_q; falls back to the dense QRCP when unavailable or
         * when Phi_q is rank deficient (the independent rows are then taken from the dense QRCP) */
        int nnull = 0, rk = 0;
        mbl_status st2;
        if (!mbla_csc_from_dense(m, n, B.Pq, m, 0.0, &Pc, &st2) &&
            !mbla_spqr_nullspace(Pc, MBLA_DEFAULT, &Nsp, &nnull, &rk, &st2) && rk == m) {
            sparse = 1;
            r = m;
            for (int i = 0; i < m; i++) rows[i] = i;
            if (nnull) memcpy(Q + (size_t)r * n, Nsp, (size_t)n * (size_t)nnull * sizeof *Q);
        }
    }
    if (!sparse && m > 0) {
        rc = lin_null_basis(n, m, B.Pq, opt->rank_tol, Q, rows, &r, st);
        if (rc) goto done;
    } else if (m == 0) {
        for (int i = 0; i < n; i++) Q[i + (size_t)i * n] = 1.0;
    }
    int z0 = n - r, z1 = n - r - k, rv = r;
    if (z1 < 0) {
        rc = mbl_error(st, MBL_ESINGULAR, "nullspace: %d non-holonomic constraints leave no velocity (%d position states)",
                       k, z0);
        goto done;
    }
    if (k > 0) { /* velocity basis: null([Phi_q(rows); A_nh]) */
        int nv = r + k;
        lin_velocity_rows(&B, rows, r, X);
        rc = lin_null_basis(n, nv, X, opt->rank_tol, Qv, piv, &rv, st);
        if (rc) goto done;
        if (rv < nv) {
            rc = mbl_error(st, MBL_ESINGULAR,
                           "nullspace: the velocity constraints [Phi_q; A_nh] have rank %d < %d: redundant "
                           "non-holonomic constraints",
                           rv, nv);
            goto done;
        }
    }
    names = mbl_calloc((size_t)z0 + 1, sizeof *names);
    nbuf = mbl_calloc((size_t)z0 * 16 + 1, 1);
    lin = lin_linear_alloc_x(n, z0, z1, mv->nX, mv->nr, mv->ny);
    if (!names || !nbuf || !lin || lin_rstates_alloc(&ts, n, z0, z1)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    ts.sdot = k == 0;
    for (int i = 0; i < z0; i++) {
        for (int j = 0; j < n; j++) ts.P[i + (size_t)j * z0] = Q[j + (size_t)(r + i) * n];
        names[i] = nbuf + (size_t)i * 16;
        snprintf(names[i], 16, "t%d", i + 1);
    }
    for (int i = 0; i < z1; i++)
        for (int j = 0; j < n; j++) ts.Pw[i + (size_t)j * z1] = k ? Qv[j + (size_t)(r + k + i) * n] : ts.P[i + (size_t)j * z0];
    snprintf(lin->method, sizeof lin->method, "nullspace");
    /* the states of augmented when they exist (not at a singular configuration) */
    char sel[sizeof lin->selection];
    mbl_status st2;
    mbl_status_clear(&st2);
    int user = r == m && !lin_states(md, &B, opt, &us, sel, sizeof sel, &st2) && us.z0 == z0 && us.z1 == z1;
    if (!user && r == m && (rc = refuse_user_states(md, opt, &st2, st))) goto done;
    int frozen = user && lin_states_frozen(md, pt, us.W, us.z0, us.z1); /* speeds at a point with motion */
    if (frozen && lin_rstates_rates(&B, &us, &ref)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = user ? lin_reduce_change(&B, rows, r, &ts, frozen ? &ref : &us, opt->rcond_min, lin, st)
              : lin_reduce(&B, rows, r, &ts, NULL, opt->rcond_min, lin, NULL, NULL, st);
    if (!rc && frozen) rc = lin_frozen_change(&B, rows, r, &us, &ref, opt->rcond_min, lin, st);
    if (rc) goto done;
    if (user) {
        if (lin_state_names(md, lin, &us)) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        snprintf(lin->selection, sizeof lin->selection,
                 "%.700s; computed in tangent coordinates t = T^T q%s (T orthonormal basis of null(Phi_q) from %s), "
                 "changed exactly to these states",
                 sel, k ? " and w = T_v^T v" : "", sparse ? "SPQR" : "QRCP");
    } else {
        if (k > 0) { /* velocity names: w1, w2, ... */
            for (int i = 0; i < z0; i++) lin->state_names[i] = lin_name_join(names[i], NULL);
            for (int i = 0; i < z1; i++) {
                char b[16];
                snprintf(b, sizeof b, "w%d", i + 1);
                lin->state_names[z0 + i] = lin_name_join(b, NULL);
            }
            for (int i = 0; i < mv->nX; i++) lin->state_names[z0 + z1 + i] = lin_name_join(mv->xname[i], NULL);
            for (int j = 0; j < lin->nu; j++) lin->input_names[j] = lin_name_join(mv->rname[j], NULL);
            for (int j = 0; j < lin->ny; j++) lin->output_names[j] = lin_name_join(mv->yname[j], NULL);
            int bad = 0;
            for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
            for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
            for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
            if (bad) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        } else if (lin_set_names(md, lin, (const char *const *)names)) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
        if (rc) goto done;
        snprintf(lin->selection, sizeof lin->selection,
                 "tangent coordinates t = T^T q%s, T orthonormal basis of null(Phi_q) from %s", k ? ", w = T_v^T v" : "",
                 sparse ? "SPQR" : "QRCP");
    }
    snprintf(lin->notes, sizeof lin->notes, "rank(Phi_q) = %d of %d constraints%s; %d tangent coordinates%s%s", r, m,
             r < m ? " (singular configuration: minimum-norm multipliers)" : "", z0,
             user ? (frozen ? ", changed to the user's states (speeds at a point with motion: through the position "
                              "states' rates, by the constant map at the point)"
                            : ", changed to the user's states")
                  : "",
             !user && m > 0 && lin_point_moving(pt) ? MBL_MOVING_NOTE : "");
    *out = lin;
    lin = NULL;
done:
    lin_blocks_free(&B);
    lin_rstates_free(&ts), lin_rstates_free(&us), lin_rstates_free(&ref);
    mbl_free(rows), mbl_free(piv), mbl_free(Q), mbl_free(Qv), mbl_free(X), mbl_free(Nsp), mbl_free(names), mbl_free(nbuf);
    mbla_csc_free(Pc);
    mbl_linear_free(lin);
    return rc;
}
