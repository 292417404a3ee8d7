/* Re-linearization of a compiled model (DESIGN.md sec. 8: N = 20 four-bar under 50 us).
 * usage: bench_relin MODEL [REPEATS]
 * Loads and compiles the model once, finds its operating point, then linearizes it REPEATS times
 * (default 2000) and prints the median, minimum and maximum wall time per linearization over
 * batches of 100. The first batch is a warm-up and not counted. */
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

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_relin MODEL [REPEATS]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 2000;
    const int batch = 100;
    int nb = repeats / batch;
    if (nb < 2) nb = 2;
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    if (mbl_model_load_file(argv[1], NULL, 0, &md, &st) || mbl_operating_point(md, NULL, &pt, &st)) {
        fprintf(stderr, "bench_relin: %s\n", st.msg);
        return 1;
    }
    double *t = malloc(sizeof *t * (size_t)nb);
    for (int b = -1; b < nb; b++) {
        double t0 = now();
        for (int i = 0; i < batch; i++) {
            mbl_linear *lin = NULL;
            if (mbl_linearize(md, pt, NULL, &lin, &st)) {
                fprintf(stderr, "bench_relin: %s\n", st.msg);
                return 1;
            }
            mbl_linear_free(lin);
        }
        if (b >= 0) t[b] = (now() - t0) / batch;
    }
    qsort(t, (size_t)nb, sizeof *t, cmp);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    printf("re-linearization of %s (n = %d, m = %d): median %.1f us, min %.1f us, max %.1f us over %d batches of %d\n",
           argv[1], info.ncoord, info.nhol, 1e6 * t[nb / 2], 1e6 * t[0], 1e6 * t[nb - 1], nb, batch);
    free(t);
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}
