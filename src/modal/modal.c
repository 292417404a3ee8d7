/* Modal analysis of a linear model: eigenvalues and eigenvectors by the strategy src/eig chooses
 * from the structure (sygvd, quadratic pencil by QZ, or dgeev of A), undamped natural
 * frequencies, damping ratios, backward errors, mode shapes mapped back to every coordinate
 * through dq/dS (one dgemm per independent block), zero (rigid-body) modes identified, sorted
 * by frequency. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "eig/eig.h"
#include "mblin/la.h"
#include "mblin/model.h"
#include "modal/modal_compute.h"
#include "modal/order.h"

/* The rounding level of a zero of the descriptor's pencil, in units of sqrt(eps ||Ad||_1 / ||E||_1)
 * (modal_given). */
#define DESC_ZERO_FACTOR 100.0

/* An eigenvalue below zero_tol of the largest but above the solver's rounding level of a zero is
 * judged on its own (own_zero_error): zero when |s| is within ZERO_OWN_SAFETY times its first-order
 * error estimate (the descriptor's DESC_ERR_SAFETY, src/lin/descriptor.c). Each costs an LU of
 * A - s I (2/3 N^3 flops, N = nx or 2 nx): the largest first, ZERO_OWN_MIN of them at least, then
 * while their LUs stay within ZERO_OWN_WORK times dgeev's ~10 nx^3, ZERO_OWN_MAX at most; the rest
 * stay zero by zero_tol. */
#define ZERO_OWN_SAFETY 4.0
#define ZERO_OWN_MIN 8
#define ZERO_OWN_WORK 1.0
#define ZERO_OWN_MAX 64

/* multiple of sqrt(eps * ||A||) below which an eigenvalue counts as zero */
#define ZERO_DEFECT_FACTOR 10.0
/* The eigenvalues judged on their own reach this multiple of the floor at least, also above
 * zero_tol of the largest: rounding splits a defective zero by about the floor, and by more where
 * entries of A that are exact zeros come out at the rounding level (the mechanism rolling disc at
 * W = 100 rad/s: a real pair +-2.34e-6 over its floor 2.1e-6 and zero_tol 1.5e-7, reported as an
 * unstable mode and a stable one; ZERO_OWN_ROUNDING_ENTRY) */
#define ZERO_OWN_FLOOR_SPAN 100.0
/* An entry of A no larger than this times eps ||A||_F is taken for the rounding of an exact zero
 * (a sum of terms of ||A||'s size that cancel; the augmented solve's condition estimate is 277 on
 * the rolling disc, whose such entries are 20 to 120 eps ||A||): an eigenvalue is also zero within
 * ZERO_OWN_SAFETY times the first-order shift that those entries cause, |y^H G x| / |y^H x| */
#define ZERO_OWN_ROUNDING_ENTRY 1e3
#define TWO_PI 6.283185307179586476925286766559

void mbl_modal_options_default(mbl_modal_options *opt)
{
    opt->zero_tol = 1e-9;
}

void mbl_modes_free(mbl_modes *m)
{
    if (!m) return;
    mbl_free(m->modes);
    mbl_free(m->shape_re);
    mbl_free(m->shape_im);
    mbl_free(m);
}

int mbl_mode_order(double freq_a, double re_a, double im_a, double freq_b, double re_b, double im_b)
{
    if (freq_a != freq_b) {
        double tol = 1e-12 * fmax(freq_a, freq_b);
        if (!isfinite(freq_a) || !isfinite(freq_b) || !(fabs(freq_a - freq_b) <= tol)) return freq_a < freq_b ? -1 : 1;
    }
    if (re_a != re_b) {
        double tol = 1e-12 * fmax(hypot(re_a, im_a), hypot(re_b, im_b));
        if (!(fabs(re_a - re_b) <= tol)) return re_a < re_b ? -1 : 1;
    }
    /* a conjugate pair has bitwise equal |im| (real arithmetic): pairs that tie above to rounding
     * stay apart by it, each pair together, positive imaginary part first (a repeated eigenvalue's
     * members are ordered by their shapes afterwards: modal_order) */
    if (fabs(im_a) != fabs(im_b)) return fabs(im_a) < fabs(im_b) ? -1 : 1;
    if (im_a != im_b) return im_a > im_b ? -1 : 1;
    return 0;
}

/* A shape scaled so that its largest component is 1 (real; the first of those within MODAL_SHAPE_TIE
 * of the largest). */
static void normalize_shape(int n, double *a, double *b)
{
    double amax = 0, h[64]; /* the magnitudes kept for the search below where n <= 64 (a sweep's point) */
    int imax = 0, keep = n <= 64;
    for (int c = 0; c < n; c++) {
        double m = b[c] == 0.0 ? fabs(a[c]) : hypot(a[c], b[c]); /* hypot(x, 0) is |x| exactly */
        if (keep) h[c] = m;
        if (m > amax) amax = m; /* fmax(amax, m) without the call: m >= 0, a NaN m left out as there */
    }
    if (!(amax > 0)) return;
    double th = (1.0 - MODAL_SHAPE_TIE) * amax;
    if (keep)
        while (h[imax] < th) imax++;
    else
        while (hypot(a[imax], b[imax]) < th) imax++;
    double pr = a[imax], pi = b[imax], d = pr * pr + pi * pi;
    for (int c = 0; c < n; c++) {
        double x = a[c], y = b[c];
        a[c] = (x * pr + y * pi) / d;
        b[c] = (y * pr - x * pi) / d;
    }
}

/* The method's own eigenvalues (lin->spectrum): flags and coordinate parts of the eigenvectors
 * come with them; physical eigenvalues are sorted first, spurious ones after. */
static int modal_given(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes *M, mbl_status *st)
{
    const mbl_lin_spectrum *sp = lin->spectrum;
    const mbl_lin_descriptor *ds = lin->descriptor;
    int ne = sp->neig, n = lin->n;
    modal_item *si = mbl_alloc_array((size_t)ne + 1, sizeof *si);
    mbl_mode *modes = mbl_calloc((size_t)ne + 1, sizeof *modes);
    double *sr = mbl_calloc((size_t)n * (size_t)ne + 1, sizeof(double));
    double *sim = mbl_calloc((size_t)n * (size_t)ne + 1, sizeof(double));
    double *rr = mbl_alloc_array((size_t)n * (size_t)ne + 1, sizeof(double)); /* by the method's index */
    double *ri = mbl_alloc_array((size_t)n * (size_t)ne + 1, sizeof(double));
    if (!si || !modes || !sr || !sim || !rr || !ri) {
        mbl_free(si), mbl_free(modes), mbl_free(sr), mbl_free(sim), mbl_free(rr), mbl_free(ri);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double big = 0;
    for (int i = 0; i < ne; i++)
        if (!sp->spurious[i] && isfinite(sp->re[i])) big = fmax(big, hypot(sp->re[i], sp->im[i]));
    /* the rounding split of a defective zero of A (dgeev's floor) where A's eigenvalues are the
     * spectrum (penalty: its own ODE); the descriptor's A is another method's (nullspace, augmented),
     * whose norm says nothing of the pencil's eigenvalues (the steel rod pendulum of 200 beam
     * elements: ||A||_1 ~ 1e19 made its 3.50 and 277.6 rad/s modes "zero"; issue 30, item 3) */
    double normA = !ds && lin->nx && lin->A ? mbla_norm1(lin->nx, lin->nx, lin->A, lin->nx) : 0.0;
    double floor_tol = fmax(ZERO_DEFECT_FACTOR * sqrt(DBL_EPSILON * normA), 1e-12);
    M->zero_tol = fmax(opt->zero_tol * big, floor_tol);
    /* every physical eigenvalue with its own error estimate (the descriptor's QZ path: backward error
     * times condition): zero is decided per eigenvalue, |s| <= its estimate, not by a floor nor by
     * zero_tol of the largest (issue 65, item 5) */
    int own = sp->err != NULL;
    for (int i = 0; i < ne && own; i++)
        if (!sp->spurious[i] && !isfinite(sp->err[i])) own = 0;
    if (!own) floor_tol = M->zero_tol;
    /* the descriptor's own pencil (E, Ad): a zero of it is split by rounding of the data like one of
     * E^-1 Ad, by about sqrt(eps ||Ad|| / ||E||) times the conditioning of the Jordan basis, and at a
     * singular configuration the minimum-norm multipliers that are zero come out as 1e-14 and add a
     * geometric stiffness of that size (the parallelogram at its branch point: a double-double zero
     * at +-0.8e-7 to +-2.6e-7, real or imaginary as the BLAS kernel rounds, against 1.5e-7 at the
     * factor 10): DESC_ZERO_FACTOR there, when the eigenvalues carry no estimate of their own */
    if (ds && ds->nd > 0 && ds->Ad && ds->E && !own) {
        double nE = mbla_norm1(ds->nd, ds->nd, ds->E, ds->nd);
        if (nE > 0)
            M->zero_tol = fmax(M->zero_tol, DESC_ZERO_FACTOR * sqrt(DBL_EPSILON * mbla_norm1(ds->nd, ds->nd, ds->Ad,
                                                                                               ds->nd) / nE));
        floor_tol = M->zero_tol;
    }
    for (int i = 0; i < ne; i++) {
        double mag = hypot(sp->re[i], sp->im[i]);
        int zero = mag < floor_tol || (sp->err && mag <= sp->err[i]);
        si[i].freq = !isfinite(mag) ? HUGE_VAL : zero ? 0.0 : mag / TWO_PI;
        si[i].re = sp->re[i];
        si[i].im = sp->im[i];
        si[i].idx = i;
        si[i].zero = zero && isfinite(mag);
        si[i].spurious = sp->spurious[i] ? 1 : 0;
        memcpy(rr + (size_t)i * n, sp->vre + (size_t)i * n, (size_t)n * sizeof *rr);
        memcpy(ri + (size_t)i * n, sp->vim + (size_t)i * n, (size_t)n * sizeof *ri);
        normalize_shape(n, rr + (size_t)i * n, ri + (size_t)i * n);
    }
    int rc = modal_order(ne, si, n, rr, ri, NULL, st);
    for (int k = 0; k < ne && !rc; k++) {
        int i = si[k].idx;
        mbl_mode *md = &modes[k];
        md->re = sp->re[i] + 0.0; /* + 0.0: no negative zeros in reports */
        md->im = sp->im[i] + 0.0;
        md->spurious = sp->spurious[i] ? 1 : 0;
        md->backward_error = sp->berr ? sp->berr[i] : NAN; /* on the method's own pencil */
        md->error_estimate = sp->err && isfinite(sp->err[i]) ? sp->err[i] : NAN;
        double mag = hypot(md->re, md->im);
        if (!isfinite(mag)) {
            md->kind = MBL_MODE_REAL;
            md->freq_hz = HUGE_VAL;
            md->damping_ratio = NAN;
        } else if (mag < floor_tol || mag <= md->error_estimate) { /* zero, or within its own error of it */
            md->kind = MBL_MODE_ZERO;
        } else {
            md->kind = md->im == 0.0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
            md->freq_hz = mag / TWO_PI;
            md->damping_ratio = -md->re / mag + 0.0;
        }
        memcpy(sr + (size_t)k * n, rr + (size_t)i * n, (size_t)n * sizeof *sr);
        memcpy(sim + (size_t)k * n, ri + (size_t)i * n, (size_t)n * sizeof *sim);
    }
    mbl_free(rr), mbl_free(ri);
    if (rc) {
        mbl_free(si), mbl_free(modes), mbl_free(sr), mbl_free(sim);
        return rc;
    }
    mbl_free(M->modes), mbl_free(M->shape_re), mbl_free(M->shape_im);
    M->modes = modes, M->shape_re = sr, M->shape_im = sim, M->nx = ne;
    mbl_free(si);
    return 0;
}

/* The error estimate of a simple eigenvalue s = re + i im of A (nx x nx): with the right and left
 * eigenvectors x, y of A nearest s (two steps of inverse iteration on A - s I, in its real form of
 * order 2 nx for a complex s) and r = A x - s x,
 *     err = ZERO_OWN_SAFETY (|y^H r| + eps (|y|^T |A| |x| + |s| |y|^T |x|)) / |y^H x|:
 * the first-order distance from s to the eigenvalue of A (y^H r / y^H x) plus the rounding of r.
 * A Jordan chain of length k split by rounding into eigenvalues of size delta has |y^H x| ~
 * k delta^(k-1) against a perturbation delta^k: the estimate is at least 4 delta / k, a zero for k
 * <= 4 (dgeev's floor holds the doubles). Measured on the single-track car at Cf = 1e14 (the
 * closed form +0.88936506): s = 0.8893629, estimate 1.0e-4, error 2.2e-6. INFINITY (a zero, as
 * before) when A - s I cannot be factored. */
static int own_zero_error(int nx, const double *A, double nA, double re, double im, double *err, double *zerr,
                          mbl_status *st)
{
    int cplx = im != 0.0, N = cplx ? 2 * nx : nx;
    *err = *zerr = INFINITY;
    double *C = mbl_alloc_array((size_t)N * N + 2 * (size_t)N + 1, sizeof *C);
    if (!C) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *x = C + (size_t)N * N, *y = x + N;
    mbla_dlu *lu = NULL;
    mbl_status ls; /* a failed factorization is an answer (a zero), not an error of the caller */
    mbl_status_clear(&ls);
    for (int attempt = 0; attempt < 2 && !lu; attempt++) {
        double sr = re + (attempt ? DBL_EPSILON * mbla_norm1(nx, nx, A, nx) : 0.0); /* exact: shifted by eps ||A|| */
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                int bi = i >= nx, bj = j >= nx, ii = i - bi * nx, jj = j - bj * nx;
                double v = bi == bj ? A[ii + (size_t)jj * nx] - (ii == jj ? sr : 0.0) : 0.0;
                if (bi != bj && ii == jj) v = bj ? im : -im; /* [A - re I, im I; -im I, A - re I] */
                C[i + (size_t)j * N] = v;
            }
        if (mbla_dlu_new(N, C, N, &lu, &ls)) lu = NULL;
    }
    if (!lu) {
        mbl_free(C);
        return 0;
    }
    for (int i = 0; i < N; i++) x[i] = y[i] = 1.0;
    int ok = 1;
    for (int step = 0; step < 2 && ok; step++) {
        ok = !mbla_dlu_solve(lu, 'N', 1, x, N, &ls) && !mbla_dlu_solve(lu, 'T', 1, y, N, &ls);
        double mx = 0, my = 0;
        for (int i = 0; i < N; i++) mx = fmax(mx, fabs(x[i])), my = fmax(my, fabs(y[i]));
        if (!(mx > 0 && my > 0 && isfinite(mx) && isfinite(my))) ok = 0;
        for (int i = 0; i < N && ok; i++) x[i] /= mx, y[i] /= my;
    }
    mbla_dlu_free(lu);
    if (ok) { /* x = xr + i xi, y = yr + i yi (the real form's halves) */
        double pr = 0, pi = 0, qr = 0, qi = 0, cw = 0, gr = 0, gi = 0, tiny = ZERO_OWN_ROUNDING_ENTRY * DBL_EPSILON * nA;
        for (int j = 0; j < nx; j++) {
            double xr = x[j], xi = cplx ? x[j + nx] : 0.0, yr = y[j], yi = cplx ? y[j + nx] : 0.0;
            pr += yr * xr + yi * xi, pi += yr * xi - yi * xr; /* y^H x */
            /* r_j = (A x)_j - s x_j, y^H r, and |y|^T |A| |x| + |s| |y|^T |x| (the rounding of r);
             * (G x)_j, G the entries of A at the rounding level of ||A|| */
            double ar = 0, ai = 0, aa = 0, hr = 0, hi = 0;
            for (int k = 0; k < nx; k++) {
                double a = A[j + (size_t)k * nx], xk = x[k], xik = cplx ? x[k + nx] : 0.0;
                ar += a * xk, ai += a * xik, aa += fabs(a) * hypot(xk, xik);
                if (fabs(a) <= tiny) hr += a * xk, hi += a * xik;
            }
            double rr = ar - (re * xr - im * xi), ri = ai - (re * xi + im * xr), ya = hypot(yr, yi);
            qr += yr * rr + yi * ri, qi += yr * ri - yi * rr;
            gr += yr * hr + yi * hi, gi += yr * hi - yi * hr;
            cw += ya * (aa + hypot(re, im) * hypot(xr, xi));
        }
        double den = hypot(pr, pi);
        if (den > 0) *err = ZERO_OWN_SAFETY * (hypot(qr, qi) + DBL_EPSILON * cw) / den;
        if (den > 0) *zerr = ZERO_OWN_SAFETY * (hypot(qr, qi) + hypot(gr, gi) + DBL_EPSILON * cw) / den;
    }
    mbl_free(C);
    return 0;
}

/* Mode shapes of every eigenvector column in all coordinates: S = q_S X, one dgemm per
 * independent block of the eigen result (one in all for a coupled system). S is n x nvec. */
static int shapes_all(const mbl_linear *lin, const mbl_eig_result *E, double *S, mbl_status *st)
{
    int n = lin->n, z0 = lin->z0;
    double *Q = NULL;
    for (int c = 0; c < E->ncomp; c++) {
        int nb = E->rptr[c + 1] - E->rptr[c], nv = E->cptr[c + 1] - E->cptr[c];
        const int *rows = E->rows + E->rptr[c];
        double *Sc = S + (size_t)E->cptr[c] * n;
        if (nv == 0) continue;
        if (nb == 0 || n == 0) {
            memset(Sc, 0, (size_t)n * nv * sizeof *Sc);
            continue;
        }
        const double *Qc = lin->q_S;
        if (!(nb == z0 && rows[0] == 0 && rows[nb - 1] == nb - 1)) { /* not all rows: gather q_S(:, rows) */
            if (!Q && !(Q = mbl_alloc_array((size_t)n * z0 + 1, sizeof *Q))) return mbl_error(st, MBL_ENOMEM, "out of memory");
            for (int j = 0; j < nb; j++) memcpy(Q + (size_t)j * n, lin->q_S + (size_t)rows[j] * n, (size_t)n * sizeof *Q);
            Qc = Q;
        }
        if (nb == 1) { /* a block of one row (a sweep point of one degree of freedom): dgemm's values */
            const double *v = E->V + E->voff[c];
            for (int j = 0; j < nv; j++)
                for (int i = 0; i < n; i++) Sc[i + (size_t)j * n] = Qc[i] * v[j] + 0.0; /* its sums start at 0 */
            continue;
        }
        int rc = mbla_gemm('N', 'N', n, nv, nb, 1.0, Qc, n, E->V + E->voff[c], nb, 0.0, Sc, n, st);
        if (rc) {
            mbl_free(Q);
            return rc;
        }
    }
    mbl_free(Q);
    return 0;
}

/* The eigenvalues of E with floor <= |s| < ztol (zero by zero_tol of the largest alone) judged on
 * their own (own_zero_error), the largest first, as many as ZERO_OWN_MIN, ZERO_OWN_WORK and
 * ZERO_OWN_MAX allow: E->zero set where |s| is within the estimate, else E->err holds it (a mode
 * with its uncertainty); beyond them E->zero is set (zero_tol's rule). */
static int modal_own_zeros(const mbl_linear *lin, mbl_eig_result *E, double floor_tol, double ztol, mbl_status *st)
{
    int nx = lin->nx, rc = 0;
    double work = 0, budget = ZERO_OWN_WORK * 10.0 * (double)nx * nx * nx, nA = 0;
    for (size_t p = 0; p < (size_t)nx * nx; p++) nA += lin->A[p] * lin->A[p];
    nA = sqrt(nA); /* ||A||_F */
    for (int done = 0; !rc; done++) {
        int best = -1;
        double bm = 0;
        for (int i = 0; i < nx; i++) {
            double mag = hypot(E->re[i], E->im[i]);
            if (E->zero[i] || E->im[i] < 0 || !(mag >= floor_tol && mag < ztol) || isfinite(E->err[i])) continue;
            if (best < 0 || mag > bm) best = i, bm = mag;
        }
        if (best < 0) break;
        int pair = E->im[best] > 0 && best + 1 < nx && E->im[best + 1] == -E->im[best];
        double err = INFINITY, zerr = INFINITY;
        double N = (E->im[best] != 0.0 ? 2.0 : 1.0) * nx, cost = 2.0 / 3.0 * N * N * N;
        if (done < ZERO_OWN_MAX && (done < ZERO_OWN_MIN || work + cost <= budget)) {
            work += cost;
            rc = own_zero_error(nx, lin->A, nA, E->re[best], E->im[best], &err, &zerr, st);
        }
        for (int t = 0; t <= pair; t++) {
            if (!(bm > err) || !(bm > zerr)) E->zero[best + t] = 1;
            else E->err[best + t] = err;
        }
    }
    return rc;
}

int mbl_modal(const mbl_linear *lin, const mbl_modal_options *opt_in, mbl_modes **out, mbl_status *st)
{
    return modal_compute(lin, opt_in, out, 1, st);
}

int modal_compute(const mbl_linear *lin, const mbl_modal_options *opt_in, mbl_modes **out, int report, mbl_status *st)
{
    return modal_compute_reuse(lin, opt_in, out, report, NULL, st);
}

void modal_reuse_give(modal_reuse *ru, mbl_modes *m)
{
    if (ru && !ru->spare) ru->spare = m;
    else mbl_modes_free(m);
}

void modal_reuse_free(modal_reuse *ru)
{
    if (!ru) return;
    mbl_modes_free(ru->spare);
    mbl_free(ru->scratch);
    ru->spare = NULL, ru->scratch = NULL, ru->nscratch = 0;
}

int modal_compute_reuse(const mbl_linear *lin, const mbl_modal_options *opt_in, mbl_modes **out, int report,
                        modal_reuse *ru, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_modal: out is NULL");
    *out = NULL;
    if (!lin) return mbl_error(st, MBL_EARG, "mbl_modal: linear model is NULL");
    if (report && core_progress(st, "eigen", 0, 0)) return MBL_ECANCELLED;
    mbl_modal_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_modal_options_default(&opt);
    /* the method's own spectrum, before any nx-sized array (A may not be formed) */
    if (lin->spectrum && lin->spectrum->neig > 0) {
        mbl_modes *G = mbl_calloc(1, sizeof *G);
        if (!G) return mbl_error(st, MBL_ENOMEM, "out of memory");
        G->n = lin->n;
        const mbl_lin_spectrum *sp = lin->spectrum;
        snprintf(G->solver, sizeof G->solver, "%s",
                 sp->partial ? (sp->solver[0] ? sp->solver : "arpack") : lin->method);
        int rg = modal_given(lin, &opt, G, st);
        if (rg) mbl_modes_free(G);
        else *out = G;
        return rg;
    }
    if (lin->nx > 0 && (!lin->A || !lin->q_S))
        return mbl_error(st, MBL_EARG, "mbl_modal: A not formed (partial spectrum of a large model) and no spectrum given");
    int nx = lin->nx, n = lin->n;
    mbl_modes *M = NULL;
    modal_item *si = NULL;
    mbl_eig_result *E = NULL;
    double *S = NULL, *rr = NULL, *ri = NULL; /* the shapes by the solver's index */
    int rc = 0;
    if (ru && ru->spare && ru->spare->nx == nx && ru->spare->n == n && ru->spare->modes && ru->spare->shape_re &&
        ru->spare->shape_im && nx > 0) {
        /* the last point's modes: every mode and shape below written whole (the loop over k) */
        M = ru->spare;
        ru->spare = NULL;
        M->zero_tol = 0, M->solver[0] = '\0';
    } else {
        if (!(M = mbl_calloc(1, sizeof *M))) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        M->nx = nx;
        M->n = n;
        M->modes = mbl_calloc((size_t)nx + 1, sizeof *M->modes);
        M->shape_re = mbl_calloc((size_t)n * (size_t)nx + 1, sizeof(double));
        M->shape_im = mbl_calloc((size_t)n * (size_t)nx + 1, sizeof(double));
    }
    if (!M->modes || !M->shape_re || !M->shape_im) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if (nx == 0) goto ok;
    /* the eigen strategy is chosen from the structure of M-hat, C-hat, K-hat and A (src/eig) */
    mbl_eig_problem P = {lin->z0, lin->z1, lin->A, lin->M, lin->Cd, lin->K};
    if (lin->zx > 0) /* user ODE states: x = [S; W; X], the eigenvalues of the whole A (dgeev) */
        P = (mbl_eig_problem){lin->z0, lin->nx - lin->z0, lin->A, NULL, NULL, NULL};
    rc = eig_solve(&P, NULL, 1, &E, st);
    if (rc) goto done;
    { /* snprintf(M->solver, sizeof M->solver, "%s", E->solver) without the formatter */
        size_t len = strlen(E->solver);
        if (len > sizeof M->solver - 1) len = sizeof M->solver - 1;
        memcpy(M->solver, E->solver, len);
        M->solver[len] = '\0';
    }
    const double *wr = E->re, *wi = E->im;
    /* the scratch in one block (one allocation a point of a sweep instead of four): S, rr, ri, si */
    size_t ns = (size_t)n * (size_t)E->nvec + 1, nr = (size_t)n * (size_t)nx + 1;
    size_t ni = ((size_t)nx + 1) * sizeof *si / sizeof(double) + 1;
    if (ru && ru->scratch && ru->nscratch >= ns + 2 * nr + ni) { /* the caller's (no value read before written) */
        S = ru->scratch;
        ru->scratch = NULL;
    } else {
        S = mbl_alloc_array(ns + 2 * nr + ni, sizeof *S);
        if (S && ru) mbl_free(ru->scratch), ru->scratch = NULL, ru->nscratch = ns + 2 * nr + ni;
    }
    if (!S) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rr = S + ns, ri = rr + nr, si = (modal_item *)(void *)(ri + nr);
    if ((rc = shapes_all(lin, E, S, st))) goto done;
    double big = 0;
    for (int i = 0; i < nx; i++) big = fmax(big, hypot(wr[i], wi[i]));
    /* A zero eigenvalue comes out at the rounding level of the solver (dgeev: a rigid-body
     * (cyclic) coordinate gives a defective double zero that rounding of size eps*||A|| splits
     * into +-sqrt(eps*||A||)); E->zero_floor says how large (sygvd: 0, its zeros are decided per
     * eigenvalue and flagged in E->zero). So the zero threshold is the larger of the relative
     * tolerance, that floor, and 1e-12. */
    M->zero_tol = fmax(fmax(opt.zero_tol * big, E->zero_floor), 1e-12);
    /* below zero_tol of the largest but above the solver's floor: zero only within its own error
     * estimate, else a mode with it (issue 65, item 5: a car's front tire at Cf = 1e14 made its
     * unstable +0.889 and its -1.923 "zero modes", 1e-9 of the tire's -6.1e9) */
    double floor_tol = fmax(E->zero_floor, 1e-12);
    if ((rc = modal_own_zeros(lin, E, floor_tol, fmax(M->zero_tol, ZERO_OWN_FLOOR_SPAN * floor_tol), st))) goto done;
    for (int i = 0; i < nx; i++) {
        double mag = hypot(wr[i], wi[i]);
        si[i].zero = mag < floor_tol || E->zero[i];
        si[i].freq = si[i].zero ? 0.0 : mag / TWO_PI;
        si[i].re = wr[i];
        si[i].im = wi[i];
        si[i].idx = i;
        si[i].spurious = 0;
        /* mode shape in all coordinates: dq = q_S * x_S (the position part of the eigenvector),
         * its largest component 1 (real) */
        const double *a = S + (size_t)E->vre[i] * n, *b = E->vim[i] >= 0 ? S + (size_t)E->vim[i] * n : NULL;
        double sign_im = E->vsign[i], *sr = rr + (size_t)i * n, *sim = ri + (size_t)i * n;
        if (i > 0 && !b && E->vim[i - 1] < 0 && E->vre[i - 1] == E->vre[i]) {
            /* the previous eigenvalue's real vector (sygvd's pair +-i w): its shape, normalized */
            memcpy(sr, sr - n, (size_t)n * sizeof *sr);
            memcpy(sim, sim - n, (size_t)n * sizeof *sim);
            continue;
        }
        for (int c = 0; c < n; c++) {
            sr[c] = a[c];
            sim[c] = b ? sign_im * b[c] : 0.0;
        }
        normalize_shape(n, sr, sim);
    }
    if ((rc = modal_order(nx, si, n, rr, ri, NULL, st))) goto done;
    for (int k = 0; k < nx; k++) {
        int i = si[k].idx;
        mbl_mode *md = &M->modes[k];
        md->re = wr[i];
        md->im = wi[i];
        md->backward_error = E->berr[i];
        md->error_estimate = E->err[i]; /* a near-zero eigenvalue judged a mode: its uncertainty (else NAN) */
        double mag = hypot(wr[i], wi[i]);
        if (mag < floor_tol || E->zero[i]) { /* below the solver's floor, or zero within its own error */
            md->kind = MBL_MODE_ZERO;
            md->freq_hz = 0.0;
            md->damping_ratio = 0.0;
        } else {
            md->kind = wi[i] == 0.0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
            md->freq_hz = mag / TWO_PI;
            md->damping_ratio = wr[i] == 0.0 ? 0.0 : -wr[i] / mag;
        }
        md->spurious = 0;
        memcpy(M->shape_re + (size_t)k * n, rr + (size_t)i * n, (size_t)n * sizeof *rr);
        memcpy(M->shape_im + (size_t)k * n, ri + (size_t)i * n, (size_t)n * sizeof *ri);
    }
ok:
    if (rc) goto done;
    *out = M;
    M = NULL;
done:
    mbl_modes_free(M);
    eig_result_free(E);
    if (ru && !ru->scratch && S) ru->scratch = S; /* kept for the next point (its size in ru->nscratch) */
    else mbl_free(S); /* rr, ri, si: in S's block */
    return rc;
}
