/* What the files of src/sim share: the start's accelerations (sim.c) for the start (start.c), and
 * the integration with a watch of its own (sim.c) for the validation (validate.c). */
#ifndef MBLIN_SIM_INTERNAL_H
#define MBLIN_SIM_INTERNAL_H

#include "mblin/model.h"
#include "mblin/sim.h"

/* At a start whose q, v (on the constraints), X and Z (a guess for Newton) are set: v', lambda,
 * mu, X' and Z from the acceleration-level equations [R; d; zeq; Phi''; c'] = 0 with the inputs
 * of the point, as the simulation's consistent start (mbl_simulate) finds them. */
int sim_start_consistent(const mbl_model *md, mbl_point *start, mbl_status *st);

/* While IDA steps, every SIM_REPORT_EVERY residual evaluations (a few milliseconds of work apart on
 * the large models, far less on the small ones) the run calls report(ud, t, nsteps, st), t the
 * latest time of a residual so far (never going back), nsteps the steps taken: 0 goes on; nonzero stops the integration, which returns
 * that code with st's message (MBL_ECANCELLED for a stop asked through mblin/progress.h, or a
 * budget's refusal). mbl_simulate's watch reports the stage "simulate" (t - t0 of t_end - t0). */
#define SIM_REPORT_EVERY 16
typedef struct sim_watch {
    int (*report)(void *ud, double t, long nsteps, mbl_status *st);
    void *ud;
} sim_watch;

/* mbl_simulate with the watch w instead of its own (NULL: no reports). */
int sim_run(const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, const sim_watch *w,
            mbl_sim_result **out, mbl_status *st);

#endif
