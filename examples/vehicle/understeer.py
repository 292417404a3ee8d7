#!/usr/bin/env python3
"""The understeer curve and the yaw/lateral eigenvalues of the single-track car in a steady turn
(examples/vehicle/single_track_turn.yaml), by `mblin linearize --at trim` at speeds from 5 to 40 m/s
on a 100 m circle. Writes docs/vehicle/single_track_turn.svg: left, the steer angle the trim finds
against the lateral acceleration u r (dots) and the closed form L/Rc + K_us a_y (line); right, the
real and imaginary parts of the lateral/yaw eigenvalue pair against the speed (dots) and those of
the closed-form 2x2 state matrix (lines).

    python3 examples/vehicle/understeer.py build/mblin        (from the project root)
"""
import cmath
import json
import math
import subprocess
import sys

MBLIN = sys.argv[1] if len(sys.argv) > 1 else "build/mblin"
MODEL = "examples/vehicle/single_track_turn.yaml"
OUT = sys.argv[2] if len(sys.argv) > 2 else "docs/vehicle/single_track_turn.svg"
m, Iz, a, b, Cf, Cr = 1500.0, 2500.0, 1.2, 1.5, 80000.0, 90000.0
L = a + b
K = m / L * (b / Cf - a / Cr)


def closed_eigs(U):
    A = [[-(Cf + Cr) / (m * U), -(a * Cf - b * Cr) / (m * U) - U],
         [-(a * Cf - b * Cr) / (Iz * U), -(a * a * Cf + b * b * Cr) / (Iz * U)]]
    tr, det = A[0][0] + A[1][1], A[0][0] * A[1][1] - A[0][1] * A[1][0]
    s = cmath.sqrt(tr * tr / 4 - det)
    return tr / 2 + s, tr / 2 - s


rows = []
for U in [5.0 + 2.5 * i for i in range(15)]:
    out = subprocess.run([MBLIN, "linearize", MODEL, "--set", "U=%g" % U, "--json", "--no-matrices"],
                         capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    pt = d["operating_point"]
    r = pt["v"][pt["coordinates"].index("theta")]
    delta = pt["inputs"][0]
    ay = pt["outputs"][pt["output_names"].index("ay")]
    # the lateral/yaw pair: not 0 and not +-i r (the path's modes)
    lams = [complex(e["re"], e["im"]) for e in d["eigenvalues"]]
    pair = [z for z in lams if abs(z.real) > 1e-6]
    rows.append((U, r, delta, ay, pair))
    print("U %5.1f  r %.5f  delta %.6f  ay %7.3f  eigenvalues %s" % (U, r, delta, ay,
                                                                     ", ".join("%.5f%+.5fi" % (z.real, z.imag) for z in pair)))

W, H, PAD = 440, 320, 50


def axis(x0, title, xl, yl, xr, yr):
    s = ['<g transform="translate(%d,0)">' % x0,
         '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (PAD, 30, W - PAD - 10, H - 30 - PAD),
         '<text x="%d" y="20" font-size="13" text-anchor="middle">%s</text>' % ((W + PAD) // 2, title),
         '<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>' % ((W + PAD) // 2, H - 12, xl),
         '<text x="14" y="%d" font-size="12" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>'
         % ((H - PAD + 30) // 2, (H - PAD + 30) // 2, yl)]
    for i in range(5):
        xv = xr[0] + (xr[1] - xr[0]) * i / 4
        yv = yr[0] + (yr[1] - yr[0]) * i / 4
        s.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%.3g</text>' % (sx(xv, xr), H - PAD + 14, xv))
        s.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%.3g</text>' % (PAD - 4, sy(yv, yr) + 3, yv))
    return s


def sx(x, xr):
    return PAD + (x - xr[0]) / (xr[1] - xr[0]) * (W - PAD - 10)


def sy(y, yr):
    return H - PAD - (y - yr[0]) / (yr[1] - yr[0]) * (H - 30 - PAD)


svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (2 * W, H),
       '<rect width="100%" height="100%" fill="white"/>']
# left: steer (deg) against lateral acceleration
xr, yr = (0.0, 17.0), (0.0, 6.0)
svg += axis(0, "steer angle in a steady turn, R = 100 m", "lateral acceleration u r (m/s^2)", "steer angle (deg)", xr, yr)
line = " ".join("%.1f,%.1f" % (sx(ay, xr), sy(math.degrees(L / 100.0 + K * ay), yr))
                for ay in [xr[1] * i / 50 for i in range(51)])
svg.append('<polyline points="%s" fill="none" stroke="#1f77b4"/>' % line)
for U, r, delta, ay, pair in rows:
    svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#d62728"/>' % (sx(ay, xr), sy(math.degrees(delta), yr)))
svg.append('<text x="%d" y="48" font-size="11">line: L/R + K_us u r (K_us = %.4f rad s^2/m); dots: trim</text>'
           % (PAD + 6, K))
svg.append('</g>')
# right: eigenvalues against speed
xr2, yr2 = (0.0, 40.0), (-28.0, 8.0)
svg += axis(W, "lateral/yaw eigenvalue pair", "speed U (m/s)", "real (blue), |imag| (green) (1/s)", xr2, yr2)
us = [5.0 + 35.0 * i / 70 for i in range(71)]
for part, col in ((lambda z: z.real, "#1f77b4"), (lambda z: abs(z.imag), "#2ca02c")):
    for k in (0, 1):
        pts = " ".join("%.1f,%.1f" % (sx(U, xr2), sy(max(yr2[0], part(sorted(closed_eigs(U), key=lambda z: (z.real, z.imag))[k])), yr2))
                       for U in us)
        svg.append('<polyline points="%s" fill="none" stroke="%s"/>' % (pts, col))
    for U, r, delta, ay, pair in rows:
        for z in pair:
            svg.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s" stroke="black" stroke-width="0.5"/>'
                       % (sx(U, xr2), sy(max(yr2[0], part(z)), yr2), col))
svg.append('<text x="%d" y="48" font-size="11">lines: 2x2 closed form; dots: the trimmed model</text>' % (PAD + 6))
svg.append('</g></svg>')
with open(OUT, "w") as f:
    f.write("\n".join(svg) + "\n")
print("wrote", OUT)
