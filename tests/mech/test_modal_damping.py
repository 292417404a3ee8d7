"""Modal damping ratios of modal bodies (issue 70, item 7): `damping: {zeta: [...]}` on a modal body
and the mechanism-wide `modal_damping: z`, C = M Phi diag(2 zeta_i omega_i) Phi^T M in the modal
coordinates (src/mech/modal_damping.c). Each body is clamped to ground by a fixed joint at a marker,
so its modal coordinates obey M eta'' + C eta' + K eta = 0 alone, and mode i's eigenvalues are
-zeta_i omega_i +- i omega_i sqrt(1 - zeta_i^2): the linearization's damping ratios must be the
given zetas and its undamped frequencies omega_i / 2 pi, omega_i^2 the eigenvalues of (K, M) by
numpy (closed form, 1e-9).

  - planar, two modes with a full (not diagonal) modal mass and stiffness: zeta = [0.02, 0.1];
  - the same with one number for both modes, and with the top-level `modal_damping` (the body
    gives none), and the body's own list beside a top-level value (the body's wins);
  - with Rayleigh damping beside it (alpha, beta), the documented sum: mode i's ratio
    zeta_i + alpha / (2 omega_i) + beta omega_i / 2 (the Rayleigh part is diagonal in the modes);
  - spatial, one mode (the two-halves part of test_modal3.py's kind, clamped at its centre), zeta
    0.05; and a spatial part written as a beam: refused (beams have no zeta);
  - refusals, one line naming the key: a list of the wrong length, a negative ratio, a text that
    is no number, zeta on a rigid body.
Usage: test_modal_damping.py MBLIN
"""
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import Checks, linearize_json, linearize_text, write_mtx  # noqa: E402

B = sys.argv[1]
check = Checks()
TOL = 1e-9
MM = np.array([[2.0, 0.3], [0.3, 1.0]])
KK = np.array([[900.0, -150.0], [-150.0, 400.0]])


def omegas(Kx, Mx):
    w2 = np.sort(np.real(np.linalg.eigvals(np.linalg.solve(Mx, Kx))))
    return np.sqrt(w2)


def planar(d, damping="", top=""):
    write_mtx(f"{d}/M.mtx", MM)
    write_mtx(f"{d}/K.mtx", KK)
    write_mtx(f"{d}/Sb.mtx", [[0.1, 0.2], [0.3, -0.1]])
    write_mtx(f"{d}/c1.mtx", [[0.05], [0.02]])
    write_mtx(f"{d}/c2.mtx", [[0.01], [-0.03]])
    write_mtx(f"{d}/P.mtx", [[0.0, 0.04], [-0.04, 0.0]])
    write_mtx(f"{d}/o.mtx", np.zeros((3, 2)))
    return f"""model: mechanism
name: clamped planar modal body
space: planar
{top}ground:
  markers: {{o: {{position: [0, 0]}}}}
bodies:
  link:
    type: modal
    position: [0, 0]
    angle: 0
    mass: 3
    s0: [1.5, 0]
    J0: 2
    mass_matrix: {d}/M.mtx
    stiffness: {d}/K.mtx
    Sb: {d}/Sb.mtx
    c1: {d}/c1.mtx
    c2: {d}/c2.mtx
    P: {d}/P.mtx
{damping}    markers:
      a: {{position: [0, 0], shapes: {d}/o.mtx}}
joints:
  clamp: {{type: fixed, i: a, j: o}}
"""


def modes(o):
    """(undamped omega, damping ratio) of the eigenvalues with Im > 0, by frequency"""
    ev = [e for e in o["eigenvalues"] if e["im"] > 1e-9]
    return sorted((math.hypot(e["re"], e["im"]), e["damping_ratio"]) for e in ev)


def expect(tag, text, zeta_ref, w_ref):
    o, err = linearize_json(B, text)
    if not check(o is not None, f"{tag}: linearized {err}"):
        return
    got = modes(o)
    ok = len(got) == len(w_ref) and all(abs(w / wr - 1) <= TOL and abs(z - zr) <= TOL
                                        for (w, z), wr, zr in zip(got, w_ref, zeta_ref))
    check(ok, f"{tag}: (omega, zeta) {got} = omega {list(w_ref)}, zeta {list(zeta_ref)}")


def refused(tag, text, *needles):
    p = linearize_text(B, text)
    lines = p.stderr.strip().split("\n")
    check(p.returncode != 0 and len(lines) == 1 and all(n in lines[0] for n in needles),
          f"{tag}: one-line error with {needles} (exit {p.returncode}: {p.stderr.strip()})")


with tempfile.TemporaryDirectory() as d:
    w = omegas(KK, MM)
    expect("planar, zeta list", planar(d, "    damping: {zeta: [0.02, 0.1]}\n"), [0.02, 0.1], w)
    expect("planar, one zeta", planar(d, "    damping: {zeta: 0.07}\n"), [0.07, 0.07], w)
    expect("planar, modal_damping", planar(d, top="modal_damping: 0.03\n"), [0.03, 0.03], w)
    expect("planar, own list over modal_damping", planar(d, "    damping: {zeta: [0.02, 0.1]}\n", "modal_damping: 0.5\n"),
           [0.02, 0.1], w)
    al, be = 0.4, 2e-3
    expect("planar, Rayleigh + modal (the sum)", planar(d, f"    damping: {{alpha: {al}, beta: {be}, zeta: [0.02, 0.1]}}\n"),
           [z + al / (2 * wi) + be * wi / 2 for z, wi in zip([0.02, 0.1], w)], w)
    expect("planar, Rayleigh alone (unchanged)", planar(d, f"    damping: {{alpha: {al}, beta: {be}}}\n"),
           [al / (2 * wi) + be * wi / 2 for wi in w], w)
    refused("zeta list of 3 for 2 modes", planar(d, "    damping: {zeta: [0.1, 0.2, 0.3]}\n"), "zeta has 3 ratios", "2 modes")
    refused("negative zeta", planar(d, "    damping: {zeta: [0.1, -0.2]}\n"), "-0.2 must be >= 0")
    refused("zeta not a number", planar(d, "    damping: {zeta: [0.1, z]}\n"), "'z' must be a number")
    refused("negative modal_damping", planar(d, top="modal_damping: -1\n"), "must be >= 0")
    rigid = planar(d).replace("    type: modal\n", "    type: modal\n").replace(
        "joints:", "  bob: {mass: 1, inertia: 1, position: [1, 0], damping: {zeta: 0.1}, markers: {b: {position: [0, 0]}}}\njoints:")
    refused("zeta on a rigid body", rigid, "damping")

    # spatial: one mode, the halves of mass mh = 1 at x = -+0.4 moving apart (test_modal3.py)
    m, a, k = 0.5, 0.4, 800.0
    mh, c = 2 * m, 1 / math.sqrt(2 * 2 * m)
    write_mtx(f"{d}/Sb3.mtx", [[0.0], [0.0], [0.0]])
    write_mtx(f"{d}/Cu3.mtx", [[4 * m * a * c], [0], [0], [0], [0], [0], [0], [0], [0]])
    write_mtx(f"{d}/Mab3.mtx", [[4 * m * c * c], [0], [0], [0], [0], [0], [0], [0], [0]])
    write_mtx(f"{d}/Mc3.mtx", [[4 * m * c * c]])
    write_mtx(f"{d}/K3.mtx", [[k * (2 * c) ** 2]])
    write_mtx(f"{d}/c3.mtx", np.zeros((6, 1)))
    spatial = f"""model: mechanism
name: clamped spatial modal body
space: spatial
ground:
  markers: {{o: {{}}}}
bodies:
  part:
    type: modal
    damping: {{zeta: 0.05}}
    invariants:
      mass: {4 * m!r}
      s0: [0, 0, 0]
      Q0: [{4 * m * a * a!r}, 0, {4 * m * 0.01!r}, 0, 0, 0]
      Sb: {d}/Sb3.mtx
      Cu: {d}/Cu3.mtx
      Mab: {d}/Mab3.mtx
      Mc: {d}/Mc3.mtx
      K: {d}/K3.mtx
    markers:
      c: {{position: [0, 0, 0], shapes: {d}/c3.mtx}}
joints:
  clamp: {{type: fixed, i: c, j: o}}
"""
    expect("spatial, zeta 0.05", spatial, [0.05], [math.sqrt(2 * k / mh)])
    beam = """model: mechanism
name: beam with zeta
space: spatial
ground:
  markers: {o: {}}
bodies:
  b:
    type: beam
    length: 1
    elements: 2
    E: 2e11
    G: 8e10
    rho: 7800
    radius: 0.01
    damping: {zeta: 0.1}
"""
    refused("zeta on a spatial beam", beam, "damping", "zeta")

sys.exit(1 if check.fails else 0)
