/* `descriptor`: the RCS formulation of source 001 Sec. 3.2 (Eq. 7-10).
 *
 * The full linearized DAE in x = [dq; dv; dlambda] is the pencil
 *     E = [I 0 0; 0 M 0; 0 0 0],  Ad = [0 I 0; -K_q -C_q -s Phi^T; -s Phi 0 0],  Bd = [0; -dR/dr; 0]
 * with K_q = dR/dq (it includes (dM/dq) q'' and the geometric stiffness (Phi_q^T lambda)_q),
 * C_q = dR/dv, and Phi the r independent rows of Phi_q (QRCP of Phi_q^T): at a singular
 * configuration the redundant rows are dropped, so the pencil stays regular and the multipliers
 * are the minimum-norm ones of the operating point. The constraint rows and multiplier columns
 * are scaled by s (opt->constraint_scale, automatic ||[K_q M]||_1 / ||[Phi; A_nh]||_1) so that the pencil
 * is balanced. Eigenvalues by QZ (dggev) up to opt->dense_max, by ARPACK shift-invert (the nev
 * nearest opt->shift) above. The pencil has 2(n - r) finite eigenvalues, the spectrum, and 3r
 * infinite ones (index 3): QZ returns the latter with beta = 0 or, from the size-3 Jordan blocks
 * at infinity, as huge finite values; all of them are flagged spurious and the 2(n - r)
 * eigenvalues of smallest modulus are the physical ones.
 * Non-holonomic constraints A_nh v + b = 0 add k velocity-level rows -s (A_nh dv + (A_nh v)_q dq)
 * and multiplier columns -s dR/dmu (then 2(n - r) - k physical eigenvalues).
 * User ODE states X and implicit variables Z (source 000 Eq. 10) add the columns dX, dZ and the rows
 * of their equations d, e: E gets d_X' (and d_vdot) in the d and e rows and R_X' in the EOM rows, Ad
 * the negated Jacobians of every row with respect to q, v, lambda, mu, X and Z (the EOM rows' lambda
 * columns from the Jacobian itself, since forces may depend on multipliers); then 2(n - r) - k + nX
 * physical eigenvalues, Z adding index-1 infinite ones.
 * The state-space A, B, C, D and M, C, K reported alongside are those of the tangent coordinates
 * of `nullspace` at the same point, or of `augmented` with non-holonomic constraints or on the
 * sparse path (the descriptor form itself is in lin->descriptor: E, Ad, Bd, Cdd); on the sparse path
 * they are not formed when the dense augmented model would exceed opt->mem_budget or opt->partial
 * asks for the partial spectrum alone (src/lin/sparse_pencil.c, shared with `augmented`). Outputs:
 * y = Cdd x + Dd u, an output of a multiplier a column of Cdd, of an acceleration or der(X) taken
 * through the pencil's dynamic rows (desc_outputs; Dd differs from the state-space D then). This file
 * makes the pencil and its spectrum; src/lin/methods.c composes them with the other method's
 * linear model, so that no method calls another. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* A ratio between the modulus of the first spurious and of the last physical eigenvalue below this
 * is reported in the notes as a doubtful split (the infinite eigenvalues of the index-3 pencil come
 * out of QZ as eps^(-1/3)-sized values at worst, far above any physical one in a scaled pencil). */
#define DESC_GAP_WARN 100.0
/* the split of a zero at a singular configuration, in units of sqrt(eps ||Ad||_1 / ||E||_1) (desc_qz) */
#define DESC_ZERO_FACTOR 100.0

/* A refined pair counts as a new eigenvector of its cluster when 1 - |cos| of its angle to every
 * refined vector of the cluster is above this (two starts that converged onto one eigenvector
 * have 1 - |cos| at the rounding level; the eigenvectors QZ returns for a multiple eigenvalue span
 * its eigenspace, far from parallel) */
#define DESC_CLUSTER_INDEP 1e-6

/* 1 - |x^H y| / (|x| |y|) of two complex vectors given by their parts (n) */
static double desc_one_minus_cos(int n, const double *xr, const double *xi, const double *yr, const double *yi)
{
    double pr = 0, pi = 0, nx = 0, ny = 0;
    for (int c = 0; c < n; c++) {
        pr += xr[c] * yr[c] + xi[c] * yi[c], pi += xr[c] * yi[c] - xi[c] * yr[c];
        nx += xr[c] * xr[c] + xi[c] * xi[c], ny += yr[c] * yr[c] + yi[c] * yi[c];
    }
    return nx > 0 && ny > 0 ? 1.0 - hypot(pr, pi) / sqrt(nx * ny) : 0.0;
}

/* The pairs of a cluster (a multiple eigenvalue: the cyclic modes of identical blades, split by
 * QZ's rounding) that mbla_eigs_refine returned as given (it[t] = 0: its guard keeps a pair that
 * moved more than half way to another starting value, which every member of a multiple
 * eigenvalue but one does) are refined alone, and the result is kept where its backward error is
 * smaller and its vector is not one that another member already converged to (DESC_CLUSTER_INDEP).
 * Without it the rotor of three blades kept QZ's 1.6e-9 on its cyclic pairs. */
static int desc_refine_clusters(const mbla_csc *As, const mbla_csc *Es, int nd, int ns, double *lr, double *li,
                                double *Vr, double *Vi, double *bq, const int *it, mbl_status *st)
{
    double *xr = mbl_alloc_array((size_t)nd + 1, sizeof *xr), *xi = mbl_alloc_array((size_t)nd + 1, sizeof *xi);
    int rc = xr && xi ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int t = 0; !rc && t < ns; t++) {
        if (it[t] != 0) continue;
        double r = lr[t], i = li[t], b = INFINITY;
        memcpy(xr, Vr + (size_t)t * nd, (size_t)nd * sizeof *xr);
        memcpy(xi, Vi + (size_t)t * nd, (size_t)nd * sizeof *xi);
        int its = 0;
        rc = mbla_eigs_refine(As, Es, 1, &r, &i, xr, xi, nd, 0, &b, &its, st);
        if (rc || !(b < bq[t]) || its == 0) continue;
        int fresh = 1;
        for (int u = 0; u < ns && fresh; u++)
            if (u != t && (it[u] != 0 || u < t) &&
                desc_one_minus_cos(nd, xr, xi, Vr + (size_t)u * nd, Vi + (size_t)u * nd) <= DESC_CLUSTER_INDEP)
                fresh = 0;
        if (!fresh) continue;
        lr[t] = r, li[t] = i, bq[t] = b;
        memcpy(Vr + (size_t)t * nd, xr, (size_t)nd * sizeof *xr);
        memcpy(Vi + (size_t)t * nd, xi, (size_t)nd * sizeof *xi);
    }
    mbl_free(xr), mbl_free(xi);
    return rc;
}

/* QZ's eigenvalues carry an absolute error of about eps ||(Ad, E)||: poor relative accuracy for the
 * slow modes of a stiff model (flexible pendulum n_p = 50: 3.5e-10). The physical pairs
 * (cd[0..nphys)) are refined by Newton's method on the sparse copy of the pencil with the residual
 * in doubled precision (mbla_eigs_refine); eigenvalues and coordinate parts of the eigenvectors in
 * sp are replaced. Of a complex-conjugate pair only the member with Im > 0 is refined, the other
 * is set to its conjugate (QZ's two quotients alpha/beta of a pair need not be exactly conjugate).
 * VR, ai: QZ's packed eigenvectors and imaginary parts. */
static int desc_refine(int nd, int n, const double *Ad, const double *E, const double *VR, const double *ai,
                       const mbl_eig_item *cd, int nphys, mbl_lin_spectrum *sp, mbl_status *st)
{
    mbla_csc *As = NULL, *Es = NULL;
    double *lr = mbl_alloc_array((size_t)nphys + 1, sizeof *lr), *li = mbl_alloc_array((size_t)nphys + 1, sizeof *li);
    double *Vr = mbl_alloc_array((size_t)nd * nphys + 1, sizeof *Vr);
    double *Vi = mbl_alloc_array((size_t)nd * nphys + 1, sizeof *Vi);
    int *sel = mbl_alloc_array((size_t)nphys + 1, sizeof *sel), *it = mbl_alloc_array((size_t)nphys + 1, sizeof *it);
    double *bq = mbl_alloc_array((size_t)nphys + 1, sizeof *bq); /* backward errors of the refined pairs */
    int rc = 0, ns = 0;
    if (!lr || !li || !Vr || !Vi || !sel || !bq || !it) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = mbla_csc_from_dense(nd, nd, Ad, nd, -1.0, &As, st))) goto done;
    if ((rc = mbla_csc_from_dense(nd, nd, E, nd, -1.0, &Es, st))) goto done;
    for (int t = 0; t < nphys; t++) {
        int j = cd[t].idx;
        if (ai[j] < 0.0 && !sp->spurious[j - 1]) continue; /* its partner j - 1 is refined */
        const double *vre, *vim = NULL;
        double sg = 1.0;
        if (ai[j] == 0.0) vre = VR + (size_t)j * nd;
        else if (ai[j] > 0.0) vre = VR + (size_t)j * nd, vim = VR + (size_t)(j + 1) * nd;
        else vre = VR + (size_t)(j - 1) * nd, vim = VR + (size_t)j * nd, sg = -1.0;
        lr[ns] = sp->re[j], li[ns] = sp->im[j];
        for (int c = 0; c < nd; c++) {
            Vr[c + (size_t)ns * nd] = vre[c];
            Vi[c + (size_t)ns * nd] = vim ? sg * vim[c] : 0.0;
        }
        sel[ns++] = j;
    }
    rc = mbla_eigs_refine(As, Es, ns, lr, li, Vr, Vi, nd, 0, bq, it, st);
    if (!rc) rc = desc_refine_clusters(As, Es, nd, ns, lr, li, Vr, Vi, bq, it, st);
    if (rc) {
        mbl_error_prefix(st, "descriptor: refinement of the eigenvalues");
        goto done;
    }
    for (int t = 0; t < ns; t++) {
        int j = sel[t], p = ai[j] > 0.0 && j + 1 < nd && !sp->spurious[j + 1] ? j + 1 : -1;
        sp->re[j] = lr[t], sp->im[j] = li[t];
        sp->berr[j] = bq[t];
        if (p >= 0) sp->re[p] = lr[t], sp->im[p] = -li[t], sp->berr[p] = bq[t];
        for (int c = 0; c < n; c++) {
            sp->vre[c + (size_t)j * n] = Vr[c + (size_t)t * nd];
            sp->vim[c + (size_t)j * n] = Vi[c + (size_t)t * nd];
            if (p < 0) continue;
            sp->vre[c + (size_t)p * n] = Vr[c + (size_t)t * nd];
            sp->vim[c + (size_t)p * n] = -Vi[c + (size_t)t * nd];
        }
    }
done:
    mbla_csc_free(As), mbla_csc_free(Es);
    mbl_free(lr), mbl_free(li), mbl_free(Vr), mbl_free(Vi), mbl_free(sel), mbl_free(bq), mbl_free(it);
    return rc;
}

/* The error estimate of each physical eigenvalue of the pencil (issue 30, item 9): its backward error
 * (after refinement, sp->berr) plus the rounding the pencil's entries carry (eps), times its
 * condition number (Higham and Higham 1998)
 *     kappa = (||Ad||_F + |s| ||E||_F) ||x|| ||y|| / |y^H E x|
 * with QZ's right and left eigenvectors x, y (VR, VL packed as LAPACK's, ai its imaginary parts),
 * times DESC_ERR_SAFETY. The condition of an eigenvalue in a cluster (a double eigenvalue split by
 * rounding, a defective zero) grows as the inverse of the split, so the first-order estimate covers
 * the square-root sensitivity there too. Into sp->err; INFINITY when y^H E x vanishes. */
#define DESC_ERR_SAFETY 4.0

static int desc_find(int *par, int i)
{
    while (par[i] != i) i = par[i] = par[par[i]];
    return i;
}

/* Clusters: the first-order estimate of eigenvalue i is self-consistent when its disc |s - s_i| <=
 * err_i holds no other eigenvalue. Eigenvalues each within the other's disc (a double eigenvalue,
 * semisimple or defective, a multiple zero) are one cluster C, whose invariant subspace is well
 * determined when its spectral projector is: with the real bases X, Y of its right and left
 * eigenvectors (QZ's columns) and G = Y^T E X, kappa_C = (||Ad|| + max|s| ||E||) ||X||_F ||Y||_F
 * ||G^-1||_1, and each member gets |s_i - mean(C)| + DESC_ERR_SAFETY eta kappa_C (a semisimple
 * double pair: small; a defective zero: G nearly singular, large). EX = E VR. */
static int desc_err_clusters(int nd, double nA, double nE, const double *VR, const double *VL, const double *EX,
                             const double *ai, mbl_lin_spectrum *sp, mbl_status *st)
{
    int *par = mbl_alloc_array((size_t)nd + 1, sizeof *par), *cols = mbl_alloc_array((size_t)nd + 1, sizeof *cols);
    char *mark = mbl_calloc((size_t)nd + 1, 1);
    double *X = NULL, *Y = NULL, *G = NULL;
    int rc = 0;
    if (!par || !cols || !mark) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < nd; i++) par[i] = i;
    for (int i = 0; i < nd; i++)
        for (int j = i + 1; !sp->spurious[i] && j < nd; j++)
            if (!sp->spurious[j] && hypot(sp->re[i] - sp->re[j], sp->im[i] - sp->im[j]) <= fmin(sp->err[i], sp->err[j])) {
                int a = desc_find(par, i), b = desc_find(par, j);
                if (a != b) par[a > b ? a : b] = a < b ? a : b;
            }
    for (int c = 0; c < nd; c++) {
        if (sp->spurious[c] || desc_find(par, c) != c) continue;
        int k = 0, kc = 0;
        double mr = 0, mi = 0, smax = 0, eta = 0;
        memset(mark, 0, (size_t)nd);
        for (int j = 0; j < nd; j++) {
            if (sp->spurious[j] || desc_find(par, j) != c) continue;
            k++, mr += sp->re[j], mi += sp->im[j], smax = fmax(smax, hypot(sp->re[j], sp->im[j]));
            eta = fmax(eta, isfinite(sp->berr[j]) ? sp->berr[j] : 0.0);
            int c0 = ai[j] < 0.0 ? j - 1 : j, c1 = ai[j] != 0.0 ? c0 + 1 : -1;
            if (!mark[c0]) mark[c0] = 1, cols[kc++] = c0;
            if (c1 >= 0 && !mark[c1]) mark[c1] = 1, cols[kc++] = c1;
        }
        if (k < 2) continue;
        mr /= k, mi /= k;
        X = mbl_alloc_array((size_t)nd * kc, sizeof *X), Y = mbl_alloc_array((size_t)nd * kc, sizeof *Y);
        G = mbl_alloc_array((size_t)kc * kc, sizeof *G);
        if (!X || !Y || !G) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        double xn = 0, yn = 0;
        for (int a = 0; a < kc; a++)
            for (int i = 0; i < nd; i++) {
                double x = VR[i + (size_t)cols[a] * nd], y = VL[i + (size_t)cols[a] * nd];
                X[i + (size_t)a * nd] = x, Y[i + (size_t)a * nd] = y, xn += x * x, yn += y * y;
            }
        for (int b = 0; b < kc; b++)
            for (int a = 0; a < kc; a++) {
                double g = 0;
                for (int i = 0; i < nd; i++) g += Y[i + (size_t)a * nd] * EX[i + (size_t)cols[b] * nd];
                G[a + (size_t)b * kc] = g;
            }
        double gn = mbla_norm1(kc, kc, G, kc), rcond = 0;
        mbla_dlu *lu = NULL;
        mbl_status st2;
        int e = mbla_dlu_new(kc, G, kc, &lu, &st2);
        if (!e) e = mbla_dlu_rcond(lu, &rcond, &st2);
        mbla_dlu_free(lu);
        if (e == MBL_ENOMEM) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        double kap = !e && rcond > 0 && gn > 0 ? (nA + smax * nE) * sqrt(xn) * sqrt(yn) / (rcond * gn) : INFINITY;
        double errc = DESC_ERR_SAFETY * (eta + DBL_EPSILON) * kap;
        for (int j = 0; j < nd; j++)
            if (!sp->spurious[j] && desc_find(par, j) == c) sp->err[j] = hypot(sp->re[j] - mr, sp->im[j] - mi) + errc;
        mbl_free(X), mbl_free(Y), mbl_free(G);
        X = Y = G = NULL;
    }
done:
    mbl_free(par), mbl_free(cols), mbl_free(mark), mbl_free(X), mbl_free(Y), mbl_free(G);
    return rc;
}

static int desc_err(int nd, const double *Ad, const double *E, const double *VR, const double *VL, const double *ai,
                    mbl_lin_spectrum *sp, mbl_status *st)
{
    double *EX = mbl_alloc_array((size_t)nd * nd + 1, sizeof *EX);
    if (!EX) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = mbla_gemm('N', 'N', nd, nd, nd, 1.0, E, nd, VR, nd, 0.0, EX, nd, st);
    double nA = 0, nE = 0;
    for (size_t p = 0; p < (size_t)nd * nd; p++) nA += Ad[p] * Ad[p], nE += E[p] * E[p];
    nA = sqrt(nA), nE = sqrt(nE);
    for (int j = 0; !rc && j < nd; j++) {
        if (sp->spurious[j]) continue;
        int c0 = j, c1 = -1; /* columns of the real and imaginary parts */
        double sg = 1.0;
        if (ai[j] > 0.0) c1 = j + 1;
        else if (ai[j] < 0.0) c0 = j - 1, c1 = j, sg = -1.0;
        double xr2 = 0, yr2 = 0, pr = 0, pi = 0;
        for (int i = 0; i < nd; i++) {
            double xr = VR[i + (size_t)c0 * nd], xi = c1 >= 0 ? sg * VR[i + (size_t)c1 * nd] : 0.0;
            double yr = VL[i + (size_t)c0 * nd], yi = c1 >= 0 ? sg * VL[i + (size_t)c1 * nd] : 0.0;
            double er = EX[i + (size_t)c0 * nd], ei = c1 >= 0 ? sg * EX[i + (size_t)c1 * nd] : 0.0;
            xr2 += xr * xr + xi * xi, yr2 += yr * yr + yi * yi;
            pr += yr * er + yi * ei, pi += yr * ei - yi * er; /* y^H (E x) */
        }
        double den = hypot(pr, pi), mag = hypot(sp->re[j], sp->im[j]);
        double kappa = den > 0 ? (nA + mag * nE) * sqrt(xr2) * sqrt(yr2) / den : INFINITY;
        double eta = (isfinite(sp->berr[j]) ? sp->berr[j] : 0.0) + DBL_EPSILON;
        sp->err[j] = DESC_ERR_SAFETY * eta * kappa;
    }
    if (!rc) rc = desc_err_clusters(nd, nA, nE, VR, VL, EX, ai, sp, st);
    mbl_free(EX);
    return rc;
}

/* The Eq. 10 parts of the pencil (see the opening comment): every Jacobian entry of the EOM, ode and
 * implicit-variable rows that the holonomic pencil does not hold already. */
static void desc_ext(const mbl_model *md, const double *jac, const double *yjac, const int *rows, int r, const double *sc,
                     int nd, mbl_lin_descriptor *ds)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, k = mv->k, nX = mv->nX, nr = mv->nr, ny = mv->ny;
    int e1 = mv->row0[MBL_ROW_EOM + 1], o0 = mv->row0[MBL_ROW_ODE], z1 = mv->row0[MBL_ROW_VAR + 1];
    int cx = 2 * n + r + k, cz = cx + nX;
    int bq = mv->blk0[MBL_BLK_Q], bv = mv->blk0[MBL_BLK_V], ba = mv->blk0[MBL_BLK_A];
    int bl = mv->blk0[MBL_BLK_LAMBDA], bm = mv->blk0[MBL_BLK_MU];
    int bxd = mv->blk0[MBL_BLK_XD], bz = mv->blk0[MBL_BLK_Z], bx = mv->blk0[MBL_BLK_X];
    int br = mv->blk0[MBL_BLK_R];
    double *E = ds->E, *Ad = ds->Ad;
    /* the EOM rows' multiplier columns come from the Jacobian here (forces of multipliers) */
    for (int a = 0; a < r; a++)
        for (int j = 0; j < n; j++) Ad[n + j + (size_t)(2 * n + a) * nd] = 0.0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int row = mv->jac.row[p], c = mv->jac.col[p], pr;
        double v = jac[p];
        if (row < e1) pr = n + row;
        else if (row >= o0 && row < z1) pr = cx + row - o0;
        else continue;
        int eom = row < e1;
        if (c >= bxd && c < bxd + nX) E[pr + (size_t)(cx + c - bxd) * nd] += v;
        else if (c >= bx && c < bx + nX) Ad[pr + (size_t)(cx + c - bx) * nd] -= v;
        else if (c >= bz && c < bz + mv->nZ) Ad[pr + (size_t)(cz + c - bz) * nd] -= v;
        else if (c >= bl && c < bl + m) {
            for (int a = 0; a < r; a++)
                if (rows[a] == c - bl) Ad[pr + (size_t)(2 * n + a) * nd] -= sc[a] * v;
        } else if (eom) {
            continue; /* q, v, vdot and mu of the EOM rows are in the pencil already */
        } else if (c >= ba && c < ba + n) E[pr + (size_t)(n + c - ba) * nd] += v;
        else if (c >= bq && c < bq + n) Ad[pr + (size_t)(c - bq) * nd] -= v;
        else if (c >= bv && c < bv + n) Ad[pr + (size_t)(n + c - bv) * nd] -= v;
        else if (c >= bm && c < bm + k) Ad[pr + (size_t)(2 * n + r + c - bm) * nd] -= sc[r + c - bm] * v;
        else if (c >= br && c < br + nr) ds->Bd[pr + (size_t)(c - br) * nd] -= v;
    }
    for (int p = 0; p < mv->yjac.nz; p++) {
        int i = mv->yjac.row[p], c = mv->yjac.col[p];
        if (c >= bx && c < bx + nX) ds->Cdd[i + (size_t)(cx + c - bx) * ny] += yjac[p];
    }
}

int lin_descriptor_path(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, k = mv->k, nX = mv->nX, nZ = mv->nZ;
    if (2 * n + m + k + nX + nZ > opt->dense_max || opt->partial == MBL_PARTIAL_ALWAYS) {
        if (opt->desc_zero)
            return mbl_error(st, MBL_EARG, "descriptor: the zero variant (desc_zero) takes the dense QZ path only "
                             "(order %d, dense_max = %d%s): raise dense_max or drop nev", 2 * n + m + k + nX + nZ,
                             opt->dense_max, opt->partial == MBL_PARTIAL_ALWAYS ? ", nev asked for" : "");
        if (lin_outputs_use(mv, MBL_BLK_A) || lin_outputs_use(mv, MBL_BLK_LAMBDA) || lin_outputs_use(mv, MBL_BLK_MU))
            return mbl_error(st, MBL_EMODEL,
                             "descriptor: the sparse (ARPACK) path does not take outputs of accelerations or "
                             "multipliers (yet): raise dense_max, drop them (--outputs) or use augmented");
        if (mv->ext)
            return mbl_error(st, MBL_EMODEL,
                             "descriptor: the sparse (ARPACK) path does not take %s (yet): raise dense_max or use "
                             "augmented",
                             model_ext_features(md));
        if (k > 0)
            return mbl_error(st, MBL_EMODEL,
                             "descriptor: the sparse (ARPACK) path supports holonomic constraints only (%d "
                             "non-holonomic): raise dense_max or use augmented",
                             k);
        if (pt->rank_phi_q < mv->m)
            return mbl_error(st, MBL_ESINGULAR,
                             "descriptor: Phi_q has rank %d < %d at this point and the model is above dense_max = %d "
                             "(the sparse path needs a regular point): raise dense_max",
                             pt->rank_phi_q, mv->m, opt->dense_max);
        return LIN_DESC_SPARSE;
    }
    if (n > opt->dense_n_max)
        return mbl_error(st, MBL_EDIM, "descriptor: n = %d exceeds dense_n_max = %d", n, opt->dense_n_max);
    return LIN_DESC_DENSE;
}

/* One scale per constraint row (and its multiplier column) into sc (r + k): opt->constraint_scale,
 * or automatically max(|K_q|_1, |M|_1) / |row|_1 to the nearest power of 2, so that a constraint
 * stated in femtometres weighs as much as one in metres (the pencil's rows then have comparable
 * norms: QZ's backward error and mbla_gev_classify's norms mean the same for every row). *smin,
 * *smax: the smallest and largest. */
static void desc_scales(const mbl_blocks *B, const int *rows, int r, int k, const double *Nv, const double *Nq,
                        const mbl_lin_options *opt, double *sc, double *smin_out, double *smax_out)
{
    int n = B->n, m = B->m;
    double nK = fmax(mbla_norm1(n, n, B->Rq, n), mbla_norm1(n, n, B->M, n)), smin = HUGE_VAL, smax = 0;
    for (int a = 0; a < r + k; a++) {
        double s = opt->constraint_scale;
        if (!(s > 0)) {
            double nC = 0; /* the row's 1-norm: Phi_q, or A_nh with its d/dq part */
            for (int j = 0; j < n; j++)
                nC += a < r ? fabs(B->Pq[rows[a] + (size_t)j * m])
                            : fabs(Nv[a - r + (size_t)j * k]) + fabs(Nq[a - r + (size_t)j * k]);
            s = (nC > 0 && nK > 0) ? nK / nC : 1.0;
            int ex; /* the nearest power of 2: the scaled constraint entries are the Jacobian's exactly */
            double f = frexp(s, &ex);
            s = ldexp(1.0, f < 0.70710678118654752 ? ex - 1 : ex);
        }
        sc[a] = s, smin = fmin(smin, s), smax = fmax(smax, s);
    }
    *smin_out = smin, *smax_out = smax;
}

/* The pencil E, Ad, Bd, Cdd of the opening comment (ds allocated, zeroed, of order nd) from the dense
 * blocks B, the r independent constraint rows, the non-holonomic blocks Rmu (n x k), Nv, Nq (k x n)
 * and the scales sc. */
static void desc_fill(const mbl_model *md, const mbl_blocks *B, const int *rows, int r, const double *Rmu,
                      const double *Nv, const double *Nq, const double *sc, mbl_lin_descriptor *ds)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k, nr = mv->nr, ny = mv->ny, nd = ds->nd;
    double *E = ds->E, *Ad = ds->Ad;
    for (int i = 0; i < n; i++) {
        E[i + (size_t)i * nd] = 1.0;
        Ad[i + (size_t)(n + i) * nd] = 1.0;
        for (int j = 0; j < n; j++) {
            E[n + i + (size_t)(n + j) * nd] = B->M[i + (size_t)j * n];
            Ad[n + i + (size_t)j * nd] = -B->Rq[i + (size_t)j * n];
            Ad[n + i + (size_t)(n + j) * nd] = -B->Rv[i + (size_t)j * n];
        }
    }
    for (int a = 0; a < r; a++)
        for (int j = 0; j < n; j++) {
            double v = -sc[a] * B->Pq[rows[a] + (size_t)j * m];
            Ad[2 * n + a + (size_t)j * nd] = v;
            Ad[n + j + (size_t)(2 * n + a) * nd] = v;
        }
    /* non-holonomic rows (velocity level, index 2) and their multiplier columns, same scale */
    for (int b = 0; b < k; b++)
        for (int j = 0; j < n; j++) {
            Ad[2 * n + r + b + (size_t)j * nd] = -sc[r + b] * Nq[b + (size_t)j * k];
            Ad[2 * n + r + b + (size_t)(n + j) * nd] = -sc[r + b] * Nv[b + (size_t)j * k];
            Ad[n + j + (size_t)(2 * n + r + b) * nd] = -sc[r + b] * Rmu[j + (size_t)b * n];
        }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) ds->Bd[n + i + (size_t)j * nd] = -B->Rr[i + (size_t)j * n];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ny; i++) {
            ds->Cdd[i + (size_t)j * ny] = B->Yq[i + (size_t)j * ny];
            ds->Cdd[i + (size_t)(n + j) * ny] = B->Yv[i + (size_t)j * ny];
        }
    if (mv->ext) desc_ext(md, B->ev.jac, B->ev.y + ny, rows, r, sc, nd, ds);
}

/* The zero variant (opt->desc_zero; source 001 Sec. 3.2: the spurious eigenvalues "are zero, if
 * either or both Phi_q and Phi_q^T are transferred from A_q to E_q"): the multiplier variable becomes
 * mu with mu' = lambda, so s Phi^T moves to E in the EOM rows, and the constraint rows take the
 * constraints at acceleration level, s (Phi_q dv' + dPhi''/dq dq + dPhi''/dv dv) = 0, so s Phi moves to
 * E in the v columns: E = [I 0 0; 0 M s Phi^T; 0 s Phi 0], Ad = [0 I 0; -K_q -C_q 0; -s dPhi''/dq
 * -s dPhi''/dv 0]. E is regular where [M Phi^T; Phi 0] is, and each constraint adds three zero
 * eigenvalues (mu drifts, Phi dq drifts linearly: a Jordan block of size 3 at 0) in place of the
 * three infinite ones. ds filled by desc_fill first. */
static void desc_zero_fill(const mbl_blocks *B, const int *rows, int r, const double *sc, mbl_lin_descriptor *ds)
{
    int n = B->n, m = B->m, nd = ds->nd;
    for (int a = 0; a < r; a++)
        for (int j = 0; j < n; j++) {
            size_t pa = rows[a] + (size_t)j * m;
            double p = sc[a] * B->Pq[pa];
            ds->Ad[2 * n + a + (size_t)j * nd] = -sc[a] * B->Pddq[pa];
            ds->Ad[2 * n + a + (size_t)(n + j) * nd] = -sc[a] * B->Pddv[pa];
            ds->Ad[n + j + (size_t)(2 * n + a) * nd] = 0.0;
            ds->E[2 * n + a + (size_t)(n + j) * nd] = p;
            ds->E[n + j + (size_t)(2 * n + a) * nd] = p;
        }
}

/* The outputs of multipliers, accelerations, der(X) and Z in the descriptor form (ds filled by
 * desc_fill; Dd = Yr there). A multiplier or Z is a descriptor variable: its output a column of Cdd
 * (a multiplier's scaled by sc, the pencil's variable being dlambda / sc). The accelerations and
 * der(X) are the derivatives of the descriptor variables v and X, which the pencil's dynamic rows
 * (EOM and ode: E_I x_I' = Ad_I x + Bd_I u on the index set I of the v and X rows and columns)
 * determine when E_I is regular: their outputs add [Ya Yxd] E_I^-1 [Ad_I Bd_I] to [Cdd Dd]. The
 * transfer function Cdd (sE - Ad)^-1 Bd + Dd then equals the state-space form's. */
static int desc_outputs(const mbl_blocks *B, const int *rows, int r, const double *sc, mbl_lin_descriptor *ds,
                        mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k, nX = mv->nX, nr = mv->nr, ny = mv->ny, nd = ds->nd;
    int cx = 2 * n + r + k, cz = cx + nX;
    if (!ny) return 0;
    int ulam = lin_outputs_use(mv, MBL_BLK_LAMBDA), uacc = lin_outputs_use(mv, MBL_BLK_A);
    int uxd = mv->ext && B->Yxd && lin_outputs_use(mv, MBL_BLK_XD);
    if (ulam && r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "descriptor: outputs of multipliers (lambda): rank(Phi_q) = %d < %d constraints, the "
                         "multipliers are not unique at this point",
                         r, m);
    for (int a = 0; a < r; a++)
        for (int i = 0; i < ny; i++) ds->Cdd[i + (size_t)(2 * n + a) * ny] += sc[a] * B->Ylam[i + (size_t)rows[a] * ny];
    for (int b = 0; b < k; b++)
        for (int i = 0; i < ny; i++) ds->Cdd[i + (size_t)(2 * n + r + b) * ny] += sc[r + b] * B->Ymu[i + (size_t)b * ny];
    if (mv->ext && B->Yz)
        for (int j = 0; j < mv->nZ; j++)
            for (int i = 0; i < ny; i++) ds->Cdd[i + (size_t)(cz + j) * ny] += B->Yz[i + (size_t)j * ny];
    if (!uacc && !uxd) return 0;
    int ni = n + nX, nc = nd + nr, rc = 0;
    int *I = mbl_calloc((size_t)ni + 1, sizeof *I);
    double *EI = mbl_calloc((size_t)ni * ni + 1, sizeof *EI), *Z = mbl_calloc((size_t)ni * nc + 1, sizeof *Z);
    double *Yd = mbl_calloc((size_t)ny * ni + 1, sizeof *Yd);
    mbla_dlu *lu = NULL;
    if (!I || !EI || !Z || !Yd) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) I[i] = n + i;
    for (int i = 0; i < nX; i++) I[n + i] = cx + i;
    for (int a = 0; a < ni; a++) {
        for (int b = 0; b < ni; b++) EI[a + (size_t)b * ni] = ds->E[I[a] + (size_t)I[b] * nd];
        for (int c = 0; c < nd; c++) Z[a + (size_t)c * ni] = ds->Ad[I[a] + (size_t)c * nd];
        for (int c = 0; c < nr; c++) Z[a + (size_t)(nd + c) * ni] = ds->Bd[I[a] + (size_t)c * nd];
    }
    for (int i = 0; i < ny; i++) {
        for (int j = 0; j < n; j++) Yd[i + (size_t)j * ny] = B->Ya[i + (size_t)j * ny];
        for (int j = 0; uxd && j < nX; j++) Yd[i + (size_t)(n + j) * ny] = B->Yxd[i + (size_t)j * ny];
    }
    rc = mbla_dlu_new(ni, EI, ni, &lu, st);
    if (rc == MBL_ESINGULAR)
        rc = mbl_error(st, MBL_ESINGULAR,
                       "descriptor: outputs of accelerations or der() of ode states: the pencil's equations of motion "
                       "and ode rows do not determine the derivatives (E singular on them)");
    if (!rc) rc = mbla_dlu_solve(lu, 'N', nc, Z, ni, st);
    if (!rc) {
        mbla_gemm('N', 'N', ny, nd, ni, 1.0, Yd, ny, Z, ni, 1.0, ds->Cdd, ny, NULL);
        if (nr) mbla_gemm('N', 'N', ny, nr, ni, 1.0, Yd, ny, Z + (size_t)ni * nd, ni, 1.0, ds->Dd, ny, NULL);
    }
done:
    mbla_dlu_free(lu);
    mbl_free(I), mbl_free(EI), mbl_free(Z), mbl_free(Yd);
    return rc;
}

/* The zero variant's split (desc_zero_fill): its spurious eigenvalues are zeros, as a rigid-body
 * mode's may be, so the modulus cannot tell them apart. A spurious eigenvector lies in the
 * multipliers (mu drifts) or, mixed in by the rounding that splits the size-3 Jordan blocks, in
 * (dq, dv) that violate the constraints; a physical one moves the coordinates along them. The score
 * share (1 - viol), share = |(dq, dv)| / |x| and viol = (|Phi dq|^2 + |Phi dv|^2)^(1/2) / (||Phi||_F
 * |(dq, dv)|) (Phi the scaled rows s Phi_q, read from E's constraint rows), at most 1: the nphys
 * eigenvectors of the largest score are physical. cd (sorted by modulus) is reordered: the physical
 * ones first, each part in modulus order. */
static int desc_zero_order(int nd, int n, int r, const double *E, const double *VR, const double *ai,
                           mbl_eig_item *cd, int nphys, mbl_status *st)
{
    mbl_eig_item *by = mbl_alloc_array((size_t)nd + 1, sizeof *by), *out = mbl_alloc_array((size_t)nd + 1, sizeof *out);
    int *phys = mbl_calloc((size_t)nd + 1, sizeof *phys);
    if (!by || !out || !phys) {
        mbl_free(by), mbl_free(out), mbl_free(phys);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double nP = 0;
    for (int a = 0; a < r; a++)
        for (int c = 0; c < n; c++) nP += E[2 * n + a + (size_t)(n + c) * nd] * E[2 * n + a + (size_t)(n + c) * nd];
    nP = sqrt(nP);
    for (int j = 0; j < nd; j++) {
        const double *vre = VR + (size_t)(ai[j] < 0.0 ? j - 1 : j) * nd, *vim = ai[j] == 0.0 ? NULL : vre + nd;
        double a2 = 0, b2 = 0, v2 = 0;
        for (int c = 0; c < nd; c++) {
            double t = vre[c] * vre[c] + (vim ? vim[c] * vim[c] : 0.0);
            b2 += t;
            if (c < 2 * n) a2 += t;
        }
        for (int a = 0; a < r; a++)
            for (int h = 0; h < 2; h++) { /* Phi dq, Phi dv: real and imaginary parts */
                double pr = 0, pi = 0;
                for (int c = 0; c < n; c++) {
                    double e = E[2 * n + a + (size_t)(n + c) * nd];
                    pr += e * vre[h * n + c];
                    pi += vim ? e * vim[h * n + c] : 0.0;
                }
                v2 += pr * pr + pi * pi;
            }
        double share = b2 > 0 ? sqrt(a2 / b2) : 0.0, viol = a2 > 0 && nP > 0 ? sqrt(v2 / a2) / nP : 0.0;
        by[j] = (mbl_eig_item){0, 0, 1.0 - share * (1.0 - fmin(viol, 1.0)), j}; /* the largest score first */
    }
    mbl_eig_sort_modulus(by, nd);
    for (int t = 0; t < nphys; t++) phys[by[t].idx] = 1;
    int o = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (int t = 0; t < nd; t++)
            if (phys[cd[t].idx] == pass) out[o++] = cd[t];
    memcpy(cd, out, (size_t)nd * sizeof *cd);
    mbl_free(by), mbl_free(out), mbl_free(phys);
    return 0;
}

/* The spectrum of the pencil ds by QZ into lin->spectrum (nd eigenvalues, the nphys of smallest
 * modulus physical, the rest spurious; the physical ones refined): *rankE the rank of E, *gap the
 * modulus gap between the first spurious and the last physical eigenvalue. The zero variant (zero > 0:
 * desc_zero_fill, zero = r its constraint rows) splits by desc_zero_order instead, and *gap is the
 * largest spurious modulus. */
static int desc_qz(int n, int nphys, int singular, int zero, mbl_linear *lin, int *rankE, double *gap,
                   mbl_status *st)
{
    const mbl_lin_descriptor *ds = lin->descriptor;
    int nd = ds->nd, rc;
    double *Ad = ds->Ad, *E = ds->E;
    size_t nd2 = (size_t)nd * (size_t)nd;
    /* 2n + r + k <= 2n + m + k <= dense_max here: QZ */
    double *ar = mbl_calloc((size_t)nd + 1, sizeof *ar);
    double *ai = mbl_calloc((size_t)nd + 1, sizeof *ai);
    double *be = mbl_calloc((size_t)nd + 1, sizeof *be);
    double *VR = mbl_calloc(nd2 + 1, sizeof *VR), *VL = mbl_calloc(nd2 + 1, sizeof *VL);
    mbl_eig_item *cd = mbl_calloc((size_t)nd + 1, sizeof *cd);
    if (!ar || !ai || !be || !VR || !VL || !cd || lin_alloc_eigs(lin, nd)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    mbl_lin_spectrum *sp = lin->spectrum;
    rc = mbla_ggev(nd, Ad, nd, E, nd, ar, ai, be, VL, nd, VR, nd, st);
    if (rc) goto done;
    /* finite, infinite or undetermined from the pencil itself (beta against ||E||, alpha against
     * ||Ad||, at least nd - rank(E) infinite), never from |s| */
    int *kind = mbl_alloc_array((size_t)nd + 1, sizeof *kind);
    *rankE = 0;
    rc = kind ? mbla_gev_classify(nd, Ad, nd, E, nd, ar, ai, be, sp->re, sp->im, kind, NULL, rankE, st)
              : mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_free(kind);
    if (rc == MBL_ESINGULAR) mbl_error_prefix(st, "descriptor: the model's equations do not determine its motion here");
    if (rc) goto done;
    for (int j = 0; j < nd; j++) {
        double re = sp->re[j], im = sp->im[j];
        cd[j].re = re, cd[j].im = im;
        cd[j].mag = isfinite(re) && isfinite(im) ? hypot(re, im) : INFINITY;
        cd[j].idx = j;
        sp->spurious[j] = 1;
        /* coordinate part of the eigenvector (LAPACK packing of conjugate pairs) */
        const double *vre, *vim = NULL;
        double sg = 1.0;
        if (ai[j] == 0.0) vre = VR + (size_t)j * nd;
        else if (ai[j] > 0.0) vre = VR + (size_t)j * nd, vim = VR + (size_t)(j + 1) * nd;
        else vre = VR + (size_t)(j - 1) * nd, vim = VR + (size_t)j * nd, sg = -1.0;
        for (int c = 0; c < n; c++) {
            sp->vre[c + (size_t)j * n] = vre[c];
            sp->vim[c + (size_t)j * n] = vim ? sg * vim[c] : 0.0;
        }
    }
    mbl_eig_sort_modulus(cd, nd);
    if (zero && (rc = desc_zero_order(nd, n, zero, E, VR, ai, cd, nphys, st))) goto done;
    int nfin = 0;
    for (int j = 0; j < nd; j++) nfin += isfinite(cd[j].mag);
    if (nfin < nphys) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "descriptor: the pencil has %d finite eigenvalues, fewer than the %d degrees of freedom "
                       "(a singular pencil or an inconsistent point)",
                       nfin, nphys);
        goto done;
    }
    for (int j = 0; j < nphys; j++) sp->spurious[cd[j].idx] = 0;
    rc = desc_refine(nd, n, Ad, E, VR, ai, cd, nphys, sp, st);
    if (rc) goto done;
    rc = desc_err(nd, Ad, E, VR, VL, ai, sp, st);
    if (rc) goto done;
    /* at a singular configuration the data carry more than rounding: the minimum-norm multipliers
     * that are zero come out as 1e-14 and add a geometric stiffness of that size, which splits a
     * double-double zero by about sqrt of it (the parallelogram at its branch point: +-1.3e-7 i and
     * +-1.8e-7 against first-order estimates of 2.2e-8): an eigenvalue below that split has it as its
     * estimate (DESC_ZERO_FACTOR sqrt(eps ||Ad||_1 / ||E||_1), the split's level) */
    if (singular) {
        double nE1 = mbla_norm1(nd, nd, E, nd);
        double split = nE1 > 0 ? DESC_ZERO_FACTOR * sqrt(DBL_EPSILON * mbla_norm1(nd, nd, Ad, nd) / nE1) : 0.0;
        for (int j = 0; j < nd; j++)
            if (!sp->spurious[j] && hypot(sp->re[j], sp->im[j]) <= split) sp->err[j] = fmax(sp->err[j], split);
    }
    *gap = nphys < nd ? cd[nphys].mag / fmax(nphys ? cd[nphys - 1].mag : 0.0, DBL_MIN) : INFINITY;
    if (zero) {
        *gap = 0;
        for (int t = nphys; t < nd; t++) *gap = fmax(*gap, cd[t].mag);
    }
done:
    mbl_free(ar), mbl_free(ai), mbl_free(be), mbl_free(VR), mbl_free(VL), mbl_free(cd);
    return rc;
}

/* A point with motion: the pencil's Jacobian is in (q, v, lambda), and away from an equilibrium a
 * Jacobian depends on the coordinates, while lin->A (from nullspace or augmented) is in the user's
 * states. Each physical eigenvalue's estimate grows by DESC_MOVING_SAFETY times its distance to the
 * nearest eigenvalue of A (A's own rounding and its distance to augmented's are not known here), so that it bounds the deviation from the exact methods in the user's states (the stator's yaw
 * ramp of examples/sim/rotor_stator_ramp.yaml splits the double pair at 0.7991i by +-4.3e-5 in q;
 * the estimate was QZ's 1e-9; issue 65, item 8). */
#define DESC_MOVING_SAFETY 2.0
static int desc_moving_err(mbl_linear *lin, mbl_status *st)
{
    int nx = lin->nx, rc = 0;
    mbl_lin_spectrum *sp = lin->spectrum;
    if (!lin->A || nx <= 0 || !sp) return 0;
    double *wr = mbl_calloc((size_t)nx + 1, sizeof *wr), *wi = mbl_calloc((size_t)nx + 1, sizeof *wi);
    rc = wr && wi ? mbla_eig(nx, lin->A, nx, wr, wi, NULL, 1, NULL, 1, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; !rc && j < sp->neig; j++) {
        if (sp->spurious[j] || !isfinite(sp->re[j]) || !isfinite(sp->im[j])) continue;
        double best = INFINITY;
        for (int i = 0; i < nx; i++) best = fmin(best, hypot(sp->re[j] - wr[i], sp->im[j] - wi[i]));
        if (isfinite(best)) sp->err[j] += DESC_MOVING_SAFETY * best;
    }
    mbl_free(wr), mbl_free(wi);
    return rc;
}

int lin_descriptor(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear *lin,
                   mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, nr = mv->nr, ny = mv->ny, r = 0, rc;
    mbl_blocks B;
    int *rows = NULL;
    int k = mv->k;
    double *Rmu = NULL, *Nv = NULL, *Nq = NULL, *sc = NULL;
    int nX = mv->nX, nZ = mv->nZ;
    rc = lin_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    rows = mbl_calloc((size_t)m + 1, sizeof *rows);
    Rmu = mbl_calloc((size_t)n * k + 1, sizeof *Rmu);
    Nv = mbl_calloc((size_t)k * n + 1, sizeof *Nv);
    Nq = mbl_calloc((size_t)k * n + 1, sizeof *Nq);
    if (!rows || !Rmu || !Nv || !Nq) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = lin_constraint_rank(&B, opt->rank_tol, rows, &r, st);
    if (rc) goto done;
    if (opt->desc_zero && (k > 0 || mv->ext || lin_point_moving(pt) || lin_outputs_use(mv, MBL_BLK_A) ||
                           lin_outputs_use(mv, MBL_BLK_LAMBDA))) {
        rc = mbl_error(st, MBL_EARG, "descriptor: the zero variant (desc_zero) takes holonomic constraints at a point "
                       "at rest, without outputs of multipliers or accelerations (here: %s)",
                       k > 0 ? "non-holonomic constraints" : mv->ext ? model_ext_features(md) : lin_point_moving(pt)
                       ? "a point with motion" : "outputs of multipliers or accelerations");
        goto done;
    }
    if (k > 0) {
        int e0 = mv->row0[MBL_ROW_EOM], h0 = mv->row0[MBL_ROW_NH];
        lin_sjac_dense(mv, &mv->jac, B.ev.jac, e0, e0 + n, MBL_BLK_MU, Rmu);
        lin_sjac_dense(mv, &mv->jac, B.ev.jac, h0, h0 + k, MBL_BLK_V, Nv);
        lin_sjac_dense(mv, &mv->jac, B.ev.jac, h0, h0 + k, MBL_BLK_Q, Nq);
    }
    /* the constant-coefficient pencil needs d(Phi_q v)/dq = 0 on the kept rows */
    double nPq = mbla_norm1(m, n, B.Pq, m), nPd = 0;
    for (int i = 0; i < r; i++)
        for (int j = 0; j < n; j++) nPd = fmax(nPd, fabs(B.Pdq[rows[i] + (size_t)j * m]));
    if (m && nPd > opt->rank_tol * nPq) {
        rc = mbl_error(st, MBL_EMODEL,
                       "descriptor: the constraint Jacobian moves with the velocities at this point "
                       "(d(Phi_q v)/dq != 0): the constant-coefficient pencil of source 001 Eq. 8 does not apply; "
                       "use augmented");
        goto done;
    }
    int nd = 2 * n + r + k + nX + nZ;
    size_t nd2 = (size_t)nd * (size_t)nd;
    if (lin_alloc_descriptor(lin, nd)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    mbl_lin_descriptor *ds = lin->descriptor;
    ds->E = mbl_calloc(nd2 + 1, sizeof(double));
    ds->Ad = mbl_calloc(nd2 + 1, sizeof(double));
    ds->Bd = mbl_calloc((size_t)nd * nr + 1, sizeof(double));
    ds->Cdd = mbl_calloc((size_t)ny * nd + 1, sizeof(double));
    ds->Dd = mbl_calloc((size_t)ny * nr + 1, sizeof(double));
    if (!ds->E || !ds->Ad || !ds->Bd || !ds->Cdd || !ds->Dd) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    sc = mbl_alloc_array((size_t)(r + k) + 1, sizeof *sc);
    if (!sc) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    double smin, smax;
    desc_scales(&B, rows, r, k, Nv, Nq, opt, sc, &smin, &smax);
    desc_fill(md, &B, rows, r, Rmu, Nv, Nq, sc, ds);
    if (opt->desc_zero) desc_zero_fill(&B, rows, r, sc, ds);
    memcpy(ds->Dd, B.Yr, (size_t)ny * nr * sizeof *ds->Dd);
    rc = desc_outputs(&B, rows, r, sc, ds, st);
    if (rc) goto done;
    int nphys = 2 * (n - r) - k + nX, rankE = 0;
    double gap = 0;
    rc = desc_qz(n, nphys, r < m, opt->desc_zero ? r : 0, lin, &rankE, &gap, st);
    if (!rc && lin_point_moving(pt)) rc = desc_moving_err(lin, st);
    if (rc) goto done;
    /* the largest estimate of an eigenvalue that is not zero within its own (those are zero modes) */
    for (int j = 0; j < nd; j++) {
        const mbl_lin_spectrum *sp = lin->spectrum;
        if (!sp->spurious[j] && hypot(sp->re[j], sp->im[j]) > sp->err[j]) lin->err_est = fmax(lin->err_est, sp->err[j]);
    }
    char scales[64];
    if (r + k && smax > smin) snprintf(scales, sizeof scales, "s %.3g to %.3g", smin, smax);
    else snprintf(scales, sizeof scales, " %.3g", r + k ? smin : 1.0);
    if (opt->desc_zero)
        snprintf(lin->notes, sizeof lin->notes,
                 "QZ on the %d x %d pencil, zero variant (constraint scale%s, rank(Phi_q) = %d of %d, rank(E) = %d): "
                 "%d physical, %d spurious (zero) eigenvalues, the largest spurious modulus %.3g",
                 nd, nd, scales, r, m, rankE, nphys, nd - nphys, gap);
    else
        snprintf(lin->notes, sizeof lin->notes,
                 "QZ on the %d x %d pencil (constraint scale%s, rank(Phi_q) = %d of %d, %d non-holonomic, rank(E) = "
                 "%d): %d physical, %d spurious (infinite) eigenvalues, modulus gap %.3g%s",
                 nd, nd, scales, r, m, k, rankE, nphys, nd - nphys, gap,
                 gap < DESC_GAP_WARN ? " (small: the physical/spurious split is doubtful; try constraint_scale)" : "");
    /* a point with motion: the pencil's Jacobian is in (q, v, lambda), and away from an equilibrium a
     * Jacobian depends on the coordinates (examples/sim/rotor_stator_ramp.yaml: the stator's yaw
     * acceleration splits the double pair at 0.7991i by 4.3e-5 in q, not in the user's states; the
     * split is proportional to the ramp, QZ's error estimate there 1e-9; issue 30, item 9) */
    size_t nl = strlen(lin->notes);
    if (lin_point_moving(pt))
        snprintf(lin->notes + nl, sizeof lin->notes - nl, "%s",
                 "; point with motion: eigenvalues of the pencil in the model's coordinates (q, v, lambda), "
                 "which may differ from those of A in the user's states (each estimate includes the distance)");
done:
    lin_blocks_free(&B);
    mbl_free(rows);
    mbl_free(Rmu), mbl_free(Nv), mbl_free(Nq), mbl_free(sc);
    return rc;
}
