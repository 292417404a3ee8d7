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
    const mbl_opoint_options *opt;
    int rank_last;  /* rank of the last Jacobian (dense path), -1 if unknown */
    /* sparse path, kept from one Newton step to the next (reset by opoint_sub_select) */
    mbla_csc *A;
    mbla_klu *lu;
    int snz, *ssrc, *smap;
    double *stx;
    double *eqr, *eqc, *eqw; /* square sparse steps: equilibration factors (rows, columns), scratch */
    int eq_on;               /* the steps of this subproblem are equilibrated (see opoint_newton_step) */
    int eq_warm;             /* eqr, eqc hold the factors of the previous step */
} opoint_subproblem;

/* The unknown `col` (a column of the model's unknowns [vdot lambda mu v q der(X) Z X r]) in the point. */
double *opoint_unknown_ptr(const mbl_model *md, mbl_point *pt, int col);
/* Allocation of the work arrays (MBL_ENOMEM on failure; opoint_sub_free in either case). */
int opoint_sub_init(opoint_subproblem *sp, const mbl_model *md, mbl_point *pt, const mbl_opoint_options *opt);
void opoint_sub_free(opoint_subproblem *sp);
/* Select row groups (bit mask over MBL_ROW_*) and unknown blocks (bit mask over MBL_BLK_*);
 * skip: per unknown column, 1 for those not to solve for (NULL: none). */
void opoint_sub_select(opoint_subproblem *sp, unsigned rowmask, unsigned colmask, const int *skip);
/* The residual F at the point (the homotopy's H when sp->hom_F0 is set), its 2- and max-norms over
 * the subproblem's rows. */
int opoint_eval_F(opoint_subproblem *sp, double *norm2, double *norminf, mbl_status *st);
/* The Jacobian values at the point (the last opoint_eval_F's symbols). */
int opoint_eval_jac(opoint_subproblem *sp, mbl_status *st);
/* The minimum-norm / least-squares Newton step J dx = -F over the subproblem (ncol entries). */
int opoint_newton_step(opoint_subproblem *sp, double *dx, mbl_status *st);
/* Solve the subproblem from the point's current unknowns; `what` names it in messages, linear = 1
 * for problems linear in the unknowns. */
int opoint_solve(opoint_subproblem *sp, const char *what, int linear, mbl_status *st);

#endif
