from typing import Any, Final, Literal, Optional, Sequence, TypedDict, Union, final

from polywire._polywire import AxonError as AxonError

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

_Bytes = bytes | bytearray | memoryview

# Kind, ErrorCode, Stream, Route, Payload, the TypedDicts below and Envelope exist only for
# type checkers (the runtime uses str and plain dicts): import them under
# ``if typing.TYPE_CHECKING:``.
Kind = Literal["hello", "ping", "pong", "query", "response", "delegate", "ack", "result",
               "notify", "cancel", "discover", "capabilities", "error"]
ErrorCode = Literal["not_authorized", "unknown_domain", "overloaded", "internal", "timeout",
                    "cancelled", "incompatible_version", "unknown_kind", "peer_not_found", "invalid_envelope"]
Stream = Literal["bidirectional", "unidirectional"]
Route = Literal["open_bidirectional", "reply_on_request_stream", "open_unidirectional"]

PROTOCOL_VERSION: Final[int]
MAX_MESSAGE_SIZE: Final[int]
REPLAY_WINDOW_MS: Final[int]
DEFAULT_DEADLINE_MS: Final[int]
KINDS: Final[tuple[Kind, ...]]
REQUIRED_KINDS: Final[tuple[Kind, ...]]
OPTIONAL_KINDS: Final[tuple[Kind, ...]]
ERROR_CODES: Final[tuple[ErrorCode, ...]]

class KindRule(TypedDict):
    required: bool
    expects_response: bool
    response_kinds: list[Kind]
    later_responses: list[Kind]
    stream: Stream
    fields: list[tuple[str, bool]]

KIND_RULES: Final[dict[Kind, KindRule]]
PAYLOAD_DEFAULTS: Final[dict[Kind, dict[str, Any]]]

# Payload shapes, as decode returns them (defaults filled).
class HelloPayload(TypedDict, total=False):
    protocol_versions: list[int]
    selected_version: Optional[int]
    agent_name: Optional[str]
    features: list[str]

class PongPayload(TypedDict, total=False):
    status: Literal["idle", "busy", "overloaded"]
    uptime_secs: int
    active_tasks: int
    agent_name: Optional[str]

class QueryPayload(TypedDict, total=False):
    question: str
    domain: Optional[str]
    max_tokens: int
    deadline_ms: int

class ResponsePayload(TypedDict, total=False):
    data: Any
    summary: str
    tokens_used: Optional[int]
    truncated: Optional[bool]

class DelegatePayload(TypedDict, total=False):
    task: str
    context: Any
    priority: Literal["normal", "urgent"]
    report_back: bool
    deadline_ms: Optional[int]

class AckPayload(TypedDict, total=False):
    accepted: bool
    estimated_ms: Optional[int]

class ResultPayload(TypedDict, total=False):
    status: Literal["completed", "failed", "partial"]
    outcome: str
    data: Any
    error: Optional[str]

class NotifyPayload(TypedDict, total=False):
    topic: str
    data: Any
    importance: Literal["low", "medium", "high"]

class CancelPayload(TypedDict, total=False):
    reason: Optional[str]

class CapabilitiesPayload(TypedDict, total=False):
    agent_name: Optional[str]
    domains: list[str]
    channels: list[str]
    tools: list[str]
    max_concurrent_tasks: Optional[int]
    model: Optional[str]

class ErrorPayload(TypedDict, total=False):
    code: ErrorCode
    message: str
    retryable: bool

Payload = Union[HelloPayload, PongPayload, QueryPayload, ResponsePayload, DelegatePayload, AckPayload,
                ResultPayload, NotifyPayload, CancelPayload, CapabilitiesPayload, ErrorPayload, dict[str, Any]]

Envelope = TypedDict("Envelope", {"v": int, "id": str, "from": str, "to": str, "ts": int, "kind": Kind,
                                  "ref": Optional[str], "payload": dict[str, Any]})
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

def public_key_from_seed(seed: _Bytes) -> bytes: ...
def is_agent_id(s: str) -> bool: ...
def same_agent(a: str, b: str) -> bool:
    """Compare agent ids as the protocol does (hex case-insensitive)."""

def negotiate(local_versions: Sequence[int], remote_versions: Sequence[int]) -> int:
    """The highest common version; AxonError ``incompatible_version`` when there is none."""

class Pending(TypedDict):
    id: str
    kind: Kind
    to: str
    sent_ms: int
    deadline_ms: int
    report_back: bool
    awaiting_result: bool

class Outbound(TypedDict):
    bytes: bytes
    route: Route
    envelope: Envelope

class Inbound(TypedDict, total=False):
    action: Literal["deliver", "respond", "dropped"]
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
    message: str

@final
class Session:
    """A sans-IO AXON connection endpoint (hello gating, ref matching, 300 s replay window)."""

    def __new__(cls, local_id: str, *, protocol_versions: Optional[Sequence[int]] = None,
                features: Optional[Sequence[str]] = None, agent_name: Optional[str] = None,
                expected_peer: Optional[str] = None, replay_window_ms: int = 300000,
                replay_capacity: int = 100000) -> Session: ...
    def hello(self, to: str, now_ms: Optional[int] = None) -> Outbound: ...
    def send(self, envelope: _EnvelopeArg, now_ms: Optional[int] = None) -> Outbound: ...
    def receive(self, data: _Bytes, stream: Stream, now_ms: Optional[int] = None) -> Inbound: ...
    def expire(self, now_ms: Optional[int] = None) -> list[Pending]: ...
    def forget(self, id: str) -> Optional[Pending]: ...
    @property
    def local_id(self) -> str: ...
    @property
    def ready(self) -> bool: ...
    @property
    def peer(self) -> Optional[str]: ...
    @property
    def version(self) -> Optional[int]: ...
    @property
    def peer_features(self) -> Optional[list[str]]: ...
    @property
    def pending(self) -> list[Pending]: ...
