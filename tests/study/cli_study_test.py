#!/usr/bin/env python3
"""The command line of `mblin sensitivity` and `mblin boundary`: results, JSON, exit codes and
one-line diagnostics. usage: cli_study_test.py PATH_TO_MBLIN (run from the repository root)"""
import json, math
import subprocess
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def one_line_error(rc, err, code, *needles):
    lines = err.strip().split("\n")
    ok = rc == code and len(lines) == 1 and lines[0].startswith("mblin: ")
    return ok and all(n in lines[0] for n in needles)


# sensitivity: JSON on the slider-pendulum, c = 20 (source 003 Appendix errata value)
rc, out, err = run("sensitivity", "examples/slider_pendulum.yaml", "--set", "c=20", "--wrt", "c,k", "--json")
check(rc == 0 and err == "", "sensitivity --json exit 0, quiet stderr")
d = json.loads(out) if rc == 0 else {}
check(d.get("parameters") == ["c", "k"], "sensitivity: parameters listed in --wrt order")
m = [x for x in d.get("modes", []) if abs(x["im"] - 0.747815) < 1e-5]
check(len(m) == 1 and abs(m[0]["d"][0]["re"] + 1.665e-2) < 5e-6 and abs(m[0]["d"][0]["im"] + 5.516e-3) < 5e-7,
      "sensitivity: d lambda/dc = -1.665e-2 - 5.516e-3i")
check(len(m) == 1 and len(m[0]["d"][0]["shape_re"]) == 2, "sensitivity: shape derivatives in the JSON")
# the table
rc, out, err = run("sensitivity", "examples/whipple_bicycle.yaml", "--wrt", "v")
check(rc == 0 and "d/d v" in out and "d damping/dp" in out, "sensitivity table")
# zero modes: null in the JSON
rc, out, err = run("sensitivity", "examples/rotating_pendulum_steady.yaml", "--json", "--no-shapes")
d = json.loads(out) if rc == 0 else {}
z = [x for x in d.get("modes", []) if not x["defined"]]
check(rc == 0 and len(z) == 2 and z[0]["d"][0]["re"] is None, "sensitivity: zero modes not defined (null)")
# a simple zero (a damped free slider, c = 3, k = 0; issue 65, item 9): its eigenvalue has a
# derivative, d s/d k = -1/c (s = -k/c to first order: the free slider's zero becomes a slow decay as
# the spring appears), but |s| and -Re s / |s| have none at s = 0: the table says so instead of nan,
# the JSON gives null for them
rc, out, err = run("sensitivity", "examples/slider_pendulum.yaml", "--set", "c=3", "--set", "k=0", "--wrt", "k")
row = [ln for ln in out.splitlines() if ln.strip().startswith("1 ")]
check(rc == 0 and "nan" not in out and len(row) == 1 and "(zero mode: d freq, d damping not defined)" in row[0]
      and abs(float(row[0].split()[3]) - (-1.0 / 3.0)) <= 1e-5, f"sensitivity: a simple zero's row {row}")
rc, out, err = run("sensitivity", "examples/slider_pendulum.yaml", "--set", "c=3", "--set", "k=0", "--wrt", "k", "--json")
z = [x for x in json.loads(out)["modes"] if x["kind"] == "zero"] if rc == 0 else []
check(len(z) == 1 and z[0]["defined"] and abs(z[0]["d"][0]["re"] + 1.0 / 3.0) <= 1e-9 * 3
      and z[0]["d"][0]["freq_hz"] is None and z[0]["d"][0]["damping_ratio"] is None,
      "sensitivity --json: a simple zero's d re = -1/c, d freq and d damping null")

# bad input
rc, out, err = run("sensitivity", "examples/slider_pendulum.yaml", "--wrt", "mass")
check(one_line_error(rc, err, 2, "no parameter 'mass'"), "sensitivity: unknown parameter, one line, exit 2 (usage)")
# spinning Euler parameters: the pencil in the file's user states; the forward whirl's
# d w/d Omega = Ip w / (2 Id w - Ip Omega) (Id w^2 - Ip Omega w - 2 k a^2 = 0)
rc, out, err = run("sensitivity", "examples/mech/rigid_rotor.yaml", "--wrt", "Omega", "--json", "--no-shapes")
d = json.loads(out) if rc == 0 else {}
wf = (0.6 * 50 + math.sqrt(0.36 * 2500 + 4 * 1.5 * 12500)) / 3
fw = [x for x in d.get("modes", []) if abs(x["im"] - wf) < 1e-9 * wf]
check(rc == 0 and len(fw) == 1 and abs(fw[0]["d"][0]["im"] - 0.6 * wf / (3 * wf - 0.6 * 50)) < 1e-11,
      f"sensitivity: spinning Euler-parameter rotor: {err} {fw}")
rc, out, err = run("sensitivity", "examples/slider_pendulum.yaml", "--bogus")
check(one_line_error(rc, err, 2, "unknown option"), "sensitivity: unknown option, exit 2")
rc, out, err = run("sensitivity")
check(one_line_error(rc, err, 2, "needs a MODEL"), "sensitivity: no model, exit 2")

# boundary: the Whipple bicycle's weave and capsize speeds (Meijaard et al. 2007)
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4.3", "--json")
d = json.loads(out) if rc == 0 else {}
check(rc == 0 and abs(d.get("value", 0) - 4.29238253634111) < 1e-10, "boundary: weave speed 4.292382")
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "6")
check(rc == 0 and out.startswith("v = 6.024262015 (+-"), "boundary: capsize speed 6.024262 (table)")
# the digits the tolerance leaves (issue 65, item 20): with --tol 1e-6 the weave 4.29238253634111
# to 6 digits, its error below one unit in the last (4.3e-6 < 1e-5); the refinement's detail (the
# bracket, the work, the last step) only under --verbose
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4.3", "--tol", "1e-6")
check(rc == 0 and out.startswith("v = 4.29238 (+-4.3e-06)\n") and "bracket" not in out and "last step" not in out,
      "boundary: 6 digits at --tol 1e-6, no refinement detail (%r)" % out)
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4.3", "--verbose")
check(rc == 0 and out.startswith("v = 4.292382536 (+-4.3e-10)\n") and "bracket [" in out and "last step" in out,
      "boundary --verbose: 10 digits at the default 1e-10, the bracket and the last step (%r)" % out)
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "speed", "--near", "4.3")
check(one_line_error(rc, err, 2, "no parameter 'speed'"), "boundary: unknown parameter, exit 2 (usage)")
rc, out, err = run("boundary", "examples/slider_pendulum.yaml", "--set", "c=20", "--param", "k", "--near", "20")
check(one_line_error(rc, err, 1, "no boundary for k in [6.66667, 60]"), "boundary: none in the range searched, named")
rc, out, err = run("boundary", "tests/study/boundaries/ziegler_column.yaml", "--param", "P", "--near", "20", "--range", "5:30")
check(one_line_error(rc, err, 1, "no boundary for P in [5, 30]"), "boundary: none in --range, named")
rc, out, err = run("boundary", "tests/study/boundaries/ziegler_column.yaml", "--param", "P", "--near", "20", "--range", "30:5")
check(one_line_error(rc, err, 2, "--range"), "boundary: bad --range, exit 2")
rc, out, err = run("boundary", "tests/study/boundaries/ziegler_column.yaml", "--param", "P", "--near", "59", "--range", "30:60")
check(rc == 0 and out.startswith("P = 41.71572875 (+-") and "flutter beyond" in out, "boundary: Ziegler's column from above")
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4", "--tol", "2")
check(one_line_error(rc, err, 2, "--tol"), "boundary: bad --tol, exit 2")
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4", "--order", "-1")
check(one_line_error(rc, err, 2, "--order"), "boundary: a negative --order, exit 2")
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v")
check(one_line_error(rc, err, 2, "--near"), "boundary: --near missing, exit 2")
rc, out, err = run("boundary", "examples/whipple_bicycle.yaml", "--param", "v", "--near", "4", "--mode", "9")
check(one_line_error(rc, err, 2, "mode 9"), "boundary: a mode the model does not have (usage, exit 2)")

sys.exit(finish("cli_study"))
