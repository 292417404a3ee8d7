#!/usr/bin/env python3
"""Issue 32, item 3: `at: steady` of flexible bodies whose frames circle the axis (hub radius > 0) and
of spatial beams (their Euler parameters turn).

In a steady spin at Omega a body's frame turns rigidly: its origin's acceleration is w x v (on a
circle about the axis), a planar angle's 0, Euler parameters' 1/2 E(der(e))^T w. Before, at: steady
asked every coordinate's acceleration to be 0 and found no solution ("no solution found from the
initial guess") as soon as a frame's origin sat off the axis or its Euler parameters turned.

The reference is a finite element model written here from scratch with numpy (Hermite and linear
shape functions, a Gauss rule, assembly): a beam clamped at radius e from the axis of a frame turning
at Omega, axial force N(X) = rho A Omega^2 ((L^2 - X^2) / 2 + e (L - X)), in-plane
  M q'' + G q' + (K + K_G - Omega^2 M) q = 0
(G the Coriolis coupling of the axial and lead-lag motions) and, for the out-of-plane (flap) bending
of a spatial beam, M w'' + (K + K_G) w = 0. Checked:
  - a planar blade (10 elements) clamped at radius 0.2 m on a rigid hub driven at Omega = 10, 30 and 60
    rad/s: at: steady solves (at 30 rad/s it stalled while the least-squares steps dropped
    directions below rank_tol of the unscaled Jacobian) to 1e-10 with no residual acceleration;
    its frequencies equal the unstretched given point's and the reference's (1e-9); the tip's
    stretch equals that of the same mesh of linear bar elements (numpy, 1e-9) and the spinning
    bar's with hub offset, u'' + k^2 (e + X + u) = 0, u(0) = 0, u'(L) = 0, k^2 = rho Omega^2 / E
    (the mesh's 1e-4);
  - the three-bladed rotor of examples/mech/rotor3_blades.yaml on a free hub (its angular velocity given): at: steady
    gives the degenerate cyclic lag pair of one blade clamped at 0.2 m (1e-9);
  - a spatial beam (6 elements) driven about z at its root: at: steady solves (its Euler parameters
    accelerate as -Omega^2/4 e), its frequencies equal the given point's (1e-9), the lag ones the
    planar reference's and the flap ones the out-of-plane reference's (1e-9), its stretch the
    bar elements' (1e-9) and the spinning bar's (1e-4).
Usage: test_steady_spin.py MBLIN
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from beam_fe import clamped_beam_eigs, frequencies  # noqa: E402
from mechrun import linearize_json  # noqa: E402

B = sys.argv[1]
L, E, RHO, R, HUB = 1.0, 2e9, 7850.0, 0.01, 0.2
A, I = math.pi * R * R, math.pi * R ** 4 / 4
fails = 0


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok
    return ok


def reference(ne, om, hub=0.0, flap=False):
    """the lowest frequencies (rad/s) of the clamped spinning beam of the docstring: in-plane (lag),
    or out of the plane of rotation (flap)"""
    return frequencies(clamped_beam_eigs(ne, L, E, RHO, A, I, om=om, hub=hub, flap=flap))


def stretch(om, hub):
    """u(L) of u'' + k^2 (hub + X + u) = 0, u(0) = 0, u'(L) = 0: w = hub + X + u = hub cos kX + c sin kX"""
    k = math.sqrt(RHO * om * om / E)
    c = (1 + hub * k * math.sin(k * L)) / (k * math.cos(k * L))
    return hub * math.cos(k * L) + c * math.sin(k * L) - hub - L


def stretch_fe(ne, om, hub):
    """u(L) of the same bar by finite elements (linear, consistent mass): (K - Omega^2 M) u = f,
    f = rho A Omega^2 int N (hub + X), u(0) = 0"""
    le, n = L / ne, ne + 1
    K, M, f = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
    for e in range(ne):
        d = slice(e, e + 2)
        K[d, d] += E * A / le * np.array([[1, -1], [-1, 1]])
        M[d, d] += RHO * A * le / 6 * np.array([[2, 1], [1, 2]])
        x0 = hub + e * le
        f[d] += RHO * A * om * om * le * np.array([x0 / 2 + le / 6, x0 / 2 + le / 3])
    S = K - om * om * M
    return float(np.linalg.solve(S[1:, 1:], f[1:])[-1])


BLADE = """model: mechanism
name: a blade clamped to a driven hub at radius e
space: planar
parameters: {L: 1, E: 2e9, rho: 7850, r: 0.01, Omega: 10, e: 0.2}
ground:
  markers: {o: {}}
bodies:
  hub:
    mass: 1
    inertia: 1
    markers: {axle: {}, seat: {position: [e, 0]}}
  b:
    type: beam
    length: L
    elements: 10
    E: E
    rho: rho
    radius: r
    position: [e, 0]
    markers: {root: {node: 1}}
joints:
  shaft: {type: revolute, i: axle, j: o}
  clamp: {type: fixed, i: root, j: seat}
drivers:
  spin: {joint: shaft, motion: Omega*t}
linearize:
  at: steady
"""

BLADE3 = """model: mechanism
name: a spatial blade driven about z at its root
parameters: {L: 1, E: 2e9, rho: 7850, r: 0.01, Omega: 10}
ground:
  markers: {o: {}}
bodies:
  b:
    type: beam
    length: L
    elements: 6
    E: E
    G: E/2.6
    rho: rho
    radius: r
    markers: {root: {node: 1}}
joints:
  hub: {type: revolute, i: root, j: o}
drivers:
  spin: {joint: hub, motion: Omega*t}
linearize:
  at: steady
"""


def run(text, *args):
    return linearize_json(B, text, *args)


def freqs(o, lo=1e-6):
    return np.sort([e["im"] for e in o["eigenvalues"] if e["im"] > lo])


def q_of(o, name):
    op = o["operating_point"]
    return op["q"][op["coordinates"].index(name)]


def rel(a, b, n):
    return float(np.max(np.abs(a[:n] - b[:n]) / np.abs(b[:n])))


def matched(got, ref):
    """the largest relative distance of each reference frequency to the nearest one of got"""
    return max(float(np.min(np.abs(got - r)) / r) for r in ref)


for om in (10.0, 30.0, 60.0):
    o, err = run(BLADE, "--set", f"Omega={om}")
    if not check(o is not None, f"planar blade at radius {HUB}, Omega {om}: at: steady solves {err}"):
        continue
    og, err = run(BLADE, "--set", f"Omega={om}", "--at", "given")
    ws, wg, wr = freqs(o), freqs(og), reference(10, om, HUB)
    check(og is not None and rel(ws, wg, 6) <= 1e-9, f"  steady {ws[:3]} = given {wg[:3]} (rel {rel(ws, wg, 6):.1e})")
    check(rel(ws, wr, 6) <= 1e-9, f"  = the numpy reference {wr[:3]} (rel {rel(ws, wr, 6):.1e})")
    u, uref = q_of(o, "b_u11"), stretch(om, HUB)
    ufe = stretch_fe(10, om, HUB)
    check(abs(u / ufe - 1) <= 1e-9 and abs(u / uref - 1) <= 1e-4,
          f"  tip stretch {u:.12g} = the FE bar's {ufe:.12g}; the closed form with hub offset {uref:.9g} (the mesh)")
    op = o["operating_point"]
    a = op["vdot"] if "vdot" in op else op.get("a")
    if a is not None:
        ax = a[op["coordinates"].index("b_x")]
        check(abs(ax + HUB * om * om) <= 1e-9 * HUB * om * om, f"  the frame's origin circles: der(der(b_x)) = {ax}")
    check("accelerations up to" not in op["notes"] and op["residual"] <= 1e-10,
          f"  solved to the residual {op['residual']:.2e}, no residual acceleration: {op['notes']}")

# the three-bladed rotor on a free hub
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "mech", "rotor3_blades.yaml")) as f:
    rotor = f.read().replace("at: given", "at: steady")
o, err = run(rotor, "--set", "Omega=10")
if check(o is not None, f"three-bladed rotor on a free hub at 10 rad/s: at: steady solves {err}"):
    w, ref = freqs(o, 1.0), reference(6, 10.0, HUB)[0]
    check(len(w) >= 3 and abs(w[0] / ref - 1) <= 1e-9 and abs(w[1] / ref - 1) <= 1e-9 and w[2] > 1.5 * ref,
          f"  cyclic pair {w[:2]} = one blade at radius {HUB} {ref:.9f}")

for om in (10.0, 30.0):
    o, err = run(BLADE3, "--set", f"Omega={om}")
    if not check(o is not None, f"spatial blade driven at {om}: at: steady solves {err}"):
        continue
    og, err = run(BLADE3, "--set", f"Omega={om}", "--at", "given")
    ws, wg = freqs(o), freqs(og)
    check(og is not None and rel(ws, wg, 8) <= 1e-9, f"  steady {ws[:4]} = given {wg[:4]} (rel {rel(ws, wg, 8):.1e})")
    lag, flap = reference(6, om)[:3], reference(6, om, flap=True)[:3]
    check(matched(ws, lag) <= 1e-9, f"  lag {lag} among them ({matched(ws, lag):.1e})")
    check(matched(ws, flap) <= 1e-9, f"  flap {flap} among them ({matched(ws, flap):.1e})")
    u, uref = q_of(o, "b_ux7"), stretch(om, 0.0)
    ufe = stretch_fe(6, om, 0.0)
    check(abs(u / ufe - 1) <= 1e-9 and abs(u / uref - 1) <= 1e-4,
          f"  tip stretch {u:.12g} = the FE bar's {ufe:.12g}; the closed form {uref:.9g} (the mesh)")
    e0 = q_of(o, "b_e0")
    op = o["operating_point"]
    a = op.get("vdot") or op.get("a")
    if a is not None:
        ae = a[op["coordinates"].index("b_e0")]
        check(abs(ae + om * om / 4 * e0) <= 1e-9 * om * om, f"  Euler parameters turn: der(der(e0)) = {ae} = -Omega^2/4 e0")
sys.exit(1 if fails else 0)
