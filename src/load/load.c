/* Loading a model file: its text read once (bounded in size and nesting), dispatched on its
 * `model:` kind (`dae` to the reader of src/model, `mechanism` and `urdf`, or a URDF robot's XML,
 * to the compilers of src/mech, which emit the same source), then formulated and compiled by the
 * model (model_from_src). */
#include "load/load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "core/progress.h"
#include "mech/mechanism.h"
#include "mech/urdf.h"
#include "model/model.h"
#include "model/origin.h"
#include "model/source.h"

static char *load_str_dup(const char *s)
{
    size_t n = strlen(s);
    char *p = mbl_malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* `model: urdf`: the URDF becomes a mechanism text (src/mech/urdf.c), read here like a file */
static int read_urdf(yaml_document_t *ydoc, const yaml_node_t *root, const char *file, const mbl_setting *sets,
                     int nsets, mbl_src *src, mbl_status *st)
{
    char *y = NULL;
    int rc = mech_urdf_from_yaml(ydoc, root, file, sets, nsets, &y, st);
    if (rc) return rc;
    yaml_parser_t parser;
    yaml_document_t doc;
    struct model_text_block *blocks = NULL;
    memset(&doc, 0, sizeof doc);
    if (!yaml_parser_initialize(&parser)) {
        mbl_free(y);
        return mbl_error(st, MBL_ENOMEM, "cannot initialise the YAML parser");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)y, strlen(y));
    int more = 0;
    rc = model_yaml_first_document(&parser, &doc, y, strlen(y), 0, file, MBL_MAX_NESTING, &more, &blocks, st);
    if (!rc) rc = mech_read(&doc, yaml_document_get_root_node(&doc), file, sets, nsets, src, st);
    model_yaml_doc_free(&doc, &blocks);
    yaml_parser_delete(&parser);
    mbl_free(y);
    return rc;
}

/* The document's `model:` kind: `mechanism` and `urdf` are compiled to the dae level by their own
 * readers (src/mech), everything else is read by the dae reader (which reports an empty file, a
 * root that is not a mapping or another kind) */
static int read_root(yaml_document_t *doc, const yaml_node_t *root, const mbl_setting *sets, int nsets, mbl_src *src,
                     mbl_status *st)
{
    for (yaml_node_pair_t *p = root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
         p && p < root->data.mapping.pairs.top; p++)
    {
        yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        int model_key = k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "model") &&
                        v->type == YAML_SCALAR_NODE;
        if (model_key && !strcmp((const char *)v->data.scalar.value, "mechanism")) {
            src->from_mechanism = 1;
            return mech_read(doc, root, src->file, sets, nsets, src, st);
        }
        if (model_key && !strcmp((const char *)v->data.scalar.value, "urdf")) {
            src->from_mechanism = 1;
            return read_urdf(doc, root, src->file, sets, nsets, src, st);
        }
    }
    return model_src_read_dae(doc, root, src, st);
}

int load_src_read(const char *text, size_t len, const char *file, mbl_src **out, mbl_status *st)
{
    return load_src_read_opt(text, len, file, NULL, 0, MBL_MAX_NESTING, 0, 0, out, st);
}

/* The bytes libyaml's document takes per value (its node, text, marks and slot in its list): the
 * peak resident size of loading a file of 2.2 million numbers in two flow lists (24 MB of text),
 * less the text, is 145 B a number; rounded up. The values are estimated before parsing as the
 * text's commas, colons and lines (a value of a flow list, a key's, a block's line). */
#define LOAD_YAML_VALUE_BYTES 150.0

/* The bytes of text that are ',', ':' or a line's end, eight at a time: a byte equal to one has
 * its top bit set in the word's mask (exactly: no carries between the bytes), and the masks'
 * top bits are summed bytewise, at most 255 words before the eight sums are added up (about 4
 * instructions a byte instead of 12: 15 -> 5.2 M at the N = 2000 mechanism four-bar's 1.35 MB). */
static size_t count_separators(const char *text, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, low7 = 0x7F7F7F7F7F7F7F7Fu;
    size_t n = 0, i = 0;
    while (len - i >= 8) {
        uint64_t acc = 0; /* eight bytewise sums */
        for (int k = 0; k < 255 && len - i >= 8; k++, i += 8) {
            uint64_t w;
            memcpy(&w, text + i, 8);
            uint64_t a = w ^ (ones * ','), b = w ^ (ones * ':'), c = w ^ (ones * '\n');
            /* the top bit of each byte that is not zero in a, in b and in c */
            uint64_t other = (((a & low7) + low7) | a) & (((b & low7) + low7) | b) & (((c & low7) + low7) | c);
            acc += (~other & ~low7) >> 7;
        }
        uint64_t pairs = (acc & 0x00FF00FF00FF00FFu) + ((acc >> 8) & 0x00FF00FF00FF00FFu); /* 4 sums < 511 */
        n += (size_t)((pairs * 0x0001000100010001u) >> 48);
    }
    for (; i < len; i++) n += text[i] == ',' || text[i] == ':' || text[i] == '\n';
    return n;
}

/* seps: the text's separators (count_separators) */
static int yaml_budget(size_t seps, const char *file, double budget, mbl_status *st)
{
    double values = 1 + (double)seps;
    double need = values * LOAD_YAML_VALUE_BYTES, gib = 1073741824.0;
    if (need <= budget) return 0;
    return mbl_error(st, MBL_ENOMEM, "%s: about %.0f YAML values need about %.3g GiB to read, over the memory budget of "
                     "%.3g GiB (--mem-budget): put large data sets in CSV files (docs/model-files.md, \"Data sets\") "
                     "or raise the budget", file, values, need / gib, budget / gib);
}

int load_src_read_opt(const char *text, size_t len, const char *file, const mbl_setting *sets, int nsets,
                      int max_nesting, double mem_budget, int no_drawing, mbl_src **out, mbl_status *st)
{
    *out = NULL;
    if (mech_urdf_is_xml(text, len)) { /* a URDF robot: translated to a mechanism text first */
        char *y = NULL;
        int rc = mech_urdf_to_mech(text, len, file, NULL, sets, nsets, &y, st);
        if (!rc) rc = load_src_read_opt(y, strlen(y), file, sets, nsets, max_nesting, mem_budget, no_drawing, out, st);
        mbl_free(y);
        return rc;
    }
    if (!file) file = "<model>";
    if (core_progress(st, "load: read", 0, 0)) return MBL_ECANCELLED;
    size_t seps = count_separators(text, len);
    int brc = yaml_budget(seps, file, mem_budget > 0 ? mem_budget : MBL_MEM_BUDGET_DEFAULT, st);
    if (brc) return brc;
    mbl_src *src = model_src_new(file);
    if (!src) return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", file);
    src->mem_budget = mem_budget > 0 ? mem_budget : MBL_MEM_BUDGET_DEFAULT;
    src->no_drawing = no_drawing != 0;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        model_src_free(src);
        return mbl_error(st, MBL_ENOMEM, "cannot initialise the YAML parser");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_document_t doc;
    struct model_text_block *blocks = NULL;
    memset(&doc, 0, sizeof doc);
    int more = 0;
    /* the nodes' room: 1.5 per separator (the four-bars' files, mechanism and dae, have 1.24 nodes
     * a separator: a key and its value per colon, an item per comma or line); the estimate of two
     * per line and comma (720,000) made the N = 10^4 mechanism four-bar's array of 940,000 nodes
     * double, copying 69 MB (two per separator raised its peak resident size 235 -> 244 MB) */
    int lrc = model_yaml_first_document(&parser, &doc, text, len, seps + seps / 2 + 16, file, max_nesting, &more, &blocks, st);
    if (lrc) {
        model_yaml_doc_free(&doc, &blocks);
        yaml_parser_delete(&parser);
        model_src_free(src);
        return lrc;
    }
    int rc = read_root(&doc, yaml_document_get_root_node(&doc), sets, nsets, src, st);
    /* a second document in the stream is an error, not silently ignored */
    if (!rc && more) rc = mbl_error(st, MBL_EPARSE, "%s: more than one YAML document in the file", file);
    model_yaml_doc_free(&doc, &blocks);
    yaml_parser_delete(&parser);
    if (rc) {
        model_src_free(src);
        return rc;
    }
    *out = src;
    return 0;
}

void mbl_load_options_default(mbl_load_options *opt)
{
    if (!opt) return;
    opt->max_file_size = MBL_MAX_FILE_SIZE;
    opt->max_nesting = MBL_MAX_NESTING;
    opt->states = opt->velocity_states = NULL;
    opt->nstates = opt->nvelocity_states = 0;
    opt->mem_budget = 0;
    opt->outputs = NULL;
    opt->noutputs = 0;
    opt->forward_jacobian = 0;
    opt->allow_user_code = 0;
    opt->user_routines = NULL;
    opt->nuser_routines = 0;
    opt->no_drawing = 0;
}

/* mbl_load_options.states / velocity_states: replace the file's list by the given expressions. */
static int replace_states(mbl_src_list *l, const char *const *text, int n, const char *what, mbl_status *st)
{
    if (n < 0) return mbl_error(st, MBL_EARG, "mbl_load_options: negative number of %s", what);
    mbl_src_item *items = mbl_calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!text[i] || !text[i][0]) {
            for (int j = 0; j < i; j++) mbl_free(items[j].text);
            mbl_free(items);
            return mbl_error(st, MBL_EARG, "mbl_load_options: %s %d is empty", what, i + 1);
        }
        items[i].text = load_str_dup(text[i]);
        if (!items[i].text) {
            for (int j = 0; j < i; j++) mbl_free(items[j].text);
            mbl_free(items);
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    for (int i = 0; i < l->n; i++) {
        mbl_free(l->items[i].key);
        mbl_free(l->items[i].key2);
        mbl_free(l->items[i].text);
    }
    mbl_free(l->items);
    l->items = items;
    l->n = l->cap = n;
    return 0;
}

/* mbl_load_options.outputs: keep the named outputs of l, in the given order. */
static int select_outputs(mbl_src_list *l, const char *const *names, int n, const char *file, mbl_status *st)
{
    if (n < 0) return mbl_error(st, MBL_EARG, "mbl_load_options: negative number of outputs");
    char have[512] = "";
    size_t hl = 0;
    for (int i = 0; i < l->n && hl + 8 < sizeof have; i++) {
        int w = snprintf(have + hl, sizeof have - hl, "%s%s", i ? ", " : "", l->items[i].key ? l->items[i].key : "?");
        hl = w > 0 && hl + (size_t)w < sizeof have ? hl + (size_t)w : sizeof have - 1;
    }
    int *pick = mbl_calloc((size_t)n + 1, sizeof *pick);
    if (!pick) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        pick[i] = -1;
        for (int j = 0; names[i] && j < l->n; j++)
            if (l->items[j].key && !strcmp(l->items[j].key, names[i])) pick[i] = j;
        for (int j = 0; j < i && pick[i] >= 0; j++)
            if (pick[j] == pick[i]) {
                mbl_free(pick);
                return mbl_error(st, MBL_EARG, "%s: outputs: '%.100s' is named twice", file, names[i]);
            }
        if (pick[i] < 0) {
            mbl_free(pick);
            return mbl_error(st, MBL_EARG, "%s: outputs: the model has no output named '%.100s' (its outputs: %s)",
                             file, names[i] ? names[i] : "(null)", l->n ? have : "none");
        }
    }
    mbl_src_item *items = mbl_calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) {
        mbl_free(pick);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) items[i] = l->items[pick[i]], memset(&l->items[pick[i]], 0, sizeof *items);
    for (int i = 0; i < l->n; i++) {
        mbl_free(l->items[i].key);
        mbl_free(l->items[i].key2);
        mbl_free(l->items[i].text);
    }
    mbl_free(l->items), mbl_free(pick);
    l->items = items;
    l->n = l->cap = n;
    return 0;
}

int mbl_model_load_string(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                          mbl_model **out, mbl_status *st)
{
    return mbl_model_load_string_opt(text, len, name, sets, nsets, NULL, out, st);
}

/* mbl_model_load_string_opt; *owned (not NULL: text itself, the caller's block of len + 1 bytes)
 * is taken by the model's origin (model/origin.h: kept for mbl_model_copy; freed here on failure)
 * and set to NULL, else the text is copied there. */
static int load_string(const char *text, size_t len, char **owned, const char *name, const mbl_setting *sets,
                       int nsets, const mbl_load_options *opt, mbl_model **out, mbl_status *st);

int mbl_model_load_string_opt(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                              const mbl_load_options *opt, mbl_model **out, mbl_status *st)
{
    return load_string(text, len, NULL, name, sets, nsets, opt, out, st);
}

static int load_string(const char *text, size_t len, char **owned, const char *name, const mbl_setting *sets,
                       int nsets, const mbl_load_options *opt, mbl_model **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_model_load_string: out is NULL");
    *out = NULL;
    if (!text) return mbl_error(st, MBL_EARG, "mbl_model_load_string: text is NULL");
    mbl_load_options lim;
    mbl_load_options_default(&lim);
    if (opt) lim = *opt;
    if (len > lim.max_file_size)
        return mbl_error(st, MBL_EIO, "%s: the model is larger than the limit of %zu bytes", name ? name : "<model>",
                         lim.max_file_size);
    if (!(lim.mem_budget >= 0) || !isfinite(lim.mem_budget))
        return mbl_error(st, MBL_EARG, "mbl_load_options: mem_budget = %g: expected a size in bytes (0: the default)",
                         lim.mem_budget);
    /* what the model is loaded from, kept on it for mbl_model_copy (a file's text taken, not freed) */
    model_origin *org = model_origin_new(text, len, owned != NULL, name, sets, nsets, &lim);
    if (owned) *owned = NULL;
    if (!org) return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", name ? name : "<model>");
    mbl_src *src = NULL;
    int rc = load_src_read_opt(org->text, len, name, sets, nsets, lim.max_nesting, lim.mem_budget,
                               lim.no_drawing && !lim.states && !lim.velocity_states, &src, st);
    if (rc) {
        model_origin_free(org);
        return rc;
    }
    if (lim.states) rc = replace_states(&src->states, lim.states, lim.nstates, "states", st);
    if (!rc && lim.velocity_states)
        rc = replace_states(&src->velocity_states, lim.velocity_states, lim.nvelocity_states, "velocity states", st);
    if (!rc && lim.outputs) rc = select_outputs(&src->outputs, lim.outputs, lim.noutputs, name ? name : "<model>", st);
    if (rc) {
        model_src_free(src);
        model_origin_free(org);
        return rc;
    }
    src->forward_jacobian = lim.forward_jacobian != 0;
    src->allow_user_code = lim.allow_user_code != 0;
    src->user_routines = lim.user_routines;
    src->nuser_routines = lim.user_routines ? lim.nuser_routines : 0;
    rc = model_from_src(src, sets, nsets, out, st);
    if (rc) model_origin_free(org);
    else model_set_origin(*out, org);
    return rc;
}

int mbl_model_load_file(const char *path, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    return mbl_model_load_file_opt(path, sets, nsets, NULL, out, st);
}

int mbl_model_load_file_opt(const char *path, const mbl_setting *sets, int nsets, const mbl_load_options *opt,
                            mbl_model **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_model_load_file: out is NULL");
    *out = NULL;
    if (!path) return mbl_error(st, MBL_EARG, "mbl_model_load_file: path is NULL");
    mbl_load_options lim;
    mbl_load_options_default(&lim);
    if (opt) lim = *opt;
    FILE *f = fopen(path, "rb");
    if (!f) return mbl_error(st, MBL_EIO, "%s: cannot open the model file (%s)", path, strerror(errno));
    /* only regular files: a directory reads as an error, a device or a pipe may never end */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int dir = S_ISDIR(sb.st_mode);
        fclose(f);
        return mbl_error(st, MBL_EIO, "%s: %s, not a model file", path,
                         dir ? "is a directory" : "is not a regular file (a device, pipe or socket)");
    }
    if ((uintmax_t)sb.st_size > (uintmax_t)lim.max_file_size) {
        fclose(f);
        return mbl_error(st, MBL_EIO, "%s: the file has %jd bytes, more than the limit of %zu bytes", path,
                         (intmax_t)sb.st_size, lim.max_file_size);
    }
    size_t cap = (size_t)sb.st_size + 1, len = 0;
    char *buf = mbl_malloc(cap);
    if (!buf) {
        fclose(f);
        return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", path);
    }
    for (;;) { /* the file may grow while it is read: bounded all the same */
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        if (len > lim.max_file_size) {
            mbl_free(buf);
            fclose(f);
            return mbl_error(st, MBL_EIO, "%s: the file is larger than the limit of %zu bytes", path,
                             lim.max_file_size);
        }
        char *nb = mbl_realloc(buf, cap * 2);
        if (!nb) {
            mbl_free(buf);
            fclose(f);
            return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", path);
        }
        buf = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        mbl_free(buf);
        return mbl_error(st, MBL_EIO, "%s: read error", path);
    }
    int rc = load_string(buf, len, &buf, path, sets, nsets, &lim, out, st);
    mbl_free(buf); /* NULL once parsed */
    return rc;
}
