"""mblin: exact linearization of constrained multibody dynamics, from Python.

A thin layer over libmblin (the C library of the ``mblin`` command line): the same model files,
the same operating points, the same methods and the same numbers as ``mblin linearize --json``,
as NumPy arrays.

    >>> import mblin
    >>> model = mblin.load("examples/slider_pendulum.yaml")
    >>> lin = model.linearize()
    >>> lin.A.shape, lin.states
    ((4, 4), ['y', 'theta'])
    >>> lin.frequencies            # Hz, sorted by frequency
    array([0.12689471, 0.12689471, 0.49046109, 0.49046109])

Loading: :func:`load` (a file), :func:`loads` (YAML or JSON text), :func:`from_dict` (a dict in the
shape of a model file). Parameters are overridden with ``set={"name": value}``, at load time or per
call. Failures raise subclasses of :class:`Error` with the library's one-line message and its
file position. See docs/python.md.
"""

import json as _json
import math as _math
import os as _os
import re as _re

try:
    import numpy as _np
except ImportError as _e:  # say what is missing and where it comes from, not only "No module named numpy"
    import sys as _sys
    raise ImportError(
        "mblin needs NumPy, which this interpreter (%s, Python %d.%d) cannot import: %s. Use the interpreter "
        "mblin was built for (Debian's /usr/bin/python3 with python3-numpy; `make setup` installs it), or a "
        "virtual environment made from it with --system-site-packages (docs/python.md, \"Installing with pip\")"
        % (_sys.executable, _sys.version_info[0], _sys.version_info[1], _e), name="numpy") from _e

from ._errors import (Error, OutOfMemoryError, DimensionError, SingularError, ConvergenceError, ParseError,
                      DomainError, ModelError, FileError, LibraryError, ArgumentError, UserCodeError)
from . import _core

__all__ = [
    "load", "loads", "from_dict", "methods", "Model", "OperatingPoint", "Linearization", "Mode", "Comparison",
    "Error", "OutOfMemoryError", "DimensionError", "SingularError", "ConvergenceError", "ParseError",
    "DomainError", "ModelError", "FileError", "LibraryError", "ArgumentError", "UserCodeError", "__version__",
]

__version__ = _core.version()

_AT = {"equilibrium": 0, "given": 1, "steady": 2, "trim": 3}

# The options of linearize() and compare() beyond method (mbl_lin_options in include/mblin/model.h).
_LIN_OPTIONS = ("state_weight", "pivot_tol", "rcond_min", "rank_tol", "dense_max", "dense_n_max", "nev", "shift",
                "constraint_scale", "pen_alpha", "pen_xi", "pen_omega", "pen_ratio", "fd_step", "fd_tol",
                "mem_budget", "partial", "state_tol", "cond_max", "pen_equilibrium", "desc_zero", "pen_Xi", "pen_Theta",
                "pen_Omega")
# The options of the operating point (mbl_opoint_options).
_POINT_OPTIONS = ("max_iter", "tol", "abs_tol", "step_tol", "move_note", "rank_tol")


def methods():
    """The names of the linearization methods (docs/methods.md), e.g. ``['augmented', ...]``."""
    return _core.methods()


def _value(what, k, v):
    """A value of set, guess, velocities or targets: a finite number, or a constant expression as
    text as the CLI's --set takes it ("pi/2", "2*9.81")."""
    if isinstance(v, str):
        try:
            return _core.constant(v)
        except Error as e:
            raise ArgumentError("%s: '%s': %r is not a number or a constant expression (2, -0.5, 1e-3, pi/2): %s"
                                % (what, k, v[:120], e), ArgumentError.code) from None
    if isinstance(v, bool) or not isinstance(v, (int, float, _np.integer, _np.floating)):
        raise TypeError("%s: '%s' must be a number or a str expression, not %s" % (what, k, type(v).__name__))
    x = float(v)
    if not _math.isfinite(x):
        raise ArgumentError("%s: '%s' = %r is not finite" % (what, k, x), ArgumentError.code)
    return x


_GOAL_Q = {"min-damping": 3, "change": 4, "max-real": 10}
_GOAL_RE = _re.compile(r"^(freq|damping|real):([1-9][0-9]*)$")
_GOAL_KIND = {"freq": 1, "damping": 2, "real": 7}


def _goal_quantity(q, text):
    """Q of a goal -> (kind, mode, input, output, f1, f2, speed, order, near, expr)"""
    if q.startswith("expr:") and len(q) > 5:
        return 8, 0, None, None, 0.0, 0.0, None, 0.0, 0.0, q[5:]
    if q in _GOAL_Q:
        return _GOAL_Q[q], 0, None, None, 0.0, 0.0, None, 0.0, 0.0, None
    m = _GOAL_RE.match(q)
    if m:
        return _GOAL_KIND[m.group(1)], int(m.group(2)), None, None, 0.0, 0.0, None, 0.0, 0.0, None
    f = q.split(":")
    try:
        if len(f) == 5 and f[0] == "peak":
            return 5, 0, f[1], f[2], float(f[3]), float(f[4]), None, 0.0, 0.0, None
        if len(f) == 5 and f[0] == "critical" and _GOAL_RE.match("freq:" + f[1]):
            return 6, int(f[1]), None, None, 0.0, 0.0, f[2], float(f[3]), float(f[4]), None
        if len(f) == 4 and f[0] == "order" and _GOAL_RE.match("freq:" + f[1]):
            return 9, int(f[1]), None, None, 0.0, 0.0, f[2], float(f[3]), 0.0, None
    except ValueError:
        pass
    raise ArgumentError("optimize: unknown quantity in %r (freq:I, damping:I, real:I, min-damping, max-real, change, "
                        "peak:IN:OUT:F1:F2, critical:I:SPEED:ORDER:NEAR, order:I:SPEED:N, expr:EXPRESSION)" % text,
                        ArgumentError.code)


def _goal(text, objective):
    """a goal's text (the CLI's --objective or --constraint) -> the tuple of mblin._core.optimize"""
    text = str(text)
    try:
        if objective:
            if text[:4] in ("max:", "min:"):
                k, m, i, o, f1, f2, sp, order, near, ex = _goal_quantity(text[4:], text)
                return (k, 2 if text[1] == "a" else 1, m, 0.0, 0.0, i, o, f1, f2, sp, order, near, ex)
            q, a = text.rsplit("=", 1)
            k, m, i, o, f1, f2, sp, order, near, ex = _goal_quantity(q, text)
            return (k, 3, m, float(a), 0.0, i, o, f1, f2, sp, order, near, ex)
        for op, sense in ((">=", 4), ("<=", 5), ("!=", 6)):
            if op in text:
                q, a = text.split(op, 1)
                k, m, i, o, f1, f2, sp, order, near, ex = _goal_quantity(q, text)
                lo, hi = (a.split(":") + [0.0])[:2] if sense == 6 else (a, 0.0)
                return (k, sense, m, float(lo), float(hi), i, o, f1, f2, sp, order, near, ex)
    except ArgumentError:
        raise
    except ValueError:
        pass
    raise ArgumentError("optimize: %s %r is not %s" % ("objective" if objective else "constraint", text,
                        "max:Q, min:Q or Q=TARGET" if objective else "Q>=A, Q<=A or Q!=A:B"), ArgumentError.code)


def _sets(set_, what="set"):
    if set_ is None:
        return []
    if not hasattr(set_, "items"):
        raise TypeError("%s must be a dict {name: value}" % what)
    out = []
    for k, v in set_.items():
        if not isinstance(k, str):
            raise TypeError("%s: names must be str, got %r" % (what, k))
        out.append((k, _value(what, k, v)))
    return out


def _names(seq, what):
    if seq is None:
        return None
    if isinstance(seq, str):
        raise TypeError("%s must be a list of str, not a str" % what)
    seq = list(seq)
    for s in seq:
        if not isinstance(s, str):
            raise TypeError("%s must be a list of str, got %r" % (what, s))
    return seq


def _user(user):
    """load(user=...): a dict {routine name: callable} (a copy), or None."""
    if user is None:
        return None
    if not hasattr(user, "items"):
        raise TypeError("user must be a dict {routine name: callable}, not %s" % type(user).__name__)
    out = {}
    for k, fn in user.items():
        if not isinstance(k, str):
            raise TypeError("user: routine names must be str, got %r" % (k,))
        if not callable(fn):
            raise TypeError("user: '%s' must be a callable, not %s" % (k, type(fn).__name__))
        out[k] = fn
    return out


def load(path, set=None, *, states=None, velocity_states=None, outputs=None, allow_user_code=False, user=None):
    """Load a model file (YAML or JSON; ``model: dae`` or ``model: mechanism``).

    Args:
        path: the file (str or os.PathLike).
        set: parameter overrides ``{name: value}`` (the CLI's ``--set``); naming a parameter the
            model does not have raises :class:`ModelError`.
        states: user states replacing the file's ``linearize.states`` (expressions of the equation
            level, e.g. coordinate names); ``[]`` lets the library choose among the coordinates.
        velocity_states: the same for ``linearize.velocity_states``.
        outputs: the names of the file's outputs to keep, in this order (the CLI's ``--outputs``;
            None: all). Drops outputs a method cannot compute; an unknown name raises ArgumentError.
        allow_user_code: let the model load and run the shared libraries its file names under
            ``routines:`` (the CLI's ``--allow-user-code``). False (the default): such a model is
            refused with :class:`UserCodeError`. A library's code runs in this process with its
            rights: allow it only for files you trust (docs/user-routines.md).
        user: the routines written in Python, ``{routine name: callable}``: a ``routines:`` entry
            of the file without ``library:`` calls ``user[routine]`` (its ``routine:``, default its
            key) with ``x``, a read-only array of its inputs, and takes its outputs back: a
            sequence of numbers, or a number for one output; with ``partials: yes`` the pair
            ``(outputs, jacobian)``, jacobian outputs x inputs (docs/python.md, "User routines").
            An exception, a wrong length or a non-number fails the evaluation with one line
            naming the routine. Needs no allow_user_code (the program chose to run them).

    Returns:
        Model

    Raises:
        FileError: the file cannot be read. ParseError, ModelError: the file is not a valid model;
        the message starts with ``file:line:column``. UserCodeError: the file names a library
        and allow_user_code is False.
    """
    path = _os.fspath(path)
    sets = _sets(set)
    states = _names(states, "states")
    velocity_states = _names(velocity_states, "velocity_states")
    outputs = _names(outputs, "outputs")
    user = _user(user)
    allow = bool(allow_user_code)
    core = _core.load_file(path, sets, states, velocity_states, outputs, user, allow)
    return Model(core, ("file", path), sets, states, velocity_states, outputs, user, allow)


def loads(text, set=None, *, name="<string>", states=None, velocity_states=None, outputs=None, allow_user_code=False,
          user=None):
    """Load a model from YAML or JSON text.

    Args:
        text: the model file's content (str or bytes, UTF-8).
        set, states, velocity_states, outputs, allow_user_code, user: as for :func:`load` (a
            library's relative path is taken from the current directory).
        name: the name used for positions in error messages (``name:line:column``).

    Returns:
        Model
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise TypeError("text must be str or bytes")
    sets = _sets(set)
    states = _names(states, "states")
    velocity_states = _names(velocity_states, "velocity_states")
    outputs = _names(outputs, "outputs")
    user = _user(user)
    allow = bool(allow_user_code)
    core = _core.load_string(text, name, sets, states, velocity_states, outputs, user, allow)
    return Model(core, ("text", text, name), sets, states, velocity_states, outputs, user, allow)


def from_dict(d, set=None, *, name="<dict>", states=None, velocity_states=None, outputs=None, allow_user_code=False,
              user=None):
    """Load a model from a dict shaped like a model file (it is written as JSON and read by the
    library's reader, so the rules and the messages are those of files; positions refer to that
    JSON text, one line). set, states, velocity_states, outputs, allow_user_code, user: as for
    :func:`load`.

    Example::

        mblin.from_dict({"model": "dae", "parameters": {"m": 1, "k": 4},
                         "coordinates": {"x": 0},
                         "kinetic_energy": "0.5*m*der(x)^2",
                         "potential_energy": "0.5*k*x^2"})
    """
    if not isinstance(d, dict):
        raise TypeError("from_dict expects a dict")
    text = _json.dumps(d, allow_nan=False, default=_json_default)
    return loads(text, set, name=name, states=states, velocity_states=velocity_states, outputs=outputs,
                 allow_user_code=allow_user_code, user=user)


def _json_default(o):
    """NumPy scalars and arrays in a dict given to from_dict (json knows only Python's types)."""
    if isinstance(o, (_np.generic, _np.ndarray)):
        return o.tolist()
    raise TypeError("from_dict: %r (%s) is not a number, string, list or dict" % (o, type(o).__name__))


class Model:
    """A loaded, compiled model: immutable, usable from several threads at once.

    Attributes:
        name: the model's name ("" if none).
        file: the file it came from (or the name given to loads/from_dict).
        coordinates, inputs, outputs: lists of names.
        parameters: dict {name: value} after the settings.
        at: the file's operating-point kind ("equilibrium", "given", "steady").
        time: the file's ``linearize.time``.
        n, m, k: coordinates, holonomic and non-holonomic constraints.
    """

    def __init__(self, core, source, sets, states, velocity_states, outputs=None, user=None, allow_user_code=False):
        self._core = core
        self._outputs = outputs
        self._user = user  # the Python routines and the permission: reload() loads with the same
        self._allow_user_code = allow_user_code
        self._source = source
        self._sets = list(sets)
        self._states = states
        self._velocity_states = velocity_states
        info = core.info()
        self.name = info["name"]
        self.file = info["file"]
        self.at = info["at"]
        self.time = info["time"]
        self.n, self.m, self.k = info["ncoord"], info["nhol"], info["nnh"]
        self.coordinates = core.names("coordinates")
        self.inputs = core.names("inputs")
        self.outputs = core.names("outputs")
        self.parameters = dict(zip(core.names("parameters"), core.param_values().tolist()))

    def __repr__(self):
        return "<mblin.Model %r: %d coordinates, %d constraints, %d inputs, %d outputs>" % (
            self.name or self.file, self.n, self.m + self.k, len(self.inputs), len(self.outputs))

    def reload(self, set=None, *, states=None, velocity_states=None):
        """The same model loaded again with more settings (merged over this model's) or other user
        states (None: this model's), with the same routines (``user``) and ``allow_user_code``.
        The model itself is unchanged (it is immutable)."""
        sets = dict(self._sets)
        sets.update(dict(_sets(set)))
        sets = list(sets.items())
        st = self._states if states is None else _names(states, "states")
        vst = self._velocity_states if velocity_states is None else _names(velocity_states, "velocity_states")
        extra = (self._outputs, self._user, self._allow_user_code)
        if self._source[0] == "file":
            core = _core.load_file(self._source[1], sets, st, vst, *extra)
        else:
            core = _core.load_string(self._source[1], self._source[2], sets, st, vst, *extra)
        return Model(core, self._source, sets, st, vst, *extra)

    def _variant(self, set, states, velocity_states):
        if set is None and states is None and velocity_states is None:
            return self
        return self.reload(set, states=states, velocity_states=velocity_states)

    def operating_point(self, at=None, *, q=None, v=None, guess=None, t=None, set=None, velocities=None, targets=None,
                        **options):
        """Find the operating point (the CLI's ``mblin equilibrium``).

        Args:
            at: "equilibrium", "given" or "steady" (None: the file's ``linearize.at``).
            q, v: all n coordinates / velocities replacing the file's (the initial guess, or the
                point itself with "given"), in the order of :attr:`coordinates`. Velocities given
                so are projected as a whole onto the velocity constraints (the file's held
                velocities are not held then; ``velocities`` are).
            guess: {coordinate name: value} replacing single initial values (the CLI's ``--guess``).
            t: the time of the point (None: the file's ``linearize.time``).
            set: parameter overrides for this call (the model is reloaded with them).
            velocities: {name: value} held velocities of a given point (the CLI's
                ``--set-velocity``): a coordinate (its rate) or a key of the file's ``velocities``
                as written (``"JV(crank)"``). Held velocities are kept exactly and the others
                solved (docs/model-files.md, "Held velocities").
            targets: {key: value} values of the file's trim targets (at "trim", the CLI's
                ``--target``), keyed as written in ``trim.targets`` (docs/model-files.md, "Trim").
            options: max_iter, tol, abs_tol, step_tol, move_note, rank_tol (mbl_opoint_options).

        Returns:
            OperatingPoint

        Raises:
            ConvergenceError: Newton did not converge. ArgumentError: an unknown coordinate in guess
            or an unknown name in velocities. SingularError: held velocities that disagree.
        """
        model = self._variant(set, None, None)
        for k in options:
            if k not in _POINT_OPTIONS:
                raise TypeError("operating_point() got an unknown option %r (known: %s)" % (k, ", ".join(_POINT_OPTIONS)))
        if at is None:
            at_code = -1
        elif at in _AT:
            at_code = _AT[at]
        else:
            raise ValueError("at must be 'equilibrium', 'given', 'steady' or 'trim', not %r" % (at,))
        g = _sets(guess, "guess") if guess is not None else None
        if g:
            g = [(k, v_) for k, v_ in g]
        qv = None if q is None else [float(x) for x in _np.asarray(q, dtype=float).ravel()]
        vv = None if v is None else [float(x) for x in _np.asarray(v, dtype=float).ravel()]
        opts = dict(options)
        if velocities is not None:
            opts["velocities"] = [(k, v_) for k, v_ in _sets(velocities, "velocities")]
        if targets is not None:
            opts["targets"] = [(k, v_) for k, v_ in _sets(targets, "targets")]
        core_point = model._core.point(at_code, qv, vv, g, None if t is None else float(t), opts)
        return OperatingPoint(model, core_point)

    def equilibrium(self, **kwargs):
        """``operating_point(at="equilibrium", ...)``."""
        return self.operating_point("equilibrium", **kwargs)

    def linearize(self, method=None, *, set=None, states=None, velocity_states=None, point=None, at=None, q=None,
                  v=None, guess=None, t=None, zero_tol=None, velocities=None, targets=None, **options):
        """Linearize at an operating point and compute the modes (the CLI's ``mblin linearize``).

        Args:
            method: "augmented" (default) or another of :func:`methods` (docs/methods.md).
            set: parameter overrides for this call ({name: value}); the model is reloaded with them.
            states, velocity_states: user states for this call (expressions; see :func:`load`).
            point: an :class:`OperatingPoint` of this model (then at, q, v, guess, t are not used);
                None: found here with at, q, v, guess, t, velocities, targets as in
                :meth:`operating_point`.
            zero_tol: |eigenvalue| counted as zero relative to the largest (None or 0: the default
                1e-9); a finite number >= 0, else ArgumentError.
            options: the fields of mbl_lin_options: state_weight, pivot_tol, rcond_min, rank_tol,
                dense_max, dense_n_max, nev, shift, constraint_scale, pen_alpha, pen_xi, pen_omega
                (default: the file's linearize.penalty_alpha, _xi, _omega, else 1e6, 1, 10),
                pen_Xi, pen_Theta, pen_Omega (penalty: m numbers, a diagonal, or an m x m array, in place of
                alpha I, 2 xi omega I, omega^2 I; default the file's linearize.penalty_Xi, ...; docs/methods.md),
                pen_equilibrium (1: penalty at the penalty system's own rest point, docs/methods.md),
                desc_zero (1: descriptor's variant with zero spurious eigenvalues, docs/methods.md),
                pen_ratio, fd_step, fd_tol, mem_budget (bytes), partial ("auto", "always", "never"),
                state_tol (the states' test, docs/linearization.md), cond_max (augmented's
                condition limit, docs/linearization.md "Scaling and refusals").
                ``nev=K`` alone asks for the K eigenvalues nearest the shift (the CLI's ``--nev``).

        Returns:
            Linearization

        Raises:
            SingularError, ArgumentError, OutOfMemoryError, ...: the library's refusal, with its reason.
        """
        model = self._variant(set, states, velocity_states)
        opts = model._lin_options(method, options, "linearize")
        point = model._point_for(point, at, q, v, guess, t, velocities, targets)
        if zero_tol is None:
            zero_tol = 0.0
        elif (isinstance(zero_tol, bool) or not isinstance(zero_tol, (int, float, _np.integer, _np.floating))
              or not _math.isfinite(zero_tol) or zero_tol < 0):
            raise ArgumentError("linearize: zero_tol must be a finite number >= 0 (None or 0: the default), not %r"
                                % (zero_tol,), ArgumentError.code)
        d = model._core.linearize(point._core, opts, float(zero_tol))
        return Linearization(model, point, d)

    def compare(self, *, set=None, states=None, velocity_states=None, point=None, at=None, q=None, v=None,
                guess=None, t=None, repeat=3, **options):
        """Run every linearization method on the same point (the CLI's ``mblin compare``).

        Returns a :class:`Comparison`: the reference method and one row per method (time,
        physical eigenvalues, largest relative deviation from the reference, error estimate, note).
        A method that refuses is a row with ``ok`` False, not an exception. ``repeat``: runs per
        method, the median time reported (1 to 1000, as the CLI's ``--repeat``).
        """
        model = self._variant(set, states, velocity_states)
        opts = model._lin_options(None, options, "compare")
        point = model._point_for(point, at, q, v, guess, t)
        if (isinstance(repeat, bool) or not isinstance(repeat, (int, _np.integer))
                or not 1 <= repeat <= 1000):
            raise ArgumentError("compare: repeat must be an integer from 1 to 1000 (the CLI's --repeat), not %r"
                                % (repeat,), ArgumentError.code)
        ref, rows = model._core.compare(point._core, opts, int(repeat))
        return Comparison(ref, rows)

    # ---- studies (include/mblin/sweep.h, include/mblin/sensitivity.h; docs/study.md) ---------

    def sweep(self, param, values, *, threads=1, at=None, set=None, max_points=None):
        """Sweep one parameter with mode tracking (the CLI's ``mblin sweep --param``).

        Args:
            param: the parameter's name (or "t" for a model with drivers).
            values: ``(from, to, count)`` or an evenly spaced array of values (count >= 2).
            threads: worker threads (results do not depend on it).
            at: the operating-point kind (None: the file's). set: extra overrides for this call.
            max_points: the work limit (None: the library's, 100000 points); more are refused
                before any work.

        Returns:
            dict of NumPy arrays: ``values`` (npoints), ``eigenvalues`` (complex, npoints x nmodes:
            column b is tracked branch b), ``freq_hz``, ``damping_ratio``, ``mac`` (npoints x
            nmodes), ``ok`` (npoints), ``errors`` (a message per failed point, else None), and
            ``fast``, ``threads``, ``seconds``.

        Raises:
            ArgumentError: unknown parameter, count < 2, from >= to, unevenly spaced values, more
                points than max_points.
        """
        if max_points is not None and (int(max_points) != max_points or max_points < 1):
            raise ArgumentError("sweep: max_points must be a positive integer", ArgumentError.code)
        if isinstance(values, tuple) and len(values) == 3:
            lo, hi, count = float(values[0]), float(values[1]), int(values[2])
        else:
            v = _np.asarray(values, dtype=float).ravel()
            if v.size < 2:
                raise ArgumentError("sweep: values needs at least 2 values", ArgumentError.code)
            lo, hi, count = float(v[0]), float(v[-1]), int(v.size)
            grid = _np.linspace(lo, hi, count)
            if not _np.allclose(v, grid, rtol=1e-12, atol=1e-12 * max(abs(lo), abs(hi))):
                raise ArgumentError("sweep: values must be evenly spaced (the library sweeps from:to:count)",
                                    ArgumentError.code)
        # the studies copy this model in memory (its text, settings and options; mbl_model_copy):
        # a model from loads() sweeps as one from a file; `set` goes over the model's settings
        return self._core.sweep(_sets(set), str(param), lo, hi, count, int(threads),
                                _AT[at] if at is not None else -1, int(max_points or 0))

    def sensitivity(self, wrt=None, *, shapes=True, point=None, at=None, q=None, v=None, guess=None, t=None):
        """Exact derivatives of the modes with respect to parameters (the CLI's ``mblin sensitivity``),
        the shift of the operating point included.

        Args:
            wrt: parameter names (None: all).
            shapes: also the mode shapes' derivatives.
            point, at, q, v, guess, t: the operating point, as for :meth:`linearize`.

        Returns:
            dict: ``wrt`` (names), ``eigenvalues`` (complex, nmode), ``d_eigenvalues`` (nmode x nwrt),
            ``freq_hz``, ``damping_ratio``, ``d_freq_hz``, ``d_damping_ratio`` (nmode x nwrt),
            ``defined`` (False for zero or repeated eigenvalues: derivatives NaN), ``kinds``,
            ``shapes`` (n x nmode), ``d_shapes`` (n x nmode x nwrt or None), ``dq``, ``dv``
            (n x nwrt), ``dlambda``, ``point_defined``, ``notes``.
        """
        params = list(self.parameters)
        idx = None
        if wrt is not None:
            if isinstance(wrt, str):
                wrt = [wrt]
            idx = []
            for name in wrt:
                if name not in params:
                    raise ArgumentError("sensitivity: the model has no parameter '%s'" % name, ArgumentError.code)
                if params.index(name) not in idx:
                    idx.append(params.index(name))
        point = self._point_for(point, at, q, v, guess, t)
        d = self._core.sensitivity(point._core, idx, bool(shapes))
        d["wrt"] = [params[i] for i in d["wrt"]]
        return d

    def boundary(self, param, near, *, order=0.0, mode=0, shape=None, branch=None, sweep=None, range=None, tol=None,
                 at=None, set=None):
        """The value of ``param`` nearest ``near`` where a mode's real part crosses zero or two
        eigenvalues leave the imaginary axis together (or, with ``order``, where a damped frequency
        meets ``order * param``): bracketed on a grid walked outward from ``near`` within ``range``
        (``(from, to)``; default ``near / 3`` to ``3 near``), then refined with the exact sensitivities
        (the CLI's ``mblin boundary``; docs/study.md, "Stability boundaries").

        The mode followed is named one way at most (docs/study.md, "Naming a mode"): ``mode`` (its
        number as ``linearize`` lists it at ``near``, 1-based), ``shape`` (``"NAME[=W],..."``: the mode
        whose shape matches weights W on the named coordinates best, complex as ``a+bi``, e.g.
        ``"x=1,y=-i"`` for a whirl from x towards y) or ``branch`` with ``sweep`` (branch B of the JSON
        ``mblin sweep --json`` wrote over ``param``: the mode nearest its eigenvalue at ``near``);
        none: the nearest boundary of any mode.

        Returns:
            dict: ``value`` (the parameter there), ``eigenvalue`` (complex), ``f_near``, ``slope``,
            ``iterations`` (inside the bracket), ``points`` (all evaluated), ``bracket`` (lo, hi),
            ``mode_near`` (1-based), ``last_step``, ``collision`` and ``divergence`` (bools),
            ``accuracy`` and ``verified`` (docs/study.md: the error estimated, and d such that a
            mode changes side between value - d and value + d).

        Raises:
            ArgumentError (unknown parameter, the mode named two ways, a branch without its sweep,
            a bad range), ModelError (no boundary in the range, no mode of that shape),
            ConvergenceError-like subclasses of Error (the refinement not converging).
        """
        lo, hi = (float("nan"), float("nan")) if range is None else (float(range[0]), float(range[1]))
        if (int(mode) > 0) + (shape is not None) + (branch is not None or sweep is not None) > 1:
            raise ArgumentError("boundary: mode, shape and branch/sweep name the mode three ways: give one",
                                ArgumentError.code)
        if (branch is None) != (sweep is None):
            raise ArgumentError("boundary: a sweep's branch needs both branch=B and sweep=FILE", ArgumentError.code)
        if branch is not None and int(branch) < 1:
            raise ArgumentError("boundary: branch must be 1 or more, got %r" % (branch,), ArgumentError.code)
        return self._core.boundary(_sets(set), str(param), float(near), float(order),
                              float(tol) if tol else 0.0, int(mode), _AT[at] if at is not None else -1,
                              None if shape is None else str(shape), 0 if branch is None else int(branch),
                              None if sweep is None else _os.fsdecode(_os.fspath(sweep)), lo, hi)

    def optimize(self, vary, objective, constraints=(), *, algorithm=None, max_eval=None, xtol=None, ftol=None,
                 ctol=None, feas_tol=None, kkt_tol=None, min_mac=None, at=None, set=None):
        """The design that minimizes or maximizes a goal on the modes under constraints on them, by
        NLopt with the exact sensitivities as gradients (the CLI's ``mblin optimize``; docs/optimize.md).

        Args:
            vary: ``{name: (lo, hi)}`` or ``{name: (lo, hi, start)}`` (start: default the model's value).
            objective: ``"max:Q"``, ``"min:Q"`` or ``"Q=TARGET"``; Q ``freq:I``, ``damping:I``, ``real:I``,
                ``min-damping``, ``max-real``, ``change``, ``peak:IN:OUT:F1:F2``, ``critical:I:SPEED:ORDER:NEAR``, ``order:I:SPEED:N`` or
                ``expr:EXPRESSION``, as on the command line.
            constraints: ``"Q>=A"``, ``"Q<=A"`` or ``"Q!=A:B"`` strings.
            algorithm: ``"slsqp"``, ``"mma"``, ``"ccsaq"``, ``"cobyla"`` (None: SLSQP, MMA for
                ``max:min-damping`` and ``min:max-real``). max_eval, xtol, ftol, ctol, feas_tol, kkt_tol, min_mac: as the
                CLI's options (None: the defaults). at, set: the operating point's kind, overrides.

        Returns:
            dict: ``parameters`` ({name: value}), ``value`` (the objective's quantity), ``objective``,
            ``violation``, ``kkt``, ``peak_hz``, ``evaluations``, ``algorithm``, ``stop``,
            ``stop_reason``, ``history``, ``history_violation``, ``at_bound``, ``eigenvalues``,
            ``freq_hz``, ``damping_ratio`` (the final design's modes), ``mode`` and
            ``constraint_modes`` (the tracked modes' numbers now), ``coalesced``, ``newton_steps``, ``valley_steps``, ``crossings``.

        Raises:
            ArgumentError (a bad goal, parameter or bound), ModelError (infeasible, a mode or the
            operating point lost), ConvergenceError (not a local optimum).
        """
        algs = {None: -1, "slsqp": 0, "mma": 1, "ccsaq": 2, "cobyla": 3}
        if algorithm not in algs:
            raise ArgumentError("optimize: algorithm must be slsqp, mma, ccsaq or cobyla, not %r" % (algorithm,),
                                ArgumentError.code)
        params = []
        for name, b in dict(vary).items():
            if len(b) not in (2, 3):
                raise ArgumentError("optimize: vary[%r] must be (lo, hi) or (lo, hi, start)" % name, ArgumentError.code)
            params.append((str(name), float(b[0]), float(b[1]), float(b[2]) if len(b) == 3 else float("nan")))
        if isinstance(constraints, str):
            constraints = [constraints]
        cons = [_goal(c, False) for c in constraints]
        tols = [float(t) if t is not None else 0.0 for t in (xtol, ftol, ctol, feas_tol, kkt_tol, min_mac)]
        return self._core.optimize(_sets(set), params, _goal(objective, True), cons, algs[algorithm],
                                   int(max_eval or 0), *tols, _AT[at] if at is not None else -1)

    def freqresp(self, from_input=None, to_output=None, w=None, *, point=None, at=None, q=None, v=None, guess=None,
                 t=None):
        """Frequency response G(i w) from an input to an output (the CLI's ``mblin freqresp``), or with
        neither ``from_input`` nor ``to_output`` from every input to every output.

        Args:
            from_input, to_output: names of the model's input and output (both, or neither).
            w: angular frequencies (rad/s), array-like.

        Returns:
            dict: ``w``, ``response`` (complex G(i w)), ``mag``, ``mag_db``, ``phase_deg`` (unwrapped),
            ``rcond``, ``form`` ("state_space" or "descriptor" per frequency). For every input to
            every output, ``response``, ``mag``, ``mag_db`` and ``phase_deg`` have the shape
            (frequencies, outputs, inputs), with ``inputs``, ``outputs`` (names) and
            ``singular_values`` (frequencies, min(inputs, outputs)), descending (NumPy's SVD of
            each G(i w); inf at a pole).
        """
        if w is None:
            raise ArgumentError("freqresp: w (the angular frequencies) is missing", ArgumentError.code)
        if (from_input is None) != (to_output is None):
            raise ArgumentError("freqresp: give from_input and to_output together, or neither (every input to "
                                "every output)", ArgumentError.code)
        if from_input is None:
            return self._freqresp_all(w, point, at, q, v, guess, t)
        if from_input not in self.inputs:
            raise ArgumentError("freqresp: the model has no input '%s' (inputs: %s)"
                                % (from_input, ", ".join(self.inputs) or "none"), ArgumentError.code)
        if to_output not in self.outputs:
            raise ArgumentError("freqresp: the model has no output '%s' (outputs: %s)"
                                % (to_output, ", ".join(self.outputs) or "none"), ArgumentError.code)
        point = self._point_for(point, at, q, v, guess, t)
        return self._core.freqresp(point._core, self.inputs.index(from_input), self.outputs.index(to_output),
                                   _np.asarray(w, dtype=float).ravel())

    def _freqresp_all(self, w, point, at, q, v, guess, t):
        """Model.freqresp from every input to every output: the library's response of each pair at
        one operating point, stacked, and the singular values of each G(i w)."""
        if not self.inputs or not self.outputs:
            raise ArgumentError("freqresp: the model has %d inputs and %d outputs (at least one of each needed)"
                                % (len(self.inputs), len(self.outputs)), ArgumentError.code)
        point = self._point_for(point, at, q, v, guess, t)
        w = _np.asarray(w, dtype=float).ravel()
        nu, ny = len(self.inputs), len(self.outputs)
        out = {"w": w, "inputs": list(self.inputs), "outputs": list(self.outputs)}
        for key in ("response", "mag", "mag_db", "phase_deg"):
            out[key] = _np.zeros((len(w), ny, nu), dtype=complex if key == "response" else float)
        for i in range(nu):
            for o in range(ny):
                r = self._core.freqresp(point._core, i, o, w)
                for key in ("response", "mag", "mag_db", "phase_deg"):
                    out[key][:, o, i] = r[key]
                out["rcond"], out["form"] = r["rcond"], r["form"]
        g = out["response"]
        finite = _np.all(_np.isfinite(g), axis=(1, 2))
        sv = _np.full((len(w), min(nu, ny)), _np.inf)
        if finite.any():
            sv[finite] = _np.linalg.svd(g[finite], compute_uv=False)
        out["singular_values"] = sv
        return out

    def _lin_options(self, method, options, who):
        for k in options:
            if k not in _LIN_OPTIONS:
                raise TypeError("%s() got an unknown option %r (known: %s)" % (who, k, ", ".join(_LIN_OPTIONS)))
        opts = dict(options)
        if method is not None:
            if method not in _core.methods():
                raise ArgumentError("unknown linearization method '%s' (available: %s)"
                                    % (method, ", ".join(_core.methods())), ArgumentError.code)
            opts["method"] = method
        if "nev" in opts and opts["nev"] is not None and "partial" not in opts:
            opts["partial"] = "always"
        for k in ("pen_Xi", "pen_Theta", "pen_Omega"):  # m numbers (a diagonal) or m x m, to m x m column-major
            if opts.get(k) is None:
                continue
            try:
                a = _np.array(opts[k], dtype=float)
            except (TypeError, ValueError):
                a = None
            if a is None or a.ndim not in (1, 2) or (a.ndim == 2 and a.shape[0] != a.shape[1]):
                raise ArgumentError("%s: expected a list of numbers (a diagonal, one per holonomic constraint) or a "
                                    "square matrix" % k, ArgumentError.code)
            if a.ndim == 1:
                a = _np.diag(a)
            if a.shape[0] != self.m:
                raise ArgumentError("%s: %d x %d, the model has %d holonomic constraints"
                                    % (k, a.shape[0], a.shape[0], self.m), ArgumentError.code)
            opts[k] = _np.asfortranarray(a)
        return opts

    def _point_for(self, point, at, q, v, guess, t, velocities=None, targets=None):
        if point is None:
            return self.operating_point(at, q=q, v=v, guess=guess, t=t, velocities=velocities, targets=targets)
        if not isinstance(point, OperatingPoint):
            raise TypeError("point must be an mblin.OperatingPoint")
        if point.model is not self:
            raise ValueError("the operating point belongs to another model (pass set/states to operating_point "
                             "instead, or find the point on this model)")
        return point


class OperatingPoint:
    """A consistent operating point (t, q, v, vdot, multipliers, inputs) of a model.

    Attributes:
        model: the Model.
        at: how it was found ("equilibrium", "given", "steady").
        t: time. q, v, vdot: arrays of n (in the order of ``model.coordinates``).
        lambda_: holonomic multipliers (m). mu: non-holonomic multipliers (k).
        inputs: input values. outputs: the outputs y at the point.
        iterations, residual, scaled_residual: of the Newton solve.
        constraint_rank: the numerical rank of the constraint Jacobian at the point.
        min_norm_multipliers: True when the multipliers are the minimum-norm ones (rank loss).
        notes: what happened (moved coordinates, rank loss).
        trim, trim_residual: at "trim", what was solved and the targets met, and the largest
            target residual ("" and 0 at other points).
    """

    def __init__(self, model, core_point):
        self.model = model
        self._core = core_point
        d = core_point.to_dict()
        self.at = d["at"]
        self.t = d["t"]
        self.q, self.v, self.vdot = d["q"], d["v"], d["vdot"]
        self.lambda_, self.mu = d["lambda"], d["mu"]
        self.inputs, self.outputs = d["inputs"], d["outputs"]
        self.iterations = d["iterations"]
        self.residual = d["residual"]
        self.scaled_residual = d["scaled_residual"]
        self.constraint_rank = d["constraint_rank"]
        self.min_norm_multipliers = d["min_norm_multipliers"]
        self.notes = d["notes"]
        self.trim = d["trim"]
        self.trim_residual = d["trim_residual"]

    @property
    def coordinates(self):
        """The coordinate names (the order of q, v, vdot)."""
        return self.model.coordinates

    def as_dict(self):
        """{coordinate name: value of q}."""
        return dict(zip(self.model.coordinates, self.q.tolist()))

    def __repr__(self):
        return "<mblin.OperatingPoint %s t=%g: %s>" % (
            self.at, self.t, ", ".join("%s=%.6g" % kv for kv in self.as_dict().items()))


class _Matrices:
    """A named group of matrices (attribute access, iteration over the names)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __iter__(self):
        return iter(self.__dict__)

    def __getitem__(self, k):
        return self.__dict__[k]

    def __repr__(self):
        return "<%s>" % ", ".join("%s %s" % (k, "x".join(map(str, v.shape)) if v is not None else "None")
                                  for k, v in self.__dict__.items())


class Mode:
    """One eigenvalue and its mode shape.

    Attributes:
        index: position in Linearization.modes.
        eigenvalue: complex. freq_hz: |eigenvalue| / 2 pi. damped_freq_hz: |Im eigenvalue| / 2 pi (0 for a
        real eigenvalue, NaN for an infinite one; source 003's Table 5.2). damping_ratio: -Re / |eigenvalue|.
        kind: "oscillatory", "real" or "zero". spurious: True when the method flags it.
        backward_error: of the eigenpair (NaN for a method's own spectrum).
        shape: complex array over the model's coordinates (dq of the eigenvector), or None.
    """

    __slots__ = ("index", "eigenvalue", "freq_hz", "damped_freq_hz", "damping_ratio", "kind", "spurious",
                 "backward_error", "shape", "_coords")

    def __init__(self, index, eigenvalue, freq_hz, damping_ratio, kind, spurious, backward_error, shape, coords):
        self.index, self.eigenvalue, self.freq_hz, self.damping_ratio = index, eigenvalue, freq_hz, damping_ratio
        self.kind, self.spurious, self.backward_error, self.shape = kind, spurious, backward_error, shape
        self._coords = coords
        finite = _math.isfinite(eigenvalue.real) and _math.isfinite(eigenvalue.imag)
        self.damped_freq_hz = abs(eigenvalue.imag) / (2 * _math.pi) if finite else _math.nan

    def shape_dict(self):
        """{coordinate name: complex amplitude}."""
        return dict(zip(self._coords, self.shape.tolist())) if self.shape is not None else {}

    def __repr__(self):
        return "<mblin.Mode %d: %.6g%+.6gj, %.6g Hz, damping %.4g, %s%s>" % (
            self.index, self.eigenvalue.real, self.eigenvalue.imag, self.freq_hz, self.damping_ratio, self.kind,
            ", spurious" if self.spurious else "")


class Linearization:
    """The linear model at an operating point, and its modes.

    State space (x = [S; W], position-level states then velocity-level states)::

        x' = A x + B u,   y = C x + D u

    Second-order form over the position-level states S::

        M S'' + Cd S' + K S = F u      (also as .mck.M, .mck.C, .mck.K, .mck.F)

    Attributes:
        method: the linearization method used.
        A, B, C, D: state-space matrices (ndarray; None when a partial spectrum left them unformed).
        ss: the same as a group, ``lin.ss.A`` ...
        M, Cd, K, F: the second-order form (Cd is the damping matrix; ``C`` is the output matrix).
        mck: the group ``lin.mck.M, .C (damping), .K, .F``.
        descriptor: the group ``E, A, B, C`` of the descriptor form E x' = A x + B u, y = C x + D u
            (the descriptor method), else None.
        q_S, v_W: maps from position / velocity states to all coordinates / velocities.
        states, velocity_states: names of S and W. state_names: all of x.
        inputs, outputs, coordinates: names.
        eigenvalues: complex array. frequencies: Hz. damped_frequencies: |Im| / 2 pi in Hz (NaN for an infinite
        eigenvalue). damping: damping ratios. spurious: bool array.
        kinds: "oscillatory" / "real" / "zero" each. backward_errors: per eigenpair. error_estimates: per eigenvalue
        where the method measures it (penalty), NaN elsewhere.
        shapes: complex array n x (number of eigenvalues), column i the shape of mode i.
        modes: list of :class:`Mode`.
        eigen_solver: "sygvd", "quadratic-qz", "dgeev" or the method's own.
        condition: condition estimate of the solve. selection: what the state selection did.
        notes: what the method did. error_estimate: the method's own eigenvalue error estimate.
        spectrum: dict {partial, count, of, shift, reason}.
        point: the OperatingPoint. model: the Model.
    """

    def __init__(self, model, point, d):
        self.model, self.point = model, point
        self.method = d["method"]
        z0, z1 = d["z0"], d["z1"]
        names = d["state_names"]
        self.state_names = names
        self.states = names[:z0] if names is not None else None
        self.velocity_states = names[z0:z0 + z1] if names is not None else None
        self.inputs, self.outputs = d["input_names"], d["output_names"]
        self.coordinates = model.coordinates
        self.A, self.B, self.C, self.D = d["A"], d["B"], d["C"], d["D"]
        self.M, self.Cd, self.K, self.F = d["M"], d["Cd"], d["K"], d["F"]
        self.ss = _Matrices(A=self.A, B=self.B, C=self.C, D=self.D)
        self.mck = _Matrices(M=self.M, C=self.Cd, K=self.K, F=self.F)
        self.descriptor = (_Matrices(E=d["E"], A=d["Ad"], B=d["Bd"], C=d["Cdd"], D=d["Dd"]) if d["nd"] > 0 else None)
        self.q_S, self.v_W = d["q_S"], d["v_W"]
        self.eigenvalues = d["eigenvalues"]
        self.frequencies = d["freq_hz"]
        self.damping = d["damping_ratio"]
        ev = _np.asarray(self.eigenvalues, dtype=complex)
        with _np.errstate(invalid="ignore"):
            self.damped_frequencies = _np.where(_np.isfinite(ev), _np.abs(ev.imag) / (2 * _math.pi), _np.nan)
        self.spurious = d["spurious"]
        self.kinds = d["kinds"]
        self.backward_errors = d["backward_error"]
        self.error_estimates = d["error_estimates"]  # per eigenvalue (penalty), NaN elsewhere
        self.shapes = d["shapes"]
        self.zero_tol = d["zero_tol"]
        self.eigen_solver = d["eigen_solver"]
        self.condition = d["cond"]
        self.selection = d["selection"]
        self.notes = d["notes"]
        self.error_estimate = d["err_est"]
        n_eig = len(self.eigenvalues)
        self.spectrum = {"partial": bool(d["eig_partial"]), "count": n_eig, "of": d["nx"],
                         "shift": d["eig_shift"] if d["eig_partial"] else None,
                         "reason": (d["spectrum_reason"] or "asked for (nev)") if d["eig_partial"] else ""}
        coords = self.coordinates
        self.modes = [Mode(i, complex(self.eigenvalues[i]), float(self.frequencies[i]), float(self.damping[i]),
                           self.kinds[i], bool(self.spurious[i]), float(self.backward_errors[i]),
                           self.shapes[:, i] if self.shapes is not None else None, coords)
                      for i in range(n_eig)]

    def __repr__(self):
        return "<mblin.Linearization %s: %d states, %d inputs, %d outputs, %d eigenvalues>" % (
            self.method, self.spectrum["of"], len(self.inputs), len(self.outputs), len(self.eigenvalues))

    def eigen_table(self):
        """The eigen table as text (mode, frequency Hz, damping ratio, real, imaginary), like the CLI."""
        lines = ["%4s %14s %12s %14s %14s" % ("mode", "freq (Hz)", "damping", "real", "imag")]
        for m in self.modes:
            lines.append("%4d %14.6g %12.6g %14.6g %14.6g%s" % (m.index + 1, m.freq_hz, m.damping_ratio,
                                                             m.eigenvalue.real, m.eigenvalue.imag,
                                                             "  spurious" if m.spurious else ""))
        return "\n".join(lines)

    def to_scipy(self):
        """The state-space form as ``scipy.signal.StateSpace(A, B, C, D)``.

        A model without inputs or outputs gets a zero column / row so that SciPy accepts it.
        Raises :class:`Error` when the state-space form was not formed (a partial spectrum).
        """
        if self.A is None:
            raise Error("%s: the state-space form was not formed (partial spectrum: %s)"
                        % (self.model.file, self.spectrum["reason"] or "asked for"))
        import scipy.signal
        nx = self.A.shape[0]
        B, C, D = self.B, self.C, self.D
        if B.shape[1] == 0:
            B = _np.zeros((nx, 1))
            D = _np.zeros((D.shape[0], 1))
        if C.shape[0] == 0:
            C = _np.zeros((1, nx))
            D = _np.zeros((1, D.shape[1]))
        return scipy.signal.StateSpace(self.A, B, C, D)


class Comparison:
    """The result of :meth:`Model.compare`.

    Attributes:
        reference: the method the deviations are measured against.
        rows: list of dicts {method, ok, seconds, physical_eigenvalues, max_rel_deviation,
            error_estimate, note}; max_rel_deviation is None when not comparable.
    """

    def __init__(self, reference, rows):
        self.reference = reference
        for r in rows:
            if r["max_rel_deviation"] < 0:
                r["max_rel_deviation"] = None
        self.rows = rows

    def __getitem__(self, method):
        for r in self.rows:
            if r["method"] == method:
                return r
        raise KeyError(method)

    def __repr__(self):
        return "<mblin.Comparison reference=%s: %s>" % (
            self.reference, ", ".join("%s%s" % (r["method"], "" if r["ok"] else " (refused)") for r in self.rows))
