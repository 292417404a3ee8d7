/* A test library (tests/user/tests.cmake) without mblin_user_abi (no MBL_USER_LIBRARY): mblin
 * must refuse it when it loads it, naming the library.
 *     cc -shared -fPIC -I include -o libno_abi.so tests/user/no_abi.c */
#include "mblin/user.h"

MBL_USER_EXPORT int no_abi(mbl_user_call *c);

int no_abi(mbl_user_call *c)
{
    for (int k = 0; k < c->nout; k++) c->out[k] = k < c->nin ? c->in[k] : 0;
    return 0;
}
