/* The method table, the dispatcher mbl_linearize(), and the methods composed of others' parts
 * (descriptor with its state-space form alongside). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "expr/user_step.h"
#include "lin/methods_internal.h"
#include "model/ffr.h"

/* Large models (and nev asked for): the pencil assembled sparse from the Jacobian triplets, ARPACK
 * shift-invert for the nev eigenvalues nearest the shift (src/lin/sparse_pencil.c). A, B, C, D and
 * M, C, K alongside from `augmented` when its dense path fits the memory budget and the partial
 * spectrum was not asked for; else they are not formed. E and Ad are never stored dense
 * (lin->descriptor->E, Ad stay NULL). Regular configurations only (lin_descriptor_path). */
static int descriptor_sparse(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                             mbl_status *st)
{
    mbl_linear *lin = NULL;
    int rc;
    *out = NULL;
    char why[256] = "";
    double need = lin_dense_bytes(md, pt, "augmented"), budget = lin_mem_budget(opt);
    if (opt->partial != MBL_PARTIAL_ALWAYS && need <= budget) {
        rc = lin_augmented(md, pt, opt, &lin, st);
        if (rc) return rc;
    } else if (opt->partial != MBL_PARTIAL_ALWAYS) {
        snprintf(why, sizeof why,
                 "the state-space form (dense) needs about %.3g GiB, over the memory budget of %.3g GiB: not formed",
                 need / 1073741824.0, budget / 1073741824.0);
    }
    rc = lin_sparse_spectrum(md, pt, opt, "descriptor", why, &lin, st);
    if (rc) {
        mbl_linear_free(lin);
        return rc;
    }
    *out = lin;
    return 0;
}

/* `descriptor`: the pencil of src/lin/descriptor.c with the state-space form A, B, C, D and M, C, K
 * alongside, from another method: on the dense path the tangent coordinates of `nullspace` at the
 * same point, or the states of `augmented` with non-holonomic constraints or Eq. 10 features (the
 * tangent coordinates are position-level only); the pencil is attached to that linear model. */
static int descriptor_with_state_space(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt,
                                       mbl_linear **out, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    *out = NULL;
    int path = lin_descriptor_path(md, pt, opt, st);
    if (path < 0) return path;
    if (path == LIN_DESC_SPARSE) return descriptor_sparse(md, pt, opt, out, st);
    mbl_linear *lin = NULL;
    int rc = mv->k > 0 || mv->ext ? lin_augmented(md, pt, opt, &lin, st) : lin_nullspace(md, pt, opt, &lin, st);
    if (rc) return rc;
    snprintf(lin->method, sizeof lin->method, "descriptor");
    rc = lin_descriptor(md, pt, opt, lin, st);
    if (rc) {
        mbl_linear_free(lin);
        return rc;
    }
    *out = lin;
    return 0;
}

/* The states' test of every method that takes the user's states (lin_check_states; augmented runs it
 * itself, with its own evaluation at the point, and so do sweeps): on a refusal *out is freed. */
static int check_states(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                        mbl_status *st)
{
    if (!*out || !(*out)->M || !(*out)->v_W) return 0;
    mbl_eval ev;
    int rc = lin_eval_init(md, &ev, st);
    if (!rc) {
        rc = lin_eval_at(md, pt, &ev, st);
        if (!rc) rc = lin_check_states(md, ev.jac, *out, opt, st);
        lin_eval_free(&ev);
    }
    if (rc) {
        mbl_linear_free(*out);
        *out = NULL;
    }
    return rc;
}

typedef int (*lin_fn)(const mbl_model *, const mbl_point *, const mbl_lin_options *, mbl_linear **, mbl_status *);

static const struct {
    const char *name;
    lin_fn fn;
} methods[] = {
    {"augmented", lin_augmented},   {"partition", lin_partition},   {"nullspace", lin_nullspace},
    {"projection", lin_projection}, {"descriptor", descriptor_with_state_space}, {"penalty", lin_penalty},
    {"fd", lin_fd},
};

#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

int mbl_lin_method_count(void)
{
    return NMETHODS;
}

const char *mbl_lin_method_name(int i)
{
    return i >= 0 && i < NMETHODS ? methods[i].name : NULL;
}

static int dispatch(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int i, mbl_linear **out,
                    mbl_status *st);

/* A partial spectrum that the sparse pencil cannot give in full: the whole spectrum, densely,
 * with why appended to the notes. */
static int dispatch_dense(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int i,
                          const char *why, mbl_linear **out, mbl_status *st)
{
    mbl_lin_options full = *opt;
    full.partial = MBL_PARTIAL_NEVER;
    int rc = dispatch(md, pt, &full, i, out, st);
    if (!rc && *out) {
        size_t len = strlen((*out)->notes);
        snprintf((*out)->notes + len, sizeof (*out)->notes - len, "%s%s", len ? "; " : "", why);
    }
    return rc;
}

/* A method other than augmented (which names it itself) refused a singular matrix (M-hat, the
 * penalty's M + alpha Phi_q^T Phi_q, ...): when a coordinate without mass that no constraint
 * holds is the cause, the message says so after its own words. Nothing changes when the
 * Jacobian cannot be evaluated or every coordinate has mass or a constraint. */
static void name_massless(const mbl_model *md, const mbl_point *pt, mbl_status *st)
{
    mbl_eval ev;
    mbl_status est;
    mbl_status_clear(&est);
    if (lin_eval_init_lean(md, &ev, &est)) return;
    int c = lin_eval_at(md, pt, &ev, &est) ? -1 : lin_massless_coordinate(md, ev.jac);
    lin_eval_free(&ev);
    if (c < 0 || !st) return;
    const char *q = mbl_model_coord_name(md, c);
    char msg[sizeof st->msg], note[200];
    snprintf(msg, sizeof msg, "%s", st->msg);
    mbl_error(st, MBL_ESINGULAR, "%s: coordinate '%s' has no mass here (M(%s, %s) = 0) and no constraint holds it, a "
              "degree of freedom without inertia%s", msg, q, q, q, lin_mass_set_note(md, c, note, sizeof note));
}

/* The memory decision (docs/linearization.md, "Large models: partial spectra"): augmented switches
 * to the partial spectrum of the sparse pencil when the peak of its dense path would exceed the
 * budget (or when asked); descriptor chooses its own path (QZ up to dense_max, else the sparse
 * pencil); any other request that would not fit is refused up front with the memory it needs. */
static int dispatch(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int i, mbl_linear **out,
                    mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    const char *name = methods[i].name;
    int aug = !strcmp(name, "augmented"), desc = !strcmp(name, "descriptor");
    const char *ext = model_ext_features(md); /* source 000 Eq. 10: the partial spectrum does not take it */
    double budget = lin_mem_budget(opt), need = lin_dense_bytes(md, pt, name);
    /* nev asking for more eigenvalues than ARPACK can give on the sparse pencil (at most its order
     * - 2) while the model has more physical ones (2 (n - m)): the whole spectrum, densely, said in
     * the notes, rather than fewer than asked for (a small model; issue 30, item 10) */
    int nphys = 2 * (mv->n - mv->m), nd = 2 * mv->n + mv->m;
    int want = opt->nev < nphys ? opt->nev : nphys;
    if ((aug || desc) && opt->partial == MBL_PARTIAL_ALWAYS && opt->nev > 0 && nd - 2 < want && need <= budget) {
        char why[256];
        snprintf(why, sizeof why, "nev %d: the sparse pencil of order %d gives at most %d eigenvalues (ARPACK), "
                 "the model has %d: the whole spectrum computed densely", opt->nev, nd, nd - 2, nphys);
        return dispatch_dense(md, pt, opt, i, why, out, st);
    }
    if (desc && (opt->partial == MBL_PARTIAL_ALWAYS || 2 * mv->n + mv->m + mv->k > opt->dense_max))
        return methods[i].fn(md, pt, opt, out, st); /* the sparse pencil, which checks its own need */
    if (aug && ext && (opt->partial == MBL_PARTIAL_ALWAYS || need > budget))
        return mbl_error(st, MBL_EARG, "augmented: the partial spectrum (sparse pencil) does not take %s (yet)", ext);
    if (aug && (opt->partial == MBL_PARTIAL_ALWAYS || (opt->partial == MBL_PARTIAL_AUTO && need > budget))) {
        char why[256] = "";
        if (opt->partial != MBL_PARTIAL_ALWAYS)
            snprintf(why, sizeof why,
                     "the whole spectrum (dense) needs about %.3g GiB, over the memory budget of %.3g GiB: partial "
                     "spectrum",
                     need / 1073741824.0, budget / 1073741824.0);
        int rc = lin_sparse_spectrum(md, pt, opt, name, why, out, st);
        if (rc && why[0] && rc != MBL_ENOMEM) mbl_error_prefix(st, "%s; the partial spectrum failed", why);
        return rc;
    }
    if (!strcmp(name, "penalty")) { /* the sparse penalty pencil (src/lin/penalty_sparse.c) */
        int path = lin_penalty_path(md, pt, opt, st);
        if (path < 0) return path;
        if (path == 1) {
            char why[256] = "";
            if (opt->partial != MBL_PARTIAL_ALWAYS)
                snprintf(why, sizeof why, "the penalty pencil's order 2n = %d is above dense_max = %d: partial spectrum",
                         2 * mv->n, opt->dense_max);
            int rc = lin_penalty_sparse(md, pt, opt, why, out, st);
            if (rc != MBL_ENOCONV || need > budget) return rc;
            /* fewer physical eigenvalues than wanted among those ARPACK gave (the spurious ones nearer
             * the shift): the whole spectrum, densely, said in the notes, when it fits */
            char msg[256];
            snprintf(msg, sizeof msg, "the sparse penalty pencil failed (%.180s): the whole spectrum computed densely",
                     st ? st->msg : "");
            mbl_status_clear(st);
            return dispatch_dense(md, pt, opt, i, msg, out, st);
        }
        if (path == 2) {
            char why[256];
            snprintf(why, sizeof why, "nev %d: the sparse penalty pencil of order %d gives at most %d eigenvalues "
                     "(ARPACK), the model has %d: the whole spectrum computed densely", opt->nev, 2 * mv->n,
                     2 * mv->n - 2, nphys);
            return dispatch_dense(md, pt, opt, i, why, out, st);
        }
    }
    if (opt->partial == MBL_PARTIAL_ALWAYS)
        return mbl_error(st, MBL_EARG, "%s has no partial-spectrum path (nev): use augmented, descriptor or penalty",
                         name);
    if (need > budget) {
        char what[96];
        snprintf(what, sizeof what, "%s: the dense computation (n = %d, m = %d)", name, mv->n, mv->m);
        return lin_refuse_memory(what, need, budget,
                                 aug ? "raise the budget or allow the partial spectrum"
                                         : "use augmented (the default), which switches to a partial spectrum",
                                     st);
    }
    int rc = methods[i].fn(md, pt, opt, out, st);
    if (rc == MBL_ESINGULAR && !aug) name_massless(md, pt, st);
    if (!rc && !aug && strcmp(name, "penalty")) rc = check_states(md, pt, opt, out, st);
    return rc;
}

/* At a point with motion the spectrum depends on the states (docs/linearization.md): when the
 * selection completed the user's states with coordinates of its own choice, those may move along
 * the motion (a spinning top's Euler parameter), and the eigenvalues in them are not the ones in
 * which the motion is steady. Say so beside the selection. */
static void caution_moving_added(const mbl_point *pt, mbl_linear *lin)
{
    if (!lin || lin->nsel_added <= 0) return;
    int moving = 0;
    for (int i = 0; i < pt->n && !moving; i++) moving = pt->v[i] != 0.0;
    if (!moving) return;
    size_t len = strlen(lin->selection);
    snprintf(lin->selection + len, sizeof lin->selection - len,
             "%scaution: at a point with motion the eigenvalues depend on the states, and the added coordinates may "
             "move along it: give states in which the motion is steady",
             len ? "; " : "");
}

/* A position state that is an Euler parameter of a turning frame (a rigid spatial body's or a
 * flexible body's, with der(e) != 0) moves along a steady spin, at half the angular velocity: the
 * eigenvalues in such states are those of the frozen point, not of the motion (a free spin shows at
 * near +-i w/2 instead of at 0, and the modes it couples to move). Say so, with the way out. Returns 1 when
 * it did. */
static int caution_turning_frames(const mbl_model *md, const mbl_point *pt, mbl_linear *lin)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    /* penalty keeps every coordinate (its notes speak of the motion): a spin's four Euler parameters
     * together can turn steadily there */
    if (!lin || !lin->state_names || mv->nflex + mv->nrframe == 0 || !strcmp(lin->method, "penalty")) return 0;
    const char *hit = NULL;
    for (int b = 0; b < mv->nflex + mv->nrframe && !hit; b++) {
        const int *qe = b < mv->nflex ? mv->flex[b].q + 3 : mv->rframe + 7 * (b - mv->nflex) + 3;
        if (b < mv->nflex && mv->flex[b].dim != 3) continue;
        int turning = 0;
        for (int k = 0; k < 4; k++) turning |= pt->v[qe[k]] != 0.0;
        for (int k = 0; k < 4 && turning && !hit; k++)
            for (int i = 0; i < lin->z0 && !hit; i++)
                if (lin->state_names[i] && !strcmp(lin->state_names[i], mv->qname[qe[k]])) hit = mv->qname[qe[k]];
    }
    if (!hit) return 0;
    size_t len = strlen(lin->selection);
    snprintf(lin->selection + len, sizeof lin->selection - len,
             "%scaution: the state '%s' is an Euler parameter of a turning frame, which moves along the motion at half "
             "its angular velocity: the eigenvalues in these states are those of the frozen point (a free spin shows "
             "near +-i w/2 instead of at 0); give the spin angle as a state (linearize.states) and, where the axis can "
             "tilt, the tilt in the body's own axes (DX(up, o, m), DY(up, o, m): ground markers o and up on the axis, "
             "m the body's marker)",
             len ? "; " : "", hit);
    return 1;
}

/* A point where a constraint's Jacobian row vanishes (mbl_point.singular_row): every method would
 * linearize a constraint that is not there to first order, with a multiplier that grows without
 * bound as the point is approached (the zero-length pendulum's 2.8e12): refused, the row named. */
static int refuse_vanished_row(const mbl_model *md, const mbl_point *pt, mbl_status *st)
{
    const char *name = mbl_model_constraint_name(md, pt->singular_row - 1);
    return mbl_error(st, MBL_ESINGULAR,
                     "%s: singular configuration: the Jacobian row of %s vanishes at the operating point (the "
                     "constraint holds there only to second order, so neither its multiplier nor its linearization is "
                     "defined); write the constraint in a form whose gradient does not vanish there, or linearize at "
                     "another point",
                     model_file(md), name ? name : "a constraint");
}

/* A model whose user routines have no partials of their own is differentiated there by central
 * differences (docs/user-routines.md, "Exactness"): the linear model is not exact. Its error
 * estimate: the method again with the differences' steps doubled (the truncation error O(h^2)
 * four times larger, the rounding error O(eps/h) half), the largest distance between the two
 * spectra, times ROUTINE_ERR_FACTOR (the distance is 3 times the truncation error of the finer
 * steps, but rounding errors of the two may partly cancel in it: the Python aero example's
 * distance was 1.3 times its deviation, 8.5e-12 against 6.6e-12); lin->err_est takes the larger of
 * it and the method's own, lin->notes says so, and a method's own spectrum carries it in its
 * errors. */
#define ROUTINE_ERR_FACTOR 4.0
static int routines_error(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int i, mbl_linear *lin,
                          mbl_status *st)
{
    if (!model_routines_inexact(md) || lin->nx < 1) return 0;
    mbl_linear *lin2 = NULL;
    /* (the point's kept Jacobian values are the first steps' differences: not handed on) */
    mbl_point pt2 = *pt;
    pt2.jac_memo = NULL;
    mblx__user_step_scale(2.0);
    int rc = dispatch(md, &pt2, opt, i, &lin2, st);
    mblx__user_step_scale(1.0);
    if (rc) return rc;
    double *w = mbl_alloc_array(4 * (size_t)lin->nx, sizeof *w);
    double err = w && lin2->nx == lin->nx ? ROUTINE_ERR_FACTOR * lin_spec_dist(lin->nx, lin->A, lin2->A, w, st) : INFINITY;
    mbl_free(w);
    mbl_linear_free(lin2);
    lin->err_est = fmax(lin->err_est, err);
    mbl_lin_spectrum *sp = lin->spectrum;
    for (int j = 0; sp && sp->err && j < sp->neig; j++) sp->err[j] = isnan(sp->err[j]) ? err : fmax(sp->err[j], err);
    size_t len = strlen(lin->notes);
    snprintf(lin->notes + len, sizeof lin->notes - len,
             "%snot exact: user routines without partials are differentiated by central differences (eigenvalues within "
             "about %.2g)",
             len ? "; " : "", err);
    return 0;
}

int mbl_linearize(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_linearize: out is NULL");
    *out = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_linearize: model or point is NULL");
    mbl_lin_options def;
    if (!opt) {
        mbl_lin_options_default(&def);
        opt = &def;
    }
    int rc = lin_options_check(opt, st);
    if (rc) return rc;
    mbl_lin_options o;
    lin_options_complete(opt, &o);
    opt = &o;
    const char *method = opt->method ? opt->method : "augmented";
    for (int i = 0; i < NMETHODS; i++)
        if (!strcmp(method, methods[i].name)) {
            if (pt->singular_row > 0) return refuse_vanished_row(md, pt, st);
            if (core_progress(st, "linearize", 0, 0)) return MBL_ECANCELLED;
            rc = dispatch(md, pt, opt, i, out, st);
            if (!rc) rc = routines_error(md, pt, opt, i, *out, st);
            if (rc && *out) mbl_linear_free(*out), *out = NULL;
            if (rc && core_progress_stopped()) rc = mbl_error(st, MBL_ECANCELLED, "cancelled during the linearization");
            else if (rc) mbl_error_prefix(st, "%s", model_file(md));
            else if (!caution_turning_frames(md, pt, *out)) caution_moving_added(pt, *out);
            return rc;
        }
    return mbl_error(st, MBL_EARG,
                     "unknown linearization method '%s' (available: augmented, partition, nullspace, projection, "
                     "descriptor, penalty, fd)",
                     method);
}
