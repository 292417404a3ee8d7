/* der(e) as its terms (resolve.c), for a caller that adds it in a larger sum (formulate.c's EOM
 * rows: the sum d/dt(dT/dv_i), which the row's sum flattens, is not made). */
#ifndef MBLIN_MODEL_TOTAL_DER_TERMS_H
#define MBLIN_MODEL_TOTAL_DER_TERMS_H

#include <stddef.h>

#include "model/formulate.h"

/* model_total_der(md, e) as the sum of terms[0 .. count) (mblx__total_der_terms: terms holds
 * MBLX_FLATTEN_MAX); the count, 0 on failure */
size_t model_total_der_terms(mbl_model *md, mblx_id e, mblx_id *terms);

#endif
