/* mblin command-line tool: a thin client of the public API (include/mblin/mblin.h). main, the
 * one table of the commands (each in its cli/cmd_*.c) with each command's one line of help, and
 * the usage text made from it; every command's --help starts with its line (cli_help_head).
 *
 *   mblin COMMAND MODEL [OPTIONS]
 *   mblin COMMAND --help
 *   mblin --version, mblin --help
 *
 * Results go to stdout, diagnostics to stderr as one line "mblin: <reason>", and the exit status
 * is 0 on success, 1 when the model or the computation fails, 2 for a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/mblin.h"

/* The commands: name, what runs it (with the whole command line), one line of help (the only
 * copy: `mblin --help` lists it, `mblin COMMAND --help` prints it under its usage line). */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"linearize", cli_cmd_linearize, "operating point, exact linear model and its modes"},
    {"equilibrium", cli_cmd_linearize, "the operating point only"},
    {"check", cli_cmd_linearize, "counts, degrees of freedom, redundant constraints"},
    {"compare", cli_cmd_linearize, "every linearization method side by side (time, eigenvalues, deviation)"},
    {"report", cli_cmd_linearize, "one self-contained HTML page: summary, eigenvalues, root locus, mode animation"},
    {"codegen", cli_cmd_codegen, "generated C, Python or Octave code of A, B, C, D; M, C, K in the parameters"},
    {"symbolic", cli_cmd_symbolic, "the linear model as expressions of the parameters (source 002)"},
    {"sweep", cli_cmd_sweep, "modes over parameter values, tracked; Campbell, root locus, damping plots"},
    {"freqresp", cli_cmd_freqresp, "frequency response of the exact linear model, Bode plot"},
    {"sensitivity", cli_cmd_sensitivity, "exact derivatives of eigenvalues, frequencies, damping, shapes (--wrt)"},
    {"boundary", cli_cmd_boundary, "parameter value where a mode turns unstable (--param NAME --near VALUE)"},
    {"simulate", cli_cmd_simulate, "time simulation (SUNDIALS IDA) from the operating point, --t-end T"},
    {"validate", cli_cmd_validate, "each of the lowest modes excited and simulated: measured vs predicted"},
    {"floquet", cli_cmd_floquet, "time-periodic models: monodromy matrix, Floquet multipliers (--period T)"},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

/* The one line of help of command cmd (the table's), or NULL when there is no such command. */
const char *cli_command_help(const char *cmd)
{
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(cmd, commands[c].name)) return commands[c].help;
    return NULL;
}

void cli_help_head(FILE *f, const char *cmd, const char *args)
{
    const char *help = cli_command_help(cmd);
    fprintf(f, "usage: mblin %s %s\n\n%s\n", cmd, args, help ? help : "");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mblin COMMAND MODEL [OPTIONS]   (mblin COMMAND --help: that command's options)\n"
               "\n"
               "commands:\n");
    for (int c = 0; c < NCOMMANDS; c++) {
        char head[64];
        snprintf(head, sizeof head, "%s MODEL", commands[c].name);
        fprintf(f, "  %-18s  %s\n", head, commands[c].help);
    }
    fprintf(f, "\noptions of linearize, equilibrium, check, compare and report ([CMD, ..]: only these take it;\n"
               "the other commands' options: mblin COMMAND --help):\n");
    cli_linearize_options_help(f);
    fprintf(f, "\n"
               "options of every command:\n"
               "  --progress           a progress line on stderr at most every second (on a terminal: a bar)\n"
               "  --opt=VALUE          the same as --opt VALUE; -- ends the options\n"
               "  --version, --help\n");
}

/* OpenBLAS's worker threads spin between the many small dense operations of a linearization
 * and cost more than they give (N = 10^4 four-bar: 1.55 s single-threaded, 1.97 s with the
 * default threads, medians of 5). The command line therefore runs BLAS on one thread unless the
 * user asks otherwise through OPENBLAS_NUM_THREADS or OMP_NUM_THREADS. (The library itself never
 * changes such process-wide settings.) */
extern void openblas_set_num_threads(int num_threads);

/* The command of argv[1] with its command line; the exit status. */
static int dispatch(int argc, char **argv)
{
    if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS")) openblas_set_num_threads(1);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version")) {
        printf("mblin %s\n", mbl_version());
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(cmd, commands[c].name)) return commands[c].run(argc, argv);
    char cut[CLI_ECHO_MAX + 4];
    fprintf(stderr, "mblin: unknown command '%s' (see mblin --help)\n", cli_echo(cmd, cut));
    return 2;
}

/* Under mpirun the MPI plugin brackets the command (cli/par_load.c). */
int main(int argc, char **argv)
{
    int code = cli_par_begin();
    if (code) return code;
    cli_progress_begin(); /* progress on stderr, Ctrl-C (cli/progress.c) */
    code = dispatch(argc, argv);
    return cli_par_end(cli_progress_end(code));
}
