import uuid as _uuid
from typing import Any, Final, NamedTuple, Optional, Sequence, Union, final

from polywire._polywire import TetherError as TetherError

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "MAX_EXPOSURE_HASH",
    "MAX_SMALL_INTEGER",
    "Answer",
    "MessageSend",
    "Proxy",
    "Symbol",
    "TetherError",
    "decode",
    "decode_answer",
    "decode_handshake",
    "decode_message_send",
    "decode_result_hex",
    "encode",
    "encode_answer",
    "encode_handshake",
    "encode_message_send",
    "from_hex",
    "read_tool_result",
    "to_hex",
    "tool_arguments",
]

_Bytes = bytes | bytearray | memoryview
# A value encode() accepts. Exists only for type checkers: import it under
# ``if typing.TYPE_CHECKING:``.
TetherValue = Union[int, bool, None, str, "Symbol", bytes, bytearray, memoryview, Sequence[Any], _uuid.UUID, "Proxy"]

MAX_SMALL_INTEGER: Final[int]
"""0x1FFFFFFF: the largest int with an encoding."""
MAX_EXPOSURE_HASH: Final[int]
"""0x0FFFFFFE: the largest exposure hash a proxy word can carry."""
DEFAULT_MAX_DEPTH: Final[int]
"""256: the deepest Array nesting accepted by default."""

@final
class Symbol:
    """A Smalltalk Symbol; equal (and hashed) by name."""

    def __new__(cls, name: str) -> Symbol:
        """``name``: a ``str`` (anything else raises :class:`TetherError`
        ``TETHER_UNSUPPORTED_TYPE``; a lone surrogate ``TETHER_UNENCODABLE_CHARACTER``)."""
    @property
    def name(self) -> str:
        """The Symbol's name, e.g. ``printString``."""

@final
class Proxy:
    """A remote object reference by exposure hash (0..MAX_EXPOSURE_HASH); equal by hash."""

    def __new__(cls, exposure_hash: int) -> Proxy:
        """``exposure_hash``: an int 0 to ``MAX_EXPOSURE_HASH``; outside it :class:`TetherError`
        ``TETHER_EXPOSURE_HASH_RANGE``, another type (a bool too) ``TETHER_UNSUPPORTED_TYPE``."""
    @property
    def exposure_hash(self) -> int:
        """The remote object's exposure hash (0 to ``MAX_EXPOSURE_HASH``)."""

class MessageSend(NamedTuple):
    """A decoded message send (:func:`decode_message_send`)."""

    uuid: _uuid.UUID
    """The send's UUID, which its answer carries."""
    receiver: int
    """The receiver's exposure hash."""
    selector: str
    """The selector (the Symbol's name), e.g. ``printString``."""
    arguments: list[Any]
    """The arguments, decoded as :func:`decode` decodes values."""

class Answer(NamedTuple):
    """A decoded answer (:func:`decode_answer`)."""

    uuid: Optional[_uuid.UUID]
    """The send's UUID (wire form), or None (the MCP tool's form)."""
    result: Any
    """The answered value, decoded as :func:`decode` decodes values."""

def encode(value: TetherValue, latin1: bool = False, max_depth: int = 256) -> bytes:
    """Encode one value. ``latin1=True``: one byte per character (U+0000..U+00FF)."""

def decode(data: _Bytes, latin1: bool = False, max_depth: int = 256) -> Any:
    """Decode exactly one value; leftover bytes are an error."""

def encode_message_send(
    receiver: Union[int, Proxy],
    selector: Union[str, Symbol],
    arguments: Sequence[TetherValue],
    uuid: Optional[Union[_uuid.UUID, str]] = None,
    latin1: bool = False,
    max_depth: int = 256,
) -> bytes:
    """A message-send frame; ``receiver`` is the exposure hash (or a Proxy); a random UUID
    when ``uuid`` is None."""

def decode_message_send(data: _Bytes, *, latin1: bool = False, max_depth: int = 256) -> MessageSend: ...
def encode_answer(value: TetherValue, uuid: Optional[Union[_uuid.UUID, str]] = None, latin1: bool = False, max_depth: int = 256) -> bytes:
    """An answer frame: with ``uuid`` the wire form, without it the MCP tool's form."""

def decode_answer(data: _Bytes, *, latin1: bool = False, max_depth: int = 256) -> Answer: ...
def encode_handshake(exposure_hash: int) -> bytes:
    """The one-word handshake ``0x60000001 + exposure_hash``."""

def decode_handshake(data: _Bytes) -> int:
    """The exposure hash of a handshake word (exactly 4 bytes, ``0x60000001 + exposure_hash``).
    Raises :class:`TetherError`: ``TETHER_TRUNCATED`` (fewer than 4 bytes),
    ``TETHER_TRAILING_BYTES`` (more), ``TETHER_UNEXPECTED_TAG`` (another word)."""
def to_hex(data: _Bytes) -> str:
    """Lowercase hex: 8 characters per 32-bit word."""

def from_hex(hex: str, words: bool = True) -> bytes:
    """Parse hex under the send tool's checklist: hex digits only and (with ``words``) a
    length that is a multiple of 8; errors name the offending word. ``words=False``
    accepts any whole number of bytes (Strings and ByteArrays are not padded)."""

def tool_arguments(
    receiver: TetherValue, selector: Union[str, Symbol], arguments: Sequence[TetherValue], latin1: bool = False, max_depth: int = 256
) -> dict[str, str]:
    """The MCP ``send`` tool's ``{"receiver", "selector", "arguments"}``: receiver and the
    arguments Array as hex, the selector as text."""

def decode_result_hex(hex: str, latin1: bool = False, max_depth: int = 256) -> Any:
    """The ``send`` tool's hex result -> value (answer tag optional)."""

def read_tool_result(output: Union[dict[str, Any], str, _Bytes], latin1: bool = False, max_depth: int = 256) -> Any:
    """The ``send`` tool's output ``{"result": "<hex>"}`` (a dict or JSON text) -> value."""
