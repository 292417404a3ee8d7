"""Spatial modal bodies (issue 67, item 1) against closed forms. The part: two rigid halves of mass
mh = 2 m each (point masses m at (-a, 0, +-b) and (a, 0, +-b) in the body frame) joined by a spring
k along x, one elastic mode (the halves moving apart along x). Its invariants are written here from
their definitions as sums over the four points (int rho f = sum m_i f_i; the mode mass-normalised:
S = -c e_x on the left half, +c e_x on the right, c = 1/sqrt(2 mh)), Kr = k (2 c)^2 = 2 k / mh.

  - free, and clamped at its centre: the one elastic frequency w^2 = 2 k / mh (1e-9);
  - spun about z at Omega by a driven revolute joint at the centre (at: steady): each half at
    x = a + d obeys mh (d'' - Omega^2 (a + d)) = -2 k d, so the radial mode has
    w^2 = 2 k / mh - Omega^2 (centrifugal softening) and the halves stand apart by
    d = mh Omega^2 a / (2 k - mh Omega^2) (1e-9);
  - the same spin with a geometric stiffness G = 100 per unit w_z^2 (`wzz`): w^2 = 2 k / mh - Omega^2
    + 100 Omega^2 (1e-9);
  - hanging in gravity g from a revolute joint at the left half (on the joint's axis, so it stays):
    the right half at r = 2 a + s, s = mh g / k the spring's static stretch; in polar coordinates
    r'' - r th'^2 = g cos th - (k / mh)(r - r0), (r^2 th')' = -g r sin th, linearised about th = 0:
    the swing w^2 = g / (2 a + mh g / k) and the stretch w^2 = k / mh, decoupled (1e-9);
  - the rigid limit (k = 1e12 k): the swing equals a rigid body's pendulum of the same mass and
    inertia in the same mechanism (1e-6) and g / (2 a) (1e-6);
  - refusals: a geometric stiffness file not there, an unknown load, a missing invariant, a marker's shapes of the wrong size;
  - a spatial beam body (3 elements, Iy != Iz, no geometric stiffness) clamped on a hub driven about
    z at Omega = 10 (at: steady), under gravity, against the modal body of all its 18 clamped modes
    whose invariants come from a numpy finite element model of the same beam (Hermite bending, linear
    axial and twist, consistent mass, 6-point Gauss), written in a body frame turned by 0.7 rad about
    (1, 2, 3) (so that u0 is general: every row of Cu nonzero) and the frame turned back: every
    eigenvalue equal (1e-9; the frame does not turn about the beam's axis, so the sections' polar
    inertia, which a modal body has not, does not enter).
Usage: test_modal3.py MBLIN
"""
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import Checks, linearize_json, write_mtx  # noqa: E402

B = sys.argv[1]
m, a, b, k, g = 0.5, 0.4, 0.1, 800.0, 9.81
mh = 2 * m
check = Checks()


def mtx(path, A):
    write_mtx(path, np.atleast_2d(np.asarray(A, dtype=float)))


def write_part(d, kk):
    """the invariants of the four points and the markers' shapes as Matrix Market files in d"""
    c = 1 / math.sqrt(2 * mh)
    pts = [(-a, 0, b), (-a, 0, -b), (a, 0, b), (a, 0, -b)]
    S = [np.array([[-c], [0], [0]]), np.array([[-c], [0], [0]]), np.array([[c], [0], [0]]), np.array([[c], [0], [0]])]
    u0 = [np.array(p, dtype=float) for p in pts]
    mass = 4 * m
    s0 = sum(m * x for x in u0)
    Q = sum(m * np.outer(x, x) for x in u0)
    Sb = sum(m * s for s in S)  # 3 x 1
    Cu = np.zeros((9, 1))
    Mab = np.zeros((9, 1))
    for x, s in zip(u0, S):
        for p in range(3):
            for r in range(3):
                Cu[3 * p + r] += m * x[p] * s[r]
                Mab[3 * p + r] += m * (s[p] @ s[r])
    Mc = sum(m * (s.T @ s) for s in S)
    K = np.array([[kk * (2 * c) ** 2]])
    mtx(f"{d}/Sb.mtx", Sb)
    mtx(f"{d}/Cu.mtx", Cu)
    mtx(f"{d}/Mab.mtx", Mab)
    mtx(f"{d}/Mc.mtx", Mc)
    mtx(f"{d}/K.mtx", K)
    mtx(f"{d}/c.mtx", np.zeros((6, 1)))
    mtx(f"{d}/l.mtx", [[-c], [0], [0], [0], [0], [0]])
    mtx(f"{d}/r.mtx", [[c], [0], [0], [0], [0], [0]])
    Q0 = [Q[0, 0], Q[1, 1], Q[2, 2], Q[0, 1], Q[0, 2], Q[1, 2]]
    return mass, list(s0), Q0


def invariants_lines(pre, mass, s0, Q0):
    """the `invariants:` block of the files {pre}Sb.mtx .. {pre}K.mtx, then `markers:`"""
    files = "".join(f"      {nm}: {pre}{nm}.mtx\n" for nm in ("Sb", "Cu", "Mab", "Mc", "K"))
    return (f"    invariants:\n      mass: {mass!r}\n      s0: [{', '.join(repr(x) for x in s0)}]\n"
            f"      Q0: [{', '.join(repr(x) for x in Q0)}]\n{files}    markers:\n")


def body_text(d, kk, extra=""):
    mass, s0, Q0 = write_part(d, kk)
    return f"""  part:
    type: modal
{extra}{invariants_lines(d + "/", mass, s0, Q0)}      c: {{position: [0, 0, 0], shapes: {d}/c.mtx}}
      l: {{position: [{-a}, 0, 0], shapes: {d}/l.mtx}}
      r: {{position: [{a}, 0, 0], shapes: {d}/r.mtx}}
"""


def model(body, joints="", rest=""):
    return f"""model: mechanism
name: spatial modal body test
space: spatial
ground:
  markers: {{o: {{}}, p: {{zaxis: [1, 0, 0]}}}}
bodies:
{body}{joints}{rest}"""


def freqs(o, lo=1e-6):
    return np.sort([e["im"] for e in o["eigenvalues"] if e["im"] > lo])


def at(o, name):
    op = o["operating_point"]
    return op["q"][op["coordinates"].index(name)]


with tempfile.TemporaryDirectory() as d:
    w_el = math.sqrt(2 * k / mh)
    # free
    o, err = linearize_json(B, model(body_text(d, k)))
    if check(o is not None, f"free: linearized {err}"):
        f = freqs(o)
        check(len(f) == 1 and abs(f[0] / w_el - 1) <= 1e-9, f"free: elastic frequency {f} = sqrt(2 k / mh) = {w_el:.12g}")
    # clamped at the centre
    o, err = linearize_json(B, model(body_text(d, k), "joints:\n  clamp: {type: fixed, i: c, j: o}\n"))
    if check(o is not None, f"clamped at the centre: linearized {err}"):
        f = freqs(o)
        check(len(f) == 1 and abs(f[0] / w_el - 1) <= 1e-9, f"clamped: {f} = {w_el:.12g}")
    # driven spin about z
    for Om in (5.0, 30.0):
        text = model(body_text(d, k), "joints:\n  shaft: {type: revolute, i: c, j: o}\n",
                     f"drivers:\n  spin: {{joint: shaft, motion: {Om}*t}}\nlinearize:\n  at: steady\n")
        o, err = linearize_json(B, text)
        if check(o is not None, f"spin {Om}: linearized {err}"):
            f = freqs(o)
            ref = math.sqrt(2 * k / mh - Om ** 2)
            check(len(f) == 1 and abs(f[0] / ref - 1) <= 1e-9, f"spin {Om}: radial {f} = sqrt(2k/mh - Omega^2) = {ref:.12g}")
            dref = mh * Om ** 2 * a / (2 * k - mh * Om ** 2)
            dd = at(o, "part_eta1") / math.sqrt(2 * mh)
            check(abs(dd / dref - 1) <= 1e-9, f"spin {Om}: the halves' stretch {dd:.12g} = {dref:.12g}")
    # spun with a geometric stiffness per unit w_z^2, G = 100 (the FE code's Phi^T K_G Phi of the
    # centrifugal load of a unit w_z^2): w^2 = 2 k / mh - Omega^2 + 100 Omega^2
    mtx(f"{d}/G.mtx", [[100.0]])
    Om = 5.0
    text = model(body_text(d, k, f"    geometric_stiffness: {{wzz: {d}/G.mtx}}\n"), "joints:\n  shaft: {type: revolute, i: c, j: o}\n",
                 f"drivers:\n  spin: {{joint: shaft, motion: {Om}*t}}\nlinearize:\n  at: steady\n")
    o, err = linearize_json(B, text)
    if check(o is not None, f"spin {Om}, geometric stiffness: linearized {err}"):
        f, ref = freqs(o), math.sqrt(2 * k / mh - Om ** 2 + 100 * Om ** 2)
        check(len(f) == 1 and abs(f[0] / ref - 1) <= 1e-9, f"spin {Om}, wzz: {f} = sqrt(2k/mh - Omega^2 + 100 Omega^2) = {ref:.12g}")
    # hanging from the left half: the frame's x down (a quarter turn about y), l at the origin
    hang = "    position: [0, 0, %r]\n    axis: [0, 1, 0]\n    angle: pi/2\n" % (-a)
    grav = f"forces:\n  weight: {{type: gravity, g: [0, 0, {-g}]}}\n"
    for kk in (k, 1e12 * k):
        o, err = linearize_json(B, model(body_text(d, kk, hang), "joints:\n  pin: {type: revolute, i: l, j: p}\n", grav))
        if check(o is not None, f"hanging k = {kk:g}: linearized {err}"):
            f = freqs(o)
            sw, st = math.sqrt(g / (2 * a + mh * g / kk)), math.sqrt(kk / mh)
            check(len(f) == 2 and abs(f[0] / sw - 1) <= 1e-9 and abs(f[1] / st - 1) <= (1e-9 if kk == k else 1e-6),
                  f"hanging k = {kk:g}: {f} = swing sqrt(g / (2a + mh g/k)) {sw:.12g}, stretch sqrt(k/mh) {st:.12g}")
            if kk > k:
                check(abs(f[0] / math.sqrt(g / (2 * a)) - 1) <= 1e-6, f"rigid limit: swing {f[0]:.12g} = sqrt(g / 2a)")
                # the rigid body of the same mass and inertia at its centre (body axes): the points'
                rig = f"""  part:
    mass: {4 * m!r}
    inertia: [{4 * m * b * b!r}, {4 * m * (a * a + b * b)!r}, {4 * m * a * a!r}]
{hang}    markers: {{l: {{position: [{-a}, 0, 0]}}}}
"""
                o2, err = linearize_json(B, model(rig, "joints:\n  pin: {type: revolute, i: l, j: p}\n", grav))
                if check(o2 is not None, f"rigid pendulum: linearized {err}"):
                    f2 = freqs(o2)
                    check(len(f2) == 1 and abs(f[0] / f2[0] - 1) <= 1e-6, f"rigid limit: swing {f[0]:.12g} = the rigid body's {f2}")
    # refusals
    for what, extra, body_edit, want in (
            ("a geometric stiffness file that is not there", "    geometric_stiffness: {ax: nonexistent.mtx}\n", None,
             "geometric_stiffness: ax: cannot open"),
            ("an unknown load", "    geometric_stiffness: {bx: x.mtx}\n", None, "bx"),
            ("a missing invariant", "", lambda t: t.replace(f"      Cu: {d}/Cu.mtx\n", ""), "missing 'Cu'"),
            ("shapes of the wrong size", "", lambda t: t.replace(f"{d}/r.mtx", f"{d}/Sb.mtx"), "expected 6 x 1"),
            ("Mab of the wrong size", "", lambda t: t.replace(f"{d}/Mab.mtx", f"{d}/K.mtx"), "expected 9 x 1"),
            ("a negative mass", "", lambda t: t.replace("mass: 2.0", "mass: -2.0"), "mass must be positive"),
            ("Mc not positive", "", lambda t: t.replace(f"Mc: {d}/Mc.mtx", f"Mc: {d}/neg.mtx"), "diagonal entry 1 is not positive"),
            ("Mab's blocks xy and yx apart", "", lambda t: t.replace(f"{d}/Mab.mtx", f"{d}/asym.mtx"), "relative deviation")):
        mtx(f"{d}/neg.mtx", [[-1.0]])
        mtx(f"{d}/asym.mtx", [[1.0], [0.3], [0], [0.1], [0], [0], [0], [0], [0]])
        t = body_text(d, k, extra)
        if body_edit:
            t = body_edit(t)
        o, err = linearize_json(B, model(t))
        check(o is None and want in err and "part" in err, f"refused, {what}: {err}")



def rot(n, th):
    """the rotation by th about the axis n (Rodrigues)"""
    n = np.asarray(n, dtype=float) / np.linalg.norm(n)
    Kx = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + math.sin(th) * Kx + (1 - math.cos(th)) * Kx @ Kx


def beam_part(ne, L, E, G, rho, A, Iy, Iz, J):
    """the invariants of a spatial beam along x (a numpy FE model, dofs ux uy uz rx ry rz per node;
    uy' = rz, uz' = -ry) and of its modes clamped at node 1: (m, s0, Q0 (3 x 3), Sb, Cu (3 x 3 x k),
    Mab (3 x 3 x k x k), Mc, K)"""
    n, le = 6 * (ne + 1), L / ne
    Sb, Cu, Mab = np.zeros((3, n)), np.zeros((3, 3, n)), np.zeros((3, 3, n, n))
    Mc, K, H1, Hx = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    xs, ws = np.polynomial.legendre.leggauss(6)
    for e in range(ne):
        for xg, wg in zip(0.5 * (xs + 1), 0.5 * ws):
            X, W, d = e * le + xg * le, wg * le, slice(6 * e, 6 * e + 12)
            h = [1 - 3 * xg ** 2 + 2 * xg ** 3, (xg - 2 * xg ** 2 + xg ** 3) * le, 3 * xg ** 2 - 2 * xg ** 3, (-xg ** 2 + xg ** 3) * le]
            d2 = [(-6 + 12 * xg) / le ** 2, (-4 + 6 * xg) / le, (6 - 12 * xg) / le ** 2, (-2 + 6 * xg) / le]
            d1 = [(-6 * xg + 6 * xg ** 2) / le, 1 - 4 * xg + 3 * xg ** 2, (6 * xg - 6 * xg ** 2) / le, -2 * xg + 3 * xg ** 2]
            S, B = np.zeros((3, 12)), np.zeros((4, 12))  # S: u; B: ux', uy'', uz'', rx'
            S[0, [0, 6]] = [1 - xg, xg]
            S[1, [1, 5, 7, 11]] = h
            S[2, [2, 4, 8, 10]] = [h[0], -h[1], h[2], -h[3]]
            t = np.zeros(12)
            t[[3, 9]] = [1 - xg, xg]
            B[0, [0, 6]] = [-1 / le, 1 / le]
            B[1, [1, 5, 7, 11]] = d2
            B[2, [2, 4, 8, 10]] = [d2[0], -d2[1], d2[2], -d2[3]]
            B[3, [3, 9]] = [-1 / le, 1 / le]
            Sg = np.zeros((3, n))
            Sg[:, d] = S
            Sb += W * rho * A * Sg
            Cu[0] += W * rho * A * X * Sg
            for a_ in range(3):
                for b_ in range(3):
                    Mab[a_, b_] += W * rho * A * np.outer(Sg[a_], Sg[b_])
            Mc[d, d] += W * (rho * A * S.T @ S + rho * (Iy + Iz) * np.outer(t, t))
            K[d, d] += W * B.T @ np.diag([E * A, E * Iz, E * Iy, G * J]) @ B
            D = np.zeros((2, 12))  # the slopes uy', uz'
            D[0, [1, 5, 7, 11]] = d1
            D[1, [2, 4, 8, 10]] = [d1[0], -d1[1], d1[2], -d1[3]]
            H1[d, d] += W * rho * A * (L - X) * D.T @ D
            Hx[d, d] += W * rho * A * (L * L - X * X) / 2 * D.T @ D
    f = slice(6, n)  # node 1 clamped to the frame
    Lc = np.linalg.cholesky(Mc[f, f])
    Li = np.linalg.inv(Lc)
    w2, V = np.linalg.eigh(Li @ K[f, f] @ Li.T)
    Phi = np.zeros((n, n - 6))
    Phi[f] = Li.T @ V
    m_ = rho * A * L
    s0 = np.array([rho * A * L * L / 2, 0, 0])
    Q0 = np.diag([rho * A * L ** 3 / 3, 0, 0])
    return (m_, s0, Q0, Sb @ Phi, np.einsum("pri,ij->prj", Cu, Phi), np.einsum("abij,ik,jl->abkl", Mab, Phi, Phi),
            Phi.T @ Mc @ Phi, Phi.T @ K @ Phi, Phi.T @ H1 @ Phi, Phi.T @ Hx @ Phi)


def modal_of_beam(d, P, part, geo):
    """the modal body's files in d for the invariants part written in a body frame turned by P
    (u0' = P u0, S' = P S): its invariants lines; geo: with the beam's geometric stiffness
    KG = -(G_)_x H1 + (w_y^2 + w_z^2) Hx (model/ffr3.h) as files per unit load in the turned frame:
    (G_)_x = P[c, 0] G'_c, w_y^2 + w_z^2 = |w'|^2 - (P[c, 0] w'_c)^2"""
    m_, s0, Q0, Sb, Cu, Mab, Mc, K, H1, Hx = part
    k_ = Sb.shape[1]
    Q = P @ Q0 @ P.T
    mtx(f"{d}/bSb.mtx", P @ Sb)
    mtx(f"{d}/bCu.mtx", np.einsum("pi,rj,ijk->prk", P, P, Cu).reshape(9, k_))
    Mr = np.einsum("ai,bj,ijkl->abkl", P, P, Mab)
    mtx(f"{d}/bMab.mtx", np.vstack([Mr[a_, b_] for a_ in range(3) for b_ in range(3)]))
    mtx(f"{d}/bMc.mtx", 0.5 * (Mc + Mc.T))
    mtx(f"{d}/bK.mtx", 0.5 * (K + K.T))
    mtx(f"{d}/broot.mtx", np.zeros((6, k_)))
    s = P @ s0
    gl = ""
    if geo:
        gl = "    geometric_stiffness:\n"
        for c, nm in enumerate("xyz"):
            mtx(f"{d}/ga{nm}.mtx", -P[c, 0] * H1)
            gl += f"      a{nm}: {d}/ga{nm}.mtx\n"
        for a_, b_ in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
            c = 1 - P[a_, 0] ** 2 if a_ == b_ else -2 * P[a_, 0] * P[b_, 0]
            nm = "w" + "xyz"[a_] + "xyz"[b_]
            mtx(f"{d}/g{nm}.mtx", c * Hx)
            gl += f"      {nm}: {d}/g{nm}.mtx\n"
    Q0 = [Q[0, 0], Q[1, 1], Q[2, 2], Q[0, 1], Q[0, 2], Q[1, 2]]
    return gl + invariants_lines(d + "/b", m_, s, Q0) + f"      root: {{position: [0, 0, 0], shapes: {d}/broot.mtx}}\n"


HUB = """model: mechanism
name: a spatial blade on a driven hub, beam or modal
parameters: {{Omega: 10}}
ground: {{markers: {{o: {{}}}}}}
bodies:
  hub: {{mass: 1, inertia: [1, 1, 2], markers: {{axle: {{}}, seat: {{position: [0.2, 0, 0]{seat}}}}}}}
  b:
{blade}joints:
  shaft: {{type: revolute, i: axle, j: o}}
  clamp: {{type: fixed, i: root, j: seat}}
drivers:
  spin: {{joint: shaft, motion: Omega*t}}
forces:
  weight: {{type: gravity, g: [0, 0, -9.81]}}
linearize:
  at: steady
"""
bL, bE, bG, brho, bA, bIy, bIz, bJ = 1.0, 2e9, 8e8, 7850.0, 3e-4, 2e-8, 5e-8, 6e-8
BEAM = """    type: beam
    length: {bL}
    elements: 3
    E: {bE}
    G: {bG}
    rho: {brho}
    A: {bA}
    Iy: {bIy}
    Iz: {bIz}
    J: {bJ}
    geometric_stiffness: {geo}
    position: [0.2, 0, 0]
    markers: {{root: {{node: 1}}}}
"""
part = beam_part(3, bL, bE, bG, brho, bA, bIy, bIz, bJ)
lowest = {}
for geo in (False, True):
    beam = BEAM.format(bL=bL, bE=bE, bG=bG, brho=brho, bA=bA, bIy=bIy, bIz=bIz, bJ=bJ, geo=str(geo).lower())
    o1, err1 = linearize_json(B, HUB.format(seat="", blade=beam))
    with tempfile.TemporaryDirectory() as d:
        P = rot([1, 2, 3], 0.7)
        Pt = P.T  # the modal frame's axes in the hub's: its columns
        modal = "    type: modal\n    position: [0.2, 0, 0]\n    axis: [1, 2, 3]\n    angle: -0.7\n" + modal_of_beam(d, P, part, geo)
        seat = ", xaxis: [%r, %r, %r], zaxis: [%r, %r, %r]" % (*Pt[:, 0], *Pt[:, 2])
        o2, err2 = linearize_json(B, HUB.format(seat=seat, blade=modal))
    if check(o1 is not None and o2 is not None, f"beam and modal blade on the driven hub, geometric {geo}: linearized {err1} {err2}"):
        f1, f2 = freqs(o1), freqs(o2)
        lowest[geo] = f1[0]
        worst = float(np.max(np.abs(f1 - f2) / f1)) if len(f1) == len(f2) else math.inf
        check(len(f1) == 18 and worst <= 1e-9, f"modal blade (18 modes, turned frame) = beam blade, geometric {geo}: "
              f"{len(f2)} of {len(f1)} frequencies, worst relative difference {worst:.2g} (lowest {f1[:3]})")
check(len(lowest) == 2 and lowest[True] > 1.05 * lowest[False], f"the geometric stiffness stiffens the blade: {lowest}")

print("FAILED" if check.fails else "all ok")
sys.exit(1 if check.fails else 0)
