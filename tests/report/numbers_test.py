#!/usr/bin/env python3
"""The numbers the HTML report prints and the axes it draws (issue 30, item 11), in headless Chromium.

    numbers_test.py MBLIN

- the page's number formatter (`fmt` in web/report.html, run in the browser as it is in the
  page) prints every number as its value rounded to the digits asked: 5000 is "5000", not "5";
- a parameter set to 20000000 reads 20000000 in the parameters table, and every tick label of
  every plot reads the tick's value;
- the critical-speed table names the branches the sweep JSON names, and that branch's
  frequency at the critical speed is the critical frequency;
- the Campbell diagram's frequency axis ends at --fmax;
- rounding noise is not drawn: an undamped gyroscopic rotor (eigenvalues exactly imaginary)
  draws every damping ratio and real part as 0, while the rotor-stator model's small damping
  (|Re s| = 3e-6 of the largest |s|) is still drawn;
- the root locus is drawn on symmetric-log axes where the magnitudes span more than a factor of
  100 (LOG_SPAN, docs/report.md), so the lowest mode of a flexible pendulum (1.3 rad/s beside
  7e3 rad/s) stands apart from the origin, and on linear axes otherwise.
Exit 77 (skipped) when Chromium is absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_test as rt  # noqa: E402

check = rt.check
ROOT = rt.ROOT


def rel_close(a, b, tol):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)


def page(mblin, args, path):
    r = subprocess.run([mblin] + args + ["-o", path], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return "file://" + (path if path.endswith(".html") else os.path.join(path, "report.html"))


def test_fmt(br, tmp):
    """fmt(x, p) run in the browser: the value printed is x rounded to p significant digits (Python's
    %g rounding, an independent implementation) and carries no trailing zero after a decimal point."""
    src = open(os.path.join(ROOT, "web", "report.html")).read()
    m = re.search(r"^function fmt\(.*?^}\n", src, re.S | re.M)
    if not check(m, "fmt: no function fmt in web/report.html"):
        return
    cases = [(5000, 8), (5000, 4), (20000000, 8), (20000000, 4), (0.00012, 8), (1.5e-7, 8), (-5000, 4), (100, 4),
             (1e5, 4), (1e21, 8), (123456789, 8), (2.5e-6, 6), (0.5, 8), (1234.5, 8), (-0.0125, 4), (7247.0407805, 8)]
    html = ("<html><body><pre id='out'></pre><script>\n" + m.group(0) +
            "document.getElementById('out').textContent = JSON.stringify(%s.map((c) => fmt(c[0], c[1])));\n"
            "</script></body></html>" % json.dumps(cases))
    path = os.path.join(tmp, "fmt.html")
    open(path, "w").write(html)
    dom = br.dom("file://" + path, 500)
    out = json.loads(re.search(r"<pre id=\"out\">(.*?)</pre>", dom, re.S).group(1))
    for (x, p), s in zip(cases, out):
        want = float("%.*g" % (p, x))
        ok = float(s) == want
        mant = s.split("e")[0]
        ok = ok and not ("." in mant and mant.endswith("0")) and not mant.endswith(".")
        check(ok, "fmt(%r, %d) = %r, the value rounded to %d digits is %r" % (x, p, s, p, want))


def ticks_read_right(info, what):
    """Every tick label must read its tick's value (to the 4 digits printed)."""
    for ax in ("xticks", "yticks"):
        for v, label in info[ax]:
            if not check(rel_close(float(label), v, 1e-3) or (v == 0 and float(label) == 0),
                         "%s: %s tick at %r is labelled %r" % (what, ax, v, label)):
                return


def test_linear(mblin, br, tmp):
    # the rigid rotor at k = 2e7: Im s from 1281 to 1414 rad/s (closed forms in the model file);
    # undamped and gyroscopic, so every eigenvalue is exactly imaginary
    args = ["report", "examples/mech/rigid_rotor.yaml", "--set", "k=20000000"]
    url = page(mblin, args, os.path.join(tmp, "rotor.html"))
    dom = br.dom(url)
    c = rt.page_checks(dom, "rotor")
    params = {r[0]: r[1] for r in rt.table(dom, "params")}
    check(params.get("k") and float(params["k"]) == 2e7, "rotor: k shown as %r, set to 20000000" % params.get("k"))
    info = c.get("plots", {}).get("locus")
    if not check(info, "rotor: no locus drawn"):
        return
    ticks_read_right(info, "rotor locus")
    check(info["yscale"] == "linear", "rotor: Im spans 1281..1414: a linear axis, got %s" % info["yscale"])
    check(info["data"]["x"] == [0, 0], "rotor: real parts drawn %s, rounding noise of exact zeros" % info["data"]["x"])

    # rotor-stator: damped, |Re s| from 3.2e-4 to 5 (5 decades) and |Im s| from 0.79 to 100
    ref = rt.mblin_json(mblin, ["linearize", "examples/mech/rotor_stator.yaml", "--json", "--no-matrices"])
    c = rt.page_checks(br.dom(page(mblin, ["report", "examples/mech/rotor_stator.yaml"], os.path.join(tmp, "rs.html"))),
                       "rotor-stator")
    info = c.get("plots", {}).get("locus")
    if check(info, "rotor-stator: no locus drawn"):
        ticks_read_right(info, "rotor-stator locus")
        res = [e["re"] for e in ref["eigenvalues"] if e["kind"] != "zero"]
        check(rel_close(info["data"]["x"][0], min(res), 1e-12) and info["data"]["x"][1] == 0,
              "rotor-stator: real parts drawn %s, the damped modes' span to %g and the zero modes at 0"
              % (info["data"]["x"], min(res)))
        check(info["xscale"] == "symlog" and info["yscale"] == "symlog",
              "rotor-stator: |Re| over 4 decades, |Im| over 2: symlog axes, got %s, %s" % (info["xscale"], info["yscale"]))

    # a flexible double pendulum of beams: |Im s| from 1.34 to 7247 rad/s
    model = "examples/mech/spatial_beam_pendulum.yaml"
    ref = rt.mblin_json(mblin, ["linearize", model, "--json", "--no-matrices"])
    c = rt.page_checks(br.dom(page(mblin, ["report", model], os.path.join(tmp, "beam.html"))), "beam")
    info = c.get("plots", {}).get("locus")
    if not check(info and c.get("locus_px"), "beam: no locus drawn"):
        return
    ticks_read_right(info, "beam locus")
    ims = [abs(e["im"]) for e in ref["eigenvalues"] if e["kind"] != "zero"]
    check(max(ims) > 100 * min(ims) and info["yscale"] == "symlog",
          "beam: |Im| spans %g..%g: symlog axis expected, got %s" % (min(ims), max(ims), info["yscale"]))
    y0 = c["locus_origin"][1]
    dist = sorted((abs(e["im"]), abs(p[1] - y0)) for e, p in zip(ref["eigenvalues"], c["locus_px"]) if e["kind"] != "zero")
    check(dist[0][1] >= 15, "beam: the lowest mode (%g rad/s) is drawn %.2f px from the origin" % dist[0])
    check(all(b[1] >= a[1] - 1e-9 for a, b in zip(dist, dist[1:])), "beam: the locus axis is not monotonic in |Im s|")
    # the axis choice can be overridden: #axes=linear draws the MATLAB-like linear plane
    c = rt.page_checks(br.dom("file://" + os.path.join(tmp, "beam.html") + "#axes=linear"), "beam linear")
    info = c.get("plots", {}).get("locus", {})
    check(info.get("yscale") == "linear", "beam: #axes=linear gives a %s axis" % info.get("yscale"))


def freq_at(branch, xs, speed):
    """A branch's Im s / 2 pi at `speed` (signed: its conjugate branch has the opposite sign),
    interpolated linearly between sweep points."""
    f = [v / (2 * 3.141592653589793) if v is not None else None for v in branch["im"][:len(xs)]]
    for i in range(len(xs) - 1):
        if xs[i] <= speed <= xs[i + 1] and f[i] is not None and f[i + 1] is not None:
            t = (speed - xs[i]) / (xs[i + 1] - xs[i])
            return f[i] + t * (f[i + 1] - f[i])
    return None


def test_sweep(mblin, br, tmp):
    args = ["sweep", "examples/mech/rigid_rotor.yaml", "--param", "Omega=0:300:31", "--orders", "1,2", "--fmax", "20"]
    ref = rt.mblin_json(mblin, args + ["--json"])
    dom = br.dom(page(mblin, args, os.path.join(tmp, "sweep")))
    c = rt.page_checks(dom, "sweep")
    # the critical speeds: the table's branch is the JSON's (1-based), and that branch passes
    # through the critical frequency at the critical speed
    rows = rt.table(dom, "critical")
    crit = ref["critical_speeds"]
    xs = [v[0] for v in ref["values"]]
    check(len(rows) == len(crit) > 0, "sweep: %d critical-speed rows, %d in the JSON" % (len(rows), len(crit)))
    for rw, cs in zip(rows, crit):
        check(rw[0] == str(cs["branch"]), "sweep: critical speed %g: branch %s shown, %d in the JSON"
              % (cs["speed"], rw[0], cs["branch"]))
        f = freq_at(ref["branches"][int(rw[0]) - 1], xs, cs["speed"])
        check(f is not None and abs(f - cs["freq_hz"]) < 0.02 * cs["freq_hz"],
              "sweep: branch %s is at %s Hz at speed %g, not at the critical %g Hz" % (rw[0], f, cs["speed"], cs["freq_hz"]))
        check(rel_close(float(rw[2]), cs["speed"], 1e-7), "sweep: critical speed %s shown, %r in the JSON" % (rw[2], cs["speed"]))
    plots = c.get("plots", {})
    if not check(plots.get("campbell") and plots.get("slocus") and plots.get("sdamping"), "sweep: plots not drawn"):
        return
    for k, info in plots.items():
        ticks_read_right(info, "sweep " + k)
    camp = plots["campbell"]
    fmax_data = max(abs(v) / (2 * 3.141592653589793) for b in ref["branches"] for v in b["im"] if v is not None)
    check(fmax_data > 20, "sweep: the branches reach %g Hz, above --fmax 20 (the test's premise)" % fmax_data)
    check(rel_close(camp["y"][1], 20, 1e-12) and max(v for v, _ in camp["yticks"]) <= 20,
          "sweep: the Campbell frequency axis ends at %r with --fmax 20" % camp["y"][1])
    # undamped gyroscopic rotor: every eigenvalue exactly imaginary, the cyclic spin angle a double zero
    check(plots["sdamping"]["data"]["y"] == [0, 0], "sweep: damping ratios drawn over %s (rounding noise)"
          % plots["sdamping"]["data"]["y"])
    check(plots["slocus"]["data"]["x"] == [0, 0], "sweep: real parts drawn over %s (rounding noise)" % plots["slocus"]["data"]["x"])


def main():
    mblin = os.path.abspath(sys.argv[1])
    exe = rt.find_chromium()
    if not exe:
        print("chromium not found: skipped (make setup installs it)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        br = rt.Browser(exe, tmp)
        test_fmt(br, tmp)
        test_linear(mblin, br, tmp)
        test_sweep(mblin, br, tmp)
    print("%d failure(s)" % len(rt.FAILS) if rt.FAILS else "report numbers: all checks passed")
    return 1 if rt.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
