/* mblin codegen (src/codegen/emit.c): the generated C (compiled here with cc) and Python (NumPy)
 * evaluated at the model's parameters and point agree with the library's augmented linearization
 * (an independent method: KLU on the augmented system of source 000) to 1e-12, relative to each
 * matrix's largest entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/codegen.h"
#include "mblin/mblin.h"
#include "fixture.h"
#include "test.h"

static const char *driver_c =
    "#include <stdio.h>\n"
    "void gen(const double *p, const double *q, const double *r, double *A, double *B, double *C,\n"
    "         double *D, double *M, double *Cd, double *K, double *F);\n"
    "extern const double *gen_values(int which);\n"
    "extern int gen_size(int which);\n"
    "static double A[40000], B[40000], C[40000], D[40000], M[10000], Cd[10000], K[10000], F[10000];\n"
    "int main(void)\n{\n"
    "    gen(gen_values(0), gen_values(1), gen_values(2), A, B, C, D, M, Cd, K, F);\n"
    "    double *mats[] = {A, B, C, D, M, Cd, K, F};\n"
    "    for (int k = 0; k < 8; k++)\n"
    "        for (int i = 0; i < gen_size(k + 3); i++) printf(\"%.17g\\n\", mats[k][i]);\n"
    "    return 0;\n}\n";

static const char *python_driver =
    "import sys\nsys.path.insert(0, sys.argv[1])\nimport gen_py\nres = gen_py.gen()\n"
    "for k in ['A', 'B', 'C', 'D', 'M', 'Cd', 'K', 'F']:\n"
    "    for x in res[k].flatten(order='F'):\n        print(repr(float(x)))\n";

static int read_values(FILE *f, double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (fscanf(f, "%lf", &v[i]) != 1) return -1;
    return 0;
}

static double rel_dev(const double *a, const double *b, int n)
{
    double scale = 0.0, dev = 0.0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (int i = 0; i < n; i++) dev = fmax(dev, fabs(a[i] - b[i]));
    return n ? dev / fmax(scale, 1e-300) : 0.0;
}

static const char *python3(void)
{
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0) return "python3";
    if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0) return "/usr/bin/python3";
    return NULL;
}

static void check_model(const char *path, const char *dir)
{
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_symlin *sl = NULL;
    CHECK(mbl_model_load_file(path, NULL, 0, &md, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    CHECK(mbl_linearize(md, pt, NULL, &lin, &st) == 0);
    int rc = mbl_symlin_new(md, pt, 0, &sl, &st);
    if (rc) printf("%s: %s\n", path, st.msg);
    CHECK(rc == 0);
    if (rc) goto out;
    int nx = lin->nx, nu = lin->nu, ny = lin->ny, z = lin->z1;
    int sizes[8] = {nx * nx, nx * nu, ny * nx, ny * nu, z * z, z * z, z * z, z * nu};
    const double *ref[8] = {lin->A, lin->B, lin->C, lin->D, lin->M, lin->Cd, lin->K, lin->F};
    const char *names[8] = {"A", "B", "C", "D", "M", "Cd", "K", "F"};
    CHECK(sl->nx == nx && sl->nr == nu && sl->ny == ny && sl->z == z);
    char file[512], cmd[2048];
    /* ---- C ---- */
    snprintf(file, sizeof file, "%s/gen.c", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    CHECK(mbl_codegen(sl, MBL_LANG_C, "gen", path, f, &st) == 0);
    fprintf(f, "const double *gen_values(int which);\nint gen_size(int k);\n");
    fprintf(f, "const double *gen_values(int which) { return which == 0 ? gen_P : which == 1 ? gen_Q : gen_R; }\n");
    fprintf(f, "int gen_size(int k) { static const int s[] = {0, 0, 0");
    for (int k = 0; k < 8; k++) fprintf(f, ", %d", sizes[k]);
    fprintf(f, "}; return s[k]; }\n");
    fclose(f);
    snprintf(file, sizeof file, "%s/driver.c", dir);
    f = fopen(file, "w");
    fputs(driver_c, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -O1 -Wall -Werror -o %s/gen %s/gen.c %s/driver.c -lm && %s/gen > %s/out_c.txt", dir, dir,
             dir, dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(file, sizeof file, "%s/out_c.txt", dir);
    f = fopen(file, "r");
    CHECK(f != NULL);
    double *v = malloc(sizeof(double) * 200000);
    for (int k = 0; f && k < 8; k++) {
        CHECK(read_values(f, v, sizes[k]) == 0);
        double d = rel_dev(v, ref[k], sizes[k]);
        printf("%s: C %s max rel dev %.2e\n", path, names[k], d);
        CHECK(d <= 1e-12);
    }
    if (f) fclose(f);
    /* ---- Python ---- */
    const char *py = python3();
    if (py) {
        snprintf(file, sizeof file, "%s/gen_py.py", dir);
        f = fopen(file, "w");
        CHECK(mbl_codegen(sl, MBL_LANG_PYTHON, "gen", path, f, &st) == 0);
        fclose(f);
        snprintf(file, sizeof file, "%s/driver.py", dir);
        f = fopen(file, "w");
        fputs(python_driver, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "PYTHONDONTWRITEBYTECODE=1 %s %s/driver.py %s > %s/out_py.txt", py, dir, dir, dir);
        CHECK(system(cmd) == 0);
        snprintf(file, sizeof file, "%s/out_py.txt", dir);
        f = fopen(file, "r");
        CHECK(f != NULL);
        for (int k = 0; f && k < 8; k++) {
            CHECK(read_values(f, v, sizes[k]) == 0);
            double d = rel_dev(v, ref[k], sizes[k]);
            printf("%s: Python %s max rel dev %.2e\n", path, names[k], d);
            CHECK(d <= 1e-12);
        }
        if (f) fclose(f);
    } else {
        printf("python3 with numpy not found: Python part not run\n");
    }
    free(v);
out:
    mbl_symlin_free(sl);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

static char tmpdir_[128];

TEST(generated_code_matches_library)
{
    const char *models[] = {"examples/double_pendulum_natural.yaml", "examples/spring_pendulum.yaml",
                            "examples/slider_pendulum.yaml",         "examples/fourbar_N1.yaml",
                            "examples/fourbar_N5_damped.yaml",       "examples/fourbar_N20.yaml",
                            "examples/whipple_bicycle.yaml"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) check_model(models[i], tmpdir_);
}

/* issue 33, item 2: outputs of multipliers and accelerations (the damped four-bar with a force on a
 * joint: two constraint forces, one of them times cos(phi), the acceleration of xB0 and a position)
 * in the generated C and Python, against augmented's C and D (its own solve for dlambda, dvdot) */
TEST(multiplier_and_acceleration_outputs)
{
    char *text = test_slurp("examples/fourbar_N1_damped.yaml");
    CHECK(text != NULL);
    if (!text) return;
    char path[256];
    snprintf(path, sizeof path, "%s/fourbar_outputs.yaml", tmpdir_);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%sinputs: {Fx: 0.5}\nforces: {xB0: \"Fx\"}\noutputs: {rod: \"lambda(1)\", crank: "
                   "\"lambda(4)*cos(phi) + 2*lambda(2)\", ax: \"der(der(xB0))\", y: \"yB1\"}\n",
                text);
        fclose(f);
        check_model(path, tmpdir_);
    }
    free(text);
    /* a mechanism (joint-measure states: the stacked reduction of symlin_moving.c) with the reactions
     * of its joints, an acceleration and a position */
    text = test_slurp("examples/mech/slider_pendulum.yaml");
    char *o = text ? strstr(text, "outputs:") : NULL;
    CHECK(o != NULL);
    if (!o) {
        free(text);
        return;
    }
    *o = '\0';
    char *eol = strchr(o + 1, '\n');
    snprintf(path, sizeof path, "%s/slider_reactions.yaml", tmpdir_);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%soutputs: {slide: \"FY(slide)\", pinx: \"FX(pin)\", acc: \"der(der(DX(s_rail, rail)))\", "
                   "tip: \"DX(tip, rail)\"}\n%s",
                text, eol ? eol + 1 : "");
        fclose(f);
        check_model(path, tmpdir_);
    }
    free(text);
}

/* issue 30: the function's name is an identifier of the language that is not a keyword nor a name the
 * generated code uses; the library refuses the others (mbl_codegen too), and comment text is escaped */
TEST(names_and_comments)
{
    CHECK(mbl_codegen_name_check(MBL_LANG_PYTHON, "gen") == NULL);
    CHECK(mbl_codegen_name_check(MBL_LANG_PYTHON, "_gen") == NULL);
    CHECK(mbl_codegen_name_check(MBL_LANG_C, "def") == NULL);
    CHECK(mbl_codegen_name_check(MBL_LANG_OCTAVE, "int") == NULL);
    CHECK(mbl_codegen_name_check(MBL_LANG_C, "t1x") == NULL);
    const struct {
        mbl_lang l;
        const char *n;
    } bad[] = {{MBL_LANG_PYTHON, "def"}, {MBL_LANG_PYTHON, "np"},      {MBL_LANG_PYTHON, "numpy"},
               {MBL_LANG_PYTHON, "math"}, {MBL_LANG_C, "int"},          {MBL_LANG_C, "_Bool"},
               {MBL_LANG_C, "fabs"},      {MBL_LANG_C, "_x"},           {MBL_LANG_OCTAVE, "end"},
               {MBL_LANG_OCTAVE, "endfunction"}, {MBL_LANG_OCTAVE, "_x"}, {MBL_LANG_OCTAVE, "zeros"},
               {MBL_LANG_C, "t12"},       {MBL_LANG_C, "1a"},           {MBL_LANG_PYTHON, "a-b"},
               {MBL_LANG_PYTHON, "a\nb"}, {MBL_LANG_C, ""},             {MBL_LANG_C, "lam"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(mbl_codegen_name_check(bad[i].l, bad[i].n) != NULL);
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    CHECK(fixture_model_point("examples/slider_pendulum.yaml", NULL, NULL, &md, &pt, &st) == 0);
    CHECK(pt && mbl_symlin_new(md, pt, 0, &sl, &st) == 0);
    static char buf[1 << 16];
    FILE *f = sl ? fmemopen(buf, sizeof buf, "w") : NULL;
    if (f) {
        CHECK(mbl_codegen(sl, MBL_LANG_PYTHON, "np", "m.yaml", f, &st) == MBL_EARG);
        CHECK(strstr(st.msg, "'np'") != NULL);
        fclose(f);
    }
    /* the header line keeps the whole path, escaped: newline, CR, backslash, non-ASCII as \xNN; C: the
     * '/' of a comment end or start and the first '?' of a trigraph; Python: the ':' of "coding:" */
    const mbl_lang langs[3] = {MBL_LANG_C, MBL_LANG_PYTHON, MBL_LANG_OCTAVE};
    const char *want[3] = {" a*\\x2f b\\x0aint x; \\x2f* c\\x3f?/ \\x5c\\x0d\\xc3\\xa9 coding: ,",
                           " a*/ b\\x0aint x; /* c?\?/ \\x5c\\x0d\\xc3\\xa9 coding\\x3a ,",
                           " a*/ b\\x0aint x; /* c?\?/ \\x5c\\x0d\\xc3\\xa9 coding: ,"};
    for (int k = 0; k < 3 && sl; k++) {
        memset(buf, 0, sizeof buf);
        f = fmemopen(buf, sizeof buf - 1, "w");
        CHECK(f && mbl_codegen(sl, langs[k], "gen", " a*/ b\nint x; /* c?\?/ \\\r\xc3\xa9 coding: ", f, &st) == 0);
        if (f) fclose(f);
        char *line = buf; /* Octave: the header comment follows the function line */
        if (langs[k] == MBL_LANG_OCTAVE && strchr(buf, '\n')) line = strchr(buf, '\n') + 1;
        char *nl = strchr(line, '\n'), *w = strstr(line, want[k]);
        CHECK(nl && w && w < nl);
        if (!(nl && w && w < nl)) printf("lang %d header: %.*s\n", k, nl ? (int)(nl - line) : 80, line);
    }
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* issue 30 (found by fuzz_codegen_name): the generated C includes <math.h>, so a function named after
 * one of its functions or macros does not compile (y1, log10, NAN were accepted). The names below are
 * of C11 7.12 and POSIX (j0, y1); that each collides is checked here with the system's C compiler (as
 * a user compiles the generated file, default language mode), and a plain name compiles. */
TEST(math_h_names)
{
    const char *names[] = {"log10", "cbrt", "hypot", "erf",    "round",    "trunc", "y0",  "y1", "j0",
                           "jn",    "NAN",  "INFINITY", "HUGE_VAL", "isnan", "signbit", "nan", "fma", "copysign"};
    char cmd[800], file[300];
    snprintf(file, sizeof file, "%s/mathname.c", tmpdir_);
    int have_cc = system("cc --version >/dev/null 2>&1") == 0;
    for (int k = -1; k < (int)(sizeof names / sizeof *names); k++) {
        const char *n = k < 0 ? "gen" : names[k];
        if (k < 0) CHECK(mbl_codegen_name_check(MBL_LANG_C, n) == NULL);
        else CHECK_MSG(mbl_codegen_name_check(MBL_LANG_C, n) != NULL, "'%s' accepted as a C function name", n);
        CHECK(mbl_codegen_name_check(MBL_LANG_PYTHON, k < 0 ? "gen" : "y1") == NULL); /* C only */
        if (!have_cc) continue;
        FILE *f = fopen(file, "w");
        CHECK(f != NULL);
        if (!f) continue;
        fprintf(f, "#include <math.h>\nvoid %s(const double *p, double *A);\nvoid %s(const double *p, double *A) { A[0] = p[0]; }\n",
                n, n);
        fclose(f);
        snprintf(cmd, sizeof cmd, "cc -c -o /dev/null %s >/dev/null 2>&1", file);
        int compiles = system(cmd) == 0;
        CHECK_MSG(compiles == (k < 0), "'%s': the compiler %s it", n, compiles ? "accepts" : "refuses");
    }
    if (!have_cc) printf("cc not found: the compiler part of math_h_names not run\n");
}

/* issue 30 (found by fuzz_codegen_name): Python reads "coding:" on a first line comment as an encoding
 * declaration (PEP 263), so the function robotcoding (header "# robotcoding: linear model of ...")
 * declared the encoding "linear" and its module did not import; so did a path that the escapes
 * turned into "coding:utf-7". Python itself is the judge here. */
TEST(python_coding_names)
{
    const char *py = python3();
    if (!py) {
        printf("python3 with numpy not found: python_coding_names not run\n");
        return;
    }
    mbl_status st = {0};
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    CHECK(fixture_model_point("examples/slider_pendulum.yaml", NULL, NULL, &md, &pt, &st) == 0);
    CHECK(pt && mbl_symlin_new(md, pt, 0, &sl, &st) == 0);
    /* the fourth: a path whose byte 0x9c, escaped as \x9c, and "oding:utf-7" made "coding:utf-7" (the
     * module did not import: "'utf7' codec can't decode") */
    const char *names[] = {"robotcoding", "coding", "gen_coding", "gen_path"};
    const char *paths[] = {"m.yaml", "m.yaml", "m.yaml", "x\x9coding:utf-7 +AAo-open(+ACI-PWNED+ACI-, +ACI-w+ACI-)+AAo-#"};
    for (int k = 0; sl && k < 4; k++) {
        char file[300], cmd[900];
        snprintf(file, sizeof file, "%s/%s.py", tmpdir_, names[k]);
        FILE *f = fopen(file, "w");
        CHECK(f && mbl_codegen(sl, MBL_LANG_PYTHON, names[k], paths[k], f, &st) == 0);
        if (f) fclose(f);
        snprintf(cmd, sizeof cmd, "cd %s && %s -c 'import %s; assert %s.%s()[\"A\"].shape == (4, 4)'", tmpdir_, py,
                 names[k], names[k], names[k]);
        CHECK_MSG(system(cmd) == 0, "%s.py does not import", names[k]);
        snprintf(file, sizeof file, "%s/PWNED", tmpdir_);
        CHECK(access(file, F_OK) != 0);
    }
    mbl_symlin_free(sl);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    if (test_tmp_template(tmpdir_, sizeof tmpdir_, "mblin_codegen_") || !mkdtemp(tmpdir_)) return 1;
    RUN(generated_code_matches_library);
    RUN(multiplier_and_acceleration_outputs);
    RUN(names_and_comments);
    RUN(math_h_names);
    RUN(python_coding_names);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir_);
    if (system(cmd)) printf("could not remove %s\n", tmpdir_);
    return test_summary("codegen");
}
