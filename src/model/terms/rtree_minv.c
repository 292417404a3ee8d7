/* The inverse of a tree's mass matrix by its articulated bodies (rtree_num.h; issue 69).
 *
 * M^-1 is not taken from M: along a chain M's condition grows like N^4 (a 100-link chain: about
 * 1e8), and M's entries, sums over subtrees, already carry errors of eps |M| that any
 * factorization of M turns into errors of cond(M) eps in M^-1 (the dense path's 2.6e-10 in A at
 * N = 100). The articulated-body recursion (Featherstone 2008, ch. 7; the inverse as in Carpentier
 * and Mansard 2018's computeMinverse) works from the bodies' spatial inertias I_b and joint axes S_b
 * instead, where nothing is ill-conditioned but the physics. All in global axes about the global
 * origin (the term's frame, rtree.c): no coordinate transforms between bodies.
 *
 * Backward, leaves first, for every body b with parent p (the columns j are the coordinates):
 *   IA_b = I_b + sum over b's children c of (IA_c - U_c U_c^T / D_c), U_b = IA_b S_b, D_b = S_b . U_b,
 *   u_b(j) = [j = k] - S_b . F_b(:, j)    (k the coordinate of b's joint),
 *   F_p(:, j) += F_b(:, j) + U_b u_b(j) / D_b   (F_b: the subtree's bias forces, zero outside its columns);
 * a body with a fixed joint passes IA_b and F_b to its parent whole. Forward, root first:
 *   A'_b = A_p (0 at the ground), M^-1(k, j) = (u_b(j) - U_b . A'_b(:, j)) / D_b,
 *   A_b(:, j) = A'_b(:, j) + S_b M^-1(k, j):
 * column j is the articulated-body algorithm's solution of M x = e_j without velocities or gravity,
 * for all j at once. F_b is nonzero only in the columns of b's subtree (qlo_b .. qhi_b); A_b takes
 * F_b's place once the backward pass is done. Flops: about 18 per body and subtree column and 24 per
 * body and column: 21 n^2 for a chain (2,100 at N = 10), against n^3 for dpotrf + dpotri. Row k of
 * M^-1 is written as its column k (M^-1 is symmetric; both triangles are computed, each to its own
 * rounding). A pivot D_b that is not positive (M not positive definite: a joint without inertia)
 * returns 1 and the caller takes another path. */
#include <math.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/terms/rtree_num.h"

int model_rtree_minv_setup(const mbl_model *md, mbl_rtree_num *r, mbl_status *st)
{
    int nb = r->tree.nb, n = md->n;
    r->qlo = mbl_alloc_array((size_t)nb + 1, sizeof *r->qlo);
    r->qhi = mbl_alloc_array((size_t)nb + 1, sizeof *r->qhi);
    char *seen = mbl_calloc((size_t)n + 1, 1);
    if (!r->qlo || !r->qhi || !seen) {
        mbl_free(seen);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    int joints = 0, once = 1;
    for (int b = 0; b < nb; b++) {
        int q = r->qidx[b];
        r->qlo[b] = q >= 0 ? q : n, r->qhi[b] = q >= 0 ? q : -1;
        if (q >= 0) joints++, once &= !seen[q], seen[q] = 1;
    }
    mbl_free(seen);
    for (int b = nb - 1; b >= 0; b--) {
        int p = r->tree.b[b].parent;
        if (p < 0) continue;
        if (r->qlo[b] < r->qlo[p]) r->qlo[p] = r->qlo[b];
        if (r->qhi[b] > r->qhi[p]) r->qhi[p] = r->qhi[b];
    }
    /* no text row of the equations of motion reads an acceleration (the term's own entries are not
     * in md->jac yet) */
    int ja = model_blk0_inline(md, MBL_BLK_A), text_mass = 0;
    for (int p = 0; p < md->jac.nz && !text_mass; p++)
        text_mass = md->jac.row[p] < n && md->jac.col[p] >= ja && md->jac.col[p] < ja + n;
    r->mass_only = n > 0 && joints == n && once && !text_mass;
    /* preorder: every subtree's coordinates are the range from its joint's own on (its joints' count) */
    int *cnt = mbl_calloc((size_t)nb + 1, sizeof *cnt);
    if (!cnt) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int b = nb - 1; b >= 0; b--) {
        cnt[b] += r->qidx[b] >= 0;
        if (r->tree.b[b].parent >= 0) cnt[r->tree.b[b].parent] += cnt[b];
    }
    r->preorder = r->mass_only;
    for (int b = 0; b < nb && r->preorder; b++)
        r->preorder = cnt[b] == 0 || (r->qhi[b] - r->qlo[b] + 1 == cnt[b] && (r->qidx[b] < 0 || r->qidx[b] == r->qlo[b]));
    mbl_free(cnt);
    return 0;
}

size_t model_rtree_minv_work(const mbl_rtree_num *r)
{
    return 6 * (size_t)r->n * (size_t)r->tree.nb + 43 * (size_t)r->tree.nb + 1;
}

/* o = X s (X 6 x 6 by columns, both triangles): each o_i summed over k in increasing order, the six
 * rows in pairs of vector lanes */
static inline void m6v(const double *X, const double *s, double *o)
{
    double r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0;
    for (int k = 0; k < 6; k++) {
        const double *x = X + 6 * k, sk = s[k];
        r0 += x[0] * sk, r1 += x[1] * sk, r2 += x[2] * sk, r3 += x[3] * sk, r4 += x[4] * sk, r5 += x[5] * sk;
    }
    o[0] = r0, o[1] = r1, o[2] = r2, o[3] = r3, o[4] = r4, o[5] = r5;
}

/* The loops over the columns j below take two columns at a time (each column's operations the same
 * as one at a time, in pairs of vector lanes at -O2). */

/* the backward pass of body b (a joint with coordinate k): u into column k of Minv, its part
 * U u / D into the parent's F; 1 when its pivot is not positive */
static int backward_joint(const mbl_rtree_num *r, int b, const double *S, const double *IA, double *U, double *D,
                          const double *F, double *Fp, double *Minv)
{
    int n = r->n, k = r->qidx[b], lo = r->qlo[b], hi = r->qhi[b];
    m6v(IA, S, U);
    double d = S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5];
    if (!(d > 0) || !isfinite(d)) return 1;
    *D = d;
    const double *f0 = F, *f1 = F + n, *f2 = F + 2 * n, *f3 = F + 3 * n, *f4 = F + 4 * n, *f5 = F + 5 * n;
    const double s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5];
    double *mk = Minv + (size_t)k * n;
    for (int j = lo; j <= hi; j++)
        mk[j] = (j == k ? 1.0 : 0.0) - (s0 * f0[j] + s1 * f1[j] + s2 * f2[j] + s3 * f3[j] + s4 * f4[j] + s5 * f5[j]);
    if (!Fp) return 0;
    const double w0 = U[0] / d, w1 = U[1] / d, w2 = U[2] / d, w3 = U[3] / d, w4 = U[4] / d, w5 = U[5] / d;
    double *restrict g0 = Fp, *restrict g1 = Fp + n, *restrict g2 = Fp + 2 * n, *restrict g3 = Fp + 3 * n,
                     *restrict g4 = Fp + 4 * n, *restrict g5 = Fp + 5 * n;
    int j = lo;
    for (; j + 1 <= hi; j += 2) {
        double u0 = mk[j], u1 = mk[j + 1];
        g0[j] += f0[j] + w0 * u0, g0[j + 1] += f0[j + 1] + w0 * u1;
        g1[j] += f1[j] + w1 * u0, g1[j + 1] += f1[j + 1] + w1 * u1;
        g2[j] += f2[j] + w2 * u0, g2[j + 1] += f2[j + 1] + w2 * u1;
        g3[j] += f3[j] + w3 * u0, g3[j + 1] += f3[j + 1] + w3 * u1;
        g4[j] += f4[j] + w4 * u0, g4[j + 1] += f4[j + 1] + w4 * u1;
        g5[j] += f5[j] + w5 * u0, g5[j + 1] += f5[j + 1] + w5 * u1;
    }
    if (j <= hi) {
        double u0 = mk[j];
        g0[j] += f0[j] + w0 * u0, g1[j] += f1[j] + w1 * u0, g2[j] += f2[j] + w2 * u0;
        g3[j] += f3[j] + w3 * u0, g4[j] += f4[j] + w4 * u0, g5[j] += f5[j] + w5 * u0;
    }
    return 0;
}

/* the forward pass of one body over a range of columns: its parent's accelerations' rows p (NULL:
 * the ground's, zero), its own rows a, its axis s, U, D and column mk of Minv */
typedef struct fwd_body {
    const double *p[6];
    double *a[6], s[6], U[6], D, *mk;
} fwd_body;

/* columns j1 .. j2 - 1: M^-1(k, j) = (u_j - U . A_p(:, j)) / D with u_j = mk[j] (useu) or 0, into
 * mk[j]; A_b(:, j) = A_p(:, j) + S M^-1(k, j) */
static void fwd_range(const fwd_body *f, int j1, int j2, int useu)
{
    const double *p0 = f->p[0], *p1 = f->p[1], *p2 = f->p[2], *p3 = f->p[3], *p4 = f->p[4], *p5 = f->p[5];
    double *restrict a0 = f->a[0], *restrict a1 = f->a[1], *restrict a2 = f->a[2], *restrict a3 = f->a[3],
                     *restrict a4 = f->a[4], *restrict a5 = f->a[5], *restrict mk = f->mk;
    const double U0 = f->U[0], U1 = f->U[1], U2 = f->U[2], U3 = f->U[3], U4 = f->U[4], U5 = f->U[5], D = f->D;
    const double s0 = f->s[0], s1 = f->s[1], s2 = f->s[2], s3 = f->s[3], s4 = f->s[4], s5 = f->s[5];
    int j = j1;
    if (!p0) { /* the ground: A_p = 0 */
        for (; j < j2; j++) {
            double x = (useu ? mk[j] : 0.0) / D;
            mk[j] = x;
            a0[j] = s0 * x, a1[j] = s1 * x, a2[j] = s2 * x, a3[j] = s3 * x, a4[j] = s4 * x, a5[j] = s5 * x;
        }
        return;
    }
    for (; j + 1 < j2; j += 2) {
        double t0 = U0 * p0[j] + U1 * p1[j] + U2 * p2[j] + U3 * p3[j] + U4 * p4[j] + U5 * p5[j];
        double t1 = U0 * p0[j + 1] + U1 * p1[j + 1] + U2 * p2[j + 1] + U3 * p3[j + 1] + U4 * p4[j + 1] + U5 * p5[j + 1];
        double x0 = ((useu ? mk[j] : 0.0) - t0) / D, x1 = ((useu ? mk[j + 1] : 0.0) - t1) / D;
        mk[j] = x0, mk[j + 1] = x1;
        a0[j] = p0[j] + s0 * x0, a0[j + 1] = p0[j + 1] + s0 * x1;
        a1[j] = p1[j] + s1 * x0, a1[j + 1] = p1[j + 1] + s1 * x1;
        a2[j] = p2[j] + s2 * x0, a2[j + 1] = p2[j + 1] + s2 * x1;
        a3[j] = p3[j] + s3 * x0, a3[j + 1] = p3[j + 1] + s3 * x1;
        a4[j] = p4[j] + s4 * x0, a4[j + 1] = p4[j + 1] + s4 * x1;
        a5[j] = p5[j] + s5 * x0, a5[j + 1] = p5[j + 1] + s5 * x1;
    }
    if (j < j2) {
        double t0 = U0 * p0[j] + U1 * p1[j] + U2 * p2[j] + U3 * p3[j] + U4 * p4[j] + U5 * p5[j];
        double x0 = ((useu ? mk[j] : 0.0) - t0) / D;
        mk[j] = x0;
        a0[j] = p0[j] + s0 * x0, a1[j] = p1[j] + s1 * x0, a2[j] = p2[j] + s2 * x0;
        a3[j] = p3[j] + s3 * x0, a4[j] = p4[j] + s4 * x0, a5[j] = p5[j] + s5 * x0;
    }
}

/* the forward pass of body b (a joint with coordinate k) over the columns j0 .. n - 1: column k of
 * Minv from u (there in b's subtree's columns) and the parent's accelerations Ap (NULL: the
 * ground's, zero); A_b into Ab */
static void forward_joint(const mbl_rtree_num *r, int b, int j0, const double *S, const double *U, double D,
                          const double *Ap, double *Ab, double *Minv)
{
    int n = r->n, lo = r->qlo[b], hi = r->qhi[b];
    fwd_body f;
    for (int i = 0; i < 6; i++)
        f.p[i] = Ap ? Ap + (size_t)i * n : NULL, f.a[i] = Ab + (size_t)i * n, f.s[i] = S[i], f.U[i] = U[i];
    f.D = D, f.mk = Minv + (size_t)r->qidx[b] * n;
    int l = lo > j0 ? lo : j0;
    if (j0 < l) fwd_range(&f, j0, l < n ? l : n, 0);
    if (l <= hi) fwd_range(&f, l, hi + 1, 1);
    int h = hi + 1 > j0 ? hi + 1 : j0;
    if (h < n) fwd_range(&f, h, n, 0);
}

int model_rtree_minv(const mbl_rtree_num *r, const double *N, double *Minv, double *mwork)
{
    int nb = r->tree.nb, n = r->n;
    size_t sn = 6 * (size_t)n;
    double *F = mwork, *IA = F + sn * (size_t)nb, *U = IA + 36 * (size_t)nb, *D = U + 6 * (size_t)nb;
    for (int b = 0; b < nb; b++) {
        memcpy(IA + 36 * (size_t)b, N + (size_t)b * NB_SIZE + NB_I, 36 * sizeof *IA);
        int lo = r->qlo[b], hi = r->qhi[b];
        for (int i = 0; i < 6 && lo <= hi; i++) memset(F + sn * b + (size_t)i * n + lo, 0, (size_t)(hi - lo + 1) * sizeof *F);
    }
    for (int b = nb - 1; b >= 0; b--) {
        int p = r->tree.b[b].parent, lo = r->qlo[b], hi = r->qhi[b];
        double *Fb = F + sn * b, *Fp = p >= 0 ? F + sn * p : NULL, *ia = IA + 36 * (size_t)b;
        const double *S = N + (size_t)b * NB_SIZE + NB_S;
        if (r->qidx[b] >= 0) {
            double *Ub = U + 6 * (size_t)b;
            if (backward_joint(r, b, S, ia, Ub, D + b, Fb, Fp, Minv)) return 1;
            if (p < 0) continue;
            /* IA_p += IA_b - U U^T / D: each entry's product U_i U_j the same both sides of the
             * diagonal (IA stays symmetric bit for bit) */
            double invd = 1.0 / D[b], *iap = IA + 36 * (size_t)p;
            for (int j = 0; j < 6; j++) {
                double *x = iap + 6 * j, uj = Ub[j];
                const double *y = ia + 6 * j;
                for (int i = 0; i < 6; i += 2)
                    x[i] += y[i] - Ub[i] * uj * invd, x[i + 1] += y[i + 1] - Ub[i + 1] * uj * invd;
            }
        } else if (p >= 0) {
            double *iap = IA + 36 * (size_t)p;
            for (int e = 0; e < 36; e += 2) iap[e] += ia[e], iap[e + 1] += ia[e + 1];
            for (int i = 0; i < 6 && lo <= hi; i++) {
                double *g = Fp + (size_t)i * n;
                const double *f = Fb + (size_t)i * n;
                for (int j = lo; j <= hi; j++) g[j] += f[j];
            }
        }
    }
    /* forward: A_b in F_b's place; a fixed body's A is that of its nearest ancestor with a joint
     * (rigidly attached: the same spatial acceleration in global axes) */
    for (int b = 0; b < nb; b++) {
        if (r->qidx[b] < 0) continue;
        int a = r->tree.b[b].parent;
        while (a >= 0 && r->qidx[a] < 0) a = r->tree.b[a].parent;
        /* with the coordinates in preorder, only the columns from b's own on (the rest by symmetry) */
        forward_joint(r, b, r->preorder ? r->qidx[b] : 0, N + (size_t)b * NB_SIZE + NB_S, U + 6 * (size_t)b, D[b],
                      a >= 0 ? F + sn * a : NULL, F + sn * b, Minv);
    }
    for (int k = 0; k < n && r->preorder; k++) /* row k's columns past k from column k's rows */
        for (int j = k + 1; j < n; j++) Minv[k + (size_t)j * n] = Minv[j + (size_t)k * n];
    return 0;
}

int model_rtree_num_mass_only(const mbl_rtree_num *r) { return r && r->mass_only; }

size_t model_rtree_num_mass_work(const mbl_rtree_num *r) { return model_rtree_minv_work(r); }

int model_rtree_num_minv(const mbl_rtree_num *r, const double *syms, double *jac, double *y, double *minv,
                         double *mwork, double *work, mbl_status *st)
{
    double *tv = work, *N;
    int rc;
    if (r->iny) { /* the texts from the outputs' shared tape, as model_rtree_num_jac_y reads them */
        N = work + r->nin + r->ny + r->iny_work;
        rc = mblx_tape_eval(r->iny, syms, tv, tv + r->nin + r->ny, st);
        if (!rc && y) memcpy(y, tv + r->nin, r->ny * sizeof *y);
    } else {
        N = work + r->nin + r->in_work;
        rc = mblx_tape_eval(r->in, syms, tv, tv + r->nin, st);
    }
    if (rc) return rc;
    model_rtree_nrnea_tv(r, syms, tv, N, jac != NULL);
    if (jac) model_rtree_jac_entries(r, N, jac);
    return model_rtree_minv(r, N, minv, mwork);
}
