/* The operating point's constraint QR: the initial multipliers' least squares at the guess and the
 * rank test of the constraint Jacobian at the point factor the same pattern, [Phi_q; A_nh]^T (the
 * equations of motion are linear in the multipliers with that coefficient in the canonical form),
 * so one SPQR ordering and symbolic analysis serves both where the patterns agree. */
#include <math.h>
#include <string.h>

#include "model/jac_cols.h"
#include "opoint_constraint.h"

/* Large tall subproblems (opoint_newton_step's SPQR backslash path), the others its own way. */
static int multipliers_by_qr(const opoint_subproblem *sp)
{
    return (sp->nrow > OPOINT_DENSE_MAX || sp->ncol > OPOINT_DENSE_MAX) && sp->nrow > sp->ncol;
}

/* Triplet arrays for up to nz entries: 0, or MBL_ENOMEM with none allocated. */
static int triplets_new(int nz, int **ti, int **tj, double **tx, mbl_status *st)
{
    size_t cap = (size_t)nz + 1;
    *ti = mbl_alloc_array(cap, sizeof **ti), *tj = mbl_alloc_array(cap, sizeof **tj);
    *tx = mbl_alloc_array(cap, sizeof **tx);
    if (*ti && *tj && *tx) return 0;
    mbl_free(*ti), mbl_free(*tj), mbl_free(*tx);
    *ti = *tj = NULL, *tx = NULL;
    return mbl_error(st, MBL_ENOMEM, "out of memory");
}

int opoint_multipliers_step(opoint_subproblem *sp, la_spqr **keep, double *dx, mbl_status *st)
{
    if (!multipliers_by_qr(sp)) return opoint_newton_step(sp, dx, st);
    const model_view *mv = &sp->mv;
    int nz = 0, m = sp->nrow, n = sp->ncol;
    int *ti, *tj;
    double *tx, *b = mbl_alloc_array((size_t)m + 1, sizeof *b);
    int rc = triplets_new(mv->jac.nz, &ti, &tj, &tx, st);
    if (!rc && !b) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int ci = 0, p0, p1; !rc && opoint_sub_col_run(sp, &ci, &p0, &p1);)
        for (int p = p0; p < p1; p++) {
            int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
            if (r >= 0 && c >= 0) ti[nz] = r, tj[nz] = c, tx[nz++] = sp->jac[p];
        }
    for (int r = 0; !rc && r < m; r++) b[r] = -sp->F[sp->rows[r]];
    mbla_csc *A = NULL;
    la_spqr *qr = NULL;
    if (!rc) rc = mbla_csc_from_triplets(m, n, nz, ti, tj, tx, NULL, &A, st);
    if (!rc) rc = la_spqr_new(A, &qr, st);
    if (!rc) rc = la_spqr_lstsq(qr, A, b, dx, st);
    if (!rc && keep) *keep = qr;
    else la_spqr_free(qr);
    mbla_csc_free(A);
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(b);
    return rc;
}

/* The rank of the m x n matrix of the nz triplets (rows scaled): of its transpose by kept's
 * analysis where that has the transpose's pattern, else by mbla_spqr_rank. */
static int rank_sparse(int m, int n, int nz, const int *ti, const int *tj, const double *tx, la_spqr *kept,
                       int *rank, mbl_status *st)
{
    mbla_csc *A = NULL;
    int rc = 0;
    if (kept) {
        rc = mbla_csc_from_triplets(n, m, nz, tj, ti, tx, NULL, &A, st);
        if (!rc && la_spqr_same_pattern(kept, A)) {
            rc = la_spqr_refactor(kept, A, st);
            if (!rc) *rank = la_spqr_rank_of(kept);
            mbla_csc_free(A);
            return rc;
        }
        mbla_csc_free(A);
        A = NULL;
    }
    if (!rc) rc = mbla_csc_from_triplets(m, n, nz, ti, tj, tx, NULL, &A, st);
    if (!rc) rc = mbla_spqr_rank(A, -1.0, rank, NULL, st);
    mbla_csc_free(A);
    return rc;
}

/* The Newton pattern's rows hold every entry of Phi's rows in the coordinates' columns: 1 (the
 * equilibrium's pattern, made, with those rows and columns selected; no nonholonomic rows) */
static int pattern_holds_phi(const opoint_subproblem *sp, int jq, int r_phi)
{
    const model_view *mv = &sp->mv;
    if (!sp->rptr || mv->k) return 0;
    for (int i = 0; i < mv->m; i++)
        if (sp->row_pos[r_phi + i] < 0) return 0;
    for (int j = 0; j < mv->n; j++)
        if (sp->col_pos[jq + j] < 0) return 0;
    return 1;
}

/* At least as many entries as opoint_constraint_triplets gives, by its own path: the Newton
 * pattern's Phi rows, the coordinates' column range, or the whole Jacobian (the rank test's
 * triplets sized to the constraints, not to the Jacobian: 80,008 of 560,030 entries at the
 * N = 10^4 four-bar, their 1.3 MB where 9 MB was reserved) */
static int constraint_entries_max(const opoint_subproblem *sp)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int jq = model_blk0(md, MBL_BLK_Q), r_phi = mv->row0[MBL_ROW_PHI];
    if (pattern_holds_phi(sp, jq, r_phi)) {
        int nz = 0;
        for (int i = 0; i < mv->m; i++) nz += sp->rptr[sp->row_pos[r_phi + i] + 1] - sp->rptr[sp->row_pos[r_phi + i]];
        return nz;
    }
    int p0 = 0, p1 = mv->jac.nz;
    if (mv->k == 0) model_jac_col_range(md, jq, jq + mv->n, &p0, &p1);
    return p1 - p0;
}

int opoint_constraint_triplets(const opoint_subproblem *sp, int *ti, int *tj, double *tx)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int n = mv->n, nz = 0;
    /* rows: Phi (dPhi/dq) and nh (dc/dv) */
    int jq = model_blk0(md, MBL_BLK_Q), jv = model_blk0(md, MBL_BLK_V);
    int r_phi = mv->row0[MBL_ROW_PHI], r_nh = mv->row0[MBL_ROW_NH];
    if (pattern_holds_phi(sp, jq, r_phi)) {
        for (int i = 0; i < mv->m; i++) {
            int r = sp->row_pos[r_phi + i];
            for (int k = sp->rptr[r]; k < sp->rptr[r + 1]; k++) {
                int c = sp->cols[sp->rcol[k]] - jq;
                if (c >= 0 && c < n) ti[nz] = i, tj[nz] = c, tx[nz++] = sp->jac[sp->rsrc[k]];
            }
        }
        return nz;
    }
    /* without nonholonomic rows, the coordinates' columns alone (model_jac_col_range) */
    int p0 = 0, p1 = mv->jac.nz;
    if (mv->k == 0) model_jac_col_range(md, jq, jq + n, &p0, &p1);
    for (int p = p0; p < p1; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if (r >= r_phi && r < r_phi + mv->m && c >= jq && c < jq + n) ti[nz] = r - r_phi, tj[nz] = c - jq, tx[nz++] = sp->jac[p];
        else if (r >= r_nh && r < r_nh + mv->k && c >= jv && c < jv + n)
            ti[nz] = mv->m + r - r_nh, tj[nz] = c - jv, tx[nz++] = sp->jac[p];
    }
    return nz;
}

/* The 2-norms rn (m, cleared here) of the rows of the nz triplets */
static void row_norms(int m, int nz, const int *ti, const double *tx, double *rn)
{
    memset(rn, 0, (size_t)m * sizeof *rn);
    for (int p = 0; p < nz; p++) rn[ti[p]] = hypot(rn[ti[p]], tx[p]);
}

/* The rows' 2-norms rn_guess (m) of [Phi_q; A_nh] with the coordinates at q_guess (the rest of the
 * point's symbols as they are), into the triplet arrays' room; sp->syms left at the point. */
static int guess_row_norms(opoint_subproblem *sp, const double *q_guess, int *ti, int *tj, double *tx, double *rn_guess,
                           mbl_status *st)
{
    const mbl_model *md = sp->md;
    const int *sym_q = sp->mv.sym_of_unknown + sp->mv.blk0[MBL_BLK_Q];
    model_fill_syms_pt(md, sp->pt, sp->syms);
    for (int i = 0; i < sp->mv.n; i++) sp->syms[sym_q[i]] = q_guess[i];
    if (opoint_jac(sp, st)) return model_eval_error(md, sp->syms, "while looking for the operating point", st);
    row_norms(sp->mv.m + sp->mv.k, opoint_constraint_triplets(sp, ti, tj, tx), ti, tx, rn_guess);
    model_fill_syms_pt(md, sp->pt, sp->syms);
    return 0;
}

int opoint_constraint_rank(opoint_subproblem *sp, la_spqr *kept, const double *q_guess, int *rank, int *vanished,
                           mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int m = mv->m + mv->k, n = mv->n;
    *rank = 0, *vanished = -1;
    if (m == 0) return 0;
    int *ti, *tj, rc;
    double *tx;
    if ((rc = triplets_new(constraint_entries_max(sp), &ti, &tj, &tx, st))) return rc;
    double *rn = mbl_calloc(2 * (size_t)m + 1, sizeof *rn), *rn_guess = rn ? rn + m : NULL;
    if (!rn) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    /* at a degenerate solution, the rows' norms where the solve began (before the point's values) */
    int compare = !rc && sp->linear_rate && q_guess;
    if (compare) rc = guess_row_norms(sp, q_guess, ti, tj, tx, rn_guess, st);
    model_fill_syms_pt(md, sp->pt, sp->syms);
    if (!rc && opoint_jac(sp, st)) rc = model_eval_error(md, sp->syms, "while looking for the operating point", st);
    if (rc) {
        mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(rn);
        return rc;
    }
    int nz = opoint_constraint_triplets(sp, ti, tj, tx);
    row_norms(m, nz, ti, tx, rn);
    /* A row that fell below OPOINT_ROW_VANISH of its norm at the guess vanishes at the point: the
     * constraint holds there only to second order (a singular configuration, such as a pendulum of
     * zero length), and its row counts as zero, so that the rank drops; the first such is named. */
    for (int i = 0; compare && i < m; i++)
        if (rn[i] < OPOINT_ROW_VANISH * rn_guess[i]) {
            if (*vanished < 0) *vanished = i;
            rn[i] = 0;
        }
    /* every other row to unit 2-norm: a constraint's units must not decide the rank */
    for (int p = 0; p < nz; p++) {
        double r = rn[ti[p]];
        if (r > 0 && isfinite(r)) tx[p] /= r;
        else if (r == 0) tx[p] = 0;
    }
    mbl_free(rn);
    if ((size_t)m * (size_t)n <= (size_t)OPOINT_DENSE_MAX * OPOINT_DENSE_MAX) {
        double *J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J);
        int mn = m < n ? m : n;
        double *s = mbl_alloc_array((size_t)mn + 1, sizeof *s);
        if (!J || !s) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else {
            for (int p = 0; p < nz; p++) J[ti[p] + (size_t)tj[p] * m] = tx[p];
            rc = mbla_svd(m, n, J, m, 'S', s, NULL, m, NULL, mn, st);
            if (!rc)
                for (int i = 0; i < mn; i++)
                    if (s[i] > sp->opt->rank_tol * s[0]) (*rank)++;
        }
        mbl_free(J), mbl_free(s);
    } else {
        rc = rank_sparse(m, n, nz, ti, tj, tx, kept, rank, st);
    }
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

