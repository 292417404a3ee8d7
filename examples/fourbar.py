#!/usr/bin/env python3
"""Write the N-loop four-bar linkage of source 001 Sec. 4.1 as a `model: dae` file.

Point coordinates: ground pivots A_i = (i, 0), i = 0..N; moving points B_0..B_N (xB_i, yB_i);
rockers A_i-B_i and couplers B_(i-1)-B_i are uniform rods of length l and mass m; springs
B_i-A_(i-1) (i = 1..N) of stiffness k and free length L0 = sqrt(2) l; optional dampers c along
the springs; one extra coordinate phi (angle of rod A_N-B_N from the x axis) tied to B_N by
yB_N - l*sin(phi) = 0. n = 2N + 3 coordinates, m = 2N + 2 constraints, one degree of freedom.

usage: fourbar.py N [--damped] [--singular] [--states phi] > model.yaml
  --damped     dampers c = 1 N s/m along the springs (Table 2)
  --singular   k = 0 and gravity along +x, initial guess phi = 0 (Sec. 5.1, Fig. 4)
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("N", type=int)
    ap.add_argument("--damped", action="store_true")
    ap.add_argument("--singular", action="store_true")
    ap.add_argument("--phi0", type=float, default=None, help="initial guess of phi (default 2.0)")
    ap.add_argument("--no-states", action="store_true", help="let mblin choose the state")
    a = ap.parse_args()
    N = a.N
    if N < 1:
        raise SystemExit("N must be >= 1")
    phi0 = a.phi0 if a.phi0 is not None else (0.0 if a.singular else 2.0)
    k = 0 if a.singular else 25
    c = 1 if a.damped else 0
    gx, gy = (9.81, 0.0) if a.singular else (0.0, -9.81)
    out = []
    w = out.append
    w("# N-loop four-bar linkage of source 001 Sec. 4.1 (Gonzalez et al.), written by examples/fourbar.py")
    w("# N = %d: n = %d coordinates, m = %d constraints%s%s" % (
        N, 2 * N + 3, 2 * N + 2, ", dampers c = 1 N s/m" if a.damped else "",
        ", singular case: k = 0, gravity along +x" if a.singular else ""))
    w("model: dae")
    w("name: %d-loop four-bar%s%s" % (N, " with dampers" if a.damped else "", " (singular configuration)" if a.singular else ""))
    w("parameters: {m: 1, l: 1, k: %g, L0: sqrt(2)*l, c: %g, gx: %g, gy: %g}" % (k, c, gx, gy))
    w("coordinates:")
    for i in range(N + 1):
        w("  xB%d: %.17g" % (i, i + math.cos(phi0)))
        w("  yB%d: %.17g" % (i, math.sin(phi0)))
    w("  phi: %.17g" % phi0)
    w("variables:")
    for i in range(1, N + 1):
        w("  s%d: \"sqrt((xB%d - %d)^2 + yB%d^2)\"" % (i, i, i - 1, i))
    # kinetic energy: rocker i with A_i fixed: m/6 |vB_i|^2; coupler: m/6 (|v1|^2 + v1.v2 + |v2|^2)
    terms = []
    for i in range(N + 1):
        terms.append("m/6*(der(xB%d)^2 + der(yB%d)^2)" % (i, i))
    for i in range(1, N + 1):
        j = i - 1
        terms.append("m/6*(der(xB%d)^2 + der(yB%d)^2 + der(xB%d)*der(xB%d) + der(yB%d)*der(yB%d) + der(xB%d)^2 + der(yB%d)^2)"
                     % (j, j, j, i, j, i, i, i))
    w("kinetic_energy: \"" + " + ".join(terms) + "\"")
    # potential: gravity on rod centres (g = (gx, gy)), springs
    pot = []
    for i in range(N + 1):
        pot.append("-m*(gx*(xB%d + %d) + gy*yB%d)/2" % (i, i, i))
    for i in range(1, N + 1):
        j = i - 1
        pot.append("-m*(gx*(xB%d + xB%d) + gy*(yB%d + yB%d))/2" % (j, i, j, i))
        pot.append("k/2*(s%d - L0)^2" % i)
    w("potential_energy: \"" + " ".join(p if p.startswith("-") else "+ " + p for p in pot).lstrip("+ ") + "\"")
    if a.damped:
        w("dissipation: \"c/2*(" + " + ".join("der(s%d)^2" % i for i in range(1, N + 1)) + ")\"")
    w("constraints:")
    for i in range(N + 1):
        w("  - \"(xB%d - %d)^2 + yB%d^2 - l^2\"" % (i, i, i))
    for i in range(1, N + 1):
        w("  - \"(xB%d - xB%d)^2 + (yB%d - yB%d)^2 - l^2\"" % (i, i - 1, i, i - 1))
    w("  - \"yB%d - l*sin(phi)\"" % N)
    w("linearize:")
    w("  at: equilibrium")
    if not a.no_states:
        w("  states: [phi]")
    print("\n".join(out))


if __name__ == "__main__":
    main()
