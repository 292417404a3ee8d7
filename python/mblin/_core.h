/* mblin._core: the declarations its files share (_core.c: the module, Model and Point;
 * _convert.c: the conversions; _studies.c: the studies).
 *
 * NumPy's C API table is one per extension: every file names it (PY_ARRAY_UNIQUE_SYMBOL) and
 * all but _core.c, which defines MBLIN_PY_IMPORT_ARRAY and calls import_array(), only refer to it. */
#ifndef MBLIN_PY_CORE_H
#define MBLIN_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL mblin_ARRAY_API
#ifndef MBLIN_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <pthread.h>

#include "mblin/mblin.h"
#include "mblin/optimize.h"

/* ---- the types (_core.c) --------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD mbl_model *model;
    PyObject *user; /* the model's Python routines (_user.c), kept while the model lives; or NULL */
} ModelObject;

typedef struct {
    PyObject_HEAD ModelObject *owner; /* the model the point belongs to (kept alive) */
    mbl_point *point;
} PointObject;

extern PyTypeObject py_PointType;

/* ---- conversions (_convert.c) ---------------------------------------------------------------- */

extern PyObject *py_from_status; /* mblin._errors.from_status (set by PyInit__core) */

PyObject *py_raise_status(const mbl_status *st);
PyObject *py_matrix(const double *a, int rows, int cols);
PyObject *py_cmatrix(const double *re, const double *im, int rows, int cols);
PyObject *py_vector(const double *a, int n);
PyObject *py_names(char **s, int n);
int py_put(PyObject *d, const char *key, PyObject *value);
int py_settings(PyObject *seq, mbl_setting **out, int *n, PyObject **keep);
int py_strings(PyObject *seq, const char ***out, int *n, PyObject **keep);
int py_doubles(PyObject *seq, int n, const char *what, double **out);
const char *py_at_name(mbl_at at);
const char *py_kind_name(int kind);

/* ---- Ctrl-C during a long call (_interrupt.c): begin before Py_BEGIN_ALLOW_THREADS, end after
 * Py_END_ALLOW_THREADS; end returns -1 with the signal handler's exception (KeyboardInterrupt) set
 * when one was raised during the call (free its results and return NULL), else 0 ---------------- */

typedef struct py_interrupt {
    pthread_t thread;                /* the calling thread: the one that looks at the signals */
    double last;                     /* when it last looked */
    PyObject *type, *value, *tb;     /* the exception a signal handler raised */
} py_interrupt;
void py_interrupt_begin(py_interrupt *pi);
int py_interrupt_end(py_interrupt *pi);
/* A user routine's callable raised KeyboardInterrupt (_user.c; with the GIL): the call in progress
 * stops at the library's next progress report, and its py_interrupt_end raises KeyboardInterrupt. */
void py_interrupt_user(void);

/* ---- user routines written in Python (_user.c): user a dict {name: callable} or None; sets
 * opt->user_routines, nuser_routines and *holder (NULL for None), which owns what they point to
 * and must outlive the model (ModelObject.user). 0, or -1 with an exception set ------------------ */

int py_user_routines(PyObject *user, PyObject **holder, mbl_load_options *opt);

/* ---- studies (_studies.c): functions of the module and methods of Model ------------------------ */

PyObject *py_Model_sweep(ModelObject *self, PyObject *args);
PyObject *py_Model_boundary(ModelObject *self, PyObject *args);
PyObject *py_Model_sensitivity(ModelObject *self, PyObject *args);
PyObject *py_Model_freqresp(ModelObject *self, PyObject *args);
PyObject *py_Model_optimize(ModelObject *self, PyObject *args);

#endif
