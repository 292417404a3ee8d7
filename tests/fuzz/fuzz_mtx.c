/* libFuzzer target: arbitrary bytes as one Matrix Market file of a modal body (src/mech/modal_body.c).
 * The model reader takes the matrices only as files, so the bytes after the first are written to a
 * file in a temporary directory of this process, and a fixed one-body modal pendulum is loaded from
 * memory (mbl_model_load_string) with that file in the slot the first byte selects (mass_matrix,
 * stiffness, Sb, c1, c2, P, or a marker's shapes); the other slots are the 3-mode files of
 * tests/fuzz/modal/ (examples/beam_to_modal.py, one element). When it loads: operating point (8
 * Newton iterations at most), linearization, modes. Every failure must be a documented MBL_E*
 * code with a one-line message. Seeds: the example's and the 3-mode files, each behind the byte of
 * its slot, and the hostile files of tests/mech/test_hostile_files.c. Build and run: see
 * docs/fuzzing.md. */
#define _GNU_SOURCE /* memmem, mkdtemp */
#include <unistd.h>

#include "fuzz_model_common.h"

#ifndef FUZZ_MODAL_DIR
#error "FUZZ_MODAL_DIR (tests/fuzz/modal) must be defined"
#endif

enum { NSLOT = 8, MTX_MAX_INPUT = 1 << 16 };
/* the slots, in the order of the selecting byte (mod NSLOT): the YAML key of each and its file */
static const char *slot_file[NSLOT] = {"l1_M.mtx", "l1_K.mtx", "l1_Sb.mtx", "l1_c1.mtx",
                                       "l1_c2.mtx", "l1_P.mtx", "l1_node1.mtx", "l1_node2.mtx"};
static char tmpdir[64], fuzzed[96];

/* at the end of the process: the directory and its one file */
static void remove_tmpdir(void)
{
    unlink(fuzzed);
    rmdir(tmpdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fuzz_mtx.XXXXXX");
    if (!mkdtemp(tmpdir)) abort();
    snprintf(fuzzed, sizeof fuzzed, "%s/fuzzed.mtx", tmpdir);
    atexit(remove_tmpdir);
    return 0;
}

static const char *path(int slot, int which, char *buf, size_t len)
{
    if (slot == which) return fuzzed;
    snprintf(buf, len, "%s/%s", FUZZ_MODAL_DIR, slot_file[which]);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MTX_MAX_INPUT) return 0;
    int slot = data[0] % NSLOT;
    FILE *f = fopen(fuzzed, "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    if (fclose(f)) abort();
    char p[NSLOT][512];
    const char *q[NSLOT];
    for (int k = 0; k < NSLOT; k++) q[k] = path(slot, k, p[k], sizeof p[k]);
    char *text = NULL;
    int n = asprintf(&text,
                     "model: mechanism\n"
                     "name: fuzzed modal pendulum\n"
                     "space: planar\n"
                     "ground:\n"
                     "  markers:\n"
                     "    o: {position: [0, 0]}\n"
                     "bodies:\n"
                     "  link:\n"
                     "    position: [0, 0]\n"
                     "    angle: -pi/2\n"
                     "    type: modal\n"
                     "    mass: 424.11500823462211\n"
                     "    s0: [848.23001646924422, 0]\n"
                     "    J0: 2261.9467105846511\n"
                     "    mass_matrix: %s\n"
                     "    stiffness: %s\n"
                     "    Sb: %s\n"
                     "    c1: %s\n"
                     "    c2: %s\n"
                     "    P: %s\n"
                     "    damping: {alpha: 0.01, beta: 0.001}\n"
                     "    markers:\n"
                     "      first: {position: [0, 0], shapes: %s}\n"
                     "      last: {position: [4, 0], shapes: %s}\n"
                     "joints:\n"
                     "  pin: {type: revolute, i: first, j: o}\n"
                     "forces:\n"
                     "  weight: {type: gravity, g: [0, -9.81]}\n"
                     "outputs:\n"
                     "  tip_x: \"DX(last, o)\"\n"
                     "linearize:\n"
                     "  at: equilibrium\n",
                     q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
    if (n < 0) abort();
    char name[96];
    snprintf(name, sizeof name, "%s/fuzz.yaml", tmpdir);
    fuzz_model_text((const uint8_t *)text, (size_t)n, name);
    free(text);
    return 0;
}
