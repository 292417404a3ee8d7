/* A test library (tests/user/tests.cmake): it says it was compiled for another ABI version
 * (MBL_USER_ABI_VERSION + 1), which mblin must refuse when it loads it, naming the library.
 *     cc -shared -fPIC -I include -o libbad_abi.so tests/user/bad_abi.c */
#include "mblin/user.h"

MBL_USER_EXPORT int mblin_user_abi(void);
MBL_USER_EXPORT int bad_abi(mbl_user_call *c);

int mblin_user_abi(void) { return MBL_USER_ABI_VERSION + 1; }

/* a routine that would work (the refusal must come from the version alone) */
int bad_abi(mbl_user_call *c)
{
    for (int k = 0; k < c->nout; k++) c->out[k] = k < c->nin ? c->in[k] : 0;
    return 0;
}
