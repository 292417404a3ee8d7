"""Failures are Python exceptions (subclasses of mblin.Error) carrying the library's one-line
message and, where it has one, its file:line:column split out."""
import errno
import math
import os

import pytest

import mblin

OSC = ('model: dae\n'
       'parameters: {m: 1, k: 4}\n'
       'coordinates: {x: 0}\n'
       'kinetic_energy: "0.5*m*der(x)^2"\n'
       'potential_energy: "0.5*k*%s^2"\n')


def column_of(text, line, token):
    """1-based column of token on 1-based line of text, found independently of the library."""
    return text.splitlines()[line - 1].index(token) + 1


def test_missing_file():
    with pytest.raises(mblin.FileError) as e:
        mblin.load("examples/no_such_model.yaml")
    assert "examples/no_such_model.yaml" in str(e.value) and "No such file" in str(e.value)
    assert isinstance(e.value, OSError) and isinstance(e.value, mblin.Error)
    assert e.value.code == -8


def test_directory_is_not_a_model():
    with pytest.raises(mblin.FileError, match="is a directory"):
        mblin.load("examples")


def test_file_error_is_the_oserror_of_its_errno(tmp_path):
    """issue 33, item 6: `except FileNotFoundError` catches a missing model, with errno and filename
    (as open() would give them); a directory is an IsADirectoryError, an unreadable file a
    PermissionError (unless run as root)."""
    missing = str(tmp_path / "no_such_model.yaml")
    with pytest.raises(FileNotFoundError) as e:
        mblin.load(missing)
    try:
        open(missing)
    except FileNotFoundError as ref:
        expected = ref
    assert isinstance(e.value, mblin.FileError) and isinstance(e.value, mblin.Error)
    assert e.value.errno == expected.errno == errno.ENOENT and e.value.filename == missing
    assert e.value.strerror == expected.strerror and str(e.value).startswith(missing + ": ")
    with pytest.raises(IsADirectoryError) as e:
        mblin.load(str(tmp_path))
    assert e.value.errno == errno.EISDIR and e.value.filename == str(tmp_path)
    locked = tmp_path / "locked.yaml"
    locked.write_text("model: dae\n")
    locked.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(PermissionError) as e:
            mblin.load(str(locked))
        assert e.value.errno == errno.EACCES and e.value.filename == str(locked)
    # a refusal with no system error: a FileError (an OSError) with errno None and the file named
    e = mblin._errors.from_status(-8, "a: b.yaml: the file has 9 bytes, more than the limit of 4 bytes")
    assert type(e) is mblin.FileError and e.errno is None and e.filename == "a: b.yaml"


def test_bad_yaml_position_in_file(tmp_path):
    text = ("model: dae\n"
            "parameters: {m: 1, k: 4}\n"
            "coordinates: [x: 0\n"
            "kinetic_energy: \"0.5*m*der(x)^2\"\n")
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(mblin.ParseError) as e:
        mblin.load(path)
    err = e.value
    assert err.file == str(path)
    # the flow sequence opened on line 3 is still open where the next mapping key starts: line 4,
    # at the ':' after kinetic_energy, the first token that cannot continue it
    assert (err.line, err.column) == (4, column_of(text, 4, ":") + 0)
    assert str(err).startswith("%s:4:%d: YAML error" % (path, err.column))
    assert isinstance(err, ValueError)


def test_bad_indentation_position():
    text = "model: dae\nparameters:\n  m: 1\n   k: 4\n"
    with pytest.raises(mblin.ParseError) as e:
        mblin.loads(text, name="indent.yaml")
    assert (e.value.file, e.value.line, e.value.column) == ("indent.yaml", 4, column_of(text, 4, ":"))


def test_unknown_name_position():
    text = OSC % "zz"
    with pytest.raises(mblin.ParseError) as e:
        mblin.loads(text, name="osc.yaml")
    assert (e.value.file, e.value.line, e.value.column) == ("osc.yaml", 5, column_of(text, 5, "zz"))
    assert "unknown name 'zz'" in e.value.message


def test_bad_expression_position():
    text = OSC % "x^"
    with pytest.raises(mblin.ParseError) as e:
        mblin.loads(text, name="osc.yaml")
    assert e.value.line == 5 and e.value.column == column_of(text, 5, "^^") + 1


def test_unknown_key_is_a_model_error():
    with pytest.raises(mblin.ModelError) as e:
        mblin.loads(OSC % "x" + "foo: 1\n", name="osc.yaml")
    assert (e.value.line, e.value.column) == (6, 1) and "unknown key 'foo'" in str(e.value)


def test_unknown_parameter():
    for call in (lambda: mblin.load("examples/slider_pendulum.yaml", set={"nope": 1}),
                 lambda: mblin.load("examples/slider_pendulum.yaml").linearize(set={"nope": 1}),
                 lambda: mblin.loads(OSC % "x", set={"nope": 2.5})):
        with pytest.raises(mblin.Error, match="no parameter 'nope'"):
            call()


def test_from_dict_errors_name_the_dict():
    d = {"model": "dae", "coordinates": {"x": 0}, "kinetic_energy": "0.5*der(x)^2", "potential_energy": "0.5*y^2"}
    with pytest.raises(mblin.ParseError) as e:
        mblin.from_dict(d, name="mine")
    assert e.value.file == "mine" and e.value.line == 1 and "unknown name 'y'" in str(e.value)
    with pytest.raises(TypeError):
        mblin.from_dict("model: dae")


def test_singular_configuration():
    with pytest.raises(mblin.SingularError, match="singular configuration"):
        mblin.load("examples/fourbar_singular.yaml").linearize()


def test_argument_errors():
    m = mblin.load("examples/slider_pendulum.yaml")
    with pytest.raises(mblin.ArgumentError, match="unknown linearization method 'nope'"):
        m.linearize("nope")
    with pytest.raises(mblin.ArgumentError, match="no coordinate"):
        m.linearize(guess={"nope": 1.0})
    with pytest.raises(TypeError, match="unknown option"):
        m.linearize(bogus=1)
    with pytest.raises(ValueError, match="at must be"):
        m.operating_point("somewhere")
    with pytest.raises(ValueError, match="expected 2 values"):
        m.operating_point(q=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="partial must be"):
        m.linearize(partial="sometimes")
    other = mblin.load("examples/slider_pendulum.yaml")
    with pytest.raises(ValueError, match="another model"):
        m.linearize(point=other.equilibrium())
    with pytest.raises(TypeError):
        mblin.load("examples/slider_pendulum.yaml", set=[("k", 1)])
    with pytest.raises(TypeError):
        mblin.load("examples/slider_pendulum.yaml", states="theta")


def test_given_states_errors():
    m = mblin.load("examples/slider_pendulum.yaml")
    with pytest.raises(mblin.ParseError) as e:
        m.linearize(states=["theta", "y + foo"])
    assert str(e.value) == ("examples/slider_pendulum.yaml: unknown name 'foo' (in state 2 (given) 'y + foo', "
                            "column 5)")
    assert e.value.line is None and e.value.column is None  # not a position in the file
    with pytest.raises(mblin.ModelError, match=r"state 1 \(given\) does not depend on any coordinate") as e:
        m.linearize(states=["l"])
    assert e.value.line is None


def test_exceptions_are_catchable_by_code():
    assert mblin.ParseError.code == -5 and mblin.ModelError.code == -7
    try:
        mblin.loads("model: dae\ncoordinates: {x: 0\n", name="t.yaml")
    except mblin.Error as e:
        assert e.code == -5 and type(e).__module__ == "mblin"
    else:
        pytest.fail("no exception")


def test_options_no_computation_can_honour():
    """Negative or non-finite linearization options and a negative boundary order are refused (issue
    30): before, nev=-5 and mem_budget=-1 were taken silently for the defaults."""
    m = mblin.load("examples/slider_pendulum.yaml")
    for kw in ({"nev": -5}, {"mem_budget": -1}, {"fd_step": float("nan")}, {"rank_tol": -1e-9}):
        with pytest.raises(mblin.ArgumentError, match="expected a finite number >= 0"):
            m.linearize(**kw)
    with pytest.raises(mblin.ArgumentError, match="order"):
        mblin.load("examples/whipple_bicycle.yaml").boundary("v", 4.3, order=-1)


def test_states_that_stop_describing_the_motion():
    """Issue 30, item 1: the four-bar's user state phi at its vertical equilibrium (m = 0.5) is
    refused with the state named; state_tol is the option of the test (a tolerance of 1e-30 lets
    the nonsense of before through: 5e8 rad/s); a regular point (m = 1) is answered."""
    m = mblin.load("examples/fourbar_N1_damped.yaml", set={"m": 0.5})
    with pytest.raises(mblin.Error, match="the state phi stops describing the motion"):
        m.linearize()
    assert abs(m.linearize(state_tol=1e-30).eigenvalues[0]) > 1e8
    with pytest.raises(mblin.ArgumentError, match="state_tol"):
        m.linearize(state_tol=-1)
    lin = mblin.load("examples/fourbar_N1_damped.yaml", set={"m": 1}).linearize()
    assert abs(abs(lin.eigenvalues[0].imag) - 2.133955028348694) < 1e-9


def test_given_point_residual_acceleration_note(tmp_path):
    """Issue 30, item 7: a given point whose forces do not balance carries a note with the largest
    residual acceleration: a disc on a torsion spring kt at th0 = 0.1, J = 0.02: th'' = -kt th0 / J."""
    p = tmp_path / "torsion.yaml"
    p.write_text('model: dae\nparameters: {J: 0.02, kt: 50, th0: 0.1}\ncoordinates: {th: th0}\n'
                 'velocities: {th: 30}\nkinetic_energy: "0.5*J*der(th)^2"\npotential_energy: "0.5*kt*th^2"\n'
                 'linearize:\n  at: given\n')
    pt = mblin.load(str(p)).operating_point()
    assert "residual acceleration der(der(th)) = -250 " in pt.notes
    assert "not an equilibrium" not in mblin.load(str(p), set={"th0": 0}).operating_point().notes


def test_values_checked_as_the_cli_checks_them():
    """issue 65, item 20: zero_tol NaN or negative, compare(repeat=-1), set={'k': 'pi'} and a NaN among
    freqresp's frequencies are each refused or read as the CLI reads them, never silently replaced by
    a default or a bare ValueError. The frequency: the oscillator m = 1, k = 4 with pi for k has
    sqrt(pi) rad/s (closed form)."""
    m = mblin.loads(OSC % "x", name="osc.yaml")
    for bad in (float("nan"), float("inf"), -1, "1e-9", True):
        with pytest.raises(mblin.ArgumentError, match="zero_tol must be a finite number >= 0"):
            m.linearize(zero_tol=bad)
    for bad in (-1, 0, 1001, 2.5, True):
        with pytest.raises(mblin.ArgumentError, match="repeat must be an integer from 1 to 1000"):
            m.compare(repeat=bad)
    lin = m.linearize(set={"k": "pi"})
    assert abs(max(abs(md.eigenvalue) for md in lin.modes) - math.sqrt(math.pi)) < 1e-12
    lin = m.linearize(set={"k": "2*pi/2"})
    assert abs(max(abs(md.eigenvalue) for md in lin.modes) - math.sqrt(math.pi)) < 1e-12
    with pytest.raises(mblin.ArgumentError, match=r"set: 'k': 'pii' is not a number or a constant expression.*pii"):
        m.linearize(set={"k": "pii"})
    with pytest.raises(mblin.ArgumentError, match=r"set: 'k' = nan is not finite"):
        m.linearize(set={"k": float("nan")})
    with pytest.raises(TypeError, match=r"set: 'k' must be a number or a str expression, not list"):
        m.linearize(set={"k": [1]})
    d = mblin.loads(OSC % "x" + 'inputs: {F: 0}\nforces: {x: F}\noutputs: {y: x}\n', name="osc_io.yaml")
    with pytest.raises(mblin.ArgumentError, match=r"w\[1\] = nan \(of 3 frequencies\)"):
        d.freqresp("F", "y", w=[1.0, float("nan"), 2.0])
