#!/usr/bin/env python3
"""Write the flexible double pendulum of source 001 Sec. 4.2 as a `model: dae` file.

Two flexible links of length l, density rho, Young's modulus E, circular section of radius r
(A = pi r^2, I = pi r^4 / 4), hanging under gravity g along -y. Each link k = 1, 2 has a floating
frame of reference (xk, yk, thk) tangent to the centre line at its first node, and n_p
Euler-Bernoulli elements with axial deformation: nodal elastic coordinates qfxk_i, qfyk_i, qftk_i
(i = 1..n_p+1) in the body frame, axial displacement linear and transverse displacement cubic
Hermite over each element. n = 6 n_p + 12 coordinates, m = 10 constraints: link 1's first node
pinned to the ground (2), link 2's first node pinned to link 1's deformed last node P1 (2), and
qfxk_1 = qfyk_1 = qftk_1 = 0 per link (3 + 3).

A point of link k at body-frame position u = u0 + S qf (u0 = (X, 0), 0 <= X <= l) is at
r = R + A(th) u. The kinetic energy T = 1/2 int rho |r'|^2 dV is written with the floating frame
of reference inertia invariants:

  T = 1/2 m |R'|^2 + R' . d/dt(A(th) S)                       S  = int rho u dV (first moment)
      + 1/2 th'^2 J + th' H + 1/2 qf'^T Mff qf'               J  = int rho |u|^2 dV
                                                              H  = int rho (ux uy' - uy ux') dV
  V = g (m y + [A(th) S]_y) + 1/2 qf^T Kff qf                 (gravity on the deformed body)

The element integrals are computed exactly here (rational arithmetic on the shape polynomials) and
assembled into banded global forms, so the file grows linearly with n_p. The parameters E, rho, r,
l, g stay symbols in the file (`--set l=5` works); n_p fixes the structure and is written in.

As in source 001, the elasticity is linear in qf: there is no geometric stiffening of the bending
by the axial tension, so with a much softer material (E below about 7.5e7 at the other default
values) the hanging state is unstable in the model.

usage: flexible_pendulum.py --np N [-o FILE]
Source 001 Table 3 (n_p = 50): +-1.3357i, +-3.5244i, +-9.4175i, +-22.4054i.
"""
import argparse
import sys
from fractions import Fraction as Fr

# Shape polynomials on xi in [0, 1], coefficients of 1, xi, xi^2, xi^3.
PHI = [[1, -1], [0, 1]]                                   # axial: linear
HERM = [[1, 0, -3, 2], [0, 1, -2, 1], [0, 0, 3, -2], [0, 0, -1, 1]]  # transverse: (v_a, L_a, v_b, L_b), L = le*theta


def pmul(a, b):
    out = [Fr(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += Fr(x) * Fr(y)
    return out


def pder(a):
    return [Fr(i) * Fr(x) for i, x in enumerate(a)][1:] or [Fr(0)]


def pint(a):
    """int_0^1 a(xi) dxi"""
    return sum(Fr(x) / (i + 1) for i, x in enumerate(a))


def gram(fa, fb):
    return [[pint(pmul(p, q)) for q in fb] for p in fa]


# Element integrals per unit element mass and unit element length (element length le enters
# through L = le*theta in the transverse degrees of freedom and the 1/le, 1/le^3 of the stiffness).
E_XX = gram(PHI, PHI)                        # int phi_i phi_j            (1/6 [2 1; 1 2])
E_YY = gram(HERM, HERM)                      # int N_i N_j                (1/420 [156 22 54 -13; ...])
E_XY = gram(PHI, HERM)                       # int phi_i N_j
E_SX = [pint(p) for p in PHI]                # int phi_i
E_SY = [pint(p) for p in HERM]               # int N_j
E_KX = gram([pder(p) for p in PHI], [pder(p) for p in PHI])              # [1 -1; -1 1]
E_KY = gram([pder(pder(p)) for p in HERM], [pder(pder(p)) for p in HERM])  # [12 6 -12 6; ...]


def assemble(emat, ndof_node_a, ndof_node_b, nel):
    """Assemble element blocks (rows: ndof_node_a per node, cols: ndof_node_b per node) into a
    sparse dict {(i, j): Fraction} over nel equal elements."""
    g = {}
    for e in range(nel):
        for i, row in enumerate(emat):
            for j, v in enumerate(row):
                if v == 0:
                    continue
                key = (e * ndof_node_a + i, e * ndof_node_b + j)
                g[key] = g.get(key, Fr(0)) + v
    return {k: v for k, v in g.items() if v != 0}


def assemble_vec(evec, ndof_node, nel):
    g = {}
    for e in range(nel):
        for i, v in enumerate(evec):
            g[e * ndof_node + i] = g.get(e * ndof_node + i, Fr(0)) + v
    return {k: v for k, v in g.items() if v != 0}


def frac(v):
    """A Fraction as an expression factor: '3', '(3/4)'."""
    return str(v.numerator) if v.denominator == 1 else "(%d/%d)" % (v.numerator, v.denominator)


def lincomb(coefs, syms):
    """sum_i coefs[i]*syms[i] over a sparse {i: Fraction}; '0' if empty."""
    parts = []
    for i in sorted(coefs):
        c = coefs[i]
        s = syms[i]
        a = abs(c)
        t = s if a == 1 else frac(a) + "*" + s
        if c < 0:
            t = "-" + t
        parts.append(t)
    if not parts:
        return "0"
    out = parts[0]
    for p in parts[1:]:
        out += (" - " + p[1:]) if p.startswith("-") else (" + " + p)
    return out


def quadform(mat, syms_a, syms_b=None):
    """x^T M y for a sparse symmetric M (syms_b None: y = x, written with the upper triangle
    once per row: sum_i x_i*(M_ii x_i + 2 sum_{j>i} M_ij x_j)). Returns a '+'-joined string."""
    rows = {}
    for (i, j), v in mat.items():
        rows.setdefault(i, {})[j] = v
    terms = []
    for i in sorted(rows):
        if syms_b is None:
            r = {j: (v if j == i else 2 * v) for j, v in rows[i].items() if j >= i}
            inner = lincomb(r, syms_a)
        else:
            inner = lincomb(rows[i], syms_b)
        if inner != "0":
            terms.append(syms_a[i] + "*(" + inner + ")")
    return " + ".join(terms) if terms else "0"


def link_terms(k, N):
    """Coordinate names and the T, V, variable strings of link k."""
    names = ["x%d" % k, "y%d" % k, "th%d" % k]
    for i in range(1, N + 2):
        names += ["qfx%d_%d" % (k, i), "qfy%d_%d" % (k, i), "qft%d_%d" % (k, i)]
    # body-frame axial position U_i = X_i + qfx_i (X_i = (i-1) le), transverse dofs (v_i, L_i)
    U = ["qfx%d_1" % k] + ["(%s + qfx%d_%d)" % ("le" if i == 2 else "%d*le" % (i - 1), k, i) for i in range(2, N + 2)]
    dU = ["der(qfx%d_%d)" % (k, i) for i in range(1, N + 2)]
    qx = ["qfx%d_%d" % (k, i) for i in range(1, N + 2)]
    d, dd = [], []
    for i in range(1, N + 2):
        d += ["qfy%d_%d" % (k, i), "le*qft%d_%d" % (k, i)]
        dd += ["der(qfy%d_%d)" % (k, i), "le*der(qft%d_%d)" % (k, i)]
    Gxx = assemble(E_XX, 1, 1, N)
    Gyy = assemble(E_YY, 2, 2, N)
    Cxy = assemble(E_XY, 1, 2, N)
    Kxx = assemble(E_KX, 1, 1, N)
    Kyy = assemble(E_KY, 2, 2, N)
    sx = assemble_vec(E_SX, 1, N)
    sy = assemble_vec(E_SY, 2, N)
    x, y, th = names[:3]
    var = {}
    var["Sx%d" % k] = "me*(" + lincomb(sx, U) + ")"
    var["Sy%d" % k] = "me*(" + lincomb(sy, d) + ")"
    var["ax%d" % k] = "cos(%s)*Sx%d - sin(%s)*Sy%d" % (th, k, th, k)
    var["ay%d" % k] = "sin(%s)*Sx%d + cos(%s)*Sy%d" % (th, k, th, k)
    var["J%d" % k] = "me*(" + quadform(Gxx, U) + " + " + quadform(Gyy, d) + ")"
    # H = int rho (ux uy' - uy ux') = me (U^T Cxy d' - U'^T Cxy d)
    H = "me*(" + quadform(Cxy, U, dd) + " - (" + quadform(Cxy, dU, d) + "))"
    Fq = "me*(" + quadform(Gxx, dU) + " + " + quadform(Gyy, dd) + ")"
    T = ("m/2*(der(%s)^2 + der(%s)^2) + der(%s)*der(ax%d) + der(%s)*der(ay%d)"
         " + der(%s)^2/2*J%d + der(%s)*%s + (%s)/2" % (x, y, x, k, y, k, th, k, th, H, Fq))
    V = ("g*(m*%s + ay%d) + EA/(2*le)*(%s) + EI/(2*le^3)*(%s)"
         % (y, k, quadform(Kxx, qx), quadform(Kyy, d)))
    return names, var, T, V


def generate(N):
    out = []
    w = out.append
    n = 6 * N + 12
    w("# Flexible double pendulum of source 001 Sec. 4.2 (Gonzalez et al.), written by")
    w("#   python3 examples/flexible_pendulum.py --np %d" % N)
    w("# n_p = %d elements per link: n = %d coordinates, m = 10 constraints, %d degrees of freedom." % (N, n, n - 10))
    w("# Floating frame of reference per link (xk, yk, thk), tangent at the first node; nodal elastic")
    w("# coordinates qfxk_i (axial), qfyk_i (transverse), qftk_i (slope), i = 1..%d, in the body frame." % (N + 1))
    w("# Kinetic energy from the inertia invariants S (first moment), J (int rho |u|^2), H (int rho u x u')")
    w("# and the consistent element mass; axial EA/le and bending EI/le^3 element stiffness; gravity on")
    w("# the deformed body. Linearized about both links hanging along -y (th1 = th2 = -pi/2).")
    w("# Source 001 Table 3 (n_p = 50): +-1.3357i, +-3.5244i, +-9.4175i, +-22.4054i rad/s.")
    w("model: dae")
    w("name: flexible double pendulum, n_p = %d" % N)
    w("parameters:")
    w("  E: 1e8        # Young's modulus, N/m^2")
    w("  rho: 1500     # density, kg/m^3")
    w("  r: 0.15       # radius of the circular section, m")
    w("  l: 4          # link length, m")
    w("  g: 9.81       # gravity along -y, m/s^2")
    w("  A: pi*r^2")
    w("  I: pi*r^4/4")
    w("  le: l/%d       # element length (n_p = %d)" % (N, N))
    w("  m: rho*A*l    # link mass")
    w("  me: rho*A*le  # element mass")
    w("  EA: E*A")
    w("  EI: E*I")
    links = [link_terms(1, N), link_terms(2, N)]
    w("coordinates:")
    for k, (names, _, _, _) in enumerate(links, start=1):
        w("  x%d: 0" % k)
        w("  y%d: %s" % (k, "0" if k == 1 else "-l"))
        w("  th%d: -pi/2" % k)
        for nm in names[3:]:
            w("  %s: 0" % nm)
    w("variables:")
    for _, var, _, _ in links:
        for name, expr in var.items():
            w("  %s: \"%s\"" % (name, expr))
    w("kinetic_energy: \"" + " + ".join(T for _, _, T, _ in links) + "\"")
    w("potential_energy: \"" + " + ".join(V for _, _, _, V in links) + "\"")
    w("constraints:")
    w("  # link 1's first node (point o) on the ground")
    w("  - \"x1 + cos(th1)*qfx1_1 - sin(th1)*qfy1_1\"")
    w("  - \"y1 + sin(th1)*qfx1_1 + cos(th1)*qfy1_1\"")
    e = N + 1
    w("  # link 2's first node on link 1's deformed last node P1")
    w("  - \"x2 + cos(th2)*qfx2_1 - sin(th2)*qfy2_1 - (x1 + cos(th1)*(l + qfx1_%d) - sin(th1)*qfy1_%d)\"" % (e, e))
    w("  - \"y2 + sin(th2)*qfx2_1 + cos(th2)*qfy2_1 - (y1 + sin(th1)*(l + qfx1_%d) + cos(th1)*qfy1_%d)\"" % (e, e))
    w("  # the body frames sit on the first node, tangent to the centre line")
    for k in (1, 2):
        for c in ("qfx", "qfy", "qft"):
            w("  - \"%s%d_1\"" % (c, k))
    w("linearize:")
    w("  at: equilibrium")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, required=True, dest="np_", metavar="N", help="elements per link (>= 1)")
    ap.add_argument("-o", dest="out", default=None, help="output file (default stdout)")
    a = ap.parse_args()
    if a.np_ < 1:
        raise SystemExit("flexible_pendulum.py: --np must be >= 1")
    text = generate(a.np_)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
