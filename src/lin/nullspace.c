/* `nullspace`: orthonormal tangent basis (source 003 Ch. 4, Eq. 4.7-4.13).
 *
 * A rank-revealing QR of Phi_q^T (LAPACK dgeqp3 for up to opt->dense_max coordinates, SPQR above
 * when built with the GPL components) gives Phi_q^T Pi = [Q1 Q2] [R; 0]: Q1 spans the constrained
 * directions, T = Q2 (n x (n - r)) is an orthonormal basis of the tangent space, and the pivoted
 * columns are the r independent constraints. The states are the tangent coordinates S = T^T q
 * (named t1, t2, ...), dq/dS = T, and the projected M = T^T M T, C, K follow exactly from the
 * linearized velocity and acceleration constraints (mbl_reduce). K includes the multiplier
 * (geometric stiffness) term T^T (Phi_q^T lambda)_q T through dR/dq. At a singular
 * configuration the basis has the larger dimension n - rank and the multipliers are the
 * minimum-norm ones of the operating point. */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

int mbl_lin_nullspace(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                      mbl_status *st)
{
    int n = md->n, m = md->m, r = 0, rc, sparse = 0;
    mbl_blocks B;
    mbl_linear *lin = NULL;
    int *rows = NULL;
    double *At = NULL, *Q = NULL, *P = NULL, *Nsp = NULL;
    char **names = NULL, *nbuf = NULL;
    mbla_csc *Pc = NULL;
    *out = NULL;
    rc = mbl_require_holonomic(md, opt, "nullspace", st);
    if (rc) return rc;
    rc = mbl_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    rows = mbl_calloc((size_t)m + 1, sizeof *rows);
    Q = mbl_calloc((size_t)n * (size_t)n + 1, sizeof *Q);
    if (!rows || !Q) {
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
        At = mbl_alloc_array((size_t)n * (size_t)m + 1, sizeof *At);
        if (!At) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) At[j + (size_t)i * n] = B.Pq[i + (size_t)j * m];
        mbl_unit_columns(n, m, At, n); /* the same null space; the rank free of the constraints' units */
        rc = mbla_qrcp(n, m, At, n, opt->rank_tol, rows, &r, Q, n, n, NULL, 1, st);
        if (rc) goto done;
    } else if (m == 0) {
        for (int i = 0; i < n; i++) Q[i + (size_t)i * n] = 1.0;
    }
    int z = n - r;
    P = mbl_calloc((size_t)z * (size_t)n + 1, sizeof *P);
    names = mbl_calloc((size_t)z + 1, sizeof *names);
    nbuf = mbl_calloc((size_t)z * 16 + 1, 1);
    lin = mbl_linear_alloc(n, z, z, md->nr, md->ny);
    if (!P || !names || !nbuf || !lin) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < z; i++) {
        for (int j = 0; j < n; j++) P[i + (size_t)j * z] = Q[j + (size_t)(r + i) * n];
        names[i] = nbuf + (size_t)i * 16;
        snprintf(names[i], 16, "t%d", i + 1);
    }
    snprintf(lin->method, sizeof lin->method, "nullspace");
    rc = mbl_reduce(&B, rows, r, P, NULL, NULL, NULL, z, NULL, opt->rcond_min, lin, NULL, st);
    if (rc) goto done;
    if (mbl_lin_set_names(md, lin, names)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->selection, sizeof lin->selection,
             "tangent coordinates t = T^T q, T orthonormal basis of null(Phi_q) from %s", sparse ? "SPQR" : "QRCP");
    snprintf(lin->notes, sizeof lin->notes, "rank(Phi_q) = %d of %d constraints%s; %d tangent coordinates%s", r, m,
             r < m ? " (singular configuration: minimum-norm multipliers)" : "", z,
             m > 0 && mbl_point_moving(pt) ? MBL_MOVING_NOTE : "");
    *out = lin;
    lin = NULL;
done:
    mbl_blocks_free(&B);
    mbl_free(rows), mbl_free(At), mbl_free(Q), mbl_free(P), mbl_free(Nsp), mbl_free(names), mbl_free(nbuf);
    mbla_csc_free(Pc);
    mbl_linear_free(lin);
    return rc;
}
