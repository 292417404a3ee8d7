#!/usr/bin/env python3
"""mblin against Pinocchio on robot trees (issue 69): the per-point re-linearization of a URDF robot
against Pinocchio's analytic derivatives of forward dynamics (computeABADerivatives), on the N-link
chains of bench/chain_urdf.py and the 30-joint humanoid tree tests/lin/humanoid30.urdf.

mblin: bench_relin's sweep median (CPU clock, OPENBLAS_NUM_THREADS=1, MBLIN_BENCH_SWEEP_ONLY=1,
MBLIN_BENCH_RELIN_JAC=1: mbl_relinearize at a point that brings no Jacobian values, so each call
evaluates the model's Jacobian itself), with the outputs' C, D and without (MBLIN_SKIP_OUTPUTS=1).
Pinocchio: bench/peer_pinocchio.cpp (build it with bench/pinocchio/build.sh), timed the same way
(the same two points alternating, batches, the median on the process's CPU clock), with the end
effector's frame Jacobian (--outputs, the work of mblin's pose outputs) and without. Within each
of --runs runs every column is measured once, one after the other (interleaved); each figure is
the median of the runs' medians. The ratio columns are mblin's speed over Pinocchio's (t_pinocchio
/ t_mblin: above 1, mblin is ahead). Then the growth exponents between consecutive chain sizes.

With --callgrind also the instructions per call (deterministic where the machine's speed drifts):
mblin's inclusive in mbl_relinearize (callgrind collecting only inside it, bench/tree_relin.py);
Pinocchio's from two whole runs of the peer, 30 and 230 calls: (I_230 - I_30) / 200, which
leaves out the loading of the URDF and whatever the compiler inlined or not.

With --agreement also how far mblin's d qdd / dq (A's lower left block, `mblin linearize --json`) is
from Pinocchio's (the peer's --dump) at the chains' zero angles, relative to its largest entry: an
agreement between the two, not an error against an exact reference.

The header names the CPU, the kernels mblin's OpenBLAS runs (from `mblin --version`; the
environment's OPENBLAS_CORETYPE chooses them) and whether the peer links a BLAS (Pinocchio
computes with Eigen's own kernels, vectorized as its compiler flags allow).

usage: python3 bench/robot_peers.py BUILD --pinocchio PEER [--pinocchio-native PEER2]
                                    [--sizes 2,10,20,100] [--runs 5] [--callgrind] [--agreement]"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tree_relin import instructions, relin, tree_models  # noqa: E402


def peer(exe, model, n, outputs, reps=None, batch=None):
    """The peer's median per call [us], as bench_relin's batches for this size (tree_relin.relin)."""
    if reps is None:
        reps, batch = (1000, 100) if n <= 30 else (200, 50) if n <= 100 else (20, 10)
    p = subprocess.run([exe, model, str(reps), str(batch)] + (['--outputs'] if outputs else []),
                       capture_output=True, text=True)
    m = re.search(r'median ([0-9.]+) us', p.stdout)
    if p.returncode or not m:
        raise RuntimeError('%s %s: %s' % (exe, model, p.stderr.strip()[-300:]))
    return float(m.group(1))


def peer_instructions(exe, model, outputs, tmp):
    """Instructions per call of the peer: two whole runs under callgrind, 30 and 230 calls (a warm-up
    batch of 10 and 2 or 22 timed batches), the difference over the 200 more calls. None when valgrind
    cannot run it (valgrind 3.19 decodes no AVX-512: a -march=native build on such a CPU dies of SIGILL)."""
    total = {}
    for reps in (20, 220):
        out = os.path.join(tmp, 'cg_peer.out')
        p = subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out, exe, model, str(reps), '10']
                           + (['--outputs'] if outputs else []), capture_output=True, text=True)
        if p.returncode:
            return None
        with open(out) as f:
            total[reps] = max(int(line.split()[1]) for line in f if line.startswith(('summary:', 'totals:')))
    return (total[220] - total[20]) / 200.0


def agreement(build, exe, model, n, env, tmp):
    """max |mblin's d qdd / dq - Pinocchio's| / max |Pinocchio's| at the URDF's zero angles: A's lower left
    block from `mblin linearize --json` against the peer's --dump (a chain: the same joint order). Not
    the velocity block: Pinocchio's ABA leaves out the URDF's joint damping, which mblin applies."""
    dump = os.path.join(tmp, 'dump.txt')
    subprocess.run([exe, model, '20', '10', '--dump', dump], capture_output=True, text=True, check=True)
    with open(dump) as f:
        ref = [[float(x) for x in line.split()[:n]] for line in f]
    p = subprocess.run([os.path.join(build, 'mblin'), 'linearize', model, '--json'], capture_output=True, text=True,
                       env=env, check=True)
    A = json.loads(p.stdout)['ss']['A']
    diff = max(abs(A[n + i][j] - ref[i][j]) for i in range(n) for j in range(n))
    return diff / max(abs(x) for row in ref for x in row)


def header(build, env, peers):
    """The CPU, mblin's BLAS kernels and the peers' BLAS, as markdown lines."""
    cpu = 'unknown CPU'
    try:
        with open('/proc/cpuinfo') as f:
            cpu = next((line.split(':', 1)[1].strip() for line in f if line.startswith('model name')), cpu)
    except OSError:
        pass
    ver = subprocess.run([os.path.join(build, 'mblin'), '--version'], capture_output=True, text=True, env=env)
    lines = ver.stdout.strip().split('\n')
    print('CPU: %s (%d logical CPUs); CPU time per call, medians of medians' % (cpu, os.cpu_count() or 0))
    print('mblin: %s; %s (OPENBLAS_CORETYPE=%s)' % (lines[0], lines[1] if len(lines) > 1 else 'no BLAS line',
                                                     env.get('OPENBLAS_CORETYPE', 'unset')))
    for tag, exe in peers:
        ldd = subprocess.run(['ldd', exe], capture_output=True, text=True).stdout
        blas = [w.split()[0] for w in ldd.split('\n') if re.search(r'blas|lapack|mkl', w)]
        print('%s: %s; BLAS linked: %s' % (tag, exe, ', '.join(blas) if blas else 'none (Eigen\'s own kernels)'))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('build')
    ap.add_argument('--pinocchio', required=True, help='bench/pinocchio/build.sh\'s peer_pinocchio (-O3)')
    ap.add_argument('--pinocchio-native', default=None, help='the same built with -march=native')
    ap.add_argument('--sizes', default='2,10,20,100')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--callgrind', action='store_true')
    ap.add_argument('--agreement', action='store_true', help='d qdd / dq of both sides compared on the chains')
    a = ap.parse_args()
    for exe in [a.pinocchio] + ([a.pinocchio_native] if a.pinocchio_native else []):
        if not os.access(exe, os.X_OK):
            sys.exit('robot_peers.py: %s is not an executable (build it with bench/pinocchio/build.sh)' % exe)
    base = dict(os.environ, OPENBLAS_NUM_THREADS='1', MBLIN_BENCH_CLOCK='cpu', MBLIN_BENCH_SWEEP_ONLY='1',
                MBLIN_BENCH_RELIN_JAC='1')
    env = {True: base, False: dict(base, MBLIN_SKIP_OUTPUTS='1')}
    peers = [('Pinocchio', a.pinocchio)] + ([('Pinocchio native', a.pinocchio_native)] if a.pinocchio_native else [])
    header(a.build, base, peers)
    tmp = tempfile.mkdtemp(prefix='mblin_robot_')
    models = tree_models(a.sizes, tmp)
    # the columns: (side, with outputs); a ratio column per peer and per kind
    cols = [(s, o) for o in (True, False) for s in ['mblin'] + [t for t, _ in peers]]
    exe = dict(peers)
    def label(s, o):
        return ('mblin with C, D' if o else 'mblin, no C, D') if s == 'mblin' else s + (' + frame J' if o else '')
    head = ['model']
    for o in (True, False):
        head += ['%s [us]' % label(s, o) for s in [t for t, _ in peers] + ['mblin']]
        head += ['ratio to %s' % t for t, _ in peers]  # mblin's speed over the peer's
    if a.callgrind:
        head += ['%s [instr.]' % label(s, o) for s, o in cols]
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    res = []
    for name, n, path in models:
        t = {c: [] for c in cols}
        for _ in range(a.runs):
            for s, o in cols:
                t[(s, o)].append(relin(a.build, path, n, env[o]) if s == 'mblin' else peer(exe[s], path, n, o))
        med = {c: sorted(v)[len(v) // 2] for c, v in t.items()}
        ins = {}
        row = [name]
        for o in (True, False):
            row += ['%.1f' % med[(s, o)] for s in [t for t, _ in peers] + ['mblin']]
            row += ['%.2f' % (med[(s, o)] / med[('mblin', o)]) for s, _ in peers]
        if a.callgrind:
            ins = {(s, o): instructions(a.build, path, env[o], tmp) if s == 'mblin'
                   else peer_instructions(exe[s], path, o, tmp) for s, o in cols}
            row += ['-' if ins[c] is None else '%.0f' % ins[c] for c in cols]
        res.append((name, n, med, ins))
        print('| ' + ' | '.join(row) + ' |', flush=True)
    if a.callgrind:
        print('(instructions per call; "-": the peer did not run under valgrind, e.g. AVX-512 code of -march=native)')
    if a.agreement:
        print('agreement of d qdd / dq at q = 0 (max |mblin - Pinocchio| / max |Pinocchio|): ' + ', '.join(
            'N = %d %.1e' % (n, agreement(a.build, a.pinocchio, path, n, base, tmp))
            for name, n, path in models if name.startswith('chain')))
    chains = [(n, m, i) for name, n, m, i in res if name.startswith('chain')]
    for (n1, m1, i1), (n2, m2, i2) in zip(chains, chains[1:]):
        for what, v1, v2 in (('time', m1, m2), ('instructions', i1, i2)):
            grow = ['%s N^%.2f' % (label(s, o), math.log(v2[(s, o)] / v1[(s, o)]) / math.log(n2 / n1))
                    for s, o in cols if v1.get((s, o)) and v2.get((s, o))]
            if grow:
                print('growth %d-%d, %s: %s' % (n1, n2, what, ', '.join(grow)))


if __name__ == '__main__':
    main()
