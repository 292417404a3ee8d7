"""The API on models whose linearization is known in closed form, and its conveniences."""
import math
import pathlib
import subprocess
import threading

import numpy as np
import pytest

import mblin


def oscillator(m=2.0, k=8.0, c=0.0):
    """m x'' + c x' + k x = F, output x."""
    return {"model": "dae", "name": "oscillator", "parameters": {"m": m, "k": k, "c": c},
            "coordinates": {"x": 0}, "kinetic_energy": "0.5*m*der(x)^2", "potential_energy": "0.5*k*x^2",
            "dissipation": "0.5*c*der(x)^2", "forces": {"x": "F"}, "inputs": {"F": 0}, "outputs": {"pos": "x"}}


def test_oscillator_closed_form():
    m, k, c = 2.0, 8.0, 0.6
    lin = mblin.from_dict(oscillator(m, k, c)).linearize()
    np.testing.assert_allclose(lin.A, [[0, 1], [-k / m, -c / m]], rtol=1e-14)
    np.testing.assert_allclose(lin.B, [[0], [1 / m]], rtol=1e-14)
    np.testing.assert_allclose(lin.C, [[1, 0]]) and np.testing.assert_allclose(lin.D, [[0]])
    np.testing.assert_allclose(lin.mck.M, [[m]]), np.testing.assert_allclose(lin.mck.C, [[c]])
    np.testing.assert_allclose(lin.mck.K, [[k]]), np.testing.assert_allclose(lin.mck.F, [[1]])
    wn, zeta = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - zeta ** 2)
    want = sorted([complex(-zeta * wn, wd), complex(-zeta * wn, -wd)], key=lambda s: -s.imag)
    got = sorted(lin.eigenvalues, key=lambda s: -s.imag)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(lin.frequencies, wn / (2 * math.pi), rtol=1e-12)
    np.testing.assert_allclose(lin.damping, zeta, rtol=1e-12)
    # the damped frequency (source 003's Table 5.2): wd / 2 pi of the closed form, per mode and as an array
    np.testing.assert_allclose(lin.damped_frequencies, wd / (2 * math.pi), rtol=1e-12)
    np.testing.assert_allclose([md.damped_freq_hz for md in lin.modes], wd / (2 * math.pi), rtol=1e-12)
    assert lin.kinds == ["oscillatory", "oscillatory"] and not lin.spurious.any()
    assert lin.states == ["x"] and lin.velocity_states == ["der(x)"] and lin.inputs == ["F"]
    assert lin.model.parameters == {"m": m, "k": k, "c": c}


# SciPy warns about the leading zero coefficients of the transfer function it forms from a
# state-space model (numerator of lower degree): that is its conversion, not our data.
@pytest.mark.filterwarnings("ignore:Badly conditioned filter coefficients")
def test_to_scipy_frequency_response():
    m, k, c = 2.0, 8.0, 0.6
    sys = mblin.from_dict(oscillator(m, k, c)).linearize().to_scipy()
    w = np.array([0.5, 2.0, 7.0])
    _, h = sys.freqresp(w)
    np.testing.assert_allclose(h, 1.0 / (k - m * w ** 2 + 1j * c * w), rtol=1e-12)
    np.testing.assert_allclose(sorted(sys.poles, key=lambda s: s.imag),
                               sorted(np.roots([m, c, k]), key=lambda s: s.imag), rtol=1e-12)


def test_to_scipy_without_inputs():
    lin = mblin.load("examples/fourbar_N1.yaml").linearize()
    assert lin.B.shape[1] == 0
    sys = lin.to_scipy()  # SciPy needs one input and one output: zero ones are added
    assert sys.B.shape == (2, 1) and not sys.B.any() and sys.C.shape == (1, 2) and not sys.C.any()
    np.testing.assert_array_equal(sys.A, lin.A)


def test_from_dict_takes_numpy_values():
    d = oscillator()
    d["parameters"] = {"m": np.float32(2.0), "k": np.int64(8), "c": np.array(0.0)}
    lin = mblin.from_dict(d).linearize()
    np.testing.assert_allclose(np.abs(lin.eigenvalues), 2.0, rtol=1e-14)
    d["parameters"]["k"] = object()
    with pytest.raises(TypeError, match="not a number"):
        mblin.from_dict(d)


def test_set_per_call_and_reload():
    model = mblin.from_dict(oscillator())
    assert model.linearize(set={"k": 18.0}).frequencies[0] == pytest.approx(3.0 / (2 * math.pi), rel=1e-13)
    assert model.parameters["k"] == 8.0  # the model itself is unchanged
    stiff = model.reload({"k": 32.0})
    assert stiff.parameters["k"] == 32.0 and stiff.reload({"m": 8.0}).parameters == {"m": 8.0, "k": 32.0, "c": 0.0}
    assert stiff.linearize().frequencies[0] == pytest.approx(4.0 / (2 * math.pi), rel=1e-13)


def test_user_states_per_call():
    model = mblin.load("examples/slider_pendulum.yaml")
    base = model.linearize()
    swapped = model.linearize(states=["theta", "y"])
    assert base.states == ["y", "theta"] and swapped.states == ["theta", "y"]
    np.testing.assert_allclose(swapped.eigenvalues, base.eigenvalues, atol=1e-12)
    # a permutation of the states permutes A: P A P^T
    P = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=float)
    np.testing.assert_allclose(swapped.A, P @ base.A @ P.T, atol=1e-12)
    tip = model.linearize(states=["y + l*sin(theta)", "y"])
    np.testing.assert_allclose(np.sort(tip.frequencies), np.sort(base.frequencies), rtol=1e-10)
    assert "user states" in tip.selection


def test_operating_points():
    model = mblin.load("examples/rotating_pendulum_steady.yaml")
    pt = model.operating_point()
    assert pt.at == "steady" and pt.residual < 1e-10 and pt.as_dict().keys() == set(model.coordinates)
    given = model.operating_point("given", q=pt.q, v=pt.v)
    assert given.at == "given"
    np.testing.assert_allclose(given.q, pt.q)
    lin = model.linearize(point=pt)
    assert lin.point is pt
    osc = mblin.from_dict(oscillator())
    p = osc.operating_point("given", q=[0.25])
    assert p.q[0] == 0.25 and p.vdot[0] == pytest.approx(-8.0 * 0.25 / 2.0)
    assert osc.linearize(at="given", q=[0.25]).point.q[0] == 0.25
    assert osc.equilibrium(guess={"x": 3.0}).q[0] == pytest.approx(0.0, abs=1e-12)
    assert osc.operating_point("given", q=[0.5]).outputs[0] == 0.5


def test_modes_and_shapes():
    lin = mblin.load("examples/slider_pendulum.yaml").linearize()
    for mode in lin.modes:
        s = mode.eigenvalue
        x = lin.q_S.T @ mode.shape if lin.q_S.shape[0] == lin.q_S.shape[1] else mode.shape
        r = (s * s * lin.M + s * lin.Cd + lin.K) @ x
        assert np.linalg.norm(r) <= 1e-10 * np.linalg.norm(lin.K) * np.linalg.norm(x)
        assert set(mode.shape_dict()) == {"y", "theta"}
    assert "freq (Hz)" in lin.eigen_table() and len(lin.eigen_table().splitlines()) == 1 + len(lin.modes)


def test_loaders_agree(root):
    path = root / "examples" / "slider_pendulum.yaml"
    a = mblin.load(pathlib.Path(path)).linearize()
    b = mblin.loads(path.read_text(), name="slider.yaml").linearize()
    c = mblin.loads(path.read_bytes()).linearize()
    for other in (b, c):
        np.testing.assert_array_equal(a.A, other.A)
    assert mblin.loads(path.read_text(), name="slider.yaml").file == "slider.yaml"


def test_threads_share_a_model():
    model = mblin.load("examples/mech/fourbar_N10_damped.yaml")
    want = model.linearize().eigenvalues
    out, errors = [], []

    def work():
        try:
            for _ in range(20):
                out.append(model.linearize().eigenvalues)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and len(out) == 80
    for e in out:
        np.testing.assert_array_equal(e, want)


def test_version_and_methods(cli):
    out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
    assert out.split("\n")[0] == "mblin " + mblin.__version__  # then the BLAS kernels' line
    assert mblin.methods()[0] == "augmented" and "descriptor" in mblin.methods()


def test_outputs_kept_and_descriptor_multiplier():
    """Issue 33, item 2: load(outputs=[...]) keeps those outputs in that order (an unknown name is an
    ArgumentError); the descriptor form's own D of a multiplier output differs from the state-space
    D, and both forms have the same transfer function. Pendulum held at an angle by F: the tension
    lambda(rod) of x^2 + y^2 - l^2 answers F at once with D = sin(th) / (2 l)."""
    m, l, g, F = 2.0, 1.5, 9.81, 8.0
    d = {"model": "dae", "parameters": {"m": m, "l": l, "g": g}, "coordinates": {"x": 0.5, "y": -1.4},
         "kinetic_energy": "0.5*m*(der(x)^2 + der(y)^2)", "potential_energy": "m*g*y",
         "inputs": {"F": F}, "forces": {"x": "F"}, "constraints": {"rod": "x^2 + y^2 - l^2"},
         "outputs": {"tension": "lambda(rod)", "xo": "x", "ay": "der(der(y))"},
         "linearize": {"at": "equilibrium", "states": ["x"]}}
    kept = mblin.from_dict(d, outputs=["ay", "tension"])
    assert kept.outputs == ["ay", "tension"]
    assert kept.reload({"m": 3}).outputs == ["ay", "tension"]
    with pytest.raises(mblin.ArgumentError, match="no output named 'nope'"):
        mblin.from_dict(d, outputs=["nope"])
    lin = mblin.from_dict(d).linearize("descriptor")
    sin_th = F / math.hypot(m * g, F)
    np.testing.assert_allclose(lin.D[0, 0], sin_th / (2 * l), rtol=1e-10)
    ds = lin.descriptor
    assert abs(ds.D[0, 0] - lin.D[0, 0]) > 0.1
    for s in (0.7, 2.8, 3j):
        g_ss = lin.C @ np.linalg.solve(s * np.eye(lin.A.shape[0]) - lin.A, lin.B) + lin.D
        g_d = ds.C @ np.linalg.solve(s * ds.E - ds.A, ds.B) + ds.D
        np.testing.assert_allclose(g_d, g_ss, rtol=1e-10, atol=1e-12)


def test_penalty_matrices():
    """pen_Xi, pen_Theta, pen_Omega (source 001 Eq. 11-12): a point mass with springs kx, ky, kz and
    the constraints x = 0, y = 0; each row's penalty (m + Xi_i) s^2 + Xi_i Theta_i s + (k_i + Xi_i
    Omega_i) has the spurious pair as its roots (NumPy's), a diagonal given as m numbers or as the
    m x m array alike; the wrong size or an indefinite Xi is refused naming the option."""
    m, k = 2.0, (8.0, 18.0, 2.0)
    model = mblin.from_dict({"model": "dae", "parameters": {"m": m, "kx": k[0], "ky": k[1], "kz": k[2]},
                             "coordinates": {"x": 0.1, "y": 0.2, "z": 0.1},
                             "kinetic_energy": "0.5*m*(der(x)^2 + der(y)^2 + der(z)^2)",
                             "potential_energy": "0.5*kx*x^2 + 0.5*ky*y^2 + 0.5*kz*z^2", "constraints": ["x", "y"]})
    xi, th, om = [50.0, 200.0], [3.0, 0.5], [16.0, 9.0]
    want = np.sort_complex(np.concatenate([np.roots([m + xi[i], xi[i] * th[i], k[i] + xi[i] * om[i]])
                                           for i in range(2)]))
    for opts in ({"pen_Xi": xi, "pen_Theta": th, "pen_Omega": om},
                 {"pen_Xi": np.diag(xi), "pen_Theta": np.diag(th), "pen_Omega": np.diag(om)}):
        lin = model.linearize("penalty", **opts)
        np.testing.assert_allclose(np.sort_complex(lin.eigenvalues[lin.spurious]), want, rtol=1e-9)
        np.testing.assert_allclose(np.sort_complex(lin.eigenvalues[~lin.spurious]), [-1j, 1j], atol=1e-9)
    with pytest.raises(mblin.ArgumentError, match="pen_Xi: 3 x 3, the model has 2 holonomic constraints"):
        model.linearize("penalty", pen_Xi=[1.0, 2.0, 3.0])
    with pytest.raises(mblin.Error, match="the matrix Xi .*not positive definite"):
        model.linearize("penalty", pen_Xi=[[1.0, 2.0], [2.0, 1.0]])
