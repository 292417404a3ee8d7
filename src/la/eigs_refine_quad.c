/* Refinement of computed eigenpairs of a quadratic pencil Q(lambda) = K + lambda C + lambda^2 M
 * (mbla_eigs_refine_quad): Newton steps on Q(lambda) x = 0 with the complex KLU of the n x n
 * Q(lambda), residuals in doubled precision, as mbla_eigs_refine does on a first-order pencil of
 * order 2n (issue 31, item 4: that pencil's LU filled on stiff beams at n = 10^5). */
#include "la/la_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* as mbla_eigs_refine (src/la/eigs_refine.c) */
#define MBLA_EIGS_REFINE_QUAD_MAXIT_DEFAULT 16
#define MBLA_EIGS_REFINE_QUAD_CHORD_RATE 0.1
/* a pair stops when its correction (of lambda relative to |lambda|, and of the unit vector's largest
 * entry) is at most this many eps */
#define MBLA_EIGS_REFINE_QUAD_STOP 4.0
/* KLU's threshold: Q(lambda) is singular to working precision at a converged lambda, so its pivot
 * growth says nothing about the step (as mbla_eigs_refine: the LU only preconditions the step) */
#define MBLA_EIGS_REFINE_QUAD_PIVOT_TOL 1e-8

typedef struct {
    const mbla_csc *K, *C, *M;
    mbla_csc *P; /* the union pattern of K, C, M */
    int *pk, *pc, *pm; /* for each entry of P its position in K, C, M, or -1 */
    mbla_klu *klu;
    mbla_klu_opts ko;
    double *qz, *w, *xr, *xi, *rr, *ri, *y1, *y2, *l0, *bxr, *bxi;
    double nK, nC, nM;
    int n, k, maxit;
} quad_work;

/* w4 = (hi, lo) of A x real and imaginary (4 arrays of n: hr, lr, hi, li), doubled precision */
static void gemv_dd(const mbla_csc *A, const double *xr, const double *xi, double *w4)
{
    int n = A->n;
    double *hr = w4, *lr = w4 + n, *hi = w4 + 2 * n, *li = w4 + 3 * n;
    memset(w4, 0, (size_t)4 * n * sizeof *w4);
    for (int j = 0; j < n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++) {
            la_dot2_add(A->x[q], xr[j], &hr[A->i[q]], &lr[A->i[q]]);
            la_dot2_add(A->x[q], xi[j], &hi[A->i[q]], &li[A->i[q]]);
        }
}

/* s = lambda s + a (s, a: 4 arrays of n as gemv_dd; every product compensated) */
static void horner_dd(int n, double lr, double li, double *s, const double *a)
{
    for (int i = 0; i < n; i++) {
        double whr = s[i], wlr = s[n + i], whi = s[2 * n + i], wli = s[3 * n + i];
        double p = 0, q = 0, u = 0, v = 0;
        la_dot2_add(lr, whr, &p, &q), la_dot2_add(lr, wlr, &p, &q);
        la_dot2_add(-li, whi, &p, &q), la_dot2_add(-li, wli, &p, &q);
        la_dot2_add(1.0, a[i], &p, &q), la_dot2_add(1.0, a[n + i], &p, &q);
        la_dot2_add(lr, whi, &u, &v), la_dot2_add(lr, wli, &u, &v);
        la_dot2_add(li, whr, &u, &v), la_dot2_add(li, wlr, &u, &v);
        la_dot2_add(1.0, a[2 * n + i], &u, &v), la_dot2_add(1.0, a[3 * n + i], &u, &v);
        s[i] = p, s[n + i] = q, s[2 * n + i] = u, s[3 * n + i] = v;
    }
}

/* r = K x + lambda (C x + lambda M x), accumulated in doubled precision and rounded once; w: 8 n */
static void resid_quad(const quad_work *q, double lr, double li, const double *xr, const double *xi, double *rr,
                       double *ri)
{
    int n = q->n;
    double *s = q->w, *a = q->w + 4 * n;
    gemv_dd(q->M, xr, xi, s);
    gemv_dd(q->C, xr, xi, a);
    horner_dd(n, lr, li, s, a);
    gemv_dd(q->K, xr, xi, a);
    horner_dd(n, lr, li, s, a);
    for (int i = 0; i < n; i++) rr[i] = s[i] + s[n + i], ri[i] = s[2 * n + i] + s[3 * n + i];
}

/* pos[p] = the position in A of entry p of the union pattern P, or -1 (rows sorted in both) */
static void pattern_map(const mbla_csc *P, const mbla_csc *A, int *pos)
{
    for (int j = 0; j < P->n; j++) {
        int qa = A->p[j];
        for (int p = P->p[j]; p < P->p[j + 1]; p++) {
            while (qa < A->p[j + 1] && A->i[qa] < P->i[p]) qa++;
            pos[p] = qa < A->p[j + 1] && A->i[qa] == P->i[p] ? qa : -1;
        }
    }
}

/* qz = Q(lambda), complex, on the union pattern P */
static void quad_matrix(quad_work *q, double lr, double li)
{
    double l2r = lr * lr - li * li, l2i = 2 * lr * li;
    for (int p = 0; p < q->P->p[q->n]; p++) {
        double k = q->pk[p] >= 0 ? q->K->x[q->pk[p]] : 0.0, c = q->pc[p] >= 0 ? q->C->x[q->pc[p]] : 0.0;
        double m = q->pm[p] >= 0 ? q->M->x[q->pm[p]] : 0.0;
        q->qz[2 * p] = k + lr * c + l2r * m;
        q->qz[2 * p + 1] = li * c + l2i * m;
    }
}

static double quad_berr(const quad_work *q, double lr, double li)
{
    double al = hypot(lr, li);
    return la_nrm2c(q->n, q->rr, q->ri) / (q->nK + al * q->nC + al * al * q->nM);
}

/* One Newton step on (lambda, x) (x of unit norm) with the current factors: the bordered system
 * [Q, Q' x; x^H, 0] [dx; dl] = -[r; 0] as y1 = Q^-1 r, y2 = -Q^-1 Q'(lambda) x, dl = x^H y1 /
 * x^H y2, dx = -y1 + dl y2; then x normalized and its residual. 0, an error, or 1 (broke down). */
static int quad_step(quad_work *q, double *plr, double *pli, double *pdr, double *pdi, double *pdx, mbl_status *st)
{
    int n = q->n, r;
    double *xr = q->xr, *xi = q->xi, *y1 = q->y1, *y2 = q->y2, lr = *plr, li = *pli;
    for (int i = 0; i < n; i++) y1[2 * i] = q->rr[i], y1[2 * i + 1] = q->ri[i], y2[2 * i] = y2[2 * i + 1] = 0;
    /* y2 = -(C + 2 lambda M) x */
    for (int j = 0; j < n; j++) {
        for (int p = q->C->p[j]; p < q->C->p[j + 1]; p++) {
            y2[2 * q->C->i[p]] -= q->C->x[p] * xr[j];
            y2[2 * q->C->i[p] + 1] -= q->C->x[p] * xi[j];
        }
        for (int p = q->M->p[j]; p < q->M->p[j + 1]; p++) {
            double m2 = 2 * q->M->x[p];
            y2[2 * q->M->i[p]] -= m2 * (lr * xr[j] - li * xi[j]);
            y2[2 * q->M->i[p] + 1] -= m2 * (lr * xi[j] + li * xr[j]);
        }
    }
    if ((r = mbla_kluz_solve(q->klu, 'N', 1, y1, n, st))) return r;
    if ((r = mbla_kluz_solve(q->klu, 'N', 1, y2, n, st))) return r;
    double dr, di, dxmax;
    if (la_bordered_update(n, xr, xi, y1, y2, &dr, &di, &dxmax)) return 1;
    lr += dr, li += di;
    *pdx = dxmax;
    double nn = la_nrm2c(n, xr, xi);
    if (!(nn > 0) || !isfinite(nn) || !isfinite(lr) || !isfinite(li)) return 1;
    for (int i = 0; i < n; i++) xr[i] /= nn, xi[i] /= nn;
    resid_quad(q, lr, li, xr, xi, q->rr, q->ri);
    *plr = lr, *pli = li, *pdr = dr, *pdi = di;
    return 0;
}

/* Refine pair t in place (the iteration, the choice of the returned pair and the collapse guard of
 * mbla_eigs_refine's refine_pair). */
static int quad_pair(const char *fn, quad_work *q, int t, double *lre, double *lim, double *vr, double *vi,
                     double *berr, int *iters, mbl_status *st)
{
    int n = q->n, r;
    double lr = lre[t], li = lim[t], *l0 = q->l0;
    double nx = la_nrm2c(n, vr, vi);
    if (!(nx > 0)) return mbl_error(st, MBL_EARG, "%s: eigenvector %d is zero", fn, t);
    for (int i = 0; i < n; i++) q->xr[i] = vr[i] / nx, q->xi[i] = vi[i] / nx;
    resid_quad(q, lr, li, q->xr, q->xi, q->rr, q->ri);
    double eta = quad_berr(q, lr, li), eta0 = eta, best = eta, bl[2] = {lr, li}, dprev = INFINITY;
    int it, keep = 1, refactor = 1, fresh = 0;
    for (it = 0; it < q->maxit; it++) {
        fresh = refactor;
        if (refactor) {
            quad_matrix(q, lr, li);
            r = q->klu ? mbla_kluz_refactor(q->klu, q->P, q->qz, st) : mbla_kluz_new(q->P, q->qz, &q->ko, &q->klu, st);
            if (r == MBL_ESINGULAR) break; /* lambda is an eigenvalue to working precision */
            if (r) return r;
            refactor = 0;
        }
        double dr = 0, di = 0, dx = 0;
        r = quad_step(q, &lr, &li, &dr, &di, &dx, st);
        if (r < 0) return r;
        if (r > 0) break;
        eta = quad_berr(q, lr, li);
        /* the correction: of lambda relative to |lambda|, and of the unit vector (largest entry):
         * lambda converges quadratically faster than x where Q is nearly normal */
        double al = hypot(lr, li), dl = fmax(al > 0 ? hypot(dr, di) / al : hypot(dr, di), dx);
        if (eta <= best) {
            best = eta, bl[0] = lr, bl[1] = li, keep = 0;
            memcpy(q->bxr, q->xr, (size_t)n * sizeof *q->bxr), memcpy(q->bxi, q->xi, (size_t)n * sizeof *q->bxi);
        }
        if (dl <= MBLA_EIGS_REFINE_QUAD_STOP * DBL_EPSILON || (dl >= dprev && fresh)) {
            it++;
            break;
        }
        if (dl > MBLA_EIGS_REFINE_QUAD_CHORD_RATE * dprev) refactor = 1;
        dprev = dl;
    }
    double gap = INFINITY;
    for (int u = 0; u < q->k; u++)
        if (u != t) gap = fmin(gap, hypot(l0[2 * u] - l0[2 * t], l0[2 * u + 1] - l0[2 * t + 1]));
    if (!keep && hypot(bl[0] - l0[2 * t], bl[1] - l0[2 * t + 1]) > 0.5 * gap)
        keep = 1, it = 0, best = eta0, bl[0] = l0[2 * t], bl[1] = l0[2 * t + 1];
    if (keep)
        for (int i = 0; i < n; i++) vr[i] /= nx, vi[i] /= nx;
    else
        memcpy(vr, q->bxr, (size_t)n * sizeof *vr), memcpy(vi, q->bxi, (size_t)n * sizeof *vi);
    lre[t] = bl[0], lim[t] = bl[1];
    if (berr) berr[t] = best;
    if (iters) iters[t] = it;
    return 0;
}

static int quad_check(const char *fn, const mbla_csc *K, const mbla_csc *C, const mbla_csc *M, int k,
                      const double *lre, const double *lim, const double *Xre, const double *Xim, int ldx,
                      mbl_status *st)
{
    int r;
    if ((r = la_csc_arg(K, fn, "K", st)) || (r = la_csc_arg(C, fn, "C", st)) || (r = la_csc_arg(M, fn, "M", st)))
        return r;
    int n = K->n;
    if (K->m != n || C->m != n || C->n != n || M->m != n || M->n != n)
        return mbl_error(st, MBL_EDIM, "%s: K is %d x %d, C %d x %d, M %d x %d (square, same order)", fn, K->m,
                         K->n, C->m, C->n, M->m, M->n);
    if (k < 0) return mbl_error(st, MBL_EDIM, "%s: k = %d < 0", fn, k);
    if (k == 0) return 1;
    if (!lre || !lim || !Xre || !Xim) return mbl_error(st, MBL_EARG, "%s: lre, lim, Xre or Xim is NULL", fn);
    if (ldx < la_max1(n)) return mbl_error(st, MBL_EDIM, "%s: ldx %d < n = %d", fn, ldx, n);
    return 0;
}

static int quad_alloc(const char *fn, quad_work *q, mbl_status *st)
{
    int n = q->n, k = q->k, r = mbla_csc_add(1.0, q->K, 0.0, q->C, &q->P, st);
    mbla_csc *T = NULL;
    if (!r) r = mbla_csc_add(1.0, q->P, 0.0, q->M, &T, st);
    if (r) return r;
    mbla_csc_free(q->P), q->P = T;
    q->qz = mbl_alloc_array((size_t)2 * q->P->p[n] + 1, sizeof *q->qz);
    q->w = mbl_alloc_array((size_t)8 * n + 1, sizeof *q->w);
    q->xr = mbl_alloc_array((size_t)n + 1, sizeof *q->xr), q->xi = mbl_alloc_array((size_t)n + 1, sizeof *q->xi);
    q->rr = mbl_alloc_array((size_t)n + 1, sizeof *q->rr), q->ri = mbl_alloc_array((size_t)n + 1, sizeof *q->ri);
    q->y1 = mbl_alloc_array((size_t)2 * n + 1, sizeof *q->y1), q->y2 = mbl_alloc_array((size_t)2 * n + 1, sizeof *q->y2);
    q->l0 = mbl_alloc_array((size_t)2 * k + 1, sizeof *q->l0);
    q->bxr = mbl_alloc_array((size_t)n + 1, sizeof *q->bxr), q->bxi = mbl_alloc_array((size_t)n + 1, sizeof *q->bxi);
    size_t nz = (size_t)q->P->p[n] + 1;
    q->pk = mbl_alloc_array(nz, sizeof *q->pk), q->pc = mbl_alloc_array(nz, sizeof *q->pc);
    q->pm = mbl_alloc_array(nz, sizeof *q->pm);
    if (!q->pk || !q->pc || !q->pm) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    pattern_map(q->P, q->K, q->pk), pattern_map(q->P, q->C, q->pc), pattern_map(q->P, q->M, q->pm);
    if (!q->qz || !q->w || !q->xr || !q->xi || !q->rr || !q->ri || !q->y1 || !q->y2 || !q->l0 || !q->bxr || !q->bxi)
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    return 0;
}

int mbla_eigs_refine_quad(const mbla_csc *K, const mbla_csc *C, const mbla_csc *M, int k, double *lre,
                          double *lim, double *Xre, double *Xim, int ldx, int maxit, double *berr, int *iters,
                          mbl_status *st)
{
    const char *fn = "mbla_eigs_refine_quad";
    int r = quad_check(fn, K, C, M, k, lre, lim, Xre, Xim, ldx, st);
    if (r) return r > 0 ? 0 : r;
    quad_work q = {.K = K, .C = C, .M = M, .n = K->n, .k = k};
    q.maxit = maxit > 0 ? maxit : MBLA_EIGS_REFINE_QUAD_MAXIT_DEFAULT;
    /* equilibrated as the shift-invert factorization of Q(sigma) (mbla_eigs_opts_default): stiffness,
     * damping and mass scales side by side */
    mbla_klu_opts_default(&q.ko);
    q.ko.equilibrate = 1;
    q.ko.pivot_tol = MBLA_EIGS_REFINE_QUAD_PIVOT_TOL;
    q.ko.pivot_tol_try = 0.0;
    if ((r = quad_alloc(fn, &q, st))) goto done;
    q.nK = mbla_csc_norm1(K), q.nC = mbla_csc_norm1(C), q.nM = mbla_csc_norm1(M);
    for (int t = 0; t < k; t++) q.l0[2 * t] = lre[t], q.l0[2 * t + 1] = lim[t];
    for (int t = 0; t < k; t++) {
        double *vr = Xre + (size_t)t * ldx, *vi = Xim + (size_t)t * ldx;
        int tc = -1; /* an earlier, refined partner: this is its complex conjugate */
        for (int u = 0; u < t && tc < 0; u++)
            if (q.l0[2 * t + 1] != 0.0 && q.l0[2 * u] == q.l0[2 * t] && q.l0[2 * u + 1] == -q.l0[2 * t + 1]) tc = u;
        if (tc >= 0) {
            lre[t] = lre[tc], lim[t] = -lim[tc];
            for (int i = 0; i < q.n; i++) vr[i] = Xre[i + (size_t)tc * ldx], vi[i] = -Xim[i + (size_t)tc * ldx];
            if (berr) berr[t] = berr[tc];
            if (iters) iters[t] = iters[tc];
            continue;
        }
        if ((r = quad_pair(fn, &q, t, lre, lim, vr, vi, berr, iters, st))) goto done;
    }
    r = 0;
done:
    mbla_klu_free(q.klu);
    mbla_csc_free(q.P);
    mbl_free(q.qz), mbl_free(q.w), mbl_free(q.xr), mbl_free(q.xi), mbl_free(q.rr), mbl_free(q.ri);
    mbl_free(q.y1), mbl_free(q.y2), mbl_free(q.l0), mbl_free(q.bxr), mbl_free(q.bxi);
    mbl_free(q.pk), mbl_free(q.pc), mbl_free(q.pm);
    return r;
}
