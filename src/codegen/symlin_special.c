/* Symbolic linear models (symlin.c) specialized for printing: some parameters kept as symbols,
 * the others and the point in closed form where one is found, the matrices expanded where that
 * prints shorter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/symlin_internal.h"

#define SYMLIN_EXPAND_MAX_TERMS 2000

/* a deterministic uniform number in [0, 1) (xorshift64*) */
static double uniform(unsigned long long *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* replace every entry of a matrix by its substitution */
static void subst_all(mblx_graph *g, mblx_id *v, size_t len, size_t n, const mblx_id *syms, const mblx_id *repl)
{
    for (size_t i = 0; v && i < len; i++) v[i] = mblx_subst(g, v[i], n, syms, repl);
}

int mbl_symlin_special(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int *closed, mbl_status *st)
{
    return mbl_symlin_special2(sl, keep, nkeep, keep_all, 0, closed, st);
}

/* closed-form candidates of the point's coordinates (at most SPECIAL_NCAND each) */
#define SPECIAL_NCAND 8
#define SPECIAL_MAX_COMBOS 4096

/* The parameters kept as symbols (kept[i] = 1): those named in keep, or every one. */
static int special_kept(const mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int *kept,
                        mbl_status *st)
{
    int np = sl->np;
    for (int k = 0; k < nkeep; k++) {
        int found = 0;
        for (int i = 0; i < np; i++)
            if (!strcmp(keep[k], sl->pname[i])) kept[i] = 1, found = 1;
        if (!found) return mbl_error(st, MBL_EARG, "the model has no parameter '%s'", keep[k]);
    }
    if (keep_all)
        for (int i = 0; i < np; i++) kept[i] = 1;
    return 0;
}

/* Parameters that no expression of the linear model depends on (a mechanism's geometry and a URDF
 * joint angle are numbers once loaded; a parameter used only by the point's guess) are not
 * symbols of the result: they are not kept (issue 30, item 5), and named in dropped. */
static int special_unused(const mbl_symlin *sl, int *kept, char *dropped, size_t cap)
{
    mblx_graph *g = sl->g;
    size_t nn = mblx_node_count(g), top = 0;
    unsigned char *mark = mbl_calloc(nn + 1, 1);
    mblx_id *stack = mbl_alloc_array(nn + 1, sizeof *stack);
    if (!mark || !stack) {
        mbl_free(mark), mbl_free(stack);
        return MBL_ENOMEM;
    }
    const mblx_id *mats[] = {sl->A, sl->B, sl->C, sl->D, sl->M, sl->Cd, sl->K, sl->F, sl->H, sl->lam, sl->res};
    size_t lens[] = {(size_t)sl->nx * sl->nx, (size_t)sl->nx * sl->nr, (size_t)sl->ny * sl->nx,
                     (size_t)sl->ny * sl->nr, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                     (size_t)sl->z * sl->nr, (size_t)sl->n * sl->z, (size_t)sl->m, (size_t)(sl->m + sl->n)};
    for (int k = 0; k < 11; k++)
        for (size_t i = 0; mats[k] && i < lens[k]; i++) {
            if (mats[k][i] == MBLX_NONE || mark[mats[k][i]]) continue;
            mark[mats[k][i]] = 1, stack[top++] = mats[k][i];
            while (top) {
                mblx_id e = stack[--top];
                int na = mblx_node_nargs(g, e);
                for (int a = 0; a < na; a++) {
                    mblx_id x = mblx_node_arg(g, e, a);
                    if (!mark[x]) mark[x] = 1, stack[top++] = x;
                }
            }
        }
    size_t at = 0;
    dropped[0] = 0;
    for (int i = 0; i < sl->np; i++)
        if (kept[i] && !mark[sl->p[i]]) {
            kept[i] = 0;
            int w = snprintf(dropped + at, cap - at, "%s%s", at ? ", " : "", sl->pname[i]);
            if (w > 0) at = at + (size_t)w < cap ? at + (size_t)w : cap - 1;
        }
    mbl_free(mark), mbl_free(stack);
    return 0;
}

/* The substitution of the parameters (syms, repl: a kept one stays, the others become their values)
 * and for each coordinate its closed-form candidates (cand, ncand: 0, +-p, +-p/2, +-2p, +-p_a +-
 * p_b that match the point's value, else the value itself); returns how many combinations. */
static double special_candidates(mbl_symlin *sl, const int *kept, mblx_id *syms, mblx_id *repl, mblx_id *cand,
                                 int *ncand)
{
    mblx_graph *g = sl->g;
    int np = sl->np, n = sl->n;
    double qscale = 1.0;
    for (int i = 0; i < n; i++) qscale = fmax(qscale, fabs(sl->qval[i]));
    for (int i = 0; i < np; i++) syms[i] = sl->p[i], repl[i] = kept[i] ? sl->p[i] : mblx_const(g, sl->pval[i]);
#define CAND(e) mblx_subst(g, (e), (size_t)np, syms, repl)
    double combos = 1.0;
    for (int i = 0; i < n; i++) {
        double v = sl->qval[i], tol = 1e-9 * fmax(1.0, fabs(v));
        mblx_id *c = cand + (size_t)i * SPECIAL_NCAND;
        int nc = 0;
        if (fabs(v) <= 1e-12 * qscale) c[nc++] = mblx_const(g, 0.0);
        static const double coef[] = {1, -1, 0.5, -0.5, 2, -2};
        for (int a = 0; a < np; a++) {
            for (int k = 0; nc < SPECIAL_NCAND - 1 && k < 6; k++)
                if (fabs(coef[k] * sl->pval[a] - v) <= tol) c[nc++] = CAND(mblx_scale(g, coef[k], sl->p[a]));
            for (int b = a + 1; b < np; b++) {
                for (int sa = -1; sa <= 1; sa += 2)
                    for (int sb = -1; sb <= 1; sb += 2)
                        if (nc < SPECIAL_NCAND - 1 && fabs(sa * sl->pval[a] + sb * sl->pval[b] - v) <= tol)
                            c[nc++] = CAND(mblx_add(g, mblx_scale(g, sa, sl->p[a]), mblx_scale(g, sb, sl->p[b])));
            }
        }
        /* a number no parameter changes (verified below), also after parameter candidates that match by
         * chance (the Euler parameter 1 = I + J of a mount) */
        if (!nc || (nc < SPECIAL_NCAND && fabs(v) > 1e-12 * qscale)) c[nc++] = mblx_const(g, v);
        ncand[i] = nc;
#undef CAND
        combos *= nc;
    }
    return combos;
}

/* Verify each combination of candidates at 20 random parameter sets (kept parameters within +-20 %):
 * 1 when one satisfies the equilibrium residuals everywhere (then in repl[np ..]). res: m + n,
 * sv: the graph's symbols, rv: m + n scratch. Each residual is measured against its own scale
 * 1 + sum_j |d res_i / d q_j| (1 + |q_j|) at the candidate (issue 30, item 5: the former bound
 * 1e-9 max|p|^3 was 1.25e5 on a mount of stiffness 5e4, and accepted the Euler parameter
 * e0 = I + 0.6 where e0 = 1). */
#define SPECIAL_RES_TOL 1e-9
static int special_verify(mbl_symlin *sl, const int *kept, int point_symbols, mblx_id *syms, mblx_id *repl,
                          const mblx_id *cand, const int *ncand, int *pick, double combos, mblx_id *res, double *sv,
                          double *rv)
{
    mblx_graph *g = sl->g;
    int np = sl->np, n = sl->n, m = sl->m;
    for (int i = 0; i < n; i++) syms[np + i] = sl->q[i];
    int ok = 0;
    size_t nr_ = (size_t)(m + n), nj = nr_ * (size_t)n;
    mblx_id *J = codegen_new_ids(nj), *Jc = codegen_new_ids(nr_ + nj + (size_t)n);
    double *jv = mbl_alloc_array(nr_ + nj + (size_t)n + 1, sizeof *jv);
    if (!J || !Jc || !jv) point_symbols = 1; /* out of memory: no closed form */
    for (size_t i = 0; !point_symbols && sl->res && i < nr_; i++)
        for (int j = 0; j < n; j++) J[i + (size_t)j * nr_] = mblx_diff(g, sl->res[i], sl->q[j]);
    for (long combo = 0; !point_symbols && sl->res && sl->nq <= n && !ok && combos <= SPECIAL_MAX_COMBOS && combo < (long)combos; combo++) {
        long rest = combo;
        for (int i = 0; i < n; i++) {
            pick[i] = (int)(rest % ncand[i]), rest /= ncand[i];
            repl[np + i] = cand[(size_t)i * SPECIAL_NCAND + pick[i]];
        }
        for (int i = 0; i < m + n; i++) res[i] = mblx_subst(g, sl->res[i], (size_t)(np + n), syms, repl);
        for (size_t i = 0; i < nr_; i++) Jc[i] = res[i];
        for (size_t i = 0; i < nj; i++) Jc[nr_ + i] = mblx_subst(g, J[i], (size_t)(np + n), syms, repl);
        for (int j = 0; j < n; j++) Jc[nr_ + nj + (size_t)j] = repl[np + j];
        unsigned long long seed = 0x9e3779b97f4a7c15ULL;
        ok = mblx_graph_status(g, NULL) == 0;
        for (int trial = 0; ok && trial < 20; trial++) {
            for (int i = 0; i < np; i++) /* every kept one varies (a zero one by +-0.2) */
                sv[mblx_symbol_index(g, sl->p[i])] = !kept[i] ? sl->pval[i]
                                                     : sl->pval[i] != 0.0 ? sl->pval[i] * (0.8 + 0.4 * uniform(&seed))
                                                                          : 0.4 * uniform(&seed) - 0.2;
            for (int i = 0; i < sl->nr; i++) sv[mblx_symbol_index(g, sl->r[i])] = sl->rval[i];
            mbl_status est = {0};
            if (codegen_eval_nodes(g, nr_ + nj + (size_t)n, Jc, sv, jv, &est)) {
                ok = 0;
                break;
            }
            for (size_t i = 0; i < nr_; i++) {
                double scale = 1.0;
                for (int j = 0; j < n; j++) scale += fabs(jv[nr_ + i + (size_t)j * nr_]) * (1.0 + fabs(jv[nr_ + nj + (size_t)j]));
                if (!(fabs(jv[i]) <= SPECIAL_RES_TOL * scale)) ok = 0;
            }
        }
    }
    (void)rv;
    mbl_free(J), mbl_free(Jc), mbl_free(jv);
    return ok;
}

/* What the specialization did, in sl->note; without a closed form the coordinates stay symbols. */
static void special_note(mbl_symlin *sl, int ok, int point_symbols, mblx_id *repl, int *closed)
{
    int np = sl->np, n = sl->n;
    if (ok) {
        *closed = 1;
        snprintf(sl->note, sizeof sl->note,
                 "the operating point in closed form (an equilibrium at 20 random parameter sets)");
    } else {
        for (int i = 0; i < n; i++) repl[np + i] = sl->q[i];
        if (sl->nq > n)
            snprintf(sl->note, sizeof sl->note,
                     "the coordinates, ODE states and implicit variables stand for the point's values (no closed "
                     "form is searched with ODE states)");
        else if (sl->moving && !point_symbols)
            snprintf(sl->note, sizeof sl->note,
                     "a point with motion: the coordinates q and velocities der(q) stand for the point's values "
                     "(no closed form is searched)");
        else if (point_symbols)
            snprintf(sl->note, sizeof sl->note,
                     "the coordinates stand for the point's values (asked for): M-hat holds at any configuration, "
                     "the rest at the operating point");
        else
            snprintf(sl->note, sizeof sl->note,
                     "the operating point has no closed form found here: the coordinates stand for the point's values");
    }
}

/* The point (sl->qpoint) and every matrix with the parameters and coordinates substituted. */
static int special_subst(mbl_symlin *sl, const mblx_id *syms, const mblx_id *repl, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int np = sl->np, n = sl->n, m = sl->m;
    size_t nsub = (size_t)(np + n);
    mbl_free(sl->qpoint);
    sl->qpoint = mbl_alloc_array((size_t)n + 1, sizeof(mblx_id));
    if (!sl->qpoint) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) sl->qpoint[i] = repl[np + i];
    subst_all(g, sl->H, (size_t)n * sl->z, nsub, syms, repl);
    subst_all(g, sl->lam, (size_t)m, nsub, syms, repl);
    subst_all(g, sl->M, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->Cd, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->K, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->F, (size_t)sl->z * sl->nr, nsub, syms, repl);
    subst_all(g, sl->A, (size_t)sl->nx * sl->nx, nsub, syms, repl);
    subst_all(g, sl->B, (size_t)sl->nx * sl->nr, nsub, syms, repl);
    subst_all(g, sl->C, (size_t)sl->ny * sl->nx, nsub, syms, repl);
    subst_all(g, sl->D, (size_t)sl->ny * sl->nr, nsub, syms, repl);
    subst_all(g, sl->res, (size_t)(m + n), nsub, syms, repl);
    return 0;
}

/* The printed size (as a tree) of every node of g: 1 + its arguments' (NULL when out of memory). */
static double *tree_sizes(const mblx_graph *g)
{
    size_t nn = mblx_node_count(g);
    double *ts = mbl_alloc_array(nn + 1, sizeof *ts);
    if (!ts) return NULL;
    for (size_t e = 0; e < nn; e++) {
        double sz = 1.0;
        int na = mblx_node_nargs(g, (mblx_id)e);
        for (int i = 0; i < na; i++) sz += ts[mblx_node_arg(g, (mblx_id)e, i)];
        ts[e] = sz;
    }
    return ts;
}

/* the printed matrices in the expanded canonical form where it prints at most twice as long
 * as the form built (A and B, which hold M-hat^-1, stay as the elimination built them) */
static int special_expand(mbl_symlin *sl, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m;
    mblx_id *mats[] = {sl->H, sl->M, sl->Cd, sl->K, sl->F, sl->C, sl->D, sl->qpoint, sl->lam};
    size_t lens[] = {(size_t)n * sl->z, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                     (size_t)sl->z * sl->nr, (size_t)sl->ny * sl->nx, (size_t)sl->ny * sl->nr, (size_t)n,
                     (size_t)m};
    size_t total = 0, at = 0;
    for (int k = 0; k < 9; k++) total += mats[k] ? lens[k] : 0;
    mblx_id *xs = mbl_alloc_array(total + 1, sizeof *xs);
    if (!xs) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* printed sizes (trees) of the forms built: entries too long to print are not expanded */
    double *ts0 = tree_sizes(g);
    if (!ts0) {
        mbl_free(xs);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int k = 0; k < 9; k++)
        for (size_t i = 0; mats[k] && i < lens[k]; i++)
            xs[at++] = ts0[mats[k][i]] <= SYMLIN_EXPAND_MAX_TERMS ? mbl_symlin_expand(g, mats[k][i], SYMLIN_EXPAND_MAX_TERMS)
                                                                  : MBLX_NONE;
    mbl_free(ts0);
    double *ts = tree_sizes(g);
    if (!ts) {
        mbl_free(xs);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    at = 0;
    for (int k = 0; k < 9; k++)
        for (size_t i = 0; mats[k] && i < lens[k]; i++, at++)
            if (xs[at] != MBLX_NONE && ts[xs[at]] <= 2.0 * ts[mats[k][i]]) mats[k][i] = xs[at];
    mbl_free(ts), mbl_free(xs);
    return 0;
}

int mbl_symlin_special2(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int point_symbols,
                        int *closed, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int np = sl->np, n = sl->n, m = sl->m;
    *closed = 0;
    int *kept = mbl_calloc((size_t)np + 1, sizeof *kept);
    mblx_id *syms = mbl_alloc_array((size_t)(np + n) + 1, sizeof *syms);
    mblx_id *repl = mbl_alloc_array((size_t)(np + n) + 1, sizeof *repl);
    mblx_id *res = mbl_alloc_array((size_t)(m + n) + 1, sizeof *res);
    mblx_id *cand = NULL;
    int *ncand = NULL, *pick = NULL;
    double *sv = NULL, *rv = NULL;
    int rc = 0;
    if (!kept || !syms || !repl || !res) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    rc = special_kept(sl, keep, nkeep, keep_all, kept, st);
    char dropped[256];
    if (!rc && special_unused(sl, kept, dropped, sizeof dropped)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) goto out;
    mbl_free(sl->pkept);
    sl->pkept = mbl_alloc_array((size_t)np + 1, sizeof *sl->pkept);
    if (!sl->pkept) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(sl->pkept, kept, (size_t)np * sizeof *kept);
    cand = mbl_alloc_array((size_t)n * SPECIAL_NCAND + 1, sizeof *cand);
    ncand = mbl_calloc((size_t)n + 1, sizeof *ncand), pick = mbl_calloc((size_t)n + 1, sizeof *pick);
    if (!cand || !ncand || !pick) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    double combos = special_candidates(sl, kept, syms, repl, cand, ncand);
    size_t ns = mblx_symbol_count(g) + 1;
    sv = mbl_calloc(ns, sizeof *sv);
    rv = mbl_alloc_array((size_t)(m + n) + 1, sizeof *rv);
    if (!sv || !rv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    int ok = special_verify(sl, kept, point_symbols, syms, repl, cand, ncand, pick, combos, res, sv, rv);
    special_note(sl, ok, point_symbols, repl, closed);
    if (dropped[0]) {
        size_t len = strlen(sl->note);
        snprintf(sl->note + len, sizeof sl->note - len,
                 "; not symbols (no expression of the linear model depends on them: numbers once the model is "
                 "loaded, or only in the point's guess): %s", dropped);
    }
    rc = special_subst(sl, syms, repl, st);
    if (!rc) rc = special_expand(sl, st);
    if (!rc) rc = mblx_graph_status(g, st);
out:
    mbl_free(cand), mbl_free(ncand), mbl_free(pick);
    mbl_free(kept), mbl_free(syms), mbl_free(repl), mbl_free(res), mbl_free(sv), mbl_free(rv);
    return rc;
}

double mbl_symlin_print_size(const mbl_symlin *sl)
{
    double *ts = tree_sizes(sl->g);
    if (!ts) return INFINITY;
    const mblx_id *mats[] = {sl->A, sl->B, sl->C, sl->D, sl->M, sl->Cd, sl->K, sl->F, sl->H};
    size_t lens[] = {(size_t)sl->nx * sl->nx, (size_t)sl->nx * sl->nr, (size_t)sl->ny * sl->nx,
                     (size_t)sl->ny * sl->nr, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                     (size_t)sl->z * sl->z, (size_t)sl->z * sl->nr, (size_t)sl->n * sl->z};
    double total = 0.0;
    for (int k = 0; k < 9; k++)
        for (size_t i = 0; mats[k] && i < lens[k]; i++) total += ts[mats[k][i]];
    mbl_free(ts);
    return total;
}
