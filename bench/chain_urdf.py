#!/usr/bin/env python3
"""Write an N-link pendulum chain as a URDF (bench/chain_relative.py and bench_mujoco use it).

Every link: 0.2 m long, 1 kg, its centre 0.1 m below its joint, inertia of a slender rod about
the centre; the joints alternate between the y and the x axis, so the chain is spatial; it hangs
along -z at q = 0 (a stable equilibrium under gravity); joint damping 0.01.
usage: chain_urdf.py N OUT.urdf"""
import sys


def chain(n):
    L, m = 0.2, 1.0
    I = m * L * L / 12
    out = ['<?xml version="1.0"?>', '<robot name="chain%d">' % n, '  <link name="base"/>']
    for k in range(1, n + 1):
        out.append('  <link name="l%d"><inertial><origin xyz="0 0 %g"/><mass value="%g"/>'
                   '<inertia ixx="%.17g" iyy="%.17g" izz="%g" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                   % (k, -L / 2, m, I, I, 1e-3))
    for k in range(1, n + 1):
        parent = 'base' if k == 1 else 'l%d' % (k - 1)
        z = 0 if k == 1 else -L
        axis = '0 1 0' if k % 2 else '1 0 0'
        out.append('  <joint name="j%d" type="continuous"><parent link="%s"/><child link="l%d"/>'
                   '<origin xyz="0 0 %g"/><axis xyz="%s"/><dynamics damping="0.01"/></joint>'
                   % (k, parent, k, z, axis))
    out.append('</robot>')
    return '\n'.join(out) + '\n'


if __name__ == '__main__':
    n = int(sys.argv[1])
    with open(sys.argv[2], 'w') as f:
        f.write(chain(n))
