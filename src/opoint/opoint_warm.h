/* Internal: warm-started equilibria along a sequence of nearby parameter values (a sweep's block of
 * points, src/study/sweep_point.c). After a point is solved (by mbl_operating_point or here), the
 * exact tangent dy/dp of y = [q; lambda; mu] along the swept parameter p comes from the Jacobians
 * at the point, J dy/dp = -dR/dp (J: the equilibrium's square Jacobian in [q; lambda; mu], dR/dp:
 * mbl_dae_deriv_eval_param's total parameter derivative). The next point starts from y + dy/dp dp (or
 * the quadratic through the point before) and takes a chord step with the tangent's factorization
 * (opoint_warm_point), then at most OPOINT_WARM_MAX_STEPS full Newton steps; it is accepted by the cold solver's test
 * (opoint_newton: scaled residual at most mbl_opoint_options.tol, and the max-norm residual at most
 * abs_tol, or a last step at the rounding level, or a superlinear last step). Otherwise the caller
 * solves the point cold (mbl_operating_point from the same guess).
 *
 * Within a block a sweep asks a tangent only of its first points: from the fourth on it predicts by
 * the cubic through the last four points instead (error O(h^4)) and takes the chord step with the
 * factorization held (opoint_warm_skip_tangent), renewed every OPOINT_WARM_SKIP_AGE points, or up to
 * OPOINT_WARM_SKIP_AGE_MAX while its chord steps leave little (opoint_warm_refresh: J factored at the
 * point, no tangent). A block's first point may take the tangent a sweep's chain of block starts made
 * there (opoint_warm_adopt_tangent).
 *
 * Applies to equilibria without ode states or implicit variables whose Jacobian is square and of
 * full rank (KLU's pivot ratio test of opoint_newton_step); opoint_warm_tangent says when not.
 * Deterministic per block: opoint_warm_reset forgets the factorization (its pivot order), so every
 * block of a sweep gives the same bits whichever thread computes it. */
#ifndef MBLIN_OPOINT_WARM_H
#define MBLIN_OPOINT_WARM_H

#include "mblin/dae.h"
#include "mblin/model.h"

/* Largest number of full Newton steps from the predicted point before the warm start is rejected
 * (a chord step that is kept comes on top of them; one that is not kept is forgotten). */
#define OPOINT_WARM_MAX_STEPS 2

/* The chord step (the first step from the prediction, solved with the factorization of the
 * previous point's tangent) is kept when it reduces the scaled residual at least by this factor;
 * otherwise full Newton starts again from the prediction. */
#define OPOINT_WARM_CHORD_CONTRACT 1e-2

/* The tangent's solve (opoint_warm_tangent) without a factorization: J dy = -dR/dp at the point
 * (J and dR/dp exact) by one step of iterative refinement, dy = d0 + J0^-1 (-dR/dp - J d0), from
 * d0 on the line through the block's last two tangents, with the factorization held (J0: J at
 * the last point where one was made, at most OPOINT_WARM_HELD_AGE such tangents ago); kept when
 * the correction is at most OPOINT_WARM_HELD_STEP of dy (opoint_held_refine), else J is factored
 * at the point (the exact solve) and held from then on. */
#define OPOINT_WARM_HELD_AGE 8
#define OPOINT_WARM_HELD_STEP 1e-3
/* ... and not after a chord step (opoint_warm_point) that reduced the scaled residual by less than
 * this factor (its contraction measured): the factorization is renewed at the next tangent. */
#define OPOINT_WARM_HELD_CONTRACT 3e-3
/* A point without a tangent (opoint_warm_skip_tangent) keeps the factorization held for at most
 * OPOINT_WARM_SKIP_AGE points (then opoint_warm_refresh factors J anew), or up to
 * OPOINT_WARM_SKIP_AGE_MAX points while every chord step since left a max-norm residual at most
 * OPOINT_WARM_CHORD_MARGIN times mbl_opoint_options.abs_tol (accepted by the max-norm clause with
 * room to spare: the held J still good) */
#define OPOINT_WARM_SKIP_AGE 16
#define OPOINT_WARM_SKIP_AGE_MAX 32
#define OPOINT_WARM_CHORD_MARGIN 0.5

typedef struct opoint_warm opoint_warm;

/* The corrector's work since it was made: evaluations of the residual F, of its Jacobian, of the
 * scaled residual, Newton solves (a numeric factorization each: the steps and the tangents), and
 * of dR/dp (mbl_dae_deriv_eval_param); chord steps (a solve with the held factorization, no
 * Jacobian or factorization), and those that did not contract (full Newton from the prediction). */
typedef struct opoint_warm_counts {
    long long F, jac, scaled, factor, dfdp, chord, chord_fallback;
    long long held;         /* tangents solved with the held factorization (no factorization) */
    long long bound;        /* predictions' scaled residuals a one-row lower bound made unneeded */
    long long rs_bound;     /* acceptance tests (of scaled) decided by an upper bound of the scaled
                             * residual (finf and one Jacobian entry a row), the residual not computed */
} opoint_warm_counts;

/* A corrector for the model's equilibria (opt: the sweep's point options, copied; dd: the model's
 * parameter derivatives (mbl_dae_deriv_new_param is enough), borrowed; param: the swept parameter's index). */
int opoint_warm_new(const mbl_model *md, const mbl_opoint_options *opt, const mbl_dae_deriv *dd, int param,
                    opoint_warm **out, mbl_status *st);
void opoint_warm_free(opoint_warm *w);
void opoint_warm_get_counts(const opoint_warm *w, opoint_warm_counts *c);
/* Tests: 0 computes every prediction's scaled residual that a test reads (no one-row lower bound
 * in its place), 1 (the default) the bound first. */
void opoint_warm_set_bound(opoint_warm *w, int on);
/* 1 (the default): the Jacobian's entries and the subproblem's rows evaluated by one tape, compiled
 * at the first point (warm.c warm_fj_tape: cheaper per point, about 3.7 M instructions to compile on
 * the N = 20 four-bar); 0: by their two tapes. Before the first point only. */
void opoint_warm_set_fused(opoint_warm *w, int on);
/* Forget the factorization (the start of a block). */
void opoint_warm_reset(opoint_warm *w);
/* The largest number of full Newton steps opoint_warm_point takes from then on (default
 * OPOINT_WARM_MAX_STEPS; a sweep's chain of block starts, whose steps are a block long, takes more). */
void opoint_warm_set_max_steps(opoint_warm *w, int max_steps);
/* A copy of a point (its arrays; not the Jacobian values kept for the linearization: jac_memo
 * NULL), or NULL when out of memory. */
mbl_point *opoint_point_copy(const mbl_point *pt);
/* The tangent dy (n + m + k) at the solved point pt of the model at its current parameter values.
 * MBL_EARG when the warm start does not apply to the point (not an equilibrium, ode states, a
 * rank-deficient Jacobian); other codes on failure. */
int opoint_warm_tangent(opoint_warm *w, const mbl_point *pt, double *dy, mbl_status *st);
/* The tangent dy_in at pt (a block's first point whose tangent was solved before, by this model's
 * corrector: a sweep's chain of block starts) taken as the tangent there, as opoint_warm_tangent would
 * have given it but with no factorization held (the block's first full Newton step makes one, held
 * from then on); dy_out = dy_in. MBL_EARG where the warm start does not apply to pt (the subproblem
 * not selected yet: then opoint_warm_tangent). */
int opoint_warm_adopt_tangent(opoint_warm *w, const mbl_point *pt, const double *dy_in, double *dy_out,
                              mbl_status *st);
/* 1 when the factorization held is due for renewal before a point without a tangent
 * (opoint_warm_skip_tangent): none held in the block, the held one OPOINT_WARM_SKIP_AGE points old,
 * or a chord step that contracted less than OPOINT_WARM_HELD_CONTRACT since; then opoint_warm_refresh. */
int opoint_warm_tangent_due(const opoint_warm *w);
/* No tangent at the point just solved (the caller predicts the next point without one: the cubic
 * through the block's last four points, src/study/sweep_point.c): the next point's chord step
 * solves with the factorization held, which ages by one point. */
void opoint_warm_skip_tangent(opoint_warm *w);
/* J factored at the solved point pt (the factorization held from then on, age 0; the next point's
 * chord step solves with it), without a tangent. MBL_EARG where the warm start does not apply (as
 * opoint_warm_tangent). */
int opoint_warm_refresh(opoint_warm *w, const mbl_point *pt, mbl_status *st);
/* The equilibrium from the predicted y (n + m + k) at the model's current parameter values: 0 and
 * *out (the caller frees it) when accepted after *steps steps; MBL_ENOCONV when rejected (*out
 * NULL), other codes on failure. tmpl: the previous point of the block (its other fields).
 * chord: y is a prediction of second order (error O(h^3)): the first step is a chord step, solved
 * with the factorization of the last opoint_warm_tangent (J at the block's previous point: no
 * Jacobian is evaluated or factored at y), kept when it reduces the scaled residual at least by
 * OPOINT_WARM_CHORD_CONTRACT and accepted by the same test (its superlinear clause then asks the
 * chord's linear contraction to be a hundredfold); a chord step not kept is forgotten and full
 * Newton starts from y. Otherwise (chord 0, or no such factorization) full Newton from y. */
int opoint_warm_point(opoint_warm *w, const mbl_point *tmpl, const double *y, int chord, mbl_point **out, int *steps,
                      mbl_status *st);
/* The model's Jacobian values (the model's pattern) at pt, the point opoint_warm_point has just
 * returned, evaluated there for its acceptance test (NULL when they are not held: another point,
 * or after opoint_warm_tangent). */
const double *opoint_warm_jac(const opoint_warm *w, const mbl_point *pt);
/* The model's symbols those Jacobian values were evaluated at (model_fill_syms_pt's at pt), or NULL
 * where opoint_warm_jac is */
const double *opoint_warm_jac_syms(const opoint_warm *w, const mbl_point *pt);
/* A point of the model given back (taken, NULL allowed; freed where w is NULL or it has other
 * sizes): the next opoint_warm_point's result is made in it instead of allocated (a sweep's
 * block's previous point, which it no longer reads). */
void opoint_warm_recycle(opoint_warm *w, mbl_point *pt);

#endif
