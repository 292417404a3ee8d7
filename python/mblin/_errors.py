"""The exceptions of mblin: one per status code of the C library (include/mblin/status.h).

Every failure of the library raises a subclass of :class:`mblin.Error` carrying the library's
one-line message unchanged, and, when the message starts with a file position
("model.yaml:12:5: ..."), that position split out in ``file``, ``line`` and ``column``.
"""

import re

__all__ = [
    "Error", "OutOfMemoryError", "DimensionError", "SingularError", "ConvergenceError", "ParseError",
    "DomainError", "ModelError", "FileError", "LibraryError", "ArgumentError", "from_status",
]

_POSITION = re.compile(r"^(?P<file>[^:\n]+?):(?P<line>\d+):(?P<col>\d+): ")


class Error(Exception):
    """A failure reported by libmblin.

    Attributes:
        message: the library's one-line message, e.g. ``"m.yaml:3:14: unknown name 'q'"``.
        code: the negative ``MBL_E*`` status code.
        file, line, column: the position the message starts with (``None`` when it has none).
    """

    code = 0

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        m = _POSITION.match(message)
        if m and int(m.group("line")) == 0:  # line 0: not in the file (e.g. a state given to linearize)
            m = None
        self.file = m.group("file") if m else None
        self.line = int(m.group("line")) if m else None
        self.column = int(m.group("col")) if m else None

    def __str__(self):
        return self.message


class OutOfMemoryError(Error, MemoryError):
    """MBL_ENOMEM: an allocation failed, or a request exceeds the memory budget."""
    code = -1


class DimensionError(Error, ValueError):
    """MBL_EDIM: dimensions do not match."""
    code = -2


class SingularError(Error):
    """MBL_ESINGULAR: a matrix that must be regular is singular (e.g. the states do not
    parametrize the motion, or the constraints are redundant for the method)."""
    code = -3


class ConvergenceError(Error):
    """MBL_ENOCONV: an iteration (Newton for the operating point, an eigensolver) did not converge."""
    code = -4


class ParseError(Error, ValueError):
    """MBL_EPARSE: malformed text (YAML, JSON or an expression), with its file:line:column."""
    code = -5


class DomainError(Error, ArithmeticError):
    """MBL_EDOMAIN: an evaluation left a function's domain (sqrt(-1), log(0), x/0)."""
    code = -6


class ModelError(Error, ValueError):
    """MBL_EMODEL: a model that cannot be used as written (unknown name, unknown parameter, ...)."""
    code = -7


class FileError(Error, OSError):
    """MBL_EIO: a file could not be read (missing, a directory, too large)."""
    code = -8

    def __init__(self, message, code=None):
        Error.__init__(self, message, code)

    def __str__(self):
        return self.message


class LibraryError(Error):
    """MBL_ELIB: an underlying library (LAPACK, KLU, ARPACK) reported an error."""
    code = -9


class ArgumentError(Error, ValueError):
    """MBL_EARG: an invalid argument (an unknown method or coordinate name, a bad option)."""
    code = -10


_BY_CODE = {c.code: c for c in (OutOfMemoryError, DimensionError, SingularError, ConvergenceError, ParseError,
                                DomainError, ModelError, FileError, LibraryError, ArgumentError)}


def from_status(code, message):
    """The exception for a library status (called by the C extension)."""
    return _BY_CODE.get(code, Error)(message, code)


for _c in [Error] + list(_BY_CODE.values()):
    _c.__module__ = "mblin"
del _c
