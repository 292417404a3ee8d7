"""3-1-3 Euler angles as a spatial body's coordinates (`orientation: euler313`; issue 70, item 4).

- eigenvalues: a body hanging on a spherical joint (full inertia tensor, offset centre of mass, a
  spring, a bushing's rotational stiffness and a constant torque) and a chain of two bodies on a
  revolute and a universal joint (a torsion spring, a damped spring, a torque) give the eigenvalues
  of the same mechanism in Euler parameters to 1e-10 (relative), at orientations away from
  sin(theta) = 0; the Euler-parameter model is the independent reference;
- the initial rates: angular_velocity [wx, wy, wz] at a given point comes back as the measures
  WX, WY, WZ of a marker (the file's numbers) and as the Euler-parameter model's;
- the singular orientation, one line naming the body: in the file's configuration (theta = 0),
  at the operating point (a pendulum along its z axis hangs at theta = 0) and along a simulation
  (an overdamped pendulum creeping to it).

usage: test_euler313.py path/to/mblin"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import Checks, linearize_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REL = 1e-10

PENDULUM = """model: mechanism
name: spatial pendulum along its z axis
space: spatial
parameters: {m: 1, L: 0.5, g: 9.81, c: 5}
ground:
  markers: {pivot: {}}
bodies:
  rod:
    orientation: euler313
    mass: m
    inertia: [0.02, 0.02, 0.001]
    euler: [0.2, THETA, 0.1]
    cm: [0, 0, "-L"]
    markers:
      top: {}
joints:
  ball: {type: spherical, i: top, j: pivot}
forces:
  weight: {type: gravity, g: [0, 0, "-g"]}
EXTRA"""

SPIN = """model: mechanism
name: a free body spinning
space: spatial
orientation: ORIENT
ground: {markers: {o: {}}}
bodies:
  b:
    mass: 2
    inertia: [0.05, 0.07, 0.09, 0.004, -0.003, 0.002]
    euler: [0.3, 1.0, 0.5]
    angular_velocity: [1.5, -2, 3]
    markers: {m: {}}
outputs: {wx: "WX(m)", wy: "WY(m)", wz: "WZ(m)"}
linearize: {at: given}
"""


def eigs(d):
    return sorted((complex(m["re"], m["im"]) for m in d["eigenvalues"]), key=lambda z: (round(z.imag, 6), z.real))


def run(mblin, *args):
    return subprocess.run([mblin, *args], capture_output=True, text=True)


def run_text(mblin, text, *args):
    """mblin ARGS[0] FILE ARGS[1:] on text written to a temporary file"""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        return run(mblin, args[0], f.name, *args[1:])
    finally:
        os.unlink(f.name)


def main():
    mblin = sys.argv[1]
    check = Checks()
    for name in ("euler313_top.yaml.tmpl", "euler313_chain.yaml.tmpl"):
        with open(os.path.join(HERE, name)) as f:
            text = f.read()
        ref, err = linearize_json(mblin, text.replace("ORIENT", "euler_parameters"))
        got, err2 = linearize_json(mblin, text.replace("ORIENT", "euler313"))
        if not check(ref is not None and got is not None, "%s loads and linearizes: %s %s" % (name, err, err2)):
            continue
        coords = got["operating_point"]["coordinates"]
        check(any(c.endswith("_theta") for c in coords) and not any(c.endswith("_e0") for c in coords),
              "%s: the angles are the coordinates (%s)" % (name, " ".join(coords)))
        a, b = eigs(ref), eigs(got)
        dev = max(abs(x - y) / abs(x) for x, y in zip(a, b)) if len(a) == len(b) and a else float("inf")
        check(len(a) == 6 and dev < REL, "%s: %d eigenvalues equal to Euler parameters' (largest relative "
              "difference %.2e < %g), e.g. %s" % (name, len(b), dev, REL, b[-1]))
    # the initial rates
    for orient in ("euler313", "euler_parameters"):
        d, err = linearize_json(mblin, SPIN.replace("ORIENT", orient))
        out = d["operating_point"]["outputs"] if d else []
        check(len(out) == 3 and max(abs(x - y) for x, y in zip(out, (1.5, -2, 3))) < 1e-12,
              "%s: angular_velocity [1.5, -2, 3] held at the given point: W = %s %s" % (orient, out, err))
    # the singular orientation
    r = run_text(mblin, PENDULUM.replace("THETA", "0").replace("EXTRA", ""), "linearize")
    line = r.stderr.strip()
    check(r.returncode != 0 and line.count("\n") == 0 and "body 'rod'" in line and "singular in the file's "
          "configuration" in line and ":8:3:" in line, "theta = 0 in the file: %s" % line)
    r = run_text(mblin, PENDULUM.replace("THETA", "0.3").replace("EXTRA", ""), "linearize")
    line = r.stderr.strip()
    check(r.returncode != 0 and line.count("\n") == 0 and "body 'rod'" in line and "sin(rod_theta)" in line and
          "at the operating point" in line, "hanging at theta = 0: %s" % line)
    damper = "  drag: {type: bushing, i: top, j: pivot, stiffness: [0, 0, 0, 0, 0, 0], damping: [0, 0, 0, c, c, c]}\n"
    r = run_text(mblin, PENDULUM.replace("THETA", "0.3").replace("EXTRA", damper + "linearize: {at: given}\n"),
                 "simulate", "--t-end", "40")
    line = r.stderr.strip()
    check(r.returncode != 0 and line.count("\n") == 0 and "body 'rod'" in line and "sin(rod_theta)" in line and
          " at t = " in line, "an overdamped pendulum creeping to theta = 0: %s" % line)
    print("%d failure(s)" % check.fails)
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
