/* A model's life (model/model.c): formulated and compiled from its source. */
#ifndef MBLIN_MODEL_MODEL_H
#define MBLIN_MODEL_MODEL_H

#include "mblin/model.h"

/* Formulate and compile a model from its source (a reader's output, e.g. with flexible bodies
 * appended); takes ownership of src (freed on return). */
struct mbl_src;
int model_from_src(struct mbl_src *src, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st);

#endif
