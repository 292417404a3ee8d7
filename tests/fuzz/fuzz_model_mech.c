/* libFuzzer target: arbitrary bytes as a `model: mechanism` file (bodies, joints, forces),
 * loaded from memory; when it loads: operating point (8 Newton iterations at most),
 * linearization, modes. Only inputs that mention `mechanism` are tried. Seeds: the YAML files
 * of examples/mech/. Build and run: see docs/fuzzing.md. */
#define _GNU_SOURCE /* memmem */
#include "fuzz_model_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_model_one(data, size, 1); }
