/* Compiling the formulated model: the exact Jacobians of the residuals, outputs and user states,
 * their tapes (the residual's on a second thread for mid-sized models), and the drawing's. */
#include <stdatomic.h>
#include <string.h>

#include "core/progress.h"
#include "expr/compile_once.h"
#include "expr/domain.h"
#include "expr/fwdjac_narrow.h"
#include "model/compile_modes.h"
#include "model/formulate.h"
#include "model/terms/term.h"

/* Models with at least COMPILE_THREAD_MIN residuals and a graph of fewer than
 * COMPILE_THREAD_MAX_NODES nodes compile their residual tape on a second thread. Above, the two
 * large compilations' scratch (about 100 bytes per compiled node each) would be live at once and
 * stay in the process's heap: the N = 10^4 four-bar (1.7 M nodes) peaked at 426 MiB compiling
 * concurrently and 354 MiB one after the other, for the same CPU time and wall time within the
 * noise (the 3000-loop four-bar, 0.51 M nodes: 156 and 120 MiB; docs/benchmarks.md, issue 31
 * item 2). */
#define COMPILE_THREAD_MIN 2000
#define COMPILE_THREAD_MAX_NODES ((size_t)1 << 18)

/* The values of the Jacobian's entries (md->jac: the pattern of the inlined rows md->F) as the
 * tape computes them: from the rows md->Fc where formulate_let made them (an entry of the pattern
 * that is structurally zero there is the constant 0; entries of Fc outside the pattern cancel in
 * the inlined form and are dropped), else md->jac's own nodes. *out: jac.nz nodes (mbl_free). */
static int jacobian_compiled(mbl_model *md, mblx_id **out, mbl_status *st)
{
    *out = NULL;
    if (!md->Fc) return 0;
    int nz = md->jac.nz, nu = md->nunk;
    mblx_id *syms = mbl_alloc_array((size_t)(nu ? nu : 1), sizeof *syms);
    mblx_id *val = mbl_alloc_array((size_t)(nz ? nz : 1), sizeof *val);
    if (!syms || !val) {
        mbl_free(syms), mbl_free(val);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < nu; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    mblx_sparse S;
    int rc = mblx_jacobian(md->g, (size_t)md->nF, md->Fc, (size_t)nu, syms, &S);
    mbl_free(syms);
    if (rc) {
        mbl_free(val);
        return mblx_graph_status(md->g, st) ? mblx_graph_status(md->g, st) : mbl_error(st, rc, "out of memory");
    }
    mblx_id zero = mblx_const(md->g, 0.0);
    for (int p = 0; p < nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        val[p] = md->jac.node[p];
        if (r >= md->nF || md->Fc[r] == md->F[r]) continue;
        int lo = S.colptr[c], hi = S.colptr[c + 1];
        while (lo < hi) { /* rows are sorted within a column */
            int mid = lo + (hi - lo) / 2;
            if (S.rowidx[mid] < r) lo = mid + 1;
            else hi = mid;
        }
        val[p] = (lo < S.colptr[c + 1] && S.rowidx[lo] == r) ? S.node[lo] : zero;
    }
    mblx_sparse_free(&S);
    *out = val;
    return 0;
}

static atomic_int jacobian_all_columns;  /* model__jacobian_columns_mode */
static atomic_size_t jacobian_columns_cut; /* (counted for the tests) */

size_t model__jacobian_columns_mode(int all)
{
    atomic_store(&jacobian_all_columns, all != 0);
    return atomic_load(&jacobian_columns_cut);
}

/* The unknowns (columns, increasing) some of exprs depend on, into cols; their count, or -1 when
 * their dependences add up to nunk or more (then every unknown is taken) or out of memory. */
static int unknowns_used(const mbl_model *md, int nexpr, const mblx_id *exprs, int *cols)
{
    size_t ndep = 0, nsym = mblx_symbol_count(md->g);
    for (int i = 0; i < nexpr && ndep < (size_t)md->nunk; i++) {
        size_t cnt = 0;
        mblx_node_deps(md->g, exprs[i], &cnt);
        ndep += cnt;
    }
    if (ndep >= (size_t)md->nunk) return -1;
    unsigned char *dep = mbl_calloc(nsym ? nsym : 1, 1);
    if (!dep) return -1;
    for (int i = 0; i < nexpr; i++) {
        size_t cnt = 0;
        const uint32_t *d = mblx_node_deps(md->g, exprs[i], &cnt);
        for (size_t k = 0; k < cnt; k++)
            if (d[k] < nsym) dep[d[k]] = 1;
    }
    int m = 0;
    for (int j = 0; j < md->nunk; j++)
        if (dep[md->sym_of_unknown[j]]) cols[m++] = j;
    mbl_free(dep);
    return m;
}

/* Jacobian of exprs w.r.t. all unknowns [a lam mu v q r] into J (appending rows from row0). Only
 * the unknowns exprs depend on are given to mblx_jacobian (a few rows, such as the N = 10^4
 * four-bar's one user state, made its seed set of all 80,009 unknowns: 12 M instructions): it
 * differentiates column by column, each with its own seed, so the other columns change none of
 * the entries, nor the order in which their nodes are made. */
static int jacobian_unknowns(mbl_model *md, int nexpr, const mblx_id *exprs, int row0, mbl_sjac *J, mbl_status *st)
{
    /* no rows (a model without outputs or user states): J stays as it is, as mblx_jacobian would
     * leave it */
    if (!nexpr) return mblx_graph_status(md->g, st);
    int *cols = mbl_alloc_array((size_t)md->nunk + 1, sizeof *cols);
    mblx_id *syms = mbl_alloc_array((size_t)md->nunk + 1, sizeof *syms);
    if (!cols || !syms) {
        mbl_free(cols), mbl_free(syms);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    int ncol = atomic_load_explicit(&jacobian_all_columns, memory_order_relaxed) ? -1 : unknowns_used(md, nexpr, exprs, cols);
    if (ncol >= 0) atomic_fetch_add_explicit(&jacobian_columns_cut, 1, memory_order_relaxed);
    if (ncol < 0)
        for (ncol = 0; ncol < md->nunk; ncol++) cols[ncol] = ncol;
    for (int k = 0; k < ncol; k++) syms[k] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[cols[k]]);
    mblx_sparse S;
    int rc = mblx_jacobian(md->g, (size_t)nexpr, exprs, (size_t)ncol, syms, &S);
    mbl_free(syms);
    if (rc) {
        mbl_free(cols);
        return mblx_graph_status(md->g, st) ? mblx_graph_status(md->g, st) : mbl_error(st, rc, "out of memory");
    }
    if (model_sjac_reserve(J, (size_t)S.colptr[ncol])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int k = 0; k < ncol && !rc; k++)
        for (int p = S.colptr[k]; p < S.colptr[k + 1] && !rc; p++)
            if (model_sjac_push(J, row0 + S.rowidx[p], cols[k], S.node[p])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_sparse_free(&S);
    mbl_free(cols);
    return rc;
}

int model_user_state_nodes(const mbl_model *md, const mblx_id **nodes, mbl_status *st)
{
    *nodes = md->usjac.node;
    if (!md->usjac.nz || md->usjac.node[0] != MBLX_NONE) return 0;
    if (!md->usjx) {
        mbl_model *w = (mbl_model *)md; /* the cache: built once, under the graph lock */
        int ne = 3 * md->nus + 2 * md->nuvs, nz = md->usjac.nz;
        mblx_id *e = mbl_alloc_array((size_t)ne + 1, sizeof *e), *jx = mbl_alloc_array((size_t)nz + 1, sizeof *jx);
        mbl_sjac S = {0, 0, NULL, NULL, NULL};
        int rc = !e || !jx ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
        if (!rc) model_user_state_rows(w, e);
        if (!rc) rc = jacobian_unknowns(w, ne, e, 0, &S, st);
        if (!rc) {
            /* both by column, rows increasing: S's entries a subset of the structural pattern's
             * (those that do not cancel); the others 0 */
            mblx_id zero = mblx_const(md->g, 0.0);
            for (int p = 0, q = 0; p < nz; p++) {
                while (q < S.nz && (S.col[q] < md->usjac.col[p] || (S.col[q] == md->usjac.col[p] && S.row[q] < md->usjac.row[p])))
                    q++;
                jx[p] = q < S.nz && S.col[q] == md->usjac.col[p] && S.row[q] == md->usjac.row[p] ? S.node[q] : zero;
            }
            rc = mblx_graph_status(md->g, st);
        }
        model_sjac_free(&S);
        mbl_free(e);
        if (rc) {
            mbl_free(jx);
            return rc;
        }
        w->usjx = jx;
    }
    *nodes = md->usjx;
    return 0;
}

/* Keep only the user's expressions that can leave a function's domain (mblx__domain_restricted)
 * for model_check_domain; the others are defined everywhere their derivatives are. */
static int keep_restricted_srcx(mbl_model *md)
{
    if (!md->nsrcx) return 0;
    unsigned char *keep = mbl_alloc_array((size_t)md->nsrcx, 1);
    if (!keep || mblx__domain_restricted(md->g, (size_t)md->nsrcx, md->srcx, keep)) {
        mbl_free(keep);
        return MBL_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < md->nsrcx; i++) {
        if (keep[i]) { /* (the others' records stay in the model's record blocks) */
            md->srcx[k] = md->srcx[i];
            md->srcx_what[k++] = md->srcx_what[i];
        }
    }
    md->nsrcx = k;
    mbl_free(keep);
    return 0;
}

/* The residual and Jacobian tapes, the largest, keep no copy of their expressions: their messages
 * print from the model's graph, which lives as long as they do, under the model's graph lock. */
static mblx_tape *compile_bound(mbl_model *md, size_t n, const mblx_id *out, mbl_status *st)
{
    return mblx_compile_bound(md->g, n, out, model_graph_lock_cb, md, st);
}

/* A tape compiled on a second thread: the graph is read-only while tapes are compiled. */
typedef struct compile_job {
    mbl_model *md;
    size_t n;
    const mblx_id *out;
    mblx_tape *tape;
    mbl_status st;
    void *progress;           /* the loading thread's progress installation and stage */
    const char *stage;
    /* 1: a one-point load's forward residual tape, evaluated at a point or two: compiled as written
     * (mblx__compile_written's bound form: no search for shared pairs and chains; the mechanism
     * bicycle's load 1.08 M instructions less than with mblx_compile_bound's pairs, other last bits:
     * docs/expressions.md, docs/benchmarks.md "Issue 69 item 4, session 51"). Session 50 took it
     * back when the stiff-tire single-track car lost its unstable eigenvalue under the Prescott
     * kernels; dgeev's pairs of a large backward error now take the permutation-only solve's values
     * (src/eig/eig.c, DGEEV_STABLE_NEPS). */
    int once;
} compile_job;

static void *compile_thread(void *arg)
{
    compile_job *j = arg;
    core_progress_adopt(j->progress, j->stage);
    if (j->once) j->tape = mblx__compile_written(j->md->g, j->n, j->out, 1, model_graph_lock_cb, j->md, &j->st);
    else j->tape = compile_bound(j->md, j->n, j->out, &j->st);
    return NULL;
}

int model_compile_draw(mbl_model *md, mbl_status *st)
{
    if (!md->npt) return 0;
    int rc = jacobian_unknowns(md, 3 * md->npt, md->dp, 0, &md->dpjac, st);
    if (rc) return rc;
    size_t nt = (size_t)(3 * md->npt) + (size_t)md->dpjac.nz;
    mblx_id *all = mbl_alloc_array(nt, sizeof *all);
    if (!all) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(all, md->dp, (size_t)(3 * md->npt) * sizeof *all);
    if (md->dpjac.nz) memcpy(all + 3 * md->npt, md->dpjac.node, (size_t)md->dpjac.nz * sizeof *all);
    md->tape_draw = mblx_compile(md->g, nt, all, st);
    mbl_free(all);
    if (!md->tape_draw) return st ? st->code : MBL_ENOMEM;
    return 0;
}

/* The forward path pays while an evaluation of the Jacobian is a few sweeps of the residual tape:
 * at most FWD_MAX_COLORS directions: one sweep up to 32 colors, else three sweeps of MBLX_FWD_CHUNK
 * (tape_forward.c; the four-bar chains need 12, the nonlinear bicycle 24, the spatial four-bar 30). A wider model (the `model: dae` flexible
 * pendulum, whose frame rows span every elastic coordinate: 63 colors at n_p = 5, tens of
 * thousands at n_p = 10^4) costs more per evaluation than its symbolic Jacobian costs to build
 * (63 colors: 0.40 ms a sweep set against 0.04 ms, 3.7 ms to build), so it is linearized as
 * without the option. */
#define FWD_MAX_COLORS 48

/* The forward path takes models whose rows are all in md->F (no numerically evaluated term, no
 * structured rows to merge) and none of whose rows depends on more than FWD_MAX_COLORS unknowns
 * (a coloring needs at least as many colors as the widest row has entries: the coloring declines
 * at the first wider row, jacobian_forward). */
static int forward_eligible(const mbl_model *md)
{
    if (!md->forward_jacobian || md->Fs) return 0;
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md)) return 0;
    return 1;
}

/* The forward coloring of rows (those tape_F compiles, or the user states'; mblx_fwdjac_new) by
 * the unknowns cols[0..ncol) (NULL: every unknown, ncol = nunk: the coloring's column k is the
 * unknown cols[k]); *out NULL when a row depends
 * on more than FWD_MAX_COLORS unknowns or it takes more than FWD_MAX_COLORS colors (the symbolic
 * path then). md->jac's pattern is made from it once the tapes are compiled (forward_pattern). */
static int jacobian_forward(mbl_model *md, size_t nrows, const mblx_id *rows, const int *cols, int ncol,
                            mblx_fwdjac **out, mbl_status *st)
{
    mblx_id *syms = mbl_alloc_array((size_t)ncol + 1, sizeof *syms);
    if (!syms) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < ncol; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[cols ? cols[j] : j]);
    int wide = 0;
    *out = mblx__fwdjac_new_narrow(md->g, nrows, rows, (size_t)ncol, syms, FWD_MAX_COLORS, &wide, st);
    mbl_free(syms);
    if (!*out) return wide ? 0 : st ? st->code : MBL_ENOMEM;
    if (mblx_fwdjac_ncolors(*out) > FWD_MAX_COLORS) { /* the greedy coloring took more than the widest row */
        mblx_fwdjac_free(*out);
        *out = NULL;
    }
    return 0;
}

/* J's pattern (md->jac, or md->usjac) from the forward coloring fj (structural: a superset of
 * jacobian_unknowns' pattern; no nodes: MBLX_NONE, built when first asked by model_dae_nodes, or
 * model_user_state_nodes). md->jac's is made after the tapes
 * are compiled: nothing reads it before (the forward path has no term and no Jacobian tape), and
 * its arrays (6.7 MB at N = 10^4) made before lay at the heap's top, under the compilation's
 * largest arrays, which then extended the heap by as much. */
static int forward_pattern(const mblx_fwdjac *fj, const int *cols, int ncol, mbl_sjac *J, mbl_status *st)
{
    const int *cp, *ri;
    mblx_fwdjac_pattern(fj, &cp, &ri);
    size_t nnz = (size_t)cp[ncol];
    if (model_sjac_reserve(J, nnz)) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* by column, as jacobian_unknowns and mblx_fwdjac_eval's values; written into the reserved
     * arrays (a model_sjac_push per entry cost about 40 instructions: 24 M at N = 10^4) */
    memcpy(J->row + J->nz, ri, nnz * sizeof *ri);
    for (int j = 0; j < ncol; j++)
        for (int p = cp[j]; p < cp[j + 1]; p++) J->col[J->nz + p] = cols ? cols[j] : j;
    _Static_assert(MBLX_NONE == 0xffffffffu, "MBLX_NONE is all bits set");
    memset(J->node + J->nz, 0xff, nnz * sizeof *J->node); /* MBLX_NONE each (3.4 M instructions as a loop) */
    J->nz += (int)nnz;
    return 0;
}

/* each present term's places renumbered through map (its remap entry) */
static void remap_terms(mbl_model *md, const int *map)
{
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->remap && model_terms[t]->present(md)) model_terms[t]->remap(md, map);
}

/* After the merge: the places the terms kept in md->sjac (their entries pushed with the node 0 at
 * formulation) as md->jac indices (merged_at: those the merge gave, or NULL: looked up), and the
 * entries no tape computes (node 0) moved to the end of md->jac in order (md->jac_ntape: the
 * tape's); md->sjac freed. */
static int bind_terms(mbl_model *md, const int *merged_at, mbl_status *st)
{
    md->jac_ntape = md->jac.nz;
    int bound = 0;
    for (int t = 0; t < MODEL_NTERMS; t++) bound |= model_terms[t]->remap && model_terms[t]->present(md);
    if (!bound) return 0;
    int nz = md->jac.nz, rc;
    int *map = mbl_alloc_array((size_t)md->sjac.nz + 1, sizeof *map), *perm = mbl_alloc_array((size_t)nz + 1, sizeof *perm);
    if (!map || !perm) {
        mbl_free(map), mbl_free(perm);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rc = merged_at ? 0 : model_jac_index(md, md->sjac.nz, md->sjac.row, md->sjac.col, map, st);
    if (merged_at) memcpy(map, merged_at, (size_t)md->sjac.nz * sizeof *map);
    /* the entries whose node is 0 (computed by no tape) go last, in order */
    mblx_id zero = mblx_const(md->g, 0.0);
    int k = 0;
    for (int p = 0; p < nz && !rc; p++)
        if (md->jac.node[p] != zero) perm[p] = k++;
    md->jac_ntape = k;
    for (int p = 0; p < nz && !rc; p++)
        if (md->jac.node[p] == zero) perm[p] = k++;
    /* the terms' places through both at once: md->jac's index, then its place after the move */
    for (int s = 0; s < md->sjac.nz && !rc; s++)
        if (map[s] >= 0) map[s] = perm[map[s]];
    if (!rc) {
        int *r2 = mbl_alloc_array((size_t)nz + 1, sizeof *r2), *c2 = mbl_alloc_array((size_t)nz + 1, sizeof *c2);
        mblx_id *n2 = mbl_alloc_array((size_t)nz + 1, sizeof *n2);
        if (!r2 || !c2 || !n2) {
            mbl_free(r2), mbl_free(c2), mbl_free(n2);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        } else {
            for (int p = 0; p < nz; p++) r2[perm[p]] = md->jac.row[p], c2[perm[p]] = md->jac.col[p], n2[perm[p]] = md->jac.node[p];
            mbl_free(md->jac.row), mbl_free(md->jac.col), mbl_free(md->jac.node);
            md->jac.row = r2, md->jac.col = c2, md->jac.node = n2, md->jac.cap = nz + 1;
            remap_terms(md, map);
        }
    }
    mbl_free(map), mbl_free(perm);
    if (!rc) model_sjac_free(&md->sjac); /* merged: no longer needed */
    return rc;
}

static int compile_model(mbl_model *md, mblx_fwdjac **fj, mbl_status *st);

/* The Jacobian J of rows[0 .. nrows): for a load with forward_jacobian (a one-point command's),
 * the forward coloring *fj of the rows by the unknowns they depend on (unknowns_used: the N = 2000
 * mechanism four-bar's user-state rows took 4.3 M instructions colored by all its unknowns, 0.3 M
 * differentiated) and J its structural pattern without nodes, the values forward sweeps of the
 * rows' tape; else (*fj NULL: not asked, or a row too wide) their symbolic Jacobian
 * (jacobian_unknowns), whose entries the rows' tape computes after the rows. */
static int rows_jacobian(mbl_model *md, int nrows, const mblx_id *rows, mbl_sjac *J, mblx_fwdjac **fj, mbl_status *st)
{
    *fj = NULL;
    if (md->forward_jacobian && nrows) {
        int *cols = mbl_alloc_array((size_t)md->nunk + 1, sizeof *cols);
        if (!cols) return mbl_error(st, MBL_ENOMEM, "out of memory");
        int ncol = unknowns_used(md, nrows, rows, cols);
        if (ncol < 0) ncol = md->nunk, mbl_free(cols), cols = NULL; /* (every unknown) */
        int rc = jacobian_forward(md, (size_t)nrows, rows, cols, ncol, fj, st);
        if (!rc && *fj) rc = forward_pattern(*fj, cols, ncol, J, st);
        mbl_free(cols);
        if (rc) mblx_fwdjac_free(*fj), *fj = NULL;
        if (rc || *fj) return rc;
    }
    return jacobian_unknowns(md, nrows, rows, 0, J, st);
}

/* The user states' rows (model_user_state_rows) into *e, and their Jacobian md->usjac
 * (rows_jacobian: the mechanism bicycle's 21 rows and 198 entries differentiated symbolically and
 * compiled cost 6 M instructions; by forward sweeps, *usfj, model_eval_user_states). */
static int user_states_jacobian(mbl_model *md, mblx_id **e, mblx_fwdjac **usfj, mbl_status *st)
{
    int ne = 3 * md->nus + 2 * md->nuvs;
    *usfj = NULL;
    *e = mbl_alloc_array((size_t)(ne ? ne : 1), sizeof **e);
    if (!*e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    model_user_state_rows(md, *e);
    int rc = mblx_graph_status(md->g, st);
    if (!rc) rc = rows_jacobian(md, ne, *e, &md->usjac, usfj, st);
    if (rc) mbl_free(*e), *e = NULL;
    return rc;
}

/* The outputs' Jacobian md->yjac: a term's own (yterm), else rows_jacobian's (the mechanism
 * bicycle's 2 outputs' 12 entries differentiated symbolically cost 0.23 M instructions and most of
 * their tape's 0.11 M; by forward sweeps, *yfj, model_eval_outputs). */
static int outputs_jacobian(mbl_model *md, const model_term_ops *yterm, mblx_fwdjac **yfj, mbl_status *st)
{
    *yfj = NULL;
    return yterm ? yterm->outputs_jac(md, st) : rows_jacobian(md, md->ny, md->y, &md->yjac, yfj, st);
}

/* md->jac0: tape_jac's values once when the tape reads no symbol (model_eval_jac and its kin copy
 * them: the 20-link chain's text rows, 3 instructions for 1,220 outputs, most of them the zeros the
 * tree's term adds to); none when that evaluation fails (each evaluation reports it then), and
 * none in a model with user routines (each evaluation calls them, as without the copy) */
static int jac_constant(mbl_model *md, mbl_status *st)
{
    mbl_free(md->jac0);
    md->jac0 = NULL;
    if (!md->tape_jac || md->jac_ntape <= 0 || md->nroutines || mblx_tape_nsymbols(md->tape_jac)) return 0;
    double *v = mbl_alloc_array((size_t)md->jac_ntape, sizeof *v);
    double *w = mbl_alloc_array(mblx_tape_work_size(md->tape_jac) + 1, sizeof *w);
    mbl_status quiet;
    int rc = !v || !w ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc && !mblx_tape_eval(md->tape_jac, NULL, v, w, &quiet)) md->jac0 = v, v = NULL;
    mbl_free(v), mbl_free(w);
    return rc;
}

int model_compile(mbl_model *md, mbl_status *st)
{
    mblx_fwdjac *fj = NULL;
    int rc = compile_model(md, &fj, st);
    mblx_fwdjac_free(fj); /* NULL once given to tape_F */
    return rc;
}

static mblx_tape *compile_written(const mblx_graph *g, size_t n, const mblx_id *out, mbl_status *st)
{
    return mblx__compile_written(g, n, out, 0, NULL, NULL, st);
}

static int compile_model(mbl_model *md, mblx_fwdjac **fj, mbl_status *st)
{
    int rc = forward_eligible(md) ? jacobian_forward(md, (size_t)md->nF, md->Fc ? md->Fc : md->F, NULL, md->nunk, fj, st) : 0;
    int fwd = *fj != NULL; /* NULL: not eligible, or declined by its colors */
    /* md->F's inlined rows a forward-mode formulation left for later, needed now after all */
    if (!rc && !fwd && model_inlined_rows(md, st)) return st ? st->code : MBL_ENOMEM;
    if (!rc && !fwd) rc = jacobian_unknowns(md, md->nF, md->F, 0, &md->jac, st);
    /* where the merge puts md->sjac's entries (the terms' places: bind_terms; the terms' patterns
     * below only append to md->jac) */
    int *merged_at = NULL, merged_n = md->sjac.nz;
    if (!rc && md->Fs && md->sjac.nz && !(merged_at = mbl_alloc_array((size_t)md->sjac.nz, sizeof *merged_at)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && md->Fs) rc = model_structured_merge(md, md->Fs, &md->sjac, merged_at, st);
    const model_term_ops *yterm = NULL; /* the term that makes the outputs' Jacobian, if any */
    for (int t = 0; t < MODEL_NTERMS && !rc; t++) {
        const model_term_ops *term = model_terms[t];
        if (!term->present(md)) continue;
        if (term->pattern) rc = term->pattern(md, st);
        if (term->outputs_jac) yterm = term;
    }
    /* the numeric entries pushed into md->sjac last (never beside a tree's pattern: relative
     * coordinates refuse flexible bodies, src/mech/beam.c) */
    if (!rc) rc = bind_terms(md, md->sjac.nz == merged_n ? merged_at : NULL, st);
    mbl_free(merged_at);
    mblx_fwdjac *yfj = NULL; /* the outputs' forward coloring (given to tape_y), or NULL: symbolic */
    if (!rc) rc = outputs_jacobian(md, yterm, &yfj, st);
    if (rc) return rc;
    /* user states: rows s (nus), sdot, sddot, then w (nuvs), wdot */
    int ne = 3 * md->nus + 2 * md->nuvs;
    mblx_fwdjac *usfj = NULL; /* their forward coloring (given to tape_us), or NULL: symbolic */
    mblx_id *e = NULL;
    rc = user_states_jacobian(md, &e, &usfj, st);
    /* the user states' tape: the rows, then the symbolic Jacobian's entries (none with usfj) */
    size_t nt = (size_t)ne + (usfj ? 0 : (size_t)md->usjac.nz), ny = (size_t)md->ny + (yfj ? 0 : (size_t)md->yjac.nz);
    mblx_id *all = rc ? NULL : mbl_alloc_array(nt ? nt : 1, sizeof *all);
    mblx_id *yn = rc ? NULL : mbl_alloc_array(ny ? ny : 1, sizeof *yn);
    if (!rc && (!all || !yn)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) {
        mbl_free(e), mbl_free(all), mbl_free(yn), mblx_fwdjac_free(usfj), mblx_fwdjac_free(yfj);
        return rc;
    }
    memcpy(all, e, (size_t)ne * sizeof *all);
    if (!usfj && md->usjac.nz) memcpy(all + ne, md->usjac.node, (size_t)md->usjac.nz * sizeof *all);
    memcpy(yn, md->y, (size_t)md->ny * sizeof *yn);
    if (!yfj && md->yjac.nz) memcpy(yn + md->ny, md->yjac.node, (size_t)md->yjac.nz * sizeof *yn);
    mbl_free(e);

    /* every node exists now: compile the residual tape on a second thread (large models spend
     * a quarter of their loading time compiling; the largest one after the other, see
     * COMPILE_THREAD_MAX_NODES), the others here */
    mblx_id *jc = NULL; /* the Jacobian's entries from md->Fc (formulate_let), if any */
    if (!fwd && jacobian_compiled(md, &jc, st)) {
        mbl_free(all), mbl_free(yn), mblx_fwdjac_free(yfj), mblx_fwdjac_free(usfj);
        return st ? st->code : MBL_ENOMEM;
    }
    /* no node is made while the tapes compile: the hash-consing table (32 MB of the N = 10^4
     * four-bar's) is freed for their scratch, and rebuilt by the first node made later */
    mblx_graph_drop_table(md->g);
    compile_job job = {md, (size_t)md->nF, md->Fc ? md->Fc : md->F, NULL, {0, ""}, core_progress_current(),
                       core_progress_tick_stage(), fwd};
    pthread_t th;
    int threaded = md->nF >= COMPILE_THREAD_MIN && mblx_node_count(md->g) < COMPILE_THREAD_MAX_NODES &&
                   pthread_create(&th, NULL, compile_thread, &job) == 0;
    if (!threaded) compile_thread(&job);
    if (!fwd) md->tape_jac = compile_bound(md, (size_t)md->jac_ntape, jc ? jc : md->jac.node, st);
    mbl_free(jc);
    /* a load for a one-point command (forward_jacobian: the tool's linearize, equilibrium, check,
     * compare and report) evaluates the outputs' and user states' tapes at a point or two: compiled
     * as written (mblx__compile_written: no search for shared pairs and chains; the mechanism
     * bicycle's load 0.50 M instructions less than with the pairs, other last bits), as its
     * forward residual tape is (compile_thread). */
    mblx_tape *(*compile_few_evals)(const mblx_graph *, size_t, const mblx_id *, mbl_status *) =
        md->forward_jacobian ? compile_written : mblx_compile;
    if (md->tape_jac || fwd) md->tape_y = compile_few_evals(md->g, ny, yn, st);
    if (yfj && md->tape_y) mblx_tape_set_fwdjac(md->tape_y, yfj); /* its Jacobian's values: forward sweeps */
    else mblx_fwdjac_free(yfj);
    if (md->tape_y) md->tape_us = compile_few_evals(md->g, nt, all, st);
    if (usfj && md->tape_us) mblx_tape_set_fwdjac(md->tape_us, usfj); /* its values: forward sweeps */
    else mblx_fwdjac_free(usfj);
    if (md->tape_us && keep_restricted_srcx(md)) {
        mbl_error(st, MBL_ENOMEM, "out of memory");
    } else if (md->tape_us) {
        /* evaluated once a point, for its domain errors alone: without the pairs' search
         * (mblx_compile_few; the nonlinear bicycle's 0.42 -> 0.26 M instructions). Taking it for a
         * one-point load's residual tape too (3.38 -> 2.15 M) moved 67 of the 1700 golden outputs
         * beyond numdiff's tolerance (docs/benchmarks.md, branch s22-bike2) */
        md->tape_srcx = mblx_compile_few(md->g, (size_t)md->nsrcx, md->srcx, 0, NULL, NULL, st);
    }
    if (threaded) pthread_join(th, NULL);
    md->tape_F = job.tape;
    mbl_free(all), mbl_free(yn);
    if ((!md->tape_jac && !fwd) || !md->tape_y || !md->tape_us || !md->tape_srcx) return st ? st->code : MBL_ENOMEM;
    if (!md->tape_F) {
        if (st) *st = job.st;
        return job.st.code ? job.st.code : MBL_ENOMEM;
    }
    if (jac_constant(md, st)) return st ? st->code : MBL_ENOMEM;
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->outputs_bind && model_terms[t]->present(md) && model_terms[t]->outputs_bind(md, st))
            return st ? st->code : MBL_ENOMEM;
    mblx_tape_free(md->tape_trim), md->tape_trim = NULL;
    if (model_compile_trim(md, st)) return st ? st->code : MBL_ENOMEM;
    mblx_tape_free(md->tape_sing), md->tape_sing = NULL;
    if (md->nsing && !(md->tape_sing = mblx_compile_few(md->g, (size_t)md->nsing, md->sing, 0, NULL, NULL, st)))
        return st ? st->code : MBL_ENOMEM;
    md->work_size = mblx_tape_work_size(md->tape_F);
    const int *fcp = NULL; /* the coloring's column pointers (owned by tape_F once given) */
    if (fwd) { /* model_eval_jac's values: forward sweeps of tape_F */
        const int *fri;
        mblx_fwdjac_pattern(*fj, &fcp, &fri);
        if (forward_pattern(*fj, NULL, md->nunk, &md->jac, st)) return st ? st->code : MBL_ENOMEM;
        md->work_size = mblx_fwdjac_work_size(*fj, md->tape_F);
        mblx_tape_set_fwdjac(md->tape_F, *fj);
        *fj = NULL;
    }
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md) && model_terms[t]->work(md) > md->work_size) md->work_size = model_terms[t]->work(md);
    if (model_user_states_work(md) > md->work_size) md->work_size = model_user_states_work(md);
    if (mblx_tape_work_size(md->tape_jac) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_jac);
    if (model_outputs_work(md) > md->work_size) md->work_size = model_outputs_work(md);
    if (mblx_tape_work_size(md->tape_srcx) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_srcx);
    if (mblx_tape_work_size(md->tape_sing) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_sing);
    /* cyclic coordinates: no residual depends on them */
    int jq = model_blk0(md, MBL_BLK_Q);
    if (fcp && fcp[md->nunk] == md->jac.nz) { /* md->jac the coloring's pattern alone: by its columns */
        for (int i = 0; i < md->n; i++) md->cyclic[i] = fcp[jq + i + 1] == fcp[jq + i];
    } else {
        for (int i = 0; i < md->n; i++) md->cyclic[i] = 1;
        for (int p = 0; p < md->jac.nz; p++) {
            unsigned k = (unsigned)(md->jac.col[p] - jq); /* (one test for jq <= col < jq + n) */
            if (k < (unsigned)md->n) md->cyclic[k] = 0;
        }
    }
    md->cyclic_known = 1;
    return 0;
}
