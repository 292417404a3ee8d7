/* The sparsity of the methods' matrices and the fill-in of their factors (source 001 Sec. 5.3,
 * Fig. 5, Table 6; mblin/sparsity.h).
 *
 * Each method's matrices are built as the method builds them (projection: its M-hat = R^T M R;
 * descriptor: the sparse pencil of src/lin/sparse_pencil.c; penalty: the CSC matrices of
 * src/lin/penalty_sparse.c; augmented: the sweep workspace's augmented matrix and kinematic system,
 * with the method's own KLU factorizations), and their factors' entries are the factorizations' own
 * counts: KLU's lnz + unz (mbla_klu_factor_stats), CHOLMOD's analysis lnz (mbla_chol_lnz). Like
 * methods.c this file composes the methods' pieces; no method calls another. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "lin/methods_internal.h"
#include "mblin/sparsity.h"

/* M_r is formed dense (R^T M R from the method's dense solves): an entry at most this fraction of its
 * largest is the rounding of terms that cancel (the flexible pendulum at n_p = 5: 102 of 294 nonzero
 * values at most 2.3e-17 of the largest, the others at least 1.7e-4), not part of its pattern */
#define SPARSITY_DENSE_DROP 1e-13

/* the most matrices one method lists (descriptor: M_q, E_q, A_q, A_q - s E_q) */
#define SPARSITY_MAX_MATS 4

static const char *const sparsity_methods[] = {"projection", "descriptor", "penalty", "augmented"};
#define NSPARSITY ((int)(sizeof sparsity_methods / sizeof sparsity_methods[0]))

int mbl_sparsity_method_count(void)
{
    return NSPARSITY;
}

const char *mbl_sparsity_method_name(int i)
{
    return i >= 0 && i < NSPARSITY ? sparsity_methods[i] : NULL;
}

void mbl_sparsity_free(mbl_sparsity *s)
{
    if (!s) return;
    for (int i = 0; i < s->nmat; i++) mbl_free(s->mat[i].row), mbl_free(s->mat[i].col);
    mbl_free(s->mat);
    mbl_free(s);
}

/* A new entry of s with the pattern of A (its stored entries), name and what; NULL when out of
 * memory (st set). */
static mbl_sparse_matrix *sp_add(mbl_sparsity *s, const char *name, const char *what, const mbla_csc *A,
                                 mbl_status *st)
{
    mbl_sparse_matrix *a = &s->mat[s->nmat];
    int nz = A->p[A->n];
    memset(a, 0, sizeof *a);
    a->row = mbl_alloc_array((size_t)nz + 1, sizeof *a->row);
    a->col = mbl_alloc_array((size_t)nz + 1, sizeof *a->col);
    if (!a->row || !a->col) {
        mbl_free(a->row), mbl_free(a->col);
        mbl_error(st, MBL_ENOMEM, "out of memory");
        return NULL;
    }
    s->nmat++;
    snprintf(a->name, sizeof a->name, "%s", name);
    snprintf(a->what, sizeof a->what, "%s", what);
    a->rows = A->m, a->cols = A->n, a->nnz = nz, a->factor_nnz = -1;
    for (int j = 0; j < A->n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++) a->row[q] = A->i[q], a->col[q] = j;
    return a;
}

/* a's factor counts from the KLU factorization k of its matrix */
static void sp_klu_counts(mbl_sparse_matrix *a, const mbla_klu *k)
{
    snprintf(a->factor, sizeof a->factor, "klu");
    mbla_klu_factor_stats(k, &a->factor_nnz, NULL);
    a->factored_nnz = a->nnz - mbla_klu_offdiag_nnz(k);
}

/* A factored by KLU with opts into a's counts; a failed factorization (a singular matrix) is a note,
 * not an error (only running out of memory is) */
static int sp_klu(mbl_sparse_matrix *a, const mbla_csc *A, const mbla_klu_opts *opts, mbl_status *st)
{
    mbla_klu *k = NULL;
    mbl_status fs = {0};
    int rc = mbla_klu_new(A, opts, &k, &fs);
    if (!rc) sp_klu_counts(a, k);
    else if (rc != MBL_ENOMEM) snprintf(a->note, sizeof a->note, "not factored: %.180s", fs.msg);
    mbla_klu_free(k);
    return rc == MBL_ENOMEM ? mbl_error(st, rc, "%s", fs.msg) : 0;
}

/* A (symmetric) analysed by CHOLMOD into a's counts (its upper triangle); a library built without
 * CHOLMOD leaves a note */
static int sp_chol(mbl_sparse_matrix *a, const mbla_csc *A, mbl_status *st)
{
    mbl_status fs = {0};
    int rc = mbla_chol_lnz(A, 'U', &a->factor_nnz, &fs);
    if (rc) {
        a->factor_nnz = -1;
        snprintf(a->note, sizeof a->note, "not factored: %.180s", fs.msg);
        return rc == MBL_ENOMEM ? mbl_error(st, rc, "%s", fs.msg) : 0;
    }
    snprintf(a->factor, sizeof a->factor, "cholmod");
    for (int j = 0; j < A->n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++) a->factored_nnz += A->i[q] <= j;
    return 0;
}

/* projection: M_r = R^T M R, the method's M-hat (formed dense: its entries above SPARSITY_DENSE_DROP of the largest) */
static int sp_projection(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_sparsity *s,
                         mbl_status *st)
{
    mbl_lin_options o = *opt;
    o.method = "projection";
    mbl_linear *lin = NULL;
    mbla_csc *M = NULL;
    int rc = mbl_linearize(md, pt, &o, &lin, st), z = lin ? lin->z1 : 0, nonzero = 0;
    double big = 0;
    for (size_t i = 0; !rc && i < (size_t)z * (size_t)z; i++)
        nonzero += lin->M[i] != 0.0, big = fmax(big, fabs(lin->M[i]));
    if (!rc) rc = mbla_csc_from_dense(z, z, lin->M, z, SPARSITY_DENSE_DROP * big, &M, st);
    mbl_sparse_matrix *a = NULL;
    if (!rc && !(a = sp_add(s, "M_r", "R^T M R, the mass matrix in the independent velocities (M-hat)", M, st)))
        rc = MBL_ENOMEM;
    if (!rc) rc = sp_chol(a, M, st);
    if (!rc && !a->note[0])
        snprintf(a->note, sizeof a->note, "formed dense (R^T M R): the pattern is its entries above %g of the "
                 "largest (%d smaller ones, the rounding of terms that cancel, left out)", SPARSITY_DENSE_DROP,
                 nonzero - a->nnz);
    mbla_csc_free(M);
    mbl_linear_free(lin);
    return rc;
}

/* descriptor: M_q, the pencil E_q, A_q and its shift-invert matrix A_q - s E_q */
static int sp_descriptor(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_sparsity *s,
                         mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    if (view.ext) /* as the method's sparse path (lin_descriptor_path): the pencil has no rows for them */
        return mbl_error(st, MBL_EMODEL, "descriptor: its sparse pencil is formed without %s (the dense QZ path takes "
                         "them)", model_ext_features(md));
    mbl_sparse_pencil P;
    mbla_csc *M = NULL, *C = NULL;
    mbl_sparse_matrix *a;
    int rc = lin_sparse_pencil_build(md, pt, opt, 0, &P, st);
    if (rc) {
        mbl_error_prefix(st, "descriptor");
        return rc;
    }
    int n = P.n;
    rc = mbla_csc_block(P.E, n, 2 * n, n, 2 * n, &M, st);
    if (!rc) rc = mbla_csc_add(1.0, P.A, -opt->shift, P.E, &C, st);
    if (!rc) rc = (a = sp_add(s, "M_q", "M, the mass matrix of all coordinates", M, st)) ? sp_chol(a, M, st) : MBL_ENOMEM;
    if (!rc && !sp_add(s, "E_q", "E of the pencil [dq; dv; dlambda] (source 001 Eq. 8)", P.E, st)) rc = MBL_ENOMEM;
    if (!rc && !sp_add(s, "A_q", "A of the pencil [dq; dv; dlambda] (source 001 Eq. 8)", P.A, st)) rc = MBL_ENOMEM;
    if (!rc) {
        char what[160];
        snprintf(what, sizeof what, "A_q - s E_q at the shift s = %g, as the partial spectrum factors it", opt->shift);
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        rc = (a = sp_add(s, "A_q-sE_q", what, C, st)) ? sp_klu(a, C, &eo.klu, st) : MBL_ENOMEM;
    }
    mbla_csc_free(M), mbla_csc_free(C);
    lin_sparse_pencil_free(&P);
    return rc;
}

/* penalty: M_p and Q_p(s) = K_p + s C_p + s^2 M_p */
static int sp_penalty(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_sparsity *s,
                      mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    if (view.k > 0 || view.ext)
        return mbl_error(st, MBL_EMODEL, "penalty: its sparse matrices are formed without %s (use the dense penalty)",
                         view.k > 0 ? "non-holonomic constraints" : model_ext_features(md));
    mbla_csc *Mp = NULL, *Q = NULL;
    mbl_sparse_matrix *a;
    int rc = lin_penalty_sparse_matrices(md, pt, opt, opt->shift, &Mp, &Q, st);
    if (!rc)
        rc = (a = sp_add(s, "M_p", "M + alpha Phi_q^T Phi_q, the penalty ODE's mass matrix (source 001 Eq. 15)", Mp,
                         st))
                 ? sp_chol(a, Mp, st)
                 : MBL_ENOMEM;
    if (!rc) {
        char what[160];
        snprintf(what, sizeof what, "K_p + s C_p + s^2 M_p at the shift s = %g, as the sparse penalty pencil factors it",
                 opt->shift);
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        rc = (a = sp_add(s, "Q_p(s)", what, Q, st)) ? sp_klu(a, Q, &eo.klu, st) : MBL_ENOMEM;
    }
    mbla_csc_free(Mp), mbla_csc_free(Q);
    return rc;
}

/* augmented: the sweep workspace's augmented matrix and kinematic system with their own KLU factors */
static int sp_augmented(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_sparsity *s,
                        mbl_status *st)
{
    mbl_lin_options o = *opt;
    o.method = "augmented";
    mbl_lin_work *w = NULL;
    mbl_linear *lin = NULL;
    mbl_sparse_matrix *a;
    int rc = mbl_lin_work_new(md, pt, &o, &w, &lin, st);
    if (!rc && w->Aug) {
        if (!(a = sp_add(s, "augmented", "the augmented sensitivity matrix (source 000 Table 1), equilibrated", w->Aug,
                         st)))
            rc = MBL_ENOMEM;
        else if (w->lu) sp_klu_counts(a, w->lu);
    }
    if (!rc && w->kin && w->Kin) {
        if (!(a = sp_add(s, "kinematic", "its kinematic system (rows Phi'', Phi', Phi, S, W, dW/dt; unknowns vdot, v, q)",
                         w->Kin, st)))
            rc = MBL_ENOMEM;
        else if (w->klu_k) {
            sp_klu_counts(a, w->klu_k);
            snprintf(a->note, sizeof a->note, "a one-shot whose pattern allows it factors this one only (M-hat "
                                              "gives the rest); sweeps factor both");
        }
    }
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    return rc;
}

int mbl_sparsity_compute(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_sparsity **out,
                         mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_sparsity_compute: out is NULL");
    *out = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_sparsity_compute: model or point is NULL");
    mbl_lin_options def, o;
    if (!opt) mbl_lin_options_default(&def), opt = &def;
    int rc = lin_options_check(opt, st);
    if (rc) return rc;
    lin_options_complete(opt, &o);
    const char *method = o.method ? o.method : "augmented";
    int i = 0;
    while (i < NSPARSITY && strcmp(method, sparsity_methods[i])) i++;
    if (i == NSPARSITY) {
        int known = 0;
        for (int j = 0; j < mbl_lin_method_count(); j++) known |= !strcmp(method, mbl_lin_method_name(j));
        return mbl_error(st, MBL_EARG,
                         known ? "the method '%.40s' builds no sparse matrices of its own (a dense reduction): the "
                                 "sparsity is reported for projection, descriptor, penalty and augmented"
                               : "unknown linearization method '%.40s' (the sparsity is reported for projection, "
                                 "descriptor, penalty and augmented)",
                         method);
    }
    model_view view;
    model_view_get(md, &view);
    mbl_sparsity *s = mbl_calloc(1, sizeof *s);
    if (s) s->mat = mbl_calloc(SPARSITY_MAX_MATS, sizeof *s->mat);
    if (!s || !s->mat) {
        mbl_sparsity_free(s);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    snprintf(s->method, sizeof s->method, "%s", method);
    s->n = view.n, s->m = view.m, s->k = view.k;
    static int (*const build[])(const mbl_model *, const mbl_point *, const mbl_lin_options *, mbl_sparsity *,
                                mbl_status *) = {sp_projection, sp_descriptor, sp_penalty, sp_augmented};
    rc = build[i](md, pt, &o, s, st);
    if (rc) {
        mbl_sparsity_free(s);
        if (i != 0 && i != 3) mbl_error_prefix(st, "%s", model_file(md)); /* mbl_linearize, mbl_lin_work_new name it */
        return rc;
    }
    *out = s;
    return 0;
}
