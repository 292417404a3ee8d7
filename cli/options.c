/* The one option parser of every command (cli/cli.h): getopt_long over the command's options,
 * the common ones (--set, --guess, --at, --json, --method, -o, --help) handled here and each of the
 * command's own handed to it. --opt VALUE and --opt=VALUE are the same; -- ends the options (what
 * follows is MODEL even when it starts with '-'); an option is recognized only by its whole name
 * (getopt_long's abbreviations are refused as unknown). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { VAL_HELP = 1000, VAL_USER_CODE = 1001, VAL_PROGRESS = 1010, VAL_SET, VAL_GUESS, VAL_AT, VAL_JSON, VAL_METHOD, VAL_SETVEL, VAL_OUTPUTS, VAL_TARGET, VAL_OWN = 1100,
       MAX_LONG = 64 };

static const struct {
    const char *name;
    unsigned bit;
    int has_arg, val;
} common_opts[] = {
    {"set", CLI_OPT_SET, required_argument, VAL_SET},         {"guess", CLI_OPT_GUESS, required_argument, VAL_GUESS},
    {"at", CLI_OPT_AT, required_argument, VAL_AT},            {"json", CLI_OPT_JSON, no_argument, VAL_JSON},
    {"method", CLI_OPT_METHOD, required_argument, VAL_METHOD},
    {"set-velocity", CLI_OPT_GUESS, required_argument, VAL_SETVEL},
    {"target", CLI_OPT_GUESS, required_argument, VAL_TARGET},
    {"outputs", CLI_OPT_OUTPUTS, required_argument, VAL_OUTPUTS},
};
enum { NCOMMON = sizeof common_opts / sizeof common_opts[0] };

/* getopt_long's table of the command: --help, the common options it takes, its own. */
static int long_options(const cli_spec *spec, struct option *lo)
{
    int n = 0;
    lo[n++] = (struct option){"help", no_argument, NULL, VAL_HELP};
    lo[n++] = (struct option){"progress", no_argument, NULL, VAL_PROGRESS}; /* every command: cli/progress.c */
    lo[n++] = (struct option){"allow-user-code", no_argument, NULL, VAL_USER_CODE}; /* every command */
    for (int i = 0; i < NCOMMON; i++)
        if (spec->common & common_opts[i].bit)
            lo[n++] = (struct option){common_opts[i].name, common_opts[i].has_arg, NULL, common_opts[i].val};
    for (int i = 0; spec->own && spec->own[i].name && n < MAX_LONG; i++)
        lo[n++] = (struct option){spec->own[i].name + 2, spec->own[i].has_value ? required_argument : no_argument, NULL,
                                  VAL_OWN + i};
    lo[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

/* Is --NAME (the len bytes at name, without the dashes) in the table by its whole name? */
static int whole_name(const struct option *lo, const char *name, size_t len)
{
    for (int i = 0; lo[i].name; i++)
        if (strlen(lo[i].name) == len && !strncmp(lo[i].name, name, len)) return 1;
    return 0;
}

/* An option the command does not take: another command's (spec->foreign) or none at all. */
static int not_taken(const cli_spec *spec, const char *cmd, const char *text, size_t namelen)
{
    char name[64], key[72];
    snprintf(name, sizeof name, "%.*s", (int)(namelen < sizeof name ? namelen : sizeof name - 1), text);
    snprintf(key, sizeof key, " %s ", name);
    if (spec->foreign && namelen < sizeof name && strstr(spec->foreign, key)) {
        char why[128];
        snprintf(why, sizeof why, "option '%.40s' does not apply to '%s'", name, cmd);
        return cli_usage(cmd, "%s", why);
    }
    return cli_usage(cmd, "unknown option '%s'", text);
}

/* --outputs a,b: the names (no empty one) into a->outputs */
static int outputs_option(cli_args *a, const char *v)
{
    if (strlen(v) >= sizeof a->outputs_text) return cli_usage(a->cmd, "--outputs: the list is too long%s", "");
    memcpy(a->outputs_text, v, strlen(v) + 1);
    a->has_outputs = 1, a->noutputs = 0;
    for (char *p = a->outputs_text;;) {
        char *e = strchr(p, ',');
        if (e) *e = '\0';
        if (!*p) return cli_usage(a->cmd, "--outputs expects names separated by commas, got '%s'", v);
        if (a->noutputs == CLI_MAX_SETS) return cli_usage(a->cmd, "--outputs: too many names%s", "");
        a->outputs[a->noutputs++] = p;
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

void cli_load_options(const cli_args *a, mbl_load_options *lo)
{
    mbl_load_options_default(lo);
    lo->allow_user_code = a->allow_user_code;
    if (!a->has_outputs) return;
    lo->outputs = a->outputs;
    lo->noutputs = a->noutputs;
}

/* the one text of --allow-user-code (docs/cli.md, docs/user-routines.md) */
void cli_user_code_help(FILE *f, int column)
{
    cli_option_line(f, "--allow-user-code", "let the model load and run the shared libraries its file names under "
                    "routines: (user code: refused without this option; docs/user-routines.md)", column);
}

static int positional(cli_args *a, const char *arg)
{
    if (a->model) return cli_usage(a->cmd, "unexpected argument '%s'", arg);
    a->model = arg;
    return -1;
}

/* A common option's value (or the command's own option); -1 to go on, else the exit status. */
static int take(const cli_spec *spec, cli_args *a, int val, const char *v)
{
    switch (val) {
    case VAL_SET:
        return cli_setting(a->cmd, "--set", v, strlen(v), a->sets, a->set_names, &a->nsets, CLI_MAX_SETS);
    case VAL_GUESS:
        return cli_setting(a->cmd, "--guess", v, strlen(v), a->guesses, a->guess_names, &a->nguess, CLI_MAX_SETS);
    case VAL_SETVEL:
        return cli_setting(a->cmd, "--set-velocity", v, strlen(v), a->vels, a->vel_names, &a->nvel, CLI_MAX_SETS);
    case VAL_TARGET:
        return cli_setting(a->cmd, "--target", v, strlen(v), a->targets, a->target_names, &a->ntarget, CLI_MAX_SETS);
    case VAL_AT:
        if (strcmp(v, "equilibrium") && strcmp(v, "given") && strcmp(v, "steady") && strcmp(v, "trim"))
            return cli_usage(a->cmd, "--at must be equilibrium, given, steady or trim, not '%s'", v);
        a->at = v;
        return -1;
    case VAL_JSON:
        a->json = 1;
        return -1;
    case VAL_PROGRESS:
        cli_progress_lines();
        return -1;
    case VAL_USER_CODE:
        a->allow_user_code = 1;
        return -1;
    case VAL_METHOD:
        a->method = v;
        return -1;
    case VAL_OUTPUTS:
        return outputs_option(a, v);
    case 'o':
        a->out = v;
        return -1;
    default: {
        const cli_option *o = &spec->own[val - VAL_OWN];
        return spec->option(spec->ud, o->name, o->has_value ? v : NULL);
    }
    }
}

int cli_parse(const cli_spec *spec, cli_args *a, int argc, char **argv)
{
    /* the fields, not the whole struct: its name buffers (270 KB, static in the commands) are
     * written before they are read, and zeroing them touched 66 pages of every run */
    a->model = a->method = a->out = a->at = NULL;
    a->json = a->nsets = a->nguess = a->nvel = a->ntarget = a->has_outputs = a->noutputs = a->allow_user_code = 0;
    a->cmd = argv[1];
    struct option lo[MAX_LONG + 8];
    long_options(spec, lo);
    /* argv[1] (the command) stands where getopt expects the program's name; "-" first: MODEL is
     * returned in its place among the options (as value 1), ":": a missing value is told apart */
    int n = argc - 1;
    char **args = argv + 1;
    const char *shortopts = spec->common & CLI_OPT_OUT ? "-:ho:" : "-:h";
    optind = 0;
    opterr = 0;
    for (;;) {
        int cur = optind ? optind : 1;
        int rc = getopt_long(n, args, shortopts, lo, NULL);
        if (rc == -1) break;
        int r = -1;
        if (rc == 1) {
            r = positional(a, optarg);
        } else {
            const char *text = args[cur];
            int islong = text[0] == '-' && text[1] == '-';
            size_t namelen = islong ? strcspn(text, "=") : strlen(text);
            if (islong && !whole_name(lo, text + 2, namelen - 2)) return not_taken(spec, a->cmd, text, namelen);
            if (rc == '?' && islong) {
                char m[128];
                snprintf(m, sizeof m, "option '%.*s' takes no value", (int)(namelen < 60 ? namelen : 60), text);
                return cli_usage(a->cmd, "%s", m);
            }
            if (rc == '?') return not_taken(spec, a->cmd, text, namelen);
            if (rc == ':') {
                char m[128];
                snprintf(m, sizeof m, "%.*s needs a value", (int)(islong ? (namelen < 60 ? namelen : 60) : 2),
                         islong ? text : "-o");
                return cli_usage(a->cmd, "%s", m);
            }
            if (rc == 'h' || rc == VAL_HELP) {
                spec->help(spec->ud);
                return 0;
            }
            r = take(spec, a, rc, optarg);
        }
        if (r >= 0) return r;
    }
    for (int i = optind; i < n; i++) { /* after -- */
        int r = positional(a, args[i]);
        if (r >= 0) return r;
    }
    return -1;
}

void cli_opoint_options(const cli_args *a, mbl_opoint_options *po)
{
    mbl_opoint_options_default(po);
    if (a->at) {
        if (!strcmp(a->at, "equilibrium")) po->at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(a->at, "given")) po->at = MBL_AT_GIVEN;
        else if (!strcmp(a->at, "steady")) po->at = MBL_AT_STEADY;
        else if (!strcmp(a->at, "trim")) po->at = MBL_AT_TRIM;
    }
    po->targets = a->targets;
    po->ntargets = a->ntarget;
    po->guess = a->guesses;
    po->nguess = a->nguess;
    po->velocities = a->vels;
    po->nvelocities = a->nvel;
}

int cli_check_guesses(const cli_args *a, const mbl_model *model)
{
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    for (int g = 0; g < a->nguess; g++) {
        int i = 0;
        while (i < info.ncoord && strcmp(mbl_model_coord_name(model, i), a->guesses[g].name)) i++;
        if (i == info.ncoord) return cli_usage(a->cmd, "--guess: the model has no coordinate named '%s'", a->guesses[g].name);
    }
    for (int g = 0; g < a->nvel; g++)
        if (!mbl_model_velocity_find(model, a->vels[g].name))
            return cli_usage(a->cmd,
                             "--set-velocity: the model has no coordinate or key of velocities named '%s' (write a "
                             "coordinate, der(coordinate), or add the key, e.g. JV(joint), to the file's velocities)",
                             a->vels[g].name);
    for (int g = 0; g < a->ntarget; g++)
        if (!mbl_model_trim_target_find(model, a->targets[g].name))
            return cli_usage(a->cmd, "--target: the model has no trim target keyed '%s' (write a key of the file's "
                             "trim.targets as written)", a->targets[g].name);
    return 0;
}
