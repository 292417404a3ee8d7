#!/usr/bin/env python3
"""Issue 35: a new user's tour of data sets, rolling wheels and trim; regressions of what broke.

    python3 tests/cli/newuser_test.py build/mblin        (from the project root)

1. tests/cli/newuser/strut_damper.yaml (a mechanism strut whose damper is a CSV rig curve, Akima):
   its eigenvalues are the roots of m s^2 + c s + k with c the Akima slope at 0 computed here; a
   simulation whose speed must leave the curve's range (the spring's pull k (0.5 + m g / k) = 1998 N
   beats the damper's largest force, 1500 N at 1 m/s) stops within --max-steps and names the data
   set and its range (it used to grind through a million shrinking steps, 15 s, and name only the
   step count).
2. tests/cli/newuser/tire_map.yaml (spline2 of a bicubic CSV map whose corner cell is a label, as
   a spreadsheet writes it): the static point F(0.01, Fz)/k and the eigenvalues of
   m s^2 + (c0 - dF/dalpha) s + k, with F the tensor product of natural cubic splines computed
   here (a text corner used to make the row a header: the next row, the first slip's forces,
   became the loads, a silent wrong answer: x = -0.2844 instead of -0.2604).
3. data whose spline overflows (points 1e-300 apart: chords of 1e300; values of 1e308) is refused
   in one line naming the file, the set and the interval, not by the engine's internal
   "mblx_data_add: ... non-finite coefficient".
4. tests/cli/newuser/sleeping_top.yaml (a mechanism: a symmetric top on a spherical joint, spinning
   upright): its eigenvalues are the roots of A s^2 - i I3 w s - M g l = 0 and their conjugates
   (Goldstein's sleeping top) above and below the critical spin, with the spin angle's double zero;
   the text report and a sweep's CSV print a zero as 0, never "-0" (they printed "-0" for the
   real part of a zero mode). The same with the centre of mass 0.1 mm above the pivot, and a heavy
   top (1e5 kg) with it 0.32 mm above: the given tilt states were dropped there for Euler
   parameters (the state weight's preference, in the coordinates' units), and the eigenvalues were
   the frozen point's (0.3132i, 0.8132i instead of 0.1868i, 1.3132i).
"""
import cmath
import json
import math
import os
import subprocess
import sys
import tempfile
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


def natural_spline(x, y):
    """Natural cubic spline through (x, y): a function t -> (value, slope)."""
    n = len(x)
    h = [x[i + 1] - x[i] for i in range(n - 1)]
    # second derivatives M (M_0 = M_{n-1} = 0) by the Thomas algorithm
    a, b, c, d = [0.0] * n, [1.0] * n, [0.0] * n, [0.0] * n
    for i in range(1, n - 1):
        a[i], b[i], c[i] = h[i - 1], 2 * (h[i - 1] + h[i]), h[i]
        d[i] = 6 * ((y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1])
    for i in range(1, n):
        w = a[i] / b[i - 1]
        b[i] -= w * c[i - 1]
        d[i] -= w * d[i - 1]
    M = [0.0] * n
    for i in range(n - 1, -1, -1):
        M[i] = (d[i] - (c[i] * M[i + 1] if i < n - 1 else 0)) / b[i]

    def f(t):
        i = max(0, min(n - 2, max(k for k in range(n - 1) if x[k] <= t)))
        A, B = (x[i + 1] - t) / h[i], (t - x[i]) / h[i]
        v = A * y[i] + B * y[i + 1] + ((A ** 3 - A) * M[i] + (B ** 3 - B) * M[i + 1]) * h[i] ** 2 / 6
        s = (y[i + 1] - y[i]) / h[i] + (-(3 * A * A - 1) * M[i] + (3 * B * B - 1) * M[i + 1]) * h[i] / 6
        return v, s
    return f


def tire_map():
    rows = [line.strip().split(",") for line in open(os.path.join(HERE, "tire_map.csv")) if not line.startswith("#")]
    loads = [float(v) for v in rows[0][1:]]
    slips = [float(r[0]) for r in rows[1:]]
    Z = [[float(v) for v in r[1:]] for r in rows[1:]]
    m, k, Fz, c0, a0 = 100.0, 1000.0, 3000.0, 50.0, 0.01
    col = [natural_spline(loads, Z[i])(Fz)[0] for i in range(len(slips))]
    F, dF = natural_spline(slips, col)(a0)
    c = c0 - dF
    d = math.sqrt(c * c - 4 * m * k)
    want = sorted([(-c - d) / (2 * m), (-c + d) / (2 * m)])
    rc, out, err = run("linearize", os.path.join(HERE, "tire_map.yaml"), "--json")
    check(rc == 0, "tire map: linearize: " + err)
    if rc == 0:
        J = json.loads(out)
        x = J["operating_point"]["q"][0]
        check(abs(x - F / k) <= 1e-12, f"tire map: static point {x} != {F / k}")
        got = sorted(e["re"] for e in J["eigenvalues"])
        check(all(abs(g - w) <= 1e-9 * abs(w) for g, w in zip(got, want)), f"tire map: eigenvalues {got} != {want}")


def overflow():
    base = open(STRUT).read()
    line = base.splitlines().index("  damper: {method: akima, file: damper.csv}") + 1
    for data, lo, hi in (("{method: akima, x: [-1, 0, 1e-300], y: [1, 2, 3]}", "-1", "0"),
                         ("{method: cubic, x: [-1, 0, 1], y: [1e308, -1e308, 1e308]}", "-1", "0"),
                         ("{method: bicubic, x: [-1, 0, 1e-300], y: [1, 2], z: [[1, 2], [3, 4], [5, 6]]}", "0", "1e-300")):
        path = os.path.join(tempfile.mkdtemp(), "overflow.yaml")
        with open(path, "w") as f:
            f.write(base.replace("{method: akima, file: damper.csv}", data))
        rc, out, err = run("check", path)
        check(rc == 1 and err.count("\n") == 1 and err.startswith("mblin: %s:%d:3: data 'damper': " % (path, line))
              and "the curve overflows between x = %s and %s" % (lo, hi) in err and "mblx_" not in err,
              "overflow: " + data + ": " + err)


def sleeping_top():
    top = os.path.join(HERE, "sleeping_top.yaml")
    I1, I3, g = 0.004, 0.006, 9.81
    # (M, l, w): the file's top above and below its critical spin; then a centre of mass 0.1 mm above
    # the pivot and a heavy top with it 0.32 mm above (stiff units: dq/ds = 1/(2 l) for the tilt
    # states, beyond the state weight's 1/state_weight = 1000): the given states are kept at a point
    # with motion (they were exchanged for Euler parameters, whose eigenvalues are the frozen point's,
    # shifted by i w/2)
    for M, l, w in ((1.0, 0.1, 100.0), (1.0, 0.1, 30.0), (1.0, 1e-4, 1.0), (1e5, 3.2e-4, 100.0)):
        A = I1 + M * l * l
        d = cmath.sqrt(-(I3 * w) ** 2 + 4 * A * M * g * l)
        roots = [(1j * I3 * w + d) / (2 * A), (1j * I3 * w - d) / (2 * A)]
        want = sorted(roots + [r.conjugate() for r in roots] + [0, 0], key=lambda z: (round(z.real, 6), z.imag))
        sets = ["--set", "w=%g" % w, "--set", "M=%g" % M, "--set", "l=%g" % l]
        rc, out, err = run("linearize", top, *sets, "--json")
        check(rc == 0, "sleeping top: linearize: " + err)
        if rc != 0:
            continue
        J = json.loads(out)
        got = sorted((complex(e["re"], e["im"]) for e in J["eigenvalues"]),
                     key=lambda z: (round(z.real, 6), z.imag))
        scale = max(abs(z) for z in want)
        check(len(got) == 6 and all(abs(a - b) <= 1e-6 * scale for a, b in zip(got, want)),
              "sleeping top at M = %g, l = %g, w = %g: eigenvalues %s, closed form %s" % (M, l, w, got, want))
        check("dropped" not in json.dumps(J), "sleeping top at M = %g, l = %g: a given state dropped" % (M, l))
        rc, out, err = run("linearize", top, *sets)
        check(rc == 0 and not any(tok == "-0" for line in out.splitlines() for tok in line.split()),
              "sleeping top at w = %g: the text report prints a -0:\n%s" % (w, out))
    # the sweep's CSV through the stable and unstable spins (w = 30 has the exact double zero)
    rc, out, err = run("sweep", top, "--param", "w=10:30:3")
    check(rc == 0 and not any(f == "-0" for line in out.splitlines() for f in line.split(",")),
          "sleeping top: the sweep's CSV prints a -0:\n" + out + err)


strut()
tire_map()
overflow()
sleeping_top()
print("FAILED: %d" % len(fails) if fails else "all passed")
sys.exit(1 if fails else 0)
