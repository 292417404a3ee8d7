/* mbl_load_options.states / velocity_states: user states given by the caller replace the file's
 * linearize.states (the Python package's linearize(states=[...])). */
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

static const char *slider =
    "model: dae\n"
    "parameters: {m2: 10, m3: 20, l: 2, j3: 15, k: 20, g: 9.81}\n"
    "coordinates: {y: 0, theta: 0.1}\n"
    "kinetic_energy: '0.5*(m2 + m3)*der(y)^2 + m3*l/2*cos(theta)*der(y)*der(theta) + 0.5*(m3*l^2/4 + j3)*der(theta)^2'\n"
    "potential_energy: '0.5*k*y^2 - m3*g*l/2*cos(theta)'\n"
    "linearize: {states: [y]}\n";

/* Load with the given states (n < 0: the file's) and linearize; the state names in *names. */
static int run(const char *const *states, int n, const char *const *vstates, int nv, char names[4][32], mbl_status *st)
{
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    if (n >= 0) lo.states = states, lo.nstates = n;
    if (nv >= 0) lo.velocity_states = vstates, lo.nvelocity_states = nv;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    int rc = mbl_model_load_string_opt(slider, strlen(slider), "s.yaml", NULL, 0, &lo, &md, st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, st);
    if (!rc)
        for (int i = 0; i < 4 && i < lin->nx; i++) snprintf(names[i], 32, "%s", lin->state_names[i]);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

TEST(file_states_kept_by_default)
{
    mbl_status st;
    char names[4][32] = {{0}};
    CHECK_EQ_INT(run(NULL, -1, NULL, -1, names, &st), 0);
    CHECK(!strcmp(names[0], "y") && !strcmp(names[1], "theta"));
}

TEST(given_states_replace_the_file)
{
    mbl_status st;
    char names[4][32] = {{0}};
    const char *s[] = {"theta"};
    CHECK_EQ_INT(run(s, 1, NULL, -1, names, &st), 0);
    CHECK_MSG(!strcmp(names[0], "theta") && !strcmp(names[1], "y"), "%s %s", names[0], names[1]);
    const char *s2[] = {"theta", "y"};
    CHECK_EQ_INT(run(s2, 2, NULL, -1, names, &st), 0);
    CHECK(!strcmp(names[0], "theta") && !strcmp(names[1], "y") && !strcmp(names[2], "der(theta)"));
    /* none: chosen among the coordinates, in their order */
    CHECK_EQ_INT(run(s, 0, NULL, -1, names, &st), 0);
    CHECK(!strcmp(names[0], "y") && !strcmp(names[1], "theta"));
}

TEST(given_states_errors)
{
    mbl_status st;
    char names[4][32];
    const char *unknown[] = {"foo"};
    CHECK_EQ_INT(run(unknown, 1, NULL, -1, names, &st), MBL_EPARSE);
    CHECK_MSG(!strcmp(st.msg, "s.yaml: unknown name 'foo' (in state 1 (given) 'foo', column 1)"), "%s", st.msg);
    const char *unknown2[] = {"y", "2*theta + foo"};
    CHECK_EQ_INT(run(unknown2, 2, NULL, -1, names, &st), MBL_EPARSE);
    CHECK_MSG(!strcmp(st.msg, "s.yaml: unknown name 'foo' (in state 2 (given) '2*theta + foo', column 11)"), "%s",
              st.msg);
    const char *constant[] = {"theta", "l"};
    CHECK_EQ_INT(run(constant, 2, NULL, -1, names, &st), MBL_EMODEL);
    CHECK_MSG(strstr(st.msg, "state 2 (given) does not depend on any coordinate"), "%s", st.msg);
    const char *empty[] = {"y", ""};
    CHECK_EQ_INT(run(empty, 2, NULL, -1, names, &st), MBL_EARG);
    CHECK_MSG(strstr(st.msg, "states 2 is empty"), "%s", st.msg);
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    lo.states = empty;
    lo.nstates = -2;
    mbl_model *md = NULL;
    CHECK_EQ_INT(mbl_model_load_string_opt(slider, strlen(slider), "s.yaml", NULL, 0, &lo, &md, &st), MBL_EARG);
    CHECK(md == NULL);
    const char *v[] = {"theta"};
    CHECK_EQ_INT(run(NULL, -1, v, 1, names, &st), MBL_EMODEL);
    CHECK_MSG(strstr(st.msg, "velocity state 1 (given) does not contain any der(.)"), "%s", st.msg);
}

TEST(given_velocity_states)
{
    mbl_status st;
    char names[4][32] = {{0}};
    const char *v[] = {"der(theta)", "der(y)"};
    CHECK_EQ_INT(run(NULL, -1, v, 2, names, &st), 0);
    CHECK_MSG(!strcmp(names[2], "der(theta)") && !strcmp(names[3], "der(y)"), "%s %s", names[2], names[3]);
}

/* every allocation of the replacement may fail: an error, nothing leaked (ASan, valgrind) */
TEST(given_states_allocation_failures)
{
    const char *s[] = {"theta", "y"};
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    lo.states = s;
    lo.nstates = 2;
    int failed = 0, ok = 0;
    for (long n = 0; n < 100000 && !ok; n++) {
        mbl_status st;
        mbl_model *md = NULL;
        mbl_alloc_fail_after(n);
        int rc = mbl_model_load_string_opt(slider, strlen(slider), "s.yaml", NULL, 0, &lo, &md, &st);
        mbl_alloc_fail_after(-1);
        if (rc == 0) ok = 1;
        else {
            CHECK_EQ_INT(rc, MBL_ENOMEM);
            failed++;
        }
        mbl_model_free(md);
    }
    CHECK(ok && failed > 10);
}

int main(void)
{
    RUN(file_states_kept_by_default);
    RUN(given_states_replace_the_file);
    RUN(given_states_errors);
    RUN(given_velocity_states);
    RUN(given_states_allocation_failures);
    return test_summary("load_states");
}
