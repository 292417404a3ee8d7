/* Shared body of the model-reader libFuzzer targets (fuzz_model_dae.c, fuzz_model_mech.c): load
 * the bytes as a model file from memory; when it loads, find the operating point with few Newton
 * iterations and linearize it (augmented method), then compute the modes. Every failure must be a
 * documented negative code with a one-line message; nothing may crash, leak, hang, abort or print.
 * Also used by fuzz_urdf.c and fuzz_mtx.c. */
#ifndef FUZZ_MODEL_COMMON_H
#define FUZZ_MODEL_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "mblin/model.h"

/* The largest example (examples/fourbar_N300.yaml) is 129 kB; longer inputs only slow down. */
enum { FUZZ_MODEL_MAX_INPUT = 1 << 17 };

static inline void fuzz_check_status(int rc, const mbl_status *st)
{
    if (rc >= 0 || rc < MBL_EARG) abort();          /* a documented MBL_E* code */
    if (st->code != rc || !st->msg[0]) abort();    /* with a message */
    if (strchr(st->msg, '\n')) abort();            /* of one line */
}

/* The library never prints: while it runs, file descriptors 1 and 2 are a memory file that must
 * stay empty (libxml2 printed iconv failures on stderr, found by fuzz_urdf). The sanitizers report
 * on the real stderr (__sanitizer_set_report_fd). */
static int fuzz_quiet_fd = -1, fuzz_saved_fd = -1, fuzz_saved_out = -1;

static inline void fuzz_quiet_begin(void)
{
    if (fuzz_quiet_fd < 0) {
        fuzz_quiet_fd = memfd_create("fuzz_stderr", 0);
        fuzz_saved_fd = dup(2);
        fuzz_saved_out = dup(1);
        if (fuzz_quiet_fd < 0 || fuzz_saved_fd < 0 || fuzz_saved_out < 0) abort();
        __sanitizer_set_report_fd((void *)(intptr_t)fuzz_saved_fd);
    }
    fflush(stderr);
    fflush(stdout);
    if (dup2(fuzz_quiet_fd, 2) < 0 || dup2(fuzz_quiet_fd, 1) < 0) abort();
}

static inline void fuzz_quiet_end(void)
{
    fflush(stderr);
    fflush(stdout);
    if (dup2(fuzz_saved_fd, 2) < 0 || dup2(fuzz_saved_out, 1) < 0) abort();
    off_t n = lseek(fuzz_quiet_fd, 0, SEEK_CUR);
    if (n > 0) {
        char buf[512];
        ssize_t k = pread(fuzz_quiet_fd, buf, sizeof buf - 1, 0);
        buf[k > 0 ? k : 0] = '\0';
        fprintf(stderr, "the library printed %ld bytes on stdout or stderr: %s\n", (long)n, buf);
        abort();
    }
}

static inline int fuzz_model_run(const uint8_t *data, size_t size, const char *name);

/* Load the bytes as the model file `name` (from memory), then the operating point, linear
 * model and modes when it loads; nothing may be printed. */
static inline int fuzz_model_text(const uint8_t *data, size_t size, const char *name)
{
    fuzz_quiet_begin();
    int rc = fuzz_model_run(data, size, name);
    fuzz_quiet_end();
    return rc;
}

static inline int fuzz_model_run(const uint8_t *data, size_t size, const char *name)
{
    if (size > FUZZ_MODEL_MAX_INPUT) return 0;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    int rc = mbl_model_load_string((const char *)data, size, name, NULL, 0, &md, &st);
    if (rc) {
        fuzz_check_status(rc, &st);
        if (md) abort();
        return 0;
    }
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    if (info.ncoord > 2000) { /* keep every run short */
        mbl_model_free(md);
        return 0;
    }
    mbl_opoint_options oo;
    mbl_opoint_options_default(&oo);
    oo.max_iter = 8;
    mbl_point *pt = NULL;
    rc = mbl_operating_point(md, &oo, &pt, &st);
    if (rc) {
        fuzz_check_status(rc, &st);
    } else {
        mbl_lin_options lo;
        mbl_lin_options_default(&lo);
        mbl_linear *lin = NULL;
        rc = mbl_linearize(md, pt, &lo, &lin, &st);
        if (rc) {
            fuzz_check_status(rc, &st);
        } else {
            mbl_modal_options mo;
            mbl_modal_options_default(&mo);
            mbl_modes *modes = NULL;
            rc = mbl_modal(lin, &mo, &modes, &st);
            if (rc) fuzz_check_status(rc, &st);
            mbl_modes_free(modes);
        }
        mbl_linear_free(lin);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
    return 0;
}

/* want_mech: 1 for the mechanism target (inputs must say `mechanism`), 0 for the dae target
 * (inputs that say `mechanism` are left to the other target). */
static inline int fuzz_model_one(const uint8_t *data, size_t size, int want_mech)
{
    int mech = memmem(data, size, "mechanism", 9) != NULL;
    if (mech != want_mech) return 0;
    return fuzz_model_text(data, size, "fuzz.yaml");
}

#endif
