/* Internal: the steady motion of linearize.at: trim (trim.c). */
#ifndef MBLIN_OPOINT_TRIM_H
#define MBLIN_OPOINT_TRIM_H

#include "opoint_solve.h"

/* At the rounding floor (the line search makes no progress) the trim is accepted when the scaled
 * residual is at most this times mbl_opoint_options.tol and the last step at most this times
 * step_tol (the same floor as the other subproblems, solve.c). */
#define OPOINT_TRIM_FLOOR 1e4

/* A free input whose unit direction has a projection larger than this on the null space of the
 * scaled trim Jacobian at the solution is undetermined (refused, named). */
#define OPOINT_TRIM_UNDETERMINED 1e-6

/* The steady motion that meets the model's trim targets (mbl_opoint_options.targets replacing the
 * file's values), from the point's coordinates (the guess), the velocities v0 and the file's
 * inputs: q, v, vdot, the multipliers, X, Z and the free inputs solved; pt->trim says what was
 * solved and the residuals. q_guess: the guess, for the report. MBL_EMODEL (targets that
 * over-determine), MBL_EARG (an unknown target key), MBL_ENOCONV (no steady motion found), one line
 * each. */
int opoint_trim(opoint_subproblem *sp, const double *v0, const double *q_guess, mbl_status *st);

#endif
