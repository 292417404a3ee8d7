/* Checks of a loaded model at its data: the user's expressions inside their domain at a point,
 * and a kinetic energy whose mass matrix is positive (semi)definite. */
#include "model/formulate.h"
#include "model/jac_cols.h"
#include "model/position_text.h"
#include "model/terms/term.h"

/* One item's value at syms (the error path: each on its own tape); 0 or its status */
static int singular_value(const mbl_model *md, int j, const double *syms, double *v)
{
    mbl_status st1;
    mbl_status_clear(&st1);
    return mblx_eval(md->g, md->sing[j], syms, v, &st1);
}

int model_singular_check(const mbl_model *md, const double *syms, double *work, const double *t, mbl_status *st)
{
    enum { LOCAL = 16 };
    double local[LOCAL], *v = md->nsing <= LOCAL ? local : mbl_alloc_array((size_t)md->nsing, sizeof *v);
    mbl_status st1;
    mbl_status_clear(&st1);
    /* one tape for all (md->tape_sing); where it fails, each on its own skips the failing ones */
    int bytape = v && md->tape_sing && !mblx_tape_eval(md->tape_sing, syms, v, work, &st1), rc = 0;
    for (int j = 0; j < md->nsing; j++) {
        double x;
        if (bytape ? (x = v[j], 0) : singular_value(md, j, syms, &x)) continue;
        if (fabs(x) >= md->sing_limit[j]) continue;
        char where[64];
        if (t) snprintf(where, sizeof where, "at t = %.6g", *t);
        else snprintf(where, sizeof where, "at the operating point");
        rc = mbl_error(st, MBL_ESINGULAR, "%s = %.6g %s, below %s", md->sing_what[j], x, where, md->sing_limit_text[j]);
        break;
    }
    if (v != local) mbl_free(v);
    return rc;
}

int model_check_domain(const mbl_model *md, const double *syms, double *work, mbl_status *st)
{
    /* the model's coordinates singular there (a body's 3-1-3 Euler angles) */
    if (md->nsing && model_singular_check(md, syms, work, NULL, st)) return st->code;
    /* the structured terms' own elements (a planar spring whose markers meet) */
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->check_point && model_terms[t]->present(md)) {
            int rc = model_terms[t]->check_point(md, syms, st);
            if (rc) return rc;
        }
    if (!md->nsrcx) return 0;
    double *vals = mbl_alloc_array((size_t)md->nsrcx, sizeof *vals);
    if (!vals) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_status st1;
    mbl_status_clear(&st1);
    int rc = mblx_tape_eval(md->tape_srcx, syms, vals, work, &st1);
    mbl_free(vals);
    if (rc != MBL_EDOMAIN) return rc ? mbl_error(st, rc, "%s", st1.msg) : 0;
    /* which one: each on its own tape (the error path only) */
    for (int i = 0; i < md->nsrcx; i++) {
        double v;
        mbl_status st2;
        mbl_status_clear(&st2);
        int rc2 = mblx_eval(md->g, md->srcx[i], syms, &v, &st2);
        if (rc2 == MBL_EDOMAIN) {
            char what[512];
            model_srcx_text(what, sizeof what, md, i);
            return mbl_error(st, rc2, "%s is not defined at the operating point: %s", what, st2.msg);
        }
        if (rc2) return mbl_error(st, rc2, "%s", st2.msg);
    }
    return mbl_error(st, rc, "%s: %s at the operating point", md->file, st1.msg);
}

void model_validity_notes(const mbl_model *md, const double *syms, char *notes, size_t cap)
{
    for (int j = 0; j < md->nval; j++) {
        double v;
        mbl_status st;
        mbl_status_clear(&st);
        if (mblx_eval(md->g, md->val[j], syms, &v, &st) || !(fabs(v) > md->val_limit[j])) continue;
        size_t len = strlen(notes);
        if (len + 3 >= cap) return;
        snprintf(notes + len, cap - len, "%s%s %.3g at the point, beyond %s", len ? "; " : "", md->val_what[j], v,
                 md->val_limit_text[j]);
    }
}

/* Two slopes of straight pieces closer than this fraction of the larger are one (collinear
 * points' slopes differ by rounding). Only straight pieces are compared (second derivative 0 on
 * both sides: a table, a `linear` set): a cubic's first derivative is continuous by construction,
 * and its two sides differ by rounding that may exceed any relative tolerance where it is near 0. */
#define MODEL_KNOT_SLOPE_TOL 1e-9

void model_data_knot_notes(const mbl_model *md, const double *syms, char *notes, size_t cap)
{
    if (!mblx_data_count(md->g)) return;
    size_t nn = mblx_node_count(md->g);
    for (mblx_id e = 0; e < nn; e++) {
        long k;
        int lin, dx, dy, dim;
        if (!mblx_data_node(md->g, e, &k, &lin, &dx, &dy) || dx || dy) continue;
        const char *name = mblx_data_name(md->g, k, &dim);
        double x, xl, right, left, curv[2];
        mbl_status st;
        mbl_status_clear(&st);
        if (dim != 1 || mblx_eval(md->g, mblx_node_arg(md->g, e, 0), syms, &x, &st)) continue;
        xl = nextafter(x, -INFINITY);
        if (mblx_data_eval(md->g, k, lin, 1, 0, x, 0, &right) || mblx_data_eval(md->g, k, lin, 1, 0, xl, 0, &left) ||
            mblx_data_eval(md->g, k, lin, 2, 0, x, 0, &curv[0]) || mblx_data_eval(md->g, k, lin, 2, 0, xl, 0, &curv[1]) ||
            curv[0] != 0 || curv[1] != 0 || !(fabs(left - right) > MODEL_KNOT_SLOPE_TOL * fmax(fabs(left), fabs(right))))
            continue;
        char text[256];
        snprintf(text, sizeof text,
                 "%s '%s' at x = %.15g, where its slope jumps from %.6g to %.6g: the slope to the right is used "
                 "(docs/model-files.md, \"Data sets\")",
                 lin ? "table" : "spline", name, x, left, right);
        size_t len = strlen(notes);
        if (strstr(notes, text) || len + strlen(text) + 3 >= cap) continue;
        snprintf(notes + len, cap - len, "%s%s", len ? "; " : "", text);
    }
}

/* The position of the mass-matrix entry (i, j) in the file (the kinetic energy without a mass_matrix). */
static const mbl_src_item *mass_item(const mbl_src *s, const mbl_model *md, int i, int j)
{
    if (!s->has_mass_matrix) return &s->kinetic_energy;
    for (int e = 0; e < s->mass_matrix.n; e++) {
        const mbl_src_item *it = &s->mass_matrix.items[e];
        if ((!strcmp(it->key, md->qname[i]) && !strcmp(it->key2, md->qname[j])) ||
            (!strcmp(it->key, md->qname[j]) && !strcmp(it->key2, md->qname[i])))
            return it;
    }
    return s->mass_matrix.n ? &s->mass_matrix.items[0] : &s->kinetic_energy;
}

/* The kinetic energy T = 1/2 v^T M v of a physical system is never negative, so M must be positive
 * semi-definite. Checked at the file's configuration (q0, v0, r0, linearize.time) with what costs
 * O(nnz): every diagonal entry M_ii >= 0 (a negative mass or inertia) and every 2x2 principal
 * minor M_ii M_jj >= M_ij^2 of a non-zero M_ij, each to MBL_MASS_TOL relative to the largest
 * diagonal entry. Values that cannot be evaluated there are left to the operating point. */
#define MBL_MASS_TOL 1e-9
/* Up to this many coordinates M is also checked whole: its smallest eigenvalue (LAPACK dsyev). */
#define MBL_MASS_DENSE_MAX 200

/* 1 when A + shift I is positive definite: LAPACK's Cholesky factorization (dpotrf) of its upper
 * triangle (the triangle dsyev reads; A column-major n x n, untouched; R: n x n scratch,
 * overwritten). Then A's smallest eigenvalue is above -shift, less the factorization's rounding
 * (about n eps ||A||, below 1e-11 ||A|| up to MBL_MASS_DENSE_MAX) and dsyev's own: with shift half
 * the check's tolerance, dsyev would find the matrix within it, and it is not called (about 50 k
 * instructions and some ten pages of LAPACK's text faulted in for the nonlinear bicycle). 0: not
 * shown (an indefinite or singular A + shift I, a zero shift): dsyev decides, as before. */
static int semidefinite_shifted(int n, const double *A, double shift, double *R)
{
    if (!(shift > 0)) return 0;
    memcpy(R, A, (size_t)n * (size_t)n * sizeof *R);
    for (int j = 0; j < n; j++) R[(size_t)j * n + j] += shift;
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', n, R, n) == 0;
}

const char *model_jac_set_note(const mbl_model *md, int p, char *buf, size_t cap)
{
    /* the entry's expression; a forward-mode load has none: its row's (which may name a parameter
     * the entry does not depend on), the let form md->Fc's where there is one (md->F's
     * inlined rows may not be built yet: model_inlined_rows) */
    buf[0] = '\0';
    if (!md->pset || p < 0 || p >= md->jac.nz) return buf;
    int r = md->jac.row[p];
    mblx_id e = md->jac.node[p] != MBLX_NONE ? md->jac.node[p] : md->Fc ? md->Fc[r] : md->F[r];
    for (int i = 0; i < md->np; i++) {
        if (isnan(md->pset[i])) continue;
        int dep = mblx_depends(md->g, e, md->p[i]);
        /* a row of a term evaluated numerically: its entries are numbers, its texts may name the
         * parameter (a tree's masses and inertias) */
        for (int t = 0; t < MODEL_NTERMS && !dep; t++)
            if (model_terms[t]->row_depends && model_terms[t]->present(md))
                dep = model_terms[t]->row_depends(md, r, md->p[i]);
        if (dep) {
            char v[32];
            snprintf(v, sizeof v, "%.15g", md->pset[i]);
            if (strtod(v, NULL) != md->pset[i]) snprintf(v, sizeof v, "%.17g", md->pset[i]);
            snprintf(buf, cap, " (the value comes from --set %s=%s)", md->pname[i], v);
            return buf;
        }
    }
    return buf;
}

int model_require_mass(const mbl_model *md, mbl_status *st)
{
    if (!md->mass_zero_line || md->n <= md->m + md->k) return 0;
    return mbl_error(st, MBL_EMODEL,
                     "the kinetic_energy (line %d, column %d) contains no der() of a coordinate: the mass matrix "
                     "M = d2T/dv2 is zero, so the %d degree(s) of freedom have no inertia and the motion cannot be "
                     "linearized; write T in the velocities, e.g. 0.5*m*der(x)^2",
                     md->mass_zero_line, md->mass_zero_col, md->n - md->m - md->k);
}

int model_check_mass(const mbl_model *md, const mbl_src *s, mbl_status *st)
{
    char note[200];
    int n = md->n, rc = 0, evaluated = 0;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *jac = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *jac); /* every entry written (model_eval_jac) */
    double *work = mbl_alloc_array(md->work_size + 1, sizeof *work); /* scratch the evaluation writes before it reads
                                                                        (not cleared: tens of KB on larger models) */
    double *diag = mbl_calloc((size_t)n + 1, sizeof *diag);
    int *off = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *off), noff = 0; /* M's off-diagonal entries */
    if (!syms || !jac || !work || !diag || !off) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    model_fill_syms(md, md->time, md->q0, md->v0, NULL, NULL, NULL, md->r0, syms);
    mbl_status est;
    if (model_eval_jac(md, syms, jac, work, &est)) goto out; /* e.g. a domain error at q0 */
    evaluated = 1;
    /* M_ij = dF_i/da_j: the EOM rows, the acceleration columns */
    double big = 0;
    int pa, pb; /* the acceleration columns' entries (columns 0 .. n - 1) */
    model_jac_col_range(md, 0, n, &pa, &pb);
    for (int p = pa; p < pb; p++) {
        int i = md->jac.row[p], j = md->jac.col[p];
        if (i >= n || j >= n) continue;
        if (i != j) { /* tested below, once the diagonal is complete */
            off[noff++] = p;
            continue;
        }
        if (!isfinite(jac[p])) goto out;
        diag[i] += jac[p];
        if (fabs(jac[p]) > big) big = fabs(jac[p]);
    }
    int negative = 0; /* the entries are searched for the message only when a mass is negative */
    for (int i = 0; i < n && !negative; i++) negative = diag[i] < -MBL_MASS_TOL * big;
    for (int p = 0; negative && p < md->jac.nz; p++) {
        int i = md->jac.row[p];
        if (i >= n || md->jac.col[p] != i || !(diag[i] < -MBL_MASS_TOL * big)) continue;
        const mbl_src_item *it = mass_item(s, md, i, i);
        rc = mbl_error(st, MBL_EMODEL,
                       "%s:%d:%d: the mass of coordinate '%s' is negative at the file's configuration (M(%s, %s) = "
                       "%.6g): the kinetic energy must never be negative (mass matrix positive semi-definite)%s",
                       s->file, it->line, it->col, md->qname[i], md->qname[i], md->qname[i], diag[i],
                       model_jac_set_note(md, p, note, sizeof note));
        goto out;
    }
    for (int e = 0; e < noff; e++) {
        int p = off[e], i = md->jac.row[p], j = md->jac.col[p];
        if (!isfinite(jac[p])) continue;
        if (jac[p] * jac[p] > diag[i] * diag[j] + MBL_MASS_TOL * big * big) {
            const mbl_src_item *it = mass_item(s, md, i, j);
            rc = mbl_error(st, MBL_EMODEL,
                           "%s:%d:%d: the mass matrix is not positive semi-definite at the file's configuration: "
                           "M(%s, %s)^2 = %.6g exceeds M(%s, %s) M(%s, %s) = %.6g (the kinetic energy would be "
                           "negative for some velocities of '%s' and '%s')%s",
                           s->file, it->line, it->col, md->qname[i], md->qname[j], jac[p] * jac[p], md->qname[i],
                           md->qname[i], md->qname[j], md->qname[j], diag[i] * diag[j], md->qname[i], md->qname[j],
                           model_jac_set_note(md, p, note, sizeof note));
            goto out;
        }
    }
    if (n <= MBL_MASS_DENSE_MAX && n > 2) {
        /* w: dsyev's eigenvalues, or before them semidefinite_shifted's R */
        double *A = mbl_calloc((size_t)n * (size_t)n, sizeof *A), *w = mbl_alloc_array((size_t)n * (size_t)n, sizeof *w);
        if (!A || !w) {
            mbl_free(A);
            mbl_free(w);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        for (int p = 0; p < md->jac.nz; p++)
            if (md->jac.row[p] < n && md->jac.col[p] < n && isfinite(jac[p]))
                A[(size_t)md->jac.col[p] * (size_t)n + (size_t)md->jac.row[p]] += jac[p];
        if (!semidefinite_shifted(n, A, 0.5 * MBL_MASS_TOL * big, w) &&
            LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', n, A, n, w) == 0 && w[0] < -MBL_MASS_TOL * fmax(w[n - 1], big)) {
            /* the coordinate that takes the largest part of the direction of negative energy */
            int c = 0;
            for (int i = 1; i < n; i++)
                if (fabs(A[i]) > fabs(A[c])) c = i;
            const mbl_src_item *it = mass_item(s, md, c, c);
            rc = mbl_error(st, MBL_EMODEL,
                           "%s:%d:%d: the mass matrix is not positive semi-definite at the file's configuration "
                           "(smallest eigenvalue %.6g, mostly along coordinate '%s'): the kinetic energy would be "
                           "negative for some velocities",
                           s->file, it->line, it->col, w[0], md->qname[c]);
        }
        mbl_free(A);
        mbl_free(w);
    }
out:
    /* the values kept for the operating point, whose first evaluation is often here (an equilibrium's
     * guess; model_eval_jac_memo): the model is still being built, not yet shared */
    if (evaluated && !atomic_load(&md->load_memo))
        atomic_store(&((mbl_model *)md)->load_memo, model_jac_memo_new(md, syms, jac)); /* takes both */
    else mbl_free(syms), mbl_free(jac);
    mbl_free(work);
    mbl_free(diag);
    mbl_free(off);
    return rc;
}
