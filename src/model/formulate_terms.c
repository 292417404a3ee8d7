/* The structured terms' part of the formulation, for every term of the table (model/terms/term.h):
 * whether the source has any, the constraint rows they evaluate themselves, and their formulation
 * (each term's own, in its file under terms/), in table order. */
#include "model/formulate.h"
#include "model/terms/term.h"

int model_terms_in_src(const mbl_src *s)
{
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->in_src && model_terms[t]->in_src(s)) return 1;
    return 0;
}

int model_terms_claim_rows(loader *L)
{
    int rc = 0;
    for (int t = 0; t < MODEL_NTERMS && !rc; t++) {
        const model_term_ops *term = model_terms[t];
        if (!term->claim_rows || !term->in_src(L->src)) continue;
        if (!L->term_row && !(L->term_row = mbl_calloc((size_t)L->src->constraints.n + 1, 1)))
            return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        rc = term->claim_rows(L);
    }
    return rc;
}

int model_formulate_terms(loader *L)
{
    int rc = 0;
    for (int t = 0; t < MODEL_NTERMS && !rc; t++)
        if (model_terms[t]->formulate) rc = model_terms[t]->formulate(L);
    return rc;
}
