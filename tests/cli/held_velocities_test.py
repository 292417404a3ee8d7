#!/usr/bin/env python3
"""Issue 33, item 1: held velocities at a given point from the command line. The slider-crank of
tests/opoint/slider_crank_given.yaml writes only its crank's angular velocity, 12 rad/s: the point
has exactly 12 rad/s (before: 11.391, all velocities projected by minimum norm) and the slider's
velocity of the closed form x' = -r w sin th - r^2 w sin th cos th / sqrt(l^2 - r^2 sin^2 th).
--set-velocity NAME=VALUE holds another (a coordinate's rate or a key of the file's velocities);
an unknown name is a usage error (exit 2, like --guess); held velocities that disagree are one
line naming them (exit 1).
usage: held_velocities_test.py PATH_TO_MBLIN"""
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
MODEL = "tests/opoint/slider_crank_given.yaml"
r, l, th = 0.1, 0.4, 0.7


def xdot(w):
    return -r * w * math.sin(th) - r * r * w * math.sin(th) * math.cos(th) / math.sqrt(l * l - (r * math.sin(th)) ** 2)


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def outputs(out):
    op = json.loads(out)["operating_point"]
    return dict(zip(op["output_names"], op["outputs"])), op


def one_line(err, *needles):
    lines = err.strip().split("\n")
    return len(lines) == 1 and lines[0].startswith("mblin: ") and all(n in lines[0] for n in needles)


rc, out, err = run("equilibrium", MODEL, "--json")
y, op = outputs(out) if rc == 0 else ({}, {})
check(rc == 0 and y.get("crank_rate") == 12.0, "the crank's 12 rad/s held exactly: %s %s" % (y.get("crank_rate"), err))
check(rc == 0 and abs(y["slider_v"] - xdot(12)) <= 1e-12 * abs(xdot(12)),
      "slider velocity %r = closed form %r" % (y.get("slider_v"), xdot(12)))
check(rc == 0 and "velocities held: der(crank_th) = 12" in op["notes"] and "der(slider_x) = -0.922834" in op["notes"]
      and "changed by" not in op["notes"], "the note names held and solved velocities: %r" % op.get("notes"))

rc, out, err = run("linearize", MODEL, "--json", "--set-velocity", "crank_th=10")
y, op = outputs(out) if rc == 0 else ({}, {})
check(rc == 0 and y.get("crank_rate") == 10.0 and abs(y["slider_v"] - xdot(10)) <= 1e-12 * abs(xdot(10)),
      "--set-velocity crank_th=10: %s %s" % (y, err))

td = tempfile.mkdtemp()
jv = os.path.join(td, "jv.yaml")
with open(MODEL) as f:
    text = f.read().replace("    angular_velocity: w\n", "")
with open(jv, "w") as f:
    f.write(text + 'velocities: {"JV(pivot)": 12}\n')
for extra, w in (((), 12.0), (("--set-velocity", "JV(pivot)=7.5"), 7.5)):
    rc, out, err = run("equilibrium", jv, "--json", *extra)
    y, op = outputs(out) if rc == 0 else ({}, {})
    check(rc == 0 and y.get("crank_rate") == w and abs(y["slider_v"] - xdot(w)) <= 1e-12 * abs(xdot(w)),
          "JV(pivot) held at %g %s: %s %s" % (w, extra, y, err))

rc, out, err = run("linearize", MODEL, "--set-velocity", "crank_angle=3")
check(rc == 2 and "--set-velocity" in err and "'crank_angle'" in err, "an unknown name is a usage error: %d %r" % (rc, err))
rc, out, err = run("linearize", MODEL, "--set-velocity", "crank_th")
check(rc == 2 and "NAME=VALUE" in err, "--set-velocity without a value: %d %r" % (rc, err))

rc, out, err = run("linearize", MODEL, "--set-velocity", "slider_x=3")
check(rc == 1 and one_line(err, "der(crank_th) = 12", "der(slider_x) = 3", "over-determine"),
      "two held rates that disagree: one line naming them: %d %r" % (rc, err))
rc, out, err = run("equilibrium", MODEL, "--set-velocity", "slider_x=%.17g" % xdot(12))
check(rc == 0, "two held rates that agree are accepted: %d %r" % (rc, err))

sys.exit(finish("held_velocities_test"))
