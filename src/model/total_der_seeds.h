/* The seeds of the model's total derivatives by symbol, made once for many derivatives under them
 * (resolve.c; the constraint rows and the EOM rows of formulate.c). */
#ifndef MBLIN_MODEL_TOTAL_DER_SEEDS_H
#define MBLIN_MODEL_TOTAL_DER_SEEDS_H

#include "model/model_internal.h"

/* md->nsym entries, by symbol index: the node its time derivative is + 2 (q_j -> v_j, v_j -> a_j,
 * X_j -> Xdot_j, t -> 1), 1 for any other symbol (constant in time): the map of
 * mblx__total_der_map (src/expr/gradient_terms.h), under which it gives model_total_der's nodes.
 * Allocated (mbl_free); NULL out of memory. */
uint32_t *model_total_der_seeds(mbl_model *md);

#endif
