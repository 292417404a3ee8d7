#!/usr/bin/env python3
"""Functions of data in model files (issue 35, item 1) against SciPy and closed forms.

A `model: dae` file's outputs spline(d, x) and spline(d, x, 1) are read at given points (their
values are the operating point's outputs, their x-derivatives the rows of C), so each method is
checked against an independent implementation: Akima against scipy Akima1DInterpolator (Akima
1970), natural cubic against CubicSpline(bc_type='natural'), table against numpy.interp, the
bicubic against the tensor product of SciPy's natural splines, derivatives against SciPy's and
against central differences; a linear model whose force is a spline against the same model with
the spline's piece at the point written out (SciPy's coefficients), in `model: dae` and
`model: mechanism`; and the errors on bad data (file, line and column, nonzero exit).

usage: data_sets_test.py path/to/mblin   (python3 with numpy and scipy)
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from scipy.interpolate import Akima1DInterpolator, CubicSpline

MBLIN = sys.argv[1]
FAILS = []
TMP = tempfile.mkdtemp(prefix="mblin_data_")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)  # the generated models go with the test


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(path, *args, ok=True):
    p = subprocess.run([MBLIN, "linearize", path, "--json"] + list(args), capture_output=True, text=True, timeout=60)
    if ok and p.returncode != 0:
        raise SystemExit(f"mblin linearize {path} {args} failed: {p.stderr}")
    return p


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


X = [0.0, 0.7, 1.5, 2.0, 3.1, 4.0, 5.2]
Y = [0.0, 1.2, 0.4, 0.9, 2.5, 2.4, 0.8]
XS = ", ".join(repr(v) for v in X)
YS = ", ".join(repr(v) for v in Y)


def model_1d(method, fn="spline"):
    return f"""model: dae
parameters: {{x0: 0.3}}
coordinates: {{x: x0}}
kinetic_energy: der(x)^2/2
forces: {{x: -x}}
outputs: {{s: "{fn}(d, x)", sd: "{fn}(d, x, 1)"}}
linearize: {{at: given}}
data:
  d: {{method: {method}, x: [{XS}], y: [{YS}]}}
"""


def sample(path, x0, extra=()):
    d = json.loads(run(path, "--set", f"x0={x0!r}", *extra).stdout)
    out = d["operating_point"]["outputs"]
    C = d["ss"]["C"]
    return out[0], out[1], C[1][0]  # s, s', s''


def one_d():
    refs = {
        "akima": Akima1DInterpolator(X, Y),
        "cubic": CubicSpline(X, Y, bc_type="natural"),
    }
    pts = [0.0, 0.31, 0.7, 1.1, 1.9, 2.55, 3.1, 3.77, 4.6, 5.2]
    for method, ref in refs.items():
        path = write(f"{method}.yaml", model_1d(method))
        for x0 in pts:
            s, s1, s2 = sample(path, x0)
            check(abs(s - ref(x0)) <= 1e-12 * (1 + abs(ref(x0))), f"{method} value at {x0}: {s} vs {ref(x0)}")
            check(abs(s1 - ref(x0, 1)) <= 1e-11 * (1 + abs(ref(x0, 1))), f"{method} slope at {x0}: {s1} vs {ref(x0, 1)}")
            # second derivative: SciPy's is one-sided at a knot (the piece to the right, as ours)
            check(abs(s2 - ref(x0, 2)) <= 1e-10 * (1 + abs(ref(x0, 2))), f"{method} 2nd derivative at {x0}: {s2} vs {ref(x0, 2)}")
        # the slope against central differences of the values
        h = 1e-6
        for x0 in (0.31, 2.55, 4.6):
            fd = (sample(path, x0 + h)[0] - sample(path, x0 - h)[0]) / (2 * h)
            check(abs(fd - sample(path, x0)[1]) < 1e-7, f"{method} slope vs central difference at {x0}")
    # table: linear interpolation of the points, whatever the set's method
    path = write("table.yaml", model_1d("akima", "table"))
    for x0 in (0.0, 0.35, 1.5, 2.7, 5.2):
        s, s1, s2 = sample(path, x0)
        check(abs(s - np.interp(x0, X, Y)) < 1e-13, f"table at {x0}: {s} vs {np.interp(x0, X, Y)}")
        check(s2 == 0, "table's second derivative is 0")
    # a natural cubic and a table of a line are the line (closed form), also extrapolated linearly
    line = model_1d("cubic").replace(f"y: [{YS}]", "y: [" + ", ".join(repr(2.5 * v - 1) for v in X) + "], extrapolate: linear")
    path = write("line.yaml", line)
    for x0 in (-2.0, 0.4, 3.3, 7.5):
        s, s1, s2 = sample(path, x0)
        check(abs(s - (2.5 * x0 - 1)) < 1e-12 and abs(s1 - 2.5) < 1e-12, f"line at {x0}: {s}, {s1}")


def two_d():
    xg = np.array([0.0, 0.5, 1.2, 2.0, 2.6])
    yg = np.array([-1.0, 0.0, 0.8, 1.5])
    Z = np.cos(xg)[:, None] * (1 + yg[None, :] ** 2) + 0.3 * xg[:, None] * yg[None, :]
    rows = "\n".join("      - [" + ", ".join(repr(v) for v in r) + "]" for r in Z)
    text = f"""model: dae
parameters: {{x0: 0.3, y0: 0.2}}
coordinates: {{x: x0, y: y0}}
kinetic_energy: der(x)^2/2 + der(y)^2/2
forces: {{x: -x, y: -y}}
outputs: {{s: "spline2(m, x, y)", sx: "spline2(m, x, y, 1, 0)", sy: "spline2(m, x, y, 0, 1)"}}
linearize: {{at: given}}
data:
  m:
    method: bicubic
    x: [{", ".join(repr(v) for v in xg)}]
    y: [{", ".join(repr(v) for v in yg)}]
    z:
{rows}
"""
    path = write("map.yaml", text)

    def ref(x, y, dx=0, dy=0):
        # the tensor product: natural splines along x for each y_j, then along y
        col = np.array([CubicSpline(xg, Z[:, j], bc_type="natural")(x, dx) for j in range(len(yg))])
        return CubicSpline(yg, col, bc_type="natural")(y, dy)

    for x0, y0 in ((0.3, 0.2), (1.7, -0.6), (2.6, 1.5), (0.0, -1.0), (1.2, 0.8)):
        d = json.loads(run(path, "--set", f"x0={x0!r}", "--set", f"y0={y0!r}").stdout)
        s, sx, sy = d["operating_point"]["outputs"]
        C = d["ss"]["C"]
        check(abs(s - ref(x0, y0)) < 1e-12, f"bicubic value at {x0},{y0}: {s} vs {ref(x0, y0)}")
        check(abs(sx - ref(x0, y0, 1)) < 1e-11, f"bicubic d/dx at {x0},{y0}")
        check(abs(C[0][1] - ref(x0, y0, 0, 1)) < 1e-11, f"bicubic d/dy (C) at {x0},{y0}")
        check(abs(C[1][1] - ref(x0, y0, 1, 1)) < 1e-10, f"bicubic d2/dxdy at {x0},{y0}: {C[1][1]} vs {ref(x0, y0, 1, 1)}")
        check(abs(C[2][1] - ref(x0, y0, 0, 2)) < 1e-10, f"bicubic d2/dy2 at {x0},{y0}")


def closed_form_twin():
    """A damped oscillator whose spring is a spline (CSV file) vs the spline's piece written out."""
    xd = np.array([-0.1, -0.05, 0.0, 0.04, 0.1, 0.15])
    fd = np.array([-1500.0, -600.0, 0.0, 450.0, 1500.0, 2600.0])
    with open(os.path.join(TMP, "spring.csv"), "w") as f:
        f.write("deflection,force\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(xd, fd)))
    cs = CubicSpline(xd, fd, bc_type="natural")
    base = """model: dae
parameters: {m: 25, c: 80, w: 180}
coordinates: {x: 0.02}
kinetic_energy: m*der(x)^2/2
forces: {x: "-FORCE - c*der(x) - w + u"}
inputs: {u: 0}
outputs: {f: "FORCE"}
"""
    data = "data:\n  k: {method: cubic, file: spring.csv}\n"
    p1 = write("twin_spline.yaml", base.replace("FORCE", "spline(k, x)") + data)
    d1 = json.loads(run(p1).stdout)
    xe = d1["operating_point"]["q"][0]
    i = int(np.searchsorted(xd, xe, side="right") - 1)
    c = cs.c[:, i]  # c3 (x - xi)^3 + c2 (x - xi)^2 + c1 (x - xi) + c0
    piece = f"({c[3]!r} + {c[2]!r}*(x - {xd[i]!r}) + {c[1]!r}*(x - {xd[i]!r})^2 + {c[0]!r}*(x - {xd[i]!r})^3)"
    p2 = write("twin_closed.yaml", base.replace("FORCE", piece))
    d2 = json.loads(run(p2).stdout)
    check(abs(d2["operating_point"]["q"][0] - xe) < 1e-12, "twin: same equilibrium")
    for key in ("A", "B", "C", "D"):
        a, b = np.array(d1["ss"][key], float), np.array(d2["ss"][key], float)
        check(a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12 * (1 + np.abs(b).max())), f"twin {key}: {a} vs {b}")
    for meth in ("partition", "nullspace", "projection", "descriptor", "penalty", "fd"):
        dm = json.loads(run(p1, "--method", meth).stdout)
        tol = 1e-6 if meth in ("fd", "penalty") else 1e-9
        check(np.allclose(np.array(dm["ss"]["A"]), np.array(d2["ss"]["A"]), rtol=tol, atol=tol), f"twin method {meth}")
    # the same through a mechanism: a slider on a spring whose law is the spline of its length
    mech = """model: mechanism
name: slider on a tabulated spring
space: planar
parameters: {m: 25, c: 80, w: 180}
ground:
  markers:
    rail: {}
    anchor: {position: [-1, 0]}
bodies:
  slider:
    mass: m
    inertia: 1
    position: [0.02, 0]
    markers:
      s: {}
joints:
  slide: {type: prismatic, i: s, j: rail}
forces:
  spring: {type: spring, i: s, j: anchor, force: "-(FORCE) - c*rate"}
  load: {type: force, i: s, force: ["-w + u", 0]}
inputs: {u: 0}
linearize: {states: ["DX(s, rail)"]}
"""
    m1 = write("twin_mech_spline.yaml", mech.replace("FORCE", "spline(k, length - 1)") + data)
    m2 = write("twin_mech_closed.yaml", mech.replace("FORCE", piece.replace("x", "(length - 1)")))
    e1, e2 = json.loads(run(m1).stdout), json.loads(run(m2).stdout)
    for key in ("A", "B"):
        a, b = np.array(e1["ss"][key], float), np.array(e2["ss"][key], float)
        check(np.allclose(a, b, rtol=1e-10, atol=1e-10), f"mechanism twin {key}: {a} vs {b}")
    check(np.allclose(np.array(e1["ss"]["A"]), np.array(d1["ss"]["A"]), rtol=1e-9), "mechanism = dae")
    # simulate's inputs see the model's data sets: u = spline(k, 0.01 t) against its piece on [0, 0.04]
    j = int(np.searchsorted(xd, 0.0, side="right") - 1)
    cj = cs.c[:, j]
    tt = "(0.01*t)"
    pj = f"({cj[3]!r} + {cj[2]!r}*{tt} + {cj[1]!r}*{tt}^2 + {cj[0]!r}*{tt}^3)"
    trs = []
    for inp in ("u=spline(k, 0.01*t)", f"u={pj}"):
        out = os.path.join(TMP, f"sim{len(trs)}.csv")
        p = subprocess.run([MBLIN, "simulate", p1, "--t-end", "3", "--input", inp, "-o", out], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0, f"simulate with {inp}: {p.stderr}")
        trs.append(np.genfromtxt(out, delimiter=",", names=True)["x"] if p.returncode == 0 else np.zeros(1))
    check(trs[0].shape == trs[1].shape and np.allclose(trs[0], trs[1], rtol=0, atol=1e-9), "simulate: spline input = its piece")
    # symbolic keeps the data functions (checked there against linearize); codegen refuses in one line
    p = subprocess.run([MBLIN, "symbolic", p1, "--point", "symbols"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "spline(k, x, 1)" in p.stdout, f"symbolic: {p.stderr}{p.stdout[:300]}")
    p = subprocess.run([MBLIN, "codegen", "--lang", "c", p1], capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and p.stderr.count("\n") == 1 and "spline(k, ...)" in p.stderr, f"codegen: {p.stderr}")


def csv_forms():
    """A header after comments, a UTF-8 byte order mark, CRLF line ends: the rows are all kept."""
    with open(os.path.join(TMP, "forms.csv"), "wb") as f:
        f.write(b"\xef\xbb\xbf# measured\r\nspeed, force\r\n0, 0\r\n1, 2\r\n\r\n2, 0\r\n")
    path = write("forms.yaml", model_1d("linear").replace(f"x: [{XS}], y: [{YS}]", "file: forms.csv"))
    for x0, ref in ((0.0, 0.0), (0.5, 1.0), (1.5, 1.0), (2.0, 0.0)):
        check(abs(sample(path, x0)[0] - ref) < 1e-15, f"csv forms at {x0}")


def errors():
    ok1 = "  d: {method: akima, x: [0, 1, 2], y: [0, 1, 0]}\n"
    base = """model: dae
coordinates: {x: 0.5}
kinetic_energy: der(x)^2/2
forces: {x: "-EXPR"}
data:
"""
    cases = [
        ("monotone", "  d: {x: [0, 1, 1, 2], y: [0, 1, 2, 3]}\n", "spline(d, x)", ":6:", "x must increase strictly (x[2] = 1 after 1)"),
        ("nan", "  d: {x: [0, 1, 2], y: [0, .nan, 3]}\n", "spline(d, x)", ":6:", "data 'd': y[1] is not a finite number"),
        ("few", "  d: {x: [0, 1], y: [0, 1]}\n", "spline(d, x)", ":6:3:", "too few points (2; akima needs at least 3)"),
        ("unknown", ok1, "spline(e, x)", ":4:", "spline: unknown data set 'e' (the data sets are: d)"),
        ("range", ok1.replace("[0, 1, 2]", "[0.6, 1, 2]"), "spline(d, x)", ":4:14:", "spline 'd': x = 0.5 outside its data [0.6, 2] (extrapolate: no)"),
        ("ragged", "  d: {file: ragged.csv}\n", "spline(d, x)", "ragged.csv:4:3:", "row has 3 columns, the rows before have 2"),
        ("csvnan", "  d: {file: nan.csv}\n", "spline(d, x)", "nan.csv:2:2:", "not a finite number"),
        ("csvmono", "  d: {file: mono.csv}\n", "spline(d, x)", "mono.csv:4:1:", "x must increase strictly"),
        ("nofile", "  d: {file: missing.csv}\n", "spline(d, x)", "bad_nofile.yaml:6:", "cannot open"),
        ("device", "  d: {file: /dev/stdin}\n", "spline(d, x)", "bad_device.yaml:6:", "/dev/stdin is not a regular file"),
        # no equilibrium inside the data (the force never reaches 5): the failure names the range the
        # steps left, not only the stalled Newton
        ("eqrange", ok1, "(spline(d, x) - 5)", ":4:",
         "could not be evaluated", "outside its data [0, 2] (extrapolate: no)"),
        ("ycount", "  d: {x: [0, 1, 2], y: [0, 1]}\n", "spline(d, x)", ":6:", "y has 2 values, x has 3"),
        ("dim", ok1, "spline2(d, x, x)", ":4:", "data set 'd' is 1-D"),
        ("method", "  d: {method: quintic, x: [0, 1, 2], y: [0, 1, 0]}\n", "spline(d, x)", ":6:", "unknown method 'quintic'"),
    ]
    write("ragged.csv", "x,y\n0,0\n1,1\n2,2,2\n")
    write("nan.csv", "0,0\n1,nan\n2,2\n")
    write("mono.csv", "# comment\n0,0\n2,1\n1,2\n")
    for name, data, expr, where, msg, *also in cases:
        path = write(f"bad_{name}.yaml", base.replace("EXPR", expr) + data)
        p = run(path, ok=False)
        err = p.stderr.strip()
        check(p.returncode != 0 and p.returncode < 128, f"{name}: exit {p.returncode}")
        check(err.count("\n") == 0, f"{name}: one line: {err}")
        check(msg in err and where in err and all(a in err for a in also), f"{name}: '{err}' lacks '{where}' or '{msg}'")


def quarter_car():
    """examples/data/quarter_car.yaml against the same quarter car built here from SciPy's curves."""
    from scipy.optimize import brentq
    ex = "examples/data"
    sp = np.loadtxt(f"{ex}/spring.csv", delimiter=",", comments="#", skiprows=2)
    da = np.loadtxt(f"{ex}/damper.csv", delimiter=",", comments="#", skiprows=2)
    spring = CubicSpline(sp[:, 0], sp[:, 1], bc_type="natural")
    damper = Akima1DInterpolator(da[:, 0], da[:, 1])
    ms, mw, kt, g = 320.0, 40.0, 200000.0, 9.81
    for payload in (0.0, 60.0, 150.0):
        m = ms + payload
        d = brentq(lambda c: spring(c) - m * g, sp[0, 0], sp[-1, 0], xtol=1e-15)
        k, c = spring(d, 1), damper(0.0, 1)
        M = np.diag([m, mw])
        K = np.array([[k, -k], [-k, k + kt]])
        C = np.array([[c, -c], [-c, c]])
        A = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
        ref = sorted(np.linalg.eigvals(A), key=lambda z: (round(abs(z), 6), z.imag))
        out = json.loads(run(f"{ex}/quarter_car.yaml", "--set", f"payload={payload}").stdout)
        got = sorted((complex(e["re"], e["im"]) for e in out["eigenvalues"]), key=lambda z: (round(abs(z), 6), z.imag))
        check(len(got) == 4 and all(abs(a - b) < 1e-8 * abs(b) for a, b in zip(got, ref)),
              f"quarter car at payload {payload}: {got} vs {ref}")
        check(abs(out["operating_point"]["outputs"][1] - d) < 1e-9, f"quarter car compression {payload}")
    # a simulation through the data functions: a 3 cm road step lifts the body and wheel by 3 cm
    csvp = os.path.join(TMP, "step.csv")
    p = subprocess.run([MBLIN, "simulate", f"{ex}/quarter_car.yaml", "--t-end", "6", "--input",
                        "road=0.03*step(t, 0, 0, 0.05, 1)", "-o", csvp], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"simulate: {p.stderr}")
    if p.returncode == 0:
        tr = np.genfromtxt(csvp, delimiter=",", names=True)
        q0 = json.loads(run(f"{ex}/quarter_car.yaml").stdout)["operating_point"]["q"]
        check(abs(tr["zs"][-1] - (q0[0] + 0.03)) < 1e-4 and abs(tr["zu"][-1] - (q0[1] + 0.03)) < 1e-4,
              f"simulation settles 3 cm higher: {tr['zs'][-1]}, {tr['zu'][-1]} from {q0}")
    # exact sensitivities (the spline's second derivative moves K with the point) vs central differences
    p0, h = 120.0, 1e-3
    sens = json.loads(subprocess.run([MBLIN, "sensitivity", f"{ex}/quarter_car.yaml", "--json", "--set", f"payload={p0}"],
                                     capture_output=True, text=True, timeout=60).stdout)
    ip = sens["parameters"].index("payload")

    def body(pv):
        ev = json.loads(run(f"{ex}/quarter_car.yaml", "--set", f"payload={pv!r}").stdout)["eigenvalues"]
        return min((complex(e["re"], e["im"]) for e in ev if e["im"] > 0), key=abs)

    fd = (body(p0 + h) - body(p0 - h)) / (2 * h)
    mode = min((m for m in sens["modes"] if m["im"] > 0), key=lambda m: abs(complex(m["re"], m["im"])))
    ex_d = complex(mode["d"][ip]["re"], mode["d"][ip]["im"])
    check(abs(ex_d - fd) < 1e-6 * abs(fd), f"quarter car d lambda/d payload: {ex_d} vs {fd}")
    print(f"quarter car: d lambda/d payload {ex_d} (central differences {fd})")


one_d()
two_d()
quarter_car()
closed_form_twin()
csv_forms()
errors()
if FAILS:
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1)
print("data sets: all checks passed")
