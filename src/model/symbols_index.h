/* The resolver's lookup of a name among every kind of name a model file declares (names.c). */
#ifndef MBLIN_MODEL_SYMBOLS_INDEX_H
#define MBLIN_MODEL_SYMBOLS_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "model/source.h"

/* The lists the resolver searches, in its order of precedence (constraints and non-holonomic
 * constraints only when named). */
enum {
    MODEL_SYM_PARAMETER,
    MODEL_SYM_COORDINATE,
    MODEL_SYM_INPUT,
    MODEL_SYM_ODE_STATE,
    MODEL_SYM_IMPLICIT,
    MODEL_SYM_VARIABLE,
    MODEL_SYM_CONSTRAINT,
    MODEL_SYM_NONHOLONOMIC,
    MODEL_SYM_LISTS
};

/* The index of name's first occurrence in the first of those lists that holds it (*list: that
 * list), or -1; as searching the lists in turn with model_find_name, by one hash and one probe.
 * The index is rebuilt when the lists' count of items changes (they only grow) and dropped by
 * model_name_index_reset. */
int model_find_symbol(const mbl_src *s, const char *name, size_t len, int *list);
/* The hash of the name indexes (also declared in formulate.h). */
uint64_t model_name_hash(const char *s, size_t n);
/* The name indexes forgotten when s is freed (model_src_free): they are keyed by the lists'
 * addresses, which a later source may reuse with other names. */
void model_name_index_forget(const mbl_src *s);

#endif
