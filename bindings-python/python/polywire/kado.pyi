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
    """The frame types of the Kado protocol (the header's second byte). Functions
    taking a ``msg_type`` accept these or the plain ints 1 to 8."""

    INSTRUCTION = 0x01
    """An instruction (Node's ``TOONEncoder.encodeInstruction`` sends ``{"instruction": ...}``)."""
    TOOL_CALL = 0x02
    """A tool call (Node's ``encodeToolCall`` sends ``{"toolName": ..., "args": ...}``)."""
    TOOL_RESULT = 0x03
    """The result of a tool call."""
    STATUS = 0x04
    """A status update (Node's ``encodeStatus`` sends ``{"status": ..., "progress": ...}``)."""
    ERROR = 0x05
    """An error."""
    HEARTBEAT = 0x06
    """A heartbeat (keep-alive)."""
    CONTEXT_REQUEST = 0x07
    """A request for context."""
    CONTEXT_RESPONSE = 0x08
    """The answer to a context request."""

TOON_VERSION: Final[int]
"""The protocol version written in every header and the only one decoded (1)."""
HEADER_SIZE: Final[int]
"""Bytes in a frame header (18)."""
HEADER_FORMAT: Final[str]
"""The header's :mod:`struct` format: version, type, payload length, timestamp, sequence id."""
COMPRESSION_THRESHOLD: Final[int]
"""Payloads longer than this many bytes are RLE-compressed by :func:`encode` when that
makes them smaller (1024)."""
MAGIC_COMPRESSED: Final[int]
"""First byte of a compressed payload (``0x5A``)."""
DEFAULT_MAX_FRAME_SIZE: Final[int]
"""Default ``max_size`` of the one-shot decoders and ``max_frame_size`` of
:class:`FrameDecoder`: 16 MiB."""

# Header, Message and RawMessage exist only for type checkers (the runtime returns plain
# dicts): import them under ``if typing.TYPE_CHECKING:``.

class Header(TypedDict):
    """A frame header, as :func:`decode_header` (and every decoder) returns it."""

    version: int
    """The protocol version (``TOON_VERSION``)."""
    type: int
    """The frame type, a :class:`MessageType` value (1 to 8)."""
    payload_length: int
    """Bytes of payload on the wire (after compression)."""
    timestamp: int
    """Milliseconds since the Unix epoch."""
    sequence_id: int
    """The sender's sequence number (0 to 2**32 - 1)."""

class Message(TypedDict):
    """A decoded frame, as :func:`decode` and :class:`FrameDecoder` return it."""

    header: Header
    """The frame's header."""
    payload: Any
    """The payload's JSON value."""

class RawMessage(TypedDict):
    """A decoded frame with its payload unparsed, as :func:`decode_raw` and
    ``FrameDecoder(raw=True)`` return it."""

    header: Header
    """The frame's header."""
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

def encode_header(msg_type: int, payload_length: int, sequence_id: int, timestamp: int | None = None) -> bytes:
    """The 18-byte header for a payload of ``payload_length`` bytes (on the wire, after
    compression): version, type, payload length, ``timestamp`` (ms; now when ``None``) and
    ``sequence_id``, little-endian. ``msg_type`` is an int 1 to 8 (another int raises
    :class:`KadoError` ``KADO_UNKNOWN_TYPE``); ``payload_length`` and ``sequence_id`` are
    ints 0 to 2**32 - 1, ``timestamp`` 0 to 2**64 - 1 (``KADO_INVALID_ARGUMENT`` outside)."""

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

def is_compressed(data: _Bytes) -> bool:
    """Whether ``data`` starts with the compression magic byte ``0x5A``
    (``MAGIC_COMPRESSED``); ``False`` for empty data. Never raises for bad bytes."""

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
    def feed(self, data: _Bytes) -> list[Message] | list[RawMessage]:
        """Feed bytes (a chunk of any size, copied); returns the frames completed by them,
        in order (an empty list while a frame is incomplete). Raises :class:`KadoError` with
        the frame's code (``KADO_FRAME_TOO_LARGE``, ``KADO_UNKNOWN_TYPE``, ...) and its
        ``offset`` in the stream."""
    def finish(self) -> None:
        """Raise if the stream ended inside a frame (or the decoder failed)."""
    @property
    def buffered(self) -> int:
        """Bytes buffered towards the next frame (fed but not yet a complete frame)."""
    @property
    def position(self) -> int:
        """Stream offset just after the last complete frame: the bytes consumed as frames."""
    @property
    def max_frame_size(self) -> int:
        """The largest frame (header and payload, and the largest decompressed payload)
        this decoder accepts, in bytes."""
