/* The nonlinear solver of the operating points: Newton (Gauss-Newton for non-square systems) on a
 * subproblem (opoint_solve.h), with the exact Jacobian from the model's tape, minimum-norm steps
 * (rank-deficient constraint Jacobians give minimum-norm multipliers and position corrections), a
 * backtracking line search on the residual norm, Levenberg-Marquardt steps where it stalls, and
 * the Newton homotopy (homotopy.c) where those stall too. Small systems use a dense SVD
 * (minimum-norm least squares); large ones a sparse LU (KLU) when square, else SPQR's
 * minimum-norm / least-squares solve. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "la/la_equilibrate.h"
#include "mblin/la.h"
#include "model/eval_rows.h"
#include "model/jac_cols.h"
#include "opoint_solve.h"

/* Square sparse Newton matrices of at least this order are equilibrated from the first step. */
#define OPOINT_EQ_FIRST_MIN 2000

/* Square sparse Newton matrices of at least this order are ordered as saddle points (each
 * multiplier column paired with a coordinate before AMD, mbla_klu_opts.saddle) when their rows
 * are the equations of motion and the constraints; smaller ones keep KLU's default order (their
 * iterates stay bit for bit the same; the fill only matters for large ones). */
#define OPOINT_SADDLE_MIN 2000

/* A square Newton matrix whose KLU pivot ratio (klu_rcond) is below this is treated as rank
 * deficient and solved for the minimum-norm step instead. */
#define OPOINT_KLU_RCOND_MIN 1e-12
/* Backtracking line search: sufficient decrease and the largest number of halvings. */
#define LS_ARMIJO 1e-4
#define LS_MAX_HALVINGS 40

/* fmax(m, x) for m not NaN (every running maximum here starts at a number): a NaN x leaves m, as
 * fmax does, without the library call (several hundred a sweep point) */
static inline double max_num(double m, double x) { return x > m ? x : m; }

double *opoint_unknown_ptr(const mbl_model *md, mbl_point *pt, int col)
{
    /* the blocks [vdot lambda mu v q Xdot Z X r] from the point's sizes (those of the model, made by
     * opoint_point_new): called per unknown and iterate (a sweep's warm points), so no call per block */
    (void)md;
    if (col < 0) return NULL;
    /* block by block, each length and base read only when the column lies beyond the blocks before */
#define OPOINT_BLOCK(ptr, len)                                                                                         \
    if (col < (len)) return (ptr) + col;                                                                               \
    col -= (len);
    OPOINT_BLOCK(pt->vdot, pt->n)
    OPOINT_BLOCK(pt->lambda, pt->m)
    OPOINT_BLOCK(pt->mu, pt->k)
    OPOINT_BLOCK(pt->v, pt->n)
    OPOINT_BLOCK(pt->q, pt->n)
    OPOINT_BLOCK(pt->Xdot, pt->nX)
    OPOINT_BLOCK(pt->Z, pt->nZ)
    OPOINT_BLOCK(pt->X, pt->nX)
    OPOINT_BLOCK(pt->r, pt->nr)
#undef OPOINT_BLOCK
    return NULL;
}

/* sp->rows_view for the rows selected, where it can be made (not beside a rows_tape of the warm
 * corrector's, not with a term evaluated numerically): the equilibrium's rows without the velocity
 * and acceleration constraints' rows the whole residual also computes (the N = 1000 four-bar: 53,000
 * of its 87,066 instructions). */
static int rows_view_never; /* opoint_rows_view_disable */

void opoint_rows_view_disable(int on) { rows_view_never = on != 0; }

static void rows_view_make(opoint_subproblem *sp)
{
    if (sp->rows_view_tried) return;
    sp->rows_view_tried = 1;
    if (sp->rows_tape || sp->rows_view_off || rows_view_never) return;
    if (!(sp->rows_view = model_F_rows_view(sp->md, sp->nrow, sp->rows))) {
        sp->rows_sel = model_eval_sel_ok(sp->md);
        return;
    }
    if (!(sp->rows_F = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *sp->rows_F))) {
        mblx__subtape_free(sp->rows_view);
        sp->rows_view = NULL;
        return;
    }
    sp->rows_tape = mblx__subtape_tape(sp->rows_view), sp->rows_work = sp->work;
}

static void rows_view_forget(opoint_subproblem *sp)
{
    sp->rows_view_tried = sp->rows_sel = 0;
    if (!sp->rows_view) return;
    mblx__subtape_free(sp->rows_view), mbl_free(sp->rows_F);
    sp->rows_view = NULL, sp->rows_tape = NULL, sp->rows_F = sp->rows_work = NULL;
}

int opoint_eval_F(opoint_subproblem *sp, double *norm2, double *norminf, mbl_status *st)
{
    const mbl_model *md = sp->md;
    mbl_point *pt = sp->pt;
    model_fill_syms_pt(md, pt, sp->syms);
    int whole = !sp->rows_tape;
    int rc = !whole      ? mblx_tape_eval(sp->rows_tape, sp->syms, sp->rows_F, sp->rows_work, st)
             : sp->rows_sel ? model_eval_F_sel(md, sp->rowmask, sp->syms, sp->F, sp->work, st)
                            : model_eval_F(md, sp->syms, sp->F, sp->work, st);
    /* the view's (the selection's) failure named as the whole residual's evaluation names it (its
     * first value not finite may be in a row the view leaves out) */
    if (rc && (sp->rows_view || sp->rows_sel)) whole = 1, rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
    if (rc) {
        rc = model_eval_error(md, sp->syms, "while looking for the operating point", st);
        sp->neval_fail++;
        if (st) snprintf(sp->eval_fail, sizeof sp->eval_fail, "%.300s", st->msg);
        return rc;
    }
    double s2 = 0, si = 0;
    const int nrow = sp->nrow, *rows = sp->rows;
    double *F = sp->F;
    if (!whole) {
        const double *rows_F = sp->rows_F;
        if (!sp->hom_F0 && !sp->hom_C) { /* the warm corrector's: the copy and the norms in one pass */
            for (int i = 0; i < nrow; i++) {
                double f = F[rows[i]] = rows_F[i];
                s2 += f * f;
                si = max_num(si, fabs(f));
            }
            *norm2 = sqrt(s2);
            *norminf = si;
            return 0;
        }
        for (int i = 0; i < nrow; i++) F[rows[i]] = rows_F[i];
    }
    for (int i = 0; i < sp->nrow; i++) {
        if (sp->hom_F0) sp->F[sp->rows[i]] -= (1.0 - sp->hom_t) * sp->hom_F0[i];
        if (sp->hom_C && sp->hom_pc[i] >= 0) {
            int c = sp->hom_pc[i];
            sp->F[sp->rows[i]] += (1.0 - sp->hom_t) * sp->hom_C[i] *
                                  (*opoint_unknown_ptr(md, pt, sp->cols[c]) - sp->hom_x0[c]);
        }
        double f = sp->F[sp->rows[i]];
        s2 += f * f;
        si = max_num(si, fabs(f));
    }
    *norm2 = sqrt(s2);
    *norminf = si;
    return 0;
}

int opoint_eval_F_jac(opoint_subproblem *sp, double *norm2, double *norminf, mbl_status *st)
{
    const mbl_model *md = sp->md;
    model_fill_syms_pt(md, sp->pt, sp->syms);
    sp->jac_ok = 0;
    if (mblx_tape_eval(sp->fj_tape, sp->syms, sp->jac, sp->fj_work, st)) {
        int rc = model_eval_error(md, sp->syms, "while looking for the operating point", st);
        sp->neval_fail++;
        if (st) snprintf(sp->eval_fail, sizeof sp->eval_fail, "%.300s", st->msg);
        return rc;
    }
    memcpy(sp->jac_syms, sp->syms, (size_t)sp->mv.nsym * sizeof *sp->syms);
    sp->jac_ok = 1, sp->jac_part = 0;
    double s2 = 0, si = 0;
    const int nrow = sp->nrow, *rows = sp->rows;
    const double *rows_F = sp->jac + sp->mv.jac.nz;
    double *F = sp->F;
    for (int i = 0; i < nrow; i++) {
        double f = F[rows[i]] = rows_F[i];
        s2 += f * f;
        si = max_num(si, fabs(f));
    }
    *norm2 = sqrt(s2);
    *norminf = si;
    return 0;
}

/* *a (at least n + 1 ints) cut to n + 1 (kept as it is when the smaller block is refused) */
static void shrink_ints(int **a, int n)
{
    int *b = mbl_realloc_array(*a, (size_t)n + 1, sizeof **a);
    if (b) *a = b;
}

int opoint_sub_col_run(const opoint_subproblem *sp, int *ci, int *p0, int *p1)
{
    const mbl_model *md = sp->md;
    if (*ci >= sp->ncol) return 0;
    if (!model_jac_by_col(md)) { /* one run: every entry */
        *ci = sp->ncol, *p0 = 0, *p1 = sp->mv.jac.nz;
        return 1;
    }
    int a = *ci, b = a + 1;
    while (b < sp->ncol && sp->cols[b] == sp->cols[b - 1] + 1) b++;
    *ci = b;
    model_jac_col_range(md, sp->cols[a], sp->cols[b - 1] + 1, p0, p1);
    return 1;
}

/* Assemble the sparsity pattern of the subproblem's Jacobian once (triplet sources, CSC, map). */
static int sparse_pattern(opoint_subproblem *sp, mbl_status *st)
{
    if (sp->A) return 0;
    const model_view *mv = &sp->mv;
    /* the subproblem's entries (triplets and sources) in one pass, in arrays for the whole Jacobian
     * cut to their count after it */
    size_t cap = (size_t)mv->jac.nz + 1;
    int *ti = mbl_alloc_array(cap, sizeof *ti), *tj = mbl_alloc_array(cap, sizeof *tj), nz = 0;
    sp->ssrc = mbl_alloc_array(cap, sizeof *sp->ssrc);
    if (ti && tj && sp->ssrc) {
        for (int ci = 0, p0, p1; opoint_sub_col_run(sp, &ci, &p0, &p1);)
            for (int p = p0; p < p1; p++) {
                int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
                if (r >= 0 && c >= 0) ti[nz] = r, tj[nz] = c, sp->ssrc[nz++] = p;
            }
        shrink_ints(&ti, nz), shrink_ints(&tj, nz), shrink_ints(&sp->ssrc, nz);
    }
    sp->smap = mbl_alloc_array((size_t)nz + 1, sizeof *sp->smap);
    sp->stx = mbl_calloc((size_t)nz + 1, sizeof *sp->stx);
    sp->eqr = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *sp->eqr);
    sp->eqc = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *sp->eqc);
    sp->eqw = mbl_alloc_array(LA_EQUILIBRATE_WS(sp->nrow, sp->ncol) + 1, sizeof *sp->eqw);
    sp->rptr = mbl_calloc((size_t)sp->nrow + 2, sizeof *sp->rptr);
    sp->rperm = mbl_alloc_array((size_t)nz + 1, sizeof *sp->rperm);
    sp->rsrc = mbl_alloc_array((size_t)nz + 1, sizeof *sp->rsrc);
    sp->rcol = mbl_alloc_array((size_t)nz + 1, sizeof *sp->rcol);
    sp->eq_on = sp->eq_warm = 0;
    int rc = 0;
    if (!ti || !tj || !sp->ssrc || !sp->smap || !sp->stx || !sp->eqr || !sp->eqc || !sp->eqw || !sp->rptr ||
        !sp->rperm || !sp->rsrc || !sp->rcol)
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        sp->snz = nz;
        rc = mbla_csc_from_triplets(sp->nrow, sp->ncol, nz, ti, tj, sp->stx, sp->smap, &sp->A, st);
    }
    if (!rc) sp->srow = ti, sp->scol = tj; /* kept for the scaled residual */
    else mbl_free(ti), mbl_free(tj);
    if (!rc) { /* the entries by row (a stable counting sort: rptr[r + 1] counts row r's, then places them) */
        for (int t = 0; t < nz; t++) sp->rptr[sp->srow[t] + 2]++;
        for (int r = 0; r < sp->nrow; r++) sp->rptr[r + 2] += sp->rptr[r + 1];
        for (int t = 0; t < nz; t++) {
            int k = sp->rptr[sp->srow[t] + 1]++;
            sp->rperm[k] = t, sp->rsrc[k] = sp->ssrc[t], sp->rcol[k] = sp->scol[t];
        }
    }
    return rc;
}

static void sparse_forget(opoint_subproblem *sp)
{
    mbla_klu_free(sp->lu);
    mbla_csc_free(sp->A);
    mbl_free(sp->ssrc), mbl_free(sp->smap), mbl_free(sp->stx);
    mbl_free(sp->srow), mbl_free(sp->scol);
    sp->srow = sp->scol = NULL;
    mbl_free(sp->rptr), mbl_free(sp->rperm), mbl_free(sp->rsrc), mbl_free(sp->rcol);
    sp->rptr = sp->rperm = sp->rsrc = sp->rcol = NULL;
    mbl_free(sp->eqr), mbl_free(sp->eqc), mbl_free(sp->eqw);
    sp->eqr = sp->eqc = sp->eqw = NULL;
    sp->eq_on = sp->eq_warm = sp->lu_fresh = 0;
    sp->lu = NULL;
    sp->A = NULL;
    sp->ssrc = sp->smap = NULL;
    sp->stx = NULL;
    sp->snz = sp->stepped = 0;
}

/* Solve J dx = -F (minimum-norm / least-squares) on the subproblem; dx has ncol entries. The
 * Jacobian values sp->jac are those of the current iterate (opoint_eval_jac). */
/* For a square subproblem whose rows are equations of motion and position constraints, the column
 * owning each row (the coordinate of an equation of motion, the multiplier of a constraint), as
 * mbla_klu_opts.saddle_cols wants it: 1 when every row has a selected owner, 0 otherwise. */
static int saddle_cols(const opoint_subproblem *sp, int *cols)
{
    const model_view *mv = &sp->mv;
    int q0 = model_blk0(sp->md, MBL_BLK_Q), l0 = model_blk0(sp->md, MBL_BLK_LAMBDA);
    for (int r = 0; r < sp->nrow; r++) {
        int row = sp->rows[r], c = -1;
        if (row >= mv->row0[MBL_ROW_EOM] && row < mv->row0[MBL_ROW_EOM + 1] && row - mv->row0[MBL_ROW_EOM] < mv->n)
            c = q0 + row - mv->row0[MBL_ROW_EOM];
        else if (row >= mv->row0[MBL_ROW_PHI] && row < mv->row0[MBL_ROW_PHI + 1] && row - mv->row0[MBL_ROW_PHI] < mv->m)
            c = l0 + row - mv->row0[MBL_ROW_PHI];
        if (c < 0 || sp->col_pos[c] < 0) return 0;
        cols[r] = sp->col_pos[c];
    }
    return 1;
}

/* A fresh KLU factorization of the subproblem's matrix: a saddle-point order for large ones;
 * an equilibrated matrix without KLU's own row scaling (la_klu_new_unscaled). */
static int klu_new(opoint_subproblem *sp, mbl_status *st)
{
    mbla_klu_opts ko;
    mbla_klu_opts_default(&ko);
    int *cols = NULL, n = sp->ncol;
    if (n >= OPOINT_SADDLE_MIN && sp->nrow == n && (cols = mbl_alloc_array((size_t)n + 1, sizeof *cols)) &&
        saddle_cols(sp, cols))
        ko.saddle = 1, ko.saddle_cols = cols;
    int rc = sp->eq_on ? la_klu_new_unscaled(sp->A, &ko, &sp->lu, st) : mbla_klu_new(sp->A, &ko, &sp->lu, st);
    mbl_free(cols);
    return rc;
}

/* solve 0: the square sparse path's factorization alone (dx untouched there; the rank-deficient
 * fallbacks still solve) */
static int newton_step(opoint_subproblem *sp, double *dx, int solve, mbl_status *st)
{
    int rc = 0;
    int m = sp->nrow, n = sp->ncol;
    int small = n <= OPOINT_DENSE_MAX && m <= OPOINT_DENSE_MAX;
    if (small && m != n) return opoint_dense_step(sp, dx, st);
    /* sparse: the pattern of the subproblem's Jacobian is fixed until the next opoint_sub_select, so it
     * is assembled, ordered and analysed once and refactored numerically at later steps */
    double *b = mbl_alloc_array((size_t)(m > n ? m : n) + 1, sizeof *b);
    if (!b) return mbl_error(st, MBL_ENOMEM, "out of memory");
    rc = sparse_pattern(sp, st);
    if (rc) {
        mbl_free(b);
        return rc;
    }
    if (sp->snz == sp->A->p[sp->ncol]) {
        /* one triplet per entry: mbla_csc_refill's 0 + value without its pass that zeroes them */
        for (int t = 0; t < sp->snz; t++) sp->A->x[sp->smap[t]] = 0.0 + (sp->stx[t] = sp->jac[sp->ssrc[t]]);
    } else {
        for (int t = 0; t < sp->snz; t++) sp->stx[t] = sp->jac[sp->ssrc[t]];
        mbla_csc_refill(sp->A, sp->snz, sp->smap, sp->stx);
    }
    sp->stepped = 1;
    for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]];
    sp->rank_last = -1;
    if (m == n) {
        /* KLU's pivot ratio (after its own row scaling; an equilibrated matrix's without it, its
         * rows' max-norms in [1/2, 2) already) decides rank deficiency. It is not
         * unit-free: rows (equations) and columns (coordinates, multipliers) carry different
         * units, and a stiff flexible pendulum has a raw ratio below 1e-12 at full rank. So a
         * matrix that fails the test is equilibrated with exact power-of-2 factors
         * (mbla_csc_equilibrate), refactored and tested again, and the later steps of the
         * subproblem are equilibrated from the start (warm factors): dx = diag(c) y with
         * diag(r) J diag(c) y = -diag(r) F. A matrix that passes raw is solved raw (the
         * iterates of every model that converged before stay bit for bit the same). */
        double rcond = 0;
        /* large systems (FE meshes: slopes beside lengths, stiffnesses 4 EI / h beside 6 EI / h^2)
         * are equilibrated from the first step: raw, KLU's threshold pivoting leaves the
         * fill-reducing order (flexible pendulum, n_p = 2000 per link: 77 times the predicted
         * fill, 4.5 s instead of 0.4 s) */
        for (int pass = (sp->eq_on || n >= OPOINT_EQ_FIRST_MIN) ? 1 : 0; pass < 2; pass++) {
            if (pass == 1) {
                la_csc_equilibrate_ws(sp->A, MBLA_EQUILIBRATE_MAXITER_DEFAULT, sp->eq_warm, sp->eqr, sp->eqc, sp->eqw);
                sp->eq_on = sp->eq_warm = 1;
                for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]] * sp->eqr[r];
            }
            /* KLU's row scaling on a raw matrix only (a factorization kept across opoint_sub_restart
             * returns to raw steps) */
            if (sp->lu) mbla_klu_set_row_scale(sp->lu, !sp->eq_on, NULL);
            rc = !sp->lu ? klu_new(sp, st) : sp->lu_fresh ? mbla_klu_factor(sp->lu, sp->A, st)
                                                           : mbla_klu_refactor(sp->lu, sp->A, st);
            sp->lu_fresh = 0;
            if (!rc) rc = mbla_klu_rcond(sp->lu, &rcond, st);
            if (!rc && rcond < OPOINT_KLU_RCOND_MIN) rc = MBL_ESINGULAR; /* rank deficient: minimum norm below */
            if (rc == MBL_ESINGULAR && pass == 0) continue; /* refactored (a fresh one if need be) equilibrated */
            if (rc) { /* a failed factorization is not reused */
                mbla_klu_free(sp->lu);
                sp->lu = NULL;
            }
            break;
        }
        if (!rc && solve && (rc = mbla_klu_solve(sp->lu, 1, b, n, st))) {
            mbla_klu_free(sp->lu);
            sp->lu = NULL;
        }
        if (!rc) {
            for (int c = 0; solve && c < n; c++) dx[c] = sp->eq_on ? sp->eqc[c] * b[c] : b[c];
            sp->rank_last = n;
        }
        if (rc == MBL_ESINGULAR && small) {
            rc = opoint_dense_step(sp, dx, st);
        } else if (rc == MBL_ESINGULAR) {
            /* rank-deficient: fall back to SPQR's minimum-norm solution of the unscaled system */
            mbla_csc_refill(sp->A, sp->snz, sp->smap, sp->stx);
            for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]];
            rc = mbla_spqr_solve(sp->A, -1.0, 1, b, m, dx, n, st);
        }
    } else {
        rc = mbla_spqr_solve(sp->A, -1.0, 1, b, m, dx, n, st);
    }
    mbl_free(b);
    return rc;
}

int opoint_newton_step(opoint_subproblem *sp, double *dx, mbl_status *st) { return newton_step(sp, dx, 1, st); }

int opoint_newton_factor(opoint_subproblem *sp, double *dx, mbl_status *st) { return newton_step(sp, dx, 0, st); }

int opoint_chord_step(opoint_subproblem *sp, double *dx, mbl_status *st)
{
    int n = sp->ncol;
    if (!sp->lu || sp->lu_fresh || sp->nrow != n)
        return mbl_error(st, MBL_EARG, "opoint_chord_step: no square factorization held");
    /* as opoint_newton_step's solve: the equilibration factors of that factorization, if any */
    for (int r = 0; r < n; r++) dx[r] = sp->eq_on ? -sp->F[sp->rows[r]] * sp->eqr[r] : -sp->F[sp->rows[r]];
    int rc = mbla_klu_solve(sp->lu, 1, dx, n, st);
    if (rc) return rc;
    if (sp->eq_on)
        for (int c = 0; c < n; c++) dx[c] *= sp->eqc[c];
    return 0;
}

/* v = J0^-1 v in place with the held factorization (its equilibration factors, if any) */
static int held_solve(opoint_subproblem *sp, double *v, mbl_status *st)
{
    int n = sp->ncol;
    if (sp->eq_on)
        for (int r = 0; r < n; r++) v[r] *= sp->eqr[r];
    int rc = mbla_klu_solve(sp->lu, 1, v, n, st);
    if (!rc && sp->eq_on)
        for (int c = 0; c < n; c++) v[c] *= sp->eqc[c];
    return rc;
}

int opoint_held_refine(opoint_subproblem *sp, const double *b, double *x, const double *xscale, double *res,
                       double dmax, mbl_status *st)
{
    int n = sp->ncol;
    if (!sp->A || !sp->lu || sp->lu_fresh || sp->nrow != n || sp->rank_last != n) return MBL_EARG;
    /* res = b - J x, J's entries copied as the step's matrix (opoint_scaled_residual_at_step's,
     * as opoint_newton_step leaves them) */
    const int *rptr = sp->rptr, *rperm = sp->rperm, *rsrc = sp->rsrc, *rcol = sp->rcol;
    const double *jac = sp->jac;
    double *stx = sp->stx;
    for (int r = 0; r < n; r++) { /* by row: each row's entries in the entries' order */
        double s = b[r];
        for (int k = rptr[r]; k < rptr[r + 1]; k++) s -= (stx[rperm[k]] = jac[rsrc[k]]) * x[rcol[k]];
        res[r] = s;
    }
    int rc = held_solve(sp, res, st);
    if (rc) return rc;
    /* the correction against the solution's scale: each |x_c| floored at xscale_c times the
     * largest max_c |x_c| / xscale_c (a zero entry counts against the others' scale) */
    double f = 0, d = 0;
    for (int c = 0; c < n; c++) x[c] += res[c], f = max_num(f, fabs(x[c]) / xscale[c]);
    for (int c = 0; c < n; c++) {
        double e = fabs(res[c]) / (fabs(x[c]) + f * xscale[c]);
        if (!(e == e)) return MBL_ENOCONV;
        d = max_num(d, e);
    }
    return d <= dmax ? 0 : MBL_ENOCONV;
}

/* Scale of unknown c of the subproblem: max(|x|, |x at the start|, 1). */
static double col_scale(const opoint_subproblem *sp, int c, double x, const double *xstart)
{
    (void)sp;
    return max_num(max_num(1.0, fabs(x)), fabs(xstart[c]));
}

/* max_r |F_r| / rowscale_r over the subproblem's rows (F by subproblem row when Frow is set, else
 * sp->F's model rows), the rows' scales summed already */
static double scaled_max_of(const opoint_subproblem *sp, const double *Frow, const double *rowscale, double rmax)
{
    double rs = 0, floor = 1e-13 * rmax;
    const int nrow = sp->nrow;
    if (!Frow) {
        const double *F = sp->F;
        const int *rows = sp->rows;
        for (int r = 0; r < nrow; r++) {
            double f = fabs(F[rows[r]]);
            if (!(f == f)) return INFINITY;
            rs = max_num(rs, rowscale[r] > floor ? f / rowscale[r] : f);
        }
        return rs;
    }
    for (int r = 0; r < nrow; r++) {
        double f = fabs(Frow[r]);
        if (!(f == f)) return INFINITY;
        /* a row whose Jacobian is rounding noise (1e-13 of the largest row) counts absolutely */
        rs = max_num(rs, rowscale[r] > floor ? f / rowscale[r] : f);
    }
    return rs;
}

static double scaled_max(const opoint_subproblem *sp, const double *Frow, const double *rowscale)
{
    double rmax = 0;
    for (int r = 0; r < sp->nrow; r++) rmax = max_num(rmax, rowscale[r]);
    return scaled_max_of(sp, Frow, rowscale, rmax);
}

/* rowscale_r = sum over row r's entries of |v_t| scale_c (v by entry: vt, else J's values through
 * the sources), in the entries' order, and the largest of them */
static double row_scales(const opoint_subproblem *sp, const double *vt, const double *colscale, double *rowscale)
{
    const int *rptr = sp->rptr, *rcol = sp->rcol;
    double rmax = 0;
    if (vt) {
        const int *rperm = sp->rperm;
        for (int r = 0; r < sp->nrow; r++) {
            double s = 0;
            for (int k = rptr[r]; k < rptr[r + 1]; k++) s += fabs(vt[rperm[k]]) * colscale[rcol[k]];
            rowscale[r] = s, rmax = max_num(rmax, s);
        }
    } else {
        const int *rsrc = sp->rsrc;
        const double *jac = sp->jac;
        for (int r = 0; r < sp->nrow; r++) {
            double s = 0;
            for (int k = rptr[r]; k < rptr[r + 1]; k++) s += fabs(jac[rsrc[k]]) * colscale[rcol[k]];
            rowscale[r] = s, rmax = max_num(rmax, s);
        }
    }
    return rmax;
}

/* The scaled residual max_i |F_i| / s_i with s_i = sum_c |dF_i/dx_c| scale_c (the Jacobian row
 * norm weighted by the unknowns' scales, at the current iterate: sp->jac must be current). It is
 * unit-free (an estimate of the relative Newton correction that row asks for) and does not depend
 * on the starting residual. A row whose Jacobian vanishes counts with its absolute residual. */
/* colscale_c = col_scale at the point's unknowns */
static void col_scales(opoint_subproblem *sp, const double *xstart, double *colscale)
{
    const mbl_model *md = sp->md;
    for (int c = 0; c < sp->ncol; c++)
        colscale[c] = col_scale(sp, c, sp->xp ? *sp->xp[c] : *opoint_unknown_ptr(md, sp->pt, sp->cols[c]), xstart);
}

/* opoint_scaled_residual with the entries vt (by pattern entry; NULL: sp->jac's), sp->A assembled */
static double scaled_residual_of(opoint_subproblem *sp, const double *vt, const double *xstart, double *rowscale,
                                 double *colscale)
{
    col_scales(sp, xstart, colscale);
    return scaled_max_of(sp, NULL, rowscale, row_scales(sp, vt, colscale, rowscale));
}

double opoint_scaled_residual(opoint_subproblem *sp, const double *xstart, double *rowscale, double *colscale)
{
    const model_view *mv = &sp->mv;
    /* the subproblem's entries (sparse_pattern's list, once assembled, by row: the same entries in
     * the same order, so the same sums, without the scan of the whole Jacobian) */
    if (sp->A) return scaled_residual_of(sp, NULL, xstart, rowscale, colscale);
    /* a subproblem the sparse Newton step will assemble: its pattern made now, once, for both */
    int small = sp->ncol <= OPOINT_DENSE_MAX && sp->nrow <= OPOINT_DENSE_MAX;
    if (!small) {
        if (!sparse_pattern(sp, NULL)) return scaled_residual_of(sp, NULL, xstart, rowscale, colscale);
        sparse_forget(sp); /* (out of memory: the scan below; the step reports it) */
    }
    col_scales(sp, xstart, colscale);
    for (int r = 0; r < sp->nrow; r++) rowscale[r] = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) rowscale[r] += fabs(sp->jac[p]) * colscale[c];
    }
    return scaled_max(sp, NULL, rowscale);
}

double opoint_scaled_residual_at_step(const opoint_subproblem *sp, const double *F0, const double *x0, double *rowscale,
                                      double *colscale)
{
    if (!sp->A || !sp->stepped) return INFINITY;
    for (int c = 0; c < sp->ncol; c++) colscale[c] = col_scale(sp, c, x0[c], x0);
    /* sp->stx[t] is the step's sp->jac[sp->ssrc[t]] (opoint_newton_step) */
    return scaled_max_of(sp, F0, rowscale, row_scales(sp, sp->stx, colscale, rowscale));
}

double opoint_scaled_residual_at_step_row(const opoint_subproblem *sp, const double *F0, const double *x0, int r)
{
    if (!sp->A || !sp->stepped || r < 0 || r >= sp->nrow) return 0.0;
    /* row_scales' sum for this row (the same terms in the same order: the same bits) */
    const int *rperm = sp->rperm, *rcol = sp->rcol;
    const double *vt = sp->stx;
    double s = 0;
    for (int k = sp->rptr[r]; k < sp->rptr[r + 1]; k++) {
        int c = rcol[k];
        s += fabs(vt[rperm[k]]) * col_scale(sp, c, x0[c], x0);
    }
    /* scaled_max_of's term for the row is f / s or (below its floor) f: at least the smaller */
    double f = fabs(F0[r]), q = f / s;
    return q < f ? q : f; /* s = 0: f (q infinite, or NaN for f = 0) */
}

/* Levenberg-Marquardt fallback when the Newton line search stalls away from a solution. Newton
 * iterates can be drawn to a point where the Jacobian J becomes singular while F and the gradient
 * J^T F of the merit ||F||^2 / 2 do not vanish (Powell's example; the 3:1 gear from least-squares
 * multipliers): the Newton steps grow without bound along the nearly null direction and no
 * fraction of them decreases ||F||. The step dx minimizing ||F + J dx||^2 + mu ||D dx||^2, with D
 * the Jacobian's column 2-norms (Marquardt's scaling: unit-free), turns toward steepest descent as
 * mu grows, so some mu decreases ||F|| unless J^T F = 0 (a local minimum of the residual norm). It
 * is dx = D^-1 y with y SPQR's least-squares solution of [J D^-1; sqrt(mu) I] y = [-F; 0] (unit
 * columns, so that SPQR's rank tolerance drops no column for its units), mu = 1e-6, 1e-5, ..., 1e8
 * until the actual decrease of ||F||^2 is at least LS_ARMIJO times the one the linear model
 * predicts. x0 holds the current unknowns (also set in the point), f2 = ||F(x0)||, and sp->F,
 * sp->jac are evaluated at x0. On return *accepted says whether the point moved; if so g2, ginf
 * are the new residual norms, else the point is x0 again (sp->F not current). */
#define LM_MU_MIN 1e-6
#define LM_MU_MAX 1e8
static int lm_step(opoint_subproblem *sp, const double *x0, double f2, double *g2, double *ginf, int *accepted,
                   mbl_status *st)
{
    const model_view *mv = &sp->mv; /* sp->xp: the unknowns' places (set by opoint_newton) */
    int m = sp->nrow, n = sp->ncol, nz = 0;
    *accepted = 0;
    for (int p = 0; p < mv->jac.nz; p++)
        if (sp->row_pos[mv->jac.row[p]] >= 0 && sp->col_pos[mv->jac.col[p]] >= 0) nz++;
    int *ti = mbl_alloc_array((size_t)(nz + n) + 1, sizeof *ti);
    int *tj = mbl_alloc_array((size_t)(nz + n) + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)(nz + n) + 1, sizeof *tx), *d = mbl_calloc((size_t)n + 1, sizeof *d);
    double *b = mbl_alloc_array((size_t)(m + n) + 1, sizeof *b), *F0 = mbl_alloc_array((size_t)m + 1, sizeof *F0);
    double *dx = mbl_alloc_array((size_t)n + 1, sizeof *dx), *lin = mbl_alloc_array((size_t)m + 1, sizeof *lin);
    int rc = 0;
    if (!ti || !tj || !tx || !d || !b || !F0 || !dx || !lin) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        nz = 0;
        for (int p = 0; p < mv->jac.nz; p++) {
            int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
            if (r < 0 || c < 0) continue;
            ti[nz] = r, tj[nz] = c, tx[nz++] = sp->jac[p];
            d[c] += sp->jac[p] * sp->jac[p];
        }
        for (int c = 0; c < n; c++) d[c] = d[c] > 0 && isfinite(d[c]) ? sqrt(d[c]) : 1.0;
        for (int p = 0; p < nz; p++) tx[p] /= d[tj[p]];
        for (int r = 0; r < m; r++) F0[r] = sp->F[sp->rows[r]];
    }
    for (double mu = LM_MU_MIN; !rc && !*accepted && mu <= LM_MU_MAX * 1.0001; mu *= 10) {
        for (int c = 0; c < n; c++) ti[nz + c] = m + c, tj[nz + c] = c, tx[nz + c] = sqrt(mu);
        for (int r = 0; r < m; r++) b[r] = -F0[r];
        for (int c = 0; c < n; c++) b[m + c] = 0;
        mbla_csc *A = NULL;
        rc = mbla_csc_from_triplets(m + n, n, nz + n, ti, tj, tx, NULL, &A, st);
        if (!rc) rc = mbla_spqr_solve(A, -1.0, 1, b, m + n, dx, n, st);
        mbla_csc_free(A);
        if (rc) break;
        for (int c = 0; c < n; c++) dx[c] /= d[c];
        /* predicted decrease of ||F||^2 by the linear model F + J dx */
        for (int r = 0; r < m; r++) lin[r] = F0[r];
        for (int p = 0; p < nz; p++) lin[ti[p]] += tx[p] * d[tj[p]] * dx[tj[p]];
        double l2 = 0;
        for (int r = 0; r < m; r++) l2 += lin[r] * lin[r];
        double pred = f2 * f2 - l2;
        if (!(pred > 0)) continue;
        for (int c = 0; c < n; c++) *sp->xp[c] = x0[c] + dx[c];
        mbl_status st2;
        if (!opoint_eval_F(sp, g2, ginf, &st2) && isfinite(*g2) && f2 * f2 - *g2 * *g2 >= LS_ARMIJO * pred) *accepted = 1;
    }
    if (!*accepted)
        for (int c = 0; c < n; c++) *sp->xp[c] = x0[c];
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(d), mbl_free(b), mbl_free(F0), mbl_free(dx), mbl_free(lin);
    return rc;
}

/* Chord steps (opoint_chord_step: the last Newton step's factorization of J_j, no Jacobian) in
 * place of Newton's where that converges fast: at an iterate x_k after a full Newton step that
 * contracted the scaled residual tenfold or more, or after a chord step, the scaled residual with
 * J_j's entries (rs_held: J_k's to about the steps since x_j) above the tolerance yet at most
 * OPOINT_CHORD_CONTRACT (theta) of the last. Chord steps from there contract by about theta each
 * (J_j differs from J_k by about those steps), so one is taken where OPOINT_CHORD_STEPS of them
 * would bring rs_held OPOINT_CHORD_MARGIN below the tolerance: the Jacobian and factorization of x_k
 * are saved (the iterate that passes the test is evaluated as before, its hundredfold decrease
 * measured from rs_held). At the N = 10^4 four-bar a chord step costs a residual evaluation and a
 * solve, about 20 M instructions, a Newton step about 90 M. */
#define OPOINT_CHORD_CONTRACT 1e-2
#define OPOINT_CHORD_MARGIN 1e-2
#define OPOINT_CHORD_STEPS 3
/* Only for subproblems of at least this order, where the Jacobian and its factorization cost
 * (the large models'); a chord step moves the solution at rounding level, and smaller ones keep
 * their iterates bit for bit (their printed spurious modes and zeros follow the last bits). */
#define OPOINT_CHORD_MIN 2000
static int chord_due(opoint_subproblem *sp, const double *xs, double rs_prev, double tol, double *rowscale,
                     double *colscale, double *rs_held)
{
    *rs_held = scaled_residual_of(sp, sp->stx, xs, rowscale, colscale);
    double theta = *rs_held / rs_prev;
    return *rs_held > tol && theta <= OPOINT_CHORD_CONTRACT &&
           *rs_held * pow(theta, OPOINT_CHORD_STEPS) <= OPOINT_CHORD_MARGIN * tol;
}

/* The chord step from the point (its unknowns copied into x0; f2, finf: its residual norms), kept
 * whole where it decreases the residual norm as the line search asks (*taken; f2, finf then the new
 * point's). Else the point is x0 again with its residual evaluated there (sp->F, sp->syms current). */
static int try_chord(opoint_subproblem *sp, double *x0, double *dx, double *f2, double *finf, int *taken,
                     mbl_status *st)
{
    double *const *xp = sp->xp;
    double g2, ginf;
    *taken = 0;
    for (int c = 0; c < sp->ncol; c++) x0[c] = *xp[c];
    int rc = opoint_chord_step(sp, dx, st);
    if (rc) return rc;
    for (int c = 0; c < sp->ncol; c++) *xp[c] = x0[c] + dx[c];
    mbl_status st2;
    if (!opoint_eval_F(sp, &g2, &ginf, &st2) && g2 <= (1.0 - LS_ARMIJO) * *f2) {
        *taken = 1, *f2 = g2, *finf = ginf;
        return 0;
    }
    for (int c = 0; c < sp->ncol; c++) *xp[c] = x0[c];
    return opoint_eval_F(sp, f2, finf, st);
}

/* After a step alpha dx from x0: *rounding when it left every unknown unchanged to rounding,
 * *small (unless linear) when it was at most step_tol of each unknown's scale; the step counted in
 * the rate. */
static void step_flags(const opoint_subproblem *sp, const double *x0, const double *dx, double alpha,
                       const double *xs, int linear, int *rounding, int *small, opoint_newton_rate *rate)
{
    int n = sp->ncol;
    *rounding = 1;
    for (int c = 0; *rounding && c < n; c++)
        if (fabs(alpha * dx[c]) > 16 * DBL_EPSILON * fabs(x0[c] + alpha * dx[c])) *rounding = 0;
    *small = !linear;
    for (int c = 0; *small && c < n; c++)
        if (fabs(alpha * dx[c]) > sp->opt->step_tol * col_scale(sp, c, x0[c], xs)) *small = 0;
    opoint_rate_step(rate, dx, alpha, n);
}

/* Newton / Gauss-Newton with line search. `what` names the problem in messages. linear = 1
 * for problems linear in the unknowns (one step, a polishing step, then a check).
 *
 * Converged when the scaled residual (scaled_residual) is at most opt->tol AND either the
 * max-norm residual is at most opt->abs_tol, or the last Newton step left every unknown unchanged
 * to rounding (|dx_c| <= 16 eps |x_c|), or the last full Newton step reduced the scaled residual
 * at least a hundredfold (superlinear convergence: a regular root, where the scaled residual
 * measures the error). The scaled test alone would accept a point near a degenerate root
 * (singular Jacobian there, Newton converging only linearly) with a residual that is huge in
 * absolute terms. When the line search can make no progress (the rounding floor
 * of the residual), the point is accepted if the scaled residual is at most opt->tol, or at most
 * 1e4 * opt->tol with a Newton step at most opt->step_tol times each unknown's scale; otherwise
 * a Levenberg-Marquardt step is taken (lm_step) and Newton resumes, and if that step cannot
 * decrease the residual norm either, it fails. Where Newton converges fast already, a chord step
 * (chord_due, try_chord) takes the place of an iterate's Jacobian and factorization.
 *
 * A large solve (OPOINT_CHORD_MIN unknowns; not the corrector, whose many short solves would each
 * make it) evaluates the subproblem's rows alone (rows_view_make),
 * and the Jacobian's entries in them (opoint_eval_jac_rows) but after a chord step, where the
 * iterate is the solution as a rule (its Jacobian handed on whole, opoint_keep_jac).
 *
 * With par->corrector (the corrector of the continuation, homotopy.c) it converges when the scaled
 * residual is at most par->tol, fails after par->max_iter iterations and, where the line search
 * stalls, fails at once (the continuation shortens its step instead). out says how it ended. */
int opoint_newton(opoint_subproblem *sp, const char *what, int linear, const opoint_newton_par *par,
                  opoint_newton_out *out, mbl_status *st)
{
    const mbl_opoint_options *opt = sp->opt;
    int corrector = par->corrector;
    double tol = corrector ? par->tol : opt->tol;
    out->fail = OPOINT_NEWTON_OK;
    out->damped = 0;
    int n = sp->ncol;
    double *dx = mbl_alloc_array((size_t)n + 1, sizeof *dx), *x0 = mbl_alloc_array((size_t)n + 1, sizeof *x0);
    double *xs = mbl_alloc_array((size_t)n + 1, sizeof *xs);
    double *rowscale = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *rowscale);
    double *colscale = mbl_alloc_array((size_t)n + 1, sizeof *colscale);
    /* the unknowns' places in the point, found once (not per unknown and iterate), unless the caller
     * set them (a sweep's warm points) */
    double **xl = sp->xp ? NULL : mbl_alloc_array((size_t)n + 1, sizeof *xl);
    if (!dx || !x0 || !xs || !rowscale || !colscale || (!sp->xp && !xl)) {
        mbl_free(dx), mbl_free(x0), mbl_free(xs), mbl_free(rowscale), mbl_free(colscale), mbl_free(xl);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (xl) {
        for (int c = 0; c < n; c++) xl[c] = opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]);
        sp->xp = xl; /* for the scaled residual and the Levenberg-Marquardt step too; unset below */
    }
    double *const *xp = sp->xp;
    for (int c = 0; c < n; c++) xs[c] = *xp[c];
    double f2, finf, rs = INFINITY, rs_prev = INFINITY, alpha_last = 0;
    if (!linear && !corrector && n >= OPOINT_CHORD_MIN) rows_view_make(sp); /* (see the comment above) */
    int rc = opoint_eval_F(sp, &f2, &finf, st);
    int it = 0, rounding = 0, step_small = 0, chord_ok = 0, after_chord = 0;
    opoint_newton_rate rate = {0, 0, 0};
    while (!rc) {
        double rs_held;
        int taken = 0;
        if (chord_ok && chord_due(sp, xs, rs_prev, opt->tol, rowscale, colscale, &rs_held)) {
            rc = core_progress(st, "point", it, 0);
            if (!rc) rc = try_chord(sp, x0, dx, &f2, &finf, &taken, st);
            if (rc) break;
        }
        chord_ok = taken;
        if (taken) { /* an iteration of its own: the next iterate tested as after a full step */
            it++, rs_prev = rs_held, alpha_last = 1.0, after_chord = 1;
            step_flags(sp, x0, dx, 1.0, xs, linear, &rounding, &step_small, &rate);
            continue;
        }
        rc = after_chord ? opoint_eval_jac(sp, st) : opoint_eval_jac_rows(sp, st);
        after_chord = 0;
        if (!rc) rc = core_progress(st, "point", it, 0); /* one report per Newton iteration */
        if (rc) break;
        rs = opoint_scaled_residual(sp, xs, rowscale, colscale);
        if (linear && it >= 2) break;
        int superlinear = it > 0 && alpha_last == 1.0 && rs <= 1e-2 * rs_prev;
        int fast = it > 0 && alpha_last == 1.0 && rs <= 0.1 * rs_prev; /* chord steps may follow this step */
        if (corrector && rs <= tol) break;
        if (!corrector && rs <= opt->tol && (finf <= opt->abs_tol || rounding || superlinear)) break;
        /* the rounding floor reached while the line search still takes steps (rounding noise can
         * decrease ||F||): nearly converged, a negligible step, and the scaled residual no longer
         * decreasing (a large model's floor: the N = 2000 four-bar stalls at 1.5e-12). A degenerate
         * root, where Newton converges only linearly with the scaled residual still falling, is
         * not taken for it. */
        if (!corrector && step_small && rs <= 1e4 * opt->tol && rs >= 0.9 * rs_prev) break;
        if (it >= (corrector ? par->max_iter : opt->max_iter)) {
            out->fail = rs <= tol ? OPOINT_NEWTON_DEGENERATE : OPOINT_NEWTON_MAXITER;
            rc = mbl_error(st, MBL_ENOCONV,
                           "%s did not converge in %d iterations (residual %.3g, scaled residual %.3g%s)", what, it,
                           finf, rs,
                           rs <= opt->tol ? "; Newton converges only linearly: a degenerate solution, singular "
                                            "Jacobian there"
                                          : "");
            break;
        }
        rc = opoint_newton_step(sp, dx, st);
        if (rc) break;
        it++;
        for (int c = 0; c < n; c++) x0[c] = *xp[c];
        double alpha = 1.0, g2 = f2, ginf = finf;
        int accepted = 0;
        for (int h = 0; h <= LS_MAX_HALVINGS; h++) {
            for (int c = 0; c < n; c++) *xp[c] = x0[c] + alpha * dx[c];
            mbl_status st2;
            int erc = opoint_eval_F(sp, &g2, &ginf, &st2);
            if (!erc && g2 <= (1.0 - LS_ARMIJO * alpha) * f2) {
                accepted = 1;
                break;
            }
            if (linear && !erc) {
                accepted = 1;
                break;
            }
            alpha *= 0.5;
        }
        if (!accepted) {
            /* no decrease: at the rounding floor of the residual, a least-squares minimum, or stuck */
            for (int c = 0; c < n; c++) *xp[c] = x0[c];
            rc = opoint_eval_F(sp, &f2, &finf, st);
            if (!rc) rc = opoint_eval_jac_rows(sp, st);
            if (rc) break;
            rs = opoint_scaled_residual(sp, xs, rowscale, colscale);
            int small = rs <= 1e4 * opt->tol;
            for (int c = 0; small && c < n; c++)
                if (fabs(dx[c]) > opt->step_tol * col_scale(sp, c, x0[c], xs)) small = 0;
            /* rounding floor: the scaled residual is converged (an ill-conditioned Jacobian
             * amplifies the rounding of F into Newton steps above step_tol), or nearly so with
             * a negligible step */
            if (!corrector && (small || rs <= opt->tol)) break;
            out->fail = OPOINT_NEWTON_STALL;
            if (corrector) {
                rc = mbl_error(st, MBL_ENOCONV, "%s: the corrector stalled", what);
                break;
            }
            /* stalled away from a solution: a Levenberg-Marquardt step (lm_step), then Newton again */
            int moved = 0;
            rc = lm_step(sp, x0, f2, &g2, &ginf, &moved, st);
            if (rc) break;
            if (moved) {
                out->fail = OPOINT_NEWTON_OK;
                out->damped++;
                f2 = g2, finf = ginf, rs_prev = rs, alpha_last = 0, rounding = step_small = 0;
                rate.ds = 0, rate.run = 0; /* no rate across it */
                continue;
            }
            rc = mbl_error(st, MBL_ENOCONV,
                           "%s: no solution found near the initial guess (residual %.3g, scaled residual %.3g after "
                           "%d iterations; the line search made no progress, nor did Levenberg-Marquardt steps)",
                           what, finf, rs, it);
            break;
        }
        f2 = g2, finf = ginf, rs_prev = rs;
        if (alpha < 1.0) out->damped++;
        alpha_last = alpha;
        step_flags(sp, x0, dx, alpha, xs, linear, &rounding, &step_small, &rate);
        /* a full step of the square sparse path's factorization of full rank from an iterate whose
         * scaled residual fell tenfold or more (fast): a chord step may follow (chord_due) */
        chord_ok = fast && !corrector && !linear && alpha == 1.0 && n >= OPOINT_CHORD_MIN && sp->nrow == n &&
                   sp->A && sp->lu && sp->rank_last == n;
    }
    out->it = it, out->rs = rs, out->finf = finf;
    if (!rc || corrector) sp->pt->iterations += it;
    if (!rc && !corrector) {
        if (finf > sp->pt->residual) sp->pt->residual = finf;
        if (rs > sp->pt->scaled_residual) sp->pt->scaled_residual = rs;
        if (!linear && opoint_note_linear(sp->pt, what, it, &rate)) sp->linear_rate = 1;
        if (linear && rs > 1e4 * opt->tol && finf > opt->abs_tol)
            rc = mbl_error(st, MBL_ESINGULAR, "%s has no solution (residual %.3g, scaled residual %.3g): inconsistent equations",
                           what, finf, rs);
    }
    if (xl) sp->xp = NULL;
    rows_view_forget(sp); /* (its arrays, 16 MB at N = 10^4, not held through the linearization) */
    mbl_free(dx), mbl_free(x0), mbl_free(xs), mbl_free(rowscale), mbl_free(colscale), mbl_free(xl);
    return rc;
}

int opoint_sub_init(opoint_subproblem *sp, const mbl_model *md, mbl_point *pt, const mbl_opoint_options *opt)
{
    memset(sp, 0, sizeof *sp);
    sp->rank_last = -1;
    sp->md = md;
    model_view_get(md, &sp->mv);
    const model_view *mv = &sp->mv;
    sp->pt = pt;
    sp->opt = opt;
    sp->rows = mbl_alloc_array((size_t)mv->nF + 1, sizeof(int));
    sp->cols = mbl_alloc_array((size_t)mv->nunk + 1, sizeof(int));
    sp->row_pos = mbl_alloc_array((size_t)mv->nF + 1, sizeof(int));
    sp->col_pos = mbl_alloc_array((size_t)mv->nunk + 1, sizeof(int));
    sp->syms = mbl_calloc((size_t)mv->nsym + 1, sizeof(double));
    sp->work = mbl_alloc_array(mv->work_size + 1, sizeof(double));
    sp->F = mbl_alloc_array((size_t)mv->nF + 1, sizeof(double));
    sp->jac = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof(double));
    sp->jac_syms = mbl_alloc_array((size_t)mv->nsym + 1, sizeof(double));
    if (!sp->rows || !sp->cols || !sp->row_pos || !sp->col_pos || !sp->syms || !sp->work || !sp->F || !sp->jac ||
        !sp->jac_syms)
        return MBL_ENOMEM;
    return 0;
}

void opoint_sub_free(opoint_subproblem *sp)
{
    sparse_forget(sp);
    rows_view_forget(sp);
    mbl_free(sp->rows), mbl_free(sp->cols), mbl_free(sp->row_pos), mbl_free(sp->col_pos);
    mbl_free(sp->syms), mbl_free(sp->work), mbl_free(sp->F), mbl_free(sp->jac), mbl_free(sp->jac_syms);
    model_jac_memo_free(sp->load_memo);
    sp->load_memo = NULL;
}

/* Select row groups (bit mask over MBL_ROW_*) and unknown blocks (bit mask over MBL_BLK_*);
 * skip: per unknown column, 1 for those not to solve for (NULL: none). */
void opoint_sub_restart(opoint_subproblem *sp)
{
    if (sp->ncol >= OPOINT_SADDLE_MIN) { /* a saddle-point order is made from the values: anew */
        sparse_forget(sp);
    } else {
        sp->eq_on = sp->eq_warm = 0;
        sp->lu_fresh = sp->lu != NULL;
    }
    sp->rank_last = -1;
}

void opoint_sub_select(opoint_subproblem *sp, unsigned rowmask, unsigned colmask, const int *skip)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    sparse_forget(sp);
    rows_view_forget(sp);
    sp->nrow = sp->ncol = 0;
    sp->rank_last = -1; /* no Jacobian of this subproblem factored yet (a solve may take no step) */
    sp->rowmask = rowmask, sp->colmask = colmask;
    for (int r = 0; r < mv->nF; r++) sp->row_pos[r] = -1;
    for (int c = 0; c < mv->nunk; c++) sp->col_pos[c] = -1;
    for (int g = 0; g < MBL_NROWG; g++)
        if ((rowmask >> g) & 1u)
            for (int r = mv->row0[g]; r < mv->row0[g + 1]; r++) {
                sp->row_pos[r] = sp->nrow;
                sp->rows[sp->nrow++] = r;
            }
    for (int b = 0; b < MBL_NBLK; b++)
        if ((colmask >> b) & 1u)
            for (int c = model_blk0(md, b); c < model_blk0(md, b + 1); c++) {
                if (skip && skip[c]) continue;
                sp->col_pos[c] = sp->ncol;
                sp->cols[sp->ncol++] = c;
            }
}
