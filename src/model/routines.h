/* The file's user routines (routines.c; docs/user-routines.md). Internal to src/model. */
#ifndef MBLIN_MODEL_ROUTINES_H
#define MBLIN_MODEL_ROUTINES_H

#include "model/formulate.h"

/* Before the variables are counted: one variable per routine output appended to the source's
 * (L->var_routine0: the first of them). */
int model_routines_take(loader *L);
/* After the symbols are made: each routine's function found (its library opened when allowed:
 * MBL_EPERM otherwise; or the program's routine) and registered in the graph. */
int model_routines_register(loader *L);
/* the routines' data on the model and their libraries closed (mbl_model_free, after the tapes) */
void model_routines_free(mbl_model *md);

#endif
