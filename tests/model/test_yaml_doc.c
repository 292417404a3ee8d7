/* The model file's YAML document (src/model/source.c model_yaml_first_document): its short
 * scalars' texts and its lists' and mappings' entries are cut from blocks it owns, freed by
 * model_yaml_doc_free. The reference is libyaml's own composer (yaml_parser_load) on the same
 * text: the same nodes in the same order, node for node (type, marks, a scalar's bytes, length
 * and style, a list's items, a mapping's pairs and style), for block and flow mappings and
 * lists, empty ones, every scalar style, short texts and long ones (at and around the
 * 16-byte bound between the blocks and libyaml's own), an escaped NUL, a text longer than a
 * block, and a large document (several blocks, the open entries' stack grown); a second
 * document is reported, not read; anchors, tags and directives are read past. Also the memory budget's count of values (src/load/load.c:
 * the text's ',', ':' and line ends, eight bytes at a time) against a byte-by-byte count, in
 * the budget's message, on texts of every length up to 70 bytes and every alignment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "load/load.h"
#include "model/source.h"
#include "model/text_blocks.h"
#include "test.h"

static int same_mark(yaml_mark_t a, yaml_mark_t b)
{
    return a.index == b.index && a.line == b.line && a.column == b.column;
}

/* ours (room for hint nodes at first, 0: estimated) and libyaml's document of text: the same
 * nodes; *more as model_yaml_first_document's */
static int same_as_libyaml_hint(const char *text, size_t hint, int *more)
{
    size_t len = strlen(text);
    yaml_parser_t p1, p2;
    yaml_document_t ours, ref;
    struct model_text_block *blocks = NULL;
    mbl_status st;
    if (!yaml_parser_initialize(&p1) || !yaml_parser_initialize(&p2)) return 0;
    yaml_parser_set_input_string(&p1, (const unsigned char *)text, len);
    yaml_parser_set_input_string(&p2, (const unsigned char *)text, len);
    int rc = model_yaml_first_document(&p1, &ours, text, len, hint, "doc.yaml", 64, more, &blocks, &st);
    int lrc = yaml_parser_load(&p2, &ref);
    int ok = rc == 0 && lrc == 1;
    if (rc) fprintf(stderr, "  ours: %s\n", st.msg);
    int n = (int)(ours.nodes.top - ours.nodes.start);
    if (ok && n != (int)(ref.nodes.top - ref.nodes.start)) {
        fprintf(stderr, "  %d nodes against libyaml's %d\n", n, (int)(ref.nodes.top - ref.nodes.start));
        ok = 0;
    }
    for (int i = 0; ok && i < n; i++) {
        const yaml_node_t *a = &ours.nodes.start[i], *b = &ref.nodes.start[i];
        ok = a->type == b->type && same_mark(a->start_mark, b->start_mark) && same_mark(a->end_mark, b->end_mark);
        if (ok && a->type == YAML_SCALAR_NODE)
            ok = a->data.scalar.length == b->data.scalar.length && a->data.scalar.style == b->data.scalar.style &&
                 !memcmp(a->data.scalar.value, b->data.scalar.value, b->data.scalar.length + 1);
        if (ok && a->type == YAML_SEQUENCE_NODE) {
            ptrdiff_t k = a->data.sequence.items.top - a->data.sequence.items.start;
            ok = a->data.sequence.style == b->data.sequence.style &&
                 k == b->data.sequence.items.top - b->data.sequence.items.start &&
                 (k == 0 || !memcmp(a->data.sequence.items.start, b->data.sequence.items.start,
                                    (size_t)k * sizeof(yaml_node_item_t)));
        }
        if (ok && a->type == YAML_MAPPING_NODE) {
            ptrdiff_t k = a->data.mapping.pairs.top - a->data.mapping.pairs.start;
            ok = a->data.mapping.style == b->data.mapping.style &&
                 k == b->data.mapping.pairs.top - b->data.mapping.pairs.start;
            for (ptrdiff_t j = 0; ok && j < k; j++)
                ok = a->data.mapping.pairs.start[j].key == b->data.mapping.pairs.start[j].key &&
                     a->data.mapping.pairs.start[j].value == b->data.mapping.pairs.start[j].value;
        }
        if (!ok) fprintf(stderr, "  node %d differs from libyaml's\n", i + 1);
    }
    model_yaml_doc_free(&ours, &blocks);
    ok = ok && blocks == NULL && ours.nodes.start == NULL;
    yaml_document_delete(&ref);
    yaml_parser_delete(&p1);
    yaml_parser_delete(&p2);
    return ok;
}

static int same_as_libyaml(const char *text, int *more) { return same_as_libyaml_hint(text, 0, more); }

TEST(nodes_as_libyaml)
{
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char text[8192];
    snprintf(text, sizeof text,
             "model: mechanism\n"
             "empty_map: {}\n"
             "empty_list: []\n"
             "flow: {type: revolute, i: R0_base, j: A0, position: [0.5, -1, 2e3]}\n"
             "block:\n"
             "  - a\n"
             "  - [1, [2, [3, []]], {}]\n"
             "  - {x: {y: {z: w}}}\n"
             "  -\n"
             "    k: v\n"
             "    \"quoted key\": 'single ''q'''\n"
             "lengths: [a, abcdefghijklmn, abcdefghijklmno, abcdefghijklmnop, abcdefghijklmnopq]\n"
             "styles:\n"
             "  plain: 0.90929742682568171\n"
             "  single: 'it''s'\n"
             "  double: \"tab\\there, nul\\0in\"\n"
             "  literal: |\n"
             "    line one\n"
             "    line two\n"
             "  folded: >\n"
             "    folded\n"
             "    text\n"
             "  null_value:\n"
             "  long: %s\n"
             "utf8: [\"\\u00e9t\\u00e9\", \xc3\xa9t\xc3\xa9]\n",
             big);
    int more = -1;
    CHECK(same_as_libyaml(text, &more));
    CHECK_EQ_INT(more, 0);
    CHECK(same_as_libyaml("", &more)); /* no document: no node */
    CHECK(same_as_libyaml("just a scalar\n", &more));
    CHECK(same_as_libyaml("- 1\n- 2\n", &more));
    CHECK(same_as_libyaml("a: 1\n---\nb: 2\n", &more));
    CHECK_EQ_INT(more, 1);
    /* events that own an anchor, a tag or directives (freed by yaml_event_delete; the others by
     * event_free: the sanitized build's leak check sees both) */
    CHECK(same_as_libyaml("%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\n"
                          "tagged: !!str 12\nanchored: &a 1\nboth: &b !!int 2\n"
                          "seq: !!seq [1, &c 2]\nmap: &m {a: !e!x b}\nlist: &l\n  - x\n"
                          "long: !custom abcdefghijklmnopqrstuvwxyz0123456789\n",
                          &more));
    CHECK_EQ_INT(more, 0);
}

/* 40,000 flow mappings of short and long scalars in a block list: the blocks' and the entries'
 * growth (the entries of one list wait on the stack until it closes), the nodes' array from its
 * estimate, from one node and from more room than needed */
TEST(large_document)
{
    enum { N = 40000 };
    size_t cap = (size_t)N * 80 + 64, o = 0;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) return;
    o += (size_t)snprintf(text + o, cap - o, "items:\n");
    for (int i = 0; i < N; i++)
        o += (size_t)snprintf(text + o, cap - o, "  - {name: n%d, long: a_longer_text_of_%d, v: [%d, %d]}\n", i, i,
                              i, -i);
    int more = -1;
    CHECK(same_as_libyaml(text, &more));
    CHECK(same_as_libyaml_hint(text, 1, &more)); /* grown from one node */
    CHECK(same_as_libyaml_hint(text, 8 * (size_t)N, &more)); /* room to spare (the loader's hint) */
    free(text);
}

/* The budget's message gives 1 + the text's ',', ':' and line ends */
static long budget_values(const char *text, size_t len)
{
    mbl_src *src = NULL;
    mbl_status st;
    int rc = load_src_read_opt(text, len, "b.yaml", NULL, 0, 64, 1.0, 0, &src, &st);
    model_src_free(src);
    long v = -1;
    if (rc == MBL_ENOMEM && sscanf(st.msg, "b.yaml: about %ld YAML values", &v) == 1) return v;
    return -1;
}

TEST(budget_count)
{
    const char alphabet[] = ",:\n ax{}\xc3\xa9-";
    char buf[80];
    unsigned seed = 12345;
    int ok = 1;
    for (int len = 1; len <= 70 && ok; len++)
        for (int off = 0; off < 8 && ok; off++)
            for (int rep = 0; rep < 4 && ok; rep++) {
                long want = 1;
                for (int i = 0; i < len; i++) {
                    seed = seed * 1103515245u + 12345u;
                    /* rep 0: separators only (every byte counted); else a mixture */
                    char c = rep == 0 ? ",:\n"[(seed >> 16) % 3] : alphabet[(seed >> 16) % (sizeof alphabet - 1)];
                    buf[off + i] = c;
                    want += c == ',' || c == ':' || c == '\n';
                }
                long got = budget_values(buf + off, (size_t)len);
                ok = got == want;
                CHECK_MSG(ok, "length %d at offset %d: %ld values, want %ld", len, off, got, want);
            }
    /* a long text: the bytewise sums emptied every 255 words */
    size_t n = 5000;
    char *t = malloc(n);
    CHECK(t != NULL);
    if (!t) return;
    for (size_t i = 0; i < n; i++) t[i] = i % 3 == 0 ? ':' : i % 7 == 0 ? '\n' : 'k';
    long want = 1;
    for (size_t i = 0; i < n; i++) want += t[i] == ':' || t[i] == '\n';
    CHECK(budget_values(t, n) == want);
    free(t);
}

int main(void)
{
    RUN(nodes_as_libyaml);
    RUN(large_document);
    RUN(budget_count);
    return test_summary("yaml_doc");
}
