#!/usr/bin/env python3
"""Two golden dumps compared number by number, for a change meant to move results at rounding.

    python3 tests/golden/golden.py OLD/mblin --dump /tmp/old     (each build, from the project root)
    python3 tests/golden/golden.py NEW/mblin --dump /tmp/new
    python3 tests/golden/numdiff.py /tmp/old /tmp/new [--rtol 1e-9] [--list]

A change that reorders a sum (another node order, another factorization's pivots) changes the
last bits of results the way another OpenBLAS kernel does; docs/linearization.md ("Results on
every machine") states the tolerance such results keep: 1e-9 relative. This reads every pair of
outputs with the same command (the dump's first line), splits each into text and numbers, and
requires:

- the same text between the numbers (words, names, punctuation, the exit status);
- each pair of numbers equal to RTOL relative to the larger magnitude, or to RTOL times the
  largest magnitude in that output (entries that are zero up to rounding: 1e-17 against -3e-18),
  or to one unit of the last digit either side printed (a rounded 6-digit table);
- numbers printed as integers (counts, sizes, indices, iterations) equal, unless they are part of
  a run of numbers that differ within the tolerance above.

--ignore NAME (repeatable) passes the numbers that a change means to move: a JSON field
("condition": the number after `"condition": `) or a text label (the number after
`condition estimate `); say in the commit which and why. It prints each output that differs
beyond that with its first offending pair, then
"N passed, M failed" (outputs that differ in their bytes; identical outputs are not counted).
Exit 0 when none failed. It is the check that justifies `golden.py --update`; it does not
replace reading what changed.
"""
import argparse
import os
import re
import sys

NUM = re.compile(rb'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b', re.I)
TIMING = re.compile(rb'("[a-z_]*seconds[a-z_]*": *)-?[0-9.eE+-]+')


def split(data):
    data = TIMING.sub(rb'\1<time>', data)
    text, nums, last = [], [], 0
    for m in NUM.finditer(data):
        text.append(data[last:m.start()])
        nums.append(m.group(0))
        last = m.end()
    text.append(data[last:])
    return text, nums


def last_digit(tok):
    """One unit of the last printed digit of tok (b'1.2345e+03' -> 0.1)."""
    s = tok.lower().lstrip(b'+-')
    exp = 0
    if b'e' in s:
        s, e = s.split(b'e')
        exp = int(e)
    if b'.' in s:
        exp -= len(s.split(b'.')[1])
    return 10.0 ** exp


def ignored(text, names):
    t = text.rstrip()
    return any(t.endswith(b'"%s":' % n.encode()) or t.endswith(n.encode()) for n in names)


def compare(a, b, rtol, names=()):
    ta, na = split(a)
    tb, nb = split(b)
    if len(na) != len(nb):
        return "%d numbers against %d" % (len(na), len(nb))
    fa = [float(x) for x in na]
    fb = [float(x) for x in nb]
    finite = [abs(x) for x in fa + fb if x == x and abs(x) != float('inf')]
    scale = max(finite) if finite else 0.0
    for i, (x, y) in enumerate(zip(fa, fb)):
        if ta[i] != tb[i]:
            # a sign moved into the text? only the text before the number may differ by it
            if ta[i].rstrip(b'-+') != tb[i].rstrip(b'-+'):
                return "text differs before number %d: %r / %r" % (i, ta[i][-60:], tb[i][-60:])
        if na[i] == nb[i] or x == y or ignored(ta[i], names):
            continue
        if x != x or y != y or abs(x) == float('inf') or abs(y) == float('inf'):
            return "number %d: %s / %s" % (i, na[i].decode(), nb[i].decode())
        d = abs(x - y)
        ulp = max(last_digit(na[i]), last_digit(nb[i]))
        if d <= rtol * max(abs(x), abs(y)) or d <= rtol * scale or d <= 1.0000001 * ulp:
            continue
        ctx = ta[i][-50:].decode(errors='replace')
        return "number %d: %s / %s (after %r)" % (i, na[i].decode(), nb[i].decode(), ctx)
    if ta[-1] != tb[-1]:
        return "text differs at the end: %r / %r" % (ta[-1][-60:], tb[-1][-60:])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('--rtol', type=float, default=1e-9)
    ap.add_argument('--list', action='store_true', help='also list the outputs that differ within tolerance')
    ap.add_argument('--ignore', action='append', default=[], help='a JSON field or text label whose numbers may move')
    a = ap.parse_args()

    def load(d):
        out = {}
        for f in sorted(os.listdir(d)):
            with open(os.path.join(d, f), 'rb') as fh:
                data = fh.read()
            cmd = data.split(b'\n', 1)[0]
            out[cmd] = data
        return out

    old, new = load(a.old), load(a.new)
    passed = failed = 0
    for cmd in old:
        if cmd not in new:
            print("MISSING  %s" % cmd.decode())
            failed += 1
            continue
        if TIMING.sub(b'', old[cmd]) == TIMING.sub(b'', new[cmd]):
            continue
        why = compare(old[cmd], new[cmd], a.rtol, a.ignore)
        if why:
            print("FAILED   %s: %s" % (cmd.decode(), why))
            failed += 1
        else:
            if a.list:
                print("within   %s" % cmd.decode())
            passed += 1
    for cmd in new:
        if cmd not in old:
            print("NEW      %s" % cmd.decode())
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
