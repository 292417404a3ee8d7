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
 *   blocks above 32 MiB (large models) are still mapped and unmapped individually. The trim
 *   threshold is now 1 GiB + 64 MiB (below: the heap on huge pages). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

/* The heap on transparent huge pages. On the virtual machines mblin is measured on, every 4 KiB
 * page fault costs 10-15 us of CPU; a small model's heap (0.5 MiB for the 7-loop four-bar) took
 * 125 of them, more than its arithmetic. A 2 MiB huge page is one fault (0.07 us of CPU per KiB
 * instead of 3), so the first HEAP_HUGE bytes of the heap are advised MADV_HUGEPAGE before they are
 * touched: the break is moved to HEAP_SMALL below a 2 MiB boundary (address space only), malloc's
 * first extension is made to reach past HEAP_HUGE (M_TOP_PAD for that one call; its header is
 * written below the boundary), and the untouched range from the boundary is advised. The
 * start's own allocations (libgfortran's units, the environment: under 32 KiB) stay on 4 KiB
 * pages below the boundary, so that `mblin --version` or a run that stops at bad input does not
 * clear a huge page (0.15 ms); a model's allocations reach it. With THP disabled ("never") or
 * when the kernel has no huge page free, madvise fails or the faults fall back to 4 KiB pages: the
 * same as before. Skipped when malloc already has a heap or is not glibc's brk heap (sanitizers,
 * valgrind: the break then does not move). The resident size grows by at most one partly used
 * huge page per 2 MiB touched (measured: +8 % on the 1000-loop mechanism four-bar, 153 -> 166 MB,
 * whose CPU time went 0.69 -> 0.62 s and page faults 11,530 -> 274); a sweep's threads use their
 * own arenas (mmap'd), untouched by this. The range is 1 GiB of address space (malloc's
 * extensions beyond it are on 4 KiB pages as before); the trim threshold lies above it, so that
 * freeing never gives the advised range back (a later extension would not be advised).
 * docs/benchmarks.md has the measurements. */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HEAP_HUGE ((uintptr_t)1 << 30) /* address space; M_TOP_PAD is an int */
#define HEAP_SMALL ((uintptr_t)32 << 10)

static void heap_huge(void)
{
    if (mallinfo2().arena != 0) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    char *cur = sbrk(0);
    if (cur == (char *)-1 || page == 0 || page >= HUGE_PAGE) return;
    uintptr_t a = ((uintptr_t)cur + HEAP_SMALL + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (sbrk((intptr_t)(a - HEAP_SMALL - (uintptr_t)cur)) == (void *)-1) return;
    mallopt(M_TOP_PAD, (int)(HEAP_HUGE + HEAP_SMALL));
    void *first = malloc(1); /* malloc's first extension: from a - HEAP_SMALL past a + HEAP_HUGE */
    mallopt(M_TOP_PAD, 128 << 10); /* glibc's default for the later extensions */
    char *end = sbrk(0);
    if (first && (uintptr_t)first < a && end != (char *)-1 && (uintptr_t)end >= a + HUGE_PAGE)
        madvise((void *)a, ((uintptr_t)end - a) & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
    free(first);
}

/* One malloc arena. A model with 2000 residuals or more compiles its residual tape on a second
 * thread (src/model/model.c); that thread's first malloc made glibc a new arena, mmap'd on 4 KiB
 * pages: 1,660 page faults for the 300-loop four-bar (CPU 64 -> 41 ms, wall 133 -> 82 ms with one
 * arena). With one arena it allocates from the main heap (huge pages). A sweep's worker threads
 * allocate all the time and would wait for each other on one arena (+5-8 % on a 2-thread
 * mechanism sweep): `sweep --threads N` (N > 1) and an MPI launch call cli_thread_arenas
 * first. glibc fixes the arena limit at the first thread's first allocation. */
void cli_thread_arenas(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_ARENA_MAX, (int)(8 * (n > 0 && n < 4096 ? n : 2))); /* glibc's default: 8 per core */
}

__attribute__((constructor(101))) static void mblin_cli_startup(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, (int)(HEAP_HUGE + (64 << 20))); /* never trims the advised range */
    mallopt(M_ARENA_MAX, 1);
    heap_huge(); /* before anything allocates (setenv does) */
    if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS")) setenv("OPENBLAS_NUM_THREADS", "1", 0);
}
