/* A plain number's node without the parser's frames (expr/parse.c, its own number reader): nearly
 * every parameter and initial value of a large model is one ("-0.41614683654714241", "25"). */
#ifndef MBLIN_EXPR_NUMBER_NODE_H
#define MBLIN_EXPR_NUMBER_NODE_H

#include "mblin/expr.h"

/* text a decimal number ("1", "-0.5", ".5", "5.", "1.5e-3", at most one leading '-', no blanks): 1
 * and in *out the node mblx_parse makes of it, made by the same calls in the same order (the
 * graph node for node: the constant, then its negation); 0 (the graph and *out untouched) for
 * any other text, and for a number whose value the parser does not read with core_decimal_value
 * (more than 19 significant digits, a large exponent: strtod's) */
int mblx__number_node(mblx_graph *g, const char *text, mblx_id *out);

#endif
