/* The spatial structured term (model/ffr3.h) evaluated numerically beside the tapes, as ffr_num.c
 * does for planar bodies.
 *
 * ffr3.c writes every elastic coordinate's row and its Jacobian entries (15 frame columns, the
 * elastic columns, the frame rows' elastic columns) as expression sums: about 60 KB of graph and
 * tape per coordinate. Here the same closed forms are evaluated from the invariants at the point.
 * The frame's part (the rotation, angular velocity and acceleration, the frame rows over the 29 body
 * sums, and their exact derivatives by the frame's 15 unknowns and by the sums) is built once per
 * body by ffr3.c's own builders (terms/ffr3_nodes.h) on a small graph of its own, whose symbols are
 * the frame's unknowns, gravity and the sums, differentiated there by the engine and compiled into
 * a small tape (about 600 outputs, independent of the mesh). Each evaluation: one pass over the
 * body for the sums, the small tape, one pass for the elastic rows and the frame rows' elastic
 * columns (each a sum of the tape's values times constants or rows of the matrices times qf): no
 * finite differences, no scratch beyond the model's work array, thread-safe.
 *
 * Loading, binding and the expression form on demand are ffr_num.c's (model_ffr_add pushes the
 * pattern with the node 0; model_compile's bind maps the places (remap); model_dae_nodes merges the
 * expression form of model_ffr3_num_exprs). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ffr3.h"
#include "model/model_internal.h"
#include "model/terms/ffr3_nodes.h"
#include "model/terms/term.h"

#define AB(a, b) FFR3_AB(a, b)
#define PA(k) FFR3_PA(k)
#define PB(k) FFR3_PB(k)
#define QA(u) FFR3_QA(u)
#define QB(u) FFR3_QB(u)
#define CU(p, r, j) FFR3_CU(Cu, nf, p, r, j)

/* the small tape's inputs (the small graph's symbols, in creation order) and outputs */
enum { I_FS = 0, I_G = FFR3_NFS, I_Z = FFR3_NFS + 3, NIN = FFR3_NFS + 3 + NZ };
enum {
    O_ATG = 0, O_AL = 3, O_W = 6, O_CQ = 15, O_CV = 24,
    O_DATG = 33, O_DAL = O_DATG + 3 * FFR3_NFS, O_DW2 = O_DAL + 3 * FFR3_NFS, O_DW = O_DW2 + 3 * FFR3_NFS,
    O_FR = O_DW + 9 * FFR3_NFS, O_DFR = O_FR + 7, O_PH = O_DFR + 7 * FFR3_NFS, NOUT = O_PH + 7 * NZ
};
#define NUV (14 + FFR3_NL) /* per union entry: M_ab(i, j) (9), K, C, Mc and, with the geometric stiffness, H1, Hx
                           * (a beam's) and HL (a modal body's) */

struct mbl_ffr3_num {
    char *name;
    int nf;
    int *qidx;            /* 7 + nf model coordinate indices */
    mbl_ffr3 sp;          /* a copy of the body's invariants (the expression form) */
    mbla_csc *C;          /* Rayleigh damping alpha Mc + beta K, or NULL */
    mblx_id gn[3];        /* gravity as nodes of the model's graph */
    double g[3];          /* gravity when constant */
    mblx_tape *gtape;     /* gravity of the parameters, or NULL */
    mblx_tape *ftape;     /* the frame's part (NOUT outputs of the NIN inputs) */
    unsigned char onz[NOUT]; /* the output is not the constant 0 */
    int *up, *ui;         /* the union pattern of row i of M_ab (9), K, C, Mc, H1, Hx */
    double *uv;           /* nuv per entry */
    int nuv;              /* NUV with the geometric stiffness, else 12 */
    unsigned *rmask;      /* per i: bit k when row i of M_ab(k) has a nonzero, bits 9, 10: of H1, Hx, 11 + l: HL_l */
    int geo;              /* H1 or Hx present (the geometric stiffness, ffr3.h) */
    int hl;               /* an HL_l present (a modal body's geometric stiffness) */
    int *upos;            /* 3 per union entry: md->jac index of (row fi, q / v / a of fj), -1: none */
    int *epos;            /* 15 per elastic row: its frame columns */
    int *fpos;            /* 21 per elastic j: frame row r (7) x (q, v, a) of fj */
    int rpos[7][FFR3_NFS]; /* frame row r, frame column x */
};

static void num_free(mbl_ffr3_num *b)
{
    mbl_free(b->name), mbl_free(b->qidx);
    model_ffr3_free(&b->sp);
    mbla_csc_free(b->C);
    mblx_tape_free(b->gtape), mblx_tape_free(b->ftape);
    mbl_free(b->up), mbl_free(b->ui), mbl_free(b->uv), mbl_free(b->rmask);
    mbl_free(b->upos), mbl_free(b->epos), mbl_free(b->fpos);
    memset(b, 0, sizeof *b);
}

void model_ffr3_num_free(mbl_model *md)
{
    for (int i = 0; i < md->nffr3n; i++) num_free(&md->ffr3n[i]);
    mbl_free(md->ffr3n);
    md->ffr3n = NULL;
    md->nffr3n = 0;
}

/* the small graph of the frame's part, compiled (b->ftape, b->onz) */
static int frame_tape(mbl_ffr3_num *b, mbl_status *st)
{
    mblx_graph *g = mblx_graph_new();
    if (!g) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_id in[NIN], out[NOUT];
    for (int k = 0; k < NIN; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "__ffr3_in%d", k);
        in[k] = mblx_symbol(g, nm);
    }
    ffr3_frame f;
    const mblx_id *fs = in + I_FS;
    ffr3_frame_nodes(g, fs + 11, fs + 7, fs + 3, fs, in + I_G, &f);
    for (int k = 0; k < 3; k++) out[O_ATG + k] = f.AtG[k], out[O_AL + k] = f.al[k];
    for (int k = 0; k < 9; k++) out[O_W + k] = f.W[k], out[O_CQ + k] = f.Cq[k], out[O_CV + k] = f.Cv[k];
    for (int x = 0; x < FFR3_NFS; x++) {
        for (int k = 0; k < 3; k++) {
            out[O_DATG + k * FFR3_NFS + x] = f.dAtG[k][x];
            out[O_DAL + k * FFR3_NFS + x] = f.dal[k][x];
            out[O_DW2 + k * FFR3_NFS + x] = f.dw2[k][x];
        }
        for (int k = 0; k < 9; k++) out[O_DW + k * FFR3_NFS + x] = f.dW[k][x];
    }
    mblx_id Fr[7];
    ffr3_frame_rows(g, &f, b->sp.m, b->sp.IpL, in + I_Z, Fr);
    for (int r = 0; r < 7; r++) {
        out[O_FR + r] = Fr[r];
        for (int x = 0; x < FFR3_NFS; x++) out[O_DFR + r * FFR3_NFS + x] = mblx_diff(g, Fr[r], f.fsym[x]);
        for (int k = 0; k < NZ; k++) out[O_PH + r * NZ + k] = mblx_diff(g, Fr[r], in[I_Z + k]);
    }
    int rc = mblx_graph_status(g, st);
    for (int k = 0; k < NOUT && !rc; k++) {
        double v;
        b->onz[k] = !(mblx_is_const(g, out[k], &v) && v == 0.0);
    }
    if (!rc) {
        b->ftape = mblx_compile(g, NOUT, out, st);
        if (!b->ftape) rc = st && st->code ? st->code : MBL_ENOMEM;
    }
    mblx_graph_free(g);
    return rc;
}

/* the union pattern of row i of M_ab (column i of M_ba), K, C, Mc, H1, Hx with their values */
static int build_union(mbl_ffr3_num *b, mbl_status *st)
{
    int nf = b->nf;
    const mbla_csc *X[NUV];
    for (int k = 0; k < 9; k++) X[k] = b->sp.M[AB(PB(k), PA(k))];
    X[9] = b->sp.K, X[10] = b->C, X[11] = b->sp.Mc, X[12] = b->sp.H1, X[13] = b->sp.Hx;
    b->geo = b->sp.H1 || b->sp.Hx;
    for (int l = 0; l < FFR3_NL; l++) b->hl |= (X[14 + l] = b->sp.HL[l]) != NULL;
    int nuv = b->nuv = b->hl ? NUV : b->geo ? 14 : 12;
    size_t cap = 0;
    for (int k = 0; k < nuv; k++)
        if (X[k]) cap += (size_t)mbla_csc_nnz(X[k]);
    b->up = mbl_calloc((size_t)nf + 1, sizeof *b->up);
    b->ui = mbl_alloc_array(cap + 1, sizeof *b->ui);
    b->uv = mbl_calloc((size_t)nuv * cap + NUV, sizeof *b->uv);
    b->rmask = mbl_calloc((size_t)nf + 1, sizeof *b->rmask);
    int *mark = mbl_alloc_array((size_t)nf + 1, sizeof *mark);
    if (!b->up || !b->ui || !b->uv || !b->rmask || !mark) {
        mbl_free(mark);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < nf; j++) mark[j] = -1;
    int nz = 0;
    for (int i = 0; i < nf; i++) {
        int e0 = nz;
        for (int k = 0; k < nuv; k++) {
            if (!X[k]) continue;
            for (int p = X[k]->p[i]; p < X[k]->p[i + 1]; p++) {
                int j = X[k]->i[p];
                if (mark[j] < e0) mark[j] = nz, b->ui[nz++] = j;
                b->uv[(size_t)nuv * mark[j] + k] += X[k]->x[p];
            }
        }
        b->up[i + 1] = nz;
        for (int u = e0; u < nz; u++)
            for (int k = 0; k < (b->hl ? 11 + FFR3_NL : b->geo ? 11 : 9); k++)
                if (b->uv[(size_t)nuv * u + (k < 9 ? k : k + 3)] != 0) b->rmask[i] |= 1u << k;
    }
    mbl_free(mark);
    int *ui = mbl_realloc_array(b->ui, (size_t)nz + 1, sizeof *ui);
    if (ui) b->ui = ui;
    double *uv = mbl_realloc_array(b->uv, (size_t)nuv * nz + NUV, sizeof *uv);
    if (uv) b->uv = uv;
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

#define ONZ(o) (b->onz[o] != 0)
/* the small tape's output of load l of a modal body's geometric stiffness (ffr3.h's HL), and of
 * its derivative by frame unknown x */
static int lo_out(int l) { return l < 3 ? O_ATG + l : l < 6 ? O_AL + l - 3 : O_W + FFR3_LW(l - 6); }
static int ld_out(int l, int x)
{
    return (l < 3 ? O_DATG + l * FFR3_NFS : l < 6 ? O_DAL + (l - 3) * FFR3_NFS : O_DW + FFR3_LW(l - 6) * FFR3_NFS) + x;
}
#define RNZ(k, j) ((b->rmask[j] >> (k)) & 1u)

/* the entries of elastic row i (its frame and elastic columns): wherever ffr3.c's elastic_rows3
 * writes a term that is not structurally 0 */
static int pattern_elastic(mbl_model *md, mbl_ffr3_num *b, const int *fcol, int i, mblx_id zero)
{
    int nf = b->nf, e = 0, row = b->qidx[7 + i];
    int ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q);
    const double *Sb = b->sp.Sb, *Cu = b->sp.Cu, *tw = b->sp.tw;
    int Ynz[3];
    for (int k = 0; k < 3; k++) {
        int p = (k + 1) % 3, r = (k + 2) % 3;
        Ynz[k] = CU(p, r, i) - CU(r, p, i) != 0 || RNZ(AB(r, p), i) || RNZ(AB(p, r), i);
    }
    int Znz[3] = {RNZ(AB(2, 1), i) || RNZ(AB(1, 2), i), RNZ(AB(0, 2), i) || RNZ(AB(2, 0), i),
                  RNZ(AB(1, 0), i) || RNZ(AB(0, 1), i)};
    for (int x = 0; x < FFR3_NFS && !e; x++) {
        int want = tw[i] != 0 && ONZ(O_DAL + x);
        for (int c = 0; c < 3; c++)
            want |= (Sb[c * nf + i] != 0 && ONZ(O_DATG + c * FFR3_NFS + x)) || (Ynz[c] && ONZ(O_DAL + c * FFR3_NFS + x)) ||
                    (Znz[c] && ONZ(O_DW2 + c * FFR3_NFS + x));
        for (int k = 0; k < 9; k++)
            want |= (RNZ(k, i) || CU(PB(k), PA(k), i) != 0) && ONZ(O_DW + k * FFR3_NFS + x);
        want |= (RNZ(9, i) && ONZ(O_DATG + x)) || (RNZ(10, i) && ONZ(O_DW + x)); /* -(G_)_x H1 - W_xx Hx */
        for (int l = 0; l < FFR3_NL && b->hl; l++) want |= RNZ(11 + l, i) && ONZ(ld_out(l, x)); /* sum L_l HL_l */
        e |= push0(md, zero, want, row, fcol[x], &b->epos[FFR3_NFS * (size_t)i + x]);
    }
    for (int u = b->up[i]; u < b->up[i + 1] && !e; u++) {
        const double *val = b->uv + (size_t)b->nuv * u;
        int col = b->qidx[7 + b->ui[u]], wq = val[9] != 0, wv = val[10] != 0;
        for (int k = 0; k < 9; k++) wq |= val[k] != 0 && ONZ(O_CQ + k), wv |= val[k] != 0 && ONZ(O_CV + k);
        if (b->geo) wq |= (val[12] != 0 && ONZ(O_ATG)) || (val[13] != 0 && ONZ(O_W));
        for (int l = 0; l < FFR3_NL && b->hl; l++) wq |= val[14 + l] != 0 && ONZ(lo_out(l));
        e |= push0(md, zero, wq, row, jq + col, &b->upos[3 * (size_t)u]);
        e |= push0(md, zero, wv, row, jv + col, &b->upos[3 * (size_t)u + 1]);
        e |= push0(md, zero, val[11] != 0, row, ja + col, &b->upos[3 * (size_t)u + 2]);
    }
    return e;
}

/* frame row r's entries in the columns of elastic coordinate j (ffr3.c's frame_rows3) */
static int pattern_frame(mbl_model *md, mbl_ffr3_num *b, int r, int j, mblx_id zero)
{
    int nf = b->nf, e = 0, col = b->qidx[7 + j], row = r < 3 ? b->qidx[r] : b->qidx[3 + r - 3];
    int ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q);
    const double *Sb = b->sp.Sb, *Cu = b->sp.Cu, *tw = b->sp.tw;
    const int ph = O_PH + r * NZ;
    int wq = 0, wv = tw[j] != 0 && ONZ(ph + Z_T1), wa = tw[j] != 0 && ONZ(ph + Z_T2);
    for (int c = 0; c < 3; c++) {
        wq |= Sb[c * nf + j] != 0 && ONZ(ph + Z_S + c);
        wv |= Sb[c * nf + j] != 0 && ONZ(ph + Z_W1 + c);
        wa |= Sb[c * nf + j] != 0 && ONZ(ph + Z_W2 + c);
    }
    for (int u = 0; u < 6; u++) {
        int p = QA(u), rr = QB(u);
        double c = CU(p, rr, j) + CU(rr, p, j);
        wq |= ONZ(ph + Z_Q + u) && (c != 0 || RNZ(AB(p, rr), j) || RNZ(AB(rr, p), j));
    }
    for (int k = 0; k < 9; k++) {
        int p = PA(k), rr = PB(k);
        wq |= ONZ(ph + Z_D + k) && RNZ(k, j);
        wv |= ONZ(ph + Z_D + k) && (RNZ(AB(rr, p), j) || CU(p, rr, j) != 0);
    }
    for (int k = 0; k < 3; k++) {
        int p = (k + 1) % 3, rr = (k + 2) % 3;
        double c = CU(p, rr, j) - CU(rr, p, j);
        int rn = RNZ(AB(p, rr), j) || RNZ(AB(rr, p), j);
        wq |= ONZ(ph + Z_H + k) && rn;
        wa |= ONZ(ph + Z_H + k) && (rn || c != 0);
    }
    int *fp = b->fpos + 21 * (size_t)j + 3 * r;
    e |= push0(md, zero, wq, row, jq + col, &fp[0]);
    e |= push0(md, zero, wv, row, jv + col, &fp[1]);
    e |= push0(md, zero, wa, row, ja + col, &fp[2]);
    return e;
}

static int add_num(mbl_model *md, const mbl_ffr_body *fb, const int *qidx, const mblx_id *gnode, mbl_status *st)
{
    mbl_ffr3_num *arr = mbl_realloc_array(md->ffr3n, (size_t)md->nffr3n + 1, sizeof *arr);
    if (!arr) return mbl_error(st, MBL_ENOMEM, "out of memory");
    md->ffr3n = arr;
    mbl_ffr3_num *b = &md->ffr3n[md->nffr3n++];
    memset(b, 0, sizeof *b);
    const mbl_ffr3 *sp = fb->sp;
    int nf = sp->nf, rc = 0;
    b->nf = nf;
    const char *nm = fb->name ? fb->name : "flexible body";
    size_t ln = strlen(nm);
    b->name = mbl_malloc(ln + 1);
    b->qidx = mbl_alloc_array((size_t)nf + 7, sizeof *b->qidx);
    if (!b->name || !b->qidx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(b->name, nm, ln + 1);
    memcpy(b->qidx, qidx, ((size_t)nf + 7) * sizeof *qidx);
    if ((rc = model_ffr3_copy(sp, &b->sp, st))) return rc;
    if (fb->alpha != 0 || fb->beta != 0 || fb->Cm) {
        if (!sp->Mc || !sp->K) return 1; /* ffr3.c's C needs both: the expression form */
        if ((rc = model_ffr_damping(fb, sp->Mc, sp->K, &b->C, st))) return rc;
    }
    mblx_graph *g = md->g;
    int nconst = 0;
    for (int k = 0; k < 3; k++) {
        b->gn[k] = gnode ? gnode[k] : mblx_const(g, fb->g[k]);
        nconst += mblx_is_const(g, b->gn[k], &b->g[k]);
    }
    if (nconst < 3 && !(b->gtape = mblx_compile(g, 3, b->gn, st))) return st && st->code ? st->code : MBL_ENOMEM;
    if ((rc = frame_tape(b, st)) || (rc = build_union(b, st))) return rc;
    int nu = b->up[nf];
    b->upos = mbl_alloc_array((size_t)3 * nu + 1, sizeof *b->upos);
    b->epos = mbl_alloc_array((size_t)FFR3_NFS * nf + 1, sizeof *b->epos);
    b->fpos = mbl_alloc_array((size_t)21 * nf + 1, sizeof *b->fpos);
    if (!b->upos || !b->epos || !b->fpos) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* the pattern, node 0: the frame rows, then each elastic row */
    mblx_id zero = mblx_const(g, 0.0);
    int ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q), fcol[FFR3_NFS];
    for (int k = 0; k < 3; k++) fcol[k] = ja + qidx[k];
    for (int k = 0; k < 4; k++) fcol[3 + k] = ja + qidx[3 + k], fcol[7 + k] = jv + qidx[3 + k], fcol[11 + k] = jq + qidx[3 + k];
    int e = 0;
    for (int r = 0; r < 7 && !e; r++) {
        for (int x = 0; x < FFR3_NFS && !e; x++)
            e |= push0(md, zero, ONZ(O_DFR + r * FFR3_NFS + x), qidx[r], fcol[x], &b->rpos[r][x]);
        for (int j = 0; j < nf && !e; j++) e |= pattern_frame(md, b, r, j, zero);
    }
    for (int i = 0; i < nf && !e; i++) e |= pattern_elastic(md, b, fcol, i, zero);
    if (e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return mblx_graph_status(g, st);
}

int model_ffr3_num_add(mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode, mbl_status *st)
{
    int rc = add_num(md, b, qidx, gnode, st);
    if (rc > 0) num_free(&md->ffr3n[--md->nffr3n]); /* 1: nothing pushed yet; the caller takes the expression form */
    return rc;
}

void model_ffr3_num_remap(mbl_model *md, const int *map)
{
    for (int n = 0; n < md->nffr3n; n++) {
        mbl_ffr3_num *b = &md->ffr3n[n];
        int nf = b->nf, nu = b->up[nf];
        int *arrs[4] = {b->upos, b->epos, b->fpos, &b->rpos[0][0]};
        size_t lens[4] = {(size_t)3 * nu, (size_t)FFR3_NFS * nf, (size_t)21 * nf, (size_t)7 * FFR3_NFS};
        for (int a = 0; a < 4; a++)
            for (size_t t = 0; t < lens[a]; t++)
                if (arrs[a][t] >= 0) arrs[a][t] = map[arrs[a][t]];
    }
}

#define QV(i) syms[su[jq + (i)]]
#define VV(i) syms[su[jv + (i)]]
#define AV(i) syms[su[ja + (i)]]
#define ADD(pos, val)                                                                                             \
    do {                                                                                                          \
        int p_ = (pos);                                                                                           \
        if (p_ >= 0) J[p_] += (val);                                                                              \
    } while (0)

/* the values of a model's evaluation point seen by one body */
typedef struct pt3 {
    const mbl_model *md;
    const mbl_ffr3_num *b;
    const double *syms;
    const int *su;
    int ja, jv, jq;
} pt3;

/* R[x][k] = (M_ab(k) x)_i for x = qf, qf', qf'' (nx of them), the elastic forces K qf + C qf' +
 * Mc qf'' at row i (*kf) and, when hx is not NULL, (H1 qf)_i, (Hx qf)_i, (HL_l qf)_i in hx (2 + FFR3_NL) */
static void rows_at(const pt3 *P, int i, int nx, double R[3][9], double *kf, double *hx)
{
    const mbl_ffr3_num *b = P->b;
    const double *syms = P->syms;
    const int *su = P->su, *fi = b->qidx + 7;
    int ja = P->ja, jv = P->jv, jq = P->jq;
    memset(R, 0, sizeof(double) * 27);
    double f = 0;
    for (int u = b->up[i]; u < b->up[i + 1]; u++) {
        const double *val = b->uv + (size_t)b->nuv * u;
        int j = fi[b->ui[u]];
        double xs[3] = {QV(j), VV(j), AV(j)};
        for (int x = 0; x < nx; x++)
            for (int k = 0; k < 9; k++) R[x][k] += val[k] * xs[x];
        f += val[9] * xs[0] + val[10] * xs[1] + val[11] * xs[2];
    }
    *kf = f;
    if (!hx) return;
    double h1 = 0, h2 = 0;
    for (int u = b->geo ? b->up[i] : 0; u < (b->geo ? b->up[i + 1] : 0); u++) {
        const double *val = b->uv + (size_t)b->nuv * u;
        double qj = QV(fi[b->ui[u]]);
        h1 += val[12] * qj, h2 += val[13] * qj;
    }
    hx[0] = h1, hx[1] = h2;
    if (!b->hl) return;
    for (int l = 0; l < FFR3_NL; l++) hx[2 + l] = 0;
    for (int u = b->up[i]; u < b->up[i + 1]; u++) {
        const double *val = b->uv + (size_t)b->nuv * u;
        double qj = QV(fi[b->ui[u]]);
        for (int l = 0; l < FFR3_NL; l++) hx[2 + l] += val[14 + l] * qj;
    }
}

/* the body sums z (NZ; ffr3.c's body_sums3) */
static void body_sums(const pt3 *P, double *z)
{
    const mbl_ffr3_num *b = P->b;
    const mbl_ffr3 *sp = &b->sp;
    const double *syms = P->syms, *Sb = sp->Sb, *Cu = sp->Cu, *tw = sp->tw;
    const int *su = P->su, *fi = b->qidx + 7;
    int nf = b->nf, ja = P->ja, jv = P->jv, jq = P->jq;
    memset(z, 0, NZ * sizeof *z);
    for (int c = 0; c < 3; c++) z[Z_S + c] = sp->s0[c];
    for (int u = 0; u < 6; u++) z[Z_Q + u] = sp->Q0[u];
    for (int j = 0; j < nf; j++) {
        double R[3][9], kf, qj = QV(fi[j]), vj = VV(fi[j]), aj = AV(fi[j]);
        rows_at(P, j, 3, R, &kf, NULL);
        for (int c = 0; c < 3; c++) {
            double s = Sb[c * nf + j];
            z[Z_S + c] += s * qj, z[Z_W1 + c] += s * vj, z[Z_W2 + c] += s * aj;
        }
        for (int u = 0; u < 6; u++) {
            int p = QA(u), r = QB(u);
            double c = CU(p, r, j) + CU(r, p, j);
            z[Z_Q + u] += qj * (c + R[0][AB(p, r)]);
        }
        for (int k = 0; k < 9; k++) {
            int p = PA(k), r = PB(k);
            z[Z_D + k] += CU(p, r, j) * vj + qj * R[1][k];
        }
        for (int k = 0; k < 3; k++) {
            int p = (k + 1) % 3, r = (k + 2) % 3;
            double c = CU(p, r, j) - CU(r, p, j);
            z[Z_H + k] += c * aj + qj * (R[2][AB(p, r)] - R[2][AB(r, p)]);
        }
        z[Z_T1] += tw[j] * vj, z[Z_T2] += tw[j] * aj;
    }
}

/* elastic row i: its residual (F) and its entries (J) from the frame's values o (ffr3.c's
 * elastic_rows3) */
static void elastic_row(const pt3 *P, int i, double R[3][9], double kf, const double *hx, const double *o, double *F,
                        double *J)
{
    const mbl_ffr3_num *b = P->b;
    const double *Sb = b->sp.Sb, *Cu = b->sp.Cu, *tw = b->sp.tw;
    int nf = b->nf;
    /* c_k = int rho (u0 x S_i)_k (k p r cyclic; a beam's (0, -cx_z, cx_y)), N's constants Cu_ba */
    double c3[3] = {CU(1, 2, i) - CU(2, 1, i), CU(2, 0, i) - CU(0, 2, i), CU(0, 1, i) - CU(1, 0, i)}, cn[9];
    for (int k = 0; k < 9; k++) cn[k] = CU(PB(k), PA(k), i);
    if (F) {
        /* (in the order of the beam's sums before Cu: its rows unchanged to the last bit) */
        double r = kf + tw[i] * o[O_AL] + o[O_AL + 1] * c3[1] + o[O_AL + 2] * c3[2] + o[O_AL] * c3[0];
        for (int c = 0; c < 3; c++) r += Sb[c * nf + i] * o[O_ATG + c] + cn[AB(c, 0)] * o[O_W + AB(c, 0)];
        for (int k = 0; k < 9; k++)
            if (PB(k) != 0) r += cn[k] * o[O_W + k];
        for (int k = 0; k < 9; k++) r += o[O_CQ + k] * R[0][k] + o[O_CV + k] * R[1][k];
        r -= o[O_ATG] * hx[0] + o[O_W] * hx[1]; /* the geometric stiffness -(G_)_x H1 - W_xx Hx (ffr3.h) */
        for (int l = 0; l < FFR3_NL && b->hl; l++) r += o[lo_out(l)] * hx[2 + l]; /* sum L_l HL_l */
        F[b->qidx[7 + i]] += r;
    }
    if (!J) return;
    double Y[3] = {c3[0] + R[0][AB(2, 1)] - R[0][AB(1, 2)], c3[1] + R[0][AB(0, 2)] - R[0][AB(2, 0)], c3[2] + R[0][AB(1, 0)] - R[0][AB(0, 1)]};
    double Z[3] = {R[1][AB(2, 1)] - R[1][AB(1, 2)], R[1][AB(0, 2)] - R[1][AB(2, 0)], R[1][AB(1, 0)] - R[1][AB(0, 1)]};
    double N[9];
    for (int k = 0; k < 9; k++) N[k] = cn[k] + R[0][k];
    const int *ep = b->epos + FFR3_NFS * (size_t)i;
    for (int x = 0; x < FFR3_NFS; x++) {
        if (ep[x] < 0) continue;
        double d = tw[i] * o[O_DAL + x];
        for (int c = 0; c < 3; c++)
            d += Sb[c * nf + i] * o[O_DATG + c * FFR3_NFS + x] + o[O_DAL + c * FFR3_NFS + x] * Y[c] +
                 o[O_DW2 + c * FFR3_NFS + x] * Z[c];
        for (int k = 0; k < 9; k++) d += o[O_DW + k * FFR3_NFS + x] * N[k];
        d -= o[O_DATG + x] * hx[0] + o[O_DW + x] * hx[1];
        for (int l = 0; l < FFR3_NL && b->hl; l++) d += o[ld_out(l, x)] * hx[2 + l];
        J[ep[x]] += d;
    }
    for (int u = b->up[i]; u < b->up[i + 1]; u++) {
        const double *val = b->uv + (size_t)b->nuv * u;
        const int *upos = b->upos + 3 * (size_t)u;
        double dq = val[9] - (b->geo ? val[12] * o[O_ATG] + val[13] * o[O_W] : 0.0), dv = val[10];
        for (int k = 0; k < 9; k++) dq += val[k] * o[O_CQ + k], dv += val[k] * o[O_CV + k];
        for (int l = 0; l < FFR3_NL && b->hl; l++) dq += val[14 + l] * o[lo_out(l)];
        ADD(upos[0], dq);
        ADD(upos[1], dv);
        ADD(upos[2], val[11]);
    }
}

/* the frame rows' entries in elastic coordinate j's columns (ffr3.c's frame_rows3) */
static void frame_cols(const pt3 *P, int j, double R[3][9], const double *o, double *J)
{
    const mbl_ffr3_num *b = P->b;
    const double *Sb = b->sp.Sb, *Cu = b->sp.Cu, *tw = b->sp.tw;
    int nf = b->nf;
    for (int r = 0; r < 7; r++) {
        const double *ph = o + O_PH + r * NZ;
        const int *fp = b->fpos + 21 * (size_t)j + 3 * r;
        double dq = 0, dv = tw[j] * ph[Z_T1], da = tw[j] * ph[Z_T2];
        for (int c = 0; c < 3; c++) {
            double s = Sb[c * nf + j];
            dq += ph[Z_S + c] * s, dv += ph[Z_W1 + c] * s, da += ph[Z_W2 + c] * s;
        }
        for (int u = 0; u < 6; u++) {
            int p = QA(u), rr = QB(u);
            double c = CU(p, rr, j) + CU(rr, p, j);
            dq += ph[Z_Q + u] * (c + R[0][AB(p, rr)] + R[0][AB(rr, p)]);
        }
        for (int k = 0; k < 9; k++) {
            int p = PA(k), rr = PB(k);
            dq += ph[Z_D + k] * R[1][k];
            dv += ph[Z_D + k] * (CU(p, rr, j) + R[0][AB(rr, p)]);
        }
        for (int k = 0; k < 3; k++) {
            int p = (k + 1) % 3, rr = (k + 2) % 3;
            double c = CU(p, rr, j) - CU(rr, p, j);
            dq += ph[Z_H + k] * (R[2][AB(p, rr)] - R[2][AB(rr, p)]);
            da += ph[Z_H + k] * (c + R[0][AB(rr, p)] - R[0][AB(p, rr)]);
        }
        ADD(fp[0], dq);
        ADD(fp[1], dv);
        ADD(fp[2], da);
    }
}

/* Body b's rows added to F (NULL: none) and its Jacobian entries to J (NULL: none) at the symbol
 * values syms; work: NIN + NOUT + the tapes' work doubles. */
static int num_eval(const mbl_model *md, const mbl_ffr3_num *b, const double *syms, double *F, double *J,
                    double *work, mbl_status *st)
{
    pt3 P = {md, b, syms, md->sym_of_unknown, model_blk0(md, MBL_BLK_A), model_blk0(md, MBL_BLK_V),
             model_blk0(md, MBL_BLK_Q)};
    const int *su = P.su;
    int ja = P.ja, jv = P.jv, jq = P.jq, nf = b->nf, rc = 0;
    for (int k = 0; k < nf + 7; k++) {
        int i = b->qidx[k];
        if (!isfinite(QV(i)) || !isfinite(VV(i)) || !isfinite(AV(i)))
            return mbl_error(st, MBL_EDOMAIN, "%s: coordinate '%s' or its velocity or acceleration is not finite",
                             b->name, md->qname[i]);
    }
    double *in = work, *o = work + NIN, *tw = work + NIN + NOUT;
    if (b->gtape) {
        if ((rc = mblx_tape_eval(b->gtape, syms, in + I_G, tw, st))) return rc;
    } else
        for (int k = 0; k < 3; k++) in[I_G + k] = b->g[k];
    const int *ie = b->qidx + 3;
    for (int k = 0; k < 3; k++) in[I_FS + k] = AV(b->qidx[k]);
    for (int k = 0; k < 4; k++)
        in[I_FS + 3 + k] = AV(ie[k]), in[I_FS + 7 + k] = VV(ie[k]), in[I_FS + 11 + k] = QV(ie[k]);
    body_sums(&P, in + I_Z);
    if ((rc = mblx_tape_eval(b->ftape, in, o, tw, st))) return rc;
    if (F)
        for (int r = 0; r < 7; r++) F[b->qidx[r]] += o[O_FR + r];
    if (J)
        for (int r = 0; r < 7; r++)
            for (int x = 0; x < FFR3_NFS; x++) ADD(b->rpos[r][x], o[O_DFR + r * FFR3_NFS + x]);
    for (int i = 0; i < nf; i++) {
        double R[3][9], kf, hx[2 + FFR3_NL];
        rows_at(&P, i, J ? 3 : 2, R, &kf, hx);
        elastic_row(&P, i, R, kf, hx, o, F, J);
        if (J) frame_cols(&P, i, R, o, J);
    }
    return 0;
}

int model_ffr3_num_exprs(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    int rc = 0;
    for (int b = 0; b < md->nffr3n && !rc; b++) {
        const mbl_ffr3_num *x = &md->ffr3n[b];
        rc = model_ffr3_formulate_inv(md, &x->sp, x->C, x->gn, x->qidx, Fs, S, st);
    }
    return rc;
}

/* the term's entries in the table of model/terms/term.h */
static int num_present(const mbl_model *md) { return md->nffr3n > 0; }

static int num_eval_all(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st)
{
    int rc = 0;
    for (int b = 0; b < md->nffr3n && !rc; b++) rc = num_eval(md, &md->ffr3n[b], syms, F, jac, work, st);
    return rc;
}

static size_t num_work(const mbl_model *md)
{
    size_t w = 0;
    for (int b = 0; b < md->nffr3n; b++) {
        size_t t = mblx_tape_work_size(md->ffr3n[b].ftape);
        if (md->ffr3n[b].gtape && mblx_tape_work_size(md->ffr3n[b].gtape) > t) t = mblx_tape_work_size(md->ffr3n[b].gtape);
        if (t > w) w = t;
    }
    return NIN + NOUT + w;
}

/* formulated, bound and freed with the planar bodies' (model_term_ffr: model_ffr_add dispatches a
 * spatial body here) but for its own places and data */
const model_term_ops model_term_ffr3 = {
    .name = "spatial flexible bodies",
    .after_tape = 1,
    .present = num_present,
    .remap = model_ffr3_num_remap,
    .work = num_work,
    .eval = num_eval_all,
    .exprs = model_ffr3_num_exprs,
    .free = model_ffr3_num_free,
};
