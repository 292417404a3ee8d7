#!/usr/bin/env python3
"""mblin optimize end to end (issue 71; docs/optimize.md).

band_brute_force  the two-mass chain of tests/study/two_mass.yaml (m1 = 2, m2 = 0.5, c1 = 0.4,
                  c2 = 0.1) whose first frequency (2.634 Hz) must leave the band 2.5..2.9 Hz with the
                  least relative change of k1 and k2: the optimum of each side of the band by a
                  brute-force scan in NumPy (k2 on a grid, k1 on the band's edge by bisection, then
                  the best grid cell refined), checked on a 2-D grid of the feasible designs; the
                  command from three starts and with each gradient algorithm ends on one of the two
                  sides' optima, the start at the model's values on the global one (the lower edge)
tmd_output        the progress lines (one per evaluation: value, objective, violation, bounds) and
                  the final design with its modes; max:min-damping of the tuned mass damper
errors            usage errors (exit 2) and an infeasible problem (exit 1, one line)

usage: optimize_cli_test.py MBLIN (from the repository root; needs numpy and scipy)"""
import os
import re
import subprocess
import sys

import numpy as np
from scipy.optimize import brentq, minimize_scalar

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
TWO_MASS = "tests/study/two_mass.yaml"
M1, M2, C1, C2, K1, K2 = 2.0, 0.5, 0.4, 0.1, 800.0, 300.0
LO, HI = 2.5, 2.9


def f1(k1, k2):
    """the lowest undamped natural frequency |lambda| / 2 pi (Hz) of the damped chain"""
    M = np.diag([M1, M2])
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    C = np.array([[C1 + C2, -C2], [-C2, C2]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    return np.abs(np.linalg.eigvals(A)).min() / (2 * np.pi)


def change(k1, k2):
    return ((k1 - K1) / K1) ** 2 + ((k2 - K2) / K2) ** 2


def edge_k1(k2, f):
    """k1 where the first frequency is f (it rises with k1), or None outside 400..1600"""
    g = lambda k1: f1(k1, k2) - f  # noqa: E731
    return brentq(g, 400, 1600, xtol=1e-13) if g(400) < 0 < g(1600) else None


def side_optimum(f):
    """the least change with the first frequency at f: k2 scanned, then refined"""
    k2s = np.linspace(150, 600, 451)
    vals = [(change(edge_k1(k2, f), k2), k2) for k2 in k2s if edge_k1(k2, f) is not None]
    best = min(vals)[1]
    r = minimize_scalar(lambda k2: change(edge_k1(k2, f), k2), bounds=(best - 1, best + 1), method="bounded",
                        options={"xatol": 1e-10})
    return r.fun, edge_k1(r.x, f), r.x


def run(args):
    return subprocess.run([MBLIN, "optimize"] + args, capture_output=True, text=True, timeout=120)


def parse(out):
    vals = dict((m.group(1), float(m.group(2))) for m in re.finditer(r"^  (k1|k2|c2)\s+= (\S+)", out, re.M))
    obj = re.search(r"objective: .* = (\S+)", out)
    return vals, float(obj.group(1)) if obj else None


def band_brute_force():
    opt_lo, opt_hi = side_optimum(LO), side_optimum(HI)
    # the sides' optima are the problem's: no feasible design of a 2-D grid changes less
    g1, g2 = np.linspace(400, 1600, 121), np.linspace(150, 600, 91)
    feas = [change(a, b) for a in g1 for b in g2 if not (LO < f1(a, b) < HI)]
    check(min(feas) >= min(opt_lo[0], opt_hi[0]) - 1e-12, "a feasible grid design changes less than the sides' optima")
    check(opt_lo[0] < opt_hi[0], "the lower edge is the global optimum (%.6g vs %.6g)" % (opt_lo[0], opt_hi[0]))
    starts = ["k1:400:1600,k2:150:600", "k1:400:1600:1000,k2:150:600", "k1:400:1600:500,k2:150:600:200"]
    for alg in ("slsqp", "ccsaq"):
        for i, vary in enumerate(starts):
            p = run([TWO_MASS, "--vary", vary, "--objective", "min:change", "--constraint", "freq:1!=2.5:2.9", "--quiet",
                     "--algorithm", alg])
            check(p.returncode == 0, "%s %s: exit %d: %s" % (alg, vary, p.returncode, p.stderr.strip()))
            if p.returncode:
                continue
            v, obj = parse(p.stdout)
            ref = min((opt_lo, opt_hi), key=lambda o: abs(o[1] - v["k1"]))
            check(abs(obj - ref[0]) <= 1e-6 * ref[0], "%s %s: change %.12g vs brute force %.12g" % (alg, vary, obj, ref[0]))
            check(abs(v["k1"] - ref[1]) <= 1e-5 * ref[1] and abs(v["k2"] - ref[2]) <= 1e-5 * ref[2],
                  "%s %s: k1, k2 = %.10g, %.10g vs %.10g, %.10g" % (alg, vary, v["k1"], v["k2"], ref[1], ref[2]))
            fr = f1(v["k1"], v["k2"])
            check(not (LO + 1e-7 < fr < HI - 1e-7), "%s %s: the final frequency %.10g is in the band" % (alg, vary, fr))
            if i == 0:
                check(ref is opt_lo, "%s: the start at the model's values ends on the lower edge" % alg)


def tmd_output():
    with open("tests/opt/tmd.yaml") as fh:
        assert "tuned mass damper" in fh.read()
    p = run(["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "max:min-damping"])
    check(p.returncode == 0, "tmd: exit %d: %s" % (p.returncode, p.stderr.strip()))
    lines = [l for l in p.stdout.splitlines() if re.match(r"^\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+k2=\S+ c2=\S+", l)]
    check(len(lines) >= 5, "tmd: %d progress lines" % len(lines))
    check("Modes of the final design" in p.stdout and "double eigenvalue" in p.stdout, "tmd: the final design's report")
    v, obj = parse(p.stdout)
    check(abs(obj - 0.05 ** 0.5 / 2) < 1e-5 * 0.05 ** 0.5 / 2, "tmd: the least damping %r vs sqrt(mu)/2" % obj)


def errors():
    for args, why in ((["--vary", "k1:2:1", "--objective", "min:change"], "LO must be below HI"),
                      (["--vary", "k1", "--objective", "min:change"], "NAME:LO:HI"),
                      (["--vary", "k1:400:1600", "--objective", "max:freq"], "unknown quantity"),
                      (["--vary", "k1:400:1600", "--objective", "min:change", "--constraint", "freq:1>2"], "Q>=A"),
                      (["--vary", "k1:400:1600", "--objective", "min:change", "--algorithm", "bfgs"], "slsqp"),
                      (["--vary", "kx:1:2", "--objective", "min:change"], "no parameter 'kx'"),
                      (["--vary", "k1:400:1600", "--objective", "freq:7=3"], "mode 7")):
        p = run([TWO_MASS] + args)
        check(p.returncode == 2 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              "%s: exit %d, %r" % (args, p.returncode, p.stderr))
    p = run([TWO_MASS, "--vary", "k1:400:1600", "--objective", "min:change", "--constraint", "freq:1>=5", "--quiet"])
    check(p.returncode == 1 and "infeasible" in p.stderr and len(p.stderr.strip().splitlines()) == 1 and
          "Optimum" not in p.stdout, "infeasible: exit %d, %r" % (p.returncode, p.stderr))


band_brute_force()
tmd_output()
errors()
sys.exit(finish("optimize_cli"))
