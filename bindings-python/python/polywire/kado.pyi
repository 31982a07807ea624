from enum import IntEnum
from typing import Any, Final, TypedDict, final

from polywire._polywire import KadoError as KadoError

__all__ = [
    "COMPRESSION_THRESHOLD",
    "DEFAULT_MAX_FRAME_SIZE",
    "FrameDecoder",
    "HEADER_FORMAT",
    "HEADER_SIZE",
    "KadoError",
    "MAGIC_COMPRESSED",
    "MessageType",
    "TOON_VERSION",
    "compress",
    "decode",
    "decode_header",
    "decode_raw",
    "decompress",
    "encode",
    "encode_header",
    "encode_payload",
    "is_compressed",
    "validate",
]

_Bytes = bytes | bytearray | memoryview

class MessageType(IntEnum):
    INSTRUCTION = 0x01
    TOOL_CALL = 0x02
    TOOL_RESULT = 0x03
    STATUS = 0x04
    ERROR = 0x05
    HEARTBEAT = 0x06
    CONTEXT_REQUEST = 0x07
    CONTEXT_RESPONSE = 0x08

TOON_VERSION: Final[int]
HEADER_SIZE: Final[int]
HEADER_FORMAT: Final[str]
COMPRESSION_THRESHOLD: Final[int]
MAGIC_COMPRESSED: Final[int]
DEFAULT_MAX_FRAME_SIZE: Final[int]

# Header, Message and RawMessage exist only for type checkers (the runtime returns plain
# dicts): import them under ``if typing.TYPE_CHECKING:``.

class Header(TypedDict):
    version: int
    type: int
    payload_length: int
    """Bytes of payload on the wire (after compression)."""
    timestamp: int
    """Milliseconds since the Unix epoch."""
    sequence_id: int

class Message(TypedDict):
    header: Header
    payload: Any

class RawMessage(TypedDict):
    header: Header
    payload: bytes
    """The payload bytes, decompressed."""

def encode(msg_type: int, data: Any, sequence_id: int, timestamp: int | None = None) -> bytes:
    """Encode a frame. ``timestamp`` defaults to now (ms). JSON as ``JSON.stringify``
    writes it; compressed when longer than 1024 bytes and smaller that way."""

def encode_payload(data: Any) -> bytes:
    """The JSON payload bytes ``encode`` writes, before compression."""

def decode(buffer: _Bytes, *, max_size: int = 16777216) -> Message:
    """Decode and validate a frame. Bytes after the frame are ignored.
    A compressed payload expanding past ``max_size`` bytes (an int >= 0, default
    ``DEFAULT_MAX_FRAME_SIZE``) fails with ``KADO_FRAME_TOO_LARGE`` before it is
    allocated. Raises :class:`KadoError` with ``code`` and ``offset``."""

def decode_raw(buffer: _Bytes, *, max_size: int = 16777216) -> RawMessage:
    """Like :func:`decode` but returns the decompressed payload bytes unparsed."""

def encode_header(msg_type: int, payload_length: int, sequence_id: int, timestamp: int | None = None) -> bytes: ...
def decode_header(buffer: _Bytes) -> Header:
    """Read and validate (length, version, type) the 18-byte header."""

def validate(buffer: _Bytes) -> bool:
    """Whether a whole frame with a known version and type is present."""

def compress(data: _Bytes) -> bytes:
    """RLE-compress with the magic prefix; data shorter than 1024 bytes or that does
    not shrink is returned unchanged."""

def decompress(data: _Bytes, *, max_size: int = 16777216) -> bytes:
    """Undo :func:`compress`; data without the magic byte is returned unchanged.
    Raises :class:`KadoError` (``KADO_INVALID_RLE``) on a truncated escape or a zero count,
    and ``KADO_FRAME_TOO_LARGE`` when the output would pass ``max_size`` bytes (checked
    before allocating past it)."""

def is_compressed(data: _Bytes) -> bool: ...

@final
class FrameDecoder:
    """Incremental decoder for streams: ``feed`` chunks of any size, get complete
    frames in order. The declared frame size is checked against ``max_frame_size``
    from the header, before the payload is buffered. After an error the decoder stays
    failed and raises it again; frames completed before the error in the same ``feed``
    call are returned and the error is raised by the next call."""

    def __new__(cls, max_frame_size: int = 16777216, *, raw: bool = False) -> FrameDecoder:
        """``max_frame_size`` (default ``DEFAULT_MAX_FRAME_SIZE``, at least ``HEADER_SIZE``)
        bounds a frame on the wire (header + payload) and a payload after decompression;
        ``raw=True`` yields :class:`RawMessage` frames."""
    def feed(self, data: _Bytes) -> list[Message] | list[RawMessage]: ...
    def finish(self) -> None:
        """Raise if the stream ended inside a frame (or the decoder failed)."""
    @property
    def buffered(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def max_frame_size(self) -> int: ...
