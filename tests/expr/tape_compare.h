/* Two compiled tapes compared instruction by instruction (the tape compiler's tests). */
#ifndef MBLIN_TEST_TAPE_COMPARE_H
#define MBLIN_TEST_TAPE_COMPARE_H

#include <string.h>

#include "expr/tape_internal.h"

/* Instruction i's constants the same bits (their places in the pools may differ). */
static inline int same_const(const mblx_tape *a, const mblx_tape *b, size_t i)
{
    double ca = mblx__ins_c(a, &a->ins[i]), cb = mblx__ins_c(b, &b->ins[i]);
    return !memcmp(&ca, &cb, sizeof ca);
}

/* The same instructions (operation, registers, constant's bits), registers and output registers. */
static inline int same_tape(const mblx_tape *a, const mblx_tape *b)
{
    if (a->nins != b->nins || a->nreg != b->nreg || a->nout != b->nout || a->nrun != b->nrun) return 0;
    for (size_t i = 0; i < a->nins; i++)
        if (a->ins[i].op != b->ins[i].op || a->ins[i].dst != b->ins[i].dst || a->ins[i].a != b->ins[i].a ||
            a->ins[i].b != b->ins[i].b || !same_const(a, b, i))
            return 0;
    return !memcmp(a->outreg, b->outreg, a->nout * sizeof *a->outreg);
}

#endif
