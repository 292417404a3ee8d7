/* The augmented method's finish (source 000 Eq. 29-30): from the solved blocks of the sensitivity
 * system to the state-space A, B, C, D and the second-order M-hat, C-hat, K-hat, F, by the
 * projection over v_W described in augmented.c (finish_kinematic, finish_solve_block, the
 * aug_finish_* steps that relin.c shares). augmented.c builds, factors and solves the workspace;
 * this file turns its solutions into the linear model. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "lin/methods_internal.h"
#include "model/jac_cols.h"

/* out[j] = sum_c row(c) * X[c, j] over the unknown columns c < N (a lam mu v q), for j < nrhs */
static void row_times(const sparse_rows *R, int row, const double *X, int N, int nrhs, double *out, int ldo)
{
    for (int j = 0; j < nrhs; j++) out[(size_t)j * ldo] = 0.0;
    for (int p = R->ptr[row]; p < R->ptr[row + 1]; p++) {
        int c = R->col[p];
        if (c >= N) continue;
        double v = R->val[p];
        for (int j = 0; j < nrhs; j++) out[(size_t)j * ldo] += v * X[c + (size_t)j * N];
    }
}

/* out (z1 x nc, ld z1) = v_W^T B (B n x nc, ld ldb): over v_W's nonzeros when it is sparse enough
 * (lists built once per point by vw_index), else dgemm. */
static int vw_index(mbl_lin_work *w, const double *vW, int n, int z1)
{
    size_t nz = 0, cap = aug_vw_cap(n, z1);
    w->vw_ptr[0] = 0;
    for (int i = 0; i < z1; i++) {
        for (int r = 0; r < n; r++)
            if (vW[r + (size_t)i * n] != 0.0) {
                if (nz == cap) return 0;
                w->vw_row[nz++] = r;
            }
        w->vw_ptr[i + 1] = (int)nz;
    }
    return 1;
}

static void vw_times(const mbl_lin_work *w, const double *vW, int n, int z1, const double *B, int ldb, int nc,
                     double *out, int sparse)
{
    if (!sparse && w->small_vw) { /* a sweep's small product: a loop, no BLAS call */
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < z1; i++) {
                double a = 0;
                for (int r = 0; r < n; r++) a += vW[r + (size_t)i * n] * B[r + (size_t)j * ldb];
                out[i + (size_t)j * z1] = a;
            }
        return;
    }
    if (!sparse) {
        mbla_gemm('T', 'N', z1, nc, n, 1.0, vW, n, B, ldb, 0.0, out, z1, NULL);
        return;
    }
    for (int j = 0; j < nc; j++)
        for (int i = 0; i < z1; i++) {
            double a = 0;
            for (int p = w->vw_ptr[i]; p < w->vw_ptr[i + 1]; p++) {
                int r = w->vw_row[p];
                a += vW[r + (size_t)i * n] * B[r + (size_t)j * ldb];
            }
            out[i + (size_t)j * z1] = a;
        }
}

/* g[u][r] += sum of jv[e] x[u][k] over the entries (e, r, k) of ent with k < kmax, for u < w (4, 2
 * or 1 columns at once); ent lists the entries of a row together, and each row's sum runs in the
 * entries' order. */
static void entries_times(const int *ent, int ng, const double *jv, int kmax, const double *const *x, double *const *g,
                          int w)
{
    const int *e = ent, *end = ent + 3 * (size_t)ng;
    if (w == 4) {
        const double *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
        while (e < end) {
            int r = e[1];
            double s0 = g[0][r], s1 = g[1][r], s2 = g[2][r], s3 = g[3][r];
            for (; e < end && e[1] == r; e += 3) {
                int k = e[2];
                if (k >= kmax) continue;
                double a = jv[e[0]];
                s0 += a * x0[k], s1 += a * x1[k], s2 += a * x2[k], s3 += a * x3[k];
            }
            g[0][r] = s0, g[1][r] = s1, g[2][r] = s2, g[3][r] = s3;
        }
        return;
    }
    if (w == 2) {
        const double *x0 = x[0], *x1 = x[1];
        while (e < end) {
            int r = e[1];
            double s0 = g[0][r], s1 = g[1][r];
            for (; e < end && e[1] == r; e += 3) {
                int k = e[2];
                if (k >= kmax) continue;
                double a = jv[e[0]];
                s0 += a * x0[k], s1 += a * x1[k];
            }
            g[0][r] = s0, g[1][r] = s1;
        }
        return;
    }
    const double *x0 = x[0];
    double *g0 = g[0];
    while (e < end) {
        int r = e[1];
        double s0 = g0[r];
        for (; e < end && e[1] == r; e += 3)
            if (e[2] < kmax) s0 += jv[e[0]] * x0[e[2]];
        g0[r] = s0;
    }
}

/* The projected C-hat, K-hat, F and the maps q_S, v_W from the kinematic system (factored). The
 * W-bar columns are solved first (v_W), then the S-bar ones, AUG_RHS_BLOCK at a time; G keeps the
 * EOM rows times each response. */
static int finish_kinematic(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, nr = mv->nr, z0 = w->z0, z1 = w->z1, zz = z0 + z1, Nk = w->Nk, kb = w->kcols;
    int nc = mv->nF - mv->row0[MBL_ROW_PHIDD], jr = mv->blk0[MBL_BLK_R];
    int eom1 = mv->row0[MBL_ROW_EOM + 1];
    double *Xk = w->Xk, *G = w->G;
    for (int j0 = 0; j0 < zz; j0 += kb) {
        int nb = zz - j0 < kb ? zz - j0 : kb;
        memset(Xk, 0, (size_t)Nk * (size_t)nb * sizeof *Xk);
        for (int c = 0; c < nb; c++) {
            int j = (j0 + c + z0) % zz; /* W-bar columns first */
            Xk[(size_t)(nc + j) + (size_t)c * Nk] = w->kr[nc + j];
        }
        int rc = mbla_klu_solve(w->klu_k, nb, Xk, Nk, st);
        if (rc) return rc;
        for (int c = 0; c < nb; c++) {
            int j = (j0 + c + z0) % zz;
            double *x = Xk + (size_t)c * Nk, *g = G + (size_t)j * n;
            for (int i = 0; i < Nk; i++) x[i] *= w->kc[i];
            if (j < z0) memcpy(lin->q_S + (size_t)j * n, x + 2 * n, (size_t)n * sizeof *x);
            else memcpy(lin->v_W + (size_t)(j - z0) * n, x + n, (size_t)n * sizeof *x);
            memset(g, 0, (size_t)n * sizeof *g);
        }
        /* G = R_a a' + R_v v' + R_q q' over the EOM rows, four (or two) columns at a time (each sum in the
         * entries' order) */
        for (int c = 0; c < nb; c += 4) {
            int w4 = nb - c >= 4 ? 4 : nb - c >= 2 ? 2 : 1;
            double *g[4];
            const double *xk[4];
            for (int u = 0; u < w4; u++) {
                g[u] = G + (size_t)((j0 + c + u + z0) % zz) * n;
                xk[u] = Xk + (size_t)(c + u) * Nk;
            }
            entries_times(w->gent, w->ng, w->ev.jac, Nk, xk, g, w4);
            c += w4 - 4;
        }
    }
    /* F = -v_W^T R_r */
    memset(lin->F, 0, (size_t)z1 * (size_t)nr * sizeof *lin->F);
    for (int p = 0; nr > 0 && p < mv->jac.nz; p++) { /* (no input columns: none) */
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if (r >= eom1 || c < jr) continue;
        for (int i = 0; i < z1; i++) lin->F[i + (size_t)(c - jr) * z1] -= lin->v_W[r + (size_t)i * n] * w->ev.jac[p];
    }
    return 0;
}

/* The dS/dt rows that are exact (k == 0, no user velocity states: W = dS/dt, rows [0 I]). */
int aug_finish_dS_init(const mbl_lin_work *w)
{
    int z0 = w->z0, exact_sdot = (w->ev.mv.k == 0 && w->ev.mv.nuvs == 0);
    memset(w->dS, 0, (size_t)z0 * (size_t)w->nrhs * sizeof *w->dS);
    if (exact_sdot)
        for (int i = 0; i < z0; i++) w->dS[i + (size_t)(z0 + i) * z0] = 1.0;
    return exact_sdot;
}

/* Columns j0 .. j0 + nb - 1 of the augmented system's responses (S-bar, W-bar, inputs) into w->X
 * (ld N): right-hand sides scaled by er, solved, scaled by ec. */
static int finish_solve_block(mbl_lin_work *w, int j0, int nb, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int N = w->N, nx = w->z0 + w->z1 + mv->nX, jr = mv->blk0[MBL_BLK_R];
    double *X = w->X;
    memset(X, 0, (size_t)N * (size_t)nb * sizeof *X);
    for (int j = j0; j < j0 + nb && j < nx; j++) X[(size_t)(mv->nF + j) + (size_t)(j - j0) * N] = 1.0;
    for (int p = 0; j0 + nb > nx && p < mv->jac.nz; p++) { /* (a block of input columns only) */
        int j = mv->jac.col[p] >= jr ? nx + mv->jac.col[p] - jr : -1;
        if (j >= j0 && j < j0 + nb) X[mv->jac.row[p] + (size_t)(j - j0) * N] = -w->ev.jac[p];
    }
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < N; i++) X[i + (size_t)j * N] *= w->er[i];
    int rc = mbla_klu_solve(w->lu, nb, X, N, st);
    if (rc) return rc;
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < N; i++) X[i + (size_t)j * N] *= w->ec[i];
    return 0;
}

/* From the responses in w->X (columns j0 .. j0 + nb - 1): their columns of the state derivatives
 * (chain rule), of C and D, and (without the kinematic system) of q_S and v_W. */
void aug_finish_post_block(mbl_lin_work *w, mbl_linear *lin, int j0, int nb, int exact_sdot)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, nus = mv->nus, nuvs = mv->nuvs, ny = mv->ny, nX = mv->nX;
    int N = w->N, z0 = w->z0, z1 = w->z1, nx = z0 + z1 + nX;
    const mbl_state_ref *S = w->S, *W = w->W;
    const double *X = w->X;
    double *dS = w->dS, *dW = w->dW, *dXd = w->dXd;
    int jxd = mv->blk0[MBL_BLK_XD];
    int jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q], ja = mv->blk0[MBL_BLK_A];
    for (int i = 0; i < z0 && !exact_sdot; i++) {
        if (S[i].kind == MBL_SREF_COORD)
            for (int j = 0; j < nb; j++) dS[i + (size_t)(j0 + j) * z0] = X[jv + S[i].index + (size_t)j * N];
        else
            row_times(&w->U, nus + S[i].index, X, N, nb, dS + i + (size_t)j0 * z0, z0);
    }
    for (int i = 0; i < z1; i++) {
        double *o = dW + i + (size_t)j0 * z1;
        if (W[i].kind == MBL_SREF_COORD) {
            for (int j = 0; j < nb; j++) o[(size_t)j * z1] = X[ja + W[i].index + (size_t)j * N];
        } else if (W[i].kind == MBL_SREF_SDOT) {
            const mbl_state_ref *s = &S[W[i].index];
            if (s->kind == MBL_SREF_COORD)
                for (int j = 0; j < nb; j++) o[(size_t)j * z1] = X[ja + s->index + (size_t)j * N];
            else
                row_times(&w->U, 2 * nus + s->index, X, N, nb, o, z1);
        } else {
            row_times(&w->U, 3 * nus + nuvs + W[i].index, X, N, nb, o, z1);
        }
    }
    /* user ODE states: der(X) straight from the solution */
    for (int i = 0; i < nX; i++)
        for (int j = 0; j < nb; j++) dXd[i + (size_t)(j0 + j) * nX] = X[jxd + i + (size_t)j * N];
    /* outputs: y = h(q, v, vdot, lambda, mu, r, X, der(X), Z) */
    for (int i = 0; i < ny; i++) {
        row_times(&w->Y, i, X, N, nb, w->tmpy, 1);
        for (int j = 0; j < nb; j++) {
            int jj = j0 + j;
            if (jj < nx) lin->C[i + (size_t)jj * ny] = w->tmpy[j];
            else lin->D[i + (size_t)(jj - nx) * ny] = w->tmpy[j];
        }
    }
    if (!w->kin)
        for (int j = j0; j < j0 + nb; j++) {
            if (j < z0)
                for (int i = 0; i < n; i++) lin->q_S[i + (size_t)j * n] = X[jq + i + (size_t)(j - j0) * N];
            else if (j < z0 + z1)
                for (int i = 0; i < n; i++) lin->v_W[i + (size_t)(j - z0) * n] = X[jv + i + (size_t)(j - j0) * N];
        }
}

/* A, B and the direct part of D from the state derivatives */
void aug_finish_assemble(const mbl_lin_work *w, mbl_linear *lin)
{
    const model_view *mv = &w->ev.mv;
    int z0 = w->z0, z1 = w->z1, nX = mv->nX, nx = z0 + z1 + nX, nr = mv->nr, ny = mv->ny;
    int jr = mv->blk0[MBL_BLK_R];
    const double *dS = w->dS, *dW = w->dW, *dXd = w->dXd;
    for (int i = 0; i < ny; i++)
        for (int p = w->Y.ptr[i]; p < w->Y.ptr[i + 1]; p++)
            if (w->Y.col[p] >= jr) lin->D[i + (size_t)(w->Y.col[p] - jr) * ny] += w->Y.val[p];
    for (int j = 0; j < nx; j++) {
        for (int i = 0; i < z0; i++) lin->A[i + (size_t)j * nx] = dS[i + (size_t)j * z0];
        for (int i = 0; i < z1; i++) lin->A[z0 + i + (size_t)j * nx] = dW[i + (size_t)j * z1];
        for (int i = 0; i < nX; i++) lin->A[z0 + z1 + i + (size_t)j * nx] = dXd[i + (size_t)j * nX];
    }
    for (int j = 0; j < nr; j++) {
        for (int i = 0; i < z0; i++) lin->B[i + (size_t)j * nx] = dS[i + (size_t)(nx + j) * z0];
        for (int i = 0; i < z1; i++) lin->B[z0 + i + (size_t)j * nx] = dW[i + (size_t)(nx + j) * z1];
        for (int i = 0; i < nX; i++) lin->B[z0 + z1 + i + (size_t)j * nx] = dXd[i + (size_t)(nx + j) * nX];
    }
}

/* MCK (Eq. 29-30), projected with the kinematic system (see the opening comment; factored, and
 * solved here by finish_kinematic); M-hat = v_W^T M v_W with M v_W straight from the sparse
 * Jacobian. Without the kinematic system, from dW. */
int aug_finish_mck(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, nr = mv->nr, z0 = w->z0, z1 = w->z1, nx = z0 + z1 + mv->nX;
    int ja = mv->blk0[MBL_BLK_A];
    const double *dW = w->dW;
    if (w->kin) {
        int rc = finish_kinematic(w, lin, st);
        if (rc) return rc;
    }
    memset(w->MvW, 0, (size_t)n * (size_t)z1 * sizeof *w->MvW);
    if (w->kin) { /* a column at a time over the EOM entries in vdot columns (kin_col < n) */
        for (int j = 0; j < z1; j += 4) {
            int w4 = z1 - j >= 4 ? 4 : 1;
            double *o[4];
            const double *vw[4];
            for (int u = 0; u < w4; u++) o[u] = w->MvW + (size_t)(j + u) * n, vw[u] = lin->v_W + (size_t)(j + u) * n;
            entries_times(w->gent, w->ng, w->ev.jac, n, vw, o, w4);
            if (w4 == 1) j -= 3;
        }
    } else {
        for (int p = 0; p < mv->jac.nz; p++) {
            int r = mv->jac.row[p], c = mv->jac.col[p];
            if (r >= mv->row0[MBL_ROW_EOM + 1] || c < ja || c >= ja + n) continue;
            for (int j = 0; j < z1; j++) w->MvW[r + (size_t)j * n] += w->ev.jac[p] * lin->v_W[(c - ja) + (size_t)j * n];
        }
    }
    int sparse = vw_index(w, lin->v_W, n, z1);
    vw_times(w, lin->v_W, n, z1, w->MvW, n, z1, lin->M, sparse);
    if (w->kin) {
        vw_times(w, lin->v_W, n, z1, w->G, n, z0, lin->K, sparse);
        vw_times(w, lin->v_W, n, z1, w->G + (size_t)n * z0, n, z1, lin->Cd, sparse);
        return 0;
    }
    /* no kinematic system: dW columns, S-bar (z0), W-bar (z1), inputs (nr) */
    mbla_gemm('N', 'N', z1, z1, z1, -1.0, lin->M, z1, dW + (size_t)z0 * z1, z1, 0.0, lin->Cd, z1, NULL);
    mbla_gemm('N', 'N', z1, z0, z1, -1.0, lin->M, z1, dW, z1, 0.0, lin->K, z1, NULL);
    if (nr) mbla_gemm('N', 'N', z1, nr, z1, 1.0, lin->M, z1, dW + (size_t)nx * z1, z1, 0.0, lin->F, z1, NULL);
    return 0;
}

/* Solve at the point in w->ev (already evaluated, matrix refilled and factored) into lin: the
 * right-hand sides S-bar, W-bar, inputs, w->xcols at a time; then MCK. */
int aug_finish(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    int exact_sdot = aug_finish_dS_init(w);
    for (int j0 = 0; j0 < w->nrhs; j0 += w->xcols) {
        int nb = w->nrhs - j0 < w->xcols ? w->nrhs - j0 : w->xcols;
        int rc = finish_solve_block(w, j0, nb, st);
        if (rc) return rc;
        aug_finish_post_block(w, lin, j0, nb, exact_sdot);
    }
    aug_finish_assemble(w, lin);
    return aug_finish_mck(w, lin, st);
}
