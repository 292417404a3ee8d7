/* Welch's PSD (src/sim/psd.c) against closed forms, and the band-limited random input
 * (src/sim/random.c) against its definition: docs/simulation.md, "Random input and PSD". */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mblin/sim.h"
#include "sim/sim_internal.h"
#include "test.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* a sine of amplitude a: its peak's power (the main lobe's sum of P df) is a^2 / 2, on a bin exactly,
 * half-way between two bins within the Hann window's scalloping of the lobe (0.5 %); the peak's
 * interpolated frequency within a tenth of a bin */
TEST(psd_sine_power)
{
    int ns = 8192, L = 1024;
    double fs = 64.0, a = 0.3, *x = malloc((size_t)ns * sizeof *x);
    double fbins[2] = {5.0, 5.0 + 0.5 * fs / L}; /* on bin 80, between 80 and 81 */
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < ns; i++) x[i] = 0.25 + a * sin(2 * M_PI * fbins[c] * i / fs + 0.3);
        mbl_psd_options po = {L, 3};
        mbl_psd *P = NULL;
        mbl_status st = {0};
        CHECK(mbl_psd_welch(x, ns, 1 / fs, &po, &P, &st) == 0);
        if (!P) continue;
        CHECK_EQ_INT(P->nseg, 15); /* (8192 - 1024) / 512 + 1 */
        CHECK_EQ_INT(P->nf, L / 2 + 1);
        CHECK_CLOSE(P->df, fs / L, 1e-15);
        CHECK(P->npeaks >= 1);
        CHECK_CLOSE(P->peaks[0].power, a * a / 2, c == 0 ? 1e-12 : 5e-3);
        CHECK(fabs(P->peaks[0].freq_hz - fbins[c]) < 0.1 * P->df);
        CHECK_CLOSE(P->mean_square, a * a / 2, c == 0 ? 1e-12 : 1e-3); /* the mean (0.25) removed */
        mbl_psd_free(P);
    }
    free(x);
}

/* Gaussian white noise of variance s^2 sampled at fs: one-sided level s^2 / (fs / 2) */
TEST(psd_white_noise_level)
{
    int ns = 1 << 17, L = 256;
    double fs = 100.0, s = 0.7, *x = malloc((size_t)ns * sizeof *x);
    uint64_t state = 12345;
    for (int i = 0; i < ns; i += 2) { /* Box-Muller on a 64-bit LCG (Knuth's MMIX constants) */
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double u1 = ((state >> 11) + 0.5) * 0x1.0p-53;
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double u2 = ((state >> 11) + 0.5) * 0x1.0p-53, r = s * sqrt(-2 * log(u1));
        x[i] = r * cos(2 * M_PI * u2), x[i + 1] = r * sin(2 * M_PI * u2);
    }
    mbl_psd_options po = {L, 0};
    mbl_psd *P = NULL;
    mbl_status st = {0};
    CHECK(mbl_psd_welch(x, ns, 1 / fs, &po, &P, &st) == 0);
    if (P) {
        double mean = 0;
        for (int j = 1; j < P->nf - 1; j++) mean += P->p[j];
        mean /= P->nf - 2;
        /* 1023 segments, 127 bins: the average's relative standard error is below 1 % */
        CHECK_CLOSE(mean, s * s / (fs / 2), 0.03);
        CHECK_CLOSE(P->mean_square, s * s, 0.03);
        mbl_psd_free(P);
    }
    free(x);
}

/* bad input: a record shorter than a segment, a segment below 8 samples, NaN */
TEST(psd_bad_input)
{
    double x[100] = {0};
    mbl_psd *P = NULL;
    mbl_status st = {0};
    mbl_psd_options po = {200, 0};
    CHECK(mbl_psd_welch(x, 100, 0.1, &po, &P, &st) == MBL_EARG && !P);
    CHECK(strstr(st.msg, "shorter than one PSD segment of 200 samples") != NULL);
    po.segment = 4;
    CHECK(mbl_psd_welch(x, 100, 0.1, &po, &P, &st) == MBL_EARG && !P);
    CHECK(mbl_psd_welch(x, 20, 0.1, NULL, &P, &st) == MBL_EARG && !P); /* default segment 4 samples */
    x[7] = NAN;
    CHECK(mbl_psd_welch(x, 100, 0.1, NULL, &P, &st) == MBL_EDOMAIN && !P);
}

/* the random input: over its period the mean square is rms^2 (equal amplitudes A = rms sqrt(2/K)
 * on the K lines of the band), its DFT has the K lines of amplitude A in the band and nothing else;
 * the same seed gives the same signal; bad specs refused in one line naming the input */
TEST(random_input_definition)
{
    sim_random r;
    mbl_status st = {0};
    double P = 64, dt = 0.125;                    /* 512 samples per period, Nyquist 4 Hz */
    int ns = 512;
    CHECK(sim_random_new("u", "random:band=0.5:2,rms=0.7,seed=9", 0, P, dt, &r, &st) == 0);
    CHECK_EQ_INT(r.nk, 97);                        /* lines 32..128 of df = 1/64 */
    CHECK_EQ_INT((int)r.k1, 32);
    double ms = 0, *x = malloc((size_t)ns * sizeof *x);
    for (int i = 0; i < ns; i++) x[i] = sim_random_eval(&r, 3 * P + i * dt), ms += x[i] * x[i];
    CHECK_CLOSE(sqrt(ms / ns), 0.7, 1e-12);
    double A = 0.7 * sqrt(2.0 / 97), worst_in = 0, worst_out = 0;
    for (int k = 0; k <= ns / 2; k++) { /* the DFT's amplitude at k / P Hz: 2 |X_k| / ns */
        double re = 0, im = 0;
        for (int i = 0; i < ns; i++) re += x[i] * cos(2 * M_PI * k * i / ns), im -= x[i] * sin(2 * M_PI * k * i / ns);
        double amp = 2 * hypot(re, im) / ns;
        if (k >= 32 && k <= 128) worst_in = fmax(worst_in, fabs(amp - A) / A);
        else worst_out = fmax(worst_out, amp / A);
    }
    CHECK(worst_in < 1e-10);
    CHECK(worst_out < 1e-10);
    sim_random r2;
    CHECK(sim_random_new("u", "random:seed=9,rms=0.7,band=0.5:2", 0, P, dt, &r2, &st) == 0);
    CHECK(sim_random_eval(&r2, 1.2345) == sim_random_eval(&r, 1.2345));
    sim_random_free(&r2);
    CHECK(sim_random_new("u", "random:seed=10,rms=0.7,band=0.5:2", 0, P, dt, &r2, &st) == 0);
    CHECK(sim_random_eval(&r2, 1.2345) != sim_random_eval(&r, 1.2345));
    sim_random_free(&r2);
    CHECK(sim_random_new("u", "random:band=0.5:2,rms=1,seed=9007199254740992", 0, P, dt, &r2, &st) == 0); /* 2^53 */
    sim_random_free(&r2);
    sim_random_free(&r);
    free(x);
    const char *bad[][2] = {
        {"random:band=0.5:5,rms=1", "not below the Nyquist frequency 4 Hz"},
        {"random:band=0.5:2,rms=-1", "rms must be positive"},
        {"random:band=2:1,rms=1", "0 <= F1 < F2"},
        {"random:band=0.5:2", "needs band=F1:F2 (Hz) and rms=R"},
        {"random:band=0.5:2,rms=1,colour=pink", "unknown key 'colour'"},
        {"random:band=0.5:2,rms=1,seed=1.5", "seed must be an integer"},
        {"random:band=0.501:0.51,rms=1", "holds no line"},
        {"random:band=1,rms=1", "band expects F1:F2"},
        {"random:band=0.5:2,rms=1,seed=1,seed=2", "key 'seed' given twice"},       /* not the last one silently */
        {"random:band=0.5:2,rms=1,", "'' is not KEY=VALUE"},                      /* a trailing ',' as ",," */
        {"random:band=0.5:2,rms=1,seed=9007199254740993", "from 0 to 2^53, got '9007199254740993'"}, /* not 2^53 */
        {"random:band=0.5:2,rms=1e308", "rms 1e+308 is too large"},               /* its sum overflows to inf */
        {"random:band=0.5:2,rms=1,period=1e300", "1.5e+300 lines"},               /* %g, not 300 digits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&st, 0, sizeof st);
        CHECK(sim_random_new("u", bad[i][0], 0, P, dt, &r, &st) == MBL_EARG);
        CHECK(strstr(st.msg, bad[i][1]) != NULL && strstr(st.msg, "input 'u'") != NULL && !strchr(st.msg, '\n'));
        if (!strstr(st.msg, bad[i][1])) printf("  %s: %s\n", bad[i][0], st.msg);
        sim_random_free(&r);
    }
}

int main(void)
{
    RUN(psd_sine_power);
    RUN(psd_white_noise_level);
    RUN(psd_bad_input);
    RUN(random_input_definition);
    return test_summary("psd");
}
