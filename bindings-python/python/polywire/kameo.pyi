import datetime
from typing import Any, AsyncIterator, Awaitable, Callable, ClassVar, Final, Iterable, Mapping, Protocol, TypedDict, overload
from types import TracebackType

from polywire._polywire import KameoError as KameoError

__all__ = [
    "KameoError",
    "MAX_DEPTH",
    "MAX_METADATA_SIZE",
    "MAX_REQUEST_SIZE",
    "MAX_RESPONSE_SIZE",
    "MAX_VALUE_DEPTH",
    "MESSAGING_PROTOCOL",
    "REGISTRY_PROTOCOL",
    "actor_id",
    "actor_id_from_bytes",
    "actor_id_to_bytes",
    "ask",
    "decode_registration",
    "decode_request",
    "decode_response",
    "duration",
    "encode_registration",
    "encode_request",
    "encode_response",
    "metadata_key",
    "pack",
    "parse_metadata_key",
    "peer_id_from_bytes",
    "peer_id_from_public_key",
    "peer_id_to_bytes",
    "provider_key",
    "remote_actor_id",
    "remote_message_id",
    "tell",
    "unpack",
    "ActorNotRunning",
    "ActorStopped",
    "BadActorType",
    "ConnectionClosed",
    "DeserializeHandlerError",
    "DeserializeMessage",
    "DialFailure",
    "HandlerError",
    "KameoRemoteError",
    "MailboxFull",
    "NetworkTimeout",
    "Node",
    "NodeClosed",
    "NodeStartError",
    "RegistryError",
    "RemoteActorRef",
    "RemoteIoError",
    "ReplyTimeout",
    "SerializeHandlerError",
    "SerializeMessage",
    "SerializeReply",
    "SwarmNotBootstrapped",
    "UnknownActor",
    "UnknownMessage",
    "UnsupportedProtocols",
]

_Bytes = bytes | bytearray | memoryview
_PeerId = str | bytes
_DurationLike = Duration | float | int | datetime.timedelta | tuple[int, int] | None

MESSAGING_PROTOCOL: Final[str]
"""``/kameo/messaging/1.0.0``: the libp2p request-response protocol of requests and responses."""
REGISTRY_PROTOCOL: Final[str]
"""``/kameo/registry/1.0.0``: the Kademlia protocol of the actor registry."""
MAX_REQUEST_SIZE: Final[int]
"""The cbor codec reads at most this much of a request stream (1 MiB)."""
MAX_RESPONSE_SIZE: Final[int]
"""... and of a response stream (10 MiB)."""
MAX_METADATA_SIZE: Final[int]
"""kameo's registry drops metadata records with larger values (64 KiB)."""
MAX_DEPTH: Final[int]
"""CBOR nesting budget (kameo's own: 256)."""
MAX_VALUE_DEPTH: Final[int]
"""Nesting limit of values given to or returned by this module (256)."""

# ActorId, Duration and Registration exist only for type checkers (the runtime uses plain
# dicts): import them under ``if typing.TYPE_CHECKING:``.

class ActorId(TypedDict):
    """An actor id, as the decoders return it (and :func:`actor_id` with a str peer id)."""

    sequence_id: int
    """The actor's sequence id (0 to 2**64 - 1)."""
    peer_id: str | None
    """Base58 peer id; ``None`` for an actor of a node without a swarm."""

class Duration(TypedDict):
    """A ``core::time::Duration`` as serde writes it (:func:`duration` builds one)."""

    secs: int
    """Whole seconds (0 to 2**64 - 1)."""
    nanos: int
    """Nanoseconds (0 to 999,999,999)."""

class Registration(TypedDict):
    """An actor's registry record (:func:`decode_registration`): its actor id's fields and its
    remote id."""

    sequence_id: int
    """The actor's sequence id."""
    peer_id: str | None
    """Base58 peer id, or ``None``."""
    remote_id: str
    """The actor's remote id (``RemoteActor::REMOTE_ID``)."""

def encode_request(value: dict[str, Any]) -> bytes:
    """CBOR bytes of a ``SwarmRequest`` (``{"Ask": {...}}``, ``{"Tell": {...}}``,
    ``{"Link": ...}``, ``{"Unlink": ...}``, ``{"SignalLinkDied": ...}``)."""

def decode_request(data: _Bytes) -> dict[str, Any]:
    """A ``SwarmRequest`` from CBOR bytes, in serde's externally tagged shape, as kameo reads
    it (bytes after the body are ignored). Raises :class:`KameoError` (``KAMEO_EOF``,
    ``KAMEO_UNKNOWN_VARIANT``, ``KAMEO_MISSING_FIELD``, ...) with the byte ``offset``."""

def encode_response(value: dict[str, Any]) -> bytes:
    """CBOR bytes of a ``SwarmResponse`` (``{"Ask": {"Ok": b"..."}}``,
    ``{"Tell": {"Err": "MailboxFull"}}``, ``{"OutboundFailure": "DialFailure"}``, ...)."""

def decode_response(data: _Bytes) -> dict[str, Any]:
    """A ``SwarmResponse`` from CBOR bytes, in serde's externally tagged shape, as kameo reads
    it (bytes after the body are ignored). Raises :class:`KameoError`."""

def encode_registration(sequence_id: int, peer_id: _PeerId | None, remote_id: str) -> bytes:
    """The value of an actor's registry metadata record (``ActorRegistration``): its actor id
    (``sequence_id``, an int 0 to 2**64 - 1, else ``KAMEO_INVALID_VALUE``; ``peer_id``, base58
    text, its bytes or None) and ``remote_id``."""

def decode_registration(data: _Bytes) -> Registration:
    """The ``ActorRegistration`` record kameo stores in the DHT, from its bytes: the actor id
    (``sequence_id``, ``peer_id``) and ``remote_id``. Raises :class:`KameoError`
    (``KAMEO_REGISTRATION_EMPTY``, ``KAMEO_REGISTRATION_TRUNCATED``, ...)."""

def metadata_key(actor_name: str, peer_id: _PeerId) -> str:
    """``{actor_name}:meta:{base58 peer id}``"""

def parse_metadata_key(key: str | _Bytes) -> tuple[str, str]:
    """``(actor_name, peer_id)`` (the peer id base58) of a metadata record key, as kameo
    validates it: ``KAMEO_INVALID_METADATA_KEY`` or a peer id error otherwise."""

def provider_key(actor_name: str) -> bytes:
    """The DHT provider key under which kameo announces ``actor_name``: its UTF-8 bytes."""

def peer_id_from_public_key(key: _Bytes) -> str:
    """Base58 peer id of a 32-byte Ed25519 public key or a protobuf-encoded key."""

def peer_id_to_bytes(peer_id: _PeerId) -> bytes:
    """The multihash bytes of a peer id (base58 text, or bytes, which are checked and returned).
    Raises :class:`KameoError` ``KAMEO_INVALID_BASE58`` or ``KAMEO_INVALID_PEER_ID``."""

def peer_id_from_bytes(data: _Bytes) -> str:
    """The base58 peer id of multihash bytes (``KAMEO_INVALID_PEER_ID`` when they are none)."""

def actor_id_to_bytes(sequence_id: int, peer_id: _PeerId | None = None) -> bytes:
    """``ActorId::to_bytes``: the sequence id (an int 0 to 2**64 - 1, u64 little-endian) then the
    peer id's multihash bytes, when given. A bad value raises :class:`KameoError`
    ``KAMEO_INVALID_VALUE``."""

def actor_id_from_bytes(data: _Bytes) -> ActorId:
    """``ActorId::from_bytes``: ``{"sequence_id", "peer_id"}`` (``peer_id`` None when the bytes
    hold none). Fewer than 8 bytes raise :class:`KameoError` ``KAMEO_ACTOR_ID_TOO_SHORT``."""

def remote_message_id(
    crate_name: str,
    crate_major: int,
    module_path: str,
    message_type: str,
    actor_type: str,
    impl_generics: str = "",
) -> str:
    """The id ``#[remote_message]`` gives ``impl Message<message_type> for actor_type``
    in ``module_path`` of crate ``crate_name`` (``CARGO_PKG_NAME``) at major version
    ``crate_major``."""

def remote_actor_id(module_path: str, ident: str) -> str:
    """The remote id ``#[derive(RemoteActor)]`` gives the actor ``ident`` in ``module_path``:
    ``{module_path}::{ident}``."""

def pack(value: Any) -> bytes:
    """MessagePack bytes of a value, as ``rmp_serde::to_vec_named`` writes it."""

def unpack(data: _Bytes) -> Any:
    """The value of MessagePack bytes as ``rmp_serde`` reads them: maps to dicts (an array key
    to a tuple), arrays to lists, bin to bytes. Raises :class:`KameoError` (``KAMEO_MSGPACK_*``,
    ``KAMEO_DEPTH_LIMIT``); bytes after the value are ``KAMEO_MSGPACK_TRAILING``."""

@overload
def actor_id(sequence_id: int, peer_id: str | None = None) -> ActorId:
    """An actor id value ``{"sequence_id": ..., "peer_id": ...}`` for :func:`ask` and
    :func:`tell`. ``sequence_id``: an int 0 to 2**64 - 1 (else :class:`KameoError`
    ``KAMEO_INVALID_VALUE``); ``peer_id``: base58 text, its bytes or None, returned as given
    (only its type is checked; a malformed peer id fails when the request is encoded). Another
    type raises :class:`polywire.PolywireTypeError` ``KAMEO_INVALID_ARGUMENT``. A bytes peer
    id stays bytes: that dict is no :class:`ActorId` (whose ``peer_id`` is text)."""
@overload
def actor_id(sequence_id: int, peer_id: _Bytes) -> dict[str, Any]: ...
def duration(value: _DurationLike) -> Duration | None:
    """A ``Duration`` value ``{"secs", "nanos"}`` from seconds (int or float), a
    :class:`datetime.timedelta`, a ``(secs, nanos)`` pair or such a dict (returned as is);
    ``None`` stays ``None``. A negative or non-finite value raises :class:`KameoError`
    ``KAMEO_INVALID_VALUE``, another type :class:`polywire.PolywireTypeError`
    ``KAMEO_INVALID_ARGUMENT``."""
def ask(
    actor_id: ActorId | Mapping[str, Any] | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout: _DurationLike = None,
    reply_timeout: _DurationLike = None,
    immediate: bool = False,
) -> dict[str, Any]: ...
def tell(
    actor_id: ActorId | Mapping[str, Any] | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout: _DurationLike = None,
    immediate: bool = False,
) -> dict[str, Any]: ...

# ---------------------------------------------------------------- the peer

class KameoRemoteError(KameoError):
    """An ask, tell, lookup, registration or dial of a :class:`Node` failed. ``code`` is
    stable (``KAMEO_`` and kameo's ``RemoteSendError`` variant in upper snake case for send
    errors), ``variant`` the ``RemoteSendError`` variant name, ``None`` for errors that are
    not one. Raise one from a served handler to answer with that variant."""

    variant: ClassVar[str | None]
    def __init__(self, message: str | None = None) -> None: ...

class ActorNotRunning(KameoRemoteError):
    """The actor is not running (or this node does not host it)."""
class ActorStopped(KameoRemoteError):
    """The actor stopped before it replied."""
class BadActorType(KameoRemoteError):
    """The actor is not of the remote id the reference names."""
class MailboxFull(KameoRemoteError):
    """The actor's mailbox is full (an immediate send)."""
class ReplyTimeout(KameoRemoteError):
    """The actor did not reply within the reply timeout."""
class SerializeMessage(KameoRemoteError):
    """The message could not be serialized."""
class DeserializeMessage(KameoRemoteError):
    """The actor could not read the message as its message type."""
class SerializeReply(KameoRemoteError):
    """The actor's reply could not be serialized."""
class SerializeHandlerError(KameoRemoteError):
    """The handler's error could not be serialized."""
class DeserializeHandlerError(KameoRemoteError):
    """The handler's error could not be deserialized."""
class SwarmNotBootstrapped(KameoRemoteError):
    """The remote node's swarm is not bootstrapped."""
class DialFailure(KameoRemoteError):
    """The peer could not be dialed (or the dial timed out)."""
class NetworkTimeout(KameoRemoteError):
    """The request timed out (the node's ``request_timeout``)."""
class ConnectionClosed(KameoRemoteError):
    """The connection closed before the response came."""
class UnsupportedProtocols(KameoRemoteError):
    """The peer does not speak /kameo/messaging/1.0.0."""
class RemoteIoError(KameoRemoteError):
    """An I/O error on the request's stream (kameo's ``RemoteSendError::Io``)."""
class RegistryError(KameoRemoteError):
    """A lookup or registration failed (kameo's ``RegistryError``): ``code`` is
    ``KAMEO_REGISTRY_TIMEOUT``, ``KAMEO_NAME_ALREADY_REGISTERED``, ..."""
class NodeClosed(KameoRemoteError):
    """The node is closed (or closed while the operation was in flight)."""
class NodeStartError(KameoRemoteError):
    """The node could not start (a listen address could not be bound, ...)."""

class UnknownActor(KameoRemoteError):
    """No actor of that remote id is known (``actor_remote_id``)."""

    actor_remote_id: str | None

class UnknownMessage(KameoRemoteError):
    """The actor type has no message of that remote id (``actor_remote_id``,
    ``message_remote_id``). Raise it from a served handler for a message it does not know."""

    actor_remote_id: str | None
    message_remote_id: str | None

class HandlerError(KameoRemoteError):
    """The actor's handler returned an error: ``value`` is the error value (unpacked from
    ``payload``, its MessagePack bytes). Raise ``HandlerError(value)`` from a served handler
    to reply with that error value."""

    value: Any
    payload: bytes | None
    def __init__(self, value: Any = None, *, payload: bytes | None = None, message: str | None = None) -> None: ...

class RemoteActorRef:
    """An actor found by :meth:`Node.lookup` (or registered by :meth:`Node.register`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Not for use: references come from :meth:`Node.lookup`, :meth:`Node.lookup_all`
        and :meth:`Node.register` (raises ``TypeError``)."""
    actor_id: dict[str, Any]
    """``{"sequence_id": int, "peer_id": str | None}``."""
    remote_id: str
    """The actor type's ``RemoteActor::REMOTE_ID``."""
    @property
    def peer_id(self) -> str | None:
        """The base58 id of the peer hosting the actor."""
    @property
    def node(self) -> Node:
        """The node this reference sends through."""
    async def ask(
        self,
        message_remote_id: str,
        value: Any = None,
        *,
        mailbox_timeout: _DurationLike = None,
        reply_timeout: _DurationLike = None,
        immediate: bool = False,
        raw: bool = False,
    ) -> Any:
        """Ask the actor: ``value`` is packed as ``rmp_serde::to_vec_named`` writes it and
        the reply unpacked; with ``raw=True`` both are bytes as they are. Raises a
        :class:`KameoRemoteError` subclass."""
    async def tell(
        self,
        message_remote_id: str,
        value: Any = None,
        *,
        mailbox_timeout: _DurationLike = None,
        immediate: bool = False,
        raw: bool = False,
    ) -> None:
        """Tell the actor (no reply); returns once the remote node has the message."""

class _AskTellHandler(Protocol):
    def ask(self, message_remote_id: str, value: Any, /) -> Any: ...

_Handler = _AskTellHandler | Callable[[str, Any], Any] | Any

class Node:
    """A Kameo node this program owns: ``node = await Node.start(...)``; close it with
    ``await node.close()`` or ``async with``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Not for use: start a node with ``await Node.start(...)`` (raises ``TypeError``)."""
    @classmethod
    async def start(
        cls,
        *,
        keypair_seed: _Bytes | None = None,
        listen: str | Iterable[str] = ("/ip4/127.0.0.1/tcp/0",),
        bootstrap: str | Iterable[str] = (),
        mdns: bool = False,
        request_timeout: _DurationLike = 10.0,
        dial_timeout: _DurationLike = 10.0,
    ) -> Node:
        """Start a node listening on ``listen`` and dial the ``bootstrap`` peers before it
        returns. Raises :class:`NodeStartError`, :class:`DialFailure` or
        :class:`KameoError` ``KAMEO_INVALID_ARGUMENT``."""
    @property
    def peer_id(self) -> str:
        """This node's peer id, base58."""
    @property
    def listen_addrs(self) -> list[str]:
        """The addresses it listens on, each ending in ``/p2p/<peer id>``."""
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
    async def __aenter__(self) -> Node: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    async def dial(self, multiaddr: str) -> None:
        """Dial a peer; raises :class:`DialFailure` if it cannot be reached within
        ``dial_timeout``."""
    async def lookup(self, name: str) -> RemoteActorRef | None:
        """The first actor registered under ``name``, or ``None`` once the DHT query ends
        without one."""
    def lookup_all(self, name: str) -> AsyncIterator[RemoteActorRef]:
        """Every actor registered under ``name``, as the DHT query finds them."""
    async def register(self, name: str, handler: _Handler, *, remote_id: str, raw: bool = False) -> RemoteActorRef:
        """Register an actor of type ``remote_id`` under ``name`` as kameo does; its asks
        and tells reach ``handler`` (``ask``/``tell`` methods or a callable, sync or
        async). What ``ask`` returns is the reply; ``HandlerError(value)`` replies with that
        error value, another exception with ``str(exc)``."""
    async def unregister(self, name: str) -> bool:
        """Stop serving ``name``; returns whether it was registered."""
    async def close(self) -> None:
        """Close the node; operations in flight fail with :class:`NodeClosed`. Idempotent."""
