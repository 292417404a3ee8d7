#!/usr/bin/env python3
"""Write N uncoupled oscillators as a `model: dae` file (large-model tests and benchmarks).

T = sum 0.5 m_i der(x_i)^2, V = sum 0.5 k_i x_i^2, no constraints: n = N coordinates, 2N
eigenvalues +-i w_i with w_i = sqrt(k_i / m_i). The masses cycle through 1, 1.5, 2 and the
frequencies are w = 1 + 0.01 p (p = 0..N-1, all distinct) assigned in a scrambled order
(p = 7919 i mod N), so the lowest modes are not the first coordinates.

usage: oscillators.py N [--frequencies] > model.yaml
  --frequencies   print the N frequencies w_i = sqrt(k_i / m_i) (from the written k_i, m_i), one a
                  line, instead of the model
"""
import argparse
import math


def params(N):
    out = []
    for i in range(N):
        m = 1.0 + 0.5 * (i % 3)
        w = 1.0 + 0.01 * ((7919 * i) % N)
        k = float("%.17g" % (m * w * w))
        out.append((m, k))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("N", type=int)
    ap.add_argument("--frequencies", action="store_true")
    a = ap.parse_args()
    if a.N < 1 or (a.N % 7919 == 0):
        raise SystemExit("N must be >= 1 and not a multiple of 7919")
    p = params(a.N)
    if a.frequencies:
        print("\n".join("%.17g" % math.sqrt(k / m) for m, k in p))
        return
    w = []
    w.append("# %d uncoupled oscillators, written by examples/oscillators.py" % a.N)
    w.append("model: dae")
    w.append("name: %d uncoupled oscillators" % a.N)
    w.append("coordinates: {%s}" % ", ".join("x%d: 0" % i for i in range(a.N)))
    w.append("kinetic_energy: \"" + " + ".join("%.17g*der(x%d)^2" % (0.5 * m, i) for i, (m, k) in enumerate(p)) + "\"")
    w.append("potential_energy: \"" + " + ".join("%.17g*x%d^2" % (0.5 * k, i) for i, (m, k) in enumerate(p)) + "\"")
    w.append("linearize:")
    w.append("  at: equilibrium")
    print("\n".join(w))


if __name__ == "__main__":
    main()
