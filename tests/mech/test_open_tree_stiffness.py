"""The open tree's stiffness K_l of a relative-coordinate mechanism (source 003 Sec. 3.2.2, Eq. 3.9-3.10;
issue 70, item 7): `linearize -o DIR` writes it as K_l.mtx beside the velocity transformation.
Usage: test_open_tree_stiffness.py MBLIN (run from the source root).

slider_pendulum: examples/mech/slider_pendulum_relative.yaml, a tree without cut joints: K_l =
diag(k, m3 g l / 2) = diag(20, 196.2), Eq. 3.37.

spatial_fourbar: examples/mech/spatial_fourbar_relative.yaml, the loop closed by a cut spherical
joint: K_l is the tree's alone, Eq. 4.18's K_I = diag(147.15, 0, 0, 49.05), and with Eq. 4.19's Q2
Table 4.1's Q2^T K_I Q2 = 65.4. The control: the full dR/dq at the point (the descriptor pencil's, with the cut joint's
d(Phi_q^T lambda)/dq, Eq. 4.7) is diag(98.1, 0, 0, 98.1), not K_l."""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
# relative agreement with the printed numbers (196.2, 147.15, 65.4: exact in their digits; the
# computation is exact to rounding)
TOL = 1e-9


def mtx(path):
    rows = [ln for ln in open(path) if not ln.startswith("%")]
    r, c = map(int, rows[0].split()[:2])
    return np.array([float(x) for x in rows[1:1 + r * c]]).reshape(c, r).T


def export(model, *extra):
    out = tempfile.mkdtemp(prefix="mblin_kl_")
    p = subprocess.run([MBLIN, "linearize", model, "-o", out, *extra], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "linearize %s -o: %s" % (model, p.stderr.strip()))
    return out


d = export("examples/mech/slider_pendulum_relative.yaml")
if check(os.path.exists(os.path.join(d, "K_l.mtx")), "slider_pendulum: K_l.mtx written"):
    K = mtx(os.path.join(d, "K_l.mtx"))
    check(np.allclose(K, np.diag([20.0, 196.2]), rtol=0, atol=TOL * 196.2),
          "slider_pendulum: K_l = diag(20, 196.2) (Eq. 3.37): %s" % K.tolist())

d = export("examples/mech/spatial_fourbar_relative.yaml")
if check(os.path.exists(os.path.join(d, "K_l.mtx")), "spatial_fourbar: K_l.mtx written"):
    K = mtx(os.path.join(d, "K_l.mtx"))
    check(np.allclose(K, np.diag([147.15, 0, 0, 49.05]), rtol=0, atol=TOL * 147.15),
          "spatial_fourbar: K_l = K_I = diag(147.15, 0, 0, 49.05) (Eq. 4.18): %s" % K.tolist())
    Q2 = np.array([0.57735027, -0.57735027, 0.0, 0.57735027])
    Q2 /= np.linalg.norm(Q2)
    check(abs(Q2 @ K @ Q2 - 65.4) <= TOL * 65.4, "spatial_fourbar: Q2^T K_I Q2 = 65.4 (Table 4.1): %.12g" % (Q2 @ K @ Q2))
    dd = export("examples/mech/spatial_fourbar_relative.yaml", "--method", "descriptor")
    Ad = mtx(os.path.join(dd, "Ad.mtx"))
    n = 4
    Kfull = -Ad[n:2 * n, 0:n]  # the pencil's velocity rows: v' = ... - dR/dq dq (E = [I 0 0; 0 M ...])
    check(np.allclose(Kfull, np.diag([98.1, 0, 0, 98.1]), rtol=0, atol=TOL * 98.1)
          and np.abs(Kfull - K).max() > 1.0,
          "spatial_fourbar: the control: dR/dq with the cut joint's multipliers %s differs from K_l" % Kfull.tolist())
# a model in absolute coordinates: no velocity transformation, no K_l.mtx
d = export("examples/slider_pendulum.yaml")
check(not os.path.exists(os.path.join(d, "K_l.mtx")), "absolute coordinates: no K_l.mtx")

sys.exit(finish("test_open_tree_stiffness"))
