/* The model file's lists (src/model/source.c list_push): the names and texts of mappings and lists
 * are taken from the YAML document's nodes instead of copied (scalar_text), the mass matrix's row
 * keys still copied (one node for every entry of the row). Each item's key and text against the
 * text the file gives, in every scalar style (plain, single and double quoted with escapes, block
 * literal and folded, a NUL escaped inside, long texts that grew libyaml's buffers), after the
 * document is deleted (a text left to the document too would be freed with it: read after, and
 * freed twice by model_src_free: glibc aborts), the source read and freed 200 times. A row key
 * taken instead of copied is gone for the row's second entry (the read crashes on it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "model/source.h"
#include "test.h"

enum { LONG_N = 3000 };

/* a sum of LONG_N terms "x1 + x1 + ..." (2 + 5 (LONG_N - 1) characters) */
static char *long_sum(void)
{
    char *s = malloc(5 * LONG_N + 1);
    if (!s) return NULL;
    size_t o = 0;
    for (int i = 0; i < LONG_N; i++) o += (size_t)sprintf(s + o, i ? " + x1" : "x1");
    return s;
}

static int same(const char *got, const char *want)
{
    if (!got || !want) return got == want;
    return strcmp(got, want) == 0;
}

TEST(items_as_written)
{
    char *sum = long_sum();
    CHECK(sum != NULL);
    if (!sum) return;
    size_t cap = 2 * strlen(sum) + 2048;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) {
        free(sum);
        return;
    }
    snprintf(text, cap,
             "model: dae\n"
             "parameters: {m: 1, 'k''s': \"2.5\", long_name_of_a_parameter: 3}\n"
             "coordinates:\n"
             "  x1: 0.25\n"
             "  \"x2\": '0.5'\n"
             "  x3: \"1\\t2\"\n"
             "  x4: \"a\\0b\"\n"
             "variables:\n"
             "  s: |\n"
             "    x1 +\n"
             "    x2\n"
             "  u: >\n"
             "    x3 *\n"
             "    x4\n"
             "  w: %s\n"
             "constraints:\n"
             "  - x1 - x2\n"
             "  - \"%s - x3\"\n"
             "mass_matrix:\n"
             "  x1: {x1: m, x2: '2*m'}\n"
             "  x2: {x2: m}\n",
             sum, sum);
    char want_c2[5 * LONG_N + 16];
    snprintf(want_c2, sizeof want_c2, "%s - x3", sum);
    int ok = 1;
    for (int rep = 0; rep < 200 && ok; rep++) {
        mbl_src *src = NULL;
        mbl_status st;
        int rc = load_src_read(text, strlen(text), "taken.yaml", &src, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (rc) break;
        const mbl_src_list *p = &src->parameters, *q = &src->coordinates, *v = &src->variables, *c = &src->constraints,
                           *mm = &src->mass_matrix;
        ok = p->n == 3 && q->n == 4 && v->n == 3 && c->n == 2 && mm->n == 3;
        CHECK(ok);
        if (!ok) {
            model_src_free(src);
            break;
        }
        ok = same(p->items[0].key, "m") && same(p->items[0].text, "1") && same(p->items[1].key, "k's") &&
             same(p->items[1].text, "2.5") && same(p->items[2].key, "long_name_of_a_parameter") &&
             same(p->items[2].text, "3");
        CHECK(ok);
        ok = ok && same(q->items[0].key, "x1") && same(q->items[0].text, "0.25") && same(q->items[1].key, "x2") &&
             same(q->items[1].text, "0.5") && same(q->items[2].key, "x3") && same(q->items[2].text, "1\t2") &&
             same(q->items[3].key, "x4") && same(q->items[3].text, "a");
        CHECK(ok);
        ok = ok && same(v->items[0].key, "s") && same(v->items[0].text, "x1 +\nx2\n") && same(v->items[1].key, "u") &&
             same(v->items[1].text, "x3 * x4\n") && same(v->items[2].key, "w") && same(v->items[2].text, sum);
        CHECK(ok);
        ok = ok && !c->items[0].key && same(c->items[0].text, "x1 - x2") && !c->items[1].key &&
             same(c->items[1].text, want_c2);
        CHECK(ok);
        ok = ok && same(mm->items[0].key, "x1") && same(mm->items[0].key2, "x1") && same(mm->items[0].text, "m") &&
             same(mm->items[1].key, "x1") && same(mm->items[1].key2, "x2") && same(mm->items[1].text, "2*m") &&
             same(mm->items[2].key, "x2") && same(mm->items[2].key2, "x2") && same(mm->items[2].text, "m");
        CHECK(ok);
        /* positions as before: the text's first character, the key's */
        ok = ok && q->items[0].line == 4 && q->items[0].col == 7 && q->items[1].key_line == 5 &&
             q->items[1].line == 5 && q->items[1].col == 10;
        CHECK(ok);
        model_src_free(src);
    }
    free(text);
    free(sum);
}

int main(void)
{
    RUN(items_as_written);
    return test_summary("src_taken");
}
