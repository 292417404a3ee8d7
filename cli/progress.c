/* Progress on stderr, SIGINT, and the outputs of an interrupted run (cli/cli.h; docs/cli.md,
 * "Progress and Ctrl-C").
 *
 * The tool installs one progress callback (mblin/progress.h) for the whole run. On a terminal
 * (stderr) it draws one line, redrawn at most every PROGRESS_BAR_PERIOD seconds once the run has
 * taken PROGRESS_BAR_DELAY seconds (short runs show nothing); with --progress it prints a line at
 * most every PROGRESS_LINE_PERIOD seconds instead, for logs and pipes. SIGINT sets a flag that the
 * callback returns, so the library stops at its next report and unwinds (MBL_ECANCELLED); a second
 * SIGINT ends the process at once (SA_RESETHAND). From the signal on, what the command would still
 * write on stderr goes to /dev/null (a failure caused by the interrupt, "cannot write: Interrupted
 * system call", says nothing new). After the command, an interrupted run removes
 * the files it wrote (those opened through cli_output_file, and the files made or changed in a
 * directory of cli_mkdirs, which is removed too when the run made it) and exits with 130 after one
 * line on stderr. When stdout is a terminal too, it becomes a stream that erases the progress line
 * before each write, so that results never start on the line of the bar. */
#define _GNU_SOURCE /* fopencookie */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mblin/progress.h"
#include "mblin/report.h"
#include "par/par.h"

#define PROGRESS_BAR_DELAY 0.5   /* s before the terminal line is first drawn */
#define PROGRESS_BAR_PERIOD 0.1  /* s between two redraws of the terminal line */
#define PROGRESS_LINE_PERIOD 1.0 /* s between two lines of --progress */
#define PROGRESS_ETA_MIN 0.01    /* the fraction of a stage done before its time left is estimated */
#define MAX_OUTPUTS 64

/* the outputs of the run: files, and directories with what they held before */
typedef struct entry {
    char *name;
    struct timespec mtime;
} entry;
static struct output {
    char *path;
    int is_dir, made; /* a directory: made by this run */
    entry *before;
    int nbefore;
} *outputs; /* MAX_OUTPUTS of them, allocated at the first (most runs write none: 2 KiB less of
               zeroed statics, whose pages the statics after them shared less) */
static volatile sig_atomic_t interrupted;
static int noutputs;
static int devnull_fd = -1, saved_err = -1; /* stderr's silence after SIGINT, and stderr itself */
static int lines_mode, bar_mode, bar_shown;
static double t_start, t_last;
static char stage_now[64];
static double sweep_done, sweep_total; /* a sweep's points: shown instead of its points' stages */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
    if (devnull_fd >= 0 && saved_err >= 0) dup2(devnull_fd, 2); /* async-signal-safe */
}

int cli_interrupted(void) { return interrupted != 0; }

void cli_progress_clear(void)
{
    if (!bar_shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    bar_shown = 0;
}

/* "load: compile 45%", "sweep 12/40 points", "point 3" */
static void describe(char *buf, size_t len, const char *stage, double done, double total)
{
    if (sweep_total > 0) snprintf(buf, len, "sweep %.0f/%.0f points", sweep_done, sweep_total);
    else if (total > 0) snprintf(buf, len, "%s %.0f%%", stage, 100.0 * done / total);
    else snprintf(buf, len, "%s", stage);
}

static int callback(void *user, const char *stage, double done, double total)
{
    (void)user;
    if (interrupted) return 1;
    if (!strcmp(stage, "sweep")) sweep_done = done, sweep_total = total;
    /* the stage named if the run is interrupted: copied only when it changes (a sweep reports
     * every point; snprintf on each call cost about 0.8 k instructions a point) */
    const char *s = sweep_total > 0 ? "the sweep" : stage;
    if (strcmp(stage_now, s)) {
        size_t n = strlen(s);
        if (n >= sizeof stage_now) n = sizeof stage_now - 1;
        memcpy(stage_now, s, n);
        stage_now[n] = '\0';
    }
    if (!lines_mode && !bar_mode) return 0;
    double t = now(), el = t - t_start;
    char what[96], left[48] = "";
    double f = sweep_total > 0 ? sweep_done / sweep_total : total > 0 ? done / total : -1;
    /* the time left at the rate since the start (the stage's share of the run's time so far) */
    if (f >= PROGRESS_ETA_MIN && f < 1 && el >= PROGRESS_LINE_PERIOD)
        snprintf(left, sizeof left, "; about %.0f s to go", el * (1 - f) / f);
    if (lines_mode && t - t_last >= PROGRESS_LINE_PERIOD) {
        describe(what, sizeof what, stage, done, total);
        fprintf(stderr, "mblin: progress: %s (%.1f s%s)\n", what, el, left);
        fflush(stderr);
        t_last = t;
    } else if (bar_mode && el >= PROGRESS_BAR_DELAY && t - t_last >= PROGRESS_BAR_PERIOD) {
        describe(what, sizeof what, stage, done, total);
        char bar[24];
        int w = 20, k = f >= 0 ? (int)(f * w + 0.5) : (int)(el / PROGRESS_BAR_PERIOD) % w;
        for (int i = 0; i < w; i++) bar[i] = f >= 0 ? (i < k ? '#' : '.') : (i == k ? '#' : '.');
        bar[w] = '\0';
        fprintf(stderr, "\r\033[Kmblin: [%s] %s (%.1f s%s)", bar, what, el, left);
        fflush(stderr);
        bar_shown = 1;
        t_last = t;
    }
    return 0;
}

/* stdout on a terminal, while a bar may be drawn: the bar erased before each write */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    cli_progress_clear();
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(1, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return done ? (ssize_t)done : -1;
        done += (size_t)w;
    }
    return (ssize_t)n;
}

void cli_progress_begin(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C ends the process */
    devnull_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    saved_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
    sigaction(SIGINT, &sa, NULL);
    bar_mode = isatty(2);
    if (bar_mode && isatty(1)) {
        FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){NULL, out_write, NULL, NULL});
        if (f && !setvbuf(f, NULL, _IOLBF, BUFSIZ)) stdout = f;
        else if (f) fclose(f);
    }
    t_start = t_last = now();
    mbl_progress_set(callback, NULL);
}

void cli_progress_lines(void)
{
    const mbl_par *par = cli_par_loaded(); /* under mpirun: rank 0's lines only */
    if (par && par->size() > 1 && par->rank() != 0) return;
    lines_mode = 1;
    bar_mode = 0;
}

static struct output *new_output(const char *path)
{
    if (noutputs == MAX_OUTPUTS) return NULL;
    if (!outputs && !(outputs = calloc(MAX_OUTPUTS, sizeof *outputs))) return NULL;
    struct output *o = &outputs[noutputs];
    memset(o, 0, sizeof *o);
    if (!(o->path = strdup(path))) return NULL;
    noutputs++;
    return o;
}

FILE *cli_output_file(const char *path)
{
    if (path) new_output(path);
    snprintf(stage_now, sizeof stage_now, "the writing of the outputs");
    mbl_status st;
    mbl_status_clear(&st);
    return mbl_output_open(path, &st);
}

void cli_output_dir(const char *dir)
{
    struct stat sb;
    int exists = stat(dir, &sb) == 0;
    struct output *o = new_output(dir);
    if (!o) return;
    o->is_dir = 1;
    o->made = !exists;
    snprintf(stage_now, sizeof stage_now, "the writing of the outputs");
    DIR *d = exists ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &sb) || !S_ISREG(sb.st_mode)) continue;
        entry *nb = realloc(o->before, (size_t)(o->nbefore + 1) * sizeof *nb);
        if (!nb) break;
        o->before = nb;
        if (!(nb[o->nbefore].name = strdup(e->d_name))) break;
        nb[o->nbefore++].mtime = sb.st_mtim;
    }
    if (d) closedir(d);
}

/* the files of directory o that the run made or changed */
static void remove_new_files(const struct output *o)
{
    DIR *d = opendir(o->path);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[4096];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", o->path, e->d_name);
        if (stat(p, &sb) || !S_ISREG(sb.st_mode)) continue;
        int old = 0;
        for (int i = 0; i < o->nbefore && !old; i++)
            old = !strcmp(o->before[i].name, e->d_name) && o->before[i].mtime.tv_sec == sb.st_mtim.tv_sec &&
                  o->before[i].mtime.tv_nsec == sb.st_mtim.tv_nsec;
        if (!old) unlink(p);
    }
    if (d) closedir(d);
    if (o->made) rmdir(o->path); /* only when empty */
}

int cli_progress_end(int code)
{
    signal(SIGINT, SIG_IGN); /* the cleanup is not interrupted */
    int stopped = interrupted != 0;
    if (stopped && saved_err >= 0) dup2(saved_err, 2); /* stderr back */
    if (stopped && bar_mode) bar_shown = 1; /* erased into /dev/null: erase it on the terminal */
    cli_progress_clear();
    mbl_progress_set(NULL, NULL);
    for (int i = noutputs - 1; i >= 0; i--) {
        struct output *o = &outputs[i];
        if (stopped && o->is_dir) remove_new_files(o);
        else if (stopped) unlink(o->path);
        for (int k = 0; k < o->nbefore; k++) free(o->before[k].name);
        free(o->before);
        free(o->path);
    }
    noutputs = 0;
    if (devnull_fd >= 0) close(devnull_fd);
    if (saved_err >= 0) close(saved_err);
    devnull_fd = saved_err = -1;
    if (!stopped) return code;
    fflush(stdout);
    (void)code;
    fprintf(stderr, "mblin: interrupted (SIGINT) during %s; partial outputs removed\n", stage_now[0] ? stage_now : "the run");
    return 130;
}
