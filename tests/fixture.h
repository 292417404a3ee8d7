/* The tests' one way to load a model: a model file (a path relative to the project root, where
 * ctest runs the tests) or a model given as text, with or without a failed check when it does not
 * load, and with its operating point. It includes test.h (its failed checks count there).
 *
 *   mbl_model *md = FIXTURE_LOAD(NULL, text, "beam3.yaml");      a failed check when it fails
 *   mbl_model *md = fixture_model(NULL, text, "test.yaml", &st);  NULL and st when it fails
 *   mbl_model *md = fixture_model_fwd("examples/x.yaml", NULL, NULL, 1);  forward-mode Jacobian
 *   rc = fixture_model_point("examples/x.yaml", NULL, NULL, &md, &pt, &st);
 *   md = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 0, path, text, "damped-beam");
 *   rc = fixture_boundary("examples/x.yaml", sets, nsets, "v", 4.3, &opt, &res, &st);
 */
#ifndef MBLIN_TEST_FIXTURE_H
#define MBLIN_TEST_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/model.h"
#include "mblin/sensitivity.h"
#include "test.h"

/* The index of the model's parameter `name`, or -1. */
static inline int fixture_param_index(const mbl_model *md, const char *name)
{
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    for (int i = 0; i < info.nparam; i++)
        if (!strcmp(mbl_model_param_name(md, i), name)) return i;
    return -1;
}

/* The model file at path or, when path is NULL, the model in text (called name in its messages):
 * the model, or NULL with *st saying why. */
static inline mbl_model *fixture_model(const char *path, const char *text, const char *name, mbl_status *st)
{
    mbl_model *md = NULL;
    int rc = path ? mbl_model_load_file(path, NULL, 0, &md, st)
                  : mbl_model_load_string(text, strlen(text), name, NULL, 0, &md, st);
    return rc ? NULL : md;
}

/* fixture_model with mbl_load_options.forward_jacobian = fwd (the other options their defaults): the
 * model, or NULL and a failed check naming the model and the reason. */
static inline mbl_model *fixture_model_fwd(const char *path, const char *text, const char *name, int fwd)
{
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    lo.forward_jacobian = fwd;
    mbl_status st;
    memset(&st, 0, sizeof st);
    mbl_model *md = NULL;
    int rc = path ? mbl_model_load_file_opt(path, NULL, 0, &lo, &md, &st)
                  : mbl_model_load_string_opt(text, text ? strlen(text) : 0, name, NULL, 0, &lo, &md, &st);
    CHECK_MSG(rc == 0, "%s (forward %d): %s", path ? path : name, fwd, st.msg);
    return rc ? NULL : md;
}

/* fixture_model and the model's operating point (mbl_operating_point without options): 0, or the
 * first failure's code with *st saying why; *md is the model also when only the point failed. */
static inline int fixture_model_point(const char *path, const char *text, const char *name, mbl_model **md,
                                      mbl_point **pt, mbl_status *st)
{
    *md = fixture_model(path, text, name, st);
    return *md ? mbl_operating_point(*md, NULL, pt, st) : st->code ? st->code : -1;
}

/* The point given by q and v (mbl_operating_point at MBL_AT_GIVEN): its status code. */
static inline int fixture_point_given(const mbl_model *md, const double *q, const double *v, mbl_point **pt,
                                      mbl_status *st)
{
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN;
    po.q = q;
    po.v = v;
    return mbl_operating_point(md, &po, pt, st);
}

/* fixture_model with set_form(form) in force while the model is read and set_form(1), the
 * default, after it (set_form NULL: none); a failed check at file:line naming the model and the
 * reason when it does not load. */
static inline mbl_model *fixture_load_checked_(void (*set_form)(int), int form, const char *path, const char *text,
                                               const char *name, const char *file, int line)
{
    mbl_status st;
    memset(&st, 0, sizeof st);
    if (set_form) set_form(form);
    mbl_model *md = fixture_model(path, text, name, &st);
    if (set_form) set_form(1);
    if (!md) {
        test_checks_failed_++;
        fprintf(stderr, "%s:%d: loading %s failed: %s\n", file, line, path ? path : name, st.msg);
    }
    return md;
}

/* the model (as fixture_model), or NULL and a failed check at the caller's line */
#define FIXTURE_LOAD(path, text, name) fixture_load_checked_(NULL, 0, (path), (text), (name), __FILE__, __LINE__)

/* the same, read with an internal switch of the loader set to form (model_ffr_set_numeric,
 * model_pmech_set_numeric: 0 the expression form, 1 the numeric one and the default) */
#define FIXTURE_LOAD_FORM(set_form, form, path, text, name)                                        \
    fixture_load_checked_((set_form), (form), (path), (text), (name), __FILE__, __LINE__)

/* mbl_boundary on the model file at path loaded with the overrides sets, as the CLI does */
static inline int fixture_boundary(const char *path, const mbl_setting *sets, int nsets, const char *param, double near,
                                   const mbl_boundary_options *opt, mbl_boundary_result *res, mbl_status *st)
{
    mbl_model *md = NULL;
    int rc = mbl_model_load_file(path, sets, nsets, &md, st);
    if (!rc) rc = mbl_boundary(md, sets, nsets, param, near, opt, res, st);
    mbl_model_free(md);
    return rc;
}

/* The N-link spatial chain of bench/chain_urdf.py as URDF text (malloc'd, *len its length; NULL
 * when out of memory): bars of 0.2 m and 1 kg hanging from "base", continuous joints about y and
 * x in turn, damping 0.01; its name for messages "chainN.urdf" in name (32 bytes). */
static inline char *fixture_urdf_chain(int N, size_t *len, char name[32])
{
    size_t cap = 600 * (size_t)N + 200, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    double L = 0.2, m = 1.0, Ib = m * L * L / 12;
    n += (size_t)snprintf(s + n, cap - n, "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n  <link name=\"base\"/>\n", N);
    for (int k = 1; k <= N; k++)
        n += (size_t)snprintf(s + n, cap - n,
                              "  <link name=\"l%d\"><inertial><origin xyz=\"0 0 %g\"/><mass value=\"%g\"/><inertia "
                              "ixx=\"%.17g\" iyy=\"%.17g\" izz=\"%g\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n",
                              k, -L / 2, m, Ib, Ib, 1e-3);
    for (int k = 1; k <= N; k++) {
        char parent[16];
        snprintf(parent, sizeof parent, k == 1 ? "base" : "l%d", k - 1);
        n += (size_t)snprintf(s + n, cap - n,
                              "  <joint name=\"j%d\" type=\"continuous\"><parent link=\"%s\"/><child link=\"l%d\"/>"
                              "<origin xyz=\"0 0 %g\"/><axis xyz=\"%s\"/><dynamics damping=\"0.01\"/></joint>\n",
                              k, parent, k, k == 1 ? 0.0 : -L, k % 2 ? "0 1 0" : "1 0 0");
    }
    n += (size_t)snprintf(s + n, cap - n, "</robot>\n");
    snprintf(name, 32, "chain%d.urdf", N);
    *len = n;
    return s;
}

/* The hanging chain of bench/models/chain.py (N planar links, initial angle 0.1, states JQ(j_i)) as
 * model text into buf (cap bytes): loaded from memory, not a file (the golden outputs read every
 * model file under tests/) */
static inline void fixture_chain_text(int N, char *buf, size_t cap)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, cap - o,
                          "model: mechanism\nname: %d-link hanging chain\nspace: planar\n"
                          "parameters: {m: 1, l: 1, g: 9.81}\nground:\n  markers:\n    O: {}\nbodies:\n",
                          N);
    for (int i = 0; i < N && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o,
                              "  link%d:\n    mass: m\n    inertia: m*l^2/12\n    position: [%.17g, %.17g]\n"
                              "    angle: 0.1\n    markers:\n      top%d: {position: [0, \"l/2\"]}\n"
                              "      bot%d: {position: [0, \"-l/2\"]}\n",
                              i, (i + 0.5) * sin(0.1), -(i + 0.5) * cos(0.1), i, i);
    o += (size_t)snprintf(buf + o, cap - o, "joints:\n");
    for (int i = 0; i < N && o < cap; i++) {
        if (i) o += (size_t)snprintf(buf + o, cap - o, "  j%d: {type: revolute, i: top%d, j: bot%d}\n", i, i, i - 1);
        else o += (size_t)snprintf(buf + o, cap - o, "  j0: {type: revolute, i: top0, j: O}\n");
    }
    o += (size_t)snprintf(buf + o, cap - o,
                          "forces:\n  weight: {type: gravity, g: [0, \"-g\"]}\nlinearize:\n  at: equilibrium\n  states: [");
    for (int i = 0; i < N && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%s\"JQ(j%d)\"", i ? ", " : "", i);
    if (o < cap) snprintf(buf + o, cap - o, "]\n");
}

/* The oscillatory modes' frequencies (rad/s, the positive imaginary parts of the eigenvalues that
 * are not spurious, in mbl_modal's order) of md at its operating point, linearized with lo (NULL:
 * the defaults), at most cap of them; the outputs there into y when y is not NULL. A failed step is a
 * failed check and gives 0. */
static inline int fixture_omegas(const mbl_model *md, const mbl_lin_options *lo, double *w, int cap, double *y)
{
    mbl_status st;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *mo = NULL;
    int n = 0, rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc && y) rc = mbl_model_outputs(md, pt, y, &st);
    if (!rc) rc = mbl_linearize(md, pt, lo, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &mo, &st);
    CHECK_MSG(rc == 0, "%s%s%s", lo && lo->method ? lo->method : "", lo && lo->method ? ": " : "", st.msg);
    for (int i = 0; !rc && i < mo->nx && n < cap; i++)
        if (!mo->modes[i].spurious && mo->modes[i].im > 0) w[n++] = mo->modes[i].im;
    mbl_modes_free(mo);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return n;
}

#endif
