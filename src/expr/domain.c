/* Which expressions can leave a function's domain (domain.h). */
#include "expr/domain.h"

#include "expr/expr_internal.h"

/* A node's bits (BAD: can leave a domain; NONNEG: provably >= 0, so that sqrt(x^2 + y^2) is
 * safe) from its operation and its operands' bits (bits: the nodes before it; an operand's handle
 * is below its user's). */
enum { BAD = 1, NONNEG = 2 };

static unsigned char node_bits(const mblx_graph *g, const mblx__node *nd, const uint32_t *args,
                               const unsigned char *bits)
{
    uint32_t na = nd->na;
    unsigned any = 0, all = BAD | NONNEG; /* the operands' bits or'ed and and'ed */
    for (uint32_t a = 0; a < na; a++) any |= bits[args[a]], all &= bits[args[a]];
    unsigned b = any & BAD; /* an operand can leave a domain */
    switch (nd->op) {
    case MBLX_OP_CONST: return nd->val >= 0 ? NONNEG : 0;
    case MBLX_OP_ADD:
    case MBLX_OP_MUL: return (unsigned char)(b | ((all & NONNEG) && nd->val >= 0 ? NONNEG : 0));
    case MBLX_OP_POW: {
        int nn0 = (bits[args[0]] & NONNEG) != 0;
        const mblx__node *ex = &g->nd[args[1]];
        int isc = ex->op == MBLX_OP_CONST;
        if (isc && ex->val == 2.0) return (unsigned char)(b | NONNEG); /* a square (the general test's answer) */
        double c = isc ? ex->val : 0; /* (a variable exponent: c = 0, an even integer, as before) */
        if (!isc || c < 0 || (c != floor(c) && !nn0)) b = BAD;
        return (unsigned char)(b | (nn0 || (c == floor(c) && fmod(c, 2.0) == 0) ? NONNEG : 0));
    }
    case MBLX_OP_SQRT: return (unsigned char)((bits[args[0]] & NONNEG ? b : BAD) | NONNEG);
    case MBLX_OP_LOG:
    case MBLX_OP_ASIN:
    case MBLX_OP_ACOS:
    case MBLX_OP_TAN:
    case MBLX_OP_DATA: return BAD; /* spline/table/spline2 outside a range that refuses extrapolation */
    case MBLX_OP_ABS:
    case MBLX_OP_EXP:
    case MBLX_OP_COSH: return (unsigned char)(b | NONNEG);
    default: return (unsigned char)b;
    }
}

int mblx__domain_restricted(const mblx_graph *g, size_t n, const mblx_id *e, unsigned char *restricted)
{
    if (!n) return 0;
    uint32_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mblx__valid(g, e[i])) return -1;
        if (e[i] > top) top = e[i];
    }
    /* (every node up to top is written before it is read: an operand comes before its user) */
    unsigned char *bits = mbl_alloc_array((size_t)top + 1, 1);
    if (!bits) return -1;
    const mblx__node *nd = g->nd;
    const uint32_t *args = g->args;
    for (uint32_t v = 0; v <= top; v++) bits[v] = node_bits(g, &nd[v], args + nd[v].aoff, bits);
    for (size_t i = 0; i < n; i++) restricted[i] = bits[e[i]] & BAD;
    mbl_free(bits);
    return 0;
}
