/* Forward-mode Jacobians of models' residual tapes (issue 31, item 2; issue 34, item 5): on the
 * equation-level four-bar (N = 5), the nonlinear Whipple bicycle (rows through let nodes), a
 * model with step() and functions of data, and a spatial mechanism, the values mblx_fwdjac gets
 * from md->tape_F alone equal, at random points (every symbol drawn), those of the symbolic
 * Jacobian of the same rows compiled to a tape (mblx_jacobian), to 1e-13 of each row's largest
 * entry; the symbolic pattern is a subset of the structural one, whose extra entries are zeros
 * that cancel; and the model's own Jacobian tape (md->tape_jac, which the linearization reads)
 * agrees the same way. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "test.h"

static const char STEP_DATA[] =
    "model: dae\n"
    "name: step and data\n"
    "parameters: {m: 2, c: 0.5, k: 3}\n"
    "coordinates: {x: 0.1, y: 0.2}\n"
    "kinetic_energy: m*der(x)^2/2 + m*der(y)^2/2 + x*y*der(x)*der(y)/4\n"
    "forces:\n"
    "  x: -spline(spring, x) - c*table(damp, der(x)) - step(x, 0, 0, 1, k*y)\n"
    "  y: -spline2(map, x, y) - step(der(y), -1, c, 1, -c)*y + spline(spring, x*y)\n"
    "data:\n"
    "  spring: {method: cubic, x: [-1, -0.5, 0, 0.5, 1], y: [-100, -40, 0, 50, 100], extrapolate: linear}\n"
    "  damp: {method: linear, extrapolate: linear, x: [-1, 0, 1], y: [-3, 0.5, 3]}\n"
    "  map: {method: bicubic, x: [0, 0.5, 1], y: [0, 0.5, 1], z: [[0, 1, 2], [1, 2, 3], [2, 3, 5]]}\n";

/* The largest |entry| of each row of a matrix given by column (vals of cp/ri, ncol columns). */
static void row_max(int ncol, const int *cp, const int *ri, const double *v, double *rmax)
{
    for (int j = 0; j < ncol; j++)
        for (int p = cp[j]; p < cp[j + 1]; p++) rmax[ri[p]] = fmax(rmax[ri[p]], fabs(v[p]));
}

/* Position of (row, col) in the forward pattern, -1 if none. */
static int find(const int *cp, const int *ri, int r, int c)
{
    for (int p = cp[c]; p < cp[c + 1]; p++)
        if (ri[p] == r) return p;
    return -1;
}

static void same_jacobian(const char *file, int want_let, int max_colors)
{
    mbl_status st;
    mbl_model *md = NULL;
    CHECK_MSG(mbl_model_load_file(file, NULL, 0, &md, &st) == 0, "%s: %s", file, st.msg);
    if (!md) return;
    CHECK_MSG((md->Fc != NULL) == want_let, "%s: rows through lets %d", file, md->Fc != NULL);
    const mblx_id *rows = md->Fc ? md->Fc : md->F;
    int m = md->nF, nu = md->nunk;
    mblx_id *syms = malloc((size_t)nu * sizeof *syms);
    for (int j = 0; j < nu; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    mblx_fwdjac *J = mblx_fwdjac_new(md->g, (size_t)m, rows, (size_t)nu, syms, &st);
    CHECK_MSG(J != NULL, "%s: %s", file, st.msg);
    mblx_sparse S;
    CHECK_EQ_INT(mblx_jacobian(md->g, (size_t)m, rows, (size_t)nu, syms, &S), 0);
    mblx_tape *ts = mblx_compile(md->g, (size_t)S.colptr[nu], S.node, &st);
    CHECK(J && ts);
    const int *cp = NULL, *ri = NULL;
    size_t nnz = mblx_fwdjac_pattern(J, &cp, &ri);
    int ncol = (int)mblx_fwdjac_ncolors(J), extra = 0;
    CHECK_MSG(ncol <= max_colors, "%s: %d colors (at most %d)", file, ncol, max_colors);
    /* the symbolic pattern within the structural one */
    int *pos = malloc(((size_t)S.colptr[nu] + 1) * sizeof *pos);
    for (int j = 0; j < nu && J; j++)
        for (int p = S.colptr[j]; p < S.colptr[j + 1]; p++) {
            pos[p] = find(cp, ri, S.rowidx[p], j);
            CHECK_MSG(pos[p] >= 0, "%s: symbolic entry (%d, %d) outside the forward pattern", file, S.rowidx[p], j);
        }
    if (J) extra = (int)nnz - S.colptr[nu];
    size_t ns = mblx_symbol_count(md->g), nw = md->work_size;
    if (J && mblx_fwdjac_work_size(J, md->tape_F) > nw) nw = mblx_fwdjac_work_size(J, md->tape_F);
    if (ts && mblx_tape_work_size(ts) > nw) nw = mblx_tape_work_size(ts);
    double *sv = calloc(ns + 1, sizeof *sv), *w = calloc(nw + 1, sizeof *w), *fv = calloc(nnz + 1, sizeof *fv);
    double *sj = calloc((size_t)S.colptr[nu] + 1, sizeof *sj), *mj = calloc((size_t)md->jac.nz + 1, sizeof *mj);
    double *rmax = calloc((size_t)m, sizeof *rmax), *F1 = calloc((size_t)m, sizeof *F1), *F2 = calloc((size_t)m, sizeof *F2);
    unsigned seed = 31;
    double worst = 0, worst_extra = 0, worst_md = 0;
    for (int trial = 0; trial < 10 && J && ts; trial++) {
        for (size_t s = 0; s < ns; s++) sv[s] = 0.2 + 0.15 * test_urand(&seed);
        CHECK_EQ_INT(mblx_fwdjac_eval(J, md->tape_F, sv, fv, F1, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(md->tape_F, sv, F2, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(ts, sv, sj, w, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(md->tape_jac, sv, mj, w, &st), 0);
        CHECK_MSG(memcmp(F1, F2, (size_t)m * sizeof *F1) == 0, "%s: the residual values differ", file);
        memset(rmax, 0, (size_t)m * sizeof *rmax);
        row_max(nu, cp, ri, fv, rmax);
        char *hit = calloc(nnz + 1, 1);
        for (int j = 0; j < nu; j++)
            for (int p = S.colptr[j]; p < S.colptr[j + 1]; p++) {
                int r = S.rowidx[p];
                worst = fmax(worst, fabs(fv[pos[p]] - sj[p]) / fmax(rmax[r], 1e-300));
                hit[pos[p]] = 1;
            }
        for (int j = 0; j < nu; j++) /* entries that cancel symbolically: zeros to rounding */
            for (int p = cp[j]; p < cp[j + 1]; p++)
                if (!hit[p]) worst_extra = fmax(worst_extra, fabs(fv[p]) / fmax(rmax[ri[p]], 1e-300));
        for (int p = 0; p < md->jac_ntape; p++) { /* the model's Jacobian tape */
            int r = md->jac.row[p], q = r < m ? find(cp, ri, r, md->jac.col[p]) : -2;
            if (q == -2) continue;
            double v = q >= 0 ? fv[q] : 0.0;
            worst_md = fmax(worst_md, fabs(v - mj[p]) / fmax(rmax[r], 1e-300));
        }
        free(hit);
    }
    CHECK_MSG(worst <= 1e-13, "%s: forward against symbolic: %.3g of the row's largest entry", file, worst);
    CHECK_MSG(worst_extra <= 1e-13, "%s: entries that cancel: %.3g", file, worst_extra);
    CHECK_MSG(worst_md <= 1e-13, "%s: forward against md->tape_jac: %.3g", file, worst_md);
    printf("%s: %d rows, %d columns, %zu entries (%d that cancel), %d colors; differences %.2g, %.2g, %.2g\n", file,
           m, nu, nnz, extra, ncol, worst, worst_extra, worst_md);
    free(sv), free(w), free(fv), free(sj), free(mj), free(rmax), free(F1), free(F2), free(pos), free(syms);
    mblx_sparse_free(&S);
    mblx_tape_free(ts);
    mblx_fwdjac_free(J);
    mbl_model_free(md);
}

TEST(fourbar)
{
    same_jacobian("examples/fourbar_N5.yaml", 0, 12);
}

TEST(bicycle)
{
    same_jacobian("examples/whipple_bicycle_nonlinear.yaml", 1, 40);
}

TEST(mechanism)
{
    same_jacobian("examples/mech/spatial_fourbar.yaml", 0, 40);
}

TEST(step_and_data)
{
    char path[256];
    CHECK(test_tmp_template(path, sizeof path, "fwd_step_data_") == 0);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs(STEP_DATA, f);
    fclose(f);
    same_jacobian(path, 0, 12);
    unlink(path);
}

int main(void)
{
    RUN(fourbar);
    RUN(bicycle);
    RUN(mechanism);
    RUN(step_and_data);
    return test_summary("expr_fwd_models");
}
