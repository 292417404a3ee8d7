#!/usr/bin/env python3
"""Every example's output, byte for byte, as it was recorded (issue 28).

    python3 tests/golden/golden.py build/mblin [-j N]            check (from the project root)
    python3 tests/golden/golden.py build/mblin --update          record anew
    python3 tests/golden/golden.py build/mblin --dump DIR        also write each output to DIR

A restructuring moves code and must not change a single number. This runs the tool on every model
file of examples/ and tests/ (not tests/fuzz/corpus) with every linearization method, `--json` and
the text report, plus `check`, `equilibrium`, `sensitivity`, `symbolic` and `codegen` on the small
ones and a list of study commands (CASES_EXTRA: sweep, boundary, freqresp, simulate, validate,
compare), and compares the SHA-256 of each run's exit status, standard output and standard error
with tests/golden/outputs.sha256 (wall-clock fields, "seconds", masked).

The outputs depend on the OpenBLAS kernel (docs/linearization.md, "Results on every machine"), so
every run forces one that every x86-64 CPU has: OPENBLAS_CORETYPE=Prescott, one thread. Exit 77
(skipped) where that kernel cannot be forced (not x86-64, or an OpenBLAS without DYNAMIC_ARCH).

When a change is meant to change numbers (a better method, a fixed bug), record anew with
--update and say so in the commit: the diff of outputs.sha256 lists every output that changed.
A change meant to move results only at rounding (another summation order, another node order)
is checked first with numdiff.py: --dump the outputs of the build before and after, and
numdiff.py compares them number by number at the tolerance results keep between OpenBLAS
kernels (1e-9 relative, or the last printed digit), the text identical.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels"))
import cores  # noqa: E402
from agree import model_files, needs_user_code  # noqa: E402  (the same model files as the kernels check)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HASHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "outputs.sha256")
METHODS = ["augmented", "partition", "nullspace", "projection", "descriptor", "penalty", "fd"]
SMALL_BYTES = 20000   # check/equilibrium/sensitivity/symbolic/codegen: models whose JSON is below
DENSE_MAX_BYTES = 1000000  # penalty and fd (dense, order 2n): models whose JSON is below
KERNEL = "Prescott"
TIMEOUT = 300

CASES_EXTRA = [
    "sweep examples/mech/rigid_rotor.yaml --param Omega=0:300:16 --json",
    "sweep examples/whipple_bicycle.yaml --param v=0:10:41 --json",
    "sweep examples/whipple_bicycle.yaml --param v=0:10:41",
    "sweep examples/mech/rotor_stator.yaml --param f=0:1.25:11 --predictor linear --json",
    "sweep examples/fourbar_N5.yaml --param k=20:28:5 --param m=1:2:3 --json",
    "boundary examples/whipple_bicycle.yaml --param v --near 4.3 --json",
    "boundary examples/whipple_bicycle.yaml --param v --near 6 --json",
    "boundary examples/sim/sleeping_top.yaml --param Omega --near 195 --json",
    "sensitivity examples/slider_pendulum.yaml --set c=20 --wrt c --json",
    "sensitivity examples/whipple_bicycle.yaml --json",
    "sensitivity examples/mech/rotor_stator.yaml --json",
    "freqresp examples/ode/dc_motor_pendulum.yaml --from u --to theta --w 0.1:100:21",
    "simulate examples/slider_pendulum.yaml --t-end 2 --perturb 1:0.01 --json",
    "simulate examples/sim/sleeping_top.yaml --t-end 0.5 --dt-out 0.05 --json",
    "validate examples/fourbar_N1.yaml --modes 1 --json",
    "compare examples/fourbar_N5.yaml --json --repeat 1",
    "symbolic examples/double_pendulum_natural.yaml",
    "symbolic examples/fourbar_N1.yaml --format latex",
    "codegen examples/whipple_bicycle.yaml --lang python --newton",
    "codegen examples/mech/fourbar_N1.yaml --lang octave",
    "linearize examples/fourbar_N300.yaml --nev 6 --json --no-matrices",
    "linearize examples/fourbar_N300.yaml --nev 6 --method descriptor --json --no-matrices",
    "linearize examples/fourbar_N20.yaml --json --set k=30 --guess q1=0.1",
    "linearize examples/whipple_bicycle.yaml --matrices --shapes",
    "linearize examples/nh_sleigh.yaml --method nope",
    "linearize examples/no_such_file.yaml",
    "check examples/fourbar_singular.yaml",
]


def run(tool, args):
    env = dict(os.environ, OPENBLAS_CORETYPE=KERNEL, OPENBLAS_NUM_THREADS="1", LC_ALL="C")
    try:
        p = subprocess.run([tool] + args, cwd=ROOT, env=env, capture_output=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -999, b"", b"timeout"


def cases(tool):
    out = []
    for f in model_files():
        # a model of user routines in a library runs only when allowed (docs/user-routines.md)
        allow = " --allow-user-code" if needs_user_code(os.path.join(ROOT, f)) else ""
        base = run(tool, ["linearize", f, "--json"] + allow.split())
        size = len(base[1])
        for m in METHODS:
            if m in ("penalty", "fd") and size > DENSE_MAX_BYTES:
                continue
            out.append("linearize %s --method %s --json%s" % (f, m, allow))
        out.append("linearize " + f + allow)
        if size < SMALL_BYTES:
            out += ["check " + f + allow, "equilibrium %s --json%s" % (f, allow), "sensitivity %s --json%s" % (f, allow),
                    "codegen %s --lang c%s" % (f, allow), "symbolic %s --format json%s" % (f, allow)]
    return out + CASES_EXTRA


TIMING = re.compile(rb'("[a-z_]*seconds[a-z_]*": *)-?[0-9.eE+-]+')


def digest(res):
    """The wall-clock fields ("seconds", "..._seconds") are the one thing that differs run to run."""
    rc, out, err = res
    out = TIMING.sub(rb"\1<time>", out)
    h = hashlib.sha256()
    h.update(b"%d\n" % rc)
    h.update(hashlib.sha256(out).digest())
    h.update(hashlib.sha256(err).digest())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--dump")
    a = ap.parse_args()
    tool = os.path.abspath(a.tool)
    got, refused = cores.loaded_core(tool, KERNEL)
    if got is None or refused or got.lower() != KERNEL.lower() or not cores.runnable(KERNEL, cores.cpu_flags()):
        print("golden: OPENBLAS_CORETYPE=%s cannot be forced here (%s): skipped" % (KERNEL, got))
        return 77
    commands = cases(tool)
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        results = list(ex.map(lambda c: run(tool, c.split()), commands))
    got = {c: digest(r) for c, r in zip(commands, results)}
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for i, (c, r) in enumerate(zip(commands, results)):
            with open(os.path.join(a.dump, "%04d.txt" % i), "wb") as fh:
                fh.write(c.encode() + b"\nexit %d\n--- stdout\n" % r[0] + r[1] + b"\n--- stderr\n" + r[2])
    if a.update:
        with open(HASHES, "w") as fh:
            for c in commands:
                fh.write("%s  %s\n" % (got[c], c))
        print("golden: %d outputs recorded in %s" % (len(commands), os.path.relpath(HASHES, ROOT)))
        return 0
    want = {}
    with open(HASHES) as fh:
        for line in fh:
            h, c = line.rstrip("\n").split("  ", 1)
            want[c] = h
    bad = 0
    for c in commands:
        if c not in want:
            print("NEW      mblin " + c)
            bad += 1
        elif want[c] != got[c]:
            print("CHANGED  mblin " + c)
            bad += 1
    for c in want:
        if c not in got:
            print("MISSING  mblin " + c)
            bad += 1
    print("golden: %d outputs, %d identical, %d differ" % (len(commands), len(commands) - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
