"""AXON v2 message types: agent-to-agent JSON envelopes (upstream hwbehrens/axon v0.1.0-v0.2.0).

An envelope is ``{"v", "id", "from", "to", "ts", "kind", "ref", "payload"}``, one per QUIC
stream, at most 65,536 bytes. :func:`decode` validates in upstream's order (field types, then
the kind, then ``v >= 1``, ``ts > 0`` and agent ids, then the kind's payload schema) and
returns a dict with ids lowercase, ``ref`` None when absent, unknown envelope fields dropped,
unknown payload fields kept and the payload defaults filled in (``priority`` "normal",
``report_back`` True, ``importance`` "low", ``retryable`` False, query ``max_tokens`` 0 = no
limit and ``deadline_ms`` 30000, empty ``features``/``domains``/``channels``/``tools``).
:func:`encode` writes what upstream writes: envelope fields in order, ``ref`` omitted when
None, payload keys sorted, no whitespace.

Every failure raises :class:`AxonError` (a ``ValueError``) whose ``code`` is the protocol's
own error code (``invalid_envelope``, ``unknown_kind``, ``incompatible_version``,
``not_authorized``, ``peer_not_found``, ...) and whose message says what to do instead; an
error reply for a peer is ``error_envelope(request, e.code, e.msg)``.

:class:`Session` is a sans-IO connection endpoint: it enforces "nothing before hello
completes" (unidirectional messages dropped, bidirectional requests answered
``not_authorized``), matches replies to requests by ``ref`` and drops an ``id`` seen in the
last 300 s. Pass the clock in (``now_ms``) for deterministic behaviour.

:class:`DaemonClient` (from :mod:`polywire.axon_daemon`, pure Python) talks to a running
upstream daemon (v0.7.x and main) over its Unix socket: ``send`` requests and messages,
``peers``, ``status``, ``whoami``, ``add_peer`` and its ``inbound`` and ``pair_request``
events; its errors are :class:`AxonDaemonError` subclasses.
"""

from __future__ import annotations

from polywire._polywire import AxonError
from polywire._polywire import axon as _native

__all__ = [
    "DEFAULT_DEADLINE_MS",
    "ERROR_CODES",
    "KINDS",
    "KIND_RULES",
    "MAX_MESSAGE_SIZE",
    "OPTIONAL_KINDS",
    "PAYLOAD_DEFAULTS",
    "PROTOCOL_VERSION",
    "REPLAY_WINDOW_MS",
    "REQUIRED_KINDS",
    "AxonError",
    "Session",
    "agent_id",
    "agent_id_from_seed",
    "decode",
    "encode",
    "envelope",
    "error_envelope",
    "is_agent_id",
    "negotiate",
    "public_key_from_seed",
    "reply",
    "same_agent",
    "validate",
]

PROTOCOL_VERSION: int = _native.PROTOCOL_VERSION
MAX_MESSAGE_SIZE: int = _native.MAX_MESSAGE_SIZE
REPLAY_WINDOW_MS: int = _native.REPLAY_WINDOW_MS
DEFAULT_DEADLINE_MS: int = _native.DEFAULT_DEADLINE_MS

KIND_RULES: dict = _native.kind_rules()
"""Per kind: ``required``, ``expects_response``, ``response_kinds``, ``later_responses``,
``stream`` ("bidirectional"/"unidirectional") and ``fields`` ((name, required) pairs)."""
KINDS: tuple = tuple(KIND_RULES)
REQUIRED_KINDS: tuple = tuple(k for k, r in KIND_RULES.items() if r["required"])
OPTIONAL_KINDS: tuple = tuple(k for k, r in KIND_RULES.items() if not r["required"])
ERROR_CODES: tuple = (
    "not_authorized", "unknown_domain", "overloaded", "internal", "timeout",
    "cancelled", "incompatible_version", "unknown_kind", "peer_not_found", "invalid_envelope",
)
PAYLOAD_DEFAULTS: dict = _native.payload_defaults()

decode = _native.decode
encode = _native.encode
validate = _native.validate
envelope = _native.envelope
reply = _native.reply
error_envelope = _native.error_envelope
agent_id = _native.agent_id
agent_id_from_seed = _native.agent_id_from_seed
public_key_from_seed = _native.public_key_from_seed
is_agent_id = _native.is_agent_id
same_agent = _native.same_agent
negotiate = _native.negotiate
Session = _native.Session

# The client of a local upstream daemon (pure Python, asyncio).
from polywire.axon_daemon import (  # noqa: E402
    DAEMON_ERROR_CODES,
    DAEMON_MAX_COMMAND_SIZE,
    AxonDaemonError,
    DaemonClient,
    DaemonClosedError,
    DaemonCommandTooLargeError,
    DaemonDisconnectedError,
    DaemonInternalError,
    DaemonInvalidCommandError,
    DaemonPeerNotFoundError,
    DaemonPeerUnreachableError,
    DaemonProtocolError,
    DaemonReplyTimeoutError,
    DaemonSelfSendError,
    DaemonTimeoutError,
    DaemonUnavailableError,
)
from polywire import axon_daemon as _daemon  # noqa: E402

__all__ += _daemon.__all__
