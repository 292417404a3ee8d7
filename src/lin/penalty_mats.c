/* The penalty method's general matrices (source 001 Sec. 3.3, Eq. 11-12): the holonomic penalty
 * force lambda = Xi (Phi'' + Theta Phi' + Omega Phi) with Xi, Theta, Omega m x m (opt->pen_Xi,
 * pen_Theta, pen_Omega) in place of alpha I, 2 xi omega I, omega^2 I. Linearized, it is
 *     dlambda = alpha Xh (Phi_q da + P_v dv + P_k dq + dPhi''/dr dr),  Xh = Xi / alpha,
 *     P_v = dPhi''/dv + Theta Phi_q,  P_k = dPhi''/dq + Theta dPhi'/dq + Omega Phi_q,
 * so M_p = M + alpha P_l^T Phi_q, C_p = R_v + alpha P_l^T P_v, K_p = R_q + alpha P_l^T P_k with the
 * left factor P_l = Xh Phi_q (symmetric Xh: P_l^T Phi_q = Phi_q^T Xh Phi_q). alpha stays the scalar
 * the error estimate divides (Xi / pen_ratio) and the non-holonomic constraints use. Without
 * matrices P_l is Phi_q itself and P_v, P_k are formed by the very expressions of the scalar form
 * (the results of the scalar form are unchanged to the bit). */
#include <math.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* The penalty's mass alpha |Pl^T Phi_q|_1 below this times |M|_1 is negligible: the constraints are not
 * held, the penalty's modes mix with the physical ones and the extrapolation in alpha estimates
 * nothing (alpha = 1e-300 on tests/mech/rod_disc_natural.yaml labelled four zero modes physical
 * with an estimate of 6.3e-7) */
#define PEN_ALPHA_NEGLIGIBLE 1e-6

static const char *pen_names[3] = {"Xi (pen_Xi, linearize.penalty_Xi, --penalty-Xi)",
                                   "Theta (pen_Theta, linearize.penalty_Theta, --penalty-Theta)",
                                   "Omega (pen_Omega, linearize.penalty_Omega, --penalty-Omega)"};

int lin_pen_check(const mbl_lin_options *opt, int m, mbl_status *st)
{
    const double *A[3] = {opt->pen_Xi, opt->pen_Theta, opt->pen_Omega};
    for (int k = 0; k < 3; k++) {
        if (!A[k]) continue;
        if (opt->pen_m != m)
            return mbl_error(st, MBL_EARG, "penalty: the matrix %s is %d x %d, the model has %d holonomic constraints",
                             pen_names[k], opt->pen_m, opt->pen_m, m);
        /* Xi: M_p = M + Phi_q^T Xi Phi_q symmetric positive definite (source 001 after Eq. 15); Theta,
         * Omega: the penalty's own mass-spring-damper Phi'' + Theta Phi' + Omega Phi = 0 stable */
        int rc = mbla_sym_check(m, A[k], m, MBL_PEN_SYM_TOL, k == 1, st);
        if (rc) {
            mbl_error_prefix(st, "penalty: the matrix %s", pen_names[k]);
            return rc;
        }
    }
    return 0;
}

int lin_pen_general(const mbl_lin_options *opt) { return opt->pen_Xi || opt->pen_Theta || opt->pen_Omega; }

void lin_pen_rows_free(lin_pen_rows *R)
{
    mbl_free(R->buf);
    memset(R, 0, sizeof *R);
}

/* (A + A^T) / 2 * f into S (m x m) */
static void sym_part(int m, const double *A, double f, double *S)
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++) S[i + (size_t)j * m] = 0.5 * (A[i + (size_t)j * m] + A[j + (size_t)i * m]) * f;
}

void lin_pen_dense(const mbl_lin_options *opt, int m, double *Xh, double *Th, double *Om)
{
    double xi = opt->pen_xi, om = opt->pen_omega;
    size_t mm = (size_t)m * m;
    memset(Xh, 0, mm * sizeof *Xh), memset(Th, 0, mm * sizeof *Th), memset(Om, 0, mm * sizeof *Om);
    for (int i = 0; i < m; i++) {
        Xh[i + (size_t)i * m] = 1.0;
        Th[i + (size_t)i * m] = 2 * xi * om;
        Om[i + (size_t)i * m] = om * om;
    }
    if (opt->pen_Xi) sym_part(m, opt->pen_Xi, 1.0 / opt->pen_alpha, Xh);
    if (opt->pen_Theta) sym_part(m, opt->pen_Theta, 1.0, Th);
    if (opt->pen_Omega) sym_part(m, opt->pen_Omega, 1.0, Om);
}

int lin_pen_rows_init(const mbl_blocks *B, const mbl_lin_options *opt, lin_pen_rows *R, mbl_status *st)
{
    int n = B->n, m = B->m, gen = lin_pen_general(opt);
    size_t mn = (size_t)m * n, mm = (size_t)m * m;
    memset(R, 0, sizeof *R);
    R->buf = mbl_calloc(2 * mn + (gen ? mn + 3 * mm : 0) + 1, sizeof *R->buf);
    if (!R->buf) return mbl_error(st, MBL_ENOMEM, "out of memory");
    R->Pv = R->buf, R->Pk = R->buf + mn, R->Pl = B->Pq;
    double xi = opt->pen_xi, om = opt->pen_omega;
    if (!gen) { /* the scalar form, as it always was */
        for (size_t p = 0; p < mn; p++) {
            R->Pv[p] = B->Pddv[p] + 2 * xi * om * B->Pq[p];
            R->Pk[p] = B->Pddq[p] + 2 * xi * om * B->Pdq[p] + om * om * B->Pq[p];
        }
        return 0;
    }
    int rc = lin_pen_check(opt, m, st);
    if (rc) return rc;
    double *Xh = R->buf + 2 * mn + mn, *Th = Xh + mm, *Om = Th + mm, *Pl = R->buf + 2 * mn;
    lin_pen_dense(opt, m, Xh, Th, Om);
    memcpy(R->Pv, B->Pddv, mn * sizeof *R->Pv);
    memcpy(R->Pk, B->Pddq, mn * sizeof *R->Pk);
    if (m && n) {
        mbla_gemm('N', 'N', m, n, m, 1.0, Th, m, B->Pq, m, 1.0, R->Pv, m, NULL);
        mbla_gemm('N', 'N', m, n, m, 1.0, Th, m, B->Pdq, m, 1.0, R->Pk, m, NULL);
        mbla_gemm('N', 'N', m, n, m, 1.0, Om, m, B->Pq, m, 1.0, R->Pk, m, NULL);
        mbla_gemm('N', 'N', m, n, m, 1.0, Xh, m, B->Pq, m, 0.0, Pl, m, NULL);
    }
    R->Pl = Pl;
    if (opt->pen_Xi) {
        R->Xh = Xh;
        R->xnorm = mbla_norm1(m, m, Xh, m);
    }
    return 0;
}

int lin_pen_rows_apply(const lin_pen_rows *R, int m, int nc, double *L, int ld, mbl_status *st)
{
    if (!R->Xh || !m || !nc) return 0;
    double *T = mbl_calloc((size_t)m * nc, sizeof *T);
    if (!T) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < nc; j++) memcpy(T + (size_t)j * m, L + (size_t)j * ld, (size_t)m * sizeof *T);
    mbla_gemm('N', 'N', m, nc, m, 1.0, R->Xh, m, T, m, 0.0, L, ld, NULL);
    mbl_free(T);
    return 0;
}

int lin_pen_alpha_check(const mbl_blocks *B, const lin_pen_rows *R, double alpha, mbl_status *st)
{
    int n = B->n, m = B->m;
    if (!m || !n) return 0;
    double *S = mbl_calloc((size_t)n * n, sizeof *S);
    if (!S) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbla_gemm('T', 'N', n, n, m, 1.0, R->Pl, m, B->Pq, m, 0.0, S, n, NULL);
    double pen = alpha * mbla_norm1(n, n, S, n), mass = mbla_norm1(n, n, B->M, n);
    mbl_free(S);
    if (pen < PEN_ALPHA_NEGLIGIBLE * mass)
        return mbl_error(st, MBL_EARG, "penalty: alpha %.3g is negligible: alpha |Phi_q^T Phi_q|_1 / |M|_1 = %.3g, "
                         "below %.0e (PEN_ALPHA_NEGLIGIBLE), does not hold the constraints; raise alpha",
                         alpha, mass > 0 ? pen / mass : 0.0, PEN_ALPHA_NEGLIGIBLE);
    return 0;
}
