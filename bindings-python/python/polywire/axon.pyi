import os
from types import TracebackType
from typing import Any, AsyncIterator, Awaitable, Callable, Final, Iterable, Literal, Optional, Sequence, TypedDict, Union, final

from types import ModuleType
from polywire._polywire import AxonError as AxonError
from polywire.axon_daemon import (
    DAEMON_ERROR_CODES as DAEMON_ERROR_CODES,
    DAEMON_MAX_COMMAND_SIZE as DAEMON_MAX_COMMAND_SIZE,
    AxonDaemonError as AxonDaemonError,
    DaemonClient as DaemonClient,
    DaemonClosedError as DaemonClosedError,
    DaemonCommandTooLargeError as DaemonCommandTooLargeError,
    DaemonDisconnectedError as DaemonDisconnectedError,
    DaemonInternalError as DaemonInternalError,
    DaemonInvalidCommandError as DaemonInvalidCommandError,
    DaemonPeerNotFoundError as DaemonPeerNotFoundError,
    DaemonPeerUnreachableError as DaemonPeerUnreachableError,
    DaemonProtocolError as DaemonProtocolError,
    DaemonReplyTimeoutError as DaemonReplyTimeoutError,
    DaemonSelfSendError as DaemonSelfSendError,
    DaemonTimeoutError as DaemonTimeoutError,
    DaemonUnavailableError as DaemonUnavailableError,
)

__all__ = [
    "AxonClosedError",
    "AxonConnectionLostError",
    "AxonHandshakeError",
    "AxonInvalidArgumentError",
    "AxonInvalidReplyError",
    "AxonMessageTooLargeError",
    "AxonPeerError",
    "AxonRemoteError",
    "AxonStartError",
    "AxonTimeoutError",
    "AxonUnknownPeerError",
    "AxonUnreachableError",
    "MAX_BUSY_POLL",
    "PROTOCOLS",
    "Peer",
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
    # The daemon client (polywire.axon_daemon).
    "DAEMON_ERROR_CODES",
    "DAEMON_MAX_COMMAND_SIZE",
    "AxonDaemonError",
    "DaemonClient",
    "DaemonClosedError",
    "DaemonCommandTooLargeError",
    "DaemonDisconnectedError",
    "DaemonInternalError",
    "DaemonInvalidCommandError",
    "DaemonPeerNotFoundError",
    "DaemonPeerUnreachableError",
    "DaemonProtocolError",
    "DaemonReplyTimeoutError",
    "DaemonSelfSendError",
    "DaemonTimeoutError",
    "DaemonUnavailableError",
]

_Bytes = bytes | bytearray | memoryview

# Kind, ErrorCode, Stream, Route, Payload, the TypedDicts below and Envelope exist only for
# type checkers (the runtime uses str and plain dicts): import them under
# ``if typing.TYPE_CHECKING:``.
Kind = Literal["hello", "ping", "pong", "query", "response", "delegate", "ack", "result",
               "notify", "cancel", "discover", "capabilities", "error"]
"""A message kind (the envelope's ``kind``): the 13 of ``KINDS``."""
ErrorCode = Literal["not_authorized", "unknown_domain", "overloaded", "internal", "timeout",
                    "cancelled", "incompatible_version", "unknown_kind", "peer_not_found", "invalid_envelope"]
"""A protocol error code (an ``error`` payload's ``code``, :attr:`AxonError.code`): the 10 of
``ERROR_CODES``."""
Stream = Literal["bidirectional", "unidirectional"]
"""The type of QUIC stream a message travels on (:meth:`Session.receive`'s ``stream``)."""
Route = Literal["open_bidirectional", "reply_on_request_stream", "open_unidirectional"]
"""Where to write an outbound message: a new bidirectional stream (a request; read the reply
from it), the stream the request came in on (a reply; then finish it), or a new
unidirectional stream (a message that expects no reply)."""

PROTOCOL_VERSION: Final[int]
"""1: the protocol version this module speaks and offers in hello by default."""
MAX_MESSAGE_SIZE: Final[int]
"""65536: the largest message body :func:`decode` accepts, in bytes."""
REPLAY_WINDOW_MS: Final[int]
"""300000: how long (ms) a :class:`Session` remembers a received id to drop replays."""
DEFAULT_DEADLINE_MS: Final[int]
"""30000: a request's deadline (ms) when its payload gives no ``deadline_ms``."""
KINDS: Final[tuple[Kind, ...]]
"""The 13 message kinds, in the protocol's order."""
REQUIRED_KINDS: Final[tuple[Kind, ...]]
"""The kinds every agent must support: hello, ping, pong, query, response, notify, error."""
OPTIONAL_KINDS: Final[tuple[Kind, ...]]
"""The kinds an agent lists in its hello ``features`` when it supports them: delegate, ack,
result, cancel, discover, capabilities."""
ERROR_CODES: Final[tuple[ErrorCode, ...]]
"""The 10 protocol error codes."""

class KindRule(TypedDict):
    """The rules of a kind (a value of ``KIND_RULES``)."""

    required: bool
    """Whether every agent must support it (else it is a hello feature)."""
    expects_response: bool
    """Whether it is a request (sent on a bidirectional stream, answered there)."""
    response_kinds: list[Kind]
    """The kinds that answer it on its stream."""
    later_responses: list[Kind]
    """Kinds that answer it later, as new messages (a delegate's ``result``)."""
    stream: Stream
    """The stream type it travels on."""
    fields: list[tuple[str, bool]]
    """Its payload fields, as ``(name, required)`` pairs."""

KIND_RULES: Final[dict[Kind, KindRule]]
PAYLOAD_DEFAULTS: Final[dict[Kind, dict[str, Any]]]
"""Per kind, the payload fields :func:`decode` and :func:`validate` fill in when absent and
their values (``{"query": {"max_tokens": 0, "deadline_ms": 30000}, ...}``)."""

# Payload shapes, as decode returns them (defaults filled).
class HelloPayload(TypedDict, total=False):
    """The payload of a ``hello`` (request, and reply with ``selected_version``)."""

    protocol_versions: list[int]
    """Versions the sender speaks, ascending, e.g. ``[1]``."""
    selected_version: Optional[int]
    """The responder's choice (only in the reply)."""
    agent_name: Optional[str]
    features: list[str]
    """Optional kinds supported. Default ``[]``."""

class PongPayload(TypedDict, total=False):
    """The payload of a ``pong`` (the answer to a ``ping``)."""

    status: Literal["idle", "busy", "overloaded"]
    uptime_secs: int
    active_tasks: int
    agent_name: Optional[str]

class QueryPayload(TypedDict, total=False):
    """The payload of a ``query`` (answered with ``response`` or ``error``)."""

    question: str
    domain: Optional[str]
    """Dot-separated topic hint such as ``family.calendar``."""
    max_tokens: int
    """Token budget for the answer; 0 = no limit (the default)."""
    deadline_ms: int
    """How long the sender waits, in ms. Default 30000."""

class ResponsePayload(TypedDict, total=False):
    """The payload of a ``response`` (the answer to a ``query``)."""

    data: Any
    summary: str
    tokens_used: Optional[int]
    truncated: Optional[bool]

class DelegatePayload(TypedDict, total=False):
    """The payload of a ``delegate`` (acknowledged with ``ack``, reported with ``result``)."""

    task: str
    context: Any
    priority: Literal["normal", "urgent"]
    """Default ``"normal"``."""
    report_back: bool
    """Send a ``result`` when done? Default True."""
    deadline_ms: Optional[int]

class AckPayload(TypedDict, total=False):
    """The payload of an ``ack`` (the answer to a ``delegate`` or ``cancel``)."""

    accepted: bool
    estimated_ms: Optional[int]

class ResultPayload(TypedDict, total=False):
    """The payload of a ``result`` (a delegated task's outcome)."""

    status: Literal["completed", "failed", "partial"]
    outcome: str
    data: Any
    error: Optional[str]

class NotifyPayload(TypedDict, total=False):
    """The payload of a ``notify`` (no reply)."""

    topic: str
    data: Any
    importance: Literal["low", "medium", "high"]
    """Default ``"low"``."""

class CancelPayload(TypedDict, total=False):
    """The payload of a ``cancel`` (answered with ``ack``)."""

    reason: Optional[str]

class CapabilitiesPayload(TypedDict, total=False):
    """The payload of ``capabilities`` (the answer to ``discover``)."""

    agent_name: Optional[str]
    domains: list[str]
    channels: list[str]
    tools: list[str]
    max_concurrent_tasks: Optional[int]
    model: Optional[str]

class ErrorPayload(TypedDict, total=False):
    """The payload of an ``error`` (:func:`error_envelope`)."""

    code: ErrorCode
    """The protocol error code."""
    message: str
    """What went wrong and what to try instead."""
    retryable: bool
    """Default False."""

Payload = Union[HelloPayload, PongPayload, QueryPayload, ResponsePayload, DelegatePayload, AckPayload,
                ResultPayload, NotifyPayload, CancelPayload, CapabilitiesPayload, ErrorPayload, dict[str, Any]]
"""A payload of any kind (``ping`` and ``discover`` take ``{}``); unknown fields are kept."""

Envelope = TypedDict("Envelope", {"v": int, "id": str, "from": str, "to": str, "ts": int, "kind": Kind,
                                  "ref": Optional[str], "payload": dict[str, Any]})
"""A message: ``v`` (protocol version), ``id`` (UUID v4, lowercase), ``from``/``to`` (agent
ids), ``ts`` (Unix time in ms), ``kind``, ``ref`` (the id of the message this one answers, or
None) and ``payload``. (A functional TypedDict: ``from`` is a keyword.)"""
# An envelope argument: one this module returned, or any dict (validated at runtime).
_EnvelopeArg = Union[Envelope, dict[str, Any]]

def decode(data: Union[_Bytes, str], fill_defaults: bool = True) -> Envelope:
    """Decode and validate one message body (at most 65,536 bytes)."""

def encode(envelope: _EnvelopeArg) -> bytes:
    """Validate an envelope dict (payload as given) and encode it as upstream writes it."""

def validate(envelope: _EnvelopeArg, fill_defaults: bool = True) -> Envelope:
    """Validate an envelope dict; return its normalized form."""

def envelope(from_: str, to: str, kind: Kind, payload: Payload, ref_: Optional[str] = None,
             id: Optional[str] = None, ts: Optional[int] = None) -> Envelope:
    """A new message: v 1, a fresh UUID v4 id and the current time unless given."""

def reply(request: _EnvelopeArg, kind: Kind, payload: Payload, id: Optional[str] = None, ts: Optional[int] = None) -> Envelope:
    """A reply: ``ref`` = the request's id, from/to swapped, fresh id and time. The kind must
    answer the request's kind (a ping is answered with pong or error, ...)."""

def error_envelope(request: _EnvelopeArg, code: ErrorCode, message: str, retryable: bool = False,
                   id: Optional[str] = None, ts: Optional[int] = None) -> Envelope:
    """An ``error`` reply to ``request``. Make ``message`` instructive."""

def agent_id(public_key: _Bytes) -> str:
    """``"ed25519." + hex(sha256(public_key)[:16])`` for a 32-byte Ed25519 public key."""

def agent_id_from_seed(seed: _Bytes) -> str:
    """The agent id of the key pair with this 32-byte private seed."""

def public_key_from_seed(seed: _Bytes) -> bytes:
    """The 32-byte Ed25519 public key of the key pair whose 32-byte private seed is ``seed``.
    Another length raises :class:`AxonError` ``invalid_envelope``."""

def is_agent_id(s: str) -> bool:
    """Whether ``s`` is an agent id: ``"ed25519."`` and 32 hex digits (either case). A
    non-``str`` raises :class:`polywire.PolywireTypeError` (``invalid_envelope``)."""

def same_agent(a: str, b: str) -> bool:
    """Compare agent ids as the protocol does (hex case-insensitive)."""

def negotiate(local_versions: Sequence[int], remote_versions: Sequence[int]) -> int:
    """The highest common version; AxonError ``incompatible_version`` when there is none."""

class Pending(TypedDict):
    """A request a :class:`Session` sent and still expects an answer to."""

    id: str
    """The request's id."""
    kind: Kind
    """The request's kind."""
    to: str
    """The agent it was sent to; only that agent's replies match it."""
    sent_ms: int
    """When it was sent (the ``now_ms`` of :meth:`Session.send`)."""
    deadline_ms: int
    """How long to wait (the payload's ``deadline_ms``, else 30000)."""
    report_back: bool
    """For a delegate: whether it asked for a ``result``."""
    awaiting_result: bool
    """A delegate that was acknowledged and awaits its ``result`` (it no longer expires:
    :meth:`Session.forget` it when giving up)."""

class Outbound(TypedDict):
    """What :meth:`Session.hello` and :meth:`Session.send` return: the message and where to
    write it."""

    bytes: bytes
    """The encoded message body."""
    route: Route
    """Where to write it."""
    envelope: Envelope
    """The message, as sent."""

class Inbound(TypedDict, total=False):
    """What :meth:`Session.receive` says to do with a message: ``deliver`` it to the
    application, ``respond`` on the same stream, or ignore it (``dropped``)."""

    action: Literal["deliver", "respond", "dropped"]
    """What to do; the other keys depend on it."""
    envelope: Envelope
    """deliver: the message for the application."""
    in_reply_to: Optional[Pending]
    """deliver: the request this message answers."""
    reply: Envelope
    """respond: the reply to write back on the same stream ..."""
    bytes: bytes
    """respond: ... already encoded."""
    delivered: Optional[Envelope]
    """respond: the received message when the application should see it (an accepted hello)."""
    reason: Literal["malformed", "before_hello", "replay", "wrong_stream", "unknown_kind", "unexpected_reply"]
    """dropped: why."""
    message: str
    """dropped: what happened, in words."""

@final
class Session:
    """A sans-IO AXON connection endpoint (hello gating, ref matching, 300 s replay window)."""

    def __new__(cls, local_id: str, *, protocol_versions: Optional[Sequence[int]] = None,
                features: Optional[Sequence[str]] = None, agent_name: Optional[str] = None,
                expected_peer: Optional[str] = None, replay_window_ms: int = 300000,
                replay_capacity: int = 100000) -> Session:
        """``local_id``: this agent's id. ``protocol_versions`` offered in hello (ints 1 to
        255, default ``[1]``; none or a 0 raises ``incompatible_version``); ``features``: the
        optional kinds announced (a list of str, default all six); ``agent_name``;
        ``expected_peer``: accept a hello only from this agent; ``replay_window_ms`` and
        ``replay_capacity``: the replay cache (ints 0 to 2**64 - 1). A bad id raises
        :class:`AxonError` ``invalid_envelope``."""
    def hello(self, to: str, now_ms: Optional[int] = None) -> Outbound:
        """Start the handshake with agent ``to``: ``{"bytes", "route", "envelope"}`` of the hello
        to send (route ``open_bidirectional``). ``now_ms``: the clock, an int 0 to 2**64 - 1
        (default: now), as for every method. A bad id raises ``invalid_envelope``."""
    def send(self, envelope: _EnvelopeArg, now_ms: Optional[int] = None) -> Outbound:
        """Check and encode a message to send: ``{"bytes", "route", "envelope"}``; a request is
        remembered (:attr:`pending`) to match its reply. Raises :class:`AxonError`:
        ``not_authorized`` before hello completes, ``peer_not_found`` to another agent than the
        peer, ``unknown_kind`` for an optional request the peer did not announce,
        ``invalid_envelope`` (not from the local agent, a reply of the wrong kind, ...)."""
    def receive(self, data: _Bytes, stream: Stream, now_ms: Optional[int] = None) -> Inbound:
        """Process a received body; ``stream`` is "bidirectional" (a reply read from a stream this
        side opened too) or "unidirectional". Never raises for the message: a bad one is
        answered or dropped (see :class:`Inbound`); a bad ``stream`` raises ``invalid_envelope``."""
    def expire(self, now_ms: Optional[int] = None) -> list[Pending]:
        """Forget and return the requests whose deadline has passed, oldest first (answer them
        locally with a ``timeout``)."""
    def forget(self, id: str) -> Optional[Pending]:
        """Stop waiting for the answer to a request; returns it, or None."""
    @property
    def local_id(self) -> str:
        """This side's agent id (lowercase)."""
    @property
    def ready(self) -> bool:
        """Whether the hello exchange has completed (messages other than hello may flow)."""
    @property
    def peer(self) -> Optional[str]:
        """The peer's agent id, once the hello exchange has completed (else None)."""
    @property
    def version(self) -> Optional[int]:
        """The protocol version negotiated in the hello exchange, or None before it."""
    @property
    def peer_features(self) -> Optional[list[str]]:
        """The features the peer announced in its hello, or None before it."""
    @property
    def pending(self) -> list[Pending]:
        """Requests sent and not yet answered, oldest first."""

axon1: ModuleType
"""``polywire.axon.axon1``: the envelopes of today's protocol (see its own page section)."""

# ---------------------------------------------------------------- the peer

MAX_BUSY_POLL: Final[float]
"""The longest ``busy_poll`` window :meth:`Peer.start` accepts: 0.001 seconds (longer spins
would hold back the peer's own timers)."""
PROTOCOLS: Final[tuple[str, ...]]
"""The protocol generations a :class:`Peer` speaks: ``"axon/1"`` (upstream v0.3.0 and later,
the default) and ``"v2"`` (upstream v0.2.0, the design document's)."""

class AxonPeerError(AxonError):
    """An operation of a :class:`Peer` failed; ``code`` is stable (``AXON_TIMEOUT``, ...)."""

    code: str
    def __init__(self, message: str = "") -> None: ...

class AxonRemoteError(AxonPeerError):
    """The peer answered with an ``error``: ``remote_code``, ``message`` and ``retryable`` are
    the reply's (``code`` is ``AXON_REMOTE_ERROR``). Raise ``AxonRemoteError(code, message,
    retryable=False)`` from a served handler to reply with that error."""

    remote_code: str
    message: str
    retryable: bool
    def __init__(self, code: str = "", message: str = "", retryable: bool = False) -> None: ...

class AxonTimeoutError(AxonPeerError):
    """No reply within the request's timeout (``AXON_TIMEOUT``)."""
class AxonHandshakeError(AxonPeerError):
    """The TLS handshake (or v2's hello) was refused: a key not pinned on either side, another
    ALPN or protocol generation (``AXON_HANDSHAKE_REFUSED``)."""
class AxonUnreachableError(AxonPeerError):
    """The peer could not be reached in time (``AXON_UNREACHABLE``)."""
class AxonUnknownPeerError(AxonPeerError):
    """No peer with that agent id is known: ``add_peer`` it first (``AXON_UNKNOWN_PEER``)."""
class AxonInvalidReplyError(AxonPeerError):
    """The reply was not a valid answer to the request: a wrong ``ref`` or kind, an invalid
    envelope, none at all (``AXON_INVALID_REPLY``)."""
class AxonMessageTooLargeError(AxonPeerError):
    """A message over 65,536 bytes (``AXON_MESSAGE_TOO_LARGE``)."""
class AxonConnectionLostError(AxonPeerError):
    """The connection closed before the reply (``AXON_CONNECTION_LOST``)."""
class AxonClosedError(AxonPeerError):
    """The peer is closed, or closed while the operation was in flight (``AXON_CLOSED``)."""
class AxonStartError(AxonPeerError):
    """The peer could not start: the address could not be bound, ... (``AXON_START_FAILED``)."""
class AxonInvalidArgumentError(AxonPeerError):
    """An argument's value is not valid: a malformed token or key, an unknown protocol, ...
    (``AXON_INVALID_ARGUMENT``)."""

class PeerMapping(TypedDict, total=False):
    """A peer to pin, as upstream's config lists one."""

    agent_id: str
    """Its agent id (checked against the key)."""
    pubkey: str
    """Its Ed25519 public key, standard base64."""
    addr: str
    """``ip:port`` or ``host:port``; without it, it must dial this peer."""

class PeerState(TypedDict):
    """A known peer, as :meth:`Peer.peers` lists it."""

    agent_id: str
    addr: Optional[str]
    status: Literal["connected", "connecting", "disconnected"]
    rtt_ms: Optional[float]
    """The connection's round trip time, when connected."""

Event = TypedDict("Event", {
    "type": Literal["message", "error", "pair_request"], "from": str, "id": str, "kind": str, "ref": Optional[str],
    "payload": dict[str, Any], "code": Optional[str], "message": Optional[str], "retryable": bool,
    "agent_id": str, "pubkey": str, "addr": Optional[str], "token": Optional[str]}, total=False)
"""What :meth:`Peer.inbound` yields. ``message`` and ``error``: ``from`` (the sender's agent
id, from its TLS certificate), ``id``, ``kind``, ``ref``, ``payload``, and for an error its
``code``, ``message`` and ``retryable``. ``pair_request`` (an unknown peer was refused):
``agent_id``, ``pubkey`` (standard base64), ``addr`` (when known) and ``token`` (to
``add_peer`` it with, when the address is known)."""

_Handler = Callable[[str, str, dict[str, Any]], Union[Optional[dict[str, Any]], Awaitable[Optional[dict[str, Any]]]]]

class Peer:
    """An AXON peer this program owns: it talks to AXON daemons (and to other peers) over QUIC
    with mutual TLS. ``peer = await Peer.start(...)``; close it with ``await peer.close()`` or
    ``async with``. mDNS discovery is not supported: pin peers with tokens."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Not for use: start a peer with ``await Peer.start(...)`` (raises ``TypeError``)."""
    @classmethod
    async def start(
        cls,
        *,
        identity: bytes | bytearray | memoryview | str | os.PathLike[str] | None = None,
        listen: str = "127.0.0.1:0",
        peers: str | PeerMapping | Iterable[str | PeerMapping] = (),
        protocol: str = "axon/1",
        capabilities: dict[str, Any] | None = None,
        agent_name: str | None = None,
        request_timeout: float = 30.0,
        handler_timeout: float = 30.0,
        busy_poll: float = 50e-6,
    ) -> Peer:
        """Start a peer listening on ``listen`` (UDP ``ip:port``). ``identity``: a 32-byte
        seed, the path of an upstream ``identity.key``, or None for a new one; ``peers``:
        enrollment tokens or mappings to pin; ``protocol``: ``"axon/1"`` or ``"v2"``;
        ``capabilities``/``agent_name`` (v2): what ``discover`` and ``hello`` say;
        ``busy_poll``: seconds (0 to :data:`MAX_BUSY_POLL`) the network thread spins before
        it sleeps, 0 for never; while a :meth:`request` or :meth:`send` is awaited, the event
        loop turns without sleeping for up to twice that after the last one was made. Raises :class:`AxonStartError` or
        :class:`AxonInvalidArgumentError`."""
    @property
    def agent_id(self) -> str:
        """This peer's agent id."""
    @property
    def public_key(self) -> str:
        """Its Ed25519 public key, standard base64."""
    @property
    def listen_addr(self) -> str:
        """``"ip:port"``."""
    @property
    def token(self) -> str:
        """Its enrollment token, ``axon://<base64url key>@<listen_addr>``."""
    @property
    def protocol(self) -> str:
        """``"axon/1"`` or ``"v2"``."""
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
    async def __aenter__(self) -> Peer: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    async def add_peer(self, peer: str | PeerMapping) -> str:
        """Pin a peer (a token or a mapping); its agent id."""
    async def remove_peer(self, agent_id: str) -> bool:
        """Unpin a peer and close its connections; whether it was known."""
    async def peers(self) -> list[PeerState]:
        """The known peers and their state."""
    async def request(self, agent_id: str, payload: dict[str, Any], *, kind: str | None = None,
                      timeout: float | None = None) -> dict[str, Any]:
        """Send a request and return the reply's payload (axon/1 kind ``request``; v2 ``query``
        by default, or ``delegate``, ``discover``, ``ping``, ``cancel``). Raises
        :class:`AxonRemoteError` for an ``error`` reply, else another :class:`AxonPeerError`."""
    async def send(self, agent_id: str, payload: dict[str, Any], *, kind: str | None = None,
                   ref: str | None = None, timeout: float | None = None) -> str:
        """Send a message (axon/1: any kind but ``request``, ``message`` by default; v2:
        ``notify`` by default, ``result`` or ``error``); its id."""
    def serve(self, handler: _Handler | None) -> None:
        """Answer requests with ``handler(from_agent_id, kind, payload)`` (sync or async),
        which returns the reply's payload; raising :class:`AxonRemoteError` replies with that
        error. ``None`` stops serving."""
    def inbound(self) -> AsyncIterator[Event]:
        """Messages, unsolicited errors and refused peers (:class:`Event` dicts) as they
        arrive; ends when the peer closes."""
    async def close(self) -> None:
        """Close the peer; operations in flight fail with :class:`AxonClosedError`. Idempotent."""
