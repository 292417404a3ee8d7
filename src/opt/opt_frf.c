/* The frequency-response peak as a goal (docs/optimize.md, "Frequency-response peak"): the largest
 * |H(i w)| over a band, H from one input of the model to the displacement of one coordinate or to
 * one output of the file's outputs (its row of the outputs' Jacobian, out_row), and its exact
 * derivative with respect to the parameters.
 *
 * At an equilibrium of a model without non-holonomic constraints, user ODE states or implicit
 * variables, the residual's Jacobian J (mbl_dae_deriv_eval) gives the linearized equations
 *
 *     (s^2 M + s C + K) Q + Phi_q^T-block L = -F_r R,   Phi_q Q = 0,
 *
 * (M, C, K, the multiplier block and F_r the equations of motion's columns vdot, v, q, lambda and r;
 * Phi_q the position constraints' q columns), so H(s) = Q_out / R = e_out^T P(s)^{-1} b. The local
 * maxima of |H| are found on a grid of the band with the damped frequencies of the modes in it
 * added, and refined by golden section; each is a row of the goal (the largest of them is the
 * peak; two equal peaks, the H-infinity optimum of a tuned absorber, are a kink of the largest but
 * two smooth rows). A local maximum's derivative (the envelope theorem: w* moves, but |H| is
 * stationary in w there, or w* is a band edge) is d|H|/dp = Re(conj(H) dH/dp) / |H| at w*, with
 * dH/dp = -e_out^T P^{-1} (dP/dp X + F_r' R): dP/dp and dF_r/dp the total derivatives of J along
 * the operating point's shift (mbl_dae_deriv_jac_dir with dq, dlambda of the sensitivities). */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "mblin/dae.h"
#include "opt/opt_internal.h"

#define TWO_PI 6.283185307179586476925286766559

/* the pencil's blocks from Jacobian values Jv (jnz): P0, P1, P2 (N x N, N = n + m) and b (N) */
static void fill(const mbl_dae_layout *L, const double *Jv, int rin, double *P0, double *P1, double *P2, double *b)
{
    int n = L->n, N = L->n + L->m;
    memset(P0, 0, (size_t)N * N * sizeof *P0);
    memset(P1, 0, (size_t)N * N * sizeof *P1);
    memset(P2, 0, (size_t)N * N * sizeof *P2);
    memset(b, 0, (size_t)N * sizeof *b);
    int e0 = L->row0[MBL_DAE_EOM], p0 = L->row0[MBL_DAE_PHI];
    for (int e = 0; e < L->jnz; e++) {
        int i = L->jrow[e], j = L->jcol[e], a, blk = 0;
        if (i >= e0 && i < e0 + n) a = i - e0;
        else if (i >= p0 && i < p0 + L->m) a = n + i - p0;
        else continue;
        while (blk < MBL_DAE_NBLK && j >= L->col0[blk + 1]) blk++;
        int k = j - L->col0[blk];
        double v = Jv[e];
        if (blk == MBL_DAE_Q) P0[a + (size_t)k * N] += v;
        else if (a >= n) continue; /* the position constraints: their q columns only */
        else if (blk == MBL_DAE_VDOT) P2[a + (size_t)k * N] += v;
        else if (blk == MBL_DAE_V) P1[a + (size_t)k * N] += v;
        else if (blk == MBL_DAE_LAMBDA) P0[a + (size_t)(n + k) * N] += v;
        else if (blk == MBL_DAE_R && k == rin) b[a] -= v;
    }
}

typedef struct frf {
    int N, out;
    const double *P0, *P1, *P2, *b;
    double complex *A, *x;
    lapack_int *ipiv;
    int n;
    const double *yc; /* an output's row (out_row) or NULL: the coordinate out */
} frf;

/* An output y of the file's outputs: its row of the outputs' Jacobian by blocks, yc = [y_q (n);
 * y_v (n); y_vdot (n); y_lambda (m); y_r] (y_r: the input's column, the feedthrough), from Yx (ny x
 * nunk) row yo. At an equilibrium v = s q and vdot = s^2 q, so Y(s) = c(s)^T X + y_r with c(s) =
 * [y_q + s y_v + s^2 y_vdot; y_lambda]. */
static void out_row(const mbl_dae_layout *L, const double *Yx, int ny, int yo, int rin, double *yc)
{
    int n = L->n, m = L->m;
    for (int i = 0; i < n; i++) {
        yc[i] = Yx[yo + (size_t)(L->col0[MBL_DAE_Q] + i) * ny];
        yc[n + i] = Yx[yo + (size_t)(L->col0[MBL_DAE_V] + i) * ny];
        yc[2 * n + i] = Yx[yo + (size_t)(L->col0[MBL_DAE_VDOT] + i) * ny];
    }
    for (int j = 0; j < m; j++) yc[3 * n + j] = Yx[yo + (size_t)(L->col0[MBL_DAE_LAMBDA] + j) * ny];
    yc[3 * n + m] = Yx[yo + (size_t)(L->col0[MBL_DAE_R] + rin) * ny];
}

/* c(i w)^T v for an output's row yc (out_row; its feedthrough left out) */
static double complex out_dot(const frf *f, const double *yc, const double complex *v, double w)
{
    int n = f->n;
    double complex s = 0;
    for (int i = 0; i < n; i++) s += (yc[i] + I * w * yc[n + i] - w * w * yc[2 * n + i]) * v[i];
    for (int j = n; j < f->N; j++) s += yc[2 * n + j] * v[j];
    return s;
}

/* H(i w) at the solution X in f */
static double complex frf_value(const frf *f, double w)
{
    return f->yc ? out_dot(f, f->yc, f->x, w) + f->yc[3 * f->n + f->N - f->n] : f->x[f->out];
}

/* |H(i w)|, the factorization of P(i w) and X left in f */
static int frf_at(frf *f, double w, double *mag, mbl_status *st)
{
    int N = f->N;
    for (size_t e = 0; e < (size_t)N * N; e++) f->A[e] = f->P0[e] - w * w * f->P2[e] + I * w * f->P1[e];
    for (int i = 0; i < N; i++) f->x[i] = f->b[i];
    lapack_int info = LAPACKE_zgesv(LAPACK_COL_MAJOR, N, 1, (lapack_complex_double *)f->A, N, f->ipiv,
                                    (lapack_complex_double *)f->x, N);
    if (info < 0) return mbl_error(st, MBL_ELIB, "zgesv: argument %d", (int)-info);
    if (info > 0) return mbl_error(st, MBL_ESINGULAR, "the response is unbounded at %.10g Hz (an undamped mode there)",
                                   w / TWO_PI);
    *mag = cabs(frf_value(f, w));
    return 0;
}

/* golden section for the maximum of |H| in [lo, hi]: the best point seen (w, mag) */
static int refine(frf *f, double lo, double hi, double *w, double *mag, mbl_status *st)
{
    double g = 0.5 * (3 - sqrt(5.0)), xa = lo + g * (hi - lo), xb = hi - g * (hi - lo), fa, fb;
    int rc = frf_at(f, xa, &fa, st);
    if (!rc) rc = frf_at(f, xb, &fb, st);
    for (int it = 0; it < 200 && hi - lo > OPT_FRF_WTOL * hi && !rc; it++) {
        if (fa >= fb) hi = xb, xb = xa, fb = fa, xa = lo + g * (hi - lo), rc = frf_at(f, xa, &fa, st);
        else lo = xa, xa = xb, fa = fb, xb = hi - g * (hi - lo), rc = frf_at(f, xb, &fb, st);
    }
    if (!rc && fa > *mag) *w = xa, *mag = fa;
    if (!rc && fb > *mag) *w = xb, *mag = fb;
    return rc;
}

/* The local maxima of |H| over [w1, w2] (a grid with the modes' damped frequencies added; each
 * interior one refined by golden section, a band edge taken as it is): the OPT_FRF_PEAKS largest,
 * sorted by frequency, the rows left over filled with the largest (w: frequencies, mag: values) */
static int frf_peaks(frf *f, const mbl_sensitivity *S, double w1, double w2, double *w, double *mag, mbl_status *st)
{
    enum { NC = OPT_FRF_GRID + 128 };
    double cand[NC], m[NC];
    int nc = 0, np = 0, rc = 0;
    for (int k = 0; k < OPT_FRF_GRID; k++) cand[nc++] = w1 + (w2 - w1) * k / (OPT_FRF_GRID - 1);
    for (int j = 0; j < S->nmode && nc < NC; j++)
        if (S->modes[j].im > w1 && S->modes[j].im < w2) cand[nc++] = S->modes[j].im;
    for (int a = 1; a < nc; a++) /* sorted (insertion: the modes go among the grid's points) */
        for (int b = a; b > 0 && cand[b] < cand[b - 1]; b--) {
            double t = cand[b];
            cand[b] = cand[b - 1], cand[b - 1] = t;
        }
    for (int k = 0; k < nc && !rc; k++) rc = frf_at(f, cand[k], &m[k], st);
    for (int k = 0; k < nc && !rc; k++) {
        if ((k > 0 && m[k] < m[k - 1]) || (k + 1 < nc && m[k] < m[k + 1]) || (k > 0 && m[k] == m[k - 1])) continue;
        double wk = cand[k], mk = m[k];
        if (k > 0 && k + 1 < nc) rc = refine(f, cand[k - 1], cand[k + 1], &wk, &mk, st);
        int pos = np < OPT_FRF_PEAKS ? np++ : -1; /* keep the largest: replace the smallest kept */
        if (pos < 0) {
            pos = 0;
            for (int i = 1; i < OPT_FRF_PEAKS; i++)
                if (mag[i] < mag[pos]) pos = i;
            if (mag[pos] >= mk) continue;
        }
        w[pos] = wk, mag[pos] = mk;
    }
    if (rc) return rc;
    for (int a = 1; a < np; a++) /* by frequency */
        for (int b = a; b > 0 && w[b] < w[b - 1]; b--) {
            double t = w[b], u = mag[b];
            w[b] = w[b - 1], mag[b] = mag[b - 1], w[b - 1] = t, mag[b - 1] = u;
        }
    int big = 0;
    for (int i = 1; i < np; i++)
        if (mag[i] > mag[big]) big = i;
    for (int i = np; i < OPT_FRF_PEAKS; i++) w[i] = w[big], mag[i] = mag[big];
    return 0;
}

int opt_frf_peaks(const opt_ctx *c, const mbl_model *md, const mbl_dae_deriv *dd, const mbl_point *pt,
                  const mbl_sensitivity *S, const mbl_opt_goal *g, double *val, double *grad, double *wpk,
                  mbl_status *st)
{
    mbl_dae_layout L;
    mbl_dae_deriv_layout(dd, &L);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int rin = -1, out = -1, yo = opt_frf_output(md, g), rc = 0;
    for (int i = 0; g->input && i < info.ninput; i++)
        if (!strcmp(mbl_model_input_name(md, i), g->input)) rin = i;
    for (int i = 0; g->output && i < info.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(md, i), g->output)) out = i;
    if (rin < 0 || (out < 0 && yo < 0))
        return mbl_error(st, MBL_EARG, "the peak goal: the model has no %s '%s'",
                         rin < 0 ? "input" : "coordinate or output", rin < 0 ? (g->input ? g->input : "") : (g->output ? g->output : ""));
    if (L.k || info.node_states || info.nimplicit || info.nspeeds || pt->at != MBL_AT_EQUILIBRIUM)
        return mbl_error(st, MBL_EARG, "the peak goal needs an equilibrium of a model without non-holonomic constraints, "
                                       "user ODE states, implicit variables or generalized speeds (not yet: docs/optimize.md)");
    int N = L.n + L.m, nunk = L.nunk, np = c->np, ny = yo >= 0 ? info.noutput : 0, nyc = 3 * L.n + L.m + 1;
    size_t NN = (size_t)N * N, per = 3 * NN + (size_t)N, nY = (size_t)ny * nunk;
    double *J = mbl_alloc_array((size_t)L.jnz * 2 + 3 * NN + (size_t)N + per * np + (size_t)nunk + 2 * nY +
                                    (size_t)nyc * (np + 1) + 1, sizeof *J);
    double complex *A = mbl_alloc_array(NN + 2 * (size_t)N + 1, sizeof *A);
    lapack_int *ipiv = mbl_alloc_array((size_t)N + 1, sizeof *ipiv);
    if (!J || !A || !ipiv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    double *dJ = J + L.jnz, *P0 = dJ + L.jnz, *P1 = P0 + NN, *P2 = P1 + NN, *b = P2 + NN, *dP = b + N, *dx = dP + per * np;
    double *Yx = dx + nunk, *dYx = Yx + nY, *yc = dYx + nY; /* an output's row, then its derivative per parameter */
    double complex *x = A + NN, *y = x + N;
    frf f = {N, out, P0, P1, P2, b, A, x, ipiv, L.n, yo >= 0 ? yc : NULL};
    if ((rc = mbl_dae_deriv_eval(dd, pt, J, NULL, NULL, st))) goto done;
    fill(&L, J, rin, P0, P1, P2, b);
    if (yo >= 0 && !(rc = mbl_dae_deriv_outputs(dd, pt, NULL, -1, Yx, NULL, st))) out_row(&L, Yx, ny, yo, rin, yc);
    if (rc) goto done;
    if ((rc = frf_peaks(&f, S, TWO_PI * g->band[0], TWO_PI * g->band[1], wpk, val, st))) goto done;
    for (int i = 0; i < OPT_FRF_PEAKS; i++)
        if (!(val[i] > 0)) {
            rc = mbl_error(st, MBL_EMODEL, "the response from %s to %s is zero over the band", g->input, g->output);
            goto done;
        }
    for (int k = 0; k < np; k++) { /* dP/dp_k and dF_r/dp_k along the point's shift: the same at every w */
        double *D = dP + per * k;
        memset(dx, 0, (size_t)nunk * sizeof *dx);
        for (int i = 0; i < L.n; i++) dx[L.col0[MBL_DAE_Q] + i] = S->dq[i + (size_t)k * L.n];
        for (int i = 0; i < L.m; i++) dx[L.col0[MBL_DAE_LAMBDA] + i] = S->dlambda[i + (size_t)k * L.m];
        if ((rc = mbl_dae_deriv_jac_dir(dd, pt, dx, c->idx[k], dJ, st))) goto done;
        fill(&L, dJ, rin, D, D + NN, D + 2 * NN, D + 3 * NN);
        if (yo >= 0 && (rc = mbl_dae_deriv_outputs(dd, pt, dx, c->idx[k], Yx, dYx, st))) goto done;
        if (yo >= 0) out_row(&L, dYx, ny, yo, rin, yc + (size_t)nyc * (k + 1)); /* the output's row's derivative */
    }
    for (int r = 0; r < OPT_FRF_PEAKS; r++) {
        double w = wpk[r], mag;
        if ((rc = frf_at(&f, w, &mag, st))) goto done; /* the factorization and X at this peak */
        double complex H = frf_value(&f, w);
        for (int k = 0; k < np; k++) {
            const double *D0 = dP + per * k, *D1 = D0 + NN, *D2 = D1 + NN, *db = D2 + NN;
            for (int i = 0; i < N; i++) { /* y = db - dP(i w) X */
                double complex s = db[i];
                for (int j = 0; j < N; j++) {
                    size_t e = i + (size_t)j * N;
                    s -= (D0[e] - w * w * D2[e] + I * w * D1[e]) * x[j];
                }
                y[i] = s;
            }
            lapack_int info = LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', N, 1, (lapack_complex_double *)A, N, ipiv,
                                             (lapack_complex_double *)y, N);
            if (info) {
                rc = mbl_error(st, MBL_ELIB, "zgetrs: argument %d", (int)-info);
                goto done;
            }
            double complex dH = y[out >= 0 ? out : 0]; /* a coordinate's; an output's: dc^T X + dy_r + c^T dX */
            if (yo >= 0) {
                const double *dyc = yc + (size_t)nyc * (k + 1);
                dH = out_dot(&f, dyc, x, w) + dyc[nyc - 1] + out_dot(&f, yc, y, w);
            }
            grad[(size_t)r * np + k] = creal(conj(H) * dH) / mag;
        }
    }
done:
    mbl_free(J);
    mbl_free(A);
    mbl_free(ipiv);
    return rc;
}

int opt_frf_output(const mbl_model *md, const mbl_opt_goal *g)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    for (int i = 0; g->output && i < info.ncoord; i++)
        if (!strcmp(mbl_model_coord_name(md, i), g->output)) return -1; /* a coordinate's name first */
    for (int i = 0; g->output && i < info.noutput; i++)
        if (!strcmp(mbl_model_output_name(md, i), g->output)) return i;
    return -1;
}
