#!/usr/bin/env python3
"""How often `mblin boundary` reaches each closed-form boundary (docs/convergence.md).

    python3 bench/boundary_rates.py path/to/mblin [--mode-flag]

Each boundary of tests/study/test_boundary.c is started from 10 points spread evenly over +-50 % of
the answer and from the answer itself (11 starts). A start counts as reached when the tool exits 0
with the answer to 1e-9 relative; otherwise the first words of its one-line error are tallied.
Run from the project root. The same table for two binaries (before and after a change) is the
measurement of docs/convergence.md."""
import math
import subprocess
import sys

g = 9.81
A1 = 2e-4 + 0.5 * 0.04 ** 2
A2 = 0.01 + 1 * 0.1 ** 2
CASES = [
    # (label, file, sets, param, answer, mode)
    ("Ziegler column, P", "tests/study/boundaries/ziegler_column.yaml", [], "P", (3.5 - math.sqrt(2)) * 20, 0),
    ("Ziegler column, l (P = 40)", "tests/study/boundaries/ziegler_column.yaml", ["P=40"], "l",
     (3.5 - math.sqrt(2)) * 10 / 40, 0),
    ("inverted pendulum, kt", "tests/study/boundaries/inverted_pendulum.yaml", [], "kt", 9.81, 0),
    ("inverted pendulum, kt (damped)", "tests/study/boundaries/inverted_pendulum.yaml", ["c=0.5"], "kt", 9.81, 0),
    ("sleeping top, Omega", "examples/sim/sleeping_top.yaml", [], "Omega", 2 * math.sqrt(A1 * 0.5 * g * 0.04) / 1.5e-4, 0),
    ("sleeping top, Omega (m 1, l 0.1)", "examples/sim/sleeping_top.yaml", ["m=1", "l=0.1", "I1=0.01", "I3=0.004"],
     "Omega", math.sqrt(4 * g * 0.1 * A2) / 0.004, 0),
    ("bead on a hoop, W (damped)", "tests/study/boundaries/bead_on_hoop.yaml", [], "W", math.sqrt(g / 0.5), 0),
    ("bead on a hoop, W (undamped)", "tests/study/boundaries/bead_on_hoop.yaml", ["c=0"], "W", math.sqrt(g / 0.5), 0),
    ("bicycle weave (mode 2)", "examples/whipple_bicycle.yaml", [], "v", 4.29238253634111, 2),
    ("bicycle capsize (mode 1)", "examples/whipple_bicycle.yaml", [], "v", 6.02426201538837, 1),
    ("rolling disc, W", "examples/rolling_disc.yaml", [], "W", math.sqrt(g / 0.9), 0),
    ("rolling disc, W (R 0.5)", "examples/rolling_disc.yaml", ["R=0.5"], "W", math.sqrt(g / 1.5), 0),
]


def main():
    tool = sys.argv[1]
    total = ok_all = 0
    print("| boundary | answer | reached (of 11) | failures |")
    print("|---|---|---|---|")
    for label, path, sets, param, answer, mode in CASES:
        ok, why = 0, {}
        for k in range(11):
            near = answer * (0.5 + k / 9.0) if k < 10 else answer
            cmd = [tool, "boundary", path, "--param", param, "--near", repr(near)]
            for s in sets:
                cmd += ["--set", s]
            if mode:
                cmd += ["--mode", str(mode)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            val = None
            if p.returncode == 0:
                try:
                    val = float(p.stdout.split("\n")[0].split("=")[1])
                except (IndexError, ValueError):
                    val = None
            if val is not None and abs(val - answer) <= 1e-9 * abs(answer):
                ok += 1
            else:
                if val is not None:
                    key = "wrong boundary (%.6g)" % val
                else:
                    msg = (p.stderr.strip().split("\n") or [""])[-1]
                    msg = msg.split(": ", 2)[-1] if "boundary:" in msg or "at " in msg else msg
                    key = " ".join(msg.split()[:7])
                why[key] = why.get(key, 0) + 1
        total += 11
        ok_all += ok
        fails = "; ".join("%d x %s" % (n, w) for w, n in sorted(why.items(), key=lambda t: -t[1]))
        print("| %s | %.12g | %d | %s |" % (label, answer, ok, fails))
    print("| **all** | | **%d of %d** | |" % (ok_all, total))


if __name__ == "__main__":
    main()
