/* Shared pieces of the methods partition, nullspace, projection, descriptor, penalty and fd:
 * dense blocks of the exact DAE Jacobian, independent constraint rows (QRCP), coordinate
 * partitioning (full pivoting), and the states of a reduction (the engine itself: reduce.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"
#include "model/jac_cols.h"

#define NEW(p, count) ((p) = mbl_calloc((size_t)(count) + 1, sizeof *(p)))

void lin_sjac_dense(const model_view *mv, const mbl_sjac *J, const double *val, int r0, int r1, int cb, double *out)
{
    int c0 = mv->blk0[cb], c1 = mv->blk0[cb + 1], nr = r1 - r0;
    memset(out, 0, (size_t)nr * (size_t)(c1 - c0) * sizeof *out);
    for (int p = 0; p < J->nz; p++) {
        int r = J->row[p], c = J->col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) out[(r - r0) + (size_t)(c - c0) * nr] += val[p];
    }
}

void lin_blocks_free(mbl_blocks *B)
{
    if (!B) return;
    mbl_free(B->M), mbl_free(B->Rv), mbl_free(B->Rq), mbl_free(B->Rr);
    mbl_free(B->Pq), mbl_free(B->Pdq), mbl_free(B->Pddv), mbl_free(B->Pddq), mbl_free(B->Pddr);
    mbl_free(B->Nv), mbl_free(B->Nq), mbl_free(B->Ndv), mbl_free(B->Ndq), mbl_free(B->Ndr);
    mbl_free(B->Ya), mbl_free(B->Yv), mbl_free(B->Yq), mbl_free(B->Yr);
    mbl_free(B->Ylam), mbl_free(B->Ymu);
    mbl_free(B->Ea), mbl_free(B->El), mbl_free(B->Em), mbl_free(B->Ev), mbl_free(B->Eq), mbl_free(B->Exd);
    mbl_free(B->Ez), mbl_free(B->Ex), mbl_free(B->Er), mbl_free(B->Yxd), mbl_free(B->Yz), mbl_free(B->Yx);
    lin_eval_free(&B->ev);
    memset(B, 0, sizeof *B);
}

/* The Eq. 10 blocks of B (see mbl_blocks): the dynamic rows [R; d; zeq] against every unknown block. */
static int blocks_ext(mbl_blocks *B, mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k, nr = mv->nr, ny = mv->ny, nX = mv->nX, nZ = mv->nZ;
    int ne = n + nX + nZ, e0 = mv->row0[MBL_ROW_EOM], e1 = mv->row0[MBL_ROW_VAR + 1];
    B->ext = 1, B->nX = nX, B->nZ = nZ, B->ne = ne;
    size_t nen = (size_t)ne * (size_t)n;
    NEW(B->Ea, nen), NEW(B->El, (size_t)ne * m), NEW(B->Em, (size_t)ne * k), NEW(B->Ev, nen), NEW(B->Eq, nen);
    NEW(B->Exd, (size_t)ne * nX), NEW(B->Ez, (size_t)ne * nZ), NEW(B->Ex, (size_t)ne * nX), NEW(B->Er, (size_t)ne * nr);
    NEW(B->Yxd, (size_t)ny * nX), NEW(B->Yz, (size_t)ny * nZ), NEW(B->Yx, (size_t)ny * nX);
    if (!B->Ea || !B->El || !B->Em || !B->Ev || !B->Eq || !B->Exd || !B->Ez || !B->Ex || !B->Er || !B->Yxd || !B->Yz ||
        !B->Yx) {
        lin_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    const double *x = B->ev.jac, *yv = B->ev.y + ny;
    const int blk[9] = {MBL_BLK_A, MBL_BLK_LAMBDA, MBL_BLK_MU, MBL_BLK_V, MBL_BLK_Q, MBL_BLK_XD, MBL_BLK_Z, MBL_BLK_X, MBL_BLK_R};
    double *out[9] = {B->Ea, B->El, B->Em, B->Ev, B->Eq, B->Exd, B->Ez, B->Ex, B->Er};
    for (int b = 0; b < 9; b++) lin_sjac_dense(mv, &mv->jac, x, e0, e1, blk[b], out[b]);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_XD, B->Yxd);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_Z, B->Yz);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_X, B->Yx);
    return 0;
}

int lin_multipliers_reactions_only(const mbl_model *md)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int m = mv->m, k = mv->k, e1 = mv->row0[MBL_ROW_EOM + 1], v1 = mv->row0[MBL_ROW_VAR + 1];
    int bl = mv->blk0[MBL_BLK_LAMBDA], bm = mv->blk0[MBL_BLK_MU], bq = mv->blk0[MBL_BLK_Q];
    int bv = mv->blk0[MBL_BLK_V], p0 = mv->row0[MBL_ROW_PHI], h0 = mv->row0[MBL_ROW_NH];
    /* the entries of the rows Phi (q columns) and c (v columns), by constraint: start[j]..start[j + 1] */
    int *start = mbl_calloc((size_t)(m + k) + 2, sizeof *start), *ent = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *ent);
    int ok = start && ent;
    /* the entries' expressions: a model loaded with forward_jacobian builds them on this request,
     * its structural pattern then has entries whose expression is 0 (skipped, as the default
     * pattern has none), and the graph is read under its lock */
    const mblx_id *node = mv->jac.node, *Fn;
    int fwd = mv->jac.nz && node[0] == MBLX_NONE;
    if (fwd) {
        mbl_status st;
        model_graph_lock(md, 1);
        ok = ok && model_dae_nodes(md, &Fn, &node, &st) == 0;
    }
    for (int pass = 0; ok && pass < 2; pass++) {
        for (int p = 0; p < mv->jac.nz; p++) {
            int row = mv->jac.row[p], c = mv->jac.col[p], j = -1;
            if (row >= p0 && row < p0 + m && c >= bq && c < bq + mv->n) j = row - p0;
            else if (row >= h0 && row < h0 + k && c >= bv && c < bv + mv->n) j = m + row - h0;
            if (j < 0) continue;
            if (pass == 0) start[j + 2]++;
            else ent[start[j + 1]++] = p;
        }
        if (pass == 0)
            for (int j = 0; j < m + k; j++) start[j + 2] += start[j + 1];
    }
    for (int p = 0; ok && p < mv->jac.nz; p++) {
        int row = mv->jac.row[p], c = mv->jac.col[p];
        double z;
        if (!(c >= bl && c < bm + k) || row >= v1) continue;
        if (fwd && mblx_is_const(mv->g, node[p], &z) && z == 0.0) continue;
        if (row >= e1) { /* an ode or implicit-variable row uses a multiplier */
            ok = 0;
            break;
        }
        /* EOM row i, column lambda_j (mu_j): must be the node of d Phi_j / d q_i (d c_j / d v_i) */
        int j = c < bm ? c - bl : m + c - bm, want = (c < bm ? bq : bv) + row, found = 0;
        for (int t = start[j]; t < start[j + 1] && !found; t++)
            found = mv->jac.col[ent[t]] == want && node[ent[t]] == node[p];
        ok = found;
    }
    if (fwd) model_graph_lock(md, 0);
    mbl_free(start), mbl_free(ent);
    return ok;
}

int lin_blocks_init(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, mbl_status *st)
{
    memset(B, 0, sizeof *B);
    int rc = lin_eval_init(md, &B->ev, st); /* fills the view B->ev.mv */
    if (rc) return rc;
    const model_view *mv = &B->ev.mv;
    int n = mv->n, m = mv->m, k = mv->k, nr = mv->nr, ny = mv->ny;
    B->n = n, B->m = m, B->k = k, B->nr = nr, B->ny = ny;
    size_t nn = (size_t)n * (size_t)n, mn = (size_t)m * (size_t)n, yn = (size_t)ny * (size_t)n;
    NEW(B->M, nn), NEW(B->Rv, nn), NEW(B->Rq, nn), NEW(B->Rr, (size_t)n * nr);
    NEW(B->Pq, mn), NEW(B->Pdq, mn), NEW(B->Pddv, mn), NEW(B->Pddq, mn), NEW(B->Pddr, (size_t)m * nr);
    NEW(B->Ya, yn), NEW(B->Yv, yn), NEW(B->Yq, yn), NEW(B->Yr, (size_t)ny * nr);
    NEW(B->Ylam, (size_t)ny * m), NEW(B->Ymu, (size_t)ny * k);
    size_t kn = (size_t)k * (size_t)n;
    NEW(B->Nv, kn), NEW(B->Nq, kn), NEW(B->Ndv, kn), NEW(B->Ndq, kn), NEW(B->Ndr, (size_t)k * nr);
    if (!B->Ylam || !B->Ymu || !B->Nv || !B->Nq || !B->Ndv || !B->Ndq || !B->Ndr || !B->M || !B->Rv || !B->Rq || !B->Rr || !B->Pq || !B->Pdq || !B->Pddv || !B->Pddq || !B->Pddr || !B->Ya ||
        !B->Yv || !B->Yq || !B->Yr) {
        lin_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rc = lin_eval_at(md, pt, &B->ev, st);
    if (rc) {
        lin_blocks_free(B);
        return rc;
    }
    const mbl_sjac *J = &mv->jac;
    const double *x = B->ev.jac;
    int e0 = mv->row0[MBL_ROW_EOM], e1 = mv->row0[MBL_ROW_EOM + 1];
    int d0 = mv->row0[MBL_ROW_PHIDD], d1 = mv->row0[MBL_ROW_PHIDD + 1];
    int v0 = mv->row0[MBL_ROW_PHID], v1 = mv->row0[MBL_ROW_PHID + 1];
    int p0 = mv->row0[MBL_ROW_PHI], p1 = mv->row0[MBL_ROW_PHI + 1];
    lin_sjac_dense(mv, J, x, e0, e1, MBL_BLK_A, B->M);
    lin_sjac_dense(mv, J, x, e0, e1, MBL_BLK_V, B->Rv);
    lin_sjac_dense(mv, J, x, e0, e1, MBL_BLK_Q, B->Rq);
    lin_sjac_dense(mv, J, x, e0, e1, MBL_BLK_R, B->Rr);
    lin_sjac_dense(mv, J, x, p0, p1, MBL_BLK_Q, B->Pq);
    lin_sjac_dense(mv, J, x, v0, v1, MBL_BLK_Q, B->Pdq);
    lin_sjac_dense(mv, J, x, d0, d1, MBL_BLK_V, B->Pddv);
    lin_sjac_dense(mv, J, x, d0, d1, MBL_BLK_Q, B->Pddq);
    lin_sjac_dense(mv, J, x, d0, d1, MBL_BLK_R, B->Pddr);
    int c0 = mv->row0[MBL_ROW_NH], c1 = mv->row0[MBL_ROW_NH + 1];
    int cd0 = mv->row0[MBL_ROW_NHD], cd1 = mv->row0[MBL_ROW_NHD + 1];
    lin_sjac_dense(mv, J, x, c0, c1, MBL_BLK_V, B->Nv);
    lin_sjac_dense(mv, J, x, c0, c1, MBL_BLK_Q, B->Nq);
    lin_sjac_dense(mv, J, x, cd0, cd1, MBL_BLK_V, B->Ndv);
    lin_sjac_dense(mv, J, x, cd0, cd1, MBL_BLK_Q, B->Ndq);
    lin_sjac_dense(mv, J, x, cd0, cd1, MBL_BLK_R, B->Ndr);
    const double *yv = B->ev.y + ny;
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_A, B->Ya);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_V, B->Yv);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_Q, B->Yq);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_R, B->Yr);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_LAMBDA, B->Ylam);
    lin_sjac_dense(mv, &mv->yjac, yv, 0, ny, MBL_BLK_MU, B->Ymu);
    return mv->ext ? blocks_ext(B, st) : 0;
}

int lin_outputs_use(const model_view *mv, int blk)
{
    int c0 = mv->blk0[blk], c1 = mv->blk0[blk + 1];
    for (int p = 0; p < mv->yjac.nz; p++)
        if (mv->yjac.col[p] >= c0 && mv->yjac.col[p] < c1) return 1;
    return 0;
}

int lin_blocks_eval_jac(const mbl_model *md, const mbl_point *pt, const double *v, const double *lam,
                        const double *mu, double *jac, mbl_eval *ev, mbl_status *st)
{
    mbl_point p = *pt; /* the point's X, der(X) and Z kept */
    p.v = (double *)v, p.lambda = (double *)lam, p.mu = (double *)mu;
    model_fill_syms_pt(md, &p, ev->syms);
    int rc = model_eval_jac_memo(md, pt->jac_memo, ev->syms, jac, ev->work, st); /* the point's, if there */
    if (rc) return model_eval_error(md, ev->syms, "evaluating the model Jacobian", st);
    return 0;
}

int lin_require_dense(const mbl_model *md, const mbl_lin_options *opt, const char *method, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (mv->n > opt->dense_n_max)
        return mbl_error(st, MBL_EDIM,
                         "method '%s' is dense (n^2 memory, n^3 time) and n = %d exceeds dense_n_max = %d: "
                         "use augmented or descriptor",
                         method, mv->n, opt->dense_n_max);
    return 0;
}

int lin_require_full_rank(const mbl_blocks *B, double tol, int *rows, int *r, const char *method, const char *why,
                          mbl_status *st)
{
    int rc = lin_constraint_rank(B, tol, rows, r, st);
    if (rc) return rc;
    if (*r < B->m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: Phi_q has rank %d < %d constraints at this point (singular configuration or redundant "
                         "constraints): %s; " LIN_RANK_ADVICE,
                         method, *r, B->m, why);
    return 0;
}

/* Scale every nonzero column of the rows x cols matrix A to unit 2-norm: a constraint's row of
 * Phi_q (a column of Phi_q^T) carries the constraint's units, which must not decide a rank. */
void lin_unit_columns(int rows, int cols, double *A, int lda)
{
    for (int j = 0; j < cols; j++) {
        double *a = A + (size_t)j * lda, nrm = 0;
        for (int i = 0; i < rows; i++) nrm = hypot(nrm, a[i]);
        if (nrm > 0 && isfinite(nrm))
            for (int i = 0; i < rows; i++) a[i] /= nrm;
    }
}

int lin_constraint_rank(const mbl_blocks *B, double tol, int *rows, int *r, mbl_status *st)
{
    int n = B->n, m = B->m;
    *r = 0;
    if (m == 0) return 0;
    double *At = mbl_alloc_array((size_t)n * (size_t)m + 1, sizeof *At);
    int *jp = mbl_alloc_array((size_t)m + 1, sizeof *jp);
    if (!At || !jp) {
        mbl_free(At), mbl_free(jp);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) At[j + (size_t)i * n] = B->Pq[i + (size_t)j * m];
    lin_unit_columns(n, m, At, n);
    int rc = mbla_qrcp(n, m, At, n, tol, jp, r, NULL, 1, 0, NULL, 1, st);
    if (!rc) memcpy(rows, jp, (size_t)m * sizeof *rows);
    mbl_free(At), mbl_free(jp);
    return rc;
}

int lin_rstates_alloc(mbl_rstates *rs, int n, int z0, int z1)
{
    size_t a = (size_t)z0 * (size_t)n + 1, b = (size_t)z1 * (size_t)n + 1;
    rs->z0 = z0, rs->z1 = z1;
    NEW(rs->P, a), NEW(rs->Pd_q, a), NEW(rs->Pdd_v, a), NEW(rs->Pdd_q, a);
    NEW(rs->Pw, b), NEW(rs->Wq, b), NEW(rs->Wd_v, b), NEW(rs->Wd_q, b);
    return rs->P && rs->Pd_q && rs->Pdd_v && rs->Pdd_q && rs->Pw && rs->Wq && rs->Wd_v && rs->Wd_q ? 0 : MBL_ENOMEM;
}

void lin_rstates_free(mbl_rstates *rs)
{
    if (!rs) return;
    mbl_free(rs->S), mbl_free(rs->W);
    mbl_free(rs->P), mbl_free(rs->Pd_q), mbl_free(rs->Pdd_v), mbl_free(rs->Pdd_q);
    mbl_free(rs->Pw), mbl_free(rs->Wq), mbl_free(rs->Wd_v), mbl_free(rs->Wd_q);
    memset(rs, 0, sizeof *rs);
}

/* out (z x n, ld z) row i += the usjac entries of user-state row `urow` in column block blk */
static void usjac_row(const model_view *mv, const double *usjac, int urow, int blk, int i, int z, double *out)
{
    int n = mv->n, c0 = mv->blk0[blk];
    for (int p = 0; p < mv->usjac.nz; p++) {
        int c = mv->usjac.col[p] - c0;
        if (mv->usjac.row[p] == urow && c >= 0 && c < n) out[i + (size_t)c * z] += usjac[p];
    }
}

void lin_rstates_rows(const model_view *mv, mbl_rstates *rs, const double *usjac)
{
    int n = mv->n, nus = mv->nus, nuvs = mv->nuvs, z0 = rs->z0, z1 = rs->z1;
    size_t a = (size_t)z0 * (size_t)n, b = (size_t)z1 * (size_t)n;
    memset(rs->P, 0, a * sizeof(double)), memset(rs->Pd_q, 0, a * sizeof(double));
    memset(rs->Pdd_v, 0, a * sizeof(double)), memset(rs->Pdd_q, 0, a * sizeof(double));
    memset(rs->Pw, 0, b * sizeof(double)), memset(rs->Wq, 0, b * sizeof(double));
    memset(rs->Wd_v, 0, b * sizeof(double)), memset(rs->Wd_q, 0, b * sizeof(double));
    for (int i = 0; i < z0; i++) {
        const mbl_state_ref *s = &rs->S[i];
        if (s->kind == MBL_SREF_COORD) {
            rs->P[i + (size_t)s->index * z0] = 1.0;
            continue;
        }
        usjac_row(mv, usjac, s->index, MBL_BLK_Q, i, z0, rs->P);
        usjac_row(mv, usjac, nus + s->index, MBL_BLK_Q, i, z0, rs->Pd_q);
        usjac_row(mv, usjac, 2 * nus + s->index, MBL_BLK_V, i, z0, rs->Pdd_v);
        usjac_row(mv, usjac, 2 * nus + s->index, MBL_BLK_Q, i, z0, rs->Pdd_q);
    }
    for (int i = 0; i < z1; i++) {
        const mbl_state_ref *w = &rs->W[i];
        if (w->kind == MBL_SREF_COORD) {
            rs->Pw[i + (size_t)w->index * z1] = 1.0;
        } else if (w->kind == MBL_SREF_SDOT) { /* W_i = S_j': the rows of S_j one level up */
            int j = w->index;
            for (int c = 0; c < n; c++) {
                rs->Pw[i + (size_t)c * z1] = rs->P[j + (size_t)c * z0];
                rs->Wq[i + (size_t)c * z1] = rs->Pd_q[j + (size_t)c * z0];
                rs->Wd_v[i + (size_t)c * z1] = rs->Pdd_v[j + (size_t)c * z0];
                rs->Wd_q[i + (size_t)c * z1] = rs->Pdd_q[j + (size_t)c * z0];
            }
        } else {
            usjac_row(mv, usjac, 3 * nus + w->index, MBL_BLK_V, i, z1, rs->Pw);
            usjac_row(mv, usjac, 3 * nus + w->index, MBL_BLK_Q, i, z1, rs->Wq);
            usjac_row(mv, usjac, 3 * nus + nuvs + w->index, MBL_BLK_V, i, z1, rs->Wd_v);
            usjac_row(mv, usjac, 3 * nus + nuvs + w->index, MBL_BLK_Q, i, z1, rs->Wd_q);
        }
    }
}

double lin_rstates_S(const model_view *mv, const mbl_rstates *rs, int i, const double *us, const double *q)
{
    (void)mv;
    return rs->S[i].kind == MBL_SREF_COORD ? q[rs->S[i].index] : us[rs->S[i].index];
}

double lin_rstates_W(const model_view *mv, const mbl_rstates *rs, int i, const double *us, const double *v)
{
    const mbl_state_ref *w = &rs->W[i];
    if (w->kind == MBL_SREF_COORD) return v[w->index];
    if (w->kind == MBL_SREF_USER) return us[3 * mv->nus + w->index];
    const mbl_state_ref *s = &rs->S[w->index];
    return s->kind == MBL_SREF_COORD ? v[s->index] : us[mv->nus + s->index];
}

int lin_states(const mbl_model *md, const mbl_blocks *B, const mbl_lin_options *opt, mbl_rstates *rs,
               char *selection, size_t selsize, mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    mbl_linear tmp;
    memset(&tmp, 0, sizeof tmp);
    memset(rs, 0, sizeof *rs);
    int z0 = 0, z1 = 0;
    int rc = lin_select_states(md, &B->ev, opt, &tmp, &rs->S, &z0, &rs->W, &z1, st);
    if (rc) return rc;
    if (lin_rstates_alloc(rs, mv->n, z0, z1)) {
        lin_rstates_free(rs);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rs->sdot = z0 == z1;
    for (int i = 0; i < z1 && rs->sdot; i++) rs->sdot = rs->W[i].kind == MBL_SREF_SDOT && rs->W[i].index == i;
    lin_rstates_rows(mv, rs, B->ev.us + 3 * mv->nus + 2 * mv->nuvs);
    snprintf(selection, selsize, "%s", tmp.selection);
    return 0;
}

int lin_state_names(const mbl_model *md, mbl_linear *lin, const mbl_rstates *rs)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int z0 = rs->z0, bad = 0;
    for (int i = 0; i < z0; i++)
        lin->state_names[i] =
            lin_name_join(rs->S[i].kind == MBL_SREF_COORD ? mv->qname[rs->S[i].index] : mv->us_text[rs->S[i].index], NULL);
    for (int i = 0; i < rs->z1; i++) {
        const mbl_state_ref *w = &rs->W[i];
        if (w->kind == MBL_SREF_USER) lin->state_names[z0 + i] = lin_name_join(mv->uvs_text[w->index], NULL);
        else if (w->kind == MBL_SREF_COORD) lin->state_names[z0 + i] = lin_name_join("der(", mv->qname[w->index]);
        else lin->state_names[z0 + i] = lin->state_names[w->index] ? lin_name_join("der(", lin->state_names[w->index]) : NULL;
    }
    for (int i = 0; i < lin->zx && i < mv->nX; i++) lin->state_names[z0 + rs->z1 + i] = lin_name_join(mv->xname[i], NULL);
    for (int j = 0; j < lin->nu; j++) lin->input_names[j] = lin_name_join(mv->rname[j], NULL);
    for (int j = 0; j < lin->ny; j++) lin->output_names[j] = lin_name_join(mv->yname[j], NULL);
    for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
    for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
    for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
    return bad ? MBL_ENOMEM : 0;
}

/* ---- the opening of the dense methods ---- */

int lin_dense_open(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, int **rows, mbl_status *st)
{
    const model_view *mv = &B->ev.mv;
    int rc = lin_blocks_init(md, pt, B, st);
    if (rc) return rc;
    *rows = mbl_calloc((size_t)mv->m + 1, sizeof **rows);
    if (!*rows) {
        lin_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    return 0;
}

int lin_dense_states(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const mbl_blocks *B,
                     const char *method, const char *why, int *rows, int *r, mbl_rstates *rs, mbl_rstates *us,
                     int *frozen, char *sel, size_t selsize, mbl_status *st)
{
    int rc = lin_require_full_rank(B, opt->rank_tol, rows, r, method, why, st);
    if (!rc) rc = lin_states(md, B, opt, rs, sel, selsize, st);
    if (rc) return rc;
    *frozen = lin_states_frozen(md, pt, rs->W, rs->z0, rs->z1); /* speeds at a point with motion */
    if (*frozen) {
        *us = *rs;
        if (lin_rstates_rates(B, us, rs)) {
            memset(rs, 0, sizeof *rs);
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    return 0;
}

int lin_point_moving(const mbl_point *pt)
{
    for (int j = 0; j < pt->n; j++)
        if (pt->v[j] != 0.0 || pt->vdot[j] != 0.0) return 1;
    return 0;
}


/* ---- the states' test (issue 30, item 1; docs/linearization.md "States that stop describing the
 * motion") ---- */

/* AUG_MASS_DOMINANCE of the scaled M-hat: off-diagonal row sums at most this make it regular */
#define STATES_MASS_DOMINANCE 0.5
/* A scaled M-hat of order at most STATES_MASS_EXACT_MAX passes by its exact reciprocal 1-norm
 * condition (mbla_inv_rcond: dgetrf and dgetrs on the identity, cheaper there than dgecon: 3.4 k
 * instead of 13 k instructions at order 2, 16 k instead of 40 k at 8, 56 k instead of 70 k at 16,
 * but 230 k instead of 202 k at 32) when that is at least STATES_MASS_EXACT_MARGIN times
 * rcond_min. dgecon's estimate of the inverse's norm is a lower bound, so its reciprocal condition is
 * at least the exact one: it passes too (the margin covers both roundings). Anything else (a zero
 * pivot, a figure within the margin, a larger M-hat) goes to dgetrf + dgecon as before: the same
 * decisions, refusals and messages. */
#define STATES_MASS_EXACT_MAX 24
#define STATES_MASS_EXACT_MARGIN 1e3

double lin_state_tol(const mbl_lin_options *opt)
{
    return opt && opt->state_tol > 0 ? opt->state_tol : 1e-10;
}

/* The largest diagonal entry of the model's mass matrix M = dR/dvdot (the EOM rows' vdot columns of
 * the Jacobian values jacval). */
static double mass_scale(const mbl_model *md, const model_view *mv, const double *jacval, const int *mdiag, int nmdiag)
{
    int e0 = mv->row0[MBL_ROW_EOM], ja = mv->blk0[MBL_BLK_A];
    double mmax = 0;
    if (mdiag) {
        for (int e = 0; e < nmdiag; e++)
            if (isfinite(jacval[mdiag[e]])) mmax = fmax(mmax, fabs(jacval[mdiag[e]]));
        return mmax;
    }
    int p0, p1;
    model_jac_col_range(md, ja, ja + mv->n, &p0, &p1);
    for (int p = p0; p < p1; p++) {
        int r = mv->jac.row[p] - e0, c = mv->jac.col[p] - ja;
        if (r >= 0 && r < mv->n && c == r && isfinite(jacval[p])) mmax = fmax(mmax, fabs(jacval[p]));
    }
    return mmax;
}

/* The z x z mass matrix M (positive diagonal) scaled to unit diagonal: 0 when regular (diagonally
 * dominant, or its LU's reciprocal condition at least rcond_min; allocates only then),
 * MBL_ESINGULAR with *rcond (0: exactly singular) otherwise, MBL_ENOMEM; no message. */
static int mass_regular(int z, const double *M, double rcond_min, double *rcond)
{
    int dominant = 1;
    *rcond = 0;
    for (int i = 0; i < z && dominant; i++) {
        double off = 0;
        for (int j = 0; j < z; j++)
            if (j != i) off += fabs(M[i + (size_t)j * z]) / sqrt(M[i + (size_t)i * z] * M[j + (size_t)j * z]);
        dominant = off <= STATES_MASS_DOMINANCE;
    }
    if (dominant) return 0;
    size_t zz = (size_t)z * (size_t)z;
    double *S = mbl_alloc_array((z <= STATES_MASS_EXACT_MAX ? 2 * zz : zz) + 1, sizeof *S);
    if (!S) return MBL_ENOMEM;
    for (int pass = z <= STATES_MASS_EXACT_MAX ? 0 : 1; pass < 2; pass++) {
        for (int j = 0; j < z; j++)
            for (int i = 0; i < z; i++)
                S[i + (size_t)j * z] = M[i + (size_t)j * z] / sqrt(M[i + (size_t)i * z] * M[j + (size_t)j * z]);
        double exact = 0;
        if (!pass && !mbla_inv_rcond(z, S, z, S + zz, z, &exact, NULL) && exact >= STATES_MASS_EXACT_MARGIN * rcond_min) {
            mbl_free(S);
            return 0;
        }
    }
    mbla_dlu *lu = NULL;
    int rc = mbla_dlu_new(z, S, z, &lu, NULL);
    if (!rc) rc = mbla_dlu_rcond(lu, rcond, NULL);
    if (rc == MBL_ESINGULAR) *rcond = 0;
    if (rc == MBL_ESINGULAR || (!rc && !(*rcond >= rcond_min))) rc = MBL_ESINGULAR;
    mbla_dlu_free(lu);
    mbl_free(S);
    return rc;
}

/* The scaled M-hat (unit diagonal) of lin: mass_regular, with the refusal's message. */
static int mass_condition(const mbl_linear *lin, double rcond_min, mbl_status *st)
{
    double rcond = 0;
    int rc = mass_regular(lin->z1, lin->M, rcond_min, &rcond);
    if (rc == MBL_ENOMEM) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc == MBL_ESINGULAR)
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the reduced mass matrix M-hat is singular (reciprocal condition %.3g after scaling to unit "
                       "diagonal): the velocity states are dependent in the kinetic energy (a degree of freedom "
                       "without mass); choose other states",
                       rcond);
    return rc;
}

int lin_null_basis(int n, int nrow, const double *X, double tol, double *Q, int *piv, int *rank, mbl_status *st)
{
    double *At = mbl_alloc_array((size_t)n * (size_t)nrow + 1, sizeof *At);
    if (!At) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < nrow; i++)
        for (int j = 0; j < n; j++) At[j + (size_t)i * n] = X[i + (size_t)j * nrow];
    lin_unit_columns(n, nrow, At, n); /* the same null space; the rank free of the constraints' units */
    int rc = mbla_qrcp(n, nrow, At, n, tol, piv, rank, Q, n, n, NULL, 1, st);
    mbl_free(At);
    return rc;
}

void lin_velocity_rows(const mbl_blocks *B, const int *rows, int r, double *X)
{
    int n = B->n, m = B->m, k = B->k, nv = r + k;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < r; i++) X[i + (size_t)j * nv] = B->Pq[rows[i] + (size_t)j * m];
        for (int i = 0; i < k; i++) X[r + i + (size_t)j * nv] = B->Nv[i + (size_t)j * k];
    }
}

int lin_tangent_mass(const mbl_blocks *B, const int *rows, int r, const mbl_lin_options *opt, const char *method,
                     mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nv = r + k, z = 0, rank = 0, rc = 0;
    if (!B->M || n <= 0) return 0;
    double *X = mbl_calloc((size_t)nv * n + 1, sizeof *X), *Q = mbl_calloc((size_t)n * n + 1, sizeof *Q);
    double *MT = mbl_calloc((size_t)n * n + 1, sizeof *MT), *Mh = mbl_calloc((size_t)n * n + 1, sizeof *Mh);
    int *piv = mbl_calloc((size_t)nv + 1, sizeof *piv);
    if (!X || !Q || !MT || !Mh || !piv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    lin_velocity_rows(B, rows, r, X);
    if (nv > 0) rc = lin_null_basis(n, nv, X, opt->rank_tol, Q, piv, &rank, st);
    else
        for (int i = 0; i < n; i++) Q[i + (size_t)i * n] = 1.0;
    if (rc) goto done;
    z = n - rank;
    if (z <= 0) goto done;
    const double *T = Q + (size_t)rank * n; /* n x z, orthonormal */
    mbla_gemm('N', 'N', n, z, n, 1.0, B->M, n, T, n, 0.0, MT, n, NULL);
    mbla_gemm('T', 'N', z, z, n, 1.0, T, n, MT, n, 0.0, Mh, z, NULL);
    double mmax = 0, worst = INFINITY, tol = lin_state_tol(opt);
    int iw = -1;
    for (int i = 0; i < n; i++) mmax = fmax(mmax, fabs(B->M[i + (size_t)i * n]));
    for (int i = 0; i < z; i++) {
        double rho = mmax > 0 ? Mh[i + (size_t)i * z] / mmax : 0.0; /* T's columns have unit norm */
        if (!(rho >= worst)) worst = rho, iw = i;
    }
    double rcond = 0;
    if (!(worst >= tol)) {
        /* the claim last ("... is singular"): the caller may name the massless coordinate after it */
        rc = mbl_error(st, MBL_ESINGULAR,
                       "%s: the equations do not determine the motion here, and the penalty ODE's eigenvalues would be "
                       "artifacts of alpha (a degree of freedom without mass at this point: direction t%d of the "
                       "constraints' tangent space moves mass %.3g of the model's mass scale, below state_tol %.3g; "
                       "T^T M T with T an orthonormal basis of null([Phi_q; A_nh]), rank %d of %d constraints; "
                       "nullspace and descriptor refuse it too): the mass matrix on the constraints' tangent space is "
                       "singular",
                       method, iw + 1, worst, tol, r, m);
    } else if ((rc = mass_regular(z, Mh, opt->rcond_min, &rcond)) == MBL_ESINGULAR) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "%s: the equations do not determine the motion here, and the penalty ODE's eigenvalues would be "
                       "artifacts of alpha (reciprocal condition %.3g after scaling to unit diagonal, below rcond_min "
                       "%.3g; T^T M T with T an orthonormal basis of null([Phi_q; A_nh]), rank %d of %d constraints; "
                       "nullspace and descriptor refuse it too): the mass matrix on the constraints' tangent space is "
                       "singular",
                       method, rcond, opt->rcond_min, r, m);
    } else if (rc == MBL_ENOMEM) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
done:
    mbl_free(X), mbl_free(Q), mbl_free(MT), mbl_free(Mh), mbl_free(piv);
    return rc;
}

/* The first coordinate without mass at the point that no constraint holds, or -1: its diagonal
 * entry of M = dR/dvdot (in the Jacobian values jacval) zero or not in the pattern, and no row but
 * the equations of motion with an entry in its q, v or vdot column. Such a coordinate makes the
 * augmented matrix singular: named as the cause (a mass parameter set to 0, a coordinate the
 * kinetic energy leaves out). */
int lin_massless_coordinate(const mbl_model *md, const double *jacval)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (mv->n <= 0) return -1;
    unsigned char *has = mbl_calloc((size_t)mv->n, 1);
    if (!has) return -1;
    int e0 = mv->row0[MBL_ROW_EOM], found = -1;
    int blk[3] = {mv->blk0[MBL_BLK_A], mv->blk0[MBL_BLK_V], mv->blk0[MBL_BLK_Q]};
    for (int p = 0; p < mv->jac.nz; p++) {
        if (jacval[p] == 0) continue;
        int r = mv->jac.row[p] - e0, eom = r >= 0 && r < mv->n;
        for (int b = 0; b < 3; b++) {
            int c = mv->jac.col[p] - blk[b];
            if (c < 0 || c >= mv->n) continue;
            if (!eom || (b == 0 && c == r)) has[c] = 1; /* a constraint's entry, or M's diagonal */
        }
    }
    for (int i = 0; i < mv->n && found < 0; i++)
        if (!has[i]) found = i;
    mbl_free(has);
    return found;
}

const char *lin_jac_largest(const mbl_model *md, const double *jacval, char *buf, size_t cap)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int best = -1, e0 = mv->row0[MBL_ROW_EOM];
    buf[0] = '\0';
    for (int p = 0; p < mv->jac.nz; p++)
        if (isfinite(jacval[p]) && (best < 0 || fabs(jacval[p]) > fabs(jacval[best]))) best = p;
    if (best < 0) return buf;
    int r = mv->jac.row[best] - e0, c = mv->jac.col[best], n = mv->n;
    const char *fmt[3] = {"der(der(%s))", "der(%s)", "%s"};
    int blk[3] = {MBL_BLK_A, MBL_BLK_V, MBL_BLK_Q};
    char col[160] = "", row[160], note[200];
    for (int b = 0; b < 3 && !col[0]; b++) {
        int j = c - mv->blk0[blk[b]];
        if (j >= 0 && j < n) snprintf(col, sizeof col, fmt[b], mbl_model_coord_name(md, j));
    }
    if (!col[0]) snprintf(col, sizeof col, "unknown %d", c + 1);
    if (r >= 0 && r < n) snprintf(row, sizeof row, "the equation of motion of '%s'", mbl_model_coord_name(md, r));
    else snprintf(row, sizeof row, "residual row %d", mv->jac.row[best] + 1);
    snprintf(buf, cap, "%.3g in %s, with respect to %s%s", jacval[best], row, col,
             model_jac_set_note(md, best, note, sizeof note));
    return buf;
}

int lin_cond_refusal(const mbl_model *md, const double *jacval, double cond, double cond_max, mbl_status *st)
{
    char big[400];
    lin_jac_largest(md, jacval, big, sizeof big);
    return mbl_error(st, MBL_ESINGULAR,
                     "the augmented matrix (source 000 Table 1) is too ill-conditioned for double precision: condition "
                     "estimate %.3g after equilibration, above cond_max = %.3g, so its solve has no correct digit left; "
                     "the model's largest Jacobian entry is %s",
                     cond, cond_max, big[0] ? big : "not finite");
}

const char *lin_mass_set_note(const mbl_model *md, int c, char *buf, size_t cap)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int e0 = mv->row0[MBL_ROW_EOM], ja = mv->blk0[MBL_BLK_A];
    buf[0] = '\0';
    for (int p = 0; p < mv->jac.nz; p++)
        if (mv->jac.row[p] == e0 + c && mv->jac.col[p] == ja + c) return model_jac_set_note(md, p, buf, cap);
    return buf;
}

int lin_mass_diag(const model_view *mv, int *mdiag)
{
    int e0 = mv->row0[MBL_ROW_EOM], ja = mv->blk0[MBL_BLK_A], nd = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p] - e0, c = mv->jac.col[p] - ja;
        if (r >= 0 && r < mv->n && c == r) mdiag[nd++] = p;
    }
    return nd;
}

int lin_check_states(const mbl_model *md, const double *jacval, const mbl_linear *lin, const mbl_lin_options *opt,
                     mbl_status *st)
{
    return lin_check_states_at(md, jacval, NULL, 0, lin, opt, st);
}

int lin_check_states_at(const mbl_model *md, const double *jacval, const int *mdiag, int nmdiag,
                        const mbl_linear *lin, const mbl_lin_options *opt, mbl_status *st)
{
    int rc = lin_check_states_mass(md, jacval, mdiag, nmdiag, lin, opt, st);
    return !rc && lin->M && lin->v_W && lin->z1 > 1 ? mass_condition(lin, opt ? opt->rcond_min : 1e-13, st) : rc;
}

int lin_check_states_mass(const mbl_model *md, const double *jacval, const int *mdiag, int nmdiag,
                          const mbl_linear *lin, const mbl_lin_options *opt, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, z0 = lin->z0, z1 = lin->z1;
    if (!lin->M || !lin->v_W || z1 <= 0) return 0;
    /* every state moves mass: M-hat_ii > 0 */
    for (int i = 0; i < z1; i++) {
        double d = lin->M[i + (size_t)i * z1];
        if (!(d > 0) || !isfinite(d))
            return mbl_error(st, MBL_ESINGULAR,
                             "the reduced mass matrix M-hat is singular: state %s has %s inertia (M-hat(%d, %d) = "
                             "%.3g); a degree of freedom without mass, or a velocity state that does not move the "
                             "model",
                             lin->state_names && lin->state_names[z0 + i] ? lin->state_names[z0 + i] : "?",
                             d < 0 ? "negative" : "no", i + 1, i + 1, d);
    }
    /* ... relative to the model's own mass scale: rho_i = M-hat_ii / (m_max |dv/dW_i|^2), free of the
     * states' units and of the mass unit */
    double mmax = mass_scale(md, mv, jacval, mdiag, nmdiag), tol = lin_state_tol(opt), worst = INFINITY;
    int iw = -1;
    for (int i = 0; i < z1 && mmax > 0 && isfinite(mmax); i++) {
        double v2 = 0;
        for (int r = 0; r < n; r++) v2 += lin->v_W[r + (size_t)i * n] * lin->v_W[r + (size_t)i * n];
        double rho = lin->M[i + (size_t)i * z1] / (mmax * v2);
        if (v2 > 0 && isfinite(v2) && rho < worst) worst = rho, iw = i;
    }
    if (iw >= 0 && worst < tol) {
        const char *w = lin->state_names && lin->state_names[z0 + iw] ? lin->state_names[z0 + iw] : "?";
        const char *s = iw < z0 && lin->state_names && lin->state_names[iw] ? lin->state_names[iw] : w;
        /* the descriptor pencil needs no states at an exact singular configuration, but its own
         * tangent coordinates are refused here when the point is next to one (a Newton point 1e-8
         * from a bifurcation): then it is no way out, and the message does not offer it */
        int in_descriptor = opt && opt->method && !strcmp(opt->method, "descriptor");
        return mbl_error(st, MBL_ESINGULAR,
                         "the state %s stops describing the motion at this point: a unit rate %s moves mass %.3g of "
                         "the model's mass scale (M-hat relative to m_max |dv/d%s|^2, below state_tol %.3g), a "
                         "singular configuration for these states: %s",
                         s, w, worst, w, tol,
                         in_descriptor ? "the point is at or next to a singular configuration, where the descriptor "
                                         "pencil's own tangent coordinates fail too; linearize at a nearby point"
                                       : "choose another state, or --method descriptor");
    }
    return 0;
}

double lin_spec_dist(int nx, const double *A1, const double *A2, double *w, mbl_status *st)
{
    double *r1 = w, *i1 = w + nx, *r2 = w + 2 * nx, *i2 = w + 3 * nx;
    if (mbla_eig(nx, A1, nx, r1, i1, NULL, 1, NULL, 1, st) || mbla_eig(nx, A2, nx, r2, i2, NULL, 1, NULL, 1, st))
        return INFINITY;
    double d = 0;
    for (int i = 0; i < nx; i++) {
        double best = INFINITY;
        for (int j = 0; j < nx; j++) best = fmin(best, hypot(r1[i] - r2[j], i1[i] - i2[j]));
        d = fmax(d, best);
    }
    return d;
}
