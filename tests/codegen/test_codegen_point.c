/* mblin codegen --newton and points with motion (src/codegen, docs/symbolic.md): the generated C
 * (compiled here with cc), Python (NumPy) and Octave (when octave is installed) run the Newton
 * iteration for the operating point from a perturbed guess, at parameter values other than the
 * file's, and evaluate the linear model there; the point and A, B, C, D, M-hat, C-hat, K-hat, F
 * agree with the library (the model loaded with the same --set values: its own Newton iteration,
 * then the augmented linearization) to 1e-12. At points with motion (the rotating pendulum of
 * source 003 Sec. 5.3, given and steady) the same comparison, and C-hat, K-hat against the closed
 * form of the rotating pendulum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mblin/codegen.h"
#include "mblin/mblin.h"
#include "test.h"

static char tmpdir_[128];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *python3(void)
{
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0) return "python3";
    if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0) return "/usr/bin/python3";
    return NULL;
}

static int have_octave(void)
{
    return system("octave --version >/dev/null 2>&1") == 0;
}

static void put_array(FILE *f, const char *lang, const char *name, const double *v, int n)
{
    if (!strcmp(lang, "c")) {
        fprintf(f, "static double %s[%d] = {", name, n > 0 ? n : 1);
        if (!n) fputs("0.0", f);
    } else {
        fprintf(f, "%s = [", name);
    }
    for (int i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? ", " : "", v[i]);
    fputs(!strcmp(lang, "c") ? "};\n" : strcmp(lang, "octave") ? "]\n" : "];\n", f);
}

/* Results of a generated program: iterations, q (n), lam (m), then the 8 matrices */
typedef struct result {
    int its;
    double *q, *lam, *mats[8];
} result;

static int read_result(const char *file, result *r, int n, int m, const int *sizes, int newton)
{
    FILE *f = fopen(file, "r");
    if (!f) return -1;
    int rc = 0;
    if (newton) {
        double its = 0;
        rc |= fscanf(f, "%lf", &its) != 1;
        r->its = (int)its;
        for (int i = 0; i < n; i++) rc |= fscanf(f, "%lf", &r->q[i]) != 1;
        for (int j = 0; j < m; j++) rc |= fscanf(f, "%lf", &r->lam[j]) != 1;
    }
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < sizes[k]; i++) rc |= fscanf(f, "%lf", &r->mats[k][i]) != 1;
    fclose(f);
    return rc ? -1 : 0;
}

static double rel_dev(const double *a, const double *b, int n)
{
    double scale = 0.0, dev = 0.0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (int i = 0; i < n; i++) dev = fmax(dev, fabs(a[i] - b[i]));
    return n ? dev / fmax(scale, 1e-300) : 0.0;
}

/* Write, build and run the generated code of sl in lang with the values p, q (the guess with
 * newton), v, r; the results into res. 0 on success; -2 when the language is not available. */
static int run_generated(const mbl_symlin *sl, const char *lang, int newton, const double *p, const double *q,
                         const double *v, const double *r, const int *sizes, result *res, double *seconds)
{
    char file[600], cmd[3000];
    mbl_status st = {0};
    int n = sl->n, m = sl->m, mv = sl->moving;
    double t0 = now();
    if (!strcmp(lang, "c")) {
        snprintf(file, sizeof file, "%s/gen.c", tmpdir_);
        FILE *f = fopen(file, "w");
        if (!f || mbl_codegen(sl, MBL_LANG_C, "gen", "test", f, &st)) {
            printf("codegen: %s\n", st.msg);
            if (f) fclose(f);
            return -1;
        }
        fclose(f);
        snprintf(file, sizeof file, "%s/driver.c", tmpdir_);
        f = fopen(file, "w");
        fputs("#include <stdio.h>\n", f);
        fprintf(f, "void gen(const double *p, const double *q, %sconst double *r, double *A, double *B, double *C,\n"
                   "         double *D, double *M, double *Cd, double *K, double *F);\n", mv ? "const double *v, " : "");
        if (newton)
            fprintf(f, "int gen_newton(const double *p, const double *r, %sdouble *q, double *lam);\n",
                    mv ? "const double *v, " : "");
        put_array(f, "c", "P", p, sl->np);
        put_array(f, "c", "Q", q, n);
        put_array(f, "c", "V", v, n);
        put_array(f, "c", "R", r, sl->nr);
        fprintf(f, "static double LAM[%d];\n", m + 1);
        fputs("static double A[40000], B[40000], C[40000], D[40000], M[10000], Cd[10000], K[10000], F[10000];\n"
              "int main(void)\n{\n    (void)V; (void)LAM;\n",
              f);
        if (newton) {
            fprintf(f, "    int its = gen_newton(P, R, %sQ, LAM);\n    printf(\"%%d\\n\", its);\n", mv ? "V, " : "");
            fprintf(f, "    for (int i = 0; i < %d; i++) printf(\"%%.17g\\n\", Q[i]);\n", n);
            fprintf(f, "    for (int i = 0; i < %d; i++) printf(\"%%.17g\\n\", LAM[i]);\n", m);
        }
        fprintf(f, "    gen(P, Q, %sR, A, B, C, D, M, Cd, K, F);\n", mv ? "V, " : "");
        fputs("    double *mats[] = {A, B, C, D, M, Cd, K, F};\n", f);
        fprintf(f, "    int sizes[] = {%d, %d, %d, %d, %d, %d, %d, %d};\n", sizes[0], sizes[1], sizes[2], sizes[3],
                sizes[4], sizes[5], sizes[6], sizes[7]);
        fputs("    for (int k = 0; k < 8; k++)\n        for (int i = 0; i < sizes[k]; i++) printf(\"%.17g\\n\", "
              "mats[k][i]);\n    return 0;\n}\n",
              f);
        fclose(f);
        snprintf(cmd, sizeof cmd,
                 "cc -std=c11 -O0 -Wall -Werror -o %s/gen %s/gen.c %s/driver.c -lm && %s/gen > %s/out.txt", tmpdir_,
                 tmpdir_, tmpdir_, tmpdir_, tmpdir_);
    } else if (!strcmp(lang, "python")) {
        const char *py = python3();
        if (!py) return -2;
        snprintf(file, sizeof file, "%s/gen_py.py", tmpdir_);
        FILE *f = fopen(file, "w");
        if (!f || mbl_codegen(sl, MBL_LANG_PYTHON, "gen", "test", f, &st)) {
            printf("codegen: %s\n", st.msg);
            if (f) fclose(f);
            return -1;
        }
        fclose(f);
        snprintf(file, sizeof file, "%s/driver.py", tmpdir_);
        f = fopen(file, "w");
        fprintf(f, "import sys\nsys.path.insert(0, '%s')\nimport gen_py\n", tmpdir_);
        put_array(f, "python", "P", p, sl->np);
        put_array(f, "python", "Q", q, n);
        put_array(f, "python", "V", v, n);
        put_array(f, "python", "R", r, sl->nr);
        if (newton) {
            fprintf(f, "Q, LAM, its = gen_py.gen_newton(P, R, Q%s)\nprint(its)\n", mv ? ", V" : "");
            fputs("for x in list(Q) + list(LAM):\n    print(repr(float(x)))\n", f);
        }
        fprintf(f, "res = gen_py.gen(P, Q, R%s)\n", mv ? ", V" : "");
        fputs("for k in ['A', 'B', 'C', 'D', 'M', 'Cd', 'K', 'F']:\n"
              "    for x in res[k].flatten(order='F'):\n        print(repr(float(x)))\n",
              f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "PYTHONDONTWRITEBYTECODE=1 %s %s/driver.py > %s/out.txt", py, tmpdir_, tmpdir_);
    } else {
        if (!have_octave()) return -2;
        snprintf(file, sizeof file, "%s/gen.m", tmpdir_);
        FILE *f = fopen(file, "w");
        if (!f || mbl_codegen(sl, MBL_LANG_OCTAVE, "gen", "test", f, &st)) {
            printf("codegen: %s\n", st.msg);
            if (f) fclose(f);
            return -1;
        }
        fclose(f);
        snprintf(file, sizeof file, "%s/driver.m", tmpdir_);
        f = fopen(file, "w");
        fprintf(f, "addpath('%s');\n", tmpdir_);
        put_array(f, "octave", "P", p, sl->np);
        put_array(f, "octave", "Q", q, n);
        put_array(f, "octave", "V", v, n);
        put_array(f, "octave", "R", r, sl->nr);
        if (newton) {
            fprintf(f, "[A, B, C, D, M, Cd, K, F, Q, LAM, its] = gen(P, Q, R%s);\n", mv ? ", V" : "");
            fputs("printf('%d\\n', its);\nprintf('%.17g\\n', Q);\nprintf('%.17g\\n', LAM);\n", f);
        } else {
            fprintf(f, "[A, B, C, D, M, Cd, K, F] = gen(P, Q, R%s);\n", mv ? ", V" : "");
        }
        fputs("printf('%.17g\\n', A(:), B(:), C(:), D(:), M(:), Cd(:), K(:), F(:));\n", f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "cd %s && octave --no-gui --no-window-system --quiet --norc driver.m > out.txt",
                 tmpdir_);
    }
    int rc = system(cmd);
    if (rc) {
        printf("%s: generated code failed (%s)\n", lang, cmd);
        return -1;
    }
    snprintf(file, sizeof file, "%s/out.txt", tmpdir_);
    rc = read_result(file, res, n, m, sizes, newton);
    *seconds = now() - t0;
    return rc;
}

/* The model at its file's values (the generated code's source) and with the settings (the
 * reference): the generated Newton iteration from the reference point perturbed, at the settings'
 * parameter values, then the linear model there, against the library. */
/* all: 1 runs C, Python and Octave, 0 only C (the slower interpreters on a representative subset) */
static void check_point(const char *path, const mbl_setting *sets, int nsets, int newton, double perturb, int all)
{
    mbl_status st = {0};
    mbl_model *md = NULL, *mref = NULL;
    mbl_point *pt = NULL, *pref = NULL;
    mbl_linear *lin = NULL;
    mbl_symlin *sl = NULL;
    CHECK(mbl_model_load_file(path, NULL, 0, &md, &st) == 0);
    CHECK(mbl_model_load_file(path, sets, nsets, &mref, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    CHECK(mbl_operating_point(mref, NULL, &pref, &st) == 0);
    CHECK(mbl_linearize(mref, pref, NULL, &lin, &st) == 0);
    int rc = mbl_symlin_new(md, pt, 0, &sl, &st);
    if (!rc && newton) rc = mbl_symlin_newton(sl, &st);
    if (rc) printf("%s: %s\n", path, st.msg);
    CHECK(rc == 0);
    if (rc || !lin) goto out;
    int n = sl->n, m = sl->m, nx = lin->nx, nu = lin->nu, ny = lin->ny, z = lin->z1;
    CHECK(sl->nx == nx && sl->nr == nu && sl->ny == ny && sl->z == z);
    int sizes[8] = {nx * nx, nx * nu, ny * nx, ny * nu, z * z, z * z, z * z, z * nu};
    const double *ref[8] = {lin->A, lin->B, lin->C, lin->D, lin->M, lin->Cd, lin->K, lin->F};
    const char *names[8] = {"A", "B", "C", "D", "M", "Cd", "K", "F"};
    /* parameters: the file's values with the settings */
    double *p = malloc(sizeof(double) * (size_t)(sl->np + 1)), *q = malloc(sizeof(double) * (size_t)(n + 1));
    for (int i = 0; i < sl->np; i++) {
        p[i] = sl->pval[i];
        for (int s = 0; s < nsets; s++)
            if (!strcmp(sets[s].name, sl->pname[i])) p[i] = sets[s].value;
    }
    for (int i = 0; i < n; i++) q[i] = pref->q[i] + (newton ? perturb * (double)((i % 3) - 1) + 0.5 * perturb : 0.0);
    result res;
    res.q = malloc(sizeof(double) * (size_t)(n + 1)), res.lam = malloc(sizeof(double) * (size_t)(m + 1));
    for (int k = 0; k < 8; k++) res.mats[k] = malloc(sizeof(double) * (size_t)(sizes[k] + 1));
    const char *langs[3] = {"c", "python", "octave"};
    for (int l = 0; l < (all ? 3 : 1); l++) {
        double secs = 0.0;
        rc = run_generated(sl, langs[l], newton, p, q, pref->v, pref->r, sizes, &res, &secs);
        if (rc == -2) {
            printf("%s: %s not available: not run\n", path, langs[l]);
            continue;
        }
        CHECK(rc == 0);
        if (rc) continue;
        printf("%s: %s (%.2f s)", path, langs[l], secs);
        if (newton) {
            double dq = 0.0, dl = 0.0, ls = 1.0;
            /* the coordinates the iteration solves for; the others (cyclic) keep the guess */
            for (int i = 0; i < n; i++) {
                int solved = 0;
                for (int a = 0; a < sl->nn; a++) solved |= sl->nunk[a] == i;
                if (solved) dq = fmax(dq, fabs(res.q[i] - pref->q[i]) / fmax(1.0, fabs(pref->q[i])));
                else CHECK(res.q[i] == q[i]);
            }
            for (int j = 0; j < m; j++) ls = fmax(ls, fabs(pref->lambda[j]));
            for (int j = 0; j < m; j++) dl = fmax(dl, fabs(res.lam[j] - pref->lambda[j]) / ls);
            printf(" Newton %d iterations, point dev %.1e, multipliers %.1e;", res.its, dq, dl);
            CHECK(res.its > 1);
            CHECK(dq <= 1e-12);
            CHECK(dl <= 1e-12);
        }
        double worst = 0.0;
        for (int k = 0; k < 8; k++) {
            double d = rel_dev(res.mats[k], ref[k], sizes[k]);
            CHECK_MSG(d <= 1e-12, "%s %s %s: %.2e", path, langs[l], names[k], d);
            worst = fmax(worst, d);
        }
        printf(" matrices max rel dev %.1e\n", worst);
    }
    free(p), free(q), free(res.q), free(res.lam);
    for (int k = 0; k < 8; k++) free(res.mats[k]);
out:
    mbl_symlin_free(sl);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_point_free(pref);
    mbl_model_free(md);
    mbl_model_free(mref);
}

TEST(newton_equilibrium)
{
    mbl_setting dp[] = {{"m2", 2.5}, {"L1", 1.0}, {"g", 9.5}};
    check_point("examples/double_pendulum_natural.yaml", dp, 3, 1, 0.02, 1);
    mbl_setting sp[] = {{"k", 35.0}, {"m1", 1.7}};
    check_point("examples/spring_pendulum.yaml", sp, 2, 1, 0.02, 0);
    mbl_setting sl[] = {{"k", 30.0}, {"m3", 12.0}};
    check_point("examples/slider_pendulum.yaml", sl, 2, 1, 0.05, 0);
    mbl_setting fb[] = {{"gy", -9.0}, {"k", 30.0}};
    check_point("examples/fourbar_N1.yaml", fb, 2, 1, 0.01, 0);
    /* mechanism files: the states are joint measures s(q), not coordinates */
    mbl_setting ms[] = {{"k", 30.0}, {"m3", 12.0}};
    check_point("examples/mech/slider_pendulum.yaml", ms, 2, 1, 0.02, 1);
    mbl_setting mf[] = {{"g", 9.0}, {"k", 30.0}};
    check_point("examples/mech/fourbar_N1.yaml", mf, 2, 1, 0.01, 0);
}

TEST(newton_steady_motion)
{
    /* theta from l der(phi)^2 cos(theta) = g at other l and g; phi (cyclic) kept */
    mbl_setting rp[] = {{"l", 0.6}, {"g", 9.0}};
    check_point("examples/rotating_pendulum_steady.yaml", rp, 2, 1, 0.05, 1);
}

TEST(points_with_motion_match_library)
{
    check_point("examples/rotating_pendulum_given.yaml", NULL, 0, 0, 0.0, 0);
    mbl_setting rp[] = {{"m", 7.0}};
    check_point("examples/rotating_pendulum_given.yaml", rp, 1, 0, 0.0, 0);
    /* the rotors of examples/mech (joint measures as states, spinning: gyroscopic C-hat) */
    mbl_setting rr[] = {{"k", 2e5}, {"Omega", 80.0}};
    check_point("examples/mech/rigid_rotor.yaml", rr, 2, 0, 0.0, 1);
    check_point("examples/mech/rotor_stator.yaml", NULL, 0, 0, 0.0, 0);
    check_point("examples/mech/spherical_pendulum.yaml", NULL, 0, 0, 0.0, 0);
}

/* the rotating pendulum (T = m l^2 (theta'^2 + sin^2 theta phi'^2) / 2, V = -m g l cos theta) at
 * theta' = 0, phi' = Omega: M = diag(m l^2, m l^2 s^2), C-hat = 2 m l^2 s c Omega [0 -1; 1 0],
 * K-hat = [m g l c + m l^2 Omega^2 (s^2 - c^2), 0; 0, 0] (s, c of theta) */
TEST(rotating_pendulum_closed_form)
{
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    CHECK(mbl_model_load_file("examples/rotating_pendulum_given.yaml", NULL, 0, &md, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    CHECK(mbl_symlin_new(md, pt, 0, &sl, &st) == 0);
    if (!sl) goto out;
    CHECK(sl->moving == 1);
    mblx_graph *g = sl->g;
    double *sv = calloc(mblx_symbol_count(g) + 1, sizeof *sv);
    unsigned long long seed = 88172645463325252ULL;
    double worst = 0.0;
    for (int trial = 0; trial < 20; trial++) {
        double u[5];
        for (int k = 0; k < 5; k++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            u[k] = (double)(seed >> 11) / 9007199254740992.0;
        }
        double m = 1 + 20 * u[0], l = 0.2 + 2 * u[1], gr = 9.81, th = 0.1 + 1.3 * u[2], Om = 0.5 + 10 * u[3];
        double pv[3] = {m, l, gr};
        for (int i = 0; i < 3; i++) {
            int k = -1;
            for (int j = 0; j < sl->np; j++)
                if (!strcmp(sl->pname[j], i == 0 ? "m" : i == 1 ? "l" : "g")) k = j;
            CHECK(k >= 0);
            if (k >= 0) sv[mblx_symbol_index(g, sl->p[k])] = pv[i];
        }
        for (int i = 0; i < 2; i++) {
            int th_i = !strcmp(sl->qname[i], "theta");
            sv[mblx_symbol_index(g, sl->q[i])] = th_i ? th : 0.3;
            sv[mblx_symbol_index(g, sl->v[i])] = th_i ? 0.0 : Om;
        }
        int it = !strcmp(sl->qname[0], "theta") ? 0 : 1, ip = 1 - it;
        double s = sin(th), c = cos(th), ml2 = m * l * l;
        double Mx[4] = {0}, Cx[4] = {0}, Kx[4] = {0};
        Mx[it + 2 * it] = ml2, Mx[ip + 2 * ip] = ml2 * s * s;
        Cx[it + 2 * ip] = -2 * ml2 * s * c * Om, Cx[ip + 2 * it] = 2 * ml2 * s * c * Om;
        Kx[it + 2 * it] = m * gr * l * c + ml2 * Om * Om * (s * s - c * c);
        /* the states are the coordinates in file order */
        CHECK(sl->sidx[0] == 0 && sl->sidx[1] == 1);
        for (int k = 0; k < 4; k++) {
            double a, b, cc;
            CHECK(mblx_eval(g, sl->M[k], sv, &a, NULL) == 0);
            CHECK(mblx_eval(g, sl->Cd[k], sv, &b, NULL) == 0);
            CHECK(mblx_eval(g, sl->K[k], sv, &cc, NULL) == 0);
            double sc = ml2 * (1 + Om * Om);
            worst = fmax(worst, fmax(fabs(a - Mx[k]), fmax(fabs(b - Cx[k]), fabs(cc - Kx[k]))) / sc);
        }
    }
    printf("rotating pendulum: M, C-hat, K-hat against the closed form at 20 random sets: %.1e\n", worst);
    CHECK(worst <= 1e-14);
    free(sv);
out:
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(newton_refuses_given_point)
{
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    CHECK(mbl_model_load_file("examples/rotating_pendulum_given.yaml", NULL, 0, &md, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    CHECK(mbl_symlin_new(md, pt, 0, &sl, &st) == 0);
    if (sl) {
        CHECK(mbl_symlin_newton(sl, &st) == MBL_EARG);
        CHECK(strstr(st.msg, "given") != NULL);
    }
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    if (test_tmp_template(tmpdir_, sizeof tmpdir_, "mblin_cgpoint_") || !mkdtemp(tmpdir_)) return 1;
    RUN(newton_equilibrium);
    RUN(newton_steady_motion);
    RUN(points_with_motion_match_library);
    RUN(rotating_pendulum_closed_form);
    RUN(newton_refuses_given_point);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir_);
    if (system(cmd)) printf("could not remove %s\n", tmpdir_);
    return test_summary("codegen_point");
}
