/* mblin sensitivity and mblin boundary: thin clients of include/mblin/sensitivity.h.
 *
 *   mblin sensitivity MODEL [--wrt p1,p2,...] [--set p=value ...] [--guess q=value ...] [--at KIND]
 *                           [--json] [--no-shapes] [--shape SPEC]
 *   mblin boundary MODEL --param NAME --near VALUE [--order K] [--mode I | --shape SPEC | --branch B
 *                        --sweep FILE] [--range FROM:TO] [--tol T] [--set p=value ...] [--guess q=value ...]
 *                        [--floquet T|OMEGA] [--at KIND] [--json] [--verbose]
 *
 * Exit status 0 on success, 1 when the model or the computation fails, 2 for a usage error. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/json.h"
#include "cli.h"
#include "mblin/mblin.h"
#include "mblin/floquet.h"
#include "mblin/sensitivity.h"

/* the commands' own options as the parser found them */
typedef struct cli {
    const char *cmd, *wrt, *param;
    const char *shape, *sweep; /* the mode named by its shape, or by a branch of this sweep */
    int no_shapes, mode, has_near, branch, has_range, verbose;
    double near, order, tol, from, to;
    const char *floquet;       /* --floquet T|OMEGA: a Floquet boundary (docs/floquet.md) */
    mbl_floquet_options fo;
} cli;

static void help(void *ud)
{
    const cli *c = ud;
    if (!strcmp(c->cmd, "sensitivity")) cli_help_head(stdout, "sensitivity", "MODEL [OPTIONS]");
    else cli_help_head(stdout, "boundary", "MODEL --param NAME --near VALUE [OPTIONS]");
    if (!strcmp(c->cmd, "sensitivity"))
        printf("\nof every eigenvalue, frequency, damping ratio and mode shape with respect to parameters, the\n"
               "shift of the operating point included (docs/study.md)\n\n"
               "options:\n"
               "  --wrt P1,P2,...     the parameters (default: every parameter of the model)\n"
               "  --no-shapes         without the mode shapes' derivatives\n"
               "  --shape SPEC        also say which mode has the shape SPEC (NAME[=W],NAME[=W],..., as for\n"
               "                      `mblin boundary --shape`)\n"
               "  --set NAME=VALUE    override a parameter: a number or a constant expression such as pi/2\n"
               "                      (repeatable)\n"
               "  --guess NAME=VALUE  initial value of a coordinate (repeatable)\n"
               "  --at KIND           operating point: equilibrium, given, steady or trim (default: the file's)\n"
               "  --json              print one JSON object instead of the tables\n");
    else
        printf("\nthe value of parameter NAME nearest VALUE where a mode's real part crosses zero or two eigenvalues\n"
               "leave the imaginary axis together (or, with --order, where a damped frequency meets the line\n"
               "omega = K * NAME): bracketed on a grid walked outward from VALUE, then refined with the exact\n"
               "sensitivities\n\n"
               "options:\n"
               "  --param NAME        the parameter (required)\n"
               "  --near VALUE        where to start (required)\n"
               "  --order K           a critical speed instead: |Im lambda| (rad/s) = K * NAME\n"
               "  --mode I            only mode I as listed by `mblin linearize` at VALUE (default: any mode)\n"
               "  --shape SPEC        only the mode whose shape at VALUE matches SPEC best (MAC):\n"
               "                      NAME[=W],NAME[=W],... weights W (default 1; complex as a+bi, bi, -i) on\n"
               "                      the model's coordinates, e.g. x=1,y=-i for a whirl from x towards y\n"
               "  --branch B          only branch B of the sweep --sweep FILE (the JSON of `mblin sweep --json`\n"
               "  --sweep FILE        over NAME): the mode nearest its eigenvalue, interpolated at VALUE\n"
               "                      (--mode, --shape and --branch name the mode three ways: one of them)\n"
               "  --range FROM:TO     where to search (default VALUE/3:3*VALUE, -1:1 about 0)\n"
               "  --tol T             relative accuracy of the boundary (default 1e-10)\n"
               "  --floquet T|OMEGA   a time-periodic model: where a Floquet multiplier leaves the unit circle,\n"
               "                      period T or 2 pi / OMEGA (a spin speed); bisection (docs/floquet.md)\n"
               "  --set NAME=VALUE    override a parameter: a number or a constant expression such as pi/2\n"
               "                      (repeatable)\n"
               "  --guess NAME=VALUE  initial value of a coordinate (repeatable)\n"
               "  --at KIND           operating point: equilibrium, given, steady or trim (default: the file's)\n"
               "  --json              print one JSON object\n"
               "  --verbose           also the search's bracket, the work and the last step\n");
    cli_user_code_help(stdout, 22);
    cli_option_line(stdout, "--help", "this text", 22);
}

/* the commands' own options (cli_spec.option): -1 to go on, else the exit status */
static int option(void *ud, const char *a, const char *v)
{
    cli *c = ud;
    if (!strcmp(a, "--no-shapes")) {
        c->no_shapes = 1;
    } else if (!strcmp(a, "--verbose")) {
        c->verbose = 1;
    } else if (!strcmp(a, "--wrt")) {
        c->wrt = v;
    } else if (!strcmp(a, "--param")) {
        c->param = v;
    } else if (!strcmp(a, "--range")) {
        const char *colon = strchr(v, ':');
        char lo[64];
        if (!colon || (size_t)(colon - v) >= sizeof lo)
            return cli_usage(c->cmd, "--range expects FROM:TO, got '%s'", v);
        memcpy(lo, v, (size_t)(colon - v));
        lo[colon - v] = 0;
        if (cli_decimal(lo, &c->from) || cli_decimal(colon + 1, &c->to) || !(c->from < c->to))
            return cli_usage(c->cmd, "--range expects FROM:TO with FROM < TO, got '%s'", v);
        c->has_range = 1;
    } else if (!strcmp(a, "--shape")) {
        if (!v[0]) return cli_usage(c->cmd, "--shape expects NAME[=W],NAME[=W],...%s", "");
        c->shape = v;
    } else if (!strcmp(a, "--floquet")) {
        char why[200];
        mbl_floquet_options_default(&c->fo);
        c->floquet = v;
        if (cli_number(v, &c->fo.period, why, sizeof why)) c->fo.period = 0; /* a spin speed's name */
        else if (!(c->fo.period > 0))
            return cli_usage(c->cmd, "--floquet expects a positive period or a spin speed's name, got '%s'", v);
    } else if (!strcmp(a, "--sweep")) {
        if (!v[0]) return cli_usage(c->cmd, "--sweep expects the file of a sweep's JSON%s", "");
        c->sweep = v;
    } else {
        double x;
        if (cli_decimal(v, &x)) return cli_bad_value(c->cmd, a, "a number", v);
        if (!strcmp(a, "--near")) c->near = x, c->has_near = 1;
        else if (!strcmp(a, "--order")) {
            if (!(x >= 0)) return cli_usage(c->cmd, "--order expects a number >= 0 (0: the real part), got '%s'", v);
            c->order = x;
        }
        else if (!strcmp(a, "--tol")) {
            if (!(x > 0 && x < 1)) return cli_usage(c->cmd, "--tol expects a number in (0, 1), got '%s'", v);
            c->tol = x;
        } else {
            int br = !strcmp(a, "--branch");
            if (x < 1 || x != (int)x || x > 1e9)
                return cli_usage(c->cmd, br ? "--branch expects a positive integer, got '%s'"
                                            : "--mode expects a positive integer, got '%s'", v);
            if (br) c->branch = (int)x;
            else c->mode = (int)x;
        }
    }
    return -1;
}

static const cli_option sensitivity_own[] = {{"--no-shapes", 0}, {"--wrt", 1}, {"--shape", 1}, {NULL, 0}};
static const cli_option boundary_own[] = {{"--param", 1}, {"--near", 1},   {"--order", 1},  {"--tol", 1},
                                          {"--mode", 1},  {"--shape", 1},  {"--branch", 1}, {"--sweep", 1},
                                          {"--range", 1}, {"--floquet", 1}, {"--verbose", 0}, {NULL, 0}};

/* -1 to go on, else the exit status */
static int parse(cli *c, cli_args *a, int argc, char **argv)
{
    int sens = !strcmp(c->cmd, "sensitivity");
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_JSON, sens ? sensitivity_own : boundary_own,
                     NULL, option, help, c};
    int rc = cli_parse(&spec, a, argc, argv);
    if (rc >= 0) return rc;
    if (!a->model) return cli_usage(c->cmd, "%s needs a MODEL file", c->cmd);
    if (!sens && !c->param) return cli_usage(c->cmd, "%s needs --param NAME", c->cmd);
    if (!sens && !c->has_near) return cli_usage(c->cmd, "%s needs --near VALUE", c->cmd);
    if ((c->mode > 0) + (c->shape != NULL) + (c->branch > 0 || c->sweep != NULL) > 1)
        return cli_usage(c->cmd, "--mode, --shape and --branch/--sweep name the mode three ways: give one%s", "");
    if (c->floquet && (c->order != 0 || c->mode > 0 || c->shape || c->sweep))
        return cli_usage(c->cmd, "--floquet finds where the spectral radius leaves the unit circle: it takes no --order, "
                                 "--mode, --shape or --branch%s", "");
    if ((c->branch > 0) != (c->sweep != NULL))
        return cli_usage(c->cmd, "%s", c->sweep ? "--sweep FILE needs --branch B" : "--branch B needs --sweep FILE");
    return -1;
}

static const char *kind_name(int k)
{
    return k == MBL_MODE_ZERO ? "zero" : k == MBL_MODE_REAL ? "real" : "oscillatory";
}

/* named: the mode --shape names (1-based), 0 for none */
static void print_json(const mbl_model *md, const mbl_sensitivity *S, int named)
{
    int n = S->n, nw = S->nwrt, nm = S->nmode;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    printf("{\n \"schema_version\": %d,\n \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(stdout, info.name);
    printf(",\n \"parameters\": [");
    for (int w = 0; w < nw; w++) {
        printf("%s", w ? ", " : "");
        mbl_json_string(stdout, mbl_model_param_name(md, S->wrt[w]));
    }
    printf("],\n \"parameter_values\": [");
    for (int w = 0; w < nw; w++) {
        printf("%s", w ? ", " : "");
        mbl_json_number(stdout, mbl_model_param_value(md, S->wrt[w]), 17, 0);
    }
    printf("],\n \"coordinates\": [");
    for (int i = 0; i < n; i++) {
        printf("%s", i ? ", " : "");
        mbl_json_string(stdout, mbl_model_coord_name(md, i));
    }
    printf("],\n \"operating_point\": {\"dq\": [");
    for (int w = 0; w < nw; w++) {
        printf("%s[", w ? ", " : "");
        for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->dq[i + (size_t)w * n], 17, 0);
        printf("]");
    }
    printf("], \"dv\": [");
    for (int w = 0; w < nw; w++) {
        printf("%s[", w ? ", " : "");
        for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->dv[i + (size_t)w * n], 17, 0);
        printf("]");
    }
    printf("], \"dlambda\": [");
    for (int w = 0; w < nw; w++) {
        printf("%s[", w ? ", " : "");
        for (int i = 0; i < S->m; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->dlambda[i + (size_t)w * S->m], 17, 0);
        printf("]");
    }
    printf("], \"defined\": [");
    for (int w = 0; w < nw; w++) printf("%s%s", w ? ", " : "", S->point_defined[w] ? "true" : "false");
    printf("]},\n \"notes\": ");
    mbl_json_string(stdout, S->notes);
    if (named > 0) printf(",\n \"named_mode\": %d", named);
    printf(",\n \"modes\": [");
    for (int t = 0; t < nm; t++) {
        const mbl_sens_mode *m = &S->modes[t];
        printf("%s\n  {\"re\": ", t ? "," : "");
        mbl_json_number(stdout, m->re, 17, 0);
        printf(", \"im\": ");
        mbl_json_number(stdout, m->im, 17, 0);
        printf(", \"freq_hz\": ");
        mbl_json_number(stdout, m->freq_hz, 17, 0);
        printf(", \"damping_ratio\": ");
        mbl_json_number(stdout, m->damping_ratio, 17, 0);
        printf(", \"backward_error\": ");
        mbl_json_number(stdout, m->backward_error, 17, 0);
        printf(", \"kind\": \"%s\", \"defined\": %s,\n   \"shape_re\": [", kind_name(m->kind), m->defined ? "true" : "false");
        for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->shape_re[i + (size_t)t * n], 17, 0);
        printf("], \"shape_im\": [");
        for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->shape_im[i + (size_t)t * n], 17, 0);
        printf("],\n   \"d\": [");
        for (int w = 0; w < nw; w++) {
            printf("%s\n    {\"re\": ", w ? "," : "");
            mbl_json_number(stdout, m->dre[w], 17, 0);
            printf(", \"im\": ");
            mbl_json_number(stdout, m->dim[w], 17, 0);
            printf(", \"freq_hz\": ");
            mbl_json_number(stdout, m->dfreq_hz[w], 17, 0);
            printf(", \"damping_ratio\": ");
            mbl_json_number(stdout, m->ddamping[w], 17, 0);
            if (S->dshape_re) {
                size_t o = (size_t)n * (t + (size_t)nm * w);
                printf(", \"shape_re\": [");
                for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->dshape_re[o + i], 17, 0);
                printf("], \"shape_im\": [");
                for (int i = 0; i < n; i++) printf("%s", i ? ", " : ""), mbl_json_number(stdout, S->dshape_im[o + i], 17, 0);
                printf("]");
            }
            printf("}");
        }
        printf("]}");
    }
    printf("\n ]\n}\n");
}

static void print_table(const mbl_model *md, const mbl_sensitivity *S, const char *shape, int named)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int n = S->n;
    printf("Model: %s (%s)\n", info.name && info.name[0] ? info.name : "(unnamed)", info.file);
    printf("Sensitivities: %s, the shift of the operating point included; %d modes\n",
           S->exact ? "exact (expression engine)" : "by the expression engine, not exact (user routines: see the notes)",
           S->nmode);
    if (S->notes[0]) printf("  note: %s\n", S->notes);
    if (named > 0) printf("  the mode of shape %s: mode %d\n", shape, named);
    for (int w = 0; w < S->nwrt; w++) {
        int p = S->wrt[w];
        printf("\nd/d %s   (%s = %.10g)\n", mbl_model_param_name(md, p), mbl_model_param_name(md, p), mbl_model_param_value(md, p));
        if (!S->point_defined[w]) {
            printf("  not defined: the operating point does not persist when %s changes (a singular configuration\n"
                   "  whose geometry %s moves: the equations of the point have no solution nearby)\n",
                   mbl_model_param_name(md, p), mbl_model_param_name(md, p));
            continue;
        }
        printf("  mode        real    imaginary      d real/dp      d imag/dp   d freq[Hz]/dp  d damping/dp\n");
        for (int t = 0; t < S->nmode; t++) {
            const mbl_sens_mode *m = &S->modes[t];
            printf("  %4d %11.6g %12.6g", t + 1, m->re, m->im);
            if (m->defined && !(isfinite(m->dfreq_hz[w]) && isfinite(m->ddamping[w]))) /* a simple zero: |s| and
                -Re s / |s| have no derivative at s = 0, s itself has one (docs/study.md) */
                printf(" %14.6g %14.6g   (zero mode: d freq, d damping not defined)\n", m->dre[w], m->dim[w]);
            else if (m->defined)
                printf(" %14.6g %14.6g %14.6g %13.6g\n", m->dre[w], m->dim[w], m->dfreq_hz[w], m->ddamping[w]);
            else
                printf("   %s\n", m->kind == MBL_MODE_ZERO ? "(zero mode: not defined)" : "(repeated: not defined)");
        }
        int moved = 0;
        for (int i = 0; i < n; i++) moved |= S->dq[i + (size_t)w * n] != 0;
        if (moved) {
            printf("  operating point: dq/d%s =", mbl_model_param_name(md, p));
            for (int i = 0; i < n && i < 12; i++) printf(" %s %.6g", mbl_model_coord_name(md, i), S->dq[i + (size_t)w * n]);
            printf("%s\n", n > 12 ? " ... (--json for all)" : "");
        }
    }
}

int cli_cmd_sensitivity(int argc, char **argv)
{
    static cli c;
    static cli_args a;
    memset(&c, 0, sizeof c);
    c.cmd = "sensitivity";
    int rc = parse(&c, &a, argc, argv);
    if (rc >= 0) return rc;
    mbl_opoint_options po;
    cli_opoint_options(&a, &po);
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    mbl_sensitivity *S = NULL;
    int *wrt = NULL, nwrt = 0, code = 0;
    mbl_load_options lo;
    cli_load_options(&a, &lo);
    if (mbl_model_load_file_opt(a.model, a.sets, a.nsets, &lo, &md, &st)) return cli_fail(&st);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    if (c.wrt) {
        wrt = calloc((size_t)info.nparam + 1, sizeof *wrt);
        if (!wrt) {
            mbl_model_free(md);
            fprintf(stderr, "mblin: out of memory\n");
            return 1;
        }
        const char *s = c.wrt;
        while (*s) {
            const char *e = strchr(s, ',');
            size_t l = e ? (size_t)(e - s) : strlen(s);
            int found = -1;
            for (int i = 0; i < info.nparam; i++)
                if (strlen(mbl_model_param_name(md, i)) == l && !strncmp(mbl_model_param_name(md, i), s, l)) found = i;
            if (found < 0) {
                fprintf(stderr, "mblin: --wrt: the model %s has no parameter '%.*s' (see mblin sensitivity --help)\n",
                        a.model, (int)l, s);
                free(wrt);
                mbl_model_free(md);
                return 2;
            }
            int dup = 0;
            for (int w = 0; w < nwrt; w++) dup |= wrt[w] == found;
            if (!dup && nwrt < info.nparam) wrt[nwrt++] = found;
            if (!e) break;
            s = e + 1;
        }
        if (!nwrt) {
            free(wrt);
            mbl_model_free(md);
            return cli_usage(c.cmd, "--wrt needs parameter names%s", "");
        }
    }
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    so.shapes = !c.no_shapes;
    if (mbl_operating_point(md, &po, &pt, &st) || mbl_dae_deriv_new(md, &dd, &st) ||
        mbl_sensitivity_compute(dd, pt, wrt, wrt ? nwrt : info.nparam, &so, &S, &st)) {
        code = cli_fail(&st);
    } else {
        int named = 0;
        if (c.shape) { /* the mode the shape names */
            mbl_mode_spec ms = {0, c.shape, 0, NULL};
            if (mbl_mode_pick(md, S, &ms, NULL, 0.0, &named, &st)) code = cli_fail(&st);
            named++;
        }
        if (!code && a.json) print_json(md, S, named);
        else if (!code) print_table(md, S, c.shape, named);
    }
    mbl_sensitivity_free(S);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    free(wrt);
    return code;
}

/* the significant digits of v that its error acc leaves correct: the last one printed is the place
 * of 10^ceil(log10 acc), so that the error is below one unit in it (1 .. 17) */
static int value_digits(double v, double acc)
{
    if (!(acc > 0) || !isfinite(acc) || !(v != 0) || !isfinite(v)) return 17;
    int d = (int)floor(log10(fabs(v))) - (int)ceil(log10(acc)) + 1;
    return d < 1 ? 1 : d > 17 ? 17 : d;
}

/* the JSON name of a Floquet boundary's crossing */
static const char *floquet_crossing(int kind)
{
    return kind == MBL_FLOQUET_CROSS_MINUS1 ? "minus_one" : kind == MBL_FLOQUET_CROSS_PLUS1 ? "plus_one" : "complex_pair";
}

int cli_cmd_boundary(int argc, char **argv)
{
    static cli c;
    static cli_args a;
    memset(&c, 0, sizeof c);
    c.cmd = "boundary";
    int rc = parse(&c, &a, argc, argv);
    if (rc >= 0) return rc;
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    cli_opoint_options(&a, &bo.opoint);
    bo.order = c.order;
    bo.mode.index = c.mode;
    bo.mode.shape = c.shape;
    bo.mode.branch = c.branch;
    bo.mode.sweep = c.sweep;
    if (c.tol > 0) bo.tol = c.tol;
    if (c.has_range) bo.from = c.from, bo.to = c.to;
    if (c.floquet) {
        bo.floquet = &c.fo;
        if (!(c.fo.period > 0)) bo.floquet_spin = c.floquet;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_boundary_result r;
    mbl_model *md = NULL;
    mbl_load_options lo;
    cli_load_options(&a, &lo);
    int failed = mbl_model_load_file_opt(a.model, a.sets, a.nsets, &lo, &md, &st) ||
                 mbl_boundary(md, a.sets, a.nsets, c.param, c.near, &bo, &r, &st);
    mbl_model_free(md);
    if (failed) return cli_fail(&st);
    if (a.json) {
        printf("{\"schema_version\": %d, \"parameter\": ", MBL_JSON_SCHEMA_VERSION);
        mbl_json_string(stdout, c.param);
        printf(", \"near\": ");
        mbl_json_number(stdout, c.near, 17, 0);
        printf(", \"order\": ");
        mbl_json_number(stdout, c.order, 17, 0);
        printf(", \"value\": ");
        mbl_json_number(stdout, r.value, 17, 0);
        printf(", \"eigenvalue\": {\"re\": ");
        mbl_json_number(stdout, r.re, 17, 0);
        printf(", \"im\": ");
        mbl_json_number(stdout, r.im, 17, 0);
        printf("}, \"mode_near\": %d, \"iterations\": %d, \"last_step\": ", r.mode_near, r.iterations);
        mbl_json_number(stdout, r.last_step, 17, 0);
        printf(", \"slope\": ");
        mbl_json_number(stdout, r.slope, 17, 0);
        printf(", \"collision\": %s, \"divergence\": %s, \"bracket\": [", r.collision ? "true" : "false",
               r.divergence ? "true" : "false");
        mbl_json_number(stdout, r.lo, 17, 0);
        printf(", ");
        mbl_json_number(stdout, r.hi, 17, 0);
        printf("], \"points\": %d, \"accuracy\": ", r.points);
        mbl_json_number(stdout, r.accuracy, 17, 0);
        printf(", \"verified\": ");
        mbl_json_number(stdout, r.verified, 17, 0);
        if (r.floquet) {
            printf(", \"floquet\": {\"multiplier\": {\"re\": ");
            mbl_json_number(stdout, r.mult_re, 17, 0);
            printf(", \"im\": ");
            mbl_json_number(stdout, r.mult_im, 17, 0);
            printf("}, \"crossing\": \"%s\"}", floquet_crossing(r.floquet_kind));
        }
        printf("}\n");
    } else {
        printf("%s = %.*g (+-%.2g)\n", c.param, value_digits(r.value, r.accuracy), r.value, r.accuracy);
        if (r.floquet)
            printf("  a Floquet multiplier leaves the unit circle (just beyond: %.10g %+.10gi), %s\n",
                   r.mult_re, r.mult_im,
                   r.floquet_kind == MBL_FLOQUET_CROSS_MINUS1  ? "through -1: a solution of period 2T grows (flip)"
                   : r.floquet_kind == MBL_FLOQUET_CROSS_PLUS1 ? "through +1: a solution of period T grows"
                                                               : "a complex pair: a second frequency grows (Neimark-Sacker)");
        else if (c.order != 0)
            printf("  mode %d (at %s = %g) meets the order line omega = %g %s: eigenvalue %.10g %+.10gi\n", r.mode_near,
                   c.param, c.near, c.order, c.param, r.re, r.im);
        else if (r.collision)
            printf("  mode %d (at %s = %g) and its neighbour meet on the imaginary axis at %.3g %+.10gi and leave it\n"
                   "  (a spectrum symmetric about the axis): %s\n",
                   r.mode_near, c.param, c.near, r.re, r.im,
                   r.divergence ? "divergence, the pair meets at zero" : "flutter beyond");
        else
            printf("  mode %d (at %s = %g) crosses the imaginary axis: eigenvalue %.3g %+.10gi (%s)\n", r.mode_near,
                   c.param, c.near, r.re, r.im,
                   r.divergence ? "a real eigenvalue through zero: divergence" : "an oscillatory pair: flutter");
        /* the refinement's detail: under --verbose, or where the accuracy is not the tolerance's (a
         * boundary inside a cluster of zero eigenvalues, refined from two points outside it) */
        double tol = (c.tol > 0 ? c.tol : bo.tol) * fmax(1.0, fabs(r.value));
        if (!r.floquet && !c.verbose && r.accuracy > 1.5 * tol && r.last_step > 0)
            printf("  inside the model's zero eigenvalues: the root of a cubic through two points %.2g apart\n",
                   r.last_step);
        else if (!r.floquet && !c.verbose && r.accuracy > 1.5 * tol)
            printf("  taken where the crossing eigenvalue's real part is zero to rounding; a mode changes side within -+ %.2g of it\n",
                   r.verified);
        if (c.verbose && r.floquet)
            printf("  bracket [%.10g, %.10g] found in %d points; refined in %d steps, last step %.2g\n", r.lo, r.hi,
                   r.points - r.iterations, r.iterations, r.last_step);
        else if (c.verbose)
            printf("  bracket [%.10g, %.10g] found in %d points; refined in %d iterations, last step %.2g; slope %s %.6g;\n"
                   "  a mode changes side across %s = %.12g -+ %.2g\n",
                   r.lo, r.hi, r.points - r.iterations, r.iterations, r.last_step,
                   c.order != 0 ? "d(|Im s| - K p)/dp" : r.collision ? "d(s1 - s2)^2/dp" : "d Re/dp", r.slope, c.param,
                   r.value, r.verified);
    }
    return 0;
}
