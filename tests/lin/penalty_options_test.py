"""Source 001's penalty method variants (issue 70, item 6), through the CLI.
Usage: penalty_options_test.py MBLIN (run from the source root; OPENBLAS_CORETYPE may be set).

alpha_xi_omega: alpha, xi, omega of the penalty method (Xi = alpha I, Theta = 2 xi omega I,
Omega = omega^2 I, source 001 Sec. 5) from the model file's linearize.penalty_alpha, _xi, _omega
and from --penalty-alpha, -xi, -omega (which win over the file's). A mass m in the plane with a
spring k on x and the constraint y = 0: the penalty ODE is m x'' + k x = 0 and
(m + alpha) y'' + 2 alpha xi omega y' + alpha omega^2 y = 0 (Eq. 12), whose roots are the
spurious pair in closed form; the physical pair is +-sqrt(k/m) i exactly.

equilibrium: --penalty-equilibrium linearizes at the penalty system's own rest point (Sec. 3.3).
A point mass m on a string of length L in Cartesian coordinates, Phi = (x^2 + y^2 - L^2)/2, under
gravity: the penalty system rests at x = 0, y = -rho with rho (rho^2 - L^2) = 2 m g / (alpha omega^2)
(the string stretched by the weight), lambda = alpha omega^2 Phi = m g / rho, and there
K_p = lambda I + alpha omega^2 q q^T, C_p = 2 xi omega alpha q q^T, M_p = m I + alpha q q^T: the
physical pair +-sqrt(g / rho) i and the spurious roots of
(m + alpha rho^2) s^2 + 2 xi omega alpha rho^2 s + (m g / rho + alpha omega^2 rho^2). At the
constrained point (the default) the physical pair is +-sqrt(g / L) i."""
import cmath
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
# relative agreement asked of the closed forms (QZ on a 4 x 4 pencil: rounding of order 1e-15 of
# the pencil's norm, alpha omega^2 here)
TOL = 1e-9


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def eigs(path, *extra):
    rc, out, err = run("linearize", path, "--method", "penalty", "--json", *extra)
    if rc:
        check(False, "linearize %s %s: %s" % (path, " ".join(extra), err.strip()))
        return None, None
    d = json.loads(out)
    ev = d["eigenvalues"]
    phys = sorted((complex(e["re"], e["im"]) for e in ev if not e["spurious"]), key=lambda s: (s.imag, s.real))
    spur = sorted((complex(e["re"], e["im"]) for e in ev if e["spurious"]), key=lambda s: (s.real, s.imag))
    return (phys, spur), d["notes"]


def close(got, want, scale):
    return len(got) == len(want) and all(abs(a - b) <= TOL * scale for a, b in zip(got, want))


def pair(a, b, c):
    """the roots of a s^2 + b s + c, ordered as eigs() orders them"""
    d = cmath.sqrt(b * b - 4 * a * c)
    return sorted([(-b + d) / (2 * a), (-b - d) / (2 * a)], key=lambda s: (s.real, s.imag))


tmp = tempfile.mkdtemp(prefix="mblin_penalty_")


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# ---- alpha_xi_omega ----------------------------------------------------------------------------
MASS = """model: dae
parameters: {m: 2, k: 8, g: 9.81}
coordinates: {x: 0.1, y: 0.2}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2)"
potential_energy: "0.5*k*x^2 + m*g*y"
constraints: ["y"]
%s"""
m, k = 2.0, 8.0
mass_file = write("mass_file.yaml", MASS % 'linearize: {penalty_alpha: 50, penalty_xi: "0.3", penalty_omega: "2*2"}\n')
mass_plain = write("mass_plain.yaml", MASS % "")
phys_want = [complex(0, -math.sqrt(k / m)), complex(0, math.sqrt(k / m))]
for label, path, extra, (a, xi, w) in [
        ("the file's", mass_file, (), (50, 0.3, 4)),
        ("the command line's", mass_plain, ("--penalty-alpha", "50", "--penalty-xi", "0.3", "--penalty-omega", "4"),
         (50, 0.3, 4)),
        ("the command line's over the file's", mass_file, ("--penalty-alpha", "70", "--penalty-xi", "0"), (70, 0, 4)),
        ("the defaults (1e6, 1, 10)", mass_plain, (), (1e6, 1, 10))]:
    got, notes = eigs(path, *extra)
    if got is None:
        continue
    spur_want = pair(m + a, 2 * a * xi * w, a * w * w)
    check(close(got[0], phys_want, 2) and close(got[1], spur_want, w),
          "alpha_xi_omega: %s alpha %g, xi %g, omega %g: physical %s, spurious %s (closed form %s)"
          % (label, a, xi, w, got[0], got[1], spur_want))
    check(notes.startswith("alpha %g, xi %g, omega %g;" % (a, xi, w)), "alpha_xi_omega: %s in the notes: %s"
          % (label, notes[:40]))

# bad values: in the file at its line and column, on the command line a usage error (exit 2)
bad = write("mass_bad.yaml", MASS % "linearize:\n  penalty_omega: -3\n")
rc, out, err = run("linearize", bad, "--method", "penalty")
check(rc == 1 and "mass_bad.yaml:8:18: linearize.penalty_omega must be a finite number > 0" in err
      and len(err.strip().splitlines()) == 1, "alpha_xi_omega: a negative penalty_omega in the file: %s" % err.strip())
rc, out, err = run("linearize", mass_plain, "--method", "penalty", "--penalty-xi", "-1")
check(rc == 2 and "--penalty-xi expects a number >= 0, got '-1'" in err, "alpha_xi_omega: --penalty-xi -1: %s"
      % err.strip())
rc, out, err = run("linearize", mass_plain, "--method", "penalty", "--penalty-alpha", "big")
check(rc == 2 and "--penalty-alpha expects a number, got 'big'" in err, "alpha_xi_omega: --penalty-alpha big: %s" % err.strip())

# other_method: the penalty options with another method, --descriptor-zero with another, would be
# ignored: a usage error (exit 2, one line); compare runs every method and takes them
for meth, opts, want in ((None, ["--penalty-alpha", "1e3"], "method here is 'augmented'"),
                         ("nullspace", ["--penalty-equilibrium"], "method here is 'nullspace'"),
                         ("augmented", ["--penalty-Xi", "1"], "method here is 'augmented'"),
                         ("penalty", ["--descriptor-zero"], "--descriptor-zero is for --method descriptor")):
    rc, out, err = run("linearize", mass_plain, *(["--method", meth] if meth else []), *opts)
    check(rc == 2 and want in err and len(err.strip().splitlines()) == 1,
          "other_method: %s with --method %s: %s" % (" ".join(opts), meth, err.strip()))
rc, out, err = run("compare", mass_plain, "--penalty-alpha", "1e3")
check(rc == 0, "other_method: compare takes --penalty-alpha: %s" % err.strip())

# tiny_alpha: a penalty mass alpha |Phi_q^T Phi_q|_1 negligible against |M|_1 (below 1e-6,
# PEN_ALPHA_NEGLIGIBLE) is refused in one line naming alpha and the ratio; here |M|_1 = m = 2 and
# |Phi_q^T Phi_q|_1 = 1, so the ratio is alpha / 2 (alpha = 1e-300 ran before, and labelled zeros physical)
for al, ok in ((1e-300, False), (1e-7, False), (4e-6, True)):
    rc, out, err = run("linearize", mass_plain, "--method", "penalty", "--penalty-alpha", repr(al))
    if ok:
        check(rc == 0, "tiny_alpha: alpha %g (ratio %g) is accepted: %s" % (al, al / m, err.strip()))
    else:
        check(rc == 2 and len(err.strip().splitlines()) == 1 and "alpha %.3g is negligible" % al in err
              and "|M|_1 = %.3g," % (al / m) in err, "tiny_alpha: alpha %g refused: %s" % (al, err.strip()))

# ---- equilibrium -------------------------------------------------------------------------------
m, L, g, a, xi, w = 2.0, 1.5, 9.81, 1000.0, 0.5, 3.0
pend = write("pendulum.yaml", """model: dae
parameters: {m: 2, L: 1.5, g: 9.81}
coordinates: {x: 0.1, y: -1.4}
kinetic_energy: "0.5*m*(der(x)^2 + der(y)^2)"
potential_energy: "m*g*y"
constraints: ["0.5*(x^2 + y^2 - L^2)"]
linearize: {penalty_alpha: 1000, penalty_xi: 0.5, penalty_omega: 3}
""")
rho = L
for _ in range(60):  # Newton on rho (rho^2 - L^2) = 2 m g / (alpha omega^2), from L
    rho -= (rho * (rho * rho - L * L) - 2 * m * g / (a * w * w)) / (3 * rho * rho - L * L)
got, notes = eigs(pend, "--penalty-equilibrium")
if got is not None:
    want = [complex(0, -math.sqrt(g / rho)), complex(0, math.sqrt(g / rho))]
    spur_want = pair(m + a * rho * rho, 2 * xi * w * a * rho * rho, m * g / rho + a * w * w * rho * rho)
    check(close(got[0], want, 3) and close(got[1], spur_want, 3),
          "equilibrium: physical %s (sqrt(g / rho) = %.15g, rho = %.15g), spurious %s (closed form %s)"
          % (got[0], math.sqrt(g / rho), rho, got[1], spur_want))
    check("at the penalty system's own equilibrium (coordinates moved by up to %.3e, constraints violated by up to "
          "%.3e)" % (rho - L, (rho * rho - L * L) / 2) in notes, "equilibrium: the notes say where: %s" % notes)
got, notes = eigs(pend)
if got is not None:
    want = [complex(0, -math.sqrt(g / L)), complex(0, math.sqrt(g / L))]
    check(close(got[0], want, 3), "equilibrium: the default (constrained point) gives sqrt(g / L): %s" % got[0])
# equilibrium_estimate: the error estimate covers the point's shift (the run at alpha / ratio at its own
# rest point): against the exact sqrt(g / L) of the constrained pendulum, the deviation of sqrt(g / rho)
# is the shift's alone. Before, both alphas used alpha's point, and the estimate left the shift out.
for al in (100.0, 1000.0):
    rho2 = L
    for _ in range(60):
        rho2 -= (rho2 * (rho2 * rho2 - L * L) - 2 * m * g / (al * w * w)) / (3 * rho2 * rho2 - L * L)
    rc, out, err = run("linearize", pend, "--method", "penalty", "--json", "--penalty-equilibrium",
                       "--penalty-alpha", repr(al))
    if rc:
        check(False, "equilibrium_estimate: alpha %g: %s" % (al, err.strip()))
        continue
    ph = [e for e in json.loads(out)["eigenvalues"] if not e["spurious"]]
    dev = abs(math.sqrt(g / rho2) - math.sqrt(g / L))
    check(len(ph) == 2 and all(e["error_estimate"] >= dev for e in ph)
          and all(abs(abs(e["im"]) - math.sqrt(g / L)) <= e["error_estimate"] for e in ph),
          "equilibrium_estimate: alpha %g: estimates %s cover the deviation %.3e from sqrt(g / L) = %.12g"
          % (al, [e["error_estimate"] for e in ph], dev, math.sqrt(g / L)))
# refused where it is not defined: a point with motion, non-holonomic constraints
rc, out, err = run("linearize", "examples/nh_sleigh.yaml", "--method", "penalty", "--penalty-equilibrium")
check(rc != 0 and "penalty equilibrium (pen_equilibrium) is for points at rest" in err
      and len(err.strip().splitlines()) == 1, "equilibrium: refused on the sleigh: %s" % err.strip())

sys.exit(finish("penalty_options_test"))
