/* mblx_parse with the memo of resolved names (expr/parse.c): for a resolver that gives the same
 * node for a name, and for a call of one symbol (der(xB7)), each time it is asked within one
 * parse, with nothing else to do when asked again. */
#ifndef MBLIN_EXPR_PARSE_MEMO_H
#define MBLIN_EXPR_PARSE_MEMO_H

#include "mblin/expr.h"

/* mblx_parse, the resolver asked once for each name of at most 8 characters, each longer name it
 * answers with the symbol of that very name, and each call of one symbol with a name of at most 8
 * characters (later ones take its node from the memo): the same node, the graph node for node, the
 * same messages. The four-bar's kinetic energy resolves der(xB7) five times
 * (100,002 calls at N = 10^4), its potential energy m, gx, gy, k and L0 in each of 10,000 terms. */
int mblx__parse_memo(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, mblx_id *out,
                     mbl_status *st);

/* mblx__parse_memo whose names kept are also the owner's other parses' (owner: any pointer the
 * caller keeps; the parses of a graph with another owner, or with none, start their own): a name
 * the resolver answers with the symbol of that very name is taken from the memo in any later parse
 * of the owner while the memo lives (until mblx_graph_drop_table, or a text that needs a larger
 * memo), and so are integer powers. For a resolver that, in every such parse, answers a name it
 * once gave its own symbol with that symbol again and with nothing else to do: the model's in the
 * full and position scopes (coordinates, parameters, inputs, t), over the 20,002 constraints of
 * the N = 10^4 four-bar (l in each, a coupler's coordinates named by the constraints before). */
int mblx__parse_lasting(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, const void *owner,
                        mblx_id *out, mbl_status *st);

/* Free the graph's memo of names (its table's companion: with the graph, and with its table in
 * mblx_graph_drop_table, once the model's texts are parsed). */
void mblx__name_memo_free(mblx_graph *g);

#endif
