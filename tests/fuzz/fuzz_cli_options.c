/* libFuzzer target: the command lines of `mblin sweep`, `freqresp`, `simulate` and `validate`
 * (cli/options.c, cli/cmd_sweep.c, cli/cmd_simulate.c), run through the CLI's own objects as
 * main() runs them (the command's function with argv), and the content of `simulate --sweep
 * FILE.csv`.
 *
 * Input: lines. The first is the command (sweep, freqresp, simulate or validate; anything else is
 * skipped), each further line one argument, up to a line "%%CSV": what follows it is written to
 * s.csv. The command runs (chdir, and back after it) in a temporary directory of the process that
 * holds m.yaml, written anew for each input (the slider-pendulum of examples/slider_pendulum.yaml
 * with an output named energy), and s.csv when the input has one; whatever the command writes
 * there is removed after each input. Inputs with an argument that could name a path outside it
 * (a '/' first or after a non-alphanumeric byte, "-o" with a '/', "..") are skipped. stdout goes
 * to /dev/null; stderr is captured.
 *
 * The heavy work is bounded without changing the CLI: the library's entry points the commands
 * call are wrapped at link time (-Wl,--wrap): a sweep of more than 40 points or 2 threads, a
 * simulation longer than 20 s of model time or of more than 1001 samples, a validation of more
 * than 2 modes, 10 periods or 64 samples per period, a frequency response of more than 2000
 * frequencies are refused with a message "fuzz: ..." (the CLI prints it as any refusal), the
 * simulation's internal steps are capped at 20000 and the trajectory's linearizations at 50.
 *
 * Checked: the exit status is 0, 1 or 2; a usage error (2) prints exactly one line "mblin: ...";
 * a failure (1) prints lines that all start with "mblin: "; no crash, leak, undefined behaviour
 * or hang. Build and run: see docs/fuzzing.md. */
#define _GNU_SOURCE /* open_memstream, mkdtemp, nftw */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mblin/mblin.h"
#include "mblin/optimize.h"

/* ---- the bounds, on the library's entry points ---- */
int __real_mbl_sweep_run(const mbl_model *model, const mbl_sweep_options *opt, mbl_sweep **out, mbl_status *st);
int __real_mbl_simulate(const mbl_model *model, const mbl_point *start, const mbl_sim_options *opt,
                        mbl_sim_result **out, mbl_status *st);
int __real_mbl_validate(const mbl_model *model, const mbl_point *pt, const mbl_modes *modes,
                        const mbl_validate_options *opt, mbl_validation **out, mbl_status *st);
int __real_mbl_freqresp(const mbl_linear *lin, const mbl_linear *desc, int input, int output, const double *w, int nw,
                        mbl_freqresp_result **out, mbl_status *st);
int __real_mbl_freqresp_mimo_run(const mbl_linear *lin, const mbl_linear *desc, const double *w, int nw,
                                 mbl_freqresp_mimo **out, mbl_status *st);
int __wrap_mbl_freqresp_mimo_run(const mbl_linear *lin, const mbl_linear *desc, const double *w, int nw,
                                 mbl_freqresp_mimo **out, mbl_status *st);
int __real_mbl_sim_point(const mbl_model *model, const mbl_sim_result *r, int s, mbl_point **out, mbl_status *st);
int __wrap_mbl_sweep_run(const mbl_model *model, const mbl_sweep_options *opt, mbl_sweep **out, mbl_status *st);
int __wrap_mbl_simulate(const mbl_model *model, const mbl_point *start, const mbl_sim_options *opt,
                        mbl_sim_result **out, mbl_status *st);
int __wrap_mbl_validate(const mbl_model *model, const mbl_point *pt, const mbl_modes *modes,
                        const mbl_validate_options *opt, mbl_validation **out, mbl_status *st);
int __wrap_mbl_freqresp(const mbl_linear *lin, const mbl_linear *desc, int input, int output, const double *w, int nw,
                        mbl_freqresp_result **out, mbl_status *st);
int __wrap_mbl_sim_point(const mbl_model *model, const mbl_sim_result *r, int s, mbl_point **out, mbl_status *st);

int __real_mbl_optimize(const mbl_model *model, const mbl_optimize_options *opt, mbl_opt_result **out, mbl_status *st);
int __wrap_mbl_optimize(const mbl_model *model, const mbl_optimize_options *opt, mbl_opt_result **out, mbl_status *st);

/* an optimization of at most 20 evaluations (mblin optimize --max-eval) */
int __wrap_mbl_optimize(const mbl_model *model, const mbl_optimize_options *opt, mbl_opt_result **out, mbl_status *st)
{
    if (opt && opt->max_eval > 20) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: an optimization of %d evaluations is not run", opt->max_eval);
    }
    return __real_mbl_optimize(model, opt, out, st);
}

static int sim_points; /* mbl_sim_point calls of this input */

int __wrap_mbl_sweep_run(const mbl_model *model, const mbl_sweep_options *opt, mbl_sweep **out, mbl_status *st)
{
    double points = 1;
    for (int a = 0; opt && a < opt->naxes && a < 2; a++) points *= opt->axis[a].count;
    if (opt && (points > 40 || opt->threads > 2)) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: a sweep of %g points on %d threads is not run", points, opt->threads);
    }
    return __real_mbl_sweep_run(model, opt, out, st);
}

int __wrap_mbl_simulate(const mbl_model *model, const mbl_point *start, const mbl_sim_options *opt,
                        mbl_sim_result **out, mbl_status *st)
{
    mbl_sim_options o = *opt;
    double span = fabs(o.t_end), samples = o.dt_out > 0 ? span / o.dt_out : 1000;
    if (!(span <= 20) || !(samples <= 1001)) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: a simulation to t = %g (%g samples) is not run", o.t_end, samples);
    }
    if (o.max_steps <= 0 || o.max_steps > 20000) o.max_steps = 20000;
    return __real_mbl_simulate(model, start, &o, out, st);
}

int __wrap_mbl_validate(const mbl_model *model, const mbl_point *pt, const mbl_modes *modes,
                        const mbl_validate_options *opt, mbl_validation **out, mbl_status *st)
{
    if (opt && (opt->nmodes > 2 || opt->periods > 10 || opt->samples > 64)) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: a validation of %d modes, %g periods, %d samples is not run",
                         opt->nmodes, opt->periods, opt->samples);
    }
    return __real_mbl_validate(model, pt, modes, opt, out, st);
}

int __wrap_mbl_freqresp(const mbl_linear *lin, const mbl_linear *desc, int input, int output, const double *w, int nw,
                        mbl_freqresp_result **out, mbl_status *st)
{
    if (nw > 2000) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: a frequency response at %d frequencies is not run", nw);
    }
    return __real_mbl_freqresp(lin, desc, input, output, w, nw, out, st);
}

int __wrap_mbl_freqresp_mimo_run(const mbl_linear *lin, const mbl_linear *desc, const double *w, int nw,
                                 mbl_freqresp_mimo **out, mbl_status *st)
{
    if (nw > 2000) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: a frequency response at %d frequencies is not run", nw);
    }
    return __real_mbl_freqresp_mimo_run(lin, desc, w, nw, out, st);
}

int __wrap_mbl_sim_point(const mbl_model *model, const mbl_sim_result *r, int s, mbl_point **out, mbl_status *st)
{
    if (++sim_points > 50) {
        *out = NULL;
        return mbl_error(st, MBL_EARG, "fuzz: more than 50 linearizations along a trajectory are not run");
    }
    return __real_mbl_sim_point(model, r, s, out, st);
}

/* ---- the working directory ---- */
static char tmpdir[64];

static const char model_text[] =
    "model: dae\n"
    "name: slider-pendulum\n"
    "parameters: {m2: 10, m3: 20, l: 2, j3: 15, k: 20, c: 0.5, g: 9.81}\n"
    "coordinates: {y: 0, theta: 0.1}\n"
    "kinetic_energy: \"0.5*(m2 + m3)*der(y)^2 + m3*l/2*cos(theta)*der(y)*der(theta) + 0.5*(m3*l^2/4 + j3)*der(theta)^2\"\n"
    "potential_energy: \"0.5*k*y^2 - m3*g*l/2*cos(theta)\"\n"
    "dissipation: \"0.5*c*der(y)^2\"\n"
    "forces: {y: F}\n"
    "inputs: {F: 0}\n"
    "outputs:\n"
    "  tip: \"y + l*sin(theta)\"\n"
    "  energy: \"0.5*(m2 + m3)*der(y)^2 + m3*l/2*cos(theta)*der(y)*der(theta) + 0.5*(m3*l^2/4 + j3)*der(theta)^2 + "
    "0.5*k*y^2 - m3*g*l/2*cos(theta)\"\n"
    "linearize:\n"
    "  at: equilibrium\n";

static void write_file(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(name, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f)) abort();
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* at the end of the process: the directory and what is left in it */
static void remove_tmpdir(void)
{
    nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fuzz_cli.XXXXXX");
    if (!mkdtemp(tmpdir)) abort();
    atexit(remove_tmpdir);
    return 0;
}


/* everything in the directory but m.yaml (the command may have written files and directories) */
static void clean(void)
{
    DIR *d = opendir(".");
    if (!d) abort();
    struct dirent *e;
    char names[64][256];
    int n = 0;
    while ((e = readdir(d)) && n < 64)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "m.yaml"))
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    for (int k = 0; k < n; k++) nftw(names[k], rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* could the argument name a path outside the directory? */
static int outside(const char *a)
{
    if (strstr(a, "..") || (!strncmp(a, "-o", 2) && strchr(a, '/'))) return 1;
    for (const char *s = a; (s = strchr(s, '/')); s++) {
        if (s == a) return 1;
        char c = s[-1];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return 1;
    }
    return 0;
}

/* the captured stderr of a command that returned code */
static void check_messages(int code, const char *err, size_t len)
{
    if (code < 0 || code > 2) abort();
    if (strlen(err) != len) abort(); /* no NUL byte in a message */
    int lines = 0;
    for (const char *p = err; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl) abort(); /* every message ends its line */
        lines++;
        if (*p != '\r' && code != 0 && strncmp(p, "mblin: ", 7)) abort();
        p = nl + 1;
    }
    if (code == 2 && lines != 1) abort();
    if (code == 1 && lines < 1) abort();
}

enum { CLI_FUZZ_MAX_INPUT = 4096, CLI_FUZZ_MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > CLI_FUZZ_MAX_INPUT) return 0;
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    char *csv = strstr(text, "\n%%CSV\n");
    if (csv) {
        *csv = '\0';
        csv += 7;
    }
    char *argv[CLI_FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "mblin";
    for (char *p = text; argc < CLI_FUZZ_MAX_ARGS;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        argv[argc++] = p;
        if (!nl) break;
        p = nl + 1;
    }
    argv[argc] = NULL;
    int (*run)(int, char **) = NULL;
    if (argc >= 2) {
        if (!strcmp(argv[1], "sweep")) run = cli_cmd_sweep;
        else if (!strcmp(argv[1], "freqresp")) run = cli_cmd_freqresp;
        else if (!strcmp(argv[1], "simulate")) run = cli_cmd_simulate;
        else if (!strcmp(argv[1], "validate")) run = cli_cmd_validate;
    }
    for (int k = 2; run && k < argc; k++)
        if (outside(argv[k])) run = NULL;
    if (!run) {
        free(text);
        return 0;
    }
    int home = open(".", O_RDONLY | O_DIRECTORY); /* libFuzzer's directory, for its corpus paths */
    if (home < 0 || chdir(tmpdir)) abort();
    write_file("m.yaml", model_text, sizeof model_text - 1); /* anew: the last command may have written over it */
    if (csv) write_file("s.csv", csv, (size_t)(text + size - csv));
    char *err = NULL;
    size_t errlen = 0;
    FILE *errf = open_memstream(&err, &errlen), *nul = fopen("/dev/null", "w");
    if (!errf || !nul) abort();
    FILE *saved_err = stderr, *saved_out = stdout;
    stderr = errf, stdout = nul;
    sim_points = 0;
    int code = run(argc, argv);
    fflush(stdout);
    stderr = saved_err, stdout = saved_out;
    fclose(nul);
    if (fclose(errf)) abort();
    check_messages(code, err, errlen);
    free(err);
    clean();
    if (fchdir(home) || close(home)) abort();
    free(text);
    return 0;
}

/* cli/startup.c is left out of this link (its constructor tunes glibc's heap, which the
 * sanitizers replace); its one function, for `sweep --threads N`: */
void cli_thread_arenas(void) {}
