/* The tree's kinematic texts computed natively (model/rtree.h, mbl_rtree_body.local): each body's
 * axis u, its point p, rotation A and origin r from its parent's A and r, the joint's coordinate
 * and the joint's constant local data, as a robot library computes a joint's placement (a fixed
 * transform times the joint's motion), instead of by the expression tape of the texts the
 * mechanism compiler writes for the same quantities (Euler parameters multiplied through the tree).
 * The two agree to rounding; the term's partials (rtree.c) read the values, never their
 * expressions, so the Jacobian stays exact. The expression form (the sensitivities, the code
 * generator, the outputs' Jacobian) still reads the texts' nodes. */
#include <math.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/terms/rtree_num.h"

static int is_identity(const double *C)
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int k = 0; k < 9; k++)
        if (C[k] != I[k]) return 0;
    return 1;
}

int model_rtree_kin_setup(const mbl_model *md, const mbl_rtree *t, const mblx_id *tn, const mblx_id *gn,
                          const mblx_id *ln, mbl_rtree_num *r, mbl_status *st)
{
    int nb = t->nb, all_num = 1;
    for (int b = 0; b < nb; b++)
        if (!t->b[b].local) return 0;
    size_t nlv = (size_t)nb * NLV + 3;
    mblx_id *lv = mbl_alloc_array(nlv, sizeof *lv);
    r->kin = mbl_alloc_array((size_t)nb, sizeof *r->kin);
    r->qs = mbl_alloc_array((size_t)nb, sizeof *r->qs);
    r->lv0 = mbl_alloc_array(nlv, sizeof *r->lv0);
    if (!lv || !r->kin || !r->qs || !r->lv0) {
        mbl_free(lv);
        mbl_error(st, MBL_ENOMEM, "out of memory");
        return -1;
    }
    for (int b = 0; b < nb; b++) {
        const mbl_rtree_body *B = &t->b[b];
        rtree_kin *K = &r->kin[b];
        memcpy(K->C1, B->C1, sizeof K->C1);
        memcpy(K->C2, B->C2, sizeof K->C2);
        K->sgn = B->sgn;
        K->c1id = is_identity(K->C1);
        K->c2id = is_identity(K->C2);
        int q = r->qidx[b];
        r->qs[b] = q >= 0 ? (int)mblx_symbol_index(md->g, md->q[q]) : -1;
        mblx_id *l = lv + (size_t)b * NLV;
        memcpy(l, ln + (size_t)b * 6, 6 * sizeof *l);
        memcpy(l + 6, tn + (size_t)b * MBL_RTREE_NT + MBL_RTREE_CM, (NLV - 6) * sizeof *l);
    }
    memcpy(lv + (size_t)nb * NLV, gn, 3 * sizeof *lv);
    for (size_t k = 0; k < nlv && all_num; k++) all_num = lv[k] != MBLX_NONE && mblx_is_const(md->g, lv[k], &r->lv0[k]);
    if (!all_num) { /* parameters: a tape of these values alone */
        mbl_free(r->lv0);
        r->lv0 = NULL;
        r->lvt = mblx_compile(md->g, nlv, lv, st);
        if (r->lvt) r->in_work = nlv + mblx_tape_work_size(r->lvt);
    }
    mbl_free(lv);
    if (!all_num && !r->lvt) return -1;
    r->nlv = nlv;
    return 1;
}

/* C = A B, 3 x 3 row-major (C not A or B) */
static inline void mm3(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 3; i++) {
        const double a0 = A[3 * i], a1 = A[3 * i + 1], a2 = A[3 * i + 2];
        C[3 * i] = a0 * B[0] + a1 * B[3] + a2 * B[6];
        C[3 * i + 1] = a0 * B[1] + a1 * B[4] + a2 * B[7];
        C[3 * i + 2] = a0 * B[2] + a1 * B[5] + a2 * B[8];
    }
}

/* the texts of every body, parents first (rtree.h's formulas for u, p, A, r), from the values lv
 * (NLV per body, then gravity) */
static void kin_texts(const mbl_rtree_num *r, const double *syms, const double *lv, double *tv)
{
    int nb = r->tree.nb;
    for (int b = 0; b < nb; b++) {
        const rtree_kin *K = &r->kin[b];
        const double *sp = lv + (size_t)b * NLV, *sc = sp + 3;
        double *tb = tv + (size_t)b * NTV, W[9], WR[9];
        int p = r->tree.b[b].parent, kind = r->tree.b[b].kind;
        const double *Ap = p >= 0 ? tv + (size_t)p * NTV + MBL_RTREE_A : NULL;
        const double *rp = p >= 0 ? tv + (size_t)p * NTV + MBL_RTREE_R : NULL;
        double *u = tb + MBL_RTREE_U, *P = tb + MBL_RTREE_P, *A = tb + MBL_RTREE_A, *o = tb + MBL_RTREE_R;
        if (!Ap) memcpy(W, K->C1, sizeof W);
        else if (K->c1id) memcpy(W, Ap, sizeof W);
        else mm3(Ap, K->C1, W);
        u[0] = K->sgn * W[2], u[1] = K->sgn * W[5], u[2] = K->sgn * W[8];
        if (Ap) {
            for (int i = 0; i < 3; i++)
                P[i] = rp[i] + (Ap[3 * i] * sp[0] + Ap[3 * i + 1] * sp[1] + Ap[3 * i + 2] * sp[2]);
        } else {
            memcpy(P, sp, 3 * sizeof *P);
        }
        double q = r->qs[b] >= 0 ? syms[r->qs[b]] : 0.0;
        const double *Wq = W;
        if (kind == MBL_RTREE_REV) { /* W Rz(sgn q): its first two columns turned */
            double c = cos(q), s = K->sgn * sin(q);
            for (int i = 0; i < 3; i++) {
                const double w0 = W[3 * i], w1 = W[3 * i + 1];
                WR[3 * i] = c * w0 + s * w1, WR[3 * i + 1] = c * w1 - s * w0, WR[3 * i + 2] = W[3 * i + 2];
            }
            Wq = WR;
        }
        if (K->c2id) memcpy(A, Wq, 9 * sizeof *A);
        else mm3(Wq, K->C2, A);
        for (int i = 0; i < 3; i++) {
            double x = P[i];
            if (kind == MBL_RTREE_PRI) x += q * u[i];
            o[i] = x - (A[3 * i] * sc[0] + A[3 * i + 1] * sc[1] + A[3 * i + 2] * sc[2]);
        }
        memcpy(tb + MBL_RTREE_CM, sp + 6, (NLV - 6) * sizeof *tb);
    }
    memcpy(tv + (size_t)nb * NTV, lv + (size_t)nb * NLV, 3 * sizeof *tv);
}

int model_rtree_num_texts(const mbl_rtree_num *r, const double *syms, double *tv, double *work, mbl_status *st)
{
    if (!r->kin) return mblx_tape_eval(r->in, syms, tv, work, st);
    const double *lv = r->lv0;
    if (!lv) {
        int rc = mblx_tape_eval(r->lvt, syms, work, work + r->nlv, st);
        if (rc) return rc;
        lv = work;
    }
    kin_texts(r, syms, lv, tv);
    return 0;
}
