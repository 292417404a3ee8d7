/* 3-D algebra on expression-graph nodes for the structured terms (terms/rtree.c, terms/ffr3.c):
 * the node twin of src/core/vec3.h (doubles) and src/mech/vec3_text.c (texts). Each function
 * creates its nodes in the order written, so a term's graph is the same wherever it is used. */
#ifndef MBLIN_MODEL_VEC3_NODES_H
#define MBLIN_MODEL_VEC3_NODES_H

#include "mblin/expr.h"

/* o = a x b as nodes of g; o may alias a or b */
static inline void vec3_nodes_cross(mblx_graph *g, const mblx_id a[3], const mblx_id b[3], mblx_id o[3])
{
    mblx_id r[3];
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        mblx_id p = mblx_mul(g, a[k1], b[k2]);
        mblx_id q = mblx_mul(g, a[k2], b[k1]);
        r[k] = mblx_sub(g, p, q);
    }
    o[0] = r[0], o[1] = r[1], o[2] = r[2];
}

#endif
