/* Two compiled tapes compared instruction by instruction (the tape compiler's tests). */
#ifndef MBLIN_TEST_TAPE_COMPARE_H
#define MBLIN_TEST_TAPE_COMPARE_H

#include <string.h>

#include "expr/tape_internal.h"

/* The same instructions (operation, registers, constant's bits), registers and output registers. */
static inline int same_tape(const mblx_tape *a, const mblx_tape *b)
{
    if (a->nins != b->nins || a->nreg != b->nreg || a->nout != b->nout || a->nrun != b->nrun) return 0;
    for (size_t i = 0; i < a->nins; i++)
        if (a->ins[i].op != b->ins[i].op || a->ins[i].dst != b->ins[i].dst || a->ins[i].a != b->ins[i].a ||
            a->ins[i].b != b->ins[i].b || memcmp(&a->ins[i].c, &b->ins[i].c, sizeof a->ins[i].c))
            return 0;
    return !memcmp(a->outreg, b->outreg, a->nout * sizeof *a->outreg);
}

#endif
