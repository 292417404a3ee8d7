/* The floating-frame invariants of a reduced FE part (fe.h): integrals over the body of rho times
 * products of the undeformed position u0 and the translation field S of the modes, as the sums
 * f^T m g over the nodes with m the mass matrix's scalar part (its UX-UX block). For the shape
 * functions N_i of solid elements (sum_i N_i = 1, u0 interpolated exactly) the consistent mass
 * m_ij = int rho N_i N_j makes these sums the exact integrals of the interpolated fields; for a
 * lumped mass they are the sums over point masses.
 *
 * Rotational rows (beams, shells) may be in K and M, but the translation field's integrals (m, s0,
 * Q0, Sb, Cu, Mab) leave them out: a node's rotary inertia and the coupling of its rotations to
 * the translations are not part of the field u. Mc and Kr are Phi^T M Phi and Phi^T K Phi over all
 * the rows. */
#include "fe/spider.h"

#include <math.h>
#include <string.h>

/* The UY-UY and UZ-UZ blocks of the mass matrix must equal the UX-UX one, and the blocks between
 * directions vanish, to this fraction of the largest translational entry (an isotropic mass). */
#define FE_MASS_ISO_TOL 1e-10

void fe_invariants_free(fe_invariants *v)
{
    if (!v) return;
    mbl_free(v->Sb), mbl_free(v->Cu), mbl_free(v->Mab), mbl_free(v->Mc), mbl_free(v->Kr);
    memset(v, 0, sizeof *v);
}

typedef struct inv_work {
    int nm;          /* nodes with translation rows */
    int *row;        /* 3 x nm: their UX, UY, UZ rows */
    int *node;       /* nm: their node indices */
    int *midx;       /* nnode: a node's place among them (-1: none) */
    mbla_csc *m[3];  /* the UX-UX, UY-UY, UZ-UZ blocks over those nodes */
} inv_work;

static void work_free(inv_work *w)
{
    mbl_free(w->row), mbl_free(w->node), mbl_free(w->midx);
    for (int a = 0; a < 3; a++) mbla_csc_free(w->m[a]);
}

static const char *pfile(const fe_part *p) { return p->file ? p->file : "the part"; }

/* the translation rows of every node: all three or none */
static int translation_rows(const fe_part *p, inv_work *w, mbl_status *st)
{
    int nn = p->nnode;
    int *r3 = mbl_alloc_array((size_t)3 * nn + 1, sizeof *r3);
    w->midx = mbl_alloc_array((size_t)nn + 1, sizeof *w->midx);
    w->node = mbl_alloc_array((size_t)nn + 1, sizeof *w->node);
    w->row = mbl_alloc_array((size_t)3 * nn + 1, sizeof *w->row);
    if (!r3 || !w->midx || !w->node || !w->row) {
        mbl_free(r3);
        return mbl_error(st, MBL_ENOMEM, "fe_invariants_of: out of memory (%d nodes)", nn);
    }
    for (int q = 0; q < 3 * nn; q++) r3[q] = -1;
    int r = 0;
    for (int row = 0; row < p->ndof && !r; row++) {
        int d = p->dof_dir[row], nd = p->dof_node[row];
        if (d > FE_UZ) continue;
        if (r3[3 * nd + d] >= 0)
            r = mbl_error(st, MBL_EMODEL, "%s: rows %d and %d are both node %d %s", pfile(p), r3[3 * nd + d] + 1, row + 1,
                          p->node_id[nd], fe_dir_name(d));
        r3[3 * nd + d] = row;
    }
    w->nm = 0;
    for (int nd = 0; nd < nn && !r; nd++) {
        int have = (r3[3 * nd] >= 0) + (r3[3 * nd + 1] >= 0) + (r3[3 * nd + 2] >= 0);
        w->midx[nd] = -1;
        if (have == 0) continue;
        if (have < 3) {
            r = mbl_error(st, MBL_EMODEL, "%s: node %d has %d of the translations UX, UY, UZ (all three or none)", pfile(p),
                          p->node_id[nd], have);
            break;
        }
        w->midx[nd] = w->nm, w->node[w->nm] = nd;
        memcpy(w->row + 3 * w->nm++, r3 + 3 * nd, 3 * sizeof *r3);
    }
    mbl_free(r3);
    return r;
}

/* the three diagonal blocks over the nodes; a block between directions refused */
static int mass_blocks(const fe_part *p, inv_work *w, mbl_status *st)
{
    const mbla_csc *M = p->M;
    size_t nz = (size_t)M->p[M->n];
    int *ti = mbl_alloc_array(nz + 1, sizeof *ti), *tj = mbl_alloc_array(nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array(nz + 1, sizeof *tx), big = 0;
    int r = !ti || !tj || !tx ? mbl_error(st, MBL_ENOMEM, "fe_invariants_of: out of memory (%zu entries)", nz) : 0;
    for (int j = 0; j < M->n && !r; j++)
        for (int q = M->p[j]; q < M->p[j + 1]; q++)
            if (p->dof_dir[j] <= FE_UZ && p->dof_dir[M->i[q]] <= FE_UZ) big = fmax(big, fabs(M->x[q]));
    double tol = FE_MASS_ISO_TOL * big;
    for (int a = 0; a < 3 && !r; a++) {
        int n = 0;
        for (int j = 0; j < M->n && !r; j++) {
            int dj = p->dof_dir[j];
            if (dj > FE_UZ) continue;
            for (int q = M->p[j]; q < M->p[j + 1]; q++) {
                int i = M->i[q], di = p->dof_dir[i];
                if (di > FE_UZ || (di != a && dj != a)) continue;
                if (di != dj && fabs(M->x[q]) > tol) {
                    r = mbl_error(st, MBL_EMODEL, "%s: M row %d (node %d %s) couples to node %d %s (%g): an anisotropic "
                                  "mass; the invariants need the same scalar mass in UX, UY and UZ", pfile(p), i + 1,
                                  p->node_id[p->dof_node[i]], fe_dir_name(di), p->node_id[p->dof_node[j]],
                                  fe_dir_name(dj), M->x[q]);
                    break;
                }
                if (di == a && dj == a)
                    ti[n] = w->midx[p->dof_node[i]], tj[n] = w->midx[p->dof_node[j]], tx[n++] = M->x[q];
            }
        }
        if (!r) r = mbla_csc_from_triplets(w->nm, w->nm, n, ti, tj, tx, NULL, &w->m[a], st);
    }
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    for (int a = 1; a < 3 && !r; a++) {
        mbla_csc *D = NULL;
        if ((r = mbla_csc_add(1.0, w->m[a], -1.0, w->m[0], &D, st))) break;
        for (int j = 0; j < D->n && !r; j++)
            for (int q = D->p[j]; q < D->p[j + 1]; q++)
                if (fabs(D->x[q]) > tol) {
                    int nd = w->node[D->i[q]];
                    r = mbl_error(st, MBL_EMODEL, "%s: M row %d (node %d %s) differs from its UX row by %g: an "
                                  "anisotropic mass; the invariants need the same scalar mass in UX, UY and UZ",
                                  pfile(p), w->row[3 * D->i[q] + a] + 1, p->node_id[nd], fe_dir_name(a), D->x[q]);
                    break;
                }
        mbla_csc_free(D);
    }
    return r;
}

/* Phi^T A Phi (k x k) with Y (n x k) scratch */
static int project(const mbla_csc *A, const double *Phi, int n, int k, double *Y, double *R, mbl_status *st)
{
    for (int j = 0; j < k; j++) mbla_csc_gemv(A, 1.0, Phi + (size_t)n * j, 0.0, Y + (size_t)n * j, NULL);
    return mbla_gemm('T', 'N', k, k, n, 1.0, Phi, n, Y, n, 0.0, R, k, st);
}

static double dot(int n, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* the integrals of the translation field: S (3 blocks nm x k), mS = m S, u0 (3 x nm), mu0 = m u0 */
static int field_integrals(const fe_part *p, const fe_basis *b, const double *origin, const inv_work *w,
                           fe_invariants *v, mbl_status *st)
{
    int nm = w->nm, k = b->k, r = 0;
    size_t blk = (size_t)nm * k;
    double *S = mbl_alloc_array(3 * blk + 1, sizeof *S), *mS = mbl_alloc_array(3 * blk + 1, sizeof *mS);
    double *u0 = mbl_alloc_array((size_t)4 * nm + 1, sizeof *u0), *mu0 = mbl_alloc_array((size_t)4 * nm + 1, sizeof *mu0);
    if (!S || !mS || !u0 || !mu0) {
        r = mbl_error(st, MBL_ENOMEM, "fe_invariants_of: out of memory (%d nodes, %d modes)", nm, k);
        goto done;
    }
    /* u0's fourth row: the ones (mu0's: m 1) */
    for (int i = 0; i < nm; i++) {
        for (int a = 0; a < 3; a++) {
            u0[a * (size_t)nm + i] = p->xyz[3 * (size_t)w->node[i] + a] - origin[a];
            for (int j = 0; j < k; j++) S[a * blk + i + (size_t)nm * j] = b->Phi[w->row[3 * i + a] + (size_t)b->n * j];
        }
        u0[3 * (size_t)nm + i] = 1;
    }
    for (int a = 0; a < 4; a++) mbla_csc_gemv(w->m[0], 1.0, u0 + (size_t)nm * a, 0.0, mu0 + (size_t)nm * a, NULL);
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < k; j++) mbla_csc_gemv(w->m[0], 1.0, S + a * blk + (size_t)nm * j, 0.0, mS + a * blk + (size_t)nm * j, NULL);
    const double *m1 = mu0 + 3 * (size_t)nm;
    v->m = dot(nm, m1, u0 + 3 * (size_t)nm);
    static const int qa[6] = {0, 1, 2, 0, 0, 1}, qb[6] = {0, 1, 2, 1, 2, 2};
    for (int a = 0; a < 3; a++) v->s0[a] = dot(nm, m1, u0 + (size_t)nm * a);
    for (int t = 0; t < 6; t++) v->Q0[t] = dot(nm, u0 + (size_t)nm * qa[t], mu0 + (size_t)nm * qb[t]);
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < k; j++) {
            const double *Sa = S + a * blk + (size_t)nm * j;
            v->Sb[(size_t)a * k + j] = dot(nm, m1, Sa);
            for (int q = 0; q < 3; q++) v->Cu[(size_t)(3 * q + a) * k + j] = dot(nm, mu0 + (size_t)nm * q, Sa);
        }
    for (int a = 0; a < 3 && !r; a++)
        for (int c = 0; c < 3 && !r; c++)
            r = mbla_gemm('T', 'N', k, k, nm, 1.0, S + a * blk, nm, mS + c * blk, nm, 0.0,
                          v->Mab + (size_t)(3 * a + c) * k * k, k, st);
done:
    mbl_free(S), mbl_free(mS), mbl_free(u0), mbl_free(mu0);
    return r;
}

int fe_invariants_of(const fe_part *p, const fe_basis *b, const double origin[3], fe_invariants *v, mbl_status *st)
{
    if (!v) return mbl_error(st, MBL_EARG, "fe_invariants_of: no invariants to fill");
    memset(v, 0, sizeof *v);
    if (!p || !b || !origin || !p->M || !p->K || !b->Phi || !p->dof_dir || !p->dof_node || !p->xyz)
        return mbl_error(st, MBL_EARG, "fe_invariants_of: the part or the basis is incomplete (NULL arrays)");
    if (b->n != p->ndof || b->k < 1 || p->M->n != p->ndof || p->K->n != p->ndof)
        return mbl_error(st, MBL_EDIM, "fe_invariants_of: a basis of %d rows and %d modes for a part of %d rows", b->n,
                         b->k, p->ndof);
    int n = p->ndof, k = b->k;
    inv_work w;
    memset(&w, 0, sizeof w);
    double *Y = NULL;
    int r = translation_rows(p, &w, st);
    if (!r) r = mass_blocks(p, &w, st);
    if (r) goto done;
    v->k = k;
    v->Sb = mbl_calloc((size_t)3 * k, sizeof *v->Sb);
    v->Cu = mbl_calloc((size_t)9 * k, sizeof *v->Cu);
    v->Mab = mbl_calloc((size_t)9 * k * k, sizeof *v->Mab);
    v->Mc = mbl_alloc_array((size_t)k * k, sizeof *v->Mc);
    v->Kr = mbl_alloc_array((size_t)k * k, sizeof *v->Kr);
    Y = mbl_alloc_array((size_t)n * k, sizeof *Y);
    if (!v->Sb || !v->Cu || !v->Mab || !v->Mc || !v->Kr || !Y) {
        r = mbl_error(st, MBL_ENOMEM, "fe_invariants_of: out of memory (%d rows, %d modes)", n, k);
        goto done;
    }
    if ((r = field_integrals(p, b, origin, &w, v, st))) goto done;
    if ((r = project(p->M, b->Phi, n, k, Y, v->Mc, st))) goto done;
    r = project(p->K, b->Phi, n, k, Y, v->Kr, st);
done:
    work_free(&w);
    mbl_free(Y);
    if (r) fe_invariants_free(v);
    return r;
}
