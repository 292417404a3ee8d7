/* Small helpers of the canonical DAE, below formulation (they call nothing else of src/model): the
 * sparse Jacobians of expressions and the positions of (row, column) pairs in the residual
 * Jacobian, the unknowns' block offsets, the symbol-value vector of a point, and the model's graph
 * lock. */
#include <limits.h>

#include "model/formulate.h"
#include "model/terms/term.h"

/* ---- small helpers ------------------------------------------------------------------------ */

/* J's three arrays at capacity cap (>= J->nz); nonzero when out of memory (J unchanged but for
 * arrays already moved) */
static int sjac_grow(mbl_sjac *J, size_t cap)
{
    int *r = mbl_realloc_array(J->row, cap, sizeof *r);
    if (!r) return MBL_ENOMEM;
    J->row = r;
    int *c = mbl_realloc_array(J->col, cap, sizeof *c);
    if (!c) return MBL_ENOMEM;
    J->col = c;
    mblx_id *nd = mbl_realloc_array(J->node, cap, sizeof *nd);
    if (!nd) return MBL_ENOMEM;
    J->node = nd;
    J->cap = (int)cap;
    return 0;
}

int model_sjac_reserve(mbl_sjac *J, size_t add)
{
    if (add <= (size_t)(J->cap - J->nz)) return 0;
    if (add > (size_t)INT_MAX - (size_t)J->nz) return MBL_ENOMEM;
    return sjac_grow(J, (size_t)J->nz + add);
}

int model_structured_rows(mbl_model *md, mbl_status *st)
{
    if (md->Fs) return 0;
    md->Fs = mbl_alloc_array((size_t)md->n + 1, sizeof *md->Fs);
    if (!md->Fs) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_id zero = mblx_const(md->g, 0.0);
    for (int i = 0; i < md->n; i++) md->Fs[i] = zero;
    return 0;
}

int model_sjac_push_grow(mbl_sjac *J, int row, int col, mblx_id node)
{
    if (J->nz == J->cap && sjac_grow(J, J->cap ? 2 * (size_t)J->cap : 64)) return MBL_ENOMEM;
    J->row[J->nz] = row;
    J->col[J->nz] = col;
    J->node[J->nz] = node;
    J->nz++;
    return 0;
}

void model_sjac_free(mbl_sjac *J)
{
    if (!J) return;
    mbl_free(J->row);
    mbl_free(J->col);
    mbl_free(J->node);
    memset(J, 0, sizeof *J);
}

/* The entries p < nz with row[p] < n by row, in their order within a row: row i's in
 * ent[rp[i] .. rp[i + 1]) (rp: n + 2 zeros on entry) */
static void row_buckets(int n, int nz, const int *restrict row, int *restrict rp, int *restrict ent)
{
    for (int p = 0; p < nz; p++)
        if (row[p] < n) rp[row[p] + 2]++;
    for (int i = 0; i < n; i++) rp[i + 2] += rp[i + 1];
    for (int p = 0; p < nz; p++)
        if (row[p] < n) ent[rp[row[p] + 1]++] = p;
}

int model_jac_index(const mbl_model *md, int nt, const int *tr, const int *tc, int *out, mbl_status *st)
{
    int n = md->nF, rc = 0; /* rows */
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *srp = mbl_calloc((size_t)n + 2, sizeof *srp), *sent = mbl_alloc_array((size_t)nt + 1, sizeof *sent);
    int *pos = mbl_alloc_array((size_t)md->nunk + 1, sizeof *pos);
    if (!rp || !ent || !srp || !sent || !pos) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    row_buckets(n, md->jac.nz, md->jac.row, rp, ent);
    row_buckets(n, nt, tr, srp, sent);
    for (int j = 0; j < md->nunk; j++) pos[j] = -1;
    for (int i = 0; i < n; i++) {
        if (srp[i] == srp[i + 1]) continue;
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = ent[t];
        for (int t = srp[i]; t < srp[i + 1]; t++) out[sent[t]] = pos[tc[sent[t]]];
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = -1;
    }
out:
    mbl_free(rp), mbl_free(ent), mbl_free(srp), mbl_free(sent), mbl_free(pos);
    return rc;
}

char *model_str_dup(const char *s)
{
    size_t n = strlen(s);
    char *p = mbl_malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

int model_blk0(const mbl_model *md, int blk)
{
    return model_blk0_inline(md, blk);
}

static void fill_syms_blocks(const mbl_model *md, double t, const double *const blk[MBL_NBLK], double *syms)
{
    for (int i = 0; i < md->np; i++) syms[md->sym_p[i]] = md->pval[i];
    syms[md->sym_t] = t;
    for (int b = 0; b < MBL_NBLK; b++) {
        int j0 = model_blk0(md, b), len = model_blk0(md, b + 1) - j0;
        const int *sym = md->sym_of_unknown + j0; /* the block's symbols (a sweep point fills them five times) */
        const double *x = blk[b];
        if (x)
            for (int j = 0; j < len; j++) syms[sym[j]] = x[j];
        else
            for (int j = 0; j < len; j++) syms[sym[j]] = 0.0;
    }
}

void model_fill_syms(const mbl_model *md, double t, const double *q, const double *v, const double *a,
                         const double *lam, const double *mu, const double *r, double *syms)
{
    const double *blk[MBL_NBLK] = {a, lam, mu, v, q, NULL, NULL, NULL, r};
    fill_syms_blocks(md, t, blk, syms);
}

void model_fill_syms_pt(const mbl_model *md, const mbl_point *pt, double *syms)
{
    int ext = pt->nX == md->nX && pt->nZ == md->nZ;
    const double *blk[MBL_NBLK] = {pt->vdot, pt->lambda, pt->mu, pt->v, pt->q, ext ? pt->Xdot : NULL,
                                   ext ? pt->Z : NULL, ext ? pt->X : NULL, pt->r};
    fill_syms_blocks(md, pt->t, blk, syms);
}

/* ---- the graph lock ---------------------------------------------------------------------- */

void model_graph_lock(const mbl_model *md, int lock)
{
    pthread_mutex_t *m = &((mbl_model *)md)->graph_mutex; /* a loaded model's graph grows only under it */
    if (lock) pthread_mutex_lock(m);
    else pthread_mutex_unlock(m);
}

/* The lock of a bound tape's messages (mblx_compile_bound): the model's graph lock. */
void model_graph_lock_cb(void *md, int on) { model_graph_lock(md, on); }

/* S's entries of row i merged into md->jac's (row i's in ent[rp[i] .. rp[i + 1]), in S's order
 * (sent[srp[i] .. srp[i + 1]]); pos: -1 at every column on entry and on return; md->jac has room
 * for every new entry */
static void merge_row(mbl_model *md, const mbl_sjac *S, int i, const int *rp, const int *ent, const int *srp,
                      const int *sent, int *restrict pos, int *restrict at)
{
    mblx_graph *g = md->g;
    int *restrict jr = md->jac.row, *restrict jc = md->jac.col, nz = md->jac.nz, nz0 = nz;
    mblx_id *restrict jn = md->jac.node;
    const int *scol = S->col;
    const mblx_id *snode = S->node;
    for (int t = rp[i]; t < rp[i + 1]; t++) pos[jc[ent[t]]] = ent[t];
    for (int t = srp[i], end = srp[i + 1]; t < end; t++) {
        int p = sent[t], col = scol[p], k = pos[col];
        if (k >= 0) {
            jn[k] = mblx_add(g, jn[k], snode[p]);
        } else {
            pos[col] = k = nz;
            jr[nz] = i, jc[nz] = col, jn[nz] = snode[p];
            nz++;
        }
        if (at) at[p] = k;
    }
    for (int t = rp[i]; t < rp[i + 1]; t++) pos[jc[ent[t]]] = -1;
    for (int k = nz0; k < nz; k++) pos[jc[k]] = -1;
    md->jac.nz = nz;
}

/* Add the structured rows and Jacobian entries to the compiled model's: F[i] += Fs[i] for the EOM
 * rows, and the entries of S (any row) merged into md->jac (one entry per (row, column): an entry the text
 * rows already have gets the sum); at[p] (at not NULL): where S's entry p went. */
int model_structured_merge(mbl_model *md, const mblx_id *Fs, const mbl_sjac *S, int *at, mbl_status *st)
{
    mblx_graph *g = md->g;
    double zero;
    for (int i = 0; i < md->n; i++)
        if (!(mblx_is_const(g, Fs[i], &zero) && zero == 0.0)) md->F[i] = mblx_add(g, md->F[i], Fs[i]);
    if (!S->nz) return mblx_graph_status(g, st);
    /* index the existing entries and S's by row (every row: the planar joints' term has constraint rows) */
    int n = md->nF, rc = 0;
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *pos = mbl_alloc_array((size_t)md->nunk + 1, sizeof *pos);
    int *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *srp = mbl_calloc((size_t)n + 2, sizeof *srp), *sent = mbl_alloc_array((size_t)S->nz + 1, sizeof *sent);
    if (!rp || !pos || !ent || !srp || !sent) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    row_buckets(n, md->jac.nz, md->jac.row, rp, ent);
    row_buckets(n, S->nz, S->row, srp, sent);
    memset(pos, 0xff, ((size_t)md->nunk + 1) * sizeof *pos); /* -1 at every column */
    /* room for every entry of S at once (md->jac grew by doubling, copied each time) */
    if (model_sjac_reserve(&md->jac, (size_t)S->nz)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++)
        if (srp[i] < srp[i + 1]) merge_row(md, S, i, rp, ent, srp, sent, pos, at);
    if (!rc) rc = mblx_graph_status(g, st);
out:
    mbl_free(rp), mbl_free(pos), mbl_free(ent), mbl_free(srp), mbl_free(sent);
    return rc;
}
