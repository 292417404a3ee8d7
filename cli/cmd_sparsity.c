/* mblin sparsity: a thin client of include/mblin/sparsity.h (docs/cli.md, "sparsity";
 * docs/linearization.md, "Sparsity and fill-in").
 *
 *   mblin sparsity MODEL [--method NAME] [--svg DIR] [--json] [--set p=value ...] [--guess q=value ...] [--at KIND]
 *
 * Without --method every method that has matrices of its own (projection, descriptor, penalty,
 * augmented); one that refuses the point is a line saying why, and the exit status is 1 only when
 * all refused. Exit status 0 on success, 1 when the model or the computation fails, 2 for a usage
 * error. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mblin/mblin.h"

typedef struct cli {
    cli_args a;
    const char *svg;
} cli;

static void help(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "sparsity", "MODEL [OPTIONS]");
    printf("\nThe matrices each linearization method builds at the operating point (source 001 Sec. 5.3, Fig. 5):\n"
           "order, structural nonzeros and the nonzeros of their factors as KLU or CHOLMOD report them under the\n"
           "ordering used (the fill-in); docs/linearization.md, \"Sparsity and fill-in\"\n\n"
           "options:\n"
           "  --method NAME          projection (M_r), descriptor (M_q and its pencil), penalty (M_p, Q_p(s)) or\n"
           "                         augmented (the augmented matrix, its kinematic system); default: all four\n"
           "  --svg DIR              one spy plot per matrix, DIR/METHOD_MATRIX.svg (DIR made when missing)\n"
           "  --set NAME=VALUE       override a parameter (repeatable)\n"
           "  --guess NAME=VALUE     initial value of a coordinate for the operating point (repeatable)\n"
           "  --at KIND              operating point: equilibrium, given, steady or trim (default: the file's)\n"
           "  --json                 one JSON object {schema_version, model, methods: [...]}\n");
    cli_user_code_help(stdout, 25);
}

static int option(void *ud, const char *a, const char *v)
{
    cli *c = ud;
    if (!strcmp(a, "--svg")) c->svg = v;
    return -1;
}

static const cli_option own[] = {{"--svg", 1}, {NULL, 0}};

/* DIR/METHOD_NAME.svg, the matrix's name with every character but letters, digits and '_' made '_'
 * (Q_p(s) -> Q_p_s); 0, or 1 after a message */
static int write_svg(const char *dir, const char *method, const mbl_sparse_matrix *a)
{
    char name[sizeof a->name], path[4096];
    size_t l = 0;
    for (const char *p = a->name; *p && l + 1 < sizeof name; p++)
        name[l++] = isalnum((unsigned char)*p) || *p == '_' ? *p : '_';
    while (l > 0 && name[l - 1] == '_') l--;
    name[l] = 0;
    int len = snprintf(path, sizeof path, "%s/%s_%s.svg", dir, method, name);
    if (len < 0 || len >= (int)sizeof path) {
        fprintf(stderr, "mblin: %.200s...: the output path is too long\n", dir);
        return 1;
    }
    FILE *f = cli_output_file(path);
    if (!f) {
        fprintf(stderr, "mblin: %s: cannot write the plot (%s)\n", path, strerror(errno));
        return 1;
    }
    int bad = mbl_sparsity_svg(f, a) != 0;
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "mblin: %s: cannot write the plot (%s)\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* the results of the methods asked for: a table, or a refusal's message */
#define MAX_METHODS 8
typedef struct results {
    int n, ok;
    const char *method[MAX_METHODS];
    mbl_sparsity *s[MAX_METHODS];
    char why[MAX_METHODS][MBL_MSG_MAX];
} results;

static void print_results(const cli *c, const results *r)
{
    if (c->a.json) {
        printf("{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
        mbl_json_string(stdout, c->a.model);
        fputs(", \"methods\": [", stdout);
    }
    for (int i = 0; i < r->n; i++) {
        if (c->a.json && i) fputs(", ", stdout);
        if (r->s[i]) {
            mbl_report_sparsity(stdout, r->s[i], c->a.json);
            if (!c->a.json) putchar('\n');
        } else if (c->a.json) {
            fputs("{\"method\": ", stdout);
            mbl_json_string(stdout, r->method[i]);
            fputs(", \"refused\": ", stdout);
            mbl_json_string(stdout, r->why[i]);
            fputs("}", stdout);
        } else {
            printf("method %s: refused: %s\n\n", r->method[i], r->why[i]);
        }
    }
    if (c->a.json) fputs("]}\n", stdout);
}

/* --method's or (without it) every method's matrices, printed, and their plots; the exit status */
static int run(const cli *c, const mbl_model *md, const mbl_point *pt)
{
    results r;
    memset(&r, 0, sizeof r);
    int code = 0, nm = c->a.method ? 1 : mbl_sparsity_method_count();
    for (int i = 0; i < nm && i < MAX_METHODS; i++) {
        mbl_status st = {0};
        mbl_lin_options lo;
        mbl_lin_options_default(&lo);
        lo.method = r.method[i] = c->a.method ? c->a.method : mbl_sparsity_method_name(i);
        r.n++;
        if (mbl_sparsity_compute(md, pt, &lo, &r.s[i], &st) == 0) r.ok++;
        else if (c->a.method) code = cli_fail(&st); /* the one method asked for: its error alone */
        else snprintf(r.why[i], sizeof r.why[i], "%s", st.msg);
    }
    if (!code && c->svg && cli_mkdirs(c->svg) != 0) {
        fprintf(stderr, "mblin: %s: cannot create the directory of the plots (%s)\n", c->svg, strerror(errno));
        code = 1;
    }
    for (int i = 0; !code && c->svg && i < r.n; i++)
        for (int j = 0; r.s[i] && j < r.s[i]->nmat && !code; j++) code = write_svg(c->svg, r.method[i], &r.s[i]->mat[j]);
    if (!code) print_results(c, &r);
    if (!code && !r.ok) {
        fflush(stdout);
        fprintf(stderr, "mblin: %s: sparsity: every method refused this point (the table says why)\n", c->a.model);
        code = 1;
    }
    for (int i = 0; i < r.n; i++) mbl_sparsity_free(r.s[i]);
    return code;
}

int cli_cmd_sparsity(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_JSON | CLI_OPT_METHOD, own, NULL, option, help,
                     &c};
    int rc = cli_parse(&spec, &c.a, argc, argv);
    if (rc >= 0) return rc;
    if (!c.a.model) return cli_usage("sparsity", "%s", "sparsity needs a model file");
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_load_options lo;
    cli_load_options(&c.a, &lo);
    rc = mbl_model_load_file_opt(c.a.model, c.a.sets, c.a.nsets, &lo, &md, &st);
    if (!rc) rc = cli_check_guesses(&c.a, md) ? MBL_EARG : 0;
    if (rc == MBL_EARG && !st.code) {
        mbl_model_free(md);
        return 2;
    }
    if (!rc) {
        mbl_opoint_options po;
        cli_opoint_options(&c.a, &po);
        rc = mbl_operating_point(md, &po, &pt, &st);
    }
    int code = rc ? cli_fail(&st) : run(&c, md, pt);
    mbl_point_free(pt);
    mbl_model_free(md);
    return code;
}
