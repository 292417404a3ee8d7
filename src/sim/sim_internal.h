/* What the files of src/sim share: the start's accelerations (sim.c) for the start (start.c). */
#ifndef MBLIN_SIM_INTERNAL_H
#define MBLIN_SIM_INTERNAL_H

#include "mblin/model.h"

/* At a start whose q, v (on the constraints), X and Z (a guess for Newton) are set: v', lambda,
 * mu, X' and Z from the acceleration-level equations [R; d; zeq; Phi''; c'] = 0 with the inputs
 * of the point, as the simulation's consistent start (mbl_simulate) finds them. */
int sim_start_consistent(const mbl_model *md, mbl_point *start, mbl_status *st);

#endif
