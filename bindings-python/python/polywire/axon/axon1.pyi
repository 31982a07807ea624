from typing import Any, Final, Optional, TypedDict, Union

__all__ = ["ALPN", "KINDS", "MAX_MESSAGE_SIZE", "decode", "encode", "error", "message", "request", "response"]

_Bytes = bytes | bytearray | memoryview

ALPN: Final[str]
"""``"axon/1"``: the ALPN protocol id of an axon/1 connection."""
MAX_MESSAGE_SIZE: Final[int]
"""65536: the largest message, in bytes."""
KINDS: Final[tuple[str, ...]]
"""The kinds upstream knows: request, response, message, error. Any other kind string is
kept as it is."""

Envelope1 = TypedDict("Envelope1", {"id": str, "kind": str, "ref": Optional[str], "payload": dict[str, Any]})
"""An axon/1 envelope: ``id`` (a UUID v4, lowercase with hyphens), ``kind``, ``ref`` (the id
of the request it answers, or None) and ``payload`` (a JSON object)."""
_Envelope1Arg = Union[Envelope1, dict[str, Any]]

def decode(data: Union[_Bytes, str]) -> Envelope1:
    """Decode and validate one message as upstream HEAD does (at most 65,536 bytes)."""

def encode(envelope: _Envelope1Arg) -> bytes:
    """Validate an envelope (a UUID v4 id, an object payload) and encode it for the wire:
    ``{"id","kind","ref"?,"payload"}``, compact, ``ref`` only when set."""

def request(payload: dict[str, Any], *, id: Optional[str] = None) -> Envelope1:
    """A ``request`` with a fresh UUID v4 id (or ``id``)."""

def message(payload: dict[str, Any], *, kind: str = "message", ref_: Optional[str] = None,
            id: Optional[str] = None) -> Envelope1:
    """A message (any kind but ``request``; ``message`` by default) with a fresh id."""

def response(request: _Envelope1Arg, payload: dict[str, Any], *, id: Optional[str] = None) -> Envelope1:
    """A ``response`` to ``request``: ``ref`` = its id, a fresh id."""

def error(request: _Envelope1Arg, code: str, message: str, *, retryable: bool = False,
          id: Optional[str] = None) -> Envelope1:
    """An ``error`` reply to ``request``: payload ``{"code", "message", "retryable"}`` in that
    order."""
