/* Test hooks of the model compile (src/model/compile.c). */
#ifndef MBLIN_MODEL_COMPILE_MODES_H
#define MBLIN_MODEL_COMPILE_MODES_H

#include <stddef.h>

/* all != 0: the symbolic Jacobians (jacobian_unknowns) seed every unknown, as before session 35;
 * 0: only the unknowns their rows depend on (the default). Returns how many Jacobians were made
 * with fewer columns than unknowns so far (tests only; not thread-safe to switch while loading). */
size_t model__jacobian_columns_mode(int all);

#endif
