#!/usr/bin/env python3
"""Issue 35, item 3: linearize.at: trim (docs/model-files.md, "Trim: steady turns").

    python3 tests/cli/trim_test.py build/mblin        (from the project root)

Every value is checked against a closed form computed here (pure Python):
1. the linear single-track car of examples/vehicle/single_track_turn.yaml (polar coordinates about
   the turn's centre), trimmed for its radius, then for its yaw rate (--target), at several speeds:
   steer angle delta = L/Rc + K_us U^2/Rc, K_us = m/L (b/Cf - a/Cr), body slip
   beta = b/Rc - m a U^2/(L Cr Rc) with Rc = U/r, the radius rho = Rc sqrt(1 + beta^2), and the
   eigenvalues of the 2x2 lateral/yaw state matrix among the trimmed model's (with 0 and +-i r);
2. the same car in ground coordinates (tests/cli/trim_ground.yaml: the turn's accelerations
   given by trim.accelerations, forward speed and yaw rate as targets, steer and drive force
   free): delta, beta and the drive force -m v r; its eigenvalues are those of the ground-frame
   Jacobian at the point (a check computed here from the body-frame equations written in ground
   coordinates), not the 2x2 ones;
3. a conical pendulum (source 003 Sec. 5.3) trimmed for its radius rho: theta = asin(rho/l),
   der(phi)^2 = g/(l cos theta), eigenvalues +-i der(phi) sqrt(1 + 3 cos^2 theta);
4. refusals, one line and a nonzero exit: more targets than unknowns, a target out of reach,
   an unknown --target key, at: trim without targets, trim.free naming no input.
"""
import cmath
import json
import math
import os
import subprocess
import sys
import tempfile

MBLIN = sys.argv[1] if len(sys.argv) > 1 else "build/mblin"
CAR = "examples/vehicle/single_track_turn.yaml"
GROUND = "tests/cli/trim_ground.yaml"
P = dict(m=1500.0, Iz=2500.0, a=1.2, b=1.5, Cf=80000.0, Cr=90000.0)
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def close(x, y, tol, what):
    check(abs(x - y) <= tol * max(1.0, abs(y)), "%s: %r vs %r" % (what, x, y))


def run(args):
    p = subprocess.run([MBLIN] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def lin(args):
    rc, out, err = run(["linearize"] + args + ["--json", "--no-matrices"])
    check(rc == 0, "mblin linearize %s: exit %d %s" % (" ".join(args), rc, err.strip()))
    return json.loads(out) if rc == 0 else None


def eigs(d):
    return [complex(e["re"], e["im"]) for e in d["eigenvalues"]] if "re" in d["eigenvalues"][0] else \
        [complex(e[0], e[1]) for e in d["eigenvalues"]]


def car_closed(U, r):
    m, Iz, a, b, Cf, Cr = (P[k] for k in ("m", "Iz", "a", "b", "Cf", "Cr"))
    L = a + b
    Rc = U / r
    K = m / L * (b / Cf - a / Cr)
    delta = L / Rc + K * U * U / Rc
    beta = b / Rc - m * a * U * U / (L * Cr * Rc)
    A = [[-(Cf + Cr) / (m * U), -(a * Cf - b * Cr) / (m * U) - U],
         [-(a * Cf - b * Cr) / (Iz * U), -(a * a * Cf + b * b * Cr) / (Iz * U)]]
    tr, det = A[0][0] + A[1][1], A[0][0] * A[1][1] - A[0][1] * A[1][0]
    s = cmath.sqrt(tr * tr / 4 - det)
    return delta, beta, [tr / 2 + s, tr / 2 - s]


def has(lams, z, tol):
    return any(abs(l - z) <= tol * max(1.0, abs(z)) for l in lams)


def point_of(d):
    return d["operating_point"]


def test_car_radius():
    for U in (10.0, 20.0, 30.0):
        R = 100.0
        d = lin([CAR, "--set", "U=%g" % U])
        if not d:
            continue
        pt = point_of(d)
        names = pt["coordinates"] if "coordinates" in pt else pt["names"]
        r = pt["v"][names.index("theta")]
        delta = pt["inputs"][0]
        beta = pt["outputs"][0]
        cd, cb, ce = car_closed(U, r)
        close(delta, cd, 1e-9, "car U=%g: steer" % U)
        close(beta, cb, 1e-9, "car U=%g: body slip" % U)
        close(pt["q"][names.index("rho")], R, 1e-12, "car U=%g: radius target" % U)
        close(U / r * math.sqrt(1 + cb * cb), R, 1e-9, "car U=%g: rho = Rc sqrt(1 + beta^2)" % U)
        lams = eigs(d)
        for z in ce:
            check(has(lams, z, 1e-9), "car U=%g: 2x2 eigenvalue %r among %r" % (U, z, lams))
        check(has(lams, 1j * r, 1e-9) and has(lams, 0, 1e-9), "car U=%g: 0 and i r among %r" % (U, lams))
        check("trim" in pt and pt["trim"]["target_residual"] <= 1e-9, "car U=%g: JSON trim residual" % U)
        check("solved: delta" in pt["trim"]["summary"], "car: JSON names what was solved")
    rc, out, err = run(["sensitivity", CAR])
    check(rc != 0 and "sensitivities of a trimmed point" in err and err.count("\n") <= 1,
          "car: sensitivity refused in one line (%d: %r)" % (rc, err))


def test_car_yaw_rate_target():
    """A target on the yaw rate (key written in a copy of the file), its value set by --target."""
    with open(CAR) as f:
        text = f.read()
    text = text.replace('targets: {rho: R}', 'targets: {"der(theta)": U/R}')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "car_yaw.yaml")
        with open(path, "w") as f:
            f.write(text)
        d = lin([path, "--target", "der(theta)=0.25"])
        if d:
            pt = point_of(d)
            cd, cb, _ = car_closed(20.0, 0.25)
            close(pt["inputs"][0], cd, 1e-9, "car yaw-rate target: steer")
            close(pt["outputs"][0], cb, 1e-9, "car yaw-rate target: body slip")


def test_ground():
    d = lin([GROUND])
    if not d:
        return
    pt = point_of(d)
    U, R = 20.0, 100.0
    cd, cb, _ = car_closed(U, U / R)
    close(pt["inputs"][0], cd, 1e-9, "ground car: steer")
    close(pt["outputs"][0], cb, 1e-9, "ground car: body slip")
    close(pt["inputs"][1], -P["m"] * cb * U * U / R, 1e-9, "ground car: drive force -m v r")
    # accelerations turn with the velocity: der(der(x)) = -r der(y), der(der(y)) = r der(x)
    v, a = pt["v"], pt["vdot"]
    close(a[0], -v[2] * v[1], 1e-9, "ground car: x acceleration")
    close(a[1], v[2] * v[0], 1e-9, "ground car: y acceleration")


def test_conical():
    text = """model: dae
name: conical pendulum trimmed for its radius
parameters: {m: 10, l: 0.5, g: 9.81, rho: 0.25}
coordinates: {theta: 0.4, phi: 0}
velocities: {phi: 3}
kinetic_energy: "0.5*m*l^2*der(theta)^2 + 0.5*m*l^2*sin(theta)^2*der(phi)^2"
potential_energy: "-m*g*l*cos(theta)"
trim:
  targets: {"l*sin(theta)": rho}
linearize:
  at: trim
"""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "conical.yaml")
        with open(path, "w") as f:
            f.write(text)
        for rho in (0.1, 0.25, 0.4):
            d = lin([path, "--set", "rho=%g" % rho])
            if not d:
                continue
            pt = point_of(d)
            th = math.asin(rho / 0.5)
            W = math.sqrt(9.81 / (0.5 * math.cos(th)))
            close(pt["q"][0], th, 1e-10, "conical rho=%g: theta" % rho)
            close(pt["v"][1], W, 1e-10, "conical rho=%g: der(phi)" % rho)
            w = W * math.sqrt(1 + 3 * math.cos(th) ** 2)
            check(has(eigs(d), 1j * w, 1e-9), "conical rho=%g: eigenvalue i %r" % (rho, w))
        # refusals
        for extra, what, expect in (
                (["--set", "rho=0.6"], "a radius beyond the string", "no steady motion meets the trim targets"),
                (["--target", "radius=1"], "an unknown --target key", "no trim target keyed 'radius'")):
            rc, out, err = run(["linearize", path] + extra)
            check(rc != 0 and expect in err and err.count("\n") <= 1,
                  "conical: %s refused in one line (%d: %r)" % (what, rc, err))
        over = text.replace('targets: {"l*sin(theta)": rho}', 'targets: {"l*sin(theta)": rho, "der(phi)": 3}')
        with open(path, "w") as f:
            f.write(over)
        rc, out, err = run(["linearize", path])
        check(rc != 0 and "over-determine" in err and err.count("\n") <= 1,
              "conical: two targets for one unknown refused (%d: %r)" % (rc, err))
        bad = text.replace("trim:\n  targets: {\"l*sin(theta)\": rho}\n", "")
        with open(path, "w") as f:
            f.write(bad)
        rc, out, err = run(["linearize", path])
        check(rc != 0 and "needs a 'trim:' section" in err, "at: trim without targets refused (%d: %r)" % (rc, err))
        nofree = text.replace('targets: {"l*sin(theta)": rho}', 'targets: {"l*sin(theta)": rho}\n  free: [steer]')
        with open(path, "w") as f:
            f.write(nofree)
        rc, out, err = run(["linearize", path])
        check(rc != 0 and "'steer' is not an input" in err and ":10:" in err,
              "trim.free naming no input refused at its line (%d: %r)" % (rc, err))


def test_car_simulated_from_trim():
    """mblin simulate from the trimmed point keeps the trim's solved steer (not the file's delta =
    0.03): the car stays on its circle, rho = 100 and a constant yaw rate (it drifted to rho = 101.6
    in 2 s when the simulation took the file's inputs)."""
    d = lin([CAR])
    if not d:
        return
    pt = point_of(d)
    delta, names = pt["inputs"][0], pt["coordinates"]
    r0 = pt["v"][names.index("theta")]
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "run.csv")
        rc, o, err = run(["simulate", CAR, "--t-end", "2", "-o", out])
        check(rc == 0, "simulate from the trim: exit %d %s" % (rc, err.strip()))
        if rc:
            return
        with open(out) as f:
            head = f.readline().strip().split(",")
            rows = [[float(x) for x in line.split(",")] for line in f if line.strip()]
    col = {h: i for i, h in enumerate(head)}
    worst_rho = max(abs(row[col["rho"]] - 100.0) for row in rows)
    worst_r = max(abs(row[col["der(theta)"]] - r0) for row in rows)
    close(rows[-1][col["delta"]], delta, 1e-14, "simulate: the input is the trim's steer")
    check(worst_rho <= 1e-8 and worst_r <= 1e-10,
          "simulate from the trim stays on the circle: |rho - 100| <= %.3g, |r - r0| <= %.3g" % (worst_rho, worst_r))


for t in (test_car_radius, test_car_yaw_rate_target, test_ground, test_conical, test_car_simulated_from_trim):
    t()
print("%d failures" % len(fails))
sys.exit(1 if fails else 0)
