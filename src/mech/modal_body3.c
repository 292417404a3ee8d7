/* The spatial modal body of `model: mechanism` (docs/mechanism-reference.md, "Spatial modal
 * bodies"): a flexible part given by the floating-frame invariants of its k elastic modes
 * (src/fe/fe.h's fe_invariants: an FE code's part reduced by Craig-Bampton, or written by hand),
 * in a floating frame of reference.
 *
 *   blade:
 *     type: modal
 *     position: [0, 0, 0]   axis: [0, 0, 1]   angle: 0      (the floating frame, as a spatial beam's)
 *     velocity: [0, 0, 0]   angular_velocity: [0, 0, 0]     (optional: initial, global axes)
 *     damping: {alpha: 0, beta: 1e-4}                       (alpha Mc + beta K)
 *     invariants:
 *       mass: 4      s0: [0, 0, 0]     Q0: [xx, yy, zz, xy, xz, yz]      (int rho u0 u0^T)
 *       Sb: Sb.mtx   (3 x k)   Cu: Cu.mtx   (9 x k, row 3 p + r = int rho u0_p S_r)
 *       Mab: Mab.mtx (9 k x k: block 3 a + b, rows (3 a + b) k + 1 .. (3 a + b + 1) k, int rho S_a^T S_b)
 *       Mc: Mc.mtx   K: K.mtx  (k x k)
 *     markers:
 *       root: {position: [0, 0, 0], shapes: root.mtx}        (6 x k: translation, small rotation per mode)
 *
 * Coordinates: the frame <b>_x, _y, _z, Euler parameters <b>_e0.._e3 (with their normalization
 * constraint) and the modal coordinates <b>_eta1 .. <b>_eta<k>, unconstrained (the modes are
 * orthogonal to the rigid ones). A marker sits at X + T_t eta in the frame, its axes turned by the
 * small rotation T_r eta (Rx Ry Rz, as a spatial beam node's). Inertia, gravity, stiffness and
 * damping are the structured term of model/ffr3.h (IpL = tw = 0). Optional geometric stiffness per
 * unit load, k x k files (the FE code's Phi^T K_G Phi of each load case's stresses):
 *     geometric_stiffness: {ax: .., ay: .., az: .., alx: .., aly: .., alz: .., wxx: .., wyy: ..,
 *                           wzz: .., wxy: .., wxz: .., wyz: ..}
 * per unit (A^T (R'' - g))_c (body force -rho e_c), angular acceleration al_c (-rho e_c x u0) and
 * product w_a w_b of the angular velocity (the centrifugal body force's part -rho w x (w x u0)
 * in w_a w_b). Not there yet: a marker's geometric stiffness per unit force, the mode shapes of
 * the part's nodes in the outputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fe/fe.h"
#include "mech/mech_internal.h"
#include "model/ffr3.h"

/* Mc, K and the pairs M_ab, M_ba^T must be symmetric to this fraction of the largest entry of Mc
 * (resp. K): a reduction's rounding stays far below, a wrong file far above. */
#define MODAL3_SYM_TOL 1e-9
/* the loads of the geometric stiffness files, in the order of model/ffr3.h's HL */
#define MODAL3_NGEO 12

/* the largest |X_ij - Y_ji| over k x k column-major X, Y */
static double asym(int k, const double *X, const double *Y)
{
    double d = 0;
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) d = fmax(d, fabs(X[i + (size_t)k * j] - Y[j + (size_t)k * i]));
    return d;
}

static double amax(size_t n, const double *x)
{
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(x[i]));
    return d;
}

static int all_finite(size_t n, const double *x)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* the invariants checked: sizes, finite, m > 0, Mc's diagonal > 0, Mc, K, M_ab = M_ba^T symmetric */
static int check_inv(mech *M, const yaml_node_t *key, const char *what, const fe_invariants *v, const fe_basis *b)
{
    int k = v->k;
    size_t kk = (size_t)k * k;
    if (k < 1 || !v->Sb || !v->Cu || !v->Mab || !v->Mc || !v->Kr)
        return err_at(M, key, "%s: the invariants need k >= 1 modes and Sb, Cu, Mab, Mc, K", what);
    if (b->k != k) return err_at(M, key, "%s: the markers' shapes have %d modes, the invariants %d", what, b->k, k);
    if (!(v->m > 0) || !isfinite(v->m)) return err_at(M, key, "%s: the mass must be positive and finite (it is %g)", what, v->m);
    if (!all_finite(3, v->s0) || !all_finite(6, v->Q0) || !all_finite(3 * (size_t)k, v->Sb) || !all_finite(9 * (size_t)k, v->Cu) ||
        !all_finite(9 * kk, v->Mab) || !all_finite(kk, v->Mc) || !all_finite(kk, v->Kr) ||
        !all_finite(3 * (size_t)b->niface, b->X) || !all_finite(6 * (size_t)k * b->niface, b->T))
        return err_at(M, key, "%s: an invariant or a marker's shape is not finite", what);
    double mc = amax(kk, v->Mc), kr = amax(kk, v->Kr), mab = 0;
    for (int i = 0; i < k; i++)
        if (!(v->Mc[i + (size_t)k * i] > 0)) return err_at(M, key, "%s: Mc's diagonal entry %d is not positive", what, i + 1);
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) mab = fmax(mab, asym(k, v->Mab + kk * (3 * a + c), v->Mab + kk * (3 * c + a)));
    if (asym(k, v->Mc, v->Mc) > MODAL3_SYM_TOL * mc || asym(k, v->Kr, v->Kr) > MODAL3_SYM_TOL * fmax(kr, mc) ||
        mab > MODAL3_SYM_TOL * mc)
        return err_at(M, key, "%s: Mc and K must be symmetric and Mab's block (a, b) the transpose of (b, a) (relative deviation %.3g)",
                      what, fmax(fmax(asym(k, v->Mc, v->Mc), mab) / mc, asym(k, v->Kr, v->Kr) / fmax(kr, mc)));
    return 0;
}

static int dense_csc(int k, const double *A, mbla_csc **out, mbl_status *st)
{
    return mbla_csc_from_dense(k, k, A, k, 0.0, out, st);
}

/* the structured term's invariants (model/ffr3.h) from v: copies */
static int term_invariants(const fe_invariants *v, mbl_ffr3 *sp, mbl_status *st)
{
    int k = v->k, rc = 0;
    size_t kk = (size_t)k * k;
    memset(sp, 0, sizeof *sp);
    sp->nf = k, sp->m = v->m, sp->IpL = 0;
    memcpy(sp->s0, v->s0, sizeof sp->s0), memcpy(sp->Q0, v->Q0, sizeof sp->Q0);
    sp->Sb = mbl_alloc_array(3 * (size_t)k, sizeof *sp->Sb), sp->Cu = mbl_alloc_array(9 * (size_t)k, sizeof *sp->Cu);
    sp->tw = mbl_calloc((size_t)k, sizeof *sp->tw);
    if (!sp->Sb || !sp->Cu || !sp->tw) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) memcpy(sp->Sb, v->Sb, 3 * (size_t)k * sizeof *sp->Sb), memcpy(sp->Cu, v->Cu, 9 * (size_t)k * sizeof *sp->Cu);
    for (int c = 0; c < 9 && !rc; c++) rc = dense_csc(k, v->Mab + kk * c, &sp->M[c], st);
    if (!rc) rc = dense_csc(k, v->Mc, &sp->Mc, st);
    if (!rc) rc = dense_csc(k, v->Kr, &sp->K, st);
    if (rc) model_ffr3_free(sp);
    return rc;
}

/* the text sum_j c[j * stride] <b>_eta<j+1> (c0 + ... when c0 is not NULL), "0" when empty */
static const char *eta_sum(mech *M, const body *B, const char *c0, const double *c, int stride, int k)
{
    sbuf t = {0};
    if (c0) mech_sb_add(M, &t, "", c0);
    for (int j = 0; j < k; j++) {
        double x = c[(size_t)j * stride];
        if (x != 0) mech_sb_add(M, &t, t.n ? " + " : "", mech_fmt(M, "%s*%s_eta%d", mech_num(M, x), B->name, j + 1));
    }
    if (!t.n) mech_sb_add(M, &t, "", "0");
    return mech_sb_done(M, &t);
}

/* marker i of b on body bi: at X + T_t eta, axes Rx Ry Rz of T_r eta (mech_flex_rot_xyz) */
static int modal3_marker(mech *M, int bi, const yaml_node_t *key, const char *what, const fe_basis *b, int i, const char *mname)
{
    if (!mname || !mech_valid_name(mname)) return err_at(M, key, "%s: marker %d: not a valid name (letters, digits, _)", what, i + 1);
    if (mech_find_marker(M, mname, strlen(mname)) >= 0) return err_at(M, key, "duplicate marker name '%s'", mname);
    int k = b->k;
    double *T = mbl_alloc_array(6 * (size_t)k, sizeof *T);
    if (!T || !mech_keep(M, (char *)T)) return mech_oom(M);
    memcpy(T, b->T + 6 * (size_t)k * i, 6 * (size_t)k * sizeof *T);
    marker *K;
    int rc = mech_new_marker(M, mech_fmt(M, "%s", mname), bi, key, &K);
    if (rc) return rc;
    body *B = &M->b[bi];
    memcpy(K->R0, B->R0, sizeof K->R0); /* the marker's axes are the frame's in the file's configuration */
    K->mq[0] = 1;
    K->shape = T;
    const char *u[3], *th[3], *Rn[9];
    for (int r = 0; r < 3; r++) {
        u[r] = mech_fmt(M, "(%s)", eta_sum(M, B, mech_num(M, b->X[3 * i + r]), T + r, 6, k));
        th[r] = mech_fmt(M, "(%s)", eta_sum(M, B, NULL, T + 3 + r, 6, k));
    }
    if (M->oom) return mech_oom(M);
    mech_flex_rot_xyz(M, th, Rn);
    return mech_flex_marker_frame(M, K, B, NULL, u, Rn);
}

int mech_modal3_build(mech *M, const yaml_node_t *key, const yaml_node_t *val, const fe_invariants *inv, const fe_basis *b,
                      const char *const *marker_names)
{
    const char *name = mech_sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    int rc = check_inv(M, key, what, inv, b), k = inv->k, bi;
    double ab[2] = {0, 0};
    const char *dt[2] = {NULL, NULL};
    yaml_node_t *dnode[2] = {NULL, NULL};
    if (rc || (rc = mech_beam_damping(M, val, what, ab, dt, dnode, 1)) || (rc = mech_flex_frame3(M, key, val, what, &bi))) return rc;
    body *B = &M->b[bi];
    /* the structured term's coordinates: e0..e3, then the modal ones */
    const char **qf = mbl_calloc((size_t)k + 4, sizeof *qf);
    if (!qf || !mech_keep(M, (char *)qf)) return mech_oom(M);
    for (int c = 0; c < 4; c++) qf[c] = B->e[c];
    for (int j = 0; j < k && !rc; j++) {
        qf[4 + j] = mech_fmt(M, "%s_eta%d", name, j + 1);
        rc = mech_push(M, &M->src->coordinates, qf[4 + j], "0", B->line, B->col);
    }
    if (rc) return rc;
    B->qf3 = qf + 4, B->nqf3 = k;
    mbl_ffr_body *f = mech_flex_new(M, B, 4 + k, qf);
    if (!f) return mech_oom(M);
    f->alpha = ab[0], f->beta = ab[1];
    if ((rc = mech_modal_zeta(M, val, what, k, inv->Mc, inv->Kr, &f->Cm))) return rc;
    f->lexp = mbl_calloc((size_t)k + 4, sizeof *f->lexp);
    f->kcls = mbl_calloc((size_t)k + 4, sizeof *f->kcls);
    if (!f->lexp || !f->kcls) return mech_oom(M);
    /* the damping's factors for the sensitivities (the invariants are numbers of files: none) */
    mech_flex_fac fa[2] = {{MBL_FFR_FAC_ALPHA, 0, dt[0], ab[0], dnode[0]}, {MBL_FFR_FAC_BETA, 0, dt[1], ab[1], dnode[1]}};
    if ((rc = mech_flex_factors(M, f, fa, 2))) return rc;
    mbl_ffr3 *sp = mbl_calloc(1, sizeof *sp);
    if (!sp) return mech_oom(M);
    f->sp = sp;
    if ((rc = term_invariants(inv, sp, M->st))) return rc == MBL_ENOMEM ? mech_oom(M) : err_at(M, key, "%s: %s", what, M->st->msg);
    for (int i = 0; i < b->niface && !rc; i++) rc = modal3_marker(M, bi, key, what, b, i, marker_names[i]);
    return rc;
}

void mech_modal3_apply(mech *M, const marker *K, body *B, char *const f[3], char *const tq[3], const char *sg)
{
    /* the frame components A^T f, A^T tq; Q_j = T_t,j . A^T f + T_r,j . A^T tq */
    const char *lf[3] = {NULL, NULL, NULL}, *lt[3] = {NULL, NULL, NULL};
    for (int r = 0; r < 3; r++) {
        if (f) lf[r] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", B->A[r], f[0], B->A[3 + r], f[1], B->A[6 + r], f[2]);
        if (tq) lt[r] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", B->A[r], tq[0], B->A[3 + r], tq[1], B->A[6 + r], tq[2]);
    }
    for (int j = 0; j < B->nqf3; j++) {
        const double *T = K->shape + 6 * (size_t)j;
        sbuf t = {0};
        for (int r = 0; r < 6; r++) {
            const char *x = r < 3 ? lf[r] : lt[r - 3];
            if (x && T[r] != 0) mech_sb_add(M, &t, t.n ? " + " : "", mech_fmt(M, "%s*%s", mech_num(M, T[r]), x));
        }
        if (!t.n) continue;
        char *q = mech_fmt(M, "%s(%s)", sg, mech_sb_done(M, &t));
        B->Fq[j] = B->Fq[j] ? mech_fmt(M, "%s + %s", B->Fq[j], q) : q;
    }
}

/* ---- the hand-written `invariants:` block and the markers' files ---- */

/* a Matrix Market file of `invariants` (*rows x *cols; 0: the file's) transposed into row-major when tr */
static int inv_file(mech *M, const yaml_node_t *iv, const char *key, const char *what, int *rows, int *cols, int tr, double **out)
{
    yaml_node_t *n = mech_get(M, iv, key);
    if (!n) return err_at(M, iv, "%s: invariants: missing '%s' (a Matrix Market file)", what, key);
    char w[240];
    snprintf(w, sizeof w, "%s: invariants: %s", what, key);
    double *A = NULL;
    int rc = mech_read_mtx(M, n, w, rows, cols, &A), r = *rows, c = *cols;
    if (rc || !tr) {
        *out = A;
        return rc;
    }
    *out = mbl_alloc_array((size_t)r * c + 1, sizeof **out);
    if (!*out) rc = mech_oom(M);
    for (int i = 0; i < r && !rc; i++)
        for (int j = 0; j < c; j++) (*out)[(size_t)c * i + j] = A[i + (size_t)r * j];
    mbl_free(A);
    return rc;
}

/* the numbers of `invariants` (mass, s0, Q0) and its files into v (k from Mc) */
static int read_inv(mech *M, const yaml_node_t *iv, const char *what, fe_invariants *v)
{
    static const char *ok[] = {"mass", "s0", "Q0", "Sb", "Cu", "Mab", "Mc", "K", NULL};
    char w[240];
    snprintf(w, sizeof w, "%s: invariants", what);
    int rc = mech_want_map(M, iv, w);
    if (!rc) rc = mech_check_keys(M, iv, ok, w);
    yaml_node_t *mn = mech_get(M, iv, "mass"), *sn = mech_get(M, iv, "s0"), *qn = mech_get(M, iv, "Q0");
    if (!rc && (!mn || !sn || !qn)) return err_at(M, iv, "%s: needs 'mass', 's0' and 'Q0' (xx yy zz xy xz yz of int rho u0 u0^T)", w);
    const char *mt;
    if (!rc) rc = mech_text_of(M, mn, "mass", &mt);
    if (!rc) rc = mech_eval_text(M, mt, mn, "mass", &v->m);
    if (!rc && (!(v->m > 0) || !isfinite(v->m))) rc = err_at(M, mn, "%s: the mass must be positive and finite (it is %g)", w, v->m);
    if (!rc) rc = mech_eval_vec(M, sn, 3, "s0", v->s0);
    if (!rc) rc = mech_eval_vec(M, qn, 6, "Q0", v->Q0);
    /* the order of Mc is the number of modes */
    int k = 0, kc = 0, r3 = 3, r9 = 9, kk = 0, k9 = 0;
    if (!rc) rc = inv_file(M, iv, "Mc", what, &k, &kc, 0, &v->Mc);
    if (!rc && k != kc) rc = err_at(M, mech_get(M, iv, "Mc"), "%s: invariants: Mc is %d x %d, not square", what, k, kc);
    v->k = k, kk = kc = k, k9 = 9 * k;
    if (!rc) rc = inv_file(M, iv, "K", what, &kk, &kc, 0, &v->Kr);
    if (!rc) rc = inv_file(M, iv, "Sb", what, &r3, &kc, 1, &v->Sb);
    if (!rc) rc = inv_file(M, iv, "Cu", what, &r9, &kc, 1, &v->Cu);
    double *A = NULL;
    if (!rc) rc = inv_file(M, iv, "Mab", what, &k9, &kc, 0, &A);
    if (!rc && !(v->Mab = mbl_alloc_array(9 * (size_t)k * k, sizeof *v->Mab))) rc = mech_oom(M);
    for (int c = 0; c < 9 && !rc; c++) /* block c: rows c k .. c k + k - 1 of the 9 k x k file */
        for (int j = 0; j < k; j++)
            for (int i = 0; i < k; i++) v->Mab[(size_t)k * k * c + i + (size_t)k * j] = A[(size_t)c * k + i + (size_t)9 * k * j];
    mbl_free(A);
    return rc;
}

/* the markers' map: names, places and shapes (6 x k) into b */
static int read_markers(mech *M, const body *Bn, const yaml_node_t *mks, int k, fe_basis *b, const char ***names)
{
    b->k = k;
    if (!mks || (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0)) return 0;
    char what[200];
    snprintf(what, sizeof what, "markers of body '%s'", Bn->name);
    int rc = mech_want_map(M, mks, what), n = rc ? 0 : (int)(mks->data.mapping.pairs.top - mks->data.mapping.pairs.start);
    if (rc) return rc;
    b->X = mbl_calloc(3 * (size_t)n + 1, sizeof *b->X);
    b->T = mbl_calloc(6 * (size_t)k * n + 1, sizeof *b->T);
    *names = mbl_calloc((size_t)n + 1, sizeof **names);
    if (!b->X || !b->T || !*names || !mech_keep(M, (char *)*names)) return mech_oom(M);
    for (int i = 0; i < n && !rc; i++) {
        yaml_node_pair_t *p = mks->data.mapping.pairs.start + i;
        yaml_node_t *key = mech_node(M->doc, p->key), *val = mech_node(M->doc, p->value);
        static const char *ok[] = {"position", "shapes", NULL};
        if ((rc = mech_flex_marker_key(M, Bn, key, val, ok, what, sizeof what))) return rc;
        yaml_node_t *pn = mech_get(M, val, "position"), *sh = mech_get(M, val, "shapes");
        if (!pn || !sh) return err_at(M, val, "%s: needs 'position' [x, y, z] and 'shapes' (6 x %d: translation, small rotation per mode)", what, k);
        if ((rc = mech_eval_vec(M, pn, 3, "position", b->X + 3 * i))) return rc;
        double *S = NULL;
        int r = 6, c = k;
        char w[240];
        snprintf(w, sizeof w, "%s: shapes", what);
        if ((rc = mech_read_mtx(M, sh, w, &r, &c, &S))) return rc;
        memcpy(b->T + 6 * (size_t)k * i, S, 6 * (size_t)k * sizeof *S);
        mbl_free(S);
        (*names)[i] = mech_sc(key);
        b->niface = i + 1;
    }
    return rc;
}

/* the keys of a spatial modal body written by hand */
static const char *const modal3_keys[] = {"type",       "position", "axis",    "angle",
                                          "velocity",   "angular_velocity",    "damping",
                                          "invariants", "markers",  "geometric_stiffness", "fe", NULL};

/* The geometric stiffness per unit load (the file's comment at the top) as the term's HL
 * (model/ffr3.h: per unit (G_)_c, al_c, and W's entries; w_a^2 = W_aa + |w|^2, |w|^2 = -tr(W) / 2:
 * W_cc takes G_cc - 1/2 sum_a G_aa, W_ab (a < b) takes G_ab) */
static int read_geo(mech *M, const yaml_node_t *gs, const char *what, int k, mbl_ffr3 *sp)
{
    static const char *const keys[MODAL3_NGEO + 1] = {"ax", "ay", "az", "alx", "aly", "alz", "wxx", "wyy", "wzz", "wxy", "wxz", "wyz", NULL};
    char w[400];
    snprintf(w, sizeof w, "%s: geometric_stiffness (files per unit load)", what);
    int rc = mech_want_map(M, gs, w);
    if (!rc) rc = mech_check_keys(M, gs, keys, w);
    size_t kk = (size_t)k * k;
    double *G[MODAL3_NGEO] = {NULL}, *H = mbl_calloc(kk + 1, sizeof *H);
    if (!rc && !H) rc = mech_oom(M);
    for (int l = 0; l < MODAL3_NGEO && !rc; l++) rc = mech_modal_geo_file(M, gs, keys[l], what, k, &G[l]);
    for (int l = 0; l < MODAL3_NGEO && !rc; l++) {
        int any = G[l] != NULL;
        for (size_t t = 0; t < kk; t++) H[t] = G[l] ? G[l][t] : 0.0;
        if (l >= 6 && l < 9) /* the diagonal products */
            for (int c = 6; c < 9; c++) {
                any |= G[c] != NULL;
                for (size_t t = 0; t < kk && G[c]; t++) H[t] -= 0.5 * G[c][t];
            }
        if (any) rc = dense_csc(k, H, &sp->HL[l], M->st);
    }
    for (int l = 0; l < MODAL3_NGEO; l++) mbl_free(G[l]);
    mbl_free(H);
    return rc;
}

int mech_read_modal3(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    char what[200];
    snprintf(what, sizeof what, "body '%s'", mech_sc(key));
    int rc = mech_check_keys(M, val, modal3_keys, what);
    if (rc) return rc;
    yaml_node_t *gs = mech_get(M, val, "geometric_stiffness"), *iv = mech_get(M, val, "invariants");
    yaml_node_t *fe = mech_get(M, val, "fe");
    if (fe && iv) return err_at(M, fe, "%s: give the part by 'fe' (an FE code's files) or by 'invariants', not both", what);
    if (fe && gs)
        return err_at(M, gs, "%s: the geometric stiffness per unit load is read with 'invariants' only (an FE part's is not computed)", what);
    if (fe) return mech_read_modal_fe(M, key, val, fe); /* modal_fe.c */
    if (!iv) return err_at(M, val, "%s: missing 'fe' (an FE code's part: calculix or nastran files) or 'invariants' (mass, s0, Q0 and the files Sb, Cu, Mab, Mc, K)", what);
    fe_invariants v;
    fe_basis b;
    memset(&v, 0, sizeof v), memset(&b, 0, sizeof b);
    const char **names = NULL;
    body nb; /* the markers' messages name the body before it exists */
    memset(&nb, 0, sizeof nb);
    nb.name = mech_sc(key);
    rc = read_inv(M, iv, what, &v);
    if (!rc) rc = read_markers(M, &nb, mech_get(M, val, "markers"), v.k, &b, &names);
    if (!rc) rc = mech_modal3_build(M, key, val, &v, &b, names);
    if (!rc && gs) rc = read_geo(M, gs, what, v.k, M->src->ffr[M->b[M->nb - 1].flex - 1].sp);
    mbl_free(v.Sb), mbl_free(v.Cu), mbl_free(v.Mab), mbl_free(v.Mc), mbl_free(v.Kr);
    mbl_free(b.X), mbl_free(b.T);
    return rc;
}
