/* The `data:` section of a model file: data sets for spline, table and spline2 (model/data.c). */
#ifndef MBLIN_MODEL_DATA_H
#define MBLIN_MODEL_DATA_H

#include "mblin/expr.h"
#include "model/source.h"

enum { MODEL_DATA_AKIMA, MODEL_DATA_CUBIC, MODEL_DATA_LINEAR, MODEL_DATA_BICUBIC, MODEL_DATA_NMETHOD };
/* Akima's method needs 3 points. */
#define MODEL_DATA_MIN_AKIMA 3

typedef struct model_dataset {
    char *name;
    int method, extrap; /* MODEL_DATA_*, MBLX_EXTRAP_* */
    int nx, ny;         /* ny 0: 1-D */
    double *x, *y, *z;  /* z[i] (1-D), z[i ny + j] (2-D) */
    int line, col;      /* the set's name in the model file */
} model_dataset;

struct yaml_document_s;
struct yaml_node_s;
/* Read a `data:` mapping (CSV files relative to `file`'s folder); errors name the file, line and
 * column (of the YAML, or of the CSV row and field). The sets' estimated size is refused over
 * mem_budget bytes (<= 0: no limit), before a set's numbers are read. */
int model_data_read(struct yaml_document_s *doc, const struct yaml_node_s *val, const char *file, double mem_budget,
                    model_dataset **out, int *nout, mbl_status *st);
void model_data_free(model_dataset *d, int n);
/* The sets' pieces (Akima, natural cubic, linear, bicubic) added to g as its data sets. */
int model_data_register(mblx_graph *g, const char *file, const model_dataset *sets, int n, mbl_status *st);

#endif
