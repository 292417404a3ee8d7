#!/usr/bin/env python3
"""Issue 32, item 2: the spin-up of Kane, Ryan and Banerjee (1987) simulated by `mblin simulate`
(examples/sim/krb_spinup.yaml): the tip deflection stays bounded with the geometric stiffness and
diverges without it, each against an independent reference.

The reference is written here from scratch: the beam's transverse deflection v(X, t) in the
turning frame, Hermite elements (the example's mesh) with a Gauss rule,
  rho A v'' + E I v'''' - (N v')' - rho A Omega^2 v = -rho A alpha(t) X,
  N(X) = rho A Omega^2 (L^2 - X^2) / 2 (the centrifugal tension; left out without the geometric
  stiffness), Omega(t) and alpha(t) = Omega' of the spin-up,
a linear model (axial motion and Coriolis coupling dropped: the stretch is 5e-4 m) integrated by
SciPy (LSODA, rtol 1e-9). mblin's simulation is of the nonlinear model (floating frame, IDA).
Checked:
  - with the geometric stiffness: the tip's history over 20 s equals the reference's to 2e-4 m
    (the largest lag is 0.572 m at t = 7 s) and after the spin-up it stays within 1 cm;
  - without it (`geometric_stiffness: false`): the history to t = 10 s equals the reference's
    without N to 1e-3 relative, and the tip has diverged past 50 m at t = 10 s.
Usage: test_krb_spinup.py MBLIN
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

B = sys.argv[1]
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim", "krb_spinup.yaml")
L, E, RHO, A, I, WS, TS, NE = 10.0, 7e10, 3000.0, 4e-4, 2e-7, 6.0, 15.0, 4


def omega(t):
    return WS / TS * (t - TS / (2 * math.pi) * math.sin(2 * math.pi * t / TS)) if t < TS else WS


def alpha(t):
    return WS / TS * (1 - math.cos(2 * math.pi * t / TS)) if t < TS else 0.0


def reference(t_end, geo):
    """the tip's deflection at t = 0, 0.5, ..., t_end"""
    le, n = L / NE, 2 * (NE + 1)
    M, K, KG, F = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
    xs, ws = np.polynomial.legendre.leggauss(6)
    xs, ws = 0.5 * (xs + 1), 0.5 * ws
    for e in range(NE):
        X0, d = e * le, slice(2 * e, 2 * e + 4)
        for xi, w in zip(xs, ws):
            X, W = X0 + xi * le, w * le
            h = np.array([1 - 3 * xi**2 + 2 * xi**3, (xi - 2 * xi**2 + xi**3) * le, 3 * xi**2 - 2 * xi**3,
                          (-xi**2 + xi**3) * le])
            dh = np.array([(-6 * xi + 6 * xi**2) / le, 1 - 4 * xi + 3 * xi**2, (6 * xi - 6 * xi**2) / le,
                           -2 * xi + 3 * xi**2])
            d2h = np.array([(-6 + 12 * xi) / le**2, (-4 + 6 * xi) / le, (6 - 12 * xi) / le**2, (-2 + 6 * xi) / le])
            M[d, d] += W * RHO * A * np.outer(h, h)
            K[d, d] += W * E * I * np.outer(d2h, d2h)
            KG[d, d] += W * RHO * A * (L * L - X * X) / 2 * np.outer(dh, dh)
            F[d] += -W * RHO * A * X * h
    k = slice(2, n)  # clamped at the hub
    M, K, KG, F = M[k, k], K[k, k], KG[k, k], F[k]
    Mi, m = np.linalg.inv(M), n - 2

    def rhs(t, y):
        om2 = omega(t) ** 2
        return np.concatenate([y[m:], Mi @ (F * alpha(t) - (K + (KG if geo else 0) * om2 - om2 * M) @ y[:m])])

    ts = np.linspace(0, t_end, int(round(t_end / 0.5)) + 1)
    s = solve_ivp(rhs, [0, t_end], np.zeros(2 * m), t_eval=ts, method="LSODA", rtol=1e-9, atol=1e-12)
    return s.y[m - 2, :]  # v at the tip node


def simulate(text, t_end):
    with tempfile.TemporaryDirectory() as d:
        model, out = os.path.join(d, "krb.yaml"), os.path.join(d, "krb.csv")
        with open(model, "w") as f:
            f.write(text)
        p = subprocess.run([B, "simulate", model, "--t-end", str(t_end), "--dt-out", "0.5", "-o", out],
                           capture_output=True, text=True, timeout=600)
        if not check(p.returncode == 0, "mblin simulate: " + p.stderr.strip()):
            return None
        with open(out) as f:
            return np.array([float(r["tip_lag"]) for r in csv.DictReader(f)])


with open(EXAMPLE) as f:
    text = f.read()
check(f"elements: {NE}\n" in text, f"the example has the reference's {NE} elements")

got, ref = simulate(text, 20), reference(20, True)
if got is not None:
    err = np.max(np.abs(got - ref))
    check(len(got) == len(ref) and err <= 2e-4, f"with geometric stiffness: tip history off the reference by {err:.2e} m "
          f"(largest lag {got.min():.4f} m, reference {ref.min():.4f} m)")
    check(-0.6 < got.min() < -0.55 and np.max(np.abs(got[31:])) < 0.01,
          f"bounded: the lag peaks at {got.min():.4f} m and stays within {np.max(np.abs(got[31:])):.4f} m after t = 15 s")

soft = text.replace(f"    elements: {NE}\n", f"    elements: {NE}\n    geometric_stiffness: false\n")
got, ref = simulate(soft, 10), reference(10, False)
if got is not None:
    err = np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref)))
    check(len(got) == len(ref) and err <= 1e-3, f"without geometric stiffness: tip history off the reference by {err:.2e} "
          f"(relative; at t = 10 s {got[-1]:.2f} m, reference {ref[-1]:.2f} m)")
    check(got[-1] < -50, f"without geometric stiffness the tip diverges: {got[-1]:.1f} m at t = 10 s")

sys.exit(finish("test_krb_spinup"))
