/* The file's user routines (`routines:`; docs/user-routines.md, include/mblin/user.h): read from
 * YAML, their functions found (a shared library the user allowed, or a routine the calling program
 * gave), registered in the model's graph (mblx_user_add) and their outputs resolved as names.
 *
 * An output is a variable of the model whose node is the routine's output at its input
 * expressions (mblx_user_call): model_routines_take appends one variable per output to the
 * source's variables (key the output's name, key2 what it is, text the routine's name, never
 * parsed), so that the names' checks, the resolver's cycles and the formulation's lets treat them
 * as the file's variables; the resolver's model_parse_variable (resolve.c) builds either kind. The
 * section is read with the rest of the file (source.c, model_src_read_routines). */
#define _GNU_SOURCE /* (dlfcn.h's RTLD_* under C11) */
#include "model/formulate.h"
#include "model/routines.h"

#include <dlfcn.h>

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
