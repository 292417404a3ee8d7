#!/usr/bin/env python3
"""The command line runs BLAS on one thread from the start: OpenBLAS's worker thread used to be
created by its load-time constructor before main capped the count, and spun. `mblin --version`
(no work of its own, no thread of its own) must create no thread unless the user asks for BLAS
threads; with OPENBLAS_NUM_THREADS=2 OpenBLAS's worker must appear (the check sees threads).
Needs strace. usage: startup_test.py MBLIN"""
import os
import subprocess
import sys


def clones(mblin, env):
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", mblin, "--version"], env=env,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit("strace failed: %s" % p.stderr)
    return sum(1 for l in p.stderr.splitlines() if "clone" in l and "CLONE_THREAD" in l)


def main():
    mblin = sys.argv[1]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    ok = True
    n = clones(mblin, env)
    if n != 0:
        print("FAIL: mblin --version created %d thread(s) without OPENBLAS_NUM_THREADS" % n)
        ok = False
    n2 = clones(mblin, dict(env, OPENBLAS_NUM_THREADS="2"))
    if n2 < 1:
        print("FAIL: with OPENBLAS_NUM_THREADS=2 no worker thread was seen (%d)" % n2)
        ok = False
    print("startup: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
