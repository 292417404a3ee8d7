"""Issue 33, item 1: held velocities at a given point from Python (operating_point(velocities=...),
linearize(velocities=...)). The slider-crank of tests/opoint/slider_crank_given.yaml holds its
crank's 12 rad/s exactly; the slider's velocity is the closed form
x' = -r w sin th - r^2 w sin th cos th / sqrt(l^2 - r^2 sin^2 th)."""
import math

import pytest

import mblin

MODEL = "tests/opoint/slider_crank_given.yaml"
R, L, TH = 0.1, 0.4, 0.7


def xdot(w):
    return -R * w * math.sin(TH) - R * R * w * math.sin(TH) * math.cos(TH) / math.sqrt(L * L - (R * math.sin(TH)) ** 2)


def test_file_rate_held():
    m = mblin.load(MODEL)
    p = m.operating_point()
    i, j = m.coordinates.index("crank_th"), m.coordinates.index("slider_x")
    assert p.v[i] == 12.0
    assert p.v[j] == pytest.approx(xdot(12), rel=1e-12)
    assert "velocities held: der(crank_th) = 12" in p.notes


def test_keyword_holds_another_rate():
    m = mblin.load(MODEL)
    i, j = m.coordinates.index("crank_th"), m.coordinates.index("slider_x")
    p = m.operating_point(velocities={"crank_th": 10})
    assert p.v[i] == 10.0 and p.v[j] == pytest.approx(xdot(10), rel=1e-12)
    lin = m.linearize(velocities={"der(crank_th)": 8})
    assert lin.point.v[i] == 8.0 and lin.point.v[j] == pytest.approx(xdot(8), rel=1e-12)


def test_unknown_and_disagreeing():
    m = mblin.load(MODEL)
    with pytest.raises(mblin.ArgumentError, match="'crank_angle'"):
        m.operating_point(velocities={"crank_angle": 1})
    with pytest.raises(mblin.SingularError, match=r"der\(crank_th\) = 12, der\(slider_x\) = 3"):
        m.operating_point(velocities={"slider_x": 3})
