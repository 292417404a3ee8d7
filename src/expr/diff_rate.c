/* The time derivatives of a kinetic energy's gradient over the velocities taken in its reverse
 * sweep (gradient_terms.h, mblx__rate_gradient_terms): where T is a sum of constant-in-time
 * multiples of v_j^2 and v_j v_k, each contribution c P v_k a to dT/dv_j (a the adjoint of its
 * parent, constant in time) has the time derivative c P a_k, made in the sweep in its place, so
 * neither the contributions in v, their sums dT/dv nor those sums' total derivatives are made. */
#include <stdlib.h>

#include "expr/diff_memo.h"

/* the image of symbol node s under map (+ 2), 1 where s is constant in time */
static uint32_t image(const mblx_graph *g, const uint32_t *map, size_t nmap, mblx_id s)
{
    uint32_t k = (uint32_t)g->nd[s].val;
    return k < nmap ? map[k] : 1;
}

/* does x depend on a symbol varying in time (map)? */
static int varies(const mblx_graph *g, mblx_id x, const uint32_t *map, size_t nmap)
{
    const uint32_t *d = g->deps + g->nd[x].doff;
    for (uint32_t k = 0; k < g->nd[x].dcnt; k++)
        if (d[k] < nmap && map[d[k]] > 1) return 1;
    return 0;
}

/* Is each node of the relevant sub-DAG ord[0 .. n) (stamped with epoch; the root last) of the form:
 * a seed; a sum; a power 2 of a seed; a product whose operands but its relevant ones are constant
 * in time and whose relevant ones are one node or two seeds? And the root not a seed. */
int mblx__rate_nodes(const mblx_graph *g, const uint32_t *ord, size_t n, uint32_t epoch, const uint32_t *map,
                     size_t nmap)
{
    if (!n || g->nd[ord[n - 1]].op == MBLX_OP_SYMBOL) return 0;
    for (size_t k = 0; k < n; k++) {
        const mblx__node *nd = &g->nd[ord[k]];
        const uint32_t *a = mblx__args(g, ord[k]);
        double e;
        if (nd->op == MBLX_OP_SYMBOL || nd->op == MBLX_OP_ADD) continue;
        if (nd->op == MBLX_OP_POW) {
            if (g->nd[a[0]].op == MBLX_OP_SYMBOL && mblx_is_const(g, a[1], &e) && e == 2.0) continue;
            return 0;
        }
        if (nd->op != MBLX_OP_MUL) return 0;
        size_t nrel = 0, nsym = 0;
        for (uint32_t i = 0; i < nd->na; i++) {
            if (g->stamp[a[i]] != epoch) {
                if (varies(g, a[i], map, nmap)) return 0;
                continue;
            }
            nrel++;
            nsym += g->nd[a[i]].op == MBLX_OP_SYMBOL;
        }
        if (!(nrel == 1 || (nrel == 2 && nsym == 2))) return 0;
    }
    return 1;
}

mblx_id mblx__rate_contrib(mblx_graph *g, const uint32_t *map, size_t nmap, mblx_id v, const uint32_t *a, size_t na,
                           size_t i, double coef, mblx_id adj, mblx__pmemo *pm)
{
    uint32_t local[8], *b = na <= 8 ? local : mbl_alloc_array(na, sizeof *b);
    if (!b) return mblx__oom(g);
    size_t nv = 0;
    for (size_t j = 0; j < na; j++) { /* the other seed, if any, by its image */
        uint32_t m = j != i && g->nd[a[j]].op == MBLX_OP_SYMBOL ? image(g, map, nmap, a[j]) : 1;
        b[j] = m > 1 ? (nv++, m - 2) : a[j];
    }
    b[i] = image(g, map, nmap, a[i]) - 2; /* a power's base */
    mblx_id t = g->zero; /* constant in time: no derivative */
    if (g->nd[v].op == MBLX_OP_POW) {
        double pc;
        mblx_id p = mblx__partial_parts(g, v, b, 0, &pc);
        t = p == XNONE ? XNONE : mblx__scaled_product(g, pc, p, adj, 1);
    } else if (nv && na == 2 && pm) { /* as the sweep makes c P a (diff.c propagate) */
        t = mblx__mul_other_kept(g, pm, coef, b, i, adj);
    } else if (nv) {
        mblx_id c = mblx__const(g, coef);
        t = c == XNONE ? XNONE : mblx__product_others(g, c, b, na, i, adj);
    }
    if (b != local) mbl_free(b);
    return t;
}
