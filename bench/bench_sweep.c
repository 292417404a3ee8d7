/* Sweeps (docs/study.md, docs/benchmarks.md): a COUNT-point sweep of MODEL over PARAM from FROM to
 * TO on 1 and 2 threads; time per point (operating point + re-linearization in the workspace +
 * modes; the tracking after the points is timed apart), the 2-thread speed-up, and, for context,
 * the same points when the model is reloaded at each point. Medians of REPEATS runs. Also the
 * process CPU per point on 1 thread, and the warm-started equilibria (accepted, rejected, Newton
 * steps per point: docs/study.md, "Warm start"). The phases' split (mbl_sweep_options.phase_times,
 * a system call per reading) comes from one more 1-thread run, not counted in the medians.
 * usage: bench_sweep MODEL PARAM FROM TO [COUNT] [REPEATS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The process CPU of one 1-thread sweep of `pts` points from `from` at the spacing of `count`
 * points over [from, to] (the model loaded outside the clock), seconds; < 0 where it fails. */
static double sweep_cpu(char **argv, double from, double to, int count, int pts)
{
    mbl_status st;
    mbl_model *md = NULL;
    if (mbl_model_load_file(argv[1], NULL, 0, &md, &st)) {
        fprintf(stderr, "bench_sweep: %s\n", st.msg);
        return -1;
    }
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){argv[2], from, from + (to - from) * (pts - 1) / (count - 1), pts};
    so.threads = 1;
    mbl_sweep *sw = NULL;
    double c0 = cpu_now();
    int rc = mbl_sweep_run(md, &so, &sw, &st);
    double c = cpu_now() - c0;
    if (rc) fprintf(stderr, "bench_sweep: %s\n", st.msg);
    mbl_sweep_free(sw);
    mbl_model_free(md);
    return rc ? -1 : c;
}

/* The process CPU of one re-linearization evaluating its own Jacobian (issue 34's unit, as
 * bench_relin's MBLIN_BENCH_RELIN_JAC=1: the points' kept values hidden), seconds per call over
 * `calls` calls alternating between the model's point at `from` and a second one; < 0 on failure. */
static double relin_cpu(mbl_model *md, mbl_lin_work *w, mbl_linear *lw, mbl_point *p1, mbl_point *p2, int calls)
{
    mbl_status st;
    void *m1 = p1->jac_memo, *m2 = p2->jac_memo;
    p1->jac_memo = p2->jac_memo = NULL;
    double c0 = cpu_now();
    int rc = 0;
    for (int i = 0; i < calls && !rc; i++) rc = mbl_relinearize(w, (i & 1) ? p2 : p1, lw, &st);
    double c = (cpu_now() - c0) / calls;
    p1->jac_memo = m1, p2->jac_memo = m2;
    (void)md;
    if (rc) fprintf(stderr, "bench_sweep: %s\n", st.msg);
    return rc ? -1 : c;
}

/* MBLIN_BENCH_SWEEP_DIFF=1: the CPU of a sweep point without what a sweep does once (its first
 * point solved cold, the workspace, the corrector's tapes compiled): the process CPU of 1-thread
 * sweeps of COUNT points and of COUNT / 2 at the same spacing, interleaved REPEATS times; per point
 * the difference of the medians over COUNT - COUNT / 2, and of the fastest runs (the modes' tracking
 * included: about 3 % of the point's instructions on the N = 20 four-bar). On a machine shared
 * with other jobs the CPU clock, unlike the wall clock, counts this process alone. Each round also
 * times 1000 re-linearizations evaluating their own Jacobian (bench_relin's MBLIN_BENCH_RELIN_JAC=1)
 * at the model's point at FROM and a second point beside it, and prints the round's ratio. */
static int cpu_diff(char **argv, int count, int reps)
{
    double from = atof(argv[3]), to = atof(argv[4]), a[64], b[64], u[64], q[64];
    int half = count / 2, r = reps > 64 ? 64 : reps;
    if (count < 4) return 2;
    /* the unit beside the sweeps, in the same rounds (the machine's speed changes between runs) */
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p1 = NULL, *p2 = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lw = NULL;
    int pk = -1;
    mbl_model_info info;
    int rc = mbl_model_load_file(argv[1], NULL, 0, &md, &st);
    if (!rc) {
        mbl_model_get_info(md, &info);
        for (int i = 0; i < info.nparam; i++)
            if (!strcmp(mbl_model_param_name(md, i), argv[2])) pk = i;
        if (pk >= 0) rc = mbl_model_set_param(md, pk, from, &st);
    }
    if (!rc) rc = mbl_operating_point(md, NULL, &p1, &st);
    if (!rc) {
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        double *q2 = malloc(sizeof *q2 * (size_t)info.ncoord + 1);
        for (int i = 0; i < info.ncoord; i++) q2[i] = p1->q[i];
        q2[0] += 1e-3;
        po.at = MBL_AT_GIVEN, po.q = q2, po.v = p1->v;
        rc = mbl_operating_point(md, &po, &p2, &st);
        free(q2);
    }
    if (!rc) rc = mbl_lin_work_new(md, p1, NULL, &w, &lw, &st);
    if (rc) {
        fprintf(stderr, "bench_sweep: %s\n", st.msg);
        return 1;
    }
    for (int k = 0; k < r; k++) {
        a[k] = sweep_cpu(argv, from, to, count, count);
        u[k] = relin_cpu(md, w, lw, p1, p2, 1000);
        b[k] = sweep_cpu(argv, from, to, count, half);
        if (a[k] < 0 || b[k] < 0 || u[k] < 0) return 1;
        q[k] = (a[k] - b[k]) / (count - half) / u[k];
        printf("  round %d: sweep point %.2f us, re-linearization with its own Jacobian %.2f us, ratio %.2f\n", k + 1,
               1e6 * (a[k] - b[k]) / (count - half), 1e6 * u[k], q[k]);
    }
    qsort(u, (size_t)r, sizeof *u, cmp);
    qsort(q, (size_t)r, sizeof *q, cmp);
    printf("re-linearization with its own Jacobian: median %.2f us, fastest %.2f us; per-round ratio median %.2f\n",
           1e6 * u[r / 2], 1e6 * u[0], q[r / 2]);
    mbl_linear_free(lw);
    mbl_lin_work_free(w);
    mbl_point_free(p1), mbl_point_free(p2);
    mbl_model_free(md);
    qsort(a, (size_t)r, sizeof *a, cmp);
    qsort(b, (size_t)r, sizeof *b, cmp);
    printf("%s, %s = %s..%s at %d points' spacing, 1 thread: process CPU %.2f ms (%d points) and %.2f ms (%d), "
           "per point %.2f us (medians of %d); by the fastest runs %.2f us\n",
           argv[1], argv[2], argv[3], argv[4], count, 1e3 * a[r / 2], count, 1e3 * b[r / 2], half,
           1e6 * (a[r / 2] - b[r / 2]) / (count - half), r, 1e6 * (a[0] - b[0]) / (count - half));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_sweep MODEL PARAM FROM TO [COUNT] [REPEATS]\n");
        return 2;
    }
    int count = argc > 5 ? atoi(argv[5]) : 1000, reps = argc > 6 ? atoi(argv[6]) : 5;
    if (reps < 1) reps = 1;
    const char *diff = getenv("MBLIN_BENCH_SWEEP_DIFF");
    if (diff && diff[0] == '1') return cpu_diff(argv, count, reps);
    double med[3][2]; /* [1 thread, 2 threads, reload][points, total] */
    double cpu1 = 0;  /* process CPU per point, 1 thread, load and tracking included (median) */
    double split[4] = {0, 0, 0, 0}; /* 1 thread: load, operating point, linear model + modes, sensitivities per point */
    int nwarm = 0, pred = 0, wok = 0, wrej = 0;
    double wwork[7] = {0, 0, 0, 0, 0, 0, 0};
    double steps_mean = 0;
    for (int mode = 0; mode < 3; mode++) {
        double tp[64], tt[64], tc[64];
        int r = reps > 64 ? 64 : reps;
        if (mode == 2 && r > 1) r = 1; /* the reload path is slow: once */
        int pts = mode == 2 && count > 100 ? 100 : count;
        for (int k = 0; k < r + (mode == 0); k++) { /* k = r: mode 0's run with the phases timed */
            mbl_sweep_options so;
            mbl_sweep_options_default(&so);
            so.naxes = 1;
            so.axis[0] = (mbl_sweep_axis){argv[2], atof(argv[3]), atof(argv[4]), pts};
            so.threads = mode == 1 ? 2 : 1;
            so.force_reload = mode == 2;
            so.phase_times = k == r;
            mbl_status st;
            mbl_sweep *sw = NULL;
            double t0 = now(), c0 = cpu_now();
            mbl_model *md = NULL;
            int rc = mbl_model_load_file(argv[1], NULL, 0, &md, &st);
            if (!rc) rc = mbl_sweep_run(md, &so, &sw, &st);
            mbl_model_free(md);
            if (rc) {
                fprintf(stderr, "bench_sweep: %s\n", st.msg);
                return 1;
            }
            if (k < r) {
                tt[k] = (now() - t0) / pts;
                tc[k] = (cpu_now() - c0) / pts;
                tp[k] = sw->seconds / pts;
            }
            if (k == r) {
                split[0] = sw->seconds_load / pts, split[1] = sw->seconds_point / pts, split[2] = sw->seconds_lin / pts;
                split[3] = sw->seconds_sens / pts, nwarm = sw->nwarm, pred = sw->predictor;
                wok = sw->nwarm_ok, wrej = sw->nwarm_rejected;
                wwork[0] = (double)sw->warm_nF, wwork[1] = (double)sw->warm_njac, wwork[2] = (double)sw->warm_nscaled;
                wwork[3] = (double)sw->warm_nfactor, wwork[4] = (double)sw->warm_ndfdp;
                wwork[5] = (double)sw->warm_nchord, wwork[6] = (double)sw->warm_nchord_fallback;
                int ns = 0;
                for (int p = 0; p < pts; p++)
                    if (sw->steps[p] >= 0) steps_mean += sw->steps[p], ns++;
                steps_mean = ns ? steps_mean / ns : 0;
            }
            if (sw->nfailed) fprintf(stderr, "bench_sweep: %d points failed\n", sw->nfailed);
            mbl_sweep_free(sw);
        }
        qsort(tp, (size_t)r, sizeof *tp, cmp);
        qsort(tt, (size_t)r, sizeof *tt, cmp);
        qsort(tc, (size_t)r, sizeof *tc, cmp);
        med[mode][0] = tp[r / 2], med[mode][1] = tt[r / 2];
        if (mode == 0) cpu1 = tc[r / 2];
    }
    printf("%s, %s = %s..%s, %d points: 1 thread %.1f us/point (%.1f us with load and tracking), "
           "2 threads %.1f us/point (%.1f), speed-up %.2f; reload at each point %.0f us/point\n",
           argv[1], argv[2], argv[3], argv[4], count, 1e6 * med[0][0], 1e6 * med[0][1], 1e6 * med[1][0], 1e6 * med[1][1],
           med[0][0] / med[1][0], 1e6 * med[2][0]);
    printf("  1 thread per point: operating point %.1f us, re-linearization + modes %.1f us, sensitivities %.1f us "
           "(%s predictor); %d of %d points warm-started\n",
           1e6 * split[1], 1e6 * split[2], 1e6 * split[3], pred == MBL_PREDICT_SENSITIVITY ? "sensitivity" : "linear",
           nwarm, count);
    printf("  1 thread, process CPU per point (load, points, tracking): %.1f us\n", 1e6 * cpu1);
    printf("  warm-started equilibria: %d accepted, %d rejected (solved cold); %.2f Newton steps per point\n", wok, wrej,
           steps_mean);
    double d = wok > 0 ? wok : 1;
    printf("  per warm point: %.2f F, %.2f Jacobian, %.2f scaled residual, %.2f factorizations, %.2f dF/dp "
           "(tangents included), %.2f chord steps (%.2f did not contract)\n", wwork[0] / d, wwork[1] / d, wwork[2] / d,
           wwork[3] / d, wwork[4] / d, wwork[5] / d, wwork[6] / d);
    (void)split[0];
    return 0;
}
