/* What the files of src/sim share: the start's accelerations (sim.c) for the start (start.c), and
 * the integration with a watch of its own (sim.c) for the validation (validate.c). */
#ifndef MBLIN_SIM_INTERNAL_H
#define MBLIN_SIM_INTERNAL_H

#include "mblin/model.h"
#include "mblin/sim.h"
#include "mblin/dae.h"
#include "mblin/expr.h"
#include "mblin/la.h"

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

/* ---- the integrator's view of the model (sim.c; ssode.c shares it) ---------------------------- */

typedef struct sim {
    const mbl_model *md;
    mbl_dae_eval *ev;
    mbl_dae_layout L;
    int n, m, k, nX, nZ, nr, N;
    int oq, ov, oX, ol, omu, oeta, oZ; /* offsets in y */
    int *frow;          /* N - n: the model's residual row of IDA row n + i */
    int *idarow;        /* nF: IDA row of a model row, -1 if not used */
    double *x, *xe, *F, *J, *g, *H;
    /* inputs: a tape of nr outputs in t, or constants */
    mblx_graph *ig;
    mblx_tape *itape;
    double *isyms, *iwork, *rconst;
    int it_sym;
    struct sim_random *rnd;    /* band-limited random inputs (random.c), nrnd of them */
    int nrnd;
    /* the Newton matrix: triplets -> CSC */
    int ntrip;
    int *tsrc, *tkind;  /* source index (model J entry, H entry, PHI entry) and kind */
    double *tx;
    int *tmap;
    mbla_csc *A;
    mbl_status err;     /* the first evaluation error */
    int failed;
    long nfail;         /* evaluation errors IDA recovered from by a smaller step */
    mbl_status last;    /* the last of them: named when the step limit stops a run */
    /* the run's reports while IDA steps (sim_watch): every SIM_REPORT_EVERY residuals */
    const sim_watch *watch;
    void *mem;          /* IDA's, for its step count */
    long nres;
    double t_seen;      /* the latest time reported */
    int stopped;        /* the watch stopped the run: why in stop */
    mbl_status stop;
} sim;


/* The model's DAE evaluator, the rows of the stabilized system in y = [q v X | lambda mu eta Z]
 * (offsets oq, ov, ...; N unknowns) and the inputs of opt: MBL_ENOMEM, MBL_EDIM, an input's error */
int sim_setup(sim *s, const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, mbl_status *st);
void sim_free(sim *s);
/* s->x = [v' lambda mu v q X' Z X r(t)] from (t, y, y'), s->xe the same with eta for lambda */
int sim_make_x(sim *s, double t, const double *y, const double *yp, mbl_status *st);
/* sample si of the trajectory from (t, y, y'), with the constraints' drift */
int sim_record(sim *s, mbl_sim_result *R, int si, double t, const double *y, const double *yp, mbl_status *st);
int sim_result_alloc(mbl_sim_result *R, const sim *s, int nt, int ny, mbl_status *st);
double sim_now(void);

/* The acceleration-level solve (accel.c): v', lambda, mu, X', Z of (t, q, v, X) in y, y' by Newton on
 * [R; d; zeq; Phi''; c'] = 0 (KLU on the model's Jacobian's rows and columns of them). given_jacobian:
 * s->J holds the Jacobian (at the state's q) and is kept for every iteration, and no convergence
 * within SIM_ACCEL_MAX_ITER iterations is MBL_ENOCONV (converged: a correction below 1e-15 relative,
 * or one below SIM_ACCEL_ROUND relative that did not halve); 0: the Jacobian anew at every iteration (the
 * consistent start's). sim_consistent_start: the start's (new, solve, free). */
#define SIM_ACCEL_MAX_ITER 20
/* given_jacobian: corrections that no longer halve below this relative size are the rounding of an
 * ill-conditioned system, converged */
#define SIM_ACCEL_ROUND 1e-8
typedef struct sim_accel {
    int nu, nz;
    int *rows, *dst, *src, *map; /* rows of F; where unknown i lives (y, or y' + N); J's entries */
    double *tx, *b;
    mbla_csc *A;
    mbla_klu *lu;
} sim_accel;
int sim_accel_new(const sim *s, sim_accel *a, mbl_status *st);
int sim_accel_solve(sim *s, sim_accel *a, double t, double *y, double *yp, int given_jacobian, mbl_status *st);
void sim_accel_free(sim_accel *a);
int sim_consistent_start(sim *s, double t0, double *y, double *yp, mbl_status *st);
/* 0 when the start's y' fits the integrator's error norm (the sum over q, v, X of (y'_i / (rtol |y_i| +
 * atol))^2 finite), else MBL_EDOMAIN naming the largest term's variable and the largest input (an
 * input of 1e200 makes v' = 1e200 and the norm overflow: IDA then stops at t0 with no cause). */
int sim_start_in_range(sim *s, double t0, const double *y, const double *yp, double rtol, double atol, mbl_status *st);

/* mbl_sim_options' defaults for the coordinate partitioning (include/mblin/sim.h) */
#define SIM_SSODE_NEWTON_TOL 1e-12
#define SIM_SSODE_REPARTITION_COND 10.0
/* Coordinate partitioning (ssode.c): mbl_sim_options.integrator MBL_SIM_SSODE, after sim_run's
 * checks of the options (nt samples) */
int sim_ssode_run(const mbl_model *md, const mbl_point *start, const mbl_sim_options *opt, int nt, const sim_watch *w,
                  mbl_sim_result **out, mbl_status *st);


#endif
