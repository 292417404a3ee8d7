/* Helpers shared by the command-line files (cli/cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* A decimal floating literal only: [+-] digits [. digits] [e [+-] digits] (no hex, inf, nan,
 * spaces), as a parameter value on the command line. */
int mblin_cli_decimal(const char *s, double *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return -1;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p) return -1;
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (errno == ERANGE || !end || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

