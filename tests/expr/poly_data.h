/* The data sets' reference functions of tests/expr (test_expr_data.c, test_expr_fwd.c): a cubic
 * p(x) with its derivatives in closed form, q(x, y) = p(x) (1 - y + 0.5 y^3) + x y^2 with its
 * partial derivatives, and the grid they are sampled on. */
#ifndef MBLIN_TESTS_EXPR_POLY_DATA_H
#define MBLIN_TESTS_EXPR_POLY_DATA_H

#include <math.h>

static const double P[4] = {0.3, -1.2, 0.7, 0.25}; /* p(x) = sum P[k] x^k */
static inline double p1(double x, int d)
{
    double s = 0;
    for (int k = d; k < 4; k++) {
        double f = 1;
        for (int i = 0; i < d; i++) f *= k - i;
        s += P[k] * f * pow(x, k - d);
    }
    return s;
}
/* q(x, y) = p(x) (1 - y + 0.5 y^3) + x y^2 */
static inline double qy(double y, int d)
{
    return d == 0 ? 1 - y + 0.5 * y * y * y : d == 1 ? -1 + 1.5 * y * y : d == 2 ? 3 * y : d == 3 ? 3 : 0;
}
static inline double q2(double x, double y, int dx, int dy)
{
    double e = (dx == 0 ? x : dx == 1 ? 1 : 0) * (dy == 0 ? y * y : dy == 1 ? 2 * y : dy == 2 ? 2 : 0);
    return p1(x, dx) * qy(y, dy) + e;
}

static const double XS[5] = {-1, -0.2, 0.5, 1.1, 2};
static const double YS[4] = {0, 0.4, 1, 1.5};

#endif
