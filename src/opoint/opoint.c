/* Operating points: equilibrium, a given point made consistent, steady motion.
 *
 * One solver serves all three: Newton (Gauss-Newton for non-square systems) on a chosen subset
 * of the residual rows F = [R; Phidd; nhd; Phid; nh; Phi] with respect to a chosen subset of the
 * unknowns [vdot lambda mu v q], with the exact Jacobian from the model's tape, minimum-norm
 * steps (so rank-deficient constraint Jacobians give minimum-norm multipliers and minimum-norm
 * position corrections) and a backtracking line search on the residual norm.
 * Small systems use a dense SVD (minimum-norm least squares); large ones a sparse LU (KLU) when
 * square, else SPQR's minimum-norm / least-squares solve. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/la.h"
#include "model/model_view.h"

/* Largest number of unknowns solved with the dense SVD. */
#define OPOINT_DENSE_MAX 600
/* Square sparse Newton matrices of at least this order are equilibrated from the first step. */
#define OPOINT_EQ_FIRST_MIN 2000

/* A square Newton matrix whose KLU pivot ratio (klu_rcond) is below this is treated as rank
 * deficient and solved for the minimum-norm step instead. */
#define OPOINT_KLU_RCOND_MIN 1e-12
/* Backtracking line search: sufficient decrease and the largest number of halvings. */
#define LS_ARMIJO 1e-4
#define LS_MAX_HALVINGS 40

void mbl_opoint_options_default(mbl_opoint_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->at = -1;
    opt->max_iter = 100;
    opt->tol = 1e-12;
    opt->abs_tol = 1e-12;
    opt->step_tol = 1e-12;
    opt->rank_tol = 1e-9;
    opt->move_note = 0.5;
}

void mbl_point_free(mbl_point *p)
{
    if (!p) return;
    mbl_free(p->q);
    mbl_free(p->v);
    mbl_free(p->vdot);
    mbl_free(p->lambda);
    mbl_free(p->mu);
    mbl_free(p->r);
    mbl_free(p->X);
    mbl_free(p->Xdot);
    mbl_free(p->Z);
    mbl_free(p);
}

static mbl_point *point_new(const mbl_model *md)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_point *p = mbl_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = mv->n;
    p->m = mv->m;
    p->k = mv->k;
    p->nr = mv->nr;
    p->q = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->v = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->vdot = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->lambda = mbl_calloc((size_t)mv->m + 1, sizeof(double));
    p->mu = mbl_calloc((size_t)mv->k + 1, sizeof(double));
    p->r = mbl_calloc((size_t)mv->nr + 1, sizeof(double));
    p->nX = mv->nX;
    p->nZ = mv->nZ;
    p->X = mbl_calloc((size_t)mv->nX + 1, sizeof(double));
    p->Xdot = mbl_calloc((size_t)mv->nX + 1, sizeof(double));
    p->Z = mbl_calloc((size_t)mv->nZ + 1, sizeof(double));
    if (!p->q || !p->v || !p->vdot || !p->lambda || !p->mu || !p->r || !p->X || !p->Xdot || !p->Z) {
        mbl_point_free(p);
        return NULL;
    }
    return p;
}

/* The solver's view of a subproblem. */
typedef struct subproblem {
    const mbl_model *md;
    model_view mv;  /* the model's data (model_view_get) */
    mbl_point *pt;
    int nrow, ncol;
    int *rows;      /* residual rows used */
    int *cols;      /* unknown columns used */
    int *row_pos;   /* nF: position of a residual row in the subproblem, or -1 */
    int *col_pos;   /* nunk: position of an unknown in the subproblem, or -1 */
    double *syms, *work, *F, *jac;
    const mbl_opoint_options *opt;
    int rank_last;  /* rank of the last Jacobian (dense path), -1 if unknown */
    /* sparse path, kept from one Newton step to the next (reset by sub_select) */
    mbla_csc *A;
    mbla_klu *lu;
    int snz, *ssrc, *smap;
    double *stx;
    double *eqr, *eqc, *eqw; /* square sparse steps: equilibration factors (rows, columns), scratch */
    int eq_on;               /* the steps of this subproblem are equilibrated (see newton_step) */
    int eq_warm;             /* eqr, eqc hold the factors of the previous step */
} subproblem;

static double *unknown_ptr(const mbl_model *md, mbl_point *pt, int col)
{
    for (int b = 0; b < MBL_NBLK; b++) {
        int j0 = model_blk0(md, b), j1 = model_blk0(md, b + 1);
        if (col >= j0 && col < j1) {
            double *base[MBL_NBLK] = {pt->vdot, pt->lambda, pt->mu, pt->v, pt->q, pt->Xdot, pt->Z, pt->X, pt->r};
            return base[b] + (col - j0);
        }
    }
    return NULL;
}

static int eval_F(subproblem *sp, double *norm2, double *norminf, mbl_status *st)
{
    const mbl_model *md = sp->md;
    mbl_point *pt = sp->pt;
    model_fill_syms_pt(md, pt, sp->syms);
    int rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
    if (rc) return model_eval_error(md, sp->syms, "while looking for the operating point", st);
    double s2 = 0, si = 0;
    for (int i = 0; i < sp->nrow; i++) {
        double f = sp->F[sp->rows[i]];
        s2 += f * f;
        si = fmax(si, fabs(f));
    }
    *norm2 = sqrt(s2);
    *norminf = si;
    return 0;
}

/* Assemble the sparsity pattern of the subproblem's Jacobian once (triplet sources, CSC, map). */
static int sparse_pattern(subproblem *sp, mbl_status *st)
{
    if (sp->A) return 0;
    const model_view *mv = &sp->mv;
    int nz = 0;
    for (int p = 0; p < mv->jac.nz; p++)
        if (sp->row_pos[mv->jac.row[p]] >= 0 && sp->col_pos[mv->jac.col[p]] >= 0) nz++;
    int *ti = mbl_alloc_array((size_t)nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)nz + 1, sizeof *tj);
    sp->ssrc = mbl_alloc_array((size_t)nz + 1, sizeof *sp->ssrc);
    sp->smap = mbl_alloc_array((size_t)nz + 1, sizeof *sp->smap);
    sp->stx = mbl_calloc((size_t)nz + 1, sizeof *sp->stx);
    sp->eqr = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *sp->eqr);
    sp->eqc = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *sp->eqc);
    sp->eqw = mbl_alloc_array((size_t)(sp->nrow + sp->ncol) + 1, sizeof *sp->eqw);
    sp->eq_on = sp->eq_warm = 0;
    int rc = 0;
    if (!ti || !tj || !sp->ssrc || !sp->smap || !sp->stx || !sp->eqr || !sp->eqc || !sp->eqw)
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        nz = 0;
        for (int p = 0; p < mv->jac.nz; p++) {
            int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
            if (r >= 0 && c >= 0) ti[nz] = r, tj[nz] = c, sp->ssrc[nz++] = p;
        }
        sp->snz = nz;
        rc = mbla_csc_from_triplets(sp->nrow, sp->ncol, nz, ti, tj, sp->stx, sp->smap, &sp->A, st);
    }
    mbl_free(ti), mbl_free(tj);
    return rc;
}

static void sparse_forget(subproblem *sp)
{
    mbla_klu_free(sp->lu);
    mbla_csc_free(sp->A);
    mbl_free(sp->ssrc), mbl_free(sp->smap), mbl_free(sp->stx);
    mbl_free(sp->eqr), mbl_free(sp->eqc), mbl_free(sp->eqw);
    sp->eqr = sp->eqc = sp->eqw = NULL;
    sp->eq_on = sp->eq_warm = 0;
    sp->lu = NULL;
    sp->A = NULL;
    sp->ssrc = sp->smap = NULL;
    sp->stx = NULL;
    sp->snz = 0;
}

/* Dense minimum-norm least-squares step (rank-revealing SVD: singular values below rank_tol
 * times the largest count as zero). LAPACK's dgelsd (mbla_lstsq) forms neither singular-vector
 * set: the first step of a 96-link chain's equilibrium (the least-squares multipliers) spent half
 * the run in dgesvd's vectors. */
static int dense_step(subproblem *sp, double *dx, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    int m = sp->nrow, n = sp->ncol, mx = m > n ? m : n, rank = 0;
    double *J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J);
    double *b = mbl_alloc_array((size_t)mx + 1, sizeof *b);
    if (!J || !b) {
        mbl_free(J), mbl_free(b);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) J[r + (size_t)c * m] = sp->jac[p];
    }
    for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]];
    int rc = mbla_lstsq(m, n, 1, J, m > 0 ? m : 1, b, mx > 0 ? mx : 1, sp->opt->rank_tol, &rank, st);
    if (!rc) {
        sp->rank_last = rank;
        for (int c = 0; c < n; c++) dx[c] = b[c];
    }
    mbl_free(J), mbl_free(b);
    return rc;
}

/* Solve J dx = -F (minimum-norm / least-squares) on the subproblem; dx has ncol entries. The
 * Jacobian values sp->jac are those of the current iterate (eval_jac). */
static int newton_step(subproblem *sp, double *dx, mbl_status *st)
{
    int rc = 0;
    int m = sp->nrow, n = sp->ncol;
    int small = n <= OPOINT_DENSE_MAX && m <= OPOINT_DENSE_MAX;
    if (small && m != n) return dense_step(sp, dx, st);
    /* sparse: the pattern of the subproblem's Jacobian is fixed until the next sub_select, so it
     * is assembled, ordered and analysed once and refactored numerically at later steps */
    double *b = mbl_alloc_array((size_t)(m > n ? m : n) + 1, sizeof *b);
    if (!b) return mbl_error(st, MBL_ENOMEM, "out of memory");
    rc = sparse_pattern(sp, st);
    if (rc) {
        mbl_free(b);
        return rc;
    }
    for (int t = 0; t < sp->snz; t++) sp->stx[t] = sp->jac[sp->ssrc[t]];
    mbla_csc_refill(sp->A, sp->snz, sp->smap, sp->stx);
    for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]];
    sp->rank_last = -1;
    if (m == n) {
        /* KLU's pivot ratio (after its own row scaling) decides rank deficiency. It is not
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
                mbla_csc_equilibrate(sp->A, MBLA_EQUILIBRATE_MAXITER_DEFAULT, sp->eq_warm, sp->eqr, sp->eqc, sp->eqw,
                                     NULL);
                sp->eq_on = sp->eq_warm = 1;
                for (int r = 0; r < m; r++) b[r] = -sp->F[sp->rows[r]] * sp->eqr[r];
            }
            rc = sp->lu ? mbla_klu_refactor(sp->lu, sp->A, st) : mbla_klu_new(sp->A, NULL, &sp->lu, st);
            if (!rc) rc = mbla_klu_rcond(sp->lu, &rcond, st);
            if (!rc && rcond < OPOINT_KLU_RCOND_MIN) rc = MBL_ESINGULAR; /* rank deficient: minimum norm below */
            if (rc == MBL_ESINGULAR && pass == 0) continue; /* refactored (a fresh one if need be) equilibrated */
            if (rc) { /* a failed factorization is not reused */
                mbla_klu_free(sp->lu);
                sp->lu = NULL;
            }
            break;
        }
        if (!rc && (rc = mbla_klu_solve(sp->lu, 1, b, n, st))) {
            mbla_klu_free(sp->lu);
            sp->lu = NULL;
        }
        if (!rc) {
            for (int c = 0; c < n; c++) dx[c] = sp->eq_on ? sp->eqc[c] * b[c] : b[c];
            sp->rank_last = n;
        }
        if (rc == MBL_ESINGULAR && small) {
            rc = dense_step(sp, dx, st);
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

static int eval_jac(subproblem *sp, mbl_status *st)
{
    int rc = model_eval_jac(sp->md, sp->syms, sp->jac, sp->work, st);
    if (rc) return model_eval_error(sp->md, sp->syms, "while looking for the operating point", st);
    return 0;
}

/* Scale of unknown c of the subproblem: max(|x|, |x at the start|, 1). */
static double col_scale(const subproblem *sp, int c, double x, const double *xstart)
{
    (void)sp;
    return fmax(1.0, fmax(fabs(x), fabs(xstart[c])));
}

/* The scaled residual max_i |F_i| / s_i with s_i = sum_c |dF_i/dx_c| scale_c (the Jacobian row
 * norm weighted by the unknowns' scales, at the current iterate: sp->jac must be current). It is
 * unit-free (an estimate of the relative Newton correction that row asks for) and does not depend
 * on the starting residual. A row whose Jacobian vanishes counts with its absolute residual. */
static double scaled_residual(subproblem *sp, const double *xstart, double *rowscale, double *colscale)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    for (int r = 0; r < sp->nrow; r++) rowscale[r] = 0;
    for (int c = 0; c < sp->ncol; c++) colscale[c] = col_scale(sp, c, *unknown_ptr(md, sp->pt, sp->cols[c]), xstart);
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) rowscale[r] += fabs(sp->jac[p]) * colscale[c];
    }
    double rs = 0, rmax = 0;
    for (int r = 0; r < sp->nrow; r++) rmax = fmax(rmax, rowscale[r]);
    for (int r = 0; r < sp->nrow; r++) {
        double f = fabs(sp->F[sp->rows[r]]);
        if (!(f == f)) return INFINITY;
        /* a row whose Jacobian is rounding noise (1e-13 of the largest row) counts absolutely */
        rs = fmax(rs, rowscale[r] > 1e-13 * rmax ? f / rowscale[r] : f);
    }
    return rs;
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
static int lm_step(subproblem *sp, const double *x0, double f2, double *g2, double *ginf, int *accepted,
                   mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
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
        for (int c = 0; c < n; c++) *unknown_ptr(md, sp->pt, sp->cols[c]) = x0[c] + dx[c];
        mbl_status st2;
        if (!eval_F(sp, g2, ginf, &st2) && isfinite(*g2) && f2 * f2 - *g2 * *g2 >= LS_ARMIJO * pred) *accepted = 1;
    }
    if (!*accepted)
        for (int c = 0; c < n; c++) *unknown_ptr(md, sp->pt, sp->cols[c]) = x0[c];
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(d), mbl_free(b), mbl_free(F0), mbl_free(dx), mbl_free(lin);
    return rc;
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
 * decrease the residual norm either, it fails. */
static int solve(subproblem *sp, const char *what, int linear, mbl_status *st)
{
    const mbl_opoint_options *opt = sp->opt;
    int n = sp->ncol;
    double *dx = mbl_alloc_array((size_t)n + 1, sizeof *dx), *x0 = mbl_alloc_array((size_t)n + 1, sizeof *x0);
    double *xs = mbl_alloc_array((size_t)n + 1, sizeof *xs);
    double *rowscale = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *rowscale);
    double *colscale = mbl_alloc_array((size_t)n + 1, sizeof *colscale);
    if (!dx || !x0 || !xs || !rowscale || !colscale) {
        mbl_free(dx), mbl_free(x0), mbl_free(xs), mbl_free(rowscale), mbl_free(colscale);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int c = 0; c < n; c++) xs[c] = *unknown_ptr(sp->md, sp->pt, sp->cols[c]);
    double f2, finf, rs = INFINITY, rs_prev = INFINITY, alpha_last = 0;
    int rc = eval_F(sp, &f2, &finf, st);
    int it = 0, rounding = 0, step_small = 0;
    while (!rc) {
        rc = eval_jac(sp, st);
        if (rc) break;
        rs = scaled_residual(sp, xs, rowscale, colscale);
        if (linear && it >= 2) break;
        int superlinear = it > 0 && alpha_last == 1.0 && rs <= 1e-2 * rs_prev;
        if (rs <= opt->tol && (finf <= opt->abs_tol || rounding || superlinear)) break;
        /* the rounding floor reached while the line search still takes steps (rounding noise can
         * decrease ||F||): nearly converged, a negligible step, and the scaled residual no longer
         * decreasing (a large model's floor: the N = 2000 four-bar stalls at 1.5e-12). A degenerate
         * root, where Newton converges only linearly with the scaled residual still falling, is
         * not taken for it. */
        if (step_small && rs <= 1e4 * opt->tol && rs >= 0.9 * rs_prev) break;
        if (it >= opt->max_iter) {
            rc = mbl_error(st, MBL_ENOCONV,
                           "%s did not converge in %d iterations (residual %.3g, scaled residual %.3g%s)", what, it,
                           finf, rs,
                           rs <= opt->tol ? "; Newton converges only linearly: a degenerate solution, singular "
                                            "Jacobian there"
                                          : "");
            break;
        }
        rc = newton_step(sp, dx, st);
        if (rc) break;
        it++;
        for (int c = 0; c < n; c++) x0[c] = *unknown_ptr(sp->md, sp->pt, sp->cols[c]);
        double alpha = 1.0, g2 = f2, ginf = finf;
        int accepted = 0;
        for (int h = 0; h <= LS_MAX_HALVINGS; h++) {
            for (int c = 0; c < n; c++) *unknown_ptr(sp->md, sp->pt, sp->cols[c]) = x0[c] + alpha * dx[c];
            mbl_status st2;
            int erc = eval_F(sp, &g2, &ginf, &st2);
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
            for (int c = 0; c < n; c++) *unknown_ptr(sp->md, sp->pt, sp->cols[c]) = x0[c];
            rc = eval_F(sp, &f2, &finf, st);
            if (!rc) rc = eval_jac(sp, st);
            if (rc) break;
            rs = scaled_residual(sp, xs, rowscale, colscale);
            int small = rs <= 1e4 * opt->tol;
            for (int c = 0; small && c < n; c++)
                if (fabs(dx[c]) > opt->step_tol * col_scale(sp, c, x0[c], xs)) small = 0;
            /* rounding floor: the scaled residual is converged (an ill-conditioned Jacobian
             * amplifies the rounding of F into Newton steps above step_tol), or nearly so with
             * a negligible step */
            if (small || rs <= opt->tol) break;
            /* stalled away from a solution: a Levenberg-Marquardt step (lm_step), then Newton again */
            int moved = 0;
            rc = lm_step(sp, x0, f2, &g2, &ginf, &moved, st);
            if (rc) break;
            if (moved) {
                f2 = g2;
                finf = ginf;
                rs_prev = rs;
                alpha_last = 0;
                rounding = 0;
                step_small = 0;
                continue;
            }
            rc = mbl_error(st, MBL_ENOCONV,
                           "%s: no solution found near the initial guess (residual %.3g, scaled residual %.3g after "
                           "%d iterations; the line search made no progress, nor did Levenberg-Marquardt steps)",
                           what, finf, rs, it);
            break;
        }
        f2 = g2;
        finf = ginf;
        rs_prev = rs;
        alpha_last = alpha;
        rounding = 1;
        for (int c = 0; rounding && c < n; c++)
            if (fabs(alpha * dx[c]) > 16 * DBL_EPSILON * fabs(x0[c] + alpha * dx[c])) rounding = 0;
        step_small = !linear;
        for (int c = 0; step_small && c < n; c++)
            if (fabs(alpha * dx[c]) > opt->step_tol * col_scale(sp, c, x0[c], xs)) step_small = 0;
    }
    if (!rc) {
        sp->pt->iterations += it;
        if (finf > sp->pt->residual) sp->pt->residual = finf;
        if (rs > sp->pt->scaled_residual) sp->pt->scaled_residual = rs;
        if (linear && rs > 1e4 * opt->tol && finf > opt->abs_tol)
            rc = mbl_error(st, MBL_ESINGULAR, "%s has no solution (residual %.3g, scaled residual %.3g): inconsistent equations",
                           what, finf, rs);
    }
    mbl_free(dx), mbl_free(x0), mbl_free(xs), mbl_free(rowscale), mbl_free(colscale);
    return rc;
}

static int sub_init(subproblem *sp, const mbl_model *md, mbl_point *pt, const mbl_opoint_options *opt)
{
    memset(sp, 0, sizeof *sp);
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
    if (!sp->rows || !sp->cols || !sp->row_pos || !sp->col_pos || !sp->syms || !sp->work || !sp->F || !sp->jac)
        return MBL_ENOMEM;
    return 0;
}

static void sub_free(subproblem *sp)
{
    sparse_forget(sp);
    mbl_free(sp->rows), mbl_free(sp->cols), mbl_free(sp->row_pos), mbl_free(sp->col_pos);
    mbl_free(sp->syms), mbl_free(sp->work), mbl_free(sp->F), mbl_free(sp->jac);
}

/* Select row groups (bit mask over MBL_ROW_*) and unknown blocks (bit mask over MBL_BLK_*);
 * skip: per unknown column, 1 for those not to solve for (NULL: none). */
static void note(mbl_point *pt, const char *fmt, const char *a, double x);

/* Steady motion: mark in skip the coordinates whose Jacobian column over the steady equations'
 * rows (every row group but the velocity-level ones of the equilibrium) is zero at the starting
 * point, relative to the largest entry of those rows (1e-13), and say so in the notes. */
static int steady_hold_zero_columns(subproblem *sp, int *skip, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int n = mv->n, jq = model_blk0(md, MBL_BLK_Q);
    model_fill_syms_pt(md, sp->pt, sp->syms);
    int rc = eval_jac(sp, st);
    if (rc) return rc;
    static const int groups[] = {MBL_ROW_EOM, MBL_ROW_ODE, MBL_ROW_VAR, MBL_ROW_PHIDD, MBL_ROW_NHD,
                                 MBL_ROW_PHID, MBL_ROW_NH, MBL_ROW_PHI};
    double *cmax = mbl_calloc((size_t)n + 1, sizeof *cmax), amax = 0;
    if (!cmax) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p], in = 0;
        for (size_t g = 0; g < sizeof groups / sizeof *groups && !in; g++)
            in = r >= mv->row0[groups[g]] && r < mv->row0[groups[g] + 1];
        if (!in) continue;
        double a = fabs(sp->jac[p]);
        amax = fmax(amax, a);
        int c = mv->jac.col[p] - jq;
        if (c >= 0 && c < n) cmax[c] = fmax(cmax[c], a);
    }
    for (int i = 0; i < n; i++)
        if (!skip[jq + i] && cmax[i] <= 1e-13 * fmax(amax, 1.0)) {
            skip[jq + i] = 1;
            note(sp->pt, "coordinate %s held at its given value %.6g (its column in the steady-motion equations is "
                 "zero: nothing depends on it)", mv->qname[i], sp->pt->q[i]);
        }
    mbl_free(cmax);
    return 0;
}

static void sub_select(subproblem *sp, unsigned rowmask, unsigned colmask, const int *skip)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    sparse_forget(sp);
    sp->nrow = sp->ncol = 0;
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

#define RB(g) (1u << (g))

/* vdot, lambda, mu from the acceleration-level equations at the current q, v. */
static int solve_accelerations(subproblem *sp, mbl_status *st)
{
    sub_select(sp, RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHIDD) | RB(MBL_ROW_NHD),
               RB(MBL_BLK_A) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_XD) | RB(MBL_BLK_Z), NULL);
    int rc = solve(sp, "the accelerations and multipliers", 1, st);
    if (!rc && sp->rank_last >= 0 && sp->rank_last < sp->ncol) sp->pt->min_norm_multipliers = 1;
    return rc;
}

/* Rank of [Phi_q; A_nh] at the point (dense SVD for moderate sizes, SPQR otherwise). */
static int constraint_rank(subproblem *sp, int *rank, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int m = mv->m + mv->k, n = mv->n;
    *rank = 0;
    if (m == 0) return 0;
    model_fill_syms_pt(md, sp->pt, sp->syms);
    int rc = model_eval_jac(md, sp->syms, sp->jac, sp->work, st);
    if (rc) return model_eval_error(md, sp->syms, "while looking for the operating point", st);
    /* rows: Phi (dPhi/dq) and nh (dc/dv) */
    int jq = model_blk0(md, MBL_BLK_Q), jv = model_blk0(md, MBL_BLK_V);
    int r_phi = mv->row0[MBL_ROW_PHI], r_nh = mv->row0[MBL_ROW_NH];
    int nz = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if ((r >= r_phi && r < r_phi + mv->m && c >= jq && c < jq + n) ||
            (r >= r_nh && r < r_nh + mv->k && c >= jv && c < jv + n))
            nz++;
    }
    int *ti = mbl_alloc_array((size_t)nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)nz + 1, sizeof *tx);
    if (!ti || !tj || !tx) {
        mbl_free(ti), mbl_free(tj), mbl_free(tx);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    nz = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if (r >= r_phi && r < r_phi + mv->m && c >= jq && c < jq + n) ti[nz] = r - r_phi, tj[nz] = c - jq, tx[nz++] = sp->jac[p];
        else if (r >= r_nh && r < r_nh + mv->k && c >= jv && c < jv + n)
            ti[nz] = mv->m + r - r_nh, tj[nz] = c - jv, tx[nz++] = sp->jac[p];
    }
    /* every row to unit 2-norm: a constraint's units must not decide the rank */
    double *rn = mbl_calloc((size_t)m + 1, sizeof *rn);
    if (!rn) {
        mbl_free(ti), mbl_free(tj), mbl_free(tx);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int p = 0; p < nz; p++) rn[ti[p]] = hypot(rn[ti[p]], tx[p]);
    for (int p = 0; p < nz; p++)
        if (rn[ti[p]] > 0 && isfinite(rn[ti[p]])) tx[p] /= rn[ti[p]];
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
        mbla_csc *A = NULL;
        rc = mbla_csc_from_triplets(m, n, nz, ti, tj, tx, NULL, &A, st);
        if (!rc) rc = mbla_spqr_rank(A, -1.0, rank, NULL, st);
        mbla_csc_free(A);
    }
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

static void note(mbl_point *pt, const char *fmt, const char *a, double x)
{
    size_t len = strlen(pt->notes);
    if (len + 2 >= sizeof pt->notes) return;
    if (len) {
        snprintf(pt->notes + len, sizeof pt->notes - len, "; ");
        len += 2;
    }
    snprintf(pt->notes + len, sizeof pt->notes - len, fmt, a, x);
}

/* Initial multipliers: least squares on the equations of motion at the guess (q, v, vdot = 0),
 * lambda, mu minimizing ||R(q, v, 0, lambda, mu)|| (minimum-norm when [Phi_q; A] loses rank):
 * starting Newton from lambda = mu = 0 instead lets the first steps jump to another branch of
 * solutions. The equations are linear in the multipliers, so one minimum-norm least-squares step
 * (newton_step: dense SVD, or SPQR) from 0 gives them. */
static int initial_multipliers(subproblem *sp, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    if (mv->m + mv->k == 0) return 0;
    if (sp->opt->lambda && (sp->opt->mu || mv->k == 0)) { /* given by the caller */
        memcpy(sp->pt->lambda, sp->opt->lambda, (size_t)mv->m * sizeof(double));
        if (mv->k) memcpy(sp->pt->mu, sp->opt->mu, (size_t)mv->k * sizeof(double));
        return 0;
    }
    sub_select(sp, RB(MBL_ROW_EOM), RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU), NULL);
    double *dx = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *dx);
    if (!dx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double f2, finf;
    int rc = eval_F(sp, &f2, &finf, st);
    if (!rc) rc = eval_jac(sp, st);
    if (!rc) rc = newton_step(sp, dx, st);
    for (int c = 0; !rc && c < sp->ncol; c++) *unknown_ptr(md, sp->pt, sp->cols[c]) += dx[c];
    mbl_free(dx);
    if (rc) mbl_error_prefix(st, "the initial multipliers");
    return rc;
}

/* Name the coordinates that moved from the initial guess by more than opt->move_note *
 * max(1, |guess|): a solution far from the guess may be another branch than the one meant. */
static void note_far_moves(mbl_point *pt, const mbl_model *md, const double *guess, double move_note)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (!(move_note > 0)) return;
    char buf[512];
    size_t len = 0;
    int count = 0, shown = 0;
    buf[0] = '\0';
    for (int i = 0; i < mv->n; i++) {
        double d = pt->q[i] - guess[i];
        if (!(fabs(d) > move_note * fmax(1.0, fabs(guess[i])))) continue;
        count++;
        if (shown < 4 && len + 80 < sizeof buf) {
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s (%.4g -> %.4g)", shown ? ", " : "",
                                    mv->qname[i], guess[i], pt->q[i]);
            shown++;
        }
    }
    if (!count) return;
    if (count > shown) snprintf(buf + len, sizeof buf - len, " and %d more", count - shown);
    char msg[700];
    snprintf(msg, sizeof msg,
             "the point moved far from the initial guess: %s; another solution may lie nearer the guess", buf);
    size_t nl = strlen(pt->notes);
    if (nl + 3 >= sizeof pt->notes) return;
    snprintf(pt->notes + nl, sizeof pt->notes - nl, "%s%s", nl ? "; " : "", msg);
}

/* An equilibrium is at rest: velocities given in the file (a body's angular_velocity, a
 * coordinate's der(q)) are not used there; say so, naming the largest, since a user who gave a
 * spin and asked for an equilibrium gets the model at rest (at: given or steady keep them). */
static void note_unused_velocities(mbl_point *pt, const mbl_model *md, const double *v0)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int big = -1, count = 0;
    for (int i = 0; i < mv->n; i++)
        if (v0[i] != 0.0 && isfinite(v0[i])) {
            count++;
            if (big < 0 || fabs(v0[i]) > fabs(v0[big])) big = i;
        }
    if (big < 0) return;
    char msg[400];
    snprintf(msg, sizeof msg,
             "the velocities of the initial state are not used at an equilibrium (%d nonzero, largest der(%.100s) = "
             "%.4g); use at: given or at: steady for a point with motion",
             count, mv->qname[big], v0[big]);
    size_t nl = strlen(pt->notes);
    if (nl + 3 >= sizeof pt->notes) return;
    snprintf(pt->notes + nl, sizeof pt->notes - nl, "%s%s", nl ? "; " : "", msg);
}

/* linearize.at: given: the coordinates and velocities projected onto the constraints (notes of
 * what moved), then the accelerations and multipliers solved. */
static int solve_given(subproblem *sp, const double *v0, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, rc = 0;
    double *qgiven = mbl_alloc_array((size_t)n + 1, sizeof *qgiven);
    if (!qgiven) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    memcpy(qgiven, pt->q, (size_t)n * sizeof *qgiven);
    memcpy(pt->v, v0, (size_t)n * sizeof(double));
    memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
    if (mv->m) {
        sub_select(sp, RB(MBL_ROW_PHI), RB(MBL_BLK_Q), NULL);
        rc = solve(sp, "the projection of the coordinates onto the constraints", 0, st);
    }
    for (int i = 0; !rc && i < n; i++)
        if (fabs(pt->q[i] - qgiven[i]) > 1e-9 * fmax(1.0, fabs(qgiven[i])))
            note(pt, "coordinate %s moved by %.3g to satisfy the constraints", mv->qname[i], pt->q[i] - qgiven[i]);
    mbl_free(qgiven);
    if (!rc && mv->m + mv->k) {
        double *vg = mbl_alloc_array((size_t)n + 1, sizeof *vg);
        if (!vg) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            return rc;
        }
        memcpy(vg, pt->v, (size_t)n * sizeof *vg);
        sub_select(sp, RB(MBL_ROW_PHID) | RB(MBL_ROW_NH), RB(MBL_BLK_V), NULL);
        rc = solve(sp, "the projection of the velocities onto the velocity constraints", 1, st);
        for (int i = 0; !rc && i < n; i++)
            if (fabs(pt->v[i] - vg[i]) > 1e-9 * fmax(1.0, fabs(vg[i])))
                note(pt, "velocity der(%s) changed by %.3g to satisfy the velocity constraints", mv->qname[i],
                     pt->v[i] - vg[i]);
        mbl_free(vg);
    }
    if (!rc) rc = solve_accelerations(sp, st);
    return rc;
}

/* linearize.at: steady: the velocities kept, vdot = 0, the non-cyclic coordinates and the
 * multipliers solved, then the accelerations (a note when they are not small). */
static int solve_steady(subproblem *sp, const double *v0, const double *q_guess, double move_note, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, rc;
    /* keep v; vdot = 0; solve the non-cyclic coordinates and the multipliers */
    memcpy(pt->v, v0, (size_t)n * sizeof(double));
    memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
    rc = initial_multipliers(sp, st);
    if (rc) return rc;
    /* cyclic coordinates and ode states (no residual depends on them) keep their values */
    int *skip = mbl_calloc((size_t)mv->nunk + 1, sizeof *skip);
    if (!skip) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    int jq = model_blk0(md, MBL_BLK_Q), jx = model_blk0(md, MBL_BLK_X);
    for (int i = 0; i < n; i++) skip[jq + i] = mv->cyclic[i];
    for (int i = 0; i < mv->nX; i++) skip[jx + i] = 1;
    for (int p = 0; p < mv->jac.nz; p++)
        if (mv->jac.col[p] >= jx && mv->jac.col[p] < jx + mv->nX) skip[mv->jac.col[p]] = 0;
    /* and coordinates whose column in the steady equations is numerically zero at the start (a
     * spin angle of joint coordinates that enters only through sin^2 + cos^2): nothing fixes
     * them, and Newton steps in them would be driven by rounding */
    rc = steady_hold_zero_columns(sp, skip, st);
    if (rc) {
        mbl_free(skip);
        return rc;
    }
    sub_select(sp,
               RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHIDD) | RB(MBL_ROW_NHD) |
                   RB(MBL_ROW_PHID) | RB(MBL_ROW_NH) | RB(MBL_ROW_PHI),
               RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_X) | RB(MBL_BLK_Z), skip);
    mbl_free(skip);
    rc = solve(sp, "the steady motion", 0, st);
    if (!rc) note_far_moves(pt, md, q_guess, move_note);
    if (!rc) rc = solve_accelerations(sp, st);
    if (!rc) {
        double amax = 0;
        for (int i = 0; i < n; i++) amax = fmax(amax, fabs(pt->vdot[i]));
        if (amax > 1e-6) note(pt, "the steady motion has accelerations up to %.3g%s", "", amax);
    }
    return rc;
}

/* At the solved point: the model's own expressions defined there, and (with ode states, implicit
 * variables or speeds) the implicit equations and the speeds regular. */
static int check_solved_point(subproblem *sp, int rc, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    if (!rc) {
        /* the model's own expressions (energies, forces, constraints, outputs, variables), not
         * only their derivatives, must be defined at the point: log(x - 1) at x = 0 is an error */
        model_fill_syms_pt(md, pt, sp->syms);
        rc = model_check_domain(md, sp->syms, sp->work, st);
    }
    if (!rc && (mv->nX + mv->nZ > 0 || mv->nspd > 0)) {
        /* the implicit equations determine der(X) and Z there, the speeds' T is regular */
        size_t nus = (size_t)(3 * mv->nus + 2 * mv->nuvs);
        double *us = mbl_alloc_array(nus + (size_t)mv->usjac.nz + 1, sizeof *us);
        if (!us) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = model_eval_jac(md, sp->syms, sp->jac, sp->work, st);
        if (!rc) rc = model_eval_user_states(md, sp->syms, us, sp->work, st);
        if (!rc) rc = model_check_point(md, sp->jac, us + nus, st);
        mbl_free(us);
    }
    return rc;
}

int mbl_operating_point(const mbl_model *md, const mbl_opoint_options *opt_in, mbl_point **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_operating_point: out is NULL");
    *out = NULL;
    if (!md) return mbl_error(st, MBL_EARG, "mbl_operating_point: model is NULL");
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_opoint_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_opoint_options_default(&opt);
    mbl_point *pt = point_new(md);
    subproblem sp;
    int rc = pt ? sub_init(&sp, md, pt, &opt) : MBL_ENOMEM;
    if (rc) {
        if (pt) sub_free(&sp);
        mbl_point_free(pt);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    pt->at = opt.at >= 0 ? (mbl_at)opt.at : mv->at;
    pt->t = opt.has_t ? opt.t : mv->time;
    memcpy(pt->q, opt.q ? opt.q : mv->q0, (size_t)mv->n * sizeof(double));
    for (int g = 0; g < opt.nguess; g++) {
        int i = 0;
        while (i < mv->n && (!opt.guess[g].name || strcmp(opt.guess[g].name, mv->qname[i]))) i++;
        if (i == mv->n) {
            sub_free(&sp);
            mbl_point_free(pt);
            return mbl_error(st, MBL_EARG, "%s: no coordinate named '%s' (in the initial guess)", mv->file,
                             opt.guess[g].name ? opt.guess[g].name : "(null)");
        }
        pt->q[i] = opt.guess[g].value;
    }
    double *guess = NULL; /* the initial guess, for the notes */
    if (opt.nguess > 0 && !(guess = mbl_alloc_array((size_t)mv->n + 1, sizeof *guess))) rc = MBL_ENOMEM;
    if (guess) memcpy(guess, pt->q, (size_t)mv->n * sizeof *guess);
    const double *q_guess = guess ? guess : opt.q ? opt.q : mv->q0;
    const double *v0 = opt.v ? opt.v : mv->v0;
    memcpy(pt->r, mv->r0, (size_t)mv->nr * sizeof(double));

    switch (rc ? -1 : (int)pt->at) {
    case -1:
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        break;
    case MBL_AT_EQUILIBRIUM:
        /* v = vdot = 0; solve R(q, 0, 0, lambda, mu) = 0, Phi(q) = 0, c(q, 0) = 0 */
        rc = initial_multipliers(&sp, st);
        if (rc) break;
        /* with user ODE states: der(X) = 0 too, X and the implicit variables solved with q */
        memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
        sub_select(&sp, RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHI) | RB(MBL_ROW_NH),
                   RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_X) | RB(MBL_BLK_Z), NULL);
        rc = solve(&sp, "the equilibrium", 0, st);
        if (!rc && sp.rank_last >= 0 && sp.rank_last < sp.ncol) pt->min_norm_multipliers = 1;
        if (!rc) note_far_moves(pt, md, q_guess, opt.move_note);
        if (!rc) note_unused_velocities(pt, md, v0);
        break;
    case MBL_AT_GIVEN:
        rc = solve_given(&sp, v0, st);
        break;
    case MBL_AT_STEADY:
        rc = solve_steady(&sp, v0, q_guess, opt.move_note, st);
        break;
    default:
        rc = mbl_error(st, MBL_EARG, "unknown operating point kind %d", (int)pt->at);
    }
    if (!rc) rc = constraint_rank(&sp, &pt->rank_phi_q, st);
    if (!rc && pt->rank_phi_q < mv->m + mv->k) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d", pt->rank_phi_q);
        note(pt, "the constraint Jacobian has rank %s (rank deficiency %g): minimum-norm multipliers", buf,
             (double)(mv->m + mv->k - pt->rank_phi_q));
        pt->min_norm_multipliers = 1;
    }
    if (rc && st) mbl_error_prefix(st, "%s", mv->file);
    rc = check_solved_point(&sp, rc, st);
    sub_free(&sp);
    mbl_free(guess);
    if (rc) {
        mbl_point_free(pt);
        return rc;
    }
    *out = pt;
    return 0;
}
