/* Studies on the model they are given (issue 66, item 4; docs/study.md, "Studies on the model
 * given"): a model loaded from a string, which has no file, is swept and its boundary found, the
 * copies made from its text (mbl_model_copy). Closed forms of a spring-mass-damper m x'' + c x' +
 * k x = 0: the eigenvalues -c/(2m) +- i sqrt(k/m - (c/2m)^2).
 *   sweep_string      the sweep over k, fast path (two threads) and reload path (force_reload):
 *                     the frequency sqrt(k/m)/(2 pi) at every point; the base setting m = 2 over the
 *                     text's m = 1 carried into the copies (before: "<smd>: cannot open the model
 *                     file (No such file or directory)")
 *   boundary_string   the boundary of c: the real part -c/(2m) crosses zero at c = 0, with
 *                     eigenvalue i sqrt(k/m) there (before: the same refusal)
 *   copy              mbl_model_copy: the settings over the model's, independent of the original
 *                     (freed first), the name kept; a copy of the copy
 *   set_in_place      a parameter changed in place (mbl_model_set_param, k = 400 -> 100) is carried
 *                     into the copies: a copy's |s| = sqrt(100/m) (a setting over it wins:
 *                     sqrt(900/m)), a sweep over m on both paths and the boundary of c with
 *                     eigenvalue i sqrt(100) (before: the copies took the text's k = 400)
 *   data_relative     a model from a string named "model.yaml" in a directory, its table
 *                     "stiff.csv" beside it: swept after the working directory changed (the copies
 *                     find the table where the load did: k from the table), and refused naming the
 *                     table once it is deleted */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "test.h"

#define TWO_PI 6.283185307179586

static const char SMD[] = "model: dae\n"
                          "name: spring-mass-damper\n"
                          "parameters: {m: 1, k: 400, c: 0.5}\n"
                          "coordinates: {x: 0}\n"
                          "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                          "potential_energy: \"0.5*k*x^2\"\n"
                          "dissipation: \"0.5*c*der(x)^2\"\n"
                          "linearize: {at: equilibrium}\n";

static mbl_model *load_smd(const mbl_setting *sets, int nsets)
{
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    if (mbl_model_load_string(SMD, strlen(SMD), "<smd>", sets, nsets, &md, &st)) fprintf(stderr, "%s\n", st.msg);
    return md;
}

/* the largest frequency of point p (the one pair of the model) */
static double top_freq(const mbl_sweep *sw, int p)
{
    double f = 0;
    for (int b = 0; b < sw->nmodes; b++)
        if (sw->freq_hz[(size_t)p * sw->nmodes + b] > f) f = sw->freq_hz[(size_t)p * sw->nmodes + b];
    return f;
}

static void sweep_k(const mbl_model *md, int force_reload, int threads)
{
    mbl_setting base[1] = {{"m", 2.0}};
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0].name = "k", so.axis[0].from = 100, so.axis[0].to = 400, so.axis[0].count = 4;
    so.sets = base, so.nsets = 1;
    so.force_reload = force_reload;
    so.threads = threads;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_sweep *sw = NULL;
    int rc = mbl_sweep_run(md, &so, &sw, &st);
    CHECK_MSG(rc == 0, "sweep: %s", st.msg);
    if (rc) return;
    CHECK_EQ_INT(sw->npoints, 4);
    CHECK_EQ_INT(sw->fast, !force_reload);
    CHECK_EQ_INT(sw->nfailed, 0);
    for (int p = 0; p < sw->npoints; p++) {
        double k = sw->value[p], m = 2.0;
        CHECK_REL(top_freq(sw, p), sqrt(k / m) / TWO_PI, 1e-10); /* |s| = sqrt(k/m) */
    }
    CHECK(!strcmp(sw->model_name, "<smd>"));
    mbl_sweep_free(sw);
}

TEST(sweep_string)
{
    mbl_setting base[1] = {{"m", 2.0}};
    mbl_model *md = load_smd(base, 1);
    CHECK(md != NULL);
    if (!md) return;
    sweep_k(md, 0, 2);
    sweep_k(md, 1, 1);
    mbl_model_free(md);
}

TEST(boundary_string)
{
    mbl_model *md = load_smd(NULL, 0);
    CHECK(md != NULL);
    if (!md) return;
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    bo.from = -1, bo.to = 1;
    mbl_boundary_result r;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mbl_boundary(md, NULL, 0, "c", 0.5, &bo, &r, &st);
    CHECK_MSG(rc == 0, "boundary: %s", st.msg);
    if (!rc) {
        CHECK_CLOSE(r.value, 0.0, 1e-9);          /* Re s = -c/(2m) = 0 */
        CHECK_CLOSE(r.re, 0.0, 1e-8);
        CHECK_REL(fabs(r.im), sqrt(400.0), 1e-9); /* s = i sqrt(k/m) */
        CHECK_EQ_INT(r.divergence, 0);
        CHECK_CLOSE(r.slope, -0.5, 1e-6);         /* d Re s / dc = -1/(2m) */
    }
    mbl_model_free(md);
}

/* the largest |s| of a model's modes at its operating point, -1 on failure */
static double top_abs(const mbl_model *md)
{
    mbl_status st;
    mbl_status_clear(&st);
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *mo = NULL;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &mo, &st);
    CHECK_MSG(rc == 0, "modes: %s", st.msg);
    double f = rc ? -1 : 0;
    for (int j = 0; !rc && j < mo->nx; j++) f = fmax(f, hypot(mo->modes[j].re, mo->modes[j].im));
    mbl_modes_free(mo);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return f;
}

TEST(copy)
{
    mbl_setting base[1] = {{"k", 900.0}};
    mbl_model *md = load_smd(base, 1), *cp = NULL, *cp2 = NULL;
    CHECK(md != NULL);
    if (!md) return;
    mbl_setting more[1] = {{"m", 4.0}};
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mbl_model_copy(md, more, 1, &cp, &st);
    CHECK_MSG(rc == 0, "copy: %s", st.msg);
    mbl_model_free(md); /* the copy does not need the original */
    if (rc) return;
    mbl_model_info info;
    mbl_model_get_info(cp, &info);
    CHECK(!strcmp(info.file, "<smd>"));
    CHECK(!strcmp(info.name, "spring-mass-damper"));
    for (int i = 0; i < info.nparam; i++) {
        const char *n = mbl_model_param_name(cp, i);
        double v = mbl_model_param_value(cp, i);
        if (!strcmp(n, "k")) CHECK_CLOSE(v, 900.0, 0); /* the original's setting */
        if (!strcmp(n, "m")) CHECK_CLOSE(v, 4.0, 0);   /* this copy's */
        if (!strcmp(n, "c")) CHECK_CLOSE(v, 0.5, 0);   /* the text's */
    }
    /* a copy of the copy: the settings so far, then k = 100 over them */
    mbl_setting k100[1] = {{"k", 100.0}};
    rc = mbl_model_copy(cp, k100, 1, &cp2, &st);
    CHECK_MSG(rc == 0, "copy 2: %s", st.msg);
    if (!rc) CHECK_REL(top_abs(cp2), sqrt(100.0 / 4.0), 1e-10);
    mbl_model_free(cp2);
    mbl_model_free(cp);
    /* bad arguments */
    CHECK(mbl_model_copy(NULL, NULL, 0, &cp, &st) == MBL_EARG);
    CHECK(mbl_model_copy(NULL, NULL, 0, NULL, &st) == MBL_EARG);
}

TEST(set_in_place)
{
    mbl_model *md = load_smd(NULL, 0), *cp = NULL;
    CHECK(md != NULL);
    if (!md) return;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int ik = -1;
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), "k")) ik = i;
    CHECK(ik >= 0);
    mbl_status st;
    mbl_status_clear(&st);
    CHECK(ik >= 0 && mbl_model_set_param(md, ik, 100.0, &st) == 0);
    CHECK_REL(top_abs(md), 10.0, 1e-10); /* the model itself: sqrt(100/1) */
    int rc = mbl_model_copy(md, NULL, 0, &cp, &st);
    CHECK_MSG(rc == 0, "copy: %s", st.msg);
    if (!rc) CHECK_REL(top_abs(cp), 10.0, 1e-10); /* the value set in place, not the text's 400 */
    mbl_model_free(cp), cp = NULL;
    mbl_setting k900[1] = {{"k", 900.0}};
    rc = mbl_model_copy(md, k900, 1, &cp, &st);
    CHECK_MSG(rc == 0, "copy k = 900: %s", st.msg);
    if (!rc) CHECK_REL(top_abs(cp), 30.0, 1e-10); /* a setting over the value set in place */
    mbl_model_free(cp);
    for (int reload = 0; reload < 2; reload++) {
        mbl_sweep_options so;
        mbl_sweep_options_default(&so);
        so.naxes = 1;
        so.axis[0].name = "m", so.axis[0].from = 1, so.axis[0].to = 4, so.axis[0].count = 4;
        so.force_reload = reload;
        mbl_sweep *sw = NULL;
        rc = mbl_sweep_run(md, &so, &sw, &st);
        CHECK_MSG(rc == 0, "sweep: %s", st.msg);
        if (rc) continue;
        CHECK_EQ_INT(sw->nfailed, 0);
        for (int p = 0; p < sw->npoints; p++)
            CHECK_REL(top_freq(sw, p), sqrt(100.0 / sw->value[p]) / TWO_PI, 1e-10);
        mbl_sweep_free(sw);
    }
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    bo.from = -1, bo.to = 1;
    mbl_boundary_result r;
    rc = mbl_boundary(md, NULL, 0, "c", 0.5, &bo, &r, &st);
    CHECK_MSG(rc == 0, "boundary: %s", st.msg);
    if (!rc) {
        CHECK_CLOSE(r.value, 0.0, 1e-9);
        CHECK_REL(fabs(r.im), 10.0, 1e-9); /* s = i sqrt(k/m), k as set in place */
    }
    mbl_model_free(md);
}

/* n bytes into dir/name */
static int write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static const char DATA_MODEL[] = "model: dae\n"
                                 "parameters: {m: 2, s: 0.5}\n"
                                 "data:\n"
                                 "  stiff: {method: linear, file: stiff.csv}\n"
                                 "coordinates: {x: 0}\n"
                                 "kinetic_energy: \"0.5*m*der(x)^2\"\n"
                                 "potential_energy: \"0.5*table(stiff, s)*x^2\"\n"
                                 "linearize: {at: equilibrium}\n";

static int sweep_s(const mbl_model *md, int force_reload, mbl_status *st, double *f)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0].name = "s", so.axis[0].from = 0.25, so.axis[0].to = 0.75, so.axis[0].count = 3;
    so.force_reload = force_reload;
    mbl_sweep *sw = NULL;
    mbl_status_clear(st);
    int rc = mbl_sweep_run(md, &so, &sw, st);
    for (int p = 0; !rc && p < 3; p++) f[p] = sw->ok[p] ? top_freq(sw, p) : NAN;
    mbl_sweep_free(sw);
    return rc;
}

TEST(data_relative)
{
    char dir[PATH_MAX], here[PATH_MAX];
    if (test_tmp_template(dir, sizeof dir, "mblin_study_copy_") || !mkdtemp(dir) || !getcwd(here, sizeof here)) {
        CHECK_MSG(0, "%s", "no temporary directory");
        return;
    }
    CHECK(write_file(dir, "stiff.csv", "0,100\n1,900\n") == 0); /* k = 100 + 800 s */
    CHECK(chdir(dir) == 0);
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    int rc = mbl_model_load_string(DATA_MODEL, strlen(DATA_MODEL), "model.yaml", NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "load: %s", st.msg);
    CHECK(chdir("/") == 0); /* model.yaml and stiff.csv are not here */
    for (int reload = 0; !rc && reload < 2; reload++) {
        double f[3] = {0, 0, 0};
        int r = sweep_s(md, reload, &st, f);
        CHECK_MSG(r == 0, "sweep (reload %d): %s", reload, st.msg);
        for (int p = 0; !r && p < 3; p++) {
            double s = 0.25 + 0.25 * p, k = 100 + 800 * s;
            CHECK_REL(f[p], sqrt(k / 2.0) / TWO_PI, 1e-10);
        }
    }
    /* the table gone: the copies cannot be made, and say which file they miss */
    char csv[PATH_MAX + 16];
    snprintf(csv, sizeof csv, "%s/stiff.csv", dir);
    CHECK(remove(csv) == 0);
    if (!rc) {
        double f[3];
        int r = sweep_s(md, 1, &st, f);
        CHECK(r != 0);
        CHECK_MSG(strstr(st.msg, csv) != NULL, "message without the table's path: %s", st.msg);
    }
    mbl_model_free(md);
    CHECK(chdir(here) == 0);
    rmdir(dir);
}

int main(void)
{
    RUN(sweep_string);
    RUN(boundary_string);
    RUN(copy);
    RUN(set_in_place);
    RUN(data_relative);
    return test_summary("study_copy");
}
