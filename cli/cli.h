/* Helpers shared by the command-line files (cli/main.c, cli/cmd_*.c). */
#ifndef MBLIN_CLI_H
#define MBLIN_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "mblin/status.h"
#include "mblin/model.h"

/* ---- the commands (cli/main.c's table): run(argc, argv) gets the whole command line (argv[1] the
 * command's name) and returns the exit status ---- */
int cli_cmd_linearize(int argc, char **argv); /* cli/cmd_linearize.c: linearize, equilibrium, check,
                                                 compare, report */
int cli_cmd_codegen(int argc, char **argv);   /* cli/cmd_codegen.c */
int cli_cmd_symbolic(int argc, char **argv);
int cli_cmd_sweep(int argc, char **argv);     /* cli/cmd_sweep.c */
int cli_cmd_freqresp(int argc, char **argv);
int cli_cmd_sensitivity(int argc, char **argv); /* cli/cmd_sensitivity.c */
int cli_cmd_boundary(int argc, char **argv);
int cli_cmd_simulate(int argc, char **argv);  /* cli/cmd_simulate.c */
int cli_cmd_validate(int argc, char **argv);
int cli_cmd_floquet(int argc, char **argv);   /* cli/cmd_floquet.c */
int cli_cmd_sparsity(int argc, char **argv);  /* cli/cmd_sparsity.c */
int cli_cmd_optimize(int argc, char **argv);  /* cli/cmd_optimize.c */

/* The one table of the commands (cli/commands.c): the one line of help of command cmd (`mblin
 * --help` lists it), or NULL; what runs it, or NULL when there is no such command. */
const char *cli_command_help(const char *cmd);
int (*cli_command_run(const char *cmd))(int argc, char **argv);
/* The head of `mblin CMD --help`: "usage: mblin CMD ARGS", a blank line, the table's line of CMD. */
void cli_help_head(FILE *f, const char *cmd, const char *args);
/* The commands, one a line ("  NAME MODEL   help"), for `mblin --help`. */
void cli_commands_list(FILE *f);
/* The options of linearize, equilibrium, check, compare and report, each with its one text and the
 * commands that take it in brackets when not all five do (cli/cmd_linearize.c; for `mblin --help`). */
void cli_linearize_options_help(FILE *f);

/* ---- the one option parser (cli/options.c) ---- */
#define CLI_MAX_SETS 256

/* The options many commands share, parsed in one place; a command names those it takes. */
enum {
    CLI_OPT_SET = 1 << 0,    /* --set NAME=VALUE (repeatable) */
    CLI_OPT_GUESS = 1 << 1,  /* --guess NAME=VALUE and --set-velocity NAME=VALUE (repeatable) */
    CLI_OPT_AT = 1 << 2,     /* --at equilibrium|given|steady */
    CLI_OPT_JSON = 1 << 3,   /* --json */
    CLI_OPT_METHOD = 1 << 4, /* --method NAME */
    CLI_OPT_OUT = 1 << 5,    /* -o DIR or FILE */
    CLI_OPT_OUTPUTS = 1 << 6 /* --outputs a,b: keep these outputs of the model (cli_load_options) */
};

/* What the shared parser found: the MODEL argument and the common options. */
/* cli_parse resets the scalar fields one by one (not the 270 KB of name buffers, written before
 * they are read): a new scalar field must be reset there too. The scalars come first, together
 * on the struct's first page: counts placed after the buffers each faulted a page of their own in
 * (three pages, about 10 us of a small model's run). */
typedef struct cli_args {
    const char *cmd;   /* the command's name, for the messages */
    const char *model; /* MODEL */
    const char *method, *out; /* --method, -o (NULL: not given) */
    const char *at;    /* --at, checked (NULL: the file's) */
    int json;
    int nsets, nguess, nvel, ntarget; /* the counts of sets, guesses, vels and targets below */
    int has_outputs, noutputs;        /* --outputs a,b (has_outputs = 1) */
    int allow_user_code;              /* --allow-user-code (every command: cli_load_options) */
    mbl_setting sets[CLI_MAX_SETS], guesses[CLI_MAX_SETS];
    char set_names[CLI_MAX_SETS][256], guess_names[CLI_MAX_SETS][256];
    /* --set-velocity NAME=VALUE (taken wherever --guess is): held velocities of a given point */
    mbl_setting vels[CLI_MAX_SETS];
    char vel_names[CLI_MAX_SETS][256];
    /* --target KEY=VALUE (taken wherever --guess is): trim target values (at: trim) */
    mbl_setting targets[CLI_MAX_SETS];
    char target_names[CLI_MAX_SETS][256];
    /* --outputs a,b: the names, pointing into outputs_text */
    const char *outputs[CLI_MAX_SETS];
    char outputs_text[4096];
} cli_args;

/* One option of a command's own: "--name" (a long option) with or without a value. */
typedef struct cli_option {
    const char *name;
    int has_value;
} cli_option;

/* A command's options: the common ones it takes (CLI_OPT_*), its own (ended by {NULL, 0}), the
 * options of other commands that are refused as "does not apply" rather than unknown (" --a --b ",
 * or NULL), what to do with each of its own (value NULL for a flag; -1 to go on, else the exit
 * status, the error printed) and its --help text (printed on stdout). */
typedef struct cli_spec {
    unsigned common;
    const cli_option *own;
    const char *foreign;
    int (*option)(void *ud, const char *name, const char *value);
    void (*help)(void *ud);
    void *ud;
} cli_spec;

/* Parses argv[2..] (argv[1] the command) with getopt_long: --opt VALUE and --opt=VALUE, -o VALUE,
 * -- ending the options, the one MODEL argument anywhere. a is cleared first (a->cmd = argv[1]).
 * -1 to go on, else the exit status (0 after --help; 2 after a usage error, printed). */
int cli_parse(const cli_spec *spec, cli_args *a, int argc, char **argv);

/* The load options of the command line: the library's defaults, --outputs (lo->outputs, noutputs)
 * and --allow-user-code (lo->allow_user_code; nothing else sets it: docs/cli.md). Every command
 * that loads a model file fills its mbl_load_options here first. */
void cli_load_options(const cli_args *a, mbl_load_options *lo);

/* --allow-user-code, taken by every command: its one line of help (head at two spaces, the text
 * from column `column`, wrapped at 100), printed in every command's --help and in `mblin --help`. */
void cli_user_code_help(FILE *f, int column);

/* One option of a help text: "  HEAD" then WHAT from column `column` (at least one space after
 * HEAD), wrapped at word boundaries to lines of at most 100 characters. */
void cli_option_line(FILE *f, const char *head, const char *what, int column);

/* Operating-point options from --at and --guess (defaults otherwise). */
void cli_opoint_options(const cli_args *a, mbl_opoint_options *po);

/* 0 when every --guess names a coordinate of the model and every --set-velocity a velocity it can
 * hold (mbl_model_velocity_find), else the usage error's exit status 2 (printed: "--guess: the
 * model has no coordinate named 'x'"). */
int cli_check_guesses(const cli_args *a, const mbl_model *model);

/* ---- values and messages (cli/cli_util.c) ---- */

/* A decimal floating literal only: [+-] digits [. digits] [e [+-] digits] (no hex, inf, nan,
 * spaces), as a parameter value on the command line; 0, or -1 when s is not one or not finite. */
int cli_decimal(const char *s, double *out);

/* A value on the command line: a decimal literal, or else a constant expression in the model
 * files' syntax (docs/expressions.md: pi, + - * / ^, sin, sqrt, ...; no names), such as pi/2 or
 * 2*pi/3. 0 with *out set, or -1 with a short reason in why (the expression's error, or "not
 * finite"). */
int cli_number(const char *s, double *out, char *why, size_t whylen);

/* The library's message on stderr as "mblin: ..." (stdout flushed first); returns the exit status:
 * 2 for MBL_EARG (an option's name or value the library refused: a usage error), else 1. */
int cli_fail(const mbl_status *st);

/* A usage error on stderr: "mblin: <fmt with arg> (see mblin CMD --help)"; returns exit status 2.
 * Unless fmt is "%s" (a whole message), arg is a value the user gave: at most CLI_ECHO_MAX of its
 * characters are echoed, then "..." (docs/cli.md, "Errors"). */
#define CLI_ECHO_MAX 40
int cli_usage(const char *cmd, const char *fmt, const char *arg);
/* A value the user gave, as a message quotes it: arg itself when it has at most CLI_ECHO_MAX
 * characters, else its first CLI_ECHO_MAX (not cut inside a UTF-8 character) and "..." in cut. */
const char *cli_echo(const char *arg, char cut[CLI_ECHO_MAX + 4]);
/* A value option opt refused: "mblin: OPT expects WHAT, got 'ARG'" (arg echoed as cli_usage does);
 * returns exit status 2. Every number option's message names its option this way. */
int cli_bad_value(const char *cmd, const char *opt, const char *what, const char *arg);

/* One NAME=NUMBER (the len bytes at v) of option opt appended to items[*count] (its name copied into
 * names[*count]; at most max items, names below 256 bytes, the value as cli_number reads it). Returns -1
 * to go on, or the usage error's exit status 2 (printed, naming cmd and opt). */
int cli_setting(const char *cmd, const char *opt, const char *v, size_t len, mbl_setting *items,
                char (*names)[256], int *count, int max);

/* mkdir -p: every missing level of dir (0, or -1 with errno). */
int cli_mkdirs(const char *dir);

/* ---- progress, Ctrl-C and partial outputs (cli/progress.c; docs/cli.md, "Progress and Ctrl-C") ----
 * main brackets the command with cli_progress_begin (the SIGINT handler, the library's progress
 * callback: a bar on a terminal) and cli_progress_end (after SIGINT: the run's outputs removed, one
 * line, exit status 130). --progress switches to periodic lines (cli_progress_lines). A command
 * opens each file it writes by cli_output_file (cli_mkdirs names its directory). */
void cli_progress_begin(void);
void cli_progress_lines(void);
int cli_progress_end(int code);
void cli_progress_clear(void); /* erase the terminal's progress line before printing */
int cli_interrupted(void);
/* the run's output file at path, named for the cleanup and opened by mbl_output_open (a link at
 * the name replaced, not followed): the stream, or NULL with errno set */
FILE *cli_output_file(const char *path);
void cli_output_dir(const char *dir);

/* ---- the MPI plugin (cli/par_load.c, src/par/par.h) ---- */
struct mbl_par;
/* main's bracket: at the start, under mpirun/mpiexec, load and initialize the plugin (0, or the
 * exit status 1 after a message); at the end, gather the ranks' messages and agree on the exit
 * status (returns it; the static tool ends there by _exit when no plugin was loaded). */
int cli_par_begin(void);
int cli_par_end(int code);
/* the loaded plugin's table (NULL when not loaded); load and initialize it now (0, or 1 after
 * printing "mblin: <why>, but <reason>", e.g. why = "--eigensolver slepc"). */
const struct mbl_par *cli_par_loaded(void);
int cli_par_require(const char *why);

/* Malloc arenas (cli/startup.c): the tool starts with one (every thread allocates from the main
 * heap, which is on huge pages); a command that runs worker threads of its own (sweep --threads N,
 * an MPI launch) calls this before any of them starts, to give them glibc's usual arenas. */
void cli_thread_arenas(void);

#endif
