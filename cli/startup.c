/* Process settings of the command-line tool made before any library initializes (the library
 * itself never changes process-wide settings).
 *
 * - BLAS on one thread. OpenBLAS (pthreads build) starts its worker threads in its own load-time
 *   constructor, so openblas_set_num_threads(1) in main came too late: the worker existed and
 *   spun (110-118 ms of CPU for 64 ms of wall time on a 50-link chain). This constructor runs
 *   first in the static command line (priority 101 runs before OpenBLAS's unprioritized
 *   constructor in one executable; see docs/benchmarks.md) and sets OPENBLAS_NUM_THREADS=1 in the
 *   environment OpenBLAS reads, unless the user set it or OMP_NUM_THREADS. In a dynamically
 *   linked tool the shared libraries' constructors run earlier; main's
 *   openblas_set_num_threads(1) then still caps the thread count.
 * - No malloc churn: glibc returns freed memory at the top of the heap to the kernel above 128 KiB
 *   and serves blocks above 128 KiB (growing dynamically) by mmap, so the growing pools of the
 *   expression engine were unmapped and faulted back (about 3 ms of a 19 ms small-model run). A
 *   fixed mmap threshold of 32 MiB and trim threshold of 64 MiB keep that memory in the process;
 *   blocks above 32 MiB (large models) are still mapped and unmapped individually. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

__attribute__((constructor(101))) static void mblin_cli_startup(void)
{
    if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS")) setenv("OPENBLAS_NUM_THREADS", "1", 0);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
