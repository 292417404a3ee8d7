#!/usr/bin/env python3
"""Peer benchmark: the same models linearized by mblin and by another tool in one run, so the
ratios stay measured (docs/benchmarks.md keeps the table).

MuJoCo (Debian libmujoco-dev, `make bench-setup`; BUILD/bench/peer_mujoco): the hanging chain of
bench/models/chain.py, N = 2..96 links, linearized at the straight-down equilibrium. Per point:
mblin's sweep re-linearization (process CPU time per call, median over batches; BUILD/bench/bench_relin: mbl_relinearize, exact Jacobians, the
state-space model and M, C, K) against MuJoCo's mjd_transitionFD (centered finite differences of
one time step). Eigenvalues: mblin's (`mblin linearize --json`) against MuJoCo's recovered from its
discrete A (peer_mujoco); for N <= 6 both against the closed form of the chain (mpmath
eigenvalues of K x = w^2 M x, 30 digits, M and K of the uniform-bar chain written out below).

SymPy (python3-sympy; bench/peer_sympy_fourbar.py): the N-loop four-bar of examples/fourbar.py,
N = 1..20 (--sympy), formulated by KanesMethod in rocker and coupler angles and linearized by its
Linearizer at mblin's equilibrium; SymPy's CPU time for formulation, linearization and
eigenvalues against the CPU time of the whole `mblin linearize` process (parse, formulate,
equilibrium, linearization, eigenvalues), and the relative difference of the frequencies.

usage: bench/peers.py BUILD_DIR [--sizes 2,4,8,16,32,64,96] [--repeats 400] [--sympy 1,2,3,5,10,20]
       [--sympy-timeout 1800] (--sizes "" or --sympy "" skips that peer)
"""
import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", MBLIN_BENCH_CLOCK="cpu")  # CPU time: the machine is shared


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def chain_exact(N, m=1.0, l=1.0, g=9.81):
    """Closed-form small-oscillation frequencies of the chain of uniform bars (angles theta_j from
    the vertical): the centre of bar k moves by a_k . theta' with a_k[j] = l (j < k), l/2 (j = k);
    M = sum_k m a_k a_k^T + (m l^2 / 12) I; K = diag(m g l (N - j - 1/2)). Needs mpmath."""
    import mpmath as mp
    mp.mp.dps = 30
    M = mp.zeros(N, N)
    for k in range(N):
        a = [l if j < k else (l / 2 if j == k else 0) for j in range(N)]
        for i in range(N):
            for j in range(N):
                M[i, j] += m * a[i] * a[j]
        M[k, k] += m * l * l / 12
    K = mp.diag([m * g * l * (N - j - 0.5) for j in range(N)])
    w2 = mp.eig(M ** -1 * K, left=False, right=False)
    return sorted(float(mp.sqrt(mp.re(x))) for x in w2)


def freqs(eigs):
    """The positive imaginary parts (rad/s), ascending."""
    return sorted(im for re_, im in eigs if im > 0)


def relerr(a, b):
    if len(a) != len(b) or not a:
        return float("nan")
    return max(abs(x - y) / abs(y) for x, y in zip(a, b))


def cpu_of(cmd):
    """CPU time (user + system, microseconds resolution) of a whole process, and its stdout."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p.stdout


def sympy_peer(a, mblin, tmp):
    print()
    print("| N | mblin whole process CPU [s] | SymPy KanesMethod + Linearizer CPU [s] | SymPy / mblin | "
          "frequency difference |")
    print("|---|---|---|---|---|")
    for N in [int(x) for x in a.sympy.split(",")]:
        y = os.path.join(tmp, "fourbar%d.yaml" % N)
        with open(y, "w") as f:
            subprocess.run([sys.executable, os.path.join(root, "examples", "fourbar.py"), str(N)], stdout=f, check=True)
        runs = [cpu_of([mblin, "linearize", "--json", y]) for _ in range(5)]
        tm = sorted(r[0] for r in runs)[2]
        js = json.loads(runs[0][1])
        q = js["operating_point"]["q"]
        xs, ys = q[0:2 * (N + 1):2], q[1:2 * (N + 1):2]
        ang = [math.atan2(ys[i], xs[i] - i) for i in range(N + 1)]
        ang += [math.atan2(ys[i] - ys[i - 1], xs[i] - xs[i - 1]) for i in range(1, N + 1)]
        try:
            p = subprocess.run([sys.executable, os.path.join(here, "peer_sympy_fourbar.py"), str(N), json.dumps(ang)],
                               capture_output=True, text=True, env=ENV, timeout=a.sympy_timeout)
        except subprocess.TimeoutExpired:
            print("| %d | %.3f | > %d (stopped) | > %.0f | - |" % (N, tm, a.sympy_timeout, a.sympy_timeout / tm))
            break
        if p.returncode != 0:
            print("| %d | %.3f | failed: %s | - | - |" % (N, tm, p.stderr.strip().splitlines()[-1][:80]))
            continue
        r = json.loads(p.stdout)
        err = relerr(freqs(r["eig"]), freqs([(e["re"], e["im"]) for e in js["eigenvalues"]]))
        print("| %d | %.4f | %.2f | %.0f | %.1e |" % (N, tm, r["cpu"], r["cpu"] / tm, err))
        sys.stdout.flush()



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--sizes", default="2,4,8,16,32,64,96")
    ap.add_argument("--repeats", type=int, default=400)
    ap.add_argument("--sympy", default="1,2,3,5,10,20")
    ap.add_argument("--sympy-timeout", type=int, default=1800)
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    relin = os.path.join(a.build, "bench", "bench_relin")
    peer = os.path.join(a.build, "bench", "peer_mujoco")
    if a.sizes and not os.path.exists(peer):
        raise SystemExit("no %s: install libmujoco-dev (make bench-setup) and rebuild" % peer)
    with tempfile.TemporaryDirectory() as tmp:
        if a.sizes:
            mujoco_peer(a, mblin, relin, peer, tmp)
        if a.sympy:
            sympy_peer(a, mblin, tmp)


def mujoco_peer(a, mblin, relin, peer, tmp):
    print("| N | mblin sweep [us] | mblin one-shot [us] | MuJoCo mjd_transitionFD [us] | MuJoCo / mblin sweep | "
          "MuJoCo eig. error vs mblin | mblin eig. error vs closed form |")
    print("|---|---|---|---|---|---|---|")
    if True:
        for N in [int(x) for x in a.sizes.split(",")]:
            y, x = os.path.join(tmp, "chain%d.yaml" % N), os.path.join(tmp, "chain%d.xml" % N)
            with open(y, "w") as f:
                subprocess.run([sys.executable, os.path.join(here, "models", "chain.py"), str(N)], stdout=f, check=True)
            with open(x, "w") as f:
                subprocess.run([sys.executable, os.path.join(here, "models", "chain.py"), str(N), "--mujoco"], stdout=f,
                               check=True)
            out = run([relin, y, str(a.repeats)])
            sweep = float(re.search(r"sweep .*?median ([0-9.]+) us", out).group(1))
            oneshot = float(re.search(r"one-shot .*?median ([0-9.]+) us", out).group(1))
            out = run([peer, x, str(a.repeats)])
            tmj = float(re.search(r"median ([0-9.]+) us", out).group(1))
            emj = freqs([tuple(map(float, l.split()[1:3])) for l in out.splitlines() if l.startswith("eig ")])
            js = json.loads(run([mblin, "linearize", "--json", y]))
            emb = freqs([(e["re"], e["im"]) for e in js["eigenvalues"]])
            exact = "-"
            if N <= 6:
                try:
                    exact = "%.1e" % relerr(emb, chain_exact(N))
                except ImportError:
                    exact = "(no mpmath)"
            print("| %d | %.1f | %.1f | %.1f | %.1f | %.1e | %s |" % (N, sweep, oneshot, tmj, tmj / sweep,
                                                                    relerr(emj, emb), exact))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
