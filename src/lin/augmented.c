/* The augmented method of source 000 (Eq. 17, 23-25, Table 1, Eq. 29-30), the default.
 *
 * With T(q) = I (v = dq/dt) the unknowns of the sensitivity system are
 *     X = [vdot (n); lambda (m); mu (k); v (n); q (n)]
 * and its rows are the linearized equations
 *     EOM (n), Phi'' (m), c' (k), Phi' (m), c (k), Phi (m), S = s(q) (z0), W = w(q, v) (z1)
 * (rows 23b and 23g of Table 1 are eliminated exactly: dq/dt = v and dS/dt = W are identities).
 * With user ODE states X and implicit variables Z (source 000 Eq. 10) the unknowns add der(X), Z,
 * X and the rows the ode (nX) and implicit-variable (nZ) equations and X = X-bar: x = [S; W; X].
 * Generalized speeds u = T(q) q' (Eq. 14) are velocity states W = w(q, v): their rows carry T and
 * [T q']_q of Table 1 row 2.
 * The right-hand sides are unit vectors for S-bar and W-bar and -dF/dr for the inputs; one
 * sparse LU (KLU) serves all z0 + z1 + nr of them. The state derivatives follow by the chain
 * rule from the exact Jacobians of sdot, sddot and wdot.
 * M-hat, C-hat, K-hat and F (Eq. 29-30) are not taken from -M-hat dW/dS (that product cancels: on
 * a stiff model dW/dS holds entries of size omega_max^2 and the low modes' stiffness is lost in
 * their rounding). They are projected instead: a second, purely kinematic system (rows Phi'', c',
 * Phi', c, Phi, S, W and dW/dt = W-bar-dot; unknowns vdot, v, q) gives the responses a', v', q' to
 * S-bar and W-bar at zero W-bar-dot, and with v_W^T Phi_q^T = 0
 *     M-hat = v_W^T M v_W,  C-hat = v_W^T (M a'_W + R_v v_W),  K-hat = v_W^T (M a'_S + R_v v'_S + R_q q'_S),
 *     F = -v_W^T R_r.
 * Its condition (not that of the whole augmented matrix, whose conditioning grows with the ratio of
 * the highest to the lowest frequency) decides whether the states parametrize the motion.
 * A holonomic one-shot whose pattern allows it (relin.c's one-factorization path: multipliers only
 * as Phi_q^T lambda + A^T mu, inputs only in the equations of motion, no ode states, every
 * right-hand side in one block) factors the kinematic system alone and takes dW from M-hat (oneshot_direct);
 * lin->cond is then the kinematic system's estimate. A sweep's first point factors both. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "la/la_equilibrate.h"
#include "lin/augmented_internal.h"
#include "lin/methods_internal.h"
#include "model/jac_cols.h"


static int rows_of(const mbl_sjac *J, const double *val, int nrows, sparse_rows *R)
{
    /* one allocation: val (nz + 1 doubles), then ptr (nrows + 2), col, src (nz + 1 each) and the
     * scratch fill (nrows + 1) as ints; R->val is the block (rows_free) */
    size_t nz1 = (size_t)J->nz + 1, ni = (size_t)nrows + 2 + 2 * nz1 + (size_t)nrows + 1;
    if (ni > (SIZE_MAX - nz1 * sizeof(double)) / sizeof(int)) return MBL_ENOMEM;
    R->val = mbl_malloc(nz1 * sizeof(double) + ni * sizeof(int));
    if (!R->val) return MBL_ENOMEM;
    R->ptr = (int *)(R->val + nz1);
    R->col = R->ptr + (size_t)nrows + 2;
    R->src = R->col + nz1;
    int *fill = R->src + nz1;
    memset(R->ptr, 0, ((size_t)nrows + 2) * sizeof *R->ptr);
    for (int p = 0; p < J->nz; p++) R->ptr[J->row[p] + 1]++;
    for (int i = 0; i < nrows; i++) R->ptr[i + 1] += R->ptr[i];
    memcpy(fill, R->ptr, (size_t)nrows * sizeof *fill);
    for (int p = 0; p < J->nz; p++) {
        int d = fill[J->row[p]]++;
        R->col[d] = J->col[p];
        R->src[d] = p;
        R->val[d] = val[p];
    }
    return 0;
}

void aug_rows_refill(sparse_rows *R, int nrows, const double *val)
{
    for (int d = 0; d < R->ptr[nrows]; d++) R->val[d] = val[R->src[d]];
}

static void rows_free(sparse_rows *R)
{
    mbl_free(R->val); /* the block (rows_of) */
}

/* Many arrays in one allocation: a first pass adds up their sizes (each aligned to 16 bytes), a
 * second hands out the pieces of one block (one malloc and one free instead of a dozen each: the
 * one-shot of a small model spends more in the allocator than in its solves). A workspace above
 * AUG_ONE_BLOCK bytes has each array allocated on its own as before (one block of that size would
 * be mapped and unmapped by the allocator at every call: 50 k page faults in 400 one-shots of a
 * 32-link chain). */
#define AUG_ONE_BLOCK 65536
typedef struct carve {
    aug_alloc *a;
    size_t off;
    int pass, fail;
} carve;

static inline void *carve_array(carve *c, size_t count, size_t size)
{
    size_t at = (c->off + 15) & ~(size_t)15;
    c->off = at + count * size;
    if (!c->pass) return NULL;
    if (c->a->block) return (char *)c->a->block + at;
    void *p = c->a->n < AUG_ALLOC_PARTS ? mbl_alloc_array(count, size) : NULL;
    if (p) c->a->part[c->a->n++] = p;
    else c->fail = 1;
    return p;
}

/* After the first pass: the block when the sizes fit; 0, or MBL_ENOMEM */
static int carve_second(carve *c, mbl_status *st)
{
    if (c->off <= AUG_ONE_BLOCK && !(c->a->block = mbl_malloc(c->off)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    c->off = 0;
    c->pass = 1;
    return 0;
}

static void aug_alloc_free(aug_alloc *a)
{
    mbl_free(a->block);
    for (int i = 0; i < a->n; i++) mbl_free(a->part[i]);
}

/* One of the arrays back to the heap before the next large allocation (a one-shot's triplets once
 * their matrix is assembled); in one block, the block keeps it. *p becomes NULL. */
static void aug_alloc_release(aug_alloc *a, void *pp)
{
    void **p = pp;
    for (int i = 0; *p && !a->block && i < a->n; i++)
        if (a->part[i] == *p) mbl_free(a->part[i]), a->part[i] = NULL;
    *p = NULL;
}

/* ---- the sweep workspace: everything that does not change from one point to the next ---- */

void mbl_lin_work_free(mbl_lin_work *w)
{
    if (!w) return;
    lin_eval_free(&w->ev);
    rows_free(&w->U);
    rows_free(&w->Y);
    mbl_free(w->S), mbl_free(w->W);
    aug_alloc_free(&w->wa), aug_alloc_free(&w->ka); /* the arrays of work_prepare and kin_prepare */
    mbla_csc_free(w->Kin);
    mbla_klu_free(w->klu_k);
    mbla_csc_free(w->Aug);
    mbla_klu_free(w->lu);
    mbl_free(w->tsc), mbl_free(w->ktsc), mbl_free(w->ywork);
    mbl_free(w->tfirst), mbl_free(w->ktfirst), mbl_free(w->mdiag);
    mbla_dlu_free(w->mlu);
    mbl_free(w->dcptr), mbl_free(w->dcrow), mbl_free(w->diwork), mbl_free(w->desrc), mbl_free(w->dedst), mbl_free(w->dbuf);
    mbl_free(w->dminv), mbl_free(w->dmwork), mbl_free(w->dkcm), mbl_free(w->dtpl), mbl_free(w->ddiag);
    mbl_free(w);
}

/* aug_singular_error (exact singularity) naming a coordinate without mass if there is one */
static int aug_singular_named(const mbl_lin_work *w, mbl_status *st)
{
    int i = w->ev.jac ? lin_massless_coordinate(w->md, w->ev.jac) : -1;
    if (i < 0) return aug_singular_error(st, 0.0);
    const char *q = mbl_model_coord_name(w->md, i);
    char note[200];
    return mbl_error(st, MBL_ESINGULAR,
                     "the augmented matrix (source 000 Table 1) is singular at this point: coordinate '%s' has no "
                     "mass here (M(%s, %s) = 0) and no constraint holds it, a degree of freedom without inertia%s",
                     q, q, q, lin_mass_set_note(w->md, i, note, sizeof note));
}

int aug_singular_error(mbl_status *st, double cond)
{
    if (cond > 0)
        return mbl_error(st, MBL_ESINGULAR,
                         "the augmented matrix (source 000 Table 1) is numerically singular (condition estimate %.3g after "
                         "equilibration): "
                         "a singular configuration or states that do not parametrize the motion",
                         cond);
    return mbl_error(st, MBL_ESINGULAR,
                     "the augmented matrix (source 000 Table 1) is singular at this point: the reduced mass matrix "
                     "is singular or the states do not parametrize the motion (a singular configuration)");
}

/* Rows and columns of the augmented matrix carry different units (forces, accelerations,
 * velocities, lengths, angles; entries from 1 to Omega^2 or k/m): equilibrate it in place with
 * exact power-of-2 factors before the factorization, so the condition estimate that decides a
 * refusal is that of the scaled matrix (invariant under a change of units), and the solve is
 * X = diag(ec) Aug^-1 diag(er) B. A sweep keeps the factors of its first point (relin.c). */
static void equilibrate(mbl_lin_work *w)
{
    la_csc_equilibrate_ws(w->Aug, MBLA_EQUILIBRATE_MAXITER_DEFAULT, 0, w->er, w->ec, w->ework);
}

/* Values of triplets at the point in w->ev from their sources. */
void aug_fill_values(const mbl_lin_work *w, int nz, const int *tsrc, double *tx)
{
    const double *usjac = w->ev.us + 3 * w->ev.mv.nus + 2 * w->ev.mv.nuvs;
    for (int t = 0; t < nz; t++) {
        int s = tsrc[t];
        tx[t] = s >= 0 ? w->ev.jac[s] : s == TSRC_ONE ? 1.0 : usjac[-s - 2];
    }
}


int aug_kin_singular_error(mbl_status *st, double cond)
{
    if (cond > 0)
        return mbl_error(st, MBL_ESINGULAR,
                         "the kinematic rows of the augmented matrix (constraints and states, source 000 Table 1) are "
                         "numerically singular (condition estimate %.3g after equilibration): a singular configuration "
                         "or states that do not parametrize the motion",
                         cond);
    return mbl_error(st, MBL_ESINGULAR,
                     "the kinematic rows of the augmented matrix (constraints and states, source 000 Table 1) are "
                     "singular at this point: a singular configuration or states that do not parametrize the motion");
}

/* The kinematic system's triplets from those of the augmented matrix (its constraint, S and W rows
 * restricted to the vdot, v, q columns) and the dW/dt rows; the work arrays. w->kin stays 0 when the
 * counts do not make it square (then M, C, K come from dW as in Eq. 29-30). */
static int kin_prepare(mbl_lin_work *w, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, nus = mv->nus, nuvs = mv->nuvs, z0 = w->z0, z1 = w->z1, zz = z0 + z1;
    int r0 = mv->row0[MBL_ROW_PHIDD], nc = mv->nF - r0;
    w->Nk = 3 * n;
    if (nc + z0 + 2 * z1 != w->Nk) return 0;
    const sparse_rows *U = &w->U;
    size_t cap = (size_t)w->nz + (size_t)U->ptr[3 * nus + 2 * nuvs] + (size_t)z1 + 1;
    w->kcols = zz < AUG_RHS_BLOCK ? zz : AUG_RHS_BLOCK;
    carve c = {&w->ka, 0, 0, 0};
    for (int pass = 0; pass < 2; pass++) { /* sizes, then the pieces of one block */
        if (pass && carve_second(&c, st)) return MBL_ENOMEM;
        w->kti = carve_array(&c, cap, sizeof *w->kti);
        w->ktj = carve_array(&c, cap, sizeof *w->ktj);
        w->ktsrc = carve_array(&c, cap, sizeof *w->ktsrc);
        w->kmap = w->sweep ? carve_array(&c, cap, sizeof *w->kmap) : NULL; /* refills only */
        w->ktx = carve_array(&c, cap, sizeof *w->ktx);
        w->Xk = carve_array(&c, (size_t)w->Nk * (size_t)w->kcols + 1, sizeof *w->Xk);
        w->G = carve_array(&c, (size_t)n * (size_t)zz + 1, sizeof *w->G);
        w->kr = carve_array(&c, (size_t)w->Nk + 1, sizeof *w->kr);
        w->kc = carve_array(&c, (size_t)w->Nk + 1, sizeof *w->kc);
        w->kwork = carve_array(&c, LA_EQUILIBRATE_WS(w->Nk, w->Nk) + 1, sizeof *w->kwork);
        /* (at most one per triplet: their count is known after the one pass below) */
        w->gent = carve_array(&c, 3 * (size_t)w->nz + 1, sizeof *w->gent);
    }
    if (c.fail) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* one pass over the augmented matrix's triplets: those from the Jacobian (tsrc >= 0) are its
     * entries in the columns below N, in their order, which hold the kinematic columns: the EOM
     * rows' give gent, the rows from r0 on (any source) the kinematic system's */
    int nk = 0, eom1 = mv->row0[MBL_ROW_EOM + 1];
    w->ng = 0;
    for (int t = 0; t < w->nz; t++) {
        int r = w->ti[t], c = r >= r0 || (r < eom1 && w->tsrc[t] >= 0) ? aug_kin_col(mv, w->tj[t]) : -1;
        if (c < 0) continue;
        if (r >= r0) {
            w->kti[nk] = r - r0, w->ktj[nk] = c, w->ktsrc[nk++] = w->tsrc[t];
        } else {
            int *e = w->gent + 3 * (size_t)w->ng++;
            e[0] = w->tsrc[t], e[1] = r, e[2] = c;
        }
    }
    for (int i = 0; i < z1; i++) {
        int row = nc + z0 + z1 + i, ur;
        const mbl_state_ref *Wi = &w->W[i];
        if (Wi->kind == MBL_SREF_COORD || (Wi->kind == MBL_SREF_SDOT && w->S[Wi->index].kind == MBL_SREF_COORD)) {
            int q = Wi->kind == MBL_SREF_COORD ? Wi->index : w->S[Wi->index].index;
            w->kti[nk] = row, w->ktj[nk] = q, w->ktsrc[nk++] = TSRC_ONE; /* d(v_q)/dt = vdot_q */
            continue;
        }
        ur = Wi->kind == MBL_SREF_SDOT ? 2 * nus + w->S[Wi->index].index : 3 * nus + nuvs + Wi->index;
        for (int p = U->ptr[ur]; p < U->ptr[ur + 1]; p++) {
            int c = aug_kin_col(mv, U->col[p]);
            if (c >= 0) w->kti[nk] = row, w->ktj[nk] = c, w->ktsrc[nk++] = -U->src[p] - 2;
        }
    }
    w->nzk = nk;
    w->kin = 1;
    return 0;
}

/* The pattern of the augmented matrix (Table 1) as triplets with their value sources: w->ti, tj,
 * tsrc, nz. */
static void work_pattern(mbl_lin_work *w)
{
    const mbl_model *md = w->md;
    const model_view *mv = &w->ev.mv;
    int N = w->N, z0 = w->z0, z1 = w->z1, nus = mv->nus, nX = mv->nX;
    const mbl_state_ref *S = w->S, *W = w->W;
    const sparse_rows *U = &w->U;
    int nz = 0;
    int jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    int p0, p1; /* the columns below N: where the pattern is sorted by column, its first p1 entries */
    model_jac_col_range(md, 0, N, &p0, &p1);
    if (model_jac_by_col(md) && p0 == 0) {
        if (p1 > 0) memcpy(w->ti, mv->jac.row, (size_t)p1 * sizeof *w->ti);
        if (p1 > 0) memcpy(w->tj, mv->jac.col, (size_t)p1 * sizeof *w->tj);
        for (int p = 0; p < p1; p++) w->tsrc[p] = p;
        nz = p1;
    } else {
        for (int p = p0; p < p1; p++)
            if (mv->jac.col[p] < N) w->ti[nz] = mv->jac.row[p], w->tj[nz] = mv->jac.col[p], w->tsrc[nz++] = p;
    }
    for (int i = 0; i < z0; i++) {
        int row = mv->nF + i;
        if (S[i].kind == MBL_SREF_COORD) {
            w->ti[nz] = row, w->tj[nz] = jq + S[i].index, w->tsrc[nz++] = TSRC_ONE;
        } else {
            int ur = S[i].index;
            for (int p = U->ptr[ur]; p < U->ptr[ur + 1]; p++)
                if (U->col[p] < N) w->ti[nz] = row, w->tj[nz] = U->col[p], w->tsrc[nz++] = -U->src[p] - 2;
        }
    }
    for (int i = 0; i < z1; i++) {
        int row = mv->nF + z0 + i, ur = -1;
        if (W[i].kind == MBL_SREF_COORD) {
            w->ti[nz] = row, w->tj[nz] = jv + W[i].index, w->tsrc[nz++] = TSRC_ONE;
            continue;
        }
        if (W[i].kind == MBL_SREF_SDOT) {
            const mbl_state_ref *sr = &S[W[i].index];
            if (sr->kind == MBL_SREF_COORD) {
                w->ti[nz] = row, w->tj[nz] = jv + sr->index, w->tsrc[nz++] = TSRC_ONE;
                continue;
            }
            ur = nus + sr->index;
        } else {
            ur = 3 * nus + W[i].index;
        }
        for (int p = U->ptr[ur]; p < U->ptr[ur + 1]; p++)
            if (U->col[p] < N) w->ti[nz] = row, w->tj[nz] = U->col[p], w->tsrc[nz++] = -U->src[p] - 2;
    }
    /* rows X = X-bar of the user ODE states */
    int jx = mv->blk0[MBL_BLK_X];
    for (int i = 0; i < nX; i++) w->ti[nz] = mv->nF + z0 + z1 + i, w->tj[nz] = jx + i, w->tsrc[nz++] = TSRC_ONE;
    w->nz = nz;
}

/* The augmented matrix assembled from its triplets, their values taken here (a one-shot by the
 * kinematic system alone never reads them; a one-shot's triplets then released), and
 * equilibrated. */
static int aug_assemble(mbl_lin_work *w, mbl_status *st)
{
    aug_fill_values(w, w->nz, w->tsrc, w->tx);
    int rc = mbla_csc_from_triplets(w->N, w->N, w->nz, w->ti, w->tj, w->tx, w->map, &w->Aug, st);
    if (rc) return rc;
    if (!w->sweep) { /* a one-shot's triplets: assembled (kin_prepare has taken its own from them) */
        aug_alloc_release(&w->wa, &w->ti), aug_alloc_release(&w->wa, &w->tj);
        aug_alloc_release(&w->wa, &w->tsrc), aug_alloc_release(&w->wa, &w->tx);
    }
    equilibrate(w);
    if (!w->sweep) aug_alloc_release(&w->wa, &w->ework); /* the equilibration's scratch */
    return 0;
}

/* The kinematic system assembled, equilibrated, factored; its condition estimate in *condk and
 * checked against rcond_min */
static int kin_factor(mbl_lin_work *w, const mbl_lin_options *opt, double *condk, mbl_status *st)
{
    int rc = mbla_csc_from_triplets(w->Nk, w->Nk, w->nzk, w->kti, w->ktj, w->ktx, w->kmap, &w->Kin, st);
    if (!w->sweep) {
        aug_alloc_release(&w->ka, &w->kti), aug_alloc_release(&w->ka, &w->ktj);
        aug_alloc_release(&w->ka, &w->ktsrc), aug_alloc_release(&w->ka, &w->ktx);
    }
    if (!rc) la_csc_equilibrate_ws(w->Kin, MBLA_EQUILIBRATE_MAXITER_DEFAULT, 0, w->kr, w->kc, w->kwork);
    /* block lower triangular by levels, each level's blocks small (la_klu_new_small) */
    if (!rc && w->sweep) {
        rc = la_klu_new_small(w->Kin, 0, &w->klu_k, st);
        if (!rc) rc = mbla_klu_condest(w->klu_k, w->Kin, condk, st);
    } else if (!rc) { /* a one-shot's: the matrix taken over, only its factors kept for the solves */
        rc = la_klu_new_taken_small(w->Kin, condk, &w->klu_k, st);
        w->Kin = NULL;
        aug_alloc_release(&w->ka, &w->kwork);
    }
    if (rc == MBL_ESINGULAR && !w->klu_k) rc = aug_kin_singular_error(st, 0.0);
    if (!rc && !(*condk > 0 && 1.0 / *condk >= opt->rcond_min)) rc = aug_kin_singular_error(st, *condk);
    return rc;
}

/* The one-shot's one factorization serves models whose second-order form spans no more than
 * ||K-hat||_1 / ||M-hat||_1 <= DIRECT_OMEGA2_MAX and (||C-hat||_1 / ||M-hat||_1)^2 <= DIRECT_OMEGA2_MAX
 * (1e20: frequencies of 1e10 rad/s). Beyond, the whole augmented matrix is factored, where cond_max
 * decides whether any digit is left (a Magic Formula tire with C = 1e40: C-hat / M-hat about 3e40),
 * as it did before this path took such models. */
#define DIRECT_OMEGA2_MAX 1e20

static int direct_in_range(const mbl_lin_work *w, const mbl_linear *lin)
{
    int z1 = w->z1;
    double m = mbla_norm1(z1, z1, lin->M, z1), k = mbla_norm1(z1, w->z0, lin->K, z1), c = mbla_norm1(z1, z1, lin->Cd, z1);
    return m > 0 && k / m <= DIRECT_OMEGA2_MAX && (c / m) * (c / m) <= DIRECT_OMEGA2_MAX; /* (NaN: out) */
}

/* A one-shot by the sweep's one-factorization path (relin.c: the kinematic system alone, then
 * M-hat of order z1 for dW); *done = 0 when the multipliers are not projected out at this point
 * or the model's scales are out of the path's range (direct_in_range): then the augmented matrix
 * as before. lin->cond: the kinematic system's estimate. */
static int oneshot_direct(mbl_lin_work *w, double condk, mbl_linear *lin, int *done, mbl_status *st)
{
    int ok = 0, rc = aug_finish_mck(w, lin, st);
    *done = 0;
    if (!rc) rc = aug_multipliers_projected_out(w, lin, st, &ok);
    if (rc || !ok || !direct_in_range(w, lin)) return rc;
    *done = 1;
    lin->cond = condk;
    w->ywork = mbl_alloc_array((size_t)w->z1 * (size_t)w->nrhs + 1, sizeof *w->ywork);
    if (!w->ywork) return mbl_error(st, MBL_ENOMEM, "out of memory");
    rc = mbla_dlu_new(w->z1, lin->M, w->z1, &w->mlu, st);
    if (rc == MBL_ESINGULAR) return aug_singular_named(w, st);
    return rc ? rc : aug_direct_finish(w, lin, st);
}

/* The kinematic system (when it applies) and the augmented matrix: assembled, equilibrated,
 * factored and their conditions checked; then the solve into lin (finish). A one-shot whose
 * pattern allows it (aug_direct_structural) factors the kinematic system only (oneshot_direct). */
static int work_factor(mbl_lin_work *w, const mbl_lin_options *opt, mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int rc = 0;
    /* the kinematic projection of M-hat, C-hat, K-hat assumes equations of motion whose multipliers
     * enter as Phi_q^T lambda + A^T mu only, without X, der(X), Z: Eq. 29-30 from dW otherwise */
    if (!mv->ext) rc = kin_prepare(w, st);
    if (rc) return rc;
    if (w->kin) aug_fill_values(w, w->nzk, w->ktsrc, w->ktx);
    /* nonholonomic models too (session 49): their defective zero eigenvalues (the rolling disc, the
     * bicycles) move by up to 3e-7 under the path's 1e-15 change in A, as they do between OpenBLAS
     * kernels; no other eigenvalue and no entry of the matrices beyond 1e-9 (docs/benchmarks.md) */
    int direct = !w->sweep && aug_direct_structural(w);
    /* the augmented matrix first where it is needed (a one-shot's triplets then freed before the
     * kinematic factorization) */
    if (!direct && (rc = aug_assemble(w, st))) return rc;
    if (w->kin) {
        double condk = 0;
        if ((rc = kin_factor(w, opt, &condk, st))) return rc;
        int done = 0;
        if (direct && ((rc = oneshot_direct(w, condk, lin, &done, st)) || done)) return rc;
        if (direct && (rc = aug_assemble(w, st))) return rc;
    }
    if (w->sweep) {
        rc = mbla_klu_new(w->Aug, NULL, &w->lu, st);
        if (rc == MBL_ESINGULAR) rc = aug_singular_named(w, st);
        if (rc) return rc;
        rc = mbla_klu_condest(w->lu, w->Aug, &lin->cond, st);
    } else { /* a one-shot's, as the kinematic system's */
        rc = mbla_klu_new_taken(w->Aug, &lin->cond, &w->lu, st);
        w->Aug = NULL;
        if (rc == MBL_ESINGULAR && !w->lu) rc = aug_singular_named(w, st);
        if (rc && !w->lu) return rc;
    }
    /* with the kinematic system regular the whole matrix is singular exactly when M-hat is (checked
     * after the solve); its condition otherwise grows with (omega_max / omega_min)^2 and is no
     * reason to refuse. Without the kinematic system rcond_min decides. */
    if (!rc && !w->kin && !(lin->cond > 0 && 1.0 / lin->cond >= opt->rcond_min)) rc = aug_singular_error(st, lin->cond);
    /* ... but past cond_max no digit of the solve is left in its weakest direction, whatever the cause */
    if (!rc && !(lin->cond <= opt->cond_max)) rc = lin_cond_refusal(w->md, w->ev.jac, lin->cond, opt->cond_max, st);
    if (!rc) rc = aug_finish(w, lin, st);
    return rc;
}

/* The names of the states S, W (and the ode states X), inputs and outputs of lin; MBL_ENOMEM when
 * one could not be made. */
static int aug_names(const model_view *mv, const mbl_state_ref *S, const mbl_state_ref *W, mbl_linear *lin)
{
    int z0 = lin->z0, z1 = lin->z1, nX = mv->nX, nx = lin->nx, nr = mv->nr, ny = mv->ny, rc = 0;
    for (int i = 0; i < z0; i++)
        lin->state_names[i] =
            lin_name_join(S[i].kind == MBL_SREF_COORD ? mv->qname[S[i].index] : mv->us_text[S[i].index], NULL);
    for (int i = 0; i < z1; i++) {
        if (W[i].kind == MBL_SREF_USER) lin->state_names[z0 + i] = lin_name_join(mv->uvs_text[W[i].index], NULL);
        else if (W[i].kind == MBL_SREF_COORD) lin->state_names[z0 + i] = lin_name_join("der(", mv->qname[W[i].index]);
        else lin->state_names[z0 + i] = lin_name_join("der(", lin->state_names[W[i].index]);
    }
    for (int i = 0; i < nX; i++) lin->state_names[z0 + z1 + i] = lin_name_join(mv->xname[i], NULL);
    for (int j = 0; j < nr; j++) lin->input_names[j] = lin_name_join(mv->rname[j], NULL);
    for (int j = 0; j < ny; j++) lin->output_names[j] = lin_name_join(mv->yname[j], NULL);
    for (int i = 0; i < nx; i++)
        if (!lin->state_names[i]) rc = MBL_ENOMEM;
    for (int j = 0; j < nr; j++)
        if (!lin->input_names[j]) rc = MBL_ENOMEM;
    for (int j = 0; j < ny; j++)
        if (!lin->output_names[j]) rc = MBL_ENOMEM;
    return rc;
}

/* Choose the states at pt, fix the pattern of the augmented matrix and analyse it; evaluate and
 * factor at pt. */
static int work_prepare(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const mbl_state_ref *Sg,
                        int zg, int sweep, mbl_lin_work **out, mbl_linear **linout, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, nr = mv->nr, ny = mv->ny, nus = mv->nus, nuvs = mv->nuvs;
    mbl_linear *lin = NULL, tmp;
    *out = NULL;
    *linout = NULL;
    mbl_lin_work *w = mbl_calloc(1, sizeof *w);
    if (!w) return mbl_error(st, MBL_ENOMEM, "out of memory");
    w->md = md;
    w->opt = *opt;
    w->sweep = sweep;
    w->N = mv->blk0[MBL_BLK_R]; /* unknowns without the inputs: [a lam mu v q Xdot Z X] */
    int N = w->N, rc = sweep ? lin_eval_init(md, &w->ev, st) : lin_eval_init_lean(md, &w->ev, st);
    if (!rc) rc = lin_eval_at(md, pt, &w->ev, st);
    memset(&tmp, 0, sizeof tmp);
    if (!rc && Sg) { /* given position states, their rates as the velocity states (see lin_states_frozen) */
        w->S = mbl_calloc((size_t)zg + 1, sizeof *w->S);
        w->W = mbl_calloc((size_t)zg + 1, sizeof *w->W);
        if (!w->S || !w->W) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < zg; i++) w->S[i] = Sg[i], w->W[i].kind = MBL_SREF_SDOT, w->W[i].index = i;
        w->z0 = w->z1 = zg;
        snprintf(tmp.selection, sizeof tmp.selection, "the position states and their rates");
    } else if (!rc) {
        rc = lin_select_states(md, &w->ev, opt, &tmp, &w->S, &w->z0, &w->W, &w->z1, st);
    }
    if (rc) goto fail;
    int z0 = w->z0, z1 = w->z1, nX = mv->nX, nx = z0 + z1 + nX;
    if (mv->nF + nx != N) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the augmented system is not square (%d equations, %d unknowns): redundant constraints; "
                       LIN_RANK_ADVICE,
                       mv->nF + nx, N);
        goto fail;
    }
    lin = lin_linear_alloc_x(n, z0, z1, nX, nr, ny);
    w->nrhs = nx + nr;
    int nus_rows = 3 * nus + 2 * nuvs;
    size_t cap = (size_t)mv->jac.nz + (size_t)mv->usjac.nz * 2 + (size_t)nx + 1;
    w->xcols = w->nrhs < AUG_RHS_BLOCK ? w->nrhs : AUG_RHS_BLOCK;
    carve c = {&w->wa, 0, 0, 0};
    for (int pass = 0; pass < 2; pass++) { /* sizes, then the pieces of one block */
        if (pass && carve_second(&c, NULL)) {
            c.fail = 1;
            break;
        }
        w->ti = carve_array(&c, cap, sizeof *w->ti);
        w->tj = carve_array(&c, cap, sizeof *w->tj);
        w->tsrc = carve_array(&c, cap, sizeof *w->tsrc);
        w->map = w->sweep ? carve_array(&c, cap, sizeof *w->map) : NULL; /* refills only */
        w->tx = carve_array(&c, cap, sizeof *w->tx);
        w->X = carve_array(&c, (size_t)N * (size_t)w->xcols + 1, sizeof *w->X);
        w->vw_ptr = carve_array(&c, (size_t)z1 + 2, sizeof *w->vw_ptr);
        w->vw_row = carve_array(&c, aug_vw_cap(n, z1), sizeof *w->vw_row);
        w->dS = carve_array(&c, (size_t)z0 * (size_t)w->nrhs + 1, sizeof *w->dS);
        w->dW = carve_array(&c, (size_t)z1 * (size_t)w->nrhs + 1, sizeof *w->dW);
        w->dXd = carve_array(&c, (size_t)nX * (size_t)w->nrhs + 1, sizeof *w->dXd);
        w->MvW = carve_array(&c, (size_t)n * (size_t)z1 + 1, sizeof *w->MvW);
        w->tmpy = carve_array(&c, (size_t)w->nrhs + 1, sizeof *w->tmpy);
        w->er = carve_array(&c, (size_t)N + 1, sizeof *w->er);
        w->ec = carve_array(&c, (size_t)N + 1, sizeof *w->ec);
        w->ework = carve_array(&c, LA_EQUILIBRATE_WS(N, N) + 1, sizeof *w->ework);
    }
    if (!lin || c.fail || rows_of(&mv->usjac, w->ev.us + nus_rows, nus_rows, &w->U) ||
        rows_of(&mv->yjac, w->ev.y + ny, ny, &w->Y)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    snprintf(lin->method, sizeof lin->method, "augmented");
    if (mv->nX)
        snprintf(lin->notes, sizeof lin->notes,
                 "source 000 Eq. 10 model (%d ode states, %d implicit variables): M-hat, C-hat, K-hat are the "
                 "mechanical part with the ode states held (Eq. 29-30 from dW); the eigenvalues are those of A",
                 mv->nX, mv->nZ);
    memcpy(lin->selection, tmp.selection, sizeof lin->selection);
    lin->nsel_added = tmp.nsel_added;
    lin->nsel_dropped = tmp.nsel_dropped;

    work_pattern(w);
    rc = work_factor(w, opt, lin, st);
    if (rc) goto fail;
    if (aug_names(mv, w->S, w->W, lin)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    /* the states' test shared by every method (M-hat against the model's mass scale) */
    rc = lin_check_states(md, w->ev.jac, lin, opt, st);
    if (rc) goto fail;
    *out = w;
    *linout = lin;
    return 0;
fail:
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    return rc;
}

int mbl_lin_work_new(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_lin_work **out,
                     mbl_linear **lin, mbl_status *st)
{
    if (!out || !lin) return mbl_error(st, MBL_EARG, "mbl_lin_work_new: out or lin is NULL");
    *out = NULL;
    *lin = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_lin_work_new: model or point is NULL");
    mbl_lin_options def;
    if (!opt) {
        mbl_lin_options_default(&def);
        opt = &def;
    }
    if (opt->method && strcmp(opt->method, "augmented"))
        return mbl_error(st, MBL_EARG, "mbl_lin_work_new: sweeps use the augmented method, not '%s'", opt->method);
    /* a sweep keeps the dense outputs: refuse up front what would not fit (no partial path here) */
    double need = lin_dense_bytes(md, pt, "augmented"), budget = lin_mem_budget(opt);
    int rc = need > budget ? lin_refuse_memory("mbl_lin_work_new: the dense linear model", need, budget,
                                               "sweeps have no partial-spectrum path", st)
                           : work_prepare(md, pt, opt, NULL, 0, 1, out, lin, st);
    if (!rc && (rc = aug_relin_prepare(*out, *lin, st))) {
        mbl_lin_work_free(*out), mbl_linear_free(*lin);
        *out = NULL, *lin = NULL;
    }
    if (rc) mbl_error_prefix(st, "%s", model_file(md));
    return rc;
}

/* Generalized speeds at a point with motion (lin_states_frozen): the linear model in the position
 * states and their rates, changed to the speeds by the constant map at the point (dense: the map
 * needs the kinematic sensitivities of reduce.c; above dense_n_max the instantaneous Jacobian is
 * kept and the notes say so). lin (the speeds' linearization) receives the changed matrices. */
static int aug_frozen(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const mbl_lin_work *w,
                      mbl_linear *lin, mbl_status *st)
{
    const model_view *mv = &w->ev.mv;
    int n = mv->n, z0 = w->z0, z1 = w->z1, r = 0, rc;
    size_t l = strlen(lin->notes);
    if (n > opt->dense_n_max) {
        snprintf(lin->notes + l, sizeof lin->notes - l,
                 "%spoint with motion: the instantaneous Jacobian in the speeds (n above dense_n_max; its spectrum "
                 "may differ from that of the position states' rates)",
                 l ? "; " : "");
        return 0;
    }
    mbl_lin_work *w2 = NULL;
    mbl_linear *ref = NULL;
    mbl_blocks B;
    mbl_rstates us, rf;
    int *rows = NULL;
    memset(&B, 0, sizeof B), memset(&us, 0, sizeof us), memset(&rf, 0, sizeof rf);
    rc = work_prepare(md, pt, opt, w->S, z0, 0, &w2, &ref, st);
    if (!rc) rc = lin_blocks_init(md, pt, &B, st);
    if (rc) goto done;
    rows = mbl_calloc((size_t)mv->m + 1, sizeof *rows);
    us.S = mbl_calloc((size_t)z0 + 1, sizeof *us.S);
    us.W = mbl_calloc((size_t)z1 + 1, sizeof *us.W);
    if (!rows || !us.S || !us.W || lin_rstates_alloc(&us, n, z0, z1)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(us.S, w->S, (size_t)z0 * sizeof *us.S);
    memcpy(us.W, w->W, (size_t)z1 * sizeof *us.W);
    lin_rstates_rows(mv, &us, B.ev.us + 3 * mv->nus + 2 * mv->nuvs);
    rc = lin_constraint_rank(&B, opt->rank_tol, rows, &r, st);
    if (!rc && lin_rstates_rates(&B, &us, &rf)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = lin_frozen_change(&B, rows, r, &us, &rf, opt->rcond_min, ref, st);
    if (rc) goto done;
    int nx = lin->nx, nu = lin->nu, ny = lin->ny;
    memcpy(lin->A, ref->A, (size_t)nx * nx * sizeof *lin->A);
    memcpy(lin->B, ref->B, (size_t)nx * nu * sizeof *lin->B);
    memcpy(lin->C, ref->C, (size_t)ny * nx * sizeof *lin->C);
    memcpy(lin->D, ref->D, (size_t)ny * nu * sizeof *lin->D);
    memcpy(lin->M, ref->M, (size_t)z1 * z1 * sizeof *lin->M);
    memcpy(lin->Cd, ref->Cd, (size_t)z1 * z1 * sizeof *lin->Cd);
    memcpy(lin->K, ref->K, (size_t)z1 * z0 * sizeof *lin->K);
    memcpy(lin->F, ref->F, (size_t)z1 * nu * sizeof *lin->F);
    memcpy(lin->q_S, ref->q_S, (size_t)n * z0 * sizeof *lin->q_S);
    memcpy(lin->v_W, ref->v_W, (size_t)n * z1 * sizeof *lin->v_W);
    snprintf(lin->notes + l, sizeof lin->notes - l,
             "%spoint with motion: computed in the position states and their rates, changed to the speeds by the "
             "constant map at the point",
             l ? "; " : "");
done:
    mbl_lin_work_free(w2);
    mbl_linear_free(ref);
    lin_blocks_free(&B);
    lin_rstates_free(&us), lin_rstates_free(&rf);
    mbl_free(rows);
    return rc;
}

int lin_augmented(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st)
{
    mbl_lin_work *w = NULL;
    int rc = work_prepare(md, pt, opt, NULL, 0, 0, &w, out, st);
    if (!rc && lin_states_frozen(md, pt, w->W, w->z0, w->z1)) rc = aug_frozen(md, pt, opt, w, *out, st);
    /* a tree whose mass is its bodies' alone: the responses from their M^-1 (relin_dense.c; the
     * factorization of the augmented matrix loses digits with M's condition, issue 69) */
    else if (!rc) rc = aug_dense_oneshot(w, *out, st);
    if (rc) {
        mbl_linear_free(*out);
        *out = NULL;
    }
    mbl_lin_work_free(w);
    return rc;
}

/* mbl_lin_options_default() and the dispatcher mbl_linearize() are in src/lin/methods.c. */
