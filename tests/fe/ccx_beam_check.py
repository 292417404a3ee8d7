#!/usr/bin/env python3
"""CalculiX's clamped solid bar against the beam theories (issue 67, item 5; docs/fe-parts.md).

usage: ccx_beam_check.py REF.json JOB --length L [--side A] [--E E] [--nu NU] [--rho RHO]
                         [--mblin BEAM.json]

REF.json: ccx_reference.py's output; JOB: the clamped job in it (e.g. link_clamped). The bar is
link.geo's: square section A x A along x, clamped at x = 0 (every node of the face held), aluminium
of alu.inp by default. Prints one JSON object: per CalculiX mode its frequency, the kind matched
(bending, torsion, axial) and the beam theories' values of that kind and order:
  - Euler-Bernoulli bending, closed form: f = (beta_n L)^2 / (2 pi L^2) sqrt(E I / (rho A)), beta_n L
    the roots of cos x cosh x = -1 (1.8751041, 4.6940911, 7.8547574, ...), each twice (two planes);
  - Timoshenko bending (shear coefficient of the square, Cowper's 10 (1 + nu) / (12 + 11 nu)), by a
    finite element model written here (TIMO_ELEMENTS two-node elements, linear w and theta, the
    shear term under one-point quadrature, consistent mass with rotary inertia): within 1e-5 of
    the same model at 8000 elements for the first six orders (8e-6 at the sixth, 6e-8 at the first);
  - torsion, St. Venant: f = (2n - 1) / (4 L) sqrt(G J / (rho Ip)), J = 0.140577 a^4, Ip = a^4 / 6;
  - axial: f = (2n - 1) / (4 L) sqrt(E / rho).
With --mblin, the `mblin linearize --json` output of slender_beam.yaml (the same bar as mblin's beam
bodies) is matched mode by mode as well. The differences are relative: (value - ccx) / ccx.
"""
import argparse
import json
import math
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

TIMO_ELEMENTS = 2000      # elements of the Timoshenko reference model
SQUARE_TORSION = 0.140577  # J / a^4 of a square section (St. Venant)


def eb_roots(n):
    """The first n roots of cos x cosh x = -1 (clamped-free), by bisection near (2k - 1) pi / 2."""
    f = lambda x: math.cos(x) * math.cosh(x) + 1.0
    out = []
    for k in range(1, n + 1):
        c = (2 * k - 1) * math.pi / 2
        lo, hi = c - 0.5 if k > 1 else 1.0, c + 0.5 if k > 1 else 2.5
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if (f(lo) > 0) == (f(mid) > 0):
                lo = mid
            else:
                hi = mid
        out.append(0.5 * (lo + hi))
    return out


def timoshenko(L, E, G, rho, A, I, kappa, nmodes):
    """Clamped-free Timoshenko beam frequencies (Hz), one bending plane."""
    ne = TIMO_ELEMENTS
    h = L / ne
    n = 2 * (ne + 1)
    # dofs per node: w, theta; bending E I theta'^2, shear kappa G A (w' - theta)^2 at the midpoint
    kb = E * I / h * np.array([[0, 0, 0, 0], [0, 1, 0, -1], [0, 0, 0, 0], [0, -1, 0, 1]])
    g = np.array([-1 / h, -0.5, 1 / h, -0.5])
    ke = kb + kappa * G * A * h * np.outer(g, g)
    m1 = h / 6 * np.array([[2, 1], [1, 2]])
    me = np.zeros((4, 4))
    me[np.ix_([0, 2], [0, 2])] = rho * A * m1
    me[np.ix_([1, 3], [1, 3])] = rho * I * m1
    rows, cols, kv, mv = [], [], [], []
    for e in range(ne):
        idx = np.arange(2 * e, 2 * e + 4)
        rows.append(np.repeat(idx, 4))
        cols.append(np.tile(idx, 4))
        kv.append(ke.ravel())
        mv.append(me.ravel())
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    K = sp.csc_matrix((np.concatenate(kv), (rows, cols)), shape=(n, n))[2:, 2:]
    M = sp.csc_matrix((np.concatenate(mv), (rows, cols)), shape=(n, n))[2:, 2:]
    w2 = np.sort(spla.eigsh(K, k=nmodes, M=M, sigma=0, which="LM", return_eigenvectors=False))
    return [math.sqrt(x) / (2 * math.pi) for x in w2]


def references(L, a, E, nu, rho, nmodes):
    G = E / (2 * (1 + nu))
    A, I = a * a, a ** 4 / 12
    c = math.sqrt(E * I / (rho * A))
    eb = [x * x / (2 * math.pi * L * L) * c for x in eb_roots(nmodes)]
    kappa = 10 * (1 + nu) / (12 + 11 * nu)
    ti = timoshenko(L, E, G, rho, A, I, kappa, nmodes)
    ct = math.sqrt(G * SQUARE_TORSION * a ** 4 / (rho * a ** 4 / 6))
    tors = [(2 * k - 1) / (4 * L) * ct for k in range(1, nmodes + 1)]
    ax = [(2 * k - 1) / (4 * L) * math.sqrt(E / rho) for k in range(1, nmodes + 1)]
    cands = []
    for k in range(nmodes):
        for plane in (1, 2):
            cands.append({"kind": "bending", "order": k + 1, "plane": plane,
                          "euler_bernoulli": eb[k], "timoshenko": ti[k]})
        cands.append({"kind": "torsion", "order": k + 1, "beam": tors[k]})
        cands.append({"kind": "axial", "order": k + 1, "beam": ax[k]})
    cands.sort(key=lambda r: r.get("timoshenko", r.get("beam")))
    return cands


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref")
    ap.add_argument("job")
    ap.add_argument("--length", type=float, required=True)
    ap.add_argument("--side", type=float, default=0.02)
    ap.add_argument("--E", type=float, default=70e9)
    ap.add_argument("--nu", type=float, default=0.33)
    ap.add_argument("--rho", type=float, default=2700.0)
    ap.add_argument("--mblin")
    o = ap.parse_args(argv)
    with open(o.ref) as f:
        ref = json.load(f)
    if o.job not in ref:
        print(f"ccx_beam_check.py: {o.ref}: no job {o.job}", file=sys.stderr)
        return 1
    fc = [x for x in ref[o.job]["frequencies_hz"] if x > 1e-3 * max(ref[o.job]["frequencies_hz"])]
    mb = None
    if o.mblin:
        with open(o.mblin) as f:
            mb = sorted(e["freq_hz"] for e in json.load(f)["eigenvalues"] if e["im"] > 0)
    # the beam theories' modes in ascending order are matched to CalculiX's in ascending order:
    # each kind's n-th mode to the n-th CalculiX mode of the same rank (checked: the gap between
    # neighbours of different kinds is printed, a mismatch shows as a large difference)
    cands = references(o.length, o.side, o.E, o.nu, o.rho, len(fc))[:len(fc)]
    rows = []
    for i, (f, c) in enumerate(zip(fc, cands)):
        r = dict(c, mode=i + 1, ccx=f)
        for key in ("euler_bernoulli", "timoshenko", "beam"):
            if key in r:
                r[key + "_diff"] = (r[key] - f) / f
        if mb is not None and i < len(mb):
            r["mblin_beam"] = mb[i]
            r["mblin_beam_diff"] = (mb[i] - f) / f
        rows.append(r)
    json.dump({"job": o.job, "length": o.length, "side": o.side, "modes": rows}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
