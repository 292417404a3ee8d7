/* Checks of the canonical DAE's source 000 Eq. 10 features (user ODE states, implicit variables,
 * forces of multipliers) and of the generalized speeds (Eq. 14) at a point; see model_internal.h. */
#include <math.h>
#include <string.h>

#include "mblin/la.h"
#include "model/model_internal.h"

/* ---- checks of the Eq. 10 features and the generalized speeds at a point ------------------- */

/* Relative rank tolerance of d[d; zeq]/d[Xdot; Z] and of the speeds' T at a point (rows scaled to
 * unit 2-norm first, so units do not count). */
#define MBL_POINT_RANK_TOL 1e-9

/* rows (nr x nc, column-major, ld nr) must be independent: else the first dependent row's name. */
static int independent_rows(int nr, int nc, double *J, char *const *what, const char *why, mbl_status *st)
{
    for (int i = 0; i < nr; i++) {
        double s = 0;
        for (int j = 0; j < nc; j++) s = hypot(s, J[i + (size_t)j * nr]);
        if (!(s > 0) || !isfinite(s))
            return mbl_error(st, MBL_ESINGULAR, "%s: %s (its row is %s at the operating point)", what[i], why,
                             isfinite(s) ? "zero" : "not finite");
        for (int j = 0; j < nc; j++) J[i + (size_t)j * nr] /= s;
    }
    double *T = mbl_alloc_array((size_t)nr * (size_t)nc + 1, sizeof *T);
    int *jpvt = mbl_alloc_array((size_t)nr + 1, sizeof *jpvt);
    if (!T || !jpvt) {
        mbl_free(T), mbl_free(jpvt);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) T[j + (size_t)i * nc] = J[i + (size_t)j * nr];
    int rank = 0, rc = mbla_qrcp(nc, nr, T, nc, MBL_POINT_RANK_TOL, jpvt, &rank, NULL, 0, 0, NULL, 0, st);
    if (!rc && rank < nr)
        rc = mbl_error(st, MBL_ESINGULAR, "%s: %s (rank %d of %d at the operating point)", what[jpvt[rank]], why, rank,
                       nr);
    mbl_free(T), mbl_free(jpvt);
    return rc;
}

int model_check_point(const mbl_model *md, const double *jacval, const double *usjac, mbl_status *st)
{
    int ne = md->nX + md->nZ, rc = 0;
    if (ne > 0 && jacval) {
        int r0 = md->row0[MBL_ROW_ODE], c0 = model_blk0(md, MBL_BLK_XD);
        double *J = mbl_calloc((size_t)ne * (size_t)ne + 1, sizeof *J);
        if (!J) return mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int p = 0; p < md->jac.nz; p++) {
            int r = md->jac.row[p] - r0, c = md->jac.col[p] - c0;
            if (r >= 0 && r < ne && c >= 0 && c < ne) J[r + (size_t)c * ne] += jacval[p];
        }
        rc = independent_rows(ne, ne, J, md->eq_what,
                              "the equation does not determine der() of the ode states and the implicit variables "
                              "(d[ode; implicit_variables]/d[der(X); Z] is singular)",
                              st);
        mbl_free(J);
    }
    if (!rc && md->nspd > 0 && usjac) {
        int n = md->n, ns = md->nspd, u0 = 3 * md->nus + md->nuvs - ns, jv = model_blk0(md, MBL_BLK_V);
        double *T = mbl_calloc((size_t)ns * (size_t)n + 1, sizeof *T);
        if (!T) return mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int p = 0; p < md->usjac.nz; p++) {
            int r = md->usjac.row[p] - u0, c = md->usjac.col[p] - jv;
            if (r >= 0 && r < ns && c >= 0 && c < n) T[r + (size_t)c * ns] += usjac[p];
        }
        rc = independent_rows(ns, n, T, md->spd_what,
                              "T = du/dq' of the generalized speeds is singular (the speeds are not independent)", st);
        mbl_free(T);
    }
    return rc;
}

const char *model_ext_features(const mbl_model *md)
{
    if (!md) return NULL;
    if (md->nX) return "user ODE states (ode_states)";
    if (md->nZ) return "implicit variables (implicit_variables)";
    if (md->ext) return "forces that depend on multipliers (lambda(c), mu(c))";
    return NULL;
}
