/* The sensitivities' own types and functions shared by their files (src/study/sens*.c): the
 * context of one computation, the shift of the operating point (sens_point.c), the pencil and
 * its eigentriples (sens_pencil.c), the pencil in the user states (sens_spen.c); the computation
 * itself is sensitivity.c. */
#ifndef MBLIN_STUDY_SENS_INTERNAL_H
#define MBLIN_STUDY_SENS_INTERNAL_H

#include <complex.h>

#include "mblin/la.h"
#include "mblin/sensitivity.h"

typedef struct ctx {
    mbl_dae_layout L;
    const mbl_point *pt;
    double *Jd;      /* nF x nunk dense Jacobian */
    double *Fp;      /* nF x np */
    double *x0p;     /* nunk x np */
    int *cyclic;     /* n: no residual depends on q_i */
    double rank_tol;
    /* pencil */
    int N, mi, ki;
    int x0, nX;      /* the pencil columns of the user ODE states X: x0 .. x0 + nX - 1 */
    int *rowmap;     /* nF: pencil row of a residual row, or -1 */
    int *colmap;     /* nunk: pencil column (0..N-1) and which matrix (colmat) */
    int *colmat;     /* nunk: 0 P0, 1 P1, 2 P2, -1 none */
} ctx;

/* sens_point.c: dx/dp for every parameter in wrt (documented there) */
int study_sens_point_derivative(const ctx *c, int nw, const int *wrt, double *dxs, int *persist, mbl_status *st);

/* sens_pencil.c (each documented there): the independent constraints and the pencil's rows and
 * columns, P0, P1, P2 from Jacobian values, y = P(s) x, a complex eigenvector from LAPACK's packed
 * form, the bordered matrix of the shape derivative, the pencil's pattern, the backward error of
 * an eigentriple and its refinement */
int study_sens_pencil_map(ctx *c, mbl_status *st);
void study_sens_fill_pencil(const ctx *c, const double *vals, double *P0, double *P1, double *P2);
void study_sens_pencil_apply(int N, const double *P0, const double *P1, const double *P2, double complex s,
                             const double complex *x, double complex *y);
void study_sens_unpack_vec(const double *V, int ld, int nrows, int row0, const double *alphai, int j,
                           double complex *out);
int study_sens_bordered(int N, const double *P0, const double *P1, const double *P2, double complex s,
                        const double complex *dPx, int kk, mbla_csc **A, double **az, mbl_status *st);
int study_sens_pencil_pattern(int N, const double *P0, const double *P1, const double *P2, mbla_csc **A,
                              mbl_status *st);
double study_sens_pair_berr(const mbla_csc *A, int N, const double *P0, const double *P1, const double *P2,
                            const double nrm[3], double complex s, const double complex *v, const double complex *w,
                            double complex *r);
int study_sens_refine(const mbla_csc *A, double *az, int N, const double *P0, const double *P1, const double *P2,
                      const double nrm[3], double complex *s, double complex *v, double complex *w, double complex *tmp,
                      double complex *keep, int real, int iters, double *berr);

/* sens_pencil.c: T[0..2] (N x N pencil coefficients) projected onto the directions the
 * eigenvectors live in (documented there) */
int study_sens_project(const ctx *c, int N, const double *P0, const double *P1, double *T[3], mbl_status *st);

/* sens_pencil.c: cyclic coordinates' zero eigenvalues deflated exactly (defl[j]: how often column
 * j was divided by s), and the pencil before that (documented there) */
void study_sens_deflate(int N, int nshape, double *P0, double *P1, double *P2, double *dP, int nwrt, int *defl,
                        int *ndefl);
void study_sens_undeflate(int N, const double *P0, const double *P1, const double *P2, const int *defl, double *U0,
                          double *U1, double *U2);

/* sens_spen.c: the pencil in the user states (documented there) */
typedef struct spen {
    int n, m, ns;
    double *T0;      /* n x ns */
    double *dT0;     /* n x ns x nwrt */
} spen;

int study_sens_spen_build(const ctx *c, const mbl_dae_deriv *d, const mbl_point *pt, const double *Jv, const double *dx,
                          const int *wrt, int nwrt, double *P0, double *P1, double *P2, double *dP, spen *sp,
                          mbl_status *st);

#endif
