/* The benchmarks' clock and the comparison for their medians (header-only, bench/ only). */
#ifndef MBLIN_BENCH_CLOCK_H
#define MBLIN_BENCH_CLOCK_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* wall time, or the process's CPU time with MBLIN_BENCH_CLOCK=cpu (robust on a shared machine:
 * bench/peers.py sets it) */
static inline double bench_now(void)
{
    static int cpu = -1;
    if (cpu < 0) cpu = getenv("MBLIN_BENCH_CLOCK") && !strcmp(getenv("MBLIN_BENCH_CLOCK"), "cpu");
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort comparison of doubles, ascending */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
