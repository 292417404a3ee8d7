/* The velocities of a given point with held velocities (docs/model-files.md, "Held velocities").
 *
 * Unknowns: the velocities v (n). Rows, all linear in v at the given coordinates:
 *   Phi_q v + Phi_t = 0                      (m, the velocity constraints)
 *   A_nh v + b = 0                           (k, the non-holonomic constraints)
 *   v_i = c_i          for each held coordinate rate (the file's velocities by coordinate, a body's
 *                      velocity or angular_velocity, --set-velocity x=c)
 *   h_j(q, v, t) = c_j for each held velocity keyed by an expression (JV(crank): 12)
 * From the start v0 (held values in place, the others the file's or 0) the change dv of least
 * 2-norm that satisfies all rows: A dv = -r(v0), by LAPACK's minimum-norm least squares (dgelsy:
 * a complete orthogonal factorization, rank by rank_tol; mbla_cod, whose factorization the
 * refinement reuses where its matrix is the same) or SPQR for large systems, then one
 * refinement step. A held row forces its own quantity, so
 * only what the user left open moves. Rows that cannot all hold (two held rates of a
 * one-degree-of-freedom mechanism that disagree) leave a least-squares residual: that is an
 * error naming the held velocities in it, never a silent compromise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/la.h"
#include "opoint_given.h"

typedef struct gv {
    opoint_subproblem *sp;
    const int *hq;     /* n: 1 for a held coordinate rate */
    const double *hcq; /* n: its value */
    const int *he;     /* nheld: 1 for a held expression in use */
    const double *hc;  /* nheld: values of the held expressions */
    int nrow, n, nz;
    int nzc;           /* the triplets of the constraint rows (the first nzc) */
    int *ti, *tj, *rowq; /* triplets; rowq: per row, the coordinate (>= 0), -1 - j for held expression j,
                            or -1000000 for a constraint row */
    double *tx, *res, *hval, *gval;
    /* the dense path's last matrix (nrow x n) and its factorization: the refinement step's matrix is
     * the first step's where no held expression changed its gradient (the constraint rows are kept,
     * gv_eval; held rates are rows of the identity), and is then not factored again */
    double *J0;
    mbla_cod *cod;
} gv;

/* rows, triplets and residuals at the point's velocities. same_q: the coordinates are those of the
 * last evaluation, only velocities changed: the constraint rows' triplets are kept (the rows are
 * linear in the velocities, Phi_q v + Phi_t and A v + b, so their entries in the velocities' columns
 * are functions of q and t alone: the forward sweeps give the same numbers) and the Jacobian is not
 * evaluated (the bicycle's refinement step: 0.15 M instructions) */
static int gv_eval(gv *w, int same_q, mbl_status *st)
{
    opoint_subproblem *sp = w->sp;
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    model_fill_syms_pt(md, pt, sp->syms);
    int rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
    if (!rc && !same_q) rc = opoint_jac(sp, st);
    if (rc) return model_eval_error(md, sp->syms, "at the given point", st);
    if (mv->nheld && (rc = model_held_eval(md, sp->syms, w->hval, w->gval, st))) return rc;
    int jv = model_blk0(md, MBL_BLK_V), r0 = mv->row0[MBL_ROW_PHID], nc = mv->m + mv->k, nz = 0, r = 0;
    /* PHID and NH are consecutive row groups */
    if (same_q) {
        nz = w->nzc;
    } else {
        for (int p = 0; p < mv->jac.nz; p++) {
            int row = mv->jac.row[p] - r0, c = mv->jac.col[p] - jv;
            if (row < 0 || row >= nc || c < 0 || c >= w->n) continue;
            w->ti[nz] = row, w->tj[nz] = c, w->tx[nz++] = sp->jac[p];
        }
        w->nzc = nz;
    }
    for (; r < nc; r++) w->res[r] = sp->F[r0 + r], w->rowq[r] = -1000000;
    for (int i = 0; i < w->n; i++)
        if (w->hq[i]) {
            w->ti[nz] = r, w->tj[nz] = i, w->tx[nz++] = 1.0;
            w->res[r] = pt->v[i] - w->hcq[i];
            w->rowq[r++] = i;
        }
    for (int j = 0; j < mv->nheld; j++) {
        if (!w->he[j]) continue;
        for (int p = mv->held_gp[j]; p < mv->held_gp[j + 1]; p++) w->ti[nz] = r, w->tj[nz] = mv->held_gi[p], w->tx[nz++] = w->gval[p];
        w->res[r] = w->hval[j] - w->hc[j];
        w->rowq[r++] = -1 - j;
    }
    w->nz = nz;
    return 0;
}

/* the largest scaled residual |r_i| / sum_c |A_ic| max(1, |v_c|) (rows whose coefficients vanish:
 * absolute); flag[i] set where row i exceeds tol (flag may be NULL) */
static double gv_scaled(const gv *w, const double *v, double tol, double abs_tol, int *flag)
{
    double *s = mbl_calloc((size_t)w->nrow + 1, sizeof *s), worst = 0;
    if (!s) return INFINITY;
    for (int p = 0; p < w->nz; p++) s[w->ti[p]] += fabs(w->tx[p]) * fmax(1.0, fabs(v[w->tj[p]]));
    for (int r = 0; r < w->nrow; r++) {
        double e = fabs(w->res[r]), x = s[r] > 0 ? e / s[r] : e;
        if (!(e == e)) x = INFINITY;
        int bad = x > tol && e > abs_tol;
        if (flag) flag[r] = bad;
        worst = fmax(worst, x);
    }
    mbl_free(s);
    return worst;
}

/* one minimum-norm step A dv = -res added to the point's velocities */
static int gv_step(gv *w, mbl_status *st)
{
    opoint_subproblem *sp = w->sp;
    int m = w->nrow, n = w->n, mx = m > n ? m : n, rc = 0;
    double *b = mbl_alloc_array((size_t)mx + 1, sizeof *b), *dx = mbl_calloc((size_t)n + 1, sizeof *dx);
    if (!b || !dx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int r = 0; !rc && r < m; r++) b[r] = -w->res[r];
    if (!rc && n <= OPOINT_DENSE_MAX && m <= OPOINT_DENSE_MAX) {
        size_t mn = (size_t)m * (size_t)n;
        double *J = mbl_calloc(mn + 1, sizeof *J);
        if (!J) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int p = 0; !rc && p < w->nz; p++) J[w->ti[p] + (size_t)w->tj[p] * m] += w->tx[p];
        /* the same matrix as the last step's: its factorization solves again (mbla_cod: dgelsy's
         * numbers bit for bit) */
        if (!rc && !(w->cod && !memcmp(J, w->J0, mn * sizeof *J))) {
            mbla_cod_free(w->cod), w->cod = NULL;
            mbl_free(w->J0), w->J0 = NULL;
            rc = mbla_cod_new(m, n, J, m > 0 ? m : 1, sp->opt->rank_tol, &w->cod, st);
            if (!rc) w->J0 = J, J = NULL;
        }
        if (!rc) rc = mbla_cod_solve(w->cod, 1, b, mx > 0 ? mx : 1, st);
        for (int c = 0; !rc && c < n; c++) dx[c] = b[c];
        mbl_free(J);
    } else if (!rc) {
        mbla_csc *A = NULL;
        rc = mbla_csc_from_triplets(m, n, w->nz, w->ti, w->tj, w->tx, NULL, &A, st);
        if (!rc) rc = mbla_spqr_solve(A, -1.0, 1, b, m, dx, n, st);
        mbla_csc_free(A);
    }
    for (int c = 0; !rc && c < n; c++) sp->pt->v[c] += dx[c];
    mbl_free(b), mbl_free(dx);
    return rc;
}

/* the label of held row r ("der(x)" or the file's key) into buf */
static const char *gv_label(const gv *w, int r, char *buf, size_t cap)
{
    const model_view *mv = &w->sp->mv;
    int q = w->rowq[r];
    if (q >= 0) snprintf(buf, cap, "der(%s) = %.6g", mv->qname[q], w->hcq[q]);
    else snprintf(buf, cap, "%s = %.6g", mv->held_label[-1 - q], w->hc[-1 - q]);
    return buf;
}

/* the one-line error of rows that cannot all hold */
static int gv_inconsistent(const gv *w, const int *flag, double worst, mbl_status *st)
{
    char list[600] = "", one[200];
    size_t len = 0;
    int nheld = 0;
    for (int r = 0; r < w->nrow; r++) {
        if (w->rowq[r] == -1000000) continue;
        if (!flag[r]) continue;
        nheld++;
        gv_label(w, r, one, sizeof one);
        if (len + strlen(one) + 8 < sizeof list) len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", one);
    }
    if (!nheld) /* the residual lies in the constraints alone: name every held velocity */
        for (int r = 0; r < w->nrow; r++)
            if (w->rowq[r] != -1000000) {
                gv_label(w, r, one, sizeof one);
                if (len + strlen(one) + 8 < sizeof list)
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", one);
            }
    return mbl_error(st, MBL_ESINGULAR,
                     "the held velocities %s over-determine the velocity constraints and disagree (scaled residual "
                     "%.3g of the least-squares fit): hold fewer of them or make them consistent",
                     list, worst);
}

/* "velocities held: ...; solved from the velocity constraints: der(y) = ..." in the point's notes
 * ("velocities solved from ..." when none is held), when some velocity not written came out nonzero */
static void gv_note(const gv *w)
{
    const model_view *mv = &w->sp->mv;
    mbl_point *pt = w->sp->pt;
    char buf[900], one[200];
    size_t len = (size_t)snprintf(buf, sizeof buf, "velocities held: ");
    int first = 1;
    for (int r = 0; r < w->nrow; r++) {
        if (w->rowq[r] == -1000000) continue;
        gv_label(w, r, one, sizeof one);
        if (len + strlen(one) + 48 < sizeof buf / 2)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", first ? "" : ", ", one);
        first = 0;
    }
    double vmax = 0;
    for (int i = 0; i < w->n; i++) vmax = fmax(vmax, fabs(pt->v[i]));
    if (first) len = 0; /* nothing held: the note names what was solved only */
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s from the velocity constraints:",
                            first ? "velocities solved" : "; solved");
    int shown = 0, more = 0, zero = 0;
    for (int i = 0; i < w->n; i++) {
        if (w->hq[i]) continue;
        if (!(fabs(pt->v[i]) > OPOINT_GIVEN_ZERO * vmax)) {
            zero++;
            continue;
        }
        snprintf(one, sizeof one, "%s der(%s) = %.6g", shown ? "," : "", mv->qname[i], pt->v[i]);
        if (len + strlen(one) + 40 < sizeof buf) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", one), shown++;
        else more++;
    }
    if (!shown) return; /* nothing moved that was not written: no note (the point is the file's) */
    if (more) snprintf(buf + len, sizeof buf - len, " and %d more", more);
    else snprintf(buf + len, sizeof buf - len, "%s", !zero ? "" : shown ? " (the others 0)" : " all 0");
    opoint_note_add(pt, buf);
}

int opoint_given_velocities(opoint_subproblem *sp, const int *hq, const double *hcq, const int *he, const double *hc,
                            mbl_status *st)
{
    const model_view *mv = &sp->mv;
    gv w;
    memset(&w, 0, sizeof w);
    w.sp = sp, w.hq = hq, w.hcq = hcq, w.he = he, w.hc = hc, w.n = mv->n;
    int nq = 0, ne = 0, ngz = mv->nheld ? mv->held_gp[mv->nheld] : 0;
    for (int i = 0; i < mv->n; i++) nq += hq[i] != 0;
    for (int j = 0; j < mv->nheld; j++) ne += he[j] != 0;
    w.nrow = mv->m + mv->k + nq + ne;
    size_t nzmax = (size_t)mv->jac.nz + (size_t)nq + (size_t)ngz + 1;
    w.ti = mbl_alloc_array(nzmax, sizeof *w.ti);
    w.tj = mbl_alloc_array(nzmax, sizeof *w.tj);
    w.tx = mbl_alloc_array(nzmax, sizeof *w.tx);
    w.rowq = mbl_alloc_array((size_t)w.nrow + 1, sizeof *w.rowq);
    w.res = mbl_alloc_array((size_t)w.nrow + 1, sizeof *w.res);
    w.hval = mbl_alloc_array((size_t)mv->nheld + 1, sizeof *w.hval);
    w.gval = mbl_alloc_array((size_t)ngz + 1, sizeof *w.gval);
    int *flag = mbl_calloc((size_t)w.nrow + 1, sizeof *flag);
    int rc = 0;
    if (!w.ti || !w.tj || !w.tx || !w.rowq || !w.res || !w.hval || !w.gval || !flag)
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double tol = OPOINT_GIVEN_TOL_FACTOR * sp->opt->tol, worst = 0;
    /* a start that already satisfies every row is kept as it is (no rounding added); else a
     * minimum-norm step and one refinement */
    for (int pass = 0; !rc && pass < 3; pass++) {
        /* the refinement's rows (pass 1) at the first step's velocities; the last pass evaluates the
         * whole Jacobian at the point (kept for what follows: opoint_jac) */
        rc = gv_eval(&w, pass == 1, st);
        if (rc) break;
        worst = gv_scaled(&w, sp->pt->v, tol, sp->opt->abs_tol, flag);
        if (pass == 2 || (pass == 0 && worst <= tol)) break;
        rc = gv_step(&w, st);
    }
    if (!rc) {
        int bad = 0;
        for (int r = 0; r < w.nrow; r++) bad |= flag[r];
        if (bad) rc = gv_inconsistent(&w, flag, worst, st);
    }
    if (!rc && mv->m + mv->k) gv_note(&w);
    mbl_free(w.ti), mbl_free(w.tj), mbl_free(w.tx), mbl_free(w.rowq), mbl_free(w.res), mbl_free(w.hval);
    mbl_free(w.gval), mbl_free(flag), mbl_free(w.J0), mbla_cod_free(w.cod);
    return rc;
}
