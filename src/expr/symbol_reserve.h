/* Room for a graph's symbols made at once (src/model/symbols.c: the model's symbols, counted before
 * they are made), as mblx_graph_reserve for its nodes: the symbols' table sized once instead of
 * rehashed at every doubling (44 M instructions of the N = 10^4 four-bar's 80,019 symbols). */
#ifndef MBLIN_EXPR_SYMBOL_RESERVE_H
#define MBLIN_EXPR_SYMBOL_RESERVE_H

#include <stddef.h>

#include "mblin/expr.h"

/* Room for nsym symbols in all (those made already count): their arrays and a name table at most
 * half full. Only capacities change: the symbols made after it get the same indices and nodes.
 * 0, MBL_EARG (no graph) or MBL_ENOMEM (the graph unchanged but usable). */
int mblx__symbol_reserve(mblx_graph *g, size_t nsym);

#endif
