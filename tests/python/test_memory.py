"""No leak: 10^4 cycles of load + linearize (and the error path) must not grow the process.

The resident set size is read from /proc/self/statm after a warm-up (allocator pools, NumPy's
caches) and again after the cycles. A leak of one model, point or linear model per cycle (several
kB each for this model) would grow it by tens of MB; the bound allows 4 MB of allocator noise,
i.e. under 400 bytes per cycle."""
import gc
import os

import pytest

import mblin

CYCLES = 10_000
# ASan's quarantine keeps freed memory resident: the sanitized build checks memory its own way
pytestmark = pytest.mark.skipif(os.environ.get("MBLIN_SANITIZED") == "1",
                                reason="RSS is not meaningful under AddressSanitizer (run in the plain build)")
BOUND = 4 << 20


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cycle_ok(text):
    lin = mblin.loads(text, set={"k": 21.0}).linearize()
    assert lin.A.shape == (4, 4) and len(lin.modes) == 4


def cycle_error(text):
    with pytest.raises(mblin.ModelError):
        mblin.loads(text + "\nbogus_key: 1\n")


def measure(fn, text):
    for _ in range(500):
        fn(text)
    gc.collect()
    before = rss()
    for _ in range(CYCLES):
        fn(text)
    gc.collect()
    return rss() - before


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_no_leak_load_linearize(root):
    text = (root / "examples" / "slider_pendulum.yaml").read_text()
    growth = measure(cycle_ok, text)
    print("RSS growth over %d load+linearize cycles: %d bytes" % (CYCLES, growth))
    assert growth < BOUND, "RSS grew by %.1f MB over %d cycles" % (growth / 2 ** 20, CYCLES)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_no_leak_errors(root):
    text = (root / "examples" / "slider_pendulum.yaml").read_text()
    growth = measure(cycle_error, text)
    print("RSS growth over %d failing loads: %d bytes" % (CYCLES, growth))
    assert growth < BOUND, "RSS grew by %.1f MB over %d failing loads" % (growth / 2 ** 20, CYCLES)


def test_no_leak_studies():
    """Model.sensitivity and .freqresp (and their error path): 2000 cycles, the same bound."""
    osc = mblin.from_dict({"model": "dae", "parameters": {"m": 2.0, "k": 5.0, "c": 0.3}, "coordinates": {"x": 0},
                           "kinetic_energy": "0.5*m*der(x)^2", "potential_energy": "0.5*k*x^2",
                           "dissipation": "0.5*c*der(x)^2", "forces": {"x": "F"}, "inputs": {"F": 0},
                           "outputs": {"pos": "x"}})
    pt = osc.operating_point()
    w = [0.5, 1.0, 2.0]

    def cycle():
        osc.sensitivity(["k", "c"], point=pt)
        osc.freqresp("F", "pos", w, point=pt)
        try:
            osc.sensitivity(["nope"], point=pt)
        except mblin.ArgumentError:
            pass

    for _ in range(200):
        cycle()
    gc.collect()
    before = rss()
    for _ in range(2000):
        cycle()
    gc.collect()
    assert rss() - before < BOUND, rss() - before
