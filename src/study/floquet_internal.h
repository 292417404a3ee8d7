/* Floquet analysis inside src/study (floquet.c): a sweep's point as modes (sweep_point.c). */
#ifndef MBLIN_STUDY_FLOQUET_INTERNAL_H
#define MBLIN_STUDY_FLOQUET_INTERNAL_H

#include "mblin/floquet.h"
#include "mblin/sensitivity.h"

/* The Floquet exponents at `point` as modes, for a sweep's point: eigenvalue k the exponent
 * log(mu_k) / T (imaginary part the principal value in (-pi/T, pi/T]), its shape the coordinate
 * part of the periodic mode shape at t0, listed in mbl_mode_order's order. The period is
 * opt->period, or, with spin_param >= 0, 1 / (that spin speed's revolutions per second) at the
 * model's current parameter values. 0 or an MBL_E* code; *out freed with mbl_modes_free. */
int study_floquet_modes(const mbl_model *model, const mbl_point *point, const mbl_floquet_options *opt, int spin_param,
                        mbl_modes **out, mbl_status *st);

/* mbl_boundary with opt->floquet (floquet_boundary.c): the search over [from, to] from near, sets
 * the user's settings with a last slot for param (nsets counts it). */
int study_floquet_boundary(const mbl_model *model, mbl_setting *sets, int nsets, const char *param, double near, double from,
                           double to, const mbl_boundary_options *opt, mbl_boundary_result *res, mbl_status *st);

#endif
