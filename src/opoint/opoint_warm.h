/* Internal: warm-started equilibria along a sequence of nearby parameter values (a sweep's block of
 * points, src/study/sweep_point.c). After a point is solved (by mbl_operating_point or here), the
 * exact tangent dy/dp of y = [q; lambda; mu] along the swept parameter p comes from the Jacobians
 * at the point, J dy/dp = -dR/dp (J: the equilibrium's square Jacobian in [q; lambda; mu], dR/dp:
 * mbl_dae_deriv_eval_param's total parameter derivative). The next point starts from y + dy/dp dp and
 * takes at most OPOINT_WARM_MAX_STEPS full Newton steps; it is accepted by the cold solver's test
 * (opoint_newton: scaled residual at most mbl_opoint_options.tol, and the max-norm residual at most
 * abs_tol, or a last step at the rounding level, or a superlinear last step). Otherwise the caller
 * solves the point cold (mbl_operating_point from the same guess).
 *
 * Applies to equilibria without ode states or implicit variables whose Jacobian is square and of
 * full rank (KLU's pivot ratio test of opoint_newton_step); opoint_warm_tangent says when not.
 * Deterministic per block: opoint_warm_reset forgets the factorization (its pivot order), so every
 * block of a sweep gives the same bits whichever thread computes it. */
#ifndef MBLIN_OPOINT_WARM_H
#define MBLIN_OPOINT_WARM_H

#include "mblin/dae.h"
#include "mblin/model.h"

/* Largest number of Newton steps from the predicted point before the warm start is rejected. */
#define OPOINT_WARM_MAX_STEPS 2

typedef struct opoint_warm opoint_warm;

/* The corrector's work since it was made: evaluations of the residual F, of its Jacobian, of the
 * scaled residual, Newton solves (a numeric factorization each: the steps and the tangents), and
 * of dR/dp (mbl_dae_deriv_eval_param). */
typedef struct opoint_warm_counts {
    long long F, jac, scaled, factor, dfdp;
} opoint_warm_counts;

/* A corrector for the model's equilibria (opt: the sweep's point options, copied; dd: the model's
 * parameter derivatives (mbl_dae_deriv_new_param is enough), borrowed; param: the swept parameter's index). */
int opoint_warm_new(const mbl_model *md, const mbl_opoint_options *opt, const mbl_dae_deriv *dd, int param,
                    opoint_warm **out, mbl_status *st);
void opoint_warm_free(opoint_warm *w);
void opoint_warm_get_counts(const opoint_warm *w, opoint_warm_counts *c);
/* Forget the factorization (the start of a block). */
void opoint_warm_reset(opoint_warm *w);
/* The tangent dy (n + m + k) at the solved point pt of the model at its current parameter values.
 * MBL_EARG when the warm start does not apply to the point (not an equilibrium, ode states, a
 * rank-deficient Jacobian); other codes on failure. */
int opoint_warm_tangent(opoint_warm *w, const mbl_point *pt, double *dy, mbl_status *st);
/* The equilibrium from the predicted y (n + m + k) at the model's current parameter values: 0 and
 * *out (the caller frees it) when accepted after *steps Newton steps; MBL_ENOCONV when rejected
 * (*out NULL), other codes on failure. tmpl: the previous point of the block (its other fields). */
int opoint_warm_point(opoint_warm *w, const mbl_point *tmpl, const double *y, mbl_point **out, int *steps,
                      mbl_status *st);

#endif
