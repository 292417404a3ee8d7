"""The Python package gives the numbers of the command line: every example's `mblin linearize
--json` against mblin.load(...).linearize() (matrices, eigenvalues, modes, operating point)."""
import json
import math
import subprocess

import numpy as np
import pytest

import mblin
from conftest import ROOT

EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in list(ROOT.glob("examples/*.yaml")) +
                  list(ROOT.glob("examples/mech/*.yaml")))


def run_cli(cli, *args):
    p = subprocess.run([cli, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def close(a, b, what, rtol=1e-9):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape, "%s: shape %s vs %s" % (what, a.shape, b.shape)
    if a.size:
        scale = max(np.max(np.abs(b)), 1.0)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what)


def matrix(rows, nrows, ncols):
    """A JSON list of rows as an array of the expected shape (an empty list has no columns)."""
    return np.array(rows, dtype=float).reshape(nrows, ncols)


def test_examples_found():
    assert len(EXAMPLES) >= 30


@pytest.mark.parametrize("path", EXAMPLES)
def test_example_matches_cli(cli, path):
    # the library's default Jacobian is symbolic; the command line's forward (docs/python.md)
    rc, out, err = run_cli(cli, "linearize", path, "--json", "--symbolic-jacobian")
    if rc != 0:
        # the library refuses the model: Python raises the same one-line reason
        with pytest.raises(mblin.Error) as e:
            mblin.load(path).linearize()
        assert err.strip() == "mblin: " + str(e.value)
        return
    j = json.loads(out)
    model = mblin.load(path)
    lin = model.linearize()

    assert lin.method == j["method"]
    assert lin.states == j["states"]
    assert lin.velocity_states == j["velocity_states"]
    assert lin.inputs == j["inputs"] and lin.outputs == j["outputs"]
    assert model.name == j["model"]
    nx, nu, ny = lin.A.shape[0], len(lin.inputs), len(lin.outputs)
    z0, z1 = len(lin.states), len(lin.velocity_states)
    for k, (r, c) in {"A": (nx, nx), "B": (nx, nu), "C": (ny, nx), "D": (ny, nu)}.items():
        close(getattr(lin, k), matrix(j["ss"][k], r, c), k)
        close(lin.ss[k], matrix(j["ss"][k], r, c), "ss." + k)
    for k, (r, c) in {"M": (z1, z1), "C": (z1, z1), "K": (z1, z0), "F": (z1, nu)}.items():
        close(lin.mck[k], matrix(j["mck"][k], r, c), "mck." + k)
    close(lin.Cd, lin.mck.C, "Cd")
    close(lin.q_S, matrix(j["q_S"], model.n, z0), "q_S")
    assert lin.eigen_solver == j["eigen_solver"]
    assert abs(lin.condition - j["condition"]) <= 1e-6 * j["condition"]
    assert lin.selection == j["selection"]
    assert lin.spectrum["partial"] == j["spectrum"]["partial"]
    assert lin.spectrum["count"] == j["spectrum"]["count"] and lin.spectrum["of"] == j["spectrum"]["of"]

    ev = j["eigenvalues"]
    assert len(lin.eigenvalues) == len(ev)
    scale = max([math.hypot(e["re"], e["im"]) for e in ev] + [1.0])
    for i, (mode, e) in enumerate(zip(lin.modes, ev)):
        assert abs(mode.eigenvalue - complex(e["re"], e["im"])) <= 1e-9 * scale, "eigenvalue %d" % i
        assert abs(mode.freq_hz - e["freq_hz"]) <= 1e-9 * scale
        assert abs(mode.damping_ratio - e["damping_ratio"]) <= 1e-7
        assert mode.spurious == e["spurious"] and mode.kind == e["kind"]
    close(lin.frequencies, [e["freq_hz"] for e in ev], "frequencies")
    close(lin.damping, [e["damping_ratio"] for e in ev], "damping", rtol=1e-7)

    # mode shapes: the same normalization, so the same vectors (each up to rounding)
    ms = j["mode_shapes"]
    assert ms["coordinates"] == model.coordinates == lin.coordinates
    shapes = np.array(ms["re"], dtype=float).reshape(model.n, -1) + 1j * np.array(ms["im"], dtype=float).reshape(model.n, -1)
    assert lin.shapes.shape == shapes.shape
    for i in range(shapes.shape[1]):
        a, b = lin.shapes[:, i], shapes[:, i]
        if lin.modes[i].kind != "zero":  # a multiple zero eigenvalue's basis is not unique
            assert np.linalg.norm(a - b) <= 1e-6 * max(np.linalg.norm(b), 1.0), "shape %d" % i
        np.testing.assert_array_equal(lin.modes[i].shape, lin.shapes[:, i])

    op = j["operating_point"]
    pt = lin.point
    assert pt.at == op["at"] and pt.t == op["t"] and pt.coordinates == op["coordinates"]
    for k, mine in (("q", pt.q), ("v", pt.v), ("vdot", pt.vdot), ("lambda", pt.lambda_), ("mu", pt.mu),
                    ("inputs", pt.inputs), ("outputs", pt.outputs)):
        close(mine, op[k], "operating_point." + k)
    assert pt.iterations == op["iterations"]
    assert pt.constraint_rank == op["constraint_rank"]


@pytest.mark.parametrize("method", ["partition", "nullspace", "descriptor", "penalty"])
def test_methods_match_cli(cli, method):
    path = "examples/fourbar_N5_damped.yaml"
    rc, out, err = run_cli(cli, "linearize", path, "--json", "--method", method, "--symbolic-jacobian")
    assert rc == 0, err
    j = json.loads(out)
    lin = mblin.load(path).linearize(method)
    assert lin.method == method == j["method"]
    got = lin.eigenvalues
    want = np.array([complex(e["re"] if e["re"] is not None else np.inf, e["im"] if e["im"] is not None else 0)
                     for e in j["eigenvalues"]])
    fin = np.isfinite(want)
    assert np.array_equal(fin, np.isfinite(got))
    close(got[fin].real, want[fin].real, "re")
    close(got[fin].imag, want[fin].imag, "im")
    assert list(lin.spurious) == [e["spurious"] for e in j["eigenvalues"]]
    # the per-eigenvalue error estimate of the methods that measure it, as the JSON has it
    for i, e in enumerate(j["eigenvalues"]):
        if "error_estimate" in e:
            close(lin.error_estimates[i], e["error_estimate"], "error_estimate")
        else:
            assert not np.isfinite(lin.error_estimates[i])
    if method == "penalty":
        assert np.all(np.isfinite(lin.error_estimates[~lin.spurious]))
    if method == "descriptor":
        nd = lin.descriptor.E.shape[0]
        assert lin.descriptor.A.shape == (nd, nd) and lin.descriptor.B.shape == (nd, len(lin.inputs))


def test_set_matches_cli(cli):
    path = "examples/slider_pendulum.yaml"
    rc, out, err = run_cli(cli, "linearize", path, "--json", "--symbolic-jacobian", "--set", "k=35.5", "--set", "c=0.25")
    assert rc == 0, err
    j = json.loads(out)
    for lin in (mblin.load(path, set={"k": 35.5, "c": 0.25}).linearize(),
                mblin.load(path).linearize(set={"k": 35.5, "c": 0.25}),
                mblin.load(path, set={"k": 1}).linearize(set={"k": 35.5, "c": 0.25})):
        close(lin.A, j["ss"]["A"], "A")
        close(lin.eigenvalues.real, [e["re"] for e in j["eigenvalues"]], "re")
        close(lin.eigenvalues.imag, [e["im"] for e in j["eigenvalues"]], "im")


def test_given_point_and_guess_match_cli(cli):
    path = "examples/fourbar_N1.yaml"
    model = mblin.load(path)
    c0 = model.coordinates[0]
    # xB0 = -0.5: the equilibrium th* (xB0 = -0.6159); from xB0 = 0.3 it is now the one at
    # th = pi/2, a singular configuration of this model's phi (issue 29), which linearize refuses
    rc, out, err = run_cli(cli, "linearize", path, "--json", "--symbolic-jacobian", "--guess", "%s=-0.5" % c0)
    assert rc == 0, err
    j = json.loads(out)
    lin = model.linearize(guess={c0: -0.5})
    close(lin.point.q, j["operating_point"]["q"], "q")
    close(lin.A, j["ss"]["A"], "A")


def test_partial_spectrum_matches_cli(cli):
    path = "examples/flexible_pendulum_np5.yaml"
    rc, out, err = run_cli(cli, "linearize", path, "--json", "--symbolic-jacobian", "--nev", "4")
    assert rc == 0, err
    j = json.loads(out)
    lin = mblin.load(path).linearize(nev=4)
    assert j["spectrum"]["partial"] and lin.spectrum["partial"]
    assert lin.spectrum["count"] == j["spectrum"]["count"] == 4 and lin.spectrum["of"] == j["spectrum"]["of"]
    assert lin.spectrum["shift"] == j["spectrum"]["shift"] and lin.spectrum["reason"] == j["spectrum"]["reason"]
    assert "not_formed" in j["spectrum"] and lin.A is None and lin.state_names is None and lin.K is None
    close(lin.eigenvalues.real, [e["re"] for e in j["eigenvalues"]], "re", rtol=1e-8)
    close(lin.eigenvalues.imag, [e["im"] for e in j["eigenvalues"]], "im", rtol=1e-8)
    with pytest.raises(mblin.Error, match="not formed"):
        lin.to_scipy()


def test_compare_matches_cli(cli):
    path = "examples/fourbar_N5.yaml"
    rc, out, err = run_cli(cli, "compare", path, "--json", "--repeat", "1")
    assert rc == 0, err
    j = json.loads(out)
    c = mblin.load(path).compare(repeat=1)
    assert c.reference == j["reference"]
    assert [r["method"] for r in c.rows] == [r["method"] for r in j["methods"]]
    for mine, theirs in zip(c.rows, j["methods"]):
        assert mine["ok"] == theirs["ok"], mine["method"]
        assert mine["physical_eigenvalues"] == theirs["physical_eigenvalues"]
        if theirs["max_rel_deviation"] is None:
            assert mine["max_rel_deviation"] is None
        else:
            assert abs(mine["max_rel_deviation"] - theirs["max_rel_deviation"]) <= 1e-6 + 1e-3 * theirs["max_rel_deviation"]
