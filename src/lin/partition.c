/* `partition`: generalized coordinate partitioning (source 004; source 000 Eq. 2-9).
 *
 * Gauss elimination with full pivoting on Phi_q (with the user states' rows, weighted as in
 * source 000 Eq. 22: the selection shared with `augmented`) splits q into dependent coordinates u
 * (the pivot columns) and independent ones S (user states first, completed by coordinates). For
 * S = P q, dq/dS = [Phi_q; P]^-1 [0; I] = [-Phi_u^-1 Phi_S; I] (Eq. 4-5); user states S = s(q) add
 * their curvature terms,
 * and the state-space ODE of Eq. 6, M-hat S'' = Q-hat(S, S'), is differentiated exactly through
 * the linearized velocity and acceleration constraints (mbl_reduce): K = dQ-hat/dS and
 * C = dQ-hat/dS' of Eq. 9. A singular configuration (rank of Phi_q below m) has no partition:
 * the method refuses. */
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

int mbl_lin_partition(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                      mbl_status *st)
{
    int n = md->n, m = md->m, r = 0, rc;
    mbl_blocks B;
    mbl_linear *lin = NULL;
    int *rows = NULL, *indep = NULL, *uidx = NULL;
    double *P = NULL, *Pd = NULL, *Pddv = NULL, *Pddq = NULL;
    char **names = NULL;
    *out = NULL;
    rc = mbl_require_holonomic(md, opt, "partition", st);
    if (rc) return rc;
    rc = mbl_blocks_init(md, pt, &B, st);
    if (rc) return rc;
    rows = mbl_calloc((size_t)m + 1, sizeof *rows);
    indep = mbl_calloc((size_t)n + 1, sizeof *indep);
    uidx = mbl_calloc((size_t)n + 1, sizeof *uidx);
    if (!rows || !indep || !uidx) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_require_full_rank(&B, opt->rank_tol, rows, &r, "partition",
                               "no coordinate partition exists", st);
    if (rc) goto done;
    int z = n - r;
    size_t zn = (size_t)z * (size_t)n + 1;
    P = mbl_calloc(zn, sizeof *P), Pd = mbl_calloc(zn, sizeof *Pd), Pddv = mbl_calloc(zn, sizeof *Pddv);
    Pddq = mbl_calloc(zn, sizeof *Pddq);
    names = mbl_calloc((size_t)z + 1, sizeof *names);
    lin = mbl_linear_alloc(n, z, z, md->nr, md->ny);
    if (!P || !Pd || !Pddv || !Pddq || !names || !lin) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = mbl_lin_states(md, &B, opt, z, uidx, indep, names, lin->selection, sizeof lin->selection, st);
    if (rc) goto done;
    const double *usjac = B.ev.us + 3 * md->nus + 2 * md->nuvs;
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 0, P);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 1, Pd);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 2, Pddv);
    mbl_lin_state_rows(md, uidx, indep, z, usjac, 3, Pddq);
    snprintf(lin->method, sizeof lin->method, "partition");
    rc = mbl_reduce(&B, rows, r, P, Pd, Pddv, Pddq, z, NULL, opt->rcond_min, lin, NULL, st);
    if (rc) goto done;
    if (mbl_lin_set_names(md, lin, names)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->notes, sizeof lin->notes, "rank(Phi_q) = %d, condition of [Phi_q; dS/dq] %.3g", r, lin->cond);
    *out = lin;
    lin = NULL;
done:
    mbl_blocks_free(&B);
    mbl_free(rows), mbl_free(indep), mbl_free(uidx), mbl_free(P), mbl_free(Pd), mbl_free(Pddv), mbl_free(Pddq);
    mbl_free(names);
    mbl_linear_free(lin);
    return rc;
}
