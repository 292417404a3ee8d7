/* mblin._core: the CPython extension under the Python package `mblin` (python/mblin/__init__.py).
 *
 * A thin client of the public C API (include/mblin/), like the command line: it loads models,
 * finds operating points, linearizes and computes modes, and hands the results to Python as
 * plain objects (dicts of NumPy arrays, lists of names). The user-facing classes, docstrings and
 * argument checks live in __init__.py; this file only converts between C and Python.
 *
 *   load_file(path, sets, states, velocity_states) -> Model
 *   load_string(text, name, sets, states, velocity_states) -> Model
 *   Model.info(), .names(kind), .parameters()
 *   Model.point(at, q, v, guess, t, options) -> Point
 *   Model.linearize(point, options, zero_tol) -> dict (the mbl_linear and mbl_modes fields)
 *   Model.compare(point, options, repeat) -> (reference, [row dicts])
 *   Point.to_dict() -> dict
 *   methods(), version()
 *
 * Errors: a failing library call raises the exception mblin._errors.from_status(code, message)
 * builds (a subclass of mblin.Error). The heavy calls release the GIL: a loaded model is
 * immutable and serves many threads (include/mblin/model.h).
 *
 *   sweep(path, sets, param, from, to, count, threads, at) -> dict (the model loaded, mbl_sweep_run, one axis)
 *   boundary(path, sets, param, near, order, mode, tol, at) -> dict (mbl_boundary)
 *   Model.sensitivity(point, wrt, shapes) -> dict (mbl_sensitivity_compute)
 *   Model.freqresp(point, input, output, w) -> dict (mbl_freqresp) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <string.h>

#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "mblin/sweep.h"

static PyObject *from_status = NULL; /* mblin._errors.from_status */

/* Raise the mblin.Error subclass for a failed status; returns NULL. */
static PyObject *raise_status(const mbl_status *st)
{
    const char *msg = st->msg[0] ? st->msg : mbl_strerror(st->code);
    PyObject *exc = PyObject_CallFunction(from_status, "is", st->code, msg);
    if (!exc) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- conversions ------------------------------------------------------------------------ */

/* A rows x cols C-ordered float64 array from a column-major matrix (NULL data: None). */
static PyObject *matrix(const double *a, int rows, int cols)
{
    if (!a) Py_RETURN_NONE;
    npy_intp dims[2] = {rows, cols};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!arr) return NULL;
    double *d = (double *)PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) d[(size_t)i * (size_t)cols + (size_t)j] = a[i + (size_t)j * (size_t)rows];
    return arr;
}

/* A rows x cols complex128 array from column-major real and imaginary parts. */
static PyObject *cmatrix(const double *re, const double *im, int rows, int cols)
{
    if (!re) Py_RETURN_NONE;
    npy_intp dims[2] = {rows, cols};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_COMPLEX128);
    if (!arr) return NULL;
    double *d = (double *)PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            size_t s = i + (size_t)j * (size_t)rows, t = 2 * ((size_t)i * (size_t)cols + (size_t)j);
            d[t] = re[s];
            d[t + 1] = im ? im[s] : 0.0;
        }
    return arr;
}

static PyObject *vector(const double *a, int n)
{
    npy_intp dims[1] = {n};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!arr) return NULL;
    if (n > 0 && a) memcpy(PyArray_DATA((PyArrayObject *)arr), a, (size_t)n * sizeof(double));
    return arr;
}

static PyObject *names(char **s, int n)
{
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyUnicode_FromString(s && s[i] ? s[i] : "");
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

/* d[key] = value, stealing value; returns -1 when value is NULL or the insertion fails. */
static int put(PyObject *d, const char *key, PyObject *value)
{
    if (!value) return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

/* A sequence of (name, value) pairs -> mbl_setting array whose names point into the Python
 * strings kept alive by `keep` (a new list the caller releases). */
static int settings(PyObject *seq, mbl_setting **out, int *n, PyObject **keep)
{
    *out = NULL;
    *n = 0;
    *keep = NULL;
    if (seq == Py_None) return 0;
    PyObject *fast = PySequence_Fast(seq, "settings must be a sequence of (name, value) pairs");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > 100000) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many settings");
        return -1;
    }
    mbl_setting *s = PyMem_Calloc((size_t)(len ? len : 1), sizeof *s);
    if (!s) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        const char *name;
        double value;
        if (!PyArg_ParseTuple(item, "sd;a setting is a (name, value) pair", &name, &value)) {
            PyMem_Free(s);
            Py_DECREF(fast);
            return -1;
        }
        s[i].name = name; /* the UTF-8 buffer of a str owned by `fast` */
        s[i].value = value;
    }
    *out = s;
    *n = (int)len;
    *keep = fast;
    return 0;
}

/* None or a sequence of str -> array of C strings owned by the sequence kept in `keep`. */
static int strings(PyObject *seq, const char ***out, int *n, PyObject **keep)
{
    *out = NULL;
    *n = 0;
    *keep = NULL;
    if (seq == Py_None) return 0;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of str");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    const char **s = PyMem_Calloc((size_t)(len ? len : 1), sizeof *s);
    if (!s) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        s[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!s[i]) {
            PyMem_Free(s);
            Py_DECREF(fast);
            return -1;
        }
    }
    *out = s;
    *n = (int)len;
    *keep = fast;
    return 0;
}

/* None or a sequence of n floats -> a PyMem array (NULL for None). */
static int doubles(PyObject *seq, int n, const char *what, double **out)
{
    *out = NULL;
    if (seq == Py_None) return 0;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of numbers");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d values, got %zd", what, n, PySequence_Fast_GET_SIZE(fast));
        Py_DECREF(fast);
        return -1;
    }
    double *d = PyMem_Calloc((size_t)(n ? n : 1), sizeof *d);
    if (!d) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < n; i++) {
        d[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if (d[i] == -1.0 && PyErr_Occurred()) {
            PyMem_Free(d);
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    *out = d;
    return 0;
}

static const char *at_name(mbl_at at)
{
    return at == MBL_AT_GIVEN ? "given" : at == MBL_AT_STEADY ? "steady" : "equilibrium";
}

/* ---- Model ---------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD mbl_model *model;
} ModelObject;

typedef struct {
    PyObject_HEAD ModelObject *owner; /* the model the point belongs to (kept alive) */
    mbl_point *point;
} PointObject;

static PyTypeObject ModelType;
static PyTypeObject PointType;

static void Model_dealloc(ModelObject *self)
{
    mbl_model_free(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *wrap_model(mbl_model *m)
{
    ModelObject *o = PyObject_New(ModelObject, &ModelType);
    if (!o) {
        mbl_model_free(m);
        return NULL;
    }
    o->model = m;
    return (PyObject *)o;
}

/* The arguments shared by load_file and load_string: sets, states, velocity_states. */
typedef struct {
    mbl_setting *sets;
    int nsets;
    const char **states, **vstates;
    int nstates, nvstates;
    PyObject *keep[3];
    mbl_load_options opt;
} load_args;

static int load_args_get(load_args *a, PyObject *sets, PyObject *states, PyObject *vstates)
{
    memset(a, 0, sizeof *a);
    mbl_load_options_default(&a->opt);
    if (settings(sets, &a->sets, &a->nsets, &a->keep[0])) return -1;
    if (strings(states, &a->states, &a->nstates, &a->keep[1])) return -1;
    if (strings(vstates, &a->vstates, &a->nvstates, &a->keep[2])) return -1;
    if (states != Py_None) a->opt.states = a->states, a->opt.nstates = a->nstates;
    if (vstates != Py_None) a->opt.velocity_states = a->vstates, a->opt.nvelocity_states = a->nvstates;
    return 0;
}

static void load_args_free(load_args *a)
{
    PyMem_Free(a->sets);
    PyMem_Free(a->states);
    PyMem_Free(a->vstates);
    for (int i = 0; i < 3; i++) Py_XDECREF(a->keep[i]);
}

static PyObject *core_load_file(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path_obj, *sets, *states, *vstates, *path_bytes = NULL;
    if (!PyArg_ParseTuple(args, "OOOO", &path_obj, &sets, &states, &vstates)) return NULL;
    if (!PyUnicode_FSConverter(path_obj, &path_bytes)) return NULL;
    load_args a;
    if (load_args_get(&a, sets, states, vstates)) {
        load_args_free(&a);
        Py_DECREF(path_bytes);
        return NULL;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *m = NULL;
    int rc;
    const char *path = PyBytes_AS_STRING(path_bytes);
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_model_load_file_opt(path, a.sets, a.nsets, &a.opt, &m, &st);
    Py_END_ALLOW_THREADS
    load_args_free(&a);
    Py_DECREF(path_bytes);
    if (rc) return raise_status(&st);
    return wrap_model(m);
}

static PyObject *core_load_string(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text, *name;
    Py_ssize_t len;
    PyObject *sets, *states, *vstates;
    if (!PyArg_ParseTuple(args, "s#sOOO", &text, &len, &name, &sets, &states, &vstates)) return NULL;
    load_args a;
    if (load_args_get(&a, sets, states, vstates)) {
        load_args_free(&a);
        return NULL;
    }
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *m = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_model_load_string_opt(text, (size_t)len, name, a.sets, a.nsets, &a.opt, &m, &st);
    Py_END_ALLOW_THREADS
    load_args_free(&a);
    if (rc) return raise_status(&st);
    return wrap_model(m);
}

static PyObject *Model_info(ModelObject *self, PyObject *noargs)
{
    (void)noargs;
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    return Py_BuildValue("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:d}", "name", in.name ? in.name : "", "file",
                         in.file ? in.file : "", "ncoord", in.ncoord, "nhol", in.nhol, "nnh", in.nnh, "ninput",
                         in.ninput, "noutput", in.noutput, "nparam", in.nparam, "nuser_states", in.nuser_states,
                         "nuser_velocity_states", in.nuser_velocity_states, "at", at_name(in.at), "time", in.time);
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
    PyObject *arr = vector(NULL, in.nparam);
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
 * max_iter, tol, abs_tol, step_tol, move_note, rank_tol. */
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
    mbl_setting *guess = NULL;
    int nguess = 0;
    PyObject *keep = NULL;
    PyObject *result = NULL;
    if (doubles(q_obj, in.ncoord, "q", &q) || doubles(v_obj, in.ncoord, "v", &v) ||
        settings(guess_obj, &guess, &nguess, &keep))
        goto done;
    o.q = q;
    o.v = v;
    o.guess = guess;
    o.nguess = nguess;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_point *p = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_operating_point(self->model, &o, &p, &st);
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_status(&st);
        goto done;
    }
    PointObject *po = PyObject_New(PointObject, &PointType);
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
    Py_XDECREF(keep);
    return result;
}

/* mbl_lin_options from a dict of the same field names (partial: "auto", "always", "never"). */
static int lin_options(PyObject *d, mbl_lin_options *o, PyObject **method_keep)
{
    mbl_lin_options_default(o);
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
        opt_double(d, "fd_tol", &o->fd_tol) || opt_double(d, "mem_budget", &o->mem_budget))
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

static const char *kind_name(int kind)
{
    return kind == MBL_MODE_REAL ? "real" : kind == MBL_MODE_ZERO ? "zero" : "oscillatory";
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
    int bad = put(d, "method", PyUnicode_FromString(L->method)) || put(d, "n", PyLong_FromLong(n)) ||
              put(d, "nx", PyLong_FromLong(nx)) || put(d, "nu", PyLong_FromLong(nu)) ||
              put(d, "ny", PyLong_FromLong(ny)) || put(d, "z0", PyLong_FromLong(z0)) ||
              put(d, "z1", PyLong_FromLong(z1)) ||
              put(d, "state_names", L->state_names ? names(L->state_names, nx) : (Py_INCREF(Py_None), Py_None)) ||
              put(d, "input_names", names(L->input_names, nu)) || put(d, "output_names", names(L->output_names, ny)) ||
              put(d, "A", matrix(L->A, nx, nx)) || put(d, "B", matrix(L->B, nx, nu)) ||
              put(d, "C", matrix(L->C, ny, nx)) || put(d, "D", matrix(L->D, ny, nu)) ||
              put(d, "M", matrix(L->M, z1, z1)) || put(d, "Cd", matrix(L->Cd, z1, z1)) ||
              put(d, "K", matrix(L->K, z1, z0)) || put(d, "F", matrix(L->F, z1, nu)) ||
              put(d, "q_S", matrix(L->q_S, n, z0)) || put(d, "v_W", matrix(L->v_W, n, z1)) ||
              put(d, "cond", PyFloat_FromDouble(L->cond)) || put(d, "nsel_added", PyLong_FromLong(L->nsel_added)) ||
              put(d, "nsel_dropped", PyLong_FromLong(L->nsel_dropped)) ||
              put(d, "selection", PyUnicode_FromString(L->selection)) ||
              put(d, "eig_partial", PyBool_FromLong(spec ? spec->partial : 0)) ||
              put(d, "eig_shift", PyFloat_FromDouble(spec ? spec->shift : 0.0)) ||
              put(d, "spectrum_reason", PyUnicode_FromString(spec ? spec->reason : "")) ||
              put(d, "err_est", PyFloat_FromDouble(L->err_est)) || put(d, "nd", PyLong_FromLong(nd)) ||
              put(d, "E", matrix(ds ? ds->E : NULL, nd, nd)) || put(d, "Ad", matrix(ds ? ds->Ad : NULL, nd, nd)) ||
              put(d, "Bd", matrix(ds ? ds->Bd : NULL, nd, nu)) || put(d, "Cdd", matrix(ds ? ds->Cdd : NULL, ny, nd)) ||
              put(d, "notes", PyUnicode_FromString(L->notes));
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
        PyList_SET_ITEM(kinds, i, PyUnicode_FromString(kind_name(md->kind)));
        if (!PyList_GET_ITEM(kinds, i)) bad = 1;
    }
    bad |= put(d, "eigenvalues", ev) | put(d, "freq_hz", fr) | put(d, "damping_ratio", dr) |
           put(d, "backward_error", be) | put(d, "error_estimates", ee) | put(d, "spurious", sp) |
           put(d, "kinds", kinds) |
           put(d, "shapes", cmatrix(M->shape_re, M->shape_im, M->n, ne)) |
           put(d, "zero_tol", PyFloat_FromDouble(M->zero_tol)) | put(d, "eigen_solver", PyUnicode_FromString(M->solver));
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
    if (!PyArg_ParseTuple(args, "O!O!d", &PointType, &pt, &PyDict_Type, &opts, &zero_tol)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    mbl_lin_options o;
    PyObject *keep;
    if (lin_options(opts, &o, &keep)) return NULL;
    mbl_modal_options mo;
    mbl_modal_options_default(&mo);
    if (zero_tol > 0) mo.zero_tol = zero_tol;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_linearize(self->model, pt->point, &o, &lin, &st);
    if (!rc) rc = mbl_modal(lin, &mo, &modes, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(keep);
    PyObject *result = rc ? raise_status(&st) : linear_dict(lin, modes);
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
    if (!PyArg_ParseTuple(args, "O!O!i", &PointType, &pt, &PyDict_Type, &opts, &repeat)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    mbl_lin_options o;
    PyObject *keep;
    if (lin_options(opts, &o, &keep)) return NULL;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_comparison *c = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_compare(self->model, pt->point, &o, repeat, &c, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(keep);
    if (rc) return raise_status(&st);
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

/* ---- studies (include/mblin/sweep.h, sensitivity.h) --------------------------------------- */

/* sweep(path, sets, name, from, to, count, threads, popt_at) -> dict of the mbl_sweep fields
 * (one axis; arrays npoints x nmodes). */
static PyObject *core_sweep(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path_obj, *sets_obj, *path_bytes = NULL;
    const char *name;
    double from, to;
    int count, threads, at;
    if (!PyArg_ParseTuple(args, "OOsddiii", &path_obj, &sets_obj, &name, &from, &to, &count, &threads, &at))
        return NULL;
    if (!PyUnicode_FSConverter(path_obj, &path_bytes)) return NULL;
    mbl_setting *sets = NULL;
    int nsets = 0;
    PyObject *keep = NULL, *result = NULL;
    if (settings(sets_obj, &sets, &nsets, &keep)) goto done;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = at;
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0].name = name;
    so.axis[0].from = from;
    so.axis[0].to = to;
    so.axis[0].count = count;
    so.threads = threads;
    so.sets = sets;
    so.nsets = nsets;
    so.popt = &po;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_sweep *sw = NULL;
    int rc;
    const char *path = PyBytes_AS_STRING(path_bytes);
    Py_BEGIN_ALLOW_THREADS
    mbl_model *md = NULL;
    rc = mbl_model_load_file(path, sets, nsets, &md, &st);
    if (!rc) rc = mbl_sweep_run(md, &so, &sw, &st);
    mbl_model_free(md);
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_status(&st);
        goto done;
    }
    int np = sw->npoints, nm = sw->nmodes;
    npy_intp dims[2] = {np, nm};
    PyObject *ev = PyArray_SimpleNew(2, dims, NPY_COMPLEX128), *ok = PyArray_SimpleNew(1, dims, NPY_BOOL),
             *errs = PyList_New(np);
    if (!ev || !ok || !errs) {
        Py_XDECREF(ev), Py_XDECREF(ok), Py_XDECREF(errs);
        mbl_sweep_free(sw);
        goto done;
    }
    double *evd = PyArray_DATA((PyArrayObject *)ev);
    npy_bool *okd = PyArray_DATA((PyArrayObject *)ok);
    int bad = 0;
    for (size_t i = 0; i < (size_t)np * (size_t)nm; i++) evd[2 * i] = sw->re[i], evd[2 * i + 1] = sw->im[i];
    for (int p = 0; p < np; p++) {
        okd[p] = sw->ok[p] ? NPY_TRUE : NPY_FALSE;
        PyObject *e = sw->error && sw->error[p] ? PyUnicode_FromString(sw->error[p]) : (Py_INCREF(Py_None), Py_None);
        if (!e) bad = 1, e = (Py_INCREF(Py_None), Py_None);
        PyList_SET_ITEM(errs, p, e);
    }
    PyObject *d = PyDict_New();
    if (!d || bad) {
        Py_XDECREF(d), Py_DECREF(ev), Py_DECREF(ok), Py_DECREF(errs);
        mbl_sweep_free(sw);
        goto done;
    }
    /* value, freq_hz, damping, mac: C-ordered npoints x nmodes is the library's layout */
    PyObject *fr = PyArray_SimpleNew(2, dims, NPY_DOUBLE), *dr = PyArray_SimpleNew(2, dims, NPY_DOUBLE),
             *mc = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (fr) memcpy(PyArray_DATA((PyArrayObject *)fr), sw->freq_hz, sizeof(double) * (size_t)np * (size_t)nm);
    if (dr) memcpy(PyArray_DATA((PyArrayObject *)dr), sw->damping, sizeof(double) * (size_t)np * (size_t)nm);
    if (mc) memcpy(PyArray_DATA((PyArrayObject *)mc), sw->mac, sizeof(double) * (size_t)np * (size_t)nm);
    bad = put(d, "values", vector(sw->value, np)) | put(d, "eigenvalues", ev) | put(d, "freq_hz", fr) |
          put(d, "damping_ratio", dr) | put(d, "mac", mc) | put(d, "ok", ok) | put(d, "errors", errs) |
          put(d, "fast", PyBool_FromLong(sw->fast)) | put(d, "threads", PyLong_FromLong(sw->threads)) |
          put(d, "seconds", PyFloat_FromDouble(sw->seconds)) | put(d, "n", PyLong_FromLong(sw->n));
    mbl_sweep_free(sw);
    if (bad) Py_DECREF(d);
    else result = d;
done:
    PyMem_Free(sets);
    Py_XDECREF(keep);
    Py_DECREF(path_bytes);
    return result;
}

/* sensitivity(point, wrt (list of parameter indices or None), shapes) -> dict */
static PyObject *Model_sensitivity(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    PyObject *wrt_obj;
    int shapes;
    if (!PyArg_ParseTuple(args, "O!Op", &PointType, &pt, &wrt_obj, &shapes)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    mbl_model_info in;
    mbl_model_get_info(self->model, &in);
    int *wrt = NULL, nwrt = in.nparam;
    if (wrt_obj != Py_None) {
        PyObject *fast = PySequence_Fast(wrt_obj, "wrt must be a sequence of parameter indices");
        if (!fast) return NULL;
        nwrt = (int)PySequence_Fast_GET_SIZE(fast);
        wrt = PyMem_Calloc((size_t)(nwrt ? nwrt : 1), sizeof *wrt);
        for (int i = 0; wrt && i < nwrt; i++) {
            long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
            if ((x == -1 && PyErr_Occurred()) || x < 0 || x >= in.nparam) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "parameter index out of range");
                PyMem_Free(wrt);
                Py_DECREF(fast);
                return NULL;
            }
            wrt[i] = (int)x;
        }
        Py_DECREF(fast);
        if (!wrt) return PyErr_NoMemory();
    }
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    so.shapes = shapes;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_dae_deriv *dd = NULL;
    mbl_sensitivity *S = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mbl_dae_deriv_new(self->model, &dd, &st);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt->point, wrt, nwrt, &so, &S, &st);
    Py_END_ALLOW_THREADS
    PyMem_Free(wrt);
    if (rc) {
        mbl_dae_deriv_free(dd);
        return raise_status(&st);
    }
    int nm = S->nmode, nw = S->nwrt, n = S->n;
    npy_intp d1[1] = {nm}, d2[2] = {nm, nw};
    PyObject *ev = PyArray_SimpleNew(1, d1, NPY_COMPLEX128), *dev = PyArray_SimpleNew(2, d2, NPY_COMPLEX128),
             *fr = PyArray_SimpleNew(1, d1, NPY_DOUBLE), *dr = PyArray_SimpleNew(1, d1, NPY_DOUBLE),
             *dfr = PyArray_SimpleNew(2, d2, NPY_DOUBLE), *ddr = PyArray_SimpleNew(2, d2, NPY_DOUBLE),
             *def = PyArray_SimpleNew(1, d1, NPY_BOOL), *kinds = PyList_New(nm), *widx = PyList_New(nw);
    PyObject *d = PyDict_New();
    int bad = !ev || !dev || !fr || !dr || !dfr || !ddr || !def || !kinds || !widx || !d;
    if (!bad) {
        double *evd = PyArray_DATA((PyArrayObject *)ev), *devd = PyArray_DATA((PyArrayObject *)dev),
               *frd = PyArray_DATA((PyArrayObject *)fr), *drd = PyArray_DATA((PyArrayObject *)dr),
               *dfrd = PyArray_DATA((PyArrayObject *)dfr), *ddrd = PyArray_DATA((PyArrayObject *)ddr);
        npy_bool *defd = PyArray_DATA((PyArrayObject *)def);
        for (int i = 0; i < nm; i++) {
            const mbl_sens_mode *md = &S->modes[i];
            evd[2 * i] = md->re, evd[2 * i + 1] = md->im;
            frd[i] = md->freq_hz, drd[i] = md->damping_ratio;
            defd[i] = md->defined ? NPY_TRUE : NPY_FALSE;
            PyList_SET_ITEM(kinds, i, PyUnicode_FromString(kind_name(md->kind)));
            for (int w = 0; w < nw; w++) {
                size_t t = (size_t)i * (size_t)nw + (size_t)w;
                devd[2 * t] = md->dre[w], devd[2 * t + 1] = md->dim[w];
                dfrd[t] = md->dfreq_hz[w], ddrd[t] = md->ddamping[w];
            }
        }
        for (int w = 0; w < nw; w++) PyList_SET_ITEM(widx, w, PyLong_FromLong(S->wrt[w]));
        PyObject *dsh = Py_None;
        Py_INCREF(Py_None);
        if (S->dshape_re) {
            Py_DECREF(Py_None);
            npy_intp d3[3] = {n, nm, nw};
            dsh = PyArray_SimpleNew(3, d3, NPY_COMPLEX128);
            if (dsh) {
                double *o = PyArray_DATA((PyArrayObject *)dsh);
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < nm; j++)
                        for (int w = 0; w < nw; w++) {
                            size_t s = (size_t)i + (size_t)n * ((size_t)j + (size_t)nm * (size_t)w);
                            size_t t = 2 * (((size_t)i * (size_t)nm + (size_t)j) * (size_t)nw + (size_t)w);
                            o[t] = S->dshape_re[s], o[t + 1] = S->dshape_im[s];
                        }
            }
        }
        PyObject *pdef = PyArray_SimpleNew(1, (npy_intp[]){nw}, NPY_BOOL);
        if (pdef)
            for (int w = 0; w < nw; w++)
                ((npy_bool *)PyArray_DATA((PyArrayObject *)pdef))[w] = S->point_defined[w] ? NPY_TRUE : NPY_FALSE;
        bad = put(d, "eigenvalues", ev) | put(d, "d_eigenvalues", dev) | put(d, "freq_hz", fr) |
              put(d, "damping_ratio", dr) | put(d, "d_freq_hz", dfr) | put(d, "d_damping_ratio", ddr) |
              put(d, "defined", def) | put(d, "kinds", kinds) | put(d, "wrt", widx) |
              put(d, "shapes", cmatrix(S->shape_re, S->shape_im, n, nm)) | put(d, "d_shapes", dsh) |
              put(d, "dq", matrix(S->dq, n, nw)) | put(d, "dv", matrix(S->dv, n, nw)) |
              put(d, "dlambda", matrix(S->dlambda, S->m, nw)) | put(d, "point_defined", pdef) |
              put(d, "notes", PyUnicode_FromString(S->notes));
        ev = dev = fr = dr = dfr = ddr = def = kinds = widx = NULL;
    }
    Py_XDECREF(ev), Py_XDECREF(dev), Py_XDECREF(fr), Py_XDECREF(dr), Py_XDECREF(dfr), Py_XDECREF(ddr);
    Py_XDECREF(def), Py_XDECREF(kinds), Py_XDECREF(widx);
    mbl_sensitivity_free(S);
    mbl_dae_deriv_free(dd);
    if (bad) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* boundary(path, sets, param, near, order, mode, tol, at) -> dict */
static PyObject *core_boundary(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path_obj, *sets_obj, *path_bytes = NULL;
    const char *param;
    double near, order, tol;
    int mode, at;
    if (!PyArg_ParseTuple(args, "OOsdddii", &path_obj, &sets_obj, &param, &near, &order, &tol, &mode, &at))
        return NULL;
    if (!PyUnicode_FSConverter(path_obj, &path_bytes)) return NULL;
    mbl_setting *sets = NULL;
    int nsets = 0;
    PyObject *keep = NULL, *result = NULL;
    if (settings(sets_obj, &sets, &nsets, &keep)) goto done;
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    bo.opoint.at = at;
    bo.order = order;
    bo.mode = mode;
    if (tol > 0) bo.tol = tol;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_boundary_result r;
    int rc;
    const char *path = PyBytes_AS_STRING(path_bytes);
    Py_BEGIN_ALLOW_THREADS
    mbl_model *md = NULL;
    rc = mbl_model_load_file(path, sets, nsets, &md, &st);
    if (!rc) rc = mbl_boundary(md, sets, nsets, param, near, &bo, &r, &st);
    mbl_model_free(md);
    Py_END_ALLOW_THREADS
    if (rc) raise_status(&st);
    else
        result = Py_BuildValue("{s:d,s:D,s:d,s:d,s:i,s:i,s:d}", "value", r.value, "eigenvalue",
                               &(Py_complex){r.re, r.im}, "f_near", r.f_near, "slope", r.slope, "iterations",
                               r.iterations, "mode_near", r.mode_near, "last_step", r.last_step);
done:
    PyMem_Free(sets);
    Py_XDECREF(keep);
    Py_DECREF(path_bytes);
    return result;
}

/* freqresp(point, input index, output index, w) -> dict (the mbl_freqresp_result fields) */
static PyObject *Model_freqresp(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    int iu, iy;
    PyObject *w_obj;
    if (!PyArg_ParseTuple(args, "O!iiO", &PointType, &pt, &iu, &iy, &w_obj)) return NULL;
    if (pt->owner != self) return PyErr_Format(PyExc_ValueError, "the operating point belongs to another model");
    PyArrayObject *wa = (PyArrayObject *)PyArray_FROMANY(w_obj, NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!wa) return NULL;
    const double *w = PyArray_DATA(wa);
    int nw = (int)PyArray_DIM(wa, 0);
    mbl_status st;
    mbl_status_clear(&st);
    mbl_linear *lin = NULL, *desc = NULL;
    mbl_freqresp_result *fr = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    rc = mbl_linearize(self->model, pt->point, &lo, &lin, &st);
    if (!rc) {
        /* the descriptor pencil of the same point when the method answers, as the CLI does */
        mbl_lin_options lod = lo;
        lod.method = "descriptor";
        lod.partial = MBL_PARTIAL_NEVER;
        mbl_status st2;
        mbl_status_clear(&st2);
        if (mbl_linearize(self->model, pt->point, &lod, &desc, &st2)) desc = NULL;
        rc = mbl_freqresp(lin, desc, iu, iy, w, nw, &fr, &st);
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(wa);
    mbl_linear_free(desc);
    mbl_linear_free(lin);
    if (rc) return raise_status(&st);
    npy_intp dn[1] = {fr->nw};
    PyObject *g = PyArray_SimpleNew(1, dn, NPY_COMPLEX128), *d = PyDict_New();
    if (g)
        for (int k = 0; k < fr->nw; k++) {
            ((double *)PyArray_DATA((PyArrayObject *)g))[2 * k] = fr->re[k];
            ((double *)PyArray_DATA((PyArrayObject *)g))[2 * k + 1] = fr->im[k];
        }
    PyObject *form = PyList_New(fr->nw);
    for (int k = 0; form && k < fr->nw; k++)
        PyList_SET_ITEM(form, k, PyUnicode_FromString(fr->form[k] == MBL_FR_DESCRIPTOR ? "descriptor" : "state_space"));
    int bad = !d || !g || !form;
    if (!bad) {
        bad = put(d, "w", vector(fr->w, fr->nw)) | put(d, "response", g) | put(d, "mag", vector(fr->mag, fr->nw)) |
              put(d, "mag_db", vector(fr->mag_db, fr->nw)) | put(d, "phase_deg", vector(fr->phase_deg, fr->nw)) |
              put(d, "rcond", vector(fr->rcond, fr->nw)) | put(d, "form", form);
        form = g = NULL;
    }
    Py_XDECREF(g);
    Py_XDECREF(form);
    mbl_freqresp_free(fr);
    if (bad) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

static PyMethodDef Model_methods[] = {
    {"info", (PyCFunction)Model_info, METH_NOARGS, "counts, name, file, the file's operating-point kind"},
    {"names", (PyCFunction)Model_names, METH_VARARGS, "names('coordinates'|'inputs'|'outputs'|'parameters')"},
    {"param_values", (PyCFunction)Model_param_values, METH_NOARGS, "parameter values (after the settings)"},
    {"point", (PyCFunction)Model_point, METH_VARARGS, "point(at, q, v, guess, t, options) -> Point"},
    {"linearize", (PyCFunction)Model_linearize, METH_VARARGS, "linearize(point, options, zero_tol) -> dict"},
    {"compare", (PyCFunction)Model_compare, METH_VARARGS, "compare(point, options, repeat) -> (reference, rows)"},
    {"sensitivity", (PyCFunction)Model_sensitivity, METH_VARARGS, "sensitivity(point, wrt, shapes) -> dict"},
    {"freqresp", (PyCFunction)Model_freqresp, METH_VARARGS, "freqresp(point, input, output, w) -> dict"},
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
    PyObject *y = vector(NULL, in.noutput);
    if (!y) return NULL;
    mbl_status st;
    mbl_status_clear(&st);
    if (in.noutput > 0 &&
        mbl_model_outputs(self->owner->model, p, (double *)PyArray_DATA((PyArrayObject *)y), &st)) {
        Py_DECREF(y);
        return raise_status(&st);
    }
    PyObject *d = PyDict_New();
    if (!d) {
        Py_DECREF(y);
        return NULL;
    }
    if (put(d, "at", PyUnicode_FromString(at_name(p->at))) || put(d, "t", PyFloat_FromDouble(p->t)) ||
        put(d, "q", vector(p->q, p->n)) || put(d, "v", vector(p->v, p->n)) || put(d, "vdot", vector(p->vdot, p->n)) ||
        put(d, "lambda", vector(p->lambda, p->m)) || put(d, "mu", vector(p->mu, p->k)) ||
        put(d, "inputs", vector(p->r, p->nr)) || put(d, "outputs", y) ||
        put(d, "iterations", PyLong_FromLong(p->iterations)) || put(d, "residual", PyFloat_FromDouble(p->residual)) ||
        put(d, "scaled_residual", PyFloat_FromDouble(p->scaled_residual)) ||
        put(d, "constraint_rank", PyLong_FromLong(p->rank_phi_q)) ||
        put(d, "min_norm_multipliers", PyBool_FromLong(p->min_norm_multipliers)) ||
        put(d, "notes", PyUnicode_FromString(p->notes))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyMethodDef Point_methods[] = {
    {"to_dict", (PyCFunction)Point_to_dict, METH_NOARGS, "the point's fields and the outputs at it"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject PointType = {
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

static PyMethodDef core_functions[] = {
    {"load_file", core_load_file, METH_VARARGS, "load_file(path, sets, states, velocity_states) -> Model"},
    {"load_string", core_load_string, METH_VARARGS, "load_string(text, name, sets, states, velocity_states) -> Model"},
    {"sweep", core_sweep, METH_VARARGS, "sweep(path, sets, param, from, to, count, threads, at) -> dict"},
    {"boundary", core_boundary, METH_VARARGS, "boundary(path, sets, param, near, order, mode, tol, at) -> dict"},
    {"methods", core_methods, METH_NOARGS, "the linearization methods"},
    {"version", core_version, METH_NOARGS, "the library version"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "mblin._core",
                                         "The C extension under the mblin package (thin client of libmblin).", -1,
                                         core_functions, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&ModelType) < 0 || PyType_Ready(&PointType) < 0) return NULL;
    PyObject *errors = PyImport_ImportModule("mblin._errors");
    if (!errors) return NULL;
    from_status = PyObject_GetAttrString(errors, "from_status");
    Py_DECREF(errors);
    if (!from_status) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    Py_INCREF(&ModelType);
    Py_INCREF(&PointType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0 ||
        PyModule_AddObject(m, "Point", (PyObject *)&PointType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
