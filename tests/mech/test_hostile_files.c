/* Hostile input files to the URDF reader (src/mech/urdf_xml.c) and the modal body's Matrix Market
 * reader (src/mech/modal_body.c), issue 30 items 15 and 16: each is refused with one line naming
 * the file (and its line where there is one), quickly, without a leak (run under ASan). The files
 * are written into a fresh temporary directory. Before the fixes: the entity URDF printed a robot
 * name of 10^4 letters (and 180 MB at a larger size), the overlong name was accepted, the .mtx of
 * size -30 x -30 aborted ("free(): invalid size"), the truncated one said "CHOLMOD status -4",
 * /dev/zero never ended and a directory said "CHOLMOD status -4". */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mblin/model.h"
#include "test.h"

static char dir[64];

static const char *path_of(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* loading `file` fails within a second with one line holding every one of want (NULL-ended) */
static void refused(const char *file, const char *const *want)
{
    mbl_model *md = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    double t0 = now();
    int rc = mbl_model_load_file(file, NULL, 0, &md, &st);
    double dt = now() - t0;
    CHECK_MSG(rc != 0, "%s: loaded", file);
    CHECK_MSG(dt < 1.0, "%s: %.2f s", file, dt);
    CHECK_MSG(!strchr(st.msg, '\n') && strlen(st.msg) < 600, "%s: not one short line: %.300s", file, st.msg);
    size_t n = strlen(st.msg); /* the line ends at a word (issue 65, item 20: "... reference loop ") */
    CHECK_MSG(n && !isspace((unsigned char)st.msg[n - 1]), "%s: the message ends with a space: '%s'", file, st.msg);
    for (int k = 0; want[k]; k++) CHECK_MSG(strstr(st.msg, want[k]) != NULL, "%s: '%s' not in: %.300s", file, want[k], st.msg);
    mbl_model_free(md);
}

/* ---- URDF ---- */

static const char *arm_head = "<?xml version=\"1.0\"?>\n";
static const char *arm_body =
    "<robot name=\"ROBOT\">\n"
    "  <link name=\"LINK\"/>\n"
    "  <link name=\"l1\"><inertial><mass value=\"1\"/><origin xyz=\"0 0 -0.5\"/>"
    "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"LINK\"/><child link=\"l1\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "</robot>\n";

/* the robot with its name, base link name and a DOCTYPE */
static void write_urdf(const char *file, const char *doctype, const char *robot, const char *link)
{
    size_t n = strlen(arm_head) + strlen(doctype) + strlen(arm_body) + strlen(robot) + 2 * strlen(link) + 16;
    char *t = malloc(n);
    CHECK(t != NULL);
    if (!t) return;
    size_t k = (size_t)snprintf(t, n, "%s%s", arm_head, doctype);
    for (const char *p = arm_body; *p;) {
        if (!strncmp(p, "ROBOT", 5)) k += (size_t)snprintf(t + k, n - k, "%s", robot), p += 5;
        else if (!strncmp(p, "LINK", 4)) k += (size_t)snprintf(t + k, n - k, "%s", link), p += 4;
        else t[k++] = *p++;
    }
    t[k] = '\0';
    write_file(file, t);
    free(t);
}

TEST(urdf_hostile)
{
    /* the plain robot loads (the tests below change one thing) */
    write_urdf("ok.urdf", "", "arm", "base");
    mbl_model *md = NULL;
    mbl_status st;
    CHECK_MSG(mbl_model_load_file(path_of("ok.urdf"), NULL, 0, &md, &st) == 0, "%s", st.msg);
    mbl_model_free(md);
    /* billion laughs, small: 10^4 letters for the robot's name from 4 declarations */
    write_urdf("laughs.urdf",
               "<!DOCTYPE robot [\n<!ENTITY a \"aaaaaaaaaa\">\n<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
               "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n]>\n",
               "&d;", "base");
    refused(path_of("laughs.urdf"), (const char *[]){"laughs.urdf:", "entit", NULL});
    /* billion laughs proper: 10^9 letters from 10 declarations, stopped by libxml2 while parsing
     * (its message "Detected an entity reference loop \n" ended the line with a space) */
    char laughs[1200] = "<!DOCTYPE robot [\n<!ENTITY l0 \"lol\">\n";
    for (int i = 1; i < 10; i++) {
        size_t k = strlen(laughs);
        k += (size_t)snprintf(laughs + k, sizeof laughs - k, "<!ENTITY l%d \"", i);
        for (int j = 0; j < 10; j++) k += (size_t)snprintf(laughs + k, sizeof laughs - k, "&l%d;", i - 1);
        snprintf(laughs + k, sizeof laughs - k, "\">\n");
    }
    strcat(laughs, "]>\n");
    write_urdf("laughs9.urdf", laughs, "&l9;", "base");
    refused(path_of("laughs9.urdf"), (const char *[]){"laughs9.urdf:", "not well-formed XML", NULL});
    /* one entity, even harmless, is refused */
    write_urdf("one.urdf", "<!DOCTYPE robot [\n<!ENTITY n \"arm\">\n]>\n", "&n;", "base");
    refused(path_of("one.urdf"), (const char *[]){"one.urdf:5:", "may not declare entities", NULL});
    /* an external entity is never read */
    write_urdf("ext.urdf", "<!DOCTYPE robot [\n<!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n", "&x;", "base");
    refused(path_of("ext.urdf"), (const char *[]){"ext.urdf:", "entit", NULL});
    write_urdf("ext2.urdf", "<!DOCTYPE robot [\n<!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n", "arm", "base");
    refused(path_of("ext2.urdf"), (const char *[]){"ext2.urdf:5:", "declares entity 'x'", NULL});
    /* an external DTD is not loaded: the robot reads as without it */
    write_urdf("dtd.urdf", "<!DOCTYPE robot SYSTEM \"file:///nonexistent/robot.dtd\">\n", "arm", "base");
    CHECK_MSG(mbl_model_load_file(path_of("dtd.urdf"), NULL, 0, &md, &st) == 0, "%s", st.msg);
    mbl_model_free(md);
    /* names of 257 bytes are refused; 256 are fine */
    char name[300];
    memset(name, 'L', 257), name[257] = '\0';
    write_urdf("long_link.urdf", "", "arm", name);
    refused(path_of("long_link.urdf"), (const char *[]){"long_link.urdf:3:", "<link>: name is longer than 256 bytes", NULL});
    write_urdf("long_robot.urdf", "", name, "base");
    refused(path_of("long_robot.urdf"), (const char *[]){"long_robot.urdf:2:", "<robot>: name is longer than 256 bytes", NULL});
    name[256] = '\0';
    write_urdf("name256.urdf", "", name, name);
    CHECK_MSG(mbl_model_load_file(path_of("name256.urdf"), NULL, 0, &md, &st) == 0, "%s", st.msg);
    mbl_model_free(md);
}

/* Names that do not start with a letter (issue 30, item 18): before, the reader made them `_1st_link`
 * and the mechanism compiler refused that name, at a line of the generated text ("l1.urdf:12:3: body
 * '_1st_link': not a valid name"). Now they get their element as a prefix and the robot loads: a
 * pendulum (mass 1, centre 0.5 below the hinge about y, Iyy 0.1) swings at sqrt(m g c / (Iyy + m c^2)).
 * Two names equal after that are refused naming the link as written, with its line. */
TEST(urdf_names)
{
    static const char *text =
        "<?xml version=\"1.0\"?>\n<robot name=\"9arm\">\n  <link name=\"0base\"/>\n"
        "  <link name=\"1st_link\"><inertial><mass value=\"1\"/><origin xyz=\"0 0 -0.5\"/>"
        "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
        "  <joint name=\"2nd-joint\" type=\"revolute\"><parent link=\"0base\"/><child link=\"1st_link\"/>"
        "<axis xyz=\"0 1 0\"/></joint>\n</robot>\n";
    write_file("digits.urdf", text);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *mo = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = mbl_model_load_file(path_of("digits.urdf"), NULL, 0, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &mo, &st);
    CHECK_MSG(rc == 0, "digits.urdf: %s", st.msg);
    if (!rc) {
        const double w = sqrt(1 * 9.81 * 0.5 / (0.1 + 1 * 0.25));
        CHECK(mo->nx == 2);
        for (int i = 0; i < mo->nx; i++)
            CHECK_MSG(fabs(fabs(mo->modes[i].im) - w) < 1e-10 * w && fabs(mo->modes[i].re) < 1e-10 * w,
                      "eigenvalue %g%+gi, closed form +-%gi", mo->modes[i].re, mo->modes[i].im, w);
        CHECK_MSG(lin->nu == 1 && !strcmp(lin->input_names[0], "u_joint_2nd_joint"), "input %s",
                  lin->nu ? lin->input_names[0] : "(none)");
        mbl_model_info mi; /* the robot's name is a title: as written, no prefix (was `_9arm`) */
        mbl_model_get_info(md, &mi);
        CHECK_MSG(mi.name && !strcmp(mi.name, "9arm"), "model name %s", mi.name ? mi.name : "(null)");
    }
    mbl_modes_free(mo);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    /* `link_1st_link` and `1st_link` become one name: refused as written, with the line */
    static const char *twice =
        "<?xml version=\"1.0\"?>\n<robot name=\"arm\">\n  <link name=\"base\"/>\n"
        "  <link name=\"link_1st_link\"><inertial><mass value=\"1\"/>"
        "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
        "  <link name=\"1st_link\"/>\n</robot>\n";
    write_file("twice.urdf", twice);
    refused(path_of("twice.urdf"), (const char *[]){"twice.urdf:5:", "link '1st_link'", "used by the link at line 4", NULL});
}

/* Beam elements against the memory budget of building (issue 30, item 17): before, `elements` up
 * to 1e7 were built whatever mbl_load_options said (1e6 planar elements: 3 GB in 30 s). The
 * estimate is 3 (ne + 1) coordinates, 2 x 36 ne nonzeros and MBL_MECH_BEAM_BYTES = 10 kB per
 * element (measured), plus each floating frame's 3 coordinates; two beams of 500 elements: 3012
 * coordinates, 72000 nonzeros, 9.5 MiB. */
static void beam_text(char *t, size_t n, const char *ne)
{
    snprintf(t, n,
             "model: mechanism\nspace: planar\nparameters: {l: 4}\nground: {markers: {o: {}}}\nbodies:\n"
             "  link1: {type: beam, length: l, elements: %s, E: 1e8, rho: 1500, radius: 0.15, angle: -pi/2,\n"
             "          markers: {a1: {node: 1}, p1: {s: l}}}\n"
             "  link2: {type: beam, length: l, elements: %s, E: 1e8, rho: 1500, radius: 0.15, position: [0, -4],\n"
             "          angle: -pi/2, markers: {a2: {node: 1}}}\n"
             "joints: {pin1: {type: revolute, i: a1, j: o}, pin2: {type: revolute, i: a2, j: p1}}\n"
             "forces: {weight: {type: gravity, g: [0, -9.81]}}\n",
             ne, ne);
}

TEST(beam_budget)
{
    char t[1024];
    beam_text(t, sizeof t, "500");
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    mbl_model *md = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    /* over a budget of 5 MiB: refused at link2's `elements` (link1 alone fits), with the estimate */
    lo.mem_budget = 5 * 1048576.0;
    int rc = mbl_model_load_string_opt(t, strlen(t), "beams.yaml", NULL, 0, &lo, &md, &st);
    CHECK(rc == MBL_ENOMEM && md == NULL);
    const double est = 1000 * 10e3 / 1073741824.0, bud = 5 * 1048576.0 / 1073741824.0;
    char want[200];
    snprintf(want, sizeof want, "need about %.3g GiB to build, over the memory budget of %.3g GiB", est, bud);
    static const char *const parts[] = {"beams.yaml:8:44:", "body 'link2': 500 beam elements",
                                        "(1000 elements, 3012 coordinates, 72000 nonzeros", NULL};
    for (int k = 0; parts[k]; k++) CHECK_MSG(strstr(st.msg, parts[k]) != NULL, "'%s' not in: %s", parts[k], st.msg);
    CHECK_MSG(strstr(st.msg, want) != NULL, "'%s' not in: %s", want, st.msg);
    mbl_model_free(md);
    md = NULL;
    /* under a budget of 20 MiB, and with the default (2 GiB), the same model builds: 3012 coordinates */
    for (int pass = 0; pass < 2; pass++) {
        lo.mem_budget = pass ? 0 : 20 * 1048576.0;
        rc = mbl_model_load_string_opt(t, strlen(t), "beams.yaml", NULL, 0, &lo, &md, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        mbl_model_info inf;
        memset(&inf, 0, sizeof inf);
        if (!rc) mbl_model_get_info(md, &inf);
        CHECK_MSG(rc || inf.ncoord == 3012, "n = %d", inf.ncoord);
        mbl_model_free(md);
        md = NULL;
    }
    /* 1e6 elements per beam under the default budget: refused before anything is built */
    beam_text(t, sizeof t, "1e6");
    rc = mbl_model_load_string_opt(t, strlen(t), "big.yaml", NULL, 0, NULL, &md, &st);
    CHECK(rc == MBL_ENOMEM && md == NULL);
    CHECK_MSG(strstr(st.msg, "big.yaml:6:44: body 'link1': 1000000 beam elements") && strstr(st.msg, "over the memory budget of 2 GiB"),
              "%s", st.msg);
    /* a negative or non-finite budget is refused */
    lo.mem_budget = -1;
    CHECK(mbl_model_load_string_opt(t, strlen(t), "big.yaml", NULL, 0, &lo, &md, &st) == MBL_EARG);
    CHECK_MSG(strstr(st.msg, "mem_budget = -1") != NULL, "%s", st.msg);
    mbl_model_free(md);
}

/* ---- Matrix Market files of a modal body ---- */

/* a model whose mass matrix is `mtx` (the other files are the example's 30-mode link), its rigid
 * body's mass, s0 and J0 `rigid` (NULL: 1, [1, 0], 1) */
static void write_modal_rigid(const char *file, const char *mtx, const char *rigid)
{
    char cwd[512], t[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    if (!rigid) rigid = "mass: 1\n    s0: [1, 0]\n    J0: 1";
    snprintf(t, sizeof t,
             "model: mechanism\nspace: planar\nbodies:\n  b:\n    type: modal\n    %s\n"
             "    mass_matrix: %s\n    stiffness: %s/examples/modal/link10_K.mtx\n    Sb: %s/examples/modal/link10_Sb.mtx\n"
             "    c1: %s/examples/modal/link10_c1.mtx\n    c2: %s/examples/modal/link10_c2.mtx\n    P: %s/examples/modal/link10_P.mtx\n",
             rigid, mtx, cwd, cwd, cwd, cwd, cwd);
    write_file(file, t);
}

static void write_modal(const char *file, const char *mtx) { write_modal_rigid(file, mtx, NULL); }

TEST(mtx_hostile)
{
    /* negative dimensions (array and coordinate) */
    write_file("neg.mtx", "%%MatrixMarket matrix array real general\n-30 -30\n1\n2\n");
    write_modal("neg.yaml", "neg.mtx");
    refused(path_of("neg.yaml"), (const char *[]){"neg.yaml:9:", "neg.mtx:2:", "-30 x -30", NULL});
    write_file("negc.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n-30 -30 2\n1 1 1\n2 2 1\n");
    write_modal("negc.yaml", "negc.mtx");
    refused(path_of("negc.yaml"), (const char *[]){"negc.mtx:3:", "at least 1 x 1", NULL});
    /* zero and absurdly large */
    write_file("zero.mtx", "%%MatrixMarket matrix array real general\n0 0\n");
    write_modal("zero.yaml", "zero.mtx");
    refused(path_of("zero.yaml"), (const char *[]){"zero.mtx:2:", "at least 1 x 1", NULL});
    write_file("huge.mtx", "%%MatrixMarket matrix array real general\n100000 100000\n1\n");
    write_modal("huge.yaml", "huge.mtx");
    refused(path_of("huge.yaml"), (const char *[]){"huge.mtx:2:", "at most 16777216 entries", NULL});
    write_file("overflow.mtx", "%%MatrixMarket matrix array real general\n99999999999999999999 2\n1\n");
    write_modal("overflow.yaml", "overflow.mtx");
    refused(path_of("overflow.yaml"), (const char *[]){"overflow.mtx:2:", NULL});
    /* truncated: the size line says 2 x 2, three values follow */
    write_file("trunc.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n");
    write_modal("trunc.yaml", "trunc.mtx");
    refused(path_of("trunc.yaml"), (const char *[]){"trunc.mtx:5:", "ends after 3 of the 4 entries", NULL});
    /* a coordinate file with fewer entries than its size line */
    write_file("truncc.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n");
    write_modal("truncc.yaml", "truncc.mtx");
    refused(path_of("truncc.yaml"), (const char *[]){"truncc.mtx:3:", "ends after 1 of the 2 entries", NULL});
    /* the model's sizes: a 2 x 2 stiffness file for 30 modes is refused at its size line */
    write_file("small.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n");
    write_modal("small.yaml", "small.mtx");
    refused(path_of("small.yaml"), (const char *[]){"small.yaml:10:", "link10_K.mtx:3:", "expected 2 x 2", NULL});
    /* no banner, a complex matrix, a line beyond 1024 characters */
    write_file("nob.mtx", "2 2\n1\n0\n0\n1\n");
    write_modal("nob.yaml", "nob.mtx");
    refused(path_of("nob.yaml"), (const char *[]){"nob.mtx:1:", "banner", NULL});
    /* a banner's two percent signs apart make a comment line, not a banner (the fuzzer's find:
     * sscanf's "%%" skips white space, CHOLMOD then read a file without a header and leaked) */
    write_file("spaced.mtx", "% %MatrixMarket matrix array real symmetric\n2 2\n1\n0\n1\n");
    write_modal("spaced.yaml", "spaced.mtx");
    refused(path_of("spaced.yaml"), (const char *[]){"spaced.mtx:1:", "banner", NULL});
    write_file("cplx.mtx", "%%MatrixMarket matrix array complex general\n1 1\n1 0\n");
    write_modal("cplx.yaml", "cplx.mtx");
    refused(path_of("cplx.yaml"), (const char *[]){"cplx.mtx:1:", "complex", NULL});
    char line[1200];
    memset(line, '%', 1100), line[1100] = '\0';
    char text[1400];
    snprintf(text, sizeof text, "%%%%MatrixMarket matrix array real general\n%s\n1 1\n1\n", line);
    write_file("longline.mtx", text);
    write_modal("longline.yaml", "longline.mtx");
    refused(path_of("longline.yaml"), (const char *[]){"longline.mtx:2:", "longer than 1024", NULL});
    /* entries: not a number, an index outside, a coordinate line without its value */
    write_file("nan.mtx", "%%MatrixMarket matrix array real general\n1 1\nabc\n");
    write_modal("nan.yaml", "nan.mtx");
    refused(path_of("nan.yaml"), (const char *[]){"nan.mtx:3:", "not a number", NULL});
    write_file("idx.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 1\n");
    write_modal("idx.yaml", "idx.mtx");
    refused(path_of("idx.yaml"), (const char *[]){"idx.mtx:4:", "the row is outside the matrix", NULL});
    write_file("noval.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n");
    write_modal("noval.yaml", "noval.mtx");
    refused(path_of("noval.yaml"), (const char *[]){"noval.mtx:3:", "'row column value'", NULL});
    write_file("extra.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n");
    write_modal("extra.yaml", "extra.mtx");
    refused(path_of("extra.yaml"), (const char *[]){"extra.mtx:4:", "more entries than the 1", NULL});
    /* an integer matrix with a value that is not a whole number (issue 65, item 20: was read as
     * real), array and coordinate; whole numbers under `integer` load (the 30 x 30 identity) */
    write_file("int.mtx", "%%MatrixMarket matrix array integer general\n1 1\n1.5\n");
    write_modal("int.yaml", "int.mtx");
    refused(path_of("int.yaml"), (const char *[]){"int.yaml:9:", "int.mtx:3:1:", "not a whole number", "'integer'", NULL});
    write_file("intc.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 1\n2 2 1e0\n");
    write_modal("intc.yaml", "intc.mtx");
    refused(path_of("intc.yaml"), (const char *[]){"intc.mtx:4:5:", "not a whole number", NULL});
    char eye[2048];
    size_t k = (size_t)snprintf(eye, sizeof eye, "%%%%MatrixMarket matrix coordinate integer symmetric\n30 30 30\n");
    for (int i = 1; i <= 30; i++) k += (size_t)snprintf(eye + k, sizeof eye - k, "%d %d +1\n", i, i);
    write_file("eye.mtx", eye);
    write_modal_rigid("eye.yaml", "eye.mtx", /* examples/flexible_pendulum_modal.yaml's link, whose M is I */
                      "mass: 424.11500823462211\n    s0: [848.23001646924422, 0]\n    J0: 2261.9467105846511");
    mbl_model *md = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    CHECK_MSG(mbl_model_load_file(path_of("eye.yaml"), NULL, 0, &md, &st) == 0, "eye.yaml: %s", st.msg);
    mbl_model_free(md);
    /* not a regular file: /dev/zero, a directory */
    write_modal("zero_dev.yaml", "/dev/zero");
    refused(path_of("zero_dev.yaml"), (const char *[]){"zero_dev.yaml:9:", "'/dev/zero' is not a regular file", NULL});
    write_modal("dir.yaml", "/tmp");
    refused(path_of("dir.yaml"), (const char *[]){"dir.yaml:9:", "'/tmp' is not a regular file", NULL});
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/mblin_hostile_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(urdf_hostile);
    RUN(urdf_names);
    RUN(beam_budget);
    RUN(mtx_hostile);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("hostile_files");
}
