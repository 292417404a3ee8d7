#!/usr/bin/env python3
"""Issue 33, item 6: the command line's conventions. A usage error (an option naming a parameter,
coordinate, input or mode the model lacks, like an unknown option) exits 2 with one line, in every
command that takes such an option; a failure of the model or the computation exits 1; every long
option that takes a value takes it joined by '=' as well (--opt=VALUE, as getopt_long does).
usage: conventions_test.py PATH_TO_MBLIN (run from the repository root)"""
import subprocess
import sys
import tempfile
import os
import json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def one_line(rc, err, code, needle):
    lines = err.strip().split("\n")
    return rc == code and len(lines) == 1 and lines[0].startswith("mblin: ") and needle in lines[0]


def untimed(d):
    """d without its wall-clock times (keys time*, seconds*)"""
    if isinstance(d, dict):
        return {k: untimed(v) for k, v in d.items() if not k.startswith(("time", "seconds"))}
    if isinstance(d, list):
        return [untimed(v) for v in d]
    return d


SP = "examples/slider_pendulum.yaml"  # parameters m1, m2, l, k, c, g; coordinates x, y (..); input F
BIKE = "examples/whipple_bicycle.yaml"
td = tempfile.mkdtemp()

# --- an option naming what the model lacks: exit 2 (usage), every command that takes it ---
usage = [
    (["linearize", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["equilibrium", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["check", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["compare", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["report", SP, "--set", "nosuch=1", "-o", os.path.join(td, "r.html")], "no parameter 'nosuch'"),
    (["codegen", SP, "--lang", "c", "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["symbolic", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["symbolic", SP, "--params", "nosuch"], "no parameter 'nosuch'"),
    (["sweep", SP, "--param", "c=0:1:3", "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["sweep", SP, "--param", "nosuch=0:1:3"], "no parameter 'nosuch'"),
    (["freqresp", BIKE, "--from", "Tdelta", "--to", "lean", "--w", "1:10:5", "--set", "nosuch=1"],
     "no parameter 'nosuch'"),
    (["freqresp", BIKE, "--from", "Tx", "--to", "lean", "--w", "1:10:5"], "no input 'Tx'"),
    (["sensitivity", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["sensitivity", SP, "--wrt", "nosuch"], "no parameter 'nosuch'"),
    (["sensitivity", SP, "--shape", "nosuch=1"], "no coordinate 'nosuch'"),
    (["boundary", SP, "--param", "k", "--near", "20", "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["boundary", SP, "--param", "nosuch", "--near", "20"], "no parameter 'nosuch'"),
    (["boundary", SP, "--param", "k", "--near", "20", "--mode", "99"], "mode 99"),
    (["simulate", SP, "--t-end", "0.1", "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["simulate", SP, "--t-end", "0.1", "--guess", "nosuch=1"], "no coordinate named 'nosuch'"),
    (["simulate", SP, "--t-end", "0.1", "--input", "nosuch=1"], "input 'nosuch'"),
    (["simulate", SP, "--t-end", "0.1", "--set-initial", "nosuch=1"], "'nosuch'"),
    (["simulate", SP, "--t-end", "0.1", "--perturb", "99:0.01"], "mode 99"),
    (["validate", SP, "--set", "nosuch=1"], "no parameter 'nosuch'"),
    (["linearize", SP, "--guess", "nosuch=1"], "no coordinate named 'nosuch'"),
    (["linearize", SP, "--method", "nosuch"], "unknown linearization method"),
]
for args, needle in usage:
    rc, out, err = run(*args)
    check(one_line(rc, err, 2, needle), "%s: exit 2 with '%s', got %d %r" % (" ".join(args), needle, rc, err))
# a failure of the model itself stays exit 1
rc, out, err = run("linearize", "no/such/model.yaml")
check(one_line(rc, err, 1, "no/such/model.yaml"), "a missing model file: exit 1, got %d %r" % (rc, err))
rc, out, err = run("linearize", "examples/fourbar_singular.yaml")
check(one_line(rc, err, 1, "singular configuration"), "a singular configuration: exit 1, got %d %r" % (rc, err))

# --- --opt=VALUE is --opt VALUE in the commands cli_test.py does not cover ---
for cmd, spaced, joined in (
        ("simulate", ["--t-end", "0.05", "--rtol", "1e-7", "--set", "c=5", "--json"],
         ["--t-end=0.05", "--rtol=1e-7", "--set=c=5", "--json"]),
        ("boundary", ["--param", "c", "--near", "-1", "--range", "-2:2", "--json"],
         ["--param=c", "--near=-1", "--range=-2:2", "--json"]),
        ("compare", ["--repeat", "1", "--at", "equilibrium", "--json"], ["--repeat=1", "--at=equilibrium", "--json"]),
        ("check", ["--set", "k=3", "--guess", "y=0.1"], ["--set=k=3", "--guess=y=0.1"])):
    a = run(cmd, SP, *spaced)
    b = run(cmd, SP, *joined)
    same = a[0] == b[0] and a[2] == b[2]
    if cmd in ("simulate", "compare"):  # the timings differ between runs: compared without them
        same = same and untimed(json.loads(a[1] or "{}")) == untimed(json.loads(b[1] or "{}"))
    else:
        same = same and a[1] == b[1]
    check(a[0] == 0 and same, "%s %s is %s: %s | %s" % (cmd, " ".join(joined), " ".join(spaced), a[2], b[2]))
rc1, o1, e1 = run("freqresp", BIKE, "--from", "Tdelta", "--to", "lean", "--w", "1:10:5", "--max-points", "10")
rc2, o2, e2 = run("freqresp", BIKE, "--from=Tdelta", "--to=lean", "--w=1:10:5", "--max-points=10")
check(rc1 == 0 and (rc1, o1, e1) == (rc2, o2, e2), "freqresp --from=..: " + e2)
rc1, o1, e1 = run("validate", SP, "--modes", "1", "--periods", "3", "--samples", "16")
rc2, o2, e2 = run("validate", SP, "--modes=1", "--periods=3", "--samples=16")
check(rc1 == 0 and rc1 == rc2 and e1 == e2 and len(o1.splitlines()) == len(o2.splitlines()), "validate --modes=1: " + e2)

sys.exit(finish("conventions_test"))
