#!/usr/bin/env python3
"""Write the test models of the SLEPc eigensolver (tests/par/slepc_tests.cmake) as `model: dae` files.

chain N   a hanging chain of N point masses (m = 1) joined by rigid links of length 0.5 (holonomic
          constraints (x_i - x_(i-1))^2 + (y_i - y_(i-1))^2 = l^2, the first mass pinned to the
          origin the same way), gravity, and a damper c = 0.05 on every mass's velocity: n = 2N,
          m = N, N degrees of freedom, damped: the first-order pencil (non-symmetric).
rotor N   a rotor of N rigid discs (m = 20, Id = 1.5, Ip = 0.6) on a flexible shaft spinning at
          Omega = 200 rad/s: per disc the lateral displacements x, y and small tilts a, b with the
          gyroscopic term Ip Omega der(a) b of the kinetic energy; neighbours coupled by springs
          k = 1e6 (lateral), kt = 2e4 (tilt), both ends on bearings of those stiffnesses in x and
          a, 1.5 times them in y and b (anisotropic: simple eigenvalues):
          n = 4N, no constraints, gyroscopic: forward and backward whirl, the first-order pencil
          with a complex shift near i Omega.

usage: models.py chain|rotor N > model.yaml
"""
import sys


def chain(N):
    l, c = 0.5, 0.05
    out = ["# a hanging chain of %d point masses, written by tests/par/models.py chain %d" % (N, N),
           "model: dae", "name: hanging chain N = %d" % N,
           "parameters: {m: 1, g: 9.81, l: %g, c: %g}" % (l, c)]
    out.append("coordinates: {%s}" % ", ".join("x%d: 0, y%d: %r" % (i, i, -l * (i + 1)) for i in range(N)))
    out.append("kinetic_energy: \"%s\"" % " + ".join("0.5*m*(der(x%d)^2 + der(y%d)^2)" % (i, i) for i in range(N)))
    out.append("potential_energy: \"%s\"" % " + ".join("m*g*y%d" % i for i in range(N)))
    out.append("dissipation: \"%s\"" % " + ".join("0.5*c*(der(x%d)^2 + der(y%d)^2)" % (i, i) for i in range(N)))
    out.append("constraints:")
    out.append("  - \"x0^2 + y0^2 - l^2\"")
    for i in range(1, N):
        out.append("  - \"(x%d - x%d)^2 + (y%d - y%d)^2 - l^2\"" % (i, i - 1, i, i - 1))
    out.append("linearize:\n  at: equilibrium")
    return "\n".join(out) + "\n"


def rotor(N):
    out = ["# a rotor of %d discs on a flexible shaft, written by tests/par/models.py rotor %d" % (N, N),
           "model: dae", "name: rotor of %d discs" % N,
           "parameters: {md: 20, Id: 1.5, Ip: 0.6, k: 1e6, kt: 2e4, Omega: 200}"]
    c = []
    for i in range(N):
        c += ["x%d: 0" % i, "y%d: 0" % i, "a%d: 0" % i, "b%d: 0" % i]
    out.append("coordinates: {%s}" % ", ".join(c))
    T = []
    for i in range(N):
        T.append("0.5*md*(der(x%d)^2 + der(y%d)^2) + 0.5*Id*(der(a%d)^2 + der(b%d)^2) + Ip*Omega*der(a%d)*b%d"
                 % (i, i, i, i, i, i))
    out.append("kinetic_energy: \"%s\"" % " + ".join(T))
    V = ["0.5*k*(x0^2 + 1.5*y0^2 + x%d^2 + 1.5*y%d^2)" % (N - 1, N - 1),
         "0.5*kt*(a0^2 + 1.5*b0^2 + a%d^2 + 1.5*b%d^2)" % (N - 1, N - 1)]
    for i in range(1, N):
        V.append("0.5*k*((x%d - x%d)^2 + (y%d - y%d)^2) + 0.5*kt*((a%d - a%d)^2 + (b%d - b%d)^2)"
                 % (i, i - 1, i, i - 1, i, i - 1, i, i - 1))
    out.append("potential_energy: \"%s\"" % " + ".join(V))
    out.append("linearize:\n  at: given")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("chain", "rotor") or int(sys.argv[2]) < 1:
        raise SystemExit(__doc__)
    sys.stdout.write((chain if sys.argv[1] == "chain" else rotor)(int(sys.argv[2])))
