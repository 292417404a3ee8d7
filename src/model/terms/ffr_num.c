/* The planar structured term (model/ffr.h) evaluated numerically beside the tapes.
 *
 * ffr.c writes a flexible body's rows and Jacobian entries as expression nodes compiled into the
 * model's tapes: exact, but about 20 KB per coordinate of graph and tape. The same closed forms
 * (ffr.h's rows and their derivatives, term by term as ffr.c's `formulate` builds them) are
 * evaluated here directly from the invariants at the point: one pass over the nonzeros of Mff, P,
 * K, C, H1, Hx (Hy, Ha) per evaluation, no scratch, thread-safe. The model keeps only the invariants, the union
 * pattern of the elastic rows and, for every entry, its index in md->jac (O(nnz) integers).
 *
 * Loading: model_ffr_add pushes the body's Jacobian pattern into md->sjac with the node 0 (so the
 * pattern merges like the expression form's) and remembers where; after the merge model_compile's bind
 * (the term's remap entry) turns those places into md->jac indices and moves the entries no tape computes (node 0) to the
 * end of md->jac: tape_jac is compiled over the first md->jac_ntape entries, and
 * model_eval_jac zeroes the rest and adds the structured values. model_eval_F adds the rows.
 * The expression form is built on demand (model_ffr_num_exprs, merged by model_dae_nodes) for what differentiates or prints the
 * equations: the sensitivities (dae_deriv.c) and the symbolic linear models (codegen/symlin.c). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "model/ffr.h"
#include "model/ffr3.h"
#include "model/formulate.h"
#include "model/model_internal.h"
#include "model/terms/term.h"

#define GWORK_MAX 64 /* the gravity tape's work must fit on the stack */
#define NU 8         /* matrices in the union pattern: Mff, P, K, C, the geometric H1, Hx and a modal body's Hy, Ha */

struct mbl_ffr_num {
    char *name;
    int nf;
    int *qidx;                 /* 3 + nf model coordinate indices */
    mbl_ffr_invariants inv;    /* a copy of the body's */
    mbla_csc *C;               /* Rayleigh damping alpha Mff + beta K, or NULL */
    mblx_id gn[2];             /* gravity as nodes (for the expression form) */
    double g[2];               /* gravity when constant */
    mblx_tape *gtape;          /* gravity of the parameters, or NULL */
    /* the union pattern of the rows of Mff, P, K, C (symmetric pattern: column i = row i) */
    int *up, *ui;
    int ns;                    /* values per entry: 6, or NU when Hy or Ha is given */
    double *uv;                /* ns per entry: Mff_ij, P_ij, K_ij, C_ij, H1_ij, Hx_ij (, Hy_ij, Ha_ij) */
    int *upos;                 /* 3 per entry: md->jac index of (row fi, a / v / q of fj), -1: none */
    int *epos;                 /* 5 per elastic row i: a R0, a R1, a th, v th, q th */
    int *fpos;                 /* 9 per elastic j: rows R0, R1, th x (a, v, q) of fj */
    int rpos[2][4];            /* frame rows R0, R1: a R_r, a th, v th, q th */
    int tpos[5];               /* frame row th: a R0, a R1, a th, v th, q th */
};

static atomic_int numeric_on = 1;

void model_ffr_set_numeric(int on) { atomic_store(&numeric_on, on ? 1 : 0); }
int model_ffr_numeric(void) { return atomic_load(&numeric_on); }

static void num_free(mbl_ffr_num *b)
{
    mbl_free(b->name), mbl_free(b->qidx);
    model_ffr_invariants_free(&b->inv);
    mbla_csc_free(b->C);
    mblx_tape_free(b->gtape);
    mbl_free(b->up), mbl_free(b->ui), mbl_free(b->uv), mbl_free(b->upos), mbl_free(b->epos), mbl_free(b->fpos);
    memset(b, 0, sizeof *b);
}

void model_ffr_num_free(mbl_model *md)
{
    for (int i = 0; i < md->nffrn; i++) num_free(&md->ffrn[i]);
    mbl_free(md->ffrn);
    md->ffrn = NULL;
    md->nffrn = 0;
}

static int colnz(const mbla_csc *X, int j)
{
    if (X)
        for (int p = X->p[j]; p < X->p[j + 1]; p++)
            if (X->x[p] != 0) return 1;
    return 0;
}

/* push (row, col) with the node 0 and remember its md->sjac index in *pos (-1 when !want) */
static int push0(mbl_model *md, mblx_id zero, int want, int row, int col, int *pos)
{
    *pos = -1;
    if (!want) return 0;
    *pos = md->sjac.nz;
    return model_sjac_push(&md->sjac, row, col, zero);
}

static int copy_inv(const mbl_ffr_invariants *a, mbl_ffr_invariants *b, mbl_status *st)
{
    int nf = a->nf;
    memset(b, 0, sizeof *b);
    b->nf = nf, b->m = a->m, b->J0 = a->J0, b->s0[0] = a->s0[0], b->s0[1] = a->s0[1];
    b->Sb = mbl_calloc((size_t)2 * nf + 1, sizeof *b->Sb);
    b->c1 = mbl_calloc((size_t)nf + 1, sizeof *b->c1);
    b->c2 = mbl_calloc((size_t)nf + 1, sizeof *b->c2);
    if (!b->Sb || !b->c1 || !b->c2) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (a->Sb) memcpy(b->Sb, a->Sb, (size_t)2 * nf * sizeof *b->Sb);
    if (a->c1) memcpy(b->c1, a->c1, (size_t)nf * sizeof *b->c1);
    if (a->c2) memcpy(b->c2, a->c2, (size_t)nf * sizeof *b->c2);
    int rc = 0;
    if (a->Mff) rc = mbla_csc_copy(a->Mff, &b->Mff, st);
    if (!rc && a->P) rc = mbla_csc_copy(a->P, &b->P, st);
    if (!rc && a->K) rc = mbla_csc_copy(a->K, &b->K, st);
    if (!rc && a->H1) rc = mbla_csc_copy(a->H1, &b->H1, st);
    if (!rc && a->Hx) rc = mbla_csc_copy(a->Hx, &b->Hx, st);
    if (!rc && a->Hy) rc = mbla_csc_copy(a->Hy, &b->Hy, st);
    if (!rc && a->Ha) rc = mbla_csc_copy(a->Ha, &b->Ha, st);
    return rc;
}

/* the union pattern of the columns of Mff, P, K, C, H1, Hx (Hy, Ha) and the values of row i (= column i,
 * with P's sign turned: P_ij = -P_ji) */
static int build_union(mbl_ffr_num *b, mbl_status *st)
{
    int nf = b->nf;
    const mbla_csc *X[NU] = {b->inv.Mff, b->inv.P, b->inv.K, b->C, b->inv.H1, b->inv.Hx, b->inv.Hy, b->inv.Ha};
    int ns = b->ns = b->inv.Hy || b->inv.Ha ? NU : 6;
    size_t cap = 0;
    for (int k = 0; k < ns; k++)
        if (X[k]) cap += (size_t)mbla_csc_nnz(X[k]);
    b->up = mbl_calloc((size_t)nf + 1, sizeof *b->up);
    b->ui = mbl_alloc_array(cap + 1, sizeof *b->ui);
    b->uv = mbl_calloc(ns * cap + ns, sizeof *b->uv);
    int *mark = mbl_alloc_array((size_t)nf + 1, sizeof *mark);
    if (!b->up || !b->ui || !b->uv || !mark) {
        mbl_free(mark);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < nf; j++) mark[j] = -1;
    int nz = 0;
    for (int i = 0; i < nf; i++) {
        int e0 = nz;
        for (int k = 0; k < ns; k++) {
            if (!X[k]) continue;
            for (int p = X[k]->p[i]; p < X[k]->p[i + 1]; p++) {
                int j = X[k]->i[p];
                if (mark[j] < e0) mark[j] = nz, b->ui[nz++] = j;
                b->uv[ns * (size_t)mark[j] + k] += (k == 1 ? -1.0 : 1.0) * X[k]->x[p];
            }
        }
        b->up[i + 1] = nz;
    }
    mbl_free(mark);
    /* the union is smaller than the four patterns together */
    int *ui = mbl_realloc_array(b->ui, (size_t)nz + 1, sizeof *ui);
    if (ui) b->ui = ui;
    double *uv = mbl_realloc_array(b->uv, ns * (size_t)nz + ns, sizeof *uv);
    if (uv) b->uv = uv;
    return 0;
}

static int add_num(mbl_model *md, const mbl_ffr_body *fb, const int *qidx, const mblx_id *gnode, mbl_status *st)
{
    mbl_ffr_num *arr = mbl_realloc_array(md->ffrn, (size_t)md->nffrn + 1, sizeof *arr);
    if (!arr) return mbl_error(st, MBL_ENOMEM, "out of memory");
    md->ffrn = arr;
    mbl_ffr_num *b = &md->ffrn[md->nffrn++];
    memset(b, 0, sizeof *b);
    int nf = fb->inv.nf, rc = 0;
    b->nf = nf;
    size_t ln = strlen(fb->name ? fb->name : "flexible body");
    b->name = mbl_malloc(ln + 1);
    b->qidx = mbl_alloc_array((size_t)nf + 3, sizeof *b->qidx);
    if (!b->name || !b->qidx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(b->name, fb->name ? fb->name : "flexible body", ln + 1);
    memcpy(b->qidx, qidx, ((size_t)nf + 3) * sizeof *qidx);
    if ((rc = copy_inv(&fb->inv, &b->inv, st))) return rc;
    if (fb->alpha != 0 || fb->beta != 0 || fb->Cm) {
        /* ffr.c's C (mbla_csc_add needs both matrices) */
        if (!fb->inv.Mff || !fb->inv.K) return 1;
        if ((rc = model_ffr_damping(fb, fb->inv.Mff, fb->inv.K, &b->C, st))) return rc;
    }
    mblx_graph *g = md->g;
    for (int k = 0; k < 2; k++) b->gn[k] = gnode ? gnode[k] : mblx_const(g, fb->g[k]);
    if (mblx_is_const(g, b->gn[0], &b->g[0]) + mblx_is_const(g, b->gn[1], &b->g[1]) < 2) {
        b->gtape = mblx_compile(g, 2, b->gn, st);
        if (!b->gtape) return st && st->code ? st->code : MBL_ENOMEM;
        if (mblx_tape_work_size(b->gtape) > GWORK_MAX) return 1; /* too long for the stack: the expression form */
    }
    if ((rc = build_union(b, st))) return rc;
    int nu = b->up[nf];
    b->upos = mbl_alloc_array((size_t)3 * nu + 1, sizeof *b->upos);
    b->epos = mbl_alloc_array((size_t)5 * nf + 1, sizeof *b->epos);
    b->fpos = mbl_alloc_array((size_t)9 * nf + 1, sizeof *b->fpos);
    if (!b->upos || !b->epos || !b->fpos) return mbl_error(st, MBL_ENOMEM, "out of memory");

    /* the pattern: an entry wherever ffr.c's formulate pushes a node that is not the constant 0 */
    mblx_id zero = mblx_const(g, 0.0);
    int ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q);
    const int *fi = qidx + 3;
    int iR[2] = {qidx[0], qidx[1]}, ith = qidx[2], e = 0;
    const mbl_ffr_invariants *inv = &b->inv;
    const double *Sb0 = inv->Sb, *Sb1 = inv->Sb + nf;
    for (int r = 0; r < 2 && !e; r++) {
        e |= push0(md, zero, inv->m != 0, iR[r], ja + iR[r], &b->rpos[r][0]);
        e |= push0(md, zero, 1, iR[r], ja + ith, &b->rpos[r][1]);
        e |= push0(md, zero, 1, iR[r], jv + ith, &b->rpos[r][2]);
        e |= push0(md, zero, 1, iR[r], jq + ith, &b->rpos[r][3]);
    }
    int tcol[5] = {ja + iR[0], ja + iR[1], ja + ith, jv + ith, jq + ith};
    for (int k = 0; k < 5 && !e; k++) e |= push0(md, zero, 1, ith, tcol[k], &b->tpos[k]);
    for (int j = 0; j < nf && !e; j++) {
        int sb = Sb0[j] != 0 || Sb1[j] != 0, pnz = colnz(inv->P, j), mnz = colnz(inv->Mff, j);
        /* the geometric stiffness (ffr.h) */
        int hnz = colnz(inv->H1, j) || colnz(inv->Hy, j), xnz = colnz(inv->Hx, j), anz = colnz(inv->Ha, j);
        int y1 = inv->c1[j] != 0 || mnz, y2 = inv->c2[j] != 0 || pnz;
        int *fp = b->fpos + 9 * (size_t)j;
        for (int r = 0; r < 2; r++) {
            e |= push0(md, zero, sb, iR[r], ja + fi[j], &fp[3 * r]);
            e |= push0(md, zero, sb, iR[r], jv + fi[j], &fp[3 * r + 1]);
            e |= push0(md, zero, sb, iR[r], jq + fi[j], &fp[3 * r + 2]);
        }
        e |= push0(md, zero, y2, ith, ja + fi[j], &fp[6]);
        e |= push0(md, zero, y1, ith, jv + fi[j], &fp[7]);
        e |= push0(md, zero, sb || y1 || mnz || pnz, ith, jq + fi[j], &fp[8]);
        /* elastic row j */
        int *ep = b->epos + 5 * (size_t)j, row = fi[j];
        e |= push0(md, zero, sb || hnz, row, ja + iR[0], &ep[0]);
        e |= push0(md, zero, sb || hnz, row, ja + iR[1], &ep[1]);
        e |= push0(md, zero, y2 || anz, row, ja + ith, &ep[2]);
        e |= push0(md, zero, pnz || y1 || xnz, row, jv + ith, &ep[3]);
        e |= push0(md, zero, sb || hnz, row, jq + ith, &ep[4]);
        for (int u = b->up[j]; u < b->up[j + 1] && !e; u++) {
            const double *x = b->uv + b->ns * (size_t)u;
            int col = fi[b->ui[u]], ya = b->ns > 6 && (x[6] != 0 || x[7] != 0);
            e |= push0(md, zero, x[0] != 0, row, ja + col, &b->upos[3 * (size_t)u]);
            e |= push0(md, zero, x[1] != 0 || x[3] != 0, row, jv + col, &b->upos[3 * (size_t)u + 1]);
            e |= push0(md, zero, x[0] != 0 || x[1] != 0 || x[2] != 0 || x[4] != 0 || x[5] != 0 || ya, row, jq + col,
                       &b->upos[3 * (size_t)u + 2]);
        }
    }
    if (e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}

int model_ffr_add(mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode, mblx_id *Fs, mbl_sjac *J,
                mbl_status *st)
{
    if (b->sp && model_ffr_numeric() && J == &md->sjac) { /* spatial: terms/ffr3_num.c */
        int rc = model_ffr3_num_add(md, b, qidx, gnode, st);
        if (rc <= 0) return rc;
    }
    if (!b->sp && model_ffr_numeric() && J == &md->sjac && b->inv.Sb && b->inv.c1 && b->inv.c2) {
        int rc = add_num(md, b, qidx, gnode, st);
        if (rc <= 0) return rc;
        num_free(&md->ffrn[--md->nffrn]); /* 1: nothing pushed yet; the expression form below */
    }
    return model_ffr_formulate_g(md, b, qidx, gnode, Fs, J, st);
}

/* every pos (an md->sjac index, or -1) through map */
static void remap(mbl_ffr_num *b, const int *map)
{
    int nf = b->nf, nu = b->up[nf];
    int *arrs[3] = {b->upos, b->epos, b->fpos};
    size_t lens[3] = {(size_t)3 * nu, (size_t)5 * nf, (size_t)9 * nf};
    for (int a = 0; a < 3; a++)
        for (size_t t = 0; t < lens[a]; t++)
            if (arrs[a][t] >= 0) arrs[a][t] = map[arrs[a][t]];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 4; k++)
            if (b->rpos[r][k] >= 0) b->rpos[r][k] = map[b->rpos[r][k]];
    for (int k = 0; k < 5; k++)
        if (b->tpos[k] >= 0) b->tpos[k] = map[b->tpos[k]];
}

#define QV(i) syms[su[jq + (i)]]
#define VV(i) syms[su[jv + (i)]]
#define AV(i) syms[su[ja + (i)]]
#define ADD(pos, val)                                                                                             \
    do {                                                                                                          \
        int p_ = (pos);                                                                                           \
        if (p_ >= 0) J[p_] += (val);                                                                              \
    } while (0)

/* Body b's rows added to F (the EOM rows; NULL: none) and its Jacobian entries to J (NULL: none) at
 * the symbol values syms: ffr.c's formulate term by term. */
static int num_eval(const mbl_model *md, const mbl_ffr_num *b, const double *syms, double *F, double *J,
                    mbl_status *st)
{
    int nf = b->nf;
    const int *fi = b->qidx + 3, *su = md->sym_of_unknown;
    int ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q);
    int iR0 = b->qidx[0], iR1 = b->qidx[1], ith = b->qidx[2];
    for (int k = 0; k < nf + 3; k++) {
        int i = b->qidx[k];
        if (!isfinite(QV(i)) || !isfinite(VV(i)) || !isfinite(AV(i)))
            return mbl_error(st, MBL_EDOMAIN, "%s: coordinate '%s' or its velocity or acceleration is not finite",
                             b->name, md->qname[i]);
    }
    double g0 = b->g[0], g1 = b->g[1];
    if (b->gtape) {
        double w[GWORK_MAX + 1], gv[2];
        int rc = mblx_tape_eval(b->gtape, syms, gv, w, st);
        if (rc) return rc;
        g0 = gv[0], g1 = gv[1];
    }
    const mbl_ffr_invariants *inv = &b->inv;
    const mbla_csc *M = inv->Mff, *P = inv->P;
    int geo = inv->H1 || inv->Hx || inv->Hy || inv->Ha, ns = b->ns;
    const double *Sb0 = inv->Sb, *Sb1 = inv->Sb + nf, *c1 = inv->c1, *c2 = inv->c2;
    double th = QV(ith), thd = VV(ith), thdd = AV(ith);
    double c = cos(th), s = sin(th), thd2 = thd * thd, two_thd = 2.0 * thd, two_thdd = 2.0 * thdd;
    double G0 = AV(iR0) - g0, G1 = AV(iR1) - g1;
    double AtG0 = c * G0 + s * G1, AtG1 = c * G1 - s * G0, AJtG0 = AtG1, AJtG1 = -AtG0;
    double Am[2][2] = {{c, -s}, {s, c}}, AJt[2][2] = {{-s, -c}, {c, -s}}, Jt2[2][2] = {{-thd2, -thdd}, {thdd, -thd2}};
    double Bq[2][2], BJ[2][2];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) {
            Bq[r][k] = Am[r][0] * Jt2[0][k] + Am[r][1] * Jt2[1][k];
            BJ[r][k] = two_thd * AJt[r][k];
        }
    double sv0 = inv->s0[0], sv1 = inv->s0[1], w10 = 0, w11 = 0, w20 = 0, w21 = 0, Jn = inv->J0, y1v = 0, y2a = 0;
    for (int i = 0; i < nf; i++) {
        /* y1 = c1 + Mff qf, y2 = c2 + P qf, Mff qf', P qf', P qf'' at i */
        double y1 = c1[i], y2 = c2[i], Mv = 0, Pv = 0, Pa = 0;
        if (M)
            for (int p = M->p[i]; p < M->p[i + 1]; p++) {
                int j = fi[M->i[p]];
                y1 += M->x[p] * QV(j), Mv += M->x[p] * VV(j);
            }
        if (P)
            for (int p = P->p[i]; p < P->p[i + 1]; p++) {
                int j = fi[P->i[p]];
                double x = -P->x[p];
                y2 += x * QV(j), Pv += x * VV(j), Pa += x * AV(j);
            }
        /* (H1 qf)_i, (Hx qf)_i, (Hy qf)_i, (Ha qf)_i: the geometric stiffness
         * -(A^T G)_x H1 - (A^T G)_y Hy + th'' Ha + th'^2 Hx (ffr.h) */
        double hq = 0, xq = 0, yq = 0, aq = 0;
        for (int u = geo ? b->up[i] : 0; u < (geo ? b->up[i + 1] : 0); u++) {
            const double *x = b->uv + ns * (size_t)u;
            double qj = QV(fi[b->ui[u]]);
            hq += x[4] * qj, xq += x[5] * qj;
            if (ns > 6) yq += x[6] * qj, aq += x[7] * qj;
        }
        double qi = QV(fi[i]), vi = VV(fi[i]), ai = AV(fi[i]);
        sv0 += Sb0[i] * qi, sv1 += Sb1[i] * qi;
        w10 += Sb0[i] * vi, w11 += Sb1[i] * vi;
        w20 += Sb0[i] * ai, w21 += Sb1[i] * ai;
        Jn += qi * (c1[i] + y1);
        y1v += y1 * vi, y2a += y2 * ai;
        if (J) {
            const int *fp = b->fpos + 9 * (size_t)i, *ep = b->epos + 5 * (size_t)i;
            for (int r = 0; r < 2; r++) {
                ADD(fp[3 * r], Sb0[i] * Am[r][0] + Sb1[i] * Am[r][1]);
                ADD(fp[3 * r + 1], Sb0[i] * BJ[r][0] + Sb1[i] * BJ[r][1]);
                ADD(fp[3 * r + 2], Sb0[i] * Bq[r][0] + Sb1[i] * Bq[r][1]);
            }
            ADD(fp[6], y2);
            ADD(fp[7], two_thd * y1);
            ADD(fp[8], Sb0[i] * AJtG0 + Sb1[i] * AJtG1 + two_thdd * y1 + two_thd * Mv - Pa);
            ADD(ep[0], Sb0[i] * c - Sb1[i] * s - c * hq + s * yq);
            ADD(ep[1], Sb0[i] * s + Sb1[i] * c - s * hq - c * yq);
            ADD(ep[2], y2 + aq);
            ADD(ep[3], 2.0 * Pv - two_thd * y1 + two_thd * xq);
            ADD(ep[4], Sb0[i] * AJtG0 + Sb1[i] * AJtG1 - AtG1 * hq + AtG0 * yq);
            for (int u = b->up[i]; u < b->up[i + 1]; u++) {
                const double *x = b->uv + ns * (size_t)u;
                const int *up = b->upos + 3 * (size_t)u;
                double ya = ns > 6 ? thdd * x[7] - AtG1 * x[6] : 0.0;
                ADD(up[0], x[0]);
                ADD(up[1], 2.0 * x[1] * thd + x[3]);
                ADD(up[2], x[1] * thdd - x[0] * thd2 + x[2] - AtG0 * x[4] + thd2 * x[5] + ya);
            }
        }
        if (F) {
            double r = Sb0[i] * AtG0 + Sb1[i] * AtG1 + y2 * thdd - y1 * thd2 + two_thd * Pv - AtG0 * hq + thd2 * xq -
                       AtG1 * yq + thdd * aq;
            for (int u = b->up[i]; u < b->up[i + 1]; u++) {
                const double *x = b->uv + ns * (size_t)u;
                int j = fi[b->ui[u]];
                r += x[0] * AV(j) + x[3] * VV(j) + x[2] * QV(j);
            }
            F[fi[i]] += r;
        }
    }
    /* the frame rows: sums over the body */
    double Jts0 = -sv1, Jts1 = sv0;
    double av0 = c * Jts0 - s * Jts1, av1 = s * Jts0 + c * Jts1;
    double As0 = c * sv0 - s * sv1, As1 = s * sv0 + c * sv1;
    double bb0 = thdd * Jts0 - thd2 * sv0 - two_thd * w11 + w20;
    double bb1 = thdd * Jts1 - thd2 * sv1 + two_thd * w10 + w21;
    double Ab0 = c * bb0 - s * bb1, Ab1 = s * bb0 + c * bb1;
    if (F) {
        F[iR0] += inv->m * G0 + Ab0;
        F[iR1] += inv->m * G1 + Ab1;
        F[ith] += av0 * G0 + av1 * G1 + Jn * thdd + two_thd * y1v + y2a;
    }
    if (J) {
        double e0 = -two_thd * sv0 - 2.0 * w11, e1 = -two_thd * sv1 + 2.0 * w10;
        double Ae[2] = {c * e0 - s * e1, s * e0 + c * e1}, av[2] = {av0, av1}, AJtb[2] = {-Ab1, Ab0};
        for (int r = 0; r < 2; r++) {
            ADD(b->rpos[r][0], inv->m);
            ADD(b->rpos[r][1], av[r]);
            ADD(b->rpos[r][2], Ae[r]);
            ADD(b->rpos[r][3], AJtb[r]);
        }
        ADD(b->tpos[0], av0);
        ADD(b->tpos[1], av1);
        ADD(b->tpos[2], Jn);
        ADD(b->tpos[3], 2.0 * y1v);
        ADD(b->tpos[4], -(As0 * G0 + As1 * G1));
    }
    return 0;
}

int model_ffr_num_exprs(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    int rc = 0;
    for (int b = 0; b < md->nffrn && !rc; b++) {
        const mbl_ffr_num *x = &md->ffrn[b];
        rc = model_ffr_formulate_inv(md, &x->inv, x->C, x->gn, x->qidx, Fs, S, st);
    }
    return rc;
}

/* The flexible bodies' formulation, planar and spatial (model_ffr_add dispatches: numerically
 * here or in ffr3_num.c, or as expressions, ffr.c), kept apart in md->Fs and md->sjac until
 * model_compile() has differentiated the text rows. */
static int num_formulate(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    if (!s->nffr) return 0;
    if (model_structured_rows(md, L->st)) return L->st ? L->st->code : MBL_ENOMEM;
    for (int b = 0; b < s->nffr; b++) {
        const mbl_ffr_body *fb = &s->ffr[b];
        int nc = 3 + fb->inv.nf, rc = 0;
        int *qidx = mbl_alloc_array((size_t)nc, sizeof *qidx);
        if (!qidx) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        for (int k = 0; k < nc && !rc; k++) {
            const char *nm = k < 3 ? fb->coord[k] : fb->qf[k - 3];
            qidx[k] = model_find_name(&s->coordinates, nm, strlen(nm));
            if (qidx[k] < 0)
                rc = mbl_error(L->st, MBL_EMODEL, "%s: %s: coordinate '%s' is not a coordinate of the model", s->file,
                               fb->name, nm);
        }
        /* gravity and the invariants' factors as expressions of the parameters (sensitivities) */
        mblx_id gn[3], fac[MBL_FFR_MAXFAC];
        for (int k = 0; k < 3 && !rc; k++) {
            gn[k] = mblx_const(md->g, fb->g[k]);
            if (fb->gtext[k]) {
                mbl_src_item it = {NULL, NULL, fb->gtext[k], fb->gline, fb->gcol, fb->gline, fb->gcol};
                rc = model_parse_item_text(L, &it, SCOPE_VALUE, "gravity", &gn[k]);
            }
        }
        for (int k = 0; k < fb->nfac && !rc; k++) {
            const mbl_ffr_factor *f = &fb->fac[k];
            mbl_src_item it = {NULL, NULL, f->text, f->line, f->col, f->line, f->col};
            rc = model_parse_item_text(L, &it, SCOPE_VALUE, fb->name, &fac[k]);
        }
        if (!rc) rc = model_ffr_add(md, fb, qidx, gn, md->Fs, &md->sjac, L->st);
        if (!rc) rc = model_ffr_keep_nodes(md, fb, qidx, L->st);
        if (!rc) rc = model_ffr_keep_deriv(md, fb, qidx, gn, fac, L->st);
        mbl_free(qidx);
        if (rc) return rc;
    }
    return 0;
}

/* the term's entries in the table of model/terms/term.h */
static int num_present(const mbl_model *md) { return md->nffrn > 0; }

static int num_in_src(const mbl_src *s) { return s->nffr > 0; }

static int num_eval_all(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st)
{
    int rc = 0;
    (void)work;
    for (int b = 0; b < md->nffrn && !rc; b++) rc = num_eval(md, &md->ffrn[b], syms, F, jac, st);
    return rc;
}

static void num_remap(mbl_model *md, const int *map)
{
    for (int b = 0; b < md->nffrn; b++) remap(&md->ffrn[b], map);
}

static size_t num_work(const mbl_model *md)
{
    (void)md;
    return 0;
}

static int num_param_dep(const mbl_model *md) { return md->nffrd > 0; }

/* the planar bodies' numeric data, and what every flexible body keeps: its nodes (the outputs'
 * mode shapes) and its dependence on the parameters */
static void num_free_all(mbl_model *md)
{
    model_ffr_num_free(md);
    model_ffr_free_nodes(md);
    model_ffr_free_deriv(md);
}

const model_term_ops model_term_ffr = {
    .name = "planar flexible bodies",
    .after_tape = 1,
    .present = num_present,
    .in_src = num_in_src,
    .formulate = num_formulate,
    .remap = num_remap,
    .work = num_work,
    .eval = num_eval_all,
    .exprs = model_ffr_num_exprs,
    .param_dep = num_param_dep,
    .param_deriv = model_ffr_param_deriv,
    .free = num_free_all,
};
