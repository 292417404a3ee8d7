/* The file's user routines (`routines:`; docs/user-routines.md, include/mblin/user.h): read from
 * YAML, their functions found (a shared library the user allowed, or a routine the calling program
 * gave), registered in the model's graph (mblx_user_add) and their outputs resolved as names.
 *
 * An output is a variable of the model whose node is the routine's output at its input
 * expressions (mblx_user_call): model_routines_take appends one variable per output to the
 * source's variables (key the output's name, key2 what it is, text the routine's name, never
 * parsed), so that the names' checks, the resolver's cycles and the formulation's lets treat them
 * as the file's variables; model_parse_variable builds either kind. */
#define _GNU_SOURCE /* (dlfcn.h's RTLD_* under C11) */
#include "model/formulate.h"
#include "model/routines.h"

#include <dlfcn.h>
#include <yaml.h>

#define err_at(file, st, node, ...) model_yaml_error((st), MBL_EMODEL, (file), (node), __VA_ARGS__)

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

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

static char *dup_scalar(const yaml_node_t *v) { return model_str_dup(scalar(v)); }

/* One entry `name: {library:, routine:, inputs: [...], outputs: [...], partials:}` into *r. */
static int read_one(const char *file, yaml_document_t *doc, yaml_node_t *k, yaml_node_t *v, mbl_src_routine *r,
                    mbl_status *st)
{
    r->line = (int)k->start_mark.line + 1, r->col = (int)k->start_mark.column + 1;
    if (k->type != YAML_SCALAR_NODE || !is_name(scalar(k)))
        return err_at(file, st, k, "a routine's name must be a plain word (letters, digits, _)");
    if (!(r->name = dup_scalar(k))) return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", file);
    if (v->type != YAML_MAPPING_NODE)
        return err_at(file, st, v, "routine '%s' must be a mapping {library:, routine:, inputs: [...], outputs: [...], "
                                   "partials:}", r->name);
    const yaml_node_t *seen[5] = {0};
    static const char *keys[5] = {"library", "routine", "inputs", "outputs", "partials"};
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *kk = yaml_document_get_node(doc, p->key), *vv = yaml_document_get_node(doc, p->value);
        int w = -1;
        for (int i = 0; i < 5 && kk->type == YAML_SCALAR_NODE; i++)
            if (!strcmp(scalar(kk), keys[i])) w = i;
        if (w < 0)
            return err_at(file, st, kk, "routine '%s': unknown key '%s' (expected library, routine, inputs, outputs, "
                                        "partials)", r->name, kk->type == YAML_SCALAR_NODE ? scalar(kk) : "?");
        if (seen[w]) return err_at(file, st, kk, "routine '%s': duplicate key '%s'", r->name, keys[w]);
        seen[w] = kk;
        int rc = 0;
        switch (w) {
        case 0:
        case 1:
            if (vv->type != YAML_SCALAR_NODE || !vv->data.scalar.length)
                return err_at(file, st, vv, "routine '%s': '%s' must be %s", r->name, keys[w],
                              w ? "the routine's function name" : "a file name (a shared library)");
            if (w == 1 && !is_name(scalar(vv)))
                return err_at(file, st, vv, "routine '%s': '%s' is not a C function name", r->name, scalar(vv));
            if (!(*(w ? &r->symbol : &r->library) = dup_scalar(vv))) return mbl_error(st, MBL_ENOMEM, "out of memory");
            if (!w) r->lib_line = (int)vv->start_mark.line + 1, r->lib_col = (int)vv->start_mark.column + 1;
            break;
        case 2:
        case 3:
            if (vv->type != YAML_SEQUENCE_NODE || vv->data.sequence.items.start == vv->data.sequence.items.top)
                return err_at(file, st, vv, "routine '%s': '%s' must be a non-empty list (of %s)", r->name, keys[w],
                              w == 2 ? "expressions" : "names");
            for (yaml_node_item_t *q = vv->data.sequence.items.start; q < vv->data.sequence.items.top && !rc; q++) {
                yaml_node_t *e = yaml_document_get_node(doc, *q);
                if (w == 3 && (e->type != YAML_SCALAR_NODE || !is_name(scalar(e))))
                    return err_at(file, st, e, "routine '%s': an output must be a name (letters, digits, _)", r->name);
                rc = model_src_list_push(doc, file, st, w == 2 ? &r->inputs : &r->outputs, w == 3 ? e : NULL, e);
            }
            if (!rc && (w == 2 ? r->inputs.n : r->outputs.n) > MBLX_USER_MAX_IO)
                return err_at(file, st, vv, "routine '%s': more than %d %s", r->name, MBLX_USER_MAX_IO, keys[w]);
            break;
        case 4:
            if ((r->partials = yes_no(vv)) < 0)
                return err_at(file, st, vv, "routine '%s': 'partials' must be yes or no", r->name);
            break;
        }
        if (rc) return rc;
    }
    if (!seen[2]) return err_at(file, st, v, "routine '%s': missing 'inputs' (a list of expressions)", r->name);
    if (!seen[3]) return err_at(file, st, v, "routine '%s': missing 'outputs' (a list of names)", r->name);
    for (int i = 0; i < r->outputs.n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(r->outputs.items[i].key, r->outputs.items[j].key))
                return mbl_error(st, MBL_EMODEL, "%s:%d:%d: routine '%s': output '%s' named twice", file,
                                 r->outputs.items[i].line, r->outputs.items[i].col, r->name, r->outputs.items[i].key);
    if (!r->symbol && !(r->symbol = model_str_dup(r->name))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

int model_src_read_routines(const char *file, yaml_document_t *doc, const yaml_node_t *node, mbl_src *src,
                            mbl_status *st)
{
    if (node->type == YAML_SCALAR_NODE && node->data.scalar.length == 0) return 0;
    if (node->type != YAML_MAPPING_NODE)
        return err_at(file, st, node, "'routines' must be a mapping {name: {library:, routine:, inputs:, outputs:}}");
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    if (src->routines) return err_at(file, st, node, "duplicate 'routines'");
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

void model_src_routines_free(mbl_src *src)
{
    for (int i = 0; i < src->nroutines; i++) {
        mbl_src_routine *r = &src->routines[i];
        mbl_free(r->name), mbl_free(r->library), mbl_free(r->symbol);
        model_src_list_free(&r->inputs);
        model_src_list_free(&r->outputs);
    }
    mbl_free(src->routines);
    src->routines = NULL;
    src->nroutines = 0;
}

/* ---- the outputs as variables ----------------------------------------------------------------- */

int model_routines_take(loader *L)
{
    mbl_src *s = L->src;
    L->var_routine0 = s->variables.n;
    int nout = 0;
    for (int i = 0; i < s->nroutines; i++) nout += s->routines[i].outputs.n;
    if (!nout) return 0;
    mbl_src_list *l = &s->variables;
    if (l->n + nout > l->cap) {
        mbl_src_item *it = mbl_realloc_array(l->items, (size_t)(l->n + nout), sizeof *it);
        if (!it) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        l->items = it, l->cap = l->n + nout;
    }
    for (int i = 0; i < s->nroutines; i++) {
        const mbl_src_routine *r = &s->routines[i];
        for (int k = 0; k < r->outputs.n; k++) {
            const mbl_src_item *o = &r->outputs.items[k];
            mbl_src_item *it = &l->items[l->n];
            memset(it, 0, sizeof *it);
            char what[200];
            snprintf(what, sizeof what, "output '%s' of routine '%s'", o->key, r->name);
            it->key = model_str_dup(o->key), it->key2 = model_str_dup(what), it->text = model_str_dup(r->name);
            it->key_line = it->line = o->line, it->key_col = it->col = o->col;
            l->n++;
            if (!it->key || !it->key2 || !it->text) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* the routine and output of variable i (a routine's output): *k, and the routine's index */
static int routine_of_var(const loader *L, int i, int *k)
{
    int o = i - L->var_routine0;
    for (int r = 0; r < L->src->nroutines; r++) {
        if (o < L->src->routines[r].outputs.n) {
            *k = o;
            return r;
        }
        o -= L->src->routines[r].outputs.n;
    }
    return -1;
}

/* the nodes of routine r's inputs, parsed once (md->routine_in); 0 or an error in L->st */
static int routine_inputs(loader *L, int r, const char *busy_name)
{
    mbl_model *md = L->md;
    const mbl_src_routine *sr = &L->src->routines[r];
    if (md->routine_state[r] == VAR_DONE) return 0;
    if (md->routine_state[r] == VAR_BUSY)
        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: routine '%s': its inputs use its own output '%s'", L->src->file,
                         sr->line, sr->col, sr->name, busy_name);
    md->routine_state[r] = VAR_BUSY;
    loader saved = *L;
    int rc = 0;
    for (int j = 0; j < sr->inputs.n && !rc; j++) {
        char what[200];
        snprintf(what, sizeof what, "input %d of routine '%s'", j + 1, sr->name);
        rc = model_parse_item(L, &sr->inputs.items[j], SCOPE_FULL, what, &md->routine_in[md->routine_in0[r] + j]);
    }
    L->scope = saved.scope, L->item = saved.item, L->what = saved.what, L->param_limit = saved.param_limit;
    md->routine_state[r] = rc ? VAR_NEW : VAR_DONE;
    return rc;
}

int model_parse_variable(loader *L, int i, const char *what, mblx_id *out)
{
    if (i < L->var_routine0) return model_parse_item(L, &L->src->variables.items[i], SCOPE_FULL, what, out);
    int k = 0, r = routine_of_var(L, i, &k);
    int rc = r < 0 ? mbl_error(L->st, MBL_EMODEL, "%s: no routine for variable %d", L->src->file, i)
                   : routine_inputs(L, r, L->src->variables.items[i].key);
    if (rc) return rc;
    mbl_model *md = L->md;
    *out = mblx_user_call(md->g, L->md->routine_graph[r], k, md->routine_in + md->routine_in0[r]);
    if (*out == MBLX_NONE) return mblx_graph_status(md->g, L->st);
    return 0;
}

/* ---- finding and registering the functions ---------------------------------------------------- */

/* the library's path: relative to the model file's folder */
static char *lib_path(const char *model_file, const char *lib)
{
    if (lib[0] == '/' || !strchr(model_file, '/')) return model_str_dup(lib);
    size_t d = (size_t)(strrchr(model_file, '/') - model_file) + 1, n = strlen(lib);
    char *p = mbl_malloc(d + n + 1);
    if (!p) return NULL;
    memcpy(p, model_file, d);
    memcpy(p + d, lib, n + 1);
    return p;
}

static int open_library(loader *L, const mbl_src_routine *sr, mbl_user_fn *fn)
{
    mbl_model *md = L->md;
    const char *file = L->src->file;
    if (!L->src->allow_user_code)
        return mbl_error(L->st, MBL_EPERM,
                         "%s:%d:%d: routine '%s' runs code of the library '%s': a model runs user code only when "
                         "allowed (the tool's --allow-user-code, mbl_load_options.allow_user_code)",
                         file, sr->lib_line, sr->lib_col, sr->name, sr->library);
    char *path = lib_path(file, sr->library);
    if (!path) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    /* a path with a '/' makes dlopen take the file, not search the system's libraries */
    char *dl = path[0] == '/' || !strncmp(path, "./", 2) || !strncmp(path, "../", 3) ? path : NULL;
    if (!dl && (dl = mbl_malloc(strlen(path) + 3))) {
        memcpy(dl, "./", 2);
        memcpy(dl + 2, path, strlen(path) + 1);
    }
    void *h = dl ? dlopen(dl, RTLD_NOW | RTLD_LOCAL) : NULL;
    int rc = 0;
    if (!dl) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
    else if (!h) {
        const char *e = dlerror();
        rc = mbl_error(L->st, MBL_EIO, "%s:%d:%d: routine '%s': cannot load the library '%s': %s", file, sr->lib_line,
                       sr->lib_col, sr->name, path, e ? e : "unknown error");
    }
    if (dl != path) mbl_free(dl);
    if (rc) {
        mbl_free(path);
        return rc;
    }
    void **libs = mbl_realloc_array(md->user_libs, (size_t)md->nuser_libs + 1, sizeof *libs);
    if (!libs) {
        dlclose(h);
        mbl_free(path);
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    md->user_libs = libs;
    md->user_libs[md->nuser_libs++] = h;
    int (*abi)(void);
    *(void **)&abi = dlsym(h, "mblin_user_abi");
    int ver = abi ? abi() : 0;
    if (!abi)
        rc = mbl_error(L->st, MBL_EMODEL,
                       "%s:%d:%d: routine '%s': '%s' is not a library of mblin routines (it has no mblin_user_abi: "
                       "compile it with MBL_USER_LIBRARY of mblin/user.h)",
                       file, sr->lib_line, sr->lib_col, sr->name, path);
    else if (ver != MBL_USER_ABI_VERSION)
        rc = mbl_error(L->st, MBL_EMODEL,
                       "%s:%d:%d: routine '%s': '%s' was compiled for version %d of mblin/user.h, this mblin has "
                       "version %d: compile it again",
                       file, sr->lib_line, sr->lib_col, sr->name, path, ver, MBL_USER_ABI_VERSION);
    if (!rc) {
        *(void **)fn = dlsym(h, sr->symbol);
        if (!*fn)
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: routine '%s': the library '%s' has no function '%s'", file,
                           sr->lib_line, sr->lib_col, sr->name, path, sr->symbol);
    }
    mbl_free(path);
    return rc;
}

int model_routines_register(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    if (!s->nroutines) return 0;
    int nin = 0;
    for (int r = 0; r < s->nroutines; r++) nin += s->routines[r].inputs.n;
    md->nroutines = s->nroutines;
    md->routine_in0 = mbl_calloc((size_t)s->nroutines + 1, sizeof *md->routine_in0);
    md->routine_in = mbl_alloc_array((size_t)nin + 1, sizeof *md->routine_in);
    md->routine_graph = mbl_calloc((size_t)s->nroutines, sizeof *md->routine_graph);
    md->routine_state = mbl_calloc((size_t)s->nroutines, sizeof *md->routine_state);
    if (!md->routine_in0 || !md->routine_in || !md->routine_graph || !md->routine_state)
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int r = 0; r < s->nroutines; r++) {
        const mbl_src_routine *sr = &s->routines[r];
        md->routine_in0[r + 1] = md->routine_in0[r] + sr->inputs.n;
        for (int j = 0; j < sr->inputs.n; j++) md->routine_in[md->routine_in0[r] + j] = MBLX_NONE;
        mblx_user_def d = {sr->name, sr->inputs.n, sr->outputs.n, NULL, NULL, sr->partials};
        int rc = 0;
        if (sr->library) rc = open_library(L, sr, &d.fn);
        else {
            for (int h = 0; h < s->nuser_routines && !d.fn; h++)
                if (s->user_routines[h].name && !strcmp(s->user_routines[h].name, sr->symbol))
                    d.fn = s->user_routines[h].fn, d.user_data = s->user_routines[h].user_data;
            if (!d.fn)
                rc = mbl_error(L->st, MBL_EMODEL,
                               "%s:%d:%d: routine '%s': no 'library' and the program gave no routine '%s' (the "
                               "Python package's load(user={'%s': fn}), mbl_load_options.user_routines)",
                               s->file, sr->line, sr->col, sr->name, sr->symbol, sr->symbol);
        }
        if (rc) return rc;
        long gi = mblx_user_add(md->g, &d);
        if (gi < 0) return mblx_graph_status(md->g, L->st);
        md->routine_graph[r] = gi;
    }
    return 0;
}

void model_routines_free(mbl_model *md)
{
    mbl_free(md->routine_in0), mbl_free(md->routine_in), mbl_free(md->routine_graph), mbl_free(md->routine_state);
    md->routine_in0 = NULL, md->routine_in = NULL, md->routine_graph = NULL, md->routine_state = NULL;
    for (int i = md->nuser_libs - 1; i >= 0; i--) dlclose(md->user_libs[i]);
    mbl_free(md->user_libs);
    md->user_libs = NULL;
    md->nuser_libs = 0;
}
