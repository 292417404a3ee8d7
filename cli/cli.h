/* Helpers shared by the command-line files (cli/main.c, cli/cmd_*.c). */
#ifndef MBLIN_CLI_H
#define MBLIN_CLI_H

#include <stddef.h>

#include "mblin/status.h"
#include "mblin/model.h"

/* A decimal floating literal only: [+-] digits [. digits] [e [+-] digits] (no hex, inf, nan,
 * spaces), as a parameter value on the command line; 0, or -1 when s is not one or not finite. */
int mblin_cli_decimal(const char *s, double *out);

/* A value on the command line: a decimal literal, or else a constant expression in the model
 * files' syntax (docs/expressions.md: pi, + - * / ^, sin, sqrt, ...; no names), such as pi/2 or
 * 2*pi/3. 0 with *out set, or -1 with a short reason in why (the expression's error, or "not
 * finite"). */
int mblin_cli_number(const char *s, double *out, char *why, size_t whylen);

/* The library's message on stderr as "mblin: ..." (stdout flushed first); returns exit status 1. */
int mblin_cli_fail(const mbl_status *st);

/* A usage error on stderr: "mblin: <fmt with arg> (see mblin CMD --help)"; returns exit status 2. */
int mblin_cli_usage(const char *cmd, const char *fmt, const char *arg);

/* One NAME=NUMBER (the len bytes at v) of option opt appended to items[*count] (its name copied into
 * names[*count]; at most max items, names below 256 bytes, the value as mblin_cli_number reads it). Returns -1
 * to go on, or the usage error's exit status 2 (printed, naming cmd and opt). */
int mblin_cli_setting(const char *cmd, const char *opt, const char *v, size_t len, mbl_setting *items,
                      char (*names)[256], int *count, int max);

/* The MPI plugin (cli/par_load.c, src/par/par.h): 1 when launched by mpirun/mpiexec; the loaded
 * plugin's table (NULL when not loaded); load and initialize it now (0, or 1 after printing
 * "mblin: <why>, but <reason>", e.g. why = "--eigensolver slepc"). */
struct mbl_par;
int mblin_par_launched(void);
const struct mbl_par *mblin_par(void);
int mblin_par_require(const char *why);

/* Malloc arenas (cli/startup.c): the tool starts with one (every thread allocates from the main
 * heap, which is on huge pages); a command that runs worker threads of its own (sweep --threads N,
 * an MPI launch) calls this before any of them starts, to give them glibc's usual arenas. */
void mblin_cli_thread_arenas(void);

#endif
