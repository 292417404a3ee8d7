/* Spanning tree and numeric recursive kinematics (src/mech/tree.c) against source 003
 * Sec. 3.2.4 (Eq. 3.37-3.44 with the erratum of Eq. 3.43), closed forms and central differences. */
#include <string.h>

#include "mech/tree.h"
#include "test.h"

static void rot_zx(const double z[3], const double x[3], double R[9]) /* columns x, y = z x x, z */
{
    R[0] = x[0], R[1] = x[1], R[2] = x[2];
    R[3] = z[1] * x[2] - z[2] * x[1], R[4] = z[2] * x[0] - z[0] * x[2], R[5] = z[0] * x[1] - z[1] * x[0];
    R[6] = z[0], R[7] = z[1], R[8] = z[2];
}

TEST(span_fourbar_and_floating)
{
    /* bodies: 0 ground, 1 rocker2, 2 coupler, 3 rocker4, 4 a free body on a bushing (no joint),
     * 5 a body held to 4 by a revolute; joints (i body, j body): hinge2, hinge4, cross, ball, pin */
    int jb[] = {1, 0, 3, 0, 2, 1, 2, 3, 5, 4};
    int cand[] = {1, 1, 1, 1, 1};
    int parent[6], tj[6], ci[6], order[6], cut[5];
    CHECK_EQ_INT(mech_tree_span(6, 5, jb, cand, parent, tj, ci, order, cut), 0);
    CHECK_EQ_INT(parent[1], 0);
    CHECK_EQ_INT(parent[3], 0);
    CHECK_EQ_INT(parent[2], 1);
    CHECK_EQ_INT(tj[2], 2);
    CHECK_EQ_INT(ci[2], 1); /* the coupler is cross's marker-i side */
    CHECK_EQ_INT(cut[0] + cut[1] + cut[2], 0);
    CHECK_EQ_INT(cut[3], 1); /* the ball joint closes the loop */
    CHECK_EQ_INT(parent[4], -1);
    CHECK_EQ_INT(tj[4], -1);
    CHECK_EQ_INT(parent[5], 4);
    CHECK_EQ_INT(ci[5], 1);
    CHECK_EQ_INT(cut[4], 0);
    int pos[6];
    for (int k = 0; k < 6; k++) pos[order[k]] = k;
    for (int b = 1; b < 6; b++)
        if (parent[b] >= 0) CHECK(pos[parent[b]] < pos[b]);
    /* naming the ball joint's neighbour as a cut: cross is not a candidate, so the coupler hangs
     * from rocker4 through the ball and cross closes the loop */
    cand[2] = 0;
    CHECK_EQ_INT(mech_tree_span(6, 5, jb, cand, parent, tj, ci, order, cut), 0);
    CHECK_EQ_INT(parent[2], 3);
    CHECK_EQ_INT(cut[2], 1);
    CHECK_EQ_INT(cut[3], 0);
    CHECK_EQ_INT(ci[2], 1);
    /* bad input */
    int self[] = {1, 1};
    CHECK(mech_tree_span(2, 1, self, cand, parent, tj, ci, order, cut) < 0);
    int range[] = {1, 7};
    CHECK(mech_tree_span(2, 1, range, cand, parent, tj, ci, order, cut) < 0);
}

/* Source 003 Fig. 3.4: slider (m2) along global y on a spring k, pendulum (m3, length l, j3x about
 * its centre) on a revolute about global x, hanging along -z. */
static void slider_pendulum(mbl_tree_link L[2], double l)
{
    memset(L, 0, 2 * sizeof *L);
    const double y[3] = {0, 1, 0}, z[3] = {0, 0, 1}, x[3] = {1, 0, 0};
    L[0].parent = -1;
    L[0].type = MBL_TREE_PRISMATIC;
    rot_zx(y, z, L[0].Rp);
    rot_zx(y, z, L[0].Rc);
    L[1].parent = 0;
    L[1].type = MBL_TREE_REVOLUTE;
    rot_zx(x, y, L[1].Rp);
    rot_zx(x, y, L[1].Rc);
    L[1].pc[2] = l / 2; /* the pin, in the pendulum's axes (origin at its centre of mass) */
}

TEST(slider_pendulum_B_dB_M_K)
{
    const double m2 = 10, m3 = 20, l = 2, j3 = 15, k = 20, g = 9.81;
    mbl_tree_link L[2];
    slider_pendulum(L, l);
    double q[2] = {0, 0}, B[12 * 2], dB[12 * 2 * 2], ws[24];
    CHECK_EQ_INT(mech_tree_B(2, L, q, B, dB, ws), 0);
    /* Eq. 3.38: B^T = [u2 0 | u2 0; 0 0 | u3 x d33, u3] with u2 = y, u3 = x, d33 = (0, 0, -l/2) */
    const double BT[2][12] = {{0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, l / 2, 0, 1, 0, 0}};
    for (int c = 0; c < 2; c++)
        for (int r = 0; r < 12; r++) CHECK_CLOSE(B[12 * c + r], BT[c][r], 1e-15);
    /* Eq. 3.43 with the erratum: dB^T/dq1 = 0; dB^T/dq2 has its single 1 (l/2) in column 9 (v_z of
     * the pendulum), not column 8 */
    for (int i = 0; i < 24; i++) CHECK_CLOSE(dB[i], 0, 1e-15);
    for (int c = 0; c < 2; c++)
        for (int r = 0; r < 12; r++) CHECK_CLOSE(dB[24 + 12 * c + r], (c == 1 && r == 8) ? l / 2 : 0.0, 1e-15);
    /* Eq. 3.39, 3.8: M_l = B^T M B = [30 20; 20 35] */
    const double Md[12] = {m2, m2, m2, 1, 1, 1, m3, m3, m3, j3, j3, j3};
    double Ml[4] = {0}, Kl[4] = {0};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int r = 0; r < 12; r++) Ml[a + 2 * b] += B[12 * a + r] * Md[r] * B[12 * b + r];
    CHECK_CLOSE(Ml[0], 30, 1e-14);
    CHECK_CLOSE(Ml[2], 20, 1e-14);
    CHECK_CLOSE(Ml[1], 20, 1e-14);
    CHECK_CLOSE(Ml[3], 35, 1e-14);
    /* Eq. 3.40, 3.44, 3.10: f = [0 -k y -m2 g 0 0 0 | 0 0 -m3 g 0 0 0], df/dq1 = -k in row 2;
     * K[:, m] = -(dB_m^T f + B^T df/dq_m) = diag(20, 196.2) (Eq. 3.37) */
    const double f[12] = {0, -k * q[0], -m2 * g, 0, 0, 0, 0, 0, -m3 * g, 0, 0, 0};
    double dfdq[2][12] = {{0}};
    dfdq[0][1] = -k;
    for (int a = 0; a < 2; a++)
        for (int m = 0; m < 2; m++) {
            double s = 0;
            for (int r = 0; r < 12; r++) s += dB[24 * m + 12 * a + r] * f[r] + B[12 * a + r] * dfdq[m][r];
            Kl[a + 2 * m] = -s;
        }
    CHECK_CLOSE(Kl[0], 20, 1e-14);
    CHECK_CLOSE(Kl[1], 0, 1e-14);
    CHECK_CLOSE(Kl[2], 0, 1e-14);
    CHECK_CLOSE(Kl[3], 196.2, 1e-13);
    /* Table 3.5: omega^2 from det(K - w2 M) = 0 */
    double a = Ml[0] * Ml[3] - Ml[1] * Ml[2], b = -(Kl[0] * Ml[3] + Kl[3] * Ml[0] - Kl[1] * Ml[2] - Kl[2] * Ml[1]),
           c = Kl[0] * Kl[3] - Kl[1] * Kl[2];
    double w1 = (-b - sqrt(b * b - 4 * a * c)) / (2 * a), w2 = (-b + sqrt(b * b - 4 * a * c)) / (2 * a);
    CHECK_CLOSE(w1, 0.63569205, 1e-8);
    CHECK_CLOSE(w2, 9.49661564, 1e-8);
}

TEST(double_pendulum_mass_matrix_closed_form)
{
    /* planar double pendulum about global z, rods hanging along -y: link 1 length L1, cm at a1
     * below its pin; link 2 pinned at the end of link 1, cm a2 below its pin */
    const double m1 = 2, m2 = 3, I1 = 0.4, I2 = 0.7, L1 = 1.3, a1 = 0.5, a2 = 0.8;
    mbl_tree_link L[2];
    memset(L, 0, sizeof L);
    const double z[3] = {0, 0, 1}, x[3] = {1, 0, 0};
    for (int b = 0; b < 2; b++) {
        L[b].parent = b - 1;
        L[b].type = MBL_TREE_REVOLUTE;
        rot_zx(z, x, L[b].Rp);
        rot_zx(z, x, L[b].Rc);
    }
    L[0].cm[1] = -a1;
    L[1].pp[1] = -L1;
    L[1].cm[1] = -a2;
    for (double q2 = -1.0; q2 <= 2.0; q2 += 0.75) {
        double q[2] = {0.3, q2}, B[24], ws[24];
        CHECK_EQ_INT(mech_tree_B(2, L, q, B, NULL, ws), 0);
        const double Md[12] = {m1, m1, m1, 1, 1, I1, m2, m2, m2, 1, 1, I2};
        double M[4] = {0};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (int r = 0; r < 12; r++) M[i + 2 * j] += B[12 * i + r] * Md[r] * B[12 * j + r];
        double cq = cos(q2);
        CHECK_CLOSE(M[0], I1 + m1 * a1 * a1 + I2 + m2 * (L1 * L1 + a2 * a2 + 2 * L1 * a2 * cq), 1e-14);
        CHECK_CLOSE(M[2], I2 + m2 * (a2 * a2 + L1 * a2 * cq), 1e-14);
        CHECK_CLOSE(M[1], M[2], 1e-14);
        CHECK_CLOSE(M[3], I2 + m2 * a2 * a2, 1e-14);
    }
}

/* a reproducible pseudo-random rotation (axis-angle) */
static double lcg(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / (double)(1u << 24) * 2 - 1;
}
static void rand_rot(unsigned *s, double R[9])
{
    double a[3] = {lcg(s), lcg(s), lcg(s)}, n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), t = 3 * lcg(s);
    for (int i = 0; i < 3; i++) a[i] /= n;
    double c = cos(t), sn = sin(t), K[9] = {0, a[2], -a[1], -a[2], 0, a[0], a[1], -a[0], 0};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            double KK = 0;
            for (int l = 0; l < 3; l++) KK += K[i + 3 * l] * K[l + 3 * j];
            R[i + 3 * j] = (i == j) + sn * K[i + 3 * j] + (1 - c) * KK;
        }
}

TEST(dB_against_central_differences)
{
    enum { N = 6 };
    unsigned seed = 12345u;
    mbl_tree_link L[N];
    memset(L, 0, sizeof L);
    const int par[N] = {-1, 0, 1, 1, 3, -1}, typ[N] = {0, 1, 0, 0, 1, 0};
    for (int b = 0; b < N; b++) {
        L[b].parent = par[b];
        L[b].type = typ[b];
        rand_rot(&seed, L[b].Rp);
        rand_rot(&seed, L[b].Rc);
        for (int i = 0; i < 3; i++) {
            L[b].pp[i] = lcg(&seed);
            L[b].pc[i] = lcg(&seed);
            L[b].cm[i] = lcg(&seed);
        }
    }
    double q[N], B[6 * N * N], dB[6 * N * N * N], Bp[6 * N * N], Bm[6 * N * N], ws[12 * N];
    for (int b = 0; b < N; b++) q[b] = lcg(&seed);
    CHECK_EQ_INT(mech_tree_B(N, L, q, B, dB, ws), 0);
    /* B itself: the velocity of each centre of mass by differences of the poses */
    double c0[3 * N], cp[3 * N], R0[9 * N], r0[3 * N];
    const double h = 1e-6;
    double worst = 0, worstB = 0;
    for (int m = 0; m < N; m++) {
        double qp[N], qm[N];
        memcpy(qp, q, sizeof q);
        memcpy(qm, q, sizeof q);
        qp[m] += h;
        qm[m] -= h;
        CHECK_EQ_INT(mech_tree_B(N, L, qp, Bp, NULL, ws), 0);
        CHECK_EQ_INT(mech_tree_B(N, L, qm, Bm, NULL, ws), 0);
        for (int i = 0; i < 6 * N * N; i++) {
            double d = fabs((Bp[i] - Bm[i]) / (2 * h) - dB[6 * N * N * m + i]);
            if (d > worst) worst = d;
        }
        mech_tree_poses(N, L, q, R0, r0, c0, NULL, NULL);
        mech_tree_poses(N, L, qp, R0, r0, cp, NULL, NULL);
        double cm_[3 * N];
        mech_tree_poses(N, L, qm, R0, r0, cm_, NULL, NULL);
        for (int b = 0; b < N; b++)
            for (int i = 0; i < 3; i++) {
                double d = fabs((cp[3 * b + i] - cm_[3 * b + i]) / (2 * h) - B[6 * N * m + 6 * b + i]);
                if (d > worstB) worstB = d;
            }
    }
    CHECK_MSG(worst < 1e-8, "dB vs differences: %g", worst);
    CHECK_MSG(worstB < 1e-8, "B vs differences of the centres of mass: %g", worstB);
    /* link 5 is a second root: nothing couples it to the first subtree */
    for (int b = 0; b < 5; b++)
        for (int i = 0; i < 6; i++) CHECK(B[6 * N * 5 + 6 * b + i] == 0);
}

int main(void)
{
    RUN(span_fourbar_and_floating);
    RUN(slider_pendulum_B_dB_M_K);
    RUN(double_pendulum_mass_matrix_closed_form);
    RUN(dB_against_central_differences);
    return test_summary("mech tree");
}
