/* Validation of a linear model by simulation (include/mblin/sim.h, docs/simulation.md).
 *
 * Each of the lowest oscillatory modes is excited alone: the start is the operating point plus
 * a Re(phi), a Re(s phi) in the velocities (the real solution Re(phi e^{st}) of the linear model,
 * so no other mode is excited to first order), projected onto the constraints. The coordinate
 * with the largest component of phi is recorded (minus the unperturbed trajectory when the point
 * moves) and measured by mbl_signal_mode: the FFT peak of the Hann-windowed record (FFTW,
 * zero-padded 4x, Gaussian interpolation of the three bins at the peak) gives the damped
 * frequency to a fraction of a bin; then a least-squares fit of a e^{-sigma t} cos(omega_d t + p)
 * + c to the samples themselves (Gauss-Newton, started from the FFT's frequency on two periods
 * and extended by doubling windows to the whole record) gives omega_d and sigma. Not the analytic
 * signal: its band-limited Hilbert transform rings at the ends of a record that decays (tried:
 * 30 % off on a mode with damping ratio 0.075), and not the log decrement (two peaks, no average
 * over the record). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <fftw3.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "core/progress.h"
#include "mblin/la.h"
#include "mblin/sim.h"
#include "sim_internal.h"

/* A growing mode whose start would be below this fraction of the amplitude to stay within
 * amplitude x max_growth over 3 periods is not measured (mbl_validate_options.max_growth). */
#define VALIDATE_MIN_START 1e-6
/* With a mode growing faster than the one measured, the record ends before that mode has grown
 * this many times from the integrator's errors (atol 1e-8 of the amplitude: to 1e-3 of it). */
#define VALIDATE_CONTAMINATION 1e5
/* The time budget (mbl_validate_options.max_seconds, default VALIDATE_MAX_SECONDS of CPU time): the
 * simulations' CPU time, scaled from the model time simulated so far to all of it, is projected
 * once the run has taken VALIDATE_PROBE_SECONDS and its simulation VALIDATE_PROBE_STEPS steps (the
 * steps after IDA's first tiny ones), and the validation is refused when that is over the budget
 * (docs/simulation.md, "Work limits"). */
#define VALIDATE_MAX_SECONDS 60.0
#define VALIDATE_PROBE_SECONDS 0.2
#define VALIDATE_PROBE_STEPS 2000

void mbl_validate_options_default(mbl_validate_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->nmodes = 3;
    opt->amplitude = 1e-5;
    opt->periods = 40;
    opt->samples = 64;
    opt->rtol = 1e-11;
    opt->atol = 1e-8;
    opt->max_growth = 100;
    opt->max_seconds = VALIDATE_MAX_SECONDS;
}

void mbl_validation_free(mbl_validation *v)
{
    if (!v) return;
    mbl_free(v->rows);
    mbl_free(v);
}

static int next_pow2(int n)
{
    int p = 1;
    while (p < n) p <<= 1;
    return p;
}

static double sumsq(const double *x, int ns, double dt, const double *prm)
{
    double ss = 0;
    for (int i = 0; i < ns; i++) {
        double t = i * dt, r = x[i] - (prm[0] * exp(-prm[1] * t) * cos(prm[2] * t + prm[3]) + prm[4]);
        ss += r * r;
    }
    return ss;
}

static int refine(const double *x, int ns, double dt, double *prm, mbl_status *st)
{
    double *J = mbl_alloc_array((size_t)ns * 5 + 1, sizeof *J), *r = mbl_alloc_array((size_t)ns + 1, sizeof *r);
    int rc = 0;
    if (!J || !r) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double ss = rc ? 0 : sumsq(x, ns, dt, prm);
    for (int it = 0; !rc && it < 50; it++) {
        double a = prm[0], s = prm[1], w = prm[2], p = prm[3];
        for (int i = 0; i < ns; i++) {
            double t = i * dt, e = exp(-s * t), cs = cos(w * t + p), sn = sin(w * t + p);
            r[i] = x[i] - (a * e * cs + prm[4]);
            J[i] = e * cs;
            J[i + (size_t)ns] = -t * a * e * cs;
            J[i + 2 * (size_t)ns] = -t * a * e * sn;
            J[i + 3 * (size_t)ns] = -a * e * sn;
            J[i + 4 * (size_t)ns] = 1.0;
        }
        int rank = 0;
        rc = mbla_lstsq(ns, 5, 1, J, ns, r, ns, 1e-13, &rank, st);
        if (rc) break;
        double trial[5], lam = 1, ss1 = ss;
        for (int h = 0; h < 30; h++, lam *= 0.5) {
            for (int j = 0; j < 5; j++) trial[j] = prm[j] + lam * r[j];
            ss1 = sumsq(x, ns, dt, trial);
            if (ss1 <= ss) break;
        }
        if (!(ss1 <= ss)) break; /* no decrease: at the minimum to rounding */
        memcpy(prm, trial, sizeof trial);
        double d = fmax(fabs(lam * r[2]), fabs(lam * r[1])) / fabs(prm[2]);
        ss = ss1;
        if (d < 1e-14) break;
    }
    mbl_free(J), mbl_free(r);
    return rc;
}

/* x_i ~ e^{-s t} (A cos w t + B sin w t) + c for fixed s, w: prm[0] = a, prm[3] = p, prm[4] = c */
static int linear_start(const double *x, int ns, double dt, double *prm, mbl_status *st)
{
    double *J = mbl_alloc_array((size_t)ns * 3 + 1, sizeof *J), *r = mbl_alloc_array((size_t)ns + 1, sizeof *r);
    int rc = 0, rank = 0;
    if (!J || !r) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < ns; i++) {
        double t = i * dt, e = exp(-prm[1] * t);
        J[i] = e * cos(prm[2] * t);
        J[i + (size_t)ns] = e * sin(prm[2] * t);
        J[i + 2 * (size_t)ns] = 1.0;
        r[i] = x[i];
    }
    if (!rc) rc = mbla_lstsq(ns, 3, 1, J, ns, r, ns, 1e-13, &rank, st);
    if (!rc) prm[0] = hypot(r[0], r[1]), prm[3] = atan2(-r[1], r[0]), prm[4] = r[2];
    mbl_free(J), mbl_free(r);
    return rc;
}

static int signal_mode(const double *x, int ns, double dt, double f_hint, double sigma_hint, double *fft_hz,
                       double *sigma, double *omega_d, mbl_status *st);

int mbl_signal_mode(const double *x, int ns, double dt, double f_hint, double *fft_hz, double *sigma, double *omega_d,
                    mbl_status *st)
{
    return signal_mode(x, ns, dt, f_hint, 0.0, fft_hz, sigma, omega_d, st);
}

/* mbl_signal_mode with the fit started at the eigenvalue -sigma_hint + i 2 pi f_hint when sigma_hint
 * is not 0 (validate: the linear model's; the fit then finds the record's own optimum) */
static int signal_mode(const double *x, int ns, double dt, double f_hint, double sigma_hint, double *fft_hz,
                       double *sigma, double *omega_d, mbl_status *st)
{
    if (!x || ns < 16 || !(dt > 0)) return mbl_error(st, MBL_EARG, "mbl_signal_mode: need at least 16 samples");
    int P = next_pow2(4 * ns), rc = 0;
    double *xw = fftw_alloc_real((size_t)P);
    fftw_complex *X = fftw_alloc_complex((size_t)P / 2 + 1);
    fftw_plan pr = NULL;
    if (!xw || !X) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    double mean = 0;
    for (int i = 0; i < ns; i++) mean += x[i];
    mean /= ns;
    /* 1. Hann window, zero-padded spectrum, peak, Gaussian interpolation */
    for (int i = 0; i < P; i++) xw[i] = i < ns ? (x[i] - mean) * (0.5 - 0.5 * cos(2 * M_PI * i / (ns - 1))) : 0.0;
    pr = fftw_plan_dft_r2c_1d(P, xw, X, FFTW_ESTIMATE);
    if (!pr) {
        rc = mbl_error(st, MBL_ELIB, "FFTW: no plan");
        goto done;
    }
    fftw_execute(pr);
    double df = 1.0 / (P * dt);
    int k0 = 1, k1 = P / 2 - 1, kp = -1;
    if (f_hint > 0) {
        k0 = (int)fmax(1, floor(0.5 * f_hint / df));
        k1 = (int)fmin(P / 2 - 1, ceil(1.5 * f_hint / df));
    }
    double best = -1;
    for (int k = k0; k <= k1; k++) {
        double a = cabs(X[k]);
        if (a > best) best = a, kp = k;
    }
    if (kp < 1 || !(best > 0)) {
        rc = mbl_error(st, MBL_ENOCONV, "the signal has no spectral peak");
        goto done;
    }
    double fpk = (kp + sim_peak_offset(cabs(X[kp - 1]), best, cabs(X[kp + 1]))) * df;
    if (fft_hz) *fft_hz = fpk;
    /* 2. least-squares fit of the damped cosine to the samples, over windows of 2, 4, 8, ...
     * periods up to the whole record (each started from the last, so the phase error stays
     * within Gauss-Newton's reach): amplitude, phase and offset by linear least squares for the
     * current (sigma, omega_d), then all five by Gauss-Newton with step halving */
    /* validate starts from the eigenvalue (sigma_hint, 2 pi f_hint): on a short record of a strongly
     * damped mode the spectrum is one broad slope whose peak is no start */
    double f0 = sigma_hint != 0 && f_hint > 0 ? f_hint : fpk;
    double prm[5] = {0, sigma_hint, 2 * M_PI * f0, 0, mean};
    double per = 1.0 / (f0 * dt); /* samples per period */
    for (double win = 2;; win *= 2) {
        int nw = win * per >= ns ? ns : (int)(win * per);
        if (nw < 16) nw = ns < 16 ? ns : 16;
        rc = linear_start(x, nw, dt, prm, st);
        if (!rc) rc = refine(x, nw, dt, prm, st);
        if (rc || nw == ns) break;
    }
    if (rc) goto done;
    if (sigma) *sigma = prm[1];
    if (omega_d) *omega_d = fabs(prm[2]);
done:
    if (pr) fftw_destroy_plan(pr);
    fftw_free(xw), fftw_free(X);
    return rc;
}

/* The fastest growth rate (largest positive real part) among the modes other than k and its
 * conjugate; 0 when none grows. */
static double other_growth(const mbl_modes *modes, int k)
{
    const mbl_mode *mk = &modes->modes[k];
    double g = 0;
    for (int j = 0; j < modes->nx; j++) {
        const mbl_mode *m = &modes->modes[j];
        if (j == k || m->spurious || !isfinite(m->re) || (m->re == mk->re && m->im == -mk->im)) continue;
        if (m->re > g) g = m->re;
    }
    return g;
}

/* The user state j maximizing |ds_j| / |grad s_j| over the shape of mode k (-1 when no state
 * moves with it). */
static int pick_user_state(const mbl_model *md, const mbl_point *pt, const mbl_modes *modes, int k, int nus, int *out,
                           mbl_status *st)
{
    int n = pt->n;
    *out = -1;
    double *G = mbl_alloc_array((size_t)nus * (size_t)n + 1, sizeof *G);
    if (!G) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = mbl_model_user_states(md, pt, NULL, G, st);
    double best = 0;
    for (int j = 0; j < nus && !rc; j++) {
        double re = 0, im = 0, g2 = 0;
        for (int i = 0; i < n; i++) {
            double g = G[j + (size_t)i * nus];
            re += g * modes->shape_re[(size_t)k * n + i], im += g * modes->shape_im[(size_t)k * n + i];
            g2 += g * g;
        }
        double r = g2 > 0 ? hypot(re, im) / sqrt(g2) : 0;
        if (r > best) best = r, *out = j;
    }
    mbl_free(G);
    return rc;
}

/* The record of user state us along r1, minus its value along the unperturbed r0 (or at the point).
 * A state that is an angle from atan2 jumps by 2 pi where it wraps, at slightly different times on
 * the two trajectories; the perturbation itself is of the order of the amplitude (1e-5), so a
 * difference beyond pi is such a jump and is taken modulo 2 pi. */
static int user_state_record(const mbl_model *md, const mbl_point *pt, const mbl_sim_result *r1,
                             const mbl_sim_result *r0, int us, int nus, int ns, double *sigv, mbl_status *st)
{
    double *s1 = mbl_alloc_array((size_t)nus, sizeof *s1), *s0 = mbl_alloc_array((size_t)nus, sizeof *s0);
    int rc = s1 && s0 ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && !r0) rc = mbl_model_user_states(md, pt, s0, NULL, st);
    for (int s = 0; s < ns && !rc; s++) {
        mbl_point *p1 = NULL, *p0 = NULL;
        rc = mbl_sim_point(md, r1, s, &p1, st);
        if (!rc) rc = mbl_model_user_states(md, p1, s1, NULL, st);
        if (!rc && r0) rc = mbl_sim_point(md, r0, s, &p0, st);
        if (!rc && r0) rc = mbl_model_user_states(md, p0, s0, NULL, st);
        if (!rc) {
            double d = s1[us] - s0[us];
            if (fabs(d) > M_PI) d -= 2 * M_PI * nearbyint(d / (2 * M_PI));
            sigv[s] = d;
        }
        mbl_point_free(p1), mbl_point_free(p0);
    }
    mbl_free(s1), mbl_free(s0);
    return rc;
}

/* The start of mode k at a point with motion, in user states: the coordinates as mbl_sim_start
 * moves them (a Re(phi), phi scaled to 1 at its largest component), the velocities Re(s a phi)
 * plus the change that the turning of the state map asks (mbl_model_user_states_dv), so that the
 * start is the mode alone to first order in the user's states. */
static int moving_start(const mbl_model *md, const mbl_point *pt, const mbl_modes *modes, int k, double amp,
                        mbl_point **out, mbl_status *st)
{
    int n = pt->n, imax = 0, rc = 0;
    const double *pr = modes->shape_re + (size_t)k * n, *pi = modes->shape_im + (size_t)k * n;
    double best = -1;
    for (int i = 0; i < n; i++)
        if (hypot(pr[i], pi[i]) > best) best = hypot(pr[i], pi[i]), imax = i;
    double *w = mbl_alloc_array((size_t)4 * n + 1, sizeof *w), *dq = w, *dv = w ? w + n : NULL, *qv = w ? w + 2 * n : NULL;
    mbl_setting *set = mbl_calloc((size_t)2 * n + 1, sizeof *set);
    char *names = mbl_alloc_array((size_t)2 * n * 136 + 1, 1);
    if (!w || !set || !names) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double dr = pr[imax], di = pi[imax], d2 = dr * dr + di * di, sr = modes->modes[k].re, si = modes->modes[k].im;
    for (int i = 0; i < n && !rc; i++) {
        double ar = (pr[i] * dr + pi[i] * di) / d2, ai = (pi[i] * dr - pr[i] * di) / d2;
        dq[i] = amp * ar;
        qv[n + i] = pt->v[i] + amp * (sr * ar - si * ai);
    }
    if (!rc) rc = mbl_model_user_states_dv(md, pt, dq, dv, st);
    for (int i = 0; i < n && !rc; i++) {
        qv[i] = pt->q[i] + dq[i];
        qv[n + i] += dv[i];
        char *a = names + (size_t)(2 * i) * 136, *b = a + 136;
        snprintf(a, 136, "%s", mbl_model_coord_name(md, i));
        snprintf(b, 136, "der(%s)", mbl_model_coord_name(md, i));
        set[2 * i].name = a, set[2 * i].value = qv[i];
        set[2 * i + 1].name = b, set[2 * i + 1].value = qv[n + i];
    }
    if (!rc) rc = mbl_sim_start(md, pt, NULL, 0, 0, set, 2 * n, out, st);
    mbl_free(w), mbl_free(set), mbl_free(names);
    return rc;
}

/* A row whose mode cannot be measured (it grows beyond a linear record, or another growing mode
 * swamps it): no measured value, the start amplitude it would have had; the caller writes the note. */
static void not_measured(mbl_validate_row *row, double a0)
{
    row->measured = 0;
    row->meas_re = row->meas_im = row->meas_freq_hz = row->meas_zeta = row->fft_freq_hz = NAN;
    row->freq_rel_err = row->zeta_err = NAN;
    row->start_amplitude = a0;
    snprintf(row->signal, sizeof row->signal, "%s", "-");
}

/* The record of mode j: its row's prediction and notes, the span to simulate and the start amplitude
 * a0 (of the nominal amplitude amp); 0 when the mode is not simulated (the row says why). */
static int plan_row(const mbl_modes *modes, int j, const mbl_validate_options *opt, double amp, mbl_validate_row *row,
                    double *span_out, double *a0_out)
{
    const mbl_mode *mo = &modes->modes[j];
    memset(row, 0, sizeof *row);
    row->mode = j;
    row->pred_re = mo->re, row->pred_im = mo->im;
    row->pred_freq_hz = mo->freq_hz, row->pred_zeta = mo->damping_ratio;
    double Td = 2 * M_PI / mo->im, sig = -mo->re, a0 = amp;
    double span = opt->periods * Td;
    if (sig > 0 && 9.2 / sig < span) span = fmax(9.2 / sig, 3 * Td); /* until it decays to 1e-4 */
    row->measured = 1;
    if (sig < 0) { /* growing: until it has grown max_growth times, started low enough to stay linear */
        double tg = log(opt->max_growth) / -sig;
        if (tg < span) {
            span = fmax(tg, 3 * Td);
            snprintf(row->note, sizeof row->note, "growing: recorded for %.3g periods", span / Td);
        }
        double grow = exp(-sig * span);
        if (grow > opt->max_growth) a0 = amp * opt->max_growth / grow;
        if (!(a0 >= VALIDATE_MIN_START * amp)) {
            not_measured(row, a0);
            snprintf(row->note, sizeof row->note,
                     "not measured: grows %.3g times in 3 periods, beyond a linear record (--max-growth %g)",
                     exp(-sig * 3 * Td), opt->max_growth);
            return 0;
        }
    }
    /* another growing mode (faster than this one) amplifies the integrator's errors: the record
     * ends before it has grown VALIDATE_CONTAMINATION times, but holds at least one period */
    double sg = other_growth(modes, j);
    if (sg > 0 && sg > -sig && log(VALIDATE_CONTAMINATION) / sg < span) {
        span = log(VALIDATE_CONTAMINATION) / sg;
        snprintf(row->note, sizeof row->note, "recorded for %.3g periods (mode growing at %.4g/s)", span / Td, sg);
        if (span < Td) {
            not_measured(row, a0);
            snprintf(row->note, sizeof row->note, "not measured: a mode growing at %.4g/s swamps it within a period", sg);
            return 0;
        }
    }
    row->start_amplitude = a0;
    *span_out = span, *a0_out = a0;
    return 1;
}

static int validated(const mbl_mode *mo)
{
    return !mo->spurious && mo->kind == MBL_MODE_OSCILLATORY && mo->im > 0;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The validation's watch over each simulation (sim_watch): the stage "validate", the model time
 * simulated of all the runs' (done0 before this run, which starts at t0 and lasts span), and the
 * time budget. */
typedef struct vwatch {
    double done0, total, t0, span, cpu0, max_seconds;
    int mode, nmodes, refused;
} vwatch;

static int report_validate(void *ud, double t, long nsteps, mbl_status *st)
{
    vwatch *w = ud;
    double done = w->done0 + fmin(fmax(t - w->t0, 0.0), w->span);
    int rc = core_progress(st, "validate", done, w->total);
    if (rc || !(w->max_seconds > 0) || !isfinite(w->max_seconds)) return rc;
    double cpu = cpu_now() - w->cpu0;
    int probed = cpu >= VALIDATE_PROBE_SECONDS && (nsteps >= VALIDATE_PROBE_STEPS || w->done0 > 0) && done > 0;
    if (!probed && cpu <= w->max_seconds) return 0;
    w->refused = 1;
    if (!probed) /* past the limit before an estimate (cpu > max_seconds) */
        return mbl_error(st, MBL_ENOCONV,
                         "the simulations of %d mode(s) took %.3g s of CPU time, more than the limit of %g s "
                         "(--max-time), at %.3g s of their %.3g s of model time (mode %d, %ld steps): raise it (0: no "
                         "limit), or validate fewer modes (--modes) or periods (--periods)",
                         w->nmodes, cpu, w->max_seconds, done, w->total, w->mode, nsteps);
    double projected = cpu * w->total / done;
    if (projected <= w->max_seconds && cpu <= w->max_seconds) {
        w->refused = 0;
        return 0;
    }
    return mbl_error(st, MBL_ENOCONV,
                     "the simulations of %d mode(s) would take about %.3g s of CPU time (%.3g s of model time; "
                     "%.3g s of it took %.3g s, mode %d at %ld steps), more than the limit of %g s (--max-time): "
                     "raise it (0: no limit), or validate fewer modes (--modes) or periods (--periods)",
                     w->nmodes, projected, w->total, done, cpu, w->mode, nsteps, w->max_seconds);
}

int mbl_validate(const mbl_model *md, const mbl_point *pt, const mbl_modes *modes, const mbl_validate_options *opt_in,
                 mbl_validation **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_validate: out is NULL");
    *out = NULL;
    if (!md || !pt || !modes) return mbl_error(st, MBL_EARG, "mbl_validate: NULL argument");
    mbl_validate_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_validate_options_default(&opt);
    if (!(opt.max_growth > 1) || !isfinite(opt.max_growth))
        return mbl_error(st, MBL_EARG, "mbl_validate: max_growth must be a finite number above 1, got %g", opt.max_growth);
    if (isnan(opt.max_seconds)) return mbl_error(st, MBL_EARG, "mbl_validate: max_seconds is not a number");
    int n = pt->n, rc = 0;
    mbl_validation *V = mbl_calloc(1, sizeof *V);
    if (!V || !(V->rows = mbl_calloc((size_t)(opt.nmodes > 0 ? opt.nmodes : 1), sizeof *V->rows))) {
        mbl_validation_free(V);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int nus = info.nuser_states;
    int exact_start = nus + info.nhol == info.ncoord && !info.nnh && !info.nuser_velocity_states && !info.node_states &&
                      !info.nimplicit;
    double qmax = 1, vmax = 0;
    for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(pt->q[i])), vmax = fmax(vmax, fabs(pt->v[i]));
    V->amplitude = opt.amplitude * qmax;
    /* the model time of all the runs, for the progress and the time budget: each mode simulated
     * once, twice at a point with motion (the unperturbed trajectory too) */
    vwatch vw = {0, 0, pt->t, 0, cpu_now(), opt.max_seconds, 0, 0, 0};
    for (int j = 0, cnt = 0; j < modes->nx && cnt < opt.nmodes; j++) {
        mbl_validate_row row;
        double span = 0, a0 = 0;
        if (!validated(&modes->modes[j])) continue;
        cnt++;
        if (plan_row(modes, j, &opt, V->amplitude, &row, &span, &a0)) vw.total += span * (vmax > 0 ? 2 : 1), vw.nmodes++;
    }
    sim_watch watch = {report_validate, &vw};
    for (int j = 0; j < modes->nx && V->nrows < opt.nmodes && !rc; j++) {
        const mbl_mode *mo = &modes->modes[j];
        if (!validated(mo)) continue;
        mbl_validate_row *row = &V->rows[V->nrows];
        double span = 0, a0 = 0;
        if (!plan_row(modes, j, &opt, V->amplitude, row, &span, &a0)) {
            V->nrows++;
            continue;
        }
        double Td = 2 * M_PI / mo->im;
        /* the coordinate with the largest component of the shape */
        int ic = 0;
        double best = -1;
        for (int i = 0; i < n; i++) {
            double a = hypot(modes->shape_re[(size_t)j * n + i], modes->shape_im[(size_t)j * n + i]);
            if (a > best) best = a, ic = i;
        }
        snprintf(row->signal, sizeof row->signal, "%s", mbl_model_coord_name(md, ic));
        /* at a point with motion and user states, the user state that takes the largest part of
         * the shape (|ds_j| / |grad s_j|) instead: coordinates such as the Euler parameters of a
         * spinning body turn with the motion, and their record mixes the mode with it */
        int us = -1;
        if (vmax > 0 && nus > 0 && !rc) rc = pick_user_state(md, pt, modes, j, nus, &us, st);
        if (us >= 0) snprintf(row->signal, sizeof row->signal, "state %s", mbl_model_user_state_text(md, us));
        mbl_sim_options so;
        mbl_sim_options_default(&so);
        so.t_end = pt->t + span;
        so.dt_out = Td / (opt.samples > 8 ? opt.samples : 8);
        so.rtol = opt.rtol;
        if (opt.max_steps > 0) so.max_steps = opt.max_steps;
        so.atol = opt.atol * V->amplitude;
        mbl_point *s0 = NULL, *s1 = NULL;
        mbl_sim_result *r0 = NULL, *r1 = NULL;
        vw.mode = j + 1, vw.span = span;
        if (us >= 0 && exact_start) rc = moving_start(md, pt, modes, j, a0, &s1, st);
        else rc = mbl_sim_start(md, pt, modes, j, a0, NULL, 0, &s1, st);
        if (!rc) rc = sim_run(md, s1, &so, &watch, &r1, st);
        vw.done0 += span;
        if (!rc && vmax > 0) {
            rc = mbl_sim_start(md, pt, NULL, 0, 0, NULL, 0, &s0, st);
            if (!rc) rc = sim_run(md, s0, &so, &watch, &r0, st);
            vw.done0 += span;
        }
        if (rc && rc != MBL_ECANCELLED && !vw.refused) mbl_error_prefix(st, "mode %d", j + 1);
        double *sigv = rc ? NULL : mbl_alloc_array((size_t)r1->nt + 1, sizeof *sigv);
        if (!rc && !sigv) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            /* the last sample may be closer than dt_out: leave it out */
            int ns = r1->nt - (fabs((r1->t[r1->nt - 1] - r1->t[r1->nt - 2]) - so.dt_out) > 1e-9 * so.dt_out);
            if (us >= 0) rc = user_state_record(md, pt, r1, r0, us, nus, ns, sigv, st);
            else
                for (int s = 0; s < ns; s++)
                    sigv[s] = r1->q[(size_t)s * n + ic] - (r0 ? r0->q[(size_t)s * n + ic] : pt->q[ic]);
            double sg = 0, wd = 0, fh = 0;
            if (!rc) rc = signal_mode(sigv, ns, so.dt_out, mo->im / (2 * M_PI), -mo->re, &fh, &sg, &wd, st);
            if (!rc) {
                row->fft_freq_hz = fh;
                row->meas_re = -sg, row->meas_im = wd;
                double mag = hypot(sg, wd);
                row->meas_freq_hz = mag / (2 * M_PI);
                row->meas_zeta = sg / mag;
                row->freq_rel_err = fabs(row->meas_freq_hz - row->pred_freq_hz) / row->pred_freq_hz;
                row->zeta_err = fabs(row->meas_zeta - row->pred_zeta);
                row->seconds = span;
                row->nsteps = r1->nsteps;
                V->nrows++;
            } else {
                mbl_error_prefix(st, "mode %d (signal %s)", j + 1, row->signal);
            }
        }
        mbl_free(sigv);
        mbl_point_free(s0), mbl_point_free(s1);
        mbl_sim_result_free(r0), mbl_sim_result_free(r1);
    }
    if (!rc && V->nrows == 0) rc = mbl_error(st, MBL_EMODEL, "the linear model has no oscillatory mode to validate");
    if (rc) {
        mbl_validation_free(V);
        return rc;
    }
    *out = V;
    return 0;
}
