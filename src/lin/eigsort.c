/* The order of eigenvalues by modulus (mbl_eig_sort_modulus, include/mblin/model.h), shared by
 * the methods and the studies; and the error estimates of clustered eigenvalues (lin_err_clusters,
 * shared by the methods that estimate their eigenvalues' errors). */
#include <math.h>
#include <stdlib.h>

#include "lin/methods_internal.h"
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

static int cl_find(int *par, int i)
{
    while (par[i] != i) i = par[i] = par[par[i]];
    return i;
}

/* Clusters: eigenvalues i and j are linked when |s_i - s_j| <= r_i + r_j, r the estimates, and the
 * estimate of each becomes the largest |s_i - s_j| + err_j over its cluster. An infinite estimate (a
 * pair that could not be refined) links with r = 0: it joins only the eigenvalues whose own discs
 * cover it (which then become infinite too), instead of a disc that covers, and voids, the whole
 * spectrum. Skipped entries (skip[i], non-finite eigenvalues, NaN estimates) keep their values. */
int lin_err_clusters(int n, const double *re, const double *im, const int *skip, double *err, mbl_status *st)
{
    int *par = mbl_alloc_array((size_t)n + 1, sizeof *par);
    double *out = mbl_alloc_array((size_t)n + 1, sizeof *out);
    if (!par || !out) {
        mbl_free(par), mbl_free(out);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
#define CL_USE(i) ((!skip || !skip[i]) && isfinite(re[i]) && isfinite(im[i]) && !isnan(err[i]))
#define CL_RADIUS(i) (isfinite(err[i]) ? err[i] : 0.0)
    for (int i = 0; i < n; i++) par[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; CL_USE(i) && j < n; j++)
            if (CL_USE(j) && hypot(re[i] - re[j], im[i] - im[j]) <= CL_RADIUS(i) + CL_RADIUS(j)) {
                int a = cl_find(par, i), b = cl_find(par, j);
                if (a != b) par[a > b ? a : b] = a < b ? a : b;
            }
    for (int i = 0; i < n; i++) {
        out[i] = err[i];
        if (!CL_USE(i)) continue;
        int ci = cl_find(par, i);
        for (int j = 0; j < n; j++)
            if (j != i && CL_USE(j) && cl_find(par, j) == ci)
                out[i] = fmax(out[i], hypot(re[i] - re[j], im[i] - im[j]) + err[j]);
    }
#undef CL_USE
#undef CL_RADIUS
    for (int i = 0; i < n; i++) err[i] = out[i];
    mbl_free(par), mbl_free(out);
    return 0;
}
