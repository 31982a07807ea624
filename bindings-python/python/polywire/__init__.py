"""polywire: one fast, byte-exact Rust implementation of the wire formats of agent systems.

Submodules, one per format:

- ``polywire.kado``: Kado frames (the "TOON protocol" binary framing between the Kado
  orchestrator and its ai-engine).
- ``polywire.toon``: TOON text (Token-Oriented Object Notation), shaped like
  ``toon_format``, byte-exact with the ``@toon-format/toon`` reference.
- ``polywire.tether``: Tether, Caffeine's 32-bit tagged object encoding.
- ``polywire.axon``: AXON v2 agent-to-agent JSON envelopes.
- ``polywire.kameo``: Kameo remote actors (the Rust ``kameo`` crate's CBOR messaging,
  MessagePack payloads, registry records and ids).
- ``polywire.llm``: exact token counts (tiktoken's ``o200k_base``/``cl100k_base``, Hugging
  Face ``tokenizer.json``) and the rendering of a value with the fewest tokens.

Every error raised for bad input is a :class:`PolywireError` (a ``ValueError``) with
``code`` (a stable string), ``offset`` (byte offset or ``None``), ``line`` and ``column``.
An argument or value of the wrong type is a :class:`PolywireTypeError` (a ``TypeError``,
and a :class:`PolywireError` too, so ``except PolywireError`` catches every error polywire
raises) with the same attributes, its message naming the parameter. A container changed by Python code while it is encoded is
the format's error with code ``<FORMAT>_VALUE_CHANGED`` (AXON: ``invalid_envelope``);
no ``OverflowError``, ``UnicodeError`` or ``PanicException`` escapes.
"""

from polywire._polywire import (
    AxonError,
    KadoError,
    KameoError,
    LlmError,
    PolywireError,
    PolywireTypeError,
    TetherError,
    ToonDecodeError,
    ToonEncodeError,
    __version__,
)

__all__ = [
    "AxonError",
    "KadoError",
    "KameoError",
    "LlmError",
    "PolywireError",
    "PolywireTypeError",
    "TetherError",
    "ToonDecodeError",
    "ToonEncodeError",
    "__version__",
]

# The format submodules load on first use, so `import polywire` stays cheap and
# `polywire.toon.dumps(...)` works without `import polywire.toon`.
_SUBMODULES = frozenset({"axon", "kado", "kameo", "llm", "tether", "toon"})


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"polywire.{name}")
    raise AttributeError(f"module 'polywire' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
