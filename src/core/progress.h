/* The library's side of mblin/progress.h: the hooks its long phases call (src/core/progress.c).
 *
 * core_progress(st, stage, done, total) calls the thread's callback (none installed: returns 0 at
 * the cost of one thread-local read) and returns 0, or MBL_ECANCELLED with "cancelled during
 * <stage>" in st when the callback asked to stop: a hook is one line at a place that already
 * returns errors, `if ((rc = core_progress(st, "point", it, max))) goto fail;`.
 *
 * During a load the expression graph and the tape compiler tick (core_progress_tick) every few
 * thousand nodes, under the stage named by core_progress_stage (NULL outside a load: graphs
 * that grow after loading, shared by threads, are never stopped half-built). A worker thread
 * reports to its starter's installation: core_progress_current() in the starter, then
 * core_progress_adopt() in the worker. */
#ifndef MBLIN_CORE_PROGRESS_H
#define MBLIN_CORE_PROGRESS_H

#include "mblin/progress.h"
#include "mblin/status.h"

int core_progress(mbl_status *st, const char *stage, double done, double total);
/* 1 once this thread's installation was asked to stop (no call). */
int core_progress_stopped(void);
/* The stage of the ticks on this thread (a string literal), reported at once; NULL ends them. */
void core_progress_stage(const char *stage);
/* A tick of count units of work in the current stage: 0, or MBL_ECANCELLED (no message). */
int core_progress_tick(double count);
void *core_progress_current(void);
/* The worker's installation and the stage of its ticks (no report). */
void core_progress_adopt(void *ctx, const char *stage);
/* The stage of this thread's ticks (to hand to a worker that ticks). */
const char *core_progress_tick_stage(void);

#endif
