/* The N-loop four-bar as examples/fourbar.py writes it (no dampers, the states [phi]), for tests
 * of the operating point on large models. */
#ifndef MBLIN_TEST_FOURBAR_TEXT_H
#define MBLIN_TEST_FOURBAR_TEXT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The model's text, malloc'd (NULL when out of memory). springs: two more coordinates z1, z2 on
 * springs (two more equations of motion than coordinates of the loops: the multipliers' least
 * squares is tall); dup: the constraint of coupler N / 2 again, doubled (one constraint more than
 * the rank at every configuration). */
static inline char *fourbar_text(int N, int springs, int dup)
{
    size_t cap = 800 * (size_t)N + 1000, o = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
#define PUT(...) (o += (size_t)snprintf(b + o, o < cap ? cap - o : 0, __VA_ARGS__))
    PUT("model: dae\nname: %d-loop four-bar\nparameters: {m: 1, l: 1, k: 25, L0: sqrt(2)*l, c: 0, gx: 0, gy: -9.81}\n"
        "coordinates:\n", N);
    for (int i = 0; i <= N; i++) PUT("  xB%d: %.17g\n  yB%d: %.17g\n", i, i + cos(2.0), i, sin(2.0));
    PUT("  phi: 2\n%svariables:\n", springs ? "  z1: 0.1\n  z2: -0.2\n" : "");
    for (int i = 1; i <= N; i++) PUT("  s%d: \"sqrt((xB%d - %d)^2 + yB%d^2)\"\n", i, i, i - 1, i);
    PUT("kinetic_energy: \"%s", springs ? "m/2*der(z1)^2 + m/2*der(z2)^2 + " : "");
    for (int i = 0; i <= N; i++) PUT("%sm/6*(der(xB%d)^2 + der(yB%d)^2)", i ? " + " : "", i, i);
    for (int i = 1; i <= N; i++)
        PUT(" + m/6*(der(xB%d)^2 + der(yB%d)^2 + der(xB%d)*der(xB%d) + der(yB%d)*der(yB%d) + der(xB%d)^2 + der(yB%d)^2)",
            i - 1, i - 1, i - 1, i, i - 1, i, i, i);
    PUT("\"\npotential_energy: \"%s", springs ? "k/2*z1^2 + k/2*(z2 - z1)^2 " : "");
    for (int i = 0; i <= N; i++) PUT("-m*(gx*(xB%d + %d) + gy*yB%d)/2 ", i, i, i);
    for (int i = 1; i <= N; i++)
        PUT("-m*(gx*(xB%d + xB%d) + gy*(yB%d + yB%d))/2 + k/2*(s%d - L0)^2 ", i - 1, i, i - 1, i, i);
    PUT("\"\nconstraints:\n");
    for (int i = 0; i <= N; i++) PUT("  - \"(xB%d - %d)^2 + yB%d^2 - l^2\"\n", i, i, i);
    for (int i = 1; i <= N; i++) PUT("  - \"(xB%d - xB%d)^2 + (yB%d - yB%d)^2 - l^2\"\n", i, i - 1, i, i - 1);
    PUT("  - \"yB%d - l*sin(phi)\"\n", N);
    if (dup) PUT("  - \"2*((xB%d - xB%d)^2 + (yB%d - yB%d)^2 - l^2)\"\n", N / 2, N / 2 - 1, N / 2, N / 2 - 1);
    PUT("linearize:\n  at: equilibrium\n  states: [phi]\n");
#undef PUT
    if (o >= cap) {
        free(b);
        return NULL;
    }
    return b;
}

#endif
