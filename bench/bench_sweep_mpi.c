/* A sweep over MPI ranks (docs/parallel.md): the library's mbl_sweep_run with the MPI plugin's
 * gather, as `mpirun -n P mblin sweep` runs it, timed. Run it as one process (no plugin) and under
 * mpiexec -n P; rank 0 prints one line of key=value:
 *   points, ranks, threads (per rank), wall (s, the whole mbl_sweep_run on rank 0: model loading,
 *   first point, this rank's points, gather, tracking), points_wall (s, start to gathered),
 *   gather_wait (s, rank 0 inside the gather: waiting for the slowest rank + transfer), cpu (s,
 *   process CPU time of each rank), cpu_work (s, each rank's CPU up to the gather: loading, first
 *   point, its points), cpu_after (s, rank 0 after the gather: unpacking, tracking; cpu - cpu_work -
 *   cpu_after is MPI polling while a rank waits), point_cpu_us (thread CPU per point summed over ranks: loading,
 *   operating point, linear model + modes, sensitivities), bytes (gathered to rank 0), bytes per
 *   point, maxrss_mib (each rank's peak resident memory).
 * With OUT.csv the sweep's CSV is written there (to compare runs).
 * usage: [mpiexec -n P] bench_sweep_mpi MODEL PARAM FROM TO COUNT [THREADS] [OUT.csv] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mblin/mblin.h"
#include "par/par.h"

static double now(void)
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

static const mbl_par *par;
static double gather_wait, c0, cpu_in, cpu_out; /* process CPU at the start, entering and leaving the gather */

static int timed_gather(void *ud, const double *buf, size_t n, double **all, size_t *counts, mbl_status *st)
{
    (void)ud;
    double t0 = now();
    cpu_in = cpu();
    int rc = par->gather(buf, n, all, counts, st);
    cpu_out = cpu();
    gather_wait += now() - t0;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: [mpiexec -n P] bench_sweep_mpi MODEL PARAM FROM TO COUNT [THREADS] [OUT.csv]\n");
        return 2;
    }
    int launched = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
    int rank = 0, size = 1;
    mbl_status st;
    mbl_status_clear(&st);
    if (launched) {
        void *h = dlopen(MBLIN_PAR_PLUGIN, RTLD_NOW | RTLD_GLOBAL);
        par = h ? dlsym(h, MBL_PAR_SYMBOL) : NULL;
        if (!par || par->abi != MBL_PAR_ABI || par->init(&st)) {
            fprintf(stderr, "bench_sweep_mpi: %s: %s\n", MBLIN_PAR_PLUGIN, h ? st.msg : dlerror());
            return 1;
        }
        rank = par->rank(), size = par->size();
    }
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){argv[2], atof(argv[3]), atof(argv[4]), atoi(argv[5])};
    so.threads = argc > 6 ? atoi(argv[6]) : 1;
    so.phase_times = 1; /* its per-point CPU figure is the phases' sum */
    mbl_sweep_dist dist = {rank, size, timed_gather, NULL};
    if (size > 1) so.dist = &dist;
    double *none = NULL;
    size_t *cnt = rank == 0 ? calloc((size_t)size, sizeof *cnt) : NULL;
    if (par && par->gather(NULL, 0, &none, cnt, &st) == 0) mbl_free(none); /* start together */
    c0 = cpu();
    double t0 = now();
    mbl_sweep *sw = NULL;
    mbl_model *md = NULL;
    mbl_model_load_file(argv[1], NULL, 0, &md, &st); /* a failure: md NULL, the sweep reports it to every rank */
    int rc = mbl_sweep_run(md, &so, &sw, &st);
    mbl_model_free(md);
    double wall = now() - t0, mycpu = cpu() - c0;
    if (size == 1) cpu_in = cpu_out = cpu(); /* no gather: all of it is work */
    if (rc) fprintf(stderr, "bench_sweep_mpi: rank %d: %s\n", rank, st.msg);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* CPU: the whole run, up to the gather (loading, first point, this rank's points), after it (rank
     * 0: unpacking, tracking); the difference is MPI's polling while waiting in the gather */
    double mine[4] = {mycpu, ru.ru_maxrss / 1024.0, cpu_in - c0, c0 + mycpu - cpu_out}, *all = NULL;
    if (par) {
        if (par->gather(mine, 4, &all, cnt, &st)) return 1;
    } else {
        all = mbl_malloc(sizeof mine);
        memcpy(all, mine, sizeof mine);
    }
    if (rank == 0 && sw) {
        double pc = (sw->seconds_load + sw->seconds_point + sw->seconds_lin + sw->seconds_sens) / sw->npoints * 1e6;
        printf("points=%d ranks=%d threads=%d wall=%.3f points_wall=%.3f gather_wait=%.4f cpu=", sw->npoints, size,
               sw->threads, wall, sw->seconds, gather_wait);
        for (int r = 0; r < size; r++) printf("%s%.3f", r ? "," : "", all[4 * r]);
        printf(" cpu_work=");
        for (int r = 0; r < size; r++) printf("%s%.3f", r ? "," : "", all[4 * r + 2]);
        printf(" cpu_after=%.3f", all[3]);
        printf(" point_cpu_us=%.1f bytes=%.0f bytes_per_point=%.1f maxrss_mib=", pc, sw->gathered_bytes,
               size > 1 ? sw->gathered_bytes / (sw->npoints * (size - 1.0) / size) : 0.0);
        for (int r = 0; r < size; r++) printf("%s%.1f", r ? "," : "", all[4 * r + 1]);
        printf(" failed=%d predictor=%s\n", sw->nfailed, sw->predictor == MBL_PREDICT_SENSITIVITY ? "sensitivity" : "linear");
        if (argc > 7) {
            FILE *f = fopen(argv[7], "w");
            if (!f || mbl_sweep_write_csv(f, sw) || fclose(f)) fprintf(stderr, "bench_sweep_mpi: cannot write %s\n", argv[7]);
        }
    }
    mbl_free(all);
    free(cnt);
    mbl_sweep_free(sw);
    return par ? par->finalize(rc ? 1 : 0) : (rc ? 1 : 0);
}
