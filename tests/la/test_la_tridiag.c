/* mbla_tridiag_solve (dgtsv; issue 35, the natural splines of data sets): T X = B for a
 * tridiagonal T against the closed form T x for a known x (two right-hand sides), a pivoting case
 * (zero first diagonal), the singular and bad-size errors. */
#include <math.h>
#include <string.h>

#include "mblin/la.h"
#include "test.h"

TEST(solves_known_solutions)
{
    enum { N = 7 };
    double dl[N - 1], d[N], du[N - 1], x[2 * N], B[2 * N];
    for (int i = 0; i < N; i++) {
        d[i] = i == 0 ? 0.0 : 4.0 + i; /* a zero first pivot: dgtsv must interchange rows */
        if (i < N - 1) dl[i] = 1.0 + 0.5 * i, du[i] = -2.0 + i;
        x[i] = sin(1.0 + i);
        x[N + i] = (double)(i * i) - 3.0;
    }
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < N; i++)
            B[c * N + i] = d[i] * x[c * N + i] + (i > 0 ? dl[i - 1] * x[c * N + i - 1] : 0.0) +
                           (i < N - 1 ? du[i] * x[c * N + i + 1] : 0.0);
    mbl_status st;
    CHECK(mbla_tridiag_solve(N, 2, dl, d, du, B, N, &st) == 0);
    for (int i = 0; i < 2 * N; i++) CHECK_CLOSE(B[i], x[i], 1e-13);
}

TEST(errors)
{
    double dl[1] = {0}, d[2] = {0, 1}, du[1] = {1}, B[2] = {1, 1};
    mbl_status st;
    CHECK(mbla_tridiag_solve(2, 1, dl, d, du, B, 2, &st) == MBL_ESINGULAR);
    CHECK(strstr(st.msg, "singular") != NULL);
    CHECK(mbla_tridiag_solve(2, 1, dl, d, du, B, 1, &st) == MBL_EDIM);
    CHECK(mbla_tridiag_solve(0, 1, NULL, NULL, NULL, B, 1, &st) == 0);
}

int main(void)
{
    RUN(solves_known_solutions);
    RUN(errors);
    return test_summary("la_tridiag");
}
