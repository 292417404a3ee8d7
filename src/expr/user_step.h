/* The step of the central differences that stand in for the partials of user routines without
 * their own (MBLX_OP_USER nodes, src/expr/user.c), scaled for the calling thread: 1 (the default:
 * MBLX_USER_STEP) or 2, when the linearization estimates the differences' error by doing it again
 * with steps twice as long (src/lin/methods.c, docs/user-routines.md, "Exactness"). Internal to
 * the library. */
#ifndef MBLIN_EXPR_USER_STEP_H
#define MBLIN_EXPR_USER_STEP_H

void mblx__user_step_scale(double s);
double mblx__user_step_factor(void);

#endif
