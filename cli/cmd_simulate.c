/* mblin simulate and mblin validate: thin clients of include/mblin/sim.h (docs/simulation.md).
 *
 *   mblin simulate MODEL --t-end T [--perturb MODE:AMPLITUDE] [--set-initial NAME=VALUE,...]
 *                        [--input NAME=EXPR] [--dt-out DT] [--rtol R] [--atol A] [-o run.csv]
 *                        [--linearize-every DT [--modes-out FILE.csv] [--svg FILE.svg]
 *                         [--along-x NAME=EXPR] [--sweep sweep.csv]]
 *                        [--set p=value ...] [--guess q=value ...] [--at KIND] [--json]
 *   mblin validate MODEL [--modes K] [--amplitude A] [--periods P] [--samples S] [--rtol R]
 *                        [--max-time SECONDS] [--set p=value ...] [--guess q=value ...] [--at KIND] [--json]
 *
 * Exit status 0 on success, 1 when the model or the computation fails (validate: also when a
 * measured frequency or damping is off by more than --freq-tol / --zeta-tol), 2 for a usage error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/mblin.h"
#include "mblin/sim.h"
#include "sim_psd.h"

#define MAX_ITEMS 256

/* the command line: the common options (a: --set, --guess, --at, --json, -o, MODEL) and the
 * commands' own */
typedef struct cli {
    cli_args a;
    const char *cmd, *modes_out, *svg, *sweep, *along_expr;
    char along_name[128];
    int integrator;     /* --integrator ida|ssode */
    double newton_tol, repartition_cond;
    int perturb_mode, has_perturb, nmodes, samples, has_t_end, has_max_time;
    double t_end, dt_out, rtol, atol, perturb_amp, lin_every, fmax, amplitude, periods, freq_tol, zeta_tol, max_growth, max_steps, mem_budget, max_time;
    mbl_setting initial[MAX_ITEMS];
    char init_names[MAX_ITEMS][256];
    int ninit;
    mbl_sim_input inputs[MAX_ITEMS];
    int ninputs;
    cli_psd psd;        /* --psd NAMES, --psd-out, --psd-svg, --psd-segment, --psd-peaks */
} cli;

static void help(void *ud)
{
    const cli *c = ud;
    if (!strcmp(c->cmd, "simulate")) cli_help_head(stdout, "simulate", "MODEL --t-end T [OPTIONS]");
    else cli_help_head(stdout, "validate", "MODEL [OPTIONS]");
    if (!strcmp(c->cmd, "simulate"))
        printf("\nSUNDIALS IDA on the stabilized index-2 form of Gear, Gupta and Leimkuhler, exact sparse Jacobian,\n"
               "KLU; docs/simulation.md\n\n"
               "options:\n"
               "  --t-end T              end time (required)\n"
               "  --dt-out DT            output interval (default (T - t0)/1000)\n"
               "  --perturb MODE:A       add mode MODE (as numbered by `mblin linearize`) with amplitude A\n"
               "  --set-initial N=V,...  initial coordinates (x=...) or velocities (der(x)=...), projected onto\n"
               "                         the constraints\n"
               "  --input NAME=EXPR      an input as an expression of t (repeatable; default: its value at the\n"
               "                         operating point: the file's, or a trim's solved one)\n"
               "  --rtol R, --atol A     IDA's tolerances (default 1e-8, 1e-10)\n"
               "  --integrator ida|ssode the integrator: IDA (default), or coordinate partitioning: the\n"
               "                         independent coordinates' ODE by CVODE (BDF), the dependent ones by\n"
               "                         Newton on the constraints (holonomic constraints only)\n"
               "  --newton-tol E         ssode: Newton's tolerance on |Phi| (default 1e-12)\n"
               "  --repartition-cond C   ssode: a new partition when the dependent block's condition number\n"
               "                         grows C times its value at the partition (default 100)\n"
               "  --max-steps N          IDA's steps allowed in the whole run (default 1000000); a run whose\n"
               "                         rate projects more than 10 N is refused early with the estimate\n"
               "  --mem-budget SIZE      memory the trajectory may hold: bytes, or with k, M, G (default 2e9),\n"
               "                         checked before the work\n"
               "                         or NAME=random:band=F1:F2,rms=R[,seed=S][,period=P]: band-limited\n"
               "                         random (random-phase multisine, flat in the band F1..F2 Hz)\n"
               "  -o FILE.csv            the trajectory: t, coordinates, velocities, inputs, outputs\n"
               "  --psd NAME[,NAME...]   Welch's PSD (Hann, 50 %% overlap, one-sided, unit^2/Hz) of these\n"
               "                         columns of the trajectory, its highest peaks printed\n"
               "  --psd-segment T        ... segments of T seconds (default: the record / 4.5, 8 segments)\n"
               "  --psd-peaks K          ... the K highest peaks (default 5)\n"
               "  --psd-out FILE.csv     ... the spectra as CSV (f_hz, one column per signal)\n"
               "  --psd-svg FILE.svg     ... the spectra drawn (dB)\n"
               "  --linearize-every DT   linearize along the trajectory every DT (augmented, at the simulated\n"
               "                         point): frequencies and damping vs time\n"
               "  --modes-out FILE.csv   ... written as CSV (default: printed)\n"
               "  --svg FILE.svg         ... drawn: frequency vs time\n"
               "  --along-x NAME=EXPR    ... against NAME = EXPR(t) instead of t (e.g. f=0.0005*t, the spin)\n"
               "  --sweep FILE.csv       ... next to the branches of a quasi-static sweep (mblin sweep -o DIR:\n"
               "                         DIR/sweep.csv) over that parameter\n"
               "  --fmax F               ... frequencies up to F Hz only\n"
               "  --set NAME=VALUE       override a parameter (repeatable)\n"
               "  --guess NAME=VALUE     initial value of a coordinate for the operating point (repeatable)\n"
               "  --at KIND              operating point: equilibrium, given, steady or trim (default: the file's)\n"
               "  --json                 the summary as one JSON object\n");
    else
        printf("\nlinearize, excite each of the lowest modes alone with a small amplitude, simulate, measure its\n"
               "frequency and damping (FFT peak, then a fit of the analytic signal and of the samples) and\n"
               "compare with the eigenvalue; docs/simulation.md\n\n"
               "options:\n"
               "  --modes K              the K lowest oscillatory modes (default 3)\n"
               "  --amplitude A          relative amplitude (default 1e-5, times max(1, largest |q|))\n"
               "  --periods P            simulated damped periods (default 40; less for decaying modes)\n"
               "  --samples S            samples per period (default 64)\n"
               "  --rtol R               IDA's relative tolerance (default 1e-11)\n"
               "  --freq-tol F           exit 1 when a frequency is off by more than F relative (default 1e-4)\n"
               "  --zeta-tol Z           exit 1 when a damping ratio is off by more than Z (default 1e-3)\n"
               "  --max-growth G         record a growing (unstable) mode until it has grown G times, started\n"
               "                         low enough to end at G x the amplitude (default 100)\n"
               "  --max-steps N          IDA's steps allowed in each mode's simulation (default 1000000)\n"
               "  --max-time SECONDS     CPU time the simulations may take in all (default 60; 0: no limit): a run\n"
               "                         estimated above it (from its first 0.2 s) is refused at once with the\n"
               "                         estimate\n"
               "  --set, --guess, --at, --json as for simulate\n");
    cli_user_code_help(stdout, 25);
}

static int number(cli *c, const char *a, const char *v, double *x)
{
    if (cli_decimal(v, x)) return cli_bad_value(c->cmd, a, "a number", v);
    return -1;
}

/* simulate's options of one value each that are not numbers: -1 to go on, else the exit status */
static int simulate_text(cli *c, const char *a, const char *v)
{
    int rc = -1;
    if (!strcmp(a, "--modes-out")) c->modes_out = v;
    else if (!strcmp(a, "--psd")) c->psd.names = v;
    else if (!strcmp(a, "--psd-out")) c->psd.csv = v;
    else if (!strcmp(a, "--psd-svg")) c->psd.svg = v;
    else if (!strcmp(a, "--sweep")) c->sweep = v;
    else if (!strcmp(a, "--svg")) c->svg = v;
    else if (!strcmp(a, "--along-x")) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof c->along_name)
            return cli_usage(c->cmd, "--along-x expects NAME=EXPRESSION of t, got '%s'", v);
        memcpy(c->along_name, v, (size_t)(eq - v));
        c->along_name[eq - v] = '\0';
        c->along_expr = eq + 1;
    } else if (!strcmp(a, "--perturb")) {
        const char *colon = strchr(v, ':');
        char num[32];
        double mode = 0;
        if (!colon || (size_t)(colon - v) >= sizeof num) return cli_usage(c->cmd, "--perturb expects MODE:AMPLITUDE, got '%s'", v);
        memcpy(num, v, (size_t)(colon - v));
        num[colon - v] = '\0';
        if (cli_decimal(num, &mode) || mode < 1 || mode != floor(mode) || mode > 1e6 ||
            cli_decimal(colon + 1, &c->perturb_amp))
            return cli_usage(c->cmd, "--perturb expects MODE:AMPLITUDE (a mode number from 1, a number), got '%s'", v);
        c->perturb_mode = (int)mode - 1;
        c->has_perturb = 1;
    } else if (!strcmp(a, "--set-initial")) {
        const char *p = v;
        while (*p) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            rc = cli_setting(c->cmd, a, p, len, c->initial, c->init_names, &c->ninit, MAX_ITEMS);
            if (rc >= 0) return rc;
            p += len + (e ? 1 : 0);
        }
    } else { /* --input */
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1]) return cli_usage(c->cmd, "--input expects NAME=EXPRESSION, got '%s'", v);
        if (c->ninputs >= MAX_ITEMS) return cli_usage(c->cmd, "too many %s options (at most 256)", a);
        static char inames[MAX_ITEMS][256];
        if ((size_t)(eq - v) >= 256) return cli_usage(c->cmd, "--input: name too long in '%s'", v);
        memcpy(inames[c->ninputs], v, (size_t)(eq - v));
        inames[c->ninputs][eq - v] = '\0';
        c->inputs[c->ninputs].name = inames[c->ninputs];
        c->inputs[c->ninputs].expr = eq + 1;
        c->ninputs++;
    }
    return rc;
}

/* the commands' own options (cli_spec.option): -1 to go on, else the exit status */
static int option(void *ud, const char *a, const char *v)
{
    cli *c = ud;
    int rc = -1;
    if (!strcmp(a, "--rtol")) {
        rc = number(c, a, v, &c->rtol);
        if (rc < 0 && !(c->rtol > 0 && c->rtol < 1)) return cli_usage(c->cmd, "--rtol expects a number in (0, 1), got '%s'", v);
    } else if (!strcmp(a, "--t-end") || !strcmp(a, "--dt-out") || !strcmp(a, "--atol") ||
               !strcmp(a, "--linearize-every") || !strcmp(a, "--fmax")) {
        double x = 0;
        rc = number(c, a, v, &x);
        if (rc < 0 && strcmp(a, "--t-end") && !(x > 0)) return cli_bad_value(c->cmd, a, "a positive number", v);
        if (!strcmp(a, "--t-end")) c->t_end = x, c->has_t_end = 1;
        else if (!strcmp(a, "--dt-out")) c->dt_out = x;
        else if (!strcmp(a, "--atol")) c->atol = x;
        else if (!strcmp(a, "--fmax")) c->fmax = x;
        else c->lin_every = x;
    } else if (!strcmp(a, "--integrator")) {
        if (strcmp(v, "ida") && strcmp(v, "ssode")) return cli_usage(c->cmd, "--integrator expects ida or ssode, got '%s'", v);
        c->integrator = strcmp(v, "ida") ? MBL_SIM_SSODE : MBL_SIM_IDA;
        rc = -1;
    } else if (!strcmp(a, "--newton-tol")) {
        rc = number(c, a, v, &c->newton_tol);
        if (rc < 0 && !(c->newton_tol > 0 && c->newton_tol < 1))
            return cli_usage(c->cmd, "--newton-tol expects a number in (0, 1), got '%s'", v);
    } else if (!strcmp(a, "--repartition-cond")) {
        rc = number(c, a, v, &c->repartition_cond);
        if (rc < 0 && !(c->repartition_cond > 1 && isfinite(c->repartition_cond)))
            return cli_usage(c->cmd, "--repartition-cond expects a number above 1, got '%s'", v);
    } else if (!strcmp(a, "--psd-segment")) {
        rc = number(c, a, v, &c->psd.segment);
        if (rc < 0 && !(c->psd.segment > 0)) return cli_usage(c->cmd, "--psd-segment expects a positive number of seconds, got '%s'", v);
    } else if (!strcmp(a, "--psd-peaks")) {
        double x = 0;
        rc = number(c, a, v, &x);
        if (rc < 0 && !(x >= 1 && x <= 1000 && x == floor(x))) return cli_usage(c->cmd, "--psd-peaks expects an integer 1..1000, got '%s'", v);
        c->psd.npeaks = (int)x;
    } else if (!strcmp(a, "--modes") || !strcmp(a, "--samples")) {
        double x = 0;
        rc = number(c, a, v, &x);
        if (rc < 0 && !(x >= 1 && x <= 1000 && x == floor(x))) return cli_bad_value(c->cmd, a, "an integer 1..1000", v);
        if (!strcmp(a, "--modes")) c->nmodes = (int)x;
        else c->samples = (int)x;
    } else if (!strcmp(a, "--max-steps")) {
        rc = number(c, a, v, &c->max_steps);
        if (rc < 0 && !(c->max_steps >= 1 && c->max_steps <= 1e15 && c->max_steps == floor(c->max_steps)))
            return cli_usage(c->cmd, "--max-steps expects a positive integer, got '%s'", v);
    } else if (!strcmp(a, "--mem-budget")) {
        char num[64];
        size_t l = strlen(v);
        double unit = l > 1 && l < sizeof num && strchr("kMG", v[l - 1]) ? (v[l - 1] == 'k' ? 1024.0 : v[l - 1] == 'M' ? 1048576.0 : 1073741824.0) : 1.0;
        snprintf(num, sizeof num, "%.*s", (int)(l < sizeof num ? l - (unit > 1) : 0), v);
        if (cli_decimal(num, &c->mem_budget) || !(c->mem_budget * unit >= 1048576.0) || !isfinite(c->mem_budget * unit))
            return cli_usage(c->cmd, "--mem-budget expects a size of at least 1M (bytes, or with k, M, G), got '%s'", v);
        c->mem_budget *= unit;
    } else if (!strcmp(a, "--max-time")) {
        rc = number(c, a, v, &c->max_time);
        if (rc < 0 && !(c->max_time >= 0 && c->max_time < 1e15))
            return cli_usage(c->cmd, "--max-time expects a number of seconds (0: no limit), got '%s'", v);
        c->has_max_time = 1;
    } else if (!strcmp(a, "--max-growth")) {
        rc = number(c, a, v, &c->max_growth);
        if (rc < 0 && !(c->max_growth > 1 && c->max_growth < 1e300))
            return cli_usage(c->cmd, "--max-growth expects a number above 1, got '%s'", v);
    } else if (!strcmp(a, "--amplitude") || !strcmp(a, "--periods") || !strcmp(a, "--freq-tol") ||
               !strcmp(a, "--zeta-tol")) {
        double x = 0;
        rc = number(c, a, v, &x);
        if (rc < 0 && !(x > 0)) return cli_bad_value(c->cmd, a, "a positive number", v);
        if (!strcmp(a, "--amplitude")) c->amplitude = x;
        else if (!strcmp(a, "--periods")) c->periods = x;
        else if (!strcmp(a, "--freq-tol")) c->freq_tol = x;
        else c->zeta_tol = x;
    } else {
        rc = simulate_text(c, a, v);
    }
    return rc;
}

static const cli_option simulate_own[] = {
    {"--rtol", 1},      {"--t-end", 1},   {"--dt-out", 1},  {"--atol", 1},        {"--linearize-every", 1},
    {"--fmax", 1},      {"--modes-out", 1}, {"--svg", 1},   {"--sweep", 1},       {"--along-x", 1},
    {"--perturb", 1},   {"--set-initial", 1}, {"--input", 1}, {"--max-steps", 1}, {"--mem-budget", 1},
    {"--psd", 1},       {"--psd-out", 1}, {"--psd-svg", 1}, {"--psd-segment", 1}, {"--psd-peaks", 1},
    {"--integrator", 1}, {"--newton-tol", 1}, {"--repartition-cond", 1}, {NULL, 0}};
static const cli_option validate_own[] = {{"--rtol", 1},     {"--modes", 1},    {"--samples", 1}, {"--amplitude", 1},
                                          {"--periods", 1},  {"--freq-tol", 1}, {"--zeta-tol", 1}, {"--max-growth", 1},
                                          {"--max-steps", 1}, {"--max-time", 1}, {NULL, 0}};

/* -1 to go on, else the exit status */
static int parse(cli *c, int argc, char **argv)
{
    int simu = !strcmp(c->cmd, "simulate");
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_JSON | (simu ? CLI_OPT_OUT : 0),
                     simu ? simulate_own : validate_own, NULL, option, help, c};
    int rc = cli_parse(&spec, &c->a, argc, argv);
    if (rc >= 0) return rc;
    if (!c->a.model) return cli_usage(c->cmd, "%s needs a model file", c->cmd);
    if (simu && !c->has_t_end) return cli_usage(c->cmd, "%s needs --t-end", c->cmd);
    if (c->sweep && !(c->svg && c->lin_every > 0))
        return cli_usage(c->cmd, "%s", "--sweep draws a sweep into the plot of --linearize-every DT --svg FILE.svg: give both");
    if (!c->psd.names && (c->psd.csv || c->psd.svg || c->psd.segment > 0 || c->psd.npeaks))
        return cli_usage(c->cmd, "%s", "--psd-out, --psd-svg, --psd-segment and --psd-peaks go with --psd NAME[,NAME...]");
    return -1;
}

static int load(const cli *c, mbl_model **md, mbl_point **pt, mbl_status *st)
{
    mbl_load_options lo; /* --mem-budget bounds building the model too (its beams' estimate) */
    cli_load_options(&c->a, &lo);
    lo.mem_budget = c->mem_budget > 0 ? c->mem_budget : 0;
    int rc = mbl_model_load_file_opt(c->a.model, c->a.sets, c->a.nsets, &lo, md, st);
    if (rc) return rc;
    mbl_opoint_options oo;
    cli_opoint_options(&c->a, &oo);
    return mbl_operating_point(*md, &oo, pt, st);
}

static int linearize(const mbl_model *md, const mbl_point *pt, mbl_modes **modes, mbl_status *st)
{
    mbl_linear *lin = NULL;
    int rc = mbl_linearize(md, pt, NULL, &lin, st);
    if (!rc) rc = mbl_modal(lin, NULL, modes, st);
    mbl_linear_free(lin);
    return rc;
}

/* x = EXPR(t) of --along-x NAME=EXPR (the CLI's own small graph: the name t only) */
static int t_only(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args, mblx_id *out,
                  char *why, size_t whylen)
{
    (void)g, (void)args, (void)why, (void)whylen;
    if (nargs >= 0 || len != 1 || name[0] != 't') return 1;
    *out = *(const mblx_id *)ud;
    return 0;
}

static int along_x(const cli *c, int n, const double *t, double *x, mbl_status *st)
{
    if (!c->along_expr) {
        memcpy(x, t, (size_t)n * sizeof *x);
        return 0;
    }
    mblx_graph *g = mblx_graph_new();
    if (!g) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_id ts = mblx_symbol(g, "t"), e = MBLX_NONE;
    mblx_parse_opts po = {0};
    po.resolve = t_only;
    po.ud = &ts;
    int rc = mblx_parse(g, c->along_expr, strlen(c->along_expr), &po, &e, st);
    if (rc) mbl_error_prefix(st, "--along-x '%s'", c->along_expr);
    long idx = mblx_symbol_index(g, ts);
    double syms[8] = {0};
    for (int i = 0; !rc && i < n; i++) {
        syms[idx] = t[i];
        rc = mblx_eval(g, e, syms, &x[i], st);
    }
    mblx_graph_free(g);
    return rc;
}

/* A sweep's CSV (mblin sweep -o DIR: DIR/sweep.csv) read by its header's names: the axes (the
 * model's parameters or t), then branch, re, im, freq_hz, damping_ratio, mac in any order. The
 * plot's x (--along-x NAME, else t) must be one of the axes; the rows of a sweep over two axes are
 * those at the model's value of the other. */
enum { SW_BRANCH, SW_RE, SW_IM, SW_FREQ, SW_ZETA, SW_MAC, SW_NRES, SW_MAXCOL = 16 };
static const char *const sweep_result_cols[SW_NRES] = {"branch", "re", "im", "freq_hz", "damping_ratio", "mac"};

typedef struct sweep_cols {
    int ncol;
    int res[SW_NRES];      /* column of each result, -1 when absent */
    int xcol;              /* column of the plot's x */
    int ocol;              /* column of the other axis (-1: none) */
    double oval;           /* the model's value of the other axis */
    char names[SW_MAXCOL][128];
} sweep_cols;

/* split a CSV line in place at the commas (no quoting in a sweep's CSV); the count, or -1 beyond max */
static int csv_split(char *line, char **f, int max)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    int nf = 0;
    for (char *p = line;; p++) {
        if (nf == max) return -1;
        f[nf++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    return nf;
}

static int model_param(const mbl_model *md, const char *name)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), name)) return i;
    return -1;
}

static int sweep_header(const cli *c, const mbl_model *md, const char *path, char *line, sweep_cols *H, mbl_status *st)
{
    char *f[SW_MAXCOL];
    int nf = csv_split(line, f, SW_MAXCOL), axes[2], naxes = 0;
    if (nf < 0) return mbl_error(st, MBL_EIO, "%s:1: more than %d columns: not a sweep CSV (mblin sweep -o DIR)", path, SW_MAXCOL);
    const char *x = c->along_expr ? c->along_name : "t";
    H->ncol = nf;
    H->xcol = H->ocol = -1;
    for (int r = 0; r < SW_NRES; r++) H->res[r] = -1;
    for (int j = 0; j < nf; j++) {
        snprintf(H->names[j], sizeof H->names[j], "%s", f[j]);
        for (int k = 0; k < j; k++)
            if (!strcmp(f[k], f[j])) return mbl_error(st, MBL_EIO, "%s:1: column %d: '%.80s' twice", path, j + 1, f[j]);
        int r = 0;
        while (r < SW_NRES && strcmp(f[j], sweep_result_cols[r])) r++;
        if (r < SW_NRES) {
            H->res[r] = j;
            continue;
        }
        if (naxes == 2 || !f[j][0])
            return mbl_error(st, MBL_EIO, "%s:1: column %d: unknown name '%.80s' (a sweep's CSV has one or two parameter "
                             "columns, then branch, re, im, freq_hz, damping_ratio, mac)", path, j + 1, f[j]);
        axes[naxes++] = j;
        if (!strcmp(f[j], x)) H->xcol = j;
        else H->ocol = j;
    }
    for (int r = SW_BRANCH; r <= SW_FREQ; r++)
        if (H->res[r] < 0) return mbl_error(st, MBL_EIO, "%s:1: no column '%s': not a sweep CSV (mblin sweep -o DIR)", path, sweep_result_cols[r]);
    if (!naxes) return mbl_error(st, MBL_EIO, "%s:1: no parameter column: not a sweep CSV (mblin sweep -o DIR)", path);
    if (H->xcol < 0)
        return mbl_error(st, MBL_EIO, "%s:1: no column '%s' (the plot's x%s): the sweep is over %s%s%s", path, x,
                         c->along_expr ? ", --along-x" : "; give --along-x NAME=EXPR(t) for a sweep's parameter",
                         H->names[axes[0]], naxes > 1 ? " and " : "", naxes > 1 ? H->names[axes[1]] : "");
    if (H->ocol >= 0) { /* the rows at the simulated model's value of the other axis */
        int ip = model_param(md, H->names[H->ocol]);
        if (ip < 0)
            return mbl_error(st, MBL_EIO, "%s:1: column %d: '%.80s' is not a parameter of %s, so the sweep's rows at its "
                             "value cannot be chosen", path, H->ocol + 1, H->names[H->ocol], c->a.model);
        H->oval = mbl_model_param_value(md, ip);
    }
    return 0;
}

static int read_sweep(const cli *c, const mbl_model *md, mbl_svg_series **out, int *nout, double **store, mbl_status *st)
{
    const char *path = c->sweep;
    FILE *f = fopen(path, "r");
    if (!f) return mbl_error(st, MBL_EIO, "cannot read %s", path);
    char *line = NULL;
    size_t cap_line = 0;
    int nrow = 0, cap = 0, maxb = 0, rc = 0, lineno = 1, nother = 0;
    double *v = NULL; /* rows of (value, branch, freq) */
    double omin = INFINITY, omax = -INFINITY;
    sweep_cols H;
    if (getline(&line, &cap_line, f) < 0) rc = mbl_error(st, MBL_EIO, "%s: empty: not a sweep CSV (mblin sweep -o DIR)", path);
    else rc = sweep_header(c, md, path, line, &H, st);
    while (!rc && getline(&line, &cap_line, f) >= 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == strlen(line)) continue; /* a blank line */
        char *fld[SW_MAXCOL];
        double val[SW_MAXCOL];
        int nf = csv_split(line, fld, SW_MAXCOL);
        if (nf != H.ncol) {
            rc = mbl_error(st, MBL_EIO, "%s:%d: %d fields, the header has %d", path, lineno, nf < 0 ? SW_MAXCOL + 1 : nf, H.ncol);
            break;
        }
        for (int j = 0; j < nf && !rc; j++) {
            char *end = NULL;
            val[j] = strtod(fld[j], &end);
            if (end == fld[j] || *end)
                rc = mbl_error(st, MBL_EIO, "%s:%d: column %d (%s): not a number: '%.40s'", path, lineno, j + 1, H.names[j], fld[j]);
        }
        if (rc) break;
        double br = val[H.res[SW_BRANCH]], re = val[H.res[SW_RE]], im = val[H.res[SW_IM]], fhz = val[H.res[SW_FREQ]];
        /* the data row k has a branch from 1 to k (the first point lists its branches 1, 2, ...
         * in order); before, the branch was converted to int unchecked (1e300: undefined behaviour) */
        if (!(br >= 1 && br <= lineno - 1 && br == floor(br))) {
            rc = mbl_error(st, MBL_EIO, "%s:%d: column %d (branch): not a branch number from 1 to the row's number: %g",
                           path, lineno, H.res[SW_BRANCH] + 1, br);
            break;
        }
        if (H.ocol >= 0) { /* a sweep over two axes: the rows at the model's value of the other */
            double o = val[H.ocol];
            omin = fmin(omin, o), omax = fmax(omax, o);
            if (!(fabs(o - H.oval) <= 1e-9 * fmax(1.0, fabs(H.oval)))) continue;
            nother++;
        }
        if (!(im > 1e-9 * (1 + fabs(re))) || !(fhz > 1e-6)) continue;
        if (nrow == cap) {
            cap = cap ? 2 * cap : 256;
            double *nv = realloc(v, (size_t)cap * 3 * sizeof *nv);
            if (!nv) {
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        v[3 * nrow] = val[H.xcol], v[3 * nrow + 1] = br, v[3 * nrow + 2] = fhz;
        if ((int)br > maxb) maxb = (int)br;
        nrow++;
    }
    free(line);
    fclose(f);
    if (!rc && H.ocol >= 0 && !nother)
        rc = mbl_error(st, MBL_EIO, "%s: no row at %s = %.10g (the model's value; the sweep has %s from %.10g to %.10g)", path,
                       H.names[H.ocol], H.oval, H.names[H.ocol], omin, omax);
    mbl_svg_series *S = rc ? NULL : calloc((size_t)maxb + 1, sizeof *S);
    double *xy = rc ? NULL : malloc(((size_t)nrow * 2 + 1) * sizeof *xy);
    if (!rc && (!S || !xy)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    int ns = 0, used = 0;
    for (int b = 1; !rc && b <= maxb; b++) {
        int n0 = used;
        for (int r = 0; r < nrow; r++)
            if ((int)v[3 * r + 1] == b) xy[used] = v[3 * r], xy[nrow + used] = v[3 * r + 2], used++;
        if (used == n0) continue;
        S[ns].n = used - n0, S[ns].x = xy + n0, S[ns].y = xy + nrow + n0;
        S[ns].label = "quasi-static sweep", S[ns].markers = 0, S[ns].color = 7;
        ns++;
    }
    free(v);
    if (rc) {
        free(S), free(xy);
        return rc;
    }
    *out = S, *nout = ns, *store = xy;
    return 0;
}

/* frequencies and damping along the trajectory: every `every`, the nearest sample */
static int along(const cli *c, const mbl_model *md, const mbl_sim_result *R, const mbl_svg_series *S, int ns,
                 mbl_status *st)
{
    FILE *f = c->modes_out ? cli_output_file(c->modes_out) : stdout; /* removed when interrupted */
    if (!f) return mbl_error(st, MBL_EIO, "cannot write %s", c->modes_out);
    int rc = 0, np = 0, cap = 0;
    double *pt_t = NULL, *pt_f = NULL; /* (t, frequency) of every oscillatory mode at every instant */
    fprintf(f, "t,mode,re,im,freq_hz,damping_ratio\n");
    double t0 = R->t[0], next = t0;
    for (int s = 0; s < R->nt && !rc; s++) {
        if (R->t[s] + 1e-9 * c->lin_every < next) continue;
        next += c->lin_every;
        mbl_point *p = NULL;
        mbl_modes *mo = NULL;
        rc = mbl_sim_point(md, R, s, &p, st);
        if (!rc) rc = linearize(md, p, &mo, st);
        if (rc) mbl_error_prefix(st, "linearizing at t = %g", R->t[s]);
        for (int j = 0; !rc && j < mo->nx; j++) {
            const mbl_mode *m = &mo->modes[j];
            if (m->spurious || m->im < 0) continue;
            fprintf(f, "%.12g,%d,%.12g,%.12g,%.12g,%.12g\n", R->t[s], j + 1, m->re, m->im, m->freq_hz, m->damping_ratio);
            if (m->kind != MBL_MODE_OSCILLATORY) continue;
            if (np == cap) {
                cap = cap ? 2 * cap : 256;
                double *a = realloc(pt_t, (size_t)cap * sizeof *a);
                if (a) pt_t = a;
                double *b = a ? realloc(pt_f, (size_t)cap * sizeof *b) : NULL;
                if (b) pt_f = b;
                if (!a || !b) {
                    rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                    break;
                }
            }
            pt_t[np] = R->t[s], pt_f[np++] = m->freq_hz;
        }
        mbl_point_free(p);
        mbl_modes_free(mo);
    }
    if (f != stdout) fclose(f);
    if (!rc && c->svg) {
        double *px = malloc(((size_t)np + 1) * sizeof *px);
        if (!px) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = along_x(c, np, pt_t, px, st);
        mbl_svg_series *all = rc ? NULL : calloc((size_t)ns + 1, sizeof *all);
        if (!rc && !all) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            if (ns) memcpy(all, S, (size_t)ns * sizeof *all);
            if (c->fmax > 0) { /* leave out what is above the plot's frequency range */
                for (int i = 0; i < np; i++)
                    if (pt_f[i] > c->fmax) pt_f[i] = NAN;
                for (int k = 0; k < ns; k++)
                    for (int i = 0; i < S[k].n; i++)
                        if (S[k].y[i] > c->fmax) ((double *)S[k].y)[i] = NAN;
            }
            all[ns] = (mbl_svg_series){np, px, pt_f, "along the trajectory", 1, 3};
            char xl[160];
            snprintf(xl, sizeof xl, "%s", c->along_expr ? c->along_name : "t (s)");
            FILE *g = cli_output_file(c->svg); /* removed when interrupted */
            if (!g) rc = mbl_error(st, MBL_EIO, "cannot write %s", c->svg);
            else {
                rc = mbl_svg_plot(g, "frequencies along the trajectory", xl, "frequency (Hz)", all, ns + 1);
                if (fclose(g) || rc) rc = mbl_error(st, MBL_EIO, "writing %s failed", c->svg);
            }
        }
        free(all), free(px);
    }
    free(pt_t), free(pt_f);
    return rc;
}

/* simulate's summary as text: the run, the integrator's counters, the drift */
static void print_run(const cli *c, const mbl_sim_result *R)
{
    printf("simulated %s from t = %g to %g: %d samples%s%s\n", c->a.model, R->t[0], R->t[R->nt - 1], R->nt,
           c->a.out ? " written to " : "", c->a.out ? c->a.out : "");
    if (R->integrator == MBL_SIM_SSODE)
        printf("CVODE (BDF) on %d independent coordinates (coordinate partitioning): %ld steps, %ld right-hand sides, "
               "%ld Jacobians, %ld error-test and %ld convergence failures, %ld repartitions, %.3g s\n"
               "constraint drift: |Phi| <= %.3g, |Phi'| <= %.3g\n",
               R->nindep, R->nsteps, R->nres, R->njac, R->netf, R->nncf, R->nrepart, R->seconds, R->phi_max, R->phid_max);
    else
        printf("IDA (stabilized index 2, KLU): %ld steps, %ld residual and %ld Jacobian evaluations, %ld error-test "
               "and %ld convergence failures, %.3g s\n"
               "constraint drift: |Phi| <= %.3g, |Phi'| <= %.3g, |c| <= %.3g, |eta| <= %.3g\n",
               R->nsteps, R->nres, R->njac, R->netf, R->nncf, R->seconds, R->phi_max, R->phid_max, R->nh_max,
               R->eta_max);
}

static int run_simulate(cli *c)
{
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL, *start = NULL;
    mbl_modes *modes = NULL;
    mbl_sim_result *R = NULL;
    mbl_svg_series *S = NULL; /* a sweep's branches (--sweep), read before the work */
    int ns = 0;
    double *store = NULL;
    int rc = load(c, &md, &pt, &st);
    if (!rc && c->sweep) rc = read_sweep(c, md, &S, &ns, &store, &st);
    if (!rc && c->has_perturb) rc = linearize(md, pt, &modes, &st);
    if (!rc) rc = mbl_sim_start(md, pt, modes, c->perturb_mode, c->perturb_amp, c->initial, c->ninit, &start, &st);
    if (!rc && c->psd.names) rc = cli_psd_check(&c->psd, md, start->t, c->t_end, c->dt_out, &st);
    if (!rc) {
        mbl_sim_options so;
        mbl_sim_options_default(&so);
        so.t_end = c->t_end;
        if (c->dt_out > 0) so.dt_out = c->dt_out;
        if (c->rtol > 0) so.rtol = c->rtol;
        if (c->atol > 0) so.atol = c->atol;
        if (c->max_steps > 0) so.max_steps = (long)c->max_steps;
        if (c->mem_budget > 0) so.mem_budget = c->mem_budget;
        so.inputs = c->inputs;
        so.ninputs = c->ninputs;
        so.integrator = c->integrator;
        if (c->newton_tol > 0) so.newton_tol = c->newton_tol;
        if (c->repartition_cond > 0) so.repartition_cond = c->repartition_cond;
        rc = mbl_simulate(md, start, &so, &R, &st);
    }
    if (!rc && c->a.out) {
        FILE *f = cli_output_file(c->a.out); /* removed when interrupted */
        if (!f) rc = mbl_error(&st, MBL_EIO, "cannot write %s", c->a.out);
        else {
            rc = mbl_sim_write_csv(f, md, R);
            if (fclose(f) || rc) rc = mbl_error(&st, MBL_EIO, "writing %s failed", c->a.out);
        }
    }
    cli_psd_result psd = {0};
    if (!rc && c->psd.names) rc = cli_psd_run(&c->psd, md, R, &psd, &st);
    double edrift = -1; /* an output named energy: its largest change from the start */
    for (int i = 0; !rc && i < R->ny; i++)
        if (!strcmp(mbl_model_output_name(md, i), "energy")) {
            edrift = 0;
            for (int s = 0; s < R->nt; s++) edrift = fmax(edrift, fabs(R->y[(size_t)s * R->ny + i] - R->y[i]));
        }
    if (!rc) {
        if (c->a.json)
            printf("{\"schema_version\": %d, \"energy_drift\": %.6g, \"t0\": %.17g, \"t_end\": %.17g, \"samples\": %d, \"steps\": %ld, \"residual_evals\": %ld, "
                   "\"jacobian_evals\": %ld, \"error_test_failures\": %ld, \"convergence_failures\": %ld, "
                   "\"phi_max\": %.6g, \"phid_max\": %.6g, \"nh_max\": %.6g, \"eta_max\": %.6g, \"seconds\": %.6g",
                   MBL_JSON_SCHEMA_VERSION, edrift, R->t[0], R->t[R->nt - 1], R->nt, R->nsteps, R->nres, R->njac, R->netf, R->nncf, R->phi_max,
                   R->phid_max, R->nh_max, R->eta_max, R->seconds);
        if (c->a.json && R->integrator == MBL_SIM_SSODE)
            printf(", \"integrator\": \"ssode\", \"independent\": %d, \"repartitions\": %ld", R->nindep, R->nrepart);
        if (!c->a.json) print_run(c, R);
        if (edrift >= 0 && !c->a.json) printf("energy drift: max |energy(t) - energy(t0)| = %.3g (output 'energy')\n", edrift);
        if (start->notes[0] && !c->a.json) printf("start: %s\n", start->notes);
        cli_psd_print(&psd, c->a.json);
        if (c->a.json) printf("}\n");
        fflush(stdout);
    }
    if (!rc && c->lin_every > 0) rc = along(c, md, R, S, ns, &st);
    int code = rc ? cli_fail(&st) : 0;
    cli_psd_result_free(&psd);
    free(S), free(store);
    mbl_sim_result_free(R);
    mbl_modes_free(modes);
    mbl_point_free(start);
    mbl_point_free(pt);
    mbl_model_free(md);
    return code;
}

static int run_validate(cli *c)
{
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_modes *modes = NULL;
    mbl_validation *V = NULL;
    int rc = load(c, &md, &pt, &st);
    if (!rc) rc = linearize(md, pt, &modes, &st);
    mbl_validate_options vo;
    mbl_validate_options_default(&vo);
    if (c->nmodes) vo.nmodes = c->nmodes;
    if (c->amplitude > 0) vo.amplitude = c->amplitude;
    if (c->periods > 0) vo.periods = c->periods;
    if (c->samples) vo.samples = c->samples;
    if (c->rtol > 0) vo.rtol = c->rtol;
    if (c->max_growth > 0) vo.max_growth = c->max_growth;
    if (c->max_steps > 0) vo.max_steps = (long)c->max_steps;
    if (c->has_max_time) vo.max_seconds = c->max_time; /* 0: no limit */
    double ftol = c->freq_tol > 0 ? c->freq_tol : 1e-4, ztol = c->zeta_tol > 0 ? c->zeta_tol : 1e-3;
    if (!rc) rc = mbl_validate(md, pt, modes, &vo, &V, &st);
    int bad = 0, unmeasured = 0;
    if (!rc) {
        if (c->a.json) printf("{\"schema_version\": %d, \"amplitude\": %.6g, \"modes\": [", MBL_JSON_SCHEMA_VERSION, V->amplitude);
        else
            printf("validation of %s: each mode excited alone (amplitude %.3g), simulated, measured\n"
                   "mode  signal        predicted f (Hz)   measured f (Hz)    rel. error   pred. zeta   meas. zeta   "
                   "error     FFT peak (Hz)\n",
                   c->a.model, V->amplitude);
        for (int i = 0; i < V->nrows; i++) {
            const mbl_validate_row *r = &V->rows[i];
            int ok = r->measured && r->freq_rel_err <= ftol && r->zeta_err <= ztol;
            bad += r->measured && !ok;
            unmeasured += !r->measured;
            if (c->a.json && !r->measured) {
                printf("%s{\"mode\": %d, \"signal\": null, \"predicted\": {\"re\": %.15g, \"im\": %.15g, \"freq_hz\": %.15g, "
                       "\"damping_ratio\": %.15g}, \"measured\": null, \"start_amplitude\": %.6g, \"note\": ",
                       i ? ", " : "", r->mode + 1, r->pred_re, r->pred_im, r->pred_freq_hz, r->pred_zeta, r->start_amplitude);
                mbl_json_string(stdout, r->note);
                printf(", \"ok\": null}");
            } else if (c->a.json) {
                printf("%s{\"mode\": %d, \"signal\": \"%s\", \"predicted\": {\"re\": %.15g, \"im\": %.15g, \"freq_hz\": %.15g, "
                       "\"damping_ratio\": %.15g}, \"measured\": {\"re\": %.15g, \"im\": %.15g, \"freq_hz\": %.15g, "
                       "\"damping_ratio\": %.15g, \"fft_peak_hz\": %.15g}, \"freq_rel_err\": %.3g, \"damping_err\": %.3g, "
                       "\"simulated_s\": %.6g, \"steps\": %ld, \"start_amplitude\": %.6g, \"note\": ",
                       i ? ", " : "", r->mode + 1, r->signal, r->pred_re, r->pred_im, r->pred_freq_hz, r->pred_zeta,
                       r->meas_re, r->meas_im, r->meas_freq_hz, r->meas_zeta, r->fft_freq_hz, r->freq_rel_err,
                       r->zeta_err, r->seconds, r->nsteps, r->start_amplitude);
                mbl_json_string(stdout, r->note);
                printf(", \"ok\": %s}", ok ? "true" : "false");
            } else if (!r->measured) {
                printf("%-5d %-13s %-18.12g %-18s %-12s %-12.6g %s\n", r->mode + 1, r->signal, r->pred_freq_hz, "-", "-",
                       r->pred_zeta, r->note);
            } else {
                printf("%-5d %-13s %-18.12g %-18.12g %-12.3g %-12.6g %-12.6g %-9.3g %.8g%s\n", r->mode + 1, r->signal,
                       r->pred_freq_hz, r->meas_freq_hz, r->freq_rel_err, r->pred_zeta, r->meas_zeta, r->zeta_err,
                       r->fft_freq_hz, ok ? "" : "  OFF");
                if (r->note[0])
                    printf("      (%s, started at amplitude %.3g)\n", r->note, r->start_amplitude);
            }
        }
        if (c->a.json) printf("], \"ok\": %s}\n", bad ? "false" : "true");
        fflush(stdout);
        if (bad) {
            fprintf(stderr, "mblin: %d mode(s) off by more than %g (frequency, relative) or %g (damping ratio)\n", bad,
                    ftol, ztol);
        } else if (unmeasured && !c->a.json) {
            printf("%d mode(s) not measured (see above); the others agree\n", unmeasured);
        }
    }
    int code = rc ? cli_fail(&st) : bad ? 1 : 0;
    mbl_validation_free(V);
    mbl_modes_free(modes);
    mbl_point_free(pt);
    mbl_model_free(md);
    return code;
}

int cli_cmd_simulate(int argc, char **argv)
{
    static cli c;
    memset(&c, 0, sizeof c);
    c.cmd = "simulate";
    int rc = parse(&c, argc, argv);
    if (rc >= 0) return rc;
    return run_simulate(&c);
}

int cli_cmd_validate(int argc, char **argv)
{
    static cli c;
    memset(&c, 0, sizeof c);
    c.cmd = "validate";
    int rc = parse(&c, argc, argv);
    if (rc >= 0) return rc;
    return run_validate(&c);
}
