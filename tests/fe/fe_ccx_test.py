#!/usr/bin/env python3
"""mblin's flexible parts from CalculiX against CalculiX itself (issue 67, item 5; docs/fe-parts.md).

usage: fe_ccx_test.py MBLIN

The link of examples/fe (gmsh mesh, ccx matrices, made at test time by make_part.sh in a temporary
folder; for the checks with every mode kept a coarse mesh of linear tetrahedra, 165 rows, whose
all-mode body linearizes in a second) as a spatial modal body (`fe: {calculix: link, ...}`), linearized by MBLIN, against values
obtained without mblin:
  1. free-free, every fixed-interface mode kept (three corner nodes as interfaces, so the part is
     the FE model itself): the elastic frequencies equal the exact eigenvalues of ccx's own
     matrices (tests/fe/ccx_exact.py: SciPy's ARPACK) to EXACT_RTOL, and ccx's own *FREQUENCY
     eigenvalues (tests/fe/ccx_reference.py) to CCX_RTOL (ccx's eigensolver is that far from
     its matrices' eigenvalues: 2.3e-8 measured);
  2. clamped at END_A (its rigid spider held by a fixed joint), every mode kept: the same against
     the matrices ccx writes for the part held at END_A (link_clamped_mat.inp) and ccx's clamped
     *FREQUENCY run;
  3. few modes (Craig-Bampton's truncation, END_A and END_B spiders): the clamped frequencies lie
     above the exact ones (Rayleigh-Ritz) and come down as modes are added; the error of the
     lowest pair below FEW_RTOL with 20 modes;
  4. the link as a pendulum (a revolute joint at END_A, gravity) against the same pendulum built of
     mblin's spatial beam elements: the swing within PEND_RTOL, the first bending pair within
     BEAM_RTOL (the beam theory's and the mesh's errors: 0.3 % measured, docs/fe-parts.md);
  5. the invariants: the rigid-body block of mblin's mass matrix of the free link (m, the first
     moment s0, the inertia about the part's origin) against direct integration over ccx's full
     mass matrix (numpy), and the modes' coupling to the frame (Sb, int rho u0 x S) zero, to INV_RTOL.
  6. the same part written as a Nastran punch file (tests/fe/write_dmig.py) gives the same body;
  7. examples/fe/link_pendulum.yaml against the rigid double pendulum of the same masses.
Skips (77) without gmsh, ccx or numpy/scipy.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(ROOT, "examples", "fe")

EXACT_RTOL = 1e-8   # mblin against the exact eigenvalues of the same matrices
CCX_RTOL = 1e-7     # ... against ccx's own eigensolver (4.2e-8 from its matrices' eigenvalues on
                    # the coarse link, 2.3e-8 on the example's mesh, 1.6e-6 on a stubby L = 0.1 one)
FEW_RTOL = 1e-5     # the lowest clamped pair with 20 fixed-interface modes (8.7e-7 measured)
PEND_RTOL = 2e-3    # the pendulum's swing: the solid's mass and inertia against the beam's
BEAM_RTOL = 1e-2    # the first bending pair: beam theory and the solid mesh
EXAMPLE_RTOL = 1e-3 # the example's swings against the rigid double pendulum
INV_RTOL = 1e-10    # invariants against the direct integration (relative to the largest entry)
COARSE = ["-setnumber", "lc", "0.05", "-setnumber", "order", "1"]  # linear tetrahedra, 165 rows: every mode kept in a second

fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fe_ccx_test.py: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:400]}")
    return p.stdout


def make_part(d, extra):
    run(["sh", os.path.join(EXAMPLE, "make_part.sh"), "-o", d] + extra, d)


def linearize(mblin, d, name, text, *args):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return json.loads(run([mblin, "linearize", path, "--json"] + list(args), d))


def freqs(lin):
    """the oscillating modes' frequencies (Hz), ascending, one per pair"""
    return sorted(e["freq_hz"] for e in lin["eigenvalues"] if e["kind"] != "zero" and e["im"] > 0)


def ccx_exact(d, job, nev):
    return json.loads(run([sys.executable, os.path.join(HERE, "ccx_exact.py"), os.path.join(d, job), "--nev", str(nev)], d))


def ccx_own(d, deck):
    return json.loads(run([sys.executable, os.path.join(HERE, "ccx_reference.py"), os.path.join(d, deck)], d))


def rel(a, b):
    return abs(a - b) / abs(b)


def free_body(modes, markers, name="the link alone, free", before="", after=""):
    return f"""model: mechanism
space: spatial
name: {name}
{before}bodies:
  link:
    type: modal
    fe: {{calculix: link, modes: {modes}}}
    markers:
{markers}
{after}"""


def clamped_body(modes, markers):
    return free_body(modes, markers, "the link clamped at END_A", "ground:\n  markers:\n    wall: {position: [0, 0, 0]}\n",
                     "joints:\n  clamp: {type: fixed, i: a, j: wall}\n")


CORNERS = "      a: {node: 1}\n      b: {node: 2}\n      c: {node: 5}"
SPIDER_A = "      a: {set: END_A}"
SPIDERS = "      a: {set: END_A}\n      b: {set: END_B}"


def rows(d):
    with open(os.path.join(d, "link.dof")) as f:
        return sum(1 for line in f if line.strip())


def every_mode(mblin, d):
    n = rows(d)
    # 1. free-free: three corner nodes (9 interface rows) hold the part; all interior modes kept
    lin = linearize(mblin, d, "free_all.yaml", free_body(n - 9, CORNERS))
    f = freqs(lin)
    ex = [math.sqrt(max(w, 0)) / (2 * math.pi) for w in ccx_exact(d, "link", 18)["eigenvalues"][6:]]
    own = ccx_own(d, "link_free.inp")["link_free"]["frequencies_hz"][6:]
    e1 = max(rel(a, b) for a, b in zip(f, ex))
    e2 = max(rel(a, b) for a, b in zip(f, own))
    check(len(f) >= 12 and e1 <= EXACT_RTOL, f"free-free, all {n - 9} modes: the 12 lowest against ccx's matrices' exact eigenvalues: {e1:.2e} <= {EXACT_RTOL:g}")
    check(e2 <= CCX_RTOL, f"free-free, all modes: against ccx's own *FREQUENCY: {e2:.2e} <= {CCX_RTOL:g}")
    # 2. clamped at END_A (its spider held), all modes kept
    run(["ccx", "-i", "link_clamped_mat"], d)
    ex = [math.sqrt(w) / (2 * math.pi) for w in ccx_exact(d, "link_clamped_mat", 12)["eigenvalues"]]
    own = ccx_own(d, "link_clamped.inp")["link_clamped"]["frequencies_hz"]
    nend = rows(d) - sum(1 for _ in open(os.path.join(d, "link_clamped_mat.dof")))
    lin = linearize(mblin, d, "clamped_all.yaml", clamped_body(n - nend, SPIDER_A))
    f = freqs(lin)
    e1 = max(rel(a, b) for a, b in zip(f, ex))
    e2 = max(rel(a, b) for a, b in zip(f, own))
    check(len(f) >= 12 and e1 <= EXACT_RTOL, f"clamped at END_A, all {n - nend} modes: against ccx's matrices: {e1:.2e} <= {EXACT_RTOL:g}")
    check(e2 <= CCX_RTOL, f"clamped at END_A, all modes: against ccx's own *FREQUENCY: {e2:.2e} <= {CCX_RTOL:g}")
    return ex


def few_modes(mblin, d, ex):
    """3. Craig-Bampton's truncation (END_A and END_B spiders) converges from above: a Rayleigh-Ritz
    bound on nested subspaces, and END_B's rigid face only stiffens the part further"""
    errs = []
    for m in (5, 10, 20):
        f = freqs(linearize(mblin, d, f"clamped_{m}.yaml", clamped_body(m, SPIDERS)))
        errs.append([(a - b) / b for a, b in zip(f[:6], ex[:6])])
    above = all(e >= -EXACT_RTOL for row in errs for e in row)
    down = all(errs[i + 1][j] <= errs[i][j] + EXACT_RTOL for i in range(2) for j in range(6))
    check(above, "few modes: every clamped frequency above the exact one (Rayleigh-Ritz)")
    check(down, "few modes: 5, 10, 20 modes: the errors come down ("
          + "; ".join(", ".join(f"{e:.1e}" for e in row[:3]) for row in errs) + ")")
    check(max(errs[2][:2]) <= FEW_RTOL, f"few modes: the lowest pair with 20 modes within {FEW_RTOL:g} ({max(errs[2][:2]):.2e})")


PENDULUM_MODAL = """model: mechanism
space: spatial
name: the link as a pendulum (modal body of the solid)
ground:
  markers:
    pivot: {position: [0, 0, 0]}
bodies:
  link:
    type: modal
    fe: {calculix: link, modes: 20}
    markers:
      a: {set: END_A}
joints:
  hinge: {type: revolute, i: a, j: pivot}
forces:
  weight: {type: gravity, g: [9.81, 0, 0]}
"""

PENDULUM_BEAM = """model: mechanism
space: spatial
name: the link as a pendulum (spatial beam elements)
parameters: {L: 0.5, a: 0.02, E: 70e9, nu: 0.33, G: E/(2*(1 + nu)), rho: 2700}
ground:
  markers:
    pivot: {position: [0, 0, 0]}
bodies:
  bar:
    type: beam
    length: L
    elements: 20
    E: E
    G: G
    rho: rho
    A: a^2
    Iy: a^4/12
    Iz: a^4/12
    J: 0.140577*a^4
    geometric_stiffness: false
    markers:
      root: {node: 1}
joints:
  hinge: {type: revolute, i: root, j: pivot}
forces:
  weight: {type: gravity, g: [9.81, 0, 0]}
"""


def pendulum(mblin, d):
    """4. the solid link and the beam link swinging from a pin at END_A (modal bodies have no
    geometric stiffness yet: the beam's is switched off, docs/fe-parts.md)"""
    fm = freqs(linearize(mblin, d, "pend_modal.yaml", PENDULUM_MODAL))
    fb = freqs(linearize(mblin, d, "pend_beam.yaml", PENDULUM_BEAM))
    swing = math.sqrt(9.81 * 0.25 / (0.5 ** 2 / 3)) / (2 * math.pi)  # a thin rod: sqrt(m g L/2 / (m L^2/3))
    check(rel(fm[0], fb[0]) <= PEND_RTOL and rel(fb[0], swing) <= PEND_RTOL,
          f"pendulum: the swing {fm[0]:.6f} Hz (solid), {fb[0]:.6f} Hz (beam), {swing:.6f} Hz (thin rod)")
    e = rel(fm[1], fb[1])
    check(e <= BEAM_RTOL, f"pendulum: the first bending mode {fm[1]:.3f} Hz (solid) against {fb[1]:.3f} Hz (beam): {e:.2e} <= {BEAM_RTOL:g}")


def direct_invariants(d):
    """m, s0 and the inertia about the origin by direct integration over ccx's mass matrix: its
    UX-UX block is the scalar mass rho N_i N_j (solid elements), x the nodes' coordinates"""
    import numpy as np
    sys.path.insert(0, HERE)
    from ccx_exact import read_triangle
    M = read_triangle(os.path.join(d, "link.mas")).toarray()
    dof = [line.split(".") for line in open(os.path.join(d, "link.dof")) if line.strip()]
    xyz = {}
    with open(os.path.join(d, "link_mesh.inp")) as f:
        on = False
        for line in f:
            if line.startswith("*"):
                on = line.upper().startswith("*NODE") and "FILE" not in line.upper()
                continue
            if on and line.strip():
                v = line.split(",")
                xyz[int(v[0])] = [float(t) for t in v[1:4]]
    ux = [i for i, (nd, di) in enumerate(dof) if int(di) == 1]
    Ms = M[np.ix_(ux, ux)]
    X = np.array([xyz[int(dof[i][0])] for i in ux])
    m = Ms.sum()
    s0 = X.T @ Ms.sum(axis=1)
    Q = X.T @ Ms @ X
    J = np.trace(Q) * np.eye(3) - Q
    return m, s0, J


def invariants(mblin, d):
    """5. the rigid-body block of the free link's mass matrix: T = 1/2 m |R'|^2 + R'.(w x s0)
    + 1/2 w.J w with w = 2 (e1', e2', e3') at e = (1, 0, 0, 0): M_RR = m 1, M_Re = -2 [s0 x], M_ee = 4 J;
    the elastic rows' coupling to the frame (Sb, int rho u0 x S) zero, M_eta,eta = 1"""
    import numpy as np
    lin = linearize(mblin, d, "free_20.yaml", free_body(20, SPIDERS))
    st = lin["states"]
    M = np.array(lin["mck"]["M"])
    names = ["link_x", "link_y", "link_z", "link_e1", "link_e2", "link_e3"]
    check(st[:6] == names, "invariants: the free link's first states are its frame's " + " ".join(st[:6]))
    m, s0, J = direct_invariants(d)
    S0 = np.array([[0, -s0[2], s0[1]], [s0[2], 0, -s0[0]], [-s0[1], s0[0], 0]])
    ref = np.block([[m * np.eye(3), -2 * S0], [2 * S0, 4 * J]])
    big = np.abs(ref).max()
    e = np.abs(M[:6, :6] - ref).max() / big
    check(e <= INV_RTOL, f"invariants: m = {M[0, 0]:.12g} kg (direct {m:.12g}), s0, the inertia about the origin: {e:.1e} <= {INV_RTOL:g}")
    c = np.abs(M[:6, 6:]).max() / big
    check(c <= INV_RTOL, f"invariants: the modes' coupling to the frame (Sb, int rho u0 x S): {c:.1e} <= {INV_RTOL:g}")
    k = M.shape[0] - 6
    check(np.abs(M[6:, 6:] - np.eye(k)).max() <= INV_RTOL, f"invariants: the modal mass of the {k} modes is the identity")


def nastran(mblin, d):
    """6. the same part from a Nastran punch file (DMIG in free field, GRID entries in a bulk file,
    written from ccx's files by tests/fe/write_dmig.py), the spider by its node list: the same body"""
    nodes = os.path.join(d, "nodes.txt")
    with open(os.path.join(d, "link_mesh.inp")) as f, open(nodes, "w") as g:
        on = False
        for line in f:
            if line.startswith("*"):
                on = line.upper().startswith("*NODE")
            elif on:
                g.write(line)
    os.makedirs(os.path.join(d, "nas"))
    run([sys.executable, os.path.join(HERE, "write_dmig.py"), os.path.join(d, "link"), nodes, os.path.join(d, "nas")], d)
    ends = []
    with open(os.path.join(d, "link_mesh.inp")) as f:
        on = False
        for line in f:
            if line.startswith("*"):
                on = line.replace(" ", "").upper().startswith("*NSET,NSET=END_A")
            elif on:
                ends += [int(t) for t in line.split(",") if t.strip()]
    fc = freqs(linearize(mblin, d, "cal.yaml", free_body(12, SPIDER_A)))
    fe = "{nastran: {punch: nas/free.pch, stiffness: KAAX, mass: MAAX, grids: nas/free_bulk.dat}, modes: 12}"
    text = free_body(12, f"      a: {{nodes: {ends}}}").replace("{calculix: link, modes: 12}", fe)
    fn = freqs(linearize(mblin, d, "nas.yaml", text))
    e = max(rel(a, b) for a, b in zip(fn, fc))
    check(len(fn) == len(fc) and e <= EXACT_RTOL, f"Nastran: the part's DMIG punch file gives the CalculiX body's {len(fc)} frequencies: {e:.1e} <= {EXACT_RTOL:g}")


def example(mblin, d):
    """7. examples/fe/link_pendulum.yaml (the link pinned at END_A, a rigid bob pinned at END_B)
    against the rigid double pendulum of the link's mass and inertia by direct integration: the
    two swings, lowered by the link's bending ((f / 239 Hz)^2: 3e-4 at most) within EXAMPLE_RTOL"""
    import numpy as np
    shutil.copy(os.path.join(EXAMPLE, "link_pendulum.yaml"), d)
    f = freqs(json.loads(run([mblin, "linearize", "link_pendulum.yaml", "--json"], d)))
    m1, s0, J = direct_invariants(d)
    g, mb, rb, L = 9.81, 0.3, 0.02, 0.5
    Mm = np.array([[J[2, 2] + mb * L * L, mb * L * rb], [mb * L * rb, mb * rb * rb + 0.4 * mb * rb * rb]])
    Km = np.diag([g * (s0[0] + mb * L), g * mb * rb])
    ref = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(Mm, Km)).real)) / (2 * math.pi)
    e = max(rel(a, b) for a, b in zip(f[:2], ref))
    check(e <= EXAMPLE_RTOL, f"example link_pendulum.yaml: the swings {f[0]:.6f}, {f[1]:.6f} Hz against the rigid double "
          f"pendulum's {ref[0]:.6f}, {ref[1]:.6f}: {e:.1e} <= {EXAMPLE_RTOL:g}")


BAD = [  # (the body's fe: and markers: lines, what the one-line message must hold)
    ("    fe: {calculix: link, nastran: {punch: x}, modes: 4}\n    markers: {a: {set: END_A}}", "one of them"),
    ("    fe: {calculix: link}\n    markers: {a: {set: END_A}}", "give 'modes'"),
    ("    fe: {calculix: link, modes: 2.5}\n    markers: {a: {set: END_A}}", "'modes' must be a whole number"),
    ("    fe: {calculix: link, cutoff: 0}\n    markers: {a: {set: END_A}}", "'cutoff' must be a positive frequency"),
    ("    fe: {calculix: link, modes: 4, units: mm}\n    markers: {a: {set: END_A}}", "units"),
    ("    fe: {calculix: link, modes: 4}", "needs markers"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {set: NOPE}}", "no node set 'NOPE'"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {node: 999999}}", "no node 999999"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {node: 1, set: END_A}}", "one of them"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {node: 1, at: [0, 0, 0]}}", "'at' belongs to a set"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {node: 1}}", "interface"),
    ("    fe: {calculix: link, modes: 4}\n    markers: {a: {set: END_A}, b: {set: END_A}}", "two interfaces"),
    ("    fe: {calculix: nolink, modes: 4}\n    markers: {a: {set: END_A}}", "nolink"),
    ("    fe: {calculix: link, modes: 4}\n    invariants: {mass: 1}\n    markers: {a: {set: END_A}}", "not both"),
    ("    fe: {calculix: link, modes: 4}\n    geometric_stiffness: {ax: g.mtx}\n    markers: {a: {set: END_A}}",
     "geometric stiffness"),
]


def refusals(mblin, d):
    """8. bad input: a nonzero exit and one line naming the model file's line and the element"""
    for body, want in BAD:
        path = os.path.join(d, "bad.yaml")
        with open(path, "w") as f:
            f.write("model: mechanism\nspace: spatial\nname: bad\nbodies:\n  link:\n    type: modal\n" + body + "\n")
        p = subprocess.run([mblin, "linearize", path], cwd=d, capture_output=True, text=True)
        msg = p.stderr.strip()
        check(p.returncode != 0 and "\n" not in msg and msg.startswith(f"mblin: {path}:") and want in msg,
              f"refused ({want}): {msg[len('mblin: ') + len(path):][:160]}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    mblin = os.path.abspath(sys.argv[1])
    for tool in ("gmsh", "ccx"):
        if not shutil.which(tool):
            print(f"skipped: {tool} not found (make setup installs it)")
            return 77
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError:
        print("skipped: numpy/scipy not found")
        return 77
    with tempfile.TemporaryDirectory() as d:
        make_part(d, COARSE)
        ex = every_mode(mblin, d)
        few_modes(mblin, d, ex)
        nastran(mblin, d)
        refusals(mblin, d)
    with tempfile.TemporaryDirectory() as d:
        make_part(d, [])
        pendulum(mblin, d)
        invariants(mblin, d)
        example(mblin, d)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
