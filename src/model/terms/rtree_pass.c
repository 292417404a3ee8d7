/* The structured tree term's numeric passes (rtree.h, rtree_num.h): the spatial algebra on
 * numbers (the same operations as rtree.c's node builders), the forward and backward passes of
 * recursive Newton-Euler from the texts' values into the bodies' vectors, the residual rows and the
 * Jacobian's entries (the closed forms of rtree.c's head comment: one or two dot products of the
 * bodies' vectors per entry). The articulated bodies' M^-1 is rtree_minv.c's. */
#include <string.h>

#include "core/vec3.h"
#include "model/rtree.h"
#include "model/terms/rtree_num.h"

/* ---- numeric spatial algebra (the same operations as the node builders above) ---- */

static inline void ncrm(const double *a, const double *b, double *o)
{
    double w[3], v1[3], v2[3];
    vec3_cross(a, b, w);
    vec3_cross(a, b + 3, v1);
    vec3_cross(a + 3, b, v2);
    for (int k = 0; k < 3; k++) o[k] = w[k], o[3 + k] = v1[k] + v2[k];
}

static inline void ncrf(const double *a, const double *f, double *o)
{
    double n1[3], n2[3], fo[3];
    vec3_cross(a, f, n1);
    vec3_cross(a + 3, f + 3, n2);
    vec3_cross(a, f + 3, fo);
    for (int k = 0; k < 3; k++) o[k] = n1[k] + n2[k], o[3 + k] = fo[k];
}

/* o = M x, M stored by columns (column k at M + 6 k, the spatial matrices below): each o_i summed
 * over k in increasing order from 0, as a row-by-row product; written out so that the six rows run
 * in pairs of vector lanes (the same operations in each lane) */
#define NM6V_COL(k)                                                                                                    \
    do {                                                                                                               \
        const double *m_ = M + 6 * (k), x_ = x[k];                                                                     \
        r0 += m_[0] * x_, r1 += m_[1] * x_, r2 += m_[2] * x_, r3 += m_[3] * x_, r4 += m_[4] * x_, r5 += m_[5] * x_;   \
    } while (0)
static inline void nm6v(const double *M, const double *x, double *o)
{
    double r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0;
    NM6V_COL(0);
    NM6V_COL(1);
    NM6V_COL(2);
    NM6V_COL(3);
    NM6V_COL(4);
    NM6V_COL(5);
    o[0] = r0, o[1] = r1, o[2] = r2, o[3] = r3, o[4] = r4, o[5] = r5;
}
#undef NM6V_COL

/* a += b (n entries, n even; a and b do not overlap): two at a time, in vector lanes */
static inline void nadd(double *restrict a, const double *restrict b, int n)
{
    for (int k = 0; k < n; k += 2) a[k] += b[k], a[k + 1] += b[k + 1];
}

static inline double ndot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* the spatial inertia, stored by columns (I6[i + 6 j] = I_ij): the rotated inertia A J A^T (rows
 * x_i of A J, J symmetric), the centre of mass c about o, m c, and
 *   I6 = [A J A^T - (m c) c^T + m |c|^2 1, m [c]x; (m [c]x)^T, m 1]
 * entry by entry, each the same products and sums in the same order as a loop over i, j would make
 * (the upper left block's (i, j) reads (A J A^T)_ij of the upper triangle and (m c)_i c_j) */
void model_rtree_inertia(const double *t, const double *o, double *I6)
{
    const double *A = t + MBL_RTREE_A, *r = t + MBL_RTREE_R, *cm = t + MBL_RTREE_CM, *Jv = t + MBL_RTREE_I;
    const double *a0 = A, *a1 = A + 3, *a2 = A + 6;
    const double m = t[MBL_RTREE_M];
    const double J[9] = {Jv[0], Jv[3], Jv[4], Jv[3], Jv[1], Jv[5], Jv[4], Jv[5], Jv[2]}; /* rows = columns */
    const double x0[3] = {vec3_dot(a0, J), vec3_dot(a0, J + 3), vec3_dot(a0, J + 6)};
    const double x1[3] = {vec3_dot(a1, J), vec3_dot(a1, J + 3), vec3_dot(a1, J + 6)};
    const double x2[3] = {vec3_dot(a2, J), vec3_dot(a2, J + 3), vec3_dot(a2, J + 6)};
    const double b00 = vec3_dot(x0, a0), b01 = vec3_dot(x0, a1), b02 = vec3_dot(x0, a2);
    const double b11 = vec3_dot(x1, a1), b12 = vec3_dot(x1, a2), b22 = vec3_dot(x2, a2);
    const double cw[3] = {(o ? r[0] - o[0] : r[0]) + vec3_dot(a0, cm), (o ? r[1] - o[1] : r[1]) + vec3_dot(a1, cm),
                          (o ? r[2] - o[2] : r[2]) + vec3_dot(a2, cm)};
    const double mc[3] = {m * cw[0], m * cw[1], m * cw[2]};
    const double c2 = vec3_dot(mc, cw);
    double *c0 = I6, *c1 = I6 + 6, *c2p = I6 + 12, *c3 = I6 + 18, *c4 = I6 + 24, *c5 = I6 + 30;
    c0[0] = (b00 - mc[0] * cw[0]) + c2, c0[1] = b01 - mc[1] * cw[0], c0[2] = b02 - mc[2] * cw[0];
    c0[3] = 0.0, c0[4] = -mc[2], c0[5] = mc[1];
    c1[0] = b01 - mc[0] * cw[1], c1[1] = (b11 - mc[1] * cw[1]) + c2, c1[2] = b12 - mc[2] * cw[1];
    c1[3] = mc[2], c1[4] = 0.0, c1[5] = -mc[0];
    c2p[0] = b02 - mc[0] * cw[2], c2p[1] = b12 - mc[1] * cw[2], c2p[2] = (b22 - mc[2] * cw[2]) + c2;
    c2p[3] = -mc[1], c2p[4] = mc[0], c2p[5] = 0.0;
    c3[0] = 0.0, c3[1] = mc[2], c3[2] = -mc[1], c3[3] = m, c3[4] = 0.0, c3[5] = 0.0;
    c4[0] = -mc[2], c4[1] = 0.0, c4[2] = mc[0], c4[3] = 0.0, c4[4] = m, c4[5] = 0.0;
    c5[0] = mc[1], c5[1] = -mc[0], c5[2] = 0.0, c5[3] = 0.0, c5[4] = 0.0, c5[5] = m;
}

/* o = sum over the columns k_t of I6 (stored by columns) times x_t (t < nt = 2 or 4), each entry
 * summed in increasing t from 0 (six lanes, as nm6v) */
static inline void ncols(const double *I6, int nt, int k0, double x0, int k1, double x1, int k2, double x2, int k3,
                         double x3, double *o)
{
    const double *m0 = I6 + 6 * k0, *m1 = I6 + 6 * k1;
    double r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0;
    r0 += m0[0] * x0, r1 += m0[1] * x0, r2 += m0[2] * x0, r3 += m0[3] * x0, r4 += m0[4] * x0, r5 += m0[5] * x0;
    r0 += m1[0] * x1, r1 += m1[1] * x1, r2 += m1[2] * x1, r3 += m1[3] * x1, r4 += m1[4] * x1, r5 += m1[5] * x1;
    if (nt == 4) {
        const double *m2 = I6 + 6 * k2, *m3 = I6 + 6 * k3;
        r0 += m2[0] * x2, r1 += m2[1] * x2, r2 += m2[2] * x2, r3 += m2[3] * x2, r4 += m2[4] * x2, r5 += m2[5] * x2;
        r0 += m3[0] * x3, r1 += m3[1] * x3, r2 += m3[2] * x3, r3 += m3[3] * x3, r4 += m3[4] * x3, r5 += m3[5] * x3;
    }
    o[0] = r0, o[1] = r1, o[2] = r2, o[3] = r3, o[4] = r4, o[5] = r5;
}

static void nbmat(const double *v, const double *I6, double *B)
{
    /* M = I (v x): column e is I times v x e_e (ncrm(v, e_e)), whose only entries that are not
     * zero in structure are entries of v or their negatives, at most 4, in increasing row order
     * (w x e_e above and l x e_e below for e < 3, w x e_(e-3) below for e >= 3; v = (w, l)); ncrm
     * forms them exactly (a product by 1 less a product by 0), and a zero term adds nothing to a
     * sum, so the sums are those of I6 times the whole column. */
    const double w0 = v[0], w1 = v[1], w2 = v[2], l0 = v[3], l1 = v[4], l2 = v[5];
    double M[36]; /* by columns */
    ncols(I6, 4, 1, w2, 2, -w1, 4, l2, 5, -l1, M);
    ncols(I6, 4, 0, -w2, 2, w0, 3, -l2, 5, l0, M + 6);
    ncols(I6, 4, 0, w1, 1, -w0, 3, l1, 4, -l0, M + 12);
    ncols(I6, 2, 4, w2, 5, -w1, 0, 0, 0, 0, M + 18);
    ncols(I6, 2, 3, -w2, 5, w0, 0, 0, 0, 0, M + 24);
    ncols(I6, 2, 3, w1, 4, -w0, 0, 0, 0, 0, M + 30);
    for (int i = 0; i < 6; i++)
        for (int j = i; j < 6; j++) B[6 * i + j] = B[6 * j + i] = -(M[i + 6 * j] + M[j + 6 * i]);
}

/* X' = T^T X T (6 x 6 by columns), X's about a body's point moved to a point d behind it (d = the
 * body's point less the other's): T = [1 0; -[d]x 1] takes a motion about the other point to one
 * about the body's (v_b = v_o + w x d), T^T a force about the body's point to one about the other's
 * (n_o = n_b + d x f); for any X that maps motions to forces (an inertia, the sums B) */
void model_rtree_shift6(const double *X, const double *d, double *out)
{
    double Y[36];
    /* Y = X T: columns 0-2 are X's less X[:, 3:6] [d]x's, columns 3-5 are X's */
    for (int i = 0; i < 6; i++) {
        double x3 = X[i + 18], x4 = X[i + 24], x5 = X[i + 30];
        /* (X[:, 3:6] [d]x)[:, k]: [d]x = [0 -d2 d1; d2 0 -d0; -d1 d0 0] */
        Y[i] = X[i] - (x4 * d[2] - x5 * d[1]);
        Y[i + 6] = X[i + 6] - (x5 * d[0] - x3 * d[2]);
        Y[i + 12] = X[i + 12] - (x3 * d[1] - x4 * d[0]);
        Y[i + 18] = x3, Y[i + 24] = x4, Y[i + 30] = x5;
    }
    /* out = T^T Y: rows 0-2 are Y's plus [d]x Y[3:6, :], rows 3-5 are Y's */
    for (int j = 0; j < 6; j++) {
        const double *y = Y + 6 * j;
        double *o = out + 6 * j;
        o[0] = y[0] + (d[1] * y[5] - d[2] * y[4]);
        o[1] = y[1] + (d[2] * y[3] - d[0] * y[5]);
        o[2] = y[2] + (d[0] * y[4] - d[1] * y[3]);
        o[3] = y[3], o[4] = y[4], o[5] = y[5];
    }
}

/* a motion m about one point, o about a point d from it: o = [w; v + w x d] */
static inline void nshift_m(const double *m, const double *d, double *o)
{
    o[0] = m[0], o[1] = m[1], o[2] = m[2];
    o[3] = m[3] + (m[1] * d[2] - m[2] * d[1]);
    o[4] = m[4] + (m[2] * d[0] - m[0] * d[2]);
    o[5] = m[5] + (m[0] * d[1] - m[1] * d[0]);
}

/* a force f about a body's point added to o about a point d behind it (d = the body's point less
 * o's): o += [n + d x f; f] */
static inline void nshift_f_add(const double *f, const double *d, double *o)
{
    o[0] += f[0] + (d[1] * f[5] - d[2] * f[4]);
    o[1] += f[1] + (d[2] * f[3] - d[0] * f[5]);
    o[2] += f[2] + (d[0] * f[4] - d[1] * f[3]);
    o[3] += f[3], o[4] += f[4], o[5] += f[5];
}

/* A body's point: a point of its joint's axis, or its origin without a joint (rtree_num.h) */
const double *model_rtree_point(int kind, const double *tb)
{
    return kind == MBL_RTREE_FIXED ? tb + MBL_RTREE_R : tb + MBL_RTREE_P;
}

/* The forward pass and the backward pass from the texts' values tv (full: the subtree sums the
 * Jacobian needs) into the bodies N (nb * NB_SIZE), each body's vectors about its own point
 * (model_rtree_point; rtree_num.h says why) */
void model_rtree_nrnea_tv(const mbl_rtree_num *r, const double *syms, const double *tv, double *N, int full)
{
    int nb = r->tree.nb;
    const double *gv = tv + (size_t)nb * NTV;
    double a0[6] = {0, 0, 0, -gv[0], -gv[1], -gv[2]}, z6[6] = {0, 0, 0, 0, 0, 0};
    for (int b = 0; b < nb; b++) {
        double *n = N + (size_t)b * NB_SIZE;
        const double *tb = tv + (size_t)b * NTV, *o = model_rtree_point(r->tree.b[b].kind, tb);
        int p = r->tree.b[b].parent, kind = r->tree.b[b].kind;
        double *O = n + NB_O, *d = n + NB_DP;
        for (int k = 0; k < 3; k++) O[k] = o[k], d[k] = p >= 0 ? o[k] - N[(size_t)p * NB_SIZE + NB_O + k] : o[k];
        if (p >= 0) {
            nshift_m(N + (size_t)p * NB_SIZE + NB_V, d, n + NB_VP);
            nshift_m(N + (size_t)p * NB_SIZE + NB_A, d, n + NB_AP);
        } else { /* the ground: at rest, its acceleration -g the same about every point */
            memcpy(n + NB_VP, z6, 6 * sizeof *n);
            memcpy(n + NB_AP, a0, 6 * sizeof *n);
        }
        const double *vp = n + NB_VP, *ap = n + NB_AP;
        double *S = n + NB_S;
        memset(S, 0, 6 * sizeof *S);
        if (kind == MBL_RTREE_REV) { /* about a point of its axis: [u; 0] */
            for (int k = 0; k < 3; k++) S[k] = tb[MBL_RTREE_U + k];
        } else if (kind == MBL_RTREE_PRI) {
            for (int k = 0; k < 3; k++) S[3 + k] = tb[MBL_RTREE_U + k];
        }
        memcpy(n + NB_V, vp, 6 * sizeof *n);
        memcpy(n + NB_A, ap, 6 * sizeof *n);
        if (r->qidx[b] >= 0) {
            double qd = syms[r->vs[b]], qdd = syms[r->as[b]], vxS[6];
            ncrm(vp, S, vxS);
            for (int k = 0; k < 6; k++) {
                n[NB_V + k] = vp[k] + S[k] * qd;
                n[NB_A + k] = (ap[k] + S[k] * qdd) + vxS[k] * qd;
            }
        }
        memset(n + NB_F, 0, 12 * sizeof *n); /* F, hc */
        if (full) n[NB_SUB] = 0.0;
    }
    for (int b = nb - 1; b >= 0; b--) {
        double *n = N + (size_t)b * NB_SIZE;
        const double *tb = tv + (size_t)b * NTV;
        double h[6], Ia[6], vh[6];
        double *I = n + NB_I;
        model_rtree_inertia(tb, n + NB_O, I);
        nm6v(I, n + NB_V, h);
        nm6v(I, n + NB_A, Ia);
        ncrf(n + NB_V, h, vh);
        for (int k = 0; k < 6; k++) n[NB_F + k] += Ia[k] + vh[k], n[NB_HC + k] += h[k];
        if (full && n[NB_SUB] != 0.0) {
            double Bo[36];
            nbmat(n + NB_V, I, Bo);
            nadd(n + NB_IC, I, 36);
            nadd(n + NB_BC, Bo, 36);
        } else if (full) {
            memcpy(n + NB_IC, I, 36 * sizeof *n);
            nbmat(n + NB_V, I, n + NB_BC);
        }
        int p = r->tree.b[b].parent;
        if (p < 0) continue;
        double *np = N + (size_t)p * NB_SIZE;
        const double *d = n + NB_DP;
        nshift_f_add(n + NB_F, d, np + NB_F);
        nshift_f_add(n + NB_HC, d, np + NB_HC);
        if (!full) continue;
        if (np[NB_SUB] != 0.0) {
            double Y[36];
            model_rtree_shift6(n + NB_IC, d, Y);
            nadd(np + NB_IC, Y, 36);
            model_rtree_shift6(n + NB_BC, d, Y);
            nadd(np + NB_BC, Y, 36);
        } else {
            model_rtree_shift6(n + NB_IC, d, np + NB_IC);
            model_rtree_shift6(n + NB_BC, d, np + NB_BC);
            np[NB_SUB] = 1.0;
        }
    }
}

/* The texts at the point, then nrnea_tv; bodies in work after the texts and their tape's registers. */
static int nrnea(const mbl_rtree_num *r, const double *syms, double *work, int full, double **bodies, mbl_status *st)
{
    int rc = model_rtree_num_texts(r, syms, work, work + r->nin, st);
    if (rc) return rc;
    *bodies = work + r->nin + r->in_work;
    model_rtree_nrnea_tv(r, syms, work, *bodies, full);
    return 0;
}

int model_rtree_num_F(const mbl_rtree_num *r, const double *syms, double *out, double *work, mbl_status *st)
{
    double *N;
    int rc = nrnea(r, syms, work, 0, &N, st);
    if (rc) return rc;
    for (int b = 0; b < r->tree.nb; b++) {
        const double *n = N + (size_t)b * NB_SIZE;
        if (r->qidx[b] >= 0) out[r->qidx[b]] += ndot(n + NB_S, n + NB_F);
    }
    return 0;
}

/* The vectors about the tree's reference point in NB_GL (rtree_num.h), two interleaved entry by
 * entry (x0 y0 x1 y1 ..) where a pair's two dot products take the two lanes of a vector: body i's
 * (P, Q), (Q, P), (P, D) and E against body j's (G, U), (S, U), (S, S) and S */
enum { GL_PQ = 0, GL_QP = 12, GL_PD = 24, GL_E = 36, GL_GU = 42, GL_SU = 54, GL_SS = 66, GL_S = 78 };

typedef double v2d __attribute__((vector_size(2 * sizeof(double)), aligned(sizeof(double)), may_alias));
#define V2(p, j) (*(const v2d *)((p) + (j)))

static void interleave(const double *x, const double *y, double *o)
{
    for (int k = 0; k < 6; k++) o[2 * k] = x[k], o[2 * k + 1] = y[k];
}

/* sum over k of a_k b_k in each lane, in increasing k from 0 (each lane as ndot) */
static inline v2d ndot2(const double *a, const double *b)
{
    v2d s = V2(a, 0) * V2(b, 0);
    s += V2(a, 2) * V2(b, 2);
    s += V2(a, 4) * V2(b, 4);
    s += V2(a, 6) * V2(b, 6);
    s += V2(a, 8) * V2(b, 8);
    s += V2(a, 10) * V2(b, 10);
    return s;
}

/* The Jacobian's entries from the bodies N of the full pass, added to out at the slots' places pos */
static void jac_entries(const mbl_rtree_num *r, double *N, double *out, const int *pos)
{
    for (int b = 0; b < r->tree.nb; b++) {
        double *n = N + (size_t)b * NB_SIZE;
        if (r->qidx[b] < 0) continue;
        double *S = n + NB_S, *u = n + NB_U, *Ic = n + NB_IC, *Bc = n + NB_BC, *hc = n + NB_HC;
        double sa[6], uw[6], BS[6], Sh[6], t1[6], t2[6], t3[6], t4[6];
        ncrm(S, n + NB_VP, u);
        ncrm(S, n + NB_AP, sa);
        ncrm(u, n + NB_VP, uw);
        for (int k = 0; k < 6; k++) n[NB_G + k] = sa[k] - uw[k];
        nm6v(Ic, S, n + NB_P);
        nm6v(Bc, S, BS);
        ncrf(S, hc, Sh);
        for (int k = 0; k < 6; k++) n[NB_Q + k] = BS[k] - Sh[k];
        ncrf(S, n + NB_F, t1);
        nm6v(Ic, n + NB_G, t2);
        ncrf(u, hc, t3);
        nm6v(Bc, u, t4);
        for (int k = 0; k < 6; k++) n[NB_D + k] = t1[k] - t2[k] - t3[k] - t4[k];
        nm6v(Ic, u, t3);
        for (int k = 0; k < 6; k++) n[NB_E + k] = BS[k] - 2.0 * t3[k] + Sh[k];
        /* the same about the tree's reference point (the first body's point) for the pairs with an
         * ancestor: forces n + d x f, motions v + d x w (d the body's point less the reference);
         * y: S, G, U, P, Q, D, E, then into NB_GL's layout */
        const double *o0 = N + NB_O;
        double O[3] = {n[NB_O] - o0[0], n[NB_O + 1] - o0[1], n[NB_O + 2] - o0[2]};
        static const int src[7] = {NB_S, NB_G, NB_U, NB_P, NB_Q, NB_D, NB_E};
        double back[3] = {-O[0], -O[1], -O[2]}; /* the reference less the body's point */
        double y[42];
        for (int t = 0; t < 7; t++) {
            if (t < 3) {
                nshift_m(n + src[t], back, y + 6 * t);
            } else {
                memset(y + 6 * t, 0, 6 * sizeof *y);
                nshift_f_add(n + src[t], O, y + 6 * t);
            }
        }
        const double *yS = y, *yG = y + 6, *yU = y + 12, *yP = y + 18, *yQ = y + 24, *yD = y + 30, *yE = y + 36;
        double *gl = n + NB_GL;
        interleave(yP, yQ, gl + GL_PQ);
        interleave(yQ, yP, gl + GL_QP);
        interleave(yP, yD, gl + GL_PD);
        memcpy(gl + GL_E, yE, 6 * sizeof *gl);
        interleave(yG, yU, gl + GL_GU);
        interleave(yS, yU, gl + GL_SU);
        interleave(yS, yS, gl + GL_SS);
        memcpy(gl + GL_S, yS, 6 * sizeof *gl);
    }
    const int *pi = r->pi, *pj = r->pj;
    for (int p = 0, np = r->npair; p < np; p++) {
        const double *ni = N + (size_t)pi[p] * NB_SIZE, *nj = N + (size_t)pj[p] * NB_SIZE;
        const int *ps = pos + 6 * (size_t)p;
        int p0 = ps[0], p1 = ps[1], p2 = ps[2];
        if (ni == nj) { /* the pair about the body's own point */
            const double *S = nj + NB_S, *g = nj + NB_G, *u = nj + NB_U, *P = ni + NB_P, *Q = ni + NB_Q;
            if (p0 >= 0) out[p0] -= ndot(P, g) + ndot(Q, u);
            if (p1 >= 0) out[p1] += ndot(Q, S) - 2.0 * ndot(P, u);
            if (p2 >= 0) out[p2] += ndot(P, S);
            continue;
        }
        /* about the tree's reference point, two dot products at a time: (P . g, Q . u),
         * (Q . S, P . u), (P . S, D_i . S) (= S_j . D_i, slot 3), then S_j . E_i; P . S is also slot 5 */
        const double *a = ni + NB_GL, *c = nj + NB_GL;
        v2d pg_qu = ndot2(a + GL_PQ, c + GL_GU), qs_pu = ndot2(a + GL_QP, c + GL_SU), ps_ds = ndot2(a + GL_PD, c + GL_SS);
        if (p0 >= 0) out[p0] -= pg_qu[0] + pg_qu[1];
        if (p1 >= 0) out[p1] += qs_pu[0] - 2.0 * qs_pu[1];
        if (p2 >= 0) out[p2] += ps_ds[0];
        int p3 = ps[3], p4 = ps[4], p5 = ps[5];
        if (p3 >= 0) out[p3] += ps_ds[1];
        if (p4 >= 0) out[p4] += ndot(c + GL_S, a + GL_E);
        if (p5 >= 0) out[p5] += ps_ds[0];
    }
}

void model_rtree_jac_entries(const mbl_rtree_num *r, double *N, double *out) { jac_entries(r, N, out, r->pos); }

void model_rtree_jac_dense(const mbl_rtree_num *r, double *N, double *KCM) { jac_entries(r, N, KCM, r->dpos); }

int model_rtree_num_jac(const mbl_rtree_num *r, const double *syms, double *out, double *work, mbl_status *st)
{
    double *N;
    int rc = nrnea(r, syms, work, 1, &N, st);
    if (!rc) model_rtree_jac_entries(r, N, out);
    return rc;
}
