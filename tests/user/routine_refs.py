#!/usr/bin/env python3
"""The reference values of tests/user/test_user_routines.c: the outputs and partials of the example
routines (examples/user/tire_mf.c, motor.c) and of the test library plain.c at a few points,
derived and evaluated by sympy (50 digits) independently of the C code. Run once; its output is
pasted into the test (python3 tests/user/routine_refs.py, an interpreter with sympy)."""
import sympy as sp


def table(name, ins, outs, points):
    J = sp.Matrix(outs).jacobian(sp.Matrix(ins))
    print(f"/* {name}: inputs {[str(s) for s in ins]} */")
    for p in points:
        sub = dict(zip(ins, [sp.Rational(str(v)) for v in p]))
        vals = [sp.N(o.subs(sub), 50) for o in outs]
        par = [sp.N(J[k, j].subs(sub), 50) for k in range(len(outs)) for j in range(len(ins))]
        fmt = lambda xs: ", ".join(f"{float(x):.17g}" for x in xs)
        print(f"    {{{{{fmt(p)}}}, {{{fmt(vals)}}}, {{{fmt(par)}}}}},")


a, B, C, D, E = sp.symbols("alpha B C D E")
x = B * a
F = -D * sp.sin(C * sp.atan(x - E * (x - sp.atan(x))))
table("mf_lateral", [a, B, C, D, E], [F],
      [(0.05, 10, 1.3, 6153.846153846154, 0.97), (-0.2, 8, 1.5, 7500, -0.5), (0.3, 12, 1.9, 4000, 0.4)])
i, w, V, R, L, Ke, Kt = sp.symbols("i omega V R L Ke Kt")
table("dc_motor", [i, w, V, R, L, Ke, Kt], [(V - R * i - Ke * w) / L, Kt * i],
      [(2.5, 30, 24, 0.8, 0.002, 0.05, 0.06), (-1.25, -7, 12, 1.5, 0.01, 0.2, 0.18)])
xs, ys = sp.symbols("x y")
table("plain", [xs, ys], [sp.sin(xs) * ys, xs**2 + sp.exp(ys)], [(0.7, -0.3), (-2.1, 1.4)])
