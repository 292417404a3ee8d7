/* The error estimates of clustered eigenvalues (lin_err_clusters, src/lin/eigsort.c; issue 31,
 * item 2) on small synthetic spectra whose cluster estimates are worked out by hand: discs
 * |s - s_i| <= err_i that overlap form a cluster, each member gets max_j |s_i - s_j| + err_j. An
 * infinite estimate (a pair that could not be refined) stays infinite, and so do the eigenvalues
 * whose discs cover it, but the others keep their own estimates (it used to make every estimate of
 * the spectrum infinite: its disc covered everything). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "test.h"

TEST(finite_clusters)
{
    /* a split double pair -1 +- 2i (0.5e-6 apart, estimates 1e-6), an isolated 10i */
    double re[] = {-1, -1 + 0.5e-6, 0}, im[] = {2, 2, 10}, err[] = {1e-6, 1e-6, 1e-3};
    mbl_status st;
    mbl_status_clear(&st);
    CHECK(lin_err_clusters(3, re, im, NULL, err, &st) == 0);
    CHECK_REL(err[0], 1.5e-6, 1e-9);
    CHECK_REL(err[1], 1.5e-6, 1e-9);
    CHECK(err[2] == 1e-3);
}

TEST(infinite_stays_local)
{
    /* 0, 1: the split pair above; 2: -3 without an estimate; 3: -3 + 1e-9, its disc (1e-8) covers
     * 2; 4: -3.5, disc 0.1, does not reach 2; 5: 10i; 6: a spurious one skipped, beside 2 */
    double re[] = {-1, -1 + 0.5e-6, -3, -3 + 1e-9, -3.5, 0, -3};
    double im[] = {2, 2, 0, 0, 0, 10, 0};
    double err[] = {1e-6, 1e-6, INFINITY, 1e-8, 0.1, 1e-3, 5.0};
    int skip[] = {0, 0, 0, 0, 0, 0, 1};
    mbl_status st;
    mbl_status_clear(&st);
    CHECK(lin_err_clusters(7, re, im, skip, err, &st) == 0);
    CHECK_REL(err[0], 1.5e-6, 1e-9);
    CHECK_REL(err[1], 1.5e-6, 1e-9);
    CHECK(isinf(err[2]) && isinf(err[3]));
    CHECK(err[4] == 0.1);
    CHECK(err[5] == 1e-3);
    CHECK(err[6] == 5.0);
}

TEST(two_infinite)
{
    /* two unrefined eigenvalues apart and one finite between that covers neither */
    double re[] = {1, 2, 1.5}, im[] = {0, 0, 0}, err[] = {INFINITY, INFINITY, 0.25};
    mbl_status st;
    mbl_status_clear(&st);
    CHECK(lin_err_clusters(3, re, im, NULL, err, &st) == 0);
    CHECK(isinf(err[0]) && isinf(err[1]));
    CHECK(err[2] == 0.25);
}

int main(void)
{
    RUN(finite_clusters);
    RUN(infinite_stays_local);
    RUN(two_infinite);
    return test_summary("err_clusters");
}
