#!/usr/bin/env python3
"""Issue 30, items 1 and 7, end to end.

Item 1: the 1-loop damped four-bar (examples/fourbar_N1_damped.yaml) with the user state phi
(yB1 = l sin(phi)) stops being described by phi at the vertical configuration phi = pi/2, which
is its equilibrium for m up to about 0.64 (and, as a spurious point of the DAE, for
L0 = 2.404163056). There the linearization was answered with eigenvalues of 5e8 to 2e14 rad/s.
Every method that takes the user's states must refuse it, with one line naming the state; a
sweep marks the points and goes on; sensitivity refuses too. At m = 0.3 (the branch point reached
exactly) `--method descriptor` answers in tangent coordinates with the closed form of the
vertical configuration in the crank angle theta: M = 5m/3, C = c/2, K = k/2 - 2 m g (the spring
and gravity terms of the potential to second order in theta - pi/2).

Item 7: a given point that is not an equilibrium or steady motion gets a note naming the largest
residual acceleration, with its value; exit 0.
usage: singular_states_test.py PATH_TO_MBLIN (run from the repository root)"""
import cmath
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
FOURBAR = "examples/fourbar_N1_damped.yaml"


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def eigs(out):
    d = json.loads(out)
    return sorted((complex(e["re"], e["im"]) for e in d["eigenvalues"] if not e["spurious"]),
                  key=lambda s: (round(s.imag, 6), s.real))


# ---- item 1: singular points refused by every method that takes the user's states ----
SINGULAR = ["m=0.3", "m=0.4", "m=0.5", "m=0.6", "L0=2.404163056"]
METHODS = ["augmented", "partition", "nullspace", "projection", "fd"]
for s in SINGULAR:
    for meth in METHODS:
        rc, out, err = run("linearize", FOURBAR, "--set", s, "--method", meth)
        lines = err.strip().split("\n")
        check(rc == 1 and out == "" and len(lines) == 1 and lines[0].startswith("mblin: "),
              f"{s} {meth}: refused with one line (rc {rc}, {err.strip()[:200]!r})")
        # the state named, or the rank deficiency (the branch point reached exactly), or fd's own
        # refusal where its differences straddle the point
        check("phi" in err or "rank 3 < 4" in err or "did not converge" in err,
              f"{s} {meth}: the reason names the state or the rank ({err.strip()[:200]!r})")
        if s in ("m=0.4", "m=0.5", "m=0.6") and meth != "fd":
            check("state phi stops describing the motion" in err and "descriptor" in err,
                  f"{s} {meth}: names the state phi and suggests descriptor")

# the branch point reached exactly: descriptor (no states needed) gives the closed form
g, k, c = 9.81, 25.0, 1.0


def closed_form(m):
    M, C, K = 5 * m / 3, c / 2, k / 2 - 2 * m * g
    r = cmath.sqrt(C * C - 4 * M * K)
    return sorted([(-C + r) / (2 * M), (-C - r) / (2 * M)], key=lambda s: (round(s.imag, 6), s.real))


rc, out, err = run("linearize", FOURBAR, "--set", "m=0.3", "--method", "descriptor", "--json")
check(rc == 0, f"m=0.3 descriptor answers ({err.strip()[:200]!r})")
if rc == 0:
    got, want = eigs(out), closed_form(0.3)
    check(len(got) == 2 and all(abs(a - b) <= 1e-7 * abs(b) for a, b in zip(got, want)),
          f"m=0.3 descriptor: {got} against the closed form {want}")

# nearby regular points: still answered, every method agreeing to 1e-9
for s in ["m=0.7", "m=1"]:
    ref = None
    for meth in ["augmented", "partition", "nullspace", "projection", "descriptor"]:
        rc, out, err = run("linearize", FOURBAR, "--set", s, "--method", meth, "--json")
        check(rc == 0 and err == "", f"{s} {meth}: answered quietly ({err.strip()[:200]!r})")
        if rc:
            continue
        e = eigs(out)
        if ref is None:
            ref = e
        else:
            check(len(e) == len(ref) and all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(e, ref)),
                  f"{s} {meth}: {e} against augmented {ref}")

# a sweep over m marks the singular points and goes on
rc, out, err = run("sweep", FOURBAR, "--param", "m=0.3:1.0:8")
rows = [r.split(",") for r in out.strip().split("\n")[1:]]
check(rc == 0 and len(rows) == 16, f"sweep: exit 0, 8 points x 2 branches ({rc}, {len(rows)} rows)")
for r in rows:
    m = float(r[0])
    if m < 0.65:
        check(r[2] == "nan" and r[3] == "nan", f"sweep: the singular point m = {m} is marked, not answered ({r})")
    else:
        check(math.isfinite(float(r[3])) and abs(float(r[3])) < 10, f"sweep: m = {m} answered ({r})")
check("4 of 8 points failed" in err and err.count("state phi stops describing the motion") == 3,
      f"sweep: the refused points named on stderr ({err[:300]!r})")
rc1, out1, _ = run("linearize", FOURBAR, "--set", "m=0.8", "--json")
if rc1 == 0 and rc == 0:
    e = eigs(out1)
    sw = sorted((complex(float(r[2]), float(r[3])) for r in rows if abs(float(r[0]) - 0.8) < 1e-9),
                key=lambda s: (round(s.imag, 6), s.real))
    check(all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(sw, e)), f"sweep at m = 0.8 {sw} equals linearize {e}")

# sensitivity refuses the same point
rc, out, err = run("sensitivity", FOURBAR, "--set", "m=0.5")
check(rc == 1 and "state phi stops describing the motion" in err, f"sensitivity at m = 0.5 refused ({err[:200]!r})")
rc, out, err = run("sensitivity", FOURBAR, "--set", "m=1")
check(rc == 0, "sensitivity at m = 1 answered")

# ---- item 7: the residual accelerations of a given point ----
DISC = """model: mechanism
name: spinning disc on a bushing with rotational stiffness and a torque preload
space: spatial
parameters: {m: 2, Id: 0.01, Ip: 0.02, k: 1e4, kr: 50, Omega: 30, T0: 0.3}
ground:
  markers:
    G: {}
bodies:
  disc:
    mass: m
    inertia: [Id, Id, Ip]
    angular_velocity: [0, 0, Omega]
    markers:
      c: {}
forces:
  mount: {type: bushing, i: c, j: G, stiffness: [k, k, k, kr, kr, kr], preload: [0, 0, 0, 0, 0, T0]}
linearize:
  at: given
"""
TORSION = """model: dae
name: disc on a torsion spring, spinning
parameters: {J: 0.02, kt: 50, Omega: 30, th0: 0.1}
coordinates: {th: th0}
velocities: {th: Omega}
kinetic_energy: "0.5*J*der(th)^2"
potential_energy: "0.5*kt*th^2"
linearize:
  at: given
"""
PENDULUM = """model: dae
name: pendulum hanging at rest
parameters: {m: 1, l: 2, g: 9.81}
coordinates: {x: 0, y: -l}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2)"
potential_energy: "m*g*y"
constraints: ["x^2 + y^2 - l^2"]
linearize:
  at: given
"""
with tempfile.TemporaryDirectory() as d:
    def model(name, text):
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    disc, tors, pend = model("disc.yaml", DISC), model("torsion.yaml", TORSION), model("pendulum.yaml", PENDULUM)

    def note_value(err, coord):
        key = f"residual acceleration der(der({coord})) = "
        if key not in err:
            return None
        return float(err.split(key)[1].split()[0])

    # the preload T0 accelerates the spin: phi'' = T0 / Ip, and with Euler parameters at the
    # aligned orientation e3'' = phi'' / 2 (e3 = sin(phi / 2))
    rc, out, err = run("linearize", disc)
    v = note_value(err, "disc_e3")
    check(rc == 0 and err.startswith("mblin: note: ") and err.count("\n") == 1 and v is not None
          and abs(v - 0.3 / (2 * 0.02)) <= 1e-9 * 7.5 and "a point that moves" in err,
          f"disc: the note names der(der(disc_e3)) = T0 / (2 Ip) = 7.5 ({err[:300]!r})")
    check("residual acceleration der(der(disc_e3))" in out, "disc: the note in the report")
    rc, out, err = run("linearize", disc, "--json")
    d7 = json.loads(out) if rc == 0 else {}
    check("residual acceleration der(der(disc_e3))" in d7.get("operating_point", {}).get("notes", ""),
          "disc: the note in the JSON's operating_point.notes")
    rc, out, err = run("linearize", disc, "--set", "T0=0")
    check(rc == 0 and err == "" and "residual acceleration" not in out,
          f"disc without the preload (a steady spin): no note ({err[:200]!r})")
    # th'' = -kt th0 / J
    rc, out, err = run("linearize", tors)
    v = note_value(err, "th")
    check(rc == 0 and v is not None and abs(v - (-50 * 0.1 / 0.02)) <= 1e-12 * 250,
          f"torsion: th'' = -kt th0 / J = -250 ({err[:200]!r})")
    rc, out, err = run("linearize", tors, "--set", "th0=0")
    check(rc == 0 and err == "", "torsion at th = 0 (spinning, no torque): no note")
    rc, out, err = run("linearize", pend)
    check(rc == 0 and err == "" and "residual acceleration" not in out, f"pendulum at rest given: no note ({err[:200]!r})")
    rc, out, err = run("linearize", pend, "--guess", "x=1", "--guess", "y=-1.7320508075688772")
    check(rc == 0 and "residual acceleration" in err, "pendulum given at 30 degrees: noted")
    # the flexible pendulum given at its own equilibrium (as `mblin equilibrium` finds it): the pin's
    # x1 row has no force there, its terms are rounding (1e-13 over 1e-11): no note
    flex = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "flexible_pendulum_np5.yaml")
    rc, out, err = run("equilibrium", flex, "--json")
    op = json.loads(out)["operating_point"] if rc == 0 else {"coordinates": [], "q": []}
    guesses = [a for c, q in zip(op["coordinates"], op["q"]) for a in ("--guess", f"{c}={q!r}")]
    rc, out, err = run("linearize", flex, "--at", "given", *guesses)
    check(rc == 0 and len(guesses) > 20 and "residual acceleration" not in err,
          f"flexible pendulum given at its equilibrium: no note ({err[:300]!r})")

# issue 65, item 21: an exact equilibrium whose equations' terms all vanish (the 100-link URDF chain
# of bench/chain_urdf.py hanging straight at q = 0: gravity torques of rounding size, 1e-13) gets no
# note; a real non-equilibrium still does, with its closed-form acceleration
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from chain_urdf import chain  # noqa: E402
PEND_TH = """model: dae
name: pendulum given off its equilibrium
parameters: {m: 1, l: 2, g: 9.81, th0: 0.1}
coordinates: {th: th0}
kinetic_energy: "0.5*m*l^2*der(th)^2"
potential_energy: "-m*g*l*cos(th)"
linearize:
  at: given
"""
with tempfile.TemporaryDirectory() as d:
    urdf, pth = os.path.join(d, "chain100.urdf"), os.path.join(d, "pendulum_th.yaml")
    with open(urdf, "w") as f:
        f.write(chain(100))
    with open(pth, "w") as f:
        f.write(PEND_TH)
    rc, out, err = run("linearize", urdf, "--at", "given")
    check(rc == 0 and "residual acceleration" not in err and "residual acceleration" not in out,
          f"100-link chain given at q = 0 (its exact equilibrium): no note ({err[:300]!r})")
    rc, out, err = run("linearize", urdf, "--at", "given", "--guess", "j1_q=0.1")
    check(rc == 0 and "residual acceleration" in err, f"100-link chain given with j1 at 0.1 rad: noted ({err[:200]!r})")
    rc, out, err = run("linearize", pth)
    key = "residual acceleration der(der(th)) = "
    v = float(err.split(key)[1].split()[0]) if key in err else None
    want = -9.81 / 2 * math.sin(0.1)
    check(rc == 0 and v is not None and abs(v - want) <= 1e-5 * abs(want),
          f"pendulum given at 0.1 rad: th'' = -g/l sin(0.1) = {want:.6g} ({err[:200]!r})")

sys.exit(finish("singular_states_test"))
