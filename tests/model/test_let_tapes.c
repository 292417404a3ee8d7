/* The compiled forms of text models with variables (src/model/formulate_let.c): the residual
 * and Jacobian tapes compile rows formed with the variables as let nodes and the Lagrange
 * equations through the kinetic energy's body velocities; md->F and md->jac keep the inlined
 * form. Both must give the same values: at random points (every symbol, parameters included, drawn
 * at random) the tapes agree with tapes compiled from the inlined rows and Jacobian entries, which
 * are the former path, to rounding; and the bicycle's tapes are as short as measured
 * (docs/benchmarks.md "Jacobian through named variables"). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "test.h"

/* largest |x_i - y_i| / (1 + max_i |y_i|) over n values */
static double maxdiff(int n, const double *x, const double *y)
{
    double d = 0, s = 1;
    for (int i = 0; i < n; i++) s = fmax(s, fabs(y[i]));
    for (int i = 0; i < n; i++) d = fmax(d, fabs(x[i] - y[i]));
    return d / s;
}

static void same_values(const char *file, int want_let, size_t max_jac)
{
    mbl_status st;
    mbl_model *md = NULL;
    CHECK_MSG(mbl_model_load_file(file, NULL, 0, &md, &st) == 0, "%s: %s", file, st.msg);
    if (!md) return;
    CHECK_MSG((md->Fc != NULL) == want_let, "%s: compiled form through lets %d", file, md->Fc != NULL);
    mblx_tape *tf = mblx_compile(md->g, (size_t)md->nF, md->F, &st);
    mblx_tape *tj = mblx_compile(md->g, (size_t)md->jac.nz, md->jac.node, &st);
    CHECK(tf && tj);
    size_t ns = mblx_symbol_count(md->g), nw = md->work_size;
    if (tf && mblx_tape_work_size(tf) > nw) nw = mblx_tape_work_size(tf);
    if (tj && mblx_tape_work_size(tj) > nw) nw = mblx_tape_work_size(tj);
    double *sv = calloc(ns + 1, sizeof *sv), *w = calloc(nw + 1, sizeof *w);
    double *F1 = calloc((size_t)md->nF, sizeof *F1), *F2 = calloc((size_t)md->nF, sizeof *F2);
    double *J1 = calloc((size_t)md->jac.nz + 1, sizeof *J1), *J2 = calloc((size_t)md->jac.nz + 1, sizeof *J2);
    srand(15);
    double worst_f = 0, worst_j = 0;
    for (int trial = 0; trial < 20 && tf && tj; trial++) {
        for (size_t s = 0; s < ns; s++) sv[s] = 0.05 + 0.3 * rand() / (double)RAND_MAX;
        CHECK_EQ_INT(mblx_tape_eval(md->tape_F, sv, F1, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(tf, sv, F2, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(md->tape_jac, sv, J1, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(tj, sv, J2, w, &st), 0);
        worst_f = fmax(worst_f, maxdiff(md->nF, F1, F2));
        worst_j = fmax(worst_j, maxdiff(md->jac.nz, J1, J2));
    }
    CHECK_MSG(worst_f < 1e-13, "%s: residual tape vs inlined rows: %.3g", file, worst_f);
    CHECK_MSG(worst_j < 1e-13, "%s: Jacobian tape vs inlined entries: %.3g", file, worst_j);
    size_t nj = mblx_tape_ninstr(md->tape_jac);
    CHECK_MSG(nj <= max_jac, "%s: Jacobian tape %zu instructions (at most %zu)", file, nj, max_jac);
    printf("%s: Jacobian tape %zu (inlined %zu), residual %zu (inlined %zu); differences %.2g, %.2g\n", file, nj,
           tj ? mblx_tape_ninstr(tj) : 0, mblx_tape_ninstr(md->tape_F), tf ? mblx_tape_ninstr(tf) : 0, worst_f,
           worst_j);
    free(sv), free(w), free(F1), free(F2), free(J1), free(J2);
    mblx_tape_free(tf);
    mblx_tape_free(tj);
    mbl_model_free(md);
}

TEST(bicycle)
{
    /* 24,242 inlined (48,629 without any sharing); 11,815 measured through the lets */
    same_values("examples/whipple_bicycle_nonlinear.yaml", 1, 12000);
}

TEST(other_text_models)
{
    same_values("examples/rolling_disc_speeds.yaml", 1, 300);        /* 494 inlined */
    same_values("examples/flexible_pendulum_np5.yaml", 1, 3100);     /* 3,428 inlined */
    same_values("examples/fourbar_N5_damped.yaml", 0, 585);          /* no variable in T: inlined */
    same_values("examples/mech/spatial_fourbar.yaml", 0, 1558);      /* mechanisms: inlined */
    same_values("examples/double_pendulum_natural.yaml", 0, 90);     /* no variables */
}

/* A chain of n unit masses on springs whose kinetic energy uses a variable (w = der(x1) +
 * der(x2)), written to a temporary file. */
static void chain_file(int n, char *path, size_t size)
{
    int fd = test_tmp_template(path, size, "mblin_let_chain") ? -1 : mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "model: dae\nname: chain of %d\nparameters:\n  k: 3\ncoordinates:\n", n);
    for (int i = 1; i <= n; i++) fprintf(f, "  x%d: %g\n", i, 0.001 * i);
    fprintf(f, "variables:\n  w: \"der(x1) + der(x2)\"\nkinetic_energy: \"w^2/4");
    for (int i = 1; i <= n; i++) fprintf(f, " + der(x%d)^2/2", i);
    fprintf(f, "\"\npotential_energy: \"k/2*x1^2");
    for (int i = 2; i <= n; i++) fprintf(f, " + k/2*(x%d - x%d)^2", i, i - 1);
    fprintf(f, "\"\n");
    fclose(f);
}

TEST(large_models_inlined)
{
    /* below 2000 coordinates the tapes compile the let form, from 2000 on the inlined rows
     * (formulate_let.c, LET_FORM_MAX_N); the values agree either way */
    char path[4096];
    chain_file(1999, path, sizeof path);
    same_values(path, 1, 20000);
    remove(path);
    chain_file(2000, path, sizeof path);
    same_values(path, 0, 20000);
    remove(path);
}

int main(void)
{
    RUN(bicycle);
    RUN(other_text_models);
    RUN(large_models_inlined);
    return test_summary("let_tapes");
}
