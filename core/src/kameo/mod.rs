//! Kameo remote-actor protocol codec, byte-identical to the `kameo` crate
//! 0.22.2 (feature `remote`).
//!
//! - Messaging (`/kameo/messaging/1.0.0`): [`SwarmRequest`] and
//!   [`SwarmResponse`] are CBOR as libp2p's request-response cbor codec
//!   writes them (cbor4ii serde rules, no length prefix, see
//!   [`model`]); only the message payload, the reply and a
//!   handler error are MessagePack ([`msgpack`], as
//!   `rmp_serde::to_vec_named`).
//! - Registry (Kademlia, `/kameo/registry/1.0.0`): the provider key is the
//!   actor name's UTF-8 bytes, the metadata record key
//!   `{name}:meta:{base58 peer id}`, its value an [`ActorRegistration`].
//! - Ids: [`PeerId`] (multihash bytes / base58 text), [`ActorId`],
//!   [`remote_message_id`] and [`remote_actor_id`] (the macros' default ids).
//!
//! Decoding accepts exactly what kameo accepts — fields in any order,
//! unknown fields, missing `Option` fields, non-minimal integers, the other
//! oddities of cbor4ii 0.3 listed in [`cbor`], trailing bytes
//! after the body — and rejects what it rejects, with typed `KAMEO_*`
//! errors; where kameo panics (an `ActorId` shorter than 8 bytes, a
//! registration shorter than its peer-id length says) it returns an error.
//! Nesting is limited to kameo's own depth budget of 256 ([`MAX_DEPTH`]);
//! lengths are checked against the input before anything is allocated.
//!
//! The bindings work on [`Value`], a JSON-like tree with bytes in serde's
//! externally tagged shape ([`request_to_value`], [`request_from_value`], ...).

pub mod cbor;
pub mod ids;
pub mod model;
pub mod msgpack;
#[cfg(feature = "peer")]
pub mod peer;
pub mod value;
mod wire;

pub use cbor::MAX_DEPTH;
pub use ids::{ActorId, PeerId};
pub use model::{ActorStopReason, PanicError, PanicReason, RemoteSendError, SwarmRequest, SwarmResponse};
pub use value::{
    actor_id_from_value, actor_id_to_value, peer_id_from_value, request_from_value, request_to_value, response_from_value,
    response_to_value, stop_reason_from_value, stop_reason_to_value, Value, MAX_VALUE_DEPTH,
};

use crate::error::{Error, Format, Result};

pub(crate) fn err(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(Format::Kameo, code, message)
}

/// libp2p stream protocol of kameo's request/response messaging.
pub const MESSAGING_PROTOCOL: &str = "/kameo/messaging/1.0.0";
/// Kademlia protocol of kameo's actor registry.
pub const REGISTRY_PROTOCOL: &str = "/kameo/registry/1.0.0";
/// The cbor codec reads at most this much of a request stream (1 MiB)...
pub const MAX_REQUEST_SIZE: usize = 1024 * 1024;
/// ... and of a response stream (10 MiB).
pub const MAX_RESPONSE_SIZE: usize = 10 * 1024 * 1024;
/// The registry drops metadata records with larger values (64 KiB).
pub const MAX_METADATA_SIZE: usize = 64 * 1024;

// ---------------------------------------------------------------- messaging

// Which implementation each direction uses (see [`paths`]), measured by
// `kameo-parity/benches/codec.rs` (figures in docs/performance.md):
// - decoding is cbor4ii's, so what is accepted is kameo's by construction
//   (equal speed on requests, 1.25x slower on responses: 80 ns, a tenth of
//   the bindings' conversion to their values);
// - responses encode through serde and cbor4ii (1.3x faster than the
//   hand-written writer);
// - requests encode with the hand-written writer, 1.8x faster than serde's
//   path; the two are proven to write the same bytes on random requests
//   (core/tests/kameo_props.rs, the kameo_decode fuzz body) and against
//   kameo's own bytes (kameo-parity).

/// CBOR bytes of a request, as kameo writes them on the stream.
pub fn encode_request(req: &SwarmRequest) -> Vec<u8> {
    paths::encode_request_handwritten(req)
}

/// CBOR bytes of a response, as kameo writes them on the stream.
pub fn encode_response(resp: &SwarmResponse) -> Vec<u8> {
    paths::encode_response_serde(resp)
}

/// Decode a request stream as kameo does: only its first
/// [`MAX_REQUEST_SIZE`] bytes are read, bytes after the CBOR body are
/// ignored. Returns the request and the length of its body.
///
/// cbor4ii decides (kameo's types with serde's derives, see `wire`); when
/// it rejects the input, the hand-written reader says where and why.
pub fn decode_request_prefix(data: &[u8]) -> Result<(SwarmRequest, usize)> {
    let data = &data[..data.len().min(MAX_REQUEST_SIZE)];
    match wire::from_slice_prefix::<wire::SwarmRequest>(data) {
        Ok((req, n)) => Ok((wire::into_request(req), n)),
        Err(why) => Err(explain(paths::decode_request_handwritten(data), &why)),
    }
}

/// The error of an input cbor4ii rejected: the hand-written reader's, with
/// its byte offset and `KAMEO_*` code. Should that reader accept it (the two
/// disagree, which the parity tests and fuzz targets look for), cbor4ii's
/// verdict stands.
fn explain<T>(hand: Result<T>, why: &wire::DecodeError) -> Error {
    match hand {
        Err(e) => e,
        Ok(_) => err("KAMEO_CBOR", format!("kameo's CBOR decoder (cbor4ii) rejects this input: {why}")),
    }
}

/// The two implementations of the messaging CBOR, for the benchmarks and
/// the parity tests: serde's derives on kameo's declarations through cbor4ii
/// (`wire`), and the hand-written writer and reader (`cbor`, `model`), which
/// write requests and explain rejected inputs.
#[doc(hidden)]
pub mod paths {
    use super::*;

    pub fn encode_request_serde(req: &SwarmRequest) -> Vec<u8> {
        wire::to_vec(&wire::request(req), request_size_hint(req))
    }

    pub fn encode_response_serde(resp: &SwarmResponse) -> Vec<u8> {
        let reply = match resp {
            SwarmResponse::Ask(Ok(b) | Err(RemoteSendError::HandlerError(b))) => b.len(),
            _ => 0,
        };
        // A byte of the reply takes 1 or 2 bytes in an array of integers.
        wire::to_vec(&wire::response(resp), 64 + 2 * reply)
    }

    /// The encoded size rounded up, so the `Vec` grows at most once.
    fn request_size_hint(req: &SwarmRequest) -> usize {
        match req {
            SwarmRequest::Ask { actor_remote_id, message_remote_id, payload, .. }
            | SwarmRequest::Tell { actor_remote_id, message_remote_id, payload, .. } => {
                256 + actor_remote_id.len() + message_remote_id.len() + 2 * payload.len()
            }
            _ => 256,
        }
    }

    pub fn encode_request_handwritten(req: &SwarmRequest) -> Vec<u8> {
        let mut w = cbor::Writer::new();
        model::write_request(&mut w, req);
        w.out
    }

    pub fn encode_response_handwritten(resp: &SwarmResponse) -> Vec<u8> {
        let mut w = cbor::Writer::new();
        model::write_response(&mut w, resp);
        w.out
    }

    pub fn decode_request_handwritten(data: &[u8]) -> Result<(SwarmRequest, usize)> {
        let mut r = cbor::Reader::new(data);
        let req = model::read_request(&mut r)?;
        Ok((req, r.pos))
    }

    pub fn decode_response_handwritten(data: &[u8]) -> Result<(SwarmResponse, usize)> {
        let mut r = cbor::Reader::new(data);
        let resp = model::read_response(&mut r)?;
        Ok((resp, r.pos))
    }
}

/// Decode a request (see [`decode_request_prefix`]).
pub fn decode_request(data: &[u8]) -> Result<SwarmRequest> {
    decode_request_prefix(data).map(|(v, _)| v)
}

/// Decode a response stream as kameo does: only its first
/// [`MAX_RESPONSE_SIZE`] bytes are read, bytes after the body are ignored.
pub fn decode_response_prefix(data: &[u8]) -> Result<(SwarmResponse, usize)> {
    let data = &data[..data.len().min(MAX_RESPONSE_SIZE)];
    match wire::from_slice_prefix::<wire::SwarmResponse>(data) {
        Ok((resp, n)) => Ok((wire::into_response(resp), n)),
        Err(why) => Err(explain(paths::decode_response_handwritten(data), &why)),
    }
}

/// Decode a response (see [`decode_response_prefix`]).
pub fn decode_response(data: &[u8]) -> Result<SwarmResponse> {
    decode_response_prefix(data).map(|(v, _)| v)
}

/// CBOR bytes of a request given as a [`Value`].
pub fn encode_request_value(v: &Value) -> Result<Vec<u8>> {
    request_from_value(v).map(|r| encode_request(&r))
}

/// A decoded request as a [`Value`].
pub fn decode_request_value(data: &[u8]) -> Result<Value> {
    decode_request(data).map(|r| request_to_value(&r))
}

/// CBOR bytes of a response given as a [`Value`].
pub fn encode_response_value(v: &Value) -> Result<Vec<u8>> {
    response_from_value(v).map(|r| encode_response(&r))
}

/// A decoded response as a [`Value`].
pub fn decode_response_value(data: &[u8]) -> Result<Value> {
    decode_response(data).map(|r| response_to_value(&r))
}

// ---------------------------------------------------------------- registry

/// The value of an actor's metadata record
/// (`kameo::remote::registry::ActorRegistration`): u8 peer-id length, the
/// actor id's bytes (u64 LE sequence id, peer-id multihash), the remote id
/// in UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorRegistration {
    pub actor_id: ActorId,
    pub remote_id: String,
}

impl ActorRegistration {
    pub fn new(actor_id: ActorId, remote_id: impl Into<String>) -> ActorRegistration {
        ActorRegistration { actor_id, remote_id: remote_id.into() }
    }

    /// `ActorRegistration::into_bytes`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let id = self.actor_id.to_bytes();
        let mut out = Vec::with_capacity(1 + id.len() + self.remote_id.len());
        // a peer id is at most 75 bytes (10-byte code, size, 64-byte digest)
        out.push((id.len() - 8) as u8);
        out.extend_from_slice(&id);
        out.extend_from_slice(self.remote_id.as_bytes());
        out
    }

    /// `ActorRegistration::from_bytes`, with errors where kameo panics
    /// (fewer bytes than the peer-id length byte promises).
    pub fn from_bytes(data: &[u8]) -> Result<ActorRegistration> {
        let Some((&peer_len, rest)) = data.split_first() else {
            return Err(err("KAMEO_REGISTRATION_EMPTY", "expected an actor registration, got no bytes"));
        };
        let id_len = 8 + usize::from(peer_len);
        let (Some(id), Some(remote_id)) = (rest.get(..id_len), rest.get(id_len..)) else {
            return Err(err(
                "KAMEO_REGISTRATION_TRUNCATED",
                format!("expected {} bytes of actor id after the length byte, got {}", id_len, rest.len()),
            )
            .at(1));
        };
        let actor_id = ActorId::from_bytes(id).map_err(|e| e.shifted(1))?;
        let remote_id = std::str::from_utf8(remote_id)
            .map_err(|e| err("KAMEO_INVALID_UTF8", "expected the remote id in valid UTF-8").at(1 + id_len + e.valid_up_to()))?;
        Ok(ActorRegistration { actor_id, remote_id: remote_id.to_owned() })
    }
}

/// Kademlia provider key of an actor name: its UTF-8 bytes.
pub fn provider_key(actor_name: &str) -> Vec<u8> {
    actor_name.as_bytes().to_vec()
}

/// Kademlia record key of an actor's metadata: `{name}:meta:{peer id}`.
pub fn metadata_key(actor_name: &str, peer_id: &PeerId) -> String {
    format!("{actor_name}:meta:{peer_id}")
}

/// Split a metadata record key the way kameo's registry validates it: UTF-8,
/// split at the first `:meta:`, a non-empty name and a base58 peer id.
pub fn parse_metadata_key(key: &[u8]) -> Result<(String, PeerId)> {
    let bad = |m: &str| err("KAMEO_INVALID_METADATA_KEY", format!("expected {{name}}:meta:{{peer id}}: {m}"));
    let key = std::str::from_utf8(key).map_err(|_| bad("the key is not UTF-8"))?;
    let (name, peer) = key.split_once(":meta:").ok_or_else(|| bad("no \":meta:\" separator"))?;
    if name.is_empty() {
        return Err(bad("the actor name is empty"));
    }
    let peer = PeerId::from_base58(peer).map_err(|e| bad(e.message()))?;
    Ok((name.to_owned(), peer))
}

// ---------------------------------------------------------------- remote ids

/// FNV-1a 64 (`const_fnv1a_hash::fnv1a_hash_str_64`).
pub fn fnv1a_64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The default id `#[remote_message]` gives `impl Message<M> for A`:
/// lowercase unpadded hex of FNV-1a 64 over
/// `"{crate}::{major}::{module path}::{M}::{A}{impl generics}"`, where the
/// type tokens have their spaces removed (the macro strips the spaces that
/// token printing inserts, so `"Vec < u8 >"` and `"Vec<u8>"` agree).
/// `crate_name` is `CARGO_PKG_NAME` (dashes kept), `crate_major`
/// `CARGO_PKG_VERSION_MAJOR`, `module_path` `module_path!()` of the impl.
pub fn remote_message_id(
    crate_name: &str,
    crate_major: u64,
    module_path: &str,
    message_type: &str,
    actor_type: &str,
    impl_generics: &str,
) -> String {
    let strip = |s: &str| s.replace(' ', "");
    let text =
        format!("{crate_name}::{crate_major}::{module_path}::{}::{}{}", strip(message_type), strip(actor_type), strip(impl_generics));
    format!("{:x}", fnv1a_64(text.as_bytes()))
}

/// The default id `#[derive(RemoteActor)]` gives: `{module path}::{Ident}`.
pub fn remote_actor_id(module_path: &str, ident: &str) -> String {
    format!("{module_path}::{ident}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn fnv_known_values() {
        assert_eq!(fnv1a_64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x85944171f73967e8);
        assert_eq!(remote_actor_id("my_app::actors", "Counter"), "my_app::actors::Counter");
        assert_eq!(remote_message_id("app", 0, "app", "Vec < u8 >", "A", ""), remote_message_id("app", 0, "app", "Vec<u8>", "A", ""));
        assert_eq!(remote_message_id("app", 1, "app::m", "Inc", "Counter", ""), format!("{:x}", fnv1a_64(b"app::1::app::m::Inc::Counter")));
    }

    #[test]
    fn ask_request_bytes() {
        let req = SwarmRequest::Ask {
            actor_id: ActorId::new(1, None),
            actor_remote_id: "a".into(),
            message_remote_id: "m".into(),
            payload: vec![1, 200],
            mailbox_timeout: Some(Duration::new(1, 5)),
            reply_timeout: None,
            immediate: true,
        };
        let b = encode_request(&req);
        let expected = [
            "a1",
            "63",
            "41736b",
            "a7", // {"Ask": {7 fields
            "68",
            "6163746f725f6964",
            "48",
            "0100000000000000", // actor_id: bytes(8)
            "6f",
            "6163746f725f72656d6f74655f6964",
            "61",
            "61", // actor_remote_id: "a"
            "71",
            "6d6573736167655f72656d6f74655f6964",
            "61",
            "6d", // message_remote_id: "m"
            "67",
            "7061796c6f6164",
            "82",
            "01",
            "18c8", // payload: [1, 200]
            "6f",
            "6d61696c626f785f74696d656f7574",
            "a2",
            "6473656373",
            "01",
            "656e616e6f73",
            "05",
            "6d",
            "7265706c795f74696d656f7574",
            "f6", // reply_timeout: null
            "69",
            "696d6d656469617465",
            "f5", // immediate: true
        ]
        .concat();
        assert_eq!(hex(&b), expected);
        assert_eq!(decode_request(&b).unwrap(), req);
        let v = request_to_value(&req);
        assert_eq!(request_from_value(&v).unwrap(), req);
        // trailing bytes are ignored, as by kameo
        let mut t = b.clone();
        t.extend_from_slice(&[0xFF, 0x00]);
        assert_eq!(decode_request_prefix(&t).unwrap(), (req, b.len()));
    }

    #[test]
    fn registration_round_trip_and_errors() {
        let peer = PeerId::from_ed25519_public_key(&[3; 32]);
        let reg = ActorRegistration::new(ActorId::new(u64::MAX, Some(peer.clone())), "zähler");
        let b = reg.to_bytes();
        assert_eq!(b[0], 38);
        assert_eq!(ActorRegistration::from_bytes(&b).unwrap(), reg);
        assert_eq!(ActorRegistration::from_bytes(&[]).unwrap_err().code(), "KAMEO_REGISTRATION_EMPTY");
        assert_eq!(ActorRegistration::from_bytes(&b[..20]).unwrap_err().code(), "KAMEO_REGISTRATION_TRUNCATED");
        let local = ActorRegistration::new(ActorId::new(5, None), "x");
        assert_eq!(hex(&local.to_bytes()), "00050000000000000078");
        let mut bad = local.to_bytes();
        bad.push(0xFF);
        assert_eq!(ActorRegistration::from_bytes(&bad).unwrap_err().code(), "KAMEO_INVALID_UTF8");
        let key = metadata_key("counter", &peer);
        assert_eq!(parse_metadata_key(key.as_bytes()).unwrap(), ("counter".to_owned(), peer));
        assert!(parse_metadata_key(b":meta:x").is_err());
        assert_eq!(provider_key("é"), "é".as_bytes());
    }
}
