import os
from typing import Any, AsyncIterator, Final, Literal, Optional, TypedDict, Union, overload

from polywire._polywire import AxonError

__all__ = [
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

DaemonErrorCode = Literal["invalid_command", "command_too_large", "peer_not_found", "self_send",
                          "peer_unreachable", "timeout", "internal_error"]
"""An error code of the daemon (an error reply's ``error``, :attr:`AxonDaemonError.code`)."""

DAEMON_MAX_COMMAND_SIZE: Final[int]
"""65536: the longest command line the daemon reads, in bytes without the newline
(upstream's ``MAX_IPC_LINE_LENGTH``); a longer one is refused before it is sent."""
DAEMON_ERROR_CODES: Final[tuple[DaemonErrorCode, ...]]
"""The daemon's 7 error codes (upstream's ``IpcErrorCode``), in its order."""

# What the commands return and the events yield (plain dicts at runtime).
DaemonEnvelope = TypedDict("DaemonEnvelope", {"id": str, "kind": str, "ref": str, "payload": dict[str, Any],
                                              "from": str, "to": str}, total=False)
"""An axon/1 envelope as the daemon shows it: ``id``, ``kind`` (``request``, ``response``,
``message``, ``error``; ``unknown`` for a kind it does not know), ``ref`` (absent when
none), ``payload``, and ``from``/``to`` (agent ids, filled in by the daemon from the TLS
identity). (A functional TypedDict: ``from`` is a keyword.)"""

class DaemonPeer(TypedDict, total=False):
    """An entry of :meth:`DaemonClient.peers`."""

    agent_id: str
    addr: str
    """``ip:port``."""
    status: Literal["discovered", "connecting", "connected", "disconnected"]
    rtt_ms: float
    """The round trip time, when known (absent otherwise)."""
    source: Literal["static", "discovered", "cached"]
    """Where the daemon learned the peer: its config or ``add_peer``, mDNS, its cache."""

class DaemonStatus(TypedDict):
    """What :meth:`DaemonClient.status` returns."""

    uptime_secs: int
    peers_connected: int
    messages_sent: int
    messages_received: int

class DaemonIdentity(TypedDict, total=False):
    """What :meth:`DaemonClient.whoami` returns."""

    agent_id: str
    public_key: str
    """Standard base64 of the Ed25519 public key."""
    name: str
    """The configured name (absent when none)."""
    version: str
    """The daemon's version, e.g. ``"0.7.2"``."""
    uptime_secs: int

InboundEvent = TypedDict("InboundEvent", {"event": Literal["inbound"], "from": str, "envelope": DaemonEnvelope})
"""``{"event": "inbound", "from", "envelope"}``: a message, request, reply or error that
reached the daemon (a request is already answered ``unhandled`` by it); ``from`` is the
sender's agent id. (A functional TypedDict: ``from`` is a keyword.)"""

class PairRequestEvent(TypedDict, total=False):
    """``{"event": "pair_request", "agent_id", "pubkey", "addr"}``: an agent the daemon has
    not pinned tried to connect and was refused in the TLS handshake."""

    event: Literal["pair_request"]
    agent_id: str
    pubkey: str
    """Standard base64 of its public key."""
    addr: str
    """Its address, when the daemon knows it (absent otherwise)."""

DaemonEvent = Union[InboundEvent, PairRequestEvent, dict[str, Any]]
"""An event :meth:`DaemonClient.events` yields (an event of a newer daemon as it came)."""

class AxonDaemonError(AxonError):
    """A command to the local AXON daemon failed. ``code`` is the daemon's error code (one
    of ``DAEMON_ERROR_CODES``) or the client's own (``AXON_DAEMON_*``), ``message`` what
    happened (for an error reply, the daemon's text). The subclass says which."""

    code: str
    message: str
    """What happened: the daemon's text for an error reply."""
    def __init__(self, message: Optional[str] = None, code: Optional[str] = None) -> None:
        """``message`` defaults to the daemon's text for ``code``, ``code`` to the class's."""

class DaemonInvalidCommandError(AxonDaemonError):
    """``invalid_command``: the daemon could not parse the command or refused a field's
    value (also raised before sending for a value it would refuse)."""
class DaemonCommandTooLargeError(AxonDaemonError):
    """``command_too_large``: the command line is over 65,536 bytes (refused before sending;
    the daemon closes the connection after this reply)."""
class DaemonPeerNotFoundError(AxonDaemonError):
    """``peer_not_found``: the daemon has no peer with that agent id."""
class DaemonSelfSendError(AxonDaemonError):
    """``self_send``: the target (or the key given to ``add_peer``) is the daemon's own agent."""
class DaemonPeerUnreachableError(AxonDaemonError):
    """``peer_unreachable``: the peer is known but the daemon could not deliver (no
    connection, a message not delivered within 10 s, a malformed reply)."""
class DaemonTimeoutError(AxonDaemonError):
    """``timeout``: the remote agent did not answer the request within ``timeout_secs``."""
class DaemonInternalError(AxonDaemonError):
    """``internal_error``: the daemon failed unexpectedly."""
class DaemonUnavailableError(AxonDaemonError):
    """``AXON_DAEMON_UNAVAILABLE``: the daemon's socket could not be connected to (no daemon
    running at that path, no permission, not within ``timeout``)."""
class DaemonDisconnectedError(AxonDaemonError):
    """``AXON_DAEMON_DISCONNECTED``: the connection to the daemon closed or failed; every
    command in flight fails with it and later ones too (the daemon drops clients of another
    user, beyond 64 clients, and a client that leaves 1,024 lines unread)."""
class DaemonClosedError(AxonDaemonError):
    """``AXON_DAEMON_CLOSED``: the client was closed (:meth:`DaemonClient.close`)."""
class DaemonReplyTimeoutError(AxonDaemonError):
    """``AXON_DAEMON_TIMEOUT``: the daemon did not answer the command within its deadline (the
    client's ``timeout`` beyond the time the command may take)."""
class DaemonProtocolError(AxonDaemonError):
    """``AXON_DAEMON_PROTOCOL``: the daemon sent something this client cannot read: a line
    that is not a JSON object, or a reply without the fields it must have (the connection is
    closed)."""

class DaemonClient:
    """A connection to a local AXON daemon's Unix socket:
    ``client = await DaemonClient.connect()``; close it with ``await client.close()`` or
    ``async with``. Commands are coroutines of the event loop it was connected in; several
    may be in flight at once."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Not for use: connect with ``await DaemonClient.connect(...)`` (raises ``TypeError``)."""
    @staticmethod
    def default_path() -> str:
        """The daemon's socket as upstream finds it: ``$AXON_ROOT/axon.sock`` when
        ``AXON_ROOT`` is set and not blank, else ``$HOME/.axon/axon.sock``. Raises
        :class:`DaemonUnavailableError` when neither variable is set."""
    @classmethod
    async def connect(
        cls,
        path: Union[str, bytes, os.PathLike[str], os.PathLike[bytes], None] = None,
        *,
        timeout: float = 10.0,
        max_events: int = 1024,
    ) -> DaemonClient:
        """Connect to the daemon's socket at ``path`` (default :meth:`default_path`).
        ``timeout`` (seconds): how long to wait for the connection, and for each command's
        reply beyond the time the command itself may take. ``max_events``: how many events
        are kept until :meth:`events` takes them (the oldest are dropped first; 0 keeps
        none). Raises :class:`DaemonUnavailableError` when nothing accepts the connection."""
    @property
    def path(self) -> str:
        """The socket's path."""
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
    @property
    def dropped_events(self) -> int:
        """How many events were dropped because ``max_events`` were already waiting."""
    async def __aenter__(self) -> DaemonClient: ...
    async def __aexit__(self, *exc: object) -> None: ...
    async def close(self) -> None:
        """Close the connection. Commands in flight fail with :class:`DaemonClosedError`,
        :meth:`events` iterators end after the events already received. Idempotent."""
    @overload
    async def send(self, to: str, payload: dict[str, Any], *, kind: Literal["request"] = "request",
                   timeout_secs: Optional[int] = None, ref: Optional[str] = None) -> DaemonEnvelope:
        """Send ``payload`` (a JSON object) to the agent ``to`` through the daemon.
        ``kind="request"`` waits for the agent's reply and returns it, the envelope with kind
        ``response`` or ``error`` (an upstream daemon answers every request ``error`` /
        ``unhandled``); ``timeout_secs`` (at least 1; the daemon's default is 30) bounds the
        wait, past it the daemon answers ``timeout``. The daemon also pushes the reply to
        every client as an ``inbound`` event. ``kind="message"`` delivers it (within the
        daemon's 10 s) and returns its id. ``ref``: a UUID the message refers to. Raises
        :class:`DaemonPeerNotFoundError`, :class:`DaemonSelfSendError`,
        :class:`DaemonPeerUnreachableError`, :class:`DaemonTimeoutError`, ..."""
    @overload
    async def send(self, to: str, payload: dict[str, Any], *, kind: Literal["message"],
                   timeout_secs: None = None, ref: Optional[str] = None) -> str: ...
    async def peers(self) -> list[DaemonPeer]:
        """The daemon's peer table, sorted by agent id: a list of :class:`DaemonPeer`
        (``agent_id``, ``addr``, ``status``, ``rtt_ms`` when known, ``source``)."""
    async def status(self) -> DaemonStatus:
        """``{"uptime_secs", "peers_connected", "messages_sent", "messages_received"}``."""
    async def whoami(self) -> DaemonIdentity:
        """The daemon's identity (:class:`DaemonIdentity`): ``agent_id``, ``public_key``
        (standard base64), ``name`` (when configured), ``version``, ``uptime_secs``."""
    async def add_peer(self, token: Optional[str] = None, *, pubkey: Optional[str] = None,
                       addr: Optional[str] = None) -> str:
        """Pin a peer in the daemon (until it restarts) and return its agent id: an
        enrollment token ``axon://<base64url key>@host:port`` (decoded with upstream's
        rules), or ``pubkey=`` (standard base64) and ``addr="host:port"``. The daemon answers
        ``invalid_command`` for a peer it already has or an address it cannot resolve,
        ``self_send`` for its own key. Give a token, or both ``pubkey`` and ``addr``."""
    def events(self) -> AsyncIterator[DaemonEvent]:
        """The daemon's events as they arrive, oldest first:
        ``async for event in client.events()`` (:class:`InboundEvent`,
        :class:`PairRequestEvent`). Ends after
        :meth:`close`; raises :class:`DaemonDisconnectedError` once the connection is lost
        and the events received before are taken."""
