/* The check of a specialized symbolic linear model against mblin's numeric linearization
 * (mbl_symlin_verify, include/mblin/codegen.h; issue 30, item 5): at random values of every
 * parameter kept as a symbol, the model is loaded anew with those values, its operating point
 * solved and linearized (the augmented method), and A, B, C, D of the symbolic model evaluated
 * there (the point's coordinates, ODE states and velocities where they stand as symbols) must
 * agree. The closed-form point search alone (symlin_special.c) checks only that its candidate is
 * an equilibrium, which a parameter that moves the point mblin finds (a URDF joint angle: the
 * upright acrobot) does not change. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/symlin_internal.h"

/* a deterministic uniform number in [0, 1) (xorshift64*) */
static double uniform01(unsigned long long *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* the largest deviation of the symbolic matrices' values (sym, in the order A, B, C, D) from lin's,
 * each relative to the largest entry of lin's matrix; which: the worst matrix */
static double deviation(const mbl_symlin *sl, const double *sym, const mbl_linear *lin, const int *ymap,
                        const char **which)
{
    const double *ref[4] = {lin->A, lin->B, lin->C, lin->D};
    size_t len[4] = {(size_t)sl->nx * sl->nx, (size_t)sl->nx * sl->nr, (size_t)sl->ny * sl->nx,
                     (size_t)sl->ny * sl->nr};
    static const char *names[4] = {"A", "B", "C", "D"};
    double worst = 0.0;
    size_t at = 0;
    for (int k = 0; k < 4; k++) {
        double scale = 0.0, dev = 0.0;
        for (size_t i = 0; i < len[k]; i++) {
            /* C and D: row i % ny of the symbolic model is lin's output ymap[i % ny] */
            size_t ri = k < 2 || !sl->ny ? i : (size_t)ymap[i % (size_t)sl->ny] + i / (size_t)sl->ny * (size_t)lin->ny;
            double d = fabs(sym[at + i] - ref[k][ri]);
            scale = fmax(scale, fabs(ref[k][ri]));
            dev = isnan(d) || d > dev ? d : dev;
        }
        at += len[k];
        double rel = scale > 0.0 ? dev / scale : dev;
        if (isnan(rel) || rel > worst) worst = isnan(rel) ? INFINITY : rel, *which = names[k];
    }
    return worst;
}

/* one set: load with the values, solve, linearize, evaluate; 1 when comparable (same states) */
static int verify_one(const mbl_symlin *sl, const char *path, const mbl_setting *set, int nset,
                      const mbl_opoint_options *po, const mblx_tape *tape, double *sv, double *out, double *work,
                      double *dev, const char **which, mbl_status *st)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mblx_graph *g = sl->g;
    int rc = mbl_model_load_file(path, set, nset, &md, st);
    if (!rc) rc = mbl_operating_point(md, po, &pt, st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, st);
    int ok = 0;
    /* the outputs by name: the file reloaded has all its outputs, the model may have kept some
     * (mbl_load_options.outputs) */
    int *ymap = mbl_alloc_array((size_t)sl->ny + 1, sizeof *ymap);
    if (!ymap && !rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && lin->A && lin->nx == sl->nx && lin->nu == sl->nr && lin->ny >= sl->ny) {
        ok = 1;
        for (int i = 0; i < sl->nx && ok; i++) ok = !strcmp(lin->state_names[i], sl->state_names[i]);
        for (int i = 0; i < sl->ny && ok; i++) {
            ymap[i] = -1;
            for (int j = 0; j < lin->ny && ymap[i] < 0; j++)
                if (!strcmp(lin->output_names[j], sl->yname[i])) ymap[i] = j;
            ok = ymap[i] >= 0;
        }
    }
    if (ok) {
        for (int i = 0; i < sl->nq; i++) {
            double v = i < sl->n ? pt->q[i] : i < sl->n + pt->nX ? pt->X[i - sl->n] : pt->Z[i - sl->n - pt->nX];
            sv[mblx_symbol_index(g, sl->q[i])] = v;
        }
        for (int i = 0; i < sl->nr; i++) sv[mblx_symbol_index(g, sl->r[i])] = pt->r[i];
        for (int i = 0; sl->moving && sl->v && i < sl->n; i++) sv[mblx_symbol_index(g, sl->v[i])] = pt->v[i];
        mblx_id ts = mblx_symbol_find(g, "t");
        if (ts != MBLX_NONE) sv[mblx_symbol_index(g, ts)] = pt->t;
        rc = mblx_tape_eval(tape, sv, out, work, st);
        if (!rc) *dev = deviation(sl, out, lin, ymap, which);
        else ok = 0, rc = 0; /* outside the expressions' domain there: not comparable */
    }
    mbl_free(ymap);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    if (rc) return -1; /* not solvable at this set: not comparable */
    return ok;
}

int mbl_symlin_verify(const mbl_symlin *sl, const char *path, const mbl_setting *sets, int nsets,
                      const mbl_opoint_options *po, double tol, mbl_symlin_check *out, mbl_status *st)
{
    mblx_graph *g = sl->g;
    memset(out, 0, sizeof *out);
    if (!tol) tol = MBL_SYMLIN_VERIFY_TOL;
    size_t nA = (size_t)sl->nx * sl->nx, nB = (size_t)sl->nx * sl->nr, nC = (size_t)sl->ny * sl->nx;
    size_t nall = nA + nB + nC + (size_t)sl->ny * sl->nr;
    mblx_id *roots = codegen_new_ids(nall);
    if (!roots) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(roots, sl->A, nA * sizeof *roots), memcpy(roots + nA, sl->B, nB * sizeof *roots);
    memcpy(roots + nA + nB, sl->C, nC * sizeof *roots);
    memcpy(roots + nA + nB + nC, sl->D, (size_t)sl->ny * sl->nr * sizeof *roots);
    mblx_tape *tape = mblx_compile(g, nall, roots, st);
    mbl_free(roots);
    if (!tape) return st && st->code ? st->code : MBL_ENOMEM;
    size_t ns = mblx_symbol_count(g) + 1;
    double *sv = mbl_calloc(ns, sizeof *sv), *vals = mbl_alloc_array(nall + 1, sizeof *vals);
    double *work = mbl_alloc_array(mblx_tape_work_size(tape) + 1, sizeof *work);
    mbl_setting *set = mbl_alloc_array((size_t)(sl->np + nsets) + 1, sizeof *set);
    int rc = (!sv || !vals || !work || !set) ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    int nkept = 0;
    for (int i = 0; i < sl->np; i++) nkept += sl->pkept && sl->pkept[i];
    int ntrials = nkept ? MBL_SYMLIN_VERIFY_SETS : 1;
    unsigned long long seed = 0x2545f4914f6cdd1dULL;
    for (int trial = 0; !rc && trial < ntrials; trial++) {
        int nset = 0;
        for (int i = 0; i < sl->np; i++) {
            double v = sl->pval[i];
            if (sl->pkept && sl->pkept[i]) /* every kept parameter varies (a zero one by +-0.2) */
                v = v != 0.0 ? v * (0.8 + 0.4 * uniform01(&seed)) : 0.4 * uniform01(&seed) - 0.2;
            sv[mblx_symbol_index(g, sl->p[i])] = v;
            if (sl->pkept && sl->pkept[i]) set[nset].name = sl->pname[i], set[nset++].value = v;
        }
        for (int k = 0; k < nsets; k++) {
            int dup = 0;
            for (int j = 0; j < nset && !dup; j++) dup = !strcmp(set[j].name, sets[k].name);
            if (!dup) set[nset++] = sets[k];
        }
        double dev = 0.0;
        const char *which = "A";
        mbl_status tst = {0};
        int r = verify_one(sl, path, set, nset, po, tape, sv, vals, work, &dev, &which, &tst);
        out->tried++;
        if (r <= 0) continue;
        out->compared++;
        if (dev > out->worst) out->worst = dev;
        if (!(dev <= tol)) {
            out->failed_set = trial + 1;
            char vals_txt[200] = "";
            size_t at = 0;
            for (int j = 0; j < nset && at + 1 < sizeof vals_txt; j++) {
                int w = snprintf(vals_txt + at, sizeof vals_txt - at, "%s%s=%.6g", j ? " " : "", set[j].name, set[j].value);
                if (w > 0) at = at + (size_t)w < sizeof vals_txt ? at + (size_t)w : sizeof vals_txt - 1;
            }
            rc = mbl_error(st, MBL_EMODEL,
                           "the symbolic linear model disagrees with mblin linearize at %s (%s deviates by %.3g "
                           "relative to its largest entry; limit %g)",
                           nset ? vals_txt : "the model's parameters", which, dev, tol);
        }
    }
    mbl_free(sv), mbl_free(vals), mbl_free(work), mbl_free(set);
    mblx_tape_free(tape);
    return rc;
}
