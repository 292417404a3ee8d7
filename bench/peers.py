#!/usr/bin/env python3
"""Peer benchmark: the same models linearized by mblin and by another tool in one run, so the
ratios stay measured (docs/benchmarks.md keeps the table).

MuJoCo (Debian libmujoco-dev, `make bench-setup`; BUILD/bench/peer_mujoco): the hanging chain of
bench/models/chain.py, N = 2..96 links, linearized at the straight-down equilibrium. Per point:
mblin's sweep re-linearization (BUILD/bench/bench_relin: mbl_relinearize, exact Jacobians, the
state-space model and M, C, K) against MuJoCo's mjd_transitionFD (centered finite differences of
one time step). Eigenvalues: mblin's (`mblin linearize --json`) against MuJoCo's recovered from its
discrete A (peer_mujoco); for N <= 6 both against the closed form of the chain (mpmath
eigenvalues of K x = w^2 M x, 30 digits, M and K of the uniform-bar chain written out below).

usage: bench/peers.py BUILD_DIR [--sizes 2,4,8,16,32,64,96] [--repeats 400]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--sizes", default="2,4,8,16,32,64,96")
    ap.add_argument("--repeats", type=int, default=400)
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    relin = os.path.join(a.build, "bench", "bench_relin")
    peer = os.path.join(a.build, "bench", "peer_mujoco")
    if not os.path.exists(peer):
        raise SystemExit("no %s: install libmujoco-dev (make bench-setup) and rebuild" % peer)
    print("| N | mblin sweep [us] | mblin one-shot [us] | MuJoCo mjd_transitionFD [us] | MuJoCo / mblin sweep | "
          "MuJoCo eig. error vs mblin | mblin eig. error vs closed form |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
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
