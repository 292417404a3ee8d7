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

/* A band-limited random input (random.c): the input's text "random:band=F1:F2,rms=R,seed=S[,period=P]"
 * (period default: the simulated span) as the random-phase multisine of its lines k df, df = 1/P,
 * in the band; docs/simulation.md, "Random input and PSD". At most SIM_RANDOM_MAX_LINES lines (one
 * complex multiply-add each per evaluation). */
#define SIM_RANDOM_MAX_LINES 200000
extern const char SIM_RANDOM_PREFIX[];
typedef struct sim_random {
    int input;      /* the model's input index */
    int nk;         /* lines */
    long k1;        /* the first line's index: frequency k1 df */
    double df, rms;
    double *c;      /* 2 nk: A (cos phi_k, sin phi_k), zeros after them up to a multiple of 4 lines */
    double t_last, x_last; /* the last evaluation (IDA's Newton iterations repeat t) */
    int has_last;
} sim_random;
int sim_random_is(const char *expr);
/* the spec of input `name` (index `input`) for a run of `span` seconds sampled every dt_out (the band
 * below the Nyquist frequency 1/(2 dt_out)): MBL_EARG with one line naming the input otherwise */
int sim_random_new(const char *name, const char *spec, int input, double span, double dt_out, sim_random *out,
                   mbl_status *st);
double sim_random_eval(sim_random *r, double t);
void sim_random_free(sim_random *r);

/* the peak of three neighbouring magnitudes am < a0 > ap (positive): its offset in bins from the
 * middle one by Gaussian interpolation (the parabola through their logarithms), in (-1, 1) */
double sim_peak_offset(double am, double a0, double ap);

#endif
