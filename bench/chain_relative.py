#!/usr/bin/env python3
"""N-link chain from a URDF (bench/chain_urdf.py) in joint coordinates and in absolute
coordinates (its twin, `model: urdf` with `coordinates: absolute`): end-to-end `mblin linearize`
(median wall and CPU time, peak memory), then the re-linearization per point (bench_relin) and
MuJoCo's mjd_transitionFD on the same URDF (bench_mujoco, when built).

The whole run is `mblin linearize --json --no-matrices` (load, compile, equilibrium, linearization,
eigenvalues; without the matrices, so without the velocity transformation B and dB/dq, an output
of N x 6N x N numbers); times are process CPU (user) time as well as wall, bench_relin and
bench_mujoco report CPU time (MBLIN_BENCH_CLOCK=cpu): the machine is shared.

With --tree-dynamics symbolic the relative chain is linearized through the symbolic recursion
(`tree_dynamics: symbolic`) instead of the tree's structured term (src/model/terms/rtree.c): the before and
after of docs/benchmarks.md. CPU times are user + sys.

usage: python3 bench/chain_relative.py BUILD [--sizes 10,20,100] [--abs-sizes 10,100,1000] [--runs 3]
                                       [--tree-dynamics recursive|symbolic]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chain_urdf import chain  # noqa: E402


def timed(cmd, env):
    p = subprocess.run(['/usr/bin/time', '-f', '%e %U %S %M'] + cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else 'failed')
    wall, user, sys_, rss = p.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(sys_), int(rss) / 1024.0


def median(x):
    x = sorted(x)
    return x[len(x) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--sizes', default='10,20,100')
    ap.add_argument('--abs-sizes', default='10,100,1000')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--tree-dynamics', default='recursive', choices=('recursive', 'symbolic'))
    a = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', MBLIN_BENCH_CLOCK='cpu')
    mblin = os.path.join(a.build, 'mblin')
    tmp = tempfile.mkdtemp(prefix='mblin_chain_')
    rows = []
    sizes = sorted(set(int(s) for s in a.sizes.split(',') if s) | set(int(s) for s in a.abs_sizes.split(',') if s))
    for n in sizes:
        urdf = os.path.join(tmp, 'chain%d.urdf' % n)
        with open(urdf, 'w') as f:
            f.write(chain(n))
        if a.tree_dynamics == 'symbolic':
            sym = os.path.join(tmp, 'chain%d_sym.yaml' % n)
            with open(sym, 'w') as f:
                f.write('model: urdf\nfile: chain%d.urdf\ncoordinates: relative\ntree_dynamics: symbolic\n'
                        'linearize: {at: equilibrium}\n' % n)
            rel = sym
        else:
            rel = urdf
        twin = os.path.join(tmp, 'chain%d_abs.yaml' % n)
        with open(twin, 'w') as f:
            f.write('model: urdf\nfile: chain%d.urdf\ncoordinates: absolute\nlinearize: {at: equilibrium}\n' % n)
        for mode, path, wanted in (('relative', rel, a.sizes), ('absolute', twin, a.abs_sizes)):
            if str(n) not in wanted.split(','):
                continue
            res = []
            for _ in range(a.runs):
                res.append(timed([mblin, 'linearize', path, '--json', '--no-matrices'], env))
            w, u, m = median([r[0] for r in res]), median([r[1] for r in res]), max(r[2] for r in res)
            row = '| %d | %s | %.2f | %.2f | %.0f |' % (n, mode, w, u, m)
            relin = os.path.join(a.build, 'bench', 'bench_relin')
            if os.path.exists(relin):
                p = subprocess.run([relin, path, '300' if n <= 20 else '20'], capture_output=True, text=True, env=env)
                mm = re.search(r'sweep .*?median ([0-9.]+) us', p.stdout)
                row += ' %s |' % (mm.group(1) if mm else '-')
            rows.append(row)
            print(row, flush=True)
        mj = os.path.join(a.build, 'bench', 'bench_mujoco')
        if os.path.exists(mj) and str(n) in a.sizes.split(','):
            for dt in ('0.002', '1e-4'):
                p = subprocess.run([mj, urdf, '100', dt], capture_output=True, text=True, env=env)
                print('   ', (p.stdout or p.stderr).strip(), flush=True)
    print('| N | coordinates | wall s | CPU s | peak MB | relinearize us |')


if __name__ == '__main__':
    main()
