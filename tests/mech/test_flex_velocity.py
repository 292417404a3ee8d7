#!/usr/bin/env python3
"""Issue 32, item 3: beam and modal bodies take initial velocities (`velocity`, `angular_velocity`, as
rigid bodies do), used by `at: given` and `at: steady`.

Checked, for a blade (6 elements, the planar beam body and the modal body of all its modes written by
examples/beam_to_modal.py --geometric, and the spatial beam body) spinning at Omega about its root:
  - given by its own angular velocity on a free hub of inertia Jh (the hub's rate completed from the
    joint), `at: steady`: the lead-lag frequencies tend to those of the same blade driven through its
    hub as Jh grows (the hub's share of the coupling falls as 1/Jh: off by about 4e-4 at Jh = 1e3 and
    4e-7 at Jh = 1e6), and the steady stretch equals the driven blade's (1e-9);
  - given by its angular velocity on a free pin (no hub): the steady stretch of the tip equals the
    spinning bar's closed form u(L) = tan(k L)/k - L, k^2 = rho Omega^2 / E (the mesh's 1e-5), the
    modal body's frequencies equal the beam body's (1e-9), and the spatial beam spinning about z
    (`angular_velocity: [0, 0, Omega]`) has the planar blade's in-plane frequencies and stretch (1e-9);
  - a free beam given `velocity: [2, -1]` starts with that velocity (`at: given`);
  - before: "unknown key 'angular_velocity'".
Usage: test_flex_velocity.py MBLIN
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

B = sys.argv[1]
L, E, RHO, R, NE, OM = 1.0, 2e9, 7850.0, 0.01, 6, 10.0
EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
fails = 0


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok
    return ok


BEAM = f"""    type: beam
    length: L
    elements: {NE}
    E: E
    rho: rho
    radius: r
"""
BEAM3 = BEAM + "    G: E/2.6\n"


def model(body, kind, w="Omega", space="planar"):
    head = f"""model: mechanism
name: a spinning blade ({kind})
{"space: planar" if space == "planar" else ""}
parameters: {{L: {L}, E: {E}, rho: {RHO}, r: {R}, Omega: {OM}, Jh: 1000}}
ground:
  markers:
    o: {{}}
bodies:
"""
    blade = "  b:\n" + body + "    markers: {root: {node: 1}}\n" if "modal" not in body else "  b:\n" + body
    if kind == "driven":
        return head + blade + """joints:
  hub: {type: revolute, i: root, j: o}
drivers:
  spin: {joint: hub, motion: Omega*t}
linearize:
  at: steady
"""
    vel = f"    angular_velocity: {w}\n"
    if kind == "hub":
        return head + """  hub:
    mass: 1
    inertia: Jh
    markers: {h: {}}
""" + blade + vel + """joints:
  bearing: {type: revolute, i: h, j: o}
  clamp: {type: fixed, i: root, j: h}
linearize:
  at: steady
"""
    if kind == "pin":
        return head + blade + vel + """joints:
  hub: {type: revolute, i: root, j: o}
linearize:
  at: steady
"""
    return head + blade + """    velocity: [2, -1]
linearize:
  at: given
"""


def run(d, text, *args, mblin=None):
    path = os.path.join(d, "m.yaml")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([mblin or B, "linearize", path, "--json", "--no-matrices", *args], capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def lin(d, text, *args):
    o, err = run(d, text, *args)
    if o is None:
        check(False, "mblin linearize: " + err)
        return np.full(8, np.nan), None
    return np.sort([e["im"] for e in o["eigenvalues"] if e["im"] > 1e-6]), o["operating_point"]


def val(op, key, name):
    return op[key][op["coordinates"].index(name)] if op else float("nan")


def rel(a, b):
    n = min(len(a), len(b), 6)
    return float(np.max(np.abs(a[:n] - b[:n]) / np.abs(b[:n])))


with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([sys.executable, os.path.join(EX, "beam_to_modal.py"), "--length", str(L), "--elements", str(NE), "--E",
                        str(E), "--rho", str(RHO), "--radius", str(R), "--geometric", "--prefix", os.path.join(d, "bl")],
                       capture_output=True, text=True)
    check(p.returncode == 0, "beam_to_modal.py: " + p.stderr.strip())
    MODAL = "".join(l + "\n" for l in p.stdout.splitlines()).replace("first:", "root:")
    # the root marker of the modal body is its frame's origin (clamped modes)
    wd, opd = lin(d, model(BEAM, "driven"))
    tipd = val(opd, "q", f"b_u{NE + 1}")
    for name, body in (("beam", BEAM), ("modal", MODAL)):
        diffs = []
        for jh in (1e3, 1e6):
            w, op = lin(d, model(body, "hub"), "--set", f"Jh={jh}", "--method", "augmented")
            diffs.append(rel(w, wd))
            if name == "beam":
                check(abs(val(op, "q", f"b_u{NE + 1}") / tipd - 1) <= 1e-9,
                      f"{name} on a hub of {jh:g}: the steady stretch {val(op, 'q', f'b_u{NE + 1}'):.12g} = driven {tipd:.12g}")
            check(abs(val(op, "v", "hub_th") - OM) <= 1e-9 * OM, f"{name} on a hub of {jh:g}: the hub turns at {val(op, 'v', 'hub_th')}")
        check(diffs[1] <= 1e-6 and 300 < diffs[0] / diffs[1] < 3000,
              f"{name} given its angular velocity on a hub of 1e3 and 1e6: the driven blade's frequencies {wd[:3]} "
              f"to {diffs[0]:.1e} and {diffs[1]:.1e}")
    # on a free pin
    wb, opb = lin(d, model(BEAM, "pin"))
    k = math.sqrt(RHO * OM * OM / E)
    ub, uref = val(opb, "q", f"b_u{NE + 1}"), math.tan(k * L) / k - L
    check(abs(ub / uref - 1) <= 1e-5, f"on a pin: the tip's steady stretch {ub:.9g}, the spinning bar's {uref:.9g}")
    check(abs(val(opb, "v", "b_th") - OM) <= 1e-12 * OM, "on a pin: the blade turns at Omega")
    wm, opm = lin(d, model(MODAL, "pin"))
    check(rel(wm, wb) <= 1e-9, f"on a pin: the modal body {wm[:3]} vs the beam body {wb[:3]} (rel {rel(wm, wb):.1e})")
    # the spatial beam given its angular velocity (global) about an axis turned from z: its Euler
    # parameters' rates are 1/2 E(e)^T w at its initial orientation (`at: given`; `at: steady` does not
    # solve a spatial beam's stretched spin yet)
    text = model(BEAM3 + "    axis: [1, 1, 1]\n    angle: 0.7\n    angular_velocity: [0.3, -0.4, Omega]\n", "free", space="spatial")
    o, err = run(d, text.replace("velocity: [2, -1]", "velocity: [2, -1, 0.5]"))
    if check(o is not None, "spatial beam given its angular velocity: " + err):
        op = o["operating_point"]
        e = np.array([val(op, "q", f"b_e{i}") for i in range(4)])
        de = np.array([val(op, "v", f"b_e{i}") for i in range(4)])
        Eg = np.array([[-e[1], e[0], -e[3], e[2]], [-e[2], e[3], e[0], -e[1]], [-e[3], -e[2], e[1], e[0]]])
        w = 2 * Eg @ de
        check(np.max(np.abs(w - [0.3, -0.4, OM])) <= 1e-12 * OM, f"spatial beam: w = 2 E(e) e' = {w}")
        check([val(op, "v", f"b_{c}") for c in "xyz"] == [2, -1, 0.5], "spatial beam: its velocity")
    # a free beam given its velocity
    o, err = run(d, model(BEAM, "free"))
    op = o["operating_point"] if o else None
    check(op is not None and val(op, "v", "b_x") == 2 and val(op, "v", "b_y") == -1, f"free beam: velocity {err}")
    # bad input: one line
    o, err = run(d, model(BEAM, "pin", "[1, 2]"))
    check(o is None and "angular_velocity" in err and err.count("\n") == 0, f"a planar angular velocity as a vector: {err}")
sys.exit(1 if fails else 0)
