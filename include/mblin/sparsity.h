/* mblin: the sparsity of a linearization method's matrices and the fill-in of their factors
 * (source 001 Sec. 5.3, Fig. 5, Table 6; `mblin sparsity`, docs/linearization.md "Sparsity and
 * fill-in").
 *
 * For a loaded model, a method and its operating point, mbl_sparsity lists the matrices the method
 * builds, each with its order, its structural nonzeros and their coordinates, and the entries of
 * its factors as the factorization itself reports them (KLU's lnz + unz, CHOLMOD's analysis lnz)
 * under the ordering that factorization uses:
 *
 *   projection  M_r = R^T M R (source 001 Eq. 5; the method's M-hat, formed dense: its pattern is its
 *               entries above 1e-13 of the largest, the others being the rounding of terms that
 *               cancel), Cholesky (CHOLMOD)
 *   descriptor  M_q = M, Cholesky (CHOLMOD); the pencil E_q, A_q of source 001 Eq. 8 as the sparse
 *               path assembles it (order 2n + m); A_q - s E_q, factored as the shift-invert of the
 *               partial spectrum factors it (KLU, mbla_eigs_opts_default's options; s = shift)
 *   penalty     M_p = M + alpha Phi_q^T Phi_q (source 001 Eq. 15), Cholesky (CHOLMOD); Q_p(s) =
 *               K_p + s C_p + s^2 M_p, factored as the sparse penalty pencil factors it (KLU)
 *   augmented   the augmented matrix of source 000 Table 1 (order 3n + m + k, and
 *               the user ODE states' rows) and, where the
 *               method uses it, its kinematic system (order 3n), each factored by KLU as the method
 *               factors it (BTF, AMD)
 *
 * The library writes nothing by itself; mbl_report_sparsity and mbl_sparsity_svg (src/report)
 * print the table, the JSON object and the spy plots. */
#ifndef MBLIN_SPARSITY_H
#define MBLIN_SPARSITY_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbl_sparse_matrix {
    char name[24];      /* "M_r", "M_q", "E_q", "A_q", "A_q-sE_q", "M_p", "Q_p(s)", "augmented", "kinematic" */
    char what[160];     /* what it is, in one line */
    int rows, cols;
    int nnz;            /* structural nonzeros: the entries of the pattern below (an entry whose value
                           is zero at this point but not by the model's structure counts) */
    int *row, *col;     /* nnz 0-based coordinates, sorted by column, then row */
    char factor[16];    /* "klu" (L + U), "cholmod" (L L^T), "" (not factored on its own) */
    double factor_nnz;  /* entries of the factors as the factorization reports them: KLU lnz + unz
                           (each with its diagonal, the off-diagonal blocks of the block
                           triangular form not counted), CHOLMOD's analysis lnz (L with its
                           diagonal); -1 when not factored */
    int factored_nnz;   /* the entries of the matrix the factorization takes: KLU, nnz less those in
                           the off-diagonal blocks of its block triangular form; CHOLMOD, the upper
                           triangle with the diagonal; 0 when not factored */
    char note[200];     /* why not factored, or what else to know ("" when nothing) */
} mbl_sparse_matrix;

typedef struct mbl_sparsity {
    char method[32];
    int n, m, k;        /* coordinates, holonomic and non-holonomic constraints of the model */
    int nmat;
    mbl_sparse_matrix *mat;
} mbl_sparsity;

/* The matrices of opt->method (NULL opt or method: augmented) at `point`, in *out (free it with
 * mbl_sparsity_free). Methods without matrices of their own to show (partition, nullspace, fd: dense
 * reductions) are refused with MBL_EARG, naming the methods that have them, as is an unknown method.
 * The method's own refusals (a singular configuration, non-holonomic constraints where the sparse
 * pencil takes none) are returned as they are. Without GPL components (MBLIN_WITH_GPL=OFF) the
 * Cholesky factors are not counted (factor_nnz -1, the note says why). */
MBL_API int mbl_sparsity_compute(const mbl_model *model, const mbl_point *point, const mbl_lin_options *opt,
                                 mbl_sparsity **out, mbl_status *st);
MBL_API void mbl_sparsity_free(mbl_sparsity *s);

/* The methods mbl_sparsity_compute takes, in the order of source 001's Fig. 5 then augmented:
 * number, and name i (NULL out of range). */
MBL_API int mbl_sparsity_method_count(void);
MBL_API const char *mbl_sparsity_method_name(int i);

/* The table for a person: a head line (method, n, m, k), then one line per matrix (name, order,
 * nonzeros, density, factor, its nonzeros, their ratio to the entries factored) and the notes; or,
 * with json, one JSON object {method, n, m, k, matrices: [{name, what, rows, cols, nnz, factor,
 * factor_nnz, factored_nnz, note}]} (patterns not included: the SVG shows them) for the caller to
 * place in its document (`mblin sparsity --json`: {schema_version, model, methods: [...]}).
 * Returns 0 or MBL_EIO. */
MBL_API int mbl_report_sparsity(FILE *f, const mbl_sparsity *s, int json);

/* One matrix's pattern as an SVG spy plot: one <rect class="nz"> per structural nonzero (a square
 * cell at its row and column, row 1 at the top), the frame, the name, order and counts as title.
 * Returns 0 or MBL_EIO. */
MBL_API int mbl_sparsity_svg(FILE *f, const mbl_sparse_matrix *a);

#ifdef __cplusplus
}
#endif
#endif
