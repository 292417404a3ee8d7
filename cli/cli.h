/* Helpers shared by the command-line files (cli/main.c, cli/cmd_*.c). */
#ifndef MBLIN_CLI_H
#define MBLIN_CLI_H

/* A decimal floating literal only: [+-] digits [. digits] [e [+-] digits] (no hex, inf, nan,
 * spaces), as a parameter value on the command line; 0, or -1 when s is not one or not finite. */
int mblin_cli_decimal(const char *s, double *out);

#endif
