# Type stubs of the mblin package (python/mblin/__init__.py; the docstrings are there).
import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

FloatArray = npt.NDArray[np.float64]
ComplexArray = npt.NDArray[np.complex128]
BoolArray = npt.NDArray[np.bool_]
Settings = Mapping[str, Union[float, str]]  # a number, or a constant expression as text ("pi/2")

class Error(Exception):
    message: str
    code: int
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str, code: Optional[int] = ...) -> None: ...

class OutOfMemoryError(Error, MemoryError): ...
class DimensionError(Error, ValueError): ...
class SingularError(Error): ...
class ConvergenceError(Error): ...
class ParseError(Error, ValueError): ...
class DomainError(Error, ArithmeticError): ...
class ModelError(Error, ValueError): ...
class FileError(Error, OSError): ...
class LibraryError(Error): ...
class ArgumentError(Error, ValueError): ...
class UserCodeError(Error, PermissionError): ...

# load(user=...): a routine written in Python gets its inputs and returns its outputs (a number for
# one output), or with `partials: yes` the pair (outputs, jacobian outputs x inputs)
UserRoutine = Callable[[FloatArray], Any]

def methods() -> List[str]: ...
def load(path: Union[str, os.PathLike[str]], set: Optional[Settings] = ..., *,
         states: Optional[Sequence[str]] = ..., velocity_states: Optional[Sequence[str]] = ...,
         outputs: Optional[Sequence[str]] = ..., allow_user_code: bool = ...,
         user: Optional[Mapping[str, UserRoutine]] = ...) -> Model: ...
def loads(text: Union[str, bytes], set: Optional[Settings] = ..., *, name: str = ...,
          states: Optional[Sequence[str]] = ..., velocity_states: Optional[Sequence[str]] = ...,
          outputs: Optional[Sequence[str]] = ..., allow_user_code: bool = ...,
          user: Optional[Mapping[str, UserRoutine]] = ...) -> Model: ...
def from_dict(d: Dict[str, Any], set: Optional[Settings] = ..., *, name: str = ...,
              states: Optional[Sequence[str]] = ..., velocity_states: Optional[Sequence[str]] = ...,
              outputs: Optional[Sequence[str]] = ..., allow_user_code: bool = ...,
              user: Optional[Mapping[str, UserRoutine]] = ...) -> Model: ...

class Model:
    name: str
    file: str
    at: str
    time: float
    n: int
    m: int
    k: int
    coordinates: List[str]
    inputs: List[str]
    outputs: List[str]
    parameters: Dict[str, float]
    def reload(self, set: Optional[Settings] = ..., *, states: Optional[Sequence[str]] = ...,
               velocity_states: Optional[Sequence[str]] = ...) -> Model: ...
    def operating_point(self, at: Optional[str] = ..., *, q: Optional[npt.ArrayLike] = ...,
                        v: Optional[npt.ArrayLike] = ..., guess: Optional[Settings] = ..., t: Optional[float] = ...,
                        set: Optional[Settings] = ..., velocities: Optional[Settings] = ...,
                        targets: Optional[Settings] = ..., **options: float) -> OperatingPoint: ...
    def equilibrium(self, **kwargs: Any) -> OperatingPoint: ...
    def linearize(self, method: Optional[str] = ..., *, set: Optional[Settings] = ...,
                  states: Optional[Sequence[str]] = ..., velocity_states: Optional[Sequence[str]] = ...,
                  point: Optional[OperatingPoint] = ..., at: Optional[str] = ..., q: Optional[npt.ArrayLike] = ...,
                  v: Optional[npt.ArrayLike] = ..., guess: Optional[Settings] = ..., t: Optional[float] = ...,
                  zero_tol: Optional[float] = ..., velocities: Optional[Settings] = ...,
                  targets: Optional[Settings] = ...,
                  **options: Union[float, int, str, npt.ArrayLike]) -> Linearization: ...
    def compare(self, *, set: Optional[Settings] = ..., states: Optional[Sequence[str]] = ...,
                velocity_states: Optional[Sequence[str]] = ..., point: Optional[OperatingPoint] = ...,
                at: Optional[str] = ..., q: Optional[npt.ArrayLike] = ..., v: Optional[npt.ArrayLike] = ...,
                guess: Optional[Settings] = ..., t: Optional[float] = ..., repeat: int = ...,
                **options: Union[float, int, str]) -> Comparison: ...
    def sweep(self, param: str, values: Union[Tuple[float, float, int], npt.ArrayLike], *, threads: int = ...,
              at: Optional[str] = ..., set: Optional[Settings] = ...) -> Dict[str, Any]: ...
    def sensitivity(self, wrt: Optional[Union[str, Sequence[str]]] = ..., *, shapes: bool = ...,
                    point: Optional[OperatingPoint] = ..., at: Optional[str] = ..., q: Optional[npt.ArrayLike] = ...,
                    v: Optional[npt.ArrayLike] = ..., guess: Optional[Settings] = ...,
                    t: Optional[float] = ...) -> Dict[str, Any]: ...
    def boundary(self, param: str, near: float, *, order: float = ..., mode: int = ..., shape: Optional[str] = ...,
                 branch: Optional[int] = ..., sweep: Optional[Union[str, "os.PathLike[str]"]] = ...,
                 range: Optional[Tuple[float, float]] = ..., tol: Optional[float] = ..., at: Optional[str] = ...,
                 set: Optional[Settings] = ...) -> Dict[str, Any]: ...
    def freqresp(self, from_input: str, to_output: str, w: npt.ArrayLike, *, point: Optional[OperatingPoint] = ...,
                 at: Optional[str] = ..., q: Optional[npt.ArrayLike] = ..., v: Optional[npt.ArrayLike] = ...,
                 guess: Optional[Settings] = ..., t: Optional[float] = ...) -> Dict[str, Any]: ...
    def optimize(self, vary: Dict[str, Sequence[float]], objective: str, constraints: Union[str, Sequence[str]] = ...,
                 *, algorithm: Optional[str] = ..., max_eval: Optional[int] = ..., xtol: Optional[float] = ...,
                 ftol: Optional[float] = ..., ctol: Optional[float] = ..., feas_tol: Optional[float] = ...,
                 kkt_tol: Optional[float] = ..., min_mac: Optional[float] = ..., at: Optional[str] = ...,
                 set: Optional[Settings] = ...) -> Dict[str, Any]: ...

class OperatingPoint:
    model: Model
    at: str
    t: float
    q: FloatArray
    v: FloatArray
    vdot: FloatArray
    lambda_: FloatArray
    mu: FloatArray
    inputs: FloatArray
    outputs: FloatArray
    iterations: int
    residual: float
    scaled_residual: float
    constraint_rank: int
    min_norm_multipliers: bool
    notes: str
    trim: str
    trim_residual: float
    @property
    def coordinates(self) -> List[str]: ...
    def as_dict(self) -> Dict[str, float]: ...

class _Matrices:
    def __iter__(self) -> Iterator[str]: ...
    def __getitem__(self, k: str) -> Optional[FloatArray]: ...
    def __getattr__(self, k: str) -> Optional[FloatArray]: ...

class Mode:
    index: int
    eigenvalue: complex
    freq_hz: float
    damped_freq_hz: float
    damping_ratio: float
    kind: str
    spurious: bool
    backward_error: float
    shape: Optional[ComplexArray]
    def shape_dict(self) -> Dict[str, complex]: ...

class Linearization:
    model: Model
    point: OperatingPoint
    method: str
    A: Optional[FloatArray]
    B: Optional[FloatArray]
    C: Optional[FloatArray]
    D: Optional[FloatArray]
    M: Optional[FloatArray]
    Cd: Optional[FloatArray]
    K: Optional[FloatArray]
    F: Optional[FloatArray]
    ss: _Matrices
    mck: _Matrices
    descriptor: Optional[_Matrices]
    q_S: Optional[FloatArray]
    v_W: Optional[FloatArray]
    state_names: Optional[List[str]]
    states: Optional[List[str]]
    velocity_states: Optional[List[str]]
    inputs: List[str]
    outputs: List[str]
    coordinates: List[str]
    eigenvalues: ComplexArray
    frequencies: FloatArray
    damped_frequencies: FloatArray
    damping: FloatArray
    spurious: BoolArray
    kinds: List[str]
    backward_errors: FloatArray
    error_estimates: FloatArray
    shapes: Optional[ComplexArray]
    modes: List[Mode]
    zero_tol: float
    eigen_solver: str
    condition: float
    selection: str
    notes: str
    error_estimate: float
    spectrum: Dict[str, Any]
    def eigen_table(self) -> str: ...
    def to_scipy(self) -> Any: ...

class Comparison:
    reference: str
    rows: List[Dict[str, Any]]
    def __getitem__(self, method: str) -> Dict[str, Any]: ...
