#!/usr/bin/env python3
"""Re-linearization per point of unconstrained trees (issue 34, item 3): the dense path (a Cholesky
factorization of the mass matrix, src/lin/relin_dense.c) against the general path of the same build
(MBLIN_DENSE_TREE=off: the kinematic system or the augmented matrix with KLU), on the N-link chains
of bench/chain_urdf.py and the 30-joint humanoid tree tests/lin/humanoid30.urdf. Each figure is
bench_relin's sweep median (CPU clock, OPENBLAS_NUM_THREADS=1), the median of --runs runs, the two
paths interleaved, and the dense path with skip_outputs (no C, D: MBLIN_SKIP_OUTPUTS=1); with --callgrind also the instructions per point (callgrind, inclusive in
mbl_relinearize, divided by its calls; deterministic). Prints a markdown table and the growth
exponents between consecutive chain sizes. With --before OTHER_BUILD, also the dense path of another
build ("before", e.g. the main branch's), interleaved with the others.

usage: python3 bench/tree_relin.py BUILD [--sizes 10,20,100] [--runs 3] [--callgrind] [--before BUILD]"""
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

TREE = os.path.join(HERE, '..', 'tests', 'lin', 'humanoid30.urdf')


def tree_models(sizes, tmp):
    """(name, N, URDF path): the chains of the comma-separated sizes, written into tmp, and the humanoid."""
    models = []
    for n in [int(s) for s in sizes.split(',') if s]:
        path = os.path.join(tmp, 'chain%d.urdf' % n)
        with open(path, 'w') as f:
            f.write(chain(n))
        models.append(('chain N = %d' % n, n, path))
    models.append(('humanoid tree (30 joints)', 30, TREE))
    return models


def relin(build, model, n, env):
    reps, batch = (1000, 100) if n <= 30 else (200, 50) if n <= 100 else (20, 10)
    p = subprocess.run([os.path.join(build, 'bench', 'bench_relin'), model, str(reps), str(batch)],
                       capture_output=True, text=True, env=env)
    m = re.search(r'sweep .*?median ([0-9.]+) us', p.stdout)
    if not m:
        raise RuntimeError(p.stderr.strip()[-300:])
    return float(m.group(1))


def instructions(build, model, env, tmp):
    out = os.path.join(tmp, 'cg.out')
    subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out, '--toggle-collect=mbl_relinearize',
                    os.path.join(build, 'bench', 'bench_relin'), model, '20', '10'],
                   capture_output=True, text=True, env=env, check=True)
    total = 0
    with open(out) as f:
        for line in f:
            if line.startswith('summary:') or line.startswith('totals:'):
                total = int(line.split()[1])
    return total / 30.0  # 3 batches of 10 (one warm-up) calls of mbl_relinearize


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--sizes', default='10,20,100')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--callgrind', action='store_true')
    ap.add_argument('--before', default=None)
    a = ap.parse_args()
    base = dict(os.environ, OPENBLAS_NUM_THREADS='1', MBLIN_BENCH_CLOCK='cpu', MBLIN_BENCH_SWEEP_ONLY='1')
    env = {'general': dict(base, MBLIN_DENSE_TREE='off'), 'dense': dict(base), 'no C, D': dict(base, MBLIN_SKIP_OUTPUTS='1')}
    tags = ('general', 'dense', 'no C, D') + (('before',) if a.before else ())
    if a.before:
        env['before'] = dict(base)
    bld = {k: (a.before if k == 'before' else a.build) for k in tags}
    tmp = tempfile.mkdtemp(prefix='mblin_tree_')
    models = tree_models(a.sizes, tmp)
    res = {}
    print('| model | general [us] | dense [us] | ratio | dense, no C, D [us] |%s%s' % (
        ' before, dense [us] |' if a.before else '',
        ''.join(' %s [instr.] |' % k for k in tags) if a.callgrind else ''))
    print('|---|---|---|---|---|%s%s' % ('---|' if a.before else '', '---|' * len(tags) if a.callgrind else ''))
    for name, n, path in models:
        t = {k: [] for k in tags}
        for _ in range(a.runs):
            for tag in tags:
                t[tag].append(relin(bld[tag], path, n, env[tag]))
        med = {k: sorted(v)[len(v) // 2] for k, v in t.items()}
        res[name] = (n, med)
        extra = ''
        if a.callgrind:
            ins = {k: instructions(bld[k], path, env[k], tmp) for k in tags}
            extra = ''.join(' %.0f |' % ins[k] for k in tags)
        before = ' %.1f |' % med['before'] if a.before else ''
        print('| %s | %.1f | %.1f | %.2f | %.1f |%s%s' % (name, med['general'], med['dense'], med['general'] / med['dense'],
                                                         med['no C, D'], before, extra), flush=True)
    chains = [(n, m) for name, (n, m) in res.items() if name.startswith('chain')]
    for (n1, m1), (n2, m2) in zip(chains, chains[1:]):
        print('growth %d-%d: %s' % (n1, n2, ', '.join('%s N^%.2f' % (k, math.log(m2[k] / m1[k]) / math.log(n2 / n1))
                                                      for k in tags)))


if __name__ == '__main__':
    main()
