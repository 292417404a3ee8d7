/* The velocity transformation B of a relative-coordinate mechanism and its derivative dB/dq at a
 * point, from the bodies' kinematics the mechanism compiler records (mbl_src.kinematics): the
 * rows of a body are d(c)/dq (centre of mass) and 2 E(e) de/dq (global angular velocity from
 * the Euler parameters, E = [-e, e0 I + ẽ]) or d(theta)/dq (planar); dB/dq is their exact
 * derivative by the expression engine. */
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"

void mbl_vtrans_free(mbl_vtrans *v)
{
    if (!v) return;
    for (int i = 0; i < v->nrow && v->row_name; i++) mbl_free(v->row_name[i]);
    for (int i = 0; i < v->ncol && v->col_name; i++) mbl_free(v->col_name[i]);
    mbl_free(v->row_name), mbl_free(v->col_name);
    mbl_free(v->B), mbl_free(v->dB), mbl_free(v->Bdot);
    mbl_free(v);
}

static char *dup_s(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = mbl_alloc_array(n, 1);
    if (d) memcpy(d, s, n);
    return d;
}

int mbl_model_velocity_transformation(const mbl_model *md, const mbl_point *pt, mbl_vtrans **out, mbl_status *st)
{
    if (!md || !pt || !out) return mbl_error(st, MBL_EARG, "mbl_model_velocity_transformation: NULL argument");
    *out = NULL;
    if (!md->nkin) return 0;
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_model_velocity_transformation: the point does not belong to the model");
    mblx_graph *g = md->g;
    int per = md->kin_planar ? 3 : 7, rows = md->kin_planar ? 3 : 6;
    int nb = md->nkin / per, n = md->n, nrow = nb * rows;
    /* dense B, Bdot and the n planes of dB/dq, and the entries' nodes: refused before any work when
     * over the load's memory budget (a 2000-loop four-bar in relative coordinates: 12,003 x 4001,
     * dB/dq 1.9e11 entries; its B alone 0.4 GB) */
    double need = 8.0 * nrow * (double)n * (n + 2.0) + 4.0 * nrow * (double)n + 4.0 * md->nkin * (double)n;
    if (!(need <= md->kin_budget))
        return mbl_error(st, MBL_ENOMEM,
                         "%s: the velocity transformation B (%d x %d) and its %d planes dB/dq need about %.3g GiB, over "
                         "the memory budget of %.3g GiB (mem_budget)",
                         md->file, nrow, n, n, need / 1073741824.0, md->kin_budget / 1073741824.0);
    size_t nB = (size_t)nrow * (size_t)n;
    mbl_vtrans *v = mbl_calloc(1, sizeof *v);
    mblx_id *Be = mbl_alloc_array(nB + 1, sizeof *Be);
    mblx_sparse J;
    memset(&J, 0, sizeof J);
    mblx_tape *tape = NULL;
    mblx_fwdjac *fj = NULL;
    double *syms = NULL, *work = NULL, *val = NULL;
    int rc = 0;
    if (!v || !Be) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        v->nrow = nrow, v->ncol = n;
        v->row_name = mbl_calloc((size_t)nrow + 1, sizeof *v->row_name);
        v->col_name = mbl_calloc((size_t)n + 1, sizeof *v->col_name);
        v->B = mbl_calloc(nB + 1, sizeof *v->B);
        v->dB = mbl_calloc(nB * (size_t)n + 1, sizeof *v->dB);
        v->Bdot = mbl_calloc(nB + 1, sizeof *v->Bdot);
        if (!v->row_name || !v->col_name || !v->B || !v->dB || !v->Bdot) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    static const char *sp[6] = {"vx", "vy", "vz", "wx", "wy", "wz"}, *pl[3] = {"vx", "vy", "w"};
    for (int b = 0; b < nb && !rc; b++)
        for (int r = 0; r < rows && !rc; r++) {
            char nm[256];
            snprintf(nm, sizeof nm, "%s.%s", md->kin_body[b * per], md->kin_planar ? pl[r] : sp[r]);
            if (!(v->row_name[b * rows + r] = dup_s(nm))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    for (int j = 0; j < n && !rc; j++)
        if (!(v->col_name[j] = dup_s(md->qname[j]))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    /* d(kinematics)/dq, then the entries of B */
    model_graph_lock(md, 1); /* the graph grows here */
    if (!rc && mblx_jacobian(g, (size_t)md->nkin, md->kin, (size_t)n, md->q, &J) < 0)
        rc = mblx_graph_status(g, st);
    if (!rc) {
        mblx_id zero = mblx_const(g, 0.0);
        /* dense d(kin_i)/dq_j */
        mblx_id *D = mbl_alloc_array((size_t)md->nkin * (size_t)n + 1, sizeof *D);
        if (!D) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (size_t i = 0; !rc && i < (size_t)md->nkin * (size_t)n; i++) D[i] = zero;
        for (int j = 0; j < n && !rc; j++)
            for (int p = J.colptr[j]; p < J.colptr[j + 1]; p++) D[(size_t)J.rowidx[p] + (size_t)md->nkin * j] = J.node[p];
        for (int b = 0; b < nb && !rc; b++) {
            int k0 = b * per;
            for (int j = 0; j < n; j++) {
                const mblx_id *dk = D + (size_t)md->nkin * j + k0;
                mblx_id *col = Be + (size_t)nrow * j + (size_t)b * rows;
                if (md->kin_planar) {
                    col[0] = dk[0], col[1] = dk[1], col[2] = dk[2];
                    continue;
                }
                col[0] = dk[0], col[1] = dk[1], col[2] = dk[2];
                /* w = 2 E(e) e', E = [-e1 e0 -e3 e2; -e2 e3 e0 -e1; -e3 -e2 e1 e0] */
                const mblx_id *e = md->kin + k0 + 3, *de = dk + 3;
                static const int idx[3][4] = {{1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
                static const double sg[3][4] = {{-1, 1, -1, 1}, {-1, 1, 1, -1}, {-1, -1, 1, 1}};
                for (int a = 0; a < 3; a++) {
                    mblx_id t[4];
                    for (int c = 0; c < 4; c++) t[c] = mblx_scale(g, 2.0 * sg[a][c], mblx_mul(g, e[idx[a][c]], de[c]));
                    col[3 + a] = mblx_sum(g, 4, t);
                }
            }
        }
        mbl_free(D);
        if (!rc) rc = mblx_graph_status(g, st);
    }
    /* the tape of B's entries; dB/dq by its forward sweeps (mblx_fwdjac: the entries' rotations
     * and their derivatives nest along the chain, so a second symbolic Jacobian of a tree of N
     * bodies makes O(N^3) entries of growing length: a 40-link URDF chain took 3.4 s and 840 MB) */
    if (!rc) {
        tape = mblx_compile(g, nB, Be, st);
        fj = tape ? mblx_fwdjac_new(g, nB, Be, (size_t)n, md->q, st) : NULL;
        if (!tape || !fj) rc = st && st->code ? st->code : MBL_ENOMEM;
    }
    model_graph_lock(md, 0);
    const int *cp = NULL, *ri = NULL;
    size_t nz = rc ? 0 : mblx_fwdjac_pattern(fj, &cp, &ri);
    if (!rc) {
        syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
        work = mbl_alloc_array(mblx_fwdjac_work_size(fj, tape) + 1, sizeof *work);
        val = mbl_alloc_array(nz + 1, sizeof *val);
        if (!syms || !work || !val) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (!rc) {
        model_fill_syms_pt(md, pt, syms);
        rc = mblx_fwdjac_eval(fj, tape, syms, val, v->B, work, st);
        if (rc) rc = mbl_error_prefix(st, "%s: evaluating the velocity transformation", md->file);
    }
    if (!rc) {
        /* the pattern's rows = entries of B (row + nrow * col), columns = q_m */
        for (int m = 0; m < n; m++)
            for (int p = cp[m]; p < cp[m + 1]; p++) {
                double x = val[p];
                v->dB[nB * (size_t)m + (size_t)ri[p]] = x;
                v->Bdot[ri[p]] += x * pt->v[m];
            }
    }
    mblx_sparse_free(&J);
    mblx_fwdjac_free(fj);
    mblx_tape_free(tape);
    mbl_free(Be), mbl_free(syms), mbl_free(work), mbl_free(val);
    if (rc) mbl_vtrans_free(v);
    else *out = v;
    return rc;
}
