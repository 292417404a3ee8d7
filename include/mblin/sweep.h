/* mblin: sweeps with mode tracking, Campbell diagrams, root loci, frequency response (src/study).
 *
 *   mbl_sweep_run()          one or two parameters (or the time t along linearize.time drivers)
 *                            over a grid: operating point, linear model and modes at every point,
 *                            on several threads, then the modes tracked from point to point
 *   mbl_sweep_critical()     Campbell diagram: where tracked frequencies meet excitation orders
 *   (their writers: CSV, JSON and SVG, below; their HTML pages: include/mblin/report.h)
 *   mbl_freqresp()           G(i w) from the exact linear model
 *
 * Everything here uses the public pipeline (include/mblin/model.h) only. docs/study.md describes
 * the methods (how points are computed, how modes are tracked, which form the frequency
 * response uses and why). */
#ifndef MBLIN_SWEEP_H
#define MBLIN_SWEEP_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sweeps ------------------------------------------------------------------------------ */

#define MBL_SWEEP_NAME_MAX 128

/* One swept quantity: a parameter of the model, or "t" (the time of the point, for models with
 * drivers: each point is the operating point at that time). */
typedef struct mbl_sweep_axis {
    const char *name;
    double from, to;  /* from < to */
    int count;        /* points, >= 2 (the ends included, evenly spaced) */
} mbl_sweep_axis;

/* Progress callback: called from the thread that finished a point (serialised by the sweep),
 * done = points finished so far of total. The sweep also reports to the progress callback of
 * mblin/progress.h (stage "sweep"), through which it can be stopped (MBL_ECANCELLED). */
typedef void (*mbl_sweep_progress)(void *ud, int done, int total);

/* How the tracking predicts each branch at the next point (docs/study.md, "Tracking"). */
enum {
    MBL_PREDICT_DEFAULT = 0,     /* sensitivity where the model has exact sensitivities, else linear */
    MBL_PREDICT_LINEAR = 1,      /* the branch extrapolated linearly from its last two points */
    MBL_PREDICT_SENSITIVITY = 2  /* lambda + dlambda/dp dp and phi + dphi/dp dp from the exact
                                    sensitivities at every point (mbl_sensitivity_compute); refused
                                    (at the first point) where they are not available */
};

/* A sweep shared by several processes (MPI ranks: the command line fills this in under mpirun
 * through its plugin, docs/parallel.md; the library itself never calls MPI). Every process calls
 * mbl_sweep_run with the same arguments and this structure with its own rank. The points are
 * computed in the same fixed blocks of consecutive points as on threads (the warm start runs within
 * a block, each block's first point from the file's guess), block k on rank k mod size, so the
 * results do not depend on size; rank 0 receives the others' raw results (eigenvalues, shapes,
 * derivatives, failures) through gather, tracks the modes and returns the whole sweep; the other
 * ranks return 0 with *out = NULL. A failure on any rank fails the sweep on every rank (rank 0's
 * message names the rank that failed first when rank 0 itself did not). */
typedef struct mbl_sweep_dist {
    int rank, size;              /* this process, and how many (size <= 1: not distributed) */
    /* Collective, called exactly once per mbl_sweep_run by every rank, also by a rank that failed
     * (its part then says so): rank r sends n doubles; on rank 0 *all (mbl_malloc'ed; the sweep
     * frees it) is every rank's part in rank order and counts[r] (size entries) their lengths; on
     * the others *all = NULL. 0 or a negative MBL_E* code, the same on every rank. */
    int (*gather)(void *ud, const double *buf, size_t n, double **all, size_t *counts, mbl_status *st);
    void *ud;
} mbl_sweep_dist;

typedef struct mbl_sweep_options {
    int naxes;                   /* 1 or 2; the first axis varies fastest */
    mbl_sweep_axis axis[2];
    int threads;                 /* worker threads (<= 0: 1); results do not depend on it */
    const mbl_setting *sets;     /* parameter overrides for the sweep's copies of the model, over
                                    those it was loaded with (which the copies keep; NULL: none) */
    int nsets;
    const mbl_opoint_options *popt; /* NULL: defaults. q, v, guess apply at every point */
    const mbl_lin_options *lopt; /* NULL: defaults; method must be augmented (the workspace path) */
    double mac_weight;           /* tracking cost = mac_weight (1 - MAC) + distance to the predicted
                                    eigenvalue relative to its size (default 1) */
    int force_reload;            /* 1: reload the model at every point even when the parameter can be
                                    changed in place (a check of the fast path; default 0) */
    mbl_sweep_progress progress; /* may be NULL */
    void *progress_ud;
    int predictor;               /* MBL_PREDICT_* (default MBL_PREDICT_DEFAULT) */
    const mbl_sweep_dist *dist;  /* NULL: this process computes every point */
    long max_points;             /* the work limit: a grid of more points is refused before any work
                                    (default MBL_SWEEP_MAX_POINTS; 0: the default; negative: an
                                    error). After the first point the results' memory is estimated
                                    too and refused above lopt->mem_budget (default 2 GiB) */
    /* A Floquet sweep (include/mblin/floquet.h, docs/floquet.md): NULL (default), or each point's
     * eigenvalues are the Floquet exponents along the point taken as a periodic orbit, of period
     * floquet->period, or 2 pi / floquet_spin (a spin_speeds parameter, by name) at that point;
     * the tracking predictor is then the linear one */
    const struct mbl_floquet_options *floquet;
    const char *floquet_spin;
    int phase_times;             /* 1: measure each point's phases (mbl_sweep's seconds_load, _point,
                                    _lin, _sens: thread CPU time, a system call per reading, about
                                    3 us a point); 0 (default): those four stay 0 */
} mbl_sweep_options;

#define MBL_SWEEP_MAX_POINTS 100000L

MBL_API void mbl_sweep_options_default(mbl_sweep_options *opt);

typedef struct mbl_sweep {
    int naxes;
    char axis_name[2][MBL_SWEEP_NAME_MAX];
    int count[2];                /* count[1] = 1 for one axis */
    int npoints;                 /* count[0] * count[1]; point p = i0 + count[0] * i1 */
    double *value;               /* npoints * naxes: value[p * naxes + a] */
    int nmodes;                  /* tracked branches = eigenvalues per point */
    int n;                       /* coordinates (mode shape length) */
    /* npoints * nmodes, branch b of point p at [p * nmodes + b]; NAN where the point failed */
    double *re, *im, *freq_hz, *damping;
    double *mac;                 /* MAC of the branch's shape with its shape at the previous point of
                                    the tracking order (1 at the first point; NAN without shapes) */
    int *ok;                     /* npoints: 1 when computed */
    char **error;                /* npoints: the reason a point failed (NULL when ok) */
    int nfailed;
    int fast;                    /* 1: parameter changed in place + workspace (mbl_relinearize);
                                    0: the model reloaded at each point (a parameter evaluated
                                    into numbers at load time: a mechanism's geometry) */
    int threads;
    double seconds;              /* wall time of the points (not the tracking) */
    double seconds_load, seconds_point, seconds_lin; /* thread CPU time summed over the points: loading
                                    the model (reload path), operating points, linear model + modes
                                    (with mbl_sweep_options.phase_times; 0 otherwise) */
    char model_name[256];
    int predictor;               /* the predictor used: MBL_PREDICT_LINEAR or MBL_PREDICT_SENSITIVITY */
    int npredicted;              /* points whose exact derivatives were used (the others: linear) */
    double seconds_sens;         /* thread CPU time summed over the points: the sensitivities
                                    (with mbl_sweep_options.phase_times; 0 otherwise) */
    int nwarm;                   /* points whose operating point started from the block's previous
                                    points (a predicted guess) instead of the file's guess */
    char predictor_note[MBL_MSG_MAX]; /* why the default fell back to linear ("" otherwise) */
    void *ctx;                   /* internal: what mbl_sweep_critical needs to compute more points */
    int ranks;                   /* processes that computed the points (mbl_sweep_dist; 1 otherwise) */
    double gathered_bytes;       /* the raw results rank 0 received from the other ranks */
    /* warm-started equilibria (docs/study.md, "Warm start"): points solved by at most 2 Newton
     * steps from the previous point plus its exact tangent dq/dp, and points where that start was
     * rejected (solved cold from the same guess); on a distributed sweep, rank 0's points only */
    int nwarm_ok, nwarm_rejected;
    int *steps;                  /* npoints: Newton steps of each point's operating point
                                    (mbl_point.iterations; -1 where it failed or on another rank) */
    /* the warm corrector's work, summed over the points (both as nwarm_ok): evaluations of the
     * residual F, of its Jacobian, of the scaled residual (the acceptance test), Newton solves (a
     * numeric factorization each: the steps and the tangents) and evaluations of dF/dp (the
     * tangents); docs/study.md, "Warm start" */
    long long warm_nF, warm_njac, warm_nscaled, warm_nfactor, warm_ndfdp;
    /* chord steps (the first step from a prediction, solved with the factorization of the previous
     * point's tangent: no Jacobian evaluated or factored for it), and those that did not contract
     * (the point then corrected by full Newton from the prediction) */
    long long warm_nchord, warm_nchord_fallback;
} mbl_sweep;

/* Run the sweep on `model` (loaded from a file or a string): the axes are checked and named
 * against it. A parameter changes in place (mbl_model_set_param) only on a model of its own, so the
 * sweep makes copies of `model` (mbl_model_copy: its text loaded again with its own overrides, the
 * values set in place on it and its load options, never its file): once per thread with opt->sets (the fast path), or at every point
 * with opt->sets and the point's values (a parameter that cannot change in place; force_reload);
 * opt->sets go over the model's own overrides (NULL: the model's alone).
 * The caller's model is not changed and may be freed after the call (the sweep keeps its own copy
 * for mbl_sweep_critical). With model NULL it fails with the error already in st (the caller's
 * failed load) or MBL_EARG: a rank of a distributed sweep whose load failed still calls it so, and
 * the other ranks are not left waiting in the gather (every rank fails with that message). Fails
 * (one line in st) on bad input: an unknown parameter, count < 2, from >= to, more than 2 axes;
 * or when the first point fails. A later point that fails is recorded (ok = 0, error) and the
 * sweep goes on. */
MBL_API int mbl_sweep_run(const mbl_model *model, const mbl_sweep_options *opt, mbl_sweep **out, mbl_status *st);
MBL_API void mbl_sweep_free(mbl_sweep *sw);

/* The mode tracking alone (src/study/track.c), exposed for tests and other drivers: given, for np
 * points in tracking order, nm eigenvalues each (lre, lim: np * nm), optionally their exact
 * derivatives with respect to the parameter (dre, dim: np * nm, NULL for none; NAN entries count
 * as missing: the predictor is then the linear extrapolation), optionally mode shapes (sre, sim:
 * np * nm * n, shape j of point p at [(p * nm + j) * n], NULL for none) and the parameter value of
 * each point (x: np), fill perm (np * nm) with, for branch b at point p, the index of the
 * eigenvalue of point p it follows, and mac (np * nm, may be NULL). prev (np) is the point each
 * point is tracked from (-1 for the first; NULL: p - 1). */
MBL_API int mbl_track_modes(int np, int nm, int n, const double *lre, const double *lim, const double *dre,
                    const double *dim, const double *sre, const double *sim, const double *x, const int *prev,
                    double mac_weight, int *perm, double *mac, mbl_status *st);
/* The same with the shapes predicted too: dsre, dsim (np * nm * n, laid out as sre, sim; NULL for
 * none) are d(shape)/dx in the normalization of the shapes given (a NAN entry: that shape is not
 * predicted); the tracking cost then takes the MAC of the predicted shape
 * phi_b(a) + dphi_b/dx (x_p - x_a) with the candidates' shapes. mbl_sweep_run passes the exact
 * derivatives of the sensitivity predictor here (mbl_sweep_options.predictor). */
MBL_API int mbl_track_modes_pred(int np, int nm, int n, const double *lre, const double *lim, const double *dre,
                         const double *dim, const double *sre, const double *sim, const double *dsre,
                         const double *dsim, const double *x, const int *prev, double mac_weight, int *perm,
                         double *mac, mbl_status *st);

/* The level below which |Im s| counts as zero in plots and critical speeds: 1e-6 of the largest
 * |s| of the sweep (a rigid-body or cyclic double zero splits by about sqrt(eps) |s| in rounding). */
MBL_API double mbl_sweep_zero_level(const mbl_sweep *sw);

/* ---- Campbell diagrams ------------------------------------------------------------------- */

typedef struct mbl_critical {
    int branch;                  /* tracked branch */
    double order;                /* excitation order k of the line f = k * speed */
    double speed;                /* the critical speed, in the unit of the swept parameter */
    double freq_hz;              /* the branch's frequency there */
    int refined;                 /* 1 when refined by the secant method on new points to tol */
    int whirl;                   /* +1 the frequency rises with speed there (a rotor's forward whirl), -1
                                    falls (backward whirl), 0 flat (JSON "trend") */
} mbl_critical;

/* Where a tracked frequency (Im lambda / 2 pi of branches with Im above mbl_sweep_zero_level) meets an excitation line
 * f = order * speed * hz_per_unit (hz_per_unit converts the swept parameter to revolutions per
 * second: 1 / (2 pi) for rad/s, 1 for Hz, 1/60 for rpm). Every sign change of f_b - f_line
 * between neighbouring points is a crossing, refined by the secant method on newly computed
 * points until the speed changes by less than tol (relative; <= 0: 1e-10), at most 30 new
 * points each. One-axis sweeps only. *out is mbl_malloc'ed (free with mbl_free). */
MBL_API int mbl_sweep_critical(mbl_sweep *sw, const double *orders, int norders, double hz_per_unit, double tol,
                       mbl_critical **out, int *ncrit, mbl_status *st);

/* ---- frequency response ------------------------------------------------------------------- */

/* the form solved at a frequency; MBL_FR_POLE: both matrices singular to working precision (rcond
 * below eps: an eigenvalue on the imaginary axis at that w), |G| infinite and the phase undefined */
enum { MBL_FR_STATE_SPACE = 0, MBL_FR_DESCRIPTOR = 1, MBL_FR_POLE = 2 };

typedef struct mbl_freqresp_result {
    int nw;
    double *w;                   /* rad/s */
    double *re, *im;             /* G(i w) */
    double *mag, *mag_db, *phase_deg; /* |G|, 20 log10 |G|, unwrapped phase in degrees */
    double *rcond;               /* reciprocal condition (LAPACK zgecon, 1-norm, after equilibration)
                                    of the matrix solved at each frequency */
    int *form;                   /* MBL_FR_* used at each frequency */
    char input[MBL_SWEEP_NAME_MAX], output[MBL_SWEEP_NAME_MAX];
} mbl_freqresp_result;

/* G(i w) = C (i w I - A)^-1 B + D (state space) and, when desc is given (a descriptor-method
 * linearization of the same point: E, Ad, Bd, Cdd dense), G = Cdd (i w E - Ad)^-1 Bd + D; at each
 * frequency the form whose equilibrated matrix has the larger reciprocal condition is used.
 * lin must have its state-space form (A, B, C, D); desc may be NULL. input and output index the
 * model's inputs and outputs. A frequency where both matrices are singular to working precision
 * (an eigenvalue on the imaginary axis, e.g. w = 0 with a rigid-body mode) is a pole: form
 * MBL_FR_POLE, rcond 0, an infinite magnitude and a NAN phase, not an error and never the
 * rounding-level digits of a nearly singular solve. */
MBL_API int mbl_freqresp(const mbl_linear *lin, const mbl_linear *desc, int input, int output, const double *w, int nw,
                 mbl_freqresp_result **out, mbl_status *st);
MBL_API void mbl_freqresp_free(mbl_freqresp_result *r);

/* All inputs to all outputs (MIMO): the transfer matrix G(i w) (ny x nu) of the same forms as
 * mbl_freqresp, one LU per frequency with every input a right-hand side (zgesvx, each column
 * refined), the better-conditioned form chosen per frequency for the whole matrix. pair[i * ny + o]
 * is input i to output o, an mbl_freqresp_result each (its values equal mbl_freqresp's of that
 * pair); sv[k * nsv + j] the singular values of G(i w_k) (LAPACK zgesvd), descending, nsv =
 * min(nu, ny), INFINITY at a pole. */
typedef struct mbl_freqresp_mimo {
    int nw, nu, ny, nsv;
    mbl_freqresp_result **pair;
    double *sv;
} mbl_freqresp_mimo;

MBL_API int mbl_freqresp_mimo_run(const mbl_linear *lin, const mbl_linear *desc, const double *w, int nw,
                                  mbl_freqresp_mimo **out, mbl_status *st);
MBL_API void mbl_freqresp_mimo_free(mbl_freqresp_mimo *r);

/* ---- a sweep's writers (src/study/sweep_write.c, svg.c; the page: mblin/report.h) ----------- */

/* CSV: one row per point and branch: the axis values, branch, re, im, freq_hz, damping_ratio,
 * mac (numbers with 17 significant digits, so the file round-trips). */
MBL_API int mbl_sweep_write_csv(FILE *f, const mbl_sweep *sw);
/* JSON: {model, axes: [{name, from, to, count}], points, modes, fast, threads, seconds,
 * values: [[..] per point], branches: [{re: [..], im: [..], freq_hz: [..], damping_ratio: [..],
 * mac: [..]}], failed: [{point, error}], critical_speeds: [{branch, order, speed, freq_hz, trend,
 * refined}] (when crit is not NULL)}. */
MBL_API int mbl_sweep_write_json(FILE *f, const mbl_sweep *sw, const mbl_critical *crit, int ncrit);

/* SVG plots (one-axis sweeps; for two axes, the first row i1 = 0):
 *   campbell: frequency [Hz] of the oscillatory branches vs the swept parameter, the excitation
 *             lines of `orders` and the critical speeds marked and labelled; frequencies up to fmax
 *             (<= 0: all);
 *   locus:    root locus, Im vs Re of every branch over the sweep (start and end marked);
 *   damping:  damping ratio of the oscillatory branches vs the swept parameter. */
MBL_API int mbl_sweep_svg_campbell(FILE *f, const mbl_sweep *sw, const double *orders, int norders, double hz_per_unit,
                           double fmax, const mbl_critical *crit, int ncrit);
MBL_API int mbl_sweep_svg_locus(FILE *f, const mbl_sweep *sw);
MBL_API int mbl_sweep_svg_damping(FILE *f, const mbl_sweep *sw);
/* Stability chart: a point is unstable when the largest real part of its eigenvalues (a Floquet
 * sweep: exponents) exceeds tol. One axis: that largest real part vs the parameter, the unstable
 * stretches shaded; two axes: the grid's cells, unstable red (darker for faster growth), stable
 * blue, failed grey (docs/floquet.md). */
MBL_API int mbl_sweep_svg_stability(FILE *f, const mbl_sweep *sw, double tol);

/* ---- a frequency response's writers (src/study/freqresp.c, svg.c; the page: mblin/report.h) -- */

/* CSV: w_rad_s, f_hz, re, im, magnitude, magnitude_db, phase_deg, rcond, form */
MBL_API int mbl_freqresp_write_csv(FILE *f, const mbl_freqresp_result *r);
/* Bode plot (magnitude in dB and phase in degrees over a logarithmic frequency axis in Hz). */
MBL_API int mbl_freqresp_svg_bode(FILE *f, const mbl_freqresp_result *r, const char *title);
/* MIMO (mbl_freqresp_mimo_run): every pair's Bode curves overlaid, one legend entry per pair; the
 * singular values of G over frequency in dB; CSV, one row per frequency and pair: w_rad_s, f_hz,
 * input, output, re, im, magnitude, magnitude_db, phase_deg, rcond, form; the singular values as
 * CSV: w_rad_s, f_hz, sigma1, .., sigma_nsv. */
MBL_API int mbl_freqresp_mimo_svg_bode(FILE *f, const mbl_freqresp_mimo *r, const char *title);
MBL_API int mbl_freqresp_mimo_svg_sigma(FILE *f, const mbl_freqresp_mimo *r, const char *title);
MBL_API int mbl_freqresp_mimo_write_csv(FILE *f, const mbl_freqresp_mimo *r);
MBL_API int mbl_freqresp_mimo_write_sv_csv(FILE *f, const mbl_freqresp_mimo *r);
/* JSON (docs/schema/freqresp.json): schema_version, model, inputs, outputs, w_rad_s, form, rcond,
 * response [{input, output, re, im, magnitude, magnitude_db, phase_deg}], singular_values (one
 * array per frequency); non-finite values (a pole) are null. */
MBL_API int mbl_freqresp_mimo_write_json(FILE *f, const mbl_freqresp_mimo *r, const char *model_name);

/* ---- plots (src/study/svg.c) ---------------------------------------------------------------- */

/* A generic x-y plot (W 760 x H 500): series of points drawn as a line or as dots (markers = 1),
 * colour index `color` into the plots' palette (-1: the series' index), one legend entry per
 * distinct label (NULL: none); axes from the finite values. For plots of other modules (mblin
 * simulate --linearize-every: frequencies along a trajectory next to a sweep's branches). */
typedef struct mbl_svg_series {
    int n;
    const double *x, *y;
    const char *label;
    int markers;
    int color;
} mbl_svg_series;
MBL_API int mbl_svg_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel, const mbl_svg_series *s, int ns);

#ifdef __cplusplus
}
#endif
#endif
