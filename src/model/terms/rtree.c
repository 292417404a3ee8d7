/* The structured term of a tree in relative coordinates (rtree.h).
 *
 * Spatial vectors in global axes (Featherstone): a motion [w; v_O], a force [n_O; f] about a point
 * O, in the node form below the global origin, in the numeric passes each body's own point
 * (rtree_num.h); the motion cross product [w1; v1] x [w2; v2] = [w1 x w2; w1 x v2 + v1 x w2], the force
 * one [w; v] x* [n; f] = [w x n + v x f; w x f]. A body k with tree joint axis S_k ([u; p x u] for
 * a revolute through p about the origin, [u; 0] about p, [0; u] for a prismatic) and parent l:
 *   v_k = v_l + S_k q'_k,  a_k = a_l + S_k q''_k + (v_l x S_k) q'_k  (a_ground = [0; -g]),
 *   f_k = I_k a_k + v_k x* I_k v_k,  F_k = f_k + sum of the children's F,  row_k = S_k . F_k,
 * the inertia and weight of the subtree on the joint (moved to the left of the equations).
 * Their derivatives (Carpentier & Mansard 2018; derived in docs/mechanism-reference.md): with the subtree
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

#include <limits.h>
#include <string.h>

#include "core/vec3.h"
#include "expr/tape_subset.h"
#include "model/model_internal.h"
#include "model/terms/rtree_num.h"
#include "model/terms/vec3_nodes.h"

void model_rtree_free(mbl_rtree *t)
{
    if (!t) return;
    for (int b = 0; b < t->nb; b++) {
        mbl_rtree_body *B = &t->b[b];
        mbl_free(B->name);
        mbl_free(B->q);
        for (int k = 0; k < MBL_RTREE_NT; k++) mbl_free(B->t[k]);
        for (int k = 0; k < 3; k++) mbl_free(B->sp[k]), mbl_free(B->sc[k]);
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
    vec3_nodes_cross(c->g, a, b, o);
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
    if (model_sjac_push(J, row, col, e)) *err = 1;
    return *err;
}

int model_rtree_formulate(mbl_model *md, const mbl_rtree *t, const int *qidx, const mblx_id *tn, const mblx_id gn[3],
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
    int ca = model_blk0(md, MBL_BLK_A), cv = model_blk0(md, MBL_BLK_V), cq = model_blk0(md, MBL_BLK_Q);
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

/* ---- the same term evaluated numerically beside the tapes (the default) ----------------------
 *
 * The closed forms above as expression nodes cost O(1) nodes per Jacobian entry but 3 N^2 entries
 * for a chain of N links, and every node keeps the set of symbols it depends on (O(N) here): the
 * graph grows like N^3 (1.6 GB at N = 200, docs/benchmarks.md). Evaluated numerically, the term
 * needs only the bodies' kinematic texts (a tape with 28 outputs per body) and O(N) scratch per
 * evaluation; its rows are added to the residual tape's outputs and its entries to the Jacobian
 * tape's (model_eval_F, model_eval_jac), so every method, the operating point and the simulation read them as
 * before. The expression form is built only when the sensitivities or the code generator ask for
 * it (model_rtree_num_exprs, through model_dae_nodes). */

static void texts_evaluated(const mbl_rtree_num *r, mblx_id *out)
{
    int nb = r->tree.nb;
    for (int b = 0; b < nb; b++) memcpy(out + (size_t)b * NTV, r->tn + (size_t)b * MBL_RTREE_NT, NTV * sizeof *out);
    memcpy(out + (size_t)nb * NTV, r->tn + (size_t)nb * MBL_RTREE_NT, 3 * sizeof *out);
}

void model_rtree_num_free(mbl_rtree_num *r)
{
    if (!r) return;
    mbl_free(r->tree.b);
    mbl_free(r->qidx), mbl_free(r->vs), mbl_free(r->as);
    mblx_tape_free(r->in);
    mblx__subtape_free(r->intx);
    mblx_tape_free(r->iny);
    mbl_free(r->tn);
    mbl_free(r->pi), mbl_free(r->pj), mbl_free(r->pos), mbl_free(r->dpos), mbl_free(r->qzero);
    mbl_free(r->qlo), mbl_free(r->qhi);
    mbl_free(r->kin), mbl_free(r->qs), mbl_free(r->lv0);
    mbl_free(r->ysn), mbl_free(r->yjsn), mbl_free(r->st_sym), mbl_free(r->st_src), mbl_free(r->eneed);
    mbl_free(r->yphn), mbl_free(r->yc_b), mbl_free(r->yc_phi), mbl_free(r->yc_pos);
    mblx_tape_free(r->lvt);
    mbl_free(r);
}

int model_rtree_num_entries(const mbl_rtree_num *r)
{
    int k = 0;
    for (int p = 0; r && p < 6 * r->npair; p++) k += r->pos[p] >= 0;
    return k;
}

int model_rtree_num_new(mbl_model *md, const mbl_rtree *t, const int *qidx, const mblx_id *tn, const mblx_id gn[3],
                      const mblx_id *ln, mbl_rtree_num **out, mbl_status *st)
{
    *out = NULL;
    int nb = t->nb;
    mbl_rtree_num *r = mbl_calloc(1, sizeof *r);
    if (!r) return mbl_error(st, MBL_ENOMEM, "out of memory");
    r->tree.nb = nb;
    r->n = md->n;
    r->nin = (size_t)nb * NTV + 3;
    r->tree.b = mbl_calloc((size_t)nb, sizeof *r->tree.b);
    r->qidx = mbl_alloc_array((size_t)nb, sizeof *r->qidx);
    r->vs = mbl_alloc_array((size_t)nb, sizeof *r->vs);
    r->as = mbl_alloc_array((size_t)nb, sizeof *r->as);
    r->tn = mbl_alloc_array((size_t)nb * MBL_RTREE_NT + 3, sizeof *r->tn);
    r->qzero = mbl_calloc((size_t)nb + 1, 1);
    if (!r->tree.b || !r->qidx || !r->vs || !r->as || !r->tn || !r->qzero) {
        model_rtree_num_free(r);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    memcpy(r->tn, tn, (size_t)nb * MBL_RTREE_NT * sizeof *tn);
    for (int k = 0; k < 3; k++) r->gn[k] = gn[k], r->tn[(size_t)nb * MBL_RTREE_NT + k] = gn[k];
    int np = 0;
    for (int b = 0; b < nb; b++) {
        r->tree.b[b].parent = t->b[b].parent;
        r->tree.b[b].kind = t->b[b].kind;
        int q = t->b[b].kind == MBL_RTREE_FIXED ? -1 : qidx[b];
        r->qidx[b] = q;
        r->vs[b] = q >= 0 ? (int)mblx_symbol_index(md->g, md->v[q]) : -1;
        r->as[b] = q >= 0 ? (int)mblx_symbol_index(md->g, md->a[q]) : -1;
        if (q >= 0)
            for (int j = b; j >= 0; j = t->b[j].parent) np += qidx[j] >= 0 && t->b[j].kind != MBL_RTREE_FIXED;
    }
    /* A joint whose ancestors are all fixed to the ground moves nothing above it, u = S x v_parent
     * vanishes, and its coordinate enters the rows only through g = S x a_ground: when that is
     * zero in structure (a spin about the direction of gravity, the rotating pendulum of Table
     * 5.1), no row depends on the coordinate, as in the expression form (the steady solver and
     * the sensitivities treat it as cyclic). */
    ctx C = {md->g, mblx_const(md->g, 0.0)};
    for (int b = 0; b < nb; b++) {
        if (r->qidx[b] < 0) continue;
        int top = 1;
        for (int j = t->b[b].parent; j >= 0; j = t->b[j].parent) top &= r->qidx[j] < 0;
        if (!top) continue;
        const mblx_id *tb = tn + (size_t)b * MBL_RTREE_NT;
        mblx_id S[6], a0[6], ga[6];
        for (int k = 0; k < 6; k++) S[k] = C.zero;
        if (t->b[b].kind == MBL_RTREE_REV) {
            for (int k = 0; k < 3; k++) S[k] = tb[MBL_RTREE_U + k];
            cross3(&C, tb + MBL_RTREE_P, tb + MBL_RTREE_U, S + 3);
        } else {
            for (int k = 0; k < 3; k++) S[3 + k] = tb[MBL_RTREE_U + k];
        }
        for (int k = 0; k < 3; k++) a0[k] = C.zero, a0[3 + k] = mblx_neg(md->g, gn[k]);
        crm(&C, S, a0, ga);
        int zero = 1;
        for (int k = 0; k < 6; k++) {
            double x;
            zero &= mblx_is_const(md->g, ga[k], &x) && x == 0.0;
        }
        r->qzero[b] = (char)zero;
    }
    r->npair = np;
    r->pi = mbl_alloc_array((size_t)np + 1, sizeof *r->pi);
    r->pj = mbl_alloc_array((size_t)np + 1, sizeof *r->pj);
    r->pos = mbl_alloc_array(6 * (size_t)np + 1, sizeof *r->pos);
    if (!r->pi || !r->pj || !r->pos) {
        model_rtree_num_free(r);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    np = 0;
    for (int i = 0; i < nb; i++) {
        if (r->qidx[i] < 0) continue;
        for (int j = i; j >= 0; j = t->b[j].parent)
            if (r->qidx[j] >= 0) r->pi[np] = i, r->pj[np] = j, np++;
    }
    for (int p = 0; p < 6 * np; p++) r->pos[p] = -1;
    int native = model_rtree_kin_setup(md, t, tn, gn, ln, r, st);
    if (native < 0) {
        model_rtree_num_free(r);
        return st && st->code ? st->code : MBL_ENOMEM;
    }
    if (native) {
        *out = r;
        return 0;
    }
    mblx_id *tv = mbl_alloc_array(r->nin, sizeof *tv);
    if (tv) {
        texts_evaluated(r, tv);
        r->in = mblx_compile(md->g, r->nin, tv, st);
    } else {
        mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbl_free(tv);
    if (!r->in) {
        model_rtree_num_free(r);
        return st ? st->code : MBL_ENOMEM;
    }
    r->in_work = mblx_tape_work_size(r->in);
    *out = r;
    return 0;
}

/* The entries' (row, column) in the unknowns' layout, slot s of pair p */
static void entry_of(const mbl_model *md, const mbl_rtree_num *r, int p, int s, int *row, int *col)
{
    int qi = r->qidx[r->pi[p]], qj = r->qidx[r->pj[p]];
    static const int blk[3] = {MBL_BLK_Q, MBL_BLK_V, MBL_BLK_A};
    if (s < 3) *row = qi, *col = model_blk0(md, blk[s]) + qj;
    else *row = qj, *col = model_blk0(md, blk[s - 3]) + qi;
}

/* no entry: the pair's mirror entries when i = j, the q column of a coordinate no row depends on */
static int skip_slot(const mbl_rtree_num *r, int p, int s)
{
    if (s >= 3 && r->pi[p] == r->pj[p]) return 1;
    return (s == 0 && r->qzero[r->pj[p]]) || (s == 3 && r->qzero[r->pi[p]]);
}

int model_rtree_num_pattern(mbl_model *md, mbl_rtree_num *r, mbl_status *st)
{
    int n = md->n, rc = model_rtree_minv_setup(md, r, st); /* before the term's entries join md->jac */
    if (rc) return rc;
    mblx_id zero = mblx_const(md->g, 0.0);
    /* the existing entries of the equations of motion, by row */
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *fill = mbl_calloc((size_t)n + 1, sizeof *fill), *pos = mbl_alloc_array((size_t)md->nunk + 1, sizeof *pos);
    int *trp = mbl_calloc((size_t)n + 2, sizeof *trp), *tent = mbl_alloc_array(6 * (size_t)r->npair + 1, sizeof *tent);
    if (!rp || !ent || !fill || !pos || !trp || !tent) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) rp[md->jac.row[p] + 1]++;
    for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) ent[rp[md->jac.row[p]] + fill[md->jac.row[p]]++] = p;
    int ne = 0;
    for (int p = 0; p < r->npair; p++)
        for (int s = 0; s < 6; s++) {
            if (skip_slot(r, p, s)) continue;
            int row, col;
            entry_of(md, r, p, s, &row, &col);
            trp[row + 1]++;
            ne++;
        }
    for (int i = 0; i < n; i++) trp[i + 1] += trp[i];
    memset(fill, 0, ((size_t)n + 1) * sizeof *fill);
    for (int p = 0; p < r->npair; p++)
        for (int s = 0; s < 6; s++) {
            if (skip_slot(r, p, s)) continue;
            int row, col;
            entry_of(md, r, p, s, &row, &col);
            tent[trp[row] + fill[row]++] = 6 * p + s;
        }
    (void)ne;
    for (int j = 0; j < md->nunk; j++) pos[j] = -1;
    for (int i = 0; i < n && !rc; i++) {
        if (trp[i] == trp[i + 1]) continue;
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = ent[t];
        for (int t = trp[i]; t < trp[i + 1] && !rc; t++) {
            int e = tent[t], row, col;
            entry_of(md, r, e / 6, e % 6, &row, &col);
            if (pos[col] < 0) {
                pos[col] = md->jac.nz;
                if (model_sjac_push(&md->jac, row, col, zero)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
            r->pos[e] = pos[col];
        }
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = -1;
        for (int t = trp[i]; t < trp[i + 1]; t++) {
            int row, col;
            entry_of(md, r, tent[t] / 6, tent[t] % 6, &row, &col);
            pos[col] = -1;
        }
    }
    /* the places in K, C, M (n x n each, by columns, one after the other), while they fit an int */
    mbl_free(r->dpos);
    r->dpos = rc || 3.0 * n * n >= INT_MAX ? NULL : mbl_alloc_array(6 * (size_t)r->npair + 1, sizeof *r->dpos);
    if (!rc && !r->dpos && 3.0 * n * n < INT_MAX) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int e = 0; e < 6 * r->npair && r->dpos; e++) {
        int row, col, s = e % 6, b = s % 3;
        r->dpos[e] = -1;
        if (r->pos[e] < 0) continue;
        entry_of(md, r, e / 6, s, &row, &col);
        static const int blk[3] = {MBL_BLK_Q, MBL_BLK_V, MBL_BLK_A};
        r->dpos[e] = b * n * n + row + (col - model_blk0(md, blk[b])) * n;
    }
out:
    mbl_free(rp), mbl_free(ent), mbl_free(fill), mbl_free(pos), mbl_free(trp), mbl_free(tent);
    return rc;
}

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

int model_rtree_num_bind_outputs(mbl_model *md, mbl_rtree_num *r, mbl_status *st)
{
    size_t ny = (size_t)md->ny + (size_t)md->yjac.nz, n = r->nin + ny;
    if (!md->ny) return 0;
    if (r->kin) return model_rtree_kin_bind_outputs(md, r, st);
    mblx_id *all = mbl_alloc_array(n, sizeof *all);
    if (!all) return mbl_error(st, MBL_ENOMEM, "out of memory");
    texts_evaluated(r, all);
    memcpy(all + r->nin, md->y, (size_t)md->ny * sizeof *all);
    if (md->yjac.nz) memcpy(all + r->nin + md->ny, md->yjac.node, (size_t)md->yjac.nz * sizeof *all);
    r->iny = mblx_compile(md->g, n, all, st);
    mbl_free(all);
    if (!r->iny) return st && st->code ? st->code : MBL_ENOMEM;
    r->ny = ny;
    r->iny_work = mblx_tape_work_size(r->iny);
    /* the texts alone, for the evaluations without outputs (a sweep's skip_outputs, M^-1 at a point
     * that brings its Jacobian): iny's own instructions, so the texts are the same bit for bit as
     * with the outputs (a tape of the texts compiled alone, r->in, may round them differently);
     * NULL (every instruction needed, or out of memory): iny whole */
    uint32_t *sel = mbl_alloc_array(r->nin, sizeof *sel);
    if (sel) {
        for (size_t k = 0; k < r->nin; k++) sel[k] = (uint32_t)k;
        r->intx = mblx__subtape_new(r->iny, r->nin, sel);
        mbl_free(sel);
    }
    return 0;
}

int model_rtree_num_texts_y(const mbl_rtree_num *r, const double *syms, double *y, double *work, mbl_status *st)
{
    if (r->kin) return model_rtree_kin_texts_y(r, syms, y, work, st);
    const mblx_tape *t = y || !r->intx ? r->iny : mblx__subtape_tape(r->intx);
    int rc = mblx_tape_eval(t, syms, work, work + r->nin + r->ny, st);
    if (!rc && y) memcpy(y, work + r->nin, r->ny * sizeof *y);
    return rc;
}

int model_rtree_num_jac_y(const mbl_rtree_num *r, const double *syms, double *jac, double *y, double *work,
                          mbl_status *st)
{
    double *tv = work, *N = work + r->nin + r->ny + r->iny_work;
    int rc = model_rtree_num_texts_y(r, syms, y, work, st);
    if (rc) return rc;
    model_rtree_nrnea_tv(r, syms, tv, N, 1);
    model_rtree_jac_entries(r, N, jac);
    return 0;
}

int model_rtree_num_nbodies(const mbl_rtree_num *r) { return r->tree.nb; }

void model_rtree_num_body(const mbl_rtree_num *r, int b, int *parent, int *kind, int *q, const mblx_id **tn)
{
    *parent = r->tree.b[b].parent;
    *kind = r->tree.b[b].kind;
    *q = r->qidx[b];
    *tn = r->tn + (size_t)b * MBL_RTREE_NT;
}

size_t model_rtree_num_work(const mbl_rtree_num *r)
{
    size_t a = r->nin + r->in_work, b = r->iny ? r->nin + r->ny + r->iny_work : 0;
    return (a > b ? a : b) + (size_t)r->tree.nb * NB_SIZE;
}

int model_rtree_num_exprs(const mbl_model *md, const mbl_rtree_num *r, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    return model_rtree_formulate((mbl_model *)md, &r->tree, r->qidx, r->tn, r->gn, Fs, S, st);
}
