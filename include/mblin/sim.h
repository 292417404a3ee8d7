/* mblin: time simulation and validation of linear models (docs/simulation.md).
 *
 *   mbl_sim_start()      operating point (+ a mode's perturbation, + initial values by name) ->
 *                        a consistent start (coordinates and velocities on the constraints)
 *   mbl_simulate()       model + start -> trajectory, by SUNDIALS IDA on the stabilized index-2
 *                        form of Gear, Gupta and Leimkuhler, with KLU and the exact Jacobian
 *   mbl_validate()       linear model + modes -> each of the lowest modes excited in turn,
 *                        simulated, its frequency and damping measured (FFTW) and compared
 *   mbl_sim_linearize()  trajectory -> the linear model's modes at instants of it
 *
 * Every function returns 0 or a negative MBL_E* code with a one-line message in `st`;
 * destructors accept NULL. Trajectory arrays are sample-major: value i of sample s at [s * n + i]. */
#ifndef MBLIN_SIM_H
#define MBLIN_SIM_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/dae.h"
#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a consistent start -------------------------------------------------------------------- */

/* From the operating point pt: when modes is given, mode `mode` (an index into modes->modes) is
 * added with `amplitude`: q = q_pt + a Re(phi), v = v_pt + a Re(s phi), phi the mode shape scaled
 * so that its largest coordinate component is 1 (real), s its eigenvalue; then the named initial
 * values (a coordinate "x", or a velocity "der(x)") replace those; then the coordinates and the
 * velocities are projected onto the constraints (the minimum-norm correction of the `given`
 * operating point). An unknown name, or a mode out of range, is MBL_EARG. */
MBL_API int mbl_sim_start(const mbl_model *model, const mbl_point *pt, const mbl_modes *modes, int mode, double amplitude,
                  const mbl_setting *initial, int ninitial, mbl_point **start, mbl_status *st);

/* ---- simulation ---------------------------------------------------------------------------- */

/* An input as a function of time: an expression of t (docs/expressions.md syntax), e.g.
 * "0.0005*2*pi*t". Inputs not listed keep the start point's values. */
typedef struct mbl_sim_input {
    const char *name;
    const char *expr;
} mbl_sim_input;

typedef struct mbl_sim_options {
    double t_end;       /* end time (required, after the start point's t) */
    double dt_out;      /* output interval (default: (t_end - t0) / 1000) */
    double rtol;        /* IDA relative tolerance (default 1e-8) */
    double atol;        /* IDA absolute tolerance on q, v, X (default 1e-10) */
    double h_max;       /* largest step (0: no limit) */
    long max_steps;     /* internal steps allowed in the whole run (default 10^6; 0: the default). A run
                           that reaches it stops with an error naming the time reached; after 2000
                           steps, a run whose rate so far projects more than 10 times the limit
                           for the whole interval is refused at once with that estimate */
    double mem_budget;  /* bytes the trajectory may hold (default 2e9; 0: the default): checked
                           before any work, from the samples and their width */
    const mbl_sim_input *inputs;
    int ninputs;
    /* the integrator (docs/simulation.md, "Coordinate partitioning (SSODE)"): MBL_SIM_IDA (0, the
       default) or MBL_SIM_SSODE, the independent coordinates' ODE by SUNDIALS CVODE (BDF, rtol and
       atol as above), the dependent ones by Newton on Phi = 0 */
    int integrator;
    double newton_tol;       /* SSODE: Newton stops at max |Phi_i| <= newton_tol (default 1e-12; 0: the
                                default) or at a correction at rounding (4 eps (1 + |q|)) */
    double repartition_cond; /* SSODE: a new partition when the dependent block B's condition
                                ||Phi_q||_1 ||B^-1||_1 (dgecon's estimate) exceeds this times its
                                value at the partition (default 10; 0: the default; above 1) */
} mbl_sim_options;

enum { MBL_SIM_IDA = 0, MBL_SIM_SSODE = 1 };

MBL_API void mbl_sim_options_default(mbl_sim_options *opt);

typedef struct mbl_sim_result {
    int n, m, k, nX, nZ, nr, ny;
    int nt;                  /* samples (t0, t0 + dt_out, ..., t_end) */
    double *t;               /* nt */
    double *q, *v, *vdot;    /* nt x n */
    double *lambda, *mu;     /* nt x m, nt x k */
    double *X, *Z;           /* nt x nX, nt x nZ */
    double *r;               /* nt x nr: the inputs */
    double *y;               /* nt x ny: the outputs */
    double phi_max;          /* largest |Phi| over the samples (position constraints) */
    double phid_max;         /* largest |Phi'| (velocity constraints) */
    double nh_max;           /* largest |c| (non-holonomic constraints) */
    double eta_max;          /* largest |eta|, the stabilization's multiplier (0 in exact arithmetic) */
    long nsteps, nres, njac, nlinsetups, netf, nncf; /* IDA's counters */
    double seconds;          /* wall time of the integration */
    int integrator;          /* MBL_SIM_IDA or MBL_SIM_SSODE (then the counters are CVODE's, summed over
                                the partitions, and eta_max is 0) */
    long nrepart;            /* SSODE: the partitions chosen anew after the first */
    int nindep;              /* SSODE: independent coordinates (n - m) */
} mbl_sim_result;

/* While it integrates, the run reports to the progress callback (mblin/progress.h) every 16 residual
 * evaluations: the stage "simulate", done = t - t0 of total = t_end - t0 (mbl_validate: "validate",
 * the model time simulated of all its runs'); a stop asked there ends the integration at once
 * (MBL_ECANCELLED, no result). */
MBL_API int mbl_simulate(const mbl_model *model, const mbl_point *start, const mbl_sim_options *opt, mbl_sim_result **out,
                 mbl_status *st);
MBL_API void mbl_sim_result_free(mbl_sim_result *r);
/* The sample s of a trajectory as a point (for mbl_linearize at an instant of it). */
MBL_API int mbl_sim_point(const mbl_model *model, const mbl_sim_result *r, int s, mbl_point **out, mbl_status *st);

/* A check of the integrator's Newton matrix dF/dy + cj dF/dy' (the model's exact Jacobian, Phi_q^T
 * and the Hessian of eta^T Phi) against central differences of its residual at the consistent
 * start, with the stabilizing multipliers set to eta (nonzero, so that the Hessian counts):
 * max_err = the largest difference relative to 1 + the column's largest entry. */
MBL_API int mbl_sim_check_jacobian(const mbl_model *model, const mbl_point *start, double cj, double eta, double *max_err,
                           mbl_status *st);

/* ---- validation ---------------------------------------------------------------------------- */

typedef struct mbl_validate_options {
    int nmodes;          /* the lowest oscillatory, non-spurious modes to excite (default 3) */
    double amplitude;    /* of the perturbation, relative to max(1, largest |q| of the point) (default 1e-5) */
    double periods;      /* simulated length in damped periods of the mode (default 40) */
    int samples;         /* samples per damped period (default 64) */
    double rtol;         /* IDA's relative tolerance (default 1e-11) */
    double atol;         /* IDA's absolute tolerance as a multiple of the amplitude (default 1e-8) */
    double max_growth;   /* a growing mode (unstable) is recorded until it has grown by this factor, but
                            for at least 3 periods: its start amplitude is lowered so that it ends at
                            amplitude x max_growth, in the linear range (default 100). When the start
                            would fall below 1e-6 of the amplitude (the mode grows by more than
                            1e6 max_growth in 3 periods), the mode is not measured and the row says so */
    long max_steps;      /* IDA's steps allowed in each mode's simulation (0: mbl_sim_options' default) */
    double max_seconds;  /* CPU seconds the simulations may take in all (default 60; 0, less or infinity:
                            no limit). Once the run has taken 0.2 s and 2000 steps, its CPU time scaled
                            from the model time simulated so far to all of it is the estimate: over the
                            limit, the validation is refused at once with it (MBL_ENOCONV); a run
                            that passes the limit before an estimate or in spite of it stops there */
} mbl_validate_options;

MBL_API void mbl_validate_options_default(mbl_validate_options *opt);

typedef struct mbl_validate_row {
    int mode;                    /* index into the modes */
    double pred_re, pred_im;     /* the eigenvalue */
    double pred_freq_hz, pred_zeta;
    double fft_freq_hz;          /* the Hann-windowed FFT peak, Gaussian-interpolated (damped freq.) */
    double meas_re, meas_im;     /* from the least-squares fit of the samples: -sigma, omega_d */
    double meas_freq_hz, meas_zeta; /* |s| / 2 pi and -re/|s| of the measured s */
    double freq_rel_err, zeta_err;  /* |meas - pred| / pred, |meas - pred| */
    char signal[128];            /* the coordinate measured (largest component of the shape) */
    double seconds;              /* simulated time span */
    long nsteps;
    double start_amplitude;      /* the amplitude the mode was started with (lower for a growing mode) */
    int measured;                /* 1: measured; 0: not measurable (why in note; meas_* are NAN) */
    char note[160];              /* what limited the record (a growing mode), or why it was not measured */
} mbl_validate_row;

typedef struct mbl_validation {
    int nrows;
    mbl_validate_row *rows;
    double amplitude;            /* the absolute amplitude used */
} mbl_validation;

MBL_API int mbl_validate(const mbl_model *model, const mbl_point *pt, const mbl_modes *modes,
                 const mbl_validate_options *opt, mbl_validation **out, mbl_status *st);
MBL_API void mbl_validation_free(mbl_validation *v);

/* Measure the frequency and decay of a sampled signal x (ns samples at spacing dt) near f_hint
 * (Hz, 0: the largest peak): the FFT peak of the Hann-windowed signal (FFTW, zero-padded 4x,
 * Gaussian interpolation of the three bins at the peak), then a least-squares fit of
 * a e^{-sigma t} cos(omega_d t + p) + c to the samples (Gauss-Newton over windows of 2, 4, 8, ...
 * periods up to the whole record). Outputs may be NULL. */
MBL_API int mbl_signal_mode(const double *x, int ns, double dt, double f_hint, double *fft_hz, double *sigma,
                    double *omega_d, mbl_status *st);

/* ---- power spectral density (src/sim/psd.c) ------------------------------------------------- */

/* Welch's estimate of a sampled signal's one-sided power spectral density (docs/simulation.md,
 * "Random input and PSD"): segments of `segment` samples (0: floor(ns / 4.5), MATLAB pwelch's eight
 * segments) overlapping by half (segment / 2 rounded down), each less its mean and times the periodic
 * Hann window w_i = 0.5 - 0.5 cos(2 pi i / L); P(f_j) = c |X_j|^2 / (fs sum w^2), c = 2 but 1 at 0 Hz
 * and at Nyquist (even L), averaged over the segments (scipy.signal.welch's defaults). Units: the
 * signal's squared per Hz; sum P df is the mean square of the (detrended) record. The peaks: the
 * npeaks most prominent local maxima (default 5; prominence below), each with its frequency by Gaussian interpolation of the
 * three bins and its power (sum of P df over the Hann main lobe, the bins within 2 of it: a sine of
 * amplitude a gives a^2 / 2). A record shorter than one segment, or a segment of fewer than 8 samples,
 * is MBL_EARG. */
typedef struct mbl_psd_options {
    int segment;   /* samples per segment (0: floor(ns / 4.5)) */
    int npeaks;    /* peaks listed (0: 5) */
} mbl_psd_options;

typedef struct mbl_psd_peak {
    double freq_hz;   /* interpolated */
    double psd;       /* the bin's value */
    double power;     /* sum of P df over the bins within 2 of it */
    double prominence; /* P over the higher of its bases (the lowest P between it and the nearest
                          higher bin on each side): a resonance stands 10^2..10^6 above its
                          surroundings, the ripples of an estimate's variance a few times */
} mbl_psd_peak;

typedef struct mbl_psd {
    int nf;           /* frequencies 0, df, ..., (segment / 2) df */
    double df, fs;    /* bin spacing fs / segment, sampling frequency */
    int segment, nseg;
    double *f, *p;    /* nf each */
    double mean_square; /* sum of p df */
    int npeaks;
    mbl_psd_peak *peaks; /* the most prominent first */
} mbl_psd;

MBL_API int mbl_psd_welch(const double *x, int ns, double dt, const mbl_psd_options *opt, mbl_psd **out, mbl_status *st);
/* mbl_psd_welch's checks of a record of ns samples at spacing dt alone (before a simulation makes it) */
MBL_API int mbl_psd_check(int ns, double dt, const mbl_psd_options *opt, mbl_status *st);
MBL_API void mbl_psd_free(mbl_psd *p);

/* A trajectory's signal by its CSV name (mbl_sim_write_csv): a coordinate, der(coordinate), an ODE
 * state, an input or an output, into x (r->nt values; r->nt = 0 checks the name alone); an unknown
 * name is MBL_EARG. */
MBL_API int mbl_sim_signal(const mbl_model *model, const mbl_sim_result *r, const char *name, double *x, mbl_status *st);

/* ---- a trajectory's writer ------------------------------------------------------------------ */

/* CSV: t, the coordinates, their velocities der(x), the inputs and the outputs by name. */
MBL_API int mbl_sim_write_csv(FILE *f, const mbl_model *model, const mbl_sim_result *r);

#ifdef __cplusplus
}
#endif
#endif
