/* mbla_sym_check: is a small dense matrix symmetric, and positive definite or semidefinite? (the
 * penalty method's general Xi, Theta, Omega, source 001 Eq. 11-12: a user's matrices, checked before
 * use). Symmetry within a relative tolerance of the largest entry; definiteness from the symmetric
 * eigenvalues (dsygvd with B = I). */
#include "la/la_internal.h"

#include <math.h>

int mbla_sym_check(int n, const double *A, int lda, double sym_tol, int semi, mbl_status *st)
{
    const char *fn = "mbla_sym_check";
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    double amax = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double a = A[i + (size_t)j * lda];
            if (!isfinite(a)) return mbl_error(st, MBL_EARG, "entry (%d, %d) is not a finite number", i + 1, j + 1);
            amax = fmax(amax, fabs(a));
        }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) {
            double a = A[i + (size_t)j * lda], b = A[j + (size_t)i * lda];
            if (fabs(a - b) > sym_tol * amax)
                return mbl_error(st, MBL_EARG, "not symmetric: entry (%d, %d) is %.17g, entry (%d, %d) %.17g", i + 1,
                                 j + 1, a, j + 1, i + 1, b);
        }
    if (n == 0) return 0;
    /* the smallest eigenvalue and the largest magnitude: a diagonal's are its entries (no O(n^3) solve) */
    int diagonal = 1;
    double wmin = INFINITY, wmax = 0;
    for (int j = 0; j < n && diagonal; j++)
        for (int i = 0; i < n && diagonal; i++) {
            double a = A[i + (size_t)j * lda];
            if (i != j) diagonal = a == 0.0;
            else wmin = fmin(wmin, a), wmax = fmax(wmax, fabs(a));
        }
    if (!diagonal) {
        double *I = mbl_calloc((size_t)n * n, sizeof *I), *w = mbl_calloc((size_t)n, sizeof *w);
        if (!I || !w) r = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !r && i < n; i++) I[i + (size_t)i * n] = 1.0;
        if (!r) r = mbla_sygvd(n, A, lda, I, n, w, NULL, 0, st); /* w ascending */
        if (!r) wmin = w[0], wmax = fmax(fabs(w[0]), fabs(w[n - 1]));
        mbl_free(I), mbl_free(w);
        if (r) return r;
    }
    /* semidefinite: the smallest at least -sym_tol times the largest magnitude */
    if (semi ? !(wmin >= -sym_tol * wmax) : !(wmin > 0))
        return mbl_error(st, MBL_ESINGULAR, "not positive %sdefinite: its smallest eigenvalue is %.6g",
                         semi ? "semi" : "", wmin);
    return 0;
}
