/* The spatial structured term evaluated numerically (src/model/terms/ffr3_num.c) against its
 * expression form (src/model/terms/ffr3.c, loaded with model_ffr_set_numeric(0)) and against central
 * differences of its own residual: the spatial beam pendulum (2 elements per link, Rayleigh damping
 * on link 1; and the example at 10 elements) at points where the links are deformed, rotated (unit
 * Euler parameters turned by up to about 0.3 rad), moving and accelerating, with multipliers; and
 * the damped one with the geometric stiffness of both bending planes (issue 32: the example says
 * `geometric_stiffness: false`, the source's model).
 * Checked: the expression form's every Jacobian entry is in the numeric pattern (the others hold 0);
 * residual and entries equal to 1e-12 of their row's largest entry; every entry of the whole
 * Jacobian (tapes and numeric term) equal to the central differences of the residual to 1e-6 of
 * the row's largest entry; and the tapes no longer hold the term. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "model/ffr.h"
#include "model/model_internal.h"
#include "test.h"
#include "fixture.h"

/* tolerances: the two forms sum the same products in other orders (rounding); central differences
 * with step H_FD have truncation error ~ H_FD^2 times third derivatives of order 1 to 1e3 here */
#define TOL_FORMS 1e-12
#define H_FD 1e-5
#define TOL_FD 1e-6

/* the example with ne elements per link ("10" or "2 ", two characters) and, when damped, Rayleigh
 * damping on link 1; geo: with the geometric stiffness (the example's `false` turned into `true `) */
static char *pendulum_text(const char *ne, int damped, int geo)
{
    char *sp = test_slurp("examples/mech/spatial_beam_pendulum.yaml"), *p;
    if (!sp) return NULL;
    while (geo && (p = strstr(sp, "geometric_stiffness: false"))) memcpy(p + 21, "true ", 5);
    if (strcmp(ne, "10"))
        while ((p = strstr(sp, "elements: 10"))) memcpy(p + 10, ne, 2);
    const char *at = strstr(sp, "    markers:\n      a1:");
    char *text = malloc(strlen(sp) + 128);
    if (at && text) sprintf(text, "%.*s%s%s", (int)(at - sp), sp, damped ? "    damping: {alpha: 0.05, beta: 2e-4}\n" : "", at);
    free(sp);
    return text;
}

/* the index of every (row, col) in md's jac, -1 if absent (dense: small models) */
static int *index_of(const mbl_model *md)
{
    size_t nn = (size_t)md->nF * md->nunk;
    int *ix = malloc((nn + 1) * sizeof *ix);
    for (size_t k = 0; k < nn; k++) ix[k] = -1;
    for (int p = 0; p < md->jac.nz; p++) ix[(size_t)md->jac.row[p] * md->nunk + md->jac.col[p]] = p;
    return ix;
}

/* a deformed, rotated, moving point: q0 plus noise, each body's Euler parameters turned and
 * normalized */
static void random_point(const mbl_model *md, unsigned *seed, double *q, double *v, double *a, double *lam)
{
    int n = md->n;
    for (int i = 0; i < n; i++) {
        q[i] = md->q0[i] + 0.02 * test_urand(seed);
        v[i] = test_urand(seed);
        a[i] = 3 * test_urand(seed);
    }
    for (int i = 0; i + 3 < n; i++) {
        size_t l = strlen(md->qname[i]);
        if (l < 3 || strcmp(md->qname[i] + l - 3, "_e0")) continue;
        double s = 0;
        for (int k = 0; k < 4; k++) q[i + k] = md->q0[i + k] + 0.15 * test_urand(seed), s += q[i + k] * q[i + k];
        for (int k = 0; k < 4; k++) q[i + k] /= sqrt(s);
    }
    for (int j = 0; j < md->m; j++) lam[j] = 10 * test_urand(seed);
}

static double *rowmax_of(const mbl_model *md, const double *J, double *rm)
{
    for (int i = 0; i < md->nF; i++) rm[i] = 0;
    for (int p = 0; p < md->jac.nz; p++) rm[md->jac.row[p]] = fmax(rm[md->jac.row[p]], fabs(J[p]));
    return rm;
}

/* the numeric Jacobian (all of it: tapes and terms) against central differences of the residual */
static double fd_check(const mbl_model *mn, const double *sn, const double *Jn, double *work)
{
    int nF = mn->nF;
    double *s = malloc((size_t)(mn->nsym + 1) * sizeof *s), *Fp = calloc((size_t)nF + 1, sizeof *Fp);
    double *Fm = calloc((size_t)nF + 1, sizeof *Fm), *D = calloc((size_t)mn->jac.nz + 1, sizeof *D);
    double *rm = calloc((size_t)nF + 1, sizeof *rm), worst = 0;
    int *ix = index_of(mn);
    memcpy(s, sn, (size_t)mn->nsym * sizeof *s);
    mbl_status st;
    for (int c = 0; c < mn->nunk; c++) {
        int k = mn->sym_of_unknown[c];
        double x = s[k], h = H_FD * fmax(1.0, fabs(x));
        s[k] = x + h;
        int rc = model_eval_F(mn, s, Fp, work, &st);
        s[k] = x - h;
        if (!rc) rc = model_eval_F(mn, s, Fm, work, &st);
        s[k] = x;
        CHECK_MSG(rc == 0, "%s", rc ? st.msg : "");
        /* every entry of column c; no derivative outside the pattern */
        for (int i = 0; i < nF; i++) {
            double d = (Fp[i] - Fm[i]) / (2 * h);
            int p = ix[(size_t)i * mn->nunk + c];
            if (p >= 0) D[p] = d;
            else if (fabs(d) > TOL_FD * fmax(1.0, fabs(Fp[i])))
                CHECK_MSG(0, "d F[%d] / d unknown %d = %.3g outside the pattern", i, c, d);
        }
    }
    rowmax_of(mn, Jn, rm);
    for (int p = 0; p < mn->jac.nz; p++) worst = fmax(worst, fabs(D[p] - Jn[p]) / fmax(rm[mn->jac.row[p]], 1.0));
    free(s), free(Fp), free(Fm), free(D), free(rm), free(ix);
    return worst;
}

static void compare(const char *what, const char *text, int npt, int nbody)
{
    mbl_model *me = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 0, NULL, text, "beam3.yaml");
    mbl_model *mn = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 1, NULL, text, "beam3.yaml");
    if (!me || !mn) {
        mbl_model_free(me), mbl_model_free(mn);
        return;
    }
    CHECK_MSG(mn->nffr3n == nbody && me->nffr3n == 0, "%s: %d numeric bodies (expression form: %d)", what, mn->nffr3n,
              me->nffr3n);
    CHECK_MSG(mn->jac_ntape < mn->jac.nz, "%s: every entry still in the tape", what);
    int n = me->n, m = me->m, nz = mn->jac.nz;
    int *map = calloc((size_t)me->jac.nz + 1, sizeof *map), *hit = calloc((size_t)nz + 1, sizeof *hit);
    int *ix = index_of(mn);
    CHECK(me->nunk == mn->nunk && me->nF == mn->nF);
    for (int p = 0; p < me->jac.nz; p++) {
        map[p] = ix[(size_t)me->jac.row[p] * mn->nunk + me->jac.col[p]];
        CHECK_MSG(map[p] >= 0, "%s: entry (%d, %d) missing in the numeric form", what, me->jac.row[p], me->jac.col[p]);
        if (map[p] >= 0) hit[map[p]] = 1;
    }
    double *q = calloc((size_t)n + 1, sizeof *q), *v = calloc((size_t)n + 1, sizeof *v), *a = calloc((size_t)n + 1, sizeof *a);
    double *lam = calloc((size_t)m + 1, sizeof *lam);
    double *se = calloc((size_t)me->nsym + 1, sizeof *se), *sn = calloc((size_t)mn->nsym + 1, sizeof *sn);
    size_t ws = me->work_size > mn->work_size ? me->work_size : mn->work_size;
    double *work = calloc(ws + 1, sizeof *work), *rm = calloc((size_t)me->nF + 1, sizeof *rm);
    double *Fe = calloc((size_t)me->nF + 1, sizeof *Fe), *Fn = calloc((size_t)mn->nF + 1, sizeof *Fn);
    double *Je = calloc((size_t)me->jac.nz + 1, sizeof *Je), *Jn = calloc((size_t)nz + 1, sizeof *Jn);
    unsigned seed = 4242;
    double worstF = 0, worstJ = 0, worstX = 0, worstD = 0;
    for (int t = 0; t < npt; t++) {
        random_point(me, &seed, q, v, a, lam);
        model_fill_syms(me, 0.0, q, v, a, lam, NULL, NULL, se);
        model_fill_syms(mn, 0.0, q, v, a, lam, NULL, NULL, sn);
        mbl_status st;
        int rc = model_eval_F(me, se, Fe, work, &st);
        if (!rc) rc = model_eval_F(mn, sn, Fn, work, &st);
        if (!rc) rc = model_eval_jac(me, se, Je, work, &st);
        if (!rc) rc = model_eval_jac(mn, sn, Jn, work, &st);
        CHECK_MSG(rc == 0, "%s: %s", what, rc ? st.msg : "");
        if (rc) break;
        rowmax_of(me, Je, rm);
        for (int i = 0; i < me->nF; i++) worstF = fmax(worstF, fabs(Fe[i] - Fn[i]) / fmax(fmax(rm[i], fabs(Fe[i])), 1e-300));
        for (int p = 0; p < me->jac.nz; p++)
            if (map[p] >= 0) worstJ = fmax(worstJ, fabs(Je[p] - Jn[map[p]]) / fmax(rm[me->jac.row[p]], 1e-300));
        for (int p = 0; p < nz; p++)
            if (!hit[p]) worstX = fmax(worstX, fabs(Jn[p]));
        if (t < 2) worstD = fmax(worstD, fd_check(mn, sn, Jn, work));
    }
    printf("  %s: %d Jacobian entries (%d by the tape; expression form %d), %d points: worst difference F %.2g, "
           "Jacobian %.2g (of the row's largest), extra entries %.2g; central differences %.2g\n",
           what, nz, mn->jac_ntape, me->jac.nz, npt, worstF, worstJ, worstX, worstD);
    CHECK_MSG(worstF <= TOL_FORMS && worstJ <= TOL_FORMS, "%s: F %.3g, Jacobian %.3g", what, worstF, worstJ);
    CHECK_MSG(worstX == 0, "%s: an entry outside the expression form's pattern is %.3g", what, worstX);
    CHECK_MSG(worstD <= TOL_FD, "%s: the Jacobian is off the central differences by %.3g", what, worstD);
    free(map), free(hit), free(ix), free(q), free(v), free(a), free(lam), free(se), free(sn), free(work), free(rm);
    free(Fe), free(Fn), free(Je), free(Jn);
    mbl_model_free(me), mbl_model_free(mn);
}

TEST(damped_two_elements)
{
    char *text = pendulum_text("2 ", 1, 0);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 2, damped", text, 5, 2);
    free(text);
}

TEST(geometric_two_elements)
{
    char *text = pendulum_text("2 ", 1, 1);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 2, damped, geometric stiffness", text, 5, 2);
    free(text);
}

TEST(example_ten_elements)
{
    char *text = pendulum_text("10", 0, 0);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 10", text, 3, 2);
    free(text);
}

/* a Matrix Market array file of the rows x cols column-major A in dir */
static void put_mtx(const char *dir, const char *name, int rows, int cols, const double *A)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "%%%%MatrixMarket matrix array real general\n%d %d\n", rows, cols);
    for (size_t t = 0; t < (size_t)rows * cols; t++) fprintf(f, "%.17g\n", A[t]);
    fclose(f);
}

/* A spatial modal body (issue 67) of k = 3 modes whose invariants are sums over six point masses at
 * general places u0 (every row of Cu and every block M_ab nonzero), two markers moving with general
 * translations and small rotations, damped, fixed to a rigid hub that spins on a revolute joint,
 * under gravity, with a force and a torque at a marker, and geometric stiffness per unit load of all
 * twelve loads (random symmetric matrices): the numeric form against the expression form and every
 * Jacobian entry against central differences, as for the beams. */
TEST(modal_body)
{
    enum { NP = 6, NK = 3 };
    char dir[] = "/tmp/mblin_ffr3_modalXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    unsigned seed = 67;
    double mp[NP], u0[NP][3], S[NP][3][NK], m = 0, s0[3] = {0}, Q[3][3] = {{0}};
    double Sb[3 * NK] = {0}, Cu[9 * NK] = {0}, Mab[9 * NK * NK] = {0}, Mc[NK * NK] = {0}, K[NK * NK] = {0}, T[2][6 * NK];
    for (int i = 0; i < NP; i++) {
        mp[i] = 1 + 0.5 * test_urand(&seed), m += mp[i];
        for (int a = 0; a < 3; a++) {
            u0[i][a] = 0.3 * test_urand(&seed) + (a == 0 ? 0.4 : 0);
            for (int j = 0; j < NK; j++) S[i][a][j] = test_urand(&seed);
        }
    }
    /* the definitions (src/fe/fe.h's fe_invariants): Sb 3 x k, Cu 9 x k (file: column-major),
     * Mab 9 k x k (block 3 a + b at rows (3 a + b) k), Mc = M_xx + M_yy + M_zz */
    for (int i = 0; i < NP; i++)
        for (int a = 0; a < 3; a++) {
            s0[a] += mp[i] * u0[i][a];
            for (int b = 0; b < 3; b++) Q[a][b] += mp[i] * u0[i][a] * u0[i][b];
            for (int j = 0; j < NK; j++) {
                Sb[a + 3 * j] += mp[i] * S[i][a][j];
                for (int b = 0; b < 3; b++) {
                    Cu[3 * a + b + 9 * j] += mp[i] * u0[i][a] * S[i][b][j];
                    for (int l = 0; l < NK; l++) Mab[(3 * a + b) * NK + j + 9 * NK * l] += mp[i] * S[i][a][j] * S[i][b][l];
                }
            }
        }
    for (int j = 0; j < NK; j++)
        for (int l = 0; l < NK; l++) {
            for (int a = 0; a < 3; a++) Mc[j + NK * l] += Mab[(3 * a + a) * NK + j + 9 * NK * l];
            K[j + NK * l] = j == l ? 400.0 * (j + 1) : 30.0 / (1 + j + l);
        }
    for (int mk = 0; mk < 2; mk++)
        for (int t = 0; t < 6 * NK; t++) T[mk][t] = test_urand(&seed) * (t % 6 < 3 ? 1 : 0.5);
    put_mtx(dir, "Sb.mtx", 3, NK, Sb), put_mtx(dir, "Cu.mtx", 9, NK, Cu), put_mtx(dir, "Mab.mtx", 9 * NK, NK, Mab);
    put_mtx(dir, "Mc.mtx", NK, NK, Mc), put_mtx(dir, "K.mtx", NK, NK, K);
    put_mtx(dir, "m1.mtx", 6, NK, T[0]), put_mtx(dir, "m2.mtx", 6, NK, T[1]);
    static const char *geo[12] = {"ax", "ay", "az", "alx", "aly", "alz", "wxx", "wyy", "wzz", "wxy", "wxz", "wyz"};
    char geotext[2048] = "    geometric_stiffness:\n";
    for (int l = 0; l < 12; l++) {
        double Gm[NK * NK];
        for (int j = 0; j < NK; j++)
            for (int i = 0; i <= j; i++) Gm[i + NK * j] = Gm[j + NK * i] = 5 * test_urand(&seed);
        char nm[32];
        snprintf(nm, sizeof nm, "G%s.mtx", geo[l]);
        put_mtx(dir, nm, NK, NK, Gm);
        size_t len = strlen(geotext);
        snprintf(geotext + len, sizeof geotext - len, "      %s: %s/%s\n", geo[l], dir, nm);
    }
    char *text = malloc(16384);
    CHECK(text != NULL);
    if (!text) return;
    snprintf(text, 16384,
             "model: mechanism\nname: a spatial modal body on a spinning hub\nspace: spatial\n"
             "ground:\n  markers: {o: {}}\n"
             "bodies:\n"
             "  hub:\n    mass: 2\n    inertia: [0.1, 0.1, 0.2]\n    angular_velocity: [0, 0, 10]\n"
             "    markers: {axle: {}, seat: {position: [0.2, 0, 0]}}\n"
             "  part:\n    type: modal\n    position: [0.2, 0, 0]\n    axis: [0, 0, 1]\n    angle: 0.3\n"
             "    angular_velocity: [0, 0, 10]\n    damping: {alpha: 0.05, beta: 2e-4}\n%s"
             "    invariants:\n      mass: %.17g\n      s0: [%.17g, %.17g, %.17g]\n"
             "      Q0: [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]\n"
             "      Sb: %s/Sb.mtx\n      Cu: %s/Cu.mtx\n      Mab: %s/Mab.mtx\n      Mc: %s/Mc.mtx\n      K: %s/K.mtx\n"
             "    markers:\n      m1: {position: [0, 0, 0], shapes: %s/m1.mtx}\n"
             "      m2: {position: [0.5, 0.1, -0.1], shapes: %s/m2.mtx}\n"
             "joints:\n  shaft: {type: revolute, i: axle, j: o}\n  clamp: {type: fixed, i: m1, j: seat}\n"
             "forces:\n  weight: {type: gravity, g: [0, -9.81, -3]}\n"
             "  push: {type: force, i: m2, force: [1, 2, 3], torque: [0.5, -0.2, 0.1]}\n",
             geotext, m, s0[0], s0[1], s0[2], Q[0][0], Q[1][1], Q[2][2], Q[0][1], Q[0][2], Q[1][2], dir, dir, dir, dir, dir, dir, dir);
    compare("spatial modal body on a spinning hub, k = 3, geometric stiffness", text, 5, 1);
    free(text);
    const char *files[] = {"Sb.mtx", "Cu.mtx", "Mab.mtx", "Mc.mtx", "K.mtx", "m1.mtx", "m2.mtx"};
    for (int f = 0; f < 7 + 12; f++) {
        char path[512];
        if (f < 7) snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        else snprintf(path, sizeof path, "%s/G%s.mtx", dir, geo[f - 7]);
        remove(path);
    }
    rmdir(dir);
}

int main(void)
{
    RUN(damped_two_elements);
    RUN(geometric_two_elements);
    RUN(example_ten_elements);
    RUN(modal_body);
    return test_summary("ffr3_num");
}
