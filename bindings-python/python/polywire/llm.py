"""Put data into a model's context in the fewest tokens, counted exactly.

- :func:`count_tokens` counts tokens with the real BPE tokenizers, offline:
  ``o200k_base`` (the default: GPT-4o, GPT-4.1, GPT-5 and the o-series) and
  ``cl100k_base`` (GPT-4, GPT-3.5), equal to ``len(tiktoken.get_encoding(name)
  .encode_ordinary(text))``, or any Hugging Face ``tokenizer.json`` given by its
  path (``len(tokenizer.encode(text, add_special_tokens=False))``). Special-token
  text such as ``<|endoftext|>`` counts as ordinary text: prompts are data.
- :func:`encode_for_llm` renders a value as TOON (with each delimiter) and as JSON,
  counts every rendering, and returns the one with the fewest tokens.
  ``strategy="structure"`` decides without tokenizing, by the rules of the design
  document polywire started from (uniform arrays of more than two objects as TOON,
  anything else as compact JSON).
- :func:`safe_encode` is TOON with a JSON fallback, as that document defines it.

The JSON renderings are ``JSON.stringify``'s (compact, and with an indent of 2 for
``"json-pretty"``), so Python and Node choose alike. The ranks ship inside the
package; the first count in an encoding loads them (about 0.2 s).
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from polywire import toon as _toon
from polywire._polywire import LlmError, PolywireTypeError, ToonEncodeError
from polywire._polywire import llm as _native

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "FORMATS",
    "LlmError",
    "LlmText",
    "count_tokens",
    "encode_for_llm",
    "safe_encode",
]

DEFAULT_ENCODING = "o200k_base"
"""The encoding counts use unless told otherwise."""

ENCODINGS = ("o200k_base", "cl100k_base")
"""The built-in encodings (any other name must be the path of a ``tokenizer.json``)."""

FORMATS = ("toon", "toon-tab", "toon-pipe", "json", "json-pretty")
"""The renderings :func:`encode_for_llm` can weigh. ``"toon"`` is TOON with the comma
delimiter; in ``formats`` it stands for every delimiter when ``delimiter`` is ``None``."""

_DELIMITER_FORMAT = {",": "toon", "\t": "toon-tab", "|": "toon-pipe"}
_FORMAT_DELIMITER = {v: k for k, v in _DELIMITER_FORMAT.items()}
_ARG = "LLM_INVALID_ARGUMENT"


@dataclass(frozen=True)
class LlmText:
    """A value's rendering for a model's context."""

    text: str
    """The rendering."""
    format: str
    """Which: ``"toon"``, ``"toon-tab"``, ``"toon-pipe"``, ``"json"`` or ``"json-pretty"``."""
    tokens: int | None
    """The tokens of :attr:`text` (``None`` with ``strategy="structure"``, which does not count)."""
    candidates: dict[str, int] = field(default_factory=dict)
    """The tokens of every rendering weighed, in the order weighed."""
    encoding: str = DEFAULT_ENCODING
    """The encoding counted with (the path, for a ``tokenizer.json``)."""
    rule: str | None = None
    """``strategy="structure"``: the rule that decided (``"uniform-array"``, ``"nested"`` or
    ``"mixed"``); ``None`` when tokens decided."""

    def __str__(self) -> str:
        return self.text


def _coded(cls: Any, message: str) -> Any:
    """An exception of ``cls`` with the attributes every polywire error has."""
    e = cls(message)
    e.code = _ARG
    e.offset = e.line = e.column = None
    e.msg = message
    return e


def _arg_error(message: str) -> LlmError:
    return _coded(LlmError, message)


def _type_error(message: str) -> PolywireTypeError:
    return _coded(PolywireTypeError, message)


def _describe(value: Any) -> str:
    """A value for a message: a short str's repr, else its type (never a method of it)."""
    if type(value) is str and len(value) <= 40:
        return repr(value)
    return f"a value of type {type(value).__name__}"


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """The number of tokens of ``text`` in ``encoding``: ``"o200k_base"``, ``"cl100k_base"``
    or the path of a Hugging Face ``tokenizer.json`` (loaded once and kept while the file
    is unchanged). A lone surrogate counts as U+FFFD, as tiktoken counts it."""
    return _native.count_tokens(text, encoding)


def _candidates(formats: Any, delimiter: Any) -> list[str]:
    if isinstance(formats, str) or not isinstance(formats, (list, tuple)):
        raise _type_error(f"formats must be a tuple or list of format names, not {type(formats).__name__}")
    if delimiter is not None and not (isinstance(delimiter, str) and delimiter in _DELIMITER_FORMAT):
        raise _arg_error(f"delimiter must be ',', '\\t', '|' or None, got {_describe(delimiter)}")
    names: list[str] = []
    for f in formats:
        if not isinstance(f, str) or f not in FORMATS:
            raise _arg_error(f"formats holds {_describe(f)}; expected names among {', '.join(FORMATS)}")
        if f == "toon":
            expanded = list(_DELIMITER_FORMAT.values()) if delimiter is None else [_DELIMITER_FORMAT[str(delimiter)]]
        else:
            expanded = [f]
        names.extend(n for n in expanded if n not in names)
    if not names:
        raise _arg_error("formats must name at least one format")
    return names


def _json_value(value: Any, default: Callable[[Any], Any] | None, sort_keys: bool) -> Any:
    """The JSON value the TOON encoder sees: ``value`` itself when it is plain JSON, else
    what its TOON text decodes to (dates as ISO text, sets as lists, ``default`` applied)."""
    if default is None and not sort_keys:
        return value
    return _toon.loads(_toon.dumps(value, default=default, sort_keys=sort_keys))


def _json_text(value: Any, indent: int, default: Callable[[Any], Any] | None) -> str:
    try:
        return _native.json_text(value, indent)
    except TypeError:
        # Not plain JSON (a date, a dataclass, a set...): the value TOON writes.
        return _native.json_text(_toon.loads(_toon.dumps(value, default=default)), indent)


def _render(name: str, value: Any, indent: int, default: Any, sort_keys: bool, plain: Any) -> str:
    if name in _FORMAT_DELIMITER:
        return _toon.dumps(value, indent_size=indent, delimiter=_FORMAT_DELIMITER[name], default=default, sort_keys=sort_keys)
    return _json_text(plain, 2 if name == "json-pretty" else 0, default)


def _structure_rule(value: Any) -> str:
    """The design document's ``serialize_for_llm_context`` rules, in order."""
    if isinstance(value, list) and len(value) > 2 and all(isinstance(x, dict) for x in value):
        first = set(value[0].keys())
        if all(set(x.keys()) == first for x in value):
            return "uniform-array"
    children: Iterable[Any] = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    if any(isinstance(c, (dict, list, tuple)) for c in children):
        return "nested"
    return "mixed"


def encode_for_llm(
    value: Any,
    *,
    encoding: str = DEFAULT_ENCODING,
    formats: tuple[str, ...] | list[str] = ("toon", "json"),
    delimiter: str | None = None,
    indent: int = 2,
    strategy: str = "tokens",
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
) -> LlmText:
    """Render ``value`` in each of ``formats`` and return the rendering with the fewest
    tokens in ``encoding`` (ties go to the first listed).

    ``formats``: names from :data:`FORMATS`; ``"toon"`` means TOON with each delimiter
    (comma, tab, pipe) when ``delimiter`` is ``None``, else with ``delimiter`` only.
    ``"json"`` is ``JSON.stringify(value)``, ``"json-pretty"`` ``JSON.stringify(value, null,
    2)``. ``indent``, ``default`` and ``sort_keys`` are :func:`polywire.toon.dumps`'s (the
    JSON renderings write the same value, keys sorted too).

    ``strategy="structure"`` renders once, without tokenizing, by the design document's
    rules: a list of more than two dicts with the same keys as TOON (``rule="uniform-array"``),
    anything else as compact JSON (``rule="nested"`` when it holds containers, else
    ``"mixed"``). ``tokens`` is then ``None``.
    """
    if type(strategy) is str and strategy == "tokens" and default is None and sort_keys is False:
        # The common case in one native call, which renders and counts every
        # candidate and makes a str of the chosen text only; None when an
        # argument is not what it takes (a subclass, an unknown name) or the value
        # is not plain JSON (a date, a set): the way below then checks, renders
        # and reports as dumps and json_text do.
        fast = _native.encode_fast(value, formats, delimiter, indent, encoding, LlmText)
        if fast is not None:
            return fast
    if not (isinstance(strategy, str) and strategy in ("tokens", "structure")):
        raise _arg_error(f"strategy must be 'tokens' or 'structure', got {_describe(strategy)}")
    names = _candidates(formats, delimiter)
    if not isinstance(sort_keys, bool):
        raise _type_error(f"sort_keys must be a bool, not {type(sort_keys).__name__}")
    if strategy == "structure":
        if not isinstance(encoding, str):
            raise _type_error(f"encoding must be a str, not {type(encoding).__name__}")
        rule = _structure_rule(value)
        name = _DELIMITER_FORMAT[str(delimiter or ",")] if rule == "uniform-array" else "json"
        plain = value if name != "json" else _json_value(value, default, sort_keys)
        text = _render(name, value, indent, default, sort_keys, plain)
        return LlmText(text=text, format=name, tokens=None, candidates={}, encoding=encoding, rule=rule)
    encoding_name = _native.check_encoding(encoding)
    reported = encoding if encoding_name == "tokenizer.json" else encoding_name
    plain = _json_value(value, default, sort_keys) if any(n.startswith("json") for n in names) else value
    # Each rendering is counted from when it is made (on a second thread
    # too), while the next is rendered.
    session = _native.CountSession(encoding)
    texts = []
    for n in names:
        texts.append(_render(n, value, indent, default, sort_keys, plain))
        session.add(texts[-1])
    counts = session.finish()
    best = min(range(len(names)), key=lambda i: (counts[i], i))
    return LlmText(
        text=texts[best],
        format=names[best],
        tokens=counts[best],
        candidates=dict(zip(names, counts)),
        encoding=reported,
    )


def safe_encode(data: Any, fallback_to_json: bool = True) -> str:
    """TOON text of ``data``; if TOON cannot encode it and ``fallback_to_json``,
    ``json.dumps(data)`` instead (the design document's ``safe_encode``: "Encode with
    fallback to JSON on error"). TOON's failures are :class:`~polywire.ToonEncodeError`
    (too deep, a circular value) and :class:`~polywire.PolywireTypeError` (a type it has no
    form for); with the fallback off, or when ``json.dumps`` fails too, TOON's error is
    raised."""
    if not isinstance(fallback_to_json, bool):
        raise _type_error(f"fallback_to_json must be a bool, not {type(fallback_to_json).__name__}")
    try:
        return _toon.dumps(data)
    except (ToonEncodeError, TypeError) as toon_error:
        if not fallback_to_json:
            raise
        try:
            return _json.dumps(data)
        except (TypeError, ValueError, RecursionError):
            # JSON cannot either: TOON's error, which says what and where.
            raise toon_error from None


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
