"""Pydantic models that read and write TOON, as ``toon_format.pydantic`` offers them.

Requires pydantic 2 (``pip install pydantic``, or the ``polywire[pydantic]`` extra);
importing this module without it raises :class:`ImportError`. ``import polywire`` and
``import polywire.toon`` never import pydantic.

:class:`ToonPydanticModel` is the class of ``toon_format.pydantic`` (toon-format 1.2.0):
the same methods, parameters, defaults and errors, on polywire's native codec
(:func:`polywire.toon.dumps` and :func:`polywire.toon.loads`)::

    class User(ToonPydanticModel):
        name: str
        age: int

    text = User(name="Ada", age=36).model_dump_toon()
    user = User.model_validate_toon(text)

The text is toon-format's for the same model, with two exceptions where
:func:`polywire.toon.dumps` writes what the ``@toon-format/toon`` reference writes
(matching toon-format there would take a Python pass over every dumped value):

- An object's keys that are array indices (``"0"``, ``"12"``: a ``dict[int, ...]``
  field, an alias such as ``"1"``) come first, in ascending order, as a JavaScript
  object orders them; toon-format keeps the dict's order.
- An integral float of magnitude ``2**53`` or more (and below ``1e21``) is written in
  JavaScript's shortest form (``float(2**60)`` as ``1152921504606847000``);
  toon-format writes its exact digits (``1152921504606846976``). Both read back as
  the same float.

When decoding, a number token beyond a double's range (``1e999``) is a string, as the
reference reads it (pydantic may then accept it: ``float("1e999")`` is ``inf``);
toon-format's decoder refuses it. And ``indent_size`` is at most 256 (more is a
``ValueError``), the native codec's limit.

As in toon-format, :meth:`~ToonPydanticModel.model_validate_toon` reads 2-space
indentation only (it has no ``indent_size``): text written with another ``indent_size``
that has an indented line (a nested object, a table, a list) reads back with
``Model.model_validate(polywire.toon.loads(text, indent_size=n))``.

Bad TOON raises :class:`polywire.toon.ToonDecodeError` (a ``ValueError``, like
toon-format's ``ToonDecodeError``) with ``code``, ``line``, ``column`` and ``source``;
text that is not ``str`` or ``bytes`` a ``TypeError``; data that does not fit the model
:class:`pydantic.ValidationError`. A bad ``indent_size`` or ``delimiter`` raises the
``ValueError`` or ``TypeError`` toon-format raises, with its message, as
:class:`polywire.ToonEncodeError` or :class:`polywire.PolywireTypeError` (code
``TOON_INVALID_ARGUMENT``).
"""

from __future__ import annotations

import sys
from typing import Any

try:
    import pydantic as _pydantic
    from pydantic import BaseModel
except ImportError as e:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "polywire.toon.pydantic requires pydantic 2: pip install pydantic "
        "(or pip install 'polywire[pydantic]')"
    ) from e

if int(str(getattr(_pydantic, "VERSION", "1")).split(".")[0]) < 2:  # pragma: no cover
    raise ImportError(
        f"polywire.toon.pydantic requires pydantic 2, not {_pydantic.VERSION}: "
        "pip install 'pydantic>=2'"
    )

from polywire._polywire import PolywireTypeError, ToonEncodeError
from polywire.toon import dumps, loads

if sys.version_info >= (3, 11):
    from typing import Self
else:  # a dependency of pydantic
    from typing_extensions import Self

__all__ = ["ToonPydanticModel"]

_DELIMITERS = (",", "\t", "|")


def _invalid(cls: type[ValueError], message: str) -> ValueError:
    """A polywire error (code ``TOON_INVALID_ARGUMENT``) with toon-format's message."""
    e = cls(message)
    e.code, e.offset, e.line, e.column, e.msg = "TOON_INVALID_ARGUMENT", None, None, None, message
    return e


def _dumps(data: Any, indent_size: int, delimiter: str) -> str:
    """:func:`polywire.toon.dumps` after toon-format's option checks (its error types and
    messages: ``None`` or ``0`` are errors there, the native codec takes them)."""
    if delimiter not in _DELIMITERS:
        raise _invalid(ToonEncodeError, f"delimiter must be ',', '\\t', or '|', got {delimiter!r}")
    if isinstance(indent_size, bool) or not isinstance(indent_size, int):
        raise _invalid(PolywireTypeError, f"indent_size must be an int, not {type(indent_size).__name__}")
    if indent_size < 1:
        raise _invalid(ToonEncodeError, f"indent_size must be at least 1, got {indent_size}")
    return dumps(data, indent_size=indent_size, delimiter=delimiter)


class ToonPydanticModel(BaseModel):
    """A :class:`pydantic.BaseModel` that reads and writes TOON.

    Adds TOON counterparts of pydantic's JSON helpers: :meth:`schema_to_toon`,
    :meth:`model_dump_toon` and :meth:`model_validate_toon`. (A plain
    ``BaseModel`` can also be passed to :func:`polywire.toon.dumps` directly.)
    """

    @classmethod
    def schema_to_toon(cls, *, indent_size: int = 2, delimiter: str = ",") -> str:
        """Return the model's JSON schema (``model_json_schema()``) encoded as TOON,
        for use in prompts.

        ``indent_size`` and ``delimiter`` are those of :func:`polywire.toon.dumps`.
        """
        return _dumps(cls.model_json_schema(), indent_size, delimiter)

    def model_dump_toon(self, *, indent_size: int = 2, delimiter: str = ",", **kwargs: Any) -> str:
        """Serialize the model to TOON, like ``BaseModel.model_dump_json``.

        The model is dumped with ``model_dump(mode="json", **kwargs)`` (so extra keyword
        arguments such as ``by_alias=True``, ``exclude_none=True``, ``include`` or
        ``exclude`` go to :meth:`pydantic.BaseModel.model_dump`), then encoded by
        :func:`polywire.toon.dumps` with ``indent_size`` spaces per level and
        ``delimiter`` (``","``, ``"\\t"`` or ``"|"``) in arrays and tables.
        """
        data = self.model_dump(mode="json", **kwargs)
        return _dumps(data, indent_size, delimiter)

    @classmethod
    def model_validate_toon(cls, text: str | bytes, *, strict: bool | None = None, **kwargs: Any) -> Self:
        """Decode and validate TOON, like ``BaseModel.model_validate_json``.

        ``text`` is the TOON document (bytes are read as UTF-8). ``strict`` goes to
        both :func:`polywire.toon.loads` and :meth:`pydantic.BaseModel.model_validate`:
        ``None`` (the default) decodes in strict mode and leaves validation to the
        model's configuration; ``False`` decodes leniently too. Other keyword
        arguments (``context``, ``by_alias``, ...) go to ``model_validate``.

        Raises :class:`polywire.toon.ToonDecodeError` (a ``ValueError``, with ``code``,
        ``line``, ``column`` and ``source``) when the text is not valid TOON, and
        :class:`pydantic.ValidationError` when the data does not match the model.
        """
        data = loads(text, strict=strict is not False)
        return cls.model_validate(data, strict=strict, **kwargs)


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
