/* The progress callback (mblin/progress.h; issue 33, item 3): the stages it is called in, a stop
 * asked at every one of its calls unwinding with MBL_ECANCELLED (nothing returned, nothing leaked:
 * run under ASan/valgrind), the stop sticky until the callback is set anew, and a sweep on two
 * threads calling it one at a time.
 *
 * With a model file as argument (test_progress MODEL [nev]) it instead loads the model, finds its
 * operating point, linearizes (the nev eigenvalues nearest zero when nev is given) and prints the
 * largest gap between two calls of the callback and the stages around it (docs/linking.md, "Progress
 * and stopping"). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"
#include "test.h"

#define MODEL "examples/spring_pendulum.yaml"

typedef struct counter {
    int calls, stop_at; /* stop at call stop_at (0: never) */
    int after_stop;     /* calls after the one that asked to stop */
    int stopped;
    char stages[16][32];
    int nstages;
    char stop_stage[32];
    atomic_int inside;  /* two threads in the callback at once */
    int overlap;
} counter;

static int count_cb(void *user, const char *stage, double done, double total)
{
    counter *c = user;
    if (atomic_fetch_add(&c->inside, 1)) c->overlap = 1;
    (void)done, (void)total;
    if (c->stopped) c->after_stop++;
    c->calls++;
    int known = 0;
    for (int i = 0; i < c->nstages; i++) known |= !strcmp(c->stages[i], stage);
    if (!known && c->nstages < 16) snprintf(c->stages[c->nstages++], 32, "%s", stage);
    int stop = c->stop_at && c->calls >= c->stop_at;
    if (stop && !c->stopped) {
        c->stopped = 1;
        snprintf(c->stop_stage, sizeof c->stop_stage, "%s", stage);
    }
    atomic_fetch_sub(&c->inside, 1);
    return stop;
}

/* load, point, linearize, modes of MODEL; the first failure's code (0: all ran) */
static int pipeline(mbl_status *st, double *eig0)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *m = NULL;
    /* a failed step returns nothing */
    int rc = mbl_model_load_file(MODEL, NULL, 0, &md, st);
    CHECK(!rc || !md);
    if (!rc) CHECK((rc = mbl_operating_point(md, NULL, &pt, st)) == 0 || !pt);
    if (!rc) CHECK((rc = mbl_linearize(md, pt, NULL, &lin, st)) == 0 || !lin);
    if (!rc) CHECK((rc = mbl_modal(lin, NULL, &m, st)) == 0 || !m);
    if (!rc && eig0) *eig0 = m->modes[m->nx - 1].im;
    mbl_modes_free(m);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

static int has_stage(const counter *c, const char *s)
{
    for (int i = 0; i < c->nstages; i++)
        if (!strcmp(c->stages[i], s)) return 1;
    return 0;
}

TEST(stages_and_every_stop)
{
    mbl_status st;
    double ref = 0, got = 0;
    mbl_progress_set(NULL, NULL);
    CHECK_EQ_INT(pipeline(&st, &ref), 0);
    counter c;
    memset(&c, 0, sizeof c);
    mbl_progress_set(count_cb, &c);
    CHECK_EQ_INT(pipeline(&st, &got), 0);
    CHECK(got == ref); /* the callback changes nothing */
    const char *want[] = {"load: read", "load: formulate", "load: compile", "point", "linearize", "eigen"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) CHECK_MSG(has_stage(&c, want[i]), "stage %s", want[i]);
    int n = c.calls;
    CHECK(n >= 6);
    /* a stop at each call: the step running returns MBL_ECANCELLED, the callback is not called again */
    for (int k = 1; k <= n; k++) {
        memset(&c, 0, sizeof c);
        c.stop_at = k;
        mbl_progress_set(count_cb, &c);
        mbl_status_clear(&st);
        int rc = pipeline(&st, NULL);
        CHECK_MSG(rc == MBL_ECANCELLED && st.code == MBL_ECANCELLED, "stop at call %d (%s): rc %d '%s'", k,
                  c.stop_stage, rc, st.msg);
        CHECK_MSG(strstr(st.msg, "cancelled") != NULL, "message '%s'", st.msg);
        CHECK_EQ_INT(c.calls, k);
        CHECK_EQ_INT(c.after_stop, 0);
    }
    /* sticky until set anew; setting again clears the stop */
    memset(&c, 0, sizeof c);
    c.stop_at = 1;
    mbl_progress_set(count_cb, &c);
    CHECK_EQ_INT(pipeline(&st, NULL), MBL_ECANCELLED);
    CHECK_EQ_INT(pipeline(&st, NULL), MBL_ECANCELLED);
    CHECK_EQ_INT(c.calls, 1);
    c.stop_at = 0;
    mbl_progress_set(count_cb, &c);
    CHECK_EQ_INT(pipeline(&st, NULL), 0);
    mbl_progress_set(NULL, NULL);
    int calls = c.calls;
    CHECK_EQ_INT(pipeline(&st, NULL), 0);
    CHECK_EQ_INT(c.calls, calls); /* removed: not called */
    CHECK(!strcmp(mbl_strerror(MBL_ECANCELLED), "cancelled"));
}

/* A chain of n masses between springs as model text (n >= 2000 residuals: its residual tape is
 * compiled on the loader's second thread, model/compile.c), malloc'ed. */
static char *chain_text(int n)
{
    size_t cap = 256 + (size_t)n * 64, k = 0;
    char *t = malloc(cap);
    if (!t) return NULL;
    k += (size_t)snprintf(t + k, cap - k, "model: dae\nparameters: {c: 100}\ncoordinates: {");
    for (int i = 1; i <= n; i++) k += (size_t)snprintf(t + k, cap - k, "%sx%d: 0.%d", i > 1 ? ", " : "", i, i % 7);
    k += (size_t)snprintf(t + k, cap - k, "}\nkinetic_energy: \"0.5*(");
    for (int i = 1; i <= n; i++) k += (size_t)snprintf(t + k, cap - k, "%sder(x%d)^2", i > 1 ? " + " : "", i);
    k += (size_t)snprintf(t + k, cap - k, ")\"\npotential_energy: \"0.5*c*(x1^2");
    for (int i = 2; i <= n; i++) k += (size_t)snprintf(t + k, cap - k, " + (x%d - x%d)^2", i, i - 1);
    snprintf(t + k, cap - k, ")\"\n");
    return t;
}

/* The loader's stops: every part of a larger load (the graph's ticks, the Jacobian's rows and
 * columns, the tapes compiled on two threads) stopped in turn at about 40 of its calls. */
TEST(stops_in_a_larger_load)
{
    char *text = chain_text(2100);
    CHECK(text != NULL);
    if (!text) return;
    mbl_status st;
    counter c;
    memset(&c, 0, sizeof c);
    mbl_progress_set(count_cb, &c);
    mbl_model *md = NULL;
    CHECK_EQ_INT(mbl_model_load_string(text, strlen(text), "chain", NULL, 0, &md, &st), 0);
    mbl_model_free(md);
    int n = c.calls;
    CHECK(n > 20);
    CHECK(!c.overlap);
    for (int k = 1; k <= n; k += 1 + n / 40) {
        memset(&c, 0, sizeof c);
        c.stop_at = k;
        mbl_progress_set(count_cb, &c);
        md = NULL;
        int rc = mbl_model_load_string(text, strlen(text), "chain", NULL, 0, &md, &st);
        CHECK_MSG(rc == MBL_ECANCELLED && !md && strstr(st.msg, "cancelled"), "stop at call %d of %d (%s): rc %d '%s'",
                  k, n, c.stop_stage, rc, st.msg);
        CHECK_EQ_INT(c.after_stop, 0);
        mbl_model_free(md);
    }
    mbl_progress_set(NULL, NULL);
    free(text);
}

static int sweep(int threads, mbl_sweep **sw, mbl_status *st)
{
    mbl_model *md = NULL;
    int rc = mbl_model_load_file(MODEL, NULL, 0, &md, st);
    if (rc) return rc;
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"k", 10, 80, 64};
    so.threads = threads;
    rc = mbl_sweep_run(md, &so, sw, st);
    mbl_model_free(md);
    return rc;
}

static int sweep_stop_cb(void *user, const char *stage, double done, double total)
{
    counter *c = user;
    count_cb(user, stage, done, total);
    if (!strcmp(stage, "sweep") && done >= 2 * 4 && done < total) c->stopped = 1; /* after two blocks */
    return c->stopped;
}

TEST(sweep_on_threads)
{
    mbl_status st;
    counter c;
    memset(&c, 0, sizeof c);
    mbl_progress_set(count_cb, &c);
    mbl_sweep *sw = NULL;
    CHECK_EQ_INT(sweep(2, &sw, &st), 0);
    CHECK(sw && sw->nfailed == 0);
    mbl_sweep_free(sw);
    CHECK(has_stage(&c, "sweep"));
    /* a small model's points report no eigen stage (sweep_point.c, SWEEP_EIGEN_REPORT_MIN): a
     * stop takes effect at a block's end */
    CHECK(!has_stage(&c, "eigen"));
    CHECK(!c.overlap); /* serialized */
    memset(&c, 0, sizeof c);
    mbl_progress_set(sweep_stop_cb, &c);
    sw = NULL;
    int rc = sweep(2, &sw, &st);
    CHECK_MSG(rc == MBL_ECANCELLED && sw == NULL, "rc %d '%s'", rc, st.msg);
    CHECK(strstr(st.msg, "cancelled") != NULL);
    CHECK(!c.overlap);
    mbl_progress_set(NULL, NULL);
}

/* ---- the largest gap between calls on a given model ----------------------------------------- */

typedef struct gap {
    double last, max;
    char before[32], after[32], stage[32];
    long calls;
    double done, done_before, done_after;
} gap;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int gap_cb(void *user, const char *stage, double done, double total)
{
    gap *g = user;
    (void)total;
    double t = now();
    if (t - g->last > 0.1) /* every long gap, for the record */
        printf("  gap %.3f s between '%s' %.0f and '%s' %.0f\n", t - g->last, g->stage, g->done, stage, done);
    if (t - g->last > g->max) {
        g->max = t - g->last;
        snprintf(g->before, sizeof g->before, "%s", g->stage);
        snprintf(g->after, sizeof g->after, "%s", stage);
        g->done_before = g->done, g->done_after = done;
    }
    g->done = done;
    snprintf(g->stage, sizeof g->stage, "%s", stage);
    g->last = t;
    g->calls++;
    return 0;
}

static int measure(const char *path, int nev)
{
    gap g;
    memset(&g, 0, sizeof g);
    snprintf(g.stage, sizeof g.stage, "start");
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.nev = nev;
    double t0 = g.last = now();
    mbl_progress_set(gap_cb, &g);
    int rc = mbl_model_load_file(path, NULL, 0, &md, &st);
    double t1 = now();
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, &lo, &lin, &st);
    gap_cb(&g, "end", 0, 0);
    mbl_progress_set(NULL, NULL);
    printf("%s: load %.2f s, total %.2f s, %ld calls, largest gap %.3f s (between '%s' %.0f and '%s' %.0f)%s%s\n",
           path, t1 - t0, now() - t0, g.calls, g.max, g.before, g.done_before, g.after, g.done_after, rc ? ": " : "", rc ? st.msg : "");
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) return measure(argv[1], argc > 2 ? atoi(argv[2]) : 0);
    RUN(stages_and_every_stop);
    RUN(stops_in_a_larger_load);
    RUN(sweep_on_threads);
    return test_summary("progress");
}
