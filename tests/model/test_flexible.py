#!/usr/bin/env python3
"""The flexible double pendulum of source 001 Sec. 4.2 (examples/flexible_pendulum.py) against an
independent reference and the published Table 3.

usage: test_flexible.py MBLIN NP [NP ...]

For each n_p: the model file is generated, the numpy reference (tests/model/flexible_pendulum_ref.py:
the FFR finite element model linearized at the hanging equilibrium from the element matrices,
constraints removed by a null-space basis, symmetric-definite eigenproblem, the lowest
eigenvalues refined in extended precision) gives the lowest 20 angular frequencies, and every
exact method of mblin must agree with them to 1e-9 relative (see RTOL), and on the equilibrium
coordinates. Separately, mblin's own M-hat and K-hat (`mck` of --json) solved here as a
symmetric-definite problem (refined in extended precision) must give the reference to 1e-9 at
every n_p: that checks the linearization apart from mblin's eigensolver. For n_p = 50 the
reference and the default method must reproduce Table 3 of source 001 to the printed digits.

Above dense_max (n_p = 100) `descriptor` computes a partial spectrum by default (ARPACK, refined):
its eigenvalues are then taken from a run with --nev 2*NLOW and NLOW pairs are expected.

EXPECTED FAILURES on the code of 2026-11-22 (main at 677e7f4), to be cleared by merging:
  - branch `scale`: the default `augmented` method refuses this model for every n_p (unscaled
    condition estimate of the augmented matrix: 2.3e15 at n_p = 5 up to 1e26 at n_p = 100), and
    `descriptor` refuses n_p = 100 with the same message. These show as "REFUSED".
  - branch `eig`: partition, nullspace, projection and descriptor lose digits from n_p = 10 on
    (the nonsymmetric dense eigensolver on a spectrum spanning 1 to 1e5 rad/s): nullspace 1.9e-9
    at n_p = 10; all four 2.7e-9 to 8e-5 at n_p = 50 and 2e-4 to 2e-3 at n_p = 100. These show
    as "TOO FAR". Their M-hat, K-hat are right (the "M-hat, K-hat (solved here)" checks pass).
Nothing is skipped: every failing check is printed and the exit status is 1 until they pass.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import numpy as np  # noqa: E402  (python3-numpy, in the Makefile's PACKAGES)

import flexible_pendulum  # noqa: E402  (the generator)
import flexible_pendulum_ref as ref  # noqa: E402

METHODS = ["augmented", "partition", "nullspace", "projection", "descriptor"]
NLOW = 20
# Relative tolerance on the lowest NLOW frequencies, as asked for every n_p. It is demanding at
# n_p = 50 and 100: the low frequencies are sensitive to rounding of M and K (the element
# stiffness EI/le^3 nearly cancels on the smooth low modes). Measured with the extended-precision
# reference: random relative 1.1e-16 perturbations of every entry of M and K move them by up to
# 2.6e-12 (n_p = 10), 4.9e-10 (50), 4.8e-9 (100); mblin's own M-hat, K-hat give them to 3e-13,
# 1e-10 and 5.4e-10 when solved here in extended precision, but to only 9e-9..2.6e-8 (50) and
# 3.4e-8..1.7e-7 (100) with a plain double Cholesky + eigh. So 1e-9 at n_p = 100 is reachable
# from mblin's matrices, but only by an eigensolver that is more accurate on the low modes than
# a backward-stable dense one (e.g. shift-invert about 0 plus refinement).
RTOL_DEFAULT = 1e-9
RTOL = {}
# mblin's own M-hat, K-hat solved here in extended precision (the linearization alone)
RTOL_MCK = 1e-9
QTOL = 1e-10          # equilibrium coordinates (m, rad), absolute
TABLE3 = [1.3357, 3.5244, 9.4175, 22.4054]   # source 001 Table 3, n_p = 50, +-i rad/s

failures = []


def check(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)


def run_method(mblin, path, method, extra=()):
    t0 = time.perf_counter()
    p = subprocess.run([mblin, "linearize", path, "--method", method, "--json"] + list(extra),
                       capture_output=True, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        return None, dt, p.stderr.strip()
    return json.loads(p.stdout), dt, ""


def physical_omegas(d):
    """imaginary parts of the non-spurious eigenvalues with Im > 0, ascending, and the largest
    |Re|/|lambda| among them"""
    ev = [e for e in d["eigenvalues"] if not e["spurious"] and e["im"] > 0]
    om = sorted(e["im"] for e in ev)
    re = max((abs(e["re"]) / np.hypot(e["re"], e["im"]) for e in ev), default=0.0)
    return np.array(om), re


def mck_omegas(d, k):
    """the lowest k frequencies of mblin's own M-hat, K-hat (the `mck` of --json), solved here as
    a symmetric-definite problem and refined in extended precision: checks the linearization
    apart from mblin's eigensolver"""
    M = np.array(d["mck"]["M"])
    K = np.array(d["mck"]["K"])
    M, K = 0.5 * (M + M.T), 0.5 * (K + K.T)
    w2, Y = ref.sym_definite_eig(M, K)
    ML, KL = M.astype(ref.LD), K.astype(ref.LD)
    none = np.zeros((0, M.shape[0]), dtype=ref.LD)
    return np.array([float(ref.refine(ML, KL, none, Y[:, j].astype(ref.LD), w2[j])) for j in range(k)])


def main():
    mblin = sys.argv[1]
    nps = [int(a) for a in sys.argv[2:]] or [5, 10, 50]
    tmp = tempfile.mkdtemp(prefix="mblin_flex_")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the generated models go with the test
    for npe in nps:
        path = os.path.join(tmp, "flexible_np%d.yaml" % npe)
        with open(path, "w") as f:
            f.write(flexible_pendulum.generate(npe))
        t0 = time.perf_counter()
        pend = ref.Pendulum(npe)
        w_ref, z = pend.omegas(NLOW)
        w_ref, z = w_ref.astype(float), z.astype(float)
        t_ref = time.perf_counter() - t0
        rtol = RTOL.get(npe, RTOL_DEFAULT)
        dof = 6 * npe + 2
        print("n_p = %d (n = %d, %d DOF), reference %.2f s: %s" % (
            npe, pend.n, dof, t_ref, " ".join("%.10f" % x for x in w_ref[:4])))
        check(len(w_ref) == dof, "n_p = %d: reference has %d = 6 n_p + 2 frequencies" % (npe, len(w_ref)))
        nlow = min(NLOW, dof)
        if npe == 50:
            # the reference against the published table (independent of mblin)
            check(all(round(w, 4) == t for w, t in zip(w_ref[:4], TABLE3)),
                  "n_p = 50: reference reproduces source 001 Table 3 (%s)" %
                  ", ".join("%.4f" % w for w in w_ref[:4]))
        for method in METHODS:
            d, dt, err = run_method(mblin, path, method)
            d_eig, extra = d, ""
            if d is not None and d.get("spectrum", {}).get("partial"):
                # descriptor above dense_max (pencil order 2n + m = 1234 at n_p = 100) takes the
                # sparse path, a partial spectrum of nev eigenvalues (default 20 = 10 pairs; a
                # conjugate pair counts as two, docs/linearization.md "Large models: partial
                # spectra"): the eigenvalues from a second run asking for the 2 NLOW that hold
                # the lowest NLOW pairs (--nev alone forms no M-hat, K-hat: those from the first)
                extra = "--nev %d" % (2 * NLOW)
                d_eig, dt2, err = run_method(mblin, path, method, extra.split())
                dt += dt2
                if d_eig is None:
                    d = None
            tag = "n_p = %d %-10s (%.2f s%s)" % (npe, method, dt, "; eigenvalues " + extra if extra else "")
            if d is None:
                # EXPECTED until `scale` is merged: augmented (all n_p), descriptor (n_p = 100)
                check(False, "%s REFUSED: %s" % (tag, err))
                continue
            q = np.array(d["operating_point"]["q"])
            dq = float(np.max(np.abs(q - z)))
            check(dq <= QTOL, "%s equilibrium coordinates agree with the reference (max |dq| %.2g)" % (tag, dq))
            k = min(nlow, len(w_ref))
            try:
                wm = mck_omegas(d, k)
                relm = float(np.max(np.abs(wm - w_ref[:k]) / w_ref[:k]))
            except (np.linalg.LinAlgError, RuntimeError) as ex:   # M-hat not definite, ...
                relm = np.inf
                print("  (M-hat, K-hat: %s)" % ex)
            check(relm <= RTOL_MCK, "%s M-hat, K-hat (solved here) give the lowest %d to %.1e relative (max rel %.2e)"
                  % (tag, k, RTOL_MCK, relm))
            om, re = physical_omegas(d_eig)
            npairs = dof if not extra else min(NLOW, dof)   # partial: the nev = 2 NLOW nearest 0
            check(len(om) == npairs, "%s %d physical oscillatory eigenvalue pairs (expected %d)" % (tag, len(om), npairs))
            k = min(nlow, len(om))
            rel = float(np.max(np.abs(om[:k] - w_ref[:k]) / w_ref[:k])) if k else np.inf
            # EXPECTED until `eig` is merged: from n_p = 10 on the dense nonsymmetric
            # eigensolver loses digits (TOO FAR)
            good = rel <= rtol and re <= rtol
            check(good,
                  "%s lowest %d agree with the reference to %.1e relative (max rel %.2e, max |Re|/|lambda| %.1e)%s"
                  % (tag, k, rtol, rel, re, "" if good else " TOO FAR")
                  + ": " + " ".join("%.10f" % x for x in om[:4]))
            if npe == 50 and method == "augmented":
                # EXPECTED until `scale` is merged (refused above, so this is not reached today)
                check(all(round(w, 4) == t for w, t in zip(om[:4], TABLE3)),
                      "n_p = 50: the default method reproduces source 001 Table 3 (%s)" %
                      ", ".join("%.4f" % w for w in om[:4]))
        if npe == 5:
            # the parameters stay symbols: --set changes them (l also moves the nodes, le = l/n_p)
            sets = {"l": 5.0, "E": 2e8, "rho": 1200.0}
            args = [mblin, "linearize", path, "--method", "partition", "--json"]
            for k_, v in sets.items():
                args += ["--set", "%s=%r" % (k_, v)]
            p = subprocess.run(args, capture_output=True, text=True)
            w_set = ref.Pendulum(npe, sets).omegas(NLOW)[0].astype(float)[:NLOW]
            if p.returncode != 0:
                check(False, "n_p = 5 partition --set l=5 E=2e8 rho=1200: %s" % p.stderr.strip())
            else:
                wm = mck_omegas(json.loads(p.stdout), NLOW)
                relm = float(np.max(np.abs(wm - w_set) / w_set))
                check(relm <= RTOL_MCK and abs(w_set[0] - w_ref[0]) > 1e-3,
                      "n_p = 5 partition --set l=5 E=2e8 rho=1200: M-hat, K-hat give the reference for those "
                      "parameters (omega_1 %.6f, max rel %.2e)" % (w_set[0], relm))
    if any("n_p = 50 augmented" in f and "REFUSED" in f for f in failures):
        check(False, "n_p = 50: the default method reproduces source 001 Table 3 (not run: refused)")
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
