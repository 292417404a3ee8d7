/* Expression graph: reading a node (its operation, operands, value, dependence set). The graph's
 * storage and interning: graph.c. */
#include <math.h>

#include "expr/expr_internal.h"

/* ---- inspection --------------------------------------------------------------------------- */

size_t mblx_node_count(const mblx_graph *g) { return g ? g->n : 0; }

mblx_op mblx_node_op(const mblx_graph *g, mblx_id e)
{
    return (g && mblx__valid(g, e)) ? (mblx_op)g->nd[e].op : MBLX_OP_COUNT_;
}

int mblx_node_nargs(const mblx_graph *g, mblx_id e)
{
    return (g && mblx__valid(g, e)) ? (int)g->nd[e].na : 0;
}

mblx_id mblx_node_arg(const mblx_graph *g, mblx_id e, int i)
{
    if (!g || !mblx__valid(g, e) || i < 0 || (uint32_t)i >= g->nd[e].na) return XNONE;
    return mblx__args(g, e)[i];
}

const mblx_id *mblx_node_args(const mblx_graph *g, mblx_id e, size_t *count)
{
    if (!g || !mblx__valid(g, e)) {
        if (count) *count = 0;
        return NULL;
    }
    if (count) *count = g->nd[e].na;
    return g->nd[e].na ? mblx__args(g, e) : NULL;
}

double mblx_node_value(const mblx_graph *g, mblx_id e)
{
    if (!g || !mblx__valid(g, e)) return NAN;
    unsigned op = g->nd[e].op;
    return (op == MBLX_OP_CONST || op == MBLX_OP_ADD || op == MBLX_OP_MUL || op == MBLX_OP_DATA || op == MBLX_OP_USER) ? g->nd[e].val : 0.0;
}

int mblx_is_const(const mblx_graph *g, mblx_id e, double *value)
{
    if (!g || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_CONST) return 0;
    if (value) *value = g->nd[e].val;
    return 1;
}

const uint32_t *mblx_node_deps(const mblx_graph *g, mblx_id e, size_t *count)
{
    if (!g || !mblx__valid(g, e)) {
        if (count) *count = 0;
        return NULL;
    }
    if (count) *count = g->nd[e].dcnt;
    return g->deps + g->nd[e].doff;
}

int mblx_depends(const mblx_graph *g, mblx_id e, mblx_id sym)
{
    if (!g || !mblx__valid(g, e) || !mblx__valid(g, sym) || g->nd[sym].op != MBLX_OP_SYMBOL)
        return 0;
    return mblx__dep_has(g, e, (uint32_t)g->nd[sym].val);
}
