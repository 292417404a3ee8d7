/* The model's small texts in blocks freed with the model (model/text_blocks.h). */
#include <string.h>

#include "model/model_internal.h"
#include "model/text_blocks.h"

struct model_text_block {
    struct model_text_block *next;
    size_t used, cap;
    _Alignas(int) char data[];
};

enum { TEXT_BLOCK = 65536 - 64 }; /* bytes of a block (a text longer than this has its own) */

void *model_text_bytes(mbl_model *md, size_t n)
{
    const size_t al = _Alignof(int);
    struct model_text_block *b = md->text_blocks;
    size_t at = b ? (b->used + al - 1) / al * al : 0;
    if (!b || at > b->cap || n > b->cap - at) {
        size_t cap = n > TEXT_BLOCK ? n : TEXT_BLOCK;
        b = mbl_malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = md->text_blocks;
        b->used = 0;
        b->cap = cap;
        md->text_blocks = b;
        at = 0;
    }
    b->used = at + n;
    return b->data + at;
}

char *model_text_copy(mbl_model *md, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = model_text_bytes(md, n);
    if (p) memcpy(p, s, n);
    return p;
}

void model_free_text_blocks(mbl_model *md)
{
    while (md->text_blocks) {
        struct model_text_block *b = md->text_blocks;
        md->text_blocks = b->next;
        mbl_free(b);
    }
}
