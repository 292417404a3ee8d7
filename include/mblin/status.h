/* mblin: status codes, error messages and the allocation hooks shared by every module.
 *
 * Every fallible function of the library returns an int status: 0 (MBL_OK) on success, a
 * negative MBL_E* code on failure. Functions that can fail take a `mbl_status *` (may be NULL)
 * that receives the code and a one-line message naming what went wrong and where. The library
 * never prints and never exits. */
#ifndef MBLIN_STATUS_H
#define MBLIN_STATUS_H

#include "mblin/export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MBL_OK = 0,
    MBL_ENOMEM = -1,    /* allocation failed (or size arithmetic overflowed) */
    MBL_EDIM = -2,      /* dimensions do not match / invalid argument */
    MBL_ESINGULAR = -3, /* a matrix that must be regular is singular */
    MBL_ENOCONV = -4,   /* an iteration did not converge */
    MBL_EPARSE = -5,    /* malformed text (expression or model file) */
    MBL_EDOMAIN = -6,   /* evaluation outside a function's domain (sqrt(-1), log(0), x/0) */
    MBL_EMODEL = -7,    /* a model that cannot be used as written */
    MBL_EIO = -8,       /* a file could not be read or written */
    MBL_ELIB = -9,      /* an underlying library (LAPACK, KLU, ...) reported an error */
    MBL_EARG = -10,     /* invalid argument to an API function */
    MBL_ECANCELLED = -11, /* stopped by the progress callback (mblin/progress.h) */
    MBL_EPERM = -12     /* the model would run user code the caller did not allow (docs/user-routines.md) */
};

#define MBL_MSG_MAX 1024

typedef struct mbl_status {
    int code;                /* 0 or a negative MBL_E* code */
    char msg[MBL_MSG_MAX];   /* one line, no trailing newline; "" when code == 0 */
} mbl_status;

/* Clear a status (code 0, empty message). Accepts NULL. */
MBL_API void mbl_status_clear(mbl_status *st);

/* Record an error; printf-style message. Returns `code` so callers can write
 * `return mbl_error(st, MBL_EDIM, "...")`. Accepts st == NULL (then only returns code). */
MBL_API int mbl_error(mbl_status *st, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefix the existing message with context ("while ...: <old message>"). Returns st->code. */
MBL_API int mbl_error_prefix(mbl_status *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Short name of a status code ("out of memory", "singular matrix", ...). */
MBL_API const char *mbl_strerror(int code);

/* Library version string, e.g. "0.1.0". */
MBL_API const char *mbl_version(void);

/* ---- allocation ------------------------------------------------------------------------
 * Every allocation of the library goes through these. mbl_alloc_array checks the size
 * arithmetic (count * size) for overflow. Tests use mbl_alloc_fail_after(n) to make the
 * (n+1)-th allocation from now on fail (n < 0 switches the injection off); it is a testing
 * hook, process-global and not thread-safe. */
MBL_API void *mbl_malloc(size_t size);
MBL_API void *mbl_calloc(size_t count, size_t size);
MBL_API void *mbl_realloc(void *ptr, size_t size);
MBL_API void *mbl_alloc_array(size_t count, size_t size); /* malloc(count*size), NULL on overflow */
MBL_API void *mbl_realloc_array(void *ptr, size_t count, size_t size);
MBL_API void mbl_free(void *ptr);
MBL_API void mbl_alloc_fail_after(long n);

#ifdef __cplusplus
}
#endif
#endif
