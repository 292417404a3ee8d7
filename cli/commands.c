/* The one table of the commands: each command's name, what runs it (in its cli/cmd_*.c) and its
 * one line of help (the only copy: `mblin --help` lists it, `mblin COMMAND --help` prints it under
 * its usage line, cli_help_head). In its own file so that the commands' --help (and the fuzz
 * target of the option parsing, tests/fuzz) reach it without main. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
    {"sparsity", cli_cmd_sparsity, "each method's matrices: order, nonzeros, fill-in of their factors, spy plots"},
    {"optimize", cli_cmd_optimize, "design optimization of modes on the exact sensitivities (--vary, --objective)"},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

const char *cli_command_help(const char *cmd)
{
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(cmd, commands[c].name)) return commands[c].help;
    return NULL;
}

int (*cli_command_run(const char *cmd))(int argc, char **argv)
{
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(cmd, commands[c].name)) return commands[c].run;
    return NULL;
}

void cli_help_head(FILE *f, const char *cmd, const char *args)
{
    const char *help = cli_command_help(cmd);
    fprintf(f, "usage: mblin %s %s\n\n%s\n", cmd, args, help ? help : "");
}

void cli_commands_list(FILE *f)
{
    for (int c = 0; c < NCOMMANDS; c++) {
        char head[64];
        snprintf(head, sizeof head, "%s MODEL", commands[c].name);
        fprintf(f, "  %-18s  %s\n", head, commands[c].help);
    }
}
