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
  - hanging in gravity g from a revolute joint at the left half (on the joint's axis, so it stays):
    the right half at r = 2 a + s, s = mh g / k the spring's static stretch; in polar coordinates
    r'' - r th'^2 = g cos th - (k / mh)(r - r0), (r^2 th')' = -g r sin th, linearised about th = 0:
    the swing w^2 = g / (2 a + mh g / k) and the stretch w^2 = k / mh, decoupled (1e-9);
  - the rigid limit (k = 1e12 k): the swing equals a rigid body's pendulum of the same mass and
    inertia in the same mechanism (1e-6) and g / (2 a) (1e-6);
  - refusals: geometric_stiffness, a missing invariant, a marker's shapes of the wrong size.
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


def body_text(d, kk, extra=""):
    mass, s0, Q0 = write_part(d, kk)
    return f"""  part:
    type: modal
{extra}    invariants:
      mass: {mass!r}
      s0: [{s0[0]!r}, {s0[1]!r}, {s0[2]!r}]
      Q0: [{', '.join(repr(x) for x in Q0)}]
      Sb: {d}/Sb.mtx
      Cu: {d}/Cu.mtx
      Mab: {d}/Mab.mtx
      Mc: {d}/Mc.mtx
      K: {d}/K.mtx
    markers:
      c: {{position: [0, 0, 0], shapes: {d}/c.mtx}}
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
            ("geometric stiffness", "    geometric_stiffness: {ax: x.mtx}\n", None, "not there yet"),
            ("a missing invariant", "", lambda t: t.replace(f"      Cu: {d}/Cu.mtx\n", ""), "missing 'Cu'"),
            ("shapes of the wrong size", "", lambda t: t.replace(f"{d}/r.mtx", f"{d}/Sb.mtx"), "expected 6 x 1")):
        t = body_text(d, k, extra)
        if body_edit:
            t = body_edit(t)
        o, err = linearize_json(B, model(t))
        check(o is None and want in err and "part" in err, f"refused, {what}: {err}")

print("FAILED" if check.fails else "all ok")
sys.exit(1 if check.fails else 0)
