/* Data sets at the edges (issue 65, items 2, 11 and 20; src/model/data.c, docs/model-files.md,
 * "Data sets"). The files are written into a fresh temporary directory.
 *   csv_rows    a 2-D CSV's y row with units (`2000 N`) or a typo (`4O00`), and a 1-D first row of a
 *               label and a number, are refused at the cell (before: taken as a header, the first
 *               data row became the y values); a header of labels above a y row with a label
 *               corner still reads: the map at (0.05, 3000) is -150, midway between its two
 *               values at x = 0.05 (two y values: a line along y);
 *   csv_nul     a NUL byte is refused at its line and field (before: the rest of the line dropped);
 *   data_budget the sets' estimated bytes against mbl_load_options.mem_budget, before the numbers
 *               are read: 30000 CSV points (about 11 MiB) refused under 10 MiB, naming the set and
 *               the count, and read under the default (the table at 12345.5 is the mean of the
 *               values at 12345 and 12346); 20000 inline points under 7 MiB, and their text
 *               under 5 MiB before it is parsed; two sets of 15000 points, each under 10 MiB,
 *               together over it, refused at the second;
 *   knot_slope  the one-sided slope of a table at its points (the piece to the right; at the last
 *               point, the last piece, the same as its linear extrapolation's), and the point's
 *               note where the slope jumps (before: no note). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/model.h"
#include "test.h"

static char dir[256];

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* n bytes of text into the directory's file `name` */
static void write_n(const char *name, const char *text, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, n, f) == n);
    fclose(f);
}

static void write_file(const char *name, const char *text) { write_n(name, text, strlen(text)); }

/* a one-coordinate model at the given x = x0 whose output is `out`, with the `data:` lines `data` */
static void write_model(const char *name, double x0, const char *out, const char *data)
{
    size_t n = strlen(data) + 512;
    char *t = malloc(n);
    CHECK(t != NULL);
    if (!t) return;
    snprintf(t, n,
             "model: dae\ncoordinates: {x: %.17g}\nkinetic_energy: der(x)^2/2\nforces: {x: \"-x\"}\n"
             "outputs: {F: \"%s\"}\nlinearize: {at: given}\ndata:\n%s",
             x0, out, data);
    write_file(name, t);
    free(t);
}

/* loading `name` (under budget bytes; 0: the default) fails with code and one line holding every
 * one of want (NULL-ended) */
static void refused(const char *name, double budget, int code, const char *const *want)
{
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    lo.mem_budget = budget;
    mbl_model *md = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = mbl_model_load_file_opt(path_of(name), NULL, 0, &lo, &md, &st);
    CHECK_MSG(rc == code, "%s: code %d, expected %d: %s", name, rc, code, st.msg);
    CHECK_MSG(!strchr(st.msg, '\n'), "%s: not one line: %s", name, st.msg);
    for (int k = 0; want[k]; k++) CHECK_MSG(strstr(st.msg, want[k]) != NULL, "%s: '%s' not in: %s", name, want[k], st.msg);
    mbl_model_free(md);
}

/* The output and its derivative in x (C) of model `name` at its given point, and the point's notes
 * (when notes is not NULL: 1024 bytes); 0 when it loads and linearizes */
static int output_at(const char *name, double *y, double *dy, char *notes)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = mbl_model_load_file(path_of(name), NULL, 0, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_model_outputs(md, pt, y, &st);
    if (!rc && dy) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc && dy) *dy = lin->ny == 1 && lin->nx == 2 ? lin->C[0] : NAN;
    if (!rc && notes) snprintf(notes, 1024, "%s", pt->notes);
    CHECK_MSG(rc == 0, "%s: %s", name, st.msg);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

TEST(csv_rows)
{
    static const char *rows = "0,0,0\n0.05,-100,-200\n0.1,-150,-300\n";
    char t[256];
    snprintf(t, sizeof t, "slip\\load,2000 N,4000 N\n%s", rows);
    write_file("units.csv", t);
    write_model("units.yaml", 0.05, "spline2(m, x, 3000)", "  m: {method: bicubic, file: units.csv}\n");
    refused("units.yaml", 0, MBL_EMODEL, (const char *[]){"units.csv:1:2:", "data 'm'", "not a number: '2000 N'", NULL});
    snprintf(t, sizeof t, "slip\\load,2000,4O00\n%s", rows);
    write_file("typo.csv", t);
    write_model("typo.yaml", 0.05, "spline2(m, x, 3000)", "  m: {method: bicubic, file: typo.csv}\n");
    refused("typo.yaml", 0, MBL_EMODEL, (const char *[]){"typo.csv:1:3:", "not a number: '4O00'", NULL});
    /* 1-D: a first row of a label and a number is no header */
    write_file("mixed.csv", "time,5\n0,0\n1,1\n2,4\n");
    write_model("mixed.yaml", 0.5, "table(d, x)", "  d: {method: linear, file: mixed.csv}\n");
    refused("mixed.yaml", 0, MBL_EMODEL, (const char *[]){"mixed.csv:1:1:", "not a number: 'time'", NULL});
    /* a 2-D map read as a 1-D set (no method: bicubic): the message says what makes it 2-D */
    write_file("map1d.csv", "slip\\load,2000,4000\n0,0,0\n0.1,-150,-300\n");
    write_model("map1d.yaml", 0.05, "spline(m, x)", "  m: {file: map1d.csv}\n");
    refused("map1d.yaml", 0, MBL_EMODEL, (const char *[]){"map1d.csv:1:1:", "needs method: bicubic", NULL});
    write_file("wide1d.csv", "0,0,0\n0.1,-150,-300\n");
    write_model("wide1d.yaml", 0.05, "spline(m, x)", "  m: {file: wide1d.csv}\n");
    refused("wide1d.yaml", 0, MBL_EMODEL, (const char *[]){"wide1d.csv:1:", "found 3 (a 2-D map needs method: bicubic)", NULL});
    /* a header of labels, then the y row with a label corner: read */
    snprintf(t, sizeof t, "slip, load (N)\nslip\\load,2000,4000\n%s", rows);
    write_file("header.csv", t);
    write_model("header.yaml", 0.05, "spline2(m, x, 3000)", "  m: {method: bicubic, file: header.csv}\n");
    double y = NAN;
    if (!output_at("header.yaml", &y, NULL, NULL)) CHECK_MSG(fabs(y + 150) < 1e-12, "map at (0.05, 3000) = %.17g, expected -150", y);
    /* labels that strtod would start reading (`name`: "nan", `info`: "inf") are labels */
    write_file("names.csv", "name, info\n0,0\n1,2\n2,3\n");
    write_model("names.yaml", 0.5, "table(d, x)", "  d: {method: linear, file: names.csv}\n");
    if (!output_at("names.yaml", &y, NULL, NULL)) CHECK_MSG(fabs(y - 1) < 1e-15, "table at 0.5 = %.17g, expected 1", y);
}

TEST(csv_nul)
{
    static const char text[] = "0,0\n1,2\0,5\n2,3\n";
    write_n("nul.csv", text, sizeof text - 1);
    write_model("nul.yaml", 0.5, "table(d, x)", "  d: {method: linear, file: nul.csv}\n");
    refused("nul.yaml", 0, MBL_EMODEL, (const char *[]){"nul.csv:2:2:", "data 'd': a NUL byte", NULL});
}

/* n rows "i,i mod 7" into `name` */
static void write_rows(const char *name, int n)
{
    FILE *f = fopen(path_of(name), "w");
    CHECK(f != NULL);
    if (!f) return;
    for (int i = 0; i < n; i++) fprintf(f, "%d,%d\n", i, i % 7);
    fclose(f);
}

TEST(data_budget)
{
    const double MiB = 1048576.0;
    write_rows("big.csv", 30000);
    write_model("budget.yaml", 12345.5, "table(big, x)", "  big: {method: linear, file: big.csv}\n");
    refused("budget.yaml", 10 * MiB, MBL_ENOMEM,
            (const char *[]){"budget.yaml:8:31:", "data 'big': 30000 points need about", "over the memory budget of 0.00977 GiB",
                             "--mem-budget", NULL});
    double y = NAN; /* the default budget (2 GiB): read */
    if (!output_at("budget.yaml", &y, NULL, NULL))
        CHECK_MSG(fabs(y - 0.5 * (12345 % 7 + 12346 % 7)) < 1e-12, "table at 12345.5 = %.17g", y);
    /* inline: 20000 points, refused at the set's name before they are read */
    size_t cap = 400000, k = 0;
    char *t = malloc(cap);
    CHECK(t != NULL);
    if (!t) return;
    k += (size_t)snprintf(t + k, cap - k, "  d: {method: linear, x: [0");
    for (int i = 1; i < 20000; i++) k += (size_t)snprintf(t + k, cap - k, ",%d", i);
    k += (size_t)snprintf(t + k, cap - k, "], y: [0");
    for (int i = 1; i < 20000; i++) k += (size_t)snprintf(t + k, cap - k, ",%d", i % 7);
    snprintf(t + k, cap - k, "]}\n");
    write_model("inline.yaml", 0.5, "table(d, x)", t);
    free(t);
    refused("inline.yaml", 7 * MiB, MBL_ENOMEM, (const char *[]){"inline.yaml:8:3:", "data 'd': 20000 points", NULL});
    /* under 5 MiB, its text is refused before it is parsed: 40001 commas (39998 in the lists), 15
     * colons, 8 lines and 1 at 150 B each, 5.7 MiB */
    refused("inline.yaml", 5 * MiB, MBL_ENOMEM,
            (const char *[]){"inline.yaml: about 40025 YAML values need about 0.00559 GiB to read",
                             "over the memory budget of 0.00488 GiB", "CSV files", NULL});
    /* two sets, each under the budget, together over it: the second is refused */
    write_rows("half.csv", 15000);
    write_model("two.yaml", 0.5, "table(a, x) + table(b, x)",
                "  a: {method: linear, file: half.csv}\n  b: {method: cubic, file: half.csv}\n");
    refused("two.yaml", 10 * MiB, MBL_ENOMEM, (const char *[]){"two.yaml:9:28:", "data 'b': 15000 points", NULL});
}

TEST(knot_slope)
{
    /* slopes 1 on [0, 1], 3 on [1, 2], -2 on [2, 3]; at x = 1 and 2 the piece to the right, with
     * a note naming both slopes (before, none), at 3 the last piece; extrapolated linearly beyond
     * 3, the same slope; no note where the slope does not jump */
    static const char *set = "  d: {method: linear, x: [0, 1, 2, 3], y: [0, 1, 4, 2], extrapolate: linear}\n";
    const double at[] = {0, 1, 2, 3, 3.5}, value[] = {0, 1, 4, 2, 1}, slope[] = {1, 3, -2, -2, -2};
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "knot%d.yaml", i);
        write_model(name, at[i], "table(d, x)", set);
        double y = NAN, dy = NAN;
        char notes[1024] = "", want[128] = "";
        if (output_at(name, &y, &dy, notes)) continue;
        CHECK_MSG(fabs(y - value[i]) < 1e-15 && fabs(dy - slope[i]) < 1e-15, "table at %g: %.17g, slope %.17g; expected %g, %g",
                  at[i], y, dy, value[i], slope[i]);
        if (i == 1 || i == 2)
            snprintf(want, sizeof want, "table 'd' at x = %g, where its slope jumps from %g to %g: the slope to the right is used",
                     at[i], slope[i - 1], slope[i]);
        CHECK_MSG(want[0] ? strstr(notes, want) != NULL : strstr(notes, "slope jumps") == NULL, "x = %g: notes '%s', expected '%s'",
                  at[i], notes, want);
    }
}

int main(void)
{
    if (test_tmp_template(dir, sizeof dir, "mblin_data_edges_") || !mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(csv_rows);
    RUN(csv_nul);
    RUN(data_budget);
    RUN(knot_slope);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("data_edges");
}
