#!/usr/bin/env python3
"""The symbolic command's numbers as exact rationals (issue 70, item 8): a coefficient whose
decimals do not end (1/3 of the double pendulum's mass matrix) prints as p/q, not as
0.3333333333333333, in the text and the JSON formats (terminating decimals such as 0.5 stay).

Source 002's double pendulum of natural coordinates (examples/double_pendulum_natural.yaml): each
entry of M-hat and K-hat is evaluated here in exact rational arithmetic (every number of the text
read as a Fraction, the parameters at rational values) and must equal Ge's closed forms exactly:
M = [[(m1 + m2)/3, m2/6], [m2/6, m2/3]] (Eq. 55) and K with the sign of the README's errata,
[[g (m1 L2 + m2 (2 L2 + L1)) / (2 L1 L2), -m2 g / (2 L2)], [-m2 g / (2 L2), m2 g / (2 L2)]].
With the decimals the entries are off by 2e-17 relative (0.3333333333333333 is not 1/3), so the
check fails before the item. A: every number of A is a rational or a short decimal. The header's
check line (its tolerance) is the one docs/symbolic.md shows, and the default the page states.
usage: symbolic_rational_test.py PATH_TO_MBLIN (from the repository root)"""
import json
import os
import re
import subprocess
import sys
from fractions import Fraction as Fr
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
MODEL = "examples/double_pendulum_natural.yaml"
NUM = re.compile(r"(?<![A-Za-z_0-9.])(\d+\.?\d*(?:[eE][-+]?\d+)?)")
SETS = [dict(m1=Fr(3, 2), m2=Fr(7, 3), L1=Fr(5, 4), L2=Fr(2, 7), g=Fr(981, 100)),
        dict(m1=Fr(11), m2=Fr(1, 9), L1=Fr(13, 5), L2=Fr(3), g=Fr(1))]


def exact(text, p):
    """the expression text evaluated exactly: numbers as Fractions, ^ as power"""
    py = NUM.sub(lambda m: 'Fr("%s")' % m.group(1), text).replace("^", "**")
    return eval(py, {"Fr": Fr, "__builtins__": {}}, dict(p))  # noqa: S307 (the tool's own output)


def closed(p):
    m1, m2, L1, L2, g = p["m1"], p["m2"], p["L1"], p["L2"], p["g"]
    M = [[(m1 + m2) / 3, m2 / 6], [m2 / 6, m2 / 3]]
    K = [[g * (m1 * L2 + m2 * (2 * L2 + L1)) / (2 * L1 * L2), -m2 * g / (2 * L2)], [-m2 * g / (2 * L2), m2 * g / (2 * L2)]]
    return M, K


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def text_matrix(out, title):
    lines = out.split("\n")
    for i, l in enumerate(lines):
        if l.startswith(title + " ("):
            rows = []
            for r in lines[i + 1:]:
                if not r.startswith("  ["):
                    break
                rows.append([e.strip() for e in r.strip()[1:-1].split(", ")])
            return rows
    return None


rc, out, err = run("symbolic", MODEL)
check(rc == 0, f"symbolic {MODEL}: exit {rc} {err.strip()}")
rc, js, err = run("symbolic", MODEL, "--format", "json")
check(rc == 0, f"symbolic --format json: exit {rc} {err.strip()}")
d = json.loads(js) if rc == 0 else {}
forms = [("text", text_matrix(out, "M-hat"), text_matrix(out, "K-hat")), ("json", d.get("M"), d.get("K"))]
for name, M, K in forms:
    ok = M is not None and K is not None and len(M) == 2 and len(K) == 2
    check(ok, f"{name}: M-hat and K-hat present")
    if not ok:
        continue
    check(M[0][1] == "1/6*m2" and M[1][1] == "1/3*m2", f"{name}: M-hat prints 1/6*m2, 1/3*m2 ({M[0][1]}, {M[1][1]})")
    for p in SETS:
        Mc, Kc = closed(p)
        for X, Xc, what in ((M, Mc, "M-hat"), (K, Kc, "K-hat")):
            bad = [(i, j, X[i][j]) for i in range(2) for j in range(2) if exact(X[i][j], p) != Xc[i][j]]
            check(not bad, f"{name}: {what} equals source 002's closed form exactly at {p} (off: {bad})")
A = text_matrix(out, "A") or []
longs = [n for row in A for e in row for n in NUM.findall(e) if len(n.replace(".", "").lstrip("0")) > 12]
check(A and not longs, f"text: no long decimals left in A ({longs[:3]})")

# docs/symbolic.md shows this command's header: its check line (the tolerance) is the tool's, and the
# tolerance is the default the page states in words ("within 1e-6 (`MBL_SYMLIN_VERIFY_TOL`)")
page = open("docs/symbolic.md").read()
stated = re.search(r"within (\S+) \(`MBL_SYMLIN_VERIFY_TOL`\)", page)
shown = [l.strip() for l in page.split("$ mblin symbolic " + MODEL, 1)[-1].split("\n") if "checked against" in l][:1]
printed = [l for l in out.split("\n") if "checked against" in l][:1]
check(shown and shown == printed, f"docs/symbolic.md's example header {shown} is the tool's {printed}")
tol = re.search(r"within (\S+)$", printed[0]) if printed else None
check(stated and tol and float(tol.group(1)) == float(stated.group(1)),
      f"the header's tolerance {tol and tol.group(1)} is the documented default {stated and stated.group(1)}")

sys.exit(finish("symbolic_rational_test"))
