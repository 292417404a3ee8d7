#!/usr/bin/env python3
"""Draw the eigenvalues of the Whipple bicycle built from bodies (examples/mech/whipple_bicycle.yaml)
against the forward speed, as Fig. 3 of Meijaard et al. (2007): the real parts (solid) and the
imaginary part of the weave pair (dashed), with the weave and capsize speeds marked.

    python3 examples/mech/whipple_bicycle_speeds.py build/mblin docs/mech/whipple_bicycle_speeds.svg

Runs `mblin sweep ... --param v=0:10:201` (the four lean/steer eigenvalues tracked over speed;
the six zero eigenvalues are left out) and writes an SVG with the standard library only. The
speeds marked are where the weave pair's and the capsize eigenvalue's real parts change sign,
from a parabola through the sweep's points around the change (4.2924 and 6.0243 m/s; tests/mech/test_rolling_wheel.c
finds them to 1e-8: 4.292382, 6.024262).
"""
import csv
import os
import subprocess
import sys
import tempfile

MBLIN, OUT = sys.argv[1], sys.argv[2]
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "whipple_bicycle.yaml")

with tempfile.TemporaryDirectory() as d:
    subprocess.run([MBLIN, "sweep", MODEL, "--param", "v=0:10:201", "-o", d], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "sweep.csv")) as f:
        rows = list(csv.DictReader(f))

# branches: (v, re, im) per branch, the zero modes (|s| < 1e-4 everywhere) left out
br = {}
for r in rows:
    br.setdefault(int(r["branch"]), []).append((float(r["v"]), float(r["re"]), float(r["im"])))
br = {b: p for b, p in br.items() if max(abs(complex(x[1], x[2])) for x in p) > 1e-4}


def crossing(pts):
    """the speed where the real part changes sign: the root of the parabola through the points
    around the change (Lagrange form, solved by Newton from the chord's root)"""
    for i in range(1, len(pts) - 1):
        (v0, r0, _), (v1, r1, _) = pts[i - 1], pts[i]
        if r0 * r1 < 0:
            (va, ra, _), (vb, rb, _), (vc, rc, _) = pts[i - 1], pts[i], pts[i + 1]
            def f(v):
                return (ra * (v - vb) * (v - vc) / ((va - vb) * (va - vc)) + rb * (v - va) * (v - vc) / ((vb - va) * (vb - vc))
                        + rc * (v - va) * (v - vb) / ((vc - va) * (vc - vb)))
            v = v0 - r0 * (v1 - v0) / (r1 - r0)
            for _ in range(20):
                h = 1e-7
                v -= f(v) / ((f(v + h) - f(v - h)) / (2 * h))
            return v
    return None


weave = capsize = None
for p in br.values():
    c = crossing(p)
    if c is None:
        continue
    if any(abs(x[2]) > 0.5 for x in p if abs(x[0] - c) < 0.2):
        weave = c
    else:
        capsize = c

W, H, L, R, T, B = 640, 420, 60, 20, 30, 50
vmin, vmax, ymin, ymax = 0.0, 10.0, -10.0, 10.0


def X(v):
    return L + (v - vmin) / (vmax - vmin) * (W - L - R)


def Y(y):
    return T + (ymax - max(ymin, min(ymax, y))) / (ymax - ymin) * (H - T - B)


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>']
for v in range(0, 11):
    out.append(f'<line x1="{X(v):.1f}" y1="{T}" x2="{X(v):.1f}" y2="{H - B}" stroke="#eee"/>')
    out.append(f'<text x="{X(v):.1f}" y="{H - B + 16}" text-anchor="middle">{v}</text>')
for y in range(-10, 11, 5):
    out.append(f'<line x1="{L}" y1="{Y(y):.1f}" x2="{W - R}" y2="{Y(y):.1f}" stroke="{"#888" if y == 0 else "#eee"}"/>')
    out.append(f'<text x="{L - 6}" y="{Y(y) + 4:.1f}" text-anchor="end">{y}</text>')
out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">forward speed v (m/s)</text>')
out.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 16 {(T + H - B) / 2})">'
           'eigenvalue (1/s): real part solid, weave imaginary part dashed</text>')
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
def polyline(vy, color, extra=""):
    """the pieces of a curve inside the plot (a curve leaving it is cut, not clamped)"""
    piece = []
    for v, y in vy + [(None, None)]:
        if v is not None and ymin <= y <= ymax:
            piece.append(f"{X(v):.1f},{Y(y):.1f}")
            continue
        if len(piece) > 1:
            out.append(f'<polyline points="{" ".join(piece)}" fill="none" stroke="{color}" {extra}/>')
        piece = []


for k, (b, p) in enumerate(sorted(br.items())):
    polyline([(v, re) for v, re, _ in p], colors[k % 4], 'stroke-width="1.5"')
    if any(im > 0.5 for _, _, im in p):
        polyline([(v, im) for v, _, im in p if im > 0], colors[k % 4], 'stroke-dasharray="5,3"')
for name, v in (("weave", weave), ("capsize", capsize)):
    if v is None:
        continue
    out.append(f'<line x1="{X(v):.1f}" y1="{T}" x2="{X(v):.1f}" y2="{H - B}" stroke="black" stroke-dasharray="2,2"/>')
    out.append(f'<text x="{X(v) + 4:.1f}" y="{Y(-6) if name == "weave" else Y(-7)}">{name} speed {v:.4f} m/s</text>')
out.append(f'<text x="{W - R}" y="{Y(-9)}" text-anchor="end">self-stable between {weave:.4f} and {capsize:.4f} m/s</text>')
out.append("</svg>")
with open(OUT, "w") as f:
    f.write("\n".join(out) + "\n")
print(f"weave speed {weave:.6f}, capsize speed {capsize:.6f} m/s -> {OUT}")
