/* Constraint diagnostics for `mblin check`: which constraints are redundant, which are violated. */
#include "mech/check.h"

#include <math.h>
#include <string.h>

#include "mblin/la.h"
#include "model/model_internal.h"

/* print the distinct names of the flagged constraints, in the order of first appearance */
static void list_names(FILE *f, const mbl_model *md, const int *flag, const double *val)
{
    int shown = 0, total = 0;
    for (int j = 0; j < md->m; j++) {
        if (!flag[j]) continue;
        int dup = 0;
        for (int i = 0; i < j && !dup; i++) dup = flag[i] && !strcmp(md->cname[i], md->cname[j]);
        if (dup) continue;
        total++;
        if (shown >= MBL_CHECK_LIST_MAX) continue;
        int cnt = 0;
        double worst = 0;
        for (int i = j; i < md->m; i++)
            if (flag[i] && !strcmp(md->cname[i], md->cname[j])) {
                cnt++;
                if (val && fabs(val[i]) > worst) worst = fabs(val[i]);
            }
        fprintf(f, "%s%s", shown ? ", " : "", md->cname[j]);
        if (val) fprintf(f, " [residual %.3g]", worst);
        else if (cnt > 1) fprintf(f, " [%d equations]", cnt);
        shown++;
    }
    if (total > shown) fprintf(f, ", and %d more", total - shown);
    fputc('\n', f);
}

int mbl_check_constraints(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    int m = md->m, n = md->n;
    if (m == 0 || !md->cname) return 0;
    size_t nsym = (size_t)md->nsym + 1;
    double *syms = mbl_calloc(nsym, sizeof *syms);
    double *work = mbl_calloc(md->work_size + 1, sizeof *work);
    double *zeros = mbl_calloc((size_t)(n + m + md->k + 1), sizeof *zeros);
    int *flag = mbl_calloc((size_t)m, sizeof *flag);
    double *buf = NULL, *J = NULL, *U = NULL, *s = NULL;
    int rc = 0;
    mbl_status st;
    if (!syms || !work || !zeros || !flag) {
        rc = MBL_ENOMEM;
        goto done;
    }
    if (!pt) {
        /* no consistent point: the violated constraints at the initial configuration */
        mbl_model_fill_syms(md, md->time, md->q0, md->v0, zeros, zeros, zeros, md->r0, syms);
        buf = mbl_calloc((size_t)md->nF + 1, sizeof *buf);
        if (!buf) {
            rc = MBL_ENOMEM;
            goto done;
        }
        if (mblx_tape_eval(md->tape_F, syms, buf, work, &st)) {
            fprintf(f, "  problem: the constraints cannot be evaluated at the initial configuration: %s\n", st.msg);
            goto done;
        }
        const double *phi = buf + md->row0[MBL_ROW_PHI];
        int bad = 0;
        for (int j = 0; j < m; j++) bad += flag[j] = fabs(phi[j]) > MBL_CHECK_RESIDUAL_TOL;
        if (bad) {
            fprintf(f, "  problem: the parts did not assemble; constraints violated at the initial configuration: ");
            list_names(f, md, flag, phi);
        }
        goto done;
    }
    /* Phi_q at the point, dense m x n */
    mbl_model_fill_syms(md, pt->t, pt->q, pt->v, pt->vdot, pt->lambda, pt->mu, pt->r, syms);
    buf = mbl_calloc((size_t)md->jac.nz + 1, sizeof *buf);
    J = mbl_calloc((size_t)m * (size_t)n + 1, sizeof *J);
    U = mbl_calloc((size_t)m * (size_t)m + 1, sizeof *U);
    s = mbl_calloc((size_t)(m < n ? m : n) + 1, sizeof *s);
    if (!buf || !J || !U || !s) {
        rc = MBL_ENOMEM;
        goto done;
    }
    if (mblx_tape_eval(md->tape_jac, syms, buf, work, &st)) goto done;
    int jq = mbl_model_blk0(md, MBL_BLK_Q), r_phi = md->row0[MBL_ROW_PHI];
    for (int p = 0; p < md->jac.nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        if (r >= r_phi && r < r_phi + m && c >= jq && c < jq + n) J[(r - r_phi) + (size_t)(c - jq) * m] = buf[p];
    }
    int k = m < n ? m : n;
    if (mbla_svd(m, n, J, m, 'A', s, U, m, NULL, n, &st)) goto done;
    int rank = mbla_rank_from_diag(m, n, k, s, 1, MBL_CHECK_RANK_TOL);
    if (rank >= m) goto done;
    /* left null space: columns rank..m-1 of U */
    for (int c = rank; c < m; c++)
        for (int j = 0; j < m; j++)
            if (fabs(U[j + (size_t)c * m]) > MBL_CHECK_NULL_WEIGHT) flag[j] = 1;
    fprintf(f, "  redundant constraints: %d of %d equations are dependent (Gruebler count %d, mobility %d); among: ",
            m - rank, m, n - m, n - rank);
    list_names(f, md, flag, NULL);
done:
    mbl_free(syms);
    mbl_free(work);
    mbl_free(zeros);
    mbl_free(flag);
    mbl_free(buf);
    mbl_free(J);
    mbl_free(U);
    mbl_free(s);
    if (rc) return rc;
    return ferror(f) ? MBL_EIO : 0;
}
