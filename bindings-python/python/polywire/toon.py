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

Beyond the reference (spec v3 features, off by default): ``key_folding="safe"``
with ``flatten_depth`` when encoding (``a.b.c: 1``), ``expand_paths="safe"`` when
decoding.
"""

from __future__ import annotations

import os as _os
from enum import Enum
from typing import IO, Any

from polywire._polywire import PolywireTypeError, ToonDecodeError, ToonEncodeError
from polywire._polywire import toon as _native

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
        message = f"fp must be {what} (an object with a {method}() method), not {type(fp).__name__}"
        e = PolywireTypeError(message)
        e.code, e.offset, e.line, e.column, e.msg = "TOON_INVALID_ARGUMENT", None, None, None, message
        raise e
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
