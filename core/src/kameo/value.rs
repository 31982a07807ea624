//! A JSON-like value with bytes (the shape Python and JavaScript values
//! take), and the conversions between it and the typed messages, in serde's
//! externally tagged shape:
//!
//! ```text
//! {"Ask": {"actor_id": {"sequence_id": 42, "peer_id": "12D3KooW..."},
//!          "actor_remote_id": "counter", "message_remote_id": "inc",
//!          "payload": b"...", "mailbox_timeout": {"secs": 1, "nanos": 500000000},
//!          "reply_timeout": None, "immediate": False}}
//! {"Ask": {"Ok": b"..."}}      {"Tell": {"Ok": None}}      {"Tell": {"Err": "MailboxFull"}}
//! {"Ask": {"Err": {"UnknownActor": {"actor_remote_id": "x"}}}}
//! ```
//!
//! Unit variants are strings, other variants one-entry maps, `()` and
//! `None` are nil, payloads and replies are bytes, an actor id is
//! `{"sequence_id", "peer_id"}` with the peer id as base58 text (or nil).
//! Reading a value is strict: unknown or duplicate keys are errors
//! (`KAMEO_INVALID_VALUE`, the message names the path); `Option` fields may
//! be left out.

use super::err;
use super::ids::{ActorId, PeerId};
use super::model::{ActorStopReason, PanicError, PanicReason, RemoteSendError, SwarmRequest, SwarmResponse};
use crate::error::Result;
use std::convert::Infallible;
use std::time::Duration;

/// Nesting limit of [`Value`]s: arrays/maps in the MessagePack codec and
/// stop reasons read from values. Like the CBOR side's 256 (kameo's own
/// budget); rmp_serde would go to 1024, which no sane payload needs and
/// which recursive conversions in the bindings should not have to survive.
pub const MAX_VALUE_DEPTH: usize = 256;

/// A dynamically typed value: what a Python or JavaScript caller passes and
/// gets back. Integers are kept exactly (i128 holds every u64 and i64).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i128),
    /// A MessagePack float 32 (decoding keeps the width; callers see a float).
    F32(f32),
    F64(f64),
    Str(String),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    /// Entries in order; keys may be any value (MessagePack allows it).
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// A map with string keys.
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (Value::Str(k.into()), v)).collect())
    }

    /// `{name: inner}`: an externally tagged variant with content.
    pub fn variant(name: &str, inner: Value) -> Value {
        Value::Map(vec![(Value::Str(name.to_owned()), inner)])
    }

    pub fn str(s: &str) -> Value {
        Value::Str(s.to_owned())
    }

    /// The value under string key `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "a bool",
            Value::Int(_) => "an integer",
            Value::F32(_) | Value::F64(_) => "a float",
            Value::Str(_) => "a string",
            Value::Bytes(_) => "bytes",
            Value::Array(_) => "an array",
            Value::Map(_) => "a map",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<u64> for Value {
    fn from(i: u64) -> Value {
        Value::Int(i128::from(i))
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i128::from(i))
    }
}
impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::Bytes(b)
    }
}

// ================================================================ to Value

pub fn actor_id_to_value(id: &ActorId) -> Value {
    Value::map([
        ("sequence_id", Value::from(id.sequence_id)),
        ("peer_id", id.peer_id.as_ref().map_or(Value::Nil, |p| Value::Str(p.to_base58()))),
    ])
}

fn duration_to_value(d: &Option<Duration>) -> Value {
    match d {
        None => Value::Nil,
        Some(d) => Value::map([("secs", Value::from(d.as_secs())), ("nanos", Value::from(u64::from(d.subsec_nanos())))]),
    }
}

pub fn request_to_value(req: &SwarmRequest) -> Value {
    match req {
        SwarmRequest::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => {
            Value::variant(
                "Ask",
                Value::map([
                    ("actor_id", actor_id_to_value(actor_id)),
                    ("actor_remote_id", Value::str(actor_remote_id)),
                    ("message_remote_id", Value::str(message_remote_id)),
                    ("payload", Value::Bytes(payload.clone())),
                    ("mailbox_timeout", duration_to_value(mailbox_timeout)),
                    ("reply_timeout", duration_to_value(reply_timeout)),
                    ("immediate", Value::Bool(*immediate)),
                ]),
            )
        }
        SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => Value::variant(
            "Tell",
            Value::map([
                ("actor_id", actor_id_to_value(actor_id)),
                ("actor_remote_id", Value::str(actor_remote_id)),
                ("message_remote_id", Value::str(message_remote_id)),
                ("payload", Value::Bytes(payload.clone())),
                ("mailbox_timeout", duration_to_value(mailbox_timeout)),
                ("immediate", Value::Bool(*immediate)),
            ]),
        ),
        SwarmRequest::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => Value::variant(
            "Link",
            Value::map([
                ("actor_id", actor_id_to_value(actor_id)),
                ("actor_remote_id", Value::str(actor_remote_id)),
                ("sibling_id", actor_id_to_value(sibling_id)),
                ("sibling_remote_id", Value::str(sibling_remote_id)),
            ]),
        ),
        SwarmRequest::Unlink { actor_id, actor_remote_id, sibling_id } => Value::variant(
            "Unlink",
            Value::map([
                ("actor_id", actor_id_to_value(actor_id)),
                ("actor_remote_id", Value::str(actor_remote_id)),
                ("sibling_id", actor_id_to_value(sibling_id)),
            ]),
        ),
        SwarmRequest::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => Value::variant(
            "SignalLinkDied",
            Value::map([
                ("dead_actor_id", actor_id_to_value(dead_actor_id)),
                ("notified_actor_id", actor_id_to_value(notified_actor_id)),
                ("notified_actor_remote_id", Value::str(notified_actor_remote_id)),
                ("stop_reason", stop_reason_to_value(stop_reason)),
            ]),
        ),
    }
}

pub fn stop_reason_to_value(reason: &ActorStopReason) -> Value {
    match reason {
        ActorStopReason::Normal => Value::str("Normal"),
        ActorStopReason::SupervisorRestart => Value::str("SupervisorRestart"),
        ActorStopReason::Killed => Value::str("Killed"),
        ActorStopReason::PeerDisconnected => Value::str("PeerDisconnected"),
        ActorStopReason::Panicked(p) => {
            Value::variant("Panicked", Value::map([("err", Value::str(&p.err)), ("reason", Value::str(p.reason.name()))]))
        }
        ActorStopReason::LinkDied { id, reason } => {
            Value::variant("LinkDied", Value::map([("id", actor_id_to_value(id)), ("reason", stop_reason_to_value(reason))]))
        }
    }
}

fn send_error_to_value<E>(e: &RemoteSendError<E>, e_to_value: fn(&E) -> Value) -> Value {
    let name = e.variant_name();
    match e {
        RemoteSendError::UnknownActor { actor_remote_id } => {
            Value::variant(name, Value::map([("actor_remote_id", Value::str(actor_remote_id))]))
        }
        RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => Value::variant(
            name,
            Value::map([("actor_remote_id", Value::str(actor_remote_id)), ("message_remote_id", Value::str(message_remote_id))]),
        ),
        RemoteSendError::HandlerError(inner) => Value::variant(name, e_to_value(inner)),
        RemoteSendError::SerializeMessage(s)
        | RemoteSendError::DeserializeMessage(s)
        | RemoteSendError::SerializeReply(s)
        | RemoteSendError::SerializeHandlerError(s)
        | RemoteSendError::DeserializeHandlerError(s) => Value::variant(name, Value::str(s)),
        _ => Value::str(name),
    }
}

fn infallible_to_value(e: &Infallible) -> Value {
    match *e {}
}

#[allow(clippy::ptr_arg)] // used as `fn(&E)` with `E = Vec<u8>`
fn bytes_to_value(b: &Vec<u8>) -> Value {
    Value::Bytes(b.clone())
}

fn unit_result_to_value(r: &Result<(), RemoteSendError>) -> Value {
    match r {
        Ok(()) => Value::variant("Ok", Value::Nil),
        Err(e) => Value::variant("Err", send_error_to_value(e, infallible_to_value)),
    }
}

pub fn response_to_value(resp: &SwarmResponse) -> Value {
    match resp {
        SwarmResponse::Ask(r) => Value::variant(
            "Ask",
            match r {
                Ok(b) => Value::variant("Ok", Value::Bytes(b.clone())),
                Err(e) => Value::variant("Err", send_error_to_value(e, bytes_to_value)),
            },
        ),
        SwarmResponse::Tell(r) => Value::variant("Tell", unit_result_to_value(r)),
        SwarmResponse::Link(r) => Value::variant("Link", unit_result_to_value(r)),
        SwarmResponse::Unlink(r) => Value::variant("Unlink", unit_result_to_value(r)),
        SwarmResponse::SignalLinkDied(r) => Value::variant("SignalLinkDied", unit_result_to_value(r)),
        SwarmResponse::OutboundFailure(e) => Value::variant("OutboundFailure", send_error_to_value(e, infallible_to_value)),
    }
}

// ================================================================ from Value

fn invalid(path: &str, message: impl std::fmt::Display) -> crate::Error {
    err("KAMEO_INVALID_VALUE", format!("{path}: {message}"))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The fields `names` of a map value (each at most once, no other keys).
fn fields<'v, const N: usize>(v: &'v Value, path: &str, names: [&str; N]) -> Result<[Option<&'v Value>; N]> {
    let Value::Map(entries) = v else {
        return Err(invalid(path, format!("expected a map with keys {}, got {}", names.join(", "), v.kind())));
    };
    let mut out = [None; N];
    for (k, val) in entries {
        let Value::Str(k) = k else {
            return Err(invalid(path, format!("expected string keys, got {}", k.kind())));
        };
        let Some(i) = names.iter().position(|n| n == k) else {
            return Err(invalid(path, format!("unknown key {k:?}, expected one of {}", names.join(", "))));
        };
        if out[i].is_some() {
            return Err(invalid(path, format!("duplicate key {k:?}")));
        }
        out[i] = Some(val);
    }
    Ok(out)
}

fn need<'v>(v: Option<&'v Value>, path: &str, name: &str) -> Result<&'v Value> {
    v.ok_or_else(|| invalid(path, format!("missing key {name:?}")))
}

/// An externally tagged enum value: `"Name"` or `{"Name": content}`.
fn variant<'v>(v: &'v Value, path: &str, ty: &str) -> Result<(&'v str, Option<&'v Value>)> {
    match v {
        Value::Str(s) => Ok((s, None)),
        Value::Map(entries) if entries.len() == 1 => match &entries[0] {
            (Value::Str(k), inner) => Ok((k, Some(inner))),
            (k, _) => Err(invalid(path, format!("expected a {ty} variant name as the key, got {}", k.kind()))),
        },
        _ => Err(invalid(path, format!("expected a {ty}: a variant name or a one-entry map, got {}", v.kind()))),
    }
}

fn content<'v>(inner: Option<&'v Value>, path: &str, name: &str) -> Result<&'v Value> {
    inner.ok_or_else(|| invalid(path, format!("variant {name:?} carries data: expected {{{name:?}: ...}}")))
}

fn no_content(inner: Option<&Value>, path: &str, name: &str) -> Result<()> {
    match inner {
        None => Ok(()),
        Some(_) => Err(invalid(path, format!("variant {name:?} carries no data: expected the string {name:?}"))),
    }
}

fn string(v: &Value, path: &str) -> Result<String> {
    v.as_str().map(str::to_owned).ok_or_else(|| invalid(path, format!("expected a string, got {}", v.kind())))
}

fn bytes(v: &Value, path: &str) -> Result<Vec<u8>> {
    v.as_bytes().map(<[u8]>::to_vec).ok_or_else(|| invalid(path, format!("expected bytes, got {}", v.kind())))
}

fn boolean(v: &Value, path: &str) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(invalid(path, format!("expected a bool, got {}", v.kind()))),
    }
}

fn uint(v: &Value, path: &str, max: u64) -> Result<u64> {
    match v {
        Value::Int(i) if *i >= 0 && *i <= i128::from(max) => Ok(*i as u64),
        Value::Int(i) => Err(invalid(path, format!("expected an integer 0..={max}, got {i}"))),
        _ => Err(invalid(path, format!("expected an integer, got {}", v.kind()))),
    }
}

/// A peer id given as base58 text or as multihash bytes.
pub fn peer_id_from_value(v: &Value, path: &str) -> Result<PeerId> {
    let parsed = match v {
        Value::Str(s) => PeerId::from_base58(s),
        Value::Bytes(b) => PeerId::from_bytes(b),
        _ => return Err(invalid(path, format!("expected a peer id (base58 string or bytes), got {}", v.kind()))),
    };
    parsed.map_err(|e| invalid(path, e.message()))
}

pub fn actor_id_from_value(v: &Value, path: &str) -> Result<ActorId> {
    let [seq, peer] = fields(v, path, ["sequence_id", "peer_id"])?;
    let sequence_id = uint(need(seq, path, "sequence_id")?, &join(path, "sequence_id"), u64::MAX)?;
    let peer_id = match peer {
        None | Some(Value::Nil) => None,
        Some(p) => Some(peer_id_from_value(p, &join(path, "peer_id"))?),
    };
    Ok(ActorId { sequence_id, peer_id })
}

fn opt_duration(v: Option<&Value>, path: &str) -> Result<Option<Duration>> {
    let v = match v {
        None | Some(Value::Nil) => return Ok(None),
        Some(v) => v,
    };
    let [secs, nanos] = fields(v, path, ["secs", "nanos"])?;
    let secs = uint(need(secs, path, "secs")?, &join(path, "secs"), u64::MAX)?;
    // A Rust Duration cannot hold a nanos part of a second or more.
    let nanos = uint(need(nanos, path, "nanos")?, &join(path, "nanos"), 999_999_999)?;
    Ok(Some(Duration::new(secs, nanos as u32)))
}

pub fn request_from_value(v: &Value) -> Result<SwarmRequest> {
    let (name, inner) = variant(v, "request", "SwarmRequest")?;
    let path = name;
    match name {
        "Ask" => {
            let body = content(inner, path, name)?;
            let [aid, arid, mrid, payload, mt, rt, imm] = fields(
                body,
                path,
                ["actor_id", "actor_remote_id", "message_remote_id", "payload", "mailbox_timeout", "reply_timeout", "immediate"],
            )?;
            Ok(SwarmRequest::Ask {
                actor_id: actor_id_from_value(need(aid, path, "actor_id")?, &join(path, "actor_id"))?,
                actor_remote_id: string(need(arid, path, "actor_remote_id")?, &join(path, "actor_remote_id"))?,
                message_remote_id: string(need(mrid, path, "message_remote_id")?, &join(path, "message_remote_id"))?,
                payload: bytes(need(payload, path, "payload")?, &join(path, "payload"))?,
                mailbox_timeout: opt_duration(mt, &join(path, "mailbox_timeout"))?,
                reply_timeout: opt_duration(rt, &join(path, "reply_timeout"))?,
                immediate: boolean(need(imm, path, "immediate")?, &join(path, "immediate"))?,
            })
        }
        "Tell" => {
            let body = content(inner, path, name)?;
            let [aid, arid, mrid, payload, mt, imm] =
                fields(body, path, ["actor_id", "actor_remote_id", "message_remote_id", "payload", "mailbox_timeout", "immediate"])?;
            Ok(SwarmRequest::Tell {
                actor_id: actor_id_from_value(need(aid, path, "actor_id")?, &join(path, "actor_id"))?,
                actor_remote_id: string(need(arid, path, "actor_remote_id")?, &join(path, "actor_remote_id"))?,
                message_remote_id: string(need(mrid, path, "message_remote_id")?, &join(path, "message_remote_id"))?,
                payload: bytes(need(payload, path, "payload")?, &join(path, "payload"))?,
                mailbox_timeout: opt_duration(mt, &join(path, "mailbox_timeout"))?,
                immediate: boolean(need(imm, path, "immediate")?, &join(path, "immediate"))?,
            })
        }
        "Link" => {
            let body = content(inner, path, name)?;
            let [aid, arid, sid, srid] = fields(body, path, ["actor_id", "actor_remote_id", "sibling_id", "sibling_remote_id"])?;
            Ok(SwarmRequest::Link {
                actor_id: actor_id_from_value(need(aid, path, "actor_id")?, &join(path, "actor_id"))?,
                actor_remote_id: string(need(arid, path, "actor_remote_id")?, &join(path, "actor_remote_id"))?,
                sibling_id: actor_id_from_value(need(sid, path, "sibling_id")?, &join(path, "sibling_id"))?,
                sibling_remote_id: string(need(srid, path, "sibling_remote_id")?, &join(path, "sibling_remote_id"))?,
            })
        }
        "Unlink" => {
            let body = content(inner, path, name)?;
            let [aid, arid, sid] = fields(body, path, ["actor_id", "actor_remote_id", "sibling_id"])?;
            Ok(SwarmRequest::Unlink {
                actor_id: actor_id_from_value(need(aid, path, "actor_id")?, &join(path, "actor_id"))?,
                actor_remote_id: string(need(arid, path, "actor_remote_id")?, &join(path, "actor_remote_id"))?,
                sibling_id: actor_id_from_value(need(sid, path, "sibling_id")?, &join(path, "sibling_id"))?,
            })
        }
        "SignalLinkDied" => {
            let body = content(inner, path, name)?;
            let [dead, notified, nrid, reason] =
                fields(body, path, ["dead_actor_id", "notified_actor_id", "notified_actor_remote_id", "stop_reason"])?;
            Ok(SwarmRequest::SignalLinkDied {
                dead_actor_id: actor_id_from_value(need(dead, path, "dead_actor_id")?, &join(path, "dead_actor_id"))?,
                notified_actor_id: actor_id_from_value(need(notified, path, "notified_actor_id")?, &join(path, "notified_actor_id"))?,
                notified_actor_remote_id: string(need(nrid, path, "notified_actor_remote_id")?, &join(path, "notified_actor_remote_id"))?,
                stop_reason: stop_reason_from_value(need(reason, path, "stop_reason")?, &join(path, "stop_reason"))?,
            })
        }
        other => {
            Err(invalid("request", format!("unknown SwarmRequest variant {other:?}, expected Ask, Tell, Link, Unlink or SignalLinkDied")))
        }
    }
}

pub fn stop_reason_from_value(v: &Value, path: &str) -> Result<ActorStopReason> {
    stop_reason_at_depth(v, path, 0)
}

fn stop_reason_at_depth(v: &Value, path: &str, depth: usize) -> Result<ActorStopReason> {
    if depth >= MAX_VALUE_DEPTH {
        return Err(err("KAMEO_DEPTH_LIMIT", format!("{path}: expected at most {MAX_VALUE_DEPTH} nested stop reasons")));
    }
    let (name, inner) = variant(v, path, "ActorStopReason")?;
    let unit = |r: ActorStopReason| no_content(inner, path, name).map(|_| r);
    match name {
        "Normal" => unit(ActorStopReason::Normal),
        "SupervisorRestart" => unit(ActorStopReason::SupervisorRestart),
        "Killed" => unit(ActorStopReason::Killed),
        "PeerDisconnected" => unit(ActorStopReason::PeerDisconnected),
        "Panicked" => {
            let path = join(path, "Panicked");
            let [e, reason] = fields(content(inner, &path, name)?, &path, ["err", "reason"])?;
            let rpath = join(&path, "reason");
            let (rname, rinner) = variant(need(reason, &path, "reason")?, &rpath, "PanicReason")?;
            no_content(rinner, &rpath, rname)?;
            let reason = PanicReason::from_name(rname).ok_or_else(|| invalid(&rpath, format!("unknown PanicReason {rname:?}")))?;
            Ok(ActorStopReason::Panicked(PanicError { err: string(need(e, &path, "err")?, &join(&path, "err"))?, reason }))
        }
        "LinkDied" => {
            let path = join(path, "LinkDied");
            let [id, reason] = fields(content(inner, &path, name)?, &path, ["id", "reason"])?;
            Ok(ActorStopReason::LinkDied {
                id: actor_id_from_value(need(id, &path, "id")?, &join(&path, "id"))?,
                reason: Box::new(stop_reason_at_depth(need(reason, &path, "reason")?, &join(&path, "reason"), depth + 1)?),
            })
        }
        other => Err(invalid(path, format!("unknown ActorStopReason variant {other:?}"))),
    }
}

fn send_error_from_value<E>(v: &Value, path: &str, e_from_value: fn(&Value, &str) -> Result<E>) -> Result<RemoteSendError<E>> {
    let (name, inner) = variant(v, path, "RemoteSendError")?;
    if let Some(unit) = RemoteSendError::unit_from_name(name) {
        no_content(inner, path, name)?;
        return Ok(unit);
    }
    let path = join(path, name);
    match name {
        "UnknownActor" => {
            let [arid] = fields(content(inner, &path, name)?, &path, ["actor_remote_id"])?;
            Ok(RemoteSendError::UnknownActor {
                actor_remote_id: string(need(arid, &path, "actor_remote_id")?, &join(&path, "actor_remote_id"))?,
            })
        }
        "UnknownMessage" => {
            let [arid, mrid] = fields(content(inner, &path, name)?, &path, ["actor_remote_id", "message_remote_id"])?;
            Ok(RemoteSendError::UnknownMessage {
                actor_remote_id: string(need(arid, &path, "actor_remote_id")?, &join(&path, "actor_remote_id"))?,
                message_remote_id: string(need(mrid, &path, "message_remote_id")?, &join(&path, "message_remote_id"))?,
            })
        }
        "HandlerError" => Ok(RemoteSendError::HandlerError(e_from_value(content(inner, &path, name)?, &path)?)),
        other => match RemoteSendError::string_variant(other) {
            Some(make) => Ok(make(string(content(inner, &path, name)?, &path)?)),
            None => Err(invalid(&path, format!("unknown RemoteSendError variant {other:?}"))),
        },
    }
}

fn infallible_from_value(_: &Value, path: &str) -> Result<Infallible> {
    Err(invalid(path, "only Ask responses can carry a HandlerError"))
}

fn unit_result_from_value(v: &Value, path: &str) -> Result<Result<(), RemoteSendError>> {
    let (name, inner) = variant(v, path, "Result")?;
    let path = join(path, name);
    match name {
        "Ok" => match content(inner, &path, name)? {
            Value::Nil => Ok(Ok(())),
            other => Err(invalid(&path, format!("expected nil for (), got {}", other.kind()))),
        },
        "Err" => Ok(Err(send_error_from_value(content(inner, &path, name)?, &path, infallible_from_value)?)),
        other => Err(invalid(&path, format!("unknown Result variant {other:?}, expected Ok or Err"))),
    }
}

pub fn response_from_value(v: &Value) -> Result<SwarmResponse> {
    let (name, inner) = variant(v, "response", "SwarmResponse")?;
    let path = name;
    let body = || content(inner, path, name);
    match name {
        "Ask" => {
            let (rname, rinner) = variant(body()?, path, "Result")?;
            let rpath = join(path, rname);
            match rname {
                "Ok" => Ok(SwarmResponse::Ask(Ok(bytes(content(rinner, &rpath, rname)?, &rpath)?))),
                "Err" => Ok(SwarmResponse::Ask(Err(send_error_from_value(content(rinner, &rpath, rname)?, &rpath, bytes)?))),
                other => Err(invalid(&rpath, format!("unknown Result variant {other:?}, expected Ok or Err"))),
            }
        }
        "Tell" => Ok(SwarmResponse::Tell(unit_result_from_value(body()?, path)?)),
        "Link" => Ok(SwarmResponse::Link(unit_result_from_value(body()?, path)?)),
        "Unlink" => Ok(SwarmResponse::Unlink(unit_result_from_value(body()?, path)?)),
        "SignalLinkDied" => Ok(SwarmResponse::SignalLinkDied(unit_result_from_value(body()?, path)?)),
        "OutboundFailure" => Ok(SwarmResponse::OutboundFailure(send_error_from_value(body()?, path, infallible_from_value)?)),
        other => Err(invalid(
            "response",
            format!("unknown SwarmResponse variant {other:?}, expected Ask, Tell, Link, Unlink, SignalLinkDied or OutboundFailure"),
        )),
    }
}
