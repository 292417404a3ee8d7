/* A test library (tests/user/tests.cmake): routine err_routine fails with status 3 and the
 * message "table lookup outside 0..10"; mblin must pass that line on, naming the routine.
 *     cc -shared -fPIC -I include -o liberr_routine.so tests/user/err_routine.c */
#include <stdio.h>

#include "mblin/user.h"

MBL_USER_LIBRARY

MBL_USER_EXPORT int err_routine(mbl_user_call *c);

int err_routine(mbl_user_call *c)
{
    snprintf(c->message, c->message_size, "table lookup outside 0..10");
    return 3;
}
