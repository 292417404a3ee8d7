/* A tape compiled for a few evaluations, for a caller that knows it evaluates the tape at a point
 * or two (src/model/compile.c: the residual's, outputs' and user states' tapes of a one-point
 * command's load). Not a public header. */
#ifndef MBLIN_EXPR_COMPILE_ONCE_H
#define MBLIN_EXPR_COMPILE_ONCE_H

#include <stddef.h>

#include "mblin/expr.h"

/* The tape of the expressions as written: neither the common pairs of operands nor the chains are
 * searched for (the work that pays for a tape evaluated many times); scheduled as mblx_compile's.
 * The values are those of the expressions' operations in the order written: other last bits than
 * mblx_compile's where it shares a pair. bound, lock, ctx: as mblx_compile_few's (bound: the tape
 * reads its messages from the graph, as mblx_compile_bound's). For a one-point command's load
 * (the mechanism bicycle's: 0.82 M instructions less for the residual's tape than with
 * mblx_compile_bound's pairs, 0.50 M for the outputs' and user states'). Returns NULL on
 * failure, as mblx_compile. */
mblx_tape *mblx__compile_written(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                                 void (*lock)(void *ctx, int on), void *ctx, mbl_status *st);

#endif
