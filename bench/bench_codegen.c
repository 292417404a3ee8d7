/* Generated C (mblin codegen) against mbl_relinearize (issue 17: N = 20 four-bar).
 * usage: bench_codegen MODEL [REPEATS]
 * Loads the model, finds its operating point (at rest), generates the C of its linear model
 * (src/codegen), compiles it with `cc -O2 -shared -fPIC` into a temporary shared object and loads
 * it. Then, REPEATS times (default 2000) each: mbl_relinearize with one workspace at the point
 * (evaluation, KLU refactorization, solve: A, B, C, D, M-hat, C-hat, K-hat), and the generated
 * function at the same parameters and point (all of A, B, C, D, M, Cd, K, F). Prints the median,
 * minimum and maximum wall time per call over batches of 100 (the first batch a warm-up), and
 * the largest deviation of the generated A from the library's relative to its largest entry. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mblin/codegen.h"
#include "mblin/mblin.h"

typedef void (*gen_fn)(const double *, const double *, const double *, double *, double *, double *, double *,
                       double *, double *, double *, double *);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, const char *model, double *t, int nb, int batch)
{
    qsort(t, (size_t)nb, sizeof *t, cmp);
    printf("%s of %s: median %.2f us, min %.2f us, max %.2f us over %d batches of %d\n", what, model,
           1e6 * t[nb / 2], 1e6 * t[0], 1e6 * t[nb - 1], nb, batch);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_codegen MODEL [REPEATS]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 2000;
    const int batch = 100;
    int nb = repeats / batch;
    if (nb < 2) nb = 2;
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lw = NULL;
    if (mbl_model_load_file(argv[1], NULL, 0, &md, &st) || mbl_operating_point(md, NULL, &pt, &st) ||
        mbl_lin_work_new(md, pt, NULL, &w, &lw, &st) || mbl_symlin_new(md, pt, 0, &sl, &st)) {
        fprintf(stderr, "bench_codegen: %s\n", st.msg);
        return 1;
    }
    char dir[128], path[256], cmd[1024];
    const char *tmp = getenv("TMPDIR");
    int dn = snprintf(dir, sizeof dir, "%s/mblin_bench_codegen_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (dn < 0 || (size_t)dn >= sizeof dir || !mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/gen.c", dir);
    FILE *f = fopen(path, "w");
    if (!f || mbl_codegen(sl, MBL_LANG_C, "gen", argv[1], f, &st)) {
        fprintf(stderr, "bench_codegen: %s\n", f ? st.msg : "cannot write the generated code");
        return 1;
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -O2 -shared -fPIC -o %s/gen.so %s/gen.c -lm", dir, dir);
    if (system(cmd)) return 1;
    snprintf(path, sizeof path, "%s/gen.so", dir);
    void *so = dlopen(path, RTLD_NOW);
    gen_fn gen = so ? (gen_fn)(size_t)dlsym(so, "gen") : NULL;
    if (!gen) {
        fprintf(stderr, "bench_codegen: cannot load %s\n", path);
        return 1;
    }
    size_t nx = (size_t)sl->nx, nr = (size_t)sl->nr, ny = (size_t)sl->ny, z = (size_t)sl->z;
    double *A = calloc(nx * nx + 1, sizeof *A), *B = calloc(nx * nr + 1, sizeof *B), *C = calloc(ny * nx + 1, sizeof *C),
           *D = calloc(ny * nr + 1, sizeof *D), *M = calloc(z * z + 1, sizeof *M), *Cd = calloc(z * z + 1, sizeof *Cd),
           *K = calloc(z * z + 1, sizeof *K), *F = calloc(z * nr + 1, sizeof *F);
    double *t = malloc(sizeof *t * (size_t)nb);
    for (int b = -1; b < nb; b++) {
        double t0 = now();
        for (int i = 0; i < batch; i++)
            if (mbl_relinearize(w, pt, lw, &st)) {
                fprintf(stderr, "bench_codegen: %s\n", st.msg);
                return 1;
            }
        if (b >= 0) t[b] = (now() - t0) / batch;
    }
    report("mbl_relinearize", argv[1], t, nb, batch);
    for (int b = -1; b < nb; b++) {
        double t0 = now();
        for (int i = 0; i < batch; i++) gen(sl->pval, pt->q, pt->r, A, B, C, D, M, Cd, K, F);
        if (b >= 0) t[b] = (now() - t0) / batch;
    }
    report("generated C (cc -O2)", argv[1], t, nb, batch);
    double scale = 0.0, dev = 0.0;
    for (size_t i = 0; i < nx * nx; i++) scale = fmax(scale, fabs(lw->A[i]));
    for (size_t i = 0; i < nx * nx; i++) dev = fmax(dev, fabs(A[i] - lw->A[i]));
    printf("generated A vs mbl_relinearize: max deviation %.2e relative to max |A| = %.3g (nx = %zu, n = %d)\n",
           dev / scale, scale, nx, sl->n);
    dlclose(so);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "bench_codegen: could not remove %s\n", dir);
    free(A), free(B), free(C), free(D), free(M), free(Cd), free(K), free(F), free(t);
    mbl_symlin_free(sl);
    mbl_linear_free(lw);
    mbl_lin_work_free(w);
    mbl_point_free(pt);
    mbl_model_free(md);
    return dev <= 1e-12 * scale ? 0 : 1;
}
