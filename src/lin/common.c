/* Shared pieces of the methods partition, nullspace, projection, descriptor, penalty and fd:
 * dense blocks of the exact DAE Jacobian, independent constraint rows (QRCP), coordinate
 * partitioning (full pivoting), and the reduction engine of methods_internal.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

#define NEW(p, count) ((p) = mbl_calloc((size_t)(count) + 1, sizeof *(p)))

void mbl_sjac_dense(const mbl_model *md, const mbl_sjac *J, const double *val, int r0, int r1, int cb, double *out)
{
    int c0 = model_blk0(md, cb), c1 = model_blk0(md, cb + 1), nr = r1 - r0;
    memset(out, 0, (size_t)nr * (size_t)(c1 - c0) * sizeof *out);
    for (int p = 0; p < J->nz; p++) {
        int r = J->row[p], c = J->col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) out[(r - r0) + (size_t)(c - c0) * nr] += val[p];
    }
}

void mbl_blocks_free(mbl_blocks *B)
{
    if (!B) return;
    mbl_free(B->M), mbl_free(B->Rv), mbl_free(B->Rq), mbl_free(B->Rr);
    mbl_free(B->Pq), mbl_free(B->Pdq), mbl_free(B->Pddv), mbl_free(B->Pddq), mbl_free(B->Pddr);
    mbl_free(B->Nv), mbl_free(B->Nq), mbl_free(B->Ndv), mbl_free(B->Ndq), mbl_free(B->Ndr);
    mbl_free(B->Ya), mbl_free(B->Yv), mbl_free(B->Yq), mbl_free(B->Yr);
    mbl_free(B->Ylam), mbl_free(B->Ymu);
    mbl_free(B->Ea), mbl_free(B->El), mbl_free(B->Em), mbl_free(B->Ev), mbl_free(B->Eq), mbl_free(B->Exd);
    mbl_free(B->Ez), mbl_free(B->Ex), mbl_free(B->Er), mbl_free(B->Yxd), mbl_free(B->Yz), mbl_free(B->Yx);
    mbl_eval_free(&B->ev);
    memset(B, 0, sizeof *B);
}

/* The Eq. 10 blocks of B (see mbl_blocks): the dynamic rows [R; d; zeq] against every unknown block. */
static int blocks_ext(const mbl_model *md, mbl_blocks *B, mbl_status *st)
{
    int n = md->n, m = md->m, k = md->k, nr = md->nr, ny = md->ny, nX = md->nX, nZ = md->nZ;
    int ne = n + nX + nZ, e0 = md->row0[MBL_ROW_EOM], e1 = md->row0[MBL_ROW_VAR + 1];
    B->ext = 1, B->nX = nX, B->nZ = nZ, B->ne = ne;
    size_t nen = (size_t)ne * (size_t)n;
    NEW(B->Ea, nen), NEW(B->El, (size_t)ne * m), NEW(B->Em, (size_t)ne * k), NEW(B->Ev, nen), NEW(B->Eq, nen);
    NEW(B->Exd, (size_t)ne * nX), NEW(B->Ez, (size_t)ne * nZ), NEW(B->Ex, (size_t)ne * nX), NEW(B->Er, (size_t)ne * nr);
    NEW(B->Yxd, (size_t)ny * nX), NEW(B->Yz, (size_t)ny * nZ), NEW(B->Yx, (size_t)ny * nX);
    if (!B->Ea || !B->El || !B->Em || !B->Ev || !B->Eq || !B->Exd || !B->Ez || !B->Ex || !B->Er || !B->Yxd || !B->Yz ||
        !B->Yx) {
        mbl_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    const double *x = B->ev.jac, *yv = B->ev.y + ny;
    const int blk[9] = {MBL_BLK_A, MBL_BLK_LAMBDA, MBL_BLK_MU, MBL_BLK_V, MBL_BLK_Q, MBL_BLK_XD, MBL_BLK_Z, MBL_BLK_X, MBL_BLK_R};
    double *out[9] = {B->Ea, B->El, B->Em, B->Ev, B->Eq, B->Exd, B->Ez, B->Ex, B->Er};
    for (int b = 0; b < 9; b++) mbl_sjac_dense(md, &md->jac, x, e0, e1, blk[b], out[b]);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_XD, B->Yxd);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_Z, B->Yz);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_X, B->Yx);
    return 0;
}

int mbl_multipliers_reactions_only(const mbl_model *md)
{
    int m = md->m, k = md->k, e1 = md->row0[MBL_ROW_EOM + 1], v1 = md->row0[MBL_ROW_VAR + 1];
    int bl = model_blk0(md, MBL_BLK_LAMBDA), bm = model_blk0(md, MBL_BLK_MU), bq = model_blk0(md, MBL_BLK_Q);
    int bv = model_blk0(md, MBL_BLK_V), p0 = md->row0[MBL_ROW_PHI], h0 = md->row0[MBL_ROW_NH];
    /* the entries of the rows Phi (q columns) and c (v columns), by constraint: start[j]..start[j + 1] */
    int *start = mbl_calloc((size_t)(m + k) + 2, sizeof *start), *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int ok = start && ent;
    for (int pass = 0; ok && pass < 2; pass++) {
        for (int p = 0; p < md->jac.nz; p++) {
            int row = md->jac.row[p], c = md->jac.col[p], j = -1;
            if (row >= p0 && row < p0 + m && c >= bq && c < bq + md->n) j = row - p0;
            else if (row >= h0 && row < h0 + k && c >= bv && c < bv + md->n) j = m + row - h0;
            if (j < 0) continue;
            if (pass == 0) start[j + 2]++;
            else ent[start[j + 1]++] = p;
        }
        if (pass == 0)
            for (int j = 0; j < m + k; j++) start[j + 2] += start[j + 1];
    }
    for (int p = 0; ok && p < md->jac.nz; p++) {
        int row = md->jac.row[p], c = md->jac.col[p];
        if (!(c >= bl && c < bm + k) || row >= v1) continue;
        if (row >= e1) { /* an ode or implicit-variable row uses a multiplier */
            ok = 0;
            break;
        }
        /* EOM row i, column lambda_j (mu_j): must be the node of d Phi_j / d q_i (d c_j / d v_i) */
        int j = c < bm ? c - bl : m + c - bm, want = (c < bm ? bq : bv) + row, found = 0;
        for (int t = start[j]; t < start[j + 1] && !found; t++)
            found = md->jac.col[ent[t]] == want && md->jac.node[ent[t]] == md->jac.node[p];
        ok = found;
    }
    mbl_free(start), mbl_free(ent);
    return ok;
}

int mbl_blocks_init(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, mbl_status *st)
{
    memset(B, 0, sizeof *B);
    int n = md->n, m = md->m, k = md->k, nr = md->nr, ny = md->ny;
    B->n = n, B->m = m, B->k = k, B->nr = nr, B->ny = ny;
    int rc = mbl_eval_init(md, &B->ev, st);
    if (rc) return rc;
    size_t nn = (size_t)n * (size_t)n, mn = (size_t)m * (size_t)n, yn = (size_t)ny * (size_t)n;
    NEW(B->M, nn), NEW(B->Rv, nn), NEW(B->Rq, nn), NEW(B->Rr, (size_t)n * nr);
    NEW(B->Pq, mn), NEW(B->Pdq, mn), NEW(B->Pddv, mn), NEW(B->Pddq, mn), NEW(B->Pddr, (size_t)m * nr);
    NEW(B->Ya, yn), NEW(B->Yv, yn), NEW(B->Yq, yn), NEW(B->Yr, (size_t)ny * nr);
    NEW(B->Ylam, (size_t)ny * m), NEW(B->Ymu, (size_t)ny * k);
    size_t kn = (size_t)k * (size_t)n;
    NEW(B->Nv, kn), NEW(B->Nq, kn), NEW(B->Ndv, kn), NEW(B->Ndq, kn), NEW(B->Ndr, (size_t)k * nr);
    if (!B->Ylam || !B->Ymu || !B->Nv || !B->Nq || !B->Ndv || !B->Ndq || !B->Ndr || !B->M || !B->Rv || !B->Rq || !B->Rr || !B->Pq || !B->Pdq || !B->Pddv || !B->Pddq || !B->Pddr || !B->Ya ||
        !B->Yv || !B->Yq || !B->Yr) {
        mbl_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rc = mbl_eval_at(md, pt, &B->ev, st);
    if (rc) {
        mbl_blocks_free(B);
        return rc;
    }
    const mbl_sjac *J = &md->jac;
    const double *x = B->ev.jac;
    int e0 = md->row0[MBL_ROW_EOM], e1 = md->row0[MBL_ROW_EOM + 1];
    int d0 = md->row0[MBL_ROW_PHIDD], d1 = md->row0[MBL_ROW_PHIDD + 1];
    int v0 = md->row0[MBL_ROW_PHID], v1 = md->row0[MBL_ROW_PHID + 1];
    int p0 = md->row0[MBL_ROW_PHI], p1 = md->row0[MBL_ROW_PHI + 1];
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_A, B->M);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_V, B->Rv);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_Q, B->Rq);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_R, B->Rr);
    mbl_sjac_dense(md, J, x, p0, p1, MBL_BLK_Q, B->Pq);
    mbl_sjac_dense(md, J, x, v0, v1, MBL_BLK_Q, B->Pdq);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_V, B->Pddv);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_Q, B->Pddq);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_R, B->Pddr);
    int c0 = md->row0[MBL_ROW_NH], c1 = md->row0[MBL_ROW_NH + 1];
    int cd0 = md->row0[MBL_ROW_NHD], cd1 = md->row0[MBL_ROW_NHD + 1];
    mbl_sjac_dense(md, J, x, c0, c1, MBL_BLK_V, B->Nv);
    mbl_sjac_dense(md, J, x, c0, c1, MBL_BLK_Q, B->Nq);
    mbl_sjac_dense(md, J, x, cd0, cd1, MBL_BLK_V, B->Ndv);
    mbl_sjac_dense(md, J, x, cd0, cd1, MBL_BLK_Q, B->Ndq);
    mbl_sjac_dense(md, J, x, cd0, cd1, MBL_BLK_R, B->Ndr);
    const double *yv = B->ev.y + ny;
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_A, B->Ya);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_V, B->Yv);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_Q, B->Yq);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_R, B->Yr);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_LAMBDA, B->Ylam);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_MU, B->Ymu);
    return md->ext ? blocks_ext(md, B, st) : 0;
}

int mbl_outputs_use(const mbl_model *md, int blk)
{
    int c0 = model_blk0(md, blk), c1 = model_blk0(md, blk + 1);
    for (int p = 0; p < md->yjac.nz; p++)
        if (md->yjac.col[p] >= c0 && md->yjac.col[p] < c1) return 1;
    return 0;
}

int mbl_blocks_eval_jac(const mbl_model *md, const mbl_point *pt, const double *v, const double *lam,
                        const double *mu, double *jac, mbl_eval *ev, mbl_status *st)
{
    mbl_point p = *pt; /* the point's X, der(X) and Z kept */
    p.v = (double *)v, p.lambda = (double *)lam, p.mu = (double *)mu;
    model_fill_syms_pt(md, &p, ev->syms);
    int rc = model_eval_jac(md, ev->syms, jac, ev->work, st);
    if (rc) return model_eval_error(md, ev->syms, "evaluating the model Jacobian", st);
    return 0;
}

int mbl_require_dense(const mbl_model *md, const mbl_lin_options *opt, const char *method, mbl_status *st)
{
    if (md->n > opt->dense_n_max)
        return mbl_error(st, MBL_EDIM,
                         "method '%s' is dense (n^2 memory, n^3 time) and n = %d exceeds dense_n_max = %d: "
                         "use augmented or descriptor",
                         method, md->n, opt->dense_n_max);
    return 0;
}

int mbl_require_full_rank(const mbl_blocks *B, double tol, int *rows, int *r, const char *method, const char *why,
                          mbl_status *st)
{
    int rc = mbl_constraint_rank(B, tol, rows, r, st);
    if (rc) return rc;
    if (*r < B->m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: Phi_q has rank %d < %d constraints at this point (singular configuration or redundant "
                         "constraints): %s; use descriptor, penalty or nullspace",
                         method, *r, B->m, why);
    return 0;
}

/* Scale every nonzero column of the rows x cols matrix A to unit 2-norm: a constraint's row of
 * Phi_q (a column of Phi_q^T) carries the constraint's units, which must not decide a rank. */
void mbl_unit_columns(int rows, int cols, double *A, int lda)
{
    for (int j = 0; j < cols; j++) {
        double *a = A + (size_t)j * lda, nrm = 0;
        for (int i = 0; i < rows; i++) nrm = hypot(nrm, a[i]);
        if (nrm > 0 && isfinite(nrm))
            for (int i = 0; i < rows; i++) a[i] /= nrm;
    }
}

int mbl_constraint_rank(const mbl_blocks *B, double tol, int *rows, int *r, mbl_status *st)
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
    mbl_unit_columns(n, m, At, n);
    int rc = mbla_qrcp(n, m, At, n, tol, jp, r, NULL, 1, 0, NULL, 1, st);
    if (!rc) memcpy(rows, jp, (size_t)m * sizeof *rows);
    mbl_free(At), mbl_free(jp);
    return rc;
}

int mbl_rstates_alloc(mbl_rstates *rs, int n, int z0, int z1)
{
    size_t a = (size_t)z0 * (size_t)n + 1, b = (size_t)z1 * (size_t)n + 1;
    rs->z0 = z0, rs->z1 = z1;
    NEW(rs->P, a), NEW(rs->Pd_q, a), NEW(rs->Pdd_v, a), NEW(rs->Pdd_q, a);
    NEW(rs->Pw, b), NEW(rs->Wq, b), NEW(rs->Wd_v, b), NEW(rs->Wd_q, b);
    return rs->P && rs->Pd_q && rs->Pdd_v && rs->Pdd_q && rs->Pw && rs->Wq && rs->Wd_v && rs->Wd_q ? 0 : MBL_ENOMEM;
}

void mbl_rstates_free(mbl_rstates *rs)
{
    if (!rs) return;
    mbl_free(rs->S), mbl_free(rs->W);
    mbl_free(rs->P), mbl_free(rs->Pd_q), mbl_free(rs->Pdd_v), mbl_free(rs->Pdd_q);
    mbl_free(rs->Pw), mbl_free(rs->Wq), mbl_free(rs->Wd_v), mbl_free(rs->Wd_q);
    memset(rs, 0, sizeof *rs);
}

/* out (z x n, ld z) row i += the usjac entries of user-state row `urow` in column block blk */
static void usjac_row(const mbl_model *md, const double *usjac, int urow, int blk, int i, int z, double *out)
{
    int n = md->n, c0 = model_blk0(md, blk);
    for (int p = 0; p < md->usjac.nz; p++) {
        int c = md->usjac.col[p] - c0;
        if (md->usjac.row[p] == urow && c >= 0 && c < n) out[i + (size_t)c * z] += usjac[p];
    }
}

void mbl_rstates_rows(const mbl_model *md, mbl_rstates *rs, const double *usjac)
{
    int n = md->n, nus = md->nus, nuvs = md->nuvs, z0 = rs->z0, z1 = rs->z1;
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
        usjac_row(md, usjac, s->index, MBL_BLK_Q, i, z0, rs->P);
        usjac_row(md, usjac, nus + s->index, MBL_BLK_Q, i, z0, rs->Pd_q);
        usjac_row(md, usjac, 2 * nus + s->index, MBL_BLK_V, i, z0, rs->Pdd_v);
        usjac_row(md, usjac, 2 * nus + s->index, MBL_BLK_Q, i, z0, rs->Pdd_q);
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
            usjac_row(md, usjac, 3 * nus + w->index, MBL_BLK_V, i, z1, rs->Pw);
            usjac_row(md, usjac, 3 * nus + w->index, MBL_BLK_Q, i, z1, rs->Wq);
            usjac_row(md, usjac, 3 * nus + nuvs + w->index, MBL_BLK_V, i, z1, rs->Wd_v);
            usjac_row(md, usjac, 3 * nus + nuvs + w->index, MBL_BLK_Q, i, z1, rs->Wd_q);
        }
    }
}

double mbl_rstates_S(const mbl_model *md, const mbl_rstates *rs, int i, const double *us, const double *q)
{
    (void)md;
    return rs->S[i].kind == MBL_SREF_COORD ? q[rs->S[i].index] : us[rs->S[i].index];
}

double mbl_rstates_W(const mbl_model *md, const mbl_rstates *rs, int i, const double *us, const double *v)
{
    const mbl_state_ref *w = &rs->W[i];
    if (w->kind == MBL_SREF_COORD) return v[w->index];
    if (w->kind == MBL_SREF_USER) return us[3 * md->nus + w->index];
    const mbl_state_ref *s = &rs->S[w->index];
    return s->kind == MBL_SREF_COORD ? v[s->index] : us[md->nus + s->index];
}

int mbl_lin_states(const mbl_model *md, const mbl_blocks *B, const mbl_lin_options *opt, mbl_rstates *rs,
                   char *selection, size_t selsize, mbl_status *st)
{
    mbl_linear tmp;
    memset(&tmp, 0, sizeof tmp);
    memset(rs, 0, sizeof *rs);
    int z0 = 0, z1 = 0;
    int rc = mbl_select_states(md, &B->ev, opt, &tmp, &rs->S, &z0, &rs->W, &z1, st);
    if (rc) return rc;
    if (mbl_rstates_alloc(rs, md->n, z0, z1)) {
        mbl_rstates_free(rs);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rs->sdot = z0 == z1;
    for (int i = 0; i < z1 && rs->sdot; i++) rs->sdot = rs->W[i].kind == MBL_SREF_SDOT && rs->W[i].index == i;
    mbl_rstates_rows(md, rs, B->ev.us + 3 * md->nus + 2 * md->nuvs);
    snprintf(selection, selsize, "%s", tmp.selection);
    return 0;
}

int mbl_lin_state_names(const mbl_model *md, mbl_linear *lin, const mbl_rstates *rs)
{
    int z0 = rs->z0, bad = 0;
    for (int i = 0; i < z0; i++)
        lin->state_names[i] =
            mbl_name_join(rs->S[i].kind == MBL_SREF_COORD ? md->qname[rs->S[i].index] : md->us_text[rs->S[i].index], NULL);
    for (int i = 0; i < rs->z1; i++) {
        const mbl_state_ref *w = &rs->W[i];
        if (w->kind == MBL_SREF_USER) lin->state_names[z0 + i] = mbl_name_join(md->uvs_text[w->index], NULL);
        else if (w->kind == MBL_SREF_COORD) lin->state_names[z0 + i] = mbl_name_join("der(", md->qname[w->index]);
        else lin->state_names[z0 + i] = lin->state_names[w->index] ? mbl_name_join("der(", lin->state_names[w->index]) : NULL;
    }
    for (int i = 0; i < lin->zx && i < md->nX; i++) lin->state_names[z0 + rs->z1 + i] = mbl_name_join(md->xname[i], NULL);
    for (int j = 0; j < lin->nu; j++) lin->input_names[j] = mbl_name_join(md->rname[j], NULL);
    for (int j = 0; j < lin->ny; j++) lin->output_names[j] = mbl_name_join(md->yname[j], NULL);
    for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
    for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
    for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
    return bad ? MBL_ENOMEM : 0;
}

void mbl_rkin_free(mbl_rkin *K)
{
    if (!K) return;
    mbl_free(K->Qs), mbl_free(K->Vs), mbl_free(K->Ga), mbl_free(K->Qw), mbl_free(K->Ha), mbl_free(K->Ra);
    memset(K, 0, sizeof *K);
}

/* out (n x zc) = -Jv^-1 [X(rows) Y; Nx Y; Wx Y] for Y (n x zc); X (m x n), Nx (k x n), Wx (z1 x n,
 * may be NULL) the blocks of the rows; lu the factors of diag(d) Jv; T (n x zc) work */
static int solve_rows(const mbl_blocks *B, const mbla_dlu *lu, const double *d, const int *rows, int r,
                      const double *X, const double *Nx, const double *Wx, int z1, const double *Y, int zc,
                      double *T, double *out, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k;
    for (int j = 0; j < zc; j++) {
        const double *y = Y + (size_t)j * n;
        double *t = T + (size_t)j * n;
        for (int i = 0; i < r; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += X[rows[i] + (size_t)c * m] * y[c];
            t[i] = s;
        }
        for (int i = 0; i < k; i++) {
            double s = 0;
            for (int c = 0; c < n; c++) s += Nx[i + (size_t)c * k] * y[c];
            t[r + i] = s;
        }
        for (int i = 0; i < z1; i++) {
            double s = 0;
            if (Wx)
                for (int c = 0; c < n; c++) s += Wx[i + (size_t)c * z1] * y[c];
            t[r + k + i] = s;
        }
    }
    for (size_t p = 0; p < (size_t)n * zc; p++) out[p] = -d[p % (size_t)n] * T[p];
    return zc ? mbla_dlu_solve(lu, 'N', zc, out, n, st) : 0;
}

/* Factor diag(d) J with every row of J scaled to unit max-norm by a power of 2 (exact: the units of a
 * constraint or a state must not decide the refusal); J is scaled in place. */
static int factor_rows(int n, double *J, double *d, double rcond_min, mbla_dlu **lu, double *rcond_out,
                       const char *what, mbl_status *st)
{
    for (int i = 0; i < n; i++) {
        double mx = 0;
        for (int j = 0; j < n; j++) mx = fmax(mx, fabs(J[i + (size_t)j * n]));
        int e = 0;
        if (mx > 0 && isfinite(mx)) frexp(mx, &e);
        d[i] = ldexp(1.0, -e);
        for (int j = 0; j < n; j++) J[i + (size_t)j * n] *= d[i];
    }
    int rc = mbla_dlu_new(n, J, n, lu, st);
    double rcond = 0;
    if (!rc) rc = mbla_dlu_rcond(*lu, &rcond, st);
    if (rc && rc != MBL_ESINGULAR) return rc;
    if (rc || !(rcond >= rcond_min))
        return mbl_error(st, MBL_ESINGULAR, "%s is singular (reciprocal condition %.3g): the states do not parametrize "
                         "the motion", what, rcond);
    *rcond_out = rcond;
    return 0;
}

/* Outputs of the multipliers (see mbl_reduce): W1 (ny x nc) += Ylam dlambda + Ymu dmu with
 * Phi_q^T dlambda + A_nh^T dmu = -(M dA + Rv dV + Rq dQ + Rr dR), solved as Jv^T [dlambda; dmu; x] = -G;
 * lu holds the factors of diag(dJ) Jv, so the solution of its transpose is scaled back by dJ. */
static int reduce_multiplier_outputs(const mbl_blocks *B, const mbla_dlu *lu, const double *dJ, const int *rows,
                                     int r, const mbl_rkin *K, int z0, int z1, const double *dA,
                                     const double *Rq_use, const char *method, double *W1, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, nx = z0 + z1, nc = nx + nr;
    if (Rq_use)
        return mbl_error(st, MBL_EMODEL,
                         "%s: outputs of multipliers (lambda) need the multipliers of the operating point, which this "
                         "method does not use; use augmented",
                         method);
    if (r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: outputs of multipliers (lambda): rank(Phi_q) = %d < %d constraints, the multipliers are "
                         "not unique at this point",
                         method, r, m);
    double *G = mbl_calloc((size_t)n * (size_t)nc + 1, sizeof *G);
    double *dL = mbl_calloc((size_t)(m + k) * (size_t)nc + 1, sizeof *dL);
    if (!G || !dL) {
        mbl_free(G), mbl_free(dL);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbla_gemm('N', 'N', n, nc, n, 1.0, B->M, n, dA, n, 0.0, G, n, NULL);
    if (z0) {
        mbla_gemm('N', 'N', n, z0, n, 1.0, B->Rq, n, K->Qs, n, 1.0, G, n, NULL);
        mbla_gemm('N', 'N', n, z0, n, 1.0, B->Rv, n, K->Vs, n, 1.0, G, n, NULL);
    }
    if (z1) mbla_gemm('N', 'N', n, z1, n, 1.0, B->Rv, n, K->Qw, n, 1.0, G + (size_t)n * z0, n, NULL);
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) G[i + (size_t)(nx + j) * n] += B->Rr[i + (size_t)j * n];
    for (size_t i = 0; i < (size_t)n * nc; i++) G[i] = -G[i];
    int rc = nc ? mbla_dlu_solve(lu, 'T', nc, G, n, st) : 0;
    if (!rc) {
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < r; i++) dL[rows[i] + (size_t)j * (m + k)] = dJ[i] * G[i + (size_t)j * n];
            for (int i = 0; i < k; i++) dL[m + i + (size_t)j * (m + k)] = dJ[r + i] * G[r + i + (size_t)j * n];
        }
        if (m) mbla_gemm('N', 'N', ny, nc, m, 1.0, B->Ylam, ny, dL, m + k, 1.0, W1, ny, NULL);
        if (k) mbla_gemm('N', 'N', ny, nc, k, 1.0, B->Ymu, ny, dL + m, m + k, 1.0, W1, ny, NULL);
    }
    mbl_free(G), mbl_free(dL);
    return rc;
}

/* The kinematic part of mbl_reduce: Jc, Jv (factored, *luv with row scales dv), the sensitivities K. */
int mbl_reduce_kin(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, double rcond_min,
                      mbl_rkin *K, mbla_dlu **luv, double *dv, double *cond, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, z0 = rs->z0, z1 = rs->z1, rc = 0;
    size_t nn = (size_t)n * (size_t)n, cmax = (size_t)(z0 > z1 ? z0 : z1) + (size_t)nr + 1;
    double *Jc = NULL, *Jv = NULL, *dc = NULL, *T = NULL, *W1 = NULL;
    mbla_dlu *luc = NULL;
    *luv = NULL;
    memset(K, 0, sizeof *K);
    if (z0 != n - r || z1 != n - r - k)
        return mbl_error(st, MBL_EDIM, "reduction: %d position and %d velocity states, expected %d and %d", z0, z1,
                         n - r, n - r - k);
    NEW(Jc, nn), NEW(Jv, nn), NEW(dc, n), NEW(T, (size_t)n * cmax), NEW(W1, (size_t)n * cmax);
    NEW(K->Qs, (size_t)n * z0), NEW(K->Vs, (size_t)n * z0), NEW(K->Ga, (size_t)n * z0);
    NEW(K->Qw, (size_t)n * z1), NEW(K->Ha, (size_t)n * z1), NEW(K->Ra, (size_t)n * nr);
    if (!Jc || !Jv || !dc || !T || !W1 || !K->Qs || !K->Vs || !K->Ga || !K->Qw || !K->Ha || !K->Ra) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < r; i++) Jv[i + (size_t)j * n] = Jc[i + (size_t)j * n] = B->Pq[rows[i] + (size_t)j * m];
        for (int i = 0; i < z0; i++) Jc[r + i + (size_t)j * n] = rs->P[i + (size_t)j * z0];
        for (int i = 0; i < k; i++) Jv[r + i + (size_t)j * n] = B->Nv[i + (size_t)j * k];
        for (int i = 0; i < z1; i++) Jv[r + k + i + (size_t)j * n] = rs->Pw[i + (size_t)j * z1];
    }
    double rcc = 0, rcv = 0;
    rc = factor_rows(n, Jc, dc, rcond_min, &luc, &rcc,
                     "the constraint Jacobian completed by the position states, [Phi_q; dS/dq],", st);
    if (!rc) rc = factor_rows(n, Jv, dv, rcond_min, luv, &rcv,
                              "the velocity constraint Jacobian completed by the velocity states, [Phi_q; A_nh; dW/dv],",
                              st);
    if (rc) goto done;
    *cond = 1.0 / fmin(rcc, rcv);
    /* Qs = Jc^-1 [0; I], Qw = Jv^-1 [0; 0; I] */
    for (int j = 0; j < z0; j++) K->Qs[r + j + (size_t)j * n] = dc[r + j];
    for (int j = 0; j < z1; j++) K->Qw[r + k + j + (size_t)j * n] = dv[r + k + j];
    if (z0) rc = mbla_dlu_solve(luc, 'N', z0, K->Qs, n, st);
    if (!rc && z1) rc = mbla_dlu_solve(*luv, 'N', z1, K->Qw, n, st);
    /* Vs = -Jv^-1 [Pdq; Nq; Wq] Qs */
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pdq, B->Nq, rs->Wq, z1, K->Qs, z0, T, K->Vs, st);
    /* Ha = -Jv^-1 [Pddv; Ndv; Wd_v] Qw; Ga = -Jv^-1 ([Pddv; Ndv; Wd_v] Vs + [Pddq; Ndq; Wd_q] Qs) */
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddv, B->Ndv, rs->Wd_v, z1, K->Qw, z1, T, K->Ha, st);
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddv, B->Ndv, rs->Wd_v, z1, K->Vs, z0, T, K->Ga, st);
    if (!rc) rc = solve_rows(B, *luv, dv, rows, r, B->Pddq, B->Ndq, rs->Wd_q, z1, K->Qs, z0, T, W1, st);
    if (rc) goto done;
    for (size_t p = 0; p < (size_t)n * z0; p++) K->Ga[p] += W1[p];
    /* Ra = -Jv^-1 [Pddr; Ndr; 0] */
    if (nr) {
        for (int j = 0; j < nr; j++) {
            for (int i = 0; i < r; i++) K->Ra[i + (size_t)j * n] = -dv[i] * B->Pddr[rows[i] + (size_t)j * m];
            for (int i = 0; i < k; i++) K->Ra[r + i + (size_t)j * n] = -dv[r + i] * B->Ndr[i + (size_t)j * k];
        }
        rc = mbla_dlu_solve(*luv, 'N', nr, K->Ra, n, st);
    }
done:
    mbl_free(Jc), mbl_free(Jv), mbl_free(dc), mbl_free(T), mbl_free(W1);
    mbla_dlu_free(luc);
    if (rc) {
        mbl_rkin_free(K);
        mbla_dlu_free(*luv);
        *luv = NULL;
    }
    return rc;
}

/* The dynamic part of mbl_reduce from the sensitivities K: M, C, K, F, A, B, C, D, q_S, v_W. luv, dv:
 * the factors of diag(dv) Jv of any completion of the velocity constraints (multiplier outputs). */
static int reduce_finish(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, const mbl_rkin *K,
                         const double *Rq_use, const mbla_dlu *luv, const double *dv, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, nr = B->nr, ny = B->ny, z0 = rs->z0, z1 = rs->z1, nx = z0 + z1, rc = 0;
    const double *Rq = Rq_use ? Rq_use : B->Rq;
    size_t cmax = (size_t)(nx + nr > n ? nx + nr : n);
    double *T = NULL, *W1 = NULL, *W2 = NULL, *dA = NULL;
    mbla_dlu *mlu = NULL;
    size_t big = ((size_t)n + (size_t)ny) * cmax;
    NEW(T, big), NEW(W1, big), NEW(W2, big), NEW(dA, (size_t)n * (nx + nr));
    if (!T || !W1 || !W2 || !dA) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* M-hat = Qw^T M Qw, C-hat = Qw^T (M Ha + Rv Qw), K-hat = Qw^T (M Ga + Rv Vs + Rq Qs), F = -Qw^T (M Ra + Rr) */
    if (z1) {
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Qw, n, 0.0, W1, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, W1, n, 0.0, lin->M, z1, NULL);
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->M, n, K->Ha, n, 0.0, W1, n, NULL);
        mbla_gemm('N', 'N', n, z1, n, 1.0, B->Rv, n, K->Qw, n, 1.0, W1, n, NULL);
        mbla_gemm('T', 'N', z1, z1, n, 1.0, K->Qw, n, W1, n, 0.0, lin->Cd, z1, NULL);
        if (z0) {
            mbla_gemm('N', 'N', n, z0, n, 1.0, B->M, n, K->Ga, n, 0.0, W1, n, NULL);
            mbla_gemm('N', 'N', n, z0, n, 1.0, B->Rv, n, K->Vs, n, 1.0, W1, n, NULL);
            mbla_gemm('N', 'N', n, z0, n, 1.0, Rq, n, K->Qs, n, 1.0, W1, n, NULL);
            mbla_gemm('T', 'N', z1, z0, n, 1.0, K->Qw, n, W1, n, 0.0, lin->K, z1, NULL);
        }
        if (nr) {
            mbla_gemm('N', 'N', n, nr, n, 1.0, B->M, n, K->Ra, n, 0.0, W1, n, NULL);
            for (size_t i = 0; i < (size_t)n * nr; i++) W1[i] += B->Rr[i];
            mbla_gemm('T', 'N', z1, nr, n, -1.0, K->Qw, n, W1, n, 0.0, lin->F, z1, NULL);
        }
    }
    /* A: S' rows [P Vs + Pd_q Qs, P Qw] ([0 I] exactly when W = S'); W' rows -Mh^-1 [Kh Ch], B = [0; Mh^-1 F] */
    memset(lin->A, 0, (size_t)nx * nx * sizeof *lin->A);
    memset(lin->B, 0, (size_t)nx * nr * sizeof *lin->B);
    if (rs->sdot) {
        for (int i = 0; i < z0; i++) lin->A[i + (size_t)(z0 + i) * nx] = 1.0;
    } else if (z0) {
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->P, z0, K->Vs, n, 0.0, T, z0, NULL);
        mbla_gemm('N', 'N', z0, z0, n, 1.0, rs->Pd_q, z0, K->Qs, n, 1.0, T, z0, NULL);
        if (z1) mbla_gemm('N', 'N', z0, z1, n, 1.0, rs->P, z0, K->Qw, n, 0.0, T + (size_t)z0 * z0, z0, NULL);
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < z0; i++) lin->A[i + (size_t)j * nx] = T[i + (size_t)j * z0];
    }
    if (z1) {
        memcpy(W2, lin->M, (size_t)z1 * z1 * sizeof *W2);
        rc = mbla_dlu_new(z1, W2, z1, &mlu, st);
        if (rc == MBL_ESINGULAR) {
            rc = mbl_error(st, MBL_ESINGULAR, "the reduced mass matrix M-hat is singular");
            goto done;
        }
        if (rc) goto done;
        for (int j = 0; j < z0; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)j * z1] = -lin->K[i + (size_t)j * z1];
        for (int j = 0; j < z1; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)(z0 + j) * z1] = -lin->Cd[i + (size_t)j * z1];
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < z1; i++) W1[i + (size_t)(nx + j) * z1] = lin->F[i + (size_t)j * z1];
        rc = mbla_dlu_solve(mlu, 'N', nx + nr, W1, z1, st);
        if (rc) goto done;
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < z1; i++) lin->A[z0 + i + (size_t)j * nx] = W1[i + (size_t)j * z1];
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < z1; i++) lin->B[z0 + i + (size_t)j * nx] = W1[i + (size_t)(nx + j) * z1];
    }
    /* accelerations: da/dS = Ga + Qw A21, da/dW = Ha + Qw A22, da/dr = Ra + Qw B2 */
    for (int j = 0; j < z0; j++) memcpy(dA + (size_t)j * n, K->Ga + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < z1; j++) memcpy(dA + (size_t)(z0 + j) * n, K->Ha + (size_t)j * n, (size_t)n * sizeof *dA);
    for (int j = 0; j < nr; j++) memcpy(dA + (size_t)(nx + j) * n, K->Ra + (size_t)j * n, (size_t)n * sizeof *dA);
    if (z1) mbla_gemm('N', 'N', n, nx, z1, 1.0, K->Qw, n, lin->A + z0, nx, 1.0, dA, n, NULL);
    if (z1 && nr) mbla_gemm('N', 'N', n, nr, z1, 1.0, K->Qw, n, lin->B + z0, nx, 1.0, dA + (size_t)n * nx, n, NULL);
    /* outputs y = h(q, v, a, lambda, mu, r): dq = Qs S, dv = Vs S + Qw W */
    if (ny) {
        mbla_gemm('N', 'N', ny, nx + nr, n, 1.0, B->Ya, ny, dA, n, 0.0, W1, ny, NULL);
        if (z0) {
            mbla_gemm('N', 'N', ny, z0, n, 1.0, B->Yq, ny, K->Qs, n, 1.0, W1, ny, NULL);
            mbla_gemm('N', 'N', ny, z0, n, 1.0, B->Yv, ny, K->Vs, n, 1.0, W1, ny, NULL);
        }
        if (z1) mbla_gemm('N', 'N', ny, z1, n, 1.0, B->Yv, ny, K->Qw, n, 1.0, W1 + (size_t)ny * z0, ny, NULL);
        if ((m && mbla_norm1(ny, m, B->Ylam, ny) > 0) || (k && mbla_norm1(ny, k, B->Ymu, ny) > 0))
            rc = reduce_multiplier_outputs(B, luv, dv, rows, r, K, z0, z1, dA, Rq_use, lin->method, W1, st);
        if (rc) goto done;
        memcpy(lin->C, W1, (size_t)ny * nx * sizeof *W1);
        for (size_t i = 0; i < (size_t)ny * nr; i++) lin->D[i] = W1[(size_t)ny * nx + i] + B->Yr[i];
    }
    memcpy(lin->q_S, K->Qs, (size_t)n * z0 * sizeof *K->Qs);
    memcpy(lin->v_W, K->Qw, (size_t)n * z1 * sizeof *K->Qw);
done:
    mbl_free(T), mbl_free(W1), mbl_free(W2), mbl_free(dA);
    mbla_dlu_free(mlu);
    return rc;
}

int mbl_reduce(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, const double *Rq_use,
               double rcond_min, mbl_linear *lin, mbl_rkin *kin, mbla_dlu **Jv_lu_out, mbl_status *st)
{
    int n = B->n, m = B->m, k = B->k, z1 = rs->z1;
    mbl_rkin K;
    mbla_dlu *luv = NULL;
    double *dv = mbl_calloc((size_t)n + 1, sizeof *dv);
    if (Jv_lu_out) *Jv_lu_out = NULL;
    if (!dv) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = mbl_reduce_kin(B, rows, r, rs, rcond_min, &K, &luv, dv, &lin->cond, st);
    if (!rc) rc = B->ext ? mbl_reduce_finish_ext(B, r, rs, &K, Rq_use, NULL, rcond_min, lin, st)
                         : reduce_finish(B, rows, r, rs, &K, Rq_use, luv, dv, lin, st);
    if (!rc && Jv_lu_out) { /* the caller solves with Jv itself: factor the unscaled rows (exact) */
        double *Jv = mbl_calloc((size_t)n * n + 1, sizeof *Jv);
        if (!Jv) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; !rc && j < n; j++) {
            for (int i = 0; i < r; i++) Jv[i + (size_t)j * n] = B->Pq[rows[i] + (size_t)j * m];
            for (int i = 0; i < k; i++) Jv[r + i + (size_t)j * n] = B->Nv[i + (size_t)j * k];
            for (int i = 0; i < z1; i++) Jv[r + k + i + (size_t)j * n] = rs->Pw[i + (size_t)j * z1];
        }
        if (!rc) rc = mbla_dlu_new(n, Jv, n, Jv_lu_out, st);
        mbl_free(Jv);
    }
    if (!rc && kin) *kin = K;
    else mbl_rkin_free(&K);
    mbla_dlu_free(luv);
    mbl_free(dv);
    return rc;
}

/* X (n x z, ld n) := X M^-1 for the factors lu of M (z x z): (M^-T X^T)^T; w (z x n) work */
static int right_solve(const mbla_dlu *lu, int n, int z, double *X, double *w, mbl_status *st)
{
    if (!z || !n) return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < z; j++) w[j + (size_t)i * z] = X[i + (size_t)j * n];
    int rc = mbla_dlu_solve(lu, 'T', n, w, z, st);
    for (int i = 0; !rc && i < n; i++)
        for (int j = 0; j < z; j++) X[i + (size_t)j * n] = w[j + (size_t)i * z];
    return rc;
}

int mbl_reduce_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *ts, const mbl_rstates *us,
                      double rcond_min, mbl_linear *lin, mbl_status *st)
{
    int n = B->n, nr = B->nr, z0 = us->z0, z1 = us->z1, nx = z0 + z1, rc;
    if (ts->z0 != z0 || ts->z1 != z1) return mbl_error(st, MBL_EDIM, "change of states: counts differ");
    mbl_rkin K;
    mbla_dlu *luv = NULL, *gl = NULL, *hl = NULL;
    double *dv = NULL, *G = NULL, *H21 = NULL, *Hw = NULL, *L = NULL, *w = NULL, *X = NULL;
    double cond = 0;
    memset(&K, 0, sizeof K);
    NEW(dv, n), NEW(G, (size_t)z0 * z0), NEW(H21, (size_t)z1 * z0), NEW(Hw, (size_t)z1 * z1);
    NEW(L, (size_t)z1 * (nx + nr)), NEW(w, (size_t)n * (nx + nr)), NEW(X, (size_t)n * (nx + nr));
    if (!dv || !G || !H21 || !Hw || !L || !w || !X) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_reduce_kin(B, rows, r, ts, rcond_min, &K, &luv, dv, &cond, st);
    if (rc) goto done;
    /* G = P Qs, H21 = Pw Vs + Wq Qs, Hw = Pw Qw, L = [Pw Ga + Wd_v Vs + Wd_q Qs, Pw Ha + Wd_v Qw, Pw Ra] */
    if (z0) mbla_gemm('N', 'N', z0, z0, n, 1.0, us->P, z0, K.Qs, n, 0.0, G, z0, NULL);
    if (z1) {
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Pw, z1, K.Qw, n, 0.0, Hw, z1, NULL);
        if (z0) {
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Pw, z1, K.Vs, n, 0.0, H21, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wq, z1, K.Qs, n, 1.0, H21, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Pw, z1, K.Ga, n, 0.0, L, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wd_v, z1, K.Vs, n, 1.0, L, z1, NULL);
            mbla_gemm('N', 'N', z1, z0, n, 1.0, us->Wd_q, z1, K.Qs, n, 1.0, L, z1, NULL);
        }
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Pw, z1, K.Ha, n, 0.0, L + (size_t)z1 * z0, z1, NULL);
        mbla_gemm('N', 'N', z1, z1, n, 1.0, us->Wd_v, z1, K.Qw, n, 1.0, L + (size_t)z1 * z0, z1, NULL);
        if (nr) mbla_gemm('N', 'N', z1, nr, n, 1.0, us->Pw, z1, K.Ra, n, 0.0, L + (size_t)z1 * nx, z1, NULL);
    }
    double rg = 1, rh = 1;
    rc = z0 ? mbla_dlu_new(z0, G, z0, &gl, st) : 0;
    if (!rc && z0) rc = mbla_dlu_rcond(gl, &rg, st);
    if (!rc && z1) rc = mbla_dlu_new(z1, Hw, z1, &hl, st);
    if (!rc && z1) rc = mbla_dlu_rcond(hl, &rh, st);
    if (rc == MBL_ESINGULAR || (!rc && !(fmin(rg, rh) >= rcond_min))) {
        rc = mbl_error(st, MBL_ESINGULAR, "the change to the user's states is singular (reciprocal condition %.3g)",
                       rc ? 0.0 : fmin(rg, rh));
        goto done;
    }
    if (rc) goto done;
    /* Qw' = Qw Hw^-1; Qs' = Qs G^-1; Vs' = (Vs - Qw' H21) G^-1;
     * [Ga' Ha'] = ([Ga Ha] - Qw' L_x) H^-1 = [(Ga - Qw' L_s - (Ha - Qw' L_w) Hw^-1 H21) G^-1, (Ha - Qw' L_w) Hw^-1];
     * Ra' = Ra - Qw' L_u */
    rc = right_solve(hl, n, z1, K.Qw, w, st);
    if (!rc) rc = right_solve(gl, n, z0, K.Qs, w, st);
    if (rc) goto done;
    if (z1 && z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Qw, n, H21, z1, 1.0, K.Vs, n, NULL);
    if (!rc) rc = right_solve(gl, n, z0, K.Vs, w, st);
    if (z1) {
        if (z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Qw, n, L, z1, 1.0, K.Ga, n, NULL);
        mbla_gemm('N', 'N', n, z1, z1, -1.0, K.Qw, n, L + (size_t)z1 * z0, z1, 1.0, K.Ha, n, NULL);
        if (nr) mbla_gemm('N', 'N', n, nr, z1, -1.0, K.Qw, n, L + (size_t)z1 * nx, z1, 1.0, K.Ra, n, NULL);
    }
    if (!rc) rc = right_solve(hl, n, z1, K.Ha, w, st);
    if (!rc && z1 && z0) mbla_gemm('N', 'N', n, z0, z1, -1.0, K.Ha, n, H21, z1, 1.0, K.Ga, n, NULL);
    if (!rc) rc = right_solve(gl, n, z0, K.Ga, w, st);
    if (!rc) rc = B->ext ? mbl_reduce_finish_ext(B, r, us, &K, NULL, NULL, rcond_min, lin, st)
                         : reduce_finish(B, rows, r, us, &K, NULL, luv, dv, lin, st);
    if (!rc) lin->cond = cond / fmin(rg, rh);
done:
    mbl_rkin_free(&K);
    mbla_dlu_free(luv), mbla_dlu_free(gl), mbla_dlu_free(hl);
    mbl_free(dv), mbl_free(G), mbl_free(H21), mbl_free(Hw), mbl_free(L), mbl_free(w), mbl_free(X);
    return rc;
}

int mbl_lin_set_names(const mbl_model *md, mbl_linear *lin, char *const *pos)
{
    int z = lin->z0, bad = 0;
    for (int i = 0; i < z; i++) {
        lin->state_names[i] = mbl_name_join(pos[i], NULL);
        if (i < lin->z1) lin->state_names[z + i] = mbl_name_join("der(", pos[i]);
    }
    for (int i = 0; i < lin->zx && i < md->nX; i++) lin->state_names[z + lin->z1 + i] = mbl_name_join(md->xname[i], NULL);
    for (int j = 0; j < lin->nu; j++) lin->input_names[j] = mbl_name_join(md->rname[j], NULL);
    for (int j = 0; j < lin->ny; j++) lin->output_names[j] = mbl_name_join(md->yname[j], NULL);
    for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
    for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
    for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
    return bad ? MBL_ENOMEM : 0;
}

int mbl_point_moving(const mbl_point *pt)
{
    for (int j = 0; j < pt->n; j++)
        if (pt->v[j] != 0.0 || pt->vdot[j] != 0.0) return 1;
    return 0;
}

int mbl_lin_alloc_eigs(mbl_linear *lin, int neig)
{
    size_t sz = (size_t)lin->n * (size_t)neig + 1;
    lin->eig_re = mbl_calloc((size_t)neig + 1, sizeof(double));
    lin->eig_im = mbl_calloc((size_t)neig + 1, sizeof(double));
    lin->eig_spurious = mbl_calloc((size_t)neig + 1, sizeof(int));
    lin->eig_berr = mbl_alloc_array((size_t)neig + 1, sizeof(double));
    lin->eig_err = mbl_alloc_array((size_t)neig + 1, sizeof(double));
    if (lin->eig_berr)
        for (int i = 0; i < neig; i++) lin->eig_berr[i] = NAN;
    if (lin->eig_err)
        for (int i = 0; i < neig; i++) lin->eig_err[i] = NAN;
    lin->eig_vre = mbl_calloc(sz, sizeof(double));
    lin->eig_vim = mbl_calloc(sz, sizeof(double));
    if (!lin->eig_re || !lin->eig_im || !lin->eig_spurious || !lin->eig_berr || !lin->eig_err || !lin->eig_vre ||
        !lin->eig_vim)
        return MBL_ENOMEM;
    lin->neig = neig;
    return 0;
}
