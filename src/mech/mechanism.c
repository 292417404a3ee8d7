/* `model: mechanism` -> equation level. See mechanism.h and docs/mechanism-reference.md.
 *
 * Every body contributes coordinates (planar x, y, th; spatial x, y, z, e0..e3 with the
 * normalization constraint; point x, y[, z]) and generated variables: the rotation matrix
 * (_A_<body>_rc), the global angular velocity (_w_<body>_k), every marker's global position
 * (_p_<marker>_k) and axes (_x_/_y_/_z_<marker>_k). Joints become holonomic constraints written
 * with those variables, force elements become generalized forces by virtual power (a force f at
 * a point p of a body with origin r: Q_r = f, and the moment N = (p - r) x f gives Q_theta = N_z
 * (planar) or Q_e = 2 E(e)^T N (Euler parameters)), gravity and the inertia become energies.
 *
 * The compiler lives in src/mech/, one file per element family (mech_internal.h: the compiler
 * state `mech`, the bodies, markers and joints, and the helpers the files share, prefixed mech_):
 *   mechanism.c  this file: the root (read_all), parameters, inputs, variables, outputs, the
 *                `linearize` section (states), mech_read
 *   util.c       names, arena strings, YAML helpers, pushing items, evaluating parameter texts
 *   body.c       rigid bodies, point masses, markers, orientations and Euler parameters
 *   joint.c      joints, drivers, couplers, constraint texts
 *   force.c      force elements, kinetic and potential energies, generalized forces
 *   measure.c    measures (DX, AX, JQ, FX, ...), reactions, their substitution into texts
 *   beam.c, beam_body.c, beam3.c, modal_body.c  flexible bodies (beam elements; planar and spatial beams, modal bodies)
 *   pmech.c      planar rigid bodies and revolute joints the model evaluates numerically
 *   wheel.c      the rolling wheel joint (a disc on a ground plane: non-holonomic) and its tire
 *   trim.c       `trim:` (at: trim): targets with measures, free inputs, the steady turn's accelerations
 *   routines.c   `routines:` (user routines, issue 68): the model's reader, the inputs' measures written out
 *   relative.c   `coordinates: relative`: joint kinds, the tree and its joint coordinates (cut
 *                joints stay constraints); relative_kinematics.c the recursive kinematics;
 *                relative_forces.c the generalized forces; relative_measures.c JQ and the
 *                reactions of tree joints (they share mech/relative.h)
 *   tree.c       the spanning tree and the numeric kinematics (B, dB/dq) of source 003
 *   urdf.c       URDF robots -> mechanism text (urdf_xml.c reads the XML, urdf_yaml.c is
 *                `model: urdf`; mech/urdf_internal.h)
 *   vec3_text.c  3-D vectors, rotations and quaternions as expression texts (mech_tx_*); the
 *                same algebra on doubles is src/core/vec3.h
 * A new element family gets its own file here (e.g. beam.c, modal_body.c, tree.c, urdf.c). */
#include "mech/mechanism.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mech/mech_internal.h"
#include "model/data.h"
#include "model/pmech_num.h"

/* ---- user expressions: variables, outputs, inputs, states ------------------------------------- */

static int copy_map(mech *M, const yaml_node_t *m, mbl_src_list *l, const char *what, int do_subst)
{
    if (!m || (m->type == YAML_SCALAR_NODE && m->data.scalar.length == 0)) return 0;
    if (m->type != YAML_MAPPING_NODE) return err_at(M, m, "'%s' must be a mapping of name: value", what);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k) || k->data.scalar.length == 0) return err_at(M, k, "in '%s': a name must be a plain word", what);
        const char *t = NULL;
        int rc = mech_text_of(M, v, what, &t);
        if (!rc && do_subst) rc = mech_subst(M, t, v, NULL, 0, &t);
        if (rc) return rc;
        for (int i = 0; i < l->n; i++)
            if (!strcmp(l->items[i].key, mech_sc(k))) return err_at(M, k, "duplicate name '%s' in '%s'", mech_sc(k), what);
        int line, col;
        mech_pos_of(v, &line, &col);
        if ((rc = mech_push(M, l, mech_sc(k), t, line, col))) return rc;
        mech_pos_of(k, &l->items[l->n - 1].key_line, &l->items[l->n - 1].key_col);
    }
    return 0;
}

/* a state expression becomes a variable named after its text (so reports show "AX_rotor_base") */
static int state_list(mech *M, const yaml_node_t *s, mbl_src_list *l, const char *what)
{
    if (!s || (s->type == YAML_SCALAR_NODE && s->data.scalar.length == 0)) return 0;
    if (s->type != YAML_SEQUENCE_NODE) return err_at(M, s, "'%s' must be a list", what);
    for (yaml_node_item_t *p = s->data.sequence.items.start; p < s->data.sequence.items.top; p++) {
        yaml_node_t *v = mech_node(M->doc, *p);
        const char *t = NULL, *x = NULL;
        int rc = mech_text_of(M, v, what, &t);
        if (!rc) rc = mech_subst(M, t, v, NULL, 0, &x);
        if (rc) return rc;
        int line, col;
        mech_pos_of(v, &line, &col);
        if (!strcmp(x, t)) {
            rc = mech_push(M, l, NULL, t, line, col);
        } else {
            /* name: the text with every non-identifier run replaced by one '_' */
            size_t n = strlen(t);
            char *nm = mbl_malloc(n + 2);
            if (!nm || !mech_keep(M, nm)) return mech_oom(M);
            size_t o = 0;
            for (size_t i = 0; i < n; i++) {
                if (mech_is_id(t[i])) nm[o++] = t[i];
                else if (o && nm[o - 1] != '_') nm[o++] = '_';
            }
            while (o && nm[o - 1] == '_') o--;
            nm[o] = '\0';
            if (!o || !mech_is_id0(nm[0])) nm = mech_fmt(M, "state_%d", ++M->nstate);
            nm = mech_var_name_free(M, nm, &M->nstate);
            rc = mech_add_var(M, nm, x, line, col);
            if (!rc) rc = mech_push(M, l, NULL, nm, line, col);
        }
        if (rc) return rc;
    }
    return 0;
}

/* velocities: {key: value}: held velocities at a given point (model/held.c), each key a measure
 * expression (JV(crank)), a generated coordinate or any expression of them, written out here;
 * the label stays the key as written */
static int held_velocities(mech *M, const yaml_node_t *m)
{
    if (!m || (m->type == YAML_SCALAR_NODE && m->data.scalar.length == 0)) return 0;
    if (m->type != YAML_MAPPING_NODE) return err_at(M, m, "'velocities' must be a mapping of quantity: value");
    mbl_src_list *l = &M->src->held_velocities;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k) || k->data.scalar.length == 0)
            return err_at(M, k, "in 'velocities': a key must be a measure (JV(joint)), a coordinate or an expression");
        const char *t = NULL, *x = NULL;
        int rc = mech_text_of(M, v, "velocities", &t);
        if (!rc) rc = mech_subst(M, mech_sc(k), k, NULL, 0, &x);
        if (rc) return rc;
        int line, col;
        mech_pos_of(v, &line, &col);
        if ((rc = mech_push(M, l, x, t, line, col))) return rc;
        mbl_src_item *it = &l->items[l->n - 1];
        mech_pos_of(k, &it->key_line, &it->key_col);
        if (!(it->key2 = mech_dup_s(mech_sc(k)))) return mech_oom(M);
    }
    return 0;
}

static int scalar_item(mech *M, const yaml_node_t *k, const yaml_node_t *v, mbl_src_item *it)
{
    if (!mech_is_scalar(v)) return err_at(M, v, "'%s' must be a single value", mech_sc(k));
    it->text = mech_dup_s(mech_sc(v));
    if (!it->text) return mech_oom(M);
    mech_pos_of(k, &it->key_line, &it->key_col);
    mech_pos_of(v, &it->line, &it->col);
    return 0;
}

/* linearize.penalty_Xi, _Theta, _Omega (i = 0, 1, 2) as a text-model file takes them (src/model/source.c):
 * a list of numbers (a diagonal) or of R lists of R numbers (row by row), one row per holonomic
 * constraint the joints generate; their count is checked when the model is loaded (model/symbols.c) */
static int pen_matrix(mech *M, int i, const yaml_node_t *k, const yaml_node_t *v)
{
    mbl_src *s = M->src;
    mech_pos_of(k, &s->pen_mat_line[i], &s->pen_mat_col[i]);
    yaml_node_item_t *p0 = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
    int nrow = p0 ? (int)(v->data.sequence.items.top - p0) : 0;
    if (!nrow)
        return err_at(M, v, "linearize.%s must be a list of numbers (a diagonal, one per constraint) or a list of "
                      "lists (the full matrix, row by row)", mech_sc(k));
    int full = mech_node(M->doc, *p0)->type == YAML_SEQUENCE_NODE;
    s->pen_mat_rows[i] = full ? nrow : -1;
    for (yaml_node_item_t *p = p0; p < v->data.sequence.items.top; p++) {
        yaml_node_t *row = mech_node(M->doc, *p);
        yaml_node_item_t *q0 = full && row->type == YAML_SEQUENCE_NODE ? row->data.sequence.items.start : NULL;
        if (full && (!q0 || (int)(row->data.sequence.items.top - q0) != nrow))
            return err_at(M, row, "linearize.%s: row %d must be a list of %d numbers (the matrix is square, %d rows)",
                          mech_sc(k), (int)(p - p0) + 1, nrow, nrow);
        yaml_node_item_t *q = full ? q0 : p, *qe = full ? row->data.sequence.items.top : p + 1;
        for (; q < qe; q++) {
            yaml_node_t *x = mech_node(M->doc, *q);
            if (!mech_is_scalar(x)) return err_at(M, x, "linearize.%s: expected a number", mech_sc(k));
            int rc = mech_push_at(M, &s->pen_mat[i], NULL, mech_sc(x), x);
            if (rc) return rc;
        }
    }
    return 0;
}

static int read_linearize(mech *M, const yaml_node_t *v)
{
    if (!v) return 0;
    int rc = mech_want_map(M, v, "'linearize'");
    static const char *ok[] = {"at", "states", "velocity_states", "time", "penalty_alpha", "penalty_xi", "penalty_omega",
                               "penalty_Xi", "penalty_Theta", "penalty_Omega", NULL};
    if (!rc) rc = mech_check_keys(M, v, ok, "linearize");
    if (rc) return rc;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *x = mech_node(M->doc, p->value);
        if (!strcmp(mech_sc(k), "at")) rc = scalar_item(M, k, x, &M->src->at);
        else if (!strcmp(mech_sc(k), "time")) rc = scalar_item(M, k, x, &M->src->time);
        else if (!strcmp(mech_sc(k), "penalty_Xi")) rc = pen_matrix(M, 0, k, x);
        else if (!strcmp(mech_sc(k), "penalty_Theta")) rc = pen_matrix(M, 1, k, x);
        else if (!strcmp(mech_sc(k), "penalty_Omega")) rc = pen_matrix(M, 2, k, x);
        else if (!strncmp(mech_sc(k), "penalty_", 8)) /* alpha, xi, omega: checked where loaded (model/symbols.c) */
            rc = scalar_item(M, k, x, mech_sc(k)[8] == 'a' ? &M->src->pen_alpha : mech_sc(k)[8] == 'x' ? &M->src->pen_xi
                                                                                                : &M->src->pen_omega);
        else if (!strcmp(mech_sc(k), "states")) rc = state_list(M, x, &M->src->states, "states");
        else rc = state_list(M, x, &M->src->velocity_states, "velocity_states");
    }
    return rc;
}

/* ---- the root -------------------------------------------------------------------------------- */

static int emit_draw(mech *M);

/* the bodies' array and names at the count of the bodies mapping (4,001 at the N = 2000 four-bar:
 * nine doublings of the array and of the name set) */
static int reserve_bodies(mech *M, const yaml_node_t *bodies)
{
    size_t nbod = (size_t)(bodies->data.mapping.pairs.top - bodies->data.mapping.pairs.start), nmk = 0;
    if ((size_t)M->cb < (size_t)M->nb + nbod) {
        body *b = nbod < (size_t)INT_MAX / 2 ? mbl_realloc_array(M->b, (size_t)M->nb + nbod, sizeof *b) : NULL;
        if (!b) return mech_oom(M);
        M->b = b, M->cb = M->nb + (int)nbod;
    }
    /* the bodies' markers too (their array and name set grew by doubling: 10,003 markers of the
     * N = 2000 four-bar, 3.5 M instructions of copies and rehashes) */
    for (yaml_node_pair_t *p = bodies->data.mapping.pairs.start; p < bodies->data.mapping.pairs.top; p++) {
        yaml_node_t *v = mech_node(M->doc, p->value);
        yaml_node_t *mk = v && v->type == YAML_MAPPING_NODE ? mech_get(M, v, "markers") : NULL;
        if (mk && mk->type == YAML_MAPPING_NODE)
            nmk += (size_t)(mk->data.mapping.pairs.top - mk->data.mapping.pairs.start);
    }
    if (nmk && nmk < (size_t)INT_MAX / 2 && (size_t)M->cm < (size_t)M->nm + nmk) {
        marker *m = mbl_realloc_array(M->mk, (size_t)M->nm + nmk, sizeof *m);
        if (!m) return mech_oom(M);
        M->mk = m, M->cm = M->nm + (int)nmk;
    }
    return mech_ns_reserve(&M->hb, nbod) || mech_ns_reserve(&M->hm, nmk) ? mech_oom(M) : 0;
}

static int read_all(mech *M, const yaml_node_t *root)
{
    static const char *ok[] = {"model", "name", "parameters", "space", "ground", "bodies", "joints", "drivers",
                               "forces", "inputs", "variables", "outputs", "linearize", "coordinates", "tree_dynamics", "spin_speeds",
                               "velocities", "data", "trim", "routines", "modal_damping", "orientation", NULL};
    int rc = mech_check_keys(M, root, ok, "mechanism");
    if (rc) return rc;
    yaml_node_t *n;
    if ((n = mech_get(M, root, "name"))) {
        if (!mech_is_scalar(n)) return err_at(M, n, "'name' must be text");
        char *s = mech_dup_s(mech_sc(n));
        if (!s) return mech_oom(M);
        mbl_free(M->src->name);
        M->src->name = s;
    }
    if ((n = mech_get(M, root, "space"))) {
        if (!mech_is_scalar(n) || (strcmp(mech_sc(n), "planar") && strcmp(mech_sc(n), "spatial")))
            return err_at(M, n, "'space' must be planar or spatial");
        M->planar = !strcmp(mech_sc(n), "planar");
    }
    if ((n = mech_get(M, root, "coordinates"))) { /* docs/mechanism-reference.md, "Relative coordinates" */
        if (!mech_is_scalar(n) || (strcmp(mech_sc(n), "relative") && strcmp(mech_sc(n), "absolute")))
            return err_at(M, n, "'coordinates' must be absolute or relative");
        M->relative = !strcmp(mech_sc(n), "relative");
    }
    if ((n = mech_get(M, root, "tree_dynamics"))) { /* docs/mechanism-reference.md, "The tree's structured term" */
        if (!mech_is_scalar(n) || (strcmp(mech_sc(n), "recursive") && strcmp(mech_sc(n), "symbolic")))
            return err_at(M, n, "'tree_dynamics' must be recursive or symbolic");
        M->tree_symbolic = !strcmp(mech_sc(n), "symbolic");
    }
    /* docs/mechanism-reference.md, "Euler angles" */
    if ((rc = mech_e313_mode(M, mech_get(M, root, "orientation"), "mechanism", &M->eul313))) return rc;
    M->pnum = M->planar && !M->relative && model_pmech_numeric(); /* src/mech/pmech.c */
    /* parameters: copied, and evaluated here with the file's values for the checks */
    if ((rc = copy_map(M, mech_get(M, root, "parameters"), &M->src->parameters, "parameters", 0))) return rc;
    if ((rc = copy_map(M, mech_get(M, root, "spin_speeds"), &M->src->spin_speeds, "spin_speeds", 0))) return rc;
    /* data sets (issue 35): passed on to the equation level, and known to this graph's parses */
    if ((n = mech_get(M, root, "data"))) {
        if ((rc = model_data_read(M->doc, n, M->file, M->src->mem_budget, &M->src->data, &M->src->ndata, M->st))) return rc;
        if ((rc = model_data_register(M->g, M->file, M->src->data, M->src->ndata, M->st))) return rc;
    }
    int np = M->src->parameters.n;
    M->pval = mbl_calloc((size_t)(np ? np : 1), sizeof *M->pval);
    M->pset = mbl_calloc((size_t)(np ? np : 1), sizeof *M->pset);
    M->src->param_numeric = mbl_calloc((size_t)(np ? np : 1), 1);
    M->src->param_evaluated = mbl_calloc((size_t)(np ? np : 1), 1);
    if (!M->pval || !M->pset || !M->src->param_numeric || !M->src->param_evaluated) return mech_oom(M);
    for (int i = 0; i < np; i++) {
        M->np_eval = i;
        mech_set_track(M);
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", M->src->parameters.items[i].key);
        const mbl_src_item *it = &M->src->parameters.items[i];
        mblx_parse_opts po;
        memset(&po, 0, sizeof po);
        po.resolve = mech_resolve_param;
        po.ud = M;
        po.line = it->line;
        po.col = it->col;
        mbl_status st;
        mblx_id e;
        rc = mblx_parse(M->g, it->text, strlen(it->text), &po, &e, &st);
        if (rc == MBL_ENOMEM) return mech_oom(M);
        if (rc) return mbl_error(M->st, MBL_EMODEL, "%s:%s (in %s)", M->file, st.msg, what);
        double dummy = 0;
        if ((rc = mblx_eval(M->g, e, &dummy, &M->pval[i], &st)) == MBL_ENOMEM) return mech_oom(M);
        if (rc)
            return mbl_error(M->st, MBL_EMODEL, "%s:%d:%d: %s (in %s)", M->file, it->line, it->col, st.msg, what);
        M->pset[i] = M->used_set;
        /* a --set replaces the value (the expression still had to be valid); a non-finite or
         * unknown override is reported by the model loader */
        for (int k = 0; k < M->nsets; k++)
            if (M->sets[k].name && !strcmp(M->sets[k].name, it->key) && isfinite(M->sets[k].value)) {
                M->pval[i] = M->sets[k].value;
                M->pset[i] = k;
            }
    }
    M->np_eval = np;
    mech_set_track(M);
    if ((rc = copy_map(M, mech_get(M, root, "inputs"), &M->src->inputs, "inputs", 0))) return rc;
    /* ground */
    body *G = mech_new_body(M, "ground", NULL);
    if (!G) return mech_oom(M);
    G->kind = KIND_GROUND;
    static char *I9[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "1"};
    for (int k = 0; k < 9; k++) G->A[k] = I9[k];
    for (int k = 0; k < 3; k++) G->r[k] = G->w[k] = "0";
    if ((n = mech_get(M, root, "ground"))) {
        if (n->type != YAML_MAPPING_NODE) return err_at(M, n, "'ground' must be a mapping with 'markers'");
        static const char *okg[] = {"markers", NULL};
        if ((rc = mech_check_keys(M, n, okg, "ground"))) return rc;
        if ((rc = mech_add_markers(M, 0, mech_get(M, n, "markers")))) return rc;
    }
    n = mech_get(M, root, "bodies");
    if (!n || n->type != YAML_MAPPING_NODE || n->data.mapping.pairs.start == n->data.mapping.pairs.top)
        return err_at(M, n ? n : root, "the mechanism has no bodies ('bodies' must be a mapping name: {...})");
    if ((rc = mech_beam_prescan(M, n))) return rc; /* the size estimate before anything is built */
    if ((rc = reserve_bodies(M, n))) return rc;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key);
        if (!mech_is_scalar(k)) return err_at(M, k, "a body name must be a plain word");
        if ((rc = mech_read_body(M, k, mech_node(M->doc, p->value)))) return rc;
    }
    if ((rc = mech_modal_damping_check(M, root))) return rc; /* modal_damping.c */
    if (M->nnp && (rc = mech_natural_names(M))) return rc; /* natural coordinates' names (natural.c) */
    if ((rc = mech_read_joints(M, mech_get(M, root, "joints")))) return rc;
    if (M->relative && !M->torder && (rc = mech_rel_tree(M))) return rc; /* a mechanism without joints */
    if ((rc = mech_read_drivers(M, mech_get(M, root, "drivers")))) return rc;
    if ((n = mech_get(M, root, "forces")) && !(n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0)) {
        if ((rc = mech_want_map(M, n, "'forces'"))) return rc;
        nameset seen;
        memset(&seen, 0, sizeof seen);
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && !rc; p++) {
            yaml_node_t *k = mech_node(M->doc, p->key);
            if (!mech_is_scalar(k) || !mech_valid_name(mech_sc(k))) rc = err_at(M, k, "a force name must be a plain word");
            if (!rc) rc = mech_dup_key(M, &seen, n, p, "force");
            if (!rc) rc = mech_read_force(M, k, mech_node(M->doc, p->value));
        }
        mech_ns_free(&seen);
        if (rc) return rc;
    }
    if ((rc = copy_map(M, mech_get(M, root, "variables"), &M->src->variables, "variables", 1))) return rc;
    if ((rc = mech_check_con_texts(M))) return rc;
    if ((rc = copy_map(M, mech_get(M, root, "outputs"), &M->src->outputs, "outputs", 1))) return rc;
    if ((rc = read_linearize(M, mech_get(M, root, "linearize")))) return rc;
    if ((rc = held_velocities(M, mech_get(M, root, "velocities")))) return rc;
    if ((rc = mech_read_trim(M, mech_get(M, root, "trim")))) return rc; /* trim.c */
    if ((rc = mech_read_routines(M, mech_get(M, root, "routines")))) return rc; /* routines.c */
    int line, col;
    mech_pos_of(root, &line, &col);
    if (M->relative && (rc = mech_rel_kinematics(M))) return rc;
    int ncoord = M->src->coordinates.n, ncon = M->src->constraints.n;
    if (ncon > ncoord)
        return err_at(M, mech_get(M, root, "joints"),
                      "the joints over-constrain the mechanism: %d constraint equations for %d coordinates (Gruebler "
                      "count %d); replace redundant joints by weaker ones (e.g. a revolute closing a loop by a "
                      "universal or spherical joint)",
                      ncon, ncoord, ncoord - ncon);
    /* the drawing only when wanted: without it, the marker positions nothing else uses (spare
     * variables) are dropped too, with their parses, records and tapes (mbl_load_options.no_drawing:
     * the N = 2000 four-bar mechanism 1,944 -> 1,734 M instructions) */
    if (!M->src->no_drawing && (rc = emit_draw(M))) return rc;
    if ((rc = mech_energies_and_forces(M, line, col))) return rc;
    return mech_drop_spare_vars(M);
}

/* The drawing of the mechanism for the report (mbl_model_geometry): every body's origin (not
 * ground's) and every marker as a point with its global position texts, every two-marker joint
 * as a link between its markers' points. */
static int push_draw(mech *M, const char *name, const char *bname, char *const *p, int line, int col)
{
    for (int k = 0; k < 3; k++) {
        int rc = mech_push(M, &M->src->draw, name, p[k] ? p[k] : "0", line, col);
        if (rc) return rc;
        M->src->draw.items[M->src->draw.n - 1].key2 = mech_dup_s(bname);
        if (!M->src->draw.items[M->src->draw.n - 1].key2) return mech_oom(M);
    }
    return 0;
}

static int emit_draw(mech *M)
{
    int rc = 0;
    /* the markers of each body in index order, by a counting sort (a scan of every marker per
     * body was O(bodies x markers): 17 % of the N = 10^4 four-bar mechanism's run) */
    size_t nm1 = (size_t)(M->nm ? M->nm : 1);
    int *pt_of_marker = mbl_alloc_array(nm1, sizeof *pt_of_marker);
    int *by_body = mbl_alloc_array(nm1, sizeof *by_body);
    int *first = mbl_calloc((size_t)M->nb + 2, sizeof *first);
    if (!pt_of_marker || !by_body || !first) {
        mbl_free(pt_of_marker), mbl_free(by_body), mbl_free(first);
        return mech_oom(M);
    }
    for (int i = 0; i < M->nm; i++)
        if (M->mk[i].body >= 0 && M->mk[i].body < M->nb) first[M->mk[i].body + 2]++;
    for (int b = 0; b < M->nb; b++) first[b + 2] += first[b + 1];
    for (int i = 0; i < M->nm; i++) /* first[b + 1]: the fill cursor of body b */
        if (M->mk[i].body >= 0 && M->mk[i].body < M->nb) by_body[first[M->mk[i].body + 1]++] = i;
    for (int b = 0; b < M->nb && !rc; b++) {
        const body *B = &M->b[b];
        if (B->kind != KIND_GROUND) rc = push_draw(M, B->name, B->name, B->r, B->line, B->col);
        for (int t = first[b]; t < first[b + 1] && !rc; t++) {
            int i = by_body[t];
            pt_of_marker[i] = M->src->draw.n / 3;
            rc = push_draw(M, M->mk[i].name, B->name, mech_mk_p(M, i), M->mk[i].line, M->mk[i].col);
        }
    }
    for (int j = 0; j < M->nj && !rc; j++) {
        const joint *J = &M->jt[j];
        if (J->i < 0 || J->j < 0) continue;
        rc = mech_push(M, &M->src->draw_links, J->name, mech_fmt(M, "%d %d", pt_of_marker[J->i], pt_of_marker[J->j]),
                       J->line, J->col);
        if (!rc && !(M->src->draw_links.items[M->src->draw_links.n - 1].key2 = mech_dup_s(J->type))) rc = mech_oom(M);
    }
    mbl_free(pt_of_marker), mbl_free(by_body), mbl_free(first);
    return rc;
}

int mech_read(yaml_document_t *doc, const yaml_node_t *root, const char *file, const mbl_setting *sets, int nsets,
              mbl_src *src, mbl_status *st)
{
    mech M;
    memset(&M, 0, sizeof M);
    M.sets = sets;
    M.nsets = sets ? nsets : 0;
    M.used_set = -1;
    M.doc = doc;
    M.file = file;
    M.src = src;
    M.st = st;
    /* the coordinates' and constraint rows' texts in the source's blocks (mbl_src_list.blocks) */
    if (!src->coordinates.n) src->coordinates.blocks = 1;
    if (!src->constraints.n) src->constraints.blocks = 1;
    M.g = mblx_graph_new();
    int rc = M.g ? read_all(&M, root) : mech_oom(&M);
    if (!rc && M.oom) rc = mech_oom(&M);
    for (int i = 0; i < M.narena; i++) mbl_free(M.arena[i]);
    mbl_free(M.arena);
    mbl_free(M.pval);
    mbl_free(M.pset);
    mbl_free(M.drv);
    mbl_free(M.b);
    mbl_free(M.mk);
    mbl_free(M.jt);
    mbl_free(M.torder);
    mbl_free(M.spare);
    mbl_free(M.vseq);
    mbl_free(M.rot);
    mech_ns_free(&M.hb);
    mech_ns_free(&M.hm);
    mech_ns_free(&M.hj);
    mech_ns_free(&M.hpt);
    mech_ns_free(&M.hev);
    mbl_free(M.ev);
    mech_ns_free(&M.hnp);
    mbl_free(M.npt);
    mblx_graph_free(M.g);
    return rc;
}
