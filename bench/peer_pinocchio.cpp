/* The Pinocchio peer of bench/robot_peers.py (issue 69): the analytic derivatives of forward
 * dynamics, computeABADerivatives (Carpentier and Mansard 2018), on a URDF robot, timed as
 * bench_relin times mblin's re-linearization: the same two points alternating (the configuration of
 * the file's zero joint angles, and the same with the first coordinate moved by 1e-3; zero
 * velocities and efforts), batches of BATCH calls, the first a warm-up, the median per call on the
 * process's CPU clock. With --outputs each call also forms the end-effector frame's Jacobian
 * (computeFrameJacobian of the last link, LOCAL_WORLD_ALIGNED: the pose outputs' rows of C), the
 * work of mblin's end-effector outputs. With --dump FILE it writes, after timing, d qdd / d q and
 * d qdd / d v at the first point (rows, %.17g) for the accuracy check of bench/robot_peers.py;
 * --at FILE takes that point's q and v from the first two lines of FILE (nv numbers each: the
 * 40-digit references tests/lin/data/chain*_P1.txt of test_tree_accuracy, unzipped; q as the joints'
 * angles, the configuration integrated from the neutral one), with the
 * joints' damping as the effort tau = -c v (the ABA leaves the URDF's damping out).
 *
 * Built by bench/robot_peers.py (never by the library's build): Pinocchio's algorithms are header
 * templates; only its URDF reader is compiled, against Debian's liburdfdom-dev.
 * usage: peer_pinocchio URDF [REPEATS [BATCH]] [--outputs] [--dump FILE [--at FILE]] */
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/multibody/data.hpp>
#include <pinocchio/multibody/model.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

static double cpu_now()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: peer_pinocchio URDF [REPEATS [BATCH]] [--outputs] [--dump FILE [--at FILE]]\n");
        return 2;
    }
    int repeats = 2000, batch = 100, pos = 0, outputs = 0;
    const char *dump = nullptr, *at = nullptr;
    for (int a = 2; a < argc; a++) {
        if (!std::strcmp(argv[a], "--outputs")) outputs = 1;
        else if (!std::strcmp(argv[a], "--dump") && a + 1 < argc) dump = argv[++a];
        else if (!std::strcmp(argv[a], "--at") && a + 1 < argc) at = argv[++a];
        else if (pos == 0) repeats = std::atoi(argv[a]), pos++;
        else batch = std::atoi(argv[a]), pos++;
    }
    if (batch < 1) batch = 1;
    int nb = std::max(2, repeats / batch);
    pinocchio::Model model;
    try {
        pinocchio::urdf::buildModel(std::string(argv[1]), model);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "peer_pinocchio: %s\n", e.what());
        return 1;
    }
    pinocchio::Data data(model);
    /* the end effector: the last link's body frame */
    pinocchio::FrameIndex ee = 0;
    for (pinocchio::FrameIndex f = 0; f < (pinocchio::FrameIndex)model.nframes; f++)
        if (model.frames[f].type == pinocchio::BODY) ee = f;
    Eigen::VectorXd q[2] = {pinocchio::neutral(model), pinocchio::neutral(model)};
    q[1][0] += 1e-3;
    Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv), tau = Eigen::VectorXd::Zero(model.nv);
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, model.nv);
    std::vector<double> t(nb);
    for (int b = -1; b < nb; b++) {
        double t0 = cpu_now();
        for (int i = 0; i < batch; i++) {
            const Eigen::VectorXd &qi = q[i & 1];
            pinocchio::computeABADerivatives(model, data, qi, v, tau);
            if (outputs) {
                /* the ABA's forward pass left the joints' placements; the frame's Jacobian from them */
                pinocchio::updateFramePlacement(model, data, ee);
                pinocchio::computeFrameJacobian(model, data, qi, ee, pinocchio::LOCAL_WORLD_ALIGNED, J);
            }
        }
        if (b >= 0) t[b] = (cpu_now() - t0) / batch;
    }
    std::sort(t.begin(), t.end());
    std::printf("pinocchio computeABADerivatives%s of %s (nv = %d): median %.2f us, min %.2f us, max %.2f us over %d "
                "batches of %d\n",
                outputs ? " + frame Jacobian" : "", argv[1], (int)model.nv, 1e6 * t[nb / 2], 1e6 * t[0],
                1e6 * t[nb - 1], nb, batch);
    if (dump) {
        Eigen::VectorXd q0 = q[0], v0 = v;
        if (at) { /* q, then v, as lines of numbers (a reference file's first two lines) */
            FILE *in = std::fopen(at, "r");
            int ok = in != nullptr;
            Eigen::VectorXd angle(model.nv); /* a continuous joint's q is (cos, sin): from the angle */
            for (int i = 0; ok && i < model.nv; i++) ok = std::fscanf(in, "%lf", &angle[i]) == 1;
            if (ok) q0 = pinocchio::integrate(model, pinocchio::neutral(model), angle);
            for (int i = 0; ok && i < model.nv; i++) ok = std::fscanf(in, "%lf", &v0[i]) == 1;
            if (in) std::fclose(in);
            if (!ok) {
                std::fprintf(stderr, "peer_pinocchio: cannot read %d values of q and of v from %s\n", (int)model.nv, at);
                return 1;
            }
        }
        /* the joints' viscous damping (the URDF's <dynamics damping>, which the ABA leaves out) as
         * the effort: tau = -c v, whose d/dq through M^-1 is in d qdd/dq where v is not zero */
        Eigen::VectorXd tau0 = -model.damping.cwiseProduct(v0);
        pinocchio::computeABADerivatives(model, data, q0, v0, tau0);
        FILE *f = std::fopen(dump, "w");
        if (!f) {
            std::fprintf(stderr, "peer_pinocchio: cannot write %s\n", dump);
            return 1;
        }
        for (int i = 0; i < model.nv; i++) {
            for (int j = 0; j < model.nv; j++) std::fprintf(f, "%s%.17g", j ? " " : "", data.ddq_dq(i, j));
            for (int j = 0; j < model.nv; j++) std::fprintf(f, " %.17g", data.ddq_dv(i, j));
            std::fprintf(f, "\n");
        }
        std::fclose(f);
    }
    return 0;
}
