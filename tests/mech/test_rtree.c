/* The tree's structured term (src/model/terms/rtree.c: recursive Newton-Euler with closed-form
 * derivatives) against the symbolic recursion it replaces (`tree_dynamics: symbolic`, the
 * expression engine differentiating src/mech/relative.c's texts): the residual and every entry of
 * its Jacobian with respect to all unknowns at random points (q, q', q'', multipliers, inputs) to
 * 1e-12 (and the outputs: the tree joints' reactions, which count the force elements that the
 * structured path gives to a joint coordinate directly), on a spatial chain of revolute and prismatic joints with offset centres of mass and full
 * inertia tensors, the 7-joint URDF arm, a floating base with a chain on it, and trees closed by
 * cut joints (the chain closed by a spherical joint, the spatial four-bar); and the eigenvalue sensitivities (second
 * derivatives through the engine) of the slider-pendulum in both. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "model/rtree.h"
#include "model/terms/rtree_num.h"
#include "test.h"
#include "fixture.h"

/* text with `tree_dynamics: symbolic` after its `coordinates: relative` line */
static char *symbolic_of(const char *text)
{
    const char *c = strstr(text, "coordinates: relative\n");
    if (!c) return NULL;
    size_t head = (size_t)(c - text) + strlen("coordinates: relative\n"), n = strlen(text);
    char *o = malloc(n + 64);
    if (!o) return NULL;
    memcpy(o, text, head);
    strcpy(o + head, "tree_dynamics: symbolic\n");
    strcat(o, text + head);
    return o;
}

/* F and the dense Jacobian (nF x nunk, column-major) of a model at the symbol values syms */
static int eval_dense(const mbl_model *md, const double *syms, double *F, double *Jd)
{
    double *work = malloc((md->work_size + 1) * sizeof *work), *jv = malloc(((size_t)md->jac.nz + 1) * sizeof *jv);
    mbl_status st;
    int rc = !work || !jv || model_eval_F(md, syms, F, work, &st) || model_eval_jac(md, syms, jv, work, &st);
    if (!rc) {
        memset(Jd, 0, (size_t)md->nF * (size_t)md->nunk * sizeof *Jd);
        for (int p = 0; p < md->jac.nz; p++) Jd[md->jac.row[p] + (size_t)md->jac.col[p] * md->nF] += jv[p];
    }
    free(work);
    free(jv);
    return rc;
}

/* What compare_text saw of its model's tree: the kinematics natively (1; 2 with parameters among
 * the local values), by the texts' tape (0), no tree (-1); and the largest difference of the texts'
 * values (u, p, A, r, centres, masses, inertias, gravity) from their expressions' (the mechanism
 * compiler's texts, compiled into a tape by the test), relative to max(1, |value|) */
static int last_native;
static double last_texts_diff;

static mblx_tape *texts_tape(mbl_model *a)
{
    const mbl_rtree_num *r = a->rtn;
    int nb = model_rtree_num_nbodies(r);
    size_t n = (size_t)nb * NTV + 3;
    mblx_id *e = malloc(n * sizeof *e);
    mblx_tape *t = NULL;
    mbl_status st;
    if (!e) return NULL;
    for (int b = 0; b < nb; b++) memcpy(e + (size_t)b * NTV, r->tn + (size_t)b * MBL_RTREE_NT, NTV * sizeof *e);
    memcpy(e + (size_t)nb * NTV, r->gn, 3 * sizeof *e);
    model_graph_lock(a, 1);
    t = mblx_compile(a->g, n, e, &st);
    model_graph_lock(a, 0);
    free(e);
    return t;
}

static double texts_diff(const mbl_model *a, const mblx_tape *t, const double *syms)
{
    const mbl_rtree_num *r = a->rtn;
    size_t n = r->nin;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc((a->work_size + 1) * sizeof *w);
    double *tw = malloc((mblx_tape_work_size(t) + 1) * sizeof *tw), d = INFINITY;
    mbl_status st;
    if (x && y && w && tw && !mblx_tape_eval(t, syms, x, tw, &st) && !model_rtree_num_texts(r, syms, y, w, &st)) {
        d = 0;
        for (size_t k = 0; k < n; k++) d = fmax(d, fabs(x[k] - y[k]) / fmax(1.0, fabs(x[k])));
    }
    free(x), free(y), free(w), free(tw);
    return d;
}

/* structured (recursive) against symbolic: returns the largest relative deviation over npt random
 * points; *nstruct: the structured term's Jacobian entries (0: the term is not used) */
static double compare_text(const char *text, const char *name, int npt, int *nstruct)
{
    char *sym = symbolic_of(text);
    mbl_model *a = NULL, *b = NULL;
    mbl_status st;
    double worst = INFINITY;
    mblx_tape *xt = NULL;
    *nstruct = -1;
    if (!sym || mbl_model_load_string(text, strlen(text), name, NULL, 0, &a, &st) ||
        mbl_model_load_string(sym, strlen(sym), name, NULL, 0, &b, &st)) {
        fprintf(stderr, "%s: %s\n", name, sym ? st.msg : "no 'coordinates: relative'");
        goto out;
    }
    *nstruct = a->rtn ? model_rtree_num_entries(a->rtn) : 0;
    CHECK(b->rtn == NULL);
    last_native = !a->rtn ? -1 : !a->rtn->kin ? 0 : a->rtn->lvt ? 2 : 1;
    last_texts_diff = 0;
    mblx_tape *tt = a->rtn ? texts_tape(a) : NULL;
    CHECK(!a->rtn || tt);
    /* the term's expression form (built on demand for the sensitivities and the code generator)
     * compiled into a tape of its own: it must give the numeric term's values too */
    if (a->rtn) {
        const mblx_id *Fn, *jn;
        model_graph_lock(a, 1);
        mblx_id *all = malloc(((size_t)a->nF + (size_t)a->jac.nz + 1) * sizeof *all);
        if (all && !model_dae_nodes(a, &Fn, &jn, &st)) {
            memcpy(all, Fn, (size_t)a->nF * sizeof *all);
            memcpy(all + a->nF, jn, (size_t)a->jac.nz * sizeof *all);
            xt = mblx_compile(a->g, (size_t)a->nF + (size_t)a->jac.nz, all, &st);
        }
        model_graph_lock(a, 0);
        free(all);
        CHECK_MSG(xt != NULL, "%s: the expression form: %s", name, st.msg);
    }
    if (a->n != b->n || a->nF != b->nF || a->nunk != b->nunk || a->nsym != b->nsym) {
        CHECK_MSG(0, "%s: the two formulations differ in size", name);
        goto out;
    }
    for (int i = 0; i < a->n; i++) CHECK(!strcmp(a->qname[i], b->qname[i]));
    size_t nd = (size_t)a->nF * (size_t)a->nunk;
    double *syms = malloc(((size_t)a->nsym + 1) * sizeof *syms), *Fa = malloc(((size_t)a->nF + 1) * sizeof *Fa),
           *Fb = malloc(((size_t)a->nF + 1) * sizeof *Fb), *Ja = malloc((nd + 1) * sizeof *Ja),
           *Jb = malloc((nd + 1) * sizeof *Jb);
    double *q = malloc(((size_t)a->n + 1) * sizeof *q), *v = malloc(((size_t)a->n + 1) * sizeof *v),
           *ac = malloc(((size_t)a->n + 1) * sizeof *ac), *lam = malloc(((size_t)a->m + 1) * sizeof *lam),
           *mu = malloc(((size_t)a->k + 1) * sizeof *mu), *r = malloc(((size_t)a->nr + 1) * sizeof *r);
    unsigned seed = 12345u;
    worst = 0;
    for (int t = 0; t < npt && syms && Fa && Fb && Ja && Jb && q && v && ac && lam && mu && r; t++) {
        for (int i = 0; i < a->n; i++) q[i] = a->q0[i] + 0.7 * test_urand(&seed), v[i] = 2 * test_urand(&seed), ac[i] = 3 * test_urand(&seed);
        for (int i = 0; i < a->m; i++) lam[i] = test_urand(&seed);
        for (int i = 0; i < a->k; i++) mu[i] = test_urand(&seed);
        for (int i = 0; i < a->nr; i++) r[i] = test_urand(&seed);
        model_fill_syms(a, 0.3, q, v, ac, lam, mu, r, syms);
        if (tt) last_texts_diff = fmax(last_texts_diff, texts_diff(a, tt, syms));
        if (eval_dense(a, syms, Fa, Ja) || eval_dense(b, syms, Fb, Jb)) {
            CHECK_MSG(0, "%s: evaluation failed", name);
            worst = INFINITY;
            break;
        }
        /* outputs (tree joints' reactions) and their Jacobian, dense */
        if (a->ny != b->ny) {
            CHECK_MSG(0, "%s: the outputs differ in number", name);
        } else if (a->ny) {
            size_t na = (size_t)a->ny + (size_t)a->yjac.nz, nb = (size_t)b->ny + (size_t)b->yjac.nz;
            size_t dn = (size_t)a->ny * (size_t)a->nunk;
            double *ya = malloc(na * sizeof *ya), *yb = malloc(nb * sizeof *yb);
            double *da = calloc(dn, sizeof *da), *db = calloc(dn, sizeof *db);
            double *w1 = malloc((a->work_size + b->work_size + 1) * sizeof *w1);
            mbl_status s2;
            if (ya && yb && da && db && w1 && !mblx_tape_eval(a->tape_y, syms, ya, w1, &s2) &&
                !mblx_tape_eval(b->tape_y, syms, yb, w1, &s2)) {
                for (int p = 0; p < a->yjac.nz; p++) da[a->yjac.row[p] + (size_t)a->yjac.col[p] * a->ny] += ya[a->ny + p];
                for (int p = 0; p < b->yjac.nz; p++) db[b->yjac.row[p] + (size_t)b->yjac.col[p] * b->ny] += yb[b->ny + p];
                double ym = 1, dy = 0;
                for (int i = 0; i < a->ny; i++) ym = fmax(ym, fabs(yb[i])), dy = fmax(dy, fabs(ya[i] - yb[i]));
                for (size_t i = 0; i < dn; i++) ym = fmax(ym, fabs(db[i])), dy = fmax(dy, fabs(da[i] - db[i]));
                worst = fmax(worst, dy / ym);
            } else {
                CHECK_MSG(0, "%s: outputs not evaluated", name);
            }
            free(ya), free(yb), free(da), free(db), free(w1);
        }
        double fm = 1, jm = 1, df = 0, dj = 0;
        for (int i = 0; i < a->nF; i++) fm = fmax(fm, fabs(Fb[i])), df = fmax(df, fabs(Fa[i] - Fb[i]));
        for (size_t i = 0; i < nd; i++) jm = fmax(jm, fabs(Jb[i])), dj = fmax(dj, fabs(Ja[i] - Jb[i]));
        worst = fmax(worst, fmax(df / fm, dj / jm));
        if (xt) { /* the expression form against the numeric term: residual and every entry */
            size_t nx = (size_t)a->nF + (size_t)a->jac.nz;
            double *xv = malloc(nx * sizeof *xv), *xw = malloc((mblx_tape_work_size(xt) + 1) * sizeof *xw);
            double *Jx = calloc(nd + 1, sizeof *Jx);
            mbl_status s3;
            if (xv && xw && Jx && !mblx_tape_eval(xt, syms, xv, xw, &s3)) {
                double ex = 0;
                for (int i = 0; i < a->nF; i++) ex = fmax(ex, fabs(xv[i] - Fa[i]) / fm);
                for (int p = 0; p < a->jac.nz; p++) Jx[a->jac.row[p] + (size_t)a->jac.col[p] * a->nF] += xv[a->nF + p];
                for (size_t i = 0; i < nd; i++) ex = fmax(ex, fabs(Jx[i] - Ja[i]) / jm);
                worst = fmax(worst, ex);
            } else {
                CHECK_MSG(0, "%s: the expression form not evaluated", name);
                worst = INFINITY;
            }
            free(xv), free(xw), free(Jx);
        }
    }
    free(syms), free(Fa), free(Fb), free(Ja), free(Jb), free(q), free(v), free(ac), free(lam), free(mu), free(r);
    mblx_tape_free(tt);
out:
    mblx_tape_free(xt);
    mbl_model_free(a);
    mbl_model_free(b);
    free(sym);
    return worst;
}

/* a spatial chain: revolute and prismatic joints about tilted axes, centres of mass off the
 * joints, full inertia tensors, gravity off the axes, a spring, a damper and a joint torque */
static const char *chain_fmt =
    "model: mechanism\n"
    "coordinates: relative\n"
    "space: spatial\n"
    "parameters: {m1: 1.3, m2: 0.7, k: 40, c: 0.3}\n"
    "ground:\n"
    "  markers:\n"
    "    o: {position: [0.1, -0.2, 0.3], zaxis: [0.3, 1, 0.2]}\n"
    "    anchor: {position: [1, 0.5, -0.4]}\n"
    "    hole: {position: [0.9, 0.3, 0.3]}\n"
    "bodies:\n"
    "  a:\n"
    "    mass: m1\n"
    "    inertia: [0.11, 0.09, 0.07, 0.005, -0.004, 0.003]\n"
    "    cm: [0.05, -0.12, 0.2]\n"
    "    markers:\n"
    "      a0: {zaxis: [0.3, 1, 0.2]}\n"
    "      a1: {position: [0.4, 0.1, -0.2], zaxis: [1, 0.2, -0.3]}\n"
    "  b:\n"
    "    mass: m2\n"
    "    inertia: [0.03, 0.05, 0.04, -0.005, 0.004, 0.002]\n"
    "    cm: [0.1, 0.2, -0.05]\n"
    "    position: [0.4, 0.1, -0.2]\n"
    "    markers:\n"
    "      b0: {zaxis: [1, 0.2, -0.3]}\n"
    "      b1: {position: [0.2, 0.3, 0.1], zaxis: [0, 0.4, 1]}\n"
    "  c:\n"
    "    mass: 0.9\n"
    "    inertia: [0.02, 0.03, 0.025, 0.001, 0.002, -0.003]\n"
    "    cm: [-0.1, 0.05, 0.3]\n"
    "    position: [0.6, 0.4, -0.1]\n"
    "    markers:\n"
    "      c0: {zaxis: [0, 0.4, 1]}\n"
    "      c1: {position: [0.1, -0.2, 0.4]}\n"
    "  d:\n"
    "    mass: 0.5\n"
    "    inertia: [0.01, 0.012, 0.009, 0.0, 0.001, 0.0]\n"
    "    cm: [0.05, 0.05, 0.05]\n"
    "    position: [0.7, 0.2, 0.3]\n"
    "    markers:\n"
    "      d0: {}\n"
    "      tip: {position: [0.2, 0.1, 0]}\n"
    "joints:\n"
    "  j1: {type: revolute, i: a0, j: o}\n"
    "  j2: {type: prismatic, i: b0, j: a1}\n"
    "  j3: {type: revolute, i: b1, j: c0}\n"
    "  j4: {type: revolute, i: d0, j: c1}\n"
    "%s"
    "forces:\n"
    "  weight: {type: gravity, g: [0.5, -1.2, -9.81]}\n"
    "  spring: {type: spring, i: tip, j: anchor, stiffness: k, damping: c, length: 0.3}\n"
    "  drive: {type: force, i: c0, frame: b1, reaction: b1, torque: [0, 0, \"0.4*JV(j3) + u\"]}\n"
    "  push: {type: force, i: b0, frame: a1, reaction: a1, force: [0, 0, \"-2*JQ(j2)\"]}\n"
    "inputs: {u: 0}\n"
    "outputs: {r1: \"FX(j3)\", r2: \"TY(j3)\", r3: \"FZ(j2)\", r4: \"TZ(j2)\", r5: \"TX(j1)\", r6: \"FY(j4)\"}\n"
    "linearize: {at: given}\n";

/* a floating base (absolute coordinates, Euler parameters) carrying a two-link arm */
static const char *floating_text =
    "model: mechanism\n"
    "coordinates: relative\n"
    "space: spatial\n"
    "bodies:\n"
    "  base:\n"
    "    mass: 3\n"
    "    inertia: [0.2, 0.3, 0.25, 0.01, 0, 0.02]\n"
    "    position: [0, 0, 1]\n"
    "    velocity: [0.1, 0, 0]\n"
    "    markers:\n"
    "      s: {position: [0.1, 0, 0.2], zaxis: [0, 1, 0]}\n"
    "  l1:\n"
    "    mass: 1\n"
    "    inertia: [0.02, 0.03, 0.01]\n"
    "    cm: [0, 0, -0.2]\n"
    "    position: [0.1, 0, 1.2]\n"
    "    markers:\n"
    "      p1: {zaxis: [0, 1, 0]}\n"
    "      e1: {position: [0, 0, -0.4], zaxis: [1, 0, 0]}\n"
    "  l2:\n"
    "    mass: 0.6\n"
    "    inertia: [0.01, 0.01, 0.004]\n"
    "    cm: [0, 0, -0.15]\n"
    "    position: [0.1, 0, 0.8]\n"
    "    markers:\n"
    "      p2: {zaxis: [1, 0, 0]}\n"
    "joints:\n"
    "  h1: {type: revolute, i: p1, j: s}\n"
    "  h2: {type: revolute, i: p2, j: e1}\n"
    "forces:\n"
    "  weight: {type: gravity, g: [0, 0, -9.81]}\n"
    "linearize: {at: given}\n";

/* a planar tree: revolute and prismatic joints (one with marker i on the parent, so that the
 * coordinate turns or moves the child against the axis), a fixed joint, markers at angles, centres
 * of mass off the joints, gravity off the axes, a torsion spring across a tree joint, a spring, a
 * damper and a joint torque given to the joint (its reaction on the parent) */
static const char *planar_fmt =
    "model: mechanism\n"
    "coordinates: relative\n"
    "space: planar\n"
    "parameters: {m1: 1.3, m2: 0.7, k: 40, c: 0.3}\n"
    "ground:\n"
    "  markers:\n"
    "    o: {position: [0.1, -0.2], angle: 0.3}\n"
    "    anchor: {position: [1, 0.5]}\n"
    "    hole: {position: [1.5, -0.3]}\n"
    "bodies:\n"
    "  a:\n"
    "    mass: m1\n"
    "    inertia: 0.11\n"
    "    cm: [0.05, -0.12]\n"
    "    angle: 0.3\n"
    "    position: [0.1, -0.2]\n"
    "    markers:\n"
    "      a0: {}\n"
    "      a1: {position: [0.4, 0.1], angle: 0.7}\n"
    "  b:\n"
    "    mass: m2\n"
    "    inertia: 0.03\n"
    "    cm: [0.1, 0.2]\n"
    "    angle: 0.5\n"
    "    position: [0.45, 0.0]\n"
    "    markers:\n"
    "      b0: {angle: 0.5}\n"
    "      b1: {position: [0.2, 0.3], angle: -0.4}\n"
    "  c:\n"
    "    mass: 0.9\n"
    "    inertia: 0.025\n"
    "    cm: [-0.1, 0.05]\n"
    "    angle: 0.6\n"
    "    position: [0.5, 0.4]\n"
    "    markers:\n"
    "      c0: {angle: -0.5}\n"
    "      c1: {position: [0.3, -0.2]}\n"
    "  d:\n"
    "    mass: 0.5\n"
    "    inertia: 0.009\n"
    "    cm: [0.05, 0.08]\n"
    "    angle: 0.2\n"
    "    position: [0.7, 0.2]\n"
    "    markers:\n"
    "      d0: {}\n"
    "      tip: {position: [0.6, 0.1]}\n"
    "  e:\n"
    "    mass: 0.4\n"
    "    inertia: 0.004\n"
    "    cm: [0.1, -0.05]\n"
    "    angle: 0.2\n"
    "    position: [0.9, 0.1]\n"
    "    markers:\n"
    "      e0: {position: [-0.2, 0.1]}\n"
    "joints:\n"
    "  j1: {type: revolute, i: a0, j: o}\n"
    "  j2: {type: prismatic, i: b0, j: a1}\n"
    "  j3: {type: revolute, i: b1, j: c0}\n"
    "  j4: {type: revolute, i: d0, j: c1}\n"
    "  j5: {type: fixed, i: e0, j: tip}\n"
    "%s"
    "forces:\n"
    "  weight: {type: gravity, g: [0.5, -9.81]}\n"
    "  spring: {type: spring, i: tip, j: anchor, stiffness: k, damping: c, length: 0.3}\n"
    "  twist: {type: torsion, i: d0, j: c1, stiffness: 3, damping: 0.2, angle: 0.1}\n"
    "  drive: {type: force, i: c0, reaction: b1, torque: \"0.4*JV(j3) + u\"}\n"
    "  push: {type: force, i: b0, reaction: a1, force: [\"-2*JQ(j2)\", 0.3]}\n"
    "inputs: {u: 0}\n"
    "outputs: {r1: \"FX(j3)\", r2: \"TZ(j3)\", r3: \"FY(j2)\", r4: \"TZ(j2)\", r5: \"FX(j1)\", r6: \"FY(j4)\",\n"
    "          x: \"DX(tip, o)\", y: \"DY(tip, o)\", w: \"WZ(tip, o)\"}\n"
    "linearize: {at: given}\n";

/* A tree model (fmt with a %s for one more joint) open, then closed by the joint close: the
 * structured term against the symbolic path */
static void check_open_and_closed(const char *fmt, const char *close, const char *name, const char *what,
                                  const char *closed_by, int native)
{
    for (int loop = 0; loop < 2; loop++) {
        char text[6000];
        snprintf(text, sizeof text, fmt, loop ? close : "");
        int ns;
        double d = compare_text(text, name, 5, &ns);
        printf("  %s%s: %.2e, %d structured entries, kinematics %s (texts %.2e)\n", what, loop ? closed_by : "", d, ns,
               last_native ? "native" : "by the texts' tape", last_texts_diff);
        CHECK(ns > 0);
        CHECK(d < 1e-12);
        CHECK_EQ_INT(last_native, native);
        CHECK(last_texts_diff < 1e-14);
    }
}

TEST(rtree_planar_tree_equals_symbolic)
{
    check_open_and_closed(planar_fmt, "  close: {type: revolute, i: tip, j: hole, cut: true}\n", "planar tree",
                          "planar tree (revolute, prismatic, fixed, offsets)", " closed by a cut revolute joint", 0);
}

/* the hanging chain of n uniform rods (mass m, length l) on revolute joints, planar, in relative
 * coordinates (the benchmark of docs/benchmarks.md, issue 34 item 3) */
static char *hanging_chain(int n, int symbolic)
{
    size_t cap = 400 + 260 * (size_t)n;
    char *t = malloc(cap);
    if (!t) return NULL;
    size_t k = (size_t)snprintf(t, cap,
                                "model: mechanism\nspace: planar\ncoordinates: relative\n%s"
                                "parameters: {m: 1, l: 0.5, g: 9.81}\nground: {markers: {top: {}}}\nbodies:\n",
                                symbolic ? "tree_dynamics: symbolic\n" : "");
    for (int b = 0; b < n; b++)
        k += (size_t)snprintf(t + k, cap - k,
                              "  rod%d:\n    mass: m\n    inertia: m*l^2/12\n    position: [0, \"-(%d + 0.5)*l\"]\n"
                              "    markers: {up%d: {position: [0, \"l/2\"]}, dn%d: {position: [0, \"-l/2\"]}}\n",
                              b, b, b, b);
    k += (size_t)snprintf(t + k, cap - k, "joints:\n");
    for (int b = 0; b < n; b++) {
        char j[32];
        if (b) snprintf(j, sizeof j, "dn%d", b - 1);
        else snprintf(j, sizeof j, "top");
        k += (size_t)snprintf(t + k, cap - k, "  pin%d: {type: revolute, i: up%d, j: %s}\n", b, b, j);
    }
    snprintf(t + k, cap - k, "forces:\n  weight: {type: gravity, g: [0, \"-g\"]}\nlinearize: {at: equilibrium}\n");
    return t;
}

/* ascending frequencies (rad/s) of a model's oscillatory modes */
static int chain_omegas(const char *text, double *w, int cap)
{
    mbl_status st;
    mbl_model *md = NULL;
    int n = 0;
    CHECK_MSG(mbl_model_load_string(text, strlen(text), "chain", NULL, 0, &md, &st) == 0, "%s", st.msg);
    if (md) n = fixture_omegas(md, NULL, w, cap, NULL);
    mbl_model_free(md);
    for (int i = 1; i < n; i++) /* ascending (insertion) */
        for (int j = i; j > 0 && w[j] < w[j - 1]; j--) {
            double x = w[j];
            w[j] = w[j - 1], w[j - 1] = x;
        }
    return n;
}

/* The chain's frequencies from its mass and stiffness matrices in closed form (the rods' angles
 * from the vertical, small motions about the hanging equilibrium): with c_k(j) = 1 for j < k, 1/2
 * for j = k, 0 for j > k (how rod k's centre moves with joint j),
 *   M_ij = m l^2 sum_k c_k(i) c_k(j) + delta_ij m l^2 / 12,   K_jj = m g l sum_k c_k(j),
 * omega^2 the eigenvalues of K x = omega^2 M x (LAPACK dsygv); the structured term and the
 * symbolic path both give them. */
TEST(rtree_planar_chain_frequencies)
{
    enum { N = 8 };
    const double m = 1, l = 0.5, g = 9.81;
    double *M = calloc(N * N, sizeof *M), *K = calloc(N * N, sizeof *K), ev[N];
    CHECK(M && K);
    if (!M || !K) {
        free(M), free(K);
        return;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) {
                double ci = i < k ? 1 : i == k ? 0.5 : 0, cj = j < k ? 1 : j == k ? 0.5 : 0;
                s += ci * cj;
            }
            M[i + N * j] = m * l * l * s + (i == j ? m * l * l / 12 : 0);
        }
    for (int j = 0; j < N; j++) {
        double s = 0;
        for (int k = 0; k < N; k++) s += j < k ? 1 : j == k ? 0.5 : 0;
        K[j + N * j] = m * g * l * s;
    }
    int info = LAPACKE_dsygv(LAPACK_COL_MAJOR, 1, 'N', 'U', N, K, N, M, N, ev);
    CHECK(info == 0);
    double w[2][N + 4];
    int nw[2];
    for (int s = 0; s < 2; s++) {
        char *t = hanging_chain(N, s);
        nw[s] = t ? chain_omegas(t, w[s], N + 4) : -1;
        free(t);
    }
    CHECK(nw[0] == N && nw[1] == N);
    double dref = 0, dsym = 0;
    for (int i = 0; i < N && nw[0] == N && nw[1] == N && info == 0; i++) {
        double wr = sqrt(ev[i]);
        dref = fmax(dref, fabs(w[0][i] - wr) / wr);
        dsym = fmax(dsym, fabs(w[0][i] - w[1][i]) / w[1][i]);
    }
    printf("  planar chain of %d rods: frequencies %.2e from the closed-form M, K, %.2e from the symbolic path\n", N,
           dref, dsym);
    CHECK(dref < 1e-10);
    CHECK(dsym < 1e-12);
    free(M), free(K);
}

TEST(rtree_spatial_chain_equals_symbolic)
{
    check_open_and_closed(chain_fmt, "  close: {type: spherical, i: tip, j: hole, cut: true}\n", "chain",
                          "spatial chain (revolute, prismatic, offsets)", " closed by a cut spherical joint", 2);
}

TEST(rtree_urdf_arm_equals_symbolic)
{
    int ns;
    static const char *yaml = "model: urdf\nfile: examples/urdf/arm7.urdf\ncoordinates: relative\n";
    double d = compare_text(yaml, "arm7", 4, &ns);
    printf("  URDF 7-joint arm: %.2e, %d structured entries, texts %.2e\n", d, ns, last_texts_diff);
    CHECK(ns > 0);
    CHECK(d < 1e-12);
    CHECK_EQ_INT(last_native, 1); /* every local value a number */
    CHECK(last_texts_diff < 1e-14);
}

TEST(rtree_floating_base_equals_symbolic)
{
    int ns;
    double d = compare_text(floating_text, "floating", 4, &ns);
    /* the arm on a floating base stays symbolic (its root has no tree joint): the same model */
    printf("  floating base with an arm: %.2e, %d structured entries\n", d, ns);
    CHECK(ns == 0);
    CHECK(d < 1e-12);
}

TEST(rtree_cut_joints_equal_symbolic)
{
    static const char *files[] = {"examples/mech/spatial_fourbar.yaml", "examples/mech/spatial_fourbar_relative.yaml",
                                  "examples/mech/slider_pendulum_relative.yaml",
                                  /* planar: the four-bar closed by a cut revolute, the slider-pendulum */
                                  "tests/mech/fourbar_general.yaml", "examples/mech/slider_pendulum.yaml"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char *t = test_slurp(files[f]);
        CHECK(t != NULL);
        if (!t) continue;
        /* a model written in absolute coordinates: in relative ones, with its cut joints */
        char *x = t;
        if (!strstr(t, "coordinates: relative\n")) {
            const char *m = strstr(t, "model: mechanism\n");
            x = malloc(strlen(t) + 32);
            if (m && x) {
                size_t head = (size_t)(m - t) + strlen("model: mechanism\n");
                memcpy(x, t, head);
                strcpy(x + head, "coordinates: relative\n");
                strcat(x, t + head);
            }
        }
        int ns = -1;
        double d = x ? compare_text(x, files[f], 4, &ns) : INFINITY;
        printf("  %-45s %.2e, %d structured entries, kinematics %d, texts %.2e\n", files[f], d, ns, last_native,
               last_texts_diff);
        CHECK(ns > 0);
        CHECK(d < 1e-12);
        CHECK_EQ_INT(last_native, strstr(t, "space: planar") ? 0 : 2); /* planar: the texts' tape; parameters */
        CHECK(last_texts_diff < 1e-14);
        if (x != t) free(x);
        free(t);
    }
}

/* the eigenvalue sensitivities (second derivatives of the residual by the engine, through the
 * closed-form Jacobian entries) equal the symbolic formulation's */
TEST(rtree_sensitivities_equal_symbolic)
{
    char *t = test_slurp("examples/mech/slider_pendulum_relative.yaml");
    char *s = t ? symbolic_of(t) : NULL;
    CHECK(s != NULL);
    if (!s) {
        free(t);
        return;
    }
    mbl_sensitivity *sens[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const char *x = k ? s : t;
        mbl_status st;
        mbl_model *md = NULL;
        mbl_point *pt = NULL;
        mbl_dae_deriv *d = NULL;
        mbl_sens_options o;
        mbl_sens_options_default(&o);
        o.shapes = 0;
        int rc = mbl_model_load_string(x, strlen(x), "slider", NULL, 0, &md, &st);
        if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
        if (!rc) rc = mbl_dae_deriv_new(md, &d, &st);
        if (!rc) rc = mbl_sensitivity_compute(d, pt, NULL, 0, &o, &sens[k], &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        mbl_dae_deriv_free(d);
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    if (sens[0] && sens[1]) {
        CHECK(sens[0]->nmode == sens[1]->nmode && sens[0]->nwrt == sens[1]->nwrt && sens[0]->nwrt > 0);
        double dmax = 0, mag = 0;
        for (int i = 0; i < sens[0]->nmode && i < sens[1]->nmode; i++)
            for (int p = 0; p < sens[0]->nwrt; p++) {
                const mbl_sens_mode *a = &sens[0]->modes[i], *b = &sens[1]->modes[i];
                if (!a->defined || !b->defined) continue;
                dmax = fmax(dmax, fmax(fabs(a->dre[p] - b->dre[p]), fabs(a->dim[p] - b->dim[p])));
                mag = fmax(mag, fmax(fabs(b->dre[p]), fabs(b->dim[p])));
            }
        printf("  slider-pendulum eigenvalue sensitivities: %.2e of %.2e\n", dmax, mag);
        CHECK(mag > 1e-3);
        CHECK(dmax < 1e-10 * mag);
    }
    mbl_sensitivity_free(sens[0]);
    mbl_sensitivity_free(sens[1]);
    free(s);
    free(t);
}

int main(void)
{
    RUN(rtree_spatial_chain_equals_symbolic);
    RUN(rtree_planar_tree_equals_symbolic);
    RUN(rtree_planar_chain_frequencies);
    RUN(rtree_urdf_arm_equals_symbolic);
    RUN(rtree_floating_base_equals_symbolic);
    RUN(rtree_cut_joints_equal_symbolic);
    RUN(rtree_sensitivities_equal_symbolic);
    return test_summary("mech rtree");
}
