/* `mblin sweep` and `mblin freqresp`: thin clients of include/mblin/sweep.h (docs/study.md).
 *
 *   mblin sweep MODEL --param NAME=FROM:TO:COUNT [--param NAME2=FROM:TO:COUNT] [--threads N]
 *               [--predictor sensitivity|linear] [--orders K1,K2,..] [--speed-unit rad/s|Hz|rpm] [--fmax HZ] [--json] [-o DIR]
 *               [--set p=value ...] [--guess q=value ...] [--at KIND]
 *   mblin freqresp MODEL [--from INPUT --to OUTPUT] --w FROM:TO:COUNT [--linear] [--json] [-o DIR]
 *               [--set p=value ...] [--guess q=value ...] [--at KIND]
 *               (without --from and --to: every input to every output, and the singular values)
 *
 * Results on stdout (CSV, or JSON with --json), files with -o DIR, progress on stderr when it is a
 * terminal, one line "mblin: <reason>" on failure (exit 1; a usage error, exit 2). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mblin/mblin.h"
#include "par/par.h"

#define TWO_PI 6.283185307179586476925286766559

/* FROM:TO:COUNT -> from, to, count (COUNT an integer >= 2, FROM < TO); -1 with why. */
static int range3(const char *s, double *from, double *to, int *count, char *why, size_t whylen)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return snprintf(why, whylen, "too long"), -1;
    strcpy(buf, s);
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || strchr(c2 + 1, ':')) return snprintf(why, whylen, "expected FROM:TO:COUNT"), -1;
    *c1 = *c2 = '\0';
    double n;
    char w[200];
    if (cli_number(buf, from, w, sizeof w) || cli_number(c1 + 1, to, w, sizeof w) ||
        cli_decimal(c2 + 1, &n))
        return snprintf(why, whylen, "FROM and TO must be numbers or constant expressions (pi/2), COUNT an integer"), -1;
    if (n != floor(n) || n < 2 || n > 1e7) return snprintf(why, whylen, "COUNT must be an integer from 2 to 10000000"), -1;
    if (!(*from < *to)) return snprintf(why, whylen, "FROM must be below TO"), -1;
    *count = (int)n;
    return 0;
}

static FILE *open_in(const char *dir, const char *file)
{
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) {
        fprintf(stderr, "mblin: %s/%s: the path is too long\n", dir, file);
        return NULL;
    }
    FILE *f = cli_output_file(path); /* removed when the run is interrupted */
    if (!f) fprintf(stderr, "mblin: %s: cannot write (%s)\n", path, strerror(errno));
    return f;
}

/* mbl_sweep_dist's gather through the MPI plugin (under mpirun; docs/parallel.md) */
static int par_gather(void *ud, const double *buf, size_t n, double **all, size_t *counts, mbl_status *st)
{
    const mbl_par *par = ud;
    return par->gather(buf, n, all, counts, st);
}

static const char sweep_help[] =
    "\noperating point, linear model and modes at every point of a grid of parameter values\n\n"
    "options:\n"
    "  --param NAME=FROM:TO:COUNT  swept parameter (once or twice; NAME t: the time along drivers)\n"
    "  --threads N          worker threads (default 1; the results do not depend on N)\n"
    "  --orders K1,K2,..    excitation orders: order lines on the Campbell diagram and the critical\n"
    "                       speeds where modes meet them (default: none, or 1 when the model declares\n"
    "                       the swept parameter a spin speed, docs/model-files.md)\n"
    "  --speed-unit U       unit of the swept parameter for the order lines: rad/s (default), Hz, rpm\n"
    "  --fmax HZ            upper end of the Campbell diagram's frequency axis (default: all modes)\n"
    "  --predictor P        how tracking predicts each mode at the next point: sensitivity (exact\n"
    "                       d lambda/dp and d shape/dp; the default where the model has them) or\n"
    "                       linear (extrapolation from the last two points)\n"
    "  --floquet T|OMEGA    a Floquet sweep: each point's eigenvalues are the Floquet exponents along\n"
    "                       the point as a periodic orbit of period T, or 2 pi / OMEGA of a spin speed\n"
    "                       (docs/floquet.md); imaginary parts modulo 2 pi / T; -o DIR adds\n"
    "                       stability.svg, the stability chart over one or two parameters\n"
    "  --max-points N       the work limit: a grid of more points is refused before any work\n"
    "                       (default 100000)\n"
    "  --mem-budget SIZE    memory the results may take: bytes, or with k, M, G (default 2G); estimated\n"
    "                       after the first point, refused above it\n"
    "  --json               one JSON object on stdout instead of CSV\n"
    "  -o DIR               write sweep.csv, sweep.json, campbell.svg, locus.svg, damping.svg,\n"
    "                       report.html (interactive: Campbell diagram, root locus, damping)\n"
    "  --set NAME=VALUE     override a parameter (repeatable)\n"
    "  --guess NAME=VALUE   initial value of a coordinate (repeatable)\n"
    "  --at KIND            operating point: equilibrium, given, steady or trim (default: the file's)\n";
/* after --allow-user-code (cli_user_code_help) */
static const char sweep_help_end[] =
    "  --help               this text\n\n"
    "under mpirun -n P the points are split across the P ranks, with the same output (docs/parallel.md)\n";

/* sweep's own options as the parser found them */
typedef struct sweep_opts {
    mbl_sweep_options so;
    char axis_names[2][256];
    double orders[32];
    int norders;
    double hz_per_unit, fmax;
    double mem_budget;           /* --mem-budget (0: the default) */
    mbl_floquet_options fo;      /* --floquet T|OMEGA: a Floquet sweep (docs/floquet.md) */
} sweep_opts;

static void sweep_usage(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "sweep", "MODEL --param NAME=FROM:TO:COUNT [OPTIONS]");
    fputs(sweep_help, stdout);
    cli_user_code_help(stdout, 23);
    fputs(sweep_help_end, stdout);
}

/* --param NAME=FROM:TO:COUNT: -1 to go on, else the exit status */
static int sweep_param(sweep_opts *o, const char *v)
{
    const char *cmd = "sweep";
    mbl_sweep_options *so = &o->so;
    if (so->naxes >= 2) return cli_usage(cmd, "at most two --param options%s", "");
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || (size_t)(eq - v) >= sizeof o->axis_names[0])
        return cli_usage(cmd, "--param expects NAME=FROM:TO:COUNT, got '%s'", v);
    char why[128];
    mbl_sweep_axis *ax = &so->axis[so->naxes];
    if (range3(eq + 1, &ax->from, &ax->to, &ax->count, why, sizeof why)) {
        char m[400];
        snprintf(m, sizeof m, "--param %.200s: %s", v, why);
        return cli_usage(cmd, "%s", m);
    }
    memcpy(o->axis_names[so->naxes], v, (size_t)(eq - v));
    o->axis_names[so->naxes][eq - v] = '\0';
    ax->name = o->axis_names[so->naxes];
    so->naxes++;
    return -1;
}

/* sweep's own options (cli_spec.option) */
static int sweep_option(void *ud, const char *a, const char *v)
{
    const char *cmd = "sweep";
    sweep_opts *o = ud;
    mbl_sweep_options *so = &o->so;
    if (!strcmp(a, "--param")) {
        return sweep_param(o, v);
    } else if (!strcmp(a, "--threads")) {
        double t;
        if (cli_decimal(v, &t) || t != floor(t) || t < 1 || t > 256)
            return cli_usage(cmd, "--threads expects an integer 1..256, got '%s'", v);
        so->threads = (int)t;
        if (so->threads > 1) cli_thread_arenas(); /* before any thread (cli/startup.c) */
    } else if (!strcmp(a, "--predictor")) {
        if (!strcmp(v, "sensitivity")) so->predictor = MBL_PREDICT_SENSITIVITY;
        else if (!strcmp(v, "linear")) so->predictor = MBL_PREDICT_LINEAR;
        else return cli_usage(cmd, "--predictor must be sensitivity or linear, not '%s'", v);
    } else if (!strcmp(a, "--max-points")) {
        double x = 0;
        if (cli_decimal(v, &x) || x != floor(x) || x < 1 || x > 1e15)
            return cli_usage(cmd, "--max-points expects a positive integer, got '%s'", v);
        so->max_points = (long)x;
    } else if (!strcmp(a, "--mem-budget")) {
        char num[64];
        size_t l = strlen(v);
        double x = 0, unit = l > 1 && l < sizeof num && strchr("kMG", v[l - 1])
                                 ? (v[l - 1] == 'k' ? 1024.0 : v[l - 1] == 'M' ? 1048576.0 : 1073741824.0)
                                 : 1.0;
        snprintf(num, sizeof num, "%.*s", (int)(l < sizeof num ? l - (unit > 1) : 0), v);
        if (cli_decimal(num, &x) || !(x * unit >= 1048576.0) || !isfinite(x * unit))
            return cli_usage(cmd, "--mem-budget expects a size of at least 1M (bytes, or with k, M, G), got '%s'", v);
        o->mem_budget = x * unit;
    } else if (!strcmp(a, "--floquet")) {
        char why[128];
        mbl_floquet_options_default(&o->fo);
        so->floquet = &o->fo;
        if (cli_number(v, &o->fo.period, why, sizeof why)) so->floquet_spin = v; /* a spin speed's name */
        else if (!(o->fo.period > 0)) return cli_usage(cmd, "--floquet expects a positive period or a spin speed's name, got '%s'", v);
    } else if (!strcmp(a, "--fmax")) {
        if (cli_decimal(v, &o->fmax) || !(o->fmax > 0)) return cli_usage(cmd, "--fmax expects a positive number (Hz), got '%s'", v);
    } else if (!strcmp(a, "--orders")) {
        char buf[512];
        if (strlen(v) >= sizeof buf) return cli_usage(cmd, "--orders: too long%s", "");
        strcpy(buf, v);
        o->norders = 0;
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (o->norders >= 32) return cli_usage(cmd, "--orders: at most 32%s", "");
            if (cli_decimal(tok, &o->orders[o->norders]) || !(o->orders[o->norders] > 0))
                return cli_usage(cmd, "--orders expects positive numbers separated by commas, got '%s'", v);
            o->norders++;
        }
        if (!o->norders) return cli_usage(cmd, "--orders expects positive numbers, got '%s'", v);
    } else {
        if (!strcmp(v, "rad/s")) o->hz_per_unit = 1.0 / TWO_PI;
        else if (!strcmp(v, "Hz")) o->hz_per_unit = 1.0;
        else if (!strcmp(v, "rpm")) o->hz_per_unit = 1.0 / 60.0;
        else return cli_usage(cmd, "--speed-unit must be rad/s, Hz or rpm, not '%s'", v);
    }
    return -1;
}

static const cli_option sweep_own[] = {{"--param", 1},      {"--threads", 1}, {"--orders", 1}, {"--speed-unit", 1},
                                       {"--fmax", 1},       {"--predictor", 1}, {"--max-points", 1},
                                       {"--mem-budget", 1}, {"--floquet", 1}, {NULL, 0}};

/* A Floquet sweep's point is unstable in its stability chart when its largest exponent's real part
 * is above this (1/s; the integration's error on a conservative model's exponents is ~1e-9) */
#define SWEEP_STABILITY_TOL 1e-8

/* The sweep's files in -o DIR (0, or 1 after a message). */
static int sweep_files(const char *outdir, const mbl_sweep *sw, const sweep_opts *o, const mbl_critical *crit, int ncrit)
{
    int code = 0;
    mbl_status st;
    mbl_status_clear(&st);
    const double *orders = o->orders, hz_per_unit = o->hz_per_unit, fmax = o->fmax;
    const int norders = o->norders;
    if (cli_mkdirs(outdir)) {
        fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", outdir, strerror(errno));
        return 1;
    }
    const char *files[] = {"sweep.csv", "sweep.json", "campbell.svg", "locus.svg", "damping.svg", "report.html"};
    for (int k = 0; k < 6 && !code; k++) {
        FILE *f = open_in(outdir, files[k]);
        if (!f) {
            code = 1;
            break;
        }
        int w = k == 0   ? mbl_sweep_write_csv(f, sw)
                : k == 1 ? mbl_sweep_write_json(f, sw, crit, ncrit)
                : k == 2 ? mbl_sweep_svg_campbell(f, sw, orders, norders, hz_per_unit, fmax, crit, ncrit)
                : k == 3 ? mbl_sweep_svg_locus(f, sw)
                : k == 4 ? mbl_sweep_svg_damping(f, sw)
                         : mbl_sweep_report_html(f, sw, orders, norders, hz_per_unit, fmax, crit, ncrit, &st);
        if (fclose(f) != 0 || w) {
            fprintf(stderr, "mblin: %s/%s: cannot write\n", outdir, files[k]);
            code = 1;
        }
    }
    if (!code && o->so.floquet) { /* a Floquet sweep's stability chart */
        FILE *f = open_in(outdir, "stability.svg");
        if (!f) return 1;
        int w = mbl_sweep_svg_stability(f, sw, SWEEP_STABILITY_TOL);
        if (fclose(f) != 0 || w) {
            fprintf(stderr, "mblin: %s/stability.svg: cannot write\n", outdir);
            code = 1;
        }
    }
    return code;
}

/* Without --orders, a sweep over a parameter the model declares a spin speed (spin_speeds,
 * docs/model-files.md) gets the 1x order line, in the declared unit unless --speed-unit says
 * otherwise; any other sweep none (a bicycle's speed is not a rotor's). */
static void spin_orders(const mbl_model *md, const mbl_sweep_options *so, sweep_opts *o)
{
    double h = 0;
    mbl_model_info info;
    if (md && so->naxes == 1) {
        mbl_model_get_info(md, &info);
        for (int i = 0; i < info.nparam; i++)
            if (!strcmp(mbl_model_param_name(md, i), so->axis[0].name)) h = mbl_model_param_spin(md, i);
    }
    if (!o->norders && h > 0) o->orders[0] = 1, o->norders = 1;
    if (!(o->hz_per_unit > 0)) o->hz_per_unit = h > 0 ? h : 1.0 / TWO_PI;
}

int cli_cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    static cli_args c;
    static sweep_opts o;
    memset(&o, 0, sizeof o);
    mbl_sweep_options_default(&o.so);
    o.norders = 0; /* no order line unless --orders or a declared spin speed (issue 33, item 5) */
    o.hz_per_unit = 0; /* --speed-unit, else the declared spin speed's unit, else rad/s */
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_OUT | CLI_OPT_JSON, sweep_own, NULL,
                     sweep_option, sweep_usage, &o};
    int r = cli_parse(&spec, &c, argc, argv);
    if (r >= 0) return r;
    mbl_sweep_options so = o.so;
    if (!c.model) return cli_usage(cmd, "sweep needs a MODEL file%s", "");
    if (!so.naxes) return cli_usage(cmd, "sweep needs --param NAME=FROM:TO:COUNT%s", "");
    mbl_opoint_options po;
    cli_opoint_options(&c, &po);
    so.popt = &po;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    if (o.mem_budget > 0) lo.mem_budget = o.mem_budget, so.lopt = &lo;
    so.sets = c.sets;
    so.nsets = c.nsets;
    /* under mpirun: the points split across the ranks, rank 0 gathers, tracks and writes */
    const mbl_par *par = cli_par_loaded();
    mbl_sweep_dist dist = {0, 1, par_gather, (void *)par};
    if (par && par->size() > 1) dist.rank = par->rank(), dist.size = par->size(), so.dist = &dist;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_sweep *sw = NULL;
    mbl_model *md = NULL;
    mbl_load_options lopts; /* --mem-budget bounds building the model too (its beams' estimate) */
    cli_load_options(&c, &lopts);
    lopts.mem_budget = o.mem_budget > 0 ? o.mem_budget : 0;
    /* a failure: md NULL, the sweep reports it (to every rank) */
    mbl_model_load_file_opt(c.model, c.sets, c.nsets, &lopts, &md, &st);
    const int unit_given = o.hz_per_unit > 0;
    spin_orders(md, &so, &o);
    if (md && unit_given && !o.norders) {
        mbl_model_free(md);
        return cli_usage(cmd, "--speed-unit is the unit of the order lines: give --orders K1,K2,.. (or declare "
                              "the swept parameter under spin_speeds in the model)%s", "");
    }
    const double *orders = o.orders, hz_per_unit = o.hz_per_unit;
    const int norders = o.norders;
    int failed = mbl_sweep_run(md, &so, &sw, &st);
    mbl_model_free(md);
    if (failed) {
        return cli_fail(&st);
    }
    if (!sw) return 0; /* a rank other than 0: its points are with rank 0 */
    mbl_critical *crit = NULL;
    int ncrit = 0;
    if (sw->naxes == 1 && mbl_sweep_critical(sw, orders, norders, hz_per_unit, 0, &crit, &ncrit, &st)) {
        cli_fail(&st);
        mbl_sweep_free(sw);
        return 1;
    }
    int code = 0;
    for (int p = 0, shown = 0; p < sw->npoints; p++)
        if (!sw->ok[p] && shown++ < 5) fprintf(stderr, "mblin: warning: point %d failed: %s\n", p, sw->error[p]);
    if (sw->nfailed) fprintf(stderr, "mblin: warning: %d of %d points failed\n", sw->nfailed, sw->npoints);
    if (sw->predictor_note[0])
        fprintf(stderr, "mblin: note: modes tracked with the linear predictor (no sensitivities: %s)\n",
                sw->predictor_note);
    if (c.out) code = sweep_files(c.out, sw, &o, crit, ncrit);
    if (!code) {
        if (c.json) mbl_sweep_write_json(stdout, sw, crit, ncrit);
        else mbl_sweep_write_csv(stdout, sw);
        fflush(stdout);
        if (!c.json && ncrit) {
            fprintf(stderr, "critical speeds (%s, %s):\n", sw->axis_name[0],
                    hz_per_unit == 1.0 ? "Hz" : hz_per_unit == 1.0 / 60.0 ? "rpm" : "rad/s");
            for (int k = 0; k < ncrit; k++)
                fprintf(stderr, "  branch %d meets %gx at %.10g (%.6g Hz, frequency %s)\n", crit[k].branch + 1,
                        crit[k].order, crit[k].speed, crit[k].freq_hz,
                        crit[k].whirl > 0 ? "rising" : crit[k].whirl < 0 ? "falling" : "flat");
        }
    }
    if (fflush(stdout) != 0 && !code) {
        fprintf(stderr, "mblin: cannot write the output\n");
        code = 1;
    }
    if (sw->nfailed == sw->npoints && !code) code = 1;
    mbl_free(crit);
    mbl_sweep_free(sw);
    return code;
}

static const char freqresp_help[] =
    "\nG(i w) from input INPUT to output OUTPUT, or without --from and --to from every input to every\n"
    "output (the transfer matrix), with its singular values\n\n"
    "options:\n"
    "  --from INPUT         the model's input (with --to)\n"
    "  --to OUTPUT          the model's output (with --from)\n"
    "  --w FROM:TO:COUNT    angular frequencies in rad/s, logarithmically spaced (FROM > 0)\n"
    "  --linear             evenly spaced frequencies instead (FROM >= 0)\n"
    "  --max-points N       the work limit: more frequencies are refused before any work (default 100000)\n"
    "  --json               one JSON object on stdout instead of CSV (docs/schema/freqresp.json)\n"
    "  -o DIR               write freqresp.csv, freqresp.json, bode.svg, report.html; without --from\n"
    "                       and --to also singular_values.csv and sigma.svg\n"
    "  --set NAME=VALUE     override a parameter (repeatable)\n"
    "  --guess NAME=VALUE   initial value of a coordinate (repeatable)\n"
    "  --at KIND            operating point: equilibrium, given, steady or trim (default: the file's)\n";

/* freqresp's own options as the parser found them */
typedef struct freqresp_opts {
    const char *in, *outn, *wspec;
    int linear;
    double max_points;           /* --max-points (0: FREQRESP_MAX_POINTS) */
} freqresp_opts;

/* freqresp's work limit by default: frequencies (each a complex solve and a line of output) */
#define FREQRESP_MAX_POINTS 100000

static void freqresp_usage(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "freqresp", "MODEL [--from INPUT --to OUTPUT] --w FROM:TO:COUNT [OPTIONS]");
    fputs(freqresp_help, stdout);
    cli_user_code_help(stdout, 23);
    cli_option_line(stdout, "--help", "this text", 23);
}

/* freqresp's own options (cli_spec.option) */
static int freqresp_option(void *ud, const char *a, const char *v)
{
    freqresp_opts *o = ud;
    if (!strcmp(a, "--linear")) o->linear = 1;
    else if (!strcmp(a, "--from")) o->in = v;
    else if (!strcmp(a, "--to")) o->outn = v;
    else if (!strcmp(a, "--max-points")) {
        if (cli_decimal(v, &o->max_points) || o->max_points != floor(o->max_points) || o->max_points < 1 ||
            o->max_points > 1e15)
            return cli_usage("freqresp", "--max-points expects a positive integer, got '%s'", v);
    } else o->wspec = v;
    return -1;
}

static const cli_option freqresp_own[] = {{"--linear", 0}, {"--from", 1}, {"--to", 1}, {"--w", 1}, {"--max-points", 1},
                                          {NULL, 0}};

/* The model's input in and output outn: *iu, *iy, or the usage error's exit status 2 (printed). */
static int in_out(const mbl_model *md, const char *model, const freqresp_opts *o, int *iu, int *iy)
{
    const char *in = o->in, *outn = o->outn;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    *iu = -1, *iy = -1;
    for (int k = 0; k < info.ninput; k++)
        if (!strcmp(mbl_model_input_name(md, k), in)) *iu = k;
    for (int k = 0; k < info.noutput; k++)
        if (!strcmp(mbl_model_output_name(md, k), outn)) *iy = k;
    if (*iu < 0 || *iy < 0) {
        char list[600] = "";
        int isin = *iu < 0, cnt = isin ? info.ninput : info.noutput;
        for (int k = 0; k < cnt; k++) {
            size_t l = strlen(list);
            if (l + 8 >= sizeof list) break;
            snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "",
                     isin ? mbl_model_input_name(md, k) : mbl_model_output_name(md, k));
        }
        char cut[CLI_ECHO_MAX + 4];
        fprintf(stderr, "mblin: %s: the model has no %s '%s' (%ss: %s) (see mblin freqresp --help)\n", model,
                isin ? "input" : "output", cli_echo(isin ? in : outn, cut), isin ? "input" : "output", cnt ? list : "none");
        return 2;
    }
    return 0;
}

/* freqresp.csv, freqresp.json, bode.svg and report.html in -o DIR, and for every input to every output (mimo)
 * singular_values.csv and sigma.svg (0, or 1 after a message) */
static int freqresp_files(const char *outdir, const mbl_freqresp_mimo *fr, int mimo, const char *name)
{
    if (cli_mkdirs(outdir)) {
        fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", outdir, strerror(errno));
        return 1;
    }
    const char *files[] = {"freqresp.csv", "freqresp.json", "bode.svg", "report.html", "singular_values.csv",
                           "sigma.svg"};
    mbl_status st;
    mbl_status_clear(&st);
    for (int k = 0; k < (mimo ? 6 : 4); k++) {
        FILE *f = open_in(outdir, files[k]);
        if (!f) return 1;
        int w = k == 0   ? (mimo ? mbl_freqresp_mimo_write_csv(f, fr) : mbl_freqresp_write_csv(f, fr->pair[0]))
                : k == 1 ? mbl_freqresp_mimo_write_json(f, fr, name)
                : k == 2 ? (mimo ? mbl_freqresp_mimo_svg_bode(f, fr, name) : mbl_freqresp_svg_bode(f, fr->pair[0], name))
                : k == 3 ? mbl_freqresp_report_html(f, fr, name, &st)
                : k == 4 ? mbl_freqresp_mimo_write_sv_csv(f, fr)
                         : mbl_freqresp_mimo_svg_sigma(f, fr, name);
        if (fclose(f) != 0 || w) {
            fprintf(stderr, "mblin: %s/%s: cannot write\n", outdir, files[k]);
            return 1;
        }
    }
    return 0;
}

/* The frequency response of the loaded model at the nw frequencies w: input iu to output iy, or
 * (iu < 0) every input to every output (0, or 1 after a message). */
static int freqresp_run(const cli_args *c, const mbl_model *md, int iu, int iy, const double *w, int nw)
{
    mbl_status st;
    mbl_status_clear(&st);
    mbl_opoint_options po;
    cli_opoint_options(c, &po);
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL, *desc = NULL;
    mbl_freqresp_result *fr = NULL;
    mbl_freqresp_mimo *mm = NULL, one = {0};
    int code = 0, mimo = iu < 0;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    if (mbl_operating_point(md, &po, &pt, &st) || mbl_linearize(md, pt, &lo, &lin, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        code = 1;
        goto done;
    }
    /* the descriptor pencil of the same point, when the method answers (else state space only) */
    mbl_lin_options lod = lo;
    lod.method = "descriptor";
    lod.partial = MBL_PARTIAL_NEVER;
    mbl_status st2;
    if (mbl_linearize(md, pt, &lod, &desc, &st2)) desc = NULL;
    if (mimo ? mbl_freqresp_mimo_run(lin, desc, w, nw, &mm, &st) : mbl_freqresp(lin, desc, iu, iy, w, nw, &fr, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        code = 1;
        goto done;
    }
    if (!mimo) { /* one pair: a 1 x 1 transfer matrix, its singular value |G| */
        one = (mbl_freqresp_mimo){fr->nw, 1, 1, 1, &fr, fr->mag};
        mm = &one;
    }
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    if (c->out && (code = freqresp_files(c->out, mm, mimo, info.name))) goto done;
    if (c->json) mbl_freqresp_mimo_write_json(stdout, mm, info.name);
    else if (mimo) mbl_freqresp_mimo_write_csv(stdout, mm);
    else mbl_freqresp_write_csv(stdout, fr);
    const mbl_freqresp_result *p0 = mm->pair[0];
    int npole = 0;
    for (int k = 0; k < p0->nw; k++) npole += p0->form[k] == MBL_FR_POLE;
    for (int k = 0; k < p0->nw && npole; k++)
        if (p0->form[k] == MBL_FR_POLE) {
            fprintf(stderr, "mblin: freqresp: w = %.10g rad/s is a pole of G (an eigenvalue on the imaginary axis): |G| "
                    "is infinite there%s\n", p0->w[k], npole > 1 ? " (and at other frequencies: form 'pole')" : "");
            break;
        }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "mblin: cannot write the output\n");
        code = 1;
    }
done:
    if (mm != &one) mbl_freqresp_mimo_free(mm);
    mbl_freqresp_free(fr);
    mbl_linear_free(desc);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return code;
}

int cli_cmd_freqresp(int argc, char **argv)
{
    const char *cmd = "freqresp";
    static cli_args c;
    freqresp_opts o = {NULL, NULL, NULL, 0, 0};
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_OUT | CLI_OPT_JSON, freqresp_own, NULL,
                     freqresp_option, freqresp_usage, &o};
    int r = cli_parse(&spec, &c, argc, argv);
    if (r >= 0) return r;
    const char *wspec = o.wspec;
    const int linear = o.linear;
    if (!c.model) return cli_usage(cmd, "freqresp needs a MODEL file%s", "");
    if (!wspec) return cli_usage(cmd, "freqresp needs --w FROM:TO:COUNT%s", "");
    if (!o.in != !o.outn)
        return cli_usage(cmd, "freqresp needs --from INPUT and --to OUTPUT together, or neither (every input to every "
                              "output)%s", "");
    double w0, w1;
    int nw;
    char why[128];
    if (range3(wspec, &w0, &w1, &nw, why, sizeof why)) {
        char m[400];
        snprintf(m, sizeof m, "--w %.200s: %s", wspec, why);
        return cli_usage(cmd, "%s", m);
    }
    if (!linear && !(w0 > 0)) return cli_usage(cmd, "--w: FROM must be positive on a logarithmic axis (or --linear), got '%s'", wspec);
    if (linear && w0 < 0) return cli_usage(cmd, "--w: FROM must not be negative, got '%s'", wspec);
    double maxw = o.max_points > 0 ? o.max_points : FREQRESP_MAX_POINTS;
    if (nw > maxw) {
        fprintf(stderr, "mblin: %d frequencies are more than the limit of %.0f (--max-points): each is a complex solve "
                        "and a line of output; raise the limit to run it\n", nw, maxw);
        return 2;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_load_options lo;
    cli_load_options(&c, &lo);
    if (mbl_model_load_file_opt(c.model, c.sets, c.nsets, &lo, &md, &st)) {
        return cli_fail(&st);
    }
    int iu = -1, iy = -1;
    int code = o.in ? in_out(md, c.model, &o, &iu, &iy) : 0;
    if (!code) code = cli_check_guesses(&c, md);
    if (code) {
        mbl_model_free(md);
        return code;
    }
    double *w = malloc(sizeof *w * (size_t)nw);
    if (!w) {
        mbl_model_free(md);
        fprintf(stderr, "mblin: out of memory\n");
        return 1;
    }
    for (int k = 0; k < nw; k++)
        w[k] = k == nw - 1 ? w1
               : linear    ? w0 + (w1 - w0) * k / (nw - 1)
                           : exp(log(w0) + (log(w1) - log(w0)) * k / (nw - 1));
    code = freqresp_run(&c, md, iu, iy, w, nw);
    free(w);
    mbl_model_free(md);
    return code;
}
