#!/usr/bin/env python3
"""The scaling model of docs/parallel.md for a sweep of N points on P ranks:

    T(P) = T0 + (N / P) t_p + T_g + T_track,   T_g = a (P - 1) + V / B,   V = N (P - 1) / P * b

from the measured per-point CPU t_p, the bytes b gathered per point, rank 0's tracking time per
point and the per-rank setup T0 (build/bench/bench_sweep_mpi prints them), for a network of
latency a per part and bandwidth B into rank 0.
usage: mpi_scaling.py T_P_US B_BYTES TRACK_US T0_MS [A_US=50] [BW_GBS=1.2]"""
import sys

if len(sys.argv) < 5:
    sys.exit(__doc__)
tp, b, tr, t0 = (float(x) for x in sys.argv[1:5])
a = float(sys.argv[5]) if len(sys.argv) > 5 else 50.0
bw = float(sys.argv[6]) if len(sys.argv) > 6 else 1.2
tp, tr, t0, a, bw = tp * 1e-6, tr * 1e-6, t0 * 1e-3, a * 1e-6, bw * 1e9


def T(n, p):
    g = a * (p - 1) + n * (p - 1) / p * b / bw if p > 1 else 0.0
    return t0 + n / p * tp + g + n * tr, g


for n in (1e4, 1e6):
    t1, _ = T(n, 1)
    print(f"N = {n:.0e}: T(1) = {t1:.3f} s; limit (P -> inf) {t1 / (t0 + n * tr):.1f}")
    for p in (2, 4, 8, 16, 64, 256):
        if p > max(1, n / 16):
            break
        tpp, g = T(n, p)
        print(f"  P = {p:4d}: T = {tpp:8.3f} s (gather {g * 1e3:7.1f} ms, {n * (p - 1) / p * b / 1e6:7.1f} MB)  S = {t1 / tpp:5.2f}")
