/* mblin._core, the studies: sweep, boundary (module functions) and Model.sensitivity,
 * Model.freqresp, Model.optimize over include/mblin/sweep.h, sensitivity.h and optimize.h (the GIL
 * released). */
#include "_core.h"

#include <string.h>

#include "mblin/sensitivity.h"
#include "mblin/sweep.h"

/* ---- studies (include/mblin/sweep.h, sensitivity.h) --------------------------------------- */

/* The model a study runs on: self's, or with sets (this call's) a copy of it with them over its own
 * (mbl_model_copy, in *own: the caller frees it). */
static int study_model(ModelObject *self, const mbl_setting *sets, int nsets, mbl_model **own, const mbl_model **md,
                       mbl_status *st)
{
    *own = NULL;
    *md = self->model;
    if (!nsets) return 0;
    int rc = mbl_model_copy(self->model, sets, nsets, own, st);
    *md = *own;
    return rc;
}

/* Model.sweep(sets, name, from, to, count, threads, popt_at, max_points) -> dict of the mbl_sweep
 * fields (one axis; arrays npoints x nmodes), on this model (its copies: mbl_sweep_run), sets this
 * call's overrides over the model's. */
PyObject *py_Model_sweep(ModelObject *self, PyObject *args)
{
    PyObject *sets_obj;
    const char *name;
    double from, to;
    int count, threads, at;
    long max_points;
    if (!PyArg_ParseTuple(args, "Osddiiil", &sets_obj, &name, &from, &to, &count, &threads, &at, &max_points))
        return NULL;
    mbl_setting *sets = NULL;
    int nsets = 0;
    PyObject *keep = NULL, *result = NULL;
    if (py_settings(sets_obj, &sets, &nsets, &keep)) goto done;
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
    so.max_points = max_points; /* 0: the default */
    so.popt = &po; /* so.sets: none, the model's own (its copy's with this call's) */
    mbl_status st;
    mbl_status_clear(&st);
    mbl_sweep *sw = NULL;
    int rc;
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    mbl_model *own = NULL;
    const mbl_model *md = NULL;
    rc = study_model(self, sets, nsets, &own, &md, &st);
    if (!rc) rc = mbl_sweep_run(md, &so, &sw, &st);
    mbl_model_free(own);
    Py_END_ALLOW_THREADS
    if (py_interrupt_end(&pi)) { /* KeyboardInterrupt */
        mbl_sweep_free(sw);
        goto done;
    }
    if (rc) {
        py_raise_status(&st);
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
    bad = py_put(d, "values", py_vector(sw->value, np)) | py_put(d, "eigenvalues", ev) | py_put(d, "freq_hz", fr) |
          py_put(d, "damping_ratio", dr) | py_put(d, "mac", mc) | py_put(d, "ok", ok) | py_put(d, "errors", errs) |
          py_put(d, "fast", PyBool_FromLong(sw->fast)) | py_put(d, "threads", PyLong_FromLong(sw->threads)) |
          py_put(d, "seconds", PyFloat_FromDouble(sw->seconds)) | py_put(d, "n", PyLong_FromLong(sw->n));
    mbl_sweep_free(sw);
    if (bad) Py_DECREF(d);
    else result = d;
done:
    PyMem_Free(sets);
    Py_XDECREF(keep);
    return result;
}

/* sensitivity(point, wrt (list of parameter indices or None), shapes) -> dict */
PyObject *py_Model_sensitivity(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    PyObject *wrt_obj;
    int shapes;
    if (!PyArg_ParseTuple(args, "O!Op", &py_PointType, &pt, &wrt_obj, &shapes)) return NULL;
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
        return py_raise_status(&st);
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
            PyList_SET_ITEM(kinds, i, PyUnicode_FromString(py_kind_name(md->kind)));
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
        bad = py_put(d, "eigenvalues", ev) | py_put(d, "d_eigenvalues", dev) | py_put(d, "freq_hz", fr) |
              py_put(d, "damping_ratio", dr) | py_put(d, "d_freq_hz", dfr) | py_put(d, "d_damping_ratio", ddr) |
              py_put(d, "defined", def) | py_put(d, "kinds", kinds) | py_put(d, "wrt", widx) |
              py_put(d, "shapes", py_cmatrix(S->shape_re, S->shape_im, n, nm)) | py_put(d, "d_shapes", dsh) |
              py_put(d, "dq", py_matrix(S->dq, n, nw)) | py_put(d, "dv", py_matrix(S->dv, n, nw)) |
              py_put(d, "dlambda", py_matrix(S->dlambda, S->m, nw)) | py_put(d, "point_defined", pdef) |
              py_put(d, "notes", PyUnicode_FromString(S->notes));
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

/* Model.boundary(sets, param, near, order, tol, mode, at, shape, branch, sweep) -> dict (shape and
 * sweep: str or None; one of mode, shape, branch + sweep at most, checked by the caller), on this
 * model (its copies: mbl_boundary), sets this call's overrides over the model's. */
PyObject *py_Model_boundary(ModelObject *self, PyObject *args)
{
    PyObject *sets_obj;
    const char *param;
    const char *shape = NULL, *sweep = NULL;
    double near, order, tol, from = NAN, to = NAN;
    int mode, at, branch = 0;
    if (!PyArg_ParseTuple(args, "Osdddii|zizdd", &sets_obj, &param, &near, &order, &tol, &mode, &at, &shape, &branch,
                          &sweep, &from, &to))
        return NULL;
    mbl_setting *sets = NULL;
    int nsets = 0;
    PyObject *keep = NULL, *result = NULL;
    if (py_settings(sets_obj, &sets, &nsets, &keep)) goto done;
    mbl_boundary_options bo;
    mbl_boundary_options_default(&bo);
    bo.opoint.at = at;
    bo.order = order;
    bo.mode.index = mode;
    bo.mode.shape = shape;
    bo.mode.branch = branch;
    bo.mode.sweep = sweep;
    bo.from = from, bo.to = to;
    if (tol > 0) bo.tol = tol;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_boundary_result r;
    int rc;
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    mbl_model *own = NULL;
    const mbl_model *md = NULL;
    rc = study_model(self, sets, nsets, &own, &md, &st);
    if (!rc) rc = mbl_boundary(md, NULL, 0, param, near, &bo, &r, &st);
    mbl_model_free(own);
    Py_END_ALLOW_THREADS
    if (py_interrupt_end(&pi)) {
        /* KeyboardInterrupt, set */
    } else if (rc) {
        py_raise_status(&st);
    } else {
        result = Py_BuildValue("{s:d,s:D,s:d,s:d,s:i,s:i,s:d,s:(dd),s:i,s:O,s:O,s:d,s:d}", "value", r.value, "eigenvalue",
                               &(Py_complex){r.re, r.im}, "f_near", r.f_near, "slope", r.slope, "iterations",
                               r.iterations, "mode_near", r.mode_near, "last_step", r.last_step, "bracket", r.lo, r.hi,
                               "points", r.points, "collision", r.collision ? Py_True : Py_False, "divergence",
                               r.divergence ? Py_True : Py_False, "accuracy", r.accuracy, "verified", r.verified);
    }
done:
    PyMem_Free(sets);
    Py_XDECREF(keep);
    return result;
}

/* freqresp(point, input index, output index, w) -> dict (the mbl_freqresp_result fields) */
PyObject *py_Model_freqresp(ModelObject *self, PyObject *args)
{
    PointObject *pt;
    int iu, iy;
    PyObject *w_obj;
    if (!PyArg_ParseTuple(args, "O!iiO", &py_PointType, &pt, &iu, &iy, &w_obj)) return NULL;
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
    if (rc) return py_raise_status(&st);
    npy_intp dn[1] = {fr->nw};
    PyObject *g = PyArray_SimpleNew(1, dn, NPY_COMPLEX128), *d = PyDict_New();
    if (g)
        for (int k = 0; k < fr->nw; k++) {
            ((double *)PyArray_DATA((PyArrayObject *)g))[2 * k] = fr->re[k];
            ((double *)PyArray_DATA((PyArrayObject *)g))[2 * k + 1] = fr->im[k];
        }
    PyObject *form = PyList_New(fr->nw);
    for (int k = 0; form && k < fr->nw; k++)
        PyList_SET_ITEM(form, k, PyUnicode_FromString(fr->form[k] == MBL_FR_POLE         ? "pole"
                                                       : fr->form[k] == MBL_FR_DESCRIPTOR ? "descriptor"
                                                                                          : "state_space"));
    int bad = !d || !g || !form;
    if (!bad) {
        bad = py_put(d, "w", py_vector(fr->w, fr->nw)) | py_put(d, "response", g) |
              py_put(d, "mag", py_vector(fr->mag, fr->nw)) | py_put(d, "mag_db", py_vector(fr->mag_db, fr->nw)) |
              py_put(d, "phase_deg", py_vector(fr->phase_deg, fr->nw)) |
              py_put(d, "rcond", py_vector(fr->rcond, fr->nw)) | py_put(d, "form", form);
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

/* fn(model, ud, st) on self's model or its copy with sets (study_model), the GIL released and
 * Ctrl-C watched: 0, fn's negative code (st set), or 1 when interrupted (KeyboardInterrupt set) */
static int run_study(ModelObject *self, const mbl_setting *sets, int nsets,
                     int (*fn)(const mbl_model *, void *, mbl_status *), void *ud, mbl_status *st)
{
    int rc;
    mbl_status_clear(st);
    py_interrupt pi;
    py_interrupt_begin(&pi);
    Py_BEGIN_ALLOW_THREADS
    mbl_model *own = NULL;
    const mbl_model *md = NULL;
    rc = study_model(self, sets, nsets, &own, &md, st);
    if (!rc) rc = fn(md, ud, st);
    mbl_model_free(own);
    Py_END_ALLOW_THREADS
    return py_interrupt_end(&pi) ? 1 : rc;
}

typedef struct opt_call {
    const mbl_optimize_options *o;
    mbl_opt_result *r;
} opt_call;

static int opt_run(const mbl_model *md, void *ud, mbl_status *st)
{
    opt_call *c = ud;
    return mbl_optimize(md, c->o, &c->r, st);
}

/* one goal from its tuple (kind, sense, mode, a, b, input, output, f1, f2, speed, order, near, expr); 0, or
 * -1 with an exception set (the strings point into the tuple: the caller keeps it) */
static int goal_from(PyObject *t, mbl_opt_goal *g)
{
    memset(g, 0, sizeof *g);
    return PyArg_ParseTuple(t, "iiiddzzddzddz", &g->kind, &g->sense, &g->mode, &g->a, &g->b, &g->input, &g->output,
                            &g->band[0], &g->band[1], &g->speed, &g->order, &g->near, &g->expr)
               ? 0
               : -1;
}

/* the result's dict (mbl_opt_result): the design by name, the history, the final modes */
static PyObject *opt_result_dict(const mbl_optimize_options *o, const mbl_opt_result *r)
{
    PyObject *d = PyDict_New(), *p = PyDict_New(), *ab = PyList_New(r->nparams), *cm = PyList_New(o->nconstraints);
    int bad = !d || !p || !ab || !cm;
    for (int j = 0; !bad && j < r->nparams; j++) {
        PyObject *v = PyFloat_FromDouble(r->p[j]);
        bad = !v || PyDict_SetItemString(p, o->params[j].name, v) < 0;
        Py_XDECREF(v);
        PyList_SET_ITEM(ab, j, PyLong_FromLong(r->at_bound[j]));
    }
    for (int i = 0; !bad && i < o->nconstraints; i++)
        PyList_SET_ITEM(cm, i, r->tracked[i] >= 0 ? PyLong_FromLong(r->tracked[i] + 1) : Py_NewRef(Py_None));
    int nm = r->S->nmode;
    double *re = PyMem_Malloc(((size_t)nm * 4 + 1) * sizeof *re), *im = re ? re + nm : NULL, *f = im ? im + nm : NULL,
           *z = f ? f + nm : NULL;
    bad |= !re;
    for (int k = 0; !bad && k < nm; k++)
        re[k] = r->S->modes[k].re, im[k] = r->S->modes[k].im, f[k] = r->S->modes[k].freq_hz,
        z[k] = r->S->modes[k].damping_ratio;
    if (!bad) {
        int e1 = py_put(d, "parameters", p), e2 = py_put(d, "at_bound", ab), e3 = py_put(d, "constraint_modes", cm);
        p = ab = cm = NULL; /* py_put took them */
        npy_intp dim = nm;
        PyObject *ev = PyArray_SimpleNew(1, &dim, NPY_COMPLEX128);
        for (int k = 0; ev && k < nm; k++)
            ((double *)PyArray_DATA((PyArrayObject *)ev))[2 * k] = re[k],
            ((double *)PyArray_DATA((PyArrayObject *)ev))[2 * k + 1] = im[k];
        bad = e1 || e2 || e3 || py_put(d, "eigenvalues", ev) || py_put(d, "value", PyFloat_FromDouble(r->value)) ||
              py_put(d, "objective", PyFloat_FromDouble(r->objective)) ||
              py_put(d, "violation", PyFloat_FromDouble(r->violation)) || py_put(d, "kkt", PyFloat_FromDouble(r->kkt)) ||
              py_put(d, "peak_hz", PyFloat_FromDouble(r->peak_hz)) ||
              py_put(d, "evaluations", PyLong_FromLong(r->evaluations)) ||
              py_put(d, "algorithm", PyUnicode_FromString(mbl_opt_algorithm_name(r->algorithm))) ||
              py_put(d, "stop", PyLong_FromLong(r->stop)) || py_put(d, "stop_reason", PyUnicode_FromString(r->stop_reason)) ||
              py_put(d, "history", py_vector(r->history, r->nhistory)) ||
              py_put(d, "history_violation", py_vector(r->history_violation, r->nhistory)) ||
              py_put(d, "freq_hz", py_vector(f, nm)) ||
              py_put(d, "damping_ratio", py_vector(z, nm)) ||
              py_put(d, "mode", r->tracked_objective >= 0 ? PyLong_FromLong(r->tracked_objective + 1) : Py_NewRef(Py_None)) ||
              py_put(d, "coalesced", r->coalesced[0] ? Py_BuildValue("(ii)", r->coalesced[0], r->coalesced[1])
                                                     : Py_NewRef(Py_None)) ||
              py_put(d, "newton_steps", PyLong_FromLong(r->newton_steps)) ||
              py_put(d, "valley_steps", PyLong_FromLong(r->valley_steps)) ||
              py_put(d, "crossings", PyLong_FromLong(r->crossings));
    }
    PyMem_Free(re);
    Py_XDECREF(p);
    Py_XDECREF(ab);
    Py_XDECREF(cm);
    if (bad) {
        Py_XDECREF(d);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    return d;
}

/* Model.optimize(sets, params, objective, constraints, algorithm, max_eval, xtol, ftol, ctol, feas_tol,
 * kkt_tol, min_mac, at) -> dict (mbl_optimize; params: (name, lo, hi, start) tuples, goals: the
 * tuples of goal_from; a tolerance <= 0: the default) */
PyObject *py_Model_optimize(ModelObject *self, PyObject *args)
{
    PyObject *sets_obj, *par_obj, *obj_obj, *con_obj, *keep = NULL, *result = NULL;
    int algorithm, max_eval, at;
    double tol[6];
    if (!PyArg_ParseTuple(args, "OO!OO!iiddddddi", &sets_obj, &PyList_Type, &par_obj, &obj_obj, &PyList_Type, &con_obj,
                          &algorithm, &max_eval, &tol[0], &tol[1], &tol[2], &tol[3], &tol[4], &tol[5], &at))
        return NULL;
    Py_ssize_t np = PyList_GET_SIZE(par_obj), nc = PyList_GET_SIZE(con_obj);
    mbl_setting *sets = NULL;
    int nsets = 0;
    mbl_opt_param *par = PyMem_Calloc((size_t)np + 1, sizeof *par);
    mbl_opt_goal *con = PyMem_Calloc((size_t)nc + 1, sizeof *con);
    mbl_optimize_options o;
    mbl_optimize_options_default(&o);
    if (!par || !con) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < np; j++)
        if (!PyArg_ParseTuple(PyList_GET_ITEM(par_obj, j), "sddd", &par[j].name, &par[j].lo, &par[j].hi, &par[j].start))
            goto done;
    if (goal_from(obj_obj, &o.objective)) goto done;
    for (Py_ssize_t i = 0; i < nc; i++)
        if (goal_from(PyList_GET_ITEM(con_obj, i), &con[i])) goto done;
    if (py_settings(sets_obj, &sets, &nsets, &keep)) goto done;
    o.params = par, o.nparams = (int)np, o.constraints = con, o.nconstraints = (int)nc;
    o.algorithm = algorithm;
    if (max_eval > 0) o.max_eval = max_eval;
    double *dst[6] = {&o.xtol_rel, &o.ftol_rel, &o.ctol, &o.feas_tol, &o.kkt_tol, &o.min_mac};
    for (int k = 0; k < 6; k++)
        if (tol[k] > 0) *dst[k] = tol[k];
    o.opoint.at = at;
    mbl_status st;
    opt_call call = {&o, NULL};
    int rc = run_study(self, sets, nsets, opt_run, &call, &st);
    if (rc < 0) py_raise_status(&st);
    else if (!rc) result = opt_result_dict(&o, call.r);
    mbl_opt_result_free(call.r);
done:
    PyMem_Free(par);
    PyMem_Free(con);
    PyMem_Free(sets);
    Py_XDECREF(keep);
    return result;
}
