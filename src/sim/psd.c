/* Welch's power spectral density of a sampled signal, and a trajectory's signals by name
 * (include/mblin/sim.h, docs/simulation.md, "Random input and PSD"). FFTW's real transform. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "mblin/sim.h"
#include "sim_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* PSD_MIN_SEGMENT: the shortest segment (samples); PSD_DEFAULT_PEAKS: peaks listed by default;
 * PSD_LOBE: the Hann main lobe's half width in bins (a peak's power sums the bins within it) */
#define PSD_MIN_SEGMENT 8
#define PSD_DEFAULT_PEAKS 5
#define PSD_LOBE 2

double sim_peak_offset(double am, double a0, double ap)
{
    double lm = log(am + 1e-300), l0 = log(a0), lp = log(ap + 1e-300);
    double den = lm - 2 * l0 + lp;
    return den != 0 ? 0.5 * (lm - lp) / den : 0;
}

void mbl_psd_free(mbl_psd *p)
{
    if (!p) return;
    mbl_free(p->f), mbl_free(p->p), mbl_free(p->peaks);
    mbl_free(p);
}

static int by_prominence(const void *a, const void *b)
{
    double x = ((const mbl_psd_peak *)a)->prominence, y = ((const mbl_psd_peak *)b)->prominence;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* a local maximum's prominence as a ratio: P_j over the higher of its two bases, the lowest P
 * between it and the nearest higher bin on each side (or the spectrum's end; 0 Hz left out) */
static double prominence(const double *p, int nf, int j)
{
    double lmin = p[j], rmin = p[j];
    for (int i = j - 1; i >= 1 && p[i] <= p[j]; i--) lmin = fmin(lmin, p[i]);
    for (int i = j + 1; i < nf && p[i] <= p[j]; i++) rmin = fmin(rmin, p[i]);
    double base = fmax(lmin, rmin);
    return base > 0 ? p[j] / base : INFINITY;
}

/* the local maxima of P, the most prominent npeaks kept */
static int find_peaks(mbl_psd *R, int npeaks, mbl_status *st)
{
    const double *p = R->p;
    int nf = R->nf, nmax = 0;
    for (int j = 1; j + 1 < nf; j++) nmax += p[j] > p[j - 1] && p[j] >= p[j + 1];
    R->peaks = mbl_calloc((size_t)nmax + 1, sizeof *R->peaks);
    if (!R->peaks) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int n = 0;
    for (int j = 1; j + 1 < nf; j++) {
        if (!(p[j] > p[j - 1] && p[j] >= p[j + 1])) continue;
        double pw = 0;
        for (int i = j - PSD_LOBE; i <= j + PSD_LOBE; i++)
            if (i >= 0 && i < nf) pw += p[i];
        R->peaks[n++] = (mbl_psd_peak){(j + sim_peak_offset(p[j - 1], p[j], p[j + 1])) * R->df, p[j], pw * R->df,
                                       prominence(p, nf, j)};
    }
    qsort(R->peaks, (size_t)n, sizeof *R->peaks, by_prominence);
    R->npeaks = n < npeaks ? n : npeaks;
    return 0;
}

/* the segments' periodograms, averaged into R->p */
static int welch(const double *x, int ns, int L, mbl_psd *R, mbl_status *st)
{
    double *xw = fftw_alloc_real((size_t)L), *w = mbl_alloc_array((size_t)L, sizeof *w);
    fftw_complex *X = fftw_alloc_complex((size_t)L / 2 + 1);
    fftw_plan plan = xw && X ? fftw_plan_dft_r2c_1d(L, xw, X, FFTW_ESTIMATE) : NULL;
    int rc = 0;
    if (!xw || !X || !w) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    else if (!plan) rc = mbl_error(st, MBL_ELIB, "FFTW: no plan");
    double u = 0;
    for (int i = 0; !rc && i < L; i++) w[i] = 0.5 - 0.5 * cos(2 * M_PI * i / L), u += w[i] * w[i];
    int step = L - L / 2;
    R->nseg = (ns - L) / step + 1;
    for (int sg = 0; !rc && sg < R->nseg; sg++) {
        const double *seg = x + (size_t)sg * (size_t)step;
        double mean = 0;
        for (int i = 0; i < L; i++) mean += seg[i];
        mean /= L;
        for (int i = 0; i < L; i++) xw[i] = (seg[i] - mean) * w[i];
        fftw_execute(plan);
        for (int j = 0; j < R->nf; j++) R->p[j] += X[j][0] * X[j][0] + X[j][1] * X[j][1];
    }
    for (int j = 0; !rc && j < R->nf; j++) {
        double c = j == 0 || (L % 2 == 0 && j == L / 2) ? 1.0 : 2.0;
        R->p[j] *= c / (R->fs * u * R->nseg);
        R->f[j] = j * R->df;
        R->mean_square += R->p[j] * R->df;
    }
    if (plan) fftw_destroy_plan(plan);
    fftw_free(xw), fftw_free(X), mbl_free(w);
    return rc;
}

static int segment_of(int ns, const mbl_psd_options *opt)
{
    return opt && opt->segment > 0 ? opt->segment : (int)(ns / 4.5);
}

int mbl_psd_check(int ns, double dt, const mbl_psd_options *opt, mbl_status *st)
{
    if (ns < 1 || !(dt > 0) || !isfinite(dt)) return mbl_error(st, MBL_EARG, "mbl_psd_welch: no samples or a bad spacing");
    int L = segment_of(ns, opt);
    if (L > ns)
        return mbl_error(st, MBL_EARG, "the record of %d samples (every %g s) is shorter than one PSD segment of %d "
                         "samples (%g s): shorten the segment or lengthen the record", ns, dt, L, L * dt);
    if (L < PSD_MIN_SEGMENT)
        return mbl_error(st, MBL_EARG, "a PSD segment of %d samples (%g s) is shorter than %d samples: %s", L, L * dt,
                         PSD_MIN_SEGMENT, opt && opt->segment > 0 ? "lengthen the segment" : "lengthen the record");
    return 0;
}

int mbl_psd_welch(const double *x, int ns, double dt, const mbl_psd_options *opt, mbl_psd **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_psd_welch: out is NULL");
    *out = NULL;
    if (!x) return mbl_error(st, MBL_EARG, "mbl_psd_welch: no samples");
    int rc0 = mbl_psd_check(ns, dt, opt, st);
    if (rc0) return rc0;
    int L = segment_of(ns, opt);
    int npeaks = opt && opt->npeaks > 0 ? opt->npeaks : PSD_DEFAULT_PEAKS;
    for (int i = 0; i < ns; i++)
        if (!isfinite(x[i])) return mbl_error(st, MBL_EDOMAIN, "the signal's sample %d (t = %g s from its start) is not finite", i, i * dt);
    mbl_psd *R = mbl_calloc(1, sizeof *R);
    if (!R) return mbl_error(st, MBL_ENOMEM, "out of memory");
    R->segment = L, R->nf = L / 2 + 1, R->fs = 1.0 / dt, R->df = R->fs / L;
    R->f = mbl_calloc((size_t)R->nf, sizeof *R->f);
    R->p = mbl_calloc((size_t)R->nf, sizeof *R->p);
    int rc = !R->f || !R->p ? mbl_error(st, MBL_ENOMEM, "out of memory") : welch(x, ns, L, R, st);
    if (!rc) rc = find_peaks(R, npeaks, st);
    if (rc) {
        mbl_psd_free(R);
        return rc;
    }
    *out = R;
    return 0;
}

int mbl_sim_signal(const mbl_model *md, const mbl_sim_result *r, const char *name, double *x, mbl_status *st)
{
    if (!md || !r || !name || !x) return mbl_error(st, MBL_EARG, "mbl_sim_signal: NULL argument");
    const double *col[5] = {r->q, r->v, r->X, r->r, r->y};
    int cnt[5] = {r->n, r->n, r->nX, r->nr, r->ny};
    size_t len = strlen(name);
    int der = len > 5 && !strncmp(name, "der(", 4) && name[len - 1] == ')';
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < cnt[k]; i++) {
            const char *nm = k == 0 || k == 1 ? mbl_model_coord_name(md, i)
                           : k == 2          ? mbl_model_ode_state_name(md, i)
                           : k == 3          ? mbl_model_input_name(md, i)
                                             : mbl_model_output_name(md, i);
            int hit = k == 1 ? der && strlen(nm) == len - 5 && !strncmp(nm, name + 4, len - 5) : !strcmp(nm, name);
            if (!hit) continue;
            for (int s = 0; s < r->nt; s++) x[s] = col[k][(size_t)s * (size_t)cnt[k] + (size_t)i];
            return 0;
        }
    return mbl_error(st, MBL_EARG, "no signal '%s' in the trajectory (a coordinate, der(coordinate), an ODE state, an "
                     "input or an output of the model)", name);
}
