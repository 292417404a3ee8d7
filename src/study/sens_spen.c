/* Sensitivities (sensitivity.c): the pencil in the user states, where the coordinates are not
 * steady along the motion (spinning Euler parameters). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/sens_internal.h"

/* ---- the pencil in the user states (spinning Euler parameters) ----------------------------
 *
 * Where the coordinates are not steady along the motion (the Euler parameters of a spinning body
 * rotate: the linearized equations in dq are periodic, their frozen eigenvalues are not the
 * motion's), the file's user states S = s(q) (linearize.states, steady by the user's choice, as
 * the augmented method relies on) give the constant-coefficient form. With B = [Phi_q; s_q] and
 * dq = T(t) dS, B T = [0; I]: T0 = B^-1 [0; I], T1 = T' = -B^-1 B' T0, T2 = T'' = -B^-1 (B'' T0 +
 * 2 B' T1), where B' = [Phi'_q; sdot_q] and B'' = [Phi''_q; sddot_q] are d/dq of the velocity and
 * acceleration rows (the time derivatives of B along the motion, exactly). The equations of
 * motion R_vdot dq'' + R_v dq' + R_q dq + R_lambda dlambda + R_mu dmu = 0 and the non-holonomic
 * constraints (in the body speeds, rolling wheels) c_v dq' + c_q dq = 0 become, over
 * z = [dS; dlambda; dmu]:
 *
 *   Q2 = [R_vdot T0, 0, 0; 0, 0, 0],  Q1 = [2 R_vdot T1 + R_v T0, 0, 0; c_v T0, 0, 0],
 *   Q0 = [R_vdot T2 + R_v T1 + R_q T0, R_lambda, R_mu; c_v T1 + c_q T0, 0, 0],
 *
 * (n + k) x (n + k) (ns = n - m states; 2 ns - k finite eigenvalues, as the frozen pencil), and
 * their total derivatives along a parameter follow by the product rule from those of J
 * (mbl_dae_deriv_jac_dir) and of the states' Jacobians (mbl_dae_deriv_states). Models whose
 * position states number n - m, with independent constraints and no ODE states, implicit variables
 * or velocity states. */
/* An entry of the pencil in the user states no larger than SPEN_ROUND times its rounding error
 * bound (nt n eps |R| |T|) is zero. */
#define SPEN_ROUND 2.0

/* C (r x c) = A (r x k) B (k x c) + beta C, dense column-major, leading dimensions r, k, r */
static void mm(int r, int c, int k, double alpha, const double *A, int lda, const double *B, int ldb, double beta,
               double *C, int ldc)
{
    for (int j = 0; j < c; j++)
        for (int i = 0; i < r; i++) {
            double x = 0;
            for (int l = 0; l < k; l++) x += A[i + (size_t)l * lda] * B[l + (size_t)j * ldb];
            C[i + (size_t)j * ldc] = alpha * x + (beta == 0 ? 0 : beta * C[i + (size_t)j * ldc]);
        }
}

/* Rows of the dense Jacobian values vals (model pattern) into the blocks: R2, R1, R0 (n x n, EOM
 * rows vs vdot, v, q), RL (n x m, EOM vs lambda), RM (n x k, EOM vs mu), C1, C0 (k x n, the
 * non-holonomic rows c vs v and q), and the n x n matrices B, B1, B2 whose first m rows are
 * Phi_q, Phi'_q, Phi''_q (the rest left to the states) */
typedef struct blocks {
    double *R2, *R1, *R0, *RL, *RM, *C1, *C0, *B, *B1, *B2;
} blocks;

static void spen_blocks(const ctx *c, const double *vals, const blocks *b)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m, k = L->k;
    size_t nn = (size_t)n * n, nm = (size_t)n * m, nk = (size_t)n * k;
    double *z[10] = {b->R2, b->R1, b->R0, b->B, b->B1, b->B2, b->RL, b->RM, b->C1, b->C0};
    size_t len[10] = {nn, nn, nn, nn, nn, nn, nm, nk, nk, nk};
    for (int a = 0; a < 10; a++)
        if (len[a]) memset(z[a], 0, len[a] * sizeof *z[a]);
    for (int e = 0; e < L->jnz; e++) {
        int r = L->jrow[e], q = L->jcol[e];
        double v = vals[e];
        int cq = q - L->col0[MBL_DAE_Q], cv = q - L->col0[MBL_DAE_V], ca = q - L->col0[MBL_DAE_VDOT],
            cl = q - L->col0[MBL_DAE_LAMBDA], cm = q - L->col0[MBL_DAE_MU];
        if (r < L->row0[MBL_DAE_EOM + 1]) {
            int i = r - L->row0[MBL_DAE_EOM];
            if (ca >= 0 && ca < n) b->R2[i + (size_t)ca * n] += v;
            else if (cv >= 0 && cv < n) b->R1[i + (size_t)cv * n] += v;
            else if (cq >= 0 && cq < n) b->R0[i + (size_t)cq * n] += v;
            else if (cl >= 0 && cl < m) b->RL[i + (size_t)cl * n] += v;
            else if (cm >= 0 && cm < k) b->RM[i + (size_t)cm * n] += v;
        } else if (r >= L->row0[MBL_DAE_NH] && r < L->row0[MBL_DAE_NH + 1]) {
            int i = r - L->row0[MBL_DAE_NH];
            if (cv >= 0 && cv < n) b->C1[i + (size_t)cv * k] += v;
            else if (cq >= 0 && cq < n) b->C0[i + (size_t)cq * k] += v;
        } else if (cq >= 0 && cq < n) {
            if (r >= L->row0[MBL_DAE_PHI] && r < L->row0[MBL_DAE_PHI + 1]) b->B[(r - L->row0[MBL_DAE_PHI]) + (size_t)cq * n] += v;
            else if (r >= L->row0[MBL_DAE_PHID] && r < L->row0[MBL_DAE_PHID + 1])
                b->B1[(r - L->row0[MBL_DAE_PHID]) + (size_t)cq * n] += v;
            else if (r >= L->row0[MBL_DAE_PHIDD] && r < L->row0[MBL_DAE_PHIDD + 1])
                b->B2[(r - L->row0[MBL_DAE_PHIDD]) + (size_t)cq * n] += v;
        }
    }
}

/* The states' rows of B, B1, B2 from Sq (3 ns x n) */
static void spen_states(int n, int m, int ns, const double *Sq, const blocks *b)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ns; i++) {
            b->B[m + i + (size_t)j * n] = Sq[i + (size_t)j * 3 * ns];
            b->B1[m + i + (size_t)j * n] = Sq[ns + i + (size_t)j * 3 * ns];
            b->B2[m + i + (size_t)j * n] = Sq[2 * ns + i + (size_t)j * 3 * ns];
        }
}

/* The pencil's coefficients (N = n + k, column-major) from the blocks and T0, T1, T2 (n x ns):
 *   Q2 = [R2 T0, 0, 0; 0],  Q1 = [2 R2 T1 + R1 T0, 0, 0; C1 T0, 0, 0],
 *   Q0 = [R2 T2 + R1 T1 + R0 T0, RL, RM; C1 T1 + C0 T0, 0, 0].
 * Used for the derivatives too (the product rule: called with one factor differentiated at a
 * time, accumulate = 1 adds). */
static void spen_fill(int n, int m, int k, int ns, const blocks *b, const double *T0, const double *T1, const double *T2,
                      double beta, double *P0, double *P1, double *P2, int lambda_cols)
{
    int N = n + k;
    mm(n, ns, n, 1, b->R2, n, T0, n, beta, P2, N);
    mm(n, ns, n, 2, b->R2, n, T1, n, beta, P1, N);
    mm(n, ns, n, 1, b->R1, n, T0, n, 1, P1, N);
    mm(n, ns, n, 1, b->R2, n, T2, n, beta, P0, N);
    mm(n, ns, n, 1, b->R1, n, T1, n, 1, P0, N);
    mm(n, ns, n, 1, b->R0, n, T0, n, 1, P0, N);
    if (k) {
        mm(k, ns, n, 1, b->C1, k, T0, n, beta, P1 + n, N);
        mm(k, ns, n, 1, b->C1, k, T1, n, beta, P0 + n, N);
        mm(k, ns, n, 1, b->C0, k, T0, n, 1, P0 + n, N);
    }
    if (!lambda_cols) return;
    for (int l = 0; l < m; l++)
        for (int i = 0; i < n; i++) P0[i + (size_t)(ns + l) * N] += b->RL[i + (size_t)l * n];
    for (int l = 0; l < k; l++)
        for (int i = 0; i < n; i++) P0[i + (size_t)(ns + m + l) * N] += b->RM[i + (size_t)l * n];
}

/* entries within their own rounding error are zero: each is a sum of nt products of n terms, so
 * rounding leaves up to about nt n eps (|R| |T|) where the exact value is zero (a cyclic
 * coordinate's column of Q0, R_vdot T2 + R_v T1 + R_q T0, cancels to 1e-15 at a fast spin, and
 * that noise splits its double zero into +-3e-6i, as the BLAS kernel rounds); W (N x ns), and the
 * absolute values of the blocks and of T in the scratch a (10 blocks) and aT (3 n x ns) */
static void spen_round(int n, int m, int k, int ns, const blocks *b, const double *T0, const double *T1,
                       const double *T2, const blocks *a, double *aT0, double *aT1, double *aT2, double *W, double *P0,
                       double *P1, double *P2)
{
    int N = n + k;
    size_t nn = (size_t)n * n, nk = (size_t)n * k, nsz = (size_t)n * ns;
    for (size_t e = 0; e < nn; e++)
        a->R2[e] = fabs(b->R2[e]), a->R1[e] = fabs(b->R1[e]), a->R0[e] = fabs(b->R0[e]);
    for (size_t e = 0; e < nk; e++) a->C1[e] = fabs(b->C1[e]), a->C0[e] = fabs(b->C0[e]);
    for (size_t e = 0; e < nsz; e++) aT0[e] = fabs(T0[e]), aT1[e] = fabs(T1[e]), aT2[e] = fabs(T2[e]);
    double *Pk[3] = {P0, P1, P2};
    for (int kk = 0; kk < 3; kk++) {
        memset(W, 0, (size_t)N * ns * sizeof *W);
        double *W0 = kk == 0 ? W : NULL, *W1 = kk == 1 ? W : NULL, *W2 = kk == 2 ? W : NULL;
        /* the bounds of P_kk alone: spen_fill into W with the other two aside (scratch past W) */
        double *junk = W + (size_t)N * ns;
        spen_fill(n, m, k, ns, a, aT0, aT1, aT2, 0, W0 ? W0 : junk, W1 ? W1 : junk, W2 ? W2 : junk, 0);
        int nt = kk == 0 ? 3 : kk == 1 ? 2 : 1;
        for (int j = 0; j < ns; j++)
            for (int i = 0; i < N; i++) {
                size_t e = i + (size_t)j * N;
                if (fabs(Pk[kk][e]) <= SPEN_ROUND * nt * n * DBL_EPSILON * W[e]) Pk[kk][e] = 0;
            }
    }
    /* a whole column of Q0 within the rounding of T itself (T0, T1, T2 come from solves with B:
     * where a cyclic state's column is exactly zero, T's rounding leaves 1e-16 .. 1e-14 in it,
     * which the entrywise bound above, relative to that noise, cannot see): zero when its largest
     * entry is below SPEN_ROUND nt n eps sum_k max|R_k| max|T_k| (the bicycle's position, heading
     * and wheel angles: 1e-31 .. 3e-14 against 3e-11; its lean and steer columns 67 and 1145) */
    double big = 0, rk[3] = {0, 0, 0}, tk[3] = {0, 0, 0};
    const double *R[3] = {b->R2, b->R1, b->R0}, *T[3] = {T2, T1, T0};
    for (int k2 = 0; k2 < 3; k2++) {
        for (size_t e = 0; e < nn; e++) rk[k2] = fmax(rk[k2], fabs(R[k2][e]));
        for (size_t e = 0; e < nsz; e++) tk[k2] = fmax(tk[k2], fabs(T[k2][e]));
        big += rk[k2] * tk[k2];
    }
    for (size_t e = 0; e < nk; e++) big = fmax(big, fabs(b->C1[e]) * (tk[1] + tk[2]) + fabs(b->C0[e]) * tk[2]);
    for (int j = 0; j < ns; j++) {
        double cm = 0;
        for (int i = 0; i < N; i++) cm = fmax(cm, fabs(P0[i + (size_t)j * N]));
        if (cm <= SPEN_ROUND * 3 * n * DBL_EPSILON * big)
            for (int i = 0; i < N; i++) P0[i + (size_t)j * N] = 0;
    }
}

/* Build Q0, Q1, Q2 (into P0, P1, P2, now N x N with N = n + k) and their derivatives (into dP) */
int study_sens_spen_build(const ctx *c, const mbl_dae_deriv *d, const mbl_point *pt, const double *Jv, const double *dx,
                          const int *wrt, int nwrt, double *P0, double *P1, double *P2, double *dP, spen *sp,
                          mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m, k = L->k, ns = n - m, N = n + k, rc = 0, nunk = L->nunk;
    size_t nn = (size_t)n * n, nm = (size_t)n * m, nk = (size_t)n * k, nsz = (size_t)n * ns, NN = (size_t)N * N;
    size_t nblk = 6 * nn + nm + 3 * nk; /* one set of blocks */
    mbla_dlu *lu = NULL;
    /* three sets of blocks (the values, their derivatives, absolute values), 8 n x ns (T1, T2, dT0,
     * dT1, dT2, |T0|, |T1|, |T2|), Sq and dSq (3 ns x n each), W (2 N x ns), dJ */
    double *buf = mbl_alloc_array(3 * nblk + 8 * nsz + 6 * (size_t)ns * n + 2 * (size_t)N * ns + (size_t)L->jnz + 1,
                                  sizeof *buf);
    sp->n = n, sp->m = m, sp->ns = ns;
    sp->T0 = mbl_alloc_array(nsz + 1, sizeof *sp->T0);
    sp->dT0 = mbl_alloc_array(nsz * (size_t)(nwrt ? nwrt : 1) + 1, sizeof *sp->dT0);
    if (!buf || !sp->T0 || !sp->dT0) {
        mbl_free(buf);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    blocks bk[3];
    double *p = buf;
    for (int a = 0; a < 3; a++) {
        blocks *b = &bk[a];
        b->R2 = p, b->R1 = p + nn, b->R0 = p + 2 * nn, b->B = p + 3 * nn, b->B1 = p + 4 * nn, b->B2 = p + 5 * nn;
        b->RL = p + 6 * nn, b->RM = b->RL + nm, b->C1 = b->RM + nk, b->C0 = b->C1 + nk;
        p += nblk;
    }
    const blocks *B = &bk[0], *dB = &bk[1];
    double *T0 = sp->T0, *T1 = p, *T2 = T1 + nsz, *dT0 = T2 + nsz, *dT1 = dT0 + nsz, *dT2 = dT1 + nsz;
    double *aT0 = dT2 + nsz, *aT1 = aT0 + nsz, *aT2 = aT1 + nsz;
    double *Sq = aT2 + nsz, *dSq = Sq + 3 * (size_t)ns * n, *W = dSq + 3 * (size_t)ns * n, *dJ = W + 2 * (size_t)N * ns;
    spen_blocks(c, Jv, B);
    rc = mbl_dae_deriv_states(d, pt, NULL, -1, Sq, NULL, st);
    if (rc) goto done;
    spen_states(n, m, ns, Sq, B);
    rc = mbla_dlu_new(n, B->B, n, &lu, st);
    if (rc) {
        mbl_error_prefix(st, "sensitivities: [Phi_q; the states' Jacobian] is singular (the states do not parametrize "
                             "the positions)");
        goto done;
    }
    /* T0 = B^-1 [0; I], T1 = -B^-1 B1 T0, T2 = -B^-1 (B2 T0 + 2 B1 T1) */
    memset(T0, 0, nsz * sizeof *T0);
    for (int j = 0; j < ns; j++) T0[m + j + (size_t)j * n] = 1;
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T0, n, st))) goto done;
    mm(n, ns, n, -1, B->B1, n, T0, n, 0, T1, n);
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T1, n, st))) goto done;
    mm(n, ns, n, -1, B->B2, n, T0, n, 0, T2, n);
    mm(n, ns, n, -2, B->B1, n, T1, n, 1, T2, n);
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T2, n, st))) goto done;
    memset(P0, 0, NN * sizeof *P0), memset(P1, 0, NN * sizeof *P1), memset(P2, 0, NN * sizeof *P2);
    spen_fill(n, m, k, ns, B, T0, T1, T2, 0, P0, P1, P2, 1);
    spen_round(n, m, k, ns, B, T0, T1, T2, &bk[2], aT0, aT1, aT2, W, P0, P1, P2);
    for (int w = 0; w < nwrt; w++) {
        const double *dxw = dx + (size_t)w * nunk;
        if ((rc = mbl_dae_deriv_jac_dir(d, pt, dxw, wrt[w], dJ, st))) goto done;
        spen_blocks(c, dJ, dB);
        if ((rc = mbl_dae_deriv_states(d, pt, dxw, wrt[w], Sq, dSq, st))) goto done;
        spen_states(n, m, ns, dSq, dB);
        /* dT0 = -B^-1 dB T0; dT1 = -B^-1 (dB1 T0 + B1 dT0 + dB T1);
         * dT2 = -B^-1 (dB2 T0 + B2 dT0 + 2 dB1 T1 + 2 B1 dT1 + dB T2) */
        mm(n, ns, n, -1, dB->B, n, T0, n, 0, dT0, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT0, n, st))) goto done;
        mm(n, ns, n, -1, dB->B1, n, T0, n, 0, dT1, n);
        mm(n, ns, n, -1, B->B1, n, dT0, n, 1, dT1, n);
        mm(n, ns, n, -1, dB->B, n, T1, n, 1, dT1, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT1, n, st))) goto done;
        mm(n, ns, n, -1, dB->B2, n, T0, n, 0, dT2, n);
        mm(n, ns, n, -1, B->B2, n, dT0, n, 1, dT2, n);
        mm(n, ns, n, -2, dB->B1, n, T1, n, 1, dT2, n);
        mm(n, ns, n, -2, B->B1, n, dT1, n, 1, dT2, n);
        mm(n, ns, n, -1, dB->B, n, T2, n, 1, dT2, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT2, n, st))) goto done;
        memcpy(sp->dT0 + nsz * w, dT0, nsz * sizeof *dT0);
        double *D0 = dP + 3 * NN * w, *D1 = D0 + NN, *D2 = D1 + NN;
        memset(D0, 0, NN * sizeof *D0), memset(D1, 0, NN * sizeof *D1), memset(D2, 0, NN * sizeof *D2);
        /* the product rule: the blocks' derivatives with T, then the blocks with T's derivatives */
        spen_fill(n, m, k, ns, dB, T0, T1, T2, 1, D0, D1, D2, 1);
        spen_fill(n, m, k, ns, B, dT0, dT1, dT2, 1, D0, D1, D2, 0);
    }
done:
    mbla_dlu_free(lu);
    mbl_free(buf);
    return rc;
}
