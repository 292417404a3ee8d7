"""Model.sweep, .sensitivity, .boundary, .freqresp (include/mblin/sweep.h, sensitivity.h) against the
CLI's JSON of the same commands, the bicycle's weave speed and a closed-form frequency response."""
import json
import re
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
    # the work limit (issue 30, item 17): refused before any work, raised by max_points
    with pytest.raises(mblin.ArgumentError, match="200001 points are more than the limit of 100000"):
        m.sweep("v", (2.0, 6.0, 200001))
    with pytest.raises(mblin.ArgumentError, match="3 points are more than the limit of 2"):
        m.sweep("v", (2.0, 6.0, 3), max_points=2)
    close(m.sweep("v", (2.0, 6.0, 3), max_points=3)["eigenvalues"].real, b["eigenvalues"].real)
    with pytest.raises(mblin.ArgumentError):
        m.sweep("v", (2.0, 6.0, 3), max_points=0)


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


def test_boundary_range_and_bracket(cli):
    """Ziegler's column flutters at P = (7/2 - sqrt 2) k / l = 41.7157 (k = 10, l = 0.5): found from
    above within a range, with the bracket, the point count and the kind as the CLI's JSON has them;
    a range without it is refused naming the range."""
    path = "tests/study/boundaries/ziegler_column.yaml"
    m = mblin.load(path)
    want = (3.5 - np.sqrt(2)) * 20
    b = m.boundary("P", 59, range=(30, 60))
    assert abs(b["value"] - want) < 1e-9 * want
    assert b["collision"] and not b["divergence"]
    assert b["bracket"][0] <= b["value"] <= b["bracket"][1]
    j = run_json(cli, "boundary", path, "--param", "P", "--near", "59", "--range", "30:60")
    close(b["value"], j["value"])
    assert list(b["bracket"]) == j["bracket"] and b["points"] == j["points"]
    with pytest.raises(mblin.ModelError, match=r"no boundary for P in \[5, 30\]"):
        m.boundary("P", 20, range=(5, 30))


ROTOR = "examples/mech/rigid_rotor.yaml"


def test_boundary_named_mode(cli, tmp_path):
    """The rotor's forward whirl meets the 1x line at sqrt(kc / (Id - Ip)) (kc = 2 k a^2): named by
    its shape (the tilt turning from about x towards about y, e2 = -i e1) and by its branch of a
    sweep, as the CLI's --shape and --branch --sweep name it."""
    m = mblin.load(ROTOR)
    want = np.sqrt(2 * 1e5 * 0.25**2 / (1.5 - 0.6))
    shape = "rotor_e1=1,rotor_e2=-i"
    b = m.boundary("Omega", 120, order=1, shape=shape)
    assert abs(b["value"] - want) < 1e-9 * want
    j = run_json(cli, "boundary", ROTOR, "--param", "Omega", "--near", "120", "--order", "1", "--shape", shape)
    close(b["value"], j["value"])
    assert b["mode_near"] == j["mode_near"]
    sweep = tmp_path / "sweep.json"
    out = subprocess.run([cli, "sweep", ROTOR, "--param", "Omega=100:140:5", "--json"], check=True,
                         capture_output=True, text=True).stdout
    sweep.write_text(out)
    branches = json.loads(out)["branches"]
    at100 = (0.6 * 100 + np.sqrt((0.6 * 100)**2 + 4 * 1.5 * 12500)) / 3.0  # the forward whirl at Omega = 100
    fwd = [i + 1 for i, br in enumerate(branches) if abs(br["im"][0] - at100) < 1e-8 * at100]
    assert len(fwd) == 1
    b2 = m.boundary("Omega", 120, order=1, branch=fwd[0], sweep=sweep)
    assert abs(b2["value"] - want) < 1e-9 * want
    j2 = run_json(cli, "boundary", ROTOR, "--param", "Omega", "--near", "120", "--order", "1",
                  "--branch", str(fwd[0]), "--sweep", str(sweep))
    close(b2["value"], j2["value"])
    with pytest.raises(mblin.ArgumentError):
        m.boundary("Omega", 120, mode=3, shape=shape)
    with pytest.raises(mblin.ArgumentError):
        m.boundary("Omega", 120, branch=2)
    with pytest.raises(mblin.ArgumentError):
        m.boundary("Omega", 120, sweep=sweep)
    for args in (["--mode", "3", "--shape", shape], ["--branch", "2"], ["--sweep", str(sweep)],
                 ["--branch", "0", "--sweep", str(sweep)]):
        r = subprocess.run([cli, "boundary", ROTOR, "--param", "Omega", "--near", "120", *args],
                           capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


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


def test_freqresp_mimo_scipy():
    """Every input to every output (issue 33, item 4) on the three-mass chain (3 forces, 2
    displacements): each entry against SciPy's freqresp of that channel of to_scipy(), and the
    singular values against numpy.linalg.svd."""
    import warnings
    import scipy.signal
    m = mblin.load("tests/study/chain3_mimo.yaml")
    w = np.geomspace(0.5, 200, 30)
    r = m.freqresp(w=w)
    assert r["response"].shape == (30, 2, 3) and r["inputs"] == ["F1", "F2", "F3"] and r["outputs"] == ["x1", "x3"]
    ss = m.linearize().to_scipy()
    for i in range(3):
        for o in range(2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", scipy.signal.BadCoefficients)
                _, h = scipy.signal.freqresp(scipy.signal.StateSpace(ss.A, ss.B[:, i:i + 1], ss.C[o:o + 1, :],
                                                                     ss.D[o:o + 1, i:i + 1]), w)
            assert np.max(np.abs(r["response"][:, o, i] - h) / np.abs(h)) < 1e-7
    for k in range(30):
        g = ss.C @ np.linalg.solve(1j * w[k] * np.eye(ss.A.shape[0]) - ss.A, ss.B) + ss.D
        assert np.max(np.abs(r["response"][k] - g)) <= 1e-12 * np.max(np.abs(g))
        s = np.linalg.svd(g, compute_uv=False)
        assert np.allclose(r["singular_values"][k], s, rtol=1e-12, atol=0)
    with pytest.raises(mblin.ArgumentError):
        m.freqresp("F1", None, w)


def test_study_on_model_from_text():
    osc = mblin.from_dict({"model": "dae", "parameters": {"m": 1.0, "k": 4.0}, "coordinates": {"x": 0},
                           "kinetic_energy": "0.5*m*der(x)^2", "potential_energy": "0.5*k*x^2"})
    s = osc.sweep("k", (1.0, 9.0, 3))
    close(np.sort(np.abs(s["eigenvalues"].imag), axis=1)[:, -1], [1.0, np.sqrt(5.0), 3.0])
    d = osc.sensitivity(["k"])
    # lambda = i sqrt(k/m): d lambda/dk = i / (2 sqrt(k m)) = 0.25 i for the +i branch
    i = int(np.argmax(d["eigenvalues"].imag))
    close(d["d_eigenvalues"][i, 0].imag, 0.25)


SMD = """model: dae
parameters: {m: 2, k: 400, c: 0.5, s: 0.5}
data:
  stiff: {method: linear, file: stiff.csv}
coordinates: {x: 0}
kinetic_energy: "0.5*m*der(x)^2"
potential_energy: "0.5*(k + table(stiff, s))*x^2"
dissipation: "0.5*c*der(x)^2"
linearize: {at: equilibrium}
"""


def test_study_on_model_in_memory(tmp_path):
    """Issue 66, item 4: sweep and boundary copy the model in memory (mbl_model_copy), not through a
    file: a spring-mass-damper from loads() whose table stiff.csv (k_t = 100 + 800 s) lies beside the
    name it was loaded under. Before, the text was written to a temporary file, where the table was
    not found ("stiff.csv: cannot open"), and messages named that file instead of the model's name."""
    (tmp_path / "stiff.csv").write_text("0,100\n1,900\n")
    name = str(tmp_path / "smd.yaml")
    m = mblin.loads(SMD, {"k": 0.0}, name=name)
    for threads in (1, 2):  # the sweep over s changes it in place on each thread's copy
        s = m.sweep("s", (0.25, 0.75, 3), threads=threads)
        kt = 100 + 800 * np.array([0.25, 0.5, 0.75])
        # |lambda| = sqrt(k/m) for any damping c (m = 2, k = 0 + k_t)
        close(np.sort(np.abs(s["eigenvalues"]), axis=1)[:, -1], np.sqrt(kt / 2), 1e-10)
    # a call's set goes over the model's: k = 200 back in
    s = m.sweep("s", (0.25, 0.75, 3), set={"k": 200.0})
    close(np.sort(np.abs(s["eigenvalues"]), axis=1)[:, -1], np.sqrt((200 + kt) / 2), 1e-10)
    # the damping's boundary: Re lambda = -c/(2m) crosses zero at c = 0, lambda = i sqrt(k/m) there
    b = m.boundary("c", 0.5, range=(-1.0, 1.0))
    assert abs(b["value"]) < 1e-9
    close(abs(b["eigenvalue"].imag), np.sqrt(500 / 2), 1e-9)  # k_t(0.5) = 500
    close(b["slope"], -0.25, 1e-6)  # d Re lambda / dc = -1/(2m)
    with pytest.raises(mblin.ArgumentError, match="^" + re.escape(name) + ": the model has no parameter 'nope'"):
        m.sweep("nope", (1.0, 2.0, 3))
