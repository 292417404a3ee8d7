/* The structured terms evaluated numerically beside the model's residual and Jacobian tapes: a
 * relative-coordinate tree's (rtree.c), the planar and spatial flexible bodies' (ffr_num.c,
 * ffr3_num.c), the planar
 * rigid bodies' and revolute joints' (pmech_num.c). The model reaches them through one table
 * (model_terms, in this order): its evaluators (model/eval.c), their expression form
 * (model_dae_nodes), the work size and freeing. A tree never meets the other two (relative
 * coordinates refuse flexible bodies; the planar terms are of absolute coordinates). Internal to
 * src/model. */
#ifndef MBLIN_MODEL_TERMS_TERM_H
#define MBLIN_MODEL_TERMS_TERM_H

#include <stddef.h>

#include "model/model_internal.h"

typedef struct model_term_ops {
    const char *name;
    /* 1 when its Jacobian entries lie past md->jac_ntape (the tape leaves them unset: they are
     * zeroed once before the first such term adds its own), 0 when it writes them itself */
    int after_tape;
    /* 1 when the model has this term */
    int (*present)(const mbl_model *md);
    /* its residual rows added to F and its Jacobian entries to jac at the symbol values syms (one
     * of F, jac NULL; work: md->work_size doubles) */
    int (*eval)(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st);
    /* its rows (into Fs) and Jacobian entries (into S) as expressions (graph lock held) */
    int (*exprs)(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st);
    /* the work its evaluation needs beyond the tapes' (doubles) */
    size_t (*work)(const mbl_model *md);
    /* free its data (absent or not) */
    void (*free)(mbl_model *md);
} model_term_ops;

enum { MODEL_NTERMS = 4 };
extern const model_term_ops model_term_rtree, model_term_ffr, model_term_ffr3, model_term_pmech;
extern const model_term_ops *const model_terms[MODEL_NTERMS];

#endif
