#!/usr/bin/env python3
"""Issue 65, item 18: a point outside the theory of an element says so in the point's notes.

- A tire's wheel at a standstill: its slip angle atan(lateral / sqrt(u^2 + vmin^2)) is the
  regularisation's, vmin / sqrt(u^2 + vmin^2) = 1 exactly at u = 0 (MBL_MECH_TIRE_SLOW_NOTE
  1e-3): examples/mech/single_track_car.yaml at u = 0 has a note for both tires, at u = 20 m/s
  (share vmin / u = 5e-6) none.
- A beam body stretched beyond small strains: the spinning blade of examples/tutorial (steel,
  E = 2e9, rho = 7850, L = 1 m) at `at: steady`; its tip's axial displacement over L, the mean
  axial strain, is the spinning bar's closed form tan(k L) / (k L) - 1 with k^2 = rho Omega^2 / E:
  0.00328 at 50 rad/s (below MBL_MECH_BEAM_STRAIN_NOTE = 0.01: no note), 0.0558 at 200 rad/s
  (noted, the value to 1 %: the 10-element mesh), -2.16 at 1000 rad/s, past the bar's first axial
  resonance (the tip past the hub: noted, negative, below -1). The same for a spatial beam body.
usage: test_validity_notes.py MBLIN (from the repository root)
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import linearize_json  # noqa: E402

B = sys.argv[1]
fails = 0


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok


def notes(text, *args):
    d, err = linearize_json(B, text, *args)
    if d is None:
        check(False, "mblin failed: " + err)
        return ""
    return d["operating_point"].get("notes", "")


def strain_noted(n, body):
    m = re.search(r"body '%s' \(beam\): the mean axial strain \([^)]*\) (\S+) at the point, beyond" % body, n)
    return float(m.group(1)) if m else None


# tires at a standstill
car = open("examples/mech/single_track_car.yaml").read()
n0 = notes(car, "--set", "u=0")
for t in ("front_tire", "rear_tire"):
    m = re.search(r"joint '%s' \(tire\): [^;]*regularisation (\S+) at the point, beyond" % t, n0)
    check(m is not None and float(m.group(1)) == 1.0,
          f"car at u = 0: {t} noted, the regularisation's share vmin/sqrt(0 + vmin^2) = 1 ({n0[:160]!r})")
n20 = notes(car)
check("(tire)" not in n20, f"car at u = 20 m/s: no tire note ({n20[:160]!r})")


def bar(omega, E=2e9, rho=7850.0, L=1.0):
    """the spinning bar's mean axial strain u(L) / L, u'' + k^2 (u + X) = 0, u(0) = 0, u'(L) = 0"""
    k = omega * math.sqrt(rho / E)
    return math.tan(k * L) / (k * L) - 1


blade = open("examples/tutorial/spinning_blade.yaml").read()
SPATIAL = """model: mechanism
name: spatial blade on a driven hub
parameters: {L: 1, E: 2e9, G: 8e8, rho: 7850, r: 0.01, Omega: 0}
ground:
  markers: {o: {}}
bodies:
  blade: {type: beam, length: L, elements: 10, E: E, G: G, rho: rho, radius: r, markers: {root: {node: 1}}}
joints:
  hub: {type: revolute, i: root, j: o}
drivers:
  spin: {joint: hub, motion: Omega*t}
linearize:
  at: steady
"""
for kind, text in (("planar", blade), ("spatial", SPATIAL)):
    v = strain_noted(notes(text, "--set", "Omega=50"), "blade")
    check(v is None, f"{kind} blade at 50 rad/s (closed form {bar(50):.3g}): no strain note")
    v = strain_noted(notes(text, "--set", "Omega=200"), "blade")
    check(v is not None and abs(v - bar(200)) <= 0.01 * bar(200),
          f"{kind} blade at 200 rad/s: strain noted {v}, closed form {bar(200):.4g}")
    v = strain_noted(notes(text, "--set", "Omega=1000"), "blade")
    check(v is not None and v < -1 and abs(v - bar(1000)) <= 0.05 * abs(bar(1000)),
          f"{kind} blade at 1000 rad/s: the tip past the hub noted, strain {v} (closed form {bar(1000):.4g})")

print("all passed" if not fails else f"{fails} failed")
sys.exit(1 if fails else 0)
