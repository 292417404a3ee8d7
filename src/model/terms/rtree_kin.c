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

#include "core/vec3.h"
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
        memcpy(K->Q1, B->Q1, sizeof K->Q1);
        memcpy(K->Q2, B->Q2, sizeof K->Q2);
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

/* unit Euler parameters e of a rotation matrix R (row-major, R = quat_rot_rm(e)): from the
 * largest of 4 e_k^2 (the trace's forms), which is positive (Shepperd's method) */
static void euler_of(const double *R, double *e)
{
    double t0 = R[0] + R[4] + R[8], t1 = R[0] - R[4] - R[8], t2 = R[4] - R[0] - R[8], t3 = R[8] - R[0] - R[4];
    int k = 0;
    double t = t0;
    if (t1 > t) k = 1, t = t1;
    if (t2 > t) k = 2, t = t2;
    if (t3 > t) k = 3, t = t3;
    double s = sqrt(1.0 + t), h = 0.5 / s; /* 2 |e_k| = s, h = 1 / (4 |e_k|) */
    /* ejk = 4 e_j e_k h: e_j e_k / |e_k| */
    double e01 = (R[7] - R[5]) * h, e02 = (R[2] - R[6]) * h, e03 = (R[3] - R[1]) * h;
    double e12 = (R[3] + R[1]) * h, e13 = (R[2] + R[6]) * h, e23 = (R[7] + R[5]) * h;
    switch (k) {
    case 0: e[0] = 0.5 * s, e[1] = e01, e[2] = e02, e[3] = e03; break;
    case 1: e[0] = e01, e[1] = 0.5 * s, e[2] = e12, e[3] = e13; break;
    case 2: e[0] = e02, e[1] = e12, e[2] = 0.5 * s, e[3] = e23; break;
    default: e[0] = e03, e[1] = e13, e[2] = e23, e[3] = 0.5 * s; break;
    }
}

void model_rtree_kin_euler(const mbl_rtree_num *r, const double *syms, const double *tv, double *E)
{
    for (int b = 0; b < r->tree.nb; b++) {
        if (r->eneed && !r->eneed[b]) continue;
        if (r->eneed && r->eneed[b] == 2) { /* read through even functions alone: from its A */
            euler_of(tv + (size_t)b * NTV + MBL_RTREE_A, E + 4 * (size_t)b);
            continue;
        }
        const rtree_kin *K = &r->kin[b];
        int p = r->tree.b[b].parent;
        double a[4], t[4], *e = E + 4 * (size_t)b;
        if (p >= 0) quat_mul(E + 4 * (size_t)p, K->Q1, a);
        else memcpy(a, K->Q1, sizeof a);
        if (r->tree.b[b].kind == MBL_RTREE_REV) {
            double h = 0.5 * (K->sgn * (r->qs[b] >= 0 ? syms[r->qs[b]] : 0.0));
            double z[4] = {cos(h), 0.0, 0.0, sin(h)};
            quat_mul(a, z, t);
        } else {
            memcpy(t, a, sizeof t);
        }
        quat_mul(t, K->Q2, e);
    }
}

/* The bodies whose Euler parameters the outputs read only through functions even in them (the
 * body's e negated alone leaves every node of all as it is, as a rotation A(e) = A(-e) does): their
 * e from their A (eneed 2, model_rtree_kin_euler), not by the chain of products from the ground */
static int euler_from_rotation(mbl_model *md, mbl_rtree_num *r, const mblx_id *all, size_t nall, mbl_status *st)
{
    mblx_id *out = mbl_alloc_array(nall + 1, sizeof *out);
    if (!out) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = 0;
    for (int b = 0; b < r->tree.nb && !rc; b++) {
        mblx_id es[4], en[4];
        size_t ne = 0;
        for (int k = 0; k < r->nst && ne < 4; k++)
            if ((size_t)r->st_src[k] >= r->nin && (r->st_src[k] - (int)r->nin) / 4 == b) {
                es[ne] = mblx_symbol_node(md->g, (size_t)r->st_sym[k]);
                en[ne] = mblx_neg(md->g, es[ne]);
                ne++;
            }
        if (!ne) continue;
        if (mblx_subst_many(md->g, nall, all, ne, es, en, out)) {
            rc = mblx_graph_status(md->g, st);
            break;
        }
        int same = 1;
        for (size_t i = 0; i < nall && same; i++) same = out[i] == all[i];
        if (same) r->eneed[b] = 2;
    }
    mbl_free(out);
    return rc;
}

/* The outputs' tape: from their stand-in form (rtree_y.c) when it is whole and reads no symbol past
 * the model's but the stand-ins, else from md->y and md->yjac (the kinematics the outputs read then
 * computed again by the tape) */
int model_rtree_kin_bind_outputs(mbl_model *md, mbl_rtree_num *r, mbl_status *st)
{
    size_t ny = (size_t)md->ny + (size_t)md->yjac.nz;
    int yst = r->ysn && r->nyj == md->yjac.nz;
    size_t nall = ny + (yst ? 6 * (size_t)r->nphi : 0); /* with the wrenches (rtree_num.h) */
    mblx_id *all = mbl_alloc_array(nall, sizeof *all);
    if (!all) return mbl_error(st, MBL_ENOMEM, "out of memory");
    size_t next = (size_t)md->nsym;
    for (int k = 0; yst && k < r->nst; k++)
        if ((size_t)r->st_sym[k] + 1 > next) next = (size_t)r->st_sym[k] + 1;
    char *is_st = yst ? mbl_calloc(next + 1, 1) : NULL;
    if (yst && !is_st) {
        mbl_free(all);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int k = 0; yst && k < r->nst; k++) is_st[r->st_sym[k]] = 1;
    size_t ncopy = 0;
    if (yst) { /* is_st: 2 for a stand-in the outputs read, 3 for a model's symbol they read */
        memcpy(all, r->ysn, (size_t)md->ny * sizeof *all);
        if (md->yjac.nz) memcpy(all + md->ny, r->yjsn, (size_t)md->yjac.nz * sizeof *all);
        if (r->nphi) memcpy(all + ny, r->yphn, 6 * (size_t)r->nphi * sizeof *all);
        for (size_t i = 0; i < nall && yst; i++) {
            size_t cnt;
            const uint32_t *d = mblx_node_deps(md->g, all[i], &cnt);
            for (size_t k = 0; k < cnt && yst; k++) {
                yst = d[k] < (uint32_t)md->nsym || (d[k] < next && is_st[d[k]]);
                if (yst) is_st[d[k]] = d[k] < (uint32_t)md->nsym ? 3 : 2;
            }
        }
    }
    if (yst) { /* only the stand-ins read, the Euler parameters only of their bodies and ancestors */
        int m = 0;
        for (int k = 0; k < r->nst; k++)
            if (is_st[r->st_sym[k]] == 2) r->st_sym[m] = r->st_sym[k], r->st_src[m++] = r->st_src[k];
        r->nst = m;
        for (size_t k = 0; k < (size_t)md->nsym; k++)
            if (is_st[k] == 3) ncopy = k + 1;
        mbl_free(r->eneed);
        r->eneed = mbl_calloc((size_t)r->tree.nb + 1, 1);
        if (!r->eneed || euler_from_rotation(md, r, all, nall, st)) yst = 0;
        for (int k = 0; yst && k < r->nst; k++) {
            int b = (size_t)r->st_src[k] >= r->nin ? (r->st_src[k] - (int)r->nin) / 4 : -1;
            if (b >= 0 && r->eneed[b] == 2) continue;
            for (; b >= 0; b = r->tree.b[b].parent) r->eneed[b] = 1;
        }
    }
    if (!yst) {
        nall = ny, r->nyc = 0; /* the entries whole from md->yjac */
        memcpy(all, md->y, (size_t)md->ny * sizeof *all);
        if (md->yjac.nz) memcpy(all + md->ny, md->yjac.node, (size_t)md->yjac.nz * sizeof *all);
    }
    mbl_free(is_st);
    r->iny = mblx_compile(md->g, nall, all, st);
    mbl_free(all);
    if (!r->iny) return st && st->code ? st->code : MBL_ENOMEM;
    r->ny = ny;
    r->yst = yst;
    r->nsym0 = ncopy;
    r->next = next;
    size_t w = mblx_tape_work_size(r->iny);
    r->iny_regs = w > r->in_work ? w : r->in_work; /* also the room of the texts' values' tape */
    r->iny_work = r->iny_regs + (yst ? next + 4 * (size_t)r->tree.nb : 0);
    if (r->nyc) /* the tape's outputs, then S (6 per body) */
        r->iny_work += nall + 6 * (size_t)r->tree.nb;
    return 0;
}

/* The entries' chain parts (rtree_num.h, yc_*) from the tape's outputs o (the outputs, the entries'
 * direct parts, then the wrenches) into y: each entry its direct part plus S_j . Phi for each
 * wrench Phi of a body its joint j carries (rtree_y.c's chain_add sums the wrenches first); S: 6
 * per body */
static void chain_parts(const mbl_rtree_num *r, const double *tv, const double *o, double *y, double *S)
{
    const double *phi = o + r->ny;
    memcpy(y, o, r->ny * sizeof *y);
    for (int b = 0; b < r->tree.nb; b++) {
        const double *tb = tv + (size_t)b * NTV, *u = tb + MBL_RTREE_U;
        double *s = S + 6 * (size_t)b;
        if (r->tree.b[b].kind == MBL_RTREE_REV) {
            s[0] = u[0], s[1] = u[1], s[2] = u[2];
            vec3_cross(tb + MBL_RTREE_P, u, s + 3);
        } else if (r->tree.b[b].kind == MBL_RTREE_PRI) {
            s[0] = s[1] = s[2] = 0.0, s[3] = u[0], s[4] = u[1], s[5] = u[2];
        }
    }
    for (int t = 0; t < r->nyc; t++) {
        const double *s = S + 6 * (size_t)r->yc_b[t], *f = phi + 6 * (size_t)r->yc_phi[t];
        y[r->yc_pos[t]] += s[0] * f[0] + s[1] * f[1] + s[2] * f[2] + s[3] * f[3] + s[4] * f[4] + s[5] * f[5];
    }
}

int model_rtree_kin_texts_y(const mbl_rtree_num *r, const double *syms, double *y, double *work, mbl_status *st)
{
    double *regs = work + r->nin + r->ny;
    int rc = model_rtree_num_texts(r, syms, work, regs, st);
    if (rc || !y) return rc;
    if (!r->yst) return mblx_tape_eval(r->iny, syms, y, regs, st);
    double *ext = regs + r->iny_regs, *E = ext + r->next;
    model_rtree_kin_euler(r, syms, work, E);
    memcpy(ext, syms, r->nsym0 * sizeof *ext);
    for (int k = 0; k < r->nst; k++) {
        int s = r->st_src[k];
        ext[r->st_sym[k]] = (size_t)s < r->nin ? work[s] : E[(size_t)s - r->nin];
    }
    if (!r->nyc) return mblx_tape_eval(r->iny, ext, y, regs, st);
    double *o = E + 4 * (size_t)r->tree.nb, *S = o + r->ny + 6 * (size_t)r->nphi;
    int rc2 = mblx_tape_eval(r->iny, ext, o, regs, st);
    if (!rc2) chain_parts(r, work, o, y, S);
    return rc2;
}
