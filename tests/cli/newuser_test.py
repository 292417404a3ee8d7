#!/usr/bin/env python3
"""Issue 35: a new user's tour of data sets, rolling wheels and trim; regressions of what broke.

    python3 tests/cli/newuser_test.py build/mblin        (from the project root)

1. tests/cli/newuser/strut_damper.yaml (a mechanism strut whose damper is a CSV rig curve, Akima):
   its eigenvalues are the roots of m s^2 + c s + k with c the Akima slope at 0 computed here; a
   simulation whose speed must leave the curve's range (the spring's pull k (0.5 + m g / k) = 1998 N
   beats the damper's largest force, 1500 N at 1 m/s) stops within --max-steps and names the data
   set and its range (it used to grind through a million shrinking steps, 15 s, and name only the
   step count).
"""
import json
import math
import os
import subprocess
import sys
import time

MBLIN = sys.argv[1] if len(sys.argv) > 1 else "build/mblin"
HERE = os.path.join("tests", "cli", "newuser")
STRUT = os.path.join(HERE, "strut_damper.yaml")
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def akima_slope(x, y, i):
    """Akima's (1970) slope at interior point i with two chords on each side."""
    m = [(y[j + 1] - y[j]) / (x[j + 1] - x[j]) for j in range(len(x) - 1)]
    m1, m2, m3, m4 = m[i - 2], m[i - 1], m[i], m[i + 1]
    w1, w2 = abs(m4 - m3), abs(m2 - m1)
    return (m2 + m3) / 2 if w1 + w2 == 0 else (w1 * m2 + w2 * m3) / (w1 + w2)


def strut():
    xs, ys = [], []
    for line in open(os.path.join(HERE, "damper.csv")):
        try:
            a, b = line.split(",")
            xs.append(float(a)), ys.append(float(b))
        except ValueError:
            pass
    m, k = 10.0, 4000.0
    c = akima_slope(xs, ys, xs.index(0.0))
    d = math.sqrt(c * c - 4 * m * k)
    want = sorted([(-c - d) / (2 * m), (-c + d) / (2 * m)])
    rc, out, err = run("linearize", STRUT, "--json")
    check(rc == 0, "strut: linearize: " + err)
    if rc == 0:
        got = sorted(e["re"] for e in json.loads(out)["eigenvalues"])
        check(all(abs(g - w) <= 1e-9 * abs(w) for g, w in zip(got, want)), f"strut: eigenvalues {got} != {want}")
    # the damper's end: k (0.5 + m g / k) at y = 0 against 1500 N, the curve's largest force
    check(4000 * (0.5 + 10 * 9.81 / 4000) > max(ys), "strut: the test's premise")
    tic = time.time()
    rc, out, err = run("simulate", STRUT, "--t-end", "0.05", "--set-initial", "cart_y=0", "--max-steps", "20000")
    check(rc == 1 and err.count("\n") == 1 and "spline 'damper'" in err and "outside its data [-1, 1]" in err
          and "--max-steps 20000" in err, "strut: leaving the data's range in a simulation: " + err)
    check(time.time() - tic < 30, "strut: the refused simulation took %.1f s" % (time.time() - tic))


strut()
print("FAILED: %d" % len(fails) if fails else "all passed")
sys.exit(1 if fails else 0)
