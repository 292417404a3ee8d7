/* The start of a simulation (include/mblin/sim.h, mbl_sim_start; docs/simulation.md).
 *
 * The start is the solved operating point: its coordinates, velocities, user ODE states X and
 * implicit variables Z. A mode added with amplitude a moves every part of it, as the real
 * solution Re(a phi e^{st}) of the linear model does at t = 0: q by a Re(phi), v by a Re(s phi),
 * and X, Z by a Re(x), a Re(z), where x, z (with the multipliers' and the accelerations' parts,
 * which the simulation solves again) come from the linearized acceleration-level equations
 * [R; d; zeq; Phi''; c'] at the point, with q' = v, v' = s v, X' = s X along the mode:
 *
 *   [J_v'  J_lambda  J_mu  s J_X' + J_X  J_Z] [dv'; dlambda; dmu; x; z] = -(J_q + s J_v) phi
 *
 * (complex; the same rows and columns as the simulation's consistent start, sparse, by KLU).
 * Then the named initial values replace those, and q, v are projected onto the constraints. */
#include <math.h>
#include <string.h>

#include "mblin/dae.h"
#include "mblin/la.h"
#include "mblin/sim.h"
#include "sim_internal.h"

/* x, z of mode (s, phi) into dX, dZ (their real parts), phi = (pr, pi) over the coordinates. */
static int mode_ode_part(const mbl_model *md, const mbl_point *pt, double sr, double si, const double *pr,
                         const double *pim, double *dX, double *dZ, mbl_status *st)
{
    mbl_dae_eval *ev = NULL;
    int rc = mbl_dae_eval_new(md, &ev, st);
    if (rc) return rc;
    mbl_dae_layout L;
    mbl_dae_eval_layout(ev, &L);
    const int *c0 = L.col0, *r0 = L.row0;
    int n = L.n, nX = c0[MBL_DAE_XDOT + 1] - c0[MBL_DAE_XDOT], nZ = c0[MBL_DAE_Z + 1] - c0[MBL_DAE_Z];
    int nu = n + L.m + L.k + nX + nZ, nz = 0;
    double *x = mbl_calloc((size_t)L.nunk + 1, sizeof *x), *J = mbl_alloc_array((size_t)L.jnz + 1, sizeof *J);
    double *b = mbl_calloc((size_t)2 * nu + 2, sizeof *b), *az = NULL;
    int *rpos = mbl_alloc_array((size_t)L.nF + 1, sizeof *rpos), *cpos = mbl_alloc_array((size_t)L.nunk + 1, sizeof *cpos);
    int *ti = mbl_alloc_array((size_t)L.jnz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)L.jnz + 1, sizeof *tj);
    int *src = mbl_alloc_array((size_t)L.jnz + 1, sizeof *src), *map = mbl_alloc_array((size_t)L.jnz + 1, sizeof *map);
    mbla_csc *A = NULL;
    mbla_klu *lu = NULL;
    if (!x || !J || !b || !rpos || !cpos || !ti || !tj || !src || !map) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if (pt->n != n || pt->nX != nX || pt->nZ != nZ) {
        rc = mbl_error(st, MBL_EDIM, "the point does not belong to the model");
        goto done;
    }
    /* the point in the public layout [vdot lambda mu v q Xdot Z X r] */
    const double *part[MBL_DAE_NBLK] = {pt->vdot, pt->lambda, pt->mu, pt->v, pt->q, pt->Xdot, pt->Z, pt->X, pt->r};
    for (int blk = 0; blk < MBL_DAE_NBLK; blk++)
        if (c0[blk + 1] > c0[blk]) memcpy(x + c0[blk], part[blk], (size_t)(c0[blk + 1] - c0[blk]) * sizeof *x);
    rc = mbl_dae_eval_jacobian(ev, pt->t, x, J, st);
    if (rc) goto done;
    static const int rgroups[] = {MBL_DAE_EOM, MBL_DAE_ODE, MBL_DAE_VAR, MBL_DAE_PHIDD, MBL_DAE_NHD};
    static const int cblocks[] = {MBL_DAE_VDOT, MBL_DAE_LAMBDA, MBL_DAE_MU, MBL_DAE_X, MBL_DAE_Z};
    int nr = 0, nc = 0;
    for (int r = 0; r < L.nF; r++) rpos[r] = -1;
    for (int c = 0; c < L.nunk; c++) cpos[c] = -1;
    for (size_t g = 0; g < sizeof rgroups / sizeof rgroups[0]; g++)
        for (int r = r0[rgroups[g]]; r < r0[rgroups[g] + 1]; r++) rpos[r] = nr++;
    for (size_t g = 0; g < sizeof cblocks / sizeof cblocks[0]; g++)
        for (int c = c0[cblocks[g]]; c < c0[cblocks[g] + 1]; c++) cpos[c] = nc++;
    for (int j = 0; j < nX; j++) cpos[c0[MBL_DAE_XDOT] + j] = cpos[c0[MBL_DAE_X] + j]; /* X' = s X */
    if (nr != nu || nc != nu) {
        rc = mbl_error(st, MBL_EDIM, "%d equations for %d unknowns", nr, nc);
        goto done;
    }
    for (int p = 0; p < L.jnz; p++) {
        int r = rpos[L.jrow[p]], c = L.jcol[p];
        if (r < 0) continue;
        if (c >= c0[MBL_DAE_Q] && c < c0[MBL_DAE_Q + 1]) { /* -(J_q phi) */
            int j = c - c0[MBL_DAE_Q];
            b[2 * r] -= J[p] * pr[j], b[2 * r + 1] -= J[p] * pim[j];
        } else if (c >= c0[MBL_DAE_V] && c < c0[MBL_DAE_V + 1]) { /* -(J_v s phi) */
            int j = c - c0[MBL_DAE_V];
            b[2 * r] -= J[p] * (sr * pr[j] - si * pim[j]), b[2 * r + 1] -= J[p] * (sr * pim[j] + si * pr[j]);
        } else if (cpos[c] >= 0) {
            ti[nz] = r, tj[nz] = cpos[c], src[nz++] = p;
        }
    }
    rc = mbla_csc_from_triplets(nu, nu, nz, ti, tj, NULL, map, &A, st);
    if (rc) goto done;
    az = mbl_calloc((size_t)2 * A->p[nu] + 2, sizeof *az);
    if (!az) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int e = 0; e < nz; e++) {
        int c = L.jcol[src[e]];
        double v = J[src[e]];
        int xdot = c >= c0[MBL_DAE_XDOT] && c < c0[MBL_DAE_XDOT + 1];
        az[2 * map[e]] += xdot ? sr * v : v;
        az[2 * map[e] + 1] += xdot ? si * v : 0.0;
    }
    rc = mbla_kluz_new(A, az, NULL, &lu, st);
    if (!rc) rc = mbla_kluz_solve(lu, 'N', 1, b, nu, st);
    if (rc) goto done;
    int oX = n + L.m + L.k, oZ = oX + nX;
    for (int j = 0; j < nX; j++) dX[j] = b[2 * (oX + j)];
    for (int j = 0; j < nZ; j++) dZ[j] = b[2 * (oZ + j)];
    for (int j = 0; j < nX + nZ; j++)
        if (!isfinite(b[2 * (oX + j)])) rc = mbl_error(st, MBL_ESINGULAR, "not finite");
done:
    mbla_klu_free(lu);
    mbla_csc_free(A);
    mbl_free(x), mbl_free(J), mbl_free(b), mbl_free(az), mbl_free(rpos), mbl_free(cpos);
    mbl_free(ti), mbl_free(tj), mbl_free(src), mbl_free(map);
    mbl_dae_eval_free(ev);
    return rc;
}

/* name -> (kind, index): 0 a coordinate, 1 its velocity der(x), 2 an ODE state; -1 unknown */
static int initial_target(const mbl_model *md, int n, int nX, const char *name, int *idx)
{
    size_t nl = strlen(name);
    int vel = nl > 5 && !strncmp(name, "der(", 4) && name[nl - 1] == ')';
    size_t len = vel ? nl - 5 : nl;
    const char *base = vel ? name + 4 : name;
    for (int i = 0; i < n; i++) {
        const char *qn = mbl_model_coord_name(md, i);
        if (strlen(qn) == len && !strncmp(qn, base, len)) return *idx = i, vel;
    }
    for (int i = 0; !vel && i < nX; i++)
        if (!strcmp(mbl_model_ode_state_name(md, i), name)) return *idx = i, 2;
    return -1;
}

int mbl_sim_start(const mbl_model *md, const mbl_point *pt, const mbl_modes *modes, int mode, double amplitude,
                  const mbl_setting *initial, int ninitial, mbl_point **start, mbl_status *st)
{
    if (!start) return mbl_error(st, MBL_EARG, "mbl_sim_start: start is NULL");
    *start = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_sim_start: NULL argument");
    int n = pt->n, nX = pt->nX, nZ = pt->nZ, rc = 0;
    double *q = mbl_alloc_array((size_t)2 * n + nX + nZ + 1, sizeof *q), *v = q ? q + n : NULL;
    double *X = q ? q + 2 * n : NULL, *Z = q ? X + nX : NULL;
    if (!q) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(q, pt->q, (size_t)n * sizeof *q);
    memcpy(v, pt->v, (size_t)n * sizeof *v);
    memcpy(X, pt->X, (size_t)nX * sizeof *X);
    memcpy(Z, pt->Z, (size_t)nZ * sizeof *Z);
    if (modes) {
        if (mode < 0 || mode >= modes->nx || modes->n != n) {
            mbl_free(q);
            return mbl_error(st, MBL_EARG, "mode %d does not exist (the linear model has %d)", mode + 1, modes->nx);
        }
        const double *pr = modes->shape_re + (size_t)mode * n, *pi = modes->shape_im + (size_t)mode * n;
        int imax = 0;
        double best = -1;
        for (int i = 0; i < n; i++) {
            double a = hypot(pr[i], pi[i]);
            if (a > best) best = a, imax = i;
        }
        if (!(best > 0)) {
            mbl_free(q);
            return mbl_error(st, MBL_EARG, "mode %d has no coordinate motion", mode + 1);
        }
        /* phi / phi_imax: complex division */
        double dr = pr[imax], di = pi[imax], d2 = dr * dr + di * di;
        double sr = modes->modes[mode].re, si = modes->modes[mode].im;
        double *ar = mbl_alloc_array((size_t)3 * n + nX + nZ + 1, sizeof *ar), *ai = ar ? ar + n : NULL;
        double *dX = ar ? ar + 2 * n : NULL, *dZ = ar ? dX + nX : NULL;
        if (!ar) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < n; i++) {
            ar[i] = (pr[i] * dr + pi[i] * di) / d2, ai[i] = (pi[i] * dr - pr[i] * di) / d2;
            q[i] += amplitude * ar[i];
            v[i] += amplitude * (sr * ar[i] - si * ai[i]);
        }
        if (!rc && nX + nZ > 0) {
            rc = mode_ode_part(md, pt, sr, si, ar, ai, dX, dZ, st);
            if (rc) mbl_error_prefix(st, "the ODE states' part of mode %d", mode + 1);
            for (int j = 0; !rc && j < nX; j++) X[j] += amplitude * dX[j];
            for (int j = 0; !rc && j < nZ; j++) Z[j] += amplitude * dZ[j];
        }
        mbl_free(ar);
        if (rc) {
            mbl_free(q);
            return rc;
        }
    }
    for (int s = 0; s < ninitial; s++) {
        int i = 0, kind = initial[s].name ? initial_target(md, n, nX, initial[s].name, &i) : -1;
        if (kind < 0) {
            mbl_free(q);
            return mbl_error(st, MBL_EARG, "initial value of '%s': the model has no coordinate or ODE state of that name",
                             initial[s].name ? initial[s].name : "(null)");
        }
        (kind == 0 ? q : kind == 1 ? v : X)[i] = initial[s].value;
    }
    mbl_opoint_options oo;
    mbl_opoint_options_default(&oo);
    oo.at = MBL_AT_GIVEN;
    oo.q = q;
    oo.v = v;
    oo.r = pt->r; /* the point's inputs (a trim's solved ones), not the file's */
    oo.t = pt->t;
    oo.has_t = 1;
    oo.move_note = 0;
    rc = mbl_operating_point(md, &oo, start, st);
    /* the ODE states and implicit variables of the point (the operating point at `given` takes
     * the file's), then the accelerations, multipliers, X' and Z that go with them */
    if (!rc && (*start)->nX == nX && (*start)->nZ == nZ) {
        memcpy((*start)->X, X, (size_t)nX * sizeof *X);
        memcpy((*start)->Z, Z, (size_t)nZ * sizeof *Z);
        if (nX + nZ > 0) rc = sim_start_consistent(md, *start, st);
    }
    if (rc) {
        mbl_error_prefix(st, "the start of the simulation");
        mbl_point_free(*start);
        *start = NULL;
    }
    mbl_free(q);
    return rc;
}
