/* The file's user routines (routines.c; docs/user-routines.md). Internal to src/model. */
#ifndef MBLIN_MODEL_ROUTINES_H
#define MBLIN_MODEL_ROUTINES_H

#include "model/formulate.h"

struct yaml_document_s;
struct yaml_node_s;

/* `routines:` of a model file (node: its value) into src->routines; errors "file:line:col: what".
 * Also the mechanism's reader's (src/mech). */
int model_src_read_routines(const char *file, struct yaml_document_s *doc, const struct yaml_node_s *node, mbl_src *src,
                            mbl_status *st);
void model_src_routines_free(mbl_src *src);
/* Before the variables are counted: one variable per routine output appended to the source's
 * (L->var_routine0: the first of them). */
int model_routines_take(loader *L);
/* After the symbols are made: each routine's function found (its library opened when allowed:
 * MBL_EPERM otherwise; or the program's routine) and registered in the graph. */
int model_routines_register(loader *L);
/* Variable i's node: its text parsed, or the routine's output at its inputs. */
int model_parse_variable(loader *L, int i, const char *what, mblx_id *out);
/* the routines' data on the model and their libraries closed (mbl_model_free, after the tapes) */
void model_routines_free(mbl_model *md);

#endif
