/* mblin floquet: a thin client of include/mblin/floquet.h (docs/floquet.md).
 *
 *   mblin floquet MODEL (--period T | --param OMEGA) [--shoot] [--samples N] [--rtol R] [--atol A]
 *                       [--max-steps N] [--stab-tol S] [--period-tol P] [--matrices]
 *                       [--set p=value ...] [--guess q=value ...] [--at KIND] [--json]
 *
 * Exit status 0 on success, 1 when the model or the computation fails, 2 for a usage error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/floquet.h"
#include "mblin/mblin.h"

#define TWO_PI 6.283185307179586476925286766559
/* --mbc: A_NR's largest relative variation over the azimuths up to this is rounding, the rotor
 * isotropic (7e-16 measured on Coleman's rotor, tests/study/mbc_test.py; one blade 4 % stiffer gives
 * 1.2e-3, four times stiffer 0.093); above it the averaged A_NR is an approximation (docs/floquet.md) */
#define MBC_VARIATION_TOL 1e-8
#define MBC_VARIATION_TOL_S "1e-8"

typedef struct cli {
    cli_args a;
    const char *param, *mbc;
    double psi0;
    int has_period, shoot, samples, matrices, settle;
    double period, rtol, atol, max_steps, stab_tol, period_tol;
} cli;

static void help(void *ud)
{
    (void)ud;
    cli_help_head(stdout, "floquet", "MODEL (--period T | --param OMEGA) [OPTIONS]");
    printf("\nFloquet analysis of the time-periodic linear model along a periodic orbit: the monodromy matrix of\n"
           "the variational equations (the exact linear model at every time, integrated over one period by\n"
           "SUNDIALS CVODE), the Floquet multipliers and exponents, the periodic mode shapes; docs/floquet.md\n\n"
           "options:\n"
           "  --period T             the period (a number or a constant expression such as 2*pi/3)\n"
           "  --param OMEGA          the period 2 pi / OMEGA of a spin speed parameter (spin_speeds:)\n"
           "  --shoot                find the periodic orbit by shooting from the operating point (holonomic\n"
           "                         constraints at most; default: the operating point is the orbit, an\n"
           "                         equilibrium of the time-periodic model or a steady motion)\n"
           "  --settle N             with --shoot: first follow the motion over N periods (towards a stable\n"
           "                         orbit; default 0)\n"
           "  --samples N            the periodic mode shapes at N times over the period (default 1: at t0)\n"
           "  --rtol R, --atol A     CVODE's tolerances (default 1e-10, 1e-12)\n"
           "  --max-steps N          CVODE's steps allowed over one period (default 100000; an estimate\n"
           "                         above it is refused before integrating)\n"
           "  --stab-tol S           a spectral radius within S of 1 is marginal (default 1e-6)\n"
           "  --period-tol P         the model must repeat itself after T: A(t + T) against A(t) at a few\n"
           "                         times, an entry off by more than P of the largest refused (default 1e-6)\n"
           "  --mbc A1,A2,A3[;B1,B2,B3...]  also the multi-blade coordinate transform (MBC3) of the blades'\n"
           "                         coordinates (one group per degree of freedom, in blade order; blade 1 at\n"
           "                         azimuth --azimuth0 + 2 pi (t - t0) / T, blade b 2 pi (b - 1) / N ahead)\n"
           "  --azimuth0 PSI         blade 1's azimuth at t0 (rad, default 0)\n"
           "  --matrices             print the monodromy matrix (and A_NR with --mbc)\n"
           "  --set NAME=VALUE       override a parameter (repeatable)\n"
           "  --guess NAME=VALUE     initial value of a coordinate for the operating point (repeatable)\n"
           "  --at KIND              operating point: equilibrium, given, steady or trim (default: the file's)\n"
           "  --json                 one JSON object (docs/schema/floquet.json)\n");
    cli_user_code_help(stdout, 25);
}

static int option(void *ud, const char *a, const char *v)
{
    cli *c = ud;
    char why[256];
    double x = 0;
    if (!strcmp(a, "--shoot")) return c->shoot = 1, -1;
    if (!strcmp(a, "--matrices")) return c->matrices = 1, -1;
    if (!strcmp(a, "--param")) return c->param = v, -1;
    if (!strcmp(a, "--mbc")) return c->mbc = v, -1;
    if (!strcmp(a, "--azimuth0")) {
        if (cli_number(v, &c->psi0, why, sizeof why)) return cli_usage("floquet", "--azimuth0 expects a number (rad), got '%s'", v);
        return -1;
    }
    if (!strcmp(a, "--period")) {
        if (cli_number(v, &x, why, sizeof why) || !(x > 0))
            return cli_usage("floquet", "--period expects a positive number, got '%s'", v);
        return c->period = x, c->has_period = 1, -1;
    }
    int integer = !strcmp(a, "--samples") || !strcmp(a, "--max-steps") || !strcmp(a, "--settle");
    double most = !strcmp(a, "--max-steps") ? 1e15 : !strcmp(a, "--rtol") ? 1 : integer ? 10000 : INFINITY;
    if (cli_decimal(v, &x) || !(x > 0) || (integer && x != floor(x)) || !(x <= most) || (most == 1 && x == 1)) {
        char m[200];
        if (integer) snprintf(m, sizeof m, "%s expects an integer from 1 to %.0f, got '%.60s'", a, most, v);
        else if (most == 1) snprintf(m, sizeof m, "%s expects a number in (0, 1), got '%.60s'", a, v);
        else snprintf(m, sizeof m, "%s expects a positive number, got '%.60s'", a, v);
        return cli_usage("floquet", "%s", m);
    }
    if (!strcmp(a, "--samples")) c->samples = (int)x;
    else if (!strcmp(a, "--settle")) c->settle = (int)x;
    else if (!strcmp(a, "--max-steps")) c->max_steps = x;
    else if (!strcmp(a, "--rtol")) c->rtol = x;
    else if (!strcmp(a, "--atol")) c->atol = x;
    else if (!strcmp(a, "--period-tol")) c->period_tol = x;
    else c->stab_tol = x;
    return -1;
}

static const cli_option own[] = {{"--period", 1}, {"--param", 1},     {"--shoot", 0},    {"--samples", 1},
                                 {"--rtol", 1},   {"--atol", 1},      {"--max-steps", 1}, {"--stab-tol", 1},
                                 {"--matrices", 0}, {"--settle", 1}, {"--mbc", 1}, {"--azimuth0", 1},
                                 {"--period-tol", 1}, {NULL, 0}};

#define MBC_MAX 1024

/* --mbc "a1,a2,a3;b1,b2,b3": the blades' coordinates, one group per degree of freedom, blade order */
static int parse_mbc(const char *spec, const mbl_model *md, mbl_mbc_spec *sp, int *coord, mbl_status *st)
{
    mbl_model_info in;
    mbl_model_get_info(md, &in);
    int nc = 0, ndof = 1, nb = 0, inb = 0;
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",;");
        int found = -1;
        for (int i = 0; i < in.ncoord && found < 0; i++) {
            const char *name = mbl_model_coord_name(md, i);
            if (strlen(name) == len && !strncmp(name, p, len)) found = i;
        }
        if (found < 0)
            return mbl_error(st, MBL_EARG, "--mbc: the model has no coordinate '%.*s' (give the blades' coordinates as "
                                           "a1,a2,a3 or a1,a2,a3;b1,b2,b3)", (int)len, p);
        if (nc == MBC_MAX) return mbl_error(st, MBL_EARG, "--mbc: more than %d coordinates", MBC_MAX);
        coord[nc++] = found, inb++;
        p += len;
        if (*p != ',') {
            if (ndof == 1) nb = inb;
            else if (inb != nb) return mbl_error(st, MBL_EARG, "--mbc: every group names one coordinate per blade (%d, then %d)", nb, inb);
            if (!*p) break;
            ndof++, inb = 0;
        }
        p++;
    }
    if (nb < 3) return mbl_error(st, MBL_EARG, "--mbc: the multi-blade coordinate transform needs at least 3 blades (got %d)", nb);
    sp->nblades = nb, sp->ndof = ndof, sp->coord = coord;
    return 0;
}

/* the period of --param OMEGA: 1 / (OMEGA's value in revolutions per second) */
static int param_period(const cli *c, const mbl_model *md, double *T, mbl_status *st)
{
    mbl_model_info in;
    mbl_model_get_info(md, &in);
    for (int i = 0; i < in.nparam; i++) {
        if (strcmp(mbl_model_param_name(md, i), c->param)) continue;
        double rps = mbl_model_param_spin(md, i) * mbl_model_param_value(md, i);
        if (mbl_model_param_spin(md, i) == 0)
            return mbl_error(st, MBL_EARG, "--param %s: '%s' is not a spin speed (declare it under spin_speeds:, "
                                           "docs/model-files.md), or give --period", c->param, c->param);
        if (!(fabs(rps) > 0) || !isfinite(rps))
            return mbl_error(st, MBL_EARG, "--param %s: the spin speed is %g, no period", c->param, mbl_model_param_value(md, i));
        *T = 1.0 / fabs(rps);
        return 0;
    }
    return mbl_error(st, MBL_EARG, "--param: the model has no parameter '%s'", c->param);
}

static const char *stability_name(int s)
{
    return s == MBL_FLOQUET_UNSTABLE ? "unstable" : s == MBL_FLOQUET_MARGINAL ? "marginal" : "stable";
}

static void num(double x)
{
    mbl_json_number(stdout, x, 17, 1);
}

static void write_json(const mbl_model *md, const mbl_floquet *f)
{
    mbl_model_info in;
    mbl_model_get_info(md, &in);
    int nx = f->nx;
    printf("{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(stdout, in.name);
    printf(", \"t0\": "), num(f->t0), printf(", \"period\": "), num(f->period);
    printf(", \"frequency_ambiguity_hz\": "), num(1.0 / f->period);
    printf(", \"orbit\": {\"kind\": \"%s\", \"iterations\": %d, \"residual\": ", f->shot ? "shot" : "given", f->shoot_iterations);
    num(f->shoot_residual);
    printf(", \"q\": {");
    for (int i = 0; i < f->n; i++) printf("%s", i ? ", " : ""), mbl_json_string(stdout, mbl_model_coord_name(md, i)), printf(": "), num(f->q0[i]);
    printf("}, \"v\": {");
    for (int i = 0; i < f->n; i++) printf("%s", i ? ", " : ""), mbl_json_string(stdout, mbl_model_coord_name(md, i)), printf(": "), num(f->v0[i]);
    printf("}}, \"states\": [");
    for (int i = 0; i < nx; i++) printf("%s", i ? ", " : ""), mbl_json_string(stdout, f->state_names[i]);
    printf("], \"monodromy\": [");
    for (int i = 0; i < nx; i++) {
        printf("%s[", i ? ", " : "");
        for (int j = 0; j < nx; j++) printf("%s", j ? ", " : ""), num(f->monodromy[(size_t)j * nx + i]);
        printf("]");
    }
    printf("], \"spectral_radius\": "), num(f->spectral_radius);
    printf(", \"stability\": \"%s\", \"multipliers\": [", stability_name(f->stability));
    for (int k = 0; k < nx; k++) {
        printf("%s{\"re\": ", k ? ", " : ""), num(f->mult_re[k]), printf(", \"im\": "), num(f->mult_im[k]);
        printf(", \"abs\": "), num(f->mult_abs[k]), printf(", \"exponent_re\": "), num(f->exp_re[k]);
        printf(", \"exponent_im\": "), num(f->exp_im[k]), printf(", \"freq_hz\": "), num(f->exp_im[k] / TWO_PI);
        printf(", \"backward_error\": "), num(f->mult_berr[k]);
        printf("}");
    }
    printf("], \"shapes\": [");
    for (int j = 0; j < f->samples; j++) {
        printf("%s{\"t\": ", j ? ", " : ""), num(f->t0 + f->period * j / f->samples), printf(", \"modes\": [");
        for (int k = 0; k < nx; k++) {
            const double *sr = f->shape_re + ((size_t)j * nx + k) * nx, *si = f->shape_im + ((size_t)j * nx + k) * nx;
            printf("%s{\"re\": [", k ? ", " : "");
            for (int i = 0; i < nx; i++) printf("%s", i ? ", " : ""), num(sr[i]);
            printf("], \"im\": [");
            for (int i = 0; i < nx; i++) printf("%s", i ? ", " : ""), num(si[i]);
            printf("]}");
        }
        printf("]}");
    }
    printf("]");
    if (f->mbc) {
        const mbl_mbc *m = f->mbc;
        printf(", \"mbc\": {\"samples\": %d, \"variation\": ", m->samples), num(m->variation), printf(", \"states\": [");
        for (int i = 0; i < nx; i++) printf("%s", i ? ", " : ""), mbl_json_string(stdout, m->state_names[i]);
        printf("], \"A\": [");
        for (int i = 0; i < nx; i++) {
            printf("%s[", i ? ", " : "");
            for (int j = 0; j < nx; j++) printf("%s", j ? ", " : ""), num(m->A[(size_t)j * nx + i]);
            printf("]");
        }
        printf("], \"eigenvalues\": [");
        for (int i = 0; i < nx; i++) printf("%s{\"re\": ", i ? ", " : ""), num(m->re[i]), printf(", \"im\": "), num(m->im[i]), printf("}");
        printf("]}");
    }
    printf(", \"steps\": %ld, \"evaluations\": %ld, \"notes\": ", f->steps, f->rhs_evals);
    mbl_json_string(stdout, f->notes);
    printf("}\n");
}

static void write_text(const cli *c, const mbl_model *md, const mbl_floquet *f)
{
    int nx = f->nx;
    printf("Floquet analysis of %s: period T = %.10g (%.10g Hz), t0 = %.10g, %d states\n", c->a.model, f->period,
           1.0 / f->period, f->t0, nx);
    if (f->shot)
        printf("orbit: found by shooting in %d Newton iterations, max |x(t0 + T) - x(t0)| = %.3g\n", f->shoot_iterations,
               f->shoot_residual);
    else
        printf("orbit: the operating point (an equilibrium of the time-periodic model or a steady motion)\n");
    for (int i = 0; f->shot && i < f->n; i++)
        printf("  %-16s q = %-22.15g der = %.15g\n", mbl_model_coord_name(md, i), f->q0[i], f->v0[i]);
    printf("%s\n", f->notes);
    if (c->matrices) {
        printf("\nmonodromy matrix Phi(t0 + T) (states: ");
        for (int i = 0; i < nx; i++) printf("%s%s", i ? ", " : "", f->state_names[i]);
        printf(")\n");
        for (int i = 0; i < nx; i++) {
            for (int j = 0; j < nx; j++) printf(" %22.15e", f->monodromy[(size_t)j * nx + i]);
            printf("\n");
        }
    }
    printf("\n  #   multiplier re          im                    |mu|              exponent re          "
           "exponent im (rad/s)   freq (Hz)\n");
    for (int k = 0; k < nx; k++)
        printf("%3d  %-21.14g %-21.14g %-17.12g %-20.13g %-21.14g %.10g\n", k + 1, f->mult_re[k], f->mult_im[k],
               f->mult_abs[k], f->exp_re[k], f->exp_im[k], f->exp_im[k] / TWO_PI);
    printf("\nthe exponents' imaginary parts (frequencies) are defined modulo 2 pi / T = %.10g rad/s (%.10g Hz):\n"
           "the principal values in (-pi/T, pi/T] are shown; any multiple of 2 pi / T may be added\n",
           TWO_PI / f->period, 1.0 / f->period);
    printf("spectral radius %.12g: %s\n", f->spectral_radius, stability_name(f->stability));
    if (!f->mbc) return;
    const mbl_mbc *m = f->mbc;
    printf("\nmulti-blade coordinates (MBC3): A_NR = T^-1 (A T - T') averaged over %d azimuths; its largest relative\n"
           "variation over them %.3g: %s\n  states:", m->samples, m->variation,
           m->variation <= MBC_VARIATION_TOL
               ? "at most " MBC_VARIATION_TOL_S ", rounding: A_NR is time-invariant (an isotropic rotor), its\n"
                 "eigenvalues are the Floquet exponents modulo i Omega"
               : "above " MBC_VARIATION_TOL_S ": A_NR changes with the azimuth (the blades differ: an anisotropic\n"
                 "rotor); the averaged A_NR and its eigenvalues below are an approximation, the Floquet multipliers\n"
                 "above are the answer");
    for (int i = 0; i < nx; i++) printf(" %s", m->state_names[i]);
    printf("\n\n  #   eigenvalue re          im (rad/s)            freq (Hz)\n");
    for (int i = 0; i < nx; i++) printf("%3d  %-21.14g %-21.14g %.10g\n", i + 1, m->re[i], m->im[i], m->im[i] / TWO_PI);
    if (c->matrices) {
        printf("\nA_NR (averaged)\n");
        for (int i = 0; i < nx; i++) {
            for (int j = 0; j < nx; j++) printf(" %22.15e", m->A[(size_t)j * nx + i]);
            printf("\n");
        }
    }
}

int cli_cmd_floquet(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    cli_spec spec = {CLI_OPT_SET | CLI_OPT_GUESS | CLI_OPT_AT | CLI_OPT_JSON, own, NULL, option, help, &c};
    int rc = cli_parse(&spec, &c.a, argc, argv);
    if (rc >= 0) return rc;
    if (!c.a.model) return cli_usage("floquet", "%s", "floquet needs a model file");
    if (c.has_period == !!c.param) return cli_usage("floquet", "%s", "give one of --period T and --param OMEGA");
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_floquet *f = NULL;
    mbl_floquet_options fo;
    mbl_floquet_options_default(&fo);
    fo.period = c.period, fo.shoot = c.shoot, fo.settle = c.settle;
    if (c.settle && !c.shoot) return cli_usage("floquet", "%s", "--settle N goes with --shoot");
    if (c.samples) fo.samples = c.samples;
    if (c.rtol > 0) fo.rtol = c.rtol;
    if (c.atol > 0) fo.atol = c.atol;
    if (c.max_steps > 0) fo.max_steps = (long)c.max_steps;
    if (c.stab_tol > 0) fo.stab_tol = c.stab_tol;
    if (c.period_tol > 0) fo.period_tol = c.period_tol;
    mbl_load_options lo;
    cli_load_options(&c.a, &lo);
    rc = mbl_model_load_file_opt(c.a.model, c.a.sets, c.a.nsets, &lo, &md, &st);
    if (!rc) rc = cli_check_guesses(&c.a, md) ? MBL_EARG : 0;
    if (rc == MBL_EARG && !st.code) {
        mbl_model_free(md);
        return 2;
    }
    if (!rc && c.param) rc = param_period(&c, md, &fo.period, &st);
    if (!rc) {
        mbl_opoint_options po;
        cli_opoint_options(&c.a, &po);
        rc = mbl_operating_point(md, &po, &pt, &st);
    }
    mbl_mbc_spec sp = {0};
    int coord[MBC_MAX];
    if (!rc && c.mbc) {
        rc = parse_mbc(c.mbc, md, &sp, coord, &st);
        sp.psi0 = c.psi0, fo.mbc = &sp;
    }
    if (!rc) rc = mbl_floquet_run(md, pt, &fo, &f, &st);
    if (!rc) {
        if (c.a.json) write_json(md, f);
        else write_text(&c, md, f);
    }
    int code = rc ? cli_fail(&st) : 0;
    mbl_floquet_free(f);
    mbl_point_free(pt);
    mbl_model_free(md);
    return code;
}
