#!/usr/bin/env python3
"""The N-link chain of bench/chain_urdf.py in joint coordinates, two builds side by side (before and
after a change): whole `mblin linearize chainN.urdf --json --no-matrices` (load, compile,
equilibrium, linearization, eigenvalues; CPU = user + sys, median of --runs, peak RSS the largest),
the re-linearization per point (bench_relin, CPU clock, median over batches), and at the sizes of
--mujoco MuJoCo's mjd_transitionFD on the same URDF (bench_mujoco of the second build) in the same
run. Sizes listed in --skip-before are not run with the first build (e.g. memory beyond the
machine). Prints a markdown table and the growth exponents between consecutive sizes.

usage: python3 bench/chain_scaling.py BEFORE_BUILD AFTER_BUILD [--sizes 10,20,100,200,1000]
                                      [--skip-before 1000] [--runs 3] [--mujoco 20]"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chain_urdf import chain  # noqa: E402


def whole(mblin, urdf, env):
    p = subprocess.run(['/usr/bin/time', '-f', '%e %U %S %M', mblin, 'linearize', urdf, '--json', '--no-matrices'],
                       capture_output=True, text=True, env=env)
    if p.returncode:
        raise RuntimeError(p.stderr.strip()[-300:])
    wall, user, sys_, rss = p.stderr.strip().splitlines()[-1].split()
    return float(user) + float(sys_), int(rss) / 1024.0


def relin(build, urdf, n, env):
    reps, batch = (300, 100) if n <= 20 else (200, 100) if n <= 100 else (20, 10) if n <= 200 else (2, 1)
    p = subprocess.run([os.path.join(build, 'bench', 'bench_relin'), urdf, str(reps), str(batch)],
                       capture_output=True, text=True, env=env)
    m = re.search(r'sweep .*?median ([0-9.]+) us', p.stdout)
    return float(m.group(1)) if m else float('nan')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('before')
    ap.add_argument('after')
    ap.add_argument('--sizes', default='10,20,100,200,1000')
    ap.add_argument('--skip-before', default='1000')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--mujoco', default='20')
    a = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', MBLIN_BENCH_CLOCK='cpu')
    tmp = tempfile.mkdtemp(prefix='mblin_chain_')
    sizes = [int(s) for s in a.sizes.split(',') if s]
    skip = set(int(s) for s in a.skip_before.split(',') if s)
    res = {}
    for n in sizes:
        urdf = os.path.join(tmp, 'chain%d.urdf' % n)
        with open(urdf, 'w') as f:
            f.write(chain(n))
        row = {}
        for tag, build in (('before', a.before), ('after', a.after)):
            if tag == 'before' and n in skip:
                continue
            runs = [whole(os.path.join(build, 'mblin'), urdf, env) for _ in range(a.runs if n <= 200 else 1)]
            cpu = sorted(r[0] for r in runs)[len(runs) // 2]
            row[tag] = (cpu, max(r[1] for r in runs), relin(build, urdf, n, env))
        res[n] = row
        fmt = lambda t, i, f: (f % row[t][i]) if t in row else 'not run'
        print('| %d | %s | %s | %s | %s | %s | %s |' % (
            n, fmt('before', 0, '%.2f'), fmt('after', 0, '%.2f'), fmt('before', 1, '%.0f'), fmt('after', 1, '%.0f'),
            fmt('before', 2, '%.1f'), fmt('after', 2, '%.1f')), flush=True)
        if str(n) in a.mujoco.split(','):
            mj = os.path.join(a.after, 'bench', 'bench_mujoco')
            for dt in ('0.002', '1e-4'):
                p = subprocess.run([mj, urdf, '100', dt], capture_output=True, text=True, env=env)
                print('    ', (p.stdout or p.stderr).strip(), flush=True)
    for tag in ('before', 'after'):
        ns = [n for n in sizes if tag in res[n]]
        for n1, n2 in zip(ns, ns[1:]):
            e = [math.log(res[n2][tag][i] / res[n1][tag][i]) / math.log(n2 / n1) for i in range(3)]
            print('growth %s %d-%d: whole N^%.2f, peak RSS N^%.2f, re-linearization N^%.2f' % (tag, n1, n2, *e))


if __name__ == '__main__':
    main()
