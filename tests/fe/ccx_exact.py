#!/usr/bin/env python3
"""The lowest eigenvalues of the matrices CalculiX wrote (JOB.sti, JOB.mas), solved to rounding.

usage: ccx_exact.py JOB [--nev K] [--shift S]

CalculiX's own *FREQUENCY eigenvalues (ccx_reference.py) are those of the same matrices only to
about 2e-8 relative (measured on the link clamped at END_A: 2.2e-8 against this solve, which a
dense LAPACK solve of the same pencil confirms to 1e-9), so a check of mblin's full-model
eigenvalues at 1e-8 needs this reference, and ccx's own at the 1e-7 level. The pencil (K, M) of
JOB.sti and JOB.mas (upper triangle, `row column value`, 1-based, docs/fe-parts.md) is solved by
SciPy's ARPACK in shift-invert mode about S (default SHIFT: below the rigid-body modes' zero, so
K - S M is positive definite), factored by SuperLU; ARPACK's tolerance EIG_TOL. Prints JSON:
{"job", "rows", "eigenvalues": omega^2 ascending, "frequencies_hz"}. Independent of mblin (numpy,
scipy). Exit 1 with a one-line message on a missing or malformed file.
"""
import argparse
import json
import math
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

SHIFT = -1e4      # (rad/s)^2: the shift of the shift-invert mode
EIG_TOL = 1e-14   # ARPACK's relative tolerance on the Ritz values


def read_triangle(path):
    try:
        d = np.loadtxt(path, ndmin=2)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: {e}")
    if d.shape[1] != 3:
        raise ValueError(f"{path}: {d.shape[1]} columns, `row column value` expected")
    i, j = d[:, 0].astype(int) - 1, d[:, 1].astype(int) - 1
    if (i > j).any() or (i < 0).any():
        raise ValueError(f"{path}: an entry below the diagonal or a row below 1")
    n = int(j.max()) + 1
    a = sp.coo_matrix((d[:, 2], (i, j)), shape=(n, n)).tocsc()
    return (a + sp.triu(a, 1).T).tocsc()


def solve(K, M, nev, shift):
    """The nev eigenvalues omega^2 of (K, M) nearest above shift, ascending."""
    lu = sla.splu((K - shift * M).tocsc())
    op = sla.LinearOperator(K.shape, matvec=lu.solve)
    return [float(x) for x in np.sort(sla.eigsh(K, k=nev, M=M, sigma=shift, OPinv=op, tol=EIG_TOL,
                                                return_eigenvectors=False))]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("job")
    ap.add_argument("--nev", type=int, default=12)
    ap.add_argument("--shift", type=float, default=SHIFT)
    o = ap.parse_args(argv)
    try:
        K = read_triangle(o.job + ".sti")
        M = read_triangle(o.job + ".mas")
    except ValueError as e:
        print(f"ccx_exact.py: {e}", file=sys.stderr)
        return 1
    if K.shape != M.shape:
        print(f"ccx_exact.py: {o.job}: K is {K.shape[0]} rows, M {M.shape[0]}", file=sys.stderr)
        return 1
    w2 = solve(K, M, o.nev, o.shift)
    out = {"job": o.job, "rows": K.shape[0], "eigenvalues": w2,
           "frequencies_hz": [math.copysign(math.sqrt(abs(x)), x) / (2 * math.pi) for x in w2]}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
