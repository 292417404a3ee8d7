/* The names of the symbols the loader makes (src/model/symbols.c model_create_symbols): der(q),
 * der(der(q)), der(X), lambda[j] and mu[j], built without printf, against snprintf's text of the same
 * names (cut at 511 characters as the loader's buffer of 512 cuts them), for names of every length
 * around that buffer's end; and their order: q, der(q), der(der(q)) one after the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "test.h"

/* name of n characters: "q" then letters */
static void make_name(char *buf, size_t n, char first)
{
    buf[0] = first;
    for (size_t i = 1; i < n; i++) buf[i] = (char)('a' + i % 26);
    buf[n] = '\0';
}

static int same_name(const mbl_model *md, mblx_id e, const char *fmt, const char *arg, int num)
{
    char want[512];
    if (arg) snprintf(want, sizeof want, fmt, arg);
    else snprintf(want, sizeof want, fmt, num);
    const char *got = mblx_symbol_name(md->g, e);
    int ok = got && !strcmp(got, want);
    if (!ok) fprintf(stderr, "symbol '%.60s...' (%zu), expected '%.60s...' (%zu)\n", got ? got : "(null)",
                     got ? strlen(got) : 0, want, strlen(want));
    return ok;
}

/* a coordinate and an ode state of n characters each, 24 coordinates more with 11 constraints and
 * 11 non-holonomic constraints (two-digit multiplier numbers) */
static void check_length(size_t n)
{
    char qn[700], xn[700];
    make_name(qn, n, 'q');
    make_name(xn, n, 'x');
    size_t cap = 8192 + 20 * n;
    char *text = malloc(cap), *o = text;
    CHECK(text != NULL);
    if (!text) return;
    o += sprintf(o, "model: dae\ncoordinates: {%s: 0", qn);
    for (int i = 1; i <= 24; i++) o += sprintf(o, ", c%d: 0", i);
    o += sprintf(o, "}\node_states: {%s: 0}\node: {%s: \"-%s\"}\n", xn, xn, xn);
    o += sprintf(o, "kinetic_energy: \"0.5*der(%s)^2", qn);
    for (int i = 1; i <= 24; i++) o += sprintf(o, " + 0.5*der(c%d)^2", i);
    o += sprintf(o, "\"\nconstraints:\n");
    for (int i = 1; i <= 11; i++) o += sprintf(o, "  - \"c%d - c%d\"\n", i, i + 1);
    o += sprintf(o, "nonholonomic:\n");
    for (int i = 1; i <= 11; i++) o += sprintf(o, "  - \"der(c%d) - der(%s)\"\n", 12 + i, qn);
    mbl_model *md = NULL;
    mbl_status st = {0};
    int rc = mbl_model_load_string(text, strlen(text), "names.yaml", NULL, 0, &md, &st);
    free(text);
    CHECK_MSG(rc == 0, "length %zu: %s", n, st.msg);
    if (rc) return;
    CHECK_EQ_INT(md->n, 25);
    CHECK_EQ_INT(md->m, 11);
    CHECK_EQ_INT(md->k, 11);
    CHECK_EQ_INT(md->nX, 1);
    for (int i = 0; i < md->n; i++) {
        const char *nm = md->qname[i];
        CHECK_MSG(!strcmp(mblx_symbol_name(md->g, md->q[i]), nm), "length %zu, q %d", n, i); /* not cut */
        CHECK_MSG(same_name(md, md->v[i], "der(%s)", nm, 0), "length %zu, v %d", n, i);
        CHECK_MSG(same_name(md, md->a[i], "der(der(%s))", nm, 0), "length %zu, a %d", n, i);
        long s = mblx_symbol_index(md->g, md->q[i]);
        CHECK(mblx_symbol_index(md->g, md->v[i]) == s + 1 && mblx_symbol_index(md->g, md->a[i]) == s + 2);
    }
    CHECK_MSG(same_name(md, md->Xd[0], "der(%s)", xn, 0), "length %zu, Xd", n);
    for (int j = 0; j < md->m; j++) CHECK(same_name(md, md->lam[j], "lambda[%d]", NULL, j + 1));
    for (int j = 0; j < md->k; j++) CHECK(same_name(md, md->mu[j], "mu[%d]", NULL, j + 1));
    for (int j = 0; j < md->m + md->k; j++) {
        char want[64];
        snprintf(want, sizeof want, "%sconstraint %d", j < md->m ? "" : "non-holonomic ", j < md->m ? j + 1 : j - md->m + 1);
        CHECK(!strcmp(md->cname[j], want));
    }
    mbl_model_free(md);
}

TEST(names_of_every_length)
{
    static const size_t lens[] = {1, 2, 9, 40, 499, 500, 501, 502, 503, 505, 506, 507, 508, 511, 512, 513, 600};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) check_length(lens[i]);
}

/* The multipliers' names lambda[1] .. lambda[1001] (their digits counted up in place: 9 -> 10,
 * 99 -> 100, 999 -> 1000) against snprintf's, each a symbol of its own in the order of the
 * constraints */
TEST(multiplier_names_counted)
{
    enum { NC = 1002 };
    size_t cap = 64 * NC + 1024;
    char *text = malloc(cap), *o = text;
    CHECK(text != NULL);
    if (!text) return;
    o += sprintf(o, "model: dae\ncoordinates: {c1: 0");
    for (int i = 2; i <= NC; i++) o += sprintf(o, ", c%d: 0", i);
    o += sprintf(o, "}\nkinetic_energy: \"0.5*der(c1)^2");
    for (int i = 2; i <= NC; i++) o += sprintf(o, " + 0.5*der(c%d)^2", i);
    o += sprintf(o, "\"\nconstraints:\n");
    for (int i = 1; i < NC; i++) o += sprintf(o, "  - \"c%d - c%d\"\n", i, i + 1);
    mbl_model *md = NULL;
    mbl_status st = {0};
    int rc = mbl_model_load_string(text, strlen(text), "lambdas.yaml", NULL, 0, &md, &st);
    free(text);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) return;
    CHECK_EQ_INT(md->m, NC - 1);
    long s0 = mblx_symbol_index(md->g, md->lam[0]);
    for (int j = 0; j < md->m; j++) {
        CHECK_MSG(same_name(md, md->lam[j], "lambda[%d]", NULL, j + 1), "lambda %d", j + 1);
        CHECK(mblx_symbol_index(md->g, md->lam[j]) == s0 + j);
    }
    mbl_model_free(md);
}

int main(void)
{
    RUN(names_of_every_length);
    RUN(multiplier_names_counted);
    return test_summary("symbol_names");
}
