/* The residual of the canonical DAE for integrators (include/mblin/sim.h, mbl_dae_eval).
 *
 * At any (t, x) of the public layout [vdot lambda mu v q Xdot Z X r] it evaluates the model's own
 * tapes: the residual F and its sparse Jacobian dF/dx, the outputs y. For the stabilized index-2
 * form of src/sim (Gear-Gupta-Leimkuhler: q' = v - Phi_q^T eta) it adds what the model's tapes do
 * not hold: g = Phi_q^T w and the Hessian d(w^T Phi)/dq dq (sparse), both compiled from the
 * scalar w^T Phi = sum_j lambda_j Phi_j with the multiplier symbols standing for w (reverse-mode
 * gradient, then its sparse Jacobian), so the integrator's Newton matrix is exact. */
#include <string.h>

#include "model/model_internal.h"

struct mbl_dae_eval {
    const mbl_model *md;
    int row0[MBL_DAE_NROWG + 1], col0[MBL_DAE_NBLK + 1];
    mblx_sparse H;     /* n x n: d2 (w^T Phi) / dq dq */
    mblx_tape *tape_g; /* -> g (n) */
    mblx_tape *tape_h; /* -> H values */
    int *hrow, *hcol;  /* H's pattern as (row, col) pairs */
    double *syms, *work, *yout;
    int nsyms;
};

void mbl_dae_eval_free(mbl_dae_eval *e)
{
    if (!e) return;
    mblx_sparse_free(&e->H);
    mblx_tape_free(e->tape_g);
    mblx_tape_free(e->tape_h);
    mbl_free(e->hrow), mbl_free(e->hcol);
    mbl_free(e->syms), mbl_free(e->work), mbl_free(e->yout);
    mbl_free(e);
}

int mbl_dae_eval_new(const mbl_model *md, mbl_dae_eval **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_dae_eval_new: out is NULL");
    *out = NULL;
    if (!md) return mbl_error(st, MBL_EARG, "mbl_dae_eval_new: model is NULL");
    mbl_dae_eval *e = mbl_calloc(1, sizeof *e);
    if (!e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    e->md = md;
    for (int g = 0; g <= MBL_DAE_NROWG; g++) e->row0[g] = md->row0[g];
    for (int b = 0; b <= MBL_DAE_NBLK; b++) e->col0[b] = model_blk0(md, b);
    int n = md->n, m = md->m, rc = 0;
    mblx_graph *g = md->g;
    mblx_id *qs = mbl_alloc_array((size_t)n + 1, sizeof *qs);
    mblx_id *terms = mbl_alloc_array((size_t)m + 1, sizeof *terms);
    mblx_id *grad = mbl_alloc_array((size_t)n + 1, sizeof *grad);
    if (!qs || !terms || !grad) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    model_graph_lock(md, 1);
    const mblx_id *Fn, *jn; /* with the terms evaluated beside the tapes (the planar joints' Phi) */
    if ((rc = model_dae_nodes(md, &Fn, &jn, st))) {
        model_graph_lock(md, 0);
        goto done;
    }
    int jq = model_blk0(md, MBL_BLK_Q), jl = model_blk0(md, MBL_BLK_LAMBDA);
    for (int i = 0; i < n; i++) qs[i] = mblx_symbol_node(g, (size_t)md->sym_of_unknown[jq + i]);
    for (int j = 0; j < m; j++)
        terms[j] = mblx_mul(g, mblx_symbol_node(g, (size_t)md->sym_of_unknown[jl + j]), Fn[md->row0[MBL_ROW_PHI] + j]);
    mblx_id wphi = m ? mblx_sum(g, (size_t)m, terms) : mblx_const(g, 0.0);
    rc = mblx_gradient(g, wphi, (size_t)n, qs, grad);
    if (!rc) rc = mblx_jacobian(g, (size_t)n, grad, (size_t)n, qs, &e->H);
    if (rc) {
        mblx_graph_status(g, st);
        model_graph_lock(md, 0);
        goto done;
    }
    int hnz = e->H.colptr[n];
    e->tape_g = mblx_compile(g, (size_t)n, grad, st);
    e->tape_h = e->tape_g ? mblx_compile(g, (size_t)hnz, e->H.node, st) : NULL;
    model_graph_lock(md, 0);
    if (!e->tape_g || !e->tape_h) {
        rc = st ? st->code : MBL_ENOMEM;
        goto done;
    }
    e->hrow = mbl_alloc_array((size_t)hnz + 1, sizeof *e->hrow);
    e->hcol = mbl_alloc_array((size_t)hnz + 1, sizeof *e->hcol);
    size_t ns = (size_t)md->nsym, ws = md->work_size;
    if (mblx_tape_nsymbols(e->tape_g) > ns) ns = mblx_tape_nsymbols(e->tape_g);
    if (mblx_tape_nsymbols(e->tape_h) > ns) ns = mblx_tape_nsymbols(e->tape_h);
    if (mblx_tape_work_size(e->tape_g) > ws) ws = mblx_tape_work_size(e->tape_g);
    if (mblx_tape_work_size(e->tape_h) > ws) ws = mblx_tape_work_size(e->tape_h);
    e->nsyms = (int)ns;
    e->syms = mbl_calloc(ns + 1, sizeof *e->syms);
    e->work = mbl_alloc_array(ws + 1, sizeof *e->work);
    e->yout = mbl_alloc_array((size_t)md->ny + (size_t)md->yjac.nz + 1, sizeof *e->yout);
    if (!e->hrow || !e->hcol || !e->syms || !e->work || !e->yout) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int c = 0; c < n; c++)
        for (int p = e->H.colptr[c]; p < e->H.colptr[c + 1]; p++) e->hrow[p] = e->H.rowidx[p], e->hcol[p] = c;
done:
    mbl_free(qs), mbl_free(terms), mbl_free(grad);
    if (rc) {
        mbl_dae_eval_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

void mbl_dae_eval_layout(const mbl_dae_eval *e, mbl_dae_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    if (e) model_dae_layout_fill(e->md, e->row0, e->col0, lay);
}

const mbl_model *mbl_dae_eval_model(const mbl_dae_eval *e)
{
    return e ? e->md : NULL;
}

void mbl_dae_eval_hessian_pattern(const mbl_dae_eval *e, int *nz, const int **row, const int **col)
{
    *nz = e ? e->H.colptr[e->md->n] : 0;
    *row = e ? e->hrow : NULL;
    *col = e ? e->hcol : NULL;
}

static void fill(mbl_dae_eval *e, double t, const double *x)
{
    const mbl_model *md = e->md;
    for (int i = 0; i < md->np; i++) e->syms[md->sym_p[i]] = md->pval[i];
    e->syms[md->sym_t] = t;
    for (int j = 0; j < md->nunk; j++) e->syms[md->sym_of_unknown[j]] = x[j];
}

static int failed(mbl_dae_eval *e, const char *when, mbl_status *st)
{
    return model_eval_error(e->md, e->syms, when, st);
}

int mbl_dae_eval_residual(mbl_dae_eval *e, double t, const double *x, double *F, mbl_status *st)
{
    fill(e, t, x);
    if (model_eval_F(e->md, e->syms, F, e->work, st)) return failed(e, "in the simulation", st);
    /* coordinates singular there (a body's 3-1-3 Euler angles) */
    if (e->md->nsing) return model_singular_check(e->md, e->syms, e->work, &t, st);
    return 0;
}

int mbl_dae_eval_jacobian(mbl_dae_eval *e, double t, const double *x, double *J, mbl_status *st)
{
    fill(e, t, x);
    if (model_eval_jac(e->md, e->syms, J, e->work, st)) return failed(e, "in the simulation's Jacobian", st);
    return 0;
}

int mbl_dae_eval_outputs(mbl_dae_eval *e, double t, const double *x, double *y, mbl_status *st)
{
    const mbl_model *md = e->md;
    if (!md->ny) return 0;
    fill(e, t, x);
    if (mblx_tape_eval(md->tape_y, e->syms, e->yout, e->work, st)) return failed(e, "evaluating the outputs", st);
    memcpy(y, e->yout, (size_t)md->ny * sizeof *y);
    return 0;
}

/* the multiplier block of x stands for w */
int mbl_dae_eval_phi_t(mbl_dae_eval *e, double t, const double *x, double *g, mbl_status *st)
{
    fill(e, t, x);
    if (mblx_tape_eval(e->tape_g, e->syms, g, e->work, st)) return failed(e, "in the simulation (Phi_q^T eta)", st);
    return 0;
}

int mbl_dae_eval_hessian(mbl_dae_eval *e, double t, const double *x, double *H, mbl_status *st)
{
    fill(e, t, x);
    if (mblx_tape_eval(e->tape_h, e->syms, H, e->work, st))
        return failed(e, "in the simulation (d/dq of Phi_q^T eta)", st);
    return 0;
}
