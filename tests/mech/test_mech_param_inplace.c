/* Mechanism parameters changed in place (mbl_model_set_param: sweeps' fast path) against a fresh
 * load with the same value (--set). A mechanism evaluates some parameters into numbers when it
 * reads the file (geometry, initial positions and velocities, assembly, other parameters' values):
 * those must be refused in place, and every other one must give, in place, the eigenvalues of the
 * fresh load. Every model of examples/mech and examples/vehicle, every parameter, a 0.1 % change (more takes some inertias out of the triangle inequality). A
 * parameter wrongly allowed in place keeps its old number somewhere and fails here. */
#include <complex.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

#define MAXEIG 4096

/* eigenvalues at the model's own point (its linearize.at), sorted by (re, im) rounded; n or -1 */
static int eigs(mbl_model *md, double complex *ev)
{
    mbl_status st;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    int n = -1;
    if (!mbl_operating_point(md, NULL, &pt, &st) && !mbl_linearize(md, pt, NULL, &lin, &st) &&
        !mbl_modal(lin, NULL, &modes, &st) && modes->nx <= MAXEIG) {
        n = modes->nx;
        for (int i = 0; i < n; i++) ev[i] = modes->modes[i].re + I * modes->modes[i].im;
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return n;
}

/* the largest distance from an eigenvalue of a to the nearest of b, relative to max |b|, 1 */
static double spectra_distance(const double complex *a, const double complex *b, int n)
{
    double big = 1, worst = 0;
    for (int i = 0; i < n; i++) big = fmax(big, cabs(b[i]));
    for (int i = 0; i < n; i++) {
        double d = INFINITY;
        for (int j = 0; j < n; j++) d = fmin(d, cabs(a[i] - b[j]));
        worst = fmax(worst, d / big);
    }
    return worst;
}

static int nin_place, nrefused, nskipped;

static void one_model(const char *path)
{
    mbl_status st;
    mbl_model *md = NULL;
    if (mbl_model_load_file(path, NULL, 0, &md, &st)) return; /* not a mechanism file (checked elsewhere) */
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    static double complex e_in[MAXEIG], e_fresh[MAXEIG];
    for (int p = 0; p < info.nparam; p++) {
        double v0 = mbl_model_param_value(md, p), v1 = v0 != 0 ? 1.001 * v0 : 0.001;
        const char *name = mbl_model_param_name(md, p);
        mbl_model *a = NULL, *b = NULL;
        mbl_setting set = {name, v1};
        int rb = mbl_model_load_file(path, &set, 1, &b, &st);
        if (rb && strstr(st.msg, "triangle inequality")) { /* an inertia at its limit: the other way */
            set.value = v1 = v0 != 0 ? 0.999 * v0 : -0.001;
            rb = mbl_model_load_file(path, &set, 1, &b, &st);
        }
        if (rb && strstr(st.msg, "triangle inequality")) { /* both ways out: not a value to change */
            nskipped++;
        } else if (rb || mbl_model_load_file(path, NULL, 0, &a, &st)) {
            CHECK_MSG(0, "%s: %s", path, st.msg);
        } else if (mbl_model_set_param(a, p, v1, &st)) {
            nrefused++;
            CHECK_MSG(strstr(st.msg, "cannot be changed in place") != NULL, "%s: %s", path, st.msg);
        } else {
            nin_place++;
            int na = eigs(a, e_in), nb = eigs(b, e_fresh);
            if (na >= 0 || nb >= 0) {
                CHECK_MSG(na == nb, "%s, parameter %s: %d eigenvalues in place, %d fresh", path, name, na, nb);
                if (na == nb && na > 0) {
                    double d = spectra_distance(e_in, e_fresh, na);
                    CHECK_MSG(d <= 1e-9, "%s, parameter %s = %g in place: eigenvalues %.2e from the fresh load's",
                              path, name, v1, d);
                }
            }
        }
        mbl_model_free(a);
        mbl_model_free(b);
    }
    mbl_model_free(md);
}

static void folder(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return;
    struct dirent *de;
    char path[1024];
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        char head[4096] = "";
        size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
        if (f) fclose(f);
        head[got] = '\0';
        if (!strstr(head, "model: mechanism")) continue;
        one_model(path);
    }
    closedir(d);
}

TEST(mechanism_parameters_in_place)
{
    folder("examples/mech");
    folder("examples/vehicle");
    printf("  %d parameters changed in place, %d refused, %d skipped\n", nin_place, nrefused, nskipped);
    CHECK(nin_place >= 10 && nrefused >= 10);
}

int main(void)
{
    RUN(mechanism_parameters_in_place);
    return test_summary("mech_param_inplace");
}
