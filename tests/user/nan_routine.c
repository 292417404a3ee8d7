/* A test library (tests/user/tests.cmake): routine nan_routine returns 0 (success) with a NaN as
 * its output 0 (its other outputs: its first input); mblin must refuse the evaluation naming the
 * routine and the output.
 *     cc -shared -fPIC -I include -o libnan_routine.so tests/user/nan_routine.c */
#include <math.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int nan_routine(mbl_user_call *c);

int nan_routine(mbl_user_call *c)
{
    for (int k = 0; k < c->nout; k++) c->out[k] = k == 0 ? NAN : c->nin ? c->in[0] : 0;
    if (c->partials)
        for (int k = 0; k < c->nout * c->nin; k++) c->partials[k] = 0;
    return 0;
}
