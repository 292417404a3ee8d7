/* The memory budget (docs/linearization.md, "Large models: partial spectra"): the peak-memory
 * estimates of the dense path and of the sparse pencil's partial spectrum, the budget, and the
 * refusal when a request would exceed it. */
#include <math.h>
#include <string.h>

#include "lin/methods_internal.h"

#define GIB 1073741824.0
/* Fill-in allowance of the KLU factors of Ad - sigma E: bytes per nonzero of the pencil. Banded and
 * tree-like multibody pencils fill in little (the 20,000-oscillator pencil: none); the figure
 * leaves room for a factor ten. */
#define SPARSE_LU_BYTES_PER_NZ 160.0

double lin_dense_bytes(const mbl_model *md, const mbl_point *pt, const char *method)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    double n = mv->n, m = mv->m, k = mv->k, nr = mv->nr, ny = mv->ny;
    double rank = pt ? pt->rank_phi_q : m + k;
    double z1 = n - rank, z0 = fmin(n, z1 + k), nx = z0 + z1;
    if (method && !strcmp(method, "penalty")) z0 = z1 = n, nx = 2 * n; /* an ODE in all coordinates */
    /* the result: A, B, C, D, M, Cd, K, F, q_S, v_W */
    double lin = nx * nx + nx * nr + ny * nx + ny * nr + 3 * z1 * z1 + z1 * nr + n * nx;
    /* the eigen-solve: a copy of A, the eigenvectors, LAPACK work (about 4 nx), the mode shapes */
    double eig = 2 * nx * nx + 6 * nx + 2 * n * nx;
    double work;
    if (!method || !strcmp(method, "augmented")) {
        /* X and the kinematic solution in blocks of 256 right-hand sides, dS and dW, G (the
         * equation-of-motion rows times the kinematic responses), M v_W, the nonzero lists of v_W */
        double N = 3 * n + m + k, blk = fmin(nx + nr, 256), kblk = fmin(nx, 256);
        work = N * blk + 3 * n * kblk + nx * (nx + nr) + n * nx + n * z1 + 0.0625 * n * z1;
    } else if (!strcmp(method, "descriptor") && 2 * n + m + k <= 1e9) {
        double nd = 2 * n + m + k; /* dense blocks of the Jacobian, then E, Ad, VR, QZ copies */
        work = 3 * n * n + 4 * m * n + 4 * nd * nd;
    } else {
        work = 3 * n * n + 4 * m * n + 3 * n * nx; /* dense blocks of the Jacobian, the reduction */
    }
    return 8.0 * (lin + fmax(work, eig));
}

double lin_sparse_bytes(const mbl_model *md, int nev)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    double n = mv->n, m = mv->m, nd = 2 * n + m, nz = mv->jac.nz + n;
    double k = nev, ncv = fmin(nd, fmax(2 * k + 1, 20));
    /* triplets and CSC of Ad and E, KLU factors, ARPACK (V, Z, workd, workl), eigenvectors and
     * their coordinate parts, the mode shapes of mbl_modal */
    double ints = 2 * (2 * nz + n) * 16 + 2 * nz * 12;
    double lu = nz * SPARSE_LU_BYTES_PER_NZ;
    double arpack = 8 * (nd * (2 * ncv + 6) + 3 * ncv * ncv + 6 * ncv);
    double vecs = 8 * (2 * nd * k + 4 * n * k);
    return ints + lu + arpack + vecs;
}

double lin_mem_budget(const mbl_lin_options *opt)
{
    return opt && opt->mem_budget > 0 ? opt->mem_budget : MBL_MEM_BUDGET_DEFAULT;
}

int lin_refuse_memory(const char *what, double need, double budget, const char *hint, mbl_status *st)
{
    return mbl_error(st, MBL_ENOMEM, "%s needs about %.3g GiB, over the memory budget of %.3g GiB (mem_budget)%s%s",
                     what, need / GIB, budget / GIB, hint && hint[0] ? ": " : "", hint ? hint : "");
}
