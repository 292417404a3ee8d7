/* libFuzzer target: arbitrary bytes as the four files of a CalculiX job (src/fe/calculix.c), the
 * input deck, job.dof, job.sti and job.mas in that order, separated by lines "====" (tests/fuzz/
 * fuzz_fe_common.h). Seeds: small jobs ccx wrote (tests/fuzz/corpus/fuzz_calculix/). Build and run:
 * see docs/fuzzing.md. */
#include "fuzz_fe_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const char *names[] = {"job.inp", "job.dof", "job.sti", "job.mas"};
    fuzz_fe_init(names, 4);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_FE_MAX_INPUT) return 0;
    fuzz_fe_write(data, size, 4);
    char job[128];
    snprintf(job, sizeof job, "%s/job", fuzz_fe_dir);
    fe_part p;
    mbl_status st;
    mbl_status_clear(&st);
    fuzz_quiet_begin();
    int rc = fe_read_calculix(job, &p, &st);
    fuzz_quiet_end();
    fuzz_fe_check(rc, &p, &st, 1);
    return 0;
}
