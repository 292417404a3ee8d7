/* Modal analysis of a linear model: eigenvalues and right eigenvectors of A (LAPACK dgeev),
 * undamped natural frequencies, damping ratios, mode shapes mapped back to every coordinate
 * through dq/dS, zero (rigid-body) modes identified, sorted by frequency. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "mblin/model.h"

/* multiple of sqrt(eps * ||A||) below which an eigenvalue counts as zero */
#define ZERO_DEFECT_FACTOR 10.0
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

typedef struct sort_item {
    double freq, re, im;
    int idx, spurious;
} sort_item;

static int cmp_modes(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    if (a->spurious != b->spurious) return a->spurious - b->spurious; /* physical first */
    if (a->freq != b->freq) return a->freq < b->freq ? -1 : 1;
    if (a->re != b->re) return a->re < b->re ? -1 : 1;
    if (a->im != b->im) return a->im > b->im ? -1 : 1; /* positive imaginary part first */
    return a->idx - b->idx;
}

/* The method's own eigenvalues (lin->neig > 0): flags and coordinate parts of the eigenvectors
 * come with them; physical eigenvalues are sorted first, spurious ones after. */
static int modal_given(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes *M, mbl_status *st)
{
    int ne = lin->neig, n = lin->n;
    sort_item *si = mbl_alloc_array((size_t)ne + 1, sizeof *si);
    mbl_mode *modes = mbl_calloc((size_t)ne + 1, sizeof *modes);
    double *sr = mbl_calloc((size_t)n * (size_t)ne + 1, sizeof(double));
    double *sim = mbl_calloc((size_t)n * (size_t)ne + 1, sizeof(double));
    if (!si || !modes || !sr || !sim) {
        mbl_free(si), mbl_free(modes), mbl_free(sr), mbl_free(sim);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double big = 0;
    for (int i = 0; i < ne; i++)
        if (!lin->eig_spurious[i] && isfinite(lin->eig_re[i])) big = fmax(big, hypot(lin->eig_re[i], lin->eig_im[i]));
    double normA = lin->nx && lin->A ? mbla_norm1(lin->nx, lin->nx, lin->A, lin->nx) : 0.0;
    M->zero_tol = fmax(fmax(opt->zero_tol * big, ZERO_DEFECT_FACTOR * sqrt(DBL_EPSILON * normA)), 1e-12);
    for (int i = 0; i < ne; i++) {
        double mag = hypot(lin->eig_re[i], lin->eig_im[i]);
        si[i].freq = !isfinite(mag) ? HUGE_VAL : mag < M->zero_tol ? 0.0 : mag / TWO_PI;
        si[i].re = lin->eig_re[i];
        si[i].im = lin->eig_im[i];
        si[i].idx = i;
        si[i].spurious = lin->eig_spurious[i] ? 1 : 0;
    }
    qsort(si, (size_t)ne, sizeof *si, cmp_modes);
    for (int k = 0; k < ne; k++) {
        int i = si[k].idx;
        mbl_mode *md = &modes[k];
        md->re = lin->eig_re[i];
        md->im = lin->eig_im[i];
        md->spurious = lin->eig_spurious[i] ? 1 : 0;
        double mag = hypot(md->re, md->im);
        if (!isfinite(mag)) {
            md->kind = MBL_MODE_REAL;
            md->freq_hz = HUGE_VAL;
            md->damping_ratio = NAN;
        } else if (mag < M->zero_tol) {
            md->kind = MBL_MODE_ZERO;
        } else {
            md->kind = md->im == 0.0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
            md->freq_hz = mag / TWO_PI;
            md->damping_ratio = -md->re / mag;
        }
        double *a = sr + (size_t)k * n, *b = sim + (size_t)k * n, amax = 0;
        int imax = 0;
        for (int c = 0; c < n; c++) {
            a[c] = lin->eig_vre[c + (size_t)i * n];
            b[c] = lin->eig_vim[c + (size_t)i * n];
            double h = hypot(a[c], b[c]);
            if (h > amax) amax = h, imax = c;
        }
        if (amax > 0) {
            double pr = a[imax], pi = b[imax], d = pr * pr + pi * pi;
            for (int c = 0; c < n; c++) {
                double x = a[c], y = b[c];
                a[c] = (x * pr + y * pi) / d;
                b[c] = (y * pr - x * pi) / d;
            }
        }
    }
    mbl_free(M->modes), mbl_free(M->shape_re), mbl_free(M->shape_im);
    M->modes = modes, M->shape_re = sr, M->shape_im = sim, M->nx = ne;
    mbl_free(si);
    return 0;
}

int mbl_modal(const mbl_linear *lin, const mbl_modal_options *opt_in, mbl_modes **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_modal: out is NULL");
    *out = NULL;
    if (!lin) return mbl_error(st, MBL_EARG, "mbl_modal: linear model is NULL");
    mbl_modal_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_modal_options_default(&opt);
    if (lin->neig > 0) { /* the method's own spectrum, before any nx-sized array (A may not be formed) */
        mbl_modes *G = mbl_calloc(1, sizeof *G);
        if (!G) return mbl_error(st, MBL_ENOMEM, "out of memory");
        G->n = lin->n;
        int rg = modal_given(lin, &opt, G, st);
        if (rg) mbl_modes_free(G);
        else *out = G;
        return rg;
    }
    if (lin->nx > 0 && (!lin->A || !lin->q_S))
        return mbl_error(st, MBL_EARG, "mbl_modal: A not formed (partial spectrum of a large model) and no spectrum given");
    int nx = lin->nx, n = lin->n, z0 = lin->z0;
    mbl_modes *M = mbl_calloc(1, sizeof *M);
    double *wr = mbl_alloc_array((size_t)nx + 1, sizeof *wr), *wi = mbl_alloc_array((size_t)nx + 1, sizeof *wi);
    double *VR = mbl_alloc_array((size_t)nx * (size_t)nx + 1, sizeof *VR);
    sort_item *si = mbl_alloc_array((size_t)nx + 1, sizeof *si);
    int rc = 0;
    if (!M || !wr || !wi || !VR || !si) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    M->nx = nx;
    M->n = n;
    M->modes = mbl_calloc((size_t)nx + 1, sizeof *M->modes);
    M->shape_re = mbl_calloc((size_t)n * (size_t)nx + 1, sizeof(double));
    M->shape_im = mbl_calloc((size_t)n * (size_t)nx + 1, sizeof(double));
    if (!M->modes || !M->shape_re || !M->shape_im) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if (lin->neig > 0) {
        rc = modal_given(lin, &opt, M, st);
        goto done_given;
    }
    if (nx == 0) goto ok;
    rc = mbla_eig(nx, lin->A, nx, wr, wi, NULL, 1, VR, nx, st);
    if (rc) goto done;
    double big = 0;
    for (int i = 0; i < nx; i++) big = fmax(big, hypot(wr[i], wi[i]));
    /* A rigid-body (cyclic) coordinate gives a defective double zero (a Jordan block); rounding
     * of size eps*||A|| splits it into +-sqrt(eps*||A||). So the zero threshold is the larger of
     * the relative tolerance and ZERO_DEFECT_FACTOR * sqrt(eps * ||A||_1), and 1e-12. */
    double normA = mbla_norm1(nx, nx, lin->A, nx);
    M->zero_tol = fmax(fmax(opt.zero_tol * big, ZERO_DEFECT_FACTOR * sqrt(DBL_EPSILON * normA)), 1e-12);
    for (int i = 0; i < nx; i++) {
        double mag = hypot(wr[i], wi[i]);
        si[i].freq = mag < M->zero_tol ? 0.0 : mag / TWO_PI;
        si[i].re = wr[i];
        si[i].im = wi[i];
        si[i].idx = i;
        si[i].spurious = 0;
    }
    qsort(si, (size_t)nx, sizeof *si, cmp_modes);
    for (int k = 0; k < nx; k++) {
        int i = si[k].idx;
        mbl_mode *md = &M->modes[k];
        md->re = wr[i];
        md->im = wi[i];
        double mag = hypot(wr[i], wi[i]);
        if (mag < M->zero_tol) {
            md->kind = MBL_MODE_ZERO;
            md->freq_hz = 0.0;
            md->damping_ratio = 0.0;
        } else {
            md->kind = wi[i] == 0.0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
            md->freq_hz = mag / TWO_PI;
            md->damping_ratio = -wr[i] / mag;
        }
        md->spurious = 0;
        /* eigenvector (LAPACK packing: pair j, j+1 holds re, im for the +im eigenvalue) */
        const double *vre, *vim = NULL;
        double sign_im = 1.0;
        if (wi[i] == 0.0) {
            vre = VR + (size_t)i * nx;
        } else if (wi[i] > 0.0) {
            vre = VR + (size_t)i * nx;
            vim = VR + (size_t)(i + 1) * nx;
        } else {
            vre = VR + (size_t)(i - 1) * nx;
            vim = VR + (size_t)i * nx;
            sign_im = -1.0;
        }
        /* mode shape in all coordinates: dq = q_S * x_S (the position part of the state) */
        double *sr = M->shape_re + (size_t)k * n, *sim = M->shape_im + (size_t)k * n;
        double amax = 0;
        int imax = 0;
        for (int c = 0; c < n; c++) {
            double a = 0, b = 0;
            for (int j = 0; j < z0; j++) {
                a += lin->q_S[c + (size_t)j * n] * vre[j];
                if (vim) b += lin->q_S[c + (size_t)j * n] * sign_im * vim[j];
            }
            sr[c] = a;
            sim[c] = b;
            double h = hypot(a, b);
            if (h > amax) amax = h, imax = c;
        }
        /* normalize: largest component 1 (real) */
        if (amax > 0) {
            double pr = sr[imax], pi = sim[imax], d = pr * pr + pi * pi;
            for (int c = 0; c < n; c++) {
                double a = sr[c], b = sim[c];
                sr[c] = (a * pr + b * pi) / d;
                sim[c] = (b * pr - a * pi) / d;
            }
        }
    }
ok:
done_given:
    if (rc) goto done;
    *out = M;
    M = NULL;
done:
    mbl_modes_free(M);
    mbl_free(wr), mbl_free(wi), mbl_free(VR), mbl_free(si);
    return rc;
}
