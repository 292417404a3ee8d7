/* A tape compiled for a few evaluations, for a caller that knows it evaluates the tape at a point
 * or two (src/model/compile.c: the outputs' and user states' tapes of a one-point command's load).
 * Not a public header. */
#ifndef MBLIN_EXPR_COMPILE_ONCE_H
#define MBLIN_EXPR_COMPILE_ONCE_H

#include <stddef.h>

#include "mblin/expr.h"

/* mblx_compile's tape without what only makes repeated evaluations cheaper: its values are
 * mblx_compile's, bit for bit (the common pairs of operands, which group the operations and so
 * decide the rounding, are found as mblx_compile finds them), but from 1,024 nodes the sums and
 * products are not rewritten as chains sharing their prefixes (the same operations in the same
 * order: the same values; tape_internal.h, MBLX__SHARE_ONCE). An evaluation may take more
 * instructions (the prefixes the chains would share); the compilation takes fewer (the mechanism
 * bicycle's user states: the same 2,925 instructions, the chains shared nothing after the pairs;
 * 0.66 M instructions less to compile). bound, lock, ctx: as mblx_compile_few's (bound: as
 * mblx_compile_bound's). Returns NULL on failure, as mblx_compile. */
mblx_tape *mblx__compile_once(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                              void (*lock)(void *ctx, int on), void *ctx, mbl_status *st);

/* The tape of the expressions as written: neither the common pairs of operands nor the chains are
 * searched for; scheduled as mblx_compile's. The values are those of the expressions' operations
 * in the order written: other last bits than mblx_compile's where it shares a pair. bound, lock,
 * ctx: as mblx_compile_few's. For the outputs' and user states' tapes of a one-point command's
 * load, which evaluates them a few times (src/model/compile.c: the mechanism bicycle's 0.50 M
 * instructions less than mblx__compile_once's). */
mblx_tape *mblx__compile_written(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                                 void (*lock)(void *ctx, int on), void *ctx, mbl_status *st);

#endif
