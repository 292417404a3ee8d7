/* The structured term of a tree in relative coordinates (rtree.h).
 *
 * Spatial vectors in global axes about the global origin (Featherstone): a motion [w; v_O], a force
 * [n_O; f]; the motion cross product [w1; v1] x [w2; v2] = [w1 x w2; w1 x v2 + v1 x w2], the force
 * one [w; v] x* [n; f] = [w x n + v x f; w x f]. A body k with tree joint axis S_k ([u; p x u] for
 * a revolute through p, [0; u] for a prismatic) and parent l:
 *   v_k = v_l + S_k q'_k,  a_k = a_l + S_k q''_k + (v_l x S_k) q'_k  (a_ground = [0; -g]),
 *   f_k = I_k a_k + v_k x* I_k v_k,  F_k = f_k + sum of the children's F,  row_k = S_k . F_k,
 * the inertia and weight of the subtree on the joint (moved to the left of the equations).
 * Their derivatives (Carpentier & Mansard 2018; derived in docs/mechanism.md): with the subtree
 * sums Ic_k = sum I, hc_k = sum I v, Bc_k = sum (v x* I - I v x) (both symmetric), and per joint j
 *   u_j = S_j x v_l,  g_j = S_j x a_l - u_j x v_l  (l the parent of j),
 *   P_j = Ic_j S_j,  Q_j = Bc_j S_j - S_j x* hc_j,
 *   D_j = S_j x* F_j - Ic_j g_j - u_j x* hc_j - Bc_j u_j,  E_j = Bc_j S_j - 2 Ic_j u_j + S_j x* hc_j,
 * for j an ancestor of i or i itself:
 *   d row_i/dq_j = -(P_i . g_j + Q_i . u_j),  d row_i/dq'_j = Q_i . S_j - 2 P_i . u_j,  d row_i/dq''_j = P_i . S_j,
 * and for i a strict ancestor of j:
 *   d row_i/dq_j = S_i . D_j,  d row_i/dq'_j = S_i . E_j,  d row_i/dq''_j = S_i . P_j.
 * Every entry is one or two dot products of per-body vectors: O(1) nodes per entry, where the
 * symbolic derivative of the recursion costs O(depth) (docs/benchmarks.md). */
#include "model/rtree.h"

#include <string.h>

#include "model/model_internal.h"

void mbl_rtree_free(mbl_rtree *t)
{
    if (!t) return;
    for (int b = 0; b < t->nb; b++) {
        mbl_rtree_body *B = &t->b[b];
        mbl_free(B->name);
        mbl_free(B->q);
        for (int k = 0; k < MBL_RTREE_NT; k++) mbl_free(B->t[k]);
    }
    mbl_free(t->b);
    for (int k = 0; k < 3; k++) mbl_free(t->g[k]);
    memset(t, 0, sizeof *t);
}

typedef struct ctx {
    mblx_graph *g;
    mblx_id zero;
} ctx;

static mblx_id mul(ctx *c, mblx_id a, mblx_id b) { return mblx_mul(c->g, a, b); }

static mblx_id dotn(ctx *c, int n, const mblx_id *a, const mblx_id *b)
{
    mblx_id t[12];
    for (int k = 0; k < n; k++) t[k] = mul(c, a[k], b[k]);
    return mblx_sum(c->g, (size_t)n, t);
}

/* a . b + c . d (6-vectors) as one sum */
static mblx_id dot2(ctx *c, const mblx_id *a, const mblx_id *b, const mblx_id *d, const mblx_id *e)
{
    mblx_id t[12];
    for (int k = 0; k < 6; k++) t[k] = mul(c, a[k], b[k]), t[6 + k] = mul(c, d[k], e[k]);
    return mblx_sum(c->g, 12, t);
}

static void cross3(ctx *c, const mblx_id *a, const mblx_id *b, mblx_id *o)
{
    mblx_id r[3];
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        r[k] = mblx_sub(c->g, mul(c, a[k1], b[k2]), mul(c, a[k2], b[k1]));
    }
    memcpy(o, r, sizeof r);
}

/* motion cross product a x b */
static void crm(ctx *c, const mblx_id *a, const mblx_id *b, mblx_id *o)
{
    mblx_id w[3], v1[3], v2[3];
    cross3(c, a, b, w);
    cross3(c, a, b + 3, v1);
    cross3(c, a + 3, b, v2);
    for (int k = 0; k < 3; k++) o[k] = w[k], o[3 + k] = mblx_add(c->g, v1[k], v2[k]);
}

/* force cross product a x* f */
static void crf(ctx *c, const mblx_id *a, const mblx_id *f, mblx_id *o)
{
    mblx_id n1[3], n2[3], fo[3];
    cross3(c, a, f, n1);
    cross3(c, a + 3, f + 3, n2);
    cross3(c, a, f + 3, fo);
    for (int k = 0; k < 3; k++) o[k] = mblx_add(c->g, n1[k], n2[k]), o[3 + k] = fo[k];
}

/* M x (M 6 x 6 row-major; transposed when tr) */
static void m6v(ctx *c, const mblx_id *M, const mblx_id *x, int tr, mblx_id *o)
{
    mblx_id r[6], row[6];
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < 6; k++) row[k] = tr ? M[6 * k + i] : M[6 * i + k];
        r[i] = dotn(c, 6, row, x);
    }
    memcpy(o, r, sizeof r);
}

/* The spatial inertia (6 x 6, row-major) of a body with mass m, rotation A (row-major), origin r,
 * centre of mass cm (body axes) and inertia J about it in body axes (xx yy zz xy xz yz). */
static void inertia(ctx *c, const mblx_id *t, mblx_id *I6)
{
    mblx_graph *g = c->g;
    const mblx_id *A = t + MBL_RTREE_A, *r = t + MBL_RTREE_R, *cm = t + MBL_RTREE_CM, *Jv = t + MBL_RTREE_I;
    mblx_id m = t[MBL_RTREE_M];
    mblx_id J[9] = {Jv[0], Jv[3], Jv[4], Jv[3], Jv[1], Jv[5], Jv[4], Jv[5], Jv[2]};
    mblx_id AJ[9], Ib[9], cw[3], mc[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            mblx_id a[3] = {A[3 * i], A[3 * i + 1], A[3 * i + 2]}, b[3] = {J[j], J[3 + j], J[6 + j]};
            AJ[3 * i + j] = dotn(c, 3, a, b);
        }
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            Ib[3 * i + j] = dotn(c, 3, AJ + 3 * i, A + 3 * j);
            Ib[3 * j + i] = Ib[3 * i + j];
        }
    for (int i = 0; i < 3; i++) {
        mblx_id a[3] = {A[3 * i], A[3 * i + 1], A[3 * i + 2]};
        cw[i] = mblx_add(g, r[i], dotn(c, 3, a, cm));
        mc[i] = mul(c, m, cw[i]);
    }
    mblx_id c2 = dotn(c, 3, mc, cw); /* m |c|^2 */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            mblx_id e = mblx_sub(g, Ib[3 * i + j], mul(c, mc[i], cw[j]));
            I6[6 * i + j] = i == j ? mblx_add(g, e, c2) : e;
            I6[6 * (i + 3) + j + 3] = i == j ? m : c->zero;
        }
    /* top right m skew(c), bottom left its transpose */
    mblx_id sk[9] = {c->zero, mblx_neg(g, mc[2]), mc[1], mc[2], c->zero, mblx_neg(g, mc[0]), mblx_neg(g, mc[1]), mc[0],
                     c->zero};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I6[6 * i + j + 3] = sk[3 * i + j], I6[6 * (j + 3) + i] = sk[3 * i + j];
}

/* B = v x* I - I (v x) (6 x 6): with X = crm(v), crf(v) = -X^T, so B = -(X^T I + I X), symmetric;
 * M = I X column by column (column e: I (v x e)), B_ij = -(M_ij + M_ji) */
static void bmat(ctx *c, const mblx_id *v, const mblx_id *I6, mblx_id *B)
{
    mblx_id M[36];
    for (int e = 0; e < 6; e++) {
        mblx_id x[6], t2[6], ue[6];
        for (int k = 0; k < 6; k++) ue[k] = k == e ? mblx_const(c->g, 1.0) : c->zero;
        crm(c, v, ue, x);
        m6v(c, I6, x, 0, t2);
        for (int k = 0; k < 6; k++) M[6 * k + e] = t2[k];
    }
    for (int i = 0; i < 6; i++)
        for (int j = i; j < 6; j++) B[6 * i + j] = B[6 * j + i] = mblx_neg(c->g, mblx_add(c->g, M[6 * i + j], M[6 * j + i]));
}

typedef struct bnode {
    mblx_id S[6], vp[6], ap[6], v[6], a[6], I[36], F[6], Ic[36], hc[6], Bc[36];
    mblx_id P[6], Q[6], u[6], gm[6], D[6], E[6];
} bnode;

static int push(mbl_sjac *J, const mblx_graph *g, int row, int col, mblx_id e, int *err)
{
    double x;
    if (*err || (mblx_is_const(g, e, &x) && x == 0.0)) return 0;
    if (mbl_sjac_push(J, row, col, e)) *err = 1;
    return *err;
}

int mbl_rtree_formulate(mbl_model *md, const mbl_rtree *t, const int *qidx, const mblx_id *tn, const mblx_id gn[3],
                        mblx_id *Fs, mbl_sjac *J, mbl_status *st)
{
    int nb = t->nb;
    if (!nb) return 0;
    mblx_graph *g = md->g;
    ctx C = {g, mblx_const(g, 0.0)}, *c = &C;
    bnode *N = mbl_calloc((size_t)nb, sizeof *N);
    if (!N) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_id z6[6], a0[6];
    for (int k = 0; k < 6; k++) z6[k] = c->zero;
    for (int k = 0; k < 3; k++) a0[k] = c->zero, a0[3 + k] = mblx_neg(g, gn[k]);
    /* forward: joint axes, velocities, accelerations, the bodies' own loads */
    for (int b = 0; b < nb; b++) {
        const mbl_rtree_body *B = &t->b[b];
        bnode *n = &N[b];
        const mblx_id *tb = tn + (size_t)b * MBL_RTREE_NT;
        const mblx_id *vp = B->parent >= 0 ? N[B->parent].v : z6;
        const mblx_id *ap = B->parent >= 0 ? N[B->parent].a : a0;
        memcpy(n->vp, vp, sizeof n->vp);
        memcpy(n->ap, ap, sizeof n->ap);
        memcpy(n->S, z6, sizeof n->S);
        if (B->kind == MBL_RTREE_REV) {
            for (int k = 0; k < 3; k++) n->S[k] = tb[MBL_RTREE_U + k];
            cross3(c, tb + MBL_RTREE_P, tb + MBL_RTREE_U, n->S + 3);
        } else if (B->kind == MBL_RTREE_PRI) {
            for (int k = 0; k < 3; k++) n->S[3 + k] = tb[MBL_RTREE_U + k];
        }
        mblx_id *a = n->a;
        memcpy(n->v, vp, sizeof n->v);
        memcpy(a, ap, sizeof n->a);
        if (B->kind != MBL_RTREE_FIXED && qidx[b] >= 0) {
            mblx_id qd = md->v[qidx[b]], qdd = md->a[qidx[b]], vxS[6];
            crm(c, vp, n->S, vxS);
            for (int k = 0; k < 6; k++) {
                n->v[k] = mblx_add(g, vp[k], mul(c, n->S[k], qd));
                mblx_id tt[3] = {ap[k], mul(c, n->S[k], qdd), mul(c, vxS[k], qd)};
                a[k] = mblx_sum(g, 3, tt);
            }
        }
    }
    /* backward, leaves first: a body's own load, inertia, momentum and B, then its subtree sums
     * (the children's, accumulated in F, Ic, hc, Bc, plus its own). The engine merges nested sums,
     * so a subtree sum is a flat sum of its children's terms (made earlier: they come first in the
     * graph's order) and then its own: the tape's chain of the child's sum is a prefix of the
     * parent's and is computed once (a chain costs O(N) instead of O(N^2) operations). */
    for (int b = 0; b < nb; b++) {
        for (int k = 0; k < 6; k++) N[b].F[k] = N[b].hc[k] = c->zero;
        for (int k = 0; k < 36; k++) N[b].Ic[k] = N[b].Bc[k] = c->zero;
    }
    for (int b = nb - 1; b >= 0; b--) {
        bnode *n = &N[b];
        const mblx_id *tb = tn + (size_t)b * MBL_RTREE_NT;
        mblx_id h[6], Ia[6], vh[6], Bo[36];
        inertia(c, tb, n->I);
        m6v(c, n->I, n->v, 0, h);
        m6v(c, n->I, n->a, 0, Ia);
        crf(c, n->v, h, vh);
        bmat(c, n->v, n->I, Bo);
        for (int k = 0; k < 6; k++) {
            mblx_id tt[3] = {n->F[k], Ia[k], vh[k]};
            n->F[k] = mblx_sum(g, 3, tt);
            n->hc[k] = mblx_add(g, n->hc[k], h[k]);
        }
        for (int i = 0; i < 6; i++) /* symmetric: the upper triangle, mirrored */
            for (int j = i; j < 6; j++) {
                n->Ic[6 * i + j] = n->Ic[6 * j + i] = mblx_add(g, n->Ic[6 * i + j], n->I[6 * i + j]);
                n->Bc[6 * i + j] = n->Bc[6 * j + i] = mblx_add(g, n->Bc[6 * i + j], Bo[6 * i + j]);
            }
        int p = t->b[b].parent;
        if (p < 0) continue;
        for (int k = 0; k < 6; k++) {
            N[p].F[k] = mblx_add(g, N[p].F[k], n->F[k]);
            N[p].hc[k] = mblx_add(g, N[p].hc[k], n->hc[k]);
        }
        for (int i = 0; i < 6; i++)
            for (int j = i; j < 6; j++) {
                N[p].Ic[6 * i + j] = N[p].Ic[6 * j + i] = mblx_add(g, N[p].Ic[6 * i + j], n->Ic[6 * i + j]);
                N[p].Bc[6 * i + j] = N[p].Bc[6 * j + i] = mblx_add(g, N[p].Bc[6 * i + j], n->Bc[6 * i + j]);
            }
    }
    /* rows and the per-joint vectors */
    for (int b = 0; b < nb; b++) {
        bnode *n = &N[b];
        if (qidx[b] < 0) continue;
        Fs[qidx[b]] = mblx_add(g, Fs[qidx[b]], dotn(c, 6, n->S, n->F));
        mblx_id t1[6], t2[6], t3[6], t4[6], sa[6], uw[6];
        crm(c, n->S, n->vp, n->u);
        crm(c, n->S, n->ap, sa);
        crm(c, n->u, n->vp, uw);
        for (int k = 0; k < 6; k++) n->gm[k] = mblx_sub(g, sa[k], uw[k]);
        mblx_id BS[6], Sh[6];
        m6v(c, n->Ic, n->S, 0, n->P);
        m6v(c, n->Bc, n->S, 0, BS); /* Bc is symmetric: Bc^T S = Bc S */
        crf(c, n->S, n->hc, Sh);
        for (int k = 0; k < 6; k++) n->Q[k] = mblx_sub(g, BS[k], Sh[k]);
        /* D = S x* F - Ic g - u x* hc - Bc u */
        crf(c, n->S, n->F, t1);
        m6v(c, n->Ic, n->gm, 0, t2);
        crf(c, n->u, n->hc, t3);
        m6v(c, n->Bc, n->u, 0, t4);
        for (int k = 0; k < 6; k++) {
            mblx_id tt[4] = {t1[k], mblx_neg(g, t2[k]), mblx_neg(g, t3[k]), mblx_neg(g, t4[k])};
            n->D[k] = mblx_sum(g, 4, tt);
        }
        /* E = Bc S - 2 Ic u + S x* hc */
        m6v(c, n->Ic, n->u, 0, t3);
        for (int k = 0; k < 6; k++) {
            mblx_id tt[3] = {BS[k], mblx_scale(g, -2.0, t3[k]), Sh[k]};
            n->E[k] = mblx_sum(g, 3, tt);
        }
    }
    int err = 0;
    int ca = mbl_model_blk0(md, MBL_BLK_A), cv = mbl_model_blk0(md, MBL_BLK_V), cq = mbl_model_blk0(md, MBL_BLK_Q);
    for (int i = 0; i < nb && !err; i++) {
        if (qidx[i] < 0) continue;
        bnode *ni = &N[i];
        int ri = qidx[i];
        mblx_id mP[6], mQ[6], m2P[6];
        for (int k = 0; k < 6; k++)
            mP[k] = mblx_neg(g, ni->P[k]), mQ[k] = mblx_neg(g, ni->Q[k]), m2P[k] = mblx_scale(g, -2.0, ni->P[k]);
        for (int j = i; j >= 0 && !err; j = t->b[j].parent) {
            if (qidx[j] < 0) continue;
            bnode *nj = &N[j];
            int rj = qidx[j];
            /* j an ancestor of i, or i: row i, columns of j */
            push(J, g, ri, cq + rj, dot2(c, mP, nj->gm, mQ, nj->u), &err);
            push(J, g, ri, cv + rj, dot2(c, ni->Q, nj->S, m2P, nj->u), &err);
            push(J, g, ri, ca + rj, dotn(c, 6, ni->P, nj->S), &err);
            if (j == i) continue;
            /* row j, columns of i (j a strict ancestor of i) */
            push(J, g, rj, cq + ri, dotn(c, 6, nj->S, ni->D), &err);
            push(J, g, rj, cv + ri, dotn(c, 6, nj->S, ni->E), &err);
            push(J, g, rj, ca + ri, dotn(c, 6, nj->S, ni->P), &err);
        }
    }
    mbl_free(N);
    if (err) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}
