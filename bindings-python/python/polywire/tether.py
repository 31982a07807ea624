"""Tether: Caffeine's 32-bit big-endian tagged object encoding (remote messaging between
Caffeine object memories, their Deno bridge and the smalltalk-mcp ``send`` tool;
upstream ccrraaiigg/caffeine ``deno/tether.js``).

Python values map to Tether as follows (and back):

=====================================  ==========================================
Python                                 Tether
=====================================  ==========================================
``int`` 0..0x1FFFFFFF                  SmallInteger ``0x40000000 + n``
``True`` / ``False`` / ``None``        ``0x20000001`` / ``0x20000002`` / ``0x20000003``
``str``                                String ``0x20000005`` (length word, bytes)
:class:`Symbol`                        Symbol ``0x20000004``
``bytes``/``bytearray``/``memoryview`` ByteArray ``0x2000001B`` (decodes to ``bytes``)
``list``/``tuple``                     Array ``0x20000008`` (decodes to ``list``)
``uuid.UUID``                          UUID ``0x20000011`` (length 16, 16 bytes)
:class:`Proxy`                         ``0x60000001 + exposure hash``
=====================================  ==========================================

Frames: :func:`encode_message_send` writes ``0x20000007``, the UUID, the receiver's
exposure hash as a bare word, ``0x20000021``, the selector as a Symbol and the arguments as
an Array; :func:`decode_answer` reads both answer forms (``0x2000001D`` + UUID + result on
the wire; ``0x2000001D`` + result from the MCP tool). The design document's answer-tag
bytes ``20 00 03 BD`` are wrong: ``0x2000001D`` is ``20 00 00 1D``.

Text is UTF-8 by default (the length word counts bytes). ``latin1=True`` selects the
one-byte-per-character form the Caffeine JS bridge writes: bytes are U+0000..U+00FF, and a
character above U+00FF is an error instead of being silently truncated as tether.js does.

Every error is a :class:`TetherError` (a ``ValueError``) with ``code`` and ``offset``:
``TETHER_INTEGER_RANGE`` ("no Tether encoding for -1: ..."), ``TETHER_EXPOSURE_HASH_RANGE``,
``TETHER_UNENCODABLE_CHARACTER``, ``TETHER_UNSUPPORTED_TYPE``, ``TETHER_TOO_DEEP`` (Arrays
nest at most ``DEFAULT_MAX_DEPTH`` = 256 levels), ``TETHER_TRUNCATED``,
``TETHER_LENGTH_PAST_END``, ``TETHER_INSTRUCTION``, ``TETHER_UNKNOWN_TAG``,
``TETHER_UNEXPECTED_TAG``, ``TETHER_UNSUPPORTED_WORD``, ``TETHER_BAD_UUID_LENGTH``,
``TETHER_INVALID_UTF8``, ``TETHER_TRAILING_BYTES``, ``TETHER_BAD_RECEIVER``,
``TETHER_BAD_SELECTOR``, ``TETHER_HEX_LENGTH``, ``TETHER_HEX_DIGIT``,
``TETHER_BAD_TOOL_RESULT``, ``TETHER_TOO_LONG``, ``TETHER_CYCLE`` (a list inside itself),
``TETHER_INVALID_OPTION`` (``max_depth`` not an int 0..2**64-1). A ``str`` with a lone
surrogate is ``TETHER_UNENCODABLE_CHARACTER``.

Nesting is bounded by ``max_depth`` and memory only: encoding, decoding and the value walks
use explicit stacks, never the native stack, so ``max_depth=1_000_000`` works. The walk
reads ``str``/``int``/``bytes`` subclasses at the C level (no ``__str__``, ``__index__``,
``__int__`` or ``__float__`` runs; ``float`` is not a Tether value), and copies each
``list`` when it reaches it (``PyList_GetSlice``: a subclass's ``__iter__``, ``__len__``
and ``__getitem__`` are not used, as in :func:`json.dumps`), so Python code that runs
during the walk cannot change what is walked.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional
import uuid as _uuid

from polywire._polywire import TetherError
from polywire._polywire import tether as _native

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

MAX_SMALL_INTEGER: int = _native.MAX_SMALL_INTEGER
MAX_EXPOSURE_HASH: int = _native.MAX_EXPOSURE_HASH
DEFAULT_MAX_DEPTH: int = _native.DEFAULT_MAX_DEPTH

Symbol = _native.Symbol
Proxy = _native.Proxy


class MessageSend(NamedTuple):
    """A decoded message send."""

    uuid: _uuid.UUID
    receiver: int
    """The receiver's exposure hash."""
    selector: str
    arguments: list


class Answer(NamedTuple):
    """A decoded answer: ``uuid`` is the send's UUID (wire form) or None (MCP form)."""

    uuid: Optional[_uuid.UUID]
    result: Any


encode = _native.encode
decode = _native.decode
encode_answer = _native.encode_answer
encode_message_send = _native.encode_message_send
encode_handshake = _native.encode_handshake
decode_handshake = _native.decode_handshake
to_hex = _native.to_hex
from_hex = _native.from_hex
tool_arguments = _native.tool_arguments
decode_result_hex = _native.decode_result_hex
read_tool_result = _native.read_tool_result


def decode_message_send(data, *, latin1: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> MessageSend:
    """Decode a message-send frame (a receiver in the proxy form tether.js writes is
    accepted too)."""
    return MessageSend(*_native.decode_message_send(data, latin1, max_depth))


def decode_answer(data, *, latin1: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> Answer:
    """Decode an answer frame, wire form (with UUID) or MCP form (without)."""
    return Answer(*_native.decode_answer(data, latin1, max_depth))


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
