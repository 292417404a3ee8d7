/* Scale of the spatial beam body (src/mech/beam3.c on the structured term, src/model/terms/ffr3.c): the
 * spatial flexible double pendulum examples/mech/spatial_beam_pendulum.yaml with NP elements per
 * link (n = 2 (7 + 6 (NP + 1))), loaded from its text like `mblin` does.
 * usage: bench_beam3 NP [NEV [BUDGET_GIB [geo]]] (run from the source directory; BUDGET_GIB: the memory
 * budget of loading and linearizing, default 2 GiB, which refuses n_p = 3000 and above, 0: the
 * default; geo: with the links' geometric stiffness, which the example, source 001's model, leaves
 * out with `geometric_stiffness: false`)
 * Prints wall and CPU (user + sys) times of loading (read + mechanism + formulate + compile), the
 * operating point, linearize with its NEV (default 20) lowest eigenvalues on the sparse path and
 * modes, the peak resident memory and the lowest six angular frequencies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mblin/mblin.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_beam3 NP [NEV [BUDGET_GIB [geo]]]\n");
        return 2;
    }
    int np = atoi(argv[1]), nev = argc > 2 ? atoi(argv[2]) : 20;
    double budget = argc > 3 ? atof(argv[3]) * 1073741824.0 : 0.0; /* 0: the default */
    const char *path = "examples/mech/spatial_beam_pendulum.yaml";
    FILE *f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "bench_beam3: cannot read %s (run from the source directory)\n", path), 1;
    static char text[1 << 16], out[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    /* elements: 10 -> elements: NP */
    char *o = out, *p = text, *q;
    while ((q = strstr(p, "elements: 10"))) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        o += sprintf(o, "elements: %d", np);
        p = q + strlen("elements: 10");
    }
    strcpy(o, p);
    if (argc > 4 && !strcmp(argv[4], "geo"))
        while ((q = strstr(out, "geometric_stiffness: false"))) memcpy(q + 21, "true ", 5);
    mbl_status st;
    double w0 = now(), c0 = cpu();
    mbl_model *md = NULL;
    mbl_load_options lopt;
    mbl_load_options_default(&lopt);
    lopt.mem_budget = budget;
    if (mbl_model_load_string_opt(out, strlen(out), path, NULL, 0, &lopt, &md, &st))
        return fprintf(stderr, "%s\n", st.msg), 1;
    double w1 = now(), c1 = cpu();
    mbl_point *pt = NULL;
    if (mbl_operating_point(md, NULL, &pt, &st)) return fprintf(stderr, "%s\n", st.msg), 1;
    double w2 = now(), c2 = cpu();
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.nev = nev;
    lo.partial = MBL_PARTIAL_ALWAYS;
    lo.mem_budget = budget;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    if (mbl_linearize(md, pt, &lo, &lin, &st) || mbl_modal(lin, NULL, &modes, &st))
        return fprintf(stderr, "%s\n", st.msg), 1;
    double w3 = now(), c3 = cpu();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    double w[6] = {0};
    for (int i = 0, k = 0; i < modes->nx && k < 6; i++)
        if (!modes->modes[i].spurious && modes->modes[i].im > 0) w[k++] = modes->modes[i].im;
    printf("np %d n %d: load %.3f s (cpu %.3f), point %.3f s (cpu %.3f), linearize+modes %.3f s (cpu %.3f), "
           "total cpu %.3f s, peak RSS %.0f MB, %s%s, omega %.6f %.6f %.6f %.6f %.6f %.6f\n",
           np, info.ncoord, w1 - w0, c1 - c0, w2 - w1, c2 - c1, w3 - w2, c3 - c2, c3 - c0, ru.ru_maxrss / 1024.0,
           lin->method, lin->spectrum && lin->spectrum->partial ? " (partial)" : "", w[0], w[1], w[2], w[3], w[4],
           w[5]);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}
