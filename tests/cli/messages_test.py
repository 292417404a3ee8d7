#!/usr/bin/env python3
"""Issue 33, item 6: messages that say what is wrong and what to do.
- A model with redundant constraints: augmented (the default) refuses it naming the rank
  deficiency and advising the methods that take it, as partition does; the advice is right
  (nullspace then gives the pendulum's sqrt(g/L)).
- A kinetic energy without der(): every method, a sweep and sensitivity say that M = d2T/dv2 is zero and name
  the kinetic_energy's line and column (not "augmented matrix singular"); equilibrium still works.
usage: messages_test.py PATH_TO_MBLIN"""
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


def one_line(rc, err, code, *needles):
    lines = err.strip().split("\n")
    return rc == code and len(lines) == 1 and lines[0].startswith("mblin: ") and all(n in lines[0] for n in needles)


td = tempfile.mkdtemp()
L, g = 1.3, 9.81
red = os.path.join(td, "redundant.yaml")
with open(red, "w") as f:  # a pendulum whose length constraint is written twice
    f.write("model: dae\nparameters: {m: 1, L: %g, g: %g}\ncoordinates: {x: 0.1, y: -1.2}\n"
            "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\npotential_energy: \"m*g*y\"\n"
            "constraints:\n  - \"x^2 + y^2 = L^2\"\n  - \"2*x^2 + 2*y^2 = 2*L^2\"\nlinearize: {at: equilibrium}\n" % (L, g))
for method in ("augmented", "partition", "projection", "fd"):
    rc, out, err = run("linearize", red, "--method", method)
    check(one_line(rc, err, 1, "rank deficiency" if method == "augmented" else "rank 1 < 2", "redundant constraints",
                   "nullspace", "descriptor", "penalty"),
          "%s on redundant constraints: the advice of the methods that take them: %r" % (method, err))
for method in ("nullspace", "descriptor", "penalty"):  # the advice holds
    rc, out, err = run("linearize", red, "--method", method, "--json")
    w = [abs(e["im"]) for e in json.loads(out)["eigenvalues"]] if rc == 0 else []
    check(rc == 0 and w and abs(max(w) - math.sqrt(g / L)) < 1e-6 * math.sqrt(g / L),
          "%s takes the redundant pendulum: omega = sqrt(g/L) = %.9g, got %s %s" % (method, math.sqrt(g / L), w, err))

nod = os.path.join(td, "no_der.yaml")
text = ("model: dae\nparameters: {m: 1, k: 4}\ncoordinates: {x: 0.1, y: 0}\n"
        "kinetic_energy: \"0.5*m*x^2\"\npotential_energy: \"0.5*k*x^2 + 0.5*k*y^2\"\nlinearize: {at: equilibrium}\n")
with open(nod, "w") as f:
    f.write(text)
line = 4
col = text.splitlines()[line - 1].index('0.5*m') + 1  # the expression's first character
where = "kinetic_energy (line %d, column %d)" % (line, col)
for method in ("augmented", "partition", "nullspace", "projection", "descriptor", "penalty", "fd"):
    rc, out, err = run("linearize", nod, "--method", method)
    check(one_line(rc, err, 1, nod, where, "M = d2T/dv2 is zero", "2 degree(s) of freedom") and "singular" not in err,
          "%s: a kinetic energy without der() named: %r" % (method, err))
rc, out, err = run("sweep", nod, "--param", "k=1:2:3")
check(rc == 1 and where in err and "M = d2T/dv2 is zero" in err, "sweep: the same message: %r" % err)
rc, out, err = run("sensitivity", nod)
check(one_line(rc, err, 1, nod, where, "M = d2T/dv2 is zero"), "sensitivity: the same message: %r" % err)
rc, out, err = run("equilibrium", nod, "--json")
check(rc == 0 and abs(json.loads(out)["operating_point"]["q"][0]) < 1e-12, "equilibrium needs no inertia: " + err)

sys.exit(finish("messages_test"))
