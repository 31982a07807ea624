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

Error codes: ``KAMEO_EOF``, ``KAMEO_CBOR_TYPE``, ``KAMEO_CBOR_UNSUPPORTED``,
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
