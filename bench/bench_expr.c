/* Expression engine benchmark (DESIGN.md section 8: build + differentiate + compile a 10^6-node
 * graph in under 1 s; tape evaluation at 5e7 nodes/s or more).
 *
 * Model: a chain of N pendulum-like bodies with angles q_i and rates v_i, symbolic parameters
 * m, l, g, k. The Lagrangian L = T - V is a sum over bodies of
 *   T_i = 0.5 m l^2 (v_i^2 + v_{i+1}^2 + 2 v_i v_{i+1} cos(q_i - q_{i+1}))
 *   V_i = m g l (1 - cos q_i) + 0.5 k (sin q_{i+1} - sin q_i)^2
 * Each repetition builds a fresh graph, takes the reverse-mode gradient of L with respect to
 * all q and v, the sparse Jacobian of that gradient (the full Hessian: mass, gyroscopic and
 * stiffness blocks), and compiles L, the gradient and the Jacobian entries into one tape.
 * Reported: medians over the repetitions, as wall-clock time and as process CPU time (the two
 * differ on a loaded machine).
 *
 * Usage: bench_expr [N [REPS]]   (defaults: N = 20000, REPS = 5) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/expr.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of the process: on a loaded machine wall-clock times include waiting for a core */
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct result {
    double t_build, t_diff, t_compile, t_eval, cpu_total, cpu_eval;
    size_t nodes_model, nodes_total, ninstr, nnz;
} result;

static int run(int N, result *r, int keep_eval)
{
    mbl_status st;
    double c0 = cpu();
    double t0 = now();
    mblx_graph *g = mblx_graph_new();
    if (!g) return 1;
    size_t nq = (size_t)N + 1;
    mblx_id *sy = malloc(2 * nq * sizeof *sy); /* q then v */
    mblx_id *terms = malloc((size_t)N * sizeof *terms);
    char nm[32];
    for (size_t i = 0; i < nq; i++) {
        snprintf(nm, sizeof nm, "q%zu", i);
        sy[i] = mblx_symbol(g, nm);
    }
    for (size_t i = 0; i < nq; i++) {
        snprintf(nm, sizeof nm, "v%zu", i);
        sy[nq + i] = mblx_symbol(g, nm);
    }
    mblx_id m = mblx_symbol(g, "m"), l = mblx_symbol(g, "l"), gr = mblx_symbol(g, "g"),
            k = mblx_symbol(g, "k");
    mblx_id half = mblx_const(g, 0.5), one = mblx_const(g, 1.0);
    mblx_id ml2 = mblx_product(g, 3, (mblx_id[]){half, m, mblx_powc(g, l, 2)});
    mblx_id mgl = mblx_product(g, 3, (mblx_id[]){m, gr, l});
    for (int i = 0; i < N; i++) {
        mblx_id qi = sy[i], qj = sy[i + 1], vi = sy[nq + (size_t)i], vj = sy[nq + (size_t)i + 1];
        mblx_id c = mblx_cos(g, mblx_sub(g, qi, qj));
        mblx_id kin = mblx_sum(g, 3, (mblx_id[]){mblx_powc(g, vi, 2), mblx_powc(g, vj, 2),
                                                 mblx_product(g, 4, (mblx_id[]){mblx_const(g, 2), vi, vj, c})});
        mblx_id T = mblx_mul(g, ml2, kin);
        mblx_id V1 = mblx_mul(g, mgl, mblx_sub(g, one, mblx_cos(g, qi)));
        mblx_id V2 = mblx_product(g, 3, (mblx_id[]){half, k, mblx_powc(g, mblx_sub(g, mblx_sin(g, qj), mblx_sin(g, qi)), 2)});
        terms[i] = mblx_sub(g, T, mblx_add(g, V1, V2));
    }
    mblx_id L = mblx_sum(g, (size_t)N, terms);
    double t1 = now();
    r->nodes_model = mblx_node_count(g);
    mblx_id *grad = malloc(2 * nq * sizeof *grad);
    mblx_sparse H;
    int rc = mblx_gradient(g, L, 2 * nq, sy, grad);
    if (rc == 0) rc = mblx_jacobian(g, 2 * nq, grad, 2 * nq, sy, &H);
    double t2 = now();
    if (rc) {
        mblx_graph_status(g, &st);
        fprintf(stderr, "differentiation failed: %s\n", st.msg);
        return 1;
    }
    r->nodes_total = mblx_node_count(g);
    r->nnz = (size_t)H.colptr[2 * nq];
    size_t nout = 1 + 2 * nq + r->nnz;
    mblx_id *outs = malloc(nout * sizeof *outs);
    outs[0] = L;
    memcpy(outs + 1, grad, 2 * nq * sizeof *outs);
    memcpy(outs + 1 + 2 * nq, H.node, r->nnz * sizeof *outs);
    mblx_tape *t = mblx_compile(g, nout, outs, &st);
    double t3 = now();
    r->cpu_total = cpu() - c0;
    if (!t) {
        fprintf(stderr, "compile failed: %s\n", st.msg);
        return 1;
    }
    r->t_build = t1 - t0;
    r->t_diff = t2 - t1;
    r->t_compile = t3 - t2;
    r->ninstr = mblx_tape_ninstr(t);
    if (keep_eval) {
        size_t ns = mblx_symbol_count(g);
        double *sv = malloc(ns * sizeof *sv), *w = malloc(mblx_tape_work_size(t) * sizeof *w);
        double *out = malloc(nout * sizeof *out);
        for (size_t i = 0; i < ns; i++) sv[i] = 0.1 + 0.37 * (double)(i % 17) / 17.0;
        enum { EVAL_REPS = 7 };
        double te[EVAL_REPS], ce[EVAL_REPS];
        for (int e = 0; e < EVAL_REPS; e++) {
            double a = now(), ca = cpu();
            if (mblx_tape_eval(t, sv, out, w, &st)) {
                fprintf(stderr, "eval failed: %s\n", st.msg);
                return 1;
            }
            te[e] = now() - a;
            ce[e] = cpu() - ca;
        }
        r->t_eval = median(te, EVAL_REPS);
        r->cpu_eval = median(ce, EVAL_REPS);
        free(sv);
        free(w);
        free(out);
    }
    mblx_tape_free(t);
    mblx_sparse_free(&H);
    free(outs);
    free(grad);
    free(terms);
    free(sy);
    mblx_graph_free(g);
    return 0;
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 20000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (N < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_expr [N [REPS]]\n");
        return 2;
    }
    double *tb = malloc((size_t)reps * sizeof *tb), *td = malloc((size_t)reps * sizeof *td),
           *tc = malloc((size_t)reps * sizeof *tc), *tt = malloc((size_t)reps * sizeof *tt),
           *ev = malloc((size_t)reps * sizeof *ev), *ct = malloc((size_t)reps * sizeof *ct),
           *ce = malloc((size_t)reps * sizeof *ce);
    result r = {0};
    for (int i = 0; i < reps; i++) {
        if (run(N, &r, 1)) return 1;
        tb[i] = r.t_build;
        td[i] = r.t_diff;
        tc[i] = r.t_compile;
        tt[i] = r.t_build + r.t_diff + r.t_compile;
        ev[i] = r.t_eval;
        ct[i] = r.cpu_total;
        ce[i] = r.cpu_eval;
    }
    printf("bench_expr: N = %d bodies, %d repetitions (medians)\n", N, reps);
    printf("  graph nodes: model %zu, after gradient + Jacobian %zu; Jacobian nnz %zu\n",
           r.nodes_model, r.nodes_total, r.nnz);
    printf("  build %.3f s, differentiate %.3f s, compile %.3f s\n", median(tb, reps),
           median(td, reps), median(tc, reps));
    printf("  build + differentiate + compile: %.3f s wall, %.3f s CPU (target < 1 s for 1e6 nodes)\n",
           median(tt, reps), median(ct, reps));
    double te = median(ev, reps), tce = median(ce, reps);
    printf("  tape: %zu instructions, evaluation %.3f ms wall = %.3g nodes/s; %.3f ms CPU = %.3g nodes/s"
           " (target >= 5e7)\n",
           r.ninstr, 1e3 * te, (double)r.ninstr / te, 1e3 * tce, (double)r.ninstr / tce);
    free(tb);
    free(td);
    free(tc);
    free(tt);
    free(ev);
    free(ct);
    free(ce);
    return 0;
}
