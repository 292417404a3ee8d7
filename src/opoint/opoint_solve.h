/* Internal: the operating-point solver's view of a subproblem (rows and unknowns chosen by
 * opoint.c, solved by solve.c and homotopy.c). */
#ifndef MBLIN_OPOINT_SOLVE_H
#define MBLIN_OPOINT_SOLVE_H

#include "mblin/la.h"
#include "model/model_view.h"

/* Largest number of unknowns solved with the dense SVD. */
#define OPOINT_DENSE_MAX 600

/* The solver's view of a subproblem. */
typedef struct opoint_subproblem {
    const mbl_model *md;
    model_view mv;  /* the model's data (model_view_get) */
    mbl_point *pt;
    int nrow, ncol;
    int *rows;      /* residual rows used */
    int *cols;      /* unknown columns used */
    int *row_pos;   /* nF: position of a residual row in the subproblem, or -1 */
    int *col_pos;   /* nunk: position of an unknown in the subproblem, or -1 */
    double *syms, *work, *F, *jac;
    /* the symbols sp->jac was last evaluated at (valid when jac_ok): opoint_jac evaluates it again
     * only at other symbols, and mbl_operating_point hands it on to the point (mbl_point.jac_memo) */
    double *jac_syms;
    int jac_ok;
    int jac_part; /* with jac_ok: only the entries in the subproblem's rows are (opoint_jac_rows) */
    const model_jac_memo *jac_alt; /* NULL, or values at other symbols opoint_jac takes where they fit */
    model_jac_memo *load_memo;     /* the mass check's values (model_take_load_memo), freed with sp */
    const mbl_opoint_options *opt;
    int rank_last;  /* rank of the last Jacobian (dense path), -1 if unknown */
    int linear_rate; /* a solve ended at a linear rate (opoint_note_linear): a degenerate solution */
    /* sparse path, kept from one Newton step to the next (reset by opoint_sub_select) */
    mbla_csc *A;
    mbla_klu *lu;
    int snz, *ssrc, *smap;
    int stepped;             /* sp->stx holds a step's matrix (the pattern may be made before one) */
    int *srow, *scol;        /* per pattern entry: its subproblem row and column */
    /* the entries by row, each row's in the entries' order (so that a row's sums are the same):
     * row r's are rperm[rptr[r] .. rptr[r + 1] - 1], with their sources ssrc and columns scol */
    int *rptr, *rperm, *rsrc, *rcol;
    double *const *xp;       /* NULL, or per column the unknown in sp->pt (set by the caller that owns it) */
    double *stx;
    double *eqr, *eqc, *eqw; /* square sparse steps: equilibration factors (rows, columns), scratch */
    int eq_on;               /* the steps of this subproblem are equilibrated (see opoint_newton_step) */
    int eq_warm;             /* eqr, eqc hold the factors of the previous step */
    int lu_fresh;            /* the next step factors lu afresh (opoint_sub_restart) */
    /* the Newton homotopy (homotopy.c): when hom_F0 is set, opoint_eval_F returns
     * H = F - (1 - hom_t) hom_F0 on the subproblem's rows (hom_F0 indexed by subproblem row) */
    const double *hom_F0;
    double hom_t;
    int hard;        /* set by opoint_solve: Newton alone failed, needed damped steps or went far */
    int newton_only; /* opoint_solve without the continuation (opoint.c's first attempt) */
    /* evaluations that failed on the way (a step out of a data set's range, a sqrt of a negative):
     * how many since opoint_solve began, and the last one's message, for its failure message */
    long neval_fail;
    char eval_fail[320];
    /* and, when hom_C is set, + (1 - hom_t) hom_C[i] (x[hom_pc[i]] - hom_x0[hom_pc[i]]) on row i with
     * hom_pc[i] >= 0 (a spring to the start: arclength.c) */
    const double *hom_C, *hom_x0;
    const int *hom_pc;
    /* NULL, or a tape of the subproblem's rows alone in sp->rows' order (model_compile_F_rows: the
     * same values as the whole residual's), which opoint_eval_F then evaluates instead, into rows_F
     * (nrow) with rows_work (its work), leaving sp->F's other rows as they were (set by its owner,
     * the warm corrector; not with the homotopy) */
    const mblx_tape *rows_tape;
    double *rows_F, *rows_work;
    /* NULL, or the subproblem's rows as a view of tape_F (model_F_rows_view: the same values bit for
     * bit), made by opoint_eval_F where no rows_tape is set (then rows_tape, with rows_F its own and
     * rows_work sp->work) and freed by opoint_sub_select and opoint_sub_free; rows_view_tried: made or
     * refused for the rows selected */
    struct mblx__subtape *rows_view;
    int rows_view_tried;
    /* 1 where the rows' view is refused for a model with terms evaluated numerically that can
     * evaluate the subproblem's row groups alone (model_eval_sel_ok): opoint_eval_F and
     * opoint_eval_jac_rows then take model_eval_F_sel and model_eval_jac_sel with rowmask and
     * colmask, the groups and blocks of opoint_sub_select (made and forgotten with rows_view) */
    int rows_sel;
    unsigned rowmask, colmask;
    int rows_view_off; /* set by the warm corrector, which has its own rows_tape and hands sp->jac on */
    /* NULL, or a tape of the residual Jacobian's entries (jac.nz) and then the subproblem's rows
     * (nrow, in sp->rows' order), one evaluation for both (opoint_eval_F_jac): sp->jac then holds
     * jac.nz + nrow values, the rows' after the entries; fj_work its work (set by its owner, the
     * warm corrector, with rows_tape) */
    const mblx_tape *fj_tape;
    double *fj_work;
} opoint_subproblem;

/* A point of the model's sizes, zeroed (opoint.c). */
mbl_point *opoint_point_new(const mbl_model *md);
/* A point of opoint_point_new's made as that gives it again: zeroed, its arrays kept (a sweep's
 * warm corrector reuses the block's previous points). */
void opoint_point_clear(mbl_point *p);
/* At a solved point (rc 0): the model's own expressions defined there, validity notes, and (with
 * ode states, implicit variables or speeds) the implicit equations and the speeds regular; rc
 * returned unchanged when nonzero (opoint.c). */
int opoint_check_solved(opoint_subproblem *sp, int rc, mbl_status *st);
/* opoint_check_solved(sp, 0, st) where sp->syms are the point's already (model_fill_syms_pt's values) */
int opoint_check_solved_syms(opoint_subproblem *sp, mbl_status *st);
/* The unknown `col` (a column of the model's unknowns [vdot lambda mu v q der(X) Z X r]) in the point. */
double *opoint_unknown_ptr(const mbl_model *md, mbl_point *pt, int col);
/* Allocation of the work arrays (MBL_ENOMEM on failure; opoint_sub_free in either case). */
int opoint_sub_init(opoint_subproblem *sp, const mbl_model *md, mbl_point *pt, const mbl_opoint_options *opt);
void opoint_sub_free(opoint_subproblem *sp);
/* Select row groups (bit mask over MBL_ROW_*) and unknown blocks (bit mask over MBL_BLK_*);
 * skip: per unknown column, 1 for those not to solve for (NULL: none). */
void opoint_sub_select(opoint_subproblem *sp, unsigned rowmask, unsigned colmask, const int *skip);
/* The subproblem's columns from position *ci on, a run of consecutive unknowns at a time, as the
 * entries of the Jacobian's pattern that hold them (model_jac_col_range): 1 with [*p0, *p1) and *ci
 * past the run, 0 when none is left. Where the pattern is not sorted by column, one run of every
 * entry. Entries in the subproblem's columns come in the pattern's order, run after run, so
 *   for (int ci = 0, p0, p1; opoint_sub_col_run(sp, &ci, &p0, &p1);) for (int p = p0; p < p1; p++)
 * with the columns tested (col_pos) sees them as a scan of every entry would. */
int opoint_sub_col_run(const opoint_subproblem *sp, int *ci, int *p0, int *p1);
/* The subproblem as opoint_sub_select of the same rows and columns leaves it, its pattern and
 * sparse analysis kept where they do not depend on the values (no saddle-point order): the next
 * step factors afresh (mbla_klu_factor: the factors a new analysis would give), with the state
 * of a first step (no equilibration, no rank). A sweep's block start (src/opoint/warm.c). */
void opoint_sub_restart(opoint_subproblem *sp);
/* The residual F at the point (the homotopy's H when sp->hom_F0 is set), its 2- and max-norms over
 * the subproblem's rows. */
int opoint_eval_F(opoint_subproblem *sp, double *norm2, double *norminf, mbl_status *st);
/* opoint_eval_F and opoint_eval_jac at the point in one pass of sp->fj_tape (which must be set):
 * the residual on the subproblem's rows and the Jacobian's values, to rounding those of the two
 * (the same expressions, scheduled together); sp->jac marked as evaluated at the point's symbols.
 * Not with the homotopy. */
int opoint_eval_F_jac(opoint_subproblem *sp, double *norm2, double *norminf, mbl_status *st);
/* The Jacobian values at the point (the last opoint_eval_F's symbols). */
int opoint_eval_jac(opoint_subproblem *sp, mbl_status *st);
/* Tests only: 1 makes no rows_view (every evaluation of the whole residual and Jacobian, as before
 * it), 0 (the default) makes them. Not for use while another thread solves. */
void opoint_rows_view_disable(int on);
/* opoint_eval_jac of the entries in the subproblem's rows alone where sp->rows_view is made (the
 * others then as they were, sp->jac_part; opoint_jac makes them current too): Newton's own. */
int opoint_eval_jac_rows(opoint_subproblem *sp, mbl_status *st);
/* The same without the message (model_eval_jac's rc): sp->jac at the symbols sp->syms, evaluated
 * unless sp->jac holds the values there already (the same symbols, bit for bit). Every evaluation
 * into sp->jac goes through this. */
int opoint_jac(opoint_subproblem *sp, mbl_status *st);
/* A copy of sp->jac with the symbols it was evaluated at (NULL when sp->jac holds none, or out of
 * memory), to give back to sp when the point returns there (opoint_solve keeping Newton's solution
 * after the continuation): opoint_jac_restore copies it back and frees it (model_jac_memo_free
 * frees it unused). */
model_jac_memo *opoint_jac_save(const opoint_subproblem *sp);
void opoint_jac_restore(opoint_subproblem *sp, model_jac_memo *c);
/* At the solved point (sp->syms filled from it): sp->jac's values handed on to the point
 * (pt->jac_memo) when they are the values there; nothing is evaluated. */
void opoint_keep_jac(opoint_subproblem *sp);
/* The minimum-norm / least-squares Newton step J dx = -F over the subproblem (ncol entries). */
int opoint_newton_step(opoint_subproblem *sp, double *dx, mbl_status *st);
/* Its dense form (dense_step.c; sp->jac current): the raw matrix's minimum-norm least-squares
 * step, and where that is rank deficient with at least as many rows as unknowns, the
 * equilibrated matrix's when of full column rank; sp->rank_last set. */
int opoint_dense_step(opoint_subproblem *sp, double *dx, mbl_status *st);
/* opoint_newton_step's factorization without its solve where it factors (the square sparse path:
 * dx untouched, sp->rank_last set as there); elsewhere the whole step. The warm corrector's renewal
 * of its held factorization (opoint_warm_refresh). */
int opoint_newton_factor(opoint_subproblem *sp, double *dx, mbl_status *st);
/* A chord (simplified Newton) step: J0 dx = -F with J0 the matrix of the last square sparse
 * opoint_newton_step whose factorization the subproblem still holds (sp->lu, with its equilibration
 * factors), F the current residual; no Jacobian is evaluated or factored. MBL_EARG when no such
 * factorization is held. */
int opoint_chord_step(opoint_subproblem *sp, double *dx, mbl_status *st);
/* One step of iterative refinement of J x = b (b, x: ncol, by subproblem row and column) for the
 * current Jacobian J (sp->jac) with the held factorization J0 of an earlier one (as
 * opoint_chord_step's): x += J0^-1 (b - J x) from the x given. 0 when the correction is at most
 * dmax of the solution (max_c |dx_c| / (|x_c| + f xscale_c), f = max_c |x_c| / xscale_c, xscale:
 * ncol positive scales of the unknowns); MBL_ENOCONV when larger (x is then not a solution: the
 * caller factors J), MBL_EARG when no square factorization of full rank is held. res: ncol
 * scratch. Leaves J's entries as the step's matrix (sp->stx, opoint_scaled_residual_at_step). */
int opoint_held_refine(opoint_subproblem *sp, const double *b, double *x, const double *xscale, double *res,
                       double dmax, mbl_status *st);
/* Solve the subproblem from the point's current unknowns; `what` names it in messages, linear = 1
 * for problems linear in the unknowns. Newton with line search and Levenberg-Marquardt steps
 * (opoint_newton); where that fails away from a solution, or lands far from the start, the Newton
 * homotopy from the start (opoint_homotopy). */
int opoint_solve(opoint_subproblem *sp, const char *what, int linear, mbl_status *st);

/* How opoint_newton ended. */
enum { OPOINT_NEWTON_OK, OPOINT_NEWTON_MAXITER, OPOINT_NEWTON_DEGENERATE, OPOINT_NEWTON_STALL };
typedef struct opoint_newton_par {
    int corrector; /* 1: a corrector of the continuation (max_iter and tol below; no LM steps) */
    int max_iter;
    double tol;    /* scaled residual */
} opoint_newton_par;
typedef struct opoint_newton_out {
    int fail;      /* OPOINT_NEWTON_* */
    int it;        /* Newton iterations */
    int damped;    /* steps the line search shortened, and Levenberg-Marquardt steps */
    double rs;     /* scaled residual at the end */
    double finf;   /* max-norm residual at the end */
} opoint_newton_out;
/* The contraction of Newton's last steps (newton_rate.c; zeroed at the start and after a step of
 * another kind): ds the last step's max-norm, ratio its fraction of the one before, run how many
 * steps in a row contracted by a steady fraction well above 0 (a linear rate; at a regular solution
 * Newton's fractions fall towards 0; on a root of multiplicity m they are (m - 1) / m, 2/3 where the
 * potential is quartic). */
typedef struct opoint_newton_rate {
    double ds, ratio;
    int run;
} opoint_newton_rate;
/* One more step alpha dx (n entries). */
void opoint_rate_step(opoint_newton_rate *nr, const double *dx, double alpha, int n);
/* At a solution of `what` reached in `it` iterations at a linear rate (nr): a note on the point
 * saying so, with the error the rate leaves; the point's first such note only (a solve that starts
 * again from the projection, or polishes after the continuation, converges alike). 1 where the
 * rate was linear (noted now or before), else 0. */
int opoint_note_linear(mbl_point *pt, const char *what, int it, const opoint_newton_rate *nr);
/* text appended to the point's notes after a "; " (nothing where they are full) */
void opoint_note_add(mbl_point *pt, const char *text);
/* Newton / Gauss-Newton with line search (and Levenberg-Marquardt steps where it stalls). */
int opoint_newton(opoint_subproblem *sp, const char *what, int linear, const opoint_newton_par *par,
                  opoint_newton_out *out, mbl_status *st);
/* The scaled residual of the subproblem at the point (sp->F and sp->jac current), unknowns scaled
 * by max(1, |x|, |xstart|); rowscale (nrow) and colscale (ncol) are scratch. */
double opoint_scaled_residual(opoint_subproblem *sp, const double *xstart, double *rowscale, double *colscale);
/* The same at the iterate x0 of the last opoint_newton_step on the square sparse path (its matrix
 * still in the subproblem: sp->stx), with F0 (nrow, by subproblem row) the residual there: the
 * bits opoint_scaled_residual(sp, x0, ...) gave there. */
double opoint_scaled_residual_at_step(const opoint_subproblem *sp, const double *F0, const double *x0, double *rowscale,
                                      double *colscale);
/* A lower bound of opoint_scaled_residual_at_step(sp, F0, x0, ...) from its row r alone (a pass
 * over that row's entries): the row's term of the maximum, or where that term could be the
 * absolute residual (a row below the scales' floor, which depends on every row) the smaller of
 * the two; 0 without the square sparse step. */
double opoint_scaled_residual_at_step_row(const opoint_subproblem *sp, const double *F0, const double *x0, int r);
/* The Newton homotopy H(x, t) = F(x) - (1 - t) F(xs), followed from the start xs (t = 0) to t = 1
 * with a Newton corrector and step control; on success the point holds a solution of F = 0 near
 * the path's end (not yet polished). On failure (MBL_ENOCONV) `reason` says where the path ended. */
int opoint_homotopy(opoint_subproblem *sp, const double *xs, char *reason, size_t reason_size, mbl_status *st);

/* The same path followed in arc length through its turning points (arclength.c; dense, for
 * subproblems of at most OPOINT_DENSE_MAX unknowns). On success the point holds a solution of F = 0
 * to a scaled residual of 1e-8 (not yet polished). */
int opoint_arclength(opoint_subproblem *sp, const double *xs, char *reason, size_t reason_size, mbl_status *st);

#endif
