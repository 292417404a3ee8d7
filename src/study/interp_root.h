/* Roots of the interpolants through two points (p0, f0, d0) and (p1, f1, d1) of a function and its
 * derivative: the boundary's refinement from points outside a cluster (src/study/boundary.c). */
#ifndef MBLIN_STUDY_INTERP_ROOT_H
#define MBLIN_STUDY_INTERP_ROOT_H

/* The root in [p0, p1] of the cubic Hermite interpolant of (f, f') at both ends (Newton from the
 * chord's root, kept inside; the chord's root when a derivative is not finite): an error of about
 * w^4 f'''' / (384 f'), w = p1 - p0. f0 and f1 of opposite signs. */
double study_hermite_root(double p0, double f0, double d0, double p1, double f1, double d1);

/* The root in [p0, p1] of the quadratic through (p0, f0) and (p1, f1) with the derivative d0
 * (at_p1 0) or d1 (at_p1 1); NaN when that derivative is not finite. f0 and f1 of opposite
 * signs. */
double study_quadratic_root(double p0, double f0, double d0, double p1, double f1, double d1, int at_p1);

#endif
