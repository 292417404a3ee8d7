/* Internal: the operating point's constraint QR (constraint_qr.c): the initial multipliers' least
 * squares and the rank test of the constraint Jacobian, one SPQR analysis shared by both. */
#ifndef MBLIN_OPOINT_CONSTRAINT_H
#define MBLIN_OPOINT_CONSTRAINT_H

#include "la/la_spqr.h"
#include "opoint_solve.h"

/* The initial multipliers' least-squares step dx (sp->ncol entries) on the subproblem selected
 * (the equations of motion in the multipliers, evaluated at the guess): a large tall one (more
 * rows than columns, beyond OPOINT_DENSE_MAX) by SPQR's QR kept in *keep (keep may be NULL; the
 * caller frees *keep with la_spqr_free), the basic least-squares solution as opoint_newton_step's
 * SPQR path gives it; every other by opoint_newton_step. */
int opoint_multipliers_step(opoint_subproblem *sp, la_spqr **keep, double *dx, mbl_status *st);

/* Rank of [Phi_q; A_nh] at the point, its rows scaled to unit 2-norm (dense SVD for moderate
 * sizes, SPQR otherwise). kept (may be NULL): opoint_multipliers_step's factorization; where the
 * transposed matrix has its pattern, the rank is that of the transpose refactored there.
 * Where a solve ended at a linear rate (sp->linear_rate: a degenerate solution) and q_guess (the
 * coordinates the solve began from) is given, a row whose 2-norm at the point is below
 * OPOINT_ROW_VANISH times its norm at q_guess vanishes there and counts as zero; *vanished is the
 * first such row (Phi's rows, then A_nh's), or -1. */
#define OPOINT_ROW_VANISH 1e-6
int opoint_constraint_rank(opoint_subproblem *sp, la_spqr *kept, const double *q_guess, int *rank, int *vanished,
                           mbl_status *st);

/* [Phi_q; A_nh]'s entries in sp->jac as triplets (ti: constraint, tj: coordinate, tx: value; room
 * for the Jacobian's jac.nz entries), their count returned. Where the Newton pattern of the solve
 * before holds every one (the equilibrium's, no nonholonomic rows: opoint_constraint_rank's case)
 * from its by-row lists, row after row, each row's in the Jacobian's order; otherwise by a scan, in
 * the Jacobian's order. Either way the same entries, and each row's in the same order (its norm
 * summed the same). */
int opoint_constraint_triplets(const opoint_subproblem *sp, int *ti, int *tj, double *tx);

#endif
