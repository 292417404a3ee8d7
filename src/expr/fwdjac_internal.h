/* The forward Jacobian (mblx_fwdjac): made by fwdjac.c (pattern and coloring), its values by
 * tape_forward.c (sweeps of ncolors directions). Not a public header. */
#ifndef MBLIN_EXPR_FWDJAC_INTERNAL_H
#define MBLIN_EXPR_FWDJAC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mblin/expr.h"

struct mblx_fwdjac {
    size_t m, n, nnz, ncolors;
    int *colptr, *rowidx; /* the pattern by column (n + 1, nnz) */
    int *color;           /* n */
    int *symcolor;        /* per symbol index of the graph: its column's color, -1 if not a column */
    size_t nsym;
    /* the tangent each entry is read from in the tangents of a one-sweep evaluation of src_tape (the
     * tape it was given to, mblx_tape_set_fwdjac; NULL when more than one sweep): vals[e] =
     * T[src[e]] in one pass, not by column through the rows' registers (the N = 1000 four-bar's
     * eight evaluations: 5.06 -> 2.69 M instructions, and 0.61 M to make it) */
    uint32_t *src;
    const mblx_tape *src_tape;
};

#endif
