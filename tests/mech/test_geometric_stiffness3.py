#!/usr/bin/env python3
"""Issue 32, items 1-2: the geometric stiffness of SPATIAL beam bodies against independent references.

The reference is a finite element model of a spatial beam written here from scratch with numpy
(its own linear and Hermite shape functions in both bending planes, Gauss rule, assembly): nodal
coordinates (ux, uy, uz, rx, ry, rz) with rz = uy', ry = -uz', mass rho A for the translations
and rho (Iy + Iz) for the twist, stiffness EA, E Iz (uy), E Iy (uz), G J, and the geometric
stiffness int N(X) (uy'^2 + uz'^2) of the axial force N. The beam is clamped at X = 0 in a frame
that turns at Omega about the global z axis at radius r from it (the blade along x, z along the
axis): N(X) = rho A gax (L - X) + rho A Omega^2 ((L^2 - X^2) / 2 + r (L - X)), the gyroscopic
2 Omega int rho A (ux uy' - uy ux') and the centrifugal softening -Omega^2 of ux and uy (the
in-plane motion: a z displacement keeps its distance from the axis).
Checked:
  - a cantilever with Iy != Iz hanging under gravity (clamped at its top): its bending frequencies
    in both planes go UP, equal to the reference's with K_G (1e-9); `geometric_stiffness: false`
    gives the reference without it (1e-9);
  - a blade on a hub turning at Omega about an axis across it (a driven revolute at its root for
    r = 0, a driven rigid hub with the blade clamped at r = 0.2 m): the flapwise (out-of-plane, uz)
    and lead-lag (in-plane, uy) frequencies at Omega = 5, 10, 30 rad/s equal the reference's
    (1e-9); at small Omega the flapwise omega^2 = omega_0^2 + (phi + phi_e r / L) Omega^2 and the
    lead-lag omega^2 = omega_0^2 + (phi - 1 + phi_e r / L) Omega^2 with phi = 1.1933 and
    phi_e = 1.5709 computed from the exact first cantilever mode (Southwell; the published 1.193);
  - a cantilever under an axial compressive end load P (a force element at its tip marker, which
    enters through the marker's foreshortening in both planes): the frequencies equal the
    reference's with N = -P (1e-8), the lowest (uz, the weaker plane E Iy) goes to zero at Euler's
    P_cr = pi^2 E Iy / (4 L^2) (1e-5) and beyond it a real eigenvalue turns positive;
  - a bad `geometric_stiffness` value is one error line naming the key.
Usage: test_geometric_stiffness3.py MBLIN
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import linearize_text  # noqa: E402

B = sys.argv[1]
L, E, G_, RHO, GRAV = 1.0, 2e9, 8e8, 7850.0, 9.81
A, IY, IZ, JT = 3e-4, 2e-8, 5e-8, 4e-8  # a rectangular-like section: the two planes differ
NE = 8
TOL_MESH = 2e-4      # Southwell's flapwise slope against the 8-element mesh
TOL_CORIOLIS = 4e-3  # the lead-lag slope, beside the Coriolis coupling the estimate leaves out
fails = 0


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok
    return ok


def reference(ne, gax=0.0, om=0.0, hub=0.0, geo=True, P=0.0):
    """the beam model of the docstring, clamped at node 1: (flapwise uz, lead-lag uy) frequencies
    (rad/s, the lowest of the modes whose shapes are mostly uz / uy), and all of them"""
    le, n = L / ne, 6 * (ne + 1)
    M, Gy, K = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    xs, ws = np.polynomial.legendre.leggauss(6)
    xs, ws = 0.5 * (xs + 1), 0.5 * ws
    for e in range(ne):
        X0, d = e * le, slice(6 * e, 6 * e + 12)
        for xi, w in zip(xs, ws):
            X, W = X0 + xi * le, w * le
            h = [1 - 3 * xi ** 2 + 2 * xi ** 3, (xi - 2 * xi ** 2 + xi ** 3) * le, 3 * xi ** 2 - 2 * xi ** 3,
                 (-xi ** 2 + xi ** 3) * le]
            dh = [(-6 * xi + 6 * xi ** 2) / le, 1 - 4 * xi + 3 * xi ** 2, (6 * xi - 6 * xi ** 2) / le, -2 * xi + 3 * xi ** 2]
            d2h = [(-6 + 12 * xi) / le ** 2, (-4 + 6 * xi) / le, (6 - 12 * xi) / le ** 2, (-2 + 6 * xi) / le]
            nu, dnu, nt, dnt = (np.zeros(12) for _ in range(4))
            nv, dnv, d2nv, nw, dnw, d2nw = (np.zeros(12) for _ in range(6))
            nu[[0, 6]], dnu[[0, 6]] = [1 - xi, xi], [-1 / le, 1 / le]
            nt[[3, 9]], dnt[[3, 9]] = [1 - xi, xi], [-1 / le, 1 / le]
            nv[[1, 5, 7, 11]], dnv[[1, 5, 7, 11]], d2nv[[1, 5, 7, 11]] = h, dh, d2h
            sg = np.array([1, -1, 1, -1])  # uz with ry = -uz'
            nw[[2, 4, 8, 10]], dnw[[2, 4, 8, 10]], d2nw[[2, 4, 8, 10]] = sg * h, sg * dh, sg * d2h
            N = RHO * A * (gax * (L - X) + om * om * ((L * L - X * X) / 2 + hub * (L - X))) - P if geo else 0.0
            M[d, d] += W * (RHO * A * (np.outer(nu, nu) + np.outer(nv, nv) + np.outer(nw, nw))
                            + RHO * (IY + IZ) * np.outer(nt, nt))
            Gy[d, d] += 2 * om * W * RHO * A * (np.outer(nu, -nv) + np.outer(nv, nu))
            K[d, d] += W * (E * A * np.outer(dnu, dnu) + E * IZ * np.outer(d2nv, d2nv) + E * IY * np.outer(d2nw, d2nw)
                            + G_ * JT * np.outer(dnt, dnt) + N * (np.outer(dnv, dnv) + np.outer(dnw, dnw))
                            - om * om * RHO * A * (np.outer(nu, nu) + np.outer(nv, nv)))
    k = slice(6, n)  # node 1 clamped
    M, Gy, K = M[k, k], Gy[k, k], K[k, k]
    m = M.shape[0]
    Mi = np.linalg.inv(M)
    ev, vec = np.linalg.eig(np.block([[np.zeros((m, m)), np.eye(m)], [-Mi @ K, -Mi @ Gy]]))
    up = ev.imag > 1e-9
    ev, vec = ev[up], vec[:m, up]
    order = np.argsort(ev.imag)
    ev, vec = ev.imag[order], vec[:, order]
    # the parts of the shapes in the two bending planes (uy, rz) and (uz, ry), nodes 2 on
    tot = np.linalg.norm(vec, axis=0)
    yz = [np.sqrt(np.linalg.norm(vec[a::6, :], axis=0) ** 2 + np.linalg.norm(vec[b::6, :], axis=0) ** 2)
          for a, b in ((1, 5), (2, 4))]
    flap = ev[yz[1] > 0.9 * tot]
    lag = ev[yz[0] > 0.5 * tot]
    return flap, lag, ev


def phis():
    """Southwell's phi = int (1 - x^2)/2 psi'^2 / int psi^2 and phi_e = int (1 - x) psi'^2 / int psi^2
    of the first cantilever mode from its exact shape (1 + cos b cosh b = 0), L = 1"""
    b = 1.8751040687119611
    s = (math.cosh(b) + math.cos(b)) / (math.sinh(b) + math.sin(b))
    x, w = np.polynomial.legendre.leggauss(60)
    x, w = 0.5 * (x + 1), 0.5 * w
    psi = np.cosh(b * x) - np.cos(b * x) - s * (np.sinh(b * x) - np.sin(b * x))
    dpsi = b * (np.sinh(b * x) + np.sin(b * x) - s * (np.cosh(b * x) - np.cos(b * x)))
    n = np.sum(w * psi ** 2)
    return float(np.sum(w * (1 - x * x) / 2 * dpsi ** 2) / n), float(np.sum(w * (1 - x) * dpsi ** 2) / n)


BEAM = f"""    type: beam
    length: L
    elements: {NE}
    E: E
    G: G
    rho: rho
    A: {A}
    Iy: {IY}
    Iz: {IZ}
    J: {JT}
"""


def model(kind, extra="", hub=0.0):
    head = f"""model: mechanism
name: spatial geometric stiffness ({kind})
parameters: {{L: {L}, E: {E}, G: {G_}, rho: {RHO}, g: {GRAV}, Omega: 0, r: {hub}, P: 0}}
"""
    if kind == "buckling":  # clamped at the root, pushed along -x at the tip
        return head + f"""ground:
  markers:
    o: {{position: [0, 0, 0]}}
bodies:
  b:
{BEAM}{extra}    markers: {{root: {{node: 1}}, tip: {{s: L}}}}
joints:
  clamp: {{type: fixed, i: root, j: o}}
forces:
  push: {{type: force, i: tip, force: [-P, 0, 0]}}
linearize:
  at: equilibrium
"""
    if kind == "hanging":  # the beam's x along -y (down), gravity -y: clamped at its top
        return head + f"""ground:
  markers:
    o: {{position: [0, 0, 0], axis: [0, 0, 1], angle: -pi/2}}
bodies:
  b:
{BEAM}{extra}    axis: [0, 0, 1]
    angle: -pi/2
    markers: {{root: {{node: 1}}}}
joints:
  clamp: {{type: fixed, i: root, j: o}}
forces:
  weight: {{type: gravity, g: [0, -g, 0]}}
linearize:
  at: equilibrium
"""
    if hub == 0:  # a driven revolute about the global z at the blade's root
        return head + f"""ground:
  markers:
    o: {{position: [0, 0, 0]}}
bodies:
  b:
{BEAM}{extra}    markers: {{root: {{node: 1}}}}
joints:
  spin: {{type: revolute, i: root, j: o}}
drivers:
  drive: {{joint: spin, motion: Omega*t}}
linearize:
  at: given
"""
    return head + f"""ground:
  markers:
    o: {{position: [0, 0, 0]}}
bodies:
  hub:
    mass: 5
    inertia: [0.1, 0.1, 0.1]
    markers:
      axle: {{}}
      seat: {{position: [r, 0, 0]}}
  b:
{BEAM}{extra}    position: [r, 0, 0]
    markers: {{root: {{node: 1}}}}
joints:
  spin: {{type: revolute, i: axle, j: o}}
  clamp: {{type: fixed, i: root, j: seat}}
drivers:
  drive: {{joint: spin, motion: Omega*t}}
linearize:
  at: given
"""


def run(text, *args):
    return linearize_text(B, text, *args)


def freqs(text, *args):
    p = run(text, *args)
    if p.returncode:
        check(False, "mblin failed: " + p.stderr.strip())
        return np.array([np.nan] * 40)
    o = json.loads(p.stdout)
    return np.sort([e["im"] for e in o["eigenvalues"] if e["im"] > 1e-9])


def nearest(got, want):
    """the relative distance of each wanted frequency to the nearest one got"""
    return float(max(np.min(np.abs(got - w)) / w for w in want))


# a hanging cantilever, both bending planes
fy0, ly0, all0 = reference(NE)
fyg, lyg, allg = reference(NE, gax=GRAV)
got = freqs(model("hanging"))
want = np.concatenate([fyg[:3], lyg[:3]])
check(nearest(got, want) <= 1e-9, f"hanging: flapwise (uz) {fyg[:3]}, lead-lag (uy) {lyg[:3]} with K_G found to "
      f"{nearest(got, want):.1e}")
check(got[0] > 1.01 * fy0[0], f"hanging: the first (uz) bending frequency {got[0]:.6f} up from the unloaded {fy0[0]:.6f}")
check(nearest(got, allg[:12]) <= 1e-9, f"hanging: the reference's 12 lowest {allg[:12]} all found ({nearest(got, allg[:12]):.1e})")
off = freqs(model("hanging", "    geometric_stiffness: false\n"))
check(nearest(off, all0[:12]) <= 1e-9, f"hanging, geometric_stiffness: false: the reference without K_G "
      f"({nearest(off, all0[:12]):.1e})")

# a blade on a hub turning about the global z (across the blade)
phi, phie = phis()
check(abs(phi - 1.1933) < 5e-5 and abs(phie - 1.5709) < 5e-5,
      f"Southwell coefficients of the first mode from its exact shape: phi {phi:.5f} (published 1.193), "
      f"phi_e {phie:.5f} (1.571)")
for hub in (0.0, 0.2):
    for om in (5.0, 10.0, 30.0):
        fl, lg, _ = reference(NE, om=om, hub=hub)
        got = freqs(model("spinning", hub=hub), "--set", f"Omega={om}")
        check(nearest(got, fl[:3]) <= 1e-9 and nearest(got, lg[:3]) <= 1e-9,
              f"r = {hub}, Omega = {om}: flapwise {fl[:3]}, lead-lag {lg[:3]} found to "
              f"{max(nearest(got, fl[:3]), nearest(got, lg[:3])):.1e}")
    # Southwell at small Omega: the first flapwise and lead-lag frequencies' slopes in Omega^2
    om = 0.05
    f0, l0, _ = reference(NE)
    fl, lg, _ = reference(NE, om=om, hub=hub)
    got = freqs(model("spinning", hub=hub), "--set", f"Omega={om}")
    wf, wl = got[np.argmin(np.abs(got - fl[0]))], got[np.argmin(np.abs(got - lg[0]))]
    sf, sl = (wf ** 2 - f0[0] ** 2) / om ** 2, (wl ** 2 - l0[0] ** 2) / om ** 2
    ef, el = phi + phie * hub / L, phi - 1 + phie * hub / L
    # flapwise: the mesh (h^4); lead-lag also the Coriolis coupling with the axial modes
    # (omega_1^2 / omega_axial^2 ~ 8e-4 here: 2.6e-3 of phi)
    check(abs(sf - ef) <= TOL_MESH * ef and abs(sl - el) <= TOL_CORIOLIS * ef,
          f"r = {hub}: flapwise (omega^2 - omega_0^2) / Omega^2 = {sf:.5f} (phi + phi_e r / L = {ef:.5f}), "
          f"lead-lag {sl:.5f} ({el:.5f})")

# an axial compressive end load at the tip marker: Euler's load of the weaker plane (E Iy: uz)
pcr = math.pi ** 2 * E * IY / (4 * L * L)
for frac in (0.5, 0.9):
    _, _, ref = reference(NE, P=frac * pcr)
    got = freqs(model("buckling"), "--set", f"P={frac * pcr!r}")
    check(nearest(got, ref[:12]) <= 1e-8, f"end load {frac} P_cr: the reference's 12 lowest with N = -P "
          f"({ref[:4]} ...) found to {nearest(got, ref[:12]):.1e}")
pa, pb = 0.99 * pcr, 0.995 * pcr
wa, wb = freqs(model("buckling"), "--set", f"P={pa!r}")[0] ** 2, freqs(model("buckling"), "--set", f"P={pb!r}")[0] ** 2
p0 = pa - wa * (pb - pa) / (wb - wa)
check(abs(p0 / pcr - 1) <= 1e-5, f"omega_1 -> 0 at P = {p0:.6f}, Euler P_cr (E Iy) = {pcr:.6f} (rel {p0 / pcr - 1:.1e})")
p = run(model("buckling"), "--set", f"P={1.05 * pcr!r}")
ev = json.loads(p.stdout)["eigenvalues"] if p.returncode == 0 else []
check(any(e["re"] > 1e-3 and abs(e["im"]) < 1e-9 for e in ev), "beyond P_cr a real eigenvalue > 0 (divergence)")

p = run(model("hanging", "    geometric_stiffness: maybe\n"))
lines = p.stderr.strip().splitlines()
check(p.returncode != 0 and len(lines) == 1 and "geometric_stiffness" in lines[0] and ":" in lines[0],
      "a bad value is refused in one line: " + p.stderr.strip())
sys.exit(1 if fails else 0)
