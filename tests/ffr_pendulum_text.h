/* The flexible double pendulum's equation-level part (coordinates and constraints of two floating
 * frames tangent at their first nodes, names as examples/flexible_pendulum.py writes them) as
 * model text for n_p elements per link; the structured term is added by the caller. Shared by
 * tests/model/test_ffr.c and bench/bench_flex.c. NULL when out of memory. */
#ifndef MBLIN_TESTS_FFR_PENDULUM_TEXT_H
#define MBLIN_TESTS_FFR_PENDULUM_TEXT_H

#include <stdio.h>
#include <stdlib.h>

static inline char *pendulum_text(int np)
{
    size_t cap = 4096 + (size_t)np * 200;
    char *t = malloc(cap);
    if (!t) return NULL;
    size_t n = 0;
    n += (size_t)snprintf(t + n, cap - n, "model: dae\nname: ffr pendulum\ncoordinates:\n");
    for (int k = 1; k <= 2; k++) {
        n += (size_t)snprintf(t + n, cap - n, "  x%d: 0\n  y%d: %s\n  th%d: -pi/2\n", k, k, k == 1 ? "0" : "-4", k);
        for (int i = 1; i <= np + 1; i++)
            n += (size_t)snprintf(t + n, cap - n, "  qfx%d_%d: 0\n  qfy%d_%d: 0\n  qft%d_%d: 0\n", k, i, k, i, k, i);
    }
    int e = np + 1;
    n += (size_t)snprintf(t + n, cap - n,
                          "kinetic_energy: \"0\"\nconstraints:\n"
                          "  - \"x1 + cos(th1)*qfx1_1 - sin(th1)*qfy1_1\"\n"
                          "  - \"y1 + sin(th1)*qfx1_1 + cos(th1)*qfy1_1\"\n"
                          "  - \"x2 + cos(th2)*qfx2_1 - sin(th2)*qfy2_1 - (x1 + cos(th1)*(4 + qfx1_%d) - sin(th1)*qfy1_%d)\"\n"
                          "  - \"y2 + sin(th2)*qfx2_1 + cos(th2)*qfy2_1 - (y1 + sin(th1)*(4 + qfx1_%d) + cos(th1)*qfy1_%d)\"\n",
                          e, e, e, e);
    for (int k = 1; k <= 2; k++)
        n += (size_t)snprintf(t + n, cap - n, "  - \"qfx%d_1\"\n  - \"qfy%d_1\"\n  - \"qft%d_1\"\n", k, k, k);
    snprintf(t + n, cap - n, "linearize:\n  at: equilibrium\n");
    return t;
}

#endif
