/* mbla_csc_equilibrate with more scratch, for the library's own callers. Not part of the public
 * API. */
#ifndef MBLIN_LA_EQUILIBRATE_H
#define MBLIN_LA_EQUILIBRATE_H

#include "mblin/la.h"

/* mbla_csc_equilibrate (the same factors and matrix, bit for bit) with work of 2 m + n doubles:
 * the extra m hold the next sweep's row norms, taken in the pass that applies a sweep's factors
 * (one pass over A per sweep instead of two). A, r, c and work are not checked. */
#define LA_EQUILIBRATE_WS(m, n) (2 * (size_t)(m) + (size_t)(n))
int la_csc_equilibrate_ws(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work);

#endif
