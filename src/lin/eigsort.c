/* The order of eigenvalues by modulus (mbl_eig_sort_modulus, include/mblin/model.h), shared by
 * the methods and the studies. */
#include <stdlib.h>

#include "mblin/model.h"

static int cmp_mag(const void *pa, const void *pb)
{
    const mbl_eig_item *a = pa, *b = pb;
    if (a->mag != b->mag) return a->mag < b->mag ? -1 : 1;
    return a->idx - b->idx;
}

void mbl_eig_sort_modulus(mbl_eig_item *items, int n)
{
    qsort(items, (size_t)n, sizeof *items, cmp_mag);
}
