"""Natural-coordinate bodies in mechanism files (`type: natural`; issue 70, item 2; source 002
Sec. 2, Eq. 4-13).

- source 002 Example 1 (the double pendulum) as a mechanism of two natural bodies sharing their
  point P2: its coordinates are the source's (x1 y1 x2 y2 x3 y3), its eigenvalues those of the
  hand-written equations (examples/double_pendulum_natural.yaml) to 1e-10, and `mblin symbolic`
  prints from it the same H_x, K-hat (text identical) and M-hat (M11, M22 identical; M12 the
  source's m2/6 within 1e-15: 1/2 - 1/3 in doubles) as from the hand-written file;
- two natural links with centres of mass off the line of their points, a marker turned on a link,
  a spring, a torsion spring, a force and a torque: the eigenvalues of the same mechanism with
  rigid bodies (position and angle coordinates) to 1e-10, and a simulation from a given moving
  state the same joint angle to 1e-6 (the mass matrix and forces away from rest);
- spatial (two points and two unit vectors, Eq. 10): a body hanging on a spherical joint (full
  inertia tensor, offset centre of mass, a spring, a bushing, a torque) and a chain of two bodies
  on a revolute and a universal joint (a marker turned on a natural body, a torsion spring, a
  damped spring, a torque) give the eigenvalues and outputs of the same mechanisms with Euler
  parameters to 1e-10; a free body spinning on a spring under a force and a torque, simulated for
  1 s, the same point positions and angular velocities to 1e-6;
- errors: a third point, a point given twice on one body, a vector not of unit length, points and
  vectors that span no frame, a point named as a rigid body (their coordinates clash).

usage: test_natural.py path/to/mblin"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import Checks, linearize_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL = 1e-10

GE1 = """model: mechanism
name: double pendulum, natural coordinates (source 002 Example 1)
space: planar
parameters: {m1: 2, m2: 1.5, L1: 1.2, L2: 0.8, g: 9.81}
ground:
  markers: {O: {}}
bodies:
  rod1:
    type: natural
    mass: m1
    inertia: m1*L1^2/12
    cm: [0, "-L1/2"]
    points: {P1: [0, 0], P2: [0, "-L1"]}
    angle: 0.1
  rod2:
    type: natural
    mass: m2
    inertia: m2*L2^2/12
    cm: [0, "-L2/2"]
    position: [0.1, -1.1]
    points: {P2: [0, 0], P3: [0, "-L2"]}
joints:
  pin: {type: revolute, i: P1, j: O}
forces:
  weight: {type: gravity, g: [0, "-g"]}
linearize:
  at: equilibrium
  states: [P2_x, P3_x]
"""

LINKS = """model: mechanism
name: two links, offset centres of mass, springs and a torque
space: planar
parameters: {m1: 1.3, m2: 0.9, J1: 0.07, J2: 0.04, g: 9.81, k: 30, kt: 4, c: 0.6}
ground:
  markers:
    O: {position: [0.28283773, -0.17508602]}
    anchor: {position: [1.3, -1.2]}
bodies:
  link1:
    TYPE
    mass: m1
    inertia: J1
    cm: [0.4, 0.12]
    position: [0.2, -0.1]
    angle: -1.2
    RATE1
    POINTS1
    markers:
      MARKERS1
      side: {position: [0.5, 0.2], angle: 0.3}
  link2:
    TYPE
    mass: m2
    inertia: J2
    cm: [0.3, -0.15]
    position: [0.27003952, -1.23191833]
    angle: -0.4
    RATE2
    POINTS2
    markers:
      MARKERS2
joints:
  pin: {type: revolute, i: A, j: O}
  KNEE
forces:
  weight: {type: gravity, g: [0, "-g"]}
  spr: {type: spring, i: C, j: anchor, stiffness: k, damping: c, length: 0.3}
  tor: {type: torsion, i: side, j: O, stiffness: kt, damping: 0.05}
  push: {type: force, i: C, force: [0.5, -0.2], torque: 0.3}
outputs: {hinge: "JQ(pin)"}
AT"""

# link1 turning at 1.5 rad/s about A, link2 at -0.7 rad/s: the origins' velocities that keep A at
# rest and B common (numbers of the geometry above)
RATES = ("angular_velocity: 1.5\n    velocity: [-0.11262903130933341, -0.12425659461904302]",
         "angular_velocity: -0.7\n    velocity: [1.0201842338906428, 0.33913549633198103]")


def links(natural, given):
    s = LINKS.replace("TYPE", "type: natural" if natural else "type: rigid")
    if natural:
        s = s.replace("POINTS1", "points: {A: [0.1, 0.05], B: [0.9, -0.1]}")
        s = s.replace("POINTS2", "points: {B: [0.05, 0.3], C: [0.7, -0.2]}")
        s = s.replace("      MARKERS1\n", "").replace("    markers:\n      MARKERS2\n", "").replace("  KNEE\n", "")
    else:
        s = s.replace("    POINTS1\n", "").replace("    POINTS2\n", "")
        s = s.replace("MARKERS1", "A: {position: [0.1, 0.05]}\n      B: {position: [0.9, -0.1]}")
        s = s.replace("MARKERS2", "B2: {position: [0.05, 0.3]}\n      C: {position: [0.7, -0.2]}")
        s = s.replace("KNEE", "knee: {type: revolute, i: B2, j: B}")
    if given:
        s = s.replace("RATE1", RATES[0]).replace("RATE2", RATES[1]).replace("AT", "linearize: {at: given}\n")
    else:
        s = s.replace("    RATE1\n", "").replace("    RATE2\n", "").replace("AT", "")
    return s


def run_text(mblin, text, *args):
    """mblin ARGS[0] FILE ARGS[1:] on text written to a temporary file"""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([mblin, args[0], f.name, *args[1:]], capture_output=True, text=True)
    finally:
        os.unlink(f.name)


def eigs(d):
    return sorted((complex(m["re"], m["im"]) for m in d["eigenvalues"]), key=lambda z: (round(z.imag, 6), z.real))


def same_eigs(check, a, b, what):
    dev = max(abs(x - y) / abs(x) for x, y in zip(a, b)) if len(a) == len(b) and a else float("inf")
    check(dev < REL, "%s: %d eigenvalues equal (largest relative difference %.2e < %g)" % (what, len(a), dev, REL))


def value(text, p):
    """a printed expression at the parameter values p"""
    return eval(text.replace("^", "**"), {}, dict(p))


def symbolic_checks(mblin, check, ge1):
    r = run_text(mblin, GE1, "symbolic", "--format", "json")
    h = subprocess.run([mblin, "symbolic", ge1, "--format", "json"], capture_output=True, text=True)
    if not check(r.returncode == 0 and h.returncode == 0, "symbolic on both files: %s %s" % (r.stderr.strip(), h.stderr.strip())):
        return
    a, b = json.loads(r.stdout), json.loads(h.stdout)
    check(a["H"] == b["H"], "H_x the same: %s" % a["H"])
    check(a["K"] == b["K"], "K-hat the same text: %s" % a["K"])
    check(a["M"][0][0] == b["M"][0][0] and a["M"][1][1] == b["M"][1][1], "M-hat's diagonal the same text: %s, %s"
          % (a["M"][0][0], a["M"][1][1]))
    rng = random.Random(7)
    dev = 0.0
    for _ in range(20):
        p = {n: v * rng.uniform(0.5, 2) for n, v in (("m1", 2), ("m2", 1.5), ("L1", 1.2), ("L2", 0.8), ("g", 9.81))}
        # source 002 Eq. 55 and Eq. 56 (with the sign erratum of papers/README.md)
        Mc = [[(p["m1"] + p["m2"]) / 3, p["m2"] / 6], [p["m2"] / 6, p["m2"] / 3]]
        k11 = p["g"] * (p["m1"] * p["L2"] + p["m2"] * (2 * p["L2"] + p["L1"])) / (2 * p["L1"] * p["L2"])
        Kc = [[k11, -p["m2"] * p["g"] / (2 * p["L2"])], [-p["m2"] * p["g"] / (2 * p["L2"]), p["m2"] * p["g"] / (2 * p["L2"])]]
        for i in range(2):
            for j in range(2):
                dev = max(dev, abs(value(a["M"][i][j], p) - Mc[i][j]) / abs(Mc[i][j]),
                          abs(value(a["K"][i][j], p) - Kc[i][j]) / abs(Kc[i][j]))
    check(dev < 1e-15, "M-hat and K-hat from the mechanism file are source 002's Eq. 55-56 at 20 parameter "
          "sets (largest relative difference %.2e < 1e-15; M12 printed %s)" % (dev, a["M"][0][1]))


HERE = os.path.dirname(os.path.abspath(__file__))
NAT_TOP = ("""    markers:
      top: {position: [0.2, 0.1, 0.45]}
      side: {position: [0.3, 0.2, -0.1]}""", """    type: natural
    points: {top: [0.2, 0.1, 0.45], side: [0.3, 0.2, -0.1]}
    vectors: {ex: [1, 0, 0], ey: [0, 1, 0]}""")
NAT_CHAIN = [("""    markers:
      top: {position: [0.05, 0.1, 0.3]}
      low: {position: [-0.05, 0.05, -0.25]}""", """    type: natural
    points: {top: [0.05, 0.1, 0.3], low: [-0.05, 0.05, -0.25]}
    vectors: {ax: [0.6, 0.8, 0], ay: [0, 0, 1]}"""), ("""    markers:
      u:""", """    type: natural
    points: {tip: [0.1, 0.1, -0.2], bq: [0.2, -0.1, 0.1]}
    vectors: {bx: [0, 1, 0], bz: [0, 0.6, 0.8]}
    markers:
      u:"""), ("""      tip: {position: [0.1, 0.1, -0.2]}
""", "")]
FREE = """model: mechanism
name: a free body spinning on a spring
space: spatial
parameters: {m: 2, g: 9.81, k: 40}
ground:
  markers: {anchor: {position: [0.8, 0.3, -0.2]}}
bodies:
  b:
    mass: m
    inertia: [0.05, 0.07, 0.09, 0.004, -0.003, 0.002]
    cm: [0.1, -0.05, 0.02]
    position: [0.1, 0.05, -0.5]
    euler: [0.3, 1.0, 0.5]
    velocity: [0.3, -0.2, 0.5]
    angular_velocity: [1.5, -2, 3]
    markers:
      top: {position: [0.2, 0.1, 0.45]}
      side: {position: [0.3, 0.2, -0.1]}
forces:
  weight: {type: gravity, g: [0, 0, "-g"]}
  spr: {type: spring, i: side, j: anchor, stiffness: k, length: 0.3}
  twist: {type: force, i: side, torque: [0.1, 0.2, -0.3], force: [0.2, 0, 0.1]}
outputs: {x: "DX(top)", y: "DY(top)", z: "DZ(top)", wx: "WX(side)", wy: "WY(side)", wz: "WZ(side)"}
linearize: {at: given}
"""


SHARED = """model: mechanism
name: a spatial double pendulum on two parallel revolute joints
space: spatial
parameters: {m1: 1.2, m2: 0.7, g: 9.81}
ground:
  markers: {g: {zaxis: [1, 0, 0]}}
bodies:
  a:
    mass: m1
    inertia: [0.1, 0.09, 0.02, 0.003, 0.001, -0.002]
    cm: [0.05, 0.02, -0.5]
    markers:
      hinge_a: {zaxis: [1, 0, 0]}
      k_a: {position: [0, 0, -1], zaxis: [1, 0, 0]}
  b:
    mass: m2
    inertia: [0.05, 0.04, 0.01]
    cm: [0.03, -0.02, -0.4]
    position: [0, 0, -1]
    markers:
      k_b: {zaxis: [1, 0, 0]}
joints:
  top: {type: revolute, i: hinge_a, j: g}
  knee: {type: revolute, i: k_b, j: k_a}
forces:
  weight: {type: gravity, g: [0, 0, "-g"]}
"""
# the knee as the source makes a joint: body b shares the point k and the axis ax of body a
NAT_SHARED = [("""    markers:
      hinge_a: {zaxis: [1, 0, 0]}
      k_a: {position: [0, 0, -1], zaxis: [1, 0, 0]}""", """    type: natural
    points: {o: [0, 0, 0], k: [0, 0, -1]}
    vectors: {ax: [1, 0, 0], ay: [0, 1, 0]}
    markers:
      hinge_a: {zaxis: [1, 0, 0]}"""), ("""    markers:
      k_b: {zaxis: [1, 0, 0]}""", """    type: natural
    points: {k: [0, 0, 0], e: [0, 0, -0.8]}
    vectors: {ax: [1, 0, 0], bz: [0, 0.6, 0.8]}"""), ("""  knee: {type: revolute, i: k_b, j: k_a}
""", "")]


def natural_of(text, subs):
    for a, b in subs:
        if a not in text:
            raise SystemExit("test_natural.py: the template lacks %r" % a)
        text = text.replace(a, b)
    return text


def simulated(mblin, text, names):
    """the columns `names` of a 1 s simulation at 0, 0.5, 1 s"""
    with tempfile.TemporaryDirectory() as d:
        r = run_text(mblin, text, "simulate", "--t-end", "1", "--dt-out", "0.5", "--rtol", "1e-10", "--atol", "1e-12",
                     "-o", os.path.join(d, "run.csv"))
        if r.returncode:
            return [], r.stderr.strip()
        with open(os.path.join(d, "run.csv")) as f:
            head = f.readline().strip().split(",")
            return [float(line.split(",")[head.index(n)]) for line in f for n in names], ""


def spatial_checks(mblin, check):
    with open(os.path.join(HERE, "euler313_top.yaml.tmpl")) as f:
        top = f.read().replace("ORIENT", "euler_parameters")
    top += 'outputs: {sx: "DX(side)", sy: "DY(side)", sz: "DZ(side)", ax: "AX(side, anchor)"}\n'
    with open(os.path.join(HERE, "natural_chain.yaml.tmpl")) as f:
        chain = f.read()
    for name, text, subs in (("hanging body", top, [NAT_TOP]), ("chain", chain, NAT_CHAIN),
                             ("double pendulum, a shared point and axis as the knee", SHARED, NAT_SHARED)):
        ref, err = linearize_json(mblin, text)
        got, err2 = linearize_json(mblin, natural_of(text, subs))
        if not check(ref is not None and got is not None, "spatial %s, Euler parameters and natural: %s %s"
                     % (name, err, err2)):
            continue
        check(any(c in ("ex_x", "bz_z") for c in got["operating_point"]["coordinates"]),
              "%s: the vectors' coordinates (%d coordinates)" % (name, len(got["operating_point"]["coordinates"])))
        same_eigs(check, eigs(ref), eigs(got), "spatial %s, natural against Euler parameters" % name)
        a, b = ref["operating_point"]["outputs"], got["operating_point"]["outputs"]
        if a:
            check(len(a) == len(b) and all(abs(x - y) < 1e-10 for x, y in zip(a, b)), "%s: the outputs at the point %s"
                  % (name, b))
    names = ["x", "y", "z", "wx", "wy", "wz"]
    a, err = simulated(mblin, FREE, names)
    b, err2 = simulated(mblin, natural_of(FREE, [NAT_TOP]), names)
    dev = max(abs(x - y) for x, y in zip(a, b)) if len(a) == 18 and len(b) == 18 else float("inf")
    check(dev < 1e-6, "a free body spinning, 1 s simulated: natural and Euler parameters within %.1e (< 1e-6) %s %s"
          % (dev, err, err2))
    bad = natural_of(top, [NAT_TOP]).replace("ey: [0, 1, 0]", "ey: [0, 1.1, 0]")
    r = run_text(mblin, bad, "linearize")
    check(r.returncode != 0 and "vector 'ey': not a unit vector" in r.stderr, "a vector not of unit length: %s" % r.stderr.strip())
    bad = natural_of(top, [NAT_TOP]).replace("ex: [1, 0, 0], ey: [0, 1, 0]", "ex: [1, 0, 0], ey: [1, 0, 0]")
    r = run_text(mblin, bad, "linearize")
    check(r.returncode != 0 and "do not span space" in r.stderr, "parallel vectors: %s" % r.stderr.strip())


def main():
    mblin = sys.argv[1]
    check = Checks()
    spatial_checks(mblin, check)
    ge1 = os.path.join(ROOT, "examples", "double_pendulum_natural.yaml")
    with open(ge1) as f:
        hand = f.read()
    ref, err = linearize_json(mblin, hand)
    got, err2 = linearize_json(mblin, GE1)
    if check(ref is not None and got is not None, "source 002 Example 1 from bodies: %s %s" % (err, err2)):
        c = got["operating_point"]["coordinates"]
        check(c == ["P1_x", "P1_y", "P2_x", "P2_y", "P3_x", "P3_y"], "the source's coordinates: %s" % " ".join(c))
        same_eigs(check, eigs(ref), eigs(got), "source 002 Example 1 against the hand-written equations")
    symbolic_checks(mblin, check, ge1)
    ref, err = linearize_json(mblin, links(False, False))
    got, err2 = linearize_json(mblin, links(True, False))
    if check(ref is not None and got is not None, "two links, rigid and natural: %s %s" % (err, err2)):
        same_eigs(check, eigs(ref), eigs(got), "two natural links against rigid bodies")
        check(len(got["operating_point"]["q"]) == 6, "the natural links' 6 coordinates (A, B, C)")
    hinge = []
    for natural in (False, True):
        with tempfile.TemporaryDirectory() as d:
            r = run_text(mblin, links(natural, True), "simulate", "--t-end", "1", "--dt-out", "0.25", "--rtol", "1e-10",
                         "--atol", "1e-12", "-o", os.path.join(d, "run.csv"))
            rows = []
            if r.returncode == 0:
                with open(os.path.join(d, "run.csv")) as f:
                    head = f.readline().strip().split(",")
                    rows = [float(line.split(",")[head.index("hinge")]) for line in f]
            hinge.append(rows)
    dev = max(abs(x - y) for x, y in zip(*hinge)) if len(hinge[0]) == 5 and len(hinge[1]) == 5 else float("inf")
    check(dev < 1e-6, "simulated from a moving state: JQ(pin) of natural and rigid links within %.1e (< 1e-6): %s"
          % (dev, hinge[1]))
    bad = links(True, False).replace("points: {A: [0.1, 0.05], B: [0.9, -0.1]}",
                                     "points: {A: [0.1, 0.05], B: [0.9, -0.1], D: [0, 1]}")
    r = run_text(mblin, bad, "linearize")
    check(r.returncode != 0 and "body 'link1'" in r.stderr and "'points' must name 2 points" in r.stderr,
          "a third point: %s" % r.stderr.strip())
    bad = links(True, False).replace("points: {A: [0.1, 0.05], B: [0.9, -0.1]}", "points: {A: [0.1, 0.05], A: [0.9, -0.1]}")
    r = run_text(mblin, bad, "linearize")
    check(r.returncode != 0 and r.stderr.count("\n") == 1 and "'A'" in r.stderr, "a point twice: %s" % r.stderr.strip())
    bad = GE1.replace("P1", "rod2").replace("""  rod2:
    type: natural
    mass: m2
    inertia: m2*L2^2/12
    cm: [0, "-L2/2"]
    position: [0.1, -1.1]
    points: {P2: [0, 0], P3: [0, "-L2"]}""", """  rod2:
    mass: m2
    inertia: m2*L2^2/12
    position: [0.1, -1.1]""").replace("  states: [P2_x, P3_x]\n", "")
    r = run_text(mblin, bad, "linearize")
    check(r.returncode != 0 and r.stderr.count("\n") == 1 and "coordinate 'rod2_x' is made twice" in r.stderr,
          "a point named as a rigid body: %s" % r.stderr.strip())
    print("%d failure(s)" % check.fails)
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
