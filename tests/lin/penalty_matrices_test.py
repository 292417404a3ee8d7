"""Source 001's general penalty matrices (Sec. 3.3, Eq. 11-12; issue 70, item 6): Xi, Theta, Omega
per constraint (a diagonal) or full m x m, from the model file (linearize.penalty_Xi, _Theta,
_Omega), the command line (--penalty-Xi, -Theta, -Omega: comma lists, a diagonal), dense and
sparse paths.
Usage: penalty_matrices_test.py MBLIN (run from the source root; OPENBLAS_CORETYPE may be set).

diagonal: a point mass m in space with springs kx, ky, kz and the constraints x = 0, y = 0, each
row with its own penalty: lambda_i = Xi_i (Phi_i'' + Theta_i Phi_i' + Omega_i Phi_i), so the
penalty ODE is (m + Xi_1) x'' + Xi_1 Theta_1 x' + (kx + Xi_1 Omega_1) x = 0, the same in y with
row 2's, and m z'' + kz z = 0: the spurious pairs are the roots of those quadratics (closed form),
the physical pair +-sqrt(kz/m) i; swapping the rows' values changes the spurious pairs.

basis: a change of the constraint basis, Phi~ = T Phi with T a rotation, turns the diagonal penalty
D_Xi, D_Theta, D_Omega on Phi~ into the full Xi = T^T D_Xi T (Theta, Omega likewise) on Phi:
Phi~_q^T D (Phi~'' + ...) = Phi_q^T T^T D T (Phi'' + T^T D_Theta T Phi' + ...). A point mass on two
nonlinear constraints (a plane and a parabolic cylinder) under gravity and springs, written once
with the rotated constraints and diagonal matrices and once with the plain ones and the full
matrices, must give the same penalty spectrum (the physical pair carries the penalty's O(1/alpha)
shift at these small factors, so it depends on the matrices: the control with the diagonal matrices
on the plain constraints differs); the sparse path (--nev) the same physical pair as the dense one.

equilibrium: the penalty system's own rest point with per-row matrices (lambda = Xi Omega Phi), a
string pendulum held in a plane, against its closed form.

errors: an unsymmetric, indefinite or wrongly sized matrix in the file (one line at the key's
line and column), a wrong list on the command line (usage, exit 2), an indefinite list (one line
naming the matrix)."""
import cmath
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish, scratch  # noqa: E402

MBLIN = sys.argv[1]
# relative agreement asked of closed forms and of the two bases (QZ on a 6 x 6 pencil whose norm is
# the penalty's, about 1e4 here: rounding of order 1e-12 relative to the eigenvalues)
TOL = 1e-9
# the control must differ by more than this (the O(1/alpha) shift of the physical pair is about 1e-5
# here, its change by the matrices 2.6e-6)
CONTROL_MIN = 1e-6


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def eigs(path, *extra):
    rc, out, err = run("linearize", path, "--method", "penalty", "--json", "--no-matrices", *extra)
    if rc:
        check(False, "linearize %s %s: %s" % (path, " ".join(extra), err.strip()))
        return None
    d = json.loads(out)
    ev = d["eigenvalues"]
    key = lambda s: (round(s.real, 6), s.imag)  # noqa: E731
    phys = sorted((complex(e["re"], e["im"]) for e in ev if not e["spurious"]), key=key)
    spur = sorted((complex(e["re"], e["im"]) for e in ev if e["spurious"]), key=key)
    return phys, spur, d["notes"]


def close(got, want, scale, tol=TOL):
    return len(got) == len(want) and all(abs(a - b) <= tol * scale for a, b in zip(got, want))


def dist(got, want):
    return max(abs(a - b) for a, b in zip(got, want)) if len(got) == len(want) and got else math.inf


def roots(a, b, c):
    d = cmath.sqrt(b * b - 4 * a * c)
    return [(-b + d) / (2 * a), (-b - d) / (2 * a)]


write = scratch("mblin_penmat_")


# ---- diagonal ----------------------------------------------------------------------------------
MASS = """model: dae
parameters: {m: 2, kx: 8, ky: 18, kz: 2}
coordinates: {x: 0.1, y: 0.2, z: 0.1}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2 + der(z)^2)"
potential_energy: "0.5*kx*x^2 + 0.5*ky*y^2 + 0.5*kz*z^2"
constraints: ["x", "y"]
%s"""
m, kx, ky, kz = 2.0, 8.0, 18.0, 2.0
X, TH, OM = (50.0, 200.0), (3.0, 0.5), (16.0, 9.0)
key = lambda s: (round(s.real, 6), s.imag)  # noqa: E731
spur_want = sorted(roots(m + X[0], X[0] * TH[0], kx + X[0] * OM[0]) + roots(m + X[1], X[1] * TH[1], ky + X[1] * OM[1]),
                   key=key)
spur_swapped = sorted(roots(m + X[1], X[1] * TH[1], kx + X[1] * OM[1]) + roots(m + X[0], X[0] * TH[0], ky + X[0] * OM[0]),
                      key=key)
phys_want = [complex(0, -math.sqrt(kz / m)), complex(0, math.sqrt(kz / m))]
diag_file = write("diag.yaml", MASS % "linearize: {penalty_Xi: [50, 200], penalty_Theta: [3, 0.5], penalty_Omega: [16, 9]}\n")
full_file = write("full.yaml", MASS % ("linearize:\n  penalty_Xi: [[50, 0], [0, 200]]\n  penalty_Theta: [[3, 0], [0, 0.5]]\n"
                                       "  penalty_Omega: [[16, 0], [0, 9]]\n"))
swap_file = write("swap.yaml", MASS % "linearize: {penalty_Xi: [200, 50], penalty_Theta: [0.5, 3], penalty_Omega: [9, 16]}\n")
plain = write("plain.yaml", MASS % "")
for label, path, extra, want in [
        ("the file's diagonal", diag_file, (), spur_want),
        ("the file's full matrices", full_file, (), spur_want),
        ("the command line's lists", plain, ("--penalty-Xi", "50,200", "--penalty-Theta", "3,0.5", "--penalty-Omega",
                                             "16,9"), spur_want),
        ("the command line's over the file's", swap_file, ("--penalty-Xi", "50,200", "--penalty-Theta", "3,0.5",
                                                           "--penalty-Omega", "16,9"), spur_want),
        ("the rows swapped", swap_file, (), spur_swapped)]:
    got = eigs(path, *extra)
    if got is None:
        continue
    check(close(got[0], phys_want, 1) and close(got[1], want, 4),
          "diagonal: %s: physical %s, spurious %s (closed form %s)" % (label, got[0], got[1], want))
    check("general penalty matrices (Xi Theta Omega given, 2 x 2)" in got[2], "diagonal: %s: the notes say so: %s"
          % (label, got[2]))
check(dist(spur_want, spur_swapped) > CONTROL_MIN, "diagonal: the control (rows swapped) differs from the closed form")
# only Omega given: Xi = alpha I and Theta = 2 xi omega I of the scalars (here alpha 40, xi 0.25, omega 2)
got = eigs(plain, "--penalty-alpha", "40", "--penalty-xi", "0.25", "--penalty-omega", "2", "--penalty-Omega", "16,9")
if got is not None:
    want = sorted(roots(m + 40, 40 * 2 * 0.25 * 2, kx + 40 * 16) + roots(m + 40, 40 * 2 * 0.25 * 2, ky + 40 * 9), key=key)
    check(close(got[1], want, 4), "diagonal: Omega alone beside alpha, xi, omega: spurious %s (closed form %s)"
          % (got[1], want))

# ---- basis -------------------------------------------------------------------------------------
th = 0.7
c, s = math.cos(th), math.sin(th)
T = [[c, -s], [s, c]]
DX, DT, DO = (200.0, 500.0), (20.0, 35.0), (100.0, 400.0)


def rotated(d):
    """T^T diag(d) T, row by row"""
    return [[sum(T[k][i] * d[k] * T[k][j] for k in range(2)) for j in range(2)] for i in range(2)]


def yaml_mat(a):
    return "[%s]" % ", ".join("[%s]" % ", ".join(repr(x) for x in row) for row in a)


POINT = """model: dae
parameters: {m: 2, k: 5, g: 9.81, c: %r, s: %r}
coordinates: {x: 0.1, y: 0.05, z: -0.1}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2 + der(z)^2)"
potential_energy: "0.5*k*(x^2 + 2*y^2 + z^2) + m*g*z"
constraints: [%s]
linearize:
  penalty_Xi: %s
  penalty_Theta: %s
  penalty_Omega: %s
"""
P1, P2 = "(z + 0.5*x)", "(y - 0.2*x^2)"
tilde = write("tilde.yaml", POINT % (c, s, '"c*%s - s*%s", "s*%s + c*%s"' % (P1, P2, P1, P2), list(DX), list(DT),
                                     list(DO)))
full = write("fullbasis.yaml", POINT % (c, s, '"%s", "%s"' % (P1, P2), yaml_mat(rotated(DX)), yaml_mat(rotated(DT)),
                                        yaml_mat(rotated(DO))))
control = write("control.yaml", POINT % (c, s, '"%s", "%s"' % (P1, P2), list(DX), list(DT), list(DO)))
A, B, C = eigs(tilde), eigs(full), eigs(control)
if A and B and C:
    scale = max(abs(z) for z in A[0] + A[1])
    check(close(A[0], B[0], scale) and close(A[1], B[1], scale),
          "basis: diagonal on T Phi %s %s, full T^T D T on Phi %s %s" % (A[0], A[1], B[0], B[1]))
    check(dist(A[0], C[0]) > CONTROL_MIN, "basis: the control (diagonal on Phi) moves the physical pair: %s vs %s"
          % (C[0], A[0]))
    # the sparse path (ARPACK shift-invert on the sparse pencil, its own K_p, C_p, M_p), both bases
    for label, path in (("full", full), ("diagonal on T Phi", tilde)):
        rc, out, err = run("linearize", path, "--method", "penalty", "--json", "--no-matrices", "--nev", "2")
        if not check(rc == 0, "basis: sparse path, %s: %s" % (label, err.strip())):
            continue
        d = json.loads(out)
        sp = sorted((complex(e["re"], e["im"]) for e in d["eigenvalues"] if not e["spurious"]), key=key)
        check("sparse penalty pencil" in d["notes"] and close(sp, A[0], scale),
              "basis: sparse path, %s: physical %s, dense %s (%s)" % (label, sp, A[0], d["notes"][:60]))

# ---- equilibrium ---------------------------------------------------------------------------------
# --penalty-equilibrium with per-row matrices: a point mass on a string of length L (row 1) held in
# the plane y = 0 (row 2) under gravity rests where the string stretches to rho with
# rho (rho^2 - L^2) = 2 m g / (Xi_1 Omega_1) (lambda_1 = Xi_1 Omega_1 Phi_1 = m g / rho, the string's
# tension); there x swings at +-sqrt(g / rho) i, y is the spurious roots of (m + Xi_2) s^2 +
# Xi_2 Theta_2 s + (m g / rho + Xi_2 Omega_2) and z of (m + Xi_1 rho^2) s^2 + Xi_1 Theta_1 rho^2 s +
# (m g / rho + Xi_1 Omega_1 rho^2)
m, L, g = 2.0, 1.5, 9.81
EX, ET, EO = (1000.0, 50.0), (3.0, 2.0), (9.0, 4.0)
string = write("string.yaml", """model: dae
parameters: {m: 2, L: 1.5, g: 9.81}
coordinates: {x: 0.1, y: 0, z: -1.4}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2 + der(z)^2)"
potential_energy: "m*g*z"
constraints: ["0.5*(x^2 + y^2 + z^2 - L^2)", "y"]
linearize: {penalty_Xi: [1000, 50], penalty_Theta: [3, 2], penalty_Omega: [9, 4]}
""")
rho = L
for _ in range(60):  # Newton on rho (rho^2 - L^2) = 2 m g / (Xi_1 Omega_1), from L
    rho -= (rho * (rho * rho - L * L) - 2 * m * g / (EX[0] * EO[0])) / (3 * rho * rho - L * L)
got = eigs(string, "--penalty-equilibrium")
if got is not None:
    lam = m * g / rho
    want = sorted(roots(m + EX[1], EX[1] * ET[1], lam + EX[1] * EO[1])
                  + roots(m + EX[0] * rho * rho, EX[0] * ET[0] * rho * rho, lam + EX[0] * EO[0] * rho * rho), key=key)
    phys = [complex(0, -math.sqrt(g / rho)), complex(0, math.sqrt(g / rho))]
    check(close(got[0], phys, 3) and close(got[1], want, 6),
          "equilibrium: physical %s (sqrt(g / rho) = %.15g), spurious %s (closed form %s)"
          % (got[0], math.sqrt(g / rho), got[1], want))
    check("constraints violated by up to %.3e" % ((rho * rho - L * L) / 2) in got[2],
          "equilibrium: the notes give the string's violation: %s" % got[2])

# ---- errors ------------------------------------------------------------------------------------
for name, text, want in [
        ("unsym.yaml", "linearize:\n  penalty_Xi: [[50, 1], [0, 200]]\n",
         "unsym.yaml:8:3: linearize.penalty_Xi: not symmetric: entry (2, 1) is 0, entry (1, 2) 1 (it must be "
         "symmetric positive definite)"),
        ("indef.yaml", "linearize:\n  penalty_Omega: [16, -9]\n",
         "indef.yaml:8:3: linearize.penalty_Omega: not positive definite: its smallest eigenvalue is -9"),
        ("size.yaml", "linearize:\n  penalty_Theta: [1, 2, 3]\n",
         "size.yaml:8:3: linearize.penalty_Theta has 3 entries, the model has 2 holonomic constraints"),
        ("ragged.yaml", "linearize:\n  penalty_Xi: [[1, 0], [0]]\n",
         "linearize.penalty_Xi: row 2 must be a list of 2 numbers"),
        ("scalar.yaml", "linearize:\n  penalty_Xi: 5\n",
         "linearize.penalty_Xi must be a list of numbers (a diagonal, one per constraint) or a list of lists")]:
    rc, out, err = run("linearize", write(name, MASS % text), "--method", "penalty")
    check(rc == 1 and want in err and len(err.strip().splitlines()) == 1, "errors: %s: %s" % (name, err.strip()))
rc, out, err = run("linearize", plain, "--method", "penalty", "--penalty-Xi", "1,2,3")
check(rc == 2 and "--penalty-Xi: 3 numbers given, the model has 2 holonomic constraints" in err,
      "errors: --penalty-Xi 1,2,3: %s" % err.strip())
rc, out, err = run("linearize", plain, "--method", "penalty", "--penalty-Omega", "1,x")
check(rc == 2 and "--penalty-Omega expects a comma list of numbers" in err, "errors: --penalty-Omega 1,x: %s"
      % err.strip())
rc, out, err = run("linearize", plain, "--method", "penalty", "--penalty-Theta", "-1,2")
check(rc == 1 and "penalty: the matrix Theta (pen_Theta, linearize.penalty_Theta, --penalty-Theta): not positive "
      "semidefinite" in err and len(err.strip().splitlines()) == 1, "errors: --penalty-Theta -1,2: %s" % err.strip())

# ---- mechanism ---------------------------------------------------------------------------------
# model: mechanism files take linearize.penalty_Xi, _Theta, _Omega as the text-model files do: the
# four-bar's two loop rows given in the file give the spectrum of the same lists given on the command
# line (whose closed forms are checked above), to rounding; the rows swapped are the control
with open("tests/mech/fourbar_general.yaml") as f:
    FOURBAR = f.read()
MECH_CLI = ("--penalty-Xi", "3e5,7e5", "--penalty-Theta", "20,35", "--penalty-Omega", "100,400")
mech_diag = write("mech_diag.yaml", FOURBAR + "  penalty_Xi: [3e5, 7e5]\n  penalty_Theta: [20, 35]\n"
                  "  penalty_Omega: [100, 400]\n")
mech_full = write("mech_full.yaml", FOURBAR + "  penalty_Xi: [[3e5, 0], [0, 7e5]]\n  penalty_Theta: [[20, 0], [0, 35]]\n"
                  "  penalty_Omega: [[100, 0], [0, 400]]\n")
mech_plain = write("mech_plain.yaml", FOURBAR)
mech_swap = write("mech_swap.yaml", FOURBAR + "  penalty_Xi: [7e5, 3e5]\n  penalty_Theta: [35, 20]\n"
                  "  penalty_Omega: [400, 100]\n")
ref = eigs(mech_plain, *MECH_CLI)
for label, path in (("diagonal", mech_diag), ("full", mech_full)):
    got = eigs(path)
    if got is None or ref is None:
        continue
    scale = max(abs(z) for z in ref[0] + ref[1])
    check(close(got[0], ref[0], scale) and close(got[1], ref[1], scale)
          and "general penalty matrices (Xi Theta Omega given, 2 x 2)" in got[2],
          "mechanism: the file's %s matrices: %s against the command line's %s" % (label, got[:2], ref[:2]))
got = eigs(mech_swap)
if got is not None and ref is not None:
    check(dist(got[1], ref[1]) > CONTROL_MIN, "mechanism: the control (rows swapped) differs: %s" % (got[1],))

sys.exit(finish("penalty_matrices_test"))
