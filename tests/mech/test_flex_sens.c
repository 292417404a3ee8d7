/* Sensitivities of models with flexible bodies (the structured term's second derivatives,
 * model_ffr_param_deriv), against independent routes:
 *  - closed forms on a cantilever beam (no gravity): each mode's omega is proportional to
 *    sqrt(E / rho) and, at a fixed mesh, to r / L^2 (bending) or 1 / L (axial): d omega/dE =
 *    omega/(2E), d omega/d rho = -omega/(2 rho), d omega/dr = omega/r or 0, d omega/dL = -2 omega/L
 *    or -omega/L, to 1e-9;
 *  - the flexible double pendulum of source 001 as two beam bodies (n_p = 5) against the same
 *    model written as energies in `model: dae` (examples/flexible_pendulum_np5.yaml), whose
 *    derivatives the expression engine takes term by term: every parameter (l, E, rho, r, g);
 *  - central differences (Richardson-extrapolated) of fresh linearizations: a damped beam pendulum
 *    with the Rayleigh factors, a point mass at its tip and its length as parameters, and the
 *    modal-body pendulum (gravity), 1e-6 relative. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "fixture.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_dae_deriv *dd;
    mbl_sensitivity *S;
    mbl_status st;
} run;

static void run_free(run *r)
{
    mbl_sensitivity_free(r->S);
    mbl_dae_deriv_free(r->dd);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
    memset(r, 0, sizeof *r);
}

static int run_model(const char *path, const char *text, run *r)
{
    memset(r, 0, sizeof *r);
    int rc = path ? mbl_model_load_file(path, NULL, 0, &r->md, &r->st)
                  : mbl_model_load_string(text, strlen(text), "test.yaml", NULL, 0, &r->md, &r->st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &r->st);
    if (!rc) rc = mbl_dae_deriv_new(r->md, &r->dd, &r->st);
    if (!rc) rc = mbl_sensitivity_compute(r->dd, r->pt, NULL, 0, NULL, &r->S, &r->st);
    CHECK_MSG(rc == 0, "%s: %s", path ? path : "model", r->st.msg);
    return rc;
}

static double param_value(const mbl_model *md, const char *name)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int i = fixture_param_index(md, name);
    return i >= 0 ? mbl_model_param_value(md, i) : NAN;
}

static const mbl_sens_mode *mode_near(const mbl_sensitivity *S, double re, double im)
{
    const mbl_sens_mode *best = NULL;
    double bd = HUGE_VAL;
    for (int i = 0; i < S->nmode; i++) {
        double d = hypot(S->modes[i].re - re, S->modes[i].im - im);
        if (d < bd) bd = d, best = &S->modes[i];
    }
    return best;
}

/* ---- closed forms: a clamped beam ---------------------------------------------------------- */

TEST(cantilever_closed_form)
{
    const char *text = "model: mechanism\nspace: planar\n"
                       "parameters: {L: 2, E: 2.1e11, rho: 7850, r: 0.01}\n"
                       "ground:\n  markers:\n    o: {position: [0, 0]}\n"
                       "bodies:\n  b:\n    type: beam\n    length: L\n    elements: 8\n    E: E\n    rho: rho\n"
                       "    radius: r\n    markers:\n      n1: {node: 1}\n"
                       "joints:\n  clamp: {type: fixed, i: n1, j: o}\n";
    run r;
    if (run_model(NULL, text, &r)) {
        run_free(&r);
        return;
    }
    int iL = fixture_param_index(r.md, "L"), iE = fixture_param_index(r.md, "E"), ir = fixture_param_index(r.md, "rho"),
        irad = fixture_param_index(r.md, "r");
    double L = 2, E = 2.1e11, rho = 7850, rad = 0.01, worst = 0;
    int nb = 0, na = 0;
    for (int i = 0; i < r.S->nmode; i++) {
        const mbl_sens_mode *m = &r.S->modes[i];
        if (!m->defined || m->im <= 0) continue;
        double w = m->im;
        double ee[4] = {m->dim[iE] - w / (2 * E), m->dim[ir] + w / (2 * rho), 0, 0};
        int bending = fabs(m->dim[irad]) > 1e-3 * w / rad;
        ee[2] = m->dim[irad] - (bending ? w / rad : 0.0);
        ee[3] = m->dim[iL] + (bending ? 2 : 1) * w / L;
        double sc[4] = {w / E, w / rho, w / rad, w / L};
        for (int k = 0; k < 4; k++) {
            double e = fabs(ee[k]) / sc[k];
            CHECK_MSG(e <= 1e-9, "mode %.6g (%s) parameter %d: error %.3g of omega/p", w, bending ? "bending" : "axial",
                      k, e);
            if (e > worst) worst = e;
        }
        bending ? nb++ : na++;
        /* the real parts (undamped) stay 0 */
        for (int k = 0; k < 4; k++) CHECK(fabs(m->dre[k]) <= 1e-9 * w / (k == iL ? L : k == iE ? E : k == ir ? rho : rad));
    }
    CHECK(nb == 16 && na == 8);
    printf("  cantilever: %d bending and %d axial modes, worst deviation from the closed forms %.2g (of omega/p)\n", nb,
           na, worst);
    run_free(&r);
}

/* ---- the source 001 pendulum: beam bodies against its energies in model: dae ---------------- */

/* the examples' beam pendulum with n_p elements per link */
static char *beams_np(int np)
{
    char *s = test_slurp("examples/flexible_pendulum_beams.yaml");
    CHECK(s != NULL);
    if (!s) return NULL;
    char *p;
    while ((p = strstr(s, "elements: 50"))) {
        char num[8];
        snprintf(num, sizeof num, "%-2d", np);
        memcpy(p + 10, num, 2);
    }
    return s;
}

TEST(pendulum_vs_energies)
{
    char *text = beams_np(5);
    if (!text) return;
    run a, b;
    int ra = run_model(NULL, text, &a), rb = run_model("examples/flexible_pendulum_np5.yaml", NULL, &b);
    free(text);
    if (!ra && !rb) {
        static const char *names[5] = {"l", "E", "rho", "r", "g"};
        double worst = 0;
        int ncmp = 0;
        for (int i = 0; i < a.S->nmode; i++) {
            const mbl_sens_mode *m = &a.S->modes[i], *n = mode_near(b.S, m->re, m->im);
            if (!m->defined || m->im <= 0 || !n) continue;
            CHECK_MSG(fabs(n->im - m->im) <= 1e-9 * m->im, "eigenvalue %.12g vs %.12g", m->im, n->im);
            for (int k = 0; k < 5; k++) {
                int ia = fixture_param_index(a.md, names[k]), ib = fixture_param_index(b.md, names[k]);
                double p = param_value(a.md, names[k]), sc = m->im / p;
                double e = hypot(m->dim[ia] - n->dim[ib], m->dre[ia] - n->dre[ib]) / (fabs(n->dim[ib]) + 1e-6 * sc);
                CHECK_MSG(e <= 1e-6, "mode %.8g d/d%s: %.12g vs %.12g (energies)", m->im, names[k], m->dim[ia], n->dim[ib]);
                if (e > worst) worst = e;
                ncmp++;
            }
        }
        CHECK(ncmp >= 5 * 30);
        printf("  pendulum n_p = 5, beam bodies vs energies: %d derivatives, worst relative deviation %.2g\n", ncmp,
               worst);
    }
    run_free(&a);
    run_free(&b);
}

/* ---- central differences of fresh linearizations ------------------------------------------- */

static int fresh(const char *path, const char *text, const char *name, double value, mbl_modes **mo)
{
    mbl_setting set = {name, value};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_status st;
    int rc = path ? mbl_model_load_file(path, &set, 1, &md, &st)
                  : mbl_model_load_string(text, strlen(text), "test.yaml", &set, 1, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, mo, &st);
    CHECK_MSG(rc == 0, "fresh %s = %g: %s", name, value, st.msg);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

static double complex nearest(const mbl_modes *M, double complex want)
{
    double complex best = NAN;
    double bd = HUGE_VAL;
    for (int i = 0; i < M->nx; i++) {
        double complex s = M->modes[i].re + I * M->modes[i].im;
        if (cabs(s - want) < bd) bd = cabs(s - want), best = s;
    }
    return best;
}

/* worst relative deviation of d lambda/dp (the first nm oscillatory modes, every parameter) from
 * Richardson-extrapolated central differences at relative steps 10^-e0, 10^-e0-1, 10^-e0-2, the estimate of
 * the two neighbouring steps that agree best (as tests/study/test_sensitivity.c); relative to
 * |d lambda/dp| or 1e-3 |lambda|/|p| when the eigenvalue hardly moves */
#define NSTEP 3
static double check_fd(const char *path, const char *text, int nm, int e0, double tol, int *ncmp)
{
    run r;
    if (run_model(path, text, &r)) {
        run_free(&r);
        return HUGE_VAL;
    }
    double worst = 0;
    for (int j = 0; j < r.S->nwrt; j++) {
        int ip = r.S->wrt[j];
        const char *name = mbl_model_param_name(r.md, ip);
        double p0 = mbl_model_param_value(r.md, ip), hs[NSTEP];
        mbl_modes *mo[NSTEP][4];
        memset(mo, 0, sizeof mo);
        int ok = 1;
        for (int a = 0; a < NSTEP; a++) {
            double h = hs[a] = pow(10.0, -e0 - a) * (p0 != 0 ? fabs(p0) : 1.0), steps[4] = {h, -h, h / 2, -h / 2};
            for (int s = 0; s < 4 && ok; s++) ok = fresh(path, text, name, p0 + steps[s], &mo[a][s]) == 0;
        }
        int k = 0;
        for (int i = 0; ok && i < r.S->nmode && k < nm; i++) {
            const mbl_sens_mode *m = &r.S->modes[i];
            if (!m->defined || m->im <= 0) continue;
            k++;
            double complex s0 = m->re + I * m->im, ds = m->dre[j] + I * m->dim[j], R[NSTEP];
            for (int a = 0; a < NSTEP; a++) {
                double h = hs[a], steps[4] = {h, -h, h / 2, -h / 2};
                double complex f[4];
                for (int t = 0; t < 4; t++) f[t] = nearest(mo[a][t], s0 + ds * steps[t]);
                R[a] = (4 * (f[2] - f[3]) / h - (f[0] - f[1]) / (2 * h)) / 3;
            }
            int best = 1;
            for (int a = 2; a < NSTEP; a++)
                if (cabs(R[a] - R[a - 1]) < cabs(R[best] - R[best - 1])) best = a;
            double scale = fmax(cabs(ds), 1e-3 * cabs(s0) / fabs(p0 != 0 ? p0 : 1.0));
            double e = cabs(R[best] - ds) / scale;
            CHECK_MSG(e <= tol, "mode %.8g d/d%s: exact %.12g%+.12gi, differences %.12g%+.12gi", m->im, name,
                      creal(ds), cimag(ds), creal(R[best]), cimag(R[best]));
            if (e > worst) worst = e;
            (*ncmp)++;
        }
        for (int a = 0; a < NSTEP; a++)
            for (int s = 0; s < 4; s++) mbl_modes_free(mo[a][s]);
    }
    run_free(&r);
    return worst;
}

/* examples/flexible_pendulum_modal.yaml with link 1's mass as the parameter mm (damped = 0), or
 * with Rayleigh damping alpha = al on link 1 (damped = 1): check_fd of it */
static double modal_variant(int damped, int *ncmp)
{
    char *mt = test_slurp("examples/flexible_pendulum_modal.yaml");
    CHECK(mt != NULL);
    if (!mt) return HUGE_VAL;
    size_t cap = strlen(mt) + 4096, k = 0;
    char *buf = malloc(cap);
    const char *p = mt;
    int first = 1;
    while (*p && k + 200 < cap) {
        if (!strncmp(p, "modal/", 6)) { /* the matrices' paths, from the working directory */
            k += (size_t)snprintf(buf + k, cap - k, "examples/modal/");
            p += 6;
        } else if (!strncmp(p, "  g: 9.81", 9)) {
            k += (size_t)snprintf(buf + k, cap - k, "  g: 9.81\n  %s", damped ? "al: 0.3" : "mm: 424.11500823462211");
            p += 9;
        } else if (first && !strncmp(p, "mass: 424.11500823462211", 24)) {
            k += (size_t)snprintf(buf + k, cap - k, "%s", damped ? "mass: 424.11500823462211\n    damping: {alpha: al}" : "mass: mm");
            p += 24, first = 0;
        } else {
            buf[k++] = *p++;
        }
    }
    buf[k] = '\0';
    /* the mass alone moves by 1e-2 at most (the mass matrix stays positive definite); the damped
     * modal model's lowest eigenvalues carry ~1e-10 of rounding: steps from 1 (relative), 1e-5 there */
    /* damped: the differences are at their noise floor for omega_1's small d Im/d alpha (1.1e-4; the
     * estimate moved from 5e-6 to 1.4e-5 of the scale when the structured term's rounding changed,
     * model/terms/ffr_num.c, with the exact derivative the same to the last bit: tests/model/test_ffr_num.c) */
    double w = damped ? check_fd(NULL, buf, 6, 0, 3e-5, ncmp) : check_fd(NULL, buf, 6, 2, 1e-6, ncmp);
    free(buf), free(mt);
    return w;
}

TEST(central_differences)
{
    /* a damped beam pendulum with a point mass at its tip, pinned at node 1 (tests/mech/damped_beam_tip.yaml) */
    int n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    double w1 = check_fd("tests/mech/damped_beam_tip.yaml", NULL, 6, 1, 1e-6, &n1);
    double w2 = check_fd("examples/flexible_pendulum_modal.yaml", NULL, 6, 1, 1e-6, &n2);
    /* the modal pendulum with link 1's mass, then a damping factor, as parameters */
    double w3 = modal_variant(0, &n3), w4 = modal_variant(1, &n4);
    printf("  modal pendulum with its mass as a parameter: %d derivatives, worst %.2g; damped (alpha): %d, worst %.2g\n",
           n3, w3, n4, w4);
    printf("  central differences: damped beam pendulum %d derivatives, worst %.2g; modal pendulum %d, worst %.2g\n",
           n1, w1, n2, w2);
    CHECK(n1 >= 6 * 8 && n2 >= 6 && n3 >= 2 * 6 && n4 >= 2 * 6);
}

int main(void)
{
    RUN(cantilever_closed_form);
    RUN(pendulum_vs_energies);
    RUN(central_differences);
    return test_summary("flex_sens");
}
