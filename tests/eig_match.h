/* Matching computed eigenvalues to a published or closed-form list, for tests (after test.h).
 *
 * eig_match: each of want[0..nw) is matched by a distinct eigenvalue of ev[0..n) (n at most
 * EIG_MATCH_MAX) within tol * max(1, |want|); the unmatched ones must be at most zero_tol in
 * modulus (the zero and rigid-body modes). Failed checks are reported through CHECK_MSG; the
 * return value is the largest relative distance of the matched ones. */
#ifndef MBLIN_TEST_EIG_MATCH_H
#define MBLIN_TEST_EIG_MATCH_H

#include <complex.h>
#include <math.h>

enum { EIG_MATCH_MAX = 64 };

static double eig_match(const double complex *ev, int n, const double complex *want, int nw, double tol,
                        double zero_tol)
{
    int used[EIG_MATCH_MAX] = {0};
    double worst = 0;
    CHECK_MSG(n <= EIG_MATCH_MAX, "eig_match: %d eigenvalues, at most %d", n, EIG_MATCH_MAX);
    if (n > EIG_MATCH_MAX) return INFINITY;
    for (int k = 0; k < nw; k++) {
        int best = -1;
        double bd = INFINITY;
        for (int i = 0; i < n; i++)
            if (!used[i] && cabs(ev[i] - want[k]) < bd) bd = cabs(ev[i] - want[k]), best = i;
        double rel = bd / fmax(1.0, cabs(want[k]));
        CHECK_MSG(best >= 0 && rel <= tol, "eigenvalue %.14g%+.14gi: nearest off by %.3g", creal(want[k]),
                  cimag(want[k]), rel);
        if (best >= 0) used[best] = 1;
        if (rel > worst) worst = rel;
    }
    for (int i = 0; i < n; i++)
        if (!used[i]) CHECK_MSG(cabs(ev[i]) <= zero_tol, "extra eigenvalue %.6g%+.6gi", creal(ev[i]), cimag(ev[i]));
    return worst;
}

#endif
