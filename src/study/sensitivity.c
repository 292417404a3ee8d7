/* Eigenvalue, frequency, damping-ratio and mode-shape sensitivities (docs/study.md).
 *
 * The linearized DAE at a point, with dq, dlambda, dmu ~ e^{s t}, is the quadratic pencil over
 * z = [dq; dlambda; dmu] (independent constraints only, N = n + m' + k'):
 *
 *   P(s) = s^2 P2 + s P1 + P0,  P2 = [R_vdot 0; 0 0],  P1 = [R_v 0; c_v 0],
 *                               P0 = [R_q Phi_q^T A^T; Phi_q 0 0; c_q 0 0]
 *
 * (R the equations of motion, Phi the holonomic and c the non-holonomic constraints; R_lambda =
 * Phi_q^T, R_mu = A^T = c_v^T). Its finite eigenvalues are those of every exact method's linear
 * model, with no choice of states. For a simple eigenvalue s with right and left null vectors
 * P(s) v = 0, w^H P(s) = 0:
 *
 *   ds/dp = - w^H (dP/dp)(s) v / (w^H P'(s) v),   P'(s) = 2 s P2 + P1,
 *
 * where dP/dp is the total derivative: d(J)/dp = J_p + sum_c J_{x_c} dx_c/dp, J the model's
 * Jacobian, dx/dp the shift of the operating point by the implicit function theorem on the
 * equations that define it (the same rows and unknowns as mbl_operating_point solves). Every
 * derivative comes from the expression engine (mbl_dae_deriv); the eigenvectors from QZ on the
 * companion form of P (v its lower half, w the upper half of the left vector). The mode shape
 * (dq with its largest component fixed at 1) and its derivative come from the bordered system
 * [P(s) P'(s) v; e_k^T 0] [v'; s'] = [-dP(s) v; 0] (complex KLU). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "mblin/sensitivity.h"

#define TWO_PI 6.283185307179586476925286766559

void mbl_sens_options_default(mbl_sens_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->shapes = 1;
    opt->dense_max = 600;
    opt->zero_tol = 1e-9;
    opt->repeat_tol = 1e-8;
    opt->rank_tol = 1e-9;
}

void mbl_sensitivity_free(mbl_sensitivity *s)
{
    if (!s) return;
    if (s->modes)
        for (int i = 0; i < s->nmode; i++) {
            mbl_free(s->modes[i].dre);
            mbl_free(s->modes[i].dim);
            mbl_free(s->modes[i].dfreq_hz);
            mbl_free(s->modes[i].ddamping);
        }
    mbl_free(s->modes);
    mbl_free(s->wrt);
    mbl_free(s->shape_re);
    mbl_free(s->shape_im);
    mbl_free(s->dshape_re);
    mbl_free(s->dshape_im);
    mbl_free(s->dq);
    mbl_free(s->dv);
    mbl_free(s->dlambda);
    mbl_free(s->point_defined);
    mbl_free(s);
}

/* ---- the shift of the operating point --------------------------------------------------- */

typedef struct ctx {
    mbl_dae_layout L;
    const mbl_point *pt;
    double *Jd;      /* nF x nunk dense Jacobian */
    double *Fp;      /* nF x np */
    double *x0p;     /* nunk x np */
    int *cyclic;     /* n: no residual depends on q_i */
    double rank_tol;
    /* pencil */
    int N, mi, ki;
    int x0, nX;      /* the pencil columns of the user ODE states X: x0 .. x0 + nX - 1 */
    int *rowmap;     /* nF: pencil row of a residual row, or -1 */
    int *colmap;     /* nunk: pencil column (0..N-1) and which matrix (colmat) */
    int *colmat;     /* nunk: 0 P0, 1 P1, 2 P2, -1 none */
} ctx;

#define RB(g) (1u << (g))

/* One stage of the point's definition: rows `rowmask` solved for the columns `colmask` (cyclic
 * coordinates skipped when skip_cyclic). dx holds the current derivative (the file's data where
 * the stage starts from them); the stage's columns get dx_C += pinv(J_RC) r, r = -(Fp_R + J_R dx):
 * for a regular J_RC the implicit function theorem, for a minimum-norm projection its derivative
 * when the file's point already satisfies the rows. */
static int point_stage(const ctx *c, unsigned rowmask, unsigned colmask, int skip_cyclic, int nw, const int *wrt,
                       double *dxs, int *persist, mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int nF = L->nF, nunk = L->nunk, nr = 0, nc = 0, rc = 0;
    int *rows = mbl_alloc_array((size_t)nF + 1, sizeof *rows), *cols = mbl_alloc_array((size_t)nunk + 1, sizeof *cols);
    double *A = NULL, *r = NULL, *s = NULL, *U = NULL, *VT = NULL, *rs = NULL, *y = NULL;
    if (!rows || !cols) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int g = 0; g < MBL_DAE_NROWG; g++)
        if ((rowmask >> g) & 1u)
            for (int i = L->row0[g]; i < L->row0[g + 1]; i++) rows[nr++] = i;
    for (int b = 0; b < MBL_DAE_NBLK; b++)
        if ((colmask >> b) & 1u)
            for (int q = L->col0[b]; q < L->col0[b + 1]; q++) {
                if (b == MBL_DAE_Q && skip_cyclic && c->cyclic[q - L->col0[b]]) continue;
                cols[nc++] = q;
            }
    if (!nr || !nc || !nw) goto done;
    int kk = nr < nc ? nr : nc;
    A = mbl_alloc_array((size_t)nr * nc + 1, sizeof *A);
    r = mbl_alloc_array((size_t)nr + 1, sizeof *r);
    rs = mbl_alloc_array((size_t)nr + 1, sizeof *rs);
    y = mbl_alloc_array((size_t)kk + 1, sizeof *y);
    s = mbl_alloc_array((size_t)kk + 1, sizeof *s);
    U = mbl_alloc_array((size_t)nr * kk + 1, sizeof *U);
    VT = mbl_alloc_array((size_t)kk * nc + 1, sizeof *VT);
    if (!A || !r || !rs || !y || !s || !U || !VT) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int a = 0; a < nr; a++) {
        int i = rows[a];
        double nrm = 0;
        for (int b = 0; b < nc; b++) {
            double v = c->Jd[i + (size_t)cols[b] * nF];
            A[a + (size_t)b * nr] = v;
            nrm += v * v;
        }
        rs[a] = nrm = nrm > 0 ? 1.0 / sqrt(nrm) : 1.0; /* rows to unit 2-norm: the rank is unit-free */
        for (int b = 0; b < nc; b++) A[a + (size_t)b * nr] *= nrm;
    }
    rc = mbla_svd(nr, nc, A, nr, 'S', s, U, nr, VT, kk, st); /* once for every parameter */
    if (rc) goto done;
    int rank = mbla_rank_from_diag(nr, nc, kk, s, 1, c->rank_tol);
    for (int w = 0; w < nw; w++) {
        double *dx = dxs + (size_t)w * nunk;
        int j = wrt[w];
        for (int a = 0; a < nr; a++) {
            int i = rows[a];
            double ri = -c->Fp[i + (size_t)j * nF];
            for (int q = 0; q < nunk; q++)
                if (dx[q] != 0) ri -= c->Jd[i + (size_t)q * nF] * dx[q];
            r[a] = ri * rs[a];
        }
        for (int t = 0; t < rank; t++) {
            double v = 0;
            for (int a = 0; a < nr; a++) v += U[a + (size_t)t * nr] * r[a];
            y[t] = v / s[t];
        }
        /* the part of r outside the range of J_RC: nonzero when the rows cannot follow the
         * parameter (a singular configuration whose geometry it changes): no derivative */
        double rn = 0, out = 0;
        for (int a = 0; a < nr; a++) {
            double u = r[a];
            for (int t = 0; t < rank; t++) u -= U[a + (size_t)t * nr] * (y[t] * s[t]);
            out += u * u;
            rn += r[a] * r[a];
        }
        if (out > 1e-12 * fmax(rn, 1e-300) && sqrt(out) > 1e-10) persist[w] = 0;
        for (int b = 0; b < nc; b++) {
            double v = 0;
            for (int t = 0; t < rank; t++) v += VT[t + (size_t)b * kk] * y[t];
            dx[cols[b]] += v;
        }
    }
done:
    mbl_free(rows);
    mbl_free(cols);
    mbl_free(A);
    mbl_free(r);
    mbl_free(rs);
    mbl_free(y);
    mbl_free(s);
    mbl_free(U);
    mbl_free(VT);
    return rc;
}

/* dx/dp for every parameter in wrt (dxs: nunk x nw): the same stages as mbl_operating_point for
 * the point's kind. */
static int point_derivative(const ctx *c, int nw, const int *wrt, double *dxs, int *persist, mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int nunk = L->nunk, rc = 0;
    for (int w = 0; w < nw; w++) {
        double *dx = dxs + (size_t)w * nunk;
        for (int q = 0; q < nunk; q++) dx[q] = c->x0p[q + (size_t)wrt[w] * nunk];
        for (int q = L->col0[MBL_DAE_VDOT]; q < L->col0[MBL_DAE_VDOT + 1]; q++) dx[q] = 0;
        for (int q = L->col0[MBL_DAE_LAMBDA]; q < L->col0[MBL_DAE_MU + 1]; q++) dx[q] = 0;
        if (c->pt->at == MBL_AT_EQUILIBRIUM)
            for (int q = L->col0[MBL_DAE_V]; q < L->col0[MBL_DAE_V + 1]; q++) dx[q] = 0;
        persist[w] = 1;
    }
    /* user ODE states X and implicit variables Z (source 000 Eq. 10) as mbl_operating_point solves
     * them: the ODEs and the variables' equations with the accelerations (Xdot, Z) and, at an
     * equilibrium or a steady motion, with q (X, Z) */
    unsigned ext_rows = RB(MBL_DAE_ODE) | RB(MBL_DAE_VAR);
    unsigned acc_rows = RB(MBL_DAE_EOM) | RB(MBL_DAE_PHIDD) | RB(MBL_DAE_NHD) | ext_rows;
    unsigned acc_cols = RB(MBL_DAE_VDOT) | RB(MBL_DAE_LAMBDA) | RB(MBL_DAE_MU) | RB(MBL_DAE_XDOT) | RB(MBL_DAE_Z);
    unsigned pos_cols = RB(MBL_DAE_Q) | RB(MBL_DAE_LAMBDA) | RB(MBL_DAE_MU) | RB(MBL_DAE_X) | RB(MBL_DAE_Z);
    for (int w = 0; w < nw; w++) /* solved for, not data */
        for (int q = L->col0[MBL_DAE_XDOT]; q < L->col0[MBL_DAE_Z + 1]; q++) dxs[(size_t)w * nunk + q] = 0;
    switch (c->pt->at) {
    case MBL_AT_EQUILIBRIUM:
        rc = point_stage(c, RB(MBL_DAE_EOM) | RB(MBL_DAE_PHI) | RB(MBL_DAE_NH) | ext_rows, pos_cols, 0, nw, wrt, dxs,
                         persist, st);
        break;
    case MBL_AT_GIVEN:
        if (L->m) rc = point_stage(c, RB(MBL_DAE_PHI), RB(MBL_DAE_Q), 0, nw, wrt, dxs, persist, st);
        if (!rc && L->m + L->k)
            rc = point_stage(c, RB(MBL_DAE_PHID) | RB(MBL_DAE_NH), RB(MBL_DAE_V), 0, nw, wrt, dxs, persist, st);
        if (!rc) rc = point_stage(c, acc_rows, acc_cols, 0, nw, wrt, dxs, persist, st);
        break;
    case MBL_AT_STEADY:
        rc = point_stage(c, acc_rows | RB(MBL_DAE_PHID) | RB(MBL_DAE_NH) | RB(MBL_DAE_PHI), pos_cols, 1, nw, wrt, dxs,
                         persist, st);
        if (!rc) rc = point_stage(c, acc_rows, acc_cols, 0, nw, wrt, dxs, persist, st);
        break;
    default:
        rc = mbl_error(st, MBL_EARG, "unknown operating point kind %d", (int)c->pt->at);
    }
    return rc;
}

/* ---- the pencil -------------------------------------------------------------------------- */

/* Independent constraints: QR with column pivoting of [Phi_q; c_v]^T, rows at unit 2-norm. */
static int pencil_map(ctx *c, mbl_status *st)
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
static void fill_pencil(const ctx *c, const double *vals, double *P0, double *P1, double *P2)
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
static void pencil_apply(int N, const double *P0, const double *P1, const double *P2, double complex s,
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

static int cmp_modes(const void *pa, const void *pb) /* as mbl_modal, conjugates kept together */
{
    const mbl_eig_item *a = pa, *b = pb;
    int c = mbl_mode_order(a->mag, a->re, a->im, b->mag, b->re, b->im);
    return c ? c : a->idx - b->idx;
}

/* the complex vector j of LAPACK's packed real form (pairs: V(:,j) +- i V(:,j+1)) */
static void unpack_vec(const double *V, int ld, int nrows, int row0, const double *alphai, int j, double complex *out)
{
    if (alphai[j] == 0) {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)j * ld];
    } else if (alphai[j] > 0) {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)j * ld] + I * V[row0 + i + (size_t)(j + 1) * ld];
    } else {
        for (int i = 0; i < nrows; i++) out[i] = V[row0 + i + (size_t)(j - 1) * ld] - I * V[row0 + i + (size_t)j * ld];
    }
}

/* the bordered matrix [P(s) P'(s) x; e_kk^T 0] as a complex CSC (pattern of P0|P1|P2 plus the
 * last column and the entry (N, kk)) */
static int bordered(int N, const double *P0, const double *P1, const double *P2, double complex s,
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
static int pencil_pattern(int N, const double *P0, const double *P1, const double *P2, mbla_csc **A, mbl_status *st)
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
 * the coefficients for which the triple is exact. Infinite (not a number) when s or a vector is. */
static double pair_berr(const mbla_csc *A, int N, const double *P0, const double *P1, const double *P2,
                        const double nrm[3], double complex s, const double complex *v, const double complex *w,
                        double complex *r /* 2N scratch */)
{
    double as = cabs(s), a = as * as * nrm[2] + as * nrm[1] + nrm[0], vn = 0, wn = 0, rv = 0, rw = 0;
    if (!isfinite(as) || !(a > 0)) return INFINITY;
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
    double e = fmax(sqrt(rv / vn), sqrt(rw / wn)) / a;
    return isfinite(e) ? e : INFINITY;
}

/* Two-sided Rayleigh quotient iteration on the quadratic pencil from the QZ eigentriple:
 * v <- P(s)^-1 v, w <- P(s)^-H w, s <- s - w^H P(s) v / (w^H P'(s) v), up to iters times. QZ on
 * the companion form of a stiff model leaves relative errors of 1e-9 in the high modes; this
 * makes them rounding-level. A step is kept only when the new triple's backward error (pair_berr)
 * is no larger than the one before, or at rounding level (REFINE_BERR_FLOOR): at a defective
 * eigenvalue (the double zero of a cyclic coordinate) w^H P'(s) v vanishes and the Rayleigh step
 * can throw s anywhere, to 1e43 as rounding decides, where the vectors it came with are no
 * eigenvectors at all. A failed factorization (an exactly singular P(s)) keeps the values before.
 * keep: 2N scratch. *berr: the kept triple's backward error. Returns the steps kept (0: the QZ
 * triple as given). */
#define REFINE_BERR_FLOOR (64 * DBL_EPSILON)
/* The largest backward error of an eigentriple that is reported: half the digits of the data. */
#define SENS_BERR_MAX 1.4901161193847656e-08
static int refine(const mbla_csc *A, double *az, int N, const double *P0, const double *P1, const double *P2,
                  const double nrm[3], double complex *s, double complex *v, double complex *w, double complex *tmp,
                  double complex *keep, int real, int iters, double *berr)
{
    double *b = (double *)tmp; /* 2N doubles: interleaved complex */
    double eta = pair_berr(A, N, P0, P1, P2, nrm, *s, v, w, tmp);
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
        double e = ok ? pair_berr(A, N, P0, P1, P2, nrm, *s, v, w, tmp) : INFINITY;
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

typedef struct spen {
    int n, m, ns;
    double *T0;      /* n x ns */
    double *dT0;     /* n x ns x nwrt */
} spen;

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
static int spen_build(const ctx *c, const mbl_dae_deriv *d, const mbl_point *pt, const double *Jv, const double *dx,
                      const int *wrt, int nwrt, double *P0, double *P1, double *P2, double *dP, spen *sp,
                      mbl_status *st)
{
    const mbl_dae_layout *L = &c->L;
    int n = L->n, m = L->m, ns = n - m, rc = 0, nunk = L->nunk;
    size_t nn = (size_t)n * n, nm = (size_t)n * (m ? m : 1), nsz = (size_t)n * ns;
    mbla_dlu *lu = NULL;
    double *buf = mbl_alloc_array(14 * nn + 2 * nm + 12 * nsz + (size_t)L->jnz + 3 * (size_t)ns * n + 1, sizeof *buf);
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
    double *X = dT2 + nsz, *Y = X + nsz; /* n x ns scratch */
    double *Sq = Y + nsz, *dSq = Sq + 3 * (size_t)ns * n, *dJ = dSq + 3 * (size_t)ns * n;
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
    (void)Y;
done:
    mbla_dlu_free(lu);
    mbl_free(buf);
    return rc;
}

int mbl_sensitivity_compute(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt, const mbl_sens_options *opt_in,
                    mbl_sensitivity **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: out is NULL");
    *out = NULL;
    if (!d || !pt) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: NULL model derivatives or point");
    mbl_sens_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_sens_options_default(&opt);
    ctx c;
    memset(&c, 0, sizeof c);
    mbl_dae_deriv_layout(d, &c.L);
    c.pt = pt;
    c.rank_tol = opt.rank_tol > 0 ? opt.rank_tol : 1e-9;
    const mbl_dae_layout *L = &c.L;
    int n = L->n, np = L->np, nF = L->nF, nunk = L->nunk, rc = 0;
    if (!wrt_in) nwrt = np;
    if (nwrt < 0) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: negative parameter count");
    for (int w = 0; wrt_in && w < nwrt; w++)
        if (wrt_in[w] < 0 || wrt_in[w] >= np) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: no parameter %d", wrt_in[w]);
    /* above dense_max the eigenvalues come from the linear model (mbl_linearize, mbl_modal) and
     * the eigenvectors from inverse iteration on the sparse pencil; the pencil's coefficients and
     * their derivatives are still held dense: (3 + 3 nwrt) N^2 doubles */
    int large = n + L->m + L->k > opt.dense_max;
    double Nd = (double)(n + L->m + L->k);
    if (Nd * Nd * (3.0 + 3.0 * nwrt) * 8.0 + (double)nF * nunk * 8.0 > 2147483648.0)
        return mbl_error(st, MBL_ENOMEM,
                         "sensitivities: the pencil has order %d (n + m + k): its derivatives with respect to %d "
                         "parameters would take %.3g GB (above 2 GB): ask for fewer parameters (--wrt)",
                         n + L->m + L->k, nwrt, (Nd * Nd * (3.0 + 3.0 * nwrt) * 8.0 + (double)nF * nunk * 8.0) / 1e9);
    mbl_sensitivity *S = mbl_calloc(1, sizeof *S);
    double *Jv = NULL, *dJ = NULL, *dx = NULL, *P0 = NULL, *P1 = NULL, *P2 = NULL, *dP = NULL, *A2 = NULL, *B2 = NULL;
    double *ar = NULL, *ai = NULL, *be = NULL, *VL = NULL, *VR = NULL;
    mbl_eig_item *ev = NULL;
    double complex *vbuf = NULL;
    int smode = 0; /* 1: the pencil in the user states (spen_build) */
    spen sp;
    memset(&sp, 0, sizeof sp);
    double complex *ybuf = NULL;
    mbla_csc *Apat = NULL;
    double *apz = NULL;
    if (!S) return mbl_error(st, MBL_ENOMEM, "out of memory");
    S->n = n;
    S->m = L->m;
    S->np = np;
    S->nwrt = nwrt;
#define NEW(p, cnt) (((p) = mbl_alloc_array((size_t)(cnt) + 1, sizeof *(p))) == NULL)
    if (NEW(S->wrt, nwrt) || NEW(Jv, L->jnz) || NEW(dJ, L->jnz) || NEW(c.Jd, (size_t)nF * nunk) ||
        NEW(c.Fp, (size_t)nF * np) || NEW(c.x0p, (size_t)nunk * np) || NEW(c.cyclic, n) ||
        NEW(dx, (size_t)nunk * (nwrt ? nwrt : 1)) || NEW(S->dq, (size_t)n * nwrt) || NEW(S->dv, (size_t)n * nwrt) ||
        NEW(S->dlambda, (size_t)L->m * nwrt) || NEW(S->point_defined, nwrt)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    for (int w = 0; w < nwrt; w++) S->wrt[w] = wrt_in ? wrt_in[w] : w;
    rc = mbl_dae_deriv_eval(d, pt, Jv, c.Fp, c.x0p, st);
    if (rc) goto fail;
    memset(c.Jd, 0, (size_t)nF * nunk * sizeof *c.Jd);
    for (int i = 0; i < n; i++) c.cyclic[i] = 1;
    for (int e = 0; e < L->jnz; e++) {
        c.Jd[L->jrow[e] + (size_t)L->jcol[e] * nF] += Jv[e];
        int q = L->jcol[e] - L->col0[MBL_DAE_Q];
        if (q >= 0 && q < n) c.cyclic[q] = 0;
    }
    /* the shift of the point, per parameter */
    rc = point_derivative(&c, nwrt, S->wrt, dx, S->point_defined, st);
    if (rc) goto fail;
    for (int w = 0; w < nwrt; w++) {
        double *x = dx + (size_t)w * nunk;
        for (int i = 0; i < n; i++) {
            S->dq[i + (size_t)w * n] = x[L->col0[MBL_DAE_Q] + i];
            S->dv[i + (size_t)w * n] = x[L->col0[MBL_DAE_V] + i];
        }
        for (int i = 0; i < L->m; i++) S->dlambda[i + (size_t)w * L->m] = x[L->col0[MBL_DAE_LAMBDA] + i];
    }
    /* the pencil and its eigenvalues: companion form [-P1 -P0; I 0] x = s [P2 0; 0 I] x */
    rc = pencil_map(&c, st);
    if (rc) goto fail;
    int N = c.N, N2 = 2 * N;
    size_t NN = (size_t)N * N;
    if (NEW(P0, NN) || NEW(P1, NN) || NEW(P2, NN) || NEW(dP, 3 * NN * (nwrt ? nwrt : 1)) || NEW(ev, N2) ||
        NEW(vbuf, 6 * (size_t)N + 2) ||
        (!large && (NEW(A2, (size_t)N2 * N2) || NEW(B2, (size_t)N2 * N2) || NEW(ar, N2) || NEW(ai, N2) ||
                    NEW(be, N2) || NEW(VL, (size_t)N2 * N2) || NEW(VR, (size_t)N2 * N2))) ||
        (large && NEW(A2, 3 * NN))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    fill_pencil(&c, Jv, P0, P1, P2);
    rc = pencil_pattern(N, P0, P1, P2, &Apat, st);
    if (rc) goto fail;
    if (NEW(apz, 2 * (size_t)mbla_csc_nnz(Apat))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    for (int w = 0; w < nwrt; w++) {
        rc = mbl_dae_deriv_jac_dir(d, pt, dx + (size_t)w * nunk, S->wrt[w], dJ, st);
        if (rc) goto fail;
        double *D = dP + 3 * NN * w;
        fill_pencil(&c, dJ, D, D + NN, D + 2 * NN);
    }
eigen:;
    int nfin = 2 * (n - c.mi) - c.ki + c.nX, nev = 0;
    double gam = 1.0;
    if (!large) {
        memset(A2, 0, (size_t)N2 * N2 * sizeof *A2);
        memset(B2, 0, (size_t)N2 * N2 * sizeof *B2);
        /* scaling of Fan, Lin and Van Dooren (2004): s = gamma mu, the pencil times delta, so
         * that the three coefficients have comparable norms (stiff models span 1e10 between M
         * and K) */
        double n0 = 0, n1 = 0, n2 = 0;
        for (size_t e = 0; e < NN; e++) n0 += P0[e] * P0[e], n1 += P1[e] * P1[e], n2 += P2[e] * P2[e];
        n0 = sqrt(n0), n1 = sqrt(n1), n2 = sqrt(n2);
        gam = n0 > 0 && n2 > 0 ? sqrt(n0 / n2) : 1.0;
        double del = n0 + gam * n1 > 0 ? 2.0 / (n0 + gam * n1) : 1.0;
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < N; i++) {
                A2[i + (size_t)j * N2] = -del * gam * P1[i + (size_t)j * N];
                A2[i + (size_t)(N + j) * N2] = -del * P0[i + (size_t)j * N];
                B2[i + (size_t)j * N2] = del * gam * gam * P2[i + (size_t)j * N];
            }
            A2[N + j + (size_t)j * N2] = 1.0;
            B2[N + j + (size_t)(N + j) * N2] = 1.0;
        }
        rc = mbla_ggevx('P', N2, A2, N2, B2, N2, ar, ai, be, VL, N2, VR, N2, NULL, NULL, st);
        if (rc) goto fail;
        /* finite, infinite or undetermined from the pencil (mbla_gev_classify), never from |s| */
        double *sre = mbl_alloc_array((size_t)N2, sizeof *sre), *sim = mbl_alloc_array((size_t)N2, sizeof *sim);
        int *kind = mbl_alloc_array((size_t)N2, sizeof *kind);
        rc = !sre || !sim || !kind ? mbl_error(st, MBL_ENOMEM, "out of memory")
                                   : mbla_gev_classify(N2, A2, N2, B2, N2, ar, ai, be, sre, sim, kind, NULL, NULL, st);
        for (int j = 0; !rc && j < N2; j++) {
            if (kind[j] != MBLA_EIG_FINITE) continue;
            double re = gam * sre[j], im = gam * sim[j];
            ev[nev].re = re, ev[nev].im = im, ev[nev].mag = hypot(re, im), ev[nev].idx = j;
            nev++;
        }
        mbl_free(sre), mbl_free(sim), mbl_free(kind);
        if (rc == MBL_ESINGULAR)
            mbl_error_prefix(st, "sensitivities: the linearized equations (redundant or singular constraints?)");
        if (rc) goto fail;
    } else {
        /* the eigenvalues of the linear model of the default method (sparse for large models) */
        mbl_linear *lin = NULL;
        mbl_modes *modes = NULL;
        rc = mbl_linearize(mbl_dae_deriv_model(d), pt, NULL, &lin, st);
        if (!rc) rc = mbl_modal(lin, NULL, &modes, st);
        for (int i = 0; !rc && i < modes->nx && nev < N2; i++) {
            if (modes->modes[i].spurious) continue;
            ev[nev].re = modes->modes[i].re, ev[nev].im = modes->modes[i].im;
            ev[nev].mag = hypot(ev[nev].re, ev[nev].im), ev[nev].idx = nev;
            nev++;
        }
        mbl_modes_free(modes);
        mbl_linear_free(lin);
        if (rc) goto fail;
        if (nev != nfin) {
            rc = mbl_error(st, MBL_ESINGULAR,
                           "sensitivities: the linear model has %d eigenvalues where the linearized equations have %d",
                           nev, nfin);
            goto fail;
        }
    }
    if (nev < nfin) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "sensitivities: the linearized equations have %d finite eigenvalues where %d were expected (a "
                       "singular pencil: redundant or singular constraints?)",
                       nev, nfin);
        goto fail;
    }
    mbl_eig_sort_modulus(ev, nev);
    nev = nfin;
    qsort(ev, (size_t)nev, sizeof *ev, cmp_modes);
    double magmax = 0;
    for (int i = 0; i < nev; i++) magmax = fmax(magmax, ev[i].mag);
    /* the pencil is the linearization only where it does not change along the nominal motion:
     * dJ/dt = J_x xdot with xdot = (0, 0, 0, vdot, v, 0) (a steady point: cyclic coordinates
     * may move, nothing else) */
    if (!smode) {
        double *xt = mbl_alloc_array((size_t)nunk + 1, sizeof *xt);
        if (!xt) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto fail;
        }
        for (int q = 0; q < nunk; q++) xt[q] = 0;
        for (int i = 0; i < n; i++) {
            xt[L->col0[MBL_DAE_V] + i] = pt->vdot[i];
            xt[L->col0[MBL_DAE_Q] + i] = pt->v[i];
        }
        for (int i = 0; i < c.nX && pt->Xdot; i++) xt[L->col0[MBL_DAE_X] + i] = pt->Xdot[i];
        rc = mbl_dae_deriv_jac_dir(d, pt, xt, -1, dJ, st);
        mbl_free(xt);
        if (rc) goto fail;
        double *T0 = A2, *T1 = A2 + NN, *T2 = A2 + 2 * NN; /* A2 holds at least 3 NN: scratch */
        fill_pencil(&c, dJ, T0, T1, T2);
        double sm = fmax(magmax, 1e-300), worst = 0;
        for (int i = 0; i < N; i++) {
            double a = 0, b = 0;
            for (int jj = 0; jj < N; jj++) {
                size_t e = i + (size_t)jj * N;
                a = fmax(a, fabs(T0[e]) + sm * fabs(T1[e]) + sm * sm * fabs(T2[e]));
                b = fmax(b, fabs(P0[e]) + sm * fabs(P1[e]) + sm * sm * fabs(P2[e]));
            }
            if (b > 0) worst = fmax(worst, a / (sm * b));
        }
        if (worst > 1e-6) {
            /* the pencil in the file's user states, when they parametrize the positions */
            int nZ = L->col0[MBL_DAE_Z + 1] - L->col0[MBL_DAE_Z];
            if (large || L->k || c.nX || nZ || L->nuvs || c.mi != L->m || L->nus != n - L->m || n - L->m < 1) {
                rc = mbl_error(st, MBL_EMODEL,
                               "sensitivities: the linearized equations change along the motion at this point (relative "
                               "rate %.2g: coordinates that are not steady, such as the Euler parameters of a spinning "
                               "body), and the model has no %d user states (linearize.states) to hold the steady "
                               "motion (docs/study.md)",
                               worst, n - L->m);
                goto fail;
            }
            rc = spen_build(&c, d, pt, Jv, dx, S->wrt, nwrt, P0, P1, P2, dP, &sp, st);
            if (rc) goto fail;
            smode = 1;
            N = n, N2 = 2 * N, NN = (size_t)N * N;
            mbla_csc_free(Apat);
            Apat = NULL;
            mbl_free(apz);
            apz = NULL;
            rc = pencil_pattern(N, P0, P1, P2, &Apat, st);
            if (rc) goto fail;
            if (NEW(apz, 2 * (size_t)mbla_csc_nnz(Apat)) || NEW(ybuf, 2 * (size_t)n)) {
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                goto fail;
            }
            goto eigen;
        }
    }
    int nshape = smode ? sp.ns : n; /* the pencil's leading entries that are the displacement */
    S->nmode = nev;
    if (NEW(S->modes, nev) || NEW(S->shape_re, (size_t)n * nev) || NEW(S->shape_im, (size_t)n * nev)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    memset(S->modes, 0, (size_t)nev * sizeof *S->modes);
    if (opt.shapes && (NEW(S->dshape_re, (size_t)n * nev * nwrt) || NEW(S->dshape_im, (size_t)n * nev * nwrt))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    double complex *v = vbuf, *wl = vbuf + N, *tmp = vbuf + 2 * N, *tmp2 = vbuf + 4 * N;
    /* Frobenius norms of P0, P1, P2 (backward errors) */
    double pnrm[3] = {mbla_norm_fro(N, N, P0, N), mbla_norm_fro(N, N, P1, N), mbla_norm_fro(N, N, P2, N)};
    double *rhs = NULL;
    if (opt.shapes && NEW(rhs, 2 * (size_t)(N + 1) * (nwrt ? nwrt : 1))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    int nundef = 0;
    /* zero: below zero_tol of the largest, and never below the rounding split of a defective
     * double zero (a rigid-body or cyclic coordinate), 10 sqrt(eps) of the spectral radius, as
     * mbl_modal's quadratic-qz (both listings must agree on which modes are zero); the pencil in the
     * user states has no rounding noise where it is exactly zero (spen_build) */
    double zthr = fmax(opt.zero_tol, 10 * sqrt(DBL_EPSILON)) * magmax;
    for (int t = 0; t < nev; t++) {
        mbl_sens_mode *md = &S->modes[t];
        int j = ev[t].idx;
        double complex s = ev[t].re + I * ev[t].im;
        md->re = ev[t].re + 0.0;
        md->im = ev[t].im + 0.0;
        md->freq_hz = ev[t].mag / TWO_PI;
        md->damping_ratio = ev[t].mag > 0 ? -md->re / ev[t].mag + 0.0 : 0.0;
        md->kind = ev[t].mag <= zthr ? MBL_MODE_ZERO : md->im == 0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
        if (NEW(md->dre, nwrt) || NEW(md->dim, nwrt) || NEW(md->dfreq_hz, nwrt) || NEW(md->ddamping, nwrt)) {
            mbl_free(rhs);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto fail;
        }
        int isreal = ev[t].im == 0, refined = 0;
        double berr = INFINITY;
        if (!large) {
            unpack_vec(VR, N2, N, N, ai, j, v);  /* lower half: v */
            unpack_vec(VL, N2, N, 0, ai, j, wl); /* upper half: w */
            refine(Apat, apz, N, P0, P1, P2, pnrm, &s, v, wl, tmp, tmp2, isreal, 2, &berr);
            /* still this eigenvalue: nearer its QZ value than half the distance to any other */
            double gap = HUGE_VAL;
            for (int u = 0; u < nev; u++)
                if (u != t) gap = fmin(gap, hypot(ev[u].re - ev[t].re, ev[u].im - ev[t].im));
            if (cabs(s - (ev[t].re + I * ev[t].im)) > 0.5 * gap) {
                s = ev[t].re + I * ev[t].im;
                unpack_vec(VR, N2, N, N, ai, j, v);
                unpack_vec(VL, N2, N, 0, ai, j, wl);
                berr = pair_berr(Apat, N, P0, P1, P2, pnrm, s, v, wl, tmp);
            }
            refined = 1;
        } else { /* inverse iteration from fixed pseudo-random vectors */
            unsigned long long x = 88172645463325252ull + (unsigned long long)t;
            for (int i = 0; i < N; i++) {
                double u[4];
                for (int k = 0; k < 4; k++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    u[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
                }
                v[i] = u[0] + I * (isreal ? 0 : u[1]);
                wl[i] = u[2] + I * (isreal ? 0 : u[3]);
            }
            refined = refine(Apat, apz, N, P0, P1, P2, pnrm, &s, v, wl, tmp, tmp2, isreal, 3, &berr) > 0;
        }
        md->backward_error = berr;
        if (!(berr <= SENS_BERR_MAX)) {
            mbl_free(rhs);
            rc = mbl_error(st, MBL_ESINGULAR,
                           "sensitivities: eigenvalue %d (%.6g%+.6gi) has backward error %.3g on the linearized "
                           "equations, above %.3g: no eigenpair of them (a singular or nearly singular pencil: "
                           "redundant or singular constraints?)",
                           t + 1, creal(s), cimag(s), berr, SENS_BERR_MAX);
            goto fail;
        }
        md->re = creal(s) + 0.0;
        md->im = cimag(s) + 0.0;
        double smag = cabs(s);
        md->freq_hz = smag / TWO_PI;
        md->damping_ratio = smag > 0 ? -md->re / smag + 0.0 : 0.0;
        if (isreal) /* real vectors for a real eigenvalue */
            for (int i = 0; i < N; i++) v[i] = creal(v[i]), wl[i] = creal(wl[i]);
        /* shape: dq with its largest component 1 (a mode of the user ODE states alone, dq = 0: its
         * largest X component) */
        int kk = 0;
        double big = 0;
        for (int i = 0; i < nshape; i++)
            if (cabs(v[i]) > big) big = cabs(v[i]), kk = i;
        for (int i = c.x0; big == 0 && i < c.x0 + c.nX; i++)
            if (cabs(v[i]) > big) big = cabs(v[i]), kk = i;
        double complex sc = big > 0 ? 1.0 / v[kk] : 1.0;
        for (int i = 0; i < N; i++) v[i] *= sc;
        double complex *y = ybuf, yk = 1;
        int ky = 0;
        if (smode) { /* dq = T0 dS, its largest component 1 */
            double yb = 0;
            for (int i = 0; i < n; i++) {
                y[i] = 0;
                for (int jj = 0; jj < sp.ns; jj++) y[i] += sp.T0[i + (size_t)jj * n] * v[jj];
                if (cabs(y[i]) > yb) yb = cabs(y[i]), ky = i;
            }
            yk = yb > 0 ? y[ky] : 1;
        }
        for (int i = 0; i < n; i++) {
            double complex sh = smode ? y[i] / yk : v[i];
            S->shape_re[i + (size_t)t * n] = creal(sh) + 0.0;
            S->shape_im[i + (size_t)t * n] = cimag(sh) + 0.0;
        }
        /* denominator w^H P'(s) v, and whether the eigenvalue is simple: |w^H P' v| against
         * ||P'^H w|| ||v||, where P' acts on dq only (a defective pair: rounding level, sqrt(eps)) */
        double complex den = 0;
        for (int jj = 0; jj < N; jj++) {
            tmp[jj] = 0;
            for (int i = 0; i < N; i++) tmp[jj] += conj(wl[i]) * (2 * s * P2[i + (size_t)jj * N] + P1[i + (size_t)jj * N]);
        }
        double wn = 0, vn = 0;
        for (int i = 0; i < N; i++) {
            den += tmp[i] * v[i];
            wn += cabs(tmp[i]) * cabs(tmp[i]);
            if (i < nshape || (!smode && i >= c.x0 && i < c.x0 + c.nX)) vn += cabs(v[i]) * cabs(v[i]);
        }
        int defined = refined && big > 0 && wn > 0 && cabs(den) > 1e-6 * sqrt(wn * vn);
        for (int u = 0; u < nev && defined; u++)
            if (u != t && (hypot(ev[u].re - ev[t].re, ev[u].im - ev[t].im) <= opt.repeat_tol * fmax(1.0, ev[t].mag) ||
                           (ev[t].mag <= zthr && ev[u].mag <= zthr))) /* a multiple zero */
                defined = 0;
        md->defined = defined;
        if (!defined) nundef++;
        mbla_csc *B = NULL;
        double *bz = NULL;
        mbla_klu *lu = NULL;
        if (defined && opt.shapes && nwrt) {
            for (int i = 0; i < N; i++) { /* P'(s) v */
                tmp2[i] = 0;
            }
            for (int jj = 0; jj < N; jj++)
                for (int i = 0; i < N; i++) tmp2[i] += (2 * s * P2[i + (size_t)jj * N] + P1[i + (size_t)jj * N]) * v[jj];
            rc = bordered(N, P0, P1, P2, s, tmp2, kk, &B, &bz, st);
            if (!rc) rc = mbla_kluz_new(B, bz, NULL, &lu, st);
            if (rc) {
                mbla_csc_free(B);
                mbl_free(bz);
                mbl_free(rhs);
                goto fail;
            }
        }
        for (int w = 0; w < nwrt; w++) {
            const double *D0 = dP + 3 * NN * w, *D1 = D0 + NN, *D2 = D1 + NN;
            if (!defined || !S->point_defined[w]) {
                md->dre[w] = md->dim[w] = md->dfreq_hz[w] = md->ddamping[w] = NAN;
                if (S->dshape_re)
                    for (int i = 0; i < n; i++)
                        S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = NAN;
                continue;
            }
            pencil_apply(N, D0, D1, D2, s, v, tmp2);
            double complex num = 0;
            for (int i = 0; i < N; i++) num += conj(wl[i]) * tmp2[i];
            double complex ds = -num / den;
            double dre = creal(ds), dim = cimag(ds), mag = smag;
            md->dre[w] = dre + 0.0;
            md->dim[w] = dim + 0.0;
            if (mag > 0) {
                double dmag = (md->re * dre + md->im * dim) / mag;
                md->dfreq_hz[w] = dmag / TWO_PI + 0.0;
                md->ddamping[w] = -(dre * mag - md->re * dmag) / (mag * mag) + 0.0;
            } else {
                md->dfreq_hz[w] = md->ddamping[w] = NAN;
            }
            if (lu) {
                double *b = rhs;
                for (int i = 0; i < N; i++) b[2 * i] = -creal(tmp2[i]), b[2 * i + 1] = -cimag(tmp2[i]);
                b[2 * N] = b[2 * N + 1] = 0;
                rc = mbla_kluz_solve(lu, 'N', 1, b, N + 1, st);
                if (rc) {
                    mbla_klu_free(lu);
                    mbla_csc_free(B);
                    mbl_free(bz);
                    mbl_free(rhs);
                    goto fail;
                }
                if (smode) { /* d(y / y_k) with y = T0 v: dy = dT0 v + T0 dv */
                    double complex *dy = ybuf + n;
                    const double *dT = sp.dT0 + (size_t)n * sp.ns * w;
                    for (int i = 0; i < n; i++) {
                        dy[i] = 0;
                        for (int jj = 0; jj < sp.ns; jj++)
                            dy[i] += dT[i + (size_t)jj * n] * v[jj] +
                                     sp.T0[i + (size_t)jj * n] * (b[2 * jj] + I * b[2 * jj + 1]);
                    }
                    for (int i = 0; i < n; i++) {
                        double complex ds2 = (dy[i] - y[i] / yk * dy[ky]) / yk;
                        S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = creal(ds2) + 0.0;
                        S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = cimag(ds2) + 0.0;
                    }
                } else {
                    for (int i = 0; i < n; i++) {
                        S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = b[2 * i] + 0.0;
                        S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = b[2 * i + 1] + 0.0;
                    }
                }
            }
        }
        mbla_klu_free(lu);
        mbla_csc_free(B);
        mbl_free(bz);
    }
    mbl_free(rhs);
    if (nundef)
        snprintf(S->notes, sizeof S->notes,
                 "%d zero or repeated eigenvalue(s): their derivatives are not defined one by one (null)", nundef);
    for (int w = 0; w < nwrt; w++)
        if (!S->point_defined[w]) {
            /* the point does not persist: no derivative of it either */
            for (int i = 0; i < n; i++) S->dq[i + (size_t)w * n] = S->dv[i + (size_t)w * n] = NAN;
            for (int i = 0; i < L->m; i++) S->dlambda[i + (size_t)w * L->m] = NAN;
            size_t l = strlen(S->notes);
            snprintf(S->notes + l, sizeof S->notes - l, "%sthe operating point does not persist when parameter %d changes (a "
                     "singular configuration it moves): no derivatives", l ? "; " : "", S->wrt[w] + 1);
        }
    if (c.mi < L->m || c.ki < L->k)
        snprintf(S->notes + strlen(S->notes), sizeof S->notes - strlen(S->notes), "%s%d dependent constraint(s) dropped",
                 S->notes[0] ? "; " : "", L->m + L->k - c.mi - c.ki);
#undef NEW
    goto done;
fail:
    mbl_sensitivity_free(S);
    S = NULL;
done:
    mbl_free(Jv);
    mbl_free(dJ);
    mbl_free(dx);
    mbl_free(c.Jd);
    mbl_free(c.Fp);
    mbl_free(c.x0p);
    mbl_free(c.cyclic);
    mbl_free(c.rowmap);
    mbl_free(c.colmap);
    mbl_free(c.colmat);
    mbl_free(P0);
    mbl_free(P1);
    mbl_free(P2);
    mbl_free(dP);
    mbl_free(A2);
    mbl_free(B2);
    mbl_free(ar);
    mbl_free(ai);
    mbl_free(be);
    mbl_free(VL);
    mbl_free(VR);
    mbl_free(ev);
    mbl_free(vbuf);
    mbla_csc_free(Apat);
    mbl_free(apz);
    mbl_free(sp.T0), mbl_free(sp.dT0), mbl_free(ybuf);
    if (!rc) *out = S;
    return rc;
}
