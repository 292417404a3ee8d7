/* mbl_sweep_run distributed over "ranks" (mbl_sweep_dist, docs/parallel.md) without MPI: the ranks
 * are threads of this process and the gather a barrier over shared memory, so the split, the
 * packing, rank 0's unpacking and the failure paths run under the sanitizers and valgrind with the
 * library alone. The reference is the same sweep on one process: every tracked eigenvalue, MAC,
 * ok flag and failure message must be identical. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

#define MAXR 8

typedef struct world {
    int size;
    pthread_mutex_t m;
    pthread_cond_t c;
    int arrived, gen;
    double *part[MAXR];
    size_t len[MAXR];
    int drop_last_of; /* >= 1: that rank's part reaches rank 0 one double short (a corrupted transfer) */
} world;

typedef struct rank_arg {
    world *w;
    int rank;
    const char *path;
    mbl_sweep_options so;
    mbl_sweep_dist dist;
    mbl_sweep *sw;
    int rc;
    mbl_status st;
} rank_arg;

static void barrier(world *w)
{
    pthread_mutex_lock(&w->m);
    int g = w->gen;
    if (++w->arrived == w->size) {
        w->arrived = 0, w->gen++;
        pthread_cond_broadcast(&w->c);
    } else {
        while (g == w->gen) pthread_cond_wait(&w->c, &w->m);
    }
    pthread_mutex_unlock(&w->m);
}

static int fake_gather(void *ud, const double *buf, size_t n, double **all, size_t *counts, mbl_status *st)
{
    rank_arg *a = ud;
    world *w = a->w;
    (void)st;
    w->part[a->rank] = malloc((n + 1) * sizeof(double));
    if (n) memcpy(w->part[a->rank], buf, n * sizeof(double));
    w->len[a->rank] = n;
    barrier(w); /* every part is in */
    *all = NULL;
    if (a->rank == 0) {
        size_t tot = 0;
        for (int r = 0; r < w->size; r++) {
            counts[r] = w->len[r] - (r == w->drop_last_of && w->len[r] ? 1 : 0);
            tot += counts[r];
        }
        double *d = mbl_malloc((tot + 1) * sizeof(double));
        for (int r = 0, off = 0; r < w->size; off += (int)counts[r], r++) memcpy(d + off, w->part[r], counts[r] * sizeof(double));
        *all = d;
    }
    barrier(w); /* rank 0 has copied them */
    free(w->part[a->rank]);
    return 0;
}

static void *rank_main(void *p)
{
    rank_arg *a = p;
    mbl_status_clear(&a->st);
    mbl_model *md = NULL;
    mbl_model_load_file(a->path, a->so.sets, a->so.nsets, &md, &a->st); /* a failure: md NULL, st says why */
    a->rc = mbl_sweep_run(md, &a->so, &a->sw, &a->st);
    mbl_model_free(md);
    return NULL;
}

/* Run the sweep on `size` thread-ranks; rank r reads paths[r]. Results in a[]. */
static void run_ranks(int size, const char **paths, const mbl_sweep_options *so, int drop_last_of, rank_arg *a)
{
    world w;
    memset(&w, 0, sizeof w);
    w.size = size;
    w.drop_last_of = drop_last_of;
    pthread_mutex_init(&w.m, NULL);
    pthread_cond_init(&w.c, NULL);
    pthread_t t[MAXR];
    for (int r = 0; r < size; r++) {
        memset(&a[r], 0, sizeof a[r]);
        a[r].w = &w, a[r].rank = r, a[r].path = paths[r], a[r].so = *so;
        a[r].dist = (mbl_sweep_dist){r, size, fake_gather, &a[r]};
        a[r].so.dist = &a[r].dist;
        pthread_create(&t[r], NULL, rank_main, &a[r]);
    }
    for (int r = 0; r < size; r++) pthread_join(t[r], NULL);
    pthread_mutex_destroy(&w.m);
    pthread_cond_destroy(&w.c);
}

static int same_double(double x, double y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0; }

/* the sweep of `path` on 1 process and on 2, 3 and 5 thread-ranks: identical */
static void same_as_one(const char *path, const char *param, double from, double to, int count, int expect_failed)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){param, from, to, count};
    mbl_status st;
    mbl_sweep *ref = NULL;
    mbl_model *md = NULL;
    CHECK(mbl_model_load_file(path, NULL, 0, &md, &st) == 0);
    CHECK(mbl_sweep_run(md, &so, &ref, &st) == 0);
    mbl_model_free(md);
    if (!ref) return;
    CHECK(ref->ranks == 1 && ref->gathered_bytes == 0);
    CHECK(expect_failed ? ref->nfailed > 0 : ref->nfailed == 0);
    int sizes[] = {2, 3, 5};
    for (int k = 0; k < 3; k++) {
        int size = sizes[k];
        const char *paths[MAXR];
        for (int r = 0; r < size; r++) paths[r] = path;
        rank_arg a[MAXR];
        run_ranks(size, paths, &so, 0, a);
        for (int r = 1; r < size; r++) CHECK(a[r].rc == 0 && a[r].sw == NULL);
        mbl_sweep *sw = a[0].sw;
        CHECK(a[0].rc == 0 && sw);
        if (!sw) continue;
        CHECK(sw->ranks == size && sw->gathered_bytes > 0);
        CHECK(sw->npoints == ref->npoints && sw->nmodes == ref->nmodes && sw->nfailed == ref->nfailed);
        CHECK(sw->predictor == ref->predictor && sw->npredicted == ref->npredicted && sw->nwarm == ref->nwarm);
        int diff = 0;
        for (int p = 0; p < ref->npoints; p++) {
            diff += sw->ok[p] != ref->ok[p];
            diff += !ref->ok[p] && (!sw->error[p] || strcmp(sw->error[p], ref->error[p]));
            for (int b = 0; b < ref->nmodes; b++) {
                size_t o = (size_t)p * ref->nmodes + b;
                diff += !same_double(sw->re[o], ref->re[o]) + !same_double(sw->im[o], ref->im[o]) +
                        !same_double(sw->mac[o], ref->mac[o]);
            }
        }
        if (diff) printf("  %s on %d ranks: %d differences\n", path, size, diff);
        CHECK(diff == 0);
        mbl_sweep_free(sw);
    }
    mbl_sweep_free(ref);
}

/* a dae four-bar (fast path, warm starts within blocks, linear predictor) */
TEST(dist_fourbar_dae) { same_as_one("examples/fourbar_N5.yaml", "k", 20, 28, 70, 0); }
/* the bicycle (sensitivity predictor: derivatives and shape derivatives gathered) */
TEST(dist_bicycle) { same_as_one("examples/whipple_bicycle.yaml", "v", 0, 10, 51, 0); }
/* a mechanism (reload path), 12 modes */
TEST(dist_rotor) { same_as_one("examples/mech/rigid_rotor.yaml", "Omega", 0, 400, 23, 0); }
/* points that fail inside the range (the N = 20 four-bar locks near k = 30): their messages travel
 * to rank 0 */
TEST(dist_failing_points) { same_as_one("examples/fourbar_N20.yaml", "k", 25, 31, 13, 1); }

TEST(dist_failures)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"k", 20, 28, 40};
    rank_arg a[MAXR];
    /* one rank cannot read the model: every rank fails, nobody waits forever (a hang would time
     * the test out); rank 0 names the rank */
    const char *one_bad[] = {"examples/fourbar_N5.yaml", "examples/fourbar_N5.yaml", "examples/no_such_model.yaml"};
    run_ranks(3, one_bad, &so, 0, a);
    CHECK(a[0].rc != 0 && a[0].sw == NULL && strstr(a[0].st.msg, "rank 2: ") == a[0].st.msg &&
          strstr(a[0].st.msg, "no_such_model.yaml") != NULL);
    printf("  rank 2 fails alone, rank 0 says: %s\n", a[0].st.msg);
    CHECK(a[1].rc == 0 && a[1].sw == NULL);
    CHECK(a[2].rc != 0 && a[2].sw == NULL && strstr(a[2].st.msg, "no_such_model.yaml") != NULL);
    /* rank 0 fails: its own message */
    const char *zero_bad[] = {"examples/no_such_model.yaml", "examples/fourbar_N5.yaml"};
    run_ranks(2, zero_bad, &so, 0, a);
    CHECK(a[0].rc != 0 && a[0].sw == NULL && strstr(a[0].st.msg, "rank") == NULL &&
          strstr(a[0].st.msg, "no_such_model.yaml") != NULL);
    CHECK(a[1].rc == 0 && a[1].sw == NULL);
    /* a part that arrives one double short is refused, not read past its end */
    const char *good[] = {"examples/fourbar_N5.yaml", "examples/fourbar_N5.yaml"};
    run_ranks(2, good, &so, 1, a);
    CHECK(a[0].rc == MBL_EIO && a[0].sw == NULL && strstr(a[0].st.msg, "rank 1 sent a malformed part") != NULL);
    printf("  a short part: %s\n", a[0].st.msg);
    CHECK(a[1].rc == 0 && a[1].sw == NULL);
    /* a distribution without its gather is refused */
    mbl_sweep_dist bad = {0, 2, NULL, NULL};
    so.dist = &bad;
    mbl_sweep *sw = NULL;
    mbl_status st;
    mbl_model *md = NULL;
    CHECK(mbl_model_load_file("examples/fourbar_N5.yaml", NULL, 0, &md, &st) == 0);
    CHECK(mbl_sweep_run(md, &so, &sw, &st) == MBL_EARG && !sw);
    mbl_model_free(md);
}

int main(void)
{
    RUN(dist_fourbar_dae);
    RUN(dist_bicycle);
    RUN(dist_rotor);
    RUN(dist_failing_points);
    RUN(dist_failures);
    return test_summary("test_sweep_dist");
}
