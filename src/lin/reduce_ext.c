/* The reductions of src/lin/common.c extended (issue 13): the dynamic rows of models with source
 * 000 Eq. 10 features (ode states, implicit variables, forces of multipliers) solved for (W',
 * dlambda, dmu, der(dX), dZ), and generalized speeds at a point with motion changed from the
 * position states' rates by the constant map at the point. See methods_internal.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

#define NEW(p, count) ((p) = mbl_calloc((size_t)(count) + 1, sizeof *(p)))

/* Scale every row, then every column of the square A (n x n) to unit max-norm by powers of 2 (exact):
 * the rows carry forces, ode and implicit-variable units, the columns accelerations, multipliers,
 * der(X) and Z. dr, dc receive the factors (the system solved is diag(dr) A diag(dc)). */
static void scale_square(int n, double *A, double *dr, double *dc)
{
    for (int i = 0; i < n; i++) {
        double mx = 0;
        int e = 0;
        for (int j = 0; j < n; j++) mx = fmax(mx, fabs(A[i + (size_t)j * n]));
        if (mx > 0 && isfinite(mx)) frexp(mx, &e);
        dr[i] = ldexp(1.0, -e);
        for (int j = 0; j < n; j++) A[i + (size_t)j * n] *= dr[i];
    }
    for (int j = 0; j < n; j++) {
        double mx = 0;
        int e = 0;
        for (int i = 0; i < n; i++) mx = fmax(mx, fabs(A[i + (size_t)j * n]));
        if (mx > 0 && isfinite(mx)) frexp(mx, &e);
        dc[j] = ldexp(1.0, -e);
        for (int i = 0; i < n; i++) A[i + (size_t)j * n] *= dc[j];
    }
}

int mbl_reduce_finish_ext(const mbl_blocks *B, int r, const mbl_rstates *rs, const mbl_rkin *K, const double *Rq_use,
                          const double *Kx, double rcond_min, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, nX = B->nX, nZ = B->nZ, ne = B->ne;
    int z0 = rs->z0, z1 = rs->z1, nx = z0 + z1 + nX, nc = nx + nr, proj = Rq_use != NULL, rc = 0;
    if (!B->ext || lin->nx != nx || lin->zx != nX)
        return mbl_error(st, MBL_EDIM, "reduction of an Eq. 10 model: %d states, expected %d", lin->nx, nx);
    if (!proj && r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: rank(Phi_q) = %d < %d constraints: the multipliers, which the model's forces, ode rows, "
                         "implicit variables or outputs use, are not unique at this point; use descriptor",
                         lin->method, r, m);
    int nmu = proj ? 0 : m + k;            /* multiplier unknowns */
    int nu = z1 + nmu + nX + nZ;           /* unknowns [dW'; dlambda; dmu; der(dX); dZ] */
    int neq = proj ? z1 + nX + nZ : ne;    /* rows: [R; d; zeq], or [Qw^T R; d; zeq] */
    if (nu != neq) return mbl_error(st, MBL_EDIM, "reduction of an Eq. 10 model: %d equations, %d unknowns", neq, nu);
    if (proj) {
        for (size_t p = (size_t)0; p < (size_t)ne * (m + k); p++) {
            size_t i = p % (size_t)ne;
            double v = p < (size_t)ne * m ? B->El[p] : B->Em[p - (size_t)ne * m];
            if (i >= (size_t)n && v != 0.0)
                return mbl_error(st, MBL_EMODEL, "%s: an ode or implicit-variable equation uses a multiplier", lin->method);
        }
    }
    size_t nn = (size_t)n * nc;
    double *Dq = NULL, *Dv = NULL, *Da = NULL, *Kf = NULL, *Gf = NULL, *Kd = NULL, *G = NULL, *dr = NULL, *dc = NULL,
           *Y = NULL, *T = NULL;
    mbla_dlu *lu = NULL;
    NEW(Dq, nn), NEW(Dv, nn), NEW(Da, nn), NEW(Kf, (size_t)ne * (z1 + m + k + nX + nZ)), NEW(Gf, (size_t)ne * nc);
    NEW(Kd, (size_t)nu * nu), NEW(G, (size_t)nu * nc), NEW(dr, nu), NEW(dc, nu), NEW(Y, (size_t)ny * nc);
    NEW(T, (size_t)ne * (n > nc ? n : nc));
    if (!Dq || !Dv || !Da || !Kf || !Gf || !Kd || !G || !dr || !dc || !Y || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* the known perturbations per column of [S, W, X, r]: dq, dv and da at dW' = 0 */
    for (int j = 0; j < z0; j++) {
        memcpy(Dq + (size_t)j * n, K->Qs + (size_t)j * n, (size_t)n * sizeof *Dq);
        memcpy(Dv + (size_t)j * n, K->Vs + (size_t)j * n, (size_t)n * sizeof *Dv);
        memcpy(Da + (size_t)j * n, K->Ga + (size_t)j * n, (size_t)n * sizeof *Da);
    }
    for (int j = 0; j < z1; j++) {
        memcpy(Dv + (size_t)(z0 + j) * n, K->Qw + (size_t)j * n, (size_t)n * sizeof *Dv);
        memcpy(Da + (size_t)(z0 + j) * n, K->Ha + (size_t)j * n, (size_t)n * sizeof *Da);
    }
    for (int j = 0; j < nr; j++) memcpy(Da + (size_t)(nx + j) * n, K->Ra + (size_t)j * n, (size_t)n * sizeof *Da);
    /* full rows: Kf = [Ea Qw, El, Em, Exd, Ez], Gf = -(Ea Da + Ev Dv + Eq Dq + Ex dX + Er dr) */
    if (z1) mbla_gemm('N', 'N', ne, z1, n, 1.0, B->Ea, ne, K->Qw, n, 0.0, Kf, ne, NULL);
    memcpy(Kf + (size_t)ne * z1, B->El, (size_t)ne * m * sizeof *Kf);
    memcpy(Kf + (size_t)ne * (z1 + m), B->Em, (size_t)ne * k * sizeof *Kf);
    memcpy(Kf + (size_t)ne * (z1 + m + k), B->Exd, (size_t)ne * nX * sizeof *Kf);
    memcpy(Kf + (size_t)ne * (z1 + m + k + nX), B->Ez, (size_t)ne * nZ * sizeof *Kf);
    memcpy(T, B->Eq, (size_t)ne * n * sizeof *T);
    if (proj)
        for (int j = 0; j < n; j++) memcpy(T + (size_t)j * ne, Rq_use + (size_t)j * n, (size_t)n * sizeof *T);
    if (n) {
        mbla_gemm('N', 'N', ne, nc, n, -1.0, B->Ea, ne, Da, n, 0.0, Gf, ne, NULL);
        mbla_gemm('N', 'N', ne, nc, n, -1.0, B->Ev, ne, Dv, n, 1.0, Gf, ne, NULL);
        mbla_gemm('N', 'N', ne, nc, n, -1.0, T, ne, Dq, n, 1.0, Gf, ne, NULL);
    }
    for (int j = 0; j < nX; j++)
        for (int i = 0; i < ne; i++) Gf[i + (size_t)(z0 + z1 + j) * ne] -= B->Ex[i + (size_t)j * ne];
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < ne; i++) Gf[i + (size_t)(nx + j) * ne] -= B->Er[i + (size_t)j * ne];
    /* the system: all rows (full), or the EOM rows projected on Qw (the multipliers eliminated) */
    int off = proj ? z1 : n; /* first d / zeq row in the system */
    if (proj) {
        int cols[3] = {0, z1 + m + k, z1 + m + k + nX}, w[3] = {z1, nX, nZ}, at = 0;
        for (int b = 0; b < 3; b++, at += w[b - 1]) {
            if (!w[b]) continue;
            if (z1) mbla_gemm('T', 'N', z1, w[b], n, 1.0, K->Qw, n, Kf + (size_t)cols[b] * ne, ne, 0.0, Kd + (size_t)at * nu, nu, NULL);
            for (int j = 0; j < w[b]; j++)
                for (int i = 0; i < nX + nZ; i++) Kd[off + i + (size_t)(at + j) * nu] = Kf[n + i + (size_t)(cols[b] + j) * ne];
        }
        if (z1) mbla_gemm('T', 'N', z1, nc, n, 1.0, K->Qw, n, Gf, ne, 0.0, G, nu, NULL);
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < nX + nZ; i++) G[off + i + (size_t)j * nu] = Gf[n + i + (size_t)j * ne];
        if (Kx)
            for (int j = 0; j < z0; j++)
                for (int i = 0; i < z1; i++) G[i + (size_t)j * nu] -= Kx[i + (size_t)j * z1];
    } else {
        memcpy(Kd, Kf, (size_t)ne * nu * sizeof *Kd);
        memcpy(G, Gf, (size_t)ne * nc * sizeof *G);
    }
    double rcond = 0;
    scale_square(nu, Kd, dr, dc);
    if (nu) {
        rc = mbla_dlu_new(nu, Kd, nu, &lu, st);
        if (!rc) rc = mbla_dlu_rcond(lu, &rcond, st);
        if (rc == MBL_ESINGULAR || (!rc && !(rcond >= rcond_min))) {
            rc = mbl_error(st, MBL_ESINGULAR,
                           "%s: the linearized equations of motion, ode and implicit-variable rows do not determine "
                           "(W', %sder(X), Z) (reciprocal condition %.3g after scaling)",
                           lin->method, proj ? "" : "lambda, mu, ", rc ? 0.0 : rcond);
            goto done;
        }
        if (rc) goto done;
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < nu; i++) G[i + (size_t)j * nu] *= dr[i];
        rc = mbla_dlu_solve(lu, 'N', nc, G, nu, st);
        if (rc) goto done;
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < nu; i++) G[i + (size_t)j * nu] *= dc[i];
    }
    /* A, B: S' = [P Vs + Pd_q Qs, P Qw, 0] ([0 I 0] when W = S'), W' and der(X) from the solve */
    memset(lin->A, 0, (size_t)nx * nx * sizeof *lin->A);
    memset(lin->B, 0, (size_t)nx * nr * sizeof *lin->B);
    if (rs->sdot) {
        for (int i = 0; i < z0; i++) lin->A[i + (size_t)(z0 + i) * nx] = 1.0;
    } else if (z0) {
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->P, z0, K->Vs, n, 0.0, T, z0, NULL);
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->Pd_q, z0, K->Qs, n, 1.0, T, z0, NULL);
        if (z1) mbla_gemm('N', 'N', z0, z1, n, 1.0, rs->P, z0, K->Qw, n, 0.0, T + (size_t)z0 * z0, z0, NULL);
        for (int j = 0; j < z0 + z1; j++)
            for (int i = 0; i < z0; i++) lin->A[i + (size_t)j * nx] = T[i + (size_t)j * z0];
    }
    int ux = z1 + nmu; /* first der(X) unknown */
    for (int j = 0; j < nc; j++) {
        double *dst = j < nx ? lin->A + (size_t)j * nx : lin->B + (size_t)(j - nx) * nx;
        for (int i = 0; i < z1; i++) dst[z0 + i] = G[i + (size_t)j * nu];
        for (int i = 0; i < nX; i++) dst[z0 + z1 + i] = G[ux + i + (size_t)j * nu];
    }
    /* da = Da + Qw dW'; outputs y = h(q, v, a, lambda, mu, der(X), Z, X, r) */
    if (z1) mbla_gemm('N', 'N', n, nc, z1, 1.0, K->Qw, n, G, nu, 1.0, Da, n, NULL);
    if (ny) {
        if (proj && ((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0))) {
            rc = mbl_error(st, MBL_EMODEL, "%s: outputs of multipliers need them, which this method does not form",
                           lin->method);
            goto done;
        }
        if (n) {
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Ya, ny, Da, n, 0.0, Y, ny, NULL);
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Yv, ny, Dv, n, 1.0, Y, ny, NULL);
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Yq, ny, Dq, n, 1.0, Y, ny, NULL);
        }
        if (!proj && m) mbla_gemm('N', 'N', ny, nc, m, 1.0, B->Ylam, ny, G + z1, nu, 1.0, Y, ny, NULL);
        if (!proj && k) mbla_gemm('N', 'N', ny, nc, k, 1.0, B->Ymu, ny, G + z1 + m, nu, 1.0, Y, ny, NULL);
        if (nX) mbla_gemm('N', 'N', ny, nc, nX, 1.0, B->Yxd, ny, G + ux, nu, 1.0, Y, ny, NULL);
        if (nZ) mbla_gemm('N', 'N', ny, nc, nZ, 1.0, B->Yz, ny, G + ux + nX, nu, 1.0, Y, ny, NULL);
        for (int j = 0; j < nX; j++)
            for (int i = 0; i < ny; i++) Y[i + (size_t)(z0 + z1 + j) * ny] += B->Yx[i + (size_t)j * ny];
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < ny; i++) Y[i + (size_t)(nx + j) * ny] += B->Yr[i + (size_t)j * ny];
        memcpy(lin->C, Y, (size_t)ny * nx * sizeof *Y);
        memcpy(lin->D, Y + (size_t)ny * nx, (size_t)ny * nr * sizeof *Y);
    }
    /* M-hat = Qw^T M Qw; C-hat, K-hat, F from dW' (Eq. 29-30, X held) */
    if (z1) {
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Qw, n, 0.0, T, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, T, n, 0.0, lin->M, z1, NULL);
        if (z0) mbla_gemm('N', 'N', z1, z0, z1, -1.0, lin->M, z1, lin->A + z0, nx, 0.0, lin->K, z1, NULL);
        mbla_gemm('N', 'N', z1, z1, z1, -1.0, lin->M, z1, lin->A + z0 + (size_t)z0 * nx, nx, 0.0, lin->Cd, z1, NULL);
        if (nr) mbla_gemm('N', 'N', z1, nr, z1, 1.0, lin->M, z1, lin->B + z0, nx, 0.0, lin->F, z1, NULL);
    }
    memcpy(lin->q_S, K->Qs, (size_t)n * z0 * sizeof *K->Qs);
    memcpy(lin->v_W, K->Qw, (size_t)n * z1 * sizeof *K->Qw);
done:
    mbl_free(Dq), mbl_free(Dv), mbl_free(Da), mbl_free(Kf), mbl_free(Gf), mbl_free(Kd), mbl_free(G), mbl_free(dr);
    mbl_free(dc), mbl_free(Y), mbl_free(T);
    mbla_dlu_free(lu);
    return rc;
}

/* ---- generalized speeds at a point with motion (see methods_internal.h) ---- */

int mbl_states_frozen(const mbl_model *md, const mbl_point *pt, const mbl_state_ref *W, int z0, int z1)
{
    if (md->k != 0 || z0 != z1 || !mbl_point_moving(pt)) return 0;
    for (int i = 0; i < z1; i++)
        if (W[i].kind == MBL_SREF_USER) return 1;
    return 0;
}

int mbl_rstates_rates(const mbl_model *md, const mbl_blocks *B, const mbl_rstates *us, mbl_rstates *ref)
{
    int z0 = us->z0;
    memset(ref, 0, sizeof *ref);
    ref->S = mbl_calloc((size_t)z0 + 1, sizeof *ref->S);
    ref->W = mbl_calloc((size_t)z0 + 1, sizeof *ref->W);
    if (!ref->S || !ref->W || mbl_rstates_alloc(ref, md->n, z0, z0)) {
        mbl_rstates_free(ref);
        return MBL_ENOMEM;
    }
    for (int i = 0; i < z0; i++) ref->S[i] = us->S[i], ref->W[i].kind = MBL_SREF_SDOT, ref->W[i].index = i;
    ref->sdot = 1;
    mbl_rstates_rows(md, ref, B->ev.us + 3 * md->nus + 2 * md->nuvs);
    return 0;
}

int mbl_frozen_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *us, const mbl_rstates *ref,
                      double rcond_min, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, z0 = us->z0, z1 = us->z1, nr = B->nr, ny = B->ny, nx = lin->nx, rc;
    if (ref->z0 != z0 || ref->z1 != z1 || z0 != z1 || lin->z0 != z0 || lin->z1 != z1)
        return mbl_error(st, MBL_EDIM, "speeds at a point with motion: state counts differ");
    mbl_rkin K;
    mbla_dlu *luv = NULL, *hl = NULL;
    double cond = 0, rh = 0;
    double *dv = NULL, *H21 = NULL, *Hw = NULL, *Hi = NULL, *T = NULL, *U = NULL, *Y = NULL;
    memset(&K, 0, sizeof K);
    NEW(dv, n), NEW(H21, (size_t)z1 * z0), NEW(Hw, (size_t)z1 * z1), NEW(Hi, (size_t)z1 * (z0 + z1));
    size_t big = (size_t)(nx + n + ny) * (size_t)(nx + n + nr + 1);
    NEW(T, big), NEW(U, big), NEW(Y, big);
    if (!dv || !H21 || !Hw || !Hi || !T || !U || !Y) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_reduce_kin(B, rows, r, ref, rcond_min, &K, &luv, dv, &cond, st);
    if (rc) goto done;
    /* H21 = dW/dS at fixed S' = Pw Vs + Wq Qs, Hw = dW/dS' = Pw Qw */
    if (z1) {
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Pw, z1, K.Qw, n, 0.0, Hw, z1, NULL);
        mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Pw, z1, K.Vs, n, 0.0, H21, z1, NULL);
        mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wq, z1, K.Qs, n, 1.0, H21, z1, NULL);
        rc = mbla_dlu_new(z1, Hw, z1, &hl, st);
        if (!rc) rc = mbla_dlu_rcond(hl, &rh, st);
        if (rc == MBL_ESINGULAR || (!rc && !(rh >= rcond_min))) {
            rc = mbl_error(st, MBL_ESINGULAR, "the speeds are not a change of the position states' rates here "
                           "(reciprocal condition %.3g)", rc ? 0.0 : rh);
            goto done;
        }
        if (rc) goto done;
    }
    /* Hi = Hw^-1 [-H21, I]: the rows S' = Hi [S; W] of H^-1 */
    for (int j = 0; j < z0; j++)
        for (int i = 0; i < z1; i++) Hi[i + (size_t)j * z1] = -H21[i + (size_t)j * z1];
    for (int j = 0; j < z1; j++) Hi[j + (size_t)(z0 + j) * z1] = 1.0;
    if (z1) rc = mbla_dlu_solve(hl, 'N', z0 + z1, Hi, z1, st);
    if (rc) goto done;
    /* x_ref = Hinv x_new, Hinv = [I 0 0; Hi 0; 0 0 I]: A_new = H A Hinv, B_new = H B, C_new = C Hinv */
    /* T = A Hinv (nx x nx) */
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < nx; i++) {
            double s = 0;
            if (j < z0 + z1) {
                if (j < z0) s = lin->A[i + (size_t)j * nx];
                for (int c = 0; c < z1; c++) s += lin->A[i + (size_t)(z0 + c) * nx] * Hi[c + (size_t)j * z1];
            } else {
                s = lin->A[i + (size_t)j * nx];
            }
            T[i + (size_t)j * nx] = s;
        }
    /* U = C Hinv (ny x nx) */
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < ny; i++) {
            double s = 0;
            if (j < z0 + z1) {
                if (j < z0) s = lin->C[i + (size_t)j * ny];
                for (int c = 0; c < z1; c++) s += lin->C[i + (size_t)(z0 + c) * ny] * Hi[c + (size_t)j * z1];
            } else {
                s = lin->C[i + (size_t)j * ny];
            }
            U[i + (size_t)j * ny] = s;
        }
    memcpy(lin->C, U, (size_t)ny * nx * sizeof *U);
    /* rows: H [rows] = [S rows; H21 S rows + Hw S' rows; X rows] for A (T) and B */
    for (int j = 0; j < nx + nr; j++) {
        double *src = j < nx ? T + (size_t)j * nx : lin->B + (size_t)(j - nx) * nx;
        double *dst = j < nx ? lin->A + (size_t)j * nx : Y;
        for (int i = 0; i < z1; i++) {
            double s = 0;
            for (int c = 0; c < z0; c++) s += H21[i + (size_t)c * z1] * src[c];
            for (int c = 0; c < z1; c++) s += Hw[i + (size_t)c * z1] * src[z0 + c];
            U[i] = s;
        }
        if (dst != src) memcpy(dst, src, (size_t)nx * sizeof *dst);
        for (int i = 0; i < z1; i++) dst[z0 + i] = U[i];
        if (j >= nx) memcpy(lin->B + (size_t)(j - nx) * nx, dst, (size_t)nx * sizeof *dst);
    }
    /* M-hat W' + C-hat W + K-hat S = F u with S' = Hi [S; W]:
     * M_b = Hw^-T M Hw^-1, C_b = Hw^-T (C - M Hw^-1 H21) Hw^-1, K_b = Hw^-T (K - (C - M Hw^-1 H21) Hw^-1 H21),
     * F_b = Hw^-T F; v_W = Qw Hw^-1 */
    if (z1) {
        double *Mi = T, *Cx = U; /* Mi = M Hw^-1 (z1 x z1), Cx = C - M Hw^-1 H21 */
        for (int j = 0; j < z1; j++)
            for (int i = 0; i < z1; i++) {
                double s = 0;
                for (int c = 0; c < z1; c++) s += lin->M[i + (size_t)c * z1] * Hi[c + (size_t)(z0 + j) * z1];
                Mi[i + (size_t)j * z1] = s;
            }
        for (int j = 0; j < z0; j++)
            for (int i = 0; i < z1; i++) {
                double s = lin->Cd[i + (size_t)j * z1];
                for (int c = 0; c < z1; c++) s -= Mi[i + (size_t)c * z1] * H21[c + (size_t)j * z1];
                Cx[i + (size_t)j * z1] = s;
            }
        /* K' = K - Cx Hw^-1 H21 = K + Cx Hi_S (Hi_S = -Hw^-1 H21) */
        for (int j = 0; j < z0; j++)
            for (int i = 0; i < z1; i++) {
                double s = lin->K[i + (size_t)j * z1];
                for (int c = 0; c < z1; c++) s += Cx[i + (size_t)c * z1] * Hi[c + (size_t)j * z1];
                Y[i + (size_t)j * z1] = s;
            }
        /* right factors Hw^-1: M' = Mi, C' = Cx Hw^-1 */
        memcpy(lin->K, Y, (size_t)z1 * z0 * sizeof *Y);
        memcpy(lin->M, Mi, (size_t)z1 * z1 * sizeof *Mi);
        for (int j = 0; j < z1; j++)
            for (int i = 0; i < z1; i++) {
                double s = 0;
                for (int c = 0; c < z1; c++) s += Cx[i + (size_t)c * z1] * Hi[c + (size_t)(z0 + j) * z1];
                lin->Cd[i + (size_t)j * z1] = s;
            }
        /* left factor Hw^-T on M', C', K', F */
        rc = mbla_dlu_solve(hl, 'T', z1, lin->M, z1, st);
        if (!rc) rc = mbla_dlu_solve(hl, 'T', z1, lin->Cd, z1, st);
        if (!rc && z0) rc = mbla_dlu_solve(hl, 'T', z0, lin->K, z1, st);
        if (!rc && nr) rc = mbla_dlu_solve(hl, 'T', nr, lin->F, z1, st);
        if (rc) goto done;
        /* v_W = Qw_ref Hw^-1 */
        for (int j = 0; j < z1; j++)
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int c = 0; c < z1; c++) s += K.Qw[i + (size_t)c * n] * Hi[c + (size_t)(z0 + j) * z1];
                lin->v_W[i + (size_t)j * n] = s;
            }
    }
done:
    mbl_rkin_free(&K);
    mbla_dlu_free(luv), mbla_dlu_free(hl);
    mbl_free(dv), mbl_free(H21), mbl_free(Hw), mbl_free(Hi), mbl_free(T), mbl_free(U), mbl_free(Y);
    return rc;
}
