#!/usr/bin/env python3
"""Issue 32, item 4: the geometric stiffness of modal bodies, from matrices per unit load.

Plays the FE code: a uniform cantilever of NE Euler-Bernoulli elements (axial linear, transverse cubic
Hermite, consistent mass) written here with numpy, clamped at node 1 (the floating frame's), reduced
to all its 3 NE fixed-interface modes Phi, with the floating-frame invariants and the geometric
stiffness Phi^T K_G(N) Phi per unit load, K_G(N) = int N S'^T S' dX with the axial force N of each unit
load case of the clamped body (docs/mechanism-reference.md, "Modal bodies"):
  ax (body force -rho A e_x):  N = -rho A (L - X);   w2 (body force rho A X e_x):  N = rho A (L^2 - X^2) / 2;
  fx at the tip marker (a unit force along x there):  N = 1.
The same body is also exported lying along its frame's y axis (u0 = (0, Y)): then the unit
acceleration along y loads it axially (`ay`), and the tip force along y (`fy`).
The reference is the FE model's own eigenproblem with the same K_G:
  M q'' + G q' + (K + K_G - Omega^2 M) q = 0  (G = 2 Omega int rho A S^T Jt S).
Checked (every frequency of the modal bodies against it, and against the beam body with its own
geometric stiffness):
  - hanging under gravity at its equilibrium (along x and along y: `ax` and `ay`), the bending
    frequencies up; without `geometric_stiffness` they equal the reference without K_G;
  - spinning in its plane on a driven hub at Omega = 5, 10, 30 (`w2`, `at: given` and `at: steady`),
    and Southwell's slope (omega^2 - omega_0^2) / Omega^2 -> phi - 1 of the first lead-lag mode
    (phi = 1.1933 from the exact mode shape);
  - an axial compressive tip load P = P_cr / 2 through the tip marker's `fx` (and `fy`), P_cr =
    pi^2 E I / (4 L^2);
  - the parameter derivative d omega / d g of the hanging body (`mblin sensitivity`) against
    central differences of the reference;
  - a bad geometric stiffness file is one error line.
Usage: test_modal_geometric.py MBLIN
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import write_mtx  # noqa: E402

B = sys.argv[1]
L, E, RHO, R, GRAV = 1.0, 2e9, 7850.0, 0.01, 9.81
A, I = math.pi * R * R, math.pi * R ** 4 / 4
NE = 6
fails = 0


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok
    return ok


def fe(ne):
    """nodal matrices of the cantilever along x: M, K, the gyroscopic P = int rho A S^T Jt S, Sb, c1,
    c2, and the geometric stiffness of an axial force N(X) (a function)"""
    le, n = L / ne, 3 * (ne + 1)
    M, P, K = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    Sb, c1, c2 = np.zeros((2, n)), np.zeros(n), np.zeros(n)
    Jt = np.array([[0.0, -1.0], [1.0, 0.0]])
    xs, ws = np.polynomial.legendre.leggauss(6)
    xs, ws = 0.5 * (xs + 1), 0.5 * ws
    pts = []
    for e in range(ne):
        d = slice(3 * e, 3 * e + 6)
        for xi, w in zip(xs, ws):
            X, W = e * le + xi * le, w * le
            h = [1 - 3 * xi ** 2 + 2 * xi ** 3, (xi - 2 * xi ** 2 + xi ** 3) * le, 3 * xi ** 2 - 2 * xi ** 3,
                 (-xi ** 2 + xi ** 3) * le]
            dh = [(-6 * xi + 6 * xi ** 2) / le, 1 - 4 * xi + 3 * xi ** 2, (6 * xi - 6 * xi ** 2) / le, -2 * xi + 3 * xi ** 2]
            d2h = [(-6 + 12 * xi) / le ** 2, (-4 + 6 * xi) / le, (6 - 12 * xi) / le ** 2, (-2 + 6 * xi) / le]
            S = np.zeros((2, n))
            S[0, 3 * e], S[0, 3 * e + 3] = 1 - xi, xi
            S[1, [3 * e + 1, 3 * e + 2, 3 * e + 4, 3 * e + 5]] = h
            dnu, dnv, d2nv = np.zeros(n), np.zeros(n), np.zeros(n)
            dnu[3 * e], dnu[3 * e + 3] = -1 / le, 1 / le
            dnv[[3 * e + 1, 3 * e + 2, 3 * e + 4, 3 * e + 5]] = dh
            d2nv[[3 * e + 1, 3 * e + 2, 3 * e + 4, 3 * e + 5]] = d2h
            u0 = np.array([X, 0.0])
            M += W * RHO * A * S.T @ S
            P += W * RHO * A * S.T @ Jt @ S
            K += W * (E * A * np.outer(dnu, dnu) + E * I * np.outer(d2nv, d2nv))
            Sb += W * RHO * A * S
            c1 += W * RHO * A * S.T @ u0
            c2 += W * RHO * A * S.T @ (Jt @ u0)
            pts.append((X, W, dnv))
    del d

    def KG(N):
        G = np.zeros((n, n))
        for X, W, dnv in pts:
            G += W * N(X) * np.outer(dnv, dnv)
        return G
    return dict(M=M, P=P, K=K, Sb=Sb, c1=c1, c2=c2, KG=KG, n=n)


F = fe(NE)
KEEP = slice(3, F["n"])  # node 1 clamped to the frame
N_AX = lambda X: -RHO * A * (L - X)
N_W2 = lambda X: RHO * A * (L * L - X * X) / 2
N_F = lambda X: 1.0


def reference(gax=0.0, om=0.0, P=0.0, geo=True):
    """the lowest in-plane frequencies (rad/s) of the FE model clamped at the axis"""
    M, K = F["M"][KEEP, KEEP], F["K"][KEEP, KEEP].copy()
    G = 2 * om * F["P"][KEEP, KEEP]
    if geo:
        K += (-gax * F["KG"](N_AX) + om * om * F["KG"](N_W2) - P * F["KG"](N_F))[KEEP, KEEP]
    K -= om * om * M
    m = M.shape[0]
    Mi = np.linalg.inv(M)
    ev = np.linalg.eigvals(np.block([[np.zeros((m, m)), np.eye(m)], [-Mi @ K, -Mi @ G]]))
    return np.sort(ev.imag[ev.imag > 1e-9])


def modes():
    """all fixed-interface modes, mass-normalized (Cholesky of M and a symmetric eigensolver)"""
    M, K = F["M"][KEEP, KEEP], F["K"][KEEP, KEEP]
    Lc = np.linalg.cholesky(M)
    C = np.linalg.solve(Lc, np.linalg.solve(Lc, K).T).T
    w2, V = np.linalg.eigh(0.5 * (C + C.T))
    Phi = np.zeros((F["n"], M.shape[0]))
    Phi[KEEP, :] = np.linalg.solve(Lc.T, V)
    return Phi


def export(d, along):
    """the modal body's files in directory d, lying along its frame's x or y axis: its YAML lines"""
    Phi = modes()
    sym = lambda X: 0.5 * (X + X.T)
    Q = np.eye(2) if along == "x" else np.array([[0.0, -1.0], [1.0, 0.0]])  # the frame's axes of the body's
    m = RHO * A * L
    files = dict(M=sym(Phi.T @ F["M"] @ Phi), K=sym(Phi.T @ F["K"] @ Phi), P=0.5 * (Phi.T @ F["P"] @ Phi - (Phi.T @ F["P"] @ Phi).T),
                 Sb=Q @ F["Sb"] @ Phi, c1=(Phi.T @ F["c1"])[:, None], c2=(Phi.T @ F["c2"])[:, None],
                 Gacc=sym(Phi.T @ F["KG"](N_AX) @ Phi), Gw2=sym(Phi.T @ F["KG"](N_W2) @ Phi),
                 Gtip=sym(Phi.T @ F["KG"](N_F) @ Phi))
    last = 3 * NE
    tip = Phi[last:last + 3, :]
    files["tip"] = np.vstack([Q @ tip[:2, :], tip[2:3, :]])
    files["root"] = np.zeros((3, Phi.shape[1]))
    for k, X in files.items():
        write_mtx(os.path.join(d, f"{along}_{k}.mtx"), X)
    s0 = Q @ np.array([m * L / 2, 0.0])
    acc, force = ("ax", "fx") if along == "x" else ("ay", "fy")
    tipX = Q @ np.array([L, 0.0])
    return f"""    type: modal
    mass: {m!r}
    s0: [{s0[0]!r}, {s0[1]!r}]
    J0: {m * L * L / 3!r}
    mass_matrix: {along}_M.mtx
    stiffness: {along}_K.mtx
    Sb: {along}_Sb.mtx
    c1: {along}_c1.mtx
    c2: {along}_c2.mtx
    P: {along}_P.mtx
GEO    geometric_stiffness: {{{acc}: {along}_Gacc.mtx, w2: {along}_Gw2.mtx}}
    markers:
      root: {{position: [0, 0], shapes: {along}_root.mtx, angle: {"0" if along == "x" else "pi/2"}}}
      tip: {{position: [{tipX[0]!r}, {tipX[1]!r}], shapes: {along}_tip.mtx, angle: {"0" if along == "x" else "pi/2"},
GEO            geometric_stiffness: {{{force}: {along}_Gtip.mtx}}
           }}
"""


BEAM = f"""    type: beam
    length: L
    elements: {NE}
    E: E
    rho: rho
    radius: r
    markers: {{root: {{node: 1}}, tip: {{s: L}}}}
"""


def model(kind, body, angle, geo=True):
    body = body.replace("GEO", "") if geo else "\n".join(l for l in body.split("\n") if not l.startswith("GEO")) + "\n"
    head = f"""model: mechanism
name: modal geometric stiffness ({kind})
space: planar
parameters: {{L: {L}, E: {E}, rho: {RHO}, r: {R}, g: {GRAV}, Omega: 0, P: 0}}
ground:
  markers:
    o: {{position: [0, 0], angle: {"-pi/2" if kind == "hanging" else "0"}}}
bodies:
  b:
    angle: {angle}
{body}"""
    if kind == "hanging":
        return head + """joints:
  clamp: {type: fixed, i: root, j: o}
forces:
  weight: {type: gravity, g: [0, -g]}
linearize:
  at: equilibrium
"""
    if kind == "carrying":
        return head + """  bob:
    mass: 3
    inertia: 0.02
    position: [0, -1.25]
    markers: {pin: {position: [0, 0.25]}}
joints:
  clamp: {type: fixed, i: root, j: o}
  carry: {type: revolute, i: pin, j: tip}
forces:
  weight: {type: gravity, g: [0, -g]}
linearize:
  at: equilibrium
"""
    if kind == "buckling":
        return head + """joints:
  clamp: {type: fixed, i: root, j: o}
forces:
  push: {type: force, i: tip, force: [-P, 0]}
linearize:
  at: equilibrium
"""
    return head + """joints:
  hub: {type: revolute, i: root, j: o}
drivers:
  spin: {joint: hub, motion: Omega*t}
linearize:
  at: given
"""


def run(d, text, cmd, *args):
    path = os.path.join(d, "m.yaml")
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([B, cmd, path, "--json", *args], capture_output=True, text=True)


def freqs(d, text, *args):
    p = run(d, text, "linearize", "--no-matrices", *args)
    if p.returncode and not check(False, "mblin linearize: " + p.stderr.strip()):
        return np.array([np.nan] * 4)
    o = json.loads(p.stdout)
    return np.sort([e["im"] for e in o["eigenvalues"] if e["im"] > 1e-9])


def rel(a, b):
    n = min(len(a), len(b))
    return float(np.max(np.abs(a[:n] - b[:n]) / np.abs(b[:n])))


def southwell():
    """phi of the first cantilever mode from its exact shape (1 + cos b cosh b = 0)"""
    b = 1.8751040687119611
    s = (math.cosh(b) + math.cos(b)) / (math.sinh(b) + math.sin(b))
    x, w = np.polynomial.legendre.leggauss(60)
    x, w = 0.5 * (x + 1), 0.5 * w
    psi = np.cosh(b * x) - np.cos(b * x) - s * (np.sinh(b * x) - np.sin(b * x))
    dpsi = b * (np.sinh(b * x) + np.sin(b * x) - s * (np.cosh(b * x) - np.cos(b * x)))
    return float(np.sum(w * (1 - x * x) / 2 * dpsi ** 2) / np.sum(w * psi ** 2))


NM = 6  # the frequencies compared
with tempfile.TemporaryDirectory() as d:
    bodies = {"x": (export(d, "x"), "-pi/2", "0"), "y": (export(d, "y"), "-pi", "-pi/2")}
    # hanging under gravity: `ax` (along x) and `ay` (along y)
    w0, wg = reference()[:NM], reference(gax=GRAV)[:NM]
    beam = freqs(d, model("hanging", BEAM, "-pi/2"))[:NM]
    check(rel(beam, wg) <= 1e-9, f"hanging beam body: {beam[:3]} vs reference with K_G {wg[:3]} (rel {rel(beam, wg):.1e})")
    for along, (body, hang, spin) in bodies.items():
        got = freqs(d, model("hanging", body, hang))[:NM]
        check(rel(got, wg) <= 1e-9, f"hanging modal body along {along}: {got[:3]} vs reference {wg[:3]} (rel {rel(got, wg):.1e}), "
              f"beam body {rel(got, beam):.1e}")
        check(got[0] > 1.05 * w0[0], f"hanging modal body along {along}: omega_1 up from {w0[0]:.6f} to {got[0]:.6f}")
        off = freqs(d, model("hanging", body, hang, geo=False))[:NM]
        check(rel(off, w0) <= 1e-9, f"hanging modal body along {along} without geometric_stiffness: {off[:3]} vs {w0[:3]}")
    # carrying a rigid pendulum on a revolute at its tip: the joint's reaction (the bob's weight)
    # through the tip marker's fx / fy (the constraint's second derivatives), against the beam body
    beam = freqs(d, model("carrying", BEAM, "-pi/2"))[:NM]
    for along, (body, hang, spin) in bodies.items():
        got = freqs(d, model("carrying", body, hang))[:NM]
        check(rel(got, beam) <= 1e-9, f"carrying a pendulum, modal body along {along}: {got[:4]} vs beam body {beam[:4]} (rel {rel(got, beam):.1e})")
    nofx = "\n".join(l for l in bodies["x"][0].split("\n") if "x_Gtip" not in l)
    off = freqs(d, model("carrying", nofx, "-pi/2"))[:NM]
    check(rel(off, beam) > 1e-3, f"carrying a pendulum without the tip marker's fx: {off[:4]}, off by {rel(off, beam):.1e}")
    # d omega / d g (the sensitivities through the gravity in the term's geometric part)
    h = 1e-3
    ref = (reference(gax=GRAV + h)[:3] - reference(gax=GRAV - h)[:3]) / (2 * h)
    for along, (body, hang, spin) in bodies.items():
        p = run(d, model("hanging", body, hang), "sensitivity", "--wrt", "g", "--no-shapes")
        if check(p.returncode == 0, "sensitivity: " + p.stderr.strip()):
            o = json.loads(p.stdout)
            dw = np.array(sorted((m["im"], m["d"][0]["im"]) for m in o["modes"] if m["im"] > 1e-9))[:3, 1]
            check(float(np.max(np.abs(dw - ref) / np.abs(ref))) <= 1e-6,
                  f"hanging along {along}: d omega/d g {dw} vs central differences of the reference {ref}")
    # spinning on a driven hub (hub radius 0): lead-lag with the centrifugal tension
    for om in (5.0, 10.0, 30.0):
        ref = reference(om=om)[:NM]
        for along, (body, hang, spin) in bodies.items():
            got = freqs(d, model("spinning", body, spin), "--set", f"Omega={om}")[:NM]
            check(rel(got, ref) <= 1e-9, f"spinning at {om}, modal body along {along}: {got[:3]} vs reference {ref[:3]} (rel {rel(got, ref):.1e})")
        beam = freqs(d, model("spinning", BEAM, "0"), "--set", f"Omega={om}")[:NM]
        got = freqs(d, model("spinning", bodies["x"][0], "0"), "--set", f"Omega={om}", "--at", "steady")[:NM]
        check(rel(got, beam) <= 1e-9, f"steady spin at {om}: modal body {got[:3]} vs beam body {beam[:3]} (rel {rel(got, beam):.1e})")
    phi = southwell()
    w00 = reference()[0]
    om = 0.5
    got = freqs(d, model("spinning", bodies["x"][0], "0"), "--set", f"Omega={om}")[0]
    slope = (got ** 2 - w00 ** 2) / om ** 2
    check(abs(slope - (phi - 1)) <= 2e-3, f"Southwell: (omega^2 - omega_0^2)/Omega^2 = {slope:.5f}, phi - 1 = {phi - 1:.5f}")
    off = freqs(d, model("spinning", bodies["x"][0], "0", geo=False), "--set", f"Omega={om}")[0]
    check((off ** 2 - w00 ** 2) / om ** 2 < -0.9, f"Southwell without geometric_stiffness: slope {(off ** 2 - w00 ** 2) / om ** 2:.4f} (softening)")
    # an axial compressive tip load through the tip marker's fx / fy
    pcr = math.pi ** 2 * E * I / (4 * L * L)
    ref = reference(P=pcr / 2)[:NM]
    for along, (body, hang, spin) in bodies.items():
        # (along y the frame is turned by -pi/2: the global force [-P, 0] is along the frame's -y)
        got = freqs(d, model("buckling", body, spin), "--set", f"P={pcr / 2!r}")[:NM]
        check(rel(got, ref) <= 1e-8, f"tip load P_cr/2, modal body along {along}: {got[:3]} vs reference {ref[:3]} (rel {rel(got, ref):.1e})")
    # examples/beam_to_modal.py --geometric (the FE code's part for the project's beam) on source 001's
    # flexible pendulum: the modal bodies of all 30 modes with Gax, Gw2 and link 1's tip Gtip give the
    # beam bodies' frequencies with their geometric stiffness (link 2's weight on link 1's tip)
    ex = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
    p = subprocess.run([sys.executable, os.path.join(ex, "beam_to_modal.py"), "--length", "4", "--elements", "10", "--E", "1e8",
                        "--rho", "1500", "--radius", "0.15", "--geometric", "--prefix", os.path.join(d, "p10")],
                       capture_output=True, text=True)
    if check(p.returncode == 0, "beam_to_modal.py --geometric " + p.stderr.strip()):
        with open(os.path.join(ex, "flexible_pendulum_modal.yaml")) as f:
            text = f.read().replace("modal/link10_", "p10_")
        text = text.replace("    P: p10_P.mtx\n", "    P: p10_P.mtx\n    geometric_stiffness: {ax: p10_Gax.mtx, w2: p10_Gw2.mtx}\n")
        text = text.replace("shapes: p10_node11.mtx}", "shapes: p10_node11.mtx, geometric_stiffness: {fx: p10_Gtip.mtx}}")
        with open(os.path.join(ex, "flexible_pendulum_beams.yaml")) as f:
            beams = "".join(l for l in f if "geometric_stiffness: false" not in l).replace("elements: 50", "elements: 10")
        got, ref = freqs(d, text)[:8], freqs(d, beams)[:8]
        check(len(got) == 8 and rel(got, ref) <= 1e-9,
              f"flexible pendulum of modal bodies from beam_to_modal.py --geometric: {got[:4]} vs beam bodies {ref[:4]} "
              f"(rel {rel(got, ref):.1e})")
    # bad input: one line naming the file
    write_mtx(os.path.join(d, "bad.mtx"), np.arange(36.0 * 36).reshape(36, 36)[:3 * NE, :3 * NE])
    p = run(d, model("hanging", bodies["x"][0].replace("x_Gw2.mtx", "bad.mtx"), "-pi/2"), "linearize")
    check(p.returncode != 0 and "geometric_stiffness: w2 must be symmetric" in p.stderr and p.stderr.count("\n") == 1,
          f"an asymmetric file: {p.stderr.strip()}")
    p = run(d, model("hanging", bodies["x"][0].replace("w2: x_Gw2", "w3: x_Gw2"), "-pi/2"), "linearize")
    check(p.returncode != 0 and "w3" in p.stderr and p.stderr.count("\n") == 1, f"an unknown load: {p.stderr.strip()}")
sys.exit(1 if fails else 0)
