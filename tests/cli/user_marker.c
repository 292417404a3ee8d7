/* A library of user routines for the tests of --allow-user-code (tests/cli/user_code_test.py) and of
 * the Python package's allow_user_code (tests/python/test_user_routines.py).
 *
 * Loading it runs code: its constructor creates the file named by the environment variable
 * MBLIN_TEST_MARKER (when set), so that a test can tell whether a refused model loaded it.
 *
 * cubic_spring: inputs (x, k, k3), output f = -(k x + k3 x^3), with its partials. */
#include <stdio.h>
#include <stdlib.h>

#include "mblin/user.h"

__attribute__((constructor)) static void leave_marker(void)
{
    const char *path = getenv("MBLIN_TEST_MARKER");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs("loaded\n", f);
    fclose(f);
}

MBL_USER_LIBRARY

MBL_USER_EXPORT int cubic_spring(mbl_user_call *c);
MBL_USER_EXPORT int cubic_spring(mbl_user_call *c)
{
    if (c->nin != 3 || c->nout != 1) {
        snprintf(c->message, c->message_size, "expects inputs (x, k, k3) and one output, got %d and %d", c->nin,
                 c->nout);
        return 1;
    }
    const double x = c->in[0], k = c->in[1], k3 = c->in[2];
    c->out[0] = -(k * x + k3 * x * x * x);
    if (c->partials) {
        c->partials[0] = -(k + 3.0 * k3 * x * x);
        c->partials[1] = -x;
        c->partials[2] = -x * x * x;
    }
    return 0;
}
