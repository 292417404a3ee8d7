#!/usr/bin/env python3
"""mblin codegen with hostile text (issue 30, items 14 and 18): model file paths that carry code
after a newline, a C comment end, a trigraph or a Python encoding declaration must stay inside the
generated comments; the generated C must compile (cc -std=c11 -Wall -Werror) with the same symbols
as for an ordinary path, the Python must import with the same matrices and the Octave file (when
octave is installed) must run with the same matrices, and no injected code may run (no PWNED file).
--name values that are keywords or names the generated code uses are refused (exit 2, one line).
usage: codegen_inject_test.py PATH_TO_MBLIN (run from the repository root)"""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = os.path.abspath(sys.argv[1])
MODEL = os.path.abspath("examples/slider_pendulum.yaml")


def run(args, cwd=None, timeout=120):
    p = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def python_with_numpy():
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and run([py, "-c", "import numpy"])[0] == 0:
            return py
    return None


PY = python_with_numpy()
CC = shutil.which("cc")
OCTAVE = shutil.which("octave")

# paths whose text would be code once out of its comment; directories make the '/' of "*/"
HOSTILE = [
    ["x\nimport os; os.system('touch PWNED')\n#.yaml"],
    ["x\rimport os; os.system('touch PWNED')\r.yaml"],
    ["x\nsystem('touch PWNED');\n%.yaml"],
    ["a*", " int pwned = 1; ", "*", "m.yaml"],
    ["b", "*", "int pwned2 = 1; void f(void) {} ", "*", "m.yaml"],
    ["c??", "\nint pwned3 = 1;\n.yaml"],
    ["d\\", "\nint pwned4 = 1;\n.yaml"],
    ["# coding:utf-7 +AAo-import os+ADs- os.system('touch PWNED')+AAo-.yaml"],
    ["e\u2028import os; os.system('touch PWNED')\u2029\x85.yaml"],
]

PY_MAIN = ("import importlib.util, json, sys\n"
           "s = importlib.util.spec_from_file_location('gen', sys.argv[1]); m = importlib.util.module_from_spec(s)\n"
           "s.loader.exec_module(m)\n"
           "print(json.dumps({k: v.tolist() for k, v in m.gen().items()}))\n")


def generate(td, path, lang, out):
    return run([MBLIN, "codegen", path, "--lang", lang, "--name", "gen", "-o", out], cwd=td)


def c_symbols(obj):
    rc, out, _ = run(["nm", "-g", obj])
    return sorted(l.split()[-1] for l in out.splitlines() if l.strip()) if rc == 0 else None


def python_result(td, src):
    rc, out, err = run([PY, MAIN_PY, src], cwd=td)
    return out if rc == 0 else "error: " + err


def octave_result(td, mfile):
    d = os.path.dirname(mfile)
    rc, out, err = run([OCTAVE, "--no-gui", "--no-window-system", "--norc", "-q", "--eval",
                        "[A, B, C, D, M, Cd, K, F] = gen(); printf('%.17g ', [A(:); B(:); C(:); D(:); K(:)]);"],
                       cwd=d, timeout=300)
    return out if rc == 0 else "error: " + err


with tempfile.TemporaryDirectory() as td:
    MAIN_PY = os.path.join(td, "_main.py")
    with open(MAIN_PY, "w") as f:
        f.write(PY_MAIN)
    # the reference: the same model under an ordinary path
    ref_dir = os.path.join(td, "ref")
    os.mkdir(ref_dir)
    shutil.copy(MODEL, os.path.join(ref_dir, "plain.yaml"))
    ref = {}
    rc, _, err = generate(ref_dir, "plain.yaml", "c", "gen.c")
    check(rc == 0, "codegen C of the plain path: " + err)
    if CC and rc == 0:
        rc, _, err = run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "gen.c", "-o", "gen.o"], cwd=ref_dir)
        check(rc == 0, "plain C compiles: " + err)
        ref["c"] = c_symbols(os.path.join(ref_dir, "gen.o"))
    rc, _, err = generate(ref_dir, "plain.yaml", "python", "gen.py")
    check(rc == 0, "codegen Python of the plain path: " + err)
    if PY and rc == 0:
        ref["py"] = python_result(ref_dir, os.path.join(ref_dir, "gen.py"))
        check(not ref["py"].startswith("error"), "plain Python imports: " + ref["py"])
    if OCTAVE:
        os.mkdir(os.path.join(ref_dir, "oct"))
        rc, _, err = generate(ref_dir, "plain.yaml", "octave", os.path.join("oct", "gen.m"))
        check(rc == 0, "codegen Octave of the plain path: " + err)
        ref["oct"] = octave_result(td, os.path.join(ref_dir, "oct", "gen.m"))
        check(not ref["oct"].startswith("error"), "plain Octave runs: " + ref["oct"])

    for k, parts in enumerate(HOSTILE):
        case = os.path.join(td, "case%d" % k)
        os.makedirs(os.path.join(case, *parts[:-1]))
        rel = os.path.join(*parts)
        shutil.copy(MODEL, os.path.join(case, rel))
        what = "hostile path %r" % rel
        for lang, out in (("c", "gen.c"), ("python", "gen.py"), ("octave", os.path.join("oct", "gen.m"))):
            os.makedirs(os.path.join(case, "oct"), exist_ok=True)
            rc, _, err = generate(case, rel, lang, out)
            check(rc == 0, "%s: codegen --lang %s: %s" % (what, lang, err))
        src = open(os.path.join(case, "gen.c"), encoding="latin-1").read()
        head = src[:src.index("*/")] if "*/" in src else src
        check("pwned" not in src[len(head):], what + ": C: the path stays inside the header comment")
        if CC and "c" in ref:
            rc, _, err = run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "gen.c", "-o", "gen.o"], cwd=case)
            check(rc == 0, what + ": the C compiles with -Werror: " + err)
            syms = c_symbols(os.path.join(case, "gen.o")) if rc == 0 else None
            check(syms == ref["c"], "%s: the C defines the same symbols %s as for a plain path: %s" %
                  (what, ref["c"], syms))
        if PY and "py" in ref:
            res = python_result(case, os.path.join(case, "gen.py"))
            check(res == ref["py"], what + ": the Python imports and gives the plain path's matrices: " + res[:300])
        if OCTAVE and "oct" in ref and k in (0, 2, 3):
            res = octave_result(case, os.path.join(case, "oct", "gen.m"))
            check(res == ref["oct"], what + ": the Octave runs and gives the plain path's matrices: " + res[:300])
        pwned = [os.path.join(dp, f) for dp, _, fs in os.walk(case) for f in fs if f == "PWNED"]
        check(not pwned and not os.path.exists("PWNED"), what + ": no injected code ran: %s" % pwned)

    # --- --name: keywords and names the generated code uses are refused with one line, exit 2 ---
    for lang, name, why in (("python", "def", "Python keyword"), ("python", "np", "uses itself"),
                            ("python", "numpy", "uses itself"), ("python", "math", "uses itself"),
                            ("c", "int", "C keyword"), ("c", "def", None), ("c", "np", "uses itself"),
                            ("c", "sin", "uses itself"), ("octave", "end", "Octave/MATLAB keyword"),
                            ("octave", "zeros", "uses itself"), ("octave", "_f", "not an identifier"),
                            ("python", "t12", "uses itself"), ("c", "a b", "not an identifier"),
                            ("python", "a\nimport os", "not an identifier"), ("c", "", "empty"),
                            ("python", "_f", None), ("octave", "int", None)):
        rc, out, err = run([MBLIN, "codegen", MODEL, "--lang", lang, "--name", name])
        lines = err.strip().split("\n")
        if why is None:
            check(rc == 0 and err == "" and out, "--lang %s --name %r is accepted: %s" % (lang, name, err))
        else:
            check(rc == 2 and len(lines) == 1 and lines[0].startswith("mblin: ") and why in lines[0] and out == "",
                  "--lang %s --name %r refused in one line (%s): rc %d %s" % (lang, name, why, rc, err))
    # an accepted name that is a keyword elsewhere still compiles / imports in its own language
    if CC:
        with tempfile.TemporaryDirectory() as t2:
            rc, _, err = run([MBLIN, "codegen", MODEL, "--lang", "c", "--name", "def", "-o", "def.c"], cwd=t2)
            rc2, _, err2 = run([CC, "-std=c11", "-Wall", "-Werror", "-c", "def.c"], cwd=t2)
            check(rc == 0 and rc2 == 0, "--lang c --name def compiles: " + err + err2)

sys.exit(finish("codegen_inject", " (cc %s, python %s, octave %s)" % (CC or "absent", PY or "absent", OCTAVE or "absent (skipped)")))
