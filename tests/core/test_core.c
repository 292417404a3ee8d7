#include <stdint.h>
#include <string.h>

#include "mblin/status.h"
#include "test.h"

TEST(status_messages)
{
    mbl_status st;
    mbl_status_clear(&st);
    CHECK_EQ_INT(st.code, 0);
    CHECK(st.msg[0] == '\0');
    int rc = mbl_error(&st, MBL_EDIM, "matrix is %d x %d,\nexpected %d", 2, 3, 4);
    CHECK_EQ_INT(rc, MBL_EDIM);
    CHECK_EQ_INT(st.code, MBL_EDIM);
    CHECK(strcmp(st.msg, "matrix is 2 x 3, expected 4") == 0); /* newline folded */
    mbl_error_prefix(&st, "in %s", "solve");
    CHECK(strcmp(st.msg, "in solve: matrix is 2 x 3, expected 4") == 0);
    CHECK_EQ_INT(mbl_error(NULL, MBL_ENOMEM, "x"), MBL_ENOMEM);
    mbl_status_clear(NULL);
    CHECK(strcmp(mbl_strerror(MBL_ESINGULAR), "singular matrix") == 0);
}

TEST(allocation)
{
    CHECK(mbl_alloc_array(SIZE_MAX / 2, 4) == NULL); /* overflow refused */
    void *p = mbl_alloc_array(10, 8);
    CHECK(p != NULL);
    mbl_free(p);
    mbl_alloc_fail_after(1);
    void *a = mbl_malloc(8);
    void *b = mbl_malloc(8);
    CHECK(a != NULL);
    CHECK(b == NULL);
    mbl_alloc_fail_after(-1);
    mbl_free(a);
    mbl_free(NULL);
}

int main(void)
{
    RUN(status_messages);
    RUN(allocation);
    return test_summary("core");
}
