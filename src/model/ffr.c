/* The structured term of the canonical DAE: floating-frame flexible bodies (ffr.h).
 *
 * Their rows of the equations of motion and the Jacobian entries of those rows are built here as
 * expression nodes directly from the constant sparse matrices (Mff, P, K, C) and vectors (Sb, c1,
 * c2): each row a short sum over the matrix row's nonzeros, the frame rows sums over the body, and
 * every Jacobian entry written in closed form (derived in ffr.h's formula), so the expression
 * engine never differentiates them (a long sum differentiated by each of its n variables costs
 * O(n^2)). The model compiles them into the same tapes as every other row: the operating point,
 * every method and the sparse eigen paths see them through md->tape_F and md->tape_jac. */
#include "model/ffr.h"

#include <math.h>
#include <string.h>

#include "model/model_internal.h"

void mbl_ffr_invariants_free(mbl_ffr_invariants *inv)
{
    if (!inv) return;
    mbl_free(inv->Sb), mbl_free(inv->c1), mbl_free(inv->c2);
    mbla_csc_free(inv->Mff), mbla_csc_free(inv->P), mbla_csc_free(inv->K);
    memset(inv, 0, sizeof *inv);
}

void mbl_ffr_body_free(mbl_ffr_body *b)
{
    if (!b) return;
    mbl_free(b->name);
    for (int k = 0; k < 3; k++) mbl_free(b->coord[k]);
    if (b->qf)
        for (int i = 0; i < b->inv.nf; i++) mbl_free(b->qf[i]);
    mbl_free(b->qf);
    mbl_ffr_invariants_free(&b->inv);
    mbl_free(b->X0), mbl_free(b->ndof);
    memset(b, 0, sizeof *b);
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
    if (mbl_sjac_push(B->J, row, col, e)) B->err = 1;
}

/* sum_j X[j] x[j] + c over the column `col` of a CSC matrix (scaled by sgn), x symbols of idx */
static mblx_id col_dot(mblx_graph *g, const mbla_csc *X, int col, double sgn, const mblx_id *sym, const int *idx,
                       double c, mblx_id *scratch)
{
    size_t n = 0;
    if (c != 0) scratch[n++] = mblx_const(g, c);
    for (int p = X->p[col]; p < X->p[col + 1]; p++)
        if (X->x[p] != 0) scratch[n++] = mblx_scale(g, sgn * X->x[p], sym[idx[X->i[p]]]);
    return mblx_sum(g, n, scratch);
}

int mbl_ffr_formulate(mbl_model *md, const mbl_ffr_body *b, const int *qidx, mblx_id *Fs, mbl_sjac *J,
                      mbl_status *st)
{
    const mbl_ffr_invariants *inv = &b->inv;
    int nf = inv->nf;
    mblx_graph *g = md->g;
    builder B = {md, g, J, mbl_model_blk0(md, MBL_BLK_A), mbl_model_blk0(md, MBL_BLK_V), mbl_model_blk0(md, MBL_BLK_Q),
                 0};
    const int *fi = qidx + 3; /* model coordinate index of elastic coordinate j */
    int iR0 = qidx[0], iR1 = qidx[1], ith = qidx[2];
    mbla_csc *C = NULL;
    if (b->alpha != 0 || b->beta != 0) {
        int rc = mbla_csc_add(b->alpha, inv->Mff, b->beta, inv->K, &C, st);
        if (rc) return rc;
    }
    size_t ns = (size_t)nf + 8;
    mblx_id *scr = mbl_alloc_array(ns, sizeof *scr);
    mblx_id *y1 = mbl_alloc_array((size_t)nf + 1, sizeof *y1), *y2 = mbl_alloc_array((size_t)nf + 1, sizeof *y2);
    mblx_id *Mv = mbl_alloc_array((size_t)nf + 1, sizeof *Mv), *Pv = mbl_alloc_array((size_t)nf + 1, sizeof *Pv);
    mblx_id *Pa = mbl_alloc_array((size_t)nf + 1, sizeof *Pa);
    double *vM = mbl_calloc((size_t)nf + 1, sizeof *vM), *vP = mbl_calloc((size_t)nf + 1, sizeof *vP);
    double *vK = mbl_calloc((size_t)nf + 1, sizeof *vK), *vC = mbl_calloc((size_t)nf + 1, sizeof *vC);
    int *mark = mbl_calloc((size_t)nf + 1, sizeof *mark), *list = mbl_alloc_array((size_t)nf + 1, sizeof *list);
    mblx_id *t3 = mbl_alloc_array((size_t)4 * nf + 8, sizeof *t3);
    if (!scr || !y1 || !y2 || !Mv || !Pv || !Pa || !vM || !vP || !vK || !vC || !mark || !list || !t3) {
        B.err = 1;
        goto out;
    }
    const mblx_id *a = md->a, *v = md->v, *q = md->q;
    mblx_id th = q[ith], thd = v[ith], thdd = a[ith];
    mblx_id c = mblx_cos(g, th), s = mblx_sin(g, th);
    mblx_id thd2 = mblx_mul(g, thd, thd);
    /* G = R'' - g, A^T G, (A Jt)^T G = (AtG1, -AtG0) */
    mblx_id G0 = mblx_sub(g, a[iR0], mblx_const(g, b->g[0])), G1 = mblx_sub(g, a[iR1], mblx_const(g, b->g[1]));
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
            push(&B, row, B.ja + row, mblx_const(g, inv->m));
            push(&B, row, B.ja + ith, av[r]);
            push(&B, row, B.jv + ith, Ae[r]);
            push(&B, row, B.jq + ith, AJtb[r]);
            for (int j = 0; j < nf; j++) {
                if (Sb0[j] == 0 && Sb1[j] == 0) continue;
                push(&B, row, B.ja + fi[j], lin2(g, Sb0[j], Am[r][0], Sb1[j], Am[r][1]));
                push(&B, row, B.jv + fi[j], lin2(g, Sb0[j], BJ[r][0], Sb1[j], BJ[r][1]));
                push(&B, row, B.jq + fi[j], lin2(g, Sb0[j], Bq[r][0], Sb1[j], Bq[r][1]));
            }
        }
    }

    /* ---- frame row th: a.G + J thdd + 2 thd y1.qf' + y2.qf'' ---- */
    {
        mblx_id t[4] = {mblx_add(g, mblx_mul(g, av0, G0), mblx_mul(g, av1, G1)), mblx_mul(g, Jn, thdd),
                        mblx_mul(g, two_thd, y1v), y2a};
        Fs[ith] = mblx_add(g, Fs[ith], mblx_sum(g, 4, t));
        push(&B, ith, B.ja + iR0, av0);
        push(&B, ith, B.ja + iR1, av1);
        push(&B, ith, B.ja + ith, Jn);
        push(&B, ith, B.jv + ith, mblx_scale(g, 2.0, y1v));
        push(&B, ith, B.jq + ith, mblx_neg(g, mblx_add(g, mblx_mul(g, As0, G0), mblx_mul(g, As1, G1))));
        mblx_id two_thdd = mblx_scale(g, 2.0, thdd);
        for (int j = 0; j < nf; j++) {
            push(&B, ith, B.ja + fi[j], y2[j]);
            push(&B, ith, B.jv + fi[j], mblx_mul(g, two_thd, y1[j]));
            mblx_id tq[4] = {lin2(g, Sb0[j], AJtG0, Sb1[j], AJtG1), mblx_mul(g, two_thdd, y1[j]),
                             mblx_mul(g, two_thd, Mv[j]), mblx_neg(g, Pa[j])};
            push(&B, ith, B.jq + fi[j], mblx_sum(g, 4, tq));
        }
    }

    /* ---- elastic rows ---- */
    for (int i = 0; i < nf && !B.err; i++) {
        int row = fi[i];
        /* row i of Mff, K, C (symmetric: column i) and of P (-column i), merged */
        int nl = 0;
        const mbla_csc *mats[4] = {inv->Mff, inv->P, inv->K, C};
        double *vals[4] = {vM, vP, vK, vC};
        for (int k = 0; k < 4; k++) {
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
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            if (vM[j] != 0) T[nt++] = mblx_scale(g, vM[j], a[fi[j]]);
            if (vC[j] != 0) T[nt++] = mblx_scale(g, vC[j], v[fi[j]]);
            if (vK[j] != 0) T[nt++] = mblx_scale(g, vK[j], q[fi[j]]);
        }
        Fs[row] = mblx_add(g, Fs[row], mblx_sum(g, nt, T));
        push(&B, row, B.ja + iR0, lin2(g, Sb0[i], c, Sb1[i], mblx_neg(g, s)));
        push(&B, row, B.ja + iR1, lin2(g, Sb0[i], s, Sb1[i], c));
        push(&B, row, B.ja + ith, y2[i]);
        push(&B, row, B.jv + ith, mblx_sub(g, mblx_scale(g, 2.0, Pv[i]), mblx_mul(g, two_thd, y1[i])));
        push(&B, row, B.jq + ith, lin2(g, Sb0[i], AJtG0, Sb1[i], AJtG1));
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            if (vM[j] != 0) push(&B, row, B.ja + fi[j], mblx_const(g, vM[j]));
            mblx_id ev[2] = {mblx_scale(g, 2.0 * vP[j], thd), mblx_const(g, vC[j])};
            push(&B, row, B.jv + fi[j], mblx_sum(g, 2, ev));
            mblx_id eq[3] = {mblx_scale(g, vP[j], thdd), mblx_scale(g, -vM[j], thd2), mblx_const(g, vK[j])};
            push(&B, row, B.jq + fi[j], mblx_sum(g, 3, eq));
            mark[j] = 0, vM[j] = vP[j] = vK[j] = vC[j] = 0;
        }
    }
out:
    mbla_csc_free(C);
    mbl_free(scr), mbl_free(y1), mbl_free(y2), mbl_free(Mv), mbl_free(Pv), mbl_free(Pa);
    mbl_free(vM), mbl_free(vP), mbl_free(vK), mbl_free(vC), mbl_free(mark), mbl_free(list), mbl_free(t3);
    if (B.err) return mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}

/* Add the structured rows and Jacobian entries to the compiled model's: F[i] += Fs[i] for the EOM
 * rows, and the entries of S merged into md->jac (one entry per (row, column): an entry the text
 * rows already have gets the sum). */
int mbl_ffr_merge(mbl_model *md, const mblx_id *Fs, const mbl_sjac *S, mbl_status *st)
{
    mblx_graph *g = md->g;
    for (int i = 0; i < md->n; i++)
        if (!is_zero(g, Fs[i])) md->F[i] = mblx_add(g, md->F[i], Fs[i]);
    if (!S->nz) return mblx_graph_status(g, st);
    /* index the existing EOM entries by row */
    int n = md->n, rc = 0;
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *pos = mbl_alloc_array((size_t)md->nunk + 1, sizeof *pos);
    int *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *srp = mbl_calloc((size_t)n + 2, sizeof *srp), *sent = mbl_alloc_array((size_t)S->nz + 1, sizeof *sent);
    if (!rp || !pos || !ent || !srp || !sent) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) rp[md->jac.row[p] + 1]++;
    for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
    for (int p = 0, *fill = srp; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) ent[rp[md->jac.row[p]] + fill[md->jac.row[p]]++] = p;
    memset(srp, 0, ((size_t)n + 2) * sizeof *srp);
    for (int p = 0; p < S->nz; p++) srp[S->row[p] + 1]++;
    for (int i = 0; i < n; i++) srp[i + 1] += srp[i];
    {
        int *fill = mbl_calloc((size_t)n + 1, sizeof *fill);
        if (!fill) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        for (int p = 0; p < S->nz; p++) sent[srp[S->row[p]] + fill[S->row[p]]++] = p;
        mbl_free(fill);
    }
    for (int j = 0; j < md->nunk; j++) pos[j] = -1;
    for (int i = 0; i < n && !rc; i++) {
        if (srp[i] == srp[i + 1]) continue;
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = ent[t];
        for (int t = srp[i]; t < srp[i + 1] && !rc; t++) {
            int p = sent[t], col = S->col[p];
            if (pos[col] >= 0) {
                md->jac.node[pos[col]] = mblx_add(g, md->jac.node[pos[col]], S->node[p]);
            } else {
                pos[col] = md->jac.nz;
                if (mbl_sjac_push(&md->jac, i, col, S->node[p])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
        }
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = -1;
        for (int t = srp[i]; t < srp[i + 1]; t++) pos[S->col[sent[t]]] = -1;
    }
    if (!rc) rc = mblx_graph_status(g, st);
out:
    mbl_free(rp), mbl_free(pos), mbl_free(ent), mbl_free(srp), mbl_free(sent);
    return rc;
}

int mbl_ffr_keep_nodes(mbl_model *md, const mbl_ffr_body *b, const int *qidx, mbl_status *st)
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
    for (int k = 0; k < 3; k++) f->q[k] = qidx[k];
    f->nnode = b->nnode;
    f->X0 = mbl_alloc_array((size_t)2 * b->nnode + 1, sizeof *f->X0);
    f->qn = mbl_alloc_array((size_t)3 * b->nnode + 1, sizeof *f->qn);
    if (!f->name || !f->X0 || !f->qn) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (b->nnode) memcpy(f->X0, b->X0, (size_t)2 * b->nnode * sizeof *f->X0);
    for (int i = 0; i < 3 * b->nnode; i++) f->qn[i] = b->ndof[i] >= 0 ? qidx[3 + b->ndof[i]] : -1;
    return 0;
}

void mbl_ffr_free_nodes(mbl_model *md)
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

int mbl_model_flex_shape(const mbl_model *md, int b, const double *q, const double *dq, double *pos, double *disp)
{
    if (!md || b < 0 || b >= md->nflex || !q) return MBL_EARG;
    const mbl_flex_nodes *f = &md->flex[b];
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
