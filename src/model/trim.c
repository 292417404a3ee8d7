/* The trim of `linearize.at: trim` (docs/model-files.md, "Trim: steady turns"): a steady motion
 * that meets targets. From the file's `trim:` section:
 *   targets {expression: value}: g_j(q, v, r, t) = c_j, expressions of the coordinates, their rates,
 *     the inputs, parameters and t (a forward speed, a yaw rate, a radius U/r, a lateral
 *     acceleration U r);
 *   free [input, ...]: inputs the trim solves for (a steer angle, a drive force);
 *   accelerations {coordinate: expression}: der(der(q_i)) = a_i(q, v) of the steady motion
 *     (default 0): for coordinates fixed in the ground that turn with the vehicle, the
 *     centripetal terms (der(der(x)) = -der(psi)*der(y), der(der(y)) = der(psi)*der(x)); a
 *     mechanism's trim.turn writes them for every body (mech/trim.c) and asks that those
 *     coordinates be solved too (tmove 2) rather than held (tmove 1);
 * Kept as expressions with exact gradients over the unknowns q, v, r (model_trim_eval); the solver
 * is src/opoint/trim.c. */
#include "model/formulate.h"

static const int trim_refused[] = {MBL_BLK_A, MBL_BLK_LAMBDA, MBL_BLK_MU, MBL_BLK_XD, MBL_BLK_Z, MBL_BLK_X};

/* e's gradient entries over the unknowns q, v, r (column indices of the model's unknowns) appended
 * at *np of (*gi, *gd); 0 or MBL_ENOMEM. */
static int trim_grad(mbl_model *md, mblx_id e, int **gi, mblx_id **gd, int *np, mbl_status *st)
{
    const mblx_id *syms[3] = {md->q, md->v, md->r};
    const int cnt[3] = {md->n, md->n, md->nr};
    const int blk[3] = {MBL_BLK_Q, MBL_BLK_V, MBL_BLK_R};
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < cnt[b]; i++) {
            if (!mblx_depends(md->g, e, syms[b][i])) continue;
            mblx_id d = mblx_diff(md->g, e, syms[b][i]);
            int *ngi = mbl_realloc_array(*gi, (size_t)*np + 2, sizeof *ngi);
            if (ngi) *gi = ngi;
            mblx_id *ngd = mbl_realloc_array(*gd, (size_t)*np + 2, sizeof *ngd);
            if (ngd) *gd = ngd;
            if (d == MBLX_NONE || !ngi || !ngd) return mbl_error(st, MBL_ENOMEM, "out of memory");
            (*gi)[*np] = model_blk0(md, blk[b]) + i, (*gd)[(*np)++] = d;
        }
    return 0;
}

/* one expression of the trim section: parsed, refused where it depends on accelerations,
 * multipliers or user states, with its gradient */
static int trim_expr(loader *L, const mbl_src_item *k, const char *what, mblx_id *e, int **gi, mblx_id **gd, int *np)
{
    mbl_model *md = L->md;
    int rc = model_parse_item(L, k, SCOPE_FULL, what, e);
    if (rc) return rc;
    for (size_t b = 0; b < sizeof trim_refused / sizeof *trim_refused; b++)
        if (model_depends_on_block(md, *e, trim_refused[b]))
            return mbl_error(L->st, MBL_EMODEL,
                             "%s:%d:%d: %s must be an expression of the coordinates, their rates, the inputs, parameters "
                             "and t",
                             L->src->file, k->line, k->col, what);
    return trim_grad(md, *e, gi, gd, np, L->st);
}

static int trim_targets(loader *L)
{
    mbl_model *md = L->md;
    const mbl_src_list *tl = &L->src->trim_targets;
    int nt = tl->n, rc = 0;
    md->tt_label = mbl_calloc((size_t)nt + 1, sizeof *md->tt_label);
    md->tt_x = mbl_calloc((size_t)nt + 1, sizeof *md->tt_x);
    md->tt_val = mbl_calloc((size_t)nt + 1, sizeof *md->tt_val);
    md->tt_gp = mbl_calloc((size_t)nt + 1, sizeof *md->tt_gp);
    if (!md->tt_label || !md->tt_x || !md->tt_val || !md->tt_gp) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    int np = 0;
    for (int j = 0; j < nt && !rc; j++) {
        const mbl_src_item *it = &tl->items[j];
        const char *label = it->key2 ? it->key2 : it->key; /* a mechanism's key as written (measures) */
        md->tt_label[j] = model_str_dup(label);
        if (!md->tt_label[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->ntt = j + 1;
        char what[200];
        snprintf(what, sizeof what, "the trim target '%.150s'", label);
        mbl_src_item k;
        memset(&k, 0, sizeof k);
        k.text = it->key, k.line = it->key_line, k.col = it->key_col;
        rc = trim_expr(L, &k, what, &md->tt_x[j], &md->tt_gi, &md->tt_gd, &np);
        md->tt_gp[j + 1] = np;
        if (!rc && md->tt_gp[j + 1] == md->tt_gp[j])
            rc = mbl_error(L->st, MBL_EMODEL,
                           "%s:%d:%d: %s does not depend on the coordinates, velocities or inputs: nothing to solve for",
                           L->src->file, k.line, k.col, what);
        snprintf(what, sizeof what, "the value of the trim target '%.150s'", label);
        if (!rc) rc = model_load_value(L, it, what, &md->tt_val[j], NULL);
    }
    return rc;
}

static int trim_accelerations(loader *L)
{
    mbl_model *md = L->md;
    const mbl_src_list *al = &L->src->trim_acc;
    md->tacc = mbl_alloc_array((size_t)md->n + 1, sizeof *md->tacc);
    md->ta_gp = mbl_calloc((size_t)md->n + 1, sizeof *md->ta_gp);
    md->tmove = mbl_calloc((size_t)md->n + 1, sizeof *md->tmove);
    if (!md->tacc || !md->ta_gp || !md->tmove) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < md->n; i++) md->tacc[i] = MBLX_NONE;
    int np = 0;
    for (int i = 0; i < md->n; i++) {
        int j = 0;
        while (j < al->n && strcmp(al->items[j].key, md->qname[i])) j++;
        if (j < al->n) {
            md->tmove[i] = L->src->trim_acc_solve ? 2 : 1;
            char what[200];
            snprintf(what, sizeof what, "the trim acceleration of '%.150s'", md->qname[i]);
            int rc = trim_expr(L, &al->items[j], what, &md->tacc[i], &md->ta_gi, &md->ta_gd, &np);
            if (rc) return rc;
        }
        md->ta_gp[i + 1] = np;
    }
    for (int j = 0; j < al->n; j++) {
        int i = 0;
        while (i < md->n && strcmp(al->items[j].key, md->qname[i])) i++;
        if (i == md->n)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: trim.accelerations: '%s' is not a coordinate", L->src->file,
                             al->items[j].key_line, al->items[j].key_col, al->items[j].key);
    }
    return 0;
}

static int trim_free(loader *L)
{
    mbl_model *md = L->md;
    const mbl_src_list *fl = &L->src->trim_free;
    md->tfree = mbl_calloc((size_t)md->nr + 1, sizeof *md->tfree);
    if (!md->tfree) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < fl->n; j++) {
        int i = 0;
        while (i < md->nr && strcmp(fl->items[j].text, md->rname[i])) i++;
        if (i == md->nr)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: trim.free: '%s' is not an input (the trim solves inputs named in 'inputs')",
                             L->src->file, fl->items[j].line, fl->items[j].col, fl->items[j].text);
        if (md->tfree[i]++)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: trim.free: input '%s' named twice", L->src->file,
                             fl->items[j].line, fl->items[j].col, fl->items[j].text);
    }
    return 0;
}

int model_formulate_trim(loader *L)
{
    if (!L->src->trim_targets.n) return 0;
    int rc = trim_targets(L);
    if (!rc) rc = trim_accelerations(L);
    if (!rc) rc = trim_free(L);
    return rc;
}

void model_trim_free(mbl_model *md)
{
    for (int j = 0; md->tt_label && j < md->ntt; j++) mbl_free(md->tt_label[j]);
    mbl_free(md->tt_label), mbl_free(md->tt_x), mbl_free(md->tt_val), mbl_free(md->tt_gp), mbl_free(md->tt_gi);
    mbl_free(md->tt_gd), mbl_free(md->tacc), mbl_free(md->ta_gp), mbl_free(md->ta_gi), mbl_free(md->ta_gd);
    mbl_free(md->tfree), mbl_free(md->tmove);
    mblx_tape_free(md->tape_trim);
}

/* The trim's expressions in the order of md->tape_trim into ids (NULL: counted only); their count */
static size_t trim_outputs(const mbl_model *md, mblx_id *ids)
{
    size_t o = 0;
    for (int j = 0; j < md->ntt; j++) {
        if (ids) ids[o] = md->tt_x[j];
        o++;
        for (int p = md->tt_gp[j]; p < md->tt_gp[j + 1]; p++, o++)
            if (ids) ids[o] = md->tt_gd[p];
    }
    for (int i = 0; i < md->n; i++) {
        if (md->tacc[i] != MBLX_NONE) {
            if (ids) ids[o] = md->tacc[i];
            o++;
        }
        for (int p = md->ta_gp[i]; p < md->ta_gp[i + 1]; p++, o++)
            if (ids) ids[o] = md->ta_gd[p];
    }
    return o;
}

/* One tape for every trim expression: the solver evaluates them at each of its iterations, and one
 * compilation per expression and iteration was most of a failing trim's time (a turn beyond the
 * tires' grip: 1.5 s, 82 % in the compiler) */
int model_compile_trim(mbl_model *md, mbl_status *st)
{
    if (!md->ntt) return 0;
    size_t n = trim_outputs(md, NULL);
    mblx_id *ids = mbl_alloc_array(n + 1, sizeof *ids);
    if (!ids) return mbl_error(st, MBL_ENOMEM, "out of memory");
    trim_outputs(md, ids);
    md->tape_trim = mblx_compile_few(md->g, n, ids, 0, NULL, NULL, st);
    mbl_free(ids);
    return md->tape_trim ? 0 : st ? st->code : MBL_ENOMEM;
}

/* model_trim_eval by the one tape: 0, or nonzero where an expression fails (then each on its own
 * names it) */
static int trim_eval_tape(const mbl_model *md, const double *syms, double *g, double *gg, double *a, double *ag)
{
    size_t n = trim_outputs(md, NULL), nw = mblx_tape_work_size(md->tape_trim);
    double *vals = mbl_alloc_array(n + 1, sizeof *vals), *work = mbl_alloc_array(nw + 1, sizeof *work);
    mbl_status st1;
    mbl_status_clear(&st1);
    int rc = !vals || !work || mblx_tape_eval(md->tape_trim, syms, vals, work, &st1);
    size_t o = 0;
    for (int j = 0; !rc && j < md->ntt; j++) {
        g[j] = vals[o++];
        for (int p = md->tt_gp[j]; p < md->tt_gp[j + 1]; p++) gg[p] = vals[o++];
    }
    for (int i = 0; !rc && i < md->n; i++) {
        a[i] = md->tacc[i] == MBLX_NONE ? 0.0 : vals[o++];
        for (int p = md->ta_gp[i]; p < md->ta_gp[i + 1]; p++) ag[p] = vals[o++];
    }
    mbl_free(vals), mbl_free(work);
    return rc;
}

int model_trim_eval(const mbl_model *md, const double *syms, double *g, double *gg, double *a, double *ag, mbl_status *st)
{
    if (md->tape_trim && !trim_eval_tape(md, syms, g, gg, a, ag)) return 0;
    mbl_status st1;
    mbl_status_clear(&st1);
    for (int j = 0; j < md->ntt; j++) {
        int rc = mblx_eval(md->g, md->tt_x[j], syms, &g[j], &st1);
        for (int p = md->tt_gp[j]; !rc && p < md->tt_gp[j + 1]; p++) rc = mblx_eval(md->g, md->tt_gd[p], syms, &gg[p], &st1);
        if (rc)
            return mbl_error(st, rc, "%s: the trim target '%s' cannot be evaluated at the point: %s", md->file,
                             md->tt_label[j], st1.msg);
    }
    for (int i = 0; i < md->n; i++) {
        a[i] = 0;
        int rc = md->tacc[i] == MBLX_NONE ? 0 : mblx_eval(md->g, md->tacc[i], syms, &a[i], &st1);
        for (int p = md->ta_gp[i]; !rc && p < md->ta_gp[i + 1]; p++) rc = mblx_eval(md->g, md->ta_gd[p], syms, &ag[p], &st1);
        if (rc)
            return mbl_error(st, rc, "%s: the trim acceleration of '%s' cannot be evaluated at the point: %s", md->file,
                             md->qname[i], st1.msg);
    }
    return 0;
}

int model_trim_target_find(const mbl_model *md, const char *label)
{
    for (int j = 0; label && j < md->ntt; j++)
        if (!strcmp(md->tt_label[j], label)) return j;
    return -1;
}

int mbl_model_trim_target_find(const mbl_model *model, const char *name)
{
    return model && model_trim_target_find(model, name) >= 0 ? 1 : 0;
}
