//! The typed messages of kameo 0.22.2's messaging protocol and their CBOR
//! encoding, field for field as serde derives them: structs and struct
//! variants are maps with the field names in declaration order, enums are
//! externally tagged (unit variants as their name, others as a one-entry
//! map), `Vec<u8>` is an array of integers, `ActorId` a byte string,
//! `Duration` the map `{secs, nanos}`, `()` an empty array, `None` null.
//!
//! The decoders replay what serde-derive's visitors do on top of cbor4ii's
//! deserializer (`cbor::Reader`): struct fields in any order,
//! unknown fields skipped (except in `Duration` and `PanicError`, whose
//! hand-written visitors reject them), duplicates rejected, a missing
//! `Option` field is `None`, any other missing field an error.

use super::cbor::{Reader, Writer};
use super::ids::ActorId;
use crate::error::Result;
use std::convert::Infallible;
use std::time::Duration;

/// A request on `/kameo/messaging/1.0.0` (`kameo::remote::messaging::SwarmRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwarmRequest {
    /// Ask an actor, expecting a reply.
    Ask {
        actor_id: ActorId,
        actor_remote_id: String,
        message_remote_id: String,
        /// The message, as `rmp_serde::to_vec_named` writes it.
        payload: Vec<u8>,
        mailbox_timeout: Option<Duration>,
        reply_timeout: Option<Duration>,
        immediate: bool,
    },
    /// Tell an actor, without a reply.
    Tell {
        actor_id: ActorId,
        actor_remote_id: String,
        message_remote_id: String,
        payload: Vec<u8>,
        mailbox_timeout: Option<Duration>,
        immediate: bool,
    },
    /// Link two actors.
    Link { actor_id: ActorId, actor_remote_id: String, sibling_id: ActorId, sibling_remote_id: String },
    /// Unlink two actors.
    Unlink { actor_id: ActorId, actor_remote_id: String, sibling_id: ActorId },
    /// A linked actor died.
    SignalLinkDied { dead_actor_id: ActorId, notified_actor_id: ActorId, notified_actor_remote_id: String, stop_reason: ActorStopReason },
}

impl SwarmRequest {
    /// An `Ask` with no timeouts and `immediate: false` (what
    /// `RemoteActorRef::ask(..).send()` sends).
    pub fn ask(actor_id: ActorId, actor_remote_id: &str, message_remote_id: &str, payload: Vec<u8>) -> SwarmRequest {
        SwarmRequest::Ask {
            actor_id,
            actor_remote_id: actor_remote_id.to_owned(),
            message_remote_id: message_remote_id.to_owned(),
            payload,
            mailbox_timeout: None,
            reply_timeout: None,
            immediate: false,
        }
    }

    /// A `Tell` with no timeout and `immediate: false`.
    pub fn tell(actor_id: ActorId, actor_remote_id: &str, message_remote_id: &str, payload: Vec<u8>) -> SwarmRequest {
        SwarmRequest::Tell {
            actor_id,
            actor_remote_id: actor_remote_id.to_owned(),
            message_remote_id: message_remote_id.to_owned(),
            payload,
            mailbox_timeout: None,
            immediate: false,
        }
    }
}

/// A response on `/kameo/messaging/1.0.0` (`kameo::remote::messaging::SwarmResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwarmResponse {
    /// The reply (MessagePack) or why there is none; a handler error is
    /// MessagePack too.
    Ask(Result<Vec<u8>, RemoteSendError<Vec<u8>>>),
    Tell(Result<(), RemoteSendError>),
    Link(Result<(), RemoteSendError>),
    Unlink(Result<(), RemoteSendError>),
    SignalLinkDied(Result<(), RemoteSendError>),
    OutboundFailure(RemoteSendError),
}

/// `kameo::error::RemoteSendError<E>`. `E` is `Vec<u8>` (a MessagePack
/// handler error) in `Ask` responses and uninhabited elsewhere. The `Io`
/// variant is `#[serde(skip)]` in kameo, so it has no wire form and is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteSendError<E = Infallible> {
    ActorNotRunning,
    ActorStopped,
    UnknownActor { actor_remote_id: String },
    UnknownMessage { actor_remote_id: String, message_remote_id: String },
    BadActorType,
    MailboxFull,
    ReplyTimeout,
    HandlerError(E),
    SerializeMessage(String),
    DeserializeMessage(String),
    SerializeReply(String),
    SerializeHandlerError(String),
    DeserializeHandlerError(String),
    SwarmNotBootstrapped,
    DialFailure,
    NetworkTimeout,
    ConnectionClosed,
    UnsupportedProtocols,
}

/// `kameo::error::ActorStopReason` (with feature `remote`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActorStopReason {
    Normal,
    SupervisorRestart,
    Killed,
    Panicked(PanicError),
    LinkDied { id: ActorId, reason: Box<ActorStopReason> },
    PeerDisconnected,
}

/// `kameo::error::PanicError` as it travels: `err` is the sender's
/// `Display` of the error (`"{reason}: {message}"` for a string panic, e.g.
/// `"message handler panicked: boom"`, or just the reason's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanicError {
    pub err: String,
    pub reason: PanicReason,
}

/// `kameo::error::PanicReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PanicReason {
    HandlerPanic,
    OnMessage,
    OnStart,
    OnPanic,
    OnLinkDied,
    OnStop,
    OnUndelivered,
    Next,
}

impl PanicReason {
    pub const ALL: [PanicReason; 8] = [
        PanicReason::HandlerPanic,
        PanicReason::OnMessage,
        PanicReason::OnStart,
        PanicReason::OnPanic,
        PanicReason::OnLinkDied,
        PanicReason::OnStop,
        PanicReason::OnUndelivered,
        PanicReason::Next,
    ];

    /// The serde variant name.
    pub fn name(self) -> &'static str {
        match self {
            PanicReason::HandlerPanic => "HandlerPanic",
            PanicReason::OnMessage => "OnMessage",
            PanicReason::OnStart => "OnStart",
            PanicReason::OnPanic => "OnPanic",
            PanicReason::OnLinkDied => "OnLinkDied",
            PanicReason::OnStop => "OnStop",
            PanicReason::OnUndelivered => "OnUndelivered",
            PanicReason::Next => "Next",
        }
    }

    pub fn from_name(name: &str) -> Option<PanicReason> {
        PanicReason::ALL.into_iter().find(|r| r.name() == name)
    }

    /// kameo's `Display` text, which prefixes `PanicError::err`.
    pub fn description(self) -> &'static str {
        match self {
            PanicReason::HandlerPanic => "message handler panicked",
            PanicReason::OnMessage => "on_message returned error",
            PanicReason::OnStart => "on_start returned error",
            PanicReason::OnPanic => "on_panic returned error",
            PanicReason::OnLinkDied => "on_link_died returned error",
            PanicReason::OnStop => "on_stop returned error",
            PanicReason::OnUndelivered => "on_undelivered returned error",
            PanicReason::Next => "next returned error",
        }
    }
}

impl<E> RemoteSendError<E> {
    /// The serde variant name.
    pub fn variant_name(&self) -> &'static str {
        match self {
            RemoteSendError::ActorNotRunning => "ActorNotRunning",
            RemoteSendError::ActorStopped => "ActorStopped",
            RemoteSendError::UnknownActor { .. } => "UnknownActor",
            RemoteSendError::UnknownMessage { .. } => "UnknownMessage",
            RemoteSendError::BadActorType => "BadActorType",
            RemoteSendError::MailboxFull => "MailboxFull",
            RemoteSendError::ReplyTimeout => "ReplyTimeout",
            RemoteSendError::HandlerError(_) => "HandlerError",
            RemoteSendError::SerializeMessage(_) => "SerializeMessage",
            RemoteSendError::DeserializeMessage(_) => "DeserializeMessage",
            RemoteSendError::SerializeReply(_) => "SerializeReply",
            RemoteSendError::SerializeHandlerError(_) => "SerializeHandlerError",
            RemoteSendError::DeserializeHandlerError(_) => "DeserializeHandlerError",
            RemoteSendError::SwarmNotBootstrapped => "SwarmNotBootstrapped",
            RemoteSendError::DialFailure => "DialFailure",
            RemoteSendError::NetworkTimeout => "NetworkTimeout",
            RemoteSendError::ConnectionClosed => "ConnectionClosed",
            RemoteSendError::UnsupportedProtocols => "UnsupportedProtocols",
        }
    }

    /// The unit variant named `name`, if it is one.
    pub fn unit_from_name(name: &str) -> Option<RemoteSendError<E>> {
        Some(match name {
            "ActorNotRunning" => RemoteSendError::ActorNotRunning,
            "ActorStopped" => RemoteSendError::ActorStopped,
            "BadActorType" => RemoteSendError::BadActorType,
            "MailboxFull" => RemoteSendError::MailboxFull,
            "ReplyTimeout" => RemoteSendError::ReplyTimeout,
            "SwarmNotBootstrapped" => RemoteSendError::SwarmNotBootstrapped,
            "DialFailure" => RemoteSendError::DialFailure,
            "NetworkTimeout" => RemoteSendError::NetworkTimeout,
            "ConnectionClosed" => RemoteSendError::ConnectionClosed,
            "UnsupportedProtocols" => RemoteSendError::UnsupportedProtocols,
            _ => return None,
        })
    }

    /// The constructor of the string-carrying newtype variant named
    /// `name`, if it is one.
    pub fn string_variant(name: &str) -> Option<fn(String) -> RemoteSendError<E>> {
        Some(match name {
            "SerializeMessage" => RemoteSendError::SerializeMessage as fn(String) -> RemoteSendError<E>,
            "DeserializeMessage" => RemoteSendError::DeserializeMessage,
            "SerializeReply" => RemoteSendError::SerializeReply,
            "SerializeHandlerError" => RemoteSendError::SerializeHandlerError,
            "DeserializeHandlerError" => RemoteSendError::DeserializeHandlerError,
            _ => return None,
        })
    }
}

// ================================================================ encoding

pub(crate) fn write_actor_id(w: &mut Writer, id: &ActorId) {
    w.bytes(&id.to_bytes());
}

fn write_duration(w: &mut Writer, d: &Duration) {
    w.map(2);
    w.text("secs");
    w.u64(d.as_secs());
    w.text("nanos");
    w.u64(u64::from(d.subsec_nanos()));
}

fn write_opt_duration(w: &mut Writer, d: &Option<Duration>) {
    match d {
        Some(d) => write_duration(w, d),
        None => w.null(),
    }
}

pub(crate) fn write_request(w: &mut Writer, req: &SwarmRequest) {
    match req {
        SwarmRequest::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => {
            w.variant("Ask");
            w.map(7);
            w.text("actor_id");
            write_actor_id(w, actor_id);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
            w.text("message_remote_id");
            w.text(message_remote_id);
            w.text("payload");
            w.byte_seq(payload);
            w.text("mailbox_timeout");
            write_opt_duration(w, mailbox_timeout);
            w.text("reply_timeout");
            write_opt_duration(w, reply_timeout);
            w.text("immediate");
            w.bool(*immediate);
        }
        SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => {
            w.variant("Tell");
            w.map(6);
            w.text("actor_id");
            write_actor_id(w, actor_id);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
            w.text("message_remote_id");
            w.text(message_remote_id);
            w.text("payload");
            w.byte_seq(payload);
            w.text("mailbox_timeout");
            write_opt_duration(w, mailbox_timeout);
            w.text("immediate");
            w.bool(*immediate);
        }
        SwarmRequest::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => {
            w.variant("Link");
            w.map(4);
            w.text("actor_id");
            write_actor_id(w, actor_id);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
            w.text("sibling_id");
            write_actor_id(w, sibling_id);
            w.text("sibling_remote_id");
            w.text(sibling_remote_id);
        }
        SwarmRequest::Unlink { actor_id, actor_remote_id, sibling_id } => {
            w.variant("Unlink");
            w.map(3);
            w.text("actor_id");
            write_actor_id(w, actor_id);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
            w.text("sibling_id");
            write_actor_id(w, sibling_id);
        }
        SwarmRequest::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => {
            w.variant("SignalLinkDied");
            w.map(4);
            w.text("dead_actor_id");
            write_actor_id(w, dead_actor_id);
            w.text("notified_actor_id");
            write_actor_id(w, notified_actor_id);
            w.text("notified_actor_remote_id");
            w.text(notified_actor_remote_id);
            w.text("stop_reason");
            write_stop_reason(w, stop_reason);
        }
    }
}

pub(crate) fn write_stop_reason(w: &mut Writer, reason: &ActorStopReason) {
    match reason {
        ActorStopReason::Normal => w.unit_variant("Normal"),
        ActorStopReason::SupervisorRestart => w.unit_variant("SupervisorRestart"),
        ActorStopReason::Killed => w.unit_variant("Killed"),
        ActorStopReason::Panicked(p) => {
            w.variant("Panicked");
            w.map(2);
            w.text("err");
            w.text(&p.err);
            w.text("reason");
            w.unit_variant(p.reason.name());
        }
        ActorStopReason::LinkDied { id, reason } => {
            w.variant("LinkDied");
            w.map(2);
            w.text("id");
            write_actor_id(w, id);
            w.text("reason");
            write_stop_reason(w, reason);
        }
        ActorStopReason::PeerDisconnected => w.unit_variant("PeerDisconnected"),
    }
}

fn write_send_error<E>(w: &mut Writer, e: &RemoteSendError<E>, write_e: fn(&mut Writer, &E)) {
    let name = e.variant_name();
    match e {
        RemoteSendError::UnknownActor { actor_remote_id } => {
            w.variant(name);
            w.map(1);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
        }
        RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => {
            w.variant(name);
            w.map(2);
            w.text("actor_remote_id");
            w.text(actor_remote_id);
            w.text("message_remote_id");
            w.text(message_remote_id);
        }
        RemoteSendError::HandlerError(inner) => {
            w.variant(name);
            write_e(w, inner);
        }
        RemoteSendError::SerializeMessage(s)
        | RemoteSendError::DeserializeMessage(s)
        | RemoteSendError::SerializeReply(s)
        | RemoteSendError::SerializeHandlerError(s)
        | RemoteSendError::DeserializeHandlerError(s) => {
            w.variant(name);
            w.text(s);
        }
        _ => w.unit_variant(name),
    }
}

fn write_infallible(_: &mut Writer, e: &Infallible) {
    match *e {}
}

#[allow(clippy::ptr_arg)] // used as `fn(&E)` with `E = Vec<u8>`
fn write_byte_seq(w: &mut Writer, b: &Vec<u8>) {
    w.byte_seq(b);
}

fn write_unit_result(w: &mut Writer, r: &Result<(), RemoteSendError>) {
    match r {
        Ok(()) => {
            w.variant("Ok");
            w.unit();
        }
        Err(e) => {
            w.variant("Err");
            write_send_error(w, e, write_infallible);
        }
    }
}

pub(crate) fn write_response(w: &mut Writer, resp: &SwarmResponse) {
    match resp {
        SwarmResponse::Ask(r) => {
            w.variant("Ask");
            match r {
                Ok(reply) => {
                    w.variant("Ok");
                    w.byte_seq(reply);
                }
                Err(e) => {
                    w.variant("Err");
                    write_send_error(w, e, write_byte_seq);
                }
            }
        }
        SwarmResponse::Tell(r) => {
            w.variant("Tell");
            write_unit_result(w, r);
        }
        SwarmResponse::Link(r) => {
            w.variant("Link");
            write_unit_result(w, r);
        }
        SwarmResponse::Unlink(r) => {
            w.variant("Unlink");
            write_unit_result(w, r);
        }
        SwarmResponse::SignalLinkDied(r) => {
            w.variant("SignalLinkDied");
            write_unit_result(w, r);
        }
        SwarmResponse::OutboundFailure(e) => {
            w.variant("OutboundFailure");
            write_send_error(w, e, write_infallible);
        }
    }
}

// ================================================================ decoding

fn unknown_variant(r: &Reader<'_>, at: usize, ty: &str, name: &str, expected: &[&str]) -> crate::Error {
    r.error_at(at, "KAMEO_UNKNOWN_VARIANT", format!("unknown {ty} variant {name:?}, expected one of {}", expected.join(", ")))
}

/// serde-derive's `visit_map` for a struct (`deserialize_struct` is
/// `deserialize_map` in cbor4ii). `field(r, i)` reads the value of
/// `fields[i]`; unknown keys are skipped unless `deny_unknown`.
fn visit_struct<'a>(
    r: &mut Reader<'a>,
    ty: &str,
    fields: &[&str],
    deny_unknown: bool,
    mut field: impl FnMut(&mut Reader<'a>, usize) -> Result<()>,
) -> Result<()> {
    r.step_in()?;
    let mut left = r.map_len(ty)?;
    let mut seen = 0u32;
    loop {
        match &mut left {
            Some(0) => break,
            Some(n) => *n -= 1,
            None => {
                if r.is_break()? {
                    break;
                }
            }
        }
        let at = r.pos;
        let key = r.str("a field name")?;
        match fields.iter().position(|f| *f == key) {
            Some(i) => {
                if seen & (1 << i) != 0 {
                    return Err(r.error_at(at, "KAMEO_DUPLICATE_FIELD", format!("duplicate field `{key}` in {ty}")));
                }
                seen |= 1 << i;
                field(r, i)?;
            }
            None if deny_unknown => {
                return Err(r.error_at(
                    at,
                    "KAMEO_UNKNOWN_FIELD",
                    format!("unknown field `{key}` in {ty}, expected one of {}", fields.join(", ")),
                ))
            }
            None => r.ignored_any()?,
        }
    }
    r.step_out();
    Ok(())
}

fn required<T>(r: &Reader<'_>, at: usize, v: Option<T>, ty: &str, name: &str) -> Result<T> {
    v.ok_or_else(|| r.error_at(at, "KAMEO_MISSING_FIELD", format!("missing field `{name}` in {ty}")))
}

pub(crate) fn read_actor_id(r: &mut Reader<'_>) -> Result<ActorId> {
    let at = r.pos;
    let bytes = r.bytes("an ActorId byte string")?;
    ActorId::from_bytes(&bytes).map_err(|e| e.at(at))
}

fn read_string(r: &mut Reader<'_>, what: &str) -> Result<String> {
    r.str(what).map(|s| s.into_owned())
}

/// `Vec<u8>` through serde: `deserialize_seq` of `u8`s.
fn read_byte_seq(r: &mut Reader<'_>, what: &str) -> Result<Vec<u8>> {
    r.step_in()?;
    let len = r.array_len(what)?;
    let mut out = Vec::with_capacity(len.unwrap_or(0).min(r.remaining()));
    match len {
        Some(n) => {
            for _ in 0..n {
                out.push(r.u8("a byte (an integer 0..=255)")?);
            }
        }
        None => {
            while !r.is_break()? {
                out.push(r.u8("a byte (an integer 0..=255)")?);
            }
        }
    }
    r.step_out();
    Ok(out)
}

const NANOS_PER_SEC: u32 = 1_000_000_000;

fn read_duration(r: &mut Reader<'_>) -> Result<Duration> {
    let at = r.pos;
    let (mut secs, mut nanos) = (None, None);
    visit_struct(r, "Duration", &["secs", "nanos"], true, |r, i| {
        if i == 0 {
            secs = Some(r.u64("Duration secs (u64)")?);
        } else {
            nanos = Some(r.u32("Duration nanos (u32)")?);
        }
        Ok(())
    })?;
    let secs = required(r, at, secs, "Duration", "secs")?;
    let nanos = required(r, at, nanos, "Duration", "nanos")?;
    // serde's check before `Duration::new`, which carries whole seconds
    // out of `nanos`.
    if secs.checked_add(u64::from(nanos / NANOS_PER_SEC)).is_none() {
        return Err(r.error_at(at, "KAMEO_DURATION_OVERFLOW", "overflow deserializing Duration"));
    }
    Ok(Duration::new(secs, nanos))
}

/// `Option<Duration>`: null/undefined or a Duration (one step deeper).
fn read_opt_duration(r: &mut Reader<'_>) -> Result<Option<Duration>> {
    if !r.option_is_some("a Duration or null")? {
        return Ok(None);
    }
    r.step_in()?;
    let d = read_duration(r)?;
    r.step_out();
    Ok(Some(d))
}

const REQUEST_VARIANTS: &[&str] = &["Ask", "Tell", "Link", "Unlink", "SignalLinkDied"];
const ASK_FIELDS: &[&str] =
    &["actor_id", "actor_remote_id", "message_remote_id", "payload", "mailbox_timeout", "reply_timeout", "immediate"];
const TELL_FIELDS: &[&str] = &["actor_id", "actor_remote_id", "message_remote_id", "payload", "mailbox_timeout", "immediate"];
const LINK_FIELDS: &[&str] = &["actor_id", "actor_remote_id", "sibling_id", "sibling_remote_id"];
const UNLINK_FIELDS: &[&str] = &["actor_id", "actor_remote_id", "sibling_id"];
const SIGNAL_FIELDS: &[&str] = &["dead_actor_id", "notified_actor_id", "notified_actor_remote_id", "stop_reason"];

pub(crate) fn read_request(r: &mut Reader<'_>) -> Result<SwarmRequest> {
    r.step_in()?;
    let (name_at, name) = r.variant("a SwarmRequest variant")?;
    let at = r.pos;
    let req = match &*name {
        "Ask" | "Tell" => {
            let ask = name == "Ask";
            let ty = if ask { "SwarmRequest::Ask" } else { "SwarmRequest::Tell" };
            let (mut actor_id, mut arid, mut mrid, mut payload) = (None, None, None, None);
            let (mut mailbox_timeout, mut reply_timeout, mut immediate) = (None, None, None);
            visit_struct(r, ty, if ask { ASK_FIELDS } else { TELL_FIELDS }, false, |r, i| {
                match (ask, i) {
                    (_, 0) => actor_id = Some(read_actor_id(r)?),
                    (_, 1) => arid = Some(read_string(r, "actor_remote_id (a string)")?),
                    (_, 2) => mrid = Some(read_string(r, "message_remote_id (a string)")?),
                    (_, 3) => payload = Some(read_byte_seq(r, "payload (an array of bytes)")?),
                    (_, 4) => mailbox_timeout = Some(read_opt_duration(r)?),
                    (true, 5) => reply_timeout = Some(read_opt_duration(r)?),
                    _ => immediate = Some(r.bool("immediate (a bool)")?),
                }
                Ok(())
            })?;
            let actor_id = required(r, at, actor_id, ty, "actor_id")?;
            let actor_remote_id = required(r, at, arid, ty, "actor_remote_id")?;
            let message_remote_id = required(r, at, mrid, ty, "message_remote_id")?;
            let payload = required(r, at, payload, ty, "payload")?;
            let immediate = required(r, at, immediate, ty, "immediate")?;
            let mailbox_timeout = mailbox_timeout.flatten();
            if ask {
                SwarmRequest::Ask {
                    actor_id,
                    actor_remote_id,
                    message_remote_id,
                    payload,
                    mailbox_timeout,
                    reply_timeout: reply_timeout.flatten(),
                    immediate,
                }
            } else {
                SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate }
            }
        }
        "Link" | "Unlink" => {
            let link = name == "Link";
            let ty = if link { "SwarmRequest::Link" } else { "SwarmRequest::Unlink" };
            let (mut actor_id, mut arid, mut sibling_id, mut srid) = (None, None, None, None);
            visit_struct(r, ty, if link { LINK_FIELDS } else { UNLINK_FIELDS }, false, |r, i| {
                match i {
                    0 => actor_id = Some(read_actor_id(r)?),
                    1 => arid = Some(read_string(r, "actor_remote_id (a string)")?),
                    2 => sibling_id = Some(read_actor_id(r)?),
                    _ => srid = Some(read_string(r, "sibling_remote_id (a string)")?),
                }
                Ok(())
            })?;
            let actor_id = required(r, at, actor_id, ty, "actor_id")?;
            let actor_remote_id = required(r, at, arid, ty, "actor_remote_id")?;
            let sibling_id = required(r, at, sibling_id, ty, "sibling_id")?;
            if link {
                let sibling_remote_id = required(r, at, srid, ty, "sibling_remote_id")?;
                SwarmRequest::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id }
            } else {
                SwarmRequest::Unlink { actor_id, actor_remote_id, sibling_id }
            }
        }
        "SignalLinkDied" => {
            let ty = "SwarmRequest::SignalLinkDied";
            let (mut dead, mut notified, mut nrid, mut reason) = (None, None, None, None);
            visit_struct(r, ty, SIGNAL_FIELDS, false, |r, i| {
                match i {
                    0 => dead = Some(read_actor_id(r)?),
                    1 => notified = Some(read_actor_id(r)?),
                    2 => nrid = Some(read_string(r, "notified_actor_remote_id (a string)")?),
                    _ => reason = Some(read_stop_reason(r)?),
                }
                Ok(())
            })?;
            SwarmRequest::SignalLinkDied {
                dead_actor_id: required(r, at, dead, ty, "dead_actor_id")?,
                notified_actor_id: required(r, at, notified, ty, "notified_actor_id")?,
                notified_actor_remote_id: required(r, at, nrid, ty, "notified_actor_remote_id")?,
                stop_reason: required(r, at, reason, ty, "stop_reason")?,
            }
        }
        other => return Err(unknown_variant(r, name_at, "SwarmRequest", other, REQUEST_VARIANTS)),
    };
    r.step_out();
    Ok(req)
}

const STOP_REASON_VARIANTS: &[&str] = &["Normal", "SupervisorRestart", "Killed", "Panicked", "LinkDied", "PeerDisconnected"];
const PANIC_REASON_VARIANTS: &[&str] =
    &["HandlerPanic", "OnMessage", "OnStart", "OnPanic", "OnLinkDied", "OnStop", "OnUndelivered", "Next"];

pub(crate) fn read_stop_reason(r: &mut Reader<'_>) -> Result<ActorStopReason> {
    r.step_in()?;
    let (name_at, name) = r.variant("an ActorStopReason variant")?;
    let at = r.pos;
    let reason = match &*name {
        "Normal" => ActorStopReason::Normal,
        "SupervisorRestart" => ActorStopReason::SupervisorRestart,
        "Killed" => ActorStopReason::Killed,
        "PeerDisconnected" => ActorStopReason::PeerDisconnected,
        "Panicked" => ActorStopReason::Panicked(read_panic_error(r)?),
        "LinkDied" => {
            let ty = "ActorStopReason::LinkDied";
            let (mut id, mut inner) = (None, None);
            visit_struct(r, ty, &["id", "reason"], false, |r, i| {
                if i == 0 {
                    id = Some(read_actor_id(r)?);
                } else {
                    inner = Some(read_stop_reason(r)?);
                }
                Ok(())
            })?;
            ActorStopReason::LinkDied { id: required(r, at, id, ty, "id")?, reason: Box::new(required(r, at, inner, ty, "reason")?) }
        }
        other => return Err(unknown_variant(r, name_at, "ActorStopReason", other, STOP_REASON_VARIANTS)),
    };
    r.step_out();
    Ok(reason)
}

/// kameo's hand-written `PanicError` visitor: unknown fields are errors.
fn read_panic_error(r: &mut Reader<'_>) -> Result<PanicError> {
    let at = r.pos;
    let (mut err, mut reason) = (None, None);
    visit_struct(r, "PanicError", &["err", "reason"], true, |r, i| {
        if i == 0 {
            err = Some(read_string(r, "PanicError err (a string)")?);
        } else {
            reason = Some(read_panic_reason(r)?);
        }
        Ok(())
    })?;
    Ok(PanicError { err: required(r, at, err, "PanicError", "err")?, reason: required(r, at, reason, "PanicError", "reason")? })
}

fn read_panic_reason(r: &mut Reader<'_>) -> Result<PanicReason> {
    r.step_in()?;
    let (name_at, name) = r.variant("a PanicReason variant")?;
    let reason = PanicReason::from_name(&name).ok_or_else(|| unknown_variant(r, name_at, "PanicReason", &name, PANIC_REASON_VARIANTS))?;
    r.step_out();
    Ok(reason)
}

const SEND_ERROR_VARIANTS: &[&str] = &[
    "ActorNotRunning",
    "ActorStopped",
    "UnknownActor",
    "UnknownMessage",
    "BadActorType",
    "MailboxFull",
    "ReplyTimeout",
    "HandlerError",
    "SerializeMessage",
    "DeserializeMessage",
    "SerializeReply",
    "SerializeHandlerError",
    "DeserializeHandlerError",
    "SwarmNotBootstrapped",
    "DialFailure",
    "NetworkTimeout",
    "ConnectionClosed",
    "UnsupportedProtocols",
];

fn read_send_error<E>(r: &mut Reader<'_>, read_e: fn(&mut Reader<'_>) -> Result<E>) -> Result<RemoteSendError<E>> {
    r.step_in()?;
    let (name_at, name) = r.variant("a RemoteSendError variant")?;
    let at = r.pos;
    let e = if let Some(unit) = RemoteSendError::unit_from_name(&name) {
        unit
    } else {
        match &*name {
            "UnknownActor" => {
                let ty = "RemoteSendError::UnknownActor";
                let mut arid = None;
                visit_struct(r, ty, &["actor_remote_id"], false, |r, _| {
                    arid = Some(read_string(r, "actor_remote_id (a string)")?);
                    Ok(())
                })?;
                RemoteSendError::UnknownActor { actor_remote_id: required(r, at, arid, ty, "actor_remote_id")? }
            }
            "UnknownMessage" => {
                let ty = "RemoteSendError::UnknownMessage";
                let (mut arid, mut mrid) = (None, None);
                visit_struct(r, ty, &["actor_remote_id", "message_remote_id"], false, |r, i| {
                    if i == 0 {
                        arid = Some(read_string(r, "actor_remote_id (a string)")?);
                    } else {
                        mrid = Some(read_string(r, "message_remote_id (a string)")?);
                    }
                    Ok(())
                })?;
                RemoteSendError::UnknownMessage {
                    actor_remote_id: required(r, at, arid, ty, "actor_remote_id")?,
                    message_remote_id: required(r, at, mrid, ty, "message_remote_id")?,
                }
            }
            "HandlerError" => RemoteSendError::HandlerError(read_e(r)?),
            other => match RemoteSendError::string_variant(other) {
                Some(make) => make(read_string(r, "an error message (a string)")?),
                None => return Err(unknown_variant(r, name_at, "RemoteSendError", other, SEND_ERROR_VARIANTS)),
            },
        }
    };
    r.step_out();
    Ok(e)
}

/// kameo's `Infallible` (an enum without variants): serde still reads the
/// variant name, which can never match.
fn read_infallible(r: &mut Reader<'_>) -> Result<Infallible> {
    r.step_in()?;
    let (name_at, name) = r.variant("a handler error (there can be none here)")?;
    Err(r.error_at(
        name_at,
        "KAMEO_UNKNOWN_VARIANT",
        format!("unknown Infallible variant {name:?}: only Ask responses carry a HandlerError"),
    ))
}

fn read_reply_bytes(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    read_byte_seq(r, "a MessagePack byte array")
}

fn read_unit_result(r: &mut Reader<'_>) -> Result<Result<(), RemoteSendError>> {
    r.step_in()?;
    let (name_at, name) = r.variant("Ok or Err")?;
    let v = match &*name {
        "Ok" => Ok(r.unit("() (an empty array)")?),
        "Err" => Err(read_send_error(r, read_infallible)?),
        other => return Err(unknown_variant(r, name_at, "Result", other, &["Ok", "Err"])),
    };
    r.step_out();
    Ok(v)
}

const RESPONSE_VARIANTS: &[&str] = &["Ask", "Tell", "Link", "Unlink", "SignalLinkDied", "OutboundFailure"];

pub(crate) fn read_response(r: &mut Reader<'_>) -> Result<SwarmResponse> {
    r.step_in()?;
    let (name_at, name) = r.variant("a SwarmResponse variant")?;
    let resp = match &*name {
        "Ask" => {
            r.step_in()?;
            let (ok_at, ok) = r.variant("Ok or Err")?;
            let v = match &*ok {
                "Ok" => Ok(read_reply_bytes(r)?),
                "Err" => Err(read_send_error(r, read_reply_bytes)?),
                other => return Err(unknown_variant(r, ok_at, "Result", other, &["Ok", "Err"])),
            };
            r.step_out();
            SwarmResponse::Ask(v)
        }
        "Tell" => SwarmResponse::Tell(read_unit_result(r)?),
        "Link" => SwarmResponse::Link(read_unit_result(r)?),
        "Unlink" => SwarmResponse::Unlink(read_unit_result(r)?),
        "SignalLinkDied" => SwarmResponse::SignalLinkDied(read_unit_result(r)?),
        "OutboundFailure" => SwarmResponse::OutboundFailure(read_send_error(r, read_infallible)?),
        other => return Err(unknown_variant(r, name_at, "SwarmResponse", other, RESPONSE_VARIANTS)),
    };
    r.step_out();
    Ok(resp)
}
