/* `mblin codegen` and `mblin symbolic`: thin clients of include/mblin/codegen.h (docs/symbolic.md).
 *
 *   mblin codegen MODEL --lang c|python|octave [--name NAME] [-o FILE] [--set p=value ...] [--at KIND]
 *   mblin symbolic MODEL [--params p1,p2 | all] [--format text|latex|json] [--set p=value ...] [--at KIND]
 *
 * Output on stdout (or FILE), one line "mblin: <reason>" on failure (exit 1; a usage error, exit 2). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/json.h"
#include "cli.h"
#include "mblin/codegen.h"
#include "mblin/mblin.h"

/* symbolic refuses up front when the estimated expression nodes exceed this many times --max-size */
#define SYMBOLIC_NODES_PER_TERM 4.0

/* the size limits' hint (issue 30, item 17): how to raise the limit a refusal names */
static void cg_error(const char *msg, const char *option)
{
    int size = strstr(msg, "expression nodes") != NULL;
    fprintf(stderr, "mblin: %s%s%s%s\n", msg, size ? " (" : "", size ? option : "", size ? " raises the limit)" : "");
}

/* --max-nodes N (a positive count below 1e12) */
static int cg_count(const char *cmd, const char *opt, const char *v, double *out)
{
    char *end = NULL;
    *out = strtod(v, &end);
    if (!*v || *end || !(*out >= 1 && *out < 1e12)) return cli_usage(cmd, "%s", opt);
    return -1;
}

/* load, operating point, symbolic model */
static int cg_build(const cli_args *c, int newton, size_t max_nodes, mbl_model **md, mbl_symlin **sl)
{
    mbl_status st = {0};
    mbl_point *pt = NULL;
    mbl_opoint_options po;
    cli_opoint_options(c, &po);
    mbl_load_options lo;
    cli_load_options(c, &lo);
    if (mbl_model_load_file_opt(c->model, c->sets, c->nsets, &lo, md, &st) || mbl_operating_point(*md, &po, &pt, &st) ||
        mbl_symlin_new(*md, pt, max_nodes, sl, &st) || (newton && mbl_symlin_newton(*sl, &st))) {
        cg_error(st.msg, "--max-nodes");
        mbl_point_free(pt);
        mbl_symlin_free(*sl);
        *sl = NULL;
        return st.code == MBL_EARG ? 2 : 1; /* a --set naming no parameter: a usage error */
    }
    mbl_point_free(pt);
    return 0;
}

static const char codegen_help[] =
    "\nStraight-line code of the linear model (A, B, C, D; M-hat, C-hat, K-hat, F) as a function of\n"
    "the parameters p, the operating point's coordinates q (and velocities v at a point with\n"
    "motion) and the inputs r (docs/symbolic.md). C needs only <math.h>; Python NumPy.\n\n"
    "options:\n"
    "  --lang L            c, python or octave (required)\n"
    "  --name NAME         name of the function (default: linear_model); an identifier of the\n"
    "                      language, not a keyword nor a name the code uses (np, p, sin, ...)\n"
    "  -o FILE             write to FILE (default: stdout)\n"
    "  --newton            also the Newton iteration for the operating point (equilibrium or\n"
    "                      steady motion): C NAME_newton(), Python NAME_newton(), Octave: NAME\n"
    "                      takes q as the guess and returns the point it solves\n"
    "  --max-nodes N       refuse a model whose code would have more than N expression nodes\n"
    "                      (estimated before the work; default 2000000; the work stops at 8 N)\n"
    "  --set NAME=VALUE    override a parameter (repeatable)\n"
    "  --at KIND           equilibrium | given | steady\n"
    "  --outputs A,B       keep only these outputs of the model, in this order\n";

/* codegen's own options as the parser found them */
typedef struct codegen_opts {
    const char *lang, *name;
    int newton;
    double max_nodes;
} codegen_opts;

static void codegen_usage(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "codegen", "MODEL --lang c|python|octave [OPTIONS]");
    fputs(codegen_help, stdout);
    cli_user_code_help(stdout, 22);
}

/* codegen's own options (cli_spec.option) */
static int codegen_option(void *ud, const char *a, const char *v)
{
    codegen_opts *o = ud;
    if (!strcmp(a, "--newton")) o->newton = 1;
    else if (!strcmp(a, "--max-nodes"))
        return cg_count("codegen", "--max-nodes expects a positive count", v, &o->max_nodes);
    else if (!strcmp(a, "--lang")) o->lang = v;
    else o->name = v;
    return -1;
}

static const cli_option codegen_own[] = {{"--newton", 0}, {"--lang", 1}, {"--name", 1}, {"--max-nodes", 1}, {NULL, 0}};

int cli_cmd_codegen(int argc, char **argv)
{
    static cli_args c;
    codegen_opts o = {NULL, "linear_model", 0, 2000000};
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_AT | CLI_OPT_OUT | CLI_OPT_OUTPUTS, codegen_own, NULL, codegen_option, codegen_usage, &o};
    int r = cli_parse(&spec, &c, argc, argv);
    if (r >= 0) return r;
    const char *lang = o.lang, *name = o.name, *outfile = c.out;
    const int newton = o.newton;
    if (!c.model) return cli_usage("codegen", "missing MODEL%s", "");
    if (!lang) return cli_usage("codegen", "missing --lang c|python|octave%s", "");
    mbl_lang L;
    if (!strcmp(lang, "c")) L = MBL_LANG_C;
    else if (!strcmp(lang, "python")) L = MBL_LANG_PYTHON;
    else if (!strcmp(lang, "octave")) L = MBL_LANG_OCTAVE;
    else return cli_usage("codegen", "--lang must be c, python or octave, got '%s'", lang);
    const char *why = mbl_codegen_name_check(L, name);
    if (why) {
        int plain = strlen(name) <= 60;
        for (const char *s = name; *s && plain; s++) plain = isgraph((unsigned char)*s);
        char m[200];
        snprintf(m, sizeof m, "--name '%s' %s (--lang %s)", plain ? name : "(unprintable or long)", why, lang);
        return cli_usage("codegen", "%s", m);
    }
    mbl_model *md = NULL;
    mbl_symlin *sl = NULL;
    int rc = cg_build(&c, newton, (size_t)o.max_nodes, &md, &sl);
    if (rc) {
        mbl_model_free(md);
        return rc;
    }
    FILE *f = outfile ? cli_output_file(outfile) : stdout; /* removed when interrupted */
    mbl_status st = {0};
    if (!f) {
        fprintf(stderr, "mblin: %s: cannot write (%s)\n", outfile, strerror(errno));
        rc = 1;
    } else if (mbl_codegen(sl, L, name, c.model, f, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        rc = 1;
    }
    if (f && f != stdout && fclose(f)) {
        fprintf(stderr, "mblin: %s: write error\n", outfile);
        rc = 1;
    }
    mbl_symlin_free(sl);
    mbl_model_free(md);
    return rc;
}

static const char symbolic_help[] =
    "\nThe linear model with the chosen parameters as symbols (the others as their numbers): the\n"
    "operating point in closed form when one is found (else the coordinates stand for it), H_x,\n"
    "M-hat, C-hat, K-hat, F, A, B, C, D as simplified expressions (docs/symbolic.md).\n\n"
    "options:\n"
    "  --params LIST       comma-separated parameter names, or all (default: all)\n"
    "  --format F          text (default), latex or json (expression strings mblin reads back)\n"
    "  --point symbols     keep the coordinates as symbols (M-hat at a general configuration)\n"
    "  --max-size N        refuse when the printed expressions would have more than N terms\n"
    "                      (operations, names and numbers; default 100000); refused before the\n"
    "                      work when the estimated expression nodes exceed 4 N\n"
    "  --max-nodes N       refuse a model of more than N expression nodes (estimated before the\n"
    "                      work; default 2000000; the work stops at 8 N)\n"
    "  --set NAME=VALUE    override a parameter (repeatable)\n"
    "  --at KIND           equilibrium | given | steady\n"
    "  --outputs A,B       keep only these outputs of the model, in this order\n";

typedef struct symmat {
    const char *name;
    const mblx_id *v;
    int rows, cols;
} symmat;

static int print_expr(FILE *f, const mblx_graph *g, mblx_id e, int fmt)
{
    mbl_status st = {0};
    char *s = fmt == 1 ? mbl_symlin_latex(g, e, &st) : mblx_print_alloc_rational(g, e, &st);
    if (!s) return -1;
    if (fmt == 2) mbl_json_string(f, s);
    else fputs(s, f);
    mbl_free(s);
    return 0;
}

/* --format json: one object of expression strings */
static void print_json(FILE *f, const char *model, const mbl_symlin *sl, const symmat *mats, int nm,
                       const mbl_symlin_check *chk, int closed)
{
    fprintf(f, "{\n  \"schema_version\": %d,\n  \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(f, model);
    fprintf(f, ",\n  \"parameters\": [");
    int first = 1;
    for (int i = 0; i < sl->np; i++) {
        if (!sl->pkept || !sl->pkept[i]) continue;
        fprintf(f, "%s", first ? "" : ", ");
        mbl_json_string(f, sl->pname[i]);
        first = 0;
    }
    fprintf(f, "],\n  \"point_closed_form\": %s,\n  \"note\": ", closed ? "true" : "false");
    mbl_json_string(f, sl->note);
    fprintf(f, ",\n  \"checked_sets\": %d,\n  \"checked_tol\": %g", chk->compared, MBL_SYMLIN_VERIFY_TOL);
    fprintf(f, ",\n  \"coordinates\": [");
    for (int i = 0; i < sl->n; i++) fprintf(f, "%s", i ? ", " : ""), mbl_json_string(f, sl->qname[i]);
    fprintf(f, "],\n  \"point\": [");
    for (int i = 0; i < sl->n; i++) fprintf(f, "%s", i ? ", " : ""), print_expr(f, sl->g, sl->qpoint[i], 2);
    fprintf(f, "]");
    if (sl->moving || sl->nq > sl->n) {
        fprintf(f, ",\n  \"point_values\": {");
        for (int i = 0; i < sl->nq || i < sl->n; i++)
            fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", sl->qname[i], sl->qval[i]);
        fprintf(f, "}");
    }
    if (sl->nq > sl->n) { /* user ODE states and implicit variables: symbols for their point values */
        fprintf(f, ",\n  \"ode_states\": [");
        for (int i = sl->n; i < sl->nq; i++) fprintf(f, "%s", i > sl->n ? ", " : ""), mbl_json_string(f, sl->qname[i]);
        fprintf(f, "]");
    }
    if (sl->moving) {
        fprintf(f, ",\n  \"velocity_values\": {");
        for (int i = 0; i < sl->n; i++) fprintf(f, "%s\"der(%s)\": %.17g", i ? ", " : "", sl->qname[i], sl->vval[i]);
        fprintf(f, "}");
    }
    fprintf(f, ",\n  \"states\": [");
    for (int i = 0; i < sl->nx; i++) fprintf(f, "%s", i ? ", " : ""), mbl_json_string(f, sl->state_names[i]);
    fprintf(f, "],\n  \"inputs\": [");
    for (int i = 0; i < sl->nr; i++) fprintf(f, "%s", i ? ", " : ""), mbl_json_string(f, sl->rname[i]);
    fprintf(f, "],\n  \"outputs\": [");
    for (int i = 0; i < sl->ny; i++) fprintf(f, "%s", i ? ", " : ""), mbl_json_string(f, sl->yname[i]);
    fprintf(f, "]");
    for (int k = 0; k < nm; k++) {
        fprintf(f, ",\n  \"%s\": [", mats[k].name);
        for (int i = 0; i < mats[k].rows; i++) {
            fprintf(f, "%s[", i ? ", " : "");
            for (int j = 0; j < mats[k].cols; j++) {
                if (j) fprintf(f, ", ");
                print_expr(f, sl->g, mats[k].v[i + (size_t)j * mats[k].rows], 2);
            }
            fprintf(f, "]");
        }
        fprintf(f, "]");
    }
    fprintf(f, "\n}\n");
}

/* --format text or latex: the point, then each matrix */
static void print_text(FILE *f, int fmt, const char *model, const mbl_symlin *sl, const symmat *mats, int nm,
                       const mbl_symlin_check *chk)
{
    const char *titles[] = {"H_x = dq/dS (rows: coordinates, columns: states)", "M-hat", "C-hat", "K-hat",
                            "F (M-hat S'' + C-hat S' + K-hat S = F u)", "A", "B", "C", "D"};
    const char *texnames[] = {"H_x", "\\hat{M}", "\\hat{C}", "\\hat{K}", "F", "A", "B", "C", "D"};
    const char *cm = fmt == 1 ? "%" : "#";
    fprintf(f, "%s symbolic linear model of %s (source 002 reduction %s)\n%s %s\n", cm, model,
            sl->moving ? "at a point with motion" : "at rest", cm, sl->note);
    if (chk->compared > 1)
        fprintf(f, "%s A, B, C, D checked against mblin linearize at %d random values of every symbol: within %g\n", cm,
                chk->compared, MBL_SYMLIN_VERIFY_TOL);
    else
        fprintf(f, "%s A, B, C, D checked against mblin linearize at the model's parameters: within %g\n", cm,
                MBL_SYMLIN_VERIFY_TOL);
    fprintf(f, "%s point:", cm);
    for (int i = 0; i < sl->n; i++) {
        fprintf(f, "%s %s = ", i ? "," : "", sl->qname[i]);
        print_expr(f, sl->g, sl->qpoint[i], 0);
    }
    for (int i = sl->n; i < sl->nq; i++) fprintf(f, ", %s = %s", sl->qname[i], sl->qname[i]);
    if (sl->moving || sl->nq > sl->n) {
        fprintf(f, "\n%s at the point:", cm);
        for (int i = 0; i < sl->nq || i < sl->n; i++) fprintf(f, "%s %s = %.10g", i ? "," : "", sl->qname[i], sl->qval[i]);
        for (int i = 0; sl->moving && i < sl->n; i++) fprintf(f, ", der(%s) = %.10g", sl->qname[i], sl->vval[i]);
    }
    fprintf(f, "\n%s states:", cm);
    for (int i = 0; i < sl->nx; i++) fprintf(f, " %s", sl->state_names[i]);
    fputc('\n', f);
    for (int k = 0; k < nm; k++) {
        if (!mats[k].rows || !mats[k].cols) continue;
        if (fmt == 0) {
            fprintf(f, "\n%s (%d x %d):\n", titles[k], mats[k].rows, mats[k].cols);
            for (int i = 0; i < mats[k].rows; i++) {
                fprintf(f, "  [");
                for (int j = 0; j < mats[k].cols; j++) {
                    fprintf(f, "%s", j ? ", " : "");
                    print_expr(f, sl->g, mats[k].v[i + (size_t)j * mats[k].rows], 0);
                }
                fprintf(f, "]\n");
            }
        } else {
            fprintf(f, "\n%s = \\begin{bmatrix}\n", texnames[k]);
            for (int i = 0; i < mats[k].rows; i++) {
                fprintf(f, "  ");
                for (int j = 0; j < mats[k].cols; j++) {
                    fprintf(f, "%s", j ? " & " : "");
                    print_expr(f, sl->g, mats[k].v[i + (size_t)j * mats[k].rows], 1);
                }
                fprintf(f, "%s\n", i + 1 < mats[k].rows ? " \\\\" : "");
            }
            fprintf(f, "\\end{bmatrix}\n");
        }
    }
}

/* symbolic's own options as the parser found them */
typedef struct symbolic_opts {
    const char *params, *format, *point;
    double max_nodes, max_graph;
} symbolic_opts;

static void symbolic_usage(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "symbolic", "MODEL [--params p1,p2 | all] [--format text|latex|json] [OPTIONS]");
    fputs(symbolic_help, stdout);
    cli_user_code_help(stdout, 22);
}

/* symbolic's own options (cli_spec.option) */
static int symbolic_option(void *ud, const char *a, const char *v)
{
    symbolic_opts *o = ud;
    if (!strcmp(a, "--params")) o->params = v;
    else if (!strcmp(a, "--format")) o->format = v;
    else if (!strcmp(a, "--point")) {
        if (strcmp(v, "symbols") && strcmp(v, "closed"))
            return cli_usage("symbolic", "--point must be symbols or closed, got '%s'", v);
        o->point = v;
    }
    else if (!strcmp(a, "--max-nodes"))
        return cg_count("symbolic", "--max-nodes expects a positive count", v, &o->max_graph);
    else {
        char *end = NULL;
        o->max_nodes = strtod(v, &end);
        if (!*v || *end || !(o->max_nodes >= 1 && o->max_nodes < 1e12))
            return cli_usage("symbolic", "--max-size expects a positive count, got '%s'", v);
    }
    return -1;
}

static const cli_option symbolic_own[] = {{"--params", 1}, {"--format", 1}, {"--max-size", 1}, {"--point", 1},
                                           {"--max-nodes", 1}, {NULL, 0}};

int cli_cmd_symbolic(int argc, char **argv)
{
    static cli_args c;
    symbolic_opts o = {"all", "text", "closed", 100000, 2000000};
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_AT | CLI_OPT_OUTPUTS, symbolic_own, NULL, symbolic_option, symbolic_usage, &o};
    int r = cli_parse(&spec, &c, argc, argv);
    if (r >= 0) return r;
    const char *params = o.params, *format = o.format, *point = o.point;
    const double max_nodes = o.max_nodes;
    if (!c.model) return cli_usage("symbolic", "missing MODEL%s", "");
    int fmt = !strcmp(format, "text") ? 0 : !strcmp(format, "latex") ? 1 : !strcmp(format, "json") ? 2 : -1;
    if (fmt < 0) return cli_usage("symbolic", "--format must be text, latex or json, got '%s'", format);
    /* the parameter list */
    char *plist = strdup(params);
    const char *keep[CLI_MAX_SETS];
    int nkeep = 0, keep_all = !strcmp(params, "all");
    if (!plist) return 1;
    if (!keep_all)
        for (char *tok = strtok(plist, ","); tok; tok = strtok(NULL, ",")) {
            if (nkeep == CLI_MAX_SETS) {
                free(plist);
                return cli_usage("symbolic", "too many parameters in --params%s", "");
            }
            keep[nkeep++] = tok;
        }
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    mbl_status st = {0};
    mbl_opoint_options po;
    cli_opoint_options(&c, &po);
    int rc = 0, closed = 0;
    /* refused up front (issue 30, item 17) when the estimated nodes exceed SYMBOLIC_NODES_PER_TERM
     * times --max-size: the printed terms are at least about as many as the distinct nodes */
    double glim = fmin(o.max_graph, SYMBOLIC_NODES_PER_TERM * max_nodes);
    size_t graph_limit = (size_t)glim;
    mbl_load_options lo;
    cli_load_options(&c, &lo);
    if (mbl_model_load_file_opt(c.model, c.sets, c.nsets, &lo, &md, &st) || mbl_operating_point(md, &po, &pt, &st)) {
        rc = cli_fail(&st);
        goto out;
    }
    /* A, B, C, D against the numeric linearization at random values of every symbol (issue 30,
     * item 5); a closed-form point that disagrees is dropped (the coordinates then stand for the
     * point's values) and the model checked again */
    mbl_symlin_check chk = {0};
    for (int pass = 0; pass < 2; pass++) {
        int psym = pass || !strcmp(point, "symbols");
        mbl_symlin_free(sl);
        sl = NULL;
        if (mbl_symlin_new(md, pt, graph_limit, &sl, &st) ||
            mbl_symlin_special2(sl, keep, nkeep, keep_all, psym, &closed, &st)) {
            cg_error(st.msg, graph_limit < o.max_graph ? "--max-size" : "--max-nodes");
            rc = st.code == MBL_EARG ? 2 : 1; /* --params naming no parameter: a usage error */
            goto out;
        }
        if (pass)
            snprintf(sl->note, sizeof sl->note, "%s",
                     "the closed form found for the point disagreed with mblin linearize at a random parameter "
                     "set: the coordinates stand for the point's values");
        double size = mbl_symlin_print_size(sl);
        if (size > max_nodes) {
            fprintf(stderr,
                    "mblin: the symbolic linear model of %s would print %.3g terms (%zu distinct expression nodes; "
                    "limit %.0f, --max-size): too large to print; mblin codegen writes its code\n",
                    c.model, size, mbl_symlin_size(sl), max_nodes);
            rc = 1;
            goto out;
        }
        if (!mbl_symlin_verify(sl, c.model, c.sets, c.nsets, &po, 0, &chk, &st)) break;
        if (pass || !closed) {
            fprintf(stderr, "mblin: %s\n", st.msg);
            rc = 1;
            goto out;
        }
    }
    symmat mats[] = {{"H", sl->H, sl->n, sl->z}, {"M", sl->M, sl->z, sl->z}, {"C_hat", sl->Cd, sl->z, sl->z},
                     {"K", sl->K, sl->z, sl->z}, {"F", sl->F, sl->z, sl->nr}, {"A", sl->A, sl->nx, sl->nx},
                     {"B", sl->B, sl->nx, sl->nr}, {"C", sl->C, sl->ny, sl->nx}, {"D", sl->D, sl->ny, sl->nr}};
    int nm = (int)(sizeof mats / sizeof *mats);
    FILE *f = stdout;
    if (fmt == 2) print_json(f, c.model, sl, mats, nm, &chk, closed);
    else print_text(f, fmt, c.model, sl, mats, nm, &chk);
out:
    free(plist);
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}
