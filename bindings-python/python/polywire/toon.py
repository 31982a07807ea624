"""TOON text (Token-Oriented Object Notation), spec v4 as ``@toon-format/toon`` 4.4.0 writes it.

A drop-in for the ``toon_format`` package (``json``-style ``dumps``/``loads``,
``dump``/``load``, the ``encode``/``decode`` aliases, :class:`Delimiter`,
:class:`ToonDecodeError`), with the text of the reference implementation:

- :func:`dumps` writes byte for byte what the reference ``encode`` writes for the
  same JSON value, so Python and Node give the same text: numbers in JavaScript's
  form (``1.0`` -> ``1``, ``1e21`` -> ``1e+21``), NaN and infinities as ``null``,
  keys that are array indices (``"0"``, ``"12"``) first as a JavaScript object
  orders them. Python ints of any size are written exactly. Besides the JSON types
  it accepts what ``toon_format`` accepts: tuples, sets (sorted), ``Decimal`` (every
  digit kept), dates and times (ISO text), ``UUID``, paths, enums, dataclasses,
  attrs classes, pydantic models, any ``Mapping``; other values go to ``default``
  or raise :class:`TypeError` naming the type and the value's path
  (``$.users[0].created``). Nesting is limited to ``MAX_DEPTH`` (1024) levels
  (a circular value fails there with :class:`~polywire.ToonEncodeError`, a
  ``ValueError``).
- :func:`loads` decodes exactly what the reference accepts, in strict (default)
  and non-strict mode. Integers are exact Python ints of any size; other numbers
  are floats (``parse_float=decimal.Decimal`` keeps every digit). A token whose
  value would overflow a double (``1e999``) is a string, as in the reference.
  Errors raise :class:`ToonDecodeError` (a ``ValueError``) with ``code``, ``line``,
  ``column`` (where it applies), ``source`` (the offending line) and ``msg``.
  Nesting is limited to 1024 levels; declared lengths never allocate ahead of
  the data.

- :func:`decode_stream` (the reference's ``decodeStream``) and :class:`StreamDecoder`
  decode a stream as it comes, to the reference's events (``{"type": "startObject"}``,
  ``{"type": "key", "key": ...}``, ``{"type": "startArray", "length": ...}``,
  ``{"type": "primitive", "value": ...}``, ``endArray``, ``endObject``): every event
  the lines so far decide comes at once, each line is read once, and memory is bounded
  by the open structure and the longest line, not by the input.

Beyond the reference (spec v3 features, off by default): ``key_folding="safe"``
with ``flatten_depth`` when encoding (``a.b.c: 1``), ``expand_paths="safe"`` when
decoding.
"""

from __future__ import annotations

import os as _os
from enum import Enum
from typing import IO, Any, Iterable, Iterator

from polywire._polywire import PolywireTypeError, ToonDecodeError, ToonEncodeError
from polywire._polywire import toon as _native

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

MAX_DEPTH: int = _native.MAX_DEPTH


class Delimiter(str, Enum):
    """The delimiters TOON supports. Members compare equal to their character."""

    COMMA = ","
    TAB = "\t"
    PIPE = "|"

    def __str__(self) -> str:
        return self.value


dumps = _native.dumps
loads = _native.loads

encode = dumps
"""Alias of :func:`dumps`, the name used by the other TOON implementations."""

decode = loads
"""Alias of :func:`loads`, the name used by the other TOON implementations."""


def _file_arg(fp: Any, method: str, what: str) -> Any:
    """``fp.<method>``, or ``PolywireTypeError`` (``TOON_INVALID_ARGUMENT``)."""
    f = getattr(fp, method, None)
    if not callable(f):
        raise _argument_error(f"fp must be {what} (an object with a {method}() method), not {type(fp).__name__}")
    return f


def dump(obj: Any, fp: IO[str], **kwargs: Any) -> None:
    """Serialize ``obj`` as a TOON document to the text file ``fp``.

    Accepts the same keyword options as :func:`dumps`.
    """
    write = _file_arg(fp, "write", "a text file")
    write(dumps(obj, **kwargs))


def load(fp: IO[str] | IO[bytes], **kwargs: Any) -> Any:
    """Deserialize a TOON document read from ``fp`` (text or binary mode).

    Accepts the same keyword options as :func:`loads`.
    """
    return loads(_file_arg(fp, "read", "a file")(), **kwargs)


# Streams. Names: `decode_stream` is the reference's `decodeStream` / `decodeStreamSync`
# (lines in, events out) in the snake_case of `dumps` / `loads` (toon_format has no stream
# API); `StreamDecoder` with `feed` / `finish` is shaped like `kado.FrameDecoder`, for
# text that comes in pieces split anywhere (a file, a socket, a model's output).
StreamDecoder = _native.StreamDecoder


def decode_stream(lines: Iterable[str], *, strict: bool = True, indent_size: int = 2) -> Iterator[dict[str, Any]]:
    """Decode a TOON document given as lines (each element one line, without its
    newline), as the reference's ``decodeStream`` does: an iterator of its events, each
    as soon as the lines read so far decide it. A line is read only once the events of
    those before it have been taken. Raises :class:`ToonDecodeError` where the document
    goes wrong, after the events before the fault; :class:`polywire.PolywireTypeError`
    (``TOON_INVALID_ARGUMENT``) for a line that is not a ``str``.
    """
    decoder = StreamDecoder(strict=strict, indent_size=indent_size)
    try:
        source = iter(lines)
    except TypeError:
        raise _argument_error(f"lines must be an iterable of str (the TOON lines), not {type(lines).__name__}") from None
    return _events(decoder, source)


def _argument_error(message: str) -> PolywireTypeError:
    e = PolywireTypeError(message)
    e.code, e.offset, e.line, e.column, e.msg = "TOON_INVALID_ARGUMENT", None, None, None, message
    return e


def _events(decoder: Any, lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    try:
        for n, line in enumerate(lines, 1):
            if not isinstance(line, str):
                raise _argument_error(f"lines must hold str (each one line of TOON text), not {type(line).__name__} (line {n})")
            yield from decoder.feed_line(line)
        yield from decoder.finish()
    except ToonDecodeError as e:
        # The events before the fault come first, as the reference yields them.
        events, e.events = getattr(e, "events", []), []
        yield from events
        raise


# polywire.toon is a module, and a package for one submodule: `polywire.toon.pydantic`
# (toon/pydantic.py beside this file, needing pydantic) imports as `import
# polywire.toon.pydantic` and loads on first use as the attribute `pydantic`.
__path__ = [_os.path.join(_os.path.dirname(__file__), "toon")]


def __getattr__(name: str) -> Any:
    if name == "pydantic":
        import importlib

        try:
            return importlib.import_module("polywire.toon.pydantic")
        except ImportError as e:
            raise AttributeError(f"module 'polywire.toon' has no attribute 'pydantic': {e}") from e
    raise AttributeError(f"module 'polywire.toon' has no attribute {name!r}")


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
