/* A test library (tests/user/tests.cmake): routine wrong_partials is the function of plain.c,
 * f(x, y) = [sin(x) y, x^2 + exp(y)], whose partials are right but for one entry:
 * d f1/dy = 1.01 exp(y), 1 % too large. The operating point's check of partials against central
 * differences must refuse it, naming the routine and that entry (output 1, input 1).
 *     cc -shared -fPIC -I include -o libwrong_partials.so tests/user/wrong_partials.c -lm */
#include <math.h>
#include <stdio.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int wrong_partials(mbl_user_call *c);

int wrong_partials(mbl_user_call *c)
{
    if (c->nin != 2 || c->nout != 2) {
        snprintf(c->message, c->message_size, "wrong_partials takes 2 inputs [x, y] and gives 2 outputs (%d, %d given)",
                 c->nin, c->nout);
        return 1;
    }
    double x = c->in[0], y = c->in[1];
    c->out[0] = sin(x) * y;
    c->out[1] = x * x + exp(y);
    if (c->partials) {
        c->partials[0] = cos(x) * y;
        c->partials[1] = sin(x);
        c->partials[2] = 2 * x;
        c->partials[3] = 1.01 * exp(y); /* the wrong entry: 1 % off */
    }
    return 0;
}
