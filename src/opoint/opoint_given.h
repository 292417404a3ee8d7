/* Internal: the velocities of a given point with held velocities (given_vel.c). */
#ifndef MBLIN_OPOINT_GIVEN_H
#define MBLIN_OPOINT_GIVEN_H

#include "opoint_solve.h"

/* Held velocities and velocity constraints agree when every row's scaled residual (|r_i| over
 * sum_c |A_ic| max(1, |v_c|)) is at most this times mbl_opoint_options.tol (default 1e-12: 1e-8),
 * or its absolute residual at most abs_tol; the same floor as the linear subproblems of solve.c. */
#define OPOINT_GIVEN_TOL_FACTOR 1e4
/* The note lists the solved velocities above this fraction of the largest velocity. */
#define OPOINT_GIVEN_ZERO 1e-12

/* At the given coordinates (sp->pt->q) and from the velocities sp->pt->v (held values in place):
 * the minimum-norm change of the velocities that satisfies the velocity constraints, the held
 * coordinate rates (hq[i] = 1: v_i = hcq[i]) and the held expressions in use (he[j] = 1: h_j = hc[j]), a note
 * naming what was held and what solved; MBL_ESINGULAR naming the held velocities when they
 * disagree with each other or the constraints. */
int opoint_given_velocities(opoint_subproblem *sp, const int *hq, const double *hcq, const int *he, const double *hc,
                            mbl_status *st);

#endif
