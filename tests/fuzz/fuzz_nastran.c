/* libFuzzer target: arbitrary bytes as a Nastran punch file and a bulk data file (src/fe/
 * nastran.c), separated by a line "====" (tests/fuzz/fuzz_fe_common.h): the DMIG entries KAAX and
 * MAAX of the punch file, with the GRID entries of the bulk file when there is one, else of the
 * punch file. Seeds: the three field formats (tests/fuzz/corpus/fuzz_nastran/). Build and run: see
 * docs/fuzzing.md. */
#include "fuzz_fe_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const char *names[] = {"part.pch", "part.dat"};
    fuzz_fe_init(names, 2);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_FE_MAX_INPUT) return 0;
    fuzz_fe_write(data, size, 2);
    int bulk = access(fuzz_fe_path[1], F_OK) == 0;
    fe_part p;
    mbl_status st;
    mbl_status_clear(&st);
    fuzz_quiet_begin();
    int rc = fe_read_nastran(fuzz_fe_path[0], "KAAX", "MAAX", bulk ? fuzz_fe_path[1] : NULL, &p, &st);
    fuzz_quiet_end();
    fuzz_fe_check(rc, &p, &st, 1);
    return 0;
}
