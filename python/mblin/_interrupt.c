/* Ctrl-C during the long calls of mblin._core (_core.h; docs/python.md, "Interrupting a long call").
 *
 * Around a call made without the GIL, py_interrupt_begin installs the library's progress callback
 * (mblin/progress.h) for the calling thread. The library calls it at least every few hundredths of
 * a second of work; on the thread that made the call, at most every PY_SIGNAL_PERIOD seconds, the
 * callback takes the GIL and runs PyErr_CheckSignals: when a signal handler raises (SIGINT's,
 * KeyboardInterrupt), it keeps the exception and asks the library to stop, which then unwinds
 * (MBL_ECANCELLED). py_interrupt_end, with the GIL again, removes the callback and raises the kept
 * exception. Signal handlers run in the main thread only (Python's rule): a call made from another
 * thread is not stopped, and its callbacks take no GIL. A KeyboardInterrupt raised in a user
 * routine's callable (_user.c) stops the call the same way (py_interrupt_user). */
#include "_core.h"

#include <time.h>

#define PY_SIGNAL_PERIOD 0.02 /* s between two looks at the signals */

/* a routine's callable raised KeyboardInterrupt (py_interrupt_user); read and written with the GIL */
static int user_interrupted;

void py_interrupt_user(void) { user_interrupted = 1; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int check_signals(void *user, const char *stage, double done, double total)
{
    (void)stage, (void)done, (void)total;
    py_interrupt *pi = user;
    if (!pthread_equal(pthread_self(), pi->thread)) return 0; /* a library worker: no handler runs there */
    double t = now();
    if (t - pi->last < PY_SIGNAL_PERIOD) return 0;
    pi->last = t;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    if (stop) PyErr_Fetch(&pi->type, &pi->value, &pi->tb);
    stop |= user_interrupted;
    PyGILState_Release(g);
    return stop;
}

void py_interrupt_begin(py_interrupt *pi)
{
    pi->thread = pthread_self();
    pi->last = now();
    pi->type = pi->value = pi->tb = NULL;
    user_interrupted = 0;
    mbl_progress_set(check_signals, pi);
}

int py_interrupt_end(py_interrupt *pi)
{
    mbl_progress_set(NULL, NULL);
    if (user_interrupted && !pi->type) PyErr_SetNone(PyExc_KeyboardInterrupt), PyErr_Fetch(&pi->type, &pi->value, &pi->tb);
    user_interrupted = 0;
    if (!pi->type) return 0;
    PyErr_Restore(pi->type, pi->value, pi->tb);
    return -1;
}
