/* libFuzzer target: arbitrary bytes as a URDF robot (XML), loaded from memory through the public
 * API (mbl_model_load_string: a text whose first non-blank character is '<' is read as URDF, the
 * same path as a .urdf file); when it loads (at most 2000 coordinates): operating point (8 Newton
 * iterations at most), linearization, modes. Every failure must be a documented MBL_E* code with
 * a one-line message and no model left behind. Inputs that do not start with '<' (after blanks)
 * are left to fuzz_model_dae. Seeds: the robots of examples/urdf/ and the URDF texts of tests/mech/.
 * Build and run: see docs/fuzzing.md. */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>

#include "fuzz_model_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t k = 0;
    while (k < size && isspace(data[k])) k++;
    if (k == size || data[k] != '<') return 0;
    return fuzz_model_text(data, size, "fuzz.urdf");
}
