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
 * motion R_vdot dq'' + R_v dq' + R_q dq + R_lambda dlambda = 0 become, over z = [dS; dlambda]:
 *
 *   Q2 = [R_vdot T0, 0],  Q1 = [2 R_vdot T1 + R_v T0, 0],
 *   Q0 = [R_vdot T2 + R_v T1 + R_q T0, R_lambda],
 *
 * n x n (ns = n - m states), and their total derivatives along a parameter follow by the product
 * rule from those of J (mbl_dae_deriv_jac_dir) and of the states' Jacobians
 * (mbl_dae_deriv_states). Holonomic models whose states number n - m (no non-holonomic
 * constraints, ODE states or implicit variables). */
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

/* Rows of the dense Jacobian values vals (model pattern) into the n x n blocks: R2, R1, R0 (EOM
 * rows vs vdot, v, q), RL (n x m, EOM vs lambda), and the n x n matrices B, B1, B2 whose first m
 * rows are Phi_q, Phi'_q, Phi''_q (the rest left to the states) */
static void spen_blocks(const ctx *c, const double *vals, double *R2, double *R1, double *R0, double *RL, double *B,
                        double *B1, double *B2)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m;
    memset(R2, 0, (size_t)n * n * sizeof *R2), memset(R1, 0, (size_t)n * n * sizeof *R1);
    memset(R0, 0, (size_t)n * n * sizeof *R0), memset(RL, 0, (size_t)n * (m ? m : 1) * sizeof *RL);
    memset(B, 0, (size_t)n * n * sizeof *B), memset(B1, 0, (size_t)n * n * sizeof *B1);
    memset(B2, 0, (size_t)n * n * sizeof *B2);
    for (int e = 0; e < L->jnz; e++) {
        int r = L->jrow[e], q = L->jcol[e];
        double v = vals[e];
        int cq = q - L->col0[MBL_DAE_Q], cv = q - L->col0[MBL_DAE_V], ca = q - L->col0[MBL_DAE_VDOT],
            cl = q - L->col0[MBL_DAE_LAMBDA];
        if (r < L->row0[MBL_DAE_EOM + 1]) {
            int i = r - L->row0[MBL_DAE_EOM];
            if (ca >= 0 && ca < n) R2[i + (size_t)ca * n] += v;
            else if (cv >= 0 && cv < n) R1[i + (size_t)cv * n] += v;
            else if (cq >= 0 && cq < n) R0[i + (size_t)cq * n] += v;
            else if (cl >= 0 && cl < m) RL[i + (size_t)cl * n] += v;
        } else if (cq >= 0 && cq < n) {
            if (r >= L->row0[MBL_DAE_PHI] && r < L->row0[MBL_DAE_PHI + 1]) B[(r - L->row0[MBL_DAE_PHI]) + (size_t)cq * n] += v;
            else if (r >= L->row0[MBL_DAE_PHID] && r < L->row0[MBL_DAE_PHID + 1])
                B1[(r - L->row0[MBL_DAE_PHID]) + (size_t)cq * n] += v;
            else if (r >= L->row0[MBL_DAE_PHIDD] && r < L->row0[MBL_DAE_PHIDD + 1])
                B2[(r - L->row0[MBL_DAE_PHIDD]) + (size_t)cq * n] += v;
        }
    }
}

/* The states' rows of B, B1, B2 from Sq (3 ns x n) */
static void spen_states(int n, int m, int ns, const double *Sq, double *B, double *B1, double *B2)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ns; i++) {
            B[m + i + (size_t)j * n] = Sq[i + (size_t)j * 3 * ns];
            B1[m + i + (size_t)j * n] = Sq[ns + i + (size_t)j * 3 * ns];
            B2[m + i + (size_t)j * n] = Sq[2 * ns + i + (size_t)j * 3 * ns];
        }
}

/* Build Q0, Q1, Q2 (into P0, P1, P2, now n x n) and their derivatives (into dP) */
int study_sens_spen_build(const ctx *c, const mbl_dae_deriv *d, const mbl_point *pt, const double *Jv, const double *dx,
                          const int *wrt, int nwrt, double *P0, double *P1, double *P2, double *dP, spen *sp,
                          mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m, ns = n - m, rc = 0, nunk = L->nunk;
    size_t nn = (size_t)n * n, nm = (size_t)n * (m ? m : 1), nsz = (size_t)n * ns;
    mbla_dlu *lu = NULL;
    /* 14 n x n, 2 n x m, 6 n x ns (T1, T2, dT0, dT1, dT2, X), Sq and dSq (3 ns x n each), dJ */
    double *buf = mbl_alloc_array(14 * nn + 2 * nm + 6 * nsz + 6 * (size_t)ns * n + (size_t)L->jnz + 1, sizeof *buf);
    sp->n = n, sp->m = m, sp->ns = ns;
    sp->T0 = mbl_alloc_array(nsz + 1, sizeof *sp->T0);
    sp->dT0 = mbl_alloc_array(nsz * (size_t)(nwrt ? nwrt : 1) + 1, sizeof *sp->dT0);
    if (!buf || !sp->T0 || !sp->dT0) {
        mbl_free(buf);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double *R2 = buf, *R1 = R2 + nn, *R0 = R1 + nn, *B = R0 + nn, *B1 = B + nn, *B2 = B1 + nn;
    double *dR2 = B2 + nn, *dR1 = dR2 + nn, *dR0 = dR1 + nn, *dB = dR0 + nn, *dB1 = dB + nn, *dB2 = dB1 + nn;
    double *W1 = dB2 + nn, *W2 = W1 + nn; /* n x n scratch */
    double *RL = W2 + nn, *dRL = RL + nm;
    double *T0 = sp->T0, *T1 = dRL + nm, *T2 = T1 + nsz, *dT0 = T2 + nsz, *dT1 = dT0 + nsz, *dT2 = dT1 + nsz;
    double *X = dT2 + nsz; /* n x ns scratch */
    double *Sq = X + nsz, *dSq = Sq + 3 * (size_t)ns * n, *dJ = dSq + 3 * (size_t)ns * n;
    spen_blocks(c, Jv, R2, R1, R0, RL, B, B1, B2);
    rc = mbl_dae_deriv_states(d, pt, NULL, -1, Sq, NULL, st);
    if (rc) goto done;
    spen_states(n, m, ns, Sq, B, B1, B2);
    rc = mbla_dlu_new(n, B, n, &lu, st);
    if (rc) {
        mbl_error_prefix(st, "sensitivities: [Phi_q; the states' Jacobian] is singular (the states do not parametrize "
                             "the positions)");
        goto done;
    }
    /* T0 = B^-1 [0; I], T1 = -B^-1 B1 T0, T2 = -B^-1 (B2 T0 + 2 B1 T1) */
    memset(T0, 0, nsz * sizeof *T0);
    for (int j = 0; j < ns; j++) T0[m + j + (size_t)j * n] = 1;
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T0, n, st))) goto done;
    mm(n, ns, n, -1, B1, n, T0, n, 0, T1, n);
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T1, n, st))) goto done;
    mm(n, ns, n, -1, B2, n, T0, n, 0, T2, n);
    mm(n, ns, n, -2, B1, n, T1, n, 1, T2, n);
    if ((rc = mbla_dlu_solve(lu, 'N', ns, T2, n, st))) goto done;
    /* Q2 = [R2 T0, 0], Q1 = [2 R2 T1 + R1 T0, 0], Q0 = [R2 T2 + R1 T1 + R0 T0, RL] */
    memset(P0, 0, nn * sizeof *P0), memset(P1, 0, nn * sizeof *P1), memset(P2, 0, nn * sizeof *P2);
    mm(n, ns, n, 1, R2, n, T0, n, 0, P2, n);
    mm(n, ns, n, 2, R2, n, T1, n, 0, P1, n);
    mm(n, ns, n, 1, R1, n, T0, n, 1, P1, n);
    mm(n, ns, n, 1, R2, n, T2, n, 0, P0, n);
    mm(n, ns, n, 1, R1, n, T1, n, 1, P0, n);
    mm(n, ns, n, 1, R0, n, T0, n, 1, P0, n);
    if (m) memcpy(P0 + nsz, RL, nm * sizeof *P0);
    /* entries within their own rounding error are zero: each is a sum of nt products of n terms,
     * so rounding leaves up to about nt n eps (|R| |T|) where the exact value is zero (a cyclic
     * coordinate's column of Q0, R_vdot T2 + R_v T1 + R_q T0, cancels to 1e-15 at a fast spin,
     * and that noise splits its double zero into +-3e-6i, as the BLAS kernel rounds) */
    {
        double *Pk[3] = {P0, P1, P2};
        const double *Rk[3] = {R2, R1, R0};
        for (int k = 0; k < 3; k++) {
            const double *Tk[3] = {k == 0 ? T2 : k == 1 ? T1 : T0, k == 0 ? T1 : T0, T0};
            int nt = 3 - k;
            memset(W1, 0, nn * sizeof *W1);
            for (int q = 0; q < nt; q++) {
                for (size_t e = 0; e < nn; e++) W2[e] = fabs(Rk[q][e]);
                for (size_t e = 0; e < nsz; e++) X[e] = fabs(Tk[q][e]);
                mm(n, ns, n, k == 1 && q == 0 ? 2 : 1, W2, n, X, n, 1, W1, n);
            }
            for (size_t e = 0; e < nsz; e++)
                if (fabs(Pk[k][e]) <= SPEN_ROUND * nt * n * DBL_EPSILON * W1[e]) Pk[k][e] = 0;
        }
    }
    for (int w = 0; w < nwrt; w++) {
        const double *dxw = dx + (size_t)w * nunk;
        if ((rc = mbl_dae_deriv_jac_dir(d, pt, dxw, wrt[w], dJ, st))) goto done;
        spen_blocks(c, dJ, dR2, dR1, dR0, dRL, dB, dB1, dB2);
        if ((rc = mbl_dae_deriv_states(d, pt, dxw, wrt[w], Sq, dSq, st))) goto done;
        spen_states(n, m, ns, dSq, dB, dB1, dB2);
        /* dT0 = -B^-1 dB T0; dT1 = -B^-1 (dB1 T0 + B1 dT0 + dB T1);
         * dT2 = -B^-1 (dB2 T0 + B2 dT0 + 2 dB1 T1 + 2 B1 dT1 + dB T2) */
        mm(n, ns, n, -1, dB, n, T0, n, 0, dT0, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT0, n, st))) goto done;
        mm(n, ns, n, -1, dB1, n, T0, n, 0, dT1, n);
        mm(n, ns, n, -1, B1, n, dT0, n, 1, dT1, n);
        mm(n, ns, n, -1, dB, n, T1, n, 1, dT1, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT1, n, st))) goto done;
        mm(n, ns, n, -1, dB2, n, T0, n, 0, dT2, n);
        mm(n, ns, n, -1, B2, n, dT0, n, 1, dT2, n);
        mm(n, ns, n, -2, dB1, n, T1, n, 1, dT2, n);
        mm(n, ns, n, -2, B1, n, dT1, n, 1, dT2, n);
        mm(n, ns, n, -1, dB, n, T2, n, 1, dT2, n);
        if ((rc = mbla_dlu_solve(lu, 'N', ns, dT2, n, st))) goto done;
        memcpy(sp->dT0 + nsz * w, dT0, nsz * sizeof *dT0);
        double *D0 = dP + 3 * nn * w, *D1 = D0 + nn, *D2 = D1 + nn;
        memset(D0, 0, nn * sizeof *D0), memset(D1, 0, nn * sizeof *D1), memset(D2, 0, nn * sizeof *D2);
        mm(n, ns, n, 1, dR2, n, T0, n, 0, D2, n);
        mm(n, ns, n, 1, R2, n, dT0, n, 1, D2, n);
        mm(n, ns, n, 2, dR2, n, T1, n, 0, D1, n);
        mm(n, ns, n, 2, R2, n, dT1, n, 1, D1, n);
        mm(n, ns, n, 1, dR1, n, T0, n, 1, D1, n);
        mm(n, ns, n, 1, R1, n, dT0, n, 1, D1, n);
        mm(n, ns, n, 1, dR2, n, T2, n, 0, D0, n);
        mm(n, ns, n, 1, R2, n, dT2, n, 1, D0, n);
        mm(n, ns, n, 1, dR1, n, T1, n, 1, D0, n);
        mm(n, ns, n, 1, R1, n, dT1, n, 1, D0, n);
        mm(n, ns, n, 1, dR0, n, T0, n, 1, D0, n);
        mm(n, ns, n, 1, R0, n, dT0, n, 1, D0, n);
        if (m) memcpy(D0 + nsz, dRL, nm * sizeof *D0);
    }
done:
    mbla_dlu_free(lu);
    mbl_free(buf);
    return rc;
}
