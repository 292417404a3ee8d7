/* mblin command-line tool: a thin client of the public API (include/mblin/mblin.h). main and the
 * usage text, made from the one table of the commands (cli/commands.c: each command's runner in
 * its cli/cmd_*.c and its one line of help; every command's --help starts with that line).
 *
 *   mblin COMMAND MODEL [OPTIONS]
 *   mblin COMMAND --help
 *   mblin --version (and the BLAS kernels in use), mblin --help
 *
 * Results go to stdout, diagnostics to stderr as one line "mblin: <reason>", and the exit status
 * is 0 on success, 1 when the model or the computation fails, 2 for a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/mblin.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mblin COMMAND MODEL [OPTIONS]   (mblin COMMAND --help: that command's options)\n"
               "\n"
               "commands:\n");
    cli_commands_list(f);
    fprintf(f, "\noptions of linearize, equilibrium, check, compare and report ([CMD, ..]: only these take it;\n"
               "the other commands' options: mblin COMMAND --help):\n");
    cli_linearize_options_help(f);
    fprintf(f, "\n"
               "options of every command:\n"
               "  --progress           a progress line on stderr at most every second (on a terminal: a bar)\n");
    cli_user_code_help(f, 23);
    fprintf(f, "  --opt=VALUE          the same as --opt VALUE; -- ends the options\n"
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
        /* the second line: the BLAS and the kernels it chose, which set the speed and the last
         * bits of results (OPENBLAS_CORETYPE chooses them; docs/cli.md) */
        char blas[256];
        mbla_blas_describe(blas, sizeof blas);
        printf("mblin %s\n%s\n", mbl_version(), blas);
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    int (*run)(int, char **) = cli_command_run(cmd);
    if (run) return run(argc, argv);
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
