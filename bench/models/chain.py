#!/usr/bin/env python3
"""A hanging chain of N uniform links (length l, mass m, inertia m l^2/12 about the centre) on
revolute joints, the first pinned to the ground, under gravity -y, as a planar `model: mechanism`
for mblin (--mblin, the default) or as a MuJoCo MJCF model (--mujoco: hinge joints about y in the
x-z plane, the same links as capsules of zero radius with explicit inertia, no contacts, no
joint damping or armature). Initial guess: every link at angle `--angle` from the vertical.
The linearization at the straight-down equilibrium has N pendulum modes (no damping).

usage: chain.py N [--mujoco] [--angle 0.1] > model
"""
import argparse
import math


def mblin(N, a0):
    w = print
    w("# hanging chain of %d links (bench/models/chain.py)" % N)
    w("model: mechanism")
    w("name: %d-link hanging chain" % N)
    w("space: planar")
    w("parameters: {m: 1, l: 1, g: 9.81}")
    w("ground:")
    w("  markers:")
    w("    O: {}")
    w("bodies:")
    x, y = 0.0, 0.0
    for i in range(N):
        cx, cy = x + 0.5 * math.sin(a0), y - 0.5 * math.cos(a0)
        w("  link%d:" % i)
        w("    mass: m")
        w("    inertia: m*l^2/12")
        w("    position: [%.17g, %.17g]" % (cx, cy))
        w("    angle: %.17g" % a0)
        w("    markers:")
        w("      top%d: {position: [0, \"l/2\"]}" % i)
        w("      bot%d: {position: [0, \"-l/2\"]}" % i)
        x, y = x + math.sin(a0), y - math.cos(a0)
    w("joints:")
    w("  j0: {type: revolute, i: top0, j: O}")
    for i in range(1, N):
        w("  j%d: {type: revolute, i: top%d, j: bot%d}" % (i, i, i - 1))
    w("forces:")
    w("  weight: {type: gravity, g: [0, \"-g\"]}")
    w("linearize:")
    w("  at: equilibrium")
    w("  states: [%s]" % ", ".join('"JQ(j%d)"' % i for i in range(N)))


def mujoco(N, a0):
    w = print
    w('<mujoco model="chain%d">' % N)
    w('  <option gravity="0 0 -9.81" timestep="0.001" integrator="Euler"><flag contact="disable"/></option>')
    w('  <worldbody>')
    ind = "    "
    for i in range(N):
        pos = "0 0 0" if i == 0 else "0 0 -1"
        w('%s<body name="link%d" pos="%s">' % (ind, i, pos))
        w('%s  <joint name="j%d" type="hinge" axis="0 1 0" pos="0 0 0"/>' % (ind, i))
        w('%s  <inertial pos="0 0 -0.5" mass="1" diaginertia="%.17g %.17g 1e-9"/>' % (ind, 1 / 12, 1 / 12))
        ind += "  "
    for i in range(N - 1, -1, -1):
        ind = ind[:-2]
        w('%s</body>' % ind)
    w('  </worldbody>')
    w('</mujoco>')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("N", type=int)
    ap.add_argument("--mujoco", action="store_true")
    ap.add_argument("--angle", type=float, default=0.1)
    a = ap.parse_args()
    (mujoco if a.mujoco else mblin)(a.N, a.angle)


if __name__ == "__main__":
    main()
