#include "mblin/status.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* Fault injection for tests: number of allocations still allowed to succeed (< 0: unlimited).
 * Atomic, because the library may allocate on two threads at once (model compilation). */
static atomic_long alloc_budget = -1;

static int alloc_allowed(void)
{
    long b = atomic_load(&alloc_budget);
    while (b >= 0) {
        if (b == 0) return 0;
        if (atomic_compare_exchange_weak(&alloc_budget, &b, b - 1)) return 1;
    }
    return 1;
}

void mbl_alloc_fail_after(long n) { atomic_store(&alloc_budget, n < 0 ? -1 : n); }

void *mbl_malloc(size_t size)
{
    if (!alloc_allowed()) return NULL;
    return malloc(size ? size : 1);
}

void *mbl_calloc(size_t count, size_t size)
{
    if (!alloc_allowed()) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void *mbl_realloc(void *ptr, size_t size)
{
    if (!alloc_allowed()) return NULL;
    return realloc(ptr, size ? size : 1);
}

void *mbl_alloc_array(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    return mbl_malloc(count * size);
}

void *mbl_realloc_array(void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    return mbl_realloc(ptr, count * size);
}

void mbl_free(void *ptr) { free(ptr); }
