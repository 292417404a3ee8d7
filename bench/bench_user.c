/* The cost of user routines (issue 68, item 7; docs/user-routines.md, docs/benchmarks.md "User
 * routines"): a chain of N masses (default 20) joined to each other and to the ground by nonlinear
 * springs F = -k sin(d) - c w (1 + d^2) of their stretch d and its rate w, each spring written
 * either as an expression of the model file or as an entry of `routines:` (one per spring, the
 * program's own function, with partials). Both models are re-linearized at alternating points
 * (mbl_relinearize, one workspace each) in interleaved batches, and the routine itself is called
 * directly as often as one re-linearization calls it. Prints the median time per re-linearization
 * of each model, the routine's calls per re-linearization (counted by the routine), the median time
 * of that many direct calls, and the routine model's added time per re-linearization over the
 * expression model's, in units of those direct calls.
 * Environment: MBLIN_BENCH_NO_PARTIALS=1 declares the routines `partials: no` (their derivatives by
 * central differences: 1 + 2 nin calls per Jacobian).
 * usage: bench_user [N [REPEATS [BATCH]]] */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

#include "mblin/mblin.h"

static atomic_long calls;

static int spring(mbl_user_call *c)
{
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    double d = c->in[0], w = c->in[1], k = c->in[2], cc = c->in[3];
    c->out[0] = -k * sin(d) - cc * w * (1 + d * d);
    if (c->partials) {
        c->partials[0] = -k * cos(d) - 2 * cc * w * d;
        c->partials[1] = -cc * (1 + d * d);
        c->partials[2] = -sin(d);
        c->partials[3] = -w * (1 + d * d);
    }
    return 0;
}

/* the chain's model text: springs by routine (user 1) or by expression */
static char *chain(int n, int user)
{
    size_t cap = 4096 + (size_t)n * 400;
    char *t = malloc(cap);
    size_t o = (size_t)snprintf(t, cap, "model: dae\nparameters: {m: 1, k: 40, c: 0.3, F0: 2}\ncoordinates: {");
    for (int i = 0; i < n; i++) o += (size_t)snprintf(t + o, cap - o, "%sx%d: 0", i ? ", " : "", i);
    o += (size_t)snprintf(t + o, cap - o, "}\nkinetic_energy: \"");
    for (int i = 0; i < n; i++) o += (size_t)snprintf(t + o, cap - o, "%sm*der(x%d)^2/2", i ? " + " : "", i);
    o += (size_t)snprintf(t + o, cap - o, "\"\n");
    if (user) {
        o += (size_t)snprintf(t + o, cap - o, "routines:\n");
        for (int i = 0; i < n; i++) {
            char d[64], w[64];
            if (i) snprintf(d, sizeof d, "x%d - x%d", i, i - 1), snprintf(w, sizeof w, "der(x%d) - der(x%d)", i, i - 1);
            else snprintf(d, sizeof d, "x0"), snprintf(w, sizeof w, "der(x0)");
            o += (size_t)snprintf(t + o, cap - o,
                                  "  s%d: {routine: spring, inputs: [\"%s\", \"%s\", k, c], outputs: [S%d], partials: %s}\n", i,
                                  d, w, i, getenv("MBLIN_BENCH_NO_PARTIALS") ? "no" : "yes");
        }
    } else {
        o += (size_t)snprintf(t + o, cap - o, "variables:\n");
        for (int i = 0; i < n; i++) {
            char d[64], w[64];
            if (i) snprintf(d, sizeof d, "(x%d - x%d)", i, i - 1), snprintf(w, sizeof w, "(der(x%d) - der(x%d))", i, i - 1);
            else snprintf(d, sizeof d, "x0"), snprintf(w, sizeof w, "der(x0)");
            o += (size_t)snprintf(t + o, cap - o, "  S%d: \"-k*sin(%s) - c*%s*(1 + %s^2)\"\n", i, d, w, d);
        }
    }
    /* the spring i acts on mass i (+) and on mass i - 1 (-); a constant pull F0 on the last mass */
    o += (size_t)snprintf(t + o, cap - o, "forces:\n");
    for (int i = 0; i < n; i++) {
        if (i + 1 < n) o += (size_t)snprintf(t + o, cap - o, "  x%d: \"S%d - S%d\"\n", i, i, i + 1);
        else o += (size_t)snprintf(t + o, cap - o, "  x%d: \"S%d + F0\"\n", i, i);
    }
    o += (size_t)snprintf(t + o, cap - o, "linearize: {at: equilibrium}\n");
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

typedef struct side {
    mbl_model *md;
    mbl_point *pt, *pt2;
    mbl_point a, b; /* the two points without their kept Jacobian values (jac_memo): each
                       re-linearization evaluates the model, as at a new point of a sweep */
    mbl_lin_work *w;
    mbl_linear *lin;
} side;

static int side_open(int n, int user, side *s, mbl_status *st)
{
    static const mbl_user_routine_def host[] = {{"spring", spring, NULL}};
    mbl_load_options o;
    mbl_load_options_default(&o);
    o.user_routines = host;
    o.nuser_routines = 1;
    char *text = chain(n, user);
    int rc = mbl_model_load_string_opt(text, strlen(text), user ? "chain_user.yaml" : "chain_expr.yaml", NULL, 0, &o,
                                       &s->md, st);
    free(text);
    if (!rc) rc = mbl_operating_point(s->md, NULL, &s->pt, st);
    if (rc) return rc;
    double *q2 = malloc(sizeof *q2 * (size_t)n);
    for (int i = 0; i < n; i++) q2[i] = s->pt->q[i] + 1e-3 * (i + 1);
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN;
    po.q = q2;
    po.v = s->pt->v;
    rc = mbl_operating_point(s->md, &po, &s->pt2, st);
    free(q2);
    if (!rc) rc = mbl_lin_work_new(s->md, s->pt, NULL, &s->w, &s->lin, st);
    if (!rc) s->a = *s->pt, s->b = *s->pt2, s->a.jac_memo = s->b.jac_memo = NULL;
    return rc;
}

/* one batch of reps re-linearizations; seconds per call */
static double side_batch(side *s, int reps, mbl_status *st)
{
    double t0 = bench_now();
    for (int r = 0; r < reps; r++)
        if (mbl_relinearize(s->w, r & 1 ? &s->b : &s->a, s->lin, st)) return NAN;
    return (bench_now() - t0) / reps;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20, repeats = argc > 2 ? atoi(argv[2]) : 4000;
    int batch = argc > 3 ? atoi(argv[3]) : 200, nb = repeats / batch;
    if (n < 1 || nb < 3) {
        fprintf(stderr, "usage: bench_user [N >= 1 [REPEATS [BATCH]]] (at least 3 batches)\n");
        return 2;
    }
    mbl_status st;
    side e = {0}, u = {0};
    if (side_open(n, 0, &e, &st) || side_open(n, 1, &u, &st)) {
        fprintf(stderr, "bench_user: %s\n", st.msg);
        return 1;
    }
    /* the routine's calls per re-linearization */
    atomic_store(&calls, 0);
    if (isnan(side_batch(&u, batch, &st))) {
        fprintf(stderr, "bench_user: %s\n", st.msg);
        return 1;
    }
    double per = (double)atomic_load(&calls) / batch;
    long ncall = lround(per);
    double *te = malloc(sizeof *te * (size_t)nb), *tu = malloc(sizeof *tu * (size_t)nb), *td = malloc(sizeof *td * (size_t)nb);
    double in[4] = {0.01, 0.02, 40, 0.3}, out[1], P[4], sink = 0;
    mbl_user_call c = {MBL_USER_ABI_VERSION, "s", 4, 1, in, out, P, NULL, NULL, 0};
    for (int b = 0; b < nb; b++) { /* interleaved: expression, routine, direct calls */
        te[b] = side_batch(&e, batch, &st);
        tu[b] = side_batch(&u, batch, &st);
        double t0 = bench_now();
        for (int r = 0; r < batch; r++)
            for (long k = 0; k < ncall; k++) {
                in[0] = 0.01 + 1e-9 * (double)k;
                spring(&c);
                sink += out[0];
            }
        td[b] = (bench_now() - t0) / batch;
    }
    double me = median(te, nb), mu = median(tu, nb), mdir = median(td, nb);
    printf("user routines, a chain of %d springs, %d re-linearizations in %d interleaved batches (medians)\n", n,
           nb * batch, nb);
    printf("  expression model:  %9.2f us per re-linearization\n", 1e6 * me);
    printf("  routine model:     %9.2f us per re-linearization\n", 1e6 * mu);
    printf("  routine calls:     %9.2f per re-linearization (%d routines)\n", per, n);
    printf("  those calls alone: %9.2f us (direct, in a loop)\n", 1e6 * mdir);
    printf("  added time:        %9.2f us = %.2f times the calls alone (ratio routine/expression %.3f)\n",
           1e6 * (mu - me), mdir > 0 ? (mu - me) / mdir : NAN, mu / me);
    if (sink == 12345.678) printf("%g\n", sink);
    free(te), free(tu), free(td);
    return 0;
}
