/* The structured term (src/model/terms/ffr.c): the flexible double pendulum of source 001 Sec. 4.2 built
 * from two floating-frame beam bodies (src/mech/beam.c invariants, closed-form rows and Jacobian)
 * against the same model written at the equation level (examples/flexible_pendulum_np5.yaml: the
 * kinetic energy from the invariants as text, differentiated by the expression engine), and the
 * published Table 3 at n_p = 50 with every exact method. Also: the closed-form Jacobian against
 * central differences of the compiled residual at a point with nonzero velocities and
 * accelerations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/model.h"
#include "mech/beam.h"
#include "model/ffr.h"
#include "model/model_internal.h"
#include "model/model.h"
#include "load/load.h"
#include "test.h"
#include "ffr_pendulum_text.h"

static const double PI = 3.14159265358979323846;

static char *xstrdup(const char *s)
{
    char *d = mbl_malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

static mbl_model *ffr_pendulum(int np, double alpha, double beta)
{
    char *text = pendulum_text(np);
    CHECK(text != NULL);
    if (!text) return NULL;
    mbl_src *src = NULL;
    mbl_status st;
    int rc = load_src_read(text, strlen(text), "ffr-pendulum", &src, &st);
    free(text);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) return NULL;
    double r = 0.15;
    mbl_beam_section s = {1e8, 0, 1500, PI * r * r, 0, PI * r * r * r * r / 4, 0};
    src->ffr = mbl_calloc(2, sizeof *src->ffr);
    src->nffr = 2;
    for (int k = 0; k < 2; k++) {
        mbl_ffr_body *b = &src->ffr[k];
        CHECK(mech_beam2_invariants(&s, 4.0, np, &b->inv, &st) == 0);
        /* source 001's model and the equation-level text have no geometric stiffness */
        mbla_csc_free(b->inv.H1), mbla_csc_free(b->inv.Hx);
        b->inv.H1 = b->inv.Hx = NULL;
        char nm[64];
        snprintf(nm, sizeof nm, "body 'link%d'", k + 1);
        b->name = xstrdup(nm);
        b->g[1] = -9.81;
        b->alpha = alpha, b->beta = beta;
        const char *fmt[3] = {"x%d", "y%d", "th%d"};
        for (int c = 0; c < 3; c++) snprintf(nm, sizeof nm, fmt[c], k + 1), b->coord[c] = xstrdup(nm);
        b->qf = mbl_calloc((size_t)b->inv.nf, sizeof *b->qf);
        for (int i = 0; i <= np; i++) {
            const char *f3[3] = {"qfx%d_%d", "qfy%d_%d", "qft%d_%d"};
            for (int c = 0; c < 3; c++) snprintf(nm, sizeof nm, f3[c], k + 1, i + 1), b->qf[3 * i + c] = xstrdup(nm);
        }
    }
    mbl_model *md = NULL;
    rc = model_from_src(src, NULL, 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    return md;
}

typedef struct run {
    mbl_point *pt;
    mbl_linear *lin;
    mbl_modes *modes;
} run;

static int run_method(const mbl_model *md, const char *method, run *r, mbl_status *st)
{
    memset(r, 0, sizeof *r);
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = method;
    lo.pen_alpha = 1e7;
    int rc = mbl_operating_point(md, NULL, &r->pt, st);
    if (!rc) rc = mbl_linearize(md, r->pt, &lo, &r->lin, st);
    if (!rc) rc = mbl_modal(r->lin, NULL, &r->modes, st);
    return rc;
}

static void run_free(run *r)
{
    mbl_modes_free(r->modes);
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
}

/* the k lowest distinct positive angular frequencies (imaginary parts of non-spurious modes) */
static int low_omegas(const mbl_modes *m, int k, double *w)
{
    int n = 0;
    for (int i = 0; i < m->nx && n < k; i++) {
        const mbl_mode *md = &m->modes[i];
        if (md->spurious || md->im <= 0) continue;
        w[n++] = md->im;
    }
    return n;
}

TEST(against_equation_level)
{
    mbl_status st;
    mbl_model *txt = NULL, *ffr = ffr_pendulum(5, 0, 0);
    int rc = mbl_model_load_file("examples/flexible_pendulum_np5.yaml", NULL, 0, &txt, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc || !ffr) return;
    run a, b;
    CHECK_MSG(run_method(txt, "augmented", &a, &st) == 0, "%s", st.msg);
    CHECK_MSG(run_method(ffr, "augmented", &b, &st) == 0, "%s", st.msg);
    /* the equilibrium, coordinate by coordinate (same names, same order) */
    CHECK_EQ_INT(ffr->n, txt->n);
    for (int i = 0; i < txt->n; i++) {
        CHECK(strcmp(ffr->qname[i], txt->qname[i]) == 0);
        CHECK_MSG(fabs(a.pt->q[i] - b.pt->q[i]) < 1e-12 * (1 + fabs(a.pt->q[i])), "%s: %.17g vs %.17g", txt->qname[i],
                  a.pt->q[i], b.pt->q[i]);
    }
    double wa[32], wb[32];
    int na = low_omegas(a.modes, 32, wa), nb = low_omegas(b.modes, 32, wb);
    CHECK_EQ_INT(na, nb);
    CHECK_EQ_INT(na, 32);
    for (int i = 0; i < na && i < nb; i++) CHECK_MSG(fabs(wa[i] - wb[i]) <= 1e-9 * wa[i], "mode %d: %.15g vs %.15g", i, wa[i], wb[i]);
    printf("  n_p = 5: %.10f %.10f %.10f %.10f (text) / %.10f %.10f %.10f %.10f (structured)\n", wa[0], wa[1], wa[2],
           wa[3], wb[0], wb[1], wb[2], wb[3]);
    run_free(&a), run_free(&b);
    mbl_model_free(txt), mbl_model_free(ffr);
}

/* The compiled Jacobian (closed form) against central differences of the compiled residual at a
 * general point: every coordinate, velocity and acceleration nonzero. */
TEST(jacobian_by_differences)
{
    mbl_model *md = ffr_pendulum(3, 0.05, 2e-4);
    if (!md) return;
    int nunk = md->nunk;
    double *syms = calloc((size_t)md->nsym + 1, sizeof *syms), *F = calloc((size_t)md->nF, sizeof *F);
    double *F2 = calloc((size_t)md->nF, sizeof *F2), *jac = calloc((size_t)md->jac.nz + 1, sizeof *jac);
    double *work = calloc(md->work_size + 1, sizeof *work);
    double *q = calloc((size_t)md->n, sizeof *q), *v = calloc((size_t)md->n, sizeof *v), *a = calloc((size_t)md->n, sizeof *a);
    double *lam = calloc((size_t)md->m + 1, sizeof *lam);
    for (int i = 0; i < md->n; i++) q[i] = 0.1 * sin(1.3 * i + 0.2), v[i] = 0.3 * cos(0.7 * i), a[i] = 0.2 * sin(2.1 * i + 1);
    for (int j = 0; j < md->m; j++) lam[j] = 0.1 * (j + 1);
    mbl_status st;
    model_fill_syms(md, 0, q, v, a, lam, NULL, NULL, syms);
    CHECK(mblx_tape_eval(md->tape_jac, syms, jac, work, &st) == 0);
    double maxerr = 0, maxref = 0;
    int ja = model_blk0(md, MBL_BLK_A);
    for (int c = 0; c < nunk; c++) {
        int s = md->sym_of_unknown[c];
        double x0 = syms[s], h = 1e-6 * (1 + fabs(x0));
        syms[s] = x0 + h;
        mblx_tape_eval(md->tape_F, syms, F, work, &st);
        syms[s] = x0 - h;
        mblx_tape_eval(md->tape_F, syms, F2, work, &st);
        syms[s] = x0;
        for (int r = 0; r < md->n; r++) {
            double fd = (F[r] - F2[r]) / (2 * h), an = 0;
            for (int p = 0; p < md->jac.nz; p++)
                if (md->jac.row[p] == r && md->jac.col[p] == c) an += jac[p];
            maxerr = fmax(maxerr, fabs(fd - an));
            maxref = fmax(maxref, fabs(an));
            if (fabs(fd - an) > 1e-7 * maxref + 1e-5 * fabs(an))
                fprintf(stderr, "  row %s col %d (a at %d): closed form %.10g, differences %.10g\n", md->qname[r], c, ja,
                        an, fd);
        }
    }
    printf("  jacobian vs central differences: max abs error %.3g (max entry %.3g)\n", maxerr, maxref);
    CHECK(maxerr <= 1e-6 * maxref);
    free(syms), free(F), free(F2), free(jac), free(work), free(q), free(v), free(a), free(lam);
    mbl_model_free(md);
}

TEST(table3_np50)
{
    static const double table3[4] = {1.3357, 3.5244, 9.4175, 22.4054};
    mbl_model *md = ffr_pendulum(50, 0, 0);
    if (!md) return;
    const char *methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor"};
    double ref[4] = {0};
    for (int k = 0; k < 5; k++) {
        run r;
        mbl_status st;
        int rc = run_method(md, methods[k], &r, &st);
        CHECK_MSG(rc == 0, "%s: %s", methods[k], st.msg);
        if (!rc) {
            double w[4];
            CHECK_EQ_INT(low_omegas(r.modes, 4, w), 4);
            for (int i = 0; i < 4; i++) {
                CHECK_MSG(fabs(w[i] - table3[i]) <= 0.5e-4, "%s: s%d = %.6f, Table 3 %.4f", methods[k], i + 1, w[i],
                          table3[i]);
                if (k == 0) ref[i] = w[i];
                else CHECK_MSG(fabs(w[i] - ref[i]) <= 1e-9 * ref[i], "%s: s%d = %.15g vs augmented %.15g", methods[k],
                               i + 1, w[i], ref[i]);
            }
            printf("  %-10s %.10f %.10f %.10f %.10f\n", methods[k], w[0], w[1], w[2], w[3]);
        }
        run_free(&r);
    }
    mbl_model_free(md);
}

/* The sparse path at fine meshes (regression, issue 11: at n_p = 10^4 per link omega_4 was 4.5e-5
 * off and 8 of 20 pairs flagged unconverged; the lowest eigenvalues were biased upward by the
 * planar element's rigid rotation energy, a relative error growing as n_p^2: omega_3 +7e-9 at
 * n_p = 4000). The four lowest at n_p = 4000 against n_p = 1000 (the converged reference: the
 * mesh error converges from above, as h^2 through the linear axial elements, 1.1e-9 relative on
 * omega_3 between the two): equal to 3e-9 and not above, and no unconverged pair. */
TEST(fine_mesh_sparse)
{
    double w[2][4] = {{0}};
    const int nps[2] = {1000, 4000};
    for (int t = 0; t < 2; t++) {
        mbl_model *md = ffr_pendulum(nps[t], 0, 0);
        if (!md) return;
        mbl_status st;
        mbl_point *pt = NULL;
        mbl_linear *lin = NULL;
        mbl_modes *modes = NULL;
        mbl_lin_options lo;
        mbl_lin_options_default(&lo);
        lo.nev = 8;
        lo.partial = MBL_PARTIAL_ALWAYS;
        int rc = mbl_operating_point(md, NULL, &pt, &st);
        if (!rc) rc = mbl_linearize(md, pt, &lo, &lin, &st);
        if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
        CHECK_MSG(rc == 0, "n_p = %d: %s", nps[t], st.msg);
        if (!rc) {
            CHECK_EQ_INT(low_omegas(modes, 4, w[t]), 4);
            CHECK_MSG(strstr(lin->notes, "WARNING") == NULL, "n_p = %d: %s", nps[t], lin->notes);
            printf("  n_p = %d (sparse): %.12f %.12f %.12f %.12f\n", nps[t], w[t][0], w[t][1], w[t][2], w[t][3]);
        }
        mbl_modes_free(modes);
        mbl_linear_free(lin);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    for (int i = 0; i < 4; i++)
        CHECK_MSG(fabs(w[1][i] - w[0][i]) <= 3e-9 * w[0][i] && w[1][i] <= w[0][i] * (1 + 1e-10),
                  "omega_%d: n_p = 4000 %.15g, n_p = 1000 %.15g (%.3g relative)", i + 1, w[1][i], w[0][i],
                  (w[1][i] - w[0][i]) / w[0][i]);
}

int main(void)
{
    RUN(against_equation_level);
    RUN(jacobian_by_differences);
    RUN(table3_np50);
    RUN(fine_mesh_sparse);
    return test_summary("ffr");
}
