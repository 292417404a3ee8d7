/* The version macros of include/mblin/version.h (generated from CMake's project(VERSION)) against
 * the library's own version at run time (mbl_version), through the umbrella header, which must
 * hold every public header (codegen.h and dae.h included) without conflicts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

/* the umbrella brings every family: one name from each public header (a compile-time check: this
 * file does not build when one is missing) */
typedef void (*any_fn)(void);
static const any_fn umbrella_names[] = {(any_fn)mbl_symlin_new, (any_fn)mbl_dae_deriv_new, (any_fn)mbl_dae_eval_new,
                                        (any_fn)mbl_sweep_run,  (any_fn)mbl_sweep_write_json, (any_fn)mbl_sim_write_csv,
                                        (any_fn)mbl_report_json, (any_fn)mbl_boundary};

/* The version as CMakeLists.txt writes it ("project(mblin VERSION x.y.z"), read as text. */
static int project_version(char *out, size_t size)
{
    char *text = test_slurp("CMakeLists.txt");
    const char *p = text ? strstr(text, "project(mblin VERSION ") : NULL;
    int ok = 0;
    if (p) {
        p += strlen("project(mblin VERSION ");
        size_t n = strspn(p, "0123456789.");
        if (n > 0 && n < size) memcpy(out, p, n), out[n] = 0, ok = 1;
    }
    free(text);
    return ok;
}

TEST(macros_match_runtime)
{
    (void)umbrella_names;
    char want[32];
    CHECK(project_version(want, sizeof want));
    CHECK_MSG(!strcmp(want, MBL_VERSION_STRING), "CMakeLists.txt %s, version.h %s", want, MBL_VERSION_STRING);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", MBL_VERSION_MAJOR, MBL_VERSION_MINOR, MBL_VERSION_PATCH);
    CHECK_MSG(!strcmp(buf, MBL_VERSION_STRING), "%s vs %s", buf, MBL_VERSION_STRING);
    CHECK_MSG(!strcmp(mbl_version(), MBL_VERSION_STRING), "runtime %s, headers %s", mbl_version(), MBL_VERSION_STRING);
    CHECK(MBL_VERSION_NUMBER == MBL_VERSION_MAJOR * 10000 + MBL_VERSION_MINOR * 100 + MBL_VERSION_PATCH);
    CHECK(MBL_VERSION_MINOR < 100 && MBL_VERSION_PATCH < 100);
}

int main(void)
{
    RUN(macros_match_runtime);
    return test_summary("version");
}
