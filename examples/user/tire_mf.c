/* Pacejka's Magic Formula lateral force as a user routine (include/mblin/user.h,
 * docs/user-routines.md): the built-in `tire: {model: magic_formula}` of a rolling wheel
 * (src/mech/wheel.c) written as the user's own code, with all its partials.
 *
 * Build by hand (from the source tree's top folder):
 *     cc -shared -fPIC -I include -o libtire_mf.so examples/user/tire_mf.c -lm
 * CMake builds it as build/examples/user/libtire_mf.so (cmake/user_routines.cmake).
 *
 * Routine mf_lateral: inputs [alpha, B, C, D, E], output [F] with
 *     x = B alpha,  phi = x - E (x - atan x),  F = -D sin(C atan(phi))
 * (the built-in's sign: a positive slip angle gives a negative lateral force along t2). Its
 * partials, with th = C atan(phi) and g = -D cos(th) C / (1 + phi^2) (dF/dphi):
 *     dF/dalpha = g B (1 - E x^2 / (1 + x^2)),   dF/dB = g alpha (1 - E x^2 / (1 + x^2)),
 *     dF/dC = -D cos(th) atan(phi),   dF/dD = -sin(th),   dF/dE = -g (x - atan x).
 * tests/user/test_user_routines.c checks them against sympy (tests/user/routine_refs.py). */
#include <math.h>
#include <stdio.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int mf_lateral(mbl_user_call *c);

int mf_lateral(mbl_user_call *c)
{
    if (c->nin != 5 || c->nout != 1) {
        snprintf(c->message, c->message_size, "mf_lateral takes 5 inputs [alpha, B, C, D, E] and gives 1 output [F] (%d, %d given)",
                 c->nin, c->nout);
        return 1;
    }
    const double alpha = c->in[0], B = c->in[1], C = c->in[2], D = c->in[3], E = c->in[4];
    const double x = B * alpha, ax = atan(x);
    const double phi = x - E * (x - ax), th = C * atan(phi);
    const double s = sin(th), co = cos(th);
    c->out[0] = -D * s;
    if (c->partials) {
        const double g = -D * co * C / (1 + phi * phi); /* dF/dphi */
        const double dphi_dx = 1 - E * x * x / (1 + x * x);
        double *p = c->partials;
        p[0] = g * dphi_dx * B;
        p[1] = g * dphi_dx * alpha;
        p[2] = -D * co * atan(phi);
        p[3] = -s;
        p[4] = -g * (x - ax);
    }
    return 0;
}
