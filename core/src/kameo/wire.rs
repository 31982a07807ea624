//! The messaging types as kameo 0.22.2 declares them, with serde's derives,
//! put through cbor4ii 0.3 (`cbor4ii::serde`, the crate and the entry points
//! libp2p's request-response cbor codec calls). The bytes written and the
//! inputs accepted are those of serde-derive and cbor4ii by construction:
//! each type below is kameo's declaration field for field, variant for
//! variant and in the same order (variants can be addressed by index too),
//! with kameo's hand-written impls where it has them (`ActorId` as a byte
//! string, `PanicError` as `{err, reason}` rejecting unknown fields).
//!
//! The types borrow from [`super::model`]'s (`Cow::Borrowed`) to encode and
//! own what they decode (`Cow::Owned`), so neither direction copies twice.
//! Decoding runs on [`CountingReader`], cbor4ii's `SliceReader` plus the
//! count of bytes consumed (the length of the body, for the `_prefix`
//! decoders); its depth budget is `SliceReader`'s, 256.
//!
//! A cbor4ii error has no byte offset and no kind the bindings could map to
//! a stable code, so [`super`] explains a rejected input with the
//! hand-written reader ([`super::model`]), which replays the same rules and
//! knows where it failed (see `decode_request_prefix`).

use super::ids::ActorId;
use super::model;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

// ---------------------------------------------------------------- reader

/// `cbor4ii::core::utils::SliceReader` with the position it has reached.
pub(crate) struct CountingReader<'a> {
    buf: &'a [u8],
    pub(crate) pos: usize,
    limit: usize,
}

impl<'a> CountingReader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> CountingReader<'a> {
        // SliceReader::new's depth limit.
        CountingReader { buf, pos: 0, limit: 256 }
    }
}

impl<'de> cbor4ii::core::dec::Read<'de> for CountingReader<'de> {
    type Error = std::convert::Infallible;

    #[inline]
    fn fill<'b>(&'b mut self, want: usize) -> Result<cbor4ii::core::dec::Reference<'de, 'b>, Self::Error> {
        let rest = &self.buf[self.pos..];
        let len = rest.len().min(want);
        Ok(cbor4ii::core::dec::Reference::Long(&rest[..len]))
    }

    #[inline]
    fn advance(&mut self, n: usize) {
        self.pos += n.min(self.buf.len() - self.pos);
    }

    #[inline]
    fn step_in(&mut self) -> bool {
        match self.limit.checked_sub(1) {
            Some(limit) => {
                self.limit = limit;
                true
            }
            None => false,
        }
    }

    #[inline]
    fn step_out(&mut self) {
        self.limit += 1;
    }
}

/// cbor4ii's decode error (its text is only needed in the rare case the
/// hand-written reader does not explain a rejection).
pub(crate) type DecodeError = cbor4ii::serde::DecodeError<std::convert::Infallible>;

/// Decode a `T` from the start of `data` as `cbor4ii::serde::from_slice`
/// does; also the number of bytes the body took.
pub(crate) fn from_slice_prefix<'a, T: Deserialize<'a>>(data: &'a [u8]) -> Result<(T, usize), DecodeError> {
    let mut de = cbor4ii::serde::Deserializer::new(CountingReader::new(data));
    let value = T::deserialize(&mut de)?;
    Ok((value, de.into_inner().pos))
}

/// `cbor4ii::serde::to_vec`; the writer is a `Vec`, so the only possible
/// error is a failed reservation, which `Vec::push` would turn into an abort
/// anyway.
pub(crate) fn to_vec<T: Serialize>(value: &T, capacity: usize) -> Vec<u8> {
    cbor4ii::serde::to_vec(Vec::with_capacity(capacity), value).expect("out of memory")
}

// ---------------------------------------------------------------- ActorId

/// `kameo::actor::ActorId`'s impls: `serialize_bytes(&to_bytes())`, and
/// `deserialize_bytes` with a visitor of `visit_bytes`/`visit_byte_buf`.
pub(crate) struct WireActorId<'a>(pub(crate) Cow<'a, ActorId>);

impl Serialize for WireActorId<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0.to_bytes())
    }
}

impl<'de> Deserialize<'de> for WireActorId<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ActorIdVisitor;

        impl Visitor<'_> for ActorIdVisitor {
            type Value = ActorId;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes representing an ActorId")
            }

            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
                ActorId::from_bytes(bytes).map_err(|e| E::custom(e.message()))
            }

            fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Self::Value, E> {
                self.visit_bytes(&bytes)
            }
        }

        deserializer.deserialize_bytes(ActorIdVisitor).map(|id| WireActorId(Cow::Owned(id)))
    }
}

fn id(id: &ActorId) -> WireActorId<'_> {
    WireActorId(Cow::Borrowed(id))
}

fn owned_id(id: WireActorId<'_>) -> ActorId {
    id.0.into_owned()
}

// ---------------------------------------------------------------- requests

/// `kameo::remote::messaging::SwarmRequest`.
#[derive(Serialize, Deserialize)]
pub(crate) enum SwarmRequest<'a> {
    Ask {
        actor_id: WireActorId<'a>,
        actor_remote_id: Cow<'a, str>,
        message_remote_id: Cow<'a, str>,
        payload: Cow<'a, [u8]>,
        mailbox_timeout: Option<Duration>,
        reply_timeout: Option<Duration>,
        immediate: bool,
    },
    Tell {
        actor_id: WireActorId<'a>,
        actor_remote_id: Cow<'a, str>,
        message_remote_id: Cow<'a, str>,
        payload: Cow<'a, [u8]>,
        mailbox_timeout: Option<Duration>,
        immediate: bool,
    },
    Link {
        actor_id: WireActorId<'a>,
        actor_remote_id: Cow<'a, str>,
        sibling_id: WireActorId<'a>,
        sibling_remote_id: Cow<'a, str>,
    },
    Unlink {
        actor_id: WireActorId<'a>,
        actor_remote_id: Cow<'a, str>,
        sibling_id: WireActorId<'a>,
    },
    SignalLinkDied {
        dead_actor_id: WireActorId<'a>,
        notified_actor_id: WireActorId<'a>,
        notified_actor_remote_id: Cow<'a, str>,
        stop_reason: ActorStopReason<'a>,
    },
}

/// `kameo::error::ActorStopReason` (feature `remote`).
#[derive(Serialize, Deserialize)]
pub(crate) enum ActorStopReason<'a> {
    Normal,
    SupervisorRestart,
    Killed,
    Panicked(PanicError<'a>),
    LinkDied { id: WireActorId<'a>, reason: Box<ActorStopReason<'a>> },
    PeerDisconnected,
}

/// `kameo::error::PanicReason`.
#[derive(Serialize, Deserialize)]
pub(crate) enum PanicReason {
    HandlerPanic,
    OnMessage,
    OnStart,
    OnPanic,
    OnLinkDied,
    OnStop,
    OnUndelivered,
    Next,
}

/// `kameo::error::PanicError`'s hand-written impls: a struct of the error's
/// text and the reason; decoding rejects unknown and duplicate fields.
pub(crate) struct PanicError<'a> {
    err: Cow<'a, str>,
    reason: PanicReason,
}

impl Serialize for PanicError<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut ser = serializer.serialize_struct("PanicError", 2)?;
        ser.serialize_field("err", &self.err)?;
        ser.serialize_field("reason", &self.reason)?;
        ser.end()
    }
}

impl<'de> Deserialize<'de> for PanicError<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        enum Field {
            Err,
            Reason,
        }

        impl<'de> Deserialize<'de> for Field {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
                struct FieldVisitor;

                impl Visitor<'_> for FieldVisitor {
                    type Value = Field;

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("`err` or `reason`")
                    }

                    fn visit_str<E: de::Error>(self, value: &str) -> Result<Field, E> {
                        match value {
                            "err" => Ok(Field::Err),
                            "reason" => Ok(Field::Reason),
                            _ => Err(de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }

                deserializer.deserialize_identifier(FieldVisitor)
            }
        }

        struct PanicErrorVisitor;

        impl<'de> Visitor<'de> for PanicErrorVisitor {
            type Value = (String, PanicReason);

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct PanicError")
            }

            fn visit_map<V: MapAccess<'de>>(self, mut map: V) -> Result<Self::Value, V::Error> {
                let mut err: Option<String> = None;
                let mut reason = None;
                while let Some(key) = map.next_key()? {
                    match key {
                        Field::Err => {
                            if err.is_some() {
                                return Err(de::Error::duplicate_field("err"));
                            }
                            err = Some(map.next_value()?);
                        }
                        Field::Reason => {
                            if reason.is_some() {
                                return Err(de::Error::duplicate_field("reason"));
                            }
                            reason = Some(map.next_value()?);
                        }
                    }
                }
                let err = err.ok_or_else(|| de::Error::missing_field("err"))?;
                let reason = reason.ok_or_else(|| de::Error::missing_field("reason"))?;
                Ok((err, reason))
            }
        }

        const FIELDS: &[&str] = &["err", "reason"];
        let (err, reason) = deserializer.deserialize_struct("PanicError", FIELDS, PanicErrorVisitor)?;
        Ok(PanicError { err: Cow::Owned(err), reason })
    }
}

// ---------------------------------------------------------------- responses

/// `kameo::remote::messaging::SwarmResponse`.
#[derive(Serialize, Deserialize)]
pub(crate) enum SwarmResponse<'a> {
    Ask(Result<Cow<'a, [u8]>, RemoteSendError<'a, Cow<'a, [u8]>>>),
    Tell(Result<(), RemoteSendError<'a>>),
    Link(Result<(), RemoteSendError<'a>>),
    Unlink(Result<(), RemoteSendError<'a>>),
    SignalLinkDied(Result<(), RemoteSendError<'a>>),
    OutboundFailure(RemoteSendError<'a>),
}

/// `kameo::error::Infallible`: kameo's own empty enum, with serde's derives.
#[derive(Serialize, Deserialize)]
pub(crate) enum Infallible {}

/// `kameo::error::RemoteSendError<E = Infallible>`.
#[derive(Serialize, Deserialize)]
pub(crate) enum RemoteSendError<'a, E = Infallible> {
    ActorNotRunning,
    ActorStopped,
    UnknownActor {
        actor_remote_id: Cow<'a, str>,
    },
    UnknownMessage {
        actor_remote_id: Cow<'a, str>,
        message_remote_id: Cow<'a, str>,
    },
    BadActorType,
    MailboxFull,
    ReplyTimeout,
    HandlerError(E),
    SerializeMessage(Cow<'a, str>),
    DeserializeMessage(Cow<'a, str>),
    SerializeReply(Cow<'a, str>),
    SerializeHandlerError(Cow<'a, str>),
    DeserializeHandlerError(Cow<'a, str>),
    SwarmNotBootstrapped,
    DialFailure,
    NetworkTimeout,
    ConnectionClosed,
    UnsupportedProtocols,
    /// kameo's `Io(Option<std::io::Error>)`, skipped by serde: it cannot be
    /// written or read, but it holds its place in the variant order.
    #[serde(skip)]
    #[allow(dead_code)]
    Io(()),
}

// ---------------------------------------------------------------- model -> wire

fn s(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

fn b(bytes: &[u8]) -> Cow<'_, [u8]> {
    Cow::Borrowed(bytes)
}

pub(crate) fn request(req: &model::SwarmRequest) -> SwarmRequest<'_> {
    match req {
        model::SwarmRequest::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => {
            SwarmRequest::Ask {
                actor_id: id(actor_id),
                actor_remote_id: s(actor_remote_id),
                message_remote_id: s(message_remote_id),
                payload: b(payload),
                mailbox_timeout: *mailbox_timeout,
                reply_timeout: *reply_timeout,
                immediate: *immediate,
            }
        }
        model::SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => {
            SwarmRequest::Tell {
                actor_id: id(actor_id),
                actor_remote_id: s(actor_remote_id),
                message_remote_id: s(message_remote_id),
                payload: b(payload),
                mailbox_timeout: *mailbox_timeout,
                immediate: *immediate,
            }
        }
        model::SwarmRequest::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => SwarmRequest::Link {
            actor_id: id(actor_id),
            actor_remote_id: s(actor_remote_id),
            sibling_id: id(sibling_id),
            sibling_remote_id: s(sibling_remote_id),
        },
        model::SwarmRequest::Unlink { actor_id, actor_remote_id, sibling_id } => {
            SwarmRequest::Unlink { actor_id: id(actor_id), actor_remote_id: s(actor_remote_id), sibling_id: id(sibling_id) }
        }
        model::SwarmRequest::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => {
            SwarmRequest::SignalLinkDied {
                dead_actor_id: id(dead_actor_id),
                notified_actor_id: id(notified_actor_id),
                notified_actor_remote_id: s(notified_actor_remote_id),
                stop_reason: stop_reason_ref(stop_reason),
            }
        }
    }
}

fn panic_reason(r: model::PanicReason) -> PanicReason {
    match r {
        model::PanicReason::HandlerPanic => PanicReason::HandlerPanic,
        model::PanicReason::OnMessage => PanicReason::OnMessage,
        model::PanicReason::OnStart => PanicReason::OnStart,
        model::PanicReason::OnPanic => PanicReason::OnPanic,
        model::PanicReason::OnLinkDied => PanicReason::OnLinkDied,
        model::PanicReason::OnStop => PanicReason::OnStop,
        model::PanicReason::OnUndelivered => PanicReason::OnUndelivered,
        model::PanicReason::Next => PanicReason::Next,
    }
}

fn stop_reason_ref(reason: &model::ActorStopReason) -> ActorStopReason<'_> {
    match reason {
        model::ActorStopReason::Normal => ActorStopReason::Normal,
        model::ActorStopReason::SupervisorRestart => ActorStopReason::SupervisorRestart,
        model::ActorStopReason::Killed => ActorStopReason::Killed,
        model::ActorStopReason::Panicked(p) => ActorStopReason::Panicked(PanicError { err: s(&p.err), reason: panic_reason(p.reason) }),
        model::ActorStopReason::LinkDied { id: dead, reason } => {
            ActorStopReason::LinkDied { id: id(dead), reason: Box::new(stop_reason_ref(reason)) }
        }
        model::ActorStopReason::PeerDisconnected => ActorStopReason::PeerDisconnected,
    }
}

/// `RemoteSendError` variant for variant from `$from` to `$to` (both enum
/// names in scope): `$text` converts each string, `$inner` the handler error;
/// extra arms cover what only the source has.
macro_rules! map_send_error {
    ($e:expr, $from:ident => $to:ident, $text:expr, $inner:expr $(, $extra:pat => $out:expr)*) => {
        match $e {
            $from::ActorNotRunning => $to::ActorNotRunning,
            $from::ActorStopped => $to::ActorStopped,
            $from::UnknownActor { actor_remote_id } => $to::UnknownActor { actor_remote_id: $text(actor_remote_id) },
            $from::UnknownMessage { actor_remote_id, message_remote_id } => $to::UnknownMessage {
                actor_remote_id: $text(actor_remote_id),
                message_remote_id: $text(message_remote_id),
            },
            $from::BadActorType => $to::BadActorType,
            $from::MailboxFull => $to::MailboxFull,
            $from::ReplyTimeout => $to::ReplyTimeout,
            $from::HandlerError(x) => $to::HandlerError($inner(x)),
            $from::SerializeMessage(m) => $to::SerializeMessage($text(m)),
            $from::DeserializeMessage(m) => $to::DeserializeMessage($text(m)),
            $from::SerializeReply(m) => $to::SerializeReply($text(m)),
            $from::SerializeHandlerError(m) => $to::SerializeHandlerError($text(m)),
            $from::DeserializeHandlerError(m) => $to::DeserializeHandlerError($text(m)),
            $from::SwarmNotBootstrapped => $to::SwarmNotBootstrapped,
            $from::DialFailure => $to::DialFailure,
            $from::NetworkTimeout => $to::NetworkTimeout,
            $from::ConnectionClosed => $to::ConnectionClosed,
            $from::UnsupportedProtocols => $to::UnsupportedProtocols,
            $($extra => $out,)*
        }
    };
}

fn send_error_ref<'a, E, W>(e: &'a model::RemoteSendError<E>, inner: impl FnOnce(&'a E) -> W) -> RemoteSendError<'a, W> {
    use model::RemoteSendError as M;
    map_send_error!(e, M => RemoteSendError, |t: &'a String| s(t), inner)
}

fn never_ref(e: &std::convert::Infallible) -> Infallible {
    match *e {}
}

fn unit_result_ref(r: &Result<(), model::RemoteSendError>) -> Result<(), RemoteSendError<'_>> {
    match r {
        Ok(()) => Ok(()),
        Err(e) => Err(send_error_ref(e, never_ref)),
    }
}

pub(crate) fn response(resp: &model::SwarmResponse) -> SwarmResponse<'_> {
    match resp {
        model::SwarmResponse::Ask(r) => SwarmResponse::Ask(match r {
            Ok(reply) => Ok(b(reply)),
            Err(e) => Err(send_error_ref(e, |x: &Vec<u8>| b(x))),
        }),
        model::SwarmResponse::Tell(r) => SwarmResponse::Tell(unit_result_ref(r)),
        model::SwarmResponse::Link(r) => SwarmResponse::Link(unit_result_ref(r)),
        model::SwarmResponse::Unlink(r) => SwarmResponse::Unlink(unit_result_ref(r)),
        model::SwarmResponse::SignalLinkDied(r) => SwarmResponse::SignalLinkDied(unit_result_ref(r)),
        model::SwarmResponse::OutboundFailure(e) => SwarmResponse::OutboundFailure(send_error_ref(e, never_ref)),
    }
}

// ---------------------------------------------------------------- wire -> model

fn owned(text: Cow<'_, str>) -> String {
    text.into_owned()
}

pub(crate) fn into_request(req: SwarmRequest<'_>) -> model::SwarmRequest {
    match req {
        SwarmRequest::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => {
            model::SwarmRequest::Ask {
                actor_id: owned_id(actor_id),
                actor_remote_id: owned(actor_remote_id),
                message_remote_id: owned(message_remote_id),
                payload: payload.into_owned(),
                mailbox_timeout,
                reply_timeout,
                immediate,
            }
        }
        SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => {
            model::SwarmRequest::Tell {
                actor_id: owned_id(actor_id),
                actor_remote_id: owned(actor_remote_id),
                message_remote_id: owned(message_remote_id),
                payload: payload.into_owned(),
                mailbox_timeout,
                immediate,
            }
        }
        SwarmRequest::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => model::SwarmRequest::Link {
            actor_id: owned_id(actor_id),
            actor_remote_id: owned(actor_remote_id),
            sibling_id: owned_id(sibling_id),
            sibling_remote_id: owned(sibling_remote_id),
        },
        SwarmRequest::Unlink { actor_id, actor_remote_id, sibling_id } => model::SwarmRequest::Unlink {
            actor_id: owned_id(actor_id),
            actor_remote_id: owned(actor_remote_id),
            sibling_id: owned_id(sibling_id),
        },
        SwarmRequest::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => {
            model::SwarmRequest::SignalLinkDied {
                dead_actor_id: owned_id(dead_actor_id),
                notified_actor_id: owned_id(notified_actor_id),
                notified_actor_remote_id: owned(notified_actor_remote_id),
                stop_reason: into_stop_reason(stop_reason),
            }
        }
    }
}

fn into_panic_reason(r: PanicReason) -> model::PanicReason {
    match r {
        PanicReason::HandlerPanic => model::PanicReason::HandlerPanic,
        PanicReason::OnMessage => model::PanicReason::OnMessage,
        PanicReason::OnStart => model::PanicReason::OnStart,
        PanicReason::OnPanic => model::PanicReason::OnPanic,
        PanicReason::OnLinkDied => model::PanicReason::OnLinkDied,
        PanicReason::OnStop => model::PanicReason::OnStop,
        PanicReason::OnUndelivered => model::PanicReason::OnUndelivered,
        PanicReason::Next => model::PanicReason::Next,
    }
}

// A decoded chain is at most 256 deep (the reader's depth budget), so this
// recursion is bounded.
fn into_stop_reason(reason: ActorStopReason<'_>) -> model::ActorStopReason {
    match reason {
        ActorStopReason::Normal => model::ActorStopReason::Normal,
        ActorStopReason::SupervisorRestart => model::ActorStopReason::SupervisorRestart,
        ActorStopReason::Killed => model::ActorStopReason::Killed,
        ActorStopReason::Panicked(p) => {
            model::ActorStopReason::Panicked(model::PanicError { err: owned(p.err), reason: into_panic_reason(p.reason) })
        }
        ActorStopReason::LinkDied { id, reason } => {
            model::ActorStopReason::LinkDied { id: owned_id(id), reason: Box::new(into_stop_reason(*reason)) }
        }
        ActorStopReason::PeerDisconnected => model::ActorStopReason::PeerDisconnected,
    }
}

fn into_send_error<W, E>(e: RemoteSendError<'_, W>, inner: impl FnOnce(W) -> E) -> model::RemoteSendError<E> {
    use model::RemoteSendError as M;
    map_send_error!(e, RemoteSendError => M, owned, inner,
        // serde(skip): never decoded.
        RemoteSendError::Io(()) => unreachable!("RemoteSendError::Io has no wire form"))
}

fn into_never(e: Infallible) -> std::convert::Infallible {
    match e {}
}

fn into_unit_result(r: Result<(), RemoteSendError<'_>>) -> Result<(), model::RemoteSendError> {
    r.map_err(|e| into_send_error(e, into_never))
}

pub(crate) fn into_response(resp: SwarmResponse<'_>) -> model::SwarmResponse {
    match resp {
        SwarmResponse::Ask(r) => model::SwarmResponse::Ask(match r {
            Ok(reply) => Ok(reply.into_owned()),
            Err(e) => Err(into_send_error(e, Cow::into_owned)),
        }),
        SwarmResponse::Tell(r) => model::SwarmResponse::Tell(into_unit_result(r)),
        SwarmResponse::Link(r) => model::SwarmResponse::Link(into_unit_result(r)),
        SwarmResponse::Unlink(r) => model::SwarmResponse::Unlink(into_unit_result(r)),
        SwarmResponse::SignalLinkDied(r) => model::SwarmResponse::SignalLinkDied(into_unit_result(r)),
        SwarmResponse::OutboundFailure(e) => model::SwarmResponse::OutboundFailure(into_send_error(e, into_never)),
    }
}
