/* NLopt loaded when first needed, for the statically linked command-line tool
 * (cmake/static_cli.cmake). Debian ships NLopt only as a shared library, and only `mblin optimize`
 * (src/opt) uses it: linked, every run would map and relocate it before main (the tool opens only
 * libc and libm otherwise, tests/cli/startup_test.py). This file defines the NLopt entry points
 * src/opt calls; the first call dlopen()s libnlopt.so.0 (once) and forwards to it. If it cannot be
 * loaded, nlopt_create returns NULL and mbl_optimize fails with its one-line error (say: install
 * libnlopt0, docs/optimize.md). The library itself (libmblin) links NLopt directly. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include <nlopt.h>

static struct {
    void *lib;
    nlopt_opt (*create)(nlopt_algorithm, unsigned);
    void (*destroy)(nlopt_opt);
    nlopt_result (*optimize)(nlopt_opt, double *, double *);
    nlopt_result (*set_min_objective)(nlopt_opt, nlopt_func, void *);
    nlopt_result (*add_ineq_m)(nlopt_opt, unsigned, nlopt_mfunc, void *, const double *);
    nlopt_result (*set_lb)(nlopt_opt, const double *);
    nlopt_result (*set_ub)(nlopt_opt, const double *);
    nlopt_result (*set_xtol_abs1)(nlopt_opt, double);
    nlopt_result (*set_ftol_rel)(nlopt_opt, double);
    nlopt_result (*set_maxeval)(nlopt_opt, int);
    nlopt_result (*force_stop)(nlopt_opt);
    const char *(*get_errmsg)(nlopt_opt);
} N;
static pthread_once_t n_once = PTHREAD_ONCE_INIT;

static void n_load(void)
{
    N.lib = dlopen("libnlopt.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!N.lib) return;
    *(void **)&N.create = dlsym(N.lib, "nlopt_create");
    *(void **)&N.destroy = dlsym(N.lib, "nlopt_destroy");
    *(void **)&N.optimize = dlsym(N.lib, "nlopt_optimize");
    *(void **)&N.set_min_objective = dlsym(N.lib, "nlopt_set_min_objective");
    *(void **)&N.add_ineq_m = dlsym(N.lib, "nlopt_add_inequality_mconstraint");
    *(void **)&N.set_lb = dlsym(N.lib, "nlopt_set_lower_bounds");
    *(void **)&N.set_ub = dlsym(N.lib, "nlopt_set_upper_bounds");
    *(void **)&N.set_xtol_abs1 = dlsym(N.lib, "nlopt_set_xtol_abs1");
    *(void **)&N.set_ftol_rel = dlsym(N.lib, "nlopt_set_ftol_rel");
    *(void **)&N.set_maxeval = dlsym(N.lib, "nlopt_set_maxeval");
    *(void **)&N.force_stop = dlsym(N.lib, "nlopt_force_stop");
    *(void **)&N.get_errmsg = dlsym(N.lib, "nlopt_get_errmsg");
    if (!N.create || !N.destroy || !N.optimize || !N.set_min_objective || !N.add_ineq_m || !N.set_lb || !N.set_ub ||
        !N.set_xtol_abs1 || !N.set_ftol_rel || !N.set_maxeval || !N.force_stop || !N.get_errmsg)
        N.create = NULL; /* an NLopt without one of them: as if missing */
}

/* nlopt_create is always the first call: the others see a loaded library */
nlopt_opt nlopt_create(nlopt_algorithm algorithm, unsigned n)
{
    pthread_once(&n_once, n_load);
    return N.create ? N.create(algorithm, n) : NULL;
}
void nlopt_destroy(nlopt_opt opt) { N.destroy(opt); }
nlopt_result nlopt_optimize(nlopt_opt opt, double *x, double *opt_f) { return N.optimize(opt, x, opt_f); }
nlopt_result nlopt_set_min_objective(nlopt_opt opt, nlopt_func f, void *f_data)
{
    return N.set_min_objective(opt, f, f_data);
}
nlopt_result nlopt_add_inequality_mconstraint(nlopt_opt opt, unsigned m, nlopt_mfunc fc, void *fc_data, const double *tol)
{
    return N.add_ineq_m(opt, m, fc, fc_data, tol);
}
nlopt_result nlopt_set_lower_bounds(nlopt_opt opt, const double *lb) { return N.set_lb(opt, lb); }
nlopt_result nlopt_set_upper_bounds(nlopt_opt opt, const double *ub) { return N.set_ub(opt, ub); }
nlopt_result nlopt_set_xtol_abs1(nlopt_opt opt, double tol) { return N.set_xtol_abs1(opt, tol); }
nlopt_result nlopt_set_ftol_rel(nlopt_opt opt, double tol) { return N.set_ftol_rel(opt, tol); }
nlopt_result nlopt_set_maxeval(nlopt_opt opt, int maxeval) { return N.set_maxeval(opt, maxeval); }
nlopt_result nlopt_force_stop(nlopt_opt opt) { return N.force_stop(opt); }
const char *nlopt_get_errmsg(nlopt_opt opt) { return N.get_errmsg(opt); }
