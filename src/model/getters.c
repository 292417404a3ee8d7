/* The public getters of a loaded model: sizes, names, parameter values, outputs at a point, the
 * drawing's geometry, and changing a parameter in place. */
#include "model/formulate.h"

void mbl_model_get_info(const mbl_model *md, mbl_model_info *info)
{
    memset(info, 0, sizeof *info);
    if (!md) return;
    info->name = md->name;
    info->file = md->file;
    info->ncoord = md->n;
    info->nhol = md->m;
    info->nnh = md->k;
    info->ninput = md->nr;
    info->noutput = md->ny;
    info->nparam = md->np;
    info->nuser_states = md->nus;
    info->nuser_velocity_states = md->nuvs;
    info->node_states = md->nX;
    info->nimplicit = md->nZ;
    info->nspeeds = md->nspd;
    info->at = md->at;
    info->time = md->time;
}

void mbl_lin_options_from_model(const mbl_model *md, mbl_lin_options *opt)
{
    if (!md || !opt) return;
    if (md->pen_given & 1) opt->pen_alpha = md->pen[0];
    if (md->pen_given & 2) opt->pen_xi = md->pen[1];
    if (md->pen_given & 4) opt->pen_omega = md->pen[2];
    if (md->pen_mat[0] || md->pen_mat[1] || md->pen_mat[2]) {
        if (md->pen_mat[0]) opt->pen_Xi = md->pen_mat[0];
        if (md->pen_mat[1]) opt->pen_Theta = md->pen_mat[1];
        if (md->pen_mat[2]) opt->pen_Omega = md->pen_mat[2];
        opt->pen_m = md->m;
    }
}

const char *mbl_model_coord_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->n ? md->qname[i] : NULL; }
const char *mbl_model_input_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->nr ? md->rname[i] : NULL; }
int mbl_model_copy_data(const mbl_model *md, mblx_graph *g, mbl_status *st)
{
    if (!md || !g) return mbl_error(st, MBL_EARG, "mbl_model_copy_data: NULL model or graph");
    model_graph_lock(md, 1);
    int rc = mblx_data_copy(g, md->g);
    model_graph_lock(md, 0);
    if (rc) return mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, rc, "out of memory");
    return 0;
}
const char *mbl_model_output_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->ny ? md->yname[i] : NULL; }
const char *mbl_model_param_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->np ? md->pname[i] : NULL; }
double mbl_model_param_value(const mbl_model *md, int i) { return md && i >= 0 && i < md->np ? md->pval[i] : NAN; }
double mbl_model_param_spin(const mbl_model *md, int i)
{
    return md && md->pspin && i >= 0 && i < md->np ? md->pspin[i] : 0;
}
const char *mbl_model_ode_state_name(const mbl_model *md, int i)
{
    return md && i >= 0 && i < md->nX ? md->xname[i] : NULL;
}
const char *mbl_model_implicit_name(const mbl_model *md, int i)
{
    return md && i >= 0 && i < md->nZ ? md->zname[i] : NULL;
}

int mbl_model_outputs(const mbl_model *md, const mbl_point *pt, double *y, mbl_status *st)
{
    if (!md || !pt || (!y && md->ny)) return mbl_error(st, MBL_EARG, "mbl_model_outputs: NULL argument");
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_model_outputs: the point does not belong to the model");
    if (!md->ny) return 0;
    size_t nout = (size_t)md->ny + (size_t)md->yjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(md->work_size + 1, sizeof *work);
    double *out = mbl_alloc_array(nout + 1, sizeof *out);
    int rc = 0;
    if (!syms || !work || !out) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        model_fill_syms_pt(md, pt, syms);
        rc = mblx_tape_eval(md->tape_y, syms, out, work, st);
        if (rc) rc = mbl_error_prefix(st, "%s: evaluating the outputs", md->file);
    }
    if (!rc) memcpy(y, out, (size_t)md->ny * sizeof *y);
    mbl_free(syms), mbl_free(work), mbl_free(out);
    return rc;
}

void mbl_model_geometry(const mbl_model *md, mbl_geometry *g)
{
    if (!g) return;
    memset(g, 0, sizeof *g);
    if (!md || !md->npt) return;
    g->npoint = md->npt;
    g->point = (const char *const *)md->ptname;
    g->body = (const char *const *)md->ptbody;
    g->nlink = md->nlink;
    g->link = md->link;
    g->link_name = (const char *const *)md->lname;
    g->link_type = (const char *const *)md->ltype;
}

int mbl_model_set_param(mbl_model *md, int i, double value, mbl_status *st)
{
    if (!md) return mbl_error(st, MBL_EARG, "mbl_model_set_param: model is NULL");
    if (i < 0 || i >= md->np) return mbl_error(st, MBL_EARG, "mbl_model_set_param: no parameter %d (the model has %d)", i, md->np);
    if (!isfinite(value))
        return mbl_error(st, MBL_EARG, "%s: parameter '%s': the value is not a finite number", md->file, md->pname[i]);
    if (md->pbaked[i])
        return mbl_error(st, MBL_EARG,
                         "%s: parameter '%s' cannot be changed in place: %s (reload the model with the new value)",
                         md->file, md->pname[i],
                         md->pbaked[i] == 2 ? "the mechanism evaluated it into a number (its geometry, an initial position or "
                                              "velocity, another parameter's value)"
                                            : "another parameter or a value of the file (initial coordinate, "
                                              "velocity, input value, linearize.time) uses it");
    if (!md->pmoved && !(md->pmoved = mbl_calloc((size_t)md->np, 1))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    md->pmoved[i] = 1; /* a copy takes the value as an override (model_origin_current) */
    md->pval[i] = value;
    return 0;
}

const char *model_file(const mbl_model *md) { return md->file; }

void model_view_get(const mbl_model *md, model_view *v)
{
    memset(v, 0, sizeof *v);
    v->file = md->file;
    v->g = md->g;
    v->n = md->n, v->m = md->m, v->k = md->k, v->nr = md->nr, v->ny = md->ny, v->np = md->np;
    v->nX = md->nX, v->nZ = md->nZ, v->nspd = md->nspd;
    v->nus = md->nus, v->nuvs = md->nuvs;
    v->nF = md->nF, v->nunk = md->nunk, v->nsym = md->nsym;
    v->work_size = md->work_size;
    v->row0 = md->row0;
    v->jac = md->jac;
    v->usjac = md->usjac;
    v->t = md->t;
    v->p = md->p, v->q = md->q, v->v = md->v, v->a = md->a, v->lam = md->lam, v->r = md->r;
    v->y = md->y;
    v->us = md->us;
    v->pname = (const char *const *)md->pname, v->qname = (const char *const *)md->qname;
    v->rname = (const char *const *)md->rname, v->yname = (const char *const *)md->yname;
    v->us_text = (const char *const *)md->us_text;
    v->pval = md->pval;
    v->q0 = md->q0, v->v0 = md->v0, v->r0 = md->r0, v->X0 = md->X0;
    v->cyclic = md->cyclic;
    v->v_given = md->v_given;
    v->nheld = md->nheld;
    v->held_label = (const char *const *)md->held_label;
    v->held_val = md->held_val;
    v->held_gp = md->held_gp, v->held_gi = md->held_gi;
    v->ntt = md->ntt;
    v->tt_label = (const char *const *)md->tt_label;
    v->tt_val = md->tt_val;
    v->tt_gp = md->tt_gp, v->tt_gi = md->tt_gi, v->ta_gp = md->ta_gp, v->ta_gi = md->ta_gi, v->tfree = md->tfree;
    v->tmove = md->tmove;
    v->at = md->at;
    v->flex = md->flex;
    v->nflex = md->nflex;
    v->rframe = md->rframe, v->nrframe = md->nrframe;
    v->time = md->time;
    v->ext = md->ext;
    v->xname = (const char *const *)md->xname, v->uvs_text = (const char *const *)md->uvs_text;
    v->sym_of_unknown = md->sym_of_unknown;
    v->yjac = md->yjac;
    v->work_us = model_user_states_work(md), v->work_y = model_outputs_work(md);
    for (int b = 0; b <= MBL_NBLK; b++) v->blk0[b] = model_blk0_inline(md, b);
}
