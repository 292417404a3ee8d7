/* The resolver's lookup with its guess (src/model/names.c model_find_symbol: the neighbours of the
 * item last found of the name's first letter, compared by the words of their first 8 bytes) against
 * the general path it shortcuts: model_find_name over the lists one by one in the resolver's order.
 * Names of 1 to 12 characters that share their first 4, 7, 8 or 9 bytes (stiffnes, stiffness,
 * stiffness1, stiffnesz: one word of 8 bytes, told apart by the rest or by the length), and of 13 to
 * 22 that share their first 8 bytes, or their first and last 8 with a byte between them different
 * (the guess compares the first and last words and the lengths, then any middle), looked up in
 * ascending, descending, interleaved and strided orders, with near misses: prefixes and extensions of
 * declared names, a NUL inside a name (the word of "ab\0" must not be "ab"'s) or in its last 8 bytes,
 * a byte there changed, a byte >= 0x80 first,
 * the empty name. Then the same lists with a name declared twice (no guess: the probe). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/formulate.h"
#include "model/source.h"
#include "model/symbols_index.h"
#include "test.h"

enum { NPAR = 400, NCOORD = 600, NVAR = 300 };

static char *dup_name(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

static void alloc_list(mbl_src_list *l, int n)
{
    l->items = calloc((size_t)n, sizeof *l->items);
    l->n = l->cap = n;
}

static void drop(mbl_src_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->items[i].key);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* the general path: the lists in turn, as the resolver's precedence */
static int listed(const mbl_src *s, const char *name, size_t len, int *list)
{
    const mbl_src_list *ls[MODEL_SYM_LISTS] = {&s->parameters, &s->coordinates,        &s->inputs,
                                                &s->ode_states, &s->implicit_variables, &s->variables,
                                                &s->constraints, &s->nonholonomic};
    for (int a = 0; a < MODEL_SYM_LISTS; a++) {
        if ((a == MODEL_SYM_CONSTRAINT && !s->named_constraints) || (a == MODEL_SYM_NONHOLONOMIC && !s->named_nonholonomic))
            continue;
        int i = model_find_name(ls[a], name, len);
        if (i >= 0) return *list = a, i;
    }
    return -1;
}

static int mismatches;

static void look(const mbl_src *s, const char *name, size_t len)
{
    int la = -1, lb = -1;
    int a = model_find_symbol(s, name, len, &la), b = listed(s, name, len, &lb);
    if (a != b || (a >= 0 && la != lb)) {
        if (mismatches++ < 10)
            printf("  '%.*s' (%zu bytes): guessed %d in list %d, the lists give %d in list %d\n", (int)len, name, len,
                   a, la, b, lb);
    }
}

/* every declared name and its near misses, in four orders */
static void look_all(const mbl_src *s)
{
    const mbl_src_list *ls[3] = {&s->parameters, &s->coordinates, &s->variables};
    for (int order = 0; order < 4; order++)
        for (int k = 0; k < 3; k++) {
            const mbl_src_list *l = ls[k];
            for (int j = 0; j < l->n; j++) {
                int i = order == 0 ? j : order == 1 ? l->n - 1 - j : order == 2 ? (j % 2 ? j - 1 : j + 1) : (int)(((long)j * 97) % l->n);
                if (i >= l->n) i = j;
                const char *key = l->items[i].key;
                size_t n = strlen(key);
                char buf[80];
                look(s, key, n);
                look(s, key, n - 1 > 0 ? n - 1 : 0); /* a prefix */
                snprintf(buf, sizeof buf, "%s7", key);
                look(s, buf, n + 1); /* an extension */
                memcpy(buf, key, n);
                buf[n] = '\0';
                look(s, buf, n + 1); /* the name and a NUL */
                if (n > 2) {
                    buf[1] = '\0';
                    look(s, buf, n); /* a NUL inside */
                }
                if (n > 9) {
                    memcpy(buf, key, n);
                    buf[n - 2] = '\0';
                    look(s, buf, n); /* a NUL in the last 8 bytes */
                    buf[n - 2] = key[n - 2] == 'A' ? 'B' : 'A';
                    look(s, buf, n); /* another byte there */
                }
                memcpy(buf, key, n);
                buf[0] = (char)0xc3;
                look(s, buf, n); /* a byte >= 0x80 first */
                look(s, key, n); /* (the guess's last found is this one again) */
            }
        }
    look(s, "", 0);
}

TEST(guess_as_the_lists)
{
    mbl_src *s = calloc(1, sizeof *s);
    CHECK(s != NULL);
    if (!s) return;
    /* parameters: 8-byte prefixes (stiffness%d: one word for stiffness1 .. stiffness9 and their
     * tens), coordinates x/y interleaved as the four-bar's, variables of 1 to 4 characters */
    alloc_list(&s->parameters, NPAR);
    for (int i = 0; i < NPAR; i++) {
        char buf[64];
        static const char *const stem[] = {"stiffnes", "stiffness", "stiffnesz", "stif", "stiffn", "st", "stiffnesss"};
        snprintf(buf, sizeof buf, "%s%d", stem[i % 7], i / 7);
        if (i % 11 == 0) snprintf(buf, sizeof buf, "%s", stem[(i / 11) % 7]); /* the stems themselves */
        s->parameters.items[i].key = dup_name(buf);
    }
    alloc_list(&s->coordinates, NCOORD);
    for (int i = 0; i < NCOORD; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%cB%d", i % 2 ? 'y' : 'x', i / 2);
        s->coordinates.items[i].key = dup_name(buf);
    }
    alloc_list(&s->variables, NVAR);
    for (int i = 0; i < NVAR; i++) {
        char buf[64];
        if (i % 6 < 3) /* 1 to 4 characters */
            snprintf(buf, sizeof buf, "%c%d", "vwq"[i % 3], i / 3);
        else if (i % 6 == 3) /* the mechanism compiler's: 13 to 15 bytes, the first 8 shared */
            snprintf(buf, sizeof buf, "rear_frame_%c%d", "exyz"[(i / 6) % 4], i / 24);
        else if (i % 6 == 4) /* 21 to 22 bytes: the first and last 8 shared, a middle byte differs */
            snprintf(buf, sizeof buf, "front_wheel_%c_centre_%d", 'A' + (i / 6) % 26, i / 156);
        else /* 19 bytes: bytes 8 to 10 differ (between the first and last 8) */
            snprintf(buf, sizeof buf, "abcdefgh%03dijklmnop", i);
        s->variables.items[i].key = dup_name(buf);
    }
    /* the stems may repeat (i % 11 == 0 and i % 7 agree): make every name unique first */
    for (int i = 0; i < NPAR; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(s->parameters.items[i].key, s->parameters.items[j].key)) {
                char buf[64];
                snprintf(buf, sizeof buf, "u%d", i);
                free(s->parameters.items[i].key);
                s->parameters.items[i].key = dup_name(buf);
                break;
            }
    mismatches = 0;
    look_all(s);
    printf("  unique names (the guess): %d mismatches\n", mismatches);
    CHECK(mismatches == 0);
    model_name_index_forget(s);
    /* a name twice (a variable named as a parameter): no guess, the probe gives the first */
    free(s->variables.items[5].key);
    s->variables.items[5].key = dup_name(s->parameters.items[3].key);
    mismatches = 0;
    look_all(s);
    printf("  a name twice (the probe): %d mismatches\n", mismatches);
    CHECK(mismatches == 0);
    model_name_index_forget(s);
    drop(&s->parameters);
    drop(&s->coordinates);
    drop(&s->variables);
    free(s);
}

int main(void)
{
    RUN(guess_as_the_lists);
    return test_summary("symbol_guess");
}
