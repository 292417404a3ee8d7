"""Issue 68, items E.2 and E.3: user routines written in Python (load(user={name: fn})) and the
permission to run a library's code (allow_user_code, UserCodeError): docs/python.md, "User
routines".

The independent values: the same functions written in the expression language (a cubic spring and
its partials), the same table written as a data set read by table() (examples/user/aero_table.py),
and closed forms (the equilibrium of the cubic spring by Cardano's formula, the section's frequency
on its table segment)."""
import importlib.util
import math
import os
import pathlib
import threading
import time

import numpy as np
import pytest

import mblin

ROOT = pathlib.Path(__file__).resolve().parents[2]
M, K, K3, F0 = 2.0, 8.0, 3.0, 5.0


def spring_dict(routine=True, partials=True):
    """A mass on a cubic spring under a constant force: the spring's force from the routine
    `spring` (inputs x, k, k3; output fs) or written as an expression."""
    d = {"model": "dae", "parameters": {"m": M, "k": K, "k3": K3, "F0": F0},
         "coordinates": {"x": 0.5},
         "kinetic_energy": "0.5*m*der(x)^2",
         "forces": {"x": "fs + F0"},
         "inputs": {"u": 0}, "outputs": {"pos": "x + u", "force": "fs"},
         "linearize": {"at": "equilibrium"}}
    if routine:
        d["routines"] = {"spring": {"inputs": ["x", "k", "k3"], "outputs": ["fs"], "partials": partials}}
    else:
        d["variables"] = {"fs": "-(k*x + k3*x^3)"}
    return d


def spring_with_partials(x):
    xx, k, k3 = x
    return [-(k * xx + k3 * xx ** 3)], [[-(k + 3 * k3 * xx ** 2), -xx, -xx ** 3]]


def spring_values(x):
    return -(x[0] * x[1] + x[2] * x[0] ** 3)


def cardano_equilibrium():
    """k x + k3 x^3 = F0: x^3 + p x + q = 0 with p > 0, one real root."""
    p, q = K / K3, -F0 / K3
    r = math.sqrt(q * q / 4 + p ** 3 / 27)
    cbrt = lambda v: math.copysign(abs(v) ** (1 / 3), v)  # noqa: E731
    return cbrt(-q / 2 + r) + cbrt(-q / 2 - r)


def test_partials_equal_the_expression_model():
    lin = mblin.from_dict(spring_dict(), user={"spring": spring_with_partials}).linearize()
    ref = mblin.from_dict(spring_dict(routine=False)).linearize()
    xs = cardano_equilibrium()
    assert abs(lin.point.q[0] - xs) < 1e-12
    for a, b in ((lin.A, ref.A), (lin.B, ref.B), (lin.C, ref.C), (lin.D, ref.D)):
        assert a.shape == b.shape and np.max(np.abs(a - b)) <= 1e-12 * max(1.0, np.max(np.abs(b)))
    omega = math.sqrt((K + 3 * K3 * xs * xs) / M)
    assert np.allclose(np.sort(np.abs(lin.eigenvalues.imag)), [omega, omega], rtol=1e-12, atol=0)


def test_values_only_differences_within_their_estimate():
    """Without partials the derivatives are differences: within the error the result states."""
    lin = mblin.from_dict(spring_dict(partials=False), user={"spring": spring_values}).linearize()
    ref = mblin.from_dict(spring_dict(routine=False)).linearize()
    dev = np.max(np.abs(np.sort_complex(lin.eigenvalues) - np.sort_complex(ref.eigenvalues)))
    est = lin.error_estimate  # docs/user-routines.md, "Exactness": the method again with steps 2 h
    assert "not exact" in lin.notes and 0 < est < 1e-6 and dev <= est, (dev, est, lin.notes)


def aero_module():
    spec = importlib.util.spec_from_file_location("aero_table", ROOT / "examples" / "user" / "aero_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_aero_table_example():
    """The example: the table as a routine (differences) against the same table as a data set read
    by table() (exact), and the frequency of the closed form on the table's segment."""
    ex = aero_module()
    lin = ex.load().linearize()
    ref = ex.load(table=True).linearize()
    assert abs(lin.point.q[0] - ref.point.q[0]) < 1e-12
    dev = np.max(np.abs(np.sort_complex(lin.eigenvalues) - np.sort_complex(ref.eigenvalues)))
    est = lin.error_estimate  # the accuracy the result states for its differences
    assert "not exact" in lin.notes and "not exact" not in ref.notes and dev <= est, (dev, est, lin.notes)
    assert np.allclose(lin.C, ref.C, rtol=0, atol=est * max(1.0, np.max(np.abs(ref.C))))
    # closed form: on the segment 4..8 degrees, I l^2 + c l + (k - q S e s) = 0
    p = ex.PARAMETERS
    alpha = p["alpha0"] + ref.point.q[0]
    assert math.radians(4) < alpha < math.radians(8)
    s = (ex.CL[7] - ex.CL[6]) / (ex.ALPHA[7] - ex.ALPHA[6])
    q = 0.5 * p["rho"] * p["V"] ** 2
    S = p["chord"] * p["span"]
    roots = np.roots([p["I_theta"], p["c_theta"], p["k_theta"] - q * S * p["e"] * s])
    assert np.allclose(np.sort_complex(ref.eigenvalues), np.sort_complex(roots), rtol=1e-10, atol=0)
    assert np.allclose(np.sort_complex(lin.eigenvalues), np.sort_complex(roots), rtol=0, atol=est * 2)
    assert ex.divergence_speed() > p["V"]


def failing_model(fn, partials=False):
    return mblin.from_dict(spring_dict(partials=partials), name="fails.json", user={"spring": fn})


def one_line_error(fn, partials=False):
    with pytest.raises(mblin.Error) as e:
        failing_model(fn, partials).linearize()
    msg = str(e.value)
    assert "\n" not in msg and "spring" in msg, msg
    return msg


def test_exception_in_the_callable():
    def boom(x):
        raise ValueError("no table for x = %g\nsecond line" % x[0])
    msg = one_line_error(boom)
    assert "ValueError: no table for x = " in msg, msg


def test_wrong_lengths_and_non_numbers():
    assert "outputs" in one_line_error(lambda x: [1.0, 2.0])
    assert "outputs" in one_line_error(lambda x: [])
    assert "str" in one_line_error(lambda x: "1.0")
    assert "str" in one_line_error(lambda x: ["1.0"])
    assert "NoneType" in one_line_error(lambda x: None)
    assert "bool" in one_line_error(lambda x: True)
    # partials: yes: the pair is needed, and the jacobian's shape is checked
    assert "(outputs, jacobian)" in one_line_error(spring_values, partials=True)
    assert "jacobian" in one_line_error(lambda x: ([1.0], [[1.0, 2.0]]), partials=True)
    assert "jacobian" in one_line_error(lambda x: ([1.0], np.zeros((2, 3))), partials=True)


def test_nan():
    msg = one_line_error(lambda x: float("nan"))
    assert "nan" in msg.lower(), msg
    msg = one_line_error(lambda x: ([-x[0]], [[float("nan"), 0.0, 0.0]]), partials=True)
    assert "nan" in msg.lower(), msg


def test_keyboard_interrupt_in_the_callable():
    """Ctrl-C while the callable runs (its KeyboardInterrupt) interrupts the call, not only the
    routine's evaluation (which the operating point's search could step around); the model stays
    usable."""
    armed = []

    def interrupted(x):
        if armed:
            armed.pop()
            raise KeyboardInterrupt
        return spring_with_partials(x)

    model = failing_model(interrupted, partials=True)
    armed.append(1)
    with pytest.raises(KeyboardInterrupt):
        model.linearize()
    assert not armed
    assert np.allclose(np.abs(model.linearize().eigenvalues.imag),
                       math.sqrt((K + 3 * K3 * cardano_equilibrium() ** 2) / M), rtol=1e-12)


def test_the_input_is_a_read_only_copy():
    seen = []

    def keep(x):
        seen.append(x)
        with pytest.raises(ValueError):
            x[0] = 1.0
        return spring_values(x)

    failing_model(keep).linearize()
    assert seen and all(isinstance(x, np.ndarray) and x.shape == (3,) for x in seen)
    assert len({float(x[0]) for x in seen}) > 1  # copies: the early calls' values were kept


def test_shapes_of_the_result():
    """A 1-D array, a tuple, a NumPy scalar; the jacobian as a 2-D array or a flat row (one output)."""
    for fn, partials in ((lambda x: np.array([spring_values(x)]), False), (lambda x: (spring_values(x),), False),
                         (lambda x: np.float64(spring_values(x)), False),
                         (lambda x: (np.array(spring_with_partials(x)[0]), np.array(spring_with_partials(x)[1])), True),
                         (lambda x: (spring_values(x), spring_with_partials(x)[1][0]), True)):
        lin = failing_model(fn, partials).linearize()
        omega = math.sqrt((K + 3 * K3 * cardano_equilibrium() ** 2) / M)
        assert np.allclose(np.abs(lin.eigenvalues.imag), omega, rtol=1e-7)


def test_user_argument_checked():
    with pytest.raises(TypeError):
        mblin.from_dict(spring_dict(), user={"spring": 3})
    with pytest.raises(TypeError):
        mblin.from_dict(spring_dict(), user=[spring_values])
    with pytest.raises(mblin.ModelError) as e:  # the file's routine not given
        mblin.from_dict(spring_dict(), user={"other": spring_values})
    assert "spring" in str(e.value)


def test_copies_reload_and_sweep_keep_the_routines():
    calls = []
    main = threading.get_ident()
    other = threading.Event()

    def counted(x):
        calls.append(threading.get_ident())
        if calls[-1] != main:
            other.set()
        elif sweeping and not other.is_set():
            time.sleep(0.001)  # the GIL free for a while: a worker thread starts and takes a block
        return spring_with_partials(x)

    sweeping = False
    model = mblin.from_dict(spring_dict(), user={"spring": counted})
    ref = mblin.from_dict(spring_dict(routine=False))
    # reload (the per-call set= reloads too)
    a = model.linearize(set={"k": 6.0})
    b = ref.linearize(set={"k": 6.0})
    assert np.allclose(np.sort_complex(a.eigenvalues), np.sort_complex(b.eigenvalues), rtol=1e-12)
    # a sweep on the library's copies of the model, on 2 worker threads
    sweeping = True
    s1 = model.sweep("k", (6.0, 10.0, 41), threads=2)
    sweeping = False
    s0 = ref.sweep("k", (6.0, 10.0, 41), threads=1)
    assert s1["ok"].all() and s1["threads"] == 2
    assert np.allclose(s1["eigenvalues"], s0["eigenvalues"], rtol=1e-10, atol=1e-12)
    assert other.is_set() and len(set(calls)) >= 2, "the routine was called from the sweep's worker thread"
    del model  # the routines stay alive with the model's copies (the reloaded models here)
    assert np.allclose(a.model.linearize().eigenvalues, a.eigenvalues, rtol=1e-12)


def test_called_from_another_python_thread():
    model = mblin.from_dict(spring_dict(), user={"spring": spring_with_partials})
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("lin", model.linearize()))
    t.start()
    t.join(60)
    assert "lin" in out and np.allclose(out["lin"].A, model.linearize().A, rtol=0, atol=0)


# ---- allow_user_code: a library's code ------------------------------------------------------------

def marker_library():
    cli = os.environ.get("MBLIN_CLI", str(ROOT / "build" / "mblin"))
    lib = pathlib.Path(cli).resolve().parent / "tests" / "cli" / "mblin_user_marker.so"
    if not lib.exists():
        pytest.fail("the test library %s is not built (tests/cli/tests.cmake, mblin_user_marker)" % lib)
    return lib


def library_dict(lib):
    d = spring_dict(routine=False)
    del d["variables"]
    d["routines"] = {"spring": {"library": str(lib), "routine": "cubic_spring", "partials": True,
                                "inputs": ["x", "k", "k3"], "outputs": ["fs"]}}
    return d


def test_allow_user_code(tmp_path, monkeypatch):
    lib = marker_library()
    marker = tmp_path / "loaded"
    monkeypatch.setenv("MBLIN_TEST_MARKER", str(marker))
    path = tmp_path / "spring.json"
    import json
    path.write_text(json.dumps(library_dict(lib)))
    for load in (lambda **kw: mblin.load(path, **kw), lambda **kw: mblin.from_dict(library_dict(lib), **kw)):
        with pytest.raises(mblin.UserCodeError) as e:
            load()
        assert isinstance(e.value, PermissionError) and isinstance(e.value, mblin.Error)
        assert e.value.code == -12 and "spring" in str(e.value) and "\n" not in str(e.value)
        assert not marker.exists(), "a refused model loaded the library"
    with pytest.raises(mblin.UserCodeError):  # the program's own routines do not allow a library's
        mblin.load(path, user={"spring": spring_values})
    assert not marker.exists()
    model = mblin.load(path, allow_user_code=True)
    assert marker.exists()
    ref = mblin.from_dict(spring_dict(routine=False)).linearize()
    lin = model.linearize()
    assert np.allclose(lin.A, ref.A, rtol=1e-12, atol=0)
    # the permission goes with the model's reloads
    assert np.allclose(model.linearize(set={"k": 6.0}).A, mblin.from_dict(spring_dict(routine=False))
                       .linearize(set={"k": 6.0}).A, rtol=1e-12, atol=0)
