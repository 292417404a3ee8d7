/* `penalty` on large models: the penalty ODE of src/lin/penalty.c (source 001 Sec. 3.3, Eq. 11-15)
 * assembled sparse and solved for part of its spectrum (issue 31, item 4).
 *
 * M_p = M + alpha Phi_q^T Phi_q, C_p = R_v + alpha Phi_q^T (dPhi''/dv + 2 xi omega Phi_q) and
 * K_p = R_q + alpha Phi_q^T (dPhi''/dq + 2 xi omega dPhi'/dq + omega^2 Phi_q) are formed in CSC
 * straight from the triplets of the exact residual Jacobian (no n x n array), and the first-order
 * pencil A = [0 I; -K_p -C_p], E = [I 0; 0 M_p] (order 2n) goes to ARPACK shift-invert, in the
 * shifted variables of pen_sp_pencil (KLU then factors the n x n Q(sigma) = K_p + sigma C_p +
 * sigma^2 M_p alone), with Newton refinement of each pair through the n x n quadratic Q(lambda)
 * (mbla_eigs_refine_quad; the first-order pencil's LU filled at n = 10^5). The penalty pencil is damped
 * whatever the model (C_p holds 2 xi omega alpha Phi_q^T Phi_q), so the symmetric Lanczos path of
 * the saddle-point pencil does not apply; the general (nonsymmetric) driver does.
 *
 * The 2m spurious eigenvalues (near the roots of s^2 + 2 xi omega s + omega^2: -omega at the
 * defaults) may lie nearer the shift than the wanted physical ones, so ARPACK is asked for more:
 * first min(k + 2m, 2k + PEN_SP_GUARD), doubled (up to k + 2m, which always holds k physical ones)
 * while fewer than k of them are physical, as far as mem_budget allows. An eigenpair is spurious when
 * its eigenvalue moves with the penalty's omega: relative sensitivity above PEN_SP_SPLIT
 * (pen_sp_sens); the dense path ranks the whole spectrum by a violation score instead, which a
 * partial one cannot. The k physical ones nearest the shift are kept and refined (pen_sp_refine).
 *
 * The error estimate replaces the dense path's three extra QZ runs with refinements from the pairs
 * at hand (no dense work, no new ARPACK run): Newton on the pencil at alpha / ratio started from each
 * pair gives s(alpha / ratio), extrapolated as in the dense path, PEN_SAFETY |s(alpha) - s(alpha /
 * ratio)| / (ratio - 1); Newton at alpha (1 + d) for the same two d samples the rounding of the
 * formation (M + alpha Phi_q^T Phi_q) and of the refinement, 2 times the distance; the floor
 * eps alpha |Phi_q|_1^2 / |M|_1 max|s| as on the dense path, and 4 eps |s|. A pair that the
 * refinement returns as given (it may have converged to a neighbour) gets an infinite estimate,
 * unless it is an eigenpair there already (backward error <= 4 eps). Holonomic constraints at a
 * regular point at rest only; other requests take the dense path (lin_penalty_path). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* eigenvalues asked of ARPACK beyond 2k on the first try (spurious ones near the shift) */
#define PEN_SP_GUARD 8
/* The split of physical and spurious eigenpairs by the eigenvalue's relative sensitivity to the
 * penalty's omega (pen_sp_sens): above PEN_SP_SPLIT spurious. A spurious eigenvalue is a root of the
 * penalty's mass-spring-damper, so it scales with omega (sensitivity about 1); a physical one is the
 * constrained system's to O(1/alpha). Measured at alpha = 1e6: physical <= 2.1e-4 (the flexible
 * pendulum, dae and beam bodies), spurious >= 0.80 (the four-bar chain, N = 2e4). The penalty's share
 * of the mass, alpha |Phi_q dq|^2 / (dq^H M dq + alpha |Phi_q dq|^2), the first split (at 0.5), is
 * not: on a long closed chain Phi_q has small singular values s_i, and the penalty holds little
 * of the mass of the soft spurious modes whose eigenvalues (-0.66 +- 2.78i at N = 2e4, share 0.066;
 * -0.11 +- 1.67i at N = 5e4, share 0.011) come down among the physical ones as N grows. Neither is
 * the dense path's violation score (|Phi_q dq| + |Phi_q dv + dPhi'/dq dq|) / (|Phi_q|_1 (|dq| + |dv|)),
 * which has no fixed split: on the beam-body pendulum the spurious ones scored 1.2e-2 at n = 72 and
 * 6.8e-4 at n = 24,012, below the lowest modes' 1e-4 at n = 72. A sensitivity outside
 * [PEN_SP_WARN_LO, PEN_SP_WARN_HI] is clear; one inside puts a WARNING in the notes. Below
 * PEN_SP_SENS_FLOOR omega, |s| is replaced by it (an eigenvalue at 0). */
#define PEN_SP_SPLIT 0.1
#define PEN_SP_WARN_LO 0.01
#define PEN_SP_WARN_HI 0.5
#define PEN_SP_SENS_FLOOR 1e-3
/* ARPACK's relative accuracy of the Ritz values (as SPARSE_ARPACK_TOL of the sparse pencil): the
 * refinement takes the kept pairs to the accuracy of the pencil's eigenvalues */
#define PEN_SP_ARPACK_TOL 1e-8
/* the relative level at which mbla_eigs_refine_quad stops (4 eps), a floor of every estimate */
#define PEN_SP_REFINE_EPS 4.0
/* as src/lin/penalty.c */
#define PEN_SP_SAFETY 2.0
#define PEN_SP_SAMPLE_SAFETY 2.0
static const double pen_sp_samples[] = {3.0 / 1024.0, -3.0 / 2048.0};

/* The Jacobian blocks the pencil is made of (CSC). */
typedef struct pen_sp {
    int n, m;
    mbla_csc *M, *Rv, *Rq, *Pq, *Pdq, *Pddv, *Pddq;
    /* general penalty matrices (src/lin/penalty_mats.c; Th == NULL: the scalar form): Xh = Xi / alpha
     * (NULL: I), Theta, Omega (m x m); xnorm = |Xh|_1 (1 without Xi), omr the frequency scale of the
     * sensitivity's floor (sqrt |Omega|_1 with Omega, else omega) */
    mbla_csc *Xh, *Th, *Om;
    double xnorm, omr;
} pen_sp;

static void pen_sp_free(pen_sp *S)
{
    mbla_csc_free(S->M), mbla_csc_free(S->Rv), mbla_csc_free(S->Rq), mbla_csc_free(S->Pq);
    mbla_csc_free(S->Pdq), mbla_csc_free(S->Pddv), mbla_csc_free(S->Pddq);
    mbla_csc_free(S->Xh), mbla_csc_free(S->Th), mbla_csc_free(S->Om);
    memset(S, 0, sizeof *S);
}

/* S->Xh, Th, Om, xnorm, omr of opt's general matrices (lin_pen_check, lin_pen_dense) */
static int pen_sp_mats(pen_sp *S, const mbl_lin_options *opt, mbl_status *st)
{
    int m = S->m, rc = lin_pen_check(opt, m, st);
    size_t mm = (size_t)m * m;
    S->xnorm = 1.0, S->omr = opt->pen_omega;
    if (rc || !lin_pen_general(opt)) return rc;
    double *X = mbl_calloc(3 * mm + 1, sizeof *X);
    if (!X) return mbl_error(st, MBL_ENOMEM, "out of memory");
    lin_pen_dense(opt, m, X, X + mm, X + 2 * mm);
    if (opt->pen_Xi) {
        S->xnorm = mbla_norm1(m, m, X, m);
        rc = mbla_csc_from_dense(m, m, X, m, 0.0, &S->Xh, st);
    }
    if (opt->pen_Omega) S->omr = sqrt(mbla_norm1(m, m, X + 2 * mm, m));
    if (!rc) rc = mbla_csc_from_dense(m, m, X + mm, m, 0.0, &S->Th, st);
    if (!rc) rc = mbla_csc_from_dense(m, m, X + 2 * mm, m, 0.0, &S->Om, st);
    mbl_free(X);
    return rc;
}

/* rows [r0, r1) x unknown block cb of the Jacobian (values val), CSC (duplicates summed) */
static int blk_csc(const mbl_model *md, const double *val, int r0, int r1, int cb, mbla_csc **out, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    const mbl_sjac *J = &mv->jac;
    int c0 = mv->blk0[cb], c1 = mv->blk0[cb + 1], nz = 0;
    for (int p = 0; p < J->nz; p++)
        if (J->row[p] >= r0 && J->row[p] < r1 && J->col[p] >= c0 && J->col[p] < c1) nz++;
    int *ti = mbl_alloc_array((size_t)nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)nz + 1, sizeof *tx);
    int rc = !ti || !tj || !tx ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    for (int p = 0, a = 0; !rc && p < J->nz; p++) {
        int r = J->row[p], c = J->col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) ti[a] = r - r0, tj[a] = c - c0, tx[a++] = val[p];
    }
    if (!rc) rc = mbla_csc_from_triplets(r1 - r0, c1 - c0, nz, ti, tj, tx, NULL, out, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

static int pen_sp_init(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, pen_sp *S,
                       mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_eval ev;
    memset(S, 0, sizeof *S);
    S->n = mv->n, S->m = mv->m;
    int rc = lin_eval_init(md, &ev, st);
    if (rc) return rc;
    rc = lin_eval_at(md, pt, &ev, st);
    int e0 = mv->row0[MBL_ROW_EOM], e1 = e0 + mv->n, p0 = mv->row0[MBL_ROW_PHI], v0 = mv->row0[MBL_ROW_PHID];
    int d0 = mv->row0[MBL_ROW_PHIDD], m = mv->m;
    if (!rc) rc = blk_csc(md, ev.jac, e0, e1, MBL_BLK_A, &S->M, st);
    if (!rc) rc = blk_csc(md, ev.jac, e0, e1, MBL_BLK_V, &S->Rv, st);
    if (!rc) rc = blk_csc(md, ev.jac, e0, e1, MBL_BLK_Q, &S->Rq, st);
    if (!rc) rc = blk_csc(md, ev.jac, p0, p0 + m, MBL_BLK_Q, &S->Pq, st);
    if (!rc) rc = blk_csc(md, ev.jac, v0, v0 + m, MBL_BLK_Q, &S->Pdq, st);
    if (!rc) rc = blk_csc(md, ev.jac, d0, d0 + m, MBL_BLK_V, &S->Pddv, st);
    if (!rc) rc = blk_csc(md, ev.jac, d0, d0 + m, MBL_BLK_Q, &S->Pddq, st);
    lin_eval_free(&ev);
    if (!rc) rc = pen_sp_mats(S, opt, st);
    if (rc) pen_sp_free(S);
    return rc;
}

/* X = R + alpha Phi_q^T (G1 + c2 G2 + c3 G3) (G2, G3 may be NULL) */
static int pen_term(const mbla_csc *PqT, const mbla_csc *R, double alpha, const mbla_csc *G1,
                    double c2, const mbla_csc *G2, double c3, const mbla_csc *G3, mbla_csc **X, mbl_status *st)
{
    mbla_csc *G = NULL, *T = NULL, *P = NULL;
    int rc = mbla_csc_copy(G1, &G, st);
    if (!rc && G2) {
        rc = mbla_csc_add(1.0, G, c2, G2, &T, st);
        mbla_csc_free(G), G = T, T = NULL;
    }
    if (!rc && G3) {
        rc = mbla_csc_add(1.0, G, c3, G3, &T, st);
        mbla_csc_free(G), G = T, T = NULL;
    }
    if (!rc) rc = mbla_csc_matmul(PqT, G, &P, st);
    if (!rc) rc = mbla_csc_add(1.0, R, alpha, P, X, st);
    mbla_csc_free(G), mbla_csc_free(P);
    return rc;
}

/* X = R + alpha Phi_q^T Xh (G1 + T2 G2 + T3 G3) (general matrices; Xh NULL: I; T3 may be NULL) */
static int pen_term_mat(const mbla_csc *PqT, const mbla_csc *R, double alpha, const mbla_csc *Xh, const mbla_csc *G1,
                        const mbla_csc *T2, const mbla_csc *G2, const mbla_csc *T3, const mbla_csc *G3, mbla_csc **X,
                        mbl_status *st)
{
    mbla_csc *G = NULL, *T = NULL, *U = NULL, *P = NULL;
    int rc = mbla_csc_copy(G1, &G, st);
    for (int t = 0; t < 2 && !rc; t++) {
        const mbla_csc *C = t ? T3 : T2, *H = t ? G3 : G2;
        if (!C) continue;
        rc = mbla_csc_matmul(C, H, &U, st);
        if (!rc) rc = mbla_csc_add(1.0, G, 1.0, U, &T, st);
        mbla_csc_free(G), mbla_csc_free(U), G = T, T = U = NULL;
    }
    if (!rc && Xh) {
        rc = mbla_csc_matmul(Xh, G, &T, st);
        mbla_csc_free(G), G = T, T = NULL;
    }
    if (!rc) rc = mbla_csc_matmul(PqT, G, &P, st);
    if (!rc) rc = mbla_csc_add(1.0, R, alpha, P, X, st);
    mbla_csc_free(G), mbla_csc_free(P);
    return rc;
}

/* triplets of block (r0, c0) += f X into (ti, tj, tx) from position *a */
static void put_blk(const mbla_csc *X, int r0, int c0, double f, int *ti, int *tj, double *tx, int *a)
{
    for (int j = 0; j < X->n; j++)
        for (int q = X->p[j]; q < X->p[j + 1]; q++) ti[*a] = r0 + X->i[q], tj[*a] = c0 + j, tx[(*a)++] = f * X->x[q];
}

/* The coefficients of the penalty ODE at alpha, M_p, C_p, K_p (the quadratic Q(lambda) = K_p +
 * lambda C_p + lambda^2 M_p of the first-order pencil A = [0 I; -K_p -C_p], E = [I 0; 0 M_p]) */
typedef struct pen_quad {
    mbla_csc *M, *C, *K;
} pen_quad;

static void pen_quad_free(pen_quad *Q)
{
    mbla_csc_free(Q->M), mbla_csc_free(Q->C), mbla_csc_free(Q->K);
    Q->M = Q->C = Q->K = NULL;
}

static int pen_sp_quad(const pen_sp *S, double alpha, double xi, double om, pen_quad *Q, mbl_status *st)
{
    mbla_csc *PqT = NULL;
    Q->M = Q->C = Q->K = NULL;
    int rc = mbla_csc_transpose(S->Pq, &PqT, st);
    if (!rc && S->Th) { /* general matrices: M + alpha Phi_q^T Xh Phi_q, ... (src/lin/penalty_mats.c) */
        rc = pen_term_mat(PqT, S->M, alpha, S->Xh, S->Pq, NULL, NULL, NULL, NULL, &Q->M, st);
        if (!rc) rc = pen_term_mat(PqT, S->Rv, alpha, S->Xh, S->Pddv, S->Th, S->Pq, NULL, NULL, &Q->C, st);
        if (!rc) rc = pen_term_mat(PqT, S->Rq, alpha, S->Xh, S->Pddq, S->Th, S->Pdq, S->Om, S->Pq, &Q->K, st);
        goto done;
    }
    if (!rc) rc = pen_term(PqT, S->M, alpha, S->Pq, 0, NULL, 0, NULL, &Q->M, st);
    if (!rc) rc = pen_term(PqT, S->Rv, alpha, S->Pddv, 2 * xi * om, S->Pq, 0, NULL, &Q->C, st);
    if (!rc) rc = pen_term(PqT, S->Rq, alpha, S->Pddq, 2 * xi * om, S->Pdq, om * om, S->Pq, &Q->K, st);
done:
    mbla_csc_free(PqT);
    if (rc) pen_quad_free(Q);
    return rc;
}

/* The pencil A = [0 I; -Kp -Cp], E = [I 0; 0 Mp] of the penalty ODE (order 2n) shifted by sigma in
 * the variables y = [w; q], v = sigma q + w:
 *     As = [I 0; -(Cp + sigma Mp) -(Kp + sigma Cp + sigma^2 Mp)],  Es = [0 I; Mp sigma Mp]
 * (As - mu Es = (A - (sigma + mu) E) T, T: y -> x): its eigenvalues are lambda - sigma, and As is
 * block lower triangular with I and the n x n quadratic pencil Q(sigma) on its diagonal, so KLU's
 * block triangular form factors Q(sigma) alone. Factoring A - sigma E itself, whose diagonal block
 * -sigma I is tiny beside the identity next to it, took off-diagonal pivots that wrecked the
 * fill-reducing order: 9.6 GB and 243 s at n = 24,012 (the beam-body pendulum, 4000 elements). */
static int pen_sp_pencil(const pen_quad *P, double sigma, mbla_csc **As, mbla_csc **Es, mbl_status *st)
{
    int n = P->M->n, rc;
    mbla_csc *G = NULL, *Q1 = NULL, *Q = NULL;
    int *ti = NULL, *tj = NULL;
    double *tx = NULL;
    *As = *Es = NULL;
    rc = mbla_csc_add(1.0, P->C, sigma, P->M, &G, st);
    if (!rc) rc = mbla_csc_add(1.0, P->K, sigma, P->C, &Q1, st);
    if (!rc) rc = mbla_csc_add(1.0, Q1, sigma * sigma, P->M, &Q, st);
    if (rc) goto done;
    size_t cap = (size_t)2 * mbla_csc_nnz(P->M) + mbla_csc_nnz(G) + mbla_csc_nnz(Q) + (size_t)2 * n + 1;
    ti = mbl_alloc_array(cap, sizeof *ti), tj = mbl_alloc_array(cap, sizeof *tj), tx = mbl_alloc_array(cap, sizeof *tx);
    if (!ti || !tj || !tx) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    int a = 0;
    for (int i = 0; i < n; i++) ti[a] = i, tj[a] = i, tx[a++] = 1.0;
    put_blk(G, n, 0, -1.0, ti, tj, tx, &a);
    put_blk(Q, n, n, -1.0, ti, tj, tx, &a);
    rc = mbla_csc_from_triplets(2 * n, 2 * n, a, ti, tj, tx, NULL, As, st);
    a = 0;
    for (int i = 0; i < n; i++) ti[a] = i, tj[a] = n + i, tx[a++] = 1.0;
    put_blk(P->M, n, 0, 1.0, ti, tj, tx, &a);
    put_blk(P->M, n, n, sigma, ti, tj, tx, &a);
    if (!rc) rc = mbla_csc_from_triplets(2 * n, 2 * n, a, ti, tj, tx, NULL, Es, st);
done:
    if (rc) mbla_csc_free(*As), mbla_csc_free(*Es), *As = *Es = NULL;
    mbla_csc_free(G), mbla_csc_free(Q1), mbla_csc_free(Q);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

/* Newton refinement of k pairs of the penalty pencil (Q) through the n x n quadratic
 * (mbla_eigs_refine_quad): V (ld 2n) holds x = [q; lambda q] of unit 2-norm on entry and return;
 * only q is refined, and lambda q is formed from the result. Refining on the first-order pencil of
 * order 2n (mbla_eigs_refine) filled its complex LU on the beam-body pendulum: killed at 10.7 GB at
 * n = 100,002. */
static int pen_sp_refine(const pen_quad *Q, int k, double *re, double *im, double *Vr, double *Vi, double *berr,
                         int *iters, mbl_status *st)
{
    int n = Q->M->n, nd = 2 * n;
    int rc = mbla_eigs_refine_quad(Q->K, Q->C, Q->M, k, re, im, Vr, Vi, nd, 0, berr, iters, st);
    for (int j = 0; !rc && j < k; j++) {
        double *xr = Vr + (size_t)j * nd, *xi = Vi + (size_t)j * nd, lr = re[j], li = im[j];
        double s = 1.0 / sqrt(1.0 + lr * lr + li * li); /* x has unit 2-norm: [x; lambda x] gets 1 */
        for (int c = 0; c < n; c++) {
            double a = xr[c] * s, b = xi[c] * s;
            xr[c] = a, xi[c] = b, xr[n + c] = lr * a - li * b, xi[n + c] = lr * b + li * a;
        }
    }
    return rc;
}

/* x^T A x (no conjugate) of the complex x = xr + i xi (A n x n, CSC; w: work of n) into (*hr, *hi) */
static void xtax(const mbla_csc *A, const double *xr, const double *xi, double *w, double *hr, double *hi)
{
    int n = A->n;
    double rr = 0, ii = 0, ri = 0, ir = 0;
    mbla_csc_gemv(A, 1.0, xr, 0.0, w, NULL);
    for (int c = 0; c < n; c++) rr += xr[c] * w[c], ir += xi[c] * w[c];
    mbla_csc_gemv(A, 1.0, xi, 0.0, w, NULL);
    for (int c = 0; c < n; c++) ii += xi[c] * w[c], ri += xr[c] * w[c];
    *hr = rr - ii, *hi = ri + ir;
}

/* The relative sensitivity of the eigenvalue s (vector x = xr + i xi, its q part) to the penalty's
 * omega, omega |ds/domega| / max(|s|, PEN_SP_SENS_FLOOR omega), from the first-order perturbation
 * of Q(s) x = 0 with x^T as the left vector (exact when K_p, C_p, M_p are symmetric, the model at
 * rest without follower or gyroscopic terms; an estimate otherwise):
 * ds/domega = -x^T dQ/domega x / x^T Q'(s) x, dQ/domega = alpha Phi_q^T ((2 xi s + 2 omega) Phi_q +
 * 2 xi dPhi'/dq), Q'(s) = 2 s M_p + C_p. A spurious eigenvalue is a root of the penalty's
 * mass-spring-damper and scales with omega (about 1: at -omega for a stiff constraint direction,
 * near -xi omega b +- i omega sqrt(b), b = alpha s_i^2 / m_i, for a soft one, s_i a small singular
 * value of Phi_q); a physical one is the constrained system's to O(1/alpha). With general matrices
 * (S->Th) the same scaling of the penalty's frequencies, Theta -> t Theta, Omega -> t^2 Omega at t = 1:
 * t dQ/dt = alpha Phi_q^T Xh (Theta (s Phi_q + dPhi'/dq) + 2 Omega Phi_q) (the scalar form's omega d/domega),
 * and the floor PEN_SP_SENS_FLOOR S->omr. w: work of n + 8m. */
static double pen_sp_sens(const pen_sp *S, const pen_quad *Q, double alpha, double xi_, double om, double sr,
                          double si, const double *xr, const double *xi, double *w)
{
    int n = S->n, m = S->m;
    double *a = w + n, *b = a + m, *c = b + m, *d = c + m;
    double mr, mi, cr, ci;
    xtax(Q->M, xr, xi, w, &mr, &mi);
    xtax(Q->C, xr, xi, w, &cr, &ci);
    double qr = 2 * (sr * mr - si * mi) + cr, qi = 2 * (sr * mi + si * mr) + ci; /* x^T Q'(s) x */
    mbla_csc_gemv(S->Pq, 1.0, xr, 0.0, a, NULL), mbla_csc_gemv(S->Pq, 1.0, xi, 0.0, b, NULL);
    mbla_csc_gemv(S->Pdq, 1.0, xr, 0.0, c, NULL), mbla_csc_gemv(S->Pdq, 1.0, xi, 0.0, d, NULL);
    double ppr = 0, ppi = 0, pdr = 0, pdi = 0; /* (Phi_q x)^T Phi_q x, (Phi_q x)^T dPhi'/dq x */
    for (int r = 0; r < m; r++) {
        ppr += a[r] * a[r] - b[r] * b[r], ppi += 2 * a[r] * b[r];
        pdr += a[r] * c[r] - b[r] * d[r], pdi += a[r] * d[r] + b[r] * c[r];
    }
    if (S->Th) { /* u = Theta (s a + c) + 2 Omega a, l = Xh a (a = Phi_q x, c = dPhi'/dq x, complex) */
        double *ur = d + m, *ui = ur + m, *lr = ui + m, *li = lr + m, hr = 0, hi = 0;
        for (int r = 0; r < m; r++) lr[r] = sr * a[r] - si * b[r] + c[r], li[r] = sr * b[r] + si * a[r] + d[r];
        mbla_csc_gemv(S->Th, 1.0, lr, 0.0, ur, NULL), mbla_csc_gemv(S->Th, 1.0, li, 0.0, ui, NULL);
        mbla_csc_gemv(S->Om, 2.0, a, 1.0, ur, NULL), mbla_csc_gemv(S->Om, 2.0, b, 1.0, ui, NULL);
        if (S->Xh) mbla_csc_gemv(S->Xh, 1.0, a, 0.0, lr, NULL), mbla_csc_gemv(S->Xh, 1.0, b, 0.0, li, NULL);
        else memcpy(lr, a, (size_t)m * sizeof *lr), memcpy(li, b, (size_t)m * sizeof *li);
        for (int r = 0; r < m; r++) hr += lr[r] * ur[r] - li[r] * ui[r], hi += lr[r] * ui[r] + li[r] * ur[r];
        double den = hypot(qr, qi) * fmax(hypot(sr, si), PEN_SP_SENS_FLOOR * S->omr);
        return den > 0 ? alpha * hypot(hr, hi) / den : INFINITY;
    }
    double fr = 2 * xi_ * sr + 2 * om, fi = 2 * xi_ * si; /* 2 xi s + 2 omega */
    double gr = alpha * (fr * ppr - fi * ppi + 2 * xi_ * pdr), gi = alpha * (fr * ppi + fi * ppr + 2 * xi_ * pdi);
    double den = hypot(qr, qi) * fmax(hypot(sr, si), PEN_SP_SENS_FLOOR * om);
    return den > 0 ? om * hypot(gr, gi) / den : INFINITY;
}

int lin_penalty_path(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    const char *why = NULL;
    if (mv->k > 0) why = "non-holonomic constraints";
    else if (mv->ext) why = model_ext_features(md);
    else if (pt->rank_phi_q < mv->m) why = "a singular configuration (Phi_q loses rank)";
    else if (lin_point_moving(pt)) why = "a point with motion (its spectrum is taken in other coordinates)";
    else if (mv->n < 2) why = "fewer than 2 coordinates";
    else if (opt->shift_im != 0.0) why = "a complex shift (shift_im)";
    else if (opt->pen_equilibrium) why = "the penalty equilibrium (pen_equilibrium)";
    if (opt->partial == MBL_PARTIAL_NEVER) return 0;
    if (opt->partial == MBL_PARTIAL_ALWAYS) {
        if (why)
            return mbl_error(st, MBL_EARG,
                             "penalty: the partial spectrum (nev, the sparse penalty pencil) does not take %s: use the "
                             "dense penalty (no nev) or augmented",
                             why);
        /* nev asking for more than ARPACK gives on the pencil of order 2n (at most 2n - 2: no constraints,
         * every eigenvalue asked for): the whole spectrum, densely (as augmented). Its 2m spurious ones
         * need not fit beside them: they are asked for only while they lie nearer the shift
         * (lin_penalty_sparse), and a four-bar chain (m = n - 1) has its 2 physical ones at 1.3 rad/s
         * against the spurious ones at -omega (the dense QZ was taken there, and refused at n = 10^5). */
        int nphys = 2 * (mv->n - mv->m), want = opt->nev < nphys ? opt->nev : nphys;
        return want > 2 * mv->n - 2 ? 2 : 1;
    }
    return !why && 2 * mv->n > opt->dense_max;
}

/* The ka eigenvalues nearest the real shift sigma of the penalty pencil at alpha a: ARPACK on
 * (As, Es) (pen_sp_pencil) for those nearest 0, mapped back to lambda = sigma + mu and x = [q;
 * sigma q + w] (unit 2-norm), each with its sensitivity to omega (sh, pen_sp_sens); Q: the coefficients M_p, C_p,
 * K_p, kept for the refinement. Returns the number of physical ones, or minus the error. */
static int pen_sp_run(const pen_sp *S, const mbl_lin_options *opt, double a, int ka, double *re, double *im,
                      double *Vr, double *Vi, double *sh, double *w, pen_quad *Q, mbl_status *st)
{
    int n = S->n, nd = 2 * n, np = 0;
    double sigma = opt->shift;
    mbla_csc *As = NULL, *Es = NULL;
    int rc = pen_sp_quad(S, a, opt->pen_xi, opt->pen_omega, Q, st);
    if (!rc) rc = pen_sp_pencil(Q, sigma, &As, &Es, st);
    if (!rc) {
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        eo.tol = PEN_SP_ARPACK_TOL;
        const mbla_eigs_backend *eb = opt->eigs_backend;
        rc = eb ? eb->sinv(eb->ctx, As, Es, 0.0, 0.0, ka, &eo, re, im, Vr, Vi, nd, NULL, st)
                : mbla_eigs_sinv(As, Es, 0.0, 0.0, ka, &eo, re, im, Vr, Vi, nd, NULL, st);
    }
    for (int j = 0; !rc && j < ka; j++) {
        re[j] += sigma;
        double *yr = Vr + (size_t)j * nd, *yi = Vi + (size_t)j * nd, nx = 0;
        for (int c = 0; c < n; c++) { /* y = [w; q] -> x = [q; sigma q + w] */
            double wr = yr[c], wi = yi[c];
            yr[c] = yr[n + c], yi[c] = yi[n + c];
            yr[n + c] = sigma * yr[c] + wr, yi[n + c] = sigma * yi[c] + wi;
        }
        for (int c = 0; c < nd; c++) nx = hypot(nx, hypot(yr[c], yi[c]));
        for (int c = 0; nx > 0 && c < nd; c++) yr[c] /= nx, yi[c] /= nx;
        sh[j] = pen_sp_sens(S, Q, a, opt->pen_xi, opt->pen_omega, re[j], im[j], yr, yi, w);
        if (sh[j] <= PEN_SP_SPLIT) np++;
    }
    mbla_csc_free(As), mbla_csc_free(Es);
    return rc ? -rc : np;
}

/* Newton from the pairs (re, im, V) on the pencil at alpha a: the eigenvalues into wr, wi; their
 * distance to (re, im) times fac into err (max), an infinite one where the pair was returned as given */
static int pen_sp_rerun(const pen_sp *S, const mbl_lin_options *opt, double a, int k, const double *re,
                        const double *im, const double *Vr, const double *Vi, double fac, double *wr, double *wi,
                        double *Wr, double *Wi, int *iters, double *err, mbl_status *st)
{
    int nd = 2 * S->n;
    pen_quad Q;
    int rc = pen_sp_quad(S, a, opt->pen_xi, opt->pen_omega, &Q, st);
    if (rc) return rc;
    memcpy(wr, re, (size_t)k * sizeof *wr), memcpy(wi, im, (size_t)k * sizeof *wi);
    memcpy(Wr, Vr, (size_t)nd * k * sizeof *Wr), memcpy(Wi, Vi, (size_t)nd * k * sizeof *Wi);
    double *be = mbl_alloc_array((size_t)k + 1, sizeof *be);
    rc = be ? pen_sp_refine(&Q, k, wr, wi, Wr, Wi, be, iters, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    /* returned as given: valid when it is already an eigenpair there (no constraints: the same pencil) */
    for (int j = 0; !rc && j < k; j++)
        err[j] = fmax(err[j], iters[j] > 0 || be[j] <= PEN_SP_REFINE_EPS * DBL_EPSILON
                                  ? fac * hypot(wr[j] - re[j], wi[j] - im[j])
                                  : INFINITY);
    mbl_free(be);
    pen_quad_free(&Q);
    return rc;
}

/* The error estimate of the k physical pairs (see the opening comment) into sp->err; the largest. */
static int pen_sp_err(const pen_sp *S, const mbl_lin_options *opt, int k, const double *Vr, const double *Vi,
                      mbl_lin_spectrum *sp, double *emax, mbl_status *st)
{
    int nd = 2 * S->n, rc = 0;
    double a1 = opt->pen_alpha;
    double *wr = mbl_alloc_array((size_t)k + 1, sizeof *wr), *wi = mbl_alloc_array((size_t)k + 1, sizeof *wi);
    double *Wr = mbl_alloc_array((size_t)nd * k + 1, sizeof *Wr), *Wi = mbl_alloc_array((size_t)nd * k + 1, sizeof *Wi);
    int *it = mbl_alloc_array((size_t)k + 1, sizeof *it);
    if (!wr || !wi || !Wr || !Wi || !it) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < k; j++) sp->err[j] = 0;
    rc = pen_sp_rerun(S, opt, a1 / opt->pen_ratio, k, sp->re, sp->im, Vr, Vi, PEN_SP_SAFETY / (opt->pen_ratio - 1.0),
                      wr, wi, Wr, Wi, it, sp->err, st);
    for (size_t t = 0; !rc && t < sizeof pen_sp_samples / sizeof *pen_sp_samples; t++)
        rc = pen_sp_rerun(S, opt, a1 * (1.0 + pen_sp_samples[t]), k, sp->re, sp->im, Vr, Vi, PEN_SP_SAMPLE_SAFETY,
                          wr, wi, Wr, Wi, it, sp->err, st);
    if (rc) goto done;
    /* the rounding floor of the penalized pencil, as on the dense path */
    double smax = 1.0, nP = mbla_csc_norm1(S->Pq), nM = mbla_csc_norm1(S->M);
    for (int j = 0; j < k; j++) smax = fmax(smax, hypot(sp->re[j], sp->im[j]));
    double floor_ = nM > 0 ? DBL_EPSILON * (a1 * S->xnorm) * nP * nP / nM * smax : 0;
    /* and the refinement's own stopping level (a correction below 4 eps |lambda|): without
     * constraints the reruns repeat the same pencil and measure 0 */
    for (int j = 0; j < k; j++)
        sp->err[j] = fmax(sp->err[j], fmax(floor_, PEN_SP_REFINE_EPS * DBL_EPSILON * hypot(sp->re[j], sp->im[j])));
    /* a pair without an estimate (infinite: the refinement returned it as given) stays so, without
     * a disc of its own (lin_err_clusters) */
    rc = lin_err_clusters(k, sp->re, sp->im, NULL, sp->err, st);
    *emax = 0;
    for (int j = 0; !rc && j < k; j++) *emax = fmax(*emax, sp->err[j]);
done:
    mbl_free(wr), mbl_free(wi), mbl_free(Wr), mbl_free(Wi), mbl_free(it);
    return rc;
}

int lin_penalty_sparse(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const char *reason,
                       mbl_linear **out, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, nd = 2 * n, rc;
    int nphys = 2 * (n - m), k = opt->nev < nphys ? opt->nev : nphys;
    int kmax = k + 2 * m < nd - 2 ? k + 2 * m : nd - 2;
    int ka = 2 * k + PEN_SP_GUARD < kmax ? 2 * k + PEN_SP_GUARD : kmax;
    *out = NULL;
    if (k < 1) return mbl_error(st, MBL_EDIM, "penalty: no degrees of freedom for the partial spectrum (ARPACK)");
    if (!(opt->pen_alpha > 0) || !(opt->pen_omega > 0) || !(opt->pen_xi >= 0) || !(opt->pen_ratio > 1))
        return mbl_error(st, MBL_EARG, "penalty: alpha and omega must be > 0, xi >= 0 and the ratio > 1");
    /* memory: the sparse pencil's estimate for the first try's ka eigenvalues; the tries after it
     * (more spurious ones nearer the shift than physical ones) stop at what fits (kmem) */
    double budget = lin_mem_budget(opt), need = lin_sparse_bytes(md, ka);
    if (need > budget) {
        char what[96];
        snprintf(what, sizeof what, "penalty: the partial spectrum (%d eigenvalues, sparse pencil of order %d)", ka,
                 nd);
        return lin_refuse_memory(what, need, budget, "ask for fewer eigenvalues (nev) or raise the budget", st);
    }
    int kmem = ka;
    while (kmem < kmax && lin_sparse_bytes(md, 2 * kmem < kmax ? 2 * kmem : kmax) <= budget)
        kmem = 2 * kmem < kmax ? 2 * kmem : kmax;
    pen_sp S;
    pen_quad Q = {NULL, NULL, NULL};
    mbl_linear *lin = NULL;
    double *re = NULL, *im = NULL, *Vr = NULL, *Vi = NULL, *sh = NULL, *w = NULL;
    rc = pen_sp_init(md, pt, opt, &S, st);
    if (rc) return rc;
    re = mbl_alloc_array((size_t)kmem + 1, sizeof *re), im = mbl_alloc_array((size_t)kmem + 1, sizeof *im);
    sh = mbl_alloc_array((size_t)kmem + 1, sizeof *sh), w = mbl_alloc_array((size_t)n + 8 * (size_t)m + 1, sizeof *w);
    Vr = mbl_alloc_array((size_t)nd * kmem + 1, sizeof *Vr), Vi = mbl_alloc_array((size_t)nd * kmem + 1, sizeof *Vi);
    /* the state-space form alongside (dense, as descriptor's sparse path keeps augmented's) when
     * the spectrum was not asked for partial and the dense form fits the budget */
    int ss = opt->partial != MBL_PARTIAL_ALWAYS && n <= opt->dense_n_max && lin_dense_bytes(md, pt, "penalty") <= budget;
    if (ss) {
        rc = lin_penalty_state_space(md, pt, opt, &lin, st);
        if (rc) goto done;
    } else {
        lin = lin_linear_shell(md, n);
    }
    if (!re || !im || !sh || !w || !Vr || !Vi || !lin || lin_alloc_eigs(lin, k)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    int np;
    for (;;) {
        pen_quad_free(&Q);
        np = pen_sp_run(&S, opt, opt->pen_alpha, ka, re, im, Vr, Vi, sh, w, &Q, st);
        if (np < 0) {
            rc = -np;
            mbl_error_prefix(st, "penalty: partial spectrum");
            goto done;
        }
        if (np >= k || ka >= kmem) break;
        ka = 2 * ka < kmem ? 2 * ka : kmem;
    }
    if (np < k) {
        rc = mbl_error(st, MBL_ENOCONV,
                       "penalty: %d physical eigenvalues among the %d nearest the shift, %d wanted (split at a "
                       "sensitivity to omega of %g%s): use augmented",
                       np, ka, k, PEN_SP_SPLIT, ka < kmax ? "; more would exceed mem_budget" : "");
        goto done;
    }
    /* the k physical ones nearest the shift (ARPACK's order), refined by Newton's method with the
     * residual in doubled precision (mbla_eigs_refine_quad, on the n x n Q(lambda)): ARPACK's Ritz values carry the rounding of
     * the solves with Q(sigma), whose entries hold alpha */
    double vmax = 0, vmin = INFINITY;
    mbl_lin_spectrum *sp = lin->spectrum;
    for (int j = 0, t = 0; j < ka; j++) {
        if (sh[j] > PEN_SP_SPLIT) {
            vmin = fmin(vmin, sh[j]);
            continue;
        }
        if (t == k) continue;
        vmax = fmax(vmax, sh[j]);
        sp->re[t] = re[j], sp->im[t] = im[j];
        memmove(Vr + (size_t)t * nd, Vr + (size_t)j * nd, (size_t)nd * sizeof *Vr);
        memmove(Vi + (size_t)t * nd, Vi + (size_t)j * nd, (size_t)nd * sizeof *Vi);
        t++;
    }
    int nspur = ka - np;
    rc = pen_sp_refine(&Q, k, sp->re, sp->im, Vr, Vi, sp->berr, NULL, st);
    if (rc) {
        mbl_error_prefix(st, "penalty: partial spectrum, refinement");
        goto done;
    }
    double err = 0;
    rc = pen_sp_err(&S, opt, k, Vr, Vi, sp, &err, st);
    if (rc) goto done;
    for (int j = 0; j < k; j++)
        for (int c = 0; c < n; c++)
            sp->vre[c + (size_t)j * n] = Vr[c + (size_t)j * nd], sp->vim[c + (size_t)j * n] = Vi[c + (size_t)j * nd];
    lin->err_est = err;
    sp->partial = k < nphys;
    sp->shift = opt->shift;
    snprintf(sp->solver, sizeof sp->solver, "%s", opt->eigs_backend ? opt->eigs_backend->name : "arpack");
    snprintf(sp->reason, sizeof sp->reason, "%s", reason ? reason : "");
    snprintf(lin->method, sizeof lin->method, "penalty");
    snprintf(lin->selection, sizeof lin->selection, "all coordinates (penalty ODE, source 001 Eq. 14)");
    snprintf(lin->notes, sizeof lin->notes,
             "%s%.80s%salpha %.3g, xi %.3g, omega %.3g; sparse penalty pencil of order %d, %.12s shift-invert: %d "
             "physical eigenvalues nearest %g of %d (%d of %d computed spurious: omega-sensitivity > %g); "
             "physical <= %.2e, spurious >= %.3g; error estimate %.2e (refinement at alpha / %.3g and "
             "alpha (1 + d)); %s",
             vmax > PEN_SP_WARN_LO || vmin < PEN_SP_WARN_HI ? "WARNING: an omega-sensitivity between 0.01 and 0.5, "
                                                              "the split may be wrong; "
                                                            : "",
             reason && reason[0] ? reason : "", reason && reason[0] ? "; " : "", opt->pen_alpha, opt->pen_xi,
             opt->pen_omega, nd, opt->eigs_backend ? opt->eigs_backend->what : "ARPACK", k, opt->shift, nphys, nspur,
             ka, PEN_SP_SPLIT, vmax, nspur ? vmin : 0.0, err, opt->pen_ratio,
             ss ? "A..D, M, C, K formed (dense)" : "A..D, M, C, K not formed");
    size_t nl = strlen(lin->notes);
    if (S.Th) /* the scalars named above stand for the given matrices' defaults only */
        snprintf(lin->notes + nl, sizeof lin->notes - nl, "; general penalty matrices (%s%s%s given, %d x %d)",
                 opt->pen_Xi ? "Xi " : "", opt->pen_Theta ? "Theta " : "", opt->pen_Omega ? "Omega" : "", m, m);
    *out = lin;
    lin = NULL;
done:
    pen_sp_free(&S);
    pen_quad_free(&Q);
    mbl_linear_free(lin);
    mbl_free(re), mbl_free(im), mbl_free(Vr), mbl_free(Vi), mbl_free(sh), mbl_free(w);
    return rc;
}

int lin_penalty_sparse_matrices(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, double sigma,
                                mbla_csc **Mp, mbla_csc **Qs, mbl_status *st)
{
    pen_sp S;
    pen_quad Q = {NULL, NULL, NULL};
    mbla_csc *G = NULL;
    *Mp = *Qs = NULL;
    int rc = pen_sp_init(md, pt, opt, &S, st);
    if (rc) return rc;
    rc = pen_sp_quad(&S, opt->pen_alpha, opt->pen_xi, opt->pen_omega, &Q, st);
    if (!rc) rc = mbla_csc_add(1.0, Q.K, sigma, Q.C, &G, st);
    if (!rc) rc = mbla_csc_add(1.0, G, sigma * sigma, Q.M, Qs, st);
    if (!rc) *Mp = Q.M, Q.M = NULL;
    mbla_csc_free(G);
    pen_quad_free(&Q);
    pen_sp_free(&S);
    return rc;
}
