/* The inverse of a tree's mass matrix by its articulated bodies (rtree_num.h; issue 69).
 *
 * M^-1 is not taken from M: along a chain M's condition grows like N^4 (a 100-link chain: about
 * 1e8), and M's entries, sums over subtrees, already carry errors of eps |M| that any
 * factorization of M turns into errors of cond(M) eps in M^-1 (the dense path's 2.6e-10 in A at
 * N = 100). The articulated-body recursion (Featherstone 2008, ch. 7; the inverse as in Carpentier
 * and Mansard 2018's computeMinverse) works from the bodies' spatial inertias I_b and joint axes S_b
 * instead, where nothing is ill-conditioned but the physics. Axes are global, and each body's
 * vectors are about its own point O_b (a point of its joint's axis; a body without a joint: its
 * origin): about one global origin a body 20 m down a chain has inertia entries m r^2 = 400 beside
 * its own 1e-3 and the sums lose five digits (4.4e-12 in B at N = 100 against 1.2e-13 here).
 * Moving a vector between neighbours is a translation by d = O_b - O_p (n_p = n_b + d x f for a
 * force, v_b = v_p + w x d for a motion, X_p = T^T X_b T for an inertia).
 *
 * Backward, leaves first, for every body b with parent p (the columns j are the coordinates):
 *   IA_b = I_b + sum over b's children c of T_c^T (IA_c - U_c U_c^T / D_c) T_c, U_b = IA_b S_b,
 *   D_b = S_b . U_b, u_b(j) = [j = k] - S_b . F_b(:, j)    (k the coordinate of b's joint),
 *   F_p(:, j) += T^T (F_b(:, j) + U_b u_b(j) / D_b)   (F_b: the subtree's bias forces, zero outside
 *   its columns);
 * a body with a fixed joint passes IA_b and F_b to its parent whole. Forward, root first:
 *   A'_b = T A_a (a: the nearest ancestor with a joint; 0 at the ground),
 *   M^-1(k, j) = (u_b(j) - U_b . A'_b(:, j)) / D_b, A_b(:, j) = A'_b(:, j) + S_b M^-1(k, j):
 * column j is the articulated-body algorithm's solution of M x = e_j without velocities or gravity,
 * for all j at once. F_b is nonzero only in the columns of b's subtree (qlo_b .. qhi_b); A_b takes
 * F_b's place once the backward pass is done. Flops: about 24 per body and subtree column and 30
 * per body and column (half the columns when the coordinates are in preorder, the rest by
 * symmetry). Row k of M^-1 is written as its column k. A pivot D_b that is not positive (M not
 * positive definite: a joint without inertia) returns 1 and the caller takes another path. */
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
    return 6 * (size_t)r->n * (size_t)r->tree.nb + 52 * (size_t)r->tree.nb + 1;
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

/* The loops over the columns j below take two columns at a time as the two lanes of a vector of
 * GCC's vector extension (SSE2: one instruction for both), then the last column alone: each
 * lane's operations are the same, in the same order and rounded the same, as one column's alone.
 * (GCC at -O2 vectorizes no loop whose trip count it does not know to be a multiple of two.) */
typedef double v2d __attribute__((vector_size(2 * sizeof(double)), aligned(sizeof(double)), may_alias));
#define V2(p, j) (*(v2d *)((p) + (j)))
#define S2(x) ((v2d){(x), (x)})

/* the backward pass of body b (a joint with coordinate k): u into column k of Minv, its part
 * (F_b + U u / D, moved by d to the parent's point) into the parent's F; 1 when its pivot is not
 * positive */
static int backward_joint(const mbl_rtree_num *r, int b, const double *S, const double *IA, const double *dv, double *U,
                          double *D, const double *F, double *Fp, double *Minv)
{
    int n = r->n, k = r->qidx[b], lo = r->qlo[b], hi = r->qhi[b];
    m6v(IA, S, U);
    double d = S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5];
    if (!(d > 0) || !isfinite(d)) return 1;
    *D = d;
    const double *f0 = F, *f1 = F + n, *f2 = F + 2 * n, *f3 = F + 3 * n, *f4 = F + 4 * n, *f5 = F + 5 * n;
    const double s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5];
    double *mk = Minv + (size_t)k * n;
    int j = lo;
    for (; j < hi; j += 2)
        V2(mk, j) = (v2d){j == k ? 1.0 : 0.0, j + 1 == k ? 1.0 : 0.0} -
                    (S2(s0) * V2(f0, j) + S2(s1) * V2(f1, j) + S2(s2) * V2(f2, j) + S2(s3) * V2(f3, j) +
                     S2(s4) * V2(f4, j) + S2(s5) * V2(f5, j));
    if (j == hi)
        mk[j] = (j == k ? 1.0 : 0.0) - (s0 * f0[j] + s1 * f1[j] + s2 * f2[j] + s3 * f3[j] + s4 * f4[j] + s5 * f5[j]);
    if (!Fp) return 0;
    const double w0 = U[0] / d, w1 = U[1] / d, w2 = U[2] / d, w3 = U[3] / d, w4 = U[4] / d, w5 = U[5] / d;
    const double d0 = dv[0], d1 = dv[1], d2 = dv[2];
    double *restrict g0 = Fp, *restrict g1 = Fp + n, *restrict g2 = Fp + 2 * n, *restrict g3 = Fp + 3 * n,
                     *restrict g4 = Fp + 4 * n, *restrict g5 = Fp + 5 * n;
    for (j = lo; j < hi; j += 2) {
        v2d u = V2(mk, j), y3 = V2(f3, j) + S2(w3) * u, y4 = V2(f4, j) + S2(w4) * u, y5 = V2(f5, j) + S2(w5) * u;
        V2(g0, j) += (V2(f0, j) + S2(w0) * u) + (S2(d1) * y5 - S2(d2) * y4);
        V2(g1, j) += (V2(f1, j) + S2(w1) * u) + (S2(d2) * y3 - S2(d0) * y5);
        V2(g2, j) += (V2(f2, j) + S2(w2) * u) + (S2(d0) * y4 - S2(d1) * y3);
        V2(g3, j) += y3, V2(g4, j) += y4, V2(g5, j) += y5;
    }
    if (j == hi) {
        double u = mk[j], y3 = f3[j] + w3 * u, y4 = f4[j] + w4 * u, y5 = f5[j] + w5 * u;
        g0[j] += (f0[j] + w0 * u) + (d1 * y5 - d2 * y4);
        g1[j] += (f1[j] + w1 * u) + (d2 * y3 - d0 * y5);
        g2[j] += (f2[j] + w2 * u) + (d0 * y4 - d1 * y3);
        g3[j] += y3, g4[j] += y4, g5[j] += y5;
    }
    return 0;
}

/* the forward pass of one body over a range of columns: the accelerations' rows p of its nearest
 * ancestor with a joint (NULL: the ground's, zero) about that ancestor's point, d its own point less
 * that one, its own rows a, its axis s, U, D and column mk of Minv */
typedef struct fwd_body {
    const double *p[6];
    double *a[6], s[6], U[6], d[3], D, *mk;
} fwd_body;

/* columns j1 .. j2 - 1: A'(:, j) = A_p(:, j) moved to the body's point, M^-1(k, j) = (u_j - U .
 * A'(:, j)) / D with u_j = mk[j] (useu) or 0, into mk[j]; A_b(:, j) = A'(:, j) + S M^-1(k, j) */
static void fwd_range(const fwd_body *f, int j1, int j2, int useu)
{
    const double *p0 = f->p[0], *p1 = f->p[1], *p2 = f->p[2], *p3 = f->p[3], *p4 = f->p[4], *p5 = f->p[5];
    double *restrict a0 = f->a[0], *restrict a1 = f->a[1], *restrict a2 = f->a[2], *restrict a3 = f->a[3],
                     *restrict a4 = f->a[4], *restrict a5 = f->a[5], *restrict mk = f->mk;
    const double U0 = f->U[0], U1 = f->U[1], U2 = f->U[2], U3 = f->U[3], U4 = f->U[4], U5 = f->U[5], D = f->D;
    const double s0 = f->s[0], s1 = f->s[1], s2 = f->s[2], s3 = f->s[3], s4 = f->s[4], s5 = f->s[5];
    const double d0 = f->d[0], d1 = f->d[1], d2 = f->d[2];
    int j = j1;
    if (!p0) { /* the ground: A_p = 0 */
        for (; j + 1 < j2; j += 2) {
            v2d x = (useu ? V2(mk, j) : S2(0.0)) / S2(D);
            V2(mk, j) = x;
            V2(a0, j) = S2(s0) * x, V2(a1, j) = S2(s1) * x, V2(a2, j) = S2(s2) * x;
            V2(a3, j) = S2(s3) * x, V2(a4, j) = S2(s4) * x, V2(a5, j) = S2(s5) * x;
        }
        if (j < j2) {
            double x = (useu ? mk[j] : 0.0) / D;
            mk[j] = x;
            a0[j] = s0 * x, a1[j] = s1 * x, a2[j] = s2 * x, a3[j] = s3 * x, a4[j] = s4 * x, a5[j] = s5 * x;
        }
        return;
    }
    for (; j + 1 < j2; j += 2) {
        v2d w0 = V2(p0, j), w1 = V2(p1, j), w2 = V2(p2, j);
        v2d v0 = V2(p3, j) + (w1 * S2(d2) - w2 * S2(d1)), v1 = V2(p4, j) + (w2 * S2(d0) - w0 * S2(d2));
        v2d v2 = V2(p5, j) + (w0 * S2(d1) - w1 * S2(d0));
        v2d t = S2(U0) * w0 + S2(U1) * w1 + S2(U2) * w2 + S2(U3) * v0 + S2(U4) * v1 + S2(U5) * v2;
        v2d x = ((useu ? V2(mk, j) : S2(0.0)) - t) / S2(D);
        V2(mk, j) = x;
        V2(a0, j) = w0 + S2(s0) * x, V2(a1, j) = w1 + S2(s1) * x, V2(a2, j) = w2 + S2(s2) * x;
        V2(a3, j) = v0 + S2(s3) * x, V2(a4, j) = v1 + S2(s4) * x, V2(a5, j) = v2 + S2(s5) * x;
    }
    if (j < j2) {
        double w0 = p0[j], w1 = p1[j], w2 = p2[j];
        double v0 = p3[j] + (w1 * d2 - w2 * d1), v1 = p4[j] + (w2 * d0 - w0 * d2), v2 = p5[j] + (w0 * d1 - w1 * d0);
        double t = U0 * w0 + U1 * w1 + U2 * w2 + U3 * v0 + U4 * v1 + U5 * v2;
        double x = ((useu ? mk[j] : 0.0) - t) / D;
        mk[j] = x;
        a0[j] = w0 + s0 * x, a1[j] = w1 + s1 * x, a2[j] = w2 + s2 * x;
        a3[j] = v0 + s3 * x, a4[j] = v1 + s4 * x, a5[j] = v2 + s5 * x;
    }
}

/* the forward pass of body b (a joint with coordinate k) over the columns j0 .. n - 1: column k of
 * Minv from u (there in b's subtree's columns) and the accelerations Ap of its nearest ancestor with a
 * joint (NULL: the ground's, zero), d its point less that ancestor's; A_b into Ab */
static void forward_joint(const mbl_rtree_num *r, int b, int j0, const double *S, const double *U, double D,
                          const double *Ap, const double *d, double *Ab, double *Minv)
{
    int n = r->n, lo = r->qlo[b], hi = r->qhi[b];
    fwd_body f;
    for (int i = 0; i < 6; i++)
        f.p[i] = Ap ? Ap + (size_t)i * n : NULL, f.a[i] = Ab + (size_t)i * n, f.s[i] = S[i], f.U[i] = U[i];
    for (int i = 0; i < 3; i++) f.d[i] = d[i];
    f.D = D, f.mk = Minv + (size_t)r->qidx[b] * n;
    int l = lo > j0 ? lo : j0;
    if (j0 < l) fwd_range(&f, j0, l < n ? l : n, 0);
    if (l <= hi) fwd_range(&f, l, hi + 1, 1);
    int h = hi + 1 > j0 ? hi + 1 : j0;
    if (h < n) fwd_range(&f, h, n, 0);
}

/* A body's point (its joint's point on the axis, or its origin without a joint: O), its joint axis
 * S and its spatial inertia I about it (by columns) from its texts tb: the same quantities as the
 * term's about the global origin, without the m r^2 of a body far from it */
static void body_local(int kind, const double *tb, double *O, double *S, double *I6)
{
    const double *o = model_rtree_point(kind, tb), *u = tb + MBL_RTREE_U;
    for (int k = 0; k < 3; k++) O[k] = o[k];
    for (int k = 0; k < 6; k++) S[k] = 0.0;
    if (kind == MBL_RTREE_REV) {
        for (int k = 0; k < 3; k++) S[k] = u[k]; /* about a point on the axis: [u; 0] */
    } else if (kind == MBL_RTREE_PRI) {
        for (int k = 0; k < 3; k++) S[3 + k] = u[k];
    }
    model_rtree_inertia(tb, O, I6);
}

int model_rtree_minv(const mbl_rtree_num *r, const double *tv, const double *N, double *Minv, double *mwork)
{
    int nb = r->tree.nb, n = r->n;
    size_t sn = 6 * (size_t)n;
    double *F = mwork, *IA = F + sn * (size_t)nb, *U = IA + 36 * (size_t)nb, *D = U + 6 * (size_t)nb;
    double *O = D + nb, *S = O + 3 * (size_t)nb;
    for (int b = 0; b < nb; b++) {
        if (N) { /* the full pass's own: the same functions of the same texts */
            const double *nbd = N + (size_t)b * NB_SIZE;
            memcpy(O + 3 * (size_t)b, nbd + NB_O, 3 * sizeof *O);
            memcpy(S + 6 * (size_t)b, nbd + NB_S, 6 * sizeof *S);
            memcpy(IA + 36 * (size_t)b, nbd + NB_I, 36 * sizeof *IA);
        } else {
            body_local(r->tree.b[b].kind, tv + (size_t)b * NTV, O + 3 * (size_t)b, S + 6 * (size_t)b,
                       IA + 36 * (size_t)b);
        }
        int lo = r->qlo[b], hi = r->qhi[b];
        for (int i = 0; i < 6 && lo <= hi; i++) memset(F + sn * b + (size_t)i * n + lo, 0, (size_t)(hi - lo + 1) * sizeof *F);
    }
    for (int b = nb - 1; b >= 0; b--) {
        int p = r->tree.b[b].parent, lo = r->qlo[b], hi = r->qhi[b];
        double *Fb = F + sn * b, *Fp = p >= 0 ? F + sn * p : NULL, *ia = IA + 36 * (size_t)b, X[36], Y[36], dv[3] = {0, 0, 0};
        for (int k = 0; k < 3 && p >= 0; k++) dv[k] = O[3 * (size_t)b + k] - O[3 * (size_t)p + k];
        if (r->qidx[b] >= 0) {
            double *Ub = U + 6 * (size_t)b;
            if (backward_joint(r, b, S + 6 * (size_t)b, ia, dv, Ub, D + b, Fb, Fp, Minv)) return 1;
            if (p < 0) continue;
            /* IA_b - U U^T / D, its lower triangle mirrored (symmetric bit for bit) */
            double invd = 1.0 / D[b], w[6];
            for (int i = 0; i < 6; i++) w[i] = Ub[i] * invd;
            for (int j = 0; j < 6; j++)
                for (int i = j; i < 6; i++) X[i + 6 * j] = X[j + 6 * i] = ia[i + 6 * j] - Ub[i] * w[j];
        } else if (p >= 0) {
            memcpy(X, ia, sizeof X);
            for (int j = lo; j <= hi; j++) { /* F_b moved to the parent's point */
                double y3 = Fb[3 * (size_t)n + j], y4 = Fb[4 * (size_t)n + j], y5 = Fb[5 * (size_t)n + j];
                Fp[j] += Fb[j] + (dv[1] * y5 - dv[2] * y4);
                Fp[n + j] += Fb[n + j] + (dv[2] * y3 - dv[0] * y5);
                Fp[2 * (size_t)n + j] += Fb[2 * (size_t)n + j] + (dv[0] * y4 - dv[1] * y3);
                Fp[3 * (size_t)n + j] += y3, Fp[4 * (size_t)n + j] += y4, Fp[5 * (size_t)n + j] += y5;
            }
        } else {
            continue;
        }
        model_rtree_shift6(X, dv, Y);
        double *iap = IA + 36 * (size_t)p;
        for (int e = 0; e < 36; e++) iap[e] += Y[e];
    }
    /* forward: A_b in F_b's place, about b's point; a fixed body's children read its nearest
     * ancestor with a joint (rigidly attached: its acceleration moved to their points) */
    for (int b = 0; b < nb; b++) {
        if (r->qidx[b] < 0) continue;
        int a = r->tree.b[b].parent;
        while (a >= 0 && r->qidx[a] < 0) a = r->tree.b[a].parent;
        double d[3] = {0, 0, 0};
        for (int k = 0; k < 3 && a >= 0; k++) d[k] = O[3 * (size_t)b + k] - O[3 * (size_t)a + k];
        /* with the coordinates in preorder, only the columns from b's own on (the rest by symmetry) */
        forward_joint(r, b, r->preorder ? r->qidx[b] : 0, S + 6 * (size_t)b, U + 6 * (size_t)b, D[b],
                      a >= 0 ? F + sn * a : NULL, d, F + sn * b, Minv);
    }
    for (int k = 0; k < n && r->preorder; k++) /* row k's columns past k from column k's rows */
        for (int j = k + 1; j < n; j++) Minv[k + (size_t)j * n] = Minv[j + (size_t)k * n];
    return 0;
}

int model_rtree_num_mass_only(const mbl_rtree_num *r) { return r && r->mass_only; }

int model_rtree_num_dense_ok(const mbl_rtree_num *r) { return r && r->mass_only && r->dpos; }

size_t model_rtree_num_mass_work(const mbl_rtree_num *r) { return model_rtree_minv_work(r); }

int model_rtree_num_minv(const mbl_rtree_num *r, const double *syms, double *jac, double *y, double *minv,
                         double *mwork, double *work, int dense, mbl_status *st)
{
    double *tv = work, *N;
    int rc;
    if (r->iny) { /* the texts from the outputs' shared tape, as model_rtree_num_jac_y reads them */
        N = work + r->nin + r->ny + r->iny_work;
        rc = model_rtree_num_texts_y(r, syms, y, work, st);
    } else {
        N = work + r->nin + r->in_work;
        rc = model_rtree_num_texts(r, syms, tv, tv + r->nin, st);
    }
    if (rc) return rc;
    if (!jac) return model_rtree_minv(r, tv, NULL, minv, mwork); /* M^-1 reads the texts alone */
    /* the Jacobian's passes; M^-1 reads their bodies' points, axes and inertias (which
     * model_rtree_jac_entries leaves as they are) */
    model_rtree_nrnea_tv(r, syms, tv, N, 1);
    if (dense) model_rtree_jac_dense(r, N, jac);
    else model_rtree_jac_entries(r, N, jac);
    return model_rtree_minv(r, tv, N, minv, mwork);
}
