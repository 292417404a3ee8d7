/* A plain number's node without the parser's frames (expr/number_node.c, with the parser's reading of
 * a literal's digits): nearly every parameter and initial value of a large model is one
 * ("-0.41614683654714241", "25"). */
#ifndef MBLIN_EXPR_NUMBER_NODE_H
#define MBLIN_EXPR_NUMBER_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "mblin/expr.h"

/* The literal text[0 .. n) (digits, an optional '.' and digits, an optional exponent: the parser's
 * scan_number checked its form) as a significand below 2^64 and a power of ten: 0, or -1 when the
 * significand has more than 19 digits or the exponent is large */
int mblx__decimal_parts(const char *text, size_t n, uint64_t *d, int *e);

/* text a decimal number ("1", "-0.5", ".5", "5.", "1.5e-3", at most one leading '-', no blanks): 1
 * and in *out the node mblx_parse makes of it, made by the same calls in the same order (the
 * graph node for node: the constant, then its negation); 0 (the graph and *out untouched) for
 * any other text, and for a number whose value the parser does not read with core_decimal_value
 * (more than 19 significant digits, a large exponent: strtod's) */
int mblx__number_node(mblx_graph *g, const char *text, mblx_id *out);

#endif
