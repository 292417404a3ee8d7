/* Re-linearization of a compiled model (DESIGN.md sec. 8: N = 20 four-bar under 50 us).
 * usage: bench_relin MODEL [REPEATS [BATCH]]
 * Loads and compiles the model once and finds its operating point. Then, REPEATS times (default
 * 2000) each: a sweep step, mbl_relinearize with one workspace (alternating between the point
 * and a second consistent point with a perturbed first coordinate, so each call is a new
 * point); and a one-shot mbl_linearize (state selection, symbolic analysis and allocation
 * included). Prints the median, minimum and maximum wall time per call over batches of BATCH
 * (default 100; large models: fewer);
 * the first batch is a warm-up and not counted.
 * Environment: MBLIN_DENSE_TREE=off makes the workspace with mbl_lin_options.dense_tree =
 * MBL_DENSE_TREE_OFF (the general path of an unconstrained tree, for comparison; issue 34 item 3),
 * MBLIN_DENSE_TREE=cholesky with MBL_DENSE_TREE_CHOLESKY (a Cholesky factorization of M instead of the
 * tree's articulated bodies; issue 69);
 * MBLIN_SKIP_OUTPUTS=1 sets mbl_lin_options.skip_outputs (no C, D per point);
 * MBLIN_BENCH_SWEEP_ONLY=1 skips the one-shot part (instruction counts of the sweep alone);
 * MBLIN_BENCH_RELIN_JAC=1 has mbl_relinearize evaluate the model's Jacobian at each point itself
 * (the points' kept Jacobian values, pt->jac_memo, hidden: a re-linearization at a point that
 * brings none, issue 34's unit), =both times the two kinds in interleaved batches (kept values,
 * then own evaluation) and prints both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

#include "mblin/mblin.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_relin MODEL [REPEATS [BATCH]]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 2000;
    const int batch = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 100;
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
    /* a second point: the first coordinate perturbed, made consistent */
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    double *q2 = malloc(sizeof *q2 * (size_t)info.ncoord);
    for (int i = 0; i < info.ncoord; i++) q2[i] = pt->q[i];
    q2[0] += 1e-3;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN;
    po.q = q2;
    po.v = pt->v;
    mbl_point *pt2 = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lw = NULL;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    const char *dt = getenv("MBLIN_DENSE_TREE");
    if (dt && !strcmp(dt, "off")) lo.dense_tree = MBL_DENSE_TREE_OFF;
    if (dt && !strcmp(dt, "cholesky")) lo.dense_tree = MBL_DENSE_TREE_CHOLESKY;
    const char *sk = getenv("MBLIN_SKIP_OUTPUTS");
    lo.skip_outputs = sk && *sk && strcmp(sk, "0");
    if (mbl_operating_point(md, &po, &pt2, &st) || mbl_lin_work_new(md, pt, &lo, &w, &lw, &st)) {
        fprintf(stderr, "bench_relin: %s\n", st.msg);
        return 1;
    }
    const char *rj = getenv("MBLIN_BENCH_RELIN_JAC");
    int kind0 = rj && !strcmp(rj, "both") ? 0 : rj && *rj && strcmp(rj, "0") ? 1 : 0;
    int kind1 = rj && !strcmp(rj, "both") ? 1 : kind0;
    double *tj = malloc(sizeof *tj * (size_t)nb);
    void *memo[2] = {pt->jac_memo, pt2->jac_memo};
    for (int b = -1; b < nb; b++)
        for (int kind = kind0; kind <= kind1; kind++) {
            /* kind 1: the points without their Jacobian values (mbl_relinearize evaluates them) */
            pt->jac_memo = kind ? NULL : memo[0], pt2->jac_memo = kind ? NULL : memo[1];
            double t0 = bench_now();
            for (int i = 0; i < batch; i++)
                if (mbl_relinearize(w, (i & 1) ? pt2 : pt, lw, &st)) {
                    fprintf(stderr, "bench_relin: %s\n", st.msg);
                    return 1;
                }
            if (b >= 0) (kind ? tj : t)[b] = (bench_now() - t0) / batch;
        }
    pt->jac_memo = memo[0], pt2->jac_memo = memo[1];
    for (int kind = kind0; kind <= kind1; kind++) {
        double *tk = kind ? tj : t;
        qsort(tk, (size_t)nb, sizeof *tk, bench_cmp_double);
        printf("sweep (mbl_relinearize%s) of %s (n = %d, m = %d): median %.1f us, min %.1f us, max %.1f us over %d "
               "batches of %d\n",
               kind ? ", own Jacobian evaluation" : "", argv[1], info.ncoord, info.nhol, 1e6 * tk[nb / 2],
               1e6 * tk[0], 1e6 * tk[nb - 1], nb, batch);
    }
    free(tj);
    mbl_linear_free(lw);
    mbl_lin_work_free(w);
    mbl_point_free(pt2);
    free(q2);
    const char *so = getenv("MBLIN_BENCH_SWEEP_ONLY");
    for (int b = -1; b < nb && !(so && *so && strcmp(so, "0")); b++) {
        double t0 = bench_now();
        for (int i = 0; i < batch; i++) {
            mbl_linear *lin = NULL;
            if (mbl_linearize(md, pt, NULL, &lin, &st)) {
                fprintf(stderr, "bench_relin: %s\n", st.msg);
                return 1;
            }
            mbl_linear_free(lin);
        }
        if (b >= 0) t[b] = (bench_now() - t0) / batch;
    }
    qsort(t, (size_t)nb, sizeof *t, bench_cmp_double);
    if (!(so && *so && strcmp(so, "0")))
        printf("one-shot (mbl_linearize) of %s (n = %d, m = %d): median %.1f us, min %.1f us, max %.1f us over %d batches of %d\n",
           argv[1], info.ncoord, info.nhol, 1e6 * t[nb / 2], 1e6 * t[0], 1e6 * t[nb - 1], nb, batch);
    free(t);
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}
