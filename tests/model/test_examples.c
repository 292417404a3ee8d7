/* Every equation-level example against its source's printed numbers and against an independent
 * route (closed form, or a minimal-coordinate model of the same system computed here). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

typedef struct run {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
} run;

static int run_model(const char *path, const mbl_setting *sets, int nsets, run *r)
{
    memset(r, 0, sizeof *r);
    mbl_status st;
    int rc = mbl_model_load_file(path, sets, nsets, &r->md, &st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, &st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, &st);
    if (rc) fprintf(stderr, "%s: %s\n", path, st.msg);
    return rc;
}

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
}

/* the eigenvalue with positive imaginary part (or largest real part) of mode pair index k */
static const mbl_mode *nonzero_mode(const mbl_modes *m, int k)
{
    int seen = 0;
    for (int i = 0; i < m->nx; i++) {
        if (m->modes[i].kind == MBL_MODE_ZERO) continue;
        if (m->modes[i].im < 0) continue;
        if (seen++ == k) return &m->modes[i];
    }
    return NULL;
}

static double round_to(double x, int digits)
{
    double s = pow(10.0, digits);
    return round(x * s) / s;
}

/* ---- source 003 slider-pendulum (Tables 3.5, 3.7) ---- */
TEST(slider_pendulum)
{
    run r;
    CHECK(run_model("examples/slider_pendulum.yaml", NULL, 0, &r) == 0);
    if (!r.modes) return;
    /* M and K of Table 3.5 (closed form, 12 decimals printed) */
    CHECK_CLOSE(r.lin->M[0], 30.0, 1e-12);
    CHECK_CLOSE(r.lin->M[1], 20.0, 1e-12);
    CHECK_CLOSE(r.lin->M[3], 35.0, 1e-12);
    CHECK_CLOSE(r.lin->K[0], 20.0, 1e-12);
    CHECK_CLOSE(r.lin->K[3], 196.2, 1e-12);
    CHECK(fabs(r.lin->K[1]) < 1e-12 && fabs(r.lin->K[2]) < 1e-12);
    /* omega^2 roots of det(K - w2 M) = 0, closed form: 650 w2^2 - (20*35 + 196.2*30) w2 + 20*196.2 = 0 */
    double a = 30.0 * 35.0 - 400.0, b = -(20.0 * 35.0 + 196.2 * 30.0), c = 20.0 * 196.2;
    double w1 = (-b - sqrt(b * b - 4 * a * c)) / (2 * a), w2 = (-b + sqrt(b * b - 4 * a * c)) / (2 * a);
    const mbl_mode *m1 = nonzero_mode(r.modes, 0), *m2 = nonzero_mode(r.modes, 1);
    CHECK(m1 && m2);
    if (!m1 || !m2) return;
    CHECK_REL(m1->im * m1->im, w1, 1e-12);
    CHECK_REL(m2->im * m2->im, w2, 1e-12);
    /* Table 3.5 prints omega^2 (errata), Table 3.7 the eigenvalues */
    CHECK(round_to(m1->im * m1->im, 8) == 0.63569205);
    CHECK(round_to(m2->im * m2->im, 8) == 9.49661564);
    CHECK(round_to(m1->im, 6) == 0.797303);
    CHECK(round_to(m2->im, 6) == 3.081658);
    CHECK(fabs(m1->re) < 1e-12 && fabs(m2->re) < 1e-12);
    run_free(&r);

    /* c = 20 (Table 3.7, with the sign erratum): -0.226284 +- 3.023550i, -0.312177 +- 0.747815i */
    mbl_setting set = {"c", 20.0};
    CHECK(run_model("examples/slider_pendulum.yaml", &set, 1, &r) == 0);
    if (!r.modes) return;
    m1 = nonzero_mode(r.modes, 0);
    m2 = nonzero_mode(r.modes, 1);
    CHECK(round_to(m1->re, 6) == -0.312177 && round_to(m1->im, 6) == 0.747815);
    CHECK(round_to(m2->re, 6) == -0.226284 && round_to(m2->im, 6) == 3.023550);
    CHECK_CLOSE(r.lin->Cd[0], 20.0, 1e-12);
    /* independent: characteristic polynomial det(M s^2 + C s + K) at the computed eigenvalue */
    double sr = m2->re, si = m2->im;
    /* det = (30 s^2 + 20 s + 20)(35 s^2 + 196.2) - (20 s^2)^2, complex arithmetic */
    double s2r = sr * sr - si * si, s2i = 2 * sr * si;
    double ar = 30 * s2r + 20 * sr + 20, ai = 30 * s2i + 20 * si;
    double br = 35 * s2r + 196.2, bi = 35 * s2i;
    double s4r = s2r * s2r - s2i * s2i, s4i = 2 * s2r * s2i;
    double detr = ar * br - ai * bi - 400 * s4r, deti = ar * bi + ai * br - 400 * s4i;
    CHECK(hypot(detr, deti) < 1e-9 * 400 * hypot(s4r, s4i));
    run_free(&r);
}

/* ---- source 002 Example 1: M and K closed forms at several parameter sets ---- */
TEST(double_pendulum_natural)
{
    const double sets_v[3][4] = {{2, 1.5, 1.2, 0.8}, {1, 1, 1, 1}, {3.7, 0.4, 0.5, 2.25}};
    for (int s = 0; s < 3; s++) {
        double m1 = sets_v[s][0], m2 = sets_v[s][1], L1 = sets_v[s][2], L2 = sets_v[s][3], g = 9.81;
        mbl_setting sets[4] = {{"m1", m1}, {"m2", m2}, {"L1", L1}, {"L2", L2}};
        run r;
        CHECK(run_model("examples/double_pendulum_natural.yaml", sets, 4, &r) == 0);
        if (!r.modes) continue;
        CHECK(!strcmp(r.lin->state_names[0], "x2") && !strcmp(r.lin->state_names[1], "x3"));
        double M[4] = {(m1 + m2) / 3, m2 / 6, m2 / 6, m2 / 3};
        double K[4] = {g * (m1 * L2 + m2 * (2 * L2 + L1)) / (2 * L1 * L2), -m2 * g / (2 * L2), -m2 * g / (2 * L2),
                       m2 * g / (2 * L2)};
        for (int i = 0; i < 4; i++) {
            CHECK_CLOSE(r.lin->M[i], M[i], 1e-12);
            CHECK_CLOSE(r.lin->K[i], K[i], 1e-11);
        }
        run_free(&r);
    }
}

/* ---- source 002 Example 2 (with the erratum): M = diag(m1, m2), K closed form ---- */
TEST(spring_pendulum)
{
    const double sets_v[3][4] = {{5, 2, 40, 0.75}, {1, 1, 1, 1}, {12, 0.3, 500, 2.5}};
    for (int s = 0; s < 3; s++) {
        double m1 = sets_v[s][0], m2 = sets_v[s][1], k = sets_v[s][2], L = sets_v[s][3], g = 9.81;
        mbl_setting sets[4] = {{"m1", m1}, {"m2", m2}, {"k", k}, {"L", L}};
        run r;
        CHECK(run_model("examples/spring_pendulum.yaml", sets, 4, &r) == 0);
        if (!r.modes) continue;
        double M[4] = {m1, 0, 0, m2};
        double K[4] = {k + m2 * g / L, -m2 * g / L, -m2 * g / L, m2 * g / L};
        for (int i = 0; i < 4; i++) {
            CHECK_CLOSE(r.lin->M[i], M[i], 1e-12);
            CHECK_CLOSE(r.lin->K[i], K[i], 1e-11);
        }
        run_free(&r);
    }
}

/* ---- source 003 Sec. 5.3 rotating pendulum: given point and steady motion ---- */
static double rotating_closed_form(double th, double phid, double g, double l)
{
    /* Eq. 5.28: lambda^2 = -(K11/(m l^2) + 4 cos^2 phid^2), K11/(m l^2) = phid^2 (s^2 - c^2) + g c / l */
    double s = sin(th), c = cos(th);
    return sqrt(phid * phid * (s * s - c * c) + g * c / l + 4 * c * c * phid * phid);
}

TEST(rotating_pendulum)
{
    const char *files[2] = {"examples/rotating_pendulum_given.yaml", "examples/rotating_pendulum_steady.yaml"};
    for (int f = 0; f < 2; f++) {
        run r;
        CHECK(run_model(files[f], NULL, 0, &r) == 0);
        if (!r.modes) continue;
        int zeros = 0;
        for (int i = 0; i < r.modes->nx; i++) zeros += r.modes->modes[i].kind == MBL_MODE_ZERO;
        CHECK_EQ_INT(zeros, 2);
        const mbl_mode *m = nonzero_mode(r.modes, 0);
        CHECK(m != NULL);
        if (!m) continue;
        CHECK(round_to(m->im, 5) == 8.58076); /* Table 5.1 */
        CHECK(fabs(m->re) < 1e-9);
        double th = r.pt->q[0], phid = r.pt->v[1];
        CHECK_REL(m->im, rotating_closed_form(th, phid, 9.81, 0.5), 1e-10);
        if (f == 1) {
            /* steady: l phid^2 cos(theta) = g */
            CHECK_REL(cos(th), 9.81 / (0.5 * phid * phid), 1e-12);
            CHECK(fabs(r.pt->vdot[0]) < 1e-10 && fabs(r.pt->vdot[1]) < 1e-10);
        }
        run_free(&r);
    }
}

/* ---- source 001 N-loop four-bar (Tables 1, 2) and its minimal-coordinate twin ----
 * All rockers stay parallel at angle phi: I = (N+1) m l^2/3 + N m l^2,
 * V(phi) = (3N+1)/2 m g l sin(phi) + N k/2 (sqrt(2 + 2 cos phi) l - sqrt(2) l)^2,
 * D = N c/2 (dL/dphi)^2 phid^2 with L = l sqrt(2 + 2 cos phi). */
static void fourbar_minimal(int N, double c, double *phi_eq, double *re, double *im)
{
    double m = 1, l = 1, k = 25, g = 9.81, I = (N + 1) * m * l * l / 3 + N * m * l * l;
    double phi = 2.0;
    for (int it = 0; it < 100; it++) { /* Newton on V'(phi) = 0 with analytic derivatives */
        double L = l * sqrt(2 + 2 * cos(phi)), Lp = -l * sin(phi) / sqrt(2 + 2 * cos(phi));
        double Lpp = -l * (cos(phi) * (2 + 2 * cos(phi)) + sin(phi) * sin(phi)) / pow(2 + 2 * cos(phi), 1.5);
        double Vp = (3.0 * N + 1) / 2 * m * g * l * cos(phi) + N * k * (L - sqrt(2) * l) * Lp;
        double Vpp = -(3.0 * N + 1) / 2 * m * g * l * sin(phi) + N * k * (Lp * Lp + (L - sqrt(2) * l) * Lpp);
        double d = Vp / Vpp;
        phi -= d;
        if (fabs(d) < 1e-15) {
            double ceff = N * c * Lp * Lp;
            double disc = ceff * ceff - 4 * I * Vpp;
            *re = -ceff / (2 * I);
            *im = sqrt(-disc) / (2 * I);
            break;
        }
    }
    *phi_eq = phi;
}

TEST(fourbar_tables)
{
    const int Ns[5] = {1, 5, 10, 15, 20};
    const double d_tab[5] = {2.2343, 1.8922, 1.8454, 1.8296 /* erratum: printed 1.8230 */, 1.8217};
    const double s1_tab[5] = {2.1477, 1.5455, 1.4352, 1.3955, 1.3750};
    const double re_tab[5] = {-0.2424, -0.2350, -0.2325, -0.2316, -0.2312};
    const double im_tab[5] = {2.1340, 1.5276, 1.4162, 1.3761, 1.3554};
    for (int t = 0; t < 5; t++) {
        for (int damped = 0; damped < 2; damped++) {
            char path[256];
            snprintf(path, sizeof path, "examples/fourbar_N%d%s.yaml", Ns[t], damped ? "_damped" : "");
            run r;
            CHECK(run_model(path, NULL, 0, &r) == 0);
            if (!r.modes) continue;
            CHECK_EQ_INT(r.lin->nx, 2);
            const mbl_mode *m = nonzero_mode(r.modes, 0);
            CHECK(m != NULL);
            if (!m) continue;
            double phi = r.pt->q[r.pt->n - 1];
            double phi_min = 0, re_min = 0, im_min = 0;
            fourbar_minimal(Ns[t], damped ? 1.0 : 0.0, &phi_min, &re_min, &im_min);
            CHECK_REL(phi, phi_min, 1e-12);
            CHECK_REL(m->im, im_min, 1e-9);
            CHECK_CLOSE(m->re, re_min, 1e-9);
            CHECK_MSG(round_to(phi, 4) == d_tab[t], "N=%d phi %.6f", Ns[t], phi);
            if (!damped) {
                CHECK_MSG(round_to(m->im, 4) == s1_tab[t], "N=%d s1 %.6f", Ns[t], m->im);
                CHECK(fabs(m->re) < 1e-10);
            } else {
                CHECK_MSG(round_to(m->re, 4) == re_tab[t] && round_to(m->im, 4) == im_tab[t], "N=%d %.6f %.6f",
                          Ns[t], m->re, m->im);
            }
            run_free(&r);
        }
    }
}

/* ---- a larger four-bar: the sparse paths (KLU Newton steps with a kept analysis, the SPQR
 * null-space state selection) against the same minimal-coordinate closed form ---- */
TEST(fourbar_large_sparse_paths)
{
    run r;
    CHECK(run_model("examples/fourbar_N300.yaml", NULL, 0, &r) == 0);
    if (!r.modes) return;
    CHECK_EQ_INT(r.pt->n, 603);
    CHECK_EQ_INT(r.lin->nx, 2);
    CHECK(!strcmp(r.lin->state_names[0], "phi"));
    double phi_min = 0, re_min = 0, im_min = 0;
    fourbar_minimal(300, 0.0, &phi_min, &re_min, &im_min);
    CHECK_REL(r.pt->q[r.pt->n - 1], phi_min, 1e-12);
    const mbl_mode *m = nonzero_mode(r.modes, 0);
    CHECK(m && fabs(m->im - im_min) <= 1e-9 * im_min);
    run_free(&r);
}

/* ---- the singular four-bar (source 001 Sec. 5.1): a clear refusal ---- */
TEST(fourbar_singular)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_status st;
    CHECK(mbl_model_load_file("examples/fourbar_singular.yaml", NULL, 0, &md, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    if (!pt) return;
    CHECK(fabs(pt->q[pt->n - 1]) < 1e-12); /* phi = 0 */
    CHECK_EQ_INT(pt->rank_phi_q, 3);      /* rank loss reported */
    CHECK(pt->min_norm_multipliers);
    int rc = mbl_linearize(md, pt, NULL, &lin, &st);
    CHECK_EQ_INT(rc, MBL_ESINGULAR);
    CHECK(strstr(st.msg, "singular configuration") != NULL);
    CHECK(strchr(st.msg, '\n') == NULL);
    CHECK(lin == NULL);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(slider_pendulum);
    RUN(double_pendulum_natural);
    RUN(spring_pendulum);
    RUN(rotating_pendulum);
    RUN(fourbar_tables);
    RUN(fourbar_large_sparse_paths);
    RUN(fourbar_singular);
    return test_summary("examples");
}
