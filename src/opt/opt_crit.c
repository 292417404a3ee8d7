/* A critical speed as a goal (docs/optimize.md, "Critical speeds"): the value Omega_c of a speed
 * parameter where a mode's damped frequency meets an order line, g(Omega, p) = |Im lambda| -
 * order Omega = 0, found for each design by mbl_boundary (the refinement with the exact
 * sensitivities, started from the previous design's Omega_c), and its derivative by the implicit
 * function theorem, dOmega_c/dp = -(dg/dp) / (dg/dOmega), both from the exact sensitivities at
 * (Omega_c, p) with respect to the design's parameters and the speed. */
#include <math.h>
#include <string.h>

#include "opt/opt_internal.h"

int opt_critical(opt_ctx *c, const mbl_opt_goal *g, double *near, double *val, double *grad, mbl_status *st)
{
    mbl_model_info info;
    mbl_model_get_info(c->model, &info);
    int sp = -1, rc = 0;
    for (int i = 0; g->speed && i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(c->model, i), g->speed)) sp = i;
    for (int j = 0; j < c->np; j++)
        if (c->idx[j] == sp)
            return mbl_error(st, MBL_EARG, "the critical speed's parameter '%s' cannot be varied too", g->speed);
    if (sp < 0) return mbl_error(st, MBL_EARG, "the critical speed: the model has no parameter '%s'", g->speed ? g->speed : "");
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    bo.order = g->order;
    bo.mode.index = g->mode;
    bo.opoint = c->o->opoint;
    mbl_boundary_result res;
    if ((rc = mbl_boundary(c->model, c->sets, c->nsets, g->speed, *near, &bo, &res, st))) {
        mbl_error_prefix(st, "the critical speed of mode %d (order %g)", g->mode, g->order);
        return rc;
    }
    /* the sensitivities there with respect to the design and the speed */
    mbl_setting *sets = mbl_alloc_array((size_t)c->nsets + 1, sizeof *sets);
    int *wrt = mbl_alloc_array((size_t)c->np + 1, sizeof *wrt);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_dae_deriv *dd = NULL;
    mbl_sensitivity *S = NULL;
    if (!sets || !wrt) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(sets, c->sets, (size_t)c->nsets * sizeof *sets);
    sets[c->nsets] = (mbl_setting){g->speed, res.value};
    memcpy(wrt, c->idx, (size_t)c->np * sizeof *wrt);
    wrt[c->np] = sp;
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    so.shapes = 0;
    if ((rc = mbl_model_copy(c->model, sets, c->nsets + 1, &md, st)) || (rc = mbl_operating_point(md, &c->o->opoint, &pt, st)) ||
        (rc = mbl_dae_deriv_new(md, &dd, st)) || (rc = mbl_sensitivity_compute(dd, pt, wrt, c->np + 1, &so, &S, st)))
        goto done;
    int best = -1;
    for (int k = 0; k < S->nmode; k++) /* the mode at the crossing: nearest the boundary's eigenvalue */
        if (best < 0 || hypot(S->modes[k].re - res.re, S->modes[k].im - res.im) <
                            hypot(S->modes[best].re - res.re, S->modes[best].im - res.im))
            best = k;
    const mbl_sens_mode *m = &S->modes[best];
    double sg = m->im < 0 ? -1 : 1, dgdw = sg * m->dim[c->np] - g->order;
    if (!m->defined || !(fabs(dgdw) > 0) || !isfinite(dgdw)) {
        rc = mbl_error(st, MBL_EMODEL,
                       "the critical speed %s = %.10g of mode %d touches the order line without crossing it (or meets "
                       "another mode there): no derivative",
                       g->speed, res.value, g->mode);
        goto done;
    }
    *val = res.value;
    *near = res.value;
    for (int j = 0; j < c->np; j++) grad[j] = -sg * m->dim[j] / dgdw;
done:
    mbl_sensitivity_free(S);
    mbl_dae_deriv_free(dd);
    mbl_point_free(pt);
    mbl_model_free(md);
    mbl_free(sets);
    mbl_free(wrt);
    return rc;
}
