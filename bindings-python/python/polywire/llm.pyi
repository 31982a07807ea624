"""Put data into a model's context in the fewest tokens, counted exactly."""

from dataclasses import dataclass
from typing import Any, Callable, Final, Literal

from polywire._polywire import LlmError as LlmError

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

DEFAULT_ENCODING: Final = "o200k_base"
"""The encoding counts use unless told otherwise."""
ENCODINGS: Final[tuple[str, ...]]
"""The built-in encodings: ``("o200k_base", "cl100k_base")``; any other name must be the path
of a Hugging Face ``tokenizer.json``."""
FORMATS: Final[tuple[str, ...]]
"""The renderings :func:`encode_for_llm` can weigh: ``"toon"``, ``"toon-tab"``, ``"toon-pipe"``,
``"json"``, ``"json-pretty"``."""

@dataclass(frozen=True)
class LlmText:
    """A value's rendering for a model's context."""

    text: str
    """The rendering."""
    format: str
    """Which: ``"toon"``, ``"toon-tab"``, ``"toon-pipe"``, ``"json"`` or ``"json-pretty"``."""
    tokens: int | None
    """The tokens of ``text`` (``None`` with ``strategy="structure"``)."""
    candidates: dict[str, int] = ...
    """The tokens of every rendering weighed, in the order weighed."""
    encoding: str = ...
    """The encoding counted with (the path, for a ``tokenizer.json``)."""
    rule: str | None = ...
    """``strategy="structure"``: the rule that decided (``"uniform-array"``, ``"nested"``,
    ``"mixed"``); ``None`` when tokens decided."""

def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """The number of tokens of ``text``: ``o200k_base``, ``cl100k_base`` (as tiktoken's
    ``encode_ordinary``) or the path of a ``tokenizer.json``. Raises :class:`LlmError` for an
    unknown encoding or a bad tokenizer file."""

def encode_for_llm(
    value: Any,
    *,
    encoding: str = "o200k_base",
    formats: tuple[str, ...] | list[str] = ("toon", "json"),
    delimiter: Literal[",", "\t", "|"] | None = None,
    indent: int = 2,
    strategy: Literal["tokens", "structure"] = "tokens",
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
) -> LlmText:
    """Render ``value`` in each of ``formats`` (``"toon"``: every delimiter when ``delimiter`` is
    ``None``) and return the rendering with the fewest tokens (ties: the first listed).
    ``strategy="structure"`` decides by the design document's rules without counting."""

def safe_encode(data: Any, fallback_to_json: bool = True) -> str:
    """TOON text of ``data``, or ``json.dumps(data)`` when TOON cannot encode it and
    ``fallback_to_json`` is true."""
