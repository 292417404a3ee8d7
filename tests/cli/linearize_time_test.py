#!/usr/bin/env python3
"""`--time T` of the linearize pipeline (issue 70, item 8): the operating point of a driven model at
time T, against closed forms.

  - a forced Duffing oscillator (model: dae), m x'' + k x + k3 x^3 = F cos(w t): its equilibrium at
    time T solves k x + k3 x^3 = F cos(w T) (bisection here; the cubic is monotone) and its
    frequency is sqrt((k + 3 k3 x^2) / m); `linearize --time T` at T = 0, 0.4, 1.3 and
    `equilibrium --time T` give them (1e-9), the JSON's operating_point.t is T;
  - --time replaces the file's linearize.time (5 in the file, 0.4 on the command line);
  - a mechanism driven by a driver: a mass m on a rail along x, a spring (k, rest length L0) to an
    anchor that a driver lifts to y = 2 + sin(t): at time T the rail's frequency is
    sqrt(k (1 - L0 / (2 + sin T)) / m) (1e-9);
  - usage errors: --time without a number, with a text that is no number or one that overflows
    (1e999): exit 2, one line.
usage: linearize_time_test.py PATH_TO_MBLIN (from the repository root)"""
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
TOL = 1e-9
m, k, k3, F, w = 2.0, 50.0, 400.0, 30.0, 3.0
DUFFING = f"""model: dae
name: forced Duffing
parameters: {{m: {m}, k: {k}, k3: {k3}, F: {F}, w: {w}}}
coordinates: {{x: 0}}
kinetic_energy: "0.5*m*der(x)^2"
potential_energy: "0.5*k*x^2 + 0.25*k3*x^4"
forces: {{x: "F*cos(w*t)"}}
"""
mm, kk, L0 = 1.5, 100.0, 1.0
DRIVEN = f"""model: mechanism
name: mass on a rail, spring to a driven anchor
space: planar
parameters: {{m: {mm}, k: {kk}, L0: {L0}}}
ground:
  markers:
    rail: {{}}
    post: {{angle: pi/2}}
bodies:
  mass:
    mass: m
    inertia: 1
    markers: {{mk: {{}}}}
  anchor:
    mass: 1
    inertia: 1
    position: [0, 2]
    markers: {{ak: {{}}}}
joints:
  slide: {{type: prismatic, i: mk, j: rail}}
  lift: {{type: prismatic, i: ak, j: post}}
drivers:
  d: {{joint: lift, motion: "2 + sin(t)"}}
forces:
  spring: {{type: spring, i: mk, j: ak, stiffness: k, length: L0}}
linearize:
  at: equilibrium
"""


def duffing_x(T):
    f = F * math.cos(w * T)
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if k * mid + k3 * mid ** 3 < f:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def top_freq(o):
    return max(e["im"] for e in o["eigenvalues"])


def json_of(*args):
    rc, out, err = run(*args)
    return (json.loads(out), "") if rc == 0 else (None, err.strip())


with tempfile.TemporaryDirectory() as tmp:
    duff = os.path.join(tmp, "duffing.yaml")
    with open(duff, "w") as f:
        f.write(DUFFING)
    for T in (0.0, 0.4, 1.3):
        x = duffing_x(T)
        wr = math.sqrt((k + 3 * k3 * x * x) / m)
        o, err = json_of("linearize", duff, "--time", repr(T), "--json", "--no-matrices")
        if check(o is not None, f"Duffing, linearize --time {T}: {err}"):
            op = o["operating_point"]
            check(op["t"] == T, f"Duffing T = {T}: operating_point.t {op['t']}")
            check(abs(op["q"][0] - x) <= TOL * max(1, abs(x)), f"Duffing T = {T}: x {op['q'][0]!r} = {x!r}")
            check(abs(top_freq(o) / wr - 1) <= TOL, f"Duffing T = {T}: omega {top_freq(o)!r} = {wr!r}")
        o, err = json_of("equilibrium", duff, "--time", repr(T), "--json")
        if check(o is not None, f"Duffing, equilibrium --time {T}: {err}"):
            q = o["q"] if "q" in o else o.get("operating_point", {}).get("q", [math.nan])
            check(abs(q[0] - x) <= TOL * max(1, abs(x)), f"Duffing, equilibrium --time {T}: x {q[0]!r} = {x!r}")
    # --time over the file's linearize.time
    with open(duff, "a") as f:
        f.write("linearize:\n  time: 5\n")
    o5, _ = json_of("linearize", duff, "--json", "--no-matrices")
    o4, _ = json_of("linearize", duff, "--time", "0.4", "--json", "--no-matrices")
    check(o5 is not None and abs(o5["operating_point"]["q"][0] - duffing_x(5.0)) <= TOL,
          "the file's linearize.time 5 without --time")
    check(o4 is not None and o4["operating_point"]["t"] == 0.4 and abs(o4["operating_point"]["q"][0] - duffing_x(0.4)) <= TOL,
          "--time 0.4 replaces the file's linearize.time 5")

    drv = os.path.join(tmp, "driven.yaml")
    with open(drv, "w") as f:
        f.write(DRIVEN)
    for T in (0.0, 0.7, 2.0):
        wr = math.sqrt(kk * (1 - L0 / (2 + math.sin(T))) / mm)
        o, err = json_of("linearize", drv, "--time", repr(T), "--json", "--no-matrices")
        if check(o is not None, f"driven anchor, --time {T}: {err}"):
            check(abs(top_freq(o) / wr - 1) <= TOL, f"driven anchor T = {T}: omega {top_freq(o)!r} = {wr!r}")

    for bad, needle in (("abc", "--time expects a number, got 'abc'"), ("1e999", "--time expects a number, got '1e999'")):
        rc, out, err = run("linearize", duff, "--time", bad)
        lines = err.strip().split("\n")
        check(rc == 2 and len(lines) == 1 and needle in lines[0], f"--time {bad}: exit 2, one line ({rc}: {err.strip()})")
    rc, out, err = run("linearize", duff, "--time")
    check(rc == 2 and len(err.strip().split("\n")) == 1, f"--time without its value: exit 2, one line ({rc}: {err.strip()})")

sys.exit(finish("linearize_time_test"))
