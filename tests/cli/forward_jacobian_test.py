#!/usr/bin/env python3
"""Issue 31, item 2 (issue 34, item 5): `mblin linearize` (and equilibrium, check, compare, report)
loads the model with the residual Jacobian's values by forward-mode sweeps of the residual tape (no
symbolic Jacobian); `--symbolic-jacobian` builds it symbolically, `--forward-jacobian` is the default.
- A pendulum as a DAE (x, y, the rod x^2 + y^2 = l^2): sqrt(g/l) in every method, both ways.
- The four-bar (N = 5), the nonlinear Whipple bicycle and the quarter car with measured curves: A
  and the eigenvalues of the default equal --symbolic-jacobian's to rounding (1e-12 of the largest
  entry and of |s|), and --forward-jacobian's bit for bit.
- equilibrium and check take both options; sweep takes neither (a usage error: exit 2, one line).
usage: forward_jacobian_test.py PATH_TO_MBLIN"""
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def eig(js):
    return sorted((e["re"], e["im"]) for e in js["eigenvalues"])


td = tempfile.mkdtemp()
path = os.path.join(td, "pendulum.yaml")
m, l, g = 1.3, 0.7, 9.81
with open(path, "w") as f:
    f.write("model: dae\nparameters: {m: %g, l: %g, g: %g}\ncoordinates: {x: 0.0, y: -0.7}\n"
            "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
            "constraints: {rod: \"x^2 + y^2 - l^2\"}\nlinearize: {at: equilibrium}\n" % (m, l, g))
w = math.sqrt(g / l)
for method in ("augmented", "projection", "descriptor"):
    for opt in ((), ("--symbolic-jacobian",)):
        rc, out, err = run("linearize", path, "--method", method, "--json", *opt)
        check(rc == 0, "%s %s: exit %d: %s" % (method, opt, rc, err.strip()))
        if rc == 0:
            im = max(e["im"] for e in json.loads(out)["eigenvalues"])
            check(abs(im - w) <= 1e-12 * w, "%s %s: omega %.17g, sqrt(g/l) = %.17g" % (method, opt, im, w))

for model in ("examples/fourbar_N5.yaml", "examples/whipple_bicycle_nonlinear.yaml", "examples/data/quarter_car.yaml"):
    rc0, out0, err0 = run("linearize", model, "--json", "--symbolic-jacobian")
    rc1, out1, err1 = run("linearize", model, "--json")
    rc2, out2, err2 = run("linearize", model, "--json", "--forward-jacobian")
    check(rc2 == rc1 and out2 == out1, "%s: --forward-jacobian differs from the default" % model)
    check(rc0 == 0 and rc1 == 0, "%s: exit %d, %d: %s" % (model, rc0, rc1, err1.strip()))
    if rc0 or rc1:
        continue
    a, b = json.loads(out0), json.loads(out1)
    A0, A1 = a["ss"]["A"], b["ss"]["A"]
    big = max(abs(x) for row in A0 for x in row)
    d = max(abs(x - y) for r0, r1 in zip(A0, A1) for x, y in zip(r0, r1))
    check(len(A0) == len(A1) and d <= 1e-12 * big, "%s: A differs by %.3g (largest %.3g)" % (model, d, big))
    e0, e1 = eig(a), eig(b)
    de = max(math.hypot(x[0] - y[0], x[1] - y[1]) / max(1.0, math.hypot(*x)) for x, y in zip(e0, e1))
    check(len(e0) == len(e1) and de <= 1e-12, "%s: eigenvalues differ by %.3g" % (model, de))

for cmd in ("equilibrium", "check"):
    rc0, out0, err0 = run(cmd, path, "--symbolic-jacobian")
    rc1, out1, err1 = run(cmd, path)
    check(rc0 == 0 and rc1 == 0, "%s: exit %d, %d: %s %s" % (cmd, rc0, rc1, err0.strip(), err1.strip()))
rc, out, err = run("sweep", path, "--param", "m=1:2:3", "--symbolic-jacobian")
check(rc == 2 and len(err.strip().splitlines()) == 1 and "--symbolic-jacobian" in err,
      "sweep --symbolic-jacobian: exit %d, %r" % (rc, err))
rc, out, err = run("linearize", "--help")
check(rc == 0 and "--symbolic-jacobian" in out, "linearize --help lists --symbolic-jacobian")
sys.exit(finish("forward_jacobian"))
