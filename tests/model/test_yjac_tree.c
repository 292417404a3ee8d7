/* The outputs' Jacobian of a tree in joint coordinates (src/model/terms/rtree_y.c; issue 34, item 3):
 * the outputs differentiated at the tree's body poses (rotation, origin, Euler parameters) plus the
 * closed-form derivatives of the poses. Checked against
 *  - the same outputs differentiated through the whole chain of rotations (mblx_gradient of the
 *    output expressions with respect to every unknown, the route the model took before), at points
 *    with every coordinate moved and nonzero velocities, to YJAC_TOL of the Jacobian's largest entry:
 *    URDF chains, the examples' arms, a 30-joint humanoid tree and a branched YAML tree with a
 *    prismatic, a fixed and a flipped revolute joint, turned and offset markers and outputs of
 *    poses relative to another body, velocities and a nonlinear combination;
 *  - the closed form of a planar two-link arm's end-effector Jacobian (C of the linear model);
 *  - the evaluator of the Jacobian with the outputs (model_eval_jac_y: the tree's kinematics
 *    computed natively, the outputs, their entries' direct parts and the bodies' wrenches by a tape
 *    over stand-ins for the bodies' poses, the entries' chain parts S_j . Phi natively from the
 *    joints' axes, rtree_kin.c; the Euler parameters of a body read through functions even in them
 *    from its rotation matrix): the values apart from md->tape_y's to rounding, and the same
 *    Jacobian bit for bit whether the outputs are wanted or not;
 *  - its size: the outputs' Jacobian costs O(1) tape instructions per entry on top of the outputs
 *    themselves (differentiated through the chain it cost about 100 per entry on the 20-link chain). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "model/terms/rtree_num.h"
#include "test.h"
#include "fixture.h"

#define YJAC_TOL 1e-12

/* the reference: dy/d[unknowns] through the chain, compiled; values at syms into ref (md->yjac's
 * pattern), and the entries of the reference outside that pattern into *outside (max |value|) */
static void reference(mbl_model *md, const double *syms, double *ref, double *outside)
{
    int nu = md->nunk, ny = md->ny;
    mblx_id *sy = malloc(sizeof *sy * (size_t)nu), *gr = malloc(sizeof *gr * (size_t)nu * (size_t)ny);
    for (int j = 0; j < nu; j++) sy[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    for (int i = 0; i < ny; i++) CHECK_EQ_INT(mblx_gradient(md->g, md->y[i], (size_t)nu, sy, gr + (size_t)i * nu), 0);
    mbl_status st;
    mblx_tape *t = mblx_compile(md->g, (size_t)nu * ny, gr, &st);
    CHECK(t != NULL);
    double *val = malloc(sizeof *val * (size_t)nu * (size_t)ny), *work = malloc(sizeof *work * (mblx_tape_work_size(t) + 1));
    CHECK_EQ_INT(mblx_tape_eval(t, syms, val, work, &st), 0);
    for (int p = 0; p < md->yjac.nz; p++) {
        size_t e = (size_t)md->yjac.row[p] * nu + (size_t)md->yjac.col[p];
        ref[p] = val[e];
        val[e] = 0;
    }
    *outside = 0;
    for (size_t e = 0; e < (size_t)nu * ny; e++) *outside = fmax(*outside, fabs(val[e]));
    mblx_tape_free(t);
    free(sy), free(gr), free(val), free(work);
}

static double g_worst;

/* the model's outputs' Jacobian against the reference at its point and at two moved ones */
static void check_model(const char *name, mbl_model *md, double dq, double vq)
{
    mbl_status st;
    mbl_point *p0 = NULL;
    CHECK(md->rtn != NULL);
    int ok = mbl_operating_point(md, NULL, &p0, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", name, st.msg);
    CHECK(ok);
    if (!ok) return;
    /* a spatial tree's kinematics natively, the outputs' tape over their stand-ins (rtree_y.c) */
    CHECK(md->rtn && md->rtn->kin && md->rtn->yst);
    int n = md->n;
    double *q = malloc(sizeof *q * 2 * (size_t)n), *v = q + n;
    double *syms = calloc((size_t)md->nsym + 1, sizeof *syms), *work = malloc(sizeof *work * (md->work_size + 1));
    double *y = malloc(sizeof *y * ((size_t)md->ny + (size_t)md->yjac.nz + 1)), *ref = malloc(sizeof *ref * ((size_t)md->yjac.nz + 1));
    for (int k = 0; k < 3; k++) {
        mbl_point *pt = NULL;
        for (int i = 0; i < n; i++) {
            double s = (i % 2 ? -1.0 : 1.0) * (1.0 + 0.37 * i / n) * (k == 2 ? -0.5 : 1.0);
            q[i] = p0->q[i] + (k ? dq * s : 0.0);
            v[i] = k ? vq * s * (1 + (i % 3)) : 0.0;
        }
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        po.at = MBL_AT_GIVEN;
        po.q = q;
        po.v = v;
        CHECK_EQ_INT(mbl_operating_point(md, &po, &pt, &st), 0);
        if (!pt) continue;
        model_fill_syms_pt(md, pt, syms);
        CHECK_EQ_INT(mblx_tape_eval(md->tape_y, syms, y, work, &st), 0);
        /* the texts and the outputs in one tape (model_eval_jac_y): the values of the two tapes
         * apart to rounding, and the same Jacobian whether the outputs are wanted or not */
        size_t nyv = (size_t)md->ny + (size_t)md->yjac.nz, nj = (size_t)md->jac.nz;
        double *y2 = malloc(sizeof *y2 * (nyv + 1)), *j1 = malloc(sizeof *j1 * (3 * nj + 1)), *j2 = j1 + nj, *j3 = j2 + nj;
        CHECK_EQ_INT(model_eval_jac(md, syms, j1, work, &st), 0);
        CHECK_EQ_INT(model_eval_jac_y(md, syms, j2, y2, work, &st), 0);
        CHECK_EQ_INT(model_eval_jac_y(md, syms, j3, NULL, work, &st), 0);
        CHECK(memcmp(j2, j3, nj * sizeof *j2) == 0);
        double dj = 0, sj = 0, dy = 0, sy = 0;
        for (size_t e = 0; e < nj; e++) dj = fmax(dj, fabs(j1[e] - j2[e])), sj = fmax(sj, fabs(j1[e]));
        for (size_t e = 0; e < nyv; e++) dy = fmax(dy, fabs(y[e] - y2[e])), sy = fmax(sy, fabs(y[e]));
        CHECK(dj <= 1e-14 * sj && dy <= 1e-14 * sy);
        free(y2), free(j1);
        double outside = 0, big = 0, d = 0;
        reference(md, syms, ref, &outside);
        for (int p = 0; p < md->yjac.nz; p++) big = fmax(big, fabs(ref[p])), d = fmax(d, fabs(y[md->ny + p] - ref[p]));
        double r = big > 0 ? fmax(d, outside) / big : fmax(d, outside);
        g_worst = fmax(g_worst, r);
        if (getenv("YJAC_VERBOSE")) fprintf(stderr, "%s point %d: %d entries, difference %.3g of %.3g\n", name, k, md->yjac.nz, r, big);
        if (!(r <= YJAC_TOL)) fprintf(stderr, "%s point %d: the outputs' Jacobian differs by %.3g of its largest entry\n", name, k, r);
        CHECK(r <= YJAC_TOL);
        mbl_point_free(pt);
    }
    free(q), free(syms), free(work), free(y), free(ref);
    mbl_point_free(p0);
}

static void check_file(const char *path, double dq, double vq)
{
    mbl_status st;
    mbl_model *md = NULL;
    int ok = mbl_model_load_file(path, NULL, 0, &md, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", path, st.msg);
    CHECK(ok);
    if (ok) check_model(path, md, dq, vq);
    mbl_model_free(md);
}

/* the N-link spatial chain of bench/chain_urdf.py */
static mbl_model *chain(int N)
{
    size_t len = 0;
    char name[32], *s = fixture_urdf_chain(N, &len, name);
    CHECK(s != NULL);
    if (!s) return NULL;
    mbl_status st;
    mbl_model *md = NULL;
    int ok = mbl_model_load_string(s, len, name, NULL, 0, &md, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", name, st.msg);
    CHECK(ok);
    free(s);
    return md;
}

TEST(against_the_chain_rule_through_the_rotations)
{
    for (int N = 1; N <= 20; N += N < 3 ? 1 : 17) {
        mbl_model *md = chain(N);
        /* the end effector's pose: its entries' chain parts natively (pairs of a joint and a wrench) */
        if (md) CHECK(md->rtn && md->rtn->nyc > 0 && md->rtn->nphi > 0);
        /* its AX .. AZ read the last body's Euler parameters through even functions alone: these
         * from its rotation matrix, no body's by the chain of products */
        if (md && md->rtn && md->rtn->eneed) {
            int nb = md->rtn->tree.nb, chained = 0;
            for (int b = 0; b < nb; b++) chained += md->rtn->eneed[b] == 1;
            CHECK(chained == 0 && (N < 20 || md->rtn->eneed[nb - 1] == 2));
        }
        if (md) check_model("chain", md, 0.3, 0.5);
        mbl_model_free(md);
    }
    check_file("examples/urdf/two_link_arm.urdf", 0.3, 0.5);
    check_file("examples/urdf/acrobot.urdf", 0.3, 0.5);
    check_file("examples/urdf/arm7.urdf", 0.2, 0.5);
    check_file("tests/lin/humanoid30.urdf", 0.15, 0.4);
    check_file("tests/model/tree_outputs.yaml", 0.3, 0.6);
}

/* A planar arm in the x-z plane (joints about y, links l1 = 0.7 and l2 = 0.4 along -z, the tool
 * frame at the tip on a fixed joint): ee = (-l1 s1 - l2 s12, 0, -l1 c1 - l2 c12), AY = sin(q1 + q2),
 * AX = AZ = 0, so the rows of C of (ee_x, ee_z, ee_ay) are
 *   [-l1 c1 - l2 c12, -l2 c12], [l1 s1 + l2 s12, l2 s12], [c12, c12]  (q columns; 0 on the rates). */
TEST(planar_arm_closed_form)
{
    static const char text[] =
        "<?xml version=\"1.0\"?>\n<robot name=\"arm2\">\n  <link name=\"base\"/>\n"
        "  <link name=\"l1\"><inertial><origin xyz=\"0 0 -0.35\"/><mass value=\"1\"/><inertia ixx=\"0.04\" iyy=\"0.04\" "
        "izz=\"0.001\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
        "  <link name=\"l2\"><inertial><origin xyz=\"0 0 -0.2\"/><mass value=\"0.5\"/><inertia ixx=\"0.007\" iyy=\"0.007\" "
        "izz=\"0.001\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
        "  <link name=\"tool\"/>\n"
        "  <joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/><child link=\"l1\"/><axis xyz=\"0 1 0\"/></joint>\n"
        "  <joint name=\"j2\" type=\"continuous\"><parent link=\"l1\"/><child link=\"l2\"/><origin xyz=\"0 0 -0.7\"/>"
        "<axis xyz=\"0 1 0\"/></joint>\n"
        "  <joint name=\"tip\" type=\"fixed\"><parent link=\"l2\"/><child link=\"tool\"/><origin xyz=\"0 0 -0.4\"/></joint>\n"
        "</robot>\n";
    const double l1 = 0.7, l2 = 0.4;
    mbl_status st;
    mbl_model *md = NULL;
    int ok = mbl_model_load_string(text, sizeof text - 1, "arm2.urdf", NULL, 0, &md, &st) == 0;
    if (!ok) fprintf(stderr, "arm2.urdf: %s\n", st.msg);
    CHECK(ok);
    if (!ok) return;
    CHECK_EQ_INT(md->ny, 8); /* q_j1, q_j2, ee_x .. ee_az */
    const double pts[3][4] = {{0.3, -1.1, 0.4, -0.7}, {2.0, 0.9, -1.0, 0.2}, {-0.6, 2.5, 0, 0}};
    for (int k = 0; k < 3; k++) {
        mbl_point *pt = NULL;
        mbl_linear *lin = NULL;
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        po.at = MBL_AT_GIVEN;
        po.q = pts[k];
        po.v = pts[k] + 2;
        CHECK_EQ_INT(mbl_operating_point(md, &po, &pt, &st), 0);
        CHECK_EQ_INT(mbl_linearize(md, pt, NULL, &lin, &st), 0);
        if (!lin) {
            mbl_point_free(pt);
            continue;
        }
        double q1 = pts[k][0], q12 = pts[k][0] + pts[k][1];
        double want[3][2] = {{-l1 * cos(q1) - l2 * cos(q12), -l2 * cos(q12)},
                             {l1 * sin(q1) + l2 * sin(q12), l2 * sin(q12)},
                             {cos(q12), cos(q12)}};
        const int row[3] = {2, 4, 6};
        int ny = lin->ny;
        CHECK_EQ_INT(lin->nx, 4);
        for (int r = 0; r < 3; r++)
            for (int j = 0; j < 4; j++) {
                double c = lin->C[row[r] + (size_t)j * ny], w = j < 2 ? want[r][j] : 0.0;
                CHECK_CLOSE(c, w, 1e-14);
            }
        for (int j = 0; j < 4; j++) { /* ee_y, ee_ax, ee_az */
            CHECK_CLOSE(lin->C[3 + (size_t)j * ny], 0.0, 1e-14);
            CHECK_CLOSE(lin->C[5 + (size_t)j * ny], 0.0, 1e-14);
            CHECK_CLOSE(lin->C[7 + (size_t)j * ny], 0.0, 1e-14);
        }
        mbl_linear_free(lin);
        mbl_point_free(pt);
    }
    mbl_model_free(md);
}

/* The outputs' tape: the outputs, then O(1) instructions per Jacobian entry (the 20-link chain:
 * about 8 on top of the outputs' own 1,663; through the chain of rotations it was about 100). */
TEST(tape_size)
{
    mbl_model *md = chain(20);
    if (!md) return;
    mbl_status st;
    mblx_tape *t = mblx_compile(md->g, (size_t)md->ny, md->y, &st);
    CHECK(t != NULL);
    double per = ((double)mblx_tape_ninstr(md->tape_y) - (double)mblx_tape_ninstr(t)) / md->yjac.nz;
    if (getenv("YJAC_VERBOSE"))
        fprintf(stderr, "chain20: outputs %zu instructions, with the Jacobian %zu (%d entries): %.1f per entry\n",
                mblx_tape_ninstr(t), mblx_tape_ninstr(md->tape_y), md->yjac.nz, per);
    CHECK(per <= 20.0);
    mblx_tape_free(t);
    mbl_model_free(md);
}

int main(void)
{
    RUN(against_the_chain_rule_through_the_rotations);
    RUN(planar_arm_closed_form);
    RUN(tape_size);
    if (getenv("YJAC_VERBOSE")) fprintf(stderr, "largest difference %.3g\n", g_worst);
    return test_summary("yjac_tree");
}
