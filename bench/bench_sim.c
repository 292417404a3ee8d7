/* Simulation speed (docs/simulation.md, "Benchmark"): the N-loop four-bar from its equilibrium,
 * mode 1 excited (amplitude 1e-3 rad in phi), IDA on the stabilized index-2 form with KLU and the
 * exact Jacobian, rtol 1e-8, atol 1e-10; median of `repeat` runs of the integration (wall and
 * CPU), steps per second, residual and Jacobian evaluations, and the cost of one residual and one
 * Jacobian evaluation of the model's tapes alone.
 *
 *   bench_sim MODEL.yaml [T_END (default 10)] [REPEAT (default 3)]
 *   (e.g. python3 examples/fourbar.py 100 > /tmp/fb100.yaml; bench_sim /tmp/fb100.yaml) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"
#include "mblin/sim.h"

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sim MODEL.yaml [T_END] [REPEAT]\n");
        return 2;
    }
    double t_end = argc > 2 ? atof(argv[2]) : 10;
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    if (repeat < 1 || repeat > 50) repeat = 3;
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL, *start = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    if (mbl_model_load_file(argv[1], NULL, 0, &md, &st) || mbl_operating_point(md, NULL, &pt, &st) ||
        mbl_linearize(md, pt, NULL, &lin, &st) || mbl_modal(lin, NULL, &modes, &st)) {
        fprintf(stderr, "bench_sim: %s\n", st.msg);
        return 1;
    }
    int mode = 0;
    while (mode < modes->nx && !(modes->modes[mode].im > 0)) mode++;
    if (mbl_sim_start(md, pt, modes, mode, 1e-3, NULL, 0, &start, &st)) {
        fprintf(stderr, "bench_sim: %s\n", st.msg);
        return 1;
    }
    mbl_sim_options so;
    mbl_sim_options_default(&so);
    so.t_end = t_end;
    so.dt_out = t_end / 100;
    double *tw = calloc((size_t)repeat, sizeof *tw), *tc = calloc((size_t)repeat, sizeof *tc);
    mbl_sim_result *R = NULL;
    for (int r = 0; r < repeat; r++) {
        mbl_sim_result_free(R);
        R = NULL;
        double w0 = wall(), c0 = cpu();
        if (mbl_simulate(md, start, &so, &R, &st)) {
            fprintf(stderr, "bench_sim: %s\n", st.msg);
            return 1;
        }
        tw[r] = wall() - w0, tc[r] = cpu() - c0;
    }
    qsort(tw, (size_t)repeat, sizeof *tw, cmp);
    qsort(tc, (size_t)repeat, sizeof *tc, cmp);
    double w = tw[repeat / 2], c = tc[repeat / 2];
    /* one residual and one Jacobian evaluation of the tapes alone */
    mbl_dae_eval *ev = NULL;
    mbl_dae_layout L;
    if (mbl_dae_eval_new(md, &ev, &st)) {
        fprintf(stderr, "bench_sim: %s\n", st.msg);
        return 1;
    }
    mbl_dae_eval_layout(ev, &L);
    double *x = calloc((size_t)L.nunk + 1, sizeof *x), *F = calloc((size_t)L.nF + 1, sizeof *F),
           *J = calloc((size_t)L.jnz + 1, sizeof *J);
    memcpy(x + L.col0[MBL_DAE_Q], start->q, (size_t)L.n * sizeof *x);
    int reps = 2000;
    double t0 = cpu();
    for (int i = 0; i < reps; i++) mbl_dae_eval_residual(ev, 0, x, F, &st);
    double tres = (cpu() - t0) / reps;
    t0 = cpu();
    for (int i = 0; i < reps / 4; i++) mbl_dae_eval_jacobian(ev, 0, x, J, &st);
    double tjac = (cpu() - t0) / (reps / 4);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    printf("%s: n = %d coordinates, m = %d constraints, IDA unknowns %d; t_end %g\n", argv[1], info.ncoord, info.nhol,
           2 * info.ncoord + 2 * info.nhol + info.nnh, t_end);
    printf("integration (median of %d): %.4f s wall, %.4f s CPU; %ld steps (%.0f steps/s CPU), %ld residual, %ld "
           "Jacobian evaluations, %ld error-test failures\n",
           repeat, w, c, R->nsteps, R->nsteps / c, R->nres, R->njac, R->netf);
    printf("one residual evaluation %.2f us, one Jacobian evaluation %.2f us (%d entries); |Phi| <= %.2e\n", 1e6 * tres,
           1e6 * tjac, L.jnz, R->phi_max);
    free(x), free(F), free(J), free(tw), free(tc);
    mbl_dae_eval_free(ev);
    mbl_sim_result_free(R);
    mbl_point_free(start);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}
