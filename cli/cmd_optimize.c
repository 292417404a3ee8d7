/* `mblin optimize`: a thin client of include/mblin/optimize.h (docs/optimize.md).
 *
 *   mblin optimize MODEL --vary NAME:LO:HI[:START][,NAME:LO:HI[:START]...] --objective GOAL
 *                  [--constraint GOAL ...] [--algorithm slsqp|mma|ccsaq|cobyla] [--max-eval N]
 *                  [--xtol T] [--ftol T] [--ctol T] [--feas-tol T] [--kkt-tol T] [--min-mac M] [--quiet]
 *                  [--svg FILE] [--sweep-around DIR [--sweep-span F]] [--json]
 *                  [--set p=value ...] [--guess q=value ...] [--at KIND]
 *
 * GOAL: an objective max:Q, min:Q or Q=TARGET, a constraint Q>=A, Q<=A or Q!=A:B (outside the band
 * [A, B]), Q one of freq:I (Hz), damping:I (mode I as `mblin linearize` lists it at the start),
 * min-damping (the least over the modes), max-real (the largest real part over the modes) and change (the design's relative change from the
 * model's values). Progress lines and the final design with its modes on stdout; exit status 0 on
 * success, 1 when the optimization fails (infeasible, a lost point or mode: one line), 2 for a
 * usage error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/json.h"
#include "mblin/mblin.h"
#include "mblin/optimize.h"

#define MAX_VARY 64
#define SWEEP_SPAN 0.1   /* --sweep-around: p (1 -+ 0.1) by default */
#define SWEEP_POINTS 21  /* points of each sweep (odd: the optimum in the middle unless a bound cuts) */
#define MAX_CONSTRAINTS 64

typedef struct cli {
    mbl_opt_param par[MAX_VARY];
    char names[MAX_VARY][256];
    int npar;
    const char *objective_text, *constraint_text[MAX_CONSTRAINTS];
    mbl_opt_goal objective, con[MAX_CONSTRAINTS];
    int ncon, quiet, has_objective;
    const char *svg; /* --svg FILE: the objective's history */
    const char *around; /* --sweep-around DIR: each varied parameter swept around the optimum */
    double span;        /* --sweep-span F: over p (1 -+ F) within the bounds (default SWEEP_SPAN) */
    char peak_names[MAX_CONSTRAINTS + 1][2][128]; /* a peak goal's input and coordinate */
    mbl_optimize_options o;
} cli;

static void help(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "optimize", "MODEL --vary NAME:LO:HI,... --objective GOAL [OPTIONS]");
    printf("\nthe design (parameters within bounds) that minimizes or maximizes a goal on the modes under\n"
           "constraints on the modes, by NLopt with the exact eigen-sensitivities (the operating point's shift\n"
           "included) as gradients; modes are tracked from design to design (docs/optimize.md)\n\n"
           "goals: Q is freq:I (Hz), damping:I, real:I (1/s; mode I as `mblin linearize` lists it at the start),\n"
           "min-damping (the least damping ratio of all modes), max-real (the largest real part of all modes,\n"
           "1/s), change (sum of ((p - p0) / p0)^2 over the varied parameters) or peak:IN:OUT:F1:F2 (the\n"
           "largest |H| from input IN to OUT over F1..F2 Hz: a coordinate's displacement or an output) or\n"
           "critical:I:SPEED:ORDER:NEAR (the value of parameter SPEED where mode I's damped frequency meets\n"
           "ORDER * SPEED, searched from NEAR) or order:I:SPEED:N (mode I's frequency minus N * SPEED / 2 pi,\n"
           "Hz: its distance from the order line; SPEED in rad/s, varied or not; order:I:SPEED:N!=-D:D keeps\n"
           "it D Hz off the line) or expr:EXPRESSION (of the parameters: a mass m1 + m2, a cost)\n\n"
           "options:\n");
    static const char *const lines[][2] = {
        {"--vary NAME:LO:HI[:S]", "the varied parameters, comma-separated: bounds LO < HI and the start S (default: "
                                  "the model's value)"},
        {"--objective GOAL", "max:Q, min:Q or Q=TARGET (max:min-damping, min:max-real by the bound formulation)"},
        {"--constraint GOAL", "Q>=A, Q<=A or Q!=A:B (outside the band A..B; repeatable)"},
        {"--algorithm NAME", "slsqp, mma, ccsaq, or cobyla (derivative-free); default slsqp, mma for max:min-damping and min:max-real"},
        {"--max-eval N", "evaluations of the design at most (default 200)"},
        {"--xtol T", "stop when a step moves every parameter by less than T of its range (1e-7)"},
        {"--ftol T", "... or the objective by less than T of it (default 1e-10)"},
        {"--ctol T", "the optimizer's tolerance on each scaled constraint (default 1e-8)"},
        {"--feas-tol T", "the final design is refused when a scaled constraint is violated by more (default 1e-6)"},
        {"--kkt-tol T", "the final design is refused when its first-order optimality residual exceeds T (default 1e-3)"},
        {"--min-mac M", "a tracked mode is lost below this MAC with its predicted shape (0.5)"},
        {"--quiet", "no progress lines"},
        {"--svg FILE", "the objective's history: its value at every evaluation, the infeasible ones marked"},
        {"--sweep-around DIR", "each varied parameter swept around the optimum, the others held there: "
                               "DIR/sweep_NAME.csv, damping_NAME.svg, campbell_NAME.svg"},
        {"--sweep-span F", "those sweeps over p (1 -+ F) within the bounds (default 0.1), 21 points"},
        {"--json", "one JSON object (docs/schema/optimize.json) instead of the progress lines and the report"},
        {"--set NAME=VALUE", "override a parameter (repeatable)"},
        {"--guess NAME=VALUE", "initial value of a coordinate (repeatable)"},
        {"--at KIND", "operating point: equilibrium, given, steady or trim (default: the file's)"},
    };
    int col = 24;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) cli_option_line(stdout, lines[i][0], lines[i][1], col);
    cli_user_code_help(stdout, col);
    cli_option_line(stdout, "--help", "this text", col);
}

/* peak:INPUT:OUT:F1:F2 (q after "peak:") into g, the names into names */
static int peak(char *q, mbl_opt_goal *g, char (*names)[128])
{
    char *f[4] = {q, NULL, NULL, NULL}, why[200];
    for (int i = 1; i < 4; i++) {
        if (!(f[i] = strchr(f[i - 1], ':'))) return -1;
        *f[i]++ = 0;
    }
    if (!f[0][0] || !f[1][0] || strlen(f[0]) >= 128 || strlen(f[1]) >= 128 || cli_number(f[2], &g->band[0], why, sizeof why) ||
        cli_number(f[3], &g->band[1], why, sizeof why))
        return -1;
    strcpy(names[0], f[0]), strcpy(names[1], f[1]);
    g->kind = MBL_OPT_PEAK, g->input = names[0], g->output = names[1];
    return 0;
}

/* critical:I:SPEED:ORDER:NEAR (q after "critical:") into g, the speed's name into names[0] */
static int critical(char *q, mbl_opt_goal *g, char (*names)[128])
{
    char *f[4] = {q, NULL, NULL, NULL}, why[200];
    double m;
    for (int i = 1; i < 4; i++) {
        if (!(f[i] = strchr(f[i - 1], ':'))) return -1;
        *f[i]++ = 0;
    }
    if (cli_decimal(f[0], &m) || m < 1 || m != floor(m) || m > 1e9 || !f[1][0] || strlen(f[1]) >= 128 ||
        cli_number(f[2], &g->order, why, sizeof why) || cli_number(f[3], &g->near, why, sizeof why))
        return -1;
    strcpy(names[0], f[1]);
    g->kind = MBL_OPT_CRITICAL, g->mode = (int)m, g->speed = names[0];
    return 0;
}

/* order:I:SPEED:N (q after "order:") into g, the speed's name into names[0] */
static int order_line(char *q, mbl_opt_goal *g, char (*names)[128])
{
    char *f[3] = {q, NULL, NULL}, why[200];
    double m;
    for (int i = 1; i < 3; i++) {
        if (!(f[i] = strchr(f[i - 1], ':'))) return -1;
        *f[i]++ = 0;
    }
    if (cli_decimal(f[0], &m) || m < 1 || m != floor(m) || m > 1e9 || !f[1][0] || strlen(f[1]) >= 128 ||
        cli_number(f[2], &g->order, why, sizeof why))
        return -1;
    strcpy(names[0], f[1]);
    g->kind = MBL_OPT_ORDER, g->mode = (int)m, g->speed = names[0];
    return 0;
}

/* Q at s (its length len): kind and mode; -1 when it is not one */
static int quantity(const char *s, size_t len, mbl_opt_goal *g, char (*names)[128])
{
    char q[400];
    if (len >= sizeof q) return -1;
    memcpy(q, s, len);
    q[len] = 0;
    if (!strncmp(q, "peak:", 5)) return peak(q + 5, g, names);
    if (!strncmp(q, "critical:", 9)) return critical(q + 9, g, names);
    if (!strncmp(q, "order:", 6)) return order_line(q + 6, g, names);
    if (!strncmp(q, "expr:", 5)) { /* an expression of the parameters */
        if (!q[5] || strlen(q + 5) >= 128) return -1;
        strcpy(names[0], q + 5);
        g->kind = MBL_OPT_EXPR, g->expr = names[0];
        return 0;
    }
    if (!strcmp(q, "min-damping")) return g->kind = MBL_OPT_MIN_DAMPING, 0;
    if (!strcmp(q, "max-real")) return g->kind = MBL_OPT_MAX_REAL, 0;
    if (!strcmp(q, "change")) return g->kind = MBL_OPT_CHANGE, 0;
    const char *num = !strncmp(q, "freq:", 5) ? q + 5 : !strncmp(q, "damping:", 8) ? q + 8 : !strncmp(q, "real:", 5) ? q + 5 : NULL;
    double m;
    if (!num || cli_decimal(num, &m) || m < 1 || m != floor(m) || m > 1e9) return -1;
    g->kind = q[0] == 'f' ? MBL_OPT_FREQ : q[0] == 'r' ? MBL_OPT_REAL : MBL_OPT_DAMPING;
    g->mode = (int)m;
    return 0;
}

static int goal(const char *v, int objective, mbl_opt_goal *g, char (*names)[128])
{
    memset(g, 0, sizeof *g);
    char why[200];
    const char *op = NULL;
    if (objective && (!strncmp(v, "max:", 4) || !strncmp(v, "min:", 4))) {
        g->sense = v[1] == 'a' ? MBL_OPT_MAXIMIZE : MBL_OPT_MINIMIZE;
        return quantity(v + 4, strlen(v + 4), g, names) ? cli_usage("optimize", "--objective: unknown quantity in '%s'", v) : -1;
    }
    if (objective) op = strchr(v, '=');
    else if (!(op = strstr(v, ">=")) && !(op = strstr(v, "<="))) op = strstr(v, "!=");
    if (!op) return cli_usage("optimize", objective ? "--objective expects max:Q, min:Q or Q=TARGET, got '%s'"
                                                    : "--constraint expects Q>=A, Q<=A or Q!=A:B, got '%s'", v);
    if (quantity(v, (size_t)(op - v), g, names)) return cli_usage("optimize", "unknown quantity in '%s' (freq:I, damping:I, real:I, min-damping, max-real, change, "
                                        "peak:IN:OUT:F1:F2, critical:I:SPEED:ORDER:NEAR, order:I:SPEED:N, expr:EXPRESSION)", v);
    const char *rhs = op + (objective ? 1 : 2);
    if (objective) {
        g->sense = MBL_OPT_TARGET;
        if (cli_number(rhs, &g->a, why, sizeof why)) return cli_usage("optimize", "--objective: the target is not a number in '%s'", v);
        return -1;
    }
    g->sense = op[0] == '>' ? MBL_OPT_GE : op[0] == '<' ? MBL_OPT_LE : MBL_OPT_OUTSIDE;
    if (g->sense != MBL_OPT_OUTSIDE)
        return cli_number(rhs, &g->a, why, sizeof why) ? cli_usage("optimize", "--constraint: the bound is not a number in '%s'", v) : -1;
    char lo[64];
    const char *colon = strchr(rhs, ':');
    if (!colon || (size_t)(colon - rhs) >= sizeof lo) return cli_usage("optimize", "--constraint Q!=A:B expects a band A:B, got '%s'", v);
    memcpy(lo, rhs, (size_t)(colon - rhs));
    lo[colon - rhs] = 0;
    if (cli_number(lo, &g->a, why, sizeof why) || cli_number(colon + 1, &g->b, why, sizeof why) || !(g->a < g->b))
        return cli_usage("optimize", "--constraint Q!=A:B expects numbers A < B, got '%s'", v);
    return -1;
}

/* NAME:LO:HI[:START],... */
static int vary(cli *c, const char *v)
{
    for (const char *s = v; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char item[400], *f[5] = {0};
        int nf = 0;
        if (c->npar == MAX_VARY) return cli_usage("optimize", "--vary: at most 64 parameters%s", "");
        if (len >= sizeof item) return cli_usage("optimize", "--vary: an item is too long in '%s'", v);
        memcpy(item, s, len);
        item[len] = 0;
        for (char *p = item; p && nf < 5; nf++) {
            f[nf] = p;
            p = strchr(p, ':');
            if (p) *p++ = 0;
        }
        mbl_opt_param *q = &c->par[c->npar];
        char why[200];
        q->start = NAN;
        if (nf < 3 || nf > 4 || !f[0][0] || strlen(f[0]) >= 256 || cli_number(f[1], &q->lo, why, sizeof why) ||
            cli_number(f[2], &q->hi, why, sizeof why) || (nf == 4 && cli_number(f[3], &q->start, why, sizeof why)))
            return cli_usage("optimize", "--vary expects NAME:LO:HI[:START] with numbers, got '%s'", v);
        if (!(q->lo < q->hi)) return cli_usage("optimize", "--vary: LO must be below HI in '%s'", v);
        strcpy(c->names[c->npar], f[0]);
        q->name = c->names[c->npar++];
        if (!e) break;
        s = e + 1;
    }
    return -1;
}

static int option(void *ud, const char *a, const char *v)
{
    cli *c = ud;
    double x;
    if (!strcmp(a, "--quiet")) c->quiet = 1;
    else if (!strcmp(a, "--sweep-around")) {
        if (!v[0]) return cli_usage("optimize", "--sweep-around expects a directory%s", "");
        c->around = v;
    } else if (!strcmp(a, "--svg")) {
        if (!v[0]) return cli_usage("optimize", "--svg expects a file name%s", "");
        c->svg = v;
    }
    else if (!strcmp(a, "--vary")) return vary(c, v);
    else if (!strcmp(a, "--objective")) {
        c->objective_text = v, c->has_objective = 1;
        return goal(v, 1, &c->objective, c->peak_names[MAX_CONSTRAINTS]);
    } else if (!strcmp(a, "--constraint")) {
        if (c->ncon == MAX_CONSTRAINTS) return cli_usage("optimize", "at most 64 constraints%s", "");
        c->constraint_text[c->ncon] = v;
        int rc = goal(v, 0, &c->con[c->ncon], c->peak_names[c->ncon]);
        if (rc < 0) c->ncon++;
        return rc;
    } else if (!strcmp(a, "--algorithm")) {
        int k = 0;
        while (mbl_opt_algorithm_name(k) && strcmp(mbl_opt_algorithm_name(k), v)) k++;
        if (!mbl_opt_algorithm_name(k)) return cli_usage("optimize", "--algorithm expects slsqp, mma, ccsaq or cobyla, got '%s'", v);
        c->o.algorithm = k;
    } else if (cli_decimal(v, &x) || !(x > 0)) {
        return cli_bad_value("optimize", a, "a positive number", v);
    } else if (!strcmp(a, "--max-eval")) {
        if (x != floor(x) || x > 1e7) return cli_usage("optimize", "--max-eval expects an integer from 1 to 10000000, got '%s'", v);
        c->o.max_eval = (int)x;
    } else if (!strcmp(a, "--sweep-span")) {
        if (!(x < 1)) return cli_usage("optimize", "--sweep-span expects a number in (0, 1), got '%s'", v);
        c->span = x;
    } else if (!strcmp(a, "--min-mac")) {
        if (!(x < 1)) return cli_usage("optimize", "--min-mac expects a number in (0, 1), got '%s'", v);
        c->o.min_mac = x;
    } else {
        double *t = !strcmp(a, "--xtol") ? &c->o.xtol_rel : !strcmp(a, "--ftol") ? &c->o.ftol_rel
                                                             : !strcmp(a, "--ctol") ? &c->o.ctol
                                                             : !strcmp(a, "--kkt-tol") ? &c->o.kkt_tol : &c->o.feas_tol;
        *t = x;
    }
    return -1;
}

static const cli_option own[] = {{"--vary", 1},  {"--objective", 1}, {"--constraint", 1}, {"--algorithm", 1},
                                 {"--max-eval", 1}, {"--xtol", 1},   {"--ftol", 1},       {"--ctol", 1},
                                 {"--feas-tol", 1}, {"--kkt-tol", 1}, {"--min-mac", 1}, {"--quiet", 0}, {"--svg", 1}, {"--sweep-around", 1}, {"--sweep-span", 1},     {NULL, 0}};

/* one progress line per evaluation */
static int progress(void *ud, const mbl_opt_step *s)
{
    const cli *c = ud;
    if (!c->quiet) {
        cli_progress_clear();
        printf("  %5d %16.10g %14.6g %10.3g  ", s->evaluation, s->value, s->objective, s->violation);
        int any = 0;
        for (int j = 0; j < s->nparams; j++)
            if (s->at_bound[j]) printf("%s%s=%s", any++ ? "," : "", c->par[j].name, s->at_bound[j] < 0 ? "lo" : "hi");
        printf("%s ", any ? "" : "-");
        for (int j = 0; j < s->nparams; j++) printf(" %s=%.8g", c->par[j].name, s->p[j]);
        printf("%s%s%s\n", s->note[0] ? "  (" : "", s->note, s->note[0] ? ")" : "");
        fflush(stdout);
    }
    return cli_interrupted();
}

static const char *goal_name(const mbl_opt_goal *g, char *buf, size_t len)
{
    const char *q = g->kind == MBL_OPT_FREQ ? "frequency [Hz] of mode" : g->kind == MBL_OPT_DAMPING ? "damping ratio of mode"
                  : g->kind == MBL_OPT_REAL ? "real part [1/s] of mode" : g->kind == MBL_OPT_MIN_DAMPING ? "least damping ratio"
                  : g->kind == MBL_OPT_MAX_REAL ? "largest real part [1/s]" : "relative change of the design";
    if (g->kind == MBL_OPT_FREQ || g->kind == MBL_OPT_DAMPING || g->kind == MBL_OPT_REAL)
        snprintf(buf, len, "%s %d", q, g->mode);
    else if (g->kind == MBL_OPT_PEAK)
        snprintf(buf, len, "peak of |%s / %s| over %g..%g Hz", g->output, g->input, g->band[0], g->band[1]);
    else if (g->kind == MBL_OPT_CRITICAL)
        snprintf(buf, len, "critical speed %s of mode %d, order %g", g->speed, g->mode, g->order);
    else if (g->kind == MBL_OPT_EXPR) snprintf(buf, len, "expression %s", g->expr);
    else if (g->kind == MBL_OPT_ORDER)
        snprintf(buf, len, "distance [Hz] of mode %d from the order line %g %s", g->mode, g->order, g->speed);
    else snprintf(buf, len, "%s", q);
    return buf;
}

static const char *sense_name(int sense)
{
    return sense == MBL_OPT_MAXIMIZE ? "maximize" : sense == MBL_OPT_MINIMIZE ? "minimize" : "target";
}

static void print_result(const cli *c, const cli_args *a, const mbl_opt_result *r)
{
    char b[128];
    const mbl_opt_goal *ob = &c->objective;
    printf("\nOptimum (%s, %d evaluations: %s)\n", mbl_opt_algorithm_name(r->algorithm), r->evaluations, r->stop_reason);
    printf("  objective: %s the %s = %.10g", sense_name(ob->sense), goal_name(ob, b, sizeof b), r->value);
    if (ob->sense == MBL_OPT_TARGET) printf(" (target %.10g)", ob->a);
    if (ob->kind == MBL_OPT_PEAK) printf(" at %.10g Hz", r->peak_hz);
    if (r->tracked_objective >= 0 && r->tracked_objective + 1 != ob->mode)
        printf(" (mode %d of the start is mode %d here)", ob->mode, r->tracked_objective + 1);
    printf("\n");
    for (int j = 0; j < r->nparams; j++)
        printf("  %-12s = %-16.10g  (bounds %g:%g%s)\n", c->par[j].name, r->p[j], c->par[j].lo, c->par[j].hi,
               r->at_bound[j] < 0 ? ", at the lower bound" : r->at_bound[j] > 0 ? ", at the upper bound" : "");
    for (int i = 0; i < c->ncon; i++) {
        printf("  constraint %d: %s", i + 1, c->constraint_text[i]);
        if (r->tracked[i] >= 0) {
            const mbl_sens_mode *m = &r->S->modes[r->tracked[i]];
            int k = c->con[i].kind == MBL_OPT_ORDER ? MBL_OPT_FREQ : c->con[i].kind; /* the order line's mode: its frequency */
            printf(": %s %.10g", k == MBL_OPT_FREQ ? "frequency [Hz]" : k == MBL_OPT_REAL ? "real part [1/s]" : "damping ratio",
                   k == MBL_OPT_FREQ ? m->freq_hz : k == MBL_OPT_REAL ? m->re : m->damping_ratio);
            if (r->tracked[i] + 1 != c->con[i].mode) printf(" (mode %d here)", r->tracked[i] + 1);
        }
        double mx = -INFINITY; /* the largest real part: its value over the nonzero modes */
        for (int k = 0; c->con[i].kind == MBL_OPT_MAX_REAL && k < r->S->nmode; k++)
            if (r->S->modes[k].kind != MBL_MODE_ZERO) mx = fmax(mx, r->S->modes[k].re);
        if (c->con[i].kind == MBL_OPT_MAX_REAL) printf(": largest real part [1/s] %.10g", mx);
        printf("\n");
    }
    printf("  largest constraint violation (scaled): %.3g; first-order optimality residual %.3g%s\n", r->violation, r->kkt,
           r->crossings ? "; a tracked mode changed its place in the list (followed by its shape)" : "");
    char pair[64];
    if (r->coalesced[0] == r->coalesced[1])
        snprintf(pair, sizeof pair, "mode %d meets its conjugate on the real axis", r->coalesced[0]);
    else
        snprintf(pair, sizeof pair, "modes %d and %d", r->coalesced[0], r->coalesced[1]);
    if (r->coalesced[0] && r->valley_steps)
        printf("  at a double eigenvalue (%s): reached by %d Newton step%s on the pair and %d step%s along the designs that "
               "keep it double, checked by probing\n",
               pair, r->newton_steps, r->newton_steps == 1 ? "" : "s", r->valley_steps, r->valley_steps == 1 ? "" : "s");
    else if (r->coalesced[0] && r->newton_steps)
        printf("  at a double eigenvalue (%s): reached by %d Newton step%s on the pair, checked by probing\n", pair,
               r->newton_steps, r->newton_steps == 1 ? "" : "s");
    else if (r->coalesced[0])
        printf("  at a double eigenvalue (%s): checked by probing, the first-order condition does not apply\n", pair);
    printf("\nModes of the final design\n");
    printf("  mode    frequency [Hz]   damping ratio              real         imaginary\n");
    for (int k = 0; k < r->S->nmode; k++) {
        const mbl_sens_mode *m = &r->S->modes[k];
        printf("  %4d  %16.10g  %14.8g  %16.10g  %16.10g\n", k + 1, m->freq_hz, m->damping_ratio, m->re, m->im);
    }
    printf("\nIts linear model: mblin linearize %s", a->model);
    for (int i = 0; i < a->nsets; i++) { /* the run's own settings, but the varied parameters' */
        int varied = 0;
        for (int j = 0; j < r->nparams; j++) varied |= !strcmp(a->sets[i].name, c->par[j].name);
        if (!varied) printf(" --set %s=%.17g", a->sets[i].name, a->sets[i].value);
    }
    for (int j = 0; j < r->nparams; j++) printf(" --set %s=%.17g", c->par[j].name, r->p[j]);
    printf("\n");
}

static void json_numbers(const double *x, int n)
{
    printf("[");
    for (int k = 0; k < n; k++) printf("%s", k ? ", " : ""), mbl_json_number(stdout, x[k], 17, 0);
    printf("]");
}

/* --json: one object (docs/schema/optimize.json) */
static void print_json(const cli *c, const cli_args *a, const mbl_opt_result *r)
{
    printf("{\n \"schema_version\": %d,\n \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(stdout, a->model);
    printf(",\n \"algorithm\": \"%s\", \"evaluations\": %d, \"stop_reason\": ", mbl_opt_algorithm_name(r->algorithm),
           r->evaluations);
    mbl_json_string(stdout, r->stop_reason);
    printf(",\n \"parameters\": [");
    for (int j = 0; j < r->nparams; j++) {
        printf("%s\n  {\"name\": ", j ? "," : "");
        mbl_json_string(stdout, c->par[j].name);
        printf(", \"value\": ");
        mbl_json_number(stdout, r->p[j], 17, 0);
        printf(", \"lo\": ");
        mbl_json_number(stdout, c->par[j].lo, 17, 0);
        printf(", \"hi\": ");
        mbl_json_number(stdout, c->par[j].hi, 17, 0);
        printf(", \"at_bound\": %d}", r->at_bound[j]);
    }
    printf("],\n \"objective\": {\"goal\": ");
    mbl_json_string(stdout, c->objective_text);
    printf(", \"value\": ");
    mbl_json_number(stdout, r->value, 17, 0);
    printf(", \"function\": ");
    mbl_json_number(stdout, r->objective, 17, 0);
    printf(", \"mode\": ");
    if (r->tracked_objective >= 0) printf("%d", r->tracked_objective + 1);
    else printf("null");
    printf(", \"peak_hz\": ");
    mbl_json_number(stdout, r->peak_hz, 17, 0);
    printf("},\n \"constraints\": [");
    for (int i = 0; i < c->ncon; i++) {
        printf("%s{\"goal\": ", i ? ", " : "");
        mbl_json_string(stdout, c->constraint_text[i]);
        printf(", \"mode\": ");
        if (r->tracked[i] >= 0) printf("%d}", r->tracked[i] + 1);
        else printf("null}");
    }
    printf("],\n \"violation\": ");
    mbl_json_number(stdout, r->violation, 17, 0);
    printf(", \"kkt\": ");
    mbl_json_number(stdout, r->kkt, 17, 0);
    printf(", \"coalesced\": ");
    if (r->coalesced[0]) printf("[%d, %d]", r->coalesced[0], r->coalesced[1]);
    else printf("null");
    printf(", \"newton_steps\": %d, \"valley_steps\": %d, \"crossings\": %d,\n \"history\": ", r->newton_steps,
           r->valley_steps, r->crossings);
    json_numbers(r->history, r->nhistory);
    printf(",\n \"history_violation\": ");
    json_numbers(r->history_violation, r->nhistory);
    printf(",\n \"modes\": [");
    static const char *const keys[4] = {"re", "im", "freq_hz", "damping_ratio"};
    for (int k = 0; k < r->S->nmode; k++) {
        const mbl_sens_mode *m = &r->S->modes[k];
        const double v[4] = {m->re, m->im, m->freq_hz, m->damping_ratio};
        printf("%s\n  ", k ? "," : "");
        for (int i = 0; i < 4; i++) printf("%s\"%s\": ", i ? ", " : "{", keys[i]), mbl_json_number(stdout, v[i], 17, 0);
        printf("}");
    }
    printf("\n ]\n}\n");
}

/* --svg FILE: the objective's quantity at every evaluation, the evaluations that violate a
 * constraint marked; 0 or the exit status 1 after a message */
static int history_svg(const cli *c, const mbl_opt_result *r)
{
    int n = r->nhistory, nbad = 0, rc = 0;
    double *x = malloc(((size_t)n * 3 + 1) * sizeof *x), *bx = x ? x + n : NULL, *by = bx ? bx + n : NULL;
    FILE *f = x ? cli_output_file(c->svg) : NULL;
    if (!f) {
        fprintf(stderr, "mblin: %s: %s\n", c->svg, x ? "cannot write the file" : "out of memory");
        free(x);
        return 1;
    }
    for (int k = 0; k < n; k++) {
        x[k] = k + 1;
        if (r->history_violation[k] > c->o.feas_tol) bx[nbad] = k + 1, by[nbad++] = r->history[k];
    }
    char b[160], t[200];
    mbl_svg_series s[2] = {{n, x, r->history, "objective", 0, 0}, {nbad, bx, by, "a constraint violated", 1, 1}};
    snprintf(t, sizeof t, "mblin optimize: %s", goal_name(&c->objective, b, sizeof b));
    if (mbl_svg_plot(f, t, "evaluation", goal_name(&c->objective, b, sizeof b), s, nbad ? 2 : 1) || fclose(f)) {
        fprintf(stderr, "mblin: %s: cannot write the file\n", c->svg);
        rc = 1;
    }
    free(x);
    return rc;
}

/* DIR/NAME: the run's output file (cli_output_file), or NULL after a message */
static FILE *out_file(const char *dir, const char *stem, const char *name, const char *ext)
{
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s_%s.%s", dir, stem, name, ext) >= sizeof path) {
        fprintf(stderr, "mblin: %s: the path is too long\n", dir);
        return NULL;
    }
    FILE *f = cli_output_file(path);
    if (!f) fprintf(stderr, "mblin: %s: cannot write the file\n", path);
    return f;
}

/* --sweep-around DIR: each varied parameter over p (1 -+ span) within its bounds, the others at the
 * optimum (mbl_sweep_run); 0 or the exit status 1 after a message */
static int sweeps_around(const cli *c, const cli_args *a, const mbl_model *md, const mbl_opt_result *r)
{
    static mbl_setting sets[CLI_MAX_SETS + MAX_VARY];
    int n = 0, rc = 0;
    if (cli_mkdirs(c->around)) {
        fprintf(stderr, "mblin: %s: cannot make the directory\n", c->around);
        return 1;
    }
    cli_output_dir(c->around);
    double span = c->span > 0 ? c->span : SWEEP_SPAN;
    for (int j = 0; j < r->nparams && !rc; j++) {
        n = 0; /* the run's settings and the optimum, but the swept parameter */
        for (int i = 0; i < a->nsets; i++)
            if (strcmp(a->sets[i].name, c->par[j].name)) sets[n++] = a->sets[i];
        for (int k = 0; k < r->nparams; k++)
            if (k != j) sets[n++] = (mbl_setting){c->par[k].name, r->p[k]};
        mbl_sweep_options so;
        mbl_sweep_options_default(&so);
        mbl_opoint_options po;
        cli_opoint_options(a, &po);
        double p = r->p[j], w = span * (fabs(p) > 0 ? fabs(p) : c->par[j].hi - c->par[j].lo);
        so.naxes = 1;
        so.axis[0] = (mbl_sweep_axis){c->par[j].name, fmax(c->par[j].lo, p - w), fmin(c->par[j].hi, p + w), SWEEP_POINTS};
        so.sets = sets, so.nsets = n, so.popt = &po;
        mbl_sweep *sw = NULL;
        mbl_status st;
        mbl_status_clear(&st);
        if (mbl_sweep_run(md, &so, &sw, &st)) {
            rc = cli_fail(&st);
            break;
        }
        FILE *f = out_file(c->around, "sweep", c->par[j].name, "csv");
        rc = !f || mbl_sweep_write_csv(f, sw) || fclose(f);
        if (!rc) rc = !(f = out_file(c->around, "damping", c->par[j].name, "svg")) || mbl_sweep_svg_damping(f, sw) || fclose(f);
        if (!rc)
            rc = !(f = out_file(c->around, "campbell", c->par[j].name, "svg")) ||
                 mbl_sweep_svg_campbell(f, sw, NULL, 0, 0, 0, NULL, 0) || fclose(f);
        if (rc) fprintf(stderr, "mblin: %s: the sweep of %s was not written\n", c->around, c->par[j].name);
        else if (!a->json)
            printf("%s %s/sweep_%s.csv (and damping_%s.svg, campbell_%s.svg): %s = %.6g .. %.6g\n",
                   j ? "                          " : "\nSweeps around the optimum:", c->around, c->par[j].name,
                   c->par[j].name, c->par[j].name, c->par[j].name, so.axis[0].from, so.axis[0].to);
        mbl_sweep_free(sw);
    }
    return rc;
}

int cli_cmd_optimize(int argc, char **argv)
{
    static cli c;
    static cli_args a;
    memset(&c, 0, sizeof c);
    mbl_optimize_options_default(&c.o);
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_JSON, own, NULL, option, help, &c};
    int rc = cli_parse(&spec, &a, argc, argv);
    if (rc >= 0) return rc;
    if (!a.model) return cli_usage("optimize", "optimize needs a MODEL file%s", "");
    if (!c.npar) return cli_usage("optimize", "optimize needs --vary NAME:LO:HI%s", "");
    if (!c.has_objective) return cli_usage("optimize", "optimize needs --objective GOAL%s", "");
    c.o.params = c.par, c.o.nparams = c.npar;
    c.o.objective = c.objective;
    c.o.constraints = c.con, c.o.nconstraints = c.ncon;
    c.o.sets = a.sets, c.o.nsets = a.nsets;
    cli_opoint_options(&a, &c.o.opoint);
    c.o.progress = progress, c.o.progress_ud = &c;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_opt_result *r = NULL;
    mbl_load_options lo;
    cli_load_options(&a, &lo);
    if (mbl_model_load_file_opt(a.model, a.sets, a.nsets, &lo, &md, &st)) return cli_fail(&st);
    if ((rc = cli_check_guesses(&a, md))) {
        mbl_model_free(md);
        return rc;
    }
    if (a.json) c.quiet = 1; /* one JSON object on stdout */
    if (!c.quiet) {
        char b[128];
        int mx = c.objective.kind == MBL_OPT_MIN_DAMPING || c.objective.kind == MBL_OPT_MAX_REAL;
        int alg = c.o.algorithm != MBL_OPT_AUTO ? c.o.algorithm : mx ? MBL_OPT_MMA : MBL_OPT_SLSQP;
        printf("Optimizing %s: %s the %s by %s\n", a.model, sense_name(c.objective.sense), goal_name(&c.objective, b, sizeof b),
               mbl_opt_algorithm_name(alg));
        printf("   eval            value      objective  violation  bounds  design\n");
    }
    rc = mbl_optimize(md, &c.o, &r, &st) ? cli_fail(&st) : 0;
    if (!rc && a.json) print_json(&c, &a, r);
    else if (!rc) print_result(&c, &a, r);
    if (!rc && c.svg) rc = history_svg(&c, r);
    if (!rc && c.around) rc = sweeps_around(&c, &a, md, r);
    mbl_opt_result_free(r);
    mbl_model_free(md);
    return rc;
}
