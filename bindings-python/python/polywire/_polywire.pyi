# The native module. Use the public submodules (polywire.kado, ...) instead.
from types import ModuleType

__all__ = [
    "__version__",
    "_simd",
    "PolywireError",
    "PolywireTypeError",
    "KadoError",
    "ToonDecodeError",
    "ToonEncodeError",
    "TetherError",
    "AxonError",
    "KameoError",
    "LlmError",
    "kado",
    "toon",
    "tether",
    "axon",
    "axon1",
    "axon_peer",
    "kameo",
    "kameo_peer",
    "llm",
    "cli",
]

__version__: str
_simd: bool
"""Whether the x86_64 SIMD paths are compiled in (off in CI's portable build)."""

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

class PolywireTypeError(TypeError, PolywireError):
    """An argument or value of a type polywire cannot take: wrong argument types,
    values with no wire form. A ``TypeError`` and a :class:`PolywireError` (so
    ``except polywire.PolywireError`` catches every error polywire raises), with
    ``code`` such as ``KADO_INVALID_ARGUMENT`` or ``TOON_UNSUPPORTED_TYPE``;
    ``offset``, ``line`` and ``column`` are ``None``. The message names the
    parameter and what it accepts.

    Error policy of every public function: a wrong type is a ``PolywireTypeError``;
    a value of the right type that is out of range (negative or too large ints,
    ``max_size``...), a ``str`` with a lone surrogate, an int with more digits than
    CPython converts (``<FORMAT>_INTEGER_TOO_LARGE``), a value nested too deeply or
    circular, and a container changed by Python code while it is encoded
    (``<FORMAT>_VALUE_CHANGED``; AXON: ``invalid_envelope``) are the format's error
    class (a :class:`PolywireError`, so a ``ValueError``). Neither an
    ``OverflowError``, a ``UnicodeError`` nor a ``pyo3_runtime.PanicException``
    escapes."""

class KadoError(PolywireError):
    """A Kado frame could not be encoded or decoded (codes ``KADO_*``, with the byte ``offset``)."""

class ToonDecodeError(PolywireError):
    """TOON text could not be decoded (codes ``TOON_*``, with ``line`` and ``column`` where they apply)."""

    source: str | None
    """The offending line as written (without its line break), when the error has a line."""

class ToonEncodeError(PolywireError):
    """A value could not be encoded as TOON text (codes ``TOON_*``)."""

class TetherError(PolywireError):
    """A Tether value could not be encoded or decoded (codes ``TETHER_*``, with the byte ``offset``)."""

class AxonError(PolywireError):
    """An AXON envelope is invalid; ``code`` is the protocol's error code (``invalid_envelope``,
    ``unknown_kind``, ...)."""

class KameoError(PolywireError):
    """A Kameo message could not be encoded or decoded (codes ``KAMEO_*``, with the byte ``offset``)."""

class LlmError(PolywireError):
    """Tokens could not be counted: an unknown encoding (``LLM_UNKNOWN_ENCODING``), an unreadable
    or invalid ``tokenizer.json`` (``LLM_TOKENIZER_FILE``, ``LLM_INVALID_TOKENIZER``)."""

kado: ModuleType
toon: ModuleType
tether: ModuleType
axon: ModuleType
axon1: ModuleType
axon_peer: ModuleType
kameo: ModuleType
kameo_peer: ModuleType
llm: ModuleType
cli: ModuleType
"""``cli.main(argv) -> int``: the ``polywire`` command (see :mod:`polywire.cli`)."""
