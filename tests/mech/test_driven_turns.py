#!/usr/bin/env python3
"""Issue 30, item 2: a spatial revolute joint driven past half a turn in absolute coordinates.

A rod pendulum (mass m, length L, axial inertia C) hinged at the top of a vertical shaft whose
revolute joint is driven by `motion: Omega*t`. Its relative equilibrium is the same at every t:
the tilt th0 with cos th0 = m g L / (2 Omega^2 (J - C)), J = m L^2 / 3, and the swing frequency
w^2 = (J - C) Omega^2 sin^2 th0 / J (Lagrangian of the hinge angle in the shaft's frame). The
file places both bodies at that relative equilibrium at time T with `euler` angles (so the file's
joint angle is the principal value of Omega T) and `at: given`: before the fix, at Omega T = 4.5
the driver was off by 2 pi, the projection moved the point elsewhere and the swing mode came out
at 8.99 rad/s (at 18 rad no point at all). Checked at t = 0, 0.25, 0.5, 1, 2 in absolute and
relative coordinates against the closed form. Usage: test_driven_turns.py MBLIN
"""
import json
import math
import os
import subprocess
import sys
import tempfile

B = sys.argv[1]
m, L, g, Om, C = 1.0, 0.5, 9.81, 9.0, 0.001
J = m * L * L / 3
th0 = math.acos(m * g * L / (2 * Om * Om * (J - C)))
w = math.sqrt((J - C) * Om * Om * math.sin(th0) ** 2 / J)


def model(coords, T):

    return f'''model: mechanism
name: pendulum on a driven vertical shaft
space: spatial
coordinates: {coords}
parameters: {{m: {m}, L: {L}, g: {g}, Omega: {Om}, C: {C}, th0: {th0!r}, T: {T!r}}}
ground: {{markers: {{base: {{}}}}}}
bodies:
  shaft:
    mass: 1
    inertia: [0.1, 0.1, 0.05]
    euler: ["Omega*T", 0, 0]
    angular_velocity: [0, 0, Omega]
    markers: {{s_base: {{}}, s_pin: {{zaxis: [1, 0, 0]}}}}
  rod:
    mass: m
    inertia: ["m*L^2/12", "m*L^2/12", C]
    position: ["-L/2*sin(th0)*sin(Omega*T)", "L/2*sin(th0)*cos(Omega*T)", "-L/2*cos(th0)"]
    euler: ["Omega*T", th0, 0]
    velocity: ["-Omega*L/2*sin(th0)*cos(Omega*T)", "-Omega*L/2*sin(th0)*sin(Omega*T)", 0]
    angular_velocity: [0, 0, Omega]
    markers: {{r_pin: {{position: [0, 0, "L/2"], zaxis: [1, 0, 0]}}}}
joints:
  spin: {{type: revolute, i: s_base, j: base}}
  hinge: {{type: revolute, i: r_pin, j: s_pin}}
drivers:
  drive: {{joint: spin, motion: "Omega*t"}}
forces:
  weight: {{type: gravity, g: [0, 0, "-g"]}}
linearize: {{at: given, time: T, states: ["JQ(hinge)"]}}
'''


fails = 0
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "shaft.yaml")
    for c in ["absolute", "relative"]:
        for T in [0, 0.25, 0.5, 1.0, 2.0]:
            with open(path, "w") as f:
                f.write(model(c, T))
            r = subprocess.run([B, "linearize", path, "--json", "--no-matrices"], capture_output=True, text=True)
            if r.returncode:
                print(f"FAIL {c} t={T}: {r.stderr.strip()}")
                fails += 1
                continue
            ev = json.loads(r.stdout)["eigenvalues"]
            im = sorted(abs(e["im"]) for e in ev)
            re = max(abs(e["re"]) for e in ev)
            ok = len(ev) == 2 and re <= 1e-9 * w and all(abs(x - w) <= 1e-9 * w for x in im)
            print(f"{'ok  ' if ok else 'FAIL'} {c} t={T} (Omega t = {Om * T:g} rad): +-{im[-1]:.12g}i, closed form {w:.12g}")
            fails += not ok
sys.exit(1 if fails else 0)
