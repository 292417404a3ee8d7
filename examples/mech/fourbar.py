#!/usr/bin/env python3
"""Write the N-loop four-bar linkage of source 001 Sec. 4.1 as a `model: mechanism` file built from
planar bodies and revolute joints (the equation-level twins are examples/fourbar_N*.yaml).

Rockers A_i-B_i (i = 0..N, ground pivots A_i = (i, 0)) and couplers B_(i-1)-B_i (i = 1..N) are
uniform bars of length l and mass m (inertia m l^2/12 about the centre); springs B_i-A_(i-1)
(i = 1..N) of stiffness k and free length L0 = sqrt(2) l, with dampers c along them (--damped).
Gravity along -y. Initial guess: every rocker at angle phi0 = 2 rad. State: the angle of rocker N.

usage: fourbar.py N [--damped] > model.yaml
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("N", type=int)
    ap.add_argument("--damped", action="store_true")
    a = ap.parse_args()
    N = a.N
    phi0 = 2.0
    c = 1 if a.damped else 0
    w = print
    w("# N-loop four-bar linkage of source 001 Sec. 4.1 as a planar mechanism, written by examples/mech/fourbar.py")
    w("# N = %d: %d bars, %d revolute joints%s. Twin: examples/fourbar_N%d%s.yaml" % (
        N, 2 * N + 1, 3 * N + 1, ", dampers c = 1 N s/m" if a.damped else "", N, "_damped" if a.damped else ""))
    w("model: mechanism")
    w("name: %d-loop four-bar mechanism%s" % (N, " with dampers" if a.damped else ""))
    w("space: planar")
    w("parameters: {m: 1, l: 1, k: 25, L0: sqrt(2)*l, c: %g, g: 9.81}" % c)
    w("ground:")
    w("  markers:")
    for i in range(N + 1):
        w("    A%d: {position: [%d, 0]}" % (i, i))
    w("bodies:")
    cx, cy = math.cos(phi0), math.sin(phi0)
    for i in range(N + 1):
        w("  rocker%d:" % i)
        w("    mass: m")
        w("    inertia: m*l^2/12")
        w("    position: [%.17g, %.17g]" % (i + cx / 2, cy / 2))
        w("    angle: %.17g" % phi0)
        w("    markers: {R%d_base: {position: [-l/2, 0]}, R%d_tip: {position: [l/2, 0]}}" % (i, i))
    for i in range(1, N + 1):
        w("  coupler%d:" % i)
        w("    mass: m")
        w("    inertia: m*l^2/12")
        w("    position: [%.17g, %.17g]" % (i - 0.5 + cx, cy))
        w("    markers: {C%d_left: {position: [-l/2, 0]}, C%d_right: {position: [l/2, 0]}}" % (i, i))
    w("joints:")
    for i in range(N + 1):
        w("  pivot%d: {type: revolute, i: R%d_base, j: A%d}" % (i, i, i))
    for i in range(1, N + 1):
        w("  left%d: {type: revolute, i: C%d_left, j: R%d_tip}" % (i, i, i - 1))
        w("  right%d: {type: revolute, i: C%d_right, j: R%d_tip}" % (i, i, i))
    w("forces:")
    w("  weight: {type: gravity, g: [0, -g]}")
    for i in range(1, N + 1):
        w("  spring%d: {type: spring, i: R%d_tip, j: A%d, stiffness: k, damping: c, length: L0}" % (i, i, i - 1))
    w("outputs: {phi: \"JQ(pivot%d)\"}" % N)
    w("linearize:")
    w("  at: equilibrium")
    w("  states: [\"JQ(pivot%d)\"]" % N)


if __name__ == "__main__":
    main()
