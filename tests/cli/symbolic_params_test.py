#!/usr/bin/env python3
"""`mblin symbolic`'s parameters and its check against `mblin linearize` (issue 30, item 5).

On a URDF file the joint-angle parameters (`shoulder`, `elbow` of examples/urdf/acrobot.urdf) only
place the bodies when the file is loaded: no expression of the linear model depends on them.
Before the fix `symbolic` listed them as symbols and printed the hanging acrobot's stiffness even
at shoulder = pi, where mblin linearize (and the Lagrangian) give the opposite sign:
K = -g [[m1 lc1 + m2 (l1 + lc2), m2 lc2], [m2 lc2, m2 lc2]] = -[[24.525, 9.81], [9.81, 9.81]]
upright, +[[...]] hanging (m1 = m2 = 1, l1 = 1, lc1 = 0.5, lc2 = 1, g = 9.81; the file's comment).
Now such parameters are not symbols, K-hat follows the point, and A, B, C, D are checked against
linearize at random values of every symbol (`checked_sets` in the JSON), and the closed-form
search measures each equilibrium residual against its own scale (it accepted e0 = I + 0.6 for an
Euler parameter equal to 1 on tests/study/modes_symmetric_mount.yaml).

usage: symbolic_params_test.py path/to/mblin
"""
import json
import subprocess
import sys

MBLIN = sys.argv[1]
FAILS = []


def run(args):
    p = subprocess.run([MBLIN] + args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"mblin {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def num(e):
    return float(e)  # the acrobot's matrices are numbers (no parameter is a symbol)


def main():
    urdf = "examples/urdf/acrobot.urdf"
    g, m1, m2, l1, lc1, lc2 = 9.81, 1.0, 1.0, 1.0, 0.5, 1.0
    k_closed = [[g * (m1 * lc1 + m2 * (l1 + lc2)), g * m2 * lc2], [g * m2 * lc2, g * m2 * lc2]]
    for shoulder, sign in ((None, 1.0), ("3.141592653589793", -1.0)):
        sets = ["--set", f"shoulder={shoulder}"] if shoulder else []
        sym = json.loads(run(["symbolic", urdf, "--format", "json"] + sets))
        lin = json.loads(run(["linearize", urdf, "--json"] + sets))
        what = f"acrobot shoulder={shoulder or 0}"
        check(sym["parameters"] == [], f"{what}: parameters listed as symbols {sym['parameters']}")
        check("shoulder" in sym["note"], f"{what}: note does not name the parameters that are not symbols")
        K = [[num(e) for e in row] for row in sym["K"]]
        for i in range(2):
            for j in range(2):
                ref = sign * k_closed[i][j]
                check(abs(K[i][j] - ref) <= 1e-12 * 24.525, f"{what}: K[{i}][{j}] = {K[i][j]}, closed form {ref}")
                check(abs(K[i][j] - lin["mck"]["K"][i][j]) <= 1e-12 * 24.525,
                      f"{what}: K[{i}][{j}] = {K[i][j]}, linearize {lin['mck']['K'][i][j]}")
        A = [[num(e) for e in row] for row in sym["A"]]
        dev = max(abs(A[i][j] - lin["ss"]["A"][i][j]) for i in range(4) for j in range(4))
        check(dev <= 1e-12 * max(abs(x) for r in lin["ss"]["A"] for x in r), f"{what}: A deviates {dev:.3g}")
        check(sym.get("checked_sets") == 1, f"{what}: checked_sets {sym.get('checked_sets')}")
    # a model whose parameters are symbols: every one varied, 20 sets compared with linearize
    sym = json.loads(run(["symbolic", "examples/double_pendulum_natural.yaml", "--format", "json"]))
    check(sym["parameters"] == ["m1", "m2", "L1", "L2", "g"],
          f"double pendulum: parameters {sym['parameters']}")
    check(sym.get("checked_sets") == 20, f"double pendulum: checked_sets {sym.get('checked_sets')}")
    txt = run(["symbolic", "examples/double_pendulum_natural.yaml"])
    check("checked against mblin linearize at 20 random values of every symbol" in txt, "text header")
    # a closed-form point accepted by a residual bound of 1e-9 max|p|^3 (1.25e5 here): the Euler
    # parameter e0 = 1 printed as I + 0.6 (I = 0.4, J = 0.6); now e0 = 1 and A agrees with linearize
    sym = json.loads(run(["symbolic", "tests/study/modes_symmetric_mount.yaml", "--params", "I", "--format", "json",
                          "--max-size", "1e7"]))
    check(sym["point"][3] == "1", f"symmetric mount: e0 = {sym['point'][3]}")
    check(sym.get("checked_sets", 0) >= 15, f"symmetric mount: checked_sets {sym.get('checked_sets')}")
    if FAILS:
        raise SystemExit(f"{len(FAILS)} failures")
    print("symbolic_params_test: ok")


main()
