#!/usr/bin/env python3
"""Issue 33, item 2: outputs of multipliers and accelerations in every method, and --outputs.
- The pushed pendulum (held at an angle by F = 8): the tension lambda(rod) (T = sqrt((m g)^2 + F^2)
  / (2 l) as a multiplier of x^2 + y^2 - l^2) has D = dT/dF = sin(th) / (2 l) (the radial equation at
  the instant) and C = 0 (stationary in the angle and the rate); projection, descriptor (its
  state-space form) and penalty (to O(1/alpha)) give it, where they refused before.
- symbolic and codegen emit them (the generated Python's C and D of the tension are the closed forms,
  at rest and at a point with motion); with ode states symbolic refuses them naming --outputs.
- --outputs a,b keeps those outputs in that order (linearize, symbolic, codegen); an unknown name
  or one given twice is a usage error (exit 2, one line, naming the outputs).
usage: outputs_test.py PATH_TO_MBLIN"""
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


td = tempfile.mkdtemp()
path = os.path.join(td, "pushed.yaml")
m, l, g, F = 2.0, 1.5, 9.81, 8.0
with open(path, "w") as f:
    f.write("model: dae\nparameters: {m: %g, l: %g, g: %g}\ncoordinates: {x: 0.5, y: -1.4}\n"
            "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
            "inputs: {F: %g}\nforces: {x: \"F\"}\nconstraints: {rod: \"x^2 + y^2 - l^2\"}\n"
            "outputs: {tension: \"lambda(rod)\", xo: x, ay: \"der(der(y))\"}\n"
            "linearize: {at: equilibrium, states: [x]}\n" % (m, l, g, F))
T = math.hypot(m * g, F)
sin_th = F / T
for method, tol in (("augmented", 1e-10), ("projection", 1e-10), ("descriptor", 1e-10), ("penalty", 1e-5)):
    rc, out, err = run("linearize", path, "--method", method, "--json")
    check(rc == 0, "%s: %s" % (method, err.strip()))
    if rc:
        continue
    ss = json.loads(out)["ss"]
    d = ss["D"][0][0]
    check(abs(d - sin_th / (2 * l)) <= tol * sin_th, "%s: D(tension) = %r, expected %r" % (method, d, sin_th / (2 * l)))
    if method != "penalty":  # the same states x, der(x): C(tension) = 0
        check(all(abs(c) <= 1e-9 for c in ss["C"][0]), "%s: C(tension) = %r" % (method, ss["C"][0]))

# --outputs
rc, out, err = run("linearize", path, "--outputs", "ay,xo", "--json")
check(rc == 0, err.strip())
if rc == 0:
    lm = json.loads(out)
    check(lm["outputs"] == ["ay", "xo"], "--outputs ay,xo: %r" % (lm["outputs"],))
    check(abs(lm["ss"]["C"][1][0] - 1.0) < 1e-12, "xo = x: C = %r" % (lm["ss"]["C"][1],))
for bad, needle in (("xo,nope", "no output named 'nope' (its outputs: tension, xo, ay)"), ("xo,xo", "'xo' is named twice"),
                    ("xo,", "--outputs expects names")):
    rc, out, err = run("linearize", path, "--outputs", bad)
    lines = err.strip().split("\n")
    check(rc == 2 and len(lines) == 1 and needle in lines[0], "--outputs %s: rc %d, %r" % (bad, rc, err))
# symbolic and codegen emit them at rest: the generated Python's D(tension) is the closed form
rc, out, err = run("symbolic", path)
check(rc == 0 and "D (3 x 1)" in out, "symbolic with the tension and der(der(y)): rc %d, %r" % (rc, err))
py = "/usr/bin/python3"
rc, out, err = run("codegen", path, "--lang", "python", "--name", "lm")
check(rc == 0 and "def lm" in out, "codegen with the tension: rc %d, %r" % (rc, err))
if rc == 0 and os.path.exists(py):
    with open(os.path.join(td, "lm.py"), "w") as f:
        f.write(out)
    p = subprocess.run([py, "-c", "import lm; r = lm.lm(); print(repr(float(r['D'][0, 0])), repr(float(abs(r['C'][0]).max())))"],
                       capture_output=True, text=True, cwd=td, timeout=60)
    vals = p.stdout.split()
    check(p.returncode == 0 and len(vals) == 2, "generated Python: %r" % p.stderr)
    if len(vals) == 2:
        check(abs(float(vals[0]) - sin_th / (2 * l)) <= 1e-12 and float(vals[1]) <= 1e-12,
              "generated D(tension) = %s, C = %s; expected %r, 0" % (vals[0], vals[1], sin_th / (2 * l)))
# at a point with motion (the swinging pendulum, th = 0.4, th' = 1.3, state x): T = 2 l lambda(rod) =
# m g cos(th) + m l th'^2 has dT/dx, dT/dx' in closed form and dT/dF = sin(th) (docs/methods.md)
moving = os.path.join(td, "moving.yaml")
th, w = 0.4, 1.3
with open(moving, "w") as f:
    f.write("model: dae\nparameters: {m: 2, l: 1.5, g: 9.81, th0: %r, w0: %r}\n"
            "coordinates: {x: \"l*sin(th0)\", y: \"-l*cos(th0)\"}\n"
            "velocities: {x: \"l*cos(th0)*w0\", y: \"l*sin(th0)*w0\"}\n"
            "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
            "inputs: {F: 0}\nforces: {x: \"F\"}\nconstraints: {rod: \"x^2 + y^2 - l^2\"}\n"
            "outputs: {tension: \"2*l*lambda(rod)\", xo: x}\nlinearize: {at: given, states: [x]}\n" % (th, w))
x, xd = l * math.sin(th), l * math.cos(th) * w
c2 = l * l - x * x
want = (-m * g * x / (l * math.sqrt(c2)) + 2 * m * l * x * xd * xd / (c2 * c2), 2 * m * l * xd / c2, math.sin(th))
rc, out, err = run("codegen", moving, "--lang", "python", "--name", "lm2")
check(rc == 0 and "def lm2" in out, "codegen at a point with motion: rc %d, %r" % (rc, err))
if rc == 0 and os.path.exists(py):
    with open(os.path.join(td, "lm2.py"), "w") as f:
        f.write(out)
    p = subprocess.run([py, "-c", "import lm2; r = lm2.lm2(); print(*map(repr, map(float, (r['C'][0, 0], r['C'][0, 1], r['D'][0, 0]))))"],
                       capture_output=True, text=True, cwd=td, timeout=60)
    vals = p.stdout.split()
    check(p.returncode == 0 and len(vals) == 3, "generated Python (moving): %r" % p.stderr)
    for k in range(min(3, len(vals))):
        check(abs(float(vals[k]) - want[k]) <= 1e-12 * max(1.0, abs(want[k])),
              "moving: generated %s = %s, closed form %r" % (("C_x", "C_xd", "D")[k], vals[k], want[k]))
# with ode states symbolic refuses them, naming --outputs; --outputs drops them
with open(path) as f:
    text = f.read()
with_ode = os.path.join(td, "ode.yaml")
with open(with_ode, "w") as f:
    f.write(text + "ode_states: {i: 0}\node: {i: \"-i + F\"}\n")
rc, out, err = run("symbolic", with_ode)
check(rc == 1 and "output tension depends on accelerations or multipliers" in err and "--outputs" in err,
      "symbolic with ode states: rc %d, %r" % (rc, err))
rc, out, err = run("symbolic", with_ode, "--outputs", "xo", "--format", "json")
check(rc == 0, "symbolic --outputs xo: %r" % err)
rc, out, err = run("codegen", with_ode, "--lang", "python", "--outputs", "xo")
check(rc == 0 and "def " in out, "codegen --outputs xo: %r" % err)
# the multipliers in the text report are named after their source: holonomic (lambda) and
# non-holonomic (mu) alike, by the constraint's key or, in a mechanism, by the joint and equation
EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
rc, out, err = run("linearize", os.path.join(EX, "rolling_disc.yaml"))
check(rc == 0 and "non-holonomic constraint roll_x" in out and "non-holonomic constraint roll_y" in out,
      "mu named by the model's keys: rc %d, %r" % (rc, [l for l in out.splitlines() if "mu[" in l]))
rc, out, err = run("linearize", os.path.join(EX, "mech", "rolling_disc.yaml"))
mus = [l for l in out.splitlines() if l.strip().startswith("mu[")]
check(rc == 0 and len(mus) == 2 and mus[0].endswith("joint roll (rolling_wheel) longitudinal")
      and mus[1].endswith("joint roll (rolling_wheel) lateral"), "mu named after the rolling wheel: %r" % mus)
sys.exit(finish("outputs"))
