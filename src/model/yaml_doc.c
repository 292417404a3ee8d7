/* The model file's YAML document from libyaml's events (model/source.h: model_yaml_first_document,
 * model_yaml_doc_free): nesting bounded as it is built, aliases refused, libyaml's messages made
 * precise; the short texts and the entries in the document's own blocks. */
#include "model/source.h"
#include "model/text_blocks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Line and column (1-based) of a byte offset of the text. */
static void offset_pos(const char *text, size_t len, size_t off, unsigned long *line, unsigned long *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < off && i < len; i++)
        if (text[i] == '\n') {
            (*line)++;
            start = i + 1;
        }
    *col = (unsigned long)(off - start) + 1;
}

/* libyaml's message, made precise where it is misleading: a reader error (bad encoding) has no
 * mark, only a byte offset; a plain key longer than libyaml's 1024-character limit for keys is
 * reported as a stray ':' or a missing ','. */
static int yaml_parse_error(const yaml_parser_t *parser, const char *text, size_t len, const char *file,
                            mbl_status *st)
{
    unsigned long line, col;
    if (parser->error == YAML_READER_ERROR) {
        size_t off = parser->problem_offset < len ? parser->problem_offset : len;
        const unsigned char *u = (const unsigned char *)text;
        if (parser->problem && strstr(parser->problem, "trailing")) { /* back to the sequence's first byte */
            while (off > 0 && (u[off - 1] & 0xC0) == 0x80) off--;
            if (off > 0 && u[off - 1] >= 0xC0) off--;
        }
        offset_pos(text, len, off, &line, &col);
        if (off < len)
            return mbl_error(st, MBL_EPARSE, "%s:%lu:%lu: the file is not valid UTF-8 (byte 0x%02x, %s): save it as UTF-8",
                             file, line, col, (unsigned)u[off], parser->problem ? parser->problem : "bad byte");
        return mbl_error(st, MBL_EPARSE, "%s:%lu:%lu: the file is not valid UTF-8 (%s)", file, line, col,
                         parser->problem ? parser->problem : "bad byte");
    }
    line = (unsigned long)parser->problem_mark.line + 1;
    col = (unsigned long)parser->problem_mark.column + 1;
    /* a word of more than 1024 characters on the line of the error, before it */
    size_t off = parser->problem_mark.index < len ? parser->problem_mark.index : len, ls = off;
    while (ls > 0 && text[ls - 1] != '\n') ls--;
    const char *pr = parser->problem ? parser->problem : "";
    int keyish = strstr(pr, "expected ':'") || strstr(pr, "mapping values are not allowed") ||
                 strstr(pr, "did not find expected ','") || strstr(pr, "did not find expected key");
    for (size_t i = ls, run = 0; keyish && i < off; i++) {
        char c = text[i];
        run = (c == ' ' || c == '\t' || c == '{' || c == '[' || c == ',' || c == '"' || c == '\'') ? 0 : run + 1;
        if (run > 1024) {
            size_t w = i + 1 - run;
            while (w > ls && !strchr(" \t{[,\"'", text[w - 1])) w--;
            size_t we = w;
            while (we < len && !strchr(" \t\n:,}]", text[we])) we++;
            return mbl_error(st, MBL_EPARSE,
                             "%s:%lu:%lu: a name of %zu characters: YAML keys are limited to 1024 characters", file,
                             line, (unsigned long)(w - ls) + 1, we - w);
        }
    }
    return mbl_error(st, MBL_EPARSE, "%s:%lu:%lu: YAML error: %s%s%s", file, line, col,
                     parser->problem ? parser->problem : "malformed", parser->context ? " " : "",
                     parser->context ? parser->context : "");
}

/* yaml_parser_load's work done here from the parser's events, so that the nesting of lists and
 * mappings is bounded as the document is built (libyaml's scanner takes time quadratic in the
 * depth: 10^5 '[' took 20 s) and aliases are refused (an alias stands for a whole copy of what
 * it names: a small file could expand into a huge walk of the readers). Reads the first
 * document; *more is set when a second one follows. Node positions are the events' marks.
 *
 * The short scalars' texts and the lists' and mappings' entries are cut from blocks of the
 * document (model_block_bytes) instead of libyaml's malloc for each (yaml_document_delete freed
 * 228,000 blocks one by one at the N = 2000 mechanism four-bar, 45 M instructions): a short
 * scalar's text is copied as its event comes (libyaml's copy then freed at once, when the
 * allocator has it at hand), an open list's or mapping's entries wait on a stack of the open
 * ones and are copied, at their count, when it closes. A longer text stays libyaml's (a reader
 * may take it over: the dae reader's expressions and numbers). The nodes carry no tag. */
typedef struct load_frame {
    int node;     /* the open list or mapping */
    size_t first; /* where its entries start on the entries' stack */
} load_frame;

typedef struct composer {
    yaml_document_t *doc;
    struct model_text_block **blocks;
    int *kids; /* the open lists' and mappings' entries (a mapping's: key, value, key, ...) */
    size_t nkids, capkids;
} composer;

/* A new node of type t (1-based index), or 0 when out of memory. The nodes' array grows by
 * doubling from its estimate. */
static int add_node(yaml_document_t *doc, yaml_node_type_t t, const yaml_event_t *ev)
{
    if (doc->nodes.top == doc->nodes.end) {
        size_t n = (size_t)(doc->nodes.end - doc->nodes.start), nc = n ? 2 * n : 16;
        if (nc > (size_t)INT_MAX / 2) return 0;
        yaml_node_t *q = mbl_realloc_array(doc->nodes.start, nc, sizeof *q);
        if (!q) return 0;
        doc->nodes.start = q;
        doc->nodes.top = q + n;
        doc->nodes.end = q + nc;
    }
    *doc->nodes.top++ = (yaml_node_t){.type = t, .start_mark = ev->start_mark, .end_mark = ev->end_mark};
    return (int)(doc->nodes.top - doc->nodes.start);
}

/* The scalar node of event ev: its text NUL-ended, in the document's blocks when shorter than
 * MODEL_YAML_SHORT_TEXT, else libyaml's own, taken from the event (ev's value then NULL: a reader may
 * take it in turn, scalar_text); 0: out of memory */
static int add_scalar(composer *c, yaml_event_t *ev)
{
    size_t len = ev->data.scalar.length;
    unsigned char *t = ev->data.scalar.value;
    if (len < MODEL_YAML_SHORT_TEXT) {
        t = model_block_bytes(c->blocks, len + 1);
        if (!t) return 0;
        memcpy(t, ev->data.scalar.value, len);
        t[len] = '\0';
    }
    int node = add_node(c->doc, YAML_SCALAR_NODE, ev);
    if (!node) return 0;
    yaml_node_t *nd = &c->doc->nodes.start[node - 1];
    nd->data.scalar.value = t;
    nd->data.scalar.length = len;
    nd->data.scalar.style = ev->data.scalar.style;
    if (len >= MODEL_YAML_SHORT_TEXT) ev->data.scalar.value = NULL;
    return node;
}

/* A list's or mapping's entries, from the stack's first (at its start) on, into the document's
 * blocks: node's items or pairs. 0, or -1 when out of memory. */
static int close_node(composer *c, int node, size_t first)
{
    yaml_node_t *nd = &c->doc->nodes.start[node - 1];
    size_t n = c->nkids - first;
    c->nkids = first;
    const int *k = c->kids + first;
    if (nd->type == YAML_SEQUENCE_NODE) {
        yaml_node_item_t *it = model_block_bytes(c->blocks, (n ? n : 1) * sizeof *it);
        if (!it) return -1;
        memcpy(it, k, n * sizeof *it);
        nd->data.sequence.items.start = it;
        nd->data.sequence.items.top = nd->data.sequence.items.end = it + n;
        return 0;
    }
    n /= 2; /* a key waiting for its value (after an error) is left out */
    yaml_node_pair_t *pr = model_block_bytes(c->blocks, (n ? n : 1) * sizeof *pr);
    if (!pr) return -1;
    for (size_t i = 0; i < n; i++) {
        pr[i].key = k[2 * i];
        pr[i].value = k[2 * i + 1];
    }
    nd->data.mapping.pairs.start = pr;
    nd->data.mapping.pairs.top = nd->data.mapping.pairs.end = pr + n;
    return 0;
}

/* node on the entries' stack (of the open list or mapping); 0, or -1 when out of memory */
static int push_kid(composer *c, int node)
{
    if (c->nkids == c->capkids) {
        size_t nc = c->capkids ? 2 * c->capkids : 256;
        int *q = mbl_realloc_array(c->kids, nc, sizeof *q);
        if (!q) return -1;
        c->kids = q;
        c->capkids = nc;
    }
    c->kids[c->nkids++] = node;
    return 0;
}

/* the nodes' array at about its final size at once (it grew from 16 by doubling: 5 copies for
 * the nonlinear bicycle, 9 at N = 1000): est nodes, or (est 0) two per line and comma (a line
 * holds a key and its value, a comma separates the items of a flow list or mapping); an estimate
 * short of the count grows as before */
static void reserve_nodes(yaml_document_t *doc, const char *text, size_t len, size_t est)
{
    if (!est) {
        est = 16;
        for (int sep = 0; sep < 2; sep++)
            for (const char *c = text, *end = text + len; c < end; c++) {
                c = memchr(c, sep ? ',' : '\n', (size_t)(end - c));
                if (!c) break;
                est += 2;
            }
    }
    if (est >= (size_t)INT_MAX / 2) return;
    yaml_node_t *q = mbl_alloc_array(est, sizeof *q);
    if (!q) return; /* grows from nothing */
    doc->nodes.start = doc->nodes.top = q;
    doc->nodes.end = q + est;
}

/* What event ev still owns, freed. An end event owns nothing, and a scalar without an anchor or a
 * tag owns its text alone (malloc'd by libyaml, NULL when taken): yaml_event_delete would free the
 * NULL pointers and clear the event, 100 instructions an event (115 M of the N = 10^4 mechanism
 * four-bar's 1.14 M events). The other events (with an anchor, a tag or directives) go to it. */
static void event_free(yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return;
    case YAML_SCALAR_EVENT:
        if (!ev->data.scalar.anchor && !ev->data.scalar.tag) {
            mbl_free(ev->data.scalar.value);
            return;
        }
        break;
    case YAML_SEQUENCE_START_EVENT:
        if (!ev->data.sequence_start.anchor && !ev->data.sequence_start.tag) return;
        break;
    case YAML_MAPPING_START_EVENT:
        if (!ev->data.mapping_start.anchor && !ev->data.mapping_start.tag) return;
        break;
    default: break;
    }
    yaml_event_delete(ev);
}

int model_yaml_first_document(yaml_parser_t *parser, yaml_document_t *doc, const char *text, size_t len,
                              size_t nodes, const char *file, int max_nesting, int *more, struct model_text_block **blocks,
                              mbl_status *st)
{
    *more = 0;
    memset(doc, 0, sizeof *doc);
    doc->start_implicit = doc->end_implicit = 1;
    reserve_nodes(doc, text, len, nodes);
    if (max_nesting < 1) max_nesting = 1;
    load_frame *stack = mbl_alloc_array((size_t)max_nesting, sizeof *stack);
    if (!stack) return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", file);
    composer c = {doc, blocks, NULL, 0, 0};
    int depth = 0, rc = 0, in_doc = 0, done = 0;
    while (!rc && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(parser, &ev)) {
            rc = yaml_parse_error(parser, text, len, file, st);
            break;
        }
        unsigned long line = (unsigned long)ev.start_mark.line + 1, col = (unsigned long)ev.start_mark.column + 1;
        int node = 0, oom = 0;
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (in_doc) { /* the second document: not read */
                *more = 1;
                done = 1;
                break;
            }
            in_doc = 1;
            doc->start_mark = ev.start_mark;
            break;
        case YAML_DOCUMENT_END_EVENT:
            doc->end_mark = ev.end_mark;
            break;
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_ALIAS_EVENT:
            rc = mbl_error(st, MBL_EPARSE, "%s:%lu:%lu: YAML aliases (*name) are not supported in model files", file,
                           line, col);
            break;
        case YAML_SCALAR_EVENT:
            node = add_scalar(&c, &ev);
            oom = !node;
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (depth >= max_nesting) {
                rc = mbl_error(st, MBL_EPARSE, "%s:%lu:%lu: lists and mappings nested deeper than %d levels", file, line,
                               col, max_nesting);
                break;
            }
            node = add_node(doc, ev.type == YAML_SEQUENCE_START_EVENT ? YAML_SEQUENCE_NODE : YAML_MAPPING_NODE, &ev);
            if (node && ev.type == YAML_SEQUENCE_START_EVENT)
                doc->nodes.start[node - 1].data.sequence.style = ev.data.sequence_start.style;
            else if (node)
                doc->nodes.start[node - 1].data.mapping.style = ev.data.mapping_start.style;
            oom = !node;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) {
                load_frame *f = &stack[--depth];
                doc->nodes.start[f->node - 1].end_mark = ev.end_mark;
                oom = close_node(&c, f->node, f->first) != 0;
            }
            break;
        default: break;
        }
        if (node && depth > 0) oom = push_kid(&c, node) != 0; /* an entry of the open list or mapping */
        if (node && !oom && (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)) {
            stack[depth].node = node;
            stack[depth].first = c.nkids;
            depth++;
        }
        if (oom) rc = mbl_error(st, MBL_ENOMEM, "out of memory reading %s", file);
        event_free(&ev);
    }
    mbl_free(stack);
    mbl_free(c.kids);
    return rc;
}

void model_yaml_doc_free(yaml_document_t *doc, struct model_text_block **blocks)
{
    for (yaml_node_t *n = doc->nodes.start; n && n < doc->nodes.top; n++)
        if (n->type == YAML_SCALAR_NODE && n->data.scalar.length >= MODEL_YAML_SHORT_TEXT) mbl_free(n->data.scalar.value);
    mbl_free(doc->nodes.start);
    memset(doc, 0, sizeof *doc);
    model_blocks_free(blocks);
}

