/* The sweep's own types and functions shared by its files (src/study/sweep*.c): what every point
 * needs (sweep_point.c), the grid and its threads (sweep.c), the gather of a distributed sweep
 * (sweep_dist.c), the critical speeds (sweep_critical.c). */
#ifndef MBLIN_STUDY_SWEEP_INTERNAL_H
#define MBLIN_STUDY_SWEEP_INTERNAL_H

#include <pthread.h>

#include "mblin/floquet.h"
#include "mblin/sensitivity.h"
#include "mblin/sweep.h"
#include "load/copy.h"
#include "modal/modal_compute.h"
#include "opoint/opoint_warm.h"

#define TWO_PI 6.283185307179586476925286766559

/* ---- what every point needs ------------------------------------------------------------- */

typedef struct ctx {
    char *path;              /* the caller's model's name (mbl_model_info.file), for messages */
    model_origin *origin;    /* what the caller's model was loaded from (a copy: the sweep may
                                outlive the model), its copies loaded from it (load_copy) */
    int naxes;
    int pidx[2];             /* parameter index of each axis, -1 for time */
    mbl_setting *sets;       /* the base overrides + one per parameter axis (values set per point) */
    char **set_names;
    int nsets, nbase;
    mbl_opoint_options popt;
    mbl_lin_options lopt;
    int fast;
    int phase_times;         /* mbl_sweep_options.phase_times: the phases' thread CPU measured */
    int npoints;             /* the whole sweep's points (on every rank and thread the same) */
    int order;               /* n + m + k of the model (the sensitivity pencil's order) */
    int m;                   /* holonomic constraints */
    int n, nm;               /* coordinates, eigenvalues per point (from the first point) */
    int predictor;           /* MBL_PREDICT_LINEAR or MBL_PREDICT_SENSITIVITY (decided at the first point) */
    int floquet;             /* 1: a Floquet sweep (fo, spin: the period's parameter or -1) */
    mbl_floquet_options fo;
    int spin;
    mbl_point *pt0;          /* the point at pt0_x from the file's guess (the first point's), or NULL: a
                                worker's workspace is made on a copy instead of solving it again */
    double pt0_x[2];
} ctx;

/* One thread's state: its own model (fast path) and workspace. */
typedef struct worker {
    ctx *c;
    mbl_model *model;
    mbl_lin_work *work;
    mbl_linear *lin;
    mbl_dae_deriv *dd;       /* the model's second derivatives (sensitivity predictor, fast path) */
    double x0[2];            /* the values the workspace was made at */
    double t_load, t_point, t_lin, t_sens; /* seconds in loading, operating points, linearization +
                                              modes, sensitivities */
    /* warm start: the last points of this block (equilibrium and steady points) */
    int wlen;                /* n + m + k */
    double *wq, *wq2, *wq3, *wq4; /* wlen: [q; lambda; mu] of the block's last four points, the last first */
    double wx[2], wx2[2], wx3[2], wx4[2]; /* their axis values */
    int nwarm;               /* 0 to 4 of them valid */
    long long nrec;          /* points recorded (warm_record) */
    double *wd1, *wd2;       /* wlen: the cubic's first and second divided differences of its last
                                two and three points (d12, d123), made at record wdd_rec; the next
                                cubic's d23 and d234 (warm_guess4) */
    long long wdd_rec;
    double *wdq;             /* wlen: d[q; lambda]/dx of the last point (its sensitivities; NAN for mu) */
    double *wguess;          /* wlen: the guess handed to the operating point */
    int wdq_ok;
    long long warm_points;   /* points started from the previous point */
    /* warm-started equilibria (src/opoint/warm.c): the corrector, the block's last point (the
     * template of the next), and what happened */
    modal_reuse mru;        /* the modes of the last point and modal_compute's scratch, reused */
    opoint_warm *ow;
    int ow_off;              /* 1: the warm corrector does not apply to this model */
    int tan_ok;              /* the corrector gave the tangent at the block's last point (wdq) */
    int tan_skip;            /* no tangent at the block's last point (opoint_warm_skip_tangent): the next
                                point is predicted by the cubic through the last four */
    mbl_point *wpt;          /* the last point of the block (NULL: none) */
    double *wtan;            /* n + m + k: the corrector's tangent at the last point */
    int pt_warm;             /* the point being computed was accepted by the warm corrector */
    int wquad;               /* wguess is the quadratic prediction (error O(h^3): a chord step suffices) */
    long long warm_ok, warm_rejected, warm_steps; /* warm starts accepted, rejected (solved cold), their Newton steps */
    opoint_warm_counts wcnt; /* the work of the correctors freed so far (study_sweep_worker_clear) */
    mbl_dae_deriv *dfp;      /* the model's parameter derivatives (the corrector's tangents) */
    int *steps;              /* the sweep's per-point Newton steps (shared, indexed by point) or NULL */
    int cur;                 /* the point being computed (its index in steps) */
    const mbl_point *start;  /* the block's first point, solved already (study_sweep_start), or NULL */
    const double *start_tan; /* the corrector's tangent there (the chain's), or NULL */
    int no_chord;            /* no chord step from the prediction (block starts: a block-long step) */
    int block_last;          /* the point being computed is its block's last (thread_main): no tangent,
                                which only the block's next point would read */
} worker;

/* A computed point: eigenvalues and shapes (as mbl_modal orders them). */
typedef struct point_out {
    double *re, *im;         /* nm */
    double *sre, *sim;       /* nm * n or NULL */
    double *dre, *dim;       /* nm: d eigenvalue / dx (sensitivity predictor; NULL or NAN: none) */
    double *dsre, *dsim;     /* nm * n: d shape / dx in the normalization of sre, sim */
    int own;                 /* re is a block of its own (a point gathered from another rank), else
                                re, im, sre, sim are in run's store */
} point_out;

/* ---- the grid and the threads ------------------------------------------------------------ */

typedef struct run {
    ctx *c;
    const mbl_sweep_options *opt;
    mbl_sweep *sw;
    point_out *pts;
    double *sto;             /* the store of this process's points (store_point): npoints * nm
                                eigenvalues' real parts, then imaginary parts, then (keep_shapes) npoints
                                * nm * n shapes' real parts, then imaginary parts; point p at p's place */
    int keep_shapes;
    pthread_mutex_t lock;
    int next, done, chunk;
    int rank, size;          /* block k of the points is computed by rank k mod size (mbl_sweep_dist) */
    int nchunks;
    mbl_point **starts;      /* nchunks: each block's first point, solved in order before the blocks
                                (study_sweep_start), or NULL where a block solves its own */
    double **start_tan;      /* nchunks: the warm corrector's tangent at each start (n + m + k), or NULL */
    double t0;               /* when the points started (wall clock) */
} run;

/* sweep_point.c: a worker's state freed (the worker itself kept), the context freed, the wall
 * clock, and the linear model and modes at the axis values x (eval_modes, documented there) */
void study_sweep_worker_clear(worker *w);
void study_sweep_ctx_free(ctx *c);
double study_sweep_now(void);
int study_sweep_eval_modes(worker *w, const double *x, int warm, mbl_modes **modes, mbl_sensitivity **sens,
                           mbl_status *sst, mbl_status *st);
/* The operating point at x continued from the worker's last point (at xprev; its warm corrector's
 * tangent; documented in sweep_point.c): a copy in *out, NULL where it does not apply or failed. */
void study_sweep_start(worker *w, const double *xprev, const double *x, mbl_point **out);

/* sweep_dist.c: every rank's raw results to rank 0 (documented there) */
int study_sweep_gather(const mbl_sweep_dist *d, int rc, run *r, mbl_sweep **swp, mbl_status *st);

#endif
