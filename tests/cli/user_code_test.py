#!/usr/bin/env python3
"""Issue 68, item E: --allow-user-code. A model whose file names a shared library under `routines:`
runs that library's code: every command that loads a model refuses it without --allow-user-code,
in one line naming the library's entry (file:line:col), exit 1, and the library is not even loaded
(tests/cli/user_marker.c's constructor leaves a marker file, named by MBLIN_TEST_MARKER, when it
is); with the flag the commands run it. The library's routine is a cubic spring with its partials,
f = -(k x + k3 x^3), under a constant force F0 on a mass m: the equilibrium solves
k x + k3 x^3 = F0 (Cardano's formula here) and the frequency is sqrt((k + 3 k3 x^2) / m).
usage: user_code_test.py PATH_TO_MBLIN PATH_TO_USER_MARKER_LIBRARY (run from the repository root)"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN, LIB = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
M, K, K3, F0 = 2.0, 8.0, 3.0, 5.0

MODEL = """model: dae
name: cubic spring (a user routine)
parameters: {m: %g, k: %g, k3: %g, F0: %g}
coordinates: {x: 0.5}
routines:
  spring:
    library: %s
    routine: cubic_spring
    partials: yes
    inputs: [x, k, k3]
    outputs: [fs]
kinetic_energy: "0.5*m*der(x)^2"
forces: {x: "fs + F0"}
inputs: {u: 0}
outputs: {pos: "x + 0*u"}
"""

# every command that loads a model file, with the arguments it needs to run this one
COMMANDS = [
    ("linearize", []), ("equilibrium", []), ("check", []), ("compare", ["--repeat", "1"]), ("report", []),
    ("sweep", ["--param", "k=6:8:3"]), ("freqresp", ["--from", "u", "--to", "pos", "--w", "1:10:3"]),
    ("sensitivity", []), ("boundary", ["--param", "k", "--near", "8"]), ("simulate", ["--t-end", "0.01"]),
    ("validate", ["--modes", "1", "--periods", "2"]), ("floquet", ["--period", "1"]),
    ("codegen", ["--lang", "c"]), ("symbolic", []),
]


def run(args, marker, cwd=None):
    env = dict(os.environ, MBLIN_TEST_MARKER=marker)
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "spring.yaml")
    with open(model, "w") as f:
        f.write(MODEL % (M, K, K3, F0, LIB))
    marker = os.path.join(tmp, "loaded")
    lib_line = MODEL.split("\n").index("    library: %s") + 1

    # refused without the flag, in every command: one line naming the entry, exit 1, nothing loaded
    for cmd, extra in COMMANDS:
        rc, out, err = run([cmd, model, *extra], marker)
        lines = err.strip().split("\n")
        check(rc == 1, "%s without --allow-user-code exits 1: %d %r" % (cmd, rc, err[-300:]))
        check(len(lines) == 1 and lines[0].startswith("mblin: %s:%d:" % (model, lib_line))
              and "routine 'spring'" in lines[0] and "--allow-user-code" in lines[0],
              "%s: one line naming the library's entry and the option: %r" % (cmd, err[-300:]))
        check(not os.path.exists(marker), "%s without --allow-user-code did not load the library" % cmd)

    # allowed: the library is loaded and the exact linear model is the closed form's
    rc, out, err = run(["linearize", model, "--json", "--allow-user-code"], marker)
    check(rc == 0, "linearize --allow-user-code runs: %d %r" % (rc, err[-300:]))
    check(os.path.exists(marker), "linearize --allow-user-code loaded the library")
    # the equilibrium by Cardano's formula: x^3 + p x + q = 0, p = k/k3 > 0, q = -F0/k3, one real root
    p_, q_ = K / K3, -F0 / K3
    r_ = math.sqrt(q_ * q_ / 4 + p_ ** 3 / 27)
    xs = math.copysign(abs(-q_ / 2 + r_) ** (1 / 3), -q_ / 2 + r_) + math.copysign(abs(-q_ / 2 - r_) ** (1 / 3),
                                                                                   -q_ / 2 - r_)
    omega = math.sqrt((K + 3 * K3 * xs * xs) / M)
    if rc == 0:
        d = json.loads(out)
        q = d["operating_point"]["q"][0]
        check(abs(q - xs) < 1e-10, "the equilibrium solves k x + k3 x^3 = F0: %.15g vs %.15g" % (q, xs))
        ims = sorted(abs(e["im"]) for e in d["eigenvalues"])
        check(len(ims) == 2 and all(abs(w - omega) < 1e-9 * omega for w in ims),
              "the frequency is sqrt((k + 3 k3 x^2)/m) = %.15g: %s" % (omega, ims))

    # the flag in every command: the library is loaded (the marker), and the commands that can
    # run this model run (codegen and symbolic refuse an opaque routine in one line naming it)
    for cmd, extra in COMMANDS:
        if os.path.exists(marker):
            os.unlink(marker)
        rc, out, err = run([cmd, model, *extra, "--allow-user-code"], marker)
        check(os.path.exists(marker), "%s --allow-user-code loaded the library: %r" % (cmd, err[-300:]))
        if cmd in ("codegen", "symbolic"):
            check(rc == 1 and len(err.strip().split("\n")) == 1 and "spring" in err,
                  "%s refuses the opaque routine in one line naming it: %d %r" % (cmd, rc, err[-300:]))
        elif cmd not in ("boundary", "floquet"):
            check(rc == 0, "%s --allow-user-code runs: %d %r" % (cmd, rc, err[-300:]))
        else:  # no boundary (a stable spring), a time-invariant model: whatever they say, not a refusal
            check(rc in (0, 1) and "--allow-user-code" not in err,
                  "%s --allow-user-code is not refused for the permission: %d %r" % (cmd, rc, err[-300:]))

    # a relative library path is the model file's folder's, whatever the working directory
    rel = os.path.join(tmp, "rel.yaml")
    with open(rel, "w") as f:
        f.write(MODEL % (M, K, K3, F0, os.path.relpath(LIB, tmp)))
    os.unlink(marker)
    rc, out, err = run(["equilibrium", rel, "--allow-user-code"], marker, cwd="/")
    check(rc == 0 and os.path.exists(marker), "a relative library path from another folder: %d %r" % (rc, err[-300:]))

    # no environment variable and no key of the file allows user code
    os.unlink(marker)
    env_like = {"MBLIN_ALLOW_USER_CODE": "1", "MBLIN_USER_CODE": "1"}
    p = subprocess.run([MBLIN, "equilibrium", model], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MBLIN_TEST_MARKER=marker, **env_like))
    check(p.returncode == 1 and not os.path.exists(marker), "an environment variable does not allow user code")
    keyed = os.path.join(tmp, "keyed.yaml")
    with open(keyed, "w") as f:
        f.write((MODEL % (M, K, K3, F0, LIB)).replace("routines:\n", "allow_user_code: yes\nroutines:\n"))
    rc, out, err = run(["equilibrium", keyed], marker)
    check(rc == 1 and not os.path.exists(marker) and re.search(r"unknown key 'allow_user_code'", err),
          "a key of the file does not allow user code: %d %r" % (rc, err[-300:]))

    # a model without routines is unchanged by the flag
    a = run(["linearize", "examples/slider_pendulum.yaml", "--json"], marker)
    b = run(["linearize", "examples/slider_pendulum.yaml", "--json", "--allow-user-code"], marker)
    strip = lambda s: re.sub(r'"(seconds|time_s|elapsed)[^,}]*', "", s)  # noqa: E731
    check(a[0] == b[0] == 0 and strip(a[1]) == strip(b[1]), "--allow-user-code changes nothing without routines")
sys.exit(finish("test_cli_user_code"))
