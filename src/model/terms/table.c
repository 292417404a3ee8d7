/* The term table: the structured terms (term.h), one entry each, in their order of evaluation.
 * The model's evaluators (eval.c), its expression form (dae_nodes.c), compilation, checks and
 * freeing loop over it; in its own file, so that they reach the terms through it and no term's
 * file is reached from below by way of theirs. */
#include "model/terms/term.h"

const model_term_ops *const model_terms[MODEL_NTERMS] = {&model_term_rtree, &model_term_ffr, &model_term_ffr3,
                                                          &model_term_pmech};
