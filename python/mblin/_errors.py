"""The exceptions of mblin: one per status code of the C library (include/mblin/status.h).

Every failure of the library raises a subclass of :class:`mblin.Error` carrying the library's
one-line message unchanged, and, when the message starts with a file position
("model.yaml:12:5: ..."), that position split out in ``file``, ``line`` and ``column``.
"""

import errno as _errno
import os as _os
import re

__all__ = [
    "Error", "OutOfMemoryError", "DimensionError", "SingularError", "ConvergenceError", "ParseError",
    "DomainError", "ModelError", "FileError", "LibraryError", "ArgumentError", "UserCodeError", "from_status",
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
    """MBL_EIO: a file could not be read (missing, a directory, too large) or written.

    It is an :class:`OSError` with ``errno``, ``strerror`` and ``filename`` set from the library's
    message, and it is raised as the subclass of the built-in exception of that errno as well
    (``FileNotFoundError`` for a missing file, ``PermissionError``, ``IsADirectoryError``, ...), so
    that ``except FileNotFoundError`` catches it. ``errno`` is ``None`` for a failure that has no
    system error (a file over the size limit).
    """
    code = -8

    def __init__(self, message, code=None, errno=None, strerror=None, filename=None):
        Error.__init__(self, message, code)
        self.errno = errno
        self.strerror = strerror
        self.filename = filename

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (from_status, (self.code, self.message))


# the library's messages of MBL_EIO ("PATH: ..."), src/load/load.c and src/report/report.c
_IO_MESSAGES = [
    (re.compile(r"^(?P<file>.+): cannot open the model file \((?P<why>[^()]+)\)$"), None),
    (re.compile(r"^(?P<file>.+): is a directory, not a model file$"), _errno.EISDIR),
    (re.compile(r"^(?P<file>.+): read error$"), _errno.EIO),
    (re.compile(r"^(?P<file>.+): (?:the file has \d+ bytes, more than|is not a regular file|cannot write|write error)"), 0),
]
_ERRNO_OF = {_os.strerror(e): e for e in sorted(_errno.errorcode, reverse=True)}
_OS_CLASS = {_errno.ENOENT: FileNotFoundError, _errno.EACCES: PermissionError, _errno.EPERM: PermissionError,
             _errno.EISDIR: IsADirectoryError, _errno.ENOTDIR: NotADirectoryError, _errno.EEXIST: FileExistsError}
_FILE_ERRORS = {}


def _file_error(message, code):
    """The FileError of a library message: errno, strerror, filename, the errno's OSError subclass."""
    err = strerror = filename = None
    for pattern, e in _IO_MESSAGES:
        m = pattern.match(message)
        if m:
            filename = m.group("file")
            if e is None:
                strerror = m.group("why")
                err = _ERRNO_OF.get(strerror)
            elif e:
                err, strerror = e, _os.strerror(e)
            break
    base = _OS_CLASS.get(err)
    cls = FileError
    if base is not None:
        cls = _FILE_ERRORS.get(base)
        if cls is None:  # FileError and, say, FileNotFoundError
            cls = _FILE_ERRORS[base] = type("FileError", (FileError, base), {"__doc__": FileError.__doc__, "__module__": "mblin"})
    return cls(message, code, err, strerror, filename)


class LibraryError(Error):
    """MBL_ELIB: an underlying library (LAPACK, KLU, ARPACK) reported an error."""
    code = -9


class ArgumentError(Error, ValueError):
    """MBL_EARG: an invalid argument (an unknown method or coordinate name, a bad option)."""
    code = -10


class UserCodeError(Error, PermissionError):
    """MBL_EPERM: the model would run user code that was not allowed: its file names a shared
    library under ``routines:`` and the load did not say ``allow_user_code=True`` (the CLI's
    ``--allow-user-code``; docs/user-routines.md). The message names the library's entry in the
    file (``file:line:column``). It is also a :class:`PermissionError`."""
    code = -12

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (from_status, (self.code, self.message))


_BY_CODE = {c.code: c for c in (OutOfMemoryError, DimensionError, SingularError, ConvergenceError, ParseError,
                                DomainError, ModelError, FileError, LibraryError, ArgumentError, UserCodeError)}


def from_status(code, message):
    """The exception for a library status (called by the C extension)."""
    if code == FileError.code:
        return _file_error(message, code)
    return _BY_CODE.get(code, Error)(message, code)


for _c in [Error] + list(_BY_CODE.values()):
    _c.__module__ = "mblin"
del _c
