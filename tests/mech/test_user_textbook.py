"""Issue 70's features used on textbook models written from the user docs alone (a new user's review,
session 43), each against a closed form derived here, independent of mblin:

- `mblin sparsity` on a planar slider-crank (tests/mech/slider_crank_sparsity.yaml): every order and
  structural nonzero count made by hand from the constraints' and forces' patterns (below), and its
  one mode against the closed form k (dx_s/dtheta)^2 / M_eff(theta);
- 3-1-3 Euler angles (`orientation: euler313`): the heavy symmetric top sleeping upright
  (tests/mech/sleeping_top_313.yaml; Goldstein Sec. 5.7): the nutation and precession rates, the
  roots of A w^2 - C Omega w + m g l = 0, to 1e-10, and the stability limit Omega^2 = 4 A m g l / C^2
  (a growing pair just below it, none just above, the pair's real part at 186 rad/s against
  sqrt(4 A m g l - C^2 Omega^2) / (2 A));
- natural-coordinate bodies (`type: natural`): a uniform rod and a disc pinned at its rim
  (tests/mech/rod_disc_natural.yaml) against the 2-DOF closed form in the angles, to 1e-10, and
  `mblin symbolic`'s M-hat and K-hat from the bodies against that closed form in the states; the top
  as one spatial natural body (tests/mech/sleeping_top_natural.yaml) against Goldstein; a body
  whose two points coincide in body axes is a one-line error naming them (before: a division by
  zero in the generated kinetic energy's variable '_T_disc').

usage: test_user_textbook.py path/to/mblin"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
REL = 1e-10


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def modes(path, *extra):
    """the eigenvalues (re, im) with im >= 0 of `linearize --json`, by |im|"""
    rc, out, err = run("linearize", path, "--json", *extra)
    check(rc == 0, "linearize %s %s: %s" % (path, extra, err))
    ev = json.loads(out)["eigenvalues"] if rc == 0 else []
    return sorted(((e["re"], e["im"]) for e in ev if e["im"] >= 0 and e.get("kind") != "zero"), key=lambda s: s[1])


def close(a, b, tol=REL):
    return abs(a - b) <= tol * max(abs(b), 1e-300)


# 1. sparsity of the slider-crank. Coordinates (x1 y1 t1, x2 y2 t2, x3 y3 t3) of crank, rod, slider,
# origins at the centres of mass: n = 9; constraints m = 8: the pin O-crank {x1,t1}, {y1,t1}; the
# pin crank-rod {x1,t1,x2,t2}, {y1,t1,y2,t2}; the pin rod-slider at the slider's origin {x2,t2,x3},
# {y2,t2,y3}; the prismatic {y3}, {t3}: nnz(Phi_q) = 20. M diagonal: nnz(M_q) = 9. Phi_q^T Phi_q
# couples the coordinates of each row: 15 pairs off the diagonal, so nnz(M_p) = 9 + 30 = 39, its upper
# triangle 24. The spring (between the slider's origin and a ground anchor) adds x3-y3 to K: Q_p(s)
# 41. The pencil in [dq; dv; dlambda], order 2n + m = 26: E = diag(I, M, 0) 18 entries; A = I (9) +
# K (t1, t2 from the pins' second derivatives times lambda, and the spring's 2 x 2: 6) + Phi_q^T +
# Phi_q (40) = 55, no overlap with E (no damping), so A - sE 73. The augmented matrix 3n + m = 35,
# its kinematic system 3n = 27.
SC = os.path.join(HERE, "slider_crank_sparsity.yaml")
rc, out, err = run("sparsity", SC, "--json")
check(rc == 0, "sparsity slider-crank: " + err)
if rc == 0:
    got = {(m["method"], a["name"]): (a["rows"], a["cols"], a["nnz"])
           for m in json.loads(out)["methods"] for a in m["matrices"]}
    want = {("projection", "M_r"): (1, 1, 1), ("descriptor", "M_q"): (9, 9, 9), ("descriptor", "E_q"): (26, 26, 18),
            ("descriptor", "A_q"): (26, 26, 55), ("descriptor", "A_q-sE_q"): (26, 26, 73),
            ("penalty", "M_p"): (9, 9, 39), ("penalty", "Q_p(s)"): (9, 9, 41)}
    for k, v in want.items():
        check(got.get(k) == v, "sparsity %s: %s, by hand %s" % (k, got.get(k), v))
    check(got.get(("augmented", "augmented"), (0,))[0] == 35 and got.get(("augmented", "kinematic"), (0,))[0] == 27,
          "augmented orders %s" % got)
    pen = [a for m in json.loads(out)["methods"] if m["method"] == "penalty" for a in m["matrices"]]
    check(pen and pen[0]["factored_nnz"] == 24, "M_p's upper triangle: %s" % pen)
# its mode: theta from x_s = 0.33723 (the spring's natural length from its anchor at 0.6), then
# M_eff = m1 r^2/3 + m2 |d cm2/dtheta|^2 + m2 L^2/12 (dbeta/dtheta)^2 + m3 (dx_s/dtheta)^2
r, L, m1, m2, m3, k = 0.1, 0.3, 1.0, 2.0, 3.0, 100.0
xs = lambda t: r * math.cos(t) + math.sqrt(L * L - (r * math.sin(t)) ** 2)  # noqa: E731
lo, hi = 0.5, 1.5  # xs decreases on it
for _ in range(200):
    mid = 0.5 * (lo + hi)
    lo, hi = (mid, hi) if xs(mid) > 0.6 - 0.26277 else (lo, mid)
th = 0.5 * (lo + hi)
sq = math.sqrt(L * L - (r * math.sin(th)) ** 2)
dxs = -r * math.sin(th) - r * r * math.sin(th) * math.cos(th) / sq
beta = -math.asin(r * math.sin(th) / L)
dbeta = -r * math.cos(th) / (L * math.cos(beta))
dcm = (-r * math.sin(th) - L / 2 * math.sin(beta) * dbeta, r * math.cos(th) + L / 2 * math.cos(beta) * dbeta)
meff = m1 * r * r / 3 + m2 * (dcm[0] ** 2 + dcm[1] ** 2) + m2 * L * L / 12 * dbeta ** 2 + m3 * dxs ** 2
ev = modes(SC)
check(len(ev) == 1 and close(ev[0][1], math.sqrt(k * dxs ** 2 / meff)),
      "slider-crank mode %s vs %.12g" % (ev, math.sqrt(k * dxs ** 2 / meff)))

# 2. the sleeping top in 3-1-3 Euler angles (user states: the axis' tilt in ground axes and the spin)
TOP = os.path.join(HERE, "sleeping_top_313.yaml")
m, l, I1, I3, g = 0.5, 0.04, 2e-4, 1.5e-4, 9.81
A, C, mgl = I1 + m * l * l, I3, m * g * l
W = 200.0
disc = math.sqrt(C * C * W * W - 4 * A * mgl)
ev = modes(TOP)
check(len(ev) == 2 and close(ev[0][1], (C * W - disc) / (2 * A)) and close(ev[1][1], (C * W + disc) / (2 * A))
      and all(abs(e[0]) < 1e-9 for e in ev), "top at 200 rad/s %s vs %.12g %.12g" % (ev, (C * W - disc) / (2 * A),
                                                                                    (C * W + disc) / (2 * A)))
Wc = math.sqrt(4 * A * mgl) / C  # 186.7619 rad/s
below, above = modes(TOP, "--set", "Omega=186"), modes(TOP, "--set", "Omega=187")
grow = math.sqrt(4 * A * mgl - (C * 186) ** 2) / (2 * A)
check(Wc > 186 and Wc < 187 and max(e[0] for e in below) > 1 and close(max(e[0] for e in below), grow, 1e-8)
      and close(below[0][1], C * 186 / (2 * A), 1e-8), "top at 186 rad/s (below %.4f): %s, growth %.10g" % (Wc, below, grow))
check(max(abs(e[0]) for e in above) < 1e-9, "top at 187 rad/s (above %.4f): %s" % (Wc, above))
# the same top as one spatial natural-coordinate body (points and vectors)
ev = modes(os.path.join(HERE, "sleeping_top_natural.yaml"))
check(len(ev) == 2 and close(ev[0][1], (C * W - disc) / (2 * A)) and close(ev[1][1], (C * W + disc) / (2 * A)),
      "natural top at 200 rad/s %s" % ev)

# 3. natural coordinates: the rod and the disc pinned at its rim, against det(K - w^2 M) = 0
ND = os.path.join(HERE, "rod_disc_natural.yaml")
m1, L1, m2, R = 2.0, 1.2, 3.0, 0.25
Ma, Mb, Mc = (m1 / 3 + m2) * L1 ** 2, m2 * L1 * R, 1.5 * m2 * R ** 2
Ka, Kc = (m1 / 2 + m2) * g * L1, m2 * g * R
a, b, c = Ma * Mc - Mb * Mb, -(Ka * Mc + Kc * Ma), Ka * Kc  # a w^4 + b w^2 + c = 0
w2 = sorted(((-b - s * math.sqrt(b * b - 4 * a * c)) / (2 * a)) for s in (1, -1))
ev = modes(ND)
check(len(ev) == 2 and all(close(e[1], math.sqrt(x)) for e, x in zip(ev, w2)),
      "rod and disc %s vs %s" % (ev, [math.sqrt(x) for x in w2]))
# `mblin symbolic` from the bodies: M-hat and K-hat in the states (P2_x, C_x) = (L1 th1, L1 th1 + R th2)
# are J^T M J and J^T K J, J = [[1/L1, 0], [-1/R, 1/R]], evaluated at other parameter values
rc, out, err = run("symbolic", ND, "--format", "json")
check(rc == 0, "symbolic rod and disc: " + err)
if rc == 0:
    S = json.loads(out)
    for p in ({"m1": 2.0, "L1": 1.2, "m2": 3.0, "R": 0.25, "g": 9.81}, {"m1": 0.7, "L1": 2.3, "m2": 1.9, "R": 0.6, "g": 3.1}):
        m1, L1, m2, R, g = p["m1"], p["L1"], p["m2"], p["R"], p["g"]
        Mh = [[m1 / 3 + m2 / 2, -m2 / 2], [-m2 / 2, 1.5 * m2]]
        Kh = [[(m1 / 2 + m2) * g / L1 + m2 * g / R, -m2 * g / R], [-m2 * g / R, m2 * g / R]]
        for key, ref in (("M", Mh), ("K", Kh)):
            val = [[eval(e.replace("^", "**"), {"__builtins__": {}}, dict(p)) for e in row] for row in S[key]]
            check(all(close(val[i][j], ref[i][j], 1e-12) for i in range(2) for j in range(2)),
                  "symbolic %s-hat at %s: %s vs %s (%s)" % (key, p, val, ref, S[key]))
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.yaml")
    with open(ND) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace('points: {P2: [0, 0], C: [0, "-R"]}', "points: {P2: [0, 0], C: [0, 0]}"))
    rc, out, err = run("linearize", bad)
    check(rc == 1 and err.count("\n") == 1 and "body 'disc': its points P2 and C are at one place in body axes" in err
          and "bad.yaml:" in err, "coincident points: %d %r" % (rc, err))

sys.exit(finish("test_user_textbook"))
