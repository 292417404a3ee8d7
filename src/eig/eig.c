/* The eigen strategies behind eig_solve (eig.h says which and when; docs/linearization.md,
 * "Eigenvalues: which solver and why", says why). Every factorization and eigensolver is
 * LAPACK's through src/la: dsygvd (symmetric-definite), dggevx (QZ with balancing), dgeev. */
#include "eig/eig.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"

/* |w^2| <= ZERO_W2_FACTOR eps max|w^2| is a zero eigenvalue of the symmetric-definite problem (the
 * absolute rounding error of dsygvd's w^2 is a small multiple of eps max|w^2|) */
#define ZERO_W2_FACTOR 100.0
/* a defective double zero (rigid-body mode) splits by about sqrt(eps * scale) */
#define ZERO_DEFECT_FACTOR 10.0

/* the refinement of slow modes (solve_sygvd) stops before its compensated multiply-adds exceed
 * this fraction of the b^3 of the blocks' eigensolves (it costs 2 b^2 per mode, a compensated
 * multiply-add being ~10 flops and dsygvd ~10 b^3 flops: at most ~25 % of dsygvd's time) */
#define REFINE_WORK_FRACTION 0.25
/* ... plus the cost of this many modes of the largest block (small problems) */
#define REFINE_MIN_MODES 16

/* strategy could not be used: try the next one (internal, never returned) */
#define NEXT_STRATEGY 1

void eig_options_default(mbl_eig_options *opt)
{
    opt->damp_tol = 1e-12;
    opt->sym_tol = 1e-10;
    opt->refine_rel = 1e-12;
    opt->refine_max = 200;
}

void eig_result_free(mbl_eig_result *r)
{
    if (!r) return;
    /* re, im, berr, err, vre, vim, vsign, zero, voff, rows, rptr, cptr: in r's block (result_new) */
    mbl_free(r->V);
    mbl_free(r);
}

void eig_vector(const mbl_eig_result *r, int i, double *xre, double *xim)
{
    memset(xre, 0, (size_t)r->nrow * sizeof *xre);
    if (xim) memset(xim, 0, (size_t)r->nrow * sizeof *xim);
    if (!r->V || i < 0 || i >= r->neig) return;
    int c = 0;
    while (c + 1 < r->ncomp && r->cptr[c + 1] <= r->vre[i]) c++;
    int nb = r->rptr[c + 1] - r->rptr[c];
    const int *rows = r->rows + r->rptr[c];
    const double *a = r->V + r->voff[c] + (size_t)(r->vre[i] - r->cptr[c]) * nb;
    for (int k = 0; k < nb; k++) xre[rows[k]] = a[k];
    if (xim && r->vim[i] >= 0) {
        const double *b = r->V + r->voff[c] + (size_t)(r->vim[i] - r->cptr[c]) * nb;
        for (int k = 0; k < nb; k++) xim[rows[k]] = r->vsign[i] * b[k];
    }
}

/* Frobenius norm, scaled against overflow */
static double fro(int m, int n, const double *X, int ld)
{
    double amax = 0, s = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) amax = fmax(amax, fabs(X[i + (size_t)j * ld]));
    if (amax == 0) return 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double x = X[i + (size_t)j * ld] / amax;
            s += x * x;
        }
    return amax * sqrt(s);
}

/* ||X - X^T||_F of the n x n matrix X, scaled like fro */
static double asym(int n, const double *X)
{
    double amax = 0, s = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) amax = fmax(amax, fabs(X[i]));
    if (amax == 0) return 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) {
            double d = (X[i + (size_t)j * n] - X[j + (size_t)i * n]) / amax;
            s += 2 * d * d;
        }
    return amax * sqrt(s);
}

static double nrm2(int n, const double *x)
{
    double amax = 0, s = 0;
    for (int i = 0; i < n; i++) amax = fmax(amax, fabs(x[i]));
    if (amax == 0) return 0;
    for (int i = 0; i < n; i++) s += (x[i] / amax) * (x[i] / amax);
    return amax * sqrt(s);
}

/* s + c += a b in doubled precision (Ogita, Rump and Oishi 2005, Dot2: the product's and the sum's
 * rounding errors, from fma and TwoSum, are accumulated in c). Portable (no long double). */
static void dot2_add(double a, double b, double *s, double *c)
{
    double p = a * b, e = fma(a, b, -p);
    double t = *s + p, v = t - *s, q = (*s - (t - v)) + (p - v);
    *s = t;
    *c += q + e;
}

/* 1 / sqrt(m) rounded to the nearest power of 2 (m > 0): scaling by it is exact */
static double pow2_rsqrt(double m)
{
    int e;
    frexp(m, &e); /* m = f 2^e, 0.5 <= f < 1 */
    return ldexp(1.0, -(e / 2));
}

static int ufind(int *par, int i)
{
    while (par[i] != i) i = par[i] = par[par[i]];
    return i;
}

/* ---- the result ------------------------------------------------------------------------- */

/* The result and its arrays in one zeroed block (one allocation a solve instead of thirteen: a
 * sweep solves one problem a point): the struct, then re, im, berr, err, vre, vim, vsign, zero, and
 * the blocks' voff, rows, rptr, cptr (neig + 2 each: every strategy's counts fit), each rounded up
 * to a double's alignment. */
static mbl_eig_result *result_new(int neig, int nrow)
{
    size_t ne = (size_t)neig + 1, hd = (sizeof(mbl_eig_result) + sizeof(double) - 1) / sizeof(double);
    size_t ni = (ne * sizeof(int) + sizeof(double) - 1) / sizeof(double);
    size_t nz = (ne + sizeof(double) - 1) / sizeof(double);
    size_t nb = ne + 1, nbv = (nb * sizeof(size_t) + sizeof(double) - 1) / sizeof(double);
    size_t nbi = (nb * sizeof(int) + sizeof(double) - 1) / sizeof(double);
    double *b = mbl_calloc(hd + 4 * ne + 3 * ni + nz + nbv + 3 * nbi, sizeof(double));
    if (!b) return NULL;
    mbl_eig_result *r = (mbl_eig_result *)(void *)b;
    double *d = b + hd;
    r->neig = neig;
    r->nrow = nrow;
    r->re = d, r->im = d + ne, r->berr = d + 2 * ne, r->err = d + 3 * ne;
    d += 4 * ne;
    r->vre = (int *)(void *)d, r->vim = (int *)(void *)(d + ni), r->vsign = (int *)(void *)(d + 2 * ni);
    r->zero = (unsigned char *)(void *)(d + 3 * ni);
    d += 3 * ni + nz;
    r->voff = (size_t *)(void *)d;
    d += nbv;
    r->rows = (int *)(void *)d, r->rptr = (int *)(void *)(d + nbi), r->cptr = (int *)(void *)(d + 2 * nbi);
    for (int i = 0; i < neig; i++) r->err[i] = NAN;
    return r;
}

/* The blocks (connected components of the pattern of M + C + K) into r->ncomp, rptr, rows. */
static int find_blocks(int z, const double *M, const double *C, const double *K, mbl_eig_result *r)
{
    int *par = mbl_alloc_array(2 * (size_t)z + 2, sizeof *par), *id = par ? par + z + 1 : NULL;
    if (!par) return MBL_ENOMEM;
    for (int i = 0; i < z; i++) par[i] = i;
    for (int j = 0; j < z; j++)
        for (int i = 0; i < z; i++) {
            size_t p = i + (size_t)j * z;
            if (i != j && (M[p] != 0 || C[p] != 0 || K[p] != 0)) {
                int a = ufind(par, i), b = ufind(par, j);
                if (a != b) par[a > b ? a : b] = a < b ? a : b;
            }
        }
    /* components numbered by their smallest row; rows ascending within each */
    int nc = 0;
    for (int i = 0; i < z; i++) id[i] = ufind(par, i) == i ? nc++ : -1;
    r->ncomp = nc;
    memset(r->rptr, 0, ((size_t)nc + 2) * sizeof *r->rptr);
    /* par[i] := the component of row i (roots first: a root's par is itself until overwritten) */
    for (int i = 0; i < z; i++) par[i] = ufind(par, i);
    for (int i = 0; i < z; i++) par[i] = id[par[i]];
    for (int i = 0; i < z; i++) r->rptr[par[i] + 1]++;
    for (int c = 0; c < nc; c++) r->rptr[c + 1] += r->rptr[c];
    int *pos = id; /* id is no longer needed */
    for (int c = 0; c < nc; c++) pos[c] = r->rptr[c];
    for (int i = 0; i < z; i++) r->rows[pos[par[i]]++] = i;
    mbl_free(par);
    return 0;
}

/* B = X(rows, rows) (nb x nb, ld nb) of the z x z matrix X; symmetric part when sym */
static void gather(int z, const double *X, int nb, const int *rows, int sym, double *B)
{
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            double x = X[rows[i] + (size_t)rows[j] * z];
            if (sym) x = 0.5 * (x + X[rows[j] + (size_t)rows[i] * z]);
            B[i + (size_t)j * nb] = x;
        }
}

/* Normwise backward error of the quadratic eigenpair (s, x = u + i v): MU = M u etc. (v parts may
 * be NULL for a real x; vs multiplies the v columns). */
static double quad_berr(int nb, double sr, double si, const double *u, const double *v, double vs,
                        const double *Mu, const double *Mv, const double *Cu, const double *Cv,
                        const double *Ku, const double *Kv, double nM, double nC, double nK)
{
    double p = sr * sr - si * si, q = 2 * sr * si, amax = 0, s = 0, xn = 0, xmax = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nb; k++) {
            double mv = v ? vs * Mv[k] : 0, kv = v ? vs * Kv[k] : 0;
            double cu = Cu ? Cu[k] : 0, cv = Cu && v ? vs * Cv[k] : 0;
            double rr = p * Mu[k] - q * mv + sr * cu - si * cv + Ku[k];
            double ri = q * Mu[k] + p * mv + si * cu + sr * cv + kv;
            double xr = u[k], xi = v ? v[k] : 0;
            if (pass == 0) {
                amax = fmax(amax, fmax(fabs(rr), fabs(ri)));
                xmax = fmax(xmax, fmax(fabs(xr), fabs(xi)));
            } else {
                if (amax > 0) s += (rr / amax) * (rr / amax) + (ri / amax) * (ri / amax);
                if (xmax > 0) xn += (xr / xmax) * (xr / xmax) + (xi / xmax) * (xi / xmax);
            }
        }
    double mag = hypot(sr, si), den = (mag * mag * nM + mag * nC + nK) * xmax * sqrt(xn);
    if (!(den > 0)) return amax == 0 ? 0.0 : HUGE_VAL;
    return amax * sqrt(s) / den;
}

/* Is the eigenpair (s, x = u + i v) of s^2 M + s C + K one of s = 0 within the rounding of K?
 * Two conditions, both at the level ZERO_K_TOL ||K||: x is a null vector of K (||K x|| small), and
 * a perturbation of K at that level moves s by at least |s| (first order, the left vector taken
 * as x: |s x^H (2 s M + C) x| small). A cyclic coordinate whose K column is rounding (a spinning
 * top's spin angle: K_ss = 1.8e-15 against ||K|| = 123, s = +-3.4e-6i) passes both; a damped free
 * coordinate (K x = 0 exactly but s = -c/m) fails the second unless c is at rounding level; a
 * genuine slow mode fails them unless it is below the rounding of K. The other test of zero,
 * |s| below the solver's floor (zero_floor), stays. */
#define ZERO_K_TOL (100.0 * DBL_EPSILON)
static int zero_within_rounding(int nb, double sr, double si, const double *u, const double *v, const double *Mu,
                                const double *Mv, const double *Cu, const double *Cv, const double *Ku,
                                const double *Kv, double nK)
{
    double xn2 = 0, kx2 = 0, a = 0, b = 0, c = 0, d = 0;
    for (int k = 0; k < nb; k++) {
        double vk = v ? v[k] : 0, mv = v ? Mv[k] : 0, cv = v ? Cv[k] : 0, kv = v ? Kv[k] : 0;
        xn2 += u[k] * u[k] + vk * vk;
        kx2 += Ku[k] * Ku[k] + kv * kv;
        a += u[k] * Mu[k] + vk * mv, b += u[k] * mv - vk * Mu[k]; /* x^H M x */
        c += u[k] * Cu[k] + vk * cv, d += u[k] * cv - vk * Cu[k]; /* x^H C x */
    }
    if (!(xn2 > 0) || !(nK > 0)) return 0;
    if (sqrt(kx2) > ZERO_K_TOL * nK * sqrt(xn2)) return 0;
    double wr = 2 * (sr * a - si * b) + c, wi = 2 * (sr * b + si * a) + d; /* x^H (2 s M + C) x */
    return hypot(sr, si) * hypot(wr, wi) <= ZERO_K_TOL * nK * xn2;
}

/* ---- strategy 1: symmetric-definite, dsygvd --------------------------------------------- */

/* x^T K x and x^T M x over one block (rows, order nb; K, M z x z), every product and sum
 * compensated (Ogita-Rump-Oishi Dot2), as double-double (s, c) pairs in q[0..3] (K: q[0] + q[1], M:
 * q[2] + q[3]); abs (may be NULL): |x|^T |K| |x| and |x|^T |M| |x| in working precision */
static void rayleigh2(int nb, const int *rows, int z, const double *K, const double *M, const double *x, double *q,
                      double *abs)
{
    double ks = 0, kc = 0, ms = 0, mc = 0, ak = 0, am = 0;
    for (int jj = 0; jj < nb; jj++) {
        double ys = 0, yc = 0, ns = 0, nc2 = 0, ya = 0, na = 0;
        const double *kcol = K + (size_t)rows[jj] * z, *mcol = M + (size_t)rows[jj] * z;
        for (int ii = 0; ii < nb; ii++) {
            dot2_add(kcol[rows[ii]], x[ii], &ys, &yc);
            dot2_add(mcol[rows[ii]], x[ii], &ns, &nc2);
            if (abs) ya += fabs(kcol[rows[ii]] * x[ii]), na += fabs(mcol[rows[ii]] * x[ii]);
        }
        dot2_add(ys, x[jj], &ks, &kc);
        dot2_add(yc, x[jj], &ks, &kc);
        dot2_add(ns, x[jj], &ms, &mc);
        dot2_add(nc2, x[jj], &ms, &mc);
        ak += ya * fabs(x[jj]), am += na * fabs(x[jj]);
    }
    q[0] = ks, q[1] = kc, q[2] = ms, q[3] = mc;
    if (abs) abs[0] = ak, abs[1] = am;
}

/* dsygvd's w^2 carry an absolute error of about eps max|w^2|: poor relative accuracy for the
 * slow modes of a stiff model. Refine those (a priori relative error eps max|w^2| / |w^2| >
 * refine_rel, smallest first, at most refine_max) by the Rayleigh quotient x^T K x / x^T M x
 * of the computed eigenvector with the caller's M, K, accumulated in doubled precision: its error is
 * quadratic in the eigenvector's, so it gives the eigenvalue of the data to nearly full
 * precision. Refines w2 in place; refined: flags (z, zeroed). */
static void sygvd_refine(int z, const double *M, const double *K, const mbl_eig_options *opt, int bmax, double wmax,
                         double wzero, const mbl_eig_result *r, double *w2, char *refined)
{
    int nc = r->ncomp;
    int nref = 0;
    /* in multiply-adds; budget: a fraction of dsygvd's ~b^3, and 16 modes of the largest block */
    double work = 0, budget = 2.0 * REFINE_MIN_MODES * (double)bmax * bmax;
    for (int c = 0; c < nc; c++) {
        double nb = r->rptr[c + 1] - r->rptr[c];
        budget += REFINE_WORK_FRACTION * nb * nb * nb;
    }
    for (;;) {
        int jmin = -1;
        for (int j = 0; j < z; j++)
            if (!refined[j] && fabs(w2[j]) > wzero && DBL_EPSILON * wmax > opt->refine_rel * fabs(w2[j]) &&
                (jmin < 0 || fabs(w2[j]) < fabs(w2[jmin])))
                jmin = j;
        if (jmin < 0 || nref >= opt->refine_max) break;
        int c = 0;
        while (r->rptr[c + 1] <= jmin) c++;
        int nb = r->rptr[c + 1] - r->rptr[c];
        if (nref > 0 && work + 2.0 * nb * nb > budget) break;
        work += 2.0 * nb * nb;
        refined[jmin] = 1, nref++;
        const int *rows = r->rows + r->rptr[c];
        const double *x = r->V + r->voff[c] + (size_t)(jmin - r->rptr[c]) * nb;
        /* x^T K x = sum_j x_j sum_i K_ij x_i, every product and sum compensated */
        double q[4];
        rayleigh2(nb, rows, z, K, M, x, q, NULL);
        double xkx = q[0] + q[1], xmx = q[2] + q[3];
        if (xmx > 0) w2[jmin] = xkx / xmx;
    }
}

/* Zero or not, per eigenvalue (issue 30, item 3): a w^2 of dsygvd within ZERO_CAND_FACTOR of the
 * rounding level of the largest (wzero = ZERO_W2_FACTOR eps max|w^2|, the old global threshold) is
 * judged on its own. Its Rayleigh quotient rq = x^T K x / x^T M x with the caller's M, K in doubled
 * precision (exact to the data, see sygvd_refine), and its own uncertainty
 *     u = min(||r||_M^-1 / ||x||_M, ||r||^2_M^-1 / (delta ||x||^2_M))
 *         + eps (|x|^T |K| |x| + |rq| |x|^T |M| |x|) / (x^T M x),
 * r = K x - rq M x in doubled precision, ||r||^2_M^-1 = ||X^T r||^2 with the block's M-orthonormal
 * eigenvectors X (X X^T = M^-1), delta the distance from rq to the block's other w^2: the residual
 * bounds of a symmetric-definite pencil (Parlett, "The symmetric eigenvalue problem", 11-7: the
 * linear one, and Kato-Temple's quadratic one), and the rounding of the data's entries (each to eps
 * relative) carried by the first-order perturbation x^T (dK - rq dM) x / x^T M x. It is zero when
 * |rq| <= u (ZERO_RQ_FACTOR 1: a rigid-body mode x0 of the exact K has |x0^T K x0| <= eps |x0|^T |K|
 * |x0| for the computed one); otherwise it is a mode, w^2 = rq, listed with the uncertainty
 * err2[j] = ZERO_W2_FACTOR u (when in doubt, a mode with its uncertainty, never a silent zero). The
 * residual in working precision and eps ||K|| ||x||^2 (issue 30's u) were rounding of the product
 * K x, not of rq: the steel rod pendulum's 3.5017320 rad/s had +-0.0072 (issue 65, item 20), where
 * the descriptor's pencil (another route) agrees to 1e-14; now u = 3.5e-10 on w^2 = 12.26, +-5e-9 on
 * s. A slow mode of a stiff model is a mode; a rigid-body mode (K x = 0 to rounding) is zero. */
#define ZERO_CAND_FACTOR 4.0
#define ZERO_RQ_FACTOR 1.0
static void sygvd_zero_test(int z, const double *M, const double *K, double wzero, mbl_eig_result *r, double *w2,
                            unsigned char *zero, double *err2, double *res)
{
    for (int c = 0; c < r->ncomp; c++) {
        int nb = r->rptr[c + 1] - r->rptr[c];
        const int *rows = r->rows + r->rptr[c];
        const double *X = r->V + r->voff[c];
        for (int jj = 0; jj < nb; jj++) {
            int j = r->rptr[c] + jj;
            err2[j] = NAN;
            if (!(fabs(w2[j]) <= ZERO_CAND_FACTOR * wzero)) continue;
            const double *x = X + (size_t)jj * nb;
            double q[4], ab[2];
            rayleigh2(nb, rows, z, K, M, x, q, ab);
            double xmx = q[2] + q[3], rq = xmx > 0 ? (q[0] + q[1]) / xmx : 0.0, ak = ab[0], am = ab[1];
            /* r = K x - rq M x in doubled precision (K symmetric: row a is column a) */
            for (int a = 0; a < nb; a++) {
                double rs = 0, rc = 0, qs = 0, qc = 0;
                const double *kcol = K + (size_t)rows[a] * z, *mcol = M + (size_t)rows[a] * z;
                for (int b = 0; b < nb; b++) {
                    dot2_add(kcol[rows[b]], x[b], &rs, &rc);
                    dot2_add(mcol[rows[b]], x[b], &qs, &qc);
                }
                dot2_add(-rq, qs, &rs, &rc);
                dot2_add(-rq, qc, &rs, &rc);
                res[a] = rs + rc;
            }
            double rm2 = 0, delta = INFINITY; /* ||X^T r||^2, the gap */
            for (int k = 0; k < nb; k++) {
                double d = 0;
                for (int a = 0; a < nb; a++) d += X[a + (size_t)k * nb] * res[a];
                rm2 += d * d;
                if (k != jj) delta = fmin(delta, fabs(w2[r->rptr[c] + k] - rq));
            }
            double u = HUGE_VAL;
            if (xmx > 0) {
                double bound = sqrt(rm2 / xmx);
                if (delta > 0) bound = fmin(bound, rm2 / (delta * xmx));
                u = bound + DBL_EPSILON * (ak + fabs(rq) * am) / xmx;
            }
            if (fabs(rq) <= ZERO_RQ_FACTOR * u) {
                w2[j] = 0.0;
                zero[j] = 1;
            } else {
                w2[j] = rq;
                err2[j] = ZERO_W2_FACTOR * u;
            }
        }
    }
}

/* The backward errors of the eigenpairs of r with the caller's M, C, K (not the symmetric parts);
 * Mb, Kb, MX, KX, CX: work of the largest block's size. */
static void sygvd_berr(int z, const double *M, const double *C, const double *K, int cnonzero, double nM, double nC,
                       double nK, double *Mb, double *Kb, double *MX, double *KX, double *CX, mbl_eig_result *r)
{
    int nc = r->ncomp;
    for (int c = 0; c < nc; c++) {
        int nb = r->rptr[c + 1] - r->rptr[c];
        const int *rows = r->rows + r->rptr[c];
        const double *X = r->V + r->voff[c];
        gather(z, M, nb, rows, 0, Mb);
        gather(z, K, nb, rows, 0, Kb);
        if (nb == 1) { /* dgemm's values of a 1 x 1 block (its sum starts at 0: a product -0 is +0) */
            MX[0] = Mb[0] * X[0] + 0.0, KX[0] = Kb[0] * X[0] + 0.0;
            if (cnonzero) CX[0] = C[(size_t)rows[0] * z + rows[0]] * X[0] + 0.0;
        } else {
            mbla_gemm('N', 'N', nb, nb, nb, 1.0, Mb, nb, X, nb, 0.0, MX, nb, NULL);
            mbla_gemm('N', 'N', nb, nb, nb, 1.0, Kb, nb, X, nb, 0.0, KX, nb, NULL);
            if (cnonzero) {
                gather(z, C, nb, rows, 0, Mb);
                mbla_gemm('N', 'N', nb, nb, nb, 1.0, Mb, nb, X, nb, 0.0, CX, nb, NULL);
            }
        }
        for (int jj = 0; jj < nb; jj++) {
            int j = r->rptr[c] + jj;
            size_t o = (size_t)jj * nb;
            for (int t = 0; t < 2; t++)
                r->berr[2 * j + t] = quad_berr(nb, r->re[2 * j + t], r->im[2 * j + t], X + o, NULL, 1.0, MX + o, NULL,
                                               cnonzero ? CX + o : NULL, NULL, KX + o, NULL, nM, nC, nK);
        }
    }
}

/* dsygvd's result for a 1 x 1 block (a sweep point of one degree of freedom: LAPACK's driver, its
 * workspace queries and OpenBLAS's Cholesky and trsm for one division): k x = w m x with m > 0 and
 * both finite, as dsygvd computes it: u = sqrt(m) (dpotrf), w = k / (u u) (dsygs2's A / B^2;
 * dsyevd of one row returns it with the vector 1), x = 1 / u (dtrsm's inverted diagonal). The same
 * bits as mbla_sygvd (test_modes, sygvd_one_block: random k, m of every exponent, every OpenBLAS
 * kernel). */
static int sygvd_one(double k, double m, double *w, double *x)
{
    double u = sqrt(m);
    *w = k / (u * u);
    *x = 1.0 / u;
    return 0;
}

static int solve_sygvd(int z, const double *M, const double *C, const double *K, int cnonzero, int want,
                       double nM, double nC, double nK, const mbl_eig_options *opt, mbl_eig_result *r,
                       mbl_status *st)
{
    int nc = r->ncomp, bmax = 0, rc = 0;
    for (int c = 0; c < nc; c++) bmax = bmax > r->rptr[c + 1] - r->rptr[c] ? bmax : r->rptr[c + 1] - r->rptr[c];
    size_t bb = (size_t)bmax * bmax + 1, zz = (size_t)z + 1;
    /* the scratch in one block (one allocation a solve instead of ten: a sweep solves one problem a
     * point): Mb, Kb, Z, MX, KX, [CX,] d, w2, err2, then the flags refined and zflag, zeroed */
    size_t nd = (5 + (cnonzero != 0)) * bb + (size_t)bmax + 1 + 2 * zz, nf = (2 * zz + sizeof(double) - 1) / sizeof(double);
    double *blk = mbl_alloc_array(nd + nf, sizeof(double));
    double *Mb = blk, *Kb = blk ? Mb + bb : NULL, *Z = blk ? Kb + bb : NULL, *MX = blk ? Z + bb : NULL;
    double *KX = blk ? MX + bb : NULL, *CX = blk && cnonzero ? KX + bb : NULL;
    double *d = blk ? KX + (1 + (cnonzero != 0)) * bb : NULL, *w2 = blk ? d + bmax + 1 : NULL, *err2 = blk ? w2 + zz : NULL;
    char *refined = blk ? (char *)(void *)(blk + nd) : NULL;
    unsigned char *zflag = blk ? (unsigned char *)refined + zz : NULL;
    if (blk) memset(refined, 0, 2 * zz);
    memset(r->cptr, 0, ((size_t)nc + 1) * sizeof *r->cptr);
    memset(r->voff, 0, ((size_t)nc + 1) * sizeof *r->voff);
    size_t vsz = 0;
    for (int c = 0; c < nc; c++) {
        size_t nb = (size_t)(r->rptr[c + 1] - r->rptr[c]);
        vsz += nb * nb;
    }
    r->V = mbl_alloc_array(vsz + 1, sizeof(double));
    if (!Mb || !Kb || !Z || !d || !w2 || !MX || !KX || (cnonzero && !CX) || !refined || !zflag || !err2 || !r->V) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    size_t off = 0;
    for (int c = 0; c < nc; c++) {
        int nb = r->rptr[c + 1] - r->rptr[c];
        const int *rows = r->rows + r->rptr[c];
        r->cptr[c] = r->rptr[c];
        r->voff[c] = off;
        gather(z, M, nb, rows, 1, Mb);
        gather(z, K, nb, rows, 1, Kb);
        /* Jacobi scaling D M D, D K D with D = diag(1 / sqrt(M_ii)) rounded to a power of 2 (exact:
         * the scaled entries carry no rounding): units mixed across coordinates cost dsygvd nothing */
        for (int i = 0; i < nb; i++) {
            if (!(Mb[i + (size_t)i * nb] > 0)) {
                rc = NEXT_STRATEGY;
                goto done;
            }
            d[i] = pow2_rsqrt(Mb[i + (size_t)i * nb]);
        }
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nb; i++) {
                Mb[i + (size_t)j * nb] *= d[i] * d[j];
                Kb[i + (size_t)j * nb] *= d[i] * d[j];
            }
        int e = nb == 1 && isfinite(Kb[0]) && isfinite(Mb[0]) ? sygvd_one(Kb[0], Mb[0], w2 + r->rptr[c], Z)
                                                              : mbla_sygvd(nb, Kb, nb, Mb, nb, w2 + r->rptr[c], Z, nb, st);
        if (e == MBL_ENOMEM) {
            rc = e;
            goto done;
        }
        if (e) {
            rc = NEXT_STRATEGY; /* M-hat not positive definite, or no convergence */
            goto done;
        }
        double *X = r->V + off;
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nb; i++) X[i + (size_t)j * nb] = d[i] * Z[i + (size_t)j * nb];
        off += (size_t)nb * nb;
    }
    r->cptr[nc] = z;
    r->nvec = z;
    double wmax = 0;
    for (int i = 0; i < z; i++) wmax = fmax(wmax, fabs(w2[i]));
    double wzero = ZERO_W2_FACTOR * DBL_EPSILON * wmax;
    if (opt->refine_max > 0) sygvd_refine(z, M, K, opt, bmax, wmax, wzero, r, w2, refined);
    /* zero or not: each near-zero w^2 from its own residual and condition */
    sygvd_zero_test(z, M, K, wzero, r, w2, zflag, err2, d); /* d: its residual (the scaling is applied) */
    for (int j = 0; j < z; j++) {
        double w = w2[j], a = 0, b = 0;
        if (zflag[j]) a = b = 0;
        else if (w > 0) b = sqrt(w);
        else a = sqrt(-w);
        /* the uncertainty of s = sqrt(w^2) of a mode judged on its own: sqrt|w^2| - sqrt(|w^2| - err2) */
        double es = isfinite(err2[j]) ? sqrt(fabs(w)) - sqrt(fmax(fabs(w) - err2[j], 0.0)) : NAN;
        r->err[2 * j] = r->err[2 * j + 1] = es;
        r->zero[2 * j] = r->zero[2 * j + 1] = zflag[j];
        /* s = +-i sqrt(w^2) (positive imaginary part first), +-sqrt(-w^2), or 0 twice */
        r->re[2 * j] = a, r->im[2 * j] = b;
        r->re[2 * j + 1] = -a, r->im[2 * j + 1] = -b;
        if (a == 0) r->re[2 * j + 1] = 0;
        if (b == 0) r->im[2 * j + 1] = 0;
        r->vre[2 * j] = r->vre[2 * j + 1] = j;
        r->vim[2 * j] = r->vim[2 * j + 1] = -1;
        r->vsign[2 * j] = r->vsign[2 * j + 1] = 1;
    }
    r->zero_floor = 0.0; /* zeros are decided per eigenvalue (sygvd_zero_test) */
    sygvd_berr(z, M, C, K, cnonzero, nM, nC, nK, Mb, Kb, MX, KX, CX, r);
    strcpy(r->solver, "sygvd");
    if (!want) {
        mbl_free(r->V);
        r->V = NULL;
        r->nvec = 0;
    }
done:
    mbl_free(blk);
    return rc;
}

/* ---- strategy 2: the quadratic pencil by QZ ----------------------------------------------- */

/* The first companion pencil (LA, LB: 2nb x 2nb) of the block (Mb, Cb, Kb: nb x nb, scaled in place)
 * after a symmetric diagonal scaling (d: its factors) and the Fan-Lin-Van Dooren scaling; returns the
 * latter's gamma (s = gamma mu). */
static double qz_companion(int nb, double *Mb, double *Cb, double *Kb, double *d, double *LA, double *LB)
{
    int n2 = 2 * nb;
    /* symmetric diagonal scaling x = D y, D_ii = 1 / sqrt(|M_ii|) (the column's largest |M| entry
     * when M_ii = 0) rounded to a power of 2: removes mixed units like the Jacobi scaling of the
     * sygvd path, exactly */
    for (int i = 0; i < nb; i++) {
        double m = fabs(Mb[i + (size_t)i * nb]);
        for (int k = 0; m == 0 && k < nb; k++) m = fmax(m, fabs(Mb[k + (size_t)i * nb]));
        d[i] = m > 0 ? pow2_rsqrt(m) : 1.0;
    }
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            size_t q = i + (size_t)j * nb;
            Mb[q] *= d[i] * d[j], Cb[q] *= d[i] * d[j], Kb[q] *= d[i] * d[j];
        }
    /* Fan-Lin-Van Dooren scaling: s = gamma mu, gamma = sqrt(||K|| / ||M||); the scaled
     * coefficients delta M, delta C / gamma, delta K / gamma^2 with
     * delta = 2 / (||K|| / gamma^2 + ||C|| / gamma + ||M||) have norms summing to 2 */
    double bM = fro(nb, nb, Mb, nb), bC = fro(nb, nb, Cb, nb), bK = fro(nb, nb, Kb, nb);
    double gamma = bK > 0 && bM > 0 ? sqrt(bK / bM) : 1.0;
    double den = bK / (gamma * gamma) + bC / gamma + bM, delta = den > 0 ? 2.0 / den : 1.0;
    /* first companion pencil: [0 I; -K~ -C~] z = mu [I 0; 0 M~] z, z = [x; mu x] */
    memset(LA, 0, (size_t)n2 * n2 * sizeof *LA);
    memset(LB, 0, (size_t)n2 * n2 * sizeof *LB);
    for (int i = 0; i < nb; i++) {
        LA[i + (size_t)(nb + i) * n2] = 1.0;
        LB[i + (size_t)i * n2] = 1.0;
    }
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            size_t p = i + (size_t)j * nb;
            LA[nb + i + (size_t)j * n2] = -delta * Kb[p] / (gamma * gamma);
            LA[nb + i + (size_t)(nb + j) * n2] = -delta * Cb[p] / gamma;
            LB[nb + i + (size_t)(nb + j) * n2] = delta * Mb[p];
        }
    return gamma;
}

/* Of both halves of every companion eigenvector (X, and MX, CX, KX: M, C, K times them, nb x 4nb)
 * the one with the smaller backward error (Higham, Li, Tisseur 2007) into V (nb x 2nb), with its
 * backward error, zero flag and packing in r (eigenvalues e0 on; ai: LAPACK's imaginary parts). */
static void qz_pick(int nb, int e0, const double *ai, const double *X, const double *MX, const double *CX,
                    const double *KX, double nM, double nC, double nK, double *V, mbl_eig_result *r)
{
    int n2 = 2 * nb;
    for (int j = 0; j < n2; j++) {
        int pair = ai[j] != 0.0, jv = j + 1; /* LAPACK packing: re in column j, im in j + 1 */
        double best = HUGE_VAL;
        int pick = 0;
        for (int h = 0; h < 2; h++) {
            size_t o = (size_t)(h * n2 + j) * nb, ov = (size_t)(h * n2 + jv) * nb;
            double eta = quad_berr(nb, r->re[e0 + j], r->im[e0 + j], X + o, pair ? X + ov : NULL, 1.0, MX + o,
                                   pair ? MX + ov : NULL, CX + o, pair ? CX + ov : NULL, KX + o,
                                   pair ? KX + ov : NULL, nM, nC, nK);
            if (eta < best) best = eta, pick = h;
        }
        int cols = pair ? 2 : 1;
        size_t o = (size_t)(pick * n2 + j) * nb, ov = (size_t)(pick * n2 + jv) * nb;
        int zero = zero_within_rounding(nb, r->re[e0 + j], r->im[e0 + j], X + o, pair ? X + ov : NULL, MX + o,
                                        pair ? MX + ov : NULL, CX + o, pair ? CX + ov : NULL, KX + o,
                                        pair ? KX + ov : NULL, nK);
        for (int t = 0; t < cols; t++) r->zero[e0 + j + t] = (unsigned char)zero;
        for (int t = 0; t < cols; t++)
            memcpy(V + (size_t)(j + t) * nb, X + (size_t)(pick * n2 + j + t) * nb, (size_t)nb * sizeof *V);
        for (int t = 0; t < cols; t++) {
            r->berr[e0 + j + t] = best; /* the conjugate pair has the same backward error */
            r->vre[e0 + j + t] = e0 + j;
            r->vim[e0 + j + t] = pair ? e0 + j + 1 : -1;
            r->vsign[e0 + j + t] = t ? -1 : 1;
        }
        j += cols - 1;
    }
}

static int solve_qz(int z, const double *M, const double *C, const double *K, int want, double nM, double nC,
                    double nK, mbl_eig_result *r, mbl_status *st)
{
    int nc = r->ncomp, bmax = 0, rc = 0;
    for (int c = 0; c < nc; c++) bmax = bmax > r->rptr[c + 1] - r->rptr[c] ? bmax : r->rptr[c + 1] - r->rptr[c];
    size_t bb = (size_t)bmax * bmax + 1, b2 = 4 * (size_t)bmax * bmax + 1;
    double *Mb = mbl_alloc_array(bb, sizeof(double)), *Cb = mbl_alloc_array(bb, sizeof(double));
    double *Kb = mbl_alloc_array(bb, sizeof(double));
    double *LA = mbl_alloc_array(b2, sizeof(double)), *LB = mbl_alloc_array(b2, sizeof(double));
    double *VR = mbl_alloc_array(b2, sizeof(double));
    double *ar = mbl_alloc_array(2 * (size_t)bmax + 1, sizeof(double)), *ai = mbl_alloc_array(2 * (size_t)bmax + 1, sizeof(double));
    double *be = mbl_alloc_array(2 * (size_t)bmax + 1, sizeof(double)), *d = mbl_alloc_array((size_t)bmax + 1, sizeof(double));
    int *kinds = mbl_alloc_array(2 * (size_t)bmax + 1, sizeof(int));
    /* M X, C X, K X for X = both halves of the companion eigenvectors (nb x 4 nb) */
    double *X = mbl_alloc_array(b2, sizeof(double)), *MX = mbl_alloc_array(b2, sizeof(double));
    double *CX = mbl_alloc_array(b2, sizeof(double)), *KX = mbl_alloc_array(b2, sizeof(double));
    memset(r->cptr, 0, ((size_t)nc + 1) * sizeof *r->cptr);
    memset(r->voff, 0, ((size_t)nc + 1) * sizeof *r->voff);
    size_t vsz = 0;
    for (int c = 0; c < nc; c++) {
        size_t nb = (size_t)(r->rptr[c + 1] - r->rptr[c]);
        vsz += 2 * nb * nb;
    }
    mbl_free(r->V);
    r->V = mbl_alloc_array(vsz + 1, sizeof(double));
    if (!Mb || !Cb || !Kb || !LA || !LB || !VR || !ar || !ai || !be || !kinds || !d || !X || !MX || !CX || !KX || !r->V) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    size_t off = 0;
    double smax = 0;
    for (int c = 0; c < nc; c++) {
        int nb = r->rptr[c + 1] - r->rptr[c], n2 = 2 * nb, e0 = 2 * r->rptr[c];
        const int *rows = r->rows + r->rptr[c];
        r->cptr[c] = e0;
        r->voff[c] = off;
        gather(z, M, nb, rows, 0, Mb);
        gather(z, C, nb, rows, 0, Cb);
        gather(z, K, nb, rows, 0, Kb);
        double gamma = qz_companion(nb, Mb, Cb, Kb, d, LA, LB);
        /* permutation only: LAPACK's scaling balancer (dggbal 'S') can raise the backward error by
         * orders of magnitude on these companion pencils (2.4e-10 against 5e-16 on the damped
         * slider pendulum); the two scalings above do that job */
        int e = mbla_ggevx('P', n2, LA, n2, LB, n2, ar, ai, be, NULL, 1, VR, n2, NULL, NULL, st);
        if (e == MBL_ENOMEM) {
            rc = e;
            goto done;
        }
        if (e) {
            rc = NEXT_STRATEGY;
            goto done;
        }
        /* finite or not from the pencil itself (beta against ||LB||, alpha against ||LA||, the rank
         * of LB), never from |s|: a nearly singular M-hat gives beta at rounding level and a 1e37
         * "eigenvalue" */
        int nf = 0;
        e = mbla_gev_classify(n2, LA, n2, LB, n2, ar, ai, be, r->re + e0, r->im + e0, kinds, &nf, NULL, st);
        if (e == MBL_ENOMEM) {
            rc = e;
            goto done;
        }
        if (e || nf < n2) {
            rc = NEXT_STRATEGY; /* an infinite eigenvalue: M-hat singular, A cannot exist */
            goto done;
        }
        for (int j = 0; j < n2; j++) {
            r->re[e0 + j] *= gamma, r->im[e0 + j] *= gamma; /* conjugate pairs stay exact */
            smax = fmax(smax, hypot(r->re[e0 + j], r->im[e0 + j]));
        }
        /* the eigenvectors of the unscaled problem: x = D y */
        for (int j = 0; j < n2; j++)
            for (int i = 0; i < n2; i++) VR[i + (size_t)j * n2] *= d[i % nb];
        gather(z, M, nb, rows, 0, Mb);
        gather(z, C, nb, rows, 0, Cb);
        gather(z, K, nb, rows, 0, Kb);
        /* both halves of every eigenvector as candidates for x; keep the one with the smaller
         * backward error (Higham, Li, Tisseur 2007) */
        for (int j = 0; j < n2; j++)
            for (int i = 0; i < nb; i++) {
                X[i + (size_t)j * nb] = VR[i + (size_t)j * n2];
                X[i + (size_t)(n2 + j) * nb] = VR[nb + i + (size_t)j * n2];
            }
        mbla_gemm('N', 'N', nb, 2 * n2, nb, 1.0, Mb, nb, X, nb, 0.0, MX, nb, NULL);
        mbla_gemm('N', 'N', nb, 2 * n2, nb, 1.0, Cb, nb, X, nb, 0.0, CX, nb, NULL);
        mbla_gemm('N', 'N', nb, 2 * n2, nb, 1.0, Kb, nb, X, nb, 0.0, KX, nb, NULL);
        qz_pick(nb, e0, ai, X, MX, CX, KX, nM, nC, nK, r->V + off, r);
        off += 2 * (size_t)nb * nb;
    }
    r->cptr[nc] = 2 * z;
    r->nvec = 2 * z;
    r->zero_floor = ZERO_DEFECT_FACTOR * sqrt(DBL_EPSILON) * smax;
    strcpy(r->solver, "quadratic-qz");
    if (!want) {
        mbl_free(r->V);
        r->V = NULL;
        r->nvec = 0;
    }
done:
    mbl_free(Mb), mbl_free(Cb), mbl_free(Kb), mbl_free(LA), mbl_free(LB), mbl_free(VR);
    mbl_free(ar), mbl_free(ai), mbl_free(be), mbl_free(d), mbl_free(X), mbl_free(MX), mbl_free(CX), mbl_free(KX);
    mbl_free(kinds);
    return rc;
}

/* ---- strategy 3: the first-order A, dgeev -------------------------------------------------- */

/* dgeev balances A ('B': permute and scale). Where A has entries at the rounding level of zero
 * ones (1e-46 where a relinearization's sums cancel) the scaling factors reach 1e23 and the
 * eigenvectors, computed in the scaled basis, come back with errors that large in the original
 * one (the mechanism single-track car: backward errors 0.06, mode shapes made of the wheels' spin
 * angles; docs/linearization.md, "dgeev's scaling balancer"). When an eigenpair's normwise
 * backward error exceeds this, A is solved again with the permutation only (an exact similarity:
 * backward stable in A's own norm), and that pair takes the eigenvector of its match there. */
#define DGEEV_BERR_RETRY 1e-12
/* the match: the nearest eigenvalue of the same kind (real, or the positive member of a pair) of
 * the second solve with a smaller backward error, within this relative distance plus the rounding
 * level of a zero (zero_floor); none: the pair keeps its vector */
#define DGEEV_MATCH_REL 1e-8
/* The scaling can cost an eigenvalue digits too, not only its vector: an A of ||A||_1 = 1.2e11
 * with entries at the rounding level of zero ones (the single-track car with a front tire of
 * 1e14 N/rad) gave its unstable 0.889 as 0.855 under one kernel, backward error 6.8e-14, where
 * the permutation-only solve has 0.8894 at 8e-16 (a backward stable pair has about nx eps). So a
 * pair of a modulus above zero_floor whose backward error exceeds DGEEV_STABLE_NEPS nx eps
 * (a second solve then runs) takes the value and the vector of its match there: the nearest
 * eigenvalue of the same kind, also above zero_floor, with a backward error within that bound,
 * each used once. Zeros keep the scaled solve's values, which are the more accurate ones for a
 * defective zero (see above and docs/linearization.md, "dgeev's scaling balancer"). */
#define DGEEV_STABLE_NEPS 10.0

/* the rounding level of a zero eigenvalue of A (mbl_eig_result.zero_floor; the match's floor) */
static double dgeev_zero_floor(int nx, const double *A)
{
    return ZERO_DEFECT_FACTOR * sqrt(DBL_EPSILON * mbla_norm1(nx, nx, A, nx));
}

/* eigenpair i of the packed (wi, VR): x = u + i sg v (v NULL: real) */
static void dgeev_cols(int nx, const double *wi, const double *VR, int i, const double **u, const double **v, double *sg)
{
    int c = wi[i] < 0 ? i - 1 : i;
    *u = VR + (size_t)c * nx;
    *v = wi[i] != 0.0 ? VR + (size_t)(c + 1) * nx : NULL;
    *sg = wi[i] < 0 ? -1 : 1;
}

/* Eigenvalues (wr, wi) and packed right eigenvectors (VR, nx x nx) of A with the balancing balanc */
static int dgeev_run(char balanc, int nx, const double *A, double *wr, double *wi, double *VR, mbl_status *st)
{
    /* 'B' through dgeev itself: the bits every model had before the retry existed */
    return balanc == 'B' ? mbla_eig(nx, A, nx, wr, wi, NULL, 1, VR, nx, st)
                         : mbla_eig_balance(balanc, nx, A, nx, wr, wi, VR, nx, st);
}

/* berr: the backward errors ||A v - s v|| / (||A||_F ||v||) of the eigenvalues (wr, wi) with the
 * packed vectors VR; the largest returned. AV, res: work (nx x nx, 2 nx). */
static double dgeev_berr(int nx, const double *A, const double *wr, const double *wi, const double *VR, double *AV,
                         double *res, double *berr)
{
    mbla_gemm('N', 'N', nx, nx, nx, 1.0, A, nx, VR, nx, 0.0, AV, nx, NULL);
    double nA = fro(nx, nx, A, nx), worst = 0;
    for (int i = 0; i < nx; i++) {
        const double *u, *v;
        double sg, sr = wr[i], si = wi[i];
        dgeev_cols(nx, wi, VR, i, &u, &v, &sg);
        const double *Au = AV + (u - VR), *Av = v ? AV + (v - VR) : NULL;
        for (int k = 0; k < nx; k++) {
            double xr = u[k], xi = v ? sg * v[k] : 0, axr = Au[k], axi = v ? sg * Av[k] : 0;
            res[k] = axr - (sr * xr - si * xi);
            res[nx + k] = axi - (sr * xi + si * xr);
        }
        double rn = nrm2(2 * nx, res);
        for (int k = 0; k < nx; k++) res[k] = u[k], res[nx + k] = v ? v[k] : 0;
        double xn = nrm2(2 * nx, res);
        berr[i] = nA > 0 && xn > 0 ? rn / (nA * xn) : 0.0;
        worst = fmax(worst, berr[i]);
    }
    return worst;
}

/* The pairs of (wr, wi, berr) of a modulus above zero_floor whose backward error exceeds stable
 * take the values and vectors of their matches in the second solve (wr2, wi2, berr2, VR2): the
 * nearest eigenvalue of the same kind there, within stable and above zero_floor, whose own nearest
 * eigenvalue of the first solve is pair i (near: work, nx). Then the pairs whose backward error
 * exceeds DGEEV_BERR_RETRY take the eigenvectors of their matches (the nearest of the same kind
 * with a smaller backward error, within DGEEV_MATCH_REL); vectors: 0 skips these. Each match is
 * used once (used: work, nx). 1: some value or vector was taken. */
static int dgeev_take_matches(int nx, double *wr, double *wi, const double *berr, double *VR,
                              const double *wr2, const double *wi2, const double *berr2, const double *VR2,
                              double zero_floor, double stable, int vectors, unsigned char *used, int *near)
{
    int taken = 0;
    memset(used, 0, (size_t)nx);
    for (int j = 0; j < nx; j++) { /* the first solve's nearest first member, before any is replaced */
        near[j] = -1;
        double bd = INFINITY;
        for (int i = 0; i < nx; i++) {
            double d = hypot(wr[i] - wr2[j], fabs(wi[i]) - fabs(wi2[j]));
            if (wi[i] >= 0 && d < bd) bd = d, near[j] = i;
        }
    }
    for (int pass = 0; pass < 1 + vectors; pass++)
        for (int i = 0; i < nx; i++) {
            int value = pass == 0;
            double mag = hypot(wr[i], wi[i]);
            if (wi[i] < 0 || (used[i] & 2) || !(berr[i] > (value ? stable : DGEEV_BERR_RETRY))) continue; /* a pair by its first member */
            if (value && !(mag > zero_floor)) continue;
            int best = -1;
            double bd = INFINITY;
            for (int j = 0; j < nx; j++) {
                if ((used[j] & 1) || wi2[j] < 0 || (wi2[j] > 0) != (wi[i] > 0) || !(berr2[j] < berr[i])) continue;
                if (value && !(berr2[j] <= stable && hypot(wr2[j], wi2[j]) > zero_floor)) continue;
                double d = hypot(wr[i] - wr2[j], wi[i] - wi2[j]);
                if (d < bd) bd = d, best = j;
            }
            if (best < 0 || (value ? near[best] != i : !(bd <= DGEEV_MATCH_REL * mag + zero_floor))) continue;
            used[best] |= 1, used[i] |= 2; /* (bit 1: the match is taken; bit 2: pair i has taken one) */
            int ncol = wi[i] > 0 ? 2 : 1;
            memcpy(VR + (size_t)i * nx, VR2 + (size_t)best * nx, (size_t)ncol * nx * sizeof *VR);
            if (value)
                for (int t = 0; t < ncol; t++) wr[i + t] = wr2[best + t], wi[i + t] = wi2[best + t];
            taken = 1;
        }
    return taken;
}

int eig_dgeev(int nx, const double *A, int retry, double *wr, double *wi, double *VR, double *berr, int *retried,
              mbl_status *st)
{
    if (retried) *retried = 0;
    if (nx <= 0) return 0;
    double *AV = mbl_alloc_array((size_t)nx * nx + 1, sizeof(double));
    double *res = mbl_alloc_array(2 * (size_t)nx + 1, sizeof(double));
    double *VR2 = NULL, *w2 = NULL;
    unsigned char *used = NULL;
    int *near = NULL;
    int rc = AV && res ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = dgeev_run('B', nx, A, wr, wi, VR, st);
    double stable = DGEEV_STABLE_NEPS * nx * DBL_EPSILON;
    if (!rc && dgeev_berr(nx, A, wr, wi, VR, AV, res, berr) > stable) {
        /* pairs spoiled by the scaling: their values and vectors, or vectors, from the permutation only */
        VR2 = mbl_alloc_array((size_t)nx * nx + 1, sizeof(double));
        w2 = mbl_alloc_array(3 * (size_t)nx + 1, sizeof(double)); /* wr2, wi2, berr2 */
        used = mbl_alloc_array((size_t)nx + 1, 1);
        near = mbl_alloc_array((size_t)nx + 1, sizeof *near);
        if (!VR2 || !w2 || !used || !near) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = dgeev_run('P', nx, A, w2, w2 + nx, VR2, st);
        if (!rc) {
            dgeev_berr(nx, A, w2, w2 + nx, VR2, AV, res, w2 + 2 * nx);
            if (dgeev_take_matches(nx, wr, wi, berr, VR, w2, w2 + nx, w2 + 2 * nx, VR2, dgeev_zero_floor(nx, A), stable, retry, used, near)) {
                dgeev_berr(nx, A, wr, wi, VR, AV, res, berr);
                if (retried) *retried = 1;
            }
        }
    }
    mbl_free(AV), mbl_free(res), mbl_free(VR2), mbl_free(w2), mbl_free(used), mbl_free(near);
    return rc;
}

static int solve_dgeev(int nx, int z0, const double *A, int want, mbl_eig_result *r, mbl_status *st)
{
    double *VR = mbl_alloc_array((size_t)nx * nx + 1, sizeof(double));
    mbl_free(r->V);
    r->rptr[0] = r->rptr[1] = r->cptr[0] = r->cptr[1] = 0, r->voff[0] = 0;
    r->V = want ? mbl_alloc_array((size_t)z0 * nx + 1, sizeof(double)) : NULL;
    int rc = 0;
    if (!VR || (want && !r->V)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = eig_dgeev(nx, A, want, r->re, r->im, VR, r->berr, NULL, st))) goto done;
    for (int i = 0; i < nx; i++) {
        if (r->im[i] == 0.0) r->vre[i] = i, r->vim[i] = -1, r->vsign[i] = 1;
        else if (r->im[i] > 0.0) r->vre[i] = i, r->vim[i] = i + 1, r->vsign[i] = 1;
        else r->vre[i] = i - 1, r->vim[i] = i, r->vsign[i] = -1;
    }
    r->zero_floor = dgeev_zero_floor(nx, A);
    r->ncomp = 1;
    r->rptr[1] = z0;
    for (int i = 0; i < z0; i++) r->rows[i] = i;
    r->cptr[1] = want ? nx : 0;
    r->nvec = want ? nx : 0;
    if (want)
        for (int j = 0; j < nx; j++) memcpy(r->V + (size_t)j * z0, VR + (size_t)j * nx, (size_t)z0 * sizeof(double));
    strcpy(r->solver, "dgeev");
done:
    mbl_free(VR);
    return rc;
}

/* ---- the one call -------------------------------------------------------------------------- */

/* the first z rows of A (nx = 2z) are exactly [0 I]: S' = W */
static int top_is_identity(int z, const double *A)
{
    int nx = 2 * z;
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < z; i++)
            if (A[i + (size_t)j * nx] != (j == z + i ? 1.0 : 0.0)) return 0;
    return 1;
}

int eig_solve(const mbl_eig_problem *p, const mbl_eig_options *opt_in, int want_vectors,
              mbl_eig_result **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "eig_solve: out is NULL");
    *out = NULL;
    if (!p) return mbl_error(st, MBL_EARG, "eig_solve: problem is NULL");
    if (p->z0 < 0 || p->z1 < 0) return mbl_error(st, MBL_EDIM, "eig_solve: negative state counts");
    int nx = p->z0 + p->z1, z = p->z1;
    if (nx > 0 && !p->A) return mbl_error(st, MBL_EARG, "eig_solve: A is NULL");
    mbl_eig_options opt;
    if (opt_in) opt = *opt_in;
    else eig_options_default(&opt);
    mbl_eig_result *r = result_new(nx, p->z0);
    if (!r) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = 0;
    if (nx == 0) {
        strcpy(r->solver, "none"); /* rptr[0] = cptr[0] = 0 (result_new) */
        goto done;
    }
    rc = NEXT_STRATEGY;
    if (p->z0 == p->z1 && p->M && p->C && p->K && top_is_identity(z, p->A)) {
        double nM = fro(z, z, p->M, z), nC = fro(z, z, p->C, z), nK = fro(z, z, p->K, z);
        if (find_blocks(z, p->M, p->C, p->K, r)) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        int cnonzero = nC > 0;
        int undamped = nC <= opt.damp_tol * sqrt(nM * nK);
        int symmetric = asym(z, p->M) <= opt.sym_tol * nM && asym(z, p->K) <= opt.sym_tol * nK;
        if (undamped && symmetric) rc = solve_sygvd(z, p->M, p->C, p->K, cnonzero, want_vectors, nM, nC, nK, &opt, r, st);
        if (rc == NEXT_STRATEGY) {
            rc = solve_qz(z, p->M, p->C, p->K, want_vectors, nM, nC, nK, r, st);
        }
    }
    if (rc == NEXT_STRATEGY) rc = solve_dgeev(nx, p->z0, p->A, want_vectors, r, st);
done:
    if (rc) {
        eig_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
