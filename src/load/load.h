/* The loader floor (src/load, between src/mech and src/opoint): a model file's text read into a
 * source (mbl_src) by the reader its `model:` kind names. The public entry points are
 * mbl_model_load_file / mbl_model_load_string (include/mblin/model.h). */
#ifndef MBLIN_LOAD_LOAD_H
#define MBLIN_LOAD_LOAD_H

#include "mblin/model.h"
#include "model/source.h"

/* Read a model file's text (YAML or JSON; `model: dae`, `mechanism` or `urdf`, or a URDF robot's
 * XML). `file` names it in messages. On error returns a negative code with "file:line:col: what"
 * in st. */
int load_src_read(const char *text, size_t len, const char *file, mbl_src **out, mbl_status *st);
/* The same with the --set overrides, which a `model: mechanism` evaluates while compiling (its
 * checks and its marker orientations see the overridden values), a bound on the nesting of
 * lists and mappings (load_src_read: none, MBL_MAX_NESTING) and the bytes building the model may
 * use (mbl_load_options.mem_budget; <= 0: MBL_MEM_BUDGET_DEFAULT), kept in src->mem_budget, and
 * mbl_load_options.no_drawing (src->no_drawing: a mechanism's drawing not built). */
int load_src_read_opt(const char *text, size_t len, const char *file, const mbl_setting *sets, int nsets,
                      int max_nesting, double mem_budget, int no_drawing, mbl_src **out, mbl_status *st);

#endif
