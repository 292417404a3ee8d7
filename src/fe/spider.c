/* The interfaces of a Craig-Bampton reduction as rows: a node's own rows, or a rigid spider's six
 * degrees of freedom u, th at its point `at`, each of its nodes' rows replaced by
 * u_i = u + th x (x_i - at) (and th_i = th for rotation rows), u = G v with G sparse. */
#include "fe/spider.h"

#include "core/vec3.h"

#include <math.h>
#include <string.h>

const char *fe_dir_name(int dir)
{
    static const char *const names[6] = {"UX", "UY", "UZ", "RX", "RY", "RZ"};
    return dir >= 0 && dir < 6 ? names[dir] : "?";
}

void fe_elim_free(fe_elim *e)
{
    if (!e) return;
    mbla_csc_free(e->G);
    mbl_free(e->bnd), mbl_free(e->bdir), mbl_free(e->ifc_ptr), mbl_free(e->vnode), mbl_free(e->vdir);
    memset(e, 0, sizeof *e);
}

static const char *ifc_name(const fe_iface *f) { return f->name ? f->name : "(unnamed)"; }

/* owner[node] = the interface holding it; a node in two interfaces is refused naming both */
static int claim(const fe_part *p, const fe_iface *ifc, int i, int node, int *owner, mbl_status *st)
{
    if (node < 0 || node >= p->nnode)
        return mbl_error(st, MBL_EMODEL, "interface %s: node index %d outside the part's %d nodes", ifc_name(&ifc[i]),
                         node, p->nnode);
    int o = owner[node];
    if (o == i)
        return mbl_error(st, MBL_EMODEL, "interface %s: node %d listed twice", ifc_name(&ifc[i]), p->node_id[node]);
    if (o >= 0)
        return mbl_error(st, MBL_EMODEL, "node %d is in two interfaces, %s and %s", p->node_id[node],
                         ifc_name(&ifc[o]), ifc_name(&ifc[i]));
    owner[node] = i;
    return 0;
}

static int claim_all(const fe_part *p, const fe_iface *ifc, int niface, int *owner, int *nrows, mbl_status *st)
{
    for (int i = 0; i < niface; i++) {
        const fe_iface *f = &ifc[i];
        int r;
        if (f->node >= 0) {
            if ((r = claim(p, ifc, i, f->node, owner, st))) return r;
            continue;
        }
        if (f->nnodes < 1 || !f->nodes)
            return mbl_error(st, MBL_EMODEL, "interface %s: neither a node nor a set of nodes", ifc_name(f));
        if (!isfinite(f->at[0]) || !isfinite(f->at[1]) || !isfinite(f->at[2]))
            return mbl_error(st, MBL_EMODEL, "interface %s: its point is not finite", ifc_name(f));
        for (int t = 0; t < f->nnodes; t++)
            if ((r = claim(p, ifc, i, f->nodes[t], owner, st))) return r;
    }
    for (int i = 0; i < niface; i++)
        if (ifc[i].node >= 0 && nrows[ifc[i].node] == 0)
            return mbl_error(st, MBL_EMODEL, "interface %s: node %d has no degrees of freedom in %s", ifc_name(&ifc[i]),
                             p->node_id[ifc[i].node], p->file ? p->file : "the part");
    return 0;
}

/* the coefficients of row (dir) of node x in u, th at a: u_d + (th x (x - a))_d, or th_d */
static void spider_row(int dir, const double *x, const double *a, double g[6])
{
    memset(g, 0, 6 * sizeof *g);
    if (dir >= FE_RX) {
        g[dir] = 1;
        return;
    }
    double r[3];
    vec3_sub(x, a, r);
    g[dir] = 1;
    /* (th x r)_d = sum_c th_c (e_c x r)_d */
    static const int nx[3] = {1, 2, 0}, px[3] = {2, 0, 1};
    g[3 + nx[dir]] = r[px[dir]];  /* th_{d+1} r_{d+2} */
    g[3 + px[dir]] = -r[nx[dir]]; /* -th_{d+2} r_{d+1} */
}

/* A spider's rows must fix its six degrees of freedom (rank 6, rotations scaled by the arm). */
static int spider_rank(const fe_part *p, const fe_iface *f, const int *rowlist, int nrow, mbl_status *st)
{
    double L = 0, Gm[36] = {0}, g[6], s[6], U[36], VT[36];
    for (int t = 0; t < f->nnodes; t++) {
        double r[3];
        vec3_sub(p->xyz + 3 * (size_t)f->nodes[t], f->at, r);
        L = fmax(L, sqrt(vec3_dot(r, r)));
    }
    if (!(L > 0)) L = 1;
    for (int q = 0; q < nrow; q++) {
        int row = rowlist[q];
        spider_row(p->dof_dir[row], p->xyz + 3 * (size_t)p->dof_node[row], f->at, g);
        if (p->dof_dir[row] < FE_RX) /* th' = L th: the arms r / L; a rotation row th_d = th'_d / L, times L */
            for (int c = 3; c < 6; c++) g[c] /= L;
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) Gm[a + 6 * b] += g[a] * g[b];
    }
    int r = mbla_svd(6, 6, Gm, 6, 'S', s, U, 6, VT, 6, st);
    if (r) return r;
    if (!(s[5] > FE_SPIDER_RANK_TOL * s[0]))
        return mbl_error(st, MBL_EMODEL,
                         "interface %s: its %d node(s) do not fix a rigid motion (on one line, or too few); "
                         "give more nodes or a node interface",
                         ifc_name(f), f->nnodes);
    return 0;
}

static int check_part(const fe_part *p, mbl_status *st)
{
    if (!p || !p->K || !p->M || !p->dof_node || !p->dof_dir || !p->xyz || !p->node_id)
        return mbl_error(st, MBL_EARG, "fe_reduce: the part is incomplete (NULL arrays)");
    if (p->ndof < 1 || p->K->m != p->ndof || p->K->n != p->ndof || p->M->m != p->ndof || p->M->n != p->ndof)
        return mbl_error(st, MBL_EDIM, "fe_reduce: K is %d x %d and M %d x %d for %d rows", p->K->m, p->K->n, p->M->m,
                         p->M->n, p->ndof);
    for (int r = 0; r < p->ndof; r++)
        if (p->dof_node[r] < 0 || p->dof_node[r] >= p->nnode || p->dof_dir[r] < FE_UX || p->dof_dir[r] > FE_RZ)
            return mbl_error(st, MBL_EDIM, "fe_reduce: row %d has no valid node and direction", r + 1);
    return 0;
}

/* G's triplets (rows of the part, columns of v) and the rank of each spider */
static int build_g(const fe_part *p, const fe_iface *ifc, int niface, const int *owner, const int *spbase,
                   const int *vidx, fe_elim *e, mbl_status *st)
{
    int n = p->ndof, nz = 0, r = 0;
    int *ti = mbl_alloc_array((size_t)n * 3, sizeof *ti), *tj = mbl_alloc_array((size_t)n * 3, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)n * 3, sizeof *tx);
    int *rowlist = mbl_alloc_array((size_t)n, sizeof *rowlist);
    if (!ti || !tj || !tx || !rowlist) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d rows)", n);
        goto done;
    }
    for (int row = 0; row < n; row++) {
        int node = p->dof_node[row], o = owner[node];
        if (o < 0 || ifc[o].node >= 0) {
            ti[nz] = row, tj[nz] = vidx[row], tx[nz++] = 1;
            continue;
        }
        double g[6];
        spider_row(p->dof_dir[row], p->xyz + 3 * (size_t)node, ifc[o].at, g);
        for (int c = 0; c < 6; c++)
            if (g[c] != 0) ti[nz] = row, tj[nz] = spbase[o] + c, tx[nz++] = g[c];
    }
    for (int i = 0; i < niface && !r; i++) {
        if (ifc[i].node >= 0) continue;
        int nrow = 0;
        for (int row = 0; row < n; row++)
            if (owner[p->dof_node[row]] == i) rowlist[nrow++] = row;
        r = spider_rank(p, &ifc[i], rowlist, nrow, st);
    }
    if (!r) r = mbla_csc_from_triplets(n, e->nr, nz, ti, tj, tx, NULL, &e->G, st);
done:
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(rowlist);
    return r;
}

static void boundary_rows(const fe_part *p, const fe_iface *ifc, int niface, const int *spbase, const int *vidx,
                          fe_elim *e)
{
    int nb = 0;
    for (int i = 0; i < niface; i++) {
        e->ifc_ptr[i] = nb;
        if (ifc[i].node < 0) {
            for (int d = 0; d < 6; d++) e->bnd[nb] = spbase[i] + d, e->bdir[nb++] = (signed char)d;
            continue;
        }
        for (int row = 0; row < p->ndof; row++)
            if (p->dof_node[row] == ifc[i].node) e->bnd[nb] = vidx[row], e->bdir[nb++] = p->dof_dir[row];
    }
    e->ifc_ptr[niface] = nb;
    e->nb = nb;
}

int fe_elim_build(const fe_part *p, const fe_iface *ifc, int niface, fe_elim *e, mbl_status *st)
{
    memset(e, 0, sizeof *e);
    int r = check_part(p, st);
    if (r) return r;
    if (niface < 1 || !ifc) return mbl_error(st, MBL_EMODEL, "fe_reduce: no interface (a Craig-Bampton part needs one)");
    int n = p->ndof, nsp = 0, nkeep = 0, nbmax = 0;
    int *owner = mbl_alloc_array((size_t)p->nnode, sizeof *owner), *nrows = mbl_calloc((size_t)p->nnode, sizeof *nrows);
    int *spbase = mbl_alloc_array((size_t)niface, sizeof *spbase), *vidx = mbl_alloc_array((size_t)n, sizeof *vidx);
    if (!owner || !nrows || !spbase || !vidx) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d rows)", n);
        goto done;
    }
    for (int i = 0; i < p->nnode; i++) owner[i] = -1;
    for (int row = 0; row < n; row++) nrows[p->dof_node[row]]++;
    if ((r = claim_all(p, ifc, niface, owner, nrows, st))) goto done;
    for (int row = 0; row < n; row++) {
        int o = owner[p->dof_node[row]];
        vidx[row] = o >= 0 && ifc[o].node < 0 ? -1 : nkeep++;
    }
    for (int i = 0; i < niface; i++) {
        spbase[i] = ifc[i].node < 0 ? nkeep + 6 * nsp++ : -1;
        nbmax += ifc[i].node < 0 ? 6 : nrows[ifc[i].node];
    }
    e->n = n, e->nr = nkeep + 6 * nsp;
    e->bnd = mbl_alloc_array((size_t)nbmax + 1, sizeof *e->bnd);
    e->bdir = mbl_alloc_array((size_t)nbmax + 1, sizeof *e->bdir);
    e->ifc_ptr = mbl_alloc_array((size_t)niface + 1, sizeof *e->ifc_ptr);
    e->vnode = mbl_alloc_array((size_t)e->nr, sizeof *e->vnode);
    e->vdir = mbl_alloc_array((size_t)e->nr, sizeof *e->vdir);
    if (!e->bnd || !e->bdir || !e->ifc_ptr || !e->vnode || !e->vdir) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d rows)", n);
        goto done;
    }
    for (int row = 0; row < n; row++)
        if (vidx[row] >= 0) e->vnode[vidx[row]] = p->dof_node[row], e->vdir[vidx[row]] = p->dof_dir[row];
    for (int s = 0; s < 6 * nsp; s++) e->vnode[nkeep + s] = -1, e->vdir[nkeep + s] = (signed char)(s % 6);
    if ((r = build_g(p, ifc, niface, owner, spbase, vidx, e, st))) goto done;
    boundary_rows(p, ifc, niface, spbase, vidx, e);
done:
    mbl_free(owner), mbl_free(nrows), mbl_free(spbase), mbl_free(vidx);
    if (r) fe_elim_free(e);
    return r;
}
