from collections.abc import Callable
from enum import Enum
from typing import IO, Any, Final, Literal

from polywire._polywire import ToonDecodeError as ToonDecodeError
from polywire._polywire import ToonEncodeError as ToonEncodeError

__all__ = [
    "MAX_DEPTH",
    "Delimiter",
    "ToonDecodeError",
    "ToonEncodeError",
    "decode",
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
    delimiter: str = ",",
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
    delimiter: str = ",",
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
