/* The version macros of include/mblin/version.h (generated from CMake's project(VERSION)) against
 * the library's own version at run time (mbl_version), through the umbrella header, which must
 * hold every public header (codegen.h and dae.h included) without conflicts. */
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

/* the umbrella brings every family: one name from each public header */
typedef void (*any_fn)(void);
static const any_fn umbrella_names[] = {(any_fn)mbl_symlin_new, (any_fn)mbl_dae_deriv_new, (any_fn)mbl_dae_eval_new,
                                        (any_fn)mbl_sweep_run,  (any_fn)mbl_sweep_write_json, (any_fn)mbl_sim_write_csv,
                                        (any_fn)mbl_report_json, (any_fn)mbl_boundary};

TEST(macros_match_runtime)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", MBL_VERSION_MAJOR, MBL_VERSION_MINOR, MBL_VERSION_PATCH);
    CHECK_MSG(!strcmp(buf, MBL_VERSION_STRING), "%s vs %s", buf, MBL_VERSION_STRING);
    CHECK_MSG(!strcmp(mbl_version(), MBL_VERSION_STRING), "runtime %s, headers %s", mbl_version(), MBL_VERSION_STRING);
    CHECK(MBL_VERSION_NUMBER == MBL_VERSION_MAJOR * 10000 + MBL_VERSION_MINOR * 100 + MBL_VERSION_PATCH);
    CHECK(MBL_VERSION_MINOR < 100 && MBL_VERSION_PATCH < 100);
    for (size_t i = 0; i < sizeof umbrella_names / sizeof umbrella_names[0]; i++) CHECK(umbrella_names[i] != NULL);
}

int main(void)
{
    RUN(macros_match_runtime);
    return test_summary("version");
}
