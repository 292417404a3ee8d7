/* The model's small texts kept until the model is freed (model/text_blocks.c): the records of the
 * user's expressions (srcx_what, exprs) and the symbols' names, in blocks of 64 KB instead of a
 * malloc and a free each (about 100,000 at the N = 10^4 four-bar). */
#ifndef MBLIN_MODEL_TEXT_BLOCKS_H
#define MBLIN_MODEL_TEXT_BLOCKS_H

#include <stddef.h>

struct mbl_model;

/* A block of texts: the first of a list has room after used (cap bytes in all). */
struct model_text_block {
    struct model_text_block *next;
    size_t used, cap;
    _Alignas(int) char data[];
};

/* model_block_bytes when the first block has no room: a new block */
void *model_block_bytes_new(struct model_text_block **list, size_t n);

/* n bytes cut from the blocks of list, at an int's alignment (a new block of 64 KB is put first
 * when the first has no room; n bytes longer than a block have their own, put second); NULL
 * when out of memory. The blocks of a model (below) and of a YAML document (source.h). Inline:
 * a YAML document takes about 90 a line of a mechanism's file (900,000 at the N = 10^4
 * four-bar, 39 instructions each as a call). */
static inline void *model_block_bytes(struct model_text_block **list, size_t n)
{
    const size_t al = _Alignof(int);
    struct model_text_block *b = *list;
    size_t at = b ? (b->used + al - 1) / al * al : 0;
    if (!b || at > b->cap || n > b->cap - at) return model_block_bytes_new(list, n);
    b->used = at + n;
    return b->data + at;
}

/* Free the blocks of list (*list then NULL). */
void model_blocks_free(struct model_text_block **list);

/* n bytes in md's text blocks, at an int's alignment (a record with int fields may start them);
 * NULL when out of memory. They stay until model_free_text_blocks. */
void *model_text_bytes(struct mbl_model *md, size_t n);

/* A copy of s in md's text blocks; NULL when out of memory. */
char *model_text_copy(struct mbl_model *md, const char *s);

/* Free md's text blocks (every text model_text_bytes and model_text_copy gave). */
void model_free_text_blocks(struct mbl_model *md);

#endif
