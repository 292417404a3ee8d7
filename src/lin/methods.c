/* The method table, the option defaults and the dispatcher mbl_linearize(). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "lin/methods_internal.h"

typedef int (*lin_fn)(const mbl_model *, const mbl_point *, const mbl_lin_options *, mbl_linear **, mbl_status *);

static const struct {
    const char *name;
    lin_fn fn;
} methods[] = {
    {"augmented", mbl_lin_augmented},   {"partition", mbl_lin_partition},   {"nullspace", mbl_lin_nullspace},
    {"projection", mbl_lin_projection}, {"descriptor", mbl_lin_descriptor}, {"penalty", mbl_lin_penalty},
    {"fd", mbl_lin_fd},
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

void mbl_lin_options_default(mbl_lin_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->method = "augmented";
    opt->state_weight = 1e-3;
    opt->pivot_tol = 1e-9;
    opt->rcond_min = 1e-13;
    opt->rank_tol = 1e-9;
    opt->dense_max = 1000;
    opt->dense_n_max = 4000;
    opt->nev = 20;
    opt->shift = -1e-3;
    opt->constraint_scale = 0.0;
    opt->pen_alpha = 1e6;
    opt->pen_xi = 1.0;
    opt->pen_omega = 10.0;
    opt->pen_ratio = 10.0;
    opt->fd_step = cbrt(DBL_EPSILON);
    opt->fd_tol = 1e-3;
}

/* The memory decision (docs/linearization.md, "Large models: partial spectra"): augmented switches
 * to the partial spectrum of the sparse pencil when the peak of its dense path would exceed the
 * budget (or when asked); descriptor chooses its own path (QZ up to dense_max, else the sparse
 * pencil); any other request that would not fit is refused up front with the memory it needs. */
static int dispatch(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int i, mbl_linear **out,
                    mbl_status *st)
{
    const char *name = methods[i].name;
    int aug = !strcmp(name, "augmented"), desc = !strcmp(name, "descriptor");
    const char *ext = model_ext_features(md); /* source 000 Eq. 10: the partial spectrum does not take it */
    double budget = mbl_lin_mem_budget(opt), need = mbl_lin_dense_bytes(md, pt, name);
    if (desc && (opt->partial == MBL_PARTIAL_ALWAYS || 2 * md->n + md->m + md->k > opt->dense_max))
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
        int rc = mbl_lin_sparse_spectrum(md, pt, opt, name, why, out, st);
        if (rc && why[0] && rc != MBL_ENOMEM) mbl_error_prefix(st, "%s; the partial spectrum failed", why);
        return rc;
    }
    if (opt->partial == MBL_PARTIAL_ALWAYS)
        return mbl_error(st, MBL_EARG, "%s has no partial-spectrum path (nev): use augmented or descriptor", name);
    if (need > budget) {
        char what[96];
        snprintf(what, sizeof what, "%s: the dense computation (n = %d, m = %d)", name, md->n, md->m);
        return mbl_lin_refuse_memory(what, need, budget,
                                     aug ? "raise the budget or allow the partial spectrum"
                                         : "use augmented (the default), which switches to a partial spectrum",
                                     st);
    }
    return methods[i].fn(md, pt, opt, out, st);
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
    /* options of the other methods left at 0 (a zero-initialized struct) take their defaults */
    mbl_lin_options o = *opt, d;
    mbl_lin_options_default(&d);
    if (!(o.rank_tol > 0)) o.rank_tol = d.rank_tol;
    if (o.dense_max <= 0) o.dense_max = d.dense_max;
    if (o.dense_n_max <= 0) o.dense_n_max = d.dense_n_max;
    if (o.nev <= 0) o.nev = d.nev;
    if (o.shift == 0.0) o.shift = d.shift;
    if (o.pen_alpha == 0.0) o.pen_alpha = d.pen_alpha;
    if (o.pen_omega == 0.0) o.pen_omega = d.pen_omega;
    if (o.pen_ratio == 0.0) o.pen_ratio = d.pen_ratio;
    if (o.fd_step == 0.0) o.fd_step = d.fd_step;
    if (o.fd_tol == 0.0) o.fd_tol = d.fd_tol;
    if (!(o.mem_budget > 0)) o.mem_budget = MBL_MEM_BUDGET_DEFAULT;
    opt = &o;
    const char *method = opt->method ? opt->method : "augmented";
    for (int i = 0; i < NMETHODS; i++)
        if (!strcmp(method, methods[i].name)) {
            int rc = dispatch(md, pt, opt, i, out, st);
            if (rc) mbl_error_prefix(st, "%s", md->file);
            else caution_moving_added(pt, *out);
            return rc;
        }
    return mbl_error(st, MBL_EARG,
                     "unknown linearization method '%s' (available: augmented, partition, nullspace, projection, "
                     "descriptor, penalty, fd)",
                     method);
}
