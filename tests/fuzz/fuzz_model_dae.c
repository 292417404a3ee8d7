/* libFuzzer target: arbitrary bytes as a `model: dae` file (YAML or JSON), loaded from memory;
 * when it loads: operating point (8 Newton iterations at most), linearization, modes.
 * Inputs that mention `mechanism` belong to fuzz_model_mech. Seeds: the YAML files of examples/.
 * Build and run: see docs/fuzzing.md. */
#define _GNU_SOURCE /* memmem */
#include "fuzz_model_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_model_one(data, size, 0); }
