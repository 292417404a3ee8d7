#!/usr/bin/env python3
"""Every model file gives the same eigenvalues under every OpenBLAS kernel (issue 27).

    python3 tests/kernels/agree.py build/mblin [-j N] [--full]      (from the project root)

OpenBLAS picks its compute kernels by CPU, so a result that depends on the kernel passes on the
machine that made it and fails on a user's. Every *.yaml and *.urdf under examples/ and tests/
(not tests/fuzz/corpus, which holds copies) is linearized with
`mblin linearize FILE --json --no-matrices [--method M]` for M = the default (augmented),
descriptor and penalty, under the machine's own kernel (the current environment), under
OPENBLAS_CORETYPE = SkylakeX, Prescott and Sandybridge (Haswell in place of one the CPU cannot run
or that is the machine's own; tests/kernels/cores.py confirms each is in effect), and, when the
environment forces a kernel, once more with OPENBLAS_CORETYPE unset (the autodetected one). Each
run is compared with the machine's own:

- a refusal (nonzero exit) must be the same refusal: same exit status, same first line of stderr;
- a success must be a success with the same number of eigenvalues, the same partial/whole
  spectrum, the same spurious flags in the listed order, and each non-spurious eigenvalue equal to
  its counterpart (in the listed order) to 1e-9 relative to the larger magnitude (docs/methods.md:
  the exact methods agree to 1e-9). Two eigenvalues both below the zero tolerance count as equal;
  the zero tolerance of a run is the larger of 1e-9 times its largest non-spurious magnitude and
  the largest magnitude it lists as kind "zero" (the JSON has no zero_tol field; the library
  classifies with max(zero_tol max|lambda|, its rounding level, 1e-12)). Spurious eigenvalues
  (infinite or penalty modes) are compared by count and flag only.
- penalty is approximate by design and reports `error_estimate` (an absolute bound on its physical
  eigenvalues, src/lin/penalty.c): its eigenvalues must agree to the larger of the two runs'
  estimates, and at least to 1e-9 relative.

A penalty run on more than PENALTY_MAX_N coordinates (dense QZ of order 2n: 20-30 s per kernel on
the 300-loop chain and four-bar) is skipped and listed as such unless --full. One line per file,
then "N passed, M failed" (files). Exit 0 when none failed, 1 otherwise, 77 when kernels cannot be
forced here (not x86-64, or an OpenBLAS without DYNAMIC_ARCH).
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL_TOL = 1e-9          # docs/methods.md: exact methods agree on eigenvalues to 1e-9 relative
METHODS = [None, "descriptor", "penalty"]   # None: the default method (augmented)
WANTED = ["SkylakeX", "Prescott", "Sandybridge", "Haswell"]  # Haswell: the stand-in
FORCED_COUNT = 3
PENALTY_MAX_N = 500     # above: penalty's dense QZ (order 2n) takes 20-30 s per kernel
RUN_TIMEOUT = 300


def needs_fe_part(path):
    """a model of an FE part whose files examples/fe/make_part.sh writes (gmsh and ccx, not in git):
    test_fe_ccx makes the part and runs it"""
    with open(path, errors="replace") as f:
        return any(line.strip().startswith(("calculix:", "fe: {calculix:", "fe: {nastran:")) for line in f)


def needs_user_code(path):
    """a model that names a shared library of user routines (docs/user-routines.md): it runs only
    with --allow-user-code (the walkers give it; its library is built into build/examples/user)"""
    with open(path, errors="replace") as f:
        text = f.read()
    return "routines:" in text and re.search(r"(^|[\s{,])library:", text, re.M) is not None


def model_files():
    out = []
    for top in ("examples", "tests"):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(d, ROOT)
            if rel == os.path.join("tests", "fuzz", "corpus"):
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".yaml", ".yml", ".urdf")) and not needs_fe_part(os.path.join(d, f)):
                    out.append(os.path.join(rel, f))
    return sorted(out)


class Run:
    def __init__(self, rc, out, err, secs):
        self.rc, self.out, self.secs = rc, out, secs
        self.err1 = err.strip().splitlines()[0] if err.strip() else ""
        self.data, self.parse_error = None, None
        if rc == 0:
            try:
                self.data = json.loads(out)
            except ValueError as e:
                self.parse_error = str(e)


def run(mblin, path, method, env):
    cmd = [mblin, "linearize", path, "--json", "--no-matrices"]
    if needs_user_code(os.path.join(ROOT, path)):
        cmd.append("--allow-user-code")
    if method:
        cmd += ["--method", method]
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=RUN_TIMEOUT)
        return Run(r.returncode, r.stdout, r.stderr, time.monotonic() - t)
    except subprocess.TimeoutExpired:
        return Run(-1000, "", "timed out after %d s" % RUN_TIMEOUT, time.monotonic() - t)


def value(e):
    if e.get("re") is None or e.get("im") is None:
        return None
    return complex(e["re"], e["im"])


def zero_tol(ev):
    mags = [abs(value(e)) for e in ev if not e.get("spurious") and value(e) is not None]
    mx = max((m for m in mags if math.isfinite(m)), default=0.0)
    z = REL_TOL * mx
    for e in ev:
        if not e.get("spurious") and e.get("kind") == "zero" and value(e) is not None:
            z = max(z, abs(value(e)))
    return z


def fmt(z):
    return "%.17g%+.17gi" % (z.real, z.imag) if z is not None else "inf"


def compare(ref, oth, method):
    """(ok, worst relative difference, its eigenvalue number (1-based), worst ratio of a difference
    to its tolerance, message or "")."""
    a, b = ref.data, oth.data
    ea, eb = a.get("eigenvalues") or [], b.get("eigenvalues") or []
    if len(ea) != len(eb):
        return False, None, None, None, "%d eigenvalues, own kernel %d" % (len(eb), len(ea))
    pa, pb = (a.get("spectrum") or {}).get("partial"), (b.get("spectrum") or {}).get("partial")
    if pa != pb:
        return False, None, None, None, "partial spectrum %s, own kernel %s" % (pb, pa)
    fa, fb = [bool(e.get("spurious")) for e in ea], [bool(e.get("spurious")) for e in eb]
    if fa != fb:
        at = [i for i in range(len(fa)) if fa[i] != fb[i]]
        return False, None, None, None, ("spurious flags differ (%d spurious, own kernel %d; first at eigenvalue %d)"
                                         % (sum(fb), sum(fa), at[0] + 1))
    ztol = max(zero_tol(ea), zero_tol(eb))
    est = 0.0
    if method == "penalty":
        est = max(a.get("error_estimate") or 0.0, b.get("error_estimate") or 0.0)
    worst_rel, worst_ratio, worst_at, worst_i, kinds = 0.0, 0.0, None, None, 0
    for i, (x, y) in enumerate(zip(ea, eb)):
        if x.get("spurious"):
            continue
        if x.get("kind") != y.get("kind"):
            kinds += 1
        va, vb = value(x), value(y)
        if va is None or vb is None:
            if va is None and vb is None:
                continue
            return False, None, None, None, "eigenvalue %d: %s, own kernel %s" % (i + 1, fmt(vb), fmt(va))
        if abs(va) <= ztol and abs(vb) <= ztol:
            continue
        d, scale = abs(va - vb), max(abs(va), abs(vb))
        rel = d / scale
        ratio = d / max(est, REL_TOL * scale)
        if ratio > worst_ratio or worst_at is None:
            worst_at = (i, va, vb)
        if rel > worst_rel or worst_i is None:
            worst_i = i + 1
        worst_rel, worst_ratio = max(worst_rel, rel), max(worst_ratio, ratio)
    msg = ""
    if worst_ratio > 1.0:
        i, va, vb = worst_at
        tol = ("%.1e relative" % REL_TOL) if not est else ("error estimate %.2e / %.0e relative" % (est, REL_TOL))
        msg = ("eigenvalue %d of %d: %s, own kernel %s: difference %.3g (relative %.3g) over the tolerance (%s)"
               % (i + 1, len(ea), fmt(vb), fmt(va), abs(va - vb), abs(va - vb) / max(abs(va), abs(vb)), tol))
        # the same values in another order? (sorted by frequency: near-equal frequencies may swap)
        rest = [value(e) for e in eb if not e.get("spurious") and value(e) is not None]
        swapped = True
        for e in ea:
            v = value(e)
            if e.get("spurious") or v is None:
                continue
            j = min(range(len(rest)), key=lambda k: abs(rest[k] - v)) if rest else None
            w = rest.pop(j) if j is not None else None
            if w is None or not ((abs(v) <= ztol and abs(w) <= ztol)
                                 or abs(v - w) <= max(est, REL_TOL * max(abs(v), abs(w)))):
                swapped = False
        if swapped:
            msg += "; the same values in another order"
    elif kinds:
        msg = "note: %d eigenvalue(s) of another kind (real/oscillatory/zero)" % kinds
    return worst_ratio <= 1.0, worst_rel, worst_i, worst_ratio, msg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mblin")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--full", action="store_true", help="also the penalty runs over PENALTY_MAX_N coordinates")
    args = ap.parse_args()
    mblin = os.path.abspath(args.mblin)
    t0 = time.monotonic()

    k = cores.Kernels(mblin)
    if k.reason:
        print("skipped: " + k.reason)
        print("0 passed, 0 failed")
        return cores.SKIP
    forced, refused = k.pick(FORCED_COUNT, WANTED)
    base = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    base.pop("OPENBLAS_VERBOSE", None)
    kernels = [("own " + k.own, base)]
    for name in forced:
        kernels.append((name, dict(base, OPENBLAS_CORETYPE=name)))
    line = "kernels: machine's own %s; forced %s" % (k.describe_own(), ", ".join(forced))
    if k.env:  # the environment forces one: also the kernel a user without it gets
        auto, _ = cores.loaded_core(mblin, unset=True)
        if auto and auto.lower() not in [n.lower() for n in [k.own] + forced]:
            env = dict(base)
            env.pop("OPENBLAS_CORETYPE")
            kernels.append(("autodetected " + auto, env))
            line += "; autodetected %s (OPENBLAS_CORETYPE unset)" % auto
    if refused:
        line += "; not used: " + "; ".join(refused)
    print(line, flush=True)
    if len(forced) < 2:
        print("fewer than two kernels to force besides the machine's own")
        print("0 passed, 1 failed")
        return 1

    files = model_files()
    results = {}   # (file, method, kernel index) -> Run
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        def submit(jobs):
            futs = {pool.submit(run, mblin, f, m, kernels[ki][1]): (f, m, ki) for f, m, ki in jobs}
            for fu in concurrent.futures.as_completed(futs):
                results[futs[fu]] = fu.result()
        # the default method first: its operating point gives the size of the penalty runs
        submit([(f, None, ki) for f in files for ki in range(len(kernels))])
        skipped, jobs = {}, []
        for f in files:
            ref = results[(f, None, 0)]
            n = len(((ref.data or {}).get("operating_point") or {}).get("coordinates") or [])
            for m in METHODS[1:]:
                if m == "penalty" and n > PENALTY_MAX_N and not args.full:
                    skipped[(f, m)] = ("%d coordinates > %d: dense QZ of order %d, 20-30 s per kernel "
                                       "(--full runs it)" % (n, PENALTY_MAX_N, 2 * n))
                    continue
                jobs += [(f, m, ki) for ki in range(len(kernels))]
        # the slowest first, so that the two workers finish together
        jobs.sort(key=lambda j: -results[(j[0], None, 0)].secs)
        submit(jobs)

    passed = failed = 0
    for f in files:
        parts, details, ok_file = [], [], True
        for m in METHODS:
            mname = m or "augmented"
            if (f, m) in skipped:
                parts.append("%s skipped" % mname)
                details.append("  %s skipped: %s" % (mname, skipped[(f, m)]))
                continue
            ref = results[(f, m, 0)]
            ok_m, worst_rel, worst_k, worst_i, worst_ratio, notes = True, 0.0, "", None, 0.0, []
            if ref.rc == 0 and ref.data is None:
                ok_m = False
                notes.append("own kernel: exit 0 but no JSON (%s)" % ref.parse_error)
            for ki in range(1, len(kernels)):
                kname, oth = kernels[ki][0], results[(f, m, ki)]
                if ref.rc != 0 or oth.rc != 0:
                    if ref.rc != oth.rc or ref.err1 != oth.err1:
                        ok_m = False
                        notes.append("%s: exit %d \"%s\", own kernel exit %d \"%s\""
                                     % (kname, oth.rc, oth.err1, ref.rc, ref.err1))
                    continue
                if ref.data is None:
                    continue
                if oth.data is None:
                    ok_m = False
                    notes.append("%s: exit 0 but no JSON (%s)" % (kname, oth.parse_error))
                    continue
                ok, rel, at, ratio, msg = compare(ref, oth, m)
                if rel is not None and rel > worst_rel:
                    worst_rel, worst_k, worst_i = rel, kname, at
                if ratio is not None:
                    worst_ratio = max(worst_ratio, ratio)
                if not ok:
                    ok_m = False
                if msg:
                    notes.append("%s: %s" % (kname, msg))
            if ref.rc != 0:
                desc = "%s refused%s" % (mname, "" if ok_m else " (differently)")
            else:
                ev = (ref.data or {}).get("eigenvalues") or []
                ns = sum(1 for e in ev if e.get("spurious"))
                desc = "%s %d eig%s, worst %.1e" % (mname, len(ev), (" (%d spurious)" % ns) if ns else "", worst_rel)
                if worst_rel > 0:
                    desc += " (#%d, %s)" % (worst_i, worst_k)
                if m == "penalty":
                    desc += ", %.2g of the tolerance (est %.1e)" % (
                        worst_ratio, (ref.data or {}).get("error_estimate") or 0.0)
            parts.append(desc + ("" if ok_m else " FAILED"))
            details += ["  %s under %s" % (mname, n) for n in notes]
            ok_file = ok_file and ok_m
        passed, failed = passed + ok_file, failed + (not ok_file)
        print("%s %s: %s" % ("ok  " if ok_file else "FAIL", f, "; ".join(parts)))
        for d in details:
            print(d)
    total = sum(r.secs for r in results.values())
    print("%d files, %d runs (%.0f s of processes) in %.0f s; %d skipped runs listed above"
          % (len(files), len(results), total, time.monotonic() - t0, len(skipped) * len(kernels)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
