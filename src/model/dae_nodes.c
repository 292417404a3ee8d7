/* The DAE as expressions with the numerically evaluated terms included (model_dae_nodes). */
#include "model/formulate.h"
#include "model/terms/term.h"

/* The Jacobian's expressions of a model loaded with forward_jacobian (md->jac has its structural
 * pattern and no nodes): mblx_jacobian of md->F, each entry at its place in md->jac, the others 0.
 * An entry of md->F's Jacobian outside the pattern (the rows the tape computes, md->Fc, do not depend
 * on that unknown structurally) is identically zero and dropped. Cached in md->jx. */
static int forward_nodes(const mbl_model *md, const mblx_id **jac, mbl_status *st)
{
    if (!md->jx) {
        mbl_model *w = (mbl_model *)md; /* the cache: built once, under the graph lock */
        mblx_graph *g = md->g;
        int nz = md->jac.nz, nu = md->nunk, rc = 0;
        mblx_id *syms = mbl_alloc_array((size_t)nu + 1, sizeof *syms), *jx = mbl_alloc_array((size_t)nz + 1, sizeof *jx);
        mblx_sparse S = {0, 0, NULL, NULL, NULL};
        int *tr = NULL, *tc = NULL, *at = NULL, snz = 0;
        if (!syms || !jx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; j < nu && !rc; j++) syms[j] = mblx_symbol_node(g, (size_t)md->sym_of_unknown[j]);
        if (!rc && mblx_jacobian(g, (size_t)md->nF, md->F, (size_t)nu, syms, &S))
            rc = mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            snz = S.colptr[nu];
            tr = mbl_alloc_array((size_t)snz + 1, sizeof *tr), tc = mbl_alloc_array((size_t)snz + 1, sizeof *tc);
            at = mbl_alloc_array((size_t)snz + 1, sizeof *at);
            if (!tr || !tc || !at) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
        for (int j = 0; j < nu && !rc; j++)
            for (int p = S.colptr[j]; p < S.colptr[j + 1]; p++) tr[p] = S.rowidx[p], tc[p] = j;
        if (!rc) rc = model_jac_index(md, snz, tr, tc, at, st);
        if (!rc) {
            mblx_id zero = mblx_const(g, 0.0);
            for (int p = 0; p < nz; p++) jx[p] = zero;
            for (int p = 0; p < snz; p++)
                if (at[p] >= 0) jx[at[p]] = S.node[p];
            rc = mblx_graph_status(g, st);
        }
        mblx_sparse_free(&S);
        mbl_free(syms), mbl_free(tr), mbl_free(tc), mbl_free(at);
        if (rc) {
            mbl_free(jx);
            return rc;
        }
        w->jx = jx;
    }
    *jac = md->jx;
    return 0;
}

int model_dae_nodes(const mbl_model *md, const mblx_id **F, const mblx_id **jac, mbl_status *st)
{
    int rc0 = model_inlined_rows(md, st); /* md->F's rows a forward-mode load left for later */
    if (rc0) return rc0;
    *F = md->F;
    *jac = md->jac.node;
    if (md->jac.nz && md->jac.node[0] == MBLX_NONE) return forward_nodes(md, jac, st);
    int nterm = 0;
    for (int t = 0; t < MODEL_NTERMS; t++) nterm += model_terms[t]->present(md);
    if (!nterm) return 0;
    if (!md->Fx) {
        mbl_model *w = (mbl_model *)md; /* the cache: built once, under the graph lock */
        mblx_graph *g = md->g;
        int n = md->nF, rc = 0; /* rows (the numeric joints have constraint rows) */
        mblx_id zero = mblx_const(g, 0.0);
        mblx_id *Fs = mbl_alloc_array((size_t)n + 1, sizeof *Fs);
        mblx_id *Fx = mbl_alloc_array((size_t)md->nF + 1, sizeof *Fx);
        mblx_id *jx = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *jx);
        int *at = NULL;
        mbl_sjac S = {0, 0, NULL, NULL, NULL};
        if (!Fs || !Fx || !jx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; i < n && !rc; i++) Fs[i] = zero;
        /* the term's rows and entries as expressions (a tree and flexible bodies never meet) */
        for (int t = 0; t < MODEL_NTERMS && !rc; t++)
            if (model_terms[t]->present(md)) rc = model_terms[t]->exprs(w, Fs, &S, st);
        if (!rc && !(at = mbl_alloc_array((size_t)S.nz + 1, sizeof *at))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        /* each entry at its (row, column) of md->jac (the terms' pattern entries and model_compile's
         * bind of their remap entries put every one there) */
        if (!rc) rc = model_jac_index(md, S.nz, S.row, S.col, at, st);
        if (!rc) {
            memcpy(Fx, md->F, (size_t)md->nF * sizeof *Fx);
            memcpy(jx, md->jac.node, (size_t)md->jac.nz * sizeof *jx);
            for (int i = 0; i < n; i++)
                if (Fs[i] != zero) Fx[i] = mblx_add(g, Fx[i], Fs[i]);
            for (int p = 0; p < S.nz && !rc; p++) {
                if (at[p] < 0)
                    rc = mbl_error(st, MBL_EMODEL, "internal: the structured term's entry (%d, %d) is not in the Jacobian",
                                   S.row[p], S.col[p]);
                else
                    jx[at[p]] = mblx_add(g, jx[at[p]], S.node[p]);
            }
            if (!rc) rc = mblx_graph_status(g, st);
        }
        model_sjac_free(&S);
        mbl_free(Fs), mbl_free(at);
        if (rc) {
            mbl_free(Fx), mbl_free(jx);
            return rc;
        }
        w->Fx = Fx;
        w->jx = jx;
    }
    *F = md->Fx;
    *jac = md->jx;
    return 0;
}
