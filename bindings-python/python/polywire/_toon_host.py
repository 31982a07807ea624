"""Cold paths of :func:`polywire.toon.dumps`: turning a Python value that is not
a JSON-model object into one.

The native encoder walks ``dict`` (with ``str`` keys), ``list``, ``tuple``,
``str``, ``int``, ``float``, ``bool`` and ``None`` (and their subclasses)
directly. For anything else it calls :func:`convert` once per object, before
encoding, and encodes what comes back. The conversions are those of the
``toon_format`` package, so the two accept the same values.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any, Callable
from uuid import UUID

# What `convert` returns: a tag and a payload.
VALUE = 0  # payload: a replacement, itself normalised again
NUMBER = 1  # payload: text written verbatim as a number (a Decimal)
UNSUPPORTED = 2  # payload: the type name; the caller raises TypeError with the path
BAD_KEY = 3  # payload: the key's type name; TypeError with the path
DUPLICATE_KEY = 4  # payload: the key after conversion; ValueError with the path
MAPPING = 5  # payload: a dict with str keys (sorted when asked), used as is

_format_number: Callable[[float], str] | None = None


def convert(value: Any, default: Callable[[Any], Any] | None, sort_keys: bool) -> tuple[int, Any]:
    """One conversion step for ``value`` (see the module docstring)."""
    if isinstance(value, (dict, Mapping)):
        return _mapping(value, sort_keys)
    if isinstance(value, bool):
        return VALUE, bool(value)
    if isinstance(value, int):
        return VALUE, int(value)
    if isinstance(value, float):
        return VALUE, float(value)
    if isinstance(value, str):
        return VALUE, str.__str__(value)
    if isinstance(value, Decimal):
        return (NUMBER, decimal_text(value)) if value.is_finite() else (VALUE, None)
    if isinstance(value, (list, tuple)):
        return VALUE, list(value)
    if isinstance(value, (set, frozenset)):
        try:
            return VALUE, sorted(value)
        except TypeError:
            return VALUE, sorted(value, key=repr)
    if isinstance(value, (datetime, date, time)):
        return VALUE, value.isoformat()
    if isinstance(value, (UUID, PurePath)):
        return VALUE, str(value)
    if isinstance(value, Enum):
        return VALUE, value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return VALUE, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    attrs_fields = getattr(type(value), "__attrs_attrs__", None)
    if attrs_fields is not None:
        return VALUE, {f.name: getattr(value, f.name) for f in attrs_fields}
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return VALUE, value.model_dump(mode="json")
    if default is not None:
        return VALUE, default(value)
    return UNSUPPORTED, type(value).__name__


def _key(key: Any) -> str | None:
    """A mapping key as ``json.dumps`` converts it (numbers in the JavaScript
    form the encoder writes numbers in); ``None`` when the type is not allowed."""
    if isinstance(key, str):
        return str.__str__(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return int.__repr__(int(key))
    if isinstance(key, float):
        assert _format_number is not None
        return _format_number(float(key))
    return None


def _mapping(value: Mapping[Any, Any], sort_keys: bool) -> tuple[int, Any]:
    pairs = []
    for k, v in value.items():
        key = _key(k)
        if key is None:
            return BAD_KEY, type(k).__name__
        pairs.append((key, v))
    if sort_keys:
        pairs.sort(key=lambda pair: pair[0])
    result: dict[str, Any] = {}
    for key, v in pairs:
        if key in result:
            return DUPLICATE_KEY, key
        result[key] = v
    return MAPPING, result


def decimal_text(value: Decimal) -> str:
    """A finite Decimal in TOON's canonical number form: plain digits for
    magnitudes in [1e-6, 1e21), else ``d.ddde+N`` / ``d.ddde-N``; no trailing
    zeros, ``0`` for any zero. Every digit is kept (no rounding to a double)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).lstrip("0")
    if not text:
        return "0"
    # value = (-1)**sign * int(text) * 10**exponent; drop trailing zeros.
    stripped = text.rstrip("0")
    exponent += len(text) - len(stripped)
    text = stripped
    # Scientific exponent of the leading digit.
    point = len(text) + exponent  # digits before the decimal point
    sci = point - 1
    minus = "-" if sign else ""
    if -7 < sci < 21:
        if exponent >= 0:
            return minus + text + "0" * exponent
        if point > 0:
            return minus + text[:point] + "." + text[point:]
        return minus + "0." + "0" * (-point) + text
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{minus}{mantissa}e{'+' if sci >= 0 else '-'}{abs(sci)}"


def surrogate_message(value: str) -> str:
    for i, ch in enumerate(value):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return f"String contains an unpaired surrogate U+{ord(ch):04X} at index {i}"
    return "String contains an unpaired surrogate"
