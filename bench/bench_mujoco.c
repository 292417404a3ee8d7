/* mblin against MuJoCo (Debian libmujoco-dev 2.2.2) on the same URDF robot: time per
 * linearization and eigenvalue error (docs/benchmarks.md, "Robots: mblin and MuJoCo").
 * usage: bench_mujoco ROBOT.urdf [REPEATS] [TIMESTEP]
 *
 * MuJoCo: mj_loadXML reads the URDF; at qpos = 0, qvel = 0 mjd_transitionFD (centred differences,
 * eps 1e-6) gives the discrete-time A of one time step; its eigenvalues mu become continuous ones
 * by s = log(mu) / dt. mblin: the URDF in joint coordinates, its equilibrium (the same hanging
 * configuration), mbl_relinearize per point and the eigenvalues of the exact A. The error is the
 * largest |s_mujoco - s_mblin| / |s_mblin| over mblin's eigenvalues (nearest MuJoCo eigenvalue).
 * Timings: medians over batches (OPENBLAS_NUM_THREADS=1 for both). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lapacke.h>
#include <mujoco/mujoco.h>

#include "mblin/mblin.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_mujoco ROBOT.urdf [REPEATS] [TIMESTEP]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 200;
    double dt = argc > 3 ? atof(argv[3]) : 0;
    if (repeats < 20) repeats = 20;
    char err[1000] = "";
    mjModel *m = mj_loadXML(argv[1], NULL, err, sizeof err);
    if (!m) {
        fprintf(stderr, "bench_mujoco: MuJoCo cannot load %s: %s\n", argv[1], err);
        return 1;
    }
    if (dt > 0) m->opt.timestep = dt;
    dt = m->opt.timestep;
    mjData *d = mj_makeData(m);
    int nv = m->nv, nx = 2 * nv + m->na;
    mjtNum *A = malloc(sizeof *A * (size_t)nx * (size_t)nx);
    mjtNum *B = malloc(sizeof *B * (size_t)nx * (size_t)(m->nu ? m->nu : 1));
    const int batch = 10;
    int nb = repeats / batch;
    double *t = malloc(sizeof *t * (size_t)nb);
    for (int b = 0; b < nb; b++) {
        double t0 = now();
        for (int k = 0; k < batch; k++) {
            mj_resetData(m, d);
            mj_forward(m, d);
            mjd_transitionFD(m, d, 1e-6, 1, A, m->nu ? B : NULL, NULL, NULL);
        }
        t[b] = (now() - t0) / batch;
    }
    qsort(t, (size_t)nb, sizeof *t, cmpd);
    double t_mj = t[nb / 2];
    /* continuous eigenvalues of MuJoCo's step */
    double *Acm = malloc(sizeof *Acm * (size_t)nx * (size_t)nx), *wr = malloc(sizeof *wr * (size_t)nx),
           *wi = malloc(sizeof *wi * (size_t)nx);
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < nx; j++) Acm[i + (size_t)nx * j] = A[(size_t)nx * i + j]; /* row-major -> column */
    LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', nx, Acm, nx, wr, wi, NULL, 1, NULL, 1);
    double complex *smj = malloc(sizeof *smj * (size_t)nx);
    for (int i = 0; i < nx; i++) smj[i] = clog(wr[i] + I * wi[i]) / dt;

    /* mblin on the same file */
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_lin_work *w = NULL;
    double tl0 = now();
    if (mbl_model_load_file(argv[1], NULL, 0, &md, &st) || mbl_operating_point(md, NULL, &pt, &st) ||
        mbl_lin_work_new(md, pt, NULL, &w, &lin, &st)) {
        fprintf(stderr, "bench_mujoco: mblin: %s\n", st.msg);
        return 1;
    }
    double t_load = now() - tl0;
    for (int b = 0; b < nb; b++) {
        double t0 = now();
        for (int k = 0; k < batch; k++)
            if (mbl_relinearize(w, pt, lin, &st)) {
                fprintf(stderr, "bench_mujoco: mblin: %s\n", st.msg);
                return 1;
            }
        t[b] = (now() - t0) / batch;
    }
    qsort(t, (size_t)nb, sizeof *t, cmpd);
    double t_mb = t[nb / 2];
    mbl_modes *modes = NULL;
    if (mbl_modal(lin, NULL, &modes, &st)) {
        fprintf(stderr, "bench_mujoco: mblin: %s\n", st.msg);
        return 1;
    }
    double worst = 0;
    int nmb = 0;
    for (int i = 0; i < modes->nx; i++) {
        double complex s = modes->modes[i].re + I * modes->modes[i].im;
        if (cabs(s) < 1e-9) continue;
        double best = INFINITY;
        for (int j = 0; j < nx; j++) best = fmin(best, cabs(smj[j] - s));
        worst = fmax(worst, best / cabs(s));
        nmb++;
    }
    printf("%s: n = %d joints; MuJoCo mjd_transitionFD (dt %g): median %.1f us; mblin relinearize: median %.1f us "
           "(load, compile, equilibrium and first linearization %.3f s); eigenvalue error of MuJoCo vs mblin "
           "(max relative over %d): %.3g\n",
           argv[1], nv, dt, 1e6 * t_mj, 1e6 * t_mb, t_load, nmb, worst);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    mbl_point_free(pt);
    mbl_model_free(md);
    mj_deleteData(d);
    mj_deleteModel(m);
    free(A);
    free(B);
    free(t);
    free(Acm);
    free(wr);
    free(wi);
    free(smj);
    return 0;
}
