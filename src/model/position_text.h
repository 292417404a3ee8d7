/* "file:line:col: what", the position of an item of the model file before a text (model/explain.c). */
#ifndef MBLIN_MODEL_POSITION_TEXT_H
#define MBLIN_MODEL_POSITION_TEXT_H

#include <stddef.h>

struct mbl_model;

/* "file:line:col: what" into buf (len bytes: cut at len - 1 characters and ended by a NUL, as
 * snprintf(buf, len, "%s:%d:%d: %s", ...) writes it), without printf or a copy of the parts'
 * texts; returns the length written. The record of each of the user's expressions (30,005 at the
 * N = 10^4 four-bar) is one. */
size_t model_position_text(char *buf, size_t len, const char *file, int line, int col, const char *what);

/* A record of the user's expression for the domain check (mbl_model.srcx_what): its position and
 * what, in the model's text blocks; written as a text only when a message names it. */
struct model_srcx_what {
    int line, col;
    char what[];
};

/* The domain check's name of the model's srcx i, "file:line:col: what", into buf as
 * model_position_text. */
size_t model_srcx_text(char *buf, size_t len, const struct mbl_model *md, int i);

#endif
