/* The example routines in C (examples/user/tire_mf.c, motor.c) and the test libraries of
 * tests/user/ (tests/user/tests.cmake builds them into MBLIN_USER_LIB_DIR), called directly through
 * dlopen as mblin calls them (include/mblin/user.h):
 * - mf_lateral (the Magic Formula), dc_motor and plain: outputs and every partial against sympy
 *   (tests/user/routine_refs.py, 50 digits, pasted below) to MBL_TEST_ROUTINE_RTOL of the largest
 *   entry of their row; the call without partials (partials NULL) gives the same outputs;
 * - the test libraries do what the loader's tests rely on: bad_abi says MBL_USER_ABI_VERSION + 1,
 *   no_abi has no mblin_user_abi, nan_routine gives NaN, err_routine status 3 and its message,
 *   wrong_partials is plain but for d f1/dy, 1 % off, and plain_nopartials refuses partials. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/user.h"
#include "test.h"

#ifndef MBLIN_USER_LIB_DIR
#error "MBLIN_USER_LIB_DIR: the folder of the routines' libraries (tests/user/tests.cmake)"
#endif

/* the routines' rounding against sympy's 50 digits: a few ulps of the largest entry of a row */
#define MBL_TEST_ROUTINE_RTOL 1e-13

/* sympy's values (tests/user/routine_refs.py): inputs, outputs, partials (row-major, nout x nin) */
typedef struct ref {
    double in[7], out[2], par[14];
} ref;
static const ref ref_mf_lateral[] = {
    {{0.050000000000000003, 10, 1.3, 6153.8461538461543, 0.96999999999999997}, {-3297.7511306636184}, {-44770.333528558796, -223.85166764279398, -2260.3229574518923, -0.53588455873283802, 201.92415255514751}},
    {{-0.20000000000000001, 8, 1.5, 7500, -0.5}, {7487.9508168231678}, {1511.5091696370212, -37.787729240925529, -461.08027191064559, 0.99839344224308912, 81.68780478790336}},
    {{0.29999999999999999, 12, 1.8999999999999999, 4000, 0.40000000000000002}, {-2966.9257443400356}, {4699.6858276405628, 117.49214569101406, 3255.9789962206814, -0.74173143608500891, -1432.955295165297}},
};
static const ref ref_dc_motor[] = {
    {{2.5, 30, 24, 0.80000000000000004, 0.002, 0.050000000000000003, 0.059999999999999998}, {10250, 0.14999999999999999}, {-400, -25, 500, -1250, -5125000, -15000, 0, 0.059999999999999998, 0, 0, 0, 0, 0, 2.5}},
    {{-1.25, -7, 12, 1.5, 0.01, 0.20000000000000001, 0.17999999999999999}, {1527.5, -0.22500000000000001}, {-150, -20, 100, 125, -152750, 700, 0, 0.17999999999999999, 0, 0, 0, 0, 0, -1.25}},
};
static const ref ref_plain[] = {
    {{0.69999999999999996, -0.29999999999999999}, {-0.19326530617130733, 1.2308182206817178}, {-0.22945265618534652, 0.64421768723769102, 1.3999999999999999, 0.74081822068171788}},
    {{-2.1000000000000001, 1.3999999999999999}, {-1.2084931133084234, 8.4651999668446738}, {-0.70678454643980049, -0.86320936664887382, -4.2000000000000002, 4.0551999668446745}},
};

static void *open_lib(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/lib%s.so", MBLIN_USER_LIB_DIR, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "dlopen %s: %s", path, dlerror());
    return h;
}

static mbl_user_fn routine(void *h, const char *sym)
{
    mbl_user_fn fn = NULL;
    void *p = h ? dlsym(h, sym) : NULL;
    CHECK_MSG(p != NULL, "no routine %s", sym);
    memcpy(&fn, &p, sizeof fn); /* object pointer to function pointer (POSIX dlsym) */
    return fn;
}

static int abi_of(void *h, int *abi)
{
    void *p = h ? dlsym(h, "mblin_user_abi") : NULL;
    if (!p) return 0;
    int (*f)(void);
    memcpy(&f, &p, sizeof f);
    *abi = f();
    return 1;
}

/* call fn at in (nin, nout) with or without partials; its status, the message in msg */
static int call(mbl_user_fn fn, const char *name, int nin, int nout, const double *in, double *out, double *par, char *msg,
                size_t msz)
{
    mbl_user_call c;
    memset(&c, 0, sizeof c);
    c.abi = MBL_USER_ABI_VERSION;
    c.name = name;
    c.nin = nin;
    c.nout = nout;
    c.in = in;
    c.out = out;
    c.partials = par;
    c.message = msg;
    c.message_size = msz;
    msg[0] = '\0';
    return fn(&c);
}

/* a routine against its references: outputs and partials, each row to RTOL of its largest entry */
static void against(const char *lib, const char *sym, int nin, int nout, const ref *r, int nref)
{
    void *h = open_lib(lib);
    int abi = 0;
    CHECK(abi_of(h, &abi) && abi == MBL_USER_ABI_VERSION);
    mbl_user_fn fn = routine(h, sym);
    double worst = 0;
    for (int t = 0; t < nref && fn; t++) {
        double out[2], par[14], out2[2];
        char msg[256];
        CHECK_EQ_INT(call(fn, sym, nin, nout, r[t].in, out, par, msg, sizeof msg), 0);
        CHECK_EQ_INT(call(fn, sym, nin, nout, r[t].in, out2, NULL, msg, sizeof msg), 0);
        for (int k = 0; k < nout; k++) {
            CHECK_MSG(out[k] == out2[k], "%s: output %d with partials %.17g, without %.17g", sym, k, out[k], out2[k]);
            double e = fabs(out[k] - r[t].out[k]) / fmax(fabs(r[t].out[k]), 1e-300);
            double big = 0;
            for (int j = 0; j < nin; j++) big = fmax(big, fabs(r[t].par[k * nin + j]));
            for (int j = 0; j < nin; j++) e = fmax(e, fabs(par[k * nin + j] - r[t].par[k * nin + j]) / big);
            CHECK_MSG(e <= MBL_TEST_ROUTINE_RTOL, "%s point %d output %d: relative error %.3g", sym, t, k, e);
            worst = fmax(worst, e);
        }
    }
    printf("  %s: %d points, largest relative difference from sympy %.2g\n", sym, nref, worst);
    /* a wrong count of inputs is refused with a message, not read out of bounds */
    double in[8] = {0}, out[2];
    char msg[256];
    if (fn) {
        CHECK(call(fn, sym, nin + 1, nout, in, out, NULL, msg, sizeof msg) != 0 && strstr(msg, sym));
        printf("  %s with %d inputs: %s\n", sym, nin + 1, msg);
    }
    if (h) dlclose(h);
}

TEST(mf_lateral_sympy)
{
    against("tire_mf", "mf_lateral", 5, 1, ref_mf_lateral, (int)(sizeof ref_mf_lateral / sizeof ref_mf_lateral[0]));
}

TEST(dc_motor_sympy)
{
    against("motor", "dc_motor", 7, 2, ref_dc_motor, (int)(sizeof ref_dc_motor / sizeof ref_dc_motor[0]));
}

TEST(plain_sympy)
{
    against("plain", "plain", 2, 2, ref_plain, (int)(sizeof ref_plain / sizeof ref_plain[0]));
}

/* what the loader's and the operating point's tests rely on in each test library */
TEST(test_libraries)
{
    int abi = 0;
    void *h = open_lib("bad_abi");
    CHECK(abi_of(h, &abi) && abi == MBL_USER_ABI_VERSION + 1);
    if (h) dlclose(h);
    h = open_lib("no_abi");
    CHECK(h && !abi_of(h, &abi) && dlsym(h, "no_abi"));
    if (h) dlclose(h);
    const double in[2] = {0.7, -0.3};
    double out[2], par[4], ref_par[4];
    char msg[256];
    h = open_lib("nan_routine");
    mbl_user_fn fn = routine(h, "nan_routine");
    CHECK(fn && call(fn, "nan_routine", 2, 2, in, out, NULL, msg, sizeof msg) == 0 && isnan(out[0]));
    if (h) dlclose(h);
    h = open_lib("err_routine");
    fn = routine(h, "err_routine");
    CHECK(fn && call(fn, "err_routine", 2, 2, in, out, NULL, msg, sizeof msg) == 3 &&
          !strcmp(msg, "table lookup outside 0..10"));
    if (h) dlclose(h);
    /* wrong_partials: plain's function and partials but for entry [1][1], 1 % off */
    h = open_lib("plain");
    fn = routine(h, "plain");
    CHECK(fn && call(fn, "plain", 2, 2, in, out, ref_par, msg, sizeof msg) == 0);
    mbl_user_fn np = routine(h, "plain_nopartials");
    double out2[2];
    CHECK(np && call(np, "plain_nopartials", 2, 2, in, out2, NULL, msg, sizeof msg) == 0 && out2[0] == out[0] &&
          out2[1] == out[1]);
    CHECK(np && call(np, "plain_nopartials", 2, 2, in, out2, par, msg, sizeof msg) != 0 && strstr(msg, "partials: no"));
    if (h) dlclose(h);
    h = open_lib("wrong_partials");
    fn = routine(h, "wrong_partials");
    CHECK(fn && call(fn, "wrong_partials", 2, 2, in, out2, par, msg, sizeof msg) == 0);
    for (int k = 0; k < 4 && fn; k++) {
        double want = k == 3 ? 1.01 * ref_par[k] : ref_par[k];
        CHECK_MSG(fabs(par[k] - want) <= 1e-15 * fabs(want), "wrong_partials entry %d: %.17g, want %.17g", k, par[k], want);
    }
    if (h) dlclose(h);
}

int main(void)
{
    RUN(mf_lateral_sympy);
    RUN(dc_motor_sympy);
    RUN(plain_sympy);
    RUN(test_libraries);
    return test_summary("user routines");
}
