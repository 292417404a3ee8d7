/* mblin._core, conversions between C and Python: the library's statuses raised as mblin.Error
 * subclasses, arrays, names and dicts out; settings, strings and numbers in (the types in _core.h). */
#include "_core.h"

#include <string.h>

PyObject *py_from_status = NULL; /* mblin._errors.from_status */

/* Raise the mblin.Error subclass for a failed status; returns NULL. */
PyObject *py_raise_status(const mbl_status *st)
{
    const char *msg = st->msg[0] ? st->msg : mbl_strerror(st->code);
    PyObject *exc = PyObject_CallFunction(py_from_status, "is", st->code, msg);
    if (!exc) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- conversions ------------------------------------------------------------------------ */

/* A rows x cols C-ordered float64 array from a column-major matrix (NULL data: None). */
PyObject *py_matrix(const double *a, int rows, int cols)
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
PyObject *py_cmatrix(const double *re, const double *im, int rows, int cols)
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

PyObject *py_vector(const double *a, int n)
{
    npy_intp dims[1] = {n};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!arr) return NULL;
    if (n > 0 && a) memcpy(PyArray_DATA((PyArrayObject *)arr), a, (size_t)n * sizeof(double));
    return arr;
}

PyObject *py_names(char **s, int n)
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
int py_put(PyObject *d, const char *key, PyObject *value)
{
    if (!value) return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

/* A sequence of (name, value) pairs -> mbl_setting array whose names point into the Python
 * strings kept alive by `keep` (a new list the caller releases). */
int py_settings(PyObject *seq, mbl_setting **out, int *n, PyObject **keep)
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
int py_strings(PyObject *seq, const char ***out, int *n, PyObject **keep)
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
int py_doubles(PyObject *seq, int n, const char *what, double **out)
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

const char *py_at_name(mbl_at at)
{
    return at == MBL_AT_GIVEN ? "given" : at == MBL_AT_STEADY ? "steady" : at == MBL_AT_TRIM ? "trim" : "equilibrium";
}

const char *py_kind_name(int kind)
{
    return kind == MBL_MODE_REAL ? "real" : kind == MBL_MODE_ZERO ? "zero" : "oscillatory";
}
