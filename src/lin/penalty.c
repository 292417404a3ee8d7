/* `penalty`: the UCS formulation of source 001 Sec. 3.3 (Eq. 11-15).
 *
 * The multipliers are replaced by lambda = Xi (Phi'' + Theta Phi' + Omega Phi) with Xi = alpha I,
 * Theta = 2 xi omega I, Omega = omega^2 I (opt->pen_alpha, pen_xi, pen_omega; source 001 uses
 * alpha = 1e6, xi = 1, omega = 10). Linearizing H3 gives n ODEs M_p q'' + C_p q' + K_p q = F_p u:
 *     M_p = M + alpha Phi_q^T Phi_q
 *     C_p = dR/dv + alpha Phi_q^T (dPhi''/dv + 2 xi omega Phi_q)
 *     K_p = dR/dq + alpha Phi_q^T (dPhi''/dq + 2 xi omega dPhi'/dq + omega^2 Phi_q)
 * taken at the constrained operating point, whose multipliers (minimum-norm at a singular
 * configuration) stand for the penalty forces of the penalty equilibrium in dR/dq (the two
 * points differ by O(|lambda| / (alpha omega^2))). All m constraints are penalized, redundant or
 * not. The 2n eigenvalues of the pencil ([0 I; -K_p -C_p], diag(I, M_p)) by QZ contain the
 * 2(n - rank) approximations of the constrained spectrum and 2 rank spurious ones: an eigenvector
 * (dq, dv) is scored by its constraint violation (|Phi_q dq| + |Phi_q dv + dPhi'/dq dq|) /
 * (|Phi_q|_1 (|dq| + |dv|)); the 2(n - rank) least violating are physical. The error estimate
 * repeats the analysis at alpha / pen_ratio (a smaller penalty: a larger O(1/alpha) error and less
 * rounding, which grows with alpha) and extrapolates the O(1/alpha) error with a safety factor
 * PEN_SAFETY = 2 for the O(1/alpha^2) and rounding terms:
 * err = PEN_SAFETY max |s(alpha) - s(alpha / ratio)| / (ratio - 1) over the physical eigenvalues,
 * and at least the rounding level of QZ on the penalized pencil, eps alpha |Phi_q|_1^2 / |M|_1 max|s|.
 *
 * A point where the constrained equations do not determine the motion (a tangent direction without
 * mass: lin_tangent_mass) is refused first, as nullspace and descriptor refuse it; the penalty ODE
 * would still have eigenvalues there, set by alpha alone.
 *
 * General Xi, Theta, Omega (m x m, opt->pen_Xi, ...; source 001 Eq. 11-12): the rows Pl, Pv, Pk of
 * src/lin/penalty_mats.c stand for Phi_q, dPhi''/dv + 2 xi omega Phi_q, ... above (alpha Xh = Xi).
 *
 * Non-holonomic constraints c = A_nh v + b = 0 are penalized at velocity level,
 * mu = alpha (c' + omega c): M_p += alpha A_nh^T A_nh, C_p += alpha A_nh^T (dc'/dv + omega A_nh),
 * K_p += alpha A_nh^T (dc'/dq + omega dc/dq); they add k spurious eigenvalues (near -omega) and the
 * violation |A_nh dv + c_q dq| to the score; 2(n - rank) - k eigenvalues are physical.
 *
 * Points with motion: the linear ODE stays in q, v (its own states), but the Jacobian of a vector
 * field away from an equilibrium depends on the coordinates, and in q the steady motion of a
 * relative equilibrium (a conical pendulum in Cartesian coordinates) is not steady. The spectrum
 * is therefore that of the same penalty ODE written in the coordinates
 * y = [S; W; Phi(rows); Phi'(rows); c] (the states of `augmented` completed by the constraint
 * values, a regular change of coordinates): J_y = (dy'/dx) (dy/dx)^-1, exact, with
 * y' differentiated along the penalty flow (d(W')/dq = W'_q + W_v a_q, ...). At rest J_y is
 * similar to J_x and nothing changes. Eigenvectors are mapped back to (dq, dv). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* smallest reciprocal condition of the change of coordinates at a point with motion (else the
 * spectrum is taken in q, with the note that it depends on the states) */
#define PEN_TF_RCOND 1e-13
/* safety factor of the error estimate (see above) */
#define PEN_SAFETY 2.0
#define PEN_ROUND_SAFETY 4.0
/* The rounding the penalized data carry from their own formation (M + alpha Phi_q^T Phi_q loses the
 * digits of M below eps alpha |Phi_q|^2, the solve with M_p at a point with motion as many) is
 * sampled by the same analysis at alpha (1 + d) for these relative changes d: the O(1/alpha) term
 * moves by d times itself, every rounding anew. The transposed and reversed pencils
 * (mbla_gev_rounding) see QZ's rounding only: on examples/nh_sleigh.yaml at u = 0.015 they said
 * 2e-8 where the deviation from augmented is 9.9e-8 (it grows as alpha, 1e-6 at alpha = 1e7), on
 * the nonlinear Whipple bicycle at 6 m/s 2e-9 for a zero at 8.9e-9 (issue 30, item 9); these two
 * samples measured 7.8e-8 to 1.2e-7 and 8.9e-9. */
static const double pen_alpha_samples[] = {3.0 / 1024.0, -3.0 / 2048.0};
/* ... each distance times this: a distance between two roundings is up to the sum of both (with 4,
 * the four-bar of tests/lin at alpha = 1e8 was estimated at 11.5 times its deviation) */
#define PEN_ALPHA_SAMPLE_SAFETY 2.0

typedef struct pen_item {
    double viol;
    int idx;
} pen_item;

static int cmp_viol(const void *pa, const void *pb)
{
    const pen_item *a = pa, *b = pb;
    if (a->viol != b->viol) return a->viol < b->viol ? -1 : 1;
    return a->idx - b->idx;
}

/* M_p, C_p, K_p (n x n) for penalty factor alpha (R: the penalty's rows, src/lin/penalty_mats.c) */
static void pen_mck(const mbl_blocks *B, const lin_pen_rows *R, double alpha, double om, double *Mp, double *Cp,
                    double *Kp)
{
    int n = B->n, m = B->m;
    const double *Pl = R->Pl, *Pq = B->Pq, *Pv = R->Pv, *Pk = R->Pk;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double sm = 0, sc = 0, sk = 0;
            for (int a = 0; a < m; a++) {
                double pi = Pl[a + (size_t)i * m];
                if (pi == 0.0) continue;
                size_t pj = a + (size_t)j * m;
                sm += pi * Pq[pj];
                sc += pi * Pv[pj];
                sk += pi * Pk[pj];
            }
            for (int a = 0; a < B->k; a++) {
                int k = B->k;
                double pi = B->Nv[a + (size_t)i * k];
                if (pi == 0.0) continue;
                double pj = B->Nv[a + (size_t)j * k];
                sm += pi * pj;
                sc += pi * (B->Ndv[a + (size_t)j * k] + om * pj);
                sk += pi * (B->Ndq[a + (size_t)j * k] + om * B->Nq[a + (size_t)j * k]);
            }
            size_t p = i + (size_t)j * n;
            Mp[p] = B->M[p] + alpha * sm;
            Cp[p] = B->Rv[p] + alpha * sc;
            Kp[p] = B->Rq[p] + alpha * sk;
        }
}

/* Eq. 10 models (B->ext): the penalty ODE in x = [q; v; X] with the implicit variables Z
 * eliminated. The multipliers enter the dynamic rows [R; d; zeq] through their Jacobians El, Em
 * (forces of multipliers included), so with dlambda = alpha (Phi_q da + (dPhi''/dv + 2 xi omega
 * Phi_q) dv + (dPhi''/dq + 2 xi omega dPhi'/dq + omega^2 Phi_q) dq) and dmu likewise
 *     [Mp Exd Ez] [dv'; dX'; dZ] = -[Kp Cp Ex] x - Er u,   Mp = Ea + alpha (El Phi_q + Em A_nh), ...
 * (ne x ne, ne = n + nX + nZ). Sol ((n + nX + nZ) x (2n + nX + nr)) receives [dv'; dX'; dZ] per
 * column of [q, v, X, u]; Mp, Cp, Kp (n x n) the EOM rows (may be NULL). */
static int pen_explicit(const mbl_blocks *B, const lin_pen_rows *R, double alpha, double om, double *Sol, double *Mp,
                        double *Cp, double *Kp, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nX = B->nX, nZ = B->nZ, ne = B->ne, nr = B->nr, Nd = 2 * n + nX, rc = 0;
    double *S = mbl_calloc((size_t)ne * ne + 1, sizeof *S), *L = mbl_calloc((size_t)(m + k) * 3 * n + 1, sizeof *L);
    double *P = mbl_calloc((size_t)ne * 3 * n + 1, sizeof *P);
    if (!S || !L || !P) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* L = d[lambda; mu]/d[a, v, q] / alpha */
    int mk = m + k;
    for (int j = 0; j < n; j++) {
        for (int a = 0; a < m; a++) {
            size_t pa = a + (size_t)j * m;
            L[a + (size_t)j * mk] = B->Pq[pa];
            L[a + (size_t)(n + j) * mk] = R->Pv[pa];
            L[a + (size_t)(2 * n + j) * mk] = R->Pk[pa];
        }
        for (int a = 0; a < k; a++) {
            size_t pa = a + (size_t)j * k;
            L[m + a + (size_t)j * mk] = B->Nv[pa];
            L[m + a + (size_t)(n + j) * mk] = B->Ndv[pa] + om * B->Nv[pa];
            L[m + a + (size_t)(2 * n + j) * mk] = B->Ndq[pa] + om * B->Nq[pa];
        }
    }
    rc = lin_pen_rows_apply(R, m, 3 * n, L, mk, st); /* general Xi: lambda's rows times Xh */
    if (rc) goto done;
    /* P = [Ea Ev Eq] + alpha [El Em] L = [Mp Cp Kp] over all dynamic rows */
    memcpy(P, B->Ea, (size_t)ne * n * sizeof *P);
    memcpy(P + (size_t)ne * n, B->Ev, (size_t)ne * n * sizeof *P);
    memcpy(P + (size_t)2 * ne * n, B->Eq, (size_t)ne * n * sizeof *P);
    if (m) mbla_gemm('N', 'N', ne, 3 * n, m, alpha, B->El, ne, L, mk, 1.0, P, ne, NULL);
    if (k) mbla_gemm('N', 'N', ne, 3 * n, k, alpha, B->Em, ne, L + m, mk, 1.0, P, ne, NULL);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            if (Mp) Mp[i + (size_t)j * n] = P[i + (size_t)j * ne];
            if (Cp) Cp[i + (size_t)j * n] = P[i + (size_t)(n + j) * ne];
            if (Kp) Kp[i + (size_t)j * n] = P[i + (size_t)(2 * n + j) * ne];
        }
    /* S = [Mp Exd Ez]; right-hand sides -[Kp Cp Ex Er] */
    memcpy(S, P, (size_t)ne * n * sizeof *S);
    memcpy(S + (size_t)ne * n, B->Exd, (size_t)ne * nX * sizeof *S);
    memcpy(S + (size_t)ne * (n + nX), B->Ez, (size_t)ne * nZ * sizeof *S);
    for (int i = 0; i < ne; i++) {
        for (int j = 0; j < n; j++) {
            Sol[i + (size_t)j * ne] = -P[i + (size_t)(2 * n + j) * ne];
            Sol[i + (size_t)(n + j) * ne] = -P[i + (size_t)(n + j) * ne];
        }
        for (int j = 0; j < nX; j++) Sol[i + (size_t)(2 * n + j) * ne] = -B->Ex[i + (size_t)j * ne];
        for (int j = 0; j < nr; j++) Sol[i + (size_t)(Nd + j) * ne] = -B->Er[i + (size_t)j * ne];
    }
    rc = mbla_lu_solve(ne, Nd + nr, S, ne, Sol, ne, st);
    if (rc == MBL_ESINGULAR)
        rc = mbl_error(st, MBL_ESINGULAR,
                       "penalty: the penalized equations do not determine (q'', der(X), Z) ([M + alpha El Phi_q, "
                       "d/d der(X), d/dZ] is singular)");
done:
    mbl_free(S), mbl_free(L), mbl_free(P);
    return rc;
}

/* The change of coordinates of a point with motion (see the opening comment). */
typedef struct pen_tf {
    const mbl_rstates *rs;
    const int *rows;
    int r;
} pen_tf;

/* row i of out (ld N) from columns [X Y] (each nr x n, ld nr, row a); NULL = 0 (the X columns of
 * an Eq. 10 model, beyond 2n, stay 0) */
static void put_row(double *out, int N, int i, const double *X, const double *Y, int nr, int a, int n)
{
    for (int c = 0; c < n; c++) {
        out[i + (size_t)c * N] = X ? X[a + (size_t)c * nr] : 0.0;
        out[i + (size_t)(n + c) * N] = Y ? Y[a + (size_t)c * nr] : 0.0;
    }
}

/* row i of out += X [a_q, a_v, a_X] (X nr x n, row a; Ax = [a_q a_v a_X] n x N) */
static void add_row_times(double *out, int N, int i, const double *X, int nr, int a, int n, const double *Ax)
{
    for (int c = 0; c < N; c++) {
        double s = 0;
        for (int l = 0; l < n; l++) s += X[a + (size_t)l * nr] * Ax[l + (size_t)c * n];
        out[i + (size_t)c * N] += s;
    }
}

/* J_y = G H^-1 into A (N x N) and H (N x N, for mapping eigenvectors back) from the penalty
 * accelerations Ax = -Mp^-1 [Kp Cp] (n x N); N = 2n + nX: an Eq. 10 model's ode states X keep
 * their coordinates (rows X of H, rows JX = dX'/d[q, v, X] of G, nX x N, ld nX) */
static int pen_transform(const mbl_blocks *B, const pen_tf *tf, const double *Ax, const double *JX, double *A,
                         double *H, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nX = B->ext ? B->nX : 0, N = 2 * n + nX, r = tf->r;
    const mbl_rstates *rs = tf->rs;
    int z0 = rs->z0, z1 = rs->z1;
    double *G = mbl_calloc((size_t)N * N + 1, sizeof *G), *Ht = mbl_calloc((size_t)N * N + 1, sizeof *Ht);
    if (!G || !Ht) {
        mbl_free(G), mbl_free(Ht);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    int i = 0;
    for (int a = 0; a < z0; a++, i++) {
        put_row(H, N, i, rs->P, NULL, z0, a, n);
        put_row(G, N, i, rs->Pd_q, rs->P, z0, a, n);
    }
    for (int a = 0; a < z1; a++, i++) {
        put_row(H, N, i, rs->Wq, rs->Pw, z1, a, n);
        put_row(G, N, i, rs->Wd_q, rs->Wd_v, z1, a, n);
        add_row_times(G, N, i, rs->Pw, z1, a, n, Ax);
    }
    for (int a = 0; a < r; a++, i++) {
        put_row(H, N, i, B->Pq, NULL, m, tf->rows[a], n);
        put_row(G, N, i, B->Pdq, B->Pq, m, tf->rows[a], n);
    }
    for (int a = 0; a < r; a++, i++) {
        put_row(H, N, i, B->Pdq, B->Pq, m, tf->rows[a], n);
        put_row(G, N, i, B->Pddq, B->Pddv, m, tf->rows[a], n);
        add_row_times(G, N, i, B->Pq, m, tf->rows[a], n, Ax);
    }
    for (int a = 0; a < k; a++, i++) {
        put_row(H, N, i, B->Nq, B->Nv, k, a, n);
        put_row(G, N, i, B->Ndq, B->Ndv, k, a, n);
        add_row_times(G, N, i, B->Nv, k, a, n, Ax);
    }
    for (int a = 0; a < nX; a++, i++) {
        H[i + (size_t)(2 * n + a) * N] = 1.0;
        for (int c = 0; c < N; c++) G[i + (size_t)c * N] = JX[a + (size_t)c * nX];
    }
    /* A^T = H^-T G^T */
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) Ht[a + (size_t)b * N] = H[a + (size_t)b * N], A[b + (size_t)a * N] = G[a + (size_t)b * N];
    mbla_dlu *lu = NULL;
    int rc = i == N ? mbla_dlu_new(N, Ht, N, &lu, st) : mbl_error(st, MBL_EDIM, "penalty: change of coordinates");
    double rcond = 0;
    if (!rc) rc = mbla_dlu_rcond(lu, &rcond, st);
    if (!rc && !(rcond >= PEN_TF_RCOND)) rc = MBL_ESINGULAR;
    if (!rc) rc = mbla_dlu_solve(lu, 'T', N, A, N, st);
    if (rc == MBL_ESINGULAR)
        rc = mbl_error(st, MBL_ESINGULAR, "penalty: the states and constraint values are not coordinates here");
    if (!rc)
        for (int a = 0; a < N; a++)
            for (int b = a + 1; b < N; b++) {
                double t = A[a + (size_t)b * N];
                A[a + (size_t)b * N] = A[b + (size_t)a * N], A[b + (size_t)a * N] = t;
            }
    mbla_dlu_free(lu);
    mbl_free(G), mbl_free(Ht);
    return rc;
}

/* The rounding error of QZ on each finite eigenvalue of the pencil (A, E) (N x N), measured: QZ on
 * the transposed pencil (A^T, E^T) has exactly the same eigenvalues but rounds differently, so the
 * distance of each eigenvalue to the nearest one of the transposed pencil is the size of the
 * rounding error (three samples since one was not enough: under the SkylakeX kernel the single
 * transposed pencil measured 4.3 on examples/flexible_pendulum_beams.yaml where the deviation from
 * augmented is 10.3, under Haswell 12.9; with the reversed and the transposed reversed pencil too,
 * 18 to 188 over the eight x86-64 kernels; times PEN_ROUND_SAFETY: a sample of a rounding error, and the pencil's entries
 * carry the rounding of the Jacobian's evaluation too; with safety 2 a different, equally accurate
 * evaluation order of the four-bar's Jacobian (src/expr/tape.c share_pairs) made the deviation at
 * alpha = 1e8 1.3 times this measurement). The extrapolation in alpha sees only the O(1/alpha) term of
 * the penalty error; the rounding does not shrink with alpha and on a flexible body (modes up to
 * 1e5 rad/s coupled to the penalized directions) it dominates: 1.35 rad/s on
 * examples/flexible_pendulum_beams.yaml, where the O(1/alpha) term is 0.03 rad/s. The normwise
 * condition-number bound (Higham Sec. 20) is 1e5 times too pessimistic there. err (N): INFINITY
 * for an infinite eigenvalue. */
static int pen_round(int N, const double *A, const double *E, const double *wr, const double *wi, const double *be,
                     double *err, mbl_status *st)
{
    int *kind = mbl_alloc_array((size_t)N + 1, sizeof *kind);
    if (!kind) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < N; j++) kind[j] = be[j] > 0 ? MBLA_EIG_FINITE : MBLA_EIG_INFINITE;
    int rc = mbla_gev_rounding(N, A, N, E, N, wr, wi, kind, err, st);
    for (int j = 0; !rc && j < N; j++) err[j] *= PEN_ROUND_SAFETY;
    mbl_free(kind);
    return rc;
}

/* eigenvalues of the penalty pencil; flags the 2(n - r) least violating as physical.
 * wr, wi, spur (2n); vre, vim (n x 2n). With vre == NULL only the eigenvalues are computed (no
 * eigenvectors, no classification: spur flags the infinite ones only). */
static int pen_eigs(const mbl_blocks *B, const lin_pen_rows *R, const pen_tf *tf, double alpha, double om, int r,
                    double *wr, double *wi, int *spur, double *vre, double *vim, double *maxviol_phys,
                    double *minviol_spur, double *round_err, double *berr, mbl_status *st)
{
    int n = B->n, m = B->m, nX = B->ext ? B->nX : 0, N = 2 * n + nX, rc = 0;
    size_t NN = (size_t)N * N;
    double *Mp = mbl_calloc((size_t)n * n + 1, sizeof *Mp), *Cp = mbl_calloc((size_t)n * n + 1, sizeof *Cp);
    double *Kp = mbl_calloc((size_t)n * n + 1, sizeof *Kp);
    double *A = mbl_calloc(NN + 1, sizeof *A), *E = mbl_calloc(NN + 1, sizeof *E), *VR = mbl_calloc(NN + 1, sizeof *VR);
    double *ar = mbl_calloc((size_t)N + 1, sizeof *ar), *ai = mbl_calloc((size_t)N + 1, sizeof *ai);
    double *be = mbl_calloc((size_t)N + 1, sizeof *be);
    pen_item *it = mbl_calloc((size_t)N + 1, sizeof *it);
    if (!Mp || !Cp || !Kp || !A || !E || !VR || !ar || !ai || !be || !it) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }

    double *Hm = NULL;
    if (B->ext) { /* an Eq. 10 model: the explicit penalty ODE in [q; v; X] (pen_explicit), E = I */
        int ne = B->ne;
        double *Sol = mbl_calloc((size_t)ne * (N + B->nr) + 1, sizeof *Sol);
        double *Ax = mbl_calloc((size_t)n * N + 1, sizeof *Ax), *JX = mbl_calloc((size_t)nX * N + 1, sizeof *JX);
        if (!Sol || !Ax || !JX) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = pen_explicit(B, R, alpha, om, Sol, NULL, NULL, NULL, st);
        for (int j = 0; !rc && j < N; j++) {
            for (int i = 0; i < n; i++) Ax[i + (size_t)j * n] = A[n + i + (size_t)j * N] = Sol[i + (size_t)j * ne];
            for (int i = 0; i < nX; i++) JX[i + (size_t)j * nX] = A[2 * n + i + (size_t)j * N] = Sol[n + i + (size_t)j * ne];
        }
        for (int i = 0; i < n; i++) A[i + (size_t)(n + i) * N] = 1.0;
        for (int i = 0; i < N; i++) E[i + (size_t)i * N] = 1.0;
        if (!rc && tf) {
            Hm = mbl_calloc(NN + 1, sizeof *Hm);
            if (!Hm) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            if (!rc) rc = pen_transform(B, tf, Ax, JX, A, Hm, st);
        }
        mbl_free(Sol), mbl_free(Ax), mbl_free(JX);
        goto solve;
    }
    pen_mck(B, R, alpha, om, Mp, Cp, Kp);
    for (int i = 0; i < n; i++) {
        E[i + (size_t)i * N] = 1.0;
        A[i + (size_t)(n + i) * N] = 1.0;
        for (int j = 0; j < n; j++) {
            E[n + i + (size_t)(n + j) * N] = Mp[i + (size_t)j * n];
            A[n + i + (size_t)j * N] = -Kp[i + (size_t)j * n];
            A[n + i + (size_t)(n + j) * N] = -Cp[i + (size_t)j * n];
        }
    }
    if (tf) { /* a point with motion: J_y = G H^-1 of the explicit ODE, eigenvectors mapped back */
        mbla_dlu *mlu = NULL;
        double *Ax = mbl_calloc((size_t)n * N + 1, sizeof *Ax);
        Hm = mbl_calloc(NN + 1, sizeof *Hm);
        if (!Ax || !Hm) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (size_t p = 0; !rc && p < (size_t)n * n; p++) Ax[p] = -Kp[p], Ax[(size_t)n * n + p] = -Cp[p];
        if (!rc) rc = mbla_dlu_new(n, Mp, n, &mlu, st);
        if (!rc) rc = mbla_dlu_solve(mlu, 'N', N, Ax, n, st);
        mbla_dlu_free(mlu);
        if (!rc) rc = pen_transform(B, tf, Ax, NULL, A, Hm, st);
        mbl_free(Ax);
        memset(E, 0, NN * sizeof *E);
        for (int i = 0; i < N; i++) E[i + (size_t)i * N] = 1.0;
    }
solve:
    if (!rc) rc = mbla_ggev(N, A, N, E, N, ar, ai, be, NULL, 1, vre ? VR : NULL, N, st);
    /* finite or infinite from the pencil itself (mbla_gev_classify); undetermined: a singular
     * pencil, no eigenvalues to report */
    if (!rc) {
        int *kind = mbl_alloc_array((size_t)N + 1, sizeof *kind);
        rc = kind ? mbla_gev_classify(N, A, N, E, N, ar, ai, be, wr, wi, kind, NULL, NULL, st)
                  : mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; !rc && j < N; j++)
            if (kind[j] != MBLA_EIG_FINITE) be[j] = 0.0; /* infinite below (beta = 0) */
        mbl_free(kind);
        if (rc == MBL_ESINGULAR) mbl_error_prefix(st, "penalty: the penalized pencil");
    }
    if (!rc && vre && berr) rc = mbla_gev_berr(N, A, N, E, N, wr, wi, ai, VR, N, berr, st);
    if (!rc && vre) rc = pen_round(N, A, E, wr, wi, be, round_err, st);
    if (!rc && tf && vre) rc = mbla_lu_solve(N, N, Hm, N, VR, N, st); /* y -> (dq, dv) */
    mbl_free(Hm);
    if (rc) goto done;
    if (!vre) { /* eigenvalues only (the error-estimate run): no classification */
        for (int j = 0; j < N; j++) spur[j] = !(be[j] > 0); /* wr, wi: mbla_gev_classify's */
        *maxviol_phys = *minviol_spur = 0.0;
        goto done;
    }
    double nP = fmax(mbla_norm1(m, n, B->Pq, m), mbla_norm1(B->k, n, B->Nv, B->k));
    if (!(nP > 0)) nP = 1.0;
    for (int j = 0; j < N; j++) {
        const double *xr, *xi_ = NULL;
        double sg = 1.0;
        if (ai[j] == 0.0) xr = VR + (size_t)j * N;
        else if (ai[j] > 0.0) xr = VR + (size_t)j * N, xi_ = VR + (size_t)(j + 1) * N;
        else xr = VR + (size_t)(j - 1) * N, xi_ = VR + (size_t)j * N, sg = -1.0;
        double nq = 0, nv = 0, c1 = 0, c2 = 0, c3 = 0;
        for (int c = 0; c < n; c++) {
            double qr = xr[c], qi = xi_ ? sg * xi_[c] : 0, vr_ = xr[n + c], vi_ = xi_ ? sg * xi_[n + c] : 0;
            nq += qr * qr + qi * qi;
            nv += vr_ * vr_ + vi_ * vi_;
            if (vre) vre[c + (size_t)j * n] = qr, vim[c + (size_t)j * n] = qi;
        }
        for (int a = 0; a < m; a++) {
            double pr = 0, pim = 0, ur = 0, ui = 0;
            for (int c = 0; c < n; c++) {
                double g = B->Pq[a + (size_t)c * m], h = B->Pdq[a + (size_t)c * m];
                double qr = xr[c], qi = xi_ ? sg * xi_[c] : 0, vr_ = xr[n + c], vi_ = xi_ ? sg * xi_[n + c] : 0;
                pr += g * qr, pim += g * qi;
                ur += g * vr_ + h * qr, ui += g * vi_ + h * qi;
            }
            c1 += pr * pr + pim * pim;
            c2 += ur * ur + ui * ui;
        }
        for (int a = 0; a < B->k; a++) {
            int k = B->k;
            double ur = 0, ui = 0;
            for (int c = 0; c < n; c++) {
                double g = B->Nv[a + (size_t)c * k], h = B->Nq[a + (size_t)c * k];
                double qr = xr[c], qi = xi_ ? sg * xi_[c] : 0, vr_ = xr[n + c], vi_ = xi_ ? sg * xi_[n + c] : 0;
                ur += g * vr_ + h * qr, ui += g * vi_ + h * qi;
            }
            c3 += ur * ur + ui * ui;
        }
        double nxx = 0; /* an ode state's part (Eq. 10 models): violates no constraint */
        for (int c = 2 * n; c < N; c++) {
            double xr_ = xr[c], xi2 = xi_ ? xi_[c] : 0;
            nxx += xr_ * xr_ + xi2 * xi2;
        }
        double den = nP * (sqrt(nq) + sqrt(nv) + sqrt(nxx));
        /* an infinite eigenvalue is scored by its eigenvector too: a high mode of a stiff model whose
         * beta QZ leaves at rounding level is physical (it violates no constraint) and must not take
         * the place of a spurious one, which would then be called physical (the flexible pendulum at
         * n_p = 75: -9.75 and -10.24 at alpha = 1e6, -9.998965 +- 0.103516i at 1e7; issue 65, item 8) */
        it[j].viol = den > 0 ? (sqrt(c1) + sqrt(c2) + sqrt(c3)) / den : INFINITY;
        it[j].idx = j;
        spur[j] = 1;
    }
    qsort(it, (size_t)N, sizeof *it, cmp_viol);
    int np = 2 * (n - r) - B->k + nX;
    /* the np least violating are physical; an infinite one among them has no value to report and
     * stays flagged (the notes count it apart) */
    for (int j = 0; j < np; j++)
        if (be[it[j].idx] > 0) spur[it[j].idx] = 0;
    *maxviol_phys = np > 0 ? it[np - 1].viol : 0.0;
    *minviol_spur = np < N ? it[np].viol : INFINITY;
done:
    mbl_free(Mp), mbl_free(Cp), mbl_free(Kp), mbl_free(A), mbl_free(E), mbl_free(VR);
    mbl_free(ar), mbl_free(ai), mbl_free(be), mbl_free(it);
    return rc;
}


/* The state-space form of the penalty ODE of an Eq. 10 model (pen_explicit): x = [q; v; X], A = [0 I 0;
 * dv'/dx; dX'/dx], B likewise, C and D through (q'', der(X), Z); M, C, K the penalized EOM rows (X
 * held), F = -dR/du. */
static int pen_multiplier_outputs(const mbl_blocks *B, const lin_pen_rows *R, double a1, double om, const double *W,
                                  int ldw, int N, mbl_linear *lin, mbl_status *st);

static int pen_ss_ext(const mbl_blocks *B, const lin_pen_rows *R, double alpha, double om, mbl_linear *lin,
                      mbl_status *st)
{
    int n = B->n, nX = B->nX, nZ = B->nZ, ne = B->ne, nr = B->nr, ny = B->ny, N = 2 * n + nX, nc = N + nr;
    double *Sol = mbl_calloc((size_t)ne * nc + 1, sizeof *Sol), *Y = mbl_calloc((size_t)ny * nc + 1, sizeof *Y);
    int rc = !Sol || !Y ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) rc = pen_explicit(B, R, alpha, om, Sol, lin->M, lin->Cd, lin->K, st);
    if (rc) goto done;
    for (size_t p = 0; p < (size_t)n * nr; p++) lin->F[p] = -B->Rr[p];
    memset(lin->A, 0, (size_t)N * N * sizeof *lin->A);
    for (int i = 0; i < n; i++) lin->A[i + (size_t)(n + i) * N] = 1.0;
    for (int j = 0; j < nc; j++) {
        double *dst = j < N ? lin->A + (size_t)j * N : lin->B + (size_t)(j - N) * N;
        for (int i = 0; i < n + nX; i++) dst[n + i] = Sol[i + (size_t)j * ne];
    }
    /* y = Yq dq + Yv dv + Yx dX + Ya dv' + Yxd dX' + Yz dZ + Yr du */
    if (ny) {
        if (n) mbla_gemm('N', 'N', ny, nc, n, 1.0, B->Ya, ny, Sol, ne, 0.0, Y, ny, NULL);
        if (nX) mbla_gemm('N', 'N', ny, nc, nX, 1.0, B->Yxd, ny, Sol + n, ne, 1.0, Y, ny, NULL);
        if (nZ) mbla_gemm('N', 'N', ny, nc, nZ, 1.0, B->Yz, ny, Sol + n + nX, ne, 1.0, Y, ny, NULL);
        for (int i = 0; i < ny; i++) {
            for (int j = 0; j < n; j++) {
                Y[i + (size_t)j * ny] += B->Yq[i + (size_t)j * ny];
                Y[i + (size_t)(n + j) * ny] += B->Yv[i + (size_t)j * ny];
            }
            for (int j = 0; j < nX; j++) Y[i + (size_t)(2 * n + j) * ny] += B->Yx[i + (size_t)j * ny];
            for (int j = 0; j < nr; j++) Y[i + (size_t)(N + j) * ny] += B->Yr[i + (size_t)j * ny];
        }
        memcpy(lin->C, Y, (size_t)ny * N * sizeof *Y);
        memcpy(lin->D, Y + (size_t)ny * N, (size_t)ny * nr * sizeof *Y);
        if (n) rc = pen_multiplier_outputs(B, R, alpha, om, Sol, ne, N, lin, st);
    }
done:
    mbl_free(Sol), mbl_free(Y);
    return rc;
}

/* rnd[i] of each physical eigenvalue of sp: at least PEN_ALPHA_SAMPLE_SAFETY times its distance to the
 * nearest finite eigenvalue (wr, wi; spur: not finite) of a rerun at a slightly changed alpha */
static void pen_round_sample(const mbl_lin_spectrum *sp, const double *wr, const double *wi, const int *spur,
                             double *rnd)
{
    for (int i = 0; i < sp->neig; i++) {
        if (sp->spurious[i]) continue;
        double best = INFINITY;
        for (int j = 0; j < sp->neig; j++)
            if (!spur[j]) best = fmin(best, hypot(sp->re[i] - wr[j], sp->im[i] - wi[j]));
        rnd[i] = fmax(rnd[i], PEN_ALPHA_SAMPLE_SAFETY * best);
    }
}

/* The error estimate of the physical eigenvalues of sp (at alpha a1; wr2, wi2, spur2 those at
 * a1 / ratio, rnd the measured rounding of each): sp->err of each and the largest, returned. */
static double pen_err_est(const mbl_blocks *B, double a1, double ratio, mbl_lin_spectrum *sp, const double *wr2,
                          const double *wi2, const int *spur2, const double *rnd)
{
    int n = B->n, m = B->m, N = sp->neig;
    /* error estimate: match each physical eigenvalue to the nearest eigenvalue at alpha / ratio (the
     * spurious ones sit near -omega, far from the physical ones) */
    double err = 0, fac = PEN_SAFETY / (ratio - 1.0);
    for (int i = 0; i < N; i++) {
        if (sp->spurious[i]) continue;
        double best = INFINITY;
        for (int j = 0; j < N; j++)
            if (!spur2[j]) best = fmin(best, hypot(sp->re[i] - wr2[j], sp->im[i] - wi2[j]));
        err = fmax(err, best * fac);
        sp->err[i] = fmax(best * fac, rnd[i]); /* each eigenvalue's own: extrapolation and rounding */
    }
    /* rounding floor: QZ perturbs the pencil by eps times its norm, which grows with alpha |Phi_q|^2 */
    /* (m = 0: no penalty term, no floor; mbla_norm1 answers -1 for its leading dimension 0) */
    double smax = 1.0, nP = m > 0 ? mbla_norm1(m, n, B->Pq, m) : 0.0, nM = mbla_norm1(n, n, B->M, n);
    for (int i = 0; i < N; i++)
        if (!sp->spurious[i]) smax = fmax(smax, hypot(sp->re[i], sp->im[i]));
    /* ... and each physical eigenvalue's estimate at least PEN_SAFETY times it: the samples of
     * pen_round and pen_round_sample can all miss a rounding that this level bounds (the sleigh at
     * u = 0.45, m = 0.02 under SkylakeX: deviation 4.5e-9 from augmented, own estimate 8.9e-10,
     * this floor 4.4e-9; issue 65, item 8) */
    if (nM > 0) {
        double rfloor = DBL_EPSILON * a1 * nP * nP / nM * smax;
        err = fmax(err, PEN_SAFETY * rfloor);
        for (int i = 0; i < N; i++)
            if (!sp->spurious[i]) sp->err[i] = fmax(sp->err[i], PEN_SAFETY * rfloor);
    }
    /* the measured rounding of each physical eigenvalue (pen_round): the extrapolation above sees
     * only the O(1/alpha) term, not the rounding, which does not shrink with alpha */
    double round_max = 0;
    for (int i = 0; i < N; i++)
        if (!sp->spurious[i]) round_max = fmax(round_max, rnd[i]);
    err = fmax(err, round_max);
    return err;
}

/* Outputs of the multipliers: the penalty forces themselves, lambda = alpha (Phi'' + 2 xi omega Phi' +
 * omega^2 Phi) and mu = alpha (c' + omega c), linearized along the penalty ODE:
 *   dlambda = alpha (Phi_q da + (dPhi''/dq + 2 xi omega dPhi'/dq + omega^2 Phi_q) dq
 *                    + (dPhi''/dv + 2 xi omega Phi_q) dv + dPhi''/dr dr),
 *   dmu = alpha (A_nh da + (dc'/dq + omega dc/dq) dq + (dc'/dv + omega A_nh) dv + dc'/dr dr),
 * da the ODE's [A21 A22 B2] (W, leading dimension ldw; the columns of X, from 2n to N, only through da).
 * They approximate the constrained model's multipliers to O(1/alpha)
 * as the eigenvalues do (docs/methods.md). lin->C, D += Ylam dlambda + Ymu dmu. */
static int pen_multiplier_outputs(const mbl_blocks *B, const lin_pen_rows *R, double a1, double om, const double *W,
                                  int ldw, int N, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, nc = N + nr; /* N: states [q; v; X] */
    if (!((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0))) return 0;
    double *L = mbl_calloc((size_t)(m + k) * nc + 1, sizeof *L);
    if (!L) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int ld = m + k;
    for (int j = 0; j < nc; j++) {
        const double *da = W + (size_t)j * ldw;
        for (int a = 0; a < m; a++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += B->Pq[a + (size_t)c * m] * da[c];
            if (j < n) s += R->Pk[a + (size_t)j * m];
            else if (j < 2 * n) s += R->Pv[a + (size_t)(j - n) * m];
            else if (j >= N) s += B->Pddr[a + (size_t)(j - N) * m];
            L[a + (size_t)j * ld] = a1 * s;
        }
        for (int b = 0; b < k; b++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += B->Nv[b + (size_t)c * k] * da[c];
            if (j < n) s += B->Ndq[b + (size_t)j * k] + om * B->Nq[b + (size_t)j * k];
            else if (j < 2 * n) s += B->Ndv[b + (size_t)(j - n) * k] + om * B->Nv[b + (size_t)(j - n) * k];
            else if (j >= N) s += B->Ndr[b + (size_t)(j - N) * k];
            L[m + b + (size_t)j * ld] = a1 * s;
        }
    }
    int rc = lin_pen_rows_apply(R, m, nc, L, ld, st); /* general Xi: lambda = alpha Xh (...) */
    if (rc) {
        mbl_free(L);
        return rc;
    }
    if (m) {
        mbla_gemm('N', 'N', ny, N, m, 1.0, B->Ylam, ny, L, ld, 1.0, lin->C, ny, NULL);
        if (nr) mbla_gemm('N', 'N', ny, nr, m, 1.0, B->Ylam, ny, L + (size_t)ld * N, ld, 1.0, lin->D, ny, NULL);
    }
    if (k) {
        mbla_gemm('N', 'N', ny, N, k, 1.0, B->Ymu, ny, L + m, ld, 1.0, lin->C, ny, NULL);
        if (nr) mbla_gemm('N', 'N', ny, nr, k, 1.0, B->Ymu, ny, L + m + (size_t)ld * N, ld, 1.0, lin->D, ny, NULL);
    }
    mbl_free(L);
    return 0;
}

/* The penalty ODE's state-space and MCK forms into lin (Mp, Cp, Kp, W: work of n x n, n x n, n x n
 * and n x (2n + nr); *lu: the factors of Mp, freed by the caller). */
static int pen_state_space(const mbl_blocks *B, const lin_pen_rows *R, double a1, double om, double *Mp, double *Cp,
                           double *Kp, double *W, mbla_dlu **lu, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, nr = B->nr, ny = B->ny, N = lin->nx, rc = 0;
    /* the penalty ODE itself: states q, v; A = [0 I; -Mp^-1 Kp, -Mp^-1 Cp], B = [0; Mp^-1 F] */
    pen_mck(B, R, a1, om, Mp, Cp, Kp);
    memcpy(lin->M, Mp, (size_t)n * n * sizeof *Mp);
    memcpy(lin->Cd, Cp, (size_t)n * n * sizeof *Cp);
    memcpy(lin->K, Kp, (size_t)n * n * sizeof *Kp);
    for (size_t p = 0; p < (size_t)n * nr; p++) lin->F[p] = -B->Rr[p];
    if (n) {
        rc = mbla_dlu_new(n, Mp, n, lu, st);
        if (rc == MBL_ESINGULAR) return mbl_error(st, MBL_ESINGULAR, "penalty: M + alpha Phi_q^T Phi_q is singular");
        if (rc) return rc;
        for (size_t p = 0; p < (size_t)n * n; p++) W[p] = -Kp[p], W[(size_t)n * n + p] = -Cp[p];
        memcpy(W + (size_t)2 * n * n, lin->F, (size_t)n * nr * sizeof *W);
        rc = mbla_dlu_solve(*lu, 'N', 2 * n + nr, W, n, st);
        if (rc) return rc;
    }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < n; i++) {
            lin->A[i + (size_t)j * N] = (j == n + i) ? 1.0 : 0.0;
            lin->A[n + i + (size_t)j * N] = W[i + (size_t)j * n];
        }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) lin->B[n + i + (size_t)j * N] = W[i + (size_t)(N + j) * n];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ny; i++) {
            lin->C[i + (size_t)j * ny] = B->Yq[i + (size_t)j * ny];
            lin->C[i + (size_t)(n + j) * ny] = B->Yv[i + (size_t)j * ny];
        }
    for (size_t p = 0; p < (size_t)ny * nr; p++) lin->D[p] = B->Yr[p];
    /* outputs of accelerations: da = [A21 A22] [dq; dv] + B2 u of the penalty ODE (W holds them) */
    if (ny && n) {
        mbla_gemm('N', 'N', ny, N, n, 1.0, B->Ya, ny, W, n, 1.0, lin->C, ny, NULL);
        if (nr) mbla_gemm('N', 'N', ny, nr, n, 1.0, B->Ya, ny, W + (size_t)N * n, n, 1.0, lin->D, ny, NULL);
    }
    if (ny && n) rc = pen_multiplier_outputs(B, R, a1, om, W, n, N, lin, st);
    return rc;
}

/* The notes' tail: the penalty equilibrium's shift and violation (moved, viol), the general matrices given */
static void pen_notes_tail(const mbl_lin_options *opt, int m, double moved, double viol, mbl_linear *lin)
{
    char eq[256] = "";
    if (opt->pen_equilibrium)
        snprintf(eq, sizeof eq, "; at the penalty system's own equilibrium (coordinates moved by up to %.3e, "
                 "constraints violated by up to %.3e)", moved, viol);
    if (lin_pen_general(opt)) /* the scalars named above stand for the given matrices' defaults only */
        snprintf(eq + strlen(eq), sizeof eq - strlen(eq), "; general penalty matrices (%s%s%s given, %d x %d)",
                 opt->pen_Xi ? "Xi " : "", opt->pen_Theta ? "Theta " : "", opt->pen_Omega ? "Omega" : "", m, m);
    size_t nl = strlen(lin->notes);
    if (eq[0] && nl + 1 < sizeof lin->notes) strncat(lin->notes, eq, sizeof lin->notes - nl - 1);
}

int lin_penalty(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, nr = mv->nr, ny = mv->ny, r = 0, rc, nX = mv->ext ? mv->nX : 0, N = 2 * n + nX;
    mbl_blocks B;
    mbl_rstates rs;
    lin_pen_rows PR;
    lin_pen_second P2; /* pen_equilibrium: alpha / ratio's own rest point */
    mbl_linear *lin = NULL;
    int *rows = NULL, *spur2 = NULL, *spur3 = NULL;
    double *rnd = NULL, *wr2 = NULL, *wi2 = NULL, *wr3 = NULL, *wi3 = NULL, *Mp = NULL, *Cp = NULL, *Kp = NULL, *W = NULL;
    mbla_dlu *lu = NULL;
    memset(&rs, 0, sizeof rs);
    memset(&PR, 0, sizeof PR);
    memset(&P2, 0, sizeof P2);
    *out = NULL;
    rc = lin_require_dense(md, opt, "penalty", st);
    if (rc) return rc;
    if (!(opt->pen_alpha > 0) || !(opt->pen_omega > 0) || !(opt->pen_xi >= 0) || !(opt->pen_ratio > 1))
        return mbl_error(st, MBL_EARG, "penalty: alpha and omega must be > 0, xi >= 0 and the ratio > 1");
    double eq_moved = 0, eq_viol = 0; /* pen_equilibrium: the point moved, the constraints violated */
    rc = opt->pen_equilibrium ? lin_penalty_equilibrium(md, pt, opt, &B, &eq_moved, &eq_viol, st)
                              : lin_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    rc = lin_pen_rows_init(&B, opt, &PR, st);
    if (!rc) rc = lin_pen_alpha_check(&B, &PR, opt->pen_alpha, st);
    if (rc) {
        lin_pen_rows_free(&PR);
        lin_blocks_free(&B);
        return rc;
    }
    rows = mbl_calloc((size_t)m + 1, sizeof *rows);
    lin = lin_linear_alloc_x(n, n, n, nX, nr, ny);
    wr2 = mbl_calloc((size_t)N + 1, sizeof *wr2), wi2 = mbl_calloc((size_t)N + 1, sizeof *wi2);
    spur2 = mbl_calloc((size_t)N + 1, sizeof *spur2), rnd = mbl_calloc((size_t)N + 1, sizeof *rnd);
    wr3 = mbl_calloc((size_t)N + 1, sizeof *wr3), wi3 = mbl_calloc((size_t)N + 1, sizeof *wi3);
    spur3 = mbl_calloc((size_t)N + 1, sizeof *spur3);
    Mp = mbl_calloc((size_t)n * n + 1, sizeof *Mp), Cp = mbl_calloc((size_t)n * n + 1, sizeof *Cp);
    Kp = mbl_calloc((size_t)n * n + 1, sizeof *Kp);
    W = mbl_calloc((size_t)n * (2 * n + nr) + 1, sizeof *W);
    if (!rows || !lin || !wr2 || !wi2 || !spur2 || !rnd || !wr3 || !wi3 || !spur3 || !Mp || !Cp || !Kp || !W ||
        lin_alloc_eigs(lin, N)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->method, sizeof lin->method, "penalty");
    rc = lin_constraint_rank(&B, opt->rank_tol, rows, &r, st);
    /* the constrained equations must determine the motion (a mass on every tangent direction), as
     * nullspace's M-hat and descriptor's regular pencil require: else the penalty ODE still has
     * eigenvalues, set by alpha alone (a four-bar at the dead point of its coordinate phi) */
    if (!rc) rc = lin_tangent_mass(&B, rows, r, opt, "penalty", st);
    if (rc) goto done;
    /* a point with motion: the spectrum in the coordinates (S, W, Phi, Phi', c) when they exist */
    pen_tf tfv, *tf = NULL;
    int moving = lin_point_moving(pt);
    if (moving && r == m) {
        char sel[sizeof lin->selection];
        mbl_status st2;
        int ok = !lin_states(md, &B, opt, &rs, sel, sizeof sel, &st2);
        if (ok && lin_states_frozen(md, pt, rs.W, rs.z0, rs.z1)) {
            /* speeds: the coordinates (S, S', ...) in which a steady motion stays steady (lin_states_frozen) */
            mbl_rstates us = rs;
            ok = !lin_rstates_rates(&B, &us, &rs);
            if (!ok) memset(&rs, 0, sizeof rs);
            lin_rstates_free(&us);
        }
        if (ok && rs.z0 == n - r && rs.z1 == n - r - mv->k) {
            tfv.rs = &rs, tfv.rows = rows, tfv.r = r;
            tf = &tfv;
        }
    }
    double a1 = opt->pen_alpha, a2 = a1 / opt->pen_ratio, v1 = 0, s1 = 0, v2 = 0, s2 = 0;
    /* pen_equilibrium: the estimate's run at alpha / ratio at its own rest point (src/lin/penalty_equil.c) */
    rc = opt->pen_equilibrium ? lin_penalty_equilibrium_ratio(md, pt, opt, &P2, st) : 0;
    if (rc) goto done;
    const mbl_blocks *Bp2 = opt->pen_equilibrium ? &P2.B : &B;
    const lin_pen_rows *PRp2 = opt->pen_equilibrium ? &P2.PR : &PR;
    for (int pass = 0; pass < 2; pass++) {
        mbl_lin_spectrum *sp = lin->spectrum;
        rc = pen_eigs(&B, &PR, tf, a1, opt->pen_omega, r, sp->re, sp->im, sp->spurious, sp->vre, sp->vim, &v1,
                      &s1, rnd, sp->berr, st);
        if (!rc)
            rc = pen_eigs(Bp2, PRp2, tf, a2, opt->pen_omega, r, wr2, wi2, spur2, NULL, NULL, &v2, &s2, NULL, NULL,
                          st);
        if (rc != MBL_ESINGULAR || !tf) break;
        tf = NULL; /* the states and constraint values are not coordinates here: the spectrum in q */
    }
    if (rc) goto done;
    /* the rounding of the data: the same analysis at alpha (1 + d), eigenvalues only */
    for (size_t t = 0; t < sizeof pen_alpha_samples / sizeof *pen_alpha_samples; t++) {
        double v3 = 0, s3 = 0;
        rc = pen_eigs(&B, &PR, tf, a1 * (1.0 + pen_alpha_samples[t]), opt->pen_omega, r, wr3, wi3, spur3, NULL,
                      NULL, &v3, &s3, NULL, NULL, st);
        if (rc) goto done;
        pen_round_sample(lin->spectrum, wr3, wi3, spur3, rnd);
    }
    /* the rounding floor grows with the penalty's size: alpha |Xh|_1 = |Xi|_1 with a general Xi */
    double err = pen_err_est(&B, PR.Xh ? a1 * PR.xnorm : a1, opt->pen_ratio, lin->spectrum, wr2, wi2, spur2, rnd);
    /* clusters: a near-zero beside zeros (the Whipple bicycle's) is any of them within their estimates */
    mbl_lin_spectrum *sp1 = lin->spectrum;
    rc = lin_err_clusters(N, sp1->re, sp1->im, sp1->spurious, sp1->err, st);
    if (rc) goto done;
    for (int i = 0; i < N; i++)
        if (!sp1->spurious[i] && isfinite(sp1->err[i])) err = fmax(err, sp1->err[i]);
    lin->err_est = err;
    if (B.ext) {
        rc = pen_ss_ext(&B, &PR, a1, opt->pen_omega, lin, st);
        if (rc) goto done;
        goto names;
    }
    rc = pen_state_space(&B, &PR, a1, opt->pen_omega, Mp, Cp, Kp, W, &lu, lin, st);
    if (rc) goto done;
names:
    for (int i = 0; i < n; i++) lin->q_S[i + (size_t)i * n] = lin->v_W[i + (size_t)i * n] = 1.0;
    if (lin_set_names(md, lin, mv->qname)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->selection, sizeof lin->selection, "all coordinates%s (penalty ODE, source 001 Eq. 14)",
             nX ? " and the ode states" : "");
    int nphys = 0, nlost = 0; /* physical by their scores, and those of them QZ found infinite */
    for (int i = 0; i < N; i++) nphys += !sp1->spurious[i];
    nlost = 2 * (n - r) - mv->k + nX - nphys;
    char lost[96] = "";
    if (nlost > 0) snprintf(lost, sizeof lost, " (and %d beyond the pencil's resolution: infinite)", nlost);
    snprintf(lin->notes, sizeof lin->notes,
             "alpha %.3g, xi %.3g, omega %.3g; %d physical%s, %d spurious; largest physical violation %.2e, smallest "
             "spurious %.2e; error estimate %.2e (alpha / %.3g)%s",
             a1, opt->pen_xi, opt->pen_omega, nphys, lost, 2 * r + mv->k, v1, s1, err, opt->pen_ratio,
             tf ? "; point with motion: eigenvalues of the penalty ODE in the coordinates (user's states, constraint "
                  "values)"
                : (mv->nus > 0 || m > 0 || mv->k > 0) && moving ? MBL_MOVING_NOTE : "");
    pen_notes_tail(opt, m, eq_moved, eq_viol, lin);
    *out = lin;
    lin = NULL;
done:
    lin_blocks_free(&B);
    lin_pen_rows_free(&PR);
    lin_pen_second_free(&P2);
    lin_rstates_free(&rs);
    mbl_free(rows), mbl_free(rnd), mbl_free(wr2), mbl_free(wi2), mbl_free(spur2);
    mbl_free(wr3), mbl_free(wi3), mbl_free(spur3);
    mbl_free(Mp), mbl_free(Cp), mbl_free(Kp), mbl_free(W);
    mbla_dlu_free(lu);
    mbl_linear_free(lin);
    return rc;
}

int lin_penalty_state_space(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                            mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, nr = mv->nr, ny = mv->ny, rc;
    mbl_blocks B;
    mbla_dlu *lu = NULL;
    *out = NULL;
    rc = lin_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    mbl_linear *lin = lin_linear_alloc_x(n, n, n, 0, nr, ny);
    double *Mp = mbl_calloc((size_t)n * n + 1, sizeof *Mp), *Cp = mbl_calloc((size_t)n * n + 1, sizeof *Cp);
    double *Kp = mbl_calloc((size_t)n * n + 1, sizeof *Kp), *W = mbl_calloc((size_t)n * (2 * n + nr) + 1, sizeof *W);
    lin_pen_rows PR;
    memset(&PR, 0, sizeof PR);
    if (!lin || !Mp || !Cp || !Kp || !W) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = lin_pen_rows_init(&B, opt, &PR, st);
    if (!rc) rc = pen_state_space(&B, &PR, opt->pen_alpha, opt->pen_omega, Mp, Cp, Kp, W, &lu, lin, st);
    for (int i = 0; !rc && i < n; i++) lin->q_S[i + (size_t)i * n] = lin->v_W[i + (size_t)i * n] = 1.0;
    if (!rc && lin_set_names(md, lin, mv->qname)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) *out = lin, lin = NULL;
    lin_blocks_free(&B);
    lin_pen_rows_free(&PR);
    mbla_dlu_free(lu);
    mbl_free(Mp), mbl_free(Cp), mbl_free(Kp), mbl_free(W);
    mbl_linear_free(lin);
    return rc;
}
