#!/usr/bin/env python3
"""Floquet mode shapes against NumPy (issue 36, "silent wrong answers": dgeev shapes).

The multipliers' eigenvectors come from dgeev on the monodromy matrix Phi. dgeev's scaling
balancer spoils the eigenvectors of a matrix with entries at the rounding level of zero ones (the
mechanism single-track car's A: backward errors 0.06; docs/linearization.md, "dgeev's scaling
balancer"); src/study/floquet.c now goes through src/eig's eig_dgeev, which solves again with the
permutation only where a pair's backward error exceeds 1e-12. For every Floquet example here
(tests/study/floquet, the time-invariant examples of floquet_test.py, and non-holonomic bicycles
and discs whose Phi has entries down to 1e-31):

- each multiplier's `backward_error` in `mblin floquet --json` is <= 1e-12 and equals the one
  computed here with NumPy, ||Phi v - mu v|| / (||Phi||_F ||v||), v the shape at t0;
- each simple multiplier's shape at t0 is the unit null vector of Phi - mu I found here by NumPy's
  SVD (no balancing), to 1e-7 plus 100 eps ||Phi|| / gap, up to a complex factor.

    floquet_shapes_test.py MBLIN   (from the project root; needs numpy)
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
D = "tests/study/floquet/"
CASES = [
    (D + "mathieu.yaml", ["--period", "pi", "--set", "delta=1.2", "--set", "eps=0.3"]),
    (D + "mathieu.yaml", ["--period", "pi", "--set", "delta=1", "--set", "eps=0.2"]),
    (D + "damped_mathieu.yaml", ["--period", "pi"]),
    (D + "kapitza.yaml", ["--param", "w"]),
    (D + "kapitza_driven.yaml", ["--param", "w"]),
    (D + "duffing.yaml", ["--param", "w", "--shoot", "--set", "c=0.4"]),
    (D + "forced_pendulum.yaml", ["--param", "w", "--shoot"]),
    (D + "forced_pendulum_xy.yaml", ["--param", "w", "--shoot"]),
    (D + "coleman3.yaml", ["--param", "Omega"]),
    (D + "coleman4.yaml", ["--param", "Omega"]),
    ("examples/slider_pendulum.yaml", ["--set", "c=20", "--period", "0.5"]),
    ("examples/fourbar_N1_damped.yaml", ["--period", "0.7"]),
    ("examples/rotating_pendulum_steady.yaml", ["--period", "0.3"]),
    ("examples/flexible_pendulum_np5.yaml", ["--period", "0.1"]),
    # its given orbit is no periodic one (the wheels' Euler parameters, extrapolated linearly, leave the
    # motion: A(t + T) differs from A(t) by 1.4 of its largest entry), so --period-tol lets it through:
    # only its monodromy matrix, with entries down to 1e-31, matters here
    ("examples/mech/whipple_bicycle.yaml", ["--period", "0.5", "--period-tol", "10"]),
    ("examples/rolling_disc_speeds.yaml", ["--period", "0.5"]),
    ("tests/model/bicycle_like_speeds.yaml", ["--period", "0.5"]),
]
BERR_TOL = 1e-12   # every multiplier's backward error
BERR_AGREE = 1e-15  # mblin's and NumPy's backward errors: the same quantity, summed differently
SHAPE_TOL = 1e-7   # shape against NumPy's null vector (unit norm), up to a complex factor
NONNORMAL = 100.0  # times eps ||Phi||_2 / gap, the first-order error of an eigenvector
GAP = 1e-6         # a multiplier within GAP max|mu| of another is not simple: no unique shape


def shape_distance(x, y):
    """min over complex c of ||x - c y|| for unit x, y"""
    c = np.vdot(y, x)
    return np.linalg.norm(x - c * y)


def main():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    worst = 0.0
    for model, args in CASES:
        what = model + " " + " ".join(args)
        p = subprocess.run([MBLIN, "floquet", model] + args + ["--json"], capture_output=True, text=True, env=env)
        if not check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, p.stderr.strip())):
            continue
        d = json.loads(p.stdout)
        P = np.array(d["monodromy"], dtype=float)
        nP, nP2 = np.linalg.norm(P), np.linalg.norm(P, 2)
        mus = np.array([m["re"] + 1j * m["im"] for m in d["multipliers"]])
        big = max(abs(mus))
        for k, m in enumerate(d["multipliers"]):
            s = d["shapes"][0]["modes"][k]
            v = np.array(s["re"]) + 1j * np.array(s["im"])
            mu = mus[k]
            rep = m.get("backward_error", float("nan"))  # absent before the field existed
            what_k = "%s: multiplier %.6g%+.6gi" % (what, mu.real, mu.imag)
            b = np.linalg.norm(P @ v - mu * v) / (nP * np.linalg.norm(v))
            worst = max(worst, b)
            check(rep <= BERR_TOL, "%s: reported backward error %.3g > %g" % (what_k, rep, BERR_TOL))
            check(b <= BERR_TOL, "%s: backward error %.3g > %g" % (what_k, b, BERR_TOL))
            check(abs(rep - b) <= BERR_AGREE, "%s: reported backward error %.3g, NumPy's %.3g" % (what_k, rep, b))
            others = np.delete(mus, k)
            gap = min(abs(others - mu)) if len(others) else big
            if gap <= GAP * big:
                continue
            _, _, Vh = np.linalg.svd(P - mu * np.eye(len(P)))
            x = Vh[-1].conj()
            dist = shape_distance(v / np.linalg.norm(v), x)
            tol = SHAPE_TOL + NONNORMAL * np.finfo(float).eps * nP2 / gap
            check(dist <= tol, "%s: shape %.3g from NumPy's null vector (tol %.3g)" % (what_k, dist, tol))
    print("largest backward error of a Floquet eigenpair: %.3g" % worst)
    return finish("floquet_shapes_test")


if __name__ == "__main__":
    sys.exit(main())
