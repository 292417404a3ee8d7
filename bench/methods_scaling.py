#!/usr/bin/env python3
"""Time every linearization method against model size (docs/methods.md).

Two families, in the spirit of source 001 Tables 1 and 4:
  fourbar  the N-loop four-bar of source 001 Sec. 4.1 (n = 2N + 3, m = 2N + 2: heavily constrained)
  chain    a chain of N point-mass pendulums whose tip slides on the vertical line x = 0
           (n = N, m = 1: lightly constrained)
Runs `mblin compare MODEL --json --repeat R` (each method R times, median; OPENBLAS_NUM_THREADS=1
so that the timings do not depend on the load of the other core) and prints a Markdown table of
milliseconds per method.

usage: bench/methods_scaling.py [--mblin build/mblin] [--sizes 1,5,10,20,50] [--family fourbar|chain|both]
                               [--repeat 5]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def chain_model(N):
    lines = ["model: dae", f"name: {N}-pendulum chain closed by one constraint",
             "parameters: {m: 1, l: 1, g: 9.81}", "coordinates:"]
    lines += [f"  th{i}: 0.0" for i in range(1, N + 1)]
    lines.append("variables:")
    for i in range(1, N + 1):
        px = f"x{i-1} + " if i > 1 else ""
        py = f"y{i-1} - " if i > 1 else "-"
        lines.append(f'  x{i}: "{px}l*sin(th{i})"')
        lines.append(f'  y{i}: "{py}l*cos(th{i})"')
    ke = " + ".join(f"der(x{i})^2 + der(y{i})^2" for i in range(1, N + 1))
    pe = " + ".join(f"y{i}" for i in range(1, N + 1))
    lines.append(f'kinetic_energy: "0.5*m*({ke})"')
    lines.append(f'potential_energy: "m*g*({pe})"')
    lines.append("constraints:")
    lines.append(f'  - "x{N}"')
    lines.append("linearize:\n  at: equilibrium")
    return "\n".join(lines) + "\n"


def fourbar_model(N):
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", "fourbar.py"), str(N)],
                          check=True, capture_output=True, text=True).stdout


def run(mblin, text, repeat):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        out = subprocess.run([mblin, "compare", path, "--json", "--repeat", str(repeat)], capture_output=True,
                             text=True, env=env)
        if out.returncode:
            return None, out.stderr.strip()
        return json.loads(out.stdout), ""
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mblin", default=os.path.join(ROOT, "build", "mblin"))
    ap.add_argument("--sizes", default="1,5,10,20,50,100")
    ap.add_argument("--family", default="both", choices=["fourbar", "chain", "both"])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    fams = ["fourbar", "chain"] if a.family == "both" else [a.family]
    for fam in fams:
        header = None
        for N in sizes:
            text = fourbar_model(N) if fam == "fourbar" else chain_model(N)
            res, err = run(a.mblin, text, a.repeat)
            if res is None:
                print(f"| {fam} N={N} | failed: {err} |")
                continue
            meths = [m["method"] for m in res["methods"]]
            if header is None:
                header = meths
                print(f"\n{fam}: milliseconds per method (median of {a.repeat}), max relative deviation from augmented\n")
                print("| N | n | m | " + " | ".join(meths) + " | max dev (exact) |")
                print("|---" * (4 + len(meths)) + "|")
            n, m = (2 * N + 3, 2 * N + 2) if fam == "fourbar" else (N, 1)
            cells = []
            dev = 0.0
            for mm in res["methods"]:
                cells.append(f"{1e3 * mm['seconds']:.3f}" if mm["ok"] else "refused")
                if mm["ok"] and mm["method"] not in ("penalty", "fd") and mm["max_rel_deviation"] is not None:
                    dev = max(dev, mm["max_rel_deviation"])
            print(f"| {N} | {n} | {m} | " + " | ".join(cells) + f" | {dev:.1e} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
