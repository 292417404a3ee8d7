#!/usr/bin/env python3
"""`mblin symbolic` and `mblin codegen` with user ODE states (issue 30, item 4).

Before the fix both dropped the ODE states: the DC motor's current disappeared (A 2 x 2, the
voltage's column of B zero, the output `cur` zero). Here A, B, C, D of `symbolic --format json`
(the expression strings evaluated at the point's values) and of the generated C are compared
with `mblin linearize --json` at the same parameters (the augmented method, an independent route),
and the DC motor's current row with its closed form L i' = V - R i - Ke phi'. A model with an ODE
state and an implicit variable at a steady motion (examples/ode/arm_friction_of_reaction.yaml) is
compared with linearize and with the closed form of its comment.

usage: symbolic_ode_test.py path/to/mblin
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

MBLIN = sys.argv[1]
TOL = 1e-12  # relative to each matrix's largest entry
FAILS = []
CC = shutil.which("cc")
# a driver for the generated C: the matrices at the model's values (NAME_P, NAME_Q, NAME_R), as JSON
DRIVER = r"""
#include <stdio.h>
extern const double linear_model_P[], linear_model_Q[], linear_model_R[]%(vdecl)s;
void linear_model(const double *p, const double *q, %(varg)sconst double *r, double *A, double *B, double *C,
                  double *D, double *M, double *Cd, double *K, double *F);
static void put(const char *nm, const double *X, int rows, int cols, int last)
{
    printf("\"%%s\": [", nm);
    for (int i = 0; i < rows; i++) {
        printf("%%s[", i ? ", " : "");
        for (int j = 0; j < cols; j++) printf("%%s%%.17g", j ? ", " : "", X[i + j * rows]);
        printf("]");
    }
    printf("]%%s", last ? "}\n" : ", ");
}
int main(void)
{
    static double A[%(nx)d * %(nx)d + 1], B[%(nx)d * %(nr)d + 1], C[%(ny)d * %(nx)d + 1], D[%(ny)d * %(nr)d + 1];
    static double M[1024], Cd[1024], K[1024], F[1024];
    linear_model(linear_model_P, linear_model_Q, %(vval)slinear_model_R, A, B, C, D, M, Cd, K, F);
    printf("{");
    put("A", A, %(nx)d, %(nx)d, 0);
    put("B", B, %(nx)d, %(nr)d, 0);
    put("C", C, %(ny)d, %(nx)d, 0);
    put("D", D, %(ny)d, %(nr)d, 1);
    return 0;
}
"""


def run(args, ok=True):
    p = subprocess.run([MBLIN] + args, capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        raise SystemExit(f"mblin {' '.join(args)} failed: {p.stderr}")
    return p


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def evaluate(text, env):
    """an expression string of mblin's syntax at the values env (der(x) and names)"""
    py = re.sub(r"der\((\w+)\)", r"der_\1", text).replace("^", "**")
    return float(eval(py, {"__builtins__": {}}, dict(env, sin=math.sin, cos=math.cos, tan=math.tan,
                                                     sqrt=math.sqrt, exp=math.exp, log=math.log)))


def compare(name, got, ref, what):
    rows, cols = len(ref), len(ref[0]) if ref else 0
    check(len(got) == rows and all(len(r) == cols for r in got),
          f"{what}: {name} is {len(got)} x {len(got[0]) if got else 0}, linearize's {rows} x {cols}")
    if len(got) != rows:
        return 0.0
    scale = max([abs(x) for r in ref for x in r] + [1e-300])
    if not rows or not cols:
        return 0.0
    dev = max([abs(got[i][j] - ref[i][j]) for i in range(rows) for j in range(min(cols, len(got[i])))] + [0.0])
    check(dev <= TOL * scale, f"{what}: {name} deviates {dev:.3g} (scale {scale:.3g}) from linearize")
    return dev / scale


def one(model, sets):
    setargs = sum((["--set", s] for s in sets), [])
    what = model + " " + " ".join(sets)
    lin = json.loads(run(["linearize", model, "--json"] + setargs).stdout)
    sym = json.loads(run(["symbolic", model, "--format", "json"] + setargs).stdout)
    op = lin["operating_point"]
    # parameter values: the file's, with the --set ones
    pvals = {}
    txt = open(model).read()
    for k, v in re.findall(r"(\w+): ([-0-9.e]+)", re.search(r"parameters: \{([^}]*)\}", txt).group(1)):
        pvals[k] = float(v)
    for s in sets:
        k, v = s.split("=")
        pvals[k] = float(v)
    env = dict(pvals)
    env.update(zip(op["coordinates"], op["q"]))
    env.update(zip(op["ode_states"], op["X"]))
    env.update(zip(op["implicit_variables"], op["Z"]))
    env.update(("der_" + c, v) for c, v in zip(op["coordinates"], op["v"]))
    env.update(zip(op["input_names"], op["inputs"]))
    check(sym.get("ode_states") == op["ode_states"] + op["implicit_variables"], f"{what}: ode_states {sym.get('ode_states')}")
    check(sym["states"] == lin["states"] + lin["velocity_states"] + lin["ode_states"] or
          sym["states"][-len(op["ode_states"]):] == op["ode_states"], f"{what}: states {sym['states']}")
    worst = 0.0
    for key in "ABCD":
        got = [[evaluate(e, env) for e in row] for row in sym[key]]
        worst = max(worst, compare(key, got, lin["ss"][key], what + " (symbolic)"))
    # the generated C (q = [coordinates; ODE states]) run at the model's values
    if CC:
        with tempfile.TemporaryDirectory() as d:
            run(["codegen", model, "--lang", "c", "-o", os.path.join(d, "gen.c")] + setargs)
            nx, nr, ny = len(lin["ss"]["A"]), len(lin["ss"]["B"][0]), len(lin["ss"]["C"])
            with open(os.path.join(d, "main.c"), "w") as f:
                mv = "velocity_values" in sym
                f.write(DRIVER % {"nx": nx, "nr": nr, "ny": ny, "vdecl": ", linear_model_V[]" if mv else "",
                                  "varg": "const double *v, " if mv else "", "vval": "linear_model_V, " if mv else ""})
            cc = subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-o", os.path.join(d, "run"),
                                 os.path.join(d, "gen.c"), os.path.join(d, "main.c"), "-lm"],
                                capture_output=True, text=True)
            check(cc.returncode == 0, f"{what}: generated C does not compile: {cc.stderr}")
            if cc.returncode == 0:
                res = json.loads(subprocess.run([os.path.join(d, "run")], capture_output=True, text=True).stdout)
                for key in "ABCD":
                    worst = max(worst, compare(key, res[key], lin["ss"][key], what + " (codegen C)"))
    return sym, env, worst


def main():
    worst = 0.0
    dc = "examples/ode/dc_motor_pendulum.yaml"
    for sets in ([], ["L=0.25", "R=3.5", "Ke=0.45", "m=2.5"], ["g=3.7", "Kt=0.8"]):
        sym, env, w = one(dc, sets)
        worst = max(worst, w)
        # closed form: L i' = V - R i - Ke phi', torque Kt i on m l^2 phi''
        A = [[evaluate(e, env) for e in row] for row in sym["A"]]
        B = [[evaluate(e, env) for e in row] for row in sym["B"]]
        L, R, Ke, Kt, m, l = (env[k] for k in ("L", "R", "Ke", "Kt", "m", "l"))
        for got, ref, nm in ((A[2], [0.0, -Ke / L, -R / L], "A row i"), (B[2], [1.0 / L, 0.0], "B row i"),
                             ([A[1][2]], [Kt / (m * l * l)], "A(phi'', i)")):
            check(all(abs(g - r) <= 1e-14 * max(1.0, abs(r)) for g, r in zip(got, ref)),
                  f"{dc} {sets}: {nm} {got} != closed form {ref}")
        check(sym["C"] == [["0", "0", "1"]], f"{dc} {sets}: C {sym['C']} (cur = i)")
    for sets in ([], ["Kp=55", "tau=0.05", "M=1.7"]):
        worst = max(worst, one("examples/ode/cart_pd_controller.yaml", sets)[2])
    # a steady motion with an implicit variable from a multiplier (friction of the reaction)
    arm = "examples/ode/arm_friction_of_reaction.yaml"
    for sets in ([], ["k=55", "muf=0.35", "tau=0.08", "m=1.2"]):
        sym, env, w = one(arm, sets)
        worst = max(worst, w)
        # closed form (the file's comment): A = [0 1 0; -(k/m - Omega^2) 0 -muf/m; 0 2 m Omega/tau -1/tau]
        A = [[evaluate(e, env) for e in row] for row in sym["A"]]
        k, m, Om, muf, tau = (env[x] for x in ("k", "m", "Omega", "muf", "tau"))
        ref = [[0, 1, 0], [-(k / m - Om * Om), 0, -muf / m], [0, 2 * m * Om / tau, -1 / tau]]
        for i in range(3):
            for j in range(3):
                check(abs(A[i][j] - ref[i][j]) <= 1e-12 * max(1.0, abs(ref[i][j])),
                      f"{arm} {sets}: A[{i}][{j}] = {A[i][j]}, closed form {ref[i][j]}")
    # --newton with ODE states: refused (a usage error: exit 2)
    p = run(["codegen", dc, "--lang", "c", "--newton"], ok=False)
    check(p.returncode == 2 and "ODE" in p.stderr and p.stderr.count("\n") == 1, f"--newton: {p.stderr!r}")
    print(f"largest deviation from linearize: {worst:.3g} (relative to each matrix's largest entry)")
    if FAILS:
        raise SystemExit(f"{len(FAILS)} failures")
    print("symbolic_ode_test: ok")


main()
