/* mblin._core, user routines written in Python (docs/python.md, "User routines"; the ABI:
 * include/mblin/user.h).
 *
 * load(..., user={"name": fn}) gives the library one mbl_user_routine_def per callable: its fn is
 * the trampoline below and its user_data the callable. The library calls a routine from whatever
 * thread evaluates the model (the caller's, with the GIL released around the long calls, or a
 * sweep's worker threads): the trampoline takes the GIL (PyGILState_Ensure, which also works on a
 * thread that holds it already) only around the Python call and the reading of its result.
 *
 * The callable gets x, a read-only NumPy array of the nin inputs (a copy: it may keep it), and
 * returns the nout outputs (a sequence of numbers or a 1-D array; a number when nout is 1). With
 * `partials: yes` it returns a pair (outputs, jacobian), jacobian nout x nin (nested sequences or a
 * 2-D array; a flat row of nin when nout is 1): told apart from plain outputs by structure, a pair
 * whose second item is not a number. An exception, a wrong length or a non-number is the routine's
 * failure, with one line ("ValueError: ...") that the library's message carries.
 *
 * What the definitions point to (the array, the names, the callables) lives in a capsule that the
 * model object keeps (ModelObject.user) as long as the model lives: the library's copies of a model
 * (the studies') live within one call on it. */
#include "_core.h"

#include <stdarg.h>
#include <string.h>

#define PY_USER_CAPSULE "mblin._core.user_routines"

/* The definitions and what they point to: one block. */
typedef struct py_user_set {
    int n;
    mbl_user_routine_def *defs; /* n */
    char *names;                /* n NUL-terminated names, defs[i].name pointing into it */
} py_user_set;

/* ---- the trampoline ------------------------------------------------------------------------- */

/* The one-line reason of a failure into the call's message (newlines made spaces). */
static int fail(mbl_user_call *c, const char *fmt, ...)
{
    if (c->message && c->message_size) {
        va_list ap;
        va_start(ap, fmt);
        PyOS_vsnprintf(c->message, c->message_size, fmt, ap);
        va_end(ap);
        for (char *p = c->message; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
    }
    return 1;
}

/* The pending Python exception as "Type: message" (cleared). A KeyboardInterrupt (Ctrl-C while the
 * callable ran) is also kept for the call that runs the library (py_interrupt_user): the library
 * stops at its next progress report and the call raises it, as without the routine. */
static int fail_exception(mbl_user_call *c)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (type && PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) py_interrupt_user();
    const char *tname = type && PyType_Check(type) ? ((PyTypeObject *)type)->tp_name : "exception";
    const char *dot = strrchr(tname, '.');
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!text) PyErr_Clear();
    fail(c, "%s%s%s", dot ? dot + 1 : tname, text && *text ? ": " : "", text ? text : "");
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return 1;
}

/* A number: an int or a float (Python's or NumPy's, a 0-d array), not a bool. */
static int is_number(PyObject *o)
{
    if (PyBool_Check(o) || PyArray_IsScalar(o, Bool)) return 0;
    if (PyFloat_Check(o) || PyLong_Check(o) || PyArray_IsScalar(o, Integer) || PyArray_IsScalar(o, Floating)) return 1;
    if (PyArray_Check(o)) {
        PyArrayObject *a = (PyArrayObject *)o;
        return PyArray_NDIM(a) == 0 && (PyArray_ISINTEGER(a) || PyArray_ISFLOAT(a));
    }
    return 0;
}

/* n numbers of o (what: "outputs", "jacobian row 2") into dst: a number when n is 1, a sequence or
 * a 1-D array of n. 0, or the failure (message written). */
static int read_numbers(mbl_user_call *c, PyObject *o, double *dst, int n, const char *what)
{
    if (is_number(o)) {
        if (n != 1) return fail(c, "%s: a number where %d are declared", what, n);
        dst[0] = PyFloat_AsDouble(o);
        return dst[0] == -1.0 && PyErr_Occurred() ? fail_exception(c) : 0;
    }
    if (PyArray_Check(o)) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (!PyArray_ISINTEGER(a) && !PyArray_ISFLOAT(a))
            return fail(c, "%s: an array of %s, not of numbers", what, Py_TYPE(o)->tp_name);
        if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n)
            return fail(c, "%s: %d numbers declared, an array of shape %s%ld%s returned", what, n,
                        PyArray_NDIM(a) == 1 ? "(" : "", (long)PyArray_SIZE(a), PyArray_NDIM(a) == 1 ? ",)" : " elements");
        PyArrayObject *d = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY_RO);
        if (!d) return fail_exception(c);
        memcpy(dst, PyArray_DATA(d), sizeof(double) * (size_t)n);
        Py_DECREF(d);
        return 0;
    }
    if (!PyList_Check(o) && !PyTuple_Check(o))
        return fail(c, "%s: %s returned, not a number or a sequence of numbers", what, Py_TYPE(o)->tp_name);
    Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
    if (len != n) return fail(c, "%s: %d declared, %ld returned", what, n, (long)len);
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (int i = 0; i < n; i++) {
        if (!is_number(items[i]))
            return fail(c, "%s: item %d is %s, not a number", what, i + 1, Py_TYPE(items[i])->tp_name);
        dst[i] = PyFloat_AsDouble(items[i]);
        if (dst[i] == -1.0 && PyErr_Occurred()) return fail_exception(c);
    }
    return 0;
}

/* The jacobian J (nout x nin, row-major into c->partials): nout rows of nin (nested sequences or a
 * 2-D array), or one flat row when nout is 1. */
static int read_jacobian(mbl_user_call *c, PyObject *J)
{
    int nout = c->nout, nin = c->nin;
    if (PyArray_Check(J) && PyArray_NDIM((PyArrayObject *)J) == 2) {
        PyArrayObject *a = (PyArrayObject *)J;
        if (!PyArray_ISINTEGER(a) && !PyArray_ISFLOAT(a)) return fail(c, "jacobian: an array not of numbers");
        if (PyArray_DIM(a, 0) != nout || PyArray_DIM(a, 1) != nin)
            return fail(c, "jacobian: %d x %d (outputs x inputs) declared, an array of shape (%ld, %ld) returned", nout,
                        nin, (long)PyArray_DIM(a, 0), (long)PyArray_DIM(a, 1));
        PyArrayObject *d = (PyArrayObject *)PyArray_FROMANY(J, NPY_DOUBLE, 2, 2, NPY_ARRAY_CARRAY_RO);
        if (!d) return fail_exception(c);
        memcpy(c->partials, PyArray_DATA(d), sizeof(double) * (size_t)nout * (size_t)nin);
        Py_DECREF(d);
        return 0;
    }
    if (nout == 1 && (PyArray_Check(J) || ((PyList_Check(J) || PyTuple_Check(J)) && PySequence_Fast_GET_SIZE(J) > 0 &&
                                          is_number(PySequence_Fast_GET_ITEM(J, 0)))))
        return read_numbers(c, J, c->partials, nin, "jacobian (one row)");
    if (!PyList_Check(J) && !PyTuple_Check(J))
        return fail(c, "jacobian: %s returned, not %d rows of %d numbers", Py_TYPE(J)->tp_name, nout, nin);
    if (PySequence_Fast_GET_SIZE(J) != nout)
        return fail(c, "jacobian: %d rows (outputs) declared, %ld returned", nout, (long)PySequence_Fast_GET_SIZE(J));
    for (int k = 0; k < nout; k++) {
        char what[48];
        snprintf(what, sizeof what, "jacobian row %d", k + 1);
        if (read_numbers(c, PySequence_Fast_GET_ITEM(J, k), c->partials + (size_t)k * (size_t)nin, nin, what)) return 1;
    }
    return 0;
}

/* The call with the GIL held: x, fn(x), its result read back. */
static int call_locked(PyObject *fn, mbl_user_call *c)
{
    npy_intp dims[1] = {c->nin};
    PyObject *x = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!x) return fail_exception(c);
    if (c->nin) memcpy(PyArray_DATA((PyArrayObject *)x), c->in, sizeof(double) * (size_t)c->nin);
    PyArray_CLEARFLAGS((PyArrayObject *)x, NPY_ARRAY_WRITEABLE);
    PyObject *r = PyObject_CallFunctionObjArgs(fn, x, NULL);
    Py_DECREF(x);
    if (!r) return fail_exception(c);
    /* (outputs, jacobian): a pair whose second item is not a number */
    int pair = (PyTuple_Check(r) || PyList_Check(r)) && PySequence_Fast_GET_SIZE(r) == 2 &&
               !is_number(PySequence_Fast_GET_ITEM(r, 1));
    int rc;
    if (c->partials && !pair)
        rc = fail(c, "partials: yes: the callable must return (outputs, jacobian), it returned the outputs only");
    else
        rc = read_numbers(c, pair ? PySequence_Fast_GET_ITEM(r, 0) : r, c->out, c->nout, "outputs");
    if (!rc && c->partials) rc = read_jacobian(c, PySequence_Fast_GET_ITEM(r, 1));
    Py_DECREF(r);
    return rc;
}

/* mbl_user_fn of every Python routine: user_data is the callable. */
static int trampoline(mbl_user_call *c)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *type, *value, *tb; /* an exception pending on this thread stays as it was */
    PyErr_Fetch(&type, &value, &tb);
    int rc = call_locked((PyObject *)c->user_data, c);
    PyErr_Restore(type, value, tb);
    PyGILState_Release(g);
    return rc;
}

/* ---- the definitions ------------------------------------------------------------------------ */

static void user_set_free(PyObject *capsule)
{
    py_user_set *u = PyCapsule_GetPointer(capsule, PY_USER_CAPSULE);
    if (!u) return;
    for (int i = 0; i < u->n; i++) Py_XDECREF((PyObject *)u->defs[i].user_data);
    PyMem_Free(u->defs);
    PyMem_Free(u->names);
    PyMem_Free(u);
}

int py_user_routines(PyObject *user, PyObject **holder, mbl_load_options *opt)
{
    *holder = NULL;
    if (user == Py_None) return 0;
    if (!PyDict_Check(user)) {
        PyErr_SetString(PyExc_TypeError, "user must be a dict {routine name: callable}");
        return -1;
    }
    py_user_set *u = PyMem_Calloc(1, sizeof *u);
    if (!u) return PyErr_NoMemory(), -1;
    PyObject *cap = PyCapsule_New(u, PY_USER_CAPSULE, user_set_free);
    if (!cap) {
        PyMem_Free(u);
        return -1;
    }
    Py_ssize_t n = PyDict_Size(user), pos = 0, total = 0;
    PyObject *k, *v;
    while (PyDict_Next(user, &pos, &k, &v)) {
        const char *s = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!s || !PyCallable_Check(v)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "user: %R must be a str naming a routine with a callable, not %s", k,
                             Py_TYPE(s ? v : k)->tp_name);
            Py_DECREF(cap);
            return -1;
        }
        total += (Py_ssize_t)strlen(s) + 1;
    }
    u->defs = PyMem_Calloc((size_t)n + 1, sizeof *u->defs);
    u->names = PyMem_Malloc((size_t)total + 1);
    if (!u->defs || !u->names) {
        Py_DECREF(cap);
        return PyErr_NoMemory(), -1;
    }
    char *p = u->names;
    for (pos = 0; PyDict_Next(user, &pos, &k, &v);) {
        const char *s = PyUnicode_AsUTF8(k);
        size_t len = strlen(s) + 1;
        memcpy(p, s, len);
        Py_INCREF(v);
        u->defs[u->n++] = (mbl_user_routine_def){p, trampoline, v};
        p += len;
    }
    opt->user_routines = u->defs;
    opt->nuser_routines = u->n;
    *holder = cap;
    return 0;
}
