/* The parser's memo of resolved names: its table (expr/parse_memo.c), read and written by the
 * parser (expr/parse.c). */
#ifndef MBLIN_EXPR_PARSE_MEMO_TABLE_H
#define MBLIN_EXPR_PARSE_MEMO_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "expr/expr_internal.h"

/* The memo of resolved names (mblx__parse_memo), direct-mapped: a name of at most 8 characters
 * (its bytes as a word, zero padded, and its length), or a call of one symbol of such a name (arg
 * the symbol's node, else XNONE), and the node the resolver gave in the parse of generation gen.
 * Kept by the graph, so that a parse neither allocates nor clears it: an entry of another parse
 * is not this one's by its generation. 2^bits entries, a sixteenth of the longest text's bytes
 * rounded up (at least 2^12, at most 2^17): the kinetic energy of the N = 10^4 four-bar (1.59 MB)
 * names der(xB7) again 10^4 terms after its first (2^12 entries kept 4 % of them); freed with the
 * graph's table (mblx_graph_drop_table), once the model's texts are parsed. The entries an owner's
 * parses keep for each other (mblx__parse_lasting) have the generation lasting_gen. */
enum { NAME_MEMO_MIN_BITS = 12, NAME_MEMO_MAX_BITS = 17, NAME_MEMO_FEW_BITS = 10 };
struct mblx__name_memo {
    unsigned bits;
    uint32_t lasting_gen; /* the generation of owner's lasting entries (0: no owner) */
    const void *owner;
    struct name_memo_entry {
        uint64_t word;
        uint32_t gen, len;
        mblx_id arg, node;
    } e[];
};

/* The graph's memo of at least the entries a text of len bytes needs; a new generation for a
 * parse in *gen, and in *lasting the generation of owner's lasting entries (owner NULL: *gen, no
 * entry kept across parses). NULL when out of memory (then none). */
struct mblx__name_memo *mblx__name_memo_for(mblx_graph *g, size_t len, const void *owner, uint32_t *gen,
                                            uint32_t *lasting);

#endif
