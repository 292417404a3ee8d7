/* Sensitivities (sensitivity.c): the quadratic pencil of the linearized equations over the
 * independent constraints, its action on vectors, its pattern, and the backward error and
 * refinement of its eigentriples. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/sens_internal.h"

/* Independent constraints: QR with column pivoting of [Phi_q; c_v]^T, rows at unit 2-norm. */
int study_sens_pencil_map(ctx *c, mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m, k = L->k, nF = L->nF, nunk = L->nunk, mk = m + k, rc = 0;
    c->rowmap = mbl_alloc_array((size_t)nF + 1, sizeof *c->rowmap);
    c->colmap = mbl_alloc_array((size_t)nunk + 1, sizeof *c->colmap);
    c->colmat = mbl_alloc_array((size_t)nunk + 1, sizeof *c->colmat);
    double *CT = mbl_alloc_array((size_t)n * mk + 1, sizeof *CT);
    int *jpvt = mbl_alloc_array((size_t)mk + 1, sizeof *jpvt), *sel = mbl_alloc_array((size_t)mk + 1, sizeof *sel);
    if (!c->rowmap || !c->colmap || !c->colmat || !CT || !jpvt || !sel) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    int rank = 0;
    for (int a = 0; a < mk; a++) sel[a] = 0;
    if (mk) {
        int cq = L->col0[MBL_DAE_Q], cv = L->col0[MBL_DAE_V];
        for (int a = 0; a < mk; a++) {
            int row = a < m ? L->row0[MBL_DAE_PHI] + a : L->row0[MBL_DAE_NH] + (a - m);
            int c0 = a < m ? cq : cv; /* Phi_q, or A = c_v */
            double nrm = 0;
            for (int i = 0; i < n; i++) {
                double v = c->Jd[row + (size_t)(c0 + i) * nF];
                CT[i + (size_t)a * n] = v;
                nrm += v * v;
            }
            nrm = nrm > 0 ? 1.0 / sqrt(nrm) : 1.0;
            for (int i = 0; i < n; i++) CT[i + (size_t)a * n] *= nrm;
        }
        rc = mbla_qrcp(n, mk, CT, n, c->rank_tol, jpvt, &rank, NULL, 1, 0, NULL, 1, st);
        if (rc) goto done;
        for (int a = 0; a < rank; a++) sel[jpvt[a]] = 1;
    }
    for (int i = 0; i < nF; i++) c->rowmap[i] = -1;
    for (int q = 0; q < nunk; q++) c->colmap[q] = -1, c->colmat[q] = -1;
    for (int i = 0; i < n; i++) {
        c->rowmap[L->row0[MBL_DAE_EOM] + i] = i;
        c->colmap[L->col0[MBL_DAE_VDOT] + i] = i, c->colmat[L->col0[MBL_DAE_VDOT] + i] = 2;
        c->colmap[L->col0[MBL_DAE_V] + i] = i, c->colmat[L->col0[MBL_DAE_V] + i] = 1;
        c->colmap[L->col0[MBL_DAE_Q] + i] = i, c->colmat[L->col0[MBL_DAE_Q] + i] = 0;
    }
    int N = n;
    c->mi = c->ki = 0;
    for (int a = 0; a < mk; a++) {
        if (!sel[a]) continue;
        if (a < m) {
            c->rowmap[L->row0[MBL_DAE_PHI] + a] = N;
            c->colmap[L->col0[MBL_DAE_LAMBDA] + a] = N, c->colmat[L->col0[MBL_DAE_LAMBDA] + a] = 0;
            c->mi++;
        } else {
            c->rowmap[L->row0[MBL_DAE_NH] + (a - m)] = N;
            c->colmap[L->col0[MBL_DAE_MU] + (a - m)] = N, c->colmat[L->col0[MBL_DAE_MU] + (a - m)] = 0;
            c->ki++;
        }
        N++;
    }
    /* user ODE states X (Xdot in P1, X in P0) with their ODE rows, implicit variables Z (P0) with
     * their equations */
    int nX = L->col0[MBL_DAE_X + 1] - L->col0[MBL_DAE_X], nZ = L->col0[MBL_DAE_Z + 1] - L->col0[MBL_DAE_Z];
    c->x0 = N, c->nX = nX;
    for (int i = 0; i < nX; i++, N++) {
        c->rowmap[L->row0[MBL_DAE_ODE] + i] = N;
        c->colmap[L->col0[MBL_DAE_XDOT] + i] = N, c->colmat[L->col0[MBL_DAE_XDOT] + i] = 1;
        c->colmap[L->col0[MBL_DAE_X] + i] = N, c->colmat[L->col0[MBL_DAE_X] + i] = 0;
    }
    for (int i = 0; i < nZ; i++, N++) {
        c->rowmap[L->row0[MBL_DAE_VAR] + i] = N;
        c->colmap[L->col0[MBL_DAE_Z] + i] = N, c->colmat[L->col0[MBL_DAE_Z] + i] = 0;
    }
    c->N = N;
done:
    mbl_free(CT);
    mbl_free(jpvt);
    mbl_free(sel);
    return rc;
}

/* P0, P1, P2 (N x N each, zeroed here) from Jacobian values in the model's pattern. */
void study_sens_fill_pencil(const ctx *c, const double *vals, double *P0, double *P1, double *P2)
{
    size_t NN = (size_t)c->N * c->N;
    memset(P0, 0, NN * sizeof *P0);
    memset(P1, 0, NN * sizeof *P1);
    memset(P2, 0, NN * sizeof *P2);
    double *P[3] = {P0, P1, P2};
    for (int e = 0; e < c->L.jnz; e++) {
        int pr = c->rowmap[c->L.jrow[e]], q = c->L.jcol[e];
        if (pr < 0 || c->colmat[q] < 0) continue;
        P[c->colmat[q]][pr + (size_t)c->colmap[q] * c->N] += vals[e];
    }
}

/* y = (s^2 P2 + s P1 + P0) x, complex */
void study_sens_pencil_apply(int N, const double *P0, const double *P1, const double *P2, double complex s,
                             const double complex *x, double complex *y)
{
    double complex s2 = s * s;
    for (int i = 0; i < N; i++) y[i] = 0;
    for (int j = 0; j < N; j++) {
        double complex xj = x[j];
        if (xj == 0) continue;
        const double *c0 = P0 + (size_t)j * N, *c1 = P1 + (size_t)j * N, *c2 = P2 + (size_t)j * N;
        for (int i = 0; i < N; i++)
            if (c0[i] != 0 || c1[i] != 0 || c2[i] != 0) y[i] += (s2 * c2[i] + s * c1[i] + c0[i]) * xj;
    }
}

/* the complex vector j of LAPACK's packed real form (pairs: V(:,j) +- i V(:,j+1)) */
void study_sens_unpack_vec(const double *V, int ld, int nrows, int row0, const double *alphai, int j, double complex *out)
{
    if (alphai[j] == 0) {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)j * ld];
    } else if (alphai[j] > 0) {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)j * ld] + I * V[row0 + i + (size_t)(j + 1) * ld];
    } else {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)(j - 1) * ld] - I * V[row0 + i + (size_t)j * ld];
    }
}

/* the study_sens_bordered matrix [P(s) P'(s) x; e_kk^T 0] as a complex CSC (pattern of P0|P1|P2 plus the
 * last column and the entry (N, kk)) */
int study_sens_bordered(int N, const double *P0, const double *P1, const double *P2, double complex s,
                        const double complex *dPx, int kk, mbla_csc **A, double **az, mbl_status *st)
{
    int nz = 0;
    for (size_t e = 0; e < (size_t)N * N; e++)
        if (P0[e] != 0 || P1[e] != 0 || P2[e] != 0) nz++;
    nz += N + 2;
    int rc = mbla_csc_new(N + 1, N + 1, nz, A, st);
    if (rc) return rc;
    *az = mbl_alloc_array(2 * (size_t)nz + 1, sizeof **az);
    if (!*az) {
        mbla_csc_free(*A);
        *A = NULL;
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbla_csc *M = *A;
    double *z = *az;
    double complex s2 = s * s;
    int p = 0;
    for (int j = 0; j <= N; j++) {
        M->p[j] = p;
        if (j < N) {
            for (int i = 0; i < N; i++) {
                size_t e = i + (size_t)j * N;
                if (P0[e] != 0 || P1[e] != 0 || P2[e] != 0) {
                    double complex v = s2 * P2[e] + s * P1[e] + P0[e];
                    M->i[p] = i;
                    z[2 * p] = creal(v), z[2 * p + 1] = cimag(v);
                    p++;
                }
            }
            if (j == kk) {
                M->i[p] = N;
                z[2 * p] = 1, z[2 * p + 1] = 0;
                p++;
            }
        } else {
            for (int i = 0; i < N; i++) {
                M->i[p] = i;
                z[2 * p] = creal(dPx[i]), z[2 * p + 1] = cimag(dPx[i]);
                p++;
            }
        }
    }
    M->p[N + 1] = p;
    return 0;
}

/* The pattern of P0 | P1 | P2 as a CSC matrix (values filled by pencil_values). */
int study_sens_pencil_pattern(int N, const double *P0, const double *P1, const double *P2, mbla_csc **A, mbl_status *st)
{
    int nz = 0;
    for (size_t e = 0; e < (size_t)N * N; e++)
        if (P0[e] != 0 || P1[e] != 0 || P2[e] != 0) nz++;
    int rc = mbla_csc_new(N, N, nz + 1, A, st);
    if (rc) return rc;
    int p = 0;
    for (int j = 0; j < N; j++) {
        (*A)->p[j] = p;
        for (int i = 0; i < N; i++) {
            size_t e = i + (size_t)j * N;
            if (P0[e] != 0 || P1[e] != 0 || P2[e] != 0) (*A)->i[p++] = i;
        }
    }
    (*A)->p[N] = p;
    return 0;
}

static void pencil_values(const mbla_csc *A, int N, const double *P0, const double *P1, const double *P2,
                          double complex s, double *az)
{
    for (int j = 0; j < N; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) {
            size_t e = A->i[p] + (size_t)j * N;
            double complex v = s * s * P2[e] + s * P1[e] + P0[e];
            az[2 * p] = creal(v), az[2 * p + 1] = cimag(v);
        }
}

/* Normwise backward error of an eigentriple (s, v, w) of P(s) = s^2 P2 + s P1 + P0 (Tisseur 2000,
 * Thm. 1): the larger of ||P(s) v|| / (a ||v||) and ||w^H P(s)|| / (a ||w||), a = |s|^2 ||P2|| +
 * |s| ||P1|| + ||P0|| (Frobenius norms nrm[0..2] of P0, P1, P2): the smallest relative change of
 * the coefficients for which the triple is exact. Infinite (not a number) when s or a vector is.
 * With a = 0 (s = 0 and P0 = 0: a one-coordinate model exactly at a divergence) the triple is
 * exact, 0, when P(s) v and w^H P(s) vanish. */
double study_sens_pair_berr(const mbla_csc *A, int N, const double *P0, const double *P1, const double *P2,
                            const double nrm[3], double complex s, const double complex *v, const double complex *w,
                            double complex *r /* 2N scratch */)
{
    double as = cabs(s), a = as * as * nrm[2] + as * nrm[1] + nrm[0], vn = 0, wn = 0, rv = 0, rw = 0;
    if (!isfinite(as) || !(a >= 0)) return INFINITY;
    double complex *rl = r + N;
    for (int i = 0; i < N; i++) r[i] = 0, rl[i] = 0;
    for (int j = 0; j < N; j++)
        for (int p = A->p[j]; p < A->p[j + 1]; p++) {
            int i = A->i[p];
            size_t e = i + (size_t)j * N;
            double complex pe = s * s * P2[e] + s * P1[e] + P0[e];
            r[i] += pe * v[j];
            rl[j] += conj(w[i]) * pe;
        }
    for (int i = 0; i < N; i++) {
        vn += creal(v[i] * conj(v[i])), wn += creal(w[i] * conj(w[i]));
        rv += creal(r[i] * conj(r[i])), rw += creal(rl[i] * conj(rl[i]));
    }
    if (!(vn > 0) || !(wn > 0)) return INFINITY;
    if (a == 0) return rv == 0 && rw == 0 ? 0.0 : INFINITY;
    double e = fmax(sqrt(rv / vn), sqrt(rw / wn)) / a;
    return isfinite(e) ? e : INFINITY;
}

/* Two-sided Rayleigh quotient iteration on the quadratic pencil from the QZ eigentriple:
 * v <- P(s)^-1 v, w <- P(s)^-H w, s <- s - w^H P(s) v / (w^H P'(s) v), up to iters times. QZ on
 * the companion form of a stiff model leaves relative errors of 1e-9 in the high modes; this
 * makes them rounding-level. A step is kept only when the new triple's backward error (study_sens_pair_berr)
 * is no larger than the one before, or at rounding level (REFINE_BERR_FLOOR): at a defective
 * eigenvalue (the double zero of a cyclic coordinate) w^H P'(s) v vanishes and the Rayleigh step
 * can throw s anywhere, to 1e43 as rounding decides, where the vectors it came with are no
 * eigenvectors at all. A failed factorization (an exactly singular P(s)) keeps the values before.
 * keep: 2N scratch. *berr: the kept triple's backward error. Returns the steps kept (0: the QZ
 * triple as given). */
#define REFINE_BERR_FLOOR (64 * DBL_EPSILON)
int study_sens_refine(const mbla_csc *A, double *az, int N, const double *P0, const double *P1, const double *P2,
                      const double nrm[3], double complex *s, double complex *v, double complex *w, double complex *tmp,
                      double complex *keep, int real, int iters, double *berr)
{
    double *b = (double *)tmp; /* 2N doubles: interleaved complex */
    double eta = study_sens_pair_berr(A, N, P0, P1, P2, nrm, *s, v, w, tmp);
    int kept = 0;
    for (int it = 0; it < iters; it++) {
        mbla_klu *lu = NULL;
        double complex s0 = *s;
        for (int i = 0; i < N; i++) keep[i] = v[i], keep[N + i] = w[i];
        pencil_values(A, N, P0, P1, P2, *s, az);
        int ok = mbla_kluz_new(A, az, NULL, &lu, NULL) == 0;
        double complex *vecs[2] = {v, w};
        for (int k = 0; ok && k < 2; k++) {
            double complex *x = vecs[k];
            for (int i = 0; i < N; i++) b[2 * i] = creal(x[i]), b[2 * i + 1] = cimag(x[i]);
            ok = mbla_kluz_solve(lu, k ? 'C' : 'N', 1, b, N, NULL) == 0;
            double nrm_b = 0;
            for (int i = 0; ok && i < 2 * N; i++) nrm_b = fmax(nrm_b, fabs(b[i]));
            ok = ok && nrm_b > 0 && isfinite(nrm_b);
            for (int i = 0; ok && i < N; i++) x[i] = (b[2 * i] + I * b[2 * i + 1]) / nrm_b;
        }
        mbla_klu_free(lu);
        double complex num = 0, den = 0;
        for (int j = 0; ok && j < N; j++)
            for (int p = A->p[j]; p < A->p[j + 1]; p++) {
                int i = A->i[p];
                size_t e = i + (size_t)j * N;
                num += conj(w[i]) * (*s * *s * P2[e] + *s * P1[e] + P0[e]) * v[j];
                den += conj(w[i]) * (2.0 * *s * P2[e] + P1[e]) * v[j];
            }
        ok = ok && den != 0 && isfinite(cabs(num / den));
        if (ok) {
            *s -= num / den;
            if (real) *s = creal(*s);
        }
        double e = ok ? study_sens_pair_berr(A, N, P0, P1, P2, nrm, *s, v, w, tmp) : INFINITY;
        if (!(e <= fmax(eta, REFINE_BERR_FLOOR))) { /* worse: the triple before stays */
            *s = s0;
            for (int i = 0; i < N; i++) v[i] = keep[i], w[i] = keep[N + i];
            break;
        }
        eta = e, kept++;
    }
    if (berr) *berr = eta;
    return kept;
}

/* ---- the part of the pencil the eigenvalues see ---------------------------------------------
 *
 * A right eigenvector's dq lies in null(Phi_q) (the pencil's holonomic rows), a left one's in
 * null([Phi_q; A]) (its multiplier columns), so ds = -w^H dP v / w^H P' v sees a change dP of the
 * coefficients only through Pl dP_EOM and dP_q Pr: the equations of motion's rows projected by
 * Pl = I - Ql Ql^T onto null([Phi_q; A]), every row's coordinate columns by Pr = I - Qr Qr^T onto
 * null(Phi_q) (Ql, Qr orthonormal bases of the constraints' gradients, QR with column pivoting).
 * A change in the directions the constraints remove (an Euler parameter's normalization: the
 * equations off the unit sphere need not keep the symmetries they have on it) moves no eigenvalue.
 * T0, T1, T2 (N x N, N >= n the pencil's order, its first n rows and columns those of the
 * equations of motion and coordinates; the constraint rows n.. with Phi_q in P0 and A in P1) are
 * projected in place. */
static int null_projector(int n, int rows, const double *P0, const double *P1, int N, int mi, double tol, double *Pj,
                          double *G, double *Q, int *jpvt, mbl_status *st)
{
    for (int a = 0; a < rows; a++)
        for (int i = 0; i < n; i++)
            G[i + (size_t)a * n] = a < mi ? P0[(size_t)(n + a) + (size_t)i * N] : P1[(size_t)(n + a) + (size_t)i * N];
    int rank = 0, rc = 0;
    if (rows) rc = mbla_qrcp(n, rows, G, n, tol, jpvt, &rank, Q, n, n, NULL, 1, st);
    if (rc) return rc;
    for (size_t e = 0; e < (size_t)n * n; e++) Pj[e] = 0;
    for (int i = 0; i < n; i++) Pj[i + (size_t)i * n] = 1;
    if (rank) rc = mbla_gemm('N', 'T', n, n, rank, -1.0, Q, n, Q, n, 1.0, Pj, n, st);
    return rc;
}

int study_sens_project(const ctx *c, int N, const double *P0, const double *P1, double *T[3], mbl_status *st)
{
    int n = c->L.n, mi = c->mi, ki = c->ki, rc = 0;
    size_t nn = (size_t)n * n;
    double *Pr = mbl_alloc_array(3 * nn + (size_t)n * N + (size_t)n * (mi + ki) + 1, sizeof *Pr);
    int *jpvt = mbl_alloc_array((size_t)(mi + ki) + 1, sizeof *jpvt);
    if (!Pr || !jpvt) {
        mbl_free(Pr), mbl_free(jpvt);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double *Pl = Pr + nn, *Q = Pl + nn, *W = Q + nn, *G = W + (size_t)n * N;
    rc = null_projector(n, mi, P0, P1, N, mi, c->rank_tol, Pr, G, Q, jpvt, st);
    if (!rc) rc = null_projector(n, mi + ki, P0, P1, N, mi, c->rank_tol, Pl, G, Q, jpvt, st);
    for (int k = 0; k < 3 && !rc; k++) {
        /* the rows of the equations of motion: Pl T[0:n, :]; then the coordinate columns: T[:, 0:n] Pr */
        rc = mbla_gemm('N', 'N', n, N, n, 1.0, Pl, n, T[k], N, 0.0, W, n, st);
        for (int jj = 0; jj < N && !rc; jj++)
            for (int i = 0; i < n; i++) T[k][i + (size_t)jj * N] = W[i + (size_t)jj * n];
        if (!rc) rc = mbla_gemm('N', 'N', N, n, n, 1.0, T[k], N, Pr, n, 0.0, W, N, st);
        for (size_t e = 0; e < (size_t)N * n && !rc; e++) T[k][e] = W[e];
    }
    mbl_free(Pr), mbl_free(jpvt);
    return rc;
}

/* ---- cyclic coordinates: their zero eigenvalues deflated exactly ------------------------------
 *
 * A displacement column j of P0 that is exactly zero (no equation depends on coordinate j: a
 * cyclic coordinate, such as a vehicle's position, heading or wheel angles) makes s = 0 an
 * eigenvalue with the vector e_j. Several of them, with the motion's other zeros, form a
 * defective cluster whose rounding in QZ (about sqrt(eps) of the spectrum's scale) swamps a real
 * eigenvalue passing near zero (the bicycle's capsize mode near its critical speed: 4e-7 off at
 * |s| = 1e-5). Column j divided by s (its rate z_j = s x_j the unknown): P0_j <- P1_j,
 * P1_j <- P2_j, P2_j <- 0, the same pencil without that zero, exactly; again while P0_j is zero
 * and the column is not (at most twice). The derivatives dP along with it, where their dP0_j is
 * zero to SENS_DEFL_TOL of the largest |dP0| entry (the coordinate stays cyclic as the parameter
 * changes; else the column is kept). defl[j] counts the divisions (their sum in *ndefl). */
#define SENS_DEFL_TOL 1e-12

static int col_zero(const double *c, int N)
{
    for (int i = 0; i < N; i++)
        if (c[i] != 0) return 0;
    return 1;
}

static void col_shift(double *P0, double *P1, double *P2, int N, int jj)
{
    double *c0 = P0 + (size_t)jj * N, *c1 = P1 + (size_t)jj * N, *c2 = P2 + (size_t)jj * N;
    memcpy(c0, c1, (size_t)N * sizeof *c0);
    memcpy(c1, c2, (size_t)N * sizeof *c1);
    memset(c2, 0, (size_t)N * sizeof *c2);
}

void study_sens_deflate(int N, int nshape, double *P0, double *P1, double *P2, double *dP, int nwrt, int *defl,
                        int *ndefl)
{
    size_t NN = (size_t)N * N;
    *ndefl = 0;
    for (int jj = 0; jj < N; jj++) defl[jj] = 0;
    for (int jj = 0; jj < nshape; jj++)
        for (int d = 0; d < 2; d++) {
            size_t o = (size_t)jj * N;
            if (!col_zero(P0 + o, N) || (col_zero(P1 + o, N) && col_zero(P2 + o, N))) break;
            int ok = 1;
            for (int w = 0; w < nwrt && ok; w++) {
                const double *D0 = dP + 3 * NN * w;
                double big = 0, here = 0;
                for (size_t e = 0; e < NN; e++) big = fmax(big, fabs(D0[e]));
                for (int i = 0; i < N; i++) here = fmax(here, fabs(D0[o + i]));
                ok = here <= SENS_DEFL_TOL * big;
            }
            if (!ok) break;
            col_shift(P0, P1, P2, N, jj);
            for (int w = 0; w < nwrt; w++) {
                double *D0 = dP + 3 * NN * w;
                col_shift(D0, D0 + NN, D0 + 2 * NN, N, jj);
            }
            defl[jj]++, (*ndefl)++;
        }
}

/* The pencil before study_sens_deflate (into U0, U1, U2): U_k's column j is P_{k - defl[j]}'s. */
void study_sens_undeflate(int N, const double *P0, const double *P1, const double *P2, const int *defl, double *U0,
                          double *U1, double *U2)
{
    const double *P[3] = {P0, P1, P2};
    double *U[3] = {U0, U1, U2};
    for (int jj = 0; jj < N; jj++)
        for (int k = 0; k < 3; k++) {
            size_t o = (size_t)jj * N;
            int src = k - defl[jj];
            if (src >= 0) memcpy(U[k] + o, P[src] + o, (size_t)N * sizeof *U[k]);
            else memset(U[k] + o, 0, (size_t)N * sizeof *U[k]);
        }
}
