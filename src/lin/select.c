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

#include "lin/lin_internal.h"
#include "mblin/la.h"

static void append(char *buf, size_t size, const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(buf);
    if (len + 1 >= size) return;
    snprintf(buf + len, size - len, fmt, a, b);
}

/* One level of selection. C is the constraint Jacobian (nc x n, dense column-major), G the
 * candidate rows (ncand x n) with weights wcand (smaller = preferred as a state). Returns in
 * free_cand[] which candidates are states (1) and in free_coord[] which internal columns are. */
static int select_level(int nc, int n, const double *C, int ncand, const double *G, const double *wcand,
                        double pivot_tol, int *free_coord, int *free_cand, int *rank_c, mbl_status *st)
{
    int rows = nc + ncand, cols = n + ncand;
    if (rows == 0) { /* nothing to eliminate: every coordinate is a state */
        for (int j = 0; j < n; j++) free_coord[j] = 1;
        *rank_c = 0;
        return 0;
    }
    double *J = mbl_calloc((size_t)rows * (size_t)cols + 1, sizeof *J);
    double *w = mbl_alloc_array((size_t)cols + 1, sizeof *w);
    int *chosen = mbl_alloc_array((size_t)cols + 1, sizeof *chosen);
    double *Cc = mbl_alloc_array((size_t)nc * (size_t)n + 1, sizeof *Cc);
    if (!J || !w || !chosen || !Cc) {
        mbl_free(J), mbl_free(w), mbl_free(chosen), mbl_free(Cc);
        return mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
    }
    /* rows scaled to unit max-norm over the coordinate part */
    for (int i = 0; i < nc; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s = fmax(s, fabs(C[i + (size_t)j * nc]));
        s = s > 0 ? 1.0 / s : 1.0;
        for (int j = 0; j < n; j++) J[i + (size_t)j * rows] = s * C[i + (size_t)j * nc];
    }
    for (int i = 0; i < ncand; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s = fmax(s, fabs(G[i + (size_t)j * ncand]));
        s = s > 0 ? 1.0 / s : 1.0;
        for (int j = 0; j < n; j++) J[nc + i + (size_t)j * rows] = -s * G[i + (size_t)j * ncand];
        J[nc + i + (size_t)(n + i) * rows] = 1.0;
    }
    for (int j = 0; j < n; j++) w[j] = 1.0;
    for (int i = 0; i < ncand; i++) w[n + i] = wcand[i];
    int rank = 0;
    int rc = mbla_select_columns(rows, cols, J, rows, w, pivot_tol, chosen, &rank, st);
    if (!rc) {
        for (int j = 0; j < n; j++) free_coord[j] = 1;
        for (int i = 0; i < ncand; i++) free_cand[i] = 1;
        for (int r = 0; r < rank; r++) {
            if (chosen[r] < n) free_coord[chosen[r]] = 0;
            else free_cand[chosen[r] - n] = 0;
        }
        /* rank of the constraint part alone: every candidate row adds exactly one to the rank
         * through its identity column */
        *rank_c = rank - ncand;
    }
    /* the constraint rank on its own, for the messages */
    mbl_free(J), mbl_free(w), mbl_free(chosen), mbl_free(Cc);
    return rc;
}

int mbl_select_states(const mbl_model *md, const mbl_eval *ev, const mbl_lin_options *opt, mbl_linear *lin,
                      mbl_state_ref **Sout, int *z0out, mbl_state_ref **Wout, int *z1out, mbl_status *st)
{
    int n = md->n, m = md->m, k = md->k, nus = md->nus, nuvs = md->nuvs;
    int rc = 0;
    *Sout = *Wout = NULL;
    double *C = mbl_calloc((size_t)(m + k) * (size_t)n + 1, sizeof *C);
    double *G = mbl_calloc((size_t)(nus + nuvs + n) * (size_t)n + 1, sizeof *G);
    double *wc = mbl_alloc_array((size_t)(nus + nuvs + n) + 1, sizeof *wc);
    int *free_coord = mbl_alloc_array((size_t)n + 1, sizeof *free_coord);
    int *free_cand = mbl_alloc_array((size_t)(nus + nuvs + n) + 1, sizeof *free_cand);
    mbl_state_ref *S = mbl_alloc_array((size_t)n + 1, sizeof *S);
    mbl_state_ref *W = mbl_alloc_array((size_t)n + 1, sizeof *W);
    if (!C || !G || !wc || !free_coord || !free_cand || !S || !W) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
        goto done;
    }
    lin->selection[0] = '\0';
    lin->nsel_added = lin->nsel_dropped = 0;

    /* ---- position level: Phi_q and the user states' s_q ---- */
    mbl_jac_block(md, ev->jac, MBL_ROW_PHI, MBL_BLK_Q, C);
    const double *usjac = ev->us + 3 * nus + 2 * nuvs;
    int jq = mbl_model_blk0(md, MBL_BLK_Q);
    for (int p = 0; p < md->usjac.nz; p++) {
        int r = md->usjac.row[p], c = md->usjac.col[p];
        if (r < nus && c >= jq && c < jq + n) G[r + (size_t)(c - jq) * nus] = usjac[p];
    }
    for (int i = 0; i < nus; i++) wc[i] = opt->state_weight;
    int rank0 = 0;
    rc = select_level(m, n, C, nus, G, wc, opt->pivot_tol, free_coord, free_cand, &rank0, st);
    if (rc) goto done;
    if (rank0 < m) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "singular configuration: the constraint Jacobian Phi_q has rank %d < %d constraints (rank "
                       "deficiency %d): redundant constraints or a singular (locked or bifurcating) configuration",
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
            append(lin->selection, sizeof lin->selection, "dropped user state '%s'%s; ", md->us_text[i],
                   "");
        }
    }
    for (int j = 0; j < n; j++)
        if (free_coord[j]) {
            S[z0].kind = MBL_SREF_COORD;
            S[z0++].index = j;
            if (nus > 0) {
                lin->nsel_added++;
                append(lin->selection, sizeof lin->selection, "added coordinate '%s'%s; ", md->qname[j], "");
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
        memset(C, 0, (size_t)(m + k) * (size_t)n * sizeof *C);
        double *blk = mbl_alloc_array((size_t)(m > k ? m : k) * (size_t)n + 1, sizeof *blk);
        if (!blk) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory in the state selection");
            goto done;
        }
        mbl_jac_block(md, ev->jac, MBL_ROW_PHID, MBL_BLK_V, blk);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) C[i + (size_t)j * (m + k)] = blk[i + (size_t)j * m];
        mbl_jac_block(md, ev->jac, MBL_ROW_NH, MBL_BLK_V, blk);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < k; i++) C[m + i + (size_t)j * (m + k)] = blk[i + (size_t)j * k];
        mbl_free(blk);
        /* candidates: user velocity states, then the derivatives of the position states */
        int ncand = nuvs + z0;
        memset(G, 0, (size_t)ncand * (size_t)n * sizeof *G);
        int jv = mbl_model_blk0(md, MBL_BLK_V);
        for (int p = 0; p < md->usjac.nz; p++) {
            int r = md->usjac.row[p], c = md->usjac.col[p];
            if (r >= 3 * nus && r < 3 * nus + nuvs && c >= jv && c < jv + n)
                G[(r - 3 * nus) + (size_t)(c - jv) * ncand] = usjac[p];
        }
        for (int i = 0; i < z0; i++) {
            int row = nuvs + i;
            if (S[i].kind == MBL_SREF_COORD) {
                G[row + (size_t)S[i].index * ncand] = 1.0;
            } else { /* d(sdot)/dv = s_q */
                for (int p = 0; p < md->usjac.nz; p++) {
                    int r = md->usjac.row[p], c = md->usjac.col[p];
                    if (r == nus + S[i].index && c >= jv && c < jv + n) G[row + (size_t)(c - jv) * ncand] = usjac[p];
                }
            }
        }
        for (int i = 0; i < nuvs; i++) wc[i] = opt->state_weight * opt->state_weight;
        for (int i = 0; i < z0; i++) wc[nuvs + i] = opt->state_weight;
        int rank1 = 0;
        rc = select_level(m + k, n, C, ncand, G, wc, opt->pivot_tol, free_coord, free_cand, &rank1, st);
        if (rc) goto done;
        if (rank1 < m + k) {
            rc = mbl_error(st, MBL_ESINGULAR,
                           "singular configuration: the velocity constraint Jacobian [Phi_q; A_nh] has rank %d < %d "
                           "(rank deficiency %d): redundant constraints",
                           rank1, m + k, m + k - rank1);
            goto done;
        }
        for (int i = 0; i < nuvs; i++) {
            if (free_cand[i]) {
                W[z1].kind = MBL_SREF_USER;
                W[z1++].index = i;
            } else {
                lin->nsel_dropped++;
                append(lin->selection, sizeof lin->selection, "dropped velocity state '%s'%s; ", md->uvs_text[i], "");
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
                append(lin->selection, sizeof lin->selection, "added velocity der(%s)%s; ", md->qname[j], "");
            }
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
    mbl_free(C), mbl_free(G), mbl_free(wc), mbl_free(free_coord), mbl_free(free_cand), mbl_free(S), mbl_free(W);
    return rc;
}
