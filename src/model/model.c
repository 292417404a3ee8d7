/* A model's life: model_from_src runs the formulation's steps in order (names, symbols, values,
 * variables, formulate, compile, checks) and freeing a model. */
#include "core/progress.h"
#include "model/data.h"
#include "model/formulate.h"
#include "model/model.h"
#include "model/origin.h"
#include "model/routines.h"
#include "model/text_blocks.h"
#include "model/terms/term.h"

#include <string.h>

/* The expression graph of a large model is reserved at once from its source's size: about this
 * many nodes per byte of expression text once formulated and differentiated (0.3 to 0.5 on the
 * equation-level four-bars and flexible pendulums, whose text is mostly short sums; a model that
 * needs more grows the graph as before, one that needs fewer leaves untouched pages untouched,
 * except in the hash table). */
#define GRAPH_NODES_PER_BYTE 0.4
enum { GRAPH_RESERVE_MIN = 1 << 16 };
/* Smaller sources grew from a few dozen nodes: 7 rehashes and node-array copies on the nonlinear
 * Whipple bicycle, whose lets are differentiated twice over (more nodes per byte than the large
 * models). Reserved at 0.5, 1 and 2 nodes per byte, its whole process took 0.9, 1.7 and 1.6 %
 * fewer instructions: they are reserved at 1 per byte, at most what the smallest large source
 * reserves. */
#define GRAPH_NODES_PER_BYTE_SMALL 1.0
/* A mechanism's texts (src/mech) name its variables at length (rear_frame_e0) and write its
 * numbers in 17 digits: 0.09 (single_track_car) to 0.33 (the planar four-bar) nodes per byte, so
 * a small one is reserved at 0.25 per byte: the mechanism bicycle's graph of 3,167 nodes had
 * 26,214 reserved, a hash table of 256 KB cleared (0.18 M of its 17.4 M instructions; 0.1 and
 * 0.15 per byte grew the rolling disc's). */
#define GRAPH_NODES_PER_BYTE_MECH 0.25

/* Nodes to reserve for a source of text bytes (mech: a mechanism's). */
static size_t graph_reserve_nodes(size_t text, int mech)
{
    double big = GRAPH_NODES_PER_BYTE * (double)text, cap = GRAPH_NODES_PER_BYTE * (double)GRAPH_RESERVE_MIN;
    if (text >= GRAPH_RESERVE_MIN) return (size_t)big;
    double small = (mech ? GRAPH_NODES_PER_BYTE_MECH : GRAPH_NODES_PER_BYTE_SMALL) * (double)text;
    return (size_t)(small < cap ? small : cap);
}

/* Bytes of expression text in a source: what the graph's size is estimated from. */
static size_t src_text_bytes(const mbl_src *src)
{
    const mbl_src_list *lists[] = {&src->parameters, &src->coordinates, &src->velocities, &src->held_velocities, &src->held_body_velocities, &src->variables,
                                   &src->forces, &src->inputs, &src->outputs, &src->constraints,
                                   &src->nonholonomic, &src->mass_matrix, &src->states, &src->velocity_states,
                                   &src->ode_states, &src->ode, &src->implicit_variables, &src->validity, &src->singular,
                                   &src->trim_targets, &src->trim_acc};
    const mbl_src_item *items[] = {&src->kinetic_energy, &src->potential_energy, &src->dissipation};
    size_t b = 0;
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
        for (int i = 0; i < lists[l]->n; i++)
            if (lists[l]->items[i].text) b += strlen(lists[l]->items[i].text);
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        if (items[i]->text) b += strlen(items[i]->text);
    return b;
}

/* spin_speeds: {parameter: unit} into md->pspin (after the parameters' symbols): each key a
 * parameter, each unit rad/s, Hz or rpm, else an error at its line and column. */
static int take_spin_speeds(mbl_model *md, const mbl_src *src, mbl_status *st)
{
    if (!(md->pspin = mbl_calloc((size_t)(md->np ? md->np : 1), sizeof *md->pspin)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < src->spin_speeds.n; j++) {
        const mbl_src_item *it = &src->spin_speeds.items[j];
        int i = 0;
        while (i < md->np && strcmp(md->pname[i], it->key)) i++;
        if (i == md->np)
            return mbl_error(st, MBL_EMODEL, "%s:%d:%d: spin_speeds: '%s' is not a parameter (a spin speed is a parameter "
                             "to sweep)", src->file, it->key_line, it->key_col, it->key);
        const char *u = it->text ? it->text : "";
        double h = !strcmp(u, "rad/s") ? 1.0 / 6.283185307179586476925286766559 : !strcmp(u, "Hz") ? 1.0
                   : !strcmp(u, "rpm") ? 1.0 / 60.0 : 0;
        if (h == 0)
            return mbl_error(st, MBL_EMODEL, "%s:%d:%d: spin_speeds: the unit of '%s' must be rad/s, Hz or rpm, not '%s'",
                             src->file, it->line, it->col, it->key, u);
        md->pspin[i] = h;
    }
    return 0;
}

int model_from_src(mbl_src *src, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    int rc = 0;
    *out = NULL;
    mbl_model *md = mbl_calloc(1, sizeof *md);
    if (md && pthread_mutex_init(&md->graph_mutex, NULL)) {
        mbl_free(md);
        md = NULL;
    }
    if (!md) {
        model_src_free(src);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    core_progress_stage("load: formulate"); /* the graph's ticks: core/progress.h */
    md->g = mblx_graph_new();
    size_t text = src_text_bytes(src);
    if (md->g) (void)mblx_graph_reserve(md->g, graph_reserve_nodes(text, src->from_mechanism));
    md->file = model_str_dup(src->file);
    md->name = model_str_dup(src->name);
    md->forward_jacobian = src->forward_jacobian;
    if (src->no_sens) md->no_sens = model_str_dup(src->no_sens);
    if (src->param_numeric && src->parameters.n && (md->param_numeric = mbl_alloc_array((size_t)src->parameters.n, 1)))
        memcpy(md->param_numeric, src->param_numeric, (size_t)src->parameters.n);
    loader L;
    memset(&L, 0, sizeof L);
    L.md = md;
    L.src = src;
    L.st = st;
    if (!md->g || !md->file || !md->name) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && src->ndata) rc = model_data_register(md->g, src->file, src->data, src->ndata, st);
    if (!rc) rc = model_take_held(&L); /* expression keys of velocities: held velocities, not speeds */
    if (!rc) rc = model_take_speeds(&L); /* before the variables are counted: speeds are variables */
    if (!rc) rc = model_routines_take(&L); /* so are the user routines' outputs */
    if (!rc) {
        L.var_state = mbl_calloc((size_t)(src->variables.n ? src->variables.n : 1), sizeof *L.var_state);
        L.var_node = mbl_calloc((size_t)(src->variables.n ? src->variables.n : 1), sizeof *L.var_node);
        if (!L.var_state || !L.var_node) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (!rc) rc = model_check_names(&L);
    /* which parameters mbl_model_set_param may change: the resolver marks those used by values */
    if (!rc && !(md->pbaked = mbl_calloc((size_t)(src->parameters.n ? src->parameters.n : 1), sizeof *md->pbaked)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && !(md->pset = mbl_alloc_array((size_t)(src->parameters.n ? src->parameters.n : 1), sizeof *md->pset)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = model_create_symbols(&L);
    if (!rc) rc = model_routines_register(&L);
    if (!rc) rc = take_spin_speeds(md, src, st);
    if (!rc && src->from_mechanism)
        for (int i = 0; i < md->np; i++) /* those a mechanism evaluated into numbers (all, without its flags) */
            if (!src->param_evaluated || src->param_evaluated[i]) md->pbaked[i] = 2;
    if (!rc) rc = model_load_values(&L, sets, nsets);
    if (!rc && model_let_first(&L)) L.let_first = L.let_vars = 1; /* parsed once, with lets (formulate_let.c) */
    /* variables in their order first: a variable then finds the earlier ones parsed, so a long
     * chain of them written in order (a mechanism tree in joint coordinates) does not nest */
    for (int i = 0; i < src->variables.n && !rc; i++)
        if (L.var_state[i] != VAR_DONE) {
            mblx_id e = MBLX_NONE;
            char what[160];
            model_variable_what(what, sizeof what, &src->variables.items[i]);
            L.var_state[i] = VAR_BUSY;
            L.var_stack[0] = i;
            L.var_depth = 1;
            L.mult_refused = 0;
            rc = model_parse_variable(&L, i, what, &e);
            L.var_depth = 0;
            if (rc && L.mult_refused) {
                /* it uses a constraint force: parsed where a force, ode or output names it (where
                 * lambda() may be used), or refused there with the item that named it */
                rc = 0;
                mbl_status_clear(st);
                L.var_state[i] = VAR_NEW;
                continue;
            }
            L.var_node[i] = L.let_vars ? mblx_let(md->g, e) : e; /* as resolve_variable */
            L.var_state[i] = VAR_DONE;
        }
    if (!rc) rc = model_terms_claim_rows(&L);
    if (!rc) rc = model_formulate(&L);
    if (!rc) {
        /* every variable must parse, even one that nothing uses */
        for (int i = 0; i < src->variables.n && !rc; i++)
            if (L.var_state[i] != VAR_DONE) {
                mblx_id e;
                char what[160];
                model_variable_what(what, sizeof what, &src->variables.items[i]);
                L.var_state[i] = VAR_BUSY;
                L.var_stack[0] = i;
                L.var_depth = 1;
                L.allow_mult = 1;
                rc = model_parse_variable(&L, i, what, &e);
                L.allow_mult = 0;
                L.var_depth = 0;
                L.var_state[i] = VAR_DONE;
            }
    }
    if (!rc) model_src_drop_parsed(src); /* its texts and lists: room for the compilation's scratch */
    if (!rc) core_progress_stage("load: compile");
    if (!rc) rc = model_compile(md, st);
    if (!rc) rc = model_check_mass(md, src, st);
    core_progress_stage(NULL);
    if (rc && core_progress_stopped()) rc = mbl_error(st, MBL_ECANCELLED, "cancelled during the load of %s", src->file);
    model_name_index_reset();
    mbl_free(L.pvals);
    mbl_free(L.var_state);
    mbl_free(L.var_node);
    mbl_free(L.derlet);
    mbl_free(L.vdeg);
    mbl_free(L.term_row);
    model_src_free(src);
    if (rc) {
        mbl_model_free(md);
        return rc;
    }
    *out = md;
    return 0;
}

static void free_names(char **names, int n)
{
    if (!names) return;
    for (int i = 0; i < n; i++) mbl_free(names[i]);
    mbl_free(names);
}

void mbl_model_free(mbl_model *md)
{
    if (!md) return;
    model_free_exprs(md);
    free_names(md->kin_body, md->nkin);
    mbl_free(md->kin);
    mbl_free(md->rframe);
    free_names(md->val_what, md->nval);
    free_names(md->val_limit_text, md->nval);
    mbl_free(md->val);
    mbl_free(md->val_limit);
    free_names(md->sing_what, md->nsing);
    free_names(md->sing_limit_text, md->nsing);
    mbl_free(md->sing);
    mblx_tape_free(md->tape_sing);
    mbl_free(md->sing_limit);
    mblx_graph_free(md->g);
    mblx_tape_free(md->tape_F);
    mblx_tape_free(md->tape_jac);
    mbl_free(md->jac0);
    mblx_tape_free(md->tape_y);
    mblx_tape_free(md->tape_us);
    mblx_tape_free(md->tape_srcx);
    mblx_tape_free(md->tape_draw);
    for (int t = 0; t < MODEL_NTERMS; t++) model_terms[t]->free(md);
    model_routines_free(md); /* (after every tape: their libraries' code is closed) */
    mbl_free(md->Fx), mbl_free(md->jx);
    model_jac_memo_free(md->load_memo);
    model_sjac_free(&md->dpjac);
    free_names(md->ptname, md->ptname ? md->npt : 0);
    free_names(md->ptbody, md->ptbody ? md->npt : 0);
    free_names(md->lname, md->lname ? md->nlink : 0);
    free_names(md->ltype, md->ltype ? md->nlink : 0);
    mbl_free(md->link);
    mbl_free(md->dp);
    mbl_free(md->srcx_what);
    mbl_free(md->srcx);
    model_sjac_free(&md->usjac);
    mbl_free(md->usjx);
    model_sjac_free(&md->jac);
    model_sjac_free(&md->sjac);
    mbl_free(md->Fs);
    mbl_free(md->no_sens);
    mbl_free(md->param_numeric);
    model_sjac_free(&md->yjac);
    /* the symbols' names are in the text blocks (model_create_symbols) */
    mbl_free(md->qname), mbl_free(md->rname), mbl_free(md->yname), mbl_free(md->cname), mbl_free(md->pname);
    mbl_free(md->xname), mbl_free(md->zname);
    free_names(md->us_text, md->nus);
    free_names(md->uvs_text, md->nuvs);
    model_free_text_blocks(md); /* the records' and the names' texts */
    free_names(md->eq_what, md->eq_what ? md->nX + md->nZ : 0);
    free_names(md->spd_what, md->nspd);
    mbl_free(md->X), mbl_free(md->Xd), mbl_free(md->Z), mbl_free(md->X0);
    mbl_free(md->file);
    mbl_free(md->name);
    model_origin_free(md->origin);
    mbl_free(md->pmoved);
    mbl_free(md->p);
    mbl_free(md->q);
    mbl_free(md->v);
    mbl_free(md->a);
    mbl_free(md->lam);
    mbl_free(md->mu);
    mbl_free(md->r);
    mbl_free(md->pval);
    for (int i = 0; i < 3; i++) mbl_free(md->pen_mat[i]);
    mbl_free(md->pbaked);
    mbl_free(md->pset);
    mbl_free(md->pspin);
    mbl_free(md->sym_of_unknown);
    mbl_free(md->unknown_of_sym);
    mbl_free(md->sym_p);
    mbl_free(md->q0);
    mbl_free(md->v0);
    mbl_free(md->r0);
    mbl_free(md->v_given);
    model_held_free(md);
    model_trim_free(md);
    mbl_free(md->pexpr);
    mbl_free(md->q0x);
    mbl_free(md->v0x);
    mbl_free(md->r0x);
    mbl_free(md->F);
    model_inlined_free(md);
    mbl_free(md->Fc);
    mbl_free(md->y);
    mbl_free(md->us);
    mbl_free(md->uvs);
    mbl_free(md->cyclic);
    pthread_mutex_destroy(&md->graph_mutex);
    mbl_free(md);
}
