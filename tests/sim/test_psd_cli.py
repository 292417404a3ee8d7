#!/usr/bin/env python3
"""mblin simulate's band-limited random input and --psd (issue 70, item 5; docs/simulation.md,
"Random input and PSD"):

1. the random input recorded in the trajectory equals its documented construction, rebuilt here
   from the text (splitmix64 phases, equal amplitudes): its RMS over the period is rms, its
   spectrum (numpy's FFT) has the band's lines only;
2. --psd against scipy.signal.welch on the same samples (Hann, 50 % overlap, mean removed,
   one-sided density), the CSV and SVG files; a sine of amplitude a: the peak's power a^2 / 2;
3. source 000's experiment (Fig. 8-9): the rotor-stator on a base vibrating at random
   (examples/sim/rotor_stator_random.yaml): the most prominent peaks of the PSD of DX(2,4) (base
   frame) and DX(4,1,1) (rotor frame) lie within the frequency resolution of the damped frequencies
   of the linear models in the base frame (this file, `mblin linearize`) and in the rotor's frame
   (examples/mech/rotor_stator_rotor_frame.yaml);
4. bad input: one line, nonzero exit, before the simulation.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import signal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
MODEL = "tests/sim/forced_mass.yaml"
ROTOR = "examples/sim/rotor_stator_random.yaml"


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def read_csv(path):
    rows = open(path).read().splitlines()
    head = rows[0].split(",")
    data = np.array([[float(v) for v in r.split(",")] for r in rows[1:]])
    return head, data


def splitmix64(state):
    mask = (1 << 64) - 1
    state = (state + 0x9E3779B97F4A7C15) & mask
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return state, z ^ (z >> 31)


def multisine(t, f1, f2, rms, seed, period):
    """the documented construction: lines k/P in [f1, f2] (k >= 1), equal amplitudes, phases 2 pi u_k"""
    df = 1.0 / period
    k1, k2 = max(1, math.ceil(f1 / df - 1e-9)), math.floor(f2 / df + 1e-9)
    K = k2 - k1 + 1
    A = rms * math.sqrt(2.0 / K)
    state, x = seed, np.zeros_like(t)
    for k in range(k1, k2 + 1):
        state, z = splitmix64(state)
        x += A * np.cos(2 * np.pi * k * df * t + 2 * np.pi * (z >> 11) * 2.0 ** -53)
    return x, k1, k2, A


def eigen_hz(path):
    rc, out, err = run("linearize", path, "--json")
    check(rc == 0, "linearize %s: %s" % (path, err))
    modes = json.loads(out)["eigenvalues"] if rc == 0 else []
    return sorted({round(m["im"] / (2 * math.pi), 9) for m in modes if m["im"] > 1e-6})


with tempfile.TemporaryDirectory() as d:
    csv = os.path.join(d, "run.csv")
    # 1. the random input against its definition: one period (64 s) sampled at 8 Hz
    spec = "random:band=0.5:2,rms=0.7,seed=9"
    rc, out, err = run("simulate", MODEL, "--t-end", "64", "--dt-out", "0.125", "--input", "F=" + spec, "-o", csv)
    check(rc == 0, "simulate random: " + err)
    if rc == 0:
        head, D = read_csv(csv)
        t, F = D[:-1, 0], D[:-1, head.index("F")]  # 512 samples: t = 64 starts the next period
        ref, k1, k2, A = multisine(t, 0.5, 2, 0.7, 9, 64.0)
        check(np.max(np.abs(F - ref)) < 1e-12, "random input vs its construction: %g" % np.max(np.abs(F - ref)))
        check(abs(np.sqrt(np.mean(F ** 2)) - 0.7) < 1e-12, "rms %.17g" % np.sqrt(np.mean(F ** 2)))
        amp = 2 * np.abs(np.fft.rfft(F)) / len(F)  # bin k at k / 64 Hz
        inband = amp[k1:k2 + 1]
        out_band = np.concatenate([amp[:k1], amp[k2 + 1:]])
        check(np.max(np.abs(inband - A)) < 1e-12 and np.max(out_band) < 1e-12,
              "band: in %g, out %g" % (np.max(np.abs(inband - A)), np.max(out_band)))
        # the same seed, the same signal; another seed, another signal
        rc2, _, _ = run("simulate", MODEL, "--t-end", "64", "--dt-out", "0.125", "--input", "F=" + spec, "-o", csv + "2")
        check(rc2 == 0 and open(csv).read() == open(csv + "2").read(), "same seed, same trajectory")
        run("simulate", MODEL, "--t-end", "64", "--dt-out", "0.125", "--input", "F=" + spec.replace("9", "10"), "-o", csv + "2")
        check(open(csv).read() != open(csv + "2").read(), "another seed, another signal")

    # 2. --psd against scipy's Welch; the CSV, SVG and JSON; the sine's peak
    pcsv, psvg = os.path.join(d, "psd.csv"), os.path.join(d, "psd.svg")
    rc, out, err = run("simulate", MODEL, "--t-end", "64", "--dt-out", "0.125", "--input", "F=" + spec, "-o", csv,
                       "--psd", "F,xo,der(x)", "--psd-segment", "16", "--psd-out", pcsv, "--psd-svg", psvg, "--json")
    check(rc == 0, "simulate --psd: " + err)
    if rc == 0:
        S = json.loads(out)
        head, D = read_csv(csv)
        ph, P = read_csv(pcsv)
        check(ph == ["f_hz", "psd(F) [unit^2/Hz]", "psd(xo) [unit^2/Hz]", "psd(der(x)) [unit^2/Hz]"], "psd header %s" % ph)
        check(open(psvg).read().startswith("<svg"), "psd svg")
        for i, name in enumerate(["F", "xo", "der(x)"]):
            f, ref = signal.welch(D[:, head.index(name)], fs=8.0, window="hann", nperseg=128, noverlap=64,
                                  detrend="constant", scaling="density")
            mine = np.array(S["psd"][i]["psd"])
            check(S["psd"][i]["signal"] == name and S["psd"][i]["segments"] == 7, "psd json %s" % name)
            check(np.max(np.abs(mine - ref)) < 1e-12 * np.max(ref), "%s vs scipy: %g" % (name, np.max(np.abs(mine - ref)) / np.max(ref)))
            check(np.max(np.abs(P[:, 1 + i] - ref)) < 1e-12 * np.max(ref) and np.max(np.abs(P[:, 0] - f)) < 1e-15, "csv " + name)
    rc, out, err = run("simulate", MODEL, "--t-end", "128", "--dt-out", "0.0625", "--input", "F=0.3*sin(2*pi*1.5*t)",
                       "--psd", "F", "--psd-segment", "16", "--json")
    check(rc == 0, "simulate sine: " + err)
    if rc == 0:
        pk = json.loads(out)["psd"][0]["peaks"][0]
        check(abs(pk["freq_hz"] - 1.5) < 1e-9 and abs(pk["power"] - 0.045) < 1e-9, "sine peak %s" % pk)

    # 3. source 000's experiment: base vibrating at random in x and y (0.05..1.8 Hz), spin 0.5 Hz
    sanitized = os.environ.get("MBLIN_SANITIZED") == "1"  # ten times slower there: half the record
    t_end, seg = ("512", "256") if sanitized else ("1024", "512")
    rc, out, err = run("simulate", ROTOR, "--t-end", t_end, "--dt-out", "0.25", "--input",
                       "ax=random:band=0.05:1.8,rms=0.01,seed=1", "--input", "ay=random:band=0.05:1.8,rms=0.01,seed=2",
                       "--psd", "DX_2_4,DX_4_1_1", "--psd-segment", seg, "--psd-peaks", "8", "--json")
    check(rc == 0, "rotor-stator random: " + err)
    base, rotor = eigen_hz(ROTOR), eigen_hz("examples/mech/rotor_stator_rotor_frame.yaml")
    # the excited modes: the translations (whirl) in the base frame; seen from the rotor, the
    # translations and the backward rocking, shifted by the spin
    check(len(base) == 6 and abs(base[0] - 0.12624771) < 1e-7 and abs(base[1] - 0.12773923) < 1e-7, "base %s" % base)
    check(len(rotor) == 6 and abs(rotor[1] - 0.37226078) < 1e-7 and abs(rotor[2] - 0.6262477) < 1e-7, "rotor %s" % rotor)
    if rc == 0:
        S = json.loads(out)
        for sig, eig, want in ((S["psd"][0], base, [0] if sanitized else [0, 1]), (S["psd"][1], rotor, [1, 2, 4])):
            df = sig["df"]
            strong = [p["freq_hz"] for p in sig["peaks"] if p["prominence"] is None or p["prominence"] > 1e2]
            # every resonance standing out lies at a linear frequency, within the resolution
            for f in strong:
                check(min(abs(f - e) for e in eig) < df, "%s: peak %.6f Hz, linear %s, df %g" % (sig["signal"], f, eig, df))
            # and the excited modes are there (the two whirl modes 0.0015 Hz apart: one peak within df of both)
            for j in want:
                check(any(abs(f - eig[j]) < df for f in strong), "%s: no peak at %.6f Hz: %s" % (sig["signal"], eig[j], strong))
            # the rest is the estimate's ripple
            check(all(p["prominence"] is not None and p["prominence"] < 1e2 for p in sig["peaks"]
                      if p["freq_hz"] not in strong), "%s: prominences %s" % (sig["signal"], sig["peaks"]))

    # 4. bad input: one line, exit 2 (an argument the library refused: a usage error, cli_fail), refused
    # before the simulation
    bad = [
        (["--input", "F=random:band=0.5:5,rms=1"], "not below the Nyquist frequency 4 Hz"),
        (["--input", "F=random:band=0.5:2,rms=-1"], "rms must be positive"),
        (["--input", "F=random:band=0.5:2,rms=1,hue=3"], "unknown key 'hue'"),
        (["--psd", "nope"], "--psd: no signal 'nope'"),
        (["--psd", "xo", "--psd-segment", "100"], "shorter than one PSD segment"),
        (["--psd", "xo,F,xo"], "--psd: 'xo' named twice"),
        (["--input", "F=random:band=0.5:2,rms=1,seed=1,seed=2"], "key 'seed' given twice"),
        (["--input", "F=random:band=0.5:2,rms=1,"], "'' is not KEY=VALUE"),
    ]
    for extra, msg in bad:
        rc, out, err = run("simulate", MODEL, "--t-end", "64", "--dt-out", "0.125", *extra)
        check(rc == 2 and msg in err and err.count("\n") == 1 and out == "", "%s: rc %d, %r" % (extra, rc, err))
    rc, out, err = run("simulate", MODEL, "--t-end", "64", "--psd-out", "x.csv")
    check(rc == 2 and "go with --psd" in err, "--psd-out alone: %d %r" % (rc, err))
    nodir = os.path.join(d, "no", "such", "psd.csv")
    rc, out, err = run("simulate", MODEL, "--t-end", "8", "--psd", "xo", "--psd-out", nodir)
    check(rc == 1 and err == "mblin: cannot write %s (No such file or directory)\n" % nodir, "--psd-out: %d %r" % (rc, err))

    # 5. a textbook case: the SDOF oscillator under band-limited white base acceleration
    # (tests/sim/sdof_base.yaml: fn = 1 Hz, zeta = 0.05), 0.1..5 Hz, rms 1, one period of 400 s.
    # The response's mean square: over a period of the steady state exactly the sum over the lines of
    # A^2/2 |H(f_k)|^2, H = 1 / (wn^2 - w^2 + 2 i zeta wn w) (the relative displacement per base
    # acceleration); the continuous band's integral G int |H|^2 df, G = rms^2 / (F2 - F1); and for
    # white noise G / (8 zeta wn^3). Measured (2026-11-28): simulated rms after 50 s 0.0451756, line sum
    # 0.0451933, band 0.0452030, white 0.0453526; the PSD's peak 0.99651 Hz (df 0.0112 Hz).
    fn, z, F1, F2, P = 1.0, 0.05, 0.1, 5.0, 400.0
    wn = 2 * math.pi * fn
    rc, out, err = run("simulate", "tests/sim/sdof_base.yaml", "--t-end", "400", "--dt-out", "0.05", "--input",
                       "a=random:band=0.1:5,rms=1,seed=7", "--psd", "xr", "--json", "-o", csv)
    check(rc == 0, "sdof: " + err)
    if rc == 0:
        def H2(f):
            w = 2 * math.pi * np.asarray(f)
            return 1 / ((wn ** 2 - w ** 2) ** 2 + (2 * z * wn * w) ** 2)
        G = 1.0 / (F2 - F1)
        k = np.arange(math.ceil(F1 * P), math.floor(F2 * P) + 1)
        lines = math.sqrt(np.sum(1.0 / len(k) * H2(k / P)))  # A^2 / 2 = rms^2 / K
        fgrid = np.linspace(F1, F2, 200001)
        band = math.sqrt(G * np.trapz(H2(fgrid), fgrid))
        white = math.sqrt(G / (8 * z * wn ** 3))
        head, D = read_csv(csv)
        x = D[D[:, 0] >= 50, head.index("xr")]  # past the transient (time constant 1 / (zeta wn) = 3.2 s)
        rms = math.sqrt(np.mean(x ** 2))
        check(abs(rms / lines - 1) < 3e-3, "sdof rms %.7g vs the line sum %.7g" % (rms, lines))
        check(abs(rms / band - 1) < 5e-3 and abs(rms / white - 1) < 1e-2,
              "sdof rms %.7g vs the band %.7g and white %.7g" % (rms, band, white))
        S = json.loads(out)["psd"][0]
        fpk = fn * math.sqrt(1 - 2 * z * z)  # the peak of |H|^2
        check(abs(S["peaks"][0]["freq_hz"] - fpk) < S["df"], "sdof PSD peak %s vs %.6f Hz" % (S["peaks"][0], fpk))
        _, ref = signal.welch(D[:, head.index("xr")], fs=20.0, window="hann", nperseg=S["segment"], detrend="constant")
        check(abs(S["rms"] / math.sqrt(np.sum(ref) * S["df"]) - 1) < 1e-12, "sdof Welch rms %.17g" % S["rms"])

sys.exit(finish("test_psd_cli"))
