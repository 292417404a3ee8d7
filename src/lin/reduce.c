/* The reduction engine of methods_internal.h: the linearized DAE reduced onto independent states
 * S = s(q), W = w(q, v) (the kinematic sensitivities, then the projected dynamics), its change of
 * states, the dynamic rows of models with source 000 Eq. 10 features (ode states, implicit
 * variables, forces of multipliers: issue 13) solved for (W', dlambda, dmu, der(dX), dZ), and
 * generalized speeds at a point with motion changed from the position states' rates by the
 * constant map at the point. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

#define NEW(p, count) ((p) = mbl_calloc((size_t)(count) + 1, sizeof *(p)))

void lin_rkin_free(mbl_rkin *K)
{
    if (!K) return;
    mbl_free(K->Qs), mbl_free(K->Vs), mbl_free(K->Ga), mbl_free(K->Qw), mbl_free(K->Ha), mbl_free(K->Ra);
    memset(K, 0, sizeof *K);
}

/* out (n x zc) = -Jv^-1 [X(rows) Y; Nx Y; Wx Y] for Y (n x zc); X (m x n), Nx (k x n), Wx (z1 x n,
 * may be NULL) the blocks of the rows; lu the factors of diag(d) Jv; T (n x zc) work */
static int solve_rows(const mbl_blocks *B, const mbla_dlu *lu, const double *d, const int *rows, int r,
                      const double *X, const double *Nx, const double *Wx, int z1, const double *Y, int zc,
                      double *T, double *out, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k;
    for (int j = 0; j < zc; j++) {
        const double *y = Y + (size_t)j * n;
        double *t = T + (size_t)j * n;
        for (int i = 0; i < r; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += X[rows[i] + (size_t)c * m] * y[c];
            t[i] = s;
        }
        for (int i = 0; i < k; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += Nx[i + (size_t)c * k] * y[c];
            t[r + i] = s;
        }
        for (int i = 0; i < z1; i++) {
            double s = 0;
            if (Wx)
                for (int c = 0; c < n; c++) s += Wx[i + (size_t)c * z1] * y[c];
            t[r + k + i] = s;
        }
    }
    for (size_t p = 0; p < (size_t)n * zc; p++) out[p] = -d[p % (size_t)n] * T[p];
    return zc ? mbla_dlu_solve(lu, 'N', zc, out, n, st) : 0;
}

/* Factor diag(d) J with every row of J scaled to unit max-norm by a power of 2 (exact: the units of a
 * constraint or a state must not decide the refusal); J is scaled in place. */
static int factor_rows(int n, double *J, double *d, double rcond_min, mbla_dlu **lu, double *rcond_out,
                       const char *what, mbl_status *st)
{
    for (int i = 0; i < n; i++) {
        double mx = 0;
        for (int j = 0; j < n; j++) mx = fmax(mx, fabs(J[i + (size_t)j * n]));
        int e = 0;
        if (mx > 0 && isfinite(mx)) frexp(mx, &e);
        d[i] = ldexp(1.0, -e);
        for (int j = 0; j < n; j++) J[i + (size_t)j * n] *= d[i];
    }
    int rc = mbla_dlu_new(n, J, n, lu, st);
    double rcond = 0;
    if (!rc) rc = mbla_dlu_rcond(*lu, &rcond, st);
    if (rc && rc != MBL_ESINGULAR) return rc;
    if (rc || !(rcond >= rcond_min))
        return mbl_error(st, MBL_ESINGULAR, "%s is singular (reciprocal condition %.3g): the states do not parametrize "
                         "the motion", what, rcond);
    *rcond_out = rcond;
    return 0;
}

/* Outputs of the multipliers (see lin_reduce): W1 (ny x nc) += Ylam dlambda + Ymu dmu with
 * Phi_q^T dlambda + A_nh^T dmu = -(M dA + Rv dV + Rq dQ + Rr dR), solved as Jv^T [dlambda; dmu; x] = -G;
 * lu holds the factors of diag(dJ) Jv, so the solution of its transpose is scaled back by dJ. */
static int reduce_multiplier_outputs(const mbl_blocks *B, const mbla_dlu *lu, const double *dJ, const int *rows,
                                     int r, const mbl_rkin *K, int z0, int z1, const double *dA, const double *Rq,
                                     const char *method, double *W1, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, nx = z0 + z1, nc = nx + nr;
    if (r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: outputs of multipliers (lambda): rank(Phi_q) = %d < %d constraints, the multipliers are "
                         "not unique at this point",
                         method, r, m);
    double *G = mbl_calloc((size_t)n * (size_t)nc + 1, sizeof *G);
    double *dL = mbl_calloc((size_t)(m + k) * (size_t)nc + 1, sizeof *dL);
    if (!G || !dL) {
        mbl_free(G), mbl_free(dL);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbla_gemm('N', 'N', n, nc, n, 1.0, B->M, n, dA, n, 0.0, G, n, NULL);
    if (z0) {
        mbla_gemm('N', 'N', n, z0, n, 1.0, Rq, n, K->Qs, n, 1.0, G, n, NULL);
        mbla_gemm('N', 'N', n, z0, n, 1.0, B->Rv, n, K->Vs, n, 1.0, G, n, NULL);
    }
    if (z1) mbla_gemm('N', 'N', n, z1, n, 1.0, B->Rv, n, K->Qw, n, 1.0, G + (size_t)n * z0, n, NULL);
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) G[i + (size_t)(nx + j) * n] += B->Rr[i + (size_t)j * n];
    for (size_t i = 0; i < (size_t)n * nc; i++) G[i] = -G[i];
    int rc = nc ? mbla_dlu_solve(lu, 'T', nc, G, n, st) : 0;
    if (!rc) {
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < r; i++) dL[rows[i] + (size_t)j * (m + k)] = (dJ ? dJ[i] : 1.0) * G[i + (size_t)j * n];
            for (int i = 0; i < k; i++)
                dL[m + i + (size_t)j * (m + k)] = (dJ ? dJ[r + i] : 1.0) * G[r + i + (size_t)j * n];
        }
        if (m) mbla_gemm('N', 'N', ny, nc, m, 1.0, B->Ylam, ny, dL, m + k, 1.0, W1, ny, NULL);
        if (k) mbla_gemm('N', 'N', ny, nc, k, 1.0, B->Ymu, ny, dL + m, m + k, 1.0, W1, ny, NULL);
    }
    mbl_free(G), mbl_free(dL);
    return rc;
}

/* The kinematic part of lin_reduce: Jc, Jv (factored, *luv with row scales dv), the sensitivities K. */
int lin_reduce_kin(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, double rcond_min,
                      mbl_rkin *K, mbla_dlu **luv, double *dv, double *cond, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, z0 = rs->z0, z1 = rs->z1, rc = 0;
    size_t nn = (size_t)n * (size_t)n, cmax = (size_t)(z0 > z1 ? z0 : z1) + (size_t)nr + 1;
    double *Jc = NULL, *Jv = NULL, *dc = NULL, *T = NULL, *W1 = NULL;
    mbla_dlu *luc = NULL;
    *luv = NULL;
    memset(K, 0, sizeof *K);
    if (z0 != n - r || z1 != n - r - k)
        return mbl_error(st, MBL_EDIM, "reduction: %d position and %d velocity states, expected %d and %d", z0, z1,
                         n - r, n - r - k);
    NEW(Jc, nn), NEW(Jv, nn), NEW(dc, n), NEW(T, (size_t)n * cmax), NEW(W1, (size_t)n * cmax);
    NEW(K->Qs, (size_t)n * z0), NEW(K->Vs, (size_t)n * z0), NEW(K->Ga, (size_t)n * z0);
    NEW(K->Qw, (size_t)n * z1), NEW(K->Ha, (size_t)n * z1), NEW(K->Ra, (size_t)n * nr);
    if (!Jc || !Jv || !dc || !T || !W1 || !K->Qs || !K->Vs || !K->Ga || !K->Qw || !K->Ha || !K->Ra) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < r; i++) Jv[i + (size_t)j * n] = Jc[i + (size_t)j * n] = B->Pq[rows[i] + (size_t)j * m];
        for (int i = 0; i < z0; i++) Jc[r + i + (size_t)j * n] = rs->P[i + (size_t)j * z0];
        for (int i = 0; i < k; i++) Jv[r + i + (size_t)j * n] = B->Nv[i + (size_t)j * k];
        for (int i = 0; i < z1; i++) Jv[r + k + i + (size_t)j * n] = rs->Pw[i + (size_t)j * z1];
    }
    double rcc = 0, rcv = 0;
    rc = factor_rows(n, Jc, dc, rcond_min, &luc, &rcc,
                     "the constraint Jacobian completed by the position states, [Phi_q; dS/dq],", st);
    if (!rc) rc = factor_rows(n, Jv, dv, rcond_min, luv, &rcv,
                              "the velocity constraint Jacobian completed by the velocity states, [Phi_q; A_nh; dW/dv],",
                              st);
    if (rc) goto done;
    *cond = 1.0 / fmin(rcc, rcv);
    /* Qs = Jc^-1 [0; I], Qw = Jv^-1 [0; 0; I] */
    for (int j = 0; j < z0; j++) K->Qs[r + j + (size_t)j * n] = dc[r + j];
    for (int j = 0; j < z1; j++) K->Qw[r + k + j + (size_t)j * n] = dv[r + k + j];
    if (z0) rc = mbla_dlu_solve(luc, 'N', z0, K->Qs, n, st);
    if (!rc && z1) rc = mbla_dlu_solve(*luv, 'N', z1, K->Qw, n, st);
    /* Vs = -Jv^-1 [Pdq; Nq; Wq] Qs */
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pdq, B->Nq, rs->Wq, z1, K->Qs, z0, T, K->Vs, st);
    /* Ha = -Jv^-1 [Pddv; Ndv; Wd_v] Qw; Ga = -Jv^-1 ([Pddv; Ndv; Wd_v] Vs + [Pddq; Ndq; Wd_q] Qs) */
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddv, B->Ndv, rs->Wd_v, z1, K->Qw, z1, T, K->Ha, st);
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddv, B->Ndv, rs->Wd_v, z1, K->Vs, z0, T, K->Ga, st);
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddq, B->Ndq, rs->Wd_q, z1, K->Qs, z0, T, W1, st);
    if (rc) goto done;
    for (size_t p = 0; p < (size_t)n * z0; p++) K->Ga[p] += W1[p];
    /* Ra = -Jv^-1 [Pddr; Ndr; 0] */
    if (nr) {
        for (int j = 0; j < nr; j++) {
            for (int i = 0; i < r; i++) K->Ra[i + (size_t)j * n] = -dv[i] * B->Pddr[rows[i] + (size_t)j * m];
            for (int i = 0; i < k; i++) K->Ra[r + i + (size_t)j * n] = -dv[r + i] * B->Ndr[i + (size_t)j * k];
        }
        rc = mbla_dlu_solve(*luv, 'N', nr, K->Ra, n, st);
    }
done:
    mbl_free(Jc), mbl_free(Jv), mbl_free(dc), mbl_free(T), mbl_free(W1);
    mbla_dlu_free(luc);
    if (rc) {
        lin_rkin_free(K);
        mbla_dlu_free(*luv);
        *luv = NULL;
    }
    return rc;
}

/* The dynamic part of lin_reduce from the sensitivities K: M, C, K, F, A, B, C, D, q_S, v_W. luv, dv:
 * the factors of diag(dv) Jv of any completion of the velocity constraints (multiplier outputs). */
/* The S' rows of A: [P Vs + Pd_q Qs, P Qw] over the z0 + z1 columns of S and W (the rest, X's,
 * zero), or [0 I] exactly when W = S'. T: z0 x (z0 + z1) scratch. */
static void s_rows(int n, const mbl_rstates *rs, const mbl_rkin *K, double *T, mbl_linear *lin)
{
    int z0 = rs->z0, z1 = rs->z1, nx = lin->nx;
    if (rs->sdot) {
        for (int i = 0; i < z0; i++) lin->A[i + (size_t)(z0 + i) * nx] = 1.0;
    } else if (z0) {
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->P, z0, K->Vs, n, 0.0, T, z0, NULL);
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->Pd_q, z0, K->Qs, n, 1.0, T, z0, NULL);
        if (z1) mbla_gemm('N', 'N', z0, z1, n, 1.0, rs->P, z0, K->Qw, n, 0.0, T + (size_t)z0 * z0, z0, NULL);
        for (int j = 0; j < z0 + z1; j++)
            for (int i = 0; i < z0; i++) lin->A[i + (size_t)j * nx] = T[i + (size_t)j * z0];
    }
}

static int reduce_finish(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, const mbl_rkin *K,
                         const double *Rq_use, const mbla_dlu *luv, const double *dv, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, z0 = rs->z0, z1 = rs->z1, nx = z0 + z1, rc = 0;
    const double *Rq = Rq_use ? Rq_use : B->Rq;
    size_t cmax = (size_t)(nx + nr > n ? nx + nr : n);
    double *T = NULL, *W1 = NULL, *W2 = NULL, *dA = NULL;
    mbla_dlu *mlu = NULL;
    size_t big = ((size_t)n + (size_t)ny) * cmax;
    NEW(T, big), NEW(W1, big), NEW(W2, big), NEW(dA, (size_t)n * (nx + nr));
    if (!T || !W1 || !W2 || !dA) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* M-hat = Qw^T M Qw, C-hat = Qw^T (M Ha + Rv Qw), K-hat = Qw^T (M Ga + Rv Vs + Rq Qs), F = -Qw^T (M Ra + Rr) */
    if (z1) {
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Qw, n, 0.0, W1, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, W1, n, 0.0, lin->M, z1, NULL);
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Ha, n, 0.0, W1, n, NULL);
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->Rv, n, K->Qw, n, 1.0, W1, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, W1, n, 0.0, lin->Cd, z1, NULL);
        if (z0) {
            mbla_gemm('N', 'N', n, z0, n, 1.0, B->M, n, K->Ga, n, 0.0, W1, n, NULL);
            mbla_gemm('N', 'N', n, z0, n, 1.0, B->Rv, n, K->Vs, n, 1.0, W1, n, NULL);
            mbla_gemm('N', 'N', n, z0, n, 1.0, Rq, n, K->Qs, n, 1.0, W1, n, NULL);
            mbla_gemm('T', 'N', z1, z0, n, 1.0, K->Qw, n, W1, n, 0.0, lin->K, z1, NULL);
        }
        if (nr) {
            mbla_gemm('N', 'N', n, nr, n, 1.0, B->M, n, K->Ra, n, 0.0, W1, n, NULL);
            for (size_t i = 0; i < (size_t)n * nr; i++) W1[i] += B->Rr[i];
            mbla_gemm('T', 'N', z1, nr, n, -1.0, K->Qw, n, W1, n, 0.0, lin->F, z1, NULL);
        }
    }
    /* A: S' rows [P Vs + Pd_q Qs, P Qw] ([0 I] exactly when W = S'); W' rows -Mh^-1 [Kh Ch], B = [0; Mh^-1 F] */
    memset(lin->A, 0, (size_t)nx * nx * sizeof *lin->A);
    memset(lin->B, 0, (size_t)nx * nr * sizeof *lin->B);
    s_rows(n, rs, K, T, lin);
    if (z1) {
        memcpy(W2, lin->M, (size_t)z1 * z1 * sizeof *W2);
        rc = mbla_dlu_new(z1, W2, z1, &mlu, st);
        if (rc == MBL_ESINGULAR) {
            rc = mbl_error(st, MBL_ESINGULAR, "the reduced mass matrix M-hat is singular");
            goto done;
        }
        if (rc) goto done;
        for (int j = 0; j < z0; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)j * z1] = -lin->K[i + (size_t)j * z1];
        for (int j = 0; j < z1; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)(z0 + j) * z1] = -lin->Cd[i + (size_t)j * z1];
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)(nx + j) * z1] = lin->F[i + (size_t)j * z1];
        rc = mbla_dlu_solve(mlu, 'N', nx + nr, W1, z1, st);
        if (rc) goto done;
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < z1; i++) lin->A[z0 + i + (size_t)j * nx] = W1[i + (size_t)j * z1];
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < z1; i++) lin->B[z0 + i + (size_t)j * nx] = W1[i + (size_t)(nx + j) * z1];
    }
    /* accelerations: da/dS = Ga + Qw A21, da/dW = Ha + Qw A22, da/dr = Ra + Qw B2 */
    for (int j = 0; j < z0; j++) memcpy(dA + (size_t)j * n, K->Ga + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < z1; j++) memcpy(dA + (size_t)(z0 + j) * n, K->Ha + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < nr; j++) memcpy(dA + (size_t)(nx + j) * n, K->Ra + (size_t)j * n, (size_t)n * sizeof *dA);
    if (z1) mbla_gemm('N', 'N', n, nx, z1, 1.0, K->Qw, n, lin->A + z0, nx, 1.0, dA, n, NULL);
    if (z1 && nr) mbla_gemm('N', 'N', n, nr, z1, 1.0, K->Qw, n, lin->B + z0, nx, 1.0, dA + (size_t)n * nx, n, NULL);
    /* outputs y = h(q, v, a, lambda, mu, r): dq = Qs S, dv = Vs S + Qw W */
    if (ny) {
        mbla_gemm('N', 'N', ny, nx + nr, n, 1.0, B->Ya, ny, dA, n, 0.0, W1, ny, NULL);
        if (z0) {
            mbla_gemm('N', 'N', ny, z0, n, 1.0, B->Yq, ny, K->Qs, n, 1.0, W1, ny, NULL);
            mbla_gemm('N', 'N', ny, z0, n, 1.0, B->Yv, ny, K->Vs, n, 1.0, W1, ny, NULL);
        }
        if (z1) mbla_gemm('N', 'N', ny, z1, n, 1.0, B->Yv, ny, K->Qw, n, 1.0, W1 + (size_t)ny * z0, ny, NULL);
        /* with Rq_use (projection) the caller adds them (lin_reduce_multipliers) */
        if (!Rq_use && ((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0)))
            rc = reduce_multiplier_outputs(B, luv, dv, rows, r, K, z0, z1, dA, B->Rq, lin->method, W1, st);
        if (rc) goto done;
        memcpy(lin->C, W1, (size_t)ny * nx * sizeof *W1);
        for (size_t i = 0; i < (size_t)ny * nr; i++) lin->D[i] = W1[(size_t)ny * nx + i] + B->Yr[i];
    }
    memcpy(lin->q_S, K->Qs, (size_t)n * z0 * sizeof *K->Qs);
    memcpy(lin->v_W, K->Qw, (size_t)n * z1 * sizeof *K->Qw);
done:
    mbl_free(T), mbl_free(W1), mbl_free(W2), mbl_free(dA);
    mbla_dlu_free(mlu);
    return rc;
}

int lin_reduce_multipliers(const mbl_blocks *B, const int *rows, int r, const mbl_rkin *K, const mbla_dlu *Jv_lu,
                           const double *Rq, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, z0 = lin->z0, z1 = lin->z1, nx = z0 + z1;
    if (!ny || !((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0))) return 0;
    double *dA = mbl_calloc((size_t)n * (nx + nr) + 1, sizeof *dA);
    double *W1 = mbl_calloc((size_t)ny * (nx + nr) + 1, sizeof *W1);
    if (!dA || !W1) {
        mbl_free(dA), mbl_free(W1);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    /* da = [Ga Ha Ra] + Qw [A21 A22 B2] from the method's own A and B */
    for (int j = 0; j < z0; j++) memcpy(dA + (size_t)j * n, K->Ga + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < z1; j++) memcpy(dA + (size_t)(z0 + j) * n, K->Ha + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < nr; j++) memcpy(dA + (size_t)(nx + j) * n, K->Ra + (size_t)j * n, (size_t)n * sizeof *dA);
    if (z1) mbla_gemm('N', 'N', n, nx, z1, 1.0, K->Qw, n, lin->A + z0, nx, 1.0, dA, n, NULL);
    if (z1 && nr) mbla_gemm('N', 'N', n, nr, z1, 1.0, K->Qw, n, lin->B + z0, nx, 1.0, dA + (size_t)n * nx, n, NULL);
    int rc = reduce_multiplier_outputs(B, Jv_lu, NULL, rows, r, K, z0, z1, dA, Rq, lin->method, W1, st);
    if (!rc) {
        for (size_t i = 0; i < (size_t)ny * nx; i++) lin->C[i] += W1[i];
        for (size_t i = 0; i < (size_t)ny * nr; i++) lin->D[i] += W1[(size_t)ny * nx + i];
    }
    mbl_free(dA), mbl_free(W1);
    return rc;
}

int lin_reduce(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, const double *Rq_use,
               double rcond_min, mbl_linear *lin, mbl_rkin *kin, mbla_dlu **Jv_lu_out, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, z1 = rs->z1;
    mbl_rkin K;
    mbla_dlu *luv = NULL;
    double *dv = mbl_calloc((size_t)n + 1, sizeof *dv);
    if (Jv_lu_out) *Jv_lu_out = NULL;
    if (!dv) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = lin_reduce_kin(B, rows, r, rs, rcond_min, &K, &luv, dv, &lin->cond, st);
    if (!rc) rc = B->ext ? lin_reduce_finish_ext(B, r, rs, &K, Rq_use, NULL, NULL, NULL, rcond_min, lin, st)
                         : reduce_finish(B, rows, r, rs, &K, Rq_use, luv, dv, lin, st);
    if (!rc && Jv_lu_out) { /* the caller solves with Jv itself: factor the unscaled rows (exact) */
        double *Jv = mbl_calloc((size_t)n * n + 1, sizeof *Jv);
        if (!Jv) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; !rc && j < n; j++) {
            for (int i = 0; i < r; i++) Jv[i + (size_t)j * n] = B->Pq[rows[i] + (size_t)j * m];
            for (int i = 0; i < k; i++) Jv[r + i + (size_t)j * n] = B->Nv[i + (size_t)j * k];
            for (int i = 0; i < z1; i++) Jv[r + k + i + (size_t)j * n] = rs->Pw[i + (size_t)j * z1];
        }
        if (!rc) rc = mbla_dlu_new(n, Jv, n, Jv_lu_out, st);
        mbl_free(Jv);
    }
    if (!rc && kin) *kin = K;
    else lin_rkin_free(&K);
    mbla_dlu_free(luv);
    mbl_free(dv);
    return rc;
}

/* X (n x z, ld n) := X M^-1 for the factors lu of M (z x z): (M^-T X^T)^T; w (z x n) work */
static int right_solve(const mbla_dlu *lu, int n, int z, double *X, double *w, mbl_status *st)
{
    if (!z || !n) return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < z; j++) w[j + (size_t)i * z] = X[i + (size_t)j * n];
    int rc = mbla_dlu_solve(lu, 'T', n, w, z, st);
    for (int i = 0; !rc && i < n; i++)
        for (int j = 0; j < z; j++) X[i + (size_t)j * n] = w[j + (size_t)i * z];
    return rc;
}

int lin_reduce_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *ts, const mbl_rstates *us,
                      double rcond_min, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, nr = B->nr, z0 = us->z0, z1 = us->z1, nx = z0 + z1, rc;
    if (ts->z0 != z0 || ts->z1 != z1) return mbl_error(st, MBL_EDIM, "change of states: counts differ");
    mbl_rkin K;
    mbla_dlu *luv = NULL, *gl = NULL, *hl = NULL;
    double *dv = NULL, *G = NULL, *H21 = NULL, *Hw = NULL, *L = NULL, *w = NULL, *X = NULL;
    double cond = 0;
    memset(&K, 0, sizeof K);
    NEW(dv, n), NEW(G, (size_t)z0 * z0), NEW(H21, (size_t)z1 * z0), NEW(Hw, (size_t)z1 * z1);
    NEW(L, (size_t)z1 * (nx + nr)), NEW(w, (size_t)n * (nx + nr)), NEW(X, (size_t)n * (nx + nr));
    if (!dv || !G || !H21 || !Hw || !L || !w || !X) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = lin_reduce_kin(B, rows, r, ts, rcond_min, &K, &luv, dv, &cond, st);
    if (rc) goto done;
    /* G = P Qs, H21 = Pw Vs + Wq Qs, Hw = Pw Qw, L = [Pw Ga + Wd_v Vs + Wd_q Qs, Pw Ha + Wd_v Qw, Pw Ra] */
    if (z0) mbla_gemm('N', 'N', z0, z0, n, 1.0, us->P, z0, K.Qs, n, 0.0, G, z0, NULL);
    if (z1) {
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Pw, z1, K.Qw, n, 0.0, Hw, z1, NULL);
        if (z0) {
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Pw, z1, K.Vs, n, 0.0, H21, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wq, z1, K.Qs, n, 1.0, H21, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Pw, z1, K.Ga, n, 0.0, L, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wd_v, z1, K.Vs, n, 1.0, L, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wd_q, z1, K.Qs, n, 1.0, L, z1, NULL);
        }
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Pw, z1, K.Ha, n, 0.0, L + (size_t)z1 * z0, z1, NULL);
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Wd_v, z1, K.Qw, n, 1.0, L + (size_t)z1 * z0, z1, NULL);
        if (nr) mbla_gemm('N', 'N', z1, nr, n, 1.0, us->Pw, z1, K.Ra, n, 0.0, L + (size_t)z1 * nx, z1, NULL);
    }
    double rg = 1, rh = 1;
    rc = z0 ? mbla_dlu_new(z0, G, z0, &gl, st) : 0;
    if (!rc && z0) rc = mbla_dlu_rcond(gl, &rg, st);
    if (!rc && z1) rc = mbla_dlu_new(z1, Hw, z1, &hl, st);
    if (!rc && z1) rc = mbla_dlu_rcond(hl, &rh, st);
    if (rc == MBL_ESINGULAR || (!rc && !(fmin(rg, rh) >= rcond_min))) {
        rc = mbl_error(st, MBL_ESINGULAR, "the change to the user's states is singular (reciprocal condition %.3g)",
                       rc ? 0.0 : fmin(rg, rh));
        goto done;
    }
    if (rc) goto done;
    /* Qw' = Qw Hw^-1; Qs' = Qs G^-1; Vs' = (Vs - Qw' H21) G^-1;
     * [Ga' Ha'] = ([Ga Ha] - Qw' L_x) H^-1 = [(Ga - Qw' L_s - (Ha - Qw' L_w) Hw^-1 H21) G^-1, (Ha - Qw' L_w) Hw^-1];
     * Ra' = Ra - Qw' L_u */
    rc = right_solve(hl, n, z1, K.Qw, w, st);
    if (!rc) rc = right_solve(gl, n, z0, K.Qs, w, st);
    if (rc) goto done;
    if (z1 && z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Qw, n, H21, z1, 1.0, K.Vs, n, NULL);
    if (!rc) rc = right_solve(gl, n, z0, K.Vs, w, st);
    if (z1) {
        if (z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Qw, n, L, z1, 1.0, K.Ga, n, NULL);
        mbla_gemm('N', 'N', n, z1, z1, -1.0, K.Qw, n, L + (size_t)z1 * z0, z1, 1.0, K.Ha, n, NULL);
        if (nr) mbla_gemm('N', 'N', n, nr, z1, -1.0, K.Qw, n, L + (size_t)z1 * nx, z1, 1.0, K.Ra, n, NULL);
    }
    if (!rc) rc = right_solve(hl, n, z1, K.Ha, w, st);
    if (!rc && z1 && z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Ha, n, H21, z1, 1.0, K.Ga, n, NULL);
    if (!rc) rc = right_solve(gl, n, z0, K.Ga, w, st);
    if (!rc) rc = B->ext ? lin_reduce_finish_ext(B, r, us, &K, NULL, NULL, NULL, NULL, rcond_min, lin, st)
                         : reduce_finish(B, rows, r, us, &K, NULL, luv, dv, lin, st);
    if (!rc) lin->cond = cond / fmin(rg, rh);
done:
    lin_rkin_free(&K);
    mbla_dlu_free(luv), mbla_dlu_free(gl), mbla_dlu_free(hl);
    mbl_free(dv), mbl_free(G), mbl_free(H21), mbl_free(Hw), mbl_free(L), mbl_free(w), mbl_free(X);
    return rc;
}

/* ---- models with source 000 Eq. 10 features (see methods_internal.h) ---- */

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

/* The known perturbations of a reduction with Eq. 10 features per column of [S, W, X, r] (n rows,
 * nx + nr columns): dq, dv and da at dW' = 0, from the kinematic sensitivities K. */
static void ext_known(const mbl_rkin *K, int n, int z0, int z1, int nx, int nr, double *Dq, double *Dv, double *Da)
{
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
}

/* The square system Kd (nu x nu) of a reduction with Eq. 10 features solved for the nc columns of G
 * in place, after scaling (scale_square; dr, dc work of nu); the refusal when Kd is singular or
 * its scaled reciprocal condition is below rcond_min. */
static int ext_solve(int nu, int nc, double *Kd, double *G, double *dr, double *dc, double rcond_min,
                     const char *method, int proj, mbl_status *st)
{
    int rc = 0;
    mbla_dlu *lu = NULL;
    double rcond = 0;
    scale_square(nu, Kd, dr, dc);
    if (nu) {
        rc = mbla_dlu_new(nu, Kd, nu, &lu, st);
        if (!rc) rc = mbla_dlu_rcond(lu, &rcond, st);
        if (rc == MBL_ESINGULAR || (!rc && !(rcond >= rcond_min)))
            rc = mbl_error(st, MBL_ESINGULAR,
                           "%s: the linearized equations of motion, ode and implicit-variable rows do not determine "
                           "(W', %sder(X), Z) (reciprocal condition %.3g after scaling)",
                           method, proj ? "" : "lambda, mu, ", rc ? 0.0 : rcond);
        if (!rc) {
            for (int j = 0; j < nc; j++)
                for (int i = 0; i < nu; i++) G[i + (size_t)j * nu] *= dr[i];
            rc = mbla_dlu_solve(lu, 'N', nc, G, nu, st);
        }
        mbla_dlu_free(lu);
        if (rc) return rc;
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < nu; i++) G[i + (size_t)j * nu] *= dc[i];
    }
    return rc;
}

/* M-hat = Qw^T M Qw, and C-hat, K-hat, F of lin from its A and B (T: work of n x z1). */
static void ext_mck(const mbl_blocks *B, const mbl_rkin *K, double *T, mbl_linear *lin)
{
    int n = B->n, nr = B->nr, z0 = lin->z0, z1 = lin->z1, nx = lin->nx;
    /* M-hat = Qw^T M Qw; C-hat, K-hat, F from dW' (Eq. 29-30, X held) */
    if (z1) {
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Qw, n, 0.0, T, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, T, n, 0.0, lin->M, z1, NULL);
        if (z0) mbla_gemm('N', 'N', z1, z0, z1, -1.0, lin->M, z1, lin->A + z0, nx, 0.0, lin->K, z1, NULL);
        mbla_gemm('N', 'N', z1, z1, z1, -1.0, lin->M, z1, lin->A + z0 + (size_t)z0 * nx, nx, 0.0, lin->Cd, z1, NULL);
        if (nr) mbla_gemm('N', 'N', z1, nr, z1, 1.0, lin->M, z1, lin->B + z0, nx, 0.0, lin->F, z1, NULL);
    }
}

/* projection's outputs of the multipliers of an Eq. 10 model whose multipliers enter as reactions only:
 * the EOM rows at the solved perturbations, El dlambda + Em dmu = -(Ea da + Ev dv + Eq dq + Exd der(dX)
 * + Ez dZ + Ex dX + Er dr), solved as Jv^T [dlambda; dmu; x] = -(...) (Jv_lu: the factors of the
 * unscaled Jv, rows its r == m constraint rows); Y (ny x nc) += Ylam dlambda + Ymu dmu. G (nu x nc):
 * the solve's columns, der(X) from row ux, Z after them. */
static int ext_proj_multipliers(const mbl_blocks *B, const int *rows, int r, const mbla_dlu *Jv_lu, int nx, int nc,
                                const double *Da, const double *Dv, const double *Dq, const double *G, int nu, int ux,
                                int xs, double *Y, const char *method, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nX = B->nX, nZ = B->nZ, ne = B->ne, nr = B->nr, ny = B->ny;
    if (r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: outputs of multipliers (lambda): rank(Phi_q) = %d < %d constraints, the multipliers are "
                         "not unique at this point",
                         method, r, m);
    double *W = mbl_calloc((size_t)n * nc + 1, sizeof *W), *dL = mbl_calloc((size_t)(m + k) * nc + 1, sizeof *dL);
    if (!W || !dL) {
        mbl_free(W), mbl_free(dL);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (n) {
        mbla_gemm('N', 'N', n, nc, n, 1.0, B->Ea, ne, Da, n, 0.0, W, n, NULL);
        mbla_gemm('N', 'N', n, nc, n, 1.0, B->Ev, ne, Dv, n, 1.0, W, n, NULL);
        mbla_gemm('N', 'N', n, nc, n, 1.0, B->Eq, ne, Dq, n, 1.0, W, n, NULL);
        if (nX) mbla_gemm('N', 'N', n, nc, nX, 1.0, B->Exd, ne, G + ux, nu, 1.0, W, n, NULL);
        if (nZ) mbla_gemm('N', 'N', n, nc, nZ, 1.0, B->Ez, ne, G + ux + nX, nu, 1.0, W, n, NULL);
    }
    for (int j = 0; j < nX; j++)
        for (int i = 0; i < n; i++) W[i + (size_t)(xs + j) * n] += B->Ex[i + (size_t)j * ne];
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) W[i + (size_t)(nx + j) * n] += B->Er[i + (size_t)j * ne];
    for (size_t p = 0; p < (size_t)n * nc; p++) W[p] = -W[p];
    int rc = n && nc ? mbla_dlu_solve(Jv_lu, 'T', nc, W, n, st) : 0;
    if (!rc) {
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < r; i++) dL[rows[i] + (size_t)j * (m + k)] = W[i + (size_t)j * n];
            for (int i = 0; i < k; i++) dL[m + i + (size_t)j * (m + k)] = W[r + i + (size_t)j * n];
        }
        if (m) mbla_gemm('N', 'N', ny, nc, m, 1.0, B->Ylam, ny, dL, m + k, 1.0, Y, ny, NULL);
        if (k) mbla_gemm('N', 'N', ny, nc, k, 1.0, B->Ymu, ny, dL + m, m + k, 1.0, Y, ny, NULL);
    }
    mbl_free(W), mbl_free(dL);
    return rc;
}

int lin_reduce_finish_ext(const mbl_blocks *B, int r, const mbl_rstates *rs, const mbl_rkin *K, const double *Rq_use,
                          const double *Kx, const int *rows, const mbla_dlu *Jv_lu, double rcond_min, mbl_linear *lin,
                          mbl_status *st)
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
    NEW(Dq, nn), NEW(Dv, nn), NEW(Da, nn), NEW(Kf, (size_t)ne * (z1 + m + k + nX + nZ)), NEW(Gf, (size_t)ne * nc);
    NEW(Kd, (size_t)nu * nu), NEW(G, (size_t)nu * nc), NEW(dr, nu), NEW(dc, nu), NEW(Y, (size_t)ny * nc);
    NEW(T, (size_t)ne * (n > nc ? n : nc));
    if (!Dq || !Dv || !Da || !Kf || !Gf || !Kd || !G || !dr || !dc || !Y || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    ext_known(K, n, z0, z1, nx, nr, Dq, Dv, Da);
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
    rc = ext_solve(nu, nc, Kd, G, dr, dc, rcond_min, lin->method, proj, st);
    if (rc) goto done;
    /* A, B: S' = [P Vs + Pd_q Qs, P Qw, 0] ([0 I 0] when W = S'), W' and der(X) from the solve */
    memset(lin->A, 0, (size_t)nx * nx * sizeof *lin->A);
    memset(lin->B, 0, (size_t)nx * nr * sizeof *lin->B);
    s_rows(n, rs, K, T, lin);
    int ux = z1 + nmu; /* first der(X) unknown */
    for (int j = 0; j < nc; j++) {
        double *dst = j < nx ? lin->A + (size_t)j * nx : lin->B + (size_t)(j - nx) * nx;
        for (int i = 0; i < z1; i++) dst[z0 + i] = G[i + (size_t)j * nu];
        for (int i = 0; i < nX; i++) dst[z0 + z1 + i] = G[ux + i + (size_t)j * nu];
    }
    /* da = Da + Qw dW'; outputs y = h(q, v, a, lambda, mu, der(X), Z, X, r) */
    if (z1) mbla_gemm('N', 'N', n, nc, z1, 1.0, K->Qw, n, G, nu, 1.0, Da, n, NULL);
    if (ny) {
        if (n) {
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Ya, ny, Da, n, 0.0, Y, ny, NULL);
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Yv, ny, Dv, n, 1.0, Y, ny, NULL);
            mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Yq, ny, Dq, n, 1.0, Y, ny, NULL);
        }
        /* projection: the multipliers from the EOM rows at the solved perturbations, when the caller
         * gives Jv (its first lin_reduce leaves them out) */
        if (proj && Jv_lu && ((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0))) {
            rc = ext_proj_multipliers(B, rows, r, Jv_lu, nx, nc, Da, Dv, Dq, G, nu, ux, z0 + z1, Y, lin->method, st);
            if (rc) goto done;
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
    ext_mck(B, K, T, lin);
    memcpy(lin->q_S, K->Qs, (size_t)n * z0 * sizeof *K->Qs);
    memcpy(lin->v_W, K->Qw, (size_t)n * z1 * sizeof *K->Qw);
done:
    mbl_free(Dq), mbl_free(Dv), mbl_free(Da), mbl_free(Kf), mbl_free(Gf), mbl_free(Kd), mbl_free(G), mbl_free(dr);
    mbl_free(dc), mbl_free(Y), mbl_free(T);
    return rc;
}

/* ---- generalized speeds at a point with motion (see methods_internal.h) ---- */

int lin_states_frozen(const mbl_model *md, const mbl_point *pt, const mbl_state_ref *W, int z0, int z1)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (mv->k != 0 || z0 != z1 || !lin_point_moving(pt)) return 0;
    for (int i = 0; i < z1; i++)
        if (W[i].kind == MBL_SREF_USER) return 1;
    return 0;
}

int lin_rstates_rates(const mbl_blocks *B, const mbl_rstates *us, mbl_rstates *ref)
{
    const model_view *mv = &B->ev.mv;
    int z0 = us->z0;
    memset(ref, 0, sizeof *ref);
    ref->S = mbl_calloc((size_t)z0 + 1, sizeof *ref->S);
    ref->W = mbl_calloc((size_t)z0 + 1, sizeof *ref->W);
    if (!ref->S || !ref->W || lin_rstates_alloc(ref, mv->n, z0, z0)) {
        lin_rstates_free(ref);
        return MBL_ENOMEM;
    }
    for (int i = 0; i < z0; i++) ref->S[i] = us->S[i], ref->W[i].kind = MBL_SREF_SDOT, ref->W[i].index = i;
    ref->sdot = 1;
    lin_rstates_rows(mv, ref, B->ev.us + 3 * mv->nus + 2 * mv->nuvs);
    return 0;
}
/* out = M Hinv for M of `rows` rows and nx columns, Hinv = [I 0 0; Hi 0; 0 0 I] (Hi: z1 x (z0 + z1)) */
static void times_hinv(const double *M, int rows, int nx, int z0, int z1, const double *Hi, double *out)
{
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < rows; i++) {
            double s = 0;
            if (j < z0 + z1) {
                if (j < z0) s = M[i + (size_t)j * rows];
                for (int c = 0; c < z1; c++) s += M[i + (size_t)(z0 + c) * rows] * Hi[c + (size_t)j * z1];
            } else {
                s = M[i + (size_t)j * rows];
            }
            out[i + (size_t)j * rows] = s;
        }
}


int lin_frozen_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *us, const mbl_rstates *ref,
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
    rc = lin_reduce_kin(B, rows, r, ref, rcond_min, &K, &luv, dv, &cond, st);
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
    times_hinv(lin->A, nx, nx, z0, z1, Hi, T); /* T = A Hinv (nx x nx) */
    times_hinv(lin->C, ny, nx, z0, z1, Hi, U); /* U = C Hinv (ny x nx) */
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
    lin_rkin_free(&K);
    mbla_dlu_free(luv), mbla_dlu_free(hl);
    mbl_free(dv), mbl_free(H21), mbl_free(Hw), mbl_free(Hi), mbl_free(T), mbl_free(U), mbl_free(Y);
    return rc;
}
