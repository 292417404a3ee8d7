/* Files for other tools: the linear model as Matrix Market arrays and an Octave/MATLAB script
 * (mbl_report_export), the velocity transformation and the flexible bodies' nodes and mode shapes
 * as Matrix Market arrays (mbl_report_export_vtrans, mbl_report_export_flex). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mblin/report.h"
#include "core/numfmt.h"
#include "report/titles.h"

/* dir/file into path (EXPORT_PATH_MAX bytes), or an error naming both when it does not fit (a
 * truncated name would write another file than the one meant). */
#define EXPORT_PATH_MAX 4096
static int export_path(char *path, const char *dir, const char *file, mbl_status *st)
{
    int len = snprintf(path, EXPORT_PATH_MAX, "%s/%s", dir, file);
    if (len < 0 || len >= EXPORT_PATH_MAX)
        return mbl_error(st, MBL_EIO, "%.200s.../%s: the output path is too long (%zu characters, at most %d)", dir,
                         file, strlen(dir) + strlen(file) + 1, EXPORT_PATH_MAX - 1);
    return 0;
}

/* A matrix is written in coordinate format (mbl_report_export_format, MBL_MTX_AUTO) when at most
 * this fraction of its entries are nonzero: "i j value" lines then take less room than the array's
 * one value per entry (a zero there is "0", two bytes; an entry of the coordinate list about 30),
 * and the file says what is structurally there. */
#define MTX_SPARSE_DENSITY 0.25

/* Matrix Market file dir/name.mtx of the column-major rows x cols A: as an array, or as a
 * coordinate list of its nonzeros (fmt MBL_MTX_COORDINATE, or MBL_MTX_AUTO when sparse) */
static int write_mtx(const char *dir, const char *name, const double *A, int rows, int cols, int fmt, mbl_status *st)
{
    char path[EXPORT_PATH_MAX], file[64];
    snprintf(file, sizeof file, "%s.mtx", name);
    int prc = export_path(path, dir, file, st);
    if (prc) return prc;
    size_t cells = (size_t)rows * (size_t)cols, nnz = 0;
    for (size_t i = 0; fmt != MBL_MTX_ARRAY && i < cells; i++) nnz += A[i] != 0.0;
    int coord = cells == 0 || fmt == MBL_MTX_COORDINATE || (fmt == MBL_MTX_AUTO && nnz <= MTX_SPARSE_DENSITY * cells);
    FILE *f = mbl_output_open(path, st);
    if (!f) return MBL_EIO;
    if (cells == 0) /* scipy.io.mmread rejects an empty array; 0 entries of a coordinate matrix are fine */
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% %s (empty), written by mblin\n%d %d 0\n", name,
                rows, cols);
    else if (coord)
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% %s, written by mblin\n%d %d %zu\n", name, rows,
                cols, nnz);
    else
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%% %s, written by mblin\n%d %d\n", name, rows, cols);
    for (size_t i = 0; i < cells; i++) { /* "%.17g\n", or "%d %d %.17g\n" (1-based) for a nonzero */
        if (coord && A[i] == 0.0) continue;
        if (coord) fprintf(f, "%zu %zu ", i % (size_t)rows + 1, i / (size_t)rows + 1);
        core_put_g(f, A[i], 17);
        putc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) return mbl_error(st, MBL_EIO, "%s: write error", path);
    return 0;
}

static void oct_mat(FILE *f, const char *name, const double *A, int rows, int cols)
{
    fprintf(f, "%s = zeros(%d, %d);\n", name, rows, cols);
    if (!rows || !cols) return;
    fprintf(f, "%s = [", name);
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) { /* "%s%.17g" */
            if (j) putc(' ', f);
            core_put_g(f, A[i + (size_t)j * rows], 17);
        }
        fputs(i + 1 < rows ? ";\n     " : "];\n", f);
    }
}

static void oct_names(FILE *f, const char *var, char *const *names, int n)
{
    fprintf(f, "%s = {", var);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", '" : "'", f);
        for (const char *c = names[i]; *c; c++) {
            if (*c == '\'') fputc('\'', f);
            fputc(*c, f);
        }
        fputc('\'', f);
    }
    fputs("};\n", f);
}

/* A partial-spectrum result: the eigenvalues (neig x 2: re, im), the coordinate parts of the
 * eigenvectors (n x neig, re and im), Bd and Cdd when formed, and linear_model.m saying what was
 * not formed. */
static int export_partial(const char *dir, const mbl_model *md, const mbl_linear *lin, int fmt, mbl_status *st)
{
    static const mbl_lin_spectrum none;
    const mbl_lin_spectrum *sp = lin->spectrum ? lin->spectrum : &none;
    const mbl_lin_descriptor *ds = lin->descriptor;
    int ne = sp->neig, n = lin->n, rc = 0;
    double *ev = mbl_calloc((size_t)ne * 2 + 1, sizeof *ev);
    if (!ev) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < ne; i++) ev[i] = sp->re[i], ev[ne + i] = sp->im[i];
    rc = write_mtx(dir, "eigenvalues", ev, ne, 2, MBL_MTX_ARRAY, st);
    if (!rc && ne) rc = write_mtx(dir, "shapes_re", sp->vre, n, ne, MBL_MTX_ARRAY, st);
    if (!rc && ne) rc = write_mtx(dir, "shapes_im", sp->vim, n, ne, MBL_MTX_ARRAY, st);
    if (!rc && ds && ds->Bd) rc = write_mtx(dir, "Bd", ds->Bd, ds->nd, lin->nu, fmt, st);
    if (!rc && ds && ds->Cdd) rc = write_mtx(dir, "Cdd", ds->Cdd, lin->ny, ds->nd, fmt, st);
    if (rc) {
        mbl_free(ev);
        return rc;
    }
    char path[EXPORT_PATH_MAX];
    int prc = export_path(path, dir, "linear_model.m", st);
    FILE *f = prc ? NULL : mbl_output_open(path, st);
    if (!f) {
        mbl_free(ev);
        return prc ? prc : MBL_EIO;
    }
    fprintf(f, "%% Linear model of %s (%s), method %s, written by mblin.\n", title_name(md),
            model_file(md), lin->method);
    fprintf(f, "%% A, B, C, D, M, Cd, K, F, q_S and the state names: " NOT_FORMED ".\n");
    fprintf(f, "%% eigenvalues: the %d nearest the shift %g of %d; shapes: their coordinate parts dq.\n", ne,
            sp->shift, lin->nx);
    if (sp->reason[0]) fprintf(f, "%% %s\n", sp->reason);
    oct_names(f, "input_names", lin->input_names, lin->nu);
    oct_names(f, "output_names", lin->output_names, lin->ny);
    oct_mat(f, "ev", ev, ne, 2);
    fprintf(f, "eigenvalues = complex(ev(:, 1), ev(:, 2));\n");
    if (ds && ds->Bd && ds->Cdd) {
        fprintf(f, "%% descriptor form E xd' = Ad xd + Bd u, y = Cdd xd, xd = [dq; dv; dlambda] (E, Ad sparse, not "
                   "written).\n");
        oct_mat(f, "Bd", ds->Bd, ds->nd, lin->nu);
        oct_mat(f, "Cdd", ds->Cdd, lin->ny, ds->nd);
    }
    mbl_free(ev);
    int bad = ferror(f);
    if (fclose(f) || bad) return mbl_error(st, MBL_EIO, "%s: write error", path);
    return 0;
}

/* Every file mbl_report_export may write; all are removed before a run writes its own, so that a
 * directory never mixes files of two runs (E.mtx of an earlier descriptor run, say). */
static const char *const export_names[] = {"A.mtx", "B.mtx", "C.mtx", "D.mtx", "M.mtx", "Cd.mtx", "K.mtx",
                                           "F.mtx", "E.mtx", "Ad.mtx", "Bd.mtx", "Cdd.mtx", "eigenvalues.mtx",
                                           "shapes_re.mtx", "shapes_im.mtx", "linear_model.m"};

static int remove_stale(const char *dir, mbl_status *st)
{
    for (size_t i = 0; i < sizeof export_names / sizeof *export_names; i++) {
        char path[EXPORT_PATH_MAX];
        int prc = export_path(path, dir, export_names[i], st);
        if (prc) return prc;
        if (remove(path) != 0 && errno != ENOENT)
            return mbl_error(st, MBL_EIO, "%s: cannot remove the file of an earlier run (%s)", path, strerror(errno));
    }
    return 0;
}

int mbl_report_export(const char *dir, const mbl_model *md, const mbl_linear *lin, mbl_status *st)
{
    return mbl_report_export_format(dir, md, lin, MBL_MTX_AUTO, st);
}

int mbl_report_export_format(const char *dir, const mbl_model *md, const mbl_linear *lin, int fmt, mbl_status *st)
{
    if (fmt != MBL_MTX_AUTO && fmt != MBL_MTX_ARRAY && fmt != MBL_MTX_COORDINATE)
        return mbl_error(st, MBL_EARG, "mbl_report_export_format: unknown Matrix Market format %d", fmt);
    int rc = remove_stale(dir, st);
    if (rc) return rc;
    if (!lin->A) return export_partial(dir, md, lin, fmt, st);
    rc = write_mtx(dir, "A", lin->A, lin->nx, lin->nx, fmt, st);
    if (!rc) rc = write_mtx(dir, "B", lin->B, lin->nx, lin->nu, fmt, st);
    if (!rc) rc = write_mtx(dir, "C", lin->C, lin->ny, lin->nx, fmt, st);
    if (!rc) rc = write_mtx(dir, "D", lin->D, lin->ny, lin->nu, fmt, st);
    if (!rc) rc = write_mtx(dir, "M", lin->M, lin->z1, lin->z1, fmt, st);
    if (!rc) rc = write_mtx(dir, "Cd", lin->Cd, lin->z1, lin->z1, fmt, st);
    if (!rc) rc = write_mtx(dir, "K", lin->K, lin->z1, lin->z0, fmt, st);
    if (!rc) rc = write_mtx(dir, "F", lin->F, lin->z1, lin->nu, fmt, st);
    const mbl_lin_descriptor *ds = lin->descriptor;
    int desc = ds && ds->nd > 0 && ds->E && ds->Ad; /* the descriptor pencil, where the method has one */
    if (!rc && desc) rc = write_mtx(dir, "E", ds->E, ds->nd, ds->nd, fmt, st);
    if (!rc && desc) rc = write_mtx(dir, "Ad", ds->Ad, ds->nd, ds->nd, fmt, st);
    if (!rc && desc) rc = write_mtx(dir, "Bd", ds->Bd, ds->nd, lin->nu, fmt, st);
    if (!rc && desc) rc = write_mtx(dir, "Cdd", ds->Cdd, lin->ny, ds->nd, fmt, st);
    if (rc) return rc;
    char path[EXPORT_PATH_MAX];
    rc = export_path(path, dir, "linear_model.m", st);
    if (rc) return rc;
    FILE *f = mbl_output_open(path, st);
    if (!f) return MBL_EIO;
    fprintf(f, "%% Linear model of %s (%s), method %s, written by mblin.\n", title_name(md),
            model_file(md), lin->method);
    fprintf(f, "%% x' = A x + B u, y = C x + D u with x = [S; W];\n%% M S'' + Cd S' + K S = F u.\n");
    oct_names(f, "state_names", lin->state_names, lin->nx);
    oct_names(f, "input_names", lin->input_names, lin->nu);
    oct_names(f, "output_names", lin->output_names, lin->ny);
    oct_mat(f, "A", lin->A, lin->nx, lin->nx);
    oct_mat(f, "B", lin->B, lin->nx, lin->nu);
    oct_mat(f, "C", lin->C, lin->ny, lin->nx);
    oct_mat(f, "D", lin->D, lin->ny, lin->nu);
    oct_mat(f, "M", lin->M, lin->z1, lin->z1);
    oct_mat(f, "Cd", lin->Cd, lin->z1, lin->z1);
    oct_mat(f, "K", lin->K, lin->z1, lin->z0);
    oct_mat(f, "F", lin->F, lin->z1, lin->nu);
    if (desc) {
        fprintf(f, "%% descriptor form E xd' = Ad xd + Bd u, y = Cdd xd + Dd u, xd = [dq; dv; dlambda].\n");
        oct_mat(f, "E", ds->E, ds->nd, ds->nd);
        oct_mat(f, "Ad", ds->Ad, ds->nd, ds->nd);
        oct_mat(f, "Bd", ds->Bd, ds->nd, lin->nu);
        oct_mat(f, "Cdd", ds->Cdd, lin->ny, ds->nd);
        oct_mat(f, "Dd", ds->Dd ? ds->Dd : lin->D, lin->ny, lin->nu);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) return mbl_error(st, MBL_EIO, "%s: write error", path);
    return 0;
}

/* ---- the velocity transformation and the flexible bodies ------------------------------------- */

int mbl_report_export_vtrans(const char *dir, const mbl_model *md, const mbl_point *pt, mbl_status *st)
{
    char omitted[EXPORT_PATH_MAX]; /* why the matrices are left out, or an earlier run's reason removed */
    if (export_path(omitted, dir, "vt_omitted.txt", st)) return st ? st->code : MBL_EIO;
    mbl_vtrans *v = NULL;
    int rc = mbl_model_velocity_transformation(md, pt, &v, st);
    if (rc == MBL_ENOMEM && st && st->msg[0]) { /* over the memory budget */
        char msg[sizeof st->msg];
        memcpy(msg, st->msg, sizeof msg);
        FILE *f = mbl_output_open(omitted, st);
        if (!f) return MBL_EIO;
        fprintf(f, "%s\n", msg);
        if (fclose(f)) return mbl_error(st, MBL_EIO, "%s: write error", omitted);
        mbl_status_clear(st);
        return 0;
    }
    if (rc || !v) return rc;
    (void)remove(omitted);
    size_t n = (size_t)v->ncol;
    if (!rc) rc = write_mtx(dir, "vt_B", v->B, v->nrow, v->ncol, MBL_MTX_ARRAY, st);
    if (!rc) rc = write_mtx(dir, "vt_Bdot", v->Bdot, v->nrow, v->ncol, MBL_MTX_ARRAY, st);
    if (!rc) rc = write_mtx(dir, "vt_dBdq", v->dB, v->nrow, (int)(n * n), MBL_MTX_ARRAY, st);
    if (!rc) { /* the open tree's stiffness K_l (source 003 Sec. 3.2.2), before the cut joints' constraints */
        double *Kl = mbl_calloc(n * n + 1, sizeof *Kl);
        rc = Kl ? mbl_open_tree_stiffness(md, pt, Kl, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = write_mtx(dir, "K_l", Kl, v->ncol, v->ncol, MBL_MTX_ARRAY, st);
        mbl_free(Kl);
    }
    char path[EXPORT_PATH_MAX];
    if (!rc) rc = export_path(path, dir, "vt_names.txt", st);
    if (!rc) {
        FILE *f = mbl_output_open(path, st);
        if (!f) rc = MBL_EIO;
        else {
            fputs("# rows\n", f);
            for (int i = 0; i < v->nrow; i++) fprintf(f, "%s\n", v->row_name[i]);
            fputs("# columns\n", f);
            for (int j = 0; j < v->ncol; j++) fprintf(f, "%s\n", v->col_name[j]);
            if (fclose(f)) rc = mbl_error(st, MBL_EIO, "%s: write error", path);
        }
    }
    mbl_vtrans_free(v);
    return rc;
}

int mbl_report_export_flex(const char *dir, const mbl_model *md, const mbl_point *pt, const mbl_modes *modes,
                           mbl_status *st)
{
    int nb = mbl_model_flex_count(md), rc = 0;
    for (int b = 0; b < nb && !rc; b++) {
        int nn = mbl_model_flex_nodes(md, b), nx = modes ? modes->nx : 0;
        int dim = mbl_model_flex_dim(md, b) == 3 ? 3 : 2, nd = dim == 3 ? 6 : 3;
        double *pos = mbl_calloc((size_t)dim * nn + 1, sizeof *pos);
        double *re = mbl_calloc((size_t)nd * nn * nx + 1, sizeof *re), *im = mbl_calloc((size_t)nd * nn * nx + 1, sizeof *im);
        if (!pos || !re || !im) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) mbl_model_flex_shape(md, b, pt->q, NULL, pos, NULL);
        for (int k = 0; !rc && k < nx; k++) {
            mbl_model_flex_shape(md, b, pt->q, modes->shape_re + (size_t)k * modes->n, NULL, re + (size_t)nd * nn * k);
            mbl_model_flex_shape(md, b, pt->q, modes->shape_im + (size_t)k * modes->n, NULL, im + (size_t)nd * nn * k);
        }
        /* nodes: nn x dim (x, y[, z]); shapes: nd nn x modes (dx, dy, rotation [dx, dy, dz, rx, ry, rz]
         * of node 1, node 2, ...) */
        double *posT = rc ? NULL : mbl_calloc((size_t)dim * nn + 1, sizeof *posT);
        if (!rc && !posT) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < nn; i++)
            for (int k = 0; k < dim; k++) posT[(size_t)k * nn + i] = pos[dim * i + k];
        char name[96];
        const char *bn = mbl_model_flex_name(md, b);
        snprintf(name, sizeof name, "flex_%.40s_nodes", bn);
        if (!rc) rc = write_mtx(dir, name, posT, nn, dim, MBL_MTX_ARRAY, st);
        snprintf(name, sizeof name, "flex_%.40s_shapes_re", bn);
        if (!rc) rc = write_mtx(dir, name, re, nd * nn, nx, MBL_MTX_ARRAY, st);
        snprintf(name, sizeof name, "flex_%.40s_shapes_im", bn);
        if (!rc) rc = write_mtx(dir, name, im, nd * nn, nx, MBL_MTX_ARRAY, st);
        mbl_free(pos), mbl_free(re), mbl_free(im), mbl_free(posT);
    }
    return rc;
}
