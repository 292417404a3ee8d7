/* A test library (tests/user/tests.cmake): f(x, y) = [sin(x) y, x^2 + exp(y)] as routine `plain`
 * with its partials
 *     d f0/dx = cos(x) y, d f0/dy = sin(x), d f1/dx = 2 x, d f1/dy = exp(y),
 * and the same function without partials as routine `plain_nopartials` (it refuses to be asked
 * for them: a model must say `partials: no` for it).
 *     cc -shared -fPIC -I include -o libplain.so tests/user/plain.c -lm */
#include <math.h>
#include <stdio.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int plain(mbl_user_call *c);
MBL_USER_EXPORT int plain_nopartials(mbl_user_call *c);

static int values(mbl_user_call *c)
{
    if (c->nin != 2 || c->nout != 2) {
        snprintf(c->message, c->message_size, "%s takes 2 inputs [x, y] and gives 2 outputs (%d, %d given)", c->name, c->nin,
                 c->nout);
        return 1;
    }
    double x = c->in[0], y = c->in[1];
    c->out[0] = sin(x) * y;
    c->out[1] = x * x + exp(y);
    return 0;
}

int plain(mbl_user_call *c)
{
    int rc = values(c);
    if (rc || !c->partials) return rc;
    double x = c->in[0], y = c->in[1];
    c->partials[0] = cos(x) * y;
    c->partials[1] = sin(x);
    c->partials[2] = 2 * x;
    c->partials[3] = exp(y);
    return 0;
}

int plain_nopartials(mbl_user_call *c)
{
    if (c->partials) {
        snprintf(c->message, c->message_size, "plain_nopartials has no partials (declare it with partials: no)");
        return 2;
    }
    return values(c);
}
