/* The model's small texts in blocks freed with the model (model/text_blocks.h). */
#include <string.h>

#include "model/model_internal.h"
#include "model/text_blocks.h"

enum { TEXT_BLOCK = 65536 - 64 }; /* bytes of a block (a text longer than this has its own) */

void *model_block_bytes_new(struct model_text_block **list, size_t n)
{
    struct model_text_block *b = *list;
    size_t cap = n > TEXT_BLOCK ? n : TEXT_BLOCK;
    struct model_text_block *nb = mbl_malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->used = n;
    nb->cap = cap;
    if (b && cap > TEXT_BLOCK) { /* a long text's own block: the first keeps its room */
        nb->next = b->next;
        b->next = nb;
    } else {
        nb->next = b;
        *list = nb;
    }
    return nb->data;
}

void model_blocks_free(struct model_text_block **list)
{
    while (*list) {
        struct model_text_block *b = *list;
        *list = b->next;
        mbl_free(b);
    }
}

void *model_text_bytes(mbl_model *md, size_t n) { return model_block_bytes(&md->text_blocks, n); }

char *model_text_copy(mbl_model *md, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = model_text_bytes(md, n);
    if (p) memcpy(p, s, n);
    return p;
}

void model_free_text_blocks(mbl_model *md) { model_blocks_free(&md->text_blocks); }
