/* What a model was loaded from (src/load records it, mbl_model_copy loads a fresh model from it;
 * docs/study.md, "Studies on the model given"): its text, the name it was loaded under (positions
 * in messages; data, mesh and URDF files named relative to it), the working directory then (for
 * such relative names), the --set overrides and the load options. Kept on the model so that a study
 * that needs models of its own (a parameter changed in place, or set at each point) copies the
 * model it is given, also one that has no file (mbl_model_load_string, Python's loads). */
#ifndef MBLIN_MODEL_ORIGIN_H
#define MBLIN_MODEL_ORIGIN_H

#include "mblin/model.h"

typedef struct model_origin {
    char *text;           /* the model's text, len bytes and a NUL */
    size_t len;
    char *name;           /* the name given to the load (NULL: none, "<model>" in messages) */
    char *cwd;            /* the working directory at the load when name is relative, else NULL */
    mbl_setting *sets;    /* the load's overrides, in order (a later one of the same name wins) */
    int nsets;
    mbl_load_options opt; /* the load's options; states, velocity_states and outputs point into strs */
    char **strs;          /* the copies of the set names, states, velocity states and outputs */
    int nstrs;
} model_origin;

/* A new origin: text (len bytes) taken when `take` (an mbl_malloc'ed block of len + 1 bytes; freed
 * with the origin, or here on failure), else copied; name, sets and opt (not NULL) copied; the working directory recorded when name is relative. NULL when out of memory. */
model_origin *model_origin_new(const char *text, size_t len, int take, const char *name, const mbl_setting *sets,
                               int nsets, const mbl_load_options *opt);
model_origin *model_origin_dup(const model_origin *o);
/* The origin a copy of md loads from: md's own (*fresh = 0), or, when parameters were changed in
 * place (mbl_model_set_param), a new one (*fresh = 1: the caller frees it) whose overrides end with
 * their current values. NULL without an origin (*fresh = 0) or when out of memory. */
model_origin *model_origin_current(const mbl_model *md, int *fresh);
void model_origin_free(model_origin *o);
/* The model's origin (NULL: none), and the origin given to it (taken; the previous one freed). */
const model_origin *model_origin_of(const mbl_model *md);
void model_set_origin(mbl_model *md, model_origin *o);

#endif
