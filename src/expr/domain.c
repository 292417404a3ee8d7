/* Which expressions can leave a function's domain (domain.h). */
#include "expr/domain.h"

#include <math.h>
#include <string.h>

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
    case MBLX_OP_DATA: /* spline/table/spline2 outside a range that refuses extrapolation */
    case MBLX_OP_USER: return BAD; /* a user routine: its domain is not known (it may fail) */
    case MBLX_OP_ABS:
    case MBLX_OP_EXP:
    case MBLX_OP_COSH: return (unsigned char)(b | NONNEG);
    default: return (unsigned char)b;
    }
}

/* ---- the nodes where a restriction can start --------------------------------------------- */

/* A restriction (BAD) starts only at a node that is one by itself, whatever its operands' bits: a
 * function restricting its argument, a power with a variable, negative or fractional exponent (of
 * a base not provably >= 0), or a sqrt of what is not provably >= 0; every other node's BAD is its
 * operands'. When no node up to the largest expression starts one, none of them is restricted,
 * known without node_bits' pass over every node: the scan reads each node's operation, and the
 * NONNEG bit only of the few bases and arguments where it decides (the N = 10^4 four-bar's sqrt
 * of sums of squares), computed as node_bits computes it, on demand (nn: 0 not yet, 1 no, 2 yes). */
static size_t domain_walks; /* (tests: mblx__domain_walks) */
_Static_assert(MBLX_OP_COUNT_ <= 64, "any_start's set of operations is a 64-bit mask");

size_t mblx__domain_walks(void) { return domain_walks; }

/* node_bits' NONNEG of v from its operands' (all in nn when needed: 0 means one is not yet) */
static unsigned char nonneg_of(const mblx_graph *g, uint32_t v, const unsigned char *nn)
{
    const mblx__node *nd = &g->nd[v];
    const uint32_t *a = mblx__args(g, v);
    switch (nd->op) {
    case MBLX_OP_CONST: return nd->val >= 0 ? 2 : 1;
    case MBLX_OP_ADD:
    case MBLX_OP_MUL: {
        unsigned all = 2;
        for (uint32_t k = 0; k < nd->na; k++) all = nn[a[k]] < all ? nn[a[k]] : all;
        return all == 2 ? (nd->val >= 0 ? 2 : 1) : all;
    }
    case MBLX_OP_POW: {
        const mblx__node *ex = &g->nd[a[1]];
        double c = ex->op == MBLX_OP_CONST ? ex->val : 0;
        if ((ex->op == MBLX_OP_CONST && c == 2.0) || (c == floor(c) && fmod(c, 2.0) == 0)) return 2;
        return nn[a[0]];
    }
    case MBLX_OP_SQRT:
    case MBLX_OP_ABS:
    case MBLX_OP_EXP:
    case MBLX_OP_COSH: return 2;
    default: return 1;
    }
}

/* Is v provably >= 0 (node_bits' NONNEG)? Its operands first where they decide (an explicit
 * stack: sums of sums may nest deeply). -1 when out of memory. */
static int nonneg(const mblx_graph *g, uint32_t v, unsigned char *nn, uint32_t **stk, size_t *cap)
{
    size_t sn = 0;
    if (nn[v]) return nn[v] == 2;
    if (!*cap && !(*stk = mbl_alloc_array(*cap = 64, sizeof **stk))) return -1;
    (*stk)[sn++] = v;
    while (sn) {
        uint32_t x = (*stk)[sn - 1], na = g->nd[x].na, op = g->nd[x].op;
        const uint32_t *a = mblx__args(g, x);
        size_t push = sn;
        if (op == MBLX_OP_POW && nonneg_of(g, x, nn) == 2) na = 0; /* (its exponent decides: its base not read) */
        if (op == MBLX_OP_ADD || op == MBLX_OP_MUL || op == MBLX_OP_POW)
            for (uint32_t k = 0; k < (op == MBLX_OP_POW ? (na > 0) : na); k++) {
                if (nn[a[k]]) continue;
                if (sn == *cap) {
                    uint32_t *q = mbl_realloc_array(*stk, 2 * *cap, sizeof *q);
                    if (!q) return -1;
                    *stk = q, *cap *= 2;
                }
                (*stk)[sn++] = a[k];
            }
        if (sn > push) continue; /* (its operands first) */
        nn[x] = nonneg_of(g, x, nn);
        sn--;
    }
    return nn[v] == 2;
}

/* Does a restriction start at a node up to top? 1 yes, 0 no, -1 out of memory. */
static int any_start(const mblx_graph *g, uint32_t top)
{
    unsigned char *nn = mbl_calloc((size_t)top + 1, 1);
    uint32_t *stk = NULL;
    size_t cap = 0;
    int start = nn ? 0 : -1;
    /* (the operations that can start one, tested first as a set) */
    const uint64_t can = 1ull << MBLX_OP_LOG | 1ull << MBLX_OP_ASIN | 1ull << MBLX_OP_ACOS | 1ull << MBLX_OP_TAN |
                         1ull << MBLX_OP_DATA | 1ull << MBLX_OP_USER | 1ull << MBLX_OP_SQRT | 1ull << MBLX_OP_POW;
    for (uint32_t v = 0; v <= top && !start; v++) {
        const mblx__node *nd = &g->nd[v];
        if (!(can >> nd->op & 1)) continue;
        switch (nd->op) {
        case MBLX_OP_LOG:
        case MBLX_OP_ASIN:
        case MBLX_OP_ACOS:
        case MBLX_OP_TAN:
        case MBLX_OP_DATA:
        case MBLX_OP_USER: start = 1; break;
        case MBLX_OP_SQRT: start = nonneg(g, mblx__args(g, v)[0], nn, &stk, &cap); start = start < 0 ? -1 : !start; break;
        case MBLX_OP_POW: {
            const uint32_t *a = mblx__args(g, v);
            const mblx__node *ex = &g->nd[a[1]];
            double c = ex->val;
            if (ex->op != MBLX_OP_CONST || c < 0) start = 1;
            else if (c != 2.0 && c != floor(c)) /* (a square first: the most of them) */ start = nonneg(g, a[0], nn, &stk, &cap), start = start < 0 ? -1 : !start;
            break;
        }
        default: break;
        }
    }
    mbl_free(nn), mbl_free(stk);
    return start;
}

int mblx__domain_restricted(const mblx_graph *g, size_t n, const mblx_id *e, unsigned char *restricted)
{
    if (!n) return 0;
    uint32_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mblx__valid(g, e[i])) return -1;
        if (e[i] > top) top = e[i];
    }
    int start = any_start(g, top);
    if (start < 0) return -1;
    if (!start) { /* nothing restricted (see any_start) */
        memset(restricted, 0, n);
        return 0;
    }
    domain_walks++;
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
