/* A seeded band-limited random input for mbl_simulate (include/mblin/sim.h, docs/simulation.md,
 * "Random input and PSD"): the input's text "random:band=F1:F2,rms=R,seed=S[,period=P]" makes the
 * random-phase multisine
 *
 *   x(t) = sum_{k = k1..k2} A cos(2 pi k df t + phi_k),   df = 1/P,  A = R sqrt(2 / K),
 *
 * over the K = k2 - k1 + 1 lines k df of the band (k1 = max(1, ceil(F1/df)), k2 = floor(F2/df)),
 * phi_k = 2 pi u_k with u_1, u_2, ... the numbers of splitmix64 from the seed (the top 53 bits of
 * each 64-bit output, times 2^-53), one per line in increasing frequency. Its amplitude spectrum is
 * flat in the band and zero outside, its mean square over a period is exactly R^2 (over any long
 * record nearly), and it is C-infinity smooth, so the integrator meets no kinks. The same seed
 * gives the same phases on every machine (integer arithmetic); the sum is evaluated by Horner's
 * rule in z = e^{i 2 pi df t} (one complex multiply-add per line, four chains interleaved). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

const char SIM_RANDOM_PREFIX[] = "random:";

int sim_random_is(const char *expr)
{
    return expr && !strncmp(expr, SIM_RANDOM_PREFIX, sizeof SIM_RANDOM_PREFIX - 1);
}

/* splitmix64 (Steele, Lea, Flood 2014): the state advances by the golden-ratio constant */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* a number of the spec: the whole text up to the end (or stop) read, finite */
static int spec_number(const char *p, size_t len, double *x)
{
    char buf[64];
    if (!len || len >= sizeof buf) return -1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *end = NULL;
    *x = strtod(buf, &end);
    return end == buf || *end || !isfinite(*x) ? -1 : 0;
}

typedef struct rspec {
    double f1, f2, rms, seed, period;
    int has_band, has_rms;
    unsigned given; /* a bit per key seen: band, rms, seed, period */
} rspec;

/* the seed: an integer up to 2^53 read exactly when written in digits (strtod would round 2^53 + 1
 * to 2^53), else as a number that spec_check requires to be a whole one */
static int spec_seed(const char *v, size_t vl, double *seed)
{
    if (vl && strspn(v, "0123456789") >= vl) {
        unsigned long long s = 0;
        for (size_t i = 0; i < vl; i++)
            if ((s = s * 10 + (unsigned long long)(v[i] - '0')) > (1ULL << 53)) return -1;
        *seed = (double)s;
        return 0;
    }
    return spec_number(v, vl, seed);
}

/* one key=value of the spec into R; a message in why otherwise */
static int spec_item(const char *p, size_t len, rspec *R, char *why, size_t wl)
{
    const char *eq = memchr(p, '=', len);
    if (!eq) return snprintf(why, wl, "'%.*s' is not KEY=VALUE", (int)len, p), -1;
    size_t kl = (size_t)(eq - p), vl = len - kl - 1;
    const char *v = eq + 1;
    static const char *const keys[] = {"band", "rms", "seed", "period"};
    for (unsigned i = 0; i < 4; i++)
        if (kl == strlen(keys[i]) && !strncmp(p, keys[i], kl)) {
            if (R->given & 1u << i) return snprintf(why, wl, "key '%s' given twice", keys[i]), -1;
            R->given |= 1u << i;
        }
    if (kl == 4 && !strncmp(p, "band", 4)) {
        const char *colon = memchr(v, ':', vl);
        if (!colon || spec_number(v, (size_t)(colon - v), &R->f1) ||
            spec_number(colon + 1, vl - (size_t)(colon - v) - 1, &R->f2))
            return snprintf(why, wl, "band expects F1:F2 in Hz, got '%.*s'", (int)vl, v), -1;
        R->has_band = 1;
        return 0;
    }
    double *dst = kl == 3 && !strncmp(p, "rms", 3)      ? &R->rms
                : kl == 4 && !strncmp(p, "seed", 4)     ? &R->seed
                : kl == 6 && !strncmp(p, "period", 6)   ? &R->period
                                                        : NULL;
    if (!dst) return snprintf(why, wl, "unknown key '%.*s' (band, rms, seed, period)", (int)kl, p), -1;
    if (dst == &R->seed ? spec_seed(v, vl, dst) : spec_number(v, vl, dst))
        return dst == &R->seed ? snprintf(why, wl, "seed must be an integer from 0 to 2^53, got '%.*s'", (int)vl, v)
                               : snprintf(why, wl, "%.*s expects a number, got '%.*s'", (int)kl, p, (int)vl, v),
               -1;
    R->has_rms |= dst == &R->rms;
    return 0;
}

/* the spec's values checked against the record; a message in why otherwise */
static int spec_check(const rspec *R, double dt_out, char *why, size_t wl)
{
    double nyq = 0.5 / dt_out;
    if (!R->has_band || !R->has_rms) return snprintf(why, wl, "needs band=F1:F2 (Hz) and rms=R"), -1;
    if (!(R->f1 >= 0) || !(R->f2 > R->f1))
        return snprintf(why, wl, "the band %g:%g Hz must have 0 <= F1 < F2", R->f1, R->f2), -1;
    if (!(R->f2 < nyq))
        return snprintf(why, wl, "the band's upper edge %g Hz is not below the Nyquist frequency %g Hz of the samples "
                        "(dt_out %g s): lower the band or the output interval", R->f2, nyq, dt_out), -1;
    if (!(R->rms > 0)) return snprintf(why, wl, "rms must be positive, got %g", R->rms), -1;
    if (!(R->seed >= 0 && R->seed <= 9007199254740992.0 && R->seed == floor(R->seed)))
        return snprintf(why, wl, "seed must be an integer from 0 to 2^53, got %g", R->seed), -1;
    if (!(R->period > 0)) return snprintf(why, wl, "period must be positive, got %g", R->period), -1;
    return 0;
}

int sim_random_new(const char *name, const char *spec, int input, double span, double dt_out, sim_random *out,
                   mbl_status *st)
{
    memset(out, 0, sizeof *out);
    rspec R = {0};
    R.seed = 1, R.period = span;
    char why[256] = "";
    const char *p = spec + sizeof SIM_RANDOM_PREFIX - 1;
    int bad = !*p ? (snprintf(why, sizeof why, "needs band=F1:F2 (Hz) and rms=R"), -1) : 0;
    while (!bad) { /* each item up to a ',' or the end: a trailing ',' leaves an empty one, refused */
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bad = spec_item(p, len, &R, why, sizeof why);
        if (!e) break;
        p = e + 1;
    }
    if (!bad) bad = spec_check(&R, dt_out, why, sizeof why);
    double df = 1.0 / R.period;
    double k1 = fmax(1.0, ceil(R.f1 / df - 1e-9)), k2 = floor(R.f2 / df + 1e-9);
    if (!bad && !(k2 >= k1))
        bad = (snprintf(why, sizeof why, "the band %g:%g Hz holds no line of the period's grid (spacing 1/%g s = %g Hz): "
                        "widen the band or lengthen the period", R.f1, R.f2, R.period, df), -1);
    if (!bad && k2 - k1 + 1 > SIM_RANDOM_MAX_LINES)
        bad = (snprintf(why, sizeof why, "%.4g lines (band / (1/period)), more than %d: narrow the band or shorten the "
                        "period", k2 - k1 + 1, SIM_RANDOM_MAX_LINES), -1);
    if (!bad && !isfinite(R.rms * sqrt(2.0 * (k2 - k1 + 1)))) /* |x| <= K A = rms sqrt(2 K) */
        bad = (snprintf(why, sizeof why, "rms %g is too large: the input's bound rms sqrt(2 K) over its %.0f lines "
                        "overflows a double", R.rms, k2 - k1 + 1), -1);
    if (bad) return mbl_error(st, MBL_EARG, "input '%s' = '%s': %s", name, spec, why);
    out->input = input;
    out->df = df;
    out->k1 = (long)k1;
    out->nk = (int)(k2 - k1 + 1);
    out->rms = R.rms;
    out->c = mbl_calloc((size_t)(out->nk + 3) / 4 * 8 + 2, sizeof *out->c); /* zero-padded to whole chains */
    if (!out->c) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double A = R.rms * sqrt(2.0 / out->nk);
    uint64_t state = (uint64_t)R.seed;
    for (int k = 0; k < out->nk; k++) {
        double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53;
        out->c[2 * k] = A * cos(2 * M_PI * u), out->c[2 * k + 1] = A * sin(2 * M_PI * u);
    }
    return 0;
}

double sim_random_eval(sim_random *r, double t)
{
    if (r->has_last && t == r->t_last) return r->x_last; /* IDA's Newton iterations at one time */
    /* z = e^{i 2 pi df t}, z^k1 from the fractional part of its turns (accurate for large t); four
     * interleaved Horner chains in z^4 (lines k1 + 4m + j), so that the products do not wait on
     * each other, the complex products written out (no C99 Annex G checks in the loop) */
    double turns = r->df * t, base = (double)r->k1 * turns;
    turns -= floor(turns), base -= floor(base);
    double zr = cos(2 * M_PI * turns), zi = sin(2 * M_PI * turns);
    double z2r = zr * zr - zi * zi, z2i = 2 * zr * zi, wr = z2r * z2r - z2i * z2i, wi = 2 * z2r * z2i;
    double ar[4] = {0}, ai[4] = {0};
    const double *c = r->c;
    int nm = (r->nk + 3) / 4; /* the chains' length; c is zero-padded to 4 nm lines */
    for (int m = nm - 1; m >= 0; m--)
        for (int j = 0; j < 4; j++) {
            const double *cj = c + 2 * (4 * m + j);
            double nr = ar[j] * wr - ai[j] * wi + cj[0], ni = ar[j] * wi + ai[j] * wr + cj[1];
            ar[j] = nr, ai[j] = ni;
        }
    /* sum_j z^j chain_j, then times z^k1 */
    double sr = ar[3], si = ai[3];
    for (int j = 2; j >= 0; j--) {
        double nr = sr * zr - si * zi + ar[j], ni = sr * zi + si * zr + ai[j];
        sr = nr, si = ni;
    }
    r->t_last = t, r->has_last = 1;
    r->x_last = sr * cos(2 * M_PI * base) - si * sin(2 * M_PI * base);
    return r->x_last;
}

void sim_random_free(sim_random *r)
{
    if (r) mbl_free(r->c), r->c = NULL;
}
