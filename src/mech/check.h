/* Constraint diagnostics for `mblin check`, naming each constraint by its source (a mechanism's
 * joint, driver or coupler; "constraint <j>" at the equation level). Internal to the library. */
#ifndef MBLIN_MECH_CHECK_H
#define MBLIN_MECH_CHECK_H

#include <stdio.h>

#include "mblin/model.h"

/* Relative singular-value threshold of the rank of Phi_q (as mbl_opoint_options.rank_tol). */
#define MBL_CHECK_RANK_TOL 1e-9
/* A constraint takes part in a redundancy when its weight in a left null vector of Phi_q
 * exceeds this (null vectors have unit length). */
#define MBL_CHECK_NULL_WEIGHT 1e-6
/* Constraint residuals above this (absolute) count as not assembled. */
#define MBL_CHECK_RESIDUAL_TOL 1e-8
/* At most this many names are listed on one line. */
#define MBL_CHECK_LIST_MAX 12

/* Print the check's constraint lines: with a point, the redundant constraints (the constraints
 * that take part in the left null space of Phi_q, grouped by name); without one (no consistent
 * point was found), the constraints violated at the initial configuration, largest first.
 * Returns 0, or MBL_EIO / MBL_ENOMEM (lines that cannot be computed are skipped). */
int mbl_check_constraints(FILE *f, const mbl_model *md, const mbl_point *pt);

#endif
