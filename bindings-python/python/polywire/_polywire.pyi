# The native module. Use the public submodules (polywire.kado, ...) instead.
from types import ModuleType

__all__ = [
    "__version__",
    "PolywireError",
    "PolywireTypeError",
    "KadoError",
    "ToonDecodeError",
    "ToonEncodeError",
    "TetherError",
    "AxonError",
    "KameoError",
    "kado",
    "toon",
    "tether",
    "axon",
    "kameo",
]

__version__: str

class PolywireError(ValueError):
    """Base class of every polywire error."""

    code: str
    """Stable machine-readable code, e.g. ``KADO_TRUNCATED_PAYLOAD``."""
    offset: int | None
    """Byte offset of the problem in the input, when it has one."""
    line: int | None
    """1-based line of the problem (text formats), when it has one."""
    column: int | None
    """1-based column of the problem (text formats), when it has one."""
    msg: str
    """The message without the position."""

class PolywireTypeError(TypeError):
    """An argument or value of a type polywire cannot take: wrong argument types,
    values with no wire form. Carries the same attributes as :class:`PolywireError`
    (``code`` such as ``KADO_INVALID_ARGUMENT`` or ``TOON_UNSUPPORTED_TYPE``;
    ``offset``, ``line`` and ``column`` are ``None``).

    Error policy of every public function: a wrong type is a ``PolywireTypeError``;
    a value of the right type that is out of range (negative or too large ints,
    ``max_size``...), a ``str`` with a lone surrogate, an int with more digits than
    CPython converts (``<FORMAT>_INTEGER_TOO_LARGE``), a value nested too deeply or
    circular, and a container changed by Python code while it is encoded
    (``<FORMAT>_VALUE_CHANGED``; AXON: ``invalid_envelope``) are the format's error
    class (a :class:`PolywireError`, so a ``ValueError``). Neither an
    ``OverflowError``, a ``UnicodeError`` nor a ``pyo3_runtime.PanicException``
    escapes."""

    code: str
    offset: int | None
    line: int | None
    column: int | None
    msg: str

class KadoError(PolywireError): ...
class ToonDecodeError(PolywireError):
    source: str | None
    """The offending line as written (without its line break), when the error has a line."""

class ToonEncodeError(PolywireError): ...
class TetherError(PolywireError): ...
class AxonError(PolywireError): ...
class KameoError(PolywireError): ...

kado: ModuleType
toon: ModuleType
tether: ModuleType
axon: ModuleType
kameo: ModuleType
