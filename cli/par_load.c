/* The MPI plugin libmblin_par.so, loaded only when needed (src/par/par.h, docs/parallel.md).
 *
 * The tool is linked statically and never links MPI: Open MPI's libraries and its singleton
 * MPI_Init would cost tens of milliseconds on every run. Under mpirun/mpiexec (the launcher puts
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK into each rank's environment) main's bracket
 * cli_par_begin loads the plugin first, from the directory of the executable (the build tree) or
 * the install's libdir, and initializes MPI; main runs the command on every rank, and cli_par_end
 * at the end agrees on the exit status. A command can also ask for the plugin itself
 * (cli_par_require, e.g. for an MPI eigensolver).
 *
 * Output under P > 1 ranks: results are written by rank 0 only (stdout of the other ranks goes to
 * /dev/null); every rank's stderr is kept in an unlinked temporary file, and at the end rank 0
 * prints its own, then each line of another rank that rank 0 did not print itself, as
 * "mblin: rank R: ..." (the same error on every rank is printed once). Every rank exits with the
 * largest exit status of all ranks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "par/par.h"

#ifndef MBLIN_PAR_LIBDIR
#define MBLIN_PAR_LIBDIR "/usr/local/lib" /* the install's libdir (cmake/par.cmake) */
#endif
#ifndef MBLIN_PAR_RELLIBDIR
#define MBLIN_PAR_RELLIBDIR "lib" /* the same relative to the prefix: an install moved elsewhere */
#endif

static const mbl_par *par;   /* loaded and initialized */
static int saved_err = -1;   /* the real stderr while it is captured */
static int captured;         /* stderr goes to a temporary file */

/* 1 when launched by mpirun/mpiexec */
static int launched(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

const mbl_par *cli_par_loaded(void) { return par; }

/* dlopen the plugin: next to the executable (the build tree), then PREFIX/LIBDIR relative to it
 * (bin/../lib: an installed tree, also when moved), then the install's libdir. 0, or -1 with a
 * message. */
static int load(const mbl_par **out, char *msg, size_t msglen)
{
    char self[PATH_MAX], tried[3][PATH_MAX + 64];
    int ntried = 0;
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l > 0) {
        self[l] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(tried[ntried++], sizeof tried[0], "%s/%s", self, MBL_PAR_LIBNAME);
            snprintf(tried[ntried++], sizeof tried[0], "%s/../%s/%s", self, MBLIN_PAR_RELLIBDIR, MBL_PAR_LIBNAME);
        }
    }
    snprintf(tried[ntried++], sizeof tried[0], "%s/%s", MBLIN_PAR_LIBDIR, MBL_PAR_LIBNAME);
    const char *why = NULL;
    for (int i = 0; i < ntried; i++) {
        if (access(tried[i], F_OK) != 0) continue;
        /* RTLD_GLOBAL: Open MPI's own components (dlopen'ed by MPI_Init) resolve libmpi's symbols */
        void *h = dlopen(tried[i], RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
            why = dlerror();
            snprintf(msg, msglen, "%s could not be loaded (%s)", tried[i], why ? why : "dlopen failed");
            return -1;
        }
        const mbl_par *t = dlsym(h, MBL_PAR_SYMBOL);
        if (!t || t->abi != MBL_PAR_ABI) {
            snprintf(msg, msglen, "%s is not this version's MPI plugin (%s)", tried[i],
                     t ? "another interface version" : "no entry table");
            return -1;
        }
        *out = t;
        return 0;
    }
    char where[3 * (PATH_MAX + 64) + 16] = "";
    for (int i = 0; i < ntried; i++) {
        size_t wl = strlen(where);
        snprintf(where + wl, sizeof where - wl, "%s%s", i == 0 ? "" : i == ntried - 1 ? " and " : ", ", tried[i]);
    }
    snprintf(msg, msglen, "the MPI plugin %s was not found (looked in %s; build with -DMBLIN_MPI=ON, which needs "
             "libopenmpi-dev)", MBL_PAR_LIBNAME, where);
    return -1;
}

/* Rank 0 keeps stdout; the others' goes to /dev/null. Every rank's stderr to a temporary file. */
static void redirect(int rank)
{
    if (rank != 0) {
        fflush(stdout);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, 1);
            close(nul);
        }
    }
    const char *dir = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/mblin-rank-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(tmpl);
    if (fd < 0) return; /* stderr stays as it is: every rank prints its own */
    unlink(tmpl);
    fflush(stderr);
    saved_err = dup(2);
    if (saved_err < 0 || dup2(fd, 2) < 0) {
        if (saved_err >= 0) close(saved_err);
        saved_err = -1;
        close(fd);
        return;
    }
    close(fd);
    captured = 1;
}

int cli_par_require(const char *why)
{
    if (par) return 0;
    char msg[PATH_MAX * 4];
    const mbl_par *t = NULL;
    if (load(&t, msg, sizeof msg)) {
        fprintf(stderr, "mblin: %s, but %s\n", why, msg);
        return 1;
    }
    mbl_status st;
    mbl_status_clear(&st);
    if (t->init(&st)) {
        fprintf(stderr, "mblin: %s: %s\n", why, st.msg);
        return 1;
    }
    par = t;
    if (par->size() > 1) redirect(par->rank());
    return 0;
}

/* The captured stderr of this rank (malloc'ed, *len bytes). */
static char *read_captured(size_t *len)
{
    *len = 0;
    fflush(stderr);
    off_t end = lseek(2, 0, SEEK_END);
    if (end <= 0 || lseek(2, 0, SEEK_SET) != 0) return NULL;
    char *b = malloc((size_t)end + 1);
    if (!b) return NULL;
    size_t got = 0;
    while (got < (size_t)end) {
        ssize_t k = read(2, b + got, (size_t)end - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    *len = got;
    return b;
}

/* Is the line [s, s + n) one of the lines of text (t, tl bytes)? */
static int has_line(const char *t, size_t tl, const char *s, size_t n)
{
    for (size_t i = 0; i < tl;) {
        const char *e = memchr(t + i, '\n', tl - i);
        size_t ll = e ? (size_t)(e - (t + i)) : tl - i;
        if (ll == n && !memcmp(t + i, s, n)) return 1;
        i += ll + 1;
    }
    return 0;
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k <= 0) return;
        s += k, n -= (size_t)k;
    }
}

/* Collective: the ranks' stderr to rank 0's (see the top of the file). */
static void report_errors(void)
{
    size_t len = 0;
    char *mine = read_captured(&len);
    int size = par->size(), rank = par->rank();
    size_t *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
    char *all = NULL;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = par->gather_text(mine ? mine : "", mine ? len : 0, &all, lens, &st);
    /* back to the real stderr */
    fflush(stderr);
    dup2(saved_err, 2);
    close(saved_err);
    saved_err = -1, captured = 0;
    if (rank == 0) {
        if (mine) write_all(2, mine, len);
        if (rc) fprintf(stderr, "mblin: the other ranks' messages are lost: %s\n", st.msg);
        size_t off = 0;
        for (int r = 0; all && lens && r < size; off += lens[r], r++) {
            if (r == 0) continue;
            const char *t = all + off;
            for (size_t i = 0; i < lens[r];) {
                const char *e = memchr(t + i, '\n', lens[r] - i);
                size_t ll = e ? (size_t)(e - (t + i)) : lens[r] - i;
                const char *line = t + i;
                size_t skip = ll >= 7 && !memcmp(line, "mblin: ", 7) ? 7 : 0;
                /* rank 0 printed it already, as it is or naming this rank (the sweep's message) */
                char named[1024];
                int nl = snprintf(named, sizeof named, "mblin: rank %d: %.*s", r, (int)(ll - skip), line + skip);
                if (ll && !has_line(mine ? mine : "", mine ? len : 0, line, ll) &&
                    !(nl > 0 && (size_t)nl < sizeof named && has_line(mine ? mine : "", mine ? len : 0, named, (size_t)nl)))
                    fprintf(stderr, "mblin: rank %d: %.*s\n", r, (int)(ll - skip), line + skip);
                i += ll + 1;
            }
        }
    }
    mbl_free(all);
    free(lens);
    free(mine);
}

int cli_par_begin(void)
{
    if (!launched()) return 0;
    cli_thread_arenas(); /* MPI's threads start with it (cli/startup.c) */
    return cli_par_require("launched by mpirun");
}

int cli_par_end(int code)
{
#ifdef MBLIN_CLI_FAST_EXIT
    /* The static tool ends without the libraries' exit handlers: the command has freed what it
     * allocated and written its files, the streams are flushed here, and what those handlers
     * would do (OpenBLAS unmapping its 128 MiB buffer, libgfortran closing its units) the kernel
     * does at exit anyway; the handlers cost about 1 ms of a 10 ms small-model run on a virtual
     * machine (docs/benchmarks.md). Not in the sanitized builds (LeakSanitizer runs at exit). */
    if (!par) {
        fflush(NULL);
        _exit(code);
    }
#endif
    if (!par) return code;
    fflush(stdout);
    if (captured) report_errors();
    return par->finalize(code);
}
