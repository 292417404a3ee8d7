/* mblin._core: the CPython extension under the Python package `mblin` (python/mblin/__init__.py).
 *
 * A thin client of the public C API (include/mblin/), like the command line: it loads models,
 * finds operating points, linearizes and computes modes, and hands the results to Python as
 * plain objects (dicts of NumPy arrays, lists of names). The user-facing classes, docstrings and
 * argument checks live in __init__.py; the extension only converts between C and Python. This file
 * holds the module and the Model and Point types; _convert.c the conversions, _studies.c the
 * studies (sweep, boundary, Model.sensitivity, Model.freqresp); _core.h what they share.
 *
 *   load_file(path, sets, states, velocity_states[, outputs, user, allow_user_code]) -> Model
 *   load_string(text, name, sets, states, velocity_states[, outputs, user, allow_user_code]) -> Model
 *       (user: {name: callable}, the model's routines written in Python: _user.c)
 *   Model.info(), .names(kind), .parameters()
 *   Model.point(at, q, v, guess, t, options) -> Point
 *   Model.linearize(point, options, zero_tol) -> dict (the mbl_linear and mbl_modes fields)
 *   Model.compare(point, options, repeat) -> (reference, [row dicts])
 *   Point.to_dict() -> dict
 *   methods(), version(), constant(text)
 *
 * Errors: a failing library call raises the exception mblin._errors.from_status(code, message)
 * builds (a subclass of mblin.Error). The heavy calls release the GIL: a loaded model is
 * immutable and serves many threads (include/mblin/model.h).
 *
 *   Model.sweep(sets, param, from, to, count, threads, at, max_points) -> dict (mbl_sweep_run on the
 *       model, or on its copy with this call's sets; one axis)
 *   Model.boundary(sets, param, near, order, tol, mode, at[, shape, branch, sweep, from, to]) -> dict
 *       (mbl_boundary, the same way)
 *   Model.sensitivity(point, wrt, shapes) -> dict (mbl_sensitivity_compute)
 *   Model.freqresp(point, input, output, w) -> dict (mbl_freqresp)
 *   Model.optimize(sets, params, objective, constraints, ...) -> dict (mbl_optimize, _studies.c) */
#define MBLIN_PY_IMPORT_ARRAY /* this file calls import_array() */
#include "_core.h"

#include <string.h>

/* ---- Model ---------------------------------------------------------------------------------- */

static PyTypeObject ModelType;

static void Model_dealloc(ModelObject *self)
{
    mbl_model_free(self->model);
    Py_XDECREF(self->user); /* after the model, whose routines point into it */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The model object of m, which takes m and the reference user (the model's Python routines, or
 * NULL) in every case. */
static PyObject *wrap_model(mbl_model *m, PyObject *user)
{
    ModelObject *o = PyObject_New(ModelObject, &ModelType);
    if (!o) {
        mbl_model_free(m);
        Py_XDECREF(user);
        return NULL;
    }
    o->model = m;
    o->user = user;
    return (PyObject *)o;
}

/* The arguments shared by load_file and load_string: sets, states, velocity_states, outputs, the
 * Python routines (user) and allow_user_code. */
typedef struct {
    mbl_setting *sets;
    int nsets;
    const char **states, **vstates, **outputs;
    int nstates, nvstates, noutputs;
    PyObject *keep[4];
    PyObject *user; /* the routines' holder (py_user_routines), handed to the model object */
    mbl_load_options opt;
} load_args;

static int load_args_get(load_args *a, PyObject *sets, PyObject *states, PyObject *vstates, PyObject *outputs,
                         PyObject *user, int allow_user_code)
{
    memset(a, 0, sizeof *a);
    mbl_load_options_default(&a->opt);
    a->opt.allow_user_code = allow_user_code;
    if (py_user_routines(user, &a->user, &a->opt)) return -1;
    if (py_settings(sets, &a->sets, &a->nsets, &a->keep[0])) return -1;
    if (py_strings(states, &a->states, &a->nstates, &a->keep[1])) return -1;
    if (py_strings(vstates, &a->vstates, &a->nvstates, &a->keep[2])) return -1;
    if (states != Py_None) a->opt.states = a->states, a->opt.nstates = a->nstates;
    if (vstates != Py_None) a->opt.velocity_states = a->vstates, a->opt.nvelocity_states = a->nvstates;
    /* outputs kept (load(outputs=[...]), the tool's --outputs) */
    if (py_strings(outputs, &a->outputs, &a->noutputs, &a->keep[3])) return -1;
    if (outputs != Py_None) a->opt.outputs = a->outputs, a->opt.noutputs = a->noutputs;
    return 0;
}

static void load_args_free(load_args *a)
{
    PyMem_Free(a->sets);
    PyMem_Free(a->states);
    PyMem_Free(a->vstates);
    PyMem_Free(a->outputs);
    for (int i = 0; i < 4; i++) Py_XDECREF(a->keep[i]);
    Py_XDECREF(a->user);
}

/* The model loaded (rc 0) as an object with its routines, or the error raised. */
static PyObject *loaded(int rc, mbl_model *m, const mbl_status *st, load_args *a)
{
    PyObject *user = a->user;
    a->user = NULL;
    load_args_free(a);
    if (rc) {
        Py_XDECREF(user);
        return py_raise_status(st);
    }
    return wrap_model(m, user);
}

static PyObject *core_load_file(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path_obj, *sets, *states, *vstates, *outputs = Py_None, *user = Py_None, *path_bytes = NULL;
    int allow = 0;
    if (!PyArg_ParseTuple(args, "OOOO|OOp", &path_obj, &sets, &states, &vstates, &outputs, &user, &allow)) return NULL;
    if (!PyUnicode_FSConverter(path_obj, &path_bytes)) return NULL;
    load_args a;
    if (load_args_get(&a, sets, states, vstates, outputs, user, allow)) {
        load_args_free(&a);
        Py_DECREF(path_bytes);
        return NULL;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *m = NULL;
    int rc;
    const char *path = PyBytes_AS_STRING(path_bytes);
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_model_load_file_opt(path, a.sets, a.nsets, &a.opt, &m, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_bytes);
    if (py_interrupt_end(&pi)) return mbl_model_free(m), load_args_free(&a), NULL; /* KeyboardInterrupt */
    return loaded(rc, m, &st, &a);
}

static PyObject *core_load_string(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text, *name;
    Py_ssize_t len;
    PyObject *sets, *states, *vstates, *outputs = Py_None, *user = Py_None;
    int allow = 0;
    if (!PyArg_ParseTuple(args, "s#sOOO|OOp", &text, &len, &name, &sets, &states, &vstates, &outputs, &user, &allow))
        return NULL;
    load_args a;
    if (load_args_get(&a, sets, states, vstates, outputs, user, allow)) {
        load_args_free(&a);
        return NULL;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *m = NULL;
    int rc;
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_model_load_string_opt(text, (size_t)len, name, a.sets, a.nsets, &a.opt, &m, &st);
    Py_END_ALLOW_THREADS
    if (py_interrupt_end(&pi)) return mbl_model_free(m), load_args_free(&a), NULL; /* KeyboardInterrupt */
    return loaded(rc, m, &st, &a);
}

static PyObject *Model_info(ModelObject *self, PyObject *noargs)
{
    (void)noargs;
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    return Py_BuildValue("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:d}", "name", in.name ? in.name : "", "file",
                         in.file ? in.file : "", "ncoord", in.ncoord, "nhol", in.nhol, "nnh", in.nnh, "ninput",
                         in.ninput, "noutput", in.noutput, "nparam", in.nparam, "nuser_states", in.nuser_states,
                         "nuser_velocity_states", in.nuser_velocity_states, "at", py_at_name(in.at), "time", in.time);
}

/* names("coordinates" | "inputs" | "outputs" | "parameters") */
static PyObject *Model_names(ModelObject *self, PyObject *args)
{
    const char *kind;
    if (!PyArg_ParseTuple(args, "s", &kind)) return NULL;
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    const char *(*get)(const mbl_model *, int) = NULL;
    int n = 0;
    if (!strcmp(kind, "coordinates")) get = mbl_model_coord_name, n = in.ncoord;
    else if (!strcmp(kind, "inputs")) get = mbl_model_input_name, n = in.ninput;
    else if (!strcmp(kind, "outputs")) get = mbl_model_output_name, n = in.noutput;
    else if (!strcmp(kind, "parameters")) get = mbl_model_param_name, n = in.nparam;
    else return PyErr_Format(PyExc_ValueError, "unknown kind of names '%s'", kind);
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        const char *s = get(self->model, i);
        PyObject *x = PyUnicode_FromString(s ? s : "");
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *Model_param_values(ModelObject *self, PyObject *noargs)
{
    (void)noargs;
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    PyObject *arr = py_vector(NULL, in.nparam);
    if (!arr) return NULL;
    double *d = (double *)PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < in.nparam; i++) d[i] = mbl_model_param_value(self->model, i);
    return arr;
}

/* A float option from a dict (absent or None: unchanged). */
static int opt_double(PyObject *d, const char *key, double *x)
{
    PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
    if (!v || v == Py_None) return 0;
    double y = PyFloat_AsDouble(v);
    if (y == -1.0 && PyErr_Occurred()) return -1;
    *x = y;
    return 0;
}

/* An m x m float64 column-major array option (Model._lin_options made it; absent or None: unchanged):
 * *x points into the array, which the dict keeps alive for the call; *m its order. */
static int opt_matrix(PyObject *d, const char *key, const double **x, int *m)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v || v == Py_None) return 0;
    if (!PyArray_Check(v) || PyArray_NDIM((PyArrayObject *)v) != 2 || PyArray_TYPE((PyArrayObject *)v) != NPY_DOUBLE ||
        !PyArray_IS_F_CONTIGUOUS((PyArrayObject *)v) ||
        PyArray_DIM((PyArrayObject *)v, 0) != PyArray_DIM((PyArrayObject *)v, 1)) {
        PyErr_Format(PyExc_ValueError, "option %s: expected a square float64 column-major array", key);
        return -1;
    }
    *x = (const double *)PyArray_DATA((PyArrayObject *)v);
    *m = (int)PyArray_DIM((PyArrayObject *)v, 0);
    return 0;
}

static int opt_int(PyObject *d, const char *key, int *x)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v || v == Py_None) return 0;
    long y = PyLong_AsLong(v);
    if (y == -1 && PyErr_Occurred()) return -1;
    if (y < -2147483647L || y > 2147483647L) {
        PyErr_Format(PyExc_OverflowError, "option %s out of range", key);
        return -1;
    }
    *x = (int)y;
    return 0;
}

/* point(at, q, v, guess, t, options): at is -1 (the file's) or an mbl_at; options a dict of
 * max_iter, tol, abs_tol, step_tol, move_note, rank_tol, velocities and targets ((name, value) pairs). */
static PyObject *Model_point(ModelObject *self, PyObject *args)
{
    int at;
    PyObject *q_obj, *v_obj, *guess_obj, *t_obj, *opts;
    if (!PyArg_ParseTuple(args, "iOOOOO!", &at, &q_obj, &v_obj, &guess_obj, &t_obj, &PyDict_Type, &opts)) return NULL;
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    mbl_opoint_options o;
    mbl_opoint_options_default(&o);
    o.at = at;
    if (opt_int(opts, "max_iter", &o.max_iter) || opt_double(opts, "tol", &o.tol) ||
        opt_double(opts, "abs_tol", &o.abs_tol) || opt_double(opts, "step_tol", &o.step_tol) ||
        opt_double(opts, "move_note", &o.move_note) || opt_double(opts, "rank_tol", &o.rank_tol))
        return NULL;
    if (t_obj != Py_None) {
        o.t = PyFloat_AsDouble(t_obj);
        if (o.t == -1.0 && PyErr_Occurred()) return NULL;
        o.has_t = 1;
    }
    double *q = NULL, *v = NULL;
    mbl_setting *guess = NULL, *vel = NULL, *tgt = NULL;
    int nguess = 0, nvel = 0, ntgt = 0;
    PyObject *keep = NULL, *keep_vel = NULL, *keep_tgt = NULL;
    PyObject *result = NULL;
    if (py_doubles(q_obj, in.ncoord, "q", &q) || py_doubles(v_obj, in.ncoord, "v", &v) ||
        py_settings(guess_obj, &guess, &nguess, &keep))
        goto done;
    o.q = q;
    o.v = v;
    o.guess = guess;
    o.nguess = nguess;
    /* held velocities of at: given (options["velocities"]: (name, value) pairs, the CLI's --set-velocity) */
    PyObject *vel_obj = PyDict_GetItemString(opts, "velocities"); /* borrowed */
    if (vel_obj && vel_obj != Py_None && py_settings(vel_obj, &vel, &nvel, &keep_vel)) goto done;
    o.velocities = vel;
    o.nvelocities = nvel;
    /* trim targets of at: trim (options["targets"]: (key, value) pairs, the CLI's --target) */
    PyObject *tgt_obj = PyDict_GetItemString(opts, "targets"); /* borrowed */
    if (tgt_obj && tgt_obj != Py_None && py_settings(tgt_obj, &tgt, &ntgt, &keep_tgt)) goto done;
    o.targets = tgt;
    o.ntargets = ntgt;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_point *p = NULL;
    int rc;
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_operating_point(self->model, &o, &p, &st);
    Py_END_ALLOW_THREADS
    if (py_interrupt_end(&pi)) { /* KeyboardInterrupt */
        mbl_point_free(p);
        goto done;
    }
    if (rc) {
        py_raise_status(&st);
        goto done;
    }
    PointObject *po = PyObject_New(PointObject, &py_PointType);
    if (!po) {
        mbl_point_free(p);
        goto done;
    }
    Py_INCREF(self);
    po->owner = self;
    po->point = p;
    result = (PyObject *)po;
done:
    PyMem_Free(q);
    PyMem_Free(v);
    PyMem_Free(guess);
    PyMem_Free(vel);
    PyMem_Free(tgt);
    Py_XDECREF(keep);
    Py_XDECREF(keep_vel);
    Py_XDECREF(keep_tgt);
    return result;
}

/* mbl_lin_options from a dict of the same field names (partial: "auto", "always", "never"), over
 * the model file's (linearize.penalty_alpha, _xi, _omega). */
static int lin_options(const mbl_model *model, PyObject *d, mbl_lin_options *o, PyObject **method_keep)
{
    mbl_lin_options_default(o);
    mbl_lin_options_from_model(model, o);
    *method_keep = NULL;
    PyObject *m = PyDict_GetItemString(d, "method");
    if (m && m != Py_None) {
        o->method = PyUnicode_AsUTF8(m);
        if (!o->method) return -1;
        Py_INCREF(m);
        *method_keep = m;
    }
    if (opt_double(d, "state_weight", &o->state_weight) || opt_double(d, "pivot_tol", &o->pivot_tol) ||
        opt_double(d, "rcond_min", &o->rcond_min) || opt_double(d, "rank_tol", &o->rank_tol) ||
        opt_int(d, "dense_max", &o->dense_max) || opt_int(d, "dense_n_max", &o->dense_n_max) ||
        opt_int(d, "nev", &o->nev) || opt_double(d, "shift", &o->shift) ||
        opt_double(d, "constraint_scale", &o->constraint_scale) || opt_double(d, "pen_alpha", &o->pen_alpha) ||
        opt_double(d, "pen_xi", &o->pen_xi) || opt_double(d, "pen_omega", &o->pen_omega) ||
        opt_double(d, "pen_ratio", &o->pen_ratio) || opt_double(d, "fd_step", &o->fd_step) ||
        opt_double(d, "fd_tol", &o->fd_tol) || opt_double(d, "mem_budget", &o->mem_budget) ||
        opt_double(d, "state_tol", &o->state_tol) || opt_double(d, "cond_max", &o->cond_max) ||
        opt_int(d, "pen_equilibrium", &o->pen_equilibrium) || opt_int(d, "desc_zero", &o->desc_zero) ||
        opt_matrix(d, "pen_Xi", &o->pen_Xi, &o->pen_m) || opt_matrix(d, "pen_Theta", &o->pen_Theta, &o->pen_m) ||
        opt_matrix(d, "pen_Omega", &o->pen_Omega, &o->pen_m))
        return -1;
    PyObject *p = PyDict_GetItemString(d, "partial");
    if (p && p != Py_None) {
        const char *s = PyUnicode_AsUTF8(p);
        if (!s) return -1;
        if (!strcmp(s, "auto")) o->partial = MBL_PARTIAL_AUTO;
        else if (!strcmp(s, "always")) o->partial = MBL_PARTIAL_ALWAYS;
        else if (!strcmp(s, "never")) o->partial = MBL_PARTIAL_NEVER;
        else {
            PyErr_Format(PyExc_ValueError, "partial must be 'auto', 'always' or 'never', not '%s'", s);
            return -1;
        }
    }
    return 0;
}

/* The fields of mbl_linear and mbl_modes as one dict. */
static PyObject *linear_dict(const mbl_linear *L, const mbl_modes *M)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int z0 = L->z0, z1 = L->z1, nx = L->nx, nu = L->nu, ny = L->ny, n = L->n;
    const mbl_lin_spectrum *spec = L->spectrum;
    const mbl_lin_descriptor *ds = L->descriptor;
    int nd = ds ? ds->nd : 0;
    int bad = py_put(d, "method", PyUnicode_FromString(L->method)) || py_put(d, "n", PyLong_FromLong(n)) ||
              py_put(d, "nx", PyLong_FromLong(nx)) || py_put(d, "nu", PyLong_FromLong(nu)) ||
              py_put(d, "ny", PyLong_FromLong(ny)) || py_put(d, "z0", PyLong_FromLong(z0)) ||
              py_put(d, "z1", PyLong_FromLong(z1)) ||
              py_put(d, "state_names", L->state_names ? py_names(L->state_names, nx) : (Py_INCREF(Py_None), Py_None)) ||
              py_put(d, "input_names", py_names(L->input_names, nu)) ||
              py_put(d, "output_names", py_names(L->output_names, ny)) || py_put(d, "A", py_matrix(L->A, nx, nx)) ||
              py_put(d, "B", py_matrix(L->B, nx, nu)) || py_put(d, "C", py_matrix(L->C, ny, nx)) ||
              py_put(d, "D", py_matrix(L->D, ny, nu)) || py_put(d, "M", py_matrix(L->M, z1, z1)) ||
              py_put(d, "Cd", py_matrix(L->Cd, z1, z1)) || py_put(d, "K", py_matrix(L->K, z1, z0)) ||
              py_put(d, "F", py_matrix(L->F, z1, nu)) || py_put(d, "q_S", py_matrix(L->q_S, n, z0)) ||
              py_put(d, "v_W", py_matrix(L->v_W, n, z1)) || py_put(d, "cond", PyFloat_FromDouble(L->cond)) ||
              py_put(d, "nsel_added", PyLong_FromLong(L->nsel_added)) ||
              py_put(d, "nsel_dropped", PyLong_FromLong(L->nsel_dropped)) ||
              py_put(d, "selection", PyUnicode_FromString(L->selection)) ||
              py_put(d, "eig_partial", PyBool_FromLong(spec ? spec->partial : 0)) ||
              py_put(d, "eig_shift", PyFloat_FromDouble(spec ? spec->shift : 0.0)) ||
              py_put(d, "spectrum_reason", PyUnicode_FromString(spec ? spec->reason : "")) ||
              py_put(d, "err_est", PyFloat_FromDouble(L->err_est)) || py_put(d, "nd", PyLong_FromLong(nd)) ||
              py_put(d, "E", py_matrix(ds ? ds->E : NULL, nd, nd)) ||
              py_put(d, "Ad", py_matrix(ds ? ds->Ad : NULL, nd, nd)) ||
              py_put(d, "Bd", py_matrix(ds ? ds->Bd : NULL, nd, nu)) ||
              py_put(d, "Cdd", py_matrix(ds ? ds->Cdd : NULL, ny, nd)) ||
              py_put(d, "Dd", py_matrix(ds && ds->Cdd ? (ds->Dd ? ds->Dd : L->D) : NULL, ny, nu)) ||
              py_put(d, "notes", PyUnicode_FromString(L->notes));
    if (bad) goto fail;
    /* modes */
    int ne = M->nx;
    npy_intp dims[1] = {ne};
    PyObject *ev = PyArray_SimpleNew(1, dims, NPY_COMPLEX128), *fr = PyArray_SimpleNew(1, dims, NPY_DOUBLE),
             *dr = PyArray_SimpleNew(1, dims, NPY_DOUBLE), *be = PyArray_SimpleNew(1, dims, NPY_DOUBLE),
             *sp = PyArray_SimpleNew(1, dims, NPY_BOOL), *kinds = PyList_New(ne),
             *ee = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!ev || !fr || !dr || !be || !sp || !kinds || !ee) {
        Py_XDECREF(ev), Py_XDECREF(fr), Py_XDECREF(dr), Py_XDECREF(be), Py_XDECREF(sp), Py_XDECREF(kinds);
        Py_XDECREF(ee);
        goto fail;
    }
    double *evd = PyArray_DATA((PyArrayObject *)ev), *frd = PyArray_DATA((PyArrayObject *)fr),
           *drd = PyArray_DATA((PyArrayObject *)dr), *bed = PyArray_DATA((PyArrayObject *)be),
           *eed = PyArray_DATA((PyArrayObject *)ee);
    npy_bool *spd = PyArray_DATA((PyArrayObject *)sp);
    for (int i = 0; i < ne; i++) {
        const mbl_mode *md = &M->modes[i];
        evd[2 * i] = md->re;
        evd[2 * i + 1] = md->im;
        frd[i] = md->freq_hz;
        drd[i] = md->damping_ratio;
        bed[i] = md->backward_error;
        eed[i] = md->error_estimate;
        spd[i] = md->spurious ? NPY_TRUE : NPY_FALSE;
        PyList_SET_ITEM(kinds, i, PyUnicode_FromString(py_kind_name(md->kind)));
        if (!PyList_GET_ITEM(kinds, i)) bad = 1;
    }
    bad |= py_put(d, "eigenvalues", ev) | py_put(d, "freq_hz", fr) | py_put(d, "damping_ratio", dr) |
           py_put(d, "backward_error", be) | py_put(d, "error_estimates", ee) | py_put(d, "spurious", sp) |
           py_put(d, "kinds", kinds) | py_put(d, "shapes", py_cmatrix(M->shape_re, M->shape_im, M->n, ne)) |
           py_put(d, "zero_tol", PyFloat_FromDouble(M->zero_tol)) |
           py_put(d, "eigen_solver", PyUnicode_FromString(M->solver));
    if (bad) goto fail;
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* linearize(point, options, zero_tol) -> dict */
static PyObject *Model_linearize(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    PyObject *opts;
    double zero_tol;
    if (!PyArg_ParseTuple(args, "O!O!d", &py_PointType, &pt, &PyDict_Type, &opts, &zero_tol)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    mbl_lin_options o;
    PyObject *keep;
    if (lin_options(self->model, opts, &o, &keep)) return NULL;
    mbl_modal_options mo;
    mbl_modal_options_default(&mo);
    if (zero_tol > 0) mo.zero_tol = zero_tol;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    int rc;
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_linearize(self->model, pt->point, &o, &lin, &st);
    if (!rc) rc = mbl_modal(lin, &mo, &modes, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(keep);
    PyObject *result = py_interrupt_end(&pi) ? NULL : rc ? py_raise_status(&st) : linear_dict(lin, modes);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    return result;
}

/* compare(point, options, repeat) -> (reference, [rows]) */
static PyObject *Model_compare(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    PyObject *opts;
    int repeat;
    if (!PyArg_ParseTuple(args, "O!O!i", &py_PointType, &pt, &PyDict_Type, &opts, &repeat)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    mbl_lin_options o;
    PyObject *keep;
    if (lin_options(self->model, opts, &o, &keep)) return NULL;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_comparison *c = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_compare(self->model, pt->point, &o, repeat, &c, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(keep);
    if (rc) return py_raise_status(&st);
    PyObject *rows = PyList_New(c->nrows);
    for (int i = 0; rows && i < c->nrows; i++) {
        const mbl_compare_row *r = &c->rows[i];
        PyObject *row = Py_BuildValue("{s:s,s:O,s:d,s:i,s:d,s:d,s:s}", "method", r->method, "ok",
                                      r->ok ? Py_True : Py_False, "seconds", r->seconds, "physical_eigenvalues",
                                      r->nphys, "max_rel_deviation", r->max_rel_dev, "error_estimate", r->err_est,
                                      "note", r->note);
        if (!row) Py_CLEAR(rows);
        else PyList_SET_ITEM(rows, i, row);
    }
    PyObject *result = rows ? Py_BuildValue("(sN)", c->reference, rows) : NULL;
    mbl_comparison_free(c);
    return result;
}

static PyMethodDef Model_methods[] = {
    {"info", (PyCFunction)Model_info, METH_NOARGS, "counts, name, file, the file's operating-point kind"},
    {"names", (PyCFunction)Model_names, METH_VARARGS, "names('coordinates'|'inputs'|'outputs'|'parameters')"},
    {"param_values", (PyCFunction)Model_param_values, METH_NOARGS, "parameter values (after the settings)"},
    {"point", (PyCFunction)Model_point, METH_VARARGS, "point(at, q, v, guess, t, options) -> Point"},
    {"linearize", (PyCFunction)Model_linearize, METH_VARARGS, "linearize(point, options, zero_tol) -> dict"},
    {"compare", (PyCFunction)Model_compare, METH_VARARGS, "compare(point, options, repeat) -> (reference, rows)"},
    {"sensitivity", (PyCFunction)py_Model_sensitivity, METH_VARARGS, "sensitivity(point, wrt, shapes) -> dict"},
    {"freqresp", (PyCFunction)py_Model_freqresp, METH_VARARGS, "freqresp(point, input, output, w) -> dict"},
    {"optimize", (PyCFunction)py_Model_optimize, METH_VARARGS,
     "optimize(sets, params, objective, constraints, algorithm, max_eval, xtol, ftol, ctol, feas_tol, kkt_tol, min_mac, "
     "at) -> dict"},
    {"sweep", (PyCFunction)py_Model_sweep, METH_VARARGS,
     "sweep(sets, param, from, to, count, threads, at, max_points) -> dict"},
    {"boundary", (PyCFunction)py_Model_boundary, METH_VARARGS,
     "boundary(sets, param, near, order, tol, mode, at[, shape, branch, sweep, from, to]) -> dict"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mblin._core.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded, compiled model (mbl_model); use mblin.Model.",
    .tp_methods = Model_methods,
};

/* ---- Point ---------------------------------------------------------------------------------- */

static void Point_dealloc(PointObject *self)
{
    mbl_point_free(self->point);
    Py_XDECREF(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Point_to_dict(PointObject *self, PyObject *noargs)
{
    (void)noargs;
    const mbl_point *p = self->point;
    mbl_model_info in;
    mbl_model_get_info(self->owner->model, &in);
    PyObject *y = py_vector(NULL, in.noutput);
    if (!y) return NULL;
    mbl_status st;
    mbl_status_clear(&st);
    if (in.noutput > 0 &&
        mbl_model_outputs(self->owner->model, p, (double *)PyArray_DATA((PyArrayObject *)y), &st)) {
        Py_DECREF(y);
        return py_raise_status(&st);
    }
    PyObject *d = PyDict_New();
    if (!d) {
        Py_DECREF(y);
        return NULL;
    }
    if (py_put(d, "at", PyUnicode_FromString(py_at_name(p->at))) || py_put(d, "t", PyFloat_FromDouble(p->t)) ||
        py_put(d, "q", py_vector(p->q, p->n)) || py_put(d, "v", py_vector(p->v, p->n)) ||
        py_put(d, "vdot", py_vector(p->vdot, p->n)) || py_put(d, "lambda", py_vector(p->lambda, p->m)) ||
        py_put(d, "mu", py_vector(p->mu, p->k)) || py_put(d, "inputs", py_vector(p->r, p->nr)) ||
        py_put(d, "outputs", y) || py_put(d, "iterations", PyLong_FromLong(p->iterations)) ||
        py_put(d, "residual", PyFloat_FromDouble(p->residual)) ||
        py_put(d, "scaled_residual", PyFloat_FromDouble(p->scaled_residual)) ||
        py_put(d, "constraint_rank", PyLong_FromLong(p->rank_phi_q)) ||
        py_put(d, "min_norm_multipliers", PyBool_FromLong(p->min_norm_multipliers)) ||
        py_put(d, "notes", PyUnicode_FromString(p->notes)) || py_put(d, "trim", PyUnicode_FromString(p->trim)) ||
        py_put(d, "trim_residual", PyFloat_FromDouble(p->trim_residual))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyMethodDef Point_methods[] = {
    {"to_dict", (PyCFunction)Point_to_dict, METH_NOARGS, "the point's fields and the outputs at it"},
    {NULL, NULL, 0, NULL}};

PyTypeObject py_PointType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mblin._core.Point",
    .tp_basicsize = sizeof(PointObject),
    .tp_dealloc = (destructor)Point_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An operating point of a model (mbl_point); use mblin.OperatingPoint.",
    .tp_methods = Point_methods,
};

/* ---- module ------------------------------------------------------------------------------- */

static PyObject *core_methods(PyObject *mod, PyObject *noargs)
{
    (void)mod, (void)noargs;
    int n = mbl_lin_method_count();
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *s = PyUnicode_FromString(mbl_lin_method_name(i));
        if (!s) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, s);
    }
    return l;
}

static PyObject *core_version(PyObject *mod, PyObject *noargs)
{
    (void)mod, (void)noargs;
    return PyUnicode_FromString(mbl_version());
}

/* constant(text) -> float: a constant expression's value (mblx_eval_text), as --set reads one */
static PyObject *core_constant(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#", &text, &len)) return NULL;
    double x = 0;
    mbl_status st;
    if (mblx_eval_text(text, (size_t)len, &x, &st)) return py_raise_status(&st);
    return PyFloat_FromDouble(x);
}

static PyMethodDef core_functions[] = {
    {"load_file", core_load_file, METH_VARARGS,
     "load_file(path, sets, states, velocity_states[, outputs, user, allow_user_code]) -> Model"},
    {"load_string", core_load_string, METH_VARARGS,
     "load_string(text, name, sets, states, velocity_states[, outputs, user, allow_user_code]) -> Model"},
    {"constant", core_constant, METH_VARARGS, "constant(text) -> float: a constant expression's value (2, pi/2)"},
    {"methods", core_methods, METH_NOARGS, "the linearization methods"},
    {"version", core_version, METH_NOARGS, "the library version"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "mblin._core",
                                         "The C extension under the mblin package (thin client of libmblin).", -1,
                                         core_functions, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&ModelType) < 0 || PyType_Ready(&py_PointType) < 0) return NULL;
    PyObject *errors = PyImport_ImportModule("mblin._errors");
    if (!errors) return NULL;
    py_from_status = PyObject_GetAttrString(errors, "from_status");
    Py_DECREF(errors);
    if (!py_from_status) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    Py_INCREF(&ModelType);
    Py_INCREF(&py_PointType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0 ||
        PyModule_AddObject(m, "Point", (PyObject *)&py_PointType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

