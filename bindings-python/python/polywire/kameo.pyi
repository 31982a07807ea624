import datetime
from typing import Any, Final, TypedDict

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
]

_Bytes = bytes | bytearray | memoryview
_PeerId = str | bytes
_DurationLike = Duration | float | int | datetime.timedelta | tuple[int, int] | None

MESSAGING_PROTOCOL: Final[str]
"""``/kameo/messaging/1.0.0``"""
REGISTRY_PROTOCOL: Final[str]
"""``/kameo/registry/1.0.0``"""
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
    sequence_id: int
    peer_id: str | None
    """Base58 peer id; ``None`` for an actor of a node without a swarm."""

class Duration(TypedDict):
    secs: int
    nanos: int

class Registration(TypedDict):
    sequence_id: int
    peer_id: str | None
    remote_id: str

def encode_request(value: dict[str, Any]) -> bytes:
    """CBOR bytes of a ``SwarmRequest`` (``{"Ask": {...}}``, ``{"Tell": {...}}``,
    ``{"Link": ...}``, ``{"Unlink": ...}``, ``{"SignalLinkDied": ...}``)."""

def decode_request(data: _Bytes) -> dict[str, Any]: ...
def encode_response(value: dict[str, Any]) -> bytes:
    """CBOR bytes of a ``SwarmResponse`` (``{"Ask": {"Ok": b"..."}}``,
    ``{"Tell": {"Err": "MailboxFull"}}``, ``{"OutboundFailure": "DialFailure"}``, ...)."""

def decode_response(data: _Bytes) -> dict[str, Any]: ...
def encode_registration(sequence_id: int, peer_id: _PeerId | None, remote_id: str) -> bytes: ...
def decode_registration(data: _Bytes) -> Registration: ...
def metadata_key(actor_name: str, peer_id: _PeerId) -> str:
    """``{actor_name}:meta:{base58 peer id}``"""

def parse_metadata_key(key: str | _Bytes) -> tuple[str, str]: ...
def provider_key(actor_name: str) -> bytes: ...
def peer_id_from_public_key(key: _Bytes) -> str:
    """Base58 peer id of a 32-byte Ed25519 public key or a protobuf-encoded key."""

def peer_id_to_bytes(peer_id: _PeerId) -> bytes: ...
def peer_id_from_bytes(data: _Bytes) -> str: ...
def actor_id_to_bytes(sequence_id: int, peer_id: _PeerId | None = None) -> bytes: ...
def actor_id_from_bytes(data: _Bytes) -> ActorId: ...
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

def remote_actor_id(module_path: str, ident: str) -> str: ...
def pack(value: Any) -> bytes:
    """MessagePack bytes of a value, as ``rmp_serde::to_vec_named`` writes it."""

def unpack(data: _Bytes) -> Any: ...
def actor_id(sequence_id: int, peer_id: _PeerId | None = None) -> ActorId: ...
def duration(value: _DurationLike) -> Duration | None: ...
def ask(
    actor_id: ActorId | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout: _DurationLike = None,
    reply_timeout: _DurationLike = None,
    immediate: bool = False,
) -> dict[str, Any]: ...
def tell(
    actor_id: ActorId | int,
    actor_remote_id: str,
    message_remote_id: str,
    payload: bytes,
    *,
    mailbox_timeout: _DurationLike = None,
    immediate: bool = False,
) -> dict[str, Any]: ...
