/* A fresh model from what a model was loaded from (src/load/copy.c; the public mbl_model_copy). */
#ifndef MBLIN_LOAD_COPY_H
#define MBLIN_LOAD_COPY_H

#include "mblin/model.h"
#include "model/origin.h"

/* A fresh model loaded from origin o: its text, name, options and overrides, then sets (a later
 * one of the same name wins). mbl_model_copy is this with the model's origin; a study that
 * outlives the caller's model keeps a copy of its origin (model_origin_dup) and loads from it. */
int load_copy(const model_origin *o, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st);

#endif
