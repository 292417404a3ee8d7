/* Held velocities of `at: given` (docs/model-files.md, "Held velocities"). Every velocity the file
 * writes is held exactly at a given point, and only the velocities it leaves open are solved for:
 *   - a coordinate's rate (`velocities: {x: 1}`, a mechanism body's `velocity` or
 *     `angular_velocity`, a joint's `v0`): md->v_given, the value in md->v0;
 *   - an expression (`velocities: {"x - y": 1}` at the equation level, `velocities: {"JV(crank)":
 *     12}` in a mechanism, whose compiler writes the measure out): the held quantity is the
 *     expression itself when it contains velocities (it must be linear in them), else its total
 *     time derivative (a position-level key holds its rate). Kept here as h_j(q, v, t) = c_j with
 *     the exact gradient dh_j/dv (nodes, evaluated at the point by model_held_eval).
 * src/opoint solves the velocity constraints together with these rows (opoint/given_vel.c). */
#include "model/formulate.h"

#include <ctype.h>

/* A key of `velocities:` that is not a plain name (letters, digits, '_') is an expression. */
static int is_plain_name(const char *s)
{
    if (!s || !*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

int model_take_held(loader *L)
{
    mbl_src *s = L->src;
    int keep = 0;
    for (int i = 0; i < s->velocities.n; i++) {
        mbl_src_item it = s->velocities.items[i];
        if (is_plain_name(it.key)) {
            s->velocities.items[keep++] = it;
            continue;
        }
        mbl_src_list *l = &s->held_velocities;
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 8;
            mbl_src_item *x = mbl_realloc_array(l->items, (size_t)cap, sizeof *x);
            if (!x) {
                for (; i < s->velocities.n; i++) s->velocities.items[keep++] = s->velocities.items[i];
                s->velocities.n = keep;
                return mbl_error(L->st, MBL_ENOMEM, "out of memory");
            }
            l->items = x;
            l->cap = cap;
        }
        l->items[l->n++] = it; /* key: the expression, key2 (NULL): its label is the key itself */
    }
    s->velocities.n = keep;
    model_name_index_reset();
    return 0;
}

/* held item `it` as md's held velocity j: its expression h (velocity level) and gradient entries;
 * 0 (*ng = 0: an optional item, a mechanism body's, dropped) or an error at its key */
static int held_item(loader *L, const mbl_src_item *it, int optional, int j, mblx_id *gd, int *gi, int *ng)
{
    mbl_model *md = L->md;
    const char *label = md->held_label[j];
    char what[200];
    snprintf(what, sizeof what, "the held velocity '%.150s'", label);
    mbl_src_item k;
    memset(&k, 0, sizeof k);
    k.text = it->key;
    k.line = it->key_line;
    k.col = it->key_col;
    mblx_id e = MBLX_NONE;
    int rc = model_parse_item(L, &k, SCOPE_FULL, what, &e);
    if (rc) return rc;
    static const int refused[] = {MBL_BLK_A, MBL_BLK_LAMBDA, MBL_BLK_MU, MBL_BLK_XD, MBL_BLK_Z, MBL_BLK_X};
    for (size_t b = 0; b < sizeof refused / sizeof *refused; b++)
        if (model_depends_on_block(md, e, refused[b]))
            return mbl_error(L->st, MBL_EMODEL,
                             "%s:%d:%d: %s must be an expression of the coordinates, their rates, parameters and t",
                             L->src->file, k.line, k.col, what);
    if (!model_depends_on_block(md, e, MBL_BLK_V)) e = model_total_der(md, e);
    if (e == MBLX_NONE) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    *ng = 0;
    for (int i = 0; i < md->n; i++) {
        if (!mblx_depends(md->g, e, md->v[i])) continue;
        mblx_id d = mblx_diff(md->g, e, md->v[i]);
        if (d == MBLX_NONE) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        if (model_depends_on_block(md, d, MBL_BLK_V))
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s is not linear in the velocities (in der(%s))",
                             L->src->file, k.line, k.col, what, md->qname[i]);
        gi[*ng] = i, gd[(*ng)++] = d;
    }
    if (!*ng && optional) return 0; /* a body's velocity component its joints fix */
    if (!*ng)
        return mbl_error(L->st, MBL_EMODEL,
                         "%s:%d:%d: %s does not change with the velocities: nothing to hold (write a coordinate, a "
                         "measure or an expression whose rate is meant)",
                         L->src->file, k.line, k.col, what);
    md->held_x[j] = e;
    snprintf(what, sizeof what, "the value of the held velocity '%.150s'", label);
    return model_load_value(L, it, what, &md->held_val[j], NULL);
}

int model_formulate_held(loader *L)
{
    mbl_model *md = L->md;
    int nf = L->src->held_velocities.n, nh = nf + L->src->held_body_velocities.n, rc = 0;
    if (!nh) return 0;
    md->held_label = mbl_calloc((size_t)nh + 1, sizeof *md->held_label);
    md->held_x = mbl_calloc((size_t)nh, sizeof *md->held_x);
    md->held_val = mbl_calloc((size_t)nh, sizeof *md->held_val);
    md->held_gp = mbl_calloc((size_t)nh + 1, sizeof *md->held_gp);
    mblx_id *gd = mbl_alloc_array((size_t)md->n + 1, sizeof *gd);
    int *gi = mbl_alloc_array((size_t)md->n + 1, sizeof *gi);
    if (!md->held_label || !md->held_x || !md->held_val || !md->held_gp || !gd || !gi) {
        mbl_free(gd), mbl_free(gi);
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    md->nheld = 0; /* freed with the model from here on (held_label: all nh entries) */
    for (int i = 0; i < nh && !rc; i++) {
        const mbl_src_item *it = i < nf ? &L->src->held_velocities.items[i] : &L->src->held_body_velocities.items[i - nf];
        int j = md->nheld;
        md->held_label[j] = model_str_dup(it->key2 ? it->key2 : it->key);
        if (!md->held_label[j]) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        for (int a = 0; a < j && !rc; a++)
            if (!strcmp(md->held_label[a], md->held_label[j]))
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: duplicate held velocity '%s'", L->src->file, it->key_line,
                               it->key_col, md->held_label[j]);
        int ng = 0;
        if (!rc) rc = held_item(L, it, i >= nf, j, gd, gi, &ng);
        if (!rc && !ng) { /* dropped */
            mbl_free(md->held_label[j]);
            md->held_label[j] = NULL;
            continue;
        }
        md->nheld = j + 1;
        if (rc) break;
        int p0 = md->held_gp[j];
        int *ngi = mbl_realloc_array(md->held_gi, (size_t)(p0 + ng) + 1, sizeof *ngi);
        if (ngi) md->held_gi = ngi;
        mblx_id *ngd = mbl_realloc_array(md->held_gd, (size_t)(p0 + ng) + 1, sizeof *ngd);
        if (ngd) md->held_gd = ngd;
        if (!ngi || !ngd) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            break;
        }
        for (int p = 0; p < ng; p++) md->held_gi[p0 + p] = gi[p], md->held_gd[p0 + p] = gd[p];
        md->held_gp[j + 1] = p0 + ng;
    }
    mbl_free(gd), mbl_free(gi);
    return rc;
}

void model_held_free(mbl_model *md)
{
    for (int j = 0; md->held_label && j <= md->nheld; j++) mbl_free(md->held_label[j]); /* one past: a failed item */
    mbl_free(md->held_label), mbl_free(md->held_x), mbl_free(md->held_val);
    mbl_free(md->held_gp), mbl_free(md->held_gi), mbl_free(md->held_gd);
}

int model_held_eval(const mbl_model *md, const double *syms, double *h, double *g, mbl_status *st)
{
    for (int j = 0; j < md->nheld; j++) {
        mbl_status st1;
        mbl_status_clear(&st1);
        int rc = mblx_eval(md->g, md->held_x[j], syms, &h[j], &st1);
        for (int p = md->held_gp[j]; !rc && p < md->held_gp[j + 1]; p++)
            rc = mblx_eval(md->g, md->held_gd[p], syms, &g[p], &st1);
        if (rc)
            return mbl_error(st, rc, "%s: the held velocity '%s' cannot be evaluated at the point: %s", md->file,
                             md->held_label[j], st1.msg);
    }
    return 0;
}

int model_velocity_find(const mbl_model *md, const char *name, int *coord)
{
    if (!name) return -1;
    size_t len = strlen(name);
    for (int j = 0; j < md->nheld; j++) /* the file's own keys first: they may name a coordinate */
        if (!strcmp(md->held_label[j], name)) {
            *coord = 0;
            return j;
        }
    const char *s = name;
    if (len > 5 && !strncmp(name, "der(", 4) && name[len - 1] == ')') s = name + 4, len -= 5;
    for (int i = 0; i < md->n; i++)
        if (strlen(md->qname[i]) == len && !strncmp(md->qname[i], s, len)) {
            *coord = 1;
            return i;
        }
    return -1;
}

int mbl_model_velocity_find(const mbl_model *model, const char *name)
{
    int coord = 0;
    return model && model_velocity_find(model, name, &coord) >= 0 ? 1 : 0;
}
