/* Modal damping ratios of a modal body (issue 70, item 7), planar and spatial:
 *
 *   link:
 *     type: modal
 *     damping: {zeta: [0.01, 0.02, 0.05]}    (one ratio per mode of the body, lowest first; or one
 *                                              number for every mode)
 *
 * or, for every modal body of the mechanism that gives no zeta of its own, the top-level key
 *
 *   modal_damping: 0.02
 *
 * The body's own modes are those of its modal stiffness and mass, K phi_i = omega_i^2 M phi_i with
 * phi_i^T M phi_j = delta_ij, ascending; the damping that gives mode i the ratio zeta_i is
 * C = M Phi diag(2 zeta_i omega_i) Phi^T M (so that Phi^T C Phi = diag(2 zeta_i omega_i)); with
 * alpha and beta too the body's damping is the sum alpha M + beta K + C (model/ffr.h, Cm). For the
 * usual modal files (M the identity, K diagonal and ascending) it is diag(2 zeta_i omega_i) on
 * eta_1, eta_2, ... The ratios are numbers (not expressions of the parameters: the sensitivities
 * take no derivative through them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mech/mech_internal.h"

/* The modal stiffness may have eigenvalues this far below zero, relative to its largest, from the
 * FE code's rounding (a rigid-body mode left in); lower is an error. */
#define MODAL_ZETA_NEG_TOL 1e-9

static int zeta_number(mech *M, const yaml_node_t *n, const char *what, double *z)
{
    char *end = NULL;
    const char *s = mech_is_scalar(n) ? mech_sc(n) : "";
    *z = strtod(s, &end);
    if (!*s || end == s || *end)
        return err_at(M, n, "%s: modal damping ratio '%s' must be a number", what, mech_is_scalar(n) ? s : "(not a scalar)");
    if (!(*z >= 0) || !isfinite(*z))
        return err_at(M, n, "%s: modal damping ratio %s must be >= 0 and finite", what, s);
    return 0;
}

/* zeta[k] from the node: one number for every mode, or a list of k */
static int read_zeta(mech *M, const yaml_node_t *n, const char *what, int k, double *zeta)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        int rc = zeta_number(M, n, what, &zeta[0]);
        for (int i = 1; i < k && !rc; i++) zeta[i] = zeta[0];
        return rc;
    }
    int len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (len != k) return err_at(M, n, "%s: damping zeta has %d ratios for the body's %d modes", what, len, k);
    for (int i = 0; i < k; i++) {
        int rc = zeta_number(M, mech_node(M->doc, n->data.sequence.items.start[i]), what, &zeta[i]);
        if (rc) return rc;
    }
    return 0;
}

/* C = (M Z) diag(d) (M Z)^T into Cm, symmetric by construction */
static int damping_matrix(int k, const double *Mf, const double *Z, const double *d, mbla_csc **Cm, mbl_status *st)
{
    double *MZ = mbl_calloc((size_t)k * k, sizeof *MZ), *C = mbl_calloc((size_t)k * k, sizeof *C);
    int rc = MZ && C ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < k && !rc; j++)
        for (int l = 0; l < k; l++) {
            double z = Z[l + (size_t)k * j];
            for (int i = 0; i < k; i++) MZ[i + (size_t)k * j] += Mf[i + (size_t)k * l] * z;
        }
    for (int j = 0; j < k && !rc; j++)
        for (int i = 0; i <= j; i++) {
            double s = 0;
            for (int m = 0; m < k; m++) s += MZ[i + (size_t)k * m] * d[m] * MZ[j + (size_t)k * m];
            C[i + (size_t)k * j] = C[j + (size_t)k * i] = s;
        }
    if (!rc) rc = mbla_csc_from_dense(k, k, C, k, 0.0, Cm, st);
    mbl_free(MZ), mbl_free(C);
    return rc;
}

int mech_modal_zeta(mech *M, const yaml_node_t *val, const char *what, int k, const double *Mf, const double *Kf,
                    mbla_csc **Cm)
{
    *Cm = NULL;
    M->nmodal++;
    yaml_node_t *dn = mech_get(M, val, "damping"), *zn = dn && dn->type == YAML_MAPPING_NODE ? mech_get(M, dn, "zeta") : NULL;
    if (!zn) zn = mech_get(M, yaml_document_get_root_node(M->doc), "modal_damping");
    if (!zn) return 0;
    double *zeta = mbl_calloc((size_t)k, sizeof *zeta), *w = mbl_calloc((size_t)k, sizeof *w);
    double *Z = mbl_calloc((size_t)k * k, sizeof *Z);
    int rc = zeta && w && Z ? read_zeta(M, zn, what, k, zeta) : mech_oom(M);
    if (!rc && mbla_sygvd(k, Kf, k, Mf, k, w, Z, k, M->st))
        rc = err_at(M, zn, "%s: modal damping: the modes of the body's stiffness and mass: %s", what, M->st->msg);
    double big = 0;
    for (int i = 0; i < k && !rc; i++) big = fmax(big, fabs(w[i]));
    for (int i = 0; i < k && !rc; i++) {
        if (w[i] < -MODAL_ZETA_NEG_TOL * big)
            rc = err_at(M, zn, "%s: modal damping: the stiffness has a negative mode (omega^2 = %g)", what, w[i]);
        w[i] = 2 * zeta[i] * sqrt(fmax(w[i], 0.0)); /* 2 zeta_i omega_i */
    }
    if (!rc && (rc = damping_matrix(k, Mf, Z, w, Cm, M->st)) == MBL_ENOMEM) rc = mech_oom(M);
    mbl_free(zeta), mbl_free(w), mbl_free(Z);
    return rc;
}

int mech_modal_damping_check(mech *M, const yaml_node_t *root)
{
    yaml_node_t *n = mech_get(M, root, "modal_damping");
    double z;
    if (!n) return 0;
    int rc = zeta_number(M, n, "modal_damping", &z);
    if (!rc && !M->nmodal)
        rc = err_at(M, n, "modal_damping: the mechanism has no modal body (the key sets only the damping ratios of "
                          "modal bodies' modes)");
    return rc;
}
