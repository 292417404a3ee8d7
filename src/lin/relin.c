/* Re-linearization at a new point (mbl_relinearize: sweeps, Floquet orbits) in the workspace of
 * augmented.c, without allocating.
 *
 * Scaling: the power-of-2 row and column factors of both matrices are those of the workspace's
 * first point, frozen (aug_relin_prepare folds them into one factor per triplet, applied as the
 * values are gathered); KLU's own row scaling is off. A sweep makes every workspace at its first
 * point, so the factors are the same in every thread and block.
 *
 * One factorization per point (w->direct): when the kinematic system applies (see augmented.c's
 * opening comment), only it is factored. Its responses to S-bar and W-bar (a_k', v', q' at zero
 * W-bar-dot) give M-hat, C-hat, K-hat and F as in a one-shot linearization. The augmented
 * system's responses differ from them only in the accelerations: v' and q' are fixed by the same
 * constraint and state rows, and a' - a_k' lies in the null space of [Phi_q; A], which v_W spans
 * (W_v v_W = I), so a' = a_k' + v_W dW. The equations of motion projected on v_W (v_W^T Phi_q^T =
 * 0, v_W^T A^T = 0) then give dW from a dense system of order z1:
 *     M-hat [dW_S, dW_W, dW_r] = [-K-hat, -C-hat, F],
 * and the rest (dS, C, D) follows from [a'; v'; q'] by the chain rule as in augmented.c. The
 * result equals the two-factorization one to rounding. Used when the multipliers enter the
 * equations of motion as Phi_q^T lambda + A^T mu (a model that says otherwise, model_view.ext, has no
 * kinematic system; checked again numerically at the first point), the inputs only the
 * equations of motion, the outputs and user states no multiplier, and the right-hand sides fit in
 * one block; otherwise both matrices are factored as in a one-shot linearization. A one-shot
 * (mbl_linearize) whose pattern allows it takes the same path at its only point (augmented.c,
 * oneshot_direct), its M-hat factored once (mbla_dlu_new) instead of refactored. */
#include <math.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "lin/methods_internal.h"
#include "lin/relin_jac.h"
#include "model/jac_cols.h"

/* Re-linearization checks the KLU pivot ratio at each point and computes the 1-norm condition
 * estimate only when the ratio falls below this. */
#define RELIN_RCOND_CHECK 1e-8
/* The one-factorization path needs |v_W^T R_lambda| <= this times the sum of the magnitudes of its
 * terms at the first point (multipliers entering as Phi_q^T lambda + A^T mu, which v_W annihilates
 * to rounding). */
#define RELIN_MULT_TOL 1e-10
/* v_W^T B in a sweep is a plain loop, not a dgemm call (about 1,500 instructions of call overhead
 * each), when n z1 max(z0, z1) is at most this many multiply-adds (chains of a few links). */
#define RELIN_SMALL_PRODUCT 2048.0

/* Every entry of rows [r0, r1) of R in a column of the unknowns [a lam mu v q ...] below N is a
 * kinematic one (a, v or q). */
static int rows_kinematic(const model_view *mv, const sparse_rows *R, int r0, int r1, int N)
{
    for (int p = R->ptr[r0]; p < R->ptr[r1]; p++)
        if (R->col[p] < N && aug_kin_col(mv, R->col[p]) < 0) return 0;
    return 1;
}

/* v_W^T R_lambda (and R_mu) = 0 at the first point, relative to its terms (RELIN_MULT_TOL) */
int aug_multipliers_projected_out(const mbl_lin_work *w, const mbl_linear *lin, mbl_status *st, int *ok)
{
    const mbl_model *md = w->md;
    const model_view *mv = &w->ev.mv;
    int n = mv->n, z1 = w->z1, jl = mv->blk0[MBL_BLK_LAMBDA], nm = mv->m + mv->k;
    int eom1 = mv->row0[MBL_ROW_EOM + 1];
    double *acc = mbl_calloc(2 * (size_t)nm * (size_t)z1 + 1, sizeof *acc);
    if (!acc) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *mag = acc + (size_t)nm * z1;
    int p0, p1;
    model_jac_col_range(md, jl, jl + nm, &p0, &p1);
    for (int p = p0; p < p1; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p] - jl;
        if (r >= eom1 || c < 0 || c >= nm) continue;
        for (int i = 0; i < z1; i++) {
            double t = lin->v_W[r + (size_t)i * n] * w->ev.jac[p];
            acc[c + (size_t)i * nm] += t;
            mag[c + (size_t)i * nm] += fabs(t);
        }
    }
    *ok = 1;
    for (size_t e = 0; e < (size_t)nm * z1; e++)
        if (!(fabs(acc[e]) <= RELIN_MULT_TOL * mag[e])) *ok = 0;
    mbl_free(acc);
    return 0;
}

int aug_direct_structural(const mbl_lin_work *w)
{
    const model_view *mv = &w->ev.mv;
    int nus = mv->nus, nuvs = mv->nuvs, N = w->N, jr = mv->blk0[MBL_BLK_R];
    int eom1 = mv->row0[MBL_ROW_EOM + 1];
    if (!w->kin || mv->nX || w->nrhs > w->xcols || w->z0 + w->z1 > w->kcols || w->z1 == 0) return 0;
    for (int p = 0; mv->nr > 0 && p < mv->jac.nz; p++) /* (no input columns: none) */
        if (mv->jac.col[p] >= jr && mv->jac.row[p] >= eom1) return 0; /* an input in a constraint */
    for (int p = 0; p < w->Y.ptr[mv->ny]; p++)
        if (w->Y.col[p] < jr && aug_kin_col(mv, w->Y.col[p]) < 0) return 0; /* an output of lambda, mu */
    /* the rows of sdot, sddot and w, wdot: accelerations, speeds and coordinates only */
    return rows_kinematic(mv, &w->U, nus, 3 * nus, N) && rows_kinematic(mv, &w->U, 3 * nus + nuvs, 3 * nus + 2 * nuvs, N);
}

/* Whether one factorization (the kinematic system's) serves every point: see the opening comment */
static int direct_applies(const mbl_lin_work *w, const mbl_linear *lin, mbl_status *st, int *ok)
{
    *ok = 0;
    if (!aug_direct_structural(w)) return 0;
    return aug_multipliers_projected_out(w, lin, st, ok);
}

/* The matrix entries x (map: the entry of each triplet) at the point in w->ev: the triplets' values
 * from their sources times their frozen scale factors, summed in the triplets' order (the first
 * into an entry assigns it). */
static void refill_scaled(const mbl_lin_work *w, int nz, const int *tsrc, const double *tsc, const int *map,
                          const unsigned char *first, double *x)
{
    const double *usjac = w->ev.us + 3 * w->ev.mv.nus + 2 * w->ev.mv.nuvs;
    for (int t = 0; t < nz; t++) {
        int s = tsrc[t];
        double v = (s >= 0 ? w->ev.jac[s] : s == TSRC_ONE ? 1.0 : usjac[-s - 2]) * tsc[t];
        if (first[t]) x[map[t]] = v;
        else x[map[t]] += v;
    }
}

/* first[t] = 1 for the first triplet into each of the nnz entries (map) */
static unsigned char *first_flags(int nz, const int *map, int nnz)
{
    unsigned char *f = mbl_calloc((size_t)nz + 1, 1), *seen = mbl_calloc((size_t)nnz + 1, 1);
    int ok = f && seen;
    for (int t = 0; ok && t < nz; t++) f[t] = !seen[map[t]], seen[map[t]] = 1;
    mbl_free(seen);
    if (!ok) mbl_free(f);
    return ok ? f : NULL;
}

int aug_relin_prepare(mbl_lin_work *w, const mbl_linear *lin, mbl_status *st)
{
    w->tsc = mbl_alloc_array((size_t)w->nz + 1, sizeof *w->tsc);
    w->ktsc = mbl_alloc_array((size_t)(w->kin ? w->nzk : 0) + 1, sizeof *w->ktsc);
    w->tfirst = first_flags(w->nz, w->map, w->Aug->p[w->Aug->n]);
    w->ktfirst = w->kin ? first_flags(w->nzk, w->kmap, w->Kin->p[w->Kin->n]) : mbl_calloc(1, 1);
    w->mdiag = mbl_alloc_array((size_t)w->ev.mv.n + 1, sizeof *w->mdiag);
    if (!w->tsc || !w->ktsc || !w->tfirst || !w->ktfirst || !w->mdiag) return mbl_error(st, MBL_ENOMEM, "out of memory");
    w->nmdiag = lin_mass_diag(&w->ev.mv, w->mdiag);
    w->small_vw = (double)w->ev.mv.n * w->z1 * (w->z0 > w->z1 ? w->z0 : w->z1) <= RELIN_SMALL_PRODUCT;
    for (int t = 0; t < w->nz; t++) w->tsc[t] = w->er[w->ti[t]] * w->ec[w->tj[t]];
    for (int t = 0; w->kin && t < w->nzk; t++) w->ktsc[t] = w->kr[w->kti[t]] * w->kc[w->ktj[t]];
    int rc = mbla_klu_set_row_scale(w->lu, 0, st);
    if (!rc && w->kin) rc = mbla_klu_set_row_scale(w->klu_k, 0, st);
    int ok = 0;
    if (!rc) rc = aug_dense_prepare(w, st);
    if (!rc) rc = direct_applies(w, lin, st, &ok);
    if (rc || !ok) return rc;
    int z1 = w->z1;
    w->ywork = mbl_alloc_array((size_t)z1 * (size_t)w->nrhs + 1, sizeof *w->ywork);
    if (!w->ywork) return mbl_error(st, MBL_ENOMEM, "out of memory");
    rc = mbla_dlu_new(z1, lin->M, z1, &w->mlu, st);
    if (rc == MBL_ESINGULAR) return 0; /* checked at each point again; the first point passed the states' test */
    w->direct = !rc;
    return rc;
}

/* The point's solution from the kinematic system alone (the opening comment): the kinematic
 * responses in w->Xk (aug_finish_mck done) and M-hat factored in w->mlu; dW by the dense solve,
 * then the augmented system's responses, the state derivatives, C and D. Also the one-shot's path
 * (augmented.c, work_factor). */
int aug_direct_finish(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, z0 = w->z0, z1 = w->z1, zz = z0 + z1, nrhs = w->nrhs, N = w->N, Nk = w->Nk, rc = 0;
    int ja = mv->blk0[MBL_BLK_A], jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    double *Y = w->ywork, *X = w->X;
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < z1; i++)
            Y[i + (size_t)j * z1] = j < z0 ? -lin->K[i + (size_t)j * z1]
                                    : j < zz ? -lin->Cd[i + (size_t)(j - z0) * z1]
                                             : lin->F[i + (size_t)(j - zz) * z1];
    /* a column at a time: OpenBLAS 0.3.21 takes dgetrs with several right-hand sides to its threaded
     * path whatever the order (2.6 us of CPU per call at order 2 on 2 threads, 0.1 us one by one) */
    for (int j = 0; j < nrhs; j++)
        if ((rc = mbla_dlu_solve(w->mlu, 'N', 1, Y + (size_t)j * z1, z1, st))) return rc;
    /* the augmented system's responses [a' = a_k' + v_W dW; 0; 0; v'; q'] (inputs: a' = v_W dW) */
    memset(X, 0, (size_t)N * (size_t)nrhs * sizeof *X);
    /* v_W dW by a loop at a few links, else by dgemm (N = 16 chain: 48 x 16 x 32, 200 k instructions
     * of loop against 60 k) */
    int small = (double)n * z1 * nrhs <= RELIN_SMALL_PRODUCT;
    for (int j = 0; j < nrhs; j++) {
        double *x = X + (size_t)j * N;
        if (j < zz) {
            const double *xk = w->Xk + (size_t)((j - z0 + zz) % zz) * Nk;
            memcpy(x + ja, xk, (size_t)n * sizeof *x);
            memcpy(x + jv, xk + n, (size_t)n * sizeof *x);
            memcpy(x + jq, xk + 2 * n, (size_t)n * sizeof *x);
        }
        for (int l = 0; l < z1 && small; l++) {
            double y = Y[l + (size_t)j * z1];
            const double *v = lin->v_W + (size_t)l * n;
            for (int i = 0; i < n; i++) x[ja + i] += v[i] * y;
        }
    }
    if (!small && (rc = mbla_gemm('N', 'N', n, nrhs, z1, 1.0, lin->v_W, n, Y, z1, 1.0, X + ja, N, st))) return rc;
    aug_finish_post_block(w, lin, 0, nrhs, aug_finish_dS_init(w));
    aug_finish_assemble(w, lin);
    return 0;
}

/* The point's solution from the kinematic system alone (the opening comment); the system is
 * refilled and factored. */
static int finish_direct(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    int rc = aug_finish_mck(w, lin, st); /* Xk: the kinematic responses, W-bar columns first */
    /* the same states' test as a one-shot linearization, before M-hat is factored */
    if (!rc) rc = lin_check_states_at(w->md, w->ev.jac, w->mdiag, w->nmdiag, lin, &w->opt, st);
    if (!rc) rc = mbla_dlu_refactor(w->mlu, lin->M, w->z1, st);
    if (rc == MBL_ESINGULAR) return aug_singular_error(st, 0.0);
    return rc ? rc : aug_direct_finish(w, lin, st);
}

/* Refactor the kinematic system (refilled); its pivot-ratio estimate in *rcond */
static int refactor_kin(mbl_lin_work *w, double *rcond, mbl_status *st)
{
    int rc = mbla_klu_refactor(w->klu_k, w->Kin, st);
    if (rc == MBL_ESINGULAR) return aug_kin_singular_error(st, 0.0);
    if (!rc) rc = mbla_klu_rcond(w->klu_k, rcond, st);
    if (rc || *rcond >= RELIN_RCOND_CHECK) return rc;
    double condk = 0;
    rc = mbla_klu_condest(w->klu_k, w->Kin, &condk, st);
    if (rc) return rc;
    if (!(condk > 0 && 1.0 / condk >= w->opt.rcond_min)) return aug_kin_singular_error(st, condk);
    return 0;
}

/* Refactor the augmented matrix (refilled); its condition figure in lin->cond */
static int refactor_aug(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    double rcond = 0;
    int rc = mbla_klu_refactor(w->lu, w->Aug, st);
    if (rc == MBL_ESINGULAR) return aug_singular_error(st, 0.0);
    /* the cheap pivot-ratio check per point; the 1-norm estimate when it looks doubtful */
    if (!rc) rc = mbla_klu_rcond(w->lu, &rcond, st);
    if (rc) return rc;
    lin->cond = rcond > 0 ? 1.0 / rcond : INFINITY;
    if (rcond >= RELIN_RCOND_CHECK) return 0;
    rc = mbla_klu_condest(w->lu, w->Aug, &lin->cond, st);
    if (rc) return rc;
    if (!w->kin && !(lin->cond > 0 && 1.0 / lin->cond >= w->opt.rcond_min)) return aug_singular_error(st, lin->cond);
    return 0;
}

int mbl_relinearize(mbl_lin_work *w, const mbl_point *pt, mbl_linear *lin, mbl_status *st)
{
    return lin_relinearize_jac(w, pt, NULL, NULL, lin, st);
}

/* The re-linearization at pt with the workspace's evaluation (w->ev) done: its values read from
 * w->ev for the whole call */
static int relin_evaluated(mbl_lin_work *w, const mbl_point *pt, mbl_linear *lin, mbl_status *st)
{
    const mbl_model *md = w->md;
    const model_view *mv = &w->ev.mv;
    int outputs = !w->opt.skip_outputs, rc = 0;
    aug_rows_refill(&w->U, 3 * mv->nus + 2 * mv->nuvs, w->ev.us + 3 * mv->nus + 2 * mv->nuvs);
    if (outputs) aug_rows_refill(&w->Y, mv->ny, w->ev.y + mv->ny);
    else memset(w->Y.val, 0, (size_t)w->Y.ptr[mv->ny] * sizeof *w->Y.val); /* C = D = 0 */
    if (w->dense) { /* an unconstrained tree (relin_dense.c); 1: M not positive definite here */
        rc = aug_dense_relin(w, lin, st);
        if (rc <= 0) {
            if (rc == MBL_ESINGULAR) mbl_error_prefix(st, "%s", mv->file);
            return rc;
        }
        /* the general path reads the Jacobian's values, which the dense evaluation did not make */
        rc = w->ddone ? lin_eval_at_given_syms(md, pt, &w->ev, outputs, NULL, NULL, st) : 0;
        if (rc) return rc;
    }
    if (w->kin) {
        double rcond = 0;
        refill_scaled(w, w->nzk, w->ktsrc, w->ktsc, w->kmap, w->ktfirst, w->Kin->x);
        rc = refactor_kin(w, &rcond, st);
        if (!rc && w->direct) {
            lin->cond = rcond > 0 ? 1.0 / rcond : INFINITY;
            rc = finish_direct(w, lin, st);
            if (rc == MBL_ESINGULAR) mbl_error_prefix(st, "%s", mv->file);
            return rc;
        }
    }
    if (!rc) {
        refill_scaled(w, w->nz, w->tsrc, w->tsc, w->map, w->tfirst, w->Aug->x);
        rc = refactor_aug(w, lin, st);
    }
    if (!rc) rc = aug_finish(w, lin, st);
    /* the same states' test as a one-shot linearization: a sweep refuses the same points */
    if (!rc) rc = lin_check_states_at(md, w->ev.jac, w->mdiag, w->nmdiag, lin, &w->opt, st);
    if (rc == MBL_ESINGULAR) mbl_error_prefix(st, "%s", mv->file);
    return rc;
}

int lin_relinearize_jac(mbl_lin_work *w, const mbl_point *pt, const double *jac, const double *syms, mbl_linear *lin,
                        mbl_status *st)
{
    if (!w || !pt || !lin) return mbl_error(st, MBL_EARG, "mbl_relinearize: workspace, point or result is NULL");
    const mbl_model *md = w->md;
    const model_view *mv = &w->ev.mv;
    if (lin->nx != w->z0 + w->z1 + mv->nX || lin->n != mv->n || lin->nu != mv->nr || lin->ny != mv->ny)
        return mbl_error(st, MBL_EDIM, "mbl_relinearize: the linear model was not made by this workspace");
    /* given values (the caller's, a sweep's warm corrector's, or the point's own from
     * mbl_operating_point) read in place for the call, as a lean evaluator reads them, not copied
     * into the workspace's own (9 KB a point on the N = 20 four-bar); w->ev.jac is the workspace's
     * own again on return */
    int lean = w->ev.lean;
    w->ev.lean = 1;
    /* an unconstrained tree with constant text partials: its entries straight into the dense path's
     * matrices (aug_dense_eval), unless values are given */
    int rc = w->ddirect && !jac ? aug_dense_eval(w, pt, !w->opt.skip_outputs, st) : (w->ddone = 0);
    if (!rc && !w->ddone) rc = lin_eval_at_given_syms(md, pt, &w->ev, !w->opt.skip_outputs, jac, jac ? syms : NULL, st);
    w->ev.lean = lean;
    if (!rc) rc = relin_evaluated(w, pt, lin, st);
    if (!lean) w->ev.jac = w->ev.jac_buf;
    return rc;
}
