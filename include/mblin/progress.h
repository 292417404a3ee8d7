/* mblin: progress reports and stopping long work (load, operating point, linearization, eigen
 * solution, sweeps).
 *
 * A program installs a callback for the calling thread with mbl_progress_set. The library then
 * calls it during its long phases, at least every few milliseconds of work on the large models
 * (docs/linking.md, "Progress and stopping"), with what it is doing:
 *
 *   stage  a short name, "load: read", "load: formulate", "load: compile", "point",
 *          "linearize", "eigen", "sweep" (docs/linking.md lists them)
 *   done   the work done so far in the stage: nodes made, iterations, points
 *   total  the whole of it when known (a fraction is done / total), else 0 (done is a count)
 *
 * The callback returns 0 to go on and nonzero to stop: the function that is running then returns
 * MBL_ECANCELLED ("cancelled", with the stage in the message) after freeing what it made, as on
 * any error. Once a callback has asked to stop, every later report under the same installation
 * returns MBL_ECANCELLED without calling it again, until mbl_progress_set is called anew.
 *
 * Threads: the installation belongs to the thread that made it. The library's own worker threads
 * (a sweep's points, the second compile thread of a large model) report to the installation of
 * the thread that started them, so the callback may be called from those threads too, never by
 * two at once (the library serializes the calls). A callback must not call into the library (a
 * report made while one is running on the same thread is skipped). The library never prints. */
#ifndef MBLIN_PROGRESS_H
#define MBLIN_PROGRESS_H

#include "mblin/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0: go on; nonzero: stop (the library returns MBL_ECANCELLED). */
typedef int (*mbl_progress_fn)(void *user, const char *stage, double done, double total);

/* Install fn (with its user pointer) for the calling thread; NULL removes it. Clears a stop that
 * was asked before. */
MBL_API void mbl_progress_set(mbl_progress_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif
