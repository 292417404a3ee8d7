/* MuJoCo's linearization of a model at qpos = 0 (bench/peers.py: the hanging chain straight down),
 * for the peer benchmark: the median time per mjd_transitionFD call (centered differences, the
 * discrete-time A of one semi-implicit Euler step of size h) over batches, and the continuous
 * eigenvalues recovered from it: dqacc/dq = A_vq / h, dqacc/dv = (A_vv - I) / h, eigenvalues of
 * [0 I; dqacc/dq dqacc/dv] by LAPACK dgeev, printed one per line as "eig RE IM".
 * usage: peer_mujoco MODEL.xml [REPEATS] */
#include <lapacke.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: peer_mujoco MODEL.xml [REPEATS]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 1000, batch = 20, nb = repeats / batch;
    if (nb < 3) nb = 3;
    char err[1000] = "";
    mjModel *m = mj_loadXML(argv[1], NULL, err, sizeof err);
    if (!m) {
        fprintf(stderr, "peer_mujoco: %s\n", err);
        return 1;
    }
    mjData *d = mj_makeData(m);
    int nv = m->nv, nx = 2 * nv;
    double h = m->opt.timestep;
    double *A = malloc(sizeof *A * (size_t)nx * nx), *t = malloc(sizeof *t * (size_t)nb);
    mj_forward(m, d);
    for (int b = -1; b < nb; b++) {
        double t0 = bench_now();
        for (int i = 0; i < batch; i++) mjd_transitionFD(m, d, 1e-6, 1, A, NULL, NULL, NULL);
        if (b >= 0) t[b] = (bench_now() - t0) / batch;
    }
    qsort(t, (size_t)nb, sizeof *t, bench_cmp_double);
    printf("mjd_transitionFD nv = %d: median %.2f us, min %.2f us\n", nv, 1e6 * t[nb / 2], 1e6 * t[0]);
    /* A is row-major nx x nx with the state [dq; dv] */
    double *Ac = calloc((size_t)nx * nx, sizeof *Ac), *wr = malloc(sizeof *wr * nx), *wi = malloc(sizeof *wi * nx);
    for (int i = 0; i < nv; i++) {
        Ac[i * nx + nv + i] = 1.0;
        for (int j = 0; j < nv; j++) {
            Ac[(nv + i) * nx + j] = A[(nv + i) * nx + j] / h;
            Ac[(nv + i) * nx + nv + j] = (A[(nv + i) * nx + nv + j] - (i == j)) / h;
        }
    }
    int info = LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', nx, Ac, nx, wr, wi, NULL, nx, NULL, nx);
    if (info) {
        fprintf(stderr, "peer_mujoco: dgeev info %d\n", info);
        return 1;
    }
    for (int i = 0; i < nx; i++) printf("eig %.17g %.17g\n", wr[i], wi[i]);
    free(A), free(t), free(Ac), free(wr), free(wi);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
