#!/usr/bin/env python3
"""The HTML report in a real browser (headless Chromium), end to end.

    report_test.py MBLIN [--screenshot PNG]

For each model: `mblin report` writes the page, Chromium loads it (--dump-dom after a virtual
time budget) and the page's own checks (written into #mblin-checks) must show no error, the
eigen table shown must equal `mblin linearize --json` to its printed digits, and screenshots
(--screenshot) must show the mechanism (colored pixels in the 3D view) and differ while a mode
animates (two real times, Chromium driven over its DevTools pipe) but not when nothing animates
(two virtual times, the control). A sweep page is
checked the same way against `mblin sweep --json`, a frequency response page (`mblin freqresp -o`)
against `mblin freqresp --json`. Exit 77 (skipped) when Chromium is absent.
"""
import base64
import html.parser
import json
import math
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.n = exe, tmp, 0

    def run(self, url, budget_ms, extra, size=(1200, 900)):
        self.n += 1
        prof = os.path.join(self.tmp, "profile%d" % self.n)
        cmd = [self.exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-extensions", "--mute-audio", "--user-data-dir=" + prof,
               "--window-size=%d,%d" % size, "--virtual-time-budget=%d" % budget_ms,
               "--enable-logging=stderr", "--v=0"] + extra + [url]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        shutil.rmtree(prof, ignore_errors=True)
        return r

    def dom(self, url, budget_ms=1500):
        r = self.run(url, budget_ms, ["--dump-dom"])
        # console messages of the page (console.error, uncaught exceptions) go to stderr as CONSOLE lines
        bad = [l for l in r.stderr.splitlines() if "CONSOLE" in l and ("rror" in l or "Uncaught" in l)]
        check(not bad, "%s: console errors: %s" % (url, bad[:3]))
        return r.stdout

    def screenshot(self, url, budget_ms, png, size=(1200, 900)):
        self.run(url, budget_ms, ["--screenshot=" + png], size)
        check(os.path.exists(png), "%s: no screenshot" % url)
        return read_png(png)


class Live:
    """One headless Chromium driven over the DevTools protocol (--remote-debugging-pipe: commands
    on fd 3, answers on fd 4, each a JSON text ended by a NUL), for what needs the real clock to
    pass. Under --virtual-time-budget headless Chromium paints animation frames at the pace of the
    real clock and ends after about 0.5 s of it whatever the budget, so a loaded machine painted 1
    or 2 frames of an animation that works; here the test waits, in real time, for what it needs."""

    def __init__(self, exe, tmp, size=(1200, 900)):
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()

        def fds():  # in the child: the two pipe ends become fds 3 and 4, kept across exec
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.prof = os.path.join(tmp, "live%d" % os.getpid())
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--disable-extensions", "--mute-audio", "--user-data-dir=" + self.prof,
             "--window-size=%d,%d" % size, "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, close_fds=False)  # every other fd of ours is close-on-exec
        os.close(cmd_r)
        os.close(res_w)
        self.w, self.r, self.buf, self.id, self.events, self.session = cmd_w, res_r, b"", 0, [], None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.enable")
        self.call("Runtime.enable")

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except (OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        shutil.rmtree(self.prof, ignore_errors=True)

    def message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise RuntimeError("Chromium did not answer in time")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self.buf += chunk
        text, self.buf = self.buf.split(b"\0", 1)
        return json.loads(text)

    def call(self, method, params=None, session=True, timeout=60):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self.message(deadline)
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                del self.events[i]
                return m
        while True:
            m = self.message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def errors(self):
        """The page's console errors and uncaught exceptions so far."""
        out = []
        for m in self.events:
            if m.get("method") == "Runtime.exceptionThrown":
                out.append(m["params"]["exceptionDetails"].get("text", "exception"))
            elif m.get("method") == "Runtime.consoleAPICalled" and m["params"].get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in m["params"]["args"]))
        return out

    def open(self, url):
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def checks_when(self, cond_js, timeout_ms=20000):
        """The page's #mblin-checks once `cond_js` (of c, the parsed checks) holds, or at the timeout."""
        js = ("new Promise((done) => { const t0 = performance.now(); (function poll() {"
              " const e = document.getElementById('mblin-checks'); let c = {};"
              " try { c = JSON.parse(e.textContent || '{}'); } catch (x) {}"
              " if ((%s) || performance.now() - t0 > %d) done(c); else setTimeout(poll, 20); })(); })"
              % (cond_js, timeout_ms))
        r = self.call("Runtime.evaluate", {"expression": js, "awaitPromise": True, "returnByValue": True},
                      timeout=timeout_ms / 1000 + 60)
        return r["result"].get("value", {})

    def screenshot(self, png):
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        with open(png, "wb") as f:
            f.write(data)
        return read_png(png)


def read_png(path):
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) to (w, h, rows of RGB tuples)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def region(img, rect):
    w, h, bpp, rows = img
    x0, y0, rw, rh = [int(round(v)) for v in rect]
    out = []
    for y in range(max(y0, 0), min(y0 + rh, h)):
        r = rows[y]
        out.append(bytes(r[bpp * max(x0, 0):bpp * min(x0 + rw, w)]))
    return out, bpp


def colored_pixels(reg):
    rows, bpp = reg
    n = 0
    for r in rows:
        for i in range(0, len(r), bpp):
            red, gr, bl = r[i], r[i + 1], r[i + 2]
            if max(red, gr, bl) - min(red, gr, bl) > 60:  # a body's color, not grey or white
                n += 1
    return n


class Table(html.parser.HTMLParser):
    """The cells of the <tbody> of the table with id `tid`."""

    def __init__(self, tid):
        super().__init__()
        self.tid, self.depth, self.intable, self.inbody, self.rows, self.cell = tid, 0, False, False, [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == self.tid:
            self.intable = True
        elif self.intable and tag == "tbody":
            self.inbody = True
        elif self.inbody and tag == "tr":
            self.rows.append([])
        elif self.inbody and tag == "td":
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
        elif tag == "tbody" and self.inbody:
            self.inbody = self.intable = False

    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d


def table(dom, tid):
    t = Table(tid)
    t.feed(dom)
    return t.rows


def page_checks(dom, what):
    start = dom.find('id="mblin-checks"')
    if not check(start >= 0, "%s: no #mblin-checks in the page" % what):
        return {}
    text = dom[dom.index(">", start) + 1:dom.index("</pre>", start)]
    text = text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    c = json.loads(text)
    check(c.get("ready") is True, "%s: the page did not finish drawing: %s" % (what, c))
    check(c.get("errors") == [], "%s: errors in the page: %s" % (what, c.get("errors")))
    return c


def close(shown, ref, digits):
    """The table prints `digits` significant digits: shown must equal ref rounded that way."""
    if ref is None:
        return shown == ""
    x = float(shown)
    return abs(x - ref) <= 0.6 * 10 ** (-digits + 1) * abs(ref) + 1e-300


def mblin_json(mblin, args):
    r = subprocess.run([mblin] + args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_model(mblin, br, tmp, model, mechanism, shot=None):
    name = os.path.basename(model)
    page = os.path.join(tmp, name + ".html")
    r = subprocess.run([mblin, "report", model, "-o", page], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if not check(r.returncode == 0, "%s: mblin report failed: %s" % (name, r.stderr)):
        return
    ref = mblin_json(mblin, ["linearize", model, "--json", "--no-matrices"])
    url = "file://" + page
    dom = br.dom(url + "#mode=first")
    c = page_checks(dom, name)
    ev = ref["eigenvalues"]
    rows = table(dom, "eigen-table")
    check(len(rows) == len(ev), "%s: %d rows in the eigen table, %d eigenvalues in the JSON" % (name, len(rows), len(ev)))
    bad = 0
    for i, (rw, e) in enumerate(zip(rows, ev)):
        ok = (rw[0] == str(i + 1) and close(rw[1], e["re"], 8) and close(rw[2], e["im"], 8)
              and close(rw[3], e["freq_hz"], 8) and close(rw[4], e["damped_freq_hz"], 8)
              and close(rw[5], e["damping_ratio"], 8) and rw[6].startswith(e["kind"]))
        # the damped frequency column: |Im| / 2 pi of the row's own imaginary part (source 003, Table 5.2)
        ok = ok and (e["im"] is None or close(rw[4], abs(e["im"]) / (2 * math.pi), 7))
        if not ok and bad < 3:
            check(False, "%s: eigen table row %d %s != JSON %s" % (name, i + 1, rw, e))
        bad += not ok
    check(bad == 0, "%s: %d eigen table rows differ from the JSON" % (name, bad))
    if not mechanism:
        check(c.get("points") == 0 and "view_rect" not in c, "%s: an equation-level model has no 3D view" % name)
        return
    check(c.get("points", 0) > 0, "%s: no points drawn" % name)
    check(c.get("animating") is not None, "%s: #mode=first did not start an animation" % name)
    rect = c["view_rect"]
    # the animation, in real time (see Live): it paints frame after frame, and two shots of it
    # 0.15 s and a few frames apart differ; a broken animation stops at 2 frames, and its shots
    # are the same. The phases of two shots could coincide by chance, hence three pairs.
    live = Live(br.exe, tmp)
    try:
        live.open(url + "#mode=first")
        c = live.checks_when("c.frames >= 3")
        check(c.get("frames", 0) >= 3, "%s: the animation ran %s frames in 20 s" % (name, c.get("frames")))
        for attempt in range(3):
            a = live.screenshot(os.path.join(tmp, name + "_a.png"))
            n = live.checks_when("true").get("frames", 0)
            live.checks_when("c.frames >= %d && performance.now() - t0 > 150" % (n + 3))
            b = live.screenshot(os.path.join(tmp, name + "_b.png"))
            ra, rb = region(a, rect), region(b, rect)
            if ra[0] != rb[0]:
                break
        check(not live.errors(), "%s: errors in the animating page: %s" % (name, live.errors()[:3]))
    finally:
        live.close()
    check(colored_pixels(ra) > 200, "%s: the 3D view shows no mechanism (%d colored pixels)" % (name, colored_pixels(ra)))
    check(ra[0] != rb[0], "%s: two screenshots while a mode animates are the same (3 tries)" % name)
    # control: without an animation the view does not change with time
    s0 = br.screenshot(url, 1000, os.path.join(tmp, name + "_s0.png"))
    s1 = br.screenshot(url, 1250, os.path.join(tmp, name + "_s1.png"))
    check(region(s0, rect)[0] == region(s1, rect)[0], "%s: the still view changes with time" % name)
    check(colored_pixels(region(s0, rect)) > 200, "%s: the still view shows no mechanism" % name)
    if shot:
        br.screenshot(url + "#mode=first", 1250, shot, (1200, 760))


def test_sweep(mblin, br, tmp):
    model = "examples/mech/rigid_rotor.yaml"
    out = os.path.join(tmp, "sweep_out")
    args = ["sweep", model, "--param", "Omega=0:300:16"]
    r = subprocess.run([mblin] + args + ["-o", out], capture_output=True, text=True, timeout=600, cwd=ROOT)
    if not check(r.returncode == 0, "sweep failed: %s" % r.stderr):
        return
    ref = mblin_json(mblin, args + ["--json"])
    page = os.path.join(out, "report.html")
    if not check(os.path.exists(page), "mblin sweep -o wrote no report.html"):
        return
    dom = br.dom("file://" + page + "#branch=1")
    c = page_checks(dom, "sweep")
    zl = 1e-6 * max(abs(complex(re, im)) for b in ref["branches"] for re, im in zip(b["re"], b["im"])
                    if re is not None and im is not None)
    osc = sum(1 for b in ref["branches"] if any(im is not None and im > zl for im in b["im"][:ref["axes"][0]["count"]]))
    check(c.get("campbell_branches") == osc, "sweep: %s Campbell branches drawn, %d oscillatory in the JSON"
          % (c.get("campbell_branches"), osc))
    check(c.get("locus_branches") == len(ref["branches"]), "sweep: root-locus branches %s != %d"
          % (c.get("locus_branches"), len(ref["branches"])))
    rows = table(dom, "branch-table")
    b0 = ref["branches"][0]
    check(len(rows) == ref["axes"][0]["count"], "sweep: the branch table has %d rows" % len(rows))
    for i, rw in enumerate(rows):
        if not (close(rw[1], b0["re"][i], 8) and close(rw[2], b0["im"][i], 8) and close(rw[3], b0["freq_hz"][i], 8)):
            check(False, "sweep: branch 1 row %d %s != JSON" % (i + 1, rw))
            break


def test_freqresp(mblin, br, tmp):
    """mblin freqresp -o DIR (every input to every output, issue 33 item 4): the page draws every
    pair and the singular values, and its table's peak of each pair is the JSON's."""
    out = os.path.join(tmp, "fr_out")
    args = ["freqresp", "tests/study/chain3_mimo.yaml", "--w", "0.5:200:60"]
    r = subprocess.run([mblin] + args + ["-o", out], capture_output=True, text=True, timeout=600, cwd=ROOT)
    if not check(r.returncode == 0, "freqresp failed: %s" % r.stderr):
        return
    ref = mblin_json(mblin, args + ["--json"])
    dom = br.dom("file://" + os.path.join(out, "report.html"))
    c = page_checks(dom, "freqresp")
    check(c.get("kind") == "freqresp" and c.get("pairs") == 6 and c.get("singular_values") == 2 and
          c.get("frequencies") == 60, "freqresp: the page drew %s" % c)
    plots = c.get("plots", {})
    check(all(plots.get(k) and plots[k]["xscale"] == "symlog" for k in ("frmag", "frphase", "frsigma")),
          "freqresp: plots %s" % sorted(plots))
    rows = table(dom, "pair-table")
    check(len(rows) == 6, "freqresp: the pair table has %d rows" % len(rows))
    for rw, p in zip(rows, ref["response"]):
        k = max(range(60), key=lambda i: p["magnitude_db"][i])
        check(rw[1] == p["input"] and rw[2] == p["output"] and close(rw[3], p["magnitude_db"][k], 8) and
              close(rw[4], ref["w_rad_s"][k] / (2 * 3.141592653589793), 8), "freqresp: pair row %s, JSON peak %g dB at %d"
              % (rw, p["magnitude_db"][k], k))


def main():
    mblin = os.path.abspath(sys.argv[1])
    shot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    exe = find_chromium()
    if not exe:
        print("chromium not found: skipped (make setup installs it)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        br = Browser(exe, tmp)
        test_model(mblin, br, tmp, "examples/mech/fourbar_N1.yaml", True, shot)
        test_model(mblin, br, tmp, "examples/mech/spatial_fourbar.yaml", True)
        test_model(mblin, br, tmp, "examples/spring_pendulum.yaml", False)
        if "--no-sweep" not in sys.argv:
            test_sweep(mblin, br, tmp)
        test_freqresp(mblin, br, tmp)
    print("%d failure(s)" % len(FAILS) if FAILS else "report: all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
