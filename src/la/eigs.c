/* Sparse generalized eigenvalues near a shift: ARPACK-ng (BSD) in regular mode on the
 * shift-invert operator OP = (A - sigma E)^{-1} E, the factorization done by KLU; symmetric
 * pencils by ARPACK's Lanczos in shift-invert mode. Their refinement: eigs_refine.c. */
#include "core/progress.h"
#include "la/la_internal.h"

#include <arpack.h>
#include <complex.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define MBLA_EIGS_MAXITER_DEFAULT 300
#define MBLA_EIGS_NCV_MIN 20     /* default ncv = min(n, max(2k + 1, MBLA_EIGS_NCV_MIN)) */
#define MBLA_EIGS_SEED 12345u    /* fixed seed of the start vector: deterministic results */

void mbla_eigs_opts_default(mbla_eigs_opts *opts)
{
    if (!opts) return;
    opts->ncv = 0;
    opts->maxiter = MBLA_EIGS_MAXITER_DEFAULT;
    opts->tol = 0.0;
    mbla_klu_opts_default(&opts->klu);
    /* shift-invert matrices mix stiffness, mass and constraint scales: equilibrated, KLU's
     * threshold pivoting keeps the fill-reducing order (docs/linear-algebra.md) */
    opts->klu.equilibrate = 1;
    /* a saddle-point K - sigma M: the multipliers paired with coordinates before AMD, so that the
     * pivots stay where the order planned them (spatial beam bodies: 10x less fill) */
    opts->klu.saddle = 1;
}

/* Deterministic pseudo-random numbers in [-1, 1) (a 32-bit LCG; quality is irrelevant, only
 * a start vector without special structure is needed). */
static double lcg(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

typedef struct {
    int n, cplx;
    const mbla_csc *E; /* NULL: identity */
    mbla_klu *klu;
    double *tmp;       /* n (real) or 2n (complex) */
} op_ctx;

/* y = OP x (real). */
static int op_real(op_ctx *c, const double *x, double *y, mbl_status *st)
{
    if (c->E) mbla_csc_gemv(c->E, 1.0, x, 0.0, y, NULL);
    else memcpy(y, x, (size_t)c->n * sizeof *y);
    return mbla_klu_solve(c->klu, 1, y, c->n, st);
}

/* y = OP x (complex, interleaved). E is real. */
static int op_cplx(op_ctx *c, const double *x, double *y, mbl_status *st)
{
    int n = c->n;
    if (c->E) {
        for (int i = 0; i < 2 * n; i++) y[i] = 0.0;
        const mbla_csc *E = c->E;
        for (int j = 0; j < n; j++)
            for (int k = E->p[j]; k < E->p[j + 1]; k++) {
                y[2 * E->i[k]] += E->x[k] * x[2 * j];
                y[2 * E->i[k] + 1] += E->x[k] * x[2 * j + 1];
            }
    } else {
        memcpy(y, x, (size_t)2 * n * sizeof *y);
    }
    return mbla_kluz_solve(c->klu, 'N', 1, y, n, st);
}

typedef struct {
    double re, im, dist;
    int idx;
} ritz;

static void sort_ritz(ritz *r, int n)
{
    for (int a = 1; a < n; a++) { /* insertion sort, stable; n <= ncv is small */
        ritz v = r[a];
        int b = a - 1;
        while (b >= 0 && r[b].dist > v.dist) {
            r[b + 1] = r[b];
            b--;
        }
        r[b + 1] = v;
    }
}

static void normalize(int n, double *vr, double *vi)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += vr[i] * vr[i] + (vi ? vi[i] * vi[i] : 0.0);
    s = sqrt(s);
    if (s > 0.0)
        for (int i = 0; i < n; i++) {
            vr[i] /= s;
            if (vi) vi[i] /= s;
        }
}

/* The outcome of an ARPACK reverse-communication loop (which: the driver): 0, or the error.
 * info = 1 (the iteration limit) with every wanted Ritz value converged is a result, not a failure
 * (ARPACK's documentation of d[ns]aupd: "IPARAM(5) returns the number of wanted converged Ritz
 * values"). */
static int aupd_status(mbl_status *st, const char *fn, const char *which, int info, int nconv, int k, int iters)
{
    if (info == 0 || (info == 1 && nconv >= k)) return 0;
    if (info == 1)
        return mbl_error(st, MBL_ENOCONV, "%s: ARPACK converged %d of %d eigenvalues in %d iterations", fn, nconv,
                         k, iters);
    if (info == 3)
        return mbl_error(st, MBL_ENOCONV, "%s: ARPACK could not apply shifts (converged %d of %d); increase ncv", fn,
                         nconv, k);
    return mbl_error(st, MBL_ELIB, "%s: ARPACK %s returned info %d", fn, which, info);
}

/* The options of an ARPACK call with their defaults filled in, and the Krylov dimension ncv:
 * opts->ncv, or min(n, max(2k + 1, MBLA_EIGS_NCV_MIN)); it must lie in [k + extra, n] (extra 2
 * for the non-symmetric drivers, 1 for the symmetric one). */
static int krylov_opts(const char *fn, const mbla_eigs_opts *opts, int k, int n, int extra, mbla_eigs_opts *o,
                       int *ncv, mbl_status *st)
{
    mbla_eigs_opts_default(o);
    if (opts) *o = *opts;
    *ncv = o->ncv;
    if (*ncv == 0) {
        *ncv = 2 * k + 1 > MBLA_EIGS_NCV_MIN ? 2 * k + 1 : MBLA_EIGS_NCV_MIN;
        if (*ncv > n) *ncv = n;
    }
    if (*ncv < k + extra || *ncv > n)
        return mbl_error(st, MBL_EDIM, "%s: ncv = %d outside [k + %d, n] = [%d, %d]", fn, *ncv, extra, k + extra, n);
    if (o->maxiter < 1) return mbl_error(st, MBL_EARG, "%s: maxiter = %d < 1", fn, o->maxiter);
    if (!(o->tol >= 0.0)) return mbl_error(st, MBL_EARG, "%s: tol = %g < 0", fn, o->tol);
    return 0;
}

/* The state of one mbla_eigs_sinv call: the shifted factorization, ARPACK's workspaces and its
 * reverse-communication arrays (freed together by sinv_work_free). */
typedef struct {
    op_ctx c;
    mbla_csc *Eid, *Cre, *Cim;
    double *cz, *resid, *V, *workd, *workl, *workev, *rwork, *dr, *di, *Z;
    int *select;
    ritz *rz;
    int ncv, lworkl, wdim, want_vec;
    int iparam[11], ipntr[14];
} sinv_work;

static void sinv_work_free(sinv_work *s)
{
    mbla_klu_free(s->c.klu);
    mbla_csc_free(s->Eid);
    mbla_csc_free(s->Cre);
    mbla_csc_free(s->Cim);
    mbl_free(s->cz);
    mbl_free(s->resid);
    mbl_free(s->V);
    mbl_free(s->workd);
    mbl_free(s->workl);
    mbl_free(s->workev);
    mbl_free(s->rwork);
    mbl_free(s->dr);
    mbl_free(s->di);
    mbl_free(s->select);
    mbl_free(s->rz);
    mbl_free(s->c.tmp);
    mbl_free(s->Z);
}

/* The arguments of mbla_eigs_sinv, checked. */
static int sinv_check(const char *fn, const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im,
                      int k, const double *lre, const double *lim, const double *Vre, const double *Vim, int ldv,
                      mbl_status *st)
{
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (A->m != A->n) return mbl_error(st, MBL_EDIM, "%s: A must be square, got %d x %d", fn, A->m, A->n);
    int n = A->n;
    if (E) {
        if ((r = la_csc_arg(E, fn, "E", st))) return r;
        if (E->m != n || E->n != n)
            return mbl_error(st, MBL_EDIM, "%s: E is %d x %d, A is %d x %d", fn, E->m, E->n, n, n);
    }
    if (k < 1 || k > n - 2)
        return mbl_error(st, MBL_EDIM, "%s: k = %d outside [1, n - 2] (n = %d)", fn, k, n);
    if (!lre || !lim) return mbl_error(st, MBL_EARG, "%s: lre or lim is NULL", fn);
    if ((Vre || Vim) && ldv < la_max1(n))
        return mbl_error(st, MBL_EDIM, "%s: ldv %d < n = %d", fn, ldv, n);
    if (!isfinite(sigma_re) || !isfinite(sigma_im))
        return mbl_error(st, MBL_EARG, "%s: shift is not finite", fn);
    return 0;
}

/* A - sigma E on the union pattern (E NULL: the identity), factored by KLU into s->c.klu. */
static int sinv_factor(const char *fn, const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im,
                       const mbla_eigs_opts *o, sinv_work *s, mbl_status *st)
{
    int r, n = A->n;
    const mbla_csc *EE = E;
    if (!EE) {
        if ((r = mbla_csc_new(n, n, n, &s->Eid, st))) return r;
        for (int j = 0; j < n; j++) {
            s->Eid->p[j] = j;
            s->Eid->i[j] = j;
            s->Eid->x[j] = 1.0;
        }
        s->Eid->p[n] = n;
        EE = s->Eid;
    }
    if ((r = mbla_csc_add(1.0, A, -sigma_re, EE, &s->Cre, st))) return r;
    if (!s->c.cplx) {
        r = mbla_klu_new(s->Cre, &o->klu, &s->c.klu, st);
    } else {
        if ((r = mbla_csc_add(0.0, A, -sigma_im, EE, &s->Cim, st))) return r;
        int nz = s->Cre->p[n];
        s->cz = mbl_alloc_array((size_t)2 * (size_t)nz, sizeof *s->cz);
        if (!s->cz) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
        for (int q = 0; q < nz; q++) {
            s->cz[2 * q] = s->Cre->x[q];
            s->cz[2 * q + 1] = s->Cim->x[q];
        }
        r = mbla_kluz_new(s->Cre, s->cz, &o->klu, &s->c.klu, st);
    }
    if (r) {
        if (r == MBL_ESINGULAR)
            mbl_error_prefix(st, "%s: A - sigma E is singular at sigma = %g%+gi (an eigenvalue?)", fn,
                             sigma_re, sigma_im);
        return r;
    }
    return 0;
}

/* ARPACK's workspaces for n unknowns and the Krylov dimension s->ncv. */
static int sinv_alloc(const char *fn, int n, sinv_work *s, mbl_status *st)
{
    int ncv = s->ncv, wdim = s->wdim;
    long long lw = 3LL * ncv * ncv + (s->c.cplx ? 5LL : 6LL) * ncv;
    if (lw > INT_MAX) return mbl_error(st, MBL_ENOMEM, "%s: ncv = %d too large for ARPACK's int workspace", fn, ncv);
    int lworkl = s->lworkl = (int)lw;
    s->resid = mbl_alloc_array((size_t)wdim * n, sizeof *s->resid);
    s->V = la_alloc_dmat(wdim * n, ncv);
    s->workd = mbl_alloc_array((size_t)3 * wdim * n, sizeof *s->workd);
    s->workl = mbl_alloc_array((size_t)wdim * lworkl, sizeof *s->workl);
    s->workev = mbl_alloc_array((size_t)3 * wdim * ncv, sizeof *s->workev);
    s->rwork = mbl_alloc_array((size_t)ncv, sizeof *s->rwork);
    s->dr = mbl_alloc_array((size_t)wdim * (ncv + 1), sizeof *s->dr);
    s->di = mbl_alloc_array((size_t)ncv + 1, sizeof *s->di);
    s->select = mbl_calloc((size_t)ncv, sizeof *s->select);
    s->rz = mbl_alloc_array((size_t)ncv + 1, sizeof *s->rz);
    s->c.tmp = mbl_alloc_array((size_t)wdim * n, sizeof *s->c.tmp);
    if (s->want_vec) s->Z = la_alloc_dmat(wdim * n, ncv + 1);
    if (!s->resid || !s->V || !s->workd || !s->workl || !s->workev || !s->rwork || !s->dr || !s->di || !s->select ||
        !s->rz || !s->c.tmp || (s->want_vec && !s->Z))
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, ncv = %d)", fn, n, ncv);
    return 0;
}

/* The start vector and ARPACK's reverse-communication loop (d/znaupd); *info: its last info. */
static int sinv_iterate(const char *fn, int n, int k, const mbla_eigs_opts *o, sinv_work *s, int *info,
                        mbl_status *st)
{
    int r, cplx = s->c.cplx, wdim = s->wdim, ncv = s->ncv, lworkl = s->lworkl;
    op_ctx *c = &s->c;
    /* start vector OP * (pseudo-random): lies in the range of OP, free of the components of
     * the infinite eigenvalues of a descriptor pencil */
    unsigned seed = MBLA_EIGS_SEED;
    for (int i = 0; i < wdim * n; i++) c->tmp[i] = lcg(&seed);
    r = cplx ? op_cplx(c, c->tmp, s->resid, st) : op_real(c, c->tmp, s->resid, st);
    if (r) return r;

    int *iparam = s->iparam, *ipntr = s->ipntr;
    iparam[0] = 1;          /* exact shifts */
    iparam[2] = o->maxiter;
    iparam[6] = 1;          /* regular mode: ARPACK sees only OP */
    int ido = 0, nop = 0;
    *info = 1;              /* info = 1: use resid as start vector */
    for (;;) {
        if (cplx)
            znaupd_c(&ido, "I", n, "LM", k, o->tol, (double _Complex *)s->resid, ncv,
                     (double _Complex *)s->V, n, iparam, ipntr, (double _Complex *)s->workd,
                     (double _Complex *)s->workl, lworkl, s->rwork, info);
        else
            dnaupd_c(&ido, "I", n, "LM", k, o->tol, s->resid, ncv, s->V, n, iparam, ipntr, s->workd, s->workl,
                     lworkl, info);
        if (ido == -1 || ido == 1) {
            double *x = s->workd + (size_t)wdim * (ipntr[0] - 1), *y = s->workd + (size_t)wdim * (ipntr[1] - 1);
            r = cplx ? op_cplx(c, x, y, st) : op_real(c, x, y, st);
            if (!r) r = core_progress(st, "eigen", ++nop, 0); /* one report per solve */
            if (r) return r;
        } else if (ido == 99) {
            break;
        } else {
            return mbl_error(st, MBL_ELIB, "%s: unexpected ARPACK request ido = %d", fn, ido);
        }
    }
    return 0;
}

/* Ritz vector j of OP (the column(s) of s->Z) into vr, vi (vi may be NULL), unit 2-norm. */
static void sinv_vector(int n, const sinv_work *s, int j, double *vr, double *vi)
{
    const double *Z = s->Z, *di = s->di;
    if (s->c.cplx) {
        const double *zj = Z + (size_t)2 * n * j;
        for (int i = 0; i < n; i++) {
            vr[i] = zj[2 * i];
            if (vi) vi[i] = zj[2 * i + 1];
        }
    } else {
        const double *zr, *zi = NULL;
        double sgn = 1.0;
        if (di[j] == 0.0) {
            zr = Z + (size_t)n * j;
        } else if (di[j] > 0.0) { /* first of a pair: columns j (re), j + 1 (im) */
            zr = Z + (size_t)n * j;
            zi = Z + (size_t)n * (j + 1);
        } else if (j > 0) {       /* second of a pair: the conjugate of the first */
            zr = Z + (size_t)n * (j - 1);
            zi = Z + (size_t)n * j;
            sgn = -1.0;
        } else {
            zr = Z;
        }
        for (int i = 0; i < n; i++) {
            vr[i] = zr[i];
            if (vi) vi[i] = zi ? sgn * zi[i] : 0.0;
        }
    }
    normalize(n, vr, vi);
}

/* Ritz values (and vectors) of OP by d/zneupd (info: the last one of d/znaupd), and the k
 * eigenvalues nearest the shift. */
static int sinv_extract(const char *fn, int n, int k, double sigma_re, double sigma_im, const mbla_eigs_opts *o,
                        sinv_work *s, int info, double *lre, double *lim, double *Vre, double *Vim, int ldv,
                        int *nconv, mbl_status *st)
{
    int cplx = s->c.cplx, want_vec = s->want_vec, ncv = s->ncv, lworkl = s->lworkl;
    int *iparam = s->iparam, *ipntr = s->ipntr;
    double *dr = s->dr, *di = s->di;
    ritz *rz = s->rz;
    /* ---- Ritz values (and vectors) of OP ---- */
    int rvec = want_vec ? 1 : 0;
    double *zz = want_vec ? s->Z : s->V;
    if (cplx) {
        double _Complex sig = 0.0; /* regular mode: no shift inside ARPACK */
        zneupd_c(rvec, "A", s->select, (double _Complex *)dr, (double _Complex *)zz, n, sig,
                 (double _Complex *)s->workev, "I", n, "LM", k, o->tol, (double _Complex *)s->resid, ncv,
                 (double _Complex *)s->V, n, iparam, ipntr, (double _Complex *)s->workd,
                 (double _Complex *)s->workl, lworkl, s->rwork, &info);
    } else {
        dneupd_c(rvec, "A", s->select, dr, di, zz, n, 0.0, 0.0, s->workev, "I", n, "LM", k, o->tol, s->resid,
                 ncv, s->V, n, iparam, ipntr, s->workd, s->workl, lworkl, &info);
    }
    if (info != 0)
        return info == -14 ? mbl_error(st, MBL_ENOCONV, "%s: ARPACK found no eigenvalue to sufficient accuracy", fn)
                           : mbl_error(st, MBL_ELIB, "%s: ARPACK %s returned info %d", fn,
                                       cplx ? "zneupd" : "dneupd", info);
    int nv = iparam[4];
    if (nv > ncv) nv = ncv;
    if (nconv) *nconv = nv;
    if (nv < k) return mbl_error(st, MBL_ENOCONV, "%s: ARPACK converged %d of %d eigenvalues", fn, nv, k);
    /* lambda = sigma + 1/mu; nearest sigma = largest |mu| */
    int nr = 0;
    for (int j = 0; j < nv; j++) {
        double mr = cplx ? dr[2 * j] : dr[j], mi = cplx ? dr[2 * j + 1] : di[j];
        double a2 = mr * mr + mi * mi;
        if (!(a2 > 0.0)) continue; /* mu = 0: infinite eigenvalue, never nearest */
        rz[nr].re = sigma_re + mr / a2;
        rz[nr].im = sigma_im - mi / a2;
        rz[nr].dist = 1.0 / sqrt(a2);
        rz[nr].idx = j;
        nr++;
    }
    if (nr < k) return mbl_error(st, MBL_ENOCONV, "%s: only %d finite eigenvalues of %d found", fn, nr, k);
    sort_ritz(rz, nr);
    for (int t = 0; t < k; t++) {
        lre[t] = rz[t].re;
        lim[t] = rz[t].im;
        if (!want_vec) continue;
        double *vr = Vre ? Vre + (size_t)t * ldv : s->c.tmp, *vi = Vim ? Vim + (size_t)t * ldv : NULL;
        sinv_vector(n, s, rz[t].idx, vr, vi);
    }
    return 0;
}

int mbla_eigs_sinv(const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im,
                   int k, const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre,
                   double *Vim, int ldv, int *nconv, mbl_status *st)
{
    const char *fn = "mbla_eigs_sinv";
    if (nconv) *nconv = 0;
    int r = sinv_check(fn, A, E, sigma_re, sigma_im, k, lre, lim, Vre, Vim, ldv, st);
    if (r) return r;
    int n = A->n;
    mbla_eigs_opts o;
    int ncv = 0;
    int r0 = krylov_opts(fn, opts, k, n, 2, &o, &ncv, st);
    if (r0) return r0;
    int cplx = sigma_im != 0.0;
    sinv_work s = {.c = {n, cplx, E, NULL, NULL}, .ncv = ncv, .wdim = cplx ? 2 : 1, .want_vec = Vre || Vim};
    int info = 0;
    if ((r = sinv_factor(fn, A, E, sigma_re, sigma_im, &o, &s, st))) goto done;
    if ((r = sinv_alloc(fn, n, &s, st))) goto done;
    if ((r = sinv_iterate(fn, n, k, &o, &s, &info, st))) goto done;
    if (nconv) *nconv = s.iparam[4];
    if ((r = aupd_status(st, fn, cplx ? "znaupd" : "dnaupd", info, s.iparam[4], k, s.iparam[2]))) goto done;
    r = sinv_extract(fn, n, k, sigma_re, sigma_im, &o, &s, info, lre, lim, Vre, Vim, ldv, nconv, st);
done:
    sinv_work_free(&s);
    return r;
}

/* ---- symmetric pencils: Lanczos shift-invert ------------------------------------------------ */

/* The solve y = (K - sigma B)^-1 y of a symmetric shift-invert call: KLU's LU or CHOLMOD's L L^T. */
typedef struct {
    mbla_klu *klu;
    mbla_chol *chol;
} sym_solver;

static int sym_solve(const sym_solver *f, double *y, int n, mbl_status *st)
{
    return f->klu ? mbla_klu_solve(f->klu, 1, y, n, st) : mbla_chol_solve(f->chol, 1, y, n, st);
}

/* The arguments of mbla_eigs_sym_sinv and mbla_eigs_sym_chol (K NULL: not needed), the options and ncv. */
static int sym_check(const char *fn, const mbla_csc *K, const mbla_csc *B, double sigma, int k,
                     const mbla_eigs_opts *opts, const double *w, const double *V, int ldv, mbla_eigs_opts *o, int *ncv,
                     mbl_status *st)
{
    int r = K ? la_csc_arg(K, fn, "K", st) : 0;
    if (r) return r;
    if ((r = la_csc_arg(B, fn, "B", st))) return r;
    int n = B->n;
    if (B->m != n || (K && (K->m != n || K->n != n)))
        return mbl_error(st, MBL_EDIM, "%s: K is %d x %d, B is %d x %d (square, same order)", fn, K ? K->m : n,
                         K ? K->n : n, B->m, B->n);
    if (k < 1 || k > n - 1)
        return mbl_error(st, MBL_EDIM, "%s: k = %d outside [1, n - 1] (n = %d)", fn, k, n);
    if (!w) return mbl_error(st, MBL_EARG, "%s: w is NULL", fn);
    if (V && ldv < la_max1(n)) return mbl_error(st, MBL_EDIM, "%s: ldv %d < n = %d", fn, ldv, n);
    if (!isfinite(sigma)) return mbl_error(st, MBL_EARG, "%s: shift is not finite", fn);
    return krylov_opts(fn, opts, k, n, 1, o, ncv, st);
}

/* ARPACK's Lanczos in shift-invert mode 3 on the factored K - sigma B (f) */
static int sym_lanczos(const char *fn, const mbla_csc *B, double sigma, const sym_solver *f, int k,
                       const mbla_eigs_opts *o, int ncv, double *w, double *V, int ldv, int *nconv, mbl_status *st)
{
    int n = B->n, r;
    double *resid = NULL, *Vl = NULL, *workd = NULL, *workl = NULL, *d = NULL, *Z = NULL, *tmp = NULL;
    int *select = NULL;
    ritz *rz = NULL;
    long long lw = (long long)ncv * ncv + 8LL * ncv;
    if (lw > INT_MAX) return mbl_error(st, MBL_ENOMEM, "%s: ncv = %d too large for ARPACK's int workspace", fn, ncv);
    int lworkl = (int)lw;
    resid = mbl_alloc_array((size_t)n, sizeof *resid);
    Vl = la_alloc_dmat(n, ncv);
    workd = mbl_alloc_array((size_t)3 * n, sizeof *workd);
    workl = mbl_alloc_array((size_t)lworkl, sizeof *workl);
    d = mbl_alloc_array((size_t)ncv + 1, sizeof *d);
    select = mbl_calloc((size_t)ncv, sizeof *select);
    rz = mbl_alloc_array((size_t)ncv + 1, sizeof *rz);
    tmp = mbl_alloc_array((size_t)n, sizeof *tmp);
    if (V) Z = la_alloc_dmat(n, ncv + 1);
    if (!resid || !Vl || !workd || !workl || !d || !select || !rz || !tmp || (V && !Z)) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, ncv = %d)", fn, n, ncv);
        goto done;
    }
    /* start vector OP * (pseudo-random): in the range of OP, free of the null space of B */
    unsigned seed = MBLA_EIGS_SEED;
    for (int i = 0; i < n; i++) tmp[i] = lcg(&seed);
    mbla_csc_gemv(B, 1.0, tmp, 0.0, resid, NULL);
    if ((r = sym_solve(f, resid, n, st))) goto done;

    int iparam[11] = {0}, ipntr[11] = {0};
    iparam[0] = 1;         /* exact shifts */
    iparam[2] = o->maxiter;
    iparam[6] = 3;         /* shift-invert mode, B-inner product */
    int ido = 0, info = 1, nop = 0; /* info = 1: use resid as start vector */
    for (;;) {
        dsaupd_c(&ido, "G", n, "LM", k, o->tol, resid, ncv, Vl, n, iparam, ipntr, workd, workl, lworkl, &info);
        double *x = workd + (ipntr[0] - 1), *y = workd + (ipntr[1] - 1);
        if (ido == -1) { /* y = (K - sigma B)^-1 B x */
            mbla_csc_gemv(B, 1.0, x, 0.0, y, NULL);
            if ((r = sym_solve(f, y, n, st))) goto done;
        } else if (ido == 1) { /* y = (K - sigma B)^-1 (B x), B x given */
            memcpy(y, workd + (ipntr[2] - 1), (size_t)n * sizeof *y);
            if ((r = sym_solve(f, y, n, st))) goto done;
        } else if (ido == 2) { /* y = B x */
            mbla_csc_gemv(B, 1.0, x, 0.0, y, NULL);
        } else if (ido == 99) {
            break;
        } else {
            r = mbl_error(st, MBL_ELIB, "%s: unexpected ARPACK request ido = %d", fn, ido);
            goto done;
        }
        if ((r = core_progress(st, "eigen", ++nop, 0))) goto done; /* one report per step */
    }
    if (nconv) *nconv = iparam[4];
    if ((r = aupd_status(st, fn, "dsaupd", info, iparam[4], k, iparam[2]))) goto done;
    dseupd_c(V ? 1 : 0, "A", select, d, V ? Z : Vl, n, sigma, "G", n, "LM", k, o->tol, resid, ncv, Vl, n, iparam,
             ipntr, workd, workl, lworkl, &info);
    if (info != 0) {
        r = info == -14 ? mbl_error(st, MBL_ENOCONV, "%s: ARPACK found no eigenvalue to sufficient accuracy", fn)
                        : mbl_error(st, MBL_ELIB, "%s: ARPACK dseupd returned info %d", fn, info);
        goto done;
    }
    int nv = iparam[4];
    if (nv > ncv) nv = ncv;
    if (nconv) *nconv = nv;
    if (nv < k) {
        r = mbl_error(st, MBL_ENOCONV, "%s: ARPACK converged %d of %d eigenvalues", fn, nv, k);
        goto done;
    }
    /* dseupd returns the eigenvalues of the pencil (mode 3 transforms back) */
    for (int j = 0; j < nv; j++) rz[j].re = d[j], rz[j].im = 0, rz[j].dist = fabs(d[j] - sigma), rz[j].idx = j;
    sort_ritz(rz, nv);
    for (int t = 0; t < k; t++) {
        w[t] = rz[t].re;
        if (!V) continue;
        double *v = V + (size_t)t * ldv;
        memcpy(v, Z + (size_t)n * rz[t].idx, (size_t)n * sizeof *v);
    }
    r = 0;
done:
    mbl_free(resid), mbl_free(Vl), mbl_free(workd), mbl_free(workl), mbl_free(d), mbl_free(Z), mbl_free(tmp);
    mbl_free(select), mbl_free(rz);
    return r;
}

int mbla_eigs_sym_sinv(const mbla_csc *K, const mbla_csc *B, double sigma, int k, const mbla_eigs_opts *opts,
                       double *w, double *V, int ldv, int *nconv, mbl_status *st)
{
    const char *fn = "mbla_eigs_sym_sinv";
    if (nconv) *nconv = 0;
    mbla_eigs_opts o;
    int ncv = 0;
    int r = la_csc_arg(K, fn, "K", st);
    if (!r) r = sym_check(fn, K, B, sigma, k, opts, w, V, ldv, &o, &ncv, st);
    if (r) return r;
    mbla_csc *C = NULL;
    sym_solver f = {NULL, NULL};
    if ((r = mbla_csc_add(1.0, K, -sigma, B, &C, st))) goto done;
    r = mbla_klu_new(C, &o.klu, &f.klu, st);
    if (r) {
        if (r == MBL_ESINGULAR)
            mbl_error_prefix(st, "%s: K - sigma B is singular at sigma = %g (an eigenvalue?)", fn, sigma);
        goto done;
    }
    r = sym_lanczos(fn, B, sigma, &f, k, &o, ncv, w, V, ldv, nconv, st);
done:
    mbla_klu_free(f.klu);
    mbla_csc_free(C);
    return r;
}

int mbla_eigs_sym_chol(const mbla_csc *K, const mbla_csc *B, double sigma, mbla_chol *F, int k,
                       const mbla_eigs_opts *opts, double *w, double *V, int ldv, int *nconv, mbl_status *st)
{
    const char *fn = "mbla_eigs_sym_chol";
    if (nconv) *nconv = 0;
    if (!F && !K) return mbl_error(st, MBL_EARG, "%s: neither K nor a factor", fn);
    mbla_eigs_opts o;
    int ncv = 0;
    int r = sym_check(fn, F ? NULL : K, B, sigma, k, opts, w, V, ldv, &o, &ncv, st);
    if (r) return r;
    mbla_csc *C = NULL;
    sym_solver f = {NULL, F};
    if (!F) {
        if ((r = mbla_csc_add(1.0, K, -sigma, B, &C, st))) goto done;
        r = mbla_chol_new(C, 'L', &f.chol, st);
        if (r) {
            if (r == MBL_ESINGULAR)
                mbl_error_prefix(st, "%s: K - sigma B is not positive definite at sigma = %g (a shift above the lowest "
                                 "eigenvalue?)", fn, sigma);
            goto done;
        }
    }
    r = sym_lanczos(fn, B, sigma, &f, k, &o, ncv, w, V, ldv, nconv, st);
done:
    if (!F) mbla_chol_free(f.chol);
    mbla_csc_free(C);
    return r;
}
