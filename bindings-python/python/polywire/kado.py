"""Kado frames: the binary "TOON protocol" (Task Orchestration Over Node).

A drop-in for the Kado ai-engine's ``src/toon`` package (``protocol.py`` and
``compression.py``), byte-identical to the orchestrator's TypeScript encoder:

- a frame is an 18-byte little-endian header (``HEADER_FORMAT = "<BBIQI"``: version,
  type, payload length on the wire, timestamp in ms, sequence id) and a UTF-8 JSON
  payload;
- the JSON is written exactly as ``JSON.stringify`` writes it: no spaces, non-ASCII
  unescaped, ``1.0`` written ``1``, NaN and infinities written ``null``, keys that are
  array indices (``"0"``, ``"12"``) first as JavaScript orders them. Python ints of any
  size are written exactly. So the same value gives the same bytes here and in Node;
- unlike the upstream Python, :func:`encode` compresses payloads longer than
  ``COMPRESSION_THRESHOLD`` bytes with the RLE scheme whenever that makes them smaller
  (as the TypeScript side does), and :func:`decode` always decompresses;
- decoding validates everything and raises :class:`KadoError` (a ``ValueError``) with
  ``code`` and ``offset``: short header, unsupported version, unknown type, truncated
  payload, malformed RLE, invalid UTF-8 and invalid JSON. Bytes after the frame are
  ignored. Frames from the upstream Python encoder (``json.dumps`` spacing, ``\\u``
  escapes, ``NaN``) are accepted.

Error codes: ``KADO_TRUNCATED_HEADER``, ``KADO_UNSUPPORTED_VERSION``,
``KADO_UNKNOWN_TYPE``, ``KADO_TRUNCATED_PAYLOAD``, ``KADO_INVALID_RLE``,
``KADO_INVALID_UTF8``, ``KADO_INVALID_JSON``, ``KADO_FRAME_TOO_LARGE``,
``KADO_PAYLOAD_TOO_LARGE``, ``KADO_INVALID_ARGUMENT``, ``KADO_INTEGER_TOO_LARGE`` (an int of
more digits than CPython converts, 4,300 by default, to decode or encode), ``KADO_TOO_DEEP``
(nesting or a cycle), ``KADO_VALUE_CHANGED`` (a dict resized while it is encoded).

The one-shot decoders (:func:`decode`, :func:`decode_raw`, :func:`decompress`) take
``max_size`` (default 16 MiB): a compressed payload expanding past it fails with
``KADO_FRAME_TOO_LARGE`` before it is allocated (a decompression bomb cannot expand 85x
without bound). Wrong argument types raise :class:`polywire.PolywireTypeError` (code
``KADO_INVALID_ARGUMENT``, or ``KADO_UNSUPPORTED_TYPE`` for a value with no JSON form).
"""

from __future__ import annotations

from enum import IntEnum

from polywire._polywire import KadoError
from polywire._polywire import kado as _native

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


class MessageType(IntEnum):
    """The frame types of the Kado protocol (the header's second byte)."""

    INSTRUCTION = 0x01
    TOOL_CALL = 0x02
    TOOL_RESULT = 0x03
    STATUS = 0x04
    ERROR = 0x05
    HEARTBEAT = 0x06
    CONTEXT_REQUEST = 0x07
    CONTEXT_RESPONSE = 0x08


TOON_VERSION = 1
HEADER_SIZE = 18
HEADER_FORMAT = "<BBIQI"
COMPRESSION_THRESHOLD = 1024
MAGIC_COMPRESSED = 0x5A
DEFAULT_MAX_FRAME_SIZE = 16 * 1024 * 1024

encode = _native.encode
encode_payload = _native.encode_payload
decode = _native.decode
decode_raw = _native.decode_raw
encode_header = _native.encode_header
decode_header = _native.decode_header
validate = _native.validate
compress = _native.compress
decompress = _native.decompress
is_compressed = _native.is_compressed
FrameDecoder = _native.FrameDecoder


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
