/* The symbolic linear models' own functions shared by their files (src/codegen/symlin*.c): the
 * symbolic linear algebra (symlin_elim.c) and the model at a point with motion (symlin_moving.c);
 * each is documented where it is defined. */
#ifndef MBLIN_CODEGEN_SYMLIN_INTERNAL_H
#define MBLIN_CODEGEN_SYMLIN_INTERNAL_H

#include "mblin/codegen.h"

/* symlin_elim.c */
int codegen_is_zero(const mblx_graph *g, mblx_id e);
mblx_id *codegen_new_ids(size_t n);
int codegen_sym_solve(mblx_graph *g, int k, mblx_id *P, double *Pv, int c, mblx_id *R, const char *what,
                      mbl_status *st);
int codegen_solve_copy(mblx_graph *g, int k, const mblx_id *P, const double *Pv, int c, mblx_id *B, const char *what,
                       mbl_status *st);
int codegen_eval_nodes(const mblx_graph *g, size_t n, const mblx_id *e, const double *sv, double *out,
                       mbl_status *st);
mblx_id *codegen_congruence(mblx_graph *g, int n, int a, const mblx_id *L, const mblx_id *X, int b,
                            const mblx_id *R);
int codegen_make_ab(mbl_symlin *sl, const double *sv, mbl_status *st);

/* symlin_moving.c */
int codegen_build_moving(mbl_symlin *sl, const mbl_point *pt, const mblx_id *Y, const mblx_id *sexpr, int dyn_outputs,
                         mblx_id **hv_out, mblx_id **ha1_out, mblx_id **ha0_out, double **sv_out, mbl_status *st);

/* symlin_ode.c: the ODE states and implicit variables at rest (codegen_ode_extend) */
typedef struct codegen_ode_in {
    int nX, nZ;
    const mblx_id *rows; /* n + nX + nZ: R, d, zeq in the symbolic model's graph */
    const mblx_id *Y;    /* ny outputs */
    const mblx_id *Xd;   /* nX: the symbols der(X) */
    const double *sv;    /* every symbol's value at the point (pivots) */
    /* with motion or state functions (codegen_build_moving; NULL at rest): dv = H dS' + Hv dS,
     * da = H dS'' + Ha1 dS' + Ha0 dS, and the point's accelerations sl->acc */
    const mblx_id *Hv, *Ha1, *Ha0;
} codegen_ode_in;
int codegen_ode_extend(mbl_symlin *sl, const codegen_ode_in *in, mbl_status *st);

/* symlin_outputs.c: outputs of accelerations and multipliers at rest (after A, B, C, D; at rest
 * with coordinate states and no ODE states). The reduction's arrays (n x n Jacobians at rest, lambda
 * not yet substituted in Rl; Ma, Rv, Rq, Rr with it), the outputs Y, the vdot and lambda symbols,
 * v and vdot with their zeros at rest, the dependent coordinates and the symbols' values. */
typedef struct codegen_rest_in {
    const mblx_id *Y, *as, *ls, *Ma, *Rv, *Rq, *Rl, *Rr, *rest_syms, *rest_zero;
    const int *dep;
    const double *sv;
} codegen_rest_in;
int codegen_rest_outputs_dyn(mbl_symlin *sl, const codegen_rest_in *in, mbl_status *st);

#endif
