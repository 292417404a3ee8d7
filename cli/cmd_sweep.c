/* `mblin sweep` and `mblin freqresp`: thin clients of include/mblin/sweep.h (docs/study.md).
 *
 *   mblin sweep MODEL --param NAME=FROM:TO:COUNT [--param NAME2=FROM:TO:COUNT] [--threads N]
 *               [--predictor sensitivity|linear] [--orders K1,K2,..] [--speed-unit rad/s|Hz|rpm] [--fmax HZ] [--json] [-o DIR]
 *               [--set p=value ...] [--guess q=value ...] [--at KIND]
 *   mblin freqresp MODEL --from INPUT --to OUTPUT --w FROM:TO:COUNT [--linear] [-o DIR]
 *               [--set p=value ...] [--guess q=value ...] [--at KIND]
 *
 * Results on stdout (CSV, or JSON with --json), files with -o DIR, progress on stderr when it is a
 * terminal, one line "mblin: <reason>" on failure (exit 1; a usage error, exit 2). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mblin/mblin.h"
#include "par/par.h"

#define MAX_SETS 256
#define TWO_PI 6.283185307179586476925286766559

int mblin_cmd_sweep(int argc, char **argv);
int mblin_cmd_freqresp(int argc, char **argv);

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
    if (mblin_cli_number(buf, from, w, sizeof w) || mblin_cli_number(c1 + 1, to, w, sizeof w) ||
        mblin_cli_decimal(c2 + 1, &n))
        return snprintf(why, whylen, "FROM and TO must be numbers or constant expressions (pi/2), COUNT an integer"), -1;
    if (n != floor(n) || n < 2 || n > 1e7) return snprintf(why, whylen, "COUNT must be an integer of at least 2"), -1;
    if (!(*from < *to)) return snprintf(why, whylen, "FROM must be below TO"), -1;
    *count = (int)n;
    return 0;
}

static int mkdirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) return errno = ENAMETOOLONG, -1;
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char c = path[i];
        path[i] = '\0';
        struct stat sb;
        if (stat(path, &sb) != 0) {
            if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        } else if (!S_ISDIR(sb.st_mode)) {
            return errno = ENOTDIR, -1;
        }
        path[i] = c;
    }
    return 0;
}

static FILE *open_in(const char *dir, const char *file)
{
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) {
        fprintf(stderr, "mblin: %s/%s: the path is too long\n", dir, file);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "mblin: %s: cannot write (%s)\n", path, strerror(errno));
    return f;
}

/* the options both commands share: --set, --guess, --at */
typedef struct common {
    mbl_setting sets[MAX_SETS], guesses[MAX_SETS];
    char set_names[MAX_SETS][256], guess_names[MAX_SETS][256];
    int nsets, nguess;
    const char *at, *model, *outdir;
    int json;
} common;

/* 1: consumed argv[*i] (and its value), 0: not a common option, < 0: -(exit code) */
static int common_opt(common *c, int argc, char **argv, int *i, const char *cmd)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--set") || !strcmp(a, "--guess") || !strcmp(a, "--at") || !strcmp(a, "-o")) {
        if (*i + 1 >= argc) return -mblin_cli_usage(cmd, "%s needs a value", a);
        const char *v = argv[++*i];
        if (!strcmp(a, "--at")) c->at = v;
        else if (!strcmp(a, "-o")) c->outdir = v;
        else if (!strcmp(a, "--set")) {
            int rc = mblin_cli_setting(cmd, a, v, strlen(v), c->sets, c->set_names, &c->nsets, MAX_SETS);
            if (rc >= 0) return -rc;
        } else {
            int rc = mblin_cli_setting(cmd, a, v, strlen(v), c->guesses, c->guess_names, &c->nguess, MAX_SETS);
            if (rc >= 0) return -rc;
        }
        return 1;
    }
    if (!strcmp(a, "--json")) return c->json = 1, 1;
    if (a[0] == '-' && a[1]) return 0;
    if (!c->model) return c->model = a, 1;
    return -mblin_cli_usage(cmd, "unexpected argument '%s'", a);
}

static int opoint_opts(common *c, mbl_opoint_options *po, const char *cmd)
{
    mbl_opoint_options_default(po);
    if (c->at) {
        if (!strcmp(c->at, "equilibrium")) po->at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(c->at, "given")) po->at = MBL_AT_GIVEN;
        else if (!strcmp(c->at, "steady")) po->at = MBL_AT_STEADY;
        else return mblin_cli_usage(cmd, "--at must be equilibrium, given or steady, not '%s'", c->at);
    }
    po->guess = c->guesses;
    po->nguess = c->nguess;
    return 0;
}

static void progress(void *ud, int done, int total)
{
    (void)ud;
    fprintf(stderr, "\rmblin sweep: %d / %d points", done, total);
    if (done == total) fputc('\n', stderr);
}

/* mbl_sweep_dist's gather through the MPI plugin (under mpirun; docs/parallel.md) */
static int par_gather(void *ud, const double *buf, size_t n, double **all, size_t *counts, mbl_status *st)
{
    const mbl_par *par = ud;
    return par->gather(buf, n, all, counts, st);
}

static const char sweep_help[] =
    "usage: mblin sweep MODEL --param NAME=FROM:TO:COUNT [OPTIONS]\n\n"
    "operating point, linear model and modes over a grid of parameter values, modes tracked\n\n"
    "options:\n"
    "  --param NAME=FROM:TO:COUNT  swept parameter (once or twice; NAME t: the time along drivers)\n"
    "  --threads N          worker threads (default 1; the results do not depend on N)\n"
    "  --orders K1,K2,..    Campbell diagram excitation orders (default 1)\n"
    "  --speed-unit U       unit of the swept parameter for the order lines: rad/s (default), Hz, rpm\n"
    "  --fmax HZ            upper end of the Campbell diagram's frequency axis (default: all modes)\n"
    "  --predictor P        how tracking predicts each mode at the next point: sensitivity (exact\n"
    "                       d lambda/dp and d shape/dp; the default where the model has them) or\n"
    "                       linear (extrapolation from the last two points)\n"
    "  --json               one JSON object on stdout instead of CSV\n"
    "  -o DIR               write sweep.csv, sweep.json, campbell.svg, locus.svg, damping.svg,\n"
    "                       report.html (interactive: Campbell diagram, root locus, damping)\n"
    "  --set NAME=VALUE     override a parameter (repeatable)\n"
    "  --guess NAME=VALUE   initial value of a coordinate (repeatable)\n"
    "  --at KIND            operating point: equilibrium, given or steady (default: the file's)\n"
    "  --help               this text\n\n"
    "under mpirun -n P the points are split across the P ranks, with the same output (docs/parallel.md)\n";

int mblin_cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    static common c;
    memset(&c, 0, sizeof c);
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    static char axis_names[2][256];
    double orders[32] = {1};
    int norders = 1;
    double hz_per_unit = 1.0 / TWO_PI, fmax = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(sweep_help, stdout);
            return 0;
        }
        int r = common_opt(&c, argc, argv, &i, cmd);
        if (r < 0) return -r;
        if (r) continue;
        if (!strcmp(a, "--param") || !strcmp(a, "--threads") || !strcmp(a, "--orders") || !strcmp(a, "--speed-unit") ||
            !strcmp(a, "--fmax") || !strcmp(a, "--predictor")) {
            if (i + 1 >= argc) return mblin_cli_usage(cmd, "%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--param")) {
                if (so.naxes >= 2) return mblin_cli_usage(cmd, "at most two --param options%s", "");
                const char *eq = strchr(v, '=');
                if (!eq || eq == v || (size_t)(eq - v) >= sizeof axis_names[0])
                    return mblin_cli_usage(cmd, "--param expects NAME=FROM:TO:COUNT, got '%s'", v);
                char why[128];
                mbl_sweep_axis *ax = &so.axis[so.naxes];
                if (range3(eq + 1, &ax->from, &ax->to, &ax->count, why, sizeof why)) {
                    char m[400];
                    snprintf(m, sizeof m, "--param %.200s: %s", v, why);
                    return mblin_cli_usage(cmd, "%s", m);
                }
                memcpy(axis_names[so.naxes], v, (size_t)(eq - v));
                axis_names[so.naxes][eq - v] = '\0';
                ax->name = axis_names[so.naxes];
                so.naxes++;
            } else if (!strcmp(a, "--threads")) {
                double t;
                if (mblin_cli_decimal(v, &t) || t != floor(t) || t < 1 || t > 256)
                    return mblin_cli_usage(cmd, "--threads expects an integer 1..256, got '%s'", v);
                so.threads = (int)t;
                if (so.threads > 1) mblin_cli_thread_arenas(); /* before any thread (cli/startup.c) */
            } else if (!strcmp(a, "--predictor")) {
                if (!strcmp(v, "sensitivity")) so.predictor = MBL_PREDICT_SENSITIVITY;
                else if (!strcmp(v, "linear")) so.predictor = MBL_PREDICT_LINEAR;
                else return mblin_cli_usage(cmd, "--predictor must be sensitivity or linear, not '%s'", v);
            } else if (!strcmp(a, "--fmax")) {
                if (mblin_cli_decimal(v, &fmax) || !(fmax > 0)) return mblin_cli_usage(cmd, "--fmax expects a positive number (Hz), got '%s'", v);
            } else if (!strcmp(a, "--orders")) {
                char buf[512];
                if (strlen(v) >= sizeof buf) return mblin_cli_usage(cmd, "--orders: too long%s", "");
                strcpy(buf, v);
                norders = 0;
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                    if (norders >= 32) return mblin_cli_usage(cmd, "--orders: at most 32%s", "");
                    if (mblin_cli_decimal(tok, &orders[norders]) || !(orders[norders] > 0))
                        return mblin_cli_usage(cmd, "--orders expects positive numbers separated by commas, got '%s'", v);
                    norders++;
                }
                if (!norders) return mblin_cli_usage(cmd, "--orders expects positive numbers, got '%s'", v);
            } else {
                if (!strcmp(v, "rad/s")) hz_per_unit = 1.0 / TWO_PI;
                else if (!strcmp(v, "Hz")) hz_per_unit = 1.0;
                else if (!strcmp(v, "rpm")) hz_per_unit = 1.0 / 60.0;
                else return mblin_cli_usage(cmd, "--speed-unit must be rad/s, Hz or rpm, not '%s'", v);
            }
            continue;
        }
        return mblin_cli_usage(cmd, "unknown option '%s'", a);
    }
    if (!c.model) return mblin_cli_usage(cmd, "sweep needs a MODEL file%s", "");
    if (!so.naxes) return mblin_cli_usage(cmd, "sweep needs --param NAME=FROM:TO:COUNT%s", "");
    mbl_opoint_options po;
    int rc = opoint_opts(&c, &po, cmd);
    if (rc) return rc;
    so.popt = &po;
    so.sets = c.sets;
    so.nsets = c.nsets;
    if (isatty(2)) so.progress = progress;
    /* under mpirun: the points split across the ranks, rank 0 gathers, tracks and writes */
    const mbl_par *par = mblin_par();
    mbl_sweep_dist dist = {0, 1, par_gather, (void *)par};
    if (par && par->size() > 1) dist.rank = par->rank(), dist.size = par->size(), so.dist = &dist;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_sweep *sw = NULL;
    mbl_model *md = NULL;
    mbl_model_load_file(c.model, c.sets, c.nsets, &md, &st); /* a failure: md NULL, the sweep reports it (to every rank) */
    int failed = mbl_sweep_run(md, &so, &sw, &st);
    mbl_model_free(md);
    if (failed) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        return st.code == MBL_EARG ? 2 : 1;
    }
    if (!sw) return 0; /* a rank other than 0: its points are with rank 0 */
    mbl_critical *crit = NULL;
    int ncrit = 0;
    if (sw->naxes == 1 && mbl_sweep_critical(sw, orders, norders, hz_per_unit, 0, &crit, &ncrit, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
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
    if (c.outdir) {
        if (mkdirs(c.outdir)) {
            fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", c.outdir, strerror(errno));
            code = 1;
        } else {
            const char *files[] = {"sweep.csv", "sweep.json", "campbell.svg", "locus.svg", "damping.svg", "report.html"};
            for (int k = 0; k < 6 && !code; k++) {
                FILE *f = open_in(c.outdir, files[k]);
                if (!f) {
                    code = 1;
                    break;
                }
                int w = k == 0   ? mbl_sweep_write_csv(f, sw)
                        : k == 1 ? mbl_sweep_write_json(f, sw, crit, ncrit)
                        : k == 2 ? mbl_sweep_svg_campbell(f, sw, orders, norders, hz_per_unit, fmax, crit, ncrit)
                        : k == 3 ? mbl_sweep_svg_locus(f, sw)
                        : k == 4 ? mbl_sweep_svg_damping(f, sw)
                                 : mbl_sweep_report_html(f, sw, orders, norders, hz_per_unit, crit, ncrit, &st);
                if (fclose(f) != 0 || w) {
                    fprintf(stderr, "mblin: %s/%s: cannot write\n", c.outdir, files[k]);
                    code = 1;
                }
            }
        }
    }
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
    "usage: mblin freqresp MODEL --from INPUT --to OUTPUT --w FROM:TO:COUNT [OPTIONS]\n\n"
    "frequency response G(i w) of the exact linear model, input INPUT to output OUTPUT\n\n"
    "options:\n"
    "  --from INPUT         the model's input\n"
    "  --to OUTPUT          the model's output\n"
    "  --w FROM:TO:COUNT    angular frequencies in rad/s, logarithmically spaced (FROM > 0)\n"
    "  --linear             evenly spaced frequencies instead (FROM >= 0)\n"
    "  -o DIR               write freqresp.csv and bode.svg\n"
    "  --set NAME=VALUE     override a parameter (repeatable)\n"
    "  --guess NAME=VALUE   initial value of a coordinate (repeatable)\n"
    "  --at KIND            operating point: equilibrium, given or steady (default: the file's)\n"
    "  --help               this text\n";

int mblin_cmd_freqresp(int argc, char **argv)
{
    const char *cmd = "freqresp";
    static common c;
    memset(&c, 0, sizeof c);
    const char *in = NULL, *outn = NULL, *wspec = NULL;
    int linear = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(freqresp_help, stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) return mblin_cli_usage(cmd, "option '%s' does not apply to 'freqresp'", a);
        int r = common_opt(&c, argc, argv, &i, cmd);
        if (r < 0) return -r;
        if (r) continue;
        if (!strcmp(a, "--linear")) {
            linear = 1;
            continue;
        }
        if (!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--w")) {
            if (i + 1 >= argc) return mblin_cli_usage(cmd, "%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--from")) in = v;
            else if (!strcmp(a, "--to")) outn = v;
            else wspec = v;
            continue;
        }
        return mblin_cli_usage(cmd, "unknown option '%s'", a);
    }
    if (!c.model) return mblin_cli_usage(cmd, "freqresp needs a MODEL file%s", "");
    if (!in || !outn || !wspec) return mblin_cli_usage(cmd, "freqresp needs --from INPUT, --to OUTPUT and --w FROM:TO:COUNT%s", "");
    double w0, w1;
    int nw;
    char why[128];
    if (range3(wspec, &w0, &w1, &nw, why, sizeof why)) {
        char m[400];
        snprintf(m, sizeof m, "--w %.200s: %s", wspec, why);
        return mblin_cli_usage(cmd, "%s", m);
    }
    if (!linear && !(w0 > 0)) return mblin_cli_usage(cmd, "--w: FROM must be positive on a logarithmic axis (or --linear), got '%s'", wspec);
    if (linear && w0 < 0) return mblin_cli_usage(cmd, "--w: FROM must not be negative, got '%s'", wspec);
    mbl_opoint_options po;
    int rc = opoint_opts(&c, &po, cmd);
    if (rc) return rc;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL, *desc = NULL;
    mbl_freqresp_result *fr = NULL;
    double *w = NULL;
    int code = 0;
    if (mbl_model_load_file(c.model, c.sets, c.nsets, &md, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        return st.code == MBL_EARG ? 2 : 1;
    }
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int iu = -1, iy = -1;
    for (int k = 0; k < info.ninput; k++)
        if (!strcmp(mbl_model_input_name(md, k), in)) iu = k;
    for (int k = 0; k < info.noutput; k++)
        if (!strcmp(mbl_model_output_name(md, k), outn)) iy = k;
    if (iu < 0 || iy < 0) {
        char list[600] = "";
        int isin = iu < 0, cnt = isin ? info.ninput : info.noutput;
        for (int k = 0; k < cnt; k++) {
            size_t l = strlen(list);
            if (l + 8 >= sizeof list) break;
            snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "",
                     isin ? mbl_model_input_name(md, k) : mbl_model_output_name(md, k));
        }
        fprintf(stderr, "mblin: %s: the model has no %s '%s' (%ss: %s) (see mblin freqresp --help)\n", c.model,
                isin ? "input" : "output", isin ? in : outn, isin ? "input" : "output", cnt ? list : "none");
        mbl_model_free(md);
        return 2;
    }
    for (int g = 0; g < c.nguess; g++) {
        int k = 0;
        while (k < info.ncoord && strcmp(mbl_model_coord_name(md, k), c.guesses[g].name)) k++;
        if (k == info.ncoord) {
            fprintf(stderr, "mblin: --guess: the model has no coordinate named '%s' (see mblin freqresp --help)\n",
                    c.guesses[g].name);
            mbl_model_free(md);
            return 2;
        }
    }
    w = malloc(sizeof *w * (size_t)nw);
    if (!w) {
        mbl_model_free(md);
        fprintf(stderr, "mblin: out of memory\n");
        return 1;
    }
    for (int k = 0; k < nw; k++)
        w[k] = k == nw - 1 ? w1
               : linear    ? w0 + (w1 - w0) * k / (nw - 1)
                           : exp(log(w0) + (log(w1) - log(w0)) * k / (nw - 1));
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
    if (mbl_freqresp(lin, desc, iu, iy, w, nw, &fr, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        code = 1;
        goto done;
    }
    if (c.outdir) {
        if (mkdirs(c.outdir)) {
            fprintf(stderr, "mblin: %s: cannot create the output directory (%s)\n", c.outdir, strerror(errno));
            code = 1;
            goto done;
        }
        FILE *f = open_in(c.outdir, "freqresp.csv");
        if (!f || mbl_freqresp_write_csv(f, fr) || fclose(f)) code = 1;
        f = code ? NULL : open_in(c.outdir, "bode.svg");
        if (!code && (!f || mbl_freqresp_svg_bode(f, fr, info.name) || fclose(f))) code = 1;
        if (code) {
            fprintf(stderr, "mblin: %s: cannot write the files\n", c.outdir);
            goto done;
        }
    }
    mbl_freqresp_write_csv(stdout, fr);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "mblin: cannot write the output\n");
        code = 1;
    }
done:
    free(w);
    mbl_freqresp_free(fr);
    mbl_linear_free(desc);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return code;
}
