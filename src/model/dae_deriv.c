/* Derivatives of the canonical DAE for sensitivities (include/mblin/sensitivity.h).
 *
 * The model's Jacobian J = dF/dx is a sparse set of expressions. Differentiated once more with
 * respect to every unknown and every parameter (mblx_jacobian on the entries of J: only the
 * symbols each entry depends on are visited), it gives the second derivatives that the total
 * derivative of the linearized equations along a parameter needs, the shift of the operating
 * point included. Alongside: dF/dp, the derivatives of dependent parameters' expressions with
 * respect to earlier parameters (so that "d/d mB" moves M11 = ITxx(mB) with it), and those of the
 * file's point data (initial coordinates, velocities, inputs). All of it compiles into one tape,
 * evaluated at a point like the model's own tapes. */
#include <math.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/terms/term.h"

/* the public layout is the internal one */
_Static_assert((int)MBL_DAE_NROWG == (int)MBL_NROWG && (int)MBL_DAE_NBLK == (int)MBL_NBLK &&
                   (int)MBL_DAE_PHI == (int)MBL_ROW_PHI && (int)MBL_DAE_NH == (int)MBL_ROW_NH &&
                   (int)MBL_DAE_ODE == (int)MBL_ROW_ODE && (int)MBL_DAE_R == (int)MBL_BLK_R &&
                   (int)MBL_DAE_X == (int)MBL_BLK_X && (int)MBL_DAE_Q == (int)MBL_BLK_Q && (int)MBL_DAE_V == (int)MBL_BLK_V,
               "the public DAE layout of sensitivity.h must match model_internal.h");

struct mbl_dae_deriv {
    const mbl_model *md;
    int np, nunk, nF;
    int row0[MBL_DAE_NROWG + 1], col0[MBL_DAE_NBLK + 1];
    /* H = d J_e / d [x; p]: CSC over jnz rows and nunk + np columns */
    mblx_sparse H;
    mblx_sparse Fp;   /* nF x np, partial */
    mblx_sparse Pp;   /* np x np: d pexpr_i / d p_k (partial) */
    mblx_sparse Xp;   /* (2n + nr) x np: d [q0; v0; r0] / dp (partial) */
    mblx_tape *tape;  /* -> [H values; Fp values; Pp values; Xp values] */
    size_t nout;
    /* the user states' Jacobian (model's usjac: rows [s; sdot; sddot; w; wdot]) differentiated once
     * more: CSC over usjac entries and nunk + np columns, its own tape (none without user states) */
    mblx_sparse Hus;
    mblx_tape *tape_us;
    /* mbl_dae_deriv_new_outputs: the outputs' Jacobian Yj (ny x nunk) and Hy, its entries
     * differentiated once more (CSC over Yj's entries and nunk + np columns), in one tape -> [Yj
     * values; Hy values] (none otherwise) */
    mblx_sparse Yj, Hy;
    mblx_tape *tape_y;
    int param_only;   /* mbl_dae_deriv_new_param: H and Xp empty (no second derivatives) */
};

void mbl_dae_deriv_free(mbl_dae_deriv *d)
{
    if (!d) return;
    mblx_sparse_free(&d->H);
    mblx_sparse_free(&d->Fp);
    mblx_sparse_free(&d->Pp);
    mblx_sparse_free(&d->Xp);
    mblx_tape_free(d->tape);
    mblx_sparse_free(&d->Hus);
    mblx_tape_free(d->tape_us);
    mblx_sparse_free(&d->Yj);
    mblx_sparse_free(&d->Hy);
    mblx_tape_free(d->tape_y);
    mbl_free(d);
}

const mbl_model *mbl_dae_deriv_model(const mbl_dae_deriv *d)
{
    return d ? d->md : NULL;
}

void mbl_dae_deriv_layout(const mbl_dae_deriv *d, mbl_dae_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    if (d) model_dae_layout_fill(d->md, d->row0, d->col0, lay);
}

void model_dae_layout_fill(const mbl_model *md, const int *row0, const int *col0, mbl_dae_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    lay->n = md->n;
    lay->m = md->m;
    lay->k = md->k;
    lay->nr = md->nr;
    lay->np = md->np;
    lay->nF = md->nF;
    lay->nunk = md->nunk;
    memcpy(lay->row0, row0, sizeof lay->row0);
    memcpy(lay->col0, col0, sizeof lay->col0);
    lay->jnz = md->jac.nz;
    lay->jrow = md->jac.row;
    lay->jcol = md->jac.col;
    lay->nus = md->nus;
    lay->nuvs = md->nuvs;
}

/* An empty matrix of ncols columns (the parts a parameters-only object leaves out). */
static int sparse_empty(int nrows, int ncols, mblx_sparse *s)
{
    memset(s, 0, sizeof *s);
    s->nrows = nrows, s->ncols = ncols;
    s->colptr = mbl_calloc((size_t)ncols + 1, sizeof *s->colptr);
    return s->colptr ? 0 : MBL_ENOMEM;
}

static int deriv_new(const mbl_model *md, int param_only, mbl_dae_deriv **out, mbl_status *st);

int mbl_dae_deriv_new(const mbl_model *md, mbl_dae_deriv **out, mbl_status *st)
{
    return deriv_new(md, 0, out, st);
}

/* the outputs' Jacobian and its derivatives (mbl_dae_deriv_new_outputs), syms: the unknowns' and
 * parameters' symbols (nunk + np) */
static int outputs_new(mbl_dae_deriv *d, const mblx_id *syms, mbl_status *st)
{
    const mbl_model *md = d->md;
    mblx_graph *g = md->g;
    size_t nunk = (size_t)d->nunk, nsy = nunk + (size_t)d->np;
    model_graph_lock(md, 1);
    int rc = mblx_jacobian(g, (size_t)md->ny, md->y, nunk, syms, &d->Yj);
    if (!rc) rc = mblx_jacobian(g, (size_t)d->Yj.colptr[nunk], d->Yj.node, nsy, syms, &d->Hy);
    if (rc) {
        mblx_graph_status(g, st);
        model_graph_lock(md, 0);
        return rc;
    }
    size_t ny = (size_t)d->Yj.colptr[nunk], nh = (size_t)d->Hy.colptr[nsy];
    mblx_id *outs = mbl_alloc_array(ny + nh + 1, sizeof *outs);
    if (outs) {
        if (ny) memcpy(outs, d->Yj.node, ny * sizeof *outs);
        if (nh) memcpy(outs + ny, d->Hy.node, nh * sizeof *outs);
        d->tape_y = mblx_compile(g, ny + nh, outs, st);
    }
    model_graph_lock(md, 0);
    mbl_free(outs);
    if (!outs) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!d->tape_y) return st ? st->code : MBL_ENOMEM;
    if (mblx_tape_nsymbols(d->tape_y) > (size_t)md->nsym)
        return mbl_error(st, MBL_EARG, "mbl_dae_deriv_new_outputs: the derivatives read symbols the model does not have");
    return 0;
}

int mbl_dae_deriv_new_outputs(const mbl_model *md, mbl_dae_deriv **out, mbl_status *st)
{
    for (int t = 0; md && t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md))
            return mbl_error(st, MBL_EARG, "%s: the outputs' derivatives of a model with a structured term (a tree's "
                                           "or flexible bodies' rows) are not formed", md->file);
    int rc = deriv_new(md, 0, out, st);
    if (rc || !md->ny) return rc;
    size_t nsy = (size_t)md->nunk + (size_t)md->np;
    mblx_id *syms = mbl_alloc_array(nsy + 1, sizeof *syms);
    if (!syms) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    model_graph_lock(md, 1);
    for (int c = 0; !rc && c < md->nunk; c++) syms[c] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[c]);
    model_graph_lock(md, 0);
    for (int j = 0; !rc && j < md->np; j++) syms[md->nunk + j] = md->p[j];
    if (!rc) rc = outputs_new(*out, syms, st);
    mbl_free(syms);
    if (rc) {
        mbl_dae_deriv_free(*out);
        *out = NULL;
    }
    return rc;
}

int mbl_dae_deriv_new_param(const mbl_model *md, mbl_dae_deriv **out, mbl_status *st)
{
    /* a term whose rows depend on the parameters through data (flexible bodies' invariants): its
     * parameter derivatives come with its second ones */
    int param_dep = 0;
    for (int t = 0; md && t < MODEL_NTERMS && !param_dep; t++)
        param_dep = model_terms[t]->param_dep && model_terms[t]->param_dep(md);
    return deriv_new(md, !param_dep, out, st);
}

static int deriv_new(const mbl_model *md, int param_only, mbl_dae_deriv **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_new: out is NULL");
    *out = NULL;
    if (!md) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_new: model is NULL");
    if (md->no_sens) return mbl_error(st, MBL_EMODEL, "%s: %s", md->file, md->no_sens);
    if (model_require_mass(md, st)) return mbl_error_prefix(st, "%s", md->file);
    mbl_dae_deriv *d = mbl_calloc(1, sizeof *d);
    if (!d) return mbl_error(st, MBL_ENOMEM, "out of memory");
    d->md = md;
    d->param_only = param_only;
    d->np = md->np;
    d->nunk = md->nunk;
    d->nF = md->nF;
    for (int g = 0; g <= MBL_DAE_NROWG; g++) d->row0[g] = md->row0[g];
    for (int b = 0; b <= MBL_DAE_NBLK; b++) d->col0[b] = model_blk0(md, b);
    int n = md->n, np = md->np, nunk = md->nunk, nx = 2 * n + md->nr;
    mblx_graph *g = md->g;
    int rc = 0;
    size_t nsy = (size_t)nunk + (size_t)np;
    mblx_id *syms = mbl_alloc_array(nsy + 1, sizeof *syms);
    mblx_id *pe = mbl_alloc_array((size_t)np + 1, sizeof *pe);
    mblx_id *xe = mbl_alloc_array((size_t)nx + 1, sizeof *xe);
    mblx_id *outs = NULL;
    if (!syms || !pe || !xe) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    model_graph_lock(md, 1);
    for (int c = 0; c < nunk; c++) syms[c] = mblx_symbol_node(g, (size_t)md->sym_of_unknown[c]);
    for (int j = 0; j < np; j++) syms[nunk + j] = md->p[j];
    mblx_id zero = mblx_const(g, 0.0);
    for (int i = 0; i < np; i++) pe[i] = md->pexpr && md->pexpr[i] != MBLX_NONE ? md->pexpr[i] : zero;
    for (int i = 0; i < n; i++) {
        xe[i] = md->q0x ? md->q0x[i] : zero;
        xe[n + i] = md->v0x && md->v_given[i] ? md->v0x[i] : zero;
    }
    for (int i = 0; i < md->nr; i++) xe[2 * n + i] = md->r0x ? md->r0x[i] : zero;
    const mblx_id *Fn, *jn; /* with the tree's term, when it is evaluated beside the tapes */
    rc = model_dae_nodes(md, &Fn, &jn, st);
    if (rc) {
        model_graph_lock(md, 0);
        goto done;
    }
    rc = param_only ? sparse_empty(md->jac.nz, (int)nsy, &d->H)
                    : mblx_jacobian(g, (size_t)md->jac.nz, jn, nsy, syms, &d->H);
    if (!rc) rc = mblx_jacobian(g, (size_t)md->nF, Fn, (size_t)np, syms + nunk, &d->Fp);
    if (!rc) rc = mblx_jacobian(g, (size_t)np, pe, (size_t)np, syms + nunk, &d->Pp);
    if (!rc)
        rc = param_only ? sparse_empty(nx, np, &d->Xp) : mblx_jacobian(g, (size_t)nx, xe, (size_t)np, syms + nunk, &d->Xp);
    if (rc) mblx_graph_status(g, st);
    /* the terms' dependence on the parameters through their data (flexible bodies' invariants) */
    for (int t = 0; t < MODEL_NTERMS && !rc; t++)
        if (model_terms[t]->param_dep && model_terms[t]->param_dep(md))
            rc = model_terms[t]->param_deriv(md, np, syms + nunk, &d->H, &d->Fp, st);
    if (rc) {
        model_graph_lock(md, 0);
        goto done;
    }
    int nh = d->H.colptr[nsy], nf = d->Fp.colptr[np], npp = d->Pp.colptr[np], nxp = d->Xp.colptr[np];
    d->nout = (size_t)nh + (size_t)nf + (size_t)npp + (size_t)nxp;
    outs = mbl_alloc_array(d->nout + 1, sizeof *outs);
    if (!outs) {
        model_graph_lock(md, 0);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* (a parameters-only object's H and Xp are empty, their node arrays NULL) */
    if (nh) memcpy(outs, d->H.node, (size_t)nh * sizeof *outs);
    if (nf) memcpy(outs + nh, d->Fp.node, (size_t)nf * sizeof *outs);
    if (npp) memcpy(outs + nh + nf, d->Pp.node, (size_t)npp * sizeof *outs);
    if (nxp) memcpy(outs + nh + nf + npp, d->Xp.node, (size_t)nxp * sizeof *outs);
    d->tape = mblx_compile(g, d->nout, outs, st);
    const mblx_id *usn = NULL; /* the user states' Jacobian's nodes (a forward-mode load builds them now) */
    if (d->tape && !param_only && md->nus > 0 && md->usjac.nz > 0 && !(rc = model_user_state_nodes(md, &usn, st))) {
        rc = mblx_jacobian(g, (size_t)md->usjac.nz, usn, nsy, syms, &d->Hus);
        if (rc) mblx_graph_status(g, st);
        else if (!(d->tape_us = mblx_compile(g, (size_t)d->Hus.colptr[nsy], d->Hus.node, st)))
            rc = st ? st->code : MBL_ENOMEM;
    }
    model_graph_lock(md, 0);
    if (!rc && !d->tape) rc = st ? st->code : MBL_ENOMEM;
    if (!rc && d->tape_us && mblx_tape_nsymbols(d->tape_us) > (size_t)md->nsym)
        rc = mbl_error(st, MBL_EARG, "mbl_dae_deriv_new: the derivatives read symbols the model does not have");
    if (!rc && mblx_tape_nsymbols(d->tape) > (size_t)md->nsym)
        rc = mbl_error(st, MBL_EARG, "mbl_dae_deriv_new: the derivatives read symbols the model does not have");
done:
    mbl_free(syms);
    mbl_free(pe);
    mbl_free(xe);
    mbl_free(outs);
    if (rc) {
        mbl_dae_deriv_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* Whether a parameter other parameters use (column j of Pp has a row below j). */
static int param_used(const mbl_dae_deriv *d, int j)
{
    for (int e = d->Pp.colptr[j]; e < d->Pp.colptr[j + 1]; e++)
        if (d->Pp.rowidx[e] > j) return 1;
    return 0;
}

/* Column j of T = (I - P)^-1 (P strictly lower triangular: a parameter uses earlier ones only;
 * column k of Pp holds d pexpr_i / d p_k, rows i > k) into Tc (np): dp_i/dp_j in total, by forward
 * substitution: Tc[i] gains pv[e] Tc[k] for k ascending, the order of the dense product this
 * replaced; a zero Tc[k] adds nothing (x + 0 = x). vals: the tape's values. */
static void param_column(const mbl_dae_deriv *d, const double *vals, int j, double *Tc)
{
    int np = d->np;
    const double *pv = vals + d->H.colptr[d->nunk + np] + d->Fp.colptr[np];
    memset(Tc, 0, (size_t)np * sizeof *Tc);
    Tc[j] = 1.0;
    if (!param_used(d, j)) return;
    for (int k = j; k < np; k++) {
        if (Tc[k] == 0.0) continue;
        for (int e = d->Pp.colptr[k]; e < d->Pp.colptr[k + 1]; e++)
            if (d->Pp.rowidx[e] > k) Tc[d->Pp.rowidx[e]] += pv[e] * Tc[k];
    }
}

/* dj (ne) = the derivative of ne entries along (dx, param): sum over the columns c of H (CSC over the
 * entries and nunk + np columns, values hv) of hv times dx[c] (an unknown) or T[c - nunk] (a
 * parameter's total derivative, param >= 0) */
static void contract(const mblx_sparse *H, const double *hv, int nunk, int np, const double *dx, int param,
                     const double *T, int ne, double *dj)
{
    memset(dj, 0, (size_t)ne * sizeof *dj);
    for (int c = 0; c < nunk + np; c++) {
        double w = c < nunk ? dx[c] : param >= 0 ? T[c - nunk] : 0.0;
        if (w == 0.0) continue;
        for (int e = H->colptr[c]; e < H->colptr[c + 1]; e++) dj[H->rowidx[e]] += hv[e] * w;
    }
}

/* A tape of part of d->tape's values (model_dae_pcol), or the whole of them (pos NULL) */
typedef struct part_tape {
    const mblx_tape *tape;
    const int *pos; /* per output: its place among d->tape's values, or NULL (the outputs in place) */
    int nsel;
} part_tape;

/* the doubles of eval_all's symbols, work and (a part) outputs (a scratch) */
static size_t eval_scratch(const mbl_dae_deriv *d, const part_tape *t)
{
    size_t ws = mblx_tape_work_size(t->tape);
    if (ws < d->md->work_size) ws = d->md->work_size;
    return (size_t)d->md->nsym + 1 + ws + 1 + (t->pos ? (size_t)t->nsel : 0) + 1;
}

/* Evaluate the tape t at the point: vals (nout; a part's outputs at their places, the others left
 * as they were), and (T not NULL) column col of the parameters' total derivatives (T: np values,
 * T[i] = dp_i/dp_col; param_column, which reads only the parts a part tape of col holds).
 * scratch: eval_scratch's doubles, or NULL (allocated here). */
static int eval_all(const mbl_dae_deriv *d, const part_tape *t, const mbl_point *pt, double *vals, double *T, int col,
                    double *scratch, mbl_status *st)
{
    const mbl_model *md = d->md;
    double *buf = scratch ? scratch : mbl_alloc_array(eval_scratch(d, t), sizeof *buf);
    if (!buf) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *syms = buf, *out = buf + md->nsym + 1, *work = out + (t->pos ? t->nsel : 0) + 1;
    model_fill_syms_pt(md, pt, syms);
    int rc = mblx_tape_eval(t->tape, syms, t->pos ? out : vals, work, st);
    if (rc) {
        rc = model_eval_error(md, syms, "in the derivatives with respect to the parameters", st);
    } else {
        if (t->pos)
            for (int i = 0; i < t->nsel; i++) vals[t->pos[i]] = out[i];
        if (T) param_column(d, vals, col, T);
    }
    if (!scratch) mbl_free(buf);
    return rc;
}

int mbl_dae_deriv_eval(const mbl_dae_deriv *d, const mbl_point *pt, double *J, double *Fp, double *x0p,
                       mbl_status *st)
{
    if (!d || !pt) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_eval: NULL argument");
    const mbl_model *md = d->md;
    int np = d->np, nunk = d->nunk, nF = d->nF, n = md->n, rc = 0;
    if (pt->n != n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_dae_deriv_eval: the point is not one of this model");
    if (x0p && d->param_only)
        return mbl_error(st, MBL_EARG, "mbl_dae_deriv_eval: x0p from derivatives made by mbl_dae_deriv_new_param");
    double *vals = mbl_alloc_array(d->nout + 1, sizeof *vals);
    double *T = mbl_alloc_array((size_t)np + 1, sizeof *T); /* one column at a time */
    if (!vals || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = eval_all(d, &(part_tape){d->tape, NULL, 0}, pt, vals, NULL, -1, NULL, st);
    if (rc) goto done;
    if (J) {
        double *syms = mbl_alloc_array((size_t)md->nsym + 1, sizeof *syms);
        double *work = mbl_alloc_array(md->work_size + 1, sizeof *work);
        if (!syms || !work) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            model_fill_syms_pt(md, pt, syms);
            rc = model_eval_jac(md, syms, J, work, st);
            if (rc) rc = model_eval_error(md, syms, "at the operating point", st);
        }
        mbl_free(syms);
        mbl_free(work);
        if (rc) goto done;
    }
    const double *fv = vals + d->H.colptr[nunk + np];
    const double *xv = fv + d->Fp.colptr[np] + d->Pp.colptr[np];
    /* totals: Fp_total[:, j] = sum_i Fp_partial[:, i] T[i, j], x0p likewise, summed over i
     * ascending (then the entries); a parameter no other uses has the unit column of T (the
     * bicycle: a few hundred parameters, nearly all independent) */
    if (Fp) memset(Fp, 0, (size_t)nF * (size_t)np * sizeof *Fp);
    if (x0p) memset(x0p, 0, (size_t)nunk * (size_t)np * sizeof *x0p);
    int cq = d->col0[MBL_DAE_Q], cv = d->col0[MBL_DAE_V], cr = d->col0[MBL_DAE_R];
    for (int j = 0; j < np && (Fp || x0p); j++) {
        int used = param_used(d, j);
        if (used) param_column(d, vals, j, T);
        for (int i = j; i < (used ? np : j + 1); i++) {
            double t = used ? T[i] : 1.0;
            if (t == 0.0) continue;
            for (int e = d->Fp.colptr[i]; Fp && e < d->Fp.colptr[i + 1]; e++)
                Fp[d->Fp.rowidx[e] + (size_t)j * nF] += fv[e] * t;
            for (int e = d->Xp.colptr[i]; x0p && e < d->Xp.colptr[i + 1]; e++) {
                int r = d->Xp.rowidx[e];
                int c = r < n ? cq + r : r < 2 * n ? cv + (r - n) : cr + (r - 2 * n);
                x0p[c + (size_t)j * nunk] += xv[e] * t;
            }
        }
    }
done:
    mbl_free(vals);
    mbl_free(T);
    return rc;
}

/* Column param of the total dR/dp (fp, nF) from the values of t (the whole tape, or a part of
 * param's: model_dae_pcol) evaluated into vals (nout), T (np) and scratch (eval_scratch's) */
static int eval_param(const mbl_dae_deriv *d, const part_tape *t, const mbl_point *pt, int param, double *fp,
                      double *vals, double *T, double *scratch, mbl_status *st)
{
    const mbl_model *md = d->md;
    int np = d->np, nunk = d->nunk, nF = d->nF;
    if (param < 0 || param >= np) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_eval_param: no parameter %d", param);
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_dae_deriv_eval_param: the point is not one of this model");
    int rc = eval_all(d, t, pt, vals, T, param, scratch, st);
    if (!rc) { /* mbl_dae_deriv_eval's column `param` of Fp, the same sums in the same order */
        const double *fv = vals + d->H.colptr[nunk + np];
        memset(fp, 0, (size_t)nF * sizeof *fp);
        for (int i = param; i < np; i++) {
            double ti = T[i];
            if (ti == 0.0) continue;
            for (int e = d->Fp.colptr[i]; e < d->Fp.colptr[i + 1]; e++) fp[d->Fp.rowidx[e]] += fv[e] * ti;
        }
    }
    return rc;
}

int mbl_dae_deriv_eval_param(const mbl_dae_deriv *d, const mbl_point *pt, int param, double *fp, mbl_status *st)
{
    if (!d || !pt || !fp) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_eval_param: NULL argument");
    double *vals = mbl_alloc_array(d->nout + 1, sizeof *vals), *T = mbl_alloc_array((size_t)d->np + 1, sizeof *T);
    int rc = vals && T ? eval_param(d, &(part_tape){d->tape, NULL, 0}, pt, param, fp, vals, T, NULL, st)
                       : mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_free(vals), mbl_free(T);
    return rc;
}

/* ---- one parameter's column (model_dae_pcol) ---- */

struct model_dae_pcol {
    const mbl_dae_deriv *d;
    int param;
    part_tape part;  /* the entries of Fp and Pp in the columns of the parameters that may depend on param */
    mblx_tape *tape; /* part.tape's */
    int *pos;        /* part.pos's */
    double *vals, *T, *scratch;
};

void model_dae_pcol_free(model_dae_pcol *c)
{
    if (!c) return;
    mblx_tape_free(c->tape);
    mbl_free(c->pos), mbl_free(c->vals), mbl_free(c->T), mbl_free(c->scratch);
    mbl_free(c);
}

model_dae_pcol *model_dae_pcol_new(const mbl_dae_deriv *d, int param, mbl_status *st)
{
    if (!d || param < 0 || param >= d->np) {
        mbl_error(st, MBL_EARG, "model_dae_pcol_new: no parameter %d", param);
        return NULL;
    }
    int np = d->np, nsel = 0;
    size_t f0 = (size_t)d->H.colptr[d->nunk + np], p0 = f0 + (size_t)d->Fp.colptr[np];
    model_dae_pcol *c = mbl_calloc(1, sizeof *c);
    unsigned char *dep = mbl_calloc((size_t)np + 1, 1); /* parameters whose total derivative by param may be nonzero */
    int cap = d->Fp.colptr[np] + d->Pp.colptr[np] + 1;
    mblx_id *outs = mbl_alloc_array((size_t)cap, sizeof *outs);
    if (c) c->pos = mbl_alloc_array((size_t)cap, sizeof *c->pos);
    if (!c || !dep || !outs || !c->pos) {
        mbl_free(dep), mbl_free(outs), model_dae_pcol_free(c);
        mbl_error(st, MBL_ENOMEM, "out of memory");
        return NULL;
    }
    c->d = d, c->param = param;
    dep[param] = 1;
    for (int k = param; k < np; k++) { /* param_column's pattern: Tc[k] nonzero only where dep[k] */
        if (!dep[k]) continue;
        for (int e = d->Fp.colptr[k]; e < d->Fp.colptr[k + 1]; e++)
            c->pos[nsel] = (int)f0 + e, outs[nsel++] = d->Fp.node[e];
        for (int e = d->Pp.colptr[k]; e < d->Pp.colptr[k + 1]; e++) {
            c->pos[nsel] = (int)p0 + e, outs[nsel++] = d->Pp.node[e];
            if (d->Pp.rowidx[e] > k) dep[d->Pp.rowidx[e]] = 1;
        }
    }
    model_graph_lock(d->md, 1); /* as deriv_new (the same nodes; their tape scheduled anew: equal to rounding) */
    c->tape = nsel ? mblx_compile(d->md->g, (size_t)nsel, outs, st) : NULL;
    model_graph_lock(d->md, 0);
    mbl_free(dep), mbl_free(outs);
    c->part = (part_tape){c->tape ? c->tape : d->tape, c->tape ? c->pos : NULL, nsel};
    c->vals = mbl_alloc_array(d->nout + 1, sizeof *c->vals);
    c->T = mbl_alloc_array((size_t)np + 1, sizeof *c->T);
    c->scratch = mbl_alloc_array(eval_scratch(d, &c->part), sizeof *c->scratch);
    if ((nsel && !c->tape) || !c->vals || !c->T || !c->scratch) {
        if (!nsel || c->tape) mbl_error(st, MBL_ENOMEM, "out of memory");
        model_dae_pcol_free(c);
        return NULL;
    }
    return c;
}

int model_dae_pcol_eval(model_dae_pcol *c, const mbl_point *pt, double *fp, mbl_status *st)
{
    if (!c || !pt || !fp) return mbl_error(st, MBL_EARG, "model_dae_pcol_eval: NULL argument");
    return eval_param(c->d, &c->part, pt, c->param, fp, c->vals, c->T, c->scratch, st);
}

int mbl_dae_deriv_jac_dir(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *dJ,
                          mbl_status *st)
{
    if (!d || !pt || !dx || !dJ) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_jac_dir: NULL argument");
    const mbl_model *md = d->md;
    int np = d->np, nunk = d->nunk, rc = 0;
    if (param < -1 || param >= np) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_jac_dir: no parameter %d", param);
    if (d->param_only)
        return mbl_error(st, MBL_EARG, "mbl_dae_deriv_jac_dir: derivatives made by mbl_dae_deriv_new_param");
    double *vals = mbl_alloc_array(d->nout + 1, sizeof *vals);
    double *T = mbl_alloc_array((size_t)np + 1, sizeof *T); /* the column of param (none without one) */
    if (!vals || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = eval_all(d, &(part_tape){d->tape, NULL, 0}, pt, vals, param >= 0 ? T : NULL, param, NULL, st);
    if (rc) goto done;
    contract(&d->H, vals, nunk, np, dx, param, T, md->jac.nz, dJ);
done:
    mbl_free(vals);
    mbl_free(T);
    return rc;
}

int mbl_dae_deriv_states(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *Sq,
                         double *dSq, mbl_status *st)
{
    if (!d || !pt || !Sq) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_states: NULL argument");
    const mbl_model *md = d->md;
    int n = md->n, nus = md->nus, np = d->np, nunk = d->nunk, ne = 3 * md->nus + 2 * md->nuvs, rc = 0;
    int cq = d->col0[MBL_DAE_Q], rows = 3 * nus;
    if (param < -1 || param >= np) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_states: no parameter %d", param);
    if (d->param_only && dSq)
        return mbl_error(st, MBL_EARG, "mbl_dae_deriv_states: dSq from derivatives made by mbl_dae_deriv_new_param");
    memset(Sq, 0, (size_t)rows * (size_t)n * sizeof *Sq);
    if (dSq) memset(dSq, 0, (size_t)rows * (size_t)n * sizeof *dSq);
    if (!nus || !md->usjac.nz) return 0;
    size_t ws = md->work_size;
    if (d->tape_us && mblx_tape_work_size(d->tape_us) > ws) ws = mblx_tape_work_size(d->tape_us);
    size_t nh = d->tape_us ? (size_t)d->Hus.colptr[nunk + np] : 0;
    double *syms = mbl_alloc_array((size_t)md->nsym + 1, sizeof *syms), *work = mbl_alloc_array(ws + 1, sizeof *work);
    double *us = mbl_alloc_array((size_t)ne + (size_t)md->usjac.nz + 1, sizeof *us);
    double *hv = mbl_alloc_array(nh + 1, sizeof *hv), *dj = mbl_alloc_array((size_t)md->usjac.nz + 1, sizeof *dj);
    double *vals = NULL, *T = NULL;
    if (!syms || !work || !us || !hv || !dj) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    model_fill_syms_pt(md, pt, syms);
    rc = model_eval_user_states(md, syms, us, work, st);
    if (rc) {
        rc = model_eval_error(md, syms, "in the user states at the operating point", st);
        goto done;
    }
    /* the position columns of the rows s, sdot, sddot */
    for (int e = 0; e < md->usjac.nz; e++) {
        int r = md->usjac.row[e], c = md->usjac.col[e] - cq;
        if (r < rows && c >= 0 && c < n) Sq[r + (size_t)c * rows] += us[ne + e];
    }
    if (!dSq || !dx || !d->tape_us) goto done;
    rc = mblx_tape_eval(d->tape_us, syms, hv, work, st);
    if (rc) {
        rc = model_eval_error(md, syms, "in the derivatives of the user states", st);
        goto done;
    }
    vals = mbl_alloc_array(d->nout + 1, sizeof *vals);
    T = mbl_alloc_array((size_t)np + 1, sizeof *T);
    if (!vals || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* T: param's total derivatives */
    rc = eval_all(d, &(part_tape){d->tape, NULL, 0}, pt, vals, param >= 0 ? T : NULL, param, NULL, st);
    if (rc) goto done;
    contract(&d->Hus, hv, nunk, np, dx, param, T, md->usjac.nz, dj);
    for (int e = 0; e < md->usjac.nz; e++) {
        int r = md->usjac.row[e], c = md->usjac.col[e] - cq;
        if (r < rows && c >= 0 && c < n) dSq[r + (size_t)c * rows] += dj[e];
    }
done:
    mbl_free(syms), mbl_free(work), mbl_free(us), mbl_free(hv), mbl_free(dj), mbl_free(vals), mbl_free(T);
    return rc;
}

int mbl_dae_deriv_outputs(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *Yx,
                          double *dYx, mbl_status *st)
{
    if (!d || !pt || !Yx) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_outputs: NULL argument");
    const mbl_model *md = d->md;
    int ny = md->ny, np = d->np, nunk = d->nunk, rc = 0;
    if (param < -1 || param >= np) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_outputs: no parameter %d", param);
    if (ny && !d->tape_y)
        return mbl_error(st, MBL_EARG, "mbl_dae_deriv_outputs: derivatives not made by mbl_dae_deriv_new_outputs");
    memset(Yx, 0, (size_t)ny * (size_t)nunk * sizeof *Yx);
    if (dYx) memset(dYx, 0, (size_t)ny * (size_t)nunk * sizeof *dYx);
    if (!ny) return 0;
    int nyj = d->Yj.colptr[nunk];
    size_t ws = md->work_size, nv = (size_t)nyj + (size_t)d->Hy.colptr[nunk + np];
    if (mblx_tape_work_size(d->tape_y) > ws) ws = mblx_tape_work_size(d->tape_y);
    double *syms = mbl_alloc_array((size_t)md->nsym + 1, sizeof *syms), *work = mbl_alloc_array(ws + 1, sizeof *work);
    double *yv = mbl_alloc_array(nv + (size_t)nyj + 1, sizeof *yv), *dj = yv ? yv + nv : NULL;
    double *vals = NULL, *T = NULL;
    if (!syms || !work || !yv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    model_fill_syms_pt(md, pt, syms);
    if ((rc = mblx_tape_eval(d->tape_y, syms, yv, work, st))) {
        rc = model_eval_error(md, syms, "in the derivatives of the outputs", st);
        goto done;
    }
    for (int c = 0; c < nunk; c++)
        for (int e = d->Yj.colptr[c]; e < d->Yj.colptr[c + 1]; e++) Yx[d->Yj.rowidx[e] + (size_t)c * ny] = yv[e];
    if (!dYx || !dx) goto done;
    vals = mbl_alloc_array(d->nout + 1, sizeof *vals);
    T = mbl_alloc_array((size_t)np + 1, sizeof *T);
    if (!vals || !T) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* T: param's total derivatives */
    if ((rc = eval_all(d, &(part_tape){d->tape, NULL, 0}, pt, vals, param >= 0 ? T : NULL, param, NULL, st))) goto done;
    contract(&d->Hy, yv + nyj, nunk, np, dx, param, T, nyj, dj);
    for (int c = 0; c < nunk; c++)
        for (int e = d->Yj.colptr[c]; e < d->Yj.colptr[c + 1]; e++) dYx[d->Yj.rowidx[e] + (size_t)c * ny] = dj[e];
done:
    mbl_free(syms), mbl_free(work), mbl_free(yv), mbl_free(vals), mbl_free(T);
    return rc;
}

int mbl_dae_deriv_param_chain(const mbl_dae_deriv *d, const mbl_point *pt, int ncols, const int *cols, double *T,
                              mbl_status *st)
{
    if (!d || !pt || (ncols > 0 && (!cols || !T))) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_param_chain: NULL argument");
    for (int c = 0; c < ncols; c++)
        if (cols[c] < 0 || cols[c] >= d->np) return mbl_error(st, MBL_EARG, "mbl_dae_deriv_param_chain: no parameter %d", cols[c]);
    double *vals = mbl_alloc_array(d->nout + 1, sizeof *vals);
    if (!vals) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = eval_all(d, &(part_tape){d->tape, NULL, 0}, pt, vals, NULL, -1, NULL, st);
    for (int c = 0; !rc && c < ncols; c++) param_column(d, vals, cols[c], T + (size_t)d->np * c);
    mbl_free(vals);
    return rc;
}
