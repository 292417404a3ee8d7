/* Scale of the structured flexible body term (src/model/terms/ffr.c): the flexible double pendulum of
 * source 001 Sec. 4.2 with NP beam elements per link built from two beam bodies, n = 6 NP + 12.
 * usage: bench_flex NP [NEV]
 * Prints the wall time of each stage (formulate + compile, operating point, linearize with the
 * default method and its partial spectrum of NEV (default 20) eigenvalues nearest zero, modes),
 * the peak resident memory, and the lowest four angular frequencies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mblin/mblin.h"
#include "mech/beam.h"
#include "model/ffr.h"
#include "model/model.h"
#include "model/model_internal.h"
#include "../tests/ffr_pendulum_text.h"
#include "load/load.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *xstrdup(const char *s)
{
    char *d = mbl_malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_flex NP [NEV]\n");
        return 2;
    }
    int np = atoi(argv[1]), nev = argc > 2 ? atoi(argv[2]) : 20;
    mbl_status st;
    double t0 = now();
    char *text = pendulum_text(np);
    mbl_src *src = NULL;
    if (!text) return fprintf(stderr, "bench_flex: out of memory\n"), 1;
    if (load_src_read(text, strlen(text), "bench-flex", &src, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    free(text);
    double r = 0.15, pi = acos(-1.0);
    mbl_beam_section s = {1e8, 0, 1500, pi * r * r, 0, pi * r * r * r * r / 4, 0};
    src->ffr = mbl_calloc(2, sizeof *src->ffr);
    src->nffr = 2;
    for (int k = 0; k < 2; k++) {
        mbl_ffr_body *b = &src->ffr[k];
        if (mech_beam2_invariants(&s, 4.0, np, &b->inv, &st)) {
            fprintf(stderr, "%s\n", st.msg);
            return 1;
        }
        char nm[64];
        snprintf(nm, sizeof nm, "body 'link%d'", k + 1);
        b->name = xstrdup(nm);
        b->g[1] = -9.81;
        const char *fmt[3] = {"x%d", "y%d", "th%d"};
        for (int c = 0; c < 3; c++) snprintf(nm, sizeof nm, fmt[c], k + 1), b->coord[c] = xstrdup(nm);
        b->qf = mbl_calloc((size_t)b->inv.nf, sizeof *b->qf);
        for (int i = 0; i <= np; i++) {
            const char *f3[3] = {"qfx%d_%d", "qfy%d_%d", "qft%d_%d"};
            for (int c = 0; c < 3; c++) snprintf(nm, sizeof nm, f3[c], k + 1, i + 1), b->qf[3 * i + c] = xstrdup(nm);
        }
    }
    mbl_model *md = NULL;
    if (model_from_src(src, NULL, 0, &md, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    double t1 = now();
    {
        int n = md->n, cnt[4] = {0}, ja = model_blk0(md, MBL_BLK_A), jv = model_blk0(md, MBL_BLK_V);
        int jq = model_blk0(md, MBL_BLK_Q);
        for (int p = 0; p < md->jac.nz; p++) {
            int rr = md->jac.row[p], c = md->jac.col[p];
            if (rr >= n) continue;
            cnt[c >= ja && c < ja + n ? 0 : c >= jv && c < jv + n ? 1 : c >= jq && c < jq + n ? 2 : 3]++;
        }
        printf("jacobian: %d entries; equations of motion: %d in a, %d in v, %d in q, %d other\n", md->jac.nz, cnt[0],
               cnt[1], cnt[2], cnt[3]);
    }
    mbl_point *pt = NULL;
    if (mbl_operating_point(md, NULL, &pt, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    double t2 = now();
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.nev = nev;
    lo.partial = MBL_PARTIAL_ALWAYS; /* the sparse path: the nev lowest, never the dense state space */
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    if (mbl_linearize(md, pt, &lo, &lin, &st) || mbl_modal(lin, NULL, &modes, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    double t3 = now();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double w[4] = {0};
    for (int i = 0, k = 0; i < modes->nx && k < 4; i++)
        if (!modes->modes[i].spurious && modes->modes[i].im > 0) w[k++] = modes->modes[i].im;
    printf("np %d n %d: load %.3f s, point %.3f s, linearize+modes %.3f s, total %.3f s, peak RSS %.0f MB, "
           "%s%s, omega %.10f %.10f %.10f %.10f\n",
           np, md->n, t1 - t0, t2 - t1, t3 - t2, t3 - t0, ru.ru_maxrss / 1024.0, lin->method,
           lin->spectrum && lin->spectrum->partial ? " (partial)" : "", w[0], w[1], w[2], w[3]);
    mbl_modes_free(modes);
    const char *warn = strstr(lin->notes, "WARNING");
    if (warn) printf("note: %s\n", warn);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}
