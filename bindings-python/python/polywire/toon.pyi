from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from typing import IO, Any, Final, Literal, TypedDict, final

from polywire._polywire import ToonDecodeError as ToonDecodeError
from polywire._polywire import ToonEncodeError as ToonEncodeError

__all__ = [
    "MAX_DEPTH",
    "Delimiter",
    "StreamDecoder",
    "ToonDecodeError",
    "ToonEncodeError",
    "decode",
    "decode_stream",
    "dump",
    "dumps",
    "encode",
    "load",
    "loads",
]

MAX_DEPTH: Final[int]
"""Deepest nesting encoded or decoded (1024 levels): deeper values raise
:class:`ToonEncodeError`, deeper text :class:`ToonDecodeError` (both ``TOON_TOO_DEEP``)."""

class Delimiter(str, Enum):
    """The delimiters TOON supports (``dumps(delimiter=...)``). Members compare equal to
    their character."""

    COMMA = ","
    """``","``, the default."""
    TAB = "\t"
    """A tab character."""
    PIPE = "|"
    """``"|"``."""

def dumps(
    obj: Any,
    *,
    indent_size: int = 2,
    delimiter: Literal[",", "\t", "|"] | Delimiter = ",",
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
    indent: int | None = None,
    key_folding: Literal["off", "safe"] | None = "off",
    flatten_depth: int | float | None = None,
) -> str:
    """Serialize ``obj`` to a TOON document (no trailing newline).

    ``indent`` is the older name of ``indent_size``. ``delimiter``: ``","``, ``"\\t"`` or
    ``"|"`` (or a :class:`Delimiter`). ``default``: called with a value that has no TOON
    form; returns a replacement or raises ``TypeError``. ``sort_keys``: sort every object's
    keys. ``key_folding="safe"`` folds chains of single-key objects into dotted keys, at
    most ``flatten_depth`` segments (default unbounded).

    Raises :class:`polywire.PolywireTypeError` (a ``TypeError``) for a value of an
    unsupported type (``TOON_UNSUPPORTED_TYPE``, with the value's path), a bad mapping key
    (``TOON_UNSUPPORTED_KEY``) or an option of the wrong type (``TOON_INVALID_ARGUMENT``); and
    :class:`ToonEncodeError` (a ``ValueError``) for a bad option value
    (``TOON_INVALID_ARGUMENT``), an unpaired surrogate (``TOON_UNPAIRED_SURROGATE``), keys
    that collide once converted (``TOON_DUPLICATE_KEY``) and values nested deeper than
    ``MAX_DEPTH`` (``TOON_TOO_DEEP``).
    """

def dump(
    obj: Any,
    fp: IO[str],
    *,
    indent_size: int = 2,
    delimiter: Literal[",", "\t", "|"] | Delimiter = ",",
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
    indent: int | None = None,
    key_folding: Literal["off", "safe"] | None = "off",
    flatten_depth: int | float | None = None,
) -> None: ...

def loads(
    s: str | bytes | bytearray | memoryview,
    *,
    strict: bool = True,
    indent_size: int = 2,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    indent: int | None = None,
    expand_paths: Literal["off", "safe"] | None = "off",
) -> Any:
    """Deserialize a TOON document (bytes are read as UTF-8).

    Raises ``ToonDecodeError`` (a ``ValueError``) with ``code``, ``line``,
    ``column``, ``source`` and ``msg`` for text that is not valid TOON.
    """

def load(
    fp: IO[str] | IO[bytes],
    *,
    strict: bool = True,
    indent_size: int = 2,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    indent: int | None = None,
    expand_paths: Literal["off", "safe"] | None = "off",
) -> Any: ...

encode = dumps
decode = loads

class StartObjectEvent(TypedDict):
    type: Literal["startObject"]

class EndObjectEvent(TypedDict):
    type: Literal["endObject"]

class StartArrayEvent(TypedDict):
    type: Literal["startArray"]
    length: int | float
    """The length the header declares (``0`` for ``[]``; ``inf`` beyond the doubles, as in
    the reference)."""

class EndArrayEvent(TypedDict):
    type: Literal["endArray"]

class KeyEvent(TypedDict):
    type: Literal["key"]
    key: str

class PrimitiveEvent(TypedDict):
    type: Literal["primitive"]
    value: str | int | float | bool | None
    """As :func:`loads` reads it: an exact ``int`` for an integer, else a ``float``."""

Event = StartObjectEvent | EndObjectEvent | StartArrayEvent | EndArrayEvent | KeyEvent | PrimitiveEvent
"""One event of a decoded stream: the reference's event objects, as dicts."""

def decode_stream(lines: Iterable[str], *, strict: bool = True, indent_size: int = 2) -> Iterator[Event]:
    """Decode a TOON document given as lines (each element one line, without its
    newline; a newline inside one is part of it), as the reference's ``decodeStream``
    does: an iterator of its events, each as soon as the lines read so far decide it. A
    line is read only once the events of those before it have been taken, and each line
    once: memory is bounded by the open structure and the longest line.

    Raises :class:`ToonDecodeError` where the document goes wrong (after the events before
    the fault, with ``line``, ``column`` and ``source``), and
    :class:`polywire.PolywireTypeError` (``TOON_INVALID_ARGUMENT``) for a line that is not a
    ``str``.
    """

@final
class StreamDecoder:
    """Resumable TOON decoder: feed the text as it comes, in pieces split anywhere
    (``str``, or UTF-8 bytes split anywhere, even inside a character; a line ends at
    a newline), and get, from each call, the events the lines completed so far decide: the
    events, their order and the error of :func:`decode_stream` on the same text. The
    decoder keeps its state between calls and reads each line once; it holds the line
    being read, the open structure and (strict mode) the keys of the open objects.

    A fault raises :class:`ToonDecodeError` at once; the events found before it in that call
    are its ``events`` attribute (a list). After an error the decoder stays failed and
    raises it again.
    """

    def __new__(cls, *, strict: bool = True, indent_size: int = 2) -> StreamDecoder:
        """``strict`` and ``indent_size`` as :func:`loads` takes them."""
    def feed(self, data: str | bytes | bytearray | memoryview) -> list[Event]:
        """Text of the document: returns the events it completes. Raises
        :class:`ToonDecodeError` for a fault (``TOON_INVALID_UTF8`` with ``offset`` among
        the bytes fed for ill-formed UTF-8)."""
    def feed_line(self, line: str) -> list[Event]:
        """One whole line (a newline inside it is part of it, as the reference takes the
        lines of ``decodeStream``): returns the events it completes."""
    def finish(self) -> list[Event]:
        """The end of the document: returns its last events, or raises
        :class:`ToonDecodeError` if it is not complete and valid."""
    @property
    def scanned(self) -> int:
        """Bytes of text gone through so far (searched for line ends, read, moved when
        letting go of what was read): linear in the input, whatever its pieces."""
    @property
    def buffered(self) -> int:
        """Bytes of text held: the line being read, and at most about as much again
        already read."""

