"""Issue 35, item 3: at "trim" from Python (operating_point(at="trim", targets=...)). The
single-track car of examples/vehicle/single_track_turn.yaml trimmed for a radius given by
targets=: steer angle against the closed form delta = L/Rc + K_us U^2/Rc with Rc = U/r."""
import math

import pytest

import mblin

MODEL = "examples/vehicle/single_track_turn.yaml"
m, a, b, Cf, Cr, U = 1500.0, 1.2, 1.5, 80000.0, 90000.0, 20.0


def test_targets_keyword():
    mod = mblin.load(MODEL)
    p = mod.operating_point(targets={"rho": 150})
    i = mod.coordinates.index("theta")
    r = p.v[i]
    L = a + b
    Rc = U / r
    beta = b / Rc - m * a * U * U / (L * Cr * Rc)
    assert p.at == "trim"
    assert p.q[mod.coordinates.index("rho")] == pytest.approx(150, rel=1e-12)
    assert Rc * math.sqrt(1 + beta * beta) == pytest.approx(150, rel=1e-9)
    delta = L / Rc + m / L * (b / Cf - a / Cr) * U * U / Rc
    assert p.inputs[0] == pytest.approx(delta, rel=1e-9)
    assert "solved: delta" in p.trim and p.trim_residual <= 1e-9
    lin = mod.linearize(targets={"rho": 150})
    assert lin.point.inputs[0] == pytest.approx(delta, rel=1e-9)


def test_unknown_target():
    with pytest.raises(mblin.ArgumentError, match="'radius'"):
        mblin.load(MODEL).operating_point(targets={"radius": 1})
