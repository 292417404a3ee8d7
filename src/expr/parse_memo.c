/* The parser's memo of resolved names (expr/parse_memo_table.h): made, sized, its generations
 * given and freed (moved out of expr/parse.c, with the owners' lasting generation). */
#include <string.h>

#include "expr/parse_memo.h"
#include "expr/parse_memo_table.h"

/* bytes of a memo of 2^bits entries */
static size_t name_memo_size(unsigned bits)
{
    return sizeof(struct mblx__name_memo) + ((size_t)1 << bits) * sizeof(struct name_memo_entry);
}

void mblx__name_memo_free(mblx_graph *g)
{
    if (g->name_memo) mblx__zeroed_free(g->name_memo, name_memo_size(g->name_memo->bits), 1);
    g->name_memo = NULL;
}

/* The graph's next generation; when the generations start again, the entries of old ones go (the
 * memo cleared, no owner's either) */
static uint32_t next_gen(mblx_graph *g, struct mblx__name_memo *m)
{
    if (++g->name_memo_gen == 0) {
        memset(m->e, 0, ((size_t)1 << m->bits) * sizeof m->e[0]);
        m->owner = NULL;
        m->lasting_gen = 0;
        g->name_memo_gen = 1;
    }
    return g->name_memo_gen;
}

/* Zeroed by mblx__zeroed_alloc (calloc, from the heap: a later block reuses its pages when it is freed).
 * A memo made anew (larger) has no owner: the next owner's lasting entries start again. A graph of
 * few symbols (below 2^(NAME_MEMO_FEW_BITS - 1): the bicycle has 137 when its first long text makes
 * the memo) starts from 2^NAME_MEMO_FEW_BITS entries (24 KB; 2^12 were 98 KB cleared, 100,000
 * instructions, for about 250 names and powers); one of more symbols from 2^NAME_MEMO_MIN_BITS. */
struct mblx__name_memo *mblx__name_memo_for(mblx_graph *g, size_t len, const void *owner, uint32_t *gen,
                                            uint32_t *lasting)
{
    unsigned bits = g->nsym < (1u << (NAME_MEMO_FEW_BITS - 1)) ? NAME_MEMO_FEW_BITS : NAME_MEMO_MIN_BITS;
    while (bits < NAME_MEMO_MAX_BITS && (len >> 4) > ((size_t)1 << bits)) bits++;
    struct mblx__name_memo *m = g->name_memo;
    if (!m || m->bits < bits) {
        mblx__name_memo_free(g);
        m = g->name_memo = mblx__zeroed_alloc(name_memo_size(bits), 1);
        if (!m) return NULL;
        m->bits = bits;
    }
    *gen = next_gen(g, m);
    if (owner && m->owner != owner) { /* a generation no entry has yet (the next, or 1 after a clear) */
        uint32_t lg = next_gen(g, m);
        m->owner = owner;
        m->lasting_gen = lg;
    }
    *lasting = owner ? m->lasting_gen : *gen;
    return m;
}
