"""AXON protocol version 1 ("axon/1"): the envelopes of today's AXON (upstream hwbehrens/axon
v0.3.0 and later: v0.7.2 and main), reached as ``polywire.axon.axon1``.

An envelope is ``{"id", "kind", "ref", "payload"}``, one per QUIC stream (ALPN ``axon/1``), at
most 65,536 bytes. ``id`` is a UUID v4; ``kind`` is ``request`` (answered on its stream by
exactly one ``response`` or ``error`` whose ``ref`` is the request's id), ``message``, or any
other string (kept as it is); ``payload`` is a JSON object. There is no ``from``/``to`` on the
wire: the receiver takes the sender from the TLS identity.

:func:`decode` accepts exactly what upstream HEAD's ``decode`` and ``validate`` accept (UUIDs in
any spelling the ``uuid`` crate reads, unknown fields and ``from``/``to`` ignored, duplicate
fields refused) and returns the envelope with the id lowercase hyphenated, ``ref`` None when
absent and the payload as a dict. :func:`encode` writes ``{"id","kind","ref"?,"payload"}``
compactly (``ref`` only when set). Every failure raises :class:`polywire.axon.AxonError`
``invalid_envelope`` with upstream's message.
"""

from __future__ import annotations

from polywire._polywire import axon1 as _native

__all__ = ["ALPN", "KINDS", "MAX_MESSAGE_SIZE", "decode", "encode", "error", "message", "request", "response"]

ALPN: str = "axon/1"
MAX_MESSAGE_SIZE: int = _native.MAX_MESSAGE_SIZE
KINDS: tuple = ("request", "response", "message", "error")

decode = _native.decode
encode = _native.encode
request = _native.request
message = _native.message
response = _native.response
error = _native.error
