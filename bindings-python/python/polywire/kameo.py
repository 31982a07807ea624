"""Kameo remote actors: the wire format of the Rust ``kameo`` crate 0.22.2 (feature
``remote``), byte-identical to the crate itself (proven by the ``kameo-parity`` test
crate against the real one).

- Messaging (libp2p protocol :data:`MESSAGING_PROTOCOL`): a request is a
  ``SwarmRequest`` and the answer a ``SwarmResponse``, each written on its stream as
  CBOR the way libp2p's request-response cbor codec writes it, with no length prefix.
  :func:`encode_request` / :func:`decode_request` and :func:`encode_response` /
  :func:`decode_response` convert between those bytes and Python values in serde's
  externally tagged shape::

      {"Ask": {"actor_id": {"sequence_id": 42, "peer_id": "12D3KooW..."},
               "actor_remote_id": "counter", "message_remote_id": "inc",
               "payload": b"...", "mailbox_timeout": {"secs": 1, "nanos": 500000000},
               "reply_timeout": None, "immediate": False}}
      {"Ask": {"Ok": b"..."}}        {"Tell": {"Ok": None}}
      {"Tell": {"Err": "MailboxFull"}}
      {"Ask": {"Err": {"UnknownActor": {"actor_remote_id": "x"}}}}

  Unit variants are strings, other variants one-entry dicts, ``()`` and ``None`` are
  ``None``; an actor id's ``peer_id`` is base58 text or ``None`` (an actor of a node
  without a swarm). :func:`ask` and :func:`tell` build requests.
- Payloads, replies and handler errors are MessagePack as ``rmp_serde::to_vec_named``
  writes them: :func:`pack` / :func:`unpack`. Build the value the Rust type would
  serialize to: a struct is a dict of its fields, a unit enum variant its name, other
  variants ``{name: content}``, ``None``/``()`` ``None``, a tuple or ``Vec`` a list,
  ``serde_bytes`` data ``bytes`` (a plain ``Vec<u8>`` is a list of ints).
- Registry (Kademlia, :data:`REGISTRY_PROTOCOL`): :func:`provider_key`,
  :func:`metadata_key` and the record value :func:`encode_registration` /
  :func:`decode_registration`.
- Ids: :func:`remote_message_id` and :func:`remote_actor_id` compute the ids kameo's
  macros give by default; peer ids are base58 text (:func:`peer_id_from_public_key`).

Decoding accepts what kameo accepts (fields in any order, unknown fields, missing
``Option`` fields, non-minimal integers, bytes after the body, ...) and rejects what
it rejects, raising :class:`KameoError` (a ``ValueError``) with ``code`` and
``offset``; where kameo itself panics (an actor id shorter than 8 bytes, a short
registration) it raises too. Nesting is limited to kameo's depth budget of 256.

Error codes: ``KAMEO_EOF``, ``KAMEO_CBOR`` (cbor4ii, which decides, rejects an input
the reader that explains rejections would accept: not seen in the tests), ``KAMEO_CBOR_TYPE``, ``KAMEO_CBOR_UNSUPPORTED``,
``KAMEO_DEPTH_LIMIT``, ``KAMEO_LENGTH_OVERFLOW``, ``KAMEO_INVALID_UTF8``,
``KAMEO_UNKNOWN_VARIANT``, ``KAMEO_UNKNOWN_FIELD``, ``KAMEO_MISSING_FIELD``,
``KAMEO_DUPLICATE_FIELD``, ``KAMEO_DURATION_OVERFLOW``, ``KAMEO_ACTOR_ID_TOO_SHORT``,
``KAMEO_INVALID_PEER_ID``, ``KAMEO_INVALID_BASE58``, ``KAMEO_INVALID_PUBLIC_KEY``,
``KAMEO_REGISTRATION_EMPTY``, ``KAMEO_REGISTRATION_TRUNCATED``,
``KAMEO_INVALID_METADATA_KEY``, ``KAMEO_INVALID_VALUE``, ``KAMEO_MSGPACK_EOF``,
``KAMEO_MSGPACK_RESERVED``, ``KAMEO_MSGPACK_EXT``, ``KAMEO_MSGPACK_INVALID_UTF8``,
``KAMEO_MSGPACK_TRAILING`` (nesting too deep for MessagePack is ``KAMEO_DEPTH_LIMIT``, as for CBOR),
``KAMEO_MSGPACK_INTEGER_RANGE``, ``KAMEO_MSGPACK_TOO_LONG``,
``KAMEO_MSGPACK_UNHASHABLE_KEY``.
"""

from __future__ import annotations

import datetime
import math

from polywire._polywire import KameoError, PolywireTypeError
from polywire._polywire import kameo as _native

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
]

MESSAGING_PROTOCOL: str = _native.MESSAGING_PROTOCOL
REGISTRY_PROTOCOL: str = _native.REGISTRY_PROTOCOL
MAX_REQUEST_SIZE: int = _native.MAX_REQUEST_SIZE
MAX_RESPONSE_SIZE: int = _native.MAX_RESPONSE_SIZE
MAX_METADATA_SIZE: int = _native.MAX_METADATA_SIZE
MAX_DEPTH: int = _native.MAX_DEPTH
MAX_VALUE_DEPTH: int = _native.MAX_VALUE_DEPTH

encode_request = _native.encode_request
decode_request = _native.decode_request
encode_response = _native.encode_response
decode_response = _native.decode_response
encode_registration = _native.encode_registration
decode_registration = _native.decode_registration
metadata_key = _native.metadata_key
parse_metadata_key = _native.parse_metadata_key
provider_key = _native.provider_key
peer_id_from_public_key = _native.peer_id_from_public_key
peer_id_to_bytes = _native.peer_id_to_bytes
peer_id_from_bytes = _native.peer_id_from_bytes
actor_id_to_bytes = _native.actor_id_to_bytes
actor_id_from_bytes = _native.actor_id_from_bytes
remote_message_id = _native.remote_message_id
remote_actor_id = _native.remote_actor_id
pack = _native.pack
unpack = _native.unpack


def _error(code: str, message: str, cls: type = KameoError) -> Exception:
    e = cls(message)
    e.code, e.offset, e.line, e.column, e.msg = code, None, None, None, message
    return e


def _type_error(message: str) -> Exception:
    """A wrong-type argument: ``PolywireTypeError`` with ``KAMEO_INVALID_ARGUMENT``."""
    return _error("KAMEO_INVALID_ARGUMENT", message, PolywireTypeError)


_U64_MAX = 2**64 - 1


def actor_id(sequence_id: int, peer_id: str | bytes | None = None) -> dict:
    """An actor id value: ``{"sequence_id": ..., "peer_id": ...}``. ``sequence_id`` is
    checked as :func:`actor_id_to_bytes` checks it (an int 0 to 2**64 - 1); ``peer_id``
    (base58 text, its bytes or None) only for its type, and returned as given: a malformed
    peer id fails when the request is encoded."""
    if isinstance(sequence_id, bool) or not isinstance(sequence_id, int):
        raise _type_error(f"sequence_id must be an int, not {type(sequence_id).__name__}")
    if not 0 <= sequence_id <= _U64_MAX:
        # int.__repr__: no subclass code runs, and a huge int is not printed.
        shown = int.__repr__(sequence_id) if sequence_id.bit_length() < 256 else f"an int of {sequence_id.bit_length()} bits"
        raise _error("KAMEO_INVALID_VALUE", f"sequence_id must be an int in 0..=18446744073709551615, got {shown}")
    if peer_id is not None and not isinstance(peer_id, (str, bytes, bytearray, memoryview)):
        raise _type_error(f"peer_id must be a base58 peer id (str), its bytes or None, not {type(peer_id).__name__}")
    return {"sequence_id": sequence_id, "peer_id": peer_id}


def duration(value) -> dict | None:
    """A ``Duration`` value ``{"secs", "nanos"}`` from seconds (int or float), a
    :class:`datetime.timedelta`, a ``(secs, nanos)`` pair or such a dict; ``None``
    stays ``None``."""
    return _duration(value, "value")


def _duration(value, name: str) -> dict | None:
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, datetime.timedelta):
        total_us = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
        if total_us < 0:
            raise _error("KAMEO_INVALID_VALUE", f"{name}: a Duration cannot be negative")
        return {"secs": total_us // 1_000_000, "nanos": (total_us % 1_000_000) * 1000}
    if isinstance(value, tuple) and len(value) == 2:
        secs, nanos = value
        return {"secs": secs, "nanos": nanos}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _type_error(
            f"{name} must be a Duration: seconds (int or float), a timedelta, (secs, nanos) or "
            f"{{'secs', 'nanos'}}, not {type(value).__name__}"
        )
    if isinstance(value, int):
        if value < 0:
            raise _error("KAMEO_INVALID_VALUE", f"{name}: a Duration must be non-negative, got {int.__repr__(value) if value.bit_length() < 256 else 'a huge negative int'}")
        return {"secs": value, "nanos": 0}
    if not math.isfinite(value) or value < 0:
        raise _error("KAMEO_INVALID_VALUE", f"{name}: a Duration must be finite and non-negative, got {value!r}")
    secs = math.floor(value)
    nanos = round((value - secs) * 1_000_000_000)
    if nanos == 1_000_000_000:
        secs, nanos = secs + 1, 0
    return {"secs": secs, "nanos": nanos}


def _actor(value) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(f"actor_id must be an actor id dict or a sequence id (int), not {type(value).__name__}")
    return actor_id(value)


def ask(
    actor_id: dict | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout=None,
    reply_timeout=None,
    immediate: bool = False,
) -> dict:
    """A ``SwarmRequest::Ask`` value. ``actor_id`` is an actor id dict (or a bare
    sequence id), ``payload`` the MessagePack message (see :func:`pack`), timeouts
    anything :func:`duration` takes."""
    return {
        "Ask": {
            "actor_id": _actor(actor_id),
            "actor_remote_id": actor_remote_id,
            "message_remote_id": message_remote_id,
            "payload": payload,
            "mailbox_timeout": _duration(mailbox_timeout, "mailbox_timeout"),
            "reply_timeout": _duration(reply_timeout, "reply_timeout"),
            "immediate": immediate,
        }
    }


def tell(
    actor_id: dict | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout=None,
    immediate: bool = False,
) -> dict:
    """A ``SwarmRequest::Tell`` value (see :func:`ask`)."""
    return {
        "Tell": {
            "actor_id": _actor(actor_id),
            "actor_remote_id": actor_remote_id,
            "message_remote_id": message_remote_id,
            "payload": payload,
            "mailbox_timeout": _duration(mailbox_timeout, "mailbox_timeout"),
            "immediate": immediate,
        }
    }


# ---------------------------------------------------------------- the peer
#
# A Kameo node this program owns (the core's ``polywire::kameo::peer``, on libp2p
# 0.56 as kameo 0.22.2 composes it): look up, ask and tell real Kameo actors, and
# register actors of its own that Kameo programs look up and ask. Every operation is
# a coroutine of the event loop the node was started in; the node runs on a thread of
# its own and never blocks that loop.

import asyncio as _asyncio

from polywire._peer_loop import PeerLoop as _PeerLoop
from polywire._peer_loop import text_of as _text_of
from polywire._polywire import kameo_peer as _peer

__all__ += [
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


class KameoRemoteError(KameoError):
    """An ask, tell, lookup, registration or dial of a :class:`Node` failed.

    ``code`` is stable (``KAMEO_ACTOR_NOT_RUNNING``, ``KAMEO_HANDLER_ERROR``, ...:
    ``KAMEO_`` and kameo's ``RemoteSendError`` variant in upper snake case for send
    errors), ``variant`` the ``RemoteSendError`` variant name (``None`` for errors that
    are not one). Raise one from a served handler to answer with that variant.
    """

    code: str = "KAMEO_REMOTE_ERROR"
    variant: str | None = None

    def __init__(self, message: str | None = None):
        message = message or type(self).__doc__.split("\n")[0] if type(self).__doc__ else message
        super().__init__(message)
        self.msg = message
        self.offset = self.line = self.column = None


def _remote_error(name: str, variant: str | None, code: str, doc: str) -> type:
    cls = type(name, (KameoRemoteError,), {"__doc__": doc, "variant": variant, "code": code, "__module__": __name__})
    return cls


ActorNotRunning = _remote_error("ActorNotRunning", "ActorNotRunning", "KAMEO_ACTOR_NOT_RUNNING", "The actor is not running (or this node does not host it).")
ActorStopped = _remote_error("ActorStopped", "ActorStopped", "KAMEO_ACTOR_STOPPED", "The actor stopped before it replied.")
BadActorType = _remote_error("BadActorType", "BadActorType", "KAMEO_BAD_ACTOR_TYPE", "The actor is not of the remote id the reference names.")
MailboxFull = _remote_error("MailboxFull", "MailboxFull", "KAMEO_MAILBOX_FULL", "The actor's mailbox is full (an immediate send).")
ReplyTimeout = _remote_error("ReplyTimeout", "ReplyTimeout", "KAMEO_REPLY_TIMEOUT", "The actor did not reply within the reply timeout.")
SerializeMessage = _remote_error("SerializeMessage", "SerializeMessage", "KAMEO_SERIALIZE_MESSAGE", "The message could not be serialized.")
DeserializeMessage = _remote_error("DeserializeMessage", "DeserializeMessage", "KAMEO_DESERIALIZE_MESSAGE", "The actor could not read the message as its message type.")
SerializeReply = _remote_error("SerializeReply", "SerializeReply", "KAMEO_SERIALIZE_REPLY", "The actor's reply could not be serialized.")
SerializeHandlerError = _remote_error("SerializeHandlerError", "SerializeHandlerError", "KAMEO_SERIALIZE_HANDLER_ERROR", "The handler's error could not be serialized.")
DeserializeHandlerError = _remote_error("DeserializeHandlerError", "DeserializeHandlerError", "KAMEO_DESERIALIZE_HANDLER_ERROR", "The handler's error could not be deserialized.")
SwarmNotBootstrapped = _remote_error("SwarmNotBootstrapped", "SwarmNotBootstrapped", "KAMEO_SWARM_NOT_BOOTSTRAPPED", "The remote node's swarm is not bootstrapped.")
DialFailure = _remote_error("DialFailure", "DialFailure", "KAMEO_DIAL_FAILURE", "The peer could not be dialed (or the dial timed out).")
NetworkTimeout = _remote_error("NetworkTimeout", "NetworkTimeout", "KAMEO_NETWORK_TIMEOUT", "The request timed out (the node's request_timeout).")
ConnectionClosed = _remote_error("ConnectionClosed", "ConnectionClosed", "KAMEO_CONNECTION_CLOSED", "The connection closed before the response came.")
UnsupportedProtocols = _remote_error("UnsupportedProtocols", "UnsupportedProtocols", "KAMEO_UNSUPPORTED_PROTOCOLS", "The peer does not speak /kameo/messaging/1.0.0.")
RemoteIoError = _remote_error("RemoteIoError", "Io", "KAMEO_IO", "An I/O error on the request's stream (kameo's RemoteSendError::Io).")
RegistryError = _remote_error("RegistryError", None, "KAMEO_REGISTRY_ERROR", "A lookup or registration failed (kameo's RegistryError); see code.")
NodeClosed = _remote_error("NodeClosed", None, "KAMEO_NODE_CLOSED", "The node is closed (or closed while the operation was in flight).")
NodeStartError = _remote_error("NodeStartError", None, "KAMEO_START_FAILED", "The node could not start (a listen address could not be bound, ...).")


class UnknownActor(KameoRemoteError):
    """No actor of that remote id is known (``actor_remote_id``)."""

    variant = "UnknownActor"
    code = "KAMEO_UNKNOWN_ACTOR"
    actor_remote_id: str | None = None


class UnknownMessage(KameoRemoteError):
    """The actor type has no message of that remote id (``actor_remote_id``,
    ``message_remote_id``). Raise it from a served handler for a message it does not
    know."""

    variant = "UnknownMessage"
    code = "KAMEO_UNKNOWN_MESSAGE"
    actor_remote_id: str | None = None
    message_remote_id: str | None = None


class HandlerError(KameoRemoteError):
    """The actor's handler returned an error: ``value`` is the error value (unpacked
    from ``payload``, its MessagePack bytes, or ``None`` with ``raw=True``).

    Raise ``HandlerError(value)`` from a served handler to reply with that error value
    (packed as :func:`pack` packs it)."""

    variant = "HandlerError"
    code = "KAMEO_HANDLER_ERROR"

    def __init__(self, value=None, *, payload: bytes | None = None, message: str | None = None):
        super().__init__(message or f"the actor's handler returned an error: {value!r}")
        self.value = value
        self.payload = payload


_BY_VARIANT = {
    cls.variant: cls
    for cls in (
        ActorNotRunning, ActorStopped, BadActorType, MailboxFull, ReplyTimeout, SerializeMessage,
        DeserializeMessage, SerializeReply, SerializeHandlerError, DeserializeHandlerError,
        SwarmNotBootstrapped, DialFailure, NetworkTimeout, ConnectionClosed, UnsupportedProtocols,
        RemoteIoError, UnknownActor, UnknownMessage, HandlerError,
    )
}
_BY_CODE = {"KAMEO_NODE_CLOSED": NodeClosed, "KAMEO_START_FAILED": NodeStartError}


def _peer_error(info, raw: bool = False) -> Exception:
    code, message, variant, payload, detail = info
    if variant == "HandlerError":
        value = None
        if payload is not None and not raw:
            try:
                value = unpack(payload)
            except KameoError:
                value = payload
        e: KameoRemoteError = HandlerError(value, payload=payload, message=message)
    elif variant in _BY_VARIANT:
        e = _BY_VARIANT[variant](message)
    elif code in _BY_CODE:
        e = _BY_CODE[code](message)
    elif code.startswith("KAMEO_REGISTRY") or code in ("KAMEO_NAME_ALREADY_REGISTERED", "KAMEO_INVALID_REGISTRATION", "KAMEO_BAD_ACTOR_TYPE"):
        e = RegistryError(message)
    else:
        e = KameoRemoteError(message)
    e.code = code
    if detail is not None:
        e.actor_remote_id = detail[0]
        if detail[1] is not None:
            e.message_remote_id = detail[1]
    return e


def _seconds(value, name: str) -> float | None:
    """Seconds (a float) for the native side from anything :func:`duration` takes."""
    d = _duration(value, name)
    if d is None:
        return None
    try:
        secs, nanos = d["secs"], d["nanos"]
    except (KeyError, TypeError):
        raise _type_error(f"{name} must be a Duration with int secs and nanos") from None
    if isinstance(secs, bool) or not isinstance(secs, int) or isinstance(nanos, bool) or not isinstance(nanos, int):
        raise _type_error(f"{name} must be a Duration with int secs and nanos")
    if not 0 <= secs <= _U64_MAX or not 0 <= nanos < 1_000_000_000:
        raise _error("KAMEO_INVALID_VALUE", f"{name}: a Duration needs secs in 0..=2**64-1 and nanos in 0..1e9")
    return int.__int__(secs) + int.__int__(nanos) / 1e9


def _str_list(value, name: str) -> list:
    if isinstance(value, str):
        return [_name(value, name)]
    if isinstance(value, (bytes, bytearray, memoryview, dict)):
        raise _type_error(f"{name} must be a multiaddr (str) or an iterable of them, not {type(value).__name__}")
    try:
        items = list(value)
    except TypeError:
        raise _type_error(f"{name} must be a multiaddr (str) or an iterable of them, not {type(value).__name__}") from None
    return [_name(item, name) for item in items]


def _name(value, what: str = "name") -> str:
    if not isinstance(value, str):
        raise _type_error(f"{what} must be a str, not {type(value).__name__}")
    text = str.__str__(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _error("KAMEO_INVALID_VALUE", f"{what} holds an unpaired surrogate (expected valid Unicode text)") from None
    return text


def _flag(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise _type_error(f"{name} must be a bool, not {type(value).__name__}")
    return value


class RemoteActorRef:
    """An actor found by :meth:`Node.lookup` (or registered by :meth:`Node.register`):
    ``actor_id`` (``{"sequence_id", "peer_id"}``), ``remote_id`` (its type's
    ``RemoteActor::REMOTE_ID``) and ``peer_id``. Ask and tell it with the remote ids of
    its messages (``#[remote_message("...")]``)."""

    __slots__ = ("_node", "_id_bytes", "actor_id", "remote_id", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise _type_error("references come from Node.lookup, Node.lookup_all and Node.register")

    @classmethod
    def _new(cls, node: Node, id_bytes: bytes, sequence_id: int, peer_id: str | None, remote_id: str) -> RemoteActorRef:
        self = object.__new__(cls)
        self._node = node
        self._id_bytes = id_bytes
        self.actor_id = {"sequence_id": sequence_id, "peer_id": peer_id}
        self.remote_id = remote_id
        return self

    @property
    def peer_id(self) -> str | None:
        """The base58 id of the peer hosting the actor."""
        return self.actor_id["peer_id"]

    @property
    def node(self) -> Node:
        """The node this reference sends through."""
        return self._node

    def __repr__(self) -> str:
        return f"RemoteActorRef(remote_id={self.remote_id!r}, actor_id={self.actor_id!r})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, RemoteActorRef):
            return NotImplemented
        return self._id_bytes == other._id_bytes and self.remote_id == other.remote_id

    def __hash__(self) -> int:
        return hash((self._id_bytes, self.remote_id))

    async def ask(
        self,
        message_remote_id: str,
        value=None,
        *,
        mailbox_timeout=None,
        reply_timeout=None,
        immediate: bool = False,
        raw: bool = False,
    ):
        """Ask the actor: ``value`` is packed as ``rmp_serde::to_vec_named`` writes it
        (:func:`pack`) and the reply unpacked (:func:`unpack`); with ``raw=True`` both
        are bytes as they are. Timeouts take what :func:`duration` takes. Raises a
        :class:`KameoRemoteError` subclass: :class:`HandlerError` (with ``value``),
        :class:`UnknownMessage`, :class:`ReplyTimeout`, ..."""
        message_remote_id = _name(message_remote_id, "message_remote_id")
        payload = self._payload(value, raw)
        args = (_seconds(mailbox_timeout, "mailbox_timeout"), _seconds(reply_timeout, "reply_timeout"), _flag(immediate, "immediate"))
        fut = self._node._call("ask", self._id_bytes, self.remote_id, message_remote_id, payload, *args)
        try:
            reply = await fut
        except _RawHandlerError as e:
            raise _peer_error(e.args[0], raw) from None
        return reply if raw else unpack(reply)

    async def tell(self, message_remote_id: str, value=None, *, mailbox_timeout=None, immediate: bool = False, raw: bool = False) -> None:
        """Tell the actor (no reply); returns once the remote node has the message."""
        message_remote_id = _name(message_remote_id, "message_remote_id")
        payload = self._payload(value, raw)
        args = (_seconds(mailbox_timeout, "mailbox_timeout"), _flag(immediate, "immediate"))
        fut = self._node._call("tell", self._id_bytes, self.remote_id, message_remote_id, payload, *args)
        try:
            await fut
        except _RawHandlerError as e:
            raise _peer_error(e.args[0], raw) from None

    @staticmethod
    def _payload(value, raw) -> bytes:
        if _flag(raw, "raw"):
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise _type_error(f"with raw=True the message must be bytes, not {type(value).__name__}")
            return bytes(value)
        return pack(value)


class _RawHandlerError(Exception):
    """Carries a native error tuple to the caller, which builds the exception (it
    knows whether the handler error is to be unpacked)."""


_DEFAULT_LISTEN = ("/ip4/127.0.0.1/tcp/0",)


class Node(_PeerLoop):
    """A Kameo node this program owns. Start one with ``await Node.start(...)``; close
    it with ``await node.close()`` or ``async with``.

    It is composed as kameo composes its swarm: TCP + noise + yamux and QUIC
    (``/ip4/.../udp/0/quic-v1``), kameo's Kademlia registry on
    ``/kameo/registry/1.0.0`` and request-response with the cbor codec on
    ``/kameo/messaging/1.0.0``; mDNS when asked. Links between actors are not supported."""

    # What _PeerLoop (the way back from the native node to the loop) raises and reports.
    _closed_error = NodeClosed
    _closed_text = "the node is closed"
    _start_error = NodeStartError
    _origin = "polywire.kameo"

    def __init__(self, *args, **kwargs):
        raise _type_error("start a node with: node = await Node.start(...)")

    @classmethod
    async def start(
        cls,
        *,
        keypair_seed: bytes | None = None,
        listen=_DEFAULT_LISTEN,
        bootstrap=(),
        mdns: bool = False,
        request_timeout=10.0,
        dial_timeout=10.0,
    ) -> Node:
        """Start a node listening on ``listen`` (multiaddrs; port 0 picks one) and dial
        the ``bootstrap`` peers (multiaddrs ending in ``/p2p/<peer id>``) before it
        returns: lookups and registrations go to their Kademlia tables. ``keypair_seed``
        (32 bytes) fixes the Ed25519 identity and so the peer id. ``request_timeout``:
        how long an ask or tell waits for the remote node's response (kameo's default,
        10 s); ``dial_timeout``: how long a dial may take."""
        if keypair_seed is not None:
            if not isinstance(keypair_seed, (bytes, bytearray, memoryview)):
                raise _type_error(f"keypair_seed must be 32 bytes or None, not {type(keypair_seed).__name__}")
            keypair_seed = bytes(keypair_seed)
        listen_l = _str_list(listen, "listen")
        bootstrap_l = _str_list(bootstrap, "bootstrap")
        _flag(mdns, "mdns")
        rt = _seconds(request_timeout, "request_timeout")
        dt = _seconds(dial_timeout, "dial_timeout")
        self = object.__new__(cls)
        self._init_loop(_asyncio.get_running_loop())
        self._handlers = {}

        def make(notify):
            try:
                return _peer._PeerNode(notify, keypair_seed, listen_l, bootstrap_l, mdns,
                                       rt if rt is not None else 10.0, dt if dt is not None else 10.0)
            except KameoError as e:
                variant = "DialFailure" if e.code == "KAMEO_DIAL_FAILURE" else None
                raise _peer_error((e.code, str(e), variant, None, None)) from None

        await self._start_native(make)
        return self

    # -- state

    @property
    def peer_id(self) -> str:
        """This node's peer id, base58."""
        return self._native.peer_id

    @property
    def listen_addrs(self) -> list:
        """The addresses it listens on, each ending in ``/p2p/<peer id>``."""
        return self._native.listen_addrs

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running"
        return f"<polywire.kameo.Node {self.peer_id} {state}>"

    # -- plumbing (the rest is _PeerLoop's)

    @staticmethod
    def _fail_safely(req, e: BaseException) -> None:
        _fail_safely(req, e)

    def _complete(self, token, kind, value) -> None:
        if kind == _peer.INBOUND:
            self._serve(value)
            return
        waiter = self._pending.get(token)
        if waiter is None:
            return
        if isinstance(waiter, _asyncio.Queue):
            final = kind == _peer.LOOKUP_END or (kind == _peer.ERROR and value[0] == "KAMEO_NODE_CLOSED")
            if final:
                del self._pending[token]
            waiter.put_nowait((kind, value))
            return
        del self._pending[token]
        if waiter.done():
            return
        if kind == _peer.ERROR:
            waiter.set_exception(_RawHandlerError(value))
        else:
            waiter.set_result(value)

    def _ref(self, t) -> RemoteActorRef:
        id_bytes, sequence_id, peer_id, remote_id = t
        return RemoteActorRef._new(self, id_bytes, sequence_id, peer_id, remote_id)

    async def _await(self, fut):
        try:
            return await fut
        except _RawHandlerError as e:
            raise _peer_error(e.args[0]) from None

    # -- operations

    async def dial(self, multiaddr: str) -> None:
        """Dial a peer (``/ip4/127.0.0.1/tcp/4001/p2p/12D3KooW...``); raises
        :class:`DialFailure` if it cannot be reached within ``dial_timeout``."""
        await self._await(self._call("dial", _name(multiaddr, "multiaddr")))

    async def lookup(self, name: str) -> RemoteActorRef | None:
        """The first actor registered under ``name``, or ``None`` once the DHT query
        ends without one (kameo's ``RemoteActorRef::lookup``)."""
        async for ref in self.lookup_all(name):
            return ref
        return None

    async def lookup_all(self, name: str):
        """Every actor registered under ``name``, as the DHT query finds them (kameo's
        ``lookup_all``): ``async for ref in node.lookup_all(name)``."""
        self._check_open()
        name = _name(name)
        token = next(self._tokens)
        queue: _asyncio.Queue = _asyncio.Queue()
        self._pending[token] = queue
        self._native.lookup(name, token)
        try:
            while True:
                kind, value = await queue.get()
                if kind == _peer.LOOKUP_ITEM:
                    yield self._ref(value)
                elif kind == _peer.LOOKUP_END:
                    return
                else:
                    raise _peer_error(value)
        finally:
            self._pending.pop(token, None)

    async def register(self, name: str, handler, *, remote_id: str, raw: bool = False) -> RemoteActorRef:
        """Register an actor of type ``remote_id`` under ``name`` as kameo does (provide
        the name in the DHT, put its ``{name}:meta:{peer_id}`` record), so that a Rust
        program's ``RemoteActorRef::<A>::lookup(name)`` (with ``A::REMOTE_ID ==
        remote_id``) finds it and its asks and tells reach ``handler``.

        ``handler`` is an object with ``ask(message_remote_id, value)`` and
        ``tell(message_remote_id, value)`` methods (either may be missing; a tell then
        goes to ``ask`` and its result is dropped), or a callable ``handler(
        message_remote_id, value)`` for both; each may be sync or ``async``. ``value``
        is the unpacked message (bytes with ``raw=True``). What ``ask`` returns is the
        reply, packed (bytes as they are with ``raw=True``). An exception it raises
        becomes the reply's error, which a kameo caller reads as
        ``RemoteSendError::HandlerError(e)``: ``HandlerError(value)`` sends ``value``
        (packed); any other exception sends its text, ``str(exc)`` (so a caller whose
        handler error type is ``String`` reads it); a :class:`KameoRemoteError`
        subclass such as :class:`UnknownMessage` sends that variant instead."""
        name = _name(name)
        remote_id = _name(remote_id, "remote_id")
        _flag(raw, "raw")
        if not (callable(handler) or hasattr(handler, "ask") or hasattr(handler, "tell")):
            raise _type_error("handler must have ask/tell methods or be callable")
        if name in self._handlers:
            raise _peer_error(("KAMEO_NAME_ALREADY_REGISTERED", f"{name!r} is already registered by this node", None, None, None))
        self._handlers[name] = (handler, raw)
        try:
            return self._ref(await self._await(self._call("register", name, remote_id)))
        except BaseException:
            self._handlers.pop(name, None)
            raise

    async def unregister(self, name: str) -> bool:
        """Stop serving ``name``: it is no longer provided, its record is removed, and
        asks for it get ``ActorNotRunning``. Returns whether it was registered."""
        name = _name(name)
        self._handlers.pop(name, None)
        return await self._await(self._call("unregister", name))

    async def close(self) -> None:
        """Close the node: its listeners and connections close and operations in flight
        fail with :class:`NodeClosed`. Idempotent."""
        if self._closed:
            return
        # The node answered everything in flight with KAMEO_NODE_CLOSED; anything the
        # loop has not seen yet is failed here.
        for waiter in (await self._close_native()).values():
            if isinstance(waiter, _asyncio.Queue):
                waiter.put_nowait((_peer.ERROR, ("KAMEO_NODE_CLOSED", "the node is closed", None, None, None)))
            elif not waiter.done():
                waiter.set_exception(_RawHandlerError(("KAMEO_NODE_CLOSED", "the node is closed", None, None, None)))

    # -- serving

    def _serve_request(self, req) -> None:
        entry = self._handlers.get(req.name)
        if entry is None:
            req.fail("ActorNotRunning")
            return
        handler, raw = entry
        if raw:
            value = req.payload
        else:
            try:
                value = unpack(req.payload)
            except KameoError as e:
                req.fail("DeserializeMessage", None, str(e))
                return
        if req.is_ask:
            fn = getattr(handler, "ask", None) or (handler if callable(handler) else None)
        else:
            fn = getattr(handler, "tell", None) or getattr(handler, "ask", None) or (handler if callable(handler) else None)
        if fn is None:
            req.fail("UnknownMessage")
            return
        self._run_handler(req, lambda: fn(req.message_remote_id, value), _raw_answer if raw else _answer)


def _raw_answer(req, result) -> None:
    if not req.is_ask:
        return
    if not isinstance(result, (bytes, bytearray, memoryview)):
        req.fail("SerializeReply", None, f"with raw=True the reply must be bytes, not {type(result).__name__}")
        return
    req.respond(bytes(result))


def _answer(req, result) -> None:
    if not req.is_ask:
        return
    try:
        payload = pack(result)
    except Exception as e:  # noqa: BLE001 - a value pack refuses, or one whose own code raised
        req.fail("SerializeReply", None, _text_of(e))
        return
    req.respond(payload)


def _fail(req, e: BaseException) -> None:
    if isinstance(e, HandlerError):
        try:
            payload = e.payload if e.payload is not None else pack(e.value)
        except Exception as pe:  # noqa: BLE001
            req.fail("SerializeHandlerError", None, _text_of(pe))
            return
        req.fail("HandlerError", payload)
    elif isinstance(e, KameoRemoteError) and e.variant is not None:
        req.fail(e.variant, None, _text_of(e))
    else:
        req.fail("HandlerError", pack(_text_of(e)))


def _fail_safely(req, e: BaseException) -> None:
    """Answer ``req`` with the error reply for ``e``; if building that reply
    raises in turn (a ``HandlerError`` whose attributes raise), a plain
    ``HandlerError`` with a text; never raises."""
    try:
        _fail(req, e)
    except Exception:  # noqa: BLE001
        try:
            req.fail("HandlerError", pack("the handler failed, and its error could not be turned into a reply"))
        except Exception:  # noqa: BLE001
            pass


def __dir__() -> list[str]:
    # What tab completion lists: the API, not the names this module imports.
    return sorted(__all__)
