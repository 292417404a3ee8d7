/* `model: urdf` in a YAML file: its keys read, the URDF file found next to the YAML file and
 * translated (see urdf.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "mech/urdf_internal.h"
#include "model/source.h"

/* a YAML node as flow text, every scalar double-quoted (so expressions keep their meaning) */
static int flow(yaml_document_t *doc, const yaml_node_t *n, ubuf *b, int depth)
{
    if (!n || depth > 32) return -1;
    if (n->type == YAML_SCALAR_NODE) {
        mech_urdf_printf(b, "\"");
        for (size_t i = 0; i < n->data.scalar.length; i++) {
            unsigned char c = n->data.scalar.value[i];
            if (c == '"' || c == '\\') mech_urdf_printf(b, "\\%c", c);
            else if (c < 0x20) mech_urdf_printf(b, "\\x%02x", c);
            else mech_urdf_printf(b, "%c", c);
        }
        mech_urdf_printf(b, "\"");
        return 0;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        mech_urdf_printf(b, "[");
        for (yaml_node_item_t *p = n->data.sequence.items.start; p < n->data.sequence.items.top; p++) {
            if (p != n->data.sequence.items.start) mech_urdf_printf(b, ", ");
            if (flow(doc, yaml_document_get_node(doc, *p), b, depth + 1)) return -1;
        }
        mech_urdf_printf(b, "]");
        return 0;
    }
    mech_urdf_printf(b, "{");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        if (p != n->data.mapping.pairs.start) mech_urdf_printf(b, ", ");
        if (flow(doc, yaml_document_get_node(doc, p->key), b, depth + 1)) return -1;
        mech_urdf_printf(b, ": ");
        if (flow(doc, yaml_document_get_node(doc, p->value), b, depth + 1)) return -1;
    }
    mech_urdf_printf(b, "}");
    return 0;
}

static const char *ysc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

int mech_urdf_from_yaml(yaml_document_t *doc, const yaml_node_t *root, const char *file, const mbl_setting *sets,
                        int nsets, char **yaml, mbl_status *st)
{
    *yaml = NULL;
    mbl_urdf_opts o;
    mech_urdf_opts_default(&o);
    const yaml_node_t *fn = NULL;
    ubuf lin = {0};
    const char *hold[256];
    int nhold = 0;
    int rc = 0;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        const char *key = k->type == YAML_SCALAR_NODE ? ysc(k) : "";
        int scalar = v->type == YAML_SCALAR_NODE;
        if (!strcmp(key, "model")) continue;
        if (!strcmp(key, "file") && scalar) fn = v;
        else if (!strcmp(key, "name") && scalar) o.name = ysc(v);
        else if (!strcmp(key, "end_effector") && scalar) o.end_effector = ysc(v);
        else if (!strcmp(key, "coordinates") && scalar && (!strcmp(ysc(v), "relative") || !strcmp(ysc(v), "absolute")))
            o.absolute = !strcmp(ysc(v), "absolute");
        else if (!strcmp(key, "tree_dynamics") && scalar && (!strcmp(ysc(v), "recursive") || !strcmp(ysc(v), "symbolic")))
            o.tree_symbolic = !strcmp(ysc(v), "symbolic");
        else if (!strcmp(key, "gravity") && v->type == YAML_SEQUENCE_NODE &&
                 v->data.sequence.items.top - v->data.sequence.items.start == 3) {
            for (int i = 0; i < 3 && !rc; i++) {
                yaml_node_t *x = yaml_document_get_node(doc, v->data.sequence.items.start[i]);
                char *end;
                o.g[i] = x->type == YAML_SCALAR_NODE ? strtod(ysc(x), &end) : NAN;
                if (x->type != YAML_SCALAR_NODE || end == ysc(x) || *end || !isfinite(o.g[i]))
                    rc = model_yaml_error(st, MBL_EMODEL, file, x, "gravity: expected 3 numbers");
            }
        } else if (!strcmp(key, "hold") && (scalar || v->type == YAML_SEQUENCE_NODE)) {
            int n = scalar ? 1 : (int)(v->data.sequence.items.top - v->data.sequence.items.start);
            if (n > 255) rc = model_yaml_error(st, MBL_EMODEL, file, v, "hold: at most 255 joints");
            for (int i = 0; i < n && !rc; i++) {
                yaml_node_t *x = scalar ? v : yaml_document_get_node(doc, v->data.sequence.items.start[i]);
                if (x->type != YAML_SCALAR_NODE) rc = model_yaml_error(st, MBL_EMODEL, file, x, "hold: expected joint names or all");
                else hold[nhold++] = ysc(x);
            }
            hold[nhold] = NULL;
            o.hold = hold;
        } else if (!strcmp(key, "linearize") && v->type == YAML_MAPPING_NODE) {
            if (flow(doc, v, &lin, 0)) rc = model_yaml_error(st, MBL_EMODEL, file, v, "linearize: nested too deeply");
        } else
            rc = model_yaml_error(st, MBL_EMODEL, file, k,
                                "model: urdf: unexpected '%s' (expected file, name, coordinates: relative|absolute, "
                                "tree_dynamics: recursive|symbolic, "
                                "gravity: [gx, gy, gz], end_effector: link, hold: [joints] or all, linearize: {...})",
                                key);
    }
    if (!rc && !fn) rc = model_yaml_error(st, MBL_EMODEL, file, root, "model: urdf needs 'file: robot.urdf'");
    if (!rc && lin.oom) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    char *path = NULL, *text = NULL;
    if (!rc) {
        /* the URDF's path is relative to the YAML file's directory */
        const char *f = ysc(fn), *slash = file ? strrchr(file, '/') : NULL;
        size_t dl = (f[0] != '/' && slash) ? (size_t)(slash - file) + 1 : 0;
        path = mbl_malloc(dl + strlen(f) + 1);
        if (!path) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else {
            memcpy(path, file, dl);
            strcpy(path + dl, f);
        }
    }
    size_t len = 0;
    if (!rc) {
        FILE *fp = fopen(path, "rb");
        if (!fp) rc = model_yaml_error(st, MBL_EIO, file, fn, "cannot open the URDF file '%s'", path);
        else {
            size_t cap = 1 << 16;
            text = mbl_malloc(cap);
            while (text && !rc) {
                size_t got = fread(text + len, 1, cap - len, fp);
                len += got;
                if (len < cap) break;
                if (cap > ((size_t)1 << 30)) {
                    rc = model_yaml_error(st, MBL_EIO, file, fn, "the URDF file '%s' is larger than 1 GiB", path);
                    break;
                }
                char *t = mbl_realloc(text, 2 * cap);
                if (!t) break;
                text = t;
                cap *= 2;
            }
            if (!text && !rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            fclose(fp);
        }
    }
    if (!rc) {
        o.linearize = lin.s;
        rc = mech_urdf_to_mech(text, len, path, &o, sets, nsets, yaml, st);
    }
    mbl_free(text);
    mbl_free(path);
    mbl_free(lin.s);
    return rc;
}
