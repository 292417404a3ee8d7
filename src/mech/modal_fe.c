/* The spatial modal body of an FE code's part (docs/fe-parts.md): `fe:` names the files the FE code
 * wrote, the markers name the part's interface nodes, src/fe reads the part, reduces it by
 * Craig-Bampton and integrates the invariants of its modes, and mech_modal3_build (modal_body3.c)
 * makes the body, as it does for invariants written by hand.
 *
 *   link:
 *     type: modal
 *     position: [0, 0, 0]   axis: [0, 0, 1]   angle: 0      (the floating frame, as a spatial beam's)
 *     damping: {alpha: 0, beta: 1e-5}
 *     fe:
 *       calculix: link           (the job: link.sti, link.mas, link.dof and the deck link.inp)
 *       nastran: {punch: link.pch, stiffness: KAAX, mass: MAAX, grids: link.bdf}   (or this)
 *       modes: 10                (fixed-interface normal modes kept; and/or)
 *       cutoff: 5000             (Hz: those below it; both given: the fewer)
 *       origin: [0, 0, 0]        (the frame's origin in the part's coordinates; its axes are the part's)
 *     markers:
 *       a: {set: END_A}                 (the set's nodes tied rigidly to their centroid)
 *       b: {set: END_B, at: [1, 0, 0]}  (... or to a point, in the part's coordinates)
 *       c: {nodes: [4, 5, 9]}           (a list of node numbers, as a set; for Nastran parts)
 *       d: {node: 17}                   (one node: its translations, and rotations where it has them)
 *
 * Paths are relative to the model file. The markers are the reduction's interfaces: one at least,
 * and together they must hold the part (a node set, or three nodes not on a line). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fe/fe.h"
#include "mech/mech_internal.h"

/* the number in the scalar node n */
static int scalar_num(mech *M, const yaml_node_t *n, const char *what, double *v)
{
    const char *t;
    int rc = mech_text_of(M, n, what, &t);
    return rc ? rc : mech_eval_text(M, t, n, what, v);
}

/* fe's message after the model file's place and the body */
static int fe_err(mech *M, const yaml_node_t *n, const char *what, int rc)
{
    if (rc == MBL_ENOMEM) return mech_oom(M);
    char msg[sizeof M->st->msg];
    snprintf(msg, sizeof msg, "%s", M->st->msg);
    return err_at(M, n, "%s: %s", what, msg);
}

/* the part named by fe: CalculiX's job or Nastran's punch file */
static int read_part(mech *M, const yaml_node_t *fe, const char *what, fe_part *p)
{
    yaml_node_t *cx = mech_get(M, fe, "calculix"), *nx = mech_get(M, fe, "nastran");
    if (!cx == !nx) return err_at(M, fe, "%s: fe: give the part's files by 'calculix: JOB' or 'nastran: {punch, stiffness, mass}', one of them", what);
    int rc;
    if (cx) {
        if (!mech_is_scalar(cx) || !mech_sc(cx)[0]) return err_at(M, cx, "%s: fe: 'calculix' is the job's path (without extension)", what);
        rc = fe_read_calculix(mech_rel_path(M, mech_sc(cx)), p, M->st);
        return rc ? fe_err(M, cx, what, rc) : 0;
    }
    static const char *ok[] = {"punch", "stiffness", "mass", "grids", NULL};
    if ((rc = mech_want_map(M, nx, "fe: nastran")) || (rc = mech_check_keys(M, nx, ok, "fe: nastran"))) return rc;
    const char *f[4];
    for (int k = 0; k < 4; k++) {
        yaml_node_t *n = mech_get(M, nx, ok[k]);
        if (!n && k < 3) return err_at(M, nx, "%s: fe: nastran: missing '%s'", what, ok[k]);
        if (n && (!mech_is_scalar(n) || !mech_sc(n)[0])) return err_at(M, n, "%s: fe: nastran: '%s' must be a name", what, ok[k]);
        f[k] = n ? mech_sc(n) : NULL;
    }
    rc = fe_read_nastran(mech_rel_path(M, f[0]), f[1], f[2], f[3] ? mech_rel_path(M, f[3]) : NULL, p, M->st);
    return rc ? fe_err(M, nx, what, rc) : 0;
}

/* the reduction's options: modes, cutoff (at least one) */
static int read_opts(mech *M, const yaml_node_t *fe, const char *what, fe_reduce_opts *o)
{
    o->modes = -1, o->cutoff_hz = 0;
    yaml_node_t *mn = mech_get(M, fe, "modes"), *cn = mech_get(M, fe, "cutoff");
    if (!mn && !cn) return err_at(M, fe, "%s: fe: give 'modes' (fixed-interface modes kept) or 'cutoff' (Hz), or both", what);
    double v;
    int rc;
    if (mn) {
        if ((rc = scalar_num(M, mn, "modes", &v))) return rc;
        if (!(v >= 0 && v <= 1e6) || v != floor(v)) return err_at(M, mn, "%s: fe: 'modes' must be a whole number from 0, not %g", what, v);
        o->modes = (int)v;
    }
    if (cn) {
        if ((rc = scalar_num(M, cn, "cutoff", &v))) return rc;
        if (!(v > 0) || !isfinite(v)) return err_at(M, cn, "%s: fe: 'cutoff' must be a positive frequency in Hz, not %g", what, v);
        o->cutoff_hz = v;
    }
    return 0;
}

/* a spider's nodes given as a list of the part's node numbers */
static int node_list(mech *M, const yaml_node_t *ln, const char *w, const char *name, const fe_part *p, fe_iface *f)
{
    if (ln->type != YAML_SEQUENCE_NODE || ln->data.sequence.items.top == ln->data.sequence.items.start)
        return err_at(M, ln, "%s: marker '%s': 'nodes' is a list of the part's node numbers", w, name);
    int n = (int)(ln->data.sequence.items.top - ln->data.sequence.items.start);
    int *idx = mbl_alloc_array((size_t)n, sizeof *idx);
    if (!idx || !mech_keep(M, (char *)idx)) return mech_oom(M);
    for (int j = 0; j < n; j++) {
        yaml_node_t *e = mech_node(M->doc, ln->data.sequence.items.start[j]);
        double id;
        int rc = e && mech_is_scalar(e) ? scalar_num(M, e, "nodes", &id) : err_at(M, ln, "%s: marker '%s': 'nodes' holds numbers", w, name);
        if (rc) return rc;
        idx[j] = id == floor(id) && fabs(id) < 2e9 ? fe_part_node(p, (int)id) : -1;
        if (idx[j] < 0) return err_at(M, e, "%s: marker '%s': the part (%s) has no node %g", w, name, p->file, id);
    }
    f->nnodes = n, f->nodes = idx;
    return 0;
}

/* the markers as the interfaces: {set: NAME | nodes: [ID, ...][, at: [x, y, z]]} or {node: ID} */
static int read_ifaces(mech *M, const yaml_node_t *body, const yaml_node_t *mks, const char *what, const fe_part *p,
                       fe_iface **out, int *nout, const char ***names)
{
    if (!mks || mks->type != YAML_MAPPING_NODE || mks->data.mapping.pairs.top == mks->data.mapping.pairs.start)
        return err_at(M, mks ? mks : body, "%s: a body of an FE part needs markers (its interfaces: {set: NAME} or {node: ID})", what);
    int n = (int)(mks->data.mapping.pairs.top - mks->data.mapping.pairs.start);
    fe_iface *f = mbl_calloc((size_t)n, sizeof *f);
    const char **nm = mbl_calloc((size_t)n, sizeof *nm);
    if (!f || !nm || !mech_keep(M, (char *)f) || !mech_keep(M, (char *)nm)) return mech_oom(M);
    char w[240];
    snprintf(w, sizeof w, "markers of %s", what);
    for (int i = 0; i < n; i++) {
        yaml_node_pair_t *pr = mks->data.mapping.pairs.start + i;
        yaml_node_t *key = mech_node(M->doc, pr->key), *val = mech_node(M->doc, pr->value);
        static const char *ok[] = {"set", "nodes", "at", "node", NULL};
        int rc = mech_want_map(M, val, w);
        if (!rc) rc = mech_check_keys(M, val, ok, w);
        if (rc) return rc;
        yaml_node_t *sn = mech_get(M, val, "set"), *ln = mech_get(M, val, "nodes"), *an = mech_get(M, val, "at"),
                    *nn = mech_get(M, val, "node");
        nm[i] = mech_sc(key), f[i].name = nm[i];
        if ((sn != NULL) + (ln != NULL) + (nn != NULL) != 1)
            return err_at(M, val, "%s: marker '%s': give 'set: NAME' (a node set of the part), 'nodes: [ID, ...]' or 'node: ID', one of them", w, nm[i]);
        if (nn) {
            double id;
            if (an) return err_at(M, an, "%s: marker '%s': 'at' belongs to a set (a node is where it is)", w, nm[i]);
            if ((rc = scalar_num(M, nn, "node", &id))) return rc;
            f[i].node = id == floor(id) && fabs(id) < 2e9 ? fe_part_node(p, (int)id) : -1;
            if (f[i].node < 0) return err_at(M, nn, "%s: marker '%s': the part (%s) has no node %g", w, nm[i], p->file, id);
            continue;
        }
        f[i].node = -1;
        if (ln && (rc = node_list(M, ln, w, nm[i], p, &f[i]))) return rc;
        if (sn) {
            if (!mech_is_scalar(sn)) return err_at(M, sn, "%s: marker '%s': 'set' is the name of a node set", w, nm[i]);
            int s = fe_part_set(p, mech_sc(sn));
            if (s < 0) return err_at(M, sn, "%s: marker '%s': the part (%s) has no node set '%s'", w, nm[i], p->file, mech_sc(sn));
            f[i].nnodes = p->set_ptr[s + 1] - p->set_ptr[s], f[i].nodes = p->set_node + p->set_ptr[s];
            if (f[i].nnodes < 1) return err_at(M, sn, "%s: marker '%s': the node set '%s' is empty", w, nm[i], mech_sc(sn));
        }
        if (an) {
            if ((rc = mech_eval_vec(M, an, 3, "at", f[i].at))) return rc;
        } else { /* the centroid of the set's nodes */
            for (int j = 0; j < f[i].nnodes; j++)
                for (int r = 0; r < 3; r++) f[i].at[r] += p->xyz[3 * f[i].nodes[j] + r] / f[i].nnodes;
        }
    }
    *out = f, *nout = n, *names = nm;
    return 0;
}

int mech_read_modal_fe(mech *M, const yaml_node_t *key, const yaml_node_t *val, const yaml_node_t *fe)
{
    char what[200];
    snprintf(what, sizeof what, "body '%s'", mech_sc(key));
    static const char *ok[] = {"calculix", "nastran", "modes", "cutoff", "origin", NULL};
    int rc = mech_want_map(M, fe, "fe");
    if (!rc) rc = mech_check_keys(M, fe, ok, "fe");
    if (rc) return rc;
    fe_reduce_opts o;
    double origin[3] = {0, 0, 0};
    yaml_node_t *on = mech_get(M, fe, "origin");
    if ((rc = read_opts(M, fe, what, &o)) || (on && (rc = mech_eval_vec(M, on, 3, "origin", origin)))) return rc;
    fe_part p;
    fe_basis b;
    fe_invariants v;
    memset(&p, 0, sizeof p), memset(&b, 0, sizeof b), memset(&v, 0, sizeof v);
    fe_iface *f = NULL;
    const char **names = NULL;
    int nf = 0;
    yaml_node_t *mks = mech_get(M, val, "markers");
    rc = read_part(M, fe, what, &p);
    if (!rc) rc = read_ifaces(M, val, mks, what, &p, &f, &nf, &names);
    if (!rc && (rc = fe_reduce(&p, f, nf, &o, &b, M->st))) rc = fe_err(M, fe, what, rc);
    if (!rc && (rc = fe_invariants_of(&p, &b, origin, &v, M->st))) rc = fe_err(M, fe, what, rc);
    if (!rc) { /* the markers in the body frame */
        for (int i = 0; i < b.niface; i++)
            for (int r = 0; r < 3; r++) b.X[3 * i + r] -= origin[r];
        rc = mech_modal3_build(M, key, val, &v, &b, names);
    }
    fe_invariants_free(&v), fe_basis_free(&b), fe_part_free(&p);
    return rc;
}
