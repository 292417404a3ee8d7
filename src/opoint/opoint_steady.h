/* Internal: the steady accelerations of the turning frames of flexible bodies and rigid spatial
 * bodies (steady_frames.c). */
#ifndef MBLIN_OPOINT_STEADY_H
#define MBLIN_OPOINT_STEADY_H

#include "model/model_view.h"

/* at: steady solves the point again with the frames' accelerations at the solution while they
 * changed by more than OPOINT_STEADY_FRAME_TOL times max(1, their size), at most PASSES times (the
 * solution's frames turn as the guess's do, so one pass is the rule; Euler parameters that moved
 * change the accelerations by rounding) */
#define OPOINT_STEADY_FRAME_TOL 1e-13
#define OPOINT_STEADY_FRAME_PASSES 3
/* rank tolerance of the least-squares steps of a steady motion with turning frames (at most
 * mbl_opoint_options.rank_tol): relative to the largest singular value of the unscaled Jacobian */
#define OPOINT_STEADY_FRAME_RANK_TOL 1e-12

/* Write into a (n, the other entries untouched) the steady accelerations of the frame coordinates
 * of every flexible body and every rigid spatial body in absolute coordinates (model_view flex,
 * rframe) at the coordinates q and velocities v: the origin's w x v, a planar angle's 0, Euler
 * parameters' 1/2 E(der(e))^T w (w the frame's angular velocity). Returns the largest change of an
 * entry of a. */
double opoint_steady_frame_accels(const model_view *mv, const double *q, const double *v, double *a);

#endif
