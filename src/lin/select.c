/* State selection (source 000 Eq. 20-22): LU with full pivoting on the weighted Jacobian
 *
 *      J = [ Phi_q      0        ]     rows: constraints, then candidate user states
 *          [ -s_q   weight * I   ]     cols: internal coordinates, then user states
 *
 * The pivot columns are the dependent ones; the remaining columns are the states. The user
 * states' identity block is scaled by a small weight, so pivoting consumes internal coordinates
 * first and the user states stay independent whenever they can: too few user states are
 * completed with internal coordinates, too many or dependent ones are dropped. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "la/la_equilibrate.h"
#include "lin/lin_internal.h"
#include "mblin/la.h"
#include "model/jac_cols.h"

static void append(char *buf, size_t size, const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(buf);
    if (len + 1 >= size) return;
    snprintf(buf + len, size - len, fmt, a, b);
}

/* How many added coordinates the selection's report names (the rest are counted). */
#define SELECT_ADDED_NAMES 8
/* Largest model (coordinates + candidates) selected with the complete-pivoting LU of Eq. 22
 * (dgetc2 is unblocked: cols^3 / 3 flops at level-2 speed). */
#define SELECT_DENSE_LU_MAX 64
/* Dense QR with column pivoting on the weighted Jacobian when it has at most this many rows
 * (cost rows^2 * cols) and entries. */
#define SELECT_QRCP_MAX_ROWS 300
#define SELECT_QRCP_MAX_ENTRIES 20000000
/* Largest number of states of the null-space route (its basis is n x z, dense). */
#define SELECT_NULLSPACE_MAX_STATES 2000
/* Largest number of coordinates whose given states are tested first (a dense LU of order n). */
#define SELECT_GIVEN_MAX 256
/* Up to this order the test takes A^-1 whole (dgetrs on the identity: 2 n^3 flops) and A's exact
 * condition; above, dgecon's estimate (its fixed cost, about 30 k instructions, is then the
 * smaller) and the candidates' columns of A^-1 alone. */
#define SELECT_GIVEN_EXACT_MAX 32
/* Above SELECT_GIVEN_MAX coordinates the given states are tested first (by a sparse LU) when there
 * are at most this many (the candidates' columns of A^-1 are dense: n x ncand). */
#define SELECT_GIVEN_SPARSE_CAND 64

/* The coordinate part of [C; -G] into J (zeroed, leading dimension ld): every row scaled to unit
 * max-norm over the coordinates (a zero row kept as it is) */
static void fill_scaled_rows(const mbla_csc *C, int ncand, const double *G, double *J, size_t ld)
{
    int nc = C->m, n = C->n;
    for (int j = 0; j < n; j++)
        for (int p = C->p[j]; p < C->p[j + 1]; p++) J[C->i[p] + (size_t)j * ld] = C->x[p];
    for (int i = 0; i < nc; i++) {
        double sc = 0;
        for (int j = 0; j < n; j++) sc = fmax(sc, fabs(J[i + (size_t)j * ld]));
        sc = sc > 0 ? 1.0 / sc : 1.0;
        for (int j = 0; j < n; j++) J[i + (size_t)j * ld] *= sc;
    }
    for (int i = 0; i < ncand; i++) {
        double sc = 0;
        for (int j = 0; j < n; j++) sc = fmax(sc, fabs(G[i + (size_t)j * ncand]));
        sc = sc > 0 ? 1.0 / sc : 1.0;
        for (int j = 0; j < n; j++) J[nc + i + (size_t)j * ld] = -sc * G[i + (size_t)j * ncand];
    }
}

/* The given states first (the candidates complete C to a square matrix A = [C; -G], as many
 * candidates as coordinates less constraints, every row scaled to unit max-norm as in
 * select_level). They are all states and no coordinate is added (*pass = 1) when
 *   (1) A is far from singular: its reciprocal condition number in the 1-norm (LAPACK dgetrf, then
 *       A^-1 by dgetrs, exact, or dgecon's estimate above SELECT_GIVEN_EXACT_MAX) is at least
 *       pivot_tol, the selection's own rank tolerance (nearer singular, the full selection decides
 *       the rank, and refuses a rank-deficient C, as before), and
 *   (2) no exchange of one candidate for one coordinate would be preferred by the weighted
 *       selection: the weighted pivot block [A | w I] with candidate i's identity column in place of
 *       coordinate j's column has |det| = w_i |(A^-1)_{j,nc+i}| |det A|, so every entry of A^-1's
 *       candidate columns (the coordinates' derivatives with respect to the candidates) must have
 *       |(A^-1)_{j,nc+i}| <= 1 / w_i.
 * Otherwise *pass = 0 and the full selection decides. Complete pivoting (Eq. 22) is a greedy
 * approximation of that largest-determinant choice: where it would still exchange a state that
 * passes (2) (only near the bound of (2)), the given states are kept here.
 * At a point with motion (moving) only (1) is asked: there the eigenvalues depend on the states,
 * and the user's states are the ones in which the motion is steady, while (2), in the coordinates'
 * own units, is a preference among choices that give the same spectrum only at rest (a top whose
 * centre of mass sits 0.1 mm above its pivot has dq/ds = 1/(2 l) = 5000 for its tilt states). */
static int given_states_pass(const mbla_csc *C, int ncand, const double *G, const double *wcand, double pivot_tol,
                             int moving, int *pass, mbl_status *st)
{
    int nc = C->m, n = C->n;
    *pass = 0;
    /* A, then A^-1 (exact route) or the candidates' columns of A^-1 (estimate route) */
    int exact = n <= SELECT_GIVEN_EXACT_MAX, xcols = exact ? n : ncand;
    double *A = mbl_alloc_array((size_t)n * (size_t)(n + xcols) + 1, sizeof *A);
    if (!A) return mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    double *X = A + (size_t)n * (size_t)n;
    memset(A, 0, (size_t)n * (size_t)n * sizeof *A);
    fill_scaled_rows(C, ncand, G, A, (size_t)n);
    double rcond = 0;
    int rc;
    if (exact) {
        rc = mbla_inv_rcond(n, A, n, X, n, &rcond, st);
        X += (size_t)nc * n;
    } else {
        memset(X, 0, (size_t)n * (size_t)ncand * sizeof *X);
        for (int i = 0; i < ncand; i++) X[nc + i + (size_t)i * n] = 1.0;
        rc = mbla_lu_rcond(n, A, n, ncand, X, n, &rcond, st);
    }
    if (!rc && rcond > 0 && rcond >= pivot_tol) {
        int ok = 1;
        for (int i = 0; i < ncand && ok && !moving; i++) {
            double bound = wcand[i] > 0 ? 1.0 / wcand[i] : INFINITY;
            const double *x = X + (size_t)i * n;
            for (int j = 0; j < n && ok; j++) ok = fabs(x[j]) <= bound;
        }
        *pass = ok;
    }
    mbl_free(A);
    return rc;
}

/* Above SELECT_GIVEN_MAX coordinates, given_states_pass with a sparse LU: A = [C; -G], every row
 * scaled as fill_scaled_rows scales it, factored by KLU; its reciprocal 1-norm condition from
 * klu_condest's estimate of ||A^-1||_1 (Hager and Higham's, as dgecon's), the candidates' columns of
 * A^-1 by solves. The same test (1) and (2), in O(nnz(L + U)) instead of a dense LU of order n: a
 * large closed chain with its given states no longer takes the null space of C (SPQR) to keep them.
 * Up to SELECT_GIVEN_SPARSE_CAND candidates (the columns are dense, n x ncand); a matrix KLU finds
 * singular does not pass. */
static int given_states_pass_sparse(const mbla_csc *C, int ncand, const double *G, const double *wcand,
                                    double pivot_tol, int moving, int *pass, mbl_status *st)
{
    int nc = C->m, n = C->n, nzc = C->p[n], nzg = 0;
    *pass = 0;
    for (size_t t = 0; t < (size_t)ncand * (size_t)n; t++) nzg += G[t] != 0.0;
    double *sc = mbl_alloc_array((size_t)(nc + ncand) + 1, sizeof *sc);
    mbla_csc *A = NULL;
    mbla_klu *lu = NULL;
    double *X = NULL;
    int rc = sc ? mbla_csc_new(n, n, nzc + nzg, &A, st) : mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    if (rc) goto done;
    /* the rows' scales: 1 / max-norm (a zero row kept as it is), as fill_scaled_rows */
    for (int i = 0; i < nc + ncand; i++) sc[i] = 0;
    for (int p = 0; p < nzc; p++) sc[C->i[p]] = fmax(sc[C->i[p]], fabs(C->x[p]));
    for (int i = 0; i < ncand; i++)
        for (int j = 0; j < n; j++) sc[nc + i] = fmax(sc[nc + i], fabs(G[i + (size_t)j * ncand]));
    for (int i = 0; i < nc + ncand; i++) sc[i] = sc[i] > 0 ? 1.0 / sc[i] : 1.0;
    int t = 0;
    for (int j = 0; j < n; j++) { /* column j: C's rows (sorted), then the candidates' (below them) */
        A->p[j] = t;
        for (int p = C->p[j]; p < C->p[j + 1]; p++) A->i[t] = C->i[p], A->x[t++] = C->x[p] * sc[C->i[p]];
        for (int i = 0; i < ncand; i++) {
            double g = G[i + (size_t)j * ncand];
            if (g != 0.0) A->i[t] = nc + i, A->x[t++] = -sc[nc + i] * g;
        }
    }
    A->p[n] = t;
    mbl_status st2;
    /* every row's max-norm 1 already: KLU's scaling off; its blocks those of C's loops */
    int frc = la_klu_new_small(A, LA_KLU_UNSCALED, &lu, &st2);
    if (frc == MBL_ENOMEM) rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    if (frc) goto done; /* singular (or KLU failed): the full selection decides */
    double cond = 0;
    if (mbla_klu_condest(lu, A, &cond, &st2) || !(cond > 0) || !(1.0 / cond >= pivot_tol)) goto done;
    int ok = 1;
    if (!moving) {
        X = mbl_calloc((size_t)n * (size_t)ncand + 1, sizeof *X);
        if (!X) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
            goto done;
        }
        for (int i = 0; i < ncand; i++) X[nc + i + (size_t)i * n] = 1.0;
        if (mbla_klu_solve(lu, ncand, X, n, &st2)) goto done;
        for (int i = 0; i < ncand && ok; i++) {
            double bound = wcand[i] > 0 ? 1.0 / wcand[i] : INFINITY;
            const double *x = X + (size_t)i * n;
            for (int j = 0; j < n && ok; j++) ok = fabs(x[j]) <= bound;
        }
    }
    *pass = ok;
done:
    mbla_klu_free(lu);
    mbla_csc_free(A);
    mbl_free(sc), mbl_free(X);
    return rc;
}

/* One level of selection. C is the constraint Jacobian (nc x n, sparse), G the candidate rows
 * (ncand x n, dense column-major) with weights wcand (smaller = preferred as a state). Writes
 * which candidates (free_cand) and which internal columns (free_coord) are states, and the rank
 * of C. Three routes, all with the same meaning:
 *   - small models: LU with complete pivoting on the weighted J of Eq. 22 (dgetc2);
 *   - few rows: QR with column pivoting on the weighted J (columns of small norm come last);
 *   - large constrained models: an orthonormal basis N of the null space of C (SPQR), then the
 *     z states are the z best-conditioned rows of [G; I] N, user candidates weighted up. */
static int select_level(const mbla_csc *C, int ncand, const double *G, const double *wcand, double pivot_tol,
                        int given_first, int moving, int *free_coord, int *free_cand, int *rank_c, mbl_status *st)
{
    int nc = C->m, n = C->n;
    int rows = nc + ncand, cols = n + ncand;
    int rc = 0;
    if (rows == 0) { /* nothing to eliminate: every coordinate is a state */
        for (int j = 0; j < n; j++) free_coord[j] = 1;
        *rank_c = 0;
        return 0;
    }
    if (ncand > 0 && rows == n && (n <= SELECT_GIVEN_MAX || ncand <= SELECT_GIVEN_SPARSE_CAND) && given_first) {
        int pass = 0;
        rc = n <= SELECT_GIVEN_MAX ? given_states_pass(C, ncand, G, wcand, pivot_tol, moving, &pass, st)
                                   : given_states_pass_sparse(C, ncand, G, wcand, pivot_tol, moving, &pass, st);
        if (rc) return rc;
        if (pass) {
            for (int j = 0; j < n; j++) free_coord[j] = 0;
            for (int i = 0; i < ncand; i++) free_cand[i] = 1;
            *rank_c = nc;
            return 0;
        }
    }
    /* route by cost: small models the LU of Eq. 22; models with few states (n - nc small) the
     * null space; many states and few constraint rows the dense QRCP */
    int few_states = n - nc <= SELECT_NULLSPACE_MAX_STATES && nc > 0;
    if (cols <= SELECT_DENSE_LU_MAX ||
        (!few_states && rows <= SELECT_QRCP_MAX_ROWS && (size_t)rows * (size_t)cols <= SELECT_QRCP_MAX_ENTRIES)) {
        double *J = mbl_calloc((size_t)rows * (size_t)cols + 1, sizeof *J);
        double *w = mbl_alloc_array((size_t)cols + 1, sizeof *w);
        int *perm = mbl_alloc_array((size_t)cols + 1, sizeof *perm);
        if (!J || !w || !perm) {
            mbl_free(J), mbl_free(w), mbl_free(perm);
            return mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
        }
        /* J = [C 0; -G I], every row scaled to unit max-norm over the coordinate part */
        fill_scaled_rows(C, ncand, G, J, (size_t)rows);
        for (int i = 0; i < ncand; i++) J[nc + i + (size_t)(n + i) * rows] = 1.0;
        for (int j = 0; j < n; j++) w[j] = 1.0;
        for (int i = 0; i < ncand; i++) w[n + i] = wcand[i];
        int rank = 0;
        if (cols <= SELECT_DENSE_LU_MAX) {
            rc = mbla_select_columns(rows, cols, J, rows, w, pivot_tol, perm, &rank, st);
        } else {
            for (int j = 0; j < cols; j++)
                for (int i = 0; i < rows; i++) J[i + (size_t)j * rows] *= w[j];
            rc = mbla_qrcp(rows, cols, J, rows, pivot_tol, perm, &rank, NULL, 1, 0, NULL, 1, st);
        }
        if (!rc) {
            for (int j = 0; j < n; j++) free_coord[j] = 1;
            for (int i = 0; i < ncand; i++) free_cand[i] = 1;
            for (int r = 0; r < rank; r++) {
                if (perm[r] < n) free_coord[perm[r]] = 0;
                else free_cand[perm[r] - n] = 0;
            }
            /* every candidate row adds exactly one to the rank through its identity column */
            *rank_c = rank - ncand;
        }
        mbl_free(J), mbl_free(w), mbl_free(perm);
        return rc;
    }
    /* large: the null-space route */
    double *N = NULL;
    int z = 0, rank = 0;
    rc = mbla_spqr_nullspace(C, MBLA_DEFAULT, &N, &z, &rank, st);
    if (rc) return rc;
    *rank_c = rank;
    if (z > SELECT_NULLSPACE_MAX_STATES) {
        mbl_free(N);
        return mbl_error(st, MBL_EDIM,
                         "state selection: %d coordinates with %d independent constraints leave %d states, more than "
                         "this version selects for a model of this size (%d)",
                         n, rank, z, SELECT_NULLSPACE_MAX_STATES);
    }
    for (int j = 0; j < n; j++) free_coord[j] = 0;
    for (int i = 0; i < ncand; i++) free_cand[i] = 0;
    if (z == 0) {
        mbl_free(N);
        return 0;
    }
    /* H (z x (ncand + n)): column c is the candidate's row of [G; I] N, scaled to unit norm
     * (so conditioning, not units, decides) and weighted by 1/w for the user candidates */
    int hc = ncand + n;
    double *H = mbl_calloc((size_t)z * (size_t)hc + 1, sizeof *H);
    int *perm = mbl_alloc_array((size_t)hc + 1, sizeof *perm);
    if (!H || !perm) {
        mbl_free(N), mbl_free(H), mbl_free(perm);
        return mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    }
    for (int i = 0; i < ncand; i++) {
        double gn = 0;
        for (int j = 0; j < n; j++) gn = fmax(gn, fabs(G[i + (size_t)j * ncand]));
        double scale = (gn > 0 ? 1.0 / gn : 0.0) / (wcand[i] > 0 ? wcand[i] : 1.0);
        for (int k = 0; k < z; k++) {
            double d = 0;
            for (int j = 0; j < n; j++) d += G[i + (size_t)j * ncand] * N[j + (size_t)k * n];
            H[k + (size_t)i * z] = scale * d;
        }
    }
    for (int j = 0; j < n; j++)
        for (int k = 0; k < z; k++) H[k + (size_t)(ncand + j) * z] = N[j + (size_t)k * n];
    int hrank = 0;
    rc = mbla_qrcp(z, hc, H, z, pivot_tol, perm, &hrank, NULL, 1, 0, NULL, 1, st);
    if (!rc) {
        for (int r = 0; r < z && r < hrank; r++) {
            if (perm[r] < ncand) free_cand[perm[r]] = 1;
            else free_coord[perm[r] - ncand] = 1;
        }
        if (hrank < z) rc = mbl_error(st, MBL_ESINGULAR, "state selection: the null-space basis is rank deficient");
    }
    mbl_free(N), mbl_free(H), mbl_free(perm);
    return rc;
}

/* The constraint Jacobian rows of groups rg[0..ng-1] w.r.t. column block cb, as a CSC matrix. */
static int constraint_csc(const mbl_model *md, const double *jacval, const int *rg, int ng, int cb, mbla_csc **out,
                          mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int c0 = mv->blk0[cb], n = mv->n, rows = 0, nz = 0;
    int roff[4];
    for (int g = 0; g < ng; g++) {
        roff[g] = rows;
        rows += mv->row0[rg[g] + 1] - mv->row0[rg[g]];
    }
    int *ti = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *tj);
    double *tx = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *tx);
    if (!ti || !tj || !tx) {
        mbl_free(ti), mbl_free(tj), mbl_free(tx);
        return mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    }
    int p0, p1;
    model_jac_col_range(md, c0, c0 + n, &p0, &p1);
    for (int p = p0; p < p1; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if (c < c0 || c >= c0 + n) continue;
        for (int g = 0; g < ng; g++)
            if (r >= mv->row0[rg[g]] && r < mv->row0[rg[g] + 1]) {
                ti[nz] = roff[g] + r - mv->row0[rg[g]];
                tj[nz] = c - c0;
                tx[nz++] = jacval[p];
            }
    }
    int rc = mbla_csc_from_triplets(rows, n, nz, ti, tj, tx, NULL, out, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

/* The candidate rows of the velocity level (G: nuvs + z0 rows, n columns, zeroed): the user velocity
 * states' w_v, then the derivatives of the position states S (d(sdot)/dv = s_q, or a unit row). */
static void vel_candidates(const mbl_model *md, const double *usjac, const mbl_state_ref *S, int z0, double *G)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, nus = mv->nus, nuvs = mv->nuvs, ncand = nuvs + z0;
    int jv = mv->blk0[MBL_BLK_V];
    for (int p = 0; p < mv->usjac.nz; p++) {
        int r = mv->usjac.row[p], c = mv->usjac.col[p];
        if (r >= 3 * nus && r < 3 * nus + nuvs && c >= jv && c < jv + n)
            G[(r - 3 * nus) + (size_t)(c - jv) * ncand] = usjac[p];
    }
    for (int i = 0; i < z0; i++) {
        int row = nuvs + i;
        if (S[i].kind == MBL_SREF_COORD) {
            G[row + (size_t)S[i].index * ncand] = 1.0;
        } else { /* d(sdot)/dv = s_q */
            for (int p = 0; p < mv->usjac.nz; p++) {
                int r = mv->usjac.row[p], c = mv->usjac.col[p];
                if (r == nus + S[i].index && c >= jv && c < jv + n) G[row + (size_t)(c - jv) * ncand] = usjac[p];
            }
        }
    }
}

/* The velocity states W chosen by select_level (free_cand over the nuvs + z0 candidates, free_coord
 * over the coordinates): user velocity states, position states' derivatives, added coordinates'
 * derivatives, in that order; what happened appended to lin->selection. Returns their count. */
static int vel_states(const mbl_model *md, const int *free_cand, const int *free_coord, int z0, mbl_state_ref *W,
                      mbl_linear *lin)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, nuvs = mv->nuvs, z1 = 0;
    for (int i = 0; i < nuvs; i++) {
        if (free_cand[i]) {
            W[z1].kind = MBL_SREF_USER;
            W[z1++].index = i;
        } else {
            lin->nsel_dropped++;
            append(lin->selection, sizeof lin->selection, "dropped velocity state '%s'%s; ", mv->uvs_text[i], "");
        }
    }
    for (int i = 0; i < z0; i++)
        if (free_cand[nuvs + i]) {
            W[z1].kind = MBL_SREF_SDOT;
            W[z1++].index = i;
        }
    for (int j = 0; j < n; j++)
        if (free_coord[j]) {
            W[z1].kind = MBL_SREF_COORD;
            W[z1++].index = j;
            append(lin->selection, sizeof lin->selection, "added velocity der(%s)%s; ", mv->qname[j], "");
        }
    return z1;
}

int lin_select_states(const mbl_model *md, const mbl_eval *ev, const mbl_lin_options *opt, mbl_linear *lin,
                      mbl_state_ref **Sout, int *z0out, mbl_state_ref **Wout, int *z1out, mbl_status *st)
{
    return lin_select_states_how(md, ev, opt, 1, lin, Sout, z0out, Wout, z1out, st);
}

int lin_select_states_how(const mbl_model *md, const mbl_eval *ev, const mbl_lin_options *opt, int given_first,
                          mbl_linear *lin, mbl_state_ref **Sout, int *z0out, mbl_state_ref **Wout, int *z1out,
                          mbl_status *st)
{
    const model_view *mv = &ev->mv;
    int n = mv->n, m = mv->m, k = mv->k, nus = mv->nus, nuvs = mv->nuvs;
    int rc = 0;
    *Sout = *Wout = NULL;
    mbla_csc *C = NULL;
    /* candidate rows, dense: the user states at the position level (nus x n); grown below for the
     * velocity level when there is one */
    double *G = mbl_calloc((size_t)nus * (size_t)n + 1, sizeof *G);
    double *wc = mbl_alloc_array((size_t)(nus + nuvs + n) + 1, sizeof *wc);
    int *free_coord = mbl_alloc_array((size_t)n + 1, sizeof *free_coord);
    int *free_cand = mbl_alloc_array((size_t)(nus + nuvs + n) + 1, sizeof *free_cand);
    mbl_state_ref *S = mbl_alloc_array((size_t)n + 1, sizeof *S);
    mbl_state_ref *W = mbl_alloc_array((size_t)n + 1, sizeof *W);
    if (!G || !wc || !free_coord || !free_cand || !S || !W) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
        goto done;
    }
    lin->selection[0] = '\0';
    lin->nsel_added = lin->nsel_dropped = 0;
    /* a point with motion (any velocity nonzero): the given states are tested by (1) alone */
    int moving = 0, jv0 = mv->blk0[MBL_BLK_V];
    for (int i = 0; i < n && !moving; i++) moving = ev->syms[mv->sym_of_unknown[jv0 + i]] != 0.0;

    /* ---- position level: Phi_q and the user states' s_q ---- */
    int g_phi[1] = {MBL_ROW_PHI};
    rc = constraint_csc(md, ev->jac, g_phi, 1, MBL_BLK_Q, &C, st);
    if (rc) goto done;
    const double *usjac = ev->us + 3 * nus + 2 * nuvs;
    int jq = mv->blk0[MBL_BLK_Q];
    for (int p = 0; p < mv->usjac.nz; p++) {
        int r = mv->usjac.row[p], c = mv->usjac.col[p];
        if (r < nus && c >= jq && c < jq + n) G[r + (size_t)(c - jq) * nus] = usjac[p];
    }
    for (int i = 0; i < nus; i++) wc[i] = opt->state_weight;
    int rank0 = 0;
    rc = select_level(C, nus, G, wc, opt->pivot_tol, given_first, moving, free_coord, free_cand, &rank0, st);
    if (rc) goto done;
    if (rank0 < m) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "singular configuration: the constraint Jacobian Phi_q has rank %d < %d constraints (rank "
                       "deficiency %d): redundant constraints or a singular (locked or bifurcating) configuration; "
                       LIN_RANK_ADVICE,
                       rank0, m, m - rank0);
        goto done;
    }
    int z0 = 0;
    for (int i = 0; i < nus; i++) {
        if (free_cand[i]) {
            S[z0].kind = MBL_SREF_USER;
            S[z0++].index = i;
        } else {
            lin->nsel_dropped++;
            append(lin->selection, sizeof lin->selection, "dropped user state '%s'%s; ", mv->us_text[i],
                   "");
        }
    }
    for (int j = 0; j < n; j++)
        if (free_coord[j]) {
            S[z0].kind = MBL_SREF_COORD;
            S[z0++].index = j;
            if (nus > 0) lin->nsel_added++;
        }
    /* the added coordinates by name, the first SELECT_ADDED_NAMES of them (a flexible body adds
     * hundreds, and the report's line has room for the caution after them) */
    for (int j = 0, shown = 0; nus > 0 && j < n && lin->nsel_added > 0; j++)
        if (free_coord[j] && shown < SELECT_ADDED_NAMES) {
            append(lin->selection, sizeof lin->selection, shown ? ", '%s'%s" : "added coordinates '%s'%s", mv->qname[j],
                   "");
            if (++shown == SELECT_ADDED_NAMES || shown == lin->nsel_added) {
                char more[64] = "";
                if (lin->nsel_added > shown) snprintf(more, sizeof more, " and %d more", lin->nsel_added - shown);
                append(lin->selection, sizeof lin->selection, "%s%s; ", more, "");
            }
        }
    if (z0 == 0) {
        rc = mbl_error(st, MBL_EMODEL, "the model has no degrees of freedom at this point (%d coordinates, "
                       "constraint rank %d)", n, rank0);
        goto done;
    }

    /* ---- velocity level ---- */
    int z1 = 0;
    if (k == 0 && nuvs == 0) {
        for (int i = 0; i < z0; i++) {
            W[i].kind = MBL_SREF_SDOT;
            W[i].index = i;
        }
        z1 = z0;
    } else {
        /* C1 = [Phi_q; A_nh] (the velocity constraints' dependence on v) */
        mbla_csc_free(C);
        C = NULL;
        int g_vel[2] = {MBL_ROW_PHID, MBL_ROW_NH};
        rc = constraint_csc(md, ev->jac, g_vel, 2, MBL_BLK_V, &C, st);
        if (rc) goto done;
        /* candidates: user velocity states, then the derivatives of the position states */
        int ncand = nuvs + z0;
        mbl_free(G);
        G = mbl_calloc((size_t)ncand * (size_t)n + 1, sizeof *G);
        if (!G) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection (%d candidates x %d coordinates)", ncand, n);
            goto done;
        }
        vel_candidates(md, usjac, S, z0, G);
        for (int i = 0; i < nuvs; i++) wc[i] = opt->state_weight * opt->state_weight;
        for (int i = 0; i < z0; i++) wc[nuvs + i] = opt->state_weight;
        int rank1 = 0;
        rc = select_level(C, ncand, G, wc, opt->pivot_tol, given_first, moving, free_coord, free_cand, &rank1, st);
        if (rc) goto done;
        if (rank1 < m + k) {
            rc = mbl_error(st, MBL_ESINGULAR,
                           "singular configuration: the velocity constraint Jacobian [Phi_q; A_nh] has rank %d < %d "
                           "(rank deficiency %d): redundant constraints or a singular configuration; " LIN_RANK_ADVICE,
                           rank1, m + k, m + k - rank1);
            goto done;
        }
        z1 = vel_states(md, free_cand, free_coord, z0, W, lin);
    }
    if (lin->selection[0] == '\0')
        snprintf(lin->selection, sizeof lin->selection, "%s", nus ? "user states used as given" : "states chosen among the coordinates");
    else {
        size_t l = strlen(lin->selection);
        if (l >= 2) lin->selection[l - 2] = '\0'; /* drop the trailing "; " */
    }
    *Sout = S;
    *Wout = W;
    *z0out = z0;
    *z1out = z1;
    S = W = NULL;
done:
    mbla_csc_free(C);
    mbl_free(G), mbl_free(wc), mbl_free(free_coord), mbl_free(free_cand), mbl_free(S), mbl_free(W);
    return rc;
}
