/* Re-linearization of an unconstrained tree by a Cholesky factorization of its mass matrix
 * (issue 34, item 3; docs/linearization.md "Sweeps").
 *
 * When the model has no holonomic or non-holonomic constraints (m = k = 0), no user ODE states or
 * implicit variables, and its states are its coordinates and their rates in order (S = q, W = v:
 * what the state selection chooses without constraints or user states; a URDF robot, a
 * relative-coordinate tree without cut joints), the kinematic system of augmented.c is a
 * permutation and the augmented system reduces to the mass matrix:
 *     M a' = -[R_q, R_v, R_r]      (a' the accelerations' responses to S-bar, W-bar, r)
 * with R = dEOM/d(q, v, r) and M = dEOM/dvdot. Then
 *     A = [0 I; a'_S, a'_W],  B = [0; a'_r],
 *     C = [Y_q, Y_v] + Y_a [a'_S, a'_W],  D = Y_r + Y_a a'_r       (Y the outputs' Jacobian),
 *     M-hat = M, C-hat = R_v, K-hat = R_q, F = -R_r,  q_S = v_W = I,
 * the same quantities as the general path, which solves the same equations through the kinematic
 * system or the augmented matrix (KLU): equal to rounding. M, scaled by powers of 2 to a diagonal
 * near 1 (the matrix of the states' test), is factored (dpotrf) and inverted (dpotri); the
 * right-hand sides with few nonzeros are multiplied by M^-1 over them, the others in one dgemm:
 * n^3 + 2 n^2 (dense columns) flops, instead of sparse solves column by column on factors that
 * are dense for a chain, and a projection.
 *
 * Chosen at the workspace's first point (aug_dense_prepare) unless the options turn it off
 * (mbl_lin_options.dense_tree = MBL_DENSE_TREE_OFF: the general path, for comparison). At a point
 * where M is not symmetric to RELIN_DENSE_SYM_TOL, not positive definite (dpotrf fails) or near
 * the states' test's bound (RELIN_DENSE_RCOND_MARGIN), aug_dense_relin returns 1 and
 * mbl_relinearize takes the general path there. The reported condition is that of the kinematic
 * system, a permutation: 1. */
#include <math.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "lin/methods_internal.h"

/* M is used as symmetric (its lower triangle) when |M_ij - M_ji| <= this times sqrt(M_ii M_jj) for
 * every pair; the recursion of a tree computes both from the same sums (exactly equal), a model
 * written by hand may not. Otherwise the general path (LU) is taken at that point. */
#define RELIN_DENSE_SYM_TOL 1e-14
/* The states' test's last part (M-hat scaled to unit diagonal regular: reciprocal condition >=
 * rcond_min) is made from the inverse of M scaled by powers of 2 to a diagonal in [1/4, 1) (its
 * condition at most 4 times that of the unit diagonal); within this factor of
 * the bound the general path (its LU and dgecon, the documented test) decides, so an estimate of
 * the same quantity by another factorization never changes a refusal. */
#define RELIN_DENSE_RCOND_MARGIN 1e3
/* A right-hand side with at most this fraction of nonzeros (times n) is multiplied by M^-1 entry by
 * entry, the others together by dgemm */
#define RELIN_DENSE_SPARSE_COL 0.125

/* a = x (n entries) */
static inline void fill(size_t n, double *a, double x)
{
    size_t e = 0;
    for (; e + 1 < n; e += 2) a[e] = x, a[e + 1] = x;
    if (e < n) a[e] = x;
}

/* The constants' K-hat, C-hat and M (n x n each) and F (n x nr) in w->dtpl, as aug_dense_relin's
 * gathers leave them from the Jacobian's values (K-hat's and C-hat's -0 outside their pattern,
 * M's and F's +0), and M's diagonal's places; w->ddirect */
static int dense_templates(mbl_lin_work *w, mbl_status *st)
{
    int n = w->ev.mv.n, nr = w->ev.mv.nr;
    size_t nn = (size_t)n * n;
    const double *jac0 = model_jac_constant(w->md);
    w->dkcm = mbl_alloc_array(3 * nn + 1, sizeof *w->dkcm);
    w->dtpl = mbl_calloc(3 * nn + (size_t)n * nr + 1, sizeof *w->dtpl);
    w->ddiag = mbl_alloc_array((size_t)n + 1, sizeof *w->ddiag);
    if (!w->dkcm || !w->dtpl || !w->ddiag) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *K = w->dtpl, *C = K + nn, *M = C + nn, *F = M + nn;
    fill(2 * nn, K, -0.0);
    const int *src = w->desrc, *dst = w->dedst;
    for (int e = 0; e < w->ndm; e++) M[dst[e]] = jac0[src[e]];
    for (int e = w->ndm; e < w->ndk; e++) K[dst[e]] = jac0[src[e]];
    for (int e = w->ndk; e < w->ndc; e++) C[dst[e]] = jac0[src[e]];
    for (int e = w->ndc; e < w->nde; e++) F[dst[e]] = -jac0[src[e]];
    for (int i = 0; i < n; i++) w->ddiag[i] = i + i * n;
    w->ddirect = 1;
    return 0;
}

int aug_dense_eval(mbl_lin_work *w, const mbl_point *pt, int outputs, mbl_status *st)
{
    const mbl_model *md = w->md;
    mbl_eval *ev = &w->ev;
    w->ddone = 0;
    /* a point that keeps the Jacobian's values lin_eval_at_given_syms would take: as before (a tree
     * with outputs takes none: its shared tape's values are made again, equal only to rounding) */
    if (pt->jac_memo && !model_eval_jac_y_shared(md)) return 0;
    model_fill_syms_pt(md, pt, ev->syms);
    int rc = lin_eval_lean_arrays(ev, ev->mv.work_size, 1, st);
    if (rc) return rc;
    memcpy(w->dkcm, w->dtpl, 3 * (size_t)ev->mv.n * ev->mv.n * sizeof *w->dkcm);
    rc = model_eval_dense_minv(md, ev->syms, w->dkcm, outputs ? ev->y : NULL, ev->minv, ev->mwork, ev->work, st);
    ev->minv_rc = rc > 0, rc = rc > 0 ? 0 : rc;
    if (!rc) rc = model_eval_user_states(md, ev->syms, ev->us, ev->work, st);
    if (rc) return model_eval_error(md, ev->syms, "at the operating point", st);
    w->ddone = 1;
    return 0;
}

int aug_dense_prepare(mbl_lin_work *w, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, ja = mv->blk0[MBL_BLK_A], jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    int jr = mv->blk0[MBL_BLK_R], nr = mv->nr;
    w->dense = 0;
    if (w->opt.dense_tree < 0 || n == 0 || mv->m || mv->k || mv->nX || mv->nZ || mv->nF != n || w->z0 != n ||
        w->z1 != n || w->N != 3 * n || w->nrhs != 2 * n + nr)
        return 0;
    for (int i = 0; i < n; i++) {
        const mbl_state_ref *s = &w->S[i], *v = &w->W[i];
        if (s->kind != MBL_SREF_COORD || s->index != i || !(v->kind == MBL_SREF_SDOT || v->kind == MBL_SREF_COORD) ||
            v->index != i)
            return 0;
    }
    /* the Jacobian's entries: M's first, then K-hat's, C-hat's (R_q, R_v) and F's (-R_r), each
     * entry's offset in its matrix */
    int nz = mv->jac.nz;
    w->desrc = mbl_alloc_array((size_t)nz + 1, sizeof *w->desrc);
    w->dedst = mbl_alloc_array((size_t)nz + 1, sizeof *w->dedst);
    /* M, then F, K-hat and C-hat for a pattern that does not fill them (the entries outside it stay
     * F's +0, K-hat's and C-hat's -0 as -R_q, -R_v of R's +0: copied whole into the result), d, T (2
     * nrhs columns: the right-hand sides gathered for dgemm and their responses) */
    w->dbuf = mbl_calloc((size_t)n * (size_t)(3 * n + nr + 2 * w->nrhs + 1) + 1, sizeof *w->dbuf);
    w->diwork = mbl_alloc_array((size_t)(n > w->nrhs ? n : w->nrhs) + 1, sizeof *w->diwork);
    if (!w->desrc || !w->dedst || !w->dbuf || !w->diwork) return mbl_error(st, MBL_ENOMEM, "out of memory");
    size_t nn = (size_t)n * n;
    int e = 0, *ends[4] = {&w->ndm, &w->ndk, &w->ndc, &w->nde};
    for (int pass = 0; pass < 4; pass++) { /* M, then the right-hand sides' blocks q, v, r */
        for (int p = 0; p < nz; p++) {
            int r = mv->jac.row[p], c = mv->jac.col[p];
            int blk = c >= ja && c < ja + n ? 0 : c >= jq && c < jq + n ? 1 : c >= jv && c < jv + n ? 2
                      : c >= jr && c < jr + nr ? 3 : -1;
            if (blk < 0) return 0; /* a column of another unknown: not this path */
            if (blk != pass) continue;
            int c0 = blk == 0 ? ja : blk == 1 ? jq : blk == 2 ? jv : jr;
            w->desrc[e] = p, w->dedst[e++] = r + (c - c0) * n;
        }
        *ends[pass] = e;
    }
    fill(2 * nn, w->dbuf + nn + (size_t)n * nr, -0.0);
    /* the right-hand sides' pattern by column, rows increasing */
    unsigned char *mask = mbl_calloc((size_t)n * (size_t)w->nrhs + 1, 1);
    w->dcptr = mbl_alloc_array((size_t)w->nrhs + 1, sizeof *w->dcptr);
    w->dcrow = mbl_alloc_array((size_t)(e - w->ndm) + 1, sizeof *w->dcrow);
    if (!mask || !w->dcptr || !w->dcrow) {
        mbl_free(mask);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    /* M's entries at distinct places (aug_dense_relin writes each once; with n^2 of them it writes
     * the whole of M, over the inverse of the previous point) */
    int dup = 0;
    for (int t = 0; t < w->ndm; t++) dup |= mask[w->dedst[t]]++ != 0;
    if (dup) {
        mbl_free(mask);
        return 0;
    }
    memset(mask, 0, nn);
    for (int t = w->ndm; t < e; t++) /* the right-hand sides' column: q, v, then r */
        mask[(size_t)w->dedst[t] + (t < w->ndk ? 0 : t < w->ndc ? nn : 2 * nn)] = 1;
    int np = 0;
    for (int j = 0; j < w->nrhs; j++) {
        w->dcptr[j] = np;
        for (int k = 0; k < n; k++)
            if (mask[k + (size_t)j * n]) w->dcrow[np++] = k;
    }
    w->dcptr[w->nrhs] = np;
    mbl_free(mask);
    w->dense = 1;
    if (w->opt.dense_tree != MBL_DENSE_TREE_CHOLESKY && model_mass_inverse_ok(w->md)) {
        w->dminv = mbl_alloc_array(nn + 1, sizeof *w->dminv);
        w->dmwork = mbl_alloc_array(model_mass_inverse_work(w->md) + 1, sizeof *w->dmwork);
        if (!w->dminv || !w->dmwork) return mbl_error(st, MBL_ENOMEM, "out of memory");
        w->ev.minv = w->dminv, w->ev.mwork = w->dmwork;
        if (model_mass_dense_ok(w->md)) return dense_templates(w, st);
    }
    return 0;
}

/* M symmetric to RELIN_DENSE_SYM_TOL with a positive diagonal (s: n scratch) */
static int mass_symmetric(const double *M, int n, double *s)
{
    for (int j = 0; j < n; j++) {
        double mjj = M[j + (size_t)j * n];
        if (!(mjj > 0)) return 0;
        s[j] = sqrt(mjj);
    }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++)
            if (!(fabs(M[i + (size_t)j * n] - M[j + (size_t)i * n]) <= RELIN_DENSE_SYM_TOL * s[i] * s[j])) return 0;
    return 1;
}

/* The loops below are written two entries at a time (pairs of vector lanes at -O2), each entry the
 * same operations as one at a time. */

/* x += m a (n entries) */
static inline void axpy(int n, double a, const double *restrict m, double *restrict x)
{
    int i = 0;
    for (; i + 1 < n; i += 2) x[i] += m[i] * a, x[i + 1] += m[i + 1] * a;
    if (i < n) x[i] += m[i] * a;
}

/* a = -b (n entries) */
static inline void negcopy(size_t n, double *restrict a, const double *restrict b)
{
    size_t e = 0;
    for (; e + 1 < n; e += 2) a[e] = -b[e], a[e + 1] = -b[e + 1];
    if (e < n) a[e] = -b[e];
}

/* ||S||_1 of the n x n matrix S in M (as mbla_norm1: each column's sum of magnitudes in increasing
 * row order, the largest, NaN if any is), and M = D S D in place (M_ij * (d_i d_j)): two columns
 * at a time, two independent sums */
static double norm1_scale(int n, double *restrict M, const double *restrict d)
{
    double best = 0.0;
    int j = 0;
    for (; j + 1 < n; j += 2) {
        double *m0 = M + (size_t)j * n, *m1 = m0 + n, d0 = d[j], d1 = d[j + 1], s0 = 0.0, s1 = 0.0;
        for (int i = 0; i < n; i++) {
            double a = m0[i], b = m1[i];
            s0 += fabs(a), s1 += fabs(b);
            m0[i] = a * (d[i] * d0), m1[i] = b * (d[i] * d1);
        }
        if (s0 > best || isnan(s0)) best = s0;
        if (s1 > best || isnan(s1)) best = s1;
    }
    if (j < n) {
        double *m0 = M + (size_t)j * n, d0 = d[j], s0 = 0.0;
        for (int i = 0; i < n; i++) {
            double a = m0[i];
            s0 += fabs(a);
            m0[i] = a * (d[i] * d0);
        }
        if (s0 > best || isnan(s0)) best = s0;
    }
    return best;
}

/* ||S^-1||_1 of S = D M D from Minv = M^-1 (S^-1 = D^-1 Minv D^-1; d powers of 2: exact scalings) */
static double inv_norm1_scaled(int n, const double *restrict Minv, const double *restrict d, double *restrict e)
{
    double best = 0.0;
    for (int i = 0; i < n; i++) e[i] = 1.0 / d[i];
    for (int j = 0; j < n; j++) {
        const double *m = Minv + (size_t)j * n;
        double s = 0.0, t = 0.0;
        int i = 0;
        for (; i + 1 < n; i += 2) s += fabs(m[i]) * e[i], t += fabs(m[i + 1]) * e[i + 1];
        if (i < n) s += fabs(m[i]) * e[i];
        s = (s + t) * e[j];
        if (s > best || isnan(s)) best = s;
    }
    return best;
}

/* the number of entries of x that are not zero (n entries), counted until it exceeds lim */
static inline int count_nonzero(int n, const double *x, double lim)
{
    int a = 0, b = 0, i = 0;
    for (; i + 1 < n && !(a + b > lim); i += 2) a += x[i] != 0.0, b += x[i + 1] != 0.0;
    if (i < n) a += x[i] != 0.0;
    return a + b;
}

/* column j of the responses X = [a'_S, a'_W, a'_r] (n x nrhs): the lower half of column j of
 * A = [0 I; a'_S a'_W] or of B = [0; a'_r] (nx = 2 n rows) */
static inline double *xcol(const mbl_linear *lin, int nx, int j)
{
    return (j < nx ? lin->A + (size_t)j * nx : lin->B + (size_t)(j - nx) * nx) + nx / 2;
}

/* column j of the right-hand sides R = -[K-hat, C-hat, -F] = [R_q, R_v, R_r] (n x nrhs): the
 * column of lin's matrix it is read from, and its sign there (-1: R's entries are its negatives) */
static inline const double *rcol(const mbl_linear *lin, int n, int j, double *sign)
{
    *sign = j < 2 * n ? -1.0 : 1.0;
    return j < n ? lin->K + (size_t)j * n : j < 2 * n ? lin->Cd + (size_t)(j - n) * n : lin->F + (size_t)(j - 2 * n) * n;
}

/* X = Minv R (R n x nrhs, rcol) into A and B (xcol): a column of R with few nonzeros (an input on one
 * joint, a joint's damping at rest) as the sum of Minv's columns it picks, the others by one dgemm
 * on the columns gathered into T (n x 2 nrhs; list: their indices) */
static void responses(const mbl_lin_work *w, const double *Minv, int n, int nrhs, mbl_linear *lin, double *T, int *list)
{
    int nd = 0;
    for (int j = 0; j < nrhs; j++) {
        double sg;
        const double *r = rcol(lin, n, j, &sg);
        int nz = 0, p0 = w->dcptr[j], p1 = w->dcptr[j + 1];
        if (p1 - p0 > RELIN_DENSE_SPARSE_COL * n) { /* else sparse in structure */
            /* R's entries outside the pattern are zero: the whole column counted */
            nz = 4 * (p1 - p0) > n ? count_nonzero(n, r, RELIN_DENSE_SPARSE_COL * n) : 0;
            for (int p = p0; p < p1 && 4 * (p1 - p0) <= n; p++) nz += r[w->dcrow[p]] != 0.0;
            if (nz > RELIN_DENSE_SPARSE_COL * n) {
                list[nd++] = j;
                continue;
            }
        }
        double *x = xcol(lin, 2 * n, j);
        memset(x, 0, (size_t)n * sizeof *x);
        for (int p = p0; p < p1; p++) {
            int k = w->dcrow[p];
            if (r[k] != 0.0) axpy(n, sg * r[k], Minv + (size_t)k * n, x);
        }
    }
    if (!nd) return;
    double *U = T + (size_t)n * nd;
    for (int t = 0; t < nd; t++) {
        double sg;
        const double *r = rcol(lin, n, list[t], &sg);
        if (sg < 0) negcopy((size_t)n, T + (size_t)t * n, r);
        else memcpy(T + (size_t)t * n, r, (size_t)n * sizeof *T);
    }
    mbla_gemm('N', 'N', n, nd, n, 1.0, Minv, n, T, n, 0.0, U, n, NULL);
    for (int t = 0; t < nd; t++) memcpy(xcol(lin, 2 * n, list[t]), U + (size_t)t * n, (size_t)n * sizeof *U);
}

/* C and D from the outputs' rows (refilled in w->Y) and the accelerations' responses (xcol) */
static void outputs(const mbl_lin_work *w, mbl_linear *lin)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, ny = mv->ny, nx = 2 * n, nrhs = w->nrhs;
    int ja = mv->blk0[MBL_BLK_A], jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    int jr = mv->blk0[MBL_BLK_R];
    memset(lin->C, 0, (size_t)ny * (size_t)nx * sizeof *lin->C);
    memset(lin->D, 0, (size_t)ny * (size_t)mv->nr * sizeof *lin->D);
    if (w->opt.skip_outputs) return;
    for (int i = 0; i < ny; i++)
        for (int p = w->Y.ptr[i]; p < w->Y.ptr[i + 1]; p++) {
            int c = w->Y.col[p];
            double y = w->Y.val[p];
            if (c >= ja && c < ja + n) {
                for (int j = 0; j < nrhs; j++) {
                    double t = y * xcol(lin, nx, j)[c - ja];
                    if (j < nx) lin->C[i + (size_t)j * ny] += t;
                    else lin->D[i + (size_t)(j - nx) * ny] += t;
                }
            } else if (c >= jv && c < jv + n) {
                lin->C[i + (size_t)(n + c - jv) * ny] += y;
            } else if (c >= jq && c < jq + n) {
                lin->C[i + (size_t)(c - jq) * ny] += y;
            } else if (c >= jr) {
                lin->D[i + (size_t)(c - jr) * ny] += y;
            }
        }
}

int aug_dense_relin(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const mbl_model *md = w->md;
    const model_view *mv = &w->ev.mv;
    int n = mv->n, nr = mv->nr, nx = 2 * n, nrhs = w->nrhs;
    size_t nn = (size_t)n * n;
    double *Mb = w->dbuf, *Fb = Mb + nn, *Kb = Fb + (size_t)n * nr, *Cb = Kb + nn, *d = Cb + nn, *work = d + n;
    const double *jac = w->ev.jac;
    const int *src = w->desrc, *dst = w->dedst;
    /* the states' test reads M's diagonal from the Jacobian's values (mdiag), or, made in place, from
     * M-hat (ddiag) */
    const double *mvals = jac;
    const int *mdiag = w->mdiag;
    int nmdiag = w->nmdiag;
    if (w->ddone) { /* the Jacobian's K-hat, C-hat and M made in place (aug_dense_eval): copied */
        Mb = w->dkcm + 2 * nn, mvals = lin->M, mdiag = w->ddiag, nmdiag = n;
        if (!mass_symmetric(Mb, n, d)) return 1;
        memcpy(lin->M, Mb, nn * sizeof *Mb);
        memcpy(lin->F, w->dtpl + 3 * nn, (size_t)n * (size_t)nr * sizeof *lin->F);
        memcpy(lin->K, w->dkcm, nn * sizeof *lin->K);
        memcpy(lin->Cd, w->dkcm + nn, nn * sizeof *lin->Cd);
    } else {
        /* M's entries outside its pattern: zero since the workspace was made, unless the Cholesky
         * path left the last point's inverse there (the tree's own M^-1 path scales M in place, 0
         * stays 0) */
        if ((size_t)w->ndm < nn && !w->dminv) memset(Mb, 0, nn * sizeof *Mb);
        for (int e = 0; e < w->ndm; e++) Mb[dst[e]] = jac[src[e]];
        if (!mass_symmetric(Mb, n, d)) return 1;
        /* M-hat, F (from its own buffer), and K-hat, C-hat: gathered from the Jacobian in place when
         * their pattern fills them, else through their buffers (the right-hand sides are read from
         * the result, rcol); the maps */
        memcpy(lin->M, Mb, nn * sizeof *Mb);
        for (int e = w->ndc; e < w->nde; e++) Fb[dst[e]] = -jac[src[e]];
        memcpy(lin->F, Fb, (size_t)n * (size_t)nr * sizeof *Fb);
        double *K = (size_t)(w->ndk - w->ndm) < nn ? Kb : lin->K, *Cd = (size_t)(w->ndc - w->ndk) < nn ? Cb : lin->Cd;
        for (int e = w->ndm; e < w->ndk; e++) K[dst[e]] = jac[src[e]];
        for (int e = w->ndk; e < w->ndc; e++) Cd[dst[e]] = jac[src[e]];
        if (K != lin->K) memcpy(lin->K, K, nn * sizeof *K);
        if (Cd != lin->Cd) memcpy(lin->Cd, Cd, nn * sizeof *Cd);
    }
    memset(lin->q_S, 0, nn * sizeof *lin->q_S);
    memset(lin->v_W, 0, nn * sizeof *lin->v_W);
    for (int j = 0; j < n; j++) lin->q_S[j + (size_t)j * n] = 1.0, lin->v_W[j + (size_t)j * n] = 1.0;
    /* the same states' test as the general path; its last part (M-hat scaled to unit diagonal
     * regular) from the inverse of the matrix S = D M D scaled by powers of 2 to a diagonal in
     * [1/4, 1) (the same rounding as M's own), which also gives the responses */
    int rc = lin_check_states_mass(md, mvals, mdiag, nmdiag, lin, &w->opt, st);
    if (rc) return rc;
    double anorm = 0;
    for (int i = 0; i < n; i++) { /* powers of 2 (exact): d_i^2 M_ii in [1/4, 1) */
        int e;
        frexp(sqrt(Mb[i + (size_t)i * n]), &e);
        d[i] = ldexp(1.0, -e);
    }
    for (int j = 0; j < n; j++) { /* the lower triangle scaled; the column sums of the symmetric whole */
        double cs = 0;
        for (int i = 0; i < j; i++) cs += fabs(Mb[j + (size_t)i * n]);
        for (int i = j; i < n; i++) cs += fabs(Mb[i + (size_t)j * n] *= d[i] * d[j]);
        anorm = fmax(anorm, cs);
    }
    /* M^-1: the tree's articulated bodies' (evaluated with the Jacobian, w->ev.minv), else from a
     * Cholesky factorization of S */
    const double *Minv = Mb;
    double inorm;
    if (w->dminv) {
        if (w->ev.minv_rc) return 1; /* not positive definite: the general path */
        Minv = w->dminv;
        inorm = inv_norm1_scaled(n, Minv, d, work);
    } else {
        mbl_status quiet;
        if (mbla_dchol(n, Mb, n, &quiet) || mbla_dchol_inverse(n, Mb, n, &quiet))
            return 1; /* not positive definite: the general path */
        inorm = norm1_scale(n, Mb, d); /* and M^-1 = D S^-1 D */
    }
    /* the reciprocal condition ||S||_1^-1 ||S^-1||_1^-1, exact from the inverse (the general path's
     * dgecon estimates it from below: this is never the larger) */
    if (!(1.0 / (anorm * inorm) >= RELIN_DENSE_RCOND_MARGIN * w->opt.rcond_min))
        return 1; /* near the states' test's bound: the general path decides */
    double *T = work;
    for (int j = 0; j < nx + nr; j++) memset(xcol(lin, nx, j) - n, 0, (size_t)n * sizeof *T);
    responses(w, Minv, n, nrhs, lin, T, w->diwork);
    for (int i = 0; i < n; i++) lin->A[i + (size_t)(n + i) * nx] = 1.0;
    outputs(w, lin);
    lin->cond = 1.0;
    return 0;
}

int aug_dense_oneshot(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    if (w->opt.dense_tree != MBL_DENSE_TREE_AUTO || !model_mass_inverse_ok(w->md) || !w->Y.ptr) return 0;
    /* the workspace this needs (M, the right-hand sides, M^-1 and the recursion's), within half the
     * memory budget; else the general path's result stands */
    double n = mv->n, need = 8.0 * (n * (n + 4.0 * w->nrhs + 2.0) + (double)model_mass_inverse_work(w->md) +
                                    (double)mv->work_size);
    if (!(need <= 0.5 * w->opt.mem_budget)) return 0;
    int rc = aug_dense_prepare(w, st);
    if (rc || !w->dense || !w->dminv) return rc;
    double *work = mbl_alloc_array(mv->work_size + 1, sizeof *work);
    if (!work) return mbl_error(st, MBL_ENOMEM, "out of memory");
    rc = model_eval_jac_y_minv(w->md, w->ev.syms, NULL, NULL, w->dminv, w->dmwork, work, st);
    mbl_free(work);
    if (rc < 0) return rc;
    w->ev.minv_rc = rc > 0, w->ddone = 0;
    double cond = lin->cond;
    rc = aug_dense_relin(w, lin, st);
    lin->cond = cond; /* the general path's figure, as before */
    return rc > 0 ? 0 : rc;
}
