/* The forward Jacobian's coloring declined where a row is wide (fwdjac.c), for a caller that
 * takes the forward path only for narrow rows (src/model/compile.c). Not a public header. */
#ifndef MBLIN_EXPR_FWDJAC_NARROW_H
#define MBLIN_EXPR_FWDJAC_NARROW_H

#include <stddef.h>

#include "mblin/expr.h"

/* mblx_fwdjac_new, or NULL with *wide = 1 (st cleared: not an error) as soon as a row depends on
 * more than maxwidth of the syms (its pattern's first pass counts them: no pass of its own over the
 * rows' dependence sets, which cost the N = 10^4 four-bar's load 7.8 M instructions). *wide = 0
 * otherwise. */
mblx_fwdjac *mblx__fwdjac_new_narrow(const mblx_graph *g, size_t m, const mblx_id *rows, size_t n, const mblx_id *syms,
                                     size_t maxwidth, int *wide, mbl_status *st);

#endif
