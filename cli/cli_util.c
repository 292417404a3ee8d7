/* Helpers shared by the command-line files (cli/cli.h). */
#include "cli.h"

#include "mblin/expr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

/* A decimal floating literal only: [+-] digits [. digits] [e [+-] digits] (no hex, inf, nan,
 * spaces), as a parameter value on the command line. */
int cli_decimal(const char *s, double *out)
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

int cli_number(const char *s, double *out, char *why, size_t whylen)
{
    if (why && whylen) why[0] = '\0';
    if (!cli_decimal(s, out)) return 0;
    size_t len = strlen(s);
    if (!len || len > 200) return snprintf(why, whylen, "%s", len ? "too long" : "empty"), -1;
    mbl_status st;
    if (mblx_eval_text(s, len, out, &st)) {
        const char *m = st.msg, *c = strstr(m, ": "); /* drop the "1:COL: " position of a one-line text */
        snprintf(why, whylen, "%s", st.code == MBL_EPARSE && c && m[0] >= '0' && m[0] <= '9' ? c + 2 : m);
        return -1;
    }
    return 0;
}


int cli_fail(const mbl_status *st)
{
    if (st->code == MBL_ECANCELLED && cli_interrupted()) return 1; /* cli_progress_end says it */
    cli_progress_clear();
    fflush(stdout);
    fprintf(stderr, "mblin: %s\n", st->msg[0] ? st->msg : mbl_strerror(st->code));
    /* MBL_EARG: the library refused an argument the user gave on the command line (a --set, --param,
     * --wrt, --params, --input, --set-initial, --shape or --mode naming what the model lacks): a usage error */
    return st->code == MBL_EARG ? 2 : 1;
}

const char *cli_echo(const char *arg, char cut[CLI_ECHO_MAX + 4])
{
    if (!arg || strlen(arg) <= CLI_ECHO_MAX) return arg;
    size_t k = CLI_ECHO_MAX;
    while (k > 0 && ((unsigned char)arg[k] & 0xC0) == 0x80) k--;
    snprintf(cut, CLI_ECHO_MAX + 4, "%.*s...", (int)k, arg);
    return cut;
}

int cli_usage(const char *cmd, const char *fmt, const char *arg)
{
    /* a whole message (fmt "%s") was bounded by its caller */
    char cut[CLI_ECHO_MAX + 4];
    if (strcmp(fmt, "%s")) arg = cli_echo(arg, cut);
    fprintf(stderr, "mblin: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see mblin %s --help)\n", cmd);
    return 2;
}

int cli_bad_value(const char *cmd, const char *opt, const char *what, const char *arg)
{
    char cut[CLI_ECHO_MAX + 4], m[300];
    snprintf(m, sizeof m, "%.60s expects %.120s, got '%s'", opt, what, cli_echo(arg, cut));
    return cli_usage(cmd, "%s", m);
}

int cli_setting(const char *cmd, const char *opt, const char *v, size_t len, mbl_setting *items,
                      char (*names)[256], int *count, int max)
{
    char m[400];
    const char *eq = memchr(v, '=', len);
    if (!eq || eq == v || (size_t)(eq - v) + 1 >= len) {
        snprintf(m, sizeof m, "%s expects NAME=VALUE, got '%.*s'", opt, (int)(len < 200 ? len : 200), v);
        return cli_usage(cmd, "%s", m);
    }
    if (*count >= max) return cli_usage(cmd, "too many %s values (at most 256)", opt);
    size_t nl = (size_t)(eq - v), vl = len - nl - 1;
    char num[256];
    if (nl >= 256 || vl >= sizeof num) return cli_usage(cmd, "%s: name or value too long", opt);
    memcpy(names[*count], v, nl);
    names[*count][nl] = '\0';
    memcpy(num, eq + 1, vl);
    num[vl] = '\0';
    char why[200];
    if (cli_number(num, &items[*count].value, why, sizeof why)) {
        snprintf(m, sizeof m, "%s: '%.*s' is not NAME=VALUE with a number or a constant expression (2, -0.5, 1e-3, pi/2): %s",
                 opt, (int)(len < 120 ? len : 120), v, why);
        return cli_usage(cmd, "%s", m);
    }
    items[*count].name = names[*count];
    (*count)++;
    return -1;
}

int cli_mkdirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    cli_output_dir(dir); /* removed again when the run is interrupted */
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char c = path[i];
        path[i] = '\0';
        struct stat sb;
        if (stat(path, &sb) != 0) {
            if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        } else if (!S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        path[i] = c;
    }
    return 0;
}

void cli_option_line(FILE *f, const char *head, const char *what, int column)
{
    enum { WIDTH = 100 };
    int col = fprintf(f, "  %-*s ", column - 4 > 0 ? column - 4 : 0, head);
    const char *w = what;
    while (*w) {
        int len = 0;
        while (w[len] && w[len] != ' ') len++;
        if (col + 1 + len > WIDTH && col > column - 1) col = fprintf(f, "\n%*s", column - 1, "") - 1;
        col += fprintf(f, " %.*s", len, w);
        w += len;
        while (*w == ' ') w++;
    }
    fputc('\n', f);
}
