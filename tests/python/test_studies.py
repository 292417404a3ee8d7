"""Model.sweep, .sensitivity, .boundary, .freqresp (include/mblin/sweep.h, sensitivity.h) against the
CLI's JSON of the same commands, the bicycle's weave speed and a closed-form frequency response."""
import json
import subprocess

import numpy as np
import pytest

import mblin

BIKE = "examples/whipple_bicycle.yaml"
SLIDER = "examples/slider_pendulum.yaml"


def run_json(cli, *args):
    out = subprocess.run([cli, *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def close(a, b, tol=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    assert np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True), (a, b)


@pytest.mark.parametrize("path,param,rng", [(BIKE, "v", (1.0, 10.0, 7)), (SLIDER, "k", (10.0, 40.0, 4))])
def test_sweep_matches_cli(cli, path, param, rng):
    j = run_json(cli, "sweep", path, "--param", "%s=%g:%g:%d" % ((param,) + rng))
    s = mblin.load(path).sweep(param, rng, threads=2)
    close(s["values"], [v[0] for v in j["values"]])
    assert s["eigenvalues"].shape == (rng[2], len(j["branches"]))
    for b, br in enumerate(j["branches"]):
        close(s["eigenvalues"][:, b].real, br["re"])
        close(s["eigenvalues"][:, b].imag, br["im"])
        close(s["freq_hz"][:, b], br["freq_hz"])
        close(s["damping_ratio"][:, b], br["damping_ratio"])
    assert s["ok"].all()


def test_sweep_values_array_and_errors():
    m = mblin.load(BIKE)
    a = m.sweep("v", np.linspace(2.0, 6.0, 3))
    b = m.sweep("v", (2.0, 6.0, 3))
    close(a["eigenvalues"].real, b["eigenvalues"].real)
    with pytest.raises(mblin.ArgumentError):
        m.sweep("v", [1.0, 2.0, 5.0])
    with pytest.raises(mblin.Error):
        m.sweep("no_such_parameter", (1.0, 2.0, 3))


@pytest.mark.parametrize("path,wrt", [(BIKE, "v"), (SLIDER, "k,m3")])
def test_sensitivity_matches_cli(cli, path, wrt):
    j = run_json(cli, "sensitivity", path, "--wrt", wrt)
    s = mblin.load(path).sensitivity(wrt.split(","))
    assert s["wrt"] == j["parameters"]
    assert len(s["eigenvalues"]) == len(j["modes"])
    for i, md in enumerate(j["modes"]):
        close(s["eigenvalues"][i].real, md["re"])
        close(s["eigenvalues"][i].imag, md["im"])
        for w, d in enumerate(md["d"]):
            close(s["d_eigenvalues"][i, w].real, d["re"])
            close(s["d_eigenvalues"][i, w].imag, d["im"])
            close(s["d_freq_hz"][i, w], d["freq_hz"])
            close(s["d_damping_ratio"][i, w], d["damping_ratio"])
            close(s["d_shapes"][:, i, w].real, d["shape_re"])
            close(s["d_shapes"][:, i, w].imag, d["shape_im"])
    with pytest.raises(mblin.ArgumentError):
        mblin.load(path).sensitivity(["no_such_parameter"])


def test_boundary_weave_speed(cli):
    m = mblin.load(BIKE)
    b = m.boundary("v", 4.3)
    assert abs(b["value"] - 4.29238253634111) < 1e-9  # the benchmark's weave speed (Meijaard et al. 2007)
    j = run_json(cli, "boundary", BIKE, "--param", "v", "--near", "4.3")
    close(b["value"], j["value"])
    close(b["eigenvalue"].imag, j["eigenvalue"]["im"])
    with pytest.raises(mblin.Error):
        m.boundary("no_such_parameter", 4.3)


def test_freqresp_closed_form():
    mm, k, c = 2.0, 5.0, 0.3
    osc = mblin.from_dict({"model": "dae", "parameters": {"m": mm, "k": k, "c": c}, "coordinates": {"x": 0},
                           "kinetic_energy": "0.5*m*der(x)^2", "potential_energy": "0.5*k*x^2",
                           "dissipation": "0.5*c*der(x)^2", "forces": {"x": "F"}, "inputs": {"F": 0},
                           "outputs": {"pos": "x"}})
    w = np.array([0.1, 0.5, 1.0, np.sqrt(k / mm), 3.0, 10.0])
    r = osc.freqresp("F", "pos", w)
    exact = 1.0 / (k - mm * w**2 + 1j * c * w)
    assert np.allclose(r["response"], exact, rtol=1e-12, atol=0)
    close(r["mag"], np.abs(exact))
    with pytest.raises(mblin.ArgumentError):
        osc.freqresp("G", "pos", w)


def test_study_on_model_from_text():
    osc = mblin.from_dict({"model": "dae", "parameters": {"m": 1.0, "k": 4.0}, "coordinates": {"x": 0},
                           "kinetic_energy": "0.5*m*der(x)^2", "potential_energy": "0.5*k*x^2"})
    s = osc.sweep("k", (1.0, 9.0, 3))
    close(np.sort(np.abs(s["eigenvalues"].imag), axis=1)[:, -1], [1.0, np.sqrt(5.0), 3.0])
    d = osc.sensitivity(["k"])
    # lambda = i sqrt(k/m): d lambda/dk = i / (2 sqrt(k m)) = 0.25 i for the +i branch
    i = int(np.argmax(d["eigenvalues"].imag))
    close(d["d_eigenvalues"][i, 0].imag, 0.25)
