/* mblin: the ABI of user routines (docs/user-routines.md).
 *
 * A user routine is a function of the user's own code (a tire model, a table of measured
 * aerodynamic coefficients, a controller) that a model uses like a built-in function: the model
 * file declares it under `routines:` with its inputs (expressions of the model: coordinates,
 * der(), parameters, inputs, time, marker measures) and names its outputs, which every expression
 * of the model may then use (a force, an ODE's right-hand side, an output).
 *
 * This header is all a routine's author needs: it depends on no other mblin header and the
 * routine's library does not link against mblin. A library of routines says which version of this
 * ABI it was compiled for by exporting MBL_USER_LIBRARY once (a function mblin_user_abi that
 * returns MBL_USER_ABI_VERSION); mblin refuses a library without it, or of another version.
 *
 *     #include <mblin/user.h>
 *     MBL_USER_LIBRARY
 *     MBL_USER_EXPORT int my_tire(mbl_user_call *c)
 *     {
 *         double alpha = c->in[0];
 *         c->out[0] = -D * sin(C * atan(B * alpha));
 *         if (c->partials) c->partials[0] = ...;   // d out_0 / d in_0
 *         return 0;
 *     }
 *
 * Rules (what mblin relies on):
 *   - a routine is a pure function of its inputs: the same inputs give the same outputs, with no
 *     state kept between calls (mblin caches a call's results and calls in any order, at points
 *     of its choosing: at perturbed inputs for differences, at many points of a sweep);
 *   - it is re-entrant: no globals written, nothing static that changes; mblin may call it from
 *     several threads at once (each call has its own mbl_user_call);
 *   - it returns 0, or a nonzero status with a one-line reason written into message (at most
 *     message_size bytes with the NUL): the model's evaluation then fails with that line, naming
 *     the routine. Non-finite outputs or partials are refused the same way;
 *   - when partials is not NULL (the model file said `partials: yes`) it writes every partial
 *     derivative partials[k * nin + j] = d out_k / d in_j (row-major, nout x nin);
 *   - it never exits, never longjmps out, and must not crash: a crash in user code takes the
 *     process down and cannot be caught (mblin says so in its documentation, not at run time). */
#ifndef MBLIN_USER_H
#define MBLIN_USER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI: a library compiled against another version is refused when loaded. */
#define MBL_USER_ABI_VERSION 1

#if defined(__GNUC__) || defined(__clang__)
#define MBL_USER_EXPORT __attribute__((visibility("default")))
#else
#define MBL_USER_EXPORT
#endif

/* One call of a routine. */
typedef struct mbl_user_call {
    int abi;                /* MBL_USER_ABI_VERSION of the mblin that calls */
    const char *name;       /* the routine's name in the model file (its `routines:` key) */
    int nin, nout;          /* inputs and outputs, as the model file declares them */
    const double *in;       /* nin inputs, in the order of the file's `inputs:` */
    double *out;            /* nout outputs, in the order of the file's `outputs:`: write them */
    double *partials;       /* NULL, or nout * nin: write d out_k / d in_j at [k * nin + j] */
    void *user_data;        /* what the host gave with the routine (mbl_user_routine_def), or NULL */
    char *message;          /* message_size bytes (a one-line reason when returning nonzero) */
    size_t message_size;
} mbl_user_call;

/* A routine: 0 on success, else nonzero with message written. */
typedef int (*mbl_user_fn)(mbl_user_call *call);

/* Exported once by a library of routines: the ABI version it was compiled for. */
#define MBL_USER_LIBRARY                                                                           \
    MBL_USER_EXPORT int mblin_user_abi(void);                                                     \
    MBL_USER_EXPORT int mblin_user_abi(void) { return MBL_USER_ABI_VERSION; }

#ifdef __cplusplus
}
#endif

#endif
