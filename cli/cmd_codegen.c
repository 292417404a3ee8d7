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

#include "mblin/codegen.h"
#include "mblin/mblin.h"

#define CG_MAX_SETS 256

int mblin_cmd_codegen(int argc, char **argv);


static int cg_usage(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "mblin: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see mblin %s --help)\n", cmd);
    return 2;
}

typedef struct cg_common {
    mbl_setting sets[CG_MAX_SETS];
    char names[CG_MAX_SETS][256];
    int nsets;
    const char *model, *at;
} cg_common;

/* --set and --at, and the model; 1 when the option was consumed (with its value), 0 not ours,
 * negative: usage error already reported (-exit code) */
static int cg_common_opt(cg_common *c, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--set") || !strcmp(a, "--at")) {
        if (*i + 1 >= argc) return -cg_usage(cmd, "%s needs a value", a);
        const char *v = argv[++*i];
        if (!strcmp(a, "--at")) {
            c->at = v;
            return 1;
        }
        if (c->nsets >= CG_MAX_SETS) return -cg_usage(cmd, "too many --set options%s", "");
        const char *eq = strchr(v, '=');
        char *end = NULL;
        if (!eq || eq == v || (size_t)(eq - v) >= sizeof c->names[0])
            return -cg_usage(cmd, "--set expects NAME=VALUE, got '%s'", v);
        errno = 0;
        double x = strtod(eq + 1, &end);
        if (!eq[1] || *end || errno || !isfinite(x)) return -cg_usage(cmd, "--set: '%s' is not NAME=NUMBER", v);
        memcpy(c->names[c->nsets], v, (size_t)(eq - v));
        c->names[c->nsets][eq - v] = '\0';
        c->sets[c->nsets].name = c->names[c->nsets];
        c->sets[c->nsets].value = x;
        c->nsets++;
        return 1;
    }
    if (a[0] == '-' && a[1]) return 0;
    if (c->model) return -cg_usage(cmd, "unexpected argument '%s'", a);
    c->model = a;
    return 1;
}

/* load, operating point, symbolic model */
static int cg_build(const cg_common *c, mbl_model **md, mbl_symlin **sl)
{
    mbl_status st = {0};
    mbl_point *pt = NULL;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    if (c->at) {
        if (!strcmp(c->at, "equilibrium")) po.at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(c->at, "given")) po.at = MBL_AT_GIVEN;
        else if (!strcmp(c->at, "steady")) po.at = MBL_AT_STEADY;
        else {
            fprintf(stderr, "mblin: --at must be equilibrium, given or steady, got '%s'\n", c->at);
            return 2;
        }
    }
    if (mbl_model_load_file(c->model, c->sets, c->nsets, md, &st) || mbl_operating_point(*md, &po, &pt, &st) ||
        mbl_symlin_new(*md, pt, 0, sl, &st)) {
        fprintf(stderr, "mblin: %s\n", st.msg);
        mbl_point_free(pt);
        return 1;
    }
    mbl_point_free(pt);
    return 0;
}

static const char codegen_help[] =
    "usage: mblin codegen MODEL --lang c|python|octave [options]\n"
    "  Straight-line code of the linear model (A, B, C, D; M-hat, C-hat, K-hat, F) as a function of\n"
    "  the parameters p, the operating point's coordinates q (at rest) and the inputs r\n"
    "  (docs/symbolic.md). C needs only <math.h>; Python NumPy.\n"
    "  --lang L            c, python or octave (required)\n"
    "  --name NAME         name of the function (default: linear_model)\n"
    "  -o FILE             write to FILE (default: stdout)\n"
    "  --set NAME=VALUE    override a parameter (repeatable)\n"
    "  --at KIND           equilibrium | given (the point must be at rest)\n";

int mblin_cmd_codegen(int argc, char **argv)
{
    cg_common c;
    memset(&c, 0, sizeof c);
    const char *lang = NULL, *name = "linear_model", *outfile = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(codegen_help, stdout);
            return 0;
        }
        int r = cg_common_opt(&c, "codegen", argc, argv, &i);
        if (r < 0) return -r;
        if (r) continue;
        if (!strcmp(a, "--lang") || !strcmp(a, "--name") || !strcmp(a, "-o")) {
            if (i + 1 >= argc) return cg_usage("codegen", "%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--lang")) lang = v;
            else if (!strcmp(a, "--name")) name = v;
            else outfile = v;
            continue;
        }
        return cg_usage("codegen", "unknown option '%s'", a);
    }
    if (!c.model) return cg_usage("codegen", "missing MODEL%s", "");
    if (!lang) return cg_usage("codegen", "missing --lang c|python|octave%s", "");
    mbl_lang L;
    if (!strcmp(lang, "c")) L = MBL_LANG_C;
    else if (!strcmp(lang, "python")) L = MBL_LANG_PYTHON;
    else if (!strcmp(lang, "octave")) L = MBL_LANG_OCTAVE;
    else return cg_usage("codegen", "--lang must be c, python or octave, got '%s'", lang);
    if (!(isalpha((unsigned char)name[0]) || name[0] == '_')) return cg_usage("codegen", "--name '%s' is not an identifier", name);
    for (const char *s = name; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return cg_usage("codegen", "--name '%s' is not an identifier", name);
    mbl_model *md = NULL;
    mbl_symlin *sl = NULL;
    int rc = cg_build(&c, &md, &sl);
    if (rc) {
        mbl_model_free(md);
        return rc;
    }
    FILE *f = outfile ? fopen(outfile, "w") : stdout;
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
