/* Progress reports and stop requests (mblin/progress.h, core/progress.h): one installation per
 * thread, adopted by the library's worker threads, its callback serialized by a mutex. */
#include "core/progress.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct progress_ctx {
    mbl_progress_fn fn;
    void *user;
    atomic_int stop;
    pthread_mutex_t lock;
} progress_ctx;

static _Thread_local progress_ctx own = {NULL, NULL, 0, PTHREAD_MUTEX_INITIALIZER};
static _Thread_local progress_ctx *cur;        /* own, a starter's (adopted) or NULL */
static _Thread_local const char *tick_stage;   /* the stage of the ticks (a load), or NULL */
static _Thread_local int in_callback;          /* a report from inside the callback is skipped */

void mbl_progress_set(mbl_progress_fn fn, void *user)
{
    pthread_mutex_lock(&own.lock);
    own.fn = fn;
    own.user = user;
    atomic_store(&own.stop, 0);
    pthread_mutex_unlock(&own.lock);
    cur = fn ? &own : NULL;
}

static int report(const char *stage, double done, double total)
{
    progress_ctx *c = cur;
    if (!c) return 0;
    if (atomic_load(&c->stop)) return 1;
    if (in_callback) return 0;
    pthread_mutex_lock(&c->lock);
    int stop = atomic_load(&c->stop);
    if (!stop && c->fn) {
        in_callback = 1;
        stop = c->fn(c->user, stage ? stage : "", done, total) != 0;
        in_callback = 0;
        if (stop) atomic_store(&c->stop, 1);
    }
    pthread_mutex_unlock(&c->lock);
    return stop;
}

int core_progress(mbl_status *st, const char *stage, double done, double total)
{
    if (!cur || !report(stage, done, total)) return 0;
    return mbl_error(st, MBL_ECANCELLED, "cancelled during %s", stage ? stage : "the computation");
}

int core_progress_stopped(void) { return cur && atomic_load(&cur->stop); }

void core_progress_stage(const char *stage)
{
    tick_stage = stage;
    if (stage) (void)report(stage, 0, 0);
}

int core_progress_tick(double count)
{
    if (!cur || !tick_stage) return 0;
    return report(tick_stage, count, 0) ? MBL_ECANCELLED : 0;
}

void *core_progress_current(void) { return cur; }

void core_progress_adopt(void *ctx, const char *stage)
{
    cur = ctx;
    tick_stage = stage;
}

const char *core_progress_tick_stage(void) { return tick_stage; }
