/* Constraint diagnosis for `mblin check` (include/mblin/model.h): which holonomic constraints are
 * redundant at a point (the left null space of Phi_q), or violated at the file's initial
 * configuration when no point was found. The library computes; src/report formats the lines. */
#include <math.h>
#include <string.h>

#include "mblin/la.h"
#include "model/model_internal.h"

#define DIAG_RANK_TOL 1e-9      /* relative singular-value threshold (as mbl_opoint_options.rank_tol) */
#define DIAG_NULL_WEIGHT 1e-6   /* weight in a unit left null vector that counts as taking part */
#define DIAG_RESIDUAL_TOL 1e-8  /* absolute residual that counts as violated */

int mbl_model_param_numeric(const mbl_model *md, int p)
{
    if (!md || p < 0 || p >= md->np) return -1;
    return md->param_numeric ? md->param_numeric[p] : 0;
}

const char *mbl_model_constraint_name(const mbl_model *md, int j)
{
    return md && md->cname && j >= 0 && j < md->m + md->k ? md->cname[j] : NULL;
}

static int sjac_uses_col(const mblx_graph *g, const mbl_sjac *J, int col)
{
    for (int e = 0; e < J->nz; e++) {
        double v;
        if (J->col[e] == col && !(mblx_is_const(g, J->node[e], &v) && v == 0.0)) return 1;
    }
    return 0;
}

int mbl_model_input_used(const mbl_model *md, int i)
{
    if (!md || i < 0 || i >= md->nr) return -1;
    int col = model_blk0(md, MBL_BLK_R) + i;
    model_graph_lock(md, 1); /* another thread may grow the graph meanwhile */
    int used = sjac_uses_col(md->g, &md->jac, col) || sjac_uses_col(md->g, &md->yjac, col);
    model_graph_lock(md, 0);
    return used;
}

void mbl_constraint_diag_free(mbl_constraint_diag *d)
{
    if (!d) return;
    mbl_free(d->flag);
    mbl_free(d->residual);
    mbl_free(d);
}

/* Phi_q where syms was filled, dense m x n, its SVD: the equations in the left null space */
static int diagnose_rank(const mbl_model *md, mbl_constraint_diag *d, const double *syms, double *work,
                         mbl_status *st)
{
    int n = md->n, m = md->m, k = m < n ? m : n;
    double *buf = mbl_calloc((size_t)md->jac.nz + 1, sizeof *buf);
    double *J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J);
    double *U = mbl_calloc((size_t)m * (size_t)m + 1, sizeof *U);
    double *s = mbl_calloc((size_t)k + 1, sizeof *s);
    int rc = 0;
    if (!buf || !J || !U || !s) {
        rc = mbl_error(st, MBL_ENOMEM, "mbl_constraint_diagnose: out of memory (m = %d, n = %d)", m, n);
        goto done;
    }
    mbl_status est;
    if (model_eval_jac(md, syms, buf, work, &est)) {
        d->kind = MBL_DIAG_UNEVALUATED;
        snprintf(d->msg, sizeof d->msg, "%.250s", est.msg);
        goto done;
    }
    int jq = model_blk0(md, MBL_BLK_Q), r_phi = md->row0[MBL_ROW_PHI];
    for (int p = 0; p < md->jac.nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        if (r >= r_phi && r < r_phi + m && c >= jq && c < jq + n) J[(r - r_phi) + (size_t)(c - jq) * m] = buf[p];
    }
    if (mbla_svd(m, n, J, m, 'A', s, U, m, NULL, n, &est)) {
        d->kind = MBL_DIAG_UNEVALUATED;
        snprintf(d->msg, sizeof d->msg, "%.250s", est.msg);
        goto done;
    }
    d->rank = mbla_rank_from_diag(m, n, k, s, 1, DIAG_RANK_TOL);
    if (d->rank >= m) goto done;
    d->kind = MBL_DIAG_REDUNDANT;
    for (int c = d->rank; c < m; c++) /* left null space: columns rank..m-1 of U */
        for (int j = 0; j < m; j++)
            if (fabs(U[j + (size_t)c * m]) > DIAG_NULL_WEIGHT) d->flag[j] = 1;
done:
    mbl_free(buf);
    mbl_free(J);
    mbl_free(U);
    mbl_free(s);
    return rc;
}

/* Phi at the initial configuration: the violated equations, else the redundant ones there */
static int diagnose_initial(const mbl_model *md, mbl_constraint_diag *d, double *syms, double *work, mbl_status *st)
{
    int n = md->n, m = md->m;
    double *zeros = mbl_calloc((size_t)(n + m + md->k + 1), sizeof *zeros);
    double *buf = mbl_calloc((size_t)md->nF + 1, sizeof *buf);
    d->residual = mbl_calloc((size_t)m + 1, sizeof *d->residual);
    if (!zeros || !buf || !d->residual) {
        mbl_free(zeros), mbl_free(buf);
        return mbl_error(st, MBL_ENOMEM, "mbl_constraint_diagnose: out of memory (m = %d)", m);
    }
    model_fill_syms(md, md->time, md->q0, md->v0, zeros, zeros, zeros, md->r0, syms);
    mbl_status est;
    if (model_eval_F(md, syms, buf, work, &est)) {
        d->kind = MBL_DIAG_UNEVALUATED;
        snprintf(d->msg, sizeof d->msg, "%.250s", est.msg);
    } else {
        const double *phi = buf + md->row0[MBL_ROW_PHI];
        int bad = 0;
        for (int j = 0; j < m; j++) {
            d->residual[j] = phi[j];
            bad += d->flag[j] = fabs(phi[j]) > DIAG_RESIDUAL_TOL;
        }
        if (bad) d->kind = MBL_DIAG_VIOLATED;
    }
    mbl_free(zeros);
    mbl_free(buf);
    /* assembled there (a search for the point failed elsewhere): its redundant equations, so that
     * two joints that close the same loop twice are named even when no operating point is found */
    if (d->kind != MBL_DIAG_NONE) return 0;
    mbl_free(d->residual); /* residuals are those of VIOLATED alone */
    d->residual = NULL;
    return diagnose_rank(md, d, syms, work, st);
}

static int diagnose_point(const mbl_model *md, const mbl_point *pt, mbl_constraint_diag *d, double *syms,
                          double *work, mbl_status *st)
{
    model_fill_syms(md, pt->t, pt->q, pt->v, pt->vdot, pt->lambda, pt->mu, pt->r, syms);
    return diagnose_rank(md, d, syms, work, st);
}

int mbl_constraint_diagnose(const mbl_model *md, const mbl_point *pt, mbl_constraint_diag **out, mbl_status *st)
{
    if (!md || !out) return mbl_error(st, MBL_EARG, "mbl_constraint_diagnose: NULL argument");
    *out = NULL;
    if (pt && (pt->n != md->n || pt->m != md->m || pt->k != md->k))
        return mbl_error(st, MBL_EARG, "mbl_constraint_diagnose: the point is not one of this model");
    mbl_constraint_diag *d = mbl_calloc(1, sizeof *d);
    if (!d) return mbl_error(st, MBL_ENOMEM, "mbl_constraint_diagnose: out of memory");
    d->m = md->m, d->n = md->n, d->rank = md->m;
    if (md->m == 0 || !md->cname) {
        *out = d;
        return 0;
    }
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_calloc(md->work_size + 1, sizeof *work);
    d->flag = mbl_calloc((size_t)md->m, sizeof *d->flag);
    int rc;
    if (!syms || !work || !d->flag)
        rc = mbl_error(st, MBL_ENOMEM, "mbl_constraint_diagnose: out of memory (m = %d)", md->m);
    else
        rc = pt ? diagnose_point(md, pt, d, syms, work, st) : diagnose_initial(md, d, syms, work, st);
    mbl_free(syms);
    mbl_free(work);
    if (rc) {
        mbl_constraint_diag_free(d);
        return rc;
    }
    *out = d;
    return 0;
}
