/* Reading a `model: dae` file with libyaml's document API into an mbl_src (src/load reads the
 * file and dispatches on its `model:` kind; the mechanism and URDF readers are in src/mech). */
#include "model/source.h"
#include "model/text_blocks.h"
#include "model/symbols_index.h"
#include "model/data.h"
#include "model/ffr.h"
#include "model/rtree.h"
#include "model/pmech_num.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct reader {
    yaml_document_t *doc;
    const char *file;
    mbl_src *src;
    mbl_status *st;
    const yaml_node_t *mm_rows; /* a mass_matrix given as a list of rows, read once the coordinates are */
    const yaml_node_t *f_list;  /* forces given as a list (one per coordinate), the same */
} reader;

static char *dup_n(const char *s, size_t n)
{
    char *p = mbl_malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int model_yaml_error(mbl_status *st, int code, const char *file, const yaml_node_t *node, const char *fmt, ...)
{
    char what[MBL_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (node)
        return mbl_error(st, code, "%s:%lu:%lu: %s", file, (unsigned long)node->start_mark.line + 1,
                         (unsigned long)node->start_mark.column + 1, what);
    return mbl_error(st, code, "%s: %s", file, what);
}

#define err_at(r, node, code, ...) model_yaml_error((r)->st, (code), (r)->file, (node), __VA_ARGS__)

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

/* position of a scalar's first text character: skip the opening quote of quoted styles */
static void text_pos(const yaml_node_t *n, int *line, int *col)
{
    *line = (int)n->start_mark.line + 1;
    *col = (int)n->start_mark.column + 1;
    if (n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                                        n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        (*col)++;
}

/* The text of scalar node n for an item: taken from the document where take and the text is
 * libyaml's own (a long one: yaml_doc.c; the node then has none), else copied.
 * The lists of a model are most of its scalars: at N = 10^4 the four-bar's 80,023 were each
 * copied, and the document's freed when it was deleted (30 M instructions of 4,123 M). */
static char *scalar_text(yaml_node_t *n, int take)
{
    char *s = (char *)n->data.scalar.value;
    if (!take || n->data.scalar.length < MODEL_YAML_SHORT_TEXT || s[n->data.scalar.length] != '\0')
        return dup_n(scalar(n), n->data.scalar.length);
    n->data.scalar.value = NULL;
    return s;
}

/* An item of l: key (or none), key2 (or none) and the value's text; take: the key's and the
 * value's texts taken from their nodes (scalar_text), which nothing reads again (not the
 * mass matrix's row keys, one node for each entry of the row). */
static int list_push(reader *r, mbl_src_list *l, yaml_node_t *key, const char *key2, yaml_node_t *val, int take)
{
    if (val->type != YAML_SCALAR_NODE)
        return err_at(r, val, MBL_EMODEL, "expected an expression or a number, found %s", node_kind(val));
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        mbl_src_item *it = mbl_realloc_array(l->items, (size_t)cap, sizeof *it);
        if (!it) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
        l->items = it;
        l->cap = cap;
    }
    mbl_src_item *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    l->n++;
    if (key) {
        it->key = scalar_text(key, take);
        it->key_line = (int)key->start_mark.line + 1;
        it->key_col = (int)key->start_mark.column + 1;
        if (!it->key) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    } else {
        it->key_line = (int)val->start_mark.line + 1;
        it->key_col = (int)val->start_mark.column + 1;
    }
    if (key2) {
        it->key2 = dup_n(key2, strlen(key2));
        if (!it->key2) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    }
    it->text = scalar_text(val, take);
    if (!it->text) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    text_pos(val, &it->line, &it->col);
    return 0;
}

static int set_single(reader *r, mbl_src_item *it, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type != YAML_SCALAR_NODE)
        return err_at(r, val, MBL_EMODEL, "'%s' must be an expression, found %s", scalar(key), node_kind(val));
    it->text = dup_n(scalar(val), val->data.scalar.length);
    if (!it->text) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    it->key_line = (int)key->start_mark.line + 1;
    it->key_col = (int)key->start_mark.column + 1;
    text_pos(val, &it->line, &it->col);
    return 0;
}

static _Thread_local const mbl_src_list *sort_list; /* qsort has no context argument in C11 */
static int cmp_key_index(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int c = strcmp(sort_list->items[i].key, sort_list->items[j].key);
    return c ? c : i - j;
}

/* 1 when two keys of l are the same, 0 when none, -1 when out of memory: one hash probe a key
 * (the sort below took 17 M instructions for the N = 10^4 four-bar's 20,003 coordinates). */
static int has_duplicate(const mbl_src_list *l)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)l->n) cap *= 2;
    uint32_t *slot = mbl_calloc(cap, sizeof *slot); /* item index + 1, 0 empty */
    if (!slot) return -1;
    int dup = 0;
    for (int i = 0; i < l->n && !dup; i++) {
        const char *k = l->items[i].key;
        size_t h = (size_t)model_name_hash(k, strlen(k)) & (cap - 1);
        while (slot[h] && !(dup = !strcmp(l->items[slot[h] - 1].key, k))) h = (h + 1) & (cap - 1);
        slot[h] = (uint32_t)i + 1;
    }
    mbl_free(slot);
    return dup;
}

/* Keys of a mapping must be unique: a hash check; when two are the same, the sorted check,
 * O(n log n), names the pair (the first duplicate name in sorted order). */
static int check_unique(reader *r, const mbl_src_list *l, const char *what)
{
    if (l->n < 2) return 0;
    if (has_duplicate(l) == 0) return 0;
    int *ix = mbl_alloc_array((size_t)l->n, sizeof *ix);
    if (!ix) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    for (int i = 0; i < l->n; i++) ix[i] = i;
    sort_list = l;
    qsort(ix, (size_t)l->n, sizeof *ix, cmp_key_index);
    int rc = 0;
    for (int i = 1; i < l->n && !rc; i++)
        if (!strcmp(l->items[ix[i - 1]].key, l->items[ix[i]].key)) {
            const mbl_src_item *first = &l->items[ix[i - 1]], *dup = &l->items[ix[i]];
            rc = mbl_error(r->st, MBL_EMODEL, "%s:%d:%d: duplicate name '%s' in '%s' (first at line %d)", r->file,
                           dup->key_line, dup->key_col, dup->key, what, first->key_line);
        }
    mbl_free(ix);
    return rc;
}

/* A mapping name -> scalar. Keys must be unique scalars. */
static int read_map(reader *r, mbl_src_list *l, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0) return 0; /* key: (empty) */
    if (val->type != YAML_MAPPING_NODE)
        return err_at(r, val, MBL_EMODEL, "'%s' must be a mapping of name: value, found %s", scalar(key),
                      node_kind(val));
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        if (k->type != YAML_SCALAR_NODE || k->data.scalar.length == 0)
            return err_at(r, k, MBL_EMODEL, "in '%s': a name must be a plain word", scalar(key));
        int rc = list_push(r, l, k, NULL, v, 1);
        if (rc) return rc;
    }
    return check_unique(r, l, scalar(key));
}

/* A list of scalars (an empty mapping `{}` or an empty scalar is accepted as empty). */
static int read_seq(reader *r, mbl_src_list *l, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0) return 0;
    if (val->type == YAML_MAPPING_NODE && val->data.mapping.pairs.start == val->data.mapping.pairs.top) return 0;
    if (val->type != YAML_SEQUENCE_NODE)
        return err_at(r, val, MBL_EMODEL, "'%s' must be a list, found %s", scalar(key), node_kind(val));
    for (yaml_node_item_t *p = val->data.sequence.items.start; p < val->data.sequence.items.top; p++) {
        int rc = list_push(r, l, NULL, NULL, yaml_document_get_node(r->doc, *p), 1);
        if (rc) return rc;
    }
    return 0;
}

/* Constraints: a list of equations, or a mapping {name: equation} whose names lambda(name) and
 * mu(name) may use in outputs (*named = 1). */
static int read_cons(reader *r, mbl_src_list *l, const yaml_node_t *key, const yaml_node_t *val, int *named)
{
    if (val->type != YAML_MAPPING_NODE || val->data.mapping.pairs.start == val->data.mapping.pairs.top)
        return read_seq(r, l, key, val);
    *named = 1;
    return read_map(r, l, key, val);
}

/* The n entries of seq (n coordinates, in the order of `coordinates:`), each not "0" an item of l:
 * keyed by its coordinate (row < 0), or by coordinate row with its coordinate as key2 */
static int coordinate_entries(reader *r, mbl_src_list *l, const yaml_node_t *seq, int row)
{
    const mbl_src_list *q = &r->src->coordinates;
    for (int j = 0; j < q->n; j++) {
        yaml_node_t *e = yaml_document_get_node(r->doc, seq->data.sequence.items.start[j]);
        if (e->type == YAML_SCALAR_NODE && !strcmp(scalar(e), "0")) continue;
        const char *key = q->items[row < 0 ? j : row].key;
        int rc = list_push(r, l, NULL, row < 0 ? NULL : q->items[j].key, e, 0);
        if (rc) return rc;
        mbl_src_item *it = &l->items[l->n - 1];
        if (!(it->key = dup_n(key, strlen(key)))) return mbl_error(r->st, MBL_ENOMEM, "out of memory reading %s", r->file);
    }
    return 0;
}

/* the number of entries of a list node, -1 for another node */
static int seq_count(const yaml_node_t *n)
{
    return n->type == YAML_SEQUENCE_NODE ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
}

/* mass_matrix as a list of n rows of n expressions (n coordinates, in the order of `coordinates:`,
 * as MATLAB writes a matrix): both triangles given, so that the formulation checks they are the
 * same expression */
static int read_mass_rows(reader *r)
{
    const yaml_node_t *val = r->mm_rows;
    const mbl_src_list *q = &r->src->coordinates;
    int n = q->n, nr = seq_count(val);
    if (nr != n)
        return err_at(r, val, MBL_EMODEL,
                      "'mass_matrix' as a list must have one row per coordinate (%d, in the order of 'coordinates'), "
                      "found %d",
                      n, nr);
    for (int i = 0; i < n; i++) {
        yaml_node_t *row = yaml_document_get_node(r->doc, val->data.sequence.items.start[i]);
        int nc = seq_count(row), rc;
        if (nc < 0)
            return err_at(r, row, MBL_EMODEL, "mass_matrix row %d (coordinate '%s') must be a list of %d expressions, found %s",
                          i + 1, q->items[i].key, n, node_kind(row));
        if (nc != n)
            return err_at(r, row, MBL_EMODEL, "mass_matrix row %d (coordinate '%s') must be a list of %d expressions, found %d",
                          i + 1, q->items[i].key, n, nc);
        if ((rc = coordinate_entries(r, &r->src->mass_matrix, row, i))) return rc;
    }
    return 0;
}

/* forces as a list of n expressions, Q_i in the order of `coordinates:`, keyed as the mapping's */
static int read_force_list(reader *r)
{
    int n = r->src->coordinates.n, nf = seq_count(r->f_list);
    if (nf != n)
        return err_at(r, r->f_list, MBL_EMODEL,
                      "'forces' as a list must have one expression per coordinate (%d, in the order of 'coordinates'), "
                      "found %d",
                      n, nf);
    return coordinate_entries(r, &r->src->forces, r->f_list, -1);
}

static int read_mass_matrix(reader *r, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type == YAML_SEQUENCE_NODE) { /* rows, read after the coordinates (read_mass_rows) */
        r->mm_rows = val;
        r->src->has_mass_matrix = 1;
        return 0;
    }
    if (val->type != YAML_MAPPING_NODE)
        return err_at(r, val, MBL_EMODEL,
                      "'mass_matrix' must be a mapping {row: {col: expr}} or a list of rows [[expr, ...], ...], found %s",
                      node_kind(val));
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
        yaml_node_t *rk = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *rv = yaml_document_get_node(r->doc, p->value);
        if (rk->type != YAML_SCALAR_NODE) return err_at(r, rk, MBL_EMODEL, "mass_matrix row must be a coordinate name");
        if (rv->type != YAML_MAPPING_NODE)
            return err_at(r, rv, MBL_EMODEL, "mass_matrix row '%s' must be a mapping {col: expr}", scalar(rk));
        for (yaml_node_pair_t *q = rv->data.mapping.pairs.start; q < rv->data.mapping.pairs.top; q++) {
            yaml_node_t *ck = yaml_document_get_node(r->doc, q->key);
            yaml_node_t *cv = yaml_document_get_node(r->doc, q->value);
            if (ck->type != YAML_SCALAR_NODE)
                return err_at(r, ck, MBL_EMODEL, "mass_matrix column must be a coordinate name");
            for (int i = 0; i < r->src->mass_matrix.n; i++) {
                mbl_src_item *it = &r->src->mass_matrix.items[i];
                if (!strcmp(it->key, scalar(rk)) && !strcmp(it->key2, scalar(ck)))
                    return err_at(r, ck, MBL_EMODEL, "duplicate mass_matrix entry (%s, %s)", scalar(rk), scalar(ck));
            }
            int rc = list_push(r, &r->src->mass_matrix, rk, scalar(ck), cv, 0);
            if (rc) return rc;
            /* the position of the key is the column key's, more useful in messages */
            mbl_src_item *it = &r->src->mass_matrix.items[r->src->mass_matrix.n - 1];
            it->key_line = (int)ck->start_mark.line + 1;
            it->key_col = (int)ck->start_mark.column + 1;
        }
    }
    (void)key;
    r->src->has_mass_matrix = 1;
    return 0;
}

/* linearize.penalty_Xi, _Theta, _Omega (i = 0, 1, 2): a list of numbers (a diagonal) or a list of R
 * lists of R numbers (a full matrix, row by row); their count against the model's constraints is
 * checked when the model is loaded (src/model/symbols.c) */
static int read_pen_matrix(reader *r, int i, const yaml_node_t *k, const yaml_node_t *v)
{
    static const char *what[3] = {"penalty_Xi", "penalty_Theta", "penalty_Omega"};
    mbl_src *s = r->src;
    s->pen_mat_line[i] = (int)k->start_mark.line + 1, s->pen_mat_col[i] = (int)k->start_mark.column + 1;
    yaml_node_item_t *p0 = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
    int nrow = p0 ? (int)(v->data.sequence.items.top - p0) : 0;
    if (!nrow)
        return err_at(r, v, MBL_EMODEL, "linearize.%s must be a list of numbers (a diagonal, one per constraint) or "
                      "a list of lists (the full matrix, row by row), found %s", what[i], node_kind(v));
    int full = yaml_document_get_node(r->doc, *p0)->type == YAML_SEQUENCE_NODE;
    s->pen_mat_rows[i] = full ? nrow : -1;
    for (yaml_node_item_t *p = p0; p < v->data.sequence.items.top; p++) {
        yaml_node_t *row = yaml_document_get_node(r->doc, *p);
        if (!full) {
            int rc = list_push(r, &s->pen_mat[i], NULL, NULL, row, 1);
            if (rc) return rc;
            continue;
        }
        yaml_node_item_t *q0 = row->type == YAML_SEQUENCE_NODE ? row->data.sequence.items.start : NULL;
        if (!q0 || (int)(row->data.sequence.items.top - q0) != nrow)
            return err_at(r, row, MBL_EMODEL, "linearize.%s: row %d must be a list of %d numbers (the matrix is "
                          "square, %d rows)", what[i], (int)(p - p0) + 1, nrow, nrow);
        for (yaml_node_item_t *q = q0; q < row->data.sequence.items.top; q++) {
            int rc = list_push(r, &s->pen_mat[i], NULL, NULL, yaml_document_get_node(r->doc, *q), 1);
            if (rc) return rc;
        }
    }
    return 0;
}

static int read_linearize(reader *r, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type != YAML_MAPPING_NODE)
        return err_at(r, val, MBL_EMODEL, "'linearize' must be a mapping, found %s", node_kind(val));
    static const char *names[] = {"at", "states", "velocity_states", "time", "penalty_alpha", "penalty_xi",
                                  "penalty_omega", "penalty_Xi", "penalty_Theta", "penalty_Omega"};
    enum { NNAMES = sizeof names / sizeof *names };
    int seen[NNAMES] = {0};
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        const char *ks = k->type == YAML_SCALAR_NODE ? scalar(k) : "";
        int which = -1;
        for (int i = 0; i < NNAMES; i++)
            if (!strcmp(ks, names[i])) which = i;
        if (which < 0)
            return err_at(r, k, MBL_EMODEL,
                          "unknown key '%s' in 'linearize' (expected at, states, velocity_states, time, penalty_alpha, "
                          "penalty_xi, penalty_omega, penalty_Xi, penalty_Theta, penalty_Omega)", ks);
        if (seen[which]++) return err_at(r, k, MBL_EMODEL, "duplicate key '%s' in 'linearize'", ks);
        int rc = 0;
        switch (which) {
        case 0: rc = set_single(r, &r->src->at, k, v); break;
        case 1: rc = read_seq(r, &r->src->states, k, v); break;
        case 2: rc = read_seq(r, &r->src->velocity_states, k, v); break;
        case 3: rc = set_single(r, &r->src->time, k, v); break;
        case 4: rc = set_single(r, &r->src->pen_alpha, k, v); break;
        case 5: rc = set_single(r, &r->src->pen_xi, k, v); break;
        case 6: rc = set_single(r, &r->src->pen_omega, k, v); break;
        default: rc = read_pen_matrix(r, which - 7, k, v); break;
        }
        if (rc) return rc;
    }
    (void)key;
    return 0;
}

/* trim: {targets: {expr: value}, free: [input, ...], accelerations: {coordinate: expr}} */
static int read_trim(reader *r, const yaml_node_t *key, const yaml_node_t *val)
{
    if (val->type != YAML_MAPPING_NODE)
        return err_at(r, val, MBL_EMODEL, "'trim' must be a mapping, found %s", node_kind(val));
    int seen[3] = {0};
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        const char *ks = k->type == YAML_SCALAR_NODE ? scalar(k) : "";
        static const char *names[3] = {"targets", "free", "accelerations"};
        int which = -1;
        for (int i = 0; i < 3; i++)
            if (!strcmp(ks, names[i])) which = i;
        if (which < 0)
            return err_at(r, k, MBL_EMODEL, "unknown key '%s' in 'trim' (expected targets, free, accelerations)", ks);
        if (seen[which]++) return err_at(r, k, MBL_EMODEL, "duplicate key '%s' in 'trim'", ks);
        int rc = which == 0 ? read_map(r, &r->src->trim_targets, k, v)
                 : which == 1 ? read_seq(r, &r->src->trim_free, k, v)
                              : read_map(r, &r->src->trim_acc, k, v);
        if (rc) return rc;
    }
    if (!r->src->trim_targets.n) return err_at(r, key, MBL_EMODEL, "'trim' needs 'targets' (expression: value)");
    return 0;
}

enum { K_MODEL, K_NAME, K_PARAMS, K_COORDS, K_VELS, K_VARS, K_KE, K_MM, K_PE, K_FORCES, K_DISS, K_INPUTS,
       K_OUTPUTS, K_CONS, K_NH, K_LIN, K_ODES, K_ODE, K_IVARS, K_SPIN, K_DATA, K_TRIM, K_ROUTINES, K_COUNT };
static const char *top_keys[K_COUNT] = {"model", "name", "parameters", "coordinates", "velocities",
                                        "variables", "kinetic_energy", "mass_matrix", "potential_energy",
                                        "forces", "dissipation", "inputs", "outputs", "constraints",
                                        "nonholonomic", "linearize", "ode_states", "ode", "implicit_variables",
                                        "spin_speeds", "data", "trim", "routines"};

static int read_root(reader *r, const yaml_node_t *root)
{
    if (!root) return err_at(r, NULL, MBL_EMODEL, "the file is empty (expected a mapping with 'model: dae')");
    if (root->type != YAML_MAPPING_NODE)
        return err_at(r, root, MBL_EMODEL, "the file must be a mapping with 'model: dae', found %s",
                      node_kind(root));
    const yaml_node_t *seen[K_COUNT] = {0};
    int order[K_COUNT] = {0}, nkeys = 0; /* the keys' K_* in the file's order (each at most once) */
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        if (k->type != YAML_SCALAR_NODE) return err_at(r, k, MBL_EMODEL, "keys must be plain words");
        int which = -1;
        for (int i = 0; i < K_COUNT && which < 0; i++) /* the names are distinct: the first match */
            if (!strcmp(scalar(k), top_keys[i])) which = i;
        if (which < 0)
            return err_at(r, k, MBL_EMODEL,
                          "unknown key '%s' (expected one of model, name, parameters, coordinates, velocities, "
                          "variables, kinetic_energy, mass_matrix, potential_energy, forces, dissipation, inputs, "
                          "outputs, constraints, nonholonomic, linearize, ode_states, ode, implicit_variables, spin_speeds, data, trim, routines)",
                          scalar(k));
        if (seen[which])
            return err_at(r, k, MBL_EMODEL, "duplicate key '%s' (first at line %lu)", scalar(k),
                          (unsigned long)seen[which]->start_mark.line + 1);
        seen[which] = k;
        order[nkeys++] = which;
    }
    if (!seen[K_MODEL]) return err_at(r, root, MBL_EMODEL, "missing key 'model' (expected 'model: dae')");

    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        int which = order[p - root->data.mapping.pairs.start];
        int rc = 0;
        mbl_src *s = r->src;
        switch (which) {
        case K_MODEL:
            if (v->type != YAML_SCALAR_NODE) return err_at(r, v, MBL_EMODEL, "'model' must be 'dae'");
            if (strcmp(scalar(v), "dae"))
                return err_at(r, v, MBL_EMODEL, "unknown model kind '%s' (expected 'dae', 'mechanism' or 'urdf')", scalar(v));
            break;
        case K_NAME:
            if (v->type != YAML_SCALAR_NODE) return err_at(r, v, MBL_EMODEL, "'name' must be text");
            mbl_free(s->name);
            s->name = dup_n(scalar(v), v->data.scalar.length);
            if (!s->name) return mbl_error(r->st, MBL_ENOMEM, "out of memory");
            break;
        case K_PARAMS: rc = read_map(r, &s->parameters, k, v); break;
        case K_SPIN: rc = read_map(r, &s->spin_speeds, k, v); break;
        case K_COORDS: rc = read_map(r, &s->coordinates, k, v); break;
        case K_VELS: rc = read_map(r, &s->velocities, k, v); break;
        case K_VARS: rc = read_map(r, &s->variables, k, v); break;
        case K_KE: rc = set_single(r, &s->kinetic_energy, k, v); break;
        case K_MM: rc = read_mass_matrix(r, k, v); break;
        case K_PE: rc = set_single(r, &s->potential_energy, k, v); break;
        case K_FORCES: /* a list: read once the coordinates are (read_force_list) */
            if (v->type == YAML_SEQUENCE_NODE) r->f_list = v;
            else rc = read_map(r, &s->forces, k, v);
            break;
        case K_DISS: rc = set_single(r, &s->dissipation, k, v); break;
        case K_INPUTS: rc = read_map(r, &s->inputs, k, v); break;
        case K_OUTPUTS: rc = read_map(r, &s->outputs, k, v); break;
        case K_CONS: rc = read_cons(r, &s->constraints, k, v, &s->named_constraints); break;
        case K_NH: rc = read_cons(r, &s->nonholonomic, k, v, &s->named_nonholonomic); break;
        case K_LIN: rc = read_linearize(r, k, v); break;
        case K_ODES: rc = read_map(r, &s->ode_states, k, v); break;
        case K_ODE: rc = read_map(r, &s->ode, k, v); break;
        case K_IVARS: rc = read_map(r, &s->implicit_variables, k, v); break;
        case K_DATA: rc = model_data_read(r->doc, v, r->file, s->mem_budget, &s->data, &s->ndata, r->st); break;
        case K_TRIM: rc = read_trim(r, k, v); break;
        case K_ROUTINES: rc = model_src_read_routines(r->file, r->doc, v, s, r->st); break;
        }
        if (rc) return rc;
    }
    if (seen[K_KE] && seen[K_MM])
        return err_at(r, seen[K_MM], MBL_EMODEL, "give either 'kinetic_energy' or 'mass_matrix', not both");
    if (!seen[K_KE] && !seen[K_MM])
        return err_at(r, root, MBL_EMODEL, "missing 'kinetic_energy' (or 'mass_matrix')");
    if (!seen[K_COORDS] || r->src->coordinates.n == 0)
        return err_at(r, seen[K_COORDS] ? seen[K_COORDS] : root, MBL_EMODEL, "the model has no coordinates");
    int rc = r->mm_rows ? read_mass_rows(r) : 0;
    return !rc && r->f_list ? read_force_list(r) : rc;
}

mbl_src *model_src_new(const char *file)
{
    mbl_src *s = mbl_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->file = dup_n(file, strlen(file));
    s->name = dup_n("", 0);
    if (!s->file || !s->name) {
        model_src_free(s);
        return NULL;
    }
    return s;
}

int model_src_read_dae(yaml_document_t *doc, const yaml_node_t *root, mbl_src *src, mbl_status *st)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.doc = doc;
    r.file = src->file;
    r.src = src;
    r.st = st;
    return read_root(&r, root);
}

static void list_free(mbl_src_list *l)
{
    for (int i = 0; i < l->n; i++) {
        if (!l->blocks) {
            mbl_free(l->items[i].key);
            mbl_free(l->items[i].text);
        }
        mbl_free(l->items[i].key2);
    }
    mbl_free(l->items);
}

/* ---- routines: {name: {library:, routine:, inputs: [...], outputs: [...], partials:}} (docs/user-routines.md) ---- */

#define rerr(file, st, node, ...) model_yaml_error((st), MBL_EMODEL, (file), (node), __VA_ARGS__)

static int src_push(yaml_document_t *doc, const char *file, mbl_status *st, mbl_src_list *l, yaml_node_t *key,
                    yaml_node_t *val)
{
    reader r = {doc, file, NULL, st, NULL, NULL};
    return list_push(&r, l, key, NULL, val, 0);
}



static int is_name(const char *s)
{
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) return 0;
    return 1;
}

/* yes/no (true/false, on/off) of scalar v: 1, 0, or -1 */
static int yes_no(const yaml_node_t *v)
{
    if (v->type != YAML_SCALAR_NODE) return -1;
    static const char *yes[] = {"yes", "true", "on", "Yes", "True", "On", "YES", "TRUE", "ON"};
    static const char *no[] = {"no", "false", "off", "No", "False", "Off", "NO", "FALSE", "OFF"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (!strcmp(scalar(v), yes[i])) return 1;
        if (!strcmp(scalar(v), no[i])) return 0;
    }
    return -1;
}

static char *dup_scalar(const yaml_node_t *v) { return dup_n(scalar(v), v->data.scalar.length); }

/* One entry `name: {library:, routine:, inputs: [...], outputs: [...], partials:}` into *r. */
static int read_one(const char *file, yaml_document_t *doc, yaml_node_t *k, yaml_node_t *v, mbl_src_routine *r,
                    mbl_status *st)
{
    r->line = (int)k->start_mark.line + 1, r->col = (int)k->start_mark.column + 1;
    if (k->type != YAML_SCALAR_NODE || !is_name(scalar(k)))
        return rerr(file, st, k, "a routine's name must be a plain word (letters, digits, _)");
    if (!(r->name = dup_scalar(k))) return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", file);
    if (v->type != YAML_MAPPING_NODE)
        return rerr(file, st, v, "routine '%s' must be a mapping {library:, routine:, inputs: [...], outputs: [...], "
                                   "partials:}", r->name);
    const yaml_node_t *seen[5] = {0};
    static const char *keys[5] = {"library", "routine", "inputs", "outputs", "partials"};
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *kk = yaml_document_get_node(doc, p->key), *vv = yaml_document_get_node(doc, p->value);
        int w = -1;
        for (int i = 0; i < 5 && kk->type == YAML_SCALAR_NODE; i++)
            if (!strcmp(scalar(kk), keys[i])) w = i;
        if (w < 0)
            return rerr(file, st, kk, "routine '%s': unknown key '%s' (expected library, routine, inputs, outputs, "
                                        "partials)", r->name, kk->type == YAML_SCALAR_NODE ? scalar(kk) : "?");
        if (seen[w]) return rerr(file, st, kk, "routine '%s': duplicate key '%s'", r->name, keys[w]);
        seen[w] = kk;
        int rc = 0;
        switch (w) {
        case 0:
        case 1:
            if (vv->type != YAML_SCALAR_NODE || !vv->data.scalar.length)
                return rerr(file, st, vv, "routine '%s': '%s' must be %s", r->name, keys[w],
                              w ? "the routine's function name" : "a file name (a shared library)");
            if (w == 1 && !is_name(scalar(vv)))
                return rerr(file, st, vv, "routine '%s': '%s' is not a C function name", r->name, scalar(vv));
            if (!(*(w ? &r->symbol : &r->library) = dup_scalar(vv))) return mbl_error(st, MBL_ENOMEM, "out of memory");
            if (!w) r->lib_line = (int)vv->start_mark.line + 1, r->lib_col = (int)vv->start_mark.column + 1;
            break;
        case 2:
        case 3:
            if (vv->type != YAML_SEQUENCE_NODE || vv->data.sequence.items.start == vv->data.sequence.items.top)
                return rerr(file, st, vv, "routine '%s': '%s' must be a non-empty list (of %s)", r->name, keys[w],
                              w == 2 ? "expressions" : "names");
            for (yaml_node_item_t *q = vv->data.sequence.items.start; q < vv->data.sequence.items.top && !rc; q++) {
                yaml_node_t *e = yaml_document_get_node(doc, *q);
                if (w == 3 && (e->type != YAML_SCALAR_NODE || !is_name(scalar(e))))
                    return rerr(file, st, e, "routine '%s': an output must be a name (letters, digits, _)", r->name);
                rc = src_push(doc, file, st, w == 2 ? &r->inputs : &r->outputs, w == 3 ? e : NULL, e);
            }
            if (!rc && (w == 2 ? r->inputs.n : r->outputs.n) > MBLX_USER_MAX_IO)
                return rerr(file, st, vv, "routine '%s': more than %d %s", r->name, MBLX_USER_MAX_IO, keys[w]);
            break;
        case 4:
            if ((r->partials = yes_no(vv)) < 0)
                return rerr(file, st, vv, "routine '%s': 'partials' must be yes or no", r->name);
            break;
        }
        if (rc) return rc;
    }
    if (!seen[2]) return rerr(file, st, v, "routine '%s': missing 'inputs' (a list of expressions)", r->name);
    if (!seen[3]) return rerr(file, st, v, "routine '%s': missing 'outputs' (a list of names)", r->name);
    for (int i = 0; i < r->outputs.n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(r->outputs.items[i].key, r->outputs.items[j].key))
                return mbl_error(st, MBL_EMODEL, "%s:%d:%d: routine '%s': output '%s' named twice", file,
                                 r->outputs.items[i].line, r->outputs.items[i].col, r->name, r->outputs.items[i].key);
    if (!r->symbol && !(r->symbol = dup_n(r->name, strlen(r->name)))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

int model_src_read_routines(const char *file, yaml_document_t *doc, const yaml_node_t *node, mbl_src *src,
                            mbl_status *st)
{
    if (node->type == YAML_SCALAR_NODE && node->data.scalar.length == 0) return 0;
    if (node->type != YAML_MAPPING_NODE)
        return rerr(file, st, node, "'routines' must be a mapping {name: {library:, routine:, inputs:, outputs:}}");
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    if (src->routines) return rerr(file, st, node, "duplicate 'routines'");
    if (!(src->routines = mbl_calloc(n + 1, sizeof *src->routines))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
        mbl_src_routine *r = &src->routines[src->nroutines++];
        int rc = read_one(file, doc, yaml_document_get_node(doc, p->key), yaml_document_get_node(doc, p->value), r, st);
        if (rc) return rc;
        for (int j = 0; j < src->nroutines - 1; j++)
            if (!strcmp(src->routines[j].name, r->name))
                return mbl_error(st, MBL_EMODEL, "%s:%d:%d: routine '%s' defined twice (first at line %d)", file, r->line,
                                 r->col, r->name, src->routines[j].line);
    }
    return 0;
}

static void model_src_routines_free(mbl_src *src)
{
    for (int i = 0; i < src->nroutines; i++) {
        mbl_src_routine *r = &src->routines[i];
        mbl_free(r->name), mbl_free(r->library), mbl_free(r->symbol);
        list_free(&r->inputs);
        list_free(&r->outputs);
    }
    mbl_free(src->routines);
    src->routines = NULL;
    src->nroutines = 0;
}


/* Frees the lists of s (the mass matrix's too when all) and the texts of its single items. */
static void lists_free(mbl_src *s, int all)
{
    model_name_index_forget(s);
    mbl_src_list *lists[] = {&s->parameters, &s->coordinates, &s->velocities, &s->held_velocities, &s->held_body_velocities, &s->variables, &s->forces,
                             &s->inputs, &s->outputs, &s->constraints, &s->nonholonomic,
                             &s->states, &s->velocity_states, &s->ode_states, &s->ode, &s->implicit_variables,
                             &s->draw, &s->draw_links, &s->kinematics, &s->rigid_frames, &s->validity, &s->singular, &s->spin_speeds,
                             &s->trim_targets, &s->trim_free, &s->trim_acc, &s->mass_matrix};
    size_t n = sizeof lists / sizeof *lists - !all;
    for (size_t i = 0; i < n; i++) {
        list_free(lists[i]);
        memset(lists[i], 0, sizeof *lists[i]);
    }
    for (int i = 0; i < 3; i++) { /* linearize.penalty_Xi, _Theta, _Omega */
        list_free(&s->pen_mat[i]);
        memset(&s->pen_mat[i], 0, sizeof s->pen_mat[i]);
        s->pen_mat_rows[i] = 0; /* evaluated into the model already (model_load_values) */
    }
    for (int i = 0; i < s->mass_matrix.n; i++) { /* what stays of it: keys and positions */
        mbl_free(s->mass_matrix.items[i].text);
        s->mass_matrix.items[i].text = NULL;
    }
    mbl_src_item *single[] = {&s->kinetic_energy, &s->potential_energy, &s->dissipation, &s->at, &s->time,
                              &s->pen_alpha, &s->pen_xi, &s->pen_omega};
    for (size_t i = 0; i < sizeof single / sizeof *single; i++) {
        mbl_free(single[i]->text);
        single[i]->text = NULL;
    }
}

void model_src_drop_parsed(mbl_src *s) { lists_free(s, 0); }

void model_src_free(mbl_src *s)
{
    if (!s) return;
    lists_free(s, 1);
    model_data_free(s->data, s->ndata);
    model_src_routines_free(s);
    for (int i = 0; i < s->nffr; i++) model_ffr_body_free(&s->ffr[i]);
    mbl_free(s->ffr);
    model_rtree_free(s->rtree);
    mbl_free(s->rtree);
    model_pmech_src_free(s->pmech);
    mbl_free(s->pmech);
    model_blocks_free(&s->item_blocks);
    mbl_free(s->file);
    mbl_free(s->name);
    mbl_free(s->no_sens);
    mbl_free(s->param_numeric);
    mbl_free(s->param_evaluated);
    mbl_free(s);
}
