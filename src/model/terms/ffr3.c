/* The structured term of spatial flexible bodies (ffr3.h): rows and closed-form Jacobian entries
 * built as expression nodes from constant sparse matrices, so that no long sum is ever
 * differentiated by the expression engine.
 *
 * The elastic rows are short (a row of each matrix) and linear in a handful of frame quantities
 * (G_, al, w, w_a w_b): their Jacobian is those quantities times the matrices' entries, and the
 * frame quantities' derivatives (small expressions, differentiated once by the engine) times the
 * row's sums. The frame rows are linear in 29 sums over the body (s, w1, w2, Q, D, h, tw.qf',
 * tw.qf''): they are written once with a placeholder symbol for each sum, the engine gives their
 * derivatives by the frame's unknowns and by each sum (small expressions), and an elastic column's
 * entry is the sum over the body sums of (d row / d sum) (d sum / d column), each of the latter a
 * constant or a row of a matrix times qf; the placeholders are then replaced by the sums. */
#include "model/terms/vec3_nodes.h"
#include "model/terms/ffr3_nodes.h"
#include "model/ffr3.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"

void model_ffr3_free(mbl_ffr3 *sp)
{
    if (!sp) return;
    mbl_free(sp->Sb), mbl_free(sp->Cu), mbl_free(sp->tw);
    for (int k = 0; k < 9; k++) mbla_csc_free(sp->M[k]);
    mbla_csc_free(sp->Mc), mbla_csc_free(sp->K);
    mbla_csc_free(sp->H1), mbla_csc_free(sp->Hx);
    for (int l = 0; l < FFR3_NL; l++) mbla_csc_free(sp->HL[l]);
    mbl_free(sp->X0), mbl_free(sp->ndof);
    memset(sp, 0, sizeof *sp);
}

static int dup_d(double **dst, const double *src, size_t n)
{
    *dst = NULL;
    if (!src) return 0;
    *dst = mbl_alloc_array(n + 1, sizeof **dst);
    if (!*dst) return 1;
    memcpy(*dst, src, n * sizeof **dst);
    return 0;
}

int model_ffr3_copy(const mbl_ffr3 *a, mbl_ffr3 *b, mbl_status *st)
{
    memset(b, 0, sizeof *b);
    b->nf = a->nf, b->m = a->m, b->IpL = a->IpL;
    memcpy(b->s0, a->s0, sizeof b->s0), memcpy(b->Q0, a->Q0, sizeof b->Q0);
    size_t nf = (size_t)a->nf;
    int oom = dup_d(&b->Sb, a->Sb, 3 * nf) | dup_d(&b->Cu, a->Cu, 9 * nf) | dup_d(&b->tw, a->tw, nf);
    for (int k = 0; k < 9 && !oom; k++)
        if (a->M[k] && mbla_csc_copy(a->M[k], &b->M[k], st)) oom = 1;
    if (!oom && a->Mc && mbla_csc_copy(a->Mc, &b->Mc, st)) oom = 1;
    if (!oom && a->K && mbla_csc_copy(a->K, &b->K, st)) oom = 1;
    if (!oom && a->H1 && mbla_csc_copy(a->H1, &b->H1, st)) oom = 1;
    if (!oom && a->Hx && mbla_csc_copy(a->Hx, &b->Hx, st)) oom = 1;
    for (int l = 0; l < FFR3_NL && !oom; l++)
        if (a->HL[l] && mbla_csc_copy(a->HL[l], &b->HL[l], st)) oom = 1;
    if (oom) {
        model_ffr3_free(b);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    return 0;
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0.0;
}

/* sum_p X(p, col) x[idx[row p]] over column col of X (NULL: 0) */
static mblx_id col_dot(mblx_graph *g, const mbla_csc *X, int col, const mblx_id *x, const int *idx, mblx_id *scr)
{
    size_t n = 0;
    if (X)
        for (int p = X->p[col]; p < X->p[col + 1]; p++)
            if (X->x[p] != 0) scr[n++] = mblx_scale(g, X->x[p], x[idx[X->i[p]]]);
    return n ? mblx_sum(g, n, scr) : mblx_const(g, 0.0);
}

typedef struct bld {
    mblx_graph *g;
    mbl_sjac *J;
    int err;
} bld;

static void push(bld *B, int row, int col, mblx_id e)
{
    if (B->err || is_zero(B->g, e)) return;
    if (model_sjac_push(B->J, row, col, e)) B->err = 1;
}

/* terms t[0..n) summed into a node, zeros skipped */
static mblx_id sumz(mblx_graph *g, size_t n, const mblx_id *t, mblx_id *scr)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_zero(g, t[i])) scr[k++] = t[i];
    return k ? mblx_sum(g, k, scr) : mblx_const(g, 0.0);
}

static mblx_id cmul(mblx_graph *g, double c, mblx_id x) { return c == 0 ? mblx_const(g, 0.0) : mblx_scale(g, c, x); }

#define AB(a, b) FFR3_AB(a, b)
#define PA(k) FFR3_PA(k)
#define PB(k) FFR3_PB(k)
#define QA(u) FFR3_QA(u)
#define QB(u) FFR3_QB(u)
#define CU(p, r, j) FFR3_CU(Cu, nf, p, r, j)
#define NVAL (14 + FFR3_NL) /* a row's matrices: M_ab (9), K, C, Mc, H1, Hx, HL */

/* The quantities of one body's rows shared by their parts (model_ffr3_formulate_inv): the frame's
 * (orientation, angular velocity and acceleration, their derivatives by the frame's unknowns) and
 * the products of the invariants with the elastic coordinates (R), with the scratch arrays. */
typedef struct body3 {
    mblx_graph *g;
    bld *B;
    const mbl_ffr3 *sp;
    const mbla_csc *C;
    const mblx_id *gn;
    mblx_id *Fs;
    int nf, ja, jv, jq;
    const int *iR, *ie, *fi;
    const mblx_id *a, *v, *q;
    mblx_id *scr, *t;
    mblx_id *(*R)[9];
    double **val;
    int *mark, *list;
    mblx_id zero;
    const ffr3_frame *f;
    const int *fcol;
    mblx_id *hs;                /* scratch for the geometric stiffness sums (2 nf + 2) */
} body3;

/* load l of a modal body's geometric stiffness (ffr3.h's HL) and its derivative by frame unknown y */
static mblx_id hl_load(const ffr3_frame *f, int l) { return l < 3 ? f->AtG[l] : l < 6 ? f->al[l - 3] : f->W[FFR3_LW(l - 6)]; }
static mblx_id hl_dload(const ffr3_frame *f, int l, int y)
{
    return l < 3 ? f->dAtG[l][y] : l < 6 ? f->dal[l - 3][y] : f->dW[FFR3_LW(l - 6)][y];
}

/* (HL_l qf)_i (hq, FFR3_NL; zero nodes where HL_l is absent) from the row's entries val[14 + l] over list */
static void hl_rows(const body3 *x, const int *list, int nl, mblx_id *hq)
{
    for (int l = 0; l < FFR3_NL; l++) {
        size_t n = 0;
        for (int e = 0; e < nl && x->sp->HL[l]; e++)
            if (x->val[14 + l][list[e]] != 0) x->hs[n++] = mblx_scale(x->g, x->val[14 + l][list[e]], x->q[x->fi[list[e]]]);
        hq[l] = n ? mblx_sum(x->g, n, x->hs) : x->zero;
    }
}

/* The elastic rows: the inertia coupling with the frame and the elastic coordinates, stiffness and
 * damping, and their entries in the frame's and the elastic columns. */
static void elastic_rows3(const body3 *x)
{
    mblx_graph *g = x->g;
    bld *B = x->B;
    const mbl_ffr3 *sp = x->sp;
    const mbla_csc *C = x->C;
    mblx_id *Fs = x->Fs;
    int nf = x->nf, ja = x->ja, jv = x->jv, jq = x->jq;
    const int *fi = x->fi;
    const mblx_id *a = x->a, *v = x->v, *q = x->q;
    mblx_id *scr = x->scr, *t = x->t;
    mblx_id *(*R)[9] = x->R;
    double **val = x->val;
    int *mark = x->mark, *list = x->list;
    const ffr3_frame *F3 = x->f;
    const mblx_id *al = F3->al, *AtG = F3->AtG, *W = F3->W, *Cq = F3->Cq, *Cv = F3->Cv;
    const int *fcol = x->fcol;
    const mblx_id(*dAtG)[15] = x->f->dAtG, (*dal)[15] = x->f->dal, (*dw2)[15] = x->f->dw2, (*dW)[15] = x->f->dW;
    /* ---- the elastic rows ---- */
    const double *Sb = sp->Sb, *Cu = sp->Cu, *tw = sp->tw;
    for (int i = 0; i < nf && !B->err; i++) {
        int row = fi[i];
        /* Y_k = c_k + (P_k q)_i (c_k = int rho (u0 x S_i)_k = Cu_pr - Cu_rp, k p r cyclic: a beam's
         * (0, -cx_z, cx_y)), N_ab = Cu_ba + (M_ab q)_i, Z_k = (P_k q')_i */
        mblx_id Y[3], N[9], Z[3];
        double c3[3];
        for (int k = 0; k < 3; k++) {
            int p = (k + 1) % 3, r = (k + 2) % 3;
            c3[k] = CU(p, r, i) - CU(r, p, i);
            Y[k] = mblx_sub(g, R[0][AB(r, p)][i], R[0][AB(p, r)][i]);
            if (c3[k] != 0) Y[k] = mblx_add(g, mblx_const(g, c3[k]), Y[k]);
        }
        Z[0] = mblx_sub(g, R[1][AB(2, 1)][i], R[1][AB(1, 2)][i]);
        Z[1] = mblx_sub(g, R[1][AB(0, 2)][i], R[1][AB(2, 0)][i]);
        Z[2] = mblx_sub(g, R[1][AB(1, 0)][i], R[1][AB(0, 1)][i]);
        for (int k = 0; k < 9; k++)
            N[k] = CU(PB(k), PA(k), i) != 0 ? mblx_add(g, mblx_const(g, CU(PB(k), PA(k), i)), R[0][k][i]) : R[0][k][i];
        /* the row's entries of M_ab (column i of M_ba), K, C, Mc and the geometric H1, Hx (symmetric) */
        int nl = 0;
        for (int k = 0; k < NVAL; k++) {
            const mbla_csc *X = k < 9 ? sp->M[AB(PB(k), PA(k))] : k == 9 ? sp->K : k == 10 ? C : k == 11 ? sp->Mc
                                                                             : k == 12 ? sp->H1 : k == 13 ? sp->Hx : sp->HL[k - 14];
            if (!X) continue;
            for (int p = X->p[i]; p < X->p[i + 1]; p++) {
                int j = X->i[p];
                if (!mark[j]) mark[j] = 1, list[nl++] = j;
                val[k][j] += X->x[p];
            }
        }
        size_t n = 0;
        for (int c = 0; c < 3; c++) t[n++] = cmul(g, Sb[c * nf + i], AtG[c]);
        for (int k = 0; k < 3; k++)
            if (c3[k] != 0) t[n++] = mblx_mul(g, al[k], mblx_const(g, c3[k]));
        for (int k = 0; k < 9; k++) t[n++] = cmul(g, CU(PB(k), PA(k), i), W[k]);
        for (int k = 0; k < 9; k++) {
            t[n++] = mblx_mul(g, Cq[k], R[0][k][i]);
            if (!is_zero(g, Cv[k])) t[n++] = mblx_mul(g, Cv[k], R[1][k][i]);
        }
        t[n++] = cmul(g, tw[i], al[0]);
        size_t nh = 0, nx = 0;
        mblx_id *Th = x->hs, *Tx = x->hs + nf + 1;
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            if (val[9][j] != 0) t[n++] = mblx_scale(g, val[9][j], q[fi[j]]);
            if (val[10][j] != 0) t[n++] = mblx_scale(g, val[10][j], v[fi[j]]);
            if (val[11][j] != 0) t[n++] = mblx_scale(g, val[11][j], a[fi[j]]);
            if (val[12][j] != 0) Th[nh++] = mblx_scale(g, val[12][j], q[fi[j]]);
            if (val[13][j] != 0) Tx[nx++] = mblx_scale(g, val[13][j], q[fi[j]]);
        }
        /* the geometric stiffness KG = -(G_)_x H1 - W_xx Hx (ffr3.h): -(H1 qf)_i, -(Hx qf)_i */
        mblx_id nhq = nh ? mblx_neg(g, mblx_sum(g, nh, Th)) : x->zero, nxq = nx ? mblx_neg(g, mblx_sum(g, nx, Tx)) : x->zero;
        if (nh) t[n++] = mblx_mul(g, AtG[0], nhq);
        if (nx) t[n++] = mblx_mul(g, W[0], nxq);
        mblx_id hq[FFR3_NL]; /* a modal body's KG = sum_l L_l HL_l (ffr3.h) */
        hl_rows(x, list, nl, hq);
        for (int l = 0; l < FFR3_NL; l++)
            if (!is_zero(g, hq[l])) t[n++] = mblx_mul(g, hl_load(x->f, l), hq[l]);
        Fs[row] = mblx_add(g, Fs[row], sumz(g, n, t, scr));
        /* frame columns */
        for (int x = 0; x < 15; x++) {
            n = 0;
            for (int c = 0; c < 3; c++) t[n++] = cmul(g, Sb[c * nf + i], dAtG[c][x]);
            for (int k = 0; k < 3; k++) {
                t[n++] = mblx_mul(g, dal[k][x], Y[k]);
                t[n++] = mblx_mul(g, dw2[k][x], Z[k]);
            }
            for (int k = 0; k < 9; k++) t[n++] = mblx_mul(g, dW[k][x], N[k]);
            t[n++] = cmul(g, tw[i], dal[0][x]);
            if (nh) t[n++] = mblx_mul(g, dAtG[0][x], nhq);
            if (nx) t[n++] = mblx_mul(g, dW[0][x], nxq);
            for (int l = 0; l < FFR3_NL; l++)
                if (!is_zero(g, hq[l])) t[n++] = mblx_mul(g, hl_dload(F3, l, x), hq[l]);
            push(B, row, fcol[x], sumz(g, n, t, scr));
        }
        /* elastic columns */
        for (int l = 0; l < nl; l++) {
            int j = list[l];
            size_t nq = 0, nv = 0;
            mblx_id *tq = t, *tv = t + 32;
            for (int k = 0; k < 9; k++)
                if (val[k][j] != 0) {
                    tq[nq++] = mblx_scale(g, val[k][j], Cq[k]);
                    if (!is_zero(g, Cv[k])) tv[nv++] = mblx_scale(g, val[k][j], Cv[k]);
                }
            if (val[9][j] != 0) tq[nq++] = mblx_const(g, val[9][j]);
            if (val[12][j] != 0) tq[nq++] = mblx_scale(g, -val[12][j], AtG[0]);
            if (val[13][j] != 0) tq[nq++] = mblx_scale(g, -val[13][j], W[0]);
            for (int h = 0; h < FFR3_NL; h++)
                if (val[14 + h][j] != 0) tq[nq++] = mblx_scale(g, val[14 + h][j], hl_load(F3, h));
            if (val[10][j] != 0) tv[nv++] = mblx_const(g, val[10][j]);
            push(B, row, jq + fi[j], sumz(g, nq, tq, scr));
            push(B, row, jv + fi[j], sumz(g, nv, tv, scr));
            if (val[11][j] != 0) push(B, row, ja + fi[j], mblx_const(g, val[11][j]));
            mark[j] = 0;
            for (int k = 0; k < NVAL; k++) val[k][j] = 0;
        }
    }
}

/* The body sums over the elastic coordinates that the frame rows use (agg, NZ: see Z_*). */
static void body_sums3(const body3 *x, mblx_id *agg)
{
    mblx_graph *g = x->g;
    const mbl_ffr3 *sp = x->sp;
    int nf = x->nf;
    const int *fi = x->fi;
    const mblx_id *a = x->a, *v = x->v, *q = x->q;
    mblx_id *t = x->t;
    mblx_id *(*R)[9] = x->R;
    mblx_id zero = x->zero;
    const double *Sb = sp->Sb, *Cu = sp->Cu, *tw = sp->tw;
    /* ---- the body sums ---- */
    {
        for (int c = 0; c < 3; c++) {
            size_t n0 = 0, n1 = 0, n2 = 0;
            mblx_id *T0 = t, *T1 = t + nf + 1, *T2 = t + 2 * (size_t)nf + 2;
            if (sp->s0[c] != 0) T0[n0++] = mblx_const(g, sp->s0[c]);
            for (int j = 0; j < nf; j++)
                if (Sb[c * nf + j] != 0) {
                    T0[n0++] = mblx_scale(g, Sb[c * nf + j], q[fi[j]]);
                    T1[n1++] = mblx_scale(g, Sb[c * nf + j], v[fi[j]]);
                    T2[n2++] = mblx_scale(g, Sb[c * nf + j], a[fi[j]]);
                }
            agg[Z_S + c] = n0 ? mblx_sum(g, n0, T0) : zero;
            agg[Z_W1 + c] = n1 ? mblx_sum(g, n1, T1) : zero;
            agg[Z_W2 + c] = n2 ? mblx_sum(g, n2, T2) : zero;
        }
        /* Q_ab = Q0 + (Cu_ab + Cu_ba).q + q.(M_ab q); D_ab = Cu_ab.q' + q.(M_ab q');
         * h_k = E_ab - E_ba (k, a, b cyclic), E_ab = Cu_ab.q'' + q.(M_ab q'') */
        for (int u = 0; u < 6; u++) {
            int p = QA(u), r = QB(u);
            size_t n = 0;
            if (sp->Q0[u] != 0) t[n++] = mblx_const(g, sp->Q0[u]);
            for (int j = 0; j < nf; j++) {
                double c = CU(p, r, j) + CU(r, p, j);
                mblx_id f = R[0][AB(p, r)][j];
                if (c != 0) f = mblx_add(g, mblx_const(g, c), f);
                if (!is_zero(g, f)) t[n++] = mblx_mul(g, q[fi[j]], f);
            }
            agg[Z_Q + u] = n ? mblx_sum(g, n, t) : zero;
        }
        for (int k = 0; k < 9; k++) {
            int p = PA(k), r = PB(k);
            size_t n = 0;
            for (int j = 0; j < nf; j++) {
                if (CU(p, r, j) != 0) t[n++] = mblx_scale(g, CU(p, r, j), v[fi[j]]);
                if (!is_zero(g, R[1][k][j])) t[n++] = mblx_mul(g, q[fi[j]], R[1][k][j]);
            }
            agg[Z_D + k] = n ? mblx_sum(g, n, t) : zero;
        }
        for (int k = 0; k < 3; k++) {
            int p = (k + 1) % 3, r = (k + 2) % 3;
            size_t n = 0;
            for (int j = 0; j < nf; j++) {
                double c = CU(p, r, j) - CU(r, p, j);
                if (c != 0) t[n++] = mblx_scale(g, c, a[fi[j]]);
                mblx_id f = mblx_sub(g, R[2][AB(p, r)][j], R[2][AB(r, p)][j]);
                if (!is_zero(g, f)) t[n++] = mblx_mul(g, q[fi[j]], f);
            }
            agg[Z_H + k] = n ? mblx_sum(g, n, t) : zero;
        }
        size_t n1 = 0, n2 = 0;
        mblx_id *T1 = t, *T2 = t + nf + 1;
        for (int j = 0; j < nf; j++)
            if (tw[j] != 0) T1[n1++] = mblx_scale(g, tw[j], v[fi[j]]), T2[n2++] = mblx_scale(g, tw[j], a[fi[j]]);
        agg[Z_T1] = n1 ? mblx_sum(g, n1, T1) : zero;
        agg[Z_T2] = n2 ? mblx_sum(g, n2, T2) : zero;
    }
}

/* The frame rows (translation, Euler parameters) formed over placeholders for the body sums, then
 * the sums substituted, with their entries in the frame's and the elastic columns. */
static void frame_rows3(const body3 *x, const mblx_id *agg)
{
    mblx_graph *g = x->g;
    bld *B = x->B;
    const mbl_ffr3 *sp = x->sp;
    mblx_id *Fs = x->Fs;
    int nf = x->nf, ja = x->ja, jv = x->jv, jq = x->jq;
    const int *iR = x->iR, *ie = x->ie, *fi = x->fi;
    mblx_id *scr = x->scr, *t = x->t;
    mblx_id *(*R)[9] = x->R;
    const mblx_id *fsym = x->f->fsym;
    const int *fcol = x->fcol;
    const double *Sb = sp->Sb, *Cu = sp->Cu, *tw = sp->tw;
    mblx_id z[NZ];
    for (int k = 0; k < NZ; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "__ffr3_z%d", k);
        z[k] = mblx_symbol(g, nm);
    }
    mblx_id Fr[7];
    ffr3_frame_rows(g, x->f, sp->m, sp->IpL, z, Fr);
    if (mblx_graph_status(g, NULL)) {
        B->err = 1;
        return;
    }
    int frow[7] = {iR[0], iR[1], iR[2], ie[0], ie[1], ie[2], ie[3]};
    for (int r = 0; r < 7 && !B->err; r++) {
        int row = frow[r];
        Fs[row] = mblx_add(g, Fs[row], mblx_subst(g, Fr[r], NZ, z, agg));
        for (int x = 0; x < 15; x++) {
            mblx_id d = mblx_diff(g, Fr[r], fsym[x]);
            if (!is_zero(g, d)) push(B, row, fcol[x], mblx_subst(g, d, NZ, z, agg));
        }
        mblx_id ph[NZ];
        for (int k = 0; k < NZ; k++) ph[k] = mblx_diff(g, Fr[r], z[k]);
        for (int j = 0; j < nf && !B->err; j++) {
            mblx_id *tq = t, *tv = t + 32, *ta = t + 64;
            size_t nq = 0, nv = 0, na = 0;
            for (int c = 0; c < 3; c++) {
                double sbj = Sb[c * nf + j];
                if (sbj == 0) continue;
                tq[nq++] = mblx_mul(g, ph[Z_S + c], mblx_const(g, sbj));
                tv[nv++] = mblx_mul(g, ph[Z_W1 + c], mblx_const(g, sbj));
                ta[na++] = mblx_mul(g, ph[Z_W2 + c], mblx_const(g, sbj));
            }
            for (int u = 0; u < 6; u++) {
                int p = QA(u), rr = QB(u);
                if (is_zero(g, ph[Z_Q + u])) continue;
                double c = CU(p, rr, j) + CU(rr, p, j);
                mblx_id f = mblx_add(g, R[0][AB(p, rr)][j], R[0][AB(rr, p)][j]);
                if (c != 0) f = mblx_add(g, mblx_const(g, c), f);
                tq[nq++] = mblx_mul(g, ph[Z_Q + u], f);
            }
            for (int k = 0; k < 9; k++) {
                if (is_zero(g, ph[Z_D + k])) continue;
                int p = PA(k), rr = PB(k);
                tq[nq++] = mblx_mul(g, ph[Z_D + k], R[1][k][j]);
                mblx_id f = R[0][AB(rr, p)][j];
                if (CU(p, rr, j) != 0) f = mblx_add(g, mblx_const(g, CU(p, rr, j)), f);
                tv[nv++] = mblx_mul(g, ph[Z_D + k], f);
            }
            for (int k = 0; k < 3; k++) {
                if (is_zero(g, ph[Z_H + k])) continue;
                int p = (k + 1) % 3, rr = (k + 2) % 3;
                tq[nq++] = mblx_mul(g, ph[Z_H + k], mblx_sub(g, R[2][AB(p, rr)][j], R[2][AB(rr, p)][j]));
                double c = CU(p, rr, j) - CU(rr, p, j);
                mblx_id f = mblx_sub(g, R[0][AB(rr, p)][j], R[0][AB(p, rr)][j]);
                if (c != 0) f = mblx_add(g, mblx_const(g, c), f);
                ta[na++] = mblx_mul(g, ph[Z_H + k], f);
            }
            if (tw[j] != 0) {
                tv[nv++] = mblx_scale(g, tw[j], ph[Z_T1]);
                ta[na++] = mblx_scale(g, tw[j], ph[Z_T2]);
            }
            push(B, row, jq + fi[j], sumz(g, nq, tq, scr));
            push(B, row, jv + fi[j], sumz(g, nv, tv, scr));
            push(B, row, ja + fi[j], sumz(g, na, ta, scr));
        }
    }
}

void ffr3_frame_nodes(mblx_graph *g, const mblx_id e[4], const mblx_id ed[4], const mblx_id edd[4],
                      const mblx_id aR[3], const mblx_id gn[3], ffr3_frame *f)
{
    for (int k = 0; k < 4; k++) f->e[k] = e[k], f->ed[k] = ed[k], f->edd[k] = edd[k];
    for (int k = 0; k < 3; k++) f->aR[k] = aR[k], f->gn[k] = gn[k];
    mblx_id zero = mblx_const(g, 0.0);
    mblx_id Gm[3][4] = {{mblx_neg(g, e[1]), e[0], e[3], mblx_neg(g, e[2])},
                        {mblx_neg(g, e[2]), mblx_neg(g, e[3]), e[0], e[1]},
                        {mblx_neg(g, e[3]), e[2], mblx_neg(g, e[1]), e[0]}};
    memcpy(f->Gm, Gm, sizeof Gm);
    mblx_id *w = f->w, *al = f->al;
    for (int k = 0; k < 3; k++) {
        mblx_id tw4[4], ta4[4];
        for (int l = 0; l < 4; l++) tw4[l] = mblx_mul(g, Gm[k][l], ed[l]), ta4[l] = mblx_mul(g, Gm[k][l], edd[l]);
        w[k] = mblx_scale(g, 2.0, mblx_sum(g, 4, tw4));
        al[k] = mblx_scale(g, 2.0, mblx_sum(g, 4, ta4));
    }
    mblx_id ee[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) ee[i][j] = mblx_scale(g, 2.0, mblx_mul(g, e[i], e[j]));
    mblx_id one = mblx_const(g, 1.0);
    mblx_id A[3][3] = {
        {mblx_sub(g, mblx_add(g, ee[0][0], ee[1][1]), one), mblx_sub(g, ee[1][2], ee[0][3]), mblx_add(g, ee[1][3], ee[0][2])},
        {mblx_add(g, ee[1][2], ee[0][3]), mblx_sub(g, mblx_add(g, ee[0][0], ee[2][2]), one), mblx_sub(g, ee[2][3], ee[0][1])},
        {mblx_sub(g, ee[1][3], ee[0][2]), mblx_add(g, ee[2][3], ee[0][1]), mblx_sub(g, mblx_add(g, ee[0][0], ee[3][3]), one)}};
    memcpy(f->A, A, sizeof A);
    for (int k = 0; k < 3; k++) f->Gv[k] = mblx_sub(g, aR[k], gn[k]);
    for (int c = 0; c < 3; c++) {
        mblx_id t3[3] = {mblx_mul(g, A[0][c], f->Gv[0]), mblx_mul(g, A[1][c], f->Gv[1]), mblx_mul(g, A[2][c], f->Gv[2])};
        f->AtG[c] = mblx_sum(g, 3, t3);
    }
    mblx_id ww = mblx_add(g, mblx_add(g, mblx_mul(g, w[0], w[0]), mblx_mul(g, w[1], w[1])), mblx_mul(g, w[2], w[2]));
    /* Cq[ab] = W_ab + the al part of the P_k, Cv[ab] = 2 w part: (P_x = M_zy - M_yz, P_y = M_xz - M_zx,
     * P_z = M_yx - M_xy) */
    mblx_id *W = f->W, *Cq = f->Cq, *Cv = f->Cv;
    for (int k = 0; k < 9; k++) {
        W[k] = mblx_mul(g, w[PA(k)], w[PB(k)]);
        if (PA(k) == PB(k)) W[k] = mblx_sub(g, W[k], ww);
        Cq[k] = W[k], Cv[k] = zero;
    }
    static const int pp[3] = {AB(2, 1), AB(0, 2), AB(1, 0)}, pm[3] = {AB(1, 2), AB(2, 0), AB(0, 1)};
    for (int k = 0; k < 3; k++) {
        Cq[pp[k]] = mblx_add(g, Cq[pp[k]], al[k]);
        Cq[pm[k]] = mblx_sub(g, Cq[pm[k]], al[k]);
        Cv[pp[k]] = mblx_scale(g, 2.0, w[k]);
        Cv[pm[k]] = mblx_scale(g, -2.0, w[k]);
    }
    /* the derivatives of the frame quantities by the frame's unknowns */
    for (int k = 0; k < 3; k++) f->fsym[k] = aR[k];
    for (int k = 0; k < 4; k++) f->fsym[3 + k] = edd[k], f->fsym[7 + k] = ed[k], f->fsym[11 + k] = e[k];
    for (int x = 0; x < FFR3_NFS; x++) {
        for (int k = 0; k < 3; k++) {
            f->dAtG[k][x] = mblx_diff(g, f->AtG[k], f->fsym[x]);
            f->dal[k][x] = mblx_diff(g, al[k], f->fsym[x]);
            f->dw2[k][x] = mblx_scale(g, 2.0, mblx_diff(g, w[k], f->fsym[x]));
        }
        for (int k = 0; k < 9; k++) f->dW[k][x] = mblx_diff(g, W[k], f->fsym[x]);
    }
}

void ffr3_frame_rows(mblx_graph *g, const ffr3_frame *f, double m, double IpL, const mblx_id *z, mblx_id Fr[7])
{
    const mblx_id *w = f->w, *al = f->al, *Gv = f->Gv, *gn = f->gn, *aR = f->aR, *e = f->e;
    const mblx_id(*A)[3] = f->A, (*Gm)[4] = f->Gm;
    const mblx_id *s = z + Z_S, *w1 = z + Z_W1, *w2 = z + Z_W2;
    mblx_id as[3], ws[3], wws[3], ww1[3], b[3];
    vec3_nodes_cross(g, al, s, as);
    vec3_nodes_cross(g, w, s, ws);
    vec3_nodes_cross(g, w, ws, wws);
    vec3_nodes_cross(g, w, w1, ww1);
    for (int k = 0; k < 3; k++) {
        mblx_id t4[4] = {as[k], wws[k], mblx_scale(g, 2.0, ww1[k]), w2[k]};
        b[k] = mblx_sum(g, 4, t4);
    }
    for (int r = 0; r < 3; r++) {
        mblx_id t4[4] = {mblx_scale(g, m, Gv[r]), mblx_mul(g, A[r][0], b[0]), mblx_mul(g, A[r][1], b[1]),
                         mblx_mul(g, A[r][2], b[2])};
        Fr[r] = mblx_sum(g, 4, t4);
    }
    /* I = tr(Q) 1 - Q */
    const mblx_id *Q = z + Z_Q;
    mblx_id Im[3][3];
    Im[0][0] = mblx_add(g, Q[1], Q[2]), Im[1][1] = mblx_add(g, Q[0], Q[2]), Im[2][2] = mblx_add(g, Q[0], Q[1]);
    Im[0][1] = Im[1][0] = mblx_neg(g, Q[3]), Im[0][2] = Im[2][0] = mblx_neg(g, Q[4]), Im[1][2] = Im[2][1] = mblx_neg(g, Q[5]);
    mblx_id Ia[3], Iw[3], wIw[3], sG[3], n[3];
    for (int k = 0; k < 3; k++) {
        mblx_id t3[3] = {mblx_mul(g, Im[k][0], al[0]), mblx_mul(g, Im[k][1], al[1]), mblx_mul(g, Im[k][2], al[2])};
        mblx_id u3[3] = {mblx_mul(g, Im[k][0], w[0]), mblx_mul(g, Im[k][1], w[1]), mblx_mul(g, Im[k][2], w[2])};
        Ia[k] = mblx_sum(g, 3, t3), Iw[k] = mblx_sum(g, 3, u3);
    }
    vec3_nodes_cross(g, w, Iw, wIw);
    /* the inertia of the frame's translation, s x A^T R''; gravity below as the derivative of its
     * potential (the Jacobian's stiffness part stays symmetric: the symmetric sparse path) */
    mblx_id AtR[3];
    for (int c = 0; c < 3; c++) {
        mblx_id t3[3] = {mblx_mul(g, A[0][c], aR[0]), mblx_mul(g, A[1][c], aR[1]), mblx_mul(g, A[2][c], aR[2])};
        AtR[c] = mblx_sum(g, 3, t3);
    }
    vec3_nodes_cross(g, s, AtR, sG);
    const mblx_id *D = z + Z_D;
    mblx_id trD = mblx_add(g, mblx_add(g, D[0], D[4]), D[8]);
    mblx_id H = mblx_add(g, mblx_scale(g, IpL, w[0]), z[Z_T1]);
    for (int k = 0; k < 3; k++) {
        /* 2 (tr(D) w_k - (D^T w)_k), (D^T w)_k = sum_b D_bk w_b */
        mblx_id d3[3] = {mblx_mul(g, D[AB(0, k)], w[0]), mblx_mul(g, D[AB(1, k)], w[1]), mblx_mul(g, D[AB(2, k)], w[2])};
        mblx_id Dw = mblx_sub(g, mblx_mul(g, trD, w[k]), mblx_sum(g, 3, d3));
        mblx_id polar = k == 0 ? mblx_add(g, mblx_scale(g, IpL, al[0]), z[Z_T2])
                               : k == 1 ? mblx_mul(g, w[2], H) : mblx_neg(g, mblx_mul(g, w[1], H));
        mblx_id t6[6] = {sG[k], Ia[k], wIw[k], mblx_scale(g, 2.0, Dw), z[Z_H + k], polar};
        n[k] = mblx_sum(g, 6, t6);
    }
    /* V = -g . A(e) s: the e rows' gravity is dV/de (2 G^T (s x A^T (-g)) up to a multiple of e) */
    mblx_id vt[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) vt[3 * r + c] = mblx_mul(g, mblx_mul(g, gn[r], A[r][c]), s[c]);
    mblx_id V = mblx_neg(g, mblx_sum(g, 9, vt));
    for (int l = 0; l < 4; l++) {
        mblx_id t3[3] = {mblx_mul(g, Gm[0][l], n[0]), mblx_mul(g, Gm[1][l], n[1]), mblx_mul(g, Gm[2][l], n[2])};
        Fr[3 + l] = mblx_add(g, mblx_scale(g, 2.0, mblx_sum(g, 3, t3)), mblx_diff(g, V, e[l]));
    }
}

int model_ffr3_formulate_inv(mbl_model *md, const mbl_ffr3 *sp, const mbla_csc *C, const mblx_id *gn, const int *qidx,
                           mblx_id *Fs, mbl_sjac *J, mbl_status *st)
{
    mblx_graph *g = md->g;
    bld B = {g, J, 0};
    int nf = sp->nf, ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V),
        jq = model_blk0(md, MBL_BLK_Q);
    const int *iR = qidx, *ie = qidx + 3, *fi = qidx + 7;
    const mblx_id *a = md->a, *v = md->v, *q = md->q;
    size_t ns = (size_t)4 * nf + 64;
    mblx_id *scr = mbl_alloc_array(ns, sizeof *scr), *t = mbl_alloc_array(ns, sizeof *t);
    mblx_id *R[3][9]; /* (M_ab x)_j for x = qf, qf', qf'' */
    memset(R, 0, sizeof R);
    double *val[NVAL]; /* a row's entries: M_ab[i, j] (9), K, C, Mc, H1, Hx */
    memset(val, 0, sizeof val);
    int *mark = mbl_calloc((size_t)nf + 1, sizeof *mark), *list = mbl_alloc_array((size_t)nf + 1, sizeof *list);
    mblx_id *hs = mbl_alloc_array((size_t)2 * nf + 2, sizeof *hs);
    int ok = scr && t && mark && list && hs;
    for (int x = 0; x < 3 && ok; x++)
        for (int k = 0; k < 9 && ok; k++) ok = (R[x][k] = mbl_alloc_array((size_t)nf + 1, sizeof **R[x])) != NULL;
    for (int k = 0; k < NVAL && ok; k++) ok = (val[k] = mbl_calloc((size_t)nf + 1, sizeof *val[k])) != NULL;
    if (!ok) {
        B.err = 1;
        goto out;
    }
    mblx_id zero = mblx_const(g, 0.0);
    /* (M_ab x)_j = row j of M_ab . x = column j of M_ba . x */
    const mblx_id *xs[3] = {q, v, a};
    for (int x = 0; x < 3; x++)
        for (int k = 0; k < 9; k++)
            for (int j = 0; j < nf; j++) R[x][k][j] = col_dot(g, sp->M[AB(PB(k), PA(k))], j, xs[x], fi, scr);

    /* ---- the frame's quantities ---- */
    mblx_id e[4], ed[4], edd[4], aR[3];
    for (int k = 0; k < 4; k++) e[k] = q[ie[k]], ed[k] = v[ie[k]], edd[k] = a[ie[k]];
    for (int k = 0; k < 3; k++) aR[k] = a[iR[k]];
    ffr3_frame F3;
    ffr3_frame_nodes(g, e, ed, edd, aR, gn, &F3);
    /* the frame's unknowns' columns */
    int fcol[15];
    for (int k = 0; k < 3; k++) fcol[k] = ja + iR[k];
    for (int k = 0; k < 4; k++) fcol[3 + k] = ja + ie[k], fcol[7 + k] = jv + ie[k], fcol[11 + k] = jq + ie[k];
    if (mblx_graph_status(g, NULL)) {
        B.err = 1;
        goto out;
    }

    body3 x = {g, &B, sp, C, gn, Fs, nf, ja, jv, jq, iR, ie, fi, a, v, q, scr, t, R, val, mark, list, zero, &F3, fcol, hs};
    elastic_rows3(&x);
    if (B.err) goto out;

    mblx_id agg[NZ];
    body_sums3(&x, agg);
    frame_rows3(&x, agg);
out:
    mbl_free(scr), mbl_free(t), mbl_free(mark), mbl_free(list), mbl_free(hs);
    for (int x = 0; x < 3; x++)
        for (int k = 0; k < 9; k++) mbl_free(R[x][k]);
    for (int k = 0; k < NVAL; k++) mbl_free(val[k]);
    if (B.err) return mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}

int model_ffr3_formulate(mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gn, mblx_id *Fs,
                       mbl_sjac *J, mbl_status *st)
{
    const mbl_ffr3 *sp = b->sp;
    mbla_csc *C = NULL;
    int rc = model_ffr_damping(b, sp->Mc, sp->K, &C, st);
    if (rc) return rc;
    rc = model_ffr3_formulate_inv(md, sp, C, gn, qidx, Fs, J, st);
    mbla_csc_free(C);
    return rc;
}

int model_ffr3_keep_nodes(const mbl_ffr_body *b, const int *qidx, mbl_flex_nodes *f, mbl_status *st)
{
    const mbl_ffr3 *sp = b->sp;
    f->dim = 3;
    for (int k = 0; k < 7; k++) f->q[k] = qidx[k];
    f->nnode = sp->nnode;
    f->X0 = mbl_alloc_array((size_t)3 * sp->nnode + 1, sizeof *f->X0);
    f->qn = mbl_alloc_array((size_t)6 * sp->nnode + 1, sizeof *f->qn);
    if (!f->X0 || !f->qn) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (sp->nnode) memcpy(f->X0, sp->X0, (size_t)3 * sp->nnode * sizeof *f->X0);
    for (int i = 0; i < 6 * sp->nnode; i++) f->qn[i] = sp->ndof[i] >= 0 ? qidx[7 + sp->ndof[i]] : -1;
    return 0;
}

/* A(e), row-major */
static void rot(const double *e, double *A)
{
    A[0] = 2 * (e[0] * e[0] + e[1] * e[1]) - 1, A[1] = 2 * (e[1] * e[2] - e[0] * e[3]), A[2] = 2 * (e[1] * e[3] + e[0] * e[2]);
    A[3] = 2 * (e[1] * e[2] + e[0] * e[3]), A[4] = 2 * (e[0] * e[0] + e[2] * e[2]) - 1, A[5] = 2 * (e[2] * e[3] - e[0] * e[1]);
    A[6] = 2 * (e[1] * e[3] - e[0] * e[2]), A[7] = 2 * (e[2] * e[3] + e[0] * e[1]), A[8] = 2 * (e[0] * e[0] + e[3] * e[3]) - 1;
}

void model_ffr3_shape(const mbl_flex_nodes *f, const double *q, const double *dq, double *pos, double *disp)
{
    double e[4], A[9], dA[9] = {0}, dpi[3] = {0};
    for (int k = 0; k < 4; k++) e[k] = q[f->q[3 + k]];
    rot(e, A);
    if (disp && dq) {
        double de[4];
        for (int k = 0; k < 4; k++) de[k] = dq[f->q[3 + k]];
        /* dA = sum_k dA/de_k de_k (A is quadratic in e); dpi = 2 G(e) de (body frame) */
#define P_(i, j) (e[i] * de[j] + de[i] * e[j])
        double dA_[9] = {2 * (P_(0, 0) + P_(1, 1)), 2 * (P_(1, 2) - P_(0, 3)), 2 * (P_(1, 3) + P_(0, 2)),
                         2 * (P_(1, 2) + P_(0, 3)), 2 * (P_(0, 0) + P_(2, 2)), 2 * (P_(2, 3) - P_(0, 1)),
                         2 * (P_(1, 3) - P_(0, 2)), 2 * (P_(2, 3) + P_(0, 1)), 2 * (P_(0, 0) + P_(3, 3))};
#undef P_
        memcpy(dA, dA_, sizeof dA);
        dpi[0] = 2 * (-e[1] * de[0] + e[0] * de[1] + e[3] * de[2] - e[2] * de[3]);
        dpi[1] = 2 * (-e[2] * de[0] - e[3] * de[1] + e[0] * de[2] + e[1] * de[3]);
        dpi[2] = 2 * (-e[3] * de[0] + e[2] * de[1] - e[1] * de[2] + e[0] * de[3]);
    }
    for (int i = 0; i < f->nnode; i++) {
        const int *qn = f->qn + 6 * i;
        double u[3], du[6];
        for (int k = 0; k < 3; k++) u[k] = f->X0[3 * i + k] + (qn[k] >= 0 ? q[qn[k]] : 0);
        if (pos)
            for (int r = 0; r < 3; r++) pos[3 * i + r] = q[f->q[r]] + A[3 * r] * u[0] + A[3 * r + 1] * u[1] + A[3 * r + 2] * u[2];
        if (disp && dq) {
            for (int k = 0; k < 6; k++) du[k] = qn[k] >= 0 ? dq[qn[k]] : 0;
            for (int r = 0; r < 3; r++) {
                double d = dq[f->q[r]];
                for (int c = 0; c < 3; c++) d += dA[3 * r + c] * u[c] + A[3 * r + c] * du[c];
                disp[6 * i + r] = d;
                /* the node's small rotation, global: A (dpi + the node's rotations) */
                double w = 0;
                for (int c = 0; c < 3; c++) w += A[3 * r + c] * (dpi[c] + du[3 + c]);
                disp[6 * i + 3 + r] = w;
            }
        }
    }
}

/* ==== the dependence on the parameters (sensitivities; model/ffr.h's factors) ================= */

/* the derivative scale of an entry with length power e under factor f (ffr.c's dscale) */
static double dsc(const mbl_ffr_factor *f, double e) { return f->kind == MBL_FFR_FAC_LENGTH ? e / f->value : 1.0 / f->value; }

/* Y = X with entry (i, j) times its derivative scale under factor f, only the entries f scales:
 * what 0: a mass matrix (M_ab, Mc: entries between two twists are the sections' polar inertia),
 * 1: the stiffness (by class); base: a mass matrix's own length power (1 for M_ab and Mc, 0 for the
 * geometric H1, 1 for Hx: per unit load, rho A L^(lexp_i + lexp_j) and one L more for Hx) */
static int csc_d(const mbla_csc *X, const mbl_ffr_body *b, const mbl_ffr_factor *f, int what, double base,
                 mbla_csc **Y, mbl_status *st)
{
    *Y = NULL;
    if (!X) return 0;
    int nz = mbla_csc_nnz(X), k = 0, rc = 0;
    int *ti = mbl_alloc_array((size_t)nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)nz + 1, sizeof *tx);
    if (!ti || !tj || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; !rc && j < X->n; j++)
        for (int p = X->p[j]; p < X->p[j + 1]; p++) {
            int i = X->i[p], ci = b->kcls[i], cj = b->kcls[j];
            double le = b->lexp[i] + b->lexp[j], s = 0;
            if (what == 1) {
                if (ci != cj) {
                    rc = mbl_error(st, MBL_EMODEL, "the stiffness couples coordinates of two classes");
                    break;
                }
                if (f->kind == MBL_FFR_FAC_LENGTH) s = dsc(f, b->kexp[ci] + le);
                else if (f->kind == MBL_FFR_FAC_STIFF && f->cls == ci) s = dsc(f, 0);
            } else {
                int polar = ci == 3 && cj == 3;
                if (f->kind == MBL_FFR_FAC_LENGTH) s = dsc(f, base + le);
                else if ((f->kind == MBL_FFR_FAC_MASS && !polar) || (f->kind == MBL_FFR_FAC_POLAR && polar)) s = dsc(f, 0);
            }
            if (s != 0) ti[k] = i, tj[k] = j, tx[k++] = s * X->x[p];
        }
    if (!rc) rc = mbla_csc_from_triplets(X->m, X->n, k, ti, tj, tx, NULL, Y, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

int model_ffr3_dinv(const mbl_ffr_body *b, int k, mbl_ffr3 *dv, mbla_csc **dC, mbl_status *st)
{
    const mbl_ffr3 *sp = b->sp;
    const mbl_ffr_factor *f = &b->fac[k];
    int nf = sp->nf, rc = 0;
    memset(dv, 0, sizeof *dv);
    *dC = NULL;
    dv->nf = nf;
    dv->Sb = mbl_calloc((size_t)3 * nf + 1, sizeof *dv->Sb), dv->Cu = mbl_calloc((size_t)9 * nf + 1, sizeof *dv->Cu);
    dv->tw = mbl_calloc((size_t)nf + 1, sizeof *dv->tw);
    if (!dv->Sb || !dv->Cu || !dv->tw) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int len = f->kind == MBL_FFR_FAC_LENGTH, mass = f->kind == MBL_FFR_FAC_MASS || len;
    int polar = f->kind == MBL_FFR_FAC_POLAR || len, stiff = f->kind == MBL_FFR_FAC_STIFF || len;
    if (mass) {
        dv->m = dsc(f, 1) * sp->m;
        for (int c = 0; c < 3; c++) dv->s0[c] = dsc(f, 2) * sp->s0[c];
        for (int c = 0; c < 6; c++) dv->Q0[c] = dsc(f, 3) * sp->Q0[c];
        for (int c = 0; c < 9; c++)
            for (int j = 0; j < nf; j++) {
                double l = b->lexp[j];
                if (c < 3) dv->Sb[c * nf + j] = dsc(f, 1 + l) * sp->Sb[c * nf + j];
                dv->Cu[c * nf + j] = dsc(f, 2 + l) * sp->Cu[c * nf + j];
            }
        for (int c = 0; c < 9 && !rc; c++) rc = csc_d(sp->M[c], b, f, 0, 1, &dv->M[c], st);
        if (!rc) rc = csc_d(sp->H1, b, f, 0, 0, &dv->H1, st);
        if (!rc) rc = csc_d(sp->Hx, b, f, 0, 1, &dv->Hx, st);
    }
    if (polar) {
        dv->IpL = dsc(f, 1) * sp->IpL;
        for (int j = 0; j < nf; j++) dv->tw[j] = dsc(f, 1 + b->lexp[j]) * sp->tw[j];
    }
    if (!rc && (mass || polar)) rc = csc_d(sp->Mc, b, f, 0, 1, &dv->Mc, st);
    if (!rc && stiff) rc = csc_d(sp->K, b, f, 1, 0, &dv->K, st);
    if (rc) return rc;
    if (f->kind == MBL_FFR_FAC_ALPHA) return mbla_csc_copy(sp->Mc, dC, st);
    if (f->kind == MBL_FFR_FAC_BETA) return mbla_csc_copy(sp->K, dC, st);
    double al = dv->Mc ? b->alpha : 0, be = dv->K ? b->beta : 0;
    if (al == 0 && be == 0) return 0;
    if (!dv->Mc) return mbla_csc_add(0.0, dv->K, be, dv->K, dC, st);
    if (!dv->K) return mbla_csc_add(al, dv->Mc, 0.0, dv->Mc, dC, st);
    return mbla_csc_add(al, dv->Mc, be, dv->K, dC, st);
}
