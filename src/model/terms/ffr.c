/* The structured term of the canonical DAE: floating-frame flexible bodies (ffr.h).
 *
 * Their rows of the equations of motion and the Jacobian entries of those rows are built here as
 * expression nodes directly from the constant sparse matrices (Mff, P, K, C) and vectors (Sb, c1,
 * c2): each row a short sum over the matrix row's nonzeros, the frame rows sums over the body, and
 * every Jacobian entry written in closed form (derived in ffr.h's formula), so the expression
 * engine never differentiates them (a long sum differentiated by each of its n variables costs
 * O(n^2)). The model compiles them into the same tapes as every other row: the operating point,
 * every method and the sparse eigen paths see them through md->tape_F and md->tape_jac. Planar
 * bodies are evaluated numerically by default (model/terms/ffr_num.c, the same closed forms without the
 * nodes); for them this form is built only on demand (sensitivities, symbolic linear models). */
#include "model/ffr.h"

#include <math.h>

#include "model/ffr3.h"
#include <string.h>

#include "model/model_internal.h"

void model_ffr_invariants_free(mbl_ffr_invariants *inv)
{
    if (!inv) return;
    mbl_free(inv->Sb), mbl_free(inv->c1), mbl_free(inv->c2);
    mbla_csc_free(inv->Mff), mbla_csc_free(inv->P), mbla_csc_free(inv->K);
    mbla_csc_free(inv->H1), mbla_csc_free(inv->Hx), mbla_csc_free(inv->Hy), mbla_csc_free(inv->Ha);
    memset(inv, 0, sizeof *inv);
}

void model_ffr_body_free(mbl_ffr_body *b)
{
    if (!b) return;
    mbl_free(b->name);
    for (int k = 0; k < 3; k++) mbl_free(b->coord[k]);
    if (b->qf)
        for (int i = 0; i < b->inv.nf; i++) mbl_free(b->qf[i]);
    mbl_free(b->qf);
    model_ffr_invariants_free(&b->inv);
    mbl_free(b->X0), mbl_free(b->ndof);
    mbl_free(b->gtext[0]), mbl_free(b->gtext[1]), mbl_free(b->gtext[2]);
    if (b->sp) model_ffr3_free(b->sp), mbl_free(b->sp);
    for (int k = 0; k < b->nfac; k++) mbl_free(b->fac[k].text);
    mbl_free(b->lexp), mbl_free(b->kcls);
    mbla_csc_free(b->Cm);
    memset(b, 0, sizeof *b);
}

int model_ffr_damping(const mbl_ffr_body *b, const mbla_csc *Mass, const mbla_csc *K, mbla_csc **C, mbl_status *st)
{
    *C = NULL;
    if (b->alpha == 0 && b->beta == 0) return b->Cm ? mbla_csc_copy(b->Cm, C, st) : 0;
    int rc = mbla_csc_add(b->alpha, Mass, b->beta, K, C, st);
    if (rc || !b->Cm) return rc;
    mbla_csc *R = *C;
    rc = mbla_csc_add(1.0, R, 1.0, b->Cm, C, st);
    mbla_csc_free(R);
    return rc;
}

/* c0 x + c1 y, skipping zero coefficients */
static mblx_id lin2(mblx_graph *g, double c0, mblx_id x, double c1, mblx_id y)
{
    mblx_id t[2];
    size_t n = 0;
    if (c0 != 0) t[n++] = mblx_scale(g, c0, x);
    if (c1 != 0) t[n++] = mblx_scale(g, c1, y);
    return n ? mblx_sum(g, n, t) : mblx_const(g, 0.0);
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0.0;
}

typedef struct builder {
    mbl_model *md;
    mblx_graph *g;
    mbl_sjac *J;
    int ja, jv, jq;  /* unknown column offsets of the a, v, q blocks */
    int err;
} builder;

static void push(builder *B, int row, int col, mblx_id e)
{
    if (B->err || is_zero(B->g, e)) return;
    if (model_sjac_push(B->J, row, col, e)) B->err = 1;
}

/* sum_j X[j] x[j] + c over the column `col` of a CSC matrix (scaled by sgn), x symbols of idx */
static mblx_id col_dot(mblx_graph *g, const mbla_csc *X, int col, double sgn, const mblx_id *sym, const int *idx,
                       double c, mblx_id *scratch)
{
    size_t n = 0;
    if (c != 0) scratch[n++] = mblx_const(g, c);
    if (X)
        for (int p = X->p[col]; p < X->p[col + 1]; p++)
            if (X->x[p] != 0) scratch[n++] = mblx_scale(g, sgn * X->x[p], sym[idx[X->i[p]]]);
    return mblx_sum(g, n, scratch);
}

/* The rows and Jacobian entries of a body with invariants inv, damping matrix C (NULL: none) and
 * gravity gn[2] (nodes). Linear in (inv, C) at a fixed gravity: model_ffr_param_deriv calls it with
 * the invariants' derivatives. inv's matrices may be NULL (zero). */
/* The nodes of one body's rows shared by their three parts (formulate): the body's frame and its
 * elastic coordinates, the gravity terms and the vectors over the body. */
typedef struct body_rows {
    mblx_graph *g;
    builder *B;
    const mbl_ffr_invariants *inv;
    const mbla_csc *C;
    mblx_id *Fs;
    int nf, iR0, iR1, ith;
    const int *fi;
    const mblx_id *a, *v, *q;
    mblx_id thd, thdd, c, s, thd2, G0, G1, AtG0, AtG1, AJtG0, AJtG1;
    const double *Sb0, *Sb1;
    mblx_id *y1, *y2, *Mv, *Pv, *Pa, *t3;
    mblx_id sv[2], w1[2];
    mblx_id w2[2];
    mblx_id Jn, y1v, y2a, Jts0, Jts1, av0, av1, As0, As1, two_thd;
    double *vM, *vP, *vK, *vC, *vH, *vX, *vY, *vA;
    int *mark, *list;
    mblx_id *hs;                /* scratch for the geometric stiffness sums (4 nf + 4) */
} body_rows;

/* The frame rows R: m G + A b, b = thdd Jt s - thd^2 s + 2 thd Jt w1 + w2, and their entries. */
static void frame_rows_R(const body_rows *x)
{
    mblx_graph *g = x->g;
    builder *B = x->B;
    const mbl_ffr_invariants *inv = x->inv;
    mblx_id *Fs = x->Fs;
    int nf = x->nf, iR0 = x->iR0, iR1 = x->iR1, ith = x->ith;
    const int *fi = x->fi;
    mblx_id thd = x->thd, thdd = x->thdd, c = x->c, s = x->s, thd2 = x->thd2, G0 = x->G0, G1 = x->G1;
    const double *Sb0 = x->Sb0, *Sb1 = x->Sb1;
    const mblx_id *sv = x->sv, *w1 = x->w1, *w2 = x->w2;
    mblx_id Jts0 = x->Jts0, Jts1 = x->Jts1, av0 = x->av0, av1 = x->av1, two_thd = x->two_thd;
    /* ---- frame rows R: m G + A b, b = thdd Jt s - thd^2 s + 2 thd Jt w1 + w2 ---- */
    {
        mblx_id bb[2];
        for (int k = 0; k < 2; k++) {
            mblx_id Jts = k ? Jts1 : Jts0, Jtw1 = k ? w1[0] : mblx_neg(g, w1[1]);
            mblx_id t[4] = {mblx_mul(g, thdd, Jts), mblx_neg(g, mblx_mul(g, thd2, sv[k])), mblx_mul(g, two_thd, Jtw1),
                            w2[k]};
            bb[k] = mblx_sum(g, 4, t);
        }
        mblx_id Ab0 = mblx_sub(g, mblx_mul(g, c, bb[0]), mblx_mul(g, s, bb[1]));
        mblx_id Ab1 = mblx_add(g, mblx_mul(g, s, bb[0]), mblx_mul(g, c, bb[1]));
        /* A Jt b = Jt A b (plane rotations commute) = (-(A b)_1, (A b)_0) */
        mblx_id AJtb[2] = {mblx_neg(g, Ab1), Ab0};
        Fs[iR0] = mblx_add(g, Fs[iR0], mblx_add(g, mblx_scale(g, inv->m, G0), Ab0));
        Fs[iR1] = mblx_add(g, Fs[iR1], mblx_add(g, mblx_scale(g, inv->m, G1), Ab1));
        /* v_th: A(-2 thd s + 2 Jt w1) */
        mblx_id e0 = mblx_add(g, mblx_mul(g, mblx_scale(g, -2.0, thd), sv[0]), mblx_scale(g, -2.0, w1[1]));
        mblx_id e1 = mblx_add(g, mblx_mul(g, mblx_scale(g, -2.0, thd), sv[1]), mblx_scale(g, 2.0, w1[0]));
        mblx_id Ae[2] = {mblx_sub(g, mblx_mul(g, c, e0), mblx_mul(g, s, e1)),
                         mblx_add(g, mblx_mul(g, s, e0), mblx_mul(g, c, e1))};
        mblx_id av[2] = {av0, av1};
        /* A (thdd Jt - thd^2 I): 2x2 entries, and 2 thd A Jt */
        mblx_id Jt2[2][2] = {{mblx_neg(g, thd2), mblx_neg(g, thdd)}, {thdd, mblx_neg(g, thd2)}};
        mblx_id Bq[2][2], BJ[2][2];
        mblx_id Am[2][2] = {{c, mblx_neg(g, s)}, {s, c}};
        mblx_id AJt[2][2] = {{mblx_neg(g, s), mblx_neg(g, c)}, {c, mblx_neg(g, s)}};
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 2; k++) {
                Bq[r][k] = mblx_add(g, mblx_mul(g, Am[r][0], Jt2[0][k]), mblx_mul(g, Am[r][1], Jt2[1][k]));
                BJ[r][k] = mblx_mul(g, two_thd, AJt[r][k]);
            }
        for (int r = 0; r < 2; r++) {
            int row = r ? iR1 : iR0;
            push(B, row, B->ja + row, mblx_const(g, inv->m));
            push(B, row, B->ja + ith, av[r]);
            push(B, row, B->jv + ith, Ae[r]);
            push(B, row, B->jq + ith, AJtb[r]);
            for (int j = 0; j < nf; j++) {
                if (Sb0[j] == 0 && Sb1[j] == 0) continue;
                push(B, row, B->ja + fi[j], lin2(g, Sb0[j], Am[r][0], Sb1[j], Am[r][1]));
                push(B, row, B->jv + fi[j], lin2(g, Sb0[j], BJ[r][0], Sb1[j], BJ[r][1]));
                push(B, row, B->jq + fi[j], lin2(g, Sb0[j], Bq[r][0], Sb1[j], Bq[r][1]));
            }
        }
    }
}

/* The frame row th: a.G + J thdd + 2 thd y1.qf' + y2.qf'', and its entries. */
static void frame_row_th(const body_rows *x)
{
    mblx_graph *g = x->g;
    builder *B = x->B;
    mblx_id *Fs = x->Fs;
    int nf = x->nf, iR0 = x->iR0, iR1 = x->iR1, ith = x->ith;
    const int *fi = x->fi;
    mblx_id thdd = x->thdd, G0 = x->G0, G1 = x->G1, AJtG0 = x->AJtG0, AJtG1 = x->AJtG1;
    const double *Sb0 = x->Sb0, *Sb1 = x->Sb1;
    const mblx_id *y1 = x->y1, *y2 = x->y2, *Mv = x->Mv, *Pa = x->Pa;
    mblx_id Jn = x->Jn, y1v = x->y1v, y2a = x->y2a, av0 = x->av0, av1 = x->av1, As0 = x->As0, As1 = x->As1;
    mblx_id two_thd = x->two_thd;
    /* ---- frame row th: a.G + J thdd + 2 thd y1.qf' + y2.qf'' ---- */
    {
        mblx_id t[4] = {mblx_add(g, mblx_mul(g, av0, G0), mblx_mul(g, av1, G1)), mblx_mul(g, Jn, thdd),
                        mblx_mul(g, two_thd, y1v), y2a};
        Fs[ith] = mblx_add(g, Fs[ith], mblx_sum(g, 4, t));
        push(B, ith, B->ja + iR0, av0);
        push(B, ith, B->ja + iR1, av1);
        push(B, ith, B->ja + ith, Jn);
        push(B, ith, B->jv + ith, mblx_scale(g, 2.0, y1v));
        push(B, ith, B->jq + ith, mblx_neg(g, mblx_add(g, mblx_mul(g, As0, G0), mblx_mul(g, As1, G1))));
        mblx_id two_thdd = mblx_scale(g, 2.0, thdd);
        for (int j = 0; j < nf; j++) {
            push(B, ith, B->ja + fi[j], y2[j]);
            push(B, ith, B->jv + fi[j], mblx_mul(g, two_thd, y1[j]));
            mblx_id tq[4] = {lin2(g, Sb0[j], AJtG0, Sb1[j], AJtG1), mblx_mul(g, two_thdd, y1[j]),
                             mblx_mul(g, two_thd, Mv[j]), mblx_neg(g, Pa[j])};
            push(B, ith, B->jq + fi[j], mblx_sum(g, 4, tq));
        }
    }
}

/* The elastic rows: row i of Mff, K, C and P merged over the coordinates they couple, and their
 * entries. */
static void elastic_rows(const body_rows *x)
{
    mblx_graph *g = x->g;
    builder *B = x->B;
    const mbl_ffr_invariants *inv = x->inv;
    const mbla_csc *C = x->C;
    mblx_id *Fs = x->Fs;
    int nf = x->nf, iR0 = x->iR0, iR1 = x->iR1, ith = x->ith;
    const int *fi = x->fi;
    const mblx_id *a = x->a, *v = x->v, *q = x->q;
    mblx_id thd = x->thd, thdd = x->thdd, c = x->c, s = x->s, thd2 = x->thd2;
    mblx_id AtG0 = x->AtG0, AtG1 = x->AtG1, AJtG0 = x->AJtG0, AJtG1 = x->AJtG1;
    const double *Sb0 = x->Sb0, *Sb1 = x->Sb1;
    const mblx_id *y1 = x->y1, *y2 = x->y2, *Pv = x->Pv;
    mblx_id *t3 = x->t3, two_thd = x->two_thd;
    double *vM = x->vM, *vP = x->vP, *vK = x->vK, *vC = x->vC, *vH = x->vH, *vX = x->vX, *vY = x->vY, *vA = x->vA;
    int *mark = x->mark, *list = x->list;
    /* the geometric stiffness KG = -(A^T G)_x H1 - (A^T G)_y Hy + th'' Ha + th'^2 Hx (ffr.h), nodes of
     * its coefficients */
    mblx_id nAtG0 = mblx_neg(g, AtG0), nAtG1 = mblx_neg(g, AtG1);
    /* ---- elastic rows ---- */
    for (int i = 0; i < nf && !B->err; i++) {
        int row = fi[i];
        /* row i of Mff, K, C (symmetric: column i) and of P (-column i), merged */
        int nl = 0;
        const mbla_csc *mats[8] = {inv->Mff, inv->P, inv->K, C, inv->H1, inv->Hx, inv->Hy, inv->Ha};
        double *vals[8] = {vM, vP, vK, vC, vH, vX, vY, vA};
        for (int k = 0; k < 8; k++) {
            const mbla_csc *X = mats[k];
            if (!X) continue;
            for (int p = X->p[i]; p < X->p[i + 1]; p++) {
                int j = X->i[p];
                if (!mark[j]) mark[j] = 1, list[nl++] = j;
                vals[k][j] += (k == 1 ? -1.0 : 1.0) * X->x[p];
            }
        }
        size_t nt = 0;
        mblx_id *T = t3;
        T[nt++] = lin2(g, Sb0[i], AtG0, Sb1[i], AtG1);
        T[nt++] = mblx_mul(g, y2[i], thdd);
        T[nt++] = mblx_neg(g, mblx_mul(g, y1[i], thd2));
        T[nt++] = mblx_mul(g, two_thd, Pv[i]);
        size_t nh = 0, nx = 0, ny = 0, na = 0;
        mblx_id *Th = x->hs, *Tx = x->hs + nf + 1, *Ty = x->hs + 2 * (size_t)nf + 2, *Ta = x->hs + 3 * (size_t)nf + 3;
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            if (vM[j] != 0) T[nt++] = mblx_scale(g, vM[j], a[fi[j]]);
            if (vC[j] != 0) T[nt++] = mblx_scale(g, vC[j], v[fi[j]]);
            if (vK[j] != 0) T[nt++] = mblx_scale(g, vK[j], q[fi[j]]);
            if (vH[j] != 0) Th[nh++] = mblx_scale(g, vH[j], q[fi[j]]);
            if (vX[j] != 0) Tx[nx++] = mblx_scale(g, vX[j], q[fi[j]]);
            if (vY[j] != 0) Ty[ny++] = mblx_scale(g, vY[j], q[fi[j]]);
            if (vA[j] != 0) Ta[na++] = mblx_scale(g, vA[j], q[fi[j]]);
        }
        /* (H1 qf)_i, (Hx qf)_i and the row's -(A^T G)_x (H1 qf)_i + th'^2 (Hx qf)_i */
        mblx_id hq = mblx_sum(g, nh, Th), xq = mblx_sum(g, nx, Tx);
        if (nh) T[nt++] = mblx_mul(g, nAtG0, hq);
        if (nx) T[nt++] = mblx_mul(g, thd2, xq);
        /* (Hy qf)_i, (Ha qf)_i and the row's -(A^T G)_y (Hy qf)_i + th'' (Ha qf)_i (modal bodies) */
        mblx_id yq = mblx_sum(g, ny, Ty), aq = mblx_sum(g, na, Ta);
        if (ny) T[nt++] = mblx_mul(g, nAtG1, yq);
        if (na) T[nt++] = mblx_mul(g, thdd, aq);
        Fs[row] = mblx_add(g, Fs[row], mblx_sum(g, nt, T));
        /* d/dR'' (-(A^T G)_x hq - (A^T G)_y yq) = -(c, s) hq + (s, -c) yq, d/dth = -(A^T G)_y hq +
         * (A^T G)_x yq, d/dth'' (th'' aq) = aq, d/dth' (th'^2 xq) = 2 th' xq */
        mblx_id ghq[2] = {mblx_sub(g, mblx_mul(g, s, yq), mblx_mul(g, c, hq)),
                          mblx_neg(g, mblx_add(g, mblx_mul(g, s, hq), mblx_mul(g, c, yq)))};
        push(B, row, B->ja + iR0, mblx_add(g, lin2(g, Sb0[i], c, Sb1[i], mblx_neg(g, s)), ghq[0]));
        push(B, row, B->ja + iR1, mblx_add(g, lin2(g, Sb0[i], s, Sb1[i], c), ghq[1]));
        push(B, row, B->ja + ith, mblx_add(g, y2[i], aq));
        push(B, row, B->jv + ith,
             mblx_add(g, mblx_sub(g, mblx_scale(g, 2.0, Pv[i]), mblx_mul(g, two_thd, y1[i])), mblx_mul(g, two_thd, xq)));
        push(B, row, B->jq + ith,
             mblx_add(g, mblx_sub(g, lin2(g, Sb0[i], AJtG0, Sb1[i], AJtG1), mblx_mul(g, AtG1, hq)), mblx_mul(g, AtG0, yq)));
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            if (vM[j] != 0) push(B, row, B->ja + fi[j], mblx_const(g, vM[j]));
            mblx_id ev[2] = {mblx_scale(g, 2.0 * vP[j], thd), mblx_const(g, vC[j])};
            push(B, row, B->jv + fi[j], mblx_sum(g, 2, ev));
            mblx_id eq[6] = {mblx_scale(g, vP[j] + vA[j], thdd), mblx_scale(g, vX[j] - vM[j], thd2), mblx_const(g, vK[j]),
                             mblx_scale(g, vH[j], nAtG0), mblx_scale(g, vY[j], nAtG1)};
            push(B, row, B->jq + fi[j], mblx_sum(g, 5, eq));
            mark[j] = 0, vM[j] = vP[j] = vK[j] = vC[j] = vH[j] = vX[j] = vY[j] = vA[j] = 0;
        }
    }
}

static int formulate(mbl_model *md, const mbl_ffr_invariants *inv, const mbla_csc *C, const mblx_id gn[2],
                     const int *qidx, mblx_id *Fs, mbl_sjac *J, mbl_status *st)
{
    int nf = inv->nf;
    mblx_graph *g = md->g;
    builder B = {md, g, J, model_blk0(md, MBL_BLK_A), model_blk0(md, MBL_BLK_V), model_blk0(md, MBL_BLK_Q),
                 0};
    const int *fi = qidx + 3; /* model coordinate index of elastic coordinate j */
    int iR0 = qidx[0], iR1 = qidx[1], ith = qidx[2];
    size_t ns = (size_t)nf + 8;
    mblx_id *scr = mbl_alloc_array(ns, sizeof *scr);
    mblx_id *y1 = mbl_alloc_array((size_t)nf + 1, sizeof *y1), *y2 = mbl_alloc_array((size_t)nf + 1, sizeof *y2);
    mblx_id *Mv = mbl_alloc_array((size_t)nf + 1, sizeof *Mv), *Pv = mbl_alloc_array((size_t)nf + 1, sizeof *Pv);
    mblx_id *Pa = mbl_alloc_array((size_t)nf + 1, sizeof *Pa);
    double *vM = mbl_calloc((size_t)nf + 1, sizeof *vM), *vP = mbl_calloc((size_t)nf + 1, sizeof *vP);
    double *vK = mbl_calloc((size_t)nf + 1, sizeof *vK), *vC = mbl_calloc((size_t)nf + 1, sizeof *vC);
    double *vH = mbl_calloc((size_t)nf + 1, sizeof *vH), *vX = mbl_calloc((size_t)nf + 1, sizeof *vX);
    double *vY = mbl_calloc((size_t)nf + 1, sizeof *vY), *vA = mbl_calloc((size_t)nf + 1, sizeof *vA);
    mblx_id *hs = mbl_alloc_array((size_t)4 * nf + 4, sizeof *hs);
    int *mark = mbl_calloc((size_t)nf + 1, sizeof *mark), *list = mbl_alloc_array((size_t)nf + 1, sizeof *list);
    mblx_id *t3 = mbl_alloc_array((size_t)4 * nf + 8, sizeof *t3);
    if (!scr || !y1 || !y2 || !Mv || !Pv || !Pa || !vM || !vP || !vK || !vC || !vH || !vX || !vY || !vA || !hs || !mark || !list || !t3) {
        B.err = 1;
        goto out;
    }
    const mblx_id *a = md->a, *v = md->v, *q = md->q;
    mblx_id th = q[ith], thd = v[ith], thdd = a[ith];
    mblx_id c = mblx_cos(g, th), s = mblx_sin(g, th);
    mblx_id thd2 = mblx_mul(g, thd, thd);
    /* G = R'' - g, A^T G, (A Jt)^T G = (AtG1, -AtG0) */
    mblx_id G0 = mblx_sub(g, a[iR0], gn[0]), G1 = mblx_sub(g, a[iR1], gn[1]);
    mblx_id AtG0 = mblx_add(g, mblx_mul(g, c, G0), mblx_mul(g, s, G1));
    mblx_id AtG1 = mblx_sub(g, mblx_mul(g, c, G1), mblx_mul(g, s, G0));
    mblx_id AJtG0 = AtG1, AJtG1 = mblx_neg(g, AtG0);
    const double *Sb0 = inv->Sb, *Sb1 = inv->Sb + nf;

    /* vectors over the body: y1 = c1 + Mff qf, y2 = c2 + P qf, Mff qf', P qf', P qf'' */
    for (int i = 0; i < nf; i++) {
        y1[i] = col_dot(g, inv->Mff, i, 1.0, q, fi, inv->c1[i], scr);
        y2[i] = col_dot(g, inv->P, i, -1.0, q, fi, inv->c2[i], scr); /* row i of P = -column i */
        Mv[i] = col_dot(g, inv->Mff, i, 1.0, v, fi, 0.0, scr);
        Pv[i] = col_dot(g, inv->P, i, -1.0, v, fi, 0.0, scr);
        Pa[i] = col_dot(g, inv->P, i, -1.0, a, fi, 0.0, scr);
    }
    /* s = s0 + Sb qf, w1 = Sb qf', w2 = Sb qf'' (body frame) */
    mblx_id sv[2], w1[2], w2[2];
    for (int k = 0; k < 2; k++) {
        const double *Sk = inv->Sb + (size_t)k * nf;
        size_t n0 = 0, n1 = 0, n2 = 0;
        mblx_id *T0 = t3, *T1 = t3 + nf + 1, *T2 = t3 + 2 * (size_t)nf + 2;
        T0[n0++] = mblx_const(g, inv->s0[k]);
        for (int j = 0; j < nf; j++)
            if (Sk[j] != 0) {
                T0[n0++] = mblx_scale(g, Sk[j], q[fi[j]]);
                T1[n1++] = mblx_scale(g, Sk[j], v[fi[j]]);
                T2[n2++] = mblx_scale(g, Sk[j], a[fi[j]]);
            }
        sv[k] = mblx_sum(g, n0, T0), w1[k] = mblx_sum(g, n1, T1), w2[k] = mblx_sum(g, n2, T2);
    }
    /* J = J0 + sum qf_i (c1_i + y1_i); y1.qf', y2.qf'' */
    mblx_id Jn, y1v, y2a;
    {
        size_t n0 = 0;
        t3[n0++] = mblx_const(g, inv->J0);
        for (int i = 0; i < nf; i++) t3[n0++] = mblx_mul(g, q[fi[i]], mblx_add(g, mblx_const(g, inv->c1[i]), y1[i]));
        Jn = mblx_sum(g, n0, t3);
        for (int i = 0; i < nf; i++) t3[i] = mblx_mul(g, y1[i], v[fi[i]]);
        y1v = mblx_sum(g, (size_t)nf, t3);
        for (int i = 0; i < nf; i++) t3[i] = mblx_mul(g, y2[i], a[fi[i]]);
        y2a = mblx_sum(g, (size_t)nf, t3);
    }
    /* a = A Jt s, As = A s */
    mblx_id Jts0 = mblx_neg(g, sv[1]), Jts1 = sv[0];
    mblx_id av0 = mblx_sub(g, mblx_mul(g, c, Jts0), mblx_mul(g, s, Jts1));
    mblx_id av1 = mblx_add(g, mblx_mul(g, s, Jts0), mblx_mul(g, c, Jts1));
    mblx_id As0 = mblx_sub(g, mblx_mul(g, c, sv[0]), mblx_mul(g, s, sv[1]));
    mblx_id As1 = mblx_add(g, mblx_mul(g, s, sv[0]), mblx_mul(g, c, sv[1]));
    mblx_id two_thd = mblx_scale(g, 2.0, thd);

    body_rows x = {g, &B, inv, C, Fs, nf, iR0, iR1, ith, fi, a, v, q, thd, thdd, c, s, thd2, G0, G1, AtG0, AtG1, AJtG0,
                   AJtG1, Sb0, Sb1, y1, y2, Mv, Pv, Pa, t3, {sv[0], sv[1]}, {w1[0], w1[1]}, {w2[0], w2[1]}, Jn, y1v, y2a,
                   Jts0, Jts1, av0, av1, As0, As1, two_thd, vM, vP, vK, vC, vH, vX, vY, vA, mark, list, hs};
    frame_rows_R(&x);
    frame_row_th(&x);
    elastic_rows(&x);
out:
    mbl_free(scr), mbl_free(y1), mbl_free(y2), mbl_free(Mv), mbl_free(Pv), mbl_free(Pa);
    mbl_free(vM), mbl_free(vP), mbl_free(vK), mbl_free(vC), mbl_free(mark), mbl_free(list), mbl_free(t3);
    mbl_free(vH), mbl_free(vX), mbl_free(vY), mbl_free(vA), mbl_free(hs);
    if (B.err) return mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}

int model_ffr_formulate_g(mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode, mblx_id *Fs,
                        mbl_sjac *J, mbl_status *st)
{
    if (b->sp) { /* spatial: model/terms/ffr3.c */
        mblx_id g3[3];
        for (int k = 0; k < 3; k++) g3[k] = gnode ? gnode[k] : mblx_const(md->g, b->g[k]);
        return model_ffr3_formulate(md, b, qidx, g3, Fs, J, st);
    }
    mbla_csc *C = NULL;
    int rc = model_ffr_damping(b, b->inv.Mff, b->inv.K, &C, st);
    if (rc) return rc;
    mblx_id gn[2];
    for (int k = 0; k < 2; k++) gn[k] = gnode ? gnode[k] : mblx_const(md->g, b->g[k]);
    rc = formulate(md, &b->inv, C, gn, qidx, Fs, J, st);
    mbla_csc_free(C);
    return rc;
}

int model_ffr_formulate_inv(mbl_model *md, const mbl_ffr_invariants *inv, const mbla_csc *C, const mblx_id gn[2],
                          const int *qidx, mblx_id *Fs, mbl_sjac *J, mbl_status *st)
{
    return formulate(md, inv, C, gn, qidx, Fs, J, st);
}

int model_ffr_formulate(mbl_model *md, const mbl_ffr_body *b, const int *qidx, mblx_id *Fs, mbl_sjac *J,
                      mbl_status *st)
{
    return model_ffr_formulate_g(md, b, qidx, NULL, Fs, J, st);
}

int model_ffr_keep_nodes(mbl_model *md, const mbl_ffr_body *b, const int *qidx, mbl_status *st)
{
    mbl_flex_nodes *f = mbl_realloc_array(md->flex, (size_t)md->nflex + 1, sizeof *f);
    if (!f) return mbl_error(st, MBL_ENOMEM, "out of memory");
    md->flex = f;
    f = &md->flex[md->nflex++];
    memset(f, 0, sizeof *f);
    /* "body 'link1'" -> "link1" */
    const char *nm = b->name, *q1 = strchr(nm, '\''), *q2 = q1 ? strrchr(nm, '\'') : NULL;
    size_t ln = q1 && q2 > q1 ? (size_t)(q2 - q1 - 1) : strlen(nm);
    f->name = mbl_malloc(ln + 1);
    if (f->name) memcpy(f->name, q1 && q2 > q1 ? q1 + 1 : nm, ln), f->name[ln] = '\0';
    if (!f->name) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (b->sp) return model_ffr3_keep_nodes(b, qidx, f, st); /* spatial: model/terms/ffr3.c */
    f->dim = 2;
    for (int k = 0; k < 3; k++) f->q[k] = qidx[k];
    f->nnode = b->nnode;
    f->X0 = mbl_alloc_array((size_t)2 * b->nnode + 1, sizeof *f->X0);
    f->qn = mbl_alloc_array((size_t)3 * b->nnode + 1, sizeof *f->qn);
    if (!f->name || !f->X0 || !f->qn) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (b->nnode) memcpy(f->X0, b->X0, (size_t)2 * b->nnode * sizeof *f->X0);
    for (int i = 0; i < 3 * b->nnode; i++) f->qn[i] = b->ndof[i] >= 0 ? qidx[3 + b->ndof[i]] : -1;
    return 0;
}

void model_ffr_free_nodes(mbl_model *md)
{
    for (int i = 0; i < md->nflex; i++) mbl_free(md->flex[i].name), mbl_free(md->flex[i].X0), mbl_free(md->flex[i].qn);
    mbl_free(md->flex);
    md->flex = NULL;
    md->nflex = 0;
}

int mbl_model_flex_count(const mbl_model *md) { return md ? md->nflex : 0; }

const char *mbl_model_flex_name(const mbl_model *md, int b)
{
    return md && b >= 0 && b < md->nflex ? md->flex[b].name : NULL;
}

int mbl_model_flex_nodes(const mbl_model *md, int b) { return md && b >= 0 && b < md->nflex ? md->flex[b].nnode : 0; }

int mbl_model_flex_dim(const mbl_model *md, int b) { return md && b >= 0 && b < md->nflex ? md->flex[b].dim : 0; }

int mbl_model_flex_shape(const mbl_model *md, int b, const double *q, const double *dq, double *pos, double *disp)
{
    if (!md || b < 0 || b >= md->nflex || !q) return MBL_EARG;
    const mbl_flex_nodes *f = &md->flex[b];
    if (f->dim == 3) {
        model_ffr3_shape(f, q, dq, pos, disp);
        return 0;
    }
    double th = q[f->q[2]], c = cos(th), s = sin(th);
    for (int i = 0; i < f->nnode; i++) {
        const int *qn = f->qn + 3 * i;
        double u = f->X0[2 * i] + (qn[0] >= 0 ? q[qn[0]] : 0), v = f->X0[2 * i + 1] + (qn[1] >= 0 ? q[qn[1]] : 0);
        if (pos) {
            pos[2 * i] = q[f->q[0]] + c * u - s * v;
            pos[2 * i + 1] = q[f->q[1]] + s * u + c * v;
        }
        if (disp && dq) {
            /* d(R + A (u, v)) = dR + dth A Jt (u, v) + A (du, dv); the rotation dth + dphi */
            double dth = dq[f->q[2]], du = qn[0] >= 0 ? dq[qn[0]] : 0, dv = qn[1] >= 0 ? dq[qn[1]] : 0;
            disp[3 * i] = dq[f->q[0]] + dth * (-s * u - c * v) + c * du - s * dv;
            disp[3 * i + 1] = dq[f->q[1]] + dth * (c * u - s * v) + s * du + c * dv;
            disp[3 * i + 2] = dth + (qn[2] >= 0 ? dq[qn[2]] : 0);
        }
    }
    return 0;
}

/* ==== the dependence on the parameters (sensitivities) ======================================= */

static void dinfo_free(mbl_ffr_dinfo *d)
{
    model_ffr_body_free(&d->b);
    mbl_free(d->qidx);
    memset(d, 0, sizeof *d);
}

void model_ffr_free_deriv(mbl_model *md)
{
    for (int i = 0; i < md->nffrd; i++) dinfo_free(&md->ffrd[i]);
    mbl_free(md->ffrd);
    md->ffrd = NULL;
    md->nffrd = 0;
}

static int copy_doubles(double **dst, const double *src, size_t n)
{
    *dst = NULL;
    if (!src) return 0;
    *dst = mbl_alloc_array(n + 1, sizeof **dst);
    if (!*dst) return 1;
    memcpy(*dst, src, n * sizeof **dst);
    return 0;
}

static int copy_schars(signed char **dst, const signed char *src, size_t n)
{
    *dst = NULL;
    if (!src) return 0;
    *dst = mbl_alloc_array(n + 1, sizeof **dst);
    if (!*dst) return 1;
    memcpy(*dst, src, n * sizeof **dst);
    return 0;
}

int model_ffr_keep_deriv(mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode,
                       const mblx_id *facnode, mbl_status *st)
{
    int any = 0;
    for (int k = 0; k < b->nfac; k++) any |= !mblx_is_const(md->g, facnode[k], NULL);
    if (!any) return 0;
    mbl_ffr_dinfo *d = mbl_realloc_array(md->ffrd, (size_t)md->nffrd + 1, sizeof *d);
    if (!d) return mbl_error(st, MBL_ENOMEM, "out of memory");
    md->ffrd = d;
    d = &md->ffrd[md->nffrd++];
    memset(d, 0, sizeof *d);
    const mbl_ffr_invariants *inv = &b->inv;
    int nf = inv->nf, oom = 0;
    mbl_ffr_body *c = &d->b;
    c->inv.nf = nf, c->inv.m = inv->m, c->inv.J0 = inv->J0;
    c->inv.s0[0] = inv->s0[0], c->inv.s0[1] = inv->s0[1];
    oom |= copy_doubles(&c->inv.Sb, inv->Sb, (size_t)2 * nf) | copy_doubles(&c->inv.c1, inv->c1, (size_t)nf) |
           copy_doubles(&c->inv.c2, inv->c2, (size_t)nf);
    oom |= copy_schars(&c->lexp, b->lexp, (size_t)nf) | copy_schars(&c->kcls, b->kcls, (size_t)nf);
    mbl_status s2;
    if (inv->Mff && mbla_csc_copy(inv->Mff, &c->inv.Mff, &s2)) oom = 1;
    if (inv->P && mbla_csc_copy(inv->P, &c->inv.P, &s2)) oom = 1;
    if (inv->K && mbla_csc_copy(inv->K, &c->inv.K, &s2)) oom = 1;
    if (inv->H1 && mbla_csc_copy(inv->H1, &c->inv.H1, &s2)) oom = 1;
    if (inv->Hx && mbla_csc_copy(inv->Hx, &c->inv.Hx, &s2)) oom = 1;
    if (inv->Hy && mbla_csc_copy(inv->Hy, &c->inv.Hy, &s2)) oom = 1;
    if (inv->Ha && mbla_csc_copy(inv->Ha, &c->inv.Ha, &s2)) oom = 1;
    c->alpha = b->alpha, c->beta = b->beta;
    c->nfac = b->nfac;
    for (int k = 0; k < b->nfac; k++) {
        c->fac[k] = b->fac[k];
        c->fac[k].text = NULL;
        d->facnode[k] = facnode[k];
    }
    memcpy(c->kexp, b->kexp, sizeof c->kexp);
    if (b->sp && !oom) { /* spatial: model/terms/ffr3.c */
        c->sp = mbl_calloc(1, sizeof *c->sp);
        if (!c->sp || model_ffr3_copy(b->sp, c->sp, &s2)) oom = 1;
    }
    for (int k = 0; k < 3; k++) d->gnode[k] = gnode[k];
    d->qidx = mbl_alloc_array((size_t)nf + 3, sizeof *d->qidx);
    if (d->qidx) memcpy(d->qidx, qidx, ((size_t)nf + 3) * sizeof *d->qidx);
    if (oom || !d->qidx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

/* The factor f (of kind LENGTH: exponent e) scales an entry as phi^1 (or L^e): its derivative is
 * the entry times this */
static double dscale(const mbl_ffr_factor *f, double e) { return f->kind == MBL_FFR_FAC_LENGTH ? e / f->value : 1.0 / f->value; }

/* Y = X with entry (i, j) times dscale(f, base + lexp_i + lexp_j) (mass: kc < 0), or, for the
 * stiffness (kc >= 0: the class of the factor, -1 for all classes by length), only the entries
 * of its class. base: the mass invariant's own length power (1 for Mff and P, 0 for H1, 1 for Hx). */
static int csc_deriv(const mbla_csc *X, const mbl_ffr_body *b, const mbl_ffr_factor *f, int stiff, double base,
                     mbla_csc **Y, mbl_status *st)
{
    *Y = NULL;
    int nz = mbla_csc_nnz(X), k = 0, rc = 0, nf = b->inv.nf;
    int *ti = mbl_alloc_array((size_t)nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)nz + 1, sizeof *tx);
    if (!ti || !tj || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; X && !rc && j < X->n; j++)
        for (int p = X->p[j]; p < X->p[j + 1]; p++) {
            int i = X->i[p];
            double le = (b->lexp ? b->lexp[i] + b->lexp[j] : 0), s;
            if (stiff) {
                int ci = b->kcls ? b->kcls[i] : 0, cj = b->kcls ? b->kcls[j] : 0;
                if (ci != cj || ci < 0 || ci > 3) {
                    rc = mbl_error(st, MBL_EMODEL, "the stiffness couples coordinates of two classes");
                    break;
                }
                if (f->kind == MBL_FFR_FAC_STIFF && ci != f->cls) continue;
                s = dscale(f, b->kexp[ci] + le);
            } else {
                s = dscale(f, base + le);
            }
            ti[k] = i, tj[k] = j, tx[k++] = s * X->x[p];
        }
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, k, ti, tj, tx, NULL, Y, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

/* The derivative of body d's invariants and damping matrix with respect to its factor k. */
static int dinv_make(const mbl_ffr_body *b, int k, mbl_ffr_invariants *dv, mbla_csc **dC, mbl_status *st)
{
    const mbl_ffr_invariants *inv = &b->inv;
    const mbl_ffr_factor *f = &b->fac[k];
    int nf = inv->nf, rc = 0;
    memset(dv, 0, sizeof *dv);
    *dC = NULL;
    dv->nf = nf;
    dv->Sb = mbl_calloc((size_t)2 * nf + 1, sizeof *dv->Sb);
    dv->c1 = mbl_calloc((size_t)nf + 1, sizeof *dv->c1);
    dv->c2 = mbl_calloc((size_t)nf + 1, sizeof *dv->c2);
    if (!dv->Sb || !dv->c1 || !dv->c2) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (f->kind == MBL_FFR_FAC_SCALAR) {
        double *x[4] = {&dv->m, &dv->J0, &dv->s0[0], &dv->s0[1]};
        if (f->cls >= 0 && f->cls < 4) *x[f->cls] = 1.0;
        return 0;
    }
    int mass = f->kind == MBL_FFR_FAC_MASS || f->kind == MBL_FFR_FAC_LENGTH;
    int stiff = f->kind == MBL_FFR_FAC_STIFF || f->kind == MBL_FFR_FAC_LENGTH;
    if (mass) {
        dv->m = dscale(f, 1) * inv->m;
        dv->s0[0] = dscale(f, 2) * inv->s0[0], dv->s0[1] = dscale(f, 2) * inv->s0[1];
        dv->J0 = dscale(f, 3) * inv->J0;
        for (int j = 0; j < nf; j++) {
            double l = b->lexp ? b->lexp[j] : 0;
            dv->Sb[j] = dscale(f, 1 + l) * inv->Sb[j];
            dv->Sb[nf + j] = dscale(f, 1 + l) * inv->Sb[nf + j];
            dv->c1[j] = dscale(f, 2 + l) * inv->c1[j];
            dv->c2[j] = dscale(f, 2 + l) * inv->c2[j];
        }
        rc = csc_deriv(inv->Mff, b, f, 0, 1, &dv->Mff, st);
        if (!rc) rc = csc_deriv(inv->P, b, f, 0, 1, &dv->P, st);
        /* the geometric stiffness per unit load: rho A L^(lexp_i + lexp_j) and one L more for Hx */
        if (!rc && inv->H1) rc = csc_deriv(inv->H1, b, f, 0, 0, &dv->H1, st);
        if (!rc && inv->Hx) rc = csc_deriv(inv->Hx, b, f, 0, 1, &dv->Hx, st);
    }
    if (!rc && stiff) rc = csc_deriv(inv->K, b, f, 1, 0, &dv->K, st);
    if (rc) return rc;
    if (f->kind == MBL_FFR_FAC_ALPHA) return mbla_csc_copy(inv->Mff, dC, st);
    if (f->kind == MBL_FFR_FAC_BETA) return mbla_csc_copy(inv->K, dC, st);
    double al = mass ? b->alpha : 0, be = stiff ? b->beta : 0;
    if (al == 0 && be == 0) return 0;
    if (!dv->Mff) return mbla_csc_add(0.0, dv->K, be, dv->K, dC, st);
    if (!dv->K) return mbla_csc_add(al, dv->Mff, 0.0, dv->Mff, dC, st);
    return mbla_csc_add(al, dv->Mff, be, dv->K, dC, st);
}

/* X (CSC over nrows) plus nt triplets (row tr, column tc, node tn): duplicates summed. */
static int sparse_add(mblx_graph *g, mblx_sparse *X, int nt, const int *tr, const int *tc, const mblx_id *tn,
                      mbl_status *st)
{
    if (!nt) return 0;
    int nc = X->ncols, nr = X->nrows, nold = X->colptr[nc], rc = 0;
    int *cnt = mbl_calloc((size_t)nc + 2, sizeof *cnt), *ord = mbl_alloc_array((size_t)nt, sizeof *ord);
    int *pos = mbl_alloc_array((size_t)nr + 1, sizeof *pos);
    int *cp = mbl_alloc_array((size_t)nc + 1, sizeof *cp), *ri = mbl_alloc_array((size_t)nold + nt + 1, sizeof *ri);
    mblx_id *nd = mbl_alloc_array((size_t)nold + nt + 1, sizeof *nd);
    if (!cnt || !ord || !pos || !cp || !ri || !nd) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int t = 0; t < nt; t++) cnt[tc[t] + 1]++;
    for (int c = 0; c < nc; c++) cnt[c + 1] += cnt[c];
    for (int t = 0; t < nt; t++) ord[cnt[tc[t]]++] = t; /* cnt[c] now the end of column c's triplets */
    for (int i = 0; i < nr; i++) pos[i] = -1;
    int k = 0, t0 = 0;
    for (int c = 0; c < nc; c++) {
        cp[c] = k;
        int c0 = k;
        for (int e = X->colptr[c]; e < X->colptr[c + 1]; e++) pos[X->rowidx[e]] = k, ri[k] = X->rowidx[e], nd[k++] = X->node[e];
        for (; t0 < cnt[c]; t0++) {
            int t = ord[t0], r = tr[t];
            if (pos[r] >= 0) nd[pos[r]] = mblx_add(g, nd[pos[r]], tn[t]);
            else pos[r] = k, ri[k] = r, nd[k++] = tn[t];
        }
        for (int e = c0; e < k; e++) pos[ri[e]] = -1;
    }
    cp[nc] = k;
    mbl_free(X->colptr), mbl_free(X->rowidx), mbl_free(X->node);
    X->colptr = cp, X->rowidx = ri, X->node = nd;
    cp = ri = NULL, nd = NULL;
    rc = mblx_graph_status(g, st);
out:
    mbl_free(cnt), mbl_free(ord), mbl_free(pos), mbl_free(cp), mbl_free(ri), mbl_free(nd);
    return rc;
}

typedef struct trip {
    int n, cap;
    int *r, *c;
    mblx_id *e;
} trip;

static int trip_push(trip *T, int r, int c, mblx_id e)
{
    if (T->n == T->cap) {
        int cap = T->cap ? 2 * T->cap : 256;
        int *nr = mbl_realloc_array(T->r, (size_t)cap, sizeof *nr);
        if (nr) T->r = nr;
        int *nc = nr ? mbl_realloc_array(T->c, (size_t)cap, sizeof *nc) : NULL;
        if (nc) T->c = nc;
        mblx_id *ne = nc ? mbl_realloc_array(T->e, (size_t)cap, sizeof *ne) : NULL;
        if (!ne) return 1;
        T->e = ne, T->cap = cap;
    }
    T->r[T->n] = r, T->c[T->n] = c, T->e[T->n++] = e;
    return 0;
}

int model_ffr_param_deriv(const mbl_model *md, int np, const mblx_id *psym, mblx_sparse *H, mblx_sparse *Fp,
                        mbl_status *st)
{
    if (!md->nffrd || np == 0) return 0;
    mblx_graph *g = md->g;
    int n = md->n, nunk = md->nunk, rc = 0;
    trip TH = {0}, TF = {0};
    mblx_id *Fk = mbl_alloc_array((size_t)n + 1, sizeof *Fk);
    /* the model's Jacobian entries of the EOM rows, by row, and a column scatter */
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *fill = mbl_calloc((size_t)n + 1, sizeof *fill), *pos = mbl_alloc_array((size_t)nunk + 1, sizeof *pos);
    mbl_sjac S;
    memset(&S, 0, sizeof S);
    mblx_sparse D;
    memset(&D, 0, sizeof D);
    if (!Fk || !rp || !ent || !fill || !pos) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) rp[md->jac.row[p] + 1]++;
    for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) ent[rp[md->jac.row[p]] + fill[md->jac.row[p]]++] = p;
    for (int j = 0; j < nunk; j++) pos[j] = -1;
    mblx_id zero = mblx_const(g, 0.0);
    for (int bi = 0; bi < md->nffrd && !rc; bi++) {
        const mbl_ffr_dinfo *d = &md->ffrd[bi];
        const mbl_ffr_body *b = &d->b;
        /* dphi_k/dp_j */
        rc = mblx_jacobian(g, (size_t)b->nfac, d->facnode, (size_t)np, psym, &D);
        if (rc) {
            rc = mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        for (int k = 0; k < b->nfac && !rc; k++) {
            int used = 0;
            for (int j = 0; j < np && !used; j++)
                for (int e = D.colptr[j]; e < D.colptr[j + 1]; e++) used |= D.rowidx[e] == k;
            if (!used) continue;
            mbl_ffr_invariants dv;
            mbl_ffr3 dv3; /* spatial: model/terms/ffr3.c */
            mbla_csc *dC = NULL;
            memset(&dv, 0, sizeof dv);
            memset(&dv3, 0, sizeof dv3);
            rc = b->sp ? model_ffr3_dinv(b, k, &dv3, &dC, st) : dinv_make(b, k, &dv, &dC, st);
            for (int i = 0; i < n; i++) Fk[i] = zero;
            S.nz = 0;
            if (!rc && b->sp) rc = model_ffr3_formulate_inv((mbl_model *)md, &dv3, dC, d->gnode, d->qidx, Fk, &S, st);
            else if (!rc) rc = formulate((mbl_model *)md, &dv, dC, d->gnode, d->qidx, Fk, &S, st);
            model_ffr_invariants_free(&dv);
            model_ffr3_free(&dv3);
            mbla_csc_free(dC);
            if (rc) break;
            /* the entries of S as indices into md->jac (each is one of the body's own entries) */
            int *sent = mbl_alloc_array((size_t)S.nz + 1, sizeof *sent);
            if (!sent) {
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                break;
            }
            for (int p = 0; p < S.nz; p++) sent[p] = -1;
            /* group S by row via a counting pass */
            {
                int *srp = mbl_calloc((size_t)n + 2, sizeof *srp), *sord = mbl_alloc_array((size_t)S.nz + 1, sizeof *sord);
                if (!srp || !sord) {
                    mbl_free(srp), mbl_free(sord), mbl_free(sent);
                    rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                    break;
                }
                for (int p = 0; p < S.nz; p++) srp[S.row[p] + 1]++;
                for (int i = 0; i < n; i++) srp[i + 1] += srp[i];
                for (int p = 0; p < S.nz; p++) sord[srp[S.row[p]]++] = p;
                for (int i = n; i > 0; i--) srp[i] = srp[i - 1];
                srp[0] = 0;
                for (int i = 0; i < n; i++) {
                    if (srp[i] == srp[i + 1]) continue;
                    for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = ent[t];
                    for (int t = srp[i]; t < srp[i + 1]; t++) sent[sord[t]] = pos[S.col[sord[t]]];
                    for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = -1;
                }
                mbl_free(srp), mbl_free(sord);
            }
            for (int p = 0; p < S.nz && !rc; p++)
                if (sent[p] < 0)
                    rc = mbl_error(st, MBL_EMODEL, "%s: a derivative of the structured term has an entry its Jacobian lacks",
                                   b->name ? b->name : "flexible body");
            for (int j = 0; j < np && !rc; j++)
                for (int e = D.colptr[j]; e < D.colptr[j + 1] && !rc; e++) {
                    if (D.rowidx[e] != k) continue;
                    mblx_id w = D.node[e];
                    for (int i = 0; i < n && !rc; i++)
                        if (!is_zero(g, Fk[i])) rc = trip_push(&TF, i, j, mblx_mul(g, w, Fk[i]));
                    for (int p = 0; p < S.nz && !rc; p++) rc = trip_push(&TH, sent[p], nunk + j, mblx_mul(g, w, S.node[p]));
                    if (rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                }
            mbl_free(sent);
        }
        mblx_sparse_free(&D);
    }
    if (!rc) rc = sparse_add(g, H, TH.n, TH.r, TH.c, TH.e, st);
    if (!rc) rc = sparse_add(g, Fp, TF.n, TF.r, TF.c, TF.e, st);
    if (!rc) rc = mblx_graph_status(g, st);
out:
    mblx_sparse_free(&D);
    model_sjac_free(&S);
    mbl_free(TH.r), mbl_free(TH.c), mbl_free(TH.e), mbl_free(TF.r), mbl_free(TF.c), mbl_free(TF.e);
    mbl_free(Fk), mbl_free(rp), mbl_free(ent), mbl_free(fill), mbl_free(pos);
    return rc;
}
