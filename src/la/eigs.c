/* Sparse generalized eigenvalues near a shift: ARPACK-ng (BSD) in regular mode on the
 * shift-invert operator OP = (A - sigma E)^{-1} E, the factorization done by KLU. */
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

static int aupd_error(mbl_status *st, const char *which, int info, int nconv, int k, int iters)
{
    if (info == 1)
        return mbl_error(st, MBL_ENOCONV,
                         "mbla_eigs_sinv: ARPACK converged %d of %d eigenvalues in %d iterations",
                         nconv, k, iters);
    if (info == 3)
        return mbl_error(st, MBL_ENOCONV,
                         "mbla_eigs_sinv: ARPACK could not apply shifts (converged %d of %d); "
                         "increase ncv", nconv, k);
    return mbl_error(st, MBL_ELIB, "mbla_eigs_sinv: ARPACK %s returned info %d", which, info);
}

int mbla_eigs_sinv(const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im,
                   int k, const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre,
                   double *Vim, int ldv, int *nconv, mbl_status *st)
{
    const char *fn = "mbla_eigs_sinv";
    if (nconv) *nconv = 0;
    int r = mbla_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (A->m != A->n) return mbl_error(st, MBL_EDIM, "%s: A must be square, got %d x %d", fn, A->m, A->n);
    int n = A->n;
    if (E) {
        if ((r = mbla_csc_arg(E, fn, "E", st))) return r;
        if (E->m != n || E->n != n)
            return mbl_error(st, MBL_EDIM, "%s: E is %d x %d, A is %d x %d", fn, E->m, E->n, n, n);
    }
    if (k < 1 || k > n - 2)
        return mbl_error(st, MBL_EDIM, "%s: k = %d outside [1, n - 2] (n = %d)", fn, k, n);
    if (!lre || !lim) return mbl_error(st, MBL_EARG, "%s: lre or lim is NULL", fn);
    if ((Vre || Vim) && ldv < mbla_max1(n))
        return mbl_error(st, MBL_EDIM, "%s: ldv %d < n = %d", fn, ldv, n);
    if (!isfinite(sigma_re) || !isfinite(sigma_im))
        return mbl_error(st, MBL_EARG, "%s: shift is not finite", fn);
    mbla_eigs_opts o;
    mbla_eigs_opts_default(&o);
    if (opts) o = *opts;
    int ncv = o.ncv;
    if (ncv == 0) {
        ncv = 2 * k + 1 > MBLA_EIGS_NCV_MIN ? 2 * k + 1 : MBLA_EIGS_NCV_MIN;
        if (ncv > n) ncv = n;
    }
    if (ncv < k + 2 || ncv > n)
        return mbl_error(st, MBL_EDIM, "%s: ncv = %d outside [k + 2, n] = [%d, %d]", fn, ncv, k + 2, n);
    if (o.maxiter < 1) return mbl_error(st, MBL_EARG, "%s: maxiter = %d < 1", fn, o.maxiter);
    if (!(o.tol >= 0.0)) return mbl_error(st, MBL_EARG, "%s: tol = %g < 0", fn, o.tol);
    int cplx = sigma_im != 0.0;
    int want_vec = Vre || Vim;
    int wdim = cplx ? 2 : 1; /* doubles per scalar */

    /* ---- A - sigma E on the union pattern, factored by KLU ---- */
    mbla_csc *Eid = NULL, *Cre = NULL, *Cim = NULL;
    double *cz = NULL, *resid = NULL, *V = NULL, *workd = NULL, *workl = NULL, *workev = NULL;
    double *rwork = NULL, *dr = NULL, *di = NULL, *Z = NULL;
    int *select = NULL;
    ritz *rz = NULL;
    op_ctx c = {n, cplx, E, NULL, NULL};
    const mbla_csc *EE = E;
    if (!EE) {
        if ((r = mbla_csc_new(n, n, n, &Eid, st))) goto done;
        for (int j = 0; j < n; j++) {
            Eid->p[j] = j;
            Eid->i[j] = j;
            Eid->x[j] = 1.0;
        }
        Eid->p[n] = n;
        EE = Eid;
    }
    if ((r = mbla_csc_add(1.0, A, -sigma_re, EE, &Cre, st))) goto done;
    if (!cplx) {
        r = mbla_klu_new(Cre, &o.klu, &c.klu, st);
    } else {
        if ((r = mbla_csc_add(0.0, A, -sigma_im, EE, &Cim, st))) goto done;
        int nz = Cre->p[n];
        cz = mbl_alloc_array((size_t)2 * (size_t)nz, sizeof *cz);
        if (!cz) {
            r = mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
            goto done;
        }
        for (int q = 0; q < nz; q++) {
            cz[2 * q] = Cre->x[q];
            cz[2 * q + 1] = Cim->x[q];
        }
        r = mbla_kluz_new(Cre, cz, &o.klu, &c.klu, st);
    }
    if (r) {
        if (r == MBL_ESINGULAR)
            mbl_error_prefix(st, "%s: A - sigma E is singular at sigma = %g%+gi (an eigenvalue?)", fn,
                             sigma_re, sigma_im);
        goto done;
    }

    /* ---- ARPACK workspaces ---- */
    long long lw = 3LL * ncv * ncv + (cplx ? 5LL : 6LL) * ncv;
    if (lw > INT_MAX) {
        r = mbl_error(st, MBL_ENOMEM, "%s: ncv = %d too large for ARPACK's int workspace", fn, ncv);
        goto done;
    }
    int lworkl = (int)lw;
    resid = mbl_alloc_array((size_t)wdim * n, sizeof *resid);
    V = mbla_alloc_dmat(wdim * n, ncv);
    workd = mbl_alloc_array((size_t)3 * wdim * n, sizeof *workd);
    workl = mbl_alloc_array((size_t)wdim * lworkl, sizeof *workl);
    workev = mbl_alloc_array((size_t)3 * wdim * ncv, sizeof *workev);
    rwork = mbl_alloc_array((size_t)ncv, sizeof *rwork);
    dr = mbl_alloc_array((size_t)wdim * (ncv + 1), sizeof *dr);
    di = mbl_alloc_array((size_t)ncv + 1, sizeof *di);
    select = mbl_calloc((size_t)ncv, sizeof *select);
    rz = mbl_alloc_array((size_t)ncv + 1, sizeof *rz);
    c.tmp = mbl_alloc_array((size_t)wdim * n, sizeof *c.tmp);
    if (want_vec) Z = mbla_alloc_dmat(wdim * n, ncv + 1);
    if (!resid || !V || !workd || !workl || !workev || !rwork || !dr || !di || !select || !rz ||
        !c.tmp || (want_vec && !Z)) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, ncv = %d)", fn, n, ncv);
        goto done;
    }
    /* start vector OP * (pseudo-random): lies in the range of OP, free of the components of
     * the infinite eigenvalues of a descriptor pencil */
    unsigned seed = MBLA_EIGS_SEED;
    for (int i = 0; i < wdim * n; i++) c.tmp[i] = lcg(&seed);
    r = cplx ? op_cplx(&c, c.tmp, resid, st) : op_real(&c, c.tmp, resid, st);
    if (r) goto done;

    int iparam[11] = {0}, ipntr[14] = {0};
    iparam[0] = 1;          /* exact shifts */
    iparam[2] = o.maxiter;
    iparam[6] = 1;          /* regular mode: ARPACK sees only OP */
    int ido = 0, info = 1;  /* info = 1: use resid as start vector */
    for (;;) {
        if (cplx)
            znaupd_c(&ido, "I", n, "LM", k, o.tol, (double _Complex *)resid, ncv,
                     (double _Complex *)V, n, iparam, ipntr, (double _Complex *)workd,
                     (double _Complex *)workl, lworkl, rwork, &info);
        else
            dnaupd_c(&ido, "I", n, "LM", k, o.tol, resid, ncv, V, n, iparam, ipntr, workd, workl,
                     lworkl, &info);
        if (ido == -1 || ido == 1) {
            double *x = workd + (size_t)wdim * (ipntr[0] - 1), *y = workd + (size_t)wdim * (ipntr[1] - 1);
            r = cplx ? op_cplx(&c, x, y, st) : op_real(&c, x, y, st);
            if (r) goto done;
        } else if (ido == 99) {
            break;
        } else {
            r = mbl_error(st, MBL_ELIB, "%s: unexpected ARPACK request ido = %d", fn, ido);
            goto done;
        }
    }
    if (nconv) *nconv = iparam[4];
    /* info = 1 (the iteration limit) with every wanted Ritz value converged is a result, not a
     * failure (ARPACK's documentation of dnaupd: "IPARAM(5) returns the number of wanted converged
     * Ritz values") */
    if (info == 1 && iparam[4] >= k) info = 0;
    if (info != 0) {
        r = aupd_error(st, cplx ? "znaupd" : "dnaupd", info, iparam[4], k, iparam[2]);
        goto done;
    }

    /* ---- Ritz values (and vectors) of OP ---- */
    int rvec = want_vec ? 1 : 0;
    double *zz = want_vec ? Z : V;
    if (cplx) {
        double _Complex sig = 0.0; /* regular mode: no shift inside ARPACK */
        zneupd_c(rvec, "A", select, (double _Complex *)dr, (double _Complex *)zz, n, sig,
                 (double _Complex *)workev, "I", n, "LM", k, o.tol, (double _Complex *)resid, ncv,
                 (double _Complex *)V, n, iparam, ipntr, (double _Complex *)workd,
                 (double _Complex *)workl, lworkl, rwork, &info);
    } else {
        dneupd_c(rvec, "A", select, dr, di, zz, n, 0.0, 0.0, workev, "I", n, "LM", k, o.tol, resid,
                 ncv, V, n, iparam, ipntr, workd, workl, lworkl, &info);
    }
    if (info != 0) {
        r = info == -14 ? mbl_error(st, MBL_ENOCONV, "%s: ARPACK found no eigenvalue to sufficient accuracy", fn)
                        : mbl_error(st, MBL_ELIB, "%s: ARPACK %s returned info %d", fn,
                                    cplx ? "zneupd" : "dneupd", info);
        goto done;
    }
    int nv = iparam[4];
    if (nv > ncv) nv = ncv;
    if (nconv) *nconv = nv;
    if (nv < k) {
        r = mbl_error(st, MBL_ENOCONV, "%s: ARPACK converged %d of %d eigenvalues", fn, nv, k);
        goto done;
    }
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
    if (nr < k) {
        r = mbl_error(st, MBL_ENOCONV, "%s: only %d finite eigenvalues of %d found", fn, nr, k);
        goto done;
    }
    sort_ritz(rz, nr);
    for (int t = 0; t < k; t++) {
        lre[t] = rz[t].re;
        lim[t] = rz[t].im;
        if (!want_vec) continue;
        int j = rz[t].idx;
        double *vr = Vre ? Vre + (size_t)t * ldv : c.tmp, *vi = Vim ? Vim + (size_t)t * ldv : NULL;
        if (cplx) {
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
    r = 0;
done:
    mbla_klu_free(c.klu);
    mbla_csc_free(Eid);
    mbla_csc_free(Cre);
    mbla_csc_free(Cim);
    mbl_free(cz);
    mbl_free(resid);
    mbl_free(V);
    mbl_free(workd);
    mbl_free(workl);
    mbl_free(workev);
    mbl_free(rwork);
    mbl_free(dr);
    mbl_free(di);
    mbl_free(select);
    mbl_free(rz);
    mbl_free(c.tmp);
    mbl_free(Z);
    return r;
}
