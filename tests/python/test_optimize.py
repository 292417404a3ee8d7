"""Model.optimize (include/mblin/optimize.h; docs/optimize.md): the tuned mass damper's
equal-damping optimum and least spectral abscissa against their closed form (tests/opt/test_optimize.c derives it), the H-infinity
optimum against the CLI's, a constraint and a model given as a string, and the errors."""
import math
import re
import subprocess

import pytest

import mblin

TMD = "tests/opt/tmd.yaml"


def test_max_min_damping_closed_form():
    mu = 0.05
    r = mblin.load(TMD).optimize({"k2": (0.02, 0.08), "c2": (0.001, 0.05, 0.04)}, "max:min-damping")
    assert r["algorithm"] == "mma" and r["coalesced"] is not None
    assert abs(r["parameters"]["k2"] - mu / (1 + mu) ** 2) < 1e-5 * mu / (1 + mu) ** 2
    c2 = 2 * mu * math.sqrt(mu / (1 + mu)) / (1 + mu)
    assert abs(r["parameters"]["c2"] - c2) < 1e-5 * c2
    assert abs(r["value"] - math.sqrt(mu) / 2) < 1e-5 * math.sqrt(mu) / 2
    assert min(r["damping_ratio"]) == pytest.approx(r["value"], rel=1e-12)
    assert len(r["history"]) == r["evaluations"] and r["eigenvalues"].shape == (4,)


def test_min_max_real_closed_form():
    """the least spectral abscissa: the double pair (s^2 + 2 a s + w^2)^2 (tests/opt/test_optimize.c)"""
    mu = 0.05
    a = math.sqrt(mu / (1 + mu)) / 2
    r = mblin.load(TMD).optimize({"k2": (0.02, 0.08), "c2": (0.001, 0.05, 0.04)}, "min:max-real")
    assert r["algorithm"] == "mma" and r["coalesced"] is not None and r["newton_steps"] >= 0
    assert r["parameters"]["k2"] == pytest.approx(mu / (1 + mu) ** 2, rel=1e-7)
    assert r["parameters"]["c2"] == pytest.approx(4 * a * mu / (1 + mu), rel=1e-6)
    assert r["value"] == pytest.approx(-a, rel=1e-7)
    assert max(r["eigenvalues"].real) == pytest.approx(r["value"], rel=1e-12)
    with pytest.raises(mblin.ArgumentError, match="can only be minimized"):
        mblin.load(TMD).optimize({"k2": (0.02, 0.08)}, "max:max-real")


def test_peak_to_an_output():
    """an oscillator's mobility |v / F| peaks at 1 / c (tests/opt/test_optimize.c, peak_output)"""
    text = """model: dae
parameters: {m: 1, k: 1, c: 0.2}
coordinates: {x: 0}
kinetic_energy: "0.5*m*der(x)^2"
potential_energy: "0.5*k*x^2"
dissipation: "0.5*c*der(x)^2"
forces: {x: F}
inputs: {F: 0}
outputs: {v: der(x)}
linearize: {at: equilibrium}
"""
    r = mblin.loads(text).optimize({"c": (0.05, 2)}, "min:change", ["peak:F:v:0.05:0.5<=2"])
    assert r["parameters"]["c"] == pytest.approx(0.5, rel=1e-6)


def test_expression_through_the_chain_of_parameters():
    """J = (2 m)^2 computed by the file: J/8 + 1/m = m^2/2 + 1/m least at m = 1"""
    text = """model: dae
parameters: {m: 0.5, k: 1, c: 0.2, mass: "2*m", J: "mass^2"}
coordinates: {x: 0}
kinetic_energy: "0.5*m*der(x)^2"
potential_energy: "0.5*k*x^2 - x"
dissipation: "0.5*c*der(x)^2"
linearize: {at: equilibrium}
"""
    r = mblin.loads(text).optimize({"m": (0.2, 5)}, "min:expr:J/8 + 1/m")
    assert r["parameters"]["m"] == pytest.approx(1, rel=1e-6) and r["value"] == pytest.approx(1.5, rel=1e-12)


def test_hinf_matches_cli(cli):
    goal = "min:peak:F:x1:0.1:0.25"
    r = mblin.load(TMD).optimize({"k2": (0.02, 0.08), "c2": (0.001, 0.05)}, goal)
    out = subprocess.run([cli, "optimize", TMD, "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", goal, "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    k2 = float(re.search(r"k2\s+= (\S+)", out).group(1))
    peak = float(re.search(r"objective: .* = (\S+) at", out).group(1))
    assert r["parameters"]["k2"] == pytest.approx(k2, rel=1e-9)
    assert r["value"] == pytest.approx(peak, rel=1e-9)
    assert r["algorithm"] == "slsqp" and 0.14 < r["peak_hz"] < 0.17


def test_constraint_on_a_string_model():
    text = open("tests/study/two_mass.yaml").read()
    r = mblin.loads(text).optimize({"k1": (400, 1600), "k2": (150, 600)}, "min:change", ["freq:1!=2.5:2.9"])
    assert r["freq_hz"][0] == pytest.approx(2.5, rel=1e-7)
    assert r["constraint_modes"] == [1] and r["violation"] <= 1e-6


def test_critical_speed():
    text = """model: dae
name: gyroscopic rotor
parameters: {It: 1, Ip: 0.5, k: 4, Omega: 1}
coordinates: {tx: 0, ty: 0}
kinetic_energy: "0.5*It*(der(tx)^2 + der(ty)^2) + 0.5*Ip*Omega*(der(tx)*ty - tx*der(ty))"
potential_energy: "0.5*k*(tx^2 + ty^2)"
linearize: {at: equilibrium}
"""
    # the 1x critical speed sqrt(k / (It - Ip)) out of 2.5..3.5: k = 0.5 * 2.5^2
    r = mblin.loads(text).optimize({"k": (0.5, 20)}, "min:change", "critical:3:Omega:1:3!=2.5:3.5")
    assert r["parameters"]["k"] == pytest.approx(3.125, rel=1e-8)
    # the forward whirl 0.5 rad/s off the 1x line of the varied speed itself, from Omega = 2.9: the
    # band's upper edge, Omega^2 - 1.5 Omega - 7.5 = 0 (w = Omega - 0.5 in It w^2 - Ip Omega w - k = 0)
    h = 0.5 / (2 * math.pi)
    r = mblin.loads(text.replace("Omega: 1}", "Omega: 2.9}")).optimize(
        {"Omega": (0.5, 6)}, "min:change", "order:3:Omega:1!=%.17g:%.17g" % (-h, h))
    assert r["parameters"]["Omega"] == pytest.approx((1.5 + math.sqrt(32.25)) / 2, rel=1e-6)


def test_expression():
    # the cost 3 k2 least with the second frequency >= 4.8 Hz: the constraint active
    text = open("tests/study/two_mass.yaml").read()
    r = mblin.loads(text).optimize({"k2": (150, 600)}, "min:expr:3*k2", ["freq:3>=4.8"])
    assert r["freq_hz"][2] == pytest.approx(4.8, rel=1e-6) and r["value"] == pytest.approx(3 * r["parameters"]["k2"])


def test_errors():
    m = mblin.load(TMD)
    with pytest.raises(mblin.ArgumentError, match="unknown quantity"):
        m.optimize({"k2": (0.02, 0.08)}, "max:freq")
    with pytest.raises(mblin.ArgumentError, match="no parameter 'kx'"):
        m.optimize({"kx": (0.02, 0.08)}, "min:change")
    with pytest.raises(mblin.ArgumentError, match="Q>=A"):
        m.optimize({"k2": (0.02, 0.08)}, "min:change", ["freq:1>0.2"])
    with pytest.raises(mblin.ModelError, match="infeasible"):
        m.optimize({"k2": (0.02, 0.08)}, "min:change", ["freq:1>=1"])
