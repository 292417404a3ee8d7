/* The model's title and file as the reports print them, and what a partial-spectrum result leaves
 * out: shared by the text and JSON reports (report.c) and the files for other tools (export.c). */
#ifndef MBLIN_REPORT_TITLES_H
#define MBLIN_REPORT_TITLES_H

#include "mblin/model.h"

/* the model's name for a title: "(unnamed)" when it has none */
static inline const char *title_name(const mbl_model *md)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    return mi.name && mi.name[0] ? mi.name : "(unnamed)";
}

static inline const char *model_file(const mbl_model *md)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    return mi.file ? mi.file : "";
}

/* What a partial-spectrum result leaves out (include/mblin/model.h). */
#define NOT_FORMED "not formed (partial spectrum of a large model)"

#endif
