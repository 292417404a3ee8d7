/* A fresh model from the one given (mbl_model_copy): its text loaded again from its origin
 * (model/origin.h), with the load's name, options and overrides, and more overrides after them;
 * the studies' own models (src/study: a sweep's per-thread and per-point models, a boundary's
 * points) are made so, from the model they are given, whether it came from a file or not. */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "load/copy.h"

int load_copy(const model_origin *o, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    *out = NULL;
    if (!o || !o->text)
        return mbl_error(st, MBL_EARG, "mbl_model_copy: the model keeps no text to load again (it was not loaded by "
                                       "mbl_model_load_file or mbl_model_load_string)");
    if (nsets < 0 || (nsets > 0 && !sets)) return mbl_error(st, MBL_EARG, "mbl_model_copy: bad settings (%d)", nsets);
    /* the load's overrides first, then these: a later one of the same name wins (model_load_values) */
    mbl_setting *all = mbl_alloc_array((size_t)o->nsets + (size_t)nsets + 1, sizeof *all);
    if (!all) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (o->nsets) memcpy(all, o->sets, (size_t)o->nsets * sizeof *all);
    if (nsets) memcpy(all + o->nsets, sets, (size_t)nsets * sizeof *all);
    /* a relative name after a change of the working directory: its files are still found where the
     * load found them (the copy's name is then the absolute one) */
    char dir[PATH_MAX], *moved = NULL;
    const char *name = o->name;
    if (o->cwd && o->name && (!getcwd(dir, sizeof dir) || strcmp(dir, o->cwd))) {
        size_t a = strlen(o->cwd), b = strlen(o->name);
        if (!(moved = mbl_malloc(a + b + 2))) {
            mbl_free(all);
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        }
        memcpy(moved, o->cwd, a), moved[a] = '/', memcpy(moved + a + 1, o->name, b + 1);
        name = moved;
    }
    int rc = mbl_model_load_string_opt(o->text, o->len, name, all, o->nsets + nsets, &o->opt, out, st);
    mbl_free(moved);
    mbl_free(all);
    return rc;
}

int mbl_model_copy(const mbl_model *model, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_model_copy: out is NULL");
    *out = NULL;
    if (!model) return mbl_error(st, MBL_EARG, "mbl_model_copy: model is NULL");
    if (!model_origin_of(model)) return load_copy(NULL, sets, nsets, out, st);
    int fresh;
    /* parameters changed in place are carried as overrides (before sets: a later one wins) */
    model_origin *o = model_origin_current(model, &fresh);
    if (!o) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = load_copy(o, sets, nsets, out, st);
    if (fresh) model_origin_free(o);
    return rc;
}
