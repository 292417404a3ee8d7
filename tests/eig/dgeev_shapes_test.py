#!/usr/bin/env python3
"""Mode shapes of the dgeev strategy against NumPy (branch s17-mparam).

Every model file whose linear model goes to dgeev (non-holonomic constraints, user velocity or ode
states): each non-zero, simple eigenvalue s of `mblin linearize --json` must have the mode shape
q_S x_S of the unit null vector x of A - s I, found here by NumPy's SVD (no balancing), to 1e-7
plus 100 eps ||A|| / gap (up to a complex factor), and every non-zero eigenpair a backward error
below 1e-12 (a defective zero is only known to sqrt(eps ||A||): its pair's backward error may be
larger).

dgeev's scaling balancer once turned the mechanism single-track car's A (entries of 1e-46 where a
zero's terms cancel in rounding) into factors of 3e23: shapes with backward errors of 0.06, made of
the wheels' spin angles, that swapped the tracked branches of a sweep over Cf. src/eig now solves
again with the permutation only where an eigenpair's backward error exceeds 1e-12 and takes that
pair's eigenvector from there.

    dgeev_shapes_test.py MBLIN   (from the project root; needs numpy)
"""
import json
import os
import subprocess
import sys

import numpy as np

MODELS = [
    "examples/mech/rolling_disc.yaml",
    "examples/mech/single_track_car.yaml",
    "examples/mech/whipple_bicycle.yaml",
    "examples/nh_sleigh.yaml",
    "examples/ode/cart_pd_controller.yaml",
    "examples/rolling_disc.yaml",
    "examples/rolling_disc_speeds.yaml",
    "examples/speeds/rigid_rotor_body_speeds.yaml",
    "examples/vehicle/mech_single_track_turn.yaml",
    "examples/vehicle/single_track_turn.yaml",
    "examples/whipple_bicycle_nonlinear.yaml",
    "tests/cli/trim_whipple_turn.yaml",
    "tests/model/bicycle_like_qdot.yaml",
    "tests/model/bicycle_like_speeds.yaml",
]
SHAPE_TOL = 1e-7   # distance of the shape from NumPy's q_S x_S (||x|| = 1), up to a complex factor
BERR_TOL = 1e-12   # every eigenpair's reported backward error
# plus the first-order error of an eigenvector, eps ||A||_2 / gap (gap: to the nearest other
# eigenvalue), times NONNORMAL for a matrix that is not normal (the steady turn's +-0.2i beside its
# zeros, ||A|| = 1.8e7: 2.6e-7)
NONNORMAL = 100.0
GAP = 1e-6         # an eigenvalue within GAP max|s| of another is not simple: its shape is not unique


def main():
    mblin = sys.argv[1]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    failed = checked = 0
    for path in MODELS:
        r = subprocess.run([mblin, "linearize", path, "--json"], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            print(f"FAIL {path}: exit {r.returncode}: {r.stderr.strip()}")
            failed += 1
            continue
        d = json.loads(r.stdout)
        if d["eigen_solver"] != "dgeev":
            print(f"FAIL {path}: solver {d['eigen_solver']}, not dgeev (the list is out of date)")
            failed += 1
            continue
        A = np.array(d["ss"]["A"], dtype=float)
        qS = np.array(d["q_S"], dtype=float)
        z0 = qS.shape[1]
        nx = A.shape[0]
        ev = d["eigenvalues"]
        s_all = np.array([e["re"] + 1j * e["im"] for e in ev])
        big = max(abs(s_all))
        shapes = np.array(d["mode_shapes"]["re"]) + 1j * np.array(d["mode_shapes"]["im"])
        normA = np.linalg.norm(A, 2)
        for i, e in enumerate(ev):
            if e["kind"] != "zero" and not (e["backward_error"] <= BERR_TOL):
                print(f"FAIL {path}: eigenvalue {s_all[i]:.6g}: backward error {e['backward_error']:.3g} > {BERR_TOL}")
                failed += 1
            others = np.delete(s_all, i)
            if e["kind"] == "zero" or (len(others) and min(abs(others - s_all[i])) <= GAP * big):
                continue
            _, sv, vh = np.linalg.svd(A - s_all[i] * np.eye(nx))
            if not sv[-1] <= 1e-10 * normA:
                print(f"FAIL {path}: {s_all[i]:.6g} is no eigenvalue of A (sigma_min {sv[-1]:.3g})")
                failed += 1
                continue
            ref = qS @ vh[-1].conj()[:z0]
            got = shapes[:, i]
            if np.linalg.norm(ref) <= 1e-12 * np.linalg.norm(vh[-1]):
                continue  # no position part (a velocity-only mode): nothing to compare
            # got scaled to ref; the distance relative to the unit eigenvector x (whose position part
            # is 1/|s| of it in a stiff mode: its shape is only that accurate)
            c = np.vdot(got, ref) / np.vdot(got, got)
            dist = np.linalg.norm(c * got - ref)
            checked += 1
            gap = min(abs(others - s_all[i]))
            tol = SHAPE_TOL + NONNORMAL * np.finfo(float).eps * normA / gap
            if not dist <= tol:
                print(f"FAIL {path}: eigenvalue {s_all[i]:.6g}: shape {dist:.3g} from NumPy's null vector (tolerance {tol:.3g})")
                failed += 1
    print(f"{checked} shapes of {len(MODELS)} models checked")
    if checked < 20:
        print(f"FAIL: only {checked} shapes checked")
        failed += 1
    print(f"{1 if failed == 0 else 0} passed, {1 if failed else 0} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
