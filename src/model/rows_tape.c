/* A tape of some residual rows alone (model_compile_F_rows): a sweep's warm corrector evaluates
 * the equilibrium's rows at every iterate, not the velocity and acceleration constraints' rows of
 * the whole residual tape. */
#include "model/model_internal.h"
#include "model/terms/term.h"

mblx_tape *model_compile_F_rows(const mbl_model *md, int nrow, const int *rows, mbl_status *st)
{
    /* the rows tape_F compiles (compile.c's job): the same expressions, equal to its values to
     * rounding (a tape of a subset may share and order its sums' parts otherwise: not always bit for
     * bit; on the N = 20 four-bar's equilibrium rows it is); no numerically evaluated term adds to
     * them */
    const mblx_id *F = md->Fc ? md->Fc : md->F;
    if (!F || !md->tape_F || nrow < 1) return NULL;
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md)) return NULL;
    mblx_id *out = mbl_alloc_array((size_t)nrow, sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < nrow; i++) {
        if (rows[i] < 0 || rows[i] >= md->nF) {
            mbl_free(out);
            return NULL;
        }
        out[i] = F[rows[i]];
    }
    model_graph_lock(md, 1); /* read while no other thread grows it */
    mblx_tape *t = mblx_compile_bound(md->g, (size_t)nrow, out, model_graph_lock_cb, (void *)md, st);
    model_graph_lock(md, 0);
    mbl_free(out);
    return t;
}
