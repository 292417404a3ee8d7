/* `fd`: finite differences of the reduced equations (source 003 Sec. 3.1), for comparison.
 *
 * The reduced ODE x' = f(x, u) in the states S of `partition` (x = [S; W], W = S'; user states S =
 * s(q) preferred, as in `augmented`) is evaluated numerically: q(S) by Newton on [Phi(q); s(q) - S]
 * = 0 from the operating point, v from [Phi_q; s_q] v = [-Phi_t; W - s_t], and (vdot, lambda) from
 * the linear KKT system of the equations of motion and the acceleration constraints. A and B are
 * central differences with the step h_j = opt->fd_step * max(1, |x_j|) (default eps^(1/3), the step
 * that balances truncation O(h^2) and rounding O(eps/h)), h/2 and h/4; step selection keeps the
 * pair of consecutive steps (hc, hc/2) whose results agree best, and the reported matrices are its
 * Richardson extrapolation (4 D(hc/2) - D(hc)) / 3. Convergence check: the relative change |D(hc) -
 * D(hc/2)| / |D(hc/2)| must stay below opt->fd_tol. Estimated error (lin->err_est): the largest
 * distance between the eigenvalues of the extrapolated A and those of A(hc/2) (a conservative bound
 * on the truncation error of the extrapolated ones), and at least the rounding level eps
 * cond([Phi_q; P]) ||A||_1 / h. M-hat is exact (Qs^T M Qs); C-hat and K-hat are -M-hat times the
 * differenced blocks of A. Refuses singular configurations. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* Newton on the position constraints of the perturbed states: at most FD_NEWTON_MAXIT iterations,
 * converged when the residual is below FD_NEWTON_ULPS ulps of the largest coordinate (far below
 * what the differences can resolve, so the positions add no error of their own). */
#define FD_NEWTON_MAXIT 50
#define FD_NEWTON_ULPS 8.0
/* The velocity Newton also stops at its rounding floor: from the third step on, a step at most
 * FD_NEWTON_FLOOR times the FD_NEWTON_ULPS threshold that is no smaller than half the step before
 * (rounding noise, e.g. velocities 100 m from the origin, where the constraint residuals carry
 * eps |r| |omega|, stalls the step at a few times the threshold instead of converging to it). */
#define FD_NEWTON_FLOOR 64.0

typedef struct fd_ctx {
    const mbl_model *md;
    const mbl_point *pt;
    mbl_rstates *rw; /* rows of the states at the iterates (S, W borrowed from the selection) */
    int rows_filled;  /* rw filled once: without user states its rows are constant (unit rows) */
    int n, m, k, z0, z1, nX, nZ, nr, ny, maxit, usoff;
    double tol;
    double *q, *v, *a, *lam, *mu, *r, *F, *jac, *K, *rhs, *y, *Pq, *us;
    double *X, *Xd, *Z; /* ode states (from x), their derivatives and the implicit variables */
    mbl_eval *ev;
} fd_ctx;

/* rows of [Phi_q; A_nh (if vel); P or Pw] at the current evaluation into K (n x n) */
static void fd_jac_rows(fd_ctx *c, int vel)
{
    const model_view *mv = &c->ev->mv;
    int n = c->n, m = c->m, k = c->k, z = vel ? c->z1 : c->z0, p0 = mv->row0[MBL_ROW_PHI], h0 = mv->row0[MBL_ROW_NH];
    const double *X = vel ? c->rw->Pw : c->rw->P;
    lin_sjac_dense(mv, &mv->jac, c->jac, p0, p0 + m, MBL_BLK_Q, c->Pq);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) c->K[i + (size_t)j * n] = c->Pq[i + (size_t)j * m];
        for (int i = 0; i < z; i++) c->K[m + (vel ? k : 0) + i + (size_t)j * n] = X[i + (size_t)j * z];
    }
    if (vel) {
        lin_sjac_dense(mv, &mv->jac, c->jac, h0, h0 + k, MBL_BLK_V, c->Pq);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < k; i++) c->K[m + i + (size_t)j * n] = c->Pq[i + (size_t)j * k];
    }
}

static int fd_evaluate(fd_ctx *c, mbl_status *st);

/* the symbol values of the current iterate (with X, der(X) and Z) */
static void fd_fill(fd_ctx *c)
{
    mbl_point p = *c->pt;
    p.q = c->q, p.v = c->v, p.vdot = c->a, p.lambda = c->lam, p.mu = c->mu, p.r = c->r;
    p.X = c->X, p.Xdot = c->Xd, p.Z = c->Z;
    model_fill_syms_pt(c->md, &p, c->ev->syms);
}

/* Eq. 10 models: (vdot, lambda, mu, der(X), Z) by Newton on [R; d; zeq; Phi''; c'] (forces of the
 * multipliers and implicit equations make it nonlinear), from the operating point's values; it stops
 * at a step of a few ulps or when the steps stop shrinking (the rounding floor). */
static int fd_dynamics_ext(fd_ctx *c, mbl_status *st)
{
    const model_view *mv = &c->ev->mv;
    int n = c->n, m = c->m, k = c->k, nX = c->nX, nZ = c->nZ, N = n + m + k + nX + nZ, rc = 0;
    const mbl_point *pt = c->pt;
    memcpy(c->a, pt->vdot, (size_t)n * sizeof *c->a);
    if (m) memcpy(c->lam, pt->lambda, (size_t)m * sizeof *c->lam);
    if (k) memcpy(c->mu, pt->mu, (size_t)k * sizeof *c->mu);
    if (nX) memcpy(c->Xd, pt->Xdot, (size_t)nX * sizeof *c->Xd);
    if (nZ) memcpy(c->Z, pt->Z, (size_t)nZ * sizeof *c->Z);
    /* rows: EOM, ode, implicit variables (contiguous from 0), Phi'', c'; unknowns a, lambda, mu, Xd, Z */
    int e1 = mv->row0[MBL_ROW_VAR + 1], d0 = mv->row0[MBL_ROW_PHIDD], hd0 = mv->row0[MBL_ROW_NHD];
    int ja = mv->blk0[MBL_BLK_A], jl = mv->blk0[MBL_BLK_LAMBDA], jm = mv->blk0[MBL_BLK_MU];
    int jxd = mv->blk0[MBL_BLK_XD], jz = mv->blk0[MBL_BLK_Z];
    double *blk[5] = {c->a, c->lam, c->mu, c->Xd, c->Z};
    int len[5] = {n, m, k, nX, nZ}, col0[5] = {ja, jl, jm, jxd, jz}, u0[5] = {0, n, n + m, n + m + k, n + m + k + nX};
    double prev = INFINITY;
    for (int it = 0;; it++) {
        rc = fd_evaluate(c, st);
        if (rc) return rc;
        double *KK = c->K;
        memset(KK, 0, (size_t)N * N * sizeof *KK);
        for (int p = 0; p < mv->jac.nz; p++) {
            int row = mv->jac.row[p], col = mv->jac.col[p];
            int ri = row < e1 ? row : row >= d0 && row < d0 + m ? e1 + row - d0 : row >= hd0 && row < hd0 + k ? e1 + m + row - hd0 : -1;
            if (ri < 0) continue;
            for (int b = 0; b < 5; b++)
                if (col >= col0[b] && col < col0[b] + len[b]) KK[ri + (size_t)(u0[b] + col - col0[b]) * N] += c->jac[p];
        }
        for (int i = 0; i < e1; i++) c->rhs[i] = -c->F[i];
        for (int i = 0; i < m; i++) c->rhs[e1 + i] = -c->F[d0 + i];
        for (int i = 0; i < k; i++) c->rhs[e1 + m + i] = -c->F[hd0 + i];
        rc = mbla_lu_solve(N, 1, KK, N, c->rhs, N, st);
        if (rc) return rc;
        double step = 0;
        for (int b = 0; b < 5; b++) {
            double sc = 0, d = 0;
            for (int i = 0; i < len[b]; i++) blk[b][i] += c->rhs[u0[b] + i], sc = fmax(sc, fabs(blk[b][i]));
            for (int i = 0; i < len[b]; i++) d = fmax(d, fabs(c->rhs[u0[b] + i]));
            step = fmax(step, sc > 0 ? d / sc : d);
        }
        if (step <= FD_NEWTON_ULPS * DBL_EPSILON || (it >= 2 && step >= 0.5 * prev)) break;
        if (it >= c->maxit)
            return mbl_error(st, MBL_ENOCONV,
                             "fd: the accelerations, multipliers, der(X) and Z did not converge (Newton step %.3g)", step);
        prev = step;
    }
    return fd_evaluate(c, st);
}

static int fd_evaluate(fd_ctx *c, mbl_status *st)
{
    const mbl_model *md = c->md;
    const model_view *mv = &c->ev->mv;
    fd_fill(c);
    int rc = model_eval_F(md, c->ev->syms, c->F, c->ev->work, st);
    if (!rc) rc = model_eval_jac(md, c->ev->syms, c->jac, c->ev->work, st);
    if (!rc) rc = model_eval_user_states(md, c->ev->syms, c->us, c->ev->work, st);
    /* the rows change with the iterate only through the user states' Jacobian */
    if (!rc && (!c->rows_filled || mv->nus || mv->nuvs)) {
        lin_rstates_rows(mv, c->rw, c->us + c->usoff);
        c->rows_filled = 1;
    }
    return rc;
}

/* f(x, u) -> out (z0 + z1: S', W'), outputs yout (ny) */
static int fd_eval(fd_ctx *c, const double *x, const double *u, double *out, double *yout, mbl_status *st)
{
    const mbl_model *md = c->md;
    const model_view *mv = &c->ev->mv;
    int n = c->n, m = c->m, k = c->k, z0 = c->z0, z1 = c->z1, rc = 0, N = n + m + k;
    if (c->nX) memcpy(c->X, x + z0 + z1, (size_t)c->nX * sizeof *c->X);
    int p0 = mv->row0[MBL_ROW_PHI], e0 = mv->row0[MBL_ROW_EOM], d0 = mv->row0[MBL_ROW_PHIDD];
    int v0 = mv->row0[MBL_ROW_PHID], h0 = mv->row0[MBL_ROW_NH], hd0 = mv->row0[MBL_ROW_NHD];
    memcpy(c->q, c->pt->q, (size_t)n * sizeof *c->q);
    memset(c->v, 0, (size_t)n * sizeof *c->v);
    memset(c->a, 0, (size_t)n * sizeof *c->a);
    memset(c->lam, 0, (size_t)(m + 1) * sizeof *c->lam);
    memset(c->mu, 0, (size_t)(k + 1) * sizeof *c->mu);
    memcpy(c->r, u, (size_t)c->nr * sizeof *c->r);
    /* positions: Newton on [Phi(q); S(q) - S] */
    for (int it = 0;; it++) {
        rc = fd_evaluate(c, st);
        if (rc) return rc;
        double res = 0;
        for (int i = 0; i < m; i++) c->rhs[i] = -c->F[p0 + i], res = fmax(res, fabs(c->F[p0 + i]));
        for (int i = 0; i < z0; i++) {
            c->rhs[m + i] = x[i] - lin_rstates_S(mv, c->rw, i, c->us, c->q);
            res = fmax(res, fabs(c->rhs[m + i]));
        }
        if (res <= c->tol) break;
        if (it >= c->maxit) return mbl_error(st, MBL_ENOCONV, "fd: the position constraints did not converge");
        fd_jac_rows(c, 0);
        rc = mbla_lu_solve(n, 1, c->K, n, c->rhs, n, st);
        if (rc) return rc;
        for (int j = 0; j < n; j++) c->q[j] += c->rhs[j];
    }
    /* velocities: Newton on [Phi'(q, v); c(q, v); W(q, v) - W] (one step when all are linear in v);
     * converged at a step of FD_NEWTON_ULPS ulps of max |v|, or at the rounding floor (FD_NEWTON_FLOOR) */
    double dv_prev = INFINITY;
    for (int it = 0;; it++) {
        for (int i = 0; i < m; i++) c->rhs[i] = -c->F[v0 + i];
        for (int i = 0; i < k; i++) c->rhs[m + i] = -c->F[h0 + i];
        for (int i = 0; i < z1; i++) c->rhs[m + k + i] = x[z0 + i] - lin_rstates_W(mv, c->rw, i, c->us, c->v);
        fd_jac_rows(c, 1);
        rc = mbla_lu_solve(n, 1, c->K, n, c->rhs, n, st);
        if (rc) return rc;
        double dvn = 0, vn = 1.0;
        for (int j = 0; j < n; j++) c->v[j] += c->rhs[j], dvn = fmax(dvn, fabs(c->rhs[j])), vn = fmax(vn, fabs(c->v[j]));
        rc = fd_evaluate(c, st);
        if (rc) return rc;
        double thr = FD_NEWTON_ULPS * DBL_EPSILON * vn;
        if (it >= 1 && dvn <= thr) break;
        if (it >= 2 && dvn <= FD_NEWTON_FLOOR * thr && dvn >= 0.5 * dv_prev) break; /* the rounding floor */
        if (it >= c->maxit)
            return mbl_error(st, MBL_ENOCONV, "fd: the velocity constraints did not converge (Newton step %.3g, max |v| %.3g)",
                             dvn, vn);
        dv_prev = dvn;
    }
    if (mv->ext) {
        rc = fd_dynamics_ext(c, st);
        if (rc) return rc;
        goto states;
    }
    /* accelerations and multipliers: R(a, lam, mu), Phi''(a) and c'(a) are linear in (a, lam, mu) */
    double *KK = c->K; /* reuse: needs N x N */
    memset(KK, 0, (size_t)N * N * sizeof *KK);
    int ja = mv->blk0[MBL_BLK_A], jl = mv->blk0[MBL_BLK_LAMBDA], jm = mv->blk0[MBL_BLK_MU];
    for (int p = 0; p < mv->jac.nz; p++) {
        int row = mv->jac.row[p], col = mv->jac.col[p];
        int ri = row >= e0 && row < e0 + n     ? row - e0
                 : row >= d0 && row < d0 + m   ? n + row - d0
                 : row >= hd0 && row < hd0 + k ? n + m + row - hd0
                                               : -1;
        if (ri < 0) continue;
        if (col >= ja && col < ja + n) KK[ri + (size_t)(col - ja) * N] += c->jac[p];
        else if (col >= jl && col < jl + m) KK[ri + (size_t)(n + col - jl) * N] += c->jac[p];
        else if (col >= jm && col < jm + k) KK[ri + (size_t)(n + m + col - jm) * N] += c->jac[p];
    }
    for (int i = 0; i < n; i++) c->rhs[i] = -c->F[e0 + i];
    for (int i = 0; i < m; i++) c->rhs[n + i] = -c->F[d0 + i];
    for (int i = 0; i < k; i++) c->rhs[n + m + i] = -c->F[hd0 + i];
    rc = mbla_lu_solve(N, 1, KK, N, c->rhs, N, st);
    if (rc) return rc;
    memcpy(c->a, c->rhs, (size_t)n * sizeof *c->a);
    memcpy(c->lam, c->rhs + n, (size_t)m * sizeof *c->lam);
    memcpy(c->mu, c->rhs + n + m, (size_t)k * sizeof *c->mu);
    fd_fill(c);
states:
    if (mv->nus || mv->nuvs) {
        rc = model_eval_user_states(md, c->ev->syms, c->us, c->ev->work, st);
        if (rc) return rc;
    }
    const mbl_rstates *rw = c->rw;
    for (int i = 0; i < z0; i++) /* S' */
        out[i] = rw->S[i].kind == MBL_SREF_COORD ? c->v[rw->S[i].index] : c->us[mv->nus + rw->S[i].index];
    for (int i = 0; i < z1; i++) { /* W' */
        const mbl_state_ref *w = &rw->W[i];
        double val;
        if (w->kind == MBL_SREF_COORD) val = c->a[w->index];
        else if (w->kind == MBL_SREF_USER) val = c->us[3 * mv->nus + mv->nuvs + w->index];
        else {
            const mbl_state_ref *sj = &rw->S[w->index];
            val = sj->kind == MBL_SREF_COORD ? c->a[sj->index] : c->us[2 * mv->nus + sj->index];
        }
        out[z0 + i] = val;
    }
    for (int i = 0; i < c->nX; i++) out[z0 + z1 + i] = c->Xd[i]; /* X' */
    if (c->ny) {
        rc = model_eval_outputs(md, c->ev->syms, c->y, c->ev->work, st);
        if (rc) return rc;
        memcpy(yout, c->y, (size_t)c->ny * sizeof *yout);
    }
    return 0;
}

/* central differences of [f; y] w.r.t. [x; u] with relative step h -> D ((2z + ny) x (2z + nr)) */
static int fd_diff(fd_ctx *c, const double *x0, const double *u0, double h, double *D, double *x, double *u,
                   double *fp, double *fm, mbl_status *st)
{
    int nx = c->z0 + c->z1 + c->nX, nr = c->nr, ny = c->ny, rows = nx + ny;
    for (int j = 0; j < nx + nr; j++) {
        memcpy(x, x0, (size_t)nx * sizeof *x);
        memcpy(u, u0, (size_t)nr * sizeof *u);
        double *t = j < nx ? &x[j] : &u[j - nx], t0 = *t, hj = h * fmax(1.0, fabs(t0));
        *t = t0 + hj;
        int rc = fd_eval(c, x, u, fp, fp + nx, st);
        *t = t0 - hj;
        if (!rc) rc = fd_eval(c, x, u, fm, fm + nx, st);
        if (rc) return rc;
        for (int i = 0; i < rows; i++) D[i + (size_t)j * rows] = (fp[i] - fm[i]) / (2 * hj);
    }
    return 0;
}

/* The evaluation arrays of c (n, m, k, nr, ny, nX, nZ set) carved from the workspace p; returns what
 * follows them. */
static double *fd_carve(fd_ctx *c, double *p, int Nk)
{
    const model_view *mv = &c->ev->mv;
    int n = c->n, m = c->m, k = c->k, nr = c->nr, ny = c->ny, nX = c->nX, nZ = c->nZ;
    c->q = p, p += n + 1;
    c->v = p, p += n + 1;
    c->a = p, p += n + 1;
    c->lam = p, p += m + 1;
    c->mu = p, p += k + 1;
    c->r = p, p += nr + 1;
    c->F = p, p += mv->nF + 1;
    c->jac = p, p += mv->jac.nz + 1;
    c->K = p, p += (size_t)Nk * Nk + 1;
    c->rhs = p, p += Nk + 1;
    c->y = p, p += ny + 1;
    c->Pq = p, p += (size_t)(m > k ? m : k) * n + 1;
    c->X = p, p += nX + 1;
    c->Xd = p, p += nX + 1;
    c->Z = p, p += nZ + 1;
    return p;
}

/* The differences D1 (nD entries, Richardson-extrapolated) and D2 of the chosen pair of steps (the
 * coarser *h), with the largest entry *dn and the largest change *dd between the pair. */
static int fd_steps(fd_ctx *c, const double *x0, const double *u0, const mbl_lin_options *opt, size_t nD, double *D1,
                    double *D2, double *D3, double *xw, double *uw, double *fp, double *fm, double *h_out,
                    double *dn_out, double *dd_out, mbl_status *st)
{
    /* step selection: differences at h, h/2, h/4; the pair of consecutive steps that agree best
     * (truncation dominates at large steps, rounding at small ones) is used */
    double h = opt->fd_step;
    int rc = fd_diff(c, x0, u0, h, D1, xw, uw, fp, fm, st);
    if (!rc) rc = fd_diff(c, x0, u0, h / 2, D2, xw, uw, fp, fm, st);
    if (!rc) rc = fd_diff(c, x0, u0, h / 4, D3, xw, uw, fp, fm, st);
    if (rc) return rc;
    double dn = 0, d12 = 0, d23 = 0;
    for (size_t i = 0; i < nD; i++) {
        dn = fmax(dn, fabs(D2[i]));
        d12 = fmax(d12, fabs(D1[i] - D2[i]));
        d23 = fmax(d23, fabs(D2[i] - D3[i]));
    }
    double hc = h, dd = d12; /* the coarser step of the chosen pair */
    if (d23 < d12) {
        memcpy(D1, D2, nD * sizeof *D1);
        memcpy(D2, D3, nD * sizeof *D2);
        hc = h / 2, dd = d23;
    }
    if (dd > opt->fd_tol * fmax(dn, DBL_MIN)) {
        return mbl_error(st, MBL_ENOCONV,
                         "fd: the differences did not converge (relative change %.3g between steps %.3g and %.3g, "
                         "tolerance %.3g)",
                         dn > 0 ? dd / dn : dd, hc, hc / 2, opt->fd_tol);
    }
    h = hc;
    /* Richardson: D = (4 D(h/2) - D(h)) / 3 */
    for (size_t i = 0; i < nD; i++) D1[i] = (4 * D2[i] - D1[i]) / 3;
    *h_out = h, *dn_out = dn, *dd_out = dd;
    return 0;
}

/* A, B, C, D of lin from the differences D1 (rowsD = nx + ny rows: [A B; C D]), A2 the A of D2;
 * then C-hat, K-hat, F from M-hat. */
static void fd_result(mbl_linear *lin, const double *D1, const double *D2, int rowsD, double *A2)
{
    int nx = lin->nx, nr = lin->nu, ny = lin->ny, z0 = lin->z0, z1 = lin->z1, colsD = nx + nr;
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < nx; i++) {
            lin->A[i + (size_t)j * nx] = D1[i + (size_t)j * rowsD];
            A2[i + (size_t)j * nx] = D2[i + (size_t)j * rowsD];
        }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < nx; i++) lin->B[i + (size_t)j * nx] = D1[i + (size_t)(nx + j) * rowsD];
    for (int j = 0; j < colsD; j++)
        for (int i = 0; i < ny; i++) {
            double v = D1[nx + i + (size_t)j * rowsD];
            if (j < nx) lin->C[i + (size_t)j * ny] = v;
            else lin->D[i + (size_t)(j - nx) * ny] = v;
        }
    /* C-hat = -M-hat dW'/dW, K-hat = -M-hat dW'/dS, F = M-hat dW'/du */
    if (z1) {
        if (z0) mbla_gemm('N', 'N', z1, z0, z1, -1.0, lin->M, z1, lin->A + z0, nx, 0.0, lin->K, z1, NULL);
        mbla_gemm('N', 'N', z1, z1, z1, -1.0, lin->M, z1, lin->A + z0 + (size_t)z0 * nx, nx, 0.0, lin->Cd, z1, NULL);
        if (nr) mbla_gemm('N', 'N', z1, nr, z1, 1.0, lin->M, z1, lin->B + z0, nx, 0.0, lin->F, z1, NULL);
    }
}

int lin_fd(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
           mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, k = mv->k, nr = mv->nr, ny = mv->ny, r = 0, rc;
    mbl_blocks B;
    mbl_rstates rs, rw, us;
    mbl_linear *lin = NULL;
    int *rows = NULL;
    double *usv = NULL, *buf = NULL;
    char sel[sizeof lin->selection];
    fd_ctx c;
    memset(&c, 0, sizeof c);
    memset(&rs, 0, sizeof rs), memset(&rw, 0, sizeof rw), memset(&us, 0, sizeof us);
    *out = NULL;
    rc = lin_require_dense(md, opt, "fd", st);
    if (rc) return rc;
    rc = lin_dense_open(md, pt, &B, &rows, st);
    if (rc) return rc;
    int frozen = 0;
    rc = lin_dense_states(md, pt, opt, &B, "fd", "the reduced equations in independent coordinates do not exist", rows, &r, &rs, &us,
                          &frozen, sel, sizeof sel, st);
    if (rc) goto done;
    int nX = mv->nX, nZ = mv->nZ;
    int z0 = rs.z0, z1 = rs.z1, nx = z0 + z1 + nX, Nk = n + m + k + nX + nZ, rowsD = nx + ny, colsD = nx + nr;
    size_t nusv = (size_t)(3 * mv->nus + 2 * mv->nuvs) + (size_t)mv->usjac.nz + 1;
    usv = mbl_calloc(nusv, sizeof *usv);
    lin = lin_linear_alloc_x(n, z0, z1, nX, nr, ny);
    size_t nb = 2 * (size_t)nX + (size_t)nZ + 6 * (size_t)n + 2 * (size_t)(m + k) + (size_t)mv->nF + (size_t)mv->jac.nz + (size_t)Nk * Nk + (size_t)Nk +
                (size_t)ny + (size_t)(m + k) * n + 3 * (size_t)rowsD * colsD + 4 * (size_t)(nx + nr + ny) +
                4 * (size_t)nx + 2 * (size_t)nx * nx + 24;
    buf = mbl_calloc(nb, sizeof *buf);
    if (!usv || !lin || !buf || lin_rstates_alloc(&rw, n, z0, z1)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rw.S = rs.S, rw.W = rs.W; /* borrowed */
    memcpy(lin->selection, sel, sizeof sel);
    int usoff = 3 * mv->nus + 2 * mv->nuvs;
    snprintf(lin->method, sizeof lin->method, "fd");
    /* exact M-hat and q_S from the reduction at the point (positions only) */
    rc = lin_reduce(&B, rows, r, &rs, NULL, opt->rcond_min, lin, NULL, NULL, st);
    if (rc) goto done;
    double *p = buf;
    /* c.P: workspace for dS/dq at the Newton iterates (Pd is no longer needed) */
    c.md = md, c.pt = pt, c.rw = &rw, c.us = usv, c.usoff = usoff;
    c.n = n, c.m = m, c.k = k, c.z0 = z0, c.z1 = z1, c.nX = nX, c.nZ = nZ, c.nr = nr, c.ny = ny, c.maxit = FD_NEWTON_MAXIT;
    c.ev = &B.ev;
    p = fd_carve(&c, p, Nk);
    if (nX) memcpy(c.X, pt->X, (size_t)nX * sizeof *c.X);
    if (nX) memcpy(c.Xd, pt->Xdot, (size_t)nX * sizeof *c.Xd);
    if (nZ) memcpy(c.Z, pt->Z, (size_t)nZ * sizeof *c.Z);
    double *D1 = p;
    p += (size_t)rowsD * colsD;
    double *D2 = p;
    p += (size_t)rowsD * colsD;
    double *D3 = p;
    p += (size_t)rowsD * colsD;
    double *x0 = p;
    p += nx + 1;
    double *xw = p;
    p += nx + 1;
    double *uw = p;
    p += nr + 1;
    double *fp = p;
    p += nx + ny + 1;
    double *fm = p;
    p += nx + ny + 1;
    double *A2 = p;
    p += (size_t)nx * nx;
    double *ew = p;
    if ((size_t)(p - buf) + 4 * (size_t)nx > nb) {
        rc = mbl_error(st, MBL_ENOMEM, "fd: workspace size");
        goto done;
    }
    /* tolerance of the position solve: a few ulps of the coordinates */
    double qs = 1.0;
    for (int i = 0; i < n; i++) qs = fmax(qs, fabs(pt->q[i]));
    c.tol = FD_NEWTON_ULPS * DBL_EPSILON * qs;
    for (int i = 0; i < z0; i++) x0[i] = lin_rstates_S(mv, &rs, i, B.ev.us, pt->q);
    for (int i = 0; i < z1; i++) x0[z0 + i] = lin_rstates_W(mv, &rs, i, B.ev.us, pt->v);
    for (int i = 0; i < nX; i++) x0[z0 + z1 + i] = pt->X[i];
    double h = 0, dn = 0, dd = 0;
    rc = fd_steps(&c, x0, pt->r, opt, (size_t)rowsD * colsD, D1, D2, D3, xw, uw, fp, fm, &h, &dn, &dd, st);
    if (rc) goto done;
    fd_result(lin, D1, D2, rowsD, A2);
    double err = nx ? lin_spec_dist(nx, lin->A, A2, ew, st) : 0.0;
    /* rounding floor: the position solve and the evaluations carry relative errors of order
     * eps cond([Phi_q; P]); differencing divides them by h */
    err = fmax(err, DBL_EPSILON * fmax(1.0, lin->cond) / h * mbla_norm1(nx, nx, lin->A, nx));
    lin->err_est = err;
    if (frozen) rc = lin_frozen_change(&B, rows, r, &us, &rs, opt->rcond_min, lin, st);
    if (rc) goto done;
    if (lin_state_names(md, lin, frozen ? &us : &rs)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->notes, sizeof lin->notes,
             "central differences, steps %.3g and %.3g (relative), Richardson extrapolation; relative change %.2e; "
             "estimated eigenvalue error %.2e",
             h, h / 2, dn > 0 ? dd / dn : 0.0, err);
    *out = lin;
    lin = NULL;
done:
    rw.S = rw.W = NULL;
    lin_blocks_free(&B);
    lin_rstates_free(&rs), lin_rstates_free(&rw), lin_rstates_free(&us);
    mbl_free(rows), mbl_free(usv), mbl_free(buf);
    mbl_linear_free(lin);
    return rc;
}
