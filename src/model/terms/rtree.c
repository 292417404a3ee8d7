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
