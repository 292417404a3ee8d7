/* Helpers shared by the tests of src/la. */
#ifndef MBLIN_LA_TEST_UTIL_H
#define MBLIN_LA_TEST_UTIL_H

#include "mblin/la.h"
#include "test.h"

#include <string.h>

/* Deterministic pseudo-random numbers in [-1, 1). */
static inline double trand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

/* Run `call` (an expression returning a status) with the allocation-failure injection set to
 * fail after 0, 1, 2, ... allocations until it succeeds; every failure must be MBL_ENOMEM
 * (ASan's leak checker then proves the error paths free everything). `cleanup` runs after
 * each successful or failed attempt. Checks that the first attempt failed. */
#define ALLOC_FAIL_LOOP(call, cleanup)                                                    \
    do {                                                                                  \
        int first_ = 1;                                                                   \
        for (long n_ = 0; n_ < 100000; n_++) {                                            \
            mbl_alloc_fail_after(n_);                                                     \
            int r_ = (call);                                                              \
            mbl_alloc_fail_after(-1);                                                     \
            cleanup;                                                                      \
            if (first_) CHECK_EQ_INT(r_, MBL_ENOMEM);                                     \
            first_ = 0;                                                                   \
            if (r_ == MBL_ENOMEM) continue;                                               \
            CHECK_EQ_INT(r_, 0);                                                          \
            break;                                                                        \
        }                                                                                 \
    } while (0)

#endif
