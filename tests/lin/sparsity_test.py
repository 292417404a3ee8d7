#!/usr/bin/env python3
"""mblin sparsity and the Matrix Market coordinate export (issue 70, item 1; source 001 Sec. 5.3).

1. The N-loop four-bar (examples/fourbar.py N, N = 1, 2): every matrix's order and structural
   nonzeros against counts made by hand from the model's structure (below), the factors' nonzeros
   at least the entries they factor, each SVG's dots equal to the matrix's nonzeros.
2. Bad input: a method without sparse matrices, an unknown method, a directory that cannot be
   made, a point where a method refuses: one line, the documented exit status.
3. linearize -o: a sparse matrix is a coordinate list, the same matrix as the dense export
   (scipy.io.mmread of both), --mtx-format array|coordinate forces either.

usage: sparsity_test.py path/to/mblin   (python3 with numpy and scipy)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io

MBLIN = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([MBLIN] + list(args), capture_output=True, text=True)


def expected(N):
    """(rows, cols, nnz) of each matrix of the N-loop four-bar, counted by hand.

    Coordinates: xB_i, yB_i (i = 0..N) and phi: n = 2N + 3. Constraints: N + 1 rockers
    (xB_i - i)^2 + yB_i^2 = l^2 (2 entries of Phi_q each), N couplers |B_i - B_i-1|^2 = l^2 (4 each),
    yB_N = l sin(phi) (2): m = 2N + 2, nnz(Phi_q) = 6N + 4. One state (phi), z0 = z1 = 1.
    M: the rockers' m/6 |v_i|^2 and the couplers' m/6 (|v_i-1|^2 + v_i-1.v_i + |v_i|^2) give
    the 2N + 2 diagonal entries of the points and (x_i-1, x_i), (y_i-1, y_i) both ways (4N); phi has
    no mass: nnz(M) = 6N + 2.
    K_q = dR/dq: the constraints' Hessians times lambda (rocker: (x_i, x_i), (y_i, y_i); coupler:
    the 2 x 2 blocks of x_i-1, x_i and of y_i-1, y_i; last: (phi, phi)) and the springs' Hessians
    (full 2 x 2 on x_i, y_i, i = 1..N): 2N + 2 diagonal + 4N coupler + 2N spring + 1 = 8N + 3.
    C_q = dR/dv: nothing (constant M, no dampers).
    The Hessian rows of the constraints: rocker {x_i, y_i}, coupler its 4, last {phi}: 6N + 3
    entries; they are the patterns of d(Phi_q v)/dq, of d(Phi'')/dv and of d(Phi'')/dq.
    Phi_q^T Phi_q: the cliques of each row: 2 x 2 per point (4(N + 1)), the couplers' blocks between
    neighbours (8N), and (y_N, phi), (phi, y_N), (phi, phi): 12N + 7; it holds M's and K_q's entries.
    """
    n, m = 2 * N + 3, 2 * N + 2
    phiq, mass, kq, hess, ptp = 6 * N + 4, 6 * N + 2, 8 * N + 3, 6 * N + 3, 12 * N + 7
    E = n + mass                       # [I 0 0; 0 M 0; 0 0 0]
    A = n + kq + 0 + 2 * phiq          # [0 I 0; -K_q -C_q -s Phi_q^T; -s Phi_q 0 0]
    # the augmented matrix, unknowns [vdot; lambda; v; q], rows EOM, Phi'', Phi', Phi, S, W:
    eom = mass + phiq + 0 + kq         # M, Phi_q^T, C_q, K_q
    phidd = phiq + hess + hess         # d/dvdot, d/dv, d/dq
    phid = phiq + hess                 # d/dv, d/dq
    aug = eom + phidd + phid + phiq + 1 + 1
    # the kinematic system, unknowns [vdot; v; q], rows Phi'', Phi', Phi, S, W, dW/dt (vdot_phi)
    kin = phidd + phid + phiq + 1 + 1 + 1
    return n, m, {
        "projection": {"M_r": (1, 1, 1)},                   # n - m = 1 degree of freedom
        "descriptor": {"M_q": (n, n, mass), "E_q": (2 * n + m,) * 2 + (E,), "A_q": (2 * n + m,) * 2 + (A,),
                       "A_q-sE_q": (2 * n + m,) * 2 + (E + A,)},  # E's and A's blocks do not overlap
        "penalty": {"M_p": (n, n, ptp), "Q_p(s)": (n, n, ptp)},
        "augmented": {"augmented": (3 * n + m, 3 * n + m, aug), "kinematic": (3 * n, 3 * n, kin)},
    }


def upper(N, name):
    """entries of the upper triangle (diagonal included) of a symmetric matrix, by hand"""
    if name == "M_q":
        return (2 * N + 2) + 2 * N     # the points' diagonal (phi has none) and (x_i-1, x_i), (y_i-1, y_i)
    if name == "M_p":
        return (12 * N + 7 + 2 * N + 3) // 2  # (nnz + the n diagonal entries) / 2
    return None


def fourbar_counts(tmp):
    for N in (1, 2):
        path = os.path.join(tmp, "fourbar%d.yaml" % N)
        with open(path, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "examples", "fourbar.py"), str(N)], stdout=f, check=True)
        svg = os.path.join(tmp, "svg%d" % N)
        r = run("sparsity", path, "--json", "--svg", svg)
        check(r.returncode == 0 and r.stderr == "", "N = %d: sparsity --json --svg runs (%s)" % (N, r.stderr.strip()))
        if r.returncode:
            continue
        d = json.loads(r.stdout)
        n, m, exp = expected(N)
        got = {x["method"]: x for x in d["methods"]}
        check(sorted(got) == sorted(exp), "N = %d: the four methods listed: %s" % (N, sorted(got)))
        for meth, mats in exp.items():
            x = got.get(meth, {})
            check(x.get("n") == n and x.get("m") == m, "N = %d %s: n = %d, m = %d" % (N, meth, n, m))
            have = {a["name"]: a for a in x.get("matrices", [])}
            check(sorted(have) == sorted(mats), "N = %d %s: matrices %s" % (N, meth, sorted(have)))
            for name, (rows, cols, nnz) in mats.items():
                a = have.get(name)
                if not a:
                    continue
                check((a["rows"], a["cols"], a["nnz"]) == (rows, cols, nnz),
                      "N = %d %s %s: %d x %d, %d nonzeros (by hand: %d x %d, %d)"
                      % (N, meth, name, a["rows"], a["cols"], a["nnz"], rows, cols, nnz))
                if a["factor"] is not None:
                    check(a["factor_nnz"] >= a["factored_nnz"] > 0,
                          "N = %d %s %s: factor nonzeros %d >= the %d entries factored"
                          % (N, meth, name, a["factor_nnz"], a["factored_nnz"]))
                    if a["factor"] == "klu":  # lnz + unz, each with its diagonal: at least 2 n
                        check(a["factor_nnz"] >= 2 * a["rows"], "N = %d %s %s: L + U hold both diagonals"
                              % (N, meth, name))
                u = upper(N, name)
                if u is not None:
                    check(a["factor"] == "cholmod" and a["factored_nnz"] == u,
                          "N = %d %s %s: CHOLMOD takes the upper triangle, %d entries (by hand %d)"
                          % (N, meth, name, a["factored_nnz"], u))
                    check(a["factor_nnz"] >= n + u - (2 * N + 2 if name == "M_q" else n),
                          "N = %d %s %s: L has its n diagonal entries and the strict triangle's" % (N, meth, name))
                fn = os.path.join(svg, "%s_%s.svg" % (meth, re.sub(r"[^A-Za-z0-9_]", "_", name).rstrip("_")))
                dots = open(fn).read().count('class="nz"') if os.path.exists(fn) else -1
                check(dots == a["nnz"], "N = %d %s %s: the SVG has %d dots for %d nonzeros" % (N, meth, name, dots,
                                                                                               a["nnz"]))
        # the text table says the same
        r = run("sparsity", path, "--method", "penalty")
        check(r.returncode == 0 and re.search(r"M_p\s+%d x %d\s+%d\s" % (n, n, 12 * N + 7), r.stdout) is not None,
              "N = %d: the text table's M_p line" % N)


def bad_input(tmp):
    path = os.path.join(tmp, "fourbar1.yaml")
    for meth, word in (("fd", "builds no sparse matrices"), ("nullspace", "builds no sparse matrices"),
                       ("bogus", "unknown linearization method")):
        r = run("sparsity", path, "--method", meth, "--json")
        check(r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and word in r.stderr,
              "--method %s: exit 2, one line (%s)" % (meth, r.stderr.strip()))
    blocker = os.path.join(tmp, "a_file")
    open(blocker, "w").close()
    r = run("sparsity", path, "--svg", os.path.join(blocker, "plots"))
    check(r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1 and "cannot create" in r.stderr,
          "--svg under a file: exit 1, one line (%s)" % r.stderr.strip())
    singular = os.path.join(ROOT, "examples", "fourbar_singular.yaml")
    r = run("sparsity", singular, "--json")
    d = json.loads(r.stdout) if r.returncode == 0 else {"methods": []}
    refused = [x["method"] for x in d["methods"] if "refused" in x]
    check(r.returncode == 0 and refused == ["projection", "descriptor", "augmented"],
          "singular four-bar: penalty's matrices, the others refused (%s)" % refused)
    motor = os.path.join(ROOT, "examples", "ode", "dc_motor_pendulum.yaml")  # user ODE states: no rows in the pencil
    for meth in ("descriptor", "penalty"):
        r = run("sparsity", motor, "--method", meth)
        check(r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1 and "formed without" in r.stderr,
              "user ODE states, --method %s: exit 1, one line (%s)" % (meth, r.stderr.strip()))
    r = run("sparsity", singular, "--method", "augmented")
    check(r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1 and "rank" in r.stderr,
          "singular four-bar, --method augmented: exit 1, one line")


def mread(path):
    a = scipy.io.mmread(path)
    return a.toarray() if hasattr(a, "toarray") else np.asarray(a)


def banner(path):
    with open(path) as f:
        return f.readline().split()[2]


def mtx_export(tmp):
    model = os.path.join(ROOT, "examples", "flexible_pendulum_np5.yaml")
    dirs = {}
    for fmt in ("auto", "array", "coordinate"):
        dirs[fmt] = os.path.join(tmp, "mtx_" + fmt)
        r = run("linearize", model, "-o", dirs[fmt], "--mtx-format", fmt)
        check(r.returncode == 0, "linearize -o --mtx-format %s (%s)" % (fmt, r.stderr.strip()))
    names = sorted(f for f in os.listdir(dirs["array"]) if f.endswith(".mtx"))
    for f in names:
        dense = mread(os.path.join(dirs["array"], f))
        nz = np.count_nonzero(dense)
        sparse = dense.size > 0 and nz <= 0.25 * dense.size
        for fmt in ("auto", "coordinate"):
            check(np.array_equal(mread(os.path.join(dirs[fmt], f)), dense),
                  "%s: the %s export reads back as the dense one" % (f, fmt))
        want = "coordinate" if sparse or dense.size == 0 else "array"
        check(banner(os.path.join(dirs["auto"], f)) == want,
              "%s (%d of %d nonzero): auto writes %s" % (f, nz, dense.size, want))
        check(banner(os.path.join(dirs["coordinate"], f)) == "coordinate", "%s: --mtx-format coordinate" % f)
        if dense.size:
            check(banner(os.path.join(dirs["array"], f)) == "array", "%s: --mtx-format array" % f)
    # the pendulum's K-hat (192 of 1024 nonzero) is the sparse one; A is dense
    check(banner(os.path.join(dirs["auto"], "K.mtx")) == "coordinate", "K.mtx of the pendulum is a coordinate list")
    check(banner(os.path.join(dirs["auto"], "A.mtx")) == "array", "A.mtx of the pendulum is an array")
    r = run("linearize", model, "-o", dirs["auto"], "--mtx-format", "csv")
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "--mtx-format csv: exit 2, one line")
    # mtx_without_o: --mtx-format writes nothing without -o: refused, not silently accepted
    r = run("linearize", model, "--mtx-format", "array")
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "--mtx-format applies to the files of -o DIR" in r.stderr,
          "mtx_without_o: --mtx-format array without -o: exit 2, one line (%s)" % r.stderr.strip())


def main():
    with tempfile.TemporaryDirectory() as tmp:
        fourbar_counts(tmp)
        bad_input(tmp)
        mtx_export(tmp)
    if failures:
        print("%d FAILED" % len(failures))
        sys.exit(1)
    print("all passed")


main()
