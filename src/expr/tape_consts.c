/* The tape's pool of constants (tape_internal.h tins.ci): each distinct constant once. */
#include <string.h>

#include "expr/tape_internal.h"

int mblx__cpool_init(mblx__cpool *p)
{
    memset(p, 0, sizeof *p);
    p->cap = INIT_CAP, p->scap = 4 * INIT_CAP, p->shift = 64 - 8;
    _Static_assert(4 * INIT_CAP == 1 << 8, "scap is 2^(64 - shift)");
    p->cst = mbl_alloc_array(p->cap, sizeof *p->cst);
    p->slot = mbl_calloc(p->scap, sizeof *p->slot);
    if (!p->cst || !p->slot) {
        mblx__cpool_free(p);
        return -1;
    }
    p->cst[0] = 0.0;
    p->n = 1;
    return 0;
}

void mblx__cpool_free(mblx__cpool *p)
{
    mbl_free(p->cst), mbl_free(p->slot);
    memset(p, 0, sizeof *p);
}

static int cpool_grow(mblx__cpool *p)
{
    if (p->n == p->cap) {
        double *q = mbl_realloc_array(p->cst, 2 * p->cap, sizeof *q);
        if (!q) return -1;
        p->cst = q, p->cap *= 2;
    }
    if (2 * (p->n + 1) > p->scap) { /* the slots at load 1/2 at most */
        uint32_t *old = p->slot, *ns = mbl_calloc(2 * p->scap, sizeof *ns);
        if (!ns) return -1;
        p->slot = ns, p->scap *= 2, p->shift--;
        for (uint32_t k = 1; k < p->n; k++) p->slot[mblx__cpool_slot(p, mblx__cpool_bits(p->cst[k]))] = k;
        mbl_free(old);
    }
    return 0;
}

uint32_t mblx__cpool_add(mblx__cpool *p, double c)
{
    if (p->n == TI_CONST_MAX || cpool_grow(p)) return UINT32_MAX;
    size_t i = mblx__cpool_slot(p, mblx__cpool_bits(c)); /* (moved if the slots grew) */
    p->cst[p->n] = c;
    p->slot[i] = (uint32_t)p->n;
    return (uint32_t)p->n++;
}

double *mblx__cpool_take(mblx__cpool *p, size_t *n)
{
    double *c = mbl_realloc_array(p->cst, p->n, sizeof *c); /* (a failed shrink keeps it) */
    if (!c) c = p->cst;
    *n = p->n;
    p->cst = NULL;
    mblx__cpool_free(p);
    return c;
}
