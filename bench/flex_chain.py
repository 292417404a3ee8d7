#!/usr/bin/env python3
"""A hanging chain of NL flexible links (planar beam bodies, docs/mechanism-reference.md "Flexible bodies")
pinned end to end, the first pinned to the ground: the large flexible model of the issue-19
benchmark (bench/mega_chain.py). Each link: length l, E Euler-Bernoulli elements, circular
section of radius r, Young's modulus Ey, density rho; n = NL (3 E + 6) coordinates,
m = 5 NL constraints (3 frame conditions per link, 2 per pin).

usage: python3 bench/flex_chain.py NL E [OUT.yaml] [--l 10 --r 0.02 --Ey 2e9 --rho 1150]
(prints the model to stdout without OUT)

The lowest modes are those of a heavy hanging chain of length L = NL l (for a uniform continuous
chain omega_k = (j_{0,k} / 2) sqrt(g / L), j_{0,k} the zeros of the Bessel function J0), moved by
the links' discreteness and bending stiffness; the mesh error (E) converges as h^2.
"""
import argparse
import sys


def chain_yaml(nl, ne, l=10.0, r=0.02, Ey=2e9, rho=1150.0, g=9.81):
    out = ["# A hanging chain of %d flexible links of %d beam elements each (bench/flex_chain.py)" % (nl, ne),
           "# n = %d coordinates, m = %d constraints" % (nl * (3 * ne + 6), 5 * nl),
           "model: mechanism",
           "name: hanging chain of %d flexible links, %d elements each" % (nl, ne),
           "space: planar",
           "parameters: {l: %r, Ey: %r, rho: %r, r: %r, g: %r}" % (l, Ey, rho, r, g),
           "ground:", "  markers:", "    o: {position: [0, 0]}", "bodies:"]
    for i in range(1, nl + 1):
        out += ["  link%d:" % i, "    type: beam", "    length: l", "    elements: %d" % ne,
                "    E: Ey", "    rho: rho", "    radius: r",
                "    position: [0, %s]" % ("0" if i == 1 else "-%d*l" % (i - 1)), "    angle: -pi/2",
                "    markers:", "      a%d: {node: 1}" % i, "      b%d: {s: l}" % i]
    out += ["joints:", "  pin0: {type: revolute, i: a1, j: o}"]
    for i in range(2, nl + 1):
        out.append("  pin%d: {type: revolute, i: a%d, j: b%d}" % (i - 1, i, i - 1))
    out += ["forces:", "  weight: {type: gravity, g: [0, -g]}", "linearize:", "  at: equilibrium", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("links", type=int)
    ap.add_argument("elements", type=int)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--l", type=float, default=10.0)
    ap.add_argument("--r", type=float, default=0.02)
    ap.add_argument("--Ey", type=float, default=2e9)
    ap.add_argument("--rho", type=float, default=1150.0)
    a = ap.parse_args()
    text = chain_yaml(a.links, a.elements, a.l, a.r, a.Ey, a.rho)
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
