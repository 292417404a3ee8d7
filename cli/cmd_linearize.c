/* The linearize pipeline: `mblin linearize`, `equilibrium`, `check`, `compare` and `report`, one
 * path from the model file through the operating point and the linear model to the report.
 *
 *   mblin linearize MODEL [--method NAME] [--set p=value ...] [--guess q=value ...] [--at KIND] [--time T] [--json]
 *                         [-o DIR] [--matrices] [--shapes] [--nev K] [--shift S] [--mem-budget SIZE]
 *                         [--no-matrices] [--symbolic-jacobian]
 *   mblin equilibrium MODEL [--set p=value ...] [--guess q=value ...] [--at KIND] [--json]
 *   mblin check MODEL [--set p=value ...] [--guess q=value ...] [--at KIND]
 *   mblin compare MODEL [--set p=value ...] [--guess q=value ...] [--at KIND] [--json] [--repeat N]
 *   mblin report MODEL [-o FILE.html] [--method NAME] [--set p=value ...] [--guess q=value ...] [--at KIND]
 *   mblin COMMAND --help
 *
 * Results go to stdout, diagnostics to stderr as one line "mblin: <reason>", and the exit status
 * is 0 on success, 1 when the model or the computation fails, 2 for a usage error. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/la.h"
#include "mblin/mblin.h"
#include "par/par.h"

/* The commands of this pipeline (their one line of help: cli/main.c's table) and the options each
 * takes (the bits of options[].cmds); an option of another command is a usage error. Every
 * command of this pipeline is one pass through one operating point, so each loads the model with
 * the residual Jacobian's values by forward-mode sweeps of the residual tape (no symbolic Jacobian
 * to build and compile, docs/cli.md, `--symbolic-jacobian`); --symbolic-jacobian builds it
 * as sweeps and the library's default do. */
static const char *const commands[] = {"linearize", "equilibrium", "check", "compare", "report"};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };
enum { LIN = 1 << 0, EQU = 1 << 1, CHK = 1 << 2, CMP = 1 << 3, REP = 1 << 4, ALL = (1 << NCOMMANDS) - 1 };

/* The options, in the order of the help text, each with its one text: the common ones
 * (cli/options.c: --method, --set, --guess, --at, --json, -o, --outputs) and the pipeline's own
 * (common 0); cmds, the commands that take it. `mblin --help` lists them all
 * (cli_linearize_options_help), `mblin COMMAND --help` those of COMMAND. */
static const struct {
    const char *opt, *arg, *help;
    unsigned common, cmds;
} options[] = {
    {"--method", "NAME", "linearization method (default augmented; see docs/methods.md)", CLI_OPT_METHOD, LIN | REP},
    {"--set", "NAME=VALUE", "override a parameter: a number or a constant expression such as pi/2 (repeatable)",
     CLI_OPT_SET, ALL},
    {"--guess", "NAME=VALUE", "initial value of a coordinate (repeatable; the point itself with --at given)",
     CLI_OPT_GUESS, ALL},
    {"--set-velocity", "NAME=VALUE",
     "hold a velocity of a given point: a coordinate's rate or a key of the file's velocities, e.g. JV(crank) "
     "(repeatable; the others are solved)", CLI_OPT_GUESS, ALL},
    {"--target", "KEY=VALUE", "the value of a trim target of the file (at: trim), keyed as written in trim.targets "
     "(repeatable)", CLI_OPT_GUESS, ALL},
    {"--at", "KIND", "operating point: equilibrium, given, steady or trim (default: the file's)", CLI_OPT_AT, ALL},
    {"--time", "T", "the time t of the point (a driven model's drivers and forces at t = T; default the file's "
     "linearize.time, else 0)", 0, ALL},
    {"--json", NULL, "print one JSON object instead of the report", CLI_OPT_JSON, LIN | EQU | CMP},
    {"--outputs", "A,B", "keep only these outputs of the model, in this order (drop those a method cannot compute)",
     CLI_OPT_OUTPUTS, LIN | CMP | REP},
    {"--repeat", "N", "runs per method, the median time is reported (1..1000, default 3)", 0, CMP},
    {"-o", "DIR", "write A, B, C, D, M, Cd, K, F as Matrix Market files and linear_model.m", CLI_OPT_OUT, LIN},
    {"--mtx-format", "FMT", "Matrix Market format of the matrices written: auto (default: the nonzeros of a "
     "sparse matrix, at most a quarter nonzero, as a coordinate list; arrays for the others), array or coordinate",
     0, LIN},
    {"-o", "FILE", "write the HTML page to FILE (default: standard output)", CLI_OPT_OUT, REP},
    {"--matrices", NULL, "print the matrices in the report", 0, LIN},
    {"--shapes", NULL, "print the mode shapes in the report", 0, LIN},
    {"--nev", "K", "the K eigenvalues nearest the shift only, by the sparse pencil, never forming A dense "
     "(augmented, descriptor; a conjugate pair counts as two)", 0, LIN | REP},
    {"--shift", "S", "real shift of the partial spectrum (default -1e-3: the lowest modes)", 0, LIN | REP},
    {"--mem-budget", "SIZE", "memory the computation may use: bytes, or with k, M, G (default 2G); above it "
     "augmented gives a partial spectrum, other requests are refused", 0, LIN | CMP | REP},
    {"--no-matrices", NULL, "--json without the large dense outputs (ss, mck, q_S, mode_shapes)", 0, LIN},
    {"--shift-im", "S", "imaginary part of the shift of the partial spectrum (rotors: the modes near i Omega; "
     "default 0)", 0, LIN | REP},
    {"--eigensolver", "NAME", "engine of the partial spectrum: arpack (default) or slepc (SLEPc + MUMPS, over MPI "
     "under mpirun -n P; the MPI plugin, docs/parallel.md)", 0, LIN | REP},
    {"--symbolic-jacobian", NULL, "the residual Jacobian built and compiled symbolically, as sweeps do, not its values "
     "by forward-mode sweeps of the residual tape (the default); the same values to rounding", 0, ALL},
    {"--forward-jacobian", NULL, "the residual Jacobian's values by forward-mode sweeps (the default: no effect)", 0,
     ALL},
    {"--penalty-alpha", "A", "penalty: the penalty factor alpha, Xi = alpha I (default the file's "
     "linearize.penalty_alpha, else 1e6)", 0, LIN | CMP | REP},
    {"--penalty-xi", "X", "penalty: the damping ratio xi, Theta = 2 xi omega I (default the file's, else 1)", 0,
     LIN | CMP | REP},
    {"--penalty-omega", "W", "penalty: the frequency omega, Omega = omega^2 I (default the file's, else 10)", 0,
     LIN | CMP | REP},
    {"--penalty-Xi", "LIST", "penalty: Xi = diag(LIST), a comma list of one penalty factor per holonomic "
     "constraint in the model's order, in place of alpha I (default the file's linearize.penalty_Xi)", 0,
     LIN | CMP | REP},
    {"--penalty-Theta", "LIST", "penalty: Theta = diag(LIST), in place of 2 xi omega I (default the file's)", 0,
     LIN | CMP | REP},
    {"--penalty-Omega", "LIST", "penalty: Omega = diag(LIST), in place of omega^2 I (default the file's)", 0,
     LIN | CMP | REP},
    {"--penalty-equilibrium", NULL, "penalty: linearize at the penalty system's own rest point, its constraints "
     "violated to balance the forces (source 001 Sec. 3.3), not at the constrained point", 0, LIN | CMP | REP},
    {"--descriptor-zero", NULL, "descriptor: the variant whose spurious eigenvalues are zero instead of infinite "
     "(Phi_q and Phi_q^T moved into E, source 001 Sec. 3.2)", 0, LIN | CMP | REP},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };
enum { HELP_COLUMN = 23 }; /* where the options' texts start (cli_option_line) */

/* s + " " + opt + " " (as snprintf would, cut at cap) without snprintf: 40 calls a run */
static size_t append_word(char *s, size_t l, size_t cap, const char *opt, const char *after)
{
    const char *parts[3] = {" ", opt, after};
    for (int k = 0; k < 3; k++)
        for (const char *c = parts[k]; *c && l + 1 < cap; c++) s[l++] = *c;
    if (cap) s[l < cap ? l : cap - 1] = '\0';
    return l;
}

/* One option of the table: its head ("--set NAME=VALUE") and text, then, with which set, the
 * commands that take it unless every one does ("[linearize, report]"). */
static void option_help(FILE *f, int i, int which)
{
    char head[64], what[512];
    snprintf(head, sizeof head, "%s%s%s", options[i].opt, options[i].arg ? " " : "", options[i].arg ? options[i].arg : "");
    int l = snprintf(what, sizeof what, "%s", options[i].help);
    const char *sep = " [";
    for (int c = 0; which && options[i].cmds != ALL && c < NCOMMANDS; c++)
        if ((options[i].cmds & (1u << c)) && l >= 0 && (size_t)l < sizeof what) {
            l += snprintf(what + l, sizeof what - (size_t)l, "%s%s", sep, commands[c]);
            sep = ", ";
        }
    if (sep[0] == ',' && l >= 0 && (size_t)l < sizeof what) snprintf(what + l, sizeof what - (size_t)l, "]");
    cli_option_line(f, head, what, HELP_COLUMN);
}

void cli_linearize_options_help(FILE *f)
{
    for (int i = 0; i < NOPTIONS; i++) option_help(f, i, 1);
}

static void command_usage(FILE *f, int c)
{
    cli_help_head(f, commands[c], "MODEL [OPTIONS]");
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < NOPTIONS; i++)
        if (options[i].cmds & (1u << c)) option_help(f, i, 0);
    cli_user_code_help(f, HELP_COLUMN);
    cli_option_line(f, "--help", "this text", HELP_COLUMN);
}

/* The pipeline's own options as the parser found them. */
typedef struct pipeline {
    int c;                    /* the command: commands[c] */
    int repeat;
    unsigned flags;
    /* large models (docs/linearization.md, "Large models: partial spectra") */
    int nev, no_matrices;
    int symbolic_jacobian;    /* --symbolic-jacobian (0: forward-mode values, the default) */
    double shift, mem_budget;
    double shift_im;          /* --shift-im */
    const char *eigensolver; /* --eigensolver */
    int mtx_format;           /* --mtx-format: MBL_MTX_* (mtx_given: given) */
    int mtx_given;
    double time;              /* --time (has_time: given) */
    int has_time;
    double pen[3];            /* --penalty-alpha, --penalty-xi, --penalty-omega (bit i of pen_given: given) */
    int pen_given;
    double *pen_mat[3];       /* --penalty-Xi, -Theta, -Omega: diag(LIST) (pen_mat_n x pen_mat_n), NULL absent */
    int pen_mat_n[3];
    int pen_equilibrium;      /* --penalty-equilibrium */
    int desc_zero;            /* --descriptor-zero */
} pipeline;

static void help(void *ud) { command_usage(stdout, ((const pipeline *)ud)->c); }

/* --penalty-alpha, --penalty-xi, --penalty-omega (x parsed): -1 to go on, else the exit status */
static int penalty_option(pipeline *p, const char *a, const char *v, double x)
{
    int i = !strcmp(a, "--penalty-alpha") ? 0 : !strcmp(a, "--penalty-xi") ? 1 : 2;
    if (i == 1 ? !(x >= 0) : !(x > 0))
        return cli_usage(commands[p->c],
                         i == 0   ? "--penalty-alpha expects a number > 0, got '%s'"
                         : i == 1 ? "--penalty-xi expects a number >= 0, got '%s'"
                                  : "--penalty-omega expects a number > 0, got '%s'",
                         v);
    p->pen[i] = x;
    p->pen_given |= 1 << i;
    return -1;
}

/* --penalty-Xi, -Theta, -Omega LIST: diag(LIST) into p->pen_mat[i]; -1 to go on, else the exit status */
static int penalty_list(pipeline *p, int i, const char *a, const char *v)
{
    int n = 1;
    for (const char *c = v; *c; c++) n += *c == ',';
    mbl_free(p->pen_mat[i]);
    p->pen_mat[i] = mbl_calloc((size_t)n * n, sizeof *p->pen_mat[i]);
    p->pen_mat_n[i] = n;
    if (!p->pen_mat[i]) return cli_usage(commands[p->c], "%s: out of memory", a);
    const char *c = v;
    for (int k = 0; k < n; k++) {
        const char *e = strchr(c, ',');
        size_t l = e ? (size_t)(e - c) : strlen(c);
        char num[64];
        double x = 0;
        snprintf(num, sizeof num, "%.*s", (int)(l < sizeof num ? l : 0), c);
        if (cli_decimal(num, &x) || !isfinite(x)) {
            char fmt[128];
            snprintf(fmt, sizeof fmt, "%s expects a comma list of numbers (one per holonomic constraint), got '%%s'",
                     a);
            return cli_usage(commands[p->c], fmt, v);
        }
        p->pen_mat[i][k + (size_t)k * n] = x;
        c = e ? e + 1 : c + l;
    }
    return -1;
}

static void penalty_lists_free(pipeline *p)
{
    for (int i = 0; i < 3; i++) mbl_free(p->pen_mat[i]), p->pen_mat[i] = NULL;
}

/* --nev, --shift, --shift-im, --time, --mem-budget, --penalty-*: -1 to go on, else the exit status */
static int number_option(pipeline *p, const char *a, const char *v)
{
    const char *cmd = commands[p->c];
    char num[64];
    double x = 0, unit = 1.0;
    size_t l = strlen(v);
    if (!strcmp(a, "--mem-budget") && l > 1 && l < sizeof num && strchr("kMG", v[l - 1])) {
        unit = v[l - 1] == 'k' ? 1024.0 : v[l - 1] == 'M' ? 1048576.0 : 1073741824.0;
        memcpy(num, v, l - 1);
        num[l - 1] = '\0';
    } else {
        snprintf(num, sizeof num, "%s", l < sizeof num ? v : "");
    }
    if (cli_decimal(num, &x) && !strncmp(a, "--penalty-", 10)) return cli_bad_value(cmd, a, "a number", v);
    if (cli_decimal(num, &x))
        return cli_usage(cmd,
                         !strcmp(a, "--nev")        ? "--nev expects a positive integer, got '%s'"
                         : !strcmp(a, "--shift")    ? "--shift expects a number, got '%s'"
                         : !strcmp(a, "--shift-im") ? "--shift-im expects a number, got '%s'"
                         : !strcmp(a, "--time")     ? "--time expects a number, got '%s'"
                                                    : "--mem-budget expects a size (bytes, or with k, M, G), got '%s'",
                         v);
    x *= unit;
    if (!strncmp(a, "--penalty-", 10)) return penalty_option(p, a, v, x);
    if (!strcmp(a, "--nev")) {
        if (x < 1 || x > 1e8 || x != (int)x) return cli_usage(cmd, "--nev expects a positive integer, got '%s'", v);
        p->nev = (int)x;
    } else if (!strcmp(a, "--shift")) {
        p->shift = x;
    } else if (!strcmp(a, "--shift-im")) {
        p->shift_im = x;
    } else if (!strcmp(a, "--time")) {
        p->time = x, p->has_time = 1;
    } else {
        if (!(x >= 1048576.0)) return cli_usage(cmd, "--mem-budget expects at least 1M, got '%s'", v);
        p->mem_budget = x;
    }
    return -1;
}

/* the pipeline's own options (cli_spec.option) */
static int option(void *ud, const char *a, const char *v)
{
    pipeline *p = ud;
    const char *cmd = commands[p->c];
    if (!strcmp(a, "--matrices")) p->flags |= MBL_REPORT_MATRICES;
    else if (!strcmp(a, "--shapes")) p->flags |= MBL_REPORT_SHAPES;
    else if (!strcmp(a, "--no-matrices")) p->no_matrices = 1;
    else if (!strcmp(a, "--penalty-equilibrium")) p->pen_equilibrium = 1;
    else if (!strcmp(a, "--penalty-Xi")) return penalty_list(p, 0, a, v);
    else if (!strcmp(a, "--penalty-Theta")) return penalty_list(p, 1, a, v);
    else if (!strcmp(a, "--penalty-Omega")) return penalty_list(p, 2, a, v);
    else if (!strcmp(a, "--descriptor-zero")) p->desc_zero = 1;
    else if (!strcmp(a, "--symbolic-jacobian")) p->symbolic_jacobian = 1;
    else if (!strcmp(a, "--forward-jacobian")) p->symbolic_jacobian = 0;
    else if (!strcmp(a, "--eigensolver")) {
        p->eigensolver = v;
        if (strcmp(v, "arpack") && strcmp(v, "slepc"))
            return cli_usage(cmd, "--eigensolver expects arpack or slepc, got '%s'", v);
    } else if (!strcmp(a, "--mtx-format")) {
        p->mtx_format = !strcmp(v, "auto") ? MBL_MTX_AUTO : !strcmp(v, "array") ? MBL_MTX_ARRAY
                        : !strcmp(v, "coordinate") ? MBL_MTX_COORDINATE : -1;
        if (p->mtx_format < 0) return cli_usage(cmd, "--mtx-format expects auto, array or coordinate, got '%s'", v);
        p->mtx_given = 1;
    } else if (!strcmp(a, "--repeat")) {
        char *end = NULL;
        long k = strtol(v, &end, 10);
        if (!end || *end || k < 1 || k > 1000) return cli_usage(cmd, "--repeat expects 1..1000, got '%s'", v);
        p->repeat = (int)k;
    } else {
        return number_option(p, a, v);
    }
    return -1;
}

/* The command line of command c: -1 to go on, else the exit status. */
static int parse(pipeline *p, cli_args *a, int argc, char **argv)
{
    static cli_option own[NOPTIONS + 1];
    static char foreign[512];
    cli_spec spec = {0, own, foreign, option, help, p};
    int nown = 0;
    foreign[0] = '\0';
    size_t fl = 0;
    for (int i = 0; i < NOPTIONS; i++) {
        fl = append_word(foreign, fl, sizeof foreign, options[i].opt, i == NOPTIONS - 1 ? " " : "");
        if (!(options[i].cmds & (1u << p->c))) continue;
        if (options[i].common) spec.common |= options[i].common;
        else own[nown++] = (cli_option){options[i].opt, options[i].arg != NULL};
    }
    own[nown] = (cli_option){NULL, 0};
    int rc = cli_parse(&spec, a, argc, argv);
    if (rc >= 0) return rc;
    if (!a->model) return cli_usage(a->cmd, "%s needs a MODEL file", a->cmd);
    if (a->method) {
        int known = 0;
        for (int i = 0; i < mbl_lin_method_count(); i++) known |= !strcmp(a->method, mbl_lin_method_name(i));
        if (!known) {
            char list[512] = "";
            for (int i = 0; i < mbl_lin_method_count(); i++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", mbl_lin_method_name(i));
            }
            char fmt[600];
            snprintf(fmt, sizeof fmt, "unknown linearization method '%%s' (available: %s)", list);
            return cli_usage(a->cmd, fmt, a->method);
        }
    }
    return -1;
}

/* check: the point is best effort: a model whose point cannot be found is reported as such */
static int check(const cli_args *a, const mbl_model *model, const mbl_opoint_options *popt, mbl_point **pt)
{
    mbl_status st;
    mbl_status_clear(&st);
    if (mbl_operating_point(model, popt, pt, &st)) {
        mbl_report_check(stdout, model, NULL);
        return cli_fail(&st);
    }
    mbl_report_check(stdout, model, *pt);
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    if ((*pt)->rank_phi_q < info.nhol + info.nnh) {
        fprintf(stderr, "mblin: %s: %d redundant constraint(s) or a singular configuration at the operating point\n",
                a->model, info.nhol + info.nnh - (*pt)->rank_phi_q);
        return 1;
    }
    return 0;
}

/* An option for another method than the one that runs, and --mtx-format without the files of -o,
 * would be ignored: a usage error (compare runs every method and takes them all). 0 or the status. */
static int method_options(const pipeline *p, const cli_args *a, const char *method)
{
    const char *cmd = commands[p->c];
    if (p->mtx_given && !a->out) return cli_usage(cmd, "%s", "--mtx-format applies to the files of -o DIR: give -o");
    if (!strcmp(a->cmd, "compare")) return 0;
    int pen = p->pen_given || p->pen_mat[0] || p->pen_mat[1] || p->pen_mat[2] || p->pen_equilibrium;
    if (pen && strcmp(method, "penalty"))
        return cli_usage(cmd, "the --penalty-* options are for --method penalty, the method here is '%s'", method);
    if (p->desc_zero && strcmp(method, "descriptor"))
        return cli_usage(cmd, "--descriptor-zero is for --method descriptor, the method here is '%s'", method);
    return 0;
}

/* The linearization options of the command line; the MPI plugin's SLEPc for --eigensolver slepc
 * (cli/par_load.c). 0, or the exit status after a message. */
static int lin_options(const pipeline *p, const cli_args *a, const mbl_model *model, mbl_lin_options *lopt,
                       mbla_eigs_backend *eigs_backend)
{
    mbl_lin_options_default(lopt);
    mbl_lin_options_from_model(model, lopt); /* the file's linearize.penalty_*, then the command line's */
    if (p->pen_given & 1) lopt->pen_alpha = p->pen[0];
    if (p->pen_given & 2) lopt->pen_xi = p->pen[1];
    if (p->pen_given & 4) lopt->pen_omega = p->pen[2];
    for (int i = 0; i < 3; i++) { /* --penalty-Xi, -Theta, -Omega over the file's matrices */
        static const char *opt[3] = {"--penalty-Xi", "--penalty-Theta", "--penalty-Omega"};
        mbl_model_info info;
        mbl_model_get_info(model, &info);
        if (!p->pen_mat[i]) continue;
        if (p->pen_mat_n[i] != info.nhol) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: %d numbers given, the model has %d holonomic constraints", opt[i],
                     p->pen_mat_n[i], info.nhol);
            return cli_usage(commands[p->c], "%s", msg);
        }
        if (i == 0) lopt->pen_Xi = p->pen_mat[0];
        if (i == 1) lopt->pen_Theta = p->pen_mat[1];
        if (i == 2) lopt->pen_Omega = p->pen_mat[2];
        lopt->pen_m = info.nhol;
    }
    lopt->pen_equilibrium = p->pen_equilibrium;
    lopt->desc_zero = p->desc_zero;
    if (a->method) lopt->method = a->method;
    int rc = method_options(p, a, lopt->method ? lopt->method : "augmented");
    if (rc) return rc;
    if (p->nev) lopt->nev = p->nev, lopt->partial = MBL_PARTIAL_ALWAYS;
    if (p->shift != 0.0) lopt->shift = p->shift;
    if (p->mem_budget > 0) lopt->mem_budget = p->mem_budget;
    lopt->shift_im = p->shift_im;
    if (p->eigensolver && !strcmp(p->eigensolver, "slepc")) { /* the MPI plugin's SLEPc (cli/par_load.c) */
        if (cli_par_require("--eigensolver slepc")) return 1;
        if (!cli_par_loaded()->eigs_backend) {
            fprintf(stderr, "mblin: --eigensolver slepc: the MPI plugin was built without SLEPc (libslepc-real-dev; "
                            "-DMBLIN_SLEPC=ON)\n");
            return 1;
        }
        mbl_status st;
        mbl_status_clear(&st);
        if (cli_par_loaded()->eigs_backend(eigs_backend, &st)) return cli_fail(&st);
        lopt->eigs_backend = eigs_backend;
    }
    return 0;
}

/* report: -o names the page (stdout without it) */
static int report_page(const char *outdir, int root, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                       const mbl_modes *modes)
{
    int code = 0;
    mbl_status st;
    mbl_status_clear(&st);
    FILE *f = outdir && root ? cli_output_file(outdir) : stdout; /* removed when interrupted */
    if (!f) {
        fprintf(stderr, "mblin: %s: cannot write the report (%s)\n", outdir, strerror(errno));
        return 1;
    }
    if (mbl_report_html(f, model, pt, lin, modes, &st)) code = cli_fail(&st);
    if (f != stdout && fclose(f) != 0 && !code) {
        fprintf(stderr, "mblin: %s: cannot write the report (%s)\n", outdir, strerror(errno));
        code = 1;
    }
    return code;
}

/* linearize: the files of -o DIR, then the report or the JSON object */
static int results(const pipeline *p, const cli_args *a, int root, const mbl_model *model, const mbl_point *pt,
                   const mbl_linear *lin, const mbl_modes *modes)
{
    mbl_status st;
    mbl_status_clear(&st);
    /* the directory is made only now, when there is something to write in it */
    const char *outdir = root ? a->out : NULL;
    if (outdir && cli_mkdirs(outdir) != 0) {
        fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", outdir, strerror(errno));
        return 1;
    }
    if (outdir && (mbl_report_export_format(outdir, model, lin, p->mtx_format, &st) || mbl_report_export_flex(outdir, model, pt, modes, &st) ||
                   mbl_report_export_vtrans(outdir, model, pt, &st)))
        return cli_fail(&st);
    if (a->json) mbl_report_json_flags(stdout, model, pt, lin, modes, p->no_matrices ? MBL_REPORT_NO_MATRICES : 0);
    else mbl_report_text(stdout, model, pt, lin, modes, p->flags);
    return 0;
}

/* The exit status of `compare` (docs/cli.md): a method that refuses where another answers is a
 * row of the table (the singular four-bar: the methods that need a full-rank Phi_q refuse, three
 * answer), but with no exact method's answer there is nothing to check: exit 1 with one line when
 * every method refused, or when only the approximate ones (penalty, fd) answered. */
static int compare_verdict(const char *file, const mbl_comparison *cmp)
{
    if (cmp->reference[0]) return 0;
    int ok = 0;
    for (int i = 0; i < cmp->nrows; i++) ok += cmp->rows[i].ok;
    fflush(stdout);
    if (!ok)
        fprintf(stderr, "mblin: %s: compare: every method refused this point (the table says why)\n", file);
    else
        fprintf(stderr, "mblin: %s: compare: every exact method refused this point and only %d approximate one%s "
                        "answered: %s eigenvalues cannot be checked here\n",
                file, ok, ok == 1 ? "" : "s", ok == 1 ? "its" : "their");
    return 1;
}

/* From the loaded model on: the operating point, and as far as the command goes. */
static int run(const pipeline *p, const cli_args *a, const mbl_model *model, mbl_point **pt, mbl_linear **lin,
               mbl_modes **modes)
{
    const char *cmd = a->cmd;
    mbl_opoint_options popt;
    cli_opoint_options(a, &popt);
    if (p->has_time) popt.t = p->time, popt.has_t = 1;
    if (!strcmp(cmd, "check")) return check(a, model, &popt, pt);
    mbl_status st;
    mbl_status_clear(&st);
    if (mbl_operating_point(model, &popt, pt, &st)) return cli_fail(&st);
    /* a given point that is no equilibrium or steady motion: said on stderr too (exit 0) */
    if ((*pt)->accel_note[0]) fprintf(stderr, "mblin: note: %s: %s\n", a->model, (*pt)->accel_note);
    if (!strcmp(cmd, "equilibrium")) {
        if (a->json) mbl_report_point_json(stdout, model, *pt);
        else mbl_report_point_text(stdout, model, *pt);
        return 0;
    }
    mbl_lin_options lopt;
    mbla_eigs_backend eigs_backend;
    int code = lin_options(p, a, model, &lopt, &eigs_backend);
    if (code) return code;
    /* under mpirun the results are written by rank 0 only (the others' stdout is discarded) */
    const int root = !cli_par_loaded() || cli_par_loaded()->rank() == 0;
    if (!strcmp(cmd, "compare")) {
        mbl_comparison *cmp = NULL;
        if (mbl_compare(model, *pt, &lopt, p->repeat, &cmp, &st)) code = cli_fail(&st);
        else mbl_report_compare(stdout, model, cmp, a->json), code = compare_verdict(a->model, cmp);
        mbl_comparison_free(cmp);
        return code;
    }
    if (mbl_linearize(model, *pt, &lopt, lin, &st) || mbl_modal(*lin, NULL, modes, &st)) return cli_fail(&st);
    if (!strcmp(cmd, "report")) return report_page(a->out, root, model, *pt, *lin, *modes);
    return results(p, a, root, model, *pt, *lin, *modes);
}

int cli_cmd_linearize(int argc, char **argv)
{
    pipeline p; /* on the stack, whose pages are there already (static: one more page faulted in) */
    static cli_args a;
    memset(&p, 0, sizeof p);
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(argv[1], commands[c])) p.c = c;
    int code = parse(&p, &a, argc, argv);
    if (code >= 0) {
        penalty_lists_free(&p);
        return code;
    }

    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *model = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    mbl_load_options lo; /* --mem-budget bounds building the model too (its beams' estimate) */
    cli_load_options(&a, &lo);
    lo.mem_budget = p.mem_budget > 0 ? p.mem_budget : 0;
    lo.forward_jacobian = !p.symbolic_jacobian;
    lo.no_drawing = strcmp(commands[p.c], "report") != 0; /* only the page draws the mechanism */
    if (mbl_model_load_file_opt(a.model, a.sets, a.nsets, &lo, &model, &st)) {
        penalty_lists_free(&p);
        return cli_fail(&st);
    }
    code = cli_check_guesses(&a, model);
    if (code) {
        penalty_lists_free(&p);
        mbl_model_free(model);
        return code;
    }
    code = run(&p, &a, model, &pt, &lin, &modes);
    penalty_lists_free(&p);
    if (fflush(stdout) != 0 && !code) {
        fprintf(stderr, "mblin: cannot write the output\n");
        code = 1;
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(model);
    return code;
}
