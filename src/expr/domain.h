/* Which expressions can leave a function's domain (domain.c), for a caller that checks only those
 * at an operating point (src/model/compile.c: the model's domain-check tape). Not a public
 * header. */
#ifndef MBLIN_EXPR_DOMAIN_H
#define MBLIN_EXPR_DOMAIN_H

#include <stddef.h>

#include "mblin/expr.h"

/* restricted[i] = 1 when expression e[i] of g can leave a function's domain (log, sqrt of what is
 * not provably >= 0, asin, acos, tan, a function of data, a user routine, or a power with a negative, fractional
 * (of a base not provably >= 0) or variable exponent: division included), else 0; polynomials,
 * sin, cos, exp, ... are defined everywhere their derivatives are. One pass over the nodes up to
 * the largest e[i] in handle order (operands come first), read directly (the N = 10^4 four-bar's
 * 480,048 nodes through the public accessors cost about 55 M instructions); skipped when a scan of
 * their operations finds no node where a restriction can start (then none is restricted: the
 * four-bars' sqrt of sums of squares). 0, or -1 when out of memory or when an e[i] is not a node
 * of g. */
int mblx__domain_restricted(const mblx_graph *g, size_t n, const mblx_id *e, unsigned char *restricted);

/* Tests only: the calls of mblx__domain_restricted that took the pass over every node (a
 * restriction starts at a node up to the largest e[i]; without one, nothing is restricted and
 * the pass is skipped). */
size_t mblx__domain_walks(void);

#endif
