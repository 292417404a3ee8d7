/* URDF robots read as UTF-8 whatever their XML declaration says (issue 30, found by the fuzz target
 * fuzz_urdf): a declared encoding went to libxml2's iconv conversion, whose failures libxml2 printed
 * on stderr ("encoding error : input conversion failed due to input error") although the library
 * never prints, so the command line's refusal took two lines. Here stderr is captured around each
 * load: it must stay empty, the refusal be one line naming the file, and a robot in ASCII that
 * declares another encoding load as it does without the declaration (two movable joints: two
 * coordinates, as examples/urdf/two_link_arm.urdf has). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "test.h"

/* load text from memory with fd 2 sent to a file; the bytes written to it in *nerr */
static int load_quiet(const char *text, size_t len, mbl_model **md, mbl_status *st, long *nerr)
{
    char tmpl[] = "/tmp/mblin_urdf_enc_XXXXXX";
    int fd = mkstemp(tmpl), saved = dup(2);
    if (fd < 0 || saved < 0) return -100;
    fflush(stderr);
    dup2(fd, 2);
    int rc = mbl_model_load_string(text, len, "enc.urdf", NULL, 0, md, st);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    *nerr = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(tmpl);
    return rc;
}

static const char *robot =
    "<robot name=\"arm\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"l1\"><inertial><mass value=\"1\"/><origin xyz=\"0 0 -0.5\"/>"
    "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"l2\"><inertial><mass value=\"1\"/><origin xyz=\"0 0 -0.5\"/>"
    "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <joint name=\"j2\" type=\"revolute\"><parent link=\"l1\"/><child link=\"l2\"/><origin xyz=\"0 0 -1\"/>"
    "<axis xyz=\"0 1 0\"/></joint>\n"
    "</robot>\n";

TEST(declared_encodings)
{
    const char *decl[] = {"ISO-10646-UCS-4", "UCS-4", "UTF-16", "ISO-8859-1", "US-ASCII", "EBCDIC-US", "UTF-8"};
    for (size_t k = 0; k < sizeof decl / sizeof *decl; k++) {
        char text[2048];
        int n = snprintf(text, sizeof text, "<?xml version=\"1.0\" encoding=\"%s\"?>\n%s", decl[k], robot);
        mbl_model *md = NULL;
        mbl_status st;
        mbl_status_clear(&st);
        long nerr = -1;
        int rc = load_quiet(text, (size_t)n, &md, &st, &nerr);
        CHECK_MSG(nerr == 0, "encoding %s: %ld bytes printed on stderr", decl[k], nerr);
        CHECK_MSG(rc == 0, "encoding %s: %s", decl[k], st.msg);
        if (!rc) {
            mbl_model_info info;
            mbl_model_get_info(md, &info);
            CHECK_EQ_INT(info.ncoord, 2);
        }
        mbl_model_free(md);
    }
    /* bytes that are not UTF-8 (a Latin-1 e-acute in the robot's name): refused in one line naming the file */
    char text[2048];
    int n = snprintf(text, sizeof text, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<robot name=\"arm\xe9\">%s",
                     strstr(robot, ">") + 1);
    mbl_model *md = NULL;
    mbl_status st;
    mbl_status_clear(&st);
    long nerr = -1;
    int rc = load_quiet(text, (size_t)n, &md, &st, &nerr);
    CHECK_MSG(nerr == 0, "Latin-1 byte: %ld bytes printed on stderr", nerr);
    CHECK_MSG(rc == MBL_EPARSE && md == NULL && strstr(st.msg, "enc.urdf:2:") && !strchr(st.msg, '\n'), "rc %d: %s", rc,
              st.msg);
    mbl_model_free(md);
}

int main(void)
{
    RUN(declared_encodings);
    return test_summary("urdf_encoding");
}
