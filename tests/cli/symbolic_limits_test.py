#!/usr/bin/env python3
"""`mblin codegen` and `mblin symbolic` refuse a model too large before the work (issue 30, item 17).

Before the fix `codegen examples/flexible_pendulum_beams.yaml` built for 328 s and 2.7 GB before
it refused, and `symbolic --max-size 100` on examples/mech/spatial_beam_pendulum.yaml gave no answer
in 30 s. Now the expression nodes are estimated from the model's sizes (coordinates, constraints,
states, the nonzeros of the numeric M-hat and H) before any is built, and the refusal names the
estimate and the option that raises the limit (--max-nodes, --max-size). A model just under the
limit is still generated: examples/flexible_pendulum_np5.yaml with --max-nodes at its estimate.
(The subprocess timeout only keeps the old binary from running for minutes; the test asserts the
refusals and their messages.)

usage: symbolic_limits_test.py path/to/mblin
"""
import re
import subprocess
import sys

MBLIN = sys.argv[1]
FAILS = []


def run(args):
    try:
        p = subprocess.run([MBLIN] + args, capture_output=True, text=True, timeout=90)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "(no answer in 90 s)"


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def refused(args, option):
    rc, out, err = run(args)
    m = re.search(r"would have about (\d+) expression nodes \(estimated from (\d+) coordinates, (\d+) constraints, "
                  r"(\d+) states; limit (\d+)\): too large \(" + re.escape(option) + r" raises the limit\)", err)
    check(rc == 1 and m and err.count("\n") == 1 and not out,
          f"mblin {' '.join(args)}: exit {rc}, {err.strip()!r}")
    return int(m.group(1)) if m else None


def main():
    est = refused(["codegen", "examples/flexible_pendulum_beams.yaml", "--lang", "c"], "--max-nodes")
    check(est is None or est > 2000000, f"flexible_pendulum_beams: estimate {est}")
    refused(["symbolic", "examples/mech/spatial_beam_pendulum.yaml", "--max-size", "100"], "--max-size")
    # just under and just over the limit
    np5 = "examples/flexible_pendulum_np5.yaml"
    est = refused(["codegen", np5, "--lang", "c", "--max-nodes", "1000"], "--max-nodes")
    if est:
        refused(["codegen", np5, "--lang", "c", "--max-nodes", str(est - 1)], "--max-nodes")
        rc, out, err = run(["codegen", np5, "--lang", "c", "--max-nodes", str(est)])
        check(rc == 0 and "void linear_model(" in out and not err, f"{np5} at --max-nodes {est}: exit {rc} {err!r}")
    rc, out, err = run(["codegen", np5, "--lang", "c", "--max-nodes", "0"])
    check(rc == 2 and "--max-nodes" in err, f"--max-nodes 0: exit {rc} {err!r}")
    if FAILS:
        raise SystemExit(f"{len(FAILS)} failures")
    print("symbolic_limits_test: ok")


main()
