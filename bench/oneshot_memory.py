#!/usr/bin/env python3
"""The one-shot N-loop four-bar (issue 31, item 2): `mblin linearize fb.yaml --json`, with and
without --forward-jacobian, for two or more builds run alternately (interleaved run by run): user +
system CPU and peak RSS of the child (os.wait4), medians (min-max) of --runs runs, the 1-minute
load average over each row, and whether the outputs are byte-identical between the builds.

    python3 bench/oneshot_memory.py /work/before19/mblin build/mblin --sizes 1000,3000,10000 --runs 5

A run's system time depends on the run before it: the pages (huge pages above all) that process
freed are what the next one gets, warm or not. Builds whose memory differs (another huge-page
policy) then bias each other when interleaved one run each: the N = 10^4 four-bar took 0.90 s run
after itself and 1.16 s after a build that used fewer huge pages (docs/benchmarks.md, i20-load2).
--after-self runs each build twice in a row and keeps the second run (after itself).
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile


def run(binary, model, flag, out_path):
    args = [binary, 'linearize', model, '--json'] + ([flag] if flag else [])
    with open(out_path, 'wb') as out:
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    with open(out_path, 'rb') as f:
        digest = hashlib.md5(f.read()).hexdigest()
    return ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0, digest, status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('builds', nargs='+', help='mblin binaries (the first is the reference for identical outputs)')
    ap.add_argument('--sizes', default='1000,3000,10000')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--after-self', action='store_true',
                    help='run each build once unmeasured before each measured run (after itself, not another build)')
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    gen = os.path.join(here, '..', 'examples', 'fourbar.py')
    tmp = tempfile.mkdtemp(prefix='oneshot_memory_')
    print('| N | path | ' + ' | '.join('%s: CPU [s] (user, sys) | RSS [MiB]' % b for b in a.builds) +
          ' | load average | outputs |')
    print('|---|---|' + '---|---|' * len(a.builds) + '---|---|')
    for n in [int(x) for x in a.sizes.split(',')]:
        model = os.path.join(tmp, 'fb%d.yaml' % n)
        with open(model, 'w') as f:
            subprocess.run([sys.executable, gen, str(n)], stdout=f, check=True)
        for flag in ['', '--forward-jacobian']:
            res = {b: [] for b in a.builds}
            loads = []
            for _ in range(a.runs):
                for b in a.builds:
                    if a.after_self:
                        run(b, model, flag, os.path.join(tmp, 'out.json'))
                    res[b].append(run(b, model, flag, os.path.join(tmp, 'out.json')))
                loads.append(os.getloadavg()[0])
            cells = []
            for b in a.builds:
                c = [u + s for u, s, _, _, _ in res[b]]
                m = [x[2] for x in res[b]]
                cells.append('%.3f (%.2f-%.2f) (%.3f, %.3f) | %.1f (%.1f-%.1f)' % (
                    statistics.median(c), min(c), max(c), statistics.median(x[0] for x in res[b]),
                    statistics.median(x[1] for x in res[b]), statistics.median(m), min(m), max(m)))
            ref = set(x[3] for x in res[a.builds[0]])
            same = len(ref) == 1 and all(set(x[3] for x in res[b]) == ref for b in a.builds)
            print('| %d | %s | %s | %.1f-%.1f | %s |' % (n, flag or 'default', ' | '.join(cells), min(loads), max(loads),
                                                       'identical' if same else 'DIFFER'), flush=True)


if __name__ == '__main__':
    main()
