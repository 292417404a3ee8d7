/* Refinement of computed eigenpairs of sparse pencils: Newton steps on single pairs
 * (mbla_eigs_refine, mbla_eigs_refine_sym) and block Rayleigh-Ritz on symmetric pencils
 * (mbla_eigs_refine_sym_block), residuals in doubled precision. */
#include "core/progress.h"
#include "la/la_internal.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* ---- refinement of computed eigenpairs ------------------------------------------------------ */

#define MBLA_EIGS_REFINE_MAXIT_DEFAULT 16
/* the symmetric variant converges linearly on pencils conditioned near 1/eps (factor 0.15-0.3 per
 * step on the flexible pendulum at n_p = 10^4): 1e-3 to the rounding level takes about 30 steps */
#define MBLA_EIGS_REFINE_SYM_MAXIT_DEFAULT 40
/* A step whose correction shrank by less than this factor against the previous one refactors
 * A - lambda E at the current lambda for the next step (chord steps otherwise). */
#define MBLA_EIGS_REFINE_CHORD_RATE 0.1
/* mbla_eigs_refine_sym: a pair is converged when its last correction was at most this many
 * units of rounding of lambda */
#define MBLA_EIGS_REFINE_CONV 64

/* r = A x - lambda E x for complex lambda = (lr, li) and x = (xr, xi), accumulated in doubled
 * precision and rounded once: the residual of the stored data, not of its rounding. w: 4n. */
static void resid_cplx(const mbla_csc *A, const mbla_csc *E, double lr, double li, const double *xr,
                       const double *xi, double *rr, double *ri, double *w)
{
    int n = A->n;
    double *sr = w, *cr = w + n, *si = w + 2 * n, *ci = w + 3 * n;
    /* w = E x in doubled precision (hi in sr/si, lo in cr/ci) */
    memset(w, 0, (size_t)4 * n * sizeof *w);
    for (int j = 0; j < n; j++)
        for (int q = E->p[j]; q < E->p[j + 1]; q++) {
            la_dot2_add(E->x[q], xr[j], &sr[E->i[q]], &cr[E->i[q]]);
            la_dot2_add(E->x[q], xi[j], &si[E->i[q]], &ci[E->i[q]]);
        }
    /* r = -lambda w (all four parts of w, every product compensated) */
    for (int i = 0; i < n; i++) {
        double whr = sr[i], wlr = cr[i], whi = si[i], wli = ci[i];
        double a = 0, b = 0, c = 0, d = 0;
        la_dot2_add(-lr, whr, &a, &b), la_dot2_add(-lr, wlr, &a, &b);
        la_dot2_add(li, whi, &a, &b), la_dot2_add(li, wli, &a, &b);
        la_dot2_add(-lr, whi, &c, &d), la_dot2_add(-lr, wli, &c, &d);
        la_dot2_add(-li, whr, &c, &d), la_dot2_add(-li, wlr, &c, &d);
        sr[i] = a, cr[i] = b, si[i] = c, ci[i] = d;
    }
    for (int j = 0; j < n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++) {
            la_dot2_add(A->x[q], xr[j], &sr[A->i[q]], &cr[A->i[q]]);
            la_dot2_add(A->x[q], xi[j], &si[A->i[q]], &ci[A->i[q]]);
        }
    for (int i = 0; i < n; i++) rr[i] = sr[i] + cr[i], ri[i] = si[i] + ci[i];
}

/* The state of one refine call: the pencil, the factorization of A - lambda E on the union
 * pattern of A and E, and the vectors of one pair's iteration. */
typedef struct {
    const mbla_csc *A, *E;
    mbla_csc *C;
    mbla_klu *klu;
    mbla_klu_opts ko;
    double *cz, *w, *xr, *xi, *rr, *ri, *y1, *y2, *l0, *bxr, *bxi;
    double nA, nE;
    int n, k, maxit, sym;
} refine_work;

/* The arguments of refine; 1 when there is nothing to do (k == 0). */
static int refine_check(const char *fn, const mbla_csc *A, const mbla_csc *E, int k, const double *lre,
                        const double *lim, const double *Vre, const double *Vim, int ldv, mbl_status *st)
{
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if ((r = la_csc_arg(E, fn, "E", st))) return r;
    int n = A->n;
    if (A->m != n || E->m != n || E->n != n)
        return mbl_error(st, MBL_EDIM, "%s: A is %d x %d, E is %d x %d (square, same order)", fn, A->m, A->n,
                         E->m, E->n);
    if (k < 0) return mbl_error(st, MBL_EDIM, "%s: k = %d < 0", fn, k);
    if (k == 0) return 1;
    if (!lre || !lim || !Vre || !Vim) return mbl_error(st, MBL_EARG, "%s: lre, lim, Vre or Vim is NULL", fn);
    if (ldv < la_max1(n)) return mbl_error(st, MBL_EDIM, "%s: ldv %d < n = %d", fn, ldv, n);
    return 0;
}

/* cz = A - lambda E, complex, on the union pattern of C */
static void shifted_pencil(const mbla_csc *A, const mbla_csc *E, const mbla_csc *C, double lr, double li,
                           double *cz)
{
    int n = A->n;
    for (int j = 0; j < n; j++) {
        int qa = A->p[j], qe = E->p[j];
        for (int q = C->p[j]; q < C->p[j + 1]; q++) {
            int i = C->i[q];
            double a = 0, e = 0;
            while (qa < A->p[j + 1] && A->i[qa] < i) qa++;
            while (qe < E->p[j + 1] && E->i[qe] < i) qe++;
            if (qa < A->p[j + 1] && A->i[qa] == i) a = A->x[qa];
            if (qe < E->p[j + 1] && E->i[qe] == i) e = E->x[qe];
            cz[2 * q] = a - lr * e;
            cz[2 * q + 1] = -li * e;
        }
    }
}

/* One Newton step on the pair (lambda, x) = ((*plr, *pli), (xr, xi)) with the current factors,
 * its correction in (*pdr, *pdi), the new residual in (rr, ri); sym: lambda then becomes the
 * Rayleigh quotient of the new x. 0, an error, or 1 when the step broke down (the iteration
 * stops). */
static int newton_step(refine_work *rw, double *plr, double *pli, double *pdr, double *pdi, mbl_status *st)
{
    const mbla_csc *A = rw->A, *E = rw->E;
    int n = rw->n, r;
    double *xr = rw->xr, *xi = rw->xi, *rr = rw->rr, *ri = rw->ri, *y1 = rw->y1, *y2 = rw->y2;
    double lr = *plr, li = *pli;
    /* y1 = C^-1 r, y2 = C^-1 E x (interleaved complex) */
    for (int i = 0; i < n; i++) y1[2 * i] = rr[i], y1[2 * i + 1] = ri[i], y2[2 * i] = y2[2 * i + 1] = 0;
    for (int j = 0; j < n; j++)
        for (int q = E->p[j]; q < E->p[j + 1]; q++) {
            y2[2 * E->i[q]] += E->x[q] * xr[j];
            y2[2 * E->i[q] + 1] += E->x[q] * xi[j];
        }
    if ((r = mbla_kluz_solve(rw->klu, 'N', 1, y1, n, st))) return r;
    if ((r = mbla_kluz_solve(rw->klu, 'N', 1, y2, n, st))) return r;
    /* Newton on (A - lambda E) x = 0, x^H x = 1 (x the current vector):
     * dlambda = x^H y1 / x^H y2, dx = -y1 + dlambda y2 */
    double dr, di, dxmax;
    if (la_bordered_update(n, xr, xi, y1, y2, &dr, &di, &dxmax)) return 1;
    lr += dr, li += di;
    *plr = lr, *pli = li, *pdr = dr, *pdi = di;
    double nn = la_nrm2c(n, xr, xi);
    if (!(nn > 0) || !isfinite(nn) || !isfinite(lr) || !isfinite(li)) return 1;
    for (int i = 0; i < n; i++) xr[i] /= nn, xi[i] /= nn;
    resid_cplx(A, E, lr, li, xr, xi, rr, ri, rw->w);
    if (rw->sym) {
        /* the Rayleigh quotient of x: lambda + x^T r / x^T E x (r in doubled precision); its
         * error is quadratic in that of x, where the Newton correction inherits the solve's
         * error (conditioning near 1/eps: linear convergence to a wrong value) */
        double num = 0, den = 0;
        for (int j = 0; j < n; j++)
            for (int q = E->p[j]; q < E->p[j + 1]; q++) den += xr[E->i[q]] * E->x[q] * xr[j];
        for (int i = 0; i < n; i++) num += xr[i] * rr[i];
        if (den != 0 && isfinite(num / den)) {
            double dq = num / den;
            lr += dq, dr += dq, li = 0;
            resid_cplx(A, E, lr, li, xr, xi, rr, ri, rw->w);
        }
    }
    *plr = lr, *pli = li, *pdr = dr, *pdi = di;
    return 0;
}

/* Refine pair t (lre[t], lim[t], vr, vi) in place; berr, iters, conv (may be NULL) receive its
 * backward error, its number of steps and whether it converged. */
static int refine_pair(const char *fn, refine_work *rw, int t, double *lre, double *lim, double *vr, double *vi,
                       double *berr, int *iters, int *conv, mbl_status *st)
{
    const mbla_csc *A = rw->A, *E = rw->E;
    int n = rw->n, k = rw->k, r;
    double *xr = rw->xr, *xi = rw->xi, *rr = rw->rr, *ri = rw->ri, *l0 = rw->l0, *bxr = rw->bxr, *bxi = rw->bxi;
    double nA = rw->nA, nE = rw->nE;
    double lr = lre[t], li = lim[t];
    double nx = la_nrm2c(n, vr, vi);
    if (!(nx > 0)) return mbl_error(st, MBL_EARG, "%s: eigenvector %d is zero", fn, t);
    for (int i = 0; i < n; i++) xr[i] = vr[i] / nx, xi[i] = vi[i] / nx;
    resid_cplx(A, E, lr, li, xr, xi, rr, ri, rw->w);
    double eta = la_nrm2c(n, rr, ri) / (nA + hypot(lr, li) * nE);
    double eta0 = eta, best = eta, bl[2] = {lr, li}, dprev = INFINITY;
    int it = 0, keep = 1; /* keep: the given pair is the best so far; else (bl, bxr, bxi) */
    int refactor = 1, fresh = 0; /* factor at the current lambda before this step; did */
    int cv = 0; /* the last correction was at the rounding level of lambda */
    double dbest = INFINITY;
    for (it = 0; it < rw->maxit; it++) {
        fresh = refactor;
        if (refactor) {
            shifted_pencil(A, E, rw->C, lr, li, rw->cz);
            r = rw->klu ? mbla_kluz_refactor(rw->klu, rw->C, rw->cz, st)
                        : mbla_kluz_new(rw->C, rw->cz, &rw->ko, &rw->klu, st);
            if (r == MBL_ESINGULAR) /* lambda is an eigenvalue to working precision */
                break;
            if (r) return r;
            refactor = 0;
        }
        double dr = 0, di = 0;
        r = newton_step(rw, &lr, &li, &dr, &di, st);
        if (r < 0) return r;
        if (r > 0) break;
        eta = la_nrm2c(n, rr, ri) / (nA + hypot(lr, li) * nE);
        double dl = hypot(dr, di);
        /* sym: the backward error cannot rank the iterates; the one after the smallest
         * correction is kept */
        if (rw->sym ? dl <= dbest : eta <= best) {
            best = eta, dbest = dl, bl[0] = lr, bl[1] = li, keep = 0;
            memcpy(bxr, xr, (size_t)n * sizeof *bxr), memcpy(bxi, xi, (size_t)n * sizeof *bxi);
        }
        /* converged: the correction is at the rounding level of lambda, or stopped shrinking
         * right after a fresh factorization; chord steps (the factors of an earlier lambda)
         * converge linearly, and one that shrinks too slowly asks for a fresh factorization */
        if (dl <= 4 * DBL_EPSILON * hypot(lr, li) || (dl >= dprev && fresh)) {
            cv = dbest <= MBLA_EIGS_REFINE_CONV * DBL_EPSILON * hypot(bl[0], bl[1]);
            it++;
            break;
        }
        if (dl > MBLA_EIGS_REFINE_CHORD_RATE * dprev) refactor = 1;
        dprev = dl;
    }
    /* a pair that moved more than half way to another given eigenvalue may have converged to
     * that one's eigenpair (two pairs collapsing onto one): keep it as given */
    double gap = INFINITY;
    for (int u = 0; u < k; u++)
        if (u != t) gap = fmin(gap, hypot(l0[2 * u] - l0[2 * t], l0[2 * u + 1] - l0[2 * t + 1]));
    if (!keep && hypot(bl[0] - l0[2 * t], bl[1] - l0[2 * t + 1]) > 0.5 * gap)
        keep = 1, it = 0, best = eta0, bl[0] = l0[2 * t], bl[1] = l0[2 * t + 1];
    if (keep)
        for (int i = 0; i < n; i++) vr[i] /= nx, vi[i] /= nx;
    else
        memcpy(vr, bxr, (size_t)n * sizeof *vr), memcpy(vi, bxi, (size_t)n * sizeof *vi);
    lre[t] = bl[0], lim[t] = bl[1];
    if (berr) berr[t] = best;
    if (iters) iters[t] = it;
    if (conv) conv[t] = cv && !keep;
    return 0;
}

/* sym: A and E real symmetric, the eigenvalues real: each step's eigenvalue is the Rayleigh
 * quotient of the new vector (its correction x^T r / x^T E x from the doubled-precision residual)
 * and a pair converges when that correction is at the rounding level of lambda; conv (k, may be
 * NULL) receives 1 for a converged pair, 0 otherwise. */
static int refine(const char *fn, const mbla_csc *A, const mbla_csc *E, int k, double *lre, double *lim,
                  double *Vre, double *Vim, int ldv, int maxit, int sym, double *berr, int *iters, int *conv,
                  mbl_status *st)
{
    int r = refine_check(fn, A, E, k, lre, lim, Vre, Vim, ldv, st);
    if (r) return r > 0 ? 0 : r;
    int n = A->n;
    if (maxit <= 0) maxit = sym ? MBLA_EIGS_REFINE_SYM_MAXIT_DEFAULT : MBLA_EIGS_REFINE_MAXIT_DEFAULT;

    refine_work rw = {.A = A, .E = E, .n = n, .k = k, .maxit = maxit, .sym = sym};
    /* A - lambda E is singular to working precision at a converged lambda, so its pivot growth
     * says nothing about the step: a small pivot threshold keeps the fill-reducing order (large FE
     * meshes: threshold 1e-3 multiplied the fill by 50). The LU only preconditions the Newton
     * step; the residual and the backward error berr are computed from A and E themselves, so an
     * inexact step costs iterations, never accuracy. */
    mbla_klu_opts_default(&rw.ko);
    rw.ko.pivot_tol = 1e-8;
    rw.ko.pivot_tol_try = 0.0;
    r = mbla_csc_add(1.0, A, 0.0, E, &rw.C, st); /* the union pattern of A - lambda E */
    if (r) goto done;
    int nz = rw.C->p[n];
    rw.cz = mbl_alloc_array((size_t)2 * nz + 1, sizeof *rw.cz);
    rw.w = mbl_alloc_array((size_t)4 * n + 1, sizeof *rw.w);
    rw.xr = mbl_alloc_array((size_t)n + 1, sizeof *rw.xr);
    rw.xi = mbl_alloc_array((size_t)n + 1, sizeof *rw.xi);
    rw.rr = mbl_alloc_array((size_t)n + 1, sizeof *rw.rr);
    rw.ri = mbl_alloc_array((size_t)n + 1, sizeof *rw.ri);
    rw.y1 = mbl_alloc_array((size_t)2 * n + 1, sizeof *rw.y1);
    rw.y2 = mbl_alloc_array((size_t)2 * n + 1, sizeof *rw.y2);
    rw.l0 = mbl_alloc_array((size_t)2 * k + 1, sizeof *rw.l0);
    rw.bxr = mbl_alloc_array((size_t)n + 1, sizeof *rw.bxr);
    rw.bxi = mbl_alloc_array((size_t)n + 1, sizeof *rw.bxi);
    if (!rw.cz || !rw.w || !rw.xr || !rw.xi || !rw.rr || !rw.ri || !rw.y1 || !rw.y2 || !rw.l0 || !rw.bxr ||
        !rw.bxi) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
        goto done;
    }
    rw.nA = mbla_csc_norm1(A), rw.nE = mbla_csc_norm1(E);
    double *l0 = rw.l0;
    for (int t = 0; t < k; t++) l0[2 * t] = lre[t], l0[2 * t + 1] = lim[t];
    for (int t = 0; t < k; t++) {
        double *vr = Vre + (size_t)t * ldv, *vi = Vim + (size_t)t * ldv;
        int tc = -1; /* an earlier, refined partner: this is its complex conjugate */
        for (int u = 0; u < t && tc < 0; u++)
            if (l0[2 * t + 1] != 0.0 && l0[2 * u] == l0[2 * t] && l0[2 * u + 1] == -l0[2 * t + 1]) tc = u;
        if (tc >= 0) {
            lre[t] = lre[tc], lim[t] = -lim[tc];
            for (int i = 0; i < n; i++) vr[i] = Vre[i + (size_t)tc * ldv], vi[i] = -Vim[i + (size_t)tc * ldv];
            if (berr) berr[t] = berr[tc];
            if (iters) iters[t] = iters[tc];
            if (conv) conv[t] = conv[tc];
            continue;
        }
        if ((r = core_progress(st, "eigen", t, k))) goto done; /* one report per pair */
        if ((r = refine_pair(fn, &rw, t, lre, lim, vr, vi, berr, iters, conv, st))) goto done;
    }
    r = 0;
done:
    mbla_klu_free(rw.klu);
    mbla_csc_free(rw.C);
    mbl_free(rw.cz), mbl_free(rw.w), mbl_free(rw.xr), mbl_free(rw.xi), mbl_free(rw.rr), mbl_free(rw.ri);
    mbl_free(rw.y1), mbl_free(rw.y2), mbl_free(rw.l0), mbl_free(rw.bxr), mbl_free(rw.bxi);
    return r;
}

int mbla_eigs_refine(const mbla_csc *A, const mbla_csc *E, int k, double *lre, double *lim, double *Vre,
                     double *Vim, int ldv, int maxit, double *berr, int *iters, mbl_status *st)
{
    return refine("mbla_eigs_refine", A, E, k, lre, lim, Vre, Vim, ldv, maxit, 0, berr, iters, NULL, st);
}

int mbla_eigs_refine_sym(const mbla_csc *K, const mbla_csc *B, int k, double *w, double *V, int ldv, int maxit,
                         double *berr, int *iters, int *conv, mbl_status *st)
{
    const char *fn = "mbla_eigs_refine_sym";
    if (k > 0 && (!w || !V)) return mbl_error(st, MBL_EARG, "%s: w or V is NULL", fn);
    int r = 0, n = K ? K->n : 0;
    double *wi = k > 0 ? mbl_calloc((size_t)k, sizeof *wi) : NULL;
    double *Vi = k > 0 && ldv > 0 ? mbl_calloc((size_t)ldv * k, sizeof *Vi) : NULL;
    if (k > 0 && (!wi || !Vi)) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    } else {
        r = refine(fn, K, B, k, w, wi, V, Vi, ldv, maxit, 1, berr, iters, conv, st);
    }
    mbl_free(wi), mbl_free(Vi);
    return r;
}

/* ---- symmetric pencils: block Rayleigh-Ritz refinement -------------------------------------- */

/* mbla_eigs_refine_sym_block: a Ritz value is converged when it changed by at most this fraction
 * in the last step: the floor of the projection's rounding (measured on the flexible pendulum,
 * n_p = 10^3 to 10^4 per link: changes of 1e-15 to 1e-13 once converged; 4500 eps) */
#define MBLA_EIGS_BLOCK_TOL 1e-12
#define MBLA_EIGS_BLOCK_MAXIT_DEFAULT 30
/* directions of the search space whose B-Gram eigenvalue is below this fraction of the largest
 * are dropped (linearly dependent on the others to about its square root) */
#define MBLA_EIGS_BLOCK_DROP 1e-12
/* a correction that keeps less than this fraction of its B-norm when made B-orthogonal to the
 * corrections before it is dropped */
#define MBLA_EIGS_BLOCK_LOSS 1e-6

/* y = A x accumulated in doubled precision (Dot2) and rounded once; lo: n */
static void gemv_dot2(const mbla_csc *A, const double *x, double *y, double *lo)
{
    int n = A->m;
    memset(y, 0, (size_t)n * sizeof *y);
    memset(lo, 0, (size_t)n * sizeof *lo);
    for (int j = 0; j < A->n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++) la_dot2_add(A->x[q], x[j], &y[A->i[q]], &lo[A->i[q]]);
    for (int i = 0; i < n; i++) y[i] += lo[i];
}

static double dot_plain(int n, const double *x, const double *y)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* eigenvalues (ascending) and eigenvectors of the symmetric r x r A (overwritten by them) */
static int syev(const char *fn, int r, double *A, double *d, mbl_status *st)
{
    int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', r, A, r, d);
    if (info < 0) return la_lapacke_error(st, fn, info);
    if (info > 0) return mbl_error(st, MBL_ENOCONV, "%s: dsyev did not converge (%d)", fn, info);
    return 0;
}

/* The state of one mbla_eigs_refine_sym_block call: the search space S = [X Z] (p current vectors
 * X, p corrections Z) with K S and B S, the projected pencil and the factors of K - sigma B. */
typedef struct {
    const mbla_csc *K, *B;
    double sigma;
    int n, p, q2;
    mbla_csc *C;
    mbla_klu *klu;
    double *S, *KS, *BS, *Xn, *lo, *G, *H, *T, *W, *d, *th, *e, *cx;
    int *ord, *cv;
    unsigned char *alg;
    int nalg, *ar, *arp, *arj; /* the algebraic rows of K (ar[0..nalg)), their entries by row */
    double *arx;
    double *X, *Z, *KX, *KZ, *BX, *BZ; /* the halves of S, KS, BS */
} block_work;

static void block_work_free(block_work *b)
{
    mbla_klu_free(b->klu);
    mbla_csc_free(b->C);
    mbl_free(b->S), mbl_free(b->KS), mbl_free(b->BS), mbl_free(b->Xn), mbl_free(b->lo), mbl_free(b->G);
    mbl_free(b->H), mbl_free(b->T), mbl_free(b->W), mbl_free(b->d), mbl_free(b->th), mbl_free(b->e);
    mbl_free(b->cx), mbl_free(b->ord), mbl_free(b->cv), mbl_free(b->alg);
    mbl_free(b->ar), mbl_free(b->arp), mbl_free(b->arj), mbl_free(b->arx);
}

/* The arguments of mbla_eigs_refine_sym_block; 1 when there is nothing to do (p == 0). */
static int block_check(const char *fn, const mbla_csc *K, const mbla_csc *B, double sigma, int p, int k,
                       const double *w, const double *V, int ldv, mbl_status *st)
{
    int r = la_csc_arg(K, fn, "K", st);
    if (r) return r;
    if ((r = la_csc_arg(B, fn, "B", st))) return r;
    int n = K->n;
    if (K->m != n || B->m != n || B->n != n)
        return mbl_error(st, MBL_EDIM, "%s: K is %d x %d, B is %d x %d (square, same order)", fn, K->m, K->n, B->m,
                         B->n);
    if (p < 0 || k < 0 || k > p || 2 * p > n)
        return mbl_error(st, MBL_EDIM, "%s: p = %d, k = %d outside 0 <= k <= p <= n/2 (n = %d)", fn, p, k, n);
    if (p == 0) return 1;
    if (!w || !V) return mbl_error(st, MBL_EARG, "%s: w or V is NULL", fn);
    if (ldv < la_max1(n)) return mbl_error(st, MBL_EDIM, "%s: ldv %d < n = %d", fn, ldv, n);
    if (!isfinite(sigma)) return mbl_error(st, MBL_EARG, "%s: shift is not finite", fn);
    return 0;
}

/* The algebraic rows of K by row (columns ascending, as gemv_dot2 meets them), so that K z on
 * them alone costs their entries, not K's. */
static int alg_rows(const char *fn, block_work *b, mbl_status *st)
{
    const mbla_csc *K = b->K;
    int n = b->n, na = 0;
    for (int i = 0; i < n; i++) na += b->alg[i];
    b->nalg = na;
    b->ar = mbl_alloc_array((size_t)na + 1, sizeof *b->ar);
    b->arp = mbl_calloc((size_t)na + 2, sizeof *b->arp);
    int *slot = mbl_alloc_array((size_t)n + 1, sizeof *slot);
    if (!b->ar || !b->arp || !slot) {
        mbl_free(slot);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    for (int i = 0, a = 0; i < n; i++) slot[i] = b->alg[i] ? (b->ar[a] = i, a++) : -1;
    for (int q = 0; q < K->p[n]; q++)
        if (slot[K->i[q]] >= 0) b->arp[slot[K->i[q]] + 2]++;
    for (int a = 0; a < na; a++) b->arp[a + 2] += b->arp[a + 1];
    b->arj = mbl_alloc_array((size_t)b->arp[na + 1] + 1, sizeof *b->arj);
    b->arx = mbl_alloc_array((size_t)b->arp[na + 1] + 1, sizeof *b->arx);
    if (!b->arj || !b->arx) {
        mbl_free(slot);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    for (int j = 0; j < n; j++)
        for (int q = K->p[j]; q < K->p[j + 1]; q++) {
            int a = slot[K->i[q]];
            if (a < 0) continue;
            b->arj[b->arp[a + 1]] = j, b->arx[b->arp[a + 1]++] = K->x[q];
        }
    mbl_free(slot);
    return 0;
}

/* y = (K z) on the algebraic rows, each summed as gemv_dot2 sums it (the same products in the
 * same order), zero elsewhere; 1 when any is nonzero */
static int alg_kz(const block_work *b, const double *z, double *y)
{
    int any = 0;
    memset(y, 0, (size_t)b->n * sizeof *y);
    for (int a = 0; a < b->nalg; a++) {
        double s = 0, c = 0;
        for (int q = b->arp[a]; q < b->arp[a + 1]; q++) la_dot2_add(b->arx[q], z[b->arj[q]], &s, &c);
        y[b->ar[a]] = s + c;
        any |= y[b->ar[a]] != 0;
    }
    return any;
}

/* The workspaces, the algebraic rows and the factors of K - sigma B. */
static int block_setup(const char *fn, block_work *b, mbl_status *st)
{
    const mbla_csc *K = b->K, *B = b->B;
    int n = b->n, p = b->p, q2 = b->q2, r;
    mbla_klu_opts ko;
    mbla_klu_opts_default(&ko);
    ko.equilibrate = 1; /* as mbla_eigs_sym_sinv's factorization of the same matrix */
    ko.saddle = 1;
    b->S = la_alloc_dmat(n, q2), b->KS = la_alloc_dmat(n, q2), b->BS = la_alloc_dmat(n, q2);
    b->Xn = la_alloc_dmat(n, p), b->lo = mbl_alloc_array((size_t)n + 1, sizeof *b->lo);
    b->G = la_alloc_dmat(q2, q2), b->H = la_alloc_dmat(q2, q2), b->T = la_alloc_dmat(q2, q2);
    b->W = la_alloc_dmat(q2, q2), b->d = mbl_alloc_array((size_t)q2 + 1, sizeof *b->d);
    b->th = mbl_alloc_array((size_t)p + 1, sizeof *b->th), b->e = mbl_alloc_array((size_t)q2 + 1, sizeof *b->e);
    b->cx = la_alloc_dmat(p, p);
    b->ord = mbl_alloc_array((size_t)q2 + 1, sizeof *b->ord), b->cv = mbl_calloc((size_t)p + 1, sizeof *b->cv);
    b->alg = mbl_calloc((size_t)n + 1, 1);
    if (!b->S || !b->KS || !b->BS || !b->Xn || !b->lo || !b->G || !b->H || !b->T || !b->W || !b->d || !b->th ||
        !b->e || !b->cx || !b->ord || !b->cv || !b->alg)
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, p = %d)", fn, n, p);
    /* the algebraic rows: those where B is zero (constraints of a saddle-point pencil) */
    for (int i = 0; i < n; i++) b->alg[i] = 1;
    for (int j = 0; j < n; j++)
        for (int q = B->p[j]; q < B->p[j + 1]; q++)
            if (B->x[q] != 0) b->alg[j] = 0;
    if ((r = alg_rows(fn, b, st))) return r;
    if ((r = mbla_csc_add(1.0, K, -b->sigma, B, &b->C, st))) return r;
    if ((r = mbla_klu_new(b->C, &ko, &b->klu, st))) {
        if (r == MBL_ESINGULAR) mbl_error_prefix(st, "%s: K - sigma B is singular at sigma = %g", fn, b->sigma);
        return r;
    }
    b->X = b->S, b->Z = b->S + (size_t)n * p, b->KX = b->KS, b->KZ = b->KS + (size_t)n * p, b->BX = b->BS;
    b->BZ = b->BS + (size_t)n * p;
    return 0;
}

/* X = the given vectors, unit B-norm, with K X (doubled precision), B X and their Rayleigh
 * quotients th. */
static int block_start(const char *fn, block_work *b, const double *V, int ldv, mbl_status *st)
{
    int n = b->n, p = b->p;
    double *X = b->X, *KX = b->KX, *BX = b->BX;
    for (int t = 0; t < p; t++) {
        double *x = X + (size_t)t * n;
        memcpy(x, V + (size_t)t * ldv, (size_t)n * sizeof *x);
        mbla_csc_gemv(b->B, 1.0, x, 0.0, BX + (size_t)t * n, NULL);
        double nb = dot_plain(n, x, BX + (size_t)t * n);
        if (!(nb > 0) || !isfinite(nb))
            return mbl_error(st, MBL_EARG, "%s: vector %d has no positive B-norm", fn, t);
        nb = sqrt(nb);
        for (int i = 0; i < n; i++) x[i] /= nb, BX[i + (size_t)t * n] /= nb;
        gemv_dot2(b->K, x, KX + (size_t)t * n, b->lo);
        b->th[t] = dot_plain(n, x, KX + (size_t)t * n);
    }
    return 0;
}

/* The corrections Z: the solves of the residuals, made B-orthogonal to X and B-orthonormal among
 * themselves, with K Z and B Z. */
static int block_corrections(block_work *b, mbl_status *st)
{
    const mbla_csc *K = b->K, *B = b->B;
    int n = b->n, p = b->p, r;
    double *X = b->X, *Z = b->Z, *KX = b->KX, *KZ = b->KZ, *BX = b->BX, *BZ = b->BZ, *lo = b->lo;
    const unsigned char *alg = b->alg;
    /* Z = C^-1 (K X - B X Theta), the residuals from the doubled-precision K X; a converged
     * column has no correction: its Z, B Z and K Z are zero and every step below skips it (exactly
     * what the steps would give it) */
    for (int t = 0; t < p; t++)
        for (int i = 0; i < n; i++) {
            size_t o = i + (size_t)t * n;
            Z[o] = alg[i] || b->cv[t] ? 0.0 : KX[o] - b->th[t] * BX[o];
        }
    for (int t = 0; t < p; t++)
        if (b->cv[t]) {
            memset(BZ + (size_t)t * n, 0, (size_t)n * sizeof *BZ);
            memset(KZ + (size_t)t * n, 0, (size_t)n * sizeof *KZ);
        }
    for (int t0 = 0, t1; t0 < p; t0 = t1) { /* the solves, run by run of columns not converged */
        for (t1 = t0; t1 < p && !b->cv[t1]; t1++) continue;
        if (t1 > t0 && (r = mbla_klu_solve(b->klu, t1 - t0, Z + (size_t)t0 * n, n, st))) return r;
        if (t1 == t0) t1++;
    }
    /* B-orthogonal to X (twice), then unit B-norm */
    for (int pass = 0; pass < 2; pass++) {
        for (int t = 0; t < p; t++)
            if (!b->cv[t]) mbla_csc_gemv(B, 1.0, Z + (size_t)t * n, 0.0, BZ + (size_t)t * n, NULL);
        if ((r = mbla_gemm('T', 'N', p, p, n, 1.0, X, n, BZ, n, 0.0, b->cx, p, st))) return r;
        if ((r = mbla_gemm('N', 'N', n, p, p, -1.0, X, n, b->cx, p, 1.0, Z, n, st))) return r;
    }
    /* B-orthonormal among themselves (modified Gram-Schmidt, twice); a column left with less than
     * MBLA_EIGS_BLOCK_LOSS of its norm is dependent on the others and dropped (zero) */
    for (int t = 0; t < p; t++) {
        double *z = Z + (size_t)t * n, *bz = BZ + (size_t)t * n;
        if (b->cv[t]) continue;
        mbla_csc_gemv(B, 1.0, z, 0.0, bz, NULL);
        double n0 = dot_plain(n, z, bz);
        for (int pass = 0; pass < 2; pass++)
            for (int l = 0; l < t; l++) {
                const double *zl = Z + (size_t)l * n, *bzl = BZ + (size_t)l * n;
                double c = dot_plain(n, bzl, z);
                if (c == 0) continue;
                for (int i = 0; i < n; i++) z[i] -= c * zl[i], bz[i] -= c * bzl[i];
            }
        mbla_csc_gemv(B, 1.0, z, 0.0, bz, NULL);
        double nb = dot_plain(n, z, bz);
        double s = nb > MBLA_EIGS_BLOCK_LOSS * MBLA_EIGS_BLOCK_LOSS * n0 && isfinite(nb) ? 1.0 / sqrt(nb) : 0.0;
        for (int i = 0; i < n; i++) z[i] *= s, bz[i] *= s;
        double *kz = KZ + (size_t)t * n;
        if (s == 0) {
            memset(kz, 0, (size_t)n * sizeof *kz);
            continue;
        }
        /* on the algebraic rows: a small remainder scaled to unit norm violates them relatively
         * more than it was computed; the violation makes the projected pencil indefinite, so
         * it is removed by one solve, z -= C^-1 [0; (K z)_alg] */
        if (alg_kz(b, z, lo)) {
            if ((r = mbla_klu_solve(b->klu, 1, lo, n, st))) return r;
            for (int i = 0; i < n; i++) z[i] -= lo[i];
            mbla_csc_gemv(B, 1.0, z, 0.0, bz, NULL);
        }
        gemv_dot2(K, z, kz, lo);
    }
    return 0;
}

/* Rayleigh-Ritz on span S = [X Z]: the p Ritz vectors of the Ritz values nearest sigma into Xn. */
static int block_rayleigh_ritz(const char *fn, block_work *b, mbl_status *st)
{
    int n = b->n, p = b->p, q2 = b->q2, r;
    double *G = b->G, *H = b->H, *T = b->T, *W = b->W, *d = b->d, *e = b->e, sigma = b->sigma;
    int *ord = b->ord;
    /* G = S^T K S, H = S^T B S (symmetrized) */
    if ((r = mbla_gemm('T', 'N', q2, q2, n, 1.0, b->S, n, b->KS, n, 0.0, G, q2, st))) return r;
    if ((r = mbla_gemm('T', 'N', q2, q2, n, 1.0, b->S, n, b->BS, n, 0.0, H, q2, st))) return r;
    for (int j = 0; j < q2; j++)
        for (int i = 0; i < j; i++) {
            double a = 0.5 * (G[i + (size_t)j * q2] + G[j + (size_t)i * q2]);
            double c = 0.5 * (H[i + (size_t)j * q2] + H[j + (size_t)i * q2]);
            G[i + (size_t)j * q2] = G[j + (size_t)i * q2] = a;
            H[i + (size_t)j * q2] = H[j + (size_t)i * q2] = c;
        }
    /* H = U diag(d) U^T; T = U_r diag(d_r^-1/2) over the directions kept; G_r = T^T G T */
    if ((r = syev(fn, q2, H, d, st))) return r;
    int nr = 0;
    double dmax = d[q2 - 1];
    for (int j = 0; j < q2; j++) {
        if (!(d[j] > MBLA_EIGS_BLOCK_DROP * dmax)) continue;
        double s = 1.0 / sqrt(d[j]);
        for (int i = 0; i < q2; i++) T[i + (size_t)nr * q2] = H[i + (size_t)j * q2] * s;
        nr++;
    }
    if (nr < p)
        return mbl_error(st, MBL_ENOCONV, "%s: the search space lost its rank (%d < %d directions)", fn, nr, p);
    if ((r = mbla_gemm('N', 'N', q2, nr, q2, 1.0, G, q2, T, q2, 0.0, W, q2, st))) return r;
    if ((r = mbla_gemm('T', 'N', nr, nr, q2, 1.0, T, q2, W, q2, 0.0, H, nr, st))) return r;
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < j; i++) {
            double a = 0.5 * (H[i + (size_t)j * nr] + H[j + (size_t)i * nr]);
            H[i + (size_t)j * nr] = H[j + (size_t)i * nr] = a;
        }
    if ((r = syev(fn, nr, H, e, st))) return r;
    /* the p Ritz values nearest sigma (stable order by distance) */
    for (int j = 0; j < nr; j++) ord[j] = j;
    for (int a = 1; a < nr; a++) {
        int v = ord[a], c = a;
        while (c > 0 && fabs(e[ord[c - 1]] - sigma) > fabs(e[v] - sigma)) ord[c] = ord[c - 1], c--;
        ord[c] = v;
    }
    /* Y = T Y_r (q2 x p) into W; X_new = S Y */
    for (int t = 0; t < p; t++)
        for (int i = 0; i < q2; i++) {
            double s = 0;
            for (int l = 0; l < nr; l++) s += T[i + (size_t)l * q2] * H[l + (size_t)ord[t] * nr];
            W[i + (size_t)t * q2] = s;
        }
    return mbla_gemm('N', 'N', n, p, q2, 1.0, b->S, n, W, q2, 0.0, b->Xn, n, st);
}

/* X = Xn at unit B-norm, with K X, B X, the new Rayleigh quotients th and which of them
 * converged (cv); returns how many of the first k converged. */
static int block_update(block_work *b, int k)
{
    int n = b->n, p = b->p, nconv = 0;
    double *X = b->X, *KX = b->KX, *BX = b->BX, *th = b->th;
    memcpy(X, b->Xn, (size_t)n * p * sizeof *X);
    for (int t = 0; t < p; t++) {
        double *x = X + (size_t)t * n;
        mbla_csc_gemv(b->B, 1.0, x, 0.0, BX + (size_t)t * n, NULL);
        double nb = sqrt(dot_plain(n, x, BX + (size_t)t * n));
        for (int i = 0; i < n; i++) x[i] /= nb, BX[i + (size_t)t * n] /= nb;
        gemv_dot2(b->K, x, KX + (size_t)t * n, b->lo);
        double tn = dot_plain(n, x, KX + (size_t)t * n);
        b->cv[t] = fabs(tn - th[t]) <= MBLA_EIGS_BLOCK_TOL * fabs(tn);
        if (t < k && b->cv[t]) nconv++;
        th[t] = tn;
    }
    return nconv;
}

/* The results: the vectors at unit 2-norm into V, the values into w, their backward errors. */
static void block_results(const block_work *b, int it, double *w, double *V, int ldv, double *berr, int *iters,
                          int *conv)
{
    int n = b->n, p = b->p;
    const double *X = b->X, *KX = b->KX, *BX = b->BX, *th = b->th;
    double *lo = b->lo;
    double nK = mbla_csc_norm1(b->K), nB = mbla_csc_norm1(b->B);
    for (int t = 0; t < p; t++) {
        const double *x = X + (size_t)t * n;
        double *v = V + (size_t)t * ldv;
        memset(lo, 0, (size_t)n * sizeof *lo);
        double nx = la_nrm2c(n, x, lo), rn = 0, amax = 0;
        for (int i = 0; i < n; i++) amax = fmax(amax, fabs(KX[i + (size_t)t * n] - th[t] * BX[i + (size_t)t * n]));
        for (int i = 0; amax > 0 && i < n; i++) {
            double ri = (KX[i + (size_t)t * n] - th[t] * BX[i + (size_t)t * n]) / amax;
            rn += ri * ri;
        }
        rn = amax * sqrt(rn);
        for (int i = 0; i < n; i++) v[i] = x[i] / nx;
        w[t] = th[t];
        if (berr) berr[t] = rn / ((nK + fabs(th[t]) * nB) * nx);
        if (iters) iters[t] = it;
        if (conv) conv[t] = b->cv[t];
    }
}

int mbla_eigs_refine_sym_block(const mbla_csc *K, const mbla_csc *B, double sigma, int p, int k, double *w,
                               double *V, int ldv, int maxit, double *berr, int *iters, int *conv,
                               mbl_status *st)
{
    const char *fn = "mbla_eigs_refine_sym_block";
    int r = block_check(fn, K, B, sigma, p, k, w, V, ldv, st);
    if (r) return r > 0 ? 0 : r;
    if (maxit <= 0) maxit = MBLA_EIGS_BLOCK_MAXIT_DEFAULT;
    block_work b = {.K = K, .B = B, .sigma = sigma, .n = K->n, .p = p, .q2 = 2 * p};
    if ((r = block_setup(fn, &b, st))) goto done;
    if ((r = block_start(fn, &b, V, ldv, st))) goto done;
    int it = 0;
    for (it = 0; it < maxit; it++) {
        if ((r = core_progress(st, "eigen", it, maxit))) goto done; /* one report per step */
        if ((r = block_corrections(&b, st))) goto done;
        if ((r = block_rayleigh_ritz(fn, &b, st))) goto done;
        if (block_update(&b, k) == k) {
            it++;
            break;
        }
    }
    block_results(&b, it, w, V, ldv, berr, iters, conv);
    r = 0;
done:
    block_work_free(&b);
    return r;
}
