# The native module. Use the public submodules (polywire.kado, ...) instead.
from types import ModuleType

__all__ = [
    "__version__",
    "PolywireError",
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
