/* A DC motor's electrical state as a user routine (include/mblin/user.h, docs/user-routines.md):
 * the armature current i is an ODE state of the model whose derivative the routine gives, and the
 * motor's torque drives the mechanics (examples/user/motor_pendulum.yaml; the same model in the
 * expression language: motor_pendulum_expr.yaml).
 *
 * Build by hand (from the source tree's top folder):
 *     cc -shared -fPIC -I include -o libmotor.so examples/user/motor.c
 * CMake builds it as build/examples/user/libmotor.so (cmake/user_routines.cmake).
 *
 * Routine dc_motor: inputs [i, omega, V, R, L, Ke, Kt], outputs [di_dt, torque] with
 *     L di/dt = V - R i - Ke omega,   torque = Kt i,
 * and all 14 partials. */
#include <stdio.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int dc_motor(mbl_user_call *c);

int dc_motor(mbl_user_call *c)
{
    if (c->nin != 7 || c->nout != 2) {
        snprintf(c->message, c->message_size,
                 "dc_motor takes 7 inputs [i, omega, V, R, L, Ke, Kt] and gives 2 outputs [di_dt, torque] (%d, %d given)",
                 c->nin, c->nout);
        return 1;
    }
    const double i = c->in[0], omega = c->in[1], V = c->in[2], R = c->in[3], L = c->in[4], Ke = c->in[5], Kt = c->in[6];
    if (L == 0) {
        snprintf(c->message, c->message_size, "dc_motor: the inductance L is zero");
        return 2;
    }
    const double e = V - R * i - Ke * omega; /* the voltage across the inductance */
    c->out[0] = e / L;
    c->out[1] = Kt * i;
    if (c->partials) {
        double *p = c->partials; /* row k: d out_k / d [i, omega, V, R, L, Ke, Kt] */
        const double dk[2][7] = {{-R / L, -Ke / L, 1 / L, -i / L, -e / (L * L), -omega / L, 0},
                                 {Kt, 0, 0, 0, 0, 0, i}};
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 7; j++) p[k * 7 + j] = dk[k][j];
    }
    return 0;
}
