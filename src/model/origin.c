/* What a model was loaded from (origin.h): made by the loader (src/load), kept on the model, read
 * by mbl_model_copy. */
#include "model/origin.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "model/formulate.h"
#include "model/model_internal.h"

/* a copy of s kept in o->strs (NULL for NULL) */
static const char *keep_str(model_origin *o, const char *s, int *fail)
{
    if (!s) return NULL;
    char *p = model_str_dup(s);
    if (!p) *fail = 1;
    else o->strs[o->nstrs++] = p;
    return p;
}

/* copies of n strings in o->strs, and the list of them (NULL when list is) */
static const char *const *keep_list(model_origin *o, const char *const *list, int n, int *fail)
{
    if (!list) return NULL;
    const char **l = mbl_alloc_array((size_t)(n > 0 ? n : 0) + 1, sizeof *l);
    if (!l) {
        *fail = 1;
        return NULL;
    }
    o->strs[o->nstrs++] = (char *)l;
    for (int i = 0; i < n; i++) l[i] = keep_str(o, list[i], fail);
    return l;
}

model_origin *model_origin_new(const char *text, size_t len, int take, const char *name, const mbl_setting *sets,
                               int nsets, const mbl_load_options *opt)
{
    model_origin *o = mbl_calloc(1, sizeof *o);
    if (!o) {
        if (take) mbl_free((char *)text);
        return NULL;
    }
    int fail = 0;
    if (take) {
        o->text = (char *)text;
    } else if ((o->text = mbl_malloc(len + 1))) {
        memcpy(o->text, text, len);
    } else {
        fail = 1;
    }
    if (o->text) o->text[len] = 0;
    o->len = len;
    o->opt = *opt;
    nsets = sets && nsets > 0 ? nsets : 0;
    int ns = o->opt.states ? o->opt.nstates : 0, nv = o->opt.velocity_states ? o->opt.nvelocity_states : 0;
    int no = o->opt.outputs ? o->opt.noutputs : 0;
    ns = ns > 0 ? ns : 0, nv = nv > 0 ? nv : 0, no = no > 0 ? no : 0;
    o->strs = mbl_alloc_array((size_t)nsets + (size_t)ns + (size_t)nv + (size_t)no + 4, sizeof *o->strs);
    o->sets = mbl_alloc_array((size_t)nsets + 1, sizeof *o->sets);
    if (!o->strs || !o->sets) {
        model_origin_free(o);
        return NULL;
    }
    for (int k = 0; k < nsets; k++) {
        o->sets[k].name = keep_str(o, sets[k].name ? sets[k].name : "", &fail);
        o->sets[k].value = sets[k].value;
    }
    o->nsets = nsets;
    o->opt.states = keep_list(o, o->opt.states, ns, &fail);
    o->opt.velocity_states = keep_list(o, o->opt.velocity_states, nv, &fail);
    o->opt.outputs = keep_list(o, o->opt.outputs, no, &fail);
    if (name && !(o->name = model_str_dup(name))) fail = 1;
    /* a relative name: its data, mesh and URDF files are found from the directory of the load */
    char dir[PATH_MAX];
    if (!fail && name && name[0] != '/' && getcwd(dir, sizeof dir) && !(o->cwd = model_str_dup(dir))) fail = 1;
    if (fail) {
        model_origin_free(o);
        return NULL;
    }
    return o;
}

/* a copy of o with nmore overrides after its own */
static model_origin *dup_with(const model_origin *o, const mbl_setting *more, int nmore)
{
    const mbl_setting *sets = o->sets;
    mbl_setting *all = NULL;
    if (nmore > 0) {
        if (!(all = mbl_alloc_array((size_t)o->nsets + (size_t)nmore, sizeof *all))) return NULL;
        if (o->nsets) memcpy(all, o->sets, (size_t)o->nsets * sizeof *all);
        memcpy(all + o->nsets, more, (size_t)nmore * sizeof *all);
        sets = all;
    }
    model_origin *d = model_origin_new(o->text, o->len, 0, o->name, sets, o->nsets + (nmore > 0 ? nmore : 0), &o->opt);
    mbl_free(all);
    if (!d) return NULL;
    mbl_free(d->cwd); /* the original's directory, not today's */
    d->cwd = NULL;
    if (o->cwd && !(d->cwd = model_str_dup(o->cwd))) {
        model_origin_free(d);
        return NULL;
    }
    return d;
}

model_origin *model_origin_dup(const model_origin *o) { return o ? dup_with(o, NULL, 0) : NULL; }

model_origin *model_origin_current(const mbl_model *md, int *fresh)
{
    *fresh = 0;
    if (!md->origin) return NULL;
    int nmoved = 0;
    for (int i = 0; md->pmoved && i < md->np; i++) nmoved += md->pmoved[i];
    if (!nmoved) return md->origin;
    mbl_setting *moved = mbl_alloc_array((size_t)nmoved, sizeof *moved);
    if (!moved) return NULL;
    for (int i = 0, k = 0; i < md->np; i++)
        if (md->pmoved[i]) moved[k].name = md->pname[i], moved[k++].value = md->pval[i];
    model_origin *d = dup_with(md->origin, moved, nmoved);
    mbl_free(moved);
    *fresh = d != NULL;
    return d;
}

void model_origin_free(model_origin *o)
{
    if (!o) return;
    for (int i = 0; i < o->nstrs; i++) mbl_free(o->strs[i]);
    mbl_free(o->strs);
    mbl_free(o->sets);
    mbl_free(o->text);
    mbl_free(o->name);
    mbl_free(o->cwd);
    mbl_free(o);
}

const model_origin *model_origin_of(const mbl_model *md) { return md ? md->origin : NULL; }

void model_set_origin(mbl_model *md, model_origin *o)
{
    model_origin_free(md->origin);
    md->origin = o;
}
