/* The structured terms: a model's parts that are formulated from their own source (not from the
 * text rows) and evaluated numerically beside the model's residual and Jacobian tapes: a
 * relative-coordinate tree's (rtree.c), the planar and spatial flexible bodies' (ffr_num.c,
 * ffr3_num.c), the planar rigid bodies' and revolute joints' (pmech_num.c). The model reaches them
 * only through one table (model_terms, in this order), whose entries do a term's whole job:
 * formulation (formulate.c, model.c), compilation (compile.c), evaluation (eval.c), the expression
 * form (model_dae_nodes), checks (checks.c), the parameter derivatives (dae_deriv.c) and freeing.
 * The generic code walks the table once per load or per evaluation, never per entry. Adding a
 * term: a file in terms/ that defines its model_term_ops and one line in the table
 * (docs/architecture.md, "Adding a term"). A tree never meets the other terms (relative
 * coordinates refuse flexible bodies; the planar terms are of absolute coordinates). Internal to
 * src/model. */
#ifndef MBLIN_MODEL_TERMS_TERM_H
#define MBLIN_MODEL_TERMS_TERM_H

#include <stddef.h>

#include "model/model_internal.h"

struct loader;  /* model/formulate.h */
struct mbl_src; /* model/source.h */

/* Every entry but name, present, eval, exprs, work and free may be NULL: the step then does
 * nothing for the term (or, where said, the generic code does it). Unless said otherwise an entry
 * is called only when present(md) is 1. "Loading" entries run inside model_from_src on a model no
 * other thread sees yet (no lock); the others say what they need. */
typedef struct model_term_ops {
    const char *name;
    /* 1 when its Jacobian entries lie past md->jac_ntape (the tape leaves them unset: they are
     * zeroed once before the first such term adds its own), 0 when it writes them itself */
    int after_tape;
    /* 1 when the model has this term (once formulated; cheap: a field test) */
    int (*present)(const mbl_model *md);

    /* ---- loading: formulation (model_from_src, model.c; model_formulate, formulate.c) ---- */
    /* 1 when the source has this term (called on any source; before or without a model). NULL:
     * its source is another entry's (the spatial flexible bodies are the planar ones' list) */
    int (*in_src)(const struct mbl_src *s);
    /* before any row is formulated: the constraint rows this term evaluates itself marked 1 in
     * L->term_row (m entries, zeroed; model_from_src allocates it when any term has this entry and
     * is in the source), so that formulate_constraints leaves them zero. Called when in_src */
    int (*claim_rows)(struct loader *L);
    /* after the EOM rows: its texts parsed (model_parse_item_text) and its data attached to the
     * model: rows and closed-form entries into md->Fs (model_structured_rows) and md->sjac, or its
     * numeric data with its pattern pushed into md->sjac with the node 0. Called on every load
     * (returns 0 when the source does not have the term), in table order */
    int (*formulate)(struct loader *L);

    /* ---- loading: compilation (model_compile, compile.c) ---- */
    /* after the text rows' Jacobian and md->Fs/md->sjac merged into md->jac: the entries it
     * computes appended to md->jac (with the node 0) */
    int (*pattern)(mbl_model *md, mbl_status *st);
    /* its places of md->jac renumbered, place p -> map[p]: md->sjac's entry p -> its final md->jac
     * place, in one call (model_compile's bind: the merge's place composed with the permutation that
     * puts the entries no tape computes last; NULL: it keeps no place pushed into md->sjac) */
    void (*remap)(mbl_model *md, const int *map);
    /* the outputs' Jacobian md->yjac of md->y (NULL: the symbolic one, jacobian_unknowns) */
    int (*outputs_jac)(mbl_model *md, mbl_status *st);
    /* after the tapes are compiled: what jac_y needs (its own tape of the outputs) */
    int (*outputs_bind)(mbl_model *md, mbl_status *st);
    /* the work its evaluation needs beyond the tapes' (doubles; once compiled) */
    size_t (*work)(const mbl_model *md);

    /* ---- evaluation (eval.c; const model, any thread) ---- */
    /* its residual rows added to F and its Jacobian entries to jac at the symbol values syms (one
     * of F, jac NULL; work: md->work_size doubles) */
    int (*eval)(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st);
    /* as eval, where only the rows of the groups in rowmask (bits 1 << MBL_ROW_*) and their entries
     * in the blocks of colmask (bits 1 << MBL_BLK_*) are wanted (the operating point's Newton
     * steps: model_eval_F_sel, model_eval_jac_sel): those values as eval gives them, bit for bit;
     * others may be left as they are. NULL: not offered (those evaluations then take eval) */
    int (*eval_sel)(const mbl_model *md, const double *syms, double *F, double *jac, double *work, unsigned rowmask,
                    unsigned colmask, mbl_status *st);
    /* its Jacobian entries into jac (as eval) and the outputs with their Jacobian's values into y
     * (md->tape_y's layout; NULL: not wanted) in one pass, after tape_jac's values: taken by
     * model_eval_jac_y when it is the model's only present term and md->ny > 0. NULL: eval, then
     * tape_y */
    int (*jac_y)(const mbl_model *md, const double *syms, double *jac, double *y, double *work, mbl_status *st);
    /* the inverse of the mass matrix by the term's own recursion (a tree's articulated bodies),
     * for a model whose M = dR/da is the term's alone (mass_only 1; once compiled): M^-1 at syms
     * into minv (n x n by columns; mwork: mass_work doubles), and with jac not NULL its Jacobian
     * entries and outputs as jac_y (or eval) gives them, in the same pass; 1 when M is not
     * positive definite there. All three NULL for a term without one. dense_ok: 1 when minv also
     * takes dense 1, jac then three n x n matrices by columns (dR/dq, dR/dv, dR/da) to add its
     * entries to (model_eval_dense_minv); NULL: never */
    int (*mass_only)(const mbl_model *md);
    size_t (*mass_work)(const mbl_model *md);
    int (*minv)(const mbl_model *md, const double *syms, double *jac, double *y, double *minv, double *mwork,
                double *work, int dense, mbl_status *st);
    int (*dense_ok)(const mbl_model *md);
    /* its rows (added to Fs) and Jacobian entries (pushed into S) as expressions (model_dae_nodes;
     * graph lock held) */
    int (*exprs)(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st);

    /* ---- checks and sensitivities ---- */
    /* its own elements' domain at a solved point (model_check_domain): 0, or the error naming the
     * element (a spring whose markers meet). NULL: nothing to check */
    int (*check_point)(const mbl_model *md, const double *syms, mbl_status *st);
    /* 1 when the values of row's Jacobian entries depend on the parameter symbol p through the
     * term's own texts, which the entries' nodes do not show (a tree's masses and inertias;
     * model_jac_set_note names the --set behind a suspicious entry) */
    int (*row_depends)(const mbl_model *md, int row, mblx_id p);
    /* 1 when its rows depend on the parameters through data that is not an expression (a flexible
     * body's invariants scaled by parameters): then mbl_dae_deriv_new_param computes the full
     * second derivatives and param_deriv adds the term's part (under model_graph_lock, which
     * mbl_dae_deriv_new holds). Both NULL or neither; called whether or not present */
    int (*param_dep)(const mbl_model *md);
    int (*param_deriv)(const mbl_model *md, int np, const mblx_id *psym, mblx_sparse *H, mblx_sparse *Fp,
                       mbl_status *st);

    /* free its data, absent or not (model_free, after the graph is freed: no node may be used) */
    void (*free)(mbl_model *md);
} model_term_ops;

enum { MODEL_NTERMS = 4 };
extern const model_term_ops model_term_rtree, model_term_ffr, model_term_ffr3, model_term_pmech;
extern const model_term_ops *const model_terms[MODEL_NTERMS];

/* md->Fs, the structured rows merged into md->F by model_compile: allocated and zeroed by the first
 * term's formulate that needs it (dae_helpers.c) */
int model_structured_rows(mbl_model *md, mbl_status *st);
/* After the text rows are differentiated (model_compile): the terms' rows and entries added to the
 * model's, F[i] += Fs[i] for the EOM rows and S's entries merged into md->jac (dae_helpers.c);
 * at (S->nz, or NULL): each entry's index in md->jac, as model_jac_index would give it. */
int model_structured_merge(mbl_model *md, const mblx_id *Fs, const mbl_sjac *S, int *at, mbl_status *st);

#endif
