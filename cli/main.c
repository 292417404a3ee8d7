/* mblin command-line tool: a thin client of the public API (include/mblin/mblin.h).
 *
 *   mblin linearize MODEL [--method NAME] [--set p=value ...] [--guess q=value ...] [--at KIND] [--json]
 *                         [-o DIR] [--matrices] [--shapes] [--nev K] [--shift S] [--mem-budget SIZE]
 *                         [--no-matrices]
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
#include <sys/stat.h>

#include "cli.h"
#include "mblin/la.h"
#include "mblin/mblin.h"
#include "par/par.h"

#define MAX_SETS 256

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mblin COMMAND MODEL [OPTIONS]   (mblin COMMAND --help: that command's options)\n"
            "\n"
            "commands:\n"
            "  linearize MODEL     operating point, exact linear model and its modes\n"
            "  equilibrium MODEL   the operating point only\n"
            "  check MODEL         counts, degrees of freedom, redundant constraints\n"
            "  compare MODEL       every linearization method side by side (time, eigenvalues, deviation)\n"
            "  report MODEL        one self-contained HTML page: summary, eigenvalues, root locus, mode animation\n"
            "  codegen MODEL       generated C, Python or Octave code of A, B, C, D; M, C, K in the parameters\n"
            "  symbolic MODEL      the linear model as expressions of the parameters (source 002)\n"
            "  sweep MODEL         modes over parameter values, tracked; Campbell, root locus, damping plots\n"
            "  freqresp MODEL      frequency response of the exact linear model, Bode plot\n"
            "  sensitivity MODEL   exact derivatives of eigenvalues, frequencies, damping, shapes (--wrt)\n"
            "  boundary MODEL      parameter value where a mode turns unstable (--param NAME --near VALUE)\n"
            "  simulate MODEL      time simulation (SUNDIALS IDA) from the operating point, --t-end T\n"
            "  validate MODEL      each of the lowest modes excited and simulated: measured vs predicted\n"
            "\n"
            "options:\n"
            "  --method NAME       linearization method (default augmented)\n"
            "  --set NAME=VALUE    override a parameter: a number or a constant expression such as pi/2 (repeatable)\n"
            "  --guess NAME=VALUE  initial value of a coordinate (repeatable): the initial guess, or the\n"
            "                      point itself with --at given\n"
            "  --at KIND           operating point: equilibrium, given or steady (default: the file's)\n"
            "  --json              print one JSON object instead of the report\n"
            "  --repeat N          compare: runs per method, the median time is reported (default 3)\n"
            "  -o DIR              write A, B, C, D, M, Cd, K, F as Matrix Market files and linear_model.m\n"
            "  --matrices          print the matrices in the report\n"
            "  --shapes            print the mode shapes in the report\n"
            "  --nev K             the K eigenvalues nearest the shift only (a conjugate pair counts as two),\n"
            "                      by the sparse pencil, never forming A dense (augmented, descriptor)\n"
            "  --shift S           real shift of the partial spectrum (default -1e-3: the lowest modes)\n"
            "  --shift-im S        imaginary part of the shift (rotors: the modes near i Omega; default 0)\n"
            "  --eigensolver NAME  engine of the partial spectrum: arpack (default) or slepc (SLEPc + MUMPS,\n"
            "                      over MPI under mpirun -n P; the MPI plugin, docs/parallel.md)\n"
            "  --mem-budget SIZE   memory the computation may use, bytes or with k, M, G (default 2G); above\n"
            "                      it augmented gives a partial spectrum, other requests are refused\n"
            "  --no-matrices       --json without the large dense outputs (ss, mck, q_S, mode_shapes)\n"
            "  --version, --help\n");
}

/* The commands and the options each takes; an option of another command is a usage error. */
typedef struct command {
    const char *name, *what, *opts; /* opts: " --a --b " */
} command;

static const command commands[] = {
    {"linearize", "operating point, exact linear model and its modes",
     " --method --set --guess --at --json -o --matrices --shapes --nev --shift --mem-budget --no-matrices"
     " --shift-im --eigensolver "},
    {"equilibrium", "the operating point only", " --set --guess --at --json "},
    {"check", "counts, degrees of freedom, redundant constraints", " --set --guess --at "},
    {"compare", "every linearization method side by side (time, eigenvalues, deviation)",
     " --set --guess --at --json --repeat --mem-budget "},
    {"report", "one self-contained HTML page (-o FILE): summary, eigenvalues, root locus, mode animation",
     " --method --set --guess --at -o --nev --shift --mem-budget --shift-im --eigensolver "},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

/* Commands with their own options, in their own files (cli/cmd_*.c): run(argc, argv) gets the
 * whole command line and returns the exit status. */
int mblin_cmd_sensitivity(int argc, char **argv);
int mblin_cmd_boundary(int argc, char **argv);
int mblin_cmd_codegen(int argc, char **argv);
int mblin_cmd_symbolic(int argc, char **argv);
int mblin_cmd_simulate(int argc, char **argv); /* cli/cmd_simulate.c */
int mblin_cmd_validate(int argc, char **argv);
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} own_commands[] = {{"sensitivity", mblin_cmd_sensitivity}, {"boundary", mblin_cmd_boundary},
                    {"codegen", mblin_cmd_codegen},       {"symbolic", mblin_cmd_symbolic},
                    {"simulate", mblin_cmd_simulate},     {"validate", mblin_cmd_validate}};

static const struct {
    const char *opt, *arg, *help;
} options[] = {
    {"--method", "NAME", "linearization method (default augmented; see docs/methods.md)"},
    {"--set", "NAME=VALUE", "override a parameter: a number or a constant expression such as pi/2 (repeatable)"},
    {"--guess", "NAME=VALUE", "initial value of a coordinate (repeatable; the point itself with --at given)"},
    {"--at", "KIND", "operating point: equilibrium, given or steady (default: the file's)"},
    {"--json", NULL, "print one JSON object instead of the report"},
    {"--repeat", "N", "runs per method, the median time is reported (1..1000, default 3)"},
    {"-o", "DIR", "write A, B, C, D, M, Cd, K, F as Matrix Market files and linear_model.m"},
    {"--matrices", NULL, "print the matrices in the report"},
    {"--shapes", NULL, "print the mode shapes in the report"},
    {"--nev", "K", "the K eigenvalues nearest the shift only, by the sparse pencil (a pair counts as two)"},
    {"--shift", "S", "real shift of the partial spectrum (default -1e-3: the lowest modes)"},
    {"--mem-budget", "SIZE", "memory the computation may use: bytes, or with k, M, G (default 2G)"},
    {"--no-matrices", NULL, "--json without the large dense outputs (ss, mck, q_S, mode_shapes)"},
    {"--shift-im", "S", "imaginary part of the shift of the partial spectrum (default 0)"},
    {"--eigensolver", "NAME", "partial spectrum by arpack (default) or slepc (SLEPc + MUMPS over MPI)"},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

static int takes(const command *c, const char *opt)
{
    char key[64];
    snprintf(key, sizeof key, " %s ", opt);
    return strstr(c->opts, key) != NULL;
}

static int known_option(const char *opt)
{
    for (int i = 0; i < NOPTIONS; i++)
        if (!strcmp(options[i].opt, opt)) return 1;
    return 0;
}

static void command_usage(FILE *f, const command *c)
{
    fprintf(f, "usage: mblin %s MODEL [OPTIONS]\n\n%s\n\noptions:\n", c->name, c->what);
    for (int i = 0; i < NOPTIONS; i++) {
        if (!takes(c, options[i].opt)) continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", options[i].opt, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(f, "  %-18s  %s\n", head, options[i].help);
    }
    fprintf(f, "  %-18s  %s\n", "--help", "this text");
}

/* mkdir -p: every missing level of dir. */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
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

static const char *help_cmd = ""; /* "linearize " once the command is known */

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mblin: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see mblin %s--help)\n", help_cmd);
    return 2;
}

/* OpenBLAS's worker threads spin between the many small dense operations of a linearization
 * and cost more than they give (N = 10^4 four-bar: 1.55 s single-threaded, 1.97 s with the
 * default threads, medians of 5). The command line therefore runs BLAS on one thread unless the
 * user asks otherwise through OPENBLAS_NUM_THREADS or OMP_NUM_THREADS. (The library itself never
 * changes such process-wide settings.) */
extern void openblas_set_num_threads(int num_threads);
int mblin_cmd_sweep(int argc, char **argv);    /* cli/cmd_sweep.c */
int mblin_cmd_freqresp(int argc, char **argv); /* cli/cmd_sweep.c */

int mblin_cli_main(int argc, char **argv) /* main: cli/par_load.c (MPI when launched by mpirun) */
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
    /* commands with their own option parsers (cli/cmd_sweep.c) */
    if (!strcmp(cmd, "sweep")) return mblin_cmd_sweep(argc, argv);
    if (!strcmp(cmd, "freqresp")) return mblin_cmd_freqresp(argc, argv);
    for (size_t c = 0; c < sizeof own_commands / sizeof own_commands[0]; c++)
        if (!strcmp(cmd, own_commands[c].name)) return own_commands[c].run(argc, argv);
    const command *command = NULL;
    for (int c = 0; c < NCOMMANDS; c++)
        if (!strcmp(cmd, commands[c].name)) command = &commands[c];
    if (!command) return usage_error("unknown command '%s'", cmd);
    static char help_buf[32];
    snprintf(help_buf, sizeof help_buf, "%s ", cmd);
    help_cmd = help_buf;

    const char *model_path = NULL, *method = NULL, *outdir = NULL, *at = NULL;
    int repeat = 0;
    int json = 0;
    unsigned flags = 0;
    static mbl_setting sets[MAX_SETS];
    static char set_names[MAX_SETS][256];
    int nsets = 0;
    static mbl_setting guesses[MAX_SETS];
    static char guess_names[MAX_SETS][256];
    int nguess = 0;
    /* large models (docs/linearization.md, "Large models: partial spectra") */
    int nev = 0, no_matrices = 0;
    double shift = 0.0, mem_budget = 0.0;
    double shift_im = 0.0;          /* --shift-im */
    const char *eigensolver = NULL; /* --eigensolver */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            command_usage(stdout, command);
            return 0;
        }
        if (known_option(a) && !takes(command, a)) {
            char why[128];
            snprintf(why, sizeof why, "option '%.40s' does not apply to '%s'", a, cmd);
            return usage_error("%s", why);
        }
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--matrices")) flags |= MBL_REPORT_MATRICES;
        else if (!strcmp(a, "--shapes")) flags |= MBL_REPORT_SHAPES;
        else if (!strcmp(a, "--no-matrices")) no_matrices = 1;
        else if (!strcmp(a, "--guess")) {
            /* --guess NAME=VALUE: a coordinate's initial value (names are checked once the model is loaded) */
            const char *v = i + 1 < argc ? argv[++i] : NULL, *eq = v ? strchr(v, '=') : NULL;
            if (!v) return usage_error("%s needs a value", a);
            if (!eq || eq == v || !eq[1]) return usage_error("--guess expects NAME=VALUE, got '%s'", v);
            if (nguess >= MAX_SETS) return usage_error("too many --guess options (at most 256)%s", "");
            if ((size_t)(eq - v) >= sizeof guess_names[0]) return usage_error("--guess: name too long in '%s'", v);
            memcpy(guess_names[nguess], v, (size_t)(eq - v));
            guess_names[nguess][eq - v] = '\0';
            char why[200], msg[600];
            if (mblin_cli_number(eq + 1, &guesses[nguess].value, why, sizeof why)) {
                snprintf(msg, sizeof msg, "--guess: '%.200s' is not NAME=VALUE with a number or a constant expression "
                         "(2, -0.5, 1e-3, pi/2): %s", v, why);
                return usage_error("%s", msg);
            }
            guesses[nguess].name = guess_names[nguess];
            nguess++;
        } else if (!strcmp(a, "--nev") || !strcmp(a, "--shift") || !strcmp(a, "--mem-budget") ||
                   !strcmp(a, "--shift-im")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const char *v = argv[++i];
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
            if (mblin_cli_decimal(num, &x))
                return usage_error(!strcmp(a, "--nev")     ? "--nev expects a positive integer, got '%s'"
                                   : !strcmp(a, "--shift") ? "--shift expects a number, got '%s'"
                                   : !strcmp(a, "--shift-im") ? "--shift-im expects a number, got '%s'"
                                                           : "--mem-budget expects a size (bytes, or with k, M, G), got '%s'",
                                   v);
            x *= unit;
            if (!strcmp(a, "--nev")) {
                if (x < 1 || x > 1e8 || x != (int)x) return usage_error("--nev expects a positive integer, got '%s'", v);
                nev = (int)x;
            } else if (!strcmp(a, "--shift")) {
                shift = x;
            } else if (!strcmp(a, "--shift-im")) {
                shift_im = x;
            } else {
                if (!(x >= 1048576.0)) return usage_error("--mem-budget expects at least 1M, got '%s'", v);
                mem_budget = x;
            }
        }
        else if (!strcmp(a, "--eigensolver")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            eigensolver = argv[++i];
            if (strcmp(eigensolver, "arpack") && strcmp(eigensolver, "slepc"))
                return usage_error("--eigensolver expects arpack or slepc, got '%s'", eigensolver);
        }
        else if (!strcmp(a, "--method") || !strcmp(a, "-o") || !strcmp(a, "--set") || !strcmp(a, "--at") ||
                 !strcmp(a, "--repeat")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--method")) method = v;
            else if (!strcmp(a, "--repeat")) {
                char *end = NULL;
                long k = strtol(v, &end, 10);
                if (!end || *end || k < 1 || k > 1000) return usage_error("--repeat expects 1..1000, got '%s'", v);
                repeat = (int)k;
            }
            else if (!strcmp(a, "-o")) outdir = v;
            else if (!strcmp(a, "--at")) at = v;
            else {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v || !eq[1]) return usage_error("--set expects NAME=VALUE, got '%s'", v);
                if (nsets >= MAX_SETS) return usage_error("too many --set options (at most 256)%s", "");
                size_t nl = (size_t)(eq - v);
                if (nl >= sizeof set_names[0]) return usage_error("--set: name too long in '%s'", v);
                memcpy(set_names[nsets], v, nl);
                set_names[nsets][nl] = '\0';
                double x;
                char why[200], msg[600];
                if (mblin_cli_number(eq + 1, &x, why, sizeof why)) {
                    snprintf(msg, sizeof msg, "--set: '%.200s' is not NAME=VALUE with a number or a constant expression "
                             "(2, -0.5, 1e-3, pi/2): %s", v, why);
                    return usage_error("%s", msg);
                }
                sets[nsets].name = set_names[nsets];
                sets[nsets].value = x;
                nsets++;
            }
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (!model_path) {
            model_path = a;
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
    }
    if (!model_path) return usage_error("%s needs a MODEL file", cmd);

    mbl_opoint_options popt;
    mbl_opoint_options_default(&popt);
    if (at) {
        if (!strcmp(at, "equilibrium")) popt.at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(at, "given")) popt.at = MBL_AT_GIVEN;
        else if (!strcmp(at, "steady")) popt.at = MBL_AT_STEADY;
        else return usage_error("--at must be equilibrium, given or steady, not '%s'", at);
    }
    if (method) {
        int known = 0;
        for (int i = 0; i < mbl_lin_method_count(); i++) known |= !strcmp(method, mbl_lin_method_name(i));
        if (!known) {
            char list[512] = "";
            for (int i = 0; i < mbl_lin_method_count(); i++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", mbl_lin_method_name(i));
            }
            fprintf(stderr, "mblin: unknown linearization method '%s' (available: %s) (see mblin %s--help)\n", method,
                    list, help_cmd);
            return 2;
        }
    }

    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *model = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    int code = 0;
    if (mbl_model_load_file(model_path, sets, nsets, &model, &st)) return mblin_cli_fail(&st);
    for (int g = 0; g < nguess; g++) {
        mbl_model_info info;
        mbl_model_get_info(model, &info);
        int i = 0;
        while (i < info.ncoord && strcmp(mbl_model_coord_name(model, i), guesses[g].name)) i++;
        if (i == info.ncoord) {
            mbl_model_free(model);
            return usage_error("--guess: the model has no coordinate named '%s'", guesses[g].name);
        }
    }
    popt.guess = guesses;
    popt.nguess = nguess;

    if (!strcmp(cmd, "check")) {
        /* the point is best effort: a model whose point cannot be found is reported as such */
        if (mbl_operating_point(model, &popt, &pt, &st)) {
            mbl_report_check(stdout, model, NULL);
            code = mblin_cli_fail(&st);
        } else {
            mbl_report_check(stdout, model, pt);
            mbl_model_info info;
            mbl_model_get_info(model, &info);
            if (pt->rank_phi_q < info.nhol + info.nnh) {
                fprintf(stderr, "mblin: %s: %d redundant constraint(s) or a singular configuration at the operating point\n",
                        model_path, info.nhol + info.nnh - pt->rank_phi_q);
                code = 1;
            }
        }
        goto done;
    }
    if (mbl_operating_point(model, &popt, &pt, &st)) {
        code = mblin_cli_fail(&st);
        goto done;
    }
    if (!strcmp(cmd, "equilibrium")) {
        if (json) mbl_report_point_json(stdout, model, pt);
        else mbl_report_point_text(stdout, model, pt);
        goto done;
    }
    mbl_lin_options lopt;
    mbl_lin_options_default(&lopt);
    if (method) lopt.method = method;
    if (nev) lopt.nev = nev, lopt.partial = MBL_PARTIAL_ALWAYS;
    if (shift != 0.0) lopt.shift = shift;
    if (mem_budget > 0) lopt.mem_budget = mem_budget;
    lopt.shift_im = shift_im;
    mbla_eigs_backend eigs_backend;
    if (eigensolver && !strcmp(eigensolver, "slepc")) { /* the MPI plugin's SLEPc (cli/par_load.c) */
        if (mblin_par_require("--eigensolver slepc")) {
            code = 1;
            goto done;
        }
        if (!mblin_par()->eigs_backend) {
            fprintf(stderr, "mblin: --eigensolver slepc: the MPI plugin was built without SLEPc (libslepc-real-dev; "
                            "-DMBLIN_SLEPC=ON)\n");
            code = 1;
            goto done;
        }
        if (mblin_par()->eigs_backend(&eigs_backend, &st)) {
            code = mblin_cli_fail(&st);
            goto done;
        }
        lopt.eigs_backend = &eigs_backend;
    }
    /* under mpirun the results are written by rank 0 only (the others' stdout is discarded) */
    const int root = !mblin_par() || mblin_par()->rank() == 0;
    if (!strcmp(cmd, "compare")) {
        mbl_comparison *cmp = NULL;
        if (mbl_compare(model, pt, &lopt, repeat, &cmp, &st)) code = mblin_cli_fail(&st);
        else mbl_report_compare(stdout, model, cmp, json);
        mbl_comparison_free(cmp);
        goto done;
    }
    if (mbl_linearize(model, pt, &lopt, &lin, &st) || mbl_modal(lin, NULL, &modes, &st)) {
        code = mblin_cli_fail(&st);
        goto done;
    }
    if (!strcmp(cmd, "report")) {
        /* -o names the page (stdout without it) */
        FILE *f = outdir && root ? fopen(outdir, "w") : stdout;
        if (!f) {
            fprintf(stderr, "mblin: %s: cannot write the report (%s)\n", outdir, strerror(errno));
            code = 1;
            goto done;
        }
        if (mbl_report_html(f, model, pt, lin, modes, &st)) code = mblin_cli_fail(&st);
        if (f != stdout && fclose(f) != 0 && !code) {
            fprintf(stderr, "mblin: %s: cannot write the report (%s)\n", outdir, strerror(errno));
            code = 1;
        }
        goto done;
    }
    /* the directory is made only now, when there is something to write in it */
    if (!root) outdir = NULL;
    if (outdir && make_dirs(outdir) != 0) {
        fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", outdir, strerror(errno));
        code = 1;
        goto done;
    }
    if (outdir && (mbl_report_export(outdir, model, lin, &st) || mbl_report_export_flex(outdir, model, pt, modes, &st) ||
                   mbl_report_export_vtrans(outdir, model, pt, &st))) {
        code = mblin_cli_fail(&st);
        goto done;
    }
    if (json) mbl_report_json_flags(stdout, model, pt, lin, modes, no_matrices ? MBL_REPORT_NO_MATRICES : 0);
    else mbl_report_text(stdout, model, pt, lin, modes, flags);
done:
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
