/* The listing order of modes, shared by every listing (mbl_modal; mbl_sensitivity_compute, and
 * through them the sweeps' branches and boundary's mode numbers): docs/linearization.md, "Mode
 * numbers". */
#ifndef MBLIN_MODAL_ORDER_H
#define MBLIN_MODAL_ORDER_H

#include "mblin/model.h"

/* Two eigenvalues closer than this times the larger modulus (after folding both into the upper
 * half plane) are one repeated eigenvalue for the order and the shapes. The sensitivities' own
 * default repeat_tol (their derivatives) is the same number. */
#define MODAL_REPEAT_TOL 1e-8

/* A shape is scaled so that its largest component is 1 (real): the first coordinate whose magnitude
 * is within MODAL_SHAPE_TIE (relative) of the largest, so that a tie (an antisymmetric mode, [1, -1])
 * does not go to whichever side rounding favours. */
#define MODAL_SHAPE_TIE 1e-6

typedef struct modal_item {
    double freq;  /* the sort key: |lambda| in any unit common to all items (0 for a zero mode) */
    double re, im;
    int zero;     /* a zero (rigid-body) mode: all of them are one repeated eigenvalue */
    int spurious; /* listed after the others, never one of a repeated eigenvalue */
    int idx;      /* the caller's index of the mode (its shape column) */
} modal_item;

/* Sorts it[0..nm-1] into the listing order (mbl_mode_order; physical before spurious modes) and
 * gives each repeated eigenvalue (modes within MODAL_REPEAT_TOL, and all zero modes) one
 * canonical basis of its shapes, ordered by it: shape_re/shape_im (n x ncol, column it[].idx; may
 * be NULL) are rewritten for those modes. mult (NULL or nm): the multiplicity of each mode in the
 * new order (1: simple; a conjugate pair counts once). 0 or MBL_ENOMEM. */
int modal_order(int nm, modal_item *it, int n, double *shape_re, double *shape_im, int *mult, mbl_status *st);

#endif
